//! Connection-handling models for tpbed: one thread per connection and MySQL's
//! thread-group pool. This crate schedules [`Session`]s and knows nothing of SQL or MySQL.
//!
//! The server builds one handler at start-up and hands it every accepted connection:
//!
//! - [`ThreadPerConnection::new`] for `thread_handling=one-thread-per-connection`;
//! - [`PoolBuilder::new`]`(config).build()` for `thread_handling=pool-of-threads`.
//!
//! Both implement [`ConnectionHandler`]. Engine code reports blocking waits with
//! [`wait::begin`], which a pool uses to free the waiting statement's credit.
//!
//! # For the server
//!
//! - Start-up: fill a [`PoolConfig`] (start from [`PoolConfig::mysql_defaults`] or
//!   `PoolConfig::default()`, then the command line), call
//!   `PoolBuilder::new(config).log(sink).build::<YourSession>()`, log
//!   [`PoolStartup::warnings`] and [`PollerChoice::fallback_reason`]; render `SHOW VARIABLES`
//!   from [`PoolStartup::config`] and [`PoolKnobs::get_global`].
//! - `SET GLOBAL thread_pool_x = v`: `pool.knobs().set_global("thread_pool_x", v)`;
//!   `Some(Err(ConfigError::ReadOnly(_)))` is ER 1238, `OutOfRange` is 1231 (or clamp and
//!   warn first, as MySQL does), the two MySQL-specific refusals have their own variants.
//! - Introspection: [`ThreadPool::group_states`], [`ThreadPool::group_stats`],
//!   [`ThreadPool::thread_states`] (the Admin group last), [`ConnectionHandler::stats`] for
//!   `Threads_*`; [`ThreadPool::clock_epoch`] turns their `TIME_OF_*` durations into wall time.
//! - KILL CONNECTION: `shutdown(2)` the victim's socket; its current or next `run` reads end
//!   of file and returns [`Outcome::Close`]. Server shutdown: [`ConnectionHandler::shutdown`].

pub mod clock;
pub mod config;
pub mod placement;
pub mod poller;
pub mod session;
pub mod stats;
pub mod sync;
pub mod thread_per_conn;
pub mod wait;

mod builder;
mod connect;
mod group;
mod listener;
mod park;
mod pool;
mod steal;
mod timer;
mod worker;

#[cfg(all(test, loom))]
mod loom;
#[cfg(all(test, not(loom)))]
mod model_tests;
#[cfg(test)]
mod testkit;

pub use builder::PoolBuilder;
pub use clock::{Clock, ManualClock, SystemClock};
pub use config::{Algorithm, ConfigError, PinMode, PollerKind, PoolConfig, PoolKnobs};
pub use poller::{Poller, PollerChoice, Token};
pub use pool::{LogLevel, LogSink, PollerFactory, PoolError, PoolStartup, ThreadPool};
pub use session::{Outcome, Session, SESSION_THREAD_STACK};
pub use stats::{
    GroupStateRow, GroupStatsRow, HandlerStats, ThreadKind, ThreadState, ThreadStateRow,
};
pub use thread_per_conn::{autosized_thread_cache_size, ThreadPerConnection};
pub use wait::{WaitGuard, WaitKind};

/// A connection-handling model: what the server's acceptor hands connections to.
///
/// The acceptor accepts a TCP connection, builds an `S` around the blocking socket and calls
/// [`add_connection`](ConnectionHandler::add_connection); the handler runs
/// [`Session::handshake`] (on the connection's own thread, or on a pool connection-handler
/// thread), then schedules [`Session::run`] until it returns [`Outcome::Close`], and drops
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
