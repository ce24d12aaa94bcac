//! The B+tree: point operations and inserts with latch coupling.
//!
//! Latch order, which every path keeps (so latching cannot deadlock): parent before child, and
//! at one level left sibling before right; no thread latches a page while holding a latch on
//! a page after it in that order. Point reads and in-place changes descend with shared latches
//! on inner pages and take only the leaf shared or exclusive. An insert first tries that
//! (optimistic); if the leaf is full it descends again with exclusive latches from the root,
//! releasing every ancestor above a child that cannot split (pessimistic), then splits
//! bottom-up through the latches it kept. The root page never moves: a root split moves its
//! contents into a new child. A leaf emptied by purge or rollback is unlinked from its
//! parent and the leaf chain (left sibling, then the leaf, under the parent's exclusive latch)
//! unless it is its parent's first child, so scans do not step over ever more empty leaves;
//! pages are not merged otherwise, and inner pages stay.

use std::mem::take;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::sync::Arc;

use crate::index::key_buf::KeyBuf;
use crate::index::page::{
    LeafGuard, Page, PageCapacity, PageData, Records, WriteGuard, PAGE_BYTES, SLOT,
};
use crate::index::record::Record;
use crate::key::cmp_prefix;

/// INNODB_METRICS-style counters of one index.
#[derive(Debug, Default)]
pub struct IndexStats {
    /// Page latch acquisitions that had to block (`tpbed_page_latch_waits`).
    pub page_latch_waits: AtomicU64,
    /// Page splits (`index_page_splits`).
    pub page_splits: AtomicU64,
    /// Leaves unlinked from the tree, emptied or merged into a sibling
    /// (`index_page_discards`, which in InnoDB counts emptied ones only).
    pub page_discards: AtomicU64,
    /// Underfull leaves whose records moved into a sibling (`index_page_merge_successful`).
    pub page_merges: AtomicU64,
    /// Cursor restores that found their page unchanged.
    pub optimistic_restores: AtomicU64,
    /// Cursor restores that re-descended from the root.
    pub pessimistic_restores: AtomicU64,
}

/// How a descent picks a child for a (possibly partial) search key `t`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Route {
    /// Towards the first record `>= t` (and the last `< t`).
    BeforeEqual,
    /// Towards the first record `> t` (and the last `<= t`); for a whole key, the one leaf
    /// whose range holds it.
    AfterEqual,
}

impl Route {
    /// How many of `sorted` (separators or record keys) lie before the target position.
    pub(crate) fn count_before<T>(
        self,
        sorted: &[T],
        key: impl Fn(&T) -> &[u8],
        t: &[u8],
    ) -> usize {
        match self {
            Route::BeforeEqual => sorted.partition_point(|s| cmp_prefix(key(s), t).is_lt()),
            Route::AfterEqual => sorted.partition_point(|s| cmp_prefix(key(s), t).is_le()),
        }
    }
}

/// A B+tree of records of type `R`.
#[derive(Debug)]
pub struct BTree<R: Record> {
    root: Arc<Page<R>>,
    capacity: PageCapacity,
    next_page_id: AtomicU64,
    stats: IndexStats,
}

impl<R: Record> BTree<R> {
    /// An empty tree.
    pub fn new(capacity: PageCapacity) -> BTree<R> {
        assert!(
            capacity.leaf >= 2 && capacity.inner >= 3,
            "page capacity too small"
        );
        BTree {
            root: Page::new(0, PageData::leaf(Records::default())),
            capacity,
            next_page_id: AtomicU64::new(1),
            stats: IndexStats::default(),
        }
    }

    /// The index's counters.
    pub fn stats(&self) -> &IndexStats {
        &self.stats
    }

    /// The page capacity the tree was built with.
    pub fn capacity(&self) -> PageCapacity {
        self.capacity
    }

    fn waits(&self) -> &AtomicU64 {
        &self.stats.page_latch_waits
    }

    /// Descends to the leaf for `target` along `route`, latching inner pages shared and the
    /// leaf shared or exclusive. With `fence`, stores there the tightest separator below the
    /// leaf's range (None for the leftmost leaf).
    pub(crate) fn descend(
        &self,
        target: &[u8],
        route: Route,
        write_leaf: bool,
        mut fence: Option<&mut Option<KeyBuf>>,
    ) -> LeafGuard<R> {
        loop {
            if let Some(f) = fence.as_mut() {
                **f = None;
            }
            let root = Page::read(self.root.clone(), self.waits());
            if root.level == 0 {
                if !write_leaf {
                    return LeafGuard::Read(root);
                }
                drop(root);
                let w = Page::write(self.root.clone(), self.waits());
                if w.level != 0 {
                    continue; // the root split while we switched latches
                }
                return LeafGuard::Write(w);
            }
            let mut cur = root;
            loop {
                let i = route.count_before(&cur.keys, |k| k, target);
                if i > 0 {
                    if let Some(f) = fence.as_mut() {
                        **f = Some(cur.keys[i - 1].clone());
                    }
                }
                let child = cur.children[i].clone();
                if cur.level == 1 {
                    let leaf = if write_leaf {
                        LeafGuard::Write(Page::write(child, self.waits()))
                    } else {
                        LeafGuard::Read(Page::read(child, self.waits()))
                    };
                    return leaf; // `cur` is released only now, after the leaf is latched
                }
                cur = Page::read(child, self.waits());
            }
        }
    }

    /// Reads the record with exactly `key`.
    pub fn get<T>(&self, key: &[u8], f: impl FnOnce(R::Ref<'_>) -> T) -> Option<T> {
        let leaf = self.descend(key, Route::AfterEqual, false, None);
        let i = leaf.records.search(key).ok()?;
        Some(f(leaf.records.at(i)))
    }

    /// Changes the record with exactly `key` in place under the leaf's exclusive latch: `f`
    /// edits an owned copy (and gets the leaf's `max_trx_id`), which is written back to the
    /// same slot. `f` must not change the record's key.
    pub fn modify<T>(&self, key: &[u8], f: impl FnOnce(&mut R, &mut u64) -> T) -> Option<T> {
        let mut leaf = self.descend(key, Route::AfterEqual, true, None);
        let data = leaf.data_mut().expect("write latch");
        let i = data.records.search(key).ok()?;
        let mut rec = data.records.load(i);
        let out = f(&mut rec, &mut data.max_trx_id);
        debug_assert_eq!(rec.key(), key, "modify changed a key");
        data.records.replace(i, &rec);
        Some(out)
    }

    /// Changes the record with exactly `key` where it is stored, under the leaf's exclusive
    /// latch: `f` gets the stored bytes (and the leaf's `max_trx_id`) and may rewrite fixed
    /// fields only, never a length or the key. No copy of the record is made, so a change
    /// to a record's header costs no memory however long its row. Where the change does not
    /// fit the stored bytes, `f` returns the changed record (same key) with its result, and
    /// the page stores it in the old one's place.
    pub(crate) fn modify_stored<T>(
        &self,
        key: &[u8],
        f: impl FnOnce(&mut [u8], &mut u64) -> (T, Option<R>),
    ) -> Option<T> {
        let mut leaf = self.descend(key, Route::AfterEqual, true, None);
        let data = leaf.data_mut().expect("write latch");
        let i = data.records.search(key).ok()?;
        let (out, rewrite) = f(data.records.stored_mut(i), &mut data.max_trx_id);
        if let Some(rec) = rewrite {
            data.records.replace(i, &rec);
        }
        debug_assert_eq!(data.records.key(i), key, "modify_stored changed a key");
        Some(out)
    }

    /// Physically removes the record with exactly `key` if `pred` accepts it (purge).
    pub(crate) fn remove_if(&self, key: &[u8], pred: impl FnOnce(R::Ref<'_>) -> bool) -> Option<R> {
        self.remove_reporting(key, pred, |_| {})
    }

    /// [`BTree::remove_if`] that, once the record is removed and still under the leaf latch,
    /// calls `after` with the record now after the removed key (None: the supremum), for the
    /// lock manager's gap-lock inheritance.
    pub(crate) fn remove_reporting(
        &self,
        key: &[u8],
        pred: impl FnOnce(R::Ref<'_>) -> bool,
        after: impl FnOnce(Option<R::Ref<'_>>),
    ) -> Option<R> {
        let mut leaf = self.descend(key, Route::AfterEqual, true, None);
        let data = leaf.data_mut().expect("write latch");
        let i = data.records.search(key).ok()?;
        if !pred(data.records.at(i)) {
            return None;
        }
        data.modify_count += 1;
        let rec = data.records.remove(i);
        self.with_successor(data, i, after);
        let underfull = self.underfull(data) && !Arc::ptr_eq(leaf.page(), &self.root);
        drop(leaf);
        if underfull {
            self.merge_or_discard(rec.key());
        }
        Some(rec)
    }

    /// Below half full (InnoDB's default MERGE_THRESHOLD of 50 %): both its bytes and its
    /// record count under half the page's.
    fn underfull(&self, page: &PageData<R>) -> bool {
        page.records.used() * 2 < PAGE_BYTES && page.records.len() * 2 < self.capacity.leaf
    }

    /// Whether `to` can take all of `from`'s records without passing either page limit.
    fn can_absorb(&self, to: &PageData<R>, from: &PageData<R>) -> bool {
        to.records.len() + from.records.len() <= self.capacity.leaf
            && to.records.used() + from.records.used() <= PAGE_BYTES
    }

    /// Shrinks the tree around the underfull leaf that `key` routes to, under its parent's
    /// exclusive latch (shared latches above it), then the leaf and a sibling, left before
    /// right, so a sibling's `next` and the parent's separators change together:
    /// - an empty leaf that is not its parent's first child is unlinked (discarded);
    /// - otherwise an underfull leaf moves its records to the end of its left sibling, or
    ///   takes its right sibling's records, when they fit, and the emptied page is unlinked.
    ///
    /// An unlinked page is marked freed (saved positions on it restore by descent) and keeps
    /// its `next`, so a walker already past its left sibling still reaches the rest. Pages
    /// under different parents are left as they are.
    fn merge_or_discard(&self, key: &[u8]) {
        let Some(mut parent) = self.latch_leaf_parent(key) else {
            return;
        };
        let i = Route::AfterEqual.count_before(&parent.keys, |k| k, key);
        if i > 0 {
            let mut left = Page::write(parent.children[i - 1].clone(), self.waits());
            let mut leaf = Page::write(parent.children[i].clone(), self.waits());
            let empty = leaf.records.is_empty();
            if empty || (self.underfull(&leaf) && self.can_absorb(&left, &leaf)) {
                if !empty {
                    self.move_records(&mut leaf, &mut left);
                }
                Self::unlink(&mut parent, i, &mut left, &mut leaf);
                self.stats.page_discards.fetch_add(1, Relaxed);
                return;
            }
        }
        if i + 1 < parent.children.len() {
            let mut leaf = Page::write(parent.children[i].clone(), self.waits());
            if !self.underfull(&leaf) {
                return;
            }
            let mut right = Page::write(parent.children[i + 1].clone(), self.waits());
            if self.can_absorb(&leaf, &right) {
                self.move_records(&mut right, &mut leaf);
                Self::unlink(&mut parent, i + 1, &mut leaf, &mut right);
                self.stats.page_discards.fetch_add(1, Relaxed);
            }
        }
    }

    /// The exclusive latch on the level-1 page above the leaf that `key` routes to (shared
    /// latches above it, released on the way); None if the root is a leaf.
    fn latch_leaf_parent(&self, key: &[u8]) -> Option<WriteGuard<R>> {
        let root = Page::read(self.root.clone(), self.waits());
        match root.level {
            0 => None,
            1 => {
                drop(root);
                let p = Page::write(self.root.clone(), self.waits());
                // The root may have split while we switched latches.
                (p.level == 1).then_some(p)
            }
            _ => {
                let mut cur = root;
                loop {
                    let i = Route::AfterEqual.count_before(&cur.keys, |k| k, key);
                    let child = cur.children[i].clone();
                    if cur.level == 2 {
                        return Some(Page::write(child, self.waits())); // `cur` released after
                    }
                    cur = Page::read(child, self.waits());
                }
            }
        }
    }

    /// Appends all of `from`'s records to `to` (its right neighbour's keys are all larger).
    fn move_records(&self, from: &mut PageData<R>, to: &mut PageData<R>) {
        to.records.append_from(&mut from.records);
        to.max_trx_id = to.max_trx_id.max(from.max_trx_id);
        to.modify_count += 1;
        self.stats.page_merges.fetch_add(1, Relaxed);
    }

    /// Unlinks the empty child `i` of `parent` (whose left neighbour `left` is latched).
    fn unlink(parent: &mut PageData<R>, i: usize, left: &mut PageData<R>, gone: &mut PageData<R>) {
        debug_assert!(gone.records.is_empty());
        left.next = gone.next.clone();
        gone.freed = true;
        gone.modify_count += 1;
        parent.keys.remove(i - 1);
        parent.children.remove(i);
        parent.modify_count += 1;
    }

    /// Inserts `rec`. If a record with an equal key exists (delete-marked or not),
    /// `on_equal(existing, rec)` decides under the leaf latch: it may change (an owned copy
    /// of) the existing record, written back in place (e.g. a cleared delete mark), and
    /// return Ok, or refuse with an error.
    /// The leaf's `max_trx_id` is raised to `trx_id`.
    pub(crate) fn insert_with<E>(
        &self,
        rec: R,
        trx_id: u64,
        on_equal: impl FnOnce(&mut R, R) -> Result<(), E>,
    ) -> Result<(), E> {
        self.insert_checked(rec, trx_id, |_| Ok(()), on_equal)
    }

    /// [`BTree::insert_with`] with a hook for the lock manager: when no equal key exists,
    /// `check(successor)` runs under the latch of the leaf the record goes to (and, if the
    /// successor is on a later leaf, that leaf's shared latch), just before the insert, with
    /// the first record after the new key (None: the supremum of the index). An error
    /// aborts the insert (e.g. the gap is locked: the caller releases, waits, retries).
    pub(crate) fn insert_checked<E>(
        &self,
        rec: R,
        trx_id: u64,
        check: impl FnOnce(Option<R::Ref<'_>>) -> Result<(), E>,
        on_equal: impl FnOnce(&mut R, R) -> Result<(), E>,
    ) -> Result<(), E> {
        let mut leaf = self.descend(rec.key(), Route::AfterEqual, true, None);
        let data = leaf.data_mut().expect("write latch");
        data.max_trx_id = data.max_trx_id.max(trx_id);
        let pos = match data.records.search(rec.key()) {
            Ok(i) => return Self::rewrite_equal(&mut data.records, i, rec, on_equal),
            Err(pos) => pos,
        };
        if data.records.fits(&rec, self.capacity.leaf) {
            self.with_successor(data, pos, check)?;
            data.records.insert(pos, &rec);
            data.modify_count += 1;
            return Ok(());
        }
        drop(leaf);
        self.insert_pessimistic(rec, trx_id, check, on_equal)
    }

    /// Runs `on_equal` on an owned copy of slot `i`'s record and writes the copy back.
    fn rewrite_equal<E>(
        records: &mut Records<R>,
        i: usize,
        rec: R,
        on_equal: impl FnOnce(&mut R, R) -> Result<(), E>,
    ) -> Result<(), E> {
        let mut existing = records.load(i);
        let out = on_equal(&mut existing, rec);
        records.replace(i, &existing);
        out
    }

    /// Calls `f` with the first record at or after slot `pos` of `leaf`, following the leaf
    /// chain (shared latches, left to right) past empty leaves.
    fn with_successor<T>(
        &self,
        leaf: &PageData<R>,
        pos: usize,
        f: impl FnOnce(Option<R::Ref<'_>>) -> T,
    ) -> T {
        if let Some(r) = leaf.records.get(pos) {
            return f(Some(r));
        }
        let mut next = leaf.next.clone();
        while let Some(page) = next {
            let g = Page::read(page, self.waits());
            if let Some(r) = g.records.first() {
                return f(Some(r));
            }
            next = g.next.clone();
        }
        f(None)
    }

    fn is_safe(&self, page: &PageData<R>, rec: &R) -> bool {
        if page.level == 0 {
            page.records.fits(rec, self.capacity.leaf)
        } else {
            page.children.len() < self.capacity.inner
        }
    }

    fn insert_pessimistic<E>(
        &self,
        rec: R,
        trx_id: u64,
        check: impl FnOnce(Option<R::Ref<'_>>) -> Result<(), E>,
        on_equal: impl FnOnce(&mut R, R) -> Result<(), E>,
    ) -> Result<(), E> {
        let mut path: Vec<WriteGuard<R>> = vec![Page::write(self.root.clone(), self.waits())];
        loop {
            let top = path.last().expect("path");
            if top.level == 0 {
                break;
            }
            let i = Route::AfterEqual.count_before(&top.keys, |k| k, rec.key());
            let child = Page::write(top.children[i].clone(), self.waits());
            if self.is_safe(&child, &rec) {
                path.clear(); // no split can reach the ancestors
            }
            path.push(child);
        }
        let leaf = path.last_mut().expect("path");
        leaf.max_trx_id = leaf.max_trx_id.max(trx_id);
        let pos = match leaf.records.search(rec.key()) {
            Ok(i) => return Self::rewrite_equal(&mut leaf.records, i, rec, on_equal),
            Err(pos) => pos,
        };
        self.with_successor(leaf, pos, check)?;
        leaf.modify_count += 1;
        if leaf.records.fits(&rec, self.capacity.leaf) {
            leaf.records.insert(pos, &rec);
            return Ok(());
        }
        let mut carry = Some(self.split_leaf(leaf, pos, rec));
        let mut level = path.len() - 1;
        while let Some((sep, right)) = carry.take() {
            self.stats.page_splits.fetch_add(1, Relaxed);
            if level == 0 {
                debug_assert!(Arc::ptr_eq(&path[0].page, &self.root), "a safe page split");
                self.grow_root(&mut path[0], sep, right);
                break;
            }
            level -= 1;
            let parent = &mut path[level];
            let i = parent.keys.partition_point(|s| s.as_ref() < sep.as_ref());
            parent.keys.insert(i, sep);
            parent.children.insert(i + 1, right);
            parent.modify_count += 1;
            if parent.children.len() > self.capacity.inner {
                carry = Some(self.split_inner(parent));
            }
        }
        Ok(())
    }

    fn new_page(&self, data: PageData<R>) -> Arc<Page<R>> {
        Page::new(self.next_page_id.fetch_add(1, Relaxed), data)
    }

    /// Splits a full leaf while inserting `rec` at `pos`; returns the separator and the new
    /// right sibling (already linked after `leaf`). Appending at the end of the last leaf
    /// starts a new leaf with just `rec`, so ascending inserts fill pages completely; that
    /// leaf is given the full leaf's heap room and a directory for as many records at once,
    /// as the next inserts will fill it.
    fn split_leaf(&self, leaf: &mut PageData<R>, pos: usize, rec: R) -> (KeyBuf, Arc<Page<R>>) {
        let right_records = if pos == leaf.records.len() && leaf.next.is_none() {
            let full = &leaf.records;
            let mut right = Records::with_capacity(
                full.heap_capacity().min(PAGE_BYTES),
                full.len().min(PAGE_BYTES / SLOT),
            );
            right.insert(0, &rec);
            right
        } else {
            // Half the records move right; a lone record moves right of a smaller new key,
            // so neither side is left empty.
            let len = leaf.records.len();
            let mid = if len == 1 && pos == 0 {
                0
            } else {
                len.div_ceil(2)
            };
            let mut right = leaf.records.split_off(mid);
            if pos < mid || (pos == mid && !right.is_empty()) {
                leaf.records.insert(pos, &rec);
            } else {
                right.insert(pos - mid, &rec);
            }
            right
        };
        let sep = KeyBuf::from(right_records.key(0));
        let mut data = PageData::leaf(right_records);
        data.next = leaf.next.take();
        data.max_trx_id = leaf.max_trx_id;
        let right = self.new_page(data);
        leaf.next = Some(right.clone());
        (sep, right)
    }

    fn split_inner(&self, page: &mut PageData<R>) -> (KeyBuf, Arc<Page<R>>) {
        let mid = page.children.len() / 2;
        let children = page.children.split_off(mid);
        let keys = page.keys.split_off(mid);
        let sep = page.keys.pop().expect("separator");
        page.modify_count += 1;
        let mut data = PageData::leaf(Records::default());
        data.level = page.level;
        data.keys = keys;
        data.children = children;
        (sep, self.new_page(data))
    }

    /// The root split: its contents move to a new left child; the root gains a level.
    fn grow_root(&self, root: &mut PageData<R>, sep: KeyBuf, right: Arc<Page<R>>) {
        let left = PageData {
            modify_count: 0,
            level: root.level,
            freed: false,
            records: take(&mut root.records),
            keys: take(&mut root.keys),
            children: take(&mut root.children),
            next: root.next.take(),
            max_trx_id: root.max_trx_id,
        };
        root.level += 1;
        root.keys = vec![sep];
        root.children = vec![self.new_page(left), right];
        root.modify_count += 1;
    }

    /// Calls `f` with every record in key order, leaf by leaf under shared latches (left to
    /// right, one leaf at a time).
    pub(crate) fn for_each_record(&self, mut f: impl FnMut(R::Ref<'_>)) {
        let first = self.descend(&[], Route::BeforeEqual, false, None);
        first.records.iter().for_each(&mut f);
        let mut next = first.next.clone();
        drop(first);
        while let Some(page) = next {
            let leaf = Page::read(page, self.waits());
            leaf.records.iter().for_each(&mut f);
            next = leaf.next.clone();
        }
    }

    /// Empties the tree. Every page but the root is marked freed (so saved positions on it
    /// restore by descent), top-down under exclusive latches.
    pub fn truncate(&self) {
        let mut root = Page::write(self.root.clone(), self.waits());
        let mut queue: Vec<Arc<Page<R>>> = take(&mut root.children);
        while let Some(p) = queue.pop() {
            let mut g = Page::write(p, self.waits());
            queue.append(&mut g.children);
            g.records.clear();
            g.keys.clear();
            g.next = None;
            g.freed = true;
            g.modify_count += 1;
        }
        root.level = 0;
        root.keys.clear();
        root.records.clear();
        root.next = None;
        root.max_trx_id = 0;
        root.modify_count += 1;
    }

    /// (leaves, empty leaves) along the leaf chain and the number of level-1 pages, for tests.
    #[cfg(test)]
    pub(crate) fn leaf_census(&self) -> (usize, usize, usize) {
        let mut level: Vec<Arc<Page<R>>> = vec![self.root.clone()];
        let mut parents = 0;
        loop {
            let gs: Vec<_> = level
                .iter()
                .map(|p| Page::read(p.clone(), self.waits()))
                .collect();
            if gs[0].level == 0 {
                break;
            }
            if gs[0].level == 1 {
                parents = gs.len();
            }
            let below = gs.iter().flat_map(|g| g.children.iter().cloned()).collect();
            drop(gs);
            level = below;
        }
        let (mut leaves, mut empty) = (0, 0);
        let mut next = Some(level[0].clone());
        while let Some(p) = next {
            let g = Page::read(p, self.waits());
            leaves += 1;
            empty += usize::from(g.records.is_empty());
            next = g.next.clone();
        }
        (leaves, empty, parents)
    }

    /// Sets the root page's contents, for [`BTree::from_sorted`] building a tree no other
    /// thread sees yet.
    pub(super) fn fill_root(&self, f: impl FnOnce(&mut PageData<R>)) {
        let mut root = Page::write(self.root.clone(), self.waits());
        f(&mut root);
        root.modify_count += 1;
    }

    /// The id the next new page gets, for [`BTree::from_sorted`], which numbers its pages.
    pub(super) fn set_next_page_id(&self, id: u64) {
        self.next_page_id.store(id, Relaxed);
    }

    #[cfg(test)]
    /// The root page, for structural checks in tests.
    pub(super) fn root_page(&self) -> Arc<Page<R>> {
        self.root.clone()
    }

    #[cfg(test)]
    /// Tree height (1 for a lone leaf root).
    pub(crate) fn height(&self) -> usize {
        let g = Page::read(self.root.clone(), self.waits());
        usize::from(g.level) + 1
    }
}
