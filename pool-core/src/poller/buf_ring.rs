//! A provided-buffer ring (`IORING_REGISTER_PBUF_RING`, Linux 5.19+): the buffers a group's
//! receives land in, picked by the kernel when data arrives, so an idle connection holds no
//! buffer. Invariant: a buffer is either in the ring (the kernel may fill it) or named by exactly
//! one receive completion not yet recycled; only the thread holding the ring's completion lock
//! reads a filled buffer and puts it back ([`BufRing::recycle`]), so the ring has one producer.

use io_uring::types::BufRingEntry;
use io_uring::IoUring;
use std::alloc::{alloc_zeroed, dealloc, Layout};
use std::io;
use std::ptr::NonNull;
use std::sync::atomic::{AtomicU16, Ordering};

/// The buffer group id of a group's receives.
pub(crate) const BGID: u16 = 0;
/// Buffers per ring (a power of two).
const COUNT: u16 = 256;
/// Bytes per buffer: a sysbench statement fits; a longer command arrives in several receives
/// or is read to its end by the session.
const LEN: usize = 16 * 1024;

/// One group's registered buffer ring and its buffers.
pub(crate) struct BufRing {
    entries: NonNull<BufRingEntry>,
    layout: Layout,
    bufs: Box<[u8]>,
    /// Our copy of the ring's tail (the kernel's is in the first entry).
    tail: AtomicU16,
}

// SAFETY: `entries` points to memory owned by this value; it is written only by `recycle`,
// whose callers hold the ring's completion lock (one producer), and read by the kernel.
unsafe impl Send for BufRing {}
// SAFETY: as above; shared access only reads `bufs` regions the kernel has filled and handed
// over through a completion.
unsafe impl Sync for BufRing {}

impl std::fmt::Debug for BufRing {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BufRing").field("count", &COUNT).finish()
    }
}

impl BufRing {
    /// Allocates the ring and its buffers, fills the ring and registers it with `ring`.
    pub(crate) fn register(ring: &IoUring) -> io::Result<BufRing> {
        let size = usize::from(COUNT) * std::mem::size_of::<BufRingEntry>();
        let layout = Layout::from_size_align(size, 4096).map_err(io::Error::other)?;
        // SAFETY: the layout has a non-zero size.
        let p = unsafe { alloc_zeroed(layout) }.cast::<BufRingEntry>();
        let entries = NonNull::new(p).ok_or_else(|| io::Error::from(io::ErrorKind::OutOfMemory))?;
        let br = BufRing {
            entries,
            layout,
            bufs: vec![0u8; usize::from(COUNT) * LEN].into_boxed_slice(),
            tail: AtomicU16::new(0),
        };
        for bid in 0..COUNT {
            br.recycle(bid);
        }
        // SAFETY: the ring memory lives as long as `br`, which the poller drops only after the
        // io_uring (field order) or leaks when requests are still in flight.
        unsafe {
            ring.submitter().register_buf_ring_with_flags(
                br.entries.as_ptr() as u64,
                COUNT,
                BGID,
                0,
            )?;
        }
        Ok(br)
    }

    /// The largest receive a buffer takes.
    pub(crate) fn buf_len() -> u32 {
        LEN as u32
    }

    /// The first `len` bytes of buffer `bid`, which a completion handed over.
    pub(crate) fn filled(&self, bid: u16, len: usize) -> &[u8] {
        let start = usize::from(bid % COUNT) * LEN;
        &self.bufs[start..start + len.min(LEN)]
    }

    /// Puts buffer `bid` back at the ring's tail. Callers hold the completion lock.
    pub(crate) fn recycle(&self, bid: u16) {
        let bid = bid % COUNT;
        let tail = self.tail.load(Ordering::Relaxed);
        let idx = usize::from(tail & (COUNT - 1));
        // SAFETY: idx < COUNT, inside the allocation; the kernel reads only entries before the
        // published tail, and this slot is past it.
        unsafe {
            let e = &mut *self.entries.as_ptr().add(idx);
            e.set_addr(self.bufs.as_ptr().add(usize::from(bid) * LEN) as u64);
            e.set_len(LEN as u32);
            e.set_bid(bid);
        }
        let next = tail.wrapping_add(1);
        self.tail.store(next, Ordering::Relaxed);
        // SAFETY: the tail field is the `resv` u16 of the first entry, aligned for an atomic
        // u16; the release store publishes the entry written above to the kernel.
        unsafe {
            let t = BufRingEntry::tail(self.entries.as_ptr()) as *const AtomicU16;
            (*t).store(next, Ordering::Release);
        }
    }
}

impl Drop for BufRing {
    fn drop(&mut self) {
        // SAFETY: allocated in `register` with this layout.
        unsafe { dealloc(self.entries.as_ptr().cast(), self.layout) };
    }
}
