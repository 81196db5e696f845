//! The demo's answer to `pods/exec`: a small simulated shell inside a simulated container.
//! It knows what a container's shell would say about itself (its environment, host name,
//! working directory, user, a few files) and the shell's own words: `echo`, `env`,
//! `printenv`, `hostname`, `cat`, `ls`, `id`, `uname`, `date`, `true`, `false`, `exit`, and
//! `sh -c '…'` with `;`, `&&`, `||`, quotes and `$VAR`; anything else is "command not found"
//! with exit 127, as a shell says it. With stdin, `sh` alone reads commands line by line
//! (echoing and prompting on a terminal, as a remote terminal would). It must not run
//! anything on this machine, touch the local terminal or read real clusters.

use std::collections::BTreeMap;

use serde_json::Value;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

use crate::backend::fanout::cluster_api::ApiError;
use crate::backend::fanout::exec::{
    ExecExit, ExecRequest, ExecSession, container_names, is_running_ready,
};

/// What the simulated container knows about itself.
#[derive(Debug, Clone)]
pub struct Container {
    pub env: BTreeMap<String, String>,
    pub hostname: String,
    pub image: String,
}

impl Container {
    /// The container `name` of `pod` as its shell would see it.
    pub fn of(pod: &Value, name: &str, tty: bool) -> Container {
        let hostname = pod
            .pointer("/metadata/name")
            .and_then(Value::as_str)
            .unwrap_or("localhost")
            .to_string();
        let spec = pod
            .pointer("/spec/containers")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .find(|c| c.get("name").and_then(Value::as_str) == Some(name));
        let mut env: BTreeMap<String, String> = [
            (
                "PATH",
                "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
            ),
            ("HOME", "/root"),
            ("KUBERNETES_SERVICE_HOST", "10.96.0.1"),
            ("KUBERNETES_SERVICE_PORT", "443"),
            ("KUBERNETES_SERVICE_PORT_HTTPS", "443"),
            ("KUBERNETES_PORT", "tcp://10.96.0.1:443"),
            ("KUBERNETES_PORT_443_TCP", "tcp://10.96.0.1:443"),
            ("KUBERNETES_PORT_443_TCP_ADDR", "10.96.0.1"),
            ("KUBERNETES_PORT_443_TCP_PORT", "443"),
            ("KUBERNETES_PORT_443_TCP_PROTO", "tcp"),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
        env.insert("HOSTNAME".into(), hostname.clone());
        if tty {
            env.insert("TERM".into(), "xterm".into());
        }
        // The container's own literal variables (a valueFrom is resolved by the kubelet,
        // which the simulation does not have).
        for var in spec
            .and_then(|c| c.get("env"))
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            if let (Some(name), Some(value)) = (
                var.get("name").and_then(Value::as_str),
                var.get("value").and_then(Value::as_str),
            ) {
                env.insert(name.to_string(), value.to_string());
            }
        }
        Container {
            env,
            hostname,
            image: spec
                .and_then(|c| c.get("image"))
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_string(),
        }
    }
}

/// What one command line printed and its exit code.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Ran {
    pub stdout: String,
    pub stderr: String,
    pub code: i32,
    /// `exit` was run: the shell ends.
    pub exited: bool,
}

/// The shells the simulated container has.
fn is_shell(word: &str) -> bool {
    matches!(
        word,
        "sh" | "bash" | "ash" | "/bin/sh" | "/bin/bash" | "/bin/ash"
    )
}

/// Runs an exec's command (its argv, as the API server passes it) without stdin.
pub fn run_argv(container: &Container, argv: &[String]) -> Ran {
    match argv {
        [shell, flag, line, ..] if is_shell(shell) && flag == "-c" => run_line(container, line, 0),
        [shell] if is_shell(shell) => Ran::default(),
        _ => {
            let mut ran = Ran::default();
            run_words(container, argv, &mut ran);
            ran
        }
    }
}

/// Runs one shell line: commands joined by `;`, `&&` and `||`. `last` is `$?` before it.
pub fn run_line(container: &Container, line: &str, last: i32) -> Ran {
    let mut ran = Ran {
        code: last,
        ..Ran::default()
    };
    for (joiner, command) in split_commands(line) {
        let runs = match joiner {
            Joiner::Then => true,
            Joiner::And => ran.code == 0,
            Joiner::Or => ran.code != 0,
        };
        // Expanded when it runs, so `$?` is the code of the command before it.
        let words = words(container, &command, ran.code);
        if runs && !words.is_empty() {
            run_words(container, &words, &mut ran);
        }
        if ran.exited {
            break;
        }
    }
    ran
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Joiner {
    Then,
    And,
    Or,
}

/// A line's commands, each with what joins it to the one before (`;`, a newline, `&&`,
/// `||`), split outside quotes.
fn split_commands(line: &str) -> Vec<(Joiner, String)> {
    let mut commands = Vec::new();
    let mut joiner = Joiner::Then;
    let mut command = String::new();
    let mut quote: Option<char> = None;
    let mut chars = line.chars().peekable();
    while let Some(c) = chars.next() {
        match (quote, c) {
            (Some(open), c) if c == open => {
                quote = None;
                command.push(c);
            }
            (Some(_), c) => command.push(c),
            (None, '\'' | '"') => {
                quote = Some(c);
                command.push(c);
            }
            (None, '\\') => {
                command.push(c);
                command.extend(chars.next());
            }
            (None, ';' | '\n' | '&' | '|') => {
                let next = match c {
                    '&' if chars.peek() == Some(&'&') => {
                        chars.next();
                        Joiner::And
                    }
                    '|' if chars.peek() == Some(&'|') => {
                        chars.next();
                        Joiner::Or
                    }
                    _ => Joiner::Then,
                };
                commands.push((joiner, std::mem::take(&mut command)));
                joiner = next;
            }
            (None, c) => command.push(c),
        }
    }
    commands.push((joiner, command));
    commands
}

/// One command's words, split and expanded as a shell would: quotes, `$VAR`, `${VAR}`, and
/// `$?` as `last`.
fn words(container: &Container, command: &str, last: i32) -> Vec<String> {
    let mut words: Vec<String> = Vec::new();
    let mut word: Option<String> = None;
    let mut chars = command.chars().peekable();
    let expand = |chars: &mut std::iter::Peekable<std::str::Chars>, out: &mut String| {
        let braced = chars.peek() == Some(&'{');
        if braced {
            chars.next();
        }
        if chars.peek() == Some(&'?') {
            chars.next();
            out.push_str(&last.to_string());
            if braced && chars.peek() == Some(&'}') {
                chars.next();
            }
            return;
        }
        let mut name = String::new();
        while let Some(&c) = chars.peek() {
            if c.is_ascii_alphanumeric() || c == '_' {
                name.push(c);
                chars.next();
            } else {
                break;
            }
        }
        if braced && chars.peek() == Some(&'}') {
            chars.next();
        }
        if name.is_empty() && !braced {
            out.push('$');
        } else {
            out.push_str(container.env.get(&name).map_or("", String::as_str));
        }
    };
    while let Some(c) = chars.next() {
        match c {
            '\'' => {
                let w = word.get_or_insert_with(String::new);
                for c in chars.by_ref() {
                    if c == '\'' {
                        break;
                    }
                    w.push(c);
                }
            }
            '"' => {
                let mut w = word.take().unwrap_or_default();
                while let Some(c) = chars.next() {
                    match c {
                        '"' => break,
                        '$' => expand(&mut chars, &mut w),
                        '\\' => w.extend(chars.next()),
                        c => w.push(c),
                    }
                }
                word = Some(w);
            }
            '$' => {
                let mut w = word.take().unwrap_or_default();
                expand(&mut chars, &mut w);
                word = Some(w);
            }
            '\\' => word.get_or_insert_with(String::new).extend(chars.next()),
            c if c.is_whitespace() => words.extend(word.take()),
            c => word.get_or_insert_with(String::new).push(c),
        }
    }
    words.extend(word.take());
    words
}

/// The files the simulated container has, by path.
fn file(container: &Container, path: &str) -> Option<String> {
    match path {
        "/etc/hostname" => Some(format!("{}\n", container.hostname)),
        "/etc/os-release" => Some(
            "NAME=\"Alpine Linux\"\nID=alpine\nVERSION_ID=3.20.3\nPRETTY_NAME=\"Alpine Linux v3.20\"\n"
                .into(),
        ),
        "/etc/resolv.conf" => Some(
            "search svc.cluster.local cluster.local\nnameserver 10.96.0.10\noptions ndots:5\n"
                .into(),
        ),
        "/var/run/secrets/kubernetes.io/serviceaccount/namespace" => None,
        _ => None,
    }
}

/// Runs one command's words (already expanded).
fn run_words(container: &Container, words: &[String], ran: &mut Ran) {
    let Some((name, args)) = words.split_first() else {
        return;
    };
    let (mut out, mut err) = (String::new(), String::new());
    let code = match name.as_str() {
        "echo" => {
            let (newline, args) = match args.first().map(String::as_str) {
                Some("-n") => (false, &args[1..]),
                _ => (true, args),
            };
            out.push_str(&args.join(" "));
            if newline {
                out.push('\n');
            }
            0
        }
        "env" | "printenv" if args.is_empty() => {
            for (key, value) in &container.env {
                out.push_str(&format!("{key}={value}\n"));
            }
            0
        }
        "printenv" => {
            let mut code = 0;
            for key in args {
                match container.env.get(key) {
                    Some(value) => out.push_str(&format!("{value}\n")),
                    None => code = 1,
                }
            }
            code
        }
        "hostname" => {
            out.push_str(&format!("{}\n", container.hostname));
            0
        }
        "pwd" => {
            out.push_str("/\n");
            0
        }
        "whoami" => {
            out.push_str("root\n");
            0
        }
        "id" => {
            out.push_str("uid=0(root) gid=0(root) groups=0(root)\n");
            0
        }
        "uname" => {
            out.push_str(if args.iter().any(|a| a == "-a") {
                "Linux simulated 6.6.0 #1 SMP x86_64 Linux\n"
            } else {
                "Linux\n"
            });
            0
        }
        "date" => {
            let now = k8s_openapi::jiff::Timestamp::now();
            out.push_str(&format!("{}\n", now.strftime("%a %b %e %H:%M:%S UTC %Y")));
            0
        }
        "ls" => {
            out.push_str("bin\ndev\netc\nhome\nlib\nproc\nroot\nrun\nsys\ntmp\nusr\nvar\n");
            0
        }
        "cat" => {
            let mut code = 0;
            for path in args {
                match file(container, path) {
                    Some(text) => out.push_str(&text),
                    None => {
                        err.push_str(&format!(
                            "cat: can't open '{path}': No such file or directory\n"
                        ));
                        code = 1;
                    }
                }
            }
            code
        }
        "true" | ":" => 0,
        "false" => 1,
        "exit" => {
            ran.exited = true;
            args.first()
                .and_then(|code| code.parse::<i32>().ok())
                .unwrap_or(ran.code)
                & 0xff
        }
        shell if is_shell(shell) => match args {
            [flag, line, ..] if flag == "-c" => {
                let inner = run_line(container, line, ran.code);
                out.push_str(&inner.stdout);
                err.push_str(&inner.stderr);
                inner.code
            }
            _ => 0,
        },
        other => {
            err.push_str(&format!("sh: {other}: command not found\n"));
            127
        }
    };
    ran.stdout.push_str(&out);
    ran.stderr.push_str(&err);
    ran.code = code;
}

/// Starts `request` in `pod` as the API server would: refused when the container is not one
/// of the pod's or not running, else a session answered by the simulated shell.
pub fn start(pod: &Value, request: &ExecRequest) -> Result<ExecSession, ApiError> {
    if !container_names(pod).contains(&request.container.as_str()) {
        return Err(ApiError::Other(format!(
            "container {} is not valid for pod {}",
            request.container, request.pod
        )));
    }
    if !is_running_ready(pod) {
        return Err(ApiError::Other(format!(
            "unable to upgrade connection: container not found (\"{}\")",
            request.container
        )));
    }
    let container = Container::of(pod, &request.container, request.tty);
    let (stdin_local, mut stdin_remote) = tokio::io::duplex(4096);
    let (mut stdout_remote, stdout_local) = tokio::io::duplex(64 * 1024);
    let (mut stderr_remote, stderr_local) = tokio::io::duplex(16 * 1024);
    let (done_tx, done_rx) = tokio::sync::oneshot::channel::<i32>();
    let interactive =
        request.stdin && matches!(request.command.as_slice(), [shell] if is_shell(shell));
    let (tty, argv) = (request.tty, request.command.clone());
    tokio::spawn(async move {
        let code = if interactive {
            shell_session(
                &container,
                &mut stdin_remote,
                &mut stdout_remote,
                &mut stderr_remote,
                tty,
            )
            .await
        } else {
            let ran = run_argv(&container, &argv);
            let newline = |text: &str| {
                if tty {
                    text.replace('\n', "\r\n")
                } else {
                    text.to_string()
                }
            };
            let _ = stdout_remote
                .write_all(newline(&ran.stdout).as_bytes())
                .await;
            // With a terminal, stderr comes through stdout.
            if tty {
                let _ = stdout_remote
                    .write_all(newline(&ran.stderr).as_bytes())
                    .await;
            } else {
                let _ = stderr_remote.write_all(ran.stderr.as_bytes()).await;
            }
            ran.code
        };
        let _ = stdout_remote.shutdown().await;
        let _ = stderr_remote.shutdown().await;
        let _ = done_tx.send(code);
    });
    Ok(ExecSession {
        stdin: request
            .stdin
            .then(|| Box::new(stdin_local) as Box<dyn tokio::io::AsyncWrite + Send + Unpin>),
        stdout: Some(Box::new(stdout_local)),
        stderr: (!request.tty)
            .then(|| Box::new(stderr_local) as Box<dyn tokio::io::AsyncRead + Send + Unpin>),
        resize: request.tty.then(|| {
            // A simulated terminal takes any size.
            let (tx, mut rx) = tokio::sync::mpsc::channel(4);
            tokio::spawn(async move { while rx.recv().await.is_some() {} });
            tx
        }),
        exit: Box::pin(async move {
            match done_rx.await {
                Ok(code) => ExecExit::Code(code),
                Err(_) => ExecExit::Failed("the simulated shell ended without an answer".into()),
            }
        }),
    })
}

/// An interactive shell: a prompt, each line run, until `exit` or the end of input. On a
/// terminal it echoes what is typed, takes a carriage return for the end of a line, erases on
/// backspace, ends on ctrl-d at an empty line and drops the line on ctrl-c, as a remote
/// terminal's line discipline does.
async fn shell_session(
    container: &Container,
    stdin: &mut tokio::io::DuplexStream,
    stdout: &mut tokio::io::DuplexStream,
    stderr: &mut tokio::io::DuplexStream,
    tty: bool,
) -> i32 {
    let prompt = format!("{}:/# ", container.hostname);
    let newline = if tty { "\r\n" } else { "\n" };
    if tty {
        let _ = stdout.write_all(prompt.as_bytes()).await;
    }
    let mut line = String::new();
    let mut last = 0;
    let mut buf = [0u8; 1024];
    loop {
        let read = match stdin.read(&mut buf).await {
            Ok(0) | Err(_) => return last,
            Ok(read) => read,
        };
        for &byte in &buf[..read] {
            let mut echo = Vec::new();
            let run = match byte {
                b'\r' | b'\n' => {
                    echo.extend_from_slice(newline.as_bytes());
                    true
                }
                0x04 if tty && line.is_empty() => {
                    let _ = stdout.write_all(b"exit\r\n").await;
                    return last;
                }
                0x03 if tty => {
                    line.clear();
                    echo.extend_from_slice(format!("^C{newline}{prompt}").as_bytes());
                    false
                }
                0x7f | 0x08 if tty => {
                    if line.pop().is_some() {
                        echo.extend_from_slice(b"\x08 \x08");
                    }
                    false
                }
                byte => {
                    line.push(char::from(byte));
                    echo.push(byte);
                    false
                }
            };
            if tty {
                let _ = stdout.write_all(&echo).await;
            }
            if run {
                let ran = run_line(container, &line, last);
                line.clear();
                let fix = |text: &str| {
                    if tty {
                        text.replace('\n', "\r\n")
                    } else {
                        text.to_string()
                    }
                };
                let _ = stdout.write_all(fix(&ran.stdout).as_bytes()).await;
                if tty {
                    let _ = stdout.write_all(fix(&ran.stderr).as_bytes()).await;
                } else {
                    let _ = stderr.write_all(ran.stderr.as_bytes()).await;
                }
                last = ran.code;
                if ran.exited {
                    return last;
                }
                if tty {
                    let _ = stdout.write_all(prompt.as_bytes()).await;
                }
            }
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use serde_json::json;

    fn container() -> Container {
        let pod = json!({"metadata": {"name": "checkout-7d9c4b5f6-x2x8q"},
            "spec": {"containers": [{"name": "checkout", "image": "shop/checkout:1.4",
                "env": [{"name": "MODE", "value": "live"},
                        {"name": "TOKEN", "valueFrom": {"secretKeyRef": {"name": "t", "key": "k"}}}]}]}});
        Container::of(&pod, "checkout", false)
    }

    fn argv(words: &[&str]) -> Vec<String> {
        words.iter().map(|w| w.to_string()).collect()
    }

    #[test]
    fn a_shell_line_runs_as_a_shell_runs_it() {
        let c = container();
        let ran = run_argv(&c, &argv(&["sh", "-c", "echo hi"]));
        assert_eq!((ran.stdout.as_str(), ran.code), ("hi\n", 0));
        let ran = run_argv(
            &c,
            &argv(&["sh", "-c", "echo \"$HOSTNAME\" 'a  b'; false || echo $MODE"]),
        );
        assert_eq!(ran.stdout, "checkout-7d9c4b5f6-x2x8q a  b\nlive\n");
        let ran = run_argv(&c, &argv(&["sh", "-c", "exit 3; echo never"]));
        assert_eq!((ran.stdout.as_str(), ran.code), ("", 3));
        let ran = run_argv(&c, &argv(&["sh", "-c", "false && echo no; echo $?"]));
        assert_eq!(ran.stdout, "1\n");
    }

    #[test]
    fn env_lists_the_containers_variables_and_unknown_commands_are_not_found() {
        let c = container();
        let ran = run_argv(&c, &argv(&["env"]));
        assert!(
            ran.stdout.contains("HOSTNAME=checkout-7d9c4b5f6-x2x8q\n"),
            "{}",
            ran.stdout
        );
        assert!(ran.stdout.contains("MODE=live\n"));
        assert!(
            !ran.stdout.contains("TOKEN="),
            "a valueFrom is not resolved"
        );
        let ran = run_argv(&c, &argv(&["curl", "-s", "localhost"]));
        assert_eq!(ran.code, 127);
        assert_eq!(ran.stderr, "sh: curl: command not found\n");
        assert_eq!(run_argv(&c, &argv(&["cat", "/nope"])).code, 1);
    }

    #[tokio::test]
    async fn an_interactive_shell_reads_lines_until_exit() {
        let pod = json!({"metadata": {"name": "web-0"},
            "spec": {"containers": [{"name": "web"}]},
            "status": {"phase": "Running", "conditions": [{"type": "Ready", "status": "True"}]}});
        let request = ExecRequest {
            namespace: "shop".into(),
            pod: "web-0".into(),
            container: "web".into(),
            command: argv(&["sh"]),
            stdin: true,
            tty: false,
        };
        let mut session = start(&pod, &request).unwrap();
        let mut stdin = session.stdin.take().unwrap();
        stdin
            .write_all(b"hostname\nexit 4\necho never\n")
            .await
            .unwrap();
        let mut out = String::new();
        session
            .stdout
            .take()
            .unwrap()
            .read_to_string(&mut out)
            .await
            .unwrap();
        assert_eq!(out, "web-0\n");
        assert_eq!(session.exit.await, ExecExit::Code(4));
        let wrong = ExecRequest {
            container: "db".into(),
            ..request
        };
        assert!(start(&pod, &wrong).is_err());
    }
}
