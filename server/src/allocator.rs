//! The server's global allocator: mimalloc (v2), called through its plain `mi_malloc` path.
//!
//! A point select makes about fifteen short-lived allocations; with glibc's malloc their
//! alloc/free pairs were a fifth of the server's user-space instructions (callgrind,
//! BENCHMARKS.md issue 3). The `mimalloc` crate's allocator sends every request through
//! `mi_malloc_aligned`, which costs about three times the plain path; mimalloc already aligns
//! every block to 16 bytes, so only larger alignments need the aligned entry points.

use std::alloc::{GlobalAlloc, Layout};
use std::ffi::c_void;

use libmimalloc_sys::{
    mi_free, mi_malloc, mi_malloc_aligned, mi_realloc, mi_realloc_aligned, mi_zalloc,
    mi_zalloc_aligned,
};

/// The alignment every mimalloc block has (its `MI_MAX_ALIGN_SIZE`).
const MIN_ALIGN: usize = 16;

/// mimalloc as a [`GlobalAlloc`]; install with `#[global_allocator]` in a binary.
#[derive(Debug)]
pub struct Allocator;

/// Whether `layout` is served by the plain entry points: its alignment is one every block has.
fn plain(layout: &Layout) -> bool {
    layout.align() <= MIN_ALIGN
}

// SAFETY: every method forwards to mimalloc, which returns blocks of at least the requested
// size aligned to 16 (plain) or to the requested alignment (aligned entry points), or null
// on failure; `mi_free` accepts any block either family returned.
unsafe impl GlobalAlloc for Allocator {
    #[inline]
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        if plain(&layout) {
            unsafe { mi_malloc(layout.size()) as *mut u8 }
        } else {
            unsafe { mi_malloc_aligned(layout.size(), layout.align()) as *mut u8 }
        }
    }

    #[inline]
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        if plain(&layout) {
            unsafe { mi_zalloc(layout.size()) as *mut u8 }
        } else {
            unsafe { mi_zalloc_aligned(layout.size(), layout.align()) as *mut u8 }
        }
    }

    #[inline]
    unsafe fn dealloc(&self, ptr: *mut u8, _layout: Layout) {
        unsafe { mi_free(ptr as *mut c_void) }
    }

    #[inline]
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        if plain(&layout) {
            unsafe { mi_realloc(ptr as *mut c_void, new_size) as *mut u8 }
        } else {
            unsafe { mi_realloc_aligned(ptr as *mut c_void, new_size, layout.align()) as *mut u8 }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blocks_have_the_alignment_asked_for_and_keep_their_bytes_on_realloc() {
        let a = Allocator;
        for (size, align) in [(1, 1), (24, 8), (100, 16), (64, 64), (5000, 4096)] {
            let layout = Layout::from_size_align(size, align).unwrap();
            unsafe {
                let p = a.alloc(layout);
                assert!(!p.is_null());
                assert_eq!(p as usize % align, 0, "size {size} align {align}");
                p.write_bytes(0xab, size);
                let q = a.realloc(p, layout, size * 3);
                assert_eq!(q as usize % align, 0);
                assert!((0..size).all(|i| *q.add(i) == 0xab));
                a.dealloc(q, Layout::from_size_align(size * 3, align).unwrap());
                let z = a.alloc_zeroed(layout);
                assert!((0..size).all(|i| *z.add(i) == 0));
                a.dealloc(z, layout);
            }
        }
    }
}
