//! Implicit-lock conversion and gap-lock inheritance: the two ways a lock appears for a
//! transaction that did not request it. Invariant: both only add *granted* locks that no
//! granted lock conflicts with (the inserter's record lock on a record nobody else holds, and
//! gap locks, which never wait), so adding them never needs a grant pass; only removal, which
//! empties the removed record's queue, wakes anyone.

use std::sync::atomic::Ordering::Relaxed;
use std::sync::Arc;

use super::modes::{AnyMode, GapKind, RecLockMode, Strength};
use super::sys::{LockSys, RecAt};
use super::table::{IndexId, LockEntry, RecKey, TargetRef};
use super::trx::{Held, TrxId, TrxShared, WaitOutcome};

/// Why gap locks are inherited.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Inherit {
    /// A record was inserted before `from`: it inherits `from`'s gap-type locks (GAP and
    /// next-key; every lock on the supremum), granted or waiting, as granted GAP locks, so
    /// the split gap stays locked.
    Insert,
    /// Record `from` is removed (purge, rollback of an insert): its locks move to its
    /// successor as GAP locks, except X locks of READ COMMITTED transactions; then `from`'s
    /// queue is emptied (its waiters wake as granted and find their cursor's successor).
    Removal,
}

impl LockSys {
    /// Converts the implicit lock of `holder` on a record into its explicit granted
    /// `X,REC_NOT_GAP` (call under the leaf latch, when the record's DB_TRX_ID is an active
    /// transaction other than the requester's, before requesting the lock). Returns whether
    /// the holder now has such a lock (false: the holder is not registered or has released).
    pub(crate) fn convert_implicit(&self, holder: TrxId, rec: RecAt<'_>) -> bool {
        let Some(h) = self.inner.find_trx(holder) else {
            return false;
        };
        let mode = AnyMode::Rec(RecLockMode::X_REC_NOT_GAP);
        let t = TargetRef::Rec(rec.index, rec.key);
        let hash = t.hash();
        let mut shard = self.inner.table.shard(hash);
        let q = shard.queue_or_insert(hash, t);
        if q.covered(holder, mode) {
            return true;
        }
        let mut st = h.state();
        if st.released {
            drop(st);
            shard.remove_if_empty(hash, t);
            return false;
        }
        let id = self.inner.next_id.fetch_add(1, Relaxed);
        q.locks.push(LockEntry {
            id,
            trx_id: h.id,
            trx: Arc::clone(&h),
            mode,
            waiting: false,
            page: rec.page,
            no_inherit: h.read_committed.load(Relaxed),
        });
        st.add(Held {
            id,
            hash,
            target: q.target.clone(),
            mode,
            page: rec.page,
        });
        true
    }

    /// Gap-lock inheritance between neighbouring records `from` → `to` of `index` (see
    /// [`Inherit`]); call under the leaf latch of the insert or purge. `to_page` is the heir's
    /// page.
    pub(crate) fn inherit_gap_locks(
        &self,
        index: IndexId,
        from: RecKey<'_>,
        to: RecKey<'_>,
        to_page: u64,
        why: Inherit,
    ) {
        let ft = TargetRef::Rec(index, from);
        let fhash = ft.hash();
        let heirs: Vec<(Arc<TrxShared>, Strength)> = {
            let mut shard = self.inner.table.shard(fhash);
            let Some(q) = shard.queue(fhash, ft) else {
                return;
            };
            let from_sup = from == RecKey::Supremum;
            // Waiting locks too, as InnoDB's `lock_rec_inherit_to_gap*` walk every lock on the
            // record: a gap lock never waits, so the heir's is granted at once.
            q.locks
                .iter()
                .filter_map(|l| match l.mode {
                    AnyMode::Rec(m) if !m.is_insert_intention() => {
                        let ok = match why {
                            Inherit::Insert => from_sup || m.kind() != GapKind::RecNotGap,
                            Inherit::Removal => !l.no_inherit,
                        };
                        ok.then(|| (Arc::clone(&l.trx), m.strength()))
                    }
                    _ => None,
                })
                .collect()
        };
        let tt = TargetRef::Rec(index, to);
        let thash = tt.hash();
        let to_sup = to == RecKey::Supremum;
        {
            let mut shard = self.inner.table.shard(thash);
            let q = shard.queue_or_insert(thash, tt);
            for (trx, strength) in heirs {
                let m = RecLockMode::new(strength, GapKind::Gap);
                let m = AnyMode::Rec(if to_sup { m.on_supremum() } else { m });
                if q.covered(trx.id, m) {
                    continue;
                }
                let mut st = trx.state();
                if st.released {
                    continue;
                }
                let id = self.inner.next_id.fetch_add(1, Relaxed);
                q.locks.push(LockEntry {
                    id,
                    trx_id: trx.id,
                    trx: Arc::clone(&trx),
                    mode: m,
                    waiting: false,
                    page: to_page,
                    no_inherit: false,
                });
                st.add(Held {
                    id,
                    hash: thash,
                    target: q.target.clone(),
                    mode: m,
                    page: to_page,
                });
            }
            shard.remove_if_empty(thash, tt);
        }
        if why == Inherit::Removal {
            let mut shard = self.inner.table.shard(fhash);
            if let Some(q) = shard.queue(fhash, ft) {
                for l in q.locks.take_all() {
                    l.trx.state().remove(l.id);
                    if l.waiting {
                        l.trx.wake(l.id, WaitOutcome::Granted);
                    }
                }
            }
            shard.remove_if_empty(fhash, ft);
        }
    }
}
