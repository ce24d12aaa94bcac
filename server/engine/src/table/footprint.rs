//! What a table's indexes hold in memory, read without changing anything: each index's leaf
//! chain is walked left to right under one shared leaf latch at a time (the latch order every
//! scan keeps), so a writer waits at most for one leaf's visit, never for the whole walk.
//!
//! Bytes are the sizes requested from the allocator (malloc's chunk headers and rounding are
//! not counted): per leaf, the page object and its `Arc`, the record slots the page has
//! reserved (used or not) and the heap each record owns (row bytes with their header, keys
//! too long to live in the slot). Inner pages are not reachable without the root, so they
//! are estimated from the number of leaves (about one inner page per hundred leaves).

use std::mem::size_of;

use crate::index::{BTree, ClusteredRec, LeafGuard, Page, Record, Route, SecondaryRec};
use crate::table::Table;

/// Key bytes a [`crate::KeyBuf`] (a clustered key) keeps inside its slot; longer keys are a
/// separate allocation of their length.
const CLUSTERED_KEY_INLINE: usize = 22;
/// Key bytes a [`SecondaryRec`] keeps inside its slot; longer keys are boxed.
const SECONDARY_KEY_INLINE: usize = 20;
/// A row allocation's header ([`crate::RowBuf`]: share count and length).
const ROW_HEADER: u64 = 8;
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
    /// Bytes the records hold: their slots and what they own (row bytes, long keys).
    pub record_bytes: u64,
    /// Bytes of slots the leaves have reserved but hold no record in: a page's room to grow
    /// and the slots purge and rollback emptied, which the page's next inserts reuse.
    pub free_bytes: u64,
    /// Bytes of the page objects themselves, inner pages (estimated) included.
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

/// A record's own heap and its delete mark, for the walk.
trait Held: Record {
    fn heap_bytes(&self) -> u64;
    fn marked(&self) -> bool;
}

impl Held for ClusteredRec {
    fn heap_bytes(&self) -> u64 {
        let key = self.key.len();
        let key = if key > CLUSTERED_KEY_INLINE { key } else { 0 };
        let row = self.row.len() as u64;
        let header = if row >= u64::from(u32::MAX) {
            ROW_HEADER + 8
        } else {
            ROW_HEADER
        };
        key as u64 + header + row
    }
    fn marked(&self) -> bool {
        self.delete_mark()
    }
}

impl Held for SecondaryRec {
    fn heap_bytes(&self) -> u64 {
        let key = self.key().len();
        if key > SECONDARY_KEY_INLINE {
            key as u64
        } else {
            0
        }
    }
    fn marked(&self) -> bool {
        self.delete_mark()
    }
}

/// Walks `tree`'s leaf chain (see the module comment).
fn index_footprint<R: Held>(tree: &BTree<R>) -> IndexFootprint {
    let waits = &tree.stats().page_latch_waits;
    let slot = size_of::<R>() as u64;
    let page = ARC_HEADER + size_of::<Page<R>>() as u64;
    let mut f = IndexFootprint::default();
    let mut visit = |records: &[R], capacity: usize| {
        f.leaf_pages += 1;
        f.records += records.len() as u64;
        f.page_bytes += page;
        f.free_bytes += (capacity - records.len()) as u64 * slot;
        f.record_bytes += records.len() as u64 * slot;
        for r in records {
            f.record_bytes += r.heap_bytes();
            f.delete_marked += u64::from(r.marked());
        }
    };
    let first: LeafGuard<R> = tree.descend(&[], Route::BeforeEqual, false, None);
    visit(&first.records, first.records.capacity());
    let mut next = first.next.clone();
    drop(first);
    while let Some(p) = next {
        let leaf = Page::read(p, waits);
        visit(&leaf.records, leaf.records.capacity());
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
    fn an_empty_table_holds_one_reserved_leaf_per_index() {
        let f = table().footprint();
        for ix in std::iter::once(&f.clustered).chain(&f.secondary) {
            assert_eq!((ix.leaf_pages, ix.inner_pages, ix.records), (1, 0, 0));
            assert_eq!(ix.record_bytes, 0);
            assert!(ix.free_bytes > 0 && ix.page_bytes > 0, "{ix:?}");
        }
        assert_eq!(
            f.free_bytes(),
            f.total_bytes() - f.clustered.page_bytes - f.secondary[0].page_bytes
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
        // Each row: a slot, the row's header and encoded bytes (at least the 50-byte text).
        let per_row = a.clustered.record_bytes / 100;
        assert!(
            per_row >= size_of::<ClusteredRec>() as u64 + ROW_HEADER + 50,
            "{per_row}"
        );
        assert_eq!(
            a.secondary[0].record_bytes,
            100 * size_of::<SecondaryRec>() as u64,
            "short secondary keys live in their slots"
        );
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
        assert_eq!(
            after.clustered.free_bytes,
            before.clustered.free_bytes + size_of::<ClusteredRec>() as u64,
            "the emptied slot is free"
        );
        assert_eq!(
            after.clustered.record_bytes,
            before.clustered.record_bytes - size_of::<ClusteredRec>() as u64 - removed.heap_bytes()
        );
    }
}
