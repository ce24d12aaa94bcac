//! Metadata locks, MySQL's way: a statement that uses a table holds its metadata lock shared
//! until the transaction ends (an autocommit statement: until it ends), and DDL that replaces a
//! table takes it exclusive first, so it waits for every transaction that used the table —
//! consistent reads included — for up to `lock_wait_timeout` seconds, then fails with 1205.
//! While DDL waits, new statements on the table wait behind it (`Waiting for table metadata
//! lock` in the processlist). DDL then also takes a table X lock in the lock system, which
//! waits for `LOCK TABLES` holders; that lock is held by a transaction of its own that changes
//! nothing and ends with the statement.

use std::sync::atomic::Ordering::Relaxed;
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::connections::KILL_NONE;
use crate::context::Context;
use crate::engine::latch::WaitEnd;
use crate::engine::lock::TableLockMode;
use crate::engine::Table;
use crate::error::{lock_error, ErrorCode, SqlError, SqlResult};
use crate::trx::{Isolation, Trx};

/// The session's `lock_wait_timeout` (metadata lock waits).
pub fn lock_wait_timeout(st: &Context) -> Duration {
    Duration::from_secs(st.var_int(st.core.ids.metadata_lock_wait_timeout).max(1) as u64)
}

/// The error a metadata lock wait ends with: 1205 on timeout, 1317 when the query was killed.
fn wait_error(end: WaitEnd) -> SqlError {
    match end {
        WaitEnd::TimedOut => SqlError::new(
            ErrorCode::LockWaitTimeout,
            "Lock wait timeout exceeded; try restarting transaction",
        ),
        WaitEnd::Cancelled => SqlError::new(
            ErrorCode::QueryInterrupted,
            "Query execution was interrupted",
        ),
    }
}

/// Waits with the processlist saying so; gives up at `lock_wait_timeout` or a KILL.
fn wait_for(
    st: &Context,
    acquire: impl FnOnce(Instant, &dyn Fn() -> bool) -> Result<(), WaitEnd>,
) -> SqlResult<()> {
    let deadline = Instant::now() + lock_wait_timeout(st);
    let conn = &st.conn;
    let killed = || conn.killed.load(Relaxed) != KILL_NONE;
    conn.waiting_for_metadata_lock.store(true, Relaxed);
    let r = acquire(deadline, &killed);
    conn.waiting_for_metadata_lock.store(false, Relaxed);
    r.map_err(wait_error)
}

/// Holds the metadata lock of each of `tables` shared for the rest of the session's
/// transaction (once per table object).
pub fn hold_shared<'a>(
    st: &mut Context,
    tables: impl IntoIterator<Item = &'a Arc<Table>>,
) -> SqlResult<()> {
    for t in tables {
        if st.metadata_locks.iter().any(|h| Arc::ptr_eq(h, t)) {
            continue;
        }
        let mdl = t.metadata_lock();
        wait_for(st, |deadline, killed| mdl.acquire_shared(deadline, killed))?;
        st.metadata_locks.push(t.clone());
    }
    Ok(())
}

/// An exclusive lock on one table, held until [`ExclusiveTableLock::release`].
#[must_use = "the lock is held until released"]
pub struct ExclusiveTableLock {
    table: Arc<Table>,
    trx: Trx,
}

impl std::fmt::Debug for ExclusiveTableLock {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ExclusiveTableLock").finish_non_exhaustive()
    }
}

impl ExclusiveTableLock {
    /// Waits for the exclusive metadata lock on `table`, then for its table X lock.
    pub fn acquire(st: &Context, table: &Arc<Table>) -> SqlResult<ExclusiveTableLock> {
        let mdl = table.metadata_lock();
        wait_for(st, |deadline, killed| {
            mdl.acquire_exclusive(deadline, killed)
        })?;
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
            Ok(()) => Ok(ExclusiveTableLock {
                table: table.clone(),
                trx,
            }),
            Err(e) => {
                sys.rollback(trx);
                mdl.release_exclusive();
                Err(lock_error(e))
            }
        }
    }

    /// Releases both locks.
    pub fn release(self, st: &Context) {
        st.core.trx.rollback(self.trx);
        self.table.metadata_lock().release_exclusive();
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
    under_exclusive_locks(st, &[t], ddl)
}

/// Runs `ddl` under the exclusive locks of all of `tables`, taken in table-id order (two DDL
/// statements on the same tables cannot wait for each other); none is kept if one times out.
pub fn under_exclusive_locks<T>(
    st: &Context,
    tables: &[Arc<Table>],
    ddl: impl FnOnce() -> SqlResult<T>,
) -> SqlResult<T> {
    let mut order: Vec<&Arc<Table>> = tables.iter().collect();
    order.sort_by_key(|t| t.id());
    let mut held = Vec::with_capacity(order.len());
    for t in order {
        match ExclusiveTableLock::acquire(st, t) {
            Ok(l) => held.push(l),
            Err(e) => {
                held.into_iter().for_each(|l| l.release(st));
                return Err(e);
            }
        }
    }
    let r = ddl();
    held.into_iter().for_each(|l| l.release(st));
    r
}
