//! The console's `x`: the command being typed for a cell's workload (and, from the object
//! view, the pod it runs in), the danger-class cluster's name being typed to confirm it, and
//! the exec the console's loop is to run once it has handed the terminal over. Plain data;
//! `app/exec.rs` acts on it. It must not run anything.

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
    /// From the object view: the workload's pods on the cluster as it lists them, and the one
    /// chosen (tab / ↓ the next, ↑ the previous). Empty from the main view, where the exec
    /// runs in the workload's first ready pod.
    pub pods: Vec<String>,
    pub pod: usize,
    /// The object view it was asked from, where it returns once done: (tab, scroll, group).
    pub back: Option<(super::object_view::ObjectTab, usize, usize)>,
}

impl ExecPrompt {
    /// The chosen pod, when there is a choice.
    pub fn chosen_pod(&self) -> Option<&str> {
        self.pods.get(self.pod).map(String::as_str)
    }
}

/// An exec the operator confirmed, for the loop to run on the terminal handed over.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExecHandoff {
    pub cluster: String,
    /// `Kind/namespace/name` of the workload.
    pub workload: String,
    /// The pod chosen in the object view; `None`: the workload's first ready pod.
    pub pod: Option<String>,
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
