//! The object view's comparisons: one cluster's live object against the desired one, read as a
//! read-only `plan` reads it (only the fields the intent sets, so server defaults are not
//! changes), and the live objects of several clusters grouped by identical normalised state,
//! each group with the paths where it differs from the largest, and their texts laid side by
//! side, line beside line. It must not do I/O or mask anything itself beyond what
//! [`diff::unified`] masks: callers hand it JSON values.

use serde_json::Value;

use super::diff;

/// A unified diff of `live` → `desired` as a read-only plan shows it: empty when no field of
/// the intent has another live value; every line added when the object is absent.
pub fn diff_against_desired(live: Option<&Value>, desired: &Value, label: &str) -> String {
    match live {
        None => diff::unified(None, desired, label),
        Some(live) if diff::drifted_fields(desired, live).is_empty() => String::new(),
        Some(live) => diff::unified(Some(&diff::project(live, desired)), desired, label),
    }
}

/// A live object as a person reads it: normalised as a comparison normalises it (server
/// bookkeeping out, keys sorted), but with its `status` kept, since what the controllers
/// report is why one looks. Secret values are the caller's to mask first.
pub fn for_reading(object: &Value) -> Value {
    let mut shown = diff::normalize(object);
    if let (Some(map), Some(status)) = (shown.as_object_mut(), object.get("status")) {
        map.insert(
            "status".into(),
            diff::normalize(&serde_json::json!({"s": status}))["s"].clone(),
        );
    }
    shown
}

/// A stable fingerprint of an object's normalised state (what [`diff::normalize`] keeps), so
/// two clusters' objects can be compared without either being shown.
pub fn fingerprint(object: &Value) -> u64 {
    use std::hash::{Hash, Hasher};
    let text = serde_json::to_string(&diff::normalize(object)).unwrap_or_default();
    let mut hasher = std::collections::hash_map::DefaultHasher::new();
    text.hash(&mut hasher);
    hasher.finish()
}

/// The JSON pointers at which two objects differ after normalisation, in order.
pub fn differing_paths(a: &Value, b: &Value) -> Vec<String> {
    let (a, b) = (diff::normalize(a), diff::normalize(b));
    let mut paths: Vec<String> = diff::drifted_fields(&a, &b)
        .into_iter()
        .chain(diff::drifted_fields(&b, &a))
        .map(|field| field.pointer())
        .collect();
    paths.sort();
    paths.dedup();
    paths
}

/// Clusters whose live objects are the same, and how they differ from the largest group.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LiveGroup<K> {
    /// The members, in the order given.
    pub members: Vec<K>,
    /// Where this group's object differs from the first group's (empty for the first group;
    /// for a group whose object is absent, empty too: `present` says it).
    pub differs: Vec<String>,
    /// Whether the members hold the object at all.
    pub present: bool,
}

/// Groups `(member, fingerprint, shown object)` by fingerprint, largest group first (ties in
/// the order first seen); absent objects form a group of their own, last. `shown` is what the
/// differing paths are computed on (for a Secret, the masked object: a group that differs
/// only in a Secret value has no path to show).
pub fn group_by_state<K: Clone>(members: &[(K, Option<(u64, &Value)>)]) -> Vec<LiveGroup<K>> {
    let mut groups: Vec<(Option<u64>, Option<&Value>, Vec<K>)> = Vec::new();
    for (member, state) in members {
        let fingerprint = state.map(|(print, _)| print);
        match groups
            .iter_mut()
            .find(|(print, _, _)| *print == fingerprint)
        {
            Some((_, _, group)) => group.push(member.clone()),
            None => groups.push((fingerprint, state.map(|(_, o)| o), vec![member.clone()])),
        }
    }
    // Stable: equal sizes keep the order first seen; absent last.
    groups.sort_by_key(|(print, _, group)| (print.is_none(), std::cmp::Reverse(group.len())));
    let reference = groups.first().and_then(|(_, object, _)| *object);
    groups
        .iter()
        .map(|(_, object, group)| LiveGroup {
            members: group.clone(),
            differs: match (reference, object) {
                (Some(reference), Some(object)) => differing_paths(reference, object),
                _ => Vec::new(),
            },
            present: object.is_some(),
        })
        .collect()
}

/// One row of a column laid [`side_by_side`]: the line there (`None`: a gap) and whether it
/// is not the reference's line on that row.
pub type Cell<'a> = Option<(&'a str, bool)>;

/// Texts (as lines) laid out beside a `reference` text so that each line sits on the row of
/// the reference line it equals, and a changed line on the row of the line it replaces (a
/// changed value beside the reference's value); lines the reference lacks get rows of their
/// own, the columns without one left empty there. One column per text, all as long; rows
/// empty in every column are left out (the reference itself need not be among the texts).
pub fn side_by_side<'a>(reference: &[&'a str], texts: &[&[&'a str]]) -> Vec<Vec<Cell<'a>>> {
    let rows = reference.len();
    // Per text: the line on each reference row, and the lines before each reference row.
    let laid: Vec<(Vec<Cell<'a>>, Vec<Vec<&'a str>>)> = texts
        .iter()
        .map(|lines| {
            let mut at: Vec<Cell<'a>> = vec![None; rows];
            let mut before: Vec<Vec<&'a str>> = vec![Vec::new(); rows + 1];
            for op in similar::capture_diff_slices(similar::Algorithm::Myers, reference, lines) {
                match op {
                    similar::DiffOp::Equal {
                        old_index,
                        new_index,
                        len,
                    } => {
                        for k in 0..len {
                            at[old_index + k] = Some((lines[new_index + k], false));
                        }
                    }
                    similar::DiffOp::Delete { .. } => {}
                    similar::DiffOp::Insert {
                        old_index,
                        new_index,
                        new_len,
                    } => before[old_index].extend(&lines[new_index..new_index + new_len]),
                    similar::DiffOp::Replace {
                        old_index,
                        old_len,
                        new_index,
                        new_len,
                    } => {
                        let paired = old_len.min(new_len);
                        for k in 0..paired {
                            at[old_index + k] = Some((lines[new_index + k], true));
                        }
                        before[old_index + old_len]
                            .extend(&lines[new_index + paired..new_index + new_len]);
                    }
                }
            }
            (at, before)
        })
        .collect();
    let mut columns: Vec<Vec<Cell<'a>>> = vec![Vec::new(); texts.len()];
    for row in 0..=rows {
        let inserted = laid.iter().map(|(_, before)| before[row].len()).max();
        for extra in 0..inserted.unwrap_or(0) {
            for (column, (_, before)) in columns.iter_mut().zip(&laid) {
                column.push(before[row].get(extra).map(|line| (*line, true)));
            }
        }
        if row < rows && laid.iter().any(|(at, _)| at[row].is_some()) {
            for (column, (at, _)) in columns.iter_mut().zip(&laid) {
                column.push(at[row]);
            }
        }
    }
    columns
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn deployment(replicas: i64, image: &str) -> Value {
        json!({
            "apiVersion": "apps/v1", "kind": "Deployment",
            "metadata": {"name": "web", "namespace": "shop", "resourceVersion": "7", "uid": "u"},
            "spec": {"replicas": replicas, "template": {"spec": {"containers": [{"name": "web", "image": image}]}}},
            "status": {"availableReplicas": 1},
        })
    }

    #[test]
    fn texts_side_by_side_keep_each_field_on_the_references_row() {
        let reference = [
            "metadata:",
            "  labels:",
            "    app: web",
            "spec:",
            "  replicas: 3",
        ];
        let labelled = [
            "metadata:",
            "  labels:",
            "    app: web",
            "    footprint: store",
            "spec:",
            "  replicas: 1",
        ];
        let unlabelled = ["metadata:", "spec:", "  replicas: 3"];
        let columns = side_by_side(&reference, &[&reference, &labelled, &unlabelled]);
        let shown = |column: &[Cell]| -> Vec<String> {
            column
                .iter()
                .map(|cell| match cell {
                    None => "·".to_string(),
                    Some((line, false)) => line.trim().to_string(),
                    Some((line, true)) => format!("*{}", line.trim()),
                })
                .collect()
        };
        // The extra label gets a row of its own; the changed count sits beside the reference's;
        // lines a text lacks leave gaps, so `spec:` stays on one row in every column.
        assert_eq!(
            shown(&columns[0]),
            [
                "metadata:",
                "labels:",
                "app: web",
                "·",
                "spec:",
                "replicas: 3"
            ]
        );
        assert_eq!(
            shown(&columns[1]),
            [
                "metadata:",
                "labels:",
                "app: web",
                "*footprint: store",
                "spec:",
                "*replicas: 1"
            ]
        );
        assert_eq!(
            shown(&columns[2]),
            ["metadata:", "·", "·", "·", "spec:", "replicas: 3"]
        );
        // Without the reference among them, rows nobody shown has are left out.
        let columns = side_by_side(&reference, &[&unlabelled]);
        assert_eq!(shown(&columns[0]), ["metadata:", "spec:", "replicas: 3"]);
    }

    #[test]
    fn defaults_the_intent_does_not_set_are_not_a_diff() {
        let desired = json!({"apiVersion": "apps/v1", "kind": "Deployment",
            "metadata": {"name": "web", "namespace": "shop"}, "spec": {"replicas": 3}});
        let mut live = deployment(3, "nginx");
        live["spec"]["progressDeadlineSeconds"] = json!(600);
        assert_eq!(diff_against_desired(Some(&live), &desired, "x"), "");
        live["spec"]["replicas"] = json!(5);
        let text = diff_against_desired(Some(&live), &desired, "x");
        assert!(text.contains("-  replicas: 5"), "{text}");
        assert!(text.contains("+  replicas: 3"), "{text}");
        assert!(!text.contains("progressDeadlineSeconds"), "{text}");
        assert!(diff_against_desired(None, &desired, "x").contains("+kind: Deployment"));
    }

    #[test]
    fn reading_keeps_status_and_drops_bookkeeping() {
        let shown = for_reading(&deployment(3, "nginx"));
        assert_eq!(shown["status"]["availableReplicas"], json!(1));
        assert!(shown["metadata"].get("resourceVersion").is_none());
        assert!(shown["metadata"].get("uid").is_none());
    }

    #[test]
    fn server_bookkeeping_does_not_split_groups() {
        let a = deployment(3, "nginx");
        let mut b = deployment(3, "nginx");
        b["metadata"]["resourceVersion"] = json!("99");
        b["status"] = json!({"availableReplicas": 3});
        assert_eq!(fingerprint(&a), fingerprint(&b));
        assert!(differing_paths(&a, &b).is_empty());
    }

    #[test]
    fn clusters_group_by_identical_state_largest_first() {
        let same = deployment(3, "nginx");
        let scaled = deployment(5, "nginx");
        let print = |o: &Value| fingerprint(o);
        let members = vec![
            ("member-2", Some((print(&scaled), &scaled))),
            ("member-1", Some((print(&same), &same))),
            ("member-3", Some((print(&same), &same))),
            ("member-4", None),
        ];
        let groups = group_by_state(&members);
        assert_eq!(groups.len(), 3);
        assert_eq!(groups[0].members, vec!["member-1", "member-3"]);
        assert!(groups[0].differs.is_empty());
        assert_eq!(groups[1].members, vec!["member-2"]);
        assert_eq!(groups[1].differs, vec!["/spec/replicas".to_string()]);
        assert_eq!(groups[2].members, vec!["member-4"]);
        assert!(!groups[2].present);
    }
}
