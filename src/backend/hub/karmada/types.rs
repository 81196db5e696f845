//! The Karmada API types the hub readers and writers name: the member Cluster, the
//! (Cluster)ResourceBindings and Works the scheduler and controllers write, and the
//! propagation and override policies. Definitions only; it must not talk to the hub.

use kube::discovery::ApiResource;

/// Karmada's member Cluster.
pub fn cluster_resource() -> ApiResource {
    ApiResource {
        group: "cluster.karmada.io".into(),
        version: "v1alpha1".into(),
        api_version: "cluster.karmada.io/v1alpha1".into(),
        kind: "Cluster".into(),
        plural: "clusters".into(),
    }
}

/// ResourceBinding, ClusterResourceBinding and Work.
pub fn binding_resources() -> [ApiResource; 3] {
    let resource = |version: &str, kind: &str, plural: &str| ApiResource {
        group: "work.karmada.io".into(),
        version: version.into(),
        api_version: format!("work.karmada.io/{version}"),
        kind: kind.into(),
        plural: plural.into(),
    };
    [
        resource("v1alpha2", "ResourceBinding", "resourcebindings"),
        resource(
            "v1alpha2",
            "ClusterResourceBinding",
            "clusterresourcebindings",
        ),
        resource("v1alpha1", "Work", "works"),
    ]
}

/// Karmada's `ResourceInterpreterCustomization` (cluster-scoped), the interpreters the hub runs.
pub fn interpreter_resource() -> ApiResource {
    ApiResource {
        group: "config.karmada.io".into(),
        version: "v1alpha1".into(),
        api_version: "config.karmada.io/v1alpha1".into(),
        kind: "ResourceInterpreterCustomization".into(),
        plural: "resourceinterpretercustomizations".into(),
    }
}

/// PropagationPolicy, ClusterPropagationPolicy, OverridePolicy and ClusterOverridePolicy.
pub fn policy_resources() -> Vec<ApiResource> {
    [
        ("PropagationPolicy", "propagationpolicies"),
        ("ClusterPropagationPolicy", "clusterpropagationpolicies"),
        ("OverridePolicy", "overridepolicies"),
        ("ClusterOverridePolicy", "clusteroverridepolicies"),
    ]
    .into_iter()
    .map(|(kind, plural)| ApiResource {
        group: "policy.karmada.io".into(),
        version: "v1alpha1".into(),
        api_version: "policy.karmada.io/v1alpha1".into(),
        kind: kind.into(),
        plural: plural.into(),
    })
    .collect()
}
