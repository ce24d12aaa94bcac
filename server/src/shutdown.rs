//! Graceful shutdown, as SIGTERM, SIGINT and the `SHUTDOWN` statement start it.
//!
//! The steps, in order:
//! 1. stop accepting: the listening socket is shut down and the acceptor thread joined;
//! 2. end idle connections at once, and each busy one as soon as its running statement ends;
//! 3. after [`STATEMENT_GRACE`], kill what still runs (KILL CONNECTION, which also ends lock
//!    waits), so its session rolls its transaction back as it closes;
//! 4. shut the connection handler down: it closes every remaining connection and joins every
//!    thread it made, in both handling modes;
//! 5. `main` then drops the server, which stops purge and the redo log's flush thread and
//!    removes a temporary data directory, and exits 0.

use std::collections::HashSet;
use std::net::TcpListener;
use std::os::fd::AsRawFd;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use pool_core::ConnectionHandler;

use crate::connections::KILL_CONNECTION;
use crate::log;
use crate::server::Server;
use crate::session::ClientSession;

/// How long running statements may go on after shutdown starts before they are killed.
pub const STATEMENT_GRACE: Duration = Duration::from_secs(10);

/// How often step 2 looks for connections that became idle.
const POLL: Duration = Duration::from_millis(20);

/// What a shutdown ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Summary {
    /// Connections closed while idle or after their statement.
    pub closed: usize,
    /// Connections whose statement was still running at the end of the grace period.
    pub killed: usize,
    /// Open transactions rolled back by the closing sessions.
    pub rolled_back: u64,
}

/// Steps 1 to 4 (see the module docs). `listener` is the socket `acceptor` accepts on.
pub fn run(
    server: &Arc<Server>,
    listener: &TcpListener,
    acceptor: JoinHandle<()>,
    handler: &Arc<dyn ConnectionHandler<ClientSession>>,
    grace: Duration,
) -> Summary {
    // 1. The acceptor sees the request when accept fails on the shut-down socket.
    // SAFETY: shutdown(2) on a socket this process owns only changes its state.
    unsafe {
        libc::shutdown(listener.as_raw_fd(), libc::SHUT_RDWR);
    }
    if acceptor.join().is_err() {
        log::error("shutdown: the acceptor thread panicked");
    }
    let rolled_back_before = server.trx.stats.rollbacks.load(Ordering::Relaxed);
    let mut summary = Summary::default();
    let mut ended: HashSet<u32> = HashSet::new();
    // 2. Idle connections now, busy ones when their statement ends.
    let deadline = Instant::now() + grace;
    loop {
        let live = server.connections.snapshot();
        if live.is_empty() {
            break;
        }
        let now = Instant::now();
        for c in &live {
            if ended.contains(&c.id) {
                continue;
            }
            if now >= deadline {
                // 3. Out of grace: end the statement and the connection.
                c.kill(KILL_CONNECTION);
                server.trx.interrupt_connection(u64::from(c.id));
                summary.killed += 1;
                ended.insert(c.id);
            } else if !c.running.load(Ordering::Acquire) {
                c.kill(KILL_CONNECTION);
                summary.closed += 1;
                ended.insert(c.id);
            }
        }
        if now >= deadline {
            break;
        }
        std::thread::sleep(POLL);
    }
    // 4. Close what is left (connections still authenticating) and join every thread.
    handler.shutdown();
    summary.rolled_back = server
        .trx
        .stats
        .rollbacks
        .load(Ordering::Relaxed)
        .saturating_sub(rolled_back_before);
    summary
}
