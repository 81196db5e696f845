//! The wall display's recent past: every headline count (clusters Ready, NotReady and
//! Unreachable; cells InSync, Drifted, Failed and Pending; health Healthy, Degraded and
//! Progressing), one sample per minute for the last hour, in a ring of fixed size so memory
//! stays the same however long the wall runs. Each minute keeps the worst it saw (the most
//! of a problem, the least of a good count), so a spike between two ticks still shows. Plain
//! data: the ticks that fill it are `update`'s, the counts `State::headlines`'.

/// Minutes the ring holds.
pub const HISTORY_MINUTES: usize = 60;

/// Milliseconds one sample covers.
pub const SAMPLE_MS: u64 = 60_000;

/// A count the wall shows in large digits, with its last hour.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Headline {
    Ready,
    NotReady,
    Unreachable,
    InSync,
    Drifted,
    Failed,
    Pending,
    Healthy,
    Degraded,
    Progressing,
}

impl Headline {
    /// In the order the wall draws them: clusters, cells, health.
    pub const ALL: [Headline; 10] = [
        Headline::Ready,
        Headline::NotReady,
        Headline::Unreachable,
        Headline::InSync,
        Headline::Drifted,
        Headline::Failed,
        Headline::Pending,
        Headline::Healthy,
        Headline::Degraded,
        Headline::Progressing,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Headline::Ready => "Ready",
            Headline::NotReady => "NotReady",
            Headline::Unreachable => "Unreachable",
            Headline::InSync => "InSync",
            Headline::Drifted => "Drifted",
            Headline::Failed => "Failed",
            Headline::Pending => "Pending",
            Headline::Healthy => "Healthy",
            Headline::Degraded => "Degraded",
            Headline::Progressing => "Progressing",
        }
    }

    /// Whether more of it is worse (a good count's worst minute is its lowest).
    pub fn is_problem(self) -> bool {
        !matches!(self, Headline::Ready | Headline::InSync | Headline::Healthy)
    }

    fn index(self) -> usize {
        self as usize
    }
}

/// Every headline count at one moment, or the worst of one minute.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Sample([u32; Headline::ALL.len()]);

impl Sample {
    pub fn get(&self, headline: Headline) -> u32 {
        self.0[headline.index()]
    }

    pub fn set(&mut self, headline: Headline, count: u32) {
        self.0[headline.index()] = count;
    }

    fn worst(self, other: Sample) -> Sample {
        let mut worst = self;
        for headline in Headline::ALL {
            let (a, b) = (self.get(headline), other.get(headline));
            worst.set(
                headline,
                if headline.is_problem() {
                    a.max(b)
                } else {
                    a.min(b)
                },
            );
        }
        worst
    }
}

/// The last hour, one sample per minute.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct History {
    samples: [Sample; HISTORY_MINUTES],
    /// Where the newest sample is.
    newest: usize,
    /// Samples recorded, up to the ring's size.
    len: usize,
    /// The minute (app clock / [`SAMPLE_MS`]) the newest sample covers.
    minute: u64,
}

impl Default for History {
    fn default() -> Self {
        History {
            samples: [Sample::default(); HISTORY_MINUTES],
            newest: 0,
            len: 0,
            minute: 0,
        }
    }
}

impl History {
    /// Records what is true at `now_ms`: into the current minute (keeping its worst), or as a
    /// new minute. Minutes no tick saw (a suspended terminal) take the value seen now.
    pub fn record(&mut self, now_ms: u64, sample: Sample) {
        let minute = now_ms / SAMPLE_MS;
        if self.len == 0 {
            self.samples[0] = sample;
            self.newest = 0;
            self.len = 1;
            self.minute = minute;
            return;
        }
        if minute <= self.minute {
            let slot = &mut self.samples[self.newest];
            *slot = slot.worst(sample);
            return;
        }
        let steps = (minute - self.minute).min(HISTORY_MINUTES as u64) as usize;
        for _ in 0..steps {
            self.newest = (self.newest + 1) % HISTORY_MINUTES;
            self.samples[self.newest] = sample;
        }
        self.len = (self.len + steps).min(HISTORY_MINUTES);
        self.minute = minute;
    }

    /// One value per recorded minute, oldest first.
    pub fn series(&self, headline: Headline) -> Vec<u64> {
        let oldest = (self.newest + HISTORY_MINUTES + 1 - self.len) % HISTORY_MINUTES;
        (0..self.len)
            .map(|step| u64::from(self.samples[(oldest + step) % HISTORY_MINUTES].get(headline)))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn degraded(count: u32) -> Sample {
        let mut sample = Sample::default();
        sample.set(Headline::Degraded, count);
        sample.set(Headline::Ready, 10 - count.min(10));
        sample
    }

    #[test]
    fn each_minute_keeps_its_worst_and_the_ring_keeps_the_last_hour() {
        let mut history = History::default();
        history.record(0, degraded(1));
        history.record(20_000, degraded(4));
        history.record(50_000, degraded(2));
        assert_eq!(history.series(Headline::Degraded), [4]);
        assert_eq!(
            history.series(Headline::Ready),
            [6],
            "a good count's worst minute is its lowest"
        );
        history.record(60_000, degraded(0));
        history.record(3 * 60_000, degraded(3));
        assert_eq!(
            history.series(Headline::Degraded),
            [4, 0, 3, 3],
            "an unseen minute takes the next value"
        );
        for minute in 4..200 {
            history.record(minute * 60_000, degraded(minute as u32));
        }
        let hour = history.series(Headline::Degraded);
        assert_eq!(hour.len(), HISTORY_MINUTES, "bounded, whatever the uptime");
        assert_eq!(hour.first(), Some(&140));
        assert_eq!(hour.last(), Some(&199));
        history.record(10 * 86_400_000, degraded(7));
        assert_eq!(history.series(Headline::Degraded), [7; HISTORY_MINUTES]);
    }
}
