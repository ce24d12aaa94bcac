//! String and hash functions as pure functions of their arguments' bytes: `CHAR_LENGTH`,
//! `LEFT`, `RIGHT`, `SUBSTRING`, `UPPER`, `LOWER` (by characters of utf8mb4 text, or by bytes
//! of a binary string), `SUBSTRING_INDEX`, `HEX`, `CRC32`, `MD5`, `SHA1`, `SHA2`.

use sha1::Digest as _;

/// The start offset of each unit of `s`: each byte of a binary string; each character of
/// utf8mb4 text, where a byte that is not part of a well-formed character is a unit of its own
/// (so no function ever rewrites it).
fn unit_offsets(s: &[u8], binary: bool) -> Vec<usize> {
    if binary {
        return (0..s.len()).collect();
    }
    let mut out = Vec::with_capacity(s.len());
    let mut at = 0;
    for chunk in s.utf8_chunks() {
        out.extend(chunk.valid().char_indices().map(|(i, _)| at + i));
        at += chunk.valid().len();
        out.extend(at..at + chunk.invalid().len());
        at += chunk.invalid().len();
    }
    out
}

/// `CHAR_LENGTH(s)` of utf8mb4 text (a binary string's is its `LENGTH`).
pub fn char_length(s: &[u8]) -> usize {
    s.utf8_chunks()
        .map(|c| c.valid().chars().count() + c.invalid().len())
        .sum()
}

/// `LEFT(s, n)`: the first `n` characters, or bytes of a binary string (none for `n <= 0`).
pub fn left(s: &[u8], n: i64, binary: bool) -> Vec<u8> {
    let offsets = unit_offsets(s, binary);
    let n = usize::try_from(n.max(0)).unwrap_or(usize::MAX);
    let end = offsets.get(n).copied().unwrap_or(s.len());
    s[..end].to_vec()
}

/// `RIGHT(s, n)`: the last `n` characters, or bytes of a binary string (none for `n <= 0`).
pub fn right(s: &[u8], n: i64, binary: bool) -> Vec<u8> {
    let offsets = unit_offsets(s, binary);
    let n = usize::try_from(n.max(0)).unwrap_or(usize::MAX);
    let start = match offsets.len().checked_sub(n) {
        Some(i) => offsets.get(i).copied().unwrap_or(s.len()),
        None => 0,
    };
    s[start..].to_vec()
}

/// `SUBSTRING(s, pos[, len])`: from the `pos`-th unit (1-based; negative counts from the end;
/// 0 gives nothing), at most `len` units (all when absent, nothing when `len <= 0`); units
/// are characters, or bytes of a binary string.
pub fn substring(s: &[u8], pos: i64, len: Option<i64>, binary: bool) -> Vec<u8> {
    let offsets = unit_offsets(s, binary);
    let n = i64::try_from(offsets.len()).unwrap_or(i64::MAX);
    let start = match pos {
        0 => return Vec::new(),
        p if p > 0 => p - 1,
        p => n.saturating_add(p),
    };
    if start < 0 || start >= n {
        return Vec::new();
    }
    let end = match len {
        Some(l) if l <= 0 => return Vec::new(),
        Some(l) => start.saturating_add(l).min(n),
        None => n,
    };
    let byte_at = |unit: i64| {
        usize::try_from(unit)
            .ok()
            .and_then(|u| offsets.get(u).copied())
            .unwrap_or(s.len())
    };
    s[byte_at(start)..byte_at(end)].to_vec()
}

/// Folds the well-formed characters of utf8mb4 text with `fold`, keeping every other byte.
fn fold_text(s: &[u8], fold: fn(&str) -> String) -> Vec<u8> {
    let mut out = Vec::with_capacity(s.len());
    for chunk in s.utf8_chunks() {
        out.extend_from_slice(fold(chunk.valid()).as_bytes());
        out.extend_from_slice(chunk.invalid());
    }
    out
}

/// `UPPER(s)` of utf8mb4 text (a binary string is left as it is, as MySQL does).
pub fn upper(s: &[u8]) -> Vec<u8> {
    fold_text(s, str::to_uppercase)
}

/// `LOWER(s)` of utf8mb4 text (a binary string is left as it is, as MySQL does).
pub fn lower(s: &[u8]) -> Vec<u8> {
    fold_text(s, str::to_lowercase)
}

/// `SUBSTRING_INDEX(s, delim, count)`: what comes before the `count`-th delimiter from the
/// left (count > 0) or after the `-count`-th from the right (count < 0); empty for 0 or an
/// empty delimiter.
pub fn substring_index(s: &[u8], delim: &[u8], count: i64) -> Vec<u8> {
    if count == 0 || delim.is_empty() {
        return Vec::new();
    }
    let mut at = Vec::new();
    let mut i = 0;
    while i + delim.len() <= s.len() {
        if &s[i..i + delim.len()] == delim {
            at.push(i);
            i += delim.len();
        } else {
            i += 1;
        }
    }
    let want = usize::try_from(count.unsigned_abs()).unwrap_or(usize::MAX);
    if want > at.len() {
        return s.to_vec();
    }
    if count > 0 {
        s[..at[want - 1]].to_vec()
    } else {
        s[at[at.len() - want] + delim.len()..].to_vec()
    }
}

/// Upper-case hexadecimal of bytes (`HEX('abc')` = `616263`).
pub fn hex_upper(bytes: &[u8]) -> String {
    let mut out = Vec::with_capacity(bytes.len().saturating_mul(2));
    hex_upper_into(&mut out, bytes);
    String::from_utf8(out).unwrap_or_default()
}

/// Appends the upper-case hexadecimal of `bytes` to `out` (two ASCII digits a byte).
pub fn hex_upper_into(out: &mut Vec<u8>, bytes: &[u8]) {
    const DIGITS: &[u8; 16] = b"0123456789ABCDEF";
    out.extend(
        bytes
            .iter()
            .flat_map(|&b| [DIGITS[usize::from(b >> 4)], DIGITS[usize::from(b & 15)]]),
    );
}

fn hex_lower(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// `CRC32(s)`: the IEEE 802.3 CRC-32 (zlib's), as MySQL computes it.
pub fn crc32(bytes: &[u8]) -> u32 {
    let mut crc = !0u32;
    for &b in bytes {
        crc ^= u32::from(b);
        for _ in 0..8 {
            crc = if crc & 1 == 1 {
                (crc >> 1) ^ 0xEDB8_8320
            } else {
                crc >> 1
            };
        }
    }
    !crc
}

/// `SHA1(s)`: 40 lower-case hex digits.
pub fn sha1_hex(bytes: &[u8]) -> String {
    hex_lower(&sha1::Sha1::digest(bytes))
}

/// `SHA2(s, bits)` for 224, 256 (or 0), 384 and 512 bits; None (NULL) for other lengths.
pub fn sha2_hex(bytes: &[u8], bits: i64) -> Option<String> {
    Some(match bits {
        224 => hex_lower(&sha2::Sha224::digest(bytes)),
        0 | 256 => hex_lower(&sha2::Sha256::digest(bytes)),
        384 => hex_lower(&sha2::Sha384::digest(bytes)),
        512 => hex_lower(&sha2::Sha512::digest(bytes)),
        _ => return None,
    })
}

/// `MD5(s)`: 32 lower-case hex digits (RFC 1321).
pub fn md5_hex(bytes: &[u8]) -> String {
    const S: [u32; 64] = [
        7, 12, 17, 22, 7, 12, 17, 22, 7, 12, 17, 22, 7, 12, 17, 22, 5, 9, 14, 20, 5, 9, 14, 20, 5,
        9, 14, 20, 5, 9, 14, 20, 4, 11, 16, 23, 4, 11, 16, 23, 4, 11, 16, 23, 4, 11, 16, 23, 6, 10,
        15, 21, 6, 10, 15, 21, 6, 10, 15, 21, 6, 10, 15, 21,
    ];
    let k: Vec<u32> = (0..64)
        .map(|i: i32| ((f64::from(i) + 1.0).sin().abs() * 4_294_967_296.0) as u32)
        .collect();
    let mut msg = bytes.to_vec();
    let bit_len = (bytes.len() as u64).wrapping_mul(8);
    msg.push(0x80);
    while msg.len() % 64 != 56 {
        msg.push(0);
    }
    msg.extend_from_slice(&bit_len.to_le_bytes());
    let mut h: [u32; 4] = [0x6745_2301, 0xefcd_ab89, 0x98ba_dcfe, 0x1032_5476];
    for chunk in msg.chunks_exact(64) {
        let m: Vec<u32> = chunk
            .chunks_exact(4)
            .map(|w| u32::from_le_bytes([w[0], w[1], w[2], w[3]]))
            .collect();
        let [mut a, mut b, mut c, mut d] = h;
        for i in 0..64 {
            let (f, g) = match i / 16 {
                0 => ((b & c) | (!b & d), i),
                1 => ((d & b) | (!d & c), (5 * i + 1) % 16),
                2 => (b ^ c ^ d, (3 * i + 5) % 16),
                _ => (c ^ (b | !d), (7 * i) % 16),
            };
            let rotated = a
                .wrapping_add(f)
                .wrapping_add(k[i])
                .wrapping_add(m[g])
                .rotate_left(S[i]);
            a = d;
            d = c;
            c = b;
            b = b.wrapping_add(rotated);
        }
        for (x, y) in h.iter_mut().zip([a, b, c, d]) {
            *x = x.wrapping_add(y);
        }
    }
    h.iter().map(|w| hex_lower(&w.to_le_bytes())).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn known_digests() {
        assert_eq!(md5_hex(b""), "d41d8cd98f00b204e9800998ecf8427e");
        assert_eq!(md5_hex(b"abc"), "900150983cd24fb0d6963f7d28e17f72");
        assert_eq!(md5_hex(&[b'a'; 100]), "36a92cc94a9e0fa21f625f8bfb007adf");
        assert_eq!(sha1_hex(b"abc"), "a9993e364706816aba3e25717850c26c9cd0d89d");
        assert_eq!(
            sha2_hex(b"abc", 256).unwrap(),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
        assert_eq!(sha2_hex(b"abc", 7), None);
        assert_eq!(crc32(b"MySQL"), 3_259_397_556);
        assert_eq!(hex_upper(b"abc"), "616263");
    }

    #[test]
    fn left_right_and_substring_index_count_characters() {
        assert_eq!(left("héllo".as_bytes(), 2, false), "hé".as_bytes());
        assert_eq!(right("héllo".as_bytes(), 4, false), "éllo".as_bytes());
        assert_eq!(left(b"abc", -1, false), b"");
        assert_eq!(right(b"abc", 10, false), b"abc");
        assert_eq!(substring_index(b"www.mysql.com", b".", 2), b"www.mysql");
        assert_eq!(substring_index(b"www.mysql.com", b".", -2), b"mysql.com");
        assert_eq!(substring_index(b"www.mysql.com", b".", 5), b"www.mysql.com");
        assert_eq!(substring_index(b"abc", b"", 1), b"");
    }

    #[test]
    fn binary_strings_are_cut_by_bytes_and_text_keeps_stray_bytes() {
        let blob = b"\xE6\x97\xFF\x00";
        assert_eq!(substring(blob, 1, Some(3), true), b"\xE6\x97\xFF");
        assert_eq!(left("héllo".as_bytes(), 2, true), b"h\xC3");
        assert_eq!(right(blob, 1, true), b"\x00");
        // Text with a stray byte: the byte is one unit, passed through unchanged.
        let text = b"a\xFF\xC3\xA9b";
        assert_eq!(char_length(text), 4);
        assert_eq!(substring(text, 2, Some(2), false), b"\xFF\xC3\xA9");
        assert_eq!(upper(text), b"A\xFF\xC3\x89B");
        assert_eq!(lower(b"A\xFFB"), b"a\xFFb");
        assert_eq!(
            substring("日本語".as_bytes(), -2, None, false),
            "本語".as_bytes()
        );
        assert_eq!(substring(b"abc", 0, None, false), b"");
        assert_eq!(substring(b"abc", 2, Some(-1), false), b"");
        assert_eq!(substring(b"abc", i64::MIN, Some(i64::MAX), false), b"");
        assert_eq!(substring(b"abc", 1, Some(i64::MAX), false), b"abc");
    }
}
