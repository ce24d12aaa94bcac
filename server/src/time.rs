//! Calendar arithmetic for NOW(), UNIX_TIMESTAMP(), date values and log timestamps (UTC;
//! `system_time_zone` is UTC).

use std::time::{SystemTime, UNIX_EPOCH};

use crate::value::DateTime;

/// (year, month, day) of a count of days since 1970-01-01 (proleptic Gregorian).
pub fn civil_from_days(z: i64) -> (i64, u32, u32) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let y = yoe + era * 400;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    (if m <= 2 { y + 1 } else { y }, m, d)
}

/// Days since 1970-01-01 of a calendar date.
pub fn days_from_civil(y: i64, m: u32, d: u32) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y.rem_euclid(400);
    let mp = i64::from((m + 9) % 12);
    let doy = (153 * mp + 2) / 5 + i64::from(d) - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// Microseconds since the epoch, now.
pub fn now_micros() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_micros() as i64)
        .unwrap_or(0)
}

/// A wall-clock time as the server's logs stamp it: ISO 8601 in UTC with microseconds
/// (`2026-12-02T11:49:28.123456Z`, mysqld's `log_timestamps=UTC`).
pub fn iso8601_utc(at: SystemTime) -> String {
    let us = at
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_micros() as i64)
        .unwrap_or(0);
    let dt = datetime_from_micros(us);
    format!(
        "{:04}-{:02}-{:02}T{:02}:{:02}:{:02}.{:06}Z",
        dt.year, dt.month, dt.day, dt.hour, dt.minute, dt.second, dt.micros
    )
}

/// A datetime from microseconds since the epoch (UTC).
pub fn datetime_from_micros(us: i64) -> DateTime {
    let secs = us.div_euclid(1_000_000);
    let micros = us.rem_euclid(1_000_000) as u32;
    let (y, m, d) = civil_from_days(secs.div_euclid(86_400));
    let rem = secs.rem_euclid(86_400);
    DateTime {
        year: y.clamp(0, 9999) as u16,
        month: m as u8,
        day: d as u8,
        hour: (rem / 3600) as u8,
        minute: (rem / 60 % 60) as u8,
        second: (rem % 60) as u8,
        micros,
    }
}

/// Seconds since the epoch of a datetime (UTC).
pub fn datetime_to_unix(dt: &DateTime) -> i64 {
    days_from_civil(i64::from(dt.year), u32::from(dt.month), u32::from(dt.day)) * 86_400
        + i64::from(dt.hour) * 3600
        + i64::from(dt.minute) * 60
        + i64::from(dt.second)
}

/// Parses `YYYY-MM-DD[ HH:MM:SS[.ffffff]]` (also with `T`), as MySQL accepts date literals.
pub fn parse_datetime(s: &str) -> Option<DateTime> {
    let s = s.trim();
    let (date, time) = match s.find([' ', 'T']) {
        Some(i) => (&s[..i], Some(s[i + 1..].trim())),
        None => (s, None),
    };
    let mut dp = date.split('-');
    let year: u16 = dp.next()?.parse().ok()?;
    let month: u8 = dp.next()?.parse().ok()?;
    let day: u8 = dp.next()?.parse().ok()?;
    if dp.next().is_some() || month > 12 || day > 31 {
        return None;
    }
    let mut dt = DateTime {
        year,
        month,
        day,
        ..DateTime::default()
    };
    if let Some(t) = time.filter(|t| !t.is_empty()) {
        let (hms, frac) = match t.split_once('.') {
            Some((a, b)) => (a, Some(b)),
            None => (t, None),
        };
        let mut tp = hms.split(':');
        dt.hour = tp.next()?.parse().ok()?;
        dt.minute = tp.next().unwrap_or("0").parse().ok()?;
        dt.second = tp.next().unwrap_or("0").parse().ok()?;
        if dt.hour > 23 || dt.minute > 59 || dt.second > 59 {
            return None;
        }
        if let Some(f) = frac {
            let digits: String = f.chars().take(6).collect();
            let n: u32 = digits.parse().ok()?;
            dt.micros = n * 10u32.pow(6 - digits.len() as u32);
        }
    }
    Some(dt)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn civil_round_trip() {
        for days in [-1000i64, 0, 1, 59, 365, 10_957, 20_000, 2_932_896] {
            let (y, m, d) = civil_from_days(days);
            assert_eq!(days_from_civil(y, m, d), days);
        }
        assert_eq!(civil_from_days(0), (1970, 1, 1));
        assert_eq!(civil_from_days(19_723), (2024, 1, 1));
    }

    #[test]
    fn parses_mysql_datetimes() {
        let dt = parse_datetime("2024-02-29 13:14:15.5").unwrap();
        assert_eq!(dt.to_string(), "2024-02-29 13:14:15.500000");
        assert_eq!(
            datetime_to_unix(&parse_datetime("1970-01-02").unwrap()),
            86_400
        );
        assert!(parse_datetime("2024-13-01").is_none());
        let now = datetime_from_micros(now_micros());
        assert!(now.year >= 2024);
    }
}
