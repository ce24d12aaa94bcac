//! The client errors the executor raises itself.

use crate::error::{ErrorCode, SqlError};

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
