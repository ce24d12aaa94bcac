//! What opening and closing a read view costs (an autocommit consistent read's begin, view and
//! commit), from 1 thread and from 8 threads at once, per operation, two ways: core time
//! (wall time × the cores the threads can use ÷ operations: equal figures from 1 and from 8
//! threads mean the operation scales with the cores; on a 2-core machine 8 threads share two)
//! and CPU time (the threads' own CPU time ÷ operations, which other load on a shared machine
//! disturbs least, but which leaves out time a thread sleeps waiting for a lock).
//!
//! `cargo bench -p tpbed-engine --bench read_view`

// criterion_group! makes a public function it cannot document.
#![allow(missing_docs)]

use std::hint::black_box;
use std::sync::{Arc, Barrier};
use std::thread;
use std::time::{Duration, Instant};

use criterion::{criterion_group, criterion_main, Criterion};
use tpbed_engine::lock::LockConfig;
use tpbed_engine::trx::{Isolation, PurgeConfig, TrxSys};

/// One autocommit consistent read's view: made, then closed by the commit.
fn open_close(sys: &TrxSys, connection: u64) {
    let mut trx = sys.begin(Isolation::RepeatableRead, false, connection, connection);
    black_box(sys.view(&mut trx));
    sys.commit(trx);
}

/// The wall time of `threads` threads each running `iters` [`open_close`]s at once, and the
/// CPU time they used together.
fn run(sys: &Arc<TrxSys>, threads: u64, iters: u64) -> (Duration, Duration) {
    let start = Arc::new(Barrier::new(threads as usize + 1));
    let workers: Vec<_> = (1..=threads)
        .map(|connection| {
            let (sys, start) = (Arc::clone(sys), Arc::clone(&start));
            thread::spawn(move || {
                start.wait();
                let cpu = thread_cpu_time();
                for _ in 0..iters {
                    open_close(&sys, connection);
                }
                thread_cpu_time() - cpu
            })
        })
        .collect();
    start.wait();
    let t0 = Instant::now();
    let cpu = workers
        .into_iter()
        .map(|w| w.join().expect("bench thread"))
        .sum();
    (t0.elapsed(), cpu)
}

/// The calling thread's CPU time.
fn thread_cpu_time() -> Duration {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a valid timespec for the call to fill.
    let rc = unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    assert_eq!(rc, 0, "CLOCK_THREAD_CPUTIME_ID is supported");
    Duration::new(ts.tv_sec as u64, ts.tv_nsec as u32)
}

fn read_view(c: &mut Criterion) {
    let sys = TrxSys::new(LockConfig::default(), PurgeConfig::default());
    let cores = thread::available_parallelism().map_or(1, |n| n.get() as u32);
    let mut g = c.benchmark_group("read_view_open_close");
    for threads in [1u32, 8] {
        // Wall time × the cores the threads can use, per operation.
        g.bench_function(format!("{threads}_threads_core_time"), |b| {
            b.iter_custom(|iters| run(&sys, threads.into(), iters).0 * threads.min(cores) / threads)
        });
        // CPU time per operation: what other load on the machine changes least.
        g.bench_function(format!("{threads}_threads_cpu_time"), |b| {
            b.iter_custom(|iters| run(&sys, threads.into(), iters).1 / threads)
        });
    }
    g.finish();
}

criterion_group!(benches, read_view);
criterion_main!(benches);
