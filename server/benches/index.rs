//! Engine hot paths on a 250,000-row sysbench table: point read (whole row and `SELECT c`),
//! in-place update of a non-indexed column, update of the indexed column `k`, insert, and a
//! 100-row primary-key range scan.

// criterion_group! makes a public function it cannot document.
#![allow(missing_docs)]

use std::hint::black_box;
use std::ops::Bound;
use std::time::Duration;

use criterion::{criterion_group, criterion_main, Criterion};
use tpbed_server::engine::{Direction, InsertOptions, KeyRange, WriteStamp};
use tpbed_server::value::Value;

#[path = "support/sysbench.rs"]
mod sysbench;
use sysbench::{fill, row, sbtest, Rng};

const ROWS: u64 = 250_000;

fn benches(c: &mut Criterion) {
    let table = sbtest("sbtest1");
    let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
    fill(&table, ROWS, &mut rng);
    let pk = |id: u64| {
        table
            .encode_search_key(0, &[Value::Int(id as i64)])
            .expect("key")
    };
    // Row contents are generated before timing, so the benches measure the engine only.
    let pool: Vec<Vec<Value>> = (0..1024).map(|i| row(&mut rng, i, ROWS)).collect();

    let mut g = c.benchmark_group("index_250k");
    g.bench_function("point_read_row", |b| {
        b.iter(|| black_box(table.get(&pk(1 + rng.below(ROWS)))));
    });
    g.bench_function("point_read_c", |b| {
        b.iter(|| black_box(table.get_columns(&pk(1 + rng.below(ROWS)), &[2])));
    });
    g.bench_function("update_non_index", |b| {
        b.iter(|| {
            let id = 1 + rng.below(ROWS);
            let mut new = table.get(&pk(id)).expect("row");
            new[2] = pool[rng.below(1024) as usize][2].clone();
            black_box(
                table
                    .update(&pk(id), new, WriteStamp::default(), &mut Vec::new())
                    .expect("update"),
            )
        });
    });
    g.bench_function("update_index_k", |b| {
        b.iter(|| {
            let id = 1 + rng.below(ROWS);
            let mut new = table.get(&pk(id)).expect("row");
            new[1] = Value::Int(1 + rng.below(ROWS) as i64);
            black_box(
                table
                    .update(&pk(id), new, WriteStamp::default(), &mut Vec::new())
                    .expect("update"),
            )
        });
    });
    let mut next_id = ROWS + 1;
    g.bench_function("insert", |b| {
        b.iter(|| {
            let mut r = pool[rng.below(1024) as usize].clone();
            r[0] = Value::Int(next_id as i64);
            next_id += 1;
            black_box(table.insert(r, &InsertOptions::default()).expect("insert"))
        });
    });
    g.bench_function("range_scan_100", |b| {
        b.iter(|| {
            let lo = 1 + rng.below(ROWS - 100);
            let range = KeyRange {
                lower: Bound::Included(pk(lo)),
                upper: Bound::Included(pk(lo + 99)),
            };
            black_box(table.scan(0, range, Direction::Forward).count())
        });
    });
    g.finish();
}

criterion_group! {
    name = index;
    config = Criterion::default().sample_size(30).measurement_time(Duration::from_secs(3)).warm_up_time(Duration::from_secs(1));
    targets = benches
}
criterion_main!(index);
