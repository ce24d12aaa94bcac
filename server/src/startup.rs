//! Why the server could not start once its options are parsed: one typed error per start-up
//! step, each shown as mysqld words it in the error log. Only `main` decides to exit on one.

use std::fmt;
use std::path::PathBuf;

/// A start-up failure.
#[derive(Debug)]
pub enum StartupError {
    /// An unknown variable named on the command line.
    UnknownVariable(String),
    /// A variable given a value it cannot take (the message names it and where it was set).
    BadValue(String),
    /// A variable the server needs is not defined (a bug in the variable table).
    MissingVariable(String),
    /// The data directory cannot be created or used.
    DataDir(String),
    /// A log (the redo log or the binary log) cannot be created in its directory.
    Log {
        /// "redo log" or "binary log".
        log: &'static str,
        /// Its directory.
        dir: PathBuf,
        /// What failed.
        source: std::io::Error,
    },
    /// A server thread cannot be started.
    Thread {
        /// Which thread.
        name: &'static str,
        /// Why.
        source: std::io::Error,
    },
    /// The listening socket cannot be bound.
    Bind(std::io::Error),
    /// The thread pool cannot start.
    ThreadPool(String),
}

impl fmt::Display for StartupError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            StartupError::BadValue(m)
            | StartupError::MissingVariable(m)
            | StartupError::DataDir(m)
            | StartupError::ThreadPool(m) => f.write_str(m),
            StartupError::UnknownVariable(name) => write!(f, "unknown variable '{name}'"),
            StartupError::Log { log, dir, source } => {
                write!(f, "Can't create the {log} in '{}': {source}", dir.display())
            }
            StartupError::Thread { name, source } => {
                write!(f, "Can't create the {name} thread: {source}")
            }
            StartupError::Bind(e) => write!(f, "Can't start server: Bind on TCP/IP port: {e}"),
        }
    }
}

impl std::error::Error for StartupError {}
