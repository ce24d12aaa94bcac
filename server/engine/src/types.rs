//! Column types: the integer family, strings, DOUBLE/FLOAT, DECIMAL, BIT, dates and times,
//! ENUM/SET and JSON, with their parameters validated and their MySQL spelling. Coercion of values to a type is in
//! `coerce`.

use crate::error::EngineError;
use crate::members::{Members, MAX_ENUM_MEMBERS, MAX_SET_MEMBERS};
use crate::value::Value;

/// The integer family, by storage width.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum IntKind {
    /// TINYINT, 1 byte.
    Tiny,
    /// SMALLINT, 2 bytes.
    Small,
    /// MEDIUMINT, 3 bytes.
    Medium,
    /// INT, 4 bytes.
    Int,
    /// BIGINT, 8 bytes.
    Big,
}

impl IntKind {
    /// Storage width in bytes.
    pub fn bytes(self) -> usize {
        match self {
            IntKind::Tiny => 1,
            IntKind::Small => 2,
            IntKind::Medium => 3,
            IntKind::Int => 4,
            IntKind::Big => 8,
        }
    }

    /// The signed range, inclusive.
    pub(crate) fn signed_range(self) -> (i64, i64) {
        match self {
            IntKind::Big => (i64::MIN, i64::MAX),
            k => {
                let bits = 8 * k.bytes() as u32;
                (-(1i64 << (bits - 1)), (1i64 << (bits - 1)) - 1)
            }
        }
    }

    /// The largest unsigned value.
    pub(crate) fn unsigned_max(self) -> u64 {
        match self {
            IntKind::Big => u64::MAX,
            k => (1u64 << (8 * k.bytes() as u32)) - 1,
        }
    }

    fn sql_name(self) -> &'static str {
        match self {
            IntKind::Tiny => "tinyint",
            IntKind::Small => "smallint",
            IntKind::Medium => "mediumint",
            IntKind::Int => "int",
            IntKind::Big => "bigint",
        }
    }
}

/// A column's type. String lengths are in characters (CHAR/VARCHAR, utf8mb4) or bytes
/// (BINARY/VARBINARY/TEXT/BLOB), as MySQL counts them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ColumnType {
    /// TINYINT..BIGINT, optionally UNSIGNED.
    Integer {
        /// Width.
        kind: IntKind,
        /// UNSIGNED.
        unsigned: bool,
    },
    /// FLOAT (single precision, held as a double rounded to f32).
    Float,
    /// DOUBLE.
    Double,
    /// DECIMAL(precision, scale): precision up to 65 (beyond it MySQL's 1426), scale up to 30.
    Decimal {
        /// Total digits.
        precision: u8,
        /// Digits after the point.
        scale: u8,
    },
    /// CHAR(n): trailing spaces are not stored (MySQL strips them on read).
    Char(u32),
    /// VARCHAR(n).
    VarChar(u32),
    /// BINARY(n): padded with 0x00 to n bytes.
    Binary(u32),
    /// VARBINARY(n).
    VarBinary(u32),
    /// TINYTEXT/TEXT/MEDIUMTEXT/LONGTEXT, by maximum bytes.
    Text(u32),
    /// TINYBLOB/BLOB/MEDIUMBLOB/LONGBLOB, by maximum bytes.
    Blob(u32),
    /// DATE.
    Date,
    /// DATETIME(fsp).
    DateTime {
        /// Fractional-second digits, 0..=6.
        fsp: u8,
    },
    /// TIMESTAMP(fsp): 1970-01-01 00:00:01 .. 2038-01-19 03:14:07.
    Timestamp {
        /// Fractional-second digits, 0..=6.
        fsp: u8,
    },
    /// TIME(fsp): -838:59:59 .. 838:59:59, held as [`Value::Time`](crate::value::Value).
    Time {
        /// Fractional-second digits, 0..=6.
        fsp: u8,
    },
    /// YEAR: 1901..=2155 or 0, held as `UInt`.
    Year,
    /// BIT(n), n in 1..=64: the bits held as `UInt`.
    Bit(u8),
    /// ENUM('a', ...): one member, held and ordered by its 1-based index.
    Enum(Members),
    /// SET('a', ...): any members, held and ordered as a bitmask.
    Set(Members),
    /// JSON: validated, held as MySQL prints it (see `json`).
    Json,
}

/// Most bits a BIT column holds.
pub const MAX_BIT_WIDTH: u8 = 64;

/// Largest DECIMAL precision MySQL accepts (beyond it: 1426).
pub const MAX_DECIMAL_PRECISION: u8 = 65;
/// Largest DECIMAL scale MySQL accepts (beyond it: 1425).
pub const MAX_DECIMAL_SCALE: u8 = 30;

/// Bytes a DECIMAL of `precision` digits takes in a row or key: the smallest two's-complement
/// width (8, 16 or 32 bytes) that holds it.
pub(crate) fn decimal_bytes(precision: u8) -> usize {
    match precision {
        0..=18 => 8,
        19..=38 => 16,
        _ => 32,
    }
}

impl ColumnType {
    /// Checks the type's own parameters (DECIMAL precision/scale, fsp).
    pub fn validate(&self, column: &str) -> Result<(), EngineError> {
        let bad = |reason: String| {
            Err(EngineError::BadColumnDefinition {
                column: column.to_string(),
                reason,
            })
        };
        match *self {
            ColumnType::Decimal { precision, scale } => {
                let column = column.to_string();
                if scale > MAX_DECIMAL_SCALE {
                    return Err(EngineError::TooBigScale { column, scale });
                }
                if precision > MAX_DECIMAL_PRECISION {
                    return Err(EngineError::TooBigPrecision { column, precision });
                }
                if scale > precision {
                    return Err(EngineError::ScaleAbovePrecision { column });
                }
                if precision == 0 {
                    return bad("DECIMAL precision 0 not supported".into());
                }
            }
            // The SQL layer refuses these with MySQL's errors first.
            ColumnType::Bit(width) if width == 0 || width > MAX_BIT_WIDTH => {
                return bad(format!("BIT width {width} is outside 1..={MAX_BIT_WIDTH}"));
            }
            ColumnType::DateTime { fsp }
            | ColumnType::Timestamp { fsp }
            | ColumnType::Time { fsp }
                if fsp > 6 =>
            {
                return bad(format!("fractional seconds precision {fsp} exceeds 6"));
            }
            ColumnType::Enum(members) | ColumnType::Set(members) => {
                let is_set = matches!(self, ColumnType::Set(_));
                if is_set && members.len() > MAX_SET_MEMBERS {
                    return Err(EngineError::TooBigSet {
                        column: column.to_string(),
                    });
                }
                if let Some(member) = members.names().find(|m| is_set && m.contains(',')) {
                    return Err(EngineError::CommaInSetMember {
                        member: member.to_string(),
                    });
                }
                if members.len() > MAX_ENUM_MEMBERS {
                    return bad(format!("more than {MAX_ENUM_MEMBERS} ENUM members"));
                }
                if let Some(member) = members.duplicate() {
                    return Err(EngineError::DuplicatedMember {
                        column: column.to_string(),
                        member: member.to_string(),
                        kind: if is_set { "SET" } else { "ENUM" },
                    });
                }
            }
            _ => {}
        }
        Ok(())
    }

    /// The type as `SHOW CREATE TABLE` and `information_schema.COLUMNS.COLUMN_TYPE` spell it.
    pub fn sql_name(&self) -> String {
        match *self {
            ColumnType::Integer { kind, unsigned } => {
                format!(
                    "{}{}",
                    kind.sql_name(),
                    if unsigned { " unsigned" } else { "" }
                )
            }
            ColumnType::Float => "float".into(),
            ColumnType::Double => "double".into(),
            ColumnType::Decimal { precision, scale } => format!("decimal({precision},{scale})"),
            ColumnType::Char(n) => format!("char({n})"),
            ColumnType::VarChar(n) => format!("varchar({n})"),
            ColumnType::Binary(n) => format!("binary({n})"),
            ColumnType::VarBinary(n) => format!("varbinary({n})"),
            ColumnType::Text(n) => text_name(n, "text").into(),
            ColumnType::Blob(n) => text_name(n, "blob").into(),
            ColumnType::Date => "date".into(),
            ColumnType::DateTime { fsp: 0 } => "datetime".into(),
            ColumnType::DateTime { fsp } => format!("datetime({fsp})"),
            ColumnType::Timestamp { fsp: 0 } => "timestamp".into(),
            ColumnType::Timestamp { fsp } => format!("timestamp({fsp})"),
            ColumnType::Time { fsp: 0 } => "time".into(),
            ColumnType::Time { fsp } => format!("time({fsp})"),
            ColumnType::Year => "year".into(),
            ColumnType::Bit(n) => format!("bit({n})"),
            ColumnType::Enum(members) => format!("enum({})", members.quoted()),
            ColumnType::Set(members) => format!("set({})", members.quoted()),
            ColumnType::Json => "json".into(),
        }
    }

    /// The value MySQL gives a NOT NULL column that has no DEFAULT when a row must have one
    /// (ALTER TABLE ADD COLUMN over existing rows): 0, the empty string, the zero date, an
    /// ENUM's first member, the empty SET, JSON null.
    pub fn implicit_default(&self) -> crate::value::Value {
        use crate::value::{DateTime, Value};
        match self {
            ColumnType::Integer { unsigned: true, .. } | ColumnType::Year | ColumnType::Bit(_) => {
                Value::UInt(0)
            }
            ColumnType::Time { fsp } => Value::Time(0, *fsp),
            ColumnType::Integer { .. } | ColumnType::Decimal { .. } => Value::Int(0),
            ColumnType::Float | ColumnType::Double => Value::Double(0.0),
            ColumnType::Date | ColumnType::DateTime { .. } | ColumnType::Timestamp { .. } => {
                Value::DateTime(DateTime::default())
            }
            ColumnType::Enum(members) => Value::Enum(1, *members),
            ColumnType::Set(members) => Value::Set(0, *members),
            ColumnType::Json => Value::str("null"),
            _ => Value::Bytes(Vec::new()),
        }
    }

    /// True for the CHAR/VARCHAR/TEXT family (character strings).
    pub fn is_text(&self) -> bool {
        matches!(
            self,
            ColumnType::Char(_) | ColumnType::VarChar(_) | ColumnType::Text(_)
        )
    }

    /// True when `v` is already what [`ColumnType::coerce`] would make of it for this integer
    /// column: an `Int` in a signed column's range or a `UInt` in an unsigned one's. Lets a key
    /// lookup take its integer as it is without coercing and comparing it.
    pub fn holds_integer_as_is(&self, v: &Value) -> bool {
        match (*self, v) {
            (
                ColumnType::Integer {
                    kind,
                    unsigned: false,
                },
                Value::Int(i),
            ) => {
                let (lo, hi) = kind.signed_range();
                (lo..=hi).contains(i)
            }
            (
                ColumnType::Integer {
                    kind,
                    unsigned: true,
                },
                Value::UInt(u),
            ) => *u <= kind.unsigned_max(),
            _ => false,
        }
    }

    /// True for the types that carry a character set and collation: the CHAR/VARCHAR/TEXT
    /// family, ENUM and SET.
    pub fn has_collation(&self) -> bool {
        self.is_text() || matches!(self, ColumnType::Enum(_) | ColumnType::Set(_))
    }
}

fn text_name(max: u32, base: &'static str) -> &'static str {
    match (max, base) {
        (0..=255, "text") => "tinytext",
        (0..=255, _) => "tinyblob",
        (256..=65_535, _) => base,
        (65_536..=16_777_215, "text") => "mediumtext",
        (65_536..=16_777_215, _) => "mediumblob",
        (_, "text") => "longtext",
        _ => "longblob",
    }
}
