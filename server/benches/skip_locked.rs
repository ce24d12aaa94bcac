//! SKIP LOCKED at the engine level (no network, no SQL): a `q_v1`-shaped table of the
//! job-queue study (`PRIMARY KEY (id)`, `KEY idx_ready (status, run_at, id)`) in
//! `tpbed_server::engine`, a `tpbed_server::trx::TrxSys`, and real `LockingScan`s through
//! `idx_ready`, as the claim `SELECT id FROM q_v1 WHERE status = 0 ORDER BY run_at, id
//! LIMIT 10 FOR UPDATE SKIP LOCKED` runs them.
//!
//! - `uncontended/lock_rec_release_all`: a fresh lock-system transaction takes one record
//!   lock (`LockSys::lock_rec`, X next-key) and releases it (`release_all`).
//! - `uncontended/trx_ix_rec_commit`: the same through `TrxSys` (begin, read-write, table IX,
//!   record lock, commit).
//! - `skip_locked_scan/K`: transaction A has locked the first K ready rows with an X locking
//!   scan (REPEATABLE READ: next-key on `idx_ready`, `X,REC_NOT_GAP` on `PRIMARY`); B runs
//!   the claim with `WaitPolicy::SkipLocked` over the same range, gets past all K and locks
//!   the 10 free rows behind them. B's `visited` grows by K (skipped records are visited,
//!   not jumped over) and `skipped` = K, checked on every iteration.
//!
//! After criterion's report (only under `cargo bench`), B's claim time is fitted as
//! time = a + slope·K by least squares over K = 1k … 100k, each point the fastest of
//! `RUNS` runs (robust to other load on a shared machine; the median is printed too), and
//! printed with R². The targets: linear (R² ≥ 0.98) and slope below MySQL's
//! 0.130 µs/row (MariaDB: 0.171).
//!
//! Measured on the 2-vCPU AMD EPYC VM, fastest of 15 runs per K. Before lock hints
//! (2026-12-01 10:56 UTC, load 11.6 → 7.2): B's claim 66 ns/row at 1k, 334 ns/row at 100k,
//! fitted slope 0.340 µs/row, R² 0.9905 — the lock table's hash probes outgrew the caches.
//! With lock hints (SKIP LOCKED decides from the record's `LockHint`; 2026-12-01 12:06 UTC,
//! load 207 → 99 from other builds): 17.6 µs (1k), 119.6 µs (10k), 1.26 ms (100k), 12.0–17.6
//! ns/row, fitted slope 0.0125 µs/row, R² 0.9996 (medians: 0.0130, R² 0.9987); lock_rec +
//! release_all 276 ns; TrxSys begin + IX + record lock + commit 638 ns.

#[path = "common/fit.rs"]
mod fit;
use fit::fit;

use std::hint::black_box;
use std::ops::Bound;
use std::sync::Arc;
use std::time::{Duration, Instant};

use criterion::{BenchmarkId, Criterion, Throughput};
use tpbed_server::engine::lock::{
    Acquired, LockConfig, LockTrx, RecAt, RecKey, RecLockMode, TableLockMode, WaitPolicy,
};
use tpbed_server::engine::{
    Column, ColumnType, Direction, IndexDef, IndexKind, InsertOptions, IntKind, KeyRange,
    PageCapacity, Table, TableDef,
};
use tpbed_server::trx::{index_id, Isolation, LockingScan, ScanLockMode, ScanOptions, Trx, TrxSys};
use tpbed_server::value::Value;

/// The claim's LIMIT.
const BATCH: u64 = 10;
/// K values of criterion's group.
const BENCH_KS: [u64; 4] = [1_000, 10_000, 50_000, 100_000];
/// K values of the fit.
const FIT_KS: [u64; 7] = [1_000, 10_000, 25_000, 40_000, 50_000, 75_000, 100_000];
/// Runs per K for the fit.
const RUNS: usize = 15;
const MAX_K: u64 = 100_000;

/// `q_v1` of tests/fixtures/queue.sql.
fn q_v1() -> Table {
    let int = |kind, unsigned| ColumnType::Integer { kind, unsigned };
    let def = TableDef::new(
        "q_v1",
        vec![
            Column::new("id", int(IntKind::Big, true))
                .not_null()
                .auto_increment(),
            Column::new("status", int(IntKind::Tiny, true))
                .not_null()
                .default_value(Value::UInt(0)),
            Column::new("run_at", int(IntKind::Big, true)).not_null(),
            Column::new("attempts", int(IntKind::Tiny, true))
                .not_null()
                .default_value(Value::UInt(0)),
            Column::new("owner", ColumnType::VarChar(40)),
            Column::new("lease_until", int(IntKind::Big, true)),
            Column::new("priority", int(IntKind::Int, false))
                .not_null()
                .default_value(Value::Int(0)),
            Column::new("payload", ColumnType::VarBinary(256)),
        ],
        vec![
            IndexDef::new("PRIMARY", IndexKind::Primary, vec![0]),
            IndexDef::new("idx_ready", IndexKind::NonUnique, vec![1, 2, 0]),
        ],
    )
    .expect("q_v1 definition");
    Table::new(def, PageCapacity::default())
}

/// `rows` ready jobs (committed: written outside any transaction).
fn fill(t: &Table, rows: u64) {
    let opts = InsertOptions::default();
    for id in 1..=rows {
        let row = vec![
            Value::UInt(id),
            Value::UInt(0),
            Value::UInt(1_000_000 + id),
            Value::UInt(0),
            Value::Null,
            Value::Null,
            Value::Int(0),
            Value::Bytes(format!("job {id}").into_bytes()),
        ];
        t.insert(row, &opts).expect("insert");
    }
}

fn begin(sys: &TrxSys, conn: u64) -> (Trx, LockTrx) {
    // performance_schema thread ids are the connection id plus 47 (as trx::thread_id_of had it).
    let mut trx = sys.begin(Isolation::RepeatableRead, false, conn, conn + 47);
    let info = sys.make_read_write(&mut trx);
    (trx, info.lock.clone())
}

fn opts(policy: WaitPolicy) -> ScanOptions {
    ScanOptions {
        mode: ScanLockMode::Exclusive,
        policy,
        gaps: true,
        unique_point: false,
        covering_shared: false,
        semi_consistent: false,
        timeout: Duration::from_secs(1),
    }
}

/// `status = 0` on idx_ready.
fn ready_range(t: &Table) -> KeyRange {
    KeyRange::prefix(t.encode_search_key(1, &[Value::UInt(0)]).expect("key"))
}

/// The claim: up to `limit` rows of the ready range, locked X with `policy`. Returns the
/// scan's (rows, visited, skipped).
fn claim(sys: &TrxSys, lt: &LockTrx, t: &Table, policy: WaitPolicy, limit: u64) -> (u64, u64, u64) {
    let mut scan = LockingScan::new(
        sys,
        lt.clone(),
        t,
        1,
        ready_range(t),
        Direction::Forward,
        opts(policy),
        vec![0],
    );
    let mut rows = 0;
    while rows < limit {
        match scan.fetch().expect("no lock error") {
            Some(f) => {
                black_box(f);
                rows += 1;
            }
            None => break,
        }
    }
    (rows, scan.stats.records_visited, scan.skipped)
}

/// Transaction A with the first `k` ready rows locked.
fn holder(sys: &TrxSys, t: &Table, k: u64) -> Trx {
    let (mut trx, lt) = begin(sys, 1);
    sys.lock_table(&mut trx, t, TableLockMode::IX, Duration::from_secs(1))
        .expect("IX");
    let (rows, visited, skipped) = claim(sys, &lt, t, WaitPolicy::Wait, k);
    assert_eq!((rows, visited, skipped), (k, k, 0), "A's locking scan");
    trx
}

/// One timed claim of B past `k` locked rows; checks the counters; commits B (untimed).
fn timed_claim(sys: &TrxSys, t: &Table, k: u64, conn: u64) -> Duration {
    let (mut trx, lt) = begin(sys, conn);
    sys.lock_table(&mut trx, t, TableLockMode::IX, Duration::from_secs(1))
        .expect("IX");
    let start = Instant::now();
    let (rows, visited, skipped) = claim(sys, &lt, t, WaitPolicy::SkipLocked, BATCH);
    let took = start.elapsed();
    assert_eq!(rows, BATCH, "B claims the free rows behind the locked ones");
    assert_eq!(skipped, k, "B skips every row A holds");
    assert_eq!(visited, k + BATCH, "skipped rows are visited");
    sys.commit(trx);
    took
}

fn uncontended(c: &mut Criterion, sys: &TrxSys, t: &Table, keys: &[Vec<u8>]) {
    let mut g = c.benchmark_group("uncontended");
    let idx = index_id(t, 1);
    let mut n = 0u64;
    g.bench_function("lock_rec_release_all", |b| {
        b.iter(|| {
            n += 1;
            let lt = sys.locks.begin_trx(1_000_000_000 + n, 1, 1);
            let key = &keys[(n % keys.len() as u64) as usize];
            let rec = RecAt {
                index: idx,
                key: RecKey::User(key),
                page: 0,
            };
            let r = sys
                .locks
                .lock_rec(&lt, rec, RecLockMode::X, WaitPolicy::Wait);
            assert!(matches!(r, Ok(Acquired::Granted)));
            sys.locks.release_all(&lt);
        });
    });
    g.bench_function("trx_ix_rec_commit", |b| {
        b.iter(|| {
            n += 1;
            let (mut trx, lt) = begin(sys, 2);
            sys.lock_table(&mut trx, t, TableLockMode::IX, Duration::from_secs(1))
                .expect("IX");
            let key = &keys[(n % keys.len() as u64) as usize];
            let rec = RecAt {
                index: idx,
                key: RecKey::User(key),
                page: 0,
            };
            let r = sys
                .locks
                .lock_rec(&lt, rec, RecLockMode::X, WaitPolicy::Wait);
            assert!(matches!(r, Ok(Acquired::Granted)));
            black_box(sys.commit(trx));
        });
    });
    g.finish();
}

fn skip_locked(c: &mut Criterion, sys: &TrxSys, t: &Table) {
    let mut g = c.benchmark_group("skip_locked_scan");
    for k in BENCH_KS {
        let a = holder(sys, t, k);
        g.throughput(Throughput::Elements(k));
        g.bench_with_input(BenchmarkId::from_parameter(k), &k, |b, &k| {
            b.iter_custom(|iters| (0..iters).map(|_| timed_claim(sys, t, k, 3)).sum());
        });
        sys.commit(a);
    }
    g.finish();
}

fn skip_slope(sys: &TrxSys, t: &Table) {
    println!("\nSKIP LOCKED claim past K locked rows (fastest of {RUNS} runs per K; median too)");
    println!(
        "{:>8} {:>12} {:>10} {:>12} {:>10}",
        "K", "min_us", "ns/row", "median_us", "visited"
    );
    let (mut xs, mut mins, mut meds) = (Vec::new(), Vec::new(), Vec::new());
    for k in FIT_KS {
        let a = holder(sys, t, k);
        timed_claim(sys, t, k, 4); // warm-up
        let mut runs: Vec<Duration> = (0..RUNS).map(|_| timed_claim(sys, t, k, 4)).collect();
        runs.sort();
        let us = runs[0].as_secs_f64() * 1e6;
        let med = runs[RUNS / 2].as_secs_f64() * 1e6;
        println!(
            "{k:>8} {us:>12.1} {:>10.1} {med:>12.1} {:>10}",
            us * 1000.0 / k as f64,
            k + BATCH
        );
        xs.push(k as f64);
        mins.push(us);
        meds.push(med);
        sys.commit(a);
    }
    let (a, b, r2) = fit(&xs, &mins);
    println!(
        "fit over fastest runs: slope = {b:.4} us/row (MySQL 0.130, MariaDB 0.171), \
         intercept = {a:.1} us, R^2 = {r2:.4}"
    );
    let (a, b, r2) = fit(&xs, &meds);
    println!("fit over medians:      slope = {b:.4} us/row, intercept = {a:.1} us, R^2 = {r2:.4}");
}

fn main() {
    let sys: Arc<TrxSys> = TrxSys::new(LockConfig::default(), Default::default());
    let t = q_v1();
    fill(&t, MAX_K + BATCH);
    let keys: Vec<Vec<u8>> = (1..=MAX_K)
        .map(|id| {
            t.encode_search_key(
                1,
                &[Value::UInt(0), Value::UInt(1_000_000 + id), Value::UInt(id)],
            )
            .expect("key")
        })
        .collect();
    // The ready range holds exactly the rows filled, in key order.
    let range = ready_range(&t);
    assert!(matches!(range.lower, Bound::Included(_)));
    assert_eq!(t.count_range(1, range, u64::MAX), MAX_K + BATCH);

    let mut c = Criterion::default()
        .sample_size(20)
        .measurement_time(Duration::from_secs(3))
        .warm_up_time(Duration::from_secs(1))
        .configure_from_args();
    uncontended(&mut c, &sys, &t, &keys);
    skip_locked(&mut c, &sys, &t);
    c.final_summary();
    // `cargo test --benches` runs each bench once without `--bench`; the sweep is for real runs.
    if std::env::args().any(|a| a == "--bench") {
        skip_slope(&sys, &t);
    }
}
