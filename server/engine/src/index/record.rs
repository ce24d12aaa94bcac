//! Record layouts: a clustered record carries the row and its transaction metadata; a
//! secondary record carries (secondary key columns ++ primary key columns) encoded, so every
//! key in any index is unique.

use std::fmt;

use crate::index::key_buf::KeyBuf;
use crate::lock::LockHint;
use crate::row_buf::RowBuf;

/// What a B+tree stores: a record with a memcomparable key, unique within its index.
pub trait Record: Send + Sync + 'static {
    /// The encoded key.
    fn key(&self) -> &[u8];
}

/// The bit of [`ClusteredRec`]'s packed roll pointer word that holds the delete mark (roll
/// pointers count up from 1 and stay far below it).
const DELETE_MARK: u64 = 1 << 63;

/// A clustered (primary) index record.
#[derive(Clone, PartialEq, Eq)]
pub struct ClusteredRec {
    /// The primary key, encoded (or the 6-byte hidden row id).
    pub key: KeyBuf,
    /// The whole row, encoded by the table's `RowCodec`. Shared, never copied, with the old
    /// versions that hold the same bytes (a delete-mark changes only the metadata).
    pub row: RowBuf,
    /// Id of the transaction that last wrote this record (DB_TRX_ID).
    pub trx_id: u64,
    /// The roll pointer (DB_ROLL_PTR) with the delete mark in its top bit, so the record
    /// takes 56 bytes instead of 64 (see [`ClusteredRec::roll_ptr`]).
    roll: u64,
    /// A granted lock on this record, for SKIP LOCKED and NOWAIT checks (not part of the value).
    pub lock_hint: LockHint,
}

impl ClusteredRec {
    /// A live record written by `trx_id`, with no older version.
    pub fn new(key: KeyBuf, row: RowBuf, trx_id: u64) -> ClusteredRec {
        ClusteredRec {
            key,
            row,
            trx_id,
            roll: 0,
            lock_hint: LockHint::default(),
        }
    }

    /// Pointer into the last writer's undo for the previous version (DB_ROLL_PTR; 0: none).
    pub fn roll_ptr(&self) -> u64 {
        self.roll & !DELETE_MARK
    }

    /// Points the record at its previous version.
    pub fn set_roll_ptr(&mut self, ptr: u64) {
        debug_assert_eq!(ptr & DELETE_MARK, 0, "a roll pointer overflowed");
        self.roll = (self.roll & DELETE_MARK) | (ptr & !DELETE_MARK);
    }

    /// Deleted, awaiting purge.
    pub fn delete_mark(&self) -> bool {
        self.roll & DELETE_MARK != 0
    }

    /// Sets or clears the delete mark; returns the mark it had.
    pub fn set_delete_mark(&mut self, marked: bool) -> bool {
        let was = self.delete_mark();
        self.roll = if marked {
            self.roll | DELETE_MARK
        } else {
            self.roll & !DELETE_MARK
        };
        was
    }
}

impl fmt::Debug for ClusteredRec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ClusteredRec")
            .field("key", &self.key)
            .field("row", &self.row)
            .field("trx_id", &self.trx_id)
            .field("roll_ptr", &self.roll_ptr())
            .field("delete_mark", &self.delete_mark())
            .field("lock_hint", &self.lock_hint)
            .finish()
    }
}

impl Record for ClusteredRec {
    fn key(&self) -> &[u8] {
        &self.key
    }
}

/// Key bytes a secondary record holds inline (longer keys are boxed).
const SEC_INLINE: usize = 20;

/// A secondary record's key with its primary-key offset and delete mark packed beside the
/// bytes, in 24 bytes: inline up to [`SEC_INLINE`] bytes (every sysbench entry: `k` and
/// `id`, 8 bytes), boxed beyond.
#[derive(Clone)]
enum SecKey {
    Inline {
        len: u8,
        pk_offset: u8,
        marked: bool,
        buf: [u8; SEC_INLINE],
    },
    Heap {
        pk_offset: u32,
        marked: bool,
        buf: Box<[u8]>,
    },
}

/// A secondary index record: secondary key columns followed by the primary key columns,
/// encoded, and a delete mark.
#[derive(Clone)]
pub struct SecondaryRec {
    key: SecKey,
    /// A granted lock on this record, for SKIP LOCKED and NOWAIT checks (not part of the value).
    pub lock_hint: LockHint,
}

impl SecondaryRec {
    /// A live record with key `key` whose primary key part starts at `pk_offset`. Panics if
    /// `pk_offset` is past the key's end or the key is 4 GiB or longer.
    pub fn new(key: &[u8], pk_offset: usize) -> SecondaryRec {
        assert!(
            pk_offset <= key.len(),
            "the primary key starts inside the key"
        );
        let key = match (u8::try_from(key.len()), u8::try_from(pk_offset)) {
            (Ok(len), Ok(off)) if key.len() <= SEC_INLINE => {
                let mut buf = [0u8; SEC_INLINE];
                buf[..key.len()].copy_from_slice(key);
                SecKey::Inline {
                    len,
                    pk_offset: off,
                    marked: false,
                    buf,
                }
            }
            _ => SecKey::Heap {
                pk_offset: u32::try_from(pk_offset).expect("a key shorter than 4 GiB"),
                marked: false,
                buf: key.into(),
            },
        };
        SecondaryRec {
            key,
            lock_hint: LockHint::default(),
        }
    }

    /// Where the primary key part of the key starts.
    pub fn pk_offset(&self) -> usize {
        match &self.key {
            SecKey::Inline { pk_offset, .. } => usize::from(*pk_offset),
            SecKey::Heap { pk_offset, .. } => *pk_offset as usize,
        }
    }

    /// Deleted or superseded, awaiting purge.
    pub fn delete_mark(&self) -> bool {
        match &self.key {
            SecKey::Inline { marked, .. } | SecKey::Heap { marked, .. } => *marked,
        }
    }

    /// Sets or clears the delete mark; returns the mark it had.
    pub fn set_delete_mark(&mut self, mark: bool) -> bool {
        match &mut self.key {
            SecKey::Inline { marked, .. } | SecKey::Heap { marked, .. } => {
                std::mem::replace(marked, mark)
            }
        }
    }

    /// The secondary key columns part of the key.
    pub(crate) fn secondary_part(&self) -> &[u8] {
        &self.key()[..self.pk_offset()]
    }

    /// The primary key part of the key.
    pub fn primary_key(&self) -> &[u8] {
        &self.key()[self.pk_offset()..]
    }
}

impl Record for SecondaryRec {
    fn key(&self) -> &[u8] {
        match &self.key {
            SecKey::Inline { len, buf, .. } => &buf[..usize::from(*len)],
            SecKey::Heap { buf, .. } => buf,
        }
    }
}

impl PartialEq for SecondaryRec {
    /// Records are equal when their keys, primary-key offsets and delete marks are.
    fn eq(&self, other: &SecondaryRec) -> bool {
        self.key() == other.key()
            && self.pk_offset() == other.pk_offset()
            && self.delete_mark() == other.delete_mark()
    }
}

impl Eq for SecondaryRec {}

impl fmt::Debug for SecondaryRec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SecondaryRec")
            .field("key", &KeyBuf::from(self.key()))
            .field("pk_offset", &self.pk_offset())
            .field("delete_mark", &self.delete_mark())
            .field("lock_hint", &self.lock_hint)
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_delete_mark_and_the_roll_pointer_are_independent() {
        assert_eq!(std::mem::size_of::<ClusteredRec>(), 56);
        let mut r = ClusteredRec::new(KeyBuf::from(&b"k"[..]), RowBuf::new(b"row"), 7);
        assert_eq!((r.roll_ptr(), r.delete_mark()), (0, false));
        assert!(!r.set_delete_mark(true));
        assert_eq!((r.roll_ptr(), r.delete_mark()), (0, true));
        let big = DELETE_MARK - 1;
        r.set_roll_ptr(big);
        assert_eq!((r.roll_ptr(), r.delete_mark()), (big, true));
        assert!(r.set_delete_mark(false));
        assert_eq!((r.roll_ptr(), r.delete_mark()), (big, false));
        r.set_roll_ptr(5);
        assert_eq!((r.roll_ptr(), r.delete_mark()), (5, false));
        let dbg = format!("{r:?}");
        assert!(
            dbg.contains("roll_ptr: 5") && dbg.contains("delete_mark: false"),
            "{dbg}"
        );
    }

    #[test]
    fn secondary_records_pack_key_offset_and_mark_in_24_bytes() {
        assert_eq!(std::mem::size_of::<SecondaryRec>(), 32);
        for len in [0usize, 8, SEC_INLINE, SEC_INLINE + 1, 300] {
            let key: Vec<u8> = (0..len).map(|i| i as u8 ^ 0x5A).collect();
            let off = len / 2;
            let mut r = SecondaryRec::new(&key, off);
            assert_eq!(r.key(), &key[..], "{len}");
            assert_eq!((r.pk_offset(), r.delete_mark()), (off, false));
            assert_eq!(r.secondary_part(), &key[..off]);
            assert_eq!(r.primary_key(), &key[off..]);
            assert!(!r.set_delete_mark(true));
            assert_eq!(
                (r.key(), r.pk_offset(), r.delete_mark()),
                (&key[..], off, true)
            );
            assert_ne!(r, SecondaryRec::new(&key, off), "marks differ");
            assert!(r.set_delete_mark(false));
            assert_eq!(r, SecondaryRec::new(&key, off));
        }
        let long_offset = SecondaryRec::new(&[1u8; 300], 299);
        assert_eq!(long_offset.pk_offset(), 299);
        let dbg = format!("{long_offset:?}");
        assert!(dbg.contains("pk_offset: 299"), "{dbg}");
    }
}
