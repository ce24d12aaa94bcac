//! The four ways the server handles connections, and [`each_mode!`](crate::each_mode), which
//! turns one test body into one test per mode: `<name>::per_connection`,
//! `<name>::pool_epoll`, `<name>::pool_io_uring`, `<name>::pool_ring`.
//!
//! A mode is checked, not assumed: [`Mode::start`] reads the server's start-up log and fails
//! unless the server runs the handling, the poller and the I/O the mode names (the server
//! falls back from io_uring to epoll, or from ring to poll I/O, when the kernel refuses, and
//! logs why). Where io_uring is unusable, the io_uring cases are [`skip`](crate::skip)ped with
//! that reason, which fails under `TPBED_REQUIRE_TOOLS=1`.

use std::sync::OnceLock;

use crate::{skip, TestServer};

/// How the server handles connections.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// `--thread-handling=one-thread-per-connection` (the default).
    PerConnection,
    /// `--thread-handling=pool-of-threads` with the epoll poller.
    PoolEpoll,
    /// `--thread-handling=pool-of-threads` with the io_uring poller.
    PoolIoUring,
    /// `--thread-handling=pool-of-threads` with statement I/O through each group's io_uring
    /// (`--tpbed-thread-pool-io=ring`).
    PoolRing,
}

impl Mode {
    /// Every mode, in the order [`each_mode!`](crate::each_mode) runs them.
    pub const ALL: [Mode; 4] = [
        Mode::PerConnection,
        Mode::PoolEpoll,
        Mode::PoolIoUring,
        Mode::PoolRing,
    ];

    /// The mode as test names spell it.
    pub fn name(self) -> &'static str {
        match self {
            Mode::PerConnection => "per_connection",
            Mode::PoolEpoll => "pool_epoll",
            Mode::PoolIoUring => "pool_io_uring",
            Mode::PoolRing => "pool_ring",
        }
    }

    /// The server options that select the mode.
    pub fn args(self) -> &'static [&'static str] {
        match self {
            Mode::PerConnection => &["--thread-handling=one-thread-per-connection"],
            Mode::PoolEpoll => &[
                "--thread-handling=pool-of-threads",
                "--tpbed-thread-pool-poller=epoll",
            ],
            Mode::PoolIoUring => &[
                "--thread-handling=pool-of-threads",
                "--tpbed-thread-pool-poller=io-uring",
            ],
            Mode::PoolRing => &[
                "--thread-handling=pool-of-threads",
                "--tpbed-thread-pool-io=ring",
            ],
        }
    }

    /// `@@thread_handling` in this mode.
    fn thread_handling(self) -> &'static str {
        match self {
            Mode::PerConnection => "one-thread-per-connection",
            Mode::PoolEpoll | Mode::PoolIoUring | Mode::PoolRing => "pool-of-threads",
        }
    }

    /// The poller and I/O the pool's start-up note names in this mode.
    fn poller(self) -> Option<(&'static str, &'static str)> {
        match self {
            Mode::PerConnection => None,
            Mode::PoolEpoll => Some(("epoll", "poll")),
            Mode::PoolIoUring => Some(("io-uring", "poll")),
            Mode::PoolRing => Some(("io-uring", "ring")),
        }
    }

    /// Starts the server in this mode with extra options `args` (after the mode's, so they
    /// may add pool options), and checks from its log that it runs this mode; panics if not.
    pub fn start(self, args: &[&str]) -> TestServer {
        let all: Vec<&str> = self.args().iter().chain(args).copied().collect();
        let srv = TestServer::start(&all);
        if let Err(why) = self.check(&srv.log_lines()) {
            panic!("{} server: {why}", self.name());
        }
        srv
    }

    /// Whether the start-up `log` shows this mode's handling and poller.
    fn check(self, log: &[String]) -> Result<(), String> {
        let ready = log
            .iter()
            .find(|l| l.contains("ready for connections"))
            .ok_or("no 'ready for connections' line in the log")?;
        let handling = format!("thread_handling: {}", self.thread_handling());
        if !ready.contains(&handling) {
            return Err(format!("expected {handling}: {ready}"));
        }
        let Some((poller, io)) = self.poller() else {
            return Ok(());
        };
        let note = log
            .iter()
            .find(|l| l.contains("thread pool:") && l.contains(", poller "))
            .ok_or("no thread pool start-up note in the log")?;
        if note.contains(&format!(", poller {poller}, {io} I/O,")) {
            return Ok(());
        }
        // The server's own reason, when it fell back from io_uring.
        match log.iter().find_map(|l| {
            l.find("io_uring is not usable")
                .map(|at| l[at..].to_string())
        }) {
            Some(fallback) => Err(fallback),
            None => Err(format!("expected poller {poller}, {io} I/O: {note}")),
        }
    }

    /// Whether a server can run in this mode here: `Err(reason)` for an io_uring mode when
    /// the kernel refuses what it needs (probed once per test binary and mode with a throwaway
    /// server).
    pub fn available(self) -> Result<(), String> {
        static IO_URING: OnceLock<Result<(), String>> = OnceLock::new();
        static RING: OnceLock<Result<(), String>> = OnceLock::new();
        let probed = match self {
            Mode::PoolIoUring => &IO_URING,
            Mode::PoolRing => &RING,
            Mode::PerConnection | Mode::PoolEpoll => return Ok(()),
        };
        probed
            .get_or_init(|| {
                let srv = TestServer::start(self.args());
                self.check(&srv.log_lines())
            })
            .clone()
    }

    /// Runs `body` in this mode, or [`skip`]s it with the reason the mode is unavailable.
    pub fn run(self, body: impl FnOnce(Mode)) {
        match self.available() {
            Ok(()) => body(self),
            Err(reason) => skip(&format!("{} is unavailable: {reason}", self.name())),
        }
    }
}

/// Defines one test per [`Mode`] for each body: `fn name(mode) { ... }` becomes a module
/// `name` with the tests `per_connection`, `pool_epoll`, `pool_io_uring` and `pool_ring`, each
/// calling the body through [`Mode::run`] (so `cargo test name` runs the four, `cargo test pool_epoll`
/// one mode of every test). Attributes and doc comments before `fn` go on the module. The
/// body starts its server with `mode.start(..)`; items of the enclosing file are in scope.
#[macro_export]
macro_rules! each_mode {
    ($($(#[$attr:meta])* fn $name:ident($mode:ident) $body:block)*) => {$(
        $(#[$attr])*
        mod $name {
            #[allow(unused_imports)]
            use super::*;

            fn body($mode: $crate::Mode) $body

            #[test]
            fn per_connection() {
                $crate::Mode::PerConnection.run(body)
            }

            #[test]
            fn pool_epoll() {
                $crate::Mode::PoolEpoll.run(body)
            }

            #[test]
            fn pool_io_uring() {
                $crate::Mode::PoolIoUring.run(body)
            }

            #[test]
            fn pool_ring() {
                $crate::Mode::PoolRing.run(body)
            }
        }
    )*};
}

#[cfg(test)]
mod tests {
    use super::Mode;

    fn log(lines: &[&str]) -> Vec<String> {
        lines.iter().map(|l| l.to_string()).collect()
    }

    const READY_POOL: &str = "[Note] [Server] tpbed-server: ready for connections. \
        Version: '8.0.40-tpbed'  port: 1  thread_handling: pool-of-threads";

    #[test]
    fn a_fallback_to_epoll_is_not_the_io_uring_mode() {
        let fell_back = log(&[
            "[Warning] [Server] io_uring is not usable (EPERM); the thread pool uses epoll",
            "[Note] [Server] thread pool: 1 groups + Admin group, poller epoll, poll I/O, max_transactions_limit 32",
            READY_POOL,
        ]);
        let why = Mode::PoolIoUring.check(&fell_back).unwrap_err();
        assert!(why.contains("io_uring is not usable (EPERM)"), "{why}");
        assert_eq!(Mode::PoolEpoll.check(&fell_back), Ok(()));
        let io_uring = log(&[
            "[Note] [Server] thread pool: 1 groups + Admin group, poller io-uring, poll I/O, max_transactions_limit 32",
            READY_POOL,
        ]);
        assert_eq!(Mode::PoolIoUring.check(&io_uring), Ok(()));
        assert!(Mode::PoolEpoll.check(&io_uring).is_err());
        assert!(Mode::PoolRing.check(&io_uring).is_err());
    }

    #[test]
    fn a_fallback_to_poll_io_is_not_the_ring_mode() {
        let fell_back = log(&[
            "[Warning] [Server] io_uring is not usable (ring I/O falls back to poll: no provided-buffer ring: EINVAL); the thread pool uses epoll with poll I/O",
            "[Note] [Server] thread pool: 1 groups + Admin group, poller epoll, poll I/O, max_transactions_limit 32",
            READY_POOL,
        ]);
        let why = Mode::PoolRing.check(&fell_back).unwrap_err();
        assert!(why.contains("ring I/O falls back to poll"), "{why}");
        let ring = log(&[
            "[Note] [Server] thread pool: 1 groups + Admin group, poller io-uring, ring I/O, max_transactions_limit 32",
            READY_POOL,
        ]);
        assert_eq!(Mode::PoolRing.check(&ring), Ok(()));
        assert!(Mode::PoolIoUring.check(&ring).is_err());
    }

    #[test]
    fn the_handling_must_match() {
        let per_conn = log(&["[Note] [Server] tpbed-server: ready for connections. \
            Version: '8.0.40-tpbed'  port: 1  thread_handling: one-thread-per-connection"]);
        assert_eq!(Mode::PerConnection.check(&per_conn), Ok(()));
        assert!(Mode::PoolEpoll.check(&per_conn).is_err());
        assert!(Mode::PerConnection.check(&log(&[READY_POOL])).is_err());
        assert!(
            Mode::PoolEpoll.check(&log(&[READY_POOL])).is_err(),
            "no pool note"
        );
    }
}
