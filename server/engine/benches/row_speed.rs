//! How fast the engine inserts and point-reads sysbench rows: loads `sbtest`-shaped rows (as
//! `row_footprint` makes them, with KEY k_1) through the transaction system, a thousand rows
//! per transaction, then reads random rows by primary key, and prints nanoseconds per insert
//! and per read for each of a few rounds (the first is a warm-up of the allocator).
//!
//! `cargo bench -p tpbed-engine --bench row_speed` (rows: `TPBED_SPEED_ROWS`, default
//! 250,000; rounds: `TPBED_SPEED_ROUNDS`, default 3). Timings depend on other load on the
//! machine: compare builds interleaved, on a quiet machine.

use std::sync::Arc;
use std::time::{Duration, Instant};

#[path = "support/sbtest.rs"]
mod support;

use support::{sbtest, Rng};
use tpbed_engine::lock::LockConfig;
use tpbed_engine::trx::{insert_row, DupLock, Isolation, PurgeConfig, TrxSys};
use tpbed_engine::value::Value;
use tpbed_engine::{InsertOptions, Table};

/// Nanoseconds per insert of `rows` rows, a thousand per transaction.
fn load(sys: &TrxSys, table: &Arc<Table>, rows: u64) -> f64 {
    let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
    let start = Instant::now();
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
    start.elapsed().as_nanos() as f64 / rows as f64
}

/// Nanoseconds per point read of a random row by primary key (all columns decoded).
fn point_reads(table: &Table, rows: u64, reads: u64) -> f64 {
    let mut rng = Rng(0x2545_F491_4F6C_DD1D);
    let keys: Vec<Vec<u8>> = (0..reads)
        .map(|_| {
            let id = (rng.next() % rows) as i64 + 1;
            let row = [
                Value::Int(id),
                Value::Int(0),
                Value::str(""),
                Value::str(""),
            ];
            table.primary_key_of(&row).expect("a primary key")
        })
        .collect();
    let start = Instant::now();
    let mut found = 0u64;
    for k in &keys {
        found += u64::from(table.get(k).is_some());
    }
    let ns = start.elapsed().as_nanos() as f64 / reads as f64;
    assert_eq!(found, reads, "every row is there");
    ns
}

fn main() {
    let env = |name: &str, default: u64| {
        std::env::var(name)
            .ok()
            .and_then(|s| s.parse().ok())
            .unwrap_or(default)
    };
    let rows = env("TPBED_SPEED_ROWS", 250_000);
    let rounds = env("TPBED_SPEED_ROUNDS", 3);
    let sys = TrxSys::new(LockConfig::default(), PurgeConfig::default());
    println!("sysbench rows with k_1, {rows} rows; ns per operation");
    println!("{:<8} {:>10} {:>12}", "round", "insert", "point read");
    for round in 0..rounds {
        let table = sbtest(true);
        let insert = load(&sys, &table, rows);
        let read = point_reads(&table, rows, rows * 2);
        println!("{round:<8} {insert:>10.0} {read:>12.0}");
    }
}
