//! Engine errors as client errors, and the client errors the executor raises itself.

use crate::engine::EngineError;
use crate::error::{ErrorCode, SqlError};

/// The client error for an engine error; `row` is the 1-based input row MySQL names in
/// per-row messages.
pub fn engine_error(e: &EngineError, row: u64) -> SqlError {
    SqlError::new(e.code(), e.message(row))
}

/// 1054 for an unknown column in `clause` (`field list`, `where clause`, ...).
pub fn unknown_column(name: &str, clause: &str) -> SqlError {
    SqlError::new(
        ErrorCode::BadField,
        format!("Unknown column '{name}' in '{clause}'"),
    )
}

/// 1046 when a statement names a table without a database and none is selected.
pub fn no_database() -> SqlError {
    SqlError::new(ErrorCode::NoDb, "No database selected")
}

/// 1146 for a table that does not exist.
pub fn no_such_table(db: &str, table: &str) -> SqlError {
    SqlError::new(
        ErrorCode::NoSuchTable,
        format!("Table '{db}.{table}' doesn't exist"),
    )
}
