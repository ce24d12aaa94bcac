//! The lock table: every lock struct lives in exactly one queue, the queue of its target
//! (a table, or an index record, or an index's supremum), found by hashing the target into one
//! of `tpbed_lock_sys_shards` shards. A queue is read or changed only under its shard's
//! mutex, and a queue that becomes empty is removed, so the table holds only live locks.

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};
use std::sync::{Arc, Mutex, MutexGuard};

use super::modes::AnyMode;
use super::trx::TrxShared;

/// Identifies an index for the lock manager (unique across tables; the SQL layer assigns it).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct IndexId(pub u64);

/// Identifies a table for the lock manager (the SQL layer assigns it).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct TableId(pub u64);

/// A record of an index: a user record by its memcomparable key, or the supremum
/// pseudo-record ("the gap after the last record").
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum RecKey<'a> {
    /// A user record (clustered key, or secondary key ++ primary key).
    User(&'a [u8]),
    /// The index's supremum.
    Supremum,
}

/// What a queue locks, borrowed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum TargetRef<'a> {
    Table(TableId),
    Rec(IndexId, RecKey<'a>),
}

/// What a queue locks, owned.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Target {
    Table(TableId),
    /// `None` is the supremum.
    Rec(IndexId, Option<Box<[u8]>>),
}

impl Target {
    pub(crate) fn as_ref(&self) -> TargetRef<'_> {
        match self {
            Target::Table(t) => TargetRef::Table(*t),
            Target::Rec(ix, Some(k)) => TargetRef::Rec(*ix, RecKey::User(k)),
            Target::Rec(ix, None) => TargetRef::Rec(*ix, RecKey::Supremum),
        }
    }

    pub(crate) fn is_supremum(&self) -> bool {
        matches!(self, Target::Rec(_, None))
    }
}

impl TargetRef<'_> {
    pub(crate) fn to_owned(self) -> Target {
        match self {
            TargetRef::Table(t) => Target::Table(t),
            TargetRef::Rec(ix, RecKey::User(k)) => Target::Rec(ix, Some(k.into())),
            TargetRef::Rec(ix, RecKey::Supremum) => Target::Rec(ix, None),
        }
    }

    /// A 64-bit hash of the target (multiply-rotate over 8-byte words, then a finaliser so
    /// both the shard choice and the map's buckets see well-mixed bits).
    pub(crate) fn hash(self) -> u64 {
        const K: u64 = 0x517c_c1b7_2722_0a95;
        let step = |h: u64, w: u64| (h.rotate_left(5) ^ w).wrapping_mul(K);
        let mut h = match self {
            TargetRef::Table(t) => step(1, t.0),
            TargetRef::Rec(ix, RecKey::Supremum) => step(step(2, ix.0), u64::MAX),
            TargetRef::Rec(ix, RecKey::User(key)) => {
                let mut h = step(3, ix.0);
                let mut chunks = key.chunks_exact(8);
                for c in &mut chunks {
                    h = step(h, u64::from_le_bytes(c.try_into().expect("8 bytes")));
                }
                let rest = chunks.remainder();
                let mut last = [0u8; 8];
                last[..rest.len()].copy_from_slice(rest);
                step(step(h, u64::from_le_bytes(last)), key.len() as u64)
            }
        };
        h ^= h >> 33;
        h = h.wrapping_mul(0xff51_afd7_ed55_8ccd);
        h ^= h >> 33;
        h
    }
}

/// One lock struct: a transaction's lock of one mode on one target.
#[derive(Debug)]
pub(crate) struct LockEntry {
    /// Unique over the lock system's lifetime; also the order of arrival.
    pub(crate) id: u64,
    pub(crate) trx: Arc<TrxShared>,
    pub(crate) mode: AnyMode,
    pub(crate) waiting: bool,
    /// The page the record was on when locked (0 for table locks).
    pub(crate) page: u64,
    /// Set for X locks of READ COMMITTED transactions: not inherited as a gap lock when the
    /// record is removed (InnoDB's `lock_rec_inherit_to_gap`).
    pub(crate) no_inherit: bool,
}

/// The locks on one target, in order of arrival.
#[derive(Debug)]
pub(crate) struct Queue {
    pub(crate) target: Target,
    pub(crate) locks: Vec<LockEntry>,
}

/// A pass-through hasher: the key already is a well-mixed hash.
#[derive(Debug, Default)]
pub(crate) struct IdHasher(u64);

impl Hasher for IdHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0 << 8) | u64::from(b);
        }
    }
    fn write_u64(&mut self, n: u64) {
        self.0 = n;
    }
}

/// The queues of one shard, by target hash; targets whose hashes collide share a bucket.
#[derive(Debug, Default)]
pub(crate) struct Shard {
    map: HashMap<u64, Vec<Queue>, BuildHasherDefault<IdHasher>>,
}

impl Shard {
    pub(crate) fn queue(&mut self, hash: u64, t: TargetRef<'_>) -> Option<&mut Queue> {
        self.map
            .get_mut(&hash)?
            .iter_mut()
            .find(|q| q.target.as_ref() == t)
    }

    pub(crate) fn queue_or_insert(&mut self, hash: u64, t: TargetRef<'_>) -> &mut Queue {
        let bucket = self.map.entry(hash).or_default();
        let at = match bucket.iter().position(|q| q.target.as_ref() == t) {
            Some(i) => i,
            None => {
                bucket.push(Queue {
                    target: t.to_owned(),
                    locks: Vec::with_capacity(2),
                });
                bucket.len() - 1
            }
        };
        &mut bucket[at]
    }

    /// Drops the queue of `t` if it holds no lock.
    pub(crate) fn remove_if_empty(&mut self, hash: u64, t: TargetRef<'_>) {
        if let Some(bucket) = self.map.get_mut(&hash) {
            bucket.retain(|q| !(q.locks.is_empty() && q.target.as_ref() == t));
            if bucket.is_empty() {
                self.map.remove(&hash);
            }
        }
    }

    /// Every queue of the shard (for snapshots).
    pub(crate) fn queues(&self) -> impl Iterator<Item = &Queue> {
        self.map.values().flatten()
    }
}

/// A shard mutex on its own cache line, so neighbours do not share invalidations.
#[derive(Debug, Default)]
#[repr(align(64))]
struct Padded(Mutex<Shard>);

/// All shards.
#[derive(Debug)]
pub(crate) struct LockTable {
    shards: Box<[Padded]>,
}

impl LockTable {
    pub(crate) fn new(shards: usize) -> LockTable {
        LockTable {
            shards: (0..shards.max(1)).map(|_| Padded::default()).collect(),
        }
    }

    pub(crate) fn shard_count(&self) -> usize {
        self.shards.len()
    }

    /// The shard of a target hash, locked.
    pub(crate) fn shard(&self, hash: u64) -> MutexGuard<'_, Shard> {
        // The high half picks the shard; the map's buckets use the low bits.
        let i = ((hash >> 32) as usize) % self.shards.len();
        lock(&self.shards[i].0)
    }

    /// Shard `i`, locked (for snapshots that visit every shard).
    pub(crate) fn shard_at(&self, i: usize) -> MutexGuard<'_, Shard> {
        lock(&self.shards[i].0)
    }
}

/// Locks a mutex, ignoring poisoning: lock-table state is changed only by code that does not
/// panic between related updates, so a poisoned guard still protects consistent data.
pub(crate) fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}
