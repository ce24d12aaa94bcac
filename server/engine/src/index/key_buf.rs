//! Key bytes stored inline in the record when short (most keys: integers, short strings), so a
//! binary search over a page's records compares keys without chasing a pointer per probe.

use std::cmp::Ordering;
use std::fmt;
use std::ops::Deref;

/// Keys up to this many bytes live inline (the type stays 24 bytes).
const INLINE: usize = 22;

/// An immutable key byte string, inline up to 22 bytes, boxed beyond.
#[derive(Clone)]
pub struct KeyBuf(Repr);

#[derive(Clone)]
enum Repr {
    Inline { len: u8, buf: [u8; INLINE] },
    Heap(Box<[u8]>),
}

impl KeyBuf {
    /// The bytes.
    pub fn as_slice(&self) -> &[u8] {
        match &self.0 {
            Repr::Inline { len, buf } => &buf[..usize::from(*len)],
            Repr::Heap(b) => b,
        }
    }
}

impl From<&[u8]> for KeyBuf {
    fn from(b: &[u8]) -> KeyBuf {
        if b.len() <= INLINE {
            let mut buf = [0u8; INLINE];
            buf[..b.len()].copy_from_slice(b);
            KeyBuf(Repr::Inline {
                len: b.len() as u8,
                buf,
            })
        } else {
            KeyBuf(Repr::Heap(b.into()))
        }
    }
}

impl From<Vec<u8>> for KeyBuf {
    fn from(v: Vec<u8>) -> KeyBuf {
        if v.len() <= INLINE {
            KeyBuf::from(v.as_slice())
        } else {
            KeyBuf(Repr::Heap(v.into_boxed_slice()))
        }
    }
}

impl Deref for KeyBuf {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        self.as_slice()
    }
}

impl AsRef<[u8]> for KeyBuf {
    fn as_ref(&self) -> &[u8] {
        self.as_slice()
    }
}

impl PartialEq for KeyBuf {
    fn eq(&self, other: &KeyBuf) -> bool {
        self.as_slice() == other.as_slice()
    }
}

impl Eq for KeyBuf {}

impl PartialOrd for KeyBuf {
    fn partial_cmp(&self, other: &KeyBuf) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for KeyBuf {
    fn cmp(&self, other: &KeyBuf) -> Ordering {
        self.as_slice().cmp(other.as_slice())
    }
}

impl fmt::Debug for KeyBuf {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "KeyBuf(")?;
        for b in self.as_slice() {
            write!(f, "{b:02x}")?;
        }
        write!(f, ")")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn inline_and_heap() {
        assert_eq!(std::mem::size_of::<KeyBuf>(), 24);
        let short = KeyBuf::from(&b"abc"[..]);
        let long = KeyBuf::from(vec![7u8; 40]);
        assert_eq!(&*short, b"abc");
        assert_eq!(long.len(), 40);
        assert!(short < KeyBuf::from(&b"abd"[..]));
        assert!(KeyBuf::from(&b""[..]) < short);
    }
}
