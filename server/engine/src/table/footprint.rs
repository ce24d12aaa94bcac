//! What a table's indexes hold in memory, read without changing anything: each index's leaf
//! chain is walked left to right under one shared leaf latch at a time (the latch order every
//! scan keeps), so a writer waits at most for one leaf's visit, never for the whole walk.
//!
//! Bytes are the sizes requested from the allocator (malloc's chunk headers and rounding are
//! not counted): per leaf, the page object and its `Arc`, its record heap (live stored records,
//! the garbage of removed or rewritten ones, room to grow), its slot directory and, when a
//! record of it was ever locked, its lock-hint table. Inner pages are not reachable without
//! the root, so they are estimated from the number of leaves (about one inner page per hundred
//! leaves).

use std::mem::size_of;

use crate::index::{
    BTree, ClusteredRec, LeafGuard, Page, Record, Records, Route, SecondaryRec, SLOT,
};
use crate::lock::LockHint;
use crate::table::Table;

/// An `Arc`'s counts in front of the value it shares (a page).
const ARC_HEADER: u64 = 2 * size_of::<usize>() as u64;

/// One index's memory, as [`Table::footprint`] finds it.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct IndexFootprint {
    /// Leaf pages in the leaf chain.
    pub leaf_pages: u64,
    /// Inner pages (estimated from `leaf_pages`).
    pub inner_pages: u64,
    /// Records, delete-marked ones included.
    pub records: u64,
    /// Delete-marked records (awaiting purge, still holding their bytes).
    pub delete_marked: u64,
    /// Bytes the records hold: their stored forms in the page heaps and their directory slots.
    pub record_bytes: u64,
    /// Bytes the leaves have allocated but hold no live record in: the heaps' garbage
    /// (records purge and rollback removed, old forms of rewritten ones), which the page's
    /// next compaction reuses, and the heaps' and directories' room to grow.
    pub free_bytes: u64,
    /// Bytes of the page objects themselves and their lock-hint tables, inner pages
    /// (estimated) included.
    pub page_bytes: u64,
}

impl IndexFootprint {
    /// Every byte the index holds: records, free slots and pages.
    pub fn total_bytes(&self) -> u64 {
        self.record_bytes + self.free_bytes + self.page_bytes
    }

    /// Leaf and inner pages.
    pub fn pages(&self) -> u64 {
        self.leaf_pages + self.inner_pages
    }
}

/// A table's memory: its clustered index (the rows) and its secondary indexes.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TableFootprint {
    /// The clustered index: records with their rows.
    pub clustered: IndexFootprint,
    /// Each secondary index, in [`crate::TableDef::indexes`] order after the clustered one.
    pub secondary: Vec<IndexFootprint>,
}

impl TableFootprint {
    /// Bytes of every secondary index together.
    pub fn secondary_bytes(&self) -> u64 {
        self.secondary.iter().map(IndexFootprint::total_bytes).sum()
    }

    /// Reserved but empty slot bytes of every index together.
    pub fn free_bytes(&self) -> u64 {
        self.clustered.free_bytes + self.secondary.iter().map(|s| s.free_bytes).sum::<u64>()
    }

    /// Every byte the table's indexes hold.
    pub fn total_bytes(&self) -> u64 {
        self.clustered.total_bytes() + self.secondary_bytes()
    }
}

/// A record kind's delete mark, read in place, for the walk.
trait Marked: Record {
    fn marked(records: &Records<Self>, i: usize) -> bool;
}

impl Marked for ClusteredRec {
    fn marked(records: &Records<Self>, i: usize) -> bool {
        records.at(i).delete_mark()
    }
}

impl Marked for SecondaryRec {
    fn marked(records: &Records<Self>, i: usize) -> bool {
        records.at(i).delete_mark()
    }
}

/// Walks `tree`'s leaf chain (see the module comment).
fn index_footprint<R: Marked>(tree: &BTree<R>) -> IndexFootprint {
    let waits = &tree.stats().page_latch_waits;
    let page = ARC_HEADER + size_of::<Page<R>>() as u64;
    let mut f = IndexFootprint::default();
    let mut visit = |records: &Records<R>| {
        let (len, used) = (records.len() as u64, records.used() as u64);
        f.leaf_pages += 1;
        f.records += len;
        f.record_bytes += used + len * SLOT as u64;
        f.free_bytes += records.heap_capacity() as u64 - used
            + (records.slot_capacity() as u64 - len) * SLOT as u64;
        f.page_bytes += page;
        if let Some(hints) = records.hint_table_len() {
            f.page_bytes += (hints * size_of::<LockHint>()) as u64;
        }
        f.delete_marked += (0..records.len())
            .map(|i| u64::from(R::marked(records, i)))
            .sum::<u64>();
    };
    let first: LeafGuard<R> = tree.descend(&[], Route::BeforeEqual, false, None);
    visit(&first.records);
    let mut next = first.next.clone();
    drop(first);
    while let Some(p) = next {
        let leaf = Page::read(p, waits);
        visit(&leaf.records);
        next = leaf.next.clone();
    }
    let (pages, bytes) = inner_estimate::<R>(f.leaf_pages, tree.capacity().inner as u64);
    f.inner_pages = pages;
    f.page_bytes += bytes;
    f
}

/// Inner pages above `leaves` leaves and their bytes, estimated: inner pages three quarters
/// full (a split leaves halves, appends fill them), each child with an 8-byte pointer and a
/// 24-byte separator slot (separators longer than that are not counted).
fn inner_estimate<R: Record>(leaves: u64, fanout: u64) -> (u64, u64) {
    let per_page = (fanout * 3 / 4).max(2);
    let page = ARC_HEADER + size_of::<Page<R>>() as u64;
    let (mut pages, mut bytes, mut level) = (0, 0, leaves);
    while level > 1 {
        let above = level.div_ceil(per_page);
        pages += above;
        bytes += above * page + level * (8 + size_of::<crate::KeyBuf>() as u64);
        level = above;
    }
    (pages, bytes)
}

impl Table {
    /// What the table's indexes hold in memory now (see [`TableFootprint`]). Walks every
    /// leaf of every index, one shared leaf latch at a time: the cost grows with the table
    /// (about a record's cache miss per record), and it never waits for a row lock.
    pub fn footprint(&self) -> TableFootprint {
        TableFootprint {
            clustered: index_footprint(&self.clustered),
            secondary: self
                .secondaries
                .iter()
                .map(|s| index_footprint(&s.tree))
                .collect(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::catalog::{Column, IndexDef, IndexKind, TableDef};
    use crate::value::Value;
    use crate::{ColumnType, InsertOptions, IntKind, PageCapacity};

    fn table() -> Table {
        let int = ColumnType::Integer {
            kind: IntKind::Int,
            unsigned: false,
        };
        let def = TableDef::new(
            "t",
            vec![
                Column::new("id", int).not_null(),
                Column::new("k", int).not_null(),
                Column::new("c", ColumnType::VarChar(100)).not_null(),
            ],
            vec![
                IndexDef::new("PRIMARY", IndexKind::Primary, vec![0]),
                IndexDef::new("k", IndexKind::NonUnique, vec![1]),
            ],
        )
        .unwrap();
        Table::new(def, PageCapacity { leaf: 8, inner: 4 })
    }

    fn insert(t: &Table, id: i64) {
        let row = vec![
            Value::Int(id),
            Value::Int(id % 7),
            Value::str(&"x".repeat(50)),
        ];
        t.insert(row, &InsertOptions::default()).unwrap();
    }

    #[test]
    fn an_empty_table_holds_one_empty_leaf_per_index() {
        let f = table().footprint();
        for ix in std::iter::once(&f.clustered).chain(&f.secondary) {
            assert_eq!((ix.leaf_pages, ix.inner_pages, ix.records), (1, 0, 0));
            // a leaf's heap and directory are allocated by its first insert
            assert_eq!((ix.record_bytes, ix.free_bytes), (0, 0));
            assert!(ix.page_bytes > 0, "{ix:?}");
        }
        assert_eq!(
            f.total_bytes(),
            f.clustered.page_bytes + f.secondary[0].page_bytes
        );
    }

    #[test]
    fn records_are_counted_with_their_rows_and_grow_linearly() {
        let t = table();
        for id in 1..=100 {
            insert(&t, id);
        }
        let a = t.footprint();
        assert_eq!((a.clustered.records, a.secondary[0].records), (100, 100));
        // Each row: its stored form (transaction id, roll pointer, lengths, key, at least the
        // 50-byte text) and its directory slot.
        let per_row = a.clustered.record_bytes / 100;
        assert!(per_row >= (13 + 50 + SLOT) as u64, "{per_row}");
        // A secondary record: the key and the primary key, a few bytes of header, its slot.
        let per_entry = a.secondary[0].record_bytes / 100;
        assert_eq!(
            a.secondary[0].record_bytes,
            100 * per_entry,
            "equal-length entries"
        );
        assert!(per_entry < 32, "{per_entry}");
        assert!(a.clustered.leaf_pages >= 100 / 8 && a.clustered.inner_pages > 0);
        for id in 101..=200 {
            insert(&t, id);
        }
        let b = t.footprint();
        let ratio = b.total_bytes() as f64 / a.total_bytes() as f64;
        assert!((1.8..2.2).contains(&ratio), "{ratio}");
    }

    #[test]
    fn delete_marked_records_keep_their_bytes_until_removed() {
        let t = table();
        for id in 1..=40 {
            insert(&t, id);
        }
        let before = t.footprint();
        let pk = t
            .primary_key_of(&[Value::Int(3), Value::Int(3), Value::str("")])
            .unwrap();
        t.clustered
            .modify(&pk, |r, _| r.set_delete_mark(true))
            .unwrap();
        let marked = t.footprint();
        assert_eq!(marked.clustered.delete_marked, 1);
        assert_eq!(marked.total_bytes(), before.total_bytes());
        let removed = t.clustered.remove_if(&pk, |_| true).unwrap();
        let after = t.footprint();
        assert_eq!(after.clustered.records, 39);
        let freed = (removed.stored_len() + SLOT) as u64;
        assert_eq!(
            after.clustered.record_bytes,
            before.clustered.record_bytes - freed
        );
        assert_eq!(
            after.clustered.free_bytes,
            before.clustered.free_bytes + freed,
            "the removed record's bytes and slot are free for the page's next inserts"
        );
    }
}
