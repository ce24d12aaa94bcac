//! Multi-versioning: the store of old record versions that roll pointers point into, and read
//! views that decide which transaction's writes a consistent read sees.
//!
//! Invariant: a clustered record's `roll_ptr` is 0 (no older version: the record was created
//! by the transaction in its `trx_id`) or names a [`Version`] in the [`VersionStore`], put
//! there under the record's leaf latch before the record pointed to it. Purge frees a version
//! only once every read view sees the transaction that overwrote it, so a reader that needs a
//! version finds it; a reader that follows a freed pointer only ever does so past a version it
//! already sees.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::sync::Mutex;

use crate::index::{ClusteredMut, ClusteredRec, ClusteredRef};
use crate::memory;
use crate::row_buf::RowBuf;

/// An old version of a clustered record, as it was before a transaction overwrote it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Version {
    /// The row bytes (the table's `RowCodec` encoding), shared with the record or the newer
    /// version that has the same bytes. None: the same bytes as the next newer version (the
    /// record itself, if the record points here): a delete-mark changes no byte of the row,
    /// so the version it leaves keeps none of its own.
    pub row: Option<RowBuf>,
    /// DB_TRX_ID of that version.
    pub trx_id: u64,
    /// Its own roll pointer (the version before it; 0: none).
    pub roll_ptr: u64,
    /// It was delete-marked.
    pub delete_mark: bool,
}

impl Version {
    /// The version a clustered record holds now (its row bytes shared, not copied).
    pub fn of(rec: &ClusteredRec) -> Version {
        Version {
            row: Some(rec.row.clone()),
            trx_id: rec.trx_id,
            roll_ptr: rec.roll_ptr(),
            delete_mark: rec.delete_mark(),
        }
    }

    /// The version a stored record holds now, about to change only its header (a
    /// delete-mark): the row bytes stay in the record, so the version keeps none.
    pub(crate) fn header_of(rec: &ClusteredMut<'_>) -> Version {
        Version {
            row: None,
            trx_id: rec.trx_id(),
            roll_ptr: rec.roll_ptr(),
            delete_mark: rec.delete_mark(),
        }
    }

    /// The version a record in a page holds now (its row bytes copied).
    pub fn copy_of(rec: ClusteredRef<'_>) -> Version {
        Version {
            row: Some(RowBuf::new(rec.row())),
            trx_id: rec.trx_id(),
            roll_ptr: rec.roll_ptr(),
            delete_mark: rec.delete_mark(),
        }
    }

    /// This version's row bytes, given the bytes of the next newer version (or of the
    /// record, if it points here).
    pub fn row_or<'a>(&'a self, newer: &'a [u8]) -> &'a [u8] {
        self.row.as_deref().unwrap_or(newer)
    }
}

/// A clustered record's transaction fields, owned or read in place.
pub(crate) trait TrxFields {
    /// DB_TRX_ID.
    fn trx_id(&self) -> u64;
    /// DB_ROLL_PTR (0: no older version).
    fn roll_ptr(&self) -> u64;
}

impl TrxFields for &ClusteredRec {
    fn trx_id(&self) -> u64 {
        self.trx_id
    }
    fn roll_ptr(&self) -> u64 {
        ClusteredRec::roll_ptr(self)
    }
}

impl TrxFields for ClusteredRef<'_> {
    fn trx_id(&self) -> u64 {
        ClusteredRef::trx_id(self)
    }
    fn roll_ptr(&self) -> u64 {
        ClusteredRef::roll_ptr(self)
    }
}

const SHARDS: usize = 64;

/// Old versions by roll pointer, sharded so writers and readers on different rows do not
/// meet on one mutex.
#[derive(Debug)]
pub struct VersionStore {
    shards: Box<[Mutex<HashMap<u64, Version>>]>,
    next: AtomicU64,
    live: AtomicU64,
}

impl Default for VersionStore {
    fn default() -> Self {
        VersionStore {
            shards: (0..SHARDS).map(|_| Mutex::new(HashMap::new())).collect(),
            next: AtomicU64::new(1),
            live: AtomicU64::new(0),
        }
    }
}

impl VersionStore {
    fn shard(&self, ptr: u64) -> std::sync::MutexGuard<'_, HashMap<u64, Version>> {
        self.shards[(ptr as usize) % SHARDS]
            .lock()
            .unwrap_or_else(|e| e.into_inner())
    }

    /// Stores a version and returns its roll pointer (never 0).
    pub fn put(&self, v: Version) -> u64 {
        let ptr = self.next.fetch_add(1, Relaxed);
        self.shard(ptr).insert(ptr, v);
        self.live.fetch_add(1, Relaxed);
        ptr
    }

    /// The version at `ptr`, if it is still stored.
    pub fn get(&self, ptr: u64) -> Option<Version> {
        if ptr == 0 {
            return None;
        }
        self.shard(ptr).get(&ptr).cloned()
    }

    /// Frees the version at `ptr` (purge, rollback); returns the row bytes that freed (see
    /// [`release`]).
    pub fn free(&self, ptr: u64) -> u64 {
        if ptr == 0 {
            return 0;
        }
        let v = {
            let mut shard = self.shard(ptr);
            let Some(v) = shard.remove(&ptr) else {
                return 0;
            };
            if let Some(to) = memory::shrink_target(shard.len(), shard.capacity()) {
                shard.shrink_to(to);
            }
            v
        };
        self.live.fetch_sub(1, Relaxed);
        v.row.map_or(0, release)
    }

    /// Versions stored now.
    pub fn len(&self) -> u64 {
        self.live.load(Relaxed)
    }

    /// No version is stored.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// Drops one reference to row bytes; returns their length if that was the last reference
/// (the bytes were freed), else 0.
pub(crate) fn release(row: RowBuf) -> u64 {
    row.release()
}

/// Which version of a record a read view sees.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Visible {
    /// The record as it is.
    Current,
    /// An older version.
    Older(Version),
    /// None: the row did not exist for this view.
    Nothing,
}

/// A consistent-read snapshot: the writes of transactions that committed before it was
/// made, plus its creator's own.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReadView {
    /// Ids below this had all committed (or were never active) when the view was made.
    pub up_limit_id: u64,
    /// Ids at or above this did not exist yet.
    pub low_limit_id: u64,
    /// Transaction numbers below this had committed when the view was made (purge may
    /// remove what only older views need).
    pub low_limit_no: u64,
    /// Active read-write transactions at creation, sorted (excluding the creator).
    pub active: Vec<u64>,
    /// The creator's own id (0: it had none yet; it sees its own writes once it has one).
    pub creator: u64,
}

impl ReadView {
    /// Whether writes by `trx_id` are visible. `me` is the reader's current transaction id
    /// (0 if it has none).
    pub fn sees(&self, trx_id: u64, me: u64) -> bool {
        if trx_id == 0 || trx_id < self.up_limit_id || (me != 0 && trx_id == me) {
            return true;
        }
        if trx_id == self.creator && self.creator != 0 {
            return true;
        }
        trx_id < self.low_limit_id && self.active.binary_search(&trx_id).is_err()
    }

    /// The version of `rec` this view sees. Delete marks are the caller's to check. An older
    /// version's row is None only when its bytes are the record's (read them from `rec`).
    pub(crate) fn visible_version(
        &self,
        rec: impl TrxFields,
        me: u64,
        store: &VersionStore,
    ) -> Visible {
        if self.sees(rec.trx_id(), me) {
            return Visible::Current;
        }
        let mut ptr = rec.roll_ptr();
        let mut newer: Option<RowBuf> = None;
        loop {
            let Some(mut v) = store.get(ptr) else {
                return Visible::Nothing;
            };
            if v.row.is_none() {
                v.row.clone_from(&newer);
            }
            if self.sees(v.trx_id, me) {
                return Visible::Older(v);
            }
            ptr = v.roll_ptr;
            newer = v.row;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn view(up: u64, low: u64, active: Vec<u64>) -> ReadView {
        ReadView {
            up_limit_id: up,
            low_limit_id: low,
            low_limit_no: low,
            active,
            creator: 0,
        }
    }

    #[test]
    fn visibility_follows_the_snapshot() {
        let v = view(5, 10, vec![5, 7]);
        assert!(v.sees(0, 0));
        assert!(v.sees(4, 0));
        assert!(!v.sees(5, 0));
        assert!(v.sees(6, 0));
        assert!(!v.sees(7, 0));
        assert!(!v.sees(10, 0));
        assert!(v.sees(7, 7), "a transaction sees its own writes");
    }

    #[test]
    fn old_versions_are_found_through_roll_pointers() {
        let store = VersionStore::default();
        let p1 = store.put(Version {
            row: Some(RowBuf::new(&[1u8])),
            trx_id: 3,
            roll_ptr: 0,
            delete_mark: false,
        });
        let p2 = store.put(Version {
            row: Some(RowBuf::new(&[2u8])),
            trx_id: 8,
            roll_ptr: p1,
            delete_mark: false,
        });
        let rec = {
            let mut r = ClusteredRec::new((&[1u8][..]).into(), RowBuf::new(&[3u8]), 9);
            r.set_roll_ptr(p2);
            r
        };
        let v = view(8, 9, vec![8]);
        let Visible::Older(old) = v.visible_version(&rec, 0, &store) else {
            panic!("an older version is visible");
        };
        assert_eq!(old.row_or(&[])[0], 1);
        let all = view(20, 20, vec![]);
        assert_eq!(all.visible_version(&rec, 0, &store), Visible::Current);
        let none = view(2, 3, vec![]);
        assert_eq!(none.visible_version(&rec, 0, &store), Visible::Nothing);
        drop(old);
        assert_eq!(store.free(p1), 1, "the only reference to its row");
        assert_eq!(store.len(), 1);
        assert_eq!(store.free(p1), 0, "freed once");
    }

    #[test]
    fn a_version_without_bytes_reads_the_newer_versions() {
        let store = VersionStore::default();
        // A delete-mark by 3 over a row written by 2: its version keeps no bytes.
        let p1 = store.put(Version {
            row: None,
            trx_id: 2,
            roll_ptr: 0,
            delete_mark: false,
        });
        let p2 = store.put(Version {
            row: Some(RowBuf::new(b"B")),
            trx_id: 3,
            roll_ptr: p1,
            delete_mark: true,
        });
        let rec = {
            let mut r = ClusteredRec::new((&[1u8][..]).into(), RowBuf::new(b"C"), 9);
            r.set_roll_ptr(p2);
            r
        };
        let Visible::Older(old) = view(3, 4, vec![3]).visible_version(&rec, 0, &store) else {
            panic!("the version before the delete-mark is visible");
        };
        assert_eq!(
            old.row_or(b"C"),
            b"B",
            "the bytes of the version newer than it"
        );
        assert!(!old.delete_mark);
        // Pointed at by the record itself, it reads the record's bytes.
        let marked = {
            let mut r = ClusteredRec::new((&[1u8][..]).into(), RowBuf::new(b"C"), 3);
            r.set_roll_ptr(p1);
            r.set_delete_mark(true);
            r
        };
        let Visible::Older(old) = view(3, 4, vec![3]).visible_version(&marked, 0, &store) else {
            panic!("visible");
        };
        assert_eq!(old.row, None);
        assert_eq!(old.row_or(&marked.row), b"C");
        assert_eq!(store.free(p1), 0, "no bytes of its own to free");
    }

    #[test]
    fn a_version_shares_its_row_bytes() {
        let store = VersionStore::default();
        let rec = {
            let mut r = ClusteredRec::new((&[1u8][..]).into(), RowBuf::new(&vec![7u8; 1 << 16]), 9);
            r.set_roll_ptr(0);
            r
        };
        let ptr = store.put(Version::of(&rec));
        let Some(v) = store.get(ptr) else {
            panic!("stored");
        };
        assert!(
            v.row.as_ref().is_some_and(|r| RowBuf::ptr_eq(r, &rec.row)),
            "no copy of the row"
        );
        drop(v);
        assert_eq!(store.free(ptr), 0, "the record still holds the bytes");
        assert_eq!(release(rec.row), 1 << 16, "the last reference frees them");
    }
}
