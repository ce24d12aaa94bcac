//! `Table::footprint` against the allocator: loads sysbench-shaped rows into a table and checks
//! that the bytes the footprint reports are the bytes the allocator handed out for them (within 1 %), and
//! reports what a walk costs per record. CREATE INDEX's rebuild of such a table needs, beside
//! the old table, the new table and its index's sort keys, never a copy of the rows.
//!
//! `TPBED_FOOTPRINT_TIMING_ROWS` (default 20,000) sets the rows of the timing test; run it with
//! `--nocapture` to see the figures.

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicIsize, Ordering::Relaxed};
use std::sync::Mutex;
use std::time::Instant;

use tpbed_engine::table::footprint::TableFootprint;
use tpbed_engine::value::Value;
use tpbed_engine::{
    Column, ColumnType, IndexDef, IndexKind, InsertOptions, IntKind, PageCapacity, Table, TableDef,
};

/// The system allocator, counting the bytes requested of it.
struct Counting;

static REQUESTED: AtomicIsize = AtomicIsize::new(0);

/// The largest value [`REQUESTED`] has reached (reset by a test that reads it).
static PEAK: AtomicIsize = AtomicIsize::new(0);

/// Counts `delta` requested bytes, raising the peak.
fn count(delta: isize) {
    let now = REQUESTED.fetch_add(delta, Relaxed) + delta;
    PEAK.fetch_max(now, Relaxed);
}

// SAFETY: every call goes to `System` unchanged; the count is a side effect only.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        count(layout.size() as isize);
        // SAFETY: the caller's contract is passed on.
        unsafe { System.alloc(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        REQUESTED.fetch_sub(layout.size() as isize, Relaxed);
        // SAFETY: as above.
        unsafe { System.dealloc(ptr, layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        count(new_size as isize - layout.size() as isize);
        // SAFETY: as above.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static ALLOC: Counting = Counting;

/// The count is process-wide: tests that read it run one at a time.
static ALONE: Mutex<()> = Mutex::new(());

fn sbtest(name: &str) -> Table {
    Table::new(sbtest_def(name, true), PageCapacity::default())
}

/// sbtest's definition, with its `k_1` index or without.
fn sbtest_def(name: &str, k_1: bool) -> TableDef {
    let int = ColumnType::Integer {
        kind: IntKind::Int,
        unsigned: false,
    };
    let mut indexes = vec![IndexDef::new("PRIMARY", IndexKind::Primary, vec![0])];
    if k_1 {
        indexes.push(IndexDef::new("k_1", IndexKind::NonUnique, vec![1]));
    }
    TableDef::new(
        name,
        vec![
            Column::new("id", int).not_null(),
            Column::new("k", int).not_null(),
            Column::new("c", ColumnType::Char(120)).not_null(),
            Column::new("pad", ColumnType::Char(60)).not_null(),
        ],
        indexes,
    )
    .expect("sbtest definition")
}

/// Inserts rows `from..to` with sysbench-like values (`k` scattered, `c` 119 and `pad` 59
/// characters).
fn load(t: &Table, from: i64, to: i64) {
    for id in from..to {
        let k = (id * 7919) % 10_007;
        let row = vec![
            Value::Int(id),
            Value::Int(k),
            Value::str(&format!("{id:0>119}")),
            Value::str(&format!("{k:0>59}")),
        ];
        t.insert(row, &InsertOptions::default()).expect("insert");
    }
}

/// (allocator bytes the load added, footprint after less footprint before).
fn measured(t: &Table, from: i64, to: i64) -> (i64, i64) {
    let before_f = t.footprint().total_bytes() as i64;
    let before = REQUESTED.load(Relaxed);
    load(t, from, to);
    let after = REQUESTED.load(Relaxed);
    (
        (after - before) as i64,
        t.footprint().total_bytes() as i64 - before_f,
    )
}

#[test]
fn the_footprint_is_what_the_allocator_handed_out_for_the_rows() {
    let _alone = ALONE.lock().unwrap_or_else(|e| e.into_inner());
    let t = sbtest("sbtest1");
    for (from, to) in [(1, 20_001), (20_001, 40_001)] {
        let (alloc, foot) = measured(&t, from, to);
        let rows = (to - from) as f64;
        let diff = (alloc - foot).abs() as f64 / alloc as f64;
        assert!(
            diff < 0.01,
            "rows {from}..{to}: allocator {:.1} B/row, footprint {:.1} B/row",
            alloc as f64 / rows,
            foot as f64 / rows
        );
    }
    let f: TableFootprint = t.footprint();
    assert_eq!(f.clustered.records, 40_000);
    assert_eq!(f.secondary[0].records, 40_000);
    assert_eq!(f.clustered.delete_marked, 0);
}

#[test]
fn walk_cost_per_record() {
    let _alone = ALONE.lock().unwrap_or_else(|e| e.into_inner());
    let rows: i64 = std::env::var("TPBED_FOOTPRINT_TIMING_ROWS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(20_000);
    let t = sbtest("sbtest2");
    load(&t, 1, rows + 1);
    let start = Instant::now();
    let f = t.footprint();
    let took = start.elapsed();
    let leaves = f.clustered.leaf_pages + f.secondary[0].leaf_pages;
    println!(
        "footprint of {rows} rows: {:?} ({:.1} ns per record, {:.2} us per leaf latch held), \
         {:.1} bytes per row",
        took,
        took.as_nanos() as f64 / (2 * rows) as f64,
        took.as_nanos() as f64 / leaves as f64 / 1000.0,
        f.total_bytes() as f64 / rows as f64
    );
    assert_eq!(f.clustered.records, rows as u64);
}

#[test]
fn create_index_needs_the_new_table_and_its_keys_beside_the_old_one() {
    let _alone = ALONE.lock().unwrap_or_else(|e| e.into_inner());
    let rows: i64 = 20_000;
    let t = Table::new(sbtest_def("sbtest3", false), PageCapacity::default());
    load(&t, 1, rows + 1);
    let before = REQUESTED.load(Relaxed);
    PEAK.store(before, Relaxed);
    let rebuilt = t
        .rebuilt(sbtest_def("sbtest3", true), 1)
        .expect("CREATE INDEX k_1");
    let peak = PEAK.load(Relaxed) - before;
    let new = rebuilt.footprint().total_bytes() as isize;
    // The sort keys (24 bytes of entry and 8 of key per row) are freed before the clustered
    // index is built; a rebuild that copied the rows first peaked about 70 bytes per row
    // above the new table.
    let slack = 32 * rows as isize;
    println!(
        "CREATE INDEX over {rows} rows: peak {:.1} B/row above the old table, new table {:.1} B/row",
        peak as f64 / rows as f64,
        new as f64 / rows as f64
    );
    assert!(
        peak <= new + slack,
        "the rebuild's peak is {:.1} B/row above the old table; the new table holds {:.1}",
        peak as f64 / rows as f64,
        new as f64 / rows as f64
    );
    assert_eq!(rebuilt.footprint().secondary[0].records, rows as u64);
}
