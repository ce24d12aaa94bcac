//! The wait hook: engine code reports a blocking wait (row lock, SLEEP, user lock, commit
//! flush) so a pool can free the waiting statement's credit while it lasts.
//!
//! A pool worker installs a [`WaitObserver`] for the thread while it runs a session; outside a
//! pool worker [`begin`] is a no-op that costs one thread-local read.
//!
//! The same hook carries cooperative yield: long operations call [`safe_point`] where they
//! hold no latch (between rows of a scan, between comparisons of a sort, between records of a
//! commit); every [`SAFE_POINT_EVERY`] calls it asks the installed observer whether the
//! scheduling policy wants the statement to give its thread up, and if so the statement
//! sleeps there, keeping its locks, until the pool resumes it.

use std::cell::{Cell, RefCell};
use std::rc::Rc;

/// Kinds of waits MySQL's pool is told about (`thd_wait_begin` types that matter here).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum WaitKind {
    /// Waiting for a row lock held by another transaction.
    RowLock,
    /// `SELECT SLEEP(n)`.
    Sleep,
    /// `GET_LOCK()` and other user-level locks.
    UserLock,
    /// Waiting for the redo log flush of a group commit.
    CommitFlush,
}

/// Receives wait begin/end notifications for the current thread.
pub trait WaitObserver {
    /// The thread is about to block.
    fn wait_begin(&self, kind: WaitKind);
    /// The thread is running again.
    fn wait_end(&self, kind: WaitKind);
    /// The thread is at a safe point (it holds no latch): it may yield here.
    fn safe_point(&self) {}
    /// Whether the thread was asked to yield (it will at its next [`safe_point`]).
    fn yield_requested(&self) -> bool {
        false
    }
}

/// How many [`safe_point`] calls pass between two looks at the observer.
pub const SAFE_POINT_EVERY: u32 = 64;

#[cfg(not(loom))]
thread_local! {
    static OBSERVER: RefCell<Option<Rc<dyn WaitObserver>>> = const { RefCell::new(None) };
}

// Under loom every model thread runs on one OS thread, so the observer must be a loom
// thread-local to stay per model thread.
#[cfg(loom)]
loom::thread_local! {
    static OBSERVER: RefCell<Option<Rc<dyn WaitObserver>>> = RefCell::new(None);
}

#[cfg(not(loom))]
thread_local! {
    static COUNTDOWN: Cell<u32> = const { Cell::new(SAFE_POINT_EVERY) };
}

#[cfg(loom)]
loom::thread_local! {
    static COUNTDOWN: Cell<u32> = Cell::new(SAFE_POINT_EVERY);
}

/// Whether this call is the [`SAFE_POINT_EVERY`]th since the last look.
#[inline]
fn look_due() -> bool {
    COUNTDOWN.with(|c| {
        let n = c.get();
        if n > 1 {
            c.set(n - 1);
            false
        } else {
            c.set(SAFE_POINT_EVERY);
            true
        }
    })
}

/// A cooperative safe point: the caller holds no latch and may sleep here with its locks.
/// Costs a thread-local decrement; every [`SAFE_POINT_EVERY`] calls the installed observer
/// decides (a pool worker yields when its policy asked it to).
#[inline]
pub fn safe_point() {
    if look_due() {
        yield_now();
    }
}

/// For a loop that holds a latch between steps (the SKIP LOCKED skip loop): every
/// [`SAFE_POINT_EVERY`] calls, whether the thread was asked to yield. When true the caller
/// saves its position, releases every latch and calls [`yield_now`].
#[inline]
pub fn yield_requested() -> bool {
    look_due() && observer_wants_yield()
}

/// Whether the installed observer asks the thread to yield (false without one).
#[cold]
fn observer_wants_yield() -> bool {
    OBSERVER.with(|o| o.borrow().as_ref().is_some_and(|obs| obs.yield_requested()))
}

/// A safe point without the countdown: yields now if the thread was asked to. The caller
/// holds no latch.
#[cold]
pub fn yield_now() {
    let observer = OBSERVER.with(|o| o.borrow().clone());
    if let Some(obs) = observer {
        obs.safe_point();
    }
}

/// Installs `observer` for this thread (a pool worker attaching to a session).
pub fn install(observer: Rc<dyn WaitObserver>) {
    OBSERVER.with(|o| *o.borrow_mut() = Some(observer));
}

/// Removes this thread's observer (the worker detaches).
pub fn uninstall() {
    OBSERVER.with(|o| *o.borrow_mut() = None);
}

/// Reports that the current thread starts a blocking wait of `kind`; the wait ends when the
/// returned guard drops.
pub fn begin(kind: WaitKind) -> WaitGuard {
    let observer = OBSERVER.with(|o| o.borrow().clone());
    if let Some(obs) = &observer {
        obs.wait_begin(kind);
    }
    WaitGuard { kind, observer }
}

/// Ends a reported wait when dropped.
#[must_use = "the wait ends when the guard drops"]
pub struct WaitGuard {
    kind: WaitKind,
    observer: Option<Rc<dyn WaitObserver>>,
}

impl std::fmt::Debug for WaitGuard {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("WaitGuard")
            .field("kind", &self.kind)
            .field("observed", &self.observer.is_some())
            .finish()
    }
}

impl Drop for WaitGuard {
    fn drop(&mut self) {
        if let Some(obs) = &self.observer {
            obs.wait_end(self.kind);
        }
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;
    use std::cell::Cell;

    #[derive(Default)]
    struct Counting {
        begun: Cell<u32>,
        ended: Cell<u32>,
    }
    impl WaitObserver for Counting {
        fn wait_begin(&self, _: WaitKind) {
            self.begun.set(self.begun.get() + 1);
        }
        fn wait_end(&self, _: WaitKind) {
            self.ended.set(self.ended.get() + 1);
        }
    }

    #[test]
    fn begin_is_a_no_op_without_observer_and_paired_with_one() {
        drop(begin(WaitKind::Sleep));
        let obs = Rc::new(Counting::default());
        install(obs.clone());
        {
            let _g = begin(WaitKind::RowLock);
            assert_eq!((obs.begun.get(), obs.ended.get()), (1, 0));
        }
        assert_eq!((obs.begun.get(), obs.ended.get()), (1, 1));
        uninstall();
        drop(begin(WaitKind::Sleep));
        assert_eq!(obs.begun.get(), 1);
    }
}
