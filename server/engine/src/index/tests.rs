//! B+tree and cursor tests: a model check of point operations and positioned scans, cursor
//! save/restore against concurrent inserts, deletes and splits, and page-latch contention.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, Ordering::Relaxed};
use std::sync::Arc;
use std::time::{Duration, Instant};

use proptest::prelude::*;

use crate::cursor::{Direction, LatchMode, Restored, SearchMode};
use crate::index::{BTree, HintRef, KeyBuf, PageCapacity, Record, RecordRef};

#[derive(Debug, Clone, PartialEq, Eq)]
struct Rec {
    key: KeyBuf,
    val: u64,
}

/// A stored [`Rec`] read in place: `[key len 1][key][val 8]`.
#[derive(Debug, Clone, Copy)]
struct RecView<'a> {
    key: &'a [u8],
    val: u64,
}

impl<'a> RecordRef<'a> for RecView<'a> {
    fn key(&self) -> &'a [u8] {
        self.key
    }
}

impl Record for Rec {
    type Ref<'a> = RecView<'a>;

    fn key(&self) -> &[u8] {
        &self.key
    }

    fn stored_len(&self) -> usize {
        1 + self.key.len() + 8
    }

    fn store(&self, out: &mut Vec<u8>) {
        out.push(u8::try_from(self.key.len()).expect("a short test key"));
        out.extend_from_slice(&self.key);
        out.extend_from_slice(&self.val.to_le_bytes());
    }

    fn stored_size(bytes: &[u8]) -> usize {
        1 + usize::from(bytes[0]) + 8
    }

    fn stored_key(bytes: &[u8]) -> &[u8] {
        &bytes[1..1 + usize::from(bytes[0])]
    }

    fn load(bytes: &[u8]) -> Rec {
        let v = Rec::view_of(bytes);
        Rec {
            key: KeyBuf::from(v.key),
            val: v.val,
        }
    }

    fn view<'a>(bytes: &'a [u8], _: HintRef<'a>) -> RecView<'a> {
        Rec::view_of(bytes)
    }
}

impl Rec {
    fn view_of(bytes: &[u8]) -> RecView<'_> {
        let key = Rec::stored_key(bytes);
        let at = 1 + key.len();
        RecView {
            key,
            val: u64::from_le_bytes(bytes[at..at + 8].try_into().expect("8 bytes")),
        }
    }
}

fn k(n: u64) -> KeyBuf {
    KeyBuf::from(&n.to_be_bytes()[..])
}

fn n(key: &[u8]) -> u64 {
    u64::from_be_bytes(key.try_into().expect("8-byte key"))
}

const SMALL: PageCapacity = PageCapacity { leaf: 4, inner: 4 };

fn insert(t: &BTree<Rec>, key: u64, val: u64) -> bool {
    t.insert_with(Rec { key: k(key), val }, 0, |_, _| Err(()))
        .is_ok()
}

#[derive(Debug, Clone)]
enum Op {
    Insert(u64, u64),
    Remove(u64),
    Modify(u64, u64),
    Get(u64),
    Seek(u64, SearchMode, bool, usize),
}

fn op() -> impl Strategy<Value = Op> {
    let key = 0u64..200;
    let mode = prop_oneof![
        Just(SearchMode::Ge),
        Just(SearchMode::Gt),
        Just(SearchMode::Le),
        Just(SearchMode::Lt)
    ];
    prop_oneof![
        4 => (key.clone(), any::<u64>()).prop_map(|(a, b)| Op::Insert(a, b)),
        2 => key.clone().prop_map(Op::Remove),
        1 => (key.clone(), any::<u64>()).prop_map(|(a, b)| Op::Modify(a, b)),
        1 => key.clone().prop_map(Op::Get),
        2 => (key, mode, any::<bool>(), 0usize..30).prop_map(|(a, m, fwd, len)| Op::Seek(a, m, fwd, len)),
    ]
}

fn model_seek(
    m: &BTreeMap<u64, u64>,
    key: u64,
    mode: SearchMode,
    fwd: bool,
    len: usize,
) -> Vec<(u64, u64)> {
    let start: Option<u64> = match mode {
        SearchMode::Ge => m.range(key..).next().map(|(k, _)| *k),
        SearchMode::Gt => m.range(key + 1..).next().map(|(k, _)| *k),
        SearchMode::Le => m.range(..=key).next_back().map(|(k, _)| *k),
        SearchMode::Lt => m.range(..key).next_back().map(|(k, _)| *k),
    };
    let Some(s) = start else { return Vec::new() };
    if fwd {
        m.range(s..).take(len + 1).map(|(k, v)| (*k, *v)).collect()
    } else {
        m.range(..=s)
            .rev()
            .take(len + 1)
            .map(|(k, v)| (*k, *v))
            .collect()
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]
    /// Every operation on a tree of tiny pages agrees with a BTreeMap.
    #[test]
    fn tree_matches_model(ops in proptest::collection::vec(op(), 1..400)) {
        let t = BTree::new(SMALL);
        let mut m = BTreeMap::new();
        for op in ops {
            match op {
                Op::Insert(key, v) => {
                    let fresh = !m.contains_key(&key);
                    let mut successor = None;
                    let done = t.insert_checked(
                        Rec { key: k(key), val: v },
                        0,
                        |s| {
                            successor = Some(s.map(|r| n(r.key)));
                            Ok(())
                        },
                        |_, _| Err(()),
                    );
                    prop_assert_eq!(done.is_ok(), fresh);
                    if fresh {
                        // The hook saw the model's successor (None = supremum).
                        prop_assert_eq!(successor, Some(m.range(key + 1..).next().map(|(k, _)| *k)));
                    }
                    m.entry(key).or_insert(v);
                }
                Op::Remove(key) => {
                    prop_assert_eq!(t.remove_if(&k(key), |_| true).map(|r| r.val), m.remove(&key));
                }
                Op::Modify(key, v) => {
                    let got = t.modify(&k(key), |r, _| { r.val = v; });
                    prop_assert_eq!(got.is_some(), m.contains_key(&key));
                    if let Some(e) = m.get_mut(&key) { *e = v; }
                }
                Op::Get(key) => prop_assert_eq!(t.get(&k(key), |r| r.val), m.get(&key).copied()),
                Op::Seek(key, mode, fwd, len) => {
                    let mut c = t.cursor(LatchMode::Read);
                    let mut got = Vec::new();
                    let mut on = c.search(&k(key), mode);
                    while on && got.len() <= len {
                        let r = c.record().unwrap();
                        got.push((n(r.key), r.val));
                        on = if fwd { c.move_next() } else { c.move_prev() };
                    }
                    prop_assert_eq!(got, model_seek(&m, key, mode, fwd, len));
                }
            }
        }
        let mut c = t.cursor(LatchMode::Read);
        let mut all = Vec::new();
        let mut on = c.first();
        while on {
            all.push(n(c.record().unwrap().key));
            on = c.move_next();
        }
        prop_assert_eq!(all, m.keys().copied().collect::<Vec<_>>());
    }

    /// Save, mutate (possibly removing the saved record), restore: the cursor lands on the
    /// saved record if it is still there, else on its model successor (or predecessor).
    #[test]
    fn restore_lands_on_record_or_neighbour(
        init in proptest::collection::btree_set(0u64..300, 1..150),
        muts in proptest::collection::vec(proptest::collection::vec((any::<bool>(), 0u64..300), 0..8), 1..60),
        fwd in any::<bool>(),
    ) {
        let t = BTree::new(SMALL);
        let mut m: BTreeMap<u64, u64> = BTreeMap::new();
        for &key in &init {
            insert(&t, key, key);
            m.insert(key, key);
        }
        let dir = if fwd { Direction::Forward } else { Direction::Backward };
        let mut c = t.cursor(LatchMode::Read);
        let mut on = if fwd { c.first() } else { c.last() };
        for batch in muts {
            if !on { break; }
            let here = n(c.record().unwrap().key);
            let saved = c.save();
            for (ins, key) in batch {
                if ins {
                    if insert(&t, key, key) { m.insert(key, key); }
                } else if t.remove_if(&k(key), |_| true).is_some() {
                    m.remove(&key);
                }
            }
            let r = c.restore(&saved, dir);
            let want = if fwd { m.range(here..).next() } else { m.range(..=here).next_back() }.map(|(k, _)| *k);
            prop_assert_eq!(c.record().map(|r| n(r.key)), want);
            prop_assert_eq!(r == Restored::Same, m.contains_key(&here));
            on = match r {
                Restored::Same => if fwd { c.move_next() } else { c.move_prev() },
                Restored::Moved => c.is_on_record(),
            };
        }
    }
}

#[test]
fn truncate_invalidates_saved_positions() {
    let t = BTree::new(SMALL);
    for i in 0..100 {
        insert(&t, i, i);
    }
    let mut c = t.cursor(LatchMode::Read);
    assert!(c.search(&k(50), SearchMode::Ge));
    let saved = c.save();
    t.truncate();
    assert_eq!(c.restore(&saved, Direction::Forward), Restored::Moved);
    assert!(!c.is_on_record());
    assert!(insert(&t, 7, 7));
    assert_eq!(t.height(), 1);
    assert!(c.first());
}

/// A scanner saves and restores between every record while other threads insert and
/// physically remove keys and split pages. Keys divisible by 4 are inserted first and never
/// removed, so every scan must see all of them, in strictly ascending (or descending) order,
/// and nothing that was never inserted. At the end the tree equals the union of what the
/// writers say they left.
#[test]
fn cursor_restore_under_concurrent_splits() {
    const STABLE: u64 = 2000;
    let t = Arc::new(BTree::new(SMALL));
    for i in 0..STABLE {
        insert(&t, i * 4, 0);
    }
    let stop = Arc::new(AtomicBool::new(false));
    let writers: Vec<_> = (1..=3u64)
        .map(|residue| {
            let (t, stop) = (t.clone(), stop.clone());
            std::thread::spawn(move || {
                let mut mine = std::collections::BTreeSet::new();
                let mut x = residue * 7919;
                let mut ops = 0u64;
                while !stop.load(Relaxed) || ops < 20_000 {
                    x = x
                        .wrapping_mul(6364136223846793005)
                        .wrapping_add(1442695040888963407);
                    let key = ((x >> 33) % STABLE) * 4 + residue;
                    if !(x >> 20).is_multiple_of(3) {
                        if insert(&t, key, 1) {
                            mine.insert(key);
                        }
                    } else if t.remove_if(&k(key), |_| true).is_some() {
                        mine.remove(&key);
                    }
                    ops += 1;
                }
                mine
            })
        })
        .collect();
    let mut scans = 0;
    let deadline = Instant::now() + Duration::from_secs(3);
    while scans < 6 || Instant::now() < deadline {
        let fwd = scans % 2 == 0;
        let dir = if fwd {
            Direction::Forward
        } else {
            Direction::Backward
        };
        let mut c = t.cursor(LatchMode::Read);
        let mut on = if fwd { c.first() } else { c.last() };
        let mut prev: Option<u64> = None;
        let mut stable_seen = 0;
        while on {
            let key = n(c.record().unwrap().key);
            if let Some(p) = prev {
                assert!(
                    if fwd { key > p } else { key < p },
                    "order broken: {p} then {key}"
                );
            }
            assert!(key < STABLE * 4, "never inserted: {key}");
            if key.is_multiple_of(4) {
                stable_seen += 1;
            }
            prev = Some(key);
            let saved = c.save();
            std::thread::yield_now();
            on = match c.restore(&saved, dir) {
                Restored::Same => {
                    if fwd {
                        c.move_next()
                    } else {
                        c.move_prev()
                    }
                }
                Restored::Moved => {
                    assert!(!key.is_multiple_of(4), "a stable record vanished");
                    c.is_on_record()
                }
            };
        }
        assert_eq!(stable_seen, STABLE, "scan {scans} missed stable records");
        scans += 1;
    }
    stop.store(true, Relaxed);
    let mut want: Vec<u64> = (0..STABLE).map(|i| i * 4).collect();
    for w in writers {
        want.extend(w.join().unwrap());
    }
    want.sort_unstable();
    let mut c = t.cursor(LatchMode::Read);
    let mut got = Vec::new();
    let mut on = c.first();
    while on {
        got.push(n(c.record().unwrap().key));
        on = c.move_next();
    }
    assert_eq!(got, want);
    let stats = t.stats();
    assert!(stats.page_splits.load(Relaxed) > 100, "splits happened");
    assert!(
        stats.pessimistic_restores.load(Relaxed) > 0,
        "some restores re-descended"
    );
    assert!(
        stats.optimistic_restores.load(Relaxed) > 0,
        "some restores were optimistic"
    );
}

/// Builds a tree whose leaves hold exactly `leaf` consecutive keys each (ascending inserts
/// fill leaves completely).
fn full_leaves(leaves: u64) -> Arc<BTree<Rec>> {
    let t = Arc::new(BTree::new(PageCapacity::default()));
    for i in 0..leaves * PageCapacity::default().leaf as u64 {
        insert(&t, i, 0);
    }
    t
}

fn hammer(
    t: &Arc<BTree<Rec>>,
    threads: u64,
    leaf_of: impl Fn(u64) -> u64 + Copy + Send + 'static,
    ops: u64,
) {
    let per_leaf = PageCapacity::default().leaf as u64;
    let hs: Vec<_> = (0..threads)
        .map(|th| {
            let t = t.clone();
            std::thread::spawn(move || {
                for i in 0..ops {
                    let key = leaf_of(th) * per_leaf + (i % per_leaf);
                    t.modify(&k(key), |r, _| r.val += 1).expect("present");
                }
            })
        })
        .collect();
    for h in hs {
        h.join().unwrap();
    }
}

/// In-place writers on distinct leaves never wait for a page latch: inner pages are latched
/// shared and each leaf has its own latch. (A single lock over the whole index would make
/// them wait.)
#[test]
fn writers_on_distinct_leaves_do_not_wait() {
    let t = full_leaves(8);
    t.stats().page_latch_waits.store(0, Relaxed);
    hammer(&t, 4, |th| th * 2, 100_000);
    assert_eq!(t.stats().page_latch_waits.load(Relaxed), 0);
}

/// Writers on one leaf contend for its latch, and the waits are counted.
#[test]
fn writers_on_one_leaf_wait() {
    let t = full_leaves(8);
    let deadline = Instant::now() + Duration::from_secs(20);
    while t.stats().page_latch_waits.load(Relaxed) == 0 && Instant::now() < deadline {
        hammer(&t, 4, |_| 3, 100_000);
    }
    assert!(t.stats().page_latch_waits.load(Relaxed) > 0);
}

/// A queue through a small-page tree: writers append keys at the tail and remove them at the
/// head (as purge removes claimed jobs), while scanners walk forward and backward with a
/// save and restore at every record. Emptied leaves are unlinked (at most one empty leaf per
/// parent remains, its first child), scans keep their order and never lose the sentinel
/// records, and the tree ends with exactly the records left.
#[test]
fn emptied_leaves_are_unlinked_under_concurrent_scans() {
    const SENTINELS: u64 = 50;
    const BASE: u64 = 1 << 40;
    let t = Arc::new(BTree::new(SMALL));
    for i in 0..SENTINELS {
        insert(&t, BASE + i, 0);
    }
    let stop = Arc::new(AtomicBool::new(false));
    let writers: Vec<_> = (0..2u64)
        .map(|w| {
            let (t, stop) = (t.clone(), stop.clone());
            std::thread::spawn(move || {
                // Writer w owns keys ≡ w (mod 2) below BASE.
                let (mut head, mut tail) = (0u64, 0u64);
                let mut rounds = 0u64;
                while !stop.load(Relaxed) || rounds < 20_000 {
                    assert!(insert(&t, tail * 2 + w, 1));
                    tail += 1;
                    if tail - head > 40 {
                        assert!(t.remove_if(&k(head * 2 + w), |_| true).is_some());
                        head += 1;
                    }
                    rounds += 1;
                }
                (head..tail).map(|i| i * 2 + w).collect::<Vec<u64>>()
            })
        })
        .collect();
    let deadline = Instant::now() + Duration::from_secs(2);
    let mut scans = 0;
    while scans < 6 || Instant::now() < deadline {
        let fwd = scans % 2 == 0;
        let dir = if fwd {
            Direction::Forward
        } else {
            Direction::Backward
        };
        let mut c = t.cursor(LatchMode::Read);
        let mut on = if fwd { c.first() } else { c.last() };
        let (mut prev, mut sentinels) = (None::<u64>, 0);
        while on {
            let key = n(c.record().unwrap().key);
            if let Some(p) = prev {
                assert!(
                    if fwd { key > p } else { key < p },
                    "order broken: {p} then {key}"
                );
            }
            sentinels += u64::from(key >= BASE);
            prev = Some(key);
            let saved = c.save();
            on = match c.restore(&saved, dir) {
                Restored::Same if fwd => c.move_next(),
                Restored::Same => c.move_prev(),
                Restored::Moved => {
                    assert!(key < BASE, "a sentinel vanished");
                    c.is_on_record()
                }
            };
        }
        assert_eq!(sentinels, SENTINELS, "scan {scans} missed sentinels");
        scans += 1;
    }
    stop.store(true, Relaxed);
    let mut want: Vec<u64> = (0..SENTINELS).map(|i| BASE + i).collect();
    for w in writers {
        want.extend(w.join().unwrap());
    }
    want.sort_unstable();
    let mut c = t.cursor(LatchMode::Read);
    let mut got = Vec::new();
    let mut on = c.first();
    while on {
        got.push(n(c.record().unwrap().key));
        on = c.move_next();
    }
    assert_eq!(got, want);
    let (leaves, empty, parents) = t.leaf_census();
    assert!(
        t.stats().page_discards.load(Relaxed) > 1000,
        "leaves were unlinked"
    );
    assert!(
        empty <= parents,
        "{empty} empty leaves under {parents} parents ({leaves} leaves)"
    );
}

/// Leaf heaps under the byte budget: records far larger than a page, inserted in descending
/// order (a full leaf of one record splits with the new one on the left), grown in place
/// past the page, shrunk again, and all read back intact.
#[test]
fn records_larger_than_a_page_split_and_grow_in_place() {
    use crate::index::{ClusteredRec, PAGE_BYTES};
    use crate::row_buf::RowBuf;
    let t: BTree<ClusteredRec> = BTree::new(PageCapacity::default());
    let row = |i: u64, len: usize| RowBuf::new(&vec![i as u8; len]);
    let sizes = |i: u64| [10, PAGE_BYTES / 3, PAGE_BYTES * 2][i as usize % 3];
    for i in (0..60u64).rev() {
        let rec = ClusteredRec::new(k(i), row(i, sizes(i)), 1);
        assert!(t.insert_with(rec, 1, |_, _| Err(())).is_ok());
    }
    assert!(t.height() > 1);
    for i in 0..60u64 {
        let grown = sizes(i) * 2 + 1;
        t.modify(&k(i), |r, _| r.row = row(i, grown))
            .expect("present");
        assert!(
            insert(&t, 1000 + i, 0),
            "inserts still split around big records"
        );
    }
    for i in (0..60u64).step_by(2) {
        t.modify(&k(i), |r, _| r.row = row(i, 3)).expect("present");
    }
    let mut c = t.cursor(LatchMode::Read);
    let mut on = c.first();
    let mut seen = 0;
    while on {
        let r = c.record().unwrap();
        let i = n(r.key());
        if i < 1000 {
            let want = if i.is_multiple_of(2) {
                3
            } else {
                sizes(i) * 2 + 1
            };
            assert_eq!(r.row().len(), want, "record {i}");
            assert!(r.row().iter().all(|&b| b == i as u8));
        }
        seen += 1;
        on = c.move_next();
    }
    assert_eq!(seen, 120);

    fn insert(t: &BTree<ClusteredRec>, i: u64, trx: u64) -> bool {
        let rec = ClusteredRec::new(k(i), RowBuf::new(b"x"), trx);
        t.insert_with(rec, trx, |_, _| Err(())).is_ok()
    }
}

/// Ascending inserts that split the last leaf start the new leaf with the full leaf's heap
/// room and a directory for as many records, so filling it allocates nothing more.
#[test]
fn an_append_split_gives_the_new_leaf_the_full_leafs_room() {
    let t = BTree::new(PageCapacity {
        leaf: 8,
        inner: 128,
    });
    for i in 0..9 {
        insert(&t, i, 0);
    }
    let mut leaves = Vec::new();
    each_leaf(&t, |p| {
        leaves.push((
            p.records.len(),
            p.records.heap_capacity(),
            p.records.slot_capacity(),
        ))
    });
    assert_eq!(leaves.len(), 2, "one append split");
    let ((full, heap, _), (one, right_heap, right_slots)) = (leaves[0], leaves[1]);
    assert_eq!((full, one), (8, 1));
    assert_eq!(
        (right_heap, right_slots),
        (heap, full),
        "the full leaf's heap room, a directory for as many records"
    );
    for i in 9..16 {
        insert(&t, i, 0);
    }
    let mut after = Vec::new();
    each_leaf(&t, |p| {
        after.push((p.records.len(), p.records.heap_capacity()))
    });
    assert_eq!(after[1], (8, heap), "filled without growing");
}

/// Space freed by removed records is reused: a page that loses records and gains as many
/// of the same size keeps its heap allocation.
#[test]
fn freed_record_space_is_reused() {
    let t = BTree::new(PageCapacity::default());
    for i in 0..400 {
        insert(&t, i, i);
    }
    let leaf = t.descend(&k(0), crate::index::Route::AfterEqual, false, None);
    assert_eq!(leaf.records.len(), 400, "one leaf");
    let cap = leaf.records.heap_capacity();
    drop(leaf);
    let mut present: std::collections::VecDeque<u64> = (0..400).collect();
    for round in 0..20u64 {
        for i in 0..100 {
            let gone = present.pop_front().unwrap();
            assert!(t.remove_if(&k(gone), |_| true).is_some());
            let key = 1000 + round * 100 + i;
            assert!(insert(&t, key, key));
            present.push_back(key);
        }
        let leaf = t.descend(&k(0), crate::index::Route::AfterEqual, false, None);
        assert_eq!(leaf.records.len(), 400);
        assert!(
            leaf.records.heap_capacity() <= cap,
            "round {round}: the heap grew from {cap} to {}",
            leaf.records.heap_capacity()
        );
    }
}

/// Leaves that fall below half full merge into a sibling (left, else right) when the two
/// fit one page; leaves at half or more, or whose sibling is too full, stay.
#[test]
fn underfull_leaves_merge_with_a_sibling() {
    let cap = PageCapacity { leaf: 8, inner: 64 };
    let t = BTree::new(cap);
    for i in 0..80 {
        insert(&t, i, i); // ascending: ten full leaves
    }
    assert_eq!(t.leaf_census().0, 10);
    // Leaf 1 (keys 8..16) down to exactly half: no merge.
    for i in 8..12 {
        t.remove_if(&k(i), |_| true).unwrap();
    }
    assert_eq!(t.leaf_census().0, 10);
    assert_eq!(t.stats().page_merges.load(Relaxed), 0);
    // Below half, but its left sibling is full and its right one too: no merge.
    t.remove_if(&k(12), |_| true).unwrap();
    assert_eq!(t.leaf_census().0, 10);
    // Leaf 2 (16..24) below half: its left sibling (3 records) takes its 3.
    for i in 16..21 {
        t.remove_if(&k(i), |_| true).unwrap();
    }
    assert_eq!(t.leaf_census().0, 9);
    assert_eq!(t.stats().page_merges.load(Relaxed), 1);
    // The first leaf (0..8) below half takes its right sibling's 6 records.
    for i in 0..5 {
        t.remove_if(&k(i), |_| true).unwrap();
    }
    assert_eq!(t.leaf_census().0, 9, "3 + 6 records do not fit 8");
    t.remove_if(&k(5), |_| true).unwrap();
    assert_eq!(t.leaf_census().0, 8, "2 + 6 do");
    assert_eq!(t.stats().page_merges.load(Relaxed), 2);
    let mut got = Vec::new();
    t.for_each_record(|r| got.push((n(r.key), r.val)));
    let want: Vec<(u64, u64)> = [6, 7, 13, 14, 15]
        .into_iter()
        .chain(21..80)
        .map(|i| (i, i))
        .collect();
    assert_eq!(got, want);
}

/// Calls `f` on every leaf along the leaf chain.
fn each_leaf(t: &BTree<Rec>, mut f: impl FnMut(&crate::index::page::PageData<Rec>)) {
    let first = t.descend(&[], crate::index::Route::BeforeEqual, false, None);
    f(&first);
    let mut next = first.next.clone();
    drop(first);
    while let Some(p) = next {
        let g = crate::index::Page::read(p, &t.stats().page_latch_waits);
        f(&g);
        next = g.next.clone();
    }
}

/// A page's lock-hint table, once made, follows its slots through inserts, removals,
/// splits and merges.
#[test]
fn hint_tables_follow_the_slots() {
    let t = BTree::new(SMALL);
    let mut tables = 0;
    for round in 0..40u64 {
        for i in 0..10 {
            insert(&t, (i * 7919 + round * 13) % 97, round);
        }
        each_leaf(&t, |leaf| leaf.records.make_hints());
        for i in 0..6 {
            t.remove_if(&k((i * 31 + round) % 97), |_| true);
        }
        each_leaf(&t, |leaf| {
            if let Some(len) = leaf.records.hint_table_len() {
                assert_eq!(len, leaf.records.len());
                tables += 1;
            }
        });
    }
    assert!(tables > 100);
    assert!(t.stats().page_merges.load(Relaxed) > 0);
    assert!(t.stats().page_splits.load(Relaxed) > 0);
}
