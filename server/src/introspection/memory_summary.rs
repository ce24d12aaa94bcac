//! `performance_schema.memory_summary_global_by_event_name`: where the server's heap goes,
//! by MySQL's event names, read from the structures that hold it (see
//! [`crate::memory::categories`] for how reads become MySQL's alloc/free sums and marks).
//!
//! Exact: `memory/innodb/buf_buf_pool` (every table's index pages and records, from each
//! table's footprint walk; the count is pages) and the total, which the counting allocator
//! keeps: the rows' bytes add up to it, the part no category accounts for being
//! `memory/tpbed/unattributed`. Counted exactly but with estimated bytes: old versions
//! (`memory/innodb/trx0undo`: each version costs about a record of its table), record locks,
//! connections, prepared statements (each a measured average) and digests (their texts and a
//! row's fixed part).

use crate::introspection::vtables::{each_table, VType, VirtualTable};
use crate::introspection::ServerView;
use crate::memory::categories::{
    heap_in_use, Summary, Usage, BUF_POOL, DIGESTS, LOCKS, PREPARED, SUMMARIES, THD, UNATTRIBUTED,
    UNDO,
};
use crate::value::Value;

/// Heap bytes a connection holds while idle (its session, buffers and thread's state):
/// the counting allocator's growth over 100 and 300 idle connections of a debug build was
/// 62–68 KiB each.
const CONNECTION_BYTES: u64 = 64 << 10;

/// Heap bytes a prepared statement holds (its parsed and bound plan, metadata and parameter
/// slots): the counting allocator's growth over 200 prepared point SELECTs of a debug build
/// was about 18 KiB each (`tests/tests/memory_accounting.rs` prints it).
const PREPARED_BYTES: u64 = 18 << 10;

/// Heap bytes a record lock holds (its entry in the lock system's queue for the record and
/// the transaction's list): the counting allocator fell by 104–105 bytes per lock when a
/// transaction holding 5,000 and 20,000 next-key locks rolled back (debug build).
const LOCK_BYTES: u64 = 104;

/// `performance_schema.memory_summary_global_by_event_name`.
#[derive(Debug)]
pub struct MemoryGlobal;

/// What each category holds now, the remainder last.
fn usage(server: &dyn ServerView) -> Vec<(&'static str, Usage)> {
    let mut pool = Usage::default();
    let mut undo = Usage::default();
    each_table(&server.catalog().engine, |_, t| {
        let f = t.footprint();
        pool.count += f.clustered.pages() + f.secondary.iter().map(|s| s.pages()).sum::<u64>();
        pool.bytes += f.total_bytes();
        let versions = t.versions().len();
        let per_record = f
            .clustered
            .record_bytes
            .checked_div(f.clustered.records)
            .unwrap_or(0);
        undo.count += versions;
        undo.bytes += versions * per_record;
    });
    let locks: u64 = server
        .trx()
        .active_trxs()
        .iter()
        .map(|t| server.trx().locks.trx_lock_info(&t.lock).rows_locked)
        .sum();
    let connections = server.connections().len() as u64;
    let prepared = server.prepared_statements();
    let digests = server.digests().rows();
    let digest_bytes = digests
        .iter()
        .map(|r| {
            let text = r.digest.as_ref().map_or(0, |d| d.text().len());
            let sample = r.sample_text.as_ref().map_or(0, String::len);
            let schema = r.schema.as_ref().map_or(0, String::len);
            (size_of_val(r) + text + sample + schema) as u64
        })
        .sum();
    let mut all = vec![
        (BUF_POOL, pool),
        (UNDO, undo),
        (
            LOCKS,
            Usage {
                count: locks,
                bytes: locks * LOCK_BYTES,
            },
        ),
        (
            THD,
            Usage {
                count: connections,
                bytes: connections * CONNECTION_BYTES,
            },
        ),
        (
            PREPARED,
            Usage {
                count: prepared,
                bytes: prepared * PREPARED_BYTES,
            },
        ),
        (
            DIGESTS,
            Usage {
                count: digests.len() as u64,
                bytes: digest_bytes,
            },
        ),
    ];
    let heap = heap_in_use();
    if heap > 0 {
        let attributed: u64 = all.iter().map(|(_, u)| u.bytes).sum();
        let rest = heap.saturating_sub(attributed);
        all.push((
            UNATTRIBUTED,
            Usage {
                count: u64::from(rest > 0),
                bytes: rest,
            },
        ));
    }
    all
}

fn row(name: &str, s: &Summary) -> Vec<Value> {
    let mut row = vec![Value::str(name)];
    row.extend(
        [
            s.count_alloc,
            s.count_free,
            s.bytes_alloc,
            s.bytes_free,
            s.low_count,
            s.current_count,
            s.high_count,
            s.low_bytes,
            s.current_bytes,
            s.high_bytes,
        ]
        .map(Value::UInt),
    );
    row
}

impl VirtualTable for MemoryGlobal {
    fn name(&self) -> &'static str {
        "memory_summary_global_by_event_name"
    }
    fn columns(&self) -> &'static [(&'static str, VType)] {
        use VType::*;
        &[
            ("EVENT_NAME", Text),
            ("COUNT_ALLOC", UInt),
            ("COUNT_FREE", UInt),
            ("SUM_NUMBER_OF_BYTES_ALLOC", UInt),
            ("SUM_NUMBER_OF_BYTES_FREE", UInt),
            ("LOW_COUNT_USED", UInt),
            ("CURRENT_COUNT_USED", UInt),
            ("HIGH_COUNT_USED", UInt),
            ("LOW_NUMBER_OF_BYTES_USED", UInt),
            ("CURRENT_NUMBER_OF_BYTES_USED", UInt),
            ("HIGH_NUMBER_OF_BYTES_USED", UInt),
        ]
    }
    fn rows(&self, server: &dyn ServerView) -> Vec<Vec<Value>> {
        // As MySQL with performance_schema=OFF: the table exists and is empty.
        if !server.digests().enabled() {
            return Vec::new();
        }
        SUMMARIES
            .observe(&usage(server))
            .iter()
            .map(|(name, s)| row(name, s))
            .collect()
    }
    fn truncate(&self, _server: &dyn ServerView) -> bool {
        SUMMARIES.reset();
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_match_columns_and_name_every_category() {
        let cfg = crate::config::Config::default();
        let server = crate::server::Server::from_config(&cfg).unwrap();
        let core = server.core();
        let rows = MemoryGlobal.rows(core.as_ref());
        assert!(rows.iter().all(|r| r.len() == MemoryGlobal.columns().len()));
        for name in [BUF_POOL, UNDO, LOCKS, THD, PREPARED, DIGESTS] {
            assert!(
                rows.iter().any(|r| r[0] == Value::str(name)),
                "{name} missing"
            );
        }
    }
}
