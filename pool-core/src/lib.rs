//! Connection-handling models for tpbed: one thread per connection and MySQL's
//! thread-group pool. This crate schedules [`Session`]s and knows nothing of SQL or of the MySQL
//! protocol.
//!
//! The server builds one handler at start-up and hands it every accepted connection:
//!
//! - [`ThreadPerConnection::new`] for `thread_handling=one-thread-per-connection`;
//! - [`PoolBuilder::new`]`(config).build()` for `thread_handling=pool-of-threads`.
//!
//! Both implement [`ConnectionHandler`]. Engine code reports blocking waits with
//! [`wait::begin`], which a pool uses to free the waiting statement's credit.
//!
//! The pool's scheduling decisions (which queue an event joins, which a free thread takes, may
//! one more statement start, what the periodic tick does) are a [`policy::Policy`], named by
//! [`PoolConfig::policy`] and looked up in [`policy::REGISTRY`].
//!
//! # For the server
//!
//! - Start-up: fill a [`PoolConfig`] (start from [`PoolConfig::mysql_defaults`] or
//!   `PoolConfig::default()`, then the command line), call
//!   `PoolBuilder::new(config).log(sink).build::<YourSession>()`, log
//!   [`PoolStartup::warnings`] and [`PollerChoice::fallback_reason`]; show in `SHOW VARIABLES`
//!   the configuration in force, [`PoolStartup::config`].
//! - `SET GLOBAL thread_pool_x = v`: the knob's typed setter, `pool.knobs().set_x(v)`
//!   (`thread_pool_size`, `thread_pool_algorithm` and `thread_pool_dedicated_listeners` are
//!   read-only and have none); `OutOfRange` is ER 1231 (or clamp and warn first, as MySQL
//!   does), the two MySQL-specific refusals have their own variants.
//! - Introspection: [`ThreadPool::group_states`], [`ThreadPool::group_stats`],
//!   [`ThreadPool::thread_states`] (the Admin group last), [`ConnectionHandler::stats`] for
//!   `Threads_*`; [`ThreadPool::clock_epoch`] turns their `TIME_OF_*` durations into wall time.
//! - KILL CONNECTION: `shutdown(2)` the victim's socket; its current or next `run` reads end
//!   of file and returns [`Outcome::Close`]. Server shutdown: [`ConnectionHandler::shutdown`].

pub mod config;
pub mod policy;
pub mod poller;
pub mod stats;
pub mod wait;

mod clock;
mod placement;
mod service;
mod session;
mod sync;
mod thread_per_conn;

mod builder;
mod connect;
mod event;
mod group;
mod handler;
mod introspect;
mod listener;
mod park;
mod pool;
mod shared;
mod spawn;
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
pub use config::{
    Algorithm, ConfigError, IoMode, PinMode, PollerKind, PoolConfig, PoolKnobs, Rails,
};
pub use handler::ConnectionHandler;
pub use poller::PollerChoice;
pub use pool::{PoolError, PoolStartup, ThreadPool};
pub use session::{Outcome, Received, Session, SESSION_THREAD_STACK};
pub use shared::{LogLevel, LogSink};
pub use stats::{
    GroupStateRow, GroupStatsRow, HandlerStats, ThreadKind, ThreadState, ThreadStateRow,
};
pub use thread_per_conn::ThreadPerConnection;
pub use wait::{WaitGuard, WaitKind};
