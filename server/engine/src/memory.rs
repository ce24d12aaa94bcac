//! Giving freed row memory back to the operating system. glibc's malloc keeps freed chunks
//! in its arenas for reuse and returns only the free space at the top of a heap, so rows
//! below the mmap threshold (the server fixes it at 128 KiB), once purged or rolled back,
//! would stay resident after their table is empty. The transaction system counts the row
//! bytes purge and rollback free and, once [`TRIM_AFTER`] have been freed, purge asks the
//! allocator to return its free pages ([`trim`]). The tables that grow with the history
//! (old versions, the history list) shrink as purge empties them ([`shrink_target`]).

/// Row bytes freed between two trims. A trim walks every arena's free lists and holds each
/// arena's mutex meanwhile (about a millisecond per 100 MB of fragmented heap measured on a
/// 2-core VM), so it is not run for every purged row; 16 MiB bounds what a trim leaves
/// resident while making trims rare under an OLTP load of small rows.
pub(crate) const TRIM_AFTER: u64 = 16 << 20;

/// Returns the allocator's free pages to the operating system (glibc's `malloc_trim`; a
/// no-op with other allocators).
pub(crate) fn trim() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: malloc_trim only releases free pages of the arenas, under their own locks; it
    // is thread-safe and touches no memory the program uses.
    unsafe {
        libc::malloc_trim(0);
    }
}

/// Capacity below which a table is never shrunk.
const SHRINK_ABOVE: usize = 1024;

/// The capacity to shrink a collection of `len` entries and `capacity` slots to, if it should
/// shrink: once it is less than a quarter full and larger than [`SHRINK_ABOVE`], to twice its
/// length, so a burst of history does not keep its peak table after purge and a table that
/// refills does not regrow at every step (each shrink or growth is paid for by at least as many
/// removals or insertions since the last).
pub(crate) fn shrink_target(len: usize, capacity: usize) -> Option<usize> {
    (capacity > SHRINK_ABOVE && len * 4 < capacity).then_some(len * 2)
}

#[cfg(test)]
mod tests {
    use super::shrink_target;

    #[test]
    fn tables_shrink_only_when_large_and_mostly_empty() {
        assert_eq!(shrink_target(0, 1024), None, "small tables stay");
        assert_eq!(
            shrink_target(512, 2048),
            None,
            "a quarter full or more stays"
        );
        assert_eq!(shrink_target(100, 2048), Some(200));
        assert_eq!(shrink_target(0, 1 << 20), Some(0));
    }
}
