//! One thread per connection over real TCP: the thread cache and its counters.

mod common;

use common::{eventually, Server};
use pool_core::{ConnectionHandler, ThreadPerConnection};
use std::sync::Arc;
use std::time::Duration;

#[test]
fn threads_are_cached_and_reused() {
    let h = Arc::new(ThreadPerConnection::new(2));
    let server = Server::start(h.clone(), Duration::from_secs(60));
    let mut cs: Vec<_> = (0..3).map(|_| server.client()).collect();
    for (i, c) in cs.iter_mut().enumerate() {
        let s = format!("m{i}");
        assert_eq!(c.call(&s).0, s);
    }
    let st = h.stats();
    assert_eq!((st.threads_created, st.threads_connected), (3, 3));
    for c in &mut cs {
        c.send("quit");
    }
    eventually("two cached, one exited", || {
        let s = h.stats();
        s.threads_cached == 2 && s.threads_connected == 0
    });
    let mut again: Vec<_> = (0..2).map(|_| server.client()).collect();
    for c in &mut again {
        assert_eq!(c.call("again").0, "again");
    }
    assert_eq!(h.stats().threads_created, 3, "cached threads reused");
    h.set_thread_cache_size(0);
    // A reported wait is a no-op outside a pool.
    let (r, took) = again[0].call("sleep 5");
    assert_eq!(r, "slept");
    assert!(took >= Duration::from_millis(5));
    h.shutdown();
    for c in &mut again {
        assert_eq!(c.recv(), "");
    }
    assert_eq!(h.stats().threads_connected, 0);
}
