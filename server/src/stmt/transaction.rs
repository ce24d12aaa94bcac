//! Transaction boundaries as MySQL draws them: BEGIN/START TRANSACTION, COMMIT, ROLLBACK,
//! savepoints, autocommit (each statement its own transaction), statement atomicity (a
//! failed statement undoes only itself; a deadlock victim's whole transaction rolls back)
//! and implicit commit before DDL.

use crate::context::Context;
use crate::core::Core;
use crate::error::{ErrorCode, SqlError, SqlResult};
use crate::sql::output::Output;
use crate::trx::{Isolation, Trx};
use crate::vars::VarValue;

/// The characteristics the next transaction starts with: session values, overridden once by
/// `SET TRANSACTION` without a scope.
fn characteristics(st: &mut Context) -> (Isolation, bool) {
    let ids = &st.core.ids;
    let mut iso = Isolation::parse(st.vars.get(ids.transaction_isolation).as_str());
    let mut ro = st.vars.get(ids.transaction_read_only).as_bool();
    for (id, v) in st.next_transaction.drain(..) {
        if id == ids.transaction_isolation {
            iso = Isolation::parse(v.as_str());
        } else if id == ids.transaction_read_only {
            ro = matches!(v, VarValue::Bool(true)) || v.as_bool();
        }
    }
    (iso, ro)
}

fn start(st: &mut Context, read_only: Option<bool>) -> Trx {
    let (iso, ro) = characteristics(st);
    let conn = u64::from(st.conn.id);
    st.core.trx.begin(
        iso,
        read_only.unwrap_or(ro),
        conn,
        crate::introspection::pfs_tables::thread_id_of(conn),
    )
}

/// Makes sure a transaction is open for the statement about to run.
fn ensure(st: &mut Context) {
    if st.trx.get_mut().is_none() {
        let t = start(st, None);
        *st.trx.get_mut() = Some(t);
    }
}

/// COMMIT of the open transaction (if any); a transaction that wrote waits for its redo
/// to be as durable as `innodb_flush_log_at_trx_commit` says (group commit). With the binary
/// log on, it does so and then waits for the binary log (`sync_binlog`) before its changes
/// become visible and its locks go, as MySQL's two-phase commit does; without it, InnoDB
/// releases the locks first and syncs the redo after.
pub fn commit(st: &mut Context) {
    st.savepoints.clear();
    st.in_transaction = false;
    if let Some(trx) = st.trx.get_mut().take() {
        crate::digest::note_lock_wait(trx.take_lock_wait());
        let core = &st.core;
        let redo = crate::trx::TrxSys::redo_bytes(&trx);
        match &core.binlog {
            Some(binlog) if redo > 0 => {
                core.redo.commit(redo);
                binlog.commit(redo);
                core.trx.commit(trx);
            }
            _ => {
                core.trx.commit(trx);
                if redo > 0 {
                    core.redo.commit(redo);
                }
            }
        }
    }
    st.release_metadata_locks();
}

/// ROLLBACK of the open transaction (if any).
pub fn rollback(st: &mut Context) {
    st.savepoints.clear();
    st.in_transaction = false;
    if let Some(trx) = st.trx.get_mut().take() {
        crate::digest::note_lock_wait(trx.take_lock_wait());
        st.core.trx.rollback(trx);
    }
    st.release_metadata_locks();
}

/// BEGIN / START TRANSACTION [READ ONLY|READ WRITE] [WITH CONSISTENT SNAPSHOT]: commits an
/// open transaction first, as MySQL does.
pub fn begin(st: &mut Context, read_only: Option<bool>, snapshot: bool) -> Output {
    commit(st);
    let mut t = start(st, read_only);
    if snapshot && t.isolation.gap_locks() {
        st.core.trx.view(&mut t);
    }
    *st.trx.get_mut() = Some(t);
    st.in_transaction = true;
    Output::ok()
}

/// `SAVEPOINT name` (replacing one of the same name).
pub fn savepoint(st: &mut Context, name: &str) -> Output {
    ensure(st);
    if !st.in_transaction && !st.autocommit() {
        st.in_transaction = true;
    }
    let pos = st.trx.get_mut().as_ref().map_or(0, Trx::savepoint);
    st.savepoints.retain(|(n, _)| !n.eq_ignore_ascii_case(name));
    if st.in_transaction {
        st.savepoints.push((name.to_string(), pos));
    }
    Output::ok()
}

fn find(st: &Context, name: &str) -> SqlResult<usize> {
    st.savepoints
        .iter()
        .position(|(n, _)| n.eq_ignore_ascii_case(name))
        .ok_or_else(|| {
            SqlError::new(
                ErrorCode::SpDoesNotExist,
                format!("SAVEPOINT {name} does not exist"),
            )
        })
}

/// `ROLLBACK TO [SAVEPOINT] name`: undoes what followed it; it and earlier ones stay (locks
/// taken since stay too, as in InnoDB).
pub fn rollback_to(st: &mut Context, name: &str) -> SqlResult<Output> {
    let i = find(st, name)?;
    let pos = st.savepoints[i].1;
    st.savepoints.truncate(i + 1);
    let core = std::sync::Arc::clone(&st.core);
    if let Some(trx) = st.trx.get_mut().as_mut() {
        core.trx.undo_to(trx, pos);
    }
    Ok(Output::ok())
}

/// `RELEASE SAVEPOINT name`: forgets it and later ones.
pub fn release(st: &mut Context, name: &str) -> SqlResult<Output> {
    let i = find(st, name)?;
    st.savepoints.truncate(i);
    Ok(Output::ok())
}

/// Runs a statement that reads or writes tables inside the session's transaction: with
/// autocommit and no open transaction it is a transaction of its own; a failure undoes the
/// statement only (a deadlock, or a timeout with `innodb_rollback_on_timeout`, the whole
/// transaction).
pub fn statement(
    st: &mut Context,
    writes: bool,
    run: impl FnOnce(&mut Context) -> SqlResult<Output>,
) -> SqlResult<Output> {
    let single = !st.in_transaction && st.autocommit();
    ensure(st);
    if !single {
        st.in_transaction = true;
    }
    let (sp, lock, read_only) = {
        let t = st.trx.get_mut().as_ref().expect("ensured");
        (t.savepoint(), t.lock_handle().cloned(), t.read_only)
    };

    if let Some(l) = &lock {
        l.clear_interrupt();
    }
    if writes {
        if let Some(d) = st.core.trx.purge_lag_delay() {
            std::thread::sleep(d);
        }
    }
    let r = if writes && read_only {
        Err(SqlError::new(
            ErrorCode::ReadOnlyTransaction,
            "Cannot execute statement in a READ ONLY transaction.",
        ))
    } else {
        run(st)
    };
    let core = std::sync::Arc::clone(&st.core);
    match &r {
        Ok(_) if single => commit(st),
        Ok(_) => {
            if let Some(t) = st.trx.get_mut().as_mut() {
                core.trx.end_statement(t);
            }
        }
        Err(e) => {
            if e.code == ErrorCode::LockDeadlock {
                log_deadlock(st, &core);
            }
            let whole = e.code == ErrorCode::LockDeadlock
                || (e.code == ErrorCode::LockWaitTimeout
                    && core
                        .vars
                        .global_by_name("innodb_rollback_on_timeout")
                        .as_bool());
            if whole || single {
                rollback(st);
            } else if let Some(t) = st.trx.get_mut().as_mut() {
                core.trx.undo_to(t, sp);
                core.trx.end_statement(t);
            }
        }
    }
    r
}

/// `innodb_print_all_deadlocks`: the victim's thread writes the deadlock it lost to the error
/// log, as InnoDB does for every deadlock when the variable is on.
fn log_deadlock(st: &mut Context, core: &Core) {
    if let Some(d) = core.trx.locks.latest_deadlock() {
        let active = core.trx.active_trxs();
        let ids: Vec<(u64, u64)> = d
            .trxs
            .iter()
            .map(|t| {
                let secs = active
                    .iter()
                    .find(|a| a.id == t.trx_id)
                    .map_or(0, |a| a.started_at.elapsed().as_secs());
                (t.connection_id, secs)
            })
            .collect();
        core.connections
            .at_deadlock
            .capture(d.at, &core.connections, &ids);
    }
    if !core
        .vars
        .global_by_name("innodb_print_all_deadlocks")
        .as_bool()
    {
        return;
    }
    let report = st
        .trx
        .get_mut()
        .as_ref()
        .and_then(|t| t.lock_handle())
        .and_then(|l| l.take_deadlock_report());
    if let Some(r) = report {
        crate::log::note(&crate::introspection::innodb_tables::deadlock_log_text(
            core, &r,
        ));
    }
}
