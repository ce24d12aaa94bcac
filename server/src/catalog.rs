//! The server's catalog as the executor shares it: the engine [`Catalog`] plus a DDL version
//! that every schema change bumps, so a prepared plan can tell cheaply (one relaxed load)
//! whether the tables it resolved may have changed since it was planned.

use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::sync::Arc;

use crate::engine::{Catalog, Table};
use crate::error::engine_error;
use crate::error::SqlResult;

/// The engine catalog and its DDL version.
#[derive(Debug, Default)]
pub struct SharedCatalog {
    /// Databases and tables.
    pub engine: Catalog,
    version: AtomicU64,
}

impl SharedCatalog {
    /// The DDL version: changes whenever a table or database is created, dropped or rebuilt.
    pub fn version(&self) -> u64 {
        self.version.load(Relaxed)
    }

    /// Marks a schema change (after it is visible in the catalog).
    pub fn bump(&self) {
        self.version.fetch_add(1, Relaxed);
    }

    /// CREATE DATABASE with its default collation (the caller has checked that the name is
    /// free).
    pub fn create_database(&self, name: &str, collation: Option<&str>) -> SqlResult<()> {
        self.engine
            .create_database(name, collation, false)
            .map_err(|e| engine_error(&e, 1))?;
        self.bump();
        Ok(())
    }

    /// DROP DATABASE with its tables; false if it did not exist.
    pub fn drop_database(&self, name: &str) -> bool {
        let dropped = self.engine.drop_database(name, true).unwrap_or(false);
        self.bump();
        dropped
    }

    /// A table by database and name (1146 if absent).
    pub fn table(&self, db: &str, name: &str) -> SqlResult<Arc<Table>> {
        self.engine.table(db, name).map_err(|e| engine_error(&e, 1))
    }
}
