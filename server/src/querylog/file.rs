//! One query log file: its path, whether it is on, and the open file, reopened when the
//! path changes or logging is turned on.

use std::fs::{File, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;

#[derive(Debug, Default)]
struct State {
    /// The file name as set (`@@general_log_file`), relative to the data directory or not.
    name: String,
    path: PathBuf,
    file: Option<File>,
    /// The database of the last slow log entry (its `use db;` line).
    last_db: String,
}

/// A query log written to a file (`general_log_file`, `slow_query_log_file`).
#[derive(Debug)]
pub struct QueryLogFile {
    on: AtomicBool,
    header: String,
    state: Mutex<State>,
}

impl QueryLogFile {
    /// A log that is off, with the header each opening writes.
    pub fn new(header: String) -> QueryLogFile {
        QueryLogFile {
            on: AtomicBool::new(false),
            header,
            state: Mutex::new(State::default()),
        }
    }

    /// Whether entries are written.
    pub fn is_on(&self) -> bool {
        self.on.load(Ordering::Relaxed)
    }

    fn state(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn open(path: &Path, header: &str) -> std::io::Result<File> {
        let mut f = OpenOptions::new().create(true).append(true).open(path)?;
        f.write_all(header.as_bytes())?;
        Ok(f)
    }

    /// Turns logging on (opening the file) or off (closing it).
    pub fn set_on(&self, on: bool) -> std::io::Result<()> {
        let mut st = self.state();
        if on && st.file.is_none() {
            st.file = Some(Self::open(&st.path, &self.header)?);
            st.last_db.clear();
        } else if !on {
            st.file = None;
        }
        self.on.store(on, Ordering::Relaxed);
        Ok(())
    }

    /// The file name as set.
    pub fn name(&self) -> String {
        self.state().name.clone()
    }

    /// Moves the log to file `name`, found at `path`: an open log is reopened there (and
    /// stays where it was if that fails).
    pub fn set_path(&self, name: &str, path: PathBuf) -> std::io::Result<()> {
        let mut st = self.state();
        if st.file.is_some() {
            st.file = Some(Self::open(&path, &self.header)?);
            st.last_db.clear();
        }
        st.path = path;
        st.name = name.to_string();
        Ok(())
    }

    /// Appends the text `entry` makes of the file's last database, if the log is on.
    pub fn write(&self, entry: impl FnOnce(&mut String) -> String) {
        if !self.is_on() {
            return;
        }
        let mut st = self.state();
        let st = &mut *st;
        let Some(f) = st.file.as_mut() else {
            return;
        };
        let text = entry(&mut st.last_db);
        if let Err(e) = f.write_all(text.as_bytes()) {
            crate::log::error(&format!("Error writing file '{}' ({e})", st.path.display()));
        }
    }
}
