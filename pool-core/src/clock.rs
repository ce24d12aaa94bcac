//! Time as the scheduler sees it: a monotonic [`Duration`] since the pool's epoch, read
//! through a [`Clock`] so unit and loom tests drive time by hand. Invariant: `now()` never
//! goes backwards.

#[cfg(test)]
use crate::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// A monotonic clock.
pub(crate) trait Clock: Send + Sync + 'static {
    /// Time since this clock's epoch.
    fn now(&self) -> Duration;
}

/// The real monotonic clock; its epoch is when it was made.
#[derive(Debug)]
pub(crate) struct SystemClock {
    epoch: Instant,
}

impl SystemClock {
    /// A clock whose epoch is now.
    pub(crate) fn new() -> SystemClock {
        SystemClock {
            epoch: Instant::now(),
        }
    }
}

impl Default for SystemClock {
    fn default() -> Self {
        SystemClock::new()
    }
}

impl Clock for SystemClock {
    fn now(&self) -> Duration {
        self.epoch.elapsed()
    }
}

/// A clock that moves only when told to (tests, loom models).
#[cfg(test)]
#[derive(Debug, Default)]
pub(crate) struct ManualClock {
    micros: AtomicU64,
}

#[cfg(test)]
impl ManualClock {
    /// A clock at time zero.
    pub(crate) fn new() -> ManualClock {
        ManualClock {
            micros: AtomicU64::new(0),
        }
    }

    /// Moves the clock forward by `d`.
    pub(crate) fn advance(&self, d: Duration) {
        // Release pairs with the Acquire in `now`, so a thread that sees the new time also
        // sees what the advancing thread did before.
        self.micros
            .fetch_add(d.as_micros() as u64, Ordering::Release);
    }
}

#[cfg(test)]
impl Clock for ManualClock {
    fn now(&self) -> Duration {
        Duration::from_micros(self.micros.load(Ordering::Acquire))
    }
}
