//! Giving freed row memory back to the operating system. glibc's malloc keeps freed chunks
//! in its arenas for reuse and returns only the free space at the top of a heap, so rows
//! below the mmap threshold (the server fixes it at 128 KiB), once purged or rolled back,
//! would stay resident after their table is empty. The transaction system counts the row
//! bytes purge and rollback free; purge asks the allocator to return its free pages
//! ([`trim`]: `malloc_trim`, or the program's own allocator's equivalent) when [`TrimPolicy`]
//! says so. The tables that grow with the history (old
//! versions, the history list) shrink as purge empties them ([`shrink_target`]). The rows of a
//! table that DDL dropped, rebuilt (ALTER TABLE, CREATE/DROP INDEX) or truncated are counted
//! too ([`note_table_rows_freed`]), so they go back to the OS the same way, once purge finds
//! the engine quiet.

use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

/// Row bytes freed since the last trim that make purge trim even while writes go on.
/// A trim walks every arena and holds each arena's mutex meanwhile: 13–60 ms for a heap of
/// about 200 MiB (a million 200-byte chunks, or 3,200 freed 64 KiB ones), measured on the
/// 2-core VM, so under load it must be rare; an OLTP load of small rows frees 64 MiB in tens
/// of seconds.
pub(crate) const TRIM_AFTER: u64 = 64 << 20;

/// Row bytes freed since the last trim that make purge trim once the engine is quiet.
pub(crate) const TRIM_WHEN_QUIET: u64 = 1 << 20;

/// How long purge must have found nothing to do, and nothing must have been freed, for the
/// engine to count as quiet (after a bulk DELETE and its purge, or a large rollback).
pub(crate) const QUIET: Duration = Duration::from_secs(1);

/// When purge gives freed memory back: after it has caught up (fewer undo records than a
/// batch), once [`TRIM_AFTER`] bytes have been freed, or [`TRIM_WHEN_QUIET`] bytes and the
/// engine has been quiet for [`QUIET`]. So a bulk delete's memory returns about a second
/// after its purge, while a steady write load, which reuses what it frees, trims rarely.
#[derive(Debug)]
pub(crate) struct TrimPolicy {
    /// When purge last purged something or the freed count last changed.
    last_activity: Instant,
    /// The freed count seen at the previous decision.
    last_freed: u64,
}

impl TrimPolicy {
    /// A policy that counts `now` as the last activity.
    pub(crate) fn new(now: Instant) -> TrimPolicy {
        TrimPolicy {
            last_activity: now,
            last_freed: 0,
        }
    }

    /// After a purge pass that purged `done` undo records (`caught_up`: fewer than a batch),
    /// with `freed` row bytes freed since the last trim: whether to trim now. The caller
    /// resets its freed count to 0 when it trims.
    pub(crate) fn should_trim(
        &mut self,
        done: u64,
        caught_up: bool,
        freed: u64,
        now: Instant,
    ) -> bool {
        if done > 0 || freed != self.last_freed {
            self.last_activity = now;
        }
        let quiet = now.saturating_duration_since(self.last_activity) >= QUIET;
        let trim = caught_up && (freed >= TRIM_AFTER || (quiet && freed >= TRIM_WHEN_QUIET));
        self.last_freed = if trim { 0 } else { freed };
        trim
    }
}

/// Row bytes freed with dropped, replaced or truncated tables since purge last took them.
/// Process-wide, like the allocator they go back to (and the trim that returns them).
static TABLE_ROWS_FREED: AtomicU64 = AtomicU64::new(0);

/// Counts `bytes` of rows freed with a table (dropped, replaced by a rebuild, truncated).
pub(crate) fn note_table_rows_freed(bytes: u64) {
    #[cfg(test)]
    ON_NOTE.with(|f| {
        if let Some(f) = f.borrow_mut().as_mut() {
            f();
        }
    });
    TABLE_ROWS_FREED.fetch_add(bytes, Relaxed);
}

#[cfg(test)]
thread_local! {
    /// Called by [`note_table_rows_freed`] on this thread, for tests that check what is
    /// already freed when the count is made.
    pub(crate) static ON_NOTE: std::cell::RefCell<Option<Box<dyn FnMut()>>> =
        std::cell::RefCell::new(None);
}

/// Takes the count of [`note_table_rows_freed`] (purge adds it to its own freed count).
pub(crate) fn take_table_rows_freed() -> u64 {
    TABLE_ROWS_FREED.swap(0, Relaxed)
}

/// The program's own way to give its allocator's free memory back, when it installed an
/// allocator other than glibc's malloc ([`set_release_free_memory`]).
static RELEASE: OnceLock<fn()> = OnceLock::new();

/// Makes `release` the way [`trim`] gives free memory back to the operating system: a program
/// whose global allocator is not glibc's malloc installs its allocator's equivalent of
/// `malloc_trim` here once, before the engine starts. Later calls are ignored.
pub fn set_release_free_memory(release: fn()) {
    let _ = RELEASE.set(release);
}

/// Returns the allocator's free pages to the operating system: the release the program
/// installed ([`set_release_free_memory`]), else glibc's `malloc_trim`.
pub fn trim() {
    if let Some(release) = RELEASE.get() {
        release();
        return;
    }
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
/// refills does not regrow at every step (each shrink or growth is paid for by at least as
/// many removals or insertions since the last).
pub(crate) fn shrink_target(len: usize, capacity: usize) -> Option<usize> {
    (capacity > SHRINK_ABOVE && len * 4 < capacity).then_some(len * 2)
}

#[cfg(test)]
mod tests {
    use super::*;

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

    #[test]
    fn a_quiet_engine_trims_what_it_freed() {
        let t0 = Instant::now();
        let mut p = TrimPolicy::new(t0);
        let freed = 10 << 20;
        assert!(!p.should_trim(300, true, freed, t0), "purge just worked");
        let later = t0 + QUIET / 2;
        assert!(
            !p.should_trim(0, true, freed, later),
            "not quiet for long enough"
        );
        let quiet = t0 + QUIET;
        assert!(p.should_trim(0, true, freed, quiet), "quiet: trims");
        assert!(
            !p.should_trim(0, true, 0, quiet + QUIET),
            "nothing freed since: no trim"
        );
        let little = TRIM_WHEN_QUIET - 1;
        assert!(
            !p.should_trim(0, true, little, quiet + QUIET),
            "freeing is activity"
        );
        assert!(
            !p.should_trim(0, true, little, quiet + QUIET * 3),
            "quiet, but too little freed"
        );
        assert!(!p.should_trim(0, true, TRIM_WHEN_QUIET, quiet + QUIET * 5));
        assert!(
            p.should_trim(0, true, TRIM_WHEN_QUIET, quiet + QUIET * 6),
            "enough freed, and quiet again"
        );
    }

    #[test]
    fn under_load_only_a_large_amount_trims() {
        let t0 = Instant::now();
        let mut p = TrimPolicy::new(t0);
        let mut now = t0;
        let mut freed = 0;
        // Purge works every 10 ms and frees 1 MiB each time.
        while freed < TRIM_AFTER - (1 << 20) {
            now += Duration::from_millis(10);
            freed += 1 << 20;
            assert!(
                !p.should_trim(5, true, freed, now),
                "{freed} bytes under load"
            );
        }
        freed += 1 << 20;
        assert!(!p.should_trim(300, false, freed, now), "not caught up yet");
        assert!(p.should_trim(5, true, freed, now), "{freed} bytes: trims");
        // Frees that keep coming without purge work (rollbacks) are activity, not quiet.
        let mut freed = 0;
        for _ in 0..300 {
            now += Duration::from_millis(10);
            freed += 1 << 16;
            assert!(!p.should_trim(0, true, freed, now));
        }
    }

    /// Calls of the release installed by the test below.
    static RELEASES: AtomicU64 = AtomicU64::new(0);

    fn counted_release() {
        RELEASES.fetch_add(1, Relaxed);
    }

    #[test]
    fn trim_calls_the_installed_release_instead_of_malloc_trim() {
        set_release_free_memory(counted_release);
        // A second install is ignored: the first allocator's release stays.
        set_release_free_memory(|| panic!("a later release replaced the first"));
        let before = RELEASES.load(Relaxed);
        trim();
        trim();
        // Purge threads of other tests may trim meanwhile: at least these two calls counted.
        assert!(RELEASES.load(Relaxed) >= before + 2);
    }
}
