//! The salted hash caching_sha2_password stores in `mysql.user.authentication_string`:
//! `$A$005$` (format `A`, 5 × 1000 rounds), a 20-character salt and the 43-character
//! SHA-256 crypt digest of the password with that salt (Ulrich Drepper's "Unix crypt using
//! SHA-256", which MySQL's `caching_sha2_password` plugin uses with the whole 20-character
//! salt where glibc's `$5$` cuts it to 16).

use rand::Rng;
use sha2::{Digest, Sha256};

/// Rounds of the digest: MySQL's default `caching_sha2_password_digest_rounds`.
const ROUNDS: usize = 5000;
/// Salt length, as MySQL generates it.
const SALT_LEN: usize = 20;
/// crypt's base-64 alphabet.
const ALPHABET: &[u8; 64] = b"./0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";

/// SHA-256 crypt of `key` with `salt` over `rounds` rounds: the 43-character digest.
pub fn digest(key: &[u8], salt: &[u8], rounds: usize) -> String {
    // B = SHA256(key salt key).
    let b = Sha256::new()
        .chain_update(key)
        .chain_update(salt)
        .chain_update(key)
        .finalize();
    // A = SHA256(key salt, B repeated to the key's length, then B or key per bit of len).
    let mut a = Sha256::new().chain_update(key).chain_update(salt);
    let mut left = key.len();
    while left > 32 {
        a.update(b);
        left -= 32;
    }
    a.update(&b[..left]);
    let mut n = key.len();
    while n > 0 {
        if n & 1 == 1 {
            a.update(b);
        } else {
            a.update(key);
        }
        n >>= 1;
    }
    let a = a.finalize();
    // P: SHA256(key repeated len(key) times), repeated to the key's length.
    let mut dp = Sha256::new();
    for _ in 0..key.len() {
        dp.update(key);
    }
    let p = repeat_to(&dp.finalize(), key.len());
    // S: SHA256(salt repeated 16 + A[0] times), repeated to the salt's length.
    let mut ds = Sha256::new();
    for _ in 0..16 + usize::from(a[0]) {
        ds.update(salt);
    }
    let s = repeat_to(&ds.finalize(), salt.len());
    let mut c: [u8; 32] = a.into();
    for i in 0..rounds {
        let mut h = Sha256::new();
        if i % 2 == 1 {
            h.update(&p);
        } else {
            h.update(c);
        }
        if i % 3 != 0 {
            h.update(&s);
        }
        if i % 7 != 0 {
            h.update(&p);
        }
        if i % 2 == 1 {
            h.update(c);
        } else {
            h.update(&p);
        }
        c = h.finalize().into();
    }
    encode(&c)
}

fn repeat_to(block: &[u8], len: usize) -> Vec<u8> {
    block.iter().copied().cycle().take(len).collect()
}

/// crypt's byte shuffle and base-64 of a SHA-256 digest.
fn encode(c: &[u8; 32]) -> String {
    const ORDER: [(usize, usize, usize); 10] = [
        (0, 10, 20),
        (21, 1, 11),
        (12, 22, 2),
        (3, 13, 23),
        (24, 4, 14),
        (15, 25, 5),
        (6, 16, 26),
        (27, 7, 17),
        (18, 28, 8),
        (9, 19, 29),
    ];
    let mut out = String::with_capacity(43);
    let mut put = |w: u32, n: usize| {
        let mut w = w;
        for _ in 0..n {
            out.push(char::from(ALPHABET[(w & 0x3f) as usize]));
            w >>= 6;
        }
    };
    for (x, y, z) in ORDER {
        put(
            (u32::from(c[x]) << 16) | (u32::from(c[y]) << 8) | u32::from(c[z]),
            4,
        );
    }
    put((u32::from(c[31]) << 8) | u32::from(c[30]), 3);
    out
}

/// A fresh salt: 20 printable ASCII characters other than `$` and the quotes and backslash
/// (MySQL draws 7-bit bytes and replaces NUL and `$`; these keep the stored string readable
/// and quotable as it is in SHOW CREATE USER).
fn new_salt() -> Vec<u8> {
    let mut rng = rand::rng();
    (0..SALT_LEN)
        .map(|_| loop {
            let b: u8 = rng.random_range(0x21..0x7f);
            if !matches!(b, b'$' | b'\'' | b'"' | b'\\') {
                break b;
            }
        })
        .collect()
}

/// The `authentication_string` for `password` with a fresh salt (empty for an empty
/// password, as MySQL stores it).
pub fn authentication_string(password: &[u8]) -> String {
    if password.is_empty() {
        return String::new();
    }
    let salt = new_salt();
    format!(
        "$A${:03X}${}{}",
        ROUNDS / 1000,
        String::from_utf8_lossy(&salt),
        digest(password, &salt, ROUNDS)
    )
}

/// Whether `password` matches a stored `$A$` string (what MySQL's full authentication
/// checks).
pub fn verify(stored: &str, password: &[u8]) -> bool {
    let Some(rest) = stored.strip_prefix("$A$") else {
        return false;
    };
    let Some((rounds, tail)) = rest.split_once('$') else {
        return false;
    };
    let Ok(k) = usize::from_str_radix(rounds, 16) else {
        return false;
    };
    if tail.len() != SALT_LEN + 43 || !tail.is_char_boundary(SALT_LEN) {
        return false;
    }
    let (salt, hash) = tail.split_at(SALT_LEN);
    digest(password, salt.as_bytes(), k * 1000) == hash
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Vectors computed with glibc's `crypt()` and `$5$rounds=5000$<salt>$` (salts of at
    /// most 16 characters, where glibc and MySQL agree).
    #[test]
    fn digests_match_glibc_sha256_crypt() {
        assert_eq!(
            digest(b"Hello world!", b"saltstring", 5000),
            "5B8vYYiY.CVt1RlTTf8KbXBH3hsxY/GNooZaBBGWEc5"
        );
        assert_eq!(
            digest(b"pw", b"abcdefghijklmnop", 5000),
            "gu.71QnGu.GrGbdJF.mj20x/mWJF1VliZRmeYNpAtDB"
        );
        assert_eq!(
            digest(
                b"a much longer password than thirty-two bytes, to use two blocks",
                b"0123456789abcdef",
                5000
            ),
            "5mSME/Qy7SrldgwwS1AE4EevD9kwt0G8rWNzMWn1UcA"
        );
    }

    #[test]
    fn stored_strings_have_mysqls_shape_and_verify() {
        let a = authentication_string(b"secret");
        assert!(a.starts_with("$A$005$"), "{a}");
        assert_eq!(a.len(), 7 + 20 + 43);
        assert!(verify(&a, b"secret"));
        assert!(!verify(&a, b"Secret"));
        assert_ne!(a, authentication_string(b"secret"), "salted");
        assert_eq!(authentication_string(b""), "");
    }
}
