//! The federation API groups flotilla knows (Karmada, KubeFed, Open Cluster Management), with
//! the versions and kinds each serves upstream, so a misspelt kind or version in one of them
//! is an error with a suggestion instead of a document silently left out. It must not decide
//! what a known document means; the dialects do.

use crate::engine::document::parse::Doc;
use crate::engine::document::source::FleetError;

/// (group, versions, kinds) as upstream serves them.
const GROUPS: &[(&str, &[&str], &[&str])] = &[
    ("cluster.karmada.io", &["v1alpha1"], &["Cluster"]),
    (
        "policy.karmada.io",
        &["v1alpha1"],
        &[
            "PropagationPolicy",
            "ClusterPropagationPolicy",
            "OverridePolicy",
            "ClusterOverridePolicy",
            "FederatedResourceQuota",
            "ClusterTaintPolicy",
        ],
    ),
    (
        "work.karmada.io",
        &["v1alpha1", "v1alpha2"],
        &["Work", "ResourceBinding", "ClusterResourceBinding"],
    ),
    (
        "config.karmada.io",
        &["v1alpha1"],
        &[
            "ResourceInterpreterCustomization",
            "ResourceInterpreterWebhookConfiguration",
        ],
    ),
    ("apps.karmada.io", &["v1alpha1"], &["WorkloadRebalancer"]),
    ("search.karmada.io", &["v1alpha1"], &["ResourceRegistry"]),
    (
        "autoscaling.karmada.io",
        &["v1alpha1"],
        &["FederatedHPA", "CronFederatedHPA"],
    ),
    (
        "networking.karmada.io",
        &["v1alpha1"],
        &["MultiClusterIngress", "MultiClusterService"],
    ),
    ("remedy.karmada.io", &["v1alpha1"], &["Remedy"]),
    (
        "core.kubefed.io",
        &["v1beta1"],
        &["KubeFedCluster", "KubeFedConfig", "FederatedTypeConfig"],
    ),
    ("multicluster.x-k8s.io", &["v1alpha1"], &["ClusterProfile"]),
    (
        "scheduling.kubefed.io",
        &["v1alpha1"],
        &["ReplicaSchedulingPreference"],
    ),
    (
        "cluster.open-cluster-management.io",
        &["v1", "v1beta1", "v1beta2", "v1alpha1"],
        &[
            "ManagedCluster",
            "ManagedClusterSet",
            "ManagedClusterSetBinding",
            "Placement",
            "PlacementDecision",
            "AddOnPlacementScore",
            "ClusterClaim",
        ],
    ),
    (
        "work.open-cluster-management.io",
        &["v1", "v1alpha1"],
        &[
            "ManifestWork",
            "ManifestWorkReplicaSet",
            "AppliedManifestWork",
        ],
    ),
];

/// KubeFed's Federated types are open-ended (FederatedTypeConfig adds kinds); only the
/// version is fixed.
const KUBEFED_TYPES: (&str, &str) = ("types.kubefed.io", "v1beta1");

/// An error when `doc` is in a known federation group with a version or kind that group does
/// not serve.
pub fn check(doc: &Doc) -> Result<(), FleetError> {
    let group = doc.group();
    let version = doc.api_version().rsplit('/').next().unwrap_or("");
    if group == KUBEFED_TYPES.0 {
        return check_version(doc, group, version, &[KUBEFED_TYPES.1]);
    }
    let Some((_, versions, kinds)) = GROUPS.iter().find(|(g, _, _)| *g == group) else {
        return Ok(());
    };
    check_version(doc, group, version, versions)?;
    if kinds.contains(&doc.kind()) {
        return Ok(());
    }
    Err(doc.error(
        "/kind",
        format!("{group} has no kind {}", doc.kind()),
        match closest(doc.kind(), kinds) {
            Some(kind) => format!("did you mean {kind}?"),
            None => format!("{group} serves {}", kinds.join(", ")),
        },
    ))
}

fn check_version(
    doc: &Doc,
    group: &str,
    version: &str,
    versions: &[&str],
) -> Result<(), FleetError> {
    if versions.contains(&version) {
        return Ok(());
    }
    Err(doc.error(
        "/apiVersion",
        format!("{group} has no version {version}"),
        match closest(version, versions) {
            Some(v) if versions.len() > 1 => format!("did you mean {group}/{v}?"),
            _ => format!("use apiVersion: {group}/{}", versions.join(" or ")),
        },
    ))
}

/// The known name nearest to `word`, when it is near enough to be a typo.
pub fn closest<'a>(word: &str, known: &[&'a str]) -> Option<&'a str> {
    known
        .iter()
        .map(|k| {
            (
                strsim::damerau_levenshtein(&word.to_lowercase(), &k.to_lowercase()),
                *k,
            )
        })
        .filter(|(distance, k)| *distance <= 2.max(k.len() / 4))
        .min_by_key(|(distance, _)| *distance)
        .map(|(_, k)| k)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::engine::document::parse::parse_files;
    use crate::engine::document::source::SourceFile;

    fn error_of(head: &str) -> Option<String> {
        let (docs, _) = parse_files(&[SourceFile {
            path: "f.yaml".into(),
            text: format!("{head}\nmetadata: {{name: x}}\n"),
        }]);
        check(&docs[0]).err().map(|e| e.to_string())
    }

    #[test]
    fn a_misspelt_kind_suggests_the_right_one() {
        let err =
            error_of("apiVersion: policy.karmada.io/v1alpha1\nkind: PropagationPolicyy").unwrap();
        assert_eq!(
            err,
            "f.yaml:2: kind: policy.karmada.io has no kind PropagationPolicyy; did you mean PropagationPolicy?"
        );
        let err = error_of("apiVersion: cluster.karmada.io/v1alpha1\nkind: Clusterr").unwrap();
        assert!(err.ends_with("did you mean Cluster?"), "{err}");
    }

    #[test]
    fn an_unknown_version_says_which_one_to_use() {
        let err = error_of("apiVersion: policy.karmada.io/v9\nkind: PropagationPolicy").unwrap();
        assert_eq!(
            err,
            "f.yaml:1: apiVersion: policy.karmada.io has no version v9; use apiVersion: policy.karmada.io/v1alpha1"
        );
        let err = error_of("apiVersion: types.kubefed.io/v1\nkind: FederatedDeployment").unwrap();
        assert!(
            err.contains("use apiVersion: types.kubefed.io/v1beta1"),
            "{err}"
        );
    }

    #[test]
    fn known_kinds_and_other_groups_pass() {
        assert_eq!(
            error_of("apiVersion: work.karmada.io/v1alpha2\nkind: ResourceBinding"),
            None
        );
        assert_eq!(error_of("apiVersion: apps/v1\nkind: Deploymentt"), None);
        assert_eq!(
            error_of("apiVersion: types.kubefed.io/v1beta1\nkind: FederatedWidget"),
            None
        );
    }

    #[test]
    fn a_far_off_kind_lists_what_the_group_serves() {
        let err = error_of("apiVersion: apps.karmada.io/v1alpha1\nkind: Something").unwrap();
        assert!(
            err.ends_with("apps.karmada.io serves WorkloadRebalancer"),
            "{err}"
        );
    }
}
