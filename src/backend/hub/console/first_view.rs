//! The console's first view of a hub, and what the backend goes on with: built from the hub's
//! informer caches, started and synced here a page at a time (the main path), with the caches
//! and the kind's incremental view kept for the backend; read whole when the hub's kind watches
//! nothing or its caches keep failing to list; the hub's interpreters are put to use for health
//! before it. It must not send the console anything (the
//! backend's loop does, from the view it is handed) nor write to the hub.

use std::time::{Duration, Instant};

use tokio::sync::mpsc;

use super::view_changes::whole_view;
use crate::backend::hub::cache::{Caches, Change, IncrementalView};
use crate::backend::hub::connect::Hub;
use crate::backend::hub::error::HubError;
use crate::backend::hub::view::HubView;
use crate::backend::hub::{karmada, kubefed_delta, ocm};
use crate::model::HubKind;

/// The view a hub's backend starts from: the console's first view, and, when it was built from
/// the hub's informer caches ([`first_view`]), those caches, which the backend goes on with.
pub struct FirstView {
    pub view: HubView,
    pub(super) cached: Option<Cached>,
}

/// A first view's caches, and the incremental view it was built as with the caches' changes
/// since (taken back by the backend, [`resumable`], so the caches are not read whole again).
pub(super) struct Cached {
    pub(super) caches: Caches,
    pub(super) live: BuiltLive,
}

/// The incremental view a first view was built as, its hub kind's, with the caches' changes
/// since, each object parsed as that view reads it.
pub(super) enum BuiltLive {
    Karmada(
        karmada::delta::Live,
        mpsc::Receiver<Change<karmada::delta::Object>>,
    ),
    Ocm(ocm::delta::Live, mpsc::Receiver<Change<ocm::delta::Object>>),
    KubeFed(
        kubefed_delta::Live,
        mpsc::Receiver<Change<kubefed_delta::Object>>,
    ),
}

/// A hub kind's incremental view, as a first view keeps it ([`BuiltLive`]).
pub(super) trait KindLive: IncrementalView {
    /// The incremental view `built` holds and its changes, when it is this kind's.
    fn from_built(built: BuiltLive) -> Option<(Self, mpsc::Receiver<Change<Self::Object>>)>;

    /// `self` and its changes, as a first view keeps them.
    fn built(self, changes: mpsc::Receiver<Change<Self::Object>>) -> BuiltLive;
}

impl KindLive for karmada::delta::Live {
    fn from_built(built: BuiltLive) -> Option<(Self, mpsc::Receiver<Change<Self::Object>>)> {
        match built {
            BuiltLive::Karmada(live, changes) => Some((live, changes)),
            _ => None,
        }
    }

    fn built(self, changes: mpsc::Receiver<Change<Self::Object>>) -> BuiltLive {
        BuiltLive::Karmada(self, changes)
    }
}

impl KindLive for ocm::delta::Live {
    fn from_built(built: BuiltLive) -> Option<(Self, mpsc::Receiver<Change<Self::Object>>)> {
        match built {
            BuiltLive::Ocm(live, changes) => Some((live, changes)),
            _ => None,
        }
    }

    fn built(self, changes: mpsc::Receiver<Change<Self::Object>>) -> BuiltLive {
        BuiltLive::Ocm(self, changes)
    }
}

impl KindLive for kubefed_delta::Live {
    fn from_built(built: BuiltLive) -> Option<(Self, mpsc::Receiver<Change<Self::Object>>)> {
        match built {
            BuiltLive::KubeFed(live, changes) => Some((live, changes)),
            _ => None,
        }
    }

    fn built(self, changes: mpsc::Receiver<Change<Self::Object>>) -> BuiltLive {
        BuiltLive::KubeFed(self, changes)
    }
}

impl FirstView {
    /// A view read whole (`Hub::read`): the backend starts its caches after it.
    pub fn read(view: HubView) -> FirstView {
        FirstView { view, cached: None }
    }

    /// What the informer caches behind it hold: objects and bytes ([`Caches::footprint`]);
    /// `None` for a view read whole.
    pub fn footprint(&self) -> Option<(usize, usize)> {
        self.cached.as_ref().map(|cached| cached.caches.footprint())
    }
}

/// The incremental view a first view was built as, to go on with — only while the console shows
/// its rows and columns as they are. A Karmada or KubeFed console shows the rows of the fleet
/// it edits, which may be others or in another order; a row the incremental view added would then
/// have another index than the console gives it, and its cells and health would go to
/// another row. Without it the caches are read again in the console's rows and columns.
pub(super) fn resumable<L: KindLive>(live: L, shown: &HubView) -> Option<L> {
    Some(live).filter(|live| live.view().same_layout(shown))
}

/// The console's first view of a hub, built from its informer caches: they are started and
/// synced here (each kind listed a page at a time), so no full read of every Work at once
/// comes before them, and the backend goes on with the same caches. A hub whose kind watches
/// nothing, or whose caches keep failing to list, is read whole.
pub async fn first_view(hub: &Hub) -> Result<FirstView, HubError> {
    // The members' objects the console reads are judged by the interpreters the hub runs.
    crate::engine::fleet::interpreted::use_hub_for_health(&hub.interpreters().await?, None);
    let kinds = hub.watched_kinds().await;
    if kinds.is_empty() {
        return Ok(FirstView::read(hub.read().await?));
    }
    match hub.kind {
        HubKind::Karmada => cached_view::<karmada::delta::Live>(hub, kinds).await,
        HubKind::OpenClusterManagement => cached_view::<ocm::delta::Live>(hub, kinds).await,
        HubKind::KubeFed => cached_view::<kubefed_delta::Live>(hub, kinds).await,
    }
}

/// [`first_view`] from caches of `kinds`, their objects parsed as `L` reads them.
async fn cached_view<L: KindLive>(
    hub: &Hub,
    kinds: Vec<kube::discovery::ApiResource>,
) -> Result<FirstView, HubError> {
    let (caches, changes) = Caches::start(
        &hub.client,
        kinds,
        |kind| hub.list_page_size(kind),
        hub.timeouts.read,
        L::parse,
    );
    let mut stalled = Stalled::default();
    loop {
        tokio::select! {
            () = caches.ready() => break,
            () = tokio::time::sleep(Duration::from_secs(1)) => {}
        }
        if stalled.after(caches.failing(), caches.listed(), Instant::now()) {
            drop(changes);
            return Ok(FirstView::read(hub.read().await?));
        }
    }
    let kind = hub.kind;
    let kubeconfig = hub.kubeconfig.clone();
    let stores = caches.clone();
    let built =
        tokio::task::spawn_blocking(move || whole_view::<L>(kind, &stores, &kubeconfig)).await;
    match built {
        Ok(Ok((view, live))) => Ok(FirstView {
            view,
            cached: Some(Cached {
                caches,
                live: live.built(changes),
            }),
        }),
        Ok(Err(reason)) => Err(hub.failed(reason)),
        Err(err) => Err(hub.failed(err.to_string())),
    }
}

/// How long the caches may keep failing before their first lists, without listing a single
/// object more, before the first view is read whole instead (which then says what is wrong with
/// the hub). Caches that are still listing are waited for: a whole read of a big hub is one
/// response of every object, which may never complete.
const CACHES_FAILING_FOR: Duration = Duration::from_secs(15);

/// Whether caches that are still listing have stalled: failing, and not one object more
/// listed, for [`CACHES_FAILING_FOR`].
#[derive(Default)]
struct Stalled {
    since: Option<Instant>,
    listed: u64,
}

impl Stalled {
    /// Takes in how the caches stand at `now`; true once they have stalled.
    fn after(&mut self, failing: bool, listed: u64, now: Instant) -> bool {
        let progressed = std::mem::replace(&mut self.listed, listed) != listed;
        if !failing || progressed {
            self.since = None;
            return false;
        }
        let since = *self.since.get_or_insert(now);
        now.duration_since(since) >= CACHES_FAILING_FOR
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn caches_that_fail_while_still_listing_are_waited_for() {
        let start = Instant::now();
        let at = |seconds| start + Duration::from_secs(seconds);
        let mut stalled = Stalled::default();
        // A watcher fails now and then while the big list goes on page by page.
        for second in 0..60 {
            assert!(!stalled.after(true, 500 * (second + 1), at(second)));
        }
        // The list stops getting anywhere: the caches have stalled 15 s later, not before.
        assert!(!stalled.after(true, 30_000, at(60)));
        assert!(!stalled.after(true, 30_000, at(74)));
        assert!(stalled.after(true, 30_000, at(75)));
        // A watcher that recovers starts the count again.
        assert!(!stalled.after(false, 30_000, at(76)));
        assert!(!stalled.after(true, 30_000, at(77)));
        assert!(!stalled.after(true, 30_000, at(91)));
        assert!(stalled.after(true, 30_000, at(92)));
    }
}
