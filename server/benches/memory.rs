//! Memory per row: builds 4 sysbench tables of 250,000 rows (1,000,000 rows) and reports the
//! process' VmRSS from /proc/self/status before and after. Run: `cargo bench --bench memory`.

use std::time::Instant;

#[path = "support/sysbench.rs"]
mod sysbench;
use sysbench::{fill, sbtest, Rng};

fn vm_rss_kib() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").expect("/proc/self/status");
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .expect("VmRSS line")
}

fn main() {
    if std::env::args().any(|a| a == "--list") {
        return; // `cargo bench -- --list` probes every bench binary
    }
    const TABLES: u64 = 4;
    const ROWS: u64 = 250_000;
    let before = vm_rss_kib();
    let start = Instant::now();
    let mut rng = Rng(42);
    let tables: Vec<_> = (1..=TABLES)
        .map(|i| {
            let t = sbtest(&format!("sbtest{i}"));
            fill(&t, ROWS, &mut rng);
            t
        })
        .collect();
    let after = vm_rss_kib();
    let rows = TABLES * ROWS;
    let grown = (after - before) * 1024;
    println!(
        "memory: {rows} rows in {TABLES} tables built in {:.2?}; VmRSS {before} kB -> {after} kB \
         (total {:.1} MiB, +{:.1} MiB, {:.0} bytes/row)",
        start.elapsed(),
        after as f64 / 1024.0,
        grown as f64 / 1_048_576.0,
        grown as f64 / rows as f64
    );
    assert!(tables.iter().all(|t| t.row_count() == ROWS));
    assert!(
        after < 1024 * 1024,
        "1,000,000 rows must fit in under 1 GiB RSS (got {after} kB)"
    );
}
