//! The embedded demo fleet (the YAML under `testdata/fleets/demo/`, compiled into the binary)
//! and a generator of large synthetic fleets for `--demo-scale` and the benchmark.

use std::fmt::Write as _;

use crate::engine::SourceFile;

macro_rules! demo_file {
    ($name:literal) => {
        SourceFile {
            path: concat!("demo/", $name).to_string(),
            text: include_str!(concat!("../../testdata/fleets/demo/", $name)).to_string(),
        }
    };
}

/// The demo fleet's files: 14 clusters, both dialects, a tainted GPU cluster.
pub fn demo_files() -> Vec<SourceFile> {
    vec![
        demo_file!("clusters.yaml"),
        demo_file!("kubefed-clusters.yaml"),
        demo_file!("karmada-shop.yaml"),
        demo_file!("karmada-platform.yaml"),
        demo_file!("kubefed-payments.yaml"),
    ]
}

const REGIONS: [&str; 5] = ["eu-west", "eu-central", "us-east", "us-west", "ap-south"];
const PROVIDERS: [&str; 3] = ["aws", "gcp", "onprem"];
/// Namespaces of the synthetic apps.
const APPS: usize = 10;

/// A retailer's store fleet: `clusters` store clusters over five regions and three
/// providers (every 50th store is tainted for maintenance, every 20th is a canary), and
/// `resources` resource templates in ten app namespaces: Deployments (every fourth divided by
/// regional weights), ConfigMaps, Services and a DaemonSet per app. Placement uses label and
/// field selectors; overrides rewrite image registries per region, pin canary tags and shrink
/// replicas in small stores.
pub fn synthetic_fleet(clusters: usize, resources: usize) -> Vec<SourceFile> {
    let mut inventory = String::new();
    for i in 0..clusters {
        let region = REGIONS[i % REGIONS.len()];
        let provider = PROVIDERS[(i / REGIONS.len()) % PROVIDERS.len()];
        let size = if i.is_multiple_of(3) {
            "small"
        } else {
            "large"
        };
        let canary = i.is_multiple_of(20);
        let _ = write!(
            inventory,
            "---\napiVersion: cluster.karmada.io/v1alpha1\nkind: Cluster\nmetadata:\n  name: store-{i:05}\n  labels:\n    env: edge\n    tier: store\n    region: {region}\n    provider: {provider}\n    size: {size}\n    canary: \"{canary}\"\nspec:\n  syncMode: Pull\n  provider: {provider}\n  region: {region}\n  zones: [{region}-a]\n"
        );
        if i.is_multiple_of(50) {
            inventory.push_str(
                "  taints:\n  - {key: maintenance, value: \"true\", effect: NoSchedule}\n",
            );
        }
    }

    let mut policies = String::new();
    for app in 0..APPS {
        let ns = format!("app-{app}");
        // Every app reaches the stores of most regions; app 0 also the maintenance stores.
        let excluded = REGIONS[app % REGIONS.len()];
        let tolerate = if app == 0 {
            "    clusterTolerations:\n    - {key: maintenance, operator: Exists}\n"
        } else {
            ""
        };
        let _ = write!(
            policies,
            "---\napiVersion: policy.karmada.io/v1alpha1\nkind: PropagationPolicy\nmetadata:\n  name: stores\n  namespace: {ns}\nspec:\n  resourceSelectors:\n  - {{apiVersion: apps/v1, kind: Deployment}}\n  - {{apiVersion: apps/v1, kind: DaemonSet}}\n  - {{apiVersion: v1, kind: ConfigMap}}\n  - {{apiVersion: v1, kind: Service}}\n  placement:\n    clusterAffinity:\n      labelSelector:\n        matchLabels: {{tier: store}}\n      fieldSelector:\n        matchExpressions:\n        - {{key: region, operator: NotIn, values: [{excluded}]}}\n{tolerate}"
        );
        let _ = write!(
            policies,
            "---\napiVersion: policy.karmada.io/v1alpha1\nkind: PropagationPolicy\nmetadata:\n  name: divided\n  namespace: {ns}\nspec:\n  resourceSelectors:\n  - {{apiVersion: apps/v1, kind: Deployment, labelSelector: {{matchLabels: {{split: \"true\"}}}}}}\n  placement:\n    clusterAffinity:\n      labelSelector:\n        matchExpressions:\n        - {{key: size, operator: In, values: [large]}}\n    replicaScheduling:\n      replicaSchedulingType: Divided\n      replicaDivisionPreference: Weighted\n      weightPreference:\n        staticWeightList:\n        - targetCluster: {{fieldSelector: {{matchExpressions: [{{key: region, operator: In, values: [eu-west, us-east]}}]}}}}\n          weight: 3\n        - targetCluster: {{labelSelector: {{matchLabels: {{tier: store}}}}}}\n          weight: 1\n"
        );
        let _ = write!(
            policies,
            "---\napiVersion: policy.karmada.io/v1alpha1\nkind: OverridePolicy\nmetadata:\n  name: small-stores\n  namespace: {ns}\nspec:\n  resourceSelectors:\n  - {{apiVersion: apps/v1, kind: Deployment}}\n  overrideRules:\n  - targetCluster:\n      labelSelector:\n        matchLabels: {{size: small}}\n    overriders:\n      plaintext:\n      - {{path: /spec/replicas, operator: replace, value: 1}}\n      labelsOverrider:\n      - {{operator: add, value: {{footprint: small}}}}\n"
        );
    }
    policies.push_str("---\napiVersion: policy.karmada.io/v1alpha1\nkind: ClusterOverridePolicy\nmetadata:\n  name: regional-registry\nspec:\n  resourceSelectors:\n  - {apiVersion: apps/v1, kind: Deployment}\n  - {apiVersion: apps/v1, kind: DaemonSet}\n  overrideRules:\n");
    for region in REGIONS {
        let _ = write!(
            policies,
            "  - targetCluster:\n      fieldSelector:\n        matchExpressions:\n        - {{key: region, operator: In, values: [{region}]}}\n    overriders:\n      imageOverrider:\n      - {{component: Registry, operator: replace, value: {region}.registry.example.com}}\n"
        );
    }
    policies.push_str("  - targetCluster:\n      labelSelector:\n        matchLabels: {canary: \"true\"}\n    overriders:\n      imageOverrider:\n      - {component: Tag, operator: add, value: -canary}\n      annotationsOverrider:\n      - {operator: add, value: {example.com/canary: \"true\"}}\n");

    let mut templates = String::new();
    for r in 0..resources {
        let app = r % APPS;
        let ns = format!("app-{app}");
        let n = r / APPS;
        match r % 10 {
            0..=5 => {
                let split = if n.is_multiple_of(4) {
                    "\n    split: \"true\""
                } else {
                    ""
                };
                let _ = write!(
                    templates,
                    "---\napiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: svc-{n:04}\n  namespace: {ns}\n  labels:\n    app: svc-{n:04}\n    team: team-{app}{split}\nspec:\n  replicas: 6\n  selector:\n    matchLabels: {{app: svc-{n:04}}}\n  template:\n    metadata:\n      labels: {{app: svc-{n:04}}}\n    spec:\n      containers:\n      - name: main\n        image: registry.example.com/{ns}/svc-{n:04}:1.{r}.0\n        args: [\"--port=8080\", \"--log=json\"]\n        ports:\n        - containerPort: 8080\n        resources:\n          requests: {{cpu: 100m, memory: 128Mi}}\n          limits: {{memory: 256Mi}}\n        readinessProbe:\n          httpGet: {{path: /healthz, port: 8080}}\n"
                );
            }
            6 | 7 => {
                let _ = write!(
                    templates,
                    "---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cfg-{n:04}\n  namespace: {ns}\n  labels: {{app: cfg-{n:04}}}\ndata:\n  LOG_LEVEL: info\n  FEATURE_FLAGS: \"checkout-v2,loyalty\"\n  settings.yaml: |\n    store:\n      currency: EUR\n      timeoutSeconds: 30\n"
                );
            }
            8 => {
                let _ = write!(
                    templates,
                    "---\napiVersion: v1\nkind: Service\nmetadata:\n  name: svc-{n:04}\n  namespace: {ns}\nspec:\n  selector: {{app: svc-{n:04}}}\n  ports:\n  - {{port: 80, targetPort: 8080, protocol: TCP}}\n"
                );
            }
            _ => {
                let _ = write!(
                    templates,
                    "---\napiVersion: apps/v1\nkind: DaemonSet\nmetadata:\n  name: agent-{n:04}\n  namespace: {ns}\nspec:\n  selector:\n    matchLabels: {{app: agent-{n:04}}}\n  template:\n    metadata:\n      labels: {{app: agent-{n:04}}}\n    spec:\n      containers:\n      - name: agent\n        image: registry.example.com/agents/agent-{n:04}:2.0.{r}\n"
                );
            }
        }
    }
    vec![
        SourceFile {
            path: "synthetic/clusters.yaml".into(),
            text: inventory,
        },
        SourceFile {
            path: "synthetic/policies.yaml".into(),
            text: policies,
        },
        SourceFile {
            path: "synthetic/templates.yaml".into(),
            text: templates,
        },
    ]
}
