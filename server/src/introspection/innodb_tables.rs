//! The InnoDB introspection a DBA reads locks and transactions from:
//! `performance_schema.data_locks` / `data_lock_waits`, `information_schema.INNODB_TRX` and
//! `INNODB_METRICS`, `sys.innodb_lock_waits`, and `SHOW ENGINE INNODB STATUS`.

use std::fmt::Write as _;
use std::sync::Arc;
use std::time::{SystemTime, UNIX_EPOCH};

use crate::engine::lock::{lock_data_text, IndexId, LockNames, TableId};
use crate::engine::Table;
use crate::introspection::vtables::{VType, VirtualTable};
use crate::introspection::ServerView;
use crate::value::Value;

fn s(v: &str) -> Value {
    Value::str(v)
}

fn opt(v: Option<String>) -> Value {
    v.map_or(Value::Null, |t| Value::str(&t))
}

/// Every (database, table) of the catalog.
pub(super) fn tables(server: &dyn ServerView) -> Vec<(String, Arc<Table>)> {
    let cat = &server.catalog().engine;
    let mut out = Vec::new();
    for db in cat.database_names() {
        if let Ok(d) = cat.database(&db) {
            for name in d.table_names() {
                if let Some(t) = d.table(&name) {
                    out.push((db.clone(), t));
                }
            }
        }
    }
    out
}

/// Resolves lock-system ids against the catalog.
pub(super) struct Names(Vec<(String, Arc<Table>)>);

impl Names {
    pub(super) fn of(server: &dyn ServerView) -> Names {
        Names(tables(server))
    }

    fn find(&self, table_id: u64) -> Option<&(String, Arc<Table>)> {
        self.0.iter().find(|(_, t)| t.id() == table_id)
    }
}

/// The name InnoDB gives index `i` of `t`.
fn index_name(t: &Table, i: usize) -> String {
    if i == 0 && t.def().has_hidden_primary() {
        "GEN_CLUST_INDEX".into()
    } else {
        t.def().indexes()[i].name.clone()
    }
}

impl LockNames for Names {
    fn table(&self, table: TableId) -> Option<(String, String)> {
        self.find(table.0)
            .map(|(db, t)| (db.clone(), t.name().to_string()))
    }
    fn index(&self, index: IndexId) -> Option<(String, String, String)> {
        let (db, t) = self.find(index.0 / 1024)?;
        let i = (index.0 % 1024) as usize;
        (i < t.index_count()).then(|| (db.clone(), t.name().to_string(), index_name(t, i)))
    }
    fn lock_data(&self, index: IndexId, key: &[u8]) -> String {
        match self.find(index.0 / 1024) {
            Some((_, t)) => {
                let i = (index.0 % 1024) as usize;
                let mut values = t.decode_index_key(i, key);
                let def = t.def();
                if i > 0 && !def.has_hidden_primary() {
                    // InnoDB stores only the primary-key columns a secondary key lacks.
                    let own = &def.indexes()[i].columns;
                    let n = own.len();
                    let keep: Vec<bool> = def
                        .clustered()
                        .columns
                        .iter()
                        .map(|c| !own.contains(c))
                        .collect();
                    let mut k = keep.iter();
                    let mut j = 0;
                    values.retain(|_| {
                        j += 1;
                        j <= n || *k.next().unwrap_or(&true)
                    });
                }
                lock_data_text(&values, def.has_hidden_primary())
            }
            None => String::new(),
        }
    }
}

/// `performance_schema.data_locks`.
#[derive(Debug)]
pub struct DataLocks;

impl VirtualTable for DataLocks {
    fn name(&self) -> &'static str {
        "data_locks"
    }
    fn columns(&self) -> &'static [(&'static str, VType)] {
        use VType::*;
        &[
            ("ENGINE", Text),
            ("ENGINE_LOCK_ID", Text),
            ("ENGINE_TRANSACTION_ID", UInt),
            ("THREAD_ID", UInt),
            ("EVENT_ID", UInt),
            ("OBJECT_SCHEMA", Text),
            ("OBJECT_NAME", Text),
            ("PARTITION_NAME", Text),
            ("SUBPARTITION_NAME", Text),
            ("INDEX_NAME", Text),
            ("OBJECT_INSTANCE_BEGIN", UInt),
            ("LOCK_TYPE", Text),
            ("LOCK_MODE", Text),
            ("LOCK_STATUS", Text),
            ("LOCK_DATA", Text),
        ]
    }
    fn rows(&self, server: &dyn ServerView) -> Vec<Vec<Value>> {
        let names = Names::of(server);
        server
            .trx()
            .locks
            .data_locks(&names)
            .into_iter()
            .enumerate()
            .map(|(n, r)| {
                vec![
                    s(r.engine),
                    s(&r.engine_lock_id),
                    Value::UInt(r.engine_transaction_id),
                    Value::UInt(r.thread_id),
                    Value::UInt(1),
                    s(&r.object_schema),
                    s(&r.object_name),
                    Value::Null,
                    Value::Null,
                    opt(r.index_name),
                    Value::UInt(0x7f00_0000_0000 + n as u64 * 64),
                    s(r.lock_type),
                    s(r.lock_mode),
                    s(r.lock_status),
                    opt(r.lock_data),
                ]
            })
            .collect()
    }
}

/// `performance_schema.data_lock_waits`.
#[derive(Debug)]
pub struct DataLockWaits;

impl VirtualTable for DataLockWaits {
    fn name(&self) -> &'static str {
        "data_lock_waits"
    }
    fn columns(&self) -> &'static [(&'static str, VType)] {
        use VType::*;
        &[
            ("ENGINE", Text),
            ("REQUESTING_ENGINE_LOCK_ID", Text),
            ("REQUESTING_ENGINE_TRANSACTION_ID", UInt),
            ("REQUESTING_THREAD_ID", UInt),
            ("REQUESTING_EVENT_ID", UInt),
            ("REQUESTING_OBJECT_INSTANCE_BEGIN", UInt),
            ("BLOCKING_ENGINE_LOCK_ID", Text),
            ("BLOCKING_ENGINE_TRANSACTION_ID", UInt),
            ("BLOCKING_THREAD_ID", UInt),
            ("BLOCKING_EVENT_ID", UInt),
            ("BLOCKING_OBJECT_INSTANCE_BEGIN", UInt),
        ]
    }
    fn rows(&self, server: &dyn ServerView) -> Vec<Vec<Value>> {
        server
            .trx()
            .locks
            .data_lock_waits()
            .into_iter()
            .map(|w| {
                vec![
                    s(w.engine),
                    s(&w.requesting_engine_lock_id),
                    Value::UInt(w.requesting_engine_transaction_id),
                    Value::UInt(w.requesting_thread_id),
                    Value::UInt(1),
                    Value::UInt(0),
                    s(&w.blocking_engine_lock_id),
                    Value::UInt(w.blocking_engine_transaction_id),
                    Value::UInt(w.blocking_thread_id),
                    Value::UInt(1),
                    Value::UInt(0),
                ]
            })
            .collect()
    }
}

pub(super) fn datetime_text(t: SystemTime) -> String {
    let us = t
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_micros() as i64);
    let dt = crate::time::datetime_from_micros(us);
    let text = dt.to_string();
    text.split('.').next().unwrap_or(&text).to_string()
}

/// One transaction as INNODB_TRX and the status output describe it.
struct TrxRow {
    info: Arc<crate::trx::TrxInfo>,
    locks: crate::engine::lock::TrxLockInfo,
    query: Option<String>,
}

fn trx_rows(server: &dyn ServerView) -> Vec<TrxRow> {
    let conns = server.connections().snapshot();
    server
        .trx()
        .active_trxs()
        .into_iter()
        .map(|info| {
            let locks = server.trx().locks.trx_lock_info(&info.lock);
            let query = conns
                .iter()
                .find(|c| u64::from(c.id) == info.connection_id)
                .and_then(|c| c.info_text());
            TrxRow { info, locks, query }
        })
        .collect()
}

/// `information_schema.INNODB_TRX`.
#[derive(Debug)]
pub struct InnodbTrx;

impl VirtualTable for InnodbTrx {
    fn name(&self) -> &'static str {
        "INNODB_TRX"
    }
    fn columns(&self) -> &'static [(&'static str, VType)] {
        use VType::*;
        &[
            ("trx_id", UInt),
            ("trx_state", Text),
            ("trx_started", Text),
            ("trx_requested_lock_id", Text),
            ("trx_wait_started", Text),
            ("trx_weight", UInt),
            ("trx_mysql_thread_id", UInt),
            ("trx_query", Text),
            ("trx_operation_state", Text),
            ("trx_tables_in_use", UInt),
            ("trx_tables_locked", UInt),
            ("trx_lock_structs", UInt),
            ("trx_lock_memory_bytes", UInt),
            ("trx_rows_locked", UInt),
            ("trx_rows_modified", UInt),
            ("trx_concurrency_tickets", UInt),
            ("trx_isolation_level", Text),
            ("trx_unique_checks", UInt),
            ("trx_foreign_key_checks", UInt),
            ("trx_last_foreign_key_error", Text),
            ("trx_adaptive_hash_latched", UInt),
            ("trx_adaptive_hash_timeout", UInt),
            ("trx_is_read_only", UInt),
            ("trx_autocommit_non_locking", UInt),
            ("trx_schedule_weight", UInt),
        ]
    }
    fn rows(&self, server: &dyn ServerView) -> Vec<Vec<Value>> {
        let now = std::time::Instant::now();
        trx_rows(server)
            .into_iter()
            .map(|r| {
                let waiting = r.locks.requested_lock_id.is_some();
                let modified = r
                    .info
                    .rows_modified
                    .load(std::sync::atomic::Ordering::Relaxed);
                let wait_started = r
                    .locks
                    .wait_started
                    .map(|w| datetime_text(SystemTime::now() - now.duration_since(w)));
                vec![
                    Value::UInt(r.info.id),
                    s(r.info.state_text(waiting)),
                    s(&datetime_text(r.info.started)),
                    opt(r.locks.requested_lock_id.clone()),
                    opt(wait_started),
                    Value::UInt(modified + r.locks.lock_structs),
                    Value::UInt(r.info.connection_id),
                    opt(r.query),
                    Value::Null,
                    Value::UInt(u64::from(waiting)),
                    Value::UInt(u64::from(r.locks.lock_structs > 0)),
                    Value::UInt(r.locks.lock_structs),
                    Value::UInt(1136 + r.locks.lock_structs * 8),
                    Value::UInt(r.locks.rows_locked),
                    Value::UInt(modified),
                    Value::UInt(0),
                    s(r.info.isolation.as_str()),
                    Value::UInt(1),
                    Value::UInt(1),
                    Value::Null,
                    Value::UInt(0),
                    Value::UInt(0),
                    Value::UInt(0),
                    Value::UInt(0),
                    r.locks.schedule_weight.map_or(Value::Null, Value::UInt),
                ]
            })
            .collect()
    }
}

/// `information_schema.INNODB_METRICS`: the counters tpbed keeps, with MySQL's names where
/// MySQL has them (`trx_rseg_history_len`, `lock_deadlocks`, ...) and one
/// `tpbed_page_latch_waits` row per index (ours; COMMENT names the index).
#[derive(Debug)]
pub struct InnodbMetrics;

impl VirtualTable for InnodbMetrics {
    fn name(&self) -> &'static str {
        "INNODB_METRICS"
    }
    fn columns(&self) -> &'static [(&'static str, VType)] {
        use VType::*;
        &[
            ("NAME", Text),
            ("SUBSYSTEM", Text),
            ("COUNT", UInt),
            ("STATUS", Text),
            ("TYPE", Text),
            ("COMMENT", Text),
        ]
    }
    fn rows(&self, server: &dyn ServerView) -> Vec<Vec<Value>> {
        use std::sync::atomic::Ordering::Relaxed;
        let l = server.trx().locks.stats();
        let t = &server.trx().stats;
        let row = |name: &str, sub: &str, n: u64, ty: &str, c: &str| {
            vec![s(name), s(sub), Value::UInt(n), s("enabled"), s(ty), s(c)]
        };
        let mut rows = vec![
            row(
                "trx_rseg_history_len",
                "transaction",
                server.trx().history_len(),
                "value",
                "Length of the TRX_RSEG_HISTORY list",
            ),
            row(
                "lock_deadlocks",
                "lock",
                l.deadlocks,
                "counter",
                "Number of deadlocks",
            ),
            row(
                "lock_timeouts",
                "lock",
                l.lock_timeouts,
                "counter",
                "Number of lock timeouts",
            ),
            row(
                "lock_row_lock_waits",
                "lock",
                l.row_lock_waits,
                "counter",
                "Number of times a row lock had to be waited for",
            ),
            row(
                "lock_row_lock_current_waits",
                "lock",
                l.row_lock_current_waits,
                "status_counter",
                "Number of row locks currently being waited for",
            ),
            row(
                "purge_del_mark_records",
                "purge",
                t.purged_records.load(Relaxed),
                "counter",
                "Number of delete-marked rows purged",
            ),
            row(
                "purge_undo_log_pages",
                "purge",
                t.purged_undo.load(Relaxed),
                "counter",
                "Number of undo records handled by purge (tpbed counts records)",
            ),
            row(
                "trx_rw_commits",
                "transaction",
                t.commits.load(Relaxed),
                "counter",
                "Number of read-write transactions committed",
            ),
            row(
                "trx_rollbacks",
                "transaction",
                t.rollbacks.load(Relaxed),
                "counter",
                "Number of transactions rolled back",
            ),
        ];
        for (db, table) in tables(server) {
            for i in 0..table.index_count() {
                let waits = table.index_stats(i).page_latch_waits.load(Relaxed);
                rows.push(row(
                    "tpbed_page_latch_waits",
                    "index",
                    waits,
                    "counter",
                    &format!("{db}.{}.{}", table.name(), index_name(&table, i)),
                ));
            }
        }
        rows
    }
}

/// `sys.innodb_lock_waits`: who waits for whom, with both sides' transactions and queries.
#[derive(Debug)]
pub struct SysInnodbLockWaits;

impl VirtualTable for SysInnodbLockWaits {
    fn name(&self) -> &'static str {
        "innodb_lock_waits"
    }
    fn columns(&self) -> &'static [(&'static str, VType)] {
        use VType::*;
        &[
            ("wait_started", Text),
            ("wait_age_secs", UInt),
            ("locked_table", Text),
            ("locked_table_schema", Text),
            ("locked_table_name", Text),
            ("locked_index", Text),
            ("locked_type", Text),
            ("waiting_trx_id", UInt),
            ("waiting_trx_started", Text),
            ("waiting_trx_rows_locked", UInt),
            ("waiting_trx_rows_modified", UInt),
            ("waiting_pid", UInt),
            ("waiting_query", Text),
            ("waiting_lock_id", Text),
            ("waiting_lock_mode", Text),
            ("blocking_trx_id", UInt),
            ("blocking_pid", UInt),
            ("blocking_query", Text),
            ("blocking_lock_id", Text),
            ("blocking_lock_mode", Text),
            ("blocking_trx_started", Text),
            ("blocking_trx_rows_locked", UInt),
            ("blocking_trx_rows_modified", UInt),
            ("sql_kill_blocking_query", Text),
            ("sql_kill_blocking_connection", Text),
        ]
    }
    fn rows(&self, server: &dyn ServerView) -> Vec<Vec<Value>> {
        let names = Names::of(server);
        let locks = server.trx().locks.data_locks(&names);
        let trxs = trx_rows(server);
        let now = std::time::Instant::now();
        let trx = |id: u64| trxs.iter().find(|t| t.info.id == id);
        let lock = |id: &str| locks.iter().find(|l| l.engine_lock_id == id);
        server
            .trx()
            .locks
            .data_lock_waits()
            .into_iter()
            .filter_map(|w| {
                let wl = lock(&w.requesting_engine_lock_id)?;
                let bl = lock(&w.blocking_engine_lock_id);
                let wt = trx(w.requesting_engine_transaction_id)?;
                let bt = trx(w.blocking_engine_transaction_id);
                let age = wt
                    .locks
                    .wait_started
                    .map_or(0, |s| now.duration_since(s).as_secs());
                let started = SystemTime::now() - std::time::Duration::from_secs(age);
                let bpid = bt.map_or(0, |b| b.info.connection_id);
                Some(vec![
                    s(&datetime_text(started)),
                    Value::UInt(age),
                    s(&format!("`{}`.`{}`", wl.object_schema, wl.object_name)),
                    s(&wl.object_schema),
                    s(&wl.object_name),
                    opt(wl.index_name.clone()),
                    s(wl.lock_type),
                    Value::UInt(wt.info.id),
                    s(&datetime_text(wt.info.started)),
                    Value::UInt(wt.locks.rows_locked),
                    Value::UInt(
                        wt.info
                            .rows_modified
                            .load(std::sync::atomic::Ordering::Relaxed),
                    ),
                    Value::UInt(wt.info.connection_id),
                    opt(wt.query.clone()),
                    s(&w.requesting_engine_lock_id),
                    s(wl.lock_mode),
                    Value::UInt(w.blocking_engine_transaction_id),
                    Value::UInt(bpid),
                    opt(bt.and_then(|b| b.query.clone())),
                    s(&w.blocking_engine_lock_id),
                    bl.map_or(Value::Null, |l| s(l.lock_mode)),
                    bt.map_or(Value::Null, |b| s(&datetime_text(b.info.started))),
                    Value::UInt(bt.map_or(0, |b| b.locks.rows_locked)),
                    Value::UInt(bt.map_or(0, |b| {
                        b.info
                            .rows_modified
                            .load(std::sync::atomic::Ordering::Relaxed)
                    })),
                    s(&format!("KILL QUERY {bpid}")),
                    s(&format!("KILL {bpid}")),
                ])
            })
            .collect()
    }
}

/// What `innodb_print_all_deadlocks` writes to the error log for one deadlock.
pub fn deadlock_log_text(
    server: &dyn ServerView,
    report: &crate::engine::lock::DeadlockReport,
) -> String {
    format!(
        "InnoDB: Transactions deadlock detected, dumping detailed information.\n{}",
        super::deadlock::render(server, report, &Names::of(server))
    )
}

/// The text of `SHOW ENGINE INNODB STATUS`: LATEST DETECTED DEADLOCK, TRANSACTIONS and ROW
/// OPERATIONS (the sections tpbed has something to say in).
pub fn innodb_status(server: &dyn ServerView) -> String {
    use std::sync::atomic::Ordering::Relaxed;
    let mut out = String::new();
    let _ = writeln!(out, "\n=====================================");
    let _ = writeln!(
        out,
        "{} INNODB MONITOR OUTPUT",
        datetime_text(SystemTime::now())
    );
    let _ = writeln!(out, "=====================================");
    if let Some(d) = server.trx().locks.latest_deadlock() {
        out.push_str(&super::deadlock::render(server, &d, &Names::of(server)));
        out.push('\n');
    }
    let _ = writeln!(out, "------------\nTRANSACTIONS\n------------");
    let _ = writeln!(out, "Trx id counter {}", server.trx().id_counter());
    let _ = writeln!(out, "History list length {}", server.trx().history_len());
    let _ = writeln!(out, "LIST OF TRANSACTIONS FOR EACH SESSION:");
    for r in trx_rows(server) {
        let secs = r.info.started_at.elapsed().as_secs();
        let waiting = r.locks.requested_lock_id.is_some();
        let _ = writeln!(
            out,
            "---TRANSACTION {}, ACTIVE {} sec{}",
            r.info.id,
            secs,
            if waiting { " LOCK WAIT" } else { "" }
        );
        let _ = writeln!(
            out,
            "{} lock struct(s), heap size {}, {} row lock(s), undo log entries {}",
            r.locks.lock_structs,
            1136 + r.locks.lock_structs * 8,
            r.locks.rows_locked,
            r.info.rows_modified.load(Relaxed)
        );
        let _ = writeln!(
            out,
            "MySQL thread id {}, OS thread handle 0, query id 0 {}",
            r.info.connection_id,
            r.query.as_deref().unwrap_or("")
        );
    }
    let l = server.trx().locks.stats();
    let _ = writeln!(out, "--------------\nROW OPERATIONS\n--------------");
    let _ = writeln!(
        out,
        "0 queries inside InnoDB, 0 queries in queue\n{} read views open inside InnoDB",
        server.trx().open_views()
    );
    let _ = writeln!(
        out,
        "Number of rows inserted {}, updated {}, deleted {}, read {}",
        server.status_counter(crate::vars::Counter::InnodbRowsInserted),
        server.status_counter(crate::vars::Counter::InnodbRowsUpdated),
        server.status_counter(crate::vars::Counter::InnodbRowsDeleted),
        server.status_counter(crate::vars::Counter::InnodbRowsRead),
    );
    let _ = writeln!(
        out,
        "Row lock waits {}, current {}, deadlocks {}",
        l.row_lock_waits, l.row_lock_current_waits, l.deadlocks
    );
    let _ = writeln!(
        out,
        "----------------------------\nEND OF INNODB MONITOR OUTPUT\n============================"
    );
    out
}
