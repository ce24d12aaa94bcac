//! The pool's online estimate of each statement class's service time: an exponentially
//! weighted moving average of run times per [`StmtClass`], updated when a statement of a known
//! class finishes. Invariant: a fixed table of slots, written and read without a lock and
//! without allocation; a slot holds one class at a time (a class that hashes to a taken slot
//! replaces its occupant), so an estimate is a hint, never a promise.

use crate::policy::StmtClass;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::time::Duration;

/// Slots in the table (a power of two).
const SLOTS: usize = 256;

/// Weight of a new sample: 1/8, as TCP's smoothed round-trip time.
const SHIFT: u32 = 3;

/// One class's average.
#[derive(Debug, Default)]
struct Slot {
    /// The class key the average belongs to (0: empty).
    key: AtomicU64,
    /// The average in nanoseconds.
    nanos: AtomicU64,
}

/// Service-time estimates per statement class.
#[derive(Debug)]
pub(crate) struct ServiceTimes {
    slots: Box<[Slot]>,
}

impl Default for ServiceTimes {
    fn default() -> Self {
        ServiceTimes {
            slots: (0..SLOTS).map(|_| Slot::default()).collect(),
        }
    }
}

/// A nonzero key for a known class (mixed so that nearby digests spread over the slots).
fn key(c: &StmtClass) -> u64 {
    let mut h = c.digest ^ (u64::from(c.command) << 56) ^ ((c.kind as u64) << 48);
    h ^= h >> 33;
    h = h.wrapping_mul(0xff51_afd7_ed55_8ccd);
    h ^= h >> 33;
    h | 1
}

impl ServiceTimes {
    /// The estimate for `class`, None when unknown or not measured yet.
    pub(crate) fn estimate(&self, class: &StmtClass) -> Option<Duration> {
        if !class.known() {
            return None;
        }
        let k = key(class);
        let slot = &self.slots[(k as usize) & (SLOTS - 1)];
        (slot.key.load(Relaxed) == k).then(|| Duration::from_nanos(slot.nanos.load(Relaxed)))
    }

    /// Folds one run of `took` into the average of `class` (the first sample is the average).
    pub(crate) fn record(&self, class: &StmtClass, took: Duration) {
        if !class.known() {
            return;
        }
        let k = key(class);
        let slot = &self.slots[(k as usize) & (SLOTS - 1)];
        let sample = u64::try_from(took.as_nanos()).unwrap_or(u64::MAX);
        if slot.key.load(Relaxed) != k {
            slot.key.store(k, Relaxed);
            slot.nanos.store(sample, Relaxed);
            return;
        }
        let old = slot.nanos.load(Relaxed);
        let new = old - (old >> SHIFT) + (sample >> SHIFT);
        slot.nanos.store(new, Relaxed);
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;
    use crate::policy::StmtKind;

    fn class(digest: u64) -> StmtClass {
        StmtClass {
            command: 3,
            kind: StmtKind::Select,
            digest,
        }
    }

    #[test]
    fn unknown_until_measured_then_a_moving_average() {
        let t = ServiceTimes::default();
        let c = class(7);
        assert_eq!(t.estimate(&c), None);
        t.record(&c, Duration::from_micros(800));
        assert_eq!(t.estimate(&c), Some(Duration::from_micros(800)));
        t.record(&c, Duration::from_micros(0));
        assert_eq!(t.estimate(&c), Some(Duration::from_micros(700)));
        for _ in 0..100 {
            t.record(&c, Duration::from_micros(100));
        }
        let e = t.estimate(&c).unwrap();
        assert!(
            e >= Duration::from_micros(100) && e < Duration::from_micros(110),
            "{e:?}"
        );
        assert_eq!(
            t.estimate(&class(8)),
            None,
            "another class has its own average"
        );
    }

    #[test]
    fn the_unknown_class_is_never_recorded() {
        let t = ServiceTimes::default();
        t.record(&StmtClass::UNKNOWN, Duration::from_secs(1));
        assert_eq!(t.estimate(&StmtClass::UNKNOWN), None);
    }
}
