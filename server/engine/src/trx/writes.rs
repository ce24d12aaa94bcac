//! Transactional writes: INSERT with its insert-intention and duplicate-check locks, and
//! UPDATE/DELETE of rows the statement has locked, each change logged for undo and purge.

use std::sync::Arc;
use std::time::Duration;

use super::{index_id, rec_key, Trx, TrxSys};
use crate::cursor::{LatchMode, SearchMode};
use crate::lock::{
    Acquired, GapKind, Inherit, LockError, LockTrx, LockWait, RecAt, RecKey, RecLockMode, Strength,
    TableLockMode, WaitPolicy,
};
use crate::value::Value;
use crate::{
    EngineError, Existing, InsertOptions, InsertOutcome, InsertProbe, ProbeKind, Table,
    UpdateOutcome, WriteStamp,
};

/// The lock an INSERT takes on a duplicate it finds: S for INSERT, X for REPLACE and
/// ON DUPLICATE KEY UPDATE (which go on to change that row).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DupLock {
    /// `S,REC_NOT_GAP`.
    Shared,
    /// `X,REC_NOT_GAP`.
    Exclusive,
}

/// Why a transactional write failed.
#[derive(Debug)]
pub enum WriteError {
    /// An engine error (duplicate key, coercion, ...).
    Engine(EngineError),
    /// A lock error (timeout, deadlock, interrupted).
    Lock(LockError),
}

impl From<LockError> for WriteError {
    fn from(e: LockError) -> WriteError {
        WriteError::Lock(e)
    }
}

enum Abort {
    Engine(EngineError),
    Wait,
    Lock(LockError),
}

impl From<EngineError> for Abort {
    fn from(e: EngineError) -> Abort {
        Abort::Engine(e)
    }
}

fn wait(w: LockWait, timeout: Duration) -> Result<(), LockError> {
    let _g = pool_core::wait::begin(pool_core::wait::WaitKind::RowLock);
    w.wait(timeout)
}

/// Takes the lock an insert's (or an update's) check `probe` calls for: the insert intention
/// on the successor (inheriting its gap locks when granted), or a duplicate check's S/X lock.
fn probe_lock(
    sys: &TrxSys,
    lt: &LockTrx,
    table: &Table,
    strength: Strength,
    probe: InsertProbe<'_>,
) -> Result<Acquired, LockError> {
    let me = lt.id();
    let index = index_id(table, probe.index);
    // A duplicate check locks what it found, after converting the writer's
    // implicit lock: the clustered record only, a unique secondary's entries
    // and the record after them next-key (in every isolation level).
    let dup_lock = |key: RecKey<'_>, ex: Option<Existing>, kind: GapKind| {
        let rec = RecAt {
            index,
            key,
            page: 0,
        };
        if let Some(ex) = ex {
            if ex.trx_id != me && ex.trx_id >= sys.min_active_id() {
                sys.locks.convert_implicit(ex.trx_id, rec);
            }
        }
        let mode = RecLockMode::new(strength, kind);
        sys.locks.lock_rec(lt, rec, mode, WaitPolicy::Wait)
    };
    match probe.kind {
        ProbeKind::Duplicate(ex) => {
            let kind = if probe.index == 0 {
                GapKind::RecNotGap
            } else {
                GapKind::NextKey
            };
            dup_lock(RecKey::User(probe.key), Some(ex), kind)
        }
        ProbeKind::DuplicateScanEnd(ex) => dup_lock(rec_key(probe.successor), ex, GapKind::NextKey),
        ProbeKind::Gap => {
            let succ = RecAt {
                index,
                key: rec_key(probe.successor),
                page: 0,
            };
            let got = sys
                .locks
                .lock_rec(lt, succ, RecLockMode::INSERT_INTENTION, WaitPolicy::Wait);
            if matches!(got, Ok(Acquired::Granted)) {
                sys.locks.inherit_gap_locks(
                    index,
                    rec_key(probe.successor),
                    RecKey::User(probe.key),
                    0,
                    Inherit::Insert,
                );
            }
            got
        }
    }
}

/// What a check hook returns for a probe's lock: a wait aborts the write (kept in `pending`
/// for the caller to wait on before retrying), an error aborts it.
fn on_probe(got: Result<Acquired, LockError>, pending: &mut Option<LockWait>) -> Result<(), Abort> {
    match got {
        Ok(Acquired::Wait(w)) => {
            *pending = Some(w);
            Err(Abort::Wait)
        }
        Ok(_) => Ok(()),
        Err(e) => Err(Abort::Lock(e)),
    }
}

/// Inserts `row` for `trx`: IX on the table, then per index an insert-intention check on the
/// successor (waiting while another transaction's gap or next-key lock covers the gap) and
/// the inheritance of gap locks by the new record; a duplicate clustered key is locked
/// (`dup`) before it is reported, waiting for its writer if that one is still active.
pub fn insert_row(
    sys: &TrxSys,
    trx: &mut Trx,
    table: &Arc<Table>,
    row: Vec<Value>,
    opts: &InsertOptions,
    dup: DupLock,
    timeout: Duration,
) -> Result<InsertOutcome, WriteError> {
    sys.lock_table(trx, table, TableLockMode::IX, timeout)?;
    let info = sys.make_read_write(trx);
    let me = info.id;
    let lt = info.lock.clone();
    let opts = InsertOptions {
        stamp: WriteStamp { trx_id: me },
        ..*opts
    };
    let strength = match dup {
        DupLock::Shared => Strength::S,
        DupLock::Exclusive => Strength::X,
    };
    loop {
        let mut pending: Option<LockWait> = None;
        let mut log = Vec::new();
        let r = table.insert_checked(
            row.clone(),
            &opts,
            |probe| on_probe(probe_lock(sys, &lt, table, strength, probe), &mut pending),
            &mut log,
        );
        match r {
            Ok(out) => {
                trx.log(table, log);
                return Ok(out);
            }
            Err(Abort::Engine(e)) => return Err(WriteError::Engine(e)),
            Err(Abort::Lock(e)) => return Err(WriteError::Lock(e)),
            Err(Abort::Wait) => {
                let w = pending.take().expect("a wait was requested");
                wait(w, timeout)?;
            }
        }
    }
}

/// Locks the clustered record `pk` (record only) for `trx`, converting its writer's implicit
/// lock and waiting as needed (REPLACE and ON DUPLICATE KEY UPDATE on the conflicting row).
pub fn lock_row(
    sys: &TrxSys,
    trx: &mut Trx,
    table: &Arc<Table>,
    pk: &[u8],
    strength: Strength,
    timeout: Duration,
) -> Result<(), LockError> {
    sys.lock_table(trx, table, TableLockMode::IX, timeout)?;
    let info = sys.make_read_write(trx);
    loop {
        let got = {
            let mut cur = table.clustered_index().cursor(LatchMode::Read);
            if !(cur.search(pk, SearchMode::Ge) && cur.record().is_some_and(|r| *r.key() == *pk)) {
                return Ok(());
            }
            let rec = cur.record().expect("on record");
            let at = RecAt {
                index: index_id(table, 0),
                key: RecKey::User(pk),
                page: cur.page_id().unwrap_or(0),
            };
            if rec.trx_id() != info.id && rec.trx_id() >= sys.min_active_id() {
                sys.locks.convert_implicit(rec.trx_id(), at);
            }
            sys.locks.lock_rec(
                &info.lock,
                at,
                RecLockMode::new(strength, GapKind::RecNotGap),
                WaitPolicy::Wait,
            )?
        };
        match got {
            Acquired::Wait(w) => wait(w, timeout)?,
            _ => return Ok(()),
        }
    }
}

/// Updates the locked row `pk` to `new_row`, logging the change. Each entry the update
/// inserts is checked first as an INSERT's is (insert intention on its successor, S locks of
/// a unique index's duplicate scan), waiting as needed; see `Table::update_checked` for
/// what that check does not cover.
pub fn update_row(
    sys: &TrxSys,
    trx: &mut Trx,
    table: &Arc<Table>,
    pk: &[u8],
    new_row: Vec<Value>,
    timeout: Duration,
) -> Result<UpdateOutcome, WriteError> {
    let info = sys.make_read_write(trx);
    let lt = info.lock.clone();
    let stamp = WriteStamp { trx_id: info.id };
    loop {
        let mut pending: Option<LockWait> = None;
        let mut log = Vec::new();
        let r = table.update_checked(
            pk,
            new_row.clone(),
            stamp,
            |probe| {
                on_probe(
                    probe_lock(sys, &lt, table, Strength::S, probe),
                    &mut pending,
                )
            },
            &mut log,
        );
        trx.log(table, log);
        match r {
            Ok(out) => return Ok(out),
            Err(Abort::Engine(e)) => return Err(WriteError::Engine(e)),
            Err(Abort::Lock(e)) => return Err(WriteError::Lock(e)),
            Err(Abort::Wait) => {
                let w = pending.take().expect("a wait was requested");
                wait(w, timeout)?;
            }
        }
    }
}

/// Delete-marks the locked row `pk`, logging the change; false if it is not there.
pub fn delete_row(sys: &TrxSys, trx: &mut Trx, table: &Arc<Table>, pk: &[u8]) -> bool {
    let info = sys.make_read_write(trx);
    let mut log = Vec::new();
    let done = table.delete(pk, WriteStamp { trx_id: info.id }, &mut log);
    trx.log(table, log);
    done
}
