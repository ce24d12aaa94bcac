//! The one place pool-core takes its synchronisation types from: std normally, loom under
//! `--cfg loom`, so the scheduler's real code is what the loom models check.

#[cfg(not(loom))]
pub use std::sync::{atomic, Arc, Condvar, Mutex, MutexGuard};
#[cfg(not(loom))]
pub use std::thread;

#[cfg(loom)]
pub use loom::sync::{atomic, Arc, Condvar, Mutex, MutexGuard};
#[cfg(loom)]
pub use loom::thread;
