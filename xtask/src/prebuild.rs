//! The Go builds of one `cargo xtask test` run: started one after another on a background
//! thread when the run starts, so a cold cache is built while the Rust steps compile; a tier
//! waits for the builds it needs (never starting a second of one under way) and fails with a
//! failed build's own error. It only orders builds and waits for them (`gobuild` does them);
//! it must not build what the run's steps do not need, and must leave no build running when
//! the run ends.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use anyhow::{Result, anyhow, bail};

use crate::gobuild::{self, HubBuild, Mode, Versions};
use crate::kubefed;
use crate::testproxy;

/// How long a tier waits before it says so: checking the stamps of a warm cache takes less.
const QUIET_WAIT: Duration = Duration::from_secs(1);

/// One cached set of binaries (and manifests) a tier's environment is started from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum GoBuild {
    /// kube-apiserver, kube-controller-manager, kube-scheduler, etcd and KWOK: every cluster's.
    ControlPlane,
    /// The ClusterProfile CRD the plain hub serves.
    ClusterInventory,
    /// The forward proxy the plain tier's proxy tests start in front of a member.
    TestProxy,
    Karmada,
    Ocm,
    KubeFed,
}

impl GoBuild {
    fn hub_build(self) -> Option<&'static HubBuild> {
        match self {
            GoBuild::ControlPlane | GoBuild::TestProxy => None,
            GoBuild::ClusterInventory => Some(&gobuild::CLUSTER_INVENTORY),
            GoBuild::Karmada => Some(&gobuild::KARMADA),
            GoBuild::Ocm => Some(&gobuild::OCM),
            GoBuild::KubeFed => Some(&kubefed::BUILD),
        }
    }

    /// How messages name it.
    pub fn name(self) -> &'static str {
        match (self, self.hub_build()) {
            (GoBuild::TestProxy, _) => "the test proxy",
            (_, None) => "kube-apiserver, etcd and KWOK",
            (_, Some(build)) => build.name,
        }
    }

    /// Makes sure it is cached: stamps checked, what is missing built.
    fn ensure(self, mode: Mode<'_>) -> Result<()> {
        match (self, self.hub_build()) {
            (GoBuild::TestProxy, _) => testproxy::ensure_built(mode).map(drop),
            (_, None) => gobuild::ensure_built_as(&Versions::from_wrappers()?, mode).map(drop),
            (_, Some(build)) => build.ensure_built_as(&build.version()?, mode).map(drop),
        }
    }
}

#[derive(Debug)]
enum Status {
    Queued,
    Building,
    Ready(Duration),
    /// The error as `cargo xtask` prints it (`{:#}`), for whichever tier needs the build.
    Failed(String),
}

struct Shared {
    status: Mutex<HashMap<GoBuild, Status>>,
    changed: Condvar,
    stop: AtomicBool,
}

impl Shared {
    fn status(&self) -> MutexGuard<'_, HashMap<GoBuild, Status>> {
        self.status.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn set(&self, build: GoBuild, status: Status) {
        self.status().insert(build, status);
        self.changed.notify_all();
    }
}

/// Marks what the background thread leaves unfinished as failed, also when it panics, so no
/// tier waits for ever.
struct FailUnfinished<'a>(&'a Shared);

impl Drop for FailUnfinished<'_> {
    fn drop(&mut self) {
        for status in self.0.status().values_mut() {
            if matches!(status, Status::Queued | Status::Building) {
                *status = Status::Failed("the background Go builds stopped early".to_string());
            }
        }
        self.0.changed.notify_all();
    }
}

/// The run's background builds; dropping it stops the one under way and waits for that.
pub struct Prebuild {
    order: Vec<GoBuild>,
    shared: Arc<Shared>,
    thread: Option<JoinHandle<()>>,
}

impl Prebuild {
    /// Starts `builds`, in their order, with `gobuild`.
    pub fn start(builds: &[GoBuild]) -> Self {
        Self::start_with(builds, GoBuild::ensure)
    }

    fn start_with(
        builds: &[GoBuild],
        build: impl Fn(GoBuild, Mode<'_>) -> Result<()> + Send + 'static,
    ) -> Self {
        let shared = Arc::new(Shared {
            status: Mutex::new(builds.iter().map(|b| (*b, Status::Queued)).collect()),
            changed: Condvar::new(),
            stop: AtomicBool::new(false),
        });
        let order = builds.to_vec();
        let thread = (!builds.is_empty()).then(|| {
            let shared = Arc::clone(&shared);
            let order = order.clone();
            std::thread::spawn(move || {
                let _guard = FailUnfinished(&shared);
                for each in order {
                    if shared.stop.load(Ordering::Relaxed) {
                        break;
                    }
                    shared.set(each, Status::Building);
                    let started = Instant::now();
                    let result = build(each, Mode::Background { stop: &shared.stop });
                    shared.set(
                        each,
                        match result {
                            Ok(()) => Status::Ready(started.elapsed()),
                            Err(err) => Status::Failed(format!("{err:#}")),
                        },
                    );
                }
            })
        });
        Self {
            order,
            shared,
            thread,
        }
    }

    /// Waits until every one of `needs` is built; the first that failed is the error.
    pub fn wait_for(&self, needs: &[GoBuild]) -> Result<()> {
        let started = Instant::now();
        let mut waited = false;
        let mut status = self.shared.status();
        for need in needs {
            loop {
                match status.get(need) {
                    None => bail!("this run started no Go build of {}", need.name()),
                    Some(Status::Ready(_)) => break,
                    Some(Status::Failed(error)) => return Err(anyhow!("{error}")),
                    Some(Status::Queued | Status::Building) => {
                        if !waited && started.elapsed() >= QUIET_WAIT {
                            say!(
                                "--- waiting for the Go build of {} (under way in the background)",
                                need.name()
                            );
                            waited = true;
                        }
                        status = self
                            .shared
                            .changed
                            .wait_timeout(status, QUIET_WAIT)
                            .map_or_else(|poisoned| poisoned.into_inner().0, |(guard, _)| guard);
                    }
                }
            }
        }
        if waited {
            say!(
                "--- the Go builds this step needs are ready (waited {:.1} s)",
                started.elapsed().as_secs_f64()
            );
        }
        Ok(())
    }

    /// How long each finished build took, in the order they ran (for the run's summary).
    pub fn took(&self) -> Vec<(GoBuild, Duration)> {
        let status = self.shared.status();
        self.order
            .iter()
            .filter_map(|b| match status.get(b) {
                Some(Status::Ready(took)) => Some((*b, *took)),
                _ => None,
            })
            .collect()
    }
}

impl Drop for Prebuild {
    fn drop(&mut self) {
        self.shared.stop.store(true, Ordering::Relaxed);
        if let Some((build, _)) = self
            .shared
            .status()
            .iter()
            .find(|(_, s)| matches!(s, Status::Building))
        {
            say!("--- stopping the background Go build of {}", build.name());
        }
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::mpsc;

    /// The builds a fake has run, in order.
    type Runs = Arc<Mutex<Vec<GoBuild>>>;

    /// Builds that count their runs; `gate` lets a build finish (or fail, for `fail`).
    fn counting(
        fail: Option<GoBuild>,
    ) -> (
        Runs,
        mpsc::Sender<()>,
        impl Fn(GoBuild, Mode<'_>) -> Result<()> + Send + 'static,
    ) {
        let runs = Arc::new(Mutex::new(Vec::new()));
        let (gate, opened) = mpsc::channel::<()>();
        let opened = Mutex::new(opened);
        let counted = Arc::clone(&runs);
        let build = move |b: GoBuild, _mode: Mode<'_>| {
            counted.lock().expect("runs").push(b);
            opened.lock().expect("gate").recv().expect("gate open");
            if Some(b) == fail {
                bail!("{}\n(cannot run `go`: not found)", gobuild::GO_MISSING);
            }
            Ok(())
        };
        (runs, gate, build)
    }

    #[test]
    fn a_tier_waits_for_the_build_under_way_instead_of_starting_another() {
        let (runs, gate, build) = counting(None);
        let prebuild = Arc::new(Prebuild::start_with(
            &[GoBuild::ControlPlane, GoBuild::KubeFed],
            build,
        ));
        let (done, finished) = mpsc::channel();
        let waiter = {
            let prebuild = Arc::clone(&prebuild);
            std::thread::spawn(move || {
                let result = prebuild.wait_for(&[GoBuild::ControlPlane]);
                done.send(result.is_ok()).expect("send");
            })
        };
        // The control plane's build holds the gate: the tier cannot be done yet.
        assert!(finished.try_recv().is_err(), "waited for nothing");
        gate.send(()).expect("open for the control plane");
        assert!(
            finished.recv().expect("the tier ends"),
            "its build was fine"
        );
        waiter.join().expect("waiter");
        gate.send(()).expect("open for KubeFed");
        prebuild
            .wait_for(&[GoBuild::ControlPlane, GoBuild::KubeFed])
            .expect("both built");
        assert_eq!(
            *runs.lock().expect("runs"),
            [GoBuild::ControlPlane, GoBuild::KubeFed],
            "each built once, in the order given, however often waited for"
        );
        assert_eq!(
            prebuild.took().iter().map(|(b, _)| *b).collect::<Vec<_>>(),
            [GoBuild::ControlPlane, GoBuild::KubeFed]
        );
    }

    #[test]
    fn a_failed_build_is_the_error_of_the_tiers_that_need_it_and_no_other() {
        let (_runs, gate, build) = counting(Some(GoBuild::Karmada));
        let prebuild = Prebuild::start_with(
            &[
                GoBuild::ControlPlane,
                GoBuild::ClusterInventory,
                GoBuild::Karmada,
            ],
            build,
        );
        for _ in 0..3 {
            gate.send(()).expect("open");
        }
        prebuild
            .wait_for(&[GoBuild::ControlPlane, GoBuild::ClusterInventory])
            .expect("the plain tier's builds are fine");
        let error = prebuild
            .wait_for(&[GoBuild::ControlPlane, GoBuild::Karmada])
            .expect_err("Karmada's build failed");
        assert_eq!(
            format!("{error:#}"),
            format!("{}\n(cannot run `go`: not found)", gobuild::GO_MISSING),
            "the build's own message"
        );
        let error = prebuild
            .wait_for(&[GoBuild::Ocm])
            .expect_err("never started");
        assert!(error.to_string().contains("OCM"), "{error}");
    }

    #[test]
    fn ending_the_run_stops_the_build_under_way_and_starts_no_more() {
        let runs = Arc::new(Mutex::new(Vec::new()));
        let counted = Arc::clone(&runs);
        let (started, build_started) = mpsc::channel();
        let prebuild = Prebuild::start_with(
            &[GoBuild::ControlPlane, GoBuild::Karmada],
            move |b, mode| {
                counted.lock().expect("runs").push(b);
                started.send(()).expect("send");
                let Mode::Background { stop } = mode else {
                    bail!("not built in the background");
                };
                while !stop.load(Ordering::Relaxed) {
                    std::thread::sleep(Duration::from_millis(5));
                }
                bail!("stopped")
            },
        );
        build_started.recv().expect("the first build started");
        drop(prebuild);
        assert_eq!(*runs.lock().expect("runs"), [GoBuild::ControlPlane]);
    }
}
