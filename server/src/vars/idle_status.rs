//! Status variables MySQL 8.0 has for what tpbed never does (SQL-level PREPARE, XA,
//! INSERT DELAYED, TLS): shown as 0, so tools that read them (pt-mysql-summary adds
//! `Com_stmt_prepare` and `Com_prepare_sql`) find them.

/// Their names, as `SHOW STATUS` prints them.
pub const ALWAYS_ZERO: &[&str] = &[
    "Com_dealloc_sql",
    "Com_execute_sql",
    "Com_prepare_sql",
    "Com_xa_commit",
    "Com_xa_end",
    "Com_xa_prepare",
    "Com_xa_recover",
    "Com_xa_rollback",
    "Com_xa_start",
    "Delayed_errors",
    "Delayed_insert_threads",
    "Delayed_writes",
    "Not_flushed_delayed_rows",
    "Ssl_accepts",
    "Ssl_finished_accepts",
];
