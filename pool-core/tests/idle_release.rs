//! Threads going idle call `Session::thread_idle` (the server gives its allocator's free memory
//! back there): a thread entering the thread cache once, a pool thread that ran commands after
//! it has slept `idle_release_after`, and an idle pool thread that ran nothing since never. (A
//! command the waiting thread runs directly may not be followed by a release: that thread
//! goes back to the poller, not to sleep.)
//! One test, so no other test of this binary moves the count.

mod common;

use common::{eventually, Server, IDLE_RELEASES, IDLE_RELEASE_AFTER};
use pool_core::{ConnectionHandler, PoolBuilder, PoolConfig, ThreadPerConnection};
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::{Duration, Instant};

fn releases() -> usize {
    IDLE_RELEASES.load(Ordering::Relaxed)
}

#[test]
fn idle_threads_release_once_and_idle_pools_stay_quiet() {
    // Thread per connection: two threads enter the cache, one exits (cache of two).
    let h = Arc::new(ThreadPerConnection::new(2));
    let server = Server::start(h.clone(), Duration::from_secs(60));
    let mut cs: Vec<_> = (0..3).map(|_| server.client()).collect();
    for c in &mut cs {
        assert_eq!(c.call("x").0, "x");
    }
    assert_eq!(
        releases(),
        0,
        "no thread went idle while its connection was open"
    );
    for c in &mut cs {
        c.send("quit");
    }
    eventually("two cached", || h.stats().threads_cached == 2);
    eventually("a release per cached thread", || releases() == 2);
    std::thread::sleep(IDLE_RELEASE_AFTER * 4);
    assert_eq!(releases(), 2, "a cached thread releases once");
    h.shutdown();
    drop(server);

    // The pool: one group; the thread that ran the commands releases after sleeping.
    let mut c = PoolConfig::mysql_defaults(2);
    c.size = 1;
    let (pool, _) = PoolBuilder::new(c)
        .log(Arc::new(|_, _| {}))
        .build::<common::LineSession>()
        .expect("pool starts");
    let pool = Arc::new(pool);
    let server = Server::start(pool.clone(), Duration::from_secs(60));
    let mut client = server.client();
    std::thread::sleep(IDLE_RELEASE_AFTER * 4);
    let before = releases();
    for i in 0..100 {
        let s = format!("m{i}");
        assert_eq!(client.call(&s).0, s);
    }
    eventually("a pool thread released after its work", || {
        releases() > before
    });
    // A thread may release once more for work it ran after its first release; then the count
    // stops: threads that ran nothing since do not release again, however long they sleep.
    let settled = |what: &str| {
        let t = Instant::now();
        loop {
            let n = releases();
            std::thread::sleep(IDLE_RELEASE_AFTER * 6);
            if releases() == n {
                return n;
            }
            assert!(
                t.elapsed() < Duration::from_secs(10),
                "{what}: still releasing"
            );
        }
    };
    let idle = settled("an idle pool");
    assert!(
        idle - before < 50,
        "{} releases for a burst of 100 commands: not one per command",
        idle - before
    );
    assert_eq!(
        client.call("still").0,
        "still",
        "the pool serves after a release"
    );
    pool.shutdown();
}
