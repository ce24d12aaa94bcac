//! Where the engine's rare messages go: a hook the embedding server installs once (its error
//! log); without one they go to standard error.

use std::sync::OnceLock;

/// A message sink: called with a one-line message, possibly from several threads.
pub type Sink = fn(Level, &str);

/// How serious a message is (as the server's error log labels it).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Level {
    /// Something failed and was ignored or worked around.
    Error,
    /// Something unusual that did not fail.
    Warning,
}

static SINK: OnceLock<Sink> = OnceLock::new();

/// Installs the sink for the whole process; only the first call takes effect (returns whether
/// this one did).
pub fn install(sink: Sink) -> bool {
    SINK.set(sink).is_ok()
}

/// Writes `msg` at `level` through the installed sink.
pub(crate) fn emit(level: Level, msg: &str) {
    match SINK.get() {
        Some(sink) => sink(level, msg),
        None => eprintln!("tpbed-engine {level:?}: {msg}"),
    }
}
