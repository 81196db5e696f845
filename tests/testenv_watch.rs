//! `flotilla watch` on real clusters, driven in a pseudo-terminal as a person would: the wall
//! fills from the members' watch caches, sends nothing but reads while every key is pressed
//! (a recording proxy in front of each member sees every request) and changes no
//! resourceVersion; a stopped member turns Unreachable and comes back when started. The
//! console's live backend, driven headless, applies through its effects and sees kubectl's
//! drift arrive through its watches. The tests take turns because one stops a member the
//! others read from.

mod harness;

use std::path::Path;
use std::sync::Mutex;
use std::time::Duration;

use flotilla::app;
use flotilla::backend::kube::live;
use flotilla::messages::{CellRef, Effect};
use flotilla::model::{Health, HealthKind, StatusKind};
use tokio::sync::mpsc;

use harness::PtyApp;
use harness::proxy::RecordingProxy;
use harness::{FleetDir, Restart, TestNamespace, apply_fleet, env, kubectl_ok, prod_inventory};

static ONE_AT_A_TIME: Mutex<()> = Mutex::new(());

/// The three members as inventory, and a ConfigMap and a Deployment placed on all of them.
fn wall_fleet(ns: &str, members: &[String]) -> FleetDir {
    let mut text = prod_inventory(members);
    text.push_str(&format!(
        r#"apiVersion: v1
kind: ConfigMap
metadata: {{name: colors, namespace: {ns}}}
data: {{color: blue}}
---
apiVersion: apps/v1
kind: Deployment
metadata: {{name: web, namespace: {ns}}}
spec:
  replicas: 2
  selector: {{matchLabels: {{app: web}}}}
  template:
    metadata: {{labels: {{app: web}}}}
    spec:
      containers: [{{name: web, image: nginx:1.27}}]
---
apiVersion: policy.karmada.io/v1alpha1
kind: PropagationPolicy
metadata: {{name: everything, namespace: {ns}}}
spec:
  resourceSelectors:
  - {{apiVersion: v1, kind: ConfigMap, name: colors}}
  - {{apiVersion: apps/v1, kind: Deployment, name: web}}
  placement:
    clusterAffinity: {{labelSelector: {{matchLabels: {{env: prod}}}}}}
"#
    ));
    FleetDir::new().fleet(text)
}

/// The wall's headline count under `label` (`Ready`, `InSync`, …), read as a person reads
/// it: the block digits below the label, or the plain number on a terminal too small for
/// them.
fn tile_value(screen: &str, label: &str) -> Option<u64> {
    let grid: Vec<Vec<char>> = screen.lines().map(|l| l.chars().collect()).collect();
    let text = |row: &[char]| row.iter().collect::<String>();
    let words = |row: &[char]| -> Vec<(usize, usize)> {
        let mut out = Vec::new();
        let mut start = None;
        for (i, c) in row.iter().chain(std::iter::once(&' ')).enumerate() {
            match (c.is_alphanumeric(), start) {
                (true, None) => start = Some(i),
                (false, Some(s)) => {
                    out.push((s, i));
                    start = None;
                }
                _ => {}
            }
        }
        out
    };
    let row = grid.iter().position(|line| {
        text(line)
            .split(|c: char| !c.is_alphanumeric())
            .any(|w| w == "InSync")
    })?;
    let labels = words(&grid[row]);
    let here = labels
        .iter()
        .position(|&(a, b)| grid[row][a..b].iter().collect::<String>() == label)?;
    let centre = |(a, b): (usize, usize)| (a + b) / 2;
    let c = centre(labels[here]);
    // The box the label is in.
    let left = (0..c)
        .rev()
        .find(|&x| grid[row].get(x) == Some(&'│'))
        .map_or(0, |bar| bar + 1);
    let right = (c..grid[row].len())
        .find(|&x| grid[row].get(x) == Some(&'│'))
        .unwrap_or(grid[row].len());
    // The neighbouring labels bound a plain number.
    let plain_left = if here > 0 { labels[here - 1].1 } else { left };
    let plain_right = labels.get(here + 1).map_or(right, |next| next.0);
    // Plain numbers: the number under the label.
    if let Some(below) = grid.get(row + 1)
        && let Some((a, b)) = words(below)
            .into_iter()
            .find(|&(a, b)| a < plain_right && b > plain_left)
        && let Ok(number) = below[a..b].iter().collect::<String>().parse()
    {
        return Some(number);
    }
    let lit = |y: usize, x: usize| grid.get(y).and_then(|r| r.get(x)) == Some(&'█');
    let body: Vec<usize> = (row + 1..grid.len())
        .take_while(|&y| !grid[y].iter().any(|&c| c == '└' || c == '─'))
        .collect();
    let inked: Vec<usize> = body
        .iter()
        .copied()
        .filter(|&y| (left..right).any(|x| lit(y, x)))
        .collect();
    let &top = inked.first()?;
    let run = inked
        .iter()
        .zip(top..)
        .take_while(|(y, expected)| *y == expected)
        .count();
    let sy = run / 5;
    if sy == 0 {
        return None;
    }
    const FONT: [[&str; 5]; 10] = [
        ["###", "#.#", "#.#", "#.#", "###"],
        [".#.", "##.", ".#.", ".#.", "###"],
        ["###", "..#", "###", "#..", "###"],
        ["###", "..#", ".##", "..#", "###"],
        ["#.#", "#.#", "###", "..#", "..#"],
        ["###", "#..", "###", "..#", "###"],
        ["###", "#..", "###", "#.#", "###"],
        ["###", "..#", ".#.", ".#.", ".#."],
        ["###", "#.#", "###", "#.#", "###"],
        ["###", "#.#", "###", "..#", "###"],
    ];
    let rows = top..top + 5 * sy;
    let ink = |x: usize| rows.clone().any(|y| lit(y, x));
    // A number is centred under its label, each digit three pixels wide with one between and
    // blank on both sides: try each scale and count of digits, the largest scale first.
    (1..=16).rev().find_map(|sx: usize| {
        (1..=6).find_map(|n: usize| {
            let span = (4 * n - 1) * sx;
            let around = c.checked_sub(span / 2)?;
            (around.saturating_sub(2)..=around + 2).find_map(|first| {
                let last = first + span - 1;
                if first <= left
                    || last + 1 >= right
                    || !ink(first)
                    || !ink(last)
                    || ink(first - 1)
                    || ink(last + 1)
                    || (1..n).any(|g| (0..sx).any(|i| ink(first + (4 * g - 1) * sx + i)))
                {
                    return None;
                }
                let mut value = 0_u64;
                for g in 0..n {
                    let pattern: Vec<String> = (0..5)
                        .map(|py| {
                            (0..3)
                                .map(|px| {
                                    let x = first + (4 * g + px) * sx + sx / 2;
                                    let y = top + py * sy + sy / 2;
                                    if lit(y, x) { '#' } else { '.' }
                                })
                                .collect()
                        })
                        .collect();
                    let digit = FONT
                        .iter()
                        .position(|rows| rows.iter().zip(&pattern).all(|(a, b)| a == b))?;
                    value = value * 10 + digit as u64;
                }
                Some(value)
            })
        })
    })
}

/// `name=resourceVersion` of the test's objects on one member.
fn resource_versions(member: &str, ns: &str) -> String {
    kubectl_ok(
        member,
        &[
            "get",
            "configmap,deployment",
            "-n",
            ns,
            "-o",
            "jsonpath={range .items[*]}{.kind}/{.metadata.name}={.metadata.resourceVersion} {end}",
        ],
    )
}

/// A kubeconfig whose member contexts point at plain-HTTP recording proxies.
fn proxy_kubeconfig(dir: &Path, proxies: &[(String, u16)]) -> std::path::PathBuf {
    let mut text = String::from("apiVersion: v1\nkind: Config\nclusters:\n");
    for (name, port) in proxies {
        text.push_str(&format!(
            "- name: {name}\n  cluster: {{server: \"http://127.0.0.1:{port}\"}}\n"
        ));
    }
    text.push_str("users:\n- name: nobody\n  user: {}\ncontexts:\n");
    for (name, _) in proxies {
        text.push_str(&format!(
            "- name: {name}\n  context: {{cluster: {name}, user: nobody}}\n"
        ));
    }
    let path = dir.join("kubeconfig");
    std::fs::write(&path, text).expect("write proxy kubeconfig");
    path
}

#[test]
#[ignore = "needs testenv: run through cargo xtask test"]
fn the_wall_only_reads_however_many_keys_are_pressed() {
    let _turn = ONE_AT_A_TIME.lock().unwrap_or_else(|p| p.into_inner());
    let members: Vec<String> = env().members.iter().take(3).cloned().collect();
    assert_eq!(members.len(), 3, "the test environment needs 3 members");
    let ns = TestNamespace::on("wall-readonly", &members);
    let dir = wall_fleet(&ns.name, &members);
    apply_fleet(dir.path());
    // The members' controllers finish the rollout first: afterwards nothing writes.
    for member in &members {
        kubectl_ok(
            member,
            &[
                "rollout",
                "status",
                "deployment/web",
                "-n",
                &ns.name,
                "--timeout=120s",
            ],
        );
    }
    let before: Vec<String> = members
        .iter()
        .map(|m| resource_versions(m, &ns.name))
        .collect();

    let runtime = tokio::runtime::Runtime::new().expect("runtime");
    let proxies: Vec<(String, RecordingProxy)> = runtime.block_on(async {
        let mut proxies = Vec::new();
        for member in &members {
            let proxy = RecordingProxy::start(env().client(member).await).await;
            proxies.push((member.clone(), proxy));
        }
        proxies
    });
    let ports: Vec<(String, u16)> = proxies.iter().map(|(m, p)| (m.clone(), p.port)).collect();
    let kubeconfig = proxy_kubeconfig(dir.path(), &ports);
    let kubeconfig = kubeconfig.to_string_lossy().to_string();
    let fleet = dir.path().to_string_lossy().to_string();
    let mut wall = PtyApp::spawn(
        &["--kubeconfig", &kubeconfig, "--fleet", &fleet, "watch"],
        200,
        50,
        &[],
    );
    wall.wait_for("3 Ready clusters and 6 InSync cells", |screen| {
        tile_value(screen, "Ready") == Some(3) && tile_value(screen, "InSync") == Some(6)
    });
    // Everything a person might try on a console, including propagate and its confirmation.
    for keys in [
        "a", "y", "\r", "d", "D", "x", ":apply\r", "/web\r", "e", "u", "?", "\t", " ", "j", "k",
        "\x1b",
    ] {
        wall.send(keys);
    }
    // Let the keys land and the caches keep watching for a while.
    std::thread::sleep(std::time::Duration::from_secs(3));
    let screen = wall.wait_for("the wall still showing the fleet", |screen| {
        screen.contains("FLOTILLA WATCH") && tile_value(screen, "InSync") == Some(6)
    });
    assert!(screen.contains("read-only"), "{screen}");
    wall.send("q");
    assert_eq!(wall.wait_exit(), 0);

    let mut watches = 0;
    for (member, proxy) in &proxies {
        let requests = proxy.requests();
        assert!(!requests.is_empty(), "{member}: the wall sent nothing");
        for request in &requests {
            assert_eq!(
                request.method, "GET",
                "{member}: the wall sent a mutating request: {request:?}"
            );
        }
        watches += requests
            .iter()
            .filter(|r| r.target.contains("watch=true"))
            .count();
    }
    assert!(
        watches >= 3,
        "statuses must come from watches; saw {watches}"
    );
    let after: Vec<String> = members
        .iter()
        .map(|m| resource_versions(m, &ns.name))
        .collect();
    assert_eq!(before, after, "resourceVersions changed while the wall ran");
    drop(proxies);
}

#[test]
#[ignore = "needs testenv: run through cargo xtask test"]
fn a_stopped_member_turns_unreachable_on_the_wall_and_recovers() {
    let _turn = ONE_AT_A_TIME.lock().unwrap_or_else(|p| p.into_inner());
    let members: Vec<String> = env().members.iter().take(3).cloned().collect();
    let stopped = members.last().expect("a member").clone();
    let ns = TestNamespace::on("wall-outage", &members);
    let dir = wall_fleet(&ns.name, &members);
    apply_fleet(dir.path());
    let kubeconfig = env().kubeconfig_path.to_string_lossy().to_string();
    let fleet = dir.path().to_string_lossy().to_string();
    let mut wall = PtyApp::spawn(
        &["--kubeconfig", &kubeconfig, "--fleet", &fleet, "watch"],
        200,
        50,
        &[],
    );
    wall.wait_for("all members Ready and in sync", |screen| {
        tile_value(screen, "Ready") == Some(3) && tile_value(screen, "InSync") == Some(6)
    });

    let restart = Restart(&stopped);
    harness::testenv_cmd_ok(&["stop", &stopped]);
    // The Unreachable count is in block digits; the heatmap's chip and the problem list say
    // which cluster it is.
    let screen = wall.wait_for("the stopped member Unreachable", |screen| {
        tile_value(screen, "Ready") == Some(2)
            && screen.contains(&format!("⊘ {stopped}"))
            && screen.contains(&format!("⊘ Unreachable  cluster {stopped}"))
    });
    assert_eq!(tile_value(&screen, "InSync"), Some(4), "{screen}");

    harness::testenv_cmd_ok(&["start", &stopped]);
    drop(restart);
    wall.wait_for("the member back and in sync", |screen| {
        tile_value(screen, "Ready") == Some(3)
            && tile_value(screen, "InSync") == Some(6)
            && screen.contains(&format!("✓ {stopped}"))
            && !screen.contains("⊘ Unreachable")
    });
    wall.send("q");
    assert_eq!(wall.wait_exit(), 0);
}

#[test]
#[ignore = "needs testenv: run through cargo xtask test"]
fn the_console_backend_applies_and_sees_drift_through_its_watches() {
    let _turn = ONE_AT_A_TIME.lock().unwrap_or_else(|p| p.into_inner());
    let members: Vec<String> = env().members.iter().take(3).cloned().collect();
    let ns = TestNamespace::on("console-live", &members);
    let dir = wall_fleet(&ns.name, &members);
    let live_fleet = harness::live_fleet(dir.path(), &[]);
    let fleet = live_fleet.fleet.clone();
    let deployment = fleet
        .resources
        .iter()
        .position(|r| r.target.kind == "Deployment")
        .expect("the Deployment row");
    let second = fleet.cluster_index(&members[1]).expect("member-2 column");

    let runtime = tokio::runtime::Runtime::new().expect("runtime");
    runtime.block_on(async {
        let (events_tx, mut events) = mpsc::unbounded_channel();
        let effects = live::spawn(live_fleet, events_tx);
        let mut state = app::state_for_fleet(&fleet, "test".into());
        harness::run_until(
            &mut state,
            &mut events,
            "every member Ready, nothing applied",
            |s| {
                s.clusters.iter().all(|c| c.status.health == Health::Ready)
                    && (0..s.resources.len()).all(|r| {
                        (0..s.clusters.len()).all(|c| {
                            s.cells.kind(r, c) == StatusKind::Pending
                                && s.cells.message(r, c) == Some("not applied yet")
                        })
                    })
            },
        )
        .await;

        let cells: Vec<CellRef> = (0..fleet.resources.len())
            .flat_map(|r| {
                (0..fleet.clusters.len()).map(move |c| CellRef {
                    resource: r as u32,
                    cluster: c as u32,
                })
            })
            .collect();
        effects
            .send(Effect::Apply { cells })
            .expect("send the apply");
        harness::run_until(&mut state, &mut events, "every cell InSync", |s| {
            s.cells.totals().get(StatusKind::InSync) == 6
        })
        .await;
        for member in &members {
            let color = kubectl_ok(
                member,
                &[
                    "get",
                    "configmap",
                    "colors",
                    "-n",
                    &ns.name,
                    "-o",
                    "jsonpath={.data.color}",
                ],
            );
            assert_eq!(color, "blue", "on {member}");
        }

        // The members' controllers roll the Deployment out: it turns Healthy everywhere, and
        // what they write (status, the revision annotation) is not drift.
        let health_of = |s: &app::state::State, cluster: usize| {
            s.cells
                .health(deployment, cluster)
                .map(|h| (h.kind, h.reason.clone()))
        };
        let columns: Vec<usize> = members
            .iter()
            .map(|m| fleet.cluster_index(m).expect("a member column"))
            .collect();
        harness::run_until(
            &mut state,
            &mut events,
            "the Deployment Healthy on every member, still in sync",
            |s| {
                columns.iter().all(|&c| {
                    health_of(s, c) == Some((HealthKind::Healthy, "2/2 available".into()))
                        && s.cells.kind(deployment, c) == StatusKind::InSync
                })
            },
        )
        .await;

        kubectl_ok(
            &members[1],
            &["scale", "deployment", "web", "-n", &ns.name, "--replicas=5"],
        );
        harness::run_until(
            &mut state,
            &mut events,
            "the scaled Deployment Drifted",
            |s| s.cells.kind(deployment, second) == StatusKind::Drifted,
        )
        .await;
        let message = state
            .cells
            .message(deployment, second)
            .unwrap_or_default()
            .to_string();
        assert!(message.contains("/spec/replicas"), "{message}");
        assert!(message.contains("kubectl"), "{message}");
        assert!(message.contains("live 5"), "{message}");
        drop(effects);
        tokio::time::sleep(Duration::from_millis(10)).await;
    });
}

/// The count reader reads the wall as drawn: the same demo state at four sizes (block
/// digits of several scales, and plain numbers at 80×24) reads the same ten counts.
#[test]
fn the_count_reader_reads_the_wall_at_every_size() {
    let screen = |size: &str| -> String {
        let path = format!(
            "{}/tests/snapshots/console_snapshots__wall_at_{size}.snap",
            env!("CARGO_MANIFEST_DIR")
        );
        let text = std::fs::read_to_string(&path).expect("the wall's snapshot");
        text.lines()
            .filter_map(|line| line.strip_prefix('"')?.strip_suffix('"'))
            .collect::<Vec<_>>()
            .join("\n")
    };
    let plain = screen("80x24");
    let labels = ["Ready", "InSync", "Drifted", "Failed", "Pending", "Degrad"];
    let counts: Vec<Option<u64>> = labels.iter().map(|l| tile_value(&plain, l)).collect();
    assert!(counts.iter().all(Option::is_some), "{counts:?}\n{plain}");
    assert!(
        counts.iter().flatten().any(|&c| c >= 10),
        "a two-digit count: {counts:?}"
    );
    for size in ["120x40", "200x60", "300x90"] {
        let digits = screen(size);
        let read: Vec<Option<u64>> = [
            "Ready", "InSync", "Drifted", "Failed", "Pending", "Degraded",
        ]
        .iter()
        .map(|l| tile_value(&digits, l))
        .collect();
        assert_eq!(read, counts, "at {size}:\n{digits}");
    }
}
