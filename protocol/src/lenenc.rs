//! Primitive fields: a bounds-checked little-endian [`Reader`] and the matching writers,
//! including MySQL's length-encoded integers and strings.
//!
//! Invariant: the reader never reads past its slice; every accessor returns
//! [`ProtocolError::Truncated`] instead.

use crate::error::ProtocolError;

/// The lenenc prefix byte that stands for SQL NULL in a text row.
pub const NULL_MARKER: u8 = 0xFB;

/// A cursor over one packet payload. Reads borrow from the payload, so decoded commands and
/// strings need no copies.
#[derive(Debug, Clone)]
pub struct Reader<'a> {
    buf: &'a [u8],
    pos: usize,
}

impl<'a> Reader<'a> {
    /// Starts reading at the beginning of `buf`.
    pub fn new(buf: &'a [u8]) -> Self {
        Self { buf, pos: 0 }
    }

    /// Bytes not yet read.
    pub fn remaining(&self) -> usize {
        self.buf.len() - self.pos
    }

    /// True when every byte has been read.
    pub fn is_empty(&self) -> bool {
        self.remaining() == 0
    }

    /// The next byte without consuming it.
    pub fn peek(&self) -> Option<u8> {
        self.buf.get(self.pos).copied()
    }

    /// Takes exactly `n` bytes.
    pub fn fixed(&mut self, n: usize) -> Result<&'a [u8], ProtocolError> {
        let end = self.pos.checked_add(n).ok_or(ProtocolError::Truncated)?;
        let out = self
            .buf
            .get(self.pos..end)
            .ok_or(ProtocolError::Truncated)?;
        self.pos = end;
        Ok(out)
    }

    /// Skips `n` bytes (fillers and reserved fields).
    pub fn skip(&mut self, n: usize) -> Result<(), ProtocolError> {
        self.fixed(n).map(|_| ())
    }

    /// Takes everything left (an "EOF-terminated" string).
    pub fn rest(&mut self) -> &'a [u8] {
        let out = self.buf.get(self.pos..).unwrap_or(&[]);
        self.pos = self.buf.len();
        out
    }

    fn array<const N: usize>(&mut self) -> Result<[u8; N], ProtocolError> {
        let mut a = [0u8; N];
        a.copy_from_slice(self.fixed(N)?);
        Ok(a)
    }

    /// One byte.
    pub fn u8(&mut self) -> Result<u8, ProtocolError> {
        let b = self.peek().ok_or(ProtocolError::Truncated)?;
        self.pos += 1;
        Ok(b)
    }

    /// A 2-byte little-endian integer.
    pub fn u16(&mut self) -> Result<u16, ProtocolError> {
        self.array().map(u16::from_le_bytes)
    }

    /// A 3-byte little-endian integer.
    pub fn u24(&mut self) -> Result<u32, ProtocolError> {
        let [a, b, c] = self.array()?;
        Ok(u32::from_le_bytes([a, b, c, 0]))
    }

    /// A 4-byte little-endian integer.
    pub fn u32(&mut self) -> Result<u32, ProtocolError> {
        self.array().map(u32::from_le_bytes)
    }

    /// An 8-byte little-endian integer.
    pub fn u64(&mut self) -> Result<u64, ProtocolError> {
        self.array().map(u64::from_le_bytes)
    }

    /// A length-encoded integer. The NULL marker (0xFB) and 0xFF are not integers here.
    pub fn lenenc_int(&mut self) -> Result<u64, ProtocolError> {
        match self.u8()? {
            b @ 0..=0xFA => Ok(u64::from(b)),
            0xFC => self.u16().map(u64::from),
            0xFD => self.u24().map(u64::from),
            0xFE => self.u64(),
            _ => Err(ProtocolError::Malformed("length-encoded integer prefix")),
        }
    }

    /// A length-encoded string (length prefix, then that many bytes).
    pub fn lenenc_bytes(&mut self) -> Result<&'a [u8], ProtocolError> {
        let n = self.lenenc_int()?;
        let n = usize::try_from(n).map_err(|_| ProtocolError::Truncated)?;
        self.fixed(n)
    }

    /// A text-row cell: a length-encoded string, or `None` for the NULL marker.
    pub fn lenenc_bytes_or_null(&mut self) -> Result<Option<&'a [u8]>, ProtocolError> {
        if self.peek() == Some(NULL_MARKER) {
            self.pos += 1;
            return Ok(None);
        }
        self.lenenc_bytes().map(Some)
    }

    /// A NUL-terminated string; the NUL is consumed but not returned.
    pub fn nul_str(&mut self) -> Result<&'a [u8], ProtocolError> {
        let rest = self.buf.get(self.pos..).unwrap_or(&[]);
        let n = rest
            .iter()
            .position(|&b| b == 0)
            .ok_or(ProtocolError::Truncated)?;
        self.pos += n + 1;
        Ok(&rest[..n])
    }

    /// A NUL-terminated string, or the rest of the payload when the NUL is missing (some
    /// servers and clients omit the final terminator).
    pub fn nul_str_or_rest(&mut self) -> &'a [u8] {
        match self.nul_str() {
            Ok(s) => s,
            Err(_) => self.rest(),
        }
    }
}

/// Appends a 2-byte little-endian integer.
pub fn put_u16(out: &mut Vec<u8>, v: u16) {
    out.extend_from_slice(&v.to_le_bytes());
}

/// Appends a 3-byte little-endian integer (the high byte of `v` is dropped).
pub fn put_u24(out: &mut Vec<u8>, v: u32) {
    out.extend_from_slice(&v.to_le_bytes()[..3]);
}

/// Appends a 4-byte little-endian integer.
pub fn put_u32(out: &mut Vec<u8>, v: u32) {
    out.extend_from_slice(&v.to_le_bytes());
}

/// Appends an 8-byte little-endian integer.
pub fn put_u64(out: &mut Vec<u8>, v: u64) {
    out.extend_from_slice(&v.to_le_bytes());
}

/// How many bytes [`put_lenenc_int`] writes for `v`.
pub fn lenenc_int_len(v: u64) -> usize {
    match v {
        0..=0xFA => 1,
        0xFB..=0xFFFF => 3,
        0x1_0000..=0xFF_FFFF => 4,
        _ => 9,
    }
}

/// Appends a length-encoded integer in its shortest form.
pub fn put_lenenc_int(out: &mut Vec<u8>, v: u64) {
    match v {
        0..=0xFA => out.push(v as u8),
        0xFB..=0xFFFF => {
            out.push(0xFC);
            put_u16(out, v as u16);
        }
        0x1_0000..=0xFF_FFFF => {
            out.push(0xFD);
            put_u24(out, v as u32);
        }
        _ => {
            out.push(0xFE);
            put_u64(out, v);
        }
    }
}

/// Appends a length-encoded string.
pub fn put_lenenc_bytes(out: &mut Vec<u8>, s: &[u8]) {
    put_lenenc_int(out, s.len() as u64);
    out.extend_from_slice(s);
}

/// Appends `s` and a NUL terminator. A NUL inside `s` would end the string early on the
/// other side; callers pass names, which never contain one.
pub fn put_nul_str(out: &mut Vec<u8>, s: &[u8]) {
    out.extend_from_slice(s);
    out.push(0);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lenenc_int_boundaries_round_trip() {
        for v in [
            0,
            0xFA,
            0xFB,
            0xFFFF,
            0x1_0000,
            0xFF_FFFF,
            0x100_0000,
            u64::MAX,
        ] {
            let mut out = Vec::new();
            put_lenenc_int(&mut out, v);
            assert_eq!(out.len(), lenenc_int_len(v));
            let mut r = Reader::new(&out);
            assert_eq!(r.lenenc_int(), Ok(v));
            assert!(r.is_empty());
        }
    }

    #[test]
    fn truncated_and_malformed_inputs_are_errors() {
        assert_eq!(
            Reader::new(&[0xFC, 1]).lenenc_int(),
            Err(ProtocolError::Truncated)
        );
        assert!(matches!(
            Reader::new(&[0xFF]).lenenc_int(),
            Err(ProtocolError::Malformed(_))
        ));
        assert_eq!(Reader::new(b"abc").nul_str(), Err(ProtocolError::Truncated));
        let huge = [0xFE, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF];
        assert_eq!(
            Reader::new(&huge).lenenc_bytes(),
            Err(ProtocolError::Truncated)
        );
        assert_eq!(
            Reader::new(&[1]).fixed(usize::MAX),
            Err(ProtocolError::Truncated)
        );
    }

    #[test]
    fn strings() {
        let mut r = Reader::new(b"ab\0\x03xyz\xFBtail");
        assert_eq!(r.nul_str(), Ok(&b"ab"[..]));
        assert_eq!(r.lenenc_bytes_or_null(), Ok(Some(&b"xyz"[..])));
        assert_eq!(r.lenenc_bytes_or_null(), Ok(None));
        assert_eq!(r.nul_str_or_rest(), b"tail");
        assert!(r.is_empty());
    }
}
