//! Values in the binary protocol (prepared-statement parameters and binary result rows),
//! encoded and decoded according to a [`ColumnType`].

use crate::column::ColumnType;
use crate::error::ProtocolError;
use crate::lenenc::{put_lenenc_bytes, put_u16, put_u32, put_u64, Reader};

/// One binary-protocol value.
#[derive(Debug, Clone, PartialEq)]
pub enum BinaryValue {
    /// SQL NULL (carried in the null bitmap, not in the value bytes).
    Null,
    /// A signed integer of any width.
    Int(i64),
    /// An unsigned integer of any width.
    UInt(u64),
    /// A FLOAT.
    Float(f32),
    /// A DOUBLE.
    Double(f64),
    /// Strings, blobs, DECIMAL text and anything else sent length-encoded.
    Bytes(Vec<u8>),
    /// A DATE (all zero is `0000-00-00`).
    Date {
        /// Year.
        year: u16,
        /// Month, 1-12 (0 in zero dates).
        month: u8,
        /// Day, 1-31 (0 in zero dates).
        day: u8,
    },
    /// A DATETIME or TIMESTAMP.
    DateTime {
        /// Year.
        year: u16,
        /// Month.
        month: u8,
        /// Day.
        day: u8,
        /// Hour.
        hour: u8,
        /// Minute.
        minute: u8,
        /// Second.
        second: u8,
        /// Microseconds.
        micros: u32,
    },
    /// A TIME, which may be negative and span days.
    Time {
        /// True for a negative interval.
        negative: bool,
        /// Whole days.
        days: u32,
        /// Hours, 0-23.
        hours: u8,
        /// Minutes.
        minutes: u8,
        /// Seconds.
        seconds: u8,
        /// Microseconds.
        micros: u32,
    },
}

impl BinaryValue {
    /// The parameter type a client announces for this value: (type, unsigned flag).
    pub fn natural_type(&self) -> (ColumnType, bool) {
        match self {
            Self::Null => (ColumnType::Null, false),
            Self::Int(_) => (ColumnType::LongLong, false),
            Self::UInt(_) => (ColumnType::LongLong, true),
            Self::Float(_) => (ColumnType::Float, false),
            Self::Double(_) => (ColumnType::Double, false),
            Self::Bytes(_) => (ColumnType::VarString, false),
            Self::Date { .. } => (ColumnType::Date, false),
            Self::DateTime { .. } => (ColumnType::DateTime, false),
            Self::Time { .. } => (ColumnType::Time, false),
        }
    }

    /// The value as a 64-bit integer bit pattern, for integer column types.
    fn int_bits(&self) -> u64 {
        match *self {
            Self::Int(v) => v as u64,
            Self::UInt(v) => v,
            Self::Float(v) => v as i64 as u64,
            Self::Double(v) => v as i64 as u64,
            _ => 0,
        }
    }

    fn as_f64(&self) -> f64 {
        match *self {
            Self::Int(v) => v as f64,
            Self::UInt(v) => v as f64,
            Self::Float(v) => f64::from(v),
            Self::Double(v) => v,
            _ => 0.0,
        }
    }

    /// Appends the value's bytes as a value of type `ty` (nothing for NULL, which lives in the
    /// null bitmap). A value of another kind is converted: numbers between each other, and
    /// anything to its text for string types, so encoding never fails.
    pub fn encode(&self, ty: ColumnType, out: &mut Vec<u8>) {
        use ColumnType as T;
        if matches!(self, Self::Null) {
            return;
        }
        match ty {
            T::Null => {}
            T::Tiny => out.push(self.int_bits() as u8),
            T::Short | T::Year => put_u16(out, self.int_bits() as u16),
            T::Long | T::Int24 => put_u32(out, self.int_bits() as u32),
            T::LongLong => put_u64(out, self.int_bits()),
            T::Float => out.extend_from_slice(&(self.as_f64() as f32).to_le_bytes()),
            T::Double => out.extend_from_slice(&self.as_f64().to_le_bytes()),
            T::Date | T::DateTime | T::Timestamp | T::NewDate => self.encode_datetime(ty, out),
            T::Time => self.encode_time(out),
            _ => match self {
                Self::Bytes(b) => put_lenenc_bytes(out, b),
                other => put_lenenc_bytes(out, other.to_text().as_bytes()),
            },
        }
    }

    fn encode_datetime(&self, ty: ColumnType, out: &mut Vec<u8>) {
        let (year, month, day, hour, minute, second, micros) = match *self {
            Self::Date { year, month, day } => (year, month, day, 0, 0, 0, 0),
            Self::DateTime {
                year,
                month,
                day,
                hour,
                minute,
                second,
                micros,
            } => (year, month, day, hour, minute, second, micros),
            _ => (0, 0, 0, 0, 0, 0, 0),
        };
        let len = if ty == ColumnType::Date {
            if (year, month, day) == (0, 0, 0) {
                0
            } else {
                4
            }
        } else if micros != 0 {
            11
        } else if (hour, minute, second) != (0, 0, 0) {
            7
        } else if (year, month, day) != (0, 0, 0) {
            4
        } else {
            0
        };
        out.push(len);
        if len >= 4 {
            put_u16(out, year);
            out.extend_from_slice(&[month, day]);
        }
        if len >= 7 {
            out.extend_from_slice(&[hour, minute, second]);
        }
        if len == 11 {
            put_u32(out, micros);
        }
    }

    fn encode_time(&self, out: &mut Vec<u8>) {
        let Self::Time {
            negative,
            days,
            hours,
            minutes,
            seconds,
            micros,
        } = *self
        else {
            out.push(0);
            return;
        };
        let len = if micros != 0 {
            12
        } else if negative || (days, hours, minutes, seconds) != (0, 0, 0, 0) {
            8
        } else {
            0
        };
        out.push(len);
        if len >= 8 {
            out.push(u8::from(negative));
            put_u32(out, days);
            out.extend_from_slice(&[hours, minutes, seconds]);
        }
        if len == 12 {
            put_u32(out, micros);
        }
    }

    /// Reads one non-NULL value of type `ty`; `unsigned` selects [`BinaryValue::UInt`] for
    /// integer types.
    pub fn decode(
        r: &mut Reader<'_>,
        ty: ColumnType,
        unsigned: bool,
    ) -> Result<Self, ProtocolError> {
        use ColumnType as T;
        let int = |v: i64, u: u64| {
            if unsigned {
                Self::UInt(u)
            } else {
                Self::Int(v)
            }
        };
        Ok(match ty {
            T::Null => Self::Null,
            T::Tiny => {
                let b = r.u8()?;
                int(i64::from(b as i8), u64::from(b))
            }
            T::Short | T::Year => {
                let v = r.u16()?;
                int(i64::from(v as i16), u64::from(v))
            }
            T::Long | T::Int24 => {
                let v = r.u32()?;
                int(i64::from(v as i32), u64::from(v))
            }
            T::LongLong => {
                let v = r.u64()?;
                int(v as i64, v)
            }
            T::Float => Self::Float(f32::from_bits(r.u32()?)),
            T::Double => Self::Double(f64::from_bits(r.u64()?)),
            T::Date | T::DateTime | T::Timestamp | T::NewDate => Self::decode_datetime(r, ty)?,
            T::Time => Self::decode_time(r)?,
            _ => Self::Bytes(r.lenenc_bytes()?.to_vec()),
        })
    }

    fn decode_datetime(r: &mut Reader<'_>, ty: ColumnType) -> Result<Self, ProtocolError> {
        let len = r.u8()?;
        if !matches!(len, 0 | 4 | 7 | 11) {
            return Err(ProtocolError::Malformed("date/datetime length"));
        }
        let (mut year, mut month, mut day, mut hour, mut minute, mut second, mut micros) =
            (0, 0, 0, 0, 0, 0, 0);
        if len >= 4 {
            year = r.u16()?;
            month = r.u8()?;
            day = r.u8()?;
        }
        if len >= 7 {
            hour = r.u8()?;
            minute = r.u8()?;
            second = r.u8()?;
        }
        if len == 11 {
            micros = r.u32()?;
        }
        Ok(if ty == ColumnType::Date {
            Self::Date { year, month, day }
        } else {
            Self::DateTime {
                year,
                month,
                day,
                hour,
                minute,
                second,
                micros,
            }
        })
    }

    fn decode_time(r: &mut Reader<'_>) -> Result<Self, ProtocolError> {
        let len = r.u8()?;
        if !matches!(len, 0 | 8 | 12) {
            return Err(ProtocolError::Malformed("time length"));
        }
        let (mut negative, mut days, mut hours, mut minutes, mut seconds, mut micros) =
            (false, 0, 0, 0, 0, 0);
        if len >= 8 {
            negative = r.u8()? != 0;
            days = r.u32()?;
            hours = r.u8()?;
            minutes = r.u8()?;
            seconds = r.u8()?;
        }
        if len == 12 {
            micros = r.u32()?;
        }
        Ok(Self::Time {
            negative,
            days,
            hours,
            minutes,
            seconds,
            micros,
        })
    }

    /// The value as MySQL prints it in the text protocol (`NULL` for NULL).
    pub fn to_text(&self) -> String {
        match self {
            Self::Null => "NULL".to_owned(),
            Self::Int(v) => v.to_string(),
            Self::UInt(v) => v.to_string(),
            Self::Float(v) => v.to_string(),
            Self::Double(v) => v.to_string(),
            Self::Bytes(b) => String::from_utf8_lossy(b).into_owned(),
            Self::Date { year, month, day } => format!("{year:04}-{month:02}-{day:02}"),
            Self::DateTime {
                year,
                month,
                day,
                hour,
                minute,
                second,
                micros,
            } => {
                let mut s =
                    format!("{year:04}-{month:02}-{day:02} {hour:02}:{minute:02}:{second:02}");
                if *micros != 0 {
                    s.push_str(&format!(".{micros:06}"));
                }
                s
            }
            Self::Time {
                negative,
                days,
                hours,
                minutes,
                seconds,
                micros,
            } => {
                let h = u64::from(*days) * 24 + u64::from(*hours);
                let mut s = format!(
                    "{}{h:02}:{minutes:02}:{seconds:02}",
                    if *negative { "-" } else { "" }
                );
                if *micros != 0 {
                    s.push_str(&format!(".{micros:06}"));
                }
                s
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn round_trip(v: BinaryValue, ty: ColumnType, unsigned: bool) {
        let mut out = Vec::new();
        v.encode(ty, &mut out);
        let mut r = Reader::new(&out);
        assert_eq!(BinaryValue::decode(&mut r, ty, unsigned), Ok(v));
        assert!(r.is_empty());
    }

    #[test]
    fn integers_keep_width_and_sign() {
        round_trip(BinaryValue::Int(-5), ColumnType::Tiny, false);
        round_trip(BinaryValue::UInt(250), ColumnType::Tiny, true);
        round_trip(BinaryValue::Int(-300), ColumnType::Short, false);
        round_trip(BinaryValue::Int(-70000), ColumnType::Long, false);
        round_trip(BinaryValue::UInt(u64::MAX), ColumnType::LongLong, true);
        round_trip(BinaryValue::Double(1.5), ColumnType::Double, false);
        round_trip(
            BinaryValue::Bytes(b"x".to_vec()),
            ColumnType::VarString,
            false,
        );
    }

    #[test]
    fn temporal_forms() {
        round_trip(
            BinaryValue::Date {
                year: 0,
                month: 0,
                day: 0,
            },
            ColumnType::Date,
            false,
        );
        round_trip(
            BinaryValue::Date {
                year: 2024,
                month: 2,
                day: 29,
            },
            ColumnType::Date,
            false,
        );
        let dt = |h, us| BinaryValue::DateTime {
            year: 2024,
            month: 1,
            day: 2,
            hour: h,
            minute: 0,
            second: 0,
            micros: us,
        };
        for (v, len) in [(dt(0, 0), 4), (dt(3, 0), 7), (dt(3, 5), 11)] {
            let mut out = Vec::new();
            v.encode(ColumnType::DateTime, &mut out);
            assert_eq!(out[0], len);
            round_trip(v, ColumnType::Timestamp, false);
        }
        let t = BinaryValue::Time {
            negative: true,
            days: 1,
            hours: 2,
            minutes: 3,
            seconds: 4,
            micros: 5,
        };
        assert_eq!(t.to_text(), "-26:03:04.000005");
        round_trip(t, ColumnType::Time, false);
        assert!(BinaryValue::decode(&mut Reader::new(&[5]), ColumnType::Time, false).is_err());
    }
}
