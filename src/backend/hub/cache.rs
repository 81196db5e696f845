//! The hub's informer caches: one kube-runtime reflector store per kind a reader reads, each
//! fed by a watcher that lists once and then only watches (it lists again only after 410 Gone
//! or a reconnect, as kube's watcher does). Every object change reaches the console's hub
//! backend as a [`Change`] naming its kind, the object parsed there once by the incremental
//! view's [`Parse`] into what that view reads of it; every completed (re)list as
//! [`Change::Listed`].
//! The stores hold each object once, behind an `Arc`, compactly ([`Stored`]: its metadata,
//! and the rest as JSON text parsed again when read). It must not interpret the objects —
//! each kind's reader does, through the parse it hands the caches — and it never writes to
//! the hub.

use std::borrow::Cow;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use futures::StreamExt;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kube::Client;
use kube::Resource;
use kube::api::{Api, DynamicObject, TypeMeta};
use kube::config::Kubeconfig;
use kube::core::DynamicResourceScope;
use kube::discovery::ApiResource;
use kube::runtime::reflector::{self, ObjectRef, Store};
use kube::runtime::{WatchStreamExt, watcher};
use serde_json::Value;
use tokio::sync::mpsc;

use crate::backend::hub::error::HubError;
use crate::backend::hub::view::HubView;
use crate::messages::CellRef;
use crate::model::{CellHealth, CellStatus};

/// How often, in this process, a hub cache's watcher listed its kind again after its first
/// list (410 Gone, a reconnect). The console's tests read it to tell a watched change from a
/// relist.
static RELISTS: AtomicU64 = AtomicU64::new(0);

/// How many times, in this process, a hub cache listed its kind again after its first list.
pub fn relists() -> u64 {
    RELISTS.load(Ordering::Relaxed)
}

/// Objects per list page when a cache lists a kind, as kube's watcher pages them; a hub's
/// reader asks for fewer where its objects are big, and for more of its Works.
pub const LIST_PAGE_SIZE: u32 = 500;

/// Objects per list page for a hub's Works (Karmada's Works, OCM's ManifestWorks): one a member
/// cluster and resource, so the most numerous kind by far. Each page costs the API server a time
/// that grows with the whole collection (one Work a page took 0.8 s on a hub of 200,000), so on
/// a big hub the number of pages makes the list slow: there a page of 5,000 came back in
/// 1.2–2.6 s against 5.9–8.6 s for the same 5,000 in pages of 500. Such a page is about 30 MB
/// of JSON, held while its objects' metadata is parsed.
pub const WORK_PAGE_SIZE: u32 = 5_000;

/// How an incremental view takes a watched object of kind `kind` from its JSON text: the one
/// parse the object gets, where it enters (each kind's reader says what it keeps of it).
pub type Parse<O> = fn(kind: usize, text: &str) -> O;

/// One change a watcher saw, already applied to its store, with the object parsed once into
/// what the view reads of it (`O`, its [`IncrementalView::Object`]). `kind` indexes the kinds
/// the caches were started with.
#[derive(Debug, Clone)]
pub enum Change<O> {
    Applied {
        kind: usize,
        object: O,
    },
    Deleted {
        kind: usize,
        object: O,
    },
    /// The kind's store holds a complete (re)list: rebuild what was made from it.
    Listed {
        kind: usize,
    },
    /// The watch failed (its backoff retries); the store keeps what it had.
    Failed {
        reason: String,
    },
}

impl<O> Change<O> {
    /// The kind the change is of; `None` for a failed watch, which says nothing of a kind.
    pub fn kind(&self) -> Option<usize> {
        match self {
            Change::Applied { kind, .. }
            | Change::Deleted { kind, .. }
            | Change::Listed { kind } => Some(*kind),
            Change::Failed { .. } => None,
        }
    }

    /// The change a watcher would send for `object` of kind `kind` (`deleted`: it is gone),
    /// parsed by `parse` from the text a store keeps — for tests and benchmarks of pure code.
    pub fn of(kind: usize, object: &DynamicObject, deleted: bool, parse: Parse<O>) -> Change<O> {
        let object = parse(kind, &text_of(object));
        if deleted {
            Change::Deleted { kind, object }
        } else {
            Change::Applied { kind, object }
        }
    }
}

/// An object as a store keeps it: its name and namespace (what the store indexes it by), and
/// the whole object, less its managedFields, as JSON text compressed with LZ4 against its
/// kind's dictionary, parsed again when a reader asks. As a `serde_json::Value` tree a hub
/// object takes several times the size of its text, and a big hub holds hundreds of thousands
/// of Works whose readers look at each one only when it changes or on a relist. Objects of one
/// kind differ little, so each is compressed against the first its store took: what is kept of
/// it is mostly what makes it different.
#[derive(Debug, Clone)]
pub struct Stored {
    key: ObjectMeta,
    packed: Box<[u8]>,
    dictionary: Arc<[u8]>,
}

/// A [`DynamicObject`] as JSON, its metadata without managedFields (no reader looks at them,
/// and they are often the larger part of a hub object).
#[derive(serde::Serialize)]
struct WithoutManagedFields<'a> {
    #[serde(flatten)]
    types: &'a Option<TypeMeta>,
    metadata: Cow<'a, ObjectMeta>,
    #[serde(flatten)]
    data: &'a Value,
}

/// How much of the first object a store took serves as its kind's dictionary: LZ4 looks back
/// no further.
const DICTIONARY_BYTES: usize = 64 * 1024;

/// The name and namespace of an object whose metadata is `metadata`, the store's key for it.
fn key_meta(metadata: &ObjectMeta) -> ObjectMeta {
    ObjectMeta {
        name: metadata.name.clone(),
        namespace: metadata.namespace.clone(),
        ..ObjectMeta::default()
    }
}

/// An object as the watchers take it from the API server: its metadata parsed, less its
/// managedFields, and the whole object kept as JSON text, the rest of it unparsed. Kube's
/// watcher asks for a list's next page only once the last is parsed and taken, so the parse
/// is on the list's clock: a page of 500 Works parses in a few milliseconds this way, and in
/// tens of milliseconds into `serde_json::Value` trees.
#[derive(Debug, Clone)]
pub struct RawObject {
    metadata: ObjectMeta,
    text: Box<str>,
}

impl RawObject {
    /// `object` as a watcher would have taken it.
    fn of(object: &DynamicObject) -> RawObject {
        RawObject {
            metadata: key_meta(&object.metadata),
            text: text_of(object).into_boxed_str(),
        }
    }

    /// The object, parsed.
    #[cfg(test)]
    fn object(&self) -> DynamicObject {
        parsed(self.text.as_bytes(), &self.metadata)
    }
}

/// The object whose JSON is `text`, or only its name (`metadata`) if the text does not parse.
fn parsed(text: &[u8], metadata: &ObjectMeta) -> DynamicObject {
    serde_json::from_slice(text).unwrap_or_else(|_| DynamicObject {
        types: None,
        metadata: key_meta(metadata),
        data: Value::Null,
    })
}

impl<'de> serde::Deserialize<'de> for RawObject {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_map(RawObjectFields)
    }
}

/// Reads an object's fields: its metadata parsed, every other field kept as its text.
struct RawObjectFields;

impl<'de> serde::de::Visitor<'de> for RawObjectFields {
    type Value = RawObject;

    fn expecting(&self, formatter: &mut std::fmt::Formatter) -> std::fmt::Result {
        formatter.write_str("a Kubernetes object")
    }

    fn visit_map<A: serde::de::MapAccess<'de>>(self, mut fields: A) -> Result<RawObject, A::Error> {
        use serde::de::Error;
        let mut metadata = ObjectMeta::default();
        let mut text = String::from("{");
        while let Some(field) = fields.next_key::<Cow<'de, str>>()? {
            if text.len() > 1 {
                text.push(',');
            }
            text.push_str(&serde_json::to_string(&field).map_err(A::Error::custom)?);
            text.push(':');
            if field == "metadata" {
                metadata = fields.next_value()?;
                metadata.managed_fields = None;
                text.push_str(&serde_json::to_string(&metadata).map_err(A::Error::custom)?);
            } else {
                let value: Box<serde_json::value::RawValue> = fields.next_value()?;
                text.push_str(value.get());
            }
        }
        text.push('}');
        Ok(RawObject {
            metadata,
            text: text.into_boxed_str(),
        })
    }
}

impl Resource for RawObject {
    type DynamicType = ApiResource;
    type Scope = DynamicResourceScope;

    fn kind(kind: &ApiResource) -> Cow<'_, str> {
        DynamicObject::kind(kind)
    }

    fn group(kind: &ApiResource) -> Cow<'_, str> {
        DynamicObject::group(kind)
    }

    fn version(kind: &ApiResource) -> Cow<'_, str> {
        DynamicObject::version(kind)
    }

    fn api_version(kind: &ApiResource) -> Cow<'_, str> {
        DynamicObject::api_version(kind)
    }

    fn plural(kind: &ApiResource) -> Cow<'_, str> {
        DynamicObject::plural(kind)
    }

    fn meta(&self) -> &ObjectMeta {
        &self.metadata
    }

    fn meta_mut(&mut self) -> &mut ObjectMeta {
        &mut self.metadata
    }
}

/// `object` as JSON text, without its managedFields.
fn text_of(object: &DynamicObject) -> String {
    let metadata = if object.metadata.managed_fields.is_some() {
        let mut metadata = object.metadata.clone();
        metadata.managed_fields = None;
        Cow::Owned(metadata)
    } else {
        Cow::Borrowed(&object.metadata)
    };
    serde_json::to_string(&WithoutManagedFields {
        types: &object.types,
        metadata,
        data: &object.data,
    })
    .unwrap_or_default()
}

impl Stored {
    /// The compact form of `object`.
    fn of(object: &RawObject, dictionary: &Arc<[u8]>) -> Stored {
        Stored {
            key: key_meta(&object.metadata),
            packed: lz4_flex::block::compress_prepend_size_with_dict(
                object.text.as_bytes(),
                dictionary,
            )
            .into_boxed_slice(),
            dictionary: dictionary.clone(),
        }
    }

    /// Only what the store keys `object` by, for taking it out.
    fn key_of(object: &RawObject) -> Stored {
        Stored {
            key: key_meta(&object.metadata),
            packed: Box::default(),
            dictionary: Arc::from([]),
        }
    }

    /// The object again, as the API server sent it (less its managedFields).
    pub fn object(&self) -> DynamicObject {
        lz4_flex::block::decompress_size_prepended_with_dict(&self.packed, &self.dictionary)
            .map_or_else(|_| parsed(&[], &self.key), |text| parsed(&text, &self.key))
    }

    /// The object's JSON text, as the API server sent it (less its managedFields).
    pub fn text(&self) -> String {
        lz4_flex::block::decompress_size_prepended_with_dict(&self.packed, &self.dictionary)
            .ok()
            .and_then(|text| String::from_utf8(text).ok())
            .unwrap_or_else(|| text_of(&parsed(&[], &self.key)))
    }

    /// The bytes this object holds in its store: itself, its entry there and the entry's
    /// copy of its name and namespace (its kind's dictionary is shared, not counted).
    pub fn footprint(&self) -> usize {
        let text = |s: &Option<String>| s.as_ref().map_or(0, String::capacity);
        let entry = std::mem::size_of::<(ObjectRef<Stored>, Arc<Stored>)>()
            + 2 * std::mem::size_of::<usize>();
        entry
            + std::mem::size_of::<Stored>()
            + self.packed.len()
            + 2 * (text(&self.key.name) + text(&self.key.namespace))
    }
}

/// Each kind has a store of its own ([`Caches::kinds`] says which), so its objects are keyed
/// by namespace and name alone: a key carries no kind, and the kind's names are empty here.
impl Resource for Stored {
    type DynamicType = ();
    type Scope = DynamicResourceScope;

    fn kind((): &()) -> Cow<'_, str> {
        Cow::Borrowed("")
    }

    fn group((): &()) -> Cow<'_, str> {
        Cow::Borrowed("")
    }

    fn version((): &()) -> Cow<'_, str> {
        Cow::Borrowed("")
    }

    fn api_version((): &()) -> Cow<'_, str> {
        Cow::Borrowed("")
    }

    fn plural((): &()) -> Cow<'_, str> {
        Cow::Borrowed("")
    }

    fn meta(&self) -> &ObjectMeta {
        &self.key
    }

    fn meta_mut(&mut self) -> &mut ObjectMeta {
        &mut self.key
    }
}

/// Feeds one kind's store with watcher events as the watcher sees them, keeping each
/// object in its [`Stored`] form.
pub struct CacheWriter {
    writer: reflector::store::Writer<Stored>,
    /// The kind's dictionary: the end of the first object's text (empty until one came).
    dictionary: Arc<[u8]>,
}

impl CacheWriter {
    fn new() -> CacheWriter {
        CacheWriter {
            writer: reflector::store::Writer::new(()),
            dictionary: Arc::from([]),
        }
    }

    fn stored(&mut self, object: &RawObject) -> Stored {
        if self.dictionary.is_empty() {
            let text = object.text.as_bytes();
            let from = text.len().saturating_sub(DICTIONARY_BYTES);
            self.dictionary = Arc::from(text.get(from..).unwrap_or_default());
        }
        Stored::of(object, &self.dictionary)
    }

    /// Applies one watcher event to the store.
    fn apply(&mut self, event: &watcher::Event<RawObject>) {
        let stored = match event {
            watcher::Event::Apply(object) => watcher::Event::Apply(self.stored(object)),
            // The store finds a deleted object by its key alone: nothing of it is kept.
            watcher::Event::Delete(object) => watcher::Event::Delete(Stored::key_of(object)),
            watcher::Event::Init => watcher::Event::Init,
            watcher::Event::InitApply(object) => watcher::Event::InitApply(self.stored(object)),
            watcher::Event::InitDone => watcher::Event::InitDone,
        };
        self.writer.apply_watcher_event(&stored);
    }

    /// Applies one event about objects in hand to the store, as a watcher's would be.
    pub fn apply_watcher_event(&mut self, event: &watcher::Event<DynamicObject>) {
        let raw = match event {
            watcher::Event::Apply(object) => watcher::Event::Apply(RawObject::of(object)),
            watcher::Event::Delete(object) => watcher::Event::Delete(RawObject::of(object)),
            watcher::Event::Init => watcher::Event::Init,
            watcher::Event::InitApply(object) => watcher::Event::InitApply(RawObject::of(object)),
            watcher::Event::InitDone => watcher::Event::InitDone,
        };
        self.apply(&raw);
    }
}

/// The reflector stores of a hub's kinds, in the order they were started.
#[derive(Clone)]
pub struct Caches {
    pub kinds: Vec<ApiResource>,
    stores: Vec<Store<Stored>>,
    progress: Arc<Progress>,
}

/// How the watchers are getting on, for whoever waits for their first lists.
#[derive(Default)]
struct Progress {
    /// Whether a watcher's last event was an error (its backoff retries).
    failing: AtomicBool,
    /// How many objects the watchers have taken from lists so far.
    listed: AtomicU64,
}

impl Caches {
    /// Starts one reflector per kind; their changes arrive on the returned receiver. The
    /// watchers stop when the receiver is dropped. `read_timeout` is the client's: each watch
    /// request asks the server to end it before that, so a kind that is quiet for longer is
    /// watched again from where it was rather than failing on the read timeout.
    /// `page_size` says how many objects of a kind one list request asks for: a page is
    /// parsed whole before its objects are stored, so kinds whose objects are big come a few
    /// at a time.
    /// Each changed object is parsed once, by `parse`, into what the view reads of it.
    pub fn start<O: Send + 'static>(
        client: &Client,
        kinds: Vec<ApiResource>,
        page_size: impl Fn(&ApiResource) -> u32,
        read_timeout: Duration,
        parse: Parse<O>,
    ) -> (Caches, mpsc::Receiver<Change<O>>) {
        let watch_for = watch_seconds(read_timeout);
        // Bounded, so a burst the console cannot keep up with slows the watchers rather than
        // growing without end; the stores stay current either way.
        let (sender, receiver) = mpsc::channel(4096);
        let mut stores = Vec::new();
        let progress = Arc::new(Progress::default());
        for (index, kind) in kinds.iter().enumerate() {
            let writer = CacheWriter::new();
            stores.push(writer.writer.as_reader());
            let api: Api<RawObject> = Api::all_with(client.clone(), kind);
            // A list at the latest version, in pages. Any version ("0", the watcher's
            // default) is served from the API server's watch cache, which ignores the page
            // size and sends every object in one response: at 200,000 Works that response
            // outlasts the server's request timeout and the list never completes.
            let config = watcher::Config::default()
                .timeout(watch_for)
                .page_size(page_size(kind))
                .list_semantic(watcher::ListSemantic::MostRecent);
            let watching = watch(
                api,
                writer,
                (index, kind.plural.clone()),
                config,
                (sender.clone(), parse),
                progress.clone(),
            );
            tokio::spawn(watching);
        }
        let caches = Caches {
            kinds,
            stores,
            progress,
        };
        (caches, receiver)
    }

    /// Caches filled from objects in hand rather than from a hub — for tests and benchmarks of
    /// pure code — with the writers that change them as a watcher would.
    pub fn in_memory(
        kinds: Vec<ApiResource>,
        objects: impl IntoIterator<Item = (usize, DynamicObject)>,
    ) -> (Caches, Vec<CacheWriter>) {
        let mut writers: Vec<_> = kinds.iter().map(|_| CacheWriter::new()).collect();
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
        let stores = writers
            .iter()
            .map(|writer| writer.writer.as_reader())
            .collect();
        let caches = Caches {
            kinds,
            stores,
            progress: Arc::default(),
        };
        (caches, writers)
    }

    /// Waits until every store holds its first complete list.
    pub async fn ready(&self) {
        for store in &self.stores {
            // Only a dropped writer fails this, and then the store stays empty: the view says
            // so through its rows, so there is nothing more to wait for.
            let _ = store.wait_until_ready().await;
        }
    }

    /// Whether a watcher's last attempt failed (it retries with backoff).
    pub fn failing(&self) -> bool {
        self.progress.failing.load(Ordering::Relaxed)
    }

    /// How many objects the watchers have taken from lists so far, relists included: while it
    /// grows, the caches are getting somewhere even if a watcher failed on the way.
    pub fn listed(&self) -> u64 {
        self.progress.listed.load(Ordering::Relaxed)
    }

    /// How many objects of kind `kind` the store holds now.
    pub fn count(&self, kind: usize) -> usize {
        self.stores.get(kind).map_or(0, |store| store.len())
    }

    /// How many objects the stores hold, and the bytes they take: each object's
    /// [`Stored::footprint`] and each kind's dictionary.
    pub fn footprint(&self) -> (usize, usize) {
        let mut objects = 0;
        let mut bytes = 0;
        for store in &self.stores {
            let state = store.state();
            objects += state.len();
            bytes += state.iter().map(|stored| stored.footprint()).sum::<usize>();
            bytes += state.first().map_or(0, |stored| stored.dictionary.len());
        }
        (objects, bytes)
    }

    /// Every object of kind `kind` in the store now, in its compact form.
    pub fn stored(&self, kind: usize) -> Vec<Arc<Stored>> {
        self.stores.get(kind).map(Store::state).unwrap_or_default()
    }

    /// Every object of kind `kind` in the store now, each parsed from its stored text as it is
    /// taken, so a whole read holds one parsed object at a time, not all of them.
    pub fn each_object(&self, kind: usize) -> impl Iterator<Item = DynamicObject> + use<> {
        self.stored(kind).into_iter().map(|stored| stored.object())
    }

    /// Every object of kind `kind` in the store now, each parsed by `parse` from its stored
    /// text as it is taken (as a watched change of it would be).
    pub fn each_parsed<O>(&self, kind: usize, parse: Parse<O>) -> impl Iterator<Item = O> + use<O> {
        self.stored(kind)
            .into_iter()
            .map(move |stored| parse(kind, &stored.text()))
    }

    /// Every object of kind `kind` in the store now, as JSON.
    pub fn values(&self, kind: usize) -> Vec<Value> {
        self.each_object(kind)
            .map(|object| value_of(&object))
            .collect()
    }

    /// The stored object of kind `kind` named `name` (in `namespace`).
    pub fn get(&self, kind: usize, namespace: Option<&str>, name: &str) -> Option<DynamicObject> {
        let mut key = ObjectRef::<Stored>::new_with(name, ());
        if let Some(namespace) = namespace {
            key = key.within(namespace);
        }
        Some(self.stores.get(kind)?.get(&key)?.object())
    }
}

/// How long one watch request may last: three quarters of the client's read timeout (a
/// watch that outlived it would fail with "timed out" whenever its kind is quiet that long,
/// and the backend would take the hub for unreachable), at least 5 s.
fn watch_seconds(read_timeout: Duration) -> u32 {
    let seconds = read_timeout.as_secs().saturating_mul(3) / 4;
    u32::try_from(seconds).unwrap_or(u32::MAX).max(5)
}

async fn watch<O>(
    api: Api<RawObject>,
    mut writer: CacheWriter,
    (kind, plural): (usize, String),
    config: watcher::Config,
    (changes, parse): (mpsc::Sender<Change<O>>, Parse<O>),
    progress: Arc<Progress>,
) {
    let mut stream = watcher::watcher(api, config).default_backoff().boxed();
    let mut listed_before = false;
    let mut listing_since = Instant::now();
    while let Some(event) = stream.next().await {
        if let Ok(event) = &event {
            writer.apply(event);
        }
        progress.failing.store(event.is_err(), Ordering::Relaxed);
        match &event {
            Ok(watcher::Event::Init) => listing_since = Instant::now(),
            Ok(watcher::Event::InitDone) => tracing::info!(
                kind = %plural,
                objects = writer.writer.as_reader().len(),
                seconds = listing_since.elapsed().as_secs_f64(),
                "listed"
            ),
            Err(err) => tracing::warn!(
                kind = %plural,
                error = %crate::backend::kube::probe::short_error(err),
                "watch failed; retrying"
            ),
            Ok(_) => {}
        }
        let change = match event {
            Ok(watcher::Event::Apply(object)) => Change::Applied {
                kind,
                object: parse(kind, &object.text),
            },
            Ok(watcher::Event::Delete(object)) => Change::Deleted {
                kind,
                object: parse(kind, &object.text),
            },
            Ok(watcher::Event::Init) => {
                if listed_before {
                    RELISTS.fetch_add(1, Ordering::Relaxed);
                }
                listed_before = true;
                continue;
            }
            Ok(watcher::Event::InitApply(_)) => {
                progress.listed.fetch_add(1, Ordering::Relaxed);
                continue;
            }
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
pub trait IncrementalView: Send + Sized + 'static {
    /// A watched object as this view reads it, parsed once where it enters ([`Self::parse`]).
    type Object: Send + 'static;

    /// What this view reads of an object of kind `kind` whose JSON is `text` (the caches'
    /// watchers call it once for each change, and [`Change`] carries what it gives).
    fn parse(kind: usize, text: &str) -> Self::Object;

    /// The whole view from the stores, in the rows and columns of `shown`.
    fn read(shown: &HubView, caches: &Caches, kubeconfig: &Kubeconfig) -> Result<Self, HubError>;

    /// The hub's members in the stores now, as the view's columns name them.
    fn members(
        caches: &Caches,
        kubeconfig: &Kubeconfig,
    ) -> Result<Vec<(crate::model::ClusterSpec, crate::model::ClusterStatus)>, HubError>;

    fn view(&self) -> &HubView;

    fn view_mut(&mut self) -> &mut HubView;

    /// What a change of this object of kind `kind` will touch, asked before it is applied so
    /// the cells' old values can be kept for the delta.
    fn touches(&self, kind: usize, object: &Self::Object) -> Touched;

    /// Takes in one object of kind `kind` (`deleted`: it is gone; the stores already hold the
    /// change) and says what it touched. Rows it adds go at the bottom of the view.
    fn apply(
        &mut self,
        caches: &Caches,
        kind: usize,
        object: &Self::Object,
        deleted: bool,
    ) -> Touched;

    /// Whether a change of kind `kind` may change what the OCM placement editor decides
    /// against (its Placements, decisions and clusters).
    fn moves_placements(&self, kind: usize) -> bool {
        let _ = kind;
        false
    }

    /// The index of the kind that holds the hub's resource interpreter customizations, for a
    /// hub kind whose interpreters judge the members' objects (Karmada's).
    fn interpreters_kind() -> Option<usize> {
        None
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

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use serde_json::json;

    fn work_kind() -> ApiResource {
        ApiResource {
            group: "work.karmada.io".into(),
            version: "v1alpha1".into(),
            api_version: "work.karmada.io/v1alpha1".into(),
            kind: "Work".into(),
            plural: "works".into(),
        }
    }

    #[test]
    fn a_stored_object_reads_back_as_sent_less_its_managed_fields() {
        let sent = json!({
            "apiVersion": "work.karmada.io/v1alpha1", "kind": "Work",
            "metadata": {"name": "web-1", "namespace": "karmada-es-member-1",
                "labels": {"app": "web"},
                "managedFields": [{"manager": "karmada-controller-manager", "operation": "Update"}]},
            "spec": {"workload": {"manifests": [{"apiVersion": "v1", "kind": "ConfigMap",
                "metadata": {"name": "web"}, "data": {"key": "value"}}]}},
            "status": {"conditions": [{"type": "Applied", "status": "True"}]}
        });
        let (caches, _) = Caches::in_memory(
            vec![work_kind()],
            [(0, serde_json::from_value(sent.clone()).unwrap())],
        );
        let mut expected = sent;
        expected["metadata"]
            .as_object_mut()
            .unwrap()
            .remove("managedFields");
        let read = caches.get(0, Some("karmada-es-member-1"), "web-1").unwrap();
        assert_eq!(value_of(&read), expected);
        assert_eq!(caches.values(0), vec![expected]);
        assert_eq!(caches.count(0), 1);
        assert!(
            caches
                .get(0, Some("karmada-es-member-2"), "web-1")
                .is_none()
        );
    }

    #[test]
    fn an_object_taken_from_a_list_page_or_a_watch_event_keeps_all_but_its_managed_fields() {
        let sent = json!({
            "apiVersion": "work.karmada.io/v1alpha1", "kind": "Work",
            "metadata": {"name": "web-1", "namespace": "karmada-es-member-1",
                "resourceVersion": "42", "labels": {"app": "web \"edge\""},
                "managedFields": [{"manager": "karmada-controller-manager", "operation": "Update"}]},
            "spec": {"workload": {"manifests": [{"kind": "ConfigMap", "data": {"k": "é\n"}}]}},
            "status": {"conditions": [{"type": "Applied", "status": "True"}]},
            "x-extra": [1, 2.5, null, true]
        });
        let mut expected = sent.clone();
        expected["metadata"]
            .as_object_mut()
            .unwrap()
            .remove("managedFields");
        // As kube's watcher decodes them: a list page, and one line of a watch.
        let page = json!({"apiVersion": "work.karmada.io/v1alpha1", "kind": "WorkList",
            "metadata": {"continue": "next", "resourceVersion": "43"}, "items": [sent.clone()]});
        let page: kube::core::ObjectList<RawObject> =
            serde_json::from_str(&page.to_string()).unwrap();
        let line = json!({"type": "MODIFIED", "object": sent}).to_string();
        let kube::core::WatchEvent::Modified(watched) =
            serde_json::from_str::<kube::core::WatchEvent<RawObject>>(&line).unwrap()
        else {
            panic!("a MODIFIED event")
        };
        for object in [&page.items[0], &watched] {
            assert_eq!(object.meta().resource_version.as_deref(), Some("42"));
            assert_eq!(value_of(&object.object()), expected);
            let mut writer = CacheWriter::new();
            writer.apply(&watcher::Event::Apply(object.clone()));
            let stored = writer.writer.as_reader().state()[0].object();
            assert_eq!(value_of(&stored), expected);
        }
    }

    #[test]
    fn a_store_of_works_holds_less_than_half_their_json() {
        let work = |index: usize| {
            json!({
                "apiVersion": "work.karmada.io/v1alpha1", "kind": "Work",
                "metadata": {"name": "web-5d4f8", "namespace": format!("karmada-es-member-{index}"),
                    "labels": {"work.karmada.io/permanent-id": format!("6f1c-{index:08}")}},
                "spec": {"workload": {"manifests": [{"apiVersion": "apps/v1", "kind": "Deployment",
                    "metadata": {"name": "web", "namespace": "shop", "labels": {"app": "web",
                        "propagationpolicy.karmada.io/permanent-id": "0b9f6a52-9a0e-4c1b-8f4e-1d2c3b4a5f60",
                        "work.karmada.io/permanent-id": format!("6f1c-{index:08}")},
                        "annotations": {"propagationpolicy.karmada.io/name": "web",
                            "propagationpolicy.karmada.io/namespace": "shop",
                            "resourcebinding.karmada.io/name": "web-deployment",
                            "resourcebinding.karmada.io/namespace": "shop",
                            "work.karmada.io/conflict-resolution": "abort",
                            "work.karmada.io/name": "web-5d4f8",
                            "work.karmada.io/namespace": format!("karmada-es-member-{index}")}},
                    // As Karmada's API server stores the template, defaults filled in.
                    "spec": {"replicas": 3, "selector": {"matchLabels": {"app": "web"}},
                        "progressDeadlineSeconds": 600, "revisionHistoryLimit": 10,
                        "strategy": {"type": "RollingUpdate",
                            "rollingUpdate": {"maxSurge": "25%", "maxUnavailable": "25%"}},
                        "template": {"metadata": {"labels": {"app": "web"}},
                            "spec": {"containers": [{"name": "web", "image": "nginx:1.27",
                                "imagePullPolicy": "IfNotPresent",
                                "ports": [{"containerPort": 8080, "protocol": "TCP"}],
                                "resources": {"requests": {"cpu": "100m", "memory": "128Mi"}},
                                "terminationMessagePath": "/dev/termination-log",
                                "terminationMessagePolicy": "File"}],
                                "dnsPolicy": "ClusterFirst", "restartPolicy": "Always",
                                "schedulerName": "default-scheduler", "securityContext": {},
                                "terminationGracePeriodSeconds": 30}}}}]}},
                "status": {"conditions": [{"type": "Applied", "status": "True",
                    "reason": "AppliedSuccessful", "message": "Manifest has been successfully applied",
                    "lastTransitionTime": "2026-12-02T10:00:00Z"}],
                    "manifestStatuses": [{"identifier": {"ordinal": 0, "group": "apps",
                        "version": "v1", "kind": "Deployment", "namespace": "shop", "name": "web"},
                        "status": {"observedGeneration": 1, "replicas": 3, "readyReplicas": 3,
                            "availableReplicas": 3, "updatedReplicas": 3},
                        "health": "Healthy"}]}
            })
        };
        let works: Vec<Value> = (0..1_000).map(work).collect();
        let json_bytes: usize = works.iter().map(|w| w.to_string().len()).sum();
        let (caches, _) = Caches::in_memory(
            vec![work_kind()],
            works
                .iter()
                .map(|w| (0, serde_json::from_value(w.clone()).unwrap())),
        );
        let (objects, bytes) = caches.footprint();
        assert_eq!(objects, 1_000);
        assert!(
            bytes * 2 < json_bytes,
            "{bytes} bytes held for {json_bytes} bytes of JSON"
        );
        let seventh = caches.get(0, Some("karmada-es-member-7"), "web-5d4f8");
        assert_eq!(seventh.as_ref().map(value_of), Some(works[7].clone()));
    }

    #[test]
    fn a_deleted_object_leaves_its_store() {
        let work = |name: &str| -> DynamicObject {
            serde_json::from_value(json!({
                "apiVersion": "work.karmada.io/v1alpha1", "kind": "Work",
                "metadata": {"name": name, "namespace": "karmada-es-member-1"},
                "spec": {"workload": {"manifests": []}}
            }))
            .unwrap()
        };
        let (caches, mut writers) =
            Caches::in_memory(vec![work_kind()], [(0, work("web")), (0, work("db"))]);
        writers[0].apply_watcher_event(&watcher::Event::Delete(work("web")));
        assert!(caches.get(0, Some("karmada-es-member-1"), "web").is_none());
        assert!(caches.get(0, Some("karmada-es-member-1"), "db").is_some());
        assert_eq!(caches.count(0), 1);
    }
}
