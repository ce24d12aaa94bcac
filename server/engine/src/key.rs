//! Memcomparable keys: for values coerced to a column type, comparing encodings as byte
//! strings gives the SQL order (NULL first), and the encoding of a column prefix of a
//! composite key is a byte prefix of the whole key, so equality-prefix ranges are byte ranges.
//!
//! Per part: a nullable column starts with a tag byte (0x00 NULL, 0x01 value); integers are
//! big-endian at the column's width with the sign bit flipped; doubles flip the sign bit (or
//! every bit when negative); DECIMAL is its unscaled integer, sign-flipped, 8, 16 or 32
//! bytes by precision;
//! byte strings escape 0x00 as `00 FF` and end with `00 01`, and text (CHAR, VARCHAR,
//! TEXT) is stored as its collation weights ([`text_weights`]), so a text key decodes to
//! the weights, not the text as written; dates pack their fields
//! most-significant first (DATE 3 bytes, DATETIME/TIMESTAMP 8); TIME is its microseconds,
//! sign-flipped, 8 bytes; YEAR 2 bytes and BIT 8 bytes, big-endian; ENUM is its index and SET
//! its bitmask, big-endian at MySQL's pack length, so both order as MySQL orders them.

use std::cmp::Ordering;

use crate::types::ColumnType;
use crate::value::{DateTime, Decimal, Value, I256};

/// One column of an index key: its type and whether it can hold NULL.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct KeyColumn {
    /// The column type (values must already be coerced to it).
    pub ty: ColumnType,
    /// NULL allowed: the part carries a tag byte.
    pub nullable: bool,
}

const NULL_TAG: u8 = 0x00;
const VALUE_TAG: u8 = 0x01;

/// Compares a stored key with a search key on the search key's length: a record whose first
/// bytes equal the whole search key compares `Equal` (it lies in the prefix range).
pub(crate) fn cmp_prefix(record: &[u8], search: &[u8]) -> Ordering {
    let n = record.len().min(search.len());
    match record[..n].cmp(&search[..n]) {
        Ordering::Equal if record.len() < search.len() => Ordering::Less,
        o => o,
    }
}

/// Appends the encoding of `v` (coerced to `col.ty`) to `out`.
pub fn encode(col: KeyColumn, v: &Value, out: &mut Vec<u8>) {
    if col.nullable {
        if v.is_null() {
            out.push(NULL_TAG);
            return;
        }
        out.push(VALUE_TAG);
    }
    match col.ty {
        ColumnType::Integer { kind, unsigned } => {
            let w = kind.bytes();
            let n = int_of(v);
            let bits = if unsigned {
                n as u64
            } else {
                (n as u64) ^ (1u64 << (8 * w - 1))
            };
            out.extend_from_slice(&bits.to_be_bytes()[8 - w..]);
        }
        ColumnType::Float | ColumnType::Double => {
            let d = match v {
                Value::Double(d) => *d,
                other => int_of(other) as f64,
            };
            let d = if d == 0.0 { 0.0 } else { d };
            let b = d.to_bits();
            let b = if b >> 63 == 1 { !b } else { b ^ (1 << 63) };
            out.extend_from_slice(&b.to_be_bytes());
        }
        ColumnType::Decimal { precision, .. } => {
            let u = match v {
                Value::Decimal(d) => d.unscaled(),
                other => I256::from(int_of(other)),
            };
            let width = crate::types::decimal_bytes(precision);
            let start = out.len();
            out.extend_from_slice(&u.to_be_bytes()[32 - width..]);
            out[start] ^= 0x80;
        }
        ColumnType::Enum(members) => {
            let w = members.enum_width();
            let n = v.member_number().unwrap_or(0);
            out.extend_from_slice(&n.to_be_bytes()[8 - w..]);
        }
        ColumnType::Set(members) => {
            let w = members.set_width();
            let n = v.member_number().unwrap_or(0);
            out.extend_from_slice(&n.to_be_bytes()[8 - w..]);
        }
        ColumnType::Char(_) | ColumnType::VarChar(_) | ColumnType::Text(_) => {
            let b: &[u8] = match v {
                Value::Bytes(b) => b,
                _ => &[],
            };
            escape_bytes(text_weights(b), out);
        }
        ColumnType::Binary(_)
        | ColumnType::VarBinary(_)
        | ColumnType::Blob(_)
        | ColumnType::Json => {
            let b: &[u8] = match v {
                Value::Bytes(b) => b,
                _ => &[],
            };
            escape_bytes(b.iter().copied(), out);
        }
        ColumnType::Date => {
            let dt = datetime_of(v);
            let p = (u32::from(dt.year) << 9) | (u32::from(dt.month) << 5) | u32::from(dt.day);
            out.extend_from_slice(&p.to_be_bytes()[1..]);
        }
        ColumnType::DateTime { .. } | ColumnType::Timestamp { .. } => {
            out.extend_from_slice(&pack_datetime(&datetime_of(v)).to_be_bytes());
        }
        ColumnType::Time { .. } => {
            let t = if let Value::Time(t, _) = v { *t } else { 0 };
            out.extend_from_slice(&((t as u64) ^ (1 << 63)).to_be_bytes());
        }
        ColumnType::Year => out.extend_from_slice(&(int_of(v) as u16).to_be_bytes()),
        ColumnType::Bit(_) => out.extend_from_slice(&(int_of(v) as u64).to_be_bytes()),
    }
}

/// The collation weights of a text value, the bytes its key holds: the SQL layer's text
/// comparison (ASCII letters without case, trailing spaces ignored as PAD SPACE collations
/// do), so that equal texts have equal keys and key order is comparison order.
pub fn text_weights(b: &[u8]) -> impl Iterator<Item = u8> + '_ {
    let end = b.len() - b.iter().rev().take_while(|c| **c == b' ').count();
    b[..end].iter().map(u8::to_ascii_lowercase)
}

/// Appends a byte string part: 0x00 escaped as `00 FF`, then the terminator `00 01`.
fn escape_bytes(bytes: impl Iterator<Item = u8>, out: &mut Vec<u8>) {
    for c in bytes {
        out.push(c);
        if c == 0 {
            out.push(0xFF);
        }
    }
    out.extend_from_slice(&[0x00, 0x01]);
}

#[cfg(test)]
/// Encodes values (one per column) into a key.
pub(crate) fn encode_key(cols: &[KeyColumn], values: &[Value]) -> Vec<u8> {
    let mut out = Vec::with_capacity(values.len() * 5);
    for (c, v) in cols.iter().zip(values) {
        encode(*c, v, &mut out);
    }
    out
}

/// Decodes one part from the front of `bytes`; returns the value and the bytes it used.
/// `bytes` must come from [`encode`] with the same column.
pub fn decode(col: KeyColumn, bytes: &[u8]) -> (Value, usize) {
    let mut pos = 0;
    if col.nullable {
        pos = 1;
        if bytes[0] == NULL_TAG {
            return (Value::Null, 1);
        }
    }
    let b = &bytes[pos..];
    let be = |n: usize| {
        let mut buf = [0u8; 8];
        buf[8 - n..].copy_from_slice(&b[..n]);
        u64::from_be_bytes(buf)
    };
    let (v, used) = match col.ty {
        ColumnType::Integer { kind, unsigned } => {
            let w = kind.bytes();
            let raw = be(w);
            if unsigned {
                (Value::UInt(raw), w)
            } else {
                let flipped = raw ^ (1u64 << (8 * w - 1));
                let shift = 64 - 8 * w as u32;
                (Value::Int(((flipped << shift) as i64) >> shift), w)
            }
        }
        ColumnType::Float | ColumnType::Double => {
            let raw = be(8);
            let bits = if raw >> 63 == 1 {
                raw ^ (1 << 63)
            } else {
                !raw
            };
            (Value::Double(f64::from_bits(bits)), 8)
        }
        ColumnType::Decimal { precision, scale } => {
            let width = crate::types::decimal_bytes(precision);
            let mut buf = [if b[0] & 0x80 == 0 { 0xFF } else { 0 }; 32];
            buf[32 - width..].copy_from_slice(&b[..width]);
            buf[32 - width] ^= 0x80;
            let u = I256::from_be_bytes(buf);
            (Value::Decimal(Decimal::new(u, scale)), width)
        }
        ColumnType::Date => {
            let p = be(3) as u32;
            let dt = DateTime {
                year: (p >> 9) as u16,
                month: ((p >> 5) & 0xF) as u8,
                day: (p & 0x1F) as u8,
                ..DateTime::default()
            };
            (Value::DateTime(dt), 3)
        }
        ColumnType::DateTime { .. } | ColumnType::Timestamp { .. } => {
            (Value::DateTime(unpack_datetime(be(8))), 8)
        }
        ColumnType::Time { fsp } => (Value::Time((be(8) ^ (1 << 63)) as i64, fsp), 8),
        ColumnType::Year => (Value::UInt(be(2)), 2),
        ColumnType::Bit(_) => (Value::UInt(be(8)), 8),
        ColumnType::Enum(members) => {
            let w = members.enum_width();
            (Value::Enum(be(w) as u16, members), w)
        }
        ColumnType::Set(members) => {
            let w = members.set_width();
            (Value::Set(be(w), members), w)
        }
        _ => {
            let mut s = Vec::new();
            let mut i = 0;
            loop {
                if b[i] == 0 {
                    if b[i + 1] == 0x01 {
                        break;
                    }
                    s.push(0);
                    i += 2;
                } else {
                    s.push(b[i]);
                    i += 1;
                }
            }
            (Value::Bytes(s), i + 2)
        }
    };
    (v, pos + used)
}

/// Decodes a whole key of the given columns.
pub(crate) fn decode_key(cols: &[KeyColumn], mut bytes: &[u8]) -> Vec<Value> {
    let mut out = Vec::with_capacity(cols.len());
    for c in cols {
        let (v, used) = decode(*c, bytes);
        out.push(v);
        bytes = &bytes[used..];
    }
    out
}

/// Length of the encoding of the first `cols.len()` parts of `bytes`.
pub(crate) fn prefix_len(cols: &[KeyColumn], bytes: &[u8]) -> usize {
    let mut pos = 0;
    for c in cols {
        pos += decode(*c, &bytes[pos..]).1;
    }
    pos
}

fn int_of(v: &Value) -> i128 {
    match v {
        Value::Int(i) => i128::from(*i),
        Value::UInt(u) => i128::from(*u),
        Value::Double(d) => *d as i128,
        Value::Decimal(d) => d.unscaled().as_i128(),
        _ => 0,
    }
}

fn datetime_of(v: &Value) -> DateTime {
    match v {
        Value::DateTime(dt) => *dt,
        _ => DateTime::default(),
    }
}

/// Packs year(14) month(4) day(5) hour(5) minute(6) second(6) micros(20) bits, in order.
pub fn pack_datetime(dt: &DateTime) -> u64 {
    let mut p = u64::from(dt.year);
    p = (p << 4) | u64::from(dt.month);
    p = (p << 5) | u64::from(dt.day);
    p = (p << 5) | u64::from(dt.hour);
    p = (p << 6) | u64::from(dt.minute);
    p = (p << 6) | u64::from(dt.second);
    (p << 20) | u64::from(dt.micros)
}

pub(crate) fn unpack_datetime(p: u64) -> DateTime {
    DateTime {
        micros: (p & 0xF_FFFF) as u32,
        second: ((p >> 20) & 0x3F) as u8,
        minute: ((p >> 26) & 0x3F) as u8,
        hour: ((p >> 32) & 0x1F) as u8,
        day: ((p >> 37) & 0x1F) as u8,
        month: ((p >> 42) & 0xF) as u8,
        year: (p >> 46) as u16,
    }
}

#[cfg(test)]
/// The SQL order of two values coerced to one column type (NULL first); the order the key
/// encoding must reproduce.
pub(crate) fn cmp_values(a: &Value, b: &Value) -> Ordering {
    match (a, b) {
        (Value::Null, Value::Null) => Ordering::Equal,
        (Value::Null, _) => Ordering::Less,
        (_, Value::Null) => Ordering::Greater,
        (Value::Int(x), Value::Int(y)) => x.cmp(y),
        (Value::UInt(x), Value::UInt(y)) => x.cmp(y),
        (Value::Double(x), Value::Double(y)) => x.total_cmp(y),
        (Value::Decimal(x), Value::Decimal(y)) => x.cmp_exact(*y),
        (Value::Bytes(x), Value::Bytes(y)) => x.cmp(y),
        (Value::DateTime(x), Value::DateTime(y)) => x.cmp(y),
        (Value::Time(x, _), Value::Time(y, _)) => x.cmp(y),
        (Value::Enum(x, _), Value::Enum(y, _)) => x.cmp(y),
        (Value::Set(x, _), Value::Set(y, _)) => x.cmp(y),
        _ => int_of(a).cmp(&int_of(b)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::time_value::MAX_TIME_MICROS;
    use crate::types::IntKind;
    use proptest::prelude::*;

    fn col(ty: ColumnType, nullable: bool) -> KeyColumn {
        KeyColumn { ty, nullable }
    }

    fn typed_value(ty: ColumnType) -> BoxedStrategy<Value> {
        match ty {
            ColumnType::Integer {
                kind,
                unsigned: false,
            } => {
                let (lo, hi) = kind.signed_range();
                (lo..=hi).prop_map(Value::Int).boxed()
            }
            ColumnType::Integer {
                kind,
                unsigned: true,
            } => (0..=kind.unsigned_max()).prop_map(Value::UInt).boxed(),
            ColumnType::Double => prop_oneof![
                any::<f64>().prop_filter("finite", |d| d.is_finite()),
                Just(0.0),
                Just(-1.0),
                Just(f64::MIN_POSITIVE)
            ]
            .prop_map(|d| Value::Double(if d == 0.0 { 0.0 } else { d }))
            .boxed(),
            ColumnType::Decimal { precision, scale } => (
                any::<bool>(),
                proptest::collection::vec(0u8..10, 1..=usize::from(precision)),
            )
                .prop_map(move |(negative, digits)| {
                    let u = digits
                        .iter()
                        .fold(I256::ZERO, |acc, &d| acc * 10 + I256::from(d));
                    Value::Decimal(Decimal::new(if negative { -u } else { u }, scale))
                })
                .boxed(),
            ColumnType::DateTime { .. } => (
                0u16..=9999,
                1u8..=12,
                1u8..=28,
                0u8..24,
                0u8..60,
                0u8..60,
                0u32..1_000_000,
            )
                .prop_map(|(year, month, day, hour, minute, second, micros)| {
                    Value::DateTime(DateTime {
                        year,
                        month,
                        day,
                        hour,
                        minute,
                        second,
                        micros,
                    })
                })
                .boxed(),
            ColumnType::Date => (0u16..=9999, 1u8..=12, 1u8..=31)
                .prop_map(|(year, month, day)| {
                    Value::DateTime(DateTime {
                        year,
                        month,
                        day,
                        ..DateTime::default()
                    })
                })
                .boxed(),
            ColumnType::Time { .. } => (-MAX_TIME_MICROS..=MAX_TIME_MICROS)
                .prop_map(|t| Value::Time(t, 6))
                .boxed(),
            ColumnType::Year => prop_oneof![Just(0u64), 1901u64..=2155]
                .prop_map(Value::UInt)
                .boxed(),
            ColumnType::Bit(_) => any::<u64>().prop_map(Value::UInt).boxed(),
            ColumnType::Enum(m) => (1..=m.len() as u16)
                .prop_map(move |i| Value::Enum(i, m))
                .boxed(),
            ColumnType::Set(m) => (0..=m.all_bits())
                .prop_map(move |bits| Value::Set(bits, m))
                .boxed(),
            _ => proptest::collection::vec(
                prop_oneof![Just(0u8), Just(1u8), Just(0xFFu8), any::<u8>()],
                0..12,
            )
            .prop_map(Value::Bytes)
            .boxed(),
        }
    }

    fn types() -> Vec<ColumnType> {
        let mut v = Vec::new();
        for kind in [
            IntKind::Tiny,
            IntKind::Small,
            IntKind::Medium,
            IntKind::Int,
            IntKind::Big,
        ] {
            v.push(ColumnType::Integer {
                kind,
                unsigned: false,
            });
            v.push(ColumnType::Integer {
                kind,
                unsigned: true,
            });
        }
        v.extend([
            ColumnType::Double,
            ColumnType::Decimal {
                precision: 10,
                scale: 2,
            },
            ColumnType::Decimal {
                precision: 30,
                scale: 5,
            },
            ColumnType::Decimal {
                precision: 65,
                scale: 30,
            },
            ColumnType::VarBinary(16),
            ColumnType::Date,
            ColumnType::DateTime { fsp: 6 },
            ColumnType::Time { fsp: 6 },
            ColumnType::Year,
            ColumnType::Bit(64),
            ColumnType::Enum(members(3)),
            ColumnType::Enum(members(300)),
            ColumnType::Set(members(20)),
        ]);
        v
    }

    /// Members named so that their text order is the reverse of their declaration order.
    fn members(n: usize) -> crate::members::Members {
        let names: Vec<String> = (0..n).map(|i| format!("m{:04}", n - i)).collect();
        crate::members::Members::intern(&names)
    }

    fn pair_strategy() -> impl Strategy<Value = (ColumnType, bool, Value, Value, Value, Value)> {
        (0..types().len(), any::<bool>()).prop_flat_map(|(i, nullable)| {
            let ty = types()[i];
            let v = move || {
                if nullable {
                    prop_oneof![1 => Just(Value::Null), 6 => typed_value(ty)].boxed()
                } else {
                    typed_value(ty)
                }
            };
            (Just(ty), Just(nullable), v(), v(), v(), v())
        })
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(2000))]
        /// Encoded order of composite (a, b) keys equals the SQL order, and decoding inverts
        /// encoding.
        #[test]
        fn encoded_order_is_value_order((ty, nullable, a1, a2, b1, b2) in pair_strategy()) {
            let c = col(ty, nullable);
            let cols = [c, c];
            let ka = encode_key(&cols, &[a1.clone(), a2.clone()]);
            let kb = encode_key(&cols, &[b1.clone(), b2.clone()]);
            let want = cmp_values(&a1, &b1).then(cmp_values(&a2, &b2));
            prop_assert_eq!(ka.cmp(&kb), want);
            prop_assert_eq!(decode_key(&cols, &ka), vec![a1.clone(), a2]);
            // The first part alone is a prefix of the whole key.
            let p = encode_key(&cols[..1], &[a1]);
            prop_assert!(ka.starts_with(&p));
            prop_assert_eq!(prefix_len(&cols[..1], &ka), p.len());
            prop_assert_eq!(cmp_prefix(&ka, &p), Ordering::Equal);
        }
    }

    #[test]
    fn enum_keys_follow_member_order_not_text() {
        let m = crate::members::Members::intern(&["pending", "claimed", "done"]);
        let c = col(ColumnType::Enum(m), false);
        let enc = |i| encode_key(&[c], &[Value::Enum(i, m)]);
        assert!(enc(1) < enc(2) && enc(2) < enc(3));
        assert_eq!(enc(2).len(), 1);
    }

    #[test]
    fn text_keys_follow_the_text_comparison() {
        for ty in [
            ColumnType::VarChar(10),
            ColumnType::Char(4),
            ColumnType::Text(255),
        ] {
            let c = col(ty, true);
            let enc = |s: &[u8]| encode_key(&[c], &[Value::Bytes(s.to_vec())]);
            assert_eq!(enc(b"Smith"), enc(b"sMITH"), "case is not part of the key");
            assert_eq!(enc(b"ab  "), enc(b"ab"), "trailing spaces pad");
            assert!(
                enc(b"a") < enc(b"B") && enc(b"B") < enc(b"c"),
                "letters in text order"
            );
            assert!(enc(b"ab") < enc(b"ab c"));
            assert_eq!(
                decode_key(&[c], &enc(b"AbC ")),
                vec![Value::Bytes(b"abc".to_vec())]
            );
        }
        let bin = col(ColumnType::VarBinary(10), false);
        let enc = |s: &[u8]| encode_key(&[bin], &[Value::Bytes(s.to_vec())]);
        assert_ne!(enc(b"A"), enc(b"a"), "binary strings keep their bytes");
    }

    #[test]
    fn byte_string_prefixes_order_correctly() {
        let c = col(ColumnType::VarChar(10), false);
        let enc = |s: &[u8]| encode_key(&[c], &[Value::Bytes(s.to_vec())]);
        assert!(enc(b"a") < enc(b"a\0"));
        assert!(enc(b"a\0") < enc(b"a\x01"));
        assert!(enc(b"a") < enc(b"ab"));
        assert!(enc(b"") < enc(b"\0"));
    }
}
