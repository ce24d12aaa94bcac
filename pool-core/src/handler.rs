//! The connection-handling contract between the server's acceptor and a handler.

use crate::session::Session;
use crate::stats::HandlerStats;

/// A connection-handling model: what the server's acceptor hands connections to.
///
/// The acceptor accepts a TCP connection, builds an `S` around the blocking socket and calls
/// [`add_connection`](ConnectionHandler::add_connection); the handler runs
/// [`Session::handshake`] (on the connection's own thread, or on a pool connection-handler
/// thread), then schedules [`Session::run`] until it returns [`Outcome::Close`](crate::Outcome::Close), and drops
/// the session. `KILL CONNECTION` needs nothing from the handler: the server shuts the
/// socket down (`shutdown(2)`), the blocked or next `run` sees end of file and returns
/// `Close`.
pub trait ConnectionHandler<S: Session>: Send + Sync {
    /// Takes ownership of a new connection. Never blocks on the connection's I/O.
    fn add_connection(&self, session: S);
    /// Closes every connection (parked ones get [`Session::kill`]; ones bound to a thread
    /// have their socket shut down) and joins every thread. Idempotent; later
    /// `add_connection` calls drop the session.
    fn shutdown(&self);
    /// `Threads_created`, `Threads_cached`, `Threads_connected` and the running count.
    fn stats(&self) -> HandlerStats;
}
