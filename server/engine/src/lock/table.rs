//! The lock table: every lock struct lives in exactly one queue, the queue of its target
//! (a table, or an index record, or an index's supremum), found by hashing the target into one
//! of `tpbed_lock_sys_shards` shards. A queue is read or changed only under its shard's
//! mutex, and a queue that becomes empty is removed, so the table holds only live locks.

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};
use std::sync::{Arc, Mutex, MutexGuard};

use super::modes::AnyMode;
use super::trx::{TrxId, TrxShared};
use crate::index::KeyBuf;

/// Identifies an index for the lock manager: unique across all tables and never reused while
/// a lock on it may exist (the SQL layer assigns it, e.g. from a table id and index position).
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
    /// `None` is the supremum; short keys are stored inline.
    Rec(IndexId, Option<KeyBuf>),
}

impl Target {
    pub(crate) fn as_ref(&self) -> TargetRef<'_> {
        match self {
            Target::Table(t) => TargetRef::Table(*t),
            Target::Rec(ix, Some(k)) => TargetRef::Rec(*ix, RecKey::User(k.as_slice())),
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
            TargetRef::Rec(ix, RecKey::User(k)) => Target::Rec(ix, Some(KeyBuf::from(k))),
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
    /// The owner's id, inline: conflict checks compare it without touching the owner.
    pub(crate) trx_id: TrxId,
    pub(crate) trx: Arc<TrxShared>,
    pub(crate) mode: AnyMode,
    pub(crate) waiting: bool,
    /// The page the record was on when locked (0 for table locks).
    pub(crate) page: u64,
    /// Set for X locks of READ COMMITTED transactions: not inherited as a gap lock when the
    /// record is removed (InnoDB's `lock_rec_inherit_to_gap`).
    pub(crate) no_inherit: bool,
}

/// A queue's locks in order of arrival: the first inline, since most queues hold one lock
/// and a SKIP LOCKED check then reads it without another cache miss; the rest in a Vec.
/// Invariant: `rest` is empty whenever `first` is None.
#[derive(Debug, Default)]
pub(crate) struct Locks {
    first: Option<LockEntry>,
    rest: Vec<LockEntry>,
}

impl Locks {
    pub(crate) fn is_empty(&self) -> bool {
        self.first.is_none()
    }

    pub(crate) fn iter(&self) -> impl Iterator<Item = &LockEntry> {
        self.first.iter().chain(self.rest.iter())
    }

    pub(crate) fn push(&mut self, l: LockEntry) {
        match self.first {
            None => self.first = Some(l),
            Some(_) => self.rest.push(l),
        }
    }

    /// Removes the lock at `pos` (keeping the order of the others).
    pub(crate) fn remove(&mut self, pos: usize) -> LockEntry {
        if pos == 0 {
            let l = self.first.take().expect("a first lock");
            if !self.rest.is_empty() {
                self.first = Some(self.rest.remove(0));
            }
            l
        } else {
            self.rest.remove(pos - 1)
        }
    }

    /// Takes every lock.
    pub(crate) fn take_all(&mut self) -> Vec<LockEntry> {
        let mut v: Vec<LockEntry> = self.first.take().into_iter().collect();
        v.append(&mut self.rest);
        v
    }
}

impl std::ops::Index<usize> for Locks {
    type Output = LockEntry;
    fn index(&self, pos: usize) -> &LockEntry {
        match pos {
            0 => self.first.as_ref().expect("a first lock"),
            _ => &self.rest[pos - 1],
        }
    }
}

impl std::ops::IndexMut<usize> for Locks {
    fn index_mut(&mut self, pos: usize) -> &mut LockEntry {
        match pos {
            0 => self.first.as_mut().expect("a first lock"),
            _ => &mut self.rest[pos - 1],
        }
    }
}

/// The locks on one target, in order of arrival.
#[derive(Debug)]
pub(crate) struct Queue {
    pub(crate) target: Target,
    pub(crate) locks: Locks,
    /// The next queue whose target has the same 64-bit hash (practically never).
    next: Option<Box<Queue>>,
}

impl Queue {
    fn new(t: TargetRef<'_>) -> Queue {
        Queue {
            target: t.to_owned(),
            locks: Locks::default(),
            next: None,
        }
    }
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

/// The queues of one shard, by target hash; targets whose hashes collide are chained.
#[derive(Debug, Default)]
pub(crate) struct Shard {
    map: HashMap<u64, Queue, BuildHasherDefault<IdHasher>>,
}

impl Shard {
    /// How far down the chain of `hash` the queue of `t` is.
    fn depth(&self, hash: u64, t: TargetRef<'_>) -> Option<usize> {
        chain_depth(self.map.get(&hash)?, t)
    }

    fn nth_mut(&mut self, hash: u64, depth: usize) -> &mut Queue {
        nth(self.map.get_mut(&hash).expect("chain head"), depth)
    }

    /// The queue of `t`, found with one hash-map probe.
    pub(crate) fn queue(&mut self, hash: u64, t: TargetRef<'_>) -> Option<&mut Queue> {
        let head = self.map.get_mut(&hash)?;
        let d = chain_depth(head, t)?;
        Some(nth(head, d))
    }

    /// The queue of `t`, created empty if absent, with one hash-map probe.
    pub(crate) fn queue_or_insert(&mut self, hash: u64, t: TargetRef<'_>) -> &mut Queue {
        match self.map.entry(hash) {
            std::collections::hash_map::Entry::Vacant(v) => v.insert(Queue::new(t)),
            std::collections::hash_map::Entry::Occupied(o) => {
                let head = o.into_mut();
                match chain_depth(head, t) {
                    Some(d) => nth(head, d),
                    None => {
                        let mut q = head;
                        while q.next.is_some() {
                            q = q.next.as_deref_mut().expect("checked");
                        }
                        q.next.insert(Box::new(Queue::new(t)))
                    }
                }
            }
        }
    }

    /// Drops the queue of `t` if it holds no lock.
    pub(crate) fn remove_if_empty(&mut self, hash: u64, t: TargetRef<'_>) {
        let Some(d) = self.depth(hash, t) else {
            return;
        };
        if d == 0 {
            let head = self.map.get_mut(&hash).expect("chain head");
            if head.locks.is_empty() {
                match head.next.take() {
                    Some(next) => *head = *next,
                    None => {
                        self.map.remove(&hash);
                    }
                }
            }
            return;
        }
        let prev = self.nth_mut(hash, d - 1);
        let q = prev.next.take().expect("chain link");
        prev.next = if q.locks.is_empty() { q.next } else { Some(q) };
    }

    /// Every queue of the shard (for snapshots).
    pub(crate) fn queues(&self) -> impl Iterator<Item = &Queue> {
        self.map
            .values()
            .flat_map(|q| std::iter::successors(Some(q), |q| q.next.as_deref()))
    }
}

fn chain_depth(head: &Queue, t: TargetRef<'_>) -> Option<usize> {
    std::iter::successors(Some(head), |q| q.next.as_deref()).position(|q| q.target.as_ref() == t)
}

fn nth(head: &mut Queue, depth: usize) -> &mut Queue {
    let mut q = head;
    for _ in 0..depth {
        q = q.next.as_deref_mut().expect("chain link");
    }
    q
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn colliding_targets_chain() {
        let mut sh = Shard::default();
        let (a, b, c) = ([1u8], [2u8], [3u8]);
        fn t(k: &[u8; 1]) -> TargetRef<'_> {
            TargetRef::Rec(IndexId(1), RecKey::User(&k[..]))
        }
        // One hash for three targets.
        for k in [&a, &b, &c] {
            assert!(sh.queue_or_insert(7, t(k)).locks.is_empty());
        }
        assert_eq!(sh.queues().count(), 3);
        assert_eq!(sh.queue(7, t(&b)).map(|q| q.target.as_ref()), Some(t(&b)));
        sh.remove_if_empty(7, t(&b));
        assert!(sh.queue(7, t(&b)).is_none());
        sh.remove_if_empty(7, t(&a));
        assert_eq!(sh.queue(7, t(&c)).map(|q| q.target.as_ref()), Some(t(&c)));
        sh.remove_if_empty(7, t(&c));
        assert_eq!(sh.queues().count(), 0);
        assert_ne!(t(&a).hash(), t(&b).hash());
    }

    #[test]
    fn locks_keep_arrival_order() {
        use crate::lock::modes::{AnyMode, TableLockMode};
        use crate::lock::trx::LockTrx;
        let trx = LockTrx::new(1, 1, 1, std::time::Instant::now());
        let entry = |id| LockEntry {
            id,
            trx_id: trx.0.id,
            trx: Arc::clone(&trx.0),
            mode: AnyMode::Table(TableLockMode::IX),
            waiting: false,
            page: 0,
            no_inherit: false,
        };
        let mut l = Locks::default();
        assert!(l.is_empty());
        for id in 1..=4 {
            l.push(entry(id));
        }
        let ids = |l: &Locks| l.iter().map(|e| e.id).collect::<Vec<_>>();
        assert_eq!(l.remove(0).id, 1);
        assert_eq!(ids(&l), vec![2, 3, 4]);
        assert_eq!(l.remove(1).id, 3);
        assert_eq!((l[0].id, l[1].id), (2, 4));
        l[1].waiting = true;
        assert_eq!(l.take_all().len(), 2);
        assert!(l.is_empty());
    }
}
