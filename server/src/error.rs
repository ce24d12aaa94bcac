//! Errors the server sends to clients: an [`ErrorCode`] (the engine crate's one vocabulary of
//! MySQL codes and SQLSTATEs) and the message formatted for it.

use std::fmt;

pub use crate::engine::ErrorCode;

/// An error to report to the client: a code and a message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SqlError {
    /// The MySQL error code (with its SQLSTATE).
    pub code: ErrorCode,
    /// The message text, formatted as MySQL formats it for this code.
    pub message: String,
}

impl SqlError {
    /// An error with an explicit message.
    pub fn new(code: ErrorCode, message: impl Into<String>) -> SqlError {
        SqlError {
            code,
            message: message.into(),
        }
    }

    /// The MySQL error number the client sees.
    pub fn number(&self) -> u16 {
        self.code.code()
    }

    /// The SQLSTATE the client sees.
    pub fn sql_state(&self) -> &'static str {
        self.code.sql_state()
    }

    /// 1064 with MySQL's "near" text, pointing at `near` in the statement.
    pub fn parse(near: &str) -> SqlError {
        let near: String = near.chars().take(80).collect();
        SqlError::new(
            ErrorCode::ParseError,
            format!(
                "You have an error in your SQL syntax; check the manual that corresponds to your \
                 MySQL server version for the right syntax to use near '{near}' at line 1"
            ),
        )
    }

    /// 1235 naming the missing feature.
    pub fn unsupported(what: &str) -> SqlError {
        SqlError::new(
            ErrorCode::NotSupportedYet,
            format!("This version of tpbed doesn't yet support '{what}'"),
        )
    }

    /// 1193 for an unknown system variable.
    pub fn unknown_variable(name: &str) -> SqlError {
        SqlError::new(
            ErrorCode::UnknownSystemVariable,
            format!("Unknown system variable '{name}'"),
        )
    }

    /// 1227 naming the privileges of which at least one is needed.
    pub fn need_privilege(privs: &str) -> SqlError {
        SqlError::new(
            ErrorCode::SpecificAccessDenied,
            format!("Access denied; you need (at least one of) the {privs} privilege(s) for this operation"),
        )
    }
}

impl fmt::Display for SqlError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "ERROR {} ({}): {}",
            self.number(),
            self.sql_state(),
            self.message
        )
    }
}

impl std::error::Error for SqlError {}

/// Result alias for operations that fail with a client-visible error.
pub type SqlResult<T> = Result<T, SqlError>;

/// An engine error of a statement without per-row input (DDL): row 1 in messages.
impl From<crate::engine::EngineError> for SqlError {
    fn from(e: crate::engine::EngineError) -> SqlError {
        engine_error(&e, 1)
    }
}

/// The client error for an engine error; `row` is the 1-based input row MySQL names in
/// per-row messages.
pub fn engine_error(e: &crate::engine::EngineError, row: u64) -> SqlError {
    SqlError::new(e.code(), e.message(row))
}

/// 1049 for an unknown database.
pub fn unknown_db(name: &str) -> SqlError {
    SqlError::new(ErrorCode::BadDb, format!("Unknown database '{name}'"))
}

/// The SQL error of a lock error.
pub fn lock_error(e: crate::engine::lock::LockError) -> SqlError {
    SqlError::new(e.into(), e.message())
}
