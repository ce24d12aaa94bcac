//! tpbed-server: the MySQL session layer and SQL front end over the `tpbed-engine` storage
//! engine, served by a connection handler from `pool-core`.
//!
//! # Layers
//!
//! Each layer may use the ones before it, never those after (`tests/layers.rs` checks that
//! the top-level modules import each other in no cycle):
//!
//! values/errors ← variables ← engine ← transactions ← digest ← core ← sql ← introspection ←
//! privileges ← exec ← statements ← session ← server ← main
//!
//! - values/errors: [`value`] (SQL values) and [`error_code`](engine::error_code) (the one
//!   [`ErrorCode`](error::ErrorCode) vocabulary) in the engine crate; [`error`] (client
//!   errors, including those of engine and lock errors), [`startup`] (start-up errors),
//!   [`time`] (calendar arithmetic), [`log`] (the error log).
//! - variables: [`vars`] (the registry behind SHOW VARIABLES/STATUS, SET and `@@x`, with the
//!   on-set hooks subsystems register); [`accounts`]; [`memory`] (the counting allocator and
//!   the memory budget writes and large values are checked against).
//! - engine and transactions: the `tpbed-engine` crate ([`engine`], [`trx`]), which the
//!   compiler keeps from using anything here; [`catalog`] (the catalog with its DDL version);
//!   [`storage`] and [`datadir`] configure the engine from the variables.
//! - digest: [`digest`] (statement digests and their summary table); [`querylog`] (the
//!   general and slow query logs and the error log's file); [`connections`] (live
//!   connections and their counters).
//! - core: [`core`] (the [`Core`](crate::core::Core): what every statement of every session
//!   shares, and the connection handler seen through a trait) and [`context`] (the
//!   [`Context`](crate::context::Context) a statement runs against: the core and its session's
//!   statement-facing state).
//! - sql: [`sql`] parses, binds and evaluates expressions.
//! - introspection: [`introspection`] (information_schema, performance_schema, sys and the
//!   pool's `tp_*` tables, read through the narrow
//!   [`ServerView`](crate::introspection::ServerView) the core gives). It sits below `exec`
//!   because the executor reads these tables as row sources of its scans.
//! - privileges: [`privileges`] (what each statement needs, the session's access test,
//!   the rows of introspection tables a session sees, SHOW GRANTS). It sits below `exec`,
//!   whose scans filter introspection rows through it.
//! - exec: [`exec`] plans and runs table statements (access paths, joins, DML, DDL).
//! - statements: [`stmt`] plans every statement (table statements through `exec`), runs it
//!   with transaction boundaries and measures it under its digest.
//! - session: [`session`] runs the MySQL command loop of one connection.
//! - server: [`server`] (the core plus the connection handler), [`config`],
//!   [`thread_pool`], [`listener`], [`shutdown`].
//! - main: parses options, builds the server, binds and serves.
//!
//! # Cycles that remain
//!
//! `tests/layers.rs` reads the `crate::` paths of every top-level module and fails unless its
//! import cycles are exactly the ones listed here (lines of the form `- cycle: a, b — why`).
//! None remain.

pub mod accounts;
pub mod catalog;
pub mod config;
pub mod connections;
pub mod context;
pub mod core;
pub mod datadir;
pub mod digest;
pub mod error;
pub mod exec;
pub mod introspection;
pub mod listener;
pub mod log;
pub mod memory;
pub mod privileges;
pub mod querylog;
pub mod server;
pub mod session;
pub mod shutdown;
pub mod sql;
pub mod startup;
pub mod stmt;
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
