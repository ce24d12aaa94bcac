//! Locking reads: a scan of one index range that locks each record it visits the way
//! InnoDB's `row_search_mvcc` does (the rules are in `docs/locking.md`) and returns the
//! latest version.
//!
//! A unique search (each range an equality on every column of a unique index) ends at the
//! record it matches: the next record is neither read nor locked, as in InnoDB, where
//! `row_search_mvcc` answers "not found" to the fetch after a unique match, so no gap past
//! the match is locked.
//!
//! The latch/lock protocol: every lock call happens under the leaf latch of the record; a
//! request that must wait saves the cursor on the record, releases every latch, waits, then
//! restores the cursor and processes the record again (now covered by the granted lock), or
//! its successor if the record was removed meanwhile. SKIP LOCKED visits the record and
//! moves on; NOWAIT fails the statement.

use std::ops::Bound;
use std::time::Duration;

use super::{index_id, TrxSys};
use crate::cursor::{Cursor, Direction, LatchMode, SavedPosition, SearchMode};
use crate::index::{ClusteredRec, ClusteredRef, Record, RecordRef, SecondaryRec};
use crate::lock::{
    Acquired, GapKind, HintOwners, LockError, LockHint, LockTrx, LockWait, RecAt, RecKey,
    RecLockMode, Strength, WaitPolicy,
};
use crate::row_buf::RowBuf;
use crate::value::Value;
use crate::{HandlerStats, KeyRange, Restored, Table};

/// S (FOR SHARE) or X (FOR UPDATE, UPDATE, DELETE).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ScanLockMode {
    /// Shared locks.
    Shared,
    /// Exclusive locks.
    Exclusive,
}

/// A row a locking scan returns.
#[derive(Debug, Clone, PartialEq)]
pub struct Fetched {
    /// Its clustered key.
    pub pk: Vec<u8>,
    /// The projected columns of its latest version (or, when `semi`, of its latest committed
    /// version).
    pub row: Vec<Value>,
    /// A semi-consistent read: the row is locked by another transaction and was not waited
    /// for; if it matches, call [`LockingScan::lock_semi_row`] and fetch again.
    pub semi: bool,
}

enum Saved {
    Clustered(SavedPosition<ClusteredRec>),
    Secondary(SavedPosition<SecondaryRec>),
}

enum State {
    Start,
    /// Saved on a record; `same`: process that record again.
    At(Saved, bool),
    Done,
}

enum Got {
    Granted(bool),
    Skipped,
    Wait(LockWait),
}

impl From<(Acquired, bool)> for Got {
    /// A lock system answer, with whether the lock was newly created.
    fn from((a, fresh): (Acquired, bool)) -> Got {
        match a {
            Acquired::Granted => Got::Granted(fresh),
            Acquired::Skipped => Got::Skipped,
            Acquired::Wait(w) => Got::Wait(w),
        }
    }
}

/// How a locking scan should behave.
#[derive(Debug, Clone, Copy)]
pub struct ScanOptions {
    /// S or X.
    pub mode: ScanLockMode,
    /// Wait, NOWAIT or SKIP LOCKED.
    pub policy: WaitPolicy,
    /// RR/SERIALIZABLE: next-key and gap locks.
    pub gaps: bool,
    /// Each range is an equality on every column of a unique index with no NULL in the
    /// searched values (InnoDB's `unique_search`): a live match is locked record-only and ends
    /// the scan; a delete-marked clustered match ends it too. Such a scan always runs forward.
    pub unique_point: bool,
    /// A shared read the secondary index covers: lock only the secondary record.
    pub covering_shared: bool,
    /// RC UPDATE on the clustered index: try semi-consistent reads (never in a unique
    /// search, as in InnoDB).
    pub semi_consistent: bool,
    /// `innodb_lock_wait_timeout`.
    pub timeout: Duration,
}

/// A locking scan of one range of one index.
pub struct LockingScan<'t> {
    sys: &'t TrxSys,
    lt: LockTrx,
    table: &'t Table,
    index: usize,
    range: KeyRange,
    dir: Direction,
    opts: ScanOptions,
    eq_prefix: bool,
    projection: Vec<usize>,
    state: State,
    retry_wait: bool,
    /// A record equal to the inclusive upper bound of a clustered scan is locked.
    bound_locked: bool,
    fresh: Vec<(usize, Vec<u8>, RecLockMode)>,
    owners: HintOwners,
    /// Handler counters; `records_visited` counts records in range, skipped ones included.
    pub stats: HandlerStats,
    /// Records skipped because another transaction holds them (SKIP LOCKED).
    pub skipped: u64,
}

impl std::fmt::Debug for LockingScan<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LockingScan")
            .field("table", &self.table.name())
            .field("index", &self.index)
            .field("visited", &self.stats.records_visited)
            .finish()
    }
}

impl<'t> LockingScan<'t> {
    /// A locking scan of `range` of index `index` for transaction `lt`, returning the
    /// columns `projection` of each row.
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        sys: &'t TrxSys,
        lt: LockTrx,
        table: &'t Table,
        index: usize,
        range: KeyRange,
        dir: Direction,
        opts: ScanOptions,
        projection: Vec<usize>,
    ) -> LockingScan<'t> {
        let eq_prefix = matches!((&range.lower, &range.upper),
            (Bound::Included(a), Bound::Included(b)) if a == b);
        // A unique search reads one key exactly, forward, whatever the scan order (MySQL reads
        // an equality range with HA_READ_KEY_EXACT even in a descending range scan), so a miss
        // locks the gap the key would be in.
        let dir = if opts.unique_point {
            Direction::Forward
        } else {
            dir
        };
        LockingScan {
            sys,
            lt,
            table,
            index,
            range,
            dir,
            opts,
            eq_prefix,
            projection,
            state: State::Start,
            retry_wait: false,
            bound_locked: false,
            fresh: Vec::new(),
            owners: HintOwners::default(),
            stats: HandlerStats::default(),
            skipped: 0,
        }
    }

    fn strength(&self) -> Strength {
        match self.opts.mode {
            ScanLockMode::Shared => Strength::S,
            ScanLockMode::Exclusive => Strength::X,
        }
    }

    fn forward(&self) -> bool {
        self.dir == Direction::Forward
    }

    fn in_range(&self, key: &[u8]) -> bool {
        if self.forward() {
            self.range.below_upper(key)
        } else {
            self.range.above_lower(key)
        }
    }

    /// The record the cursor is on (`on`), when it lies inside the range; None at the end of
    /// the range or of the index.
    fn record_in_range<'c, R: Record>(
        &self,
        cur: &'c Cursor<'_, R>,
        on: bool,
    ) -> Option<R::Ref<'c>> {
        if !on {
            return None;
        }
        cur.record().filter(|r| self.in_range(r.key()))
    }

    /// Locks the records of the row last returned that this fetch newly locked (READ
    /// COMMITTED's release of a row the WHERE rejected).
    pub fn unlock_row(&mut self) {
        for (index, key, mode) in self.fresh.drain(..) {
            self.sys.locks.release_rec(
                &self.lt,
                RecAt {
                    index: index_id(self.table, index),
                    key: RecKey::User(&key),
                    page: 0,
                },
                mode,
            );
        }
    }

    /// After a semi-consistent row matched: the next fetch locks it, waiting if needed, and
    /// returns its latest version.
    pub fn lock_semi_row(&mut self) {
        if let State::At(_, same) = &mut self.state {
            *same = true;
            self.retry_wait = true;
        }
    }

    fn lock(
        &self,
        index: usize,
        key: Option<&[u8]>,
        page: u64,
        mode: RecLockMode,
        policy: WaitPolicy,
    ) -> Result<Got, LockError> {
        let rec = RecAt {
            index: index_id(self.table, index),
            key: key.map_or(RecKey::Supremum, RecKey::User),
            page,
        };
        Ok(Got::from(
            self.sys.locks.lock_rec_new(&self.lt, rec, mode, policy)?,
        ))
    }

    /// Locks a user record that carries a lock hint (SKIP LOCKED and NOWAIT decide from a
    /// hint that proves a conflict, without the lock table).
    fn lock_record(
        &mut self,
        index: usize,
        key: &[u8],
        hint: &LockHint,
        page: u64,
        mode: RecLockMode,
        policy: WaitPolicy,
    ) -> Result<Got, LockError> {
        let rec = RecAt {
            index: index_id(self.table, index),
            key: RecKey::User(key),
            page,
        };
        let owners = &mut self.owners;
        let got = self
            .sys
            .locks
            .lock_rec_hinted(&self.lt, rec, mode, policy, hint, owners)?;
        Ok(Got::from(got))
    }

    /// The lock on a record in the range, as [`LockingScan::lock_record`] gives it, except
    /// that a SKIP LOCKED scan skips a record whose lock hint refuses it without the call into
    /// the lock system (the same answer, at the skip loop's cost per locked row).
    #[inline]
    fn lock_or_skip(
        &mut self,
        index: usize,
        key: &[u8],
        hint: &LockHint,
        page: u64,
        mode: RecLockMode,
        policy: WaitPolicy,
    ) -> Result<Got, LockError> {
        if policy == WaitPolicy::SkipLocked
            && self
                .sys
                .locks
                .hint_refuses(&self.lt, mode, hint, &mut self.owners)
        {
            return Ok(Got::Skipped);
        }
        self.lock_record(index, key, hint, page, mode, policy)
    }

    /// Converts another active transaction's implicit lock on a record it wrote. The lock
    /// system's sharded registry decides whether the writer is still active, so a visited
    /// record costs no global mutex.
    fn convert_implicit(&self, index: usize, key: &[u8], page: u64, writer: u64) {
        if writer != self.lt.id() && writer >= self.sys.min_active_id() {
            self.sys.locks.convert_implicit(
                writer,
                RecAt {
                    index: index_id(self.table, index),
                    key: RecKey::User(key),
                    page,
                },
            );
        }
    }

    fn wait(&self, w: LockWait) -> Result<(), LockError> {
        let _g = pool_core::wait::begin(pool_core::wait::WaitKind::RowLock);
        w.wait(self.opts.timeout)
    }

    /// The lock on a record in the range: record-only without gap locks, on a live match of a
    /// unique search, and on a clustered record equal to a `>=` bound that is a whole primary
    /// key (no insert into the gap before it can be in the range); next-key otherwise
    /// (InnoDB's `row_compare_row_to_range`). The last rule also makes a unique search that
    /// meets a delete-marked clustered record lock it record-only; in a UNIQUE secondary
    /// index such a record gets a next-key lock.
    fn mode_for(&self, key: &[u8], delete_marked: bool) -> RecLockMode {
        let record_only =
            !self.opts.gaps || (self.opts.unique_point && !delete_marked) || self.is_ge_bound(key);
        let kind = if record_only {
            GapKind::RecNotGap
        } else {
            GapKind::NextKey
        };
        RecLockMode::new(self.strength(), kind)
    }

    /// An ascending clustered scan's record equal to its inclusive lower bound (the bound is
    /// then a whole primary key).
    fn is_ge_bound(&self, key: &[u8]) -> bool {
        self.index == 0
            && self.forward()
            && matches!(&self.range.lower, Bound::Included(b) if b.as_slice() == key)
    }

    /// An ascending clustered scan's record equal to its inclusive upper bound: once it is
    /// locked, no later record can be in the range.
    fn is_le_bound(&self, key: &[u8]) -> bool {
        self.index == 0
            && self.forward()
            && matches!(&self.range.upper, Bound::Included(b) if b.as_slice() == key)
    }

    /// The lock on the first record past the range (RR): a gap lock after an equality
    /// prefix or a bounded ascending clustered scan, else next-key. (After a record equal to
    /// a clustered scan's inclusive upper bound, [`LockingScan::lock_past_end`] takes none.)
    fn past_range_mode(&self) -> RecLockMode {
        let gap = self.eq_prefix
            || (self.index == 0 && self.forward() && self.range.upper != Bound::Unbounded);
        RecLockMode::new(
            self.strength(),
            if gap { GapKind::Gap } else { GapKind::NextKey },
        )
    }

    fn position<R: Record>(
        &mut self,
        cur: &mut Cursor<'_, R>,
        saved: Option<(SavedPosition<R>, bool)>,
    ) -> bool {
        match saved {
            None => {
                self.stats.read_key += 1;
                match (self.forward(), &self.range.lower, &self.range.upper) {
                    (true, Bound::Included(k), _) => cur.search(k, SearchMode::Ge),
                    (true, Bound::Excluded(k), _) => cur.search(k, SearchMode::Gt),
                    (true, Bound::Unbounded, _) => cur.first(),
                    (false, _, Bound::Included(k)) => cur.search(k, SearchMode::Le),
                    (false, _, Bound::Excluded(k)) => cur.search(k, SearchMode::Lt),
                    (false, _, Bound::Unbounded) => cur.last(),
                }
            }
            Some((pos, same)) => match cur.restore(&pos, self.dir) {
                Restored::Same if same => true,
                Restored::Same => self.step(cur),
                Restored::Moved => cur.is_on_record(),
            },
        }
    }

    fn step<R: Record>(&mut self, cur: &mut Cursor<'_, R>) -> bool {
        if self.forward() {
            self.stats.read_next += 1;
            cur.move_next()
        } else {
            self.stats.read_prev += 1;
            cur.move_prev()
        }
    }

    /// Where the scan stands after returning the row at `pos`: a unique search is over (the
    /// key matches no other live record, so the next one is not read), any other scan goes
    /// on from the row.
    fn after_match(&self, pos: Saved) -> State {
        if self.opts.unique_point {
            State::Done
        } else {
            State::At(pos, false)
        }
    }

    /// The next row, locked; None at the end of the range.
    pub fn fetch(&mut self) -> Result<Option<Fetched>, LockError> {
        // Between rows the position is saved and no latch is held: a cooperative safe point.
        pool_core::wait::safe_point();
        self.fresh.clear();
        if self.index == 0 {
            self.next_clustered()
        } else {
            self.next_secondary()
        }
    }

    /// Handles the end of the range (or of the index): in RR locks the record past it (or
    /// the supremum going forward), unless the scan locked a record equal to its inclusive
    /// upper bound (InnoDB's `m_stop_tuple_found`: the gap after it is outside the range).
    /// Returns Some(wait) when that lock must be waited for.
    fn lock_past_end(&self, key: Option<&[u8]>, page: u64) -> Result<Option<LockWait>, LockError> {
        if !self.opts.gaps || (key.is_none() && !self.forward()) || self.bound_locked {
            return Ok(None);
        }
        let mode = match key {
            Some(_) => self.past_range_mode(),
            None => RecLockMode::new(self.strength(), GapKind::NextKey),
        };
        match self.lock(self.index, key, page, mode, WaitPolicy::Wait)? {
            Got::Wait(w) => Ok(Some(w)),
            _ => Ok(None),
        }
    }

    /// At the end of the range (`on`: the cursor is on the first record past it, else past
    /// the index's end): locks what RR locks there. Returns true when that lock had to be
    /// waited for (the position is saved to be processed again), false when the scan is done.
    fn end_of_range<R: Record>(
        &mut self,
        mut cur: Cursor<'_, R>,
        on: bool,
        saved: fn(SavedPosition<R>) -> Saved,
    ) -> Result<bool, LockError> {
        let (key, page) = match cur.record() {
            Some(r) if on => (Some(r.key().to_vec()), cur.page_id().unwrap_or(0)),
            _ => (None, 0),
        };
        let Some(w) = self.lock_past_end(key.as_deref(), page)? else {
            return Ok(false);
        };
        self.state = State::At(saved(cur.save()), true);
        drop(cur);
        self.wait(w)?;
        Ok(true)
    }

    fn next_clustered(&mut self) -> Result<Option<Fetched>, LockError> {
        let tree = self.table.clustered_index();
        loop {
            let saved = match std::mem::replace(&mut self.state, State::Done) {
                State::Done => return Ok(None),
                State::Start => None,
                State::At(Saved::Clustered(p), same) => Some((p, same)),
                State::At(Saved::Secondary(_), _) => unreachable!("clustered scan"),
            };
            let mut cur = tree.cursor(LatchMode::Read);
            let mut on = self.position(&mut cur, saved);
            loop {
                let Some(rec) = self.record_in_range(&cur, on) else {
                    if self.end_of_range(cur, on, Saved::Clustered)? {
                        break; // waited for the lock past the range: restore and retry
                    }
                    return Ok(None);
                };
                let page = cur.page_id().unwrap_or(0);
                self.stats.records_visited += 1;
                self.convert_implicit(0, rec.key(), page, rec.trx_id());
                let mode = self.mode_for(rec.key(), rec.delete_mark());
                let semi = self.opts.semi_consistent && !self.opts.unique_point && !self.retry_wait;
                let policy = if semi {
                    WaitPolicy::SkipLocked
                } else {
                    self.opts.policy
                };
                match self.lock_or_skip(0, rec.key(), rec.lock_hint(), page, mode, policy)? {
                    Got::Granted(fresh) => {
                        self.bound_locked |= self.is_le_bound(rec.key());
                        if rec.delete_mark() {
                            if fresh && !self.opts.gaps {
                                self.fresh.push((0, rec.key().to_vec(), mode));
                                self.unlock_row();
                            }
                            if self.opts.unique_point {
                                // The only record the key can match is deleted: the search
                                // ends here without reading the next record (InnoDB's
                                // clustered unique search on a delete-marked record).
                                return Ok(None);
                            }
                            on = self.step(&mut cur);
                            continue;
                        }
                        if fresh {
                            self.fresh.push((0, rec.key().to_vec(), mode));
                        }
                        let out = Fetched {
                            pk: rec.key().to_vec(),
                            row: self
                                .table
                                .codec()
                                .decode_columns(rec.row(), &self.projection),
                            semi: false,
                        };
                        self.retry_wait = false;
                        self.state = self.after_match(Saved::Clustered(cur.save()));
                        return Ok(Some(out));
                    }
                    Got::Skipped if semi => match self.latest_committed(rec) {
                        Some(bytes) => {
                            let out = Fetched {
                                pk: rec.key().to_vec(),
                                row: self.table.codec().decode_columns(&bytes, &self.projection),
                                semi: true,
                            };
                            self.state = State::At(Saved::Clustered(cur.save()), false);
                            return Ok(Some(out));
                        }
                        None => {
                            on = self.step(&mut cur);
                            continue;
                        }
                    },
                    Got::Skipped => {
                        self.skipped += 1;
                        if pool_core::wait::yield_requested() {
                            // The skip loop holds the leaf latch: save past this record,
                            // release it, yield, and carry on from the saved position.
                            self.state = State::At(Saved::Clustered(cur.save()), false);
                            drop(cur);
                            pool_core::wait::yield_now();
                            break;
                        }
                        on = self.step(&mut cur);
                    }
                    Got::Wait(w) => {
                        self.state = State::At(Saved::Clustered(cur.save()), true);
                        drop(cur);
                        self.wait(w)?;
                        break;
                    }
                }
            }
        }
    }

    /// The row bytes of the latest committed version of `rec` (None: none, or deleted).
    fn latest_committed(&self, rec: ClusteredRef<'_>) -> Option<RowBuf> {
        // `row` None: the record's own bytes (copied only if they are the answer).
        let (mut row, mut trx_id, mut roll_ptr, mut deleted) =
            (None, rec.trx_id(), rec.roll_ptr(), rec.delete_mark());
        while trx_id != self.lt.id() && self.sys.is_active(trx_id) {
            let v = self.table.versions().get(roll_ptr)?;
            row = v.row.or(row);
            (trx_id, roll_ptr, deleted) = (v.trx_id, v.roll_ptr, v.delete_mark);
        }
        (!deleted).then(|| row.unwrap_or_else(|| RowBuf::new(rec.row())))
    }

    fn next_secondary(&mut self) -> Result<Option<Fetched>, LockError> {
        let tree = self.table.secondary_index(self.index);
        let clustered = self.table.clustered_index();
        loop {
            let saved = match std::mem::replace(&mut self.state, State::Done) {
                State::Done => return Ok(None),
                State::Start => None,
                State::At(Saved::Secondary(p), same) => Some((p, same)),
                State::At(Saved::Clustered(_), _) => unreachable!("secondary scan"),
            };
            let mut cur = tree.cursor(LatchMode::Read);
            let mut on = self.position(&mut cur, saved);
            'records: loop {
                let Some(rec) = self.record_in_range(&cur, on) else {
                    if self.end_of_range(cur, on, Saved::Secondary)? {
                        break; // waited for the lock past the range: restore and retry
                    }
                    return Ok(None);
                };
                let page = cur.page_id().unwrap_or(0);
                self.stats.records_visited += 1;
                if cur.page_max_trx_id().unwrap_or(u64::MAX) >= self.sys.min_active_id() {
                    // The page was written by a transaction that may still be active: the
                    // row's writer holds an implicit lock on the entry if it is active.
                    if let Some(writer) = clustered.get(rec.primary_key(), |r| r.trx_id()) {
                        self.convert_implicit(self.index, rec.key(), page, writer);
                    }
                }
                let mode = self.mode_for(rec.key(), rec.delete_mark());
                let (index, policy) = (self.index, self.opts.policy);
                match self.lock_or_skip(index, rec.key(), rec.lock_hint(), page, mode, policy)? {
                    Got::Skipped => {
                        self.skipped += 1;
                        if pool_core::wait::yield_requested() {
                            // As in the clustered skip loop: save, release, yield, resume.
                            self.state = State::At(Saved::Secondary(cur.save()), false);
                            drop(cur);
                            pool_core::wait::yield_now();
                            break;
                        }
                        on = self.step(&mut cur);
                        continue;
                    }
                    Got::Wait(w) => {
                        self.state = State::At(Saved::Secondary(cur.save()), true);
                        drop(cur);
                        self.wait(w)?;
                        break;
                    }
                    Got::Granted(fresh) => {
                        if fresh {
                            self.fresh.push((self.index, rec.key().to_vec(), mode));
                        }
                        if rec.delete_mark() {
                            if !self.opts.gaps {
                                self.unlock_row();
                            }
                            self.fresh.clear();
                            on = self.step(&mut cur);
                            continue;
                        }
                    }
                }
                let pk = rec.primary_key().to_vec();
                // The clustered record, under its own latch (secondary → clustered order).
                let mut cc = clustered.cursor(LatchMode::Read);
                if !(cc.search(&pk, SearchMode::Ge) && cc.record().is_some_and(|r| r.key() == pk)) {
                    drop(cc);
                    self.fresh.clear();
                    on = self.step(&mut cur);
                    continue;
                }
                if !self.opts.covering_shared {
                    let crec = cc.record().expect("on record");
                    let cpage = cc.page_id().unwrap_or(0);
                    self.convert_implicit(0, &pk, cpage, crec.trx_id());
                    let cmode = RecLockMode::new(self.strength(), GapKind::RecNotGap);
                    let policy = self.opts.policy;
                    match self.lock_record(0, &pk, crec.lock_hint(), cpage, cmode, policy)? {
                        Got::Granted(fresh) => {
                            if fresh {
                                self.fresh.push((0, pk.clone(), cmode));
                            }
                        }
                        Got::Skipped => {
                            drop(cc);
                            self.skipped += 1;
                            self.fresh.clear();
                            on = self.step(&mut cur);
                            continue 'records;
                        }
                        Got::Wait(w) => {
                            drop(cc);
                            self.state = State::At(Saved::Secondary(cur.save()), true);
                            drop(cur);
                            self.wait(w)?;
                            break 'records;
                        }
                    }
                }
                let crec = cc.record().expect("on record");
                if crec.delete_mark() {
                    drop(cc);
                    if !self.opts.gaps {
                        self.unlock_row();
                    }
                    self.fresh.clear();
                    on = self.step(&mut cur);
                    continue;
                }
                let row = self
                    .table
                    .codec()
                    .decode_columns(crec.row(), &self.projection);
                drop(cc);
                self.state = self.after_match(Saved::Secondary(cur.save()));
                return Ok(Some(Fetched {
                    pk,
                    row,
                    semi: false,
                }));
            }
        }
    }
}
