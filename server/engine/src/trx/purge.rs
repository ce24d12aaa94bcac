//! Purge: a background thread that takes committed transactions from the front of the
//! history list, in commit-number order, once every open read view sees them, and finishes
//! their changes (frees old versions, removes delete-marked records and entries; removed
//! records pass their locks to their successors as gap locks). When it has caught up, it
//! gives the memory that it and rollbacks freed back to the operating system, as
//! [`TrimPolicy`] decides.

use std::sync::atomic::Ordering::Relaxed;
use std::sync::Arc;
use std::time::{Duration, Instant};

use super::{index_id, rec_key, TrxSys};
use crate::lock::{Inherit, RecKey};
use crate::memory::{self, TrimPolicy};

/// How often purge looks for work when nobody wakes it.
const PURGE_INTERVAL: Duration = Duration::from_millis(10);

impl TrxSys {
    /// Starts the purge thread (`innodb_purge_threads` is accepted; one coordinator thread
    /// does the work here); fails only if the thread cannot be spawned.
    pub fn start_purge(self: &Arc<TrxSys>) -> std::io::Result<()> {
        let me = Arc::downgrade(self);
        let mut trim = TrimPolicy::new(Instant::now());
        let h = std::thread::Builder::new()
            .name("purge".into())
            .spawn(move || loop {
                let Some(sys) = me.upgrade() else { return };
                if sys.shutdown.load(Relaxed) {
                    return;
                }
                let done = sys.purge_batch();
                let caught_up = done < sys.purge_config().batch_size;
                let dropped = memory::take_table_rows_freed();
                if dropped > 0 {
                    sys.freed_since_trim.fetch_add(dropped, Relaxed);
                }
                let freed = sys.freed_since_trim.load(Relaxed);
                if trim.should_trim(done, caught_up, freed, Instant::now()) {
                    sys.freed_since_trim.fetch_sub(freed, Relaxed);
                    memory::trim();
                }
                if done == 0 {
                    // Nothing purgeable: sleep a period, or until shutdown wakes us.
                    let guard = sys.purge_sleep.lock().unwrap_or_else(|e| e.into_inner());
                    let _ = sys.purge_wake.wait_timeout(guard, PURGE_INTERVAL);
                }
                drop(sys);
            })?;
        *self.purge_thread.lock().unwrap_or_else(|e| e.into_inner()) = Some(h);
        Ok(())
    }

    pub(super) fn stop_purge(&self) {
        self.shutdown.store(true, Relaxed);
        self.purge_wake.notify_all();
        let h = self
            .purge_thread
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .take();
        if let Some(h) = h {
            if h.thread().id() != std::thread::current().id() {
                let _ = h.join();
            }
        }
    }

    /// Purges up to `innodb_purge_batch_size` undo records of transactions every view sees;
    /// returns how many it purged.
    pub(crate) fn purge_batch(&self) -> u64 {
        let limit = self.purge_limit();
        let batch = self.purge_config().batch_size.max(1);
        let mut done = 0;
        while done < batch {
            let next = {
                let mut h = self.history.lock().unwrap_or_else(|e| e.into_inner());
                let next = match h.front() {
                    Some(c) if c.trx_no < limit => h.pop_front(),
                    _ => None,
                };
                if let Some(to) = memory::shrink_target(h.len(), h.capacity()) {
                    h.shrink_to(to);
                }
                next
            };
            let Some(c) = next else { break };
            for (table, change) in &c.changes {
                let purged = table.purge_change(change, c.trx_id, &mut |index, key, succ| {
                    self.locks.inherit_gap_locks(
                        index_id(table, index),
                        RecKey::User(key),
                        rec_key(succ),
                        0,
                        Inherit::Removal,
                    );
                });
                self.stats.purged_records.fetch_add(purged.records, Relaxed);
                self.freed_since_trim.fetch_add(purged.bytes, Relaxed);
            }
            done += c.changes.len() as u64;
            self.stats
                .purged_undo
                .fetch_add(c.changes.len() as u64, Relaxed);
            self.history_len.fetch_sub(1, Relaxed);
        }
        done
    }
}
