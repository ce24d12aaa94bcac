//! Page latches: a reader-writer latch that is tried without blocking first and counts every
//! acquisition that had to block, so hot pages show up in `page_latch_waits`.
//!
//! Writers have preference: once a writer waits, new readers queue behind it (no writer
//! starvation on hot pages). That cannot deadlock under the B+tree's latch order (parent before
//! child, left sibling before right), because a waiting writer never holds a latch a reader
//! of an earlier page in that order needs.
//!
//! Sleep/wake protocol (no lost wake-ups): a sleeper (1) locks `mutex`, (2) increments
//! `sleepers`, (3) retries the latch, (4) waits on `cv`; a releaser (a) changes `state`, then
//! (b) reads `sleepers` and, if non-zero, locks `mutex` and notifies all. Both sides use SeqCst
//! on `state` and `sleepers`, so either the sleeper's retry sees the release or the releaser
//! sees the sleeper (and then cannot notify before the sleeper waits, as it holds `mutex`).

use std::sync::atomic::{AtomicU32, AtomicU64, Ordering::SeqCst};
use std::sync::{Condvar, Mutex};
use std::time::{Duration, Instant};

/// How often a timed wait checks whether it was cancelled.
pub const CANCEL_CHECK: Duration = Duration::from_millis(50);

/// Why a timed wait for a latch ended without it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WaitEnd {
    /// The deadline passed.
    TimedOut,
    /// The waiter was cancelled (its query killed).
    Cancelled,
}

/// Bit set while a writer holds the latch.
const WRITER: u32 = 1 << 31;
/// One waiting writer, in bits 16..31.
const WRITER_WAITING: u32 = 1 << 16;
const WAITING_MASK: u32 = 0x7FFF << 16;
/// Reader count, bits 0..16.
const READERS: u32 = 0xFFFF;

/// A reader-writer latch with explicit unlock (guards live in the index module, which holds the
/// latch's page by `Arc`).
#[derive(Debug, Default)]
pub struct RawLatch {
    state: AtomicU32,
    sleepers: AtomicU32,
    mutex: Mutex<()>,
    cv: Condvar,
}

impl RawLatch {
    /// A free latch.
    pub fn new() -> RawLatch {
        RawLatch::default()
    }

    /// Takes a shared latch if no writer holds or waits for it.
    pub(crate) fn try_read(&self) -> bool {
        let mut s = self.state.load(SeqCst);
        loop {
            if s & (WRITER | WAITING_MASK) != 0 || s & READERS == READERS {
                return false;
            }
            match self.state.compare_exchange_weak(s, s + 1, SeqCst, SeqCst) {
                Ok(_) => return true,
                Err(now) => s = now,
            }
        }
    }

    /// Takes an exclusive latch if nobody holds it.
    pub(crate) fn try_write(&self) -> bool {
        self.try_write_inner(0)
    }

    fn try_write_inner(&self, waiting: u32) -> bool {
        let mut s = self.state.load(SeqCst);
        loop {
            if s & (WRITER | READERS) != 0 {
                return false;
            }
            match self
                .state
                .compare_exchange_weak(s, (s - waiting) | WRITER, SeqCst, SeqCst)
            {
                Ok(_) => return true,
                Err(now) => s = now,
            }
        }
    }

    /// Takes a shared latch, blocking if needed; a blocking acquisition adds one to `waits`.
    pub fn read(&self, waits: &AtomicU64) {
        if self.try_read() {
            return;
        }
        waits.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        self.sleep_until(|| self.try_read());
    }

    /// Takes an exclusive latch, blocking if needed; a blocking acquisition adds one to `waits`.
    pub fn write(&self, waits: &AtomicU64) {
        if self.try_write() {
            return;
        }
        waits.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        self.state.fetch_add(WRITER_WAITING, SeqCst);
        self.sleep_until(|| self.try_write_inner(WRITER_WAITING));
    }

    /// [`RawLatch::read`] that gives up at `deadline`, or once `cancelled` says so (checked
    /// at least every [`CANCEL_CHECK`]).
    pub fn read_until(
        &self,
        deadline: Instant,
        cancelled: &dyn Fn() -> bool,
    ) -> Result<(), WaitEnd> {
        if self.try_read() {
            return Ok(());
        }
        self.sleep_until_deadline(|| self.try_read(), deadline, cancelled)
    }

    /// [`RawLatch::write`] that gives up at `deadline`, or once `cancelled` says so; readers
    /// queued behind the abandoned request go ahead.
    pub fn write_until(
        &self,
        deadline: Instant,
        cancelled: &dyn Fn() -> bool,
    ) -> Result<(), WaitEnd> {
        if self.try_write() {
            return Ok(());
        }
        self.state.fetch_add(WRITER_WAITING, SeqCst);
        let r =
            self.sleep_until_deadline(|| self.try_write_inner(WRITER_WAITING), deadline, cancelled);
        if r.is_err() {
            self.state.fetch_sub(WRITER_WAITING, SeqCst);
            self.wake();
        }
        r
    }

    fn sleep_until_deadline(
        &self,
        mut attempt: impl FnMut() -> bool,
        deadline: Instant,
        cancelled: &dyn Fn() -> bool,
    ) -> Result<(), WaitEnd> {
        let mut guard = self.mutex.lock().unwrap_or_else(|e| e.into_inner());
        loop {
            self.sleepers.fetch_add(1, SeqCst);
            if attempt() {
                self.sleepers.fetch_sub(1, SeqCst);
                return Ok(());
            }
            let now = Instant::now();
            let end = if cancelled() {
                Some(WaitEnd::Cancelled)
            } else if now >= deadline {
                Some(WaitEnd::TimedOut)
            } else {
                None
            };
            if let Some(end) = end {
                self.sleepers.fetch_sub(1, SeqCst);
                return Err(end);
            }
            let slice = (deadline - now).min(CANCEL_CHECK);
            guard = self
                .cv
                .wait_timeout(guard, slice)
                .unwrap_or_else(|e| e.into_inner())
                .0;
            self.sleepers.fetch_sub(1, SeqCst);
        }
    }

    fn sleep_until(&self, mut attempt: impl FnMut() -> bool) {
        let mut guard = self.mutex.lock().unwrap_or_else(|e| e.into_inner());
        loop {
            self.sleepers.fetch_add(1, SeqCst);
            if attempt() {
                self.sleepers.fetch_sub(1, SeqCst);
                return;
            }
            guard = self.cv.wait(guard).unwrap_or_else(|e| e.into_inner());
            self.sleepers.fetch_sub(1, SeqCst);
        }
    }

    /// Holders of the shared latch.
    pub fn readers(&self) -> u32 {
        self.state.load(SeqCst) & READERS
    }

    /// Releases a shared latch.
    pub(crate) fn unlock_read(&self) {
        let prev = self.state.fetch_sub(1, SeqCst);
        if prev & READERS == 1 {
            self.wake();
        }
    }

    /// Releases an exclusive latch.
    pub(crate) fn unlock_write(&self) {
        self.state.fetch_and(!WRITER, SeqCst);
        self.wake();
    }

    fn wake(&self) {
        if self.sleepers.load(SeqCst) > 0 {
            let _g = self.mutex.lock().unwrap_or_else(|e| e.into_inner());
            self.cv.notify_all();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    #[test]
    fn exclusion_and_wait_counting() {
        let latch = Arc::new(RawLatch::new());
        let waits = Arc::new(AtomicU64::new(0));
        let counter = Arc::new(AtomicU64::new(0));
        latch.read(&waits);
        assert!(latch.try_read());
        assert!(!latch.try_write());
        latch.unlock_read();
        latch.unlock_read();
        assert_eq!(waits.load(SeqCst), 0);
        let threads: Vec<_> = (0..4)
            .map(|_| {
                let (latch, waits, counter) = (latch.clone(), waits.clone(), counter.clone());
                std::thread::spawn(move || {
                    for _ in 0..2000 {
                        latch.write(&waits);
                        // Non-atomic read-modify-write under the latch: lost updates would show.
                        let v = counter.load(SeqCst);
                        counter.store(v + 1, SeqCst);
                        latch.unlock_write();
                        latch.read(&waits);
                        latch.unlock_read();
                    }
                })
            })
            .collect();
        for t in threads {
            t.join().unwrap();
        }
        assert_eq!(counter.load(SeqCst), 8000);
        assert_eq!(latch.state.load(SeqCst), 0);
    }
}
