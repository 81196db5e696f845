//! Shell-style globs for context names, cluster classes, ignore rules and filters: `*` (any
//! run), `?` (one character) and character classes (`[ab]`, `[a-z]`, `[!0-9]`), as the `glob`
//! crate reads them. It must not know where a pattern comes from: callers that take patterns
//! from the operator check them with [`check`] and say where a bad one was written.

/// Why `pattern` is not a glob (an unclosed `[`, say), if it is not one.
pub fn check(pattern: &str) -> Result<(), String> {
    glob::Pattern::new(pattern)
        .map(|_| ())
        .map_err(|error| format!("{pattern:?} is not a glob: {}", error.msg))
}

/// Whether `text` matches `pattern`. A string that is not a glob (see [`check`]) matches
/// only itself, character for character.
pub fn glob_match(pattern: &str, text: &str) -> bool {
    if !pattern.contains(['*', '?', '[']) {
        return pattern == text;
    }
    match glob::Pattern::new(pattern) {
        Ok(glob) => glob.matches(text),
        Err(_) => pattern == text,
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn globs_match_like_a_shell() {
        assert!(glob_match("prod-*", "prod-eu-1"));
        assert!(glob_match("*", "anything"));
        assert!(glob_match("member-?", "member-2"));
        assert!(!glob_match("member-?", "member-10"));
        assert!(glob_match("*-eu-*", "prod-eu-1"));
        assert!(!glob_match("prod-*", "staging-eu-1"));
        assert!(glob_match("exact", "exact"));
        assert!(!glob_match("exact", "exactly"));
        assert!(glob_match("a*b*c", "aXXbYYc"));
        assert!(!glob_match("a*b*c", "aXXbYY"));
    }

    #[test]
    fn character_classes_pick_clusters_as_a_shell_does() {
        assert!(glob_match("prod-[ab]*", "prod-a-1"));
        assert!(glob_match("prod-[ab]*", "prod-b"));
        assert!(!glob_match("prod-[ab]*", "prod-c-1"));
        assert!(glob_match("store-[0-9][0-9]", "store-42"));
        assert!(!glob_match("store-[!0-9]*", "store-42"));
        assert!(glob_match("store-[!0-9]*", "store-x"));
    }

    #[test]
    fn a_bad_pattern_is_named_and_matches_only_itself() {
        let error = check("prod-[ab").unwrap_err();
        assert!(error.contains("\"prod-[ab\" is not a glob"), "{error}");
        assert!(check("prod-[ab]*").is_ok());
        assert!(glob_match("prod-[ab", "prod-[ab"));
        assert!(!glob_match("prod-[ab", "prod-a"));
    }
}
