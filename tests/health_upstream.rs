//! Health as the upstream projects test it, run through flotilla's engine: every
//! `health_test.yaml` case of Argo CD's `resource_customizations` (its rules loaded as a
//! `--health-rules` directory would be) and every file-based case of Argo CD's health engine
//! (gitops-engine `pkg/health`) for the built-in kinds. The upstream sources are fetched at
//! test time through the Go module proxy into Go's module cache (never copied into this
//! repository) and read straight from their zips. The agreement must be the one
//! `docs/health.md` reports, and every disagreement must be named and explained there.
//! Without Go or the proxy (and nothing cached) the test fails, saying so: it never skips.

mod upstream;

use std::path::Path;

use flotilla::engine::health::Rules;
use flotilla::engine::health::rules::Layer;
use serde_json::Value;
use upstream::{field, files_below, module_zip, object};

const ARGO_CD: (&str, &str) = ("github.com/argoproj/argo-cd/v3", "v3.6.2");
const GITOPS_ENGINE: (&str, &str) = ("github.com/argoproj/argo-cd/gitops-engine/v3", "v3.6.2");

/// One case and what flotilla said where it disagrees.
struct Outcome {
    total: usize,
    disagreements: Vec<(String, String)>,
}

impl Outcome {
    fn agreed(&self) -> usize {
        self.total - self.disagreements.len()
    }
}

/// What Argo CD shows for an object whose rule gives `verdict`: while the object is being
/// deleted (a deletion time, no sync hook's finalizer), the rule's `deletionMessage` with its
/// status if it gave one, else Progressing "Pending deletion", its finalizers named — the step
/// Argo CD's health engine (`GetResourceHealth`) takes after the script, which its rule tests
/// leave out by calling the script alone.
fn as_argo_cd_shows(
    object: &Value,
    verdict: (String, String),
    deletion_message: String,
) -> (String, String) {
    let finalizers: Vec<&str> = object
        .pointer("/metadata/finalizers")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .collect();
    let deleting = object
        .pointer("/metadata/deletionTimestamp")
        .is_some_and(|t| !t.is_null())
        && !finalizers.contains(&"argocd.argoproj.io/hook-finalizer");
    match (deleting, deletion_message.is_empty()) {
        (false, _) => verdict,
        (true, false) => (verdict.0, deletion_message),
        (true, true) if finalizers.is_empty() => ("Progressing".into(), "Pending deletion".into()),
        (true, true) => (
            "Progressing".into(),
            format!(
                "Pending deletion; blocked by finalizers: {}",
                finalizers.join(", ")
            ),
        ),
    }
}

/// Argo CD's rule tests: each case's object through the rules directory, compared on status
/// and message with what the case expects of the script alone (as Argo CD's own test
/// compares), and with what Argo CD shows for it (the same, but for objects being deleted).
fn argo_rules() -> (Outcome, Outcome) {
    let files = files_below(&module_zip(ARGO_CD), ARGO_CD, "resource_customizations/");
    let scripts: Vec<(String, String)> = files
        .iter()
        .filter(|(path, _)| path.ends_with("/health.lua"))
        .map(|(path, text)| (path.clone(), text.clone()))
        .collect();
    let rules = Rules::with_layers(vec![
        Layer::directory("resource_customizations", &scripts).expect("the rules load"),
    ]);
    let mut alone = Outcome {
        total: 0,
        disagreements: Vec::new(),
    };
    let mut shown = Outcome {
        total: 0,
        disagreements: Vec::new(),
    };
    for (path, text) in files
        .iter()
        .filter(|(p, _)| p.ends_with("/health_test.yaml"))
    {
        let dir = path.trim_end_matches("health_test.yaml");
        let cases = object(text, path);
        let cases = field(&cases, "tests")
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default();
        for case in cases {
            let text_of =
                |value: Option<&Value>| value.and_then(Value::as_str).unwrap_or("").to_string();
            let input_path = text_of(field(&case, "inputPath"));
            let expected = field(&case, "healthStatus");
            let deletion_message = text_of(expected.and_then(|e| field(e, "deletionMessage")));
            let expected = (
                text_of(expected.and_then(|e| field(e, "status"))),
                text_of(expected.and_then(|e| field(e, "message"))),
            );
            let input = format!("{dir}{}", input_path.trim_start_matches("./"));
            alone.total += 1;
            shown.total += 1;
            let Some(text) = files.get(&input) else {
                for outcome in [&mut alone, &mut shown] {
                    outcome
                        .disagreements
                        .push((input.clone(), "its input file is not in the module".into()));
                }
                continue;
            };
            let live = object(text, &input);
            let said = rules
                .assess(&live)
                .map(|h| (h.kind.as_str().to_string(), h.reason.clone()));
            if said.as_ref() != Some(&expected) {
                alone.disagreements.push((
                    input.clone(),
                    format!("expected {expected:?}, flotilla said {said:?}"),
                ));
            }
            let argo_cd = as_argo_cd_shows(&live, expected, deletion_message);
            if said.as_ref() != Some(&argo_cd) {
                shown.disagreements.push((
                    input,
                    format!("Argo CD shows {argo_cd:?}, flotilla said {said:?}"),
                ));
            }
        }
    }
    (alone, shown)
}

/// Argo CD's health engine's tests of the built-in kinds, read from its Go test file:
/// `assertAppHealth(t, PATH, STATUS)` (the status), `assert.Nil(t, getHealthStatus(t, PATH))`
/// (no health) and `assert.Equal(t, MESSAGE, getHealthStatus(t, PATH).Message)`.
fn gitops_engine() -> Outcome {
    let files = files_below(&module_zip(GITOPS_ENGINE), GITOPS_ENGINE, "pkg/");
    let test_file = files.get("health/health_test.go").expect("health_test.go");
    let rules = Rules::builtin();
    let read = |path: &str| -> Value {
        let relative = Path::new("health").join(path);
        let mut parts: Vec<String> = Vec::new();
        for part in relative.components() {
            match part.as_os_str().to_str().unwrap_or("") {
                "." => {}
                ".." => {
                    parts.pop();
                }
                other => parts.push(other.to_string()),
            }
        }
        let key = parts.join("/");
        object(
            files
                .get(&key)
                .unwrap_or_else(|| panic!("{key} is not in the module")),
            &key,
        )
    };
    let quoted = |line: &str, after: &str| -> Option<String> {
        let rest = &line[line.find(after)? + after.len()..];
        let start = rest.find('"')? + 1;
        let end = start + rest[start..].find('"')?;
        Some(rest[start..end].to_string())
    };
    let mut outcome = Outcome {
        total: 0,
        disagreements: Vec::new(),
    };
    for line in test_file.lines().map(str::trim) {
        if let Some(path) = quoted(line, "assertAppHealth(t, ") {
            let status = line
                .rsplit("HealthStatus")
                .next()
                .unwrap_or("")
                .trim_end_matches(')')
                .to_string();
            outcome.total += 1;
            let got = rules.assess(&read(&path));
            if got.as_ref().map(|h| h.kind.as_str()) != Some(status.as_str()) {
                outcome
                    .disagreements
                    .push((path, format!("expected {status}, flotilla said {got:?}")));
            }
        } else if line.starts_with("assert.Nil(t, getHealthStatus(t, ") {
            let path = quoted(line, "getHealthStatus(t, ").expect("a path");
            outcome.total += 1;
            if let Some(got) = rules.assess(&read(&path)) {
                outcome
                    .disagreements
                    .push((path, format!("expected no health, flotilla said {got:?}")));
            }
        } else if line.starts_with("assert.Equal(t, \"")
            && line.contains("getHealthStatus(t, ")
            && line.ends_with(".Message)")
        {
            let message = quoted(line, "assert.Equal(t, ").expect("a message");
            let path = quoted(line, "getHealthStatus(t, ").expect("a path");
            outcome.total += 1;
            let got = rules.assess(&read(&path));
            if got.as_ref().map(|h| h.reason.as_str()) != Some(message.as_str()) {
                outcome.disagreements.push((
                    format!("{path} (message)"),
                    format!("expected {message:?}, flotilla said {got:?}"),
                ));
            }
        }
    }
    outcome
}

/// `docs/health.md`'s figures for an upstream: the table row that starts with `label`,
/// `| label | TOTAL | AGREED |`.
fn documented(docs: &str, label: &str) -> (usize, usize) {
    let row = docs
        .lines()
        .find(|line| line.starts_with(&format!("| {label} |")))
        .unwrap_or_else(|| panic!("docs/health.md has no row for {label}"));
    let numbers: Vec<usize> = row
        .split('|')
        .filter_map(|cell| cell.trim().parse().ok())
        .collect();
    assert_eq!(numbers.len(), 2, "{row}: cases and agreed");
    (numbers[0], numbers[1])
}

fn check(outcome: &Outcome, label: &str) {
    let docs =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/health.md"))
            .expect("docs/health.md");
    for (case, why) in &outcome.disagreements {
        eprintln!("{label}: {case}: {why}");
    }
    eprintln!("{label}: {} of {} agree", outcome.agreed(), outcome.total);
    let unexplained: Vec<&String> = outcome
        .disagreements
        .iter()
        .map(|(case, _)| case)
        .filter(|case| !docs.contains(&format!("`{case}`")))
        .collect();
    assert!(
        unexplained.is_empty(),
        "{label}: disagreements docs/health.md does not explain: {unexplained:#?}"
    );
    assert_eq!(
        documented(&docs, label),
        (outcome.total, outcome.agreed()),
        "{label}: docs/health.md's figures (cases, agreed) are not what the run gives"
    );
}

#[test]
#[ignore = "fetches Argo CD through the Go module proxy: cargo xtask test runs it in its integration tier"]
fn argo_cd_health_rules_give_what_argo_cd_tests_expect() {
    let (alone, shown) = argo_rules();
    assert!(shown.total > 1000, "only {} cases", shown.total);
    check(&shown, "Argo CD v3.6.2 health rules, as Argo CD shows them");
    check(&alone, "Argo CD v3.6.2 health rules, the script alone");
}

#[test]
#[ignore = "fetches Argo CD's health engine through the Go module proxy: cargo xtask test runs it in its integration tier"]
fn built_in_kinds_agree_with_argo_cds_health_engine() {
    let outcome = gitops_engine();
    assert!(outcome.total > 40, "only {} cases", outcome.total);
    check(&outcome, "Argo CD v3.6.2 health engine");
}
