//! Engine errors as client errors: the engine's MySQL code mapped onto [`ErrorCode`].

use crate::engine::EngineError;
use crate::error::{ErrorCode, SqlError};

/// The client error for an engine error; `row` is the 1-based input row MySQL names in
/// per-row messages.
pub fn engine_error(e: &EngineError, row: u64) -> SqlError {
    let code = match e.code() {
        1264 => ErrorCode::WarnDataOutOfRange,
        1406 => ErrorCode::DataTooLong,
        1048 => ErrorCode::BadNull,
        1366 => ErrorCode::TruncatedWrongValueForField,
        1292 => ErrorCode::TruncatedWrongValue,
        1364 => ErrorCode::NoDefaultForField,
        1062 => ErrorCode::DupEntry,
        1467 => ErrorCode::AutoincReadFailed,
        1049 => ErrorCode::BadDb,
        1007 => ErrorCode::DbCreateExists,
        1008 => ErrorCode::DbDropExists,
        1146 => ErrorCode::NoSuchTable,
        1050 => ErrorCode::TableExists,
        1051 => ErrorCode::BadTable,
        1060 => ErrorCode::DupFieldName,
        1061 => ErrorCode::DupKeyName,
        1068 => ErrorCode::MultiplePriKey,
        1075 => ErrorCode::WrongAutoKey,
        1064 => ErrorCode::ParseError,
        1091 => ErrorCode::CantDropFieldOrKey,
        _ => ErrorCode::Unknown,
    };
    SqlError::new(code, e.message(row))
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
