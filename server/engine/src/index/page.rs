//! Pages and their latch guards. A page's data is only touched through a guard, and a guard
//! owns an `Arc` of its page, so latch coupling can hold a child's guard after the parent's is
//! dropped. `modify_count` changes whenever records may have moved between slots (insert,
//! removal, split, truncate), never for in-place changes of a record.

use std::cell::UnsafeCell;
use std::fmt;
use std::marker::PhantomData;
use std::ops::{Deref, DerefMut};
use std::sync::atomic::AtomicU64;
use std::sync::{Arc, OnceLock};

use crate::index::key_buf::KeyBuf;
use crate::index::record::{HintRef, Record};
use crate::index::tree::Route;
use crate::key::cmp_prefix;
use crate::latch::RawLatch;
use crate::lock::LockHint;

/// Records per leaf page and children per inner page. A leaf also splits when its records'
/// bytes would pass [`PAGE_BYTES`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PageCapacity {
    /// Records per leaf at most (the byte budget usually decides first: a 16 KiB page holds
    /// about 75 sysbench rows).
    pub leaf: usize,
    /// Children per inner page.
    pub inner: usize,
}

impl Default for PageCapacity {
    fn default() -> PageCapacity {
        PageCapacity {
            leaf: 512,
            inner: 128,
        }
    }
}

/// Bytes a leaf's stored records may take before an insert splits it, as InnoDB's default
/// 16 KiB page (the slot directory, 4 bytes a record, is kept beside the heap). A page holds
/// at least one record whatever its size, and an in-place change that grows a record may
/// take a page past it until the next insert splits it.
pub const PAGE_BYTES: usize = 16 * 1024;

/// Bytes of a slot in a leaf's directory.
pub(crate) const SLOT: usize = std::mem::size_of::<u32>();

/// The capacity a buffer grows to when `needed` elements must fit: a quarter more than it has
/// (at least `min_step`), not past `limit` unless `needed` is.
fn grown(cap: usize, needed: usize, min_step: usize, limit: usize) -> usize {
    needed.max((cap + (cap / 4).max(min_step)).min(limit))
}

/// A leaf's records: their stored forms in a byte heap (appended; a changed record's old
/// bytes become garbage, reclaimed by compaction) and a directory of heap offsets in key
/// order. Records do not move while any latch on the page is held; under the exclusive latch
/// the heap may be compacted or reallocated (slots keep their order, so an in-place change
/// does not change `modify_count`). Lock hints live in a side table made when a record is
/// first locked ([`HintRef`]), one per slot.
pub(crate) struct Records<R> {
    heap: Vec<u8>,
    slots: Vec<u32>,
    /// Heap bytes of removed or rewritten records.
    garbage: usize,
    hints: OnceLock<Vec<LockHint>>,
    _rec: PhantomData<fn() -> R>,
}

impl<R> Default for Records<R> {
    fn default() -> Records<R> {
        Records {
            heap: Vec::new(),
            slots: Vec::new(),
            garbage: 0,
            hints: OnceLock::new(),
            _rec: PhantomData,
        }
    }
}

impl<R: Record> Records<R> {
    /// No records yet, with room for `heap` bytes and `slots` slots: a page that ascending
    /// inserts will fill as they filled its left neighbour gets that neighbour's room in one
    /// allocation each, instead of growing a quarter at a time through a dozen sizes (which
    /// leaves the allocator a free block of each size behind every page of a bulk load).
    pub(crate) fn with_capacity(heap: usize, slots: usize) -> Records<R> {
        Records {
            heap: Vec::with_capacity(heap),
            slots: Vec::with_capacity(slots),
            ..Records::default()
        }
    }

    /// Records on the page.
    pub(crate) fn len(&self) -> usize {
        self.slots.len()
    }

    /// No record on the page.
    pub(crate) fn is_empty(&self) -> bool {
        self.slots.is_empty()
    }

    /// The stored bytes of slot `i` and beyond.
    fn tail(&self, i: usize) -> &[u8] {
        &self.heap[self.slots[i] as usize..]
    }

    /// The stored bytes of slot `i`.
    fn bytes(&self, i: usize) -> &[u8] {
        let tail = self.tail(i);
        &tail[..R::stored_size(tail)]
    }

    /// The key of slot `i`.
    pub(crate) fn key(&self, i: usize) -> &[u8] {
        R::stored_key(self.tail(i))
    }

    /// The record in slot `i`.
    pub(crate) fn at(&self, i: usize) -> R::Ref<'_> {
        debug_assert!(
            self.hints.get().is_none_or(|h| h.len() == self.len()),
            "a hint table out of step with the slots"
        );
        R::view(self.tail(i), HintRef::new(&self.hints, i, self.len()))
    }

    /// The record in slot `i`, if there is one.
    pub(crate) fn get(&self, i: usize) -> Option<R::Ref<'_>> {
        (i < self.len()).then(|| self.at(i))
    }

    /// The first record.
    pub(crate) fn first(&self) -> Option<R::Ref<'_>> {
        self.get(0)
    }

    /// The records in key order.
    pub(crate) fn iter(&self) -> impl Iterator<Item = R::Ref<'_>> + '_ {
        (0..self.len()).map(|i| self.at(i))
    }

    /// The stored bytes of slot `i`, to edit in place without changing their length or key.
    pub(crate) fn stored_mut(&mut self, i: usize) -> &mut [u8] {
        let start = self.slots[i] as usize;
        let len = R::stored_size(&self.heap[start..]);
        &mut self.heap[start..start + len]
    }

    /// An owned copy of slot `i`.
    pub(crate) fn load(&self, i: usize) -> R {
        R::load(self.bytes(i))
    }

    /// The slot of `key` (Ok) or where it would go (Err).
    pub(crate) fn search(&self, key: &[u8]) -> Result<usize, usize> {
        let (mut lo, mut hi) = (0, self.len());
        while lo < hi {
            let mid = lo + (hi - lo) / 2;
            match self.key(mid).cmp(key) {
                std::cmp::Ordering::Less => lo = mid + 1,
                std::cmp::Ordering::Greater => hi = mid,
                std::cmp::Ordering::Equal => return Ok(mid),
            }
        }
        Err(lo)
    }

    /// How many records lie before the position `route` selects for (partial) key `t`.
    pub(crate) fn count_before(&self, route: Route, t: &[u8]) -> usize {
        let before = |k: &[u8]| match route {
            Route::BeforeEqual => cmp_prefix(k, t).is_lt(),
            Route::AfterEqual => cmp_prefix(k, t).is_le(),
        };
        let (mut lo, mut hi) = (0, self.len());
        while lo < hi {
            let mid = lo + (hi - lo) / 2;
            if before(self.key(mid)) {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        lo
    }

    /// Bytes of the live stored records.
    pub(crate) fn used(&self) -> usize {
        self.heap.len() - self.garbage
    }

    /// Whether `rec` can join the page without a split (`max` records at most).
    pub(crate) fn fits(&self, rec: &R, max: usize) -> bool {
        self.is_empty() || (self.len() < max && self.used() + rec.stored_len() <= PAGE_BYTES)
    }

    /// Rewrites the heap with the live records only, in slot order, into a buffer of
    /// `capacity` bytes (at least the live bytes); slot `skip`, being rewritten, is left out.
    fn compact(&mut self, capacity: usize, skip: Option<usize>) {
        let live = self.heap.len() - self.garbage;
        let mut heap = Vec::with_capacity(capacity.max(live));
        for i in (0..self.len()).filter(|&i| Some(i) != skip) {
            let b = self.bytes(i);
            let at = heap.len();
            heap.extend_from_slice(b);
            self.slots[i] = u32::try_from(at).expect("a page under 4 GiB");
        }
        self.heap = heap;
        self.garbage = 0;
    }

    /// Appends `rec`'s stored form to the heap (compacting or growing it first if it lacks
    /// room; slot `skip`'s bytes are garbage and left out); returns its offset.
    fn append(&mut self, rec: &R, skip: Option<usize>) -> u32 {
        let need = rec.stored_len();
        if self.heap.capacity() - self.heap.len() < need {
            let live = self.heap.len() - self.garbage;
            let cap = self.heap.capacity();
            let capacity = if self.garbage > 0 && cap - live >= need {
                cap
            } else {
                grown(cap, live + need, 64, PAGE_BYTES)
            };
            if self.garbage == 0 && skip.is_none() {
                // Nothing to reclaim: the records keep their offsets, so the heap only
                // grows (one copy of its bytes, or none where the allocator extends it).
                self.heap.reserve_exact(capacity - self.heap.len());
            } else {
                self.compact(capacity, skip);
            }
        }
        let at = u32::try_from(self.heap.len()).expect("a page under 4 GiB");
        rec.store(&mut self.heap);
        at
    }

    /// Inserts `rec` at slot `pos` (the caller keeps key order).
    pub(crate) fn insert(&mut self, pos: usize, rec: &R) {
        let at = self.append(rec, None);
        if self.slots.len() == self.slots.capacity() {
            let cap = self.slots.capacity();
            let want = grown(cap, cap + 1, 4, PAGE_BYTES / SLOT);
            self.slots.reserve_exact(want - cap);
        }
        self.slots.insert(pos, at);
        if let Some(h) = self.hints.get_mut() {
            h.insert(pos, LockHint::default());
        }
    }

    /// Removes and returns the record in slot `i`. A page whose heap is mostly garbage
    /// afterwards is compacted into a smaller buffer.
    pub(crate) fn remove(&mut self, i: usize) -> R {
        let b = self.bytes(i);
        let rec = R::load(b);
        self.garbage += b.len();
        self.slots.remove(i);
        if let Some(h) = self.hints.get_mut() {
            h.remove(i);
        }
        if self.slots.is_empty() {
            *self = Records::default();
        } else if self.garbage > self.heap.capacity() / 2 {
            let live = self.heap.len() - self.garbage;
            self.compact(live + live / 4, None);
            self.slots
                .shrink_to(self.slots.len() + self.slots.len() / 4);
        }
        rec
    }

    /// Writes `rec` over the record in slot `i` (same key; the slot and its hint stay).
    pub(crate) fn replace(&mut self, i: usize, rec: &R) {
        debug_assert_eq!(self.key(i), rec.key(), "a rewrite changed a key");
        let start = self.slots[i] as usize;
        let old = R::stored_size(&self.heap[start..]);
        if old == rec.stored_len() {
            let end = self.heap.len();
            if self.heap.capacity() - end >= old {
                // Written into the spare capacity and moved over (no allocation).
                rec.store(&mut self.heap);
                self.heap.copy_within(end.., start);
                self.heap.truncate(end);
            } else {
                let mut buf = Vec::with_capacity(old);
                rec.store(&mut buf);
                self.heap[start..start + old].copy_from_slice(&buf);
            }
            return;
        }
        self.garbage += old;
        self.slots[i] = self.append(rec, Some(i));
    }

    /// Moves the records from slot `at` on into a new page's records (sized to them).
    pub(crate) fn split_off(&mut self, at: usize) -> Records<R> {
        let moved: usize = (at..self.len()).map(|i| self.bytes(i).len()).sum();
        let n = self.len() - at;
        let mut right = Records::<R> {
            heap: Vec::with_capacity(moved + moved / 8),
            slots: Vec::with_capacity(n + n / 8),
            ..Records::default()
        };
        for i in at..self.len() {
            let b = self.bytes(i);
            right
                .slots
                .push(u32::try_from(right.heap.len()).expect("a page under 4 GiB"));
            right.heap.extend_from_slice(b);
        }
        self.garbage += moved;
        self.slots.truncate(at);
        if let Some(h) = self.hints.get_mut() {
            let moved_hints = h.split_off(at);
            let _ = right.hints.set(moved_hints);
        }
        let live = self.heap.len() - self.garbage;
        self.compact(live + live / 8, None);
        self.slots.shrink_to(at + at / 8);
        right
    }

    /// Moves every record of `from` to the end of these (their keys all follow these').
    pub(crate) fn append_from(&mut self, from: &mut Records<R>) {
        debug_assert!(
            self.is_empty() || from.is_empty() || self.key(self.len() - 1) < from.key(0),
            "records appended out of order"
        );
        let need = from.used();
        if self.heap.capacity() - self.heap.len() < need {
            let live = self.used();
            self.compact(live + need + (live + need) / 8, None);
        }
        self.slots.reserve_exact(from.len());
        for i in 0..from.len() {
            let b = from.bytes(i);
            self.slots
                .push(u32::try_from(self.heap.len()).expect("a page under 4 GiB"));
            self.heap.extend_from_slice(b);
        }
        let n = from.len();
        match (self.hints.get_mut(), from.hints.take()) {
            (Some(h), moved) => {
                h.extend(moved.unwrap_or_else(|| (0..n).map(|_| LockHint::default()).collect()))
            }
            (None, Some(moved)) => {
                let mut h: Vec<LockHint> =
                    (0..self.len() - n).map(|_| LockHint::default()).collect();
                h.extend(moved);
                let _ = self.hints.set(h);
            }
            (None, None) => {}
        }
        *from = Records::default();
    }

    /// Heap bytes allocated, live records, garbage and room to grow together.
    pub(crate) fn heap_capacity(&self) -> usize {
        self.heap.capacity()
    }

    /// Directory slots allocated.
    pub(crate) fn slot_capacity(&self) -> usize {
        self.slots.capacity()
    }

    /// Makes the page's lock-hint table (as a lock on one of its records would).
    #[cfg(test)]
    pub(crate) fn make_hints(&self) {
        if !self.is_empty() {
            HintRef::new(&self.hints, 0, self.len()).get();
        }
    }

    /// Whether the page has a lock-hint table, and its length.
    pub(crate) fn hint_table_len(&self) -> Option<usize> {
        self.hints.get().map(Vec::len)
    }

    /// Removes every record.
    pub(crate) fn clear(&mut self) {
        *self = Records::default();
    }
}

/// The contents of a page: a leaf (level 0) uses `records` and `next`; an inner page uses
/// `keys` (separators) and `children` (one more than keys).
pub(crate) struct PageData<R> {
    pub(crate) modify_count: u64,
    pub(crate) level: u8,
    /// Set when the page left the tree (truncate, or an emptied leaf unlinked); a saved
    /// position on it cannot restore optimistically.
    pub(crate) freed: bool,
    pub(crate) records: Records<R>,
    pub(crate) keys: Vec<KeyBuf>,
    pub(crate) children: Vec<Arc<Page<R>>>,
    pub(crate) next: Option<Arc<Page<R>>>,
    /// Largest transaction id that changed a record here (used on secondary leaves).
    pub(crate) max_trx_id: u64,
}

impl<R> PageData<R> {
    pub(crate) fn leaf(records: Records<R>) -> PageData<R> {
        PageData {
            modify_count: 0,
            level: 0,
            freed: false,
            records,
            keys: Vec::new(),
            children: Vec::new(),
            next: None,
            max_trx_id: 0,
        }
    }
}

/// A page: an id, a latch, and data only reachable through a guard.
pub(crate) struct Page<R> {
    pub(crate) id: u64,
    latch: RawLatch,
    data: UnsafeCell<PageData<R>>,
}

// SAFETY: the data is only accessed through guards, which hold the latch (shared for `&`,
// exclusive for `&mut`), so access follows the reader-writer discipline.
unsafe impl<R: Send + Sync> Sync for Page<R> {}
// SAFETY: as above; moving a page moves its data.
unsafe impl<R: Send> Send for Page<R> {}

impl<R> fmt::Debug for Page<R> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Page")
            .field("id", &self.id)
            .finish_non_exhaustive()
    }
}

impl<R: Record> Page<R> {
    pub(crate) fn new(id: u64, data: PageData<R>) -> Arc<Page<R>> {
        Arc::new(Page {
            id,
            latch: RawLatch::new(),
            data: UnsafeCell::new(data),
        })
    }

    /// Shared latch (counting a blocking acquisition in `waits`).
    pub(crate) fn read(page: Arc<Page<R>>, waits: &AtomicU64) -> ReadGuard<R> {
        page.latch.read(waits);
        ReadGuard { page }
    }

    /// Exclusive latch (counting a blocking acquisition in `waits`).
    pub(crate) fn write(page: Arc<Page<R>>, waits: &AtomicU64) -> WriteGuard<R> {
        page.latch.write(waits);
        WriteGuard { page }
    }
}

/// A shared latch on a page.
pub(crate) struct ReadGuard<R: Record> {
    pub(crate) page: Arc<Page<R>>,
}

impl<R: Record> Deref for ReadGuard<R> {
    type Target = PageData<R>;
    fn deref(&self) -> &PageData<R> {
        // SAFETY: we hold the shared latch.
        unsafe { &*self.page.data.get() }
    }
}

impl<R: Record> Drop for ReadGuard<R> {
    fn drop(&mut self) {
        self.page.latch.unlock_read();
    }
}

/// An exclusive latch on a page.
pub(crate) struct WriteGuard<R: Record> {
    pub(crate) page: Arc<Page<R>>,
}

impl<R: Record> Deref for WriteGuard<R> {
    type Target = PageData<R>;
    fn deref(&self) -> &PageData<R> {
        // SAFETY: we hold the exclusive latch.
        unsafe { &*self.page.data.get() }
    }
}

impl<R: Record> DerefMut for WriteGuard<R> {
    fn deref_mut(&mut self) -> &mut PageData<R> {
        // SAFETY: we hold the exclusive latch, so no other reference exists.
        unsafe { &mut *self.page.data.get() }
    }
}

impl<R: Record> Drop for WriteGuard<R> {
    fn drop(&mut self) {
        self.page.latch.unlock_write();
    }
}

/// A latched leaf, shared or exclusive.
pub(crate) enum LeafGuard<R: Record> {
    Read(ReadGuard<R>),
    Write(WriteGuard<R>),
}

impl<R: Record> LeafGuard<R> {
    pub(crate) fn page(&self) -> &Arc<Page<R>> {
        match self {
            LeafGuard::Read(g) => &g.page,
            LeafGuard::Write(g) => &g.page,
        }
    }

    pub(crate) fn data_mut(&mut self) -> Option<&mut PageData<R>> {
        match self {
            LeafGuard::Read(_) => None,
            LeafGuard::Write(g) => Some(g),
        }
    }
}

impl<R: Record> Deref for LeafGuard<R> {
    type Target = PageData<R>;
    fn deref(&self) -> &PageData<R> {
        match self {
            LeafGuard::Read(g) => g,
            LeafGuard::Write(g) => g,
        }
    }
}
