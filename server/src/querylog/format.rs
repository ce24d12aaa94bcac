//! The text of query log entries, in mysqld 8.0's file formats: the header a log file starts
//! with, a general log line and a slow log entry.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use crate::time::iso8601_utc;

/// The lines mysqld writes when it opens a query log file.
pub fn header(program: &str, version: &str, port: i64) -> String {
    format!(
        "{program}, Version: {version} (tpbed). started with:\n\
         Tcp port: {port}  Unix socket: \n\
         Time                 Id Command    Argument\n"
    )
}

/// One general log line: time, connection id (right-aligned in 5), command, argument.
pub fn general_line(at: SystemTime, conn_id: u32, command: &str, argument: &str) -> String {
    format!("{}\t{conn_id:>5} {command}\t{argument}\n", iso8601_utc(at))
}

/// What one statement did, as the slow log reports it.
#[derive(Debug, Clone)]
pub struct SlowEntry<'a> {
    /// When the statement started.
    pub started: SystemTime,
    /// How long it ran.
    pub query_time: Duration,
    /// How long it waited for locks.
    pub lock_time: Duration,
    /// Rows sent to the client.
    pub rows_sent: u64,
    /// Rows the storage engine returned to the statement.
    pub rows_examined: u64,
    /// The connection id.
    pub conn_id: u32,
    /// `user[user] @ host [ip]`, as mysqld prints the account.
    pub user_host: &'a str,
    /// The statement's default database.
    pub db: Option<&'a str>,
    /// The statement text.
    pub text: &'a str,
}

/// The account part of a slow log entry: the privilege user, the login user, the host
/// name (`localhost` for a loopback address, as name resolution gives) and the address.
pub fn user_host(user: &str, ip: &str) -> String {
    let host = if ip == "127.0.0.1" || ip == "::1" {
        "localhost"
    } else {
        ""
    };
    format!("{user}[{user}] @ {host} [{ip}]")
}

/// One slow log entry; `last_db` is the database the file's previous entry ran in (a
/// `use db;` line goes out when it changes, and `last_db` is updated).
pub fn slow_entry(e: &SlowEntry<'_>, last_db: &mut String) -> String {
    let ended = e.started + e.query_time;
    let mut out = format!(
        "# Time: {}\n# User@Host: {}  Id: {:>5}\n\
         # Query_time: {:.6}  Lock_time: {:.6} Rows_sent: {}  Rows_examined: {}\n",
        iso8601_utc(ended),
        e.user_host,
        e.conn_id,
        e.query_time.as_secs_f64(),
        e.lock_time.as_secs_f64(),
        e.rows_sent,
        e.rows_examined
    );
    if let Some(db) = e.db.filter(|d| *d != last_db.as_str()) {
        out.push_str(&format!("use {db};\n"));
        *last_db = db.to_string();
    }
    let secs = e
        .started
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0);
    out.push_str(&format!("SET timestamp={secs};\n{};\n", e.text));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn general_line_has_mysqlds_columns() {
        let at = UNIX_EPOCH + Duration::from_micros(1_764_676_168_123_456);
        assert_eq!(
            general_line(at, 8, "Query", "SELECT 1"),
            "2025-12-02T11:49:28.123456Z\t    8 Query\tSELECT 1\n"
        );
    }

    #[test]
    fn slow_entry_has_mysqlds_lines_and_a_use_only_when_the_database_changes() {
        let started = UNIX_EPOCH + Duration::from_secs(1_764_676_168);
        let uh = user_host("root", "127.0.0.1");
        let e = SlowEntry {
            started,
            query_time: Duration::from_micros(1_500_000),
            lock_time: Duration::from_micros(20),
            rows_sent: 1,
            rows_examined: 100,
            conn_id: 12,
            user_host: &uh,
            db: Some("test"),
            text: "SELECT SLEEP(1.5)",
        };
        let mut last = String::new();
        assert_eq!(
            slow_entry(&e, &mut last),
            "# Time: 2025-12-02T11:49:29.500000Z\n\
             # User@Host: root[root] @ localhost [127.0.0.1]  Id:    12\n\
             # Query_time: 1.500000  Lock_time: 0.000020 Rows_sent: 1  Rows_examined: 100\n\
             use test;\n\
             SET timestamp=1764676168;\n\
             SELECT SLEEP(1.5);\n"
        );
        assert!(!slow_entry(&e, &mut last).contains("use test;"));
    }
}
