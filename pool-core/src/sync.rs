//! Where pool-core takes the synchronisation types that order the scheduler's state from: std
//! normally, loom under `--cfg loom`, so the scheduler's real code is what the loom models
//! check. What publishes no other memory stays on std: the Relaxed statistics counters, the
//! knobs, the round-robin counter, the shared clock and log sink, and the real pollers' own
//! locks (the loom models run on the model poller).

#[cfg(all(test, not(loom)))]
pub(crate) use std::sync::atomic;
#[cfg(not(loom))]
pub(crate) use std::sync::{Arc, Condvar, Mutex, MutexGuard};
#[cfg(not(loom))]
pub(crate) use std::thread;

#[cfg(all(test, loom))]
pub(crate) use loom::sync::atomic;
#[cfg(loom)]
pub(crate) use loom::sync::{Arc, Condvar, Mutex, MutexGuard};
#[cfg(loom)]
pub(crate) use loom::thread;

/// Locks `m`, ignoring poisoning: scheduler state stays consistent across a panicking session
/// because sessions never run under a group mutex.
pub(crate) fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// Waits on `cv`, ignoring poisoning (see [`lock`]).
pub(crate) fn wait<'a, T>(cv: &Condvar, g: MutexGuard<'a, T>) -> MutexGuard<'a, T> {
    cv.wait(g).unwrap_or_else(|e| e.into_inner())
}

/// Waits on `cv` for at most `d`; returns the guard and whether the wait timed out.
pub(crate) fn wait_timeout<'a, T>(
    cv: &Condvar,
    g: MutexGuard<'a, T>,
    d: std::time::Duration,
) -> (MutexGuard<'a, T>, bool) {
    match cv.wait_timeout(g, d) {
        Ok((g, r)) => (g, r.timed_out()),
        Err(e) => {
            let (g, r) = e.into_inner();
            (g, r.timed_out())
        }
    }
}
