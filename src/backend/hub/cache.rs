//! The hub's informer caches: one kube-runtime reflector store per kind a reader reads, each
//! fed by a watcher that lists once and then only watches (it lists again only after 410 Gone
//! or a reconnect, as kube's watcher does). Every object change reaches the console's hub
//! backend as a [`Change`] naming its kind; every completed (re)list as [`Change::Listed`].
//! The stores hold each object once, behind an `Arc`. It must not interpret the objects —
//! each kind's reader does — and it never writes to the hub.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use futures::StreamExt;
use kube::Client;
use kube::api::{Api, DynamicObject};
use kube::config::Kubeconfig;
use kube::discovery::ApiResource;
use kube::runtime::reflector::{self, ObjectRef, Store};
use kube::runtime::{WatchStreamExt, watcher};
use serde_json::Value;
use tokio::sync::mpsc;

use crate::backend::hub::view::HubView;
use crate::backend::messages::CellRef;
use crate::model::{CellHealth, CellStatus};

/// How often, in this process, a hub cache's watcher listed its kind again after its first
/// list (410 Gone, a reconnect). The console's tests read it to tell a watched change from a
/// relist.
static RELISTS: AtomicU64 = AtomicU64::new(0);

/// How many times, in this process, a hub cache listed its kind again after its first list.
pub fn relists() -> u64 {
    RELISTS.load(Ordering::Relaxed)
}

/// One change a watcher saw, already applied to its store. `kind` indexes the kinds the
/// caches were started with.
#[derive(Debug, Clone)]
pub enum Change {
    Applied {
        kind: usize,
        object: Arc<DynamicObject>,
    },
    Deleted {
        kind: usize,
        object: Arc<DynamicObject>,
    },
    /// The kind's store holds a complete (re)list: rebuild what was made from it.
    Listed { kind: usize },
    /// The watch failed (its backoff retries); the store keeps what it had.
    Failed { reason: String },
}

/// The reflector stores of a hub's kinds, in the order they were started.
#[derive(Clone)]
pub struct Caches {
    pub kinds: Vec<ApiResource>,
    pub stores: Vec<Store<DynamicObject>>,
}

impl Caches {
    /// Starts one reflector per kind; their changes arrive on the returned receiver. The
    /// watchers stop when the receiver is dropped.
    pub fn start(client: &Client, kinds: Vec<ApiResource>) -> (Caches, mpsc::Receiver<Change>) {
        // Bounded, so a burst the console cannot keep up with slows the watchers rather than
        // growing without end; the stores stay current either way.
        let (sender, receiver) = mpsc::channel(4096);
        let mut stores = Vec::new();
        for (index, kind) in kinds.iter().enumerate() {
            let writer = reflector::store::Writer::new(kind.clone());
            stores.push(writer.as_reader());
            let api: Api<DynamicObject> = Api::all_with(client.clone(), kind);
            tokio::spawn(watch(api, writer, index, sender.clone()));
        }
        (Caches { kinds, stores }, receiver)
    }

    /// Caches filled from objects in hand rather than from a hub — for tests and benchmarks of
    /// pure code — with the writers that change them as a watcher would.
    pub fn in_memory(
        kinds: Vec<ApiResource>,
        objects: impl IntoIterator<Item = (usize, DynamicObject)>,
    ) -> (Caches, Vec<reflector::store::Writer<DynamicObject>>) {
        let mut writers: Vec<_> = kinds
            .iter()
            .map(|kind| reflector::store::Writer::new(kind.clone()))
            .collect();
        for writer in &mut writers {
            writer.apply_watcher_event(&watcher::Event::Init);
        }
        for (kind, object) in objects {
            if let Some(writer) = writers.get_mut(kind) {
                writer.apply_watcher_event(&watcher::Event::InitApply(object));
            }
        }
        for writer in &mut writers {
            writer.apply_watcher_event(&watcher::Event::InitDone);
        }
        let stores = writers.iter().map(|writer| writer.as_reader()).collect();
        (Caches { kinds, stores }, writers)
    }

    /// Waits until every store holds its first complete list.
    pub async fn ready(&self) {
        for store in &self.stores {
            // Only a dropped writer fails this, and then the store stays empty: the view says
            // so through its rows, so there is nothing more to wait for.
            let _ = store.wait_until_ready().await;
        }
    }

    /// Every object of kind `kind` in the store now.
    pub fn objects(&self, kind: usize) -> Vec<Arc<DynamicObject>> {
        self.stores.get(kind).map(Store::state).unwrap_or_default()
    }

    /// Every object of kind `kind` in the store now, as JSON.
    pub fn values(&self, kind: usize) -> Vec<Value> {
        self.objects(kind)
            .iter()
            .map(|object| value_of(object))
            .collect()
    }

    /// The stored object of kind `kind` named `name` (in `namespace`).
    pub fn get(
        &self,
        kind: usize,
        namespace: Option<&str>,
        name: &str,
    ) -> Option<Arc<DynamicObject>> {
        let resource = self.kinds.get(kind)?;
        let mut key = ObjectRef::<DynamicObject>::new_with(name, resource.clone());
        if let Some(namespace) = namespace {
            key = key.within(namespace);
        }
        self.stores.get(kind)?.get(&key)
    }
}

async fn watch(
    api: Api<DynamicObject>,
    writer: reflector::store::Writer<DynamicObject>,
    kind: usize,
    changes: mpsc::Sender<Change>,
) {
    let config = watcher::Config::default().timeout(45);
    // No reader looks at managedFields, often the larger part of a hub object: the store
    // keeps objects without them.
    let mut stream = watcher::watcher(api, config)
        .default_backoff()
        .modify(|object| object.metadata.managed_fields = None)
        .reflect(writer)
        .boxed();
    let mut listed_before = false;
    while let Some(event) = stream.next().await {
        let change = match event {
            Ok(watcher::Event::Apply(object)) => Change::Applied {
                kind,
                object: Arc::new(object),
            },
            Ok(watcher::Event::Delete(object)) => Change::Deleted {
                kind,
                object: Arc::new(object),
            },
            Ok(watcher::Event::Init) => {
                if listed_before {
                    RELISTS.fetch_add(1, Ordering::Relaxed);
                }
                listed_before = true;
                continue;
            }
            Ok(watcher::Event::InitApply(_)) => continue,
            Ok(watcher::Event::InitDone) => Change::Listed { kind },
            Err(err) => Change::Failed {
                reason: crate::backend::kube::probe::short_error(&err),
            },
        };
        if changes.send(change).await.is_err() {
            return;
        }
    }
}

/// An object as the readers read it: its JSON, with `metadata` as the API server sent it.
pub fn value_of(object: &DynamicObject) -> Value {
    serde_json::to_value(object).unwrap_or_default()
}

/// What one change touches in the view: the cells to send again.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Touched {
    Nothing,
    /// One (row, column) cell.
    Cell {
        row: usize,
        column: usize,
    },
    /// Some (row, column) cells.
    Cells(Vec<(usize, usize)>),
    /// Every cell of a row.
    Row(usize),
    /// A row new to the console, appended at the bottom: it is announced, then its cells.
    NewRow(usize),
    /// A cluster's health and every cell of its column.
    Column(usize),
    /// Every cell and every cluster's health.
    All,
}

/// A hub view kept current from the caches: built whole from the stores (at the start and
/// after a relist), then changed one object at a time. Each kind's reader implements it over
/// the kinds the hub watches (`Hub::watched_kinds`, whose order its `kind` indexes follow);
/// the console's hub backend runs it on a blocking thread.
pub trait LiveView: Send + Sized + 'static {
    /// The whole view from the stores, in the rows and columns of `shown`.
    fn read(shown: &HubView, caches: &Caches, kubeconfig: &Kubeconfig) -> Result<Self, String>;

    fn view(&self) -> &HubView;

    fn view_mut(&mut self) -> &mut HubView;

    /// What a change of this object of kind `kind` will touch, asked before it is applied so
    /// the cells' old values can be kept for the delta.
    fn touches(&self, kind: usize, object: &DynamicObject) -> Touched;

    /// Takes in one object of kind `kind` (`deleted`: it is gone; the stores already hold the
    /// change) and says what it touched. Rows it adds go at the bottom of the view.
    fn apply(
        &mut self,
        caches: &Caches,
        kind: usize,
        object: &DynamicObject,
        deleted: bool,
    ) -> Touched;

    /// Whether a change of kind `kind` may change what the OCM placement editor decides
    /// against (its Placements, decisions and clusters).
    fn moves_placements(&self, kind: usize) -> bool {
        let _ = kind;
        false
    }

    /// The object the hub rendered for `row` on `cluster`, from the stores (kept there only,
    /// so it is looked up when a preview or a followed edit needs it).
    fn rendered(&self, caches: &Caches, row: usize, cluster: &str) -> Option<Value>;
}

/// The cells a change touched, with their values in `view` now (a column's and a row's every
/// cell; nothing for a row `view` does not have yet).
pub fn cells_of(view: &HubView, touched: &Touched) -> Vec<(CellRef, (CellStatus, Option<String>))> {
    positions(view, touched)
        .into_iter()
        .map(|(row, column)| (cell_ref(row, column), view.cell(row, column)))
        .collect()
}

/// The workload health the hub reports for each cell `touched` covers in `view`.
pub fn health_of(view: &HubView, touched: &Touched) -> Vec<(CellRef, Option<CellHealth>)> {
    positions(view, touched)
        .into_iter()
        .map(|(row, column)| (cell_ref(row, column), view.health(row, column)))
        .collect()
}

fn cell_ref(row: usize, column: usize) -> CellRef {
    CellRef {
        resource: row as u32,
        cluster: column as u32,
    }
}

/// The (row, column) positions `touched` covers that exist in `view`.
fn positions(view: &HubView, touched: &Touched) -> Vec<(usize, usize)> {
    let rows = view.rows.len();
    let columns = view.clusters.len();
    match *touched {
        Touched::Nothing => Vec::new(),
        Touched::Cell { row, column } if row < rows => vec![(row, column)],
        Touched::Cell { .. } => Vec::new(),
        Touched::Cells(ref cells) => cells
            .iter()
            .filter(|(row, _)| *row < rows)
            .copied()
            .collect(),
        Touched::Row(row) | Touched::NewRow(row) if row < rows => {
            (0..columns).map(|column| (row, column)).collect()
        }
        Touched::Row(_) | Touched::NewRow(_) => Vec::new(),
        Touched::Column(column) => (0..rows).map(|row| (row, column)).collect(),
        Touched::All => (0..rows)
            .flat_map(|row| (0..columns).map(move |column| (row, column)))
            .collect(),
    }
}
