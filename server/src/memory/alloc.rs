//! The server binary's global allocator: the system allocator plus one relaxed atomic add or
//! subtract per call, so the bytes the process holds on the heap are known at any moment.
//!
//! Invariant: [`in_use`] is the sum of the sizes of the live allocations made through
//! [`CountingAlloc`] (each allocation's requested size, not malloc's rounded chunk), give or
//! take the updates of calls still in flight on other threads. In a process that did not
//! install it (unit tests, other binaries) it stays 0.

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicUsize, Ordering::Relaxed};

/// Bytes currently allocated through [`CountingAlloc`].
static IN_USE: AtomicUsize = AtomicUsize::new(0);

/// The system allocator, counting what it hands out. `tpbed-server` installs it with
/// `#[global_allocator]`; the count feeds the memory budget and nothing else, so every
/// update is `Relaxed`.
#[derive(Debug, Default, Clone, Copy)]
pub struct CountingAlloc;

// SAFETY: every call is forwarded to `System` with the caller's arguments; the counter is
// only updated after the system allocator succeeded, and never touches the memory.
unsafe impl GlobalAlloc for CountingAlloc {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // SAFETY: the caller's contract for `alloc` is passed on unchanged.
        let p = unsafe { System.alloc(layout) };
        if !p.is_null() {
            IN_USE.fetch_add(layout.size(), Relaxed);
        }
        p
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        // SAFETY: as for `alloc`.
        let p = unsafe { System.alloc_zeroed(layout) };
        if !p.is_null() {
            IN_USE.fetch_add(layout.size(), Relaxed);
        }
        p
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: `ptr` came from this allocator (so from `System`) with `layout`.
        unsafe { System.dealloc(ptr, layout) };
        IN_USE.fetch_sub(layout.size(), Relaxed);
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        // SAFETY: as for `dealloc`, with the caller's `new_size` contract.
        let p = unsafe { System.realloc(ptr, layout, new_size) };
        if !p.is_null() {
            let old = layout.size();
            if new_size >= old {
                IN_USE.fetch_add(new_size - old, Relaxed);
            } else {
                IN_USE.fetch_sub(old - new_size, Relaxed);
            }
        }
        p
    }
}

/// Bytes the process holds through [`CountingAlloc`] now (0 where it is not installed).
pub(crate) fn in_use() -> usize {
    IN_USE.load(Relaxed)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_allocations_reallocations_and_frees() {
        let a = CountingAlloc;
        let before = in_use();
        let layout = Layout::from_size_align(1000, 8).unwrap();
        // SAFETY: a non-zero layout; the pointer is freed with the size it last had.
        unsafe {
            let p = a.alloc(layout);
            assert!(!p.is_null());
            assert!(in_use() >= before + 1000);
            let p = a.realloc(p, layout, 3000);
            assert!(!p.is_null());
            assert!(in_use() >= before + 3000);
            a.dealloc(p, Layout::from_size_align(3000, 8).unwrap());
        }
        // Other tests of this process do not use the counting allocator.
        assert_eq!(in_use(), before);
    }
}
