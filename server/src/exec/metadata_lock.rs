//! The exclusive metadata lock DDL takes on a table before it rebuilds it. MySQL's waits
//! until no other transaction has used the table; here a table X lock in the lock system
//! waits until no transaction holds a table lock on it (IS/IX, taken by every locking read
//! and write and kept to commit), for up to `lock_wait_timeout` seconds, then fails with 1205.
//! The lock is held by a transaction of its own that changes nothing and ends with the
//! statement.

use std::time::Duration;

use crate::context::Context;
use crate::engine::lock::TableLockMode;
use crate::engine::Table;
use crate::error::{lock_error, SqlResult};
use crate::trx::{Isolation, Trx};

/// The session's `lock_wait_timeout` (metadata lock waits).
pub fn lock_wait_timeout(st: &Context) -> Duration {
    st.core
        .vars
        .lookup("lock_wait_timeout")
        .map_or(Duration::from_secs(31_536_000), |id| {
            Duration::from_secs(st.var_int(id).max(1) as u64)
        })
}

/// An exclusive lock on one table, held until [`ExclusiveTableLock::release`].
#[must_use = "the lock is held until released"]
pub struct ExclusiveTableLock {
    trx: Trx,
}

impl std::fmt::Debug for ExclusiveTableLock {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ExclusiveTableLock").finish_non_exhaustive()
    }
}

impl ExclusiveTableLock {
    /// Waits for the exclusive lock on `table`.
    pub fn acquire(st: &Context, table: &Table) -> SqlResult<ExclusiveTableLock> {
        let sys = &st.core.trx;
        let conn = u64::from(st.conn.id);
        let mut trx = sys.begin(
            Isolation::RepeatableRead,
            false,
            conn,
            crate::introspection::pfs_tables::thread_id_of(conn),
        );
        let timeout = lock_wait_timeout(st);
        match sys.lock_table(&mut trx, table, TableLockMode::X, timeout) {
            Ok(()) => Ok(ExclusiveTableLock { trx }),
            Err(e) => {
                sys.rollback(trx);
                Err(lock_error(e))
            }
        }
    }

    /// Releases the lock.
    pub fn release(self, st: &Context) {
        st.core.trx.rollback(self.trx);
    }
}

/// Runs `ddl` (which replaces table `db.table`) under the table's exclusive lock.
pub fn under_exclusive_lock<T>(
    st: &Context,
    db: &str,
    table: &str,
    ddl: impl FnOnce() -> SqlResult<T>,
) -> SqlResult<T> {
    let t = st.core.catalog.table(db, table)?;
    let lock = ExclusiveTableLock::acquire(st, &t)?;
    let r = ddl();
    lock.release(st);
    r
}
