//! Connecting to a hub: the kubeconfig context it is named by, a client, and which kind of
//! control plane it is; then reading it through that kind's reader (members, the console's
//! view, the rendered objects — on KubeFed, which keeps none, the engine's render of its
//! Federated objects) and reaching its members. Errors are typed: whether the operator
//! named something unusable or the hub did not answer; the command line turns them into exit
//! codes. It only reads; writes go through the writers.

use std::path::Path;

use kube::Client;
use kube::config::Kubeconfig;

use super::error::HubError;
use super::kind::detect;
use super::view::{HubRender, HubView, TemplateLabels};
use super::{karmada, kubefed, ocm};
use crate::backend::fanout::cluster_api::ApiError;
use crate::backend::fanout::targets::Target;
use crate::backend::kube::api::KubeCluster;
use crate::backend::kube::kubeconfig;
use crate::backend::kube::kubeconfig::Timeouts;
use crate::engine::interpreter::Interpreters;
use crate::engine::{Fleet, SourceFile};
use crate::model::HubKind;
use crate::model::{ClusterSpec, ClusterStatus};

/// A connected hub: the context it was named by, what kind of control plane it is, and a
/// client for it.
#[derive(Clone)]
pub struct Hub {
    pub context: String,
    pub kind: HubKind,
    pub client: Client,
    pub kubeconfig: Kubeconfig,
    /// The client's timeouts: its watches must end before its read timeout does.
    pub timeouts: Timeouts,
}

/// Connects to the hub behind kubeconfig context `context` and tells which kind it is.
pub async fn connect(
    kubeconfig_path: Option<&Path>,
    context: &str,
    timeouts: Timeouts,
) -> Result<Hub, HubError> {
    let kubeconfig =
        kubeconfig::load(kubeconfig_path).map_err(|err| HubError::Input(err.to_string()))?;
    let client = kubeconfig::client_for(&kubeconfig, context, timeouts)
        .await
        .map_err(|reason| HubError::Input(format!("--hub {context}: {reason}")))?;
    let kind = match detect(&client).await {
        Ok(Some(kind)) => kind,
        Ok(None) => {
            return Err(HubError::Input(format!(
                "--hub {context} is not a federation hub: it serves none of the Karmada, Open Cluster Management or KubeFed APIs\n  hint: name the hub's context, or use --context GLOB for member clusters"
            )));
        }
        Err(reason) => {
            return Err(HubError::Unreachable(format!(
                "--hub {context}: cannot reach the hub: {reason}"
            )));
        }
    };
    Ok(Hub {
        context: context.to_string(),
        kind,
        client,
        kubeconfig,
        timeouts,
    })
}

impl Hub {
    /// The header's words for this hub: `hub CONTEXT · KIND`.
    pub fn label(&self) -> String {
        format!("hub {} · {}", self.context, self.kind.as_str())
    }

    /// The hub's member clusters in name order, with the health the hub reports for them.
    pub async fn clusters(&self) -> Result<Vec<(ClusterSpec, ClusterStatus)>, HubError> {
        let clusters = match self.kind {
            HubKind::Karmada => karmada::read::clusters(&self.client, &self.kubeconfig).await,
            HubKind::OpenClusterManagement => {
                ocm::read::clusters(&self.client, &self.kubeconfig).await
            }
            HubKind::KubeFed => kubefed::clusters(&self.client, &self.kubeconfig).await,
        };
        clusters.map_err(|reason| self.failed(reason))
    }

    /// Everything the console shows of the hub at this moment.
    pub async fn read(&self) -> Result<HubView, HubError> {
        let view = match self.kind {
            HubKind::Karmada => karmada::read::read(&self.client, &self.kubeconfig).await,
            HubKind::OpenClusterManagement => ocm::read::read(&self.client, &self.kubeconfig).await,
            HubKind::KubeFed => kubefed::read(&self.client, &self.kubeconfig).await,
        };
        view.map_err(|reason| self.failed(reason))
    }

    /// The per-cluster objects the hub has rendered for its members (after overrides), and
    /// why the rest are not placed. KubeFed keeps no per-cluster objects: there they are the
    /// engine's render of the hub's Federated objects, as the console shows its cells, and the
    /// render's note says so.
    pub async fn rendered(&self) -> Result<HubRender, HubError> {
        let rendered = match self.kind {
            HubKind::Karmada => karmada::read::rendered(&self.client, &self.kubeconfig).await,
            HubKind::OpenClusterManagement => {
                ocm::read::rendered(&self.client, &self.kubeconfig).await
            }
            HubKind::KubeFed => {
                // What does not load is left out and reported, the rest rendered: a Federated
                // object whose override cannot apply is a state KubeFed reports too.
                let files = self.fleet_files().await?;
                let (fleet, errors) = crate::engine::load_fleet(&files);
                let mut rendered = kubefed::rendered(&fleet);
                rendered.errors = errors.iter().map(ToString::to_string).collect();
                return Ok(rendered);
            }
        };
        rendered.map_err(|reason| self.failed(reason))
    }

    /// The labels `-l` matches for each object the hub delivers: its template's — Karmada's
    /// resource templates, KubeFed's Federated templates, as the engine loads the hub's fleet
    /// (an object whose template does not load has none) — and on OCM, whose ManifestWorks
    /// carry the objects themselves, the manifest's own (the first cluster's, where
    /// ManifestWorks differ).
    pub async fn template_labels(&self) -> Result<TemplateLabels, HubError> {
        let mut labels = TemplateLabels::default();
        match self.kind {
            HubKind::OpenClusterManagement => {
                for row in self.read().await?.rows {
                    let own = row.objects.values().find_map(|object| {
                        object
                            .pointer("/metadata/labels")
                            .and_then(serde_json::Value::as_object)
                    });
                    if let Some(own) = own {
                        labels.insert(&row.target, own.clone());
                    }
                }
            }
            HubKind::Karmada | HubKind::KubeFed => {
                let (fleet, _) = crate::engine::load_fleet(&self.fleet_files().await?);
                for (r, resource) in fleet.resources.iter().enumerate() {
                    if let Some(own) = fleet.template_labels(r) {
                        labels.insert(&resource.target, own.clone());
                    }
                }
            }
        }
        Ok(labels)
    }

    /// The fleet a Karmada or KubeFed hub holds (Karmada: its Clusters, the templates its
    /// bindings name and every policy; KubeFed: its KubeFedClusters, type configs and Federated
    /// objects), loaded by the engine like a fleet directory, with the texts it was loaded from,
    /// one per hub object; why not: the hub did not answer, or (an input error) the engine
    /// cannot load what it holds or the hub is of another kind.
    pub async fn fleet(&self) -> Result<(Fleet, Vec<SourceFile>), HubError> {
        let files = self.fleet_files().await?;
        let (fleet, errors) = crate::engine::load_fleet(&files);
        match errors.first() {
            Some(error) => Err(HubError::Input(format!(
                "--hub {}: the hub's policies do not load in flotilla's engine, so they cannot be edited here: {error}",
                self.context
            ))),
            None => Ok((fleet, files)),
        }
    }

    /// The interpreters a Karmada hub runs (its `ResourceInterpreterCustomization`s, each
    /// script's origin naming the hub object); none on another kind of hub. A customization
    /// the engine cannot read is left out, as the hub's webhook already admitted it.
    pub async fn interpreters(&self) -> Result<Interpreters, HubError> {
        if self.kind != HubKind::Karmada {
            return Ok(Interpreters::default());
        }
        let files = karmada::fleet_files::interpreter_files(&self.client, &self.context)
            .await
            .map_err(|reason| self.failed(reason))?;
        Ok(interpreters_of(&files))
    }

    /// The interpreters of a Karmada hub whose `ResourceInterpreterCustomization`s are
    /// `customizations` now (as its watch's cache holds them), each script's origin naming the
    /// hub object.
    pub fn interpreters_held(&self, customizations: &[serde_json::Value]) -> Interpreters {
        match karmada::fleet_files::customization_files(customizations, &self.context) {
            Ok(files) => interpreters_of(&files),
            Err(_) => Interpreters::default(),
        }
    }

    /// The texts of the fleet a Karmada or KubeFed hub holds, one per hub object (see
    /// [`Hub::fleet`]); an input error on an OCM hub, which holds no templates or policies.
    async fn fleet_files(&self) -> Result<Vec<SourceFile>, HubError> {
        let contexts = self
            .kubeconfig
            .contexts
            .iter()
            .map(|c| c.name.clone())
            .collect();
        match self.kind {
            HubKind::KubeFed => kubefed::fleet_files(&self.client, &self.context, &contexts)
                .await
                .map_err(|reason| self.failed(reason)),
            HubKind::Karmada => {
                let bindings = karmada::read::bindings(&self.client)
                    .await
                    .map_err(|reason| self.failed(reason))?;
                karmada::fleet_files(&self.client, &self.context, &contexts, &bindings)
                    .await
                    .map_err(|reason| self.failed(reason))
            }
            HubKind::OpenClusterManagement => Err(HubError::Input(
                "an Open Cluster Management hub holds no templates or policies; its Placements are edited with `ocm-placement set`".into(),
            )),
        }
    }

    /// The hub kinds whose changes change the view: watched, so the console reads the hub
    /// again when one changes rather than on a timer.
    pub async fn watched_kinds(&self) -> Vec<kube::discovery::ApiResource> {
        match self.kind {
            HubKind::Karmada => karmada::read::watched_kinds(),
            HubKind::OpenClusterManagement => ocm::read::watched_kinds(),
            HubKind::KubeFed => kubefed::watched_kinds(&self.client).await,
        }
    }

    /// How many objects of `kind` one list request of the console's caches asks for.
    pub fn list_page_size(&self, kind: &kube::discovery::ApiResource) -> u32 {
        match self.kind {
            HubKind::Karmada => karmada::read::list_page_size(kind),
            HubKind::OpenClusterManagement => ocm::read::list_page_size(kind),
            HubKind::KubeFed => super::cache::LIST_PAGE_SIZE,
        }
    }

    /// A read-only fan-out target for `member`, named `cluster`, carrying `objects` (a plan or
    /// drift against what the hub delivered there); a member that cannot be reached is an
    /// error row of its own.
    pub async fn read_only_target(
        &self,
        member: &ClusterSpec,
        cluster: String,
        objects: Vec<serde_json::Value>,
    ) -> Target<KubeCluster> {
        let api = self
            .member_client(member, Timeouts::default())
            .await
            .map(|client| KubeCluster::new(client, true))
            .map_err(|err| ApiError::Other(err.to_string()));
        Target {
            cluster,
            api,
            objects,
            failed: Vec::new(),
            prune_kinds: Vec::new(),
            prune_namespaces: Default::default(),
            suspended: Vec::new(),
            refuse_unowned: Default::default(),
            take_over_unowned: Default::default(),
        }
    }

    /// A client for a member: through its own kubeconfig context when the kubeconfig has one
    /// (`context`, else the member's name), otherwise through the hub's proxy to the member
    /// (Karmada's `clusters/NAME/proxy`) with the hub's credentials.
    pub async fn member_client(
        &self,
        member: &ClusterSpec,
        timeouts: Timeouts,
    ) -> Result<Client, HubError> {
        let context = if member.context.is_empty() {
            &member.name
        } else {
            &member.context
        };
        if self.kubeconfig.contexts.iter().any(|c| c.name == *context) {
            return kubeconfig::client_for(&self.kubeconfig, context, timeouts)
                .await
                .map_err(|reason| HubError::Unreachable(reason.into()));
        }
        match self.kind {
            HubKind::Karmada => {
                let path = format!(
                    "/apis/cluster.karmada.io/v1alpha1/clusters/{}/proxy",
                    member.name
                );
                kubeconfig::proxied_client_for(&self.kubeconfig, &self.context, &path, timeouts)
                    .await
                    .map_err(HubError::Unreachable)
            }
            other => Err(HubError::Input(format!(
                "no kubeconfig context for {} and {} hubs offer no proxy to their members",
                member.name,
                other.as_str()
            ))),
        }
    }

    /// `err` as the hub's: its message names the hub. A reason with no cause of its own
    /// is the hub not answering.
    pub(super) fn failed(&self, err: impl Into<HubError>) -> HubError {
        err.into().within(&format!("--hub {}: ", self.context))
    }
}

/// The interpreters the customizations in `files` give. A customization the engine cannot read
/// is left out, as the hub's webhook already admitted it.
fn interpreters_of(files: &[SourceFile]) -> Interpreters {
    let (fleet, _) = crate::engine::load_fleet(files);
    fleet.interpreters.as_ref().clone()
}
