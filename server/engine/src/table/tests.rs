//! Table tests: random insert/update/delete/get/range-scan sequences checked against a
//! `BTreeMap` model, with a non-unique and a unique secondary index on tiny pages.

use std::collections::BTreeMap;
use std::ops::Bound;

use proptest::prelude::*;

use super::*;
use crate::cursor::Direction;
use crate::scan::KeyRange;
use crate::schema::{Column, IndexDef, IndexKind, TableDef};
use crate::types::{ColumnType, IntKind};

const INT: ColumnType = ColumnType::Integer {
    kind: IntKind::Int,
    unsigned: false,
};

/// t(id INT PRIMARY KEY, k INT, u INT, c VARCHAR(8), KEY k_idx(k), UNIQUE KEY u_idx(u)).
fn table() -> Table {
    let def = TableDef::new(
        "t",
        vec![
            Column::new("id", INT),
            Column::new("k", INT),
            Column::new("u", INT),
            Column::new("c", ColumnType::VarChar(8)),
        ],
        vec![
            IndexDef::new("PRIMARY", IndexKind::Primary, vec![0]),
            IndexDef::new("k_idx", IndexKind::NonUnique, vec![1]),
            IndexDef::new("u_idx", IndexKind::Unique, vec![2]),
        ],
    )
    .unwrap();
    Table::new(def, PageCapacity { leaf: 4, inner: 4 })
}

type Row = (Option<i64>, Option<i64>, String);

fn to_values(id: i64, r: &Row) -> Vec<Value> {
    let opt = |v: Option<i64>| v.map_or(Value::Null, Value::Int);
    vec![Value::Int(id), opt(r.0), opt(r.1), Value::str(&r.2)]
}

fn pk(t: &Table, id: i64) -> Vec<u8> {
    t.encode_search_key(0, &[Value::Int(id)]).unwrap()
}

#[derive(Debug, Clone)]
enum Op {
    Insert(i64, Row),
    Update(i64, i64, Row),
    Delete(i64),
    Purge(i64),
    Get(i64),
    PkRange(i64, i64, bool),
    KRange(Option<i64>, i64, bool),
}

fn row() -> impl Strategy<Value = Row> {
    (
        proptest::option::weighted(0.8, 0i64..10),
        proptest::option::weighted(0.5, 0i64..40),
        "[a-c]{0,3}",
    )
}

fn op() -> impl Strategy<Value = Op> {
    let id = 0i64..60;
    prop_oneof![
        5 => (id.clone(), row()).prop_map(|(i, r)| Op::Insert(i, r)),
        3 => (id.clone(), prop_oneof![3 => Just(None), 1 => id.clone().prop_map(Some)], row())
            .prop_map(|(i, n, r)| Op::Update(i, n.unwrap_or(i), r)),
        2 => id.clone().prop_map(Op::Delete),
        1 => id.clone().prop_map(Op::Purge),
        2 => id.clone().prop_map(Op::Get),
        2 => (id.clone(), id, any::<bool>()).prop_map(|(a, b, f)| Op::PkRange(a.min(b), a.max(b), f)),
        2 => (proptest::option::of(0i64..10), 0i64..10, any::<bool>()).prop_map(|(a, b, f)| Op::KRange(a, b, f)),
    ]
}

/// Every live (key, primary key) entry of both secondary indexes, sorted.
fn secondary_entries(t: &Table) -> Vec<(usize, Vec<u8>, Vec<u8>)> {
    let mut got: Vec<_> = [1usize, 2]
        .into_iter()
        .flat_map(|index| {
            t.scan(index, KeyRange::all(), Direction::Forward)
                .map(move |i| (index, i.key.clone(), i.primary_key().to_vec()))
        })
        .collect();
    got.sort();
    got
}

/// The entries the model's rows should have: exactly one per row and secondary index.
fn model_entries(t: &Table, m: &BTreeMap<i64, Row>) -> Vec<(usize, Vec<u8>, Vec<u8>)> {
    let mut want: Vec<_> = [(1usize, 1usize), (2, 2)]
        .into_iter()
        .flat_map(|(index, col)| {
            m.iter().map(move |(id, r)| {
                let v = to_values(*id, r);
                let mut key = t.encode_search_key(index, &[v[col].clone()]).unwrap();
                let p = pk(t, *id);
                key.extend_from_slice(&p);
                (index, key, p)
            })
        })
        .collect();
    want.sort();
    want
}

fn unique_taken(m: &BTreeMap<i64, Row>, u: Option<i64>, except: i64) -> bool {
    u.is_some() && m.iter().any(|(id, r)| *id != except && r.1 == u)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]
    #[test]
    fn table_matches_model(ops in proptest::collection::vec(op(), 1..250)) {
        let t = table();
        let mut m: BTreeMap<i64, Row> = BTreeMap::new();
        let stamp = WriteStamp { trx_id: 9 };
        for op in ops {
            match op {
                Op::Insert(id, r) => {
                    let got = t.insert(to_values(id, &r), &InsertOptions { stamp, ..Default::default() });
                    if m.contains_key(&id) {
                        prop_assert_eq!(got.unwrap_err().message(1), format!("Duplicate entry '{id}' for key 't.PRIMARY'"));
                    } else if unique_taken(&m, r.1, id) {
                        prop_assert_eq!(got.unwrap_err().message(1), format!("Duplicate entry '{}' for key 't.u_idx'", r.1.unwrap()));
                    } else {
                        prop_assert_eq!(got.unwrap().primary_key, pk(&t, id));
                        m.insert(id, r);
                    }
                }
                Op::Update(id, new_id, r) => {
                    let got = t.update(&pk(&t, id), to_values(new_id, &r), stamp, &mut Vec::new());
                    match m.get(&id) {
                        None => prop_assert_eq!(got, Ok(UpdateOutcome::NotFound)),
                        Some(old) if new_id == id && *old == r => prop_assert_eq!(got, Ok(UpdateOutcome::Unchanged)),
                        Some(_) if new_id != id && m.contains_key(&new_id) => prop_assert_eq!(got.unwrap_err().code().code(), 1062),
                        Some(_) if unique_taken(&m, r.1, id) => prop_assert_eq!(got.unwrap_err().code().code(), 1062),
                        Some(_) => {
                            prop_assert_eq!(got, Ok(UpdateOutcome::Updated { primary_key: pk(&t, new_id) }));
                            m.remove(&id);
                            m.insert(new_id, r);
                        }
                    }
                }
                Op::Delete(id) => prop_assert_eq!(t.delete(&pk(&t, id), stamp, &mut Vec::new()), m.remove(&id).is_some()),
                Op::Purge(id) => {
                    let purged = t.purge(&pk(&t, id));
                    prop_assert!(!(purged && m.contains_key(&id)), "purged a live row");
                }
                Op::Get(id) => {
                    prop_assert_eq!(t.get(&pk(&t, id)), m.get(&id).map(|r| to_values(id, r)));
                }
                Op::PkRange(lo, hi, fwd) => {
                    let range = KeyRange { lower: Bound::Included(pk(&t, lo)), upper: Bound::Excluded(pk(&t, hi)) };
                    let dir = if fwd { Direction::Forward } else { Direction::Backward };
                    let got: Vec<Vec<Value>> = t.scan(0, range, dir)
                        .prefetch(3).map(|i| i.row.unwrap()).collect();
                    let mut want: Vec<Vec<Value>> = m.range(lo..hi).map(|(id, r)| to_values(*id, r)).collect();
                    if !fwd { want.reverse(); }
                    prop_assert_eq!(got, want);
                }
                Op::KRange(lo, hi, fwd) => {
                    // k >= lo (or k IS NULL ..) AND k <= hi, through k_idx, rows fetched.
                    let lower = match lo {
                        None => Bound::Unbounded,
                        Some(lo) => Bound::Included(t.encode_search_key(1, &[Value::Int(lo)]).unwrap()),
                    };
                    let upper = Bound::Included(t.encode_search_key(1, &[Value::Int(hi)]).unwrap());
                    let dir = if fwd { Direction::Forward } else { Direction::Backward };
                    let got: Vec<(Option<i64>, i64)> = t
                        .scan(1, KeyRange { lower, upper }, dir)
                        .fetch_rows(true)
                        .prefetch(if hi % 2 == 0 { 1 } else { 5 })
                        .map(|i| {
                            let row = i.row.unwrap();
                            let k = match row[1] { Value::Int(k) => Some(k), _ => None };
                            let Value::Int(id) = row[0] else { unreachable!() };
                            (k, id)
                        })
                        .collect();
                    let mut want: Vec<(Option<i64>, i64)> = m
                        .iter()
                        .map(|(id, r)| (r.0, *id))
                        .filter(|(k, _)| match lo { None => k.is_none_or(|k| k <= hi), Some(lo) => k.is_some_and(|k| k >= lo && k <= hi) })
                        .collect();
                    want.sort();
                    if !fwd { want.reverse(); }
                    prop_assert_eq!(got, want);
                }
            }
        }
        prop_assert_eq!(t.row_count(), m.len() as u64);
        prop_assert_eq!(secondary_entries(&t), model_entries(&t, &m));
    }
}

#[test]
fn auto_increment_and_hidden_primary() {
    let def = TableDef::new(
        "sbtest1",
        vec![
            Column::new("id", INT).not_null().auto_increment(),
            Column::new("k", INT)
                .not_null()
                .default_value(Value::Int(0)),
        ],
        vec![IndexDef::new("PRIMARY", IndexKind::Primary, vec![0])],
    )
    .unwrap();
    let t = Table::new(def, PageCapacity::default());
    let opts = InsertOptions::default();
    let row = |id: Value| t.def().fill_row(vec![(0, id)], Default::default()).unwrap();
    assert_eq!(
        t.insert(row(Value::Null), &opts)
            .unwrap()
            .generated_auto_increment,
        Some(1)
    );
    assert_eq!(
        t.insert(row(Value::Int(0)), &opts)
            .unwrap()
            .generated_auto_increment,
        Some(2)
    );
    assert_eq!(
        t.insert(row(Value::Int(10)), &opts)
            .unwrap()
            .generated_auto_increment,
        None
    );
    assert_eq!(
        t.insert(row(Value::Null), &opts)
            .unwrap()
            .generated_auto_increment,
        Some(11)
    );
    let strict_zero = InsertOptions {
        no_auto_value_on_zero: true,
        ..opts
    };
    assert_eq!(
        t.insert(row(Value::Int(0)), &strict_zero)
            .unwrap()
            .generated_auto_increment,
        None
    );
    assert!(t
        .get(&t.encode_search_key(0, &[Value::Int(0)]).unwrap())
        .is_some());
    assert_eq!(
        t.insert(row(Value::Int(10)), &opts).unwrap_err().message(1),
        "Duplicate entry '10' for key 'sbtest1.PRIMARY'"
    );
    assert_eq!(t.row_count(), 5);
    // A row another column refuses (text that is not a number, NULL into NOT NULL) uses no
    // value: the next row gets 12.
    for bad in [Value::str("many"), Value::Null] {
        let mut r = row(Value::Null);
        r[1] = bad;
        assert!(t.insert(r, &opts).is_err());
    }
    assert_eq!(
        t.insert(row(Value::Null), &opts)
            .unwrap()
            .generated_auto_increment,
        Some(12)
    );
    assert_eq!(t.row_count(), 6);
    t.truncate();
    assert_eq!(t.row_count(), 0);
    assert_eq!(
        t.insert(row(Value::Null), &opts)
            .unwrap()
            .generated_auto_increment,
        Some(1)
    );

    let def = TableDef::new(
        "h",
        vec![Column::new("a", INT)],
        vec![IndexDef::new("a", IndexKind::NonUnique, vec![0])],
    )
    .unwrap();
    let h = Table::new(def, PageCapacity::default());
    let a = h.insert(vec![Value::Int(5)], &opts).unwrap();
    let b = h.insert(vec![Value::Int(5)], &opts).unwrap();
    assert_eq!(a.primary_key.len(), ROW_ID_LEN);
    assert!(a.primary_key < b.primary_key);
    let keys: Vec<Vec<Value>> = h
        .scan(1, KeyRange::all(), Direction::Forward)
        .map(|i| h.decode_index_key(1, &i.key))
        .collect();
    assert_eq!(
        keys,
        vec![
            vec![Value::Int(5), Value::UInt(1)],
            vec![Value::Int(5), Value::UInt(2)]
        ]
    );
}

#[test]
fn strict_mode_errors() {
    let t = table();
    let opts = InsertOptions::default();
    let e = t
        .insert(
            vec![
                Value::Int(1),
                Value::Int(1 << 40),
                Value::Null,
                Value::str(""),
            ],
            &opts,
        )
        .unwrap_err();
    assert_eq!((e.code().code(), e.code().sql_state()), (1264, "22003"));
    let e = t
        .insert(
            vec![
                Value::Int(1),
                Value::Null,
                Value::Null,
                Value::str("abcdefghi"),
            ],
            &opts,
        )
        .unwrap_err();
    assert_eq!((e.code().code(), e.code().sql_state()), (1406, "22001"));
    let e = t
        .insert(
            vec![Value::Null, Value::Null, Value::Null, Value::str("")],
            &opts,
        )
        .unwrap_err();
    assert_eq!(e.message(1), "Column 'id' cannot be null");
    assert_eq!(t.row_count(), 0);
}

#[test]
fn delete_marked_records_and_purge() {
    let t = table();
    let opts = InsertOptions {
        stamp: WriteStamp { trx_id: 5 },
        ..Default::default()
    };
    let r = |k: i64| vec![Value::Int(1), Value::Int(k), Value::Null, Value::str("x")];
    let p = t.insert(r(3), &opts).unwrap().primary_key;
    assert!(t.delete(&p, WriteStamp { trx_id: 6 }, &mut Vec::new()));
    let v = t.get_record(&p).unwrap();
    assert_eq!((v.delete_mark, v.trx_id), (true, 6));
    assert_ne!(
        v.roll_ptr, 0,
        "the delete keeps the live version for consistent reads"
    );
    let all: Vec<bool> = t
        .scan(1, KeyRange::all(), Direction::Forward)
        .include_delete_marked(true)
        .map(|i| i.delete_mark)
        .collect();
    assert_eq!(all, vec![true]);
    // Re-insert of the equal key reuses both records in place, clearing the marks.
    t.insert(r(3), &opts).unwrap();
    let all: Vec<bool> = t
        .scan(1, KeyRange::all(), Direction::Forward)
        .include_delete_marked(true)
        .map(|i| i.delete_mark)
        .collect();
    assert_eq!(all, vec![false]);
    // Changing k leaves a delete-marked old entry for purge.
    t.update(&p, r(4), WriteStamp::default(), &mut Vec::new())
        .unwrap();
    let marked: Vec<Vec<u8>> = t
        .scan(1, KeyRange::all(), Direction::Forward)
        .include_delete_marked(true)
        .filter(|i| i.delete_mark)
        .map(|i| i.key)
        .collect();
    assert_eq!(marked.len(), 1);
    assert!(t.purge_secondary(1, &marked[0]));
    assert!(!t.purge(&p), "a live row is not purged");
    assert!(t.delete(&p, WriteStamp::default(), &mut Vec::new()));
    assert!(t.purge(&p));
    assert_eq!(
        t.scan(1, KeyRange::all(), Direction::Forward)
            .include_delete_marked(true)
            .count(),
        0
    );
    assert!(t.get_record(&p).is_none());
}

/// Four writers insert, update (indexed and non-indexed columns, and primary keys inside
/// their own id range) and delete concurrently, splitting pages of all three indexes, while
/// a reader scans the secondary index with row fetches (saving and restoring between rows).
/// Afterwards the table equals the union of the writers' models, and each secondary index
/// holds exactly one live entry per row.
#[test]
fn concurrent_writers_keep_indexes_consistent() {
    let t = std::sync::Arc::new(table());
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let writers: Vec<_> = (0..4i64)
        .map(|th| {
            let t = t.clone();
            std::thread::spawn(move || {
                let mut m: BTreeMap<i64, Row> = BTreeMap::new();
                let mut x = (th as u64 + 1) * 0x9E37_79B9;
                let mut rnd = |n: u64| {
                    x ^= x << 13;
                    x ^= x >> 7;
                    x ^= x << 17;
                    (x % n) as i64
                };
                let stamp = WriteStamp {
                    trx_id: th as u64 + 1,
                };
                for _ in 0..6000 {
                    let id = th * 1000 + rnd(300);
                    // u is unique per id, so writers never collide on it.
                    let r: Row = (Some(rnd(20)), Some(id * 10 + rnd(3)), "abc".to_string());
                    match rnd(4) {
                        0 | 1 => {
                            if t.insert(
                                to_values(id, &r),
                                &InsertOptions {
                                    stamp,
                                    ..Default::default()
                                },
                            )
                            .is_ok()
                            {
                                assert!(m.insert(id, r).is_none());
                            }
                        }
                        2 => {
                            let new_id = if rnd(4) == 0 {
                                th * 1000 + rnd(300)
                            } else {
                                id
                            };
                            let r = (r.0, Some(new_id * 10), r.2);
                            if let Ok(UpdateOutcome::Updated { .. }) =
                                t.update(&pk(&t, id), to_values(new_id, &r), stamp, &mut Vec::new())
                            {
                                m.remove(&id);
                                m.insert(new_id, r);
                            }
                        }
                        _ => {
                            if t.delete(&pk(&t, id), stamp, &mut Vec::new()) {
                                m.remove(&id);
                            }
                        }
                    }
                }
                m
            })
        })
        .collect();
    let reader = {
        let (t, stop) = (t.clone(), stop.clone());
        std::thread::spawn(move || {
            let mut scans = 0;
            while !stop.load(std::sync::atomic::Ordering::Relaxed) || scans == 0 {
                let mut prev: Option<Vec<u8>> = None;
                for item in t
                    .scan(1, KeyRange::all(), Direction::Forward)
                    .fetch_rows(true)
                    .prefetch(8)
                {
                    assert!(
                        prev.as_ref().is_none_or(|p| *p < item.key),
                        "secondary scan out of order"
                    );
                    prev = Some(item.key);
                }
                scans += 1;
            }
            scans
        })
    };
    let mut m = BTreeMap::new();
    for w in writers {
        m.extend(w.join().unwrap());
    }
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    assert!(reader.join().unwrap() > 0);
    let rows: Vec<Vec<Value>> = t
        .scan(0, KeyRange::all(), Direction::Forward)
        .map(|i| i.row.unwrap())
        .collect();
    let want: Vec<Vec<Value>> = m.iter().map(|(id, r)| to_values(*id, r)).collect();
    assert_eq!(rows, want);
    assert_eq!(t.row_count(), m.len() as u64);
    assert_eq!(secondary_entries(&t), model_entries(&t, &m));
    assert!(
        t.index_stats(1)
            .page_splits
            .load(std::sync::atomic::Ordering::Relaxed)
            > 10
    );
}

/// The queue schema v2 shape: `PRIMARY KEY (status, run_at, id), KEY idx_id (id)`. A claim
/// scan is an equality prefix on `status` in (run_at, id) order; finishing a job changes a
/// primary-key column (delete-mark + insert in both indexes).
#[test]
fn composite_primary_key_queue_shape() {
    let tiny = ColumnType::Integer {
        kind: IntKind::Tiny,
        unsigned: false,
    };
    let big = ColumnType::Integer {
        kind: IntKind::Big,
        unsigned: true,
    };
    let def = TableDef::new(
        "q_v2",
        vec![
            Column::new("id", big).not_null().auto_increment(),
            Column::new("status", tiny)
                .not_null()
                .default_value(Value::Int(0)),
            Column::new("run_at", ColumnType::DateTime { fsp: 0 }).not_null(),
        ],
        vec![
            IndexDef::new("PRIMARY", IndexKind::Primary, vec![1, 2, 0]),
            IndexDef::new("idx_id", IndexKind::NonUnique, vec![0]),
        ],
    )
    .unwrap();
    let t = Table::new(def, PageCapacity { leaf: 4, inner: 4 });
    let at = |sec: u8| Value::str(&format!("2026-01-01 00:00:{sec:02}"));
    for i in 0..40u8 {
        // Ids ascend while run_at descends within each status, so the orders differ.
        let row = vec![Value::Null, Value::Int(i64::from(i % 2)), at(59 - i)];
        t.insert(row, &InsertOptions::default()).unwrap();
    }
    let ready = KeyRange::prefix(t.encode_search_key(0, &[Value::Int(0)]).unwrap());
    let claim: Vec<Vec<Value>> = t
        .scan(0, ready.clone(), Direction::Forward)
        .take(10)
        .map(|i| i.row.unwrap())
        .collect();
    let ids: Vec<Value> = claim.iter().map(|r| r[0].clone()).collect();
    let want: Vec<Value> = (0..10u64).map(|j| Value::UInt(39 - 2 * j)).collect();
    assert_eq!(
        ids, want,
        "status=0 in run_at order: the newest ids have the earliest run_at"
    );
    // Finish job 39: status 0 -> 2 moves it to another part of the clustered index.
    let pk39 = t.primary_key_of(&claim[0]).unwrap();
    let mut done = claim[0].clone();
    done[1] = Value::Int(2);
    let UpdateOutcome::Updated { primary_key } = t
        .update(&pk39, done, WriteStamp::default(), &mut Vec::new())
        .unwrap()
    else {
        panic!("not updated")
    };
    assert_ne!(primary_key, pk39);
    assert_eq!(t.scan(0, ready, Direction::Forward).count(), 19);
    // idx_id finds the row's new clustered key.
    let by_id = KeyRange::prefix(t.encode_search_key(1, &[Value::UInt(39)]).unwrap());
    let found: Vec<Vec<u8>> = t
        .scan(1, by_id, Direction::Forward)
        .map(|i| i.primary_key().to_vec())
        .collect();
    assert_eq!(found, vec![primary_key.clone()]);
    assert_eq!(t.get(&primary_key).unwrap()[1], Value::Int(2));
    // Id 39 was row i = 38, so its run_at is second 59 - 38.
    let run_at = ColumnType::DateTime { fsp: 0 }
        .coerce(at(21), "run_at")
        .unwrap();
    assert_eq!(
        t.decode_index_key(0, &primary_key),
        vec![Value::Int(2), run_at, Value::UInt(39)]
    );
    assert_eq!(t.row_count(), 40);
}

/// (index, key, delete mark, row) of every record.
type Snapshot = Vec<(usize, Vec<u8>, bool, Option<Vec<Value>>)>;

/// Everything of a table an insert could touch: all records of all indexes, delete-marked
/// ones included, with their marks.
fn snapshot(t: &Table) -> Snapshot {
    (0..t.index_count())
        .flat_map(|i| {
            t.scan(i, KeyRange::all(), Direction::Forward)
                .include_delete_marked(true)
                .map(move |it| (i, it.key, it.delete_mark, it.row))
        })
        .collect()
}

/// The insert hook sees, per index, the new key and its successor (None = supremum); a
/// failing hook leaves no trace, also when the insert was reusing a delete-marked record.
#[test]
fn insert_check_sees_successors_and_failure_leaves_no_trace() {
    let t = table();
    let opts = InsertOptions::default();
    let r = |id: i64, k: Option<i64>, u: Option<i64>| to_values(id, &(k, u, String::new()));
    t.insert(r(10, Some(1), Some(1)), &opts).unwrap();
    t.insert(r(20, Some(3), Some(2)), &opts).unwrap();
    let mut seen: Vec<(usize, Vec<u8>, Option<Vec<u8>>)> = Vec::new();
    t.insert_checked(
        r(15, Some(2), None),
        &opts,
        |p| {
            seen.push((p.index, p.key.to_vec(), p.successor.map(<[u8]>::to_vec)));
            Ok::<(), EngineError>(())
        },
        &mut Vec::new(),
    )
    .unwrap();
    let sec = |index: usize, v: Option<i64>, id: i64| {
        let mut k = t
            .encode_search_key(index, &[v.map_or(Value::Null, Value::Int)])
            .unwrap();
        k.extend_from_slice(&pk(&t, id));
        k
    };
    assert_eq!(
        seen,
        vec![
            (0, pk(&t, 15), Some(pk(&t, 20))),
            (1, sec(1, Some(2), 15), Some(sec(1, Some(3), 20))),
            (2, sec(2, None, 15), Some(sec(2, Some(1), 10))),
        ]
    );
    // A check with no successor reports the supremum.
    let mut last = None;
    t.insert_checked(
        r(30, Some(9), Some(9)),
        &opts,
        |p| {
            if p.kind == ProbeKind::Gap {
                last = Some(p.successor.is_none());
            }
            Ok::<(), EngineError>(())
        },
        &mut Vec::new(),
    )
    .unwrap();
    assert_eq!(last, Some(true));

    let before = snapshot(&t);
    let refuse_on = |index: usize| {
        move |p: InsertProbe<'_>| {
            if p.index == index {
                Err(EngineError::AutoIncrementExhausted)
            } else {
                Ok(())
            }
        }
    };
    assert!(t
        .insert_checked(
            r(16, Some(2), Some(7)),
            &opts,
            refuse_on(2),
            &mut Vec::new()
        )
        .is_err());
    assert_eq!(snapshot(&t), before);
    assert_eq!(t.row_count(), 4);
    // Re-insert over a delete-marked row (reusing its clustered and k_idx records), refused
    // at u_idx: the old clustered record and the k_idx mark come back.
    assert!(t.delete(&pk(&t, 20), WriteStamp::default(), &mut Vec::new()));
    let before = snapshot(&t);
    assert!(t
        .insert_checked(
            r(20, Some(3), Some(5)),
            &opts,
            refuse_on(2),
            &mut Vec::new()
        )
        .is_err());
    assert_eq!(snapshot(&t), before);
    assert!(t.get(&pk(&t, 20)).is_none());
    assert_eq!(t.row_count(), 3);
}

#[test]
fn read_ahead_counts_handler_reads_per_row_handed_out() {
    let t = table();
    for id in 0..100 {
        t.insert(
            to_values(id, &(Some(id), None, String::new())),
            &InsertOptions::default(),
        )
        .unwrap();
    }
    let all = || KeyRange {
        lower: Bound::Included(pk(&t, 0)),
        upper: Bound::Unbounded,
    };
    // Stopped after 10 rows (a LIMIT): the records read ahead are not counted.
    let mut scan = t.scan(0, all(), Direction::Forward).prefetch(64);
    assert_eq!(scan.by_ref().take(10).count(), 10);
    assert_eq!((scan.stats().read_key, scan.stats().read_next), (1, 9));
    assert!(scan.stats().records_visited > 10, "{:?}", scan.stats());
    // Drained: one step per row after the first, and the step off the end.
    let rest = scan.by_ref().count();
    assert_eq!(rest, 90);
    assert_eq!(scan.stats().read_next, 100);
    // The same totals without read-ahead, backwards too.
    let mut scan = t.scan(0, all(), Direction::Backward);
    assert_eq!(scan.by_ref().count(), 100);
    assert_eq!((scan.stats().read_key, scan.stats().read_prev), (1, 100));
}

#[test]
fn the_rows_a_table_frees_are_its_records_rows() {
    let t = table();
    assert_eq!(t.row_bytes(), 0);
    let opts = InsertOptions {
        stamp: WriteStamp { trx_id: 5 },
        ..Default::default()
    };
    let r = |id: i64, c: &str| vec![Value::Int(id), Value::Int(id), Value::Null, Value::str(c)];
    let len = |c: &str| t.codec().encode(&r(0, c)).len() as u64;
    // Enough rows for several leaves of the tiny test pages.
    let mut expected = 0;
    for id in 0..40 {
        let c = ["", "a", "abc", "abcdefgh"][id as usize % 4];
        t.insert(r(id, c), &opts).unwrap();
        expected += len(c);
    }
    assert_eq!(t.row_bytes(), expected);
    // A delete-mark leaves the row's bytes in the record, the table's to free, and saves a
    // version with none of its own.
    assert!(t.delete(&pk(&t, 3), WriteStamp { trx_id: 6 }, &mut Vec::new()));
    assert_eq!(t.row_bytes(), expected);
    assert_eq!(t.versions().len(), 1);
}

#[test]
fn a_delete_keeps_no_copy_of_the_row_and_rolls_back_in_place() {
    let t = table();
    let opts = InsertOptions {
        stamp: WriteStamp { trx_id: 5 },
        ..Default::default()
    };
    let row = vec![Value::Int(1), Value::Int(7), Value::Null, Value::str("abc")];
    let p = t.insert(row.clone(), &opts).unwrap().primary_key;
    let mut log = Vec::new();
    assert!(t.delete(&p, WriteStamp { trx_id: 6 }, &mut log));
    let rec = t.get_record(&p).unwrap();
    assert_eq!((rec.delete_mark, rec.trx_id), (true, 6));
    let saved = t.versions().get(rec.roll_ptr).unwrap();
    assert_eq!(saved.row, None, "the version shares the record's bytes");
    assert_eq!((saved.trx_id, saved.delete_mark), (5, false));
    // A view from before the delete reads the row through that version.
    let before = crate::mvcc::ReadView {
        up_limit_id: 6,
        low_limit_id: 7,
        low_limit_no: 7,
        active: vec![6],
        creator: 0,
    };
    assert_eq!(
        t.get_visible(&p, &[0, 1, 3], &before, 0),
        Some(vec![row[0].clone(), row[1].clone(), row[3].clone()])
    );
    // Both secondary entries were marked, and the rollback clears every mark in place.
    assert_eq!(log.len(), 1);
    assert_eq!(log[0].secondary.len(), 2);
    t.rollback(&log[0]);
    let rec = t.get_record(&p).unwrap();
    assert_eq!((rec.delete_mark, rec.trx_id, rec.roll_ptr), (false, 5, 0));
    assert_eq!(rec.row, row);
    assert!(t.versions().is_empty());
    assert_eq!(t.row_count(), 1);
}
