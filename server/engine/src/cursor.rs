//! Cursors over one index: position on a key, step forward or backward, stop on a record,
//! save the position with every latch released, and restore it.
//!
//! A cursor holds at most one leaf latch. Forward steps couple latches left to right (the
//! next leaf is latched before the current one is released); a backward step off a leaf
//! releases it and re-descends to the last record below the current key, since latching a
//! left sibling while holding its right one would break the tree's latch order.
//!
//! Restore: if the saved page still has the saved `modify_count`, the record is in the saved
//! slot (optimistic, one latch); otherwise the cursor descends from the root to the saved key
//! and lands on that record, or, if it is gone, on its successor (forward) or predecessor
//! (backward). This is the protocol the lock manager relies on: lock calls happen under the
//! leaf latch; a transaction that must wait saves, releases everything, waits, restores.
//!
//! Rule for callers: while a cursor holds a latch, do not start another operation on the same
//! tree from the same thread (latches are not re-entrant; a second descent could wait on the
//! cursor's own leaf). Save first, or finish with the record.

use std::sync::atomic::Ordering::Relaxed;
use std::sync::Arc;

use crate::index::{BTree, KeyBuf, LeafGuard, Page, Record, Route};

/// Where a search positions the cursor, comparing records on the search key's length (a
/// prefix of a composite key selects all records that start with it).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SearchMode {
    /// First record `>=` the key.
    Ge,
    /// First record `>` the key (after every record that starts with it).
    Gt,
    /// Last record `<=` the key (the last that starts with it, or before).
    Le,
    /// Last record `<` the key.
    Lt,
}

/// Whether the cursor latches leaves shared or exclusive.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LatchMode {
    /// Shared latches: reads, and lock calls of locking reads.
    Read,
    /// Exclusive latches: the record may be changed in place through the cursor.
    Write,
}

/// Scan direction (for restore: where to land when the saved record is gone).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Direction {
    /// Ascending key order.
    Forward,
    /// Descending key order.
    Backward,
}

/// The outcome of [`Cursor::restore`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Restored {
    /// On the saved record again (it may have been changed in place meanwhile).
    Same,
    /// The saved record is gone: on its successor (forward) or predecessor (backward), or off
    /// the end of the index.
    Moved,
}

/// A position saved by [`Cursor::save`]; holds no latch.
#[derive(Debug)]
pub struct SavedPosition<R: Record> {
    inner: Option<Saved<R>>,
}

#[derive(Debug)]
struct Saved<R: Record> {
    page: Arc<Page<R>>,
    modify_count: u64,
    slot: usize,
    key: KeyBuf,
}

impl<R: Record> SavedPosition<R> {
    /// The saved record's key (None if the cursor was off the end).
    pub fn key(&self) -> Option<&[u8]> {
        self.inner.as_ref().map(|s| &*s.key)
    }
}

/// A cursor on a [`BTree`].
pub struct Cursor<'t, R: Record> {
    tree: &'t BTree<R>,
    mode: LatchMode,
    leaf: Option<LeafGuard<R>>,
    slot: usize,
}

impl<R: Record> std::fmt::Debug for Cursor<'_, R> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Cursor")
            .field("mode", &self.mode)
            .field("page", &self.page_id())
            .field("slot", &self.slot)
            .finish()
    }
}

impl<R: Record> BTree<R> {
    /// An unpositioned cursor.
    pub fn cursor(&self, mode: LatchMode) -> Cursor<'_, R> {
        Cursor {
            tree: self,
            mode,
            leaf: None,
            slot: 0,
        }
    }
}

impl<'t, R: Record> Cursor<'t, R> {
    fn write(&self) -> bool {
        self.mode == LatchMode::Write
    }

    fn latch(&self, page: Arc<Page<R>>) -> LeafGuard<R> {
        let waits = &self.tree.stats().page_latch_waits;
        match self.mode {
            LatchMode::Read => LeafGuard::Read(Page::read(page, waits)),
            LatchMode::Write => LeafGuard::Write(Page::write(page, waits)),
        }
    }

    /// Releases the latch; the cursor becomes unpositioned.
    pub fn release(&mut self) {
        self.leaf = None;
    }

    /// Positions on the record `mode` selects; false if there is none.
    pub(crate) fn search(&mut self, key: &[u8], mode: SearchMode) -> bool {
        self.release();
        match mode {
            SearchMode::Ge | SearchMode::Gt => {
                let route = if mode == SearchMode::Ge {
                    Route::BeforeEqual
                } else {
                    Route::AfterEqual
                };
                let leaf = self.tree.descend(key, route, self.write(), None);
                self.slot = leaf.records.count_before(route, key);
                self.leaf = Some(leaf);
                self.skip_forward()
            }
            SearchMode::Le => self.seek_back(key.into(), true),
            SearchMode::Lt => self.seek_back(key.into(), false),
        }
    }

    /// Positions on the first record of the index.
    pub fn first(&mut self) -> bool {
        self.search(&[], SearchMode::Ge)
    }

    /// Positions on the last record of the index.
    pub fn last(&mut self) -> bool {
        self.search(&[], SearchMode::Le)
    }

    /// From `slot` in the current leaf, moves right to the first existing record.
    fn skip_forward(&mut self) -> bool {
        loop {
            let Some(leaf) = &self.leaf else { return false };
            if self.slot < leaf.records.len() {
                return true;
            }
            let Some(next) = leaf.next.clone() else {
                self.leaf = None;
                return false;
            };
            let next = self.latch(next); // latched before the current leaf is released
            self.leaf = Some(next);
            self.slot = 0;
        }
    }

    /// Positions on the last record `<= target` (`inclusive`) or `< target`.
    fn seek_back(&mut self, mut target: KeyBuf, mut inclusive: bool) -> bool {
        loop {
            let route = if inclusive {
                Route::AfterEqual
            } else {
                Route::BeforeEqual
            };
            let mut fence = None;
            let leaf = self
                .tree
                .descend(&target, route, self.write(), Some(&mut fence));
            let pos = leaf.records.count_before(route, &target);
            if pos > 0 {
                self.leaf = Some(leaf);
                self.slot = pos - 1;
                return true;
            }
            drop(leaf);
            // Nothing at or below the target in this leaf: everything before lies below the
            // leaf's lower separator, strictly to the left.
            match fence {
                None => return false,
                Some(f) => {
                    target = f;
                    inclusive = false;
                }
            }
        }
    }

    /// True when positioned on a record.
    pub(crate) fn is_on_record(&self) -> bool {
        self.leaf
            .as_ref()
            .is_some_and(|l| self.slot < l.records.len())
    }

    /// The current record.
    pub fn record(&self) -> Option<R::Ref<'_>> {
        self.leaf.as_ref().and_then(|l| l.records.get(self.slot))
    }

    /// The current record's key.
    pub(crate) fn record_key(&self) -> Option<&[u8]> {
        let leaf = self.leaf.as_ref()?;
        (self.slot < leaf.records.len()).then(|| leaf.records.key(self.slot))
    }

    /// Id of the latched leaf.
    pub(crate) fn page_id(&self) -> Option<u64> {
        self.leaf.as_ref().map(|l| l.page().id)
    }

    /// The latched leaf's `max_trx_id` (meaningful on secondary indexes).
    pub(crate) fn page_max_trx_id(&self) -> Option<u64> {
        self.leaf.as_ref().map(|l| l.max_trx_id)
    }

    /// Moves to the next record; false (and unpositioned) past the last.
    pub(crate) fn move_next(&mut self) -> bool {
        if !self.is_on_record() {
            return false;
        }
        self.slot += 1;
        self.skip_forward()
    }

    /// Moves to the previous record; false (and unpositioned) before the first.
    pub(crate) fn move_prev(&mut self) -> bool {
        let Some(leaf) = self.leaf.as_ref().filter(|l| self.slot < l.records.len()) else {
            return false;
        };
        if self.slot > 0 {
            self.slot -= 1;
            return true;
        }
        let key = KeyBuf::from(leaf.records.key(self.slot));
        self.release();
        self.seek_back(key, false)
    }

    /// Saves the position and releases the latch.
    pub fn save(&mut self) -> SavedPosition<R> {
        let inner = match self.leaf.take() {
            Some(leaf) if self.slot < leaf.records.len() => Some(Saved {
                page: leaf.page().clone(),
                modify_count: leaf.modify_count,
                slot: self.slot,
                key: leaf.records.key(self.slot).into(),
            }),
            _ => None,
        };
        SavedPosition { inner }
    }

    /// Restores a saved position (see the module docs); a position saved off the end stays
    /// off the end.
    pub fn restore(&mut self, saved: &SavedPosition<R>, dir: Direction) -> Restored {
        self.release();
        let Some(s) = &saved.inner else {
            return Restored::Moved;
        };
        let leaf = self.latch(s.page.clone());
        if !leaf.freed && leaf.modify_count == s.modify_count {
            debug_assert_eq!(leaf.records.key(s.slot), &*s.key);
            self.tree.stats().optimistic_restores.fetch_add(1, Relaxed);
            self.leaf = Some(leaf);
            self.slot = s.slot;
            return Restored::Same;
        }
        drop(leaf);
        self.tree.stats().pessimistic_restores.fetch_add(1, Relaxed);
        let mode = match dir {
            Direction::Forward => SearchMode::Ge,
            Direction::Backward => SearchMode::Le,
        };
        if self.search(&s.key, mode) && self.record_key() == Some(&*s.key) {
            Restored::Same
        } else {
            Restored::Moved
        }
    }
}
