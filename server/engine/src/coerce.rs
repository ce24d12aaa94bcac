//! Strict-mode coercion: a value that leaves [`ColumnType::coerce`] is in the canonical form
//! the key and row encodings expect (signed integer columns hold `Int`, unsigned `UInt`,
//! DECIMAL exactly the column's scale, CHAR without trailing spaces, BINARY padded, dates
//! validated and rounded to the column's fractional seconds, ENUM/SET as their index or
//! bitmask, JSON in MySQL's printed form); anything else is the error MySQL's strict mode
//! raises.

use crate::error::EngineError;
use crate::json;
use crate::members::Members;
use crate::time_value::{self, MAX_TIME_MICROS};
use crate::types::ColumnType;
use crate::value::{DateTime, Decimal, Value, I256};

impl ColumnType {
    /// Converts `v` to this type in strict mode; NULL passes through (nullability is the
    /// column's business).
    pub fn coerce(&self, v: Value, column: &str) -> Result<Value, EngineError> {
        if v.is_null() {
            return Ok(v);
        }
        let oor = || EngineError::OutOfRange {
            column: column.to_string(),
        };
        match *self {
            ColumnType::Integer { kind, unsigned } => {
                let n = to_i128(&v, column)?;
                if unsigned {
                    if n < 0 || n > i128::from(kind.unsigned_max()) {
                        return Err(oor());
                    }
                    Ok(Value::UInt(n as u64))
                } else {
                    let (lo, hi) = kind.signed_range();
                    if n < i128::from(lo) || n > i128::from(hi) {
                        return Err(oor());
                    }
                    Ok(Value::Int(n as i64))
                }
            }
            ColumnType::Float => {
                let d = to_f64(&v, column)?;
                if !d.is_finite() || d.abs() > f64::from(f32::MAX) {
                    return Err(oor());
                }
                Ok(Value::Double(f64::from(d as f32)))
            }
            ColumnType::Double => {
                let d = to_f64(&v, column)?;
                if !d.is_finite() {
                    return Err(oor());
                }
                Ok(Value::Double(if d == 0.0 { 0.0 } else { d }))
            }
            ColumnType::Decimal { precision, scale } => {
                let d = to_decimal(&v, scale, column)?.ok_or_else(oor)?;
                if d.unscaled().unsigned_abs() >= ethnum::U256::new(10).pow(u32::from(precision)) {
                    return Err(oor());
                }
                Ok(Value::Decimal(d))
            }
            ColumnType::Char(n) => {
                let mut b = to_bytes(v);
                while b.last() == Some(&b' ') {
                    b.pop();
                }
                check_chars(b, n, column)
            }
            ColumnType::VarChar(n) => check_chars(to_bytes(v), n, column),
            ColumnType::Text(n) | ColumnType::Blob(n) | ColumnType::VarBinary(n) => {
                let b = to_bytes(v);
                if b.len() as u64 > u64::from(n) {
                    return Err(EngineError::DataTooLong {
                        column: column.to_string(),
                    });
                }
                Ok(Value::Bytes(b))
            }
            ColumnType::Binary(n) => {
                let mut b = to_bytes(v);
                if b.len() as u64 > u64::from(n) {
                    return Err(EngineError::DataTooLong {
                        column: column.to_string(),
                    });
                }
                b.resize(n as usize, 0);
                Ok(Value::Bytes(b))
            }
            ColumnType::Date => {
                let mut dt = to_datetime(&v, "date", column)?;
                dt.hour = 0;
                dt.minute = 0;
                dt.second = 0;
                dt.micros = 0;
                Ok(Value::DateTime(dt))
            }
            ColumnType::DateTime { fsp } => {
                let dt = round_fsp(to_datetime(&v, "datetime", column)?, fsp);
                Ok(Value::DateTime(dt))
            }
            ColumnType::Timestamp { fsp } => {
                let dt = round_fsp(to_datetime(&v, "timestamp", column)?, fsp);
                let lo = DateTime {
                    year: 1970,
                    month: 1,
                    day: 1,
                    second: 1,
                    ..DateTime::default()
                };
                let hi = DateTime {
                    year: 2038,
                    month: 1,
                    day: 19,
                    hour: 3,
                    minute: 14,
                    second: 7,
                    micros: 999_999,
                };
                if dt < lo || dt > hi {
                    return Err(EngineError::IncorrectDatetime {
                        kind: "timestamp",
                        value: dt.to_string(),
                        column: column.to_string(),
                    });
                }
                Ok(Value::DateTime(dt))
            }
            ColumnType::Time { fsp } => coerce_time(&v, fsp, column),
            ColumnType::Year => coerce_year(&v, column),
            ColumnType::Bit(width) => coerce_bit(&v, width, column),
            ColumnType::Enum(members) => to_enum(v, members, column),
            ColumnType::Set(members) => to_set(v, members, column),
            ColumnType::Json => to_json(v, column),
        }
    }
}

/// TIME: any literal form or number MySQL reads as a time, rounded to `fsp`; a malformed or
/// out-of-range value is 1292 in strict mode.
fn coerce_time(v: &Value, fsp: u8, column: &str) -> Result<Value, EngineError> {
    let micros = match v {
        Value::Time(t, _) => Some(*t),
        Value::Bytes(b) => std::str::from_utf8(b).ok().and_then(time_value::parse_time),
        Value::DateTime(dt) => Some(
            ((i64::from(dt.hour) * 60 + i64::from(dt.minute)) * 60 + i64::from(dt.second))
                * 1_000_000
                + i64::from(dt.micros),
        ),
        _ => to_decimal(v, 6, column).ok().flatten().and_then(|d| {
            let abs = u128::try_from(d.unscaled().unsigned_abs()).ok()?;
            let t = time_value::time_from_digits(abs / 1_000_000, (abs % 1_000_000) as i64)?;
            Some(if d.unscaled() < 0 { -t } else { t })
        }),
    };
    match micros.map(|t| time_value::round_time(t, fsp)) {
        Some(t) if t.abs() <= MAX_TIME_MICROS => Ok(Value::Time(t, fsp)),
        _ => Err(EngineError::IncorrectDatetime {
            kind: "time",
            value: text_of(v),
            column: column.to_string(),
        }),
    }
}

/// YEAR: 1901..=2155 and 0; one- and two-digit values name 1970..=2069 (a string of zeros
/// shorter than four digits is 2000, the number 0 and `'0000'` are 0); others are 1264.
fn coerce_year(v: &Value, column: &str) -> Result<Value, EngineError> {
    let (n, zero_is_year_0) = match v {
        Value::DateTime(dt) => (i128::from(dt.year), true),
        Value::Bytes(_) => (to_i128(v, column)?, text_of(v).trim().len() == 4),
        _ => (to_i128(v, column)?, true),
    };
    if n < 0 || (100..=1900).contains(&n) || n > 2155 {
        return Err(EngineError::OutOfRange {
            column: column.to_string(),
        });
    }
    let year = match n {
        0 if zero_is_year_0 => 0,
        0..=69 => n + 2000,
        70..=99 => n + 1900,
        _ => n,
    };
    Ok(Value::UInt(year as u64))
}

/// BIT(width): a string's bytes or a number's bits, big-endian; more than `width` significant
/// bits is 1406.
fn coerce_bit(v: &Value, width: u8, column: &str) -> Result<Value, EngineError> {
    let too_long = || EngineError::DataTooLong {
        column: column.to_string(),
    };
    let bits = match v {
        Value::Bytes(b) => {
            let significant = &b[b.iter().take_while(|&&c| c == 0).count()..];
            if significant.len() > 8 {
                return Err(too_long());
            }
            significant
                .iter()
                .fold(0u64, |acc, &c| (acc << 8) | u64::from(c))
        }
        Value::UInt(u) => *u,
        _ => to_i128(v, column)? as u64,
    };
    if width < 64 && bits >> width != 0 {
        return Err(too_long());
    }
    Ok(Value::UInt(bits))
}

/// An ENUM value from a member's text (ASCII case and trailing spaces ignored) or its 1-based
/// index, given as a number or a numeric string, as MySQL's `Field_enum` takes it.
fn to_enum(v: Value, members: Members, column: &str) -> Result<Value, EngineError> {
    let index = match &v {
        // Already this column's value (the '' error value too, once stored).
        Value::Enum(_, m) if *m == members => return Ok(v),
        Value::Bytes(b) => members.position(b).or_else(|| numeric_text(b)),
        Value::Int(_) | Value::UInt(_) | Value::Double(_) | Value::Decimal(_) => {
            u16::try_from(to_i128(&v, column)?).ok()
        }
        other => members.position(&to_bytes(other.clone())),
    };
    match index {
        Some(i) if i >= 1 && usize::from(i) <= members.len() => Ok(Value::Enum(i, members)),
        _ => Err(EngineError::Truncated {
            column: column.to_string(),
        }),
    }
}

/// A SET value from a comma-separated member list or its bitmask, given as a number or a
/// numeric string, as MySQL's `Field_set` takes it.
fn to_set(v: Value, members: Members, column: &str) -> Result<Value, EngineError> {
    let bits = match &v {
        Value::Set(_, m) if *m == members => return Ok(v),
        Value::Bytes(b) => members
            .set_bits(b)
            .or_else(|| std::str::from_utf8(b).ok()?.trim().parse().ok()),
        Value::Int(_) | Value::UInt(_) | Value::Double(_) | Value::Decimal(_) => {
            u64::try_from(to_i128(&v, column)?).ok()
        }
        other => members.set_bits(&to_bytes(other.clone())),
    };
    match bits {
        Some(bits) if bits & !members.all_bits() == 0 => Ok(Value::Set(bits, members)),
        _ => Err(EngineError::Truncated {
            column: column.to_string(),
        }),
    }
}

/// A 1-based index written as digits (MySQL reads an ENUM string that names no member so).
fn numeric_text(b: &[u8]) -> Option<u16> {
    std::str::from_utf8(b).ok()?.trim().parse().ok()
}

/// A JSON text validated and printed as MySQL prints it; a number is the JSON number, a date
/// the JSON string of its text.
fn to_json(v: Value, column: &str) -> Result<Value, EngineError> {
    let text = match v {
        Value::Bytes(b) => b,
        Value::DateTime(dt) => format!("\"{dt}\"").into_bytes(),
        other => to_bytes(other),
    };
    json::normalize(&text)
        .map(Value::from_string)
        .map_err(|e| EngineError::InvalidJson {
            reason: e.reason,
            position: e.position,
            column: column.to_string(),
        })
}

fn check_chars(mut b: Vec<u8>, max: u32, column: &str) -> Result<Value, EngineError> {
    let count = |b: &[u8]| {
        std::str::from_utf8(b)
            .map(|s| s.chars().count())
            .unwrap_or(b.len())
    };
    // A value holds no more characters than bytes, so a short one needs no count.
    if b.len() as u64 > u64::from(max) && count(&b) as u64 > u64::from(max) {
        // Excess trailing spaces are cut with a note in MySQL, not an error.
        while b.last() == Some(&b' ') && count(&b) as u64 > u64::from(max) {
            b.pop();
        }
        if count(&b) as u64 > u64::from(max) {
            return Err(EngineError::DataTooLong {
                column: column.to_string(),
            });
        }
    }
    Ok(Value::Bytes(b))
}

fn text_of(v: &Value) -> String {
    match v {
        Value::Bytes(b) => String::from_utf8_lossy(b).into_owned(),
        other => String::from_utf8_lossy(&to_bytes(other.clone())).into_owned(),
    }
}

/// The text form of a non-string value, as MySQL converts numbers and dates to strings.
fn to_bytes(v: Value) -> Vec<u8> {
    match v {
        Value::Null => Vec::new(),
        Value::Int(i) => i.to_string().into_bytes(),
        Value::UInt(u) => u.to_string().into_bytes(),
        Value::Double(d) => d.to_string().into_bytes(),
        Value::Decimal(d) => d.to_string().into_bytes(),
        Value::Bytes(b) => b,
        Value::DateTime(dt) => dt.to_string().into_bytes(),
        Value::Time(t, fsp) => time_value::format_time(t, Some(fsp)).into_bytes(),
        Value::Enum(..) | Value::Set(..) => v.member_text().unwrap_or_default().into_bytes(),
    }
}

fn datetime_number(dt: &DateTime) -> i128 {
    let date = i128::from(dt.year) * 10_000 + i128::from(dt.month) * 100 + i128::from(dt.day);
    let time = i128::from(dt.hour) * 10_000 + i128::from(dt.minute) * 100 + i128::from(dt.second);
    if time == 0 {
        date
    } else {
        date * 1_000_000 + time
    }
}

fn to_i128(v: &Value, column: &str) -> Result<i128, EngineError> {
    let incorrect = || EngineError::IncorrectValue {
        kind: "integer",
        value: text_of(v),
        column: column.to_string(),
    };
    match v {
        Value::Int(i) => Ok(i128::from(*i)),
        Value::UInt(u) => Ok(i128::from(*u)),
        Value::Double(d) => round_f64(*d).ok_or(EngineError::OutOfRange {
            column: column.into(),
        }),
        Value::Decimal(d) => {
            i128::try_from(rescale(*d, 0).unscaled()).map_err(|_| EngineError::OutOfRange {
                column: column.into(),
            })
        }
        Value::Bytes(b) => {
            let s = std::str::from_utf8(b).map_err(|_| incorrect())?.trim();
            if let Ok(i) = s.parse::<i128>() {
                return Ok(i);
            }
            let d: f64 = s.parse().map_err(|_| incorrect())?;
            round_f64(d).ok_or(EngineError::OutOfRange {
                column: column.into(),
            })
        }
        Value::DateTime(dt) => Ok(datetime_number(dt)),
        Value::Time(t, _) => Ok(rescale(time_value::time_number(*t), 0).unscaled().as_i128()),
        Value::Enum(..) | Value::Set(..) => Ok(i128::from(v.member_number().unwrap_or(0))),
        Value::Null => Err(incorrect()),
    }
}

fn round_f64(d: f64) -> Option<i128> {
    let r = d.round();
    (r.is_finite() && r.abs() < 1e38).then_some(r as i128)
}

fn to_f64(v: &Value, column: &str) -> Result<f64, EngineError> {
    match v {
        Value::Int(i) => Ok(*i as f64),
        Value::UInt(u) => Ok(*u as f64),
        Value::Double(d) => Ok(*d),
        Value::Decimal(d) => Ok(d.to_f64()),
        Value::Bytes(b) => std::str::from_utf8(b)
            .ok()
            .and_then(|s| s.trim().parse::<f64>().ok())
            .ok_or_else(|| EngineError::IncorrectValue {
                kind: "double",
                value: text_of(v),
                column: column.to_string(),
            }),
        Value::DateTime(dt) => Ok(datetime_number(dt) as f64),
        Value::Time(t, _) => Ok(time_value::time_number(*t).to_f64()),
        Value::Enum(..) | Value::Set(..) => Ok(v.member_number().unwrap_or(0) as f64),
        Value::Null => Ok(0.0),
    }
}

/// `d` at exactly `scale` digits, rounding half away from zero when digits are dropped.
pub fn rescale(d: Decimal, scale: u8) -> Decimal {
    let ten = I256::new(10);
    let unscaled = d.unscaled();
    if d.scale == scale {
        return d;
    }
    if d.scale < scale {
        let f = ten.pow(u32::from(scale - d.scale));
        return Decimal::new(unscaled.saturating_mul(f), scale);
    }
    let f = ten.pow(u32::from(d.scale - scale));
    let (q, r) = (unscaled / f, unscaled % f);
    let q = if r.abs() * 2 >= f {
        q + unscaled.signum()
    } else {
        q
    };
    Decimal::new(q, scale)
}

/// Parses `[-+]digits[.digits][e[-+]digits]` into an exact decimal (None if it is not one).
pub fn parse_decimal(s: &str) -> Option<Decimal> {
    let s = s.trim();
    let (mantissa, exp) = match s.find(['e', 'E']) {
        Some(i) => (&s[..i], s[i + 1..].parse::<i32>().ok()?),
        None => (s, 0),
    };
    let (neg, digits) = match mantissa.as_bytes().first()? {
        b'-' => (true, &mantissa[1..]),
        b'+' => (false, &mantissa[1..]),
        _ => (false, mantissa),
    };
    let (int_part, frac_part) = digits.split_once('.').unwrap_or((digits, ""));
    if int_part.is_empty() && frac_part.is_empty() {
        return None;
    }
    let mut unscaled = I256::ZERO;
    for c in int_part.bytes().chain(frac_part.bytes()) {
        if !c.is_ascii_digit() {
            return None;
        }
        unscaled = unscaled
            .checked_mul(I256::new(10))?
            .checked_add(I256::from(c - b'0'))?;
    }
    let mut scale = frac_part.len() as i32 - exp;
    while scale < 0 {
        unscaled = unscaled.checked_mul(I256::new(10))?;
        scale += 1;
    }
    if scale > 60 {
        return None;
    }
    let mut d = Decimal::new(if neg { -unscaled } else { unscaled }, scale as u8);
    if d.scale > 30 {
        d = rescale(d, 30);
    }
    Some(d)
}

/// Converts to a decimal of `scale` digits; `Ok(None)` means too large to hold.
fn to_decimal(v: &Value, scale: u8, column: &str) -> Result<Option<Decimal>, EngineError> {
    let incorrect = || EngineError::IncorrectValue {
        kind: "decimal",
        value: text_of(v),
        column: column.to_string(),
    };
    let exact = match v {
        Value::Int(i) => Decimal::new(i128::from(*i), 0),
        Value::UInt(u) => Decimal::new(i128::from(*u), 0),
        Value::Decimal(d) => *d,
        Value::Double(d) => {
            if !d.is_finite() || d.abs() >= 1e66 {
                return Ok(None);
            }
            return Ok(
                parse_decimal(&format!("{d:.*}", usize::from(scale))).map(|p| rescale(p, scale))
            );
        }
        Value::Bytes(b) => {
            let s = std::str::from_utf8(b).map_err(|_| incorrect())?;
            parse_decimal(s).ok_or_else(incorrect)?
        }
        Value::DateTime(dt) => Decimal::new(datetime_number(dt), 0),
        Value::Time(t, _) => time_value::time_number(*t),
        Value::Enum(..) | Value::Set(..) => {
            Decimal::new(i128::from(v.member_number().unwrap_or(0)), 0)
        }
        Value::Null => return Err(incorrect()),
    };
    if exact.scale < scale {
        let f = I256::new(10).checked_pow(u32::from(scale - exact.scale));
        return Ok(f
            .and_then(|f| exact.unscaled().checked_mul(f))
            .map(|u| Decimal::new(u, scale)));
    }
    Ok(Some(rescale(exact, scale)))
}

/// Days in a month of the proleptic Gregorian calendar.
pub(crate) fn days_in_month(year: u16, month: u8) -> u8 {
    match month {
        1 | 3 | 5 | 7 | 8 | 10 | 12 => 31,
        4 | 6 | 9 | 11 => 30,
        2 if (year.is_multiple_of(4) && !year.is_multiple_of(100)) || year.is_multiple_of(400) => {
            29
        }
        2 => 28,
        _ => 0,
    }
}

fn valid(dt: &DateTime) -> bool {
    dt.year <= 9999
        && (1..=12).contains(&dt.month)
        && dt.day >= 1
        && dt.day <= days_in_month(dt.year, dt.month)
        && dt.hour < 24
        && dt.minute < 60
        && dt.second < 60
        && dt.micros < 1_000_000
}

fn digits(s: &str) -> Option<u32> {
    if s.is_empty() || !s.bytes().all(|c| c.is_ascii_digit()) {
        return None;
    }
    s.parse().ok()
}

/// Parses MySQL's date/datetime literals: `YYYY-MM-DD[( |T)HH:MM:SS[.ffffff]]`,
/// `YYYYMMDD` and `YYYYMMDDHHMMSS`.
pub fn parse_datetime(s: &str) -> Option<DateTime> {
    let s = s.trim();
    let mut dt = DateTime::default();
    if s.bytes().all(|c| c.is_ascii_digit()) && (s.len() == 8 || s.len() == 14) {
        dt.year = digits(&s[0..4])? as u16;
        dt.month = digits(&s[4..6])? as u8;
        dt.day = digits(&s[6..8])? as u8;
        if s.len() == 14 {
            dt.hour = digits(&s[8..10])? as u8;
            dt.minute = digits(&s[10..12])? as u8;
            dt.second = digits(&s[12..14])? as u8;
        }
        return valid(&dt).then_some(dt);
    }
    let (date, time) = match s.find([' ', 'T']) {
        Some(i) => (&s[..i], Some(s[i + 1..].trim_start())),
        None => (s, None),
    };
    let mut parts = date.split('-');
    dt.year = digits(parts.next()?)? as u16;
    dt.month = digits(parts.next()?)? as u8;
    dt.day = digits(parts.next()?)? as u8;
    if parts.next().is_some() {
        return None;
    }
    if let Some(time) = time {
        let (hms, frac) = time.split_once('.').unwrap_or((time, ""));
        let mut parts = hms.split(':');
        dt.hour = digits(parts.next()?)? as u8;
        dt.minute = parts.next().map_or(Some(0), digits)? as u8;
        dt.second = parts.next().map_or(Some(0), digits)? as u8;
        if parts.next().is_some() || frac.len() > 6 || (!frac.is_empty() && digits(frac).is_none())
        {
            return None;
        }
        if !frac.is_empty() {
            dt.micros = digits(frac)? * 10u32.pow(6 - frac.len() as u32);
        }
    }
    valid(&dt).then_some(dt)
}

fn to_datetime(v: &Value, kind: &'static str, column: &str) -> Result<DateTime, EngineError> {
    let parsed = match v {
        Value::DateTime(dt) => valid(dt).then_some(*dt),
        Value::Bytes(b) => std::str::from_utf8(b).ok().and_then(parse_datetime),
        Value::Int(_) | Value::UInt(_) => parse_datetime(&text_of(v)),
        _ => None,
    };
    parsed.ok_or_else(|| EngineError::IncorrectDatetime {
        kind,
        value: text_of(v),
        column: column.to_string(),
    })
}

/// Rounds the microseconds to `fsp` digits (half up), carrying into seconds and beyond.
fn round_fsp(mut dt: DateTime, fsp: u8) -> DateTime {
    let unit = 10u32.pow(6 - u32::from(fsp.min(6)));
    let rounded = (dt.micros + unit / 2) / unit * unit;
    if rounded < 1_000_000 {
        dt.micros = rounded;
        return dt;
    }
    dt.micros = 0;
    dt.second += 1;
    if dt.second == 60 {
        dt.second = 0;
        dt.minute += 1;
    }
    if dt.minute == 60 {
        dt.minute = 0;
        dt.hour += 1;
    }
    if dt.hour == 24 {
        dt.hour = 0;
        dt.day += 1;
    }
    if dt.day > days_in_month(dt.year, dt.month) {
        dt.day = 1;
        dt.month += 1;
    }
    if dt.month == 13 {
        dt.month = 1;
        dt.year += 1;
    }
    dt
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::types::IntKind;

    fn int(kind: IntKind, unsigned: bool) -> ColumnType {
        ColumnType::Integer { kind, unsigned }
    }

    #[test]
    fn integer_ranges() {
        let t = int(IntKind::Tiny, false);
        assert_eq!(t.coerce(Value::Int(-128), "c"), Ok(Value::Int(-128)));
        assert_eq!(
            t.coerce(Value::Int(128), "c").unwrap_err().code().code(),
            1264
        );
        let u = int(IntKind::Int, true);
        assert_eq!(
            u.coerce(Value::Int(-1), "c").unwrap_err().code().code(),
            1264
        );
        assert_eq!(
            u.coerce(Value::str("4294967295"), "c"),
            Ok(Value::UInt(4_294_967_295))
        );
        assert_eq!(u.coerce(Value::Double(2.5), "c"), Ok(Value::UInt(3)));
        assert_eq!(
            int(IntKind::Big, false)
                .coerce(Value::str("x1"), "c")
                .unwrap_err()
                .code()
                .code(),
            1366
        );
    }

    proptest::proptest! {
        /// An integer an integer column holds as it is comes out of `coerce` unchanged, and
        /// any other comes out changed or refused.
        #[test]
        fn an_integer_held_as_is_is_what_coerce_returns(
            kind in 0usize..5,
            unsigned: bool,
            signed: bool,
            n: i64,
            shift in 0u32..64,
        ) {
            let kind = [IntKind::Tiny, IntKind::Small, IntKind::Medium, IntKind::Int, IntKind::Big][kind];
            let t = int(kind, unsigned);
            let n = n >> shift;
            let v = if signed { Value::Int(n) } else { Value::UInt(n as u64) };
            let coerced = t.coerce(v.clone(), "c");
            proptest::prop_assert_eq!(t.holds_integer_as_is(&v), coerced == Ok(v));
        }
    }

    #[test]
    fn strings_and_lengths() {
        assert_eq!(
            ColumnType::Char(3).coerce(Value::str("ab  "), "c"),
            Ok(Value::str("ab"))
        );
        assert_eq!(
            ColumnType::VarChar(3)
                .coerce(Value::str("abcd"), "c")
                .unwrap_err()
                .code()
                .code(),
            1406
        );
        assert_eq!(
            ColumnType::VarChar(3).coerce(Value::str("abc  "), "c"),
            Ok(Value::str("abc"))
        );
        assert_eq!(
            ColumnType::VarChar(2).coerce(Value::str("éé"), "c"),
            Ok(Value::str("éé"))
        );
        assert_eq!(
            ColumnType::Binary(3).coerce(Value::str("a"), "c"),
            Ok(Value::Bytes(vec![b'a', 0, 0]))
        );
        assert_eq!(
            ColumnType::VarChar(5).coerce(Value::Int(42), "c"),
            Ok(Value::str("42"))
        );
    }

    #[test]
    fn decimals() {
        let t = ColumnType::Decimal {
            precision: 5,
            scale: 2,
        };
        assert_eq!(
            t.coerce(Value::str("123.456"), "c"),
            Ok(Value::Decimal(Decimal::new(12346, 2)))
        );
        assert_eq!(
            t.coerce(Value::Int(1000), "c").unwrap_err().code().code(),
            1264
        );
        assert_eq!(
            t.coerce(Value::Double(-1.005), "c")
                .map(|v| matches!(v, Value::Decimal(_))),
            Ok(true)
        );
        assert_eq!(parse_decimal("1.5e2"), Some(Decimal::new(150, 0)));
    }

    #[test]
    fn times_years_and_bits() {
        let code = |t: ColumnType, v: Value| t.coerce(v, "c").unwrap_err().code().code();
        let time = ColumnType::Time { fsp: 1 };
        let hms = |h: i64, m: i64, s: i64| ((h * 60 + m) * 60 + s) * 1_000_000;
        assert_eq!(
            time.coerce(Value::str("12:34:56.46"), "c"),
            Ok(Value::Time(hms(12, 34, 56) + 500_000, 1))
        );
        assert_eq!(
            time.coerce(Value::Int(-123456), "c"),
            Ok(Value::Time(-hms(12, 34, 56), 1))
        );
        assert_eq!(code(time, Value::str("839:00:00")), 1292);
        assert_eq!(code(time, Value::Int(8_390_000)), 1292);
        assert_eq!(code(time, Value::str("10:60:00")), 1292);
        let year = |v: Value| ColumnType::Year.coerce(v, "c");
        assert_eq!(year(Value::Int(0)), Ok(Value::UInt(0)));
        assert_eq!(year(Value::str("0")), Ok(Value::UInt(2000)));
        assert_eq!(year(Value::str("0000")), Ok(Value::UInt(0)));
        assert_eq!(year(Value::Int(69)), Ok(Value::UInt(2069)));
        assert_eq!(year(Value::str("70")), Ok(Value::UInt(1970)));
        assert_eq!(year(Value::Int(2155)), Ok(Value::UInt(2155)));
        assert_eq!(code(ColumnType::Year, Value::Int(1900)), 1264);
        assert_eq!(code(ColumnType::Year, Value::Int(2156)), 1264);
        let bit = ColumnType::Bit(5);
        assert_eq!(
            bit.coerce(Value::Bytes(vec![0, 5]), "c"),
            Ok(Value::UInt(5))
        );
        assert_eq!(bit.coerce(Value::Int(31), "c"), Ok(Value::UInt(31)));
        assert_eq!(code(bit, Value::Int(32)), 1406);
        assert_eq!(code(bit, Value::Int(-1)), 1406);
        assert_eq!(
            ColumnType::Bit(64).coerce(Value::Int(-1), "c"),
            Ok(Value::UInt(u64::MAX))
        );
    }

    #[test]
    fn datetimes() {
        let t = ColumnType::DateTime { fsp: 0 };
        let v = t.coerce(Value::str("2024-02-29 23:59:59.6"), "c").unwrap();
        assert_eq!(
            v,
            Value::DateTime(DateTime {
                year: 2024,
                month: 3,
                day: 1,
                ..DateTime::default()
            })
        );
        assert_eq!(
            t.coerce(Value::str("2023-02-29"), "c")
                .unwrap_err()
                .code()
                .code(),
            1292
        );
        assert_eq!(
            ColumnType::Timestamp { fsp: 0 }
                .coerce(Value::str("1969-12-31"), "c")
                .unwrap_err()
                .code()
                .code(),
            1292
        );
        assert!(ColumnType::Date.coerce(Value::Int(20240101), "c").is_ok());
    }

    #[test]
    fn enums_by_member_text_or_index() {
        let m = Members::intern(&["pending", "claimed", "done"]);
        let t = ColumnType::Enum(m);
        assert_eq!(t.coerce(Value::str("Claimed "), "c"), Ok(Value::Enum(2, m)));
        assert_eq!(t.coerce(Value::Int(3), "c"), Ok(Value::Enum(3, m)));
        assert_eq!(t.coerce(Value::str("1"), "c"), Ok(Value::Enum(1, m)));
        for bad in [
            Value::Int(0),
            Value::Int(4),
            Value::str("x"),
            Value::str(""),
        ] {
            let e = t.coerce(bad, "c").unwrap_err();
            assert_eq!((e.code().code(), e.code().sql_state()), (1265, "01000"));
            assert_eq!(e.message(2), "Data truncated for column 'c' at row 2");
        }
        assert_eq!(Value::Enum(2, m).member_text().as_deref(), Some("claimed"));
    }

    #[test]
    fn sets_by_member_list_or_bitmask() {
        let m = Members::intern(&["x", "y", "z"]);
        let t = ColumnType::Set(m);
        assert_eq!(t.coerce(Value::str("z,X"), "c"), Ok(Value::Set(0b101, m)));
        assert_eq!(t.coerce(Value::str(""), "c"), Ok(Value::Set(0, m)));
        assert_eq!(t.coerce(Value::Int(7), "c"), Ok(Value::Set(7, m)));
        assert_eq!(Value::Set(0b101, m).member_text().as_deref(), Some("x,z"));
        for bad in [Value::Int(8), Value::str("x,w")] {
            assert_eq!(t.coerce(bad, "c").unwrap_err().code().code(), 1265);
        }
    }

    #[test]
    fn json_validated_and_normalized() {
        assert_eq!(
            ColumnType::Json.coerce(Value::str(r#"{"b":[1,2],"a":1}"#), "c"),
            Ok(Value::str(r#"{"a": 1, "b": [1, 2]}"#))
        );
        assert_eq!(
            ColumnType::Json.coerce(Value::Int(5), "c"),
            Ok(Value::str("5"))
        );
        let e = ColumnType::Json
            .coerce(Value::str("{x"), "t.c")
            .unwrap_err();
        assert_eq!((e.code().code(), e.code().sql_state()), (3140, "22032"));
        assert_eq!(
            e.message(1),
            "Invalid JSON text: \"Missing a name for object member.\" at position 1 in value \
             for column 't.c'."
        );
    }
}
