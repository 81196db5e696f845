//! The ClusterProfiles of one hub context as the live backend and the commands use them: their
//! inventory documents, what each profile's cluster manager reports, laid over a probe's
//! status, and the contexts that reach members through their access providers. Reading the
//! profiles from the hub is `backend::cluster_profiles`'s; this file holds what it found. It
//! must not write a kubeconfig file (the contexts are held in memory only), nor show or log a
//! credential.

use std::collections::BTreeMap;

use kube::config::{
    AuthInfo, Cluster, Context, ExecConfig, Kubeconfig, NamedAuthInfo, NamedCluster, NamedContext,
};

use super::kubeconfig::ClientError;
use crate::engine::SourceFile;
use crate::model::{ClusterStatus, Health};
use crate::safe_text;

/// Upstream's name of the condition a cluster manager sets on a healthy control plane.
pub const CONTROL_PLANE_HEALTHY: &str = "ControlPlaneHealthy";

/// What one profile's cluster manager reports, and whether flotilla can reach the member.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Report {
    /// `namespace/name` of the ClusterProfile.
    pub profile: String,
    /// The `ControlPlaneHealthy` condition: status, reason and message.
    pub healthy: Option<(String, String, String)>,
    pub version: Option<String>,
    /// `Err` says why no credentials reach the member.
    pub access: Result<(), ClientError>,
}

/// The profiles of one hub context as inventory documents, reports and ways in.
#[derive(Debug, Clone, Default)]
pub struct ProfileInventory {
    /// The hub context they were read from.
    pub hub: String,
    /// One inventory document per profile, for the engine.
    pub files: Vec<SourceFile>,
    /// By cluster (profile) name.
    pub reports: BTreeMap<String, Report>,
    clusters: Vec<NamedCluster>,
    users: Vec<NamedAuthInfo>,
    contexts: Vec<NamedContext>,
}

impl ProfileInventory {
    /// Adds a member reached through an access provider: the context `context`, its cluster
    /// and a user of the same name that runs `exec` for credentials.
    pub fn add_context(&mut self, context: &str, cluster: Cluster, exec: ExecConfig) {
        self.clusters.push(NamedCluster {
            name: context.to_string(),
            cluster: Some(cluster),
            ..NamedCluster::default()
        });
        self.users.push(NamedAuthInfo {
            name: context.to_string(),
            auth_info: Some(AuthInfo {
                exec: Some(exec),
                ..AuthInfo::default()
            }),
            ..NamedAuthInfo::default()
        });
        self.contexts.push(NamedContext {
            name: context.to_string(),
            context: Some(Context {
                cluster: context.to_string(),
                user: Some(context.to_string()),
                ..Context::default()
            }),
            ..NamedContext::default()
        });
    }

    /// Adds the contexts that reach members through their access providers. Held in memory
    /// only: nothing is written back to a kubeconfig file.
    pub fn extend_kubeconfig(&self, kubeconfig: &mut Kubeconfig) {
        kubeconfig.clusters.extend(self.clusters.iter().cloned());
        kubeconfig.auth_infos.extend(self.users.iter().cloned());
        kubeconfig.contexts.extend(self.contexts.iter().cloned());
    }

    /// A member's status with what its profile reports laid over the probe's: a member
    /// flotilla has no way into is Unreachable with the reason; a control plane its manager
    /// reports unhealthy is NotReady even where it answers; the manager's version stands in
    /// where the probe learnt none.
    pub fn status(&self, cluster: &str, probed: ClusterStatus) -> ClusterStatus {
        let Some(report) = self.reports.get(cluster) else {
            return probed;
        };
        if let Err(reason) = &report.access {
            return ClusterStatus {
                health: match reason {
                    ClientError::NoAccess(_) => Health::NoAccess,
                    ClientError::Failed(_) => Health::Unreachable,
                },
                version: report.version.clone(),
                latency_ms: None,
                message: reason.to_string(),
            };
        }
        let mut status = probed;
        if status.version.is_none() {
            status.version = report.version.clone();
        }
        if let Some((state, reason, message)) = &report.healthy
            && state == "False"
        {
            if matches!(status.health, Health::Ready | Health::NotReady) {
                status.health = Health::NotReady;
            }
            let mut said = format!(
                "ClusterProfile {} reports {CONTROL_PLANE_HEALTHY}=False",
                report.profile
            );
            if !reason.is_empty() {
                said.push_str(&format!(" ({reason})"));
            }
            if !message.is_empty() {
                said.push_str(&format!(": {message}"));
            }
            if !status.message.is_empty() {
                said.push_str(&format!("; {}", status.message));
            }
            status.message = safe_text::redact(&said);
        }
        status
    }
}
