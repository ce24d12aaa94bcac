//! Engine errors: every way a storage call can fail, each mapped to the [`ErrorCode`] (MySQL's
//! code and SQLSTATE) the SQL layer must send (strict mode), with MySQL's message text.

use std::fmt;

use crate::types::{MAX_DECIMAL_PRECISION, MAX_DECIMAL_SCALE};
use crate::ErrorCode;

/// An error from the catalog, value coercion or an index operation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum EngineError {
    /// A value outside the column type's range (1264 `22003`).
    OutOfRange {
        /// The column.
        column: String,
    },
    /// A string or binary string longer than the column allows (1406 `22001`).
    DataTooLong {
        /// The column.
        column: String,
    },
    /// NULL into a NOT NULL column (1048 `23000`).
    NullNotAllowed {
        /// The column.
        column: String,
    },
    /// A string that is not a number of the column's kind (1366 `HY000`).
    IncorrectValue {
        /// `integer`, `decimal` or `double`, as MySQL names it.
        kind: &'static str,
        /// The offending value as text.
        value: String,
        /// The column.
        column: String,
    },
    /// A value that is not a valid date or time for the column (1292 `22007`).
    IncorrectDatetime {
        /// `date`, `datetime` or `timestamp`.
        kind: &'static str,
        /// The offending value as text.
        value: String,
        /// The column.
        column: String,
    },
    /// A NOT NULL column without a default was not given a value (1364 `HY000`).
    NoDefault {
        /// The column.
        column: String,
    },
    /// A PRIMARY or UNIQUE key already holds this value (1062 `23000`).
    DuplicateKey {
        /// The key as MySQL prints it: values joined with `-`.
        entry: String,
        /// `table.index`, as MySQL 8.0.19+ names it.
        key: String,
    },
    /// The AUTO_INCREMENT counter passed the column's maximum (1467 `HY000`).
    AutoIncrementExhausted,
    /// Unknown database (1049 `42000`).
    NoSuchDatabase(String),
    /// CREATE DATABASE of an existing name (1007 `HY000`).
    DatabaseExists(String),
    /// DROP DATABASE of an unknown name (1008 `HY000`).
    DropNoSuchDatabase(String),
    /// Unknown table (1146 `42S02`): database and table.
    NoSuchTable(String, String),
    /// CREATE TABLE of an existing name (1050 `42S01`).
    TableExists(String),
    /// DROP TABLE of an unknown table (1051 `42S02`): `db.table`.
    UnknownTable(String),
    /// Two columns with one name (1060 `42S21`).
    DuplicateColumn(String),
    /// Two indexes with one name (1061 `42000`).
    DuplicateKeyName(String),
    /// More than one PRIMARY KEY (1068 `42000`).
    MultiplePrimaryKey,
    /// More than one AUTO_INCREMENT column, or one that starts no index (1075 `42000`).
    WrongAutoKey,
    /// DROP INDEX of an unknown index (1091 `42000`).
    CantDropKey(String),
    /// DECIMAL(M,D) with M above 65 (1426 `42000`).
    TooBigPrecision {
        /// The column.
        column: String,
        /// The declared M.
        precision: u8,
    },
    /// DECIMAL(M,D) with D above 30 (1425 `42000`).
    TooBigScale {
        /// The column.
        column: String,
        /// The declared D.
        scale: u8,
    },
    /// DECIMAL(M,D) with D above M (1427 `42000`).
    ScaleAbovePrecision {
        /// The column.
        column: String,
    },
    /// A value that is no member of the ENUM or SET column (1265 `01000`).
    Truncated {
        /// The column.
        column: String,
    },
    /// An ENUM or SET declaring a member twice (1291 `HY000`).
    DuplicatedMember {
        /// The column.
        column: String,
        /// The member named again.
        member: String,
        /// `ENUM` or `SET`.
        kind: &'static str,
    },
    /// A SET member holding a comma (1367 `22007`).
    CommaInSetMember {
        /// The member.
        member: String,
    },
    /// A SET of more than 64 members (1097 `HY000`).
    TooBigSet {
        /// The column.
        column: String,
    },
    /// A value for a JSON column that is not JSON (3140 `22032`).
    InvalidJson {
        /// What the parser found wrong, in MySQL's words.
        reason: &'static str,
        /// Byte offset of the fault in the text.
        position: usize,
        /// The column, as `table.column`.
        column: String,
    },
    /// An index over a JSON column (3152 `42000`).
    JsonUsedAsKey {
        /// The column.
        column: String,
    },
    /// A column type the engine cannot represent (1064-family; message says what).
    BadColumnDefinition {
        /// The column.
        column: String,
        /// What is wrong.
        reason: String,
    },
}

impl EngineError {
    /// The MySQL error code (with its SQLSTATE).
    pub fn code(&self) -> ErrorCode {
        match self {
            EngineError::OutOfRange { .. } => ErrorCode::WarnDataOutOfRange,
            EngineError::DataTooLong { .. } => ErrorCode::DataTooLong,
            EngineError::NullNotAllowed { .. } => ErrorCode::BadNull,
            EngineError::IncorrectValue { .. } => ErrorCode::TruncatedWrongValueForField,
            EngineError::IncorrectDatetime { .. } => ErrorCode::TruncatedWrongValue,
            EngineError::NoDefault { .. } => ErrorCode::NoDefaultForField,
            EngineError::DuplicateKey { .. } => ErrorCode::DupEntry,
            EngineError::AutoIncrementExhausted => ErrorCode::AutoincReadFailed,
            EngineError::NoSuchDatabase(_) => ErrorCode::BadDb,
            EngineError::DatabaseExists(_) => ErrorCode::DbCreateExists,
            EngineError::DropNoSuchDatabase(_) => ErrorCode::DbDropExists,
            EngineError::NoSuchTable(..) => ErrorCode::NoSuchTable,
            EngineError::TableExists(_) => ErrorCode::TableExists,
            EngineError::UnknownTable(_) => ErrorCode::BadTable,
            EngineError::DuplicateColumn(_) => ErrorCode::DupFieldName,
            EngineError::DuplicateKeyName(_) => ErrorCode::DupKeyName,
            EngineError::MultiplePrimaryKey => ErrorCode::MultiplePriKey,
            EngineError::WrongAutoKey => ErrorCode::WrongAutoKey,
            EngineError::CantDropKey(_) => ErrorCode::CantDropFieldOrKey,
            EngineError::TooBigPrecision { .. } => ErrorCode::TooBigPrecision,
            EngineError::TooBigScale { .. } => ErrorCode::TooBigScale,
            EngineError::ScaleAbovePrecision { .. } => ErrorCode::MBiggerThanD,
            EngineError::BadColumnDefinition { .. } => ErrorCode::ParseError,
            EngineError::Truncated { .. } => ErrorCode::WarnDataTruncated,
            EngineError::DuplicatedMember { .. } => ErrorCode::DuplicatedValueInType,
            EngineError::TooBigSet { .. } => ErrorCode::TooBigSet,
            EngineError::CommaInSetMember { .. } => ErrorCode::IllegalValueForType,
            EngineError::InvalidJson { .. } => ErrorCode::InvalidJsonText,
            EngineError::JsonUsedAsKey { .. } => ErrorCode::JsonUsedAsKey,
        }
    }

    /// MySQL's message text; `row` is the 1-based row number of the statement's input that
    /// failed (MySQL prints it for the per-row errors).
    pub fn message(&self, row: u64) -> String {
        match self {
            EngineError::OutOfRange { column } => {
                format!("Out of range value for column '{column}' at row {row}")
            }
            EngineError::DataTooLong { column } => {
                format!("Data too long for column '{column}' at row {row}")
            }
            EngineError::NullNotAllowed { column } => format!("Column '{column}' cannot be null"),
            EngineError::IncorrectValue {
                kind,
                value,
                column,
            } => {
                format!("Incorrect {kind} value: '{value}' for column '{column}' at row {row}")
            }
            EngineError::IncorrectDatetime {
                kind,
                value,
                column,
            } => {
                format!("Incorrect {kind} value: '{value}' for column '{column}' at row {row}")
            }
            EngineError::NoDefault { column } => {
                format!("Field '{column}' doesn't have a default value")
            }
            EngineError::DuplicateKey { entry, key } => {
                format!("Duplicate entry '{entry}' for key '{key}'")
            }
            EngineError::AutoIncrementExhausted => {
                "Failed to read auto-increment value from storage engine".to_string()
            }
            EngineError::NoSuchDatabase(db) => format!("Unknown database '{db}'"),
            EngineError::DatabaseExists(db) => {
                format!("Can't create database '{db}'; database exists")
            }
            EngineError::DropNoSuchDatabase(db) => {
                format!("Can't drop database '{db}'; database doesn't exist")
            }
            EngineError::NoSuchTable(db, t) => format!("Table '{db}.{t}' doesn't exist"),
            EngineError::TableExists(t) => format!("Table '{t}' already exists"),
            EngineError::UnknownTable(t) => format!("Unknown table '{t}'"),
            EngineError::DuplicateColumn(c) => format!("Duplicate column name '{c}'"),
            EngineError::DuplicateKeyName(k) => format!("Duplicate key name '{k}'"),
            EngineError::MultiplePrimaryKey => "Multiple primary key defined".to_string(),
            EngineError::WrongAutoKey => "Incorrect table definition; there can be only one auto \
                                          column and it must be defined as a key"
                .to_string(),
            EngineError::CantDropKey(k) => {
                format!("Can't DROP '{k}'; check that column/key exists")
            }
            EngineError::TooBigPrecision { column, precision } => format!(
                "Too-big precision {precision} specified for '{column}'. Maximum is \
                 {MAX_DECIMAL_PRECISION}."
            ),
            EngineError::TooBigScale { column, scale } => format!(
                "Too big scale {scale} specified for column '{column}'. Maximum is \
                 {MAX_DECIMAL_SCALE}."
            ),
            EngineError::ScaleAbovePrecision { column } => format!(
                "For float(M,D), double(M,D) or decimal(M,D), M must be >= D (column '{column}')."
            ),
            EngineError::BadColumnDefinition { column, reason } => {
                format!("Column '{column}': {reason}")
            }
            EngineError::Truncated { column } => {
                format!("Data truncated for column '{column}' at row {row}")
            }
            EngineError::DuplicatedMember {
                column,
                member,
                kind,
            } => format!("Column '{column}' has duplicated value '{member}' in {kind}"),
            EngineError::TooBigSet { column } => {
                format!("Too many strings for column {column} and SET")
            }
            EngineError::CommaInSetMember { member } => {
                format!("Illegal set '{member}' value found during parsing")
            }
            EngineError::InvalidJson {
                reason,
                position,
                column,
            } => format!(
                "Invalid JSON text: \"{reason}\" at position {position} in value for column \
                 '{column}'."
            ),
            EngineError::JsonUsedAsKey { column } => format!(
                "JSON column '{column}' supports indexing only via generated columns on a \
                 specified JSON path."
            ),
        }
    }
}

impl fmt::Display for EngineError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message(1))
    }
}

impl std::error::Error for EngineError {}

impl From<&EngineError> for ErrorCode {
    fn from(e: &EngineError) -> ErrorCode {
        e.code()
    }
}
