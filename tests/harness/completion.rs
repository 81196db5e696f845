//! Runs the real `bash` with the script `flotilla completion bash` prints, as the shell does on
//! TAB: the words typed so far in `COMP_WORDS`, the completion function called, `COMPREPLY`
//! printed one candidate a line. Non-interactive, so its answer depends only on the files.

use std::path::Path;
use std::process::Command;

/// The candidates bash offers for the last of `words` (the word being completed, maybe
/// empty), with `kubeconfig` as `$KUBECONFIG` (unset when `None`) and `dir` as the working
/// directory.
pub fn bash_candidates(dir: &Path, kubeconfig: Option<&Path>, words: &[&str]) -> Vec<String> {
    let script = Command::new(env!("CARGO_BIN_EXE_flotilla"))
        .args(["completion", "bash"])
        .output()
        .expect("run flotilla completion bash");
    assert!(script.status.success(), "flotilla completion bash failed");
    let script_path = dir.join("flotilla-completion.bash");
    std::fs::write(&script_path, &script.stdout).expect("write the completion script");
    let driver = r#"source "$1"; shift
COMP_WORDS=("$@"); COMP_CWORD=$(( $# - 1 ))
_clap_complete_flotilla flotilla "${COMP_WORDS[COMP_CWORD]}" "${COMP_WORDS[COMP_CWORD-1]}"
printf '%s\n' "${COMPREPLY[@]}""#;
    let mut bash = Command::new("bash");
    bash.args(["--norc", "--noprofile", "-c", driver, "bash"])
        .arg(&script_path)
        .arg("flotilla")
        .args(words)
        .current_dir(dir)
        .env("XDG_CONFIG_HOME", dir)
        .env("XDG_STATE_HOME", dir)
        .env("HOME", dir);
    match kubeconfig {
        Some(path) => bash.env("KUBECONFIG", path),
        None => bash.env_remove("KUBECONFIG"),
    };
    let output = bash.output().expect("run bash");
    assert!(
        output.status.success(),
        "bash failed: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(
        output.stderr.is_empty(),
        "completion printed into the shell: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8_lossy(&output.stdout)
        .lines()
        .filter(|line| !line.is_empty())
        .map(str::to_string)
        .collect()
}
