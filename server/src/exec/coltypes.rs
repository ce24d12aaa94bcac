//! Column types at the SQL edge: sqlparser data types to engine [`ColumnType`]s (CREATE TABLE),
//! and engine columns to the result-set column definitions MySQL sends for them.

use protocol::{ColumnDefinition, ColumnFlags, ColumnType as Wire};
use sqlparser::ast::{self, DataType as D};

use crate::engine::types::MAX_BIT_WIDTH;
use crate::engine::{ColumnType, IntKind, Members};
use crate::error::{ErrorCode, SqlError, SqlResult};

/// utf8mb4_0900_ai_ci, MySQL 8.0's default collation.
pub const UTF8MB4: u16 = 255;
/// The binary collation.
pub const BINARY: u16 = 63;

fn char_len(l: &Option<ast::CharacterLength>, default: u32) -> u32 {
    match l {
        Some(ast::CharacterLength::IntegerLength { length, .. }) => *length as u32,
        _ => default,
    }
}

fn int(kind: IntKind, unsigned: bool) -> ColumnType {
    ColumnType::Integer { kind, unsigned }
}

/// The engine type of a declared column type.
pub fn column_type(t: &D) -> SqlResult<ColumnType> {
    Ok(match t {
        D::TinyInt(_) | D::Bool | D::Boolean => int(IntKind::Tiny, false),
        D::TinyIntUnsigned(_) | D::UTinyInt => int(IntKind::Tiny, true),
        D::SmallInt(_) | D::Int2(_) => int(IntKind::Small, false),
        D::SmallIntUnsigned(_) | D::USmallInt | D::Int2Unsigned(_) => int(IntKind::Small, true),
        D::MediumInt(_) => int(IntKind::Medium, false),
        D::MediumIntUnsigned(_) => int(IntKind::Medium, true),
        D::Int(_) | D::Integer(_) | D::Int4(_) => int(IntKind::Int, false),
        D::IntUnsigned(_) | D::IntegerUnsigned(_) | D::Int4Unsigned(_) => int(IntKind::Int, true),
        D::BigInt(_) | D::Int8(_) => int(IntKind::Big, false),
        D::BigIntUnsigned(_) | D::UBigInt | D::Int8Unsigned(_) => int(IntKind::Big, true),
        D::Float(_) | D::FloatUnsigned(_) | D::Float4 => ColumnType::Float,
        D::Double(_)
        | D::DoubleUnsigned(_)
        | D::DoublePrecision
        | D::DoublePrecisionUnsigned
        | D::Real
        | D::Float8 => ColumnType::Double,
        D::Decimal(i) | D::DecimalUnsigned(i) | D::Numeric(i) | D::Dec(i) | D::DecUnsigned(i) => {
            // Past 255 the digits are far beyond MySQL's limits: held as 255, which the
            // engine refuses with MySQL's error.
            let digits = |n: i128| u8::try_from(n).unwrap_or(u8::MAX);
            let (precision, scale) = match i {
                ast::ExactNumberInfo::None => (10, 0),
                ast::ExactNumberInfo::Precision(p) => (digits((*p).into()), 0),
                ast::ExactNumberInfo::PrecisionAndScale(p, s) => {
                    (digits((*p).into()), digits((*s).into()))
                }
            };
            ColumnType::Decimal { precision, scale }
        }
        D::Char(l) | D::Character(l) => ColumnType::Char(char_len(l, 1)),
        D::Varchar(l) | D::CharacterVarying(l) | D::CharVarying(l) | D::Nvarchar(l) => {
            ColumnType::VarChar(char_len(l, 255))
        }
        D::Binary(n) => ColumnType::Binary(n.unwrap_or(1) as u32),
        D::Varbinary(n) => ColumnType::VarBinary(match n {
            Some(ast::BinaryLength::IntegerLength { length }) => *length as u32,
            _ => 255,
        }),
        D::TinyText => ColumnType::Text(255),
        D::Text => ColumnType::Text(65_535),
        D::MediumText => ColumnType::Text(16_777_215),
        D::LongText => ColumnType::Text(u32::MAX),
        D::TinyBlob => ColumnType::Blob(255),
        D::Blob(_) => ColumnType::Blob(65_535),
        D::MediumBlob => ColumnType::Blob(16_777_215),
        D::LongBlob => ColumnType::Blob(u32::MAX),
        D::Date => ColumnType::Date,
        D::Datetime(fsp) => ColumnType::DateTime {
            fsp: fsp.unwrap_or(0) as u8,
        },
        D::Timestamp(fsp, _) => ColumnType::Timestamp {
            fsp: fsp.unwrap_or(0) as u8,
        },
        D::Time(fsp, _) => ColumnType::Time {
            fsp: fsp.unwrap_or(0).min(u64::from(u8::MAX)) as u8,
        },
        D::Bit(width) => ColumnType::Bit(width.unwrap_or(1).min(u64::from(u8::MAX)) as u8),
        // YEAR(4) is MySQL 5.7's and MariaDB's spelling of YEAR (8.0 takes it, deprecated);
        // other widths are gone.
        D::Custom(name, modifiers) if name.to_string().eq_ignore_ascii_case("year") => {
            let width_4 = matches!(modifiers.as_slice(), [m] if m.to_string() == "4");
            if !(modifiers.is_empty() || width_4) {
                return Err(SqlError::new(
                    ErrorCode::InvalidYearColumnLength,
                    "Supports only YEAR or YEAR(4) column.",
                ));
            }
            ColumnType::Year
        }
        D::Enum(members, _) => ColumnType::Enum(Members::intern(
            &members
                .iter()
                .map(|m| match m {
                    ast::EnumMember::Name(n) | ast::EnumMember::NamedValue(n, _) => n.as_str(),
                })
                .collect::<Vec<_>>(),
        )),
        D::Set(members) => ColumnType::Set(Members::intern(members)),
        D::JSON => ColumnType::Json,
        other => return Err(SqlError::unsupported(&format!("column type {other}"))),
    })
}

/// MySQL's checks of a BIT column's width: 3013 for BIT(0), 1439 past 64 bits.
pub fn check_bit_width(column: &str, ty: ColumnType) -> SqlResult<()> {
    match ty {
        ColumnType::Bit(0) => Err(SqlError::new(
            ErrorCode::InvalidFieldSize,
            format!("Invalid size for column '{column}'."),
        )),
        ColumnType::Bit(n) if n > MAX_BIT_WIDTH => Err(SqlError::new(
            ErrorCode::TooBigDisplaywidth,
            format!("Display width out of range for '{column}' (max = {MAX_BIT_WIDTH})"),
        )),
        _ => Ok(()),
    }
}

/// Bytes a key part of this type takes in MySQL's `key_len` (EXPLAIN).
pub fn key_len(ty: ColumnType, nullable: bool) -> u32 {
    let base = match ty {
        ColumnType::Integer { kind, .. } => kind.bytes() as u32,
        ColumnType::Float => 4,
        ColumnType::Double => 8,
        ColumnType::Decimal { precision, scale } => {
            let bytes =
                |digits: u32| (digits / 9) * 4 + [0, 1, 1, 2, 2, 3, 3, 4, 4][(digits % 9) as usize];
            bytes(u32::from(precision - scale)) + bytes(u32::from(scale))
        }
        ColumnType::Char(n) => n * 4,
        ColumnType::VarChar(n) => n * 4 + 2,
        ColumnType::Binary(n) => n,
        ColumnType::VarBinary(n) => n + 2,
        ColumnType::Text(_) | ColumnType::Blob(_) => 767,
        ColumnType::Date => 3,
        ColumnType::DateTime { fsp } => 5 + u32::from(fsp).div_ceil(2),
        ColumnType::Timestamp { fsp } => 4 + u32::from(fsp).div_ceil(2),
        ColumnType::Time { fsp } => 3 + u32::from(fsp).div_ceil(2),
        ColumnType::Year => 1,
        ColumnType::Bit(n) => u32::from(n).div_ceil(8),
        ColumnType::Enum(members) => members.enum_width() as u32,
        ColumnType::Set(members) => members.set_width() as u32,
        ColumnType::Json => 0, // never indexed (3152)
    };
    base + u32::from(nullable)
}

/// Which key flags a column carries in result metadata.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct KeyFlags {
    /// Part of the PRIMARY KEY.
    pub primary: bool,
    /// First column of a UNIQUE index.
    pub unique: bool,
    /// First column of a non-unique index.
    pub multiple: bool,
}

/// The column definition MySQL sends for a table column.
#[allow(clippy::too_many_arguments)]
pub fn definition(
    schema: &str,
    table: &str,
    org_table: &str,
    name: &str,
    org_name: &str,
    col: &crate::engine::Column,
    keys: KeyFlags,
) -> ColumnDefinition {
    let mut c = ColumnDefinition::new(name, Wire::VarString);
    c.schema = schema.to_string();
    c.table = table.to_string();
    c.org_table = org_table.to_string();
    c.org_name = org_name.to_string();
    let mut flags = ColumnFlags::empty();
    if !col.nullable {
        flags |= ColumnFlags::NOT_NULL;
    }
    if keys.primary {
        flags |= ColumnFlags::PRI_KEY;
    }
    if keys.unique {
        flags |= ColumnFlags::UNIQUE_KEY;
    }
    if keys.multiple {
        flags |= ColumnFlags::MULTIPLE_KEY;
    }
    if col.auto_increment {
        flags |= ColumnFlags::AUTO_INCREMENT;
    }
    c.decimals = 0;
    let (ty, charset, len) = match col.ty {
        ColumnType::Integer { kind, unsigned } => {
            flags |= ColumnFlags::NUM;
            if unsigned {
                flags |= ColumnFlags::UNSIGNED;
            }
            let (w, len) = match kind {
                IntKind::Tiny => (Wire::Tiny, 4),
                IntKind::Small => (Wire::Short, 6),
                IntKind::Medium => (Wire::Int24, 9),
                IntKind::Int => (Wire::Long, 11),
                IntKind::Big => (Wire::LongLong, 20),
            };
            (
                w,
                BINARY,
                if unsigned && kind != IntKind::Big {
                    len - 1
                } else {
                    len
                },
            )
        }
        ColumnType::Float => {
            flags |= ColumnFlags::NUM;
            c.decimals = 31;
            (Wire::Float, BINARY, 12)
        }
        ColumnType::Double => {
            flags |= ColumnFlags::NUM;
            c.decimals = 31;
            (Wire::Double, BINARY, 22)
        }
        ColumnType::Decimal { precision, scale } => {
            flags |= ColumnFlags::NUM;
            c.decimals = scale;
            let len = u32::from(precision) + u32::from(scale > 0) + 1;
            (Wire::NewDecimal, BINARY, len)
        }
        ColumnType::Char(n) => (Wire::String, UTF8MB4, n * 4),
        ColumnType::VarChar(n) => (Wire::VarString, UTF8MB4, n * 4),
        ColumnType::Binary(n) => {
            flags |= ColumnFlags::BINARY;
            (Wire::String, BINARY, n)
        }
        ColumnType::VarBinary(n) => {
            flags |= ColumnFlags::BINARY;
            (Wire::VarString, BINARY, n)
        }
        ColumnType::Text(n) => {
            flags |= ColumnFlags::BLOB;
            (Wire::Blob, UTF8MB4, n.saturating_mul(4).max(n))
        }
        ColumnType::Blob(n) => {
            flags |= ColumnFlags::BLOB | ColumnFlags::BINARY;
            (Wire::Blob, BINARY, n)
        }
        ColumnType::Date => {
            flags |= ColumnFlags::BINARY;
            (Wire::Date, BINARY, 10)
        }
        ColumnType::DateTime { fsp } => {
            flags |= ColumnFlags::BINARY;
            c.decimals = fsp;
            (
                Wire::DateTime,
                BINARY,
                19 + u32::from(fsp) + u32::from(fsp > 0),
            )
        }
        ColumnType::Timestamp { fsp } => {
            flags |= ColumnFlags::BINARY | ColumnFlags::TIMESTAMP;
            c.decimals = fsp;
            (
                Wire::Timestamp,
                BINARY,
                19 + u32::from(fsp) + u32::from(fsp > 0),
            )
        }
        ColumnType::Time { fsp } => {
            flags |= ColumnFlags::BINARY;
            c.decimals = fsp;
            (Wire::Time, BINARY, 10 + u32::from(fsp) + u32::from(fsp > 0))
        }
        ColumnType::Year => {
            flags |= ColumnFlags::NUM | ColumnFlags::UNSIGNED | ColumnFlags::ZEROFILL;
            (Wire::Year, BINARY, 4)
        }
        ColumnType::Bit(n) => {
            flags |= ColumnFlags::UNSIGNED;
            (Wire::Bit, BINARY, u32::from(n))
        }
        ColumnType::Enum(members) => {
            flags |= ColumnFlags::ENUM;
            (Wire::String, UTF8MB4, members.longest_chars() * 4)
        }
        ColumnType::Set(members) => {
            flags |= ColumnFlags::SET;
            (Wire::String, UTF8MB4, members.joined_chars() * 4)
        }
        ColumnType::Json => {
            flags |= ColumnFlags::BLOB | ColumnFlags::BINARY;
            (Wire::Json, BINARY, u32::MAX)
        }
    };
    c.column_type = ty;
    c.charset = charset;
    c.column_length = len;
    c.flags = flags;
    c
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sysbench_columns() {
        assert_eq!(
            column_type(&D::Integer(None)).unwrap(),
            int(IntKind::Int, false)
        );
        let col = crate::engine::Column::new("id", int(IntKind::Int, false))
            .not_null()
            .auto_increment();
        let d = definition(
            "sbtest",
            "sbtest1",
            "sbtest1",
            "id",
            "id",
            &col,
            KeyFlags {
                primary: true,
                ..KeyFlags::default()
            },
        );
        assert_eq!(d.column_type, Wire::Long);
        assert!(d
            .flags
            .contains(ColumnFlags::PRI_KEY | ColumnFlags::AUTO_INCREMENT));
        assert_eq!(key_len(ColumnType::Char(120), false), 480);
        assert_eq!(key_len(int(IntKind::Big, true), true), 9);
    }
}
