//! Single-threaded tests of the lock system: InnoDB's rules case by case, introspection, and
//! a proptest of request/release sequences against a simple model.

use std::collections::HashMap;

use proptest::prelude::*;

use super::compat::tests::model_wait;
use super::introspect::SUPREMUM_LOCK_DATA;
use super::*;

pub(crate) struct Names;

impl LockNames for Names {
    fn table(&self, t: TableId) -> Option<(String, String)> {
        Some(("test".into(), format!("t{}", t.0)))
    }
    fn index(&self, i: IndexId) -> Option<(String, String, String)> {
        Some(("test".into(), "t1".into(), format!("ix{}", i.0)))
    }
    fn lock_data(&self, _: IndexId, key: &[u8]) -> String {
        u64::from_be_bytes(key.try_into().expect("8-byte test keys")).to_string()
    }
}

pub(crate) fn key(n: u64) -> [u8; 8] {
    n.to_be_bytes()
}

pub(crate) fn at(k: &[u8]) -> RecAt<'_> {
    RecAt {
        index: IndexId(1),
        key: RecKey::User(k),
        page: 7,
    }
}

pub(crate) const SUP: RecAt<'static> = RecAt {
    index: IndexId(1),
    key: RecKey::Supremum,
    page: 7,
};

fn sys() -> LockSys {
    LockSys::new(LockConfig {
        shards: 8,
        ..LockConfig::default()
    })
}

/// (trx, LOCK_DATA, LOCK_MODE, LOCK_STATUS) of every record lock, sorted.
fn rec_rows(s: &LockSys) -> Vec<(TrxId, String, &'static str, &'static str)> {
    let mut v: Vec<_> = s
        .data_locks(&Names)
        .into_iter()
        .filter(|r| r.lock_type == "RECORD")
        .map(|r| {
            (
                r.engine_transaction_id,
                r.lock_data.unwrap_or_default(),
                r.lock_mode,
                r.lock_status,
            )
        })
        .collect();
    v.sort();
    v
}

fn granted(r: Result<Acquired, LockError>) {
    assert!(matches!(r, Ok(Acquired::Granted)), "{r:?}");
}

#[test]
fn grant_cover_and_conflict() {
    let s = sys();
    let a = s.begin_trx(1, 101, 11);
    let b = s.begin_trx(2, 102, 12);
    let k = key(10);
    granted(s.lock_rec(&a, at(&k), RecLockMode::X, WaitPolicy::Wait));
    // Covered: no second struct.
    granted(s.lock_rec(&a, at(&k), RecLockMode::S_REC_NOT_GAP, WaitPolicy::Wait));
    granted(s.lock_rec(&a, at(&k), RecLockMode::X_GAP, WaitPolicy::Wait));
    assert_eq!(rec_rows(&s), vec![(1, "10".into(), "X", "GRANTED")]);
    assert_eq!(
        s.lock_rec(&b, at(&k), RecLockMode::X_REC_NOT_GAP, WaitPolicy::NoWait)
            .unwrap_err(),
        LockError::NoWait
    );
    assert!(matches!(
        s.lock_rec(&b, at(&k), RecLockMode::S, WaitPolicy::SkipLocked),
        Ok(Acquired::Skipped)
    ));
    // Gaps never wait, even for a next-key X.
    granted(s.lock_rec(&b, at(&k), RecLockMode::X_GAP, WaitPolicy::NoWait));
    assert_eq!(rec_rows(&s).len(), 2);
    let rows = s.data_locks(&Names);
    assert_eq!(rows[0].engine, "INNODB");
    assert_eq!(rows[0].index_name.as_deref(), Some("ix1"));
    s.release_all(&a);
    s.release_all(&b);
    assert!(s.data_locks(&Names).is_empty());
}

#[test]
fn insert_intention_waits_for_gaps_and_blocks_nobody() {
    let s = sys();
    let a = s.begin_trx(1, 101, 11);
    let b = s.begin_trx(2, 102, 12);
    let k = key(15);
    // No gap lock: the insert intention creates no struct.
    granted(s.lock_rec(&b, at(&k), RecLockMode::INSERT_INTENTION, WaitPolicy::Wait));
    assert!(rec_rows(&s).is_empty());
    granted(s.lock_rec(&a, at(&k), RecLockMode::S_GAP, WaitPolicy::Wait));
    let w = match s.lock_rec(&b, at(&k), RecLockMode::INSERT_INTENTION, WaitPolicy::Wait) {
        Ok(Acquired::Wait(w)) => w,
        r => panic!("{r:?}"),
    };
    assert_eq!(
        rec_rows(&s),
        vec![
            (1, "15".into(), "S,GAP", "GRANTED"),
            (2, "15".into(), "X,GAP,INSERT_INTENTION", "WAITING"),
        ]
    );
    let waits = s.data_lock_waits();
    assert_eq!(waits.len(), 1);
    assert_eq!(waits[0].requesting_engine_transaction_id, 2);
    assert_eq!(waits[0].blocking_engine_transaction_id, 1);
    assert_eq!(waits[0].blocking_thread_id, 101);
    let info = s.trx_lock_info(&b);
    assert!(info.requested_lock_id.is_some());
    assert_eq!(info.schedule_weight.map(|w| w >= 1), Some(true));
    s.release_all(&a);
    w.wait(std::time::Duration::from_secs(5)).expect("granted");
    assert_eq!(
        rec_rows(&s),
        vec![(2, "15".into(), "X,GAP,INSERT_INTENTION", "GRANTED")]
    );
    // Nobody waits for an insert intention.
    let c = s.begin_trx(3, 103, 13);
    granted(s.lock_rec(&c, at(&k), RecLockMode::X, WaitPolicy::NoWait));
    s.release_all(&b);
    s.release_all(&c);
}

#[test]
fn supremum_is_a_gap() {
    let s = sys();
    let a = s.begin_trx(1, 101, 11);
    let b = s.begin_trx(2, 102, 12);
    granted(s.lock_rec(&a, SUP, RecLockMode::X_GAP, WaitPolicy::Wait));
    granted(s.lock_rec(&b, SUP, RecLockMode::X, WaitPolicy::NoWait));
    assert_eq!(
        rec_rows(&s),
        vec![
            (1, SUPREMUM_LOCK_DATA.into(), "X", "GRANTED"),
            (2, SUPREMUM_LOCK_DATA.into(), "X", "GRANTED"),
        ]
    );
    let c = s.begin_trx(3, 103, 13);
    assert_eq!(
        s.lock_rec(&c, SUP, RecLockMode::INSERT_INTENTION, WaitPolicy::NoWait)
            .unwrap_err(),
        LockError::NoWait
    );
    let w = match s.lock_rec(&c, SUP, RecLockMode::INSERT_INTENTION, WaitPolicy::Wait) {
        Ok(Acquired::Wait(w)) => w,
        r => panic!("{r:?}"),
    };
    assert!(rec_rows(&s).contains(&(
        3,
        SUPREMUM_LOCK_DATA.into(),
        "X,INSERT_INTENTION",
        "WAITING"
    )));
    drop(w);
    // A dropped wait is withdrawn.
    assert_eq!(rec_rows(&s).len(), 2);
    for t in [&a, &b, &c] {
        s.release_all(t);
    }
}

#[test]
fn implicit_lock_conversion() {
    let s = sys();
    let inserter = s.begin_trx(5, 105, 15);
    let b = s.begin_trx(6, 106, 16);
    let k = key(42);
    assert!(rec_rows(&s).is_empty());
    assert!(s.convert_implicit(5, at(&k)));
    assert!(s.convert_implicit(5, at(&k)), "idempotent");
    assert_eq!(
        rec_rows(&s),
        vec![(5, "42".into(), "X,REC_NOT_GAP", "GRANTED")]
    );
    assert!(matches!(
        s.lock_rec(
            &b,
            at(&k),
            RecLockMode::X_REC_NOT_GAP,
            WaitPolicy::SkipLocked
        ),
        Ok(Acquired::Skipped)
    ));
    s.release_all(&inserter);
    // A committed (unregistered) holder has no implicit lock any more.
    assert!(!s.convert_implicit(5, at(&k)));
    granted(s.lock_rec(&b, at(&k), RecLockMode::X_REC_NOT_GAP, WaitPolicy::NoWait));
    s.release_all(&b);
}

#[test]
fn gap_inheritance_on_insert_and_removal() {
    let s = sys();
    let a = s.begin_trx(1, 101, 11);
    let rc = s.begin_trx(2, 102, 12);
    rc.set_read_committed(true);
    let (k10, k15, k20, k30) = (key(10), key(15), key(20), key(30));
    granted(s.lock_rec(&a, at(&k20), RecLockMode::X, WaitPolicy::Wait));
    granted(s.lock_rec(&a, at(&k30), RecLockMode::S_REC_NOT_GAP, WaitPolicy::Wait));
    // Insert of 15 before 20: 15 inherits A's next-key on 20 as a gap lock.
    s.inherit_gap_locks(
        IndexId(1),
        RecKey::User(&k20),
        RecKey::User(&k15),
        7,
        Inherit::Insert,
    );
    // Insert of 25 before 30: a record-only lock is not a gap lock; nothing inherited.
    let k25 = key(25);
    s.inherit_gap_locks(
        IndexId(1),
        RecKey::User(&k30),
        RecKey::User(&k25),
        7,
        Inherit::Insert,
    );
    assert_eq!(
        rec_rows(&s),
        vec![
            (1, "15".into(), "X,GAP", "GRANTED"),
            (1, "20".into(), "X", "GRANTED"),
            (1, "30".into(), "S,REC_NOT_GAP", "GRANTED"),
        ]
    );
    // Purge of 30: A's (RR) lock moves to the supremum as a gap lock.
    s.inherit_gap_locks(
        IndexId(1),
        RecKey::User(&k30),
        RecKey::Supremum,
        7,
        Inherit::Removal,
    );
    // Purge of 10 locked X by an RC transaction: not inherited.
    granted(s.lock_rec(&rc, at(&k10), RecLockMode::X_REC_NOT_GAP, WaitPolicy::Wait));
    s.inherit_gap_locks(
        IndexId(1),
        RecKey::User(&k10),
        RecKey::User(&k15),
        7,
        Inherit::Removal,
    );
    assert_eq!(
        rec_rows(&s),
        vec![
            (1, "15".into(), "X,GAP", "GRANTED"),
            (1, "20".into(), "X", "GRANTED"),
            (1, SUPREMUM_LOCK_DATA.into(), "S", "GRANTED"),
        ]
    );
    assert_eq!(s.trx_lock_info(&rc).rows_locked, 0);
    assert_eq!(s.trx_lock_info(&a).rows_locked, 3);
    s.release_all(&a);
    s.release_all(&rc);
}

#[test]
fn a_waiting_next_key_lock_is_inherited_as_a_granted_gap() {
    let s = sys();
    let a = s.begin_trx(1, 101, 11);
    let b = s.begin_trx(2, 102, 12);
    let (k15, k20) = (key(15), key(20));
    granted(s.lock_rec(&a, at(&k20), RecLockMode::X_REC_NOT_GAP, WaitPolicy::Wait));
    let w = match s.lock_rec(&b, at(&k20), RecLockMode::X, WaitPolicy::Wait) {
        Ok(Acquired::Wait(w)) => w,
        r => panic!("{r:?}"),
    };
    s.inherit_gap_locks(
        IndexId(1),
        RecKey::User(&k20),
        RecKey::User(&k15),
        7,
        Inherit::Insert,
    );
    assert_eq!(
        rec_rows(&s),
        vec![
            (1, "20".into(), "X,REC_NOT_GAP", "GRANTED"),
            (2, "15".into(), "X,GAP", "GRANTED"),
            (2, "20".into(), "X", "WAITING"),
        ]
    );
    drop(w);
    s.release_all(&a);
    s.release_all(&b);
    assert!(rec_rows(&s).is_empty());
}

/// A hint decides SKIP LOCKED and NOWAIT only while its owner provably holds the lock: an
/// early release (READ COMMITTED's unlock) or the owner's end makes it stale, and a stale or
/// non-conflicting hint falls through to the lock table.
#[test]
fn lock_hints_decide_only_while_the_lock_is_held() {
    let s = sys();
    let mut owners = HintOwners::default();
    let (k1, k2) = (key(1), key(2));
    let (h1, h2) = (LockHint::default(), LockHint::default());
    let a = s.begin_trx(1, 101, 11);
    let b = s.begin_trx(2, 102, 12);
    let x = RecLockMode::X;
    let skip = WaitPolicy::SkipLocked;
    let lock = |t: &LockTrx, k: &[u8], h: &LockHint, m, p, o: &mut HintOwners| {
        s.lock_rec_hinted(t, at(k), m, p, h, o)
    };
    assert!(matches!(
        lock(&a, &k1, &h1, x, skip, &mut owners),
        Ok((Acquired::Granted, true))
    ));
    assert!(matches!(
        lock(&a, &k2, &h2, RecLockMode::S, skip, &mut owners),
        Ok((Acquired::Granted, true))
    ));
    assert!(format!("{h1:?}").contains("LockHint(1, "), "{h1:?}");
    // Conflicts the hints prove; S on S is no conflict and is granted by the lock table.
    assert!(matches!(
        lock(&b, &k1, &h1, x, skip, &mut owners),
        Ok((Acquired::Skipped, false))
    ));
    assert_eq!(
        lock(&b, &k1, &h1, x, WaitPolicy::NoWait, &mut owners).unwrap_err(),
        LockError::NoWait
    );
    assert!(matches!(
        lock(&b, &k2, &h2, RecLockMode::S, skip, &mut owners),
        Ok((Acquired::Granted, true))
    ));
    // B's S lock now heads k2's hint; A's X request on k2 must see B's lock.
    assert!(matches!(
        lock(&a, &k2, &h2, x, skip, &mut owners),
        Ok((Acquired::Skipped, false))
    ));
    // An early release by A makes every hint of A's stale: k1 is free for B.
    assert!(s.release_rec(&a, at(&k1), x));
    assert!(matches!(
        lock(&b, &k1, &h1, x, skip, &mut owners),
        Ok((Acquired::Granted, true))
    ));
    // B's end: its hints prove nothing, and A gets k2 (A's own S lock is still held).
    s.release_all(&b);
    assert!(matches!(
        lock(&a, &k2, &h2, x, skip, &mut owners),
        Ok((Acquired::Granted, true))
    ));
    let c = s.begin_trx(3, 103, 13);
    assert!(matches!(
        lock(&c, &k2, &h2, x, skip, &mut owners),
        Ok((Acquired::Skipped, false))
    ));
    s.release_all(&a);
    assert!(matches!(
        lock(&c, &k2, &h2, x, skip, &mut owners),
        Ok((Acquired::Granted, true))
    ));
    s.release_all(&c);
    assert!(rec_rows(&s).is_empty());
}

#[test]
fn release_rec_and_counts() {
    let s = sys();
    let a = s.begin_trx(1, 101, 11);
    let b = s.begin_trx(2, 102, 12);
    granted(s.lock_table(&a, TableId(3), TableLockMode::IX));
    let (k1, k2, k3) = (key(1), key(2), key(3));
    granted(s.lock_rec(&a, at(&k1), RecLockMode::X_REC_NOT_GAP, WaitPolicy::Wait));
    granted(s.lock_rec(&a, at(&k2), RecLockMode::X_REC_NOT_GAP, WaitPolicy::Wait));
    let other_page = RecAt { page: 8, ..at(&k3) };
    granted(s.lock_rec(&a, other_page, RecLockMode::X_REC_NOT_GAP, WaitPolicy::Wait));
    granted(s.lock_rec(&a, at(&k3), RecLockMode::X_GAP, WaitPolicy::Wait));
    let info = s.trx_lock_info(&a);
    // IX; (page 7, X,REC_NOT_GAP); (page 8, X,REC_NOT_GAP); (page 7, X,GAP).
    assert_eq!((info.lock_structs, info.rows_locked), (4, 4));
    assert!(info.requested_lock_id.is_none() && info.schedule_weight.is_none());
    assert!(s.release_rec(&a, at(&k2), RecLockMode::X_REC_NOT_GAP));
    assert!(!s.release_rec(&a, at(&k2), RecLockMode::X_REC_NOT_GAP));
    assert!(!s.release_rec(&a, at(&k1), RecLockMode::X));
    granted(s.lock_rec(&b, at(&k2), RecLockMode::X_REC_NOT_GAP, WaitPolicy::NoWait));
    assert_eq!(s.trx_lock_info(&a).rows_locked, 3);
    let table_rows: Vec<_> = s
        .data_locks(&Names)
        .into_iter()
        .filter(|r| r.lock_type == "TABLE")
        .collect();
    assert_eq!(table_rows.len(), 1);
    assert_eq!(table_rows[0].lock_mode, "IX");
    assert_eq!(table_rows[0].object_name, "t3");
    assert_eq!(table_rows[0].lock_data, None);
    assert_eq!(s.trx_lock_infos().len(), 2);
    s.release_all(&a);
    s.release_all(&b);
    assert!(s.trx_lock_infos().is_empty());
}

#[test]
fn table_locks_follow_the_matrix() {
    let s = sys();
    let a = s.begin_trx(1, 101, 11);
    let b = s.begin_trx(2, 102, 12);
    let c = s.begin_trx(3, 103, 13);
    let t = TableId(9);
    granted(s.lock_table(&a, t, TableLockMode::IX));
    granted(s.lock_table(&b, t, TableLockMode::IS));
    granted(s.lock_table(&a, t, TableLockMode::IS)); // covered by IX
    let w = match s.lock_table(&c, t, TableLockMode::S) {
        Ok(Acquired::Wait(w)) => w,
        r => panic!("{r:?}"),
    };
    // IS is compatible with the waiting S; IX is not and queues behind it.
    let d = s.begin_trx(4, 104, 14);
    granted(s.lock_table(&d, t, TableLockMode::IS));
    let e = s.begin_trx(5, 105, 15);
    let we = match s.lock_table(&e, t, TableLockMode::IX) {
        Ok(Acquired::Wait(w)) => w,
        r => panic!("{r:?}"),
    };
    s.release_all(&a);
    w.wait(std::time::Duration::from_secs(5))
        .expect("S after IX released");
    s.release_all(&c);
    we.wait(std::time::Duration::from_secs(5))
        .expect("IX after S released");
    for x in [&b, &d, &e] {
        s.release_all(x);
    }
}

#[test]
fn holder_passes_a_waiter_it_blocks() {
    let s = sys();
    let a = s.begin_trx(1, 101, 11);
    let b = s.begin_trx(2, 102, 12);
    let k = key(1);
    granted(s.lock_rec(&a, at(&k), RecLockMode::S_REC_NOT_GAP, WaitPolicy::Wait));
    let w = match s.lock_rec(&b, at(&k), RecLockMode::X_REC_NOT_GAP, WaitPolicy::Wait) {
        Ok(Acquired::Wait(w)) => w,
        r => panic!("{r:?}"),
    };
    // A's upgrade would otherwise queue behind B, which waits for A: a deadlock.
    granted(s.lock_rec(&a, at(&k), RecLockMode::X_REC_NOT_GAP, WaitPolicy::NoWait));
    // A third transaction's S queues behind B's waiting X (no barging).
    let c = s.begin_trx(3, 103, 13);
    assert_eq!(
        s.lock_rec(&c, at(&k), RecLockMode::S_REC_NOT_GAP, WaitPolicy::NoWait)
            .unwrap_err(),
        LockError::NoWait
    );
    s.release_all(&a);
    w.wait(std::time::Duration::from_secs(5)).expect("granted");
    s.release_all(&b);
    s.release_all(&c);
}

#[test]
fn lock_data_rendering_and_errors() {
    use crate::value::Value;
    assert_eq!(
        lock_data_text(&[Value::Bytes(b"ab".to_vec()), Value::Int(-3)], false),
        "'ab', -3"
    );
    assert_eq!(lock_data_text(&[Value::UInt(512)], true), "0x000000000200");
    assert_eq!(LockError::Deadlock.code().sql_state(), "40001");
    assert_eq!(LockError::NoWait.code().code(), 3572);
    assert_eq!(LockError::Interrupted.code().sql_state(), "70100");
}

/// The model's covering rule (InnoDB's `lock_rec_has_expl`), written out independently.
fn model_covers(held: RecLockMode, req: RecLockMode, sup: bool) -> bool {
    if held.is_insert_intention() || req.is_insert_intention() {
        return false;
    }
    if held.strength() == Strength::S && req.strength() == Strength::X {
        return false;
    }
    sup || held.kind() == GapKind::NextKey || held.kind() == req.kind()
}

#[derive(Debug, Clone)]
enum Op {
    Lock {
        trx: usize,
        rec: usize,
        mode: usize,
        skip: bool,
        hinted: bool,
    },
    Unlock {
        trx: usize,
        rec: usize,
        mode: usize,
    },
    ReleaseAll {
        trx: usize,
    },
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        6 => (0..3usize, 0..4usize, 0..7usize, any::<bool>(), any::<bool>())
            .prop_map(|(trx, rec, mode, skip, hinted)| Op::Lock { trx, rec, mode, skip, hinted }),
        2 => (0..3usize, 0..4usize, 0..7usize)
            .prop_map(|(trx, rec, mode)| Op::Unlock { trx, rec, mode }),
        1 => (0..3usize).prop_map(|trx| Op::ReleaseAll { trx }),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    /// Requests that never wait (NOWAIT / SKIP LOCKED) and releases, against a model that
    /// is a plain list of granted (trx, record, mode). Requests go through the records' lock
    /// hints or straight to the lock table at random: both must give the model's answers.
    #[test]
    fn lock_manager_matches_model(ops in proptest::collection::vec(op(), 1..60)) {
        let s = sys();
        let keys: Vec<[u8; 8]> = (0..3).map(|i| key(10 * (i + 1))).collect();
        let hints: Vec<LockHint> = (0..4).map(|_| LockHint::default()).collect();
        let mut owners = HintOwners::default();
        let rec = |r: usize| if r == 3 { SUP } else { at(&keys[r]) };
        // Transaction ids are never reused (a hint names its owner by id).
        let mut ids: Vec<u64> = vec![1, 2, 3];
        let mut trxs: Vec<LockTrx> = (0..3).map(|t| s.begin_trx(ids[t], 100 + t as u64, 1)).collect();
        let mut model: Vec<(usize, usize, RecLockMode)> = Vec::new();
        for op in ops {
            match op {
                Op::Lock { trx, rec: r, mode, skip, hinted } => {
                    let sup = r == 3;
                    let m = RecLockMode::ALL[mode];
                    let m = if sup { m.on_supremum() } else { m };
                    let covered = model.iter().any(|&(t, rr, h)| t == trx && rr == r && model_covers(h, m, sup));
                    let blocked = model.iter().any(|&(t, rr, h)| t != trx && rr == r && model_wait(m, h, sup));
                    let policy = if skip { WaitPolicy::SkipLocked } else { WaitPolicy::NoWait };
                    let got = if hinted {
                        s.lock_rec_hinted(&trxs[trx], rec(r), m, policy, &hints[r], &mut owners)
                            .map(|(a, _)| a)
                    } else {
                        s.lock_rec(&trxs[trx], rec(r), m, policy)
                    };
                    if covered {
                        prop_assert!(matches!(got, Ok(Acquired::Granted)), "covered: {:?}", got);
                    } else if blocked {
                        if skip {
                            prop_assert!(matches!(got, Ok(Acquired::Skipped)), "{:?}", got);
                        } else {
                            prop_assert_eq!(got.unwrap_err(), LockError::NoWait);
                        }
                    } else {
                        prop_assert!(matches!(got, Ok(Acquired::Granted)), "{:?}", got);
                        if !m.is_insert_intention() {
                            model.push((trx, r, m));
                        }
                    }
                }
                Op::Unlock { trx, rec: r, mode } => {
                    let sup = r == 3;
                    let m = RecLockMode::ALL[mode];
                    let m = if sup { m.on_supremum() } else { m };
                    let pos = model.iter().position(|&(t, rr, h)| t == trx && rr == r && h == m);
                    prop_assert_eq!(s.release_rec(&trxs[trx], rec(r), m), pos.is_some());
                    if let Some(p) = pos {
                        model.remove(p);
                    }
                }
                Op::ReleaseAll { trx } => {
                    s.release_all(&trxs[trx]);
                    model.retain(|&(t, _, _)| t != trx);
                    ids[trx] = ids.iter().max().expect("three") + 1;
                    trxs[trx] = s.begin_trx(ids[trx], 100 + trx as u64, 1);
                }
            }
            let mut want: Vec<(TrxId, String, &'static str, &'static str)> = model
                .iter()
                .map(|&(t, r, m)| {
                    let data = if r == 3 { SUPREMUM_LOCK_DATA.to_string() } else { (10 * (r + 1)).to_string() };
                    (ids[t], data, m.as_str(r == 3), "GRANTED")
                })
                .collect();
            want.sort();
            prop_assert_eq!(rec_rows(&s), want);
            let mut per_trx: HashMap<usize, u64> = HashMap::new();
            for &(t, _, _) in &model {
                *per_trx.entry(t).or_default() += 1;
            }
            for (t, lt) in trxs.iter().enumerate() {
                prop_assert_eq!(s.trx_lock_info(lt).rows_locked, per_trx.get(&t).copied().unwrap_or(0));
            }
        }
    }
}

#[derive(Debug, Clone)]
enum WOp {
    Lock { trx: usize, rec: usize, mode: usize },
    Unlock { trx: usize, rec: usize, mode: usize },
    Cancel { trx: usize },
    ReleaseAll { trx: usize },
}

fn wop() -> impl Strategy<Value = WOp> {
    prop_oneof![
        6 => (0..3usize, 0..4usize, 0..7usize)
            .prop_map(|(trx, rec, mode)| WOp::Lock { trx, rec, mode }),
        2 => (0..3usize, 0..4usize, 0..7usize)
            .prop_map(|(trx, rec, mode)| WOp::Unlock { trx, rec, mode }),
        1 => (0..3usize).prop_map(|trx| WOp::Cancel { trx }),
        2 => (0..3usize).prop_map(|trx| WOp::ReleaseAll { trx }),
    ]
}

/// A lock of the waiting model, in arrival order.
#[derive(Debug, Clone, Copy)]
struct MLock {
    trx: usize,
    rec: usize,
    mode: RecLockMode,
    waiting: bool,
}

/// The FCFS grant pass on `rec`: each waiter, in arrival order, is granted unless a lock of
/// another transaction that is granted, or waiting ahead of it, conflicts.
fn model_grant(model: &mut [MLock], rec: usize) {
    let sup = rec == 3;
    for i in 0..model.len() {
        if model[i].rec != rec || !model[i].waiting {
            continue;
        }
        let w = model[i];
        let blocked = model.iter().enumerate().any(|(j, e)| {
            e.rec == rec
                && e.trx != w.trx
                && (!e.waiting || j < i)
                && model_wait(w.mode, e.mode, sup)
        });
        if !blocked {
            model[i].waiting = false;
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    /// Waiting requests, cancellations and releases under FCFS against a flat model of
    /// InnoDB's queue rules (no barging past a conflicting waiter unless the requester holds
    /// what that waiter waits for; grants in arrival order). Deadlock detection is off, so
    /// only the test decides when a wait ends.
    #[test]
    fn waiting_lock_manager_matches_model(ops in proptest::collection::vec(wop(), 1..60)) {
        let s = LockSys::new(LockConfig {
            shards: 8,
            schedule: ScheduleAlgorithm::Fcfs,
            deadlock_detect: false,
        });
        let keys: Vec<[u8; 8]> = (0..3).map(|i| key(10 * (i + 1))).collect();
        let rec = |r: usize| if r == 3 { SUP } else { at(&keys[r]) };
        let mut trxs: Vec<LockTrx> = (0..3).map(|t| s.begin_trx(t as u64 + 1, 1, 1)).collect();
        let mut waits: Vec<Option<(LockWait, usize)>> = (0..3).map(|_| None).collect();
        let mut model: Vec<MLock> = Vec::new();
        for op in ops {
            match op {
                WOp::Lock { trx, rec: r, mode } => {
                    if waits[trx].is_some() {
                        continue;
                    }
                    let sup = r == 3;
                    let m = RecLockMode::ALL[mode];
                    let m = if sup { m.on_supremum() } else { m };
                    let mine = |e: &MLock| e.trx == trx && e.rec == r && !e.waiting;
                    let covered = model.iter().any(|e| mine(e) && model_covers(e.mode, m, sup));
                    let blocked = model.iter().any(|e| {
                        e.rec == r
                            && e.trx != trx
                            && model_wait(m, e.mode, sup)
                            && !(e.waiting
                                && model.iter().any(|g| mine(g) && model_wait(e.mode, g.mode, sup)))
                    });
                    let got = s.lock_rec(&trxs[trx], rec(r), m, WaitPolicy::Wait);
                    match got {
                        Ok(Acquired::Granted) => {
                            prop_assert!(covered || !blocked);
                            if !covered && !m.is_insert_intention() {
                                model.push(MLock { trx, rec: r, mode: m, waiting: false });
                            }
                        }
                        Ok(Acquired::Wait(w)) => {
                            prop_assert!(!covered && blocked);
                            model.push(MLock { trx, rec: r, mode: m, waiting: true });
                            waits[trx] = Some((w, r));
                        }
                        other => prop_assert!(false, "{:?}", other),
                    }
                }
                WOp::Unlock { trx, rec: r, mode } => {
                    let sup = r == 3;
                    let m = RecLockMode::ALL[mode];
                    let m = if sup { m.on_supremum() } else { m };
                    let pos = model
                        .iter()
                        .position(|e| e.trx == trx && e.rec == r && !e.waiting && e.mode == m);
                    prop_assert_eq!(s.release_rec(&trxs[trx], rec(r), m), pos.is_some());
                    if let Some(p) = pos {
                        model.remove(p);
                        model_grant(&mut model, r);
                    }
                }
                WOp::Cancel { trx } => {
                    if let Some((w, r)) = waits[trx].take() {
                        drop(w);
                        model.retain(|e| !(e.trx == trx && e.waiting));
                        model_grant(&mut model, r);
                    }
                }
                WOp::ReleaseAll { trx } => {
                    if let Some((w, _)) = waits[trx].take() {
                        drop(w);
                    }
                    s.release_all(&trxs[trx]);
                    // Newest first, with a grant pass after each, as InnoDB's lock_release:
                    // the order matters (a waiter granted early may block another one).
                    while let Some(p) = model.iter().rposition(|e| e.trx == trx) {
                        let r = model.remove(p).rec;
                        model_grant(&mut model, r);
                    }
                    trxs[trx] = s.begin_trx(trx as u64 + 1, 1, 1);
                }
            }
            // Waits the model has granted end at once.
            for (t, slot) in waits.iter_mut().enumerate() {
                if slot.is_some() && !model.iter().any(|e| e.trx == t && e.waiting) {
                    let (w, _) = slot.take().expect("a wait");
                    prop_assert_eq!(w.wait(std::time::Duration::ZERO), Ok(()));
                }
            }
            let mut want: Vec<(TrxId, String, &'static str, &'static str)> = model
                .iter()
                .map(|e| {
                    let data = if e.rec == 3 {
                        SUPREMUM_LOCK_DATA.to_string()
                    } else {
                        (10 * (e.rec + 1)).to_string()
                    };
                    let status = if e.waiting { "WAITING" } else { "GRANTED" };
                    (e.trx as u64 + 1, data, e.mode.as_str(e.rec == 3), status)
                })
                .collect();
            want.sort();
            prop_assert_eq!(rec_rows(&s), want);
        }
    }
}

#[test]
fn holders_and_the_transactions_others_wait_on_are_flagged() {
    let s = sys();
    let a = s.begin_trx(1, 101, 11);
    let b = s.begin_trx(2, 102, 12);
    let k = key(10);
    assert!(!a.holds_locks() && !a.blocks_others());
    granted(s.lock_rec(&a, at(&k), RecLockMode::X, WaitPolicy::Wait));
    assert!(a.holds_locks());
    assert!(!a.blocks_others(), "nobody waits yet");
    let Ok(Acquired::Wait(w)) = s.lock_rec(&b, at(&k), RecLockMode::X, WaitPolicy::Wait) else {
        panic!("b waits for a");
    };
    assert!(a.blocks_others(), "b waits on a's lock");
    assert!(!b.blocks_others());
    // The wait ends (here: it times out at once): a is no longer waited on.
    assert_eq!(
        w.wait(std::time::Duration::ZERO),
        Err(LockError::WaitTimeout)
    );
    assert!(!a.blocks_others());
    let Ok(Acquired::Wait(w)) = s.lock_rec(&b, at(&k), RecLockMode::X, WaitPolicy::Wait) else {
        panic!("b waits for a again");
    };
    assert!(a.blocks_others());
    // A wait dropped without waiting is cancelled and counted off too.
    drop(w);
    assert!(!a.blocks_others());
    s.release_all(&a);
    assert!(!a.holds_locks());
    s.release_all(&b);
}
