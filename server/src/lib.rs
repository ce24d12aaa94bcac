//! tpbed-server: the session layer, SQL front end and in-memory engine.
//!
//! Layers: [`listener`] accepts sockets and hands them to a connection handler from
//! `pool-core`; [`session`] runs the MySQL command loop of one connection; [`sql`] parses,
//! plans and executes statements; [`engine`] holds the data. [`vars`] is the one registry
//! behind SHOW VARIABLES/STATUS, SET and `@@x`.

pub mod accounts;
pub mod config;
pub mod connections;
pub mod datadir;
pub mod digest;
pub mod error;
pub mod exec;
pub mod listener;
pub mod log;
pub mod server;
pub mod session;
pub mod sql;
pub mod startup;
pub mod storage;
pub mod thread_pool;
pub mod vars;

/// The storage engine crate, under the name the server's modules use for it.
pub use tpbed_engine as engine;
/// Transactions (in the engine crate).
pub use tpbed_engine::trx;
/// SQL values (in the engine crate).
pub use tpbed_engine::value;
