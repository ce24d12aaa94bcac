//! The error log: one line per event on stderr, in mysqld's `[Note]`/`[Warning]`/`[ERROR]` shape.

use std::io::Write;
use std::time::{SystemTime, UNIX_EPOCH};

/// Severity of a log line.
#[derive(Debug, Clone, Copy)]
pub enum Level {
    /// Informational.
    Note,
    /// Something was ignored or adjusted.
    Warning,
    /// Something failed.
    Error,
}

/// Writes one log line.
pub fn write(level: Level, conn_id: u32, msg: &str) {
    let now = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap_or_default();
    let (secs, micros) = (now.as_secs(), now.subsec_micros());
    let days = secs / 86_400;
    let (y, m, d) = crate::time::civil_from_days(days as i64);
    let rem = secs % 86_400;
    let tag = match level {
        Level::Note => "Note",
        Level::Warning => "Warning",
        Level::Error => "ERROR",
    };
    let line = format!(
        "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}.{micros:06}Z {conn_id} [{tag}] [Server] {msg}\n",
        rem / 3600,
        rem / 60 % 60,
        rem % 60
    );
    let _ = std::io::stderr().lock().write_all(line.as_bytes());
}

/// Logs a note.
pub fn note(msg: &str) {
    write(Level::Note, 0, msg);
}

/// Logs a warning.
pub fn warning(msg: &str) {
    write(Level::Warning, 0, msg);
}

/// Logs an error.
pub fn error(msg: &str) {
    write(Level::Error, 0, msg);
}

/// The sink the server installs for the storage engine's messages.
pub fn engine_sink(level: crate::engine::log::Level, msg: &str) {
    match level {
        crate::engine::log::Level::Error => error(msg),
        crate::engine::log::Level::Warning => warning(msg),
    }
}
