//! The console's `x`: the command being typed for a cell's workload, the danger-class
//! cluster's name being typed to confirm it, and the exec the console's loop is to run once
//! it has handed the terminal over. Plain data; `app/exec.rs` acts on it. It must not run
//! anything.

/// `x` asking what to run, then (on a danger-class cluster) for the cluster's name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExecPrompt {
    pub cluster: String,
    /// `Kind/namespace/name` of the workload.
    pub workload: String,
    /// The command line typed so far (starts as `sh`).
    pub input: String,
    /// The cluster's name must be typed before it runs: what has been typed of it, once the
    /// command is entered.
    pub confirm: Option<String>,
    /// The cluster is in the danger class.
    pub danger: bool,
}

/// An exec the operator confirmed, for the loop to run on the terminal handed over.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExecHandoff {
    pub cluster: String,
    /// `Kind/namespace/name` of the workload.
    pub workload: String,
    pub command: Vec<String>,
}

/// A typed command line as the words to run: split on spaces, or handed to `sh -c` whole
/// when it uses the shell's own syntax (quotes, variables, `;`, `&&`, pipes, redirections).
pub fn command_words(line: &str) -> Vec<String> {
    let line = line.trim();
    if line.contains(['\'', '"', '$', ';', '&', '|', '<', '>', '`', '*', '\\']) {
        vec!["sh".into(), "-c".into(), line.to_string()]
    } else {
        line.split_whitespace().map(str::to_string).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_plain_line_is_split_and_shell_syntax_goes_to_sh() {
        assert_eq!(command_words(" ls  -la "), ["ls", "-la"]);
        assert_eq!(
            command_words("echo $HOME; id"),
            ["sh", "-c", "echo $HOME; id"]
        );
        assert!(command_words("   ").is_empty());
    }
}
