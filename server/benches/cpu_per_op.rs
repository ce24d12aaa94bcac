//! CPU time per engine operation on a 250,000-row sysbench table, measured as the thread's
//! on-CPU time (/proc/thread-self/schedstat) rather than wall time, so the numbers stay
//! meaningful on a shared, loaded machine. Run: `cargo bench --bench cpu_per_op`.

use std::hint::black_box;
use std::ops::Bound;

use tpbed_server::engine::{Direction, InsertOptions, KeyRange, WriteStamp};
use tpbed_server::value::Value;

#[path = "support/sysbench.rs"]
mod sysbench;
use sysbench::{fill, row, sbtest, Rng};

const ROWS: u64 = 250_000;

/// Nanoseconds this thread has spent on a CPU.
fn thread_cpu_ns() -> u64 {
    let s = std::fs::read_to_string("/proc/thread-self/schedstat").expect("schedstat");
    s.split_whitespace()
        .next()
        .and_then(|v| v.parse().ok())
        .expect("run time")
}

fn measure(name: &str, ops: u64, mut op: impl FnMut()) {
    // `cargo bench --bench cpu_per_op -- <substring>` runs only the matching measurements.
    let filter = std::env::args().skip(1).find(|a| !a.starts_with("--"));
    if filter.is_some_and(|f| !name.contains(&f)) {
        return;
    }
    for _ in 0..ops / 10 {
        op(); // warm-up
    }
    let start = thread_cpu_ns();
    for _ in 0..ops {
        op();
    }
    let ns = (thread_cpu_ns() - start) as f64 / ops as f64;
    println!("cpu_per_op/{name:<18} {ns:>9.0} ns CPU per op ({ops} ops)");
}

fn main() {
    if std::env::args().any(|a| a == "--list") {
        return;
    }
    let table = sbtest("sbtest1");
    let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
    fill(&table, ROWS, &mut rng);
    let pool: Vec<Vec<Value>> = (0..1024).map(|i| row(&mut rng, i, ROWS)).collect();
    let pk = |id: u64| {
        table
            .encode_search_key(0, &[Value::Int(id as i64)])
            .expect("key")
    };
    let mut r = Rng(7);
    measure("point_read_row", 1_000_000, || {
        black_box(table.get(&pk(1 + r.below(ROWS))));
    });
    measure("point_read_c", 1_000_000, || {
        black_box(table.get_columns(&pk(1 + r.below(ROWS)), &[2]));
    });
    measure("update_non_index", 300_000, || {
        let id = 1 + r.below(ROWS);
        let mut new = table.get(&pk(id)).expect("row");
        new[2] = pool[r.below(1024) as usize][2].clone();
        black_box(
            table
                .update(&pk(id), new, WriteStamp::default(), &mut Vec::new())
                .expect("update"),
        );
    });
    measure("update_index_k", 300_000, || {
        let id = 1 + r.below(ROWS);
        let mut new = table.get(&pk(id)).expect("row");
        new[1] = Value::Int(1 + r.below(ROWS) as i64);
        black_box(
            table
                .update(&pk(id), new, WriteStamp::default(), &mut Vec::new())
                .expect("update"),
        );
    });
    let mut next_id = ROWS;
    measure("insert", 300_000, || {
        next_id += 1;
        let mut new = pool[(next_id % 1024) as usize].clone();
        new[0] = Value::Int(next_id as i64);
        black_box(
            table
                .insert(new, &InsertOptions::default())
                .expect("insert"),
        );
    });
    measure("range_scan_100_c", 20_000, || {
        let lo = 1 + r.below(ROWS - 100);
        let range = KeyRange {
            lower: Bound::Included(pk(lo)),
            upper: Bound::Included(pk(lo + 99)),
        };
        black_box(
            table
                .scan(0, range, Direction::Forward)
                .project(vec![2])
                .count(),
        );
    });
    measure("range_scan_100_c_pf8", 20_000, || {
        let lo = 1 + r.below(ROWS - 100);
        let range = KeyRange {
            lower: Bound::Included(pk(lo)),
            upper: Bound::Included(pk(lo + 99)),
        };
        black_box(
            table
                .scan(0, range, Direction::Forward)
                .project(vec![2])
                .prefetch(8)
                .count(),
        );
    });
    measure("range_scan_100_row", 20_000, || {
        let lo = 1 + r.below(ROWS - 100);
        let range = KeyRange {
            lower: Bound::Included(pk(lo)),
            upper: Bound::Included(pk(lo + 99)),
        };
        black_box(table.scan(0, range, Direction::Forward).count());
    });
}
