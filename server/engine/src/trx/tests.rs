//! Transaction tests, single-threaded except where a lock wait needs a second thread: what
//! commit makes visible and to which read view, what rollback and savepoint rollback undo
//! (in the clustered index, the secondary index and the version store), that commit and
//! rollback leave no lock behind, lock-wait accounting, the id and state lifecycle, purge
//! against the oldest view, that consistent reads take no transaction-system mutex, and a
//! stress test of views opened while writers commit and purge runs. Purge runs only where a
//! test calls it (no purge thread).

use std::sync::Arc;
use std::thread;
use std::time::Duration;

use super::*;
use crate::cursor::Direction;
use crate::lock::{IndexId, LockNames, Strength};
use crate::schema::{Column, IndexDef, IndexKind, TableDef};
use crate::types::{ColumnType, IntKind};
use crate::value::Value;
use crate::{InsertOptions, KeyRange, PageCapacity};

const INT: ColumnType = ColumnType::Integer {
    kind: IntKind::Int,
    unsigned: false,
};

const TIMEOUT: Duration = Duration::from_secs(10);

fn sys() -> Arc<TrxSys> {
    TrxSys::new(
        LockConfig {
            shards: 8,
            ..LockConfig::default()
        },
        PurgeConfig::default(),
    )
}

/// t(id INT PRIMARY KEY, k INT, v VARCHAR(16), KEY k_idx(k)) on small pages.
fn table() -> Arc<Table> {
    let def = TableDef::new(
        "t",
        vec![
            Column::new("id", INT),
            Column::new("k", INT),
            Column::new("v", ColumnType::VarChar(16)),
        ],
        vec![
            IndexDef::new("PRIMARY", IndexKind::Primary, vec![0]),
            IndexDef::new("k_idx", IndexKind::NonUnique, vec![1]),
        ],
    )
    .unwrap();
    Arc::new(Table::new(def, PageCapacity { leaf: 4, inner: 4 }))
}

type Row = (i64, i64, String);

fn values(r: &(i64, i64, &str)) -> Vec<Value> {
    vec![Value::Int(r.0), Value::Int(r.1), Value::str(r.2)]
}

fn row_of(v: &[Value]) -> Row {
    let int = |v: &Value| match v {
        Value::Int(i) => *i,
        other => panic!("an INT column decoded as {other:?}"),
    };
    let text = match &v[2] {
        Value::Bytes(b) => String::from_utf8_lossy(b).into_owned(),
        other => panic!("a VARCHAR column decoded as {other:?}"),
    };
    (int(&v[0]), int(&v[1]), text)
}

fn rows(list: &[(i64, i64, &str)]) -> Vec<Row> {
    list.iter()
        .map(|&(a, b, c)| (a, b, c.to_string()))
        .collect()
}

fn pk(t: &Table, id: i64) -> Vec<u8> {
    t.encode_search_key(0, &[Value::Int(id)]).unwrap()
}

fn begin(sys: &TrxSys, iso: Isolation) -> Trx {
    sys.begin(iso, false, 1, 1)
}

fn insert(sys: &TrxSys, trx: &mut Trx, t: &Arc<Table>, r: (i64, i64, &str)) {
    insert_row(
        sys,
        trx,
        t,
        values(&r),
        &InsertOptions::default(),
        DupLock::Shared,
        TIMEOUT,
    )
    .expect("insert");
}

/// Locks the row as UPDATE's scan would, then updates it.
fn update(sys: &TrxSys, trx: &mut Trx, t: &Arc<Table>, r: (i64, i64, &str)) {
    let key = pk(t, r.0);
    lock_row(sys, trx, t, &key, Strength::X, TIMEOUT).expect("lock for update");
    let out = update_row(sys, trx, t, &key, values(&r), TIMEOUT).expect("update");
    assert!(
        matches!(out, crate::UpdateOutcome::Updated { .. }),
        "{out:?}"
    );
}

/// Locks the row as DELETE's scan would, then delete-marks it.
fn delete(sys: &TrxSys, trx: &mut Trx, t: &Arc<Table>, id: i64) {
    let key = pk(t, id);
    lock_row(sys, trx, t, &key, Strength::X, TIMEOUT).expect("lock for delete");
    assert!(delete_row(sys, trx, t, &key), "row {id} is there to delete");
}

/// A consistent read of the whole table through the transaction's read view.
fn read(sys: &TrxSys, trx: &mut Trx, t: &Table) -> Vec<Row> {
    let me = trx.id();
    let view = sys.view(trx);
    t.scan(0, KeyRange::all(), Direction::Forward)
        .read_view(view, me)
        .map(|item| row_of(&item.row.expect("clustered scans return rows")))
        .collect()
}

/// The latest committed-or-not rows (no read view).
fn latest(t: &Table) -> Vec<Row> {
    t.scan(0, KeyRange::all(), Direction::Forward)
        .map(|item| row_of(&item.row.expect("clustered scans return rows")))
        .collect()
}

/// Every entry of `k_idx`, delete-marked ones included: ((k, id), delete-marked).
fn secondary(t: &Table) -> Vec<((i64, i64), bool)> {
    t.scan(1, KeyRange::all(), Direction::Forward)
        .include_delete_marked(true)
        .map(|item| {
            let key = t.decode_index_key(1, &item.key);
            let int = |v: &Value| match v {
                Value::Int(i) => *i,
                other => panic!("{other:?}"),
            };
            ((int(&key[0]), int(&key[1])), item.delete_mark)
        })
        .collect()
}

/// Every clustered record, delete-marked ones included: (id, delete-marked).
fn clustered(t: &Table) -> Vec<(i64, bool)> {
    t.scan(0, KeyRange::all(), Direction::Forward)
        .include_delete_marked(true)
        .map(|item| {
            let id = match t.decode_index_key(0, &item.key)[0] {
                Value::Int(i) => i,
                ref other => panic!("{other:?}"),
            };
            (id, item.delete_mark)
        })
        .collect()
}

/// Commits rows 1..=3 with k = 10, 20, 30.
fn committed_base(sys: &TrxSys, t: &Arc<Table>) {
    let mut trx = begin(sys, Isolation::RepeatableRead);
    for r in [(1, 10, "a"), (2, 20, "b"), (3, 30, "c")] {
        insert(sys, &mut trx, t, r);
    }
    sys.commit(trx);
}

struct Names;

impl LockNames for Names {
    fn table(&self, t: TableId) -> Option<(String, String)> {
        Some(("test".into(), format!("t{}", t.0)))
    }
    fn index(&self, i: IndexId) -> Option<(String, String, String)> {
        Some(("test".into(), "t".into(), format!("ix{}", i.0)))
    }
    fn lock_data(&self, _: IndexId, key: &[u8]) -> String {
        format!("{key:?}")
    }
}

/// The transaction ids owning a lock (granted or waiting) in the lock system.
fn lock_owners(sys: &TrxSys) -> Vec<TrxId> {
    let mut v: Vec<TrxId> = sys
        .locks
        .data_locks(&Names)
        .iter()
        .map(|r| r.engine_transaction_id)
        .collect();
    v.sort_unstable();
    v.dedup();
    v
}

#[test]
fn commit_makes_writes_visible_to_a_later_read_view() {
    let sys = sys();
    let t = table();
    committed_base(&sys, &t);
    let mut before = begin(&sys, Isolation::RepeatableRead);
    assert_eq!(
        read(&sys, &mut before, &t).len(),
        3,
        "view made before the writes"
    );

    let mut w = begin(&sys, Isolation::RepeatableRead);
    insert(&sys, &mut w, &t, (4, 40, "d"));
    update(&sys, &mut w, &t, (1, 11, "a2"));
    delete(&sys, &mut w, &t, 2);
    let own = rows(&[(1, 11, "a2"), (3, 30, "c"), (4, 40, "d")]);
    assert_eq!(
        read(&sys, &mut w, &t),
        own,
        "a transaction sees its own writes"
    );
    let mut during = begin(&sys, Isolation::RepeatableRead);
    let base = rows(&[(1, 10, "a"), (2, 20, "b"), (3, 30, "c")]);
    assert_eq!(
        read(&sys, &mut during, &t),
        base,
        "uncommitted writes are invisible"
    );

    assert!(sys.commit(w) > 0, "a writing transaction generates redo");
    assert_eq!(
        read(&sys, &mut before, &t),
        base,
        "an older view still does not see them"
    );
    assert_eq!(read(&sys, &mut during, &t), base);
    let mut after = begin(&sys, Isolation::RepeatableRead);
    assert_eq!(
        read(&sys, &mut after, &t),
        own,
        "a later view sees the commit"
    );
    for trx in [before, during, after] {
        assert_eq!(sys.commit(trx), 0, "a read-only transaction writes no redo");
    }
}

#[test]
fn commit_hands_only_non_insert_undo_to_purge() {
    let sys = sys();
    let t = table();
    committed_base(&sys, &t);
    assert_eq!(sys.history_len(), 0, "insert undo is dropped at commit");
    let mut w = begin(&sys, Isolation::RepeatableRead);
    update(&sys, &mut w, &t, (1, 11, "a2"));
    delete(&sys, &mut w, &t, 3);
    sys.commit(w);
    assert_eq!(
        sys.history_len(),
        1,
        "one committed transaction awaits purge"
    );
    assert_eq!(sys.purge_batch(), 2, "its two undo records are purged");
    assert_eq!(sys.history_len(), 0);
}

#[test]
fn rollback_undoes_inserts_updates_and_deletes_with_their_secondary_entries() {
    let sys = sys();
    let t = table();
    committed_base(&sys, &t);
    let rows_before = latest(&t);
    let sec_before = secondary(&t);
    assert_eq!(
        sec_before,
        vec![((10, 1), false), ((20, 2), false), ((30, 3), false)]
    );

    let mut w = begin(&sys, Isolation::RepeatableRead);
    insert(&sys, &mut w, &t, (4, 40, "d"));
    update(&sys, &mut w, &t, (1, 11, "a2")); // k changes: mark (10,1), insert (11,1)
    update(&sys, &mut w, &t, (2, 20, "b2")); // k unchanged: no secondary change
    delete(&sys, &mut w, &t, 3);
    update(&sys, &mut w, &t, (4, 41, "d2")); // a row this transaction inserted
    assert_eq!(
        secondary(&t),
        vec![
            ((10, 1), true),
            ((11, 1), false),
            ((20, 2), false),
            ((30, 3), true),
            ((40, 4), true),
            ((41, 4), false),
        ]
    );
    assert_eq!(t.row_count(), 3);
    assert!(!t.versions().is_empty(), "the writes kept old versions");

    sys.rollback(w);
    assert_eq!(latest(&t), rows_before, "every row is back");
    assert_eq!(
        secondary(&t),
        sec_before,
        "entries back, unmarked; new ones gone"
    );
    assert_eq!(clustered(&t), vec![(1, false), (2, false), (3, false)]);
    assert_eq!(t.row_count(), 3);
    assert!(
        t.versions().is_empty(),
        "rollback freed every version it restored"
    );
    assert_eq!(
        sys.history_len(),
        0,
        "a rolled-back transaction leaves no history"
    );
    assert_eq!(sys.stats.rollbacks.load(Relaxed), 1);
}

#[test]
fn rollback_counts_the_row_bytes_it_frees() {
    let sys = sys();
    let t = table();
    let mut w = begin(&sys, Isolation::RepeatableRead);
    for id in 0..20 {
        insert(&sys, &mut w, &t, (id, id, "sixteen bytes..."));
    }
    let before = sys.freed_since_trim.load(Relaxed);
    sys.rollback(w);
    let freed = sys.freed_since_trim.load(Relaxed) - before;
    // Each row: its NULL bitmap (1 byte), two INTs (4 each), a length prefix (1) and 16 bytes.
    let row_len = t.codec().encode(&values(&(0, 0, "sixteen bytes..."))).len();
    assert_eq!(row_len, 26);
    assert_eq!(freed, 20 * 26, "the removed records' rows");
    assert!(latest(&t).is_empty());
}

#[test]
fn savepoint_rollback_undoes_only_what_came_after() {
    let sys = sys();
    let t = table();
    committed_base(&sys, &t);
    let mut w = begin(&sys, Isolation::RepeatableRead);
    update(&sys, &mut w, &t, (1, 12, "a2"));
    let sp1 = w.savepoint();
    insert(&sys, &mut w, &t, (5, 50, "e"));
    update(&sys, &mut w, &t, (1, 13, "a3"));
    let sp2 = w.savepoint();
    delete(&sys, &mut w, &t, 2);
    assert!(sp2 > sp1);

    sys.undo_to(&mut w, sp2);
    assert_eq!(
        w.savepoint(),
        sp2,
        "the undo log is cut back to the savepoint"
    );
    assert_eq!(
        latest(&t),
        rows(&[(1, 13, "a3"), (2, 20, "b"), (3, 30, "c"), (5, 50, "e")])
    );
    sys.undo_to(&mut w, sp1);
    assert_eq!(
        latest(&t),
        rows(&[(1, 12, "a2"), (2, 20, "b"), (3, 30, "c")])
    );
    assert_eq!(
        secondary(&t),
        vec![
            ((10, 1), true),
            ((12, 1), false),
            ((20, 2), false),
            ((30, 3), false),
        ],
        "the entries of the later updates and the insert are gone; the first update's stay"
    );
    let id = w.id();
    assert!(
        lock_owners(&sys).contains(&id),
        "locks stay after a savepoint rollback"
    );
    sys.commit(w);
    let mut r = begin(&sys, Isolation::RepeatableRead);
    assert_eq!(
        read(&sys, &mut r, &t),
        rows(&[(1, 12, "a2"), (2, 20, "b"), (3, 30, "c")]),
        "what was before the savepoint is committed"
    );
}

#[test]
fn repeatable_read_keeps_its_view_for_the_whole_transaction() {
    let sys = sys();
    let t = table();
    committed_base(&sys, &t);
    let mut r = begin(&sys, Isolation::RepeatableRead);
    let base = read(&sys, &mut r, &t);
    let mut w = begin(&sys, Isolation::RepeatableRead);
    update(&sys, &mut w, &t, (2, 22, "b2"));
    insert(&sys, &mut w, &t, (6, 60, "f"));
    delete(&sys, &mut w, &t, 3);
    sys.commit(w);
    sys.end_statement(&mut r);
    assert_eq!(
        read(&sys, &mut r, &t),
        base,
        "RR: the first read's view stays"
    );
    assert_eq!(
        t.get_visible(&pk(&t, 3), &[2], sys.view(&mut r), 0),
        Some(vec![Value::str("c")]),
        "a point read through the view finds the deleted row's old version"
    );
    sys.commit(r);
    let mut r2 = begin(&sys, Isolation::RepeatableRead);
    assert_eq!(
        read(&sys, &mut r2, &t),
        rows(&[(1, 10, "a"), (2, 22, "b2"), (6, 60, "f")])
    );
}

#[test]
fn read_committed_sees_commits_from_its_next_statement() {
    let sys = sys();
    let t = table();
    committed_base(&sys, &t);
    let mut r = begin(&sys, Isolation::ReadCommitted);
    let base = read(&sys, &mut r, &t);
    let mut w = begin(&sys, Isolation::RepeatableRead);
    update(&sys, &mut w, &t, (2, 22, "b2"));
    sys.commit(w);
    assert_eq!(
        read(&sys, &mut r, &t),
        base,
        "within one statement the view stays"
    );
    sys.end_statement(&mut r);
    assert_eq!(
        sys.open_views(),
        0,
        "RC drops its view at the end of a statement"
    );
    assert_eq!(
        read(&sys, &mut r, &t),
        rows(&[(1, 10, "a"), (2, 22, "b2"), (3, 30, "c")]),
        "the next statement sees the commit"
    );
    let mut w = begin(&sys, Isolation::RepeatableRead);
    update(&sys, &mut w, &t, (3, 33, "c2"));
    sys.end_statement(&mut r);
    assert_eq!(
        read(&sys, &mut r, &t),
        rows(&[(1, 10, "a"), (2, 22, "b2"), (3, 30, "c")]),
        "but never an uncommitted write"
    );
    sys.rollback(w);
    sys.commit(r);
}

#[test]
fn commit_and_rollback_release_every_lock() {
    for commit in [true, false] {
        let sys = sys();
        let t = table();
        committed_base(&sys, &t);
        let mut w = begin(&sys, Isolation::RepeatableRead);
        update(&sys, &mut w, &t, (1, 11, "a2"));
        delete(&sys, &mut w, &t, 2);
        insert(&sys, &mut w, &t, (7, 70, "g"));
        let id = w.id();
        let lt = w.lock_handle().expect("read-write").clone();
        assert_eq!(lock_owners(&sys), vec![id], "it holds table and row locks");
        assert!(sys.locks.trx_lock_info(&lt).lock_structs > 0);

        // Another transaction waits for row 1; the end of `w` must grant it.
        let waiter = {
            let (sys, t) = (Arc::clone(&sys), Arc::clone(&t));
            thread::spawn(move || {
                let mut b = begin(&sys, Isolation::RepeatableRead);
                let got = lock_row(&sys, &mut b, &t, &pk(&t, 1), Strength::X, TIMEOUT);
                (got, b)
            })
        };
        while sys.locks.stats().row_lock_current_waits == 0 {
            thread::sleep(Duration::from_millis(1));
        }
        if commit {
            sys.commit(w);
        } else {
            sys.rollback(w);
        }
        let (got, b) = waiter.join().expect("waiter thread");
        assert!(got.is_ok(), "the waiter is granted: {got:?}");
        let owners = lock_owners(&sys);
        assert_eq!(
            owners,
            vec![b.id()],
            "nothing of {id} is left (commit: {commit})"
        );
        assert!(
            sys.locks.trx_lock_infos().iter().all(|i| i.trx_id != id),
            "{id} is unregistered from the lock system"
        );
        sys.commit(b);
        assert!(lock_owners(&sys).is_empty());
        assert!(sys.locks.trx_lock_infos().is_empty());
    }
}

#[test]
fn take_lock_wait_charges_each_wait_once_to_the_waiter() {
    let sys = sys();
    let t = table();
    committed_base(&sys, &t);
    let mut holder = begin(&sys, Isolation::RepeatableRead);
    assert_eq!(
        holder.take_lock_wait(),
        Duration::ZERO,
        "no lock handle yet"
    );
    lock_row(&sys, &mut holder, &t, &pk(&t, 1), Strength::X, TIMEOUT).unwrap();

    let held = Duration::from_millis(150);
    let waiter = {
        let (sys, t) = (Arc::clone(&sys), Arc::clone(&t));
        thread::spawn(move || {
            let mut b = begin(&sys, Isolation::RepeatableRead);
            lock_row(&sys, &mut b, &t, &pk(&t, 1), Strength::X, TIMEOUT).unwrap();
            let waited = b.take_lock_wait();
            let again = b.take_lock_wait();
            // A wait that times out is charged too.
            let mut c = begin(&sys, Isolation::RepeatableRead);
            let short = Duration::from_millis(50);
            let timed_out = lock_row(&sys, &mut c, &t, &pk(&t, 1), Strength::S, short);
            let c_waited = c.take_lock_wait();
            sys.rollback(c);
            sys.commit(b);
            (waited, again, timed_out, c_waited)
        })
    };
    while sys.locks.stats().row_lock_current_waits == 0 {
        thread::sleep(Duration::from_millis(1));
    }
    thread::sleep(held);
    sys.commit(holder);
    let (waited, again, timed_out, c_waited) = waiter.join().unwrap();
    assert!(
        waited >= held && waited < TIMEOUT,
        "the waiter is charged its wait: {waited:?}"
    );
    assert_eq!(again, Duration::ZERO, "and only once");
    assert_eq!(timed_out, Err(LockError::WaitTimeout));
    assert!(
        c_waited >= Duration::from_millis(50) && c_waited < TIMEOUT,
        "a timed-out wait is charged: {c_waited:?}"
    );
}

#[test]
fn ids_and_states_follow_the_transaction_lifecycle() {
    let sys = sys();
    let t = table();
    let mut r = begin(&sys, Isolation::RepeatableRead);
    assert_eq!(r.id(), 0, "no id before the first write or lock");
    read(&sys, &mut r, &t);
    assert_eq!(r.id(), 0, "a consistent read does not make it read-write");
    assert!(sys.active_trxs().is_empty());

    let counter = sys.id_counter();
    let mut w = begin(&sys, Isolation::ReadCommitted);
    insert(&sys, &mut w, &t, (1, 10, "a"));
    let id = w.id();
    assert_eq!(id, counter, "the id is the counter at the first write");
    let info = Arc::clone(w.info.as_ref().expect("read-write"));
    assert!(
        Arc::ptr_eq(&info, &sys.make_read_write(&mut w)),
        "made once"
    );
    assert!(sys.is_active(id));
    assert_eq!(sys.min_active_id(), id);
    assert_eq!(info.isolation, Isolation::ReadCommitted);
    assert_eq!(info.rows_modified.load(Relaxed), 1);
    assert_eq!(info.state_text(false), "RUNNING");
    assert_eq!(info.state_text(true), "LOCK WAIT");
    let active: Vec<TrxId> = sys.active_trxs().iter().map(|i| i.id).collect();
    assert_eq!(active, vec![id]);

    let mut w2 = begin(&sys, Isolation::RepeatableRead);
    insert(&sys, &mut w2, &t, (2, 20, "b"));
    assert!(w2.id() > id, "ids increase");
    assert_eq!(sys.min_active_id(), id, "the oldest active id");

    let commits = sys.stats.commits.load(Relaxed);
    sys.commit(w);
    assert_eq!(info.state_text(false), "COMMITTING", "the state commit set");
    assert!(!sys.is_active(id));
    assert_eq!(sys.min_active_id(), id + 1, "w2 is the oldest now");
    assert!(
        sys.id_counter() > id + 1,
        "commit took a transaction number"
    );
    assert_eq!(sys.stats.commits.load(Relaxed), commits + 1);

    let info2 = Arc::clone(w2.info.as_ref().expect("read-write"));
    sys.rollback(w2);
    assert_eq!(
        info2.state_text(false),
        "ROLLING BACK",
        "the state rollback set"
    );
    assert!(!sys.is_active(info2.id));
    assert_eq!(sys.min_active_id(), u64::MAX, "none active");
    assert!(sys.active_trxs().is_empty());

    sys.commit(r);
    assert_eq!(
        sys.stats.commits.load(Relaxed),
        commits + 1,
        "a read-only commit is not counted"
    );
    assert_eq!(sys.open_views(), 0, "commit closed the read view");
}

#[test]
fn purge_waits_for_the_oldest_view_and_frees_what_it_removes() {
    let sys = sys();
    let t = table();
    committed_base(&sys, &t);
    let mut old = begin(&sys, Isolation::RepeatableRead);
    let base = read(&sys, &mut old, &t);

    let mut w = begin(&sys, Isolation::RepeatableRead);
    update(&sys, &mut w, &t, (1, 11, "a2"));
    delete(&sys, &mut w, &t, 2);
    sys.commit(w);
    assert_eq!(sys.purge_batch(), 0, "the old view still needs the history");
    assert_eq!(read(&sys, &mut old, &t), base);
    assert_eq!(clustered(&t), vec![(1, false), (2, true), (3, false)]);

    sys.commit(old);
    let freed = sys.freed_since_trim.load(Relaxed);
    assert_eq!(sys.purge_batch(), 2);
    assert_eq!(
        clustered(&t),
        vec![(1, false), (3, false)],
        "the deleted row is gone"
    );
    assert_eq!(
        secondary(&t),
        vec![((11, 1), false), ((30, 3), false)],
        "and so are the delete-marked entries"
    );
    assert!(t.versions().is_empty(), "purge freed the old versions");
    assert!(
        sys.freed_since_trim.load(Relaxed) > freed,
        "the freed rows are counted for the allocator trim"
    );
    assert_eq!(sys.stats.purged_undo.load(Relaxed), 2);
}

#[test]
fn consistent_reads_take_no_transaction_system_mutex() {
    let sys = sys();
    let t = table();
    committed_base(&sys, &t);
    let mut w = begin(&sys, Isolation::RepeatableRead);
    update(&sys, &mut w, &t, (2, 22, "b2"));
    let base = rows(&[(1, 10, "a"), (2, 20, "b"), (3, 30, "c")]);
    let before = sys.active_acquisitions.load(Relaxed);
    for _ in 0..100 {
        let mut r = begin(&sys, Isolation::RepeatableRead);
        assert_eq!(
            read(&sys, &mut r, &t),
            base,
            "the writer's change is not seen"
        );
        sys.commit(r);
        let mut rc = begin(&sys, Isolation::ReadCommitted);
        assert_eq!(read(&sys, &mut rc, &t), base);
        sys.end_statement(&mut rc);
        assert_eq!(read(&sys, &mut rc, &t), base);
        sys.rollback(rc);
    }
    assert_eq!(
        sys.active_acquisitions.load(Relaxed),
        before,
        "opening and closing read views took the transaction-system mutex"
    );
    sys.commit(w);
    assert_eq!(sys.open_views(), 0);
}

/// Every transaction of the stress test writes its stamp into every row: a view that sees
/// whole transactions finds one stamp in all rows.
const STRESS_ROWS: i64 = 6;

/// The stamp every row of a consistent read holds; panics on a torn or incomplete snapshot.
fn one_stamp(rows: &[Row]) -> i64 {
    assert_eq!(
        rows.len(),
        STRESS_ROWS as usize,
        "a row is missing: {rows:?}"
    );
    let stamp = rows[0].1;
    assert!(
        rows.iter().all(|r| r.1 == stamp),
        "a view saw part of a transaction: {rows:?}"
    );
    assert!(stamp >= 0, "a view saw a rolled-back write: {rows:?}");
    stamp
}

/// One writer's transactions: each stamps every row (locking them in key order), every fifth
/// with a negative stamp and rolled back.
fn stamp_rows(sys: &TrxSys, t: &Arc<Table>, writer: i64, transactions: i64) {
    for n in 1..=transactions {
        let rolled_back = n % 5 == 0;
        let stamp = if rolled_back {
            -n
        } else {
            writer * 1_000_000 + n
        };
        let iso = if n % 2 == 0 {
            Isolation::ReadCommitted
        } else {
            Isolation::RepeatableRead
        };
        let mut w = begin(sys, iso);
        for id in 1..=STRESS_ROWS {
            update(sys, &mut w, t, (id, stamp, "s"));
        }
        if rolled_back {
            sys.rollback(w);
        } else {
            sys.commit(w);
        }
    }
}

/// Readers until `done`: autocommit reads, RR transactions (two reads, one view) and RC
/// transactions (a view per statement), each checked for a whole snapshot.
fn read_stamps(sys: &TrxSys, t: &Table, done: &AtomicBool) -> u64 {
    let mut reads = 0;
    while !done.load(Relaxed) {
        let mut r = begin(sys, Isolation::RepeatableRead);
        one_stamp(&read(sys, &mut r, t));
        sys.commit(r);
        let mut rr = begin(sys, Isolation::RepeatableRead);
        let first = one_stamp(&read(sys, &mut rr, t));
        sys.end_statement(&mut rr);
        thread::yield_now();
        assert_eq!(
            one_stamp(&read(sys, &mut rr, t)),
            first,
            "RR keeps its view"
        );
        sys.commit(rr);
        let mut rc = begin(sys, Isolation::ReadCommitted);
        one_stamp(&read(sys, &mut rc, t));
        sys.end_statement(&mut rc);
        one_stamp(&read(sys, &mut rc, t));
        sys.commit(rc);
        reads += 5;
    }
    reads
}

#[test]
fn views_opened_while_writers_commit_see_whole_transactions() {
    let sys = sys();
    let t = table();
    let mut init = begin(&sys, Isolation::RepeatableRead);
    for id in 1..=STRESS_ROWS {
        insert(&sys, &mut init, &t, (id, 0, "s"));
    }
    sys.commit(init);
    let writing = AtomicU64::new(2);
    let done = AtomicBool::new(false);
    let reads = thread::scope(|s| {
        let readers: Vec<_> = (0..2)
            .map(|_| s.spawn(|| read_stamps(&sys, &t, &done)))
            .collect();
        s.spawn(|| {
            while !done.load(Relaxed) {
                sys.purge_batch();
                thread::yield_now();
            }
        });
        for writer in 1..=2 {
            let (sys, t, writing, done) = (&sys, &t, &writing, &done);
            s.spawn(move || {
                stamp_rows(sys, t, writer, 300);
                if writing.fetch_sub(1, Relaxed) == 1 {
                    done.store(true, Relaxed);
                }
            });
        }
        readers
            .into_iter()
            .map(|r| r.join().expect("reader"))
            .sum::<u64>()
    });
    assert!(reads > 0, "the readers ran");
    assert_eq!(sys.open_views(), 0, "every view was closed");
    while sys.purge_batch() > 0 {}
    assert_eq!(
        sys.history_len(),
        0,
        "purge caught up once the views closed"
    );
    assert!(t.versions().is_empty(), "and freed every old version");
}
