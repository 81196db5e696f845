//! What the console benches share about timing the real console loop: the frames it reports
//! (`Console::drive`'s `on_frame`), waiting for one that satisfies a test, keys sent one at a
//! time as a keyboard sends them and timed to the first frame that handled each, and the
//! p50/p99 of such times. It only watches and types; what a bench measures is its own.

#![allow(dead_code)]

use std::sync::Mutex;
use std::time::{Duration, Instant};

use crossterm::event::{Event, KeyCode, KeyEvent, KeyModifiers};
use flotilla::console::FrameDrawn;

/// A frame as a bench recorded it: when it was drawn and what it covered.
pub trait Frame: Copy {
    fn at(&self) -> Instant;
    fn drawn(&self) -> FrameDrawn;
}

/// The pause between timed keys (a fast typist).
pub const KEY_GAP: Duration = Duration::from_millis(40);

/// Movement keys that change the screen without changing what is loaded.
pub const MOVES: [KeyCode; 4] = [
    KeyCode::Char('j'),
    KeyCode::Char('l'),
    KeyCode::Char('k'),
    KeyCode::Char('h'),
];

/// The 50th and 99th percentiles (zero for no samples).
pub fn percentiles(mut times: Vec<Duration>) -> (Duration, Duration) {
    if times.is_empty() {
        return (Duration::ZERO, Duration::ZERO);
    }
    times.sort();
    let at = |q: usize| times[(times.len() * q / 100).min(times.len() - 1)];
    (at(50), at(99))
}

pub fn ms(duration: Duration) -> String {
    format!("{:.1}", duration.as_secs_f64() * 1e3)
}

pub fn key(code: KeyCode) -> std::io::Result<Event> {
    Ok(Event::Key(KeyEvent::new(code, KeyModifiers::NONE)))
}

/// Waits until a frame satisfies `done`, or the deadline passes.
pub fn wait_frame<F: Frame>(
    frames: &Mutex<Vec<F>>,
    deadline: Instant,
    done: impl Fn(&F) -> bool,
) -> Option<F> {
    loop {
        if let Some(seen) = frames.lock().ok()?.iter().find(|seen| done(seen)).copied() {
            return Some(seen);
        }
        if Instant::now() > deadline {
            return None;
        }
        std::thread::sleep(Duration::from_millis(1));
    }
}

/// Presses `count` movement keys, `KEY_GAP` apart; each one's latency is from the press to
/// the first frame that had handled it.
pub fn press_keys<F: Frame>(
    frames: &Mutex<Vec<F>>,
    keys: &futures::channel::mpsc::UnboundedSender<std::io::Result<Event>>,
    pressed: &mut u64,
    count: usize,
) -> Vec<Duration> {
    let mut latencies = Vec::new();
    for index in 0..count {
        let sent = Instant::now();
        if keys
            .unbounded_send(key(MOVES[index % MOVES.len()]))
            .is_err()
        {
            break;
        }
        *pressed += 1;
        let wanted = *pressed;
        if let Some(seen) = wait_frame(frames, sent + Duration::from_secs(10), |seen| {
            seen.drawn().inputs >= wanted
        }) {
            latencies.push(seen.at().saturating_duration_since(sent));
        }
        std::thread::sleep(KEY_GAP);
    }
    latencies
}

/// Time from each `(event index, instant)` to the first frame that had applied that event.
pub fn to_frames<F: Frame>(frames: &[F], sent: &[(u64, Instant)]) -> Vec<Duration> {
    sent.iter()
        .filter_map(|(index, at)| {
            let frame = frames.iter().find(|seen| seen.drawn().events > *index)?;
            Some(frame.at().saturating_duration_since(*at))
        })
        .collect()
}
