//! The filter language shared by the clusters and resources panes: whitespace-separated terms
//! that must all match — a fuzzy term (`euwest`), a negated term (`!staging`), a label
//! selector (`-l region=eu-west`, `-l env!=prod`, `-l gpu`, `-l !gpu`), a glob (`prod-*`),
//! and the row's cells: `health=degraded` (a cell of that live health), `status=drifted` (a
//! cell in that sync status), matched against the row's running counts.
//! Also how `:kind` matches a kind (`deploy` finds Deployment). A pane's filter is part of the
//! state (`panes.rs` holds it parsed); this file reads only a row's counts from `cells.rs`, and
//! must not import the state or act on it. Parsing reports mistakes as text; matching must not
//! allocate per row more than needed.

use std::collections::BTreeMap;

use fuzzy_matcher::FuzzyMatcher;
use fuzzy_matcher::skim::SkimMatcherV2;

use super::cells::{HealthCounts, KindCounts};
use crate::glob::glob_match;
use crate::model::{HealthKind, StatusKind};

/// One parsed term.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Term {
    Fuzzy(String),
    Glob(String),
    Not(String),
    LabelEquals(String, String),
    LabelNotEquals(String, String),
    LabelExists(String),
    LabelAbsent(String),
    /// A cell of the row has this live health.
    Health(HealthKind),
    /// A cell of the row is in this sync status.
    Status(StatusKind),
}

/// A parsed filter; the empty filter matches everything.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Filter {
    text: String,
    terms: Vec<Term>,
}

/// What a row offers to the filter.
pub struct Candidate<'a> {
    /// The text fuzzy terms match against, e.g. a cluster name or "Deployment shop/web".
    pub text: &'a str,
    pub labels: &'a BTreeMap<String, String>,
}

impl Filter {
    /// Parses filter text; an error names the term that cannot be used and how to write it.
    pub fn parse(text: &str) -> Result<Filter, String> {
        let mut terms = Vec::new();
        let mut words = text.split_whitespace();
        while let Some(word) = words.next() {
            let selector = if word == "-l" {
                Some(
                    words
                        .next()
                        .ok_or("-l needs a label selector, e.g. -l region=eu-west")?,
                )
            } else {
                word.strip_prefix("-l")
                    .filter(|rest| !rest.is_empty())
                    .map(|rest| rest.trim_start_matches('='))
            };
            if let Some(selector) = selector {
                for part in selector.split(',').filter(|part| !part.is_empty()) {
                    terms.push(parse_label(part)?);
                }
            } else if let Some(name) = word.strip_prefix("health=") {
                let kind = HealthKind::parse(name).ok_or_else(|| {
                    format!(
                        "health={name}: unknown health; one of {}",
                        HealthKind::ALL.map(HealthKind::as_str).join(", ")
                    )
                })?;
                terms.push(Term::Health(kind));
            } else if let Some(name) = word.strip_prefix("status=") {
                let kind = StatusKind::parse(name).ok_or_else(|| {
                    format!(
                        "status={name}: unknown status; one of {}",
                        StatusKind::ALL.map(StatusKind::as_str).join(", ")
                    )
                })?;
                terms.push(Term::Status(kind));
            } else if let Some(negated) = word.strip_prefix('!') {
                if negated.is_empty() {
                    return Err("! needs a word after it, e.g. !staging".into());
                }
                terms.push(Term::Not(negated.to_lowercase()));
            } else if word.contains(['*', '?']) {
                terms.push(Term::Glob(word.to_string()));
            } else {
                terms.push(Term::Fuzzy(word.to_string()));
            }
        }
        Ok(Filter {
            text: text.trim().to_string(),
            terms,
        })
    }

    pub fn is_empty(&self) -> bool {
        self.terms.is_empty()
    }

    /// The text the filter was parsed from.
    pub fn text(&self) -> &str {
        &self.text
    }

    /// Whether a row's text and labels match; the terms on its cells are left to
    /// [`Filter::matches_cells`].
    pub fn matches(&self, matcher: &SkimMatcherV2, candidate: &Candidate) -> bool {
        self.terms.iter().all(|term| match term {
            Term::Health(_) | Term::Status(_) => true,
            Term::Fuzzy(pattern) => matcher.fuzzy_match(candidate.text, pattern).is_some(),
            Term::Glob(pattern) => glob_match(pattern, candidate.text),
            Term::Not(word) => !candidate.text.to_lowercase().contains(word.as_str()),
            Term::LabelEquals(key, value) => candidate.labels.get(key) == Some(value),
            Term::LabelNotEquals(key, value) => candidate.labels.get(key) != Some(value),
            Term::LabelExists(key) => candidate.labels.contains_key(key),
            Term::LabelAbsent(key) => !candidate.labels.contains_key(key),
        })
    }

    /// Whether a row's cells match the `health=` and `status=` terms, from its counts.
    pub fn matches_cells(&self, status: &KindCounts, health: &HealthCounts) -> bool {
        self.terms.iter().all(|term| match term {
            Term::Health(kind) => health.get(*kind) > 0,
            Term::Status(kind) => status.get(*kind) > 0,
            _ => true,
        })
    }

    /// Whether the filter looks at cells, so their changes can change what it keeps.
    pub fn looks_at_cells(&self) -> bool {
        self.terms
            .iter()
            .any(|term| matches!(term, Term::Health(_) | Term::Status(_)))
    }
}

fn parse_label(part: &str) -> Result<Term, String> {
    let invalid = |why: &str| {
        format!("label selector {part:?} {why}; write key=value, key!=value, key or !key")
    };
    if let Some((key, value)) = part.split_once("!=") {
        if key.is_empty() {
            return Err(invalid("has no key"));
        }
        return Ok(Term::LabelNotEquals(key.into(), value.into()));
    }
    if let Some((key, value)) = part.split_once('=') {
        let value = value.strip_prefix('=').unwrap_or(value);
        if key.is_empty() {
            return Err(invalid("has no key"));
        }
        return Ok(Term::LabelEquals(key.into(), value.into()));
    }
    if let Some(key) = part.strip_prefix('!') {
        if key.is_empty() {
            return Err(invalid("has no key"));
        }
        return Ok(Term::LabelAbsent(key.into()));
    }
    if part.contains(['<', '>', ' ', '(', ')']) {
        return Err(invalid("uses an operator the filter does not know"));
    }
    Ok(Term::LabelExists(part.into()))
}

/// Whether a kind matches what the operator typed: `deploy` → Deployment, `cm` → ConfigMap
/// (kubectl's short names, [`crate::model::kind_named`]), or any start of the kind.
pub fn kind_matches(kind: &str, typed: &str) -> bool {
    kind.to_lowercase()
        .starts_with(&crate::model::kind_named(typed))
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn labels(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    fn check(filter: &str, text: &str, pairs: &[(&str, &str)]) -> bool {
        let labels = labels(pairs);
        Filter::parse(filter).unwrap().matches(
            &SkimMatcherV2::default(),
            &Candidate {
                text,
                labels: &labels,
            },
        )
    }

    #[test]
    fn cell_terms_match_the_rows_counts() {
        let filter = Filter::parse("health=degraded prod").unwrap();
        assert!(filter.looks_at_cells());
        assert!(
            check("health=Degraded prod", "prod-eu-west-1", &[]),
            "text still matches"
        );
        let mut grid = crate::app::state::cells::CellGrid::new(1, 2);
        grid.set(
            crate::messages::CellRef {
                resource: 0,
                cluster: 1,
            },
            crate::model::CellStatus::Drifted,
            None,
        );
        assert!(!filter.matches_cells(&grid.resource_counts(0), &grid.resource_health(0)));
        grid.set_health(
            crate::messages::CellRef {
                resource: 0,
                cluster: 1,
            },
            Some(crate::model::CellHealth {
                kind: HealthKind::Degraded,
                reason: String::new(),
                since: None,
                rule: None,
            }),
        );
        assert!(filter.matches_cells(&grid.resource_counts(0), &grid.resource_health(0)));
        assert!(!filter.matches_cells(&grid.cluster_counts(0), &grid.cluster_health(0)));
        let drifted = Filter::parse("status=drifted").unwrap();
        assert!(drifted.matches_cells(&grid.cluster_counts(1), &grid.cluster_health(1)));
        assert!(!Filter::parse("prod").unwrap().looks_at_cells());
        let error = Filter::parse("health=wobbly").unwrap_err();
        assert!(
            error.contains("Degraded") && error.contains("wobbly"),
            "{error}"
        );
        assert!(
            Filter::parse("status=shiny")
                .unwrap_err()
                .contains("Drifted")
        );
    }

    #[test]
    fn fuzzy_terms_match_loosely() {
        assert!(check("euw1", "prod-eu-west-1", &[]));
        assert!(check("prod west", "prod-eu-west-1", &[]));
        assert!(!check("uswest", "prod-eu-west-1", &[]));
        assert!(check("", "anything", &[]));
    }

    #[test]
    fn negation_and_globs() {
        assert!(check("!staging", "prod-eu-west-1", &[]));
        assert!(!check("!prod", "prod-eu-west-1", &[]));
        assert!(check("prod-*", "prod-eu-west-1", &[]));
        assert!(!check("prod-*", "staging-eu-west-1", &[]));
    }

    #[test]
    fn label_selectors() {
        let eu = [("region", "eu-west"), ("env", "prod")];
        assert!(check("-l region=eu-west", "x", &eu));
        assert!(check("-lregion=eu-west", "x", &eu));
        assert!(!check("-l region=us-east", "x", &eu));
        assert!(check("-l env!=staging", "x", &eu));
        assert!(check("-l env", "x", &eu));
        assert!(check("-l !gpu", "x", &eu));
        assert!(!check("-l gpu", "x", &eu));
        assert!(check("-l region=eu-west,env=prod", "x", &eu));
        assert!(!check("-l region=eu-west,env=dev", "x", &eu));
    }

    #[test]
    fn mistakes_are_explained() {
        assert!(Filter::parse("-l").unwrap_err().contains("-l needs"));
        assert!(Filter::parse("!").unwrap_err().contains("! needs"));
        assert!(Filter::parse("-l =x").unwrap_err().contains("no key"));
        assert!(Filter::parse("-l a<b").unwrap_err().contains("operator"));
    }

    #[test]
    fn kinds_match_by_short_name_and_prefix() {
        assert!(kind_matches("Deployment", "deploy"));
        assert!(kind_matches("ConfigMap", "cm"));
        assert!(kind_matches("DaemonSet", "daemon"));
        assert!(!kind_matches("Deployment", "svc"));
    }
}
