//! What a running process costs, read from Linux's /proc for the benches that watch a child
//! (resident memory, CPU time, open descriptors and how many are sockets). It only reads.
#![allow(dead_code)]

use std::fs;

/// A `/proc/PID/status` field in kB (`VmRSS:`, `VmHWM:`), in MiB.
pub fn status_mib(pid: u32, field: &str) -> Option<f64> {
    let text = fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let kib: f64 = text
        .lines()
        .find_map(|l| l.strip_prefix(field))?
        .trim()
        .trim_end_matches("kB")
        .trim()
        .parse()
        .ok()?;
    Some(kib / 1024.0)
}

/// Open descriptors of `pid`, and how many of them are sockets.
pub fn fds(pid: u32) -> (usize, usize) {
    let Ok(entries) = fs::read_dir(format!("/proc/{pid}/fd")) else {
        return (0, 0);
    };
    let mut total = 0;
    let mut sockets = 0;
    for entry in entries.flatten() {
        total += 1;
        if fs::read_link(entry.path())
            .is_ok_and(|target| target.to_string_lossy().starts_with("socket:"))
        {
            sockets += 1;
        }
    }
    (total, sockets)
}

/// CPU seconds (user and system) the process has used.
pub fn cpu_seconds(pid: u32) -> f64 {
    let Ok(text) = fs::read_to_string(format!("/proc/{pid}/stat")) else {
        return 0.0;
    };
    // Fields after the command name (which may hold spaces): utime and stime are the 12th
    // and 13th of them, in clock ticks (100 a second on Linux).
    let after = text.rsplit(')').next().unwrap_or("");
    let fields: Vec<&str> = after.split_whitespace().collect();
    let ticks = |at: usize| {
        fields
            .get(at)
            .and_then(|v| v.parse::<f64>().ok())
            .unwrap_or(0.0)
    };
    (ticks(11) + ticks(12)) / 100.0
}
