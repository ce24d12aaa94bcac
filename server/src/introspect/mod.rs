//! The introspection tables: information_schema, performance_schema, sys and the pool's
//! `tp_*` tables, computed on each read from the [`Core`](crate::core::Core) (catalog,
//! transactions and locks, connections, digests) and the connection handler as the core
//! sees it ([`HandlerView`](crate::core::HandlerView)). The executor reads them as row
//! sources through [`vtables::lookup`].

pub mod describe;
pub mod innodb_tables;
pub mod pfs_tables;
pub mod pool_tables;
pub mod vtables;
