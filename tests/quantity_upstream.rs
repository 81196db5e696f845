//! Kubernetes quantities read, added, scaled and written by flotilla exactly as apimachinery's
//! `resource.Quantity` does them, checked against apimachinery itself: a small Go program
//! (written to a temporary directory, never kept in this repository) built against the
//! apimachinery version Karmada pins, both fetched through the Go module proxy at test time,
//! is handed thousands of quantity texts from a grammar that covers every sign, digit run,
//! fraction and suffix form (good and bad), and its answers are compared with flotilla's,
//! float bits included. Without Go or the proxy (and nothing cached) the test fails, saying
//! so: it never skips.

use std::io::Write as _;
use std::process::{Command, Stdio};

use flotilla::engine::interpreter::quantity::Quantity;
use serde_json::Value;

const KARMADA: (&str, &str) = ("github.com/karmada-io/karmada", "v1.18.2");

const PROGRAM: &str = r#"package main

import (
	"bufio"
	"fmt"
	"math"
	"os"
	"strings"

	"k8s.io/apimachinery/pkg/api/resource"
)

func main() {
	sc := bufio.NewScanner(os.Stdin)
	for sc.Scan() {
		sum := resource.Quantity{}
		out := []string{}
		ok := true
		for _, text := range strings.Split(sc.Text(), " ") {
			q, err := resource.ParseQuantity(text)
			if err != nil {
				out = append(out, "error: "+err.Error())
				ok = false
				continue
			}
			out = append(out, fmt.Sprintf("%d %d %d %s", math.Float64bits(q.AsApproximateFloat64()), q.Value(), q.MilliValue(), q.String()))
			sum.Add(q)
		}
		if ok {
			out = append(out, "sum "+sum.String()+" "+fmt.Sprint(sum.Value()))
		}
		fmt.Println(strings.Join(out, " | "))
	}
}
"#;

/// The apimachinery version Karmada's go.mod requires.
fn apimachinery_version() -> String {
    let output = Command::new("go")
        .args([
            "mod",
            "download",
            "-json",
            &format!("{}@{}", KARMADA.0, KARMADA.1),
        ])
        .env("GOTOOLCHAIN", "local")
        .current_dir(std::env::temp_dir())
        .output()
        .expect("the quantity oracle needs Go");
    let answer: Value = serde_json::from_slice(&output.stdout).expect("go mod download -json");
    let go_mod = answer
        .get("GoMod")
        .and_then(Value::as_str)
        .expect("Karmada's go.mod");
    let text = std::fs::read_to_string(go_mod).expect("Karmada's go.mod");
    text.lines()
        .find_map(|line| line.trim().strip_prefix("k8s.io/apimachinery "))
        .map(|version| version.trim().to_string())
        .expect("Karmada requires k8s.io/apimachinery")
}

/// Quantity texts from the grammar `[sign][digits][.digits][suffix]`, good and bad.
fn texts() -> Vec<String> {
    let signs = ["", "+", "-"];
    let wholes = [
        "",
        "0",
        "1",
        "12",
        "999",
        "1024",
        "1536",
        "000123",
        "123456789012345678",
        "9223372036854775807",
        "1234567890123456789012345",
    ];
    let fractions = [
        "",
        ".",
        ".5",
        ".25",
        ".000000001",
        ".0000000001",
        ".123456789012",
    ];
    let suffixes = [
        "", "n", "u", "m", "k", "M", "G", "T", "P", "E", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei", "e3",
        "E-2", "e+21", "e-12", "e0", "K", "x", "Ki5", "e", "mm",
    ];
    let mut texts = Vec::new();
    for sign in signs {
        for whole in wholes {
            for fraction in fractions {
                for suffix in suffixes {
                    texts.push(format!("{sign}{whole}{fraction}{suffix}"));
                }
            }
        }
    }
    texts.retain(|text| !text.is_empty());
    texts
}

/// What flotilla says of one line, in the Go program's words.
fn flotilla_line(line: &str) -> String {
    let mut sum = Quantity::zero();
    let mut out = Vec::new();
    let mut ok = true;
    for text in line.split(' ') {
        match Quantity::parse(text) {
            Err(error) => {
                out.push(format!("error: {error}"));
                ok = false;
            }
            Ok(q) => {
                out.push(format!(
                    "{} {} {} {}",
                    q.approximate_f64().to_bits(),
                    q.value(),
                    q.milli_value(),
                    q.text()
                ));
                sum.add(&q);
            }
        }
    }
    if ok {
        out.push(format!("sum {} {}", sum.text(), sum.value()));
    }
    out.join(" | ")
}

#[test]
#[ignore = "builds against apimachinery through the Go module proxy: cargo xtask test runs it in its integration tier"]
fn quantities_read_add_and_write_as_apimachinery_does() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let version = apimachinery_version();
    std::fs::write(
        dir.path().join("go.mod"),
        format!("module quantityoracle\n\ngo 1.24\n\nrequire k8s.io/apimachinery {version}\n"),
    )
    .expect("go.mod");
    std::fs::write(dir.path().join("main.go"), PROGRAM).expect("main.go");

    let singles = texts();
    // Sums of pairs mixing forms and formats: every good text after a few partners.
    let partners = [
        "1500m",
        "2Gi",
        "1e3",
        "0",
        "123456789012345678",
        "1.5Ki",
        "-250m",
    ];
    let mut lines: Vec<String> = singles.clone();
    for partner in partners {
        for text in singles.iter().step_by(3) {
            lines.push(format!("{partner} {text}"));
        }
    }

    let mut child = Command::new("go")
        .args(["run", "."])
        .env("GOTOOLCHAIN", "local")
        .env("GOFLAGS", "-mod=mod")
        .current_dir(dir.path())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the quantity oracle needs Go");
    let input = lines.join("\n") + "\n";
    let mut stdin = child.stdin.take().expect("stdin");
    let writer = std::thread::spawn(move || stdin.write_all(input.as_bytes()));
    let output = child.wait_with_output().expect("the Go program's answers");
    writer
        .join()
        .expect("writer")
        .expect("the Go program's input");
    assert!(
        output.status.success(),
        "the Go program against k8s.io/apimachinery {version} failed (offline?): {}",
        String::from_utf8_lossy(&output.stderr)
    );
    let answers = String::from_utf8_lossy(&output.stdout);
    let answers: Vec<&str> = answers.lines().collect();
    assert_eq!(answers.len(), lines.len(), "one answer a line");
    let mut differ = Vec::new();
    for (line, go) in lines.iter().zip(&answers) {
        let ours = flotilla_line(line);
        if ours != *go {
            differ.push(format!(
                "{line:?}\n  apimachinery: {go}\n  flotilla:     {ours}"
            ));
        }
    }
    eprintln!(
        "{} of {} lines agree with k8s.io/apimachinery {version}",
        lines.len() - differ.len(),
        lines.len()
    );
    assert!(differ.is_empty(), "{}", differ.join("\n"));
}
