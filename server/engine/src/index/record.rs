//! Record layouts: a clustered record carries the row and its transaction metadata; a
//! secondary record carries (secondary key columns ++ primary key columns) encoded, so every
//! key in any index is unique.

use crate::index::key_buf::KeyBuf;
use crate::lock::LockHint;
use crate::row_buf::RowBuf;

/// What a B+tree stores: a record with a memcomparable key, unique within its index.
pub trait Record: Send + Sync + 'static {
    /// The encoded key.
    fn key(&self) -> &[u8];
}

/// A clustered (primary) index record.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClusteredRec {
    /// The primary key, encoded (or the 6-byte hidden row id).
    pub key: KeyBuf,
    /// The whole row, encoded by the table's `RowCodec`. Shared, never copied, with the old
    /// versions that hold the same bytes (a delete-mark changes only the metadata).
    pub row: RowBuf,
    /// Id of the transaction that last wrote this record (DB_TRX_ID).
    pub trx_id: u64,
    /// Pointer into that transaction's undo for the previous version (DB_ROLL_PTR).
    pub roll_ptr: u64,
    /// Deleted, awaiting purge.
    pub delete_mark: bool,
    /// A granted lock on this record, for SKIP LOCKED and NOWAIT checks (not part of the value).
    pub lock_hint: LockHint,
}

impl Record for ClusteredRec {
    fn key(&self) -> &[u8] {
        &self.key
    }
}

/// A secondary index record.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SecondaryRec {
    /// Secondary key columns followed by the primary key columns, encoded.
    pub key: KeyBuf,
    /// Where the primary key part of `key` starts.
    pub pk_offset: u32,
    /// Deleted or superseded, awaiting purge.
    pub delete_mark: bool,
    /// A granted lock on this record, for SKIP LOCKED and NOWAIT checks (not part of the value).
    pub lock_hint: LockHint,
}

impl SecondaryRec {
    /// The secondary key columns part of the key.
    pub(crate) fn secondary_part(&self) -> &[u8] {
        &self.key[..self.pk_offset as usize]
    }

    /// The primary key part of the key.
    pub fn primary_key(&self) -> &[u8] {
        &self.key[self.pk_offset as usize..]
    }
}

impl Record for SecondaryRec {
    fn key(&self) -> &[u8] {
        &self.key
    }
}
