//! `performance_schema.events_statements_summary_by_digest` and `performance_schema.threads`,
//! plus `information_schema.PROCESSLIST`, which `threads` is joined with.
//!
//! Thread ids: a connection's THREAD_ID is its processlist id plus [`THREAD_ID_OFFSET`]
//! ([`thread_id_of`]), so it differs from PROCESSLIST_ID as in MySQL, where background
//! threads take the first thread ids; ids below the offset belong to background threads
//! (only `thread/sql/main`, id 1, is listed).
//!
//! Digest columns tpbed does not measure (temporary tables, join and sort counters, CPU
//! time, memory, secondary engine) read 0, as MySQL's do when nothing was counted.

use std::sync::atomic::Ordering;
use std::sync::Arc;

use crate::connections::ConnInfo;
use crate::context::Context;
use crate::core::ThreadHandling;
use crate::error::{ErrorCode, SqlError, SqlResult};
use crate::introspection::vtables::{VType, VirtualTable};
use crate::introspection::ServerView;
use crate::sql::Output;
use crate::value::Value;
use crate::vars::Counter;

/// The tables of `performance_schema` that exist in every configuration.
pub const PERFORMANCE_SCHEMA: &[&'static dyn VirtualTable] = &[&StatementsByDigest, &Threads];

/// Added to a connection id to give its performance_schema THREAD_ID.
pub const THREAD_ID_OFFSET: u64 = 47;

/// The `performance_schema` THREAD_ID of connection `connection_id` (what `data_locks`,
/// `threads` and the `events_*` tables show): `connection_id + 47`.
pub fn thread_id_of(connection_id: u64) -> u64 {
    connection_id + THREAD_ID_OFFSET
}

fn u(v: u64) -> Value {
    Value::UInt(v)
}

fn s(v: &str) -> Value {
    Value::str(v)
}

fn ts(us: i64) -> Value {
    Value::DateTime(crate::time::datetime_from_micros(us))
}

/// Executes TRUNCATE TABLE of virtual table `v`: the summaries reset; other introspection
/// tables refuse with 1044, as MySQL refuses TRUNCATE of information_schema tables.
pub fn truncate(st: &Context, v: &'static dyn VirtualTable) -> SqlResult<Output> {
    st.count(Counter::ComTruncate);
    if v.truncate(st.core.as_ref()) {
        return Ok(Output::ok());
    }
    Err(SqlError::new(
        ErrorCode::DbAccessDenied,
        format!(
            "Access denied for user '{}'@'{}' to table '{}'",
            st.user,
            st.account_host,
            v.name()
        ),
    ))
}

/// `performance_schema.events_statements_summary_by_digest`.
#[derive(Debug)]
pub struct StatementsByDigest;

impl VirtualTable for StatementsByDigest {
    fn name(&self) -> &'static str {
        "events_statements_summary_by_digest"
    }
    fn columns(&self) -> &'static [(&'static str, VType)] {
        use VType::*;
        &[
            ("SCHEMA_NAME", Text),
            ("DIGEST", Text),
            ("DIGEST_TEXT", Text),
            ("COUNT_STAR", UInt),
            ("SUM_TIMER_WAIT", UInt),
            ("MIN_TIMER_WAIT", UInt),
            ("AVG_TIMER_WAIT", UInt),
            ("MAX_TIMER_WAIT", UInt),
            ("SUM_LOCK_TIME", UInt),
            ("SUM_ERRORS", UInt),
            ("SUM_WARNINGS", UInt),
            ("SUM_ROWS_AFFECTED", UInt),
            ("SUM_ROWS_SENT", UInt),
            ("SUM_ROWS_EXAMINED", UInt),
            ("SUM_CREATED_TMP_DISK_TABLES", UInt),
            ("SUM_CREATED_TMP_TABLES", UInt),
            ("SUM_SELECT_FULL_JOIN", UInt),
            ("SUM_SELECT_FULL_RANGE_JOIN", UInt),
            ("SUM_SELECT_RANGE", UInt),
            ("SUM_SELECT_RANGE_CHECK", UInt),
            ("SUM_SELECT_SCAN", UInt),
            ("SUM_SORT_MERGE_PASSES", UInt),
            ("SUM_SORT_RANGE", UInt),
            ("SUM_SORT_ROWS", UInt),
            ("SUM_SORT_SCAN", UInt),
            ("SUM_NO_INDEX_USED", UInt),
            ("SUM_NO_GOOD_INDEX_USED", UInt),
            ("SUM_CPU_TIME", UInt),
            ("MAX_CONTROLLED_MEMORY", UInt),
            ("MAX_TOTAL_MEMORY", UInt),
            ("COUNT_SECONDARY", UInt),
            ("FIRST_SEEN", Text),
            ("LAST_SEEN", Text),
            ("QUANTILE_95", UInt),
            ("QUANTILE_99", UInt),
            ("QUANTILE_999", UInt),
            ("QUERY_SAMPLE_TEXT", Text),
            ("QUERY_SAMPLE_SEEN", Text),
            ("QUERY_SAMPLE_TIMER_WAIT", UInt),
        ]
    }
    fn rows(&self, server: &dyn ServerView) -> Vec<Vec<Value>> {
        server
            .digests()
            .rows()
            .into_iter()
            .map(|r| {
                let mut row = vec![
                    r.schema.as_deref().map_or(Value::Null, s),
                    r.digest.as_ref().map_or(Value::Null, |d| s(&d.hex())),
                    r.digest.as_ref().map_or(Value::Null, |d| s(d.text())),
                    u(r.count),
                    u(r.sum_timer_ps),
                    u(r.min_timer_ps),
                    u(r.avg_timer_ps),
                    u(r.max_timer_ps),
                    u(r.sum_lock_ps),
                    u(r.errors),
                    u(r.warnings),
                    u(r.rows_affected),
                    u(r.rows_sent),
                    u(r.rows_examined),
                ];
                // SUM_CREATED_TMP_DISK_TABLES .. COUNT_SECONDARY: not measured.
                row.extend(std::iter::repeat_n(u(0), 17));
                row.extend([
                    ts(r.first_seen_us),
                    ts(r.last_seen_us),
                    u(r.quantile_95_ps),
                    u(r.quantile_99_ps),
                    u(r.quantile_999_ps),
                    r.sample_text.as_deref().map_or(Value::Null, s),
                    r.sample_seen_us.map_or(Value::Null, ts),
                    r.sample_timer_ps.map_or(Value::Null, u),
                ]);
                row
            })
            .collect()
    }
    fn truncate(&self, server: &dyn ServerView) -> bool {
        server.digests().reset();
        true
    }
}

/// `performance_schema.threads`: `thread/sql/main`, then one row per client connection.
#[derive(Debug)]
pub struct Threads;

/// What a thread row needs from a connection.
fn connection_row(server: &dyn ServerView, c: &Arc<ConnInfo>) -> Vec<Value> {
    let login = c.login.lock().unwrap_or_else(|e| e.into_inner()).clone();
    let name = match server.thread_handling() {
        ThreadHandling::Pool => "thread/thread_pool/tp_one_connection",
        ThreadHandling::PerConnection => "thread/sql/one_connection",
    };
    let os = c.os_thread.load(Ordering::Relaxed);
    vec![
        u(thread_id_of(u64::from(c.id))),
        s(name),
        s("FOREGROUND"),
        u(u64::from(c.id)),
        if login.user.is_empty() {
            Value::Null
        } else {
            s(&login.user)
        },
        s(&c.host),
        login.db.as_deref().map_or(Value::Null, s),
        s(c.command().name()),
        u(c.seconds_in_state()),
        c.state().map_or(Value::Null, s),
        c.info_text().as_deref().map_or(Value::Null, s),
        u(1),
        Value::Null,
        s("YES"),
        s("YES"),
        s("TCP/IP"),
        if os == 0 { Value::Null } else { u(os) },
        s("USR_default"),
        s("PRIMARY"),
        u(0),
        u(0),
        u(0),
        u(0),
        s("NO"),
    ]
}

impl VirtualTable for Threads {
    fn name(&self) -> &'static str {
        "threads"
    }
    fn columns(&self) -> &'static [(&'static str, VType)] {
        use VType::*;
        &[
            ("THREAD_ID", UInt),
            ("NAME", Text),
            ("TYPE", Text),
            ("PROCESSLIST_ID", UInt),
            ("PROCESSLIST_USER", Text),
            ("PROCESSLIST_HOST", Text),
            ("PROCESSLIST_DB", Text),
            ("PROCESSLIST_COMMAND", Text),
            ("PROCESSLIST_TIME", UInt),
            ("PROCESSLIST_STATE", Text),
            ("PROCESSLIST_INFO", Text),
            ("PARENT_THREAD_ID", UInt),
            ("ROLE", Text),
            ("INSTRUMENTED", Text),
            ("HISTORY", Text),
            ("CONNECTION_TYPE", Text),
            ("THREAD_OS_ID", UInt),
            ("RESOURCE_GROUP", Text),
            ("EXECUTION_ENGINE", Text),
            ("CONTROLLED_MEMORY", UInt),
            ("MAX_CONTROLLED_MEMORY", UInt),
            ("TOTAL_MEMORY", UInt),
            ("MAX_TOTAL_MEMORY", UInt),
            ("TELEMETRY_ACTIVE", Text),
        ]
    }
    fn rows(&self, server: &dyn ServerView) -> Vec<Vec<Value>> {
        if !server.digests().enabled() {
            return Vec::new();
        }
        // The main thread's OS id is the process id.
        let pid = u64::from(std::process::id());
        let mut rows = vec![vec![
            u(1),
            s("thread/sql/main"),
            s("BACKGROUND"),
            Value::Null,
            Value::Null,
            Value::Null,
            Value::Null,
            Value::Null,
            u(server.uptime().as_secs()),
            Value::Null,
            Value::Null,
            Value::Null,
            Value::Null,
            s("YES"),
            s("YES"),
            Value::Null,
            u(pid),
            s("SYS_default"),
            s("PRIMARY"),
            u(0),
            u(0),
            u(0),
            u(0),
            s("NO"),
        ]];
        rows.extend(
            server
                .connections()
                .snapshot()
                .iter()
                .map(|c| connection_row(server, c)),
        );
        rows
    }
}

/// `information_schema.PROCESSLIST`: `SHOW FULL PROCESSLIST` as a table (every
/// connection; tpbed does not filter by the PROCESS privilege here).
#[derive(Debug)]
pub struct Processlist;

impl VirtualTable for Processlist {
    fn name(&self) -> &'static str {
        "PROCESSLIST"
    }
    fn columns(&self) -> &'static [(&'static str, VType)] {
        use VType::*;
        &[
            ("ID", UInt),
            ("USER", Text),
            ("HOST", Text),
            ("DB", Text),
            ("COMMAND", Text),
            ("TIME", UInt),
            ("STATE", Text),
            ("INFO", Text),
        ]
    }
    fn rows(&self, server: &dyn ServerView) -> Vec<Vec<Value>> {
        server
            .connections()
            .snapshot()
            .iter()
            .map(|c| {
                let login = c.login.lock().unwrap_or_else(|e| e.into_inner()).clone();
                vec![
                    u(u64::from(c.id)),
                    s(if login.user.is_empty() {
                        "unauthenticated user"
                    } else {
                        &login.user
                    }),
                    s(&c.host),
                    login.db.as_deref().map_or(Value::Null, s),
                    s(c.command().name()),
                    u(c.seconds_in_state()),
                    s(c.state().unwrap_or("")),
                    c.info_text().as_deref().map_or(Value::Null, s),
                ]
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn thread_ids_are_offset_from_connection_ids() {
        assert_eq!(thread_id_of(1), 48);
        assert_ne!(thread_id_of(8), 8);
    }

    #[test]
    fn rows_match_columns() {
        let cfg = crate::config::Config::default();
        let server = crate::server::Server::from_config(&cfg).unwrap();
        let core = server.core();
        let conn = Arc::new(ConnInfo::new(5, "127.0.0.1".into(), -1));
        core.connections.insert(conn.clone());
        let d = Arc::new(crate::digest::Digest::new("SELECT ?".into()));
        core.digests
            .record(5, None, &d, &crate::digest::Measure::default(), "SELECT 1");
        for t in [
            &StatementsByDigest as &dyn VirtualTable,
            &Threads,
            &Processlist,
        ] {
            let rows = t.rows(core.as_ref());
            assert!(!rows.is_empty(), "{}", t.name());
            assert!(
                rows.iter().all(|r| r.len() == t.columns().len()),
                "{}",
                t.name()
            );
        }
        assert!(StatementsByDigest.truncate(core.as_ref()));
        assert!(StatementsByDigest.rows(core.as_ref()).is_empty());
        assert!(!Threads.truncate(core.as_ref()));
    }
}
