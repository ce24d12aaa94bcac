//! InnoDB-style lock manager: table locks (IS/IX/S/X/AUTO_INC) and record locks (S/X,
//! next-key, GAP, REC_NOT_GAP, INSERT_INTENTION) on (index, key) plus a supremum per index,
//! implicit-lock conversion, gap-lock inheritance, per-record wait queues with a pluggable
//! grant policy (CATS, FCFS or VATS), a background deadlock/weight thread, and introspection.
//!
//! # How the SQL layer calls it (the latch/lock protocol, also in `docs/locking.md`)
//!
//! 1. At transaction start (before the first lock or write): `let lt =
//!    lock_sys.begin_trx(trx_id, thread_id, connection_id)`; set
//!    `LockTrx::set_read_committed` for RC/RU and keep `LockTrx::set_undo_records`
//!    current (the deadlock victim weight).
//! 2. Before row locks: [`LockSys::lock_table`] IS or IX (a `Wait` is waited on at once; no
//!    latch is held yet).
//! 3. For each record a locking scan visits, under the leaf latch: if the record's
//!    DB_TRX_ID is another transaction that is still active, `LockSys::convert_implicit`
//!    first; then [`LockSys::lock_rec`] with the mode InnoDB picks (`docs/locking.md` lists them) and the
//!    statement's [`WaitPolicy`] (a scan calls `LockSys::lock_rec_hinted` with the record's
//!    [`LockHint`], so that SKIP LOCKED and NOWAIT can decide from the record itself). `Granted` → use the record; `Skipped` → next record;
//!    `Err(NoWait)` → statement error 3572; `Wait(w)` → save the cursor, release every latch,
//!    `w.wait(innodb_lock_wait_timeout)`, then restore the cursor and re-read the latest
//!    version. Errors: 1205 rolls back the statement, 1213 the transaction, 1317 the
//!    statement.
//! 4. INSERT, under the leaf latch: [`LockSys::lock_rec`] with
//!    [`RecLockMode::INSERT_INTENTION`] on the successor (or the supremum); once inserted,
//!    `LockSys::inherit_gap_locks` `(successor → new record, Inherit::Insert)`. Purge and
//!    insert rollback: `(removed → successor, Inherit::Removal)`.
//! 5. RC, a row that does not match: [`LockSys::release_rec`] of the mode just taken.
//! 6. Commit or rollback (after undo is applied): [`LockSys::release_all`].
//!
//! KILL QUERY calls `LockTrx::interrupt`; the next statement calls
//! [`LockTrx::clear_interrupt`].

mod compat;
mod deadlock;
mod grant;
mod hint;
mod inherit;
mod introspect;
mod modes;
mod queue;
mod sys;
mod table;
mod trx;
mod wait;

#[cfg(test)]
mod tests;
#[cfg(test)]
mod threads_tests;

pub use grant::{Candidate, Cats, Fcfs, GrantPolicy, ScheduleAlgorithm, Vats};
pub use hint::{HintOwners, LockHint};
pub use inherit::Inherit;
pub use introspect::{
    lock_data_text, DataLockRow, DataLockWaitRow, DeadlockReport, DeadlockTrx, LockDesc, LockNames,
    LockObject, LockStats, TrxLockInfo,
};
pub use modes::{GapKind, RecLockMode, Strength, TableLockMode};
pub use sys::{Acquired, LockConfig, LockSys, RecAt, WaitPolicy, DEFAULT_SHARDS};
pub use table::{IndexId, RecKey, TableId};
pub use trx::{LockTrx, TrxId};
pub use wait::LockWait;

use std::fmt;

use crate::ErrorCode;

/// Why a lock request or wait failed, with MySQL's error codes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LockError {
    /// `ER_LOCK_WAIT_TIMEOUT` 1205: only the statement rolls back (unless
    /// `innodb_rollback_on_timeout`).
    WaitTimeout,
    /// `ER_LOCK_DEADLOCK` 1213: the whole transaction rolls back.
    Deadlock,
    /// `ER_LOCK_NOWAIT` 3572: the statement rolls back.
    NoWait,
    /// `ER_QUERY_INTERRUPTED` 1317 (KILL QUERY during the wait): the statement rolls back.
    Interrupted,
    /// `ER_TABLE_DEF_CHANGED` 1412: the table was rebuilt by DDL while the statement waited
    /// for its table lock; the statement rolls back.
    TableRebuilt,
}

impl LockError {
    /// The MySQL error code (with its SQLSTATE).
    pub fn code(self) -> ErrorCode {
        match self {
            LockError::WaitTimeout => ErrorCode::LockWaitTimeout,
            LockError::Deadlock => ErrorCode::LockDeadlock,
            LockError::NoWait => ErrorCode::LockNowait,
            LockError::Interrupted => ErrorCode::QueryInterrupted,
            LockError::TableRebuilt => ErrorCode::TableDefChanged,
        }
    }

    /// MySQL's message text.
    pub fn message(self) -> &'static str {
        match self {
            LockError::WaitTimeout => "Lock wait timeout exceeded; try restarting transaction",
            LockError::Deadlock => {
                "Deadlock found when trying to get lock; try restarting transaction"
            }
            LockError::NoWait => {
                "Statement aborted because lock(s) could not be acquired immediately and NOWAIT is set."
            }
            LockError::Interrupted => "Query execution was interrupted",
            LockError::TableRebuilt => "Table definition has changed, please retry transaction",
        }
    }
}

impl fmt::Display for LockError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} ({})", self.message(), self.code().code())
    }
}

impl std::error::Error for LockError {}

impl From<LockError> for ErrorCode {
    fn from(e: LockError) -> ErrorCode {
        e.code()
    }
}
