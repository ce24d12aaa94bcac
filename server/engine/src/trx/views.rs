//! Open read views, registered without the transaction-system mutex. A view copies the
//! published active set ([`ActiveSet`]), stores its `low_limit_no` in a slot of its own
//! (a cache line no other view writes), then checks that nothing was published and no purge
//! barrier passed since its copy; if something did, it copies again. Purge raises a barrier
//! before it reads the slots, so a view it misses has seen the barrier and holds a
//! `low_limit_no` no older than purge's limit (InnoDB reopens an autocommit view the same
//! way: mark it open, then check that the id counter has not moved).

use std::sync::atomic::Ordering::{Relaxed, Release};

use super::active_set::ActiveSet;
use super::stable_array::StableArray;
use super::sync::AtomicU64;
use crate::ReadView;

/// A registration slot: 0 when free, else its view's `low_limit_no` (never 0: the counter
/// starts at 1).
#[derive(Debug)]
#[repr(align(128))]
struct Slot(AtomicU64);

impl Default for Slot {
    fn default() -> Slot {
        Slot(AtomicU64::new(0))
    }
}

/// A read view and the slot that registers it.
#[derive(Debug)]
pub(super) struct OpenView {
    pub(super) view: ReadView,
    slot: usize,
}

/// The registered views.
#[derive(Debug)]
pub(super) struct ViewSlots {
    slots: StableArray<Slot>,
}

impl ViewSlots {
    /// No views.
    pub(super) fn new() -> ViewSlots {
        ViewSlots {
            slots: StableArray::new(),
        }
    }

    /// Opens a view of `set` for the transaction `me` (0: none yet); `hint` picks the slot
    /// tried first (one per connection keeps connections on their own cache lines).
    pub(super) fn open(&self, set: &ActiveSet, me: u64, hint: usize) -> OpenView {
        let mut snap = set.read(me);
        let slot = self.claim(hint, snap.low);
        while !set.unchanged_since(snap.seq) {
            snap = set.read(me);
            self.slots.get_or_grow(slot).0.store(snap.low, Relaxed);
        }
        let up = snap.active.first().copied().unwrap_or(snap.low);
        OpenView {
            view: ReadView {
                up_limit_id: up,
                low_limit_id: snap.low,
                low_limit_no: snap.low,
                active: snap.active,
                creator: me,
            },
            slot,
        }
    }

    /// Closes `v`: purge no longer keeps history for it.
    pub(super) fn close(&self, v: OpenView) {
        self.slots.get_or_grow(v.slot).0.store(0, Release);
    }

    /// Takes a free slot for `low`, trying `hint` first, growing the array when all are taken.
    fn claim(&self, hint: usize, low: u64) -> usize {
        loop {
            let cap = self.slots.capacity();
            for step in 0..cap {
                let i = (hint + step) % cap;
                let s = &self.slots.get_or_grow(i).0;
                if s.load(Relaxed) == 0 && s.compare_exchange(0, low, Relaxed, Relaxed).is_ok() {
                    return i;
                }
            }
            self.slots.get_or_grow(cap);
        }
    }

    /// The commit number below which purge may remove history: the oldest registered view's
    /// `low_limit_no`, or the counter when no view is open.
    pub(super) fn purge_limit(&self, set: &ActiveSet) -> u64 {
        let low = set.purge_barrier();
        self.slots
            .iter()
            .map(|s| s.0.load(Relaxed))
            .filter(|&n| n != 0)
            .fold(low, u64::min)
    }

    /// Views open now.
    pub(super) fn count(&self) -> u64 {
        self.slots.iter().filter(|s| s.0.load(Relaxed) != 0).count() as u64
    }
}
