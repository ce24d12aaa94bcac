//! Password scrambles of `mysql_native_password` and `caching_sha2_password` (fast path),
//! for both sides: what the server stores, what the client sends, and the server's check.
//!
//! The server never stores or sees the password: it keeps a double hash and verifies that the
//! response, unmasked with the nonce, hashes to it.

use sha1::{Digest, Sha1};
use sha2::Sha256;

/// The length of the nonce both plugins use.
pub const NONCE_LEN: usize = 20;

/// Turns 20 random bytes into a nonce the way MySQL shapes its scramble: 7-bit bytes with
/// neither NUL nor `$`, because some clients read the nonce as a NUL-terminated string and
/// `$` delimits fields in stored hashes. The caller supplies the randomness (this crate has
/// no RNG).
pub fn nonce_from_random(random: [u8; NONCE_LEN]) -> [u8; NONCE_LEN] {
    random.map(|b| match b & 0x7F {
        0 | b'$' => (b & 0x7F) + 1,
        c => c,
    })
}

/// The nonce as the plugins hash it: at most 20 bytes, so a NUL-terminated 21-byte copy (as in
/// an AuthSwitchRequest) gives the same result.
fn nonce20(nonce: &[u8]) -> &[u8] {
    &nonce[..nonce.len().min(NONCE_LEN)]
}

fn sha1(parts: &[&[u8]]) -> [u8; 20] {
    let mut h = Sha1::new();
    for p in parts {
        h.update(p);
    }
    h.finalize().into()
}

fn sha256(parts: &[&[u8]]) -> [u8; 32] {
    let mut h = Sha256::new();
    for p in parts {
        h.update(p);
    }
    h.finalize().into()
}

fn xor<const N: usize>(a: &[u8; N], b: &[u8; N]) -> [u8; N] {
    let mut out = [0u8; N];
    for (o, (x, y)) in out.iter_mut().zip(a.iter().zip(b)) {
        *o = x ^ y;
    }
    out
}

/// Compares without an early exit, so timing does not reveal how many bytes matched.
fn ct_eq(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

/// `mysql_native_password`'s stored hash: SHA1(SHA1(password)) (what `mysql.user` holds,
/// hex-encoded with a `*`).
pub fn native_password_hash(password: &[u8]) -> [u8; 20] {
    sha1(&[&sha1(&[password])])
}

/// The client's `mysql_native_password` response:
/// SHA1(password) XOR SHA1(nonce || SHA1(SHA1(password))). An empty password sends an empty
/// response.
pub fn native_password_scramble(password: &[u8], nonce: &[u8]) -> Vec<u8> {
    if password.is_empty() {
        return Vec::new();
    }
    let h1 = sha1(&[password]);
    let h2 = sha1(&[&h1]);
    xor(&h1, &sha1(&[nonce20(nonce), &h2])).to_vec()
}

/// The server's `mysql_native_password` check against the stored double hash. Only a
/// 20-byte response can match; accounts without a password (empty response) are the caller's
/// case to handle.
pub fn native_password_verify(stored: &[u8; 20], nonce: &[u8], response: &[u8]) -> bool {
    let Ok(response) = <&[u8; 20]>::try_from(response) else {
        return false;
    };
    let h1 = xor(response, &sha1(&[nonce20(nonce), stored]));
    ct_eq(&sha1(&[&h1]), stored)
}

/// `caching_sha2_password`'s fast-auth cache entry: SHA256(SHA256(password)).
pub fn caching_sha2_hash(password: &[u8]) -> [u8; 32] {
    sha256(&[&sha256(&[password])])
}

/// The client's `caching_sha2_password` response:
/// SHA256(password) XOR SHA256(SHA256(SHA256(password)) || nonce). An empty password sends an
/// empty response.
pub fn caching_sha2_scramble(password: &[u8], nonce: &[u8]) -> Vec<u8> {
    if password.is_empty() {
        return Vec::new();
    }
    let h1 = sha256(&[password]);
    let h2 = sha256(&[&h1]);
    xor(&h1, &sha256(&[&h2, nonce20(nonce)])).to_vec()
}

/// The server's `caching_sha2_password` fast-path check against the cached double hash; only
/// a 32-byte response can match.
pub fn caching_sha2_verify(stored: &[u8; 32], nonce: &[u8], response: &[u8]) -> bool {
    let Ok(response) = <&[u8; 32]>::try_from(response) else {
        return false;
    };
    let h1 = xor(response, &sha256(&[stored, nonce20(nonce)]));
    ct_eq(&sha256(&[&h1]), stored)
}

#[cfg(test)]
mod tests {
    use super::*;

    // Vectors computed independently with python3's hashlib:
    //   sha1 = lambda b: hashlib.sha1(b).digest(); sha256 = lambda b: hashlib.sha256(b).digest()
    //   pw = b'secret'; nonce = bytes(range(1, 21))
    //   sha1(sha1(pw)).hex()
    //   bytes(a ^ b for a, b in zip(sha1(pw), sha1(nonce + sha1(sha1(pw))))).hex()
    //   sha256(sha256(pw)).hex()
    //   bytes(a ^ b for a, b in zip(sha256(pw), sha256(sha256(sha256(pw)) + nonce))).hex()
    // The first is also MySQL's well-known PASSWORD('secret') = *14E65567...9EE7.
    const NATIVE_HASH: &str = "14e65567abdb5135d0cfd9a70b3032c179a49ee7";
    const NATIVE_SCRAMBLE: &str = "b32bb3a583e1340c0a1108d58b1be49781ad8c2f";
    const SHA2_HASH: &str = "3881219d087dd9c634373fd33dfa33a2cb6bfc6c520b64b8bb60ef2ceb534ae7";
    const SHA2_SCRAMBLE: &str = "746ebe205d56a0707acb3e796e834e0dd7b1d61743b26bd5202c7a623230c7c9";

    fn hex(b: &[u8]) -> String {
        b.iter().map(|x| format!("{x:02x}")).collect()
    }

    fn nonce() -> Vec<u8> {
        (1..=20).collect()
    }

    #[test]
    fn nonces_avoid_nul_and_dollar() {
        let n = nonce_from_random([
            0, b'$', 0x80, 0xA4, 0xFF, 7, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
        ]);
        assert!(n.iter().all(|&b| b != 0 && b != b'$' && b < 0x80));
        assert_eq!(&n[..6], &[1, b'%', 1, b'%', 0x7F, 7]);
    }

    #[test]
    fn native_vectors() {
        assert_eq!(hex(&native_password_hash(b"secret")), NATIVE_HASH);
        let resp = native_password_scramble(b"secret", &nonce());
        assert_eq!(hex(&resp), NATIVE_SCRAMBLE);
        let stored = native_password_hash(b"secret");
        assert!(native_password_verify(&stored, &nonce(), &resp));
        let mut with_nul = nonce();
        with_nul.push(0);
        assert!(native_password_verify(&stored, &with_nul, &resp));
        assert!(!native_password_verify(
            &stored,
            &nonce(),
            &native_password_scramble(b"Secret", &nonce())
        ));
        assert!(!native_password_verify(&stored, &nonce(), &[]));
        assert!(native_password_scramble(b"", &nonce()).is_empty());
    }

    #[test]
    fn caching_sha2_vectors() {
        assert_eq!(hex(&caching_sha2_hash(b"secret")), SHA2_HASH);
        let resp = caching_sha2_scramble(b"secret", &nonce());
        assert_eq!(hex(&resp), SHA2_SCRAMBLE);
        let stored = caching_sha2_hash(b"secret");
        assert!(caching_sha2_verify(&stored, &nonce(), &resp));
        assert!(!caching_sha2_verify(
            &stored,
            &nonce(),
            &caching_sha2_scramble(b"other", &nonce())
        ));
        assert!(!caching_sha2_verify(&stored, &nonce(), &resp[..31]));
        assert!(caching_sha2_scramble(b"", &nonce()).is_empty());
    }
}
