//! Waiting for an enqueued lock. Invariant: a wait ends exactly once, decided under the
//! shard mutex of its queue: granted (the grant flipped the lock to granted), deadlock victim
//! (the background thread removed it), or — when the waiter gives up on timeout or KILL QUERY
//! — cancelled by the waiter itself, which then finds out whether a grant beat it.

use std::sync::atomic::Ordering::Relaxed;
use std::sync::Arc;
use std::time::{Duration, Instant};

use super::sys::Inner;
use super::table::{lock, Target};
use super::trx::{TrxShared, WaitOutcome};
use super::LockError;

/// A waiting lock enqueued by a request; wait on it with [`LockWait::wait`] once no latch
/// is held. Dropping it without waiting cancels the request.
#[derive(Debug)]
#[must_use = "dropping a LockWait cancels the lock request"]
pub struct LockWait {
    inner: Arc<Inner>,
    trx: Arc<TrxShared>,
    entry: u64,
    hash: u64,
    target: Target,
    done: bool,
}

impl LockWait {
    pub(crate) fn new(
        inner: Arc<Inner>,
        trx: Arc<TrxShared>,
        entry: u64,
        hash: u64,
        target: Target,
    ) -> LockWait {
        LockWait {
            inner,
            trx,
            entry,
            hash,
            target,
            done: false,
        }
    }

    /// Blocks until the lock is granted (`Ok`), `timeout` (`innodb_lock_wait_timeout`)
    /// passes ([`LockError::WaitTimeout`], 1205: roll back the statement), the transaction is
    /// chosen as a deadlock victim ([`LockError::Deadlock`], 1213: roll back the
    /// transaction), or KILL QUERY interrupts it ([`LockError::Interrupted`], 1317). The wait
    /// is reported to the thread pool as a row-lock wait, and its duration, whatever the
    /// outcome, is added to the transaction's [`super::LockTrx::take_lock_wait`] total.
    pub fn wait(mut self, timeout: Duration) -> Result<(), LockError> {
        let _reported = pool_core::wait::begin(pool_core::WaitKind::RowLock);
        let record = matches!(self.target, Target::Rec(..));
        let inner = Arc::clone(&self.inner);
        let stats = &inner.stats;
        if record {
            stats.row_lock_waits.fetch_add(1, Relaxed);
            stats.current_waits.fetch_add(1, Relaxed);
        }
        let start = Instant::now();
        let deadline = start.checked_add(timeout);
        let give_up = {
            let mut st = self.trx.state();
            loop {
                let outcome = st.wait.as_ref().map(|w| w.outcome);
                match outcome {
                    Some(WaitOutcome::Granted) | None => break None,
                    Some(WaitOutcome::Deadlock) => break Some(LockError::Deadlock),
                    Some(WaitOutcome::Waiting) => {}
                }
                if self.trx.interrupted.load(Relaxed) {
                    break Some(LockError::Interrupted);
                }
                let now = Instant::now();
                match deadline {
                    Some(d) if now >= d => break Some(LockError::WaitTimeout),
                    Some(d) => {
                        st = self
                            .trx
                            .cond
                            .wait_timeout(st, d - now)
                            .unwrap_or_else(|e| e.into_inner())
                            .0;
                    }
                    None => st = self.trx.cond.wait(st).unwrap_or_else(|e| e.into_inner()),
                }
            }
        };
        let result = match give_up {
            None => Ok(()),
            Some(LockError::Deadlock) => Err(LockError::Deadlock),
            Some(err) => self.cancel(err),
        };
        self.finish();
        let waited = start.elapsed();
        self.trx
            .lock_wait_ns
            .fetch_add(waited.as_nanos() as u64, Relaxed);
        if record {
            let us = waited.as_micros() as u64;
            stats.row_lock_time_us.fetch_add(us, Relaxed);
            stats.row_lock_time_max_us.fetch_max(us, Relaxed);
            stats.current_waits.fetch_sub(1, Relaxed);
        }
        if result == Err(LockError::WaitTimeout) {
            stats.lock_timeouts.fetch_add(1, Relaxed);
        }
        result
    }

    /// Withdraws the waiting lock; `Ok` if a grant came first.
    fn cancel(&self, err: LockError) -> Result<(), LockError> {
        let inner = &self.inner;
        if inner.cancel_waiting(&self.trx, self.entry, self.hash, &self.target, None, || ()) {
            return Err(err);
        }
        // Not waiting any more: granted, or removed as a deadlock victim.
        match self.trx.state().wait.as_ref().map(|w| w.outcome) {
            Some(WaitOutcome::Deadlock) => Err(LockError::Deadlock),
            _ => Ok(()),
        }
    }

    fn finish(&mut self) {
        self.done = true;
        self.trx.state().wait = None;
        self.trx.schedule_weight.store(0, Relaxed);
        lock(&self.inner.waiters).remove(&self.trx.id);
    }
}

impl Drop for LockWait {
    fn drop(&mut self) {
        if !self.done {
            let _ = self.cancel(LockError::Interrupted);
            self.finish();
        }
    }
}
