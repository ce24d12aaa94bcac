//! A leaf's slot directory: the heap offsets of its records in key order. An entry takes two
//! bytes while every offset is below 64 KiB, which a page within [`PAGE_BYTES`] always is,
//! and four once one is not (a heap past 64 KiB: a record larger than a page, or records grown
//! in place); a directory narrows again when its heap is compacted below 64 KiB.
//!
//! [`PAGE_BYTES`]: crate::index::PAGE_BYTES

/// Heap offsets in slot order, at the narrowest width that holds them.
pub(crate) enum Directory {
    /// Every offset fits in 16 bits.
    Narrow(Vec<u16>),
    /// Some offset does not.
    Wide(Vec<u32>),
}

impl Default for Directory {
    fn default() -> Directory {
        Directory::Narrow(Vec::new())
    }
}

/// The offset as a stored entry: pages are far below 4 GiB.
fn wide(at: usize) -> u32 {
    u32::try_from(at).expect("a page under 4 GiB")
}

impl Directory {
    /// Empty, with room for `n` entries.
    pub(crate) fn with_capacity(n: usize) -> Directory {
        Directory::Narrow(Vec::with_capacity(n))
    }

    /// Entries.
    pub(crate) fn len(&self) -> usize {
        match self {
            Directory::Narrow(v) => v.len(),
            Directory::Wide(v) => v.len(),
        }
    }

    /// No entry.
    pub(crate) fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Entries allocated.
    pub(crate) fn capacity(&self) -> usize {
        match self {
            Directory::Narrow(v) => v.capacity(),
            Directory::Wide(v) => v.capacity(),
        }
    }

    /// Bytes of one entry at the current width.
    pub(crate) fn entry_bytes(&self) -> usize {
        match self {
            Directory::Narrow(_) => std::mem::size_of::<u16>(),
            Directory::Wide(_) => std::mem::size_of::<u32>(),
        }
    }

    /// The offset in slot `i`.
    #[inline]
    pub(crate) fn get(&self, i: usize) -> usize {
        match self {
            Directory::Narrow(v) => usize::from(v[i]),
            Directory::Wide(v) => v[i] as usize,
        }
    }

    /// Widens the entries to four bytes if `at` does not fit in two.
    fn make_room_for(&mut self, at: usize) {
        if let Directory::Narrow(v) = self {
            if at > usize::from(u16::MAX) {
                let mut w = Vec::with_capacity(v.capacity());
                w.extend(v.iter().map(|&o| u32::from(o)));
                *self = Directory::Wide(w);
            }
        }
    }

    /// Sets slot `i` to offset `at`.
    pub(crate) fn set(&mut self, i: usize, at: usize) {
        self.make_room_for(at);
        match self {
            Directory::Narrow(v) => v[i] = at as u16,
            Directory::Wide(v) => v[i] = wide(at),
        }
    }

    /// Inserts offset `at` at slot `pos`.
    pub(crate) fn insert(&mut self, pos: usize, at: usize) {
        self.make_room_for(at);
        match self {
            Directory::Narrow(v) => v.insert(pos, at as u16),
            Directory::Wide(v) => v.insert(pos, wide(at)),
        }
    }

    /// Appends offset `at` as the last slot.
    pub(crate) fn push(&mut self, at: usize) {
        self.make_room_for(at);
        match self {
            Directory::Narrow(v) => v.push(at as u16),
            Directory::Wide(v) => v.push(wide(at)),
        }
    }

    /// Removes slot `i`.
    pub(crate) fn remove(&mut self, i: usize) {
        match self {
            Directory::Narrow(v) => {
                v.remove(i);
            }
            Directory::Wide(v) => {
                v.remove(i);
            }
        }
    }

    /// Keeps the first `n` slots.
    pub(crate) fn truncate(&mut self, n: usize) {
        match self {
            Directory::Narrow(v) => v.truncate(n),
            Directory::Wide(v) => v.truncate(n),
        }
    }

    /// Room for exactly `extra` more entries.
    pub(crate) fn reserve_exact(&mut self, extra: usize) {
        match self {
            Directory::Narrow(v) => v.reserve_exact(extra),
            Directory::Wide(v) => v.reserve_exact(extra),
        }
    }

    /// Gives back room beyond `n` entries (or beyond the length, if larger).
    pub(crate) fn shrink_to(&mut self, n: usize) {
        match self {
            Directory::Narrow(v) => v.shrink_to(n),
            Directory::Wide(v) => v.shrink_to(n),
        }
    }

    /// Back to two-byte entries when every offset is below `heap_len`, a heap of at most
    /// 64 KiB (after a compaction moved the records down).
    pub(crate) fn narrow_below(&mut self, heap_len: usize) {
        if let Directory::Wide(v) = self {
            if heap_len <= usize::from(u16::MAX) + 1 {
                let mut n = Vec::with_capacity(v.capacity());
                n.extend(v.iter().map(|&o| o as u16));
                *self = Directory::Narrow(n);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entries_widen_for_an_offset_past_64_kib_and_narrow_after_a_compaction() {
        let mut d = Directory::with_capacity(4);
        d.push(0);
        d.push(65_535);
        assert_eq!(d.entry_bytes(), 2);
        d.insert(1, 70_000);
        assert_eq!(d.entry_bytes(), 4);
        assert_eq!((d.get(0), d.get(1), d.get(2)), (0, 70_000, 65_535));
        assert!(d.capacity() >= 4);
        d.remove(1);
        d.set(1, 100);
        d.narrow_below(65_536);
        assert_eq!(d.entry_bytes(), 2);
        assert_eq!((d.len(), d.get(0), d.get(1)), (2, 0, 100));
        d.narrow_below(65_537);
        d.set(0, 200_000);
        d.narrow_below(200_001);
        assert_eq!((d.entry_bytes(), d.get(0)), (4, 200_000));
    }
}
