//! SQL values as the engine stores them and the SQL layer computes with them.
//!
//! Strings and binary strings are both byte vectors (the server speaks utf8mb4 and compares
//! with binary or simple case-insensitive collation); the column type decides how a value is
//! shown and compared.

use std::cmp::Ordering;
use std::fmt;

use crate::members::Members;
pub use ethnum::I256;

/// A calendar date and time of day with microseconds, as DATE/DATETIME/TIMESTAMP hold it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct DateTime {
    /// Year, 0..=9999.
    pub year: u16,
    /// Month, 1..=12 (0 in the zero date).
    pub month: u8,
    /// Day of month, 1..=31 (0 in the zero date).
    pub day: u8,
    /// Hour, 0..=23.
    pub hour: u8,
    /// Minute, 0..=59.
    pub minute: u8,
    /// Second, 0..=59.
    pub second: u8,
    /// Microseconds, 0..=999_999.
    pub micros: u32,
}

/// An exact decimal: `unscaled / 10^scale`, with up to 65 digits (MySQL's DECIMAL).
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct Decimal {
    /// The digits as a 256-bit integer in native byte order: kept as bytes, the decimal's
    /// alignment is 1 and a [`Value`] stays as small as its other variants allow.
    unscaled: [u8; 32],
    /// How many of the digits are after the decimal point.
    pub scale: u8,
}

/// One SQL value.
#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    /// SQL NULL.
    Null,
    /// A signed integer (every signed INT type, and booleans).
    Int(i64),
    /// An unsigned integer (UNSIGNED INT types).
    UInt(u64),
    /// DOUBLE and FLOAT.
    Double(f64),
    /// DECIMAL.
    Decimal(Decimal),
    /// CHAR/VARCHAR/TEXT/BINARY/VARBINARY/BLOB contents.
    Bytes(Vec<u8>),
    /// DATE (time fields zero), DATETIME and TIMESTAMP.
    DateTime(DateTime),
    /// TIME: a signed span in microseconds (MySQL's range is ±838:59:59) and the fractional
    /// digits it is printed with (its column's fsp; 0 or 6 for a computed time).
    Time(i64, u8),
    /// An ENUM value: the 1-based index of its member (0 is the empty error value), which
    /// orders it, and the member list, which names it.
    Enum(u16, Members),
    /// A SET value: a bitmask over its members (bit 0 the first), which orders it.
    Set(u64, Members),
}

impl Value {
    /// True for SQL NULL.
    pub fn is_null(&self) -> bool {
        matches!(self, Value::Null)
    }

    /// A text value.
    pub fn str(s: &str) -> Value {
        Value::Bytes(s.as_bytes().to_vec())
    }

    /// A text value that owns `s`.
    pub fn from_string(s: String) -> Value {
        Value::Bytes(s.into_bytes())
    }

    /// The text of an ENUM or SET value (its member names); None for other values.
    pub fn member_text(&self) -> Option<String> {
        match *self {
            Value::Enum(i, m) => Some(m.enum_text(i).to_string()),
            Value::Set(bits, m) => Some(m.set_text(bits)),
            _ => None,
        }
    }

    /// The number an ENUM or SET value is in numeric context (its index or bitmask).
    pub fn member_number(&self) -> Option<u64> {
        match *self {
            Value::Enum(i, _) => Some(u64::from(i)),
            Value::Set(bits, _) => Some(bits),
            _ => None,
        }
    }
}

impl Decimal {
    /// `unscaled / 10^scale`.
    pub fn new(unscaled: impl Into<I256>, scale: u8) -> Decimal {
        Decimal {
            unscaled: unscaled.into().to_ne_bytes(),
            scale,
        }
    }

    /// The digits as an integer.
    pub fn unscaled(self) -> I256 {
        I256::from_ne_bytes(self.unscaled)
    }

    /// The value as a double (lossy).
    pub fn to_f64(self) -> f64 {
        self.unscaled().as_f64() / 10f64.powi(i32::from(self.scale))
    }

    /// Compares two decimals exactly (scales are aligned first; scales are at most 60, so
    /// 65-digit values stay far inside 256 bits).
    pub fn cmp_exact(self, other: Decimal) -> Ordering {
        let scale = self.scale.max(other.scale);
        let widen = |d: Decimal| {
            d.unscaled()
                .saturating_mul(I256::new(10).pow(u32::from(scale - d.scale)))
        };
        widen(self).cmp(&widen(other))
    }
}

impl fmt::Debug for Decimal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Decimal({self})")
    }
}

impl fmt::Display for Decimal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let unscaled = self.unscaled();
        if self.scale == 0 {
            return write!(f, "{unscaled}");
        }
        let pow = ethnum::U256::new(10).pow(u32::from(self.scale));
        let abs = unscaled.unsigned_abs();
        let sign = if unscaled < 0 { "-" } else { "" };
        write!(
            f,
            "{sign}{}.{:0width$}",
            abs / pow,
            abs % pow,
            width = usize::from(self.scale)
        )
    }
}

impl fmt::Display for DateTime {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{:04}-{:02}-{:02} {:02}:{:02}:{:02}",
            self.year, self.month, self.day, self.hour, self.minute, self.second
        )?;
        if self.micros != 0 {
            write!(f, ".{:06}", self.micros)?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decimal_display_and_compare() {
        let d = Decimal::new(-12345, 2);
        assert_eq!(d.to_string(), "-123.45");
        assert_eq!(Decimal::new(5, 3).to_string(), "0.005");
        assert_eq!(
            Decimal::new(150, 2).cmp_exact(Decimal::new(15, 1)),
            Ordering::Equal
        );
        let nines = I256::new(10).pow(65) - 1;
        assert_eq!(
            Decimal::new(-nines, 30).to_string(),
            format!("-{}.{}", "9".repeat(35), "9".repeat(30))
        );
    }

    #[test]
    fn value_stays_small() {
        assert_eq!(std::mem::size_of::<Decimal>(), 33);
        assert!(std::mem::size_of::<Value>() <= 40);
    }
}
