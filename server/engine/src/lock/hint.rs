//! Per-record lock hints: the fast path of a SKIP LOCKED or NOWAIT check.
//!
//! InnoDB finds a record's locks through a lock struct per page with a bitmap over the
//! page's records, so a scan that checks record after record of one page touches the same
//! few cache lines. tpbed's lock table is hashed by record, so each check of a locked record
//! costs a shard mutex and two or three cache misses into the table, and the cost per row
//! grows with the number of locked rows. A [`LockHint`] puts a summary of one granted lock
//! into the index record itself, where the scan already is: the owner's transaction id, the
//! mode, and the owner's *hint generation* when the lock was taken.
//!
//! Invariant: a hint is trusted only while it proves that its lock is still held. A
//! transaction's generation changes (and only grows) whenever it releases any record lock
//! before its end (READ COMMITTED's unlock of a non-matching row) and when it releases all of
//! them (commit, rollback, a dropped connection), before the lock table is touched. So a hint
//! whose owner is registered with the same generation names a lock that is held at the moment
//! the generation is read. The lock table stays the only authority: a hint is written after
//! a lock is granted, may be overwritten by another transaction's lock on the same record,
//! and is lost when a record is rebuilt; a missing, stale or non-conflicting hint just sends
//! the request down the ordinary path.

use std::fmt;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use super::compat::rec_has_to_wait;
use super::modes::RecLockMode;
use super::sys::Inner;
use super::trx::{LockTrx, TrxId, TrxShared};

/// Bits of the generation in a packed hint.
const GEN_BITS: u32 = 16;
/// Bits of the mode code.
const MODE_BITS: u32 = 4;
/// A generation at this value (or above) means "this transaction writes no more hints".
pub(crate) const GEN_CLOSED: u32 = (1 << GEN_BITS) - 1;
/// The largest transaction id a hint can hold.
const MAX_TRX: u64 = (1 << (64 - GEN_BITS - MODE_BITS)) - 1;

/// A summary of one granted record lock, kept in the index record (0: none). Not part of a
/// record's value: records compare equal whatever their hints say.
#[derive(Default)]
pub struct LockHint(AtomicU64);

impl LockHint {
    /// The packed value.
    fn get(&self) -> u64 {
        self.0.load(Ordering::Acquire)
    }

    fn set(&self, v: u64) {
        self.0.store(v, Ordering::Release);
    }
}

impl Clone for LockHint {
    /// A copy of the same record (a page split, a version being rebuilt) keeps the summary;
    /// it is still validated against its owner on every use.
    fn clone(&self) -> LockHint {
        LockHint(AtomicU64::new(self.get()))
    }
}

impl PartialEq for LockHint {
    fn eq(&self, _: &LockHint) -> bool {
        true
    }
}

impl Eq for LockHint {}

impl fmt::Debug for LockHint {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match unpack(self.get()) {
            Some((trx, mode, gen)) => write!(f, "LockHint({trx}, {mode:?}, gen {gen})"),
            None => f.write_str("LockHint(none)"),
        }
    }
}

/// A mode's code in a packed hint: its position in [`RecLockMode::ALL`] plus one (0: none).
fn mode_code(mode: RecLockMode) -> u64 {
    use super::modes::{GapKind, Strength};
    match (mode.strength(), mode.kind()) {
        (Strength::S, GapKind::NextKey) => 1,
        (Strength::X, GapKind::NextKey) => 2,
        (Strength::S, GapKind::Gap) => 3,
        (Strength::X, GapKind::Gap) => 4,
        (Strength::S, GapKind::RecNotGap) => 5,
        (Strength::X, GapKind::RecNotGap) => 6,
        (_, GapKind::InsertIntention) => 7,
    }
}

fn pack(trx: TrxId, mode: RecLockMode, gen: u32) -> Option<u64> {
    (trx <= MAX_TRX && gen < GEN_CLOSED)
        .then(|| trx << (GEN_BITS + MODE_BITS) | mode_code(mode) << GEN_BITS | u64::from(gen))
}

fn unpack(v: u64) -> Option<(TrxId, RecLockMode, u32)> {
    let code = (v >> GEN_BITS) & ((1 << MODE_BITS) - 1);
    let mode = *RecLockMode::ALL.get((code as usize).checked_sub(1)?)?;
    Some((
        v >> (GEN_BITS + MODE_BITS),
        mode,
        (v & ((1 << GEN_BITS) - 1)) as u32,
    ))
}

/// The owner a scan last looked up by a hint: consecutive locked records of one claim are
/// usually all held by the same transaction, so its registry entry is found once.
#[derive(Debug, Default)]
pub struct HintOwners {
    last: Option<Arc<TrxShared>>,
}

impl HintOwners {
    fn find(&mut self, inner: &Inner, id: TrxId) -> Option<&TrxShared> {
        if self.last.as_ref().is_none_or(|t| t.id != id) {
            self.last = Some(inner.find_trx(id)?);
        }
        self.last.as_deref()
    }
}

impl Inner {
    /// Whether `hint` proves that another transaction holds a granted lock `trx`'s request
    /// for `mode` on that (user) record has to wait for.
    pub(crate) fn hint_blocks(
        &self,
        trx: &LockTrx,
        mode: RecLockMode,
        hint: &LockHint,
        owners: &mut HintOwners,
    ) -> bool {
        let Some((owner, held, gen)) = unpack(hint.get()) else {
            return false;
        };
        if owner == trx.id() || !rec_has_to_wait(mode, held, false) {
            return false;
        }
        owners
            .find(self, owner)
            .is_some_and(|t| t.hint_gen.load(Ordering::Acquire) == gen)
    }
}

/// Records in `hint` that `trx` now holds `mode` on that record (a lock just granted).
pub(crate) fn note_granted(hint: &LockHint, trx: &LockTrx, mode: RecLockMode) {
    if let Some(v) = pack(trx.id(), mode, trx.0.hint_gen.load(Ordering::Acquire)) {
        hint.set(v);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn packs_and_unpacks_every_mode() {
        for (i, mode) in RecLockMode::ALL.into_iter().enumerate() {
            assert_eq!(mode_code(mode), i as u64 + 1, "{mode:?}");
            let v = pack(MAX_TRX, mode, GEN_CLOSED - 1).expect("packs");
            assert_eq!(unpack(v), Some((MAX_TRX, mode, GEN_CLOSED - 1)));
        }
        assert_eq!(unpack(0), None);
        assert_eq!(pack(MAX_TRX + 1, RecLockMode::X, 0), None);
        assert_eq!(pack(1, RecLockMode::X, GEN_CLOSED), None);
    }

    #[test]
    fn hints_do_not_change_record_equality() {
        let a = LockHint::default();
        let b = LockHint::default();
        b.set(pack(7, RecLockMode::X, 0).expect("packs"));
        assert_eq!(a, b);
        assert_eq!(format!("{:?}", b.clone()), format!("{b:?}"));
    }
}
