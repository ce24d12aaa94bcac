//! TIME values: a signed span in microseconds, read from MySQL's literal forms
//! (`[-][D ]HH:MM[:SS][.ffffff]`, `HHMMSS` numbers) and printed as `[-]HH:MM:SS[.ffffff]`.

use crate::value::Decimal;

/// Microseconds in a second.
const SECOND: i64 = 1_000_000;

/// The largest TIME MySQL holds, 838:59:59, in microseconds (the smallest is its negation).
pub const MAX_TIME_MICROS: i64 = (838 * 3600 + 59 * 60 + 59) * SECOND;

/// The span of `h:m:s` plus `micros`, or None when minutes or seconds are 60 or more (or the
/// hours are too many to count in microseconds).
fn span(hours: i64, minutes: i64, seconds: i64, micros: i64) -> Option<i64> {
    if minutes >= 60 || seconds >= 60 {
        return None;
    }
    hours
        .checked_mul(3600)?
        .checked_add(minutes * 60 + seconds)?
        .checked_mul(SECOND)?
        .checked_add(micros)
}

/// The microseconds of a fraction's digits, rounding at the seventh (None if not digits).
fn fraction_micros(frac: &str) -> Option<i64> {
    if !frac.bytes().all(|c| c.is_ascii_digit()) {
        return None;
    }
    let mut digits: Vec<i64> = frac.bytes().map(|c| i64::from(c - b'0')).collect();
    digits.resize(7, 0);
    let micros = digits[..6].iter().fold(0, |acc, d| acc * 10 + d);
    Some(micros + i64::from(digits[6] >= 5))
}

fn number(s: &str) -> Option<i64> {
    if s.is_empty() || s.len() > 12 || !s.bytes().all(|c| c.is_ascii_digit()) {
        return None;
    }
    s.parse().ok()
}

/// The span of a non-negative number read as MySQL reads one for TIME: `[H..]HHMMSS`, or the
/// time part of a `YYYYMMDDHHMMSS` datetime number.
pub fn time_from_digits(n: u128, micros: i64) -> Option<i64> {
    let n = if n >= 10_000_000_000 {
        n % 1_000_000
    } else {
        n
    };
    let n = i64::try_from(n).ok()?;
    span(n / 10_000, n / 100 % 100, n % 100, micros)
}

/// Parses a TIME literal into microseconds (not range-checked: the caller compares with
/// [`MAX_TIME_MICROS`]). A datetime literal gives its time of day.
pub fn parse_time(s: &str) -> Option<i64> {
    let s = s.trim();
    let (negative, body) = match s.strip_prefix('-') {
        Some(rest) => (true, rest.trim_start()),
        None => (false, s),
    };
    let magnitude = if body.contains('-') {
        let dt = crate::coerce::parse_datetime(body)?;
        span(
            i64::from(dt.hour),
            i64::from(dt.minute),
            i64::from(dt.second),
            i64::from(dt.micros),
        )?
    } else {
        magnitude(body)?
    };
    Some(if negative { -magnitude } else { magnitude })
}

fn magnitude(body: &str) -> Option<i64> {
    let (days, rest) = match body.split_once(' ') {
        Some((d, rest)) => (Some(number(d)?), rest.trim_start()),
        None => (None, body),
    };
    let (hms, frac) = rest.split_once('.').unwrap_or((rest, ""));
    let micros = fraction_micros(frac)?;
    if days.is_none() && !hms.contains(':') {
        return time_from_digits(u128::from(number(hms)?.unsigned_abs()), micros);
    }
    let mut parts = hms.split(':');
    let hours = number(parts.next()?)?;
    let minutes = parts.next().map_or(Some(0), number)?;
    let seconds = parts.next().map_or(Some(0), number)?;
    if parts.next().is_some() || (days.is_some() && hours >= 24) {
        return None;
    }
    span(days.unwrap_or(0) * 24 + hours, minutes, seconds, micros)
}

/// A TIME as the number MySQL makes of it: `[-]HHMMSS.ffffff`.
pub fn time_number(t: i64) -> Decimal {
    let abs = t.unsigned_abs();
    let secs = abs / SECOND as u64;
    let hhmmss = (secs / 3600) * 10_000 + (secs / 60 % 60) * 100 + secs % 60;
    let unscaled = i128::from(hhmmss) * i128::from(SECOND) + i128::from(abs % SECOND as u64);
    Decimal::new(if t < 0 { -unscaled } else { unscaled }, 6)
}

/// `micros` rounded (half away from zero) to `fsp` fractional digits.
pub fn round_time(micros: i64, fsp: u8) -> i64 {
    let unit = 10i64.pow(6 - u32::from(fsp.min(6)));
    let magnitude = micros.abs().saturating_add(unit / 2) / unit * unit;
    magnitude * micros.signum()
}

/// `[-]HH:MM:SS` with exactly `fsp` fractional digits, or (None) six when the value has a
/// fraction and none otherwise.
pub fn format_time(micros: i64, fsp: Option<u8>) -> String {
    let sign = if micros < 0 { "-" } else { "" };
    let abs = micros.unsigned_abs();
    let secs = abs / SECOND as u64;
    let frac = abs % SECOND as u64;
    let mut out = format!(
        "{sign}{:02}:{:02}:{:02}",
        secs / 3600,
        secs / 60 % 60,
        secs % 60
    );
    let digits = match fsp {
        Some(n) => usize::from(n.min(6)),
        None if frac != 0 => 6,
        None => 0,
    };
    if digits > 0 {
        out.push('.');
        out.push_str(&format!("{frac:06}")[..digits]);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hms(h: i64, m: i64, s: i64) -> i64 {
        ((h * 60 + m) * 60 + s) * SECOND
    }

    #[test]
    fn literal_forms() {
        assert_eq!(parse_time("12:34:56"), Some(hms(12, 34, 56)));
        assert_eq!(parse_time("12:34:56.5"), Some(hms(12, 34, 56) + 500_000));
        assert_eq!(parse_time("1 02:00:00"), Some(hms(26, 0, 0)));
        assert_eq!(parse_time("12:34"), Some(hms(12, 34, 0)));
        assert_eq!(parse_time("123456"), Some(hms(12, 34, 56)));
        assert_eq!(parse_time("1234"), Some(hms(0, 12, 34)));
        assert_eq!(parse_time("-838:59:59"), Some(-MAX_TIME_MICROS));
        assert_eq!(parse_time("2024-05-01 10:11:12"), Some(hms(10, 11, 12)));
        assert_eq!(parse_time("12:60:00"), None);
        assert_eq!(parse_time("abc"), None);
        assert_eq!(parse_time("1 25:00:00"), None);
        assert_eq!(parse_time("999999999999:00:00"), None);
        assert_eq!(parse_time("999999999999 00:00:00"), None);
    }

    #[test]
    fn printing_and_rounding() {
        assert_eq!(format_time(hms(838, 59, 59), Some(0)), "838:59:59");
        assert_eq!(
            format_time(-hms(1, 2, 3) - 500_000, Some(3)),
            "-01:02:03.500"
        );
        assert_eq!(format_time(hms(0, 0, 5), None), "00:00:05");
        assert_eq!(round_time(1_999_999, 0), 2_000_000);
        assert_eq!(round_time(-1_500_000, 0), -2_000_000);
        assert_eq!(round_time(1_234_567, 3), 1_235_000);
        assert!(round_time(i64::MAX, 0) > 0);
    }
}
