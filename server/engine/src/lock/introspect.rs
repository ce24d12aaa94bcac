//! Introspection snapshots as plain structs for the SQL layer to render:
//! `performance_schema.data_locks` / `data_lock_waits`, the lock columns of
//! `information_schema.innodb_trx`, the row-lock status counters, and LATEST DETECTED
//! DEADLOCK. Invariant: a snapshot takes one shard mutex at a time, so it never stalls the
//! lock system, and each row is consistent with its own queue (not across queues, as in
//! MySQL, whose snapshot is per shard too).

use std::fmt::Write as _;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::time::{Instant, SystemTime, UNIX_EPOCH};

use super::grant::GrantPolicy;
use super::sys::LockSys;
use super::table::{lock, IndexId, LockEntry, TableId, Target};
use super::trx::{LockTrx, TrxId, TrxShared};
use crate::value::Value;

/// Raw counters.
#[derive(Debug, Default)]
pub(crate) struct Stats {
    pub(crate) row_lock_waits: AtomicU64,
    pub(crate) row_lock_time_us: AtomicU64,
    pub(crate) row_lock_time_max_us: AtomicU64,
    pub(crate) current_waits: AtomicU64,
    pub(crate) deadlocks: AtomicU64,
    pub(crate) lock_timeouts: AtomicU64,
}

/// Row-lock status counters with MySQL's names and units.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct LockStats {
    /// `Innodb_row_lock_waits`: record-lock waits begun.
    pub row_lock_waits: u64,
    /// `Innodb_row_lock_time`: total ms spent in record-lock waits.
    pub row_lock_time_ms: u64,
    /// `Innodb_row_lock_time_avg` (ms).
    pub row_lock_time_avg_ms: u64,
    /// `Innodb_row_lock_time_max` (ms).
    pub row_lock_time_max_ms: u64,
    /// `Innodb_row_lock_current_waits`.
    pub row_lock_current_waits: u64,
    /// INNODB_METRICS `lock_deadlocks` (MariaDB/Percona: `Innodb_deadlocks`).
    pub deadlocks: u64,
    /// INNODB_METRICS `lock_timeouts`.
    pub lock_timeouts: u64,
}

/// Names the lock system does not know: the SQL layer resolves ids against its catalog.
pub trait LockNames {
    /// (schema, table) of a table id.
    fn table(&self, table: TableId) -> Option<(String, String)>;
    /// (schema, table, index name) of an index id (`PRIMARY`, `GEN_CLUST_INDEX`, ...).
    fn index(&self, index: IndexId) -> Option<(String, String, String)>;
    /// `LOCK_DATA` of a user record key (see [`lock_data_text`]).
    fn lock_data(&self, index: IndexId, key: &[u8]) -> String;
}

/// `LOCK_DATA` of the supremum.
pub(crate) const SUPREMUM_LOCK_DATA: &str = "supremum pseudo-record";

/// Renders decoded key values as InnoDB's `LOCK_DATA` does: fields joined by `", "`,
/// integers in decimal, strings in single quotes, and a hidden row id (the last value when
/// `hidden_row_id`) as `0x` and 12 hex digits.
pub fn lock_data_text(values: &[Value], hidden_row_id: bool) -> String {
    let mut out = String::new();
    for (i, v) in values.iter().enumerate() {
        if i > 0 {
            out.push_str(", ");
        }
        let last = i + 1 == values.len();
        match v {
            Value::UInt(u) if last && hidden_row_id => {
                let _ = write!(out, "0x{u:012X}");
            }
            Value::Null => out.push_str("NULL"),
            Value::Int(n) => {
                let _ = write!(out, "{n}");
            }
            Value::UInt(n) => {
                let _ = write!(out, "{n}");
            }
            Value::Enum(..) | Value::Set(..) => {
                // InnoDB stores both as integers and prints the stored number.
                let _ = write!(out, "{}", v.member_number().unwrap_or(0));
            }
            Value::Double(d) => {
                let _ = write!(out, "{d}");
            }
            Value::Decimal(d) => {
                let _ = write!(out, "{d}");
            }
            Value::Bytes(b) => {
                let _ = write!(out, "'{}'", String::from_utf8_lossy(b));
            }
            Value::DateTime(dt) => {
                let _ = write!(out, "'{dt}'");
            }
            Value::Time(t, fsp) => {
                let _ = write!(out, "'{}'", crate::time_value::format_time(*t, Some(*fsp)));
            }
        }
    }
    out
}

/// What a lock is on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LockObject {
    /// A table lock.
    Table(TableId),
    /// A record lock; `key` None is the supremum.
    Record {
        /// The index.
        index: IndexId,
        /// The record key.
        key: Option<Vec<u8>>,
    },
}

/// One row of `performance_schema.data_locks`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DataLockRow {
    /// `ENGINE`: always `INNODB`.
    pub engine: &'static str,
    /// `ENGINE_LOCK_ID`: `trx:table:lock` or `trx:index:page:lock`.
    pub engine_lock_id: String,
    /// `ENGINE_TRANSACTION_ID`.
    pub engine_transaction_id: TrxId,
    /// `THREAD_ID`.
    pub thread_id: u64,
    /// `OBJECT_SCHEMA`.
    pub object_schema: String,
    /// `OBJECT_NAME`.
    pub object_name: String,
    /// `INDEX_NAME` (None for table locks).
    pub index_name: Option<String>,
    /// `LOCK_TYPE`: `TABLE` or `RECORD`.
    pub lock_type: &'static str,
    /// `LOCK_MODE`: `IX`, `X`, `X,REC_NOT_GAP`, `X,GAP,INSERT_INTENTION`, ...
    pub lock_mode: &'static str,
    /// `LOCK_STATUS`: `GRANTED` or `WAITING`.
    pub lock_status: &'static str,
    /// `LOCK_DATA` (None for table locks).
    pub lock_data: Option<String>,
    /// The raw object, for callers that filter before rendering.
    pub object: LockObject,
}

/// One row of `performance_schema.data_lock_waits`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DataLockWaitRow {
    /// `ENGINE`.
    pub engine: &'static str,
    /// `REQUESTING_ENGINE_LOCK_ID`.
    pub requesting_engine_lock_id: String,
    /// `REQUESTING_ENGINE_TRANSACTION_ID`.
    pub requesting_engine_transaction_id: TrxId,
    /// `REQUESTING_THREAD_ID`.
    pub requesting_thread_id: u64,
    /// `BLOCKING_ENGINE_LOCK_ID`.
    pub blocking_engine_lock_id: String,
    /// `BLOCKING_ENGINE_TRANSACTION_ID`.
    pub blocking_engine_transaction_id: TrxId,
    /// `BLOCKING_THREAD_ID`.
    pub blocking_thread_id: u64,
}

/// The lock columns of one `information_schema.innodb_trx` row.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TrxLockInfo {
    /// `trx_id`.
    pub trx_id: TrxId,
    /// `trx_lock_structs` (distinct index, page at lock time, mode; one per table lock).
    pub lock_structs: u64,
    /// `trx_rows_locked` (record locks, waiting ones included).
    pub rows_locked: u64,
    /// `trx_requested_lock_id` while waiting (`trx_state` is then `LOCK WAIT`).
    pub requested_lock_id: Option<String>,
    /// When the wait began (`trx_wait_started`).
    pub wait_started: Option<Instant>,
    /// `trx_schedule_weight` (CATS; None when not waiting).
    pub schedule_weight: Option<u64>,
}

/// A lock as the deadlock report shows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LockDesc {
    /// `ENGINE_LOCK_ID`.
    pub lock_id: String,
    /// What it locks.
    pub object: LockObject,
    /// The page at lock time.
    pub page: u64,
    /// The mode as `SHOW ENGINE INNODB STATUS` words it.
    pub status_mode: String,
}

impl LockDesc {
    pub(crate) fn of(l: &LockEntry, t: &Target) -> LockDesc {
        LockDesc {
            lock_id: lock_id(l, t),
            object: object_of(t),
            page: l.page,
            status_mode: match l.mode {
                super::modes::AnyMode::Table(m) => format!("lock mode {}", m.as_str()),
                super::modes::AnyMode::Rec(m) => m.status_text(t.is_supremum()),
            },
        }
    }
}

/// A transaction of a deadlock.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DeadlockTrx {
    /// Its id.
    pub trx_id: TrxId,
    /// `performance_schema` thread id.
    pub thread_id: u64,
    /// Processlist id ("MySQL thread id").
    pub connection_id: u64,
    /// Lock structs at detection.
    pub lock_structs: u64,
    /// Row locks at detection.
    pub rows_locked: u64,
    /// Undo records at detection.
    pub undo_records: u64,
    /// Locks it holds that the previous transaction of the cycle waits for.
    pub holds: Vec<LockDesc>,
    /// The lock it waits for.
    pub waiting_for: LockDesc,
}

/// The latest deadlock: the cycle in order (each waits for the next) and the victim.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DeadlockReport {
    /// When it was detected.
    pub at: SystemTime,
    /// The cycle.
    pub trxs: Vec<DeadlockTrx>,
    /// Index into `trxs` of the transaction rolled back.
    pub victim: usize,
}

impl DeadlockReport {
    /// The LATEST DETECTED DEADLOCK section of `SHOW ENGINE INNODB STATUS`.
    pub fn render(&self, names: &dyn LockNames) -> String {
        let mut s = String::new();
        s.push_str(
            "------------------------\nLATEST DETECTED DEADLOCK\n------------------------\n",
        );
        let secs = self
            .at
            .duration_since(UNIX_EPOCH)
            .map(|d| d.as_secs())
            .unwrap_or(0);
        let _ = writeln!(s, "{}", utc_datetime(secs));
        for (k, t) in self.trxs.iter().enumerate() {
            let n = k + 1;
            let _ = writeln!(s, "*** ({n}) TRANSACTION:");
            let _ = writeln!(s, "TRANSACTION {}, ACTIVE", t.trx_id);
            let _ = writeln!(
                s,
                "LOCK WAIT {} lock struct(s), {} row lock(s), undo log entries {}",
                t.lock_structs, t.rows_locked, t.undo_records
            );
            let _ = writeln!(s, "MySQL thread id {}", t.connection_id);
            let _ = writeln!(s, "*** ({n}) HOLDS THE LOCK(S):");
            for l in &t.holds {
                render_lock(&mut s, l, t.trx_id, names);
            }
            let _ = writeln!(s, "*** ({n}) WAITING FOR THIS LOCK TO BE GRANTED:");
            render_lock(&mut s, &t.waiting_for, t.trx_id, names);
        }
        let _ = writeln!(s, "*** WE ROLL BACK TRANSACTION ({})", self.victim + 1);
        s
    }
}

fn render_lock(s: &mut String, l: &LockDesc, trx: TrxId, names: &dyn LockNames) {
    match &l.object {
        LockObject::Table(t) => {
            let (db, tb) = names.table(*t).unwrap_or_default();
            let _ = writeln!(
                s,
                "TABLE LOCK table `{db}`.`{tb}` trx id {trx} {}",
                l.status_mode
            );
        }
        LockObject::Record { index, key } => {
            let (db, tb, ix) = names.index(*index).unwrap_or_default();
            let _ = writeln!(
                s,
                "RECORD LOCKS page no {} index {ix} of table `{db}`.`{tb}` trx id {trx} {}",
                l.page, l.status_mode
            );
            match key {
                None => s.push_str("Record lock: supremum pseudo-record\n"),
                Some(k) => {
                    let _ = writeln!(s, "Record lock: {}", names.lock_data(*index, k));
                }
            }
        }
    }
}

/// `YYYY-MM-DD HH:MM:SS` (UTC) of seconds since the epoch.
fn utc_datetime(secs: u64) -> String {
    let days = (secs / 86_400) as i64;
    let rem = secs % 86_400;
    // Civil-from-days (proleptic Gregorian).
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    format!(
        "{y:04}-{m:02}-{d:02} {:02}:{:02}:{:02}",
        rem / 3600,
        (rem / 60) % 60,
        rem % 60
    )
}

fn object_of(t: &Target) -> LockObject {
    match t {
        Target::Table(t) => LockObject::Table(*t),
        Target::Rec(ix, k) => LockObject::Record {
            index: *ix,
            key: k.as_ref().map(|k| k.to_vec()),
        },
    }
}

fn lock_id(l: &LockEntry, t: &Target) -> String {
    match t {
        Target::Table(tb) => format!("{}:{}:{}", l.trx.id, tb.0, l.id),
        Target::Rec(ix, _) => format!("{}:{}:{}:{}", l.trx.id, ix.0, l.page, l.id),
    }
}

fn info_of(t: &TrxShared) -> TrxLockInfo {
    let st = t.state();
    let waiting = st.wait.as_ref();
    TrxLockInfo {
        trx_id: t.id,
        lock_structs: st.lock_structs(),
        rows_locked: st.rows_locked,
        requested_lock_id: waiting.map(|w| match &w.target {
            Target::Table(tb) => format!("{}:{}:{}", t.id, tb.0, w.entry),
            Target::Rec(ix, _) => {
                let page = st
                    .held
                    .iter()
                    .find(|h| h.id == w.entry)
                    .map_or(0, |h| h.page);
                format!("{}:{}:{}:{}", t.id, ix.0, page, w.entry)
            }
        }),
        wait_started: waiting.map(|w| w.started),
        schedule_weight: waiting.map(|_| t.schedule_weight.load(Relaxed).max(1)),
    }
}

impl LockSys {
    /// The status counters.
    pub fn stats(&self) -> LockStats {
        let s = &self.inner.stats;
        let waits = s.row_lock_waits.load(Relaxed);
        let time_ms = s.row_lock_time_us.load(Relaxed) / 1000;
        LockStats {
            row_lock_waits: waits,
            row_lock_time_ms: time_ms,
            row_lock_time_avg_ms: time_ms.checked_div(waits).unwrap_or(0),
            row_lock_time_max_ms: s.row_lock_time_max_us.load(Relaxed) / 1000,
            row_lock_current_waits: s.current_waits.load(Relaxed),
            deadlocks: s.deadlocks.load(Relaxed),
            lock_timeouts: s.lock_timeouts.load(Relaxed),
        }
    }

    /// Rows of `performance_schema.data_locks`.
    pub fn data_locks(&self, names: &dyn LockNames) -> Vec<DataLockRow> {
        let mut rows = Vec::new();
        for i in 0..self.inner.table.shard_count() {
            let shard = self.inner.table.shard_at(i);
            for q in shard.queues() {
                for l in q.locks.iter() {
                    rows.push(data_lock_row(l, &q.target, names));
                }
            }
        }
        rows
    }

    /// Rows of `performance_schema.data_lock_waits`: one per (waiting lock, lock it waits
    /// for) pair.
    pub fn data_lock_waits(&self) -> Vec<DataLockWaitRow> {
        let mut rows = Vec::new();
        for i in 0..self.inner.table.shard_count() {
            let shard = self.inner.table.shard_at(i);
            for q in shard.queues() {
                let policy: &dyn GrantPolicy = self.inner.policy_for(&q.target);
                for (pos, w) in q.locks.iter().enumerate().filter(|(_, l)| l.waiting) {
                    for b in q.waits_for(pos, policy) {
                        rows.push(DataLockWaitRow {
                            engine: "INNODB",
                            requesting_engine_lock_id: lock_id(w, &q.target),
                            requesting_engine_transaction_id: w.trx.id,
                            requesting_thread_id: w.trx.thread_id,
                            blocking_engine_lock_id: lock_id(b, &q.target),
                            blocking_engine_transaction_id: b.trx.id,
                            blocking_thread_id: b.trx.thread_id,
                        });
                    }
                }
            }
        }
        rows
    }

    /// The lock columns of one transaction's `innodb_trx` row.
    pub fn trx_lock_info(&self, trx: &LockTrx) -> TrxLockInfo {
        info_of(&trx.0)
    }

    #[cfg(test)]
    /// The lock columns of every registered transaction.
    pub(crate) fn trx_lock_infos(&self) -> Vec<TrxLockInfo> {
        let mut v: Vec<TrxLockInfo> = self.inner.all_trxs().iter().map(|t| info_of(t)).collect();
        v.sort_by_key(|i| i.trx_id);
        v
    }

    /// The latest deadlock, for SHOW ENGINE INNODB STATUS.
    pub fn latest_deadlock(&self) -> Option<DeadlockReport> {
        lock(&self.inner.latest_deadlock).clone()
    }
}

fn data_lock_row(l: &LockEntry, t: &Target, names: &dyn LockNames) -> DataLockRow {
    let (schema, name, index, lock_type, data) = match t {
        Target::Table(tb) => {
            let (db, n) = names.table(*tb).unwrap_or_default();
            (db, n, None, "TABLE", None)
        }
        Target::Rec(ix, key) => {
            let (db, n, i) = names.index(*ix).unwrap_or_default();
            let data = match key {
                None => SUPREMUM_LOCK_DATA.to_string(),
                Some(k) => names.lock_data(*ix, k),
            };
            (db, n, Some(i), "RECORD", Some(data))
        }
    };
    DataLockRow {
        engine: "INNODB",
        engine_lock_id: lock_id(l, t),
        engine_transaction_id: l.trx.id,
        thread_id: l.trx.thread_id,
        object_schema: schema,
        object_name: name,
        index_name: index,
        lock_type,
        lock_mode: l.mode.as_str(t.is_supremum()),
        lock_status: if l.waiting { "WAITING" } else { "GRANTED" },
        lock_data: data,
        object: object_of(t),
    }
}
