//! Many clusters' API servers in one process, for the benches that must run the live backend's
//! own path (kube-rs clients, `/readyz` and `/version` probes, discovery, lists and watches)
//! at a rate and size no test environment on this machine could write: one plain-HTTP
//! listener on 127.0.0.1 that tells its clusters apart by the bearer token a request carries
//! (`token(i)`, one kubeconfig user per context), serves `/readyz`, `/version`, the classic
//! discovery documents (`/api`, `/apis`, `/apis/GROUP/VERSION`; the aggregated form is refused,
//! so clients walk the groups) and, per cluster and kind, a list and a chunked watch of the
//! objects it was given, with bookmarks while a watch is quiet. The bench changes an object with
//! [`ApiServers::modify`]: the change gets the next resourceVersion and goes to every open
//! watch of that cluster and kind at once. It keeps the last events of each kind, so a watch
//! that starts from an older resourceVersion gets what it missed. It is no API server: no
//! writes, no selectors, no paging (every list is one page), no authorization; it must not be
//! used to judge whether flotilla is right, only to feed it.

#![allow(dead_code)]

use std::collections::VecDeque;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::net::TcpListener;
use tokio::net::tcp::OwnedWriteHalf;
use tokio::sync::mpsc;

/// Events kept per cluster and kind for watches that start behind.
const HISTORY: usize = 256;
/// How long a watch stays quiet before it is sent a bookmark (kube-rs ends a watch whose
/// connection reads nothing for a minute).
const BOOKMARK_EVERY: Duration = Duration::from_secs(10);

/// The bearer token of cluster `index`.
pub fn token(index: usize) -> String {
    format!("cluster-{index}")
}

/// An API kind the servers serve, from the objects' `apiVersion` and `kind`.
#[derive(Debug, Clone, PartialEq)]
struct Kind {
    group: String,
    version: String,
    kind: String,
    plural: String,
}

impl Kind {
    fn of(object: &Value) -> Kind {
        let api_version = object["apiVersion"].as_str().unwrap_or("v1");
        let (group, version) = api_version.rsplit_once('/').unwrap_or(("", api_version));
        let kind = object["kind"].as_str().unwrap_or_default().to_string();
        Kind {
            group: group.to_string(),
            version: version.to_string(),
            plural: format!("{}s", kind.to_ascii_lowercase()),
            kind,
        }
    }

    fn api_version(&self) -> String {
        if self.group.is_empty() {
            self.version.clone()
        } else {
            format!("{}/{}", self.group, self.version)
        }
    }
}

/// A watch event as sent: its resourceVersion and its line.
type Line = (u64, Arc<str>);

/// One cluster's objects of one kind, with its recent events and open watches.
#[derive(Default)]
struct Collection {
    objects: Vec<Value>,
    history: VecDeque<Line>,
    watches: Vec<mpsc::UnboundedSender<Line>>,
}

struct Store {
    kinds: Vec<Kind>,
    /// Per cluster, per kind.
    clusters: Vec<Vec<Mutex<Collection>>>,
    /// Per cluster, per object as given: (kind, index in its collection).
    slots: Vec<Vec<(usize, usize)>>,
    revision: AtomicU64,
}

impl Store {
    fn next_revision(&self) -> u64 {
        self.revision.fetch_add(1, Ordering::Relaxed) + 1
    }

    fn collection(&self, cluster: usize, kind: usize) -> std::sync::MutexGuard<'_, Collection> {
        self.clusters[cluster][kind]
            .lock()
            .unwrap_or_else(|e| e.into_inner())
    }
}

/// The servers, running on a thread of their own until dropped.
pub struct ApiServers {
    port: u16,
    store: Arc<Store>,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl ApiServers {
    /// Serves `objects[i]` as cluster `i`'s, each given its first resourceVersion.
    pub fn start(objects: Vec<Vec<Value>>) -> ApiServers {
        let mut kinds: Vec<Kind> = Vec::new();
        for object in objects.iter().flatten() {
            let kind = Kind::of(object);
            if !kinds.contains(&kind) {
                kinds.push(kind);
            }
        }
        let revision = AtomicU64::new(0);
        let mut clusters = Vec::new();
        let mut slots = Vec::new();
        for cluster in objects {
            let mut collections: Vec<Collection> =
                kinds.iter().map(|_| Collection::default()).collect();
            let mut placed = Vec::new();
            for mut object in cluster {
                let kind = kinds
                    .iter()
                    .position(|k| *k == Kind::of(&object))
                    .unwrap_or_default();
                let version = revision.fetch_add(1, Ordering::Relaxed) + 1;
                object["metadata"]["resourceVersion"] = json!(version.to_string());
                placed.push((kind, collections[kind].objects.len()));
                collections[kind].objects.push(object);
            }
            clusters.push(collections.into_iter().map(Mutex::new).collect());
            slots.push(placed);
        }
        let store = Arc::new(Store {
            kinds,
            clusters,
            slots,
            revision,
        });
        let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind the API servers");
        let port = listener.local_addr().expect("the servers' address").port();
        listener
            .set_nonblocking(true)
            .expect("a non-blocking listener");
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        let serving = store.clone();
        let thread = std::thread::Builder::new()
            .name("apiservers".into())
            .spawn(move || {
                let runtime = tokio::runtime::Builder::new_current_thread()
                    .enable_all()
                    .build()
                    .expect("the servers' runtime");
                runtime.block_on(async move {
                    let listener = TcpListener::from_std(listener).expect("the servers' listener");
                    let accepting = async {
                        while let Ok((stream, _)) = listener.accept().await {
                            let _ = stream.set_nodelay(true);
                            tokio::spawn(connection(stream, serving.clone()));
                        }
                    };
                    tokio::select! {
                        _ = accepting => {}
                        _ = stopped => {}
                    }
                });
            })
            .expect("the servers' thread");
        ApiServers {
            port,
            store,
            stop: Some(stop),
            thread: Some(thread),
        }
    }

    pub fn port(&self) -> u16 {
        self.port
    }

    /// A kubeconfig whose contexts `names[i]` reach cluster `i`.
    pub fn kubeconfig(&self, names: &[String]) -> String {
        let mut text = format!(
            "apiVersion: v1\nkind: Config\nclusters:\n- name: servers\n  cluster: {{server: 'http://127.0.0.1:{}'}}\nusers:\n",
            self.port
        );
        for (index, name) in names.iter().enumerate() {
            text.push_str(&format!(
                "- name: {name}\n  user: {{token: {}}}\n",
                token(index)
            ));
        }
        text.push_str("contexts:\n");
        for name in names {
            text.push_str(&format!(
                "- name: {name}\n  context: {{cluster: servers, user: {name}}}\n"
            ));
        }
        text
    }

    /// Changes cluster `cluster`'s object `slot` (its place in the list given to `start`),
    /// gives it the next resourceVersion and sends it to that kind's watches as MODIFIED.
    pub fn modify(&self, cluster: usize, slot: usize, change: impl FnOnce(&mut Value)) {
        let Some(&(kind, index)) = self.store.slots.get(cluster).and_then(|s| s.get(slot)) else {
            return;
        };
        let mut collection = self.store.collection(cluster, kind);
        let Some(object) = collection.objects.get_mut(index) else {
            return;
        };
        change(object);
        let version = self.store.next_revision();
        object["metadata"]["resourceVersion"] = json!(version.to_string());
        let mut line = json!({"type": "MODIFIED", "object": object}).to_string();
        line.push('\n');
        let line: Line = (version, Arc::from(line));
        if collection.history.len() == HISTORY {
            collection.history.pop_front();
        }
        collection.history.push_back(line.clone());
        collection
            .watches
            .retain(|watch| watch.send(line.clone()).is_ok());
    }
}

impl Drop for ApiServers {
    fn drop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

/// One request's head, as far as the servers read it.
struct Request {
    path: String,
    query: Vec<(String, String)>,
    token: Option<String>,
    aggregated: bool,
}

impl Request {
    fn param(&self, name: &str) -> Option<&str> {
        self.query
            .iter()
            .find(|(key, _)| key == name)
            .map(|(_, value)| value.as_str())
    }
}

/// Reads one request head; `None` when the client closed the connection.
async fn read_request(reader: &mut BufReader<tokio::net::tcp::OwnedReadHalf>) -> Option<Request> {
    let mut first = String::new();
    if reader.read_line(&mut first).await.ok()? == 0 {
        return None;
    }
    let target = first.split_whitespace().nth(1)?.to_string();
    let (mut token, mut aggregated) = (None, false);
    loop {
        let mut line = String::new();
        if reader.read_line(&mut line).await.ok()? == 0 {
            return None;
        }
        let line = line.trim_end();
        if line.is_empty() {
            break;
        }
        let Some((name, value)) = line.split_once(':') else {
            continue;
        };
        let value = value.trim();
        match name.to_ascii_lowercase().as_str() {
            "authorization" => token = value.strip_prefix("Bearer ").map(str::to_string),
            "accept" => aggregated = value.contains("apidiscovery"),
            _ => {}
        }
    }
    let (path, query) = target.split_once('?').unwrap_or((&target, ""));
    let query = query
        .split('&')
        .filter_map(|pair| pair.split_once('='))
        .map(|(key, value)| (key.to_string(), value.to_string()))
        .collect();
    Some(Request {
        path: path.to_string(),
        query,
        token,
        aggregated,
    })
}

async fn respond(
    write: &mut OwnedWriteHalf,
    code: u16,
    content_type: &str,
    body: &str,
) -> std::io::Result<()> {
    let reason = match code {
        200 => "OK",
        401 => "Unauthorized",
        _ => "Not Found",
    };
    let head = format!(
        "HTTP/1.1 {code} {reason}\r\nContent-Type: {content_type}\r\nContent-Length: {}\r\n\r\n",
        body.len()
    );
    write.write_all(head.as_bytes()).await?;
    write.write_all(body.as_bytes()).await?;
    write.flush().await
}

fn status(code: u16, message: &str) -> String {
    json!({"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
           "message": message, "code": code})
    .to_string()
}

/// Serves one connection's requests in turn, until it closes or a watch takes it over.
async fn connection(stream: tokio::net::TcpStream, store: Arc<Store>) {
    let (read, mut write) = stream.into_split();
    let mut reader = BufReader::new(read);
    while let Some(request) = read_request(&mut reader).await {
        let cluster = request
            .token
            .as_deref()
            .and_then(|token| token.strip_prefix("cluster-"))
            .and_then(|index| index.parse::<usize>().ok())
            .filter(|index| *index < store.clusters.len());
        let Some(cluster) = cluster else {
            if respond(
                &mut write,
                401,
                "application/json",
                &status(401, "no such token"),
            )
            .await
            .is_err()
            {
                return;
            }
            continue;
        };
        let answered = match answer(&store, cluster, &request) {
            Answer::Json(body) => respond(&mut write, 200, "application/json", &body).await,
            Answer::Text(body) => respond(&mut write, 200, "text/plain", &body).await,
            Answer::NotFound => {
                respond(
                    &mut write,
                    404,
                    "application/json",
                    &status(404, "not found"),
                )
                .await
            }
            Answer::Watch(kind) => {
                let since = request
                    .param("resourceVersion")
                    .and_then(|v| v.parse().ok())
                    .unwrap_or(0);
                watch(&store, cluster, kind, since, write).await;
                return;
            }
        };
        if answered.is_err() {
            return;
        }
    }
}

enum Answer {
    Json(String),
    Text(String),
    NotFound,
    Watch(usize),
}

fn answer(store: &Store, cluster: usize, request: &Request) -> Answer {
    let parts: Vec<&str> = request.path.trim_matches('/').split('/').collect();
    match parts.as_slice() {
        ["readyz"] => Answer::Text("ok".into()),
        ["version"] => Answer::Json(
            json!({"major": "1", "minor": "33", "gitVersion": "v1.33.0", "gitCommit": "",
                   "gitTreeState": "clean", "buildDate": "", "goVersion": "", "compiler": "gc",
                   "platform": "linux/amd64"})
            .to_string(),
        ),
        ["api"] => Answer::Json(
            json!({"kind": "APIVersions", "versions": ["v1"], "serverAddressByClientCIDRs": []})
                .to_string(),
        ),
        ["apis"] if request.aggregated => Answer::NotFound,
        ["apis"] => {
            let mut groups: Vec<Value> = Vec::new();
            for kind in store.kinds.iter().filter(|k| !k.group.is_empty()) {
                if groups.iter().any(|g| g["name"] == kind.group.as_str()) {
                    continue;
                }
                let version = json!({"groupVersion": kind.api_version(), "version": kind.version});
                groups.push(json!({"name": kind.group, "versions": [version.clone()],
                                   "preferredVersion": version}));
            }
            Answer::Json(
                json!({"kind": "APIGroupList", "apiVersion": "v1", "groups": groups}).to_string(),
            )
        }
        ["apis", group, version] => {
            let resources: Vec<Value> = store
                .kinds
                .iter()
                .filter(|k| k.group == *group && k.version == *version)
                .map(|k| {
                    json!({"name": k.plural, "singularName": k.kind.to_ascii_lowercase(),
                           "namespaced": true, "kind": k.kind,
                           "verbs": ["get", "list", "watch"]})
                })
                .collect();
            if resources.is_empty() {
                return Answer::NotFound;
            }
            Answer::Json(
                json!({"kind": "APIResourceList", "apiVersion": "v1",
                       "groupVersion": format!("{group}/{version}"), "resources": resources})
                .to_string(),
            )
        }
        ["apis", group, version, plural] => {
            let Some(kind) = store
                .kinds
                .iter()
                .position(|k| k.group == *group && k.version == *version && k.plural == *plural)
            else {
                return Answer::NotFound;
            };
            if request.param("watch") == Some("true") {
                return Answer::Watch(kind);
            }
            let collection = store.collection(cluster, kind);
            let revision = store.revision.load(Ordering::Relaxed);
            Answer::Json(
                json!({"kind": format!("{}List", store.kinds[kind].kind),
                       "apiVersion": store.kinds[kind].api_version(),
                       "metadata": {"resourceVersion": revision.to_string()},
                       "items": collection.objects})
                .to_string(),
            )
        }
        _ => Answer::NotFound,
    }
}

async fn chunk(write: &mut OwnedWriteHalf, data: &str) -> std::io::Result<()> {
    write
        .write_all(format!("{:x}\r\n{data}\r\n", data.len()).as_bytes())
        .await?;
    write.flush().await
}

/// A watch of one cluster's objects of one kind, from resourceVersion `since`: what it missed
/// of the kept events, then each change as it is made, a bookmark when quiet; until the client
/// goes or the servers stop.
async fn watch(store: &Store, cluster: usize, kind: usize, since: u64, mut write: OwnedWriteHalf) {
    let (sender, mut changes) = mpsc::unbounded_channel::<Line>();
    {
        let mut collection = store.collection(cluster, kind);
        for line in collection.history.iter().filter(|(v, _)| *v > since) {
            let _ = sender.send(line.clone());
        }
        collection.watches.push(sender);
    }
    let head =
        "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n";
    if write.write_all(head.as_bytes()).await.is_err() {
        return;
    }
    let described = &store.kinds[kind];
    let mut last = since;
    loop {
        let sent = match tokio::time::timeout(BOOKMARK_EVERY, changes.recv()).await {
            Ok(Some((version, line))) => {
                last = last.max(version);
                chunk(&mut write, &line).await
            }
            Ok(None) => return,
            Err(_) => {
                let mut bookmark = json!({"type": "BOOKMARK", "object": {
                    "apiVersion": described.api_version(), "kind": described.kind,
                    "metadata": {"resourceVersion": last.to_string()}}})
                .to_string();
                bookmark.push('\n');
                chunk(&mut write, &bookmark).await
            }
        };
        if sent.is_err() {
            return;
        }
    }
}
