//! What a sysbench row costs in memory once it is stored: loads `sbtest`-shaped rows (id INT
//! AUTO_INCREMENT PRIMARY KEY, k INT with KEY k_1, c CHAR(120), pad CHAR(60), values as
//! sysbench's `prepare` makes them) through the transaction system, a thousand rows per
//! transaction, and reports bytes per row three ways: bytes requested from the allocator (a
//! counting global allocator), bytes glibc's malloc holds for them (`mallinfo2().uordblks`,
//! which includes each chunk's header and rounding) and resident memory (`/proc/self/statm`),
//! each after the load less before it. A second table without k_1 separates the index's share.
//!
//! `cargo bench -p tpbed-engine --bench row_footprint` (rows per load: `TPBED_FOOTPRINT_ROWS`,
//! default 250,000, sysbench's `--table-size` of the studies). Memory figures do not depend on
//! other load on the machine, unlike timings.

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicIsize, Ordering::Relaxed};
use std::sync::Arc;
use std::time::Duration;

#[path = "support/sbtest.rs"]
mod support;

use support::{sbtest, Rng};
use tpbed_engine::lock::LockConfig;
use tpbed_engine::trx::{insert_row, DupLock, Isolation, PurgeConfig, TrxSys};
use tpbed_engine::value::Value;
use tpbed_engine::{ClusteredRec, InsertOptions, KeyBuf, Record, RowBuf, SecondaryRec, Table};

/// The system allocator, counting the bytes requested of it.
struct Counting;

static REQUESTED: AtomicIsize = AtomicIsize::new(0);

// SAFETY: every call goes to `System` unchanged; the count is a side effect only.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        REQUESTED.fetch_add(layout.size() as isize, Relaxed);
        // SAFETY: the caller's contract is passed on.
        unsafe { System.alloc(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        REQUESTED.fetch_sub(layout.size() as isize, Relaxed);
        // SAFETY: as above.
        unsafe { System.dealloc(ptr, layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        REQUESTED.fetch_add(new_size as isize - layout.size() as isize, Relaxed);
        // SAFETY: as above.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static ALLOC: Counting = Counting;

/// The three memory figures at one moment.
#[derive(Debug, Clone, Copy)]
struct Memory {
    requested: i64,
    malloc: i64,
    rss: i64,
}

fn memory() -> Memory {
    // SAFETY: malloc_trim and mallinfo2 only read or release the allocator's free memory.
    let malloc = unsafe {
        libc::malloc_trim(0);
        libc::mallinfo2().uordblks as i64
    };
    let statm = std::fs::read_to_string("/proc/self/statm").unwrap_or_default();
    let pages: i64 = statm
        .split_whitespace()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(0);
    // SAFETY: sysconf has no preconditions.
    let page = unsafe { libc::sysconf(libc::_SC_PAGESIZE) } as i64;
    Memory {
        requested: REQUESTED.load(Relaxed) as i64,
        malloc,
        rss: pages * page,
    }
}

/// Loads `rows` sysbench rows into `table`, a thousand per transaction.
fn load(sys: &TrxSys, table: &Arc<Table>, rows: u64) {
    let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
    let mut done = 0;
    while done < rows {
        let mut trx = sys.begin(Isolation::RepeatableRead, false, 1, 1);
        for _ in 0..1000.min(rows - done) {
            let k = (rng.next() % rows) as i64 + 1;
            let row = vec![Value::Null, Value::Int(k), rng.digits(10), rng.digits(5)];
            insert_row(
                sys,
                &mut trx,
                table,
                row,
                &InsertOptions::default(),
                DupLock::Shared,
                Duration::from_secs(10),
            )
            .expect("insert");
            done += 1;
        }
        sys.commit(trx);
    }
}

/// Loads a table and returns what it added per row.
fn per_row(sys: &TrxSys, with_k_index: bool, rows: u64) -> (f64, f64, f64) {
    let before = memory();
    let table = sbtest(with_k_index);
    load(sys, &table, rows);
    let after = memory();
    assert_eq!(table.row_count(), rows);
    let per = |a: i64, b: i64| (a - b) as f64 / rows as f64;
    let out = (
        per(after.requested, before.requested),
        per(after.malloc, before.malloc),
        per(after.rss, before.rss),
    );
    drop(table);
    out
}

fn main() {
    let rows = std::env::var("TPBED_FOOTPRINT_ROWS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(250_000u64);
    let sys = TrxSys::new(LockConfig::default(), PurgeConfig::default());
    println!("bytes per sysbench row, {rows} rows per table");
    println!(
        "{:<24} {:>10} {:>10} {:>10}",
        "", "requested", "malloc", "RSS"
    );
    for (name, with_k) in [("with k_1", true), ("without k_1", false)] {
        let (req, malloc, rss) = per_row(&sys, with_k, rows);
        println!("{name:<24} {req:>10.1} {malloc:>10.1} {rss:>10.1}");
    }
    // A sysbench row encodes to 188 bytes; its key and k_1 entry to 4 and 8.
    let clustered = ClusteredRec::new(
        KeyBuf::from(&[0x80, 0, 0, 1][..]),
        RowBuf::new(&[0; 188]),
        1,
    );
    let secondary = SecondaryRec::new(&[0x80, 0, 0, 7, 0x80, 0, 0, 1], 4);
    println!(
        "stored records: clustered {} B, secondary {} B, each with a 4-byte slot",
        clustered.stored_len(),
        secondary.stored_len()
    );
}
