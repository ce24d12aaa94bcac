//! Statement text is bytes: [`decode`] turns a COM_QUERY into a `str` sqlparser can read
//! without altering a byte, and [`restore`] gives a string literal's bytes back. The two are
//! inverse: `restore(&decode(b)) == b` for every byte string `b`.
//!
//! A byte that is not part of a well-formed UTF-8 sequence becomes the character
//! `ESCAPE_BASE + byte`, taken from the last 256 code points of plane 16 (private use). So
//! that the mapping stays one-to-one, a character of that range that the client did send
//! is escaped the same way, byte by byte.

use std::borrow::Cow;

/// The first of the 256 code points that stand for one raw byte each (U+10FF00).
const ESCAPE_BASE: u32 = 0x10_FF00;

/// The character standing for raw byte `b`.
fn escape(b: u8) -> char {
    char::from_u32(ESCAPE_BASE + u32::from(b)).unwrap_or(char::REPLACEMENT_CHARACTER)
}

/// The lead byte of every escape character's UTF-8 form (U+10FF00..=U+10FFFF are
/// F4 8F BC 80..=F4 8F BF BF): text without it has none, which a byte scan tells cheaply.
const ESCAPE_LEAD: u8 = 0xF4;

/// Whether `s` holds an escape character.
fn has_escapes(s: &str) -> bool {
    s.as_bytes().contains(&ESCAPE_LEAD) && s.chars().any(|c| unescape(c).is_some())
}

/// The raw byte `c` stands for, if it is one of the escape characters.
fn unescape(c: char) -> Option<u8> {
    u32::from(c)
        .checked_sub(ESCAPE_BASE)
        .and_then(|b| u8::try_from(b).ok())
}

/// Appends well-formed `s`, escaping the characters of the escape range byte by byte.
fn push_valid(out: &mut String, s: &str) {
    for c in s.chars() {
        if unescape(c).is_some() {
            let mut buf = [0u8; 4];
            for b in c.encode_utf8(&mut buf).bytes() {
                out.push(escape(b));
            }
        } else {
            out.push(c);
        }
    }
}

/// The statement text of `bytes`: borrowed when it is UTF-8 without escape-range
/// characters (the common case), else with every other byte mapped to an escape character.
pub fn decode(bytes: &[u8]) -> Cow<'_, str> {
    if let Ok(s) = std::str::from_utf8(bytes) {
        if !has_escapes(s) {
            return Cow::Borrowed(s);
        }
    }
    let mut out = String::with_capacity(bytes.len() + 8);
    let mut rest = bytes;
    loop {
        match std::str::from_utf8(rest) {
            Ok(s) => {
                push_valid(&mut out, s);
                break;
            }
            Err(e) => {
                let (valid, after) = rest.split_at(e.valid_up_to());
                push_valid(&mut out, std::str::from_utf8(valid).unwrap_or_default());
                let bad = e.error_len().unwrap_or(after.len());
                for &b in &after[..bad] {
                    out.push(escape(b));
                }
                rest = &after[bad..];
            }
        }
    }
    Cow::Owned(out)
}

/// A statement's bytes without the NUL bytes that end some clients' COM_QUERY text
/// (mariadb-slap sends one): MySQL's lexer reads a NUL at the end as the end of the input.
pub fn without_trailing_nul(mut bytes: &[u8]) -> &[u8] {
    while let [rest @ .., 0] = bytes {
        bytes = rest;
    }
    bytes
}

/// The bytes a decoded string (a literal's text, an identifier) stands for.
pub fn restore(s: &str) -> Cow<'_, [u8]> {
    if !has_escapes(s) {
        return Cow::Borrowed(s.as_bytes());
    }
    let mut out = Vec::with_capacity(s.len());
    for c in s.chars() {
        match unescape(c) {
            Some(b) => out.push(b),
            None => {
                let mut buf = [0u8; 4];
                out.extend_from_slice(c.encode_utf8(&mut buf).as_bytes());
            }
        }
    }
    Cow::Owned(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn utf8_text_is_borrowed_unchanged() {
        let s = "SELECT 'héllo', `ç`";
        assert!(matches!(decode(s.as_bytes()), Cow::Borrowed(_)));
        assert_eq!(restore(s), s.as_bytes());
    }

    #[test]
    fn invalid_bytes_round_trip() {
        let cases: Vec<Vec<u8>> = vec![
            b"INSERT INTO t VALUES (2, 'A\xFFB')".to_vec(),
            vec![0xFF, 0xFE, 0x00, b'\'', 0xC3],
            vec![0xE3, b'\'', 0x80, 0x80],
            "\u{10FF41}x\u{10FFFF}".as_bytes().to_vec(),
            (0..=255u8).collect(),
        ];
        for b in cases {
            let d = decode(&b);
            assert_eq!(restore(&d), b.as_slice(), "{b:?}");
        }
    }

    #[test]
    fn trailing_nul_ends_the_text() {
        assert_eq!(without_trailing_nul(b"SELECT 1\0"), b"SELECT 1");
        assert_eq!(without_trailing_nul(b"SELECT '\0'"), b"SELECT '\0'");
        assert_eq!(without_trailing_nul(b"\0\0"), b"");
    }

    #[test]
    fn ascii_structure_survives() {
        let d = decode(b"SELECT '\xE3', 1");
        assert!(d.starts_with("SELECT '"));
        assert!(d.ends_with("', 1"));
        assert_eq!(d.chars().filter(|c| *c == '\'').count(), 2);
    }
}
