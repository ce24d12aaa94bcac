//! Decisions on one queue (a target's locks in order of arrival), made under its shard
//! mutex. Invariant: a lock is granted only if no granted lock of another transaction on the
//! same target conflicts with it; a new request also queues behind others' conflicting
//! waiting locks (no barging) unless it already holds a lock that such a waiter waits for.

use std::sync::Arc;

use super::compat::{rec_covers, rec_has_to_wait, table_compatible};
use super::grant::{Candidate, GrantPolicy};
use super::modes::AnyMode;
use super::table::{LockEntry, Queue};
use super::trx::{TrxId, TrxShared, WaitOutcome};

/// Does a request of `mode` have to wait for `other` (owned by another transaction)?
pub(crate) fn has_to_wait(mode: AnyMode, other: AnyMode, supremum: bool) -> bool {
    match (mode, other) {
        (AnyMode::Rec(r), AnyMode::Rec(h)) => rec_has_to_wait(r, h, supremum),
        (AnyMode::Table(r), AnyMode::Table(h)) => !table_compatible(r, h),
        _ => false,
    }
}

impl Queue {
    fn supremum(&self) -> bool {
        self.target.is_supremum()
    }

    /// Does `trx` already hold a granted lock that satisfies `mode`?
    pub(crate) fn covered(&self, trx: TrxId, mode: AnyMode) -> bool {
        let sup = self.supremum();
        self.locks.iter().any(|l| {
            l.trx_id == trx
                && !l.waiting
                && match (l.mode, mode) {
                    (AnyMode::Rec(h), AnyMode::Rec(r)) => rec_covers(h, r, sup),
                    (AnyMode::Table(h), AnyMode::Table(r)) => h.stronger_or_eq(r),
                    _ => false,
                }
        })
    }

    /// The first lock a new request of `trx` for `mode` has to wait for, if any.
    pub(crate) fn first_blocker(&self, trx: TrxId, mode: AnyMode) -> Option<&LockEntry> {
        let sup = self.supremum();
        self.locks.iter().find(|l| {
            l.trx_id != trx
                && has_to_wait(mode, l.mode, sup)
                && !(l.waiting && self.holds_lock_blocking(trx, l))
        })
    }

    /// Does `trx` hold a granted lock that the waiting lock `w` has to wait for? Then a new
    /// request of `trx` may pass `w` (queueing behind it would be a deadlock).
    fn holds_lock_blocking(&self, trx: TrxId, w: &LockEntry) -> bool {
        let sup = self.supremum();
        self.locks
            .iter()
            .any(|g| g.trx_id == trx && !g.waiting && has_to_wait(w.mode, g.mode, sup))
    }

    /// Others' conflicting locks the waiting lock at `at` has to wait for: granted ones,
    /// and with `waiting_ahead` also waiting ones ahead of it in the queue.
    pub(crate) fn blocking_locks(
        &self,
        at: usize,
        waiting_ahead: bool,
    ) -> impl Iterator<Item = &LockEntry> + '_ {
        let sup = self.supremum();
        let w = &self.locks[at];
        self.locks.iter().enumerate().filter_map(move |(i, l)| {
            (l.trx_id != w.trx_id
                && (!l.waiting || (waiting_ahead && i < at))
                && has_to_wait(w.mode, l.mode, sup))
            .then_some(l)
        })
    }

    /// The wait-for edges of the waiting lock at `at` (the deadlock graph, CATS weights,
    /// `data_lock_waits`): the locks that keep it from being granted under `policy`; if none
    /// does (it queued behind a conflicting waiter and no release has run the grant pass
    /// since), the waiters ahead that it queued behind, as InnoDB's `blocking_trx` records.
    pub(crate) fn waits_for(&self, at: usize, policy: &dyn GrantPolicy) -> Vec<&LockEntry> {
        let v: Vec<&LockEntry> = self
            .blocking_locks(at, policy.earlier_waiters_block())
            .collect();
        if v.is_empty() {
            self.blocking_locks(at, true).collect()
        } else {
            v
        }
    }

    /// The transactions owning [`Queue::waits_for`].
    pub(crate) fn blockers_of(&self, at: usize, policy: &dyn GrantPolicy) -> Vec<TrxId> {
        let mut out: Vec<TrxId> = self
            .waits_for(at, policy)
            .iter()
            .map(|l| l.trx_id)
            .collect();
        out.sort_unstable();
        out.dedup();
        out
    }

    /// Grants every waiting lock that can be granted now, in the order `policy` gives, and
    /// returns their owners and lock ids, to be woken by the caller (still under the shard
    /// mutex).
    pub(crate) fn grant(&mut self, policy: &dyn GrantPolicy) -> Vec<(Arc<TrxShared>, u64)> {
        let mut cands: Vec<Candidate> = self
            .locks
            .iter()
            .enumerate()
            .filter(|(_, l)| l.waiting)
            .map(|(i, l)| Candidate {
                pos: i,
                seq: l.id,
                weight: l
                    .trx
                    .schedule_weight
                    .load(std::sync::atomic::Ordering::Relaxed),
                started: l.trx.started,
            })
            .collect();
        if cands.is_empty() {
            return Vec::new();
        }
        policy.order(&mut cands);
        let mut woken = Vec::new();
        for c in cands {
            let ahead = policy.earlier_waiters_block();
            if self.blocking_locks(c.pos, ahead).next().is_none() {
                let w = &mut self.locks[c.pos];
                w.waiting = false;
                woken.push((Arc::clone(&w.trx), w.id));
            }
        }
        woken
    }
}

/// Wakes the owners of newly granted locks.
pub(crate) fn wake_granted(woken: Vec<(Arc<TrxShared>, u64)>) {
    for (trx, id) in woken {
        trx.wake(id, WaitOutcome::Granted);
    }
}
