//! The object view of cells on a hub: what each followed cell's member really holds, read
//! through the member's kubeconfig context or the hub's proxy to it, with the member's recent
//! Events, compared with the object the hub rendered for that member (or, on a hub that keeps
//! none, the engine's render of the fleet). One reader task per console does the reads apart
//! from the backend's loop, so a slow member holds up nothing, and reads the followed cells
//! again every few seconds while the view is open. On a Karmada hub each read also carries what
//! the hub aggregated for the template (the template as the hub holds it, and its
//! ResourceBinding's `status.aggregatedStatus`), one hub read per followed resource, so the view
//! can set flotilla's aggregation beside Karmada's. It only reads, and never decides a cell's
//! status. [`read_once`] does the same reads once, for `status`.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use futures::StreamExt;
use serde_json::Value;
use tokio::sync::mpsc;

use super::connect::Hub;
use super::objects::delivered_form;
use super::view::HubView;
use crate::backend::fanout::cluster_api::ClusterApi;
use crate::backend::fanout::cluster_api::{Guard, Limits};
use crate::backend::fanout::object_events::{EventsAndPods, live_object, live_one};
use crate::backend::kube::api::KubeCluster;
use crate::backend::kube::kubeconfig::Timeouts;
use crate::engine::{Decision, Fleet};
use crate::messages::{BackendEvent, CellPods, CellRef, HubAggregate, LiveObject};
use crate::model::{ClusterSpec, HubKind, ResourceRef};

/// How often the followed cells are read again while the object view is open.
const LIVE_REFRESH: Duration = Duration::from_secs(3);

/// Members read at once.
const AT_ONCE: usize = 8;

/// One followed cell, owned, so the reader needs no view: where it is and what it should be.
#[derive(Debug, Clone)]
struct Read {
    cell: CellRef,
    member: ClusterSpec,
    target: ResourceRef,
    desired: Option<Value>,
}

/// What the reader is asked: the cells to read now (a new follow) or, when only what they
/// should be changed, at its next refresh.
struct Request {
    reads: Vec<Read>,
    now: bool,
}

/// What the hub rendered for row `row` on the named member, where it keeps one (from the
/// informer caches, or the rows of a full read).
pub type Rendered<'a> = &'a dyn Fn(usize, &str) -> Option<Value>;

/// The object view's side of a hub backend: the followed cells and the reader they go to.
pub struct ObjectReads {
    cells: Vec<CellRef>,
    fleet: Option<Arc<Fleet>>,
    reader: mpsc::UnboundedSender<Request>,
}

impl ObjectReads {
    /// Starts the reader; `fleet` is what desired objects come from where the hub keeps no
    /// rendered ones.
    pub fn start(
        hub: Hub,
        fleet: Option<Arc<Fleet>>,
        events: mpsc::UnboundedSender<BackendEvent>,
    ) -> ObjectReads {
        let (reader, requests) = mpsc::unbounded_channel();
        tokio::spawn(read_while_followed(hub, requests, events));
        ObjectReads {
            cells: Vec::new(),
            fleet,
            reader,
        }
    }

    /// The object view now follows `cells` (none: it closed); they are read at once.
    pub fn follow(&mut self, view: &HubView, rendered: Rendered, cells: Vec<CellRef>) {
        self.cells = cells;
        self.ask(view, rendered, true);
    }

    /// The fleet was edited: desired objects come from this one now.
    pub fn use_fleet(&mut self, view: &HubView, rendered: Rendered, fleet: Arc<Fleet>) {
        self.fleet = Some(fleet);
        self.ask(view, rendered, false);
    }

    /// The view changed as `news` says: a followed cell among its cell updates is compared
    /// with what it should be now from the next refresh on.
    pub fn view_changed(&mut self, view: &HubView, rendered: Rendered, news: &[BackendEvent]) {
        if self.cells.is_empty() {
            return;
        }
        let touched = news.iter().any(|event| {
            matches!(event, BackendEvent::Cells(updates)
                if updates.iter().any(|update| self.cells.contains(&update.cell)))
        });
        if touched {
            self.ask(view, rendered, false);
        }
    }

    /// Reads the pods of `cells`' workloads once, each on its member as the object view reads
    /// it (the `:pods` query), and sends them together in a task of its own.
    pub fn read_pods(
        &self,
        hub: &Hub,
        (view, rendered): (&HubView, Rendered),
        cells: &[CellRef],
        events: &mpsc::UnboundedSender<BackendEvent>,
    ) {
        let reads: Vec<Read> = cells
            .iter()
            .filter_map(|&cell| read_of(view, rendered, self.fleet.as_deref(), cell))
            .collect();
        let (hub, events) = (hub.clone(), events.clone());
        tokio::spawn(async move {
            // The answers come in the order of the reads.
            let answers = read_cells(&hub, &mut HashMap::new(), &reads)
                .await
                .into_iter()
                .zip(&reads)
                .map(|((cell, live), read)| {
                    let pods = match live.error {
                        Some(reason) => CellPods::unread(reason),
                        None => {
                            CellPods::of(&live.pods, read.desired.as_ref(), live.object.as_ref())
                        }
                    };
                    (cell, pods)
                })
                .collect();
            let _ = events.send(BackendEvent::Pods(answers));
        });
    }

    fn ask(&self, view: &HubView, rendered: Rendered, now: bool) {
        let reads = self
            .cells
            .iter()
            .filter_map(|&cell| read_of(view, rendered, self.fleet.as_deref(), cell))
            .collect();
        let _ = self.reader.send(Request { reads, now });
    }
}

/// What reading `cell` needs: its member, its object, and what the hub rendered for it (the
/// fleet's render where the hub keeps none).
fn read_of(
    view: &HubView,
    rendered: Rendered,
    fleet: Option<&Fleet>,
    cell: CellRef,
) -> Option<Read> {
    let (row, column) = (cell.resource as usize, cell.cluster as usize);
    let (member, _) = view.clusters.get(column)?;
    let row_of = view.rows.get(row)?;
    let rendered = rendered(row, &member.name).or_else(|| {
        let fleet = fleet?;
        let resource = fleet
            .resources
            .iter()
            .position(|resource| resource.target == row_of.target)?;
        let cluster = fleet.clusters.iter().position(|c| c.name == member.name)?;
        match fleet.decide(resource, cluster) {
            Decision::Placed { object, .. } => Some(object),
            _ => None,
        }
    });
    Some(Read {
        cell,
        member: member.clone(),
        target: row_of.target.clone(),
        desired: rendered.as_ref().map(delivered_form),
    })
}

/// Reads `cells` once, as the object view does — each on its member, through the member's
/// kubeconfig context or the hub's proxy to it, compared with what the hub rendered for it in
/// `view` — for `flotilla --hub CONTEXT status --resource`. A cell `view` does not have is
/// left out.
pub async fn read_once(hub: &Hub, view: &HubView, cells: &[CellRef]) -> Vec<(CellRef, LiveObject)> {
    let rendered = |row: usize, member: &str| view.rows.get(row)?.objects.get(member).cloned();
    let reads: Vec<Read> = cells
        .iter()
        .filter_map(|&cell| read_of(view, &rendered, None, cell))
        .collect();
    read_cells(hub, &mut HashMap::new(), &reads).await
}

/// The reader: reads the requested cells when asked and every [`LIVE_REFRESH`] while any is
/// followed, and sends each as a [`BackendEvent::LiveObject`]. A member's client is kept
/// while it answers.
async fn read_while_followed(
    hub: Hub,
    mut requests: mpsc::UnboundedReceiver<Request>,
    events: mpsc::UnboundedSender<BackendEvent>,
) {
    let mut reads: Vec<Read> = Vec::new();
    let mut clients: HashMap<String, KubeCluster> = HashMap::new();
    let mut refresh = tokio::time::interval(LIVE_REFRESH);
    refresh.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        let mut now = tokio::select! {
            request = requests.recv() => match request {
                Some(request) => {
                    reads = request.reads;
                    request.now
                }
                None => return,
            },
            _ = refresh.tick(), if !reads.is_empty() => true,
        };
        while let Ok(request) = requests.try_recv() {
            reads = request.reads;
            now |= request.now;
        }
        if !now || reads.is_empty() {
            continue;
        }
        for (cell, live) in read_cells(&hub, &mut clients, &reads).await {
            let live = Box::new(live);
            if events
                .send(BackendEvent::LiveObject { cell, live })
                .is_err()
            {
                return;
            }
        }
        refresh.reset();
    }
}

/// Reads each cell on its member, a few members at a time.
async fn read_cells(
    hub: &Hub,
    clients: &mut HashMap<String, KubeCluster>,
    reads: &[Read],
) -> Vec<(CellRef, LiveObject)> {
    let mut unreachable: HashMap<String, String> = HashMap::new();
    for read in reads {
        let name = &read.member.name;
        if clients.contains_key(name) || unreachable.contains_key(name) {
            continue;
        }
        match hub.member_client(&read.member, Timeouts::default()).await {
            Ok(client) => {
                clients.insert(name.clone(), KubeCluster::new(client, true));
            }
            Err(reason) => {
                unreachable.insert(name.clone(), format!("cannot reach {name}: {reason}"));
            }
        }
    }
    let shared = &*clients;
    let unreachable = &unreachable;
    let answers: Vec<(CellRef, LiveObject, bool)> = futures::stream::iter(reads.to_vec())
        .map(|read| async move {
            let Some(api) = shared.get(&read.member.name) else {
                let reason = unreachable.get(&read.member.name).cloned();
                let live = live_object(
                    read.desired.as_ref(),
                    None,
                    EventsAndPods::default(),
                    reason,
                );
                return (read.cell, live, false);
            };
            let guard = Guard::new(Limits::default());
            let (live, answered) = live_one(api, &guard, &read.target, read.desired.as_ref()).await;
            (read.cell, live, answered)
        })
        .buffered(AT_ONCE)
        .collect()
        .await;
    for ((_, _, answered), read) in answers.iter().zip(reads) {
        if !answered {
            clients.remove(&read.member.name);
        }
    }
    let mut hub_reads: HashMap<&ResourceRef, HubAggregate> = HashMap::new();
    if hub.kind == HubKind::Karmada {
        let api = KubeCluster::new(hub.client.clone(), true);
        for read in reads {
            if !hub_reads.contains_key(&read.target) {
                let aggregate = hub_aggregate(&api, &read.target).await;
                hub_reads.insert(&read.target, aggregate);
            }
        }
    }
    answers
        .into_iter()
        .zip(reads)
        .map(|((cell, mut live, _), read)| {
            live.hub = hub_reads.get(&read.target).cloned();
            (cell, live)
        })
        .collect()
}

/// What a Karmada hub aggregated for `target`'s template: the template as the hub holds it
/// (its `.status` is what Karmada aggregated) and its binding's `status.aggregatedStatus`.
async fn hub_aggregate(api: &KubeCluster, target: &ResourceRef) -> HubAggregate {
    let guard = Guard::new(Limits::default());
    let template = match guard.call(|| api.get(target)).await {
        Ok(template) => template,
        Err(err) => {
            return HubAggregate {
                error: Some(format!("cannot read the template on the hub: {err}")),
                ..HubAggregate::default()
            };
        }
    };
    let binding = ResourceRef {
        api_version: "work.karmada.io/v1alpha2".into(),
        kind: if target.namespace.is_some() {
            "ResourceBinding".into()
        } else {
            "ClusterResourceBinding".into()
        },
        namespace: target.namespace.clone(),
        name: binding_name(&target.kind, &target.name),
    };
    let (items, error) = match guard.call(|| api.get(&binding)).await {
        Ok(found) => (
            found
                .as_ref()
                .and_then(|b| b.pointer("/status/aggregatedStatus"))
                .and_then(Value::as_array)
                .cloned()
                .unwrap_or_default(),
            None,
        ),
        Err(err) => (
            Vec::new(),
            Some(format!(
                "cannot read {} on the hub: {err}",
                binding.display_key()
            )),
        ),
    };
    HubAggregate {
        template,
        items,
        error,
    }
}

/// Karmada's `GenerateBindingName`: `NAME-KIND` lowercased, a `:` in the name read as `.`.
fn binding_name(kind: &str, name: &str) -> String {
    format!("{}-{kind}", name.replace(':', ".")).to_lowercase()
}
