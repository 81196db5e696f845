//! `flotilla logs` and `flotilla exec` on real members, whose API servers serve `pods/log` and
//! `pods/exec` through KWOK (see `testenv_kwok_kubelet.rs`): a Deployment placed on two
//! members, its pods run by KWOK, and every line flotilla prints for each pod is the line
//! `kubectl logs --timestamps` prints for it on that member, time and text, in the same order;
//! `--tail` is kubectl's per container; a line every container prints now reaches a follower
//! from both members; and a command flotilla runs in the workload's first ready pod answers
//! what `kubectl exec` into that pod answers, a failing one fails, and `--readonly` runs
//! nothing. The console's log pane (`L`), through its live backend, shows for each pod the
//! lines `kubectl logs --tail=200` prints, named by member, pod and container.

mod harness;

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::time::Duration;

use serde_json::Value;

use harness::{
    FleetDir, TestNamespace, apply_fleet, env, eventually, flotilla, inventory, kubectl_ok,
    output_text, prod_inventory, running_web_pods, serial, web_fleet,
};

const REPLICAS: usize = 2;

/// (cluster, pod) → "TIME TEXT" lines, from flotilla's `-o json`.
fn flotilla_lines(
    dir: &FleetDir,
    ns: &str,
    extra: &[&str],
) -> BTreeMap<(String, String), Vec<String>> {
    let resource = format!("Deployment/{ns}/web");
    let mut args = vec!["logs", resource.as_str(), "-o", "json"];
    args.extend(extra);
    let output = flotilla(dir.path(), &args);
    assert_eq!(output.status.code(), Some(0), "{}", output_text(&output));
    let mut lines: BTreeMap<(String, String), Vec<String>> = BTreeMap::new();
    for line in String::from_utf8_lossy(&output.stdout).lines() {
        let value: Value = serde_json::from_str(line).unwrap_or_else(|e| panic!("{e}: {line}"));
        let at: k8s_openapi::jiff::Timestamp = value["time"]
            .as_str()
            .unwrap_or("")
            .parse()
            .expect("a time");
        lines
            .entry((
                value["cluster"].as_str().unwrap_or("").to_string(),
                value["pod"].as_str().unwrap_or("").to_string(),
            ))
            .or_default()
            .push(format!(
                "{} {}",
                flotilla::engine::logs::fixed_time(at),
                value["text"].as_str().unwrap_or("")
            ));
    }
    lines
}

/// `kubectl logs POD --timestamps` lines on the member.
fn kubectl_lines(member: &str, ns: &str, pod: &str, extra: &[&str]) -> Vec<String> {
    let mut args = vec!["logs", pod, "-n", ns, "--timestamps"];
    args.extend(extra);
    kubectl_ok(member, &args)
        .lines()
        .map(str::to_string)
        .collect()
}

#[test]
#[ignore = "needs testenv: run through cargo xtask test"]
fn logs_agree_with_kubectl_line_for_line_on_every_member() {
    let _serial = serial();
    let members: Vec<String> = env().members.iter().take(2).cloned().collect();
    let ns = TestNamespace::on("logs", &members);
    let dir = web_fleet(&ns.name, REPLICAS, prod_inventory(&members));
    apply_fleet(dir.path());
    for member in &members {
        eventually("the pods running", Duration::from_secs(90), || {
            (running_web_pods(member, &ns.name).len() == REPLICAS).then_some(())
        });
    }

    for extra in [&[][..], &["--tail=2"][..]] {
        let ours = flotilla_lines(&dir, &ns.name, extra);
        let mut want = BTreeMap::new();
        for member in &members {
            for pod in running_web_pods(member, &ns.name) {
                want.insert(
                    (member.clone(), pod.clone()),
                    kubectl_lines(member, &ns.name, &pod, extra),
                );
            }
        }
        assert_eq!(ours, want, "flotilla logs {extra:?} against kubectl logs");
        assert!(want.values().all(|lines| !lines.is_empty()));
    }

    // Follow: a line every container prints now reaches the follower from both members.
    let fresh = format!("fresh line {}", ns.name);
    let state = tempfile::tempdir().expect("temp dir");
    let mut child = Command::new(env!("CARGO_BIN_EXE_flotilla"))
        .arg("--kubeconfig")
        .arg(&env().kubeconfig_path)
        .arg("--fleet")
        .arg(dir.path())
        .args([
            "logs",
            &format!("Deployment/{}/web", ns.name),
            "-f",
            "--tail=0",
        ])
        .env("XDG_STATE_HOME", state.path())
        .env("XDG_CONFIG_HOME", state.path())
        .env("NO_COLOR", "1")
        .env_remove("KUBECONFIG")
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("spawn");
    let out = child.stdout.take().expect("stdout");
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(out).lines().map_while(Result::ok) {
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    // Printed once the streams are open; printed again until seen, as opening takes a moment.
    let want = members.len() * REPLICAS;
    let mut seen: Vec<String> = Vec::new();
    eventually(
        "the fresh line from every pod",
        Duration::from_secs(60),
        || {
            for member in &members {
                env().kwok_print(member, &fresh);
            }
            while let Ok(line) = rx.recv_timeout(Duration::from_secs(2)) {
                seen.push(line);
            }
            let pods: std::collections::BTreeSet<(String, String)> = seen
                .iter()
                .filter(|l| l.ends_with(&format!("web {fresh}")))
                .filter_map(|l| {
                    let mut words = l.split(' ');
                    Some((words.next()?.to_string(), words.next()?.to_string()))
                })
                .collect();
            (pods.len() == want).then_some(())
        },
    );
    let _ = child.kill();
    let _ = child.wait();
    assert!(
        seen.iter()
            .all(|l| members.iter().any(|m| l.starts_with(&format!("{m} web-")))),
        "{seen:?}"
    );
}

#[test]
#[ignore = "needs testenv: run through cargo xtask test"]
fn exec_answers_as_kubectl_exec_into_the_workloads_first_ready_pod() {
    let _serial = serial();
    let members: Vec<String> = env().members.iter().take(2).cloned().collect();
    let ns = TestNamespace::on("exec", &members);
    let dir = web_fleet(&ns.name, REPLICAS, prod_inventory(&members));
    apply_fleet(dir.path());
    let resource = format!("Deployment/{}/web", ns.name);
    let script = "echo $FLOTILLA_MEMBER; pwd; echo to-stderr >&2";
    for member in &members {
        eventually("the pods running", Duration::from_secs(90), || {
            (running_web_pods(member, &ns.name).len() == REPLICAS).then_some(())
        });
        let ours = flotilla(
            dir.path(),
            &[
                "exec",
                &resource,
                "--cluster",
                member,
                "--",
                "/bin/sh",
                "-c",
                script,
            ],
        );
        assert_eq!(ours.status.code(), Some(0), "{}", output_text(&ours));
        // The first Running, ready pod by name, as flotilla says on stderr.
        let pods = running_web_pods(member, &ns.name);
        let pod = &pods[0];
        let stderr = String::from_utf8_lossy(&ours.stderr);
        assert!(
            stderr.contains(pod.as_str()),
            "names the pod it chose: {stderr}"
        );
        assert!(stderr.contains("to-stderr"), "{stderr}");
        let theirs = harness::kubectl(
            member,
            &["exec", pod, "-n", &ns.name, "--", "/bin/sh", "-c", script],
        );
        assert!(theirs.status.success(), "{theirs:?}");
        assert_eq!(
            String::from_utf8_lossy(&ours.stdout),
            String::from_utf8_lossy(&theirs.stdout),
            "{member}: flotilla exec against kubectl exec"
        );
        assert!(String::from_utf8_lossy(&ours.stdout).starts_with(member.as_str()));

        // KWOK passes no exit code back (see testenv_kwok_kubelet.rs): failing is what holds.
        let failing = flotilla(
            dir.path(),
            &[
                "exec",
                &resource,
                "--cluster",
                member,
                "--",
                "/bin/sh",
                "-c",
                "exit 3",
            ],
        );
        assert_ne!(failing.status.code(), Some(0), "{}", output_text(&failing));
    }

    let refused = flotilla(
        dir.path(),
        &[
            "--readonly",
            "exec",
            &resource,
            "--cluster",
            &members[0],
            "--",
            "/bin/sh",
            "-c",
            "echo ran",
        ],
    );
    assert_eq!(refused.status.code(), Some(2), "{}", output_text(&refused));
    assert!(refused.stdout.is_empty(), "{}", output_text(&refused));

    // A context whose user may read the pods but not exec into them: the API server's refusal
    // in its own words, as kubectl prints it, and nothing run.
    let member = &members[1];
    let context = format!("{member}-readonly");
    let readonly = web_fleet(&ns.name, REPLICAS, inventory(&[("west", &context, "prod")]));
    let forbidden = flotilla(
        readonly.path(),
        &[
            "exec",
            &resource,
            "--cluster",
            "west",
            "--",
            "/bin/sh",
            "-c",
            "echo ran",
        ],
    );
    assert_ne!(
        forbidden.status.code(),
        Some(0),
        "{}",
        output_text(&forbidden)
    );
    assert!(forbidden.stdout.is_empty(), "{}", output_text(&forbidden));
    let pods = running_web_pods(member, &ns.name);
    let theirs = harness::kubectl(
        &context,
        &[
            "exec", &pods[0], "-n", &ns.name, "--", "/bin/sh", "-c", "echo ran",
        ],
    );
    assert!(
        !theirs.status.success(),
        "kubectl is refused too: {theirs:?}"
    );
    let kubectl_says = String::from_utf8_lossy(&theirs.stderr);
    let why = kubectl_says
        .split_once("(Forbidden): ")
        .map_or(kubectl_says.trim(), |(_, why)| why.trim());
    assert!(
        String::from_utf8_lossy(&forbidden.stderr).contains(why),
        "the server's reason ({why}) in: {}",
        output_text(&forbidden)
    );
}

#[test]
#[ignore = "needs testenv: run through cargo xtask test"]
fn the_log_pane_shows_what_kubectl_logs_shows_on_every_member() {
    let _serial = serial();
    let members: Vec<String> = env().members.iter().take(2).cloned().collect();
    let ns = TestNamespace::on("logpane", &members);
    let dir = web_fleet(&ns.name, REPLICAS, prod_inventory(&members));
    apply_fleet(dir.path());
    for member in &members {
        eventually("the pods running", Duration::from_secs(90), || {
            (running_web_pods(member, &ns.name).len() == REPLICAS).then_some(())
        });
    }
    // What the pane must show of each pod: kubectl's lines, as `flotilla logs` names them.
    let tail = format!("--tail={}", flotilla::app::logs::TAIL);
    let mut want: BTreeMap<(String, String), Vec<String>> = BTreeMap::new();
    for member in &members {
        for pod in running_web_pods(member, &ns.name) {
            let lines = kubectl_ok(member, &["logs", &pod, "-n", &ns.name, &tail])
                .lines()
                .map(|text| format!("{member} {pod} web {text}"))
                .collect();
            want.insert((member.clone(), pod), lines);
        }
    }
    assert!(want.values().all(|lines| !lines.is_empty()), "{want:?}");

    let live_fleet = harness::live_fleet(dir.path(), &[]);
    let fleet = live_fleet.fleet.clone();
    let row = fleet
        .resources
        .iter()
        .position(|r| r.target.kind == "Deployment")
        .expect("the Deployment's row");
    let runtime = tokio::runtime::Runtime::new().expect("runtime");
    runtime.block_on(async {
        let (events_tx, mut events) = tokio::sync::mpsc::unbounded_channel();
        let effects = flotilla::backend::kube::live::spawn(live_fleet, events_tx);
        let mut state = flotilla::app::state_for_fleet(&fleet, "test".into());
        let placed: Vec<usize> = members
            .iter()
            .filter_map(|m| fleet.cluster_index(m))
            .collect();
        let synced = harness::run_within(
            &mut state,
            &mut events,
            Duration::from_secs(60),
            "the Deployment in sync on the members",
            |s| {
                placed
                    .iter()
                    .all(|&c| s.cells.kind(row, c) == flotilla::model::StatusKind::InSync)
            },
        )
        .await;
        assert!(synced, "the watch caches hold the Deployment");
        // On the collapsed matrix, L reads the row on every cluster it is placed on.
        harness::console::put_cursor_on(&mut state, row);
        state.collapsed = true;
        for effect in harness::console::press(&mut state, "L") {
            effects.send(effect).expect("the backend takes effects");
        }
        let pane_lines = |s: &flotilla::app::State| -> Vec<String> {
            match &s.mode {
                flotilla::app::state::Mode::Logs(pane) => pane
                    .shown()
                    .map(|line| line.shown(pane.timestamps).into_owned())
                    .collect(),
                _ => Vec::new(),
            }
        };
        let total: usize = want.values().map(Vec::len).sum();
        let read = harness::run_within(
            &mut state,
            &mut events,
            Duration::from_secs(60),
            "every pod's lines in the pane",
            |s| pane_lines(s).len() >= total,
        )
        .await;
        let shown = pane_lines(&state);
        assert!(read, "{shown:#?}");
        for ((member, pod), lines) in &want {
            let prefix = format!("{member} {pod} web ");
            let ours: Vec<&String> = shown.iter().filter(|l| l.starts_with(&prefix)).collect();
            let theirs: Vec<&String> = lines.iter().collect();
            assert_eq!(
                ours, theirs,
                "{member} {pod}: the pane against kubectl logs"
            );
        }
        assert_eq!(shown.len(), total, "no note and no other line: {shown:#?}");
        // Closing the pane lets go of its streams.
        harness::console::press(&mut state, "<esc>");
        assert!(matches!(state.mode, flotilla::app::state::Mode::Normal));
    });
}
