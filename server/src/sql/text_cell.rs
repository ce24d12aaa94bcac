//! A value's text form as the text protocol sends it (and SELECT ... INTO OUTFILE writes
//! it): by the column's type, precision and display rules.

use protocol::{ColumnDefinition, ColumnType};

use crate::engine::time_value::format_time;
use crate::value::Value;

/// Appends a value's text form (the text protocol's cell) for column `col` to `buf`.
pub fn text_cell(v: &Value, col: &ColumnDefinition, buf: &mut Vec<u8>) {
    use std::io::Write;
    match v {
        Value::Null => {}
        Value::Int(i) => {
            let _ = write!(buf, "{i}");
        }
        Value::UInt(u) => match col.column_type {
            ColumnType::Bit => {
                let (bytes, start) = bit_bytes(*u, col);
                buf.extend_from_slice(&bytes[start..]);
            }
            ColumnType::Year => {
                let _ = write!(buf, "{u:04}");
            }
            _ => {
                let _ = write!(buf, "{u}");
            }
        },
        Value::Time(t, fsp) => {
            let fsp = if col.column_type == ColumnType::Time && col.decimals <= 6 {
                col.decimals
            } else {
                *fsp
            };
            buf.extend_from_slice(format_time(*t, Some(fsp)).as_bytes());
        }
        Value::Bytes(b) => buf.extend_from_slice(b),
        Value::Enum(i, m) => buf.extend_from_slice(m.enum_text(*i).as_bytes()),
        Value::Set(bits, m) => buf.extend_from_slice(m.set_text(*bits).as_bytes()),
        Value::Double(d) => buf.extend_from_slice(crate::sql::format::double(*d).as_bytes()),
        Value::Decimal(d) => {
            let _ = write!(buf, "{d}");
        }
        Value::DateTime(dt) => {
            // By the column's type and declared precision, as MySQL does: DATE has no time,
            // DATETIME(n)/TIMESTAMP(n) always print the time and exactly n fractional digits.
            // A column of another type (an untyped expression) prints what the value holds.
            let midnight = dt.hour == 0 && dt.minute == 0 && dt.second == 0 && dt.micros == 0;
            let fsp = match col.column_type {
                ColumnType::Date | ColumnType::NewDate => None,
                ColumnType::DateTime | ColumnType::Timestamp if col.decimals <= 6 => {
                    Some(col.decimals)
                }
                _ if midnight => None,
                _ => Some(if dt.micros != 0 { 6 } else { 0 }),
            };
            crate::sql::format::write_temporal(buf, dt, fsp);
        }
    }
}

/// The big-endian bytes MySQL sends for a BIT(n) column's value: the last `ceil(n / 8)` of
/// the returned eight.
pub(crate) fn bit_bytes(bits: u64, col: &ColumnDefinition) -> ([u8; 8], usize) {
    let n = col.column_length.div_ceil(8).clamp(1, 8) as usize;
    (bits.to_be_bytes(), 8 - n)
}
