//! Where the server's memory goes, by MySQL's memory event names: the rows of
//! `performance_schema.memory_summary_global_by_event_name`.
//!
//! tpbed does not instrument each allocation; it attributes memory at the structures that hold
//! it (each category's current count and bytes are read from them when the table is read) and
//! keeps, per category, what successive reads saw: growth since the previous read counts as
//! allocated, shrinkage as freed, and the low and high marks are the lowest and highest values
//! a read found. So `CURRENT = SUM_ALLOC - SUM_FREE` and `LOW <= CURRENT <= HIGH` always hold,
//! as in MySQL, while the alloc/free sums and the marks are lower bounds of what an
//! instrumented allocator would have counted between reads. The summaries are process-wide,
//! like the allocator they are reconciled with.

use std::collections::BTreeMap;
use std::sync::Mutex;

/// Index pages and their records, every table's (MySQL: the buffer pool, which holds them).
pub(crate) const BUF_POOL: &str = "memory/innodb/buf_buf_pool";
/// Old row versions reached by roll pointers (MySQL: undo logs).
pub(crate) const UNDO: &str = "memory/innodb/trx0undo";
/// Record locks (MySQL: the lock system's lock structs).
pub(crate) const LOCKS: &str = "memory/innodb/lock0lock";
/// Client connections' session state (MySQL: each THD's main memory root).
pub(crate) const THD: &str = "memory/sql/THD::main_mem_root";
/// Prepared statements (MySQL: each one's memory root).
pub(crate) const PREPARED: &str = "memory/sql/Prepared_statement::main_mem_root";
/// The statement digest summary (MySQL's performance_schema buffer of the same name).
pub(crate) const DIGESTS: &str = "memory/performance_schema/events_statements_summary_by_digest";
/// Heap the counting allocator holds that no category above accounts for (no MySQL name
/// fits: MySQL has no such remainder, its uninstrumented memory is simply not shown).
pub(crate) const UNATTRIBUTED: &str = "memory/tpbed/unattributed";

/// What a category holds now.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Usage {
    /// Structures (pages, versions, connections, ...).
    pub(crate) count: u64,
    /// Bytes.
    pub(crate) bytes: u64,
}

/// One row of the summary, MySQL's columns after EVENT_NAME in order.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Summary {
    pub(crate) count_alloc: u64,
    pub(crate) count_free: u64,
    pub(crate) bytes_alloc: u64,
    pub(crate) bytes_free: u64,
    pub(crate) low_count: u64,
    pub(crate) current_count: u64,
    pub(crate) high_count: u64,
    pub(crate) low_bytes: u64,
    pub(crate) current_bytes: u64,
    pub(crate) high_bytes: u64,
}

impl Summary {
    /// A category first seen holding `now`: all of it counts as allocated.
    fn first(now: Usage) -> Summary {
        Summary {
            count_alloc: now.count,
            bytes_alloc: now.bytes,
            current_count: now.count,
            current_bytes: now.bytes,
            high_count: now.count,
            high_bytes: now.bytes,
            ..Summary::default()
        }
    }

    /// Moves to `now`: growth is allocated, shrinkage freed, the marks widen.
    fn observe(&mut self, now: Usage) {
        let (count, bytes) = (self.current_count, self.current_bytes);
        self.count_alloc += now.count.saturating_sub(count);
        self.count_free += count.saturating_sub(now.count);
        self.bytes_alloc += now.bytes.saturating_sub(bytes);
        self.bytes_free += bytes.saturating_sub(now.bytes);
        self.current_count = now.count;
        self.current_bytes = now.bytes;
        self.low_count = self.low_count.min(now.count);
        self.high_count = self.high_count.max(now.count);
        self.low_bytes = self.low_bytes.min(now.bytes);
        self.high_bytes = self.high_bytes.max(now.bytes);
    }

    /// TRUNCATE TABLE: the sums restart from zero and the marks from the current values.
    fn reset(&mut self) {
        *self = Summary {
            low_count: self.current_count,
            current_count: self.current_count,
            high_count: self.current_count,
            low_bytes: self.current_bytes,
            current_bytes: self.current_bytes,
            high_bytes: self.current_bytes,
            ..Summary::default()
        };
    }
}

/// The summaries by event name.
#[derive(Debug, Default)]
pub(crate) struct Summaries(Mutex<BTreeMap<&'static str, Summary>>);

impl Summaries {
    /// Records what each category holds now and returns every category's summary, by name.
    pub(crate) fn observe(&self, now: &[(&'static str, Usage)]) -> Vec<(&'static str, Summary)> {
        let mut all = self.0.lock().unwrap_or_else(|e| e.into_inner());
        for &(name, usage) in now {
            all.entry(name)
                .and_modify(|s| s.observe(usage))
                .or_insert_with(|| Summary::first(usage));
        }
        all.iter().map(|(n, s)| (*n, *s)).collect()
    }

    /// TRUNCATE TABLE of the summary (see [`Summary::reset`]).
    pub(crate) fn reset(&self) {
        let mut all = self.0.lock().unwrap_or_else(|e| e.into_inner());
        all.values_mut().for_each(Summary::reset);
    }
}

/// The server's summaries.
pub(crate) static SUMMARIES: Summaries = Summaries(Mutex::new(BTreeMap::new()));

/// Heap bytes the counting allocator holds now (0 where it is not installed).
pub(crate) fn heap_in_use() -> u64 {
    super::alloc::in_use() as u64
}

#[cfg(test)]
mod tests {
    use super::*;

    fn usage(count: u64, bytes: u64) -> Usage {
        Usage { count, bytes }
    }

    #[test]
    fn reads_turn_growth_into_allocations_and_shrinkage_into_frees() {
        let s = Summaries::default();
        let first = s.observe(&[(BUF_POOL, usage(10, 1000))])[0].1;
        assert_eq!((first.count_alloc, first.bytes_alloc), (10, 1000));
        assert_eq!((first.low_bytes, first.high_bytes), (0, 1000));
        s.observe(&[(BUF_POOL, usage(30, 5000))]);
        let r = s.observe(&[(BUF_POOL, usage(5, 400))])[0].1;
        assert_eq!((r.count_alloc, r.count_free), (30, 25));
        assert_eq!((r.bytes_alloc, r.bytes_free), (5000, 4600));
        assert_eq!(r.current_bytes, r.bytes_alloc - r.bytes_free);
        assert_eq!((r.low_bytes, r.current_bytes, r.high_bytes), (0, 400, 5000));
        assert_eq!((r.low_count, r.current_count, r.high_count), (0, 5, 30));
    }

    #[test]
    fn truncate_restarts_the_sums_and_the_marks_at_the_current_values() {
        let s = Summaries::default();
        s.observe(&[(UNDO, usage(3, 300)), (THD, usage(1, 10))]);
        s.observe(&[(UNDO, usage(1, 100))]);
        s.reset();
        let rows = s.observe(&[(UNDO, usage(2, 150))]);
        let undo = rows.iter().find(|(n, _)| *n == UNDO).unwrap().1;
        assert_eq!((undo.bytes_alloc, undo.bytes_free), (50, 0));
        assert_eq!((undo.low_bytes, undo.high_bytes), (100, 150));
        let thd = rows.iter().find(|(n, _)| *n == THD).unwrap().1;
        assert_eq!(
            (thd.bytes_alloc, thd.low_bytes, thd.high_bytes),
            (0, 10, 10)
        );
    }
}
