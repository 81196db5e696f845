//! What the upstream-corpus tests share: a Go module fetched through the module proxy into
//! Go's module cache (never copied into this repository) and its files read straight from
//! the zip, and YAML read as Go's test code reads it. Without Go or the proxy (and nothing
//! cached) a test using it fails, saying so: it never skips.

#![allow(dead_code)]

use std::collections::BTreeMap;
use std::io::Read as _;
use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

/// The module's zip in Go's module cache, downloaded through the proxy if it is not there.
/// `go mod download` may refuse to extract a module whose go.mod wants a newer Go, but it
/// has fetched the zip by then: the zip is all this test reads.
pub fn module_zip((module, version): (&str, &str)) -> PathBuf {
    let output = Command::new("go")
        .args(["mod", "download", "-json", &format!("{module}@{version}")])
        .env("GOTOOLCHAIN", "local")
        .env("GOFLAGS", "-mod=mod")
        .current_dir(std::env::temp_dir())
        .output()
        .unwrap_or_else(|error| {
            panic!(
                "the upstream health cases need Go to fetch {module}@{version} through the \
                 module proxy, and `go` did not run: {error}"
            )
        });
    let answer: Value = serde_json::from_slice(&output.stdout).unwrap_or_else(|error| {
        panic!(
            "`go mod download -json {module}@{version}` printed no JSON ({error}): {}",
            String::from_utf8_lossy(&output.stderr)
        )
    });
    let zip = answer
        .get("Zip")
        .and_then(Value::as_str)
        .map(PathBuf::from)
        .filter(|zip| zip.is_file());
    zip.unwrap_or_else(|| {
        panic!(
            "{module}@{version} could not be fetched through the module proxy (offline?): {answer}"
        )
    })
}

/// The files of a module zip below `under` (a path inside the module), by that relative path.
pub fn files_below(
    zip: &Path,
    (module, version): (&str, &str),
    under: &str,
) -> BTreeMap<String, String> {
    let file = std::fs::File::open(zip).unwrap_or_else(|e| panic!("{}: {e}", zip.display()));
    let mut archive =
        zip::ZipArchive::new(file).unwrap_or_else(|e| panic!("{}: {e}", zip.display()));
    let prefix = format!("{module}@{version}/{under}");
    let mut files = BTreeMap::new();
    for index in 0..archive.len() {
        let mut entry = archive.by_index(index).expect("a zip entry");
        let name = entry.name().expect("a zip entry's name").to_string();
        let Some(relative) = name.strip_prefix(&prefix).map(str::to_string) else {
            continue;
        };
        if entry.is_dir() {
            continue;
        }
        let mut text = String::new();
        if entry.read_to_string(&mut text).is_ok() {
            files.insert(relative, text);
        }
    }
    assert!(
        !files.is_empty(),
        "{module}@{version} has nothing under {under}"
    );
    files
}

/// A YAML file as Go's `sigs.k8s.io/yaml` reads it for upstream's tests: its first document,
/// a key given twice keeping its last value.
pub fn object(text: &str, name: &str) -> Value {
    let options = serde_saphyr::options! {
        duplicate_keys: serde_saphyr::DuplicateKeyPolicy::LastWins,
    };
    let documents: Vec<Value> = serde_saphyr::from_str_multiple_with_options(text, options)
        .unwrap_or_else(|e| panic!("{name}: {e}"));
    documents.into_iter().next().unwrap_or(Value::Null)
}

/// A field as Go's JSON decoding finds it: its exact name, else any spelling of it in another
/// case (`inputpath` is `inputPath`).
pub fn field<'a>(value: &'a Value, name: &str) -> Option<&'a Value> {
    let fields = value.as_object()?;
    fields.get(name).or_else(|| {
        fields
            .iter()
            .find(|(key, _)| key.eq_ignore_ascii_case(name))
            .map(|(_, value)| value)
    })
}

/// Every document of a YAML file as Go's YAML-or-JSON decoder reads a stream of them, empty
/// documents (comments only) left out.
pub fn documents(text: &str, name: &str) -> Vec<Value> {
    let options = serde_saphyr::options! {
        duplicate_keys: serde_saphyr::DuplicateKeyPolicy::LastWins,
    };
    let documents: Vec<Value> = serde_saphyr::from_str_multiple_with_options(text, options)
        .unwrap_or_else(|e| panic!("{name}: {e}"));
    documents.into_iter().filter(|d| !d.is_null()).collect()
}
