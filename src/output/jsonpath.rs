//! `-o jsonpath=TEMPLATE` as kubectl reads it: text with `{…}` actions, each a JSONPath
//! relative to the current object (`{.items[*].cluster}`), a quoted literal (`{"\n"}`), or
//! `{range …}` … `{end}` repeating its body for every match. Paths are evaluated by the
//! `jsonpath-rust` crate (RFC 9535); this module only reads kubectl's template around them. It
//! must not know which command's output it prints.

use std::fmt;
use std::str::FromStr;

use jsonpath_rust::JsonPath;
use serde_json::Value;

/// A parsed template; compares equal by its text.
#[derive(Clone)]
pub struct Template {
    text: String,
    nodes: Vec<Node>,
}

#[derive(Debug, Clone)]
enum Node {
    Text(String),
    Path(String),
    Range(String, Vec<Node>),
}

impl PartialEq for Template {
    fn eq(&self, other: &Self) -> bool {
        self.text == other.text
    }
}

impl Eq for Template {}

impl fmt::Debug for Template {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "jsonpath={}", self.text)
    }
}

impl FromStr for Template {
    type Err = String;

    fn from_str(text: &str) -> Result<Template, String> {
        let mut stack: Vec<(Option<String>, Vec<Node>)> = vec![(None, Vec::new())];
        let mut rest = text;
        while !rest.is_empty() {
            let Some(open) = rest.find('{') else {
                push(&mut stack, Node::Text(rest.to_string()));
                break;
            };
            if open > 0 {
                push(&mut stack, Node::Text(rest[..open].to_string()));
            }
            let after = &rest[open + 1..];
            let close = closing_brace(after)
                .ok_or_else(|| format!("`{{` at byte {open} has no closing `}}`"))?;
            let action = after[..close].trim();
            rest = &after[close + 1..];
            if let Some(path) = action.strip_prefix("range ") {
                stack.push((Some(rooted(path.trim())?), Vec::new()));
            } else if action == "end" {
                let (Some(path), body) = stack.pop().unwrap_or_default() else {
                    return Err("`{end}` without a `{range …}` before it".into());
                };
                push(&mut stack, Node::Range(path, body));
            } else if action.starts_with('"') {
                push(&mut stack, Node::Text(literal(action)?));
            } else {
                push(&mut stack, Node::Path(rooted(action)?));
            }
        }
        match stack.pop() {
            Some((None, nodes)) if stack.is_empty() => Ok(Template {
                text: text.to_string(),
                nodes,
            }),
            _ => Err("a `{range …}` has no `{end}`".into()),
        }
    }
}

fn push(stack: &mut [(Option<String>, Vec<Node>)], node: Node) {
    if let Some((_, nodes)) = stack.last_mut() {
        nodes.push(node);
    }
}

/// The end of an action: the first `}` outside a quoted literal.
fn closing_brace(text: &str) -> Option<usize> {
    let mut quoted = false;
    let mut escaped = false;
    for (at, c) in text.char_indices() {
        match c {
            _ if escaped => escaped = false,
            '\\' if quoted => escaped = true,
            '"' => quoted = !quoted,
            '}' if !quoted => return Some(at),
            _ => {}
        }
    }
    None
}

/// A kubectl path (`.items[*]`, `@.name`, `$.x`) as an RFC 9535 query, checked now so a bad
/// one is an input error before anything runs.
fn rooted(path: &str) -> Result<String, String> {
    let query = if let Some(rest) = path.strip_prefix('@') {
        format!("${rest}")
    } else if path.starts_with('$') {
        path.to_string()
    } else if path.starts_with('.') || path.starts_with('[') {
        format!("${path}")
    } else {
        return Err(format!(
            "`{{{path}}}`: a path starts with `.`, e.g. {{.items[*].cluster}}"
        ));
    };
    jsonpath_rust::parser::parse_json_path(&query).map_err(|err| format!("`{{{path}}}`: {err}"))?;
    Ok(query)
}

/// A quoted literal with kubectl's escapes (`\n`, `\t`, `\\`, `\"`).
fn literal(action: &str) -> Result<String, String> {
    let inner = action
        .strip_prefix('"')
        .and_then(|rest| rest.strip_suffix('"'))
        .ok_or_else(|| format!("`{{{action}}}`: a literal is one quoted string"))?;
    let mut out = String::new();
    let mut chars = inner.chars();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        match chars.next() {
            Some('n') => out.push('\n'),
            Some('t') => out.push('\t'),
            Some('r') => out.push('\r'),
            Some(other) => out.push(other),
            None => out.push('\\'),
        }
    }
    Ok(out)
}

impl Template {
    /// The template applied to `value`. A path that matches nothing prints nothing, as
    /// kubectl does with its default `--allow-missing-template-keys`.
    pub fn render(&self, value: &Value) -> String {
        let mut out = String::new();
        render_nodes(&self.nodes, value, &mut out);
        out
    }
}

fn render_nodes(nodes: &[Node], value: &Value, out: &mut String) {
    for node in nodes {
        match node {
            Node::Text(text) => out.push_str(text),
            Node::Path(path) => {
                let found = value.query(path).unwrap_or_default();
                let texts: Vec<String> = found.into_iter().map(scalar).collect();
                out.push_str(&texts.join(" "));
            }
            Node::Range(path, body) => {
                for item in value.query(path).unwrap_or_default() {
                    render_nodes(body, item, out);
                }
            }
        }
    }
}

/// A match as kubectl prints it: strings bare, everything else as JSON.
fn scalar(value: &Value) -> String {
    match value {
        Value::String(text) => text.clone(),
        other => other.to_string(),
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn apply(template: &str, value: &Value) -> String {
        template.parse::<Template>().unwrap().render(value)
    }

    #[test]
    fn paths_literals_and_ranges_print_as_kubectl_prints_them() {
        let items = serde_json::json!({"items": [
            {"cluster": "eu-1", "sync": "InSync", "replicas": 3},
            {"cluster": "us-1", "sync": "Drifted", "replicas": 2},
        ]});
        assert_eq!(apply("{.items[*].cluster}", &items), "eu-1 us-1");
        assert_eq!(
            apply(
                r#"{range .items[*]}{.cluster}{"\t"}{.sync}{"\n"}{end}"#,
                &items
            ),
            "eu-1\tInSync\nus-1\tDrifted\n"
        );
        assert_eq!(apply("n={.items[0].replicas}", &items), "n=3");
        assert_eq!(
            apply("{.items[?@.sync=='Drifted'].cluster}", &items),
            "us-1"
        );
        assert_eq!(
            apply("{.missing}", &items),
            "",
            "missing keys print nothing"
        );
        assert_eq!(apply("{.items[1]}", &items).chars().next(), Some('{'));
    }

    #[test]
    fn a_bad_template_says_what_is_wrong() {
        for (template, says) in [
            ("{.items[*]", "no closing"),
            ("{range .items[*]}{.x}", "no `{end}`"),
            ("{end}", "without a `{range"),
            ("{items}", "starts with `.`"),
            ("{.items[}", "{.items[}"),
        ] {
            let err = template.parse::<Template>().unwrap_err();
            assert!(err.contains(says), "{template}: {err}");
        }
    }
}
