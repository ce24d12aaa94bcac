//! tpbed's storage engine: SQL values, the catalog, page-latched B+tree indexes, records and
//! cursors, MVCC, the lock system, the redo log and transactions.
//!
//! The engine knows nothing of sessions, SQL text, variables by name, log sinks or signals:
//! it is configured by typed configs ([`lock::LockConfig`], [`trx::PurgeConfig`],
//! [`redo::RedoConfig`]) and changed at run time by typed setters. It hands back what it
//! waited and what went wrong: each lock wait's time is charged to the waiting transaction,
//! which the caller takes with [`trx::Trx::take_lock_wait`]; failures are errors carrying an
//! [`ErrorCode`]; the rare message it cannot return goes through the [`log`] hook the server
//! installs.
//!
//! Layering, bottom up: `members` (ENUM/SET member lists), `value` and `time_value` (TIME's
//! text forms), `error_code` (MySQL's codes) and `error` → `types` (column types) and `json` →
//! `coerce` (strict-mode value coercion) → `key` (memcomparable keys) → `row` (compact row
//! bytes) and `row_buf` (their shared storage) → `schema` (table definitions) → `latch` → `index` (pages, B+tree) and `cursor`
//! (positioning, save/restore), which use each other, with pages carrying the lock system's
//! hints → `mvcc` (read views, versions) → `scan` and `table` (a definition and its indexes) →
//! `catalog` (the registry of databases and tables); `lock` (the lock system) builds on
//! `index`; `redo` and `memory` (giving freed rows back to the OS) stand alone; `trx`
//! (transactions: undo, purge, locking reads and writes) uses all of them.
//!
//! How the SQL layer drives storage: resolve a table with [`Catalog::table`]; build rows with
//! [`TableDef::fill_row`] and write them with [`Table::insert`] / [`Table::update`] /
//! [`Table::delete`] (errors are [`EngineError`]s carrying MySQL's code and SQLSTATE); encode
//! search values with [`Table::encode_search_key`] and read with [`Table::get`] or a
//! [`Table::scan`] over a [`KeyRange`] of any index (index 0 is the clustered one). The lock
//! manager works one level down, on [`BTree`] cursors: lock under the leaf latch,
//! [`Cursor::save`], wait with no latch held, [`Cursor::restore`]; inserts go through
//! `Table::insert_checked` so the gap check sees each new key's successor under its latch.

pub mod catalog;
pub mod clip;
pub mod coerce;
pub mod cursor;
pub mod error;
pub mod error_code;
pub mod index;
pub mod json;
pub mod key;
pub mod latch;
pub mod lock;
pub mod log;
pub mod members;
mod memory;
pub mod mvcc;
pub mod redo;
pub mod row;
pub mod row_buf;
pub mod scan;
pub mod schema;
pub mod table;
pub mod time_value;
pub mod trx;
pub mod types;
pub mod value;

pub use catalog::{
    Catalog, CheckDef, Column, ColumnDefault, Database, ForeignKeyDef, IndexDef, IndexKind,
    ReferentialAction, TableDef, TableRebuild,
};
pub use cursor::{Cursor, Direction, LatchMode, Restored, SavedPosition, SearchMode};
pub use error::EngineError;
pub use error_code::ErrorCode;
pub use index::{BTree, ClusteredRec, IndexStats, KeyBuf, PageCapacity, Record, SecondaryRec};
pub use members::Members;
pub use memory::{set_release_free_memory, trim as release_free_memory};
pub use mvcc::{ReadView, Version, VersionStore, Visible};
pub use row_buf::RowBuf;
pub use scan::{HandlerStats, KeyRange, ScanItem, TableScan};
pub use table::{
    Change, Existing, InsertOptions, InsertOutcome, InsertProbe, ProbeKind, RecordVersion,
    RemovedHook, SecChange, SecOp, Table, UpdateOutcome, WriteStamp,
};
pub use types::{ColumnType, IntKind};
