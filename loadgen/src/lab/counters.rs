//! Counters an experiment measures, and where each server flavour keeps them: lock counts in
//! `performance_schema.data_locks` (MySQL, tpbed) or `information_schema.innodb_trx` (MariaDB,
//! which has no `data_locks`), history length, status counters, and /proc for a local server.
//! A counter a target cannot give is an error naming why, never a number.

use crate::blocking::Blocking;
use crate::lab::target::Flavour;
use crate::machine::proc_sample;

/// Longer than InnoDB's INNODB_TRX cache period (100 ms).
const TRX_CACHE_AGE: std::time::Duration = std::time::Duration::from_millis(150);

/// Where a counter is read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Source {
    /// Rows of `performance_schema.data_locks` of the session, `LOCK_TYPE = 'RECORD'`.
    DataLocksRecords,
    /// The same rows counted per `INDEX_NAME` and `LOCK_MODE`.
    DataLocksGrouped,
    /// `information_schema.innodb_trx.trx_rows_locked` of the session's transaction.
    TrxRowsLocked,
    /// `information_schema.innodb_trx.trx_lock_structs` of the session's transaction.
    TrxLockStructs,
    /// 1 when the session has a row in `information_schema.innodb_trx`, else 0.
    TrxOpen,
    /// A `SHOW GLOBAL STATUS` variable.
    Status(&'static str),
    /// An `information_schema.INNODB_METRICS` counter.
    Metric(&'static str),
    /// OS threads of the server process (/proc).
    ProcThreads,
    /// Resident memory of the server process in MiB (/proc).
    ProcRssMb,
}

/// The counters a `measure` step may name, with what they mean.
pub(crate) const COUNTERS: &[(&str, &str)] = &[
    ("record_locks", "record locks the session holds (data_locks rows; MariaDB: innodb_trx.trx_rows_locked)"),
    ("data_locks", "the session's record locks counted by index and lock mode, recorded as NAME.INDEX.MODE (data_locks only)"),
    ("lock_structs", "innodb_trx.trx_lock_structs of the session's transaction"),
    ("trx_open", "1 if the session's transaction is still in innodb_trx, else 0"),
    ("history_len", "INNODB_METRICS trx_rseg_history_len (MariaDB: Innodb_history_list_length)"),
    ("fsyncs", "SHOW GLOBAL STATUS Innodb_os_log_fsyncs"),
    ("row_lock_waits", "SHOW GLOBAL STATUS Innodb_row_lock_waits"),
    ("threads_running", "SHOW GLOBAL STATUS Threads_running"),
    ("os_threads", "OS threads of the server process (/proc; servers the lab started)"),
    ("rss_mb", "resident memory of the server process in MiB (/proc; servers the lab started)"),
    ("tp_oldest_event_age_ms", "age of the oldest event queued in tpbed's pool now (Tpbed_thread_pool_oldest_event_age_ms; tpbed's own)"),
    ("tp_threads_waiting", "tpbed's pool threads in a reported wait now (Tpbed_thread_pool_threads_waiting)"),
    ("tp_threads_running", "tpbed's pool threads running a statement now (Tpbed_thread_pool_threads_running)"),
    ("tp_stalls", "statements tpbed's stall checker has marked stalled (Tpbed_thread_pool_stalls)"),
];

/// tpbed's own pool counters a `measure` may name, and their status variables.
const POOL: &[(&str, &str)] = &[
    (
        "tp_oldest_event_age_ms",
        "Tpbed_thread_pool_oldest_event_age_ms",
    ),
    ("tp_threads_waiting", "Tpbed_thread_pool_threads_waiting"),
    ("tp_threads_running", "Tpbed_thread_pool_threads_running"),
    ("tp_stalls", "Tpbed_thread_pool_stalls"),
];

impl Source {
    /// Whether it is a server-wide value (read on any connection), not one session's.
    pub(crate) fn is_global(self) -> bool {
        matches!(
            self,
            Source::Status(_) | Source::Metric(_) | Source::ProcThreads | Source::ProcRssMb
        )
    }
}

/// Where `counter` is read on `flavour`; `local` says whether the lab knows the server's PID.
pub(crate) fn source(counter: &str, flavour: Flavour, local: bool) -> Result<Source, String> {
    let no_pid = || {
        Err(
            "the server was not started by the lab, so its process cannot be read from /proc"
                .to_string(),
        )
    };
    Ok(match counter {
        "record_locks" => match flavour {
            Flavour::MySql | Flavour::Tpbed => Source::DataLocksRecords,
            Flavour::MariaDb => Source::TrxRowsLocked,
        },
        "data_locks" => match flavour {
            Flavour::MySql | Flavour::Tpbed => Source::DataLocksGrouped,
            Flavour::MariaDb => {
                return Err("MariaDB has no performance_schema.data_locks (lock modes per index are not exposed)".into())
            }
        },
        "lock_structs" => Source::TrxLockStructs,
        "trx_open" => Source::TrxOpen,
        "history_len" => match flavour {
            Flavour::MySql | Flavour::Tpbed => Source::Metric("trx_rseg_history_len"),
            Flavour::MariaDb => Source::Status("Innodb_history_list_length"),
        },
        "fsyncs" => Source::Status("Innodb_os_log_fsyncs"),
        "row_lock_waits" => Source::Status("Innodb_row_lock_waits"),
        "threads_running" => Source::Status("Threads_running"),
        "os_threads" if local => Source::ProcThreads,
        "rss_mb" if local => Source::ProcRssMb,
        "os_threads" | "rss_mb" => return no_pid(),
        pool if POOL.iter().any(|(c, _)| *c == pool) => match flavour {
            Flavour::Tpbed => Source::Status(
                POOL.iter()
                    .find(|(c, _)| *c == pool)
                    .map_or("", |(_, v)| v),
            ),
            Flavour::MariaDb | Flavour::MySql => {
                return Err(format!(
                    "{pool} is a counter of tpbed's own pool; {flavour:?} has none"
                ))
            }
        },
        other => {
            return Err(format!(
                "unknown counter {other:?} (known: {})",
                COUNTERS.iter().map(|c| c.0).collect::<Vec<_>>().join(", ")
            ))
        }
    })
}

/// A counter's value: one number, or counts per `INDEX.MODE`.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Reading {
    /// One number.
    One(f64),
    /// Counts per group.
    Groups(Vec<(String, f64)>),
}

fn first_number(rows: &[Vec<Option<String>>], col: usize) -> Option<f64> {
    rows.first()
        .and_then(|r| r.get(col).cloned().flatten())
        .and_then(|v| v.trim().parse::<f64>().ok())
}

/// Reads a counter on the observer connection `obs`; `conn_id` is the measured session's
/// `CONNECTION_ID()`, `pid` the server's PID.
pub(crate) fn read(
    src: Source,
    obs: &mut Blocking,
    conn_id: Option<u64>,
    pid: Option<u32>,
) -> Result<Reading, String> {
    let session = || conn_id.ok_or("this counter needs `session`");
    match src {
        Source::DataLocksRecords | Source::DataLocksGrouped => {
            let id = session()?;
            let tid = obs.rows(&format!(
                "SELECT THREAD_ID FROM performance_schema.threads WHERE PROCESSLIST_ID = {id}"
            ))?;
            let tid = first_number(&tid, 0)
                .ok_or("performance_schema.threads has no row for the session")?;
            let rows = obs.rows(&format!(
                "SELECT INDEX_NAME, LOCK_MODE FROM performance_schema.data_locks \
                 WHERE THREAD_ID = {tid} AND LOCK_TYPE = 'RECORD'"
            ))?;
            if src == Source::DataLocksRecords {
                return Ok(Reading::One(rows.len() as f64));
            }
            let mut groups: Vec<(String, f64)> = Vec::new();
            for r in &rows {
                let cell = |i: usize| r.get(i).cloned().flatten().unwrap_or_else(|| "NULL".into());
                let key = format!("{}.{}", cell(0), cell(1));
                match groups.iter_mut().find(|g| g.0 == key) {
                    Some(g) => g.1 += 1.0,
                    None => groups.push((key, 1.0)),
                }
            }
            Ok(Reading::Groups(groups))
        }
        Source::TrxRowsLocked | Source::TrxLockStructs | Source::TrxOpen => {
            let id = session()?;
            // InnoDB answers INNODB_TRX from a cache refreshed at most every 100 ms: a read
            // sooner than that after the previous one shows the old transaction state
            std::thread::sleep(TRX_CACHE_AGE);
            let rows = obs.rows(&format!(
                "SELECT trx_rows_locked, trx_lock_structs FROM information_schema.innodb_trx \
                 WHERE trx_mysql_thread_id = {id}"
            ))?;
            Ok(Reading::One(match src {
                Source::TrxOpen => rows.len().min(1) as f64,
                Source::TrxRowsLocked => first_number(&rows, 0).unwrap_or(0.0),
                _ => first_number(&rows, 1).unwrap_or(0.0),
            }))
        }
        Source::Status(name) => {
            let rows = obs.rows(&format!("SHOW GLOBAL STATUS LIKE '{name}'"))?;
            first_number(&rows, 1)
                .map(Reading::One)
                .ok_or_else(|| format!("the server has no status variable {name}"))
        }
        Source::Metric(name) => {
            let rows = obs.rows(&format!(
                "SELECT COUNT, STATUS FROM information_schema.INNODB_METRICS WHERE NAME = '{name}'"
            ))?;
            let status = rows
                .first()
                .and_then(|r| r.get(1).cloned().flatten())
                .unwrap_or_default();
            if status.eq_ignore_ascii_case("disabled") {
                return Err(format!("INNODB_METRICS {name} is disabled on this server"));
            }
            first_number(&rows, 0)
                .map(Reading::One)
                .ok_or_else(|| format!("INNODB_METRICS has no {name}"))
        }
        Source::ProcThreads | Source::ProcRssMb => {
            let s = pid
                .and_then(proc_sample)
                .ok_or("the server process is gone")?;
            Ok(Reading::One(if src == Source::ProcThreads {
                s.threads as f64
            } else {
                s.rss_kb as f64 / 1024.0
            }))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_flavour_reads_locks_where_it_keeps_them() {
        use Flavour::*;
        assert_eq!(
            source("record_locks", Tpbed, true),
            Ok(Source::DataLocksRecords)
        );
        assert_eq!(
            source("record_locks", MySql, false),
            Ok(Source::DataLocksRecords)
        );
        assert_eq!(
            source("record_locks", MariaDb, true),
            Ok(Source::TrxRowsLocked)
        );
        assert_eq!(
            source("data_locks", MySql, true),
            Ok(Source::DataLocksGrouped)
        );
        let e = source("data_locks", MariaDb, true).unwrap_err();
        assert!(e.contains("no performance_schema.data_locks"), "{e}");
        assert_eq!(
            source("history_len", Tpbed, true),
            Ok(Source::Metric("trx_rseg_history_len"))
        );
        assert_eq!(
            source("history_len", MariaDb, true),
            Ok(Source::Status("Innodb_history_list_length"))
        );
        assert_eq!(
            source("fsyncs", MariaDb, false),
            Ok(Source::Status("Innodb_os_log_fsyncs"))
        );
        assert_eq!(source("os_threads", MySql, true), Ok(Source::ProcThreads));
        assert!(source("os_threads", MySql, false)
            .unwrap_err()
            .contains("not started by the lab"));
        assert!(source("rss_mb", Tpbed, false).is_err());
        assert!(source("nope", Tpbed, true)
            .unwrap_err()
            .contains("unknown counter"));
        for (c, _) in COUNTERS {
            assert!(source(c, Tpbed, true).is_ok(), "{c}");
        }
        // tpbed's pool counters: its status variables, and missing with why elsewhere
        assert_eq!(
            source("tp_threads_waiting", Tpbed, false),
            Ok(Source::Status("Tpbed_thread_pool_threads_waiting"))
        );
        let e = source("tp_oldest_event_age_ms", MariaDb, true).unwrap_err();
        assert!(e.contains("tpbed's own pool"), "{e}");
        assert!(Source::Status("x").is_global() && !Source::TrxOpen.is_global());
    }
}
