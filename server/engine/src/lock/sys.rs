//! The lock system's request and release entry points. Invariant of the latch/lock protocol:
//! every call here takes at most one shard mutex at a time (then possibly the owner's trx
//! mutex), never blocks, and returns; a request that must wait leaves a waiting lock in the
//! queue and hands back a [`LockWait`] that the caller waits on only after releasing its
//! page latches.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicU8, Ordering::Relaxed};
use std::sync::{Arc, Condvar, Mutex};
use std::thread::JoinHandle;
use std::time::Instant;

use super::deadlock;
use super::grant::{Fcfs, GrantPolicy, ScheduleAlgorithm};
use super::hint::{note_granted, HintOwners, LockHint};
use super::introspect::{DeadlockReport, Stats};
use super::modes::{AnyMode, RecLockMode, Strength, TableLockMode};
use super::queue::wake_granted;
use super::table::{lock, IndexId, LockEntry, LockTable, RecKey, TableId, Target, TargetRef};
use super::trx::{Blocker, Held, LockTrx, TrxId, TrxShared, WaitOutcome, WaitState};
use super::wait::LockWait;
use super::LockError;

/// InnoDB 8.0's lock_sys has 512 page shards (`locksys::Latches`); tpbed shards by record.
pub const DEFAULT_SHARDS: usize = 512;

/// Start-up and dynamic settings of the lock system.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LockConfig {
    /// `tpbed_lock_sys_shards` (start-up).
    pub shards: usize,
    /// `innodb_lock_schedule_algorithm` (dynamic through [`LockSys::set_schedule`]).
    pub schedule: ScheduleAlgorithm,
    /// `innodb_deadlock_detect` (dynamic through [`LockSys::set_deadlock_detect`]).
    pub deadlock_detect: bool,
}

impl Default for LockConfig {
    fn default() -> LockConfig {
        LockConfig {
            shards: DEFAULT_SHARDS,
            schedule: ScheduleAlgorithm::Cats,
            deadlock_detect: true,
        }
    }
}

/// What a request does when another transaction's lock conflicts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WaitPolicy {
    /// Enqueue a waiting lock and return [`Acquired::Wait`].
    Wait,
    /// `NOWAIT`: fail with [`LockError::NoWait`] (3572); nothing is enqueued.
    NoWait,
    /// `SKIP LOCKED`: return [`Acquired::Skipped`]; nothing is enqueued.
    SkipLocked,
}

/// The result of a lock request.
#[derive(Debug)]
#[must_use = "a Wait must be waited on after the page latch is released"]
pub enum Acquired {
    /// Held now (newly, or an existing lock of the transaction already covers it).
    Granted,
    /// `SKIP LOCKED` and the record is locked by another transaction: skip it.
    Skipped,
    /// A waiting lock was enqueued: release every latch, then [`LockWait::wait`].
    Wait(LockWait),
}

/// Where a record is: its identity (index, key) and the page it is on now, which only
/// feeds the emulated `trx_lock_structs`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RecAt<'a> {
    /// The index.
    pub index: IndexId,
    /// The record.
    pub key: RecKey<'a>,
    /// The leaf page holding it (or, for the supremum, the last leaf page).
    pub page: u64,
}

#[derive(Debug, Default)]
pub(crate) struct BgFlags {
    pub(crate) wake: bool,
    pub(crate) shutdown: bool,
}

const TRX_REGISTRY_SHARDS: usize = 16;

/// Registered transactions by id (one shard of the registry).
type TrxMap = HashMap<TrxId, Arc<TrxShared>>;

/// State shared with the background thread.
#[derive(Debug)]
pub(crate) struct Inner {
    pub(crate) table: LockTable,
    trxs: Box<[Mutex<TrxMap>]>,
    /// Transactions with a wait in progress (for the background thread).
    pub(crate) waiters: Mutex<TrxMap>,
    pub(crate) next_id: AtomicU64,
    schedule: AtomicU8,
    pub(crate) deadlock_detect: AtomicBool,
    pub(crate) stats: Stats,
    pub(crate) bg: Mutex<BgFlags>,
    pub(crate) bg_cond: Condvar,
    pub(crate) latest_deadlock: Mutex<Option<DeadlockReport>>,
}

impl Inner {
    pub(crate) fn schedule(&self) -> ScheduleAlgorithm {
        ScheduleAlgorithm::from_index(self.schedule.load(Relaxed))
    }

    /// The grant policy of a target: the configured one for records, FCFS for tables.
    pub(crate) fn policy_for(&self, t: &Target) -> &'static dyn GrantPolicy {
        match t {
            Target::Table(_) => &Fcfs,
            Target::Rec(..) => self.schedule().policy(),
        }
    }

    fn registry(&self, id: TrxId) -> &Mutex<TrxMap> {
        &self.trxs[(id as usize) % self.trxs.len()]
    }

    pub(crate) fn find_trx(&self, id: TrxId) -> Option<Arc<TrxShared>> {
        lock(self.registry(id)).get(&id).cloned()
    }

    #[cfg(test)]
    pub(crate) fn all_trxs(&self) -> Vec<Arc<TrxShared>> {
        self.trxs
            .iter()
            .flat_map(|m| lock(m).values().cloned().collect::<Vec<_>>())
            .collect()
    }

    fn wake_bg(&self) {
        lock(&self.bg).wake = true;
        self.bg_cond.notify_one();
    }

    /// Removes the waiting lock `entry` of `trx` from its queue, runs `before_wake`, wakes
    /// it with `outcome` (when given) and grants what that unblocks. Returns whether the
    /// entry was still waiting (else nothing was done).
    pub(crate) fn cancel_waiting(
        &self,
        trx: &TrxShared,
        entry: u64,
        hash: u64,
        target: &Target,
        outcome: Option<WaitOutcome>,
        before_wake: impl FnOnce(),
    ) -> bool {
        let mut shard = self.table.shard(hash);
        let Some(q) = shard.queue(hash, target.as_ref()) else {
            return false;
        };
        let Some(pos) = q.locks.iter().position(|l| l.id == entry && l.waiting) else {
            return false;
        };
        q.locks.remove(pos);
        trx.state().remove(entry);
        before_wake();
        if let Some(o) = outcome {
            trx.wake(entry, o);
        }
        wake_granted(q.grant(self.policy_for(target)));
        shard.remove_if_empty(hash, target.as_ref());
        true
    }

    /// Removes a granted lock of `trx` by id and grants what that unblocks.
    fn release_entry(&self, h: &Held) {
        let mut shard = self.table.shard(h.hash);
        if let Some(q) = shard.queue(h.hash, h.target.as_ref()) {
            let pos = q.locks.iter().position(|l| l.id == h.id);
            if let Some(pos) = pos {
                q.locks.remove(pos);
            }
            if q.locks.iter().any(|l| l.waiting) {
                wake_granted(q.grant(self.policy_for(&h.target)));
            }
        }
        shard.remove_if_empty(h.hash, h.target.as_ref());
    }
}

/// The lock manager: table and record locks, wait queues, the background deadlock and
/// CATS-weight thread, and introspection. One per server.
#[derive(Debug)]
pub struct LockSys {
    pub(crate) inner: Arc<Inner>,
    bg: Option<JoinHandle<()>>,
}

impl LockSys {
    /// A lock system with its background thread running.
    pub fn new(config: LockConfig) -> LockSys {
        let inner = Arc::new(Inner {
            table: LockTable::new(config.shards),
            trxs: (0..TRX_REGISTRY_SHARDS)
                .map(|_| Mutex::new(HashMap::new()))
                .collect(),
            waiters: Mutex::new(HashMap::new()),
            next_id: AtomicU64::new(1),
            schedule: AtomicU8::new(config.schedule.index()),
            deadlock_detect: AtomicBool::new(config.deadlock_detect),
            stats: Stats::default(),
            bg: Mutex::new(BgFlags::default()),
            bg_cond: Condvar::new(),
            latest_deadlock: Mutex::new(None),
        });
        let bg_inner = Arc::clone(&inner);
        let bg = std::thread::Builder::new()
            .name("lock-wait".into())
            .spawn(move || deadlock::run(&bg_inner))
            .expect("spawn the lock-wait thread");
        LockSys {
            inner,
            bg: Some(bg),
        }
    }

    /// The number of lock-table shards (`tpbed_lock_sys_shards`).
    pub fn shards(&self) -> usize {
        self.inner.table.shard_count()
    }

    /// `SET GLOBAL innodb_lock_schedule_algorithm`.
    pub fn set_schedule(&self, alg: ScheduleAlgorithm) {
        self.inner.schedule.store(alg.index(), Relaxed);
    }

    /// `@@innodb_lock_schedule_algorithm`.
    pub fn schedule(&self) -> ScheduleAlgorithm {
        self.inner.schedule()
    }

    /// `SET GLOBAL innodb_deadlock_detect`: off leaves only lock wait timeouts (CATS weights
    /// are still computed).
    pub fn set_deadlock_detect(&self, on: bool) {
        self.inner.deadlock_detect.store(on, Relaxed);
    }

    /// `@@innodb_deadlock_detect`.
    pub fn deadlock_detect(&self) -> bool {
        self.inner.deadlock_detect.load(Relaxed)
    }

    /// Registers a transaction (before its first lock or write, so that conflicting
    /// requesters can convert its implicit locks). `thread_id` is the
    /// `performance_schema` THREAD_ID, `connection_id` the processlist id.
    pub fn begin_trx(&self, id: TrxId, thread_id: u64, connection_id: u64) -> LockTrx {
        self.begin_trx_started(id, thread_id, connection_id, Instant::now())
    }

    /// [`LockSys::begin_trx`] for a transaction that started at `started` (its BEGIN, before
    /// its first lock or write): VATS grants the transaction that started first.
    pub fn begin_trx_started(
        &self,
        id: TrxId,
        thread_id: u64,
        connection_id: u64,
        started: Instant,
    ) -> LockTrx {
        let t = LockTrx::new(id, thread_id, connection_id, started);
        lock(self.inner.registry(id)).insert(id, Arc::clone(&t.0));
        t
    }

    /// Requests a record lock. Call under the leaf page latch of the record (the
    /// supremum: the last leaf); on [`Acquired::Wait`], release the latch, wait, then restore
    /// the cursor and re-read the latest version. The mode is normalised on the supremum.
    /// An insert intention that need not wait creates no lock (the insert's implicit lock
    /// suffices), as in InnoDB.
    pub fn lock_rec(
        &self,
        trx: &LockTrx,
        rec: RecAt<'_>,
        mode: RecLockMode,
        policy: WaitPolicy,
    ) -> Result<Acquired, LockError> {
        self.lock_rec_new(trx, rec, mode, policy).map(|(a, _)| a)
    }

    /// [`LockSys::lock_rec`] that also says whether this call created the lock (false: a
    /// lock the transaction already held covers the request), so READ COMMITTED releases
    /// only locks the current fetch took.
    pub(crate) fn lock_rec_new(
        &self,
        trx: &LockTrx,
        rec: RecAt<'_>,
        mode: RecLockMode,
        policy: WaitPolicy,
    ) -> Result<(Acquired, bool), LockError> {
        let sup = rec.key == RecKey::Supremum;
        let mode = if sup { mode.on_supremum() } else { mode };
        self.request(
            trx,
            TargetRef::Rec(rec.index, rec.key),
            AnyMode::Rec(mode),
            rec.page,
            policy,
        )
    }

    /// Whether the record's lock hint alone refuses a SKIP LOCKED or NOWAIT request for
    /// `mode` on a user record: the check [`LockSys::lock_rec_hinted`] makes before the lock
    /// table, for a scan's skip loop to make without the call.
    #[inline]
    pub(crate) fn hint_refuses(
        &self,
        trx: &LockTrx,
        mode: RecLockMode,
        hint: &LockHint,
        owners: &mut HintOwners,
    ) -> bool {
        self.inner.hint_blocks(trx, mode, hint, owners)
    }

    /// [`LockSys::lock_rec_new`] for a user record that carries a [`LockHint`]. Under SKIP
    /// LOCKED or NOWAIT, a hint that proves another transaction's conflicting granted lock
    /// decides at once, without the lock table (the same answer the table would give); a lock
    /// this call creates and grants is noted in the hint.
    pub(crate) fn lock_rec_hinted(
        &self,
        trx: &LockTrx,
        rec: RecAt<'_>,
        mode: RecLockMode,
        policy: WaitPolicy,
        hint: &LockHint,
        owners: &mut HintOwners,
    ) -> Result<(Acquired, bool), LockError> {
        let user = rec.key != RecKey::Supremum;
        if user && policy != WaitPolicy::Wait && self.hint_refuses(trx, mode, hint, owners) {
            return match policy {
                WaitPolicy::NoWait => Err(LockError::NoWait),
                _ => Ok((Acquired::Skipped, false)),
            };
        }
        let got = self.lock_rec_new(trx, rec, mode, policy)?;
        if user && matches!(got, (Acquired::Granted, true)) {
            note_granted(hint, trx, mode);
        }
        Ok(got)
    }

    /// Requests a table lock (IS/IX before row locks; S/X for LOCK TABLES; AUTO_INC).
    /// Table locks always wait (NOWAIT and SKIP LOCKED apply to rows only).
    pub fn lock_table(
        &self,
        trx: &LockTrx,
        table: TableId,
        mode: TableLockMode,
    ) -> Result<Acquired, LockError> {
        self.request(
            trx,
            TargetRef::Table(table),
            AnyMode::Table(mode),
            0,
            WaitPolicy::Wait,
        )
        .map(|(a, _)| a)
    }

    fn request(
        &self,
        trx: &LockTrx,
        t: TargetRef<'_>,
        mode: AnyMode,
        page: u64,
        policy: WaitPolicy,
    ) -> Result<(Acquired, bool), LockError> {
        let me = &trx.0;
        let hash = t.hash();
        let mut shard = self.inner.table.shard(hash);
        let q = shard.queue_or_insert(hash, t);
        if q.covered(me.id, mode) {
            return Ok((Acquired::Granted, false));
        }
        let blocker = q.first_blocker(me.id, mode).map(|l| Arc::clone(&l.trx));
        let blocked = blocker.is_some();
        let insert_intention = matches!(mode, AnyMode::Rec(m) if m.is_insert_intention());
        if !blocked && insert_intention {
            shard.remove_if_empty(hash, t);
            return Ok((Acquired::Granted, false));
        }
        if blocked {
            match policy {
                WaitPolicy::NoWait => return Err(LockError::NoWait),
                WaitPolicy::SkipLocked => return Ok((Acquired::Skipped, false)),
                WaitPolicy::Wait => {}
            }
        }
        let id = self.inner.next_id.fetch_add(1, Relaxed);
        let no_inherit = matches!(mode, AnyMode::Rec(m) if m.strength() == Strength::X)
            && me.read_committed.load(Relaxed);
        q.locks.push(LockEntry {
            id,
            trx_id: me.id,
            trx: Arc::clone(me),
            mode,
            waiting: blocked,
            page,
            no_inherit,
        });
        let target = q.target.clone();
        let mut st = me.state();
        debug_assert!(!st.released, "lock request after release_all");
        st.add(Held {
            id,
            hash,
            target: target.clone(),
            mode,
            page,
        });
        if !blocked {
            return Ok((Acquired::Granted, true));
        }
        debug_assert!(
            st.wait.is_none(),
            "a transaction waits for one lock at a time"
        );
        st.wait = Some(WaitState {
            entry: id,
            hash,
            target: target.clone(),
            started: Instant::now(),
            outcome: WaitOutcome::Waiting,
            _blocker: blocker.map(Blocker::new),
        });
        drop(st);
        drop(shard);
        lock(&self.inner.waiters).insert(me.id, Arc::clone(me));
        self.inner.wake_bg();
        Ok((
            Acquired::Wait(LockWait::new(
                Arc::clone(&self.inner),
                Arc::clone(me),
                id,
                hash,
                target,
            )),
            false,
        ))
    }

    /// Releases every lock of the transaction and unregisters it (commit, rollback, or a
    /// dropped connection), granting what that unblocks.
    pub fn release_all(&self, trx: &LockTrx) {
        let me = &trx.0;
        me.retire_hints(true);
        let mut held = me.state().take_all();
        lock(self.inner.registry(me.id)).remove(&me.id);
        // Newest first, so that waiters behind several of our locks on one record are
        // granted once the last of them is gone rather than re-checked for each.
        held.sort_by_key(|h| std::cmp::Reverse(h.id));
        for h in &held {
            self.inner.release_entry(h);
        }
    }

    /// Releases one granted record lock of exactly `mode` (READ COMMITTED's "unlock the row
    /// that did not match", InnoDB's `lock_rec_unlock`). Returns whether one was found.
    /// As in InnoDB, the caller releases only locks this fetch newly created, and not one it
    /// had to wait for.
    pub fn release_rec(&self, trx: &LockTrx, rec: RecAt<'_>, mode: RecLockMode) -> bool {
        let sup = rec.key == RecKey::Supremum;
        let mode = AnyMode::Rec(if sup { mode.on_supremum() } else { mode });
        self.release_one(trx, TargetRef::Rec(rec.index, rec.key), mode)
    }

    fn release_one(&self, trx: &LockTrx, t: TargetRef<'_>, mode: AnyMode) -> bool {
        let me = &trx.0;
        let hash = t.hash();
        let mut shard = self.inner.table.shard(hash);
        let Some(q) = shard.queue(hash, t) else {
            return false;
        };
        let Some(pos) = q
            .locks
            .iter()
            .position(|l| l.trx_id == me.id && !l.waiting && l.mode == mode)
        else {
            return false;
        };
        if matches!(t, TargetRef::Rec(..)) {
            me.retire_hints(false);
        }
        let l = q.locks.remove(pos);
        me.state().remove(l.id);
        if q.locks.iter().any(|l| l.waiting) {
            let policy = self.inner.policy_for(&q.target);
            wake_granted(q.grant(policy));
        }
        shard.remove_if_empty(hash, t);
        true
    }
}

impl Drop for LockSys {
    fn drop(&mut self) {
        lock(&self.inner.bg).shutdown = true;
        self.inner.bg_cond.notify_all();
        if let Some(h) = self.bg.take() {
            let _ = h.join();
        }
    }
}
