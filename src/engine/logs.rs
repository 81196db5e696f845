//! Logs across the fleet, the pure part: a line as the API server sends it with
//! `timestamps=true` read into time and text, `--since` read as kubectl reads it, the order in
//! which lines of many streams are written (by time, each stream's own order kept), and a line
//! printed with its cluster, pod and container (colour per cluster) or as one JSON object. It
//! must not do I/O, read a clock or hold more than one waiting line per stream.

use k8s_openapi::jiff::Timestamp;
use serde::Serialize;

/// One line one container printed, on one cluster.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct LogLine {
    pub cluster: String,
    pub namespace: String,
    pub pod: String,
    pub container: String,
    /// When the container printed it (the kubelet's time), if the server said.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub time: Option<Timestamp>,
    pub text: String,
}

/// A line the server sent with `timestamps=true`: `2026-01-02T03:04:05.123456789Z text`. A line
/// without a leading timestamp is kept whole, with no time.
pub fn split_timestamp(raw: &str) -> (Option<Timestamp>, &str) {
    let raw = raw.strip_suffix('\r').unwrap_or(raw);
    match raw.split_once(' ') {
        Some((first, rest)) => match first.parse::<Timestamp>() {
            Ok(at) => (Some(at), rest),
            Err(_) => (None, raw),
        },
        None => match raw.parse::<Timestamp>() {
            // A container that printed an empty line.
            Ok(at) => (Some(at), ""),
            Err(_) => (None, raw),
        },
    }
}

/// `--since` as kubectl takes it (Go's durations: `90s`, `5m`, `1h30m`, `1.5h`), in whole
/// seconds, at least one.
pub fn parse_since(text: &str) -> Result<u64, String> {
    let bad = || format!("--since {text:?}: expected a duration such as 30s, 5m, 2h or 1h30m");
    let mut rest = text.trim();
    if rest.is_empty() {
        return Err(bad());
    }
    let mut total = 0.0f64;
    while !rest.is_empty() {
        let number_end = rest
            .find(|c: char| !(c.is_ascii_digit() || c == '.'))
            .ok_or_else(bad)?;
        let number: f64 = rest[..number_end].parse().map_err(|_| bad())?;
        rest = &rest[number_end..];
        let unit_end = rest
            .find(|c: char| c.is_ascii_digit() || c == '.')
            .unwrap_or(rest.len());
        let scale = match &rest[..unit_end] {
            "ns" => 1e-9,
            "us" | "µs" => 1e-6,
            "ms" => 1e-3,
            "s" => 1.0,
            "m" => 60.0,
            "h" => 3600.0,
            _ => return Err(bad()),
        };
        total += number * scale;
        rest = &rest[unit_end..];
    }
    if total <= 0.0 || !total.is_finite() {
        return Err(format!("--since {text:?}: the duration must be positive"));
    }
    // The API takes whole seconds; kubectl rounds a fraction up.
    Ok(total.ceil() as u64)
}

/// The heads of many line streams, one waiting line each at most, written in time order. A
/// stream's lines keep their order; lines without a time sort as they come (before timed ones
/// of other streams, which is all that can be said of them).
#[derive(Debug, Default)]
pub struct Interleave {
    heads: Vec<Option<LogLine>>,
    open: Vec<bool>,
}

impl Interleave {
    /// A new stream; its index is what `offer` and `close` take.
    pub fn add_stream(&mut self) -> usize {
        self.heads.push(None);
        self.open.push(true);
        self.heads.len() - 1
    }

    /// Whether stream `index` has room for its next line.
    pub fn wants(&self, index: usize) -> bool {
        self.open.get(index).copied().unwrap_or(false)
            && self.heads.get(index).is_some_and(Option::is_none)
    }

    /// Stream `index`'s next line; it must have room (`wants`).
    pub fn offer(&mut self, index: usize, line: LogLine) {
        if let Some(head) = self.heads.get_mut(index) {
            *head = Some(line);
        }
    }

    /// Stream `index` ended: it holds back nothing any more.
    pub fn close(&mut self, index: usize) {
        if let Some(open) = self.open.get_mut(index) {
            *open = false;
        }
    }

    /// Whether every stream has ended and every line was taken.
    pub fn finished(&self) -> bool {
        self.open.iter().all(|open| !open) && self.heads.iter().all(Option::is_none)
    }

    /// The earliest waiting line, taken only when no open stream could still send an earlier
    /// one (each has a line waiting): the order is then exact.
    pub fn next_in_order(&mut self) -> Option<LogLine> {
        let waiting = self
            .heads
            .iter()
            .zip(&self.open)
            .any(|(head, open)| *open && head.is_none());
        if waiting {
            return None;
        }
        self.take_earliest()
    }

    /// The earliest waiting line, whatever the empty streams may still send (a follower's
    /// quiet stream must not hold the others back).
    pub fn take_earliest(&mut self) -> Option<LogLine> {
        let index = self
            .heads
            .iter()
            .enumerate()
            .filter_map(|(index, head)| head.as_ref().map(|line| (line.time, index)))
            .min()
            .map(|(_, index)| index)?;
        self.heads.get_mut(index).and_then(Option::take)
    }
}

/// How lines are printed.
#[derive(Debug, Clone, Copy, Default)]
pub struct Style {
    /// ANSI colour for the cluster and pod.
    pub colour: bool,
    /// The container's time before its text, as `kubectl logs --timestamps` prints it.
    pub timestamps: bool,
}

/// A time as `kubectl logs --timestamps` prints it: UTC, nine fractional digits.
pub fn fixed_time(at: Timestamp) -> String {
    format!(
        "{}.{:09}Z",
        at.strftime("%Y-%m-%dT%H:%M:%S"),
        at.subsec_nanosecond()
    )
}

/// Colours clusters are told apart by, in turn (ANSI foreground codes).
const PALETTE: [u8; 6] = [36, 33, 35, 32, 34, 31];

/// A cluster's colour: the same for the same position in the fleet's order.
pub fn cluster_colour(position: usize) -> u8 {
    PALETTE[position % PALETTE.len()]
}

/// One line as printed: `CLUSTER POD CONTAINER [TIME] TEXT`, the cluster and pod in the
/// cluster's colour when `style.colour`. The text is the container's own, untouched but for
/// control characters, which are shown escaped (a log must not drive the terminal).
pub fn format_line(line: &LogLine, colour: u8, style: Style) -> String {
    let mut out = String::new();
    if style.colour {
        out.push_str(&format!(
            "\x1b[{colour}m{} {}\x1b[0m \x1b[2m{}\x1b[0m ",
            line.cluster, line.pod, line.container
        ));
    } else {
        out.push_str(&format!(
            "{} {} {} ",
            line.cluster, line.pod, line.container
        ));
    }
    if style.timestamps
        && let Some(at) = line.time
    {
        out.push_str(&format!("{} ", fixed_time(at)));
    }
    out.push_str(&crate::safe_text::printable(&line.text, false));
    out
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn line(cluster: &str, at: Option<&str>, text: &str) -> LogLine {
        LogLine {
            cluster: cluster.into(),
            namespace: "shop".into(),
            pod: "web-1".into(),
            container: "web".into(),
            time: at.map(|at| at.parse().unwrap()),
            text: text.into(),
        }
    }

    #[test]
    fn a_timestamped_line_splits_and_a_bare_one_is_kept_whole() {
        let (at, text) = split_timestamp("2026-01-02T03:04:05.123456789Z hello world");
        assert_eq!(at.unwrap().to_string(), "2026-01-02T03:04:05.123456789Z");
        assert_eq!(text, "hello world");
        assert_eq!(split_timestamp("no time here"), (None, "no time here"));
        let (at, text) = split_timestamp("2026-01-02T03:04:05Z");
        assert!(at.is_some());
        assert_eq!(text, "");
    }

    #[test]
    fn since_reads_go_durations() {
        assert_eq!(parse_since("90s"), Ok(90));
        assert_eq!(parse_since("5m"), Ok(300));
        assert_eq!(parse_since("1h30m"), Ok(5400));
        assert_eq!(parse_since("1.5h"), Ok(5400));
        assert_eq!(parse_since("1500ms"), Ok(2));
        for bad in ["", "5", "m", "5d", "-5m", "0s", "5m x"] {
            assert!(parse_since(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn streams_interleave_by_time_and_keep_their_own_order() {
        let mut merge = Interleave::default();
        let a = merge.add_stream();
        let b = merge.add_stream();
        merge.offer(a, line("a", Some("2026-01-01T00:00:02Z"), "a2"));
        // b has nothing yet: nothing can be written in order.
        assert_eq!(merge.next_in_order(), None);
        merge.offer(b, line("b", Some("2026-01-01T00:00:01Z"), "b1"));
        assert_eq!(merge.next_in_order().unwrap().text, "b1");
        assert!(merge.wants(b) && !merge.wants(a));
        merge.close(b);
        assert_eq!(merge.next_in_order().unwrap().text, "a2");
        assert!(!merge.finished());
        merge.close(a);
        assert!(merge.finished());
    }

    #[test]
    fn a_quiet_stream_does_not_hold_back_a_follower() {
        let mut merge = Interleave::default();
        let a = merge.add_stream();
        let _quiet = merge.add_stream();
        merge.offer(a, line("a", Some("2026-01-01T00:00:02Z"), "a2"));
        assert_eq!(merge.next_in_order(), None);
        assert_eq!(merge.take_earliest().unwrap().text, "a2");
        assert_eq!(merge.take_earliest(), None);
    }

    #[test]
    fn a_line_names_its_cluster_pod_and_container_and_escapes_control_characters() {
        let plain = format_line(
            &line("eu-1", Some("2026-01-01T00:00:01.5Z"), "hi\x1b[2Jthere"),
            36,
            Style {
                colour: false,
                timestamps: true,
            },
        );
        assert_eq!(
            plain,
            "eu-1 web-1 web 2026-01-01T00:00:01.500000000Z hi\\u{1b}[2Jthere"
        );
        let coloured = format_line(
            &line("eu-1", None, "x"),
            36,
            Style {
                colour: true,
                timestamps: true,
            },
        );
        assert!(
            coloured.starts_with("\x1b[36meu-1 web-1\x1b[0m"),
            "{coloured:?}"
        );
        assert!(coloured.ends_with(" x"));
    }
}
