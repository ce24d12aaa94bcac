//! The connection-handling modes the other suites run in are what they say: in each mode the
//! server reports the handling (`@@thread_handling`) and, in the pool, the poller and the I/O
//! (`@@tpbed_thread_pool_poller`, `@@tpbed_thread_pool_io`, the ones running after any
//! fallback) that the mode names.
//! `.ci/run` runs this file first, so a kernel that refuses io_uring fails CI at once.

use mysql::prelude::*;
use tpbed_tests::{each_mode, Mode};

each_mode! {
    fn the_server_runs_the_mode_it_was_started_in(mode) {
        let srv = mode.start(&[]);
        let mut c = srv.connect();
        let handling: String = c.query_first("SELECT @@thread_handling").unwrap().unwrap();
        let mut shown = |name: &str| -> Option<String> {
            c.query_first(format!("SHOW GLOBAL VARIABLES LIKE '{name}'"))
                .unwrap()
                .map(|(_, v): (String, String)| v)
        };
        let (poller, io) = (shown("tpbed_thread_pool_poller"), shown("tpbed_thread_pool_io"));
        let want = match mode {
            Mode::PerConnection => ("one-thread-per-connection", None, None),
            Mode::PoolEpoll => ("pool-of-threads", Some("epoll"), Some("poll")),
            Mode::PoolIoUring => ("pool-of-threads", Some("io-uring"), Some("poll")),
            Mode::PoolRing => ("pool-of-threads", Some("io-uring"), Some("ring")),
        };
        assert_eq!((handling.as_str(), poller.as_deref(), io.as_deref()), want);
        let one: i64 = c.query_first("SELECT 1").unwrap().unwrap();
        assert_eq!(one, 1);
    }
}
