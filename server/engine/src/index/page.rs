//! Pages and their latch guards. A page's data is only touched through a guard, and a guard
//! owns an `Arc` of its page, so latch coupling can hold a child's guard after the parent's is
//! dropped. `modify_count` changes whenever records may have moved between slots (insert,
//! removal, split, truncate), never for in-place changes of a record.

use std::cell::UnsafeCell;
use std::fmt;
use std::ops::{Deref, DerefMut};
use std::sync::atomic::AtomicU64;
use std::sync::Arc;

use crate::index::key_buf::KeyBuf;
use crate::index::record::Record;
use crate::latch::RawLatch;

/// Records per leaf page and children per inner page.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PageCapacity {
    /// Records per leaf (a 16 KiB InnoDB page holds about 70 sysbench rows; 64 is close).
    pub leaf: usize,
    /// Children per inner page.
    pub inner: usize,
}

impl Default for PageCapacity {
    fn default() -> PageCapacity {
        PageCapacity {
            leaf: 64,
            inner: 128,
        }
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
    pub(crate) records: Vec<R>,
    pub(crate) keys: Vec<KeyBuf>,
    pub(crate) children: Vec<Arc<Page<R>>>,
    pub(crate) next: Option<Arc<Page<R>>>,
    /// Largest transaction id that changed a record here (used on secondary leaves).
    pub(crate) max_trx_id: u64,
}

impl<R> PageData<R> {
    pub(crate) fn leaf(records: Vec<R>) -> PageData<R> {
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
