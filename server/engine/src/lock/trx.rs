//! A transaction's side of the lock system. Invariant: every lock struct in the lock table
//! also appears, by id, in its owner's `held` list (waiting ones included) and nowhere else,
//! and `structs`/`rows_locked` count exactly those entries; both are changed together, under
//! the owner's state mutex, taken while the shard mutex is held (shard → trx, never back).

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering, Ordering::Relaxed};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use super::hint::GEN_CLOSED;
use super::introspect::DeadlockReport;
use super::modes::AnyMode;
use super::table::{lock, Target};

/// A transaction id (`DB_TRX_ID`, `ENGINE_TRANSACTION_ID`).
pub type TrxId = u64;

/// How a wait ended, as its waker decided it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum WaitOutcome {
    Waiting,
    Granted,
    Deadlock,
}

/// The one lock a transaction is waiting for.
#[derive(Debug)]
pub(crate) struct WaitState {
    pub(crate) entry: u64,
    pub(crate) hash: u64,
    pub(crate) target: Target,
    pub(crate) started: Instant,
    pub(crate) outcome: WaitOutcome,
    /// The transaction whose lock blocked the request when it was enqueued: its
    /// `waited_on` count includes this wait until the wait ends (kept for its `Drop`).
    pub(crate) _blocker: Option<Blocker>,
}

/// A blocking transaction as a waiter remembers it (printed by id: wait-for cycles would
/// make a derived `Debug` recurse).
pub(crate) struct Blocker(pub(crate) Arc<TrxShared>);

impl Blocker {
    /// Counts a new waiter on `trx`.
    pub(crate) fn new(trx: Arc<TrxShared>) -> Blocker {
        trx.waited_on.fetch_add(1, Relaxed);
        Blocker(trx)
    }
}

impl Drop for Blocker {
    /// The wait ended (or its state was dropped): one waiter fewer.
    fn drop(&mut self) {
        self.0.waited_on.fetch_sub(1, Relaxed);
    }
}

impl std::fmt::Debug for Blocker {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Blocker({})", self.0.id)
    }
}

/// A lock struct as its owner remembers it.
#[derive(Debug)]
pub(crate) struct Held {
    pub(crate) id: u64,
    pub(crate) hash: u64,
    pub(crate) target: Target,
    pub(crate) mode: AnyMode,
    pub(crate) page: u64,
}

/// The emulated InnoDB lock struct a lock belongs to: (table or index id, page, mode).
type StructKey = (bool, u64, u64, AnyMode);

fn struct_key(h: &Held) -> StructKey {
    match &h.target {
        Target::Table(t) => (false, t.0, 0, h.mode),
        Target::Rec(ix, _) => (true, ix.0, h.page, h.mode),
    }
}

/// Mutable lock state of a transaction.
#[derive(Debug, Default)]
pub(crate) struct TrxState {
    /// Set by `release_all`: no lock may be added any more (implicit-lock conversion checks).
    pub(crate) released: bool,
    pub(crate) held: Vec<Held>,
    /// `held.len()`, mirrored for readers that do not take the state mutex
    /// ([`LockTrx::holds_locks`]); shared with `TrxShared::holding`.
    holding: Arc<AtomicU32>,
    structs: HashMap<StructKey, u32>,
    pub(crate) rows_locked: u64,
    pub(crate) wait: Option<WaitState>,
}

impl TrxState {
    pub(crate) fn add(&mut self, h: Held) {
        *self.structs.entry(struct_key(&h)).or_insert(0) += 1;
        if matches!(h.target, Target::Rec(..)) {
            self.rows_locked += 1;
        }
        self.held.push(h);
        self.holding.store(self.held.len() as u32, Relaxed);
    }

    /// Forgets lock `id` (searching from the newest, where RC unlocks find it).
    pub(crate) fn remove(&mut self, id: u64) {
        if let Some(i) = self.held.iter().rposition(|h| h.id == id) {
            let h = self.held.swap_remove(i);
            let k = struct_key(&h);
            if let Some(n) = self.structs.get_mut(&k) {
                *n -= 1;
                if *n == 0 {
                    self.structs.remove(&k);
                }
            }
            if matches!(h.target, Target::Rec(..)) {
                self.rows_locked -= 1;
            }
            self.holding.store(self.held.len() as u32, Relaxed);
        }
    }

    /// Takes every lock for release, leaving the state empty and closed.
    pub(crate) fn take_all(&mut self) -> Vec<Held> {
        self.released = true;
        self.structs.clear();
        self.rows_locked = 0;
        self.holding.store(0, Relaxed);
        std::mem::take(&mut self.held)
    }

    pub(crate) fn lock_structs(&self) -> u64 {
        self.structs.len() as u64
    }
}

/// Shared per-transaction lock data.
#[derive(Debug)]
pub(crate) struct TrxShared {
    pub(crate) id: TrxId,
    pub(crate) thread_id: u64,
    pub(crate) connection_id: u64,
    pub(crate) state: Mutex<TrxState>,
    pub(crate) cond: Condvar,
    pub(crate) interrupted: AtomicBool,
    pub(crate) undo_records: AtomicU64,
    pub(crate) read_committed: AtomicBool,
    /// CATS weight computed by the background thread while the transaction waits (0: none).
    pub(crate) schedule_weight: AtomicU64,
    /// When the transaction started (VATS orders waiters by it).
    pub(crate) started: Instant,
    /// The generation of this transaction's lock hints (see `hint.rs`): grows before any of
    /// its record locks is released; `GEN_CLOSED` from `release_all` on.
    pub(crate) hint_gen: AtomicU32,
    /// The deadlock this transaction was chosen as the victim of, for the victim's thread to
    /// log (`innodb_print_all_deadlocks`).
    pub(crate) deadlock: Mutex<Option<DeadlockReport>>,
    /// Nanoseconds spent in lock waits (granted, timed out, interrupted or deadlocked) that
    /// the owner has not taken yet with [`LockTrx::take_lock_wait`].
    pub(crate) lock_wait_ns: AtomicU64,
    /// Locks (granted or waiting) in `state.held`, kept by `TrxState` ([`LockTrx::holds_locks`]).
    pub(crate) holding: Arc<AtomicU32>,
    /// Waits of other transactions that this one's locks blocked when they were enqueued and
    /// that have not ended ([`LockTrx::blocks_others`]).
    pub(crate) waited_on: AtomicU32,
}

impl TrxShared {
    pub(crate) fn state(&self) -> MutexGuard<'_, TrxState> {
        lock(&self.state)
    }

    /// Ends the current wait with `outcome` (if it is still waiting for `entry`).
    pub(crate) fn wake(&self, entry: u64, outcome: WaitOutcome) {
        let mut st = self.state();
        if let Some(w) = st.wait.as_mut() {
            if w.entry == entry && w.outcome == WaitOutcome::Waiting {
                w.outcome = outcome;
                self.cond.notify_all();
            }
        }
    }

    /// Invalidates every lock hint this transaction has written, before a record lock of
    /// its is released (`closed`: all of them, and no hints from now on).
    pub(crate) fn retire_hints(&self, closed: bool) {
        if closed {
            self.hint_gen.store(GEN_CLOSED, Ordering::SeqCst);
        } else {
            let _ = self
                .hint_gen
                .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |g| {
                    (g < GEN_CLOSED).then_some(g + 1)
                });
        }
    }

    /// Victim weight: undo records plus lock structs (InnoDB's `TRX_WEIGHT`).
    pub(crate) fn weight(&self) -> u64 {
        self.undo_records.load(Relaxed) + self.state().lock_structs()
    }
}

/// A transaction's handle to the lock system, made by [`super::LockSys::begin_trx`] and kept
/// in the transaction until [`super::LockSys::release_all`] at commit or rollback.
#[derive(Debug, Clone)]
pub struct LockTrx(pub(crate) Arc<TrxShared>);

impl LockTrx {
    pub(crate) fn new(id: TrxId, thread_id: u64, connection_id: u64, started: Instant) -> LockTrx {
        let holding = Arc::new(AtomicU32::new(0));
        LockTrx(Arc::new(TrxShared {
            id,
            thread_id,
            connection_id,
            state: Mutex::new(TrxState {
                holding: Arc::clone(&holding),
                ..TrxState::default()
            }),
            cond: Condvar::new(),
            interrupted: AtomicBool::new(false),
            undo_records: AtomicU64::new(0),
            read_committed: AtomicBool::new(false),
            schedule_weight: AtomicU64::new(0),
            started,
            hint_gen: AtomicU32::new(0),
            deadlock: Mutex::new(None),
            lock_wait_ns: AtomicU64::new(0),
            holding,
            waited_on: AtomicU32::new(0),
        }))
    }

    /// The transaction holds (or waits for) a row or table lock: one relaxed load, for a
    /// scheduler deciding under its own mutex.
    pub fn holds_locks(&self) -> bool {
        self.0.holding.load(Relaxed) > 0
    }

    /// Another transaction waits for a lock this one held when the wait began: one relaxed
    /// load. The count is taken per wait from its first blocker and given back when the wait
    /// ends, so after a READ COMMITTED release it may still count a wait that now waits on
    /// someone else.
    pub fn blocks_others(&self) -> bool {
        self.0.waited_on.load(Relaxed) > 0
    }

    /// The transaction id.
    pub fn id(&self) -> TrxId {
        self.0.id
    }

    /// The `performance_schema` thread id given at begin.
    pub fn thread_id(&self) -> u64 {
        self.0.thread_id
    }

    /// KILL QUERY: ends the current (or next) lock wait with
    /// [`super::LockError::Interrupted`] until [`LockTrx::clear_interrupt`].
    pub(crate) fn interrupt(&self) {
        self.0.interrupted.store(true, Relaxed);
        let _st = self.0.state();
        self.0.cond.notify_all();
    }

    /// The report of the deadlock that chose this transaction as its victim, once.
    pub fn take_deadlock_report(&self) -> Option<DeadlockReport> {
        lock(&self.0.deadlock).take()
    }

    /// The time this transaction spent waiting for locks since the previous call (every
    /// ended wait counts, whatever its outcome), and restarts the count: the caller charges it
    /// to the statement that waited.
    pub fn take_lock_wait(&self) -> Duration {
        Duration::from_nanos(self.0.lock_wait_ns.swap(0, Relaxed))
    }

    /// Clears a KILL QUERY flag (at the start of the next statement).
    pub fn clear_interrupt(&self) {
        self.0.interrupted.store(false, Relaxed);
    }

    /// Sets the undo-record count the deadlock victim choice weighs (the caller's undo log
    /// length; lock structs are added by the lock system).
    pub(crate) fn set_undo_records(&self, n: u64) {
        self.0.undo_records.store(n, Relaxed);
    }

    /// Marks the transaction as READ COMMITTED (or READ UNCOMMITTED): its X record locks
    /// are then not inherited as gap locks when their record is removed, as in InnoDB.
    pub(crate) fn set_read_committed(&self, yes: bool) {
        self.0.read_committed.store(yes, Relaxed);
    }
}
