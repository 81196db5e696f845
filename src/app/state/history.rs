//! The wall display's recent past: how many cells were Degraded and Drifted and how many
//! clusters Unreachable, one sample per minute for the last hour, in a ring of fixed size so
//! memory stays the same however long the wall runs. Each minute keeps the worst it saw, so a
//! spike between two ticks still shows. Plain data: the ticks that fill it are `update`'s.

/// Minutes the ring holds.
pub const HISTORY_MINUTES: usize = 60;

/// Milliseconds one sample covers.
pub const SAMPLE_MS: u64 = 60_000;

/// What the wall charts, at one moment or as the worst of one minute.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Sample {
    pub degraded: u32,
    pub drifted: u32,
    pub unreachable: u32,
}

impl Sample {
    fn worst(self, other: Sample) -> Sample {
        Sample {
            degraded: self.degraded.max(other.degraded),
            drifted: self.drifted.max(other.drifted),
            unreachable: self.unreachable.max(other.unreachable),
        }
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
    pub fn series(&self, value: impl Fn(&Sample) -> u32) -> Vec<u64> {
        let oldest = (self.newest + HISTORY_MINUTES + 1 - self.len) % HISTORY_MINUTES;
        (0..self.len)
            .map(|step| u64::from(value(&self.samples[(oldest + step) % HISTORY_MINUTES])))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn degraded(count: u32) -> Sample {
        Sample {
            degraded: count,
            ..Sample::default()
        }
    }

    #[test]
    fn each_minute_keeps_its_worst_and_the_ring_keeps_the_last_hour() {
        let mut history = History::default();
        history.record(0, degraded(1));
        history.record(20_000, degraded(4));
        history.record(50_000, degraded(2));
        assert_eq!(history.series(|s| s.degraded), [4]);
        history.record(60_000, degraded(0));
        history.record(3 * 60_000, degraded(3));
        assert_eq!(
            history.series(|s| s.degraded),
            [4, 0, 3, 3],
            "an unseen minute takes the next value"
        );
        for minute in 4..200 {
            history.record(minute * 60_000, degraded(minute as u32));
        }
        let hour = history.series(|s| s.degraded);
        assert_eq!(hour.len(), HISTORY_MINUTES, "bounded, whatever the uptime");
        assert_eq!(hour.first(), Some(&140));
        assert_eq!(hour.last(), Some(&199));
        history.record(10 * 86_400_000, degraded(7));
        assert_eq!(history.series(|s| s.degraded), [7; HISTORY_MINUTES]);
    }
}
