//! The server binary's global allocator: mimalloc (the default `mimalloc` feature; glibc's
//! malloc without it) plus a count of the bytes it holds, kept cheap (a thread-local add):
//! each thread adds its allocations and frees to a tally of its own and adds the tally to the
//! shared count (one relaxed atomic add) once it reaches [`FLUSH_AT`] either way, and when the
//! thread ends. The count is of requested sizes, so it is the same under either allocator.
//!
//! Invariant: [`in_use`] is the sum of the sizes of the live allocations made through
//! [`CountingAlloc`] (each allocation's requested size, not malloc's rounded chunk), give or
//! take less than [`FLUSH_AT`] per running thread. An allocation of `FLUSH_AT` or more is in
//! the count before it is returned. In a process that did not install the allocator (unit
//! tests, other binaries) the count stays 0.

use std::alloc::{GlobalAlloc, Layout};
use std::cell::Cell;
use std::sync::atomic::{AtomicIsize, Ordering::Relaxed};

/// The allocator underneath the count.
#[cfg(feature = "mimalloc")]
use mimalloc::MiMalloc as Inner;
/// The allocator underneath the count.
#[cfg(not(feature = "mimalloc"))]
use std::alloc::System as Inner;

/// The largest alignment every block of mimalloc's plain `mi_malloc` of at least that size
/// has (`MI_MAX_ALIGN_SIZE`, the alignment of C's `max_align_t`).
#[cfg(feature = "mimalloc")]
const PLAIN_ALIGN: usize = 16;

/// Whether `layout` can take mimalloc's plain entry points (`mi_malloc`, `mi_zalloc`,
/// `mi_realloc`) instead of the aligned ones `mimalloc::MiMalloc` always calls. The aligned
/// entry's fallback, taken whenever the size class's page has no free block at hand,
/// over-allocates into a larger size class for any size whose class is not a power of two,
/// so a block allocated and freed once per command never came back from its own class's free
/// list: two such allocations per point select cost about 160 instructions each.
#[cfg(feature = "mimalloc")]
fn plain(layout: Layout) -> bool {
    layout.align() <= PLAIN_ALIGN && layout.align() <= layout.size()
}

/// Bytes a thread's tally may reach (allocated or freed) before it is added to the shared
/// count: 64 KiB, so a thread adds to the shared count at most once per 64 KiB it moves and
/// the count is off by less than that per thread.
pub(crate) const FLUSH_AT: usize = 64 << 10;

/// Bytes currently allocated through [`CountingAlloc`], less the threads' unadded tallies.
static IN_USE: AtomicIsize = AtomicIsize::new(0);

/// A thread's bytes allocated less bytes freed not yet added to [`IN_USE`]; added when the
/// thread ends.
struct Tally(Cell<isize>);

impl Drop for Tally {
    fn drop(&mut self) {
        IN_USE.fetch_add(self.0.replace(0), Relaxed);
    }
}

thread_local! {
    static TALLY: Tally = const { Tally(Cell::new(0)) };
}

/// Counts `delta` bytes (negative: freed) for the calling thread.
fn note(delta: isize) {
    let tallied = TALLY.try_with(|t| {
        let v = t.0.get().wrapping_add(delta);
        if v.unsigned_abs() >= FLUSH_AT {
            t.0.set(0);
            IN_USE.fetch_add(v, Relaxed);
        } else {
            t.0.set(v);
        }
    });
    // The thread's tally is gone (its destructor ran): count straight into the shared one.
    if tallied.is_err() {
        IN_USE.fetch_add(delta, Relaxed);
    }
}

/// mimalloc (glibc's malloc without the `mimalloc` feature), counting what it hands out.
/// `tpbed-server` installs it with `#[global_allocator]`; the count feeds the memory budget and
/// nothing else, so every update is `Relaxed`.
#[derive(Debug, Default, Clone, Copy)]
pub struct CountingAlloc;

// SAFETY: every call is forwarded to the inner allocator with the caller's arguments (with
// mimalloc, to its plain entry points where `plain` says they give the alignment asked); the
// count is only updated after the inner allocator succeeded, never touches the memory, and allocates
// nothing through this allocator (a thread-local destructor is registered with the C
// library, whose own malloc it uses).
unsafe impl GlobalAlloc for CountingAlloc {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // SAFETY: the caller's contract for `alloc` is passed on unchanged.
        let p = unsafe { inner_alloc(layout, false) };
        if !p.is_null() {
            note(layout.size() as isize);
        }
        p
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        // SAFETY: as for `alloc`.
        let p = unsafe { inner_alloc(layout, true) };
        if !p.is_null() {
            note(layout.size() as isize);
        }
        p
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: `ptr` came from this allocator (so from the inner one) with `layout`.
        unsafe { Inner.dealloc(ptr, layout) };
        note(-(layout.size() as isize));
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        // SAFETY: as for `dealloc`, with the caller's `new_size` contract.
        let p = unsafe { inner_realloc(ptr, layout, new_size) };
        if !p.is_null() {
            note((new_size as isize).wrapping_sub(layout.size() as isize));
        }
        p
    }
}

/// The inner allocator's block for `layout`, zeroed where `zeroed` (null if it has none).
///
/// # Safety
/// `GlobalAlloc::alloc`'s contract: `layout` has a non-zero size.
unsafe fn inner_alloc(layout: Layout, zeroed: bool) -> *mut u8 {
    #[cfg(feature = "mimalloc")]
    if plain(layout) {
        use libmimalloc_sys::{mi_malloc, mi_zalloc};
        let size = layout.size();
        // SAFETY: mi_malloc and mi_zalloc take any size; a block of at least the alignment
        // asked has it (see `plain`).
        return unsafe {
            if zeroed {
                mi_zalloc(size)
            } else {
                mi_malloc(size)
            }
        }
        .cast();
    }
    // SAFETY: the caller's contract is `alloc`'s and `alloc_zeroed`'s.
    unsafe {
        if zeroed {
            Inner.alloc_zeroed(layout)
        } else {
            Inner.alloc(layout)
        }
    }
}

/// The inner allocator's `realloc` of the block at `ptr`, allocated with `layout`.
///
/// # Safety
/// `GlobalAlloc::realloc`'s contract.
unsafe fn inner_realloc(ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
    #[cfg(feature = "mimalloc")]
    if plain(layout) && layout.align() <= new_size {
        // SAFETY: `ptr` is a live mimalloc block (mi_realloc takes blocks of either entry),
        // and a new size of at least the alignment keeps it (see `plain`).
        return unsafe { libmimalloc_sys::mi_realloc(ptr.cast(), new_size) }.cast();
    }
    // SAFETY: the caller's contract is `realloc`'s.
    unsafe { Inner.realloc(ptr, layout, new_size) }
}

/// Bytes the process holds through [`CountingAlloc`] now, within [`FLUSH_AT`] per running
/// thread (0 where it is not installed).
pub(crate) fn in_use() -> usize {
    usize::try_from(IN_USE.load(Relaxed)).unwrap_or(0)
}

/// Gives the free memory the allocator holds back to the operating system at once:
/// mimalloc's `mi_collect(true)` (the calling thread's free pages, and every arena's unused
/// pages without waiting for mimalloc's purge delay; pages other threads hold are returned as
/// those threads next allocate or end), or glibc's `malloc_trim` without the `mimalloc`
/// feature. The
/// server installs it as the engine's release ([`tpbed_engine::set_release_free_memory`]),
/// which purge calls after freeing many rows and a session after a large command.
pub fn release_free_memory() {
    #[cfg(feature = "mimalloc")]
    // SAFETY: mi_collect only frees mimalloc's own empty pages and purges its unused arena
    // memory; it is thread-safe and touches no live allocation.
    unsafe {
        libmimalloc_sys::mi_collect(true);
    }
    #[cfg(all(not(feature = "mimalloc"), target_os = "linux", target_env = "gnu"))]
    // SAFETY: malloc_trim only returns free pages to the OS; it is thread-safe.
    unsafe {
        libc::malloc_trim(0);
    }
}

/// Gives back everything the calling thread's allocator heap holds, for a thread that goes
/// idle. With mimalloc, [`release_free_memory`] alone is not enough: a thread's pages that
/// still hold live blocks stay its own, and blocks other threads free into them later (purge's
/// undo, a dropped table's pages) are only taken back when the owner next allocates, which
/// an idle thread does not. So the thread's heap is ended as at thread exit (`mi_thread_done`:
/// empty pages freed, the others abandoned, so that a later free from any thread can free them
/// whole), a fresh heap is made at once (mimalloc's thread-exit hook must find a live heap),
/// and the arenas are purged. Without the `mimalloc` feature it is [`release_free_memory`].
pub(crate) fn release_thread_memory() {
    #[cfg(feature = "mimalloc")]
    // SAFETY: mi_thread_done ends only the calling thread's heap; the thread's next allocation
    // (the box below) makes it a new one, as for a thread that has not allocated yet.
    unsafe {
        libmimalloc_sys::mi_thread_done();
    }
    drop(std::hint::black_box(Box::new(0u8)));
    release_free_memory();
}

/// Held by a unit test that moves the count or depends on it staying at 0, so no two run at
/// once.
#[cfg(test)]
pub(super) static COUNT_IN_TEST: std::sync::Mutex<()> = std::sync::Mutex::new(());

#[cfg(test)]
mod tests {
    use super::*;

    /// One test, so no other test of this process moves the count meanwhile.
    #[test]
    fn counts_through_thread_tallies_flushed_at_the_threshold_and_at_thread_end() {
        let _alone = COUNT_IN_TEST.lock().unwrap_or_else(|e| e.into_inner());
        let a = CountingAlloc;
        let before = in_use();
        let small = Layout::from_size_align(1000, 8).unwrap();
        let large = Layout::from_size_align(FLUSH_AT + 1000, 8).unwrap();
        // SAFETY: non-zero layouts; each pointer is freed with the layout it last had.
        unsafe {
            let p = a.alloc(small);
            assert!(!p.is_null());
            // Under the flush size the bytes stay in this thread's tally.
            assert_eq!(in_use(), before);
            let p = a.realloc(p, small, large.size());
            assert!(!p.is_null());
            assert_eq!(in_use(), before + FLUSH_AT + 1000);
            a.dealloc(p, large);
            assert_eq!(in_use(), before);
        }
        // An ended thread's tally is added: its live allocation is counted.
        let p = std::thread::spawn(move || {
            // SAFETY: a non-zero layout; freed below, from another thread.
            unsafe { CountingAlloc.alloc(small) as usize }
        })
        .join()
        .unwrap();
        assert_eq!(in_use(), before + 1000);
        // Freed from a thread that ends, so the count is back where it was when the test
        // lets the next one read it.
        std::thread::spawn(move || {
            // SAFETY: `p` was allocated above with `small`.
            unsafe { CountingAlloc.dealloc(p as *mut u8, small) }
        })
        .join()
        .unwrap();
        assert_eq!(in_use(), before);
    }
}
