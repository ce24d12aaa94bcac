//! What tests read back from the server besides result sets: the error a statement got
//! (from the `mysql` crate or the protocol crate's client), status counters, purge's history
//! length, and the shared job-queue fixture (`tests/fixtures/queue.sql`).

use mysql::prelude::Queryable;
use protocol::client::blocking::ClientError;
use protocol::ErrPacket;

/// The server's error for `r` through the `mysql` crate; panics on success or on a client-side
/// error (I/O, protocol).
pub fn mysql_error<T: std::fmt::Debug>(r: mysql::Result<T>) -> mysql::MySqlError {
    match r {
        Err(mysql::Error::MySqlError(e)) => e,
        other => panic!("expected a server error, got {other:?}"),
    }
}

/// The MySQL error number of the server's error for `r` (see [`mysql_error`]).
pub fn code<T: std::fmt::Debug>(r: mysql::Result<T>) -> u16 {
    mysql_error(r).code
}

/// The server's ERR packet for `r` through the protocol crate's client; panics on success or
/// on an I/O or protocol error.
pub fn raw_error<T: std::fmt::Debug>(r: Result<T, ClientError>) -> ErrPacket {
    match r {
        Err(ClientError::Server(e)) => e,
        other => panic!("expected a server error, got {other:?}"),
    }
}

/// The MySQL error number of the server's ERR packet for `r` (see [`raw_error`]).
pub fn raw_code<T: std::fmt::Debug>(r: Result<T, ClientError>) -> u16 {
    raw_error(r).code
}

/// A numeric status variable (`scope` is `GLOBAL` or `SESSION`).
fn status(c: &mut mysql::Conn, scope: &str, name: &str) -> u64 {
    let row: Option<(String, String)> = c
        .query_first(format!("SHOW {scope} STATUS LIKE '{name}'"))
        .unwrap_or_else(|e| panic!("SHOW {scope} STATUS LIKE '{name}': {e}"));
    let (_, v) = row.unwrap_or_else(|| panic!("no {scope} status variable {name}"));
    v.parse()
        .unwrap_or_else(|_| panic!("{scope} status {name} = {v:?}"))
}

/// A numeric global status variable (`SHOW GLOBAL STATUS`); panics if it does not exist.
pub fn global_status(c: &mut mysql::Conn, name: &str) -> u64 {
    status(c, "GLOBAL", name)
}

/// A numeric session status variable (`SHOW SESSION STATUS`); panics if it does not exist.
pub fn session_status(c: &mut mysql::Conn, name: &str) -> u64 {
    status(c, "SESSION", name)
}

/// Creates the job-queue fixture's tables (`q_v1`, `q_v2`, `q_v3`) in `c`'s current
/// database.
pub fn load_queue_fixture(c: &mut mysql::Conn) {
    let sql: String = include_str!("../fixtures/queue.sql")
        .lines()
        .filter(|l| !l.trim_start().starts_with("--"))
        .collect::<Vec<_>>()
        .join("\n");
    for stmt in sql.split(';').map(str::trim).filter(|s| !s.is_empty()) {
        c.query_drop(stmt)
            .unwrap_or_else(|e| panic!("fixture statement {stmt}: {e}"));
    }
}

/// Waits of one kind that connections reported to the thread pool (a
/// `performance_schema.tp_thread_group_stats` column such as `ROW_LOCK_WAITS`), summed over
/// the groups. Only while the pool runs: the table does not exist otherwise.
pub fn pool_waits(c: &mut mysql::Conn, column: &str) -> u64 {
    c.query_first(format!(
        "SELECT CAST(SUM({column}) AS UNSIGNED) FROM performance_schema.tp_thread_group_stats"
    ))
    .unwrap_or_else(|e| panic!("tp_thread_group_stats.{column}: {e}"))
    .unwrap_or_else(|| panic!("no tp_thread_group_stats rows"))
}

/// `SHOW CREATE TABLE table`'s text.
pub fn show_create_table(c: &mut mysql::Conn, table: &str) -> String {
    let row: (String, String) = c
        .query_first(format!("SHOW CREATE TABLE {table}"))
        .unwrap()
        .expect("SHOW CREATE TABLE returns a row");
    row.1
}

/// Purge's history length (`INNODB_METRICS` `trx_rseg_history_len`).
pub fn history_len(c: &mut impl Queryable) -> u64 {
    c.query_first(
        "SELECT COUNT FROM information_schema.INNODB_METRICS WHERE NAME = 'trx_rseg_history_len'",
    )
    .unwrap()
    .expect("trx_rseg_history_len row")
}

/// Waits until purge has emptied the history list; panics after `limit`.
pub fn wait_purged(c: &mut impl Queryable, limit: std::time::Duration) {
    let end = std::time::Instant::now() + limit;
    loop {
        let len = history_len(c);
        if len == 0 {
            return;
        }
        assert!(
            std::time::Instant::now() < end,
            "history length still {len} after {limit:?}"
        );
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
}
