//! KWOK plays each member's kubelet API as well as its Node: the member's kube-apiserver
//! serves `pods/log` and `pods/exec` of a pod on the KWOK Node by calling KWOK's server, and
//! the real kubectl reads the lines testenv gave the member's containers (current and
//! previous, with timestamps, tail, since and follow) and runs a command in the member's exec
//! directory. The logs and exec tests of the product build on this.

mod harness;

use std::io::Read as _;
use std::process::Stdio;
use std::time::Duration;

use harness::{TestNamespace, env, eventually, kubectl, kubectl_ok, serial};

/// A bare pod on the member's KWOK Node, Running.
fn running_pod(member: &str, ns: &str, name: &str) {
    kubectl_ok(
        member,
        &[
            "run",
            name,
            "-n",
            ns,
            "--image=busybox:1.36",
            "--restart=Never",
        ],
    );
    eventually("the pod running", Duration::from_secs(60), || {
        let phase = kubectl_ok(
            member,
            &[
                "get",
                "pod",
                name,
                "-n",
                ns,
                "-o",
                "jsonpath={.status.phase}",
            ],
        );
        (phase == "Running").then_some(())
    });
}

/// The lines of a file's CRI records, without time, stream and tag.
fn file_texts(path: &std::path::Path) -> Vec<String> {
    std::fs::read_to_string(path)
        .unwrap_or_else(|e| panic!("reading {}: {e}", path.display()))
        .lines()
        .filter_map(|l| l.splitn(4, ' ').nth(3).map(str::to_string))
        .collect()
}

#[test]
#[ignore = "needs testenv: run through cargo xtask test"]
fn kubectl_reads_logs_and_execs_through_each_members_api_server() {
    let _serial = serial();
    let members: Vec<String> = env().members.iter().take(2).cloned().collect();
    let ns = TestNamespace::on("kwok-kubelet", &members);
    for member in &members {
        running_pod(member, &ns.name, "app");
        let want = file_texts(&env().kwok_logs_file(member));
        assert!(
            want.iter().all(|l| l.starts_with(&format!("{member}: "))),
            "{member}'s lines name it: {want:?}"
        );
        let logs = kubectl_ok(member, &["logs", "app", "-n", &ns.name]);
        assert_eq!(logs.lines().collect::<Vec<_>>(), want, "{member}: logs");

        // --tail and --timestamps are the kubelet's own, read from the CRI records.
        let tail = kubectl_ok(
            member,
            &["logs", "app", "-n", &ns.name, "--tail=2", "--timestamps"],
        );
        let tail: Vec<&str> = tail.lines().collect();
        assert_eq!(tail.len(), 2, "{tail:?}");
        for (line, text) in tail.iter().zip(&want[want.len() - 2..]) {
            let (at, rest) = line.split_once(' ').expect("a timestamp");
            assert!(at.parse::<k8s_openapi::jiff::Timestamp>().is_ok(), "{line}");
            assert_eq!(rest, text);
        }

        let previous = kubectl_ok(member, &["logs", "app", "-n", &ns.name, "--previous"]);
        assert_eq!(
            previous.lines().collect::<Vec<_>>(),
            file_texts(&env().kwok_previous_logs_file(member)),
            "{member}: previous"
        );

        // A follower sees a line the member's containers print now.
        let mut follow = std::process::Command::new("kubectl")
            .args(["--kubeconfig"])
            .arg(&env().kubeconfig_path)
            .args(["--context", member, "logs", "-f", "app", "-n", &ns.name])
            .args(["--tail=0"])
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("kubectl logs -f");
        std::thread::sleep(Duration::from_secs(2));
        let fresh = format!("{member}: fresh line {}", ns.name);
        env().kwok_print(member, &fresh);
        let mut stdout = follow.stdout.take().expect("stdout");
        let reader = std::thread::spawn(move || {
            let mut seen = Vec::new();
            let mut buf = [0u8; 4096];
            while let Ok(n) = stdout.read(&mut buf) {
                if n == 0 {
                    break;
                }
                seen.extend_from_slice(&buf[..n]);
                if String::from_utf8_lossy(&seen).contains('\n') {
                    break;
                }
            }
            String::from_utf8_lossy(&seen).to_string()
        });
        eventually("the follower's line", Duration::from_secs(30), || {
            reader.is_finished().then_some(())
        });
        let _ = follow.kill();
        let _ = follow.wait();
        let seen = reader.join().expect("reader");
        assert_eq!(seen.trim_end(), fresh, "{member}: follow");

        // Exec runs in the member's exec directory and names the member.
        let out = kubectl(
            member,
            &[
                "exec",
                "app",
                "-n",
                &ns.name,
                "--",
                "/bin/sh",
                "-c",
                "echo $FLOTILLA_MEMBER; pwd; echo oops >&2; exit 3",
            ],
        );
        let stdout = String::from_utf8_lossy(&out.stdout);
        let stderr = String::from_utf8_lossy(&out.stderr);
        let dir = env().kwok_exec_dir(member);
        assert_eq!(
            stdout.lines().collect::<Vec<_>>(),
            [member.as_str(), &dir.display().to_string()],
            "{member}: exec stdout (stderr: {stderr})"
        );
        assert!(stderr.contains("oops"), "{stderr}");
        // KWOK reports a failed command as an error without its exit code, so kubectl
        // exits 1 rather than 3: failure is all a client can rely on here.
        assert!(!out.status.success(), "a failed command fails the exec");
    }
}
