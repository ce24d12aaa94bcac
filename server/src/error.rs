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
    /// A code of the file statements the engine's vocabulary lacks; when set, the client
    /// sees it (and its SQLSTATE) instead of `code`.
    pub file_code: Option<FileCode>,
}

/// Codes only the file statements (LOAD DATA, SELECT ... INTO OUTFILE/DUMPFILE) emit, with
/// MySQL 8.0's numbers and SQLSTATEs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u16)]
pub enum FileCode {
    /// EE_CANTCREATEFILE: the output file cannot be created.
    CantCreateFile = 1,
    /// EE_FILENOTFOUND: the input file cannot be opened.
    FileNotFound = 29,
    /// ER_WRONG_FIELD_TERMINATORS: ENCLOSED BY / ESCAPED BY longer than one character.
    WrongFieldTerminators = 1083,
    /// ER_FILE_EXISTS_ERROR: the output file exists.
    FileExists = 1086,
    /// ER_TOO_MANY_ROWS: INTO DUMPFILE of more than one row.
    TooManyRows = 1172,
    /// ER_WARN_TOO_FEW_RECORDS: a line with fewer fields than columns (strict mode).
    TooFewRecords = 1261,
    /// ER_WARN_TOO_MANY_RECORDS: a line with more fields than columns (strict mode).
    TooManyRecords = 1262,
    /// ER_WARN_NULL_TO_NOTNULL: `\N` for a NOT NULL column (strict mode).
    NullToNotNull = 1263,
    /// ER_OPTION_PREVENTS_STATEMENT: `secure_file_priv` refuses the file.
    OptionPreventsStatement = 1290,
    /// ER_CLIENT_LOCAL_FILES_DISABLED: LOAD DATA LOCAL with `local_infile` off.
    LocalFilesDisabled = 3948,
}

impl FileCode {
    /// The SQLSTATE MySQL sends with the code.
    pub fn sql_state(self) -> &'static str {
        match self {
            FileCode::WrongFieldTerminators | FileCode::TooManyRows => "42000",
            FileCode::LocalFilesDisabled => "42000",
            FileCode::TooFewRecords | FileCode::TooManyRecords => "01000",
            FileCode::NullToNotNull => "22004",
            _ => "HY000",
        }
    }
}

impl SqlError {
    /// An error with an explicit message.
    pub fn new(code: ErrorCode, message: impl Into<String>) -> SqlError {
        SqlError {
            code,
            message: message.into(),
            file_code: None,
        }
    }

    /// An error with a code of the file statements.
    pub fn file(code: FileCode, message: impl Into<String>) -> SqlError {
        SqlError {
            code: ErrorCode::Unknown,
            message: message.into(),
            file_code: Some(code),
        }
    }

    /// The MySQL error number the client sees.
    pub fn number(&self) -> u16 {
        self.file_code.map_or(self.code.code(), |c| c as u16)
    }

    /// The SQLSTATE the client sees.
    pub fn sql_state(&self) -> &'static str {
        self.file_code
            .map_or(self.code.sql_state(), FileCode::sql_state)
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
