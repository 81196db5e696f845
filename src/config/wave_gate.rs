//! When a propagation's next wave may start, as `config.yaml`'s `waveGate` spells it: `sync`
//! (every cell of the wave in sync), `healthy` (in sync and its live object Healthy) or
//! `healthy for N s` (in sync and continuously Healthy for N seconds). Parsing only: it must
//! not know what a wave is or follow one.

use std::fmt;

/// The condition every cell of a wave meets before the next wave starts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WaveGate {
    /// In sync: what the cluster holds matches the fleet; health is not looked at.
    Sync,
    /// In sync, and the live object Healthy for at least `for_ms` without a break (0: as
    /// soon as it is Healthy). Kinds without a notion of health need only be in sync.
    Healthy { for_ms: u64 },
}

impl Default for WaveGate {
    fn default() -> Self {
        WaveGate::Healthy { for_ms: 0 }
    }
}

/// How the gate is written, for messages.
pub const WAVE_GATE_FORMS: &str = "sync, healthy, or healthy for N s (e.g. healthy for 30s)";

/// The longest hold `healthy for` accepts: a day.
const LONGEST_HOLD_SECONDS: u64 = 86_400;

impl WaveGate {
    /// Parses `sync`, `healthy`, `healthy for 30s`, `healthy for 30 seconds`, `healthy for 2m`.
    pub fn parse(text: &str) -> Result<WaveGate, String> {
        let words: Vec<String> = text
            .split_whitespace()
            .map(str::to_ascii_lowercase)
            .collect();
        let words: Vec<&str> = words.iter().map(String::as_str).collect();
        let unknown = || format!("{text:?} is not a wave gate; write {WAVE_GATE_FORMS}");
        match words.as_slice() {
            ["sync"] => Ok(WaveGate::Sync),
            ["healthy"] => Ok(WaveGate::default()),
            ["healthy", "for", amount] => hold(text, amount, ""),
            ["healthy", "for", amount, unit] => hold(text, amount, unit),
            _ => Err(unknown()),
        }
    }

    /// Whether the gate looks at live health at all.
    pub fn wants_health(self) -> bool {
        matches!(self, WaveGate::Healthy { .. })
    }
}

/// `30s`, `30 s`, `30 seconds`, `2m`, `2 minutes`.
fn hold(text: &str, amount: &str, unit: &str) -> Result<WaveGate, String> {
    let digits = amount.trim_end_matches(|c: char| c.is_ascii_alphabetic());
    let unit = if unit.is_empty() {
        &amount[digits.len()..]
    } else if digits.len() == amount.len() || digits.is_empty() {
        unit
    } else {
        return Err(format!(
            "{text:?}: the hold has two units; write e.g. healthy for 30s"
        ));
    };
    let number: u64 = digits.parse().map_err(|_| {
        format!("{text:?}: {amount:?} is not a whole number of seconds; write e.g. healthy for 30s")
    })?;
    let seconds = match unit {
        "" | "s" | "sec" | "secs" | "second" | "seconds" => Some(number),
        "m" | "min" | "mins" | "minute" | "minutes" => number.checked_mul(60),
        other => {
            return Err(format!(
                "{text:?}: unknown unit {other:?}; use s (seconds) or m (minutes)"
            ));
        }
    };
    match seconds {
        Some(seconds) if seconds <= LONGEST_HOLD_SECONDS => Ok(WaveGate::Healthy {
            for_ms: seconds * 1000,
        }),
        _ => Err(format!(
            "{text:?}: the hold is longer than a day ({LONGEST_HOLD_SECONDS} s)"
        )),
    }
}

impl fmt::Display for WaveGate {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            WaveGate::Sync => f.write_str("in sync"),
            WaveGate::Healthy { for_ms: 0 } => f.write_str("in sync and Healthy"),
            WaveGate::Healthy { for_ms } => {
                write!(f, "in sync and Healthy for {} s", for_ms / 1000)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_written_form_reads_as_its_gate() {
        assert_eq!(WaveGate::parse("sync"), Ok(WaveGate::Sync));
        assert_eq!(
            WaveGate::parse("Healthy"),
            Ok(WaveGate::Healthy { for_ms: 0 })
        );
        for text in [
            "healthy for 30s",
            "healthy for 30 s",
            "healthy for 30 seconds",
        ] {
            assert_eq!(
                WaveGate::parse(text),
                Ok(WaveGate::Healthy { for_ms: 30_000 }),
                "{text}"
            );
        }
        assert_eq!(
            WaveGate::parse("healthy for 2m"),
            Ok(WaveGate::Healthy { for_ms: 120_000 })
        );
        assert_eq!(WaveGate::default(), WaveGate::Healthy { for_ms: 0 });
    }

    #[test]
    fn mistakes_say_what_to_write() {
        for (text, says) in [
            ("green", "sync, healthy"),
            ("healthy for", "sync, healthy"),
            ("healthy for ten s", "whole number"),
            ("healthy for 30h", "unknown unit"),
            ("healthy for 30s s", "two units"),
            ("healthy for 999999 minutes", "longer than a day"),
            ("healthy for -3s", "whole number"),
        ] {
            let error = WaveGate::parse(text).expect_err(text);
            assert!(error.contains(says), "{text}: {error}");
        }
    }
}
