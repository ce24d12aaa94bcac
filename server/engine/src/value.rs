//! SQL values as the engine stores them and the SQL layer computes with them.
//!
//! Strings and binary strings are both byte vectors (the server speaks utf8mb4 and compares
//! with binary or simple case-insensitive collation); the column type decides how a value is
//! shown and compared.

use std::cmp::Ordering;
use std::fmt;

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

/// An exact decimal: `unscaled / 10^scale`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Decimal {
    /// The digits as an integer.
    pub unscaled: i128,
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
    /// TIME: a signed span in microseconds (MySQL's range is ±838:59:59.999999 hours).
    Time(i64),
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
}

impl Decimal {
    /// The value as a double (lossy).
    pub fn to_f64(self) -> f64 {
        self.unscaled as f64 / 10f64.powi(i32::from(self.scale))
    }

    /// Compares two decimals exactly (scales are aligned first).
    pub fn cmp_exact(self, other: Decimal) -> Ordering {
        let scale = self.scale.max(other.scale);
        let a = self
            .unscaled
            .saturating_mul(10i128.pow(u32::from(scale - self.scale)));
        let b = other
            .unscaled
            .saturating_mul(10i128.pow(u32::from(scale - other.scale)));
        a.cmp(&b)
    }
}

impl fmt::Display for Decimal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.scale == 0 {
            return write!(f, "{}", self.unscaled);
        }
        let pow = 10u128.pow(u32::from(self.scale));
        let abs = self.unscaled.unsigned_abs();
        let sign = if self.unscaled < 0 { "-" } else { "" };
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
        let d = Decimal {
            unscaled: -12345,
            scale: 2,
        };
        assert_eq!(d.to_string(), "-123.45");
        assert_eq!(
            Decimal {
                unscaled: 5,
                scale: 3
            }
            .to_string(),
            "0.005"
        );
        assert_eq!(
            Decimal {
                unscaled: 150,
                scale: 2
            }
            .cmp_exact(Decimal {
                unscaled: 15,
                scale: 1
            }),
            Ordering::Equal
        );
    }
}
