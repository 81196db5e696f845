//! The Open Cluster Management API groups and types the hub reader and writer name.
//! Definitions only; it must not talk to the hub.

use kube::discovery::ApiResource;

pub const CLUSTER_GROUP: &str = "cluster.open-cluster-management.io";
pub const WORK_GROUP: &str = "work.open-cluster-management.io";

/// The API resource of `kind` in `group`/`version`.
pub fn resource(group: &str, version: &str, kind: &str, plural: &str) -> ApiResource {
    ApiResource {
        group: group.into(),
        version: version.into(),
        api_version: format!("{group}/{version}"),
        kind: kind.into(),
        plural: plural.into(),
    }
}
