//! Column types, column flags and the column-definition packet (Protocol::ColumnDefinition41).

use bitflags::bitflags;

use crate::error::ProtocolError;
use crate::lenenc::{put_lenenc_bytes, put_u16, put_u32, Reader};

/// A MySQL field type code (`enum_field_types`); the discriminant is the wire byte.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[repr(u8)]
pub enum ColumnType {
    /// `MYSQL_TYPE_DECIMAL` (old decimal), 0.
    Decimal = 0,
    /// `MYSQL_TYPE_TINY` (TINYINT), 1 byte in binary.
    Tiny = 1,
    /// `MYSQL_TYPE_SHORT` (SMALLINT), 2 bytes.
    Short = 2,
    /// `MYSQL_TYPE_LONG` (INT), 4 bytes.
    Long = 3,
    /// `MYSQL_TYPE_FLOAT`, 4 bytes.
    Float = 4,
    /// `MYSQL_TYPE_DOUBLE`, 8 bytes.
    Double = 5,
    /// `MYSQL_TYPE_NULL`, no bytes.
    Null = 6,
    /// `MYSQL_TYPE_TIMESTAMP`.
    Timestamp = 7,
    /// `MYSQL_TYPE_LONGLONG` (BIGINT), 8 bytes.
    LongLong = 8,
    /// `MYSQL_TYPE_INT24` (MEDIUMINT), 4 bytes in binary.
    Int24 = 9,
    /// `MYSQL_TYPE_DATE`.
    Date = 10,
    /// `MYSQL_TYPE_TIME`.
    Time = 11,
    /// `MYSQL_TYPE_DATETIME`.
    DateTime = 12,
    /// `MYSQL_TYPE_YEAR`, 2 bytes.
    Year = 13,
    /// `MYSQL_TYPE_NEWDATE` (internal).
    NewDate = 14,
    /// `MYSQL_TYPE_VARCHAR`.
    VarChar = 15,
    /// `MYSQL_TYPE_BIT`.
    Bit = 16,
    /// `MYSQL_TYPE_TIMESTAMP2` (internal).
    Timestamp2 = 17,
    /// `MYSQL_TYPE_DATETIME2` (internal).
    DateTime2 = 18,
    /// `MYSQL_TYPE_TIME2` (internal).
    Time2 = 19,
    /// `MYSQL_TYPE_TYPED_ARRAY` (replication only).
    TypedArray = 20,
    /// `MYSQL_TYPE_VECTOR` (MySQL 9).
    Vector = 242,
    /// `MYSQL_TYPE_INVALID`.
    Invalid = 243,
    /// `MYSQL_TYPE_BOOL` (placeholder).
    Bool = 244,
    /// `MYSQL_TYPE_JSON`.
    Json = 245,
    /// `MYSQL_TYPE_NEWDECIMAL` (DECIMAL), sent as a string.
    NewDecimal = 246,
    /// `MYSQL_TYPE_ENUM`.
    Enum = 247,
    /// `MYSQL_TYPE_SET`.
    Set = 248,
    /// `MYSQL_TYPE_TINY_BLOB`.
    TinyBlob = 249,
    /// `MYSQL_TYPE_MEDIUM_BLOB`.
    MediumBlob = 250,
    /// `MYSQL_TYPE_LONG_BLOB`.
    LongBlob = 251,
    /// `MYSQL_TYPE_BLOB` (TEXT and BLOB columns).
    Blob = 252,
    /// `MYSQL_TYPE_VAR_STRING` (VARCHAR and VARBINARY columns).
    VarString = 253,
    /// `MYSQL_TYPE_STRING` (CHAR and BINARY columns).
    String = 254,
    /// `MYSQL_TYPE_GEOMETRY`.
    Geometry = 255,
}

impl ColumnType {
    /// Maps a wire byte to a type, `None` for a byte MySQL does not define.
    pub fn from_u8(b: u8) -> Option<Self> {
        use ColumnType::*;
        Some(match b {
            0 => Decimal,
            1 => Tiny,
            2 => Short,
            3 => Long,
            4 => Float,
            5 => Double,
            6 => Null,
            7 => Timestamp,
            8 => LongLong,
            9 => Int24,
            10 => Date,
            11 => Time,
            12 => DateTime,
            13 => Year,
            14 => NewDate,
            15 => VarChar,
            16 => Bit,
            17 => Timestamp2,
            18 => DateTime2,
            19 => Time2,
            20 => TypedArray,
            242 => Vector,
            243 => Invalid,
            244 => Bool,
            245 => Json,
            246 => NewDecimal,
            247 => Enum,
            248 => Set,
            249 => TinyBlob,
            250 => MediumBlob,
            251 => LongBlob,
            252 => Blob,
            253 => VarString,
            254 => String,
            255 => Geometry,
            _ => return None,
        })
    }

    /// Like [`ColumnType::from_u8`], as a decoding error.
    pub fn try_from_u8(b: u8) -> Result<Self, ProtocolError> {
        Self::from_u8(b).ok_or(ProtocolError::UnknownColumnType(b))
    }
}

bitflags! {
    /// Column definition flags (`*_FLAG` in MySQL).
    #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
    pub struct ColumnFlags: u16 {
        /// The column cannot be NULL.
        const NOT_NULL = 1;
        /// Part of the primary key.
        const PRI_KEY = 1 << 1;
        /// Part of a unique key.
        const UNIQUE_KEY = 1 << 2;
        /// Part of a non-unique key.
        const MULTIPLE_KEY = 1 << 3;
        /// A BLOB or TEXT column.
        const BLOB = 1 << 4;
        /// An unsigned number (also marks unsigned binary-protocol parameters' columns).
        const UNSIGNED = 1 << 5;
        /// ZEROFILL.
        const ZEROFILL = 1 << 6;
        /// Binary collation.
        const BINARY = 1 << 7;
        /// An ENUM.
        const ENUM = 1 << 8;
        /// AUTO_INCREMENT.
        const AUTO_INCREMENT = 1 << 9;
        /// A TIMESTAMP.
        const TIMESTAMP = 1 << 10;
        /// A SET.
        const SET = 1 << 11;
        /// No default value.
        const NO_DEFAULT_VALUE = 1 << 12;
        /// ON UPDATE NOW().
        const ON_UPDATE_NOW = 1 << 13;
        /// Part of some key.
        const PART_KEY = 1 << 14;
        /// A numeric column.
        const NUM = 1 << 15;
    }
}

/// One column of a result set or one parameter of a prepared statement
/// (Protocol::ColumnDefinition41; the catalog is always `def`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ColumnDefinition {
    /// Database name.
    pub schema: String,
    /// Table alias as written in the query.
    pub table: String,
    /// Physical table name.
    pub org_table: String,
    /// Column alias (the label clients show).
    pub name: String,
    /// Physical column name.
    pub org_name: String,
    /// Collation id of the column (63 = binary).
    pub charset: u16,
    /// Maximum display length.
    pub column_length: u32,
    /// The field type.
    pub column_type: ColumnType,
    /// Column flags.
    pub flags: ColumnFlags,
    /// Digits after the decimal point (0x1f for strings and dynamic values).
    pub decimals: u8,
}

impl ColumnDefinition {
    /// A computed column named `name` (no schema or table), utf8mb4, with neutral length
    /// and flags; adjust the fields for real table columns.
    pub fn new(name: &str, column_type: ColumnType) -> Self {
        Self {
            schema: String::new(),
            table: String::new(),
            org_table: String::new(),
            name: name.to_owned(),
            org_name: String::new(),
            charset: 255,
            column_length: 0,
            column_type,
            flags: ColumnFlags::empty(),
            decimals: 0,
        }
    }

    /// Appends the definition's payload.
    pub fn encode(&self, out: &mut Vec<u8>) {
        put_lenenc_bytes(out, b"def");
        for s in [
            &self.schema,
            &self.table,
            &self.org_table,
            &self.name,
            &self.org_name,
        ] {
            put_lenenc_bytes(out, s.as_bytes());
        }
        out.push(0x0c);
        put_u16(out, self.charset);
        put_u32(out, self.column_length);
        out.push(self.column_type as u8);
        put_u16(out, self.flags.bits());
        out.push(self.decimals);
        out.extend_from_slice(&[0, 0]);
    }

    /// Decodes a definition payload. Names that are not UTF-8 are converted lossily;
    /// trailing bytes (COM_FIELD_LIST's default value) are ignored.
    pub fn decode(payload: &[u8]) -> Result<Self, ProtocolError> {
        let mut r = Reader::new(payload);
        let _catalog = r.lenenc_bytes()?;
        let mut text = || {
            r.lenenc_bytes()
                .map(|b| String::from_utf8_lossy(b).into_owned())
        };
        let (schema, table, org_table, name, org_name) =
            (text()?, text()?, text()?, text()?, text()?);
        let fixed_len = r.lenenc_int()?;
        if fixed_len < 0x0c {
            return Err(ProtocolError::Malformed(
                "column definition fixed-length block",
            ));
        }
        let charset = r.u16()?;
        let column_length = r.u32()?;
        let column_type = ColumnType::try_from_u8(r.u8()?)?;
        let flags = ColumnFlags::from_bits_retain(r.u16()?);
        let decimals = r.u8()?;
        r.skip(2)?;
        Ok(Self {
            schema,
            table,
            org_table,
            name,
            org_name,
            charset,
            column_length,
            column_type,
            flags,
            decimals,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_type_code_maps_back() {
        for b in 0..=255u8 {
            if let Some(t) = ColumnType::from_u8(b) {
                assert_eq!(t as u8, b);
            }
        }
        assert_eq!(ColumnType::from_u8(21), None);
    }

    #[test]
    fn definition_round_trips() {
        let mut c = ColumnDefinition::new("c", ColumnType::String);
        c.schema = "sbtest".into();
        c.table = "sbtest1".into();
        c.flags = ColumnFlags::NOT_NULL;
        c.column_length = 480;
        let mut out = Vec::new();
        c.encode(&mut out);
        assert_eq!(ColumnDefinition::decode(&out), Ok(c));
        assert!(ColumnDefinition::decode(&out[..out.len() - 3]).is_err());
    }
}
