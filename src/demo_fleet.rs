//! Interim demo fleet (replaced by the engine branch's embedded testdata/fleets/demo).

use crate::engine::SourceFile;

const CLUSTERS: [(&str, &str, &str); 14] = [
    ("prod-eu-west-1", "aws", "eu-west"),
    ("prod-eu-west-2", "gcp", "eu-west"),
    ("prod-us-east-1", "aws", "us-east"),
    ("prod-us-east-2", "aws", "us-east"),
    ("prod-ap-south-1", "gcp", "ap-south"),
    ("staging-eu-west-1", "aws", "eu-west"),
    ("staging-us-east-1", "gcp", "us-east"),
    ("dev-eu-west-1", "onprem", "eu-west"),
    ("gpu-us-east-1", "aws", "us-east"),
    ("edge-store-0001", "onprem", "eu-west"),
    ("edge-store-0002", "onprem", "us-east"),
    ("edge-store-0003", "onprem", "ap-south"),
    ("batch-ap-south-1", "gcp", "ap-south"),
    ("lab-eu-west-1", "onprem", "eu-west"),
];

pub fn demo_files() -> Vec<SourceFile> {
    let mut text = String::new();
    for (name, provider, region) in CLUSTERS {
        text.push_str(&format!(
            "---\napiVersion: cluster.karmada.io/v1alpha1\nkind: Cluster\nmetadata:\n  name: {name}\n  labels:\n    region: {region}\nspec:\n  provider: {provider}\n  region: {region}\n"
        ));
    }
    for (kind, api, ns, name) in [
        ("Deployment", "apps/v1", "shop", "checkout"),
        ("Deployment", "apps/v1", "shop", "inventory"),
        ("ConfigMap", "v1", "shop", "registry-config"),
        ("Service", "v1", "shop", "checkout"),
    ] {
        text.push_str(&format!(
            "---\napiVersion: {api}\nkind: {kind}\nmetadata:\n  name: {name}\n  namespace: {ns}\nspec:\n  replicas: 3\n"
        ));
    }
    vec![SourceFile {
        path: "demo.yaml".into(),
        text,
    }]
}

pub fn synthetic_fleet(clusters: usize, resources: usize) -> Vec<SourceFile> {
    let regions = ["eu-west", "us-east", "ap-south"];
    let providers = ["aws", "gcp", "onprem"];
    let mut docs = Vec::new();
    for index in 0..clusters {
        let region = regions[index % 3];
        let provider = providers[(index / 3) % 3];
        docs.push(format!(
            "apiVersion: cluster.karmada.io/v1alpha1\nkind: Cluster\nmetadata:\n  name: store-{index:04}\n  labels:\n    region: {region}\nspec:\n  provider: {provider}\n  region: {region}\n"
        ));
    }
    for index in 0..resources {
        docs.push(format!(
            "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: config-{index:04}\n  namespace: shop\ndata:\n  key: value-{index}\n"
        ));
    }
    docs.chunks(500)
        .enumerate()
        .map(|(index, chunk)| SourceFile {
            path: format!("synthetic-{index}.yaml"),
            text: chunk.iter().map(|doc| format!("---\n{doc}")).collect(),
        })
        .collect()
}
