//! Character sets of string literals: the `_charset 'text'` introducers, and the check that
//! bytes stored into a `utf8mb4` text column are well-formed (1366 in strict mode, with
//! MySQL's rendering of the offending bytes).

use sqlparser::ast::{self, Expr};

use crate::error::{ErrorCode, SqlError, SqlResult};
use crate::sql::bytes::restore;
use crate::value::Value;

/// The value of `introducer 'text'` (or `introducer X'hex'`): `_binary`, `_utf8mb4` (and
/// its aliases `_utf8`, `_utf8mb3`) keep the bytes as given; `_latin1` converts them from
/// latin1 (MySQL's, i.e. cp1252) to utf8mb4, the connection's character set.
pub fn introduced(introducer: &str, value: &Expr) -> SqlResult<Value> {
    let bytes = match value {
        Expr::Value(v) => match &v.value {
            ast::Value::SingleQuotedString(s) | ast::Value::DoubleQuotedString(s) => {
                restore(s).into_owned()
            }
            ast::Value::HexStringLiteral(h) => {
                crate::sql::eval::unhex(h).ok_or_else(|| SqlError::parse(h))?
            }
            other => return Err(SqlError::parse(&other.to_string())),
        },
        other => return Err(SqlError::parse(&other.to_string())),
    };
    let name = introducer.trim_start_matches('_').to_ascii_lowercase();
    match name.as_str() {
        "binary" | "utf8mb4" | "utf8" | "utf8mb3" => Ok(Value::Bytes(bytes)),
        "latin1" => Ok(Value::str(&latin1_to_utf8(&bytes))),
        _ => Err(SqlError::new(
            ErrorCode::UnknownCharacterSet,
            format!("Unknown character set: '{name}'"),
        )),
    }
}

/// The characters MySQL's latin1 (Windows-1252) gives bytes 0x80..=0x9F; the five bytes
/// cp1252 leaves undefined map to the control characters of the same number, as MySQL does.
const CP1252_HIGH: [char; 32] = [
    '\u{20AC}', '\u{0081}', '\u{201A}', '\u{0192}', '\u{201E}', '\u{2026}', '\u{2020}', '\u{2021}',
    '\u{02C6}', '\u{2030}', '\u{0160}', '\u{2039}', '\u{0152}', '\u{008D}', '\u{017D}', '\u{008F}',
    '\u{0090}', '\u{2018}', '\u{2019}', '\u{201C}', '\u{201D}', '\u{2022}', '\u{2013}', '\u{2014}',
    '\u{02DC}', '\u{2122}', '\u{0161}', '\u{203A}', '\u{0153}', '\u{009D}', '\u{017E}', '\u{0178}',
];

/// Converts latin1 bytes to UTF-8 text; every byte is a character.
fn latin1_to_utf8(b: &[u8]) -> String {
    b.iter()
        .map(|&c| match c {
            0x80..=0x9F => CP1252_HIGH[usize::from(c - 0x80)],
            _ => char::from(c),
        })
        .collect()
}

/// 1366 unless `v`, about to be stored into the utf8mb4 text column `column`, is
/// well-formed UTF-8. `row` counts from 1 within the statement.
pub fn check_utf8(v: &Value, column: &str, row: u64) -> SqlResult<()> {
    let Value::Bytes(b) = v else { return Ok(()) };
    match std::str::from_utf8(b) {
        Ok(_) => Ok(()),
        Err(e) => Err(SqlError::new(
            ErrorCode::TruncatedWrongValueForField,
            format!(
                "Incorrect string value: '{}' for column '{column}' at row {row}",
                printable(&b[e.valid_up_to()..])
            ),
        )),
    }
}

/// MySQL's `convert_to_printable` of at most 6 bytes: printable ASCII as is, every other byte
/// as `\xHH`, then `...` when bytes remain.
fn printable(b: &[u8]) -> String {
    let mut s = String::new();
    for &c in b.iter().take(6) {
        if (0x20..0x7F).contains(&c) {
            s.push(char::from(c));
        } else {
            s.push_str(&format!("\\x{c:02X}"));
        }
    }
    if b.len() > 6 {
        s.push_str("...");
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn latin1_maps_every_byte() {
        assert_eq!(latin1_to_utf8(b"A\xE9\x80\xFF"), "Aé€ÿ");
    }

    #[test]
    fn utf8_check_renders_like_mysql() {
        let e = check_utf8(&Value::Bytes(b"A\xFFB".to_vec()), "c", 1).unwrap_err();
        assert_eq!(e.code, ErrorCode::TruncatedWrongValueForField);
        assert_eq!(
            e.message,
            "Incorrect string value: '\\xFFB' for column 'c' at row 1"
        );
        let long = check_utf8(&Value::Bytes(b"\xF0\x28\x8C\x28abcdef".to_vec()), "c", 2);
        assert_eq!(
            long.unwrap_err().message,
            "Incorrect string value: '\\xF0(\\x8C(ab...' for column 'c' at row 2"
        );
        assert!(check_utf8(&Value::str("é"), "c", 1).is_ok());
        assert!(check_utf8(&Value::Int(1), "c", 1).is_ok());
    }
}
