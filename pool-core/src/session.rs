//! The contract between a connection handler and the server's per-connection session.

use crate::policy::{SessionPriority, StmtClass};
use std::os::fd::RawFd;
use std::time::Duration;

/// What a session tells its handler after one step.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    /// The connection stays open; schedule it again when more input arrives.
    Continue,
    /// The connection is finished (COM_QUIT, error, KILL, timeout): drop the session.
    Close,
}

/// The stack of every thread that runs [`Session::run`] or [`Session::handshake`], in both
/// handling modes. Rust's default of 2 MiB is too little for a debug build's frames on a
/// statement at the server's nesting bound; the pages are only reserved, and a thread's
/// resident stack is what its deepest statement touched.
pub const SESSION_THREAD_STACK: usize = 8 << 20;

/// What a group's io_uring hands a session before [`Session::run_deferred`]
/// (`tpbed_thread_pool_io=ring`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Received {
    /// Bytes the ring received from the client. Empty: end of file or a receive error, which
    /// the session's own read of the socket then reports.
    Bytes(Vec<u8>),
    /// The previous reply could not be sent (`net_write_timeout` passed, or the client reset
    /// the connection): the session closes.
    WriteFailed {
        /// The send outlasted `net_write_timeout` (else the socket failed).
        timed_out: bool,
    },
}

/// One client connection as the handlers see it.
///
/// Sockets stay blocking in every mode. In the blocking form a poller only reports readiness,
/// then the attached thread calls [`Session::run`], which reads one whole command, executes it
/// and replies. In the non-blocking form (`tpbed_thread_pool_io=ring`) the group's io_uring
/// receives the first bytes of a command ([`Session::receive`]) and sends the reply that
/// [`Session::run_deferred`] leaves in a buffer; nothing is in flight on the socket while a
/// thread runs the session, so the session may still read or write it itself.
pub trait Session: Send + 'static {
    /// Authenticates the client (handshake, auth switch, OK/ERR). Runs on the connection's own
    /// thread in thread-per-connection mode and on a connection-handler thread in the pool.
    fn handshake(&mut self) -> Outcome;
    /// Reads one whole command (blocking, bounded by `wait_timeout` for the first byte and
    /// `net_read_timeout` for the rest), executes it and writes the reply.
    fn run(&mut self) -> Outcome;
    /// Takes bytes (or a failure) the group's io_uring received for this connection.
    fn receive(&mut self, input: Received);
    /// The non-blocking form of [`run`](Session::run): runs one command from the bytes already
    /// [`receive`](Session::receive)d and appends its reply to `out`, which the group sends.
    /// Only the rest of a command that started arriving is read from the socket (bounded by
    /// `net_read_timeout`); before waiting for the first byte of a further command (a
    /// transaction held bound to its thread) the session sends `out` itself. A session that
    /// returns [`Outcome::Close`] has sent what it had to say.
    fn run_deferred(&mut self, out: &mut Vec<u8>) -> Outcome;
    /// The session's `net_write_timeout`: how long a reply may take to leave.
    fn write_timeout(&self) -> Duration;
    /// MySQL's `thd_is_transaction_active`: a transaction is open on this connection.
    fn in_transaction(&self) -> bool;
    /// The account holds `TP_CONNECTION_ADMIN`: the pool puts it in the Admin group.
    fn is_tp_admin(&self) -> bool;
    /// `thread_pool_high_priority_connection` is set for this session.
    fn high_priority(&self) -> bool;
    /// MariaDB's `thread_pool_priority` of this session (`auto` unless the server keeps it).
    fn priority(&self) -> SessionPriority {
        SessionPriority::Auto
    }
    /// The connection holds row or table locks (of its open transaction, or `LOCK TABLES`).
    /// Asked under the group mutex: answer from a flag or a counter, never by a scan.
    fn holds_locks(&self) -> bool {
        false
    }
    /// Another transaction waits for a lock this connection's transaction holds (the lock
    /// system keeps the count). Asked under the group mutex, like [`holds_locks`](Session::holds_locks).
    fn blocks_others(&self) -> bool {
        false
    }
    /// The class of the next command, read from input already received (or pending on the
    /// socket) without consuming it; [`StmtClass::UNKNOWN`] when nothing is readable yet.
    /// Only asked for a policy that wants it ([`crate::policy::Policy::wants_statement_class`]).
    fn next_class(&self) -> StmtClass {
        StmtClass::UNKNOWN
    }
    /// Pipelined bytes of a further command are already buffered (no readiness will come).
    fn has_buffered_input(&self) -> bool;
    /// The socket, for the poller's readiness registration.
    fn raw_fd(&self) -> RawFd;
    /// The session's `wait_timeout`: how long it may sit idle between commands.
    fn idle_timeout(&self) -> Duration;
    /// Idle past `wait_timeout` while parked in a pool: say so to the client (ER 4031) and
    /// close. The handler drops the session afterwards.
    fn expire(&mut self);
    /// No thread could be started to run this new connection (`error` says why): tell the
    /// client (MySQL's 1135) and log it. The handler drops the session afterwards.
    fn refuse_no_thread(&mut self, error: &std::io::Error);
    /// Ends the connection from another thread (server shutdown): unblocks any read in
    /// progress so the owning thread sees the connection closed.
    fn kill(&self);
    /// Called outside every lock on a thread that goes idle: one that finished a connection
    /// and enters the thread cache, and a pool query thread that ran statements and then
    /// slept unwoken for [`idle_release_after`](Session::idle_release_after). The place to
    /// give back what the thread keeps for itself (an allocator's per-thread free pages, which
    /// nothing else returns while the thread sleeps). Does nothing by default.
    fn thread_idle()
    where
        Self: Sized,
    {
    }
    /// How long a pool query thread that ran statements sleeps unwoken before it calls
    /// [`thread_idle`](Session::thread_idle) (a busy thread never does; nor does one that
    /// waits in the poller). `None` (the default): pool threads never call it.
    fn idle_release_after() -> Option<Duration>
    where
        Self: Sized,
    {
        None
    }
}
