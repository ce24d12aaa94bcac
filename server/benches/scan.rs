//! Looking a text up in the statement shapes: `tpbed_server::stmt::scan::scan` (key and
//! literals in one pass over the bytes) against sqlparser's MySQL tokenizer
//! (`tokenize_with_location`, what the shape cache runs to build a key), on TPC-C statement
//! texts and a sysbench point select.
//!
//! After criterion's report (only under `cargo bench`), each text's time per call is printed
//! for both as the fastest of `RUNS` batches (robust to other load on a shared machine), with
//! their ratio.
//!
//! Measured 2026-12-06 21:36 UTC on the 2-vCPU AMD EPYC VM while other builds ran (load
//! average 11 to 16, so read the figures as upper bounds), fastest of 30 batches, ns per
//! text, scan / tokenize: new_order_customer 557 / 9253 (16.6x), new_order_district 357 /
//! 4566 (12.8x), new_order_stock 434 / 5531 (12.7x), new_order_line 927 / 10792 (11.6x),
//! sysbench_point 212 / 1537 (7.3x). Criterion's medians: scan 0.47 to 1.8 µs, tokenize 3.4
//! to 14 µs.

use std::hint::black_box;
use std::time::{Duration, Instant};

use criterion::Criterion;
use sqlparser::dialect::MySqlDialect;
use sqlparser::tokenizer::Tokenizer;
use tpbed_server::stmt::scan::scan;

const TEXTS: &[(&str, &str)] = &[
    (
        "new_order_customer",
        "SELECT c_discount, c_last, c_credit, w_tax FROM customer1, warehouse1 WHERE w_id = 1 \
         AND c_w_id = w_id AND c_d_id = 3 AND c_id = 1234",
    ),
    (
        "new_order_district",
        "UPDATE district1 SET d_next_o_id = d_next_o_id + 1 WHERE d_w_id = 1 AND d_id = 7",
    ),
    (
        "new_order_stock",
        "SELECT s_quantity, s_data, s_dist_01 s_dist FROM stock1 WHERE s_i_id = 5521 AND \
         s_w_id = 1 FOR UPDATE",
    ),
    (
        "new_order_line",
        "INSERT INTO order_line1 (ol_o_id, ol_d_id, ol_w_id, ol_number, ol_i_id, \
         ol_supply_w_id, ol_quantity, ol_amount, ol_dist_info) VALUES \
         (3001,7,1,1,5521,1,5,321.55,'abcdefghijabcdefghijabcd')",
    ),
    ("sysbench_point", "SELECT c FROM sbtest1 WHERE id=5012"),
];

/// Batches per text for the printed figures, and calls per batch.
const RUNS: usize = 30;
const CALLS: u32 = 2_000;

fn tokenize(sql: &str) -> usize {
    Tokenizer::new(&MySqlDialect {}, sql)
        .tokenize_with_location()
        .map_or(0, |t| t.len())
}

fn scanned(sql: &str) -> usize {
    scan(sql).map_or(0, |s| s.key.len() + s.literals.len())
}

/// The fastest of [`RUNS`] batches of `f(sql)`, per call.
fn fastest(sql: &str, f: fn(&str) -> usize) -> Duration {
    (0..RUNS)
        .map(|_| {
            let t = Instant::now();
            for _ in 0..CALLS {
                black_box(f(black_box(sql)));
            }
            t.elapsed() / CALLS
        })
        .min()
        .unwrap_or_default()
}

fn main() {
    for (name, sql) in TEXTS {
        assert!(scan(sql).is_some(), "{name} must scan");
    }
    let mut c = Criterion::default()
        .configure_from_args()
        .sample_size(30)
        .measurement_time(Duration::from_secs(2));
    for (name, sql) in TEXTS {
        c.bench_function(&format!("scan/{name}"), |b| {
            b.iter(|| scanned(black_box(sql)))
        });
        c.bench_function(&format!("tokenize/{name}"), |b| {
            b.iter(|| tokenize(black_box(sql)))
        });
    }
    c.final_summary();
    // `cargo test --benches` runs each bench once without `--bench`; the table is for real runs.
    if std::env::args().any(|a| a == "--bench") {
        println!("fastest of {RUNS} batches of {CALLS} calls, ns per text:");
        println!(
            "{:<20} {:>8} {:>10} {:>7}",
            "text", "scan", "tokenize", "ratio"
        );
        for (name, sql) in TEXTS {
            let s = fastest(sql, scanned);
            let t = fastest(sql, tokenize);
            println!(
                "{name:<20} {:>8} {:>10} {:>6.1}x",
                s.as_nanos(),
                t.as_nanos(),
                t.as_secs_f64() / s.as_secs_f64()
            );
        }
    }
}
