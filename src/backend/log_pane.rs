//! The console's log pane, the backend's side, the same for every backend: given each read
//! cell's cluster API (or why there is none) and the workload's desired object there, finds the
//! workload's pods (`fanout::pods`), opens one stream per container (`fanout::logs`, bounded
//! per stream and in requests opened at once), and sends what they read to the console as
//! [`BackendEvent::Logs`], coalesced: lines wait in one bounded queue (past it they are counted
//! as skipped, never held without bound) and leave in one event per short window. The streams
//! run on a thread of their own with its own small runtime, apart from the backend's loop and
//! the console's (the fan-out's merge borrows across awaits in a way a spawned task cannot
//! carry). Everything stops when the pane's lease ends or the console has gone. It only
//! reads, and must not decide how a line is shown.

use std::collections::BTreeMap;
use std::future::Future;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use serde_json::Value;
use tokio::sync::mpsc;

use super::fanout::cluster_api::{ApiError, ClusterApi};
use super::fanout::logs::{
    LogEvent, LogProblem, LogRequest, PodLogs, StreamLimits, log_sources, stream_logs,
};
use super::fanout::object::resource_of;
use super::fanout::pods::read_pods;
use super::fanout::targets::{Options, Target};
use crate::messages::{BackendEvent, LogItem, LogOpen};

/// Containers one pane follows at once, at most (as `flotilla logs -f` allows).
pub const MAX_FOLLOWED: usize = 200;

/// Lines waiting for the console at most; more are counted as skipped.
const QUEUED: usize = 10_000;

/// How long lines gather before they leave together.
const WINDOW: Duration = Duration::from_millis(40);

/// One read cell: its cluster, the cluster's API (or why it cannot be reached), and the
/// workload's desired object there.
pub struct PaneCell<A> {
    pub cluster: String,
    pub api: Result<A, ApiError>,
    pub desired: Value,
}

/// Streams the logs of the cells `cells` finds into the pane `open` opened, on a thread of
/// its own, until the pane's lease ends.
pub fn spawn<A, F>(cells: F, open: LogOpen, events: mpsc::UnboundedSender<BackendEvent>)
where
    A: ClusterApi + PodLogs + Send + 'static,
    F: Future<Output = Vec<PaneCell<A>>> + Send + 'static,
{
    let stream = open.stream;
    let said = events.clone();
    let started = std::thread::Builder::new()
        .name("flotilla-logs".into())
        .spawn(move || {
            let runtime = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build();
            match runtime {
                Ok(runtime) => runtime.block_on(async move {
                    let cells = cells.await;
                    stream_to_pane(cells, open, events).await;
                }),
                Err(err) => fail(
                    &events,
                    stream,
                    format!("logs: no runtime to read them: {err}"),
                ),
            }
        });
    if let Err(err) = started {
        fail(
            &said,
            stream,
            format!("logs: no thread to read them: {err}"),
        );
    }
}

fn fail(events: &mpsc::UnboundedSender<BackendEvent>, stream: u64, text: String) {
    let _ = events.send(BackendEvent::Logs {
        stream,
        items: vec![LogItem::Note {
            cluster: String::new(),
            text,
            failed: true,
        }],
        skipped: 0,
    });
}

/// Streams the logs of `cells` into the pane `open` opened, until its lease ends.
pub async fn stream_to_pane<A: ClusterApi + PodLogs>(
    cells: Vec<PaneCell<A>>,
    open: LogOpen,
    events: mpsc::UnboundedSender<BackendEvent>,
) {
    let watch = open.watch.clone();
    let events_gone = events.clone();
    tokio::select! {
        () = watch.ended() => {}
        () = events_gone.closed() => {}
        () = read(cells, open, events) => {}
    }
}

async fn read<A: ClusterApi + PodLogs>(
    cells: Vec<PaneCell<A>>,
    open: LogOpen,
    events: mpsc::UnboundedSender<BackendEvent>,
) {
    let (queue, queued) = mpsc::channel::<LogItem>(QUEUED);
    let skipped = Arc::new(AtomicUsize::new(0));
    let forward = forward(queued, skipped.clone(), open.stream, events);
    let produce = async move {
        let put = |item: LogItem| {
            if queue.try_send(item).is_err() {
                skipped.fetch_add(1, Ordering::Relaxed);
            }
        };
        let targets: Vec<Target<A>> = cells
            .into_iter()
            .map(|cell| Target {
                cluster: cell.cluster,
                api: cell.api,
                objects: vec![cell.desired],
                failed: Vec::new(),
                prune_kinds: Vec::new(),
                prune_namespaces: Default::default(),
                suspended: Vec::new(),
                refuse_unowned: Default::default(),
                take_over_unowned: Default::default(),
            })
            .collect();
        let wanted: Vec<_> = targets
            .iter()
            .flat_map(|target| target.objects.iter().map(resource_of))
            .collect();
        let workloads = read_pods(&targets, Options::default(), &|r| wanted.contains(r), "").await;
        let base = LogRequest {
            tail_lines: Some(open.tail),
            follow: !open.previous,
            previous: open.previous,
            ..LogRequest::default()
        };
        let (mut sources, problems) = log_sources(&workloads, None, &base);
        for problem in problems {
            put(note(problem));
        }
        for workload in workloads
            .iter()
            .filter(|w| w.live.is_none() && w.error.is_none())
        {
            put(LogItem::Note {
                cluster: workload.cluster.clone(),
                text: format!("{}: not on the cluster", workload.resource.display_key()),
                failed: false,
            });
        }
        if sources.len() > MAX_FOLLOWED {
            put(LogItem::Note {
                cluster: String::new(),
                text: format!(
                    "{} containers: the first {MAX_FOLLOWED} are read (narrow it with flotilla logs --cluster or -c)",
                    sources.len()
                ),
                failed: false,
            });
            sources.truncate(MAX_FOLLOWED);
        }
        if sources.is_empty() {
            put(LogItem::Note {
                cluster: String::new(),
                text: "no container to read logs from".into(),
                failed: false,
            });
            return;
        }
        let apis: BTreeMap<&str, &A> = targets
            .iter()
            .filter_map(|target| Some((target.cluster.as_str(), target.api.as_ref().ok()?)))
            .collect();
        let mut emit = |event: LogEvent| match event {
            LogEvent::Line(line) => put(LogItem::Line(line)),
            LogEvent::Problem(problem) => put(note(problem)),
        };
        stream_logs(
            &|cluster| apis.get(cluster).copied(),
            &sources,
            StreamLimits::default(),
            &mut emit,
        )
        .await;
        put(LogItem::Note {
            cluster: String::new(),
            text: "every stream has ended".into(),
            failed: false,
        });
    };
    // The queue's sender goes with `produce`: the forwarder sends what is left, then ends.
    tokio::join!(produce, forward);
}

fn note(problem: LogProblem) -> LogItem {
    LogItem::Note {
        cluster: problem.cluster,
        text: format!("{}: {}", problem.what, problem.reason),
        failed: problem.failed,
    }
}

/// Sends the queued lines on, all that are waiting in one event, at most one event a
/// [`WINDOW`].
async fn forward(
    mut queued: mpsc::Receiver<LogItem>,
    skipped: Arc<AtomicUsize>,
    stream: u64,
    events: mpsc::UnboundedSender<BackendEvent>,
) {
    while let Some(first) = queued.recv().await {
        let mut items = vec![first];
        while let Ok(item) = queued.try_recv() {
            items.push(item);
        }
        let skipped = skipped.swap(0, Ordering::Relaxed);
        let event = BackendEvent::Logs {
            stream,
            items,
            skipped,
        };
        if events.send(event).is_err() {
            return;
        }
        tokio::time::sleep(WINDOW).await;
    }
}
