//! Lock modes as InnoDB names them. Invariant: an insert-intention lock is always an X gap
//! lock, and a record lock stored on the supremum carries neither GAP nor REC_NOT_GAP
//! (InnoDB clears both there, since a supremum lock is a gap lock by definition).

use std::fmt;

/// A table lock mode (`lock_mode` values of InnoDB's table locks).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum TableLockMode {
    /// Intention shared: the transaction will S-lock rows (locking reads FOR SHARE).
    IS,
    /// Intention exclusive: the transaction will X-lock rows (FOR UPDATE, DML).
    IX,
    /// Whole-table shared (`LOCK TABLES ... READ`).
    S,
    /// Whole-table exclusive (`LOCK TABLES ... WRITE`).
    X,
    /// The statement-duration AUTO-INC lock (`innodb_autoinc_lock_mode` 0 and 1).
    AutoInc,
}

impl TableLockMode {
    /// Every mode, for tests and tables.
    pub const ALL: [TableLockMode; 5] = [
        TableLockMode::IS,
        TableLockMode::IX,
        TableLockMode::S,
        TableLockMode::X,
        TableLockMode::AutoInc,
    ];

    /// `LOCK_MODE` as `performance_schema.data_locks` spells it.
    pub fn as_str(self) -> &'static str {
        match self {
            TableLockMode::IS => "IS",
            TableLockMode::IX => "IX",
            TableLockMode::S => "S",
            TableLockMode::X => "X",
            TableLockMode::AutoInc => "AUTO_INC",
        }
    }

    /// Whether holding `self` already gives everything `other` would (InnoDB's
    /// `lock_mode_stronger_or_eq`): X covers all, S covers IS, IX covers IS.
    pub(crate) fn stronger_or_eq(self, other: TableLockMode) -> bool {
        use TableLockMode::*;
        matches!(
            (self, other),
            (X, _) | (S, S) | (S, IS) | (IX, IX) | (IX, IS) | (IS, IS) | (AutoInc, AutoInc)
        )
    }
}

impl fmt::Display for TableLockMode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Shared or exclusive, the strength of a record lock.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Strength {
    /// Shared (`FOR SHARE`, duplicate checks).
    S,
    /// Exclusive (`FOR UPDATE`, UPDATE, DELETE, INSERT).
    X,
}

/// Which part of a record (and the gap before it) a record lock covers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum GapKind {
    /// `LOCK_ORDINARY`: the record and the gap before it (no flag in `LOCK_MODE`).
    NextKey,
    /// `LOCK_GAP`: only the gap before the record.
    Gap,
    /// `LOCK_REC_NOT_GAP`: only the record.
    RecNotGap,
    /// `LOCK_GAP | LOCK_INSERT_INTENTION`: an inserter's wish to insert into the gap.
    InsertIntention,
}

/// A record lock mode: strength plus gap kind.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct RecLockMode {
    strength: Strength,
    kind: GapKind,
}

impl RecLockMode {
    /// `S` (next-key).
    pub const S: RecLockMode = RecLockMode::new(Strength::S, GapKind::NextKey);
    /// `X` (next-key).
    pub const X: RecLockMode = RecLockMode::new(Strength::X, GapKind::NextKey);
    /// `S,GAP`.
    pub(crate) const S_GAP: RecLockMode = RecLockMode::new(Strength::S, GapKind::Gap);
    /// `X,GAP`.
    pub(crate) const X_GAP: RecLockMode = RecLockMode::new(Strength::X, GapKind::Gap);
    /// `S,REC_NOT_GAP`.
    pub(crate) const S_REC_NOT_GAP: RecLockMode = RecLockMode::new(Strength::S, GapKind::RecNotGap);
    /// `X,REC_NOT_GAP`.
    pub const X_REC_NOT_GAP: RecLockMode = RecLockMode::new(Strength::X, GapKind::RecNotGap);
    /// `X,GAP,INSERT_INTENTION`.
    pub const INSERT_INTENTION: RecLockMode =
        RecLockMode::new(Strength::X, GapKind::InsertIntention);

    /// Every mode, for tests and tables.
    pub const ALL: [RecLockMode; 7] = [
        RecLockMode::S,
        RecLockMode::X,
        RecLockMode::S_GAP,
        RecLockMode::X_GAP,
        RecLockMode::S_REC_NOT_GAP,
        RecLockMode::X_REC_NOT_GAP,
        RecLockMode::INSERT_INTENTION,
    ];

    /// A mode; an insert intention is always exclusive, whatever `strength` says.
    pub const fn new(strength: Strength, kind: GapKind) -> RecLockMode {
        let strength = match kind {
            GapKind::InsertIntention => Strength::X,
            _ => strength,
        };
        RecLockMode { strength, kind }
    }

    /// S or X.
    pub(crate) fn strength(self) -> Strength {
        self.strength
    }

    /// Next-key, gap, record-only or insert intention.
    pub fn kind(self) -> GapKind {
        self.kind
    }

    /// The GAP bit is set (plain gap locks and insert intentions).
    pub(crate) fn is_gap(self) -> bool {
        matches!(self.kind, GapKind::Gap | GapKind::InsertIntention)
    }

    /// An insert-intention lock.
    pub(crate) fn is_insert_intention(self) -> bool {
        self.kind == GapKind::InsertIntention
    }

    /// The mode as stored on the supremum: GAP and REC_NOT_GAP cleared, insert intention kept.
    pub(crate) fn on_supremum(self) -> RecLockMode {
        match self.kind {
            GapKind::Gap | GapKind::RecNotGap => RecLockMode::new(self.strength, GapKind::NextKey),
            _ => self,
        }
    }

    /// `LOCK_MODE` as `performance_schema.data_locks` spells it; on the supremum the mode is
    /// shown normalised (`X`, `S`, `X,INSERT_INTENTION`).
    pub fn as_str(self, supremum: bool) -> &'static str {
        let m = if supremum { self.on_supremum() } else { self };
        match (m.strength, m.kind, supremum) {
            (Strength::S, GapKind::NextKey, _) => "S",
            (Strength::X, GapKind::NextKey, _) => "X",
            (Strength::S, GapKind::Gap, _) => "S,GAP",
            (Strength::X, GapKind::Gap, _) => "X,GAP",
            (Strength::S, GapKind::RecNotGap, _) => "S,REC_NOT_GAP",
            (Strength::X, GapKind::RecNotGap, _) => "X,REC_NOT_GAP",
            (_, GapKind::InsertIntention, true) => "X,INSERT_INTENTION",
            (_, GapKind::InsertIntention, false) => "X,GAP,INSERT_INTENTION",
        }
    }

    /// The mode as `SHOW ENGINE INNODB STATUS` describes it (`lock_mode X locks rec but not
    /// gap`, `lock mode S`, ...).
    pub(crate) fn status_text(self, supremum: bool) -> String {
        let m = if supremum { self.on_supremum() } else { self };
        let base = match m.strength {
            Strength::S => "lock mode S",
            Strength::X => "lock_mode X",
        };
        let tail = match m.kind {
            GapKind::NextKey => "",
            GapKind::Gap => " locks gap before rec",
            GapKind::RecNotGap => " locks rec but not gap",
            GapKind::InsertIntention if supremum => " insert intention",
            GapKind::InsertIntention => " locks gap before rec insert intention",
        };
        format!("{base}{tail}")
    }
}

impl fmt::Display for RecLockMode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str(false))
    }
}

/// A lock mode of either kind, as a queue stores it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) enum AnyMode {
    Table(TableLockMode),
    Rec(RecLockMode),
}

impl AnyMode {
    /// `LOCK_MODE` of `data_locks`.
    pub(crate) fn as_str(self, supremum: bool) -> &'static str {
        match self {
            AnyMode::Table(m) => m.as_str(),
            AnyMode::Rec(m) => m.as_str(supremum),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spelled_as_data_locks_does() {
        assert_eq!(RecLockMode::X_REC_NOT_GAP.as_str(false), "X,REC_NOT_GAP");
        assert_eq!(
            RecLockMode::INSERT_INTENTION.as_str(false),
            "X,GAP,INSERT_INTENTION"
        );
        assert_eq!(
            RecLockMode::INSERT_INTENTION.as_str(true),
            "X,INSERT_INTENTION"
        );
        assert_eq!(RecLockMode::X_GAP.as_str(true), "X");
        assert_eq!(RecLockMode::S_REC_NOT_GAP.as_str(true), "S");
        assert_eq!(TableLockMode::AutoInc.as_str(), "AUTO_INC");
        assert_eq!(
            RecLockMode::new(Strength::S, GapKind::InsertIntention),
            RecLockMode::INSERT_INTENTION
        );
        assert_eq!(
            RecLockMode::X_REC_NOT_GAP.status_text(false),
            "lock_mode X locks rec but not gap"
        );
    }
}
