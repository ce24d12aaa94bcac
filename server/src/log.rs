//! The error log: one line per event on stderr, in mysqld's `[Note]`/`[Warning]`/`[ERROR]` shape.

use std::fs::File;
use std::io::Write;
use std::path::Path;
use std::sync::{Mutex, OnceLock};
use std::time::SystemTime;

/// The `--log-error` file, once the server opened it (stderr until then, and without it).
static ERROR_LOG: OnceLock<Mutex<File>> = OnceLock::new();

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

/// Sends every later log line to `path` (appended, created if missing), as `--log-error`
/// does; a second call keeps the first file.
pub fn to_file(path: &Path) -> std::io::Result<()> {
    let file = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)?;
    let _ = ERROR_LOG.set(Mutex::new(file));
    Ok(())
}

/// Writes one log line.
pub fn write(level: Level, conn_id: u32, msg: &str) {
    let tag = match level {
        Level::Note => "Note",
        Level::Warning => "Warning",
        Level::Error => "ERROR",
    };
    let line = format!(
        "{} {conn_id} [{tag}] [Server] {msg}\n",
        crate::time::iso8601_utc(SystemTime::now())
    );
    match ERROR_LOG.get() {
        Some(f) => {
            let _ = f
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .write_all(line.as_bytes());
        }
        None => {
            let _ = std::io::stderr().lock().write_all(line.as_bytes());
        }
    }
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
