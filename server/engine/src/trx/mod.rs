//! Transactions: ids and commit numbers, read views, the undo log (rollback, savepoints,
//! statement atomicity), the history list and purge, and the lock system they use.
//!
//! Invariants: transaction ids and commit numbers come from one counter, so a read view made
//! at counter value `n` sees every transaction numbered below `n` that is not in its active
//! list; a transaction is removed from the active set and its commit number assigned under
//! one mutex, which then publishes the active set and the counter as one state, so a view
//! never sees half a commit. Views copy that published state and register themselves without
//! the mutex (see [`views`]). A committed transaction's non-insert changes go to the history
//! list in commit-number order; purge takes them from the front only while every open view
//! sees them.

mod active_set;
mod locking;
mod purge;
mod stable_array;
mod sync;
mod views;
mod writes;

#[cfg(test)]
mod locking_tests;
#[cfg(all(test, loom))]
mod loom_models;
#[cfg(test)]
mod tests;

pub use locking::{Fetched, LockingScan, ScanLockMode, ScanOptions};
pub use writes::{delete_row, insert_row, lock_row, update_row, DupLock, WriteError};

use std::collections::{BTreeMap, VecDeque};
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicU8, Ordering::Relaxed};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::thread::JoinHandle;
use std::time::{Duration, Instant, SystemTime};

use crate::lock::{
    IndexId, LockConfig, LockError, LockSys, LockTrx, RecKey, TableId, TableLockMode, TrxId,
};
use crate::{Change, ReadView, Table};
use active_set::ActiveSet;
use views::{OpenView, ViewSlots};

/// Isolation levels with InnoDB's meaning.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Isolation {
    /// Reads see the latest version, locking like READ COMMITTED.
    ReadUncommitted,
    /// A fresh read view per statement; no gap locks outside duplicate checks.
    ReadCommitted,
    /// One read view per transaction (from its first consistent read); next-key locks.
    RepeatableRead,
    /// REPEATABLE READ whose plain SELECTs lock in share mode when autocommit is off.
    Serializable,
}

impl Isolation {
    /// From `transaction_isolation` (`REPEATABLE-READ`, ...; any case, a space for a dash).
    /// Runs at every transaction start, so it compares in place instead of normalising a copy.
    pub fn parse(s: &str) -> Isolation {
        let is = |name: &str| {
            s.len() == name.len()
                && s.bytes()
                    .zip(name.bytes())
                    .all(|(a, b)| a.to_ascii_uppercase() == b || (a == b' ' && b == b'-'))
        };
        if is("READ-UNCOMMITTED") {
            Isolation::ReadUncommitted
        } else if is("READ-COMMITTED") {
            Isolation::ReadCommitted
        } else if is("SERIALIZABLE") {
            Isolation::Serializable
        } else {
            Isolation::RepeatableRead
        }
    }

    /// As `information_schema.innodb_trx.trx_isolation_level` spells it.
    pub fn as_str(self) -> &'static str {
        match self {
            Isolation::ReadUncommitted => "READ UNCOMMITTED",
            Isolation::ReadCommitted => "READ COMMITTED",
            Isolation::RepeatableRead => "REPEATABLE READ",
            Isolation::Serializable => "SERIALIZABLE",
        }
    }

    /// Gap and next-key locks are taken (RR and SERIALIZABLE).
    pub fn gap_locks(self) -> bool {
        self >= Isolation::RepeatableRead
    }
}

/// What `information_schema.innodb_trx` shows of a read-write transaction.
#[derive(Debug)]
pub struct TrxInfo {
    /// `trx_id`.
    pub id: TrxId,
    /// `trx_started`.
    pub started: SystemTime,
    /// For "ACTIVE n sec".
    pub started_at: Instant,
    /// `trx_mysql_thread_id`.
    pub connection_id: u64,
    /// `trx_isolation_level`.
    pub isolation: Isolation,
    /// `trx_rows_modified`.
    pub rows_modified: AtomicU64,
    /// 0 running, 1 committing, 2 rolling back.
    pub state: AtomicU8,
    /// Its lock-system handle.
    pub lock: LockTrx,
}

impl TrxInfo {
    /// `trx_state`.
    pub fn state_text(&self, waiting: bool) -> &'static str {
        match self.state.load(Relaxed) {
            1 => "COMMITTING",
            2 => "ROLLING BACK",
            _ if waiting => "LOCK WAIT",
            _ => "RUNNING",
        }
    }
}

/// A session's transaction. Made by [`TrxSys::begin`]; it gets an id (and becomes visible
/// to other transactions' read views and implicit-lock checks) at its first write or lock.
#[derive(Debug)]
pub struct Trx {
    /// Set once the transaction is read-write.
    pub info: Option<Arc<TrxInfo>>,
    /// Its isolation level.
    pub isolation: Isolation,
    /// START TRANSACTION READ ONLY.
    pub read_only: bool,
    /// The consistent-read view (RR: kept to the end; RC: per statement).
    view: Option<OpenView>,
    /// The undo log: every change, oldest first.
    undo: Vec<(Arc<Table>, Change)>,
    /// Table locks taken (to ask each once).
    table_locks: Vec<(TableId, TableLockMode)>,
    /// When it began.
    pub started: Instant,
    /// The processlist id of its connection.
    pub connection_id: u64,
    /// The performance_schema thread id of its connection.
    pub thread_id: u64,
}

impl Trx {
    /// The transaction id (0 until it is read-write).
    pub fn id(&self) -> TrxId {
        self.info.as_ref().map_or(0, |i| i.id)
    }

    /// Its lock handle, if it has one.
    pub fn lock_handle(&self) -> Option<&LockTrx> {
        self.info.as_ref().map(|i| &i.lock)
    }

    /// The time it waited for locks since the previous call (see
    /// [`LockTrx::take_lock_wait`]); zero for a transaction that never locked.
    pub fn take_lock_wait(&self) -> Duration {
        self.lock_handle()
            .map_or(Duration::ZERO, LockTrx::take_lock_wait)
    }

    /// The undo log's length: a savepoint.
    pub fn savepoint(&self) -> usize {
        self.undo.len()
    }

    /// Appends changes of `table` to the undo log.
    pub fn log(&mut self, table: &Arc<Table>, changes: Vec<Change>) {
        if changes.is_empty() {
            return;
        }
        if let Some(i) = &self.info {
            i.rows_modified.fetch_add(1, Relaxed);
            i.lock
                .set_undo_records((self.undo.len() + changes.len()) as u64);
        }
        self.undo
            .extend(changes.into_iter().map(|c| (Arc::clone(table), c)));
    }
}

/// An estimate of the redo a list of changes generates: per change a record header, the
/// clustered key and each secondary key touched (InnoDB logs page changes; tpbed keeps no
/// pages on disk, so only the volume is modelled).
fn redo_bytes(undo: &[(Arc<Table>, Change)]) -> u64 {
    undo.iter()
        .map(|(_, c)| {
            let sec: usize = c.secondary.iter().map(|s| s.key.len() + 12).sum();
            (32 + c.pk.len() + sec) as u64
        })
        .sum()
}

/// The lock id of an index: unique per table (from the table id) and index position.
pub fn index_id(table: &Table, index: usize) -> IndexId {
    IndexId(table.id() * 1024 + index as u64)
}

/// The lock id of a table.
pub fn table_id(table: &Table) -> TableId {
    TableId(table.id())
}

/// A lock record key for an encoded key, or the supremum.
pub(crate) fn rec_key(key: Option<&[u8]>) -> RecKey<'_> {
    key.map_or(RecKey::Supremum, RecKey::User)
}

/// A committed transaction whose update undo waits for purge.
#[derive(Debug)]
struct Committed {
    trx_no: u64,
    trx_id: TrxId,
    changes: Vec<(Arc<Table>, Change)>,
}

#[derive(Debug, Default)]
struct Active {
    /// Read-write transactions by id.
    trxs: BTreeMap<TrxId, Arc<TrxInfo>>,
}

/// Purge settings: given to [`TrxSys::new`], changed at run time with
/// [`TrxSys::set_purge`], read back with [`TrxSys::purge_config`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PurgeConfig {
    /// `innodb_purge_batch_size`: undo records per purge batch (at least 1).
    pub batch_size: u64,
    /// `innodb_max_purge_lag`: history length above which DML is delayed (0: never).
    pub max_purge_lag: u64,
    /// `innodb_max_purge_lag_delay`: the most a DML is delayed, µs (0: no cap).
    pub max_purge_lag_delay: u64,
}

impl Default for PurgeConfig {
    /// MySQL's defaults: batches of 300, no purge lag, no cap on the delay.
    fn default() -> PurgeConfig {
        PurgeConfig {
            batch_size: 300,
            max_purge_lag: 0,
            max_purge_lag_delay: 0,
        }
    }
}

/// The purge settings in force (each read on its own by purge and DML).
#[derive(Debug)]
struct PurgeSettings {
    batch_size: AtomicU64,
    max_purge_lag: AtomicU64,
    max_purge_lag_delay: AtomicU64,
}

/// Counters of the transaction system.
#[derive(Debug, Default)]
pub struct TrxStats {
    /// INNODB_METRICS `purge_del_mark_records`: records physically removed by purge.
    pub purged_records: AtomicU64,
    /// INNODB_METRICS `purge_undo_log_pages`-like: undo records purged.
    pub purged_undo: AtomicU64,
    /// Transactions committed (read-write).
    pub commits: AtomicU64,
    /// Transactions rolled back.
    pub rollbacks: AtomicU64,
}

/// The transaction system: one per server.
#[derive(Debug)]
pub struct TrxSys {
    /// The lock manager.
    pub locks: LockSys,
    counter: AtomicU64,
    /// Smallest active read-write id (u64::MAX: none): a fast "certainly not active".
    min_active: AtomicU64,
    active: Mutex<Active>,
    /// The active ids and the counter as the last change under `active` left them.
    published: ActiveSet,
    /// The open read views.
    views: ViewSlots,
    /// Acquisitions of `active` (tests check that consistent reads take none).
    #[cfg(test)]
    active_acquisitions: AtomicU64,
    history: Mutex<VecDeque<Committed>>,
    history_len: AtomicU64,
    /// Row bytes purge and rollback freed since the allocator was last trimmed.
    freed_since_trim: AtomicU64,
    /// Purge settings.
    purge: PurgeSettings,
    /// Counters.
    pub stats: TrxStats,
    purge_wake: Condvar,
    purge_sleep: Mutex<()>,
    purge_thread: Mutex<Option<JoinHandle<()>>>,
    shutdown: AtomicBool,
}

impl TrxSys {
    /// A transaction system with its lock system; [`TrxSys::start_purge`] starts purge.
    pub fn new(lock: LockConfig, purge: PurgeConfig) -> Arc<TrxSys> {
        Arc::new(TrxSys {
            locks: LockSys::new(lock),
            counter: AtomicU64::new(1),
            min_active: AtomicU64::new(u64::MAX),
            active: Mutex::new(Active::default()),
            published: ActiveSet::new(1),
            views: ViewSlots::new(),
            #[cfg(test)]
            active_acquisitions: AtomicU64::new(0),
            history: Mutex::new(VecDeque::new()),
            history_len: AtomicU64::new(0),
            freed_since_trim: AtomicU64::new(0),
            purge: PurgeSettings {
                batch_size: AtomicU64::new(purge.batch_size.max(1)),
                max_purge_lag: AtomicU64::new(purge.max_purge_lag),
                max_purge_lag_delay: AtomicU64::new(purge.max_purge_lag_delay),
            },
            stats: TrxStats::default(),
            purge_wake: Condvar::new(),
            purge_sleep: Mutex::new(()),
            purge_thread: Mutex::new(None),
            shutdown: AtomicBool::new(false),
        })
    }

    fn active(&self) -> MutexGuard<'_, Active> {
        #[cfg(test)]
        self.active_acquisitions.fetch_add(1, Relaxed);
        self.active.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// After a change to the active set or the counter, under the mutex (`a` is its guard):
    /// the new smallest active id, and the state read views copy.
    fn publish(&self, a: &Active) {
        self.min_active
            .store(*a.trxs.keys().next().unwrap_or(&u64::MAX), Relaxed);
        self.published
            .publish(self.counter.load(Relaxed), a.trxs.keys().copied());
    }

    /// Starts a transaction (no id yet).
    pub fn begin(
        &self,
        isolation: Isolation,
        read_only: bool,
        connection_id: u64,
        thread_id: u64,
    ) -> Trx {
        Trx {
            info: None,
            isolation,
            read_only,
            view: None,
            undo: Vec::new(),
            table_locks: Vec::new(),
            started: Instant::now(),
            connection_id,
            thread_id,
        }
    }

    /// Makes `trx` read-write: assigns its id and registers it with the lock system.
    pub fn make_read_write(&self, trx: &mut Trx) -> Arc<TrxInfo> {
        if let Some(i) = &trx.info {
            return Arc::clone(i);
        }
        let mut a = self.active();
        let id = self.counter.fetch_add(1, Relaxed);
        let lock = self
            .locks
            .begin_trx_started(id, trx.thread_id, trx.connection_id, trx.started);
        lock.set_read_committed(!trx.isolation.gap_locks());
        let info = Arc::new(TrxInfo {
            id,
            started: SystemTime::now() - trx.started.elapsed(),
            started_at: trx.started,
            connection_id: trx.connection_id,
            isolation: trx.isolation,
            rows_modified: AtomicU64::new(0),
            state: AtomicU8::new(0),
            lock,
        });
        a.trxs.insert(id, Arc::clone(&info));
        self.publish(&a);
        drop(a);
        trx.info = Some(Arc::clone(&info));
        info
    }

    /// Whether read-write transaction `id` is still active (not committed or rolled back).
    pub(crate) fn is_active(&self, id: TrxId) -> bool {
        if id == 0 || id < self.min_active.load(Relaxed) {
            return false;
        }
        self.active().trxs.contains_key(&id)
    }

    /// The smallest active read-write id (u64::MAX: none).
    pub(crate) fn min_active_id(&self) -> u64 {
        self.min_active.load(Relaxed)
    }

    /// The transaction's read view, made now if it has none (RR: at its first consistent
    /// read; RC: call [`TrxSys::end_statement`] after each statement to drop it).
    /// Takes no lock: it copies the published active set and registers the view in a slot.
    pub fn view<'t>(&self, trx: &'t mut Trx) -> &'t ReadView {
        let me = trx.id();
        let hint = trx.thread_id as usize;
        &trx.view
            .get_or_insert_with(|| self.views.open(&self.published, me, hint))
            .view
    }

    fn close_view(&self, trx: &mut Trx) {
        if let Some(v) = trx.view.take() {
            self.views.close(v);
        }
    }

    /// End of a statement: READ COMMITTED and READ UNCOMMITTED drop their read view.
    pub fn end_statement(&self, trx: &mut Trx) {
        if !trx.isolation.gap_locks() {
            self.close_view(trx);
        }
    }

    /// Takes a table lock once per transaction (IS/IX before row locks), waiting if needed;
    /// a table that DDL replaced while the statement waited is 1412 (the statement would
    /// change a table no longer in the catalog).
    pub fn lock_table(
        &self,
        trx: &mut Trx,
        table: &Table,
        mode: TableLockMode,
        timeout: Duration,
    ) -> Result<(), LockError> {
        let id = table_id(table);
        if trx
            .table_locks
            .iter()
            .any(|&(t, m)| t == id && m.stronger_or_eq(mode))
        {
            return Ok(());
        }
        let info = self.make_read_write(trx);
        if let crate::lock::Acquired::Wait(w) = self.locks.lock_table(&info.lock, id, mode)? {
            let _g = pool_core::wait::begin(pool_core::wait::WaitKind::RowLock);
            w.wait(timeout)?;
        }
        trx.table_locks.push((id, mode));
        if table.is_retired() {
            return Err(LockError::TableRebuilt);
        }
        Ok(())
    }

    /// The redo bytes `trx` has generated so far (0: it wrote nothing): what its commit hands
    /// to the logs.
    pub fn redo_bytes(trx: &Trx) -> u64 {
        redo_bytes(&trx.undo)
    }

    /// Commits: assigns the commit number, hands update undo to purge, releases locks.
    /// Returns the redo bytes the transaction generated (0: it wrote nothing), for the
    /// caller's redo-log flush.
    pub fn commit(&self, mut trx: Trx) -> u64 {
        self.close_view(&mut trx);
        let Some(info) = trx.info.take() else {
            return 0;
        };
        info.state.store(1, Relaxed);
        let wrote = redo_bytes(&trx.undo);
        let changes: Vec<(Arc<Table>, Change)> =
            trx.undo.drain(..).filter(|(_, c)| !c.is_insert()).collect();
        {
            let mut a = self.active();
            let trx_no = self.counter.fetch_add(1, Relaxed);
            a.trxs.remove(&info.id);
            self.publish(&a);
            if !changes.is_empty() {
                self.history
                    .lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .push_back(Committed {
                        trx_no,
                        trx_id: info.id,
                        changes,
                    });
                self.history_len.fetch_add(1, Relaxed);
            }
        }
        self.locks.release_all(&info.lock);
        self.stats.commits.fetch_add(1, Relaxed);
        wrote
    }

    /// Rolls the whole transaction back and releases its locks.
    pub fn rollback(&self, mut trx: Trx) {
        self.close_view(&mut trx);
        if let Some(info) = &trx.info {
            info.state.store(2, Relaxed);
        }
        self.undo_to(&mut trx, 0);
        if let Some(info) = trx.info.take() {
            let mut a = self.active();
            a.trxs.remove(&info.id);
            self.publish(&a);
            drop(a);
            self.locks.release_all(&info.lock);
            self.stats.rollbacks.fetch_add(1, Relaxed);
        }
    }

    /// Undoes the changes after `savepoint` (statement rollback, ROLLBACK TO SAVEPOINT);
    /// locks stay.
    pub fn undo_to(&self, trx: &mut Trx, savepoint: usize) {
        let mut freed = 0;
        while trx.undo.len() > savepoint {
            let (table, change) = trx.undo.pop().expect("longer than the savepoint");
            freed += table.rollback_with(&change, &mut |index, key, succ| {
                self.locks.inherit_gap_locks(
                    index_id(&table, index),
                    RecKey::User(key),
                    rec_key(succ),
                    0,
                    crate::lock::Inherit::Removal,
                );
            });
        }
        self.freed_since_trim.fetch_add(freed, Relaxed);
        if let Some(i) = &trx.info {
            i.lock.set_undo_records(trx.undo.len() as u64);
        }
    }

    /// `trx_rseg_history_len`: committed transactions whose update undo waits for purge.
    pub fn history_len(&self) -> u64 {
        self.history_len.load(Relaxed)
    }

    /// Read-write transactions now (for `information_schema.innodb_trx`).
    pub fn active_trxs(&self) -> Vec<Arc<TrxInfo>> {
        self.active().trxs.values().cloned().collect()
    }

    /// KILL: ends the lock wait (current or next in this statement) of the transaction of
    /// connection `connection_id`, if it has one.
    pub fn interrupt_connection(&self, connection_id: u64) {
        let trxs = self.active_trxs();
        if let Some(t) = trxs.iter().find(|t| t.connection_id == connection_id) {
            t.lock.interrupt();
        }
    }

    /// Read views open now.
    pub fn open_views(&self) -> u64 {
        self.views.count()
    }

    /// The next transaction id to be assigned (`Trx id counter`).
    pub fn id_counter(&self) -> u64 {
        self.counter.load(Relaxed)
    }

    /// A fresh counter value for a table rebuild: views made before have a `low_limit_id`
    /// at most this value, views made after a larger one.
    pub fn rebuild_stamp(&self) -> u64 {
        let a = self.active();
        let stamp = self.counter.fetch_add(1, Relaxed);
        self.publish(&a);
        stamp
    }

    /// The commit number below which purge may remove history: the oldest open view's
    /// `low_limit_no`, or the counter when no view is open.
    fn purge_limit(&self) -> u64 {
        self.views.purge_limit(&self.published)
    }

    /// Changes the purge settings for the batches and statements that start from now on.
    pub fn set_purge(&self, cfg: PurgeConfig) {
        self.purge.batch_size.store(cfg.batch_size.max(1), Relaxed);
        self.purge.max_purge_lag.store(cfg.max_purge_lag, Relaxed);
        self.purge
            .max_purge_lag_delay
            .store(cfg.max_purge_lag_delay, Relaxed);
    }

    /// The purge settings in force.
    pub fn purge_config(&self) -> PurgeConfig {
        PurgeConfig {
            batch_size: self.purge.batch_size.load(Relaxed),
            max_purge_lag: self.purge.max_purge_lag.load(Relaxed),
            max_purge_lag_delay: self.purge.max_purge_lag_delay.load(Relaxed),
        }
    }

    /// The delay `innodb_max_purge_lag` imposes on a DML statement now.
    pub fn purge_lag_delay(&self) -> Option<Duration> {
        let lag = self.purge.max_purge_lag.load(Relaxed);
        let len = self.history_len();
        if lag == 0 || len <= lag {
            return None;
        }
        // InnoDB: ((len / lag) * 10) - 5 microseconds, capped by max_purge_lag_delay.
        let mut us = (len * 10 / lag).saturating_sub(5);
        let cap = self.purge.max_purge_lag_delay.load(Relaxed);
        if cap > 0 {
            us = us.min(cap);
        }
        Some(Duration::from_micros(us))
    }
}

impl Drop for TrxSys {
    fn drop(&mut self) {
        self.stop_purge();
    }
}
