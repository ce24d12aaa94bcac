//! Date arithmetic: `INTERVAL` steps (`DATE_ADD`/`DATE_SUB`, `ADDDATE`/`SUBDATE`, `d +
//! INTERVAL n unit` / `d - INTERVAL n unit`, with MySQL's single units MICROSECOND to YEAR;
//! a month step that lands past the end of a month ends on its last day, as in MySQL) and
//! `CONVERT_TZ` between offsets.

use crate::time::{datetime_from_micros, datetime_to_unix, days_from_civil, parse_datetime};
use crate::value::{DateTime, Value};

const DAY_US: i64 = 86_400_000_000;

/// The units an interval may have, with their length in microseconds (None: counted in
/// months, with how many months one is).
fn unit(name: &str) -> Option<(Option<i64>, i64)> {
    Some(match name.to_ascii_uppercase().as_str() {
        "MICROSECOND" => (Some(1), 0),
        "SECOND" => (Some(1_000_000), 0),
        "MINUTE" => (Some(60_000_000), 0),
        "HOUR" => (Some(3_600_000_000), 0),
        "DAY" => (Some(DAY_US), 0),
        "WEEK" => (Some(7 * 86_400_000_000), 0),
        "MONTH" => (None, 1),
        "QUARTER" => (None, 3),
        "YEAR" => (None, 12),
        _ => return None,
    })
}

/// Whether `name` is a unit [`add`] knows.
pub fn is_unit(name: &str) -> bool {
    unit(name).is_some()
}

fn days_in_month(year: i64, month: u32) -> u8 {
    let next = if month == 12 {
        days_from_civil(year + 1, 1, 1)
    } else {
        days_from_civil(year, month + 1, 1)
    };
    (next - days_from_civil(year, month, 1)) as u8
}

fn add_months(dt: DateTime, months: i64) -> Option<DateTime> {
    let total = i64::from(dt.year) * 12 + i64::from(dt.month) - 1 + months;
    let year = total.div_euclid(12);
    let month = (total.rem_euclid(12) + 1) as u32;
    if !(0..=9999).contains(&year) {
        return None;
    }
    Some(DateTime {
        year: year as u16,
        month: month as u8,
        day: dt.day.min(days_in_month(year, month)),
        ..dt
    })
}

/// `date` plus `amount` (negated when `subtract`) of `unit_name`; NULL for a NULL or
/// unreadable date or amount, or a result outside years 0..9999, as MySQL. A date given as
/// text gives text, as in MySQL: a date alone when it had no time and the unit is a day or
/// longer, else the date and time.
pub fn add(date: &Value, amount: Option<f64>, unit_name: &str, subtract: bool) -> Value {
    let (dt, text_with_time) = match date {
        Value::DateTime(dt) => (*dt, None),
        Value::Bytes(b) => match std::str::from_utf8(b).ok() {
            Some(t) => match parse_datetime(t) {
                Some(dt) => (dt, Some(t.contains(':'))),
                None => return Value::Null,
            },
            None => return Value::Null,
        },
        _ => return Value::Null,
    };
    let (Some(amount), Some((micros, months))) = (amount, unit(unit_name)) else {
        return Value::Null;
    };
    let amount = if subtract { -amount } else { amount };
    let out = match micros {
        Some(per) => {
            let us = datetime_to_unix(&dt) * 1_000_000 + i64::from(dt.micros);
            let step = (amount * per as f64).round() as i64;
            let to = us.checked_add(step);
            to.map(datetime_from_micros)
                .filter(|r| r.year > 0 || to.is_some_and(|t| t >= -62_167_219_200_000_000))
        }
        None => add_months(dt, amount.trunc() as i64 * months),
    };
    let Some(out) = out else {
        return Value::Null;
    };
    match text_with_time {
        None => Value::DateTime(out),
        Some(with_time) if with_time || micros.is_some_and(|per| per < DAY_US) => {
            Value::str(&out.to_string())
        }
        Some(_) => Value::str(&format!("{:04}-{:02}-{:02}", out.year, out.month, out.day)),
    }
}

/// A time zone as an offset in seconds: `+HH:MM`/`-HH:MM` (-13:59 to +14:00, as MySQL
/// accepts), or `UTC`/`SYSTEM` (tpbed's system time zone is UTC). Named zones need MySQL's
/// time zone tables, which tpbed does not have: None, and CONVERT_TZ gives NULL, as MySQL
/// does without those tables.
fn zone_offset(zone: &str) -> Option<i64> {
    let z = zone.trim();
    if z.eq_ignore_ascii_case("UTC") || z.eq_ignore_ascii_case("SYSTEM") {
        return Some(0);
    }
    let (sign, rest) = match z.as_bytes().first()? {
        b'+' => (1, &z[1..]),
        b'-' => (-1, &z[1..]),
        _ => return None,
    };
    let (h, m) = rest.split_once(':')?;
    let (h, m): (i64, i64) = (h.parse().ok()?, m.parse().ok()?);
    let secs = sign * (h * 3600 + m * 60);
    ((0..60).contains(&m) && (-(13 * 3600 + 59 * 60)..=14 * 3600).contains(&secs)).then_some(secs)
}

/// `CONVERT_TZ(dt, from, to)`: NULL when a zone is unknown or the date unreadable.
pub fn convert_tz(date: &Value, from: &str, to: &str) -> Value {
    let (Some(f), Some(t)) = (zone_offset(from), zone_offset(to)) else {
        return Value::Null;
    };
    add(date, Some((t - f) as f64), "SECOND", false)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(s: &str) -> Value {
        Value::DateTime(parse_datetime(s).unwrap())
    }

    #[test]
    fn convert_tz_between_offsets() {
        assert_eq!(
            convert_tz(&at("2026-01-01 12:00:00"), "+00:00", "+10:00"),
            at("2026-01-01 22:00:00")
        );
        assert_eq!(
            convert_tz(&at("2026-01-01 00:30:00"), "UTC", "-01:00"),
            at("2025-12-31 23:30:00")
        );
        assert_eq!(
            convert_tz(&at("2026-01-01 00:00:00"), "UTC", "Europe/Berlin"),
            Value::Null
        );
        assert_eq!(convert_tz(&at("2026-01-01"), "+15:00", "UTC"), Value::Null);
    }

    #[test]
    fn text_dates_give_text() {
        assert_eq!(
            add(&Value::str("2026-03-01"), Some(1.0), "DAY", true),
            Value::str("2026-02-28")
        );
        assert_eq!(
            add(&Value::str("2026-03-01"), Some(1.0), "HOUR", true),
            Value::str("2026-02-28 23:00:00")
        );
        assert_eq!(
            add(&Value::str("2026-03-01 00:00:00"), Some(1.0), "DAY", false),
            Value::str("2026-03-02 00:00:00")
        );
    }

    #[test]
    fn units_and_month_ends() {
        assert_eq!(
            add(&at("2026-01-31 10:00:00"), Some(1.0), "MONTH", false),
            at("2026-02-28 10:00:00")
        );
        assert_eq!(
            add(&at("2026-03-01"), Some(1.0), "DAY", true),
            at("2026-02-28")
        );
        assert_eq!(
            add(&at("2026-12-31 23:59:59"), Some(1.0), "SECOND", false),
            at("2027-01-01 00:00:00")
        );
        assert_eq!(
            add(&at("2024-02-29"), Some(1.0), "YEAR", false),
            at("2025-02-28")
        );
        assert_eq!(add(&Value::Null, Some(1.0), "DAY", false), Value::Null);
        assert_eq!(add(&at("2026-01-01"), None, "DAY", false), Value::Null);
    }
}
