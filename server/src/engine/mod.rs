//! The in-memory engine: catalog, page-latched B+tree indexes, records and cursors.
//!
//! Layering (each module only uses the ones before it): `error` → `types` (column types) →
//! `coerce` (strict-mode value coercion) → `key` (memcomparable keys) → `row` (compact row
//! bytes) → `schema` (table definitions) → `latch` → `index` (pages, B+tree) → `cursor`
//! (positioning, save/restore) → `scan` and `table` (a definition and its indexes) →
//! `catalog` (the registry of databases and tables).

pub mod catalog;
pub mod coerce;
pub mod cursor;
pub mod error;
pub mod index;
pub mod key;
pub mod latch;
pub mod lock;
pub mod row;
pub mod scan;
pub mod schema;
pub mod table;
pub mod types;

pub use catalog::{Catalog, Column, ColumnDefault, Database, IndexDef, IndexKind, TableDef};
pub use cursor::{Cursor, Direction, LatchMode, Restored, SavedPosition, SearchMode};
pub use error::EngineError;
pub use index::{BTree, ClusteredRec, IndexStats, KeyBuf, PageCapacity, Record, SecondaryRec};
pub use scan::{HandlerStats, KeyRange, ScanItem, TableScan};
pub use table::{InsertOptions, InsertOutcome, RecordVersion, Table, UpdateOutcome, WriteStamp};
pub use types::{ColumnType, IntKind};
