//! Non-strict writes: outside strict mode (an `sql_mode` without `STRICT_TRANS_TABLES` or
//! `STRICT_ALL_TABLES`), and in `INSERT IGNORE` / `UPDATE IGNORE`, MySQL stores a value strict
//! mode refuses for its length or range cut to fit, with a warning: strings are truncated
//! (1265), numbers clipped to the column's range (1264), text that is not a number read up to
//! where it stops being one (1265), or as 0 when nothing of it is (1366), an ENUM non-member
//! as the `''` error value and a SET as the members it names (1265), a YEAR out of range as
//! 0000 (1264) and a BIT value too wide as all ones (1406). The clipped value then passes
//! strict coercion. Dates, times, DECIMAL and the other types keep strict mode's error.

use crate::error::EngineError;
use crate::members::Members;
use crate::types::ColumnType;
use crate::value::Value;

/// A value made to fit, and the warning MySQL gives for it.
#[derive(Debug, Clone, PartialEq)]
pub struct Clipped {
    /// The value to store.
    pub value: Value,
    /// The warning's code (1264, 1265 or 1366).
    pub code: u16,
    /// The warning's message.
    pub message: String,
}

impl ColumnType {
    /// `v` cut to fit this type as non-strict mode stores it; `None` when strict coercion
    /// accepts `v` as it is, or refuses it for a reason non-strict mode does not forgive.
    pub fn clip(&self, v: &Value, column: &str, row: u64) -> Option<Clipped> {
        let err = self.coerce(v.clone(), column).err()?;
        let clipped = |value, code, e: &EngineError| Clipped {
            value,
            code,
            message: e.message(row),
        };
        match (err, self) {
            (e @ EngineError::DataTooLong { .. }, ColumnType::Bit(width)) => {
                let all_ones = u64::MAX >> (64 - u32::from(*width).clamp(1, 64));
                Some(clipped(Value::UInt(all_ones), 1406, &e))
            }
            (e @ EngineError::OutOfRange { .. }, ColumnType::Year) => {
                Some(clipped(Value::UInt(0), 1264, &e))
            }
            (EngineError::DataTooLong { .. }, _) => {
                let Value::Bytes(b) = v else { return None };
                Some(Clipped {
                    value: Value::Bytes(self.truncate(b)?),
                    code: 1265,
                    message: truncated(column, row),
                })
            }
            (e @ EngineError::OutOfRange { .. }, _) => Some(clipped(self.nearest(v)?, 1264, &e)),
            (
                e @ EngineError::IncorrectValue { .. },
                ColumnType::Integer { .. } | ColumnType::Float | ColumnType::Double,
            ) => {
                let Value::Bytes(b) = v else { return None };
                let text = String::from_utf8_lossy(b);
                let prefix = numeric_prefix(text.trim_start());
                if prefix.is_empty() {
                    let zero = self.coerce(Value::Int(0), column).ok()?;
                    return Some(clipped(zero, 1366, &e));
                }
                let read = Value::str(prefix);
                let value = match self.coerce(read.clone(), column) {
                    Ok(x) => x,
                    Err(EngineError::OutOfRange { .. }) => self.nearest(&read)?,
                    Err(_) => return None,
                };
                Some(Clipped {
                    value,
                    code: 1265,
                    message: truncated(column, row),
                })
            }
            (EngineError::Truncated { .. }, ColumnType::Enum(members)) => Some(Clipped {
                value: Value::Enum(0, *members),
                code: 1265,
                message: truncated(column, row),
            }),
            (EngineError::Truncated { .. }, ColumnType::Set(members)) => Some(Clipped {
                value: Value::Set(found_bits(*members, v), *members),
                code: 1265,
                message: truncated(column, row),
            }),
            _ => None,
        }
    }

    /// The longest prefix of `b` that fits a string type (whole characters for text).
    fn truncate(&self, b: &[u8]) -> Option<Vec<u8>> {
        match *self {
            ColumnType::Char(n) | ColumnType::VarChar(n) => {
                let s = std::str::from_utf8(b).ok()?;
                Some(s.chars().take(n as usize).collect::<String>().into_bytes())
            }
            ColumnType::Binary(n)
            | ColumnType::VarBinary(n)
            | ColumnType::Text(n)
            | ColumnType::Blob(n) => Some(b[..b.len().min(n as usize)].to_vec()),
            _ => None,
        }
    }

    /// The end of this numeric type's range nearest to `v`.
    fn nearest(&self, v: &Value) -> Option<Value> {
        let negative = match v {
            Value::Int(i) => *i < 0,
            Value::UInt(_) => false,
            Value::Double(d) => *d < 0.0,
            Value::Decimal(d) => d.to_f64() < 0.0,
            Value::Bytes(b) => std::str::from_utf8(b).ok()?.trim_start().starts_with('-'),
            _ => return None,
        };
        Some(match *self {
            ColumnType::Integer {
                kind,
                unsigned: true,
            } => Value::UInt(if negative { 0 } else { kind.unsigned_max() }),
            ColumnType::Integer { kind, .. } => {
                let (lo, hi) = kind.signed_range();
                Value::Int(if negative { lo } else { hi })
            }
            ColumnType::Float => {
                let m = f64::from(f32::MAX);
                Value::Double(if negative { -m } else { m })
            }
            ColumnType::Double => Value::Double(if negative { f64::MIN } else { f64::MAX }),
            _ => return None,
        })
    }
}

/// MySQL's 1265 text.
fn truncated(column: &str, row: u64) -> String {
    format!("Data truncated for column '{column}' at row {row}")
}

/// The longest prefix of `s` that reads as a number (sign, digits, point, exponent).
fn numeric_prefix(s: &str) -> &str {
    let b = s.as_bytes();
    let mut i = 0;
    if matches!(b.first(), Some(b'+' | b'-')) {
        i += 1;
    }
    let digits = |i: &mut usize| {
        let start = *i;
        while b.get(*i).is_some_and(u8::is_ascii_digit) {
            *i += 1;
        }
        *i > start
    };
    let mut any = digits(&mut i);
    if b.get(i) == Some(&b'.') {
        let mut j = i + 1;
        if digits(&mut j) || any {
            any = true;
            i = j;
        }
    }
    if !any {
        return "";
    }
    if matches!(b.get(i), Some(b'e' | b'E')) {
        let mut j = i + 1;
        if matches!(b.get(j), Some(b'+' | b'-')) {
            j += 1;
        }
        if digits(&mut j) {
            i = j;
        }
    }
    &s[..i]
}

/// The bits non-strict mode keeps of a value for a SET: the members a text names (the others
/// dropped), or the bits of a number that name members.
fn found_bits(members: Members, v: &Value) -> u64 {
    match v {
        Value::Int(i) => *i as u64 & members.all_bits(),
        Value::UInt(u) => u & members.all_bits(),
        Value::Bytes(b) => b
            .split(|&c| c == b',')
            .filter_map(|item| members.position(item))
            .fold(0, |bits, p| bits | 1 << (p - 1)),
        _ => 0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::types::IntKind;

    fn clip(t: ColumnType, v: Value) -> Option<(Value, u16)> {
        t.clip(&v, "c", 1).map(|c| (c.value, c.code))
    }

    #[test]
    fn values_are_cut_to_fit_with_mysqls_warnings() {
        let tiny = ColumnType::Integer {
            kind: IntKind::Tiny,
            unsigned: false,
        };
        let utiny = ColumnType::Integer {
            kind: IntKind::Tiny,
            unsigned: true,
        };
        assert_eq!(clip(tiny, Value::Int(300)), Some((Value::Int(127), 1264)));
        assert_eq!(clip(tiny, Value::Int(-300)), Some((Value::Int(-128), 1264)));
        assert_eq!(clip(utiny, Value::Int(-1)), Some((Value::UInt(0), 1264)));
        assert_eq!(
            clip(tiny, Value::str("12abc")),
            Some((Value::Int(12), 1265))
        );
        assert_eq!(clip(tiny, Value::str("abc")), Some((Value::Int(0), 1366)));
        assert_eq!(
            clip(tiny, Value::str("999x")),
            Some((Value::Int(127), 1265))
        );
        assert_eq!(clip(tiny, Value::Int(5)), None, "fits already");
        assert_eq!(
            clip(ColumnType::VarChar(3), Value::str("añbcd")),
            Some((Value::str("añb"), 1265))
        );
        assert_eq!(
            clip(ColumnType::VarBinary(2), Value::Bytes(vec![0, 255, 7])),
            Some((Value::Bytes(vec![0, 255]), 1265))
        );
        assert_eq!(
            clip(ColumnType::Double, Value::str("1.5e3 apples")),
            Some((Value::Double(1500.0), 1265))
        );
        assert_eq!(clip(ColumnType::Date, Value::str("2020-02-30")), None);
    }

    #[test]
    fn numeric_prefixes_read_as_strtod_does() {
        for (s, p) in [
            ("12abc", "12"),
            ("-1.5e3x", "-1.5e3"),
            (".5", ".5"),
            ("5.", "5."),
            ("1e", "1"),
            ("abc", ""),
            ("-", ""),
        ] {
            assert_eq!(numeric_prefix(s), p, "{s}");
        }
    }

    #[test]
    fn enum_and_set_keep_what_names_members() {
        let m = Members::intern(&["a", "b", "c"]);
        assert_eq!(
            clip(ColumnType::Enum(m), Value::str("x")),
            Some((Value::Enum(0, m), 1265))
        );
        assert_eq!(
            clip(ColumnType::Set(m), Value::str("c,x,A")),
            Some((Value::Set(0b101, m), 1265))
        );
        assert_eq!(
            clip(ColumnType::Set(m), Value::Int(9)),
            Some((Value::Set(1, m), 1265))
        );
        // The error value passes strict coercion once stored.
        assert_eq!(
            ColumnType::Enum(m).coerce(Value::Enum(0, m), "c"),
            Ok(Value::Enum(0, m))
        );
        assert_eq!(clip(ColumnType::Json, Value::str("{")), None);
    }
}
