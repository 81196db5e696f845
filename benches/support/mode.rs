//! Whether a bench binary measures or only checks itself. `cargo bench` passes `--bench` and
//! gets the sizes and waits the figures are quoted at; `cargo test --all-targets` (the test
//! suite) runs every bench once, unoptimised, to prove it still runs, and gets small sizes and
//! short waits so the suite stays quick. Nothing a check prints is a figure.

/// True under `cargo bench`; the arguments are read once, however often sizes are asked.
pub fn measuring() -> bool {
    static MEASURING: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *MEASURING.get_or_init(|| std::env::args().any(|arg| arg == "--bench"))
}

/// `full` under `cargo bench`, `check` under `cargo test`.
pub fn sized<T>(full: T, check: T) -> T {
    if measuring() { full } else { check }
}
