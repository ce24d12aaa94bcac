//! Compact rows: one byte buffer per row, a NULL bitmap over the nullable columns followed by
//! each non-NULL value at its type's fixed width (integers little-endian at the column width,
//! FLOAT 4 bytes, DECIMAL 8 or 16, dates packed, ENUM/SET at their pack length) or
//! LEB128-length-prefixed (strings, JSON).
//! Encoding then decoding returns the coerced values unchanged.

use crate::key::{pack_datetime, unpack_datetime};
use crate::row_buf::RowBuf;
use crate::types::ColumnType;
use crate::value::{DateTime, Decimal, Value, I256};

/// Encodes and decodes rows of one table layout.
#[derive(Debug, Clone)]
pub struct RowCodec {
    types: Vec<ColumnType>,
    /// For each column, its bit in the NULL bitmap (None for NOT NULL columns).
    null_bit: Vec<Option<usize>>,
    null_bytes: usize,
}

impl RowCodec {
    /// A codec for columns of these types and nullability.
    pub fn new(columns: impl IntoIterator<Item = (ColumnType, bool)>) -> RowCodec {
        let mut types = Vec::new();
        let mut null_bit = Vec::new();
        let mut n = 0;
        for (ty, nullable) in columns {
            types.push(ty);
            null_bit.push(nullable.then(|| {
                n += 1;
                n - 1
            }));
        }
        RowCodec {
            types,
            null_bit,
            null_bytes: n.div_ceil(8),
        }
    }

    /// Number of columns.
    pub fn len(&self) -> usize {
        self.types.len()
    }

    /// True when the layout has no columns.
    pub fn is_empty(&self) -> bool {
        self.types.is_empty()
    }

    /// Encodes a row of coerced values (one per column). A NULL in a NOT NULL column is
    /// stored as the type's zero value; callers check nullability first. The buffer is
    /// sized up front (a string's length prefix takes at most 10 bytes), so a large row is
    /// written once and copied once into its shared allocation.
    pub fn encode(&self, values: &[Value]) -> RowBuf {
        let size: usize = values
            .iter()
            .map(|v| match v {
                Value::Bytes(b) => b.len() + 10,
                _ => 16,
            })
            .sum();
        let mut out = Vec::with_capacity(self.null_bytes + size);
        out.resize(self.null_bytes, 0);
        for (i, v) in values.iter().enumerate() {
            if v.is_null() {
                if let Some(bit) = self.null_bit[i] {
                    out[bit / 8] |= 1 << (bit % 8);
                    continue;
                }
            }
            put(self.types[i], v, &mut out);
        }
        RowBuf::new(&out)
    }

    /// Decodes every column.
    pub fn decode(&self, bytes: &[u8]) -> Vec<Value> {
        let mut pos = self.null_bytes;
        (0..self.types.len())
            .map(|i| {
                if self.is_null(bytes, i) {
                    return Value::Null;
                }
                let (v, used) = get(self.types[i], &bytes[pos..]);
                pos += used;
                v
            })
            .collect()
    }

    /// Decodes the columns listed in `which` (in that order), walking the row once and
    /// moving each decoded value into its place (a column listed twice is cloned).
    pub(crate) fn decode_columns(&self, bytes: &[u8], which: &[usize]) -> Vec<Value> {
        let mut out = vec![Value::Null; which.len()];
        let mut pos = self.null_bytes;
        let last = which.iter().copied().max().map_or(0, |m| m + 1);
        for i in 0..last.min(self.types.len()) {
            if self.is_null(bytes, i) {
                continue;
            }
            let Some(first) = which.iter().position(|&w| w == i) else {
                pos += skip(self.types[i], &bytes[pos..]);
                continue;
            };
            let (v, used) = get(self.types[i], &bytes[pos..]);
            pos += used;
            for j in first + 1..which.len() {
                if which[j] == i {
                    out[j] = v.clone();
                }
            }
            out[first] = v;
        }
        out
    }

    fn is_null(&self, bytes: &[u8], i: usize) -> bool {
        self.null_bit[i].is_some_and(|bit| bytes[bit / 8] & (1 << (bit % 8)) != 0)
    }
}

fn int_of(v: &Value) -> i128 {
    match v {
        Value::Int(i) => i128::from(*i),
        Value::UInt(u) => i128::from(*u),
        Value::Decimal(d) => d.unscaled().as_i128(),
        Value::Double(d) => *d as i128,
        _ => 0,
    }
}

fn put(ty: ColumnType, v: &Value, out: &mut Vec<u8>) {
    match ty {
        ColumnType::Integer { kind, .. } => {
            out.extend_from_slice(&(int_of(v) as u64).to_le_bytes()[..kind.bytes()]);
        }
        ColumnType::Float => {
            let d = if let Value::Double(d) = v {
                *d
            } else {
                int_of(v) as f64
            };
            out.extend_from_slice(&(d as f32).to_le_bytes());
        }
        ColumnType::Double => {
            let d = if let Value::Double(d) = v {
                *d
            } else {
                int_of(v) as f64
            };
            out.extend_from_slice(&d.to_le_bytes());
        }
        ColumnType::Decimal { precision, .. } => {
            let u = match v {
                Value::Decimal(d) => d.unscaled(),
                other => I256::from(int_of(other)),
            };
            let width = crate::types::decimal_bytes(precision);
            out.extend_from_slice(&u.to_le_bytes()[..width]);
        }
        ColumnType::Date => {
            let dt = if let Value::DateTime(dt) = v {
                *dt
            } else {
                DateTime::default()
            };
            let p = (u32::from(dt.year) << 9) | (u32::from(dt.month) << 5) | u32::from(dt.day);
            out.extend_from_slice(&p.to_le_bytes()[..3]);
        }
        ColumnType::DateTime { .. } | ColumnType::Timestamp { .. } => {
            let dt = if let Value::DateTime(dt) = v {
                *dt
            } else {
                DateTime::default()
            };
            out.extend_from_slice(&pack_datetime(&dt).to_le_bytes());
        }
        ColumnType::Time { .. } => {
            let t = if let Value::Time(t, _) = v { *t } else { 0 };
            out.extend_from_slice(&t.to_le_bytes());
        }
        ColumnType::Year => out.extend_from_slice(&(int_of(v) as u16).to_le_bytes()),
        ColumnType::Bit(_) => out.extend_from_slice(&(int_of(v) as u64).to_le_bytes()),
        ColumnType::Enum(members) => {
            let n = v.member_number().unwrap_or(0);
            out.extend_from_slice(&n.to_le_bytes()[..members.enum_width()]);
        }
        ColumnType::Set(members) => {
            let n = v.member_number().unwrap_or(0);
            out.extend_from_slice(&n.to_le_bytes()[..members.set_width()]);
        }
        _ => {
            let b: &[u8] = if let Value::Bytes(b) = v { b } else { &[] };
            let mut n = b.len();
            loop {
                let byte = (n & 0x7F) as u8;
                n >>= 7;
                if n == 0 {
                    out.push(byte);
                    break;
                }
                out.push(byte | 0x80);
            }
            out.extend_from_slice(b);
        }
    }
}

/// The `n`-byte little-endian integer at the start of `b`; the widths columns use are read
/// as one load each instead of a variable-length copy.
fn le(b: &[u8], n: usize) -> u64 {
    fn fixed<const N: usize>(b: &[u8]) -> [u8; N] {
        b[..N].try_into().expect("N bytes")
    }
    match n {
        1 => u64::from(b[0]),
        2 => u64::from(u16::from_le_bytes(fixed(b))),
        4 => u64::from(u32::from_le_bytes(fixed(b))),
        8 => u64::from_le_bytes(fixed(b)),
        _ => {
            let mut buf = [0u8; 8];
            buf[..n].copy_from_slice(&b[..n]);
            u64::from_le_bytes(buf)
        }
    }
}

fn varint(b: &[u8]) -> (usize, usize) {
    let mut n = 0usize;
    let mut i = 0;
    loop {
        n |= usize::from(b[i] & 0x7F) << (7 * i);
        i += 1;
        if b[i - 1] & 0x80 == 0 {
            return (n, i);
        }
    }
}

fn skip(ty: ColumnType, b: &[u8]) -> usize {
    match ty {
        ColumnType::Integer { kind, .. } => kind.bytes(),
        ColumnType::Float => 4,
        ColumnType::Double
        | ColumnType::DateTime { .. }
        | ColumnType::Timestamp { .. }
        | ColumnType::Time { .. }
        | ColumnType::Bit(_) => 8,
        ColumnType::Year => 2,
        ColumnType::Decimal { precision, .. } => crate::types::decimal_bytes(precision),
        ColumnType::Date => 3,
        ColumnType::Enum(members) => members.enum_width(),
        ColumnType::Set(members) => members.set_width(),
        _ => {
            let (n, used) = varint(b);
            n + used
        }
    }
}

fn get(ty: ColumnType, b: &[u8]) -> (Value, usize) {
    let used = skip(ty, b);
    let v = match ty {
        ColumnType::Integer { kind, unsigned } => {
            let w = kind.bytes();
            let raw = le(b, w);
            if unsigned {
                Value::UInt(raw)
            } else {
                let shift = 64 - 8 * w as u32;
                Value::Int(((raw << shift) as i64) >> shift)
            }
        }
        ColumnType::Float => Value::Double(f64::from(f32::from_bits(le(b, 4) as u32))),
        ColumnType::Double => Value::Double(f64::from_bits(le(b, 8))),
        ColumnType::Decimal { precision, scale } => {
            let width = crate::types::decimal_bytes(precision);
            let mut buf = [if b[width - 1] & 0x80 == 0 { 0 } else { 0xFF }; 32];
            buf[..width].copy_from_slice(&b[..width]);
            Value::Decimal(Decimal::new(I256::from_le_bytes(buf), scale))
        }
        ColumnType::Date => {
            let p = le(b, 3) as u32;
            Value::DateTime(DateTime {
                year: (p >> 9) as u16,
                month: ((p >> 5) & 0xF) as u8,
                day: (p & 0x1F) as u8,
                ..DateTime::default()
            })
        }
        ColumnType::DateTime { .. } | ColumnType::Timestamp { .. } => {
            Value::DateTime(unpack_datetime(le(b, 8)))
        }
        ColumnType::Time { fsp } => Value::Time(le(b, 8) as i64, fsp),
        ColumnType::Year => Value::UInt(le(b, 2)),
        ColumnType::Bit(_) => Value::UInt(le(b, 8)),
        ColumnType::Enum(members) => Value::Enum(le(b, members.enum_width()) as u16, members),
        ColumnType::Set(members) => Value::Set(le(b, members.set_width()), members),
        _ => {
            let (n, hdr) = varint(b);
            Value::Bytes(b[hdr..hdr + n].to_vec())
        }
    };
    (v, used)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::types::IntKind;

    #[test]
    fn round_trip_every_type() {
        let members = crate::members::Members::intern(&["a", "b", "c"]);
        let cols = [
            (
                ColumnType::Integer {
                    kind: IntKind::Medium,
                    unsigned: false,
                },
                true,
            ),
            (
                ColumnType::Integer {
                    kind: IntKind::Big,
                    unsigned: true,
                },
                false,
            ),
            (ColumnType::Float, false),
            (ColumnType::Double, true),
            (
                ColumnType::Decimal {
                    precision: 30,
                    scale: 4,
                },
                false,
            ),
            (
                ColumnType::Decimal {
                    precision: 9,
                    scale: 2,
                },
                false,
            ),
            (ColumnType::VarChar(300), true),
            (ColumnType::Date, false),
            (ColumnType::DateTime { fsp: 6 }, false),
            (ColumnType::Enum(members), true),
            (ColumnType::Set(members), false),
            (ColumnType::Json, false),
            (
                ColumnType::Decimal {
                    precision: 65,
                    scale: 30,
                },
                false,
            ),
            (ColumnType::Time { fsp: 3 }, true),
            (ColumnType::Year, false),
            (ColumnType::Bit(64), false),
        ];
        let codec = RowCodec::new(cols);
        let dt = DateTime {
            year: 2024,
            month: 5,
            day: 6,
            hour: 7,
            minute: 8,
            second: 9,
            micros: 10,
        };
        let row = vec![
            Value::Int(-8_388_608),
            Value::UInt(u64::MAX),
            Value::Double(1.5),
            Value::Null,
            Value::Decimal(Decimal::new(-(I256::new(10).pow(29)), 4)),
            Value::Decimal(Decimal::new(12345, 2)),
            Value::Bytes(vec![7; 200]),
            Value::DateTime(DateTime {
                year: 2024,
                month: 5,
                day: 6,
                ..DateTime::default()
            }),
            Value::DateTime(dt),
            Value::Enum(3, members),
            Value::Set(0b101, members),
            Value::str(r#"{"a": [1, 2]}"#),
            Value::Decimal(Decimal::new(-(I256::new(10).pow(65) - 1), 30)),
            Value::Time(-3_020_399_000_000, 3),
            Value::UInt(2155),
            Value::UInt(u64::MAX),
        ];
        let enc = codec.encode(&row);
        assert_eq!(codec.decode(&enc), row);
        assert_eq!(
            codec.decode_columns(&enc, &[8, 0, 3]),
            vec![row[8].clone(), row[0].clone(), Value::Null]
        );
        let mut nulls = row.clone();
        nulls[0] = Value::Null;
        nulls[6] = Value::Null;
        assert_eq!(codec.decode(&codec.encode(&nulls)), nulls);
    }
}
