//! The `:` command palette: parsing what was typed into a [`PaletteCommand`] and offering fuzzy
//! completions of commands, clusters, kinds, resources, statuses and label keys, kept in the
//! open palette's state by [`refresh`] (from `update`) for the view to draw. It reads the state
//! to complete and must change nothing but the open palette's completions.

use std::collections::BTreeSet;

use fuzzy_matcher::FuzzyMatcher;
use fuzzy_matcher::skim::SkimMatcherV2;

use super::state::pods::PodsFilter;
use super::state::{Mode, SortKey, State};
use crate::engine::health::pods::PodTrouble;
use crate::model::{HealthKind, StatusKind};

/// A command the palette can run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PaletteCommand {
    /// Filter the clusters pane (fuzzy, glob, `-l` selectors).
    Cluster(String),
    /// Filter the resources pane to a kind (`deploy` finds Deployment).
    Kind(String),
    /// Filter the resources pane.
    Resource(String),
    /// Keep rows with a cell in this status; `None` clears it.
    Status(Option<StatusKind>),
    /// Keep rows with a cell of this live health; `None` clears it.
    Health(Option<HealthKind>),
    /// Group clusters by a label; `None` ungroups.
    Group(Option<String>),
    Sort(SortKey),
    /// Clear every filter.
    Clear,
    Help,
    Quit,
    /// Open the drift view.
    Drift,
    /// Read every placed workload's pods and keep rows with a pod in this trouble (any
    /// trouble by default) or, from `:images`, running other images than the fleet's; `None`
    /// stops narrowing.
    Pods(Option<PodsFilter>),
}

/// The palette's verbs with what they take, for completion and help.
pub const VERBS: [(&str, &str); 13] = [
    (
        "cluster",
        "filter clusters: name, glob (eu-*) or -l key=value",
    ),
    ("kind", "show one kind of resource (deploy, cm, svc …)"),
    ("resource", "filter resources by name"),
    (
        "status",
        "rows with a cell in this status (drifted, failed …; none clears)",
    ),
    (
        "health",
        "rows with a cell of this live health (degraded, progressing …; none clears)",
    ),
    (
        "group",
        "group clusters by a label (region, provider …; none ungroups)",
    ),
    (
        "sort",
        "sort the focused pane (name, worst, health, latency, kind, fleet)",
    ),
    (
        "pods",
        "read every workload's pods: rows with a pod in trouble (crashloopbackoff, oomkilled …; none clears)",
    ),
    (
        "images",
        "read every workload's pods: rows running other images than the fleet's (none clears)",
    ),
    ("clear", "clear every filter"),
    ("help", "show the key map"),
    (
        "drift",
        "every drifted field, grouped, with revert / adopt / ignore",
    ),
    ("quit", "quit flotilla"),
];

/// Parses a palette line; errors say what would have worked.
pub fn parse(line: &str) -> Result<PaletteCommand, String> {
    let line = line.trim();
    let (verb, argument) = match line.split_once(char::is_whitespace) {
        Some((verb, rest)) => (verb, rest.trim()),
        None => (line, ""),
    };
    // k9s habits: `:ctx NAME` picks clusters, `:deploy` (any kind or its short name) shows
    // that kind.
    if matches!(verb, "ctx" | "context" | "contexts") {
        return Ok(PaletteCommand::Cluster(argument.to_string()));
    }
    let verb = match resolve_verb(verb) {
        Ok(verb) => verb,
        Err(err) if argument.is_empty() => {
            return builtin_kind(verb).map(PaletteCommand::Kind).ok_or(err);
        }
        Err(err) => return Err(err),
    };
    let needs = |what: &str| format!(":{verb} needs {what}");
    match verb {
        "cluster" => Ok(PaletteCommand::Cluster(argument.to_string())),
        "kind" if argument.is_empty() => Err(needs("a kind, e.g. :kind deploy")),
        "kind" => Ok(PaletteCommand::Kind(argument.to_string())),
        "resource" => Ok(PaletteCommand::Resource(argument.to_string())),
        "status" if argument.is_empty() || argument == "none" => Ok(PaletteCommand::Status(None)),
        "status" => StatusKind::parse(argument)
            .map(|kind| PaletteCommand::Status(Some(kind)))
            .ok_or_else(|| {
                format!(
                    "unknown status {argument:?}; one of {}",
                    StatusKind::ALL.map(StatusKind::as_str).join(", ")
                )
            }),
        "health" if argument.is_empty() || argument == "none" => Ok(PaletteCommand::Health(None)),
        "health" => HealthKind::parse(argument)
            .map(|kind| PaletteCommand::Health(Some(kind)))
            .ok_or_else(|| {
                format!(
                    "unknown health {argument:?}; one of {}",
                    HealthKind::ALL.map(HealthKind::as_str).join(", ")
                )
            }),
        "group" if argument.is_empty() || argument == "none" => Ok(PaletteCommand::Group(None)),
        "group" => Ok(PaletteCommand::Group(Some(argument.to_string()))),
        "sort" => SortKey::parse(argument)
            .map(PaletteCommand::Sort)
            .ok_or_else(|| needs("name, worst, health, latency, kind or fleet")),
        "clear" => Ok(PaletteCommand::Clear),
        "help" => Ok(PaletteCommand::Help),
        "drift" => Ok(PaletteCommand::Drift),
        "pods" if argument.is_empty() || argument == "any" => {
            Ok(PaletteCommand::Pods(Some(PodsFilter::AnyTrouble)))
        }
        "pods" | "images" if argument == "none" => Ok(PaletteCommand::Pods(None)),
        "images" if argument.is_empty() => Ok(PaletteCommand::Pods(Some(PodsFilter::ImageSkew))),
        "images" => Err(format!(":images takes nothing but none, not {argument:?}")),
        "pods" => PodTrouble::parse(argument)
            .map(|trouble| PaletteCommand::Pods(Some(PodsFilter::Trouble(trouble))))
            .ok_or_else(|| {
                format!(
                    "unknown pod trouble {argument:?}; one of {}, any, none",
                    PodTrouble::ALL.map(PodTrouble::as_str).join(", ")
                )
            }),
        _ => Ok(PaletteCommand::Quit),
    }
}

/// Built-in kinds a bare `:word` may name, as k9s takes `:deploy` or `:svc`.
const BUILTIN_KINDS: [&str; 20] = [
    "Deployment",
    "StatefulSet",
    "DaemonSet",
    "ReplicaSet",
    "Job",
    "CronJob",
    "Pod",
    "Service",
    "Ingress",
    "ConfigMap",
    "Secret",
    "Namespace",
    "ServiceAccount",
    "PersistentVolumeClaim",
    "HorizontalPodAutoscaler",
    "NetworkPolicy",
    "Role",
    "RoleBinding",
    "ClusterRole",
    "ClusterRoleBinding",
];

/// What a bare word names as a kind filter, when it names a built-in kind by its name, short
/// name or plural (`deploy`, `cm`, `services` → `service`).
fn builtin_kind(word: &str) -> Option<String> {
    if word.len() < 2 {
        return None;
    }
    let named = |typed: &str| {
        BUILTIN_KINDS
            .iter()
            .any(|kind| super::state::filter::kind_matches(kind, typed))
    };
    if named(word) {
        return Some(word.to_string());
    }
    word.strip_suffix('s')
        .filter(|singular| singular.len() >= 2 && named(singular))
        .map(str::to_string)
}

/// A verb by exact name or unique prefix (`:cl` is `cluster`, `:q` is `quit`).
fn resolve_verb(word: &str) -> Result<&'static str, String> {
    if word.is_empty() {
        return Err("type a command; tab completes".into());
    }
    if let Some((verb, _)) = VERBS.iter().find(|(verb, _)| *verb == word) {
        return Ok(verb);
    }
    let matches: Vec<&str> = VERBS
        .iter()
        .map(|(verb, _)| *verb)
        .filter(|verb| verb.starts_with(word))
        .collect();
    match matches.as_slice() {
        [only] => Ok(only),
        [] => Err(format!(
            "unknown command {word:?}; commands: {}",
            VERBS.map(|(verb, _)| verb).join(", ")
        )),
        many => Err(format!("{word:?} could be {}", many.join(" or "))),
    }
}

/// Brings the open palette's completions up to date with what is typed and with what they list
/// (clusters and their health, kinds, resources, cell counts, labels), which can change while
/// the palette is open; nothing when it is closed.
pub fn refresh(state: &mut State) {
    let Mode::Palette { input, .. } = &state.mode else {
        return;
    };
    let fresh = complete(state, input);
    if let Mode::Palette { completions, .. } = &mut state.mode {
        *completions = fresh;
    }
}

/// Completions for what has been typed so far: each is the whole line it would become, with a
/// short description, best match first.
pub fn complete(state: &State, line: &str) -> Vec<(String, String)> {
    let matcher = SkimMatcherV2::default();
    let Some((verb, argument)) = line.split_once(' ') else {
        return ranked(
            &matcher,
            line,
            VERBS.iter().map(|(v, d)| (v.to_string(), d.to_string())),
        )
        .into_iter()
        .map(|(verb, description)| (format!("{verb} "), description))
        .collect();
    };
    let Ok(verb) = resolve_verb(verb) else {
        return Vec::new();
    };
    let candidates: Vec<(String, String)> = match verb {
        "cluster" => state
            .clusters
            .iter()
            .map(|row| (row.spec.name.clone(), row.status.health.to_string()))
            .collect(),
        "kind" => {
            let kinds: BTreeSet<&str> = state
                .resources
                .iter()
                .map(|row| row.target.kind.as_str())
                .collect();
            kinds
                .into_iter()
                .map(|kind| (kind.to_string(), "kind".to_string()))
                .collect()
        }
        "resource" => state
            .resources
            .iter()
            .map(|row| (row.target.name.clone(), row.target.display_key()))
            .collect(),
        "status" => StatusKind::ALL
            .into_iter()
            .map(|kind| {
                (
                    kind.as_str().to_string(),
                    format!("{} cells", state.cells.totals().get(kind)),
                )
            })
            .chain(std::iter::once(("none".to_string(), "clear".to_string())))
            .collect(),
        "health" => HealthKind::ALL
            .into_iter()
            .map(|kind| {
                (
                    kind.as_str().to_string(),
                    format!("{} cells", state.cells.health_count(kind)),
                )
            })
            .chain(std::iter::once(("none".to_string(), "clear".to_string())))
            .collect(),
        "group" => {
            let mut keys: BTreeSet<String> =
                ["region", "provider", "zone"].map(String::from).into();
            for row in &state.clusters {
                keys.extend(row.spec.labels.keys().cloned());
            }
            keys.into_iter()
                .map(|key| (key, "label".to_string()))
                .chain(std::iter::once(("none".to_string(), "ungroup".to_string())))
                .collect()
        }
        "images" => vec![("none".to_string(), "clear".to_string())],
        "pods" => PodTrouble::ALL
            .into_iter()
            .map(|trouble| {
                (
                    trouble.as_str().to_string(),
                    "pods in this trouble".to_string(),
                )
            })
            .chain([
                ("any".to_string(), "pods in any trouble".to_string()),
                ("none".to_string(), "clear".to_string()),
            ])
            .collect(),
        "sort" => ["name", "worst", "health", "latency", "kind", "fleet"]
            .map(|key| (key.to_string(), "sort key".to_string()))
            .into(),
        _ => Vec::new(),
    };
    ranked(&matcher, argument.trim(), candidates)
        .into_iter()
        .take(50)
        .map(|(value, description)| (format!("{verb} {value}"), description))
        .collect()
}

fn ranked(
    matcher: &SkimMatcherV2,
    typed: &str,
    candidates: impl IntoIterator<Item = (String, String)>,
) -> Vec<(String, String)> {
    let mut scored: Vec<(i64, String, String)> = candidates
        .into_iter()
        .filter_map(|(value, description)| {
            if typed.is_empty() {
                return Some((0, value, description));
            }
            matcher
                .fuzzy_match(&value, typed)
                .map(|score| (score, value, description))
        })
        .collect();
    scored.sort_by(|a, b| b.0.cmp(&a.0).then_with(|| a.1.cmp(&b.1)));
    scored
        .into_iter()
        .map(|(_, value, description)| (value, description))
        .collect()
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn verbs_and_prefixes_parse() {
        assert_eq!(
            parse("cluster eu-*"),
            Ok(PaletteCommand::Cluster("eu-*".into()))
        );
        assert_eq!(
            parse("clu eu-*"),
            Ok(PaletteCommand::Cluster("eu-*".into()))
        );
        assert!(parse("cl x").unwrap_err().contains("could be"));
        assert_eq!(
            parse("kind deploy"),
            Ok(PaletteCommand::Kind("deploy".into()))
        );
        assert_eq!(
            parse("status drifted"),
            Ok(PaletteCommand::Status(Some(StatusKind::Drifted)))
        );
        assert_eq!(parse("status"), Ok(PaletteCommand::Status(None)));
        assert_eq!(
            parse("health degraded"),
            Ok(PaletteCommand::Health(Some(HealthKind::Degraded)))
        );
        assert!(parse("health wobbly").unwrap_err().contains("Progressing"));
        assert_eq!(parse("deploy"), Ok(PaletteCommand::Kind("deploy".into())));
        assert_eq!(
            parse("services"),
            Ok(PaletteCommand::Kind("service".into()))
        );
        assert_eq!(
            parse("ctx prod-*"),
            Ok(PaletteCommand::Cluster("prod-*".into()))
        );
        assert!(parse("wibble").unwrap_err().contains("unknown command"));
        assert_eq!(
            parse("group region"),
            Ok(PaletteCommand::Group(Some("region".into())))
        );
        assert_eq!(
            parse("sort worst"),
            Ok(PaletteCommand::Sort(SortKey::Worst))
        );
        assert_eq!(parse("q"), Ok(PaletteCommand::Quit));
        assert_eq!(parse("clear"), Ok(PaletteCommand::Clear));
    }

    #[test]
    fn mistakes_say_what_would_work() {
        assert!(parse("launch").unwrap_err().contains("commands:"));
        assert!(parse("status sideways").unwrap_err().contains("Drifted"));
        assert!(parse("kind").unwrap_err().contains(":kind needs"));
        assert!(parse("").is_err());
    }
}
