//! The audit log: one JSON line per write flotilla makes, to clusters (apply, prune, repair
//! revert, the console's reverts and deletes), to a hub, or to the fleet directory (repair
//! adopt and ignore, the console's saves) and every command run in a container (`exec`, the
//! console's `x`: where and what, never its output), appended to
//! `$XDG_STATE_HOME/flotilla/audit.log` (else `~/.local/state/flotilla/audit.log`): when
//! (RFC 3339, UTC), who (`$USER`), what, on which clusters and objects, and the result per
//! cluster; a write a signal ends before it finishes is recorded as `interrupted`. It must never record a credential: entries carry names and outcomes only, and
//! messages are scrubbed of bearer tokens and `token=` values before they are written. It lives
//! with the backend because the backend is where changes go: apply rows come from the fan-out,
//! and whoever performs a write records it here. It must not perform writes itself.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};

use serde::Serialize;

use crate::backend::fanout::apply::{ApplyItem, Outcome};
use crate::safe_text;

/// The result of one audited write on one cluster.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ClusterResult {
    pub cluster: String,
    /// `ok`, `partial` or `failed`; `interrupted` when a signal ended flotilla mid-write.
    pub result: String,
    /// Objects written (applied, pruned, saved).
    pub done: usize,
    pub failed: usize,
    #[serde(skip_serializing_if = "String::is_empty")]
    pub message: String,
}

/// One line of the audit log.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Entry {
    pub time: String,
    pub user: String,
    /// `apply`, `prune`, `repair-revert`, `repair-adopt`, `repair-ignore`, …
    pub action: String,
    pub clusters: Vec<String>,
    /// `Kind/namespace/name` of every object concerned.
    pub objects: Vec<String>,
    /// JSON pointers, for repairs.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub paths: Vec<String>,
    /// Fleet files written, for adopt and ignore.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub files: Vec<String>,
    pub results: Vec<ClusterResult>,
    /// Every object the write failed on, with the cluster's answer.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub failures: Vec<ObjectFailure>,
    /// For `exec`: where the command ran and the command (never what it read or printed).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub exec: Option<ExecRun>,
}

/// A command run in a container, as the audit log records it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ExecRun {
    /// `namespace/name`.
    pub pod: String,
    pub container: String,
    /// The command's words, with bearer tokens and `token=` values scrubbed.
    pub command: Vec<String>,
}

/// One object an audited write failed on.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ObjectFailure {
    pub cluster: String,
    /// `Kind/namespace/name`.
    pub object: String,
    pub message: String,
}

/// The last write's failure on one cell: the cluster's answer, and when it came.
#[derive(Debug, Clone, PartialEq)]
pub struct LastFailure {
    pub message: String,
    pub since: Option<String>,
}

/// What the log says of each (cluster, `Kind/namespace/name`) cell whose last write failed:
/// a failure stands until a later entry writes the object on that cluster again, as the
/// console holds a failed apply's cell Failed until the next apply.
pub fn last_failures(entries: &[serde_json::Value]) -> BTreeMap<(String, String), LastFailure> {
    let text = |value: &serde_json::Value, key: &str| {
        value
            .get(key)
            .and_then(serde_json::Value::as_str)
            .unwrap_or_default()
            .to_string()
    };
    let names = |entry: &serde_json::Value, key: &str| -> std::collections::BTreeSet<String> {
        entry
            .get(key)
            .and_then(serde_json::Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(|v| v.as_str().map(str::to_string))
            .collect()
    };
    let mut failed: BTreeMap<(String, String), LastFailure> = BTreeMap::new();
    for entry in entries {
        // A later write of the object on the cluster settles an earlier failure there.
        let (clusters, objects) = (names(entry, "clusters"), names(entry, "objects"));
        failed.retain(|(cluster, object), _| {
            !(clusters.contains(cluster) && objects.contains(object))
        });
        for failure in entry
            .get("failures")
            .and_then(serde_json::Value::as_array)
            .into_iter()
            .flatten()
        {
            failed.insert(
                (text(failure, "cluster"), text(failure, "object")),
                LastFailure {
                    message: text(failure, "message"),
                    since: Some(text(entry, "time")).filter(|t| !t.is_empty()),
                },
            );
        }
    }
    failed
}

impl Entry {
    /// An entry stamped with the current time and user.
    pub fn new(action: &str) -> Entry {
        Entry {
            time: now(),
            user: user(),
            action: action.to_string(),
            clusters: Vec::new(),
            objects: Vec::new(),
            paths: Vec::new(),
            files: Vec::new(),
            results: Vec::new(),
            failures: Vec::new(),
            exec: None,
        }
    }

    /// Clusters, objects and per-cluster results from apply rows.
    pub fn from_apply(action: &str, items: &[ApplyItem]) -> Entry {
        let mut entry = Entry::new(action);
        let mut per: BTreeMap<&str, (usize, usize, String)> = BTreeMap::new();
        let mut objects = std::collections::BTreeSet::new();
        for item in items {
            objects.insert(item.resource.display_key());
            let slot = per.entry(&item.cluster).or_default();
            if matches!(item.result, Outcome::Applied | Outcome::Pruned) {
                slot.0 += 1;
            } else {
                slot.1 += 1;
                entry.failures.push(ObjectFailure {
                    cluster: item.cluster.clone(),
                    object: item.resource.display_key(),
                    message: safe_text::redact(&item.message),
                });
                if slot.2.is_empty() {
                    slot.2 = format!("{}: {}", item.resource.display_key(), item.message);
                }
            }
        }
        entry.clusters = per.keys().map(|c| c.to_string()).collect();
        entry.objects = objects.into_iter().collect();
        entry.results = per
            .into_iter()
            .map(|(cluster, (done, failed, message))| ClusterResult {
                cluster: cluster.to_string(),
                result: outcome(done, failed).into(),
                done,
                failed,
                message: safe_text::redact(&message),
            })
            .collect();
        entry
    }
}

/// Writes under way, each with the entry that describes it; what the signal handler records
/// as interrupted when the process is ended before they finish.
static IN_FLIGHT: Mutex<Vec<(u64, Entry)>> = Mutex::new(Vec::new());

/// A write under way, recorded as interrupted by [`record_interrupted`] if the process is
/// ended before it is dropped. Whoever performs the write records its real entry as usual.
#[derive(Debug)]
pub struct InFlight(u64);

/// Registers the write `entry` describes (its action, clusters and objects; its results are
/// unknown until it ends) until the returned guard is dropped.
pub fn in_flight(entry: Entry) -> InFlight {
    static NEXT: AtomicU64 = AtomicU64::new(0);
    let id = NEXT.fetch_add(1, Ordering::Relaxed);
    if let Ok(mut writes) = IN_FLIGHT.lock() {
        writes.push((id, entry));
    }
    InFlight(id)
}

impl Drop for InFlight {
    fn drop(&mut self) {
        if let Ok(mut writes) = IN_FLIGHT.lock() {
            writes.retain(|(id, _)| *id != self.0);
        }
    }
}

/// Records every write still under way as interrupted by `signal` (the process is about to
/// end): each cluster's result is `interrupted`, as what reached it is not known.
pub fn record_interrupted(signal: &str) {
    let writes = match IN_FLIGHT.lock() {
        Ok(mut writes) => std::mem::take(&mut *writes),
        Err(_) => return,
    };
    for (_, mut entry) in writes {
        entry.results = entry
            .clusters
            .iter()
            .map(|cluster| ClusterResult {
                cluster: cluster.clone(),
                result: "interrupted".into(),
                done: 0,
                failed: 0,
                message: format!(
                    "{signal} ended flotilla during the write; some objects may have been written: \
                     `flotilla plan` shows what is on the cluster"
                ),
            })
            .collect();
        record_or_warn(&entry);
    }
}

/// `ok` when nothing failed, `failed` when nothing was done, else `partial`.
pub fn outcome(done: usize, failed: usize) -> &'static str {
    match (done, failed) {
        (_, 0) => "ok",
        (0, _) => "failed",
        _ => "partial",
    }
}

fn now() -> String {
    k8s_openapi::jiff::Timestamp::now()
        .strftime("%Y-%m-%dT%H:%M:%SZ")
        .to_string()
}

fn user() -> String {
    ["USER", "LOGNAME"]
        .iter()
        .find_map(|var| std::env::var(var).ok().filter(|v| !v.is_empty()))
        .unwrap_or_else(|| "unknown".into())
}

/// `$XDG_STATE_HOME/flotilla/audit.log`, else `~/.local/state/flotilla/audit.log`.
pub fn path() -> Option<PathBuf> {
    crate::paths::audit_log()
}

/// Appends `entry` to the audit log; the error says why it could not be written.
pub fn record(entry: &Entry) -> Result<PathBuf, String> {
    let path = path().ok_or("no $XDG_STATE_HOME or $HOME to keep the audit log in")?;
    append(&path, entry)?;
    Ok(path)
}

/// Records `entry`, and on failure warns on stderr (the write it describes already happened).
pub fn record_or_warn(entry: &Entry) {
    if let Err(err) = record(entry) {
        eprintln!("warning: audit log not written: {err}");
        tracing::warn!("audit log not written: {err}");
    }
}

/// Every entry of the audit log that parses, oldest first (empty when there is no log). A
/// torn or unreadable line is skipped, and said once on stderr and in the log file.
pub fn read_entries() -> Vec<serde_json::Value> {
    let Some(path) = path() else {
        return Vec::new();
    };
    match crate::jsonl::read::<serde_json::Value>(&path, |_| true) {
        Ok(read) => {
            if read.torn > 0 {
                tracing::warn!(
                    "{}: {} torn or unreadable line(s) skipped",
                    path.display(),
                    read.torn
                );
            }
            read.lines.into_iter().map(|(_, entry)| entry).collect()
        }
        Err(err) => {
            tracing::warn!("audit log not read: {err}");
            Vec::new()
        }
    }
}

/// Appends one line to the log at `path` (0600 in a 0700 directory), on a line of its own even
/// after a torn last line.
pub fn append(path: &Path, entry: &Entry) -> Result<(), String> {
    let line = serde_json::to_string(entry).map_err(|e| e.to_string())?;
    crate::jsonl::append(path, &line)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::model::ResourceRef;

    fn item(cluster: &str, result: Outcome, message: &str) -> ApplyItem {
        ApplyItem {
            cluster: cluster.into(),
            resource: ResourceRef {
                api_version: "v1".into(),
                kind: "ConfigMap".into(),
                namespace: Some("shop".into()),
                name: "a".into(),
            },
            result,
            message: message.into(),
        }
    }

    #[test]
    fn a_refused_apply_stands_until_the_object_is_written_there_again() {
        let json = |entry: &Entry| serde_json::to_value(entry).unwrap();
        let refused = json(&Entry::from_apply(
            "apply",
            &[
                item("east", Outcome::Applied, ""),
                item(
                    "west",
                    Outcome::Error,
                    "admission webhook denied the request",
                ),
            ],
        ));
        let failed = last_failures(std::slice::from_ref(&refused));
        let key = ("west".to_string(), "ConfigMap/shop/a".to_string());
        assert_eq!(failed.len(), 1, "{failed:?}");
        assert_eq!(failed[&key].message, "admission webhook denied the request");
        assert_eq!(failed[&key].since.as_deref(), refused["time"].as_str());
        // A write elsewhere leaves it; the next write of the object on west settles it.
        let elsewhere = json(&Entry::from_apply(
            "apply",
            &[item("east", Outcome::Applied, "")],
        ));
        assert_eq!(last_failures(&[refused.clone(), elsewhere]).len(), 1);
        let again = json(&Entry::from_apply(
            "apply",
            &[item("west", Outcome::Applied, "")],
        ));
        assert!(last_failures(&[refused, again]).is_empty());
    }

    #[test]
    fn entries_are_json_lines_with_results_per_cluster_and_no_tokens() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("state/flotilla/audit.log");
        let items = [
            item("east", Outcome::Applied, ""),
            item(
                "west",
                Outcome::Error,
                "unauthorized: Authorization: Bearer abc.def.ghi rejected",
            ),
        ];
        let entry = Entry::from_apply("apply", &items);
        append(&path, &entry).unwrap();
        append(&path, &Entry::new("repair-ignore")).unwrap();
        let text = std::fs::read_to_string(&path).unwrap();
        let lines: Vec<serde_json::Value> = text
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        assert_eq!(lines.len(), 2);
        let first = &lines[0];
        assert_eq!(first["action"], "apply");
        assert_eq!(first["clusters"], serde_json::json!(["east", "west"]));
        assert_eq!(first["objects"], serde_json::json!(["ConfigMap/shop/a"]));
        assert_eq!(first["results"][0]["result"], "ok");
        assert_eq!(first["results"][1]["result"], "failed");
        assert!(!text.contains("abc.def.ghi"), "{text}");
        assert_eq!(first["failures"][0]["cluster"], "west");
        assert_eq!(first["failures"][0]["object"], "ConfigMap/shop/a");
        assert!(text.contains("Bearer [redacted]"), "{text}");
        let time = first["time"].as_str().unwrap();
        assert!(
            time.len() == 20 && time.ends_with('Z') && time.as_bytes()[10] == b'T',
            "{time}"
        );
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = std::fs::metadata(&path).unwrap().permissions().mode();
            assert_eq!(mode & 0o777, 0o600);
        }
    }

    #[test]
    fn results_hide_every_token_shape() {
        let items = [item(
            "west",
            Outcome::Error,
            "a token=xyz&b=1 and \"token\":\"s3cr3t\" via https://u:pw@proxy:3128 ok",
        )];
        let entry = Entry::from_apply("apply", &items);
        assert_eq!(
            entry.results[0].message,
            "ConfigMap/shop/a: a token=[redacted]&b=1 and \"token\":\"[redacted]\" via https://[redacted]@proxy:3128 ok"
        );
        let quiet = [item("west", Outcome::Error, "nothing here")];
        assert_eq!(
            Entry::from_apply("apply", &quiet).results[0].message,
            "ConfigMap/shop/a: nothing here"
        );
    }
}
