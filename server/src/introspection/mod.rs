//! The introspection tables: information_schema, performance_schema, sys, `mysql.user` and the pool's
//! `tp_*` tables, computed on each read from a [`ServerView`] — the narrow view of the
//! server they read (catalog, transactions and locks, connections, digests, the pool),
//! which the [`Core`] gives. The executor reads them as row sources through
//! [`vtables::lookup`].

pub mod compression_tables;
pub mod constraints;
pub mod deadlock;
pub mod describe;
pub mod grant_tables;
pub mod innodb_tables;
pub mod memory_summary;
pub mod mysql_tables;
pub mod pfs_empty_tables;
pub mod pfs_tables;
pub mod pool_tables;
pub mod schema_tables;
pub mod system_schema_rows;
pub mod table_sizes;
pub mod vtables;

use std::time::Duration;

use crate::accounts::Accounts;
use crate::catalog::SharedCatalog;
use crate::connections::Connections;
use crate::core::{Core, PoolView, ThreadHandling};
use crate::digest::DigestStore;
use crate::trx::TrxSys;
use crate::vars::Counter;

/// What the introspection tables read of the server.
pub trait ServerView {
    /// Databases and tables.
    fn catalog(&self) -> &SharedCatalog;
    /// The accounts (`mysql.user`).
    fn accounts(&self) -> &Accounts;
    /// Transactions, purge and the lock system.
    fn trx(&self) -> &TrxSys;
    /// Live connections.
    fn connections(&self) -> &Connections;
    /// `events_statements_summary_by_digest`.
    fn digests(&self) -> &DigestStore;
    /// How connections are handled.
    fn thread_handling(&self) -> ThreadHandling;
    /// The running thread pool, when connections are handled by one.
    fn pool(&self) -> Option<&dyn PoolView>;
    /// Time since the server started.
    fn uptime(&self) -> Duration;
    /// A status counter's GLOBAL value.
    fn status_counter(&self, c: Counter) -> u64;
    /// `Prepared_stmt_count`: statements prepared over all sessions now.
    fn prepared_statements(&self) -> u64;
}

impl ServerView for Core {
    fn catalog(&self) -> &SharedCatalog {
        &self.catalog
    }
    fn accounts(&self) -> &Accounts {
        &self.accounts
    }
    fn trx(&self) -> &TrxSys {
        &self.trx
    }
    fn connections(&self) -> &Connections {
        &self.connections
    }
    fn digests(&self) -> &DigestStore {
        &self.digests
    }
    fn thread_handling(&self) -> ThreadHandling {
        self.thread_handling
    }
    fn pool(&self) -> Option<&dyn PoolView> {
        self.handler.get().and_then(|h| h.pool())
    }
    fn uptime(&self) -> Duration {
        self.started.elapsed()
    }
    fn status_counter(&self, c: Counter) -> u64 {
        Core::status_counter(self, c)
    }
    fn prepared_statements(&self) -> u64 {
        let n = self
            .prepared_stmt_count
            .load(std::sync::atomic::Ordering::Relaxed);
        u64::try_from(n).unwrap_or(0)
    }
}
