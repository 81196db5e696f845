//! What every fuzz property checks after feeding input: the real fleet fixtures, the loader's
//! contract (errors name a file and a line that exist, sorted; everything built from the fleet
//! renders and explains), a fingerprint of a loaded fleet for comparing loads, and the case
//! counts (`FLOTILLA_FUZZ_SCALE` multiplies them, `PROPTEST_CASES` sets them all), and the
//! stack the loader runs on.

use std::path::Path;
use std::sync::OnceLock;

use flotilla::commands::render::write_summary;
use flotilla::engine::render::{SecretValues, summary, write_json, write_yaml};
use flotilla::engine::{Fleet, FleetError, SourceFile, load_fleet};
use proptest::prelude::*;
use proptest::test_runner::TestCaseError;
use serde_json::Value;

/// The case count of a property: `default` scaled by `FLOTILLA_FUZZ_SCALE` (a whole number,
/// default 1), unless `PROPTEST_CASES` names one for every property.
pub fn config(default: u32) -> ProptestConfig {
    let base = ProptestConfig::default();
    let cases = if std::env::var_os("PROPTEST_CASES").is_some() {
        base.cases
    } else {
        let scale = std::env::var("FLOTILLA_FUZZ_SCALE")
            .ok()
            .and_then(|s| s.trim().parse::<u32>().ok())
            .unwrap_or(1)
            .max(1);
        default.saturating_mul(scale)
    };
    // `cargo xtask fuzz` counts the cases of a round from these lines.
    if let Some(report) = std::env::var_os("FLOTILLA_FUZZ_REPORT") {
        use std::io::Write as _;
        if let Ok(mut file) = std::fs::OpenOptions::new().append(true).open(report) {
            let _ = writeln!(file, "{cases}");
        }
    }
    ProptestConfig { cases, ..base }
}

/// The stack flotilla parses fleet files on: its main thread's (8 MiB on Linux). A test
/// thread has 2 MiB, which a document nested as deep as the YAML parser allows (64 levels)
/// overflows in a debug build; see `a_deep_flow_sequence_fits_a_worker_thread_stack`.
pub const MAIN_THREAD_STACK: usize = 8 * 1024 * 1024;

/// Runs `f` on a thread with [`MAIN_THREAD_STACK`], passing its panic on.
pub fn on_main_stack<T: Send>(f: impl FnOnce() -> T + Send) -> T {
    std::thread::scope(|scope| {
        std::thread::Builder::new()
            .stack_size(MAIN_THREAD_STACK)
            .spawn_scoped(scope, f)
            .expect("spawn a thread")
            .join()
            .unwrap_or_else(|panic| std::panic::resume_unwind(panic))
    })
}

/// Every fleet under `testdata/fleets/` (each directory holding YAML files is one fleet),
/// as the loader receives it.
pub fn fixtures() -> &'static [Vec<SourceFile>] {
    static FIXTURES: OnceLock<Vec<Vec<SourceFile>>> = OnceLock::new();
    FIXTURES.get_or_init(|| {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata/fleets");
        let mut fleets = Vec::new();
        collect(&root, &root, &mut fleets);
        assert!(fleets.len() >= 5, "fixtures under {}", root.display());
        fleets
    })
}

fn collect(root: &Path, dir: &Path, fleets: &mut Vec<Vec<SourceFile>>) {
    let mut entries: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    entries.sort();
    let mut files = Vec::new();
    for path in entries {
        if path.is_dir() {
            collect(root, &path, fleets);
        } else if path.extension().is_some_and(|e| e == "yaml" || e == "yml") {
            files.push(SourceFile {
                path: path
                    .strip_prefix(root)
                    .unwrap()
                    .to_string_lossy()
                    .into_owned(),
                text: std::fs::read_to_string(&path).unwrap(),
            });
        }
    }
    if !files.is_empty() {
        fleets.push(files);
    }
}

/// Lines of a text as YAML counts them (`\r\n`, `\r` and `\n` each end one), counting the
/// empty line after a final line break: the last line an error may point at.
pub fn line_count(text: &str) -> usize {
    let mut lines = 1;
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\n' => lines += 1,
            '\r' => {
                if chars.peek() == Some(&'\n') {
                    chars.next();
                }
                lines += 1;
            }
            _ => {}
        }
    }
    lines
}

/// The loader's contract for any input: every error names one of the files and a line that
/// exists in it, has a message, a field and a hint, and the errors come sorted; the fleet it
/// built renders in every format and explains every cell.
pub fn check_load(files: &[SourceFile]) -> Result<(Fleet, Vec<FleetError>), TestCaseError> {
    on_main_stack(|| {
        let (fleet, errors) = load_fleet(files);
        check_errors(files, &errors)?;
        check_fleet(&fleet)?;
        Ok((fleet, errors))
    })
}

pub fn check_errors(files: &[SourceFile], errors: &[FleetError]) -> Result<(), TestCaseError> {
    for error in errors {
        let file = files.iter().find(|f| f.path == error.location.file);
        prop_assert!(
            file.is_some(),
            "error names a file not in the input: {}",
            error
        );
        let lines = line_count(file.map(|f| f.text.as_str()).unwrap_or_default());
        prop_assert!(
            (1..=lines).contains(&error.location.line),
            "error points at line {} of a {}-line file: {}",
            error.location.line,
            lines,
            error
        );
        prop_assert!(!error.message.is_empty(), "no message: {:?}", error);
        prop_assert!(!error.field.is_empty(), "no field: {:?}", error);
        prop_assert!(!error.hint.is_empty(), "no hint: {:?}", error);
    }
    for pair in errors.windows(2) {
        let key = |e: &FleetError| (e.location.clone(), e.field.clone(), e.message.clone());
        prop_assert!(
            key(&pair[0]) <= key(&pair[1]),
            "errors out of order: {:?}",
            pair
        );
    }
    Ok(())
}

/// Everything a loaded fleet offers the console and `flotilla render` must work.
pub fn check_fleet(fleet: &Fleet) -> Result<(), TestCaseError> {
    let all: Vec<usize> = (0..fleet.clusters.len()).collect();
    let mut out = Vec::new();
    write_json(fleet, &all, SecretValues::Masked, &mut out)
        .map_err(|e| TestCaseError::fail(e.to_string()))?;
    let rendered: Value = serde_json::from_slice(&out)
        .map_err(|e| TestCaseError::fail(format!("render wrote invalid JSON: {e}")))?;
    prop_assert!(rendered.is_object());
    out.clear();
    write_yaml(fleet, &all, SecretValues::Shown, &mut out)
        .map_err(|e| TestCaseError::fail(e.to_string()))?;
    out.clear();
    write_summary(&summary(fleet, &all), &mut out)
        .map_err(|e| TestCaseError::fail(e.to_string()))?;
    for r in 0..fleet.resources.len() {
        let _ = fleet.placement_summary(r);
        for c in 0..fleet.clusters.len() {
            let _ = fleet.decide(r, c);
            let _ = fleet.explain(r, c);
            let _ = fleet.replicas(r, c);
        }
    }
    for c in 0..fleet.clusters.len() {
        let _ = fleet.implied_namespaces(c);
    }
    Ok(())
}

/// What two loads of the same files must agree on: the rendered output, the resources and
/// clusters, the explanation of every cell, and the errors.
pub fn fingerprint(fleet: &Fleet, errors: &[FleetError]) -> String {
    let all: Vec<usize> = (0..fleet.clusters.len()).collect();
    let mut out = Vec::new();
    let _ = write_json(fleet, &all, SecretValues::Masked, &mut out);
    let mut text = String::from_utf8_lossy(&out).into_owned();
    text.push_str(&format!("\n{:?}\n{:?}\n", fleet.resources, fleet.clusters));
    for r in 0..fleet.resources.len() {
        for c in 0..fleet.clusters.len() {
            text.push_str(&format!("{:?}\n", fleet.explain(r, c)));
        }
    }
    for error in errors {
        text.push_str(&format!("{error}\n"));
    }
    text
}

/// Equality that treats 1 and 1.0 alike (YAML does not keep the difference).
pub fn values_match(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => x.as_f64() == y.as_f64(),
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(a, b)| values_match(a, b))
        }
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len()
                && x.iter()
                    .all(|(k, v)| y.get(k).is_some_and(|w| values_match(v, w)))
        }
        _ => a == b,
    }
}

/// Whether `text` is an RFC 6901 JSON pointer: empty, or `/`-separated tokens in which every
/// `~` is followed by `0` or `1`.
pub fn is_json_pointer(text: &str) -> bool {
    if text.is_empty() {
        return true;
    }
    if !text.starts_with('/') {
        return false;
    }
    let mut chars = text.chars();
    while let Some(c) = chars.next() {
        if c == '~' && !matches!(chars.next(), Some('0' | '1')) {
            return false;
        }
    }
    true
}

/// Every JSON pointer in a value (the root included), depth first.
pub fn pointers(value: &Value) -> Vec<String> {
    fn walk(value: &Value, at: String, out: &mut Vec<String>) {
        match value {
            Value::Object(map) => {
                for (k, v) in map {
                    walk(
                        v,
                        format!("{at}/{}", k.replace('~', "~0").replace('/', "~1")),
                        out,
                    );
                }
            }
            Value::Array(items) => {
                for (i, v) in items.iter().enumerate() {
                    walk(v, format!("{at}/{i}"), out);
                }
            }
            _ => {}
        }
        out.push(at);
    }
    let mut out = Vec::new();
    walk(value, String::new(), &mut out);
    out
}

/// Whether an error text names the offending part of the input: a part written in backticks
/// (or quotes) at its start that occurs in the input.
pub fn names_part(input: &str, error: &str) -> bool {
    let quoted = error
        .strip_prefix('`')
        .and_then(|rest| rest.split_once('`'))
        .map(|(part, _)| part);
    quoted.is_some_and(|part| input.contains(part))
}
