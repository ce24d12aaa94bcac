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

/// 1366 for the first value of `row` (counted from 1) that is not well-formed UTF-8 and goes
/// into a text column of `t` (every text column is utf8mb4); binary columns take any bytes.
pub(crate) fn check_text_columns<'a>(
    t: &crate::engine::TableDef,
    values: impl IntoIterator<Item = (usize, &'a crate::value::Value)>,
    row: u64,
) -> crate::error::SqlResult<()> {
    for (c, v) in values {
        if let Some(col) = t.columns().get(c).filter(|col| col.ty.is_text()) {
            crate::sql::charset::check_utf8(v, &col.name, row)?;
        }
    }
    Ok(())
}
