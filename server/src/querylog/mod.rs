//! The general query log and the slow query log, written to files in mysqld 8.0's formats
//! (`general_log`, `general_log_file`, `slow_query_log`, `slow_query_log_file`,
//! `long_query_time`, `min_examined_row_limit`, `log_output`), all dynamic as in MySQL;
//! and `log_error`, the file the error log goes to.

pub mod file;
pub mod format;

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime};

use crate::error::{ErrorCode, SqlError, SqlResult};
use crate::startup::StartupError;
use crate::vars::registry::{FromVar, Registry, Scope, SessionVars, VarDef, VarType, VarValue};
use crate::vars::VarId;

pub use file::QueryLogFile;
pub use format::SlowEntry;

/// `log_output`'s names, in MySQL's order.
const LOG_OUTPUTS: &[&str] = &["NONE", "FILE", "TABLE"];

/// The query log variables, with MySQL 8.0's scopes and defaults (an empty file name means
/// MySQL's default, `host_name.log` / `host_name-slow.log` in the data directory).
pub fn definitions() -> Vec<VarDef> {
    use Scope::*;
    let text = |s: &str| VarValue::Str(s.to_string());
    vec![
        VarDef::new("general_log", Global, VarType::Bool, VarValue::Bool(false)),
        VarDef::new("general_log_file", Global, VarType::Str, text("")),
        VarDef::new(
            "slow_query_log",
            Global,
            VarType::Bool,
            VarValue::Bool(false),
        ),
        VarDef::new("slow_query_log_file", Global, VarType::Str, text("")),
        VarDef::new(
            "long_query_time",
            Both,
            VarType::Seconds { max: 31_536_000 },
            text("10.000000"),
        ),
        VarDef::new(
            "min_examined_row_limit",
            Both,
            VarType::Int {
                min: 0,
                max: i64::MAX,
            },
            VarValue::Int(0),
        ),
        VarDef::new(
            "log_output",
            Global,
            VarType::Set(LOG_OUTPUTS),
            text("FILE"),
        ),
        VarDef {
            dynamic: false,
            ..VarDef::new("log_error", Global, VarType::Str, text("stderr"))
        },
    ]
}

/// The two query logs of a server.
#[derive(Debug)]
pub struct QueryLogs {
    /// The general query log.
    pub general: QueryLogFile,
    /// The slow query log.
    pub slow: QueryLogFile,
    /// Whether `log_output` sends entries to the files.
    files: AtomicBool,
    /// `log_output` as set.
    output: Mutex<String>,
    long_query_time: VarId,
    min_examined_row_limit: VarId,
}

/// Refuses a `log_output` with `TABLE`: tpbed writes its logs to files only.
fn check_output(value: &str) -> SqlResult<()> {
    if value.split(',').any(|v| v.eq_ignore_ascii_case("TABLE")) {
        return Err(SqlError::new(
            ErrorCode::NotSupportedYet,
            "This version of MySQL doesn't yet support 'log_output=TABLE' \
             (tpbed writes the general and slow query logs to files only)",
        ));
    }
    Ok(())
}

/// Whether `log_output` sends entries to the files (`NONE` wins over `FILE`, as in MySQL).
fn to_files(value: &str) -> bool {
    let has = |n: &str| value.split(',').any(|v| v.eq_ignore_ascii_case(n));
    has("FILE") && !has("NONE")
}

/// A log file name as mysqld resolves it: relative to the data directory.
fn resolve(datadir: &Path, name: &str) -> PathBuf {
    datadir.join(name)
}

fn cannot_set(var: &str, value: &str) -> SqlError {
    SqlError::new(
        ErrorCode::WrongValueForVar,
        format!("Variable '{var}' can't be set to the value of '{value}'"),
    )
}

/// MySQL's check of a log file name when it is set, whether or not the log is on: not a
/// option file (`.cnf`, `.ini`), not a directory, in a directory that exists and is writable,
/// and writable itself when it exists.
fn check_log_path(var: &str, name: &str, path: &Path) -> SqlResult<()> {
    let lower = name.to_ascii_lowercase();
    let writable = |p: &Path| nix::unistd::access(p, nix::unistd::AccessFlags::W_OK).is_ok();
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
        _ => PathBuf::from("."),
    };
    let ok = !lower.ends_with(".cnf")
        && !lower.ends_with(".ini")
        && !path.is_dir()
        && dir.is_dir()
        && writable(&dir)
        && (!path.exists() || writable(path));
    if ok {
        Ok(())
    } else {
        Err(cannot_set(var, name))
    }
}

/// The variables of one log: the switch, the file name and the default file name's suffix.
const LOGS: [(&str, &str, &str); 2] = [
    ("general_log", "general_log_file", ".log"),
    ("slow_query_log", "slow_query_log_file", "-slow.log"),
];

impl QueryLogs {
    /// Sets the logs up from the start-up variables: the error log file, default file names
    /// in `datadir`, the logs that are on opened; and registers what SET GLOBAL does.
    pub fn start(vars: &Registry, datadir: &Path) -> Result<Arc<QueryLogs>, StartupError> {
        let id = |n: &str| {
            vars.lookup(n)
                .ok_or_else(|| StartupError::MissingVariable(n.to_string()))
        };
        let log_error = vars.global_by_name("log_error").show();
        if !log_error.is_empty() && log_error != "stderr" {
            let path = resolve(datadir, &log_error);
            crate::log::to_file(&path).map_err(|e| {
                StartupError::BadValue(format!("log-error: cannot open '{}': {e}", path.display()))
            })?;
        }
        let output = vars.global_by_name("log_output").show();
        check_output(&output).map_err(|e| StartupError::BadValue(e.message))?;
        let header = format::header(
            "tpbed-server",
            crate::vars::system::SERVER_VERSION,
            vars.global_by_name("port").as_int(),
        );
        let logs = Arc::new(QueryLogs {
            general: QueryLogFile::new(header.clone()),
            slow: QueryLogFile::new(header),
            files: AtomicBool::new(to_files(&output)),
            output: Mutex::new(output.clone()),
            long_query_time: id("long_query_time")?,
            min_examined_row_limit: id("min_examined_row_limit")?,
        });
        let host = vars.global_by_name("hostname").show();
        for (log, (on, file, suffix)) in [&logs.general, &logs.slow].into_iter().zip(LOGS) {
            let file_id = id(file)?;
            let mut name = vars.global(file_id).show();
            if name.is_empty() {
                name = resolve(datadir, &format!("{host}{suffix}"))
                    .display()
                    .to_string();
                vars.set_global_unchecked(file_id, VarValue::Str(name.clone()));
            }
            let failed = |e: std::io::Error| {
                StartupError::BadValue(format!("{file}: cannot open '{name}': {e}"))
            };
            log.set_path(&name, resolve(datadir, &name))
                .map_err(failed)?;
            log.set_on(vars.global_by_name(on).as_bool())
                .map_err(failed)?;
        }
        logs.register_hooks(vars, datadir)
            .map_err(|e| StartupError::MissingVariable(e.message))?;
        Ok(logs)
    }

    fn register_hooks(self: &Arc<Self>, vars: &Registry, datadir: &Path) -> SqlResult<()> {
        for (slow, (on, file, _)) in [false, true].into_iter().zip(LOGS) {
            let logs = Arc::clone(self);
            vars.on_set(on, move |enable: bool| {
                logs.log(slow)
                    .set_on(enable)
                    .map_err(|_| cannot_set(on, "ON"))
            })?;
            let logs = Arc::clone(self);
            let dir = datadir.to_path_buf();
            vars.on_set(file, move |name: String| {
                if name.is_empty() {
                    return Err(cannot_set(file, "NULL"));
                }
                let path = resolve(&dir, &name);
                check_log_path(file, &name, &path)?;
                logs.log(slow)
                    .set_path(&name, path)
                    .map_err(|_| cannot_set(file, &name))
            })?;
        }
        let logs = Arc::clone(self);
        vars.on_set("log_output", move |value: String| {
            check_output(&value)?;
            logs.files.store(to_files(&value), Ordering::Relaxed);
            *logs.output.lock().unwrap_or_else(|e| e.into_inner()) = value;
            Ok(())
        })
    }

    /// `log_output` as the logs apply it.
    pub fn output(&self) -> String {
        self.output
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }

    fn log(&self, slow: bool) -> &QueryLogFile {
        if slow {
            &self.slow
        } else {
            &self.general
        }
    }

    /// Writes a general log line for `command` (`Query`, `Connect`, `Init DB`, ...) of
    /// connection `conn_id`, if the general log is on.
    pub fn general(&self, conn_id: u32, command: &str, argument: &str) {
        if self.general.is_on() && self.files.load(Ordering::Relaxed) {
            self.general
                .write(|_| format::general_line(SystemTime::now(), conn_id, command, argument));
        }
    }

    /// Whether the slow log could take a statement (so its time is worth measuring).
    pub fn slow_on(&self) -> bool {
        self.slow.is_on() && self.files.load(Ordering::Relaxed)
    }

    /// Writes `e` to the slow log if it ran longer than the session's `long_query_time` and
    /// examined at least `min_examined_row_limit` rows (MySQL's test); true if it did.
    pub fn slow(&self, session: &SessionVars, e: &SlowEntry<'_>) -> bool {
        if !self.slow_on() {
            return false;
        }
        let long = f64::from_var(session.get(self.long_query_time));
        let min_rows = u64::from_var(session.get(self.min_examined_row_limit));
        if e.query_time <= Duration::from_secs_f64(long) || e.rows_examined < min_rows {
            return false;
        }
        self.slow.write(|last_db| format::slow_entry(e, last_db));
        true
    }
}
