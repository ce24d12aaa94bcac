//! tpbed-server: the session layer, SQL front end and in-memory engine.
//!
//! Layers: [`listener`] accepts sockets and hands them to a connection handler from
//! `pool-core`; [`session`] runs the MySQL command loop of one connection; [`sql`] parses,
//! plans and executes statements; [`engine`] holds the data. [`vars`] is the one registry
//! behind SHOW VARIABLES/STATUS, SET and `@@x`.

pub mod accounts;
pub mod config;
pub mod connections;
pub mod digest;
pub mod engine;
pub mod error;
pub mod exec;
pub mod listener;
pub mod log;
pub mod server;
pub mod session;
pub mod sql;
pub mod thread_pool;
pub mod trx;
pub mod value;
pub mod vars;
