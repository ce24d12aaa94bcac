//! The lock set of locking scans, read back the way `performance_schema.data_locks` shows
//! it: a unique search locks the record it matches record-only and reads no further (the
//! gaps on both sides stay open to inserts), a miss locks the gap the key would go in
//! (REPEATABLE READ only), a delete-marked match takes InnoDB's next-key lock, and an
//! equality on a non-unique prefix still locks the record past it.

use std::ops::Bound;
use std::sync::Arc;
use std::time::Duration;

use super::*;
use crate::cursor::Direction;
use crate::lock::{lock_data_text, IndexId, LockError, LockNames, Strength, WaitPolicy};
use crate::schema::{Column, IndexDef, IndexKind, TableDef};
use crate::types::{ColumnType, IntKind};
use crate::value::Value;
use crate::{HandlerStats, InsertOptions, KeyRange, PageCapacity};

const INT: ColumnType = ColumnType::Integer {
    kind: IntKind::Int,
    unsigned: false,
};

const TIMEOUT: Duration = Duration::from_secs(10);

/// How long an insert that must not wait is given before it counts as blocked.
const BLOCKED: Duration = Duration::from_millis(200);

const PRIMARY: usize = 0;
const UK: usize = 1;
const K: usize = 2;

fn sys() -> Arc<TrxSys> {
    TrxSys::new(LockConfig::default(), PurgeConfig::default())
}

/// gu(id INT PRIMARY KEY, u INT NULL, k INT, UNIQUE uk(u), KEY k_idx(k)) with the committed
/// rows (10, 10, 10), (20, 20, 20), (30, 30, 30), on small pages.
fn table(sys: &TrxSys) -> Arc<Table> {
    let def = TableDef::new(
        "gu",
        vec![
            Column::new("id", INT).not_null(),
            Column::new("u", INT),
            Column::new("k", INT),
        ],
        vec![
            IndexDef::new("PRIMARY", IndexKind::Primary, vec![0]),
            IndexDef::new("uk", IndexKind::Unique, vec![1]),
            IndexDef::new("k_idx", IndexKind::NonUnique, vec![2]),
        ],
    )
    .unwrap();
    let t = Arc::new(Table::new(def, PageCapacity { leaf: 4, inner: 4 }));
    let mut trx = sys.begin(Isolation::RepeatableRead, false, 1, 1);
    for id in [10, 20, 30] {
        insert(sys, &mut trx, &t, [id, id, id], TIMEOUT).expect("insert");
    }
    sys.commit(trx);
    t
}

fn insert(
    sys: &TrxSys,
    trx: &mut Trx,
    t: &Arc<Table>,
    row: [i64; 3],
    timeout: Duration,
) -> Result<(), WriteError> {
    let row = row.iter().map(|&v| Value::Int(v)).collect();
    let opts = InsertOptions::default();
    insert_row(sys, trx, t, row, &opts, DupLock::Shared, timeout).map(|_| ())
}

/// Deletes row `id` in a transaction of its own and commits; the records stay delete-marked
/// (no purge runs here).
fn delete_committed(sys: &TrxSys, t: &Arc<Table>, id: i64) {
    let mut trx = sys.begin(Isolation::RepeatableRead, false, 9, 9);
    let key = t.encode_search_key(0, &[Value::Int(id)]).unwrap();
    lock_row(sys, &mut trx, t, &key, Strength::X, TIMEOUT).expect("lock for delete");
    assert!(delete_row(sys, &mut trx, t, &key));
    sys.commit(trx);
}

fn opts(mode: ScanLockMode, iso: Isolation, unique_point: bool) -> ScanOptions {
    ScanOptions {
        mode,
        policy: WaitPolicy::Wait,
        gaps: iso.gap_locks(),
        unique_point,
        covering_shared: false,
        semi_consistent: false,
        timeout: TIMEOUT,
    }
}

/// The result of one locking scan: the ids it returned and its handler counters.
struct Scanned {
    ids: Vec<i64>,
    stats: HandlerStats,
}

/// Runs a locking scan of the equality `index = value` to its end for `trx`.
fn scan_eq(
    sys: &TrxSys,
    trx: &mut Trx,
    t: &Table,
    index: usize,
    value: i64,
    dir: Direction,
    o: ScanOptions,
) -> Scanned {
    let key = t.encode_search_key(index, &[Value::Int(value)]).unwrap();
    scan(sys, trx, t, index, KeyRange::prefix(key), dir, o)
}

/// The clustered range between `lower` and `upper` (ids; None: unbounded).
/// A bound on id: (value, inclusive), None for unbounded.
type IdBound = Option<(i64, bool)>;

fn id_range(t: &Table, lower: IdBound, upper: IdBound) -> KeyRange {
    let bound = |b: IdBound| match b {
        None => Bound::Unbounded,
        Some((id, incl)) => {
            let k = t.encode_search_key(0, &[Value::Int(id)]).unwrap();
            if incl {
                Bound::Included(k)
            } else {
                Bound::Excluded(k)
            }
        }
    };
    KeyRange {
        lower: bound(lower),
        upper: bound(upper),
    }
}

/// Runs a locking scan of `range` of index `index` to its end for `trx`.
fn scan(
    sys: &TrxSys,
    trx: &mut Trx,
    t: &Table,
    index: usize,
    range: KeyRange,
    dir: Direction,
    o: ScanOptions,
) -> Scanned {
    let table_mode = match o.mode {
        ScanLockMode::Shared => TableLockMode::IS,
        ScanLockMode::Exclusive => TableLockMode::IX,
    };
    sys.lock_table(trx, t, table_mode, TIMEOUT)
        .expect("table lock");
    let lt = trx.lock_handle().expect("registered").clone();
    let mut scan = LockingScan::new(sys, lt, t, index, range, dir, o, vec![0]);
    let mut ids = Vec::new();
    while let Some(f) = scan.fetch().expect("no lock conflict") {
        match f.row[0] {
            Value::Int(id) => ids.push(id),
            ref other => panic!("id decoded as {other:?}"),
        }
    }
    Scanned {
        ids,
        stats: scan.stats,
    }
}

/// Names indexes and renders keys as `data_locks` does for this one table.
struct Names<'t>(&'t Table);

impl LockNames for Names<'_> {
    fn table(&self, _: TableId) -> Option<(String, String)> {
        Some(("test".into(), "gu".into()))
    }
    fn index(&self, i: IndexId) -> Option<(String, String, String)> {
        let pos = (i.0 % 1024) as usize;
        let name = self.0.def().indexes()[pos].name.clone();
        Some(("test".into(), "gu".into(), name))
    }
    fn lock_data(&self, i: IndexId, key: &[u8]) -> String {
        let pos = (i.0 % 1024) as usize;
        lock_data_text(&self.0.decode_index_key(pos, key), false)
    }
}

/// (INDEX_NAME, LOCK_MODE, LOCK_DATA) of `trx`'s record locks, sorted.
fn record_locks(sys: &TrxSys, t: &Table, trx: &Trx) -> Vec<(String, String, String)> {
    let Some(lt) = trx.lock_handle() else {
        return Vec::new();
    };
    let mut v: Vec<(String, String, String)> = sys
        .locks
        .data_locks(&Names(t))
        .into_iter()
        .filter(|r| r.engine_transaction_id == lt.id() && r.lock_type == "RECORD")
        .map(|r| {
            (
                r.index_name.unwrap_or_default(),
                r.lock_mode.to_string(),
                r.lock_data.unwrap_or_default(),
            )
        })
        .collect();
    v.sort();
    v
}

/// An expected record lock: (INDEX_NAME, LOCK_MODE, LOCK_DATA).
type Expected<'a> = (&'a str, &'a str, &'a str);

fn locks(list: &[Expected<'_>]) -> Vec<(String, String, String)> {
    let mut v: Vec<(String, String, String)> = list
        .iter()
        .map(|&(i, m, d)| (i.to_string(), m.to_string(), d.to_string()))
        .collect();
    v.sort();
    v
}

/// Whether another transaction's insert of `row` goes ahead without waiting (it is rolled
/// back either way).
fn insert_proceeds(sys: &TrxSys, t: &Arc<Table>, row: [i64; 3]) -> bool {
    let mut b = sys.begin(Isolation::RepeatableRead, false, 2, 2);
    let r = insert(sys, &mut b, t, row, BLOCKED);
    sys.rollback(b);
    match r {
        Ok(()) => true,
        Err(WriteError::Lock(LockError::WaitTimeout)) => false,
        Err(e) => panic!("insert of {row:?}: {e:?}"),
    }
}

#[test]
fn a_unique_primary_match_locks_the_record_only_and_reads_no_further() {
    for iso in [Isolation::RepeatableRead, Isolation::ReadCommitted] {
        for (mode, s) in [(ScanLockMode::Exclusive, "X"), (ScanLockMode::Shared, "S")] {
            let sys = sys();
            let t = table(&sys);
            let mut a = sys.begin(iso, false, 1, 1);
            let got = scan_eq(
                &sys,
                &mut a,
                &t,
                PRIMARY,
                20,
                Direction::Forward,
                opts(mode, iso, true),
            );
            assert_eq!(got.ids, vec![20]);
            assert_eq!(got.stats.read_next, 0, "the record after 20 is not read");
            assert_eq!(got.stats.records_visited, 1);
            let rec_only = format!("{s},REC_NOT_GAP");
            assert_eq!(
                record_locks(&sys, &t, &a),
                locks(&[("PRIMARY", &rec_only, "20")]),
                "{iso:?} {mode:?}"
            );
            // Both gaps next to 20 stay open.
            assert!(insert_proceeds(&sys, &t, [15, 15, 15]), "{iso:?} {mode:?}");
            assert!(insert_proceeds(&sys, &t, [25, 25, 25]), "{iso:?} {mode:?}");
            sys.rollback(a);
        }
    }
}

#[test]
fn a_unique_secondary_match_locks_the_entry_and_its_row_only() {
    for iso in [Isolation::RepeatableRead, Isolation::ReadCommitted] {
        let sys = sys();
        let t = table(&sys);
        let mut a = sys.begin(iso, false, 1, 1);
        let o = opts(ScanLockMode::Exclusive, iso, true);
        let got = scan_eq(&sys, &mut a, &t, UK, 10, Direction::Forward, o);
        assert_eq!(got.ids, vec![10]);
        assert_eq!(got.stats.read_next, 0);
        assert_eq!(
            record_locks(&sys, &t, &a),
            locks(&[
                ("PRIMARY", "X,REC_NOT_GAP", "10"),
                ("uk", "X,REC_NOT_GAP", "10, 10")
            ]),
            "{iso:?}"
        );
        // u = 15 goes into the gap before (20, 20), which nobody locked.
        assert!(insert_proceeds(&sys, &t, [15, 15, 15]), "{iso:?}");
        sys.rollback(a);
    }
}

#[test]
fn each_value_of_an_in_list_is_its_own_unique_search() {
    let sys = sys();
    let t = table(&sys);
    let mut a = sys.begin(Isolation::RepeatableRead, false, 1, 1);
    let o = opts(ScanLockMode::Exclusive, Isolation::RepeatableRead, true);
    for id in [10, 20] {
        assert_eq!(
            scan_eq(&sys, &mut a, &t, PRIMARY, id, Direction::Forward, o).ids,
            vec![id]
        );
    }
    assert_eq!(
        record_locks(&sys, &t, &a),
        locks(&[
            ("PRIMARY", "X,REC_NOT_GAP", "10"),
            ("PRIMARY", "X,REC_NOT_GAP", "20")
        ])
    );
    for id in [5, 15, 25, 35] {
        assert!(insert_proceeds(&sys, &t, [id, id, id]), "{id}");
    }
    sys.rollback(a);
}

#[test]
fn a_unique_miss_locks_the_gap_it_falls_in_under_repeatable_read_only() {
    let sys = sys();
    let t = table(&sys);
    let rr = Isolation::RepeatableRead;
    let mut a = sys.begin(rr, false, 1, 1);
    let o = opts(ScanLockMode::Exclusive, rr, true);
    assert!(
        scan_eq(&sys, &mut a, &t, PRIMARY, 15, Direction::Forward, o)
            .ids
            .is_empty()
    );
    assert!(scan_eq(&sys, &mut a, &t, UK, 25, Direction::Forward, o)
        .ids
        .is_empty());
    assert!(
        scan_eq(&sys, &mut a, &t, PRIMARY, 40, Direction::Forward, o)
            .ids
            .is_empty()
    );
    assert_eq!(
        record_locks(&sys, &t, &a),
        locks(&[
            ("PRIMARY", "X", "supremum pseudo-record"),
            ("PRIMARY", "X,GAP", "20"),
            ("uk", "X,GAP", "30, 30"),
        ])
    );
    assert!(
        !insert_proceeds(&sys, &t, [15, 1, 1]),
        "id 15 is in the locked gap"
    );
    assert!(
        !insert_proceeds(&sys, &t, [1, 25, 1]),
        "u 25 is in the locked gap"
    );
    assert!(
        !insert_proceeds(&sys, &t, [45, 45, 45]),
        "past the end is locked"
    );
    assert!(
        insert_proceeds(&sys, &t, [25, 1, 1]),
        "(20, 30) of PRIMARY is open"
    );
    sys.rollback(a);

    let rc = Isolation::ReadCommitted;
    let mut a = sys.begin(rc, false, 1, 1);
    let o = opts(ScanLockMode::Exclusive, rc, true);
    assert!(
        scan_eq(&sys, &mut a, &t, PRIMARY, 15, Direction::Forward, o)
            .ids
            .is_empty()
    );
    assert!(record_locks(&sys, &t, &a).is_empty());
    assert!(insert_proceeds(&sys, &t, [15, 15, 15]));
    sys.rollback(a);
}

#[test]
fn a_descending_unique_search_still_reads_its_key_forward() {
    let sys = sys();
    let t = table(&sys);
    let rr = Isolation::RepeatableRead;
    let mut a = sys.begin(rr, false, 1, 1);
    let o = opts(ScanLockMode::Exclusive, rr, true);
    assert_eq!(
        scan_eq(&sys, &mut a, &t, PRIMARY, 20, Direction::Backward, o).ids,
        vec![20]
    );
    assert!(
        scan_eq(&sys, &mut a, &t, PRIMARY, 15, Direction::Backward, o)
            .ids
            .is_empty()
    );
    // The miss locks the gap 15 is in (before 20), not the one before 10.
    assert_eq!(
        record_locks(&sys, &t, &a),
        locks(&[
            ("PRIMARY", "X,GAP", "20"),
            ("PRIMARY", "X,REC_NOT_GAP", "20")
        ])
    );
    assert!(!insert_proceeds(&sys, &t, [15, 15, 15]));
    assert!(insert_proceeds(&sys, &t, [5, 5, 5]));
    sys.rollback(a);
}

#[test]
/// The clustered `>=` rule makes the lock on a delete-marked match record-only too; only a
/// UNIQUE secondary index's delete-marked entries get next-key locks (next test).
fn a_delete_marked_primary_match_is_locked_record_only_and_ends_the_search() {
    let sys = sys();
    let t = table(&sys);
    delete_committed(&sys, &t, 20);
    let rr = Isolation::RepeatableRead;
    let mut a = sys.begin(rr, false, 1, 1);
    let got = scan_eq(
        &sys,
        &mut a,
        &t,
        PRIMARY,
        20,
        Direction::Forward,
        opts(ScanLockMode::Exclusive, rr, true),
    );
    assert!(got.ids.is_empty());
    assert_eq!(got.stats.read_next, 0, "the record after 20 is not read");
    assert_eq!(
        record_locks(&sys, &t, &a),
        locks(&[("PRIMARY", "X,REC_NOT_GAP", "20")])
    );
    assert!(insert_proceeds(&sys, &t, [15, 15, 15]));
    assert!(insert_proceeds(&sys, &t, [25, 25, 25]));
    sys.rollback(a);

    // READ COMMITTED keeps no lock on a delete-marked record.
    let rc = Isolation::ReadCommitted;
    let mut a = sys.begin(rc, false, 1, 1);
    let got = scan_eq(
        &sys,
        &mut a,
        &t,
        PRIMARY,
        20,
        Direction::Forward,
        opts(ScanLockMode::Exclusive, rc, true),
    );
    assert!(got.ids.is_empty());
    assert_eq!(got.stats.read_next, 0);
    assert!(record_locks(&sys, &t, &a).is_empty());
    sys.rollback(a);
}

#[test]
fn a_unique_secondary_search_goes_past_delete_marked_entries_to_the_live_one() {
    let sys = sys();
    let t = table(&sys);
    // (20, 20) is delete-marked and (20, 25) is the live entry of u = 20.
    delete_committed(&sys, &t, 20);
    let mut w = sys.begin(Isolation::RepeatableRead, false, 3, 3);
    insert(&sys, &mut w, &t, [25, 20, 25], TIMEOUT).unwrap();
    sys.commit(w);
    let rr = Isolation::RepeatableRead;
    let mut a = sys.begin(rr, false, 1, 1);
    let o = opts(ScanLockMode::Exclusive, rr, true);
    assert_eq!(
        scan_eq(&sys, &mut a, &t, UK, 20, Direction::Forward, o).ids,
        vec![25]
    );
    assert_eq!(
        record_locks(&sys, &t, &a),
        locks(&[
            ("PRIMARY", "X,REC_NOT_GAP", "25"),
            ("uk", "X", "20, 20"),
            ("uk", "X,REC_NOT_GAP", "20, 25"),
        ]),
        "nothing on (30, 30): the live match ends the search"
    );
    sys.rollback(a);

    // Only a delete-marked entry: the search goes on to the next entry and locks its gap.
    delete_committed(&sys, &t, 25);
    let mut a = sys.begin(rr, false, 1, 1);
    assert!(scan_eq(&sys, &mut a, &t, UK, 20, Direction::Forward, o)
        .ids
        .is_empty());
    assert_eq!(
        record_locks(&sys, &t, &a),
        locks(&[
            ("uk", "X", "20, 20"),
            ("uk", "X", "20, 25"),
            ("uk", "X,GAP", "30, 30")
        ])
    );
    sys.rollback(a);
}

#[test]
fn a_non_unique_equality_still_locks_the_record_after_it() {
    let sys = sys();
    let t = table(&sys);
    let rr = Isolation::RepeatableRead;
    let mut a = sys.begin(rr, false, 1, 1);
    let o = opts(ScanLockMode::Exclusive, rr, false);
    assert_eq!(
        scan_eq(&sys, &mut a, &t, K, 20, Direction::Forward, o).ids,
        vec![20]
    );
    assert_eq!(
        record_locks(&sys, &t, &a),
        locks(&[
            ("PRIMARY", "X,REC_NOT_GAP", "20"),
            ("k_idx", "X", "20, 20"),
            ("k_idx", "X,GAP", "30, 30"),
        ])
    );
    assert!(
        !insert_proceeds(&sys, &t, [1, 1, 25]),
        "k 25 is in the locked gap"
    );
    sys.rollback(a);
}

#[test]
fn a_clustered_range_skips_the_gaps_outside_its_whole_key_bounds() {
    let sys = sys();
    let t = table(&sys);
    let rr = Isolation::RepeatableRead;
    let o = opts(ScanLockMode::Exclusive, rr, false);
    let cases: [(IdBound, IdBound, &[Expected<'_>]); 5] = [
        // id >= 20: the record equal to the bound record-only, the rest next-key.
        (
            Some((20, true)),
            None,
            &[
                ("PRIMARY", "X,REC_NOT_GAP", "20"),
                ("PRIMARY", "X", "30"),
                ("PRIMARY", "X", "supremum pseudo-record"),
            ],
        ),
        // id BETWEEN 10 AND 20: nothing past 20.
        (
            Some((10, true)),
            Some((20, true)),
            &[("PRIMARY", "X", "20"), ("PRIMARY", "X,REC_NOT_GAP", "10")],
        ),
        // id BETWEEN 10 AND 25: 25 is not there, so the gap before 30 is locked.
        (
            Some((10, true)),
            Some((25, true)),
            &[
                ("PRIMARY", "X", "20"),
                ("PRIMARY", "X,GAP", "30"),
                ("PRIMARY", "X,REC_NOT_GAP", "10"),
            ],
        ),
        // id > 10 AND id < 30: no bound record is in the range.
        (
            Some((10, false)),
            Some((30, false)),
            &[("PRIMARY", "X", "20"), ("PRIMARY", "X,GAP", "30")],
        ),
        // id <= 20 from the start of the index.
        (
            None,
            Some((20, true)),
            &[("PRIMARY", "X", "10"), ("PRIMARY", "X", "20")],
        ),
    ];
    for (lower, upper, want) in cases {
        let mut a = sys.begin(rr, false, 1, 1);
        let range = id_range(&t, lower, upper);
        scan(&sys, &mut a, &t, PRIMARY, range, Direction::Forward, o);
        assert_eq!(
            record_locks(&sys, &t, &a),
            locks(want),
            "{lower:?}..{upper:?}"
        );
        sys.rollback(a);
    }
    // With 20 locked as the upper bound, the gap after it takes inserts.
    let mut a = sys.begin(rr, false, 1, 1);
    let range = id_range(&t, Some((10, true)), Some((20, true)));
    assert_eq!(
        scan(&sys, &mut a, &t, PRIMARY, range, Direction::Forward, o).ids,
        vec![10, 20]
    );
    assert!(insert_proceeds(&sys, &t, [25, 25, 25]));
    assert!(!insert_proceeds(&sys, &t, [15, 15, 15]));
    assert!(insert_proceeds(&sys, &t, [5, 5, 5]));
    sys.rollback(a);
}
