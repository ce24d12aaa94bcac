//! Row bytes shared between a clustered record and its old versions, in one allocation
//! reached through one pointer: a 4-byte reference count, the 4-byte length, then the bytes
//! (a row of 4 GiB or more, which several LONGBLOBs can make, keeps its length in 8 bytes
//! after the header instead).
//!
//! `Arc<[u8]>` costs a 16-byte pointer in every record and a 16-byte header (strong and weak
//! counts) in every allocation; a sysbench row of 188 bytes then takes glibc's 224-byte chunk.
//! A [`RowBuf`] is an 8-byte pointer with an 8-byte header, so the same row fits a 208-byte
//! chunk: 24 bytes less per row, with the sharing an `Arc` gives (a delete-mark or an update
//! shares the bytes with the version it keeps instead of copying them).
//!
//! Invariant: the count is the number of live `RowBuf`s pointing at the allocation; the bytes
//! never change after [`RowBuf::new`]; the last `RowBuf` dropped frees the allocation, with
//! the layout [`layout`] gives for its length.

use std::alloc::{alloc, dealloc, handle_alloc_error, Layout};
use std::fmt;
use std::mem::{align_of, size_of, ManuallyDrop};
use std::ops::Deref;
use std::ptr::NonNull;
use std::sync::atomic::{fence, AtomicU32, Ordering};

/// The allocation's header; the row bytes follow it.
#[repr(C)]
struct Header {
    count: AtomicU32,
    len: u32,
}

/// Bytes before the row in the allocation.
const HEADER: usize = size_of::<Header>();

/// A count at or above this means clones leaked by the billions; abort as `Arc` does.
const MAX_COUNT: u32 = u32::MAX / 2;

/// The header's `len` of a long row: the length is the `u64` after the header. (Small under
/// test, so the unit tests exercise both forms.)
const LONG: u32 = if cfg!(test) { 64 } else { u32::MAX };

/// Bytes before a long row: the header and its 8-byte length.
const LONG_HEADER: usize = HEADER + size_of::<u64>();

/// Where a row of `len` bytes starts in its allocation.
fn data_offset(len: usize) -> usize {
    if len < LONG as usize {
        HEADER
    } else {
        LONG_HEADER
    }
}

/// The allocation for a row of `len` bytes (8-aligned, for a long row's length).
fn layout(len: usize) -> Layout {
    let size = data_offset(len)
        .checked_add(len)
        .expect("a row's size fits the address space");
    Layout::from_size_align(size, align_of::<u64>().max(align_of::<Header>()))
        .expect("a row's layout")
}

/// Immutable row bytes with a shared owner count (a thin `Arc<[u8]>`).
pub struct RowBuf(NonNull<Header>);

// SAFETY: the bytes are immutable after construction and the count is atomic, so a RowBuf
// may move to and be shared with other threads like an `Arc<[u8]>`.
unsafe impl Send for RowBuf {}
// SAFETY: as above.
unsafe impl Sync for RowBuf {}

impl RowBuf {
    /// A buffer holding a copy of `bytes`.
    pub fn new(bytes: &[u8]) -> RowBuf {
        let len = bytes.len();
        let layout = layout(len);
        // SAFETY: the layout's size is at least HEADER, so not zero.
        let raw = unsafe { alloc(layout) }.cast::<Header>();
        let Some(header) = NonNull::new(raw) else {
            handle_alloc_error(layout)
        };
        let short = u32::try_from(len).ok().filter(|&l| l < LONG);
        // SAFETY: the allocation is data_offset(len) + len bytes, aligned for Header and u64;
        // the header (and a long row's length, at offset HEADER) is written in place and the
        // bytes copied after it, into memory nothing else sees yet.
        unsafe {
            header.as_ptr().write(Header {
                count: AtomicU32::new(1),
                len: short.unwrap_or(LONG),
            });
            let base = header.as_ptr().cast::<u8>();
            if short.is_none() {
                base.add(HEADER).cast::<u64>().write(len as u64);
            }
            std::ptr::copy_nonoverlapping(bytes.as_ptr(), base.add(data_offset(len)), len);
        }
        RowBuf(header)
    }

    fn header(&self) -> &Header {
        // SAFETY: the allocation lives while this RowBuf does (it holds one count).
        unsafe { self.0.as_ref() }
    }

    /// The row's length.
    fn row_len(&self) -> usize {
        let len = self.header().len;
        if len < LONG {
            return len as usize;
        }
        // SAFETY: a long row's length was written as a u64 at offset HEADER, which the
        // allocation's alignment keeps 8-aligned, and never changes.
        unsafe {
            self.0
                .as_ptr()
                .cast::<u8>()
                .add(HEADER)
                .cast::<u64>()
                .read() as usize
        }
    }

    /// The bytes.
    pub fn as_slice(&self) -> &[u8] {
        let len = self.row_len();
        // SAFETY: `len` bytes were copied at data_offset(len) and never change.
        unsafe {
            std::slice::from_raw_parts(self.0.as_ptr().cast::<u8>().add(data_offset(len)), len)
        }
    }

    /// Whether both point at the same allocation.
    pub fn ptr_eq(a: &RowBuf, b: &RowBuf) -> bool {
        a.0 == b.0
    }

    /// How many `RowBuf`s share these bytes (a snapshot: other threads may change it).
    pub fn share_count(&self) -> u32 {
        self.header().count.load(Ordering::Acquire)
    }

    /// Drops this reference; returns the number of row bytes freed: their length if this
    /// was the last reference, else 0.
    pub(crate) fn release(self) -> u64 {
        let this = ManuallyDrop::new(self);
        let len = this.row_len() as u64;
        // SAFETY: `this` is not used after, and its destructor does not run.
        if unsafe { this.drop_ref() } {
            len
        } else {
            0
        }
    }

    /// Gives up this reference's count, freeing the allocation if it was the last one;
    /// returns whether it was.
    ///
    /// # Safety
    /// Called once per `RowBuf`, which is not used afterwards.
    unsafe fn drop_ref(&self) -> bool {
        // Release: this owner's reads of the bytes happen before a free by another owner;
        // the Acquire fence pairs with the other owners' Release decrements.
        if self.header().count.fetch_sub(1, Ordering::Release) != 1 {
            return false;
        }
        fence(Ordering::Acquire);
        let layout = layout(self.row_len());
        // SAFETY: the count reached zero, so this was the last owner; the allocation was made
        // in `new` with this same layout.
        unsafe { dealloc(self.0.as_ptr().cast::<u8>(), layout) };
        true
    }
}

impl Clone for RowBuf {
    fn clone(&self) -> RowBuf {
        // Relaxed: a new reference is made from an existing one, which keeps the bytes alive.
        if self.header().count.fetch_add(1, Ordering::Relaxed) >= MAX_COUNT {
            std::process::abort();
        }
        RowBuf(self.0)
    }
}

impl Drop for RowBuf {
    fn drop(&mut self) {
        // SAFETY: the destructor runs once, and nothing uses `self` after it.
        unsafe {
            self.drop_ref();
        }
    }
}

impl Deref for RowBuf {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        self.as_slice()
    }
}

impl AsRef<[u8]> for RowBuf {
    fn as_ref(&self) -> &[u8] {
        self.as_slice()
    }
}

impl From<&[u8]> for RowBuf {
    fn from(bytes: &[u8]) -> RowBuf {
        RowBuf::new(bytes)
    }
}

impl PartialEq for RowBuf {
    fn eq(&self, other: &RowBuf) -> bool {
        self.as_slice() == other.as_slice()
    }
}

impl Eq for RowBuf {}

impl fmt::Debug for RowBuf {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "RowBuf({} bytes)", self.len())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    #[test]
    fn one_pointer_and_an_eight_byte_header() {
        assert_eq!(size_of::<RowBuf>(), 8);
        assert_eq!(size_of::<Option<RowBuf>>(), 8);
        let short = LONG as usize - 1;
        assert_eq!(layout(short).size(), 8 + short, "a short row's allocation");
        assert_eq!(
            layout(short + 1).size(),
            16 + short + 1,
            "a long row's allocation"
        );
    }

    #[test]
    fn holds_the_bytes_it_was_given() {
        let edge = LONG as usize;
        for len in [0usize, 1, 7, 8, edge - 1, edge, edge + 1, 188, 4096] {
            let bytes: Vec<u8> = (0..len).map(|i| (i * 31 % 251) as u8).collect();
            let r = RowBuf::new(&bytes);
            assert_eq!(&*r, &bytes[..]);
            assert_eq!(r, RowBuf::from(&bytes[..]));
            assert!(!RowBuf::ptr_eq(&r, &RowBuf::from(&bytes[..])));
        }
    }

    #[test]
    fn clones_share_and_the_last_release_frees() {
        let a = RowBuf::new(b"abc");
        let b = a.clone();
        assert!(RowBuf::ptr_eq(&a, &b));
        assert_eq!(a.share_count(), 2);
        assert_eq!(b.release(), 0, "a is still there");
        assert_eq!(a.share_count(), 1);
        assert_eq!(a.release(), 3, "the last reference frees the bytes");
        let long = RowBuf::new(&vec![1u8; LONG as usize + 36]);
        let copy = long.clone();
        assert_eq!(long.release(), 0);
        assert_eq!(
            copy.release(),
            u64::from(LONG) + 36,
            "a long row's whole length"
        );
    }

    #[test]
    fn shared_across_threads() {
        let r = RowBuf::new(&[9u8; 64]);
        let shared = Arc::new(r.clone());
        let threads: Vec<_> = (0..4)
            .map(|_| {
                let s = Arc::clone(&shared);
                std::thread::spawn(move || {
                    for _ in 0..1000 {
                        let c = (*s).clone();
                        assert_eq!(c[63], 9);
                    }
                })
            })
            .collect();
        for t in threads {
            t.join().expect("thread");
        }
        drop(shared);
        assert_eq!(r.share_count(), 1, "every clone was dropped");
    }
}
