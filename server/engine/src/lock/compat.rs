//! Compatibility and coverage of lock modes, as pure functions. Invariant: these are the only
//! places that decide whether one lock has to wait for another or already satisfies a request;
//! queues, grants and the deadlock search all ask here, so they cannot disagree.

use super::modes::{GapKind, RecLockMode, Strength, TableLockMode};

/// InnoDB's table-lock compatibility matrix: may `req` be granted next to `held` of another
/// transaction? Intention locks conflict only with whole-table S/X; AUTO_INC with itself,
/// S and X.
pub(crate) fn table_compatible(req: TableLockMode, held: TableLockMode) -> bool {
    use TableLockMode::*;
    match (req, held) {
        (X, _) | (_, X) => false,
        (IS, _) | (_, IS) => true,
        (IX, IX) | (IX, AutoInc) | (AutoInc, IX) => true,
        (S, S) => true,
        _ => false,
    }
}

/// Does a record-lock request `req` of one transaction have to wait for an existing lock
/// `held` (granted or waiting) of *another* transaction on the same record? InnoDB's
/// `lock_rec_has_to_wait` order of rules: S never conflicts with S; a plain gap request (and
/// anything but an insert intention on the supremum) never waits; nothing but an insert
/// intention waits for a gap lock; a gap request does not wait for a record-only lock;
/// nobody waits for an insert intention.
pub(crate) fn rec_has_to_wait(req: RecLockMode, held: RecLockMode, supremum: bool) -> bool {
    if req.strength() == Strength::S && held.strength() == Strength::S {
        return false;
    }
    if (supremum || req.is_gap()) && !req.is_insert_intention() {
        return false;
    }
    if !req.is_insert_intention() && held.is_gap() {
        return false;
    }
    if req.is_gap() && held.kind() == GapKind::RecNotGap {
        return false;
    }
    !held.is_insert_intention()
}

/// Does the granted lock `held` of a transaction already give it what `req` asks for on the
/// same record (InnoDB's `lock_rec_has_expl`)? X covers S; a next-key lock covers the
/// record-only and the gap-only lock; on the supremum every non-insert-intention lock of
/// enough strength covers. An insert intention neither covers nor is looked up this way.
pub(crate) fn rec_covers(held: RecLockMode, req: RecLockMode, supremum: bool) -> bool {
    if held.is_insert_intention() || req.is_insert_intention() {
        return false;
    }
    if held.strength() == Strength::S && req.strength() == Strength::X {
        return false;
    }
    if supremum {
        return true;
    }
    match held.kind() {
        GapKind::NextKey => true,
        GapKind::RecNotGap => req.kind() == GapKind::RecNotGap,
        GapKind::Gap => req.kind() == GapKind::Gap,
        GapKind::InsertIntention => false,
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use proptest::prelude::*;

    /// InnoDB's table-lock compatibility (docs/locking.md), row = request, column = held,
    /// in the order IS, IX, S, X, AUTO_INC: true = compatible.
    const TABLE_MATRIX: [[bool; 5]; 5] = [
        [true, true, true, false, true],
        [true, true, false, false, true],
        [true, false, true, false, false],
        [false, false, false, false, false],
        [true, true, false, false, false],
    ];

    fn table_ix(m: TableLockMode) -> usize {
        TableLockMode::ALL.iter().position(|&x| x == m).unwrap()
    }

    /// InnoDB's record-lock waits for incompatible strengths (X vs X, S vs X either way; see
    /// docs/locking.md), row = request, column = held, in the order REC_NOT_GAP, GAP,
    /// NEXT-KEY, INSERT_INTENTION: true = wait.
    const REC_MATRIX: [[bool; 4]; 4] = [
        [true, false, true, false],
        [false, false, false, false],
        [true, false, true, false],
        [false, true, true, false],
    ];

    fn kind_ix(k: GapKind) -> usize {
        match k {
            GapKind::RecNotGap => 0,
            GapKind::Gap => 1,
            GapKind::NextKey => 2,
            GapKind::InsertIntention => 3,
        }
    }

    /// The model: S/S never waits; on the supremum only an insert intention waits, and then
    /// for any non-insert-intention lock (all of which are gap locks there); elsewhere the
    /// matrix decides.
    pub(crate) fn model_wait(req: RecLockMode, held: RecLockMode, supremum: bool) -> bool {
        if req.strength() == Strength::S && held.strength() == Strength::S {
            return false;
        }
        if supremum {
            return req.is_insert_intention() && !held.is_insert_intention();
        }
        REC_MATRIX[kind_ix(req.kind())][kind_ix(held.kind())]
    }

    fn rec_mode() -> impl Strategy<Value = RecLockMode> {
        (0..RecLockMode::ALL.len()).prop_map(|i| RecLockMode::ALL[i])
    }

    fn table_mode() -> impl Strategy<Value = TableLockMode> {
        (0..TableLockMode::ALL.len()).prop_map(|i| TableLockMode::ALL[i])
    }

    proptest! {
        #[test]
        fn record_compatibility_matches_the_table(
            req in rec_mode(), held in rec_mode(), sup in any::<bool>()
        ) {
            let (req_s, held_s) = if sup {
                (req.on_supremum(), held.on_supremum())
            } else {
                (req, held)
            };
            prop_assert_eq!(rec_has_to_wait(req_s, held_s, sup), model_wait(req, held, sup));
        }

        #[test]
        fn table_compatibility_matches_the_table(req in table_mode(), held in table_mode()) {
            prop_assert_eq!(
                table_compatible(req, held),
                TABLE_MATRIX[table_ix(req)][table_ix(held)]
            );
            // The matrix is symmetric.
            prop_assert_eq!(table_compatible(req, held), table_compatible(held, req));
        }

        #[test]
        fn invariants_of_the_rules(req in rec_mode(), held in rec_mode(), sup in any::<bool>()) {
            // Nobody waits for an insert intention.
            if held.is_insert_intention() {
                prop_assert!(!rec_has_to_wait(req, held, sup));
            }
            // Gaps never wait for gaps (a plain gap request never waits at all).
            if req.kind() == GapKind::Gap {
                prop_assert!(!rec_has_to_wait(req, held, sup));
            }
            // A covered request never needs more than its covering lock: anything that must
            // wait for the covered mode would also have to wait for the coverer.
            if rec_covers(held, req, sup) {
                for other in RecLockMode::ALL {
                    if rec_has_to_wait(other, req, sup) && !sup {
                        prop_assert!(rec_has_to_wait(other, held, sup));
                    }
                }
            }
        }

        #[test]
        fn table_cover_is_compatible_with_less(a in table_mode(), b in table_mode()) {
            // If a covers b, everything compatible with a is compatible with b.
            if a.stronger_or_eq(b) {
                for other in TableLockMode::ALL {
                    if table_compatible(other, a) {
                        prop_assert!(table_compatible(other, b));
                    }
                }
            }
        }
    }

    #[test]
    fn cover_examples() {
        assert!(rec_covers(
            RecLockMode::X,
            RecLockMode::S_REC_NOT_GAP,
            false
        ));
        assert!(rec_covers(RecLockMode::X, RecLockMode::X_GAP, false));
        assert!(!rec_covers(
            RecLockMode::X_REC_NOT_GAP,
            RecLockMode::X,
            false
        ));
        assert!(!rec_covers(
            RecLockMode::X_GAP,
            RecLockMode::X_REC_NOT_GAP,
            false
        ));
        assert!(!rec_covers(
            RecLockMode::S,
            RecLockMode::X_REC_NOT_GAP,
            false
        ));
        assert!(rec_covers(RecLockMode::X, RecLockMode::X, true));
        assert!(!rec_covers(
            RecLockMode::X,
            RecLockMode::INSERT_INTENTION,
            true
        ));
    }
}
