//! `cargo xtask testenv up --contexts N [--latency-ms MS]`: the raw-contexts tier at fleet
//! size. The plain tier's members (real kube-apiservers) sit behind one toxiproxy server
//! (built from its Go module, cached like the other binaries) holding N proxies on distinct
//! loopback ports, each with a latency toxic (MS, or spread over 20–100 ms without the
//! flag); the kubeconfig gets N contexts `c0000`… each pointing at its proxy (TLS passes
//! through, so the members' CA and their 127.0.0.1 SAN still hold). It must only bind
//! 127.0.0.1, only write the test environment's kubeconfig (and its own run files), and only
//! stop the toxiproxy it recorded.

use std::fs;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};
use serde_json::json;

use crate::files::write_atomically;
use crate::gobuild::{self, Component};
use crate::paths;
use crate::procs;
use crate::state::{Owner, Proxies, State};
use crate::testenv::{self, Hub, Members};

const WRAPPER: &str = "toxiproxy";
const MODULE: &str = "github.com/Shopify/toxiproxy/v2";
const BINARY: &str = "toxiproxy-server";
pub const MAX_CONTEXTS: usize = 5_000;
/// Without `--latency-ms`, proxy `i` delays by a value spread over this range.
const LATENCY_RANGE_MS: (u32, u32) = (20, 100);
const START_TIMEOUT: Duration = Duration::from_secs(30);
/// File descriptors toxiproxy needs besides one per listener (two per proxied connection).
const FD_HEADROOM: u64 = 1_024;

/// `c0000` … `c0999` (four digits at least).
pub fn context_name(index: usize) -> String {
    format!("c{index:04}")
}

/// The latency of proxy `index` of `count`: `fixed`, else spread evenly over 20–100 ms.
pub fn latency_of(index: usize, count: usize, fixed: Option<u32>) -> u32 {
    fixed.unwrap_or_else(|| {
        let (low, high) = LATENCY_RANGE_MS;
        let span = u64::from(high - low);
        let step = if count > 1 {
            index as u64 * span / (count as u64 - 1)
        } else {
            0
        };
        low + step as u32
    })
}

fn version() -> Result<String> {
    gobuild::require_version(&paths::go_module_dir(WRAPPER).join("go.mod"), MODULE)
}

fn component(v: &str) -> Component {
    let bare = v.trim_start_matches('v');
    Component {
        name: BINARY,
        module: WRAPPER,
        package: "github.com/Shopify/toxiproxy/v2/cmd/server",
        ldflags: format!("-s -w -X {MODULE}.Version={bare}"),
        expect_version: format!("toxiproxy-server version {bare}"),
        version_args: &["-version"],
        version: v.to_string(),
        estimate: "about a minute",
    }
}

/// Builds toxiproxy's server into `~/.cache/flotilla/testenv/toxiproxy-<version>/` when
/// its stamp does not match; its path.
pub fn ensure_built() -> Result<PathBuf> {
    let v = version()?;
    let dir = paths::cache_dir(&format!("{WRAPPER}-{v}"))?;
    gobuild::ensure_components(&dir, &[component(&v)], gobuild::Mode::Foreground)?;
    Ok(dir.join(BINARY))
}

/// The soft limit on open files this process (and what it starts) has.
pub fn open_files_limit() -> Option<u64> {
    let text = fs::read_to_string("/proc/self/limits").ok()?;
    let line = text.lines().find(|l| l.starts_with("Max open files"))?;
    line.split_whitespace().nth(3)?.parse().ok()
}

/// How many file descriptors process `pid` has open now.
pub fn open_fds(pid: u32) -> Option<usize> {
    Some(fs::read_dir(format!("/proc/{pid}/fd")).ok()?.count())
}

fn run_dir() -> PathBuf {
    paths::run_dir().join("toxiproxy")
}

/// The kubeconfig as `testenv up` wrote it, before the contexts were added.
fn base_kubeconfig() -> PathBuf {
    run_dir().join("base.kubeconfig")
}

/// `testenv up --contexts N [--latency-ms MS]`.
pub fn up(count: usize, latency_ms: Option<u32>, owner: Owner) -> Result<Owner> {
    let needed = count as u64 + FD_HEADROOM;
    if let Some(limit) = open_files_limit()
        && limit < needed
    {
        bail!(
            "{count} proxies need about {needed} open files, but `ulimit -n` is {limit}: \
             raise it (ulimit -n {needed}) and run again"
        );
    }
    let exe = ensure_built()?;
    let owner = testenv::up(Members::AtLeast(3), Hub::Plain, owner)?;
    let _lock = testenv::lock()?;
    let started = Instant::now();
    let mut s = State::load(&paths::state_file())?
        .context("the test environment vanished while starting")?;
    let wanted_latency = latency_ms.unwrap_or(0);
    if let Some(p) = &s.proxies
        && p.count == count
        && p.latency_ms == wanted_latency
        && p.server.as_ref().is_some_and(procs::is_alive)
    {
        say!("testenv: reusing the {count} running proxies");
        print_summary(&s);
        return Ok(owner);
    }
    if let Some(old) = s.proxies.take() {
        if let Some(p) = old.server {
            procs::stop_all(&[("toxiproxy".into(), p)], Duration::from_secs(5))?;
        }
        s.save(&paths::state_file())?;
    }

    let members: Vec<u16> = s
        .clusters
        .iter()
        .filter(|c| c.name.starts_with("member-"))
        .map(|c| c.port)
        .collect();
    if members.is_empty() {
        bail!("the test environment has no members to proxy");
    }
    let ports = procs::free_ports(count + 1)?;
    let (api_port, listen) = (ports[0], &ports[1..]);
    fs::create_dir_all(run_dir())?;
    let config: Vec<serde_json::Value> = listen
        .iter()
        .enumerate()
        .map(|(i, port)| {
            json!({
                "name": context_name(i),
                "listen": format!("127.0.0.1:{port}"),
                "upstream": format!("127.0.0.1:{}", members[i % members.len()]),
                "enabled": true,
            })
        })
        .collect();
    let config_path = run_dir().join("proxies.json");
    write_atomically(&config_path, &serde_json::to_string_pretty(&config)?)?;
    s.proxies = Some(Proxies {
        count,
        latency_ms: wanted_latency,
        api_port,
        ports: listen.to_vec(),
        server: None,
    });
    s.save(&paths::state_file())?;
    let args = vec![
        "-host".to_string(),
        "127.0.0.1".to_string(),
        "-port".to_string(),
        api_port.to_string(),
        "-config".to_string(),
        config_path.display().to_string(),
    ];
    let log = paths::log_file("toxiproxy");
    let launch = procs::Launch {
        name: "toxiproxy",
        exe: &exe,
        args: &args,
        env: &[("GOMEMLIMIT", "1GiB")],
        log: &log,
        timeout: START_TIMEOUT,
        awaited: "answer on its API",
    };
    procs::start_and_wait(
        &launch,
        |rec| {
            if let Some(p) = s.proxies.as_mut() {
                p.server = Some(rec);
            }
            s.save(&paths::state_file())
        },
        || matches!(procs::http_get(api_port, "/version"), Ok((200, _))),
    )?;
    for i in 0..count {
        let latency = latency_of(i, count, latency_ms);
        let toxic = json!({
            "name": "latency",
            "type": "latency",
            "stream": "downstream",
            "toxicity": 1.0,
            "attributes": {"latency": latency, "jitter": latency / 10},
        });
        let (code, body) = procs::http_post(
            api_port,
            &format!("/proxies/{}/toxics", context_name(i)),
            &toxic.to_string(),
        )?;
        if code != 200 {
            bail!(
                "toxiproxy refused the latency toxic of {} ({code}): {}",
                context_name(i),
                body.trim()
            );
        }
    }
    write_kubeconfig(listen)?;
    say!(
        "testenv: {count} proxies with latency toxics in front of {} members ({:.1} s)",
        members.len(),
        started.elapsed().as_secs_f64()
    );
    print_summary(&s);
    Ok(owner)
}

/// The test environment's kubeconfig with a cluster and an admin context per proxy added.
fn write_kubeconfig(ports: &[u16]) -> Result<()> {
    let base_path = base_kubeconfig();
    if !base_path.exists() {
        fs::copy(paths::kubeconfig(), &base_path).context("keeping the plain kubeconfig")?;
    }
    let base = fs::read_to_string(&base_path)?;
    let ca = base
        .lines()
        .find_map(|l| l.trim().strip_prefix("certificate-authority-data: "))
        .context("the test environment's kubeconfig has no CA")?
        .to_string();
    let (clusters, rest) = base
        .split_once("users:\n")
        .context("the test environment's kubeconfig has no users section")?;
    let mut out = String::with_capacity(base.len() + ports.len() * 2_000);
    out.push_str(clusters);
    for (i, port) in ports.iter().enumerate() {
        out.push_str(&format!(
            "- name: {}\n  cluster:\n    server: https://127.0.0.1:{port}\n    certificate-authority-data: {ca}\n",
            context_name(i)
        ));
    }
    out.push_str("users:\n");
    out.push_str(rest);
    if !out.ends_with('\n') {
        out.push('\n');
    }
    for i in 0..ports.len() {
        let name = context_name(i);
        out.push_str(&format!(
            "- name: {name}\n  context:\n    cluster: {name}\n    user: testenv-admin\n"
        ));
    }
    write_atomically(&paths::kubeconfig(), &out)
}

fn print_summary(s: &State) {
    let Some(p) = &s.proxies else { return };
    let rel = paths::display(&paths::kubeconfig());
    let latency = if p.latency_ms == 0 {
        format!("{}–{} ms", LATENCY_RANGE_MS.0, LATENCY_RANGE_MS.1)
    } else {
        format!("{} ms", p.latency_ms)
    };
    say!(
        "  contexts    {} … {} through toxiproxy (API 127.0.0.1:{}), {latency} latency each",
        context_name(0),
        context_name(p.count.saturating_sub(1)),
        p.api_port
    );
    say!("  try         cargo run -- --kubeconfig {rel} --context 'c*' clusters");
}

/// `testenv status` lines of the proxies; whether they are up.
pub fn status_lines(s: &State) -> bool {
    let Some(p) = &s.proxies else { return true };
    let alive = p.server.as_ref().is_some_and(procs::is_alive);
    let up = alive && matches!(procs::http_get(p.api_port, "/version"), Ok((200, _)));
    let fds = p
        .server
        .as_ref()
        .and_then(|r| open_fds(r.pid))
        .map(|n| format!(", {n} open files"))
        .unwrap_or_default();
    say!(
        "  {:<12} {:<24} {}",
        "toxiproxy",
        format!("127.0.0.1:{}", p.api_port),
        if up {
            format!("running, {} proxies{fds}", p.count)
        } else {
            "DOWN (`cargo xtask testenv up --contexts N` restarts it)".to_string()
        }
    );
    up
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn latency_spreads_over_the_range_unless_fixed() {
        assert_eq!(latency_of(0, 1000, None), 20);
        assert_eq!(latency_of(999, 1000, None), 100);
        assert!((55..=65).contains(&latency_of(500, 1000, None)));
        assert_eq!(latency_of(7, 1000, Some(50)), 50);
        assert_eq!(latency_of(0, 1, None), 20);
    }

    #[test]
    fn context_names_sort_as_numbers() {
        assert_eq!(context_name(0), "c0000");
        assert_eq!(context_name(999), "c0999");
        assert!(context_name(99) < context_name(100));
    }
}
