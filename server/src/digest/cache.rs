//! A connection's cache of the statement texts it ran and their digests, so a repeated
//! COM_QUERY text is not tokenised again.

use std::sync::{Arc, Mutex};

use super::{digests_of, Digest};

/// Slots of a connection's [`TextCache`].
const CACHE_SLOTS: usize = 16;
/// Texts longer than this are not cached (they rarely repeat).
const CACHE_MAX_TEXT: usize = 4096;

#[derive(Debug)]
struct Slot {
    hash: u64,
    text: Box<str>,
    digests: Arc<[Arc<Digest>]>,
}

/// A connection's cache of statement texts it ran and their digests (direct-mapped by a
/// hash of the text; only the owning connection uses it, so its mutex is uncontended).
#[derive(Debug, Default)]
pub struct TextCache {
    slots: Mutex<Vec<Option<Slot>>>,
}

/// A fast non-cryptographic hash of a text (cache slot selection; hits compare the text).
fn text_hash(s: &str) -> u64 {
    const K: u64 = 0x9e37_79b9_7f4a_7c15;
    let mut h = (s.len() as u64).wrapping_mul(K);
    let mut chunks = s.as_bytes().chunks_exact(8);
    for c in &mut chunks {
        let mut w = [0u8; 8];
        w.copy_from_slice(c);
        h = (h ^ u64::from_le_bytes(w)).wrapping_mul(K);
        h ^= h >> 29;
    }
    let mut w = [0u8; 8];
    w[..chunks.remainder().len()].copy_from_slice(chunks.remainder());
    h = (h ^ u64::from_le_bytes(w)).wrapping_mul(K);
    h ^ (h >> 32)
}

impl TextCache {
    /// The digests of `sql`'s statements, from the cache or computed and cached.
    pub fn get(&self, sql: &str, max_length: usize) -> Arc<[Arc<Digest>]> {
        let h = text_hash(sql);
        let i = (h as usize) % CACHE_SLOTS;
        {
            let slots = self.slots.lock().unwrap_or_else(|e| e.into_inner());
            if let Some(Some(s)) = slots.get(i) {
                if s.hash == h && &*s.text == sql {
                    return Arc::clone(&s.digests);
                }
            }
        }
        let digests: Arc<[Arc<Digest>]> = digests_of(sql, max_length).into();
        if sql.len() <= CACHE_MAX_TEXT {
            let mut slots = self.slots.lock().unwrap_or_else(|e| e.into_inner());
            if slots.is_empty() {
                slots.resize_with(CACHE_SLOTS, || None);
            }
            slots[i] = Some(Slot {
                hash: h,
                text: sql.into(),
                digests: Arc::clone(&digests),
            });
        }
        digests
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cache_returns_the_same_digests() {
        let c = TextCache::default();
        let a = c.get("SELECT 1", 1024);
        let b = c.get("SELECT 1", 1024);
        assert!(Arc::ptr_eq(&a, &b));
        let x = c.get("SELECT 2", 1024);
        assert_eq!(x[0].hash(), a[0].hash());
        assert_ne!(text_hash("SELECT 1"), text_hash("SELECT 2"));
    }
}
