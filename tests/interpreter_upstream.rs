//! Karmada's third-party resource interpreter customizations (`pkg/resourceinterpreter/
//! default/thirdparty/resourcecustomizations/GROUP/VERSION/KIND/customizations.yaml`) run
//! through flotilla against their own tests (`testdata/*-test.yaml`), as Karmada's
//! `thirdparty_test.go` runs them: each customizations file read as a fleet file is (so
//! Karmada's validation applies), each case's operation called through flotilla's
//! interpreter, and its output compared with what the case expects. Health goes through the
//! health engine (a fleet's interpreters as a rule layer, Karmada's `true`/`false` read as
//! Healthy/Degraded). Karmada comes from the Go module proxy at test time (never copied into
//! this repository). The agreement must be the one `docs/health.md` reports, every
//! disagreement named and explained there. Without Go or the proxy (and nothing cached) the
//! test fails, saying so: it never skips.

mod upstream;

use std::collections::BTreeMap;
use std::path::Path;

use flotilla::engine::health::Rules;
use flotilla::engine::health::lua::Limits;
use flotilla::engine::interpreter::dependencies::Reference;
use flotilla::engine::interpreter::{Operation, StatusItem, requirements, vm};
use flotilla::engine::{SourceFile, load_fleet};
use flotilla::model::HealthKind;
use serde_json::Value;
use upstream::{documents, field, files_below, module_zip};

const KARMADA: (&str, &str) = ("github.com/karmada-io/karmada", "v1.18.2");
const ROOT: &str = "pkg/resourceinterpreter/default/thirdparty/resourcecustomizations/";
const EXCLUDE: &str = "{{EXCLUDE}}";

/// Per operation: cases, and the disagreements (case, what flotilla said).
#[derive(Default)]
struct Tally {
    cases: BTreeMap<Operation, (usize, Vec<(String, String)>)>,
    not_run: BTreeMap<String, usize>,
}

fn run_corpus() -> Tally {
    let files = files_below(&module_zip(KARMADA), KARMADA, ROOT);
    let mut tally = Tally::default();
    for (path, text) in files
        .iter()
        .filter(|(p, _)| p.ends_with("/customizations.yaml"))
    {
        let dir = path.trim_end_matches("customizations.yaml");
        let (fleet, errors) = load_fleet(&[SourceFile {
            path: format!("{ROOT}{path}"),
            text: text.clone(),
        }]);
        assert!(errors.is_empty(), "{path}: {errors:?}");
        let interpreters = fleet.interpreters.clone();
        let rules = Rules::builtin();
        rules.use_fleet_layer(Some(interpreters.health_layer()));
        for (test_path, test_text) in files
            .iter()
            .filter(|(p, _)| p.starts_with(&format!("{dir}testdata/")))
        {
            for case in documents(test_text, test_path) {
                let name = field(&case, "name").and_then(Value::as_str).unwrap_or("");
                let label = format!("{test_path}: {name}");
                let op_name = field(&case, "operation")
                    .and_then(Value::as_str)
                    .unwrap_or("");
                let desired = field(&case, "desiredObj").filter(|v| !v.is_null());
                let observed = field(&case, "observedObj").filter(|v| !v.is_null());
                let output = field(&case, "output").cloned().unwrap_or(Value::Null);
                let expected = |key: &str| field(&output, key).cloned();
                let Some(operation) = Operation::named(op_name) else {
                    *tally.not_run.entry(op_name.to_string()).or_default() += 1;
                    continue;
                };
                let Some(object) = desired.or(observed) else {
                    continue;
                };
                let api_version = object
                    .get("apiVersion")
                    .and_then(Value::as_str)
                    .unwrap_or("");
                let kind = object.get("kind").and_then(Value::as_str).unwrap_or("");
                let script = interpreters.script(api_version, kind, operation);
                let verdict: Result<(), String> = match operation {
                    Operation::InterpretHealth => {
                        let want = expected("healthy").and_then(|v| v.as_bool());
                        let got = rules.assess(object);
                        // Decided by the fleet's interpreter, not by a built-in of the same kind.
                        let got_word = got
                            .as_ref()
                            .filter(|h| {
                                h.rule
                                    .as_deref()
                                    .is_some_and(|r| r.contains("(karmada interpreter, "))
                            })
                            .map(|h| (h.kind, h.reason.clone()));
                        match (want, got_word) {
                            (Some(true), Some((HealthKind::Healthy, _)))
                            | (Some(false), Some((HealthKind::Degraded, _))) => Ok(()),
                            (want, got) => {
                                Err(format!("expected healthy={want:?}, flotilla: {got:?}"))
                            }
                        }
                    }
                    Operation::InterpretReplica => match script {
                        None => Err("no GetReplicas script".into()),
                        Some(script) => {
                            match vm::get_replicas(
                                &script.origin,
                                &script.text,
                                object,
                                Limits::default(),
                            ) {
                                Ok((replicas, requires)) => {
                                    let want = expected("replica").and_then(|v| v.as_i64());
                                    // The requirements where the case gives them, compared as
                                    // Karmada's test compares them (typed, quantities by value).
                                    let want_requires = expected("requires").map(|v| {
                                        (!v.is_null()).then(|| requirements::read(&v, true))
                                    });
                                    if want != Some(i64::from(replicas)) {
                                        Err(format!(
                                            "expected replica {want:?}, flotilla: {replicas}"
                                        ))
                                    } else {
                                        match want_requires {
                                            None => Ok(()),
                                            Some(Some(Err(e))) => {
                                                Err(format!("the case's requires: {e}"))
                                            }
                                            Some(want) => {
                                                let want = want.and_then(Result::ok);
                                                if want == requires {
                                                    Ok(())
                                                } else {
                                                    Err(format!(
                                                        "expected requires {want:?}, flotilla: {requires:?}"
                                                    ))
                                                }
                                            }
                                        }
                                    }
                                }
                                Err(error) => Err(error.to_string()),
                            }
                        }
                    },
                    Operation::ReviseReplica => match script {
                        None => Err("no ReviseReplica script".into()),
                        Some(script) => {
                            let replicas = field(&case, "inputReplicas")
                                .and_then(Value::as_i64)
                                .unwrap_or(0);
                            compare(
                                expected("revised"),
                                vm::revise_replica(
                                    &script.origin,
                                    &script.text,
                                    object,
                                    replicas,
                                    Limits::default(),
                                ),
                            )
                        }
                    },
                    Operation::Retain => match (script, desired, observed) {
                        (Some(script), Some(desired), Some(observed)) => compare(
                            expected("retained"),
                            vm::retain(
                                &script.origin,
                                &script.text,
                                desired,
                                observed,
                                Limits::default(),
                            ),
                        ),
                        _ => Err("no Retain script, or not both objects".into()),
                    },
                    Operation::InterpretDependency => {
                        let want: Option<Vec<Reference>> = expected("dependencies")
                            .map(|v| {
                                if v.is_null() {
                                    Value::Array(Vec::new())
                                } else {
                                    v
                                }
                            })
                            .and_then(|v| serde_json::from_value(v).ok());
                        match (want, interpreters.dependencies(object)) {
                            (_, None) => Err("no GetDependencies script".into()),
                            (_, Some(Err(error))) => Err(error.to_string()),
                            (None, Some(Ok(got))) => Err(format!(
                                "the case expects no dependencies, flotilla: {got:?}"
                            )),
                            // Karmada's test sorts both sides (Lua's pairs has no order).
                            (Some(mut want), Some(Ok(got))) => {
                                want.sort();
                                if want == got {
                                    Ok(())
                                } else {
                                    Err(format!("expected {want:?}, flotilla: {got:?}"))
                                }
                            }
                        }
                    }
                    Operation::InterpretStatus => match script {
                        None => Err("no ReflectStatus script".into()),
                        // Through the engine's entry point, which takes the fleet's script
                        // over the built-in as Karmada does.
                        Some(_) => match interpreters.reflect_status(object) {
                            Err(error) => Err(error.to_string()),
                            Ok(got) => match expected("status") {
                                // Karmada's test passes a case with no expected output
                                // once the script ran.
                                None => Ok(()),
                                Some(want) => compare(Some(want), Ok(got.unwrap_or(Value::Null))),
                            },
                        },
                    },
                    Operation::AggregateStatus => match script {
                        None => Err("no AggregateStatus script".into()),
                        Some(script) => {
                            // Go's test reads an absent `statusItems` as a nil slice, `[]`
                            // as an empty one; the script tells them apart.
                            let items: Option<Vec<StatusItem>> = field(&case, "statusItems")
                                .and_then(Value::as_array)
                                .map(|items| items.iter().map(StatusItem::from_json).collect());
                            let json: Option<Vec<Value>> = items
                                .as_ref()
                                .map(|items| items.iter().map(StatusItem::to_json).collect());
                            let whole = vm::aggregate_status(
                                &script.origin,
                                &script.text,
                                object,
                                json.as_deref(),
                                Limits::default(),
                            );
                            // The engine's entry point gives the same status, naming the script
                            // (fields the case marks `{{EXCLUDE}}`, a time the script reads from
                            // the clock, left out: the two runs may straddle a second).
                            let through = interpreters.aggregate_status(object, items.as_deref());
                            let mut excluded = Vec::new();
                            if let Some(want) = expected("aggregatedStatus") {
                                exclude(&want, &mut Vec::new(), &mut excluded, true);
                            }
                            let kept = |status: &Value| {
                                let whole = serde_json::json!({ "status": status });
                                exclude(&whole, &mut Vec::new(), &mut excluded.clone(), false)
                            };
                            let consistent = match (&whole, &through) {
                                (Ok(whole), Some(Ok(aggregation))) => {
                                    let status = whole
                                        .get("status")
                                        .cloned()
                                        .unwrap_or_else(|| serde_json::json!({}));
                                    kept(&status) == kept(&aggregation.status)
                                        && aggregation.rule.contains(&script.origin)
                                }
                                (Err(_), Some(Err(_))) => true,
                                _ => false,
                            };
                            if consistent {
                                match expected("aggregatedStatus") {
                                    None => whole.map(|_| ()).map_err(|e| e.to_string()),
                                    Some(want) => compare(Some(want), whole),
                                }
                            } else {
                                Err(format!(
                                    "the engine's aggregation {through:?} differs from the script's {whole:?}"
                                ))
                            }
                        }
                    },
                    Operation::InterpretComponent => match interpreters.components(object) {
                        None => Err("no GetComponents script".into()),
                        Some(Err(error)) => Err(error.to_string()),
                        Some(Ok(mut got)) => match expected("components") {
                            // Karmada's test passes a case with no expected output once the
                            // script ran.
                            None => Ok(()),
                            Some(want) => {
                                let want = if want.is_null() {
                                    Ok(Vec::new())
                                } else {
                                    requirements::read_components(&want)
                                };
                                match want {
                                    Err(e) => Err(format!("the case's components: {e}")),
                                    // Both sides sorted by name, as upstream's test sorts them
                                    // (a script walking a map has no order of its own).
                                    Ok(mut want) => {
                                        want.sort_by(|a, b| a.name.cmp(&b.name));
                                        got.sort_by(|a, b| a.name.cmp(&b.name));
                                        if want == got {
                                            Ok(())
                                        } else {
                                            Err(format!("expected {want:?}, flotilla: {got:?}"))
                                        }
                                    }
                                }
                            }
                        },
                    },
                };
                let entry = tally.cases.entry(operation).or_default();
                entry.0 += 1;
                if let Err(why) = verdict {
                    entry.1.push((label, why));
                }
            }
        }
    }
    tally
}

/// Karmada's comparison of an object result: fields the case marks `{{EXCLUDE}}` left out of
/// both sides, then equality.
fn compare(
    expected: Option<Value>,
    got: Result<Value, flotilla::engine::health::lua::RuleError>,
) -> Result<(), String> {
    let got = got.map_err(|e| e.to_string())?;
    let Some(expected) = expected else {
        return Err("the case expects no output".into());
    };
    let mut excluded = Vec::new();
    let expected = exclude(&expected, &mut Vec::new(), &mut excluded, true);
    let got = exclude(&got, &mut Vec::new(), &mut excluded, false);
    if expected == got {
        Ok(())
    } else {
        Err(format!("expected {expected}, flotilla: {got}"))
    }
}

fn exclude(
    value: &Value,
    path: &mut Vec<String>,
    excluded: &mut Vec<String>,
    collect: bool,
) -> Value {
    match value {
        Value::Object(fields) => {
            let mut kept = serde_json::Map::new();
            for (key, item) in fields {
                path.push(key.clone());
                let at = path.join(".");
                if collect && item.as_str() == Some(EXCLUDE) {
                    excluded.push(at);
                } else if !collect && excluded.contains(&at) {
                } else {
                    kept.insert(key.clone(), exclude(item, path, excluded, collect));
                }
                path.pop();
            }
            Value::Object(kept)
        }
        Value::Array(items) => Value::Array(
            items
                .iter()
                .enumerate()
                .map(|(i, item)| {
                    path.push(i.to_string());
                    let out = exclude(item, path, excluded, collect);
                    path.pop();
                    out
                })
                .collect(),
        ),
        other => other.clone(),
    }
}

/// `docs/health.md`'s figures for a row `| label | TOTAL | AGREED |`.
fn documented(docs: &str, label: &str) -> Option<(usize, usize)> {
    let row = docs
        .lines()
        .find(|line| line.starts_with(&format!("| {label} |")))?;
    let numbers: Vec<usize> = row
        .split('|')
        .filter_map(|cell| cell.trim().parse().ok())
        .collect();
    assert_eq!(numbers.len(), 2, "{row}: cases and agreed");
    Some((numbers[0], numbers[1]))
}

#[test]
#[ignore = "fetches Karmada through the Go module proxy: cargo xtask test runs it in its integration tier"]
fn karmada_third_party_customizations_give_what_their_tests_expect() {
    let tally = run_corpus();
    let docs =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/health.md"))
            .expect("docs/health.md");
    let mut failures = Vec::new();
    for (operation, (total, disagreements)) in &tally.cases {
        for (case, why) in disagreements {
            eprintln!("{}: {case}: {why}", operation.name());
            if !docs.contains(&format!("`{case}`")) {
                failures.push(format!(
                    "{}: {case} is not explained in docs/health.md",
                    operation.name()
                ));
            }
        }
        let agreed = total - disagreements.len();
        eprintln!("{}: {agreed} of {total} agree", operation.name());
        let label = format!(
            "Karmada {} third-party customizations, {}",
            KARMADA.1,
            operation.name()
        );
        if documented(&docs, &label) != Some((*total, agreed)) {
            failures.push(format!(
                "{label}: docs/health.md's figures are not ({total}, {agreed})"
            ));
        }
    }
    assert!(
        tally.not_run.is_empty(),
        "cases of operations flotilla does not know: {:?}",
        tally.not_run
    );
    let health = tally
        .cases
        .get(&Operation::InterpretHealth)
        .map_or(0, |c| c.0);
    assert!(health > 100, "only {health} health cases");
    assert!(failures.is_empty(), "{failures:#?}");
}
