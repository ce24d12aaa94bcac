//! The active read-write transaction ids and the id counter, as read views need them,
//! published as a sequence lock: writers (serialised by the transaction-system mutex) publish
//! each change; a reader copies the ids without any lock and retries if a change overlapped
//! its copy, so a copy is always one published state, never half of two.

use std::sync::atomic::Ordering::{Acquire, Relaxed, Release, SeqCst};

use super::stable_array::StableArray;
use super::sync::{fence, yield_now, AtomicU64};

/// A slot of the published id list.
#[derive(Debug)]
struct IdCell(AtomicU64);

impl Default for IdCell {
    fn default() -> IdCell {
        IdCell(AtomicU64::new(0))
    }
}

/// The sequence number and the list's length and counter value, on their own cache line:
/// readers only read it, so it stays shared between cores until a writer publishes.
#[derive(Debug)]
#[repr(align(128))]
struct Head {
    /// Odd while a writer publishes; every publication (and every purge barrier) advances it.
    seq: AtomicU64,
    /// The id counter when the list was published: the `low_limit_id` of a view made now.
    low: AtomicU64,
    /// Ids in the list.
    len: AtomicU64,
}

/// A published state as one reader copied it.
#[derive(Debug)]
pub(super) struct Snapshot {
    /// The sequence number it was read at (see [`ActiveSet::unchanged_since`]).
    pub(super) seq: u64,
    /// The id counter then.
    pub(super) low: u64,
    /// The active ids then, ascending, without the one excluded.
    pub(super) active: Vec<u64>,
}

/// The published active set.
#[derive(Debug)]
pub(super) struct ActiveSet {
    head: Head,
    ids: StableArray<IdCell>,
}

impl ActiveSet {
    /// An empty set with the counter at `low`.
    pub(super) fn new(low: u64) -> ActiveSet {
        ActiveSet {
            head: Head {
                seq: AtomicU64::new(0),
                low: AtomicU64::new(low),
                len: AtomicU64::new(0),
            },
            ids: StableArray::new(),
        }
    }

    /// Publishes the counter `low` and the active `ids` (ascending). Callers are serialised
    /// (they hold the transaction-system mutex).
    pub(super) fn publish(&self, low: u64, ids: impl Iterator<Item = u64>) {
        self.head.seq.fetch_add(1, Relaxed);
        // Readers that see any store below also see the odd sequence number.
        fence(Release);
        let mut len = 0;
        for id in ids {
            self.ids.get_or_grow(len).0.store(id, Relaxed);
            len += 1;
        }
        self.head.len.store(len as u64, Relaxed);
        self.head.low.store(low, Release);
        self.head.seq.fetch_add(1, Release);
    }

    /// Copies the published state, without `exclude` (a view's creator is not in its own list).
    pub(super) fn read(&self, exclude: u64) -> Snapshot {
        let mut active = Vec::new();
        loop {
            let seq = self.head.seq.load(Acquire);
            if seq & 1 == 1 {
                yield_now();
                continue;
            }
            let low = self.head.low.load(Relaxed);
            let len = self.head.len.load(Relaxed) as usize;
            active.clear();
            let mut whole = true;
            for i in 0..len {
                let Some(cell) = self.ids.get(i) else {
                    whole = false;
                    break;
                };
                let id = cell.0.load(Relaxed);
                if id != exclude {
                    active.push(id);
                }
            }
            // Loads above that saw a newer publication make the check below see it too.
            fence(Acquire);
            if whole && self.head.seq.load(Relaxed) == seq {
                return Snapshot { seq, low, active };
            }
        }
    }

    /// After a reader stored its view's registration: whether nothing was published, and no
    /// purge barrier passed, since it read `seq`. The fence pairs with
    /// [`ActiveSet::purge_barrier`]'s: either purge sees the registration, or this sees the
    /// barrier.
    pub(super) fn unchanged_since(&self, seq: u64) -> bool {
        fence(SeqCst);
        self.head.seq.load(Relaxed) == seq
    }

    /// For purge, before it looks at the registered views: the counter now, and a barrier
    /// that makes every view whose registration purge may miss read again (and so get a
    /// counter at least this one).
    pub(super) fn purge_barrier(&self) -> u64 {
        let low = self.head.low.load(Acquire);
        self.head.seq.fetch_add(2, Release);
        fence(SeqCst);
        low
    }
}
