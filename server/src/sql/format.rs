//! How values print in the text protocol and SHOW output, as MySQL prints them.

use std::io::Write;

use crate::value::{DateTime, Value};

/// Appends a temporal value as MySQL prints a column of its type: `None` for a DATE (no
/// time), `Some(n)` for a DATETIME(n)/TIMESTAMP(n) (the time and exactly n fractional
/// digits).
pub fn write_temporal(buf: &mut Vec<u8>, dt: &DateTime, fsp: Option<u8>) {
    let _ = write!(buf, "{:04}-{:02}-{:02}", dt.year, dt.month, dt.day);
    let Some(fsp) = fsp else { return };
    let _ = write!(buf, " {:02}:{:02}:{:02}", dt.hour, dt.minute, dt.second);
    if fsp > 0 {
        let digits = format!("{:06}", dt.micros);
        buf.push(b'.');
        buf.extend_from_slice(&digits.as_bytes()[..usize::from(fsp.min(6))]);
    }
}

/// Formats a double as MySQL does: integral values without a fraction, otherwise the
/// shortest representation that round-trips, with an exponent for very large or small values.
pub fn double(d: f64) -> String {
    if d.is_nan() || d.is_infinite() {
        return "NULL".into();
    }
    if d == d.trunc() && d.abs() < 1e15 {
        return format!("{}", d as i64);
    }
    let abs = d.abs();
    if !(1e-5..1e15).contains(&abs) {
        let s = format!("{d:e}");
        // Rust prints 1e20 as "1e20" and 1.5e-7 as "1.5e-7"; MySQL prints "1e20" and "1.5e-7".
        return s;
    }
    format!("{d}")
}

/// The text form of a non-NULL value.
pub fn text(v: &Value) -> String {
    match v {
        Value::Null => "NULL".into(),
        Value::Int(i) => i.to_string(),
        Value::UInt(u) => u.to_string(),
        Value::Double(d) => double(*d),
        Value::Decimal(d) => d.to_string(),
        Value::Bytes(b) => String::from_utf8_lossy(b).into_owned(),
        Value::DateTime(dt) => dt.to_string(),
        Value::Time(t, fsp) => crate::engine::time_value::format_time(*t, Some(*fsp)),
        Value::Enum(..) | Value::Set(..) => v.member_text().unwrap_or_default(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn doubles_print_like_mysql() {
        assert_eq!(double(2.0), "2");
        assert_eq!(double(0.5), "0.5");
        assert_eq!(double(-1.25), "-1.25");
        assert_eq!(double(1e20), "1e20");
    }

    #[test]
    fn temporals_print_by_type_and_precision() {
        let dt = DateTime {
            year: 2024,
            month: 1,
            day: 2,
            micros: 500_000,
            ..DateTime::default()
        };
        let text = |fsp| {
            let mut b = Vec::new();
            write_temporal(&mut b, &dt, fsp);
            String::from_utf8(b).unwrap()
        };
        assert_eq!(text(None), "2024-01-02");
        assert_eq!(text(Some(0)), "2024-01-02 00:00:00");
        assert_eq!(text(Some(3)), "2024-01-02 00:00:00.500");
        assert_eq!(text(Some(6)), "2024-01-02 00:00:00.500000");
    }
}
