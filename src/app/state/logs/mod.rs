//! The console's log pane (`L`): the lines the streams sent, kept in a ring of at most
//! [`CAPACITY`], each printed once as `flotilla logs --timestamps` prints it (the engine's
//! `format_line`), the time shown or left out as the operator chooses; where the view stands
//! (following the newest line, or scrolled back), whether reading into the pane is paused
//! (lines held, and counted once dropped), the cluster and the container the pane is narrowed
//! to, the search and its match, whether long lines wrap, and which line a copy takes. Plain
//! data and its pure steps; it must not ask a backend (`app/logs.rs` sends the effect), touch
//! the terminal (the console's loop writes a copy) nor draw.

use std::borrow::Cow;
use std::collections::VecDeque;

use crate::engine::logs::{LogLine, Style, format_line};
use crate::messages::{CellRef, LogItem, LogLease};

/// Lines the pane keeps, and lines a paused pane holds; older ones are dropped and counted.
pub const CAPACITY: usize = 10_000;

/// One line of the pane.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PaneLine {
    /// Its place in everything the pane received, so a match survives older lines leaving.
    pub seq: u64,
    /// The cluster, as an index into [`LogPane::clusters`].
    pub cluster: usize,
    /// The container, as an index into [`LogPane::containers`] (`None` for a note).
    pub container: Option<usize>,
    /// Bytes of `text` that are the `CLUSTER POD CONTAINER ` prefix (0 for a note).
    pub prefix: usize,
    /// Bytes of `text` after the prefix that are the time the container printed the line and
    /// a space (0 when the server sent no time, and for a note).
    pub stamp: usize,
    /// The line as `flotilla logs --timestamps` prints it without colour, control characters
    /// escaped.
    pub text: String,
    /// Why something could not be read, rather than a container's line.
    pub note: bool,
}

impl PaneLine {
    /// The `CLUSTER POD CONTAINER ` prefix.
    pub fn prefix(&self) -> &str {
        self.text.get(..self.prefix).unwrap_or("")
    }

    /// The time the container printed the line and a space, or nothing.
    pub fn stamp(&self) -> &str {
        self.text
            .get(self.prefix..self.prefix + self.stamp)
            .unwrap_or("")
    }

    /// What the container printed (escaped), or the note.
    pub fn body(&self) -> &str {
        self.text
            .get(self.prefix + self.stamp..)
            .unwrap_or(&self.text)
    }

    /// The line as the pane shows it: with its time, or without.
    pub fn shown(&self, timestamps: bool) -> Cow<'_, str> {
        if timestamps || self.stamp == 0 {
            Cow::Borrowed(&self.text)
        } else {
            Cow::Owned(format!("{}{}", self.prefix(), self.body()))
        }
    }
}

/// The log pane.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LogPane {
    /// Which opening of the streams the pane shows; their lines carry it.
    pub stream: u64,
    /// `Kind/namespace/name` of the workload.
    pub workload: String,
    /// The cells read, for reopening (previous container, every cluster of the row).
    pub cells: Vec<CellRef>,
    /// The clusters read: their position in the fleet's order (for their colour) and name.
    pub clusters: Vec<(usize, String)>,
    /// Whether the pane shows each container's previous run (`--previous`).
    pub previous: bool,
    /// Dropping it stops the streams.
    pub lease: LogLease,
    lines: VecDeque<PaneLine>,
    /// Lines read while paused, waiting to join the pane.
    held: VecDeque<PaneLine>,
    next_seq: u64,
    /// Lines that left the pane (or never joined it) to keep it bounded.
    pub dropped: usize,
    /// Lines a paused pane could not hold.
    pub held_dropped: usize,
    pub paused: bool,
    /// New lines scroll in (the view stays at the newest).
    pub follow: bool,
    /// Lines of the shown ones hidden below the view (0: at the newest).
    pub scroll: usize,
    pub wrap: bool,
    /// The cluster the pane is narrowed to (an index into `clusters`).
    pub only: Option<usize>,
    /// The container names the pane's lines have named, in the order they first came (as
    /// many as the streams it follows, at most).
    pub containers: Vec<String>,
    /// The container the pane is narrowed to (an index into `containers`).
    pub only_container: Option<usize>,
    /// How many kept lines the narrowing shows (kept as lines come and go).
    narrowed_count: usize,
    /// Lines show the time the container printed them (`--timestamps`).
    pub timestamps: bool,
    /// The search being typed.
    pub typing: Option<String>,
    /// The last search, and the line it found.
    pub search: Option<String>,
    pub found: Option<u64>,
}

impl LogPane {
    pub fn new(
        stream: u64,
        workload: String,
        cells: Vec<CellRef>,
        clusters: Vec<(usize, String)>,
        previous: bool,
        lease: LogLease,
    ) -> LogPane {
        LogPane {
            stream,
            workload,
            cells,
            clusters,
            previous,
            lease,
            lines: VecDeque::new(),
            held: VecDeque::new(),
            next_seq: 0,
            dropped: 0,
            held_dropped: 0,
            paused: false,
            follow: true,
            scroll: 0,
            wrap: false,
            only: None,
            containers: Vec::new(),
            only_container: None,
            narrowed_count: 0,
            timestamps: false,
            typing: None,
            search: None,
            found: None,
        }
    }

    /// Takes what the streams sent: into the pane, or held while paused; `skipped` lines were
    /// left out before they reached the console.
    pub fn receive(&mut self, items: Vec<LogItem>, skipped: usize) {
        if self.paused {
            self.held_dropped += skipped;
        } else {
            self.dropped += skipped;
        }
        for item in items {
            let line = self.line_of(item);
            if self.paused {
                if self.held.len() == CAPACITY {
                    self.held.pop_front();
                    self.held_dropped += 1;
                }
                self.held.push_back(line);
            } else {
                self.push(line);
            }
        }
    }

    fn line_of(&mut self, item: LogItem) -> PaneLine {
        let seq = self.next_seq;
        self.next_seq += 1;
        match item {
            LogItem::Line(line) => self.printed(seq, &line),
            LogItem::Note {
                cluster,
                text,
                failed,
            } => PaneLine {
                seq,
                cluster: self.cluster_index(&cluster),
                container: None,
                prefix: 0,
                stamp: 0,
                text: format!(
                    "{}: {}{}",
                    if failed { "error" } else { "note" },
                    if cluster.is_empty() {
                        String::new()
                    } else {
                        format!("{cluster}: ")
                    },
                    crate::safe_text::printable(&text, false)
                ),
                note: true,
            },
        }
    }

    fn printed(&mut self, seq: u64, line: &LogLine) -> PaneLine {
        let style = Style {
            colour: false,
            timestamps: true,
        };
        let text = format_line(line, 0, style);
        let prefix =
            (line.cluster.len() + line.pod.len() + line.container.len() + 3).min(text.len());
        // The time is one word (`fixed_time` has no space) and a space after the prefix.
        let stamp = match line.time {
            Some(_) => text
                .get(prefix..)
                .and_then(|rest| rest.find(' '))
                .map_or(0, |end| end + 1),
            None => 0,
        };
        PaneLine {
            seq,
            cluster: self.cluster_index(&line.cluster),
            container: Some(self.container_index(&line.container)),
            prefix,
            stamp,
            text,
            note: false,
        }
    }

    /// The container's index in `containers`, named there when it is new.
    fn container_index(&mut self, name: &str) -> usize {
        match self.containers.iter().position(|known| known == name) {
            Some(at) => at,
            None => {
                self.containers.push(name.to_string());
                self.containers.len() - 1
            }
        }
    }

    fn cluster_index(&self, name: &str) -> usize {
        self.clusters
            .iter()
            .position(|(_, known)| known == name)
            .unwrap_or(0)
    }

    fn push(&mut self, line: PaneLine) {
        if self.lines.len() == CAPACITY
            && let Some(oldest) = self.lines.pop_front()
        {
            self.dropped += 1;
            if self.narrowed() && self.shows(&oldest) {
                self.narrowed_count -= 1;
            }
        }
        let shown = self.shows(&line);
        if shown && self.narrowed() {
            self.narrowed_count += 1;
        }
        self.lines.push_back(line);
        // Scrolled back, the view stays on the lines it shows.
        if shown && !self.follow {
            self.scroll += 1;
        }
        self.scroll = self.scroll.min(self.shown_len().saturating_sub(1));
    }

    /// Whether the pane shows only some of its lines (one cluster's, one container's).
    fn narrowed(&self) -> bool {
        self.only.is_some() || self.only_container.is_some()
    }

    /// Whether the narrowing lets `line` show. Narrowed to a container, the notes stay: they
    /// say why a stream is not read, and belong to no container.
    fn shows(&self, line: &PaneLine) -> bool {
        self.only.is_none_or(|only| only == line.cluster)
            && self
                .only_container
                .is_none_or(|only| line.note || line.container == Some(only))
    }

    /// The lines the pane shows (of the cluster and container it is narrowed to), oldest
    /// first.
    pub fn shown(&self) -> impl DoubleEndedIterator<Item = &PaneLine> {
        self.lines.iter().filter(|line| self.shows(line))
    }

    pub fn shown_len(&self) -> usize {
        if self.narrowed() {
            self.narrowed_count
        } else {
            self.lines.len()
        }
    }

    /// Counts the lines the narrowing shows anew, after it changed; the view goes to the
    /// newest of them.
    fn narrowing_changed(&mut self) {
        self.narrowed_count = if self.narrowed() {
            self.lines.iter().filter(|line| self.shows(line)).count()
        } else {
            0
        };
        self.bottom();
    }

    /// Lines held while paused.
    pub fn held(&self) -> usize {
        self.held.len()
    }

    /// Scrolls back `n` lines: the view stops following.
    pub fn scroll_up(&mut self, n: usize) {
        self.follow = false;
        self.scroll = (self.scroll + n).min(self.shown_len().saturating_sub(1));
    }

    /// Scrolls on `n` lines; at the newest line the view follows again.
    pub fn scroll_down(&mut self, n: usize) {
        self.scroll = self.scroll.saturating_sub(n);
        if self.scroll == 0 {
            self.follow = true;
        }
    }

    /// To the oldest line kept.
    pub fn top(&mut self) {
        self.scroll_up(usize::MAX / 2);
    }

    /// To the newest line, following.
    pub fn bottom(&mut self) {
        self.scroll = 0;
        self.follow = true;
    }

    pub fn toggle_follow(&mut self) {
        if self.follow {
            self.follow = false;
        } else {
            self.bottom();
        }
    }

    /// Pauses reading into the pane, or resumes: the held lines join it.
    pub fn toggle_pause(&mut self) {
        self.paused = !self.paused;
        if !self.paused {
            self.dropped += self.held_dropped;
            self.held_dropped = 0;
            while let Some(line) = self.held.pop_front() {
                self.push(line);
            }
        }
    }

    /// Narrows the pane to the next cluster (or the one before), then to none.
    pub fn cycle_cluster(&mut self, forward: bool) {
        let count = self.clusters.len();
        self.only = match (self.only, forward) {
            _ if count < 2 => None,
            (None, true) => Some(0),
            (None, false) => Some(count - 1),
            (Some(at), true) if at + 1 < count => Some(at + 1),
            (Some(at), false) if at > 0 => Some(at - 1),
            _ => None,
        };
        self.narrowing_changed();
    }

    /// Narrows the pane to the next container name (or the one before), in the names' order,
    /// then to none: as `-c` does, but over the lines already read, which stay.
    pub fn cycle_container(&mut self, forward: bool) {
        let mut order: Vec<usize> = (0..self.containers.len()).collect();
        order.sort_by(|a, b| self.containers[*a].cmp(&self.containers[*b]));
        let at = self
            .only_container
            .and_then(|only| order.iter().position(|index| *index == only));
        let next = match (at, forward) {
            (None, true) => order.first(),
            (None, false) => order.last(),
            (Some(at), true) => order.get(at + 1),
            (Some(at), false) => at.checked_sub(1).and_then(|at| order.get(at)),
        };
        self.only_container = next.copied();
        self.narrowing_changed();
    }

    /// The container the pane is narrowed to, by name.
    pub fn only_container_name(&self) -> Option<&str> {
        self.only_container
            .and_then(|at| self.containers.get(at))
            .map(String::as_str)
    }

    /// The line `y` copies, as the pane shows it: the search's match while there is a search
    /// and its match is still kept, else the newest line in view.
    pub fn line_to_copy(&self) -> Option<String> {
        let shown: Vec<&PaneLine> = self.shown().collect();
        let matched = self
            .search
            .as_ref()
            .and(self.found)
            .and_then(|seq| shown.iter().find(|line| line.seq == seq));
        let line = matched.or_else(|| {
            let newest_in_view = shown.len().checked_sub(self.scroll + 1)?;
            shown.get(newest_in_view)
        })?;
        Some(line.shown(self.timestamps).into_owned())
    }

    /// Searches for `query` from the newest line back; the view moves to the match.
    pub fn search_for(&mut self, query: String) -> bool {
        self.found = None;
        self.search = (!query.is_empty()).then_some(query);
        self.find(true)
    }

    /// The next match of the search: older (`n`) or newer (`N`) than the current one (or,
    /// with none, than the view's newest line). False when there is none.
    pub fn find(&mut self, older: bool) -> bool {
        let Some(query) = self.search.clone() else {
            return false;
        };
        let query = query.to_lowercase();
        let shown: Vec<&PaneLine> = self.shown().collect();
        let len = shown.len();
        let from = match self
            .found
            .and_then(|seq| shown.iter().position(|l| l.seq == seq))
        {
            Some(at) => at,
            None if older => len.saturating_sub(self.scroll),
            None => len.saturating_sub(self.scroll + 1),
        };
        let timestamps = self.timestamps;
        let hit = |line: &&PaneLine| line.shown(timestamps).to_lowercase().contains(&query);
        let at = if older {
            shown[..from.min(len)].iter().rposition(hit)
        } else {
            let start = (from + 1).min(len);
            shown[start..].iter().position(hit).map(|at| at + start)
        };
        let Some(at) = at else {
            return false;
        };
        self.found = Some(shown[at].seq);
        self.follow = false;
        self.scroll = len - 1 - at;
        true
    }

    /// What the pane's status says of pausing and bounds, when there is anything to say.
    pub fn marker(&self) -> Option<String> {
        if self.paused {
            return Some(format!(
                "paused, {} lines held{}",
                self.held.len(),
                if self.held_dropped > 0 {
                    format!(", {} dropped", self.held_dropped)
                } else {
                    String::new()
                }
            ));
        }
        (self.dropped > 0).then(|| format!("{} older lines dropped", self.dropped))
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use k8s_openapi::jiff::Timestamp;

    fn pane() -> LogPane {
        let (lease, _) = LogLease::new();
        LogPane::new(
            1,
            "Deployment/shop/web".into(),
            Vec::new(),
            vec![(0, "eu-1".into()), (3, "us-1".into())],
            false,
            lease,
        )
    }

    fn line(cluster: &str, text: &str) -> LogItem {
        LogItem::Line(LogLine {
            cluster: cluster.into(),
            namespace: "shop".into(),
            pod: "web-1".into(),
            container: "web".into(),
            time: None,
            text: text.into(),
        })
    }

    fn texts(pane: &LogPane) -> Vec<String> {
        pane.shown().map(|l| l.body().to_string()).collect()
    }

    /// A line of `container` on eu-1 printed at `second` past the epoch.
    fn timed(container: &str, second: i64, text: &str) -> LogItem {
        LogItem::Line(LogLine {
            cluster: "eu-1".into(),
            namespace: "shop".into(),
            pod: "web-1".into(),
            container: container.into(),
            time: Timestamp::from_second(second).ok(),
            text: text.into(),
        })
    }

    #[test]
    fn the_ring_keeps_the_newest_lines_and_counts_the_rest() {
        let mut pane = pane();
        let items = (0..CAPACITY + 25)
            .map(|n| line("eu-1", &n.to_string()))
            .collect();
        pane.receive(items, 5);
        assert_eq!(pane.shown_len(), CAPACITY);
        assert_eq!(pane.dropped, 30);
        assert_eq!(texts(&pane).first().unwrap(), "25");
        assert_eq!(pane.marker().unwrap(), "30 older lines dropped");
        // Lines print as `flotilla logs` prints them, control characters escaped.
        pane.receive(vec![line("us-1", "a\x1b[2Jb")], 0);
        assert_eq!(
            pane.shown().last().unwrap().text,
            "us-1 web-1 web a\\u{1b}[2Jb"
        );
    }

    #[test]
    fn a_paused_pane_holds_lines_until_it_resumes() {
        let mut pane = pane();
        pane.receive(vec![line("eu-1", "one")], 0);
        pane.toggle_pause();
        pane.receive(vec![line("eu-1", "two"), line("eu-1", "three")], 0);
        assert_eq!(texts(&pane), ["one"]);
        assert_eq!(pane.marker().unwrap(), "paused, 2 lines held");
        pane.toggle_pause();
        assert_eq!(texts(&pane), ["one", "two", "three"]);
        assert_eq!(pane.marker(), None);
        // What a paused pane cannot hold is dropped, and said.
        pane.toggle_pause();
        let flood = (0..CAPACITY + 7)
            .map(|n| line("eu-1", &n.to_string()))
            .collect();
        pane.receive(flood, 0);
        assert_eq!(
            pane.marker().unwrap(),
            format!("paused, {CAPACITY} lines held, 7 dropped")
        );
    }

    #[test]
    fn scrolling_back_stops_following_and_the_view_stays_put() {
        let mut pane = pane();
        pane.receive((0..10).map(|n| line("eu-1", &n.to_string())).collect(), 0);
        pane.scroll_up(3);
        assert!(!pane.follow);
        pane.receive(vec![line("eu-1", "new")], 0);
        assert_eq!(pane.scroll, 4, "the same lines stay in view");
        pane.scroll_down(10);
        assert!(pane.follow && pane.scroll == 0);
        pane.toggle_follow();
        assert!(!pane.follow);
        pane.toggle_follow();
        assert!(pane.follow);
    }

    #[test]
    fn the_pane_narrows_to_one_cluster_in_turn() {
        let mut pane = pane();
        pane.receive(
            vec![line("eu-1", "a"), line("us-1", "b"), line("eu-1", "c")],
            0,
        );
        pane.cycle_cluster(true);
        assert_eq!(texts(&pane), ["a", "c"]);
        pane.cycle_cluster(true);
        assert_eq!(texts(&pane), ["b"]);
        pane.cycle_cluster(true);
        assert_eq!(texts(&pane).len(), 3);
        pane.cycle_cluster(false);
        assert_eq!(texts(&pane), ["b"]);
        assert_eq!(pane.shown_len(), 1);
        // Narrowed, the count follows lines joining and leaving the ring.
        let flood = (0..CAPACITY)
            .map(|n| line("us-1", &n.to_string()))
            .collect();
        pane.receive(flood, 0);
        assert_eq!(pane.shown_len(), CAPACITY);
        assert_eq!(pane.shown_len(), pane.shown().count());
        pane.cycle_cluster(false);
        assert_eq!(pane.shown_len(), 0);
        assert_eq!(pane.shown().count(), 0, "eu-1's lines have left the ring");
    }

    #[test]
    fn search_finds_the_newest_match_then_older_and_newer_ones() {
        let mut pane = pane();
        let items = [
            "GET /a 200",
            "POST /b 500",
            "GET /c 200",
            "POST /d 500",
            "GET /e",
        ]
        .iter()
        .map(|t| line("eu-1", t))
        .collect();
        pane.receive(items, 0);
        assert!(pane.search_for("post".into()));
        let found = |pane: &LogPane| {
            let seq = pane.found.unwrap();
            let l = pane.shown().find(|l| l.seq == seq).unwrap();
            l.body().to_string()
        };
        assert_eq!(found(&pane), "POST /d 500");
        assert_eq!(pane.scroll, 1);
        assert!(!pane.follow);
        assert!(pane.find(true));
        assert_eq!(found(&pane), "POST /b 500");
        assert!(!pane.find(true), "no older match");
        assert!(pane.find(false));
        assert_eq!(found(&pane), "POST /d 500");
        assert!(!pane.search_for("nowhere".into()));
    }

    #[test]
    fn timestamps_show_the_time_each_line_came_with_and_hide_it_again() {
        let mut pane = pane();
        pane.receive(
            vec![
                timed("web", 1_767_323_045, "GET /a 200"),
                line("eu-1", "no time sent"),
            ],
            0,
        );
        let [with_time, without]: [&PaneLine; 2] =
            pane.shown().collect::<Vec<_>>().try_into().unwrap();
        // Kept as `flotilla logs --timestamps` prints it, shown without the time by default.
        let LogItem::Line(printed) = timed("web", 1_767_323_045, "GET /a 200") else {
            panic!();
        };
        let style = Style {
            colour: false,
            timestamps: true,
        };
        assert_eq!(with_time.text, format_line(&printed, 0, style));
        assert_eq!(with_time.stamp(), "2026-01-02T03:04:05.000000000Z ");
        assert_eq!(with_time.shown(false), "eu-1 web-1 web GET /a 200");
        assert_eq!(
            with_time.shown(true),
            "eu-1 web-1 web 2026-01-02T03:04:05.000000000Z GET /a 200"
        );
        // A line the server sent no time for shows the same either way.
        assert_eq!(without.stamp(), "");
        assert_eq!(without.shown(true), without.shown(false));
        // The search matches what the pane shows: the time only while it is shown.
        assert!(!pane.search_for("03:04:05".into()));
        pane.timestamps = true;
        assert!(pane.search_for("03:04:05".into()));
        assert_eq!(pane.shown().count(), 2, "nothing was read again or lost");
    }

    #[test]
    fn the_pane_narrows_to_one_container_in_the_names_order_keeping_notes() {
        let mut pane = pane();
        pane.receive(
            vec![
                timed("web", 1, "w1"),
                timed("proxy", 2, "p1"),
                LogItem::Note {
                    cluster: "eu-1".into(),
                    text: "web-2: no previous run".into(),
                    failed: false,
                },
                timed("web", 3, "w2"),
            ],
            0,
        );
        assert_eq!(pane.containers, ["web", "proxy"], "in the order they came");
        pane.scroll_up(2);
        // In the names' order: proxy, then web, then every container.
        pane.cycle_container(true);
        assert_eq!(pane.only_container_name(), Some("proxy"));
        assert_eq!(texts(&pane), ["p1", "note: eu-1: web-2: no previous run"]);
        assert!(pane.follow, "the view goes to the newest line it shows");
        pane.cycle_container(true);
        assert_eq!(pane.only_container_name(), Some("web"));
        assert_eq!(texts(&pane)[0], "w1");
        assert_eq!(pane.shown_len(), 3);
        pane.cycle_container(true);
        assert_eq!(pane.only_container_name(), None);
        assert_eq!(pane.shown_len(), 4);
        pane.cycle_container(false);
        assert_eq!(pane.only_container_name(), Some("web"));
        // With a cluster too, both narrow; the count follows lines joining and leaving.
        pane.cycle_cluster(true);
        assert_eq!(pane.shown_len(), 3);
        pane.receive(vec![line("us-1", "elsewhere"), timed("proxy", 4, "p2")], 0);
        assert_eq!(pane.shown_len(), 3);
        pane.receive(vec![timed("web", 5, "w3")], 0);
        assert_eq!(pane.shown_len(), pane.shown().count());
        let flood = (0..CAPACITY)
            .map(|n| timed("proxy", n as i64, "p"))
            .collect();
        pane.receive(flood, 0);
        assert_eq!(pane.shown_len(), 0);
        assert_eq!(pane.shown().count(), 0, "web's lines have left the ring");
        // No names yet: nothing to narrow to.
        let mut empty = self::pane();
        empty.cycle_container(true);
        assert_eq!(empty.only_container, None);
    }

    #[test]
    fn a_copy_takes_the_match_else_the_newest_line_in_view_as_shown() {
        let mut pane = pane();
        assert_eq!(pane.line_to_copy(), None, "no line yet");
        pane.receive(
            (0..10)
                .map(|n| timed("web", n, &format!("line {n}")))
                .collect(),
            0,
        );
        assert_eq!(pane.line_to_copy().unwrap(), "eu-1 web-1 web line 9");
        pane.scroll_up(3);
        assert_eq!(pane.line_to_copy().unwrap(), "eu-1 web-1 web line 6");
        pane.timestamps = true;
        assert_eq!(
            pane.line_to_copy().unwrap(),
            "eu-1 web-1 web 1970-01-01T00:00:06.000000000Z line 6"
        );
        pane.timestamps = false;
        assert!(pane.search_for("line 2".into()));
        pane.scroll_down(1);
        assert_eq!(pane.line_to_copy().unwrap(), "eu-1 web-1 web line 2");
        // Escaped as the pane shows it: a copy pastes no control character.
        pane.receive(vec![line("eu-1", "a\x1b]52;c;x\x07b")], 0);
        pane.bottom();
        assert!(pane.search_for("]52".into()));
        let copied = pane.line_to_copy().unwrap();
        assert!(
            !copied.contains('\x1b') && !copied.contains('\x07'),
            "{copied:?}"
        );
        // A search without a match copies the newest line in view.
        assert!(!pane.search_for("nowhere".into()));
        pane.bottom();
        assert_eq!(pane.line_to_copy().unwrap(), copied);
    }
}
