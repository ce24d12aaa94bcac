//! The contract between a connection handler and the server's per-connection session.

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

/// One client connection as the handlers see it.
///
/// Sockets stay blocking in every mode: a poller only reports readiness, then the attached
/// thread calls [`Session::run`], which reads one whole command, executes it and replies.
pub trait Session: Send + 'static {
    /// Authenticates the client (handshake, auth switch, OK/ERR). Runs on the connection's own
    /// thread in thread-per-connection mode and on a connection-handler thread in the pool.
    fn handshake(&mut self) -> Outcome;
    /// Reads one whole command (blocking, bounded by `wait_timeout` for the first byte and
    /// `net_read_timeout` for the rest), executes it and writes the reply.
    fn run(&mut self) -> Outcome;
    /// MySQL's `thd_is_transaction_active`: a transaction is open on this connection.
    fn in_transaction(&self) -> bool;
    /// The account holds `TP_CONNECTION_ADMIN`: the pool puts it in the Admin group.
    fn is_tp_admin(&self) -> bool;
    /// `thread_pool_high_priority_connection` is set for this session.
    fn high_priority(&self) -> bool;
    /// Pipelined bytes of a further command are already buffered (no readiness will come).
    fn has_buffered_input(&self) -> bool;
    /// The socket, for the poller's readiness registration.
    fn raw_fd(&self) -> RawFd;
    /// The session's `wait_timeout`: how long it may sit idle between commands.
    fn idle_timeout(&self) -> Duration;
    /// Idle past `wait_timeout` while parked in a pool: say so to the client (ER 4031) and
    /// close. The handler drops the session afterwards.
    fn expire(&mut self);
    /// Ends the connection from another thread (server shutdown): unblocks any read in
    /// progress so the owning thread sees the connection closed.
    fn kill(&self);
}
