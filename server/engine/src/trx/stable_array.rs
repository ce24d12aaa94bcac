//! A growable array whose elements never move: chunks of doubling size, each made once, so
//! readers index it without a lock while a writer grows it.

use std::sync::OnceLock;

/// Elements in the first chunk; chunk `k` holds `FIRST_CHUNK << k`. The loom models use
/// tiny chunks, so that they stay small.
#[cfg(not(loom))]
const FIRST_CHUNK: usize = 64;
#[cfg(loom)]
const FIRST_CHUNK: usize = 2;
/// Chunks at most: room for `FIRST_CHUNK` × (2^32 − 1) elements.
const CHUNKS: usize = 32;

/// An array of `T`s (each made by `T::default()`) that grows by whole chunks.
pub(super) struct StableArray<T> {
    chunks: [OnceLock<Box<[T]>>; CHUNKS],
}

impl<T: Default> StableArray<T> {
    /// An array with its first chunk made.
    pub(super) fn new() -> StableArray<T> {
        let a = StableArray {
            chunks: std::array::from_fn(|_| OnceLock::new()),
        };
        a.get_or_grow(0);
        a
    }

    /// The chunk and the offset in it of element `i`.
    fn locate(i: usize) -> (usize, usize) {
        let n = i / FIRST_CHUNK + 1;
        let k = (usize::BITS - 1 - n.leading_zeros()) as usize;
        (k, i - FIRST_CHUNK * ((1 << k) - 1))
    }

    /// Element `i`, if its chunk has been made.
    pub(super) fn get(&self, i: usize) -> Option<&T> {
        let (k, off) = Self::locate(i);
        self.chunks.get(k)?.get()?.get(off)
    }

    /// Element `i`, making its chunk if needed.
    pub(super) fn get_or_grow(&self, i: usize) -> &T {
        let (k, off) = Self::locate(i);
        let chunk =
            self.chunks[k].get_or_init(|| (0..FIRST_CHUNK << k).map(|_| T::default()).collect());
        &chunk[off]
    }

    /// Elements in the chunks made so far (chunks are made in order).
    pub(super) fn capacity(&self) -> usize {
        let made = self.chunks.iter().take_while(|c| c.get().is_some()).count();
        FIRST_CHUNK * ((1 << made) - 1)
    }

    /// The elements made so far, in index order.
    pub(super) fn iter(&self) -> impl Iterator<Item = &T> {
        self.chunks
            .iter()
            .map_while(OnceLock::get)
            .flat_map(|c| c.iter())
    }
}

impl<T> std::fmt::Debug for StableArray<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let made = self.chunks.iter().take_while(|c| c.get().is_some()).count();
        f.debug_struct("StableArray")
            .field("chunks", &made)
            .finish()
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    #[test]
    fn elements_keep_their_place_as_the_array_grows() {
        let a: StableArray<std::sync::atomic::AtomicUsize> = StableArray::new();
        assert_eq!(a.capacity(), FIRST_CHUNK);
        assert!(
            a.get(FIRST_CHUNK).is_none(),
            "the second chunk is not made yet"
        );
        let first = a.get(3).expect("made") as *const _;
        for i in 0..1000 {
            a.get_or_grow(i)
                .store(i, std::sync::atomic::Ordering::Relaxed);
        }
        assert_eq!(
            a.capacity(),
            64 + 128 + 256 + 512 + 1024,
            "index 999 is in the fifth chunk"
        );
        assert_eq!(first, a.get(3).expect("made") as *const _, "not moved");
        let seen: Vec<usize> = a
            .iter()
            .take(1000)
            .map(|x| x.load(std::sync::atomic::Ordering::Relaxed))
            .collect();
        assert_eq!(seen, (0..1000).collect::<Vec<_>>());
        assert_eq!(a.iter().count(), a.capacity());
    }
}
