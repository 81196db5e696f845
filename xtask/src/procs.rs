//! Process plumbing for the test environment: spawn a server in its own process group with
//! its output in a log file (and, for the hub planes' processes, record it and wait until it
//! answers), tell whether a recorded pid is still *our* process, stop processes by pid (TERM,
//! then KILL) and verify they are gone, interrupt a child process it is handed, pick free
//! loopback ports, and the lock that serialises testenv commands. It must never signal a
//! process it did not record or is not handed as a child (it checks argv[0] against the
//! recorded executable first), and it knows nothing of the state file: callers record what it
//! starts.

use std::fs;
use std::io::{Read as _, Write as _};
use std::net::{Ipv4Addr, SocketAddr, TcpListener, TcpStream};
use std::os::unix::process::CommandExt as _;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::{Mutex, PoisonError};
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};

/// A process testenv started: its pid and the executable it was started from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProcRec {
    pub pid: u32,
    pub exe: String,
}

impl ProcRec {
    /// The record of `pid`, started from `exe` (kept as text: it is compared with argv[0]).
    pub fn new(pid: u32, exe: &Path) -> Self {
        Self {
            pid,
            exe: exe.display().to_string(),
        }
    }
}

/// Servers this xtask process started. They outlive it (the kernel hands them to init when
/// it exits), but while it runs they are its children: kept here so it can tell an early
/// exit and reap the ones it stops itself (`cargo xtask test` starts and stops in one run).
static CHILDREN: Mutex<Vec<Child>> = Mutex::new(Vec::new());

/// Starts `exe args` in its own process group (so a Ctrl-C aimed at the caller's terminal
/// does not reach it and `kill -- -pid` reaches all of it), output appended to `log`.
/// Returns its pid.
pub fn spawn(exe: &Path, args: &[String], env: &[(&str, &str)], log: &Path) -> Result<u32> {
    if let Some(dir) = log.parent() {
        fs::create_dir_all(dir)?;
    }
    let mut file = fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(log)
        .with_context(|| format!("opening {}", log.display()))?;
    writeln!(
        file,
        "\n===== testenv starting: {} {}",
        exe.display(),
        args.join(" ")
    )?;
    let mut cmd = Command::new(exe);
    cmd.args(args)
        .stdin(Stdio::null())
        .stdout(file.try_clone()?)
        .stderr(file)
        .process_group(0);
    for (k, v) in env {
        cmd.env(k, v);
    }
    let child = cmd
        .spawn()
        .with_context(|| format!("starting {}", exe.display()))?;
    let pid = child.id();
    CHILDREN
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .push(child);
    Ok(pid)
}

/// A server to start and wait for (a hub plane's component or agent).
pub struct Launch<'a> {
    /// How messages name it (`karmada-webhook`, `member-1-ocm-agent`).
    pub name: &'a str,
    pub exe: &'a Path,
    pub args: &'a [String],
    pub env: &'a [(&'a str, &'a str)],
    pub log: &'a Path,
    /// How long it gets, once spawned, to answer.
    pub timeout: Duration,
    /// What the timeout error says it did not do: `answer`, `listen on 127.0.0.1:8443`.
    pub awaited: &'a str,
}

/// How often `start_and_wait` asks whether the server answers.
const START_POLL: Duration = Duration::from_millis(250);

/// Spawns `launch`, hands its record to `record` (which puts it in the state file before the
/// wait, so `down` stops it even when the wait fails), then asks `answers` every 250 ms until
/// it does (`testenv: <name> up (… s)`), the process exits (the error quotes the last 25 lines
/// of its log) or `launch.timeout` passes.
pub fn start_and_wait(
    launch: &Launch<'_>,
    record: impl FnOnce(ProcRec) -> Result<()>,
    mut answers: impl FnMut() -> bool,
) -> Result<()> {
    let pid = spawn(launch.exe, launch.args, launch.env, launch.log)?;
    record(ProcRec::new(pid, launch.exe))?;
    let t = Instant::now();
    loop {
        if let Some(status) = exited(pid)? {
            bail!(
                "{} exited during startup ({status}); last lines of {}:\n{}",
                launch.name,
                launch.log.display(),
                tail(launch.log, 25)
            );
        }
        if answers() {
            say!(
                "testenv: {} up ({:.1} s)",
                launch.name,
                t.elapsed().as_secs_f64()
            );
            return Ok(());
        }
        if t.elapsed() >= launch.timeout {
            bail!(
                "{} did not {} within {:?}; see {}",
                launch.name,
                launch.awaited,
                launch.timeout,
                launch.log.display()
            );
        }
        std::thread::sleep(START_POLL);
    }
}

/// The exit status of a server this process started, once it has exited (`None` while it
/// runs, or when it is not this process's child).
pub fn exited(pid: u32) -> Result<Option<ExitStatus>> {
    let mut children = CHILDREN.lock().unwrap_or_else(PoisonError::into_inner);
    match children.iter_mut().find(|c| c.id() == pid) {
        Some(child) => Ok(child.try_wait()?),
        None => Ok(None),
    }
}

/// Reaps exited children of this process so they leave no zombie behind.
fn reap() {
    let mut children = CHILDREN.lock().unwrap_or_else(PoisonError::into_inner);
    children.retain_mut(|c| !matches!(c.try_wait(), Ok(Some(_))));
}

fn pid_exists(pid: u32) -> bool {
    Path::new(&format!("/proc/{pid}")).exists()
}

/// True when `rec.pid` is alive, not a zombie, and still runs `rec.exe` (guards against pid
/// reuse after a reboot or a long pause).
pub fn is_alive(rec: &ProcRec) -> bool {
    let proc_dir = PathBuf::from(format!("/proc/{}", rec.pid));
    let Ok(stat) = fs::read_to_string(proc_dir.join("stat")) else {
        return false;
    };
    // The state letter follows the parenthesised command name.
    let state = stat
        .rsplit_once(')')
        .and_then(|(_, rest)| rest.split_whitespace().next());
    if matches!(state, Some("Z" | "X") | None) {
        return false;
    }
    let Ok(cmdline) = fs::read(proc_dir.join("cmdline")) else {
        return false;
    };
    let argv0 = cmdline.split(|b| *b == 0).next().unwrap_or_default();
    argv0 == rec.exe.as_bytes()
}

fn signal(pid: u32, sig: &str) {
    // `kill -- -PID` signals the whole process group (each server leads its own group).
    let _ = Command::new("kill")
        .args(["-s", sig, "--", &format!("-{pid}")])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status();
}

/// Sends SIGINT to `child` alone (not its process group), as Ctrl-C would.
pub fn interrupt(child: &Child) {
    let _ = Command::new("kill")
        .args(["-s", "INT", &child.id().to_string()])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status();
}

/// Stops the given processes: TERM, up to `grace` to exit, then KILL; fails if any is still
/// alive afterwards. Processes already gone are fine.
pub fn stop_all(procs: &[(String, ProcRec)], grace: Duration) -> Result<()> {
    let alive: Vec<&(String, ProcRec)> = procs.iter().filter(|(_, p)| is_alive(p)).collect();
    for (_, p) in &alive {
        signal(p.pid, "TERM");
    }
    let deadline = Instant::now() + grace;
    while Instant::now() < deadline && alive.iter().any(|(_, p)| is_alive(p)) {
        std::thread::sleep(Duration::from_millis(100));
    }
    for (name, p) in &alive {
        if is_alive(p) {
            say!(
                "testenv: {name} (pid {}) ignored TERM for {grace:?}; sending KILL",
                p.pid
            );
            signal(p.pid, "KILL");
        }
    }
    let deadline = Instant::now() + Duration::from_secs(5);
    while Instant::now() < deadline && alive.iter().any(|(_, p)| is_alive(p)) {
        std::thread::sleep(Duration::from_millis(100));
    }
    let left: Vec<String> = alive
        .iter()
        .filter(|(_, p)| is_alive(p))
        .map(|(n, p)| format!("{n} (pid {})", p.pid))
        .collect();
    if !left.is_empty() {
        bail!("could not stop: {}", left.join(", "));
    }
    // Dead is not gone until reaped: ours are reaped here, orphans by init (within ~1 s);
    // wait for that so `pgrep` right after `down` shows nothing.
    let deadline = Instant::now() + Duration::from_secs(5);
    loop {
        reap();
        if !alive.iter().any(|(_, p)| pid_exists(p.pid)) || Instant::now() >= deadline {
            break;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    Ok(())
}

/// Picks `n` distinct free ports on 127.0.0.1 (bound together, then released).
pub fn free_ports(n: usize) -> Result<Vec<u16>> {
    let listeners = (0..n)
        .map(|_| TcpListener::bind((Ipv4Addr::LOCALHOST, 0)))
        .collect::<std::io::Result<Vec<_>>>()
        .context("binding 127.0.0.1:0 to find free ports")?;
    listeners
        .iter()
        .map(|l| Ok(l.local_addr()?.port()))
        .collect()
}

/// True when something accepts TCP connections on 127.0.0.1:`port`.
pub fn port_open(port: u16) -> bool {
    let addr = SocketAddr::from((Ipv4Addr::LOCALHOST, port));
    TcpStream::connect_timeout(&addr, Duration::from_millis(200)).is_ok()
}

/// A minimal plain-HTTP GET on loopback (etcd's `/health`); returns status code and body.
pub fn http_get(port: u16, path: &str) -> Result<(u16, String)> {
    http_request(port, "GET", path, None)
}

/// A minimal plain-HTTP POST of a JSON body on loopback (toxiproxy's API).
pub fn http_post(port: u16, path: &str, json: &str) -> Result<(u16, String)> {
    http_request(port, "POST", path, Some(json))
}

fn http_request(port: u16, method: &str, path: &str, json: Option<&str>) -> Result<(u16, String)> {
    let addr = SocketAddr::from((Ipv4Addr::LOCALHOST, port));
    let mut stream = TcpStream::connect_timeout(&addr, Duration::from_secs(1))?;
    stream.set_read_timeout(Some(Duration::from_secs(2)))?;
    write!(
        stream,
        "{method} {path} HTTP/1.0\r\nHost: 127.0.0.1:{port}\r\nConnection: close\r\n"
    )?;
    match json {
        Some(body) => write!(
            stream,
            "Content-Type: application/json\r\nContent-Length: {}\r\n\r\n{body}",
            body.len()
        )?,
        None => write!(stream, "\r\n")?,
    }
    let mut text = String::new();
    stream.read_to_string(&mut text)?;
    let code = text
        .split_whitespace()
        .nth(1)
        .and_then(|c| c.parse().ok())
        .context("no HTTP status line")?;
    let body = text
        .split_once("\r\n\r\n")
        .map(|(_, b)| b.to_string())
        .unwrap_or_default();
    Ok((code, body))
}

/// The last `n` lines of a log file, for error messages.
pub fn tail(path: &Path, n: usize) -> String {
    let text = fs::read_to_string(path).unwrap_or_default();
    let lines: Vec<&str> = text.lines().collect();
    lines[lines.len().saturating_sub(n)..].join("\n")
}

/// Serialises testenv commands (`up`, `down`, `stop`, `start`, builds) across processes.
/// Released on drop; a lock left by a dead process is taken over.
pub struct Lock {
    path: PathBuf,
}

impl Lock {
    pub fn acquire(path: &Path, wait: Duration) -> Result<Self> {
        if let Some(dir) = path.parent() {
            fs::create_dir_all(dir)?;
        }
        let deadline = Instant::now() + wait;
        let mut told = false;
        loop {
            match fs::OpenOptions::new()
                .write(true)
                .create_new(true)
                .open(path)
            {
                Ok(mut f) => {
                    writeln!(f, "{}", std::process::id())?;
                    return Ok(Self {
                        path: path.to_path_buf(),
                    });
                }
                Err(err) if err.kind() == std::io::ErrorKind::AlreadyExists => {
                    let holder = fs::read_to_string(path)
                        .ok()
                        .and_then(|t| t.trim().parse::<u32>().ok());
                    let holder_alive = holder.is_some_and(|pid| {
                        fs::read(format!("/proc/{pid}/cmdline"))
                            .is_ok_and(|c| String::from_utf8_lossy(&c).contains("xtask"))
                    });
                    if !holder_alive {
                        // Stale (its holder died, or it is half-written): take it over.
                        let _ = fs::remove_file(path);
                        continue;
                    }
                    if Instant::now() >= deadline {
                        bail!(
                            "another testenv command (pid {}) holds {}; try again when it ends",
                            holder.unwrap_or_default(),
                            path.display()
                        );
                    }
                    if !told {
                        say!(
                            "testenv: waiting for another testenv command (pid {}) to finish",
                            holder.unwrap_or_default()
                        );
                        told = true;
                    }
                    std::thread::sleep(Duration::from_millis(200));
                }
                Err(err) => {
                    return Err(err).with_context(|| format!("creating {}", path.display()));
                }
            }
        }
    }
}

impl Drop for Lock {
    fn drop(&mut self) {
        let _ = fs::remove_file(&self.path);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn free_ports_are_distinct() {
        let ports = free_ports(5).expect("ports");
        let mut sorted = ports.clone();
        sorted.sort_unstable();
        sorted.dedup();
        assert_eq!(sorted.len(), 5);
    }

    #[test]
    fn own_process_is_alive_and_wrong_exe_is_not() {
        let exe = std::env::current_exe().expect("exe");
        let me = ProcRec {
            pid: std::process::id(),
            exe: String::from_utf8_lossy(
                fs::read("/proc/self/cmdline")
                    .expect("cmdline")
                    .split(|b| *b == 0)
                    .next()
                    .expect("argv0"),
            )
            .to_string(),
        };
        assert!(is_alive(&me), "{me:?} {exe:?}");
        let other = ProcRec {
            exe: "/nonexistent".into(),
            ..me
        };
        assert!(!is_alive(&other));
    }

    /// A log file in a fresh directory of `tag` (`spawn` creates the directory).
    fn log_in(tag: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("xtask-start-{tag}-{}", std::process::id()));
        let _ = fs::remove_dir_all(&dir);
        dir.join("server.log")
    }

    /// `/bin/sh args`, logging to `log`.
    fn launch<'a>(log: &'a Path, args: &'a [String], timeout: Duration) -> Launch<'a> {
        Launch {
            name: "test-server",
            exe: Path::new("/bin/sh"),
            args,
            env: &[("GOMEMLIMIT", "1MiB")],
            log,
            timeout,
            awaited: "answer",
        }
    }

    #[test]
    fn start_and_wait_records_then_returns_once_it_answers() {
        let log = log_in("up");
        let args = vec!["-c".to_string(), "echo $GOMEMLIMIT; sleep 1".to_string()];
        let mut recorded = Vec::new();
        let mut asked = 0;
        start_and_wait(
            &launch(&log, &args, Duration::from_secs(10)),
            |rec| {
                recorded.push(rec);
                Ok(())
            },
            || {
                asked += 1;
                asked == 2
            },
        )
        .expect("up");
        assert_eq!(asked, 2);
        assert_eq!(recorded.len(), 1);
        assert_eq!(recorded[0].exe, "/bin/sh");
        assert!(
            fs::read_to_string(&log)
                .expect("log")
                .contains("===== testenv starting: /bin/sh -c")
        );
        let _ = fs::remove_dir_all(log.parent().expect("dir"));
    }

    #[test]
    fn start_and_wait_reports_an_early_exit_with_the_log_tail() {
        let log = log_in("exit");
        let args = vec!["-c".to_string(), "echo it broke; exit 3".to_string()];
        let err = start_and_wait(
            &launch(&log, &args, Duration::from_secs(10)),
            |_| Ok(()),
            || false,
        )
        .expect_err("exits");
        let text = format!("{err:#}");
        assert!(
            text.starts_with("test-server exited during startup (exit status: 3); last lines of "),
            "{text}"
        );
        // The tail is the log's: the spawn header, then what the server wrote.
        assert!(
            text.ends_with(
                ":\n\n===== testenv starting: /bin/sh -c echo it broke; exit 3\nit broke"
            ),
            "{text}"
        );
        let _ = fs::remove_dir_all(log.parent().expect("dir"));
    }

    #[test]
    fn start_and_wait_gives_up_after_the_timeout() {
        let log = log_in("timeout");
        let args = vec!["-c".to_string(), "sleep 2".to_string()];
        let err = start_and_wait(
            &launch(&log, &args, Duration::from_millis(300)),
            |_| Ok(()),
            || false,
        )
        .expect_err("times out");
        assert_eq!(
            format!("{err:#}"),
            format!(
                "test-server did not answer within 300ms; see {}",
                log.display()
            )
        );
        let _ = fs::remove_dir_all(log.parent().expect("dir"));
    }

    #[test]
    fn start_and_wait_stops_when_the_record_cannot_be_kept() {
        let log = log_in("record");
        let args = vec!["-c".to_string(), "exit 0".to_string()];
        let mut asked = false;
        let err = start_and_wait(
            &launch(&log, &args, Duration::from_secs(10)),
            |_| anyhow::bail!("no state"),
            || {
                asked = true;
                true
            },
        )
        .expect_err("record fails");
        assert_eq!(format!("{err:#}"), "no state");
        assert!(!asked);
        let _ = fs::remove_dir_all(log.parent().expect("dir"));
    }

    #[test]
    fn lock_is_exclusive_and_released() {
        let dir = std::env::temp_dir().join(format!("xtask-lock-{}", std::process::id()));
        let path = dir.join("lock");
        let first = Lock::acquire(&path, Duration::ZERO).expect("first");
        assert!(Lock::acquire(&path, Duration::ZERO).is_err());
        drop(first);
        let again = Lock::acquire(&path, Duration::ZERO).expect("again");
        drop(again);
        let _ = fs::remove_dir_all(dir);
    }
}
