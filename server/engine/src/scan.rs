//! Range scans for the SQL layer. A [`TableScan`] holds no latch between rows: each `next`
//! restores the saved cursor, moves to the next record in range, saves and releases, so the
//! caller may evaluate, lock, wait or even write the same index between rows.

use std::collections::VecDeque;
use std::ops::Bound;

use crate::cursor::{Direction, LatchMode, Restored, SavedPosition, SearchMode};
use crate::index::{BTree, ClusteredRec, Record, RecordRef, SecondaryRec};
use crate::key::cmp_prefix;
use crate::mvcc::{ReadView, VersionStore, Visible};
use crate::row::RowCodec;
use crate::table::Table;
use crate::value::Value;

/// A range of (possibly partial) encoded keys; bounds compare on their own length, so
/// `Included(p)..=Included(p)` is every key that starts with `p`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KeyRange {
    /// Lower bound.
    pub lower: Bound<Vec<u8>>,
    /// Upper bound.
    pub upper: Bound<Vec<u8>>,
}

impl KeyRange {
    /// The whole index.
    pub fn all() -> KeyRange {
        KeyRange {
            lower: Bound::Unbounded,
            upper: Bound::Unbounded,
        }
    }

    /// Every key starting with `prefix` (an equality on a key prefix).
    pub fn prefix(prefix: Vec<u8>) -> KeyRange {
        KeyRange {
            lower: Bound::Included(prefix.clone()),
            upper: Bound::Included(prefix),
        }
    }

    pub(crate) fn above_lower(&self, key: &[u8]) -> bool {
        match &self.lower {
            Bound::Unbounded => true,
            Bound::Included(b) => cmp_prefix(key, b).is_ge(),
            Bound::Excluded(b) => cmp_prefix(key, b).is_gt(),
        }
    }

    pub(crate) fn below_upper(&self, key: &[u8]) -> bool {
        match &self.upper {
            Bound::Unbounded => true,
            Bound::Included(b) => cmp_prefix(key, b).is_le(),
            Bound::Excluded(b) => cmp_prefix(key, b).is_lt(),
        }
    }
}

/// `Handler_read_*`-style counters of one scan, for the SQL layer to add to its status.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct HandlerStats {
    /// Positionings on a key (Handler_read_key; first/last count here too).
    pub read_key: u64,
    /// Steps to the next record (Handler_read_next).
    pub read_next: u64,
    /// Steps to the previous record (Handler_read_prev).
    pub read_prev: u64,
    /// Index records visited in range, delete-marked ones included.
    pub records_visited: u64,
    /// Delete-marked records skipped.
    pub delete_marked_skipped: u64,
    /// Clustered lookups made for a secondary scan's rows.
    pub clustered_lookups: u64,
}

/// One record returned by a scan.
#[derive(Debug, Clone, PartialEq)]
pub struct ScanItem {
    /// The index key of the record.
    pub key: Vec<u8>,
    /// Where the clustered key starts in `key` (0 for the clustered index).
    pub pk_offset: usize,
    /// The row, for clustered scans and for secondary scans with `fetch_rows` (None if the
    /// row vanished between the secondary entry and the lookup). With
    /// [`TableScan::project`], only the projected columns, in that order.
    pub row: Option<Vec<Value>>,
    /// The record's delete mark (only true with `include_delete_marked`).
    pub delete_mark: bool,
    /// DB_TRX_ID of the clustered record (0 for a secondary entry whose row was not fetched).
    pub trx_id: u64,
}

impl ScanItem {
    /// The clustered key of the row.
    pub fn primary_key(&self) -> &[u8] {
        &self.key[self.pk_offset..]
    }
}

enum State<R: Record> {
    Start,
    Saved(SavedPosition<R>),
    Done,
}

/// The per-index half of a scan: positioning, stepping and bounds.
struct IndexScan<'t, R: Record> {
    tree: &'t BTree<R>,
    range: KeyRange,
    dir: Direction,
    state: State<R>,
}

impl<'t, R: Record> IndexScan<'t, R> {
    /// Appends to `out` up to `max` records that `visit` accepts, under one leaf latch at a
    /// time, then saves the position on the last one and releases the latch. Each record
    /// comes with the cursor steps taken to reach it since the previous one; the steps after
    /// the last one (to the end of the range) are returned.
    fn fill<T>(
        &mut self,
        stats: &mut HandlerStats,
        max: usize,
        out: &mut VecDeque<(T, u64)>,
        mut visit: impl FnMut(R::Ref<'_>) -> Option<T>,
    ) -> u64 {
        let mut cur = self.tree.cursor(LatchMode::Read);
        let forward = self.dir == Direction::Forward;
        let mut steps = 0;
        let step = |cur: &mut crate::cursor::Cursor<'t, R>, steps: &mut u64| {
            *steps += 1;
            if forward {
                cur.move_next()
            } else {
                cur.move_prev()
            }
        };
        let mut on = match std::mem::replace(&mut self.state, State::Done) {
            State::Done => return 0,
            State::Start => {
                stats.read_key += 1;
                match (forward, &self.range.lower, &self.range.upper) {
                    (true, Bound::Included(k), _) => cur.search(k, SearchMode::Ge),
                    (true, Bound::Excluded(k), _) => cur.search(k, SearchMode::Gt),
                    (true, Bound::Unbounded, _) => cur.first(),
                    (false, _, Bound::Included(k)) => cur.search(k, SearchMode::Le),
                    (false, _, Bound::Excluded(k)) => cur.search(k, SearchMode::Lt),
                    (false, _, Bound::Unbounded) => cur.last(),
                }
            }
            State::Saved(pos) => match cur.restore(&pos, self.dir) {
                Restored::Same => step(&mut cur, &mut steps),
                Restored::Moved => cur.is_on_record(),
            },
        };
        while on {
            let rec = cur.record().expect("on record");
            let in_range = if forward {
                self.range.below_upper(rec.key())
            } else {
                self.range.above_lower(rec.key())
            };
            if !in_range {
                return steps;
            }
            stats.records_visited += 1;
            if let Some(item) = visit(rec) {
                out.push_back((item, std::mem::take(&mut steps)));
                if out.len() >= max {
                    self.state = State::Saved(cur.save());
                    return 0;
                }
            }
            on = step(&mut cur, &mut steps);
        }
        steps
    }
}

enum Kind<'t> {
    Clustered(IndexScan<'t, ClusteredRec>),
    Secondary(IndexScan<'t, SecondaryRec>),
}

/// A scan of one index of a table over a key range, in either direction.
pub struct TableScan<'t> {
    table: &'t Table,
    index: usize,
    view: Option<(&'t ReadView, u64)>,
    kind: Kind<'t>,
    fetch_rows: bool,
    include_delete_marked: bool,
    projection: Option<Vec<usize>>,
    prefetch: usize,
    /// Records the next refill reads: 1 at first, doubling up to `prefetch`.
    batch: usize,
    /// Records read ahead, each with the cursor steps that reached it: Handler_read_next /
    /// _prev count a step when its record is handed out, as MySQL counts handler calls, so
    /// reading ahead does not inflate them.
    buffer: VecDeque<(ScanItem, u64)>,
    /// Steps past the last buffered record (to the end of the range; a refill after that
    /// adds none), counted when the caller asks for a record after it.
    tail_steps: u64,
    stats: HandlerStats,
}

impl std::fmt::Debug for TableScan<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TableScan")
            .field("table", &self.table.name())
            .field("stats", &self.stats)
            .finish()
    }
}

impl Table {
    /// Scans index `index` (0 = clustered) over `range` in direction `dir`. Secondary scans
    /// return the primary key only unless [`TableScan::fetch_rows`] is set.
    pub fn scan(&self, index: usize, range: KeyRange, dir: Direction) -> TableScan<'_> {
        let kind = match index {
            0 => Kind::Clustered(IndexScan {
                tree: &self.clustered,
                range,
                dir,
                state: State::Start,
            }),
            i => Kind::Secondary(IndexScan {
                tree: &self.secondaries[i - 1].tree,
                range,
                dir,
                state: State::Start,
            }),
        };
        TableScan {
            table: self,
            index,
            view: None,
            kind,
            fetch_rows: false,
            include_delete_marked: false,
            projection: None,
            prefetch: 1,
            batch: 1,
            buffer: VecDeque::new(),
            tail_steps: 0,
            stats: HandlerStats::default(),
        }
    }
}

impl<'t> TableScan<'t> {
    /// Read as of a consistent-read view: each row as the version `view` sees (for the
    /// reader whose transaction id is `me`, 0 if none), skipping rows it does not see; a
    /// secondary entry is returned only if the visible version of its row has that entry.
    pub fn read_view(mut self, view: &'t ReadView, me: u64) -> Self {
        self.view = Some((view, me));
        self
    }

    /// Also look up the row of each secondary entry in the clustered index.
    pub fn fetch_rows(mut self, yes: bool) -> Self {
        self.fetch_rows = yes;
        self
    }

    #[cfg(test)]
    /// Return delete-marked records too (the lock manager visits them).
    pub(crate) fn include_delete_marked(mut self, yes: bool) -> Self {
        self.include_delete_marked = yes;
        self
    }

    /// Decode only these columns of each row, in this order (e.g. sysbench's `SELECT c`).
    pub fn project(mut self, columns: Vec<usize>) -> Self {
        self.projection = Some(columns);
        self
    }

    /// Read up to `rows` records per latch hold and hand them out from a buffer (InnoDB's
    /// row prefetch cache for plain SELECTs). The first refill reads one record and each
    /// next one twice as many, up to `rows`, so a scan that LIMIT stops early reads little
    /// ahead. Buffered rows are as of their read, so use it only for non-locking reads that
    /// do not write the scanned table.
    pub fn prefetch(mut self, rows: usize) -> Self {
        self.prefetch = rows.max(1);
        self
    }

    /// Counters so far.
    pub fn stats(&self) -> &HandlerStats {
        &self.stats
    }

    /// The next record in range, or None at the end.
    pub fn next_item(&mut self) -> Option<ScanItem> {
        // No latch is held between rows: a cooperative safe point (the thread pool may ask
        // a long scan to yield here).
        pool_core::wait::safe_point();
        loop {
            if self.buffer.is_empty() {
                self.refill();
            }
            let Some((mut item, steps)) = self.buffer.pop_front() else {
                self.count_tail();
                return None;
            };
            self.count_steps(steps);
            let Some((view, me)) = self.view.filter(|_| !self.is_clustered()) else {
                return Some(self.fetch_latest(item));
            };
            self.stats.clustered_lookups += 1;
            match self.visible_row_of_entry(&item, view, me) {
                Some((row, trx_id)) => {
                    item.row = self.fetch_rows.then_some(row);
                    item.trx_id = trx_id;
                    item.delete_mark = false;
                }
                None => {
                    item.row = None;
                    item.delete_mark = true;
                    if !self.include_delete_marked {
                        continue; // the view does not see this entry's row
                    }
                }
            }
            return Some(item);
        }
    }

    /// Fills a secondary entry's row from the latest clustered version (with `fetch_rows`).
    fn fetch_latest(&mut self, mut item: ScanItem) -> ScanItem {
        if self.fetch_rows && !self.is_clustered() {
            // The secondary entry's latch is released: look the row up in the clustered
            // index now.
            self.stats.clustered_lookups += 1;
            let codec = self.table.codec();
            let projection = self.projection.as_deref();
            let found = self.table.clustered_index().get(item.primary_key(), |r| {
                (!r.delete_mark()).then(|| (decode(codec, projection, r.row()), r.trx_id()))
            });
            if let Some(Some((row, trx_id))) = found {
                item.row = Some(row);
                item.trx_id = trx_id;
            }
        }
        item
    }

    /// The row (projected) and DB_TRX_ID of the version of `item`'s row that `view` sees, if
    /// that version exists, is not deleted and has `item`'s secondary key.
    fn visible_row_of_entry(
        &self,
        item: &ScanItem,
        view: &ReadView,
        me: u64,
    ) -> Option<(Vec<Value>, u64)> {
        let t = self.table;
        let codec = t.codec();
        let projection = self.projection.as_deref();
        let versions: &VersionStore = t.versions();
        t.clustered_index()
            .get(item.primary_key(), |r| {
                let older;
                let (bytes, trx_id, deleted, latest) = match view.visible_version(r, me, versions) {
                    Visible::Nothing => return None,
                    Visible::Current => (r.row(), r.trx_id(), r.delete_mark(), true),
                    Visible::Older(v) => {
                        older = v;
                        (
                            older.row_or(r.row()),
                            older.trx_id,
                            older.delete_mark,
                            false,
                        )
                    }
                };
                if deleted {
                    return None;
                }
                // A live entry belongs to the latest version; otherwise compare keys.
                if (!latest || item.delete_mark)
                    && t.secondary_key_of(self.index, bytes, item.primary_key()) != item.key
                {
                    return None;
                }
                Some((decode(codec, projection, bytes), trx_id))
            })
            .flatten()
    }

    fn count_tail(&mut self) {
        let steps = std::mem::take(&mut self.tail_steps);
        self.count_steps(steps);
    }

    fn count_steps(&mut self, steps: u64) {
        match &self.kind {
            Kind::Clustered(IndexScan { dir, .. }) | Kind::Secondary(IndexScan { dir, .. }) => {
                if *dir == Direction::Forward {
                    self.stats.read_next += steps;
                } else {
                    self.stats.read_prev += steps;
                }
            }
        }
    }

    fn is_clustered(&self) -> bool {
        matches!(self.kind, Kind::Clustered(_))
    }

    fn refill(&mut self) {
        let include = self.include_delete_marked;
        let view = self.view;
        let versions = self.table.versions();
        let codec = self.table.codec();
        let projection = self.projection.as_deref();
        let (stats, max, out) = (&mut self.stats, self.batch, &mut self.buffer);
        self.batch = (self.batch * 2).min(self.prefetch);
        self.tail_steps += match &mut self.kind {
            Kind::Clustered(scan) => scan.fill(stats, max, out, |r| {
                let older = match view {
                    None => None,
                    Some((v, me)) => match v.visible_version(r, me, versions) {
                        Visible::Nothing => return None,
                        Visible::Current => None,
                        Visible::Older(old) => Some(old),
                    },
                };
                let (bytes, trx_id, deleted) = match &older {
                    Some(v) => (v.row_or(r.row()), v.trx_id, v.delete_mark),
                    None => (r.row(), r.trx_id(), r.delete_mark()),
                };
                (include || !deleted).then(|| ScanItem {
                    key: r.key().to_vec(),
                    pk_offset: 0,
                    row: Some(decode(codec, projection, bytes)),
                    delete_mark: deleted,
                    trx_id,
                })
            }),
            Kind::Secondary(scan) => scan.fill(stats, max, out, |r| {
                (include || view.is_some() || !r.delete_mark()).then(|| ScanItem {
                    key: r.key().to_vec(),
                    pk_offset: r.pk_offset(),
                    row: None,
                    delete_mark: r.delete_mark(),
                    trx_id: 0,
                })
            }),
        };
    }
}

fn decode(codec: &RowCodec, projection: Option<&[usize]>, row: &[u8]) -> Vec<Value> {
    match projection {
        Some(cols) => codec.decode_columns(row, cols),
        None => codec.decode(row),
    }
}

impl Iterator for TableScan<'_> {
    type Item = ScanItem;
    fn next(&mut self) -> Option<ScanItem> {
        self.next_item()
    }
}
