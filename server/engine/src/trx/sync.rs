//! Where the lock-free read-view structures take their atomics from: std normally, loom under
//! `--cfg loom`, so the loom models check the real code.

#[cfg(loom)]
pub(super) use loom::sync::atomic::{fence, AtomicU64};
#[cfg(loom)]
pub(super) use loom::thread::yield_now;
#[cfg(not(loom))]
pub(super) use std::sync::atomic::{fence, AtomicU64};
#[cfg(not(loom))]
pub(super) use std::thread::yield_now;
