//! tpbed-server: the MySQL session layer and SQL front end over the `tpbed-engine` storage
//! engine, served by a connection handler from `pool-core`.
//!
//! # Layers
//!
//! Each layer may use the ones before it, never those after:
//!
//! values/errors ← variables ← engine ← transactions ← digest ← sql ← exec ← introspection ←
//! session ← server ← main
//!
//! - values/errors: [`value`] (SQL values) and [`error_code`](engine::error_code) (the one
//!   [`ErrorCode`](error::ErrorCode) vocabulary) in the engine crate; [`error`] (client
//!   errors), [`startup`] (start-up errors).
//! - variables: [`vars`] (the registry behind SHOW VARIABLES/STATUS, SET and `@@x`, with the
//!   on-set hooks subsystems register); [`accounts`].
//! - engine and transactions: the `tpbed-engine` crate ([`engine`], [`trx`]), which the
//!   compiler keeps from using anything here; [`storage`] and [`datadir`] configure it from
//!   the variables.
//! - digest: [`digest`] (statement digests and their summary table); [`connections`] (live
//!   connections and their counters).
//! - sql: [`sql`] parses, binds, evaluates and plans statements.
//! - exec: [`exec`] runs table statements; the introspection tables (information_schema,
//!   performance_schema, sys, the pool's `tp_*`) live inside it for now.
//! - session: [`session`] runs the MySQL command loop of one connection.
//! - server: [`server`] (the state every session shares), [`config`], [`thread_pool`],
//!   [`listener`], [`log`], [`shutdown`].
//! - main: parses options, builds the server, binds and serves.
//!
//! # Cycles that remain
//!
//! `tests/layers.rs` reads the `crate::` paths of every top-level module and fails unless its
//! import cycles are exactly the ones listed here. One strongly connected set remains:
//!
//! - cycle: connections, context, core, digest, exec, sql — `core` holds the catalog type
//!   from `exec`, `digest`'s statement probes read the `Context` and `sql`'s output, and `sql`
//!   and `exec` call each other (statement dispatch in `sql` runs `exec`'s table statements,
//!   which evaluate through `sql`).

pub mod accounts;
pub mod config;
pub mod connections;
pub mod context;
pub mod core;
pub mod datadir;
pub mod digest;
pub mod error;
pub mod exec;
pub mod listener;
pub mod log;
pub mod server;
pub mod session;
pub mod shutdown;
pub mod sql;
pub mod startup;
pub mod storage;
pub mod thread_pool;
pub mod time;
pub mod vars;

/// The storage engine crate, under the name the server's modules use for it.
pub use tpbed_engine as engine;
/// Transactions (in the engine crate).
pub use tpbed_engine::trx;
/// SQL values (in the engine crate).
pub use tpbed_engine::value;
