//! A table's metadata lock: MySQL's MDL reduced to the two modes a test bed needs. Every
//! statement that reads or writes the table holds it shared from its first use to the end of
//! its transaction; DDL that replaces or drops the table holds it exclusive. An exclusive
//! request that waits makes later shared requests wait behind it, which is how one long
//! transaction and one ALTER TABLE stall every new statement on a table in MySQL.

use std::time::Instant;

use crate::latch::{RawLatch, WaitEnd};

/// The lock; held by sessions, not threads (released by whoever holds it, on any thread).
#[derive(Debug, Default)]
pub struct MetadataLock {
    latch: RawLatch,
}

impl MetadataLock {
    /// Takes a shared hold, waiting behind an exclusive holder or waiter until `deadline`.
    pub fn acquire_shared(
        &self,
        deadline: Instant,
        cancelled: &dyn Fn() -> bool,
    ) -> Result<(), WaitEnd> {
        self.latch.read_until(deadline, cancelled)
    }

    /// Releases a shared hold.
    pub fn release_shared(&self) {
        self.latch.unlock_read();
    }

    /// Takes the exclusive hold once no shared hold is left, waiting until `deadline`.
    pub fn acquire_exclusive(
        &self,
        deadline: Instant,
        cancelled: &dyn Fn() -> bool,
    ) -> Result<(), WaitEnd> {
        self.latch.write_until(deadline, cancelled)
    }

    /// Releases the exclusive hold.
    pub fn release_exclusive(&self) {
        self.latch.unlock_write();
    }

    /// Sessions holding it shared.
    pub fn shared_holders(&self) -> u32 {
        self.latch.readers()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;
    use std::time::Duration;

    fn never() -> bool {
        false
    }

    #[test]
    fn exclusive_waits_for_shared_and_new_shared_waits_behind_it() {
        let mdl = Arc::new(MetadataLock::default());
        let soon = || Instant::now() + Duration::from_millis(100);
        mdl.acquire_shared(soon(), &never).unwrap();
        assert_eq!(
            mdl.acquire_exclusive(soon(), &never),
            Err(WaitEnd::TimedOut),
            "a shared holder blocks DDL"
        );
        // Once the timed-out request is gone, shared requests go through again.
        mdl.acquire_shared(soon(), &never).unwrap();
        mdl.release_shared();

        let ddl = {
            let mdl = mdl.clone();
            std::thread::spawn(move || {
                mdl.acquire_exclusive(Instant::now() + Duration::from_secs(10), &never)
            })
        };
        while mdl.latch.try_read() {
            mdl.release_shared();
            std::thread::yield_now();
        }
        assert_eq!(
            mdl.acquire_shared(soon(), &never),
            Err(WaitEnd::TimedOut),
            "a waiting exclusive request queues new shared requests"
        );
        mdl.release_shared();
        ddl.join().unwrap().unwrap();
        assert_eq!(mdl.shared_holders(), 0);
        mdl.release_exclusive();
        mdl.acquire_shared(soon(), &never).unwrap();
        assert_eq!(mdl.shared_holders(), 1);
    }

    #[test]
    fn a_cancelled_wait_ends_early() {
        let mdl = MetadataLock::default();
        mdl.acquire_exclusive(Instant::now(), &never).unwrap();
        let started = Instant::now();
        let r = mdl.acquire_shared(Instant::now() + Duration::from_secs(30), &|| true);
        assert_eq!(r, Err(WaitEnd::Cancelled));
        assert!(started.elapsed() < Duration::from_secs(5));
    }
}
