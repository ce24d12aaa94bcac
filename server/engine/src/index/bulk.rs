//! Bulk building of a B+tree from records already in ascending key order: leaves are filled
//! left to right and linked, then each level above is made from the first keys of the level
//! below, up to the root. A tree of n records costs one pass instead of n descents, and its
//! pages come out full, as InnoDB's sorted index build fills them (`innodb_fill_factor` =
//! 100). The result keeps every invariant of a tree built by inserts: records in key order
//! within each child's separator range, the leaf chain in key order, the root page fixed.

use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::sync::Arc;

use crate::index::key_buf::KeyBuf;
use crate::index::page::{Page, PageCapacity, PageData, Records};
use crate::index::record::Record;
use crate::index::tree::BTree;

/// A built page with the smallest key of its subtree (its separator in the parent).
struct Built<R> {
    page: Arc<Page<R>>,
    min_key: KeyBuf,
}

impl<R: Record> BTree<R> {
    /// A tree holding `records` (each with the id of the transaction that wrote it, which
    /// raises its leaf's `max_trx_id`). The records must be in strictly ascending key order;
    /// that is checked, and a violation panics, since it is the caller's bug.
    pub(crate) fn from_sorted(
        capacity: PageCapacity,
        records: impl IntoIterator<Item = (R, u64)>,
    ) -> BTree<R> {
        let tree = BTree::new(capacity);
        let next_id = AtomicU64::new(1);
        let new_page = |data: PageData<R>| Page::new(next_id.fetch_add(1, Relaxed), data);
        let leaves = leaf_chunks(capacity.leaf, records);
        if leaves.len() <= 1 {
            if let Some((recs, max_trx_id)) = leaves.into_iter().next() {
                tree.fill_root(|root| {
                    root.records = recs;
                    root.max_trx_id = max_trx_id;
                });
            }
            return tree;
        }
        // Leaves from the right, so each one is made already linked to its successor.
        let mut level: Vec<Built<R>> = Vec::with_capacity(leaves.len());
        let mut next: Option<Arc<Page<R>>> = None;
        for (recs, max_trx_id) in leaves.into_iter().rev() {
            let min_key = KeyBuf::from(recs.key(0));
            let mut data = PageData::leaf(recs);
            data.max_trx_id = max_trx_id;
            data.next = next.take();
            let page = new_page(data);
            next = Some(page.clone());
            level.push(Built { page, min_key });
        }
        level.reverse();
        let mut height: u8 = 1;
        while level.len() > capacity.inner {
            level = inner_chunks(level.len(), capacity.inner)
                .into_iter()
                .scan(level.into_iter(), |rest, n| {
                    Some(rest.by_ref().take(n).collect::<Vec<_>>())
                })
                .map(|children| {
                    let min_key = children[0].min_key.clone();
                    Built {
                        page: new_page(inner_data(height, children)),
                        min_key,
                    }
                })
                .collect();
            height += 1;
        }
        let top = inner_data(height, level);
        tree.fill_root(|root| *root = top);
        tree.set_next_page_id(next_id.load(Relaxed));
        tree
    }
}

/// The records cut into full leaves (as many records as fit a page's byte budget, at most
/// `per_leaf`), each with its largest transaction id.
fn leaf_chunks<R: Record>(
    per_leaf: usize,
    records: impl IntoIterator<Item = (R, u64)>,
) -> Vec<(Records<R>, u64)> {
    let mut out: Vec<(Records<R>, u64)> = Vec::new();
    let mut cur: Records<R> = Records::default();
    let mut max_trx_id = 0;
    for (rec, trx_id) in records {
        let prev = if cur.is_empty() {
            out.last().map(|(l, _)| l.key(l.len() - 1))
        } else {
            Some(cur.key(cur.len() - 1))
        };
        if let Some(prev) = prev {
            assert!(prev < rec.key(), "bulk build input out of key order");
        }
        if !cur.fits(&rec, per_leaf) {
            // The next leaf will fill as this one did: its room in one allocation each, sized
            // to what this one holds (growing a quarter at a time would leave its directory
            // up to a quarter larger than its records need).
            let next = Records::with_capacity(cur.used(), cur.len());
            out.push((std::mem::replace(&mut cur, next), max_trx_id));
            max_trx_id = 0;
        }
        max_trx_id = max_trx_id.max(trx_id);
        cur.insert(cur.len(), &rec);
    }
    if !cur.is_empty() {
        out.push((cur, max_trx_id));
    }
    out
}

/// How many children each inner page of a level over `n` pages gets: full pages, except
/// that the last two share out the rest so that none has fewer than two children.
fn inner_chunks(n: usize, per_page: usize) -> Vec<usize> {
    let mut sizes = vec![per_page; n / per_page];
    let rest = n % per_page;
    if rest > 0 {
        sizes.push(rest);
    }
    let len = sizes.len();
    if len >= 2 && sizes[len - 1] < 2 {
        let both = sizes[len - 2] + sizes[len - 1];
        sizes[len - 2] = both - both / 2;
        sizes[len - 1] = both / 2;
    }
    sizes
}

/// An inner page at `level` over `children` (their first keys but the first are the
/// separators).
fn inner_data<R>(level: u8, children: Vec<Built<R>>) -> PageData<R> {
    let mut data = PageData::leaf(Records::default());
    data.level = level;
    data.keys = children.iter().skip(1).map(|c| c.min_key.clone()).collect();
    data.children = children.into_iter().map(|c| c.page).collect();
    data
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::index::record::RecordRef;
    use crate::index::SecondaryRec;
    use proptest::prelude::*;

    fn rec(k: u32) -> SecondaryRec {
        SecondaryRec::new(&k.to_be_bytes(), 4)
    }

    impl<R: Record> BTree<R> {
        /// The `max_trx_id` of the leaf `key` routes to.
        fn max_trx_id_of(&self, key: &[u8]) -> u64 {
            self.descend(key, crate::index::Route::AfterEqual, false, None)
                .max_trx_id
        }

        /// Every inner page's children hold keys within its separators, every level is
        /// one height, and the leaf chain visits the leaves left to right.
        fn check_invariants(&self) {
            fn walk<R: Record>(
                page: &Arc<Page<R>>,
                lo: Option<&[u8]>,
                hi: Option<&[u8]>,
                leaves: &mut Vec<u64>,
            ) -> u8 {
                let g = Page::read(page.clone(), &AtomicU64::new(0));
                if g.level == 0 {
                    for r in g.records.iter() {
                        assert!(lo.is_none_or(|l| l <= r.key()) && hi.is_none_or(|h| r.key() < h));
                    }
                    leaves.push(page.id);
                    return 0;
                }
                assert!(g.children.len() >= 2 && g.keys.len() + 1 == g.children.len());
                assert!(g.keys.windows(2).all(|w| w[0] < w[1]));
                let mut depth = None;
                for (i, c) in g.children.iter().enumerate() {
                    let clo = if i == 0 {
                        lo
                    } else {
                        Some(g.keys[i - 1].as_ref())
                    };
                    let chi = g.keys.get(i).map(|k| k.as_ref()).or(hi);
                    let d = walk(c, clo, chi, leaves);
                    assert_eq!(*depth.get_or_insert(d), d, "uneven tree");
                }
                assert_eq!(depth.map(|d| d + 1), Some(g.level));
                g.level
            }
            let mut leaves = Vec::new();
            walk(&self.root_page(), None, None, &mut leaves);
            let mut chain = Vec::new();
            let mut next = Some(
                self.descend(&[], crate::index::Route::BeforeEqual, false, None)
                    .page()
                    .clone(),
            );
            while let Some(p) = next {
                chain.push(p.id);
                next = Page::read(p, &AtomicU64::new(0)).next.clone();
            }
            assert_eq!(chain, leaves, "leaf chain out of order");
        }
    }

    /// The tree's keys in leaf-chain order.
    fn records<R: Record>(t: &BTree<R>) -> Vec<Vec<u8>> {
        let mut out = Vec::new();
        t.for_each_record(|r| out.push(r.key().to_vec()));
        out
    }

    #[test]
    fn inner_pages_never_get_a_single_child() {
        assert_eq!(inner_chunks(7, 3), vec![3, 2, 2]);
        assert_eq!(inner_chunks(6, 3), vec![3, 3]);
        assert_eq!(inner_chunks(5, 3), vec![3, 2]);
        assert_eq!(inner_chunks(2, 3), vec![2]);
    }

    #[test]
    #[should_panic(expected = "out of key order")]
    fn unsorted_input_is_refused() {
        let cap = PageCapacity { leaf: 2, inner: 3 };
        let _ = BTree::from_sorted(cap, [(rec(2), 0), (rec(1), 0)]);
    }

    #[test]
    fn a_bulk_built_tree_takes_inserts_and_removals_afterwards() {
        let cap = PageCapacity { leaf: 3, inner: 3 };
        let t = BTree::from_sorted(cap, (0..100u32).map(|k| (rec(k * 2), 1)));
        for k in 0..100u32 {
            t.insert_with(rec(k * 2 + 1), 2, |_, _| Err(()))
                .expect("new key");
        }
        for k in (0..200u32).step_by(3) {
            assert!(t.remove_if(&k.to_be_bytes(), |_| true).is_some());
        }
        let want: Vec<Vec<u8>> = (0..200u32)
            .filter(|k| k % 3 != 0)
            .map(|k| rec(k).key().to_vec())
            .collect();
        assert_eq!(records(&t), want);
        for k in 0..200u32 {
            assert_eq!(t.get(&k.to_be_bytes(), |_| ()).is_some(), k % 3 != 0, "{k}");
        }
    }

    #[test]
    fn leaves_carry_their_largest_transaction_id() {
        let cap = PageCapacity { leaf: 2, inner: 3 };
        let t = BTree::from_sorted(cap, (0..4u32).map(|k| (rec(k), u64::from(10 - k))));
        // Keys 0 and 1 share the first leaf (trx 10 and 9): an insert there keeps 10.
        let seen = t.max_trx_id_of(&1u32.to_be_bytes());
        assert_eq!(seen, 10);
        assert_eq!(t.max_trx_id_of(&3u32.to_be_bytes()), 8);
    }

    proptest! {
        /// A bulk-built tree holds exactly what inserting the same records one by one in
        /// random order gives, and answers every point lookup the same.
        #[test]
        fn bulk_built_equals_row_by_row_built(
            keys in prop::collection::btree_set(0u32..5000, 0..600),
            leaf in 2usize..6,
            inner in 3usize..6,
            seed in any::<u64>(),
        ) {
            let cap = PageCapacity { leaf, inner };
            let sorted: Vec<u32> = keys.iter().copied().collect();
            let bulk = BTree::from_sorted(cap, sorted.iter().map(|&k| (rec(k), 1)));
            let by_row = BTree::new(cap);
            let mut order = sorted.clone();
            // A cheap deterministic shuffle from the seed.
            let mut s = seed | 1;
            for i in (1..order.len()).rev() {
                s ^= s << 13; s ^= s >> 7; s ^= s << 17;
                order.swap(i, (s % (i as u64 + 1)) as usize);
            }
            for &k in &order {
                by_row.insert_with(rec(k), 1, |_, _| Err(())).expect("unique");
            }
            prop_assert_eq!(records(&bulk), records(&by_row));
            bulk.check_invariants();
            for probe in (0u32..5000).step_by(37) {
                let b = bulk.get(&probe.to_be_bytes(), |r| r.key().to_vec());
                let r = by_row.get(&probe.to_be_bytes(), |r| r.key().to_vec());
                prop_assert_eq!(b, r);
            }
        }
    }
}
