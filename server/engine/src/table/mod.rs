//! A table: its definition, the clustered index holding the rows, one B+tree per secondary
//! index, and the old versions of its rows. Every write keeps the indexes consistent: each
//! live row has exactly one non-delete-marked entry (its secondary key columns ++ primary
//! key) in every secondary index; the entries of deleted rows and of old versions stay,
//! delete-marked, until rollback or purge removes them.
//!
//! Write order, chosen so that a failing statement leaves no trace: coerce → duplicate checks
//! on the clustered index and the UNIQUE secondaries → clustered write (whose own duplicate
//! check may still fail, before anything else changed) → secondary writes. A write may also
//! fail where its caller's check hook refuses (a lock it must wait for, under a leaf latch);
//! if that happens at a secondary index, the clustered write and the secondary writes before
//! it are rolled back before the error returns. Duplicate checks and inserts on a UNIQUE
//! secondary index are serialised by that index's mutex (an equal prefix may span leaves),
//! held for the whole write; primary-key uniqueness is decided under the leaf latch.
//!
//! Versions: a write stamps the clustered record with its transaction (DB_TRX_ID) and keeps
//! the version it replaced in the table's [`VersionStore`], reached through the record's
//! roll pointer (DB_ROLL_PTR); the version shares the row bytes instead of copying them, so a
//! delete-mark costs no copy of the row. A delete only delete-marks; an insert of a key whose record
//! is delete-marked overwrites that record in place, keeping the old one as a version. The
//! logged [`Change`]s let rollback invert a write and purge remove what no read view needs.

use std::sync::atomic::{AtomicI64, AtomicU64, Ordering::Relaxed};
use std::sync::Mutex;

use crate::schema::{IndexDef, TableDef};
pub use metadata_lock::MetadataLock;
use std::ops::Bound;

use crate::cursor::{Direction, LatchMode, SearchMode};
use crate::error::EngineError;
use crate::index::{
    BTree, ClusteredRec, IndexStats, PageCapacity, Record, RecordRef, SecondaryRec,
};
use crate::key::{self, KeyColumn};
use crate::mvcc::{VersionStore, Visible};
use crate::row::RowCodec;
use crate::scan::KeyRange;
use crate::value::{DateTime, Value};

/// Bytes of the hidden row id (DB_ROW_ID).
pub(crate) const ROW_ID_LEN: usize = 6;

/// The transaction metadata a write stamps on clustered records (the roll pointer to the
/// previous version is the table's to assign).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct WriteStamp {
    /// The writing transaction (DB_TRX_ID).
    pub trx_id: u64,
}

/// What a write did to one secondary entry, so rollback can invert it and purge finish it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SecOp {
    /// A new entry was created.
    Inserted,
    /// An equal delete-marked entry had its mark cleared.
    Unmarked,
    /// A live entry was delete-marked.
    Marked,
}

/// One secondary-index entry a write touched.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SecChange {
    /// The index (>= 1).
    pub index: usize,
    /// The entry's whole key (secondary part ++ primary key).
    pub key: Vec<u8>,
    /// What was done.
    pub op: SecOp,
}

/// One logged change of a write to a clustered record and the secondary entries that went
/// with it: a transaction's undo log is a list of these (rollback applies them in reverse;
/// purge finishes them after commit).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Change {
    /// The clustered key.
    pub pk: Vec<u8>,
    /// Roll pointer of the version the write replaced (0 when it created the record).
    pub prior: u64,
    /// The write created the clustered record (a fresh insert).
    pub created: bool,
    /// Secondary entries touched, in order.
    pub secondary: Vec<SecChange>,
}

impl Change {
    /// A fresh insert: the only kind of change that leaves nothing for purge (InnoDB's
    /// insert undo, discarded at commit).
    pub(crate) fn is_insert(&self) -> bool {
        self.created && self.secondary.iter().all(|s| s.op == SecOp::Inserted)
    }
}

/// Called for each record physically removed by rollback or purge, under its leaf latch:
/// (index, removed key, successor key or None for the supremum).
pub type RemovedHook<'a> = dyn FnMut(usize, &[u8], Option<&[u8]>) + 'a;

/// What purge of one change did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Purged {
    /// Records physically removed (clustered and secondary).
    pub(crate) records: u64,
    /// Row bytes freed (see [`crate::mvcc`]'s `release`).
    pub(crate) bytes: u64,
}

/// A record an insert's duplicate check found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Existing {
    /// DB_TRX_ID of the row (for a secondary entry: of its clustered record), the writer
    /// whose implicit lock the entry may carry.
    pub trx_id: u64,
    /// Delete-marked (the insert may overwrite or pass it) or live (a duplicate, unless it
    /// is the row's own entry).
    pub delete_mark: bool,
}

/// What an insert's check hook is asked about.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ProbeKind {
    /// The gap the new entry goes into (`successor` is the record after it): the place of
    /// an insert-intention check.
    Gap,
    /// A record with the new entry's unique key (`key`: that record's key): the clustered
    /// record with the new primary key, or an entry of a unique secondary index with the new
    /// row's values, delete-marked ones included.
    Duplicate(Existing),
    /// The record after a unique secondary index's duplicates (`successor`; None: the
    /// supremum), which InnoDB's duplicate scan locks too; `Some` for a user record.
    DuplicateScanEnd(Option<Existing>),
}

/// Options of an insert.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct InsertOptions {
    /// Transaction metadata for the new records.
    pub stamp: WriteStamp,
    /// `sql_mode` has NO_AUTO_VALUE_ON_ZERO: only NULL generates an AUTO_INCREMENT value.
    pub no_auto_value_on_zero: bool,
}

/// What an insert did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InsertOutcome {
    /// The new row's clustered key.
    pub primary_key: Vec<u8>,
    /// The AUTO_INCREMENT value generated for this row (for LAST_INSERT_ID), if any.
    pub generated_auto_increment: Option<u64>,
}

/// What an insert's check hook sees, under the latch of the leaf the new entry goes into
/// (see `Table::insert_checked`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct InsertProbe<'a> {
    /// The index (0 = clustered).
    pub index: usize,
    /// The new entry's key (for [`ProbeKind::Duplicate`]: the found record's key).
    pub key: &'a [u8],
    /// The key of the record after it, delete-marked or not; None for the supremum.
    pub successor: Option<&'a [u8]>,
    /// A gap check or a duplicate check.
    pub kind: ProbeKind,
}

/// What an update did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum UpdateOutcome {
    /// No live row has that key.
    NotFound,
    /// The new row equals the old one (matched, not changed).
    Unchanged,
    /// Changed; the row's clustered key now (different if a primary-key column changed).
    Updated {
        /// The clustered key after the update.
        primary_key: Vec<u8>,
    },
}

/// A clustered record decoded, with its metadata.
#[derive(Debug, Clone, PartialEq)]
pub struct RecordVersion {
    /// The row.
    pub row: Vec<Value>,
    /// DB_TRX_ID.
    pub trx_id: u64,
    /// DB_ROLL_PTR.
    pub roll_ptr: u64,
    /// Delete-marked.
    pub delete_mark: bool,
}

/// One secondary index of a table.
#[derive(Debug)]
pub(crate) struct Secondary {
    pub(crate) tree: BTree<SecondaryRec>,
    /// The key columns of the secondary part.
    cols: Vec<KeyColumn>,
    /// `cols` followed by the clustered key columns: the whole record key.
    full_cols: Vec<KeyColumn>,
    columns: Vec<usize>,
    unique: bool,
    unique_lock: Mutex<()>,
}

/// A table: definition, clustered index and secondary indexes.
#[derive(Debug)]
pub struct Table {
    id: u64,
    def: TableDef,
    codec: RowCodec,
    pk_cols: Vec<KeyColumn>,
    pub(crate) clustered: BTree<ClusteredRec>,
    pub(crate) secondaries: Vec<Secondary>,
    next_auto_increment: AtomicU64,
    next_row_id: AtomicU64,
    rows: AtomicI64,
    /// The transaction-counter value a rebuild (CREATE/DROP INDEX) was stamped with, 0 for a
    /// table never rebuilt: the rebuild copied only latest versions, so a read view made
    /// before it cannot read this table (MySQL's 1412).
    rebuilt_by: u64,
    /// Old versions of this table's clustered records (see [`crate::mvcc`]).
    pub(crate) versions: VersionStore,
    /// Set when DDL replaced this table object in the catalog (ALTER TABLE, CREATE/DROP
    /// INDEX) or dropped it: a statement that resolved it before must not change it.
    retired: std::sync::atomic::AtomicBool,
    /// Held shared by the transactions that used this table object, exclusive by DDL that
    /// replaces or drops it.
    metadata_lock: MetadataLock,
}

impl Table {
    /// An empty table.
    pub fn new(def: TableDef, capacity: PageCapacity) -> Table {
        let cols_of = |ix: &IndexDef| {
            ix.columns
                .iter()
                .map(|&c| def.columns()[c].key_column())
                .collect::<Vec<_>>()
        };
        let pk_cols = cols_of(def.clustered());
        let secondaries = def.indexes()[1..]
            .iter()
            .map(|ix| Secondary {
                tree: BTree::new(capacity),
                cols: cols_of(ix),
                full_cols: cols_of(ix)
                    .into_iter()
                    .chain(pk_cols.iter().copied())
                    .collect(),
                columns: ix.columns.clone(),
                unique: ix.is_unique(),
                unique_lock: Mutex::new(()),
            })
            .collect();
        static NEXT_TABLE_ID: AtomicU64 = AtomicU64::new(1);
        Table {
            id: NEXT_TABLE_ID.fetch_add(1, Relaxed),
            codec: def.row_codec(),
            pk_cols,
            clustered: BTree::new(capacity),
            secondaries,
            next_auto_increment: AtomicU64::new(1),
            next_row_id: AtomicU64::new(1),
            rows: AtomicI64::new(0),
            rebuilt_by: 0,
            versions: VersionStore::default(),
            retired: std::sync::atomic::AtomicBool::new(false),
            metadata_lock: MetadataLock::default(),
            def,
        }
    }

    /// See the field: whether a read view with `low_limit_id` predates this table's rebuild.
    pub fn rebuilt_after(&self, low_limit_id: u64) -> bool {
        low_limit_id <= self.rebuilt_by
    }

    /// See the field: whether DDL replaced or dropped this table object.
    pub fn is_retired(&self) -> bool {
        self.retired.load(Relaxed)
    }

    /// The table's metadata lock.
    pub fn metadata_lock(&self) -> &MetadataLock {
        &self.metadata_lock
    }

    /// Marks this table object replaced or dropped (see [`Table::is_retired`]).
    pub(crate) fn retire(&self) {
        self.retired.store(true, Relaxed);
    }

    /// A process-unique id of this table object (a rebuilt table gets a new one): the lock
    /// system's table and index ids derive from it.
    pub fn id(&self) -> u64 {
        self.id
    }

    /// Table name.
    pub fn name(&self) -> &str {
        self.def.name()
    }

    /// The definition.
    pub fn def(&self) -> &TableDef {
        &self.def
    }

    /// Number of indexes; index 0 is the clustered index, `1..` the secondaries in
    /// [`TableDef::indexes`] order.
    pub fn index_count(&self) -> usize {
        1 + self.secondaries.len()
    }

    /// Counters of index `index` (`page_latch_waits` etc.).
    pub fn index_stats(&self, index: usize) -> &IndexStats {
        match index {
            0 => self.clustered.stats(),
            i => self.secondaries[i - 1].tree.stats(),
        }
    }

    /// Live rows.
    pub fn row_count(&self) -> u64 {
        self.rows.load(Relaxed).max(0) as u64
    }

    /// The next AUTO_INCREMENT value (`SHOW CREATE TABLE`, `information_schema.TABLES`).
    pub fn auto_increment_value(&self) -> u64 {
        self.next_auto_increment.load(Relaxed)
    }

    /// Sets the next AUTO_INCREMENT value (`AUTO_INCREMENT = n` table option), never below
    /// a value already used.
    pub fn set_auto_increment(&self, next: u64) {
        self.next_auto_increment.fetch_max(next.max(1), Relaxed);
    }

    /// The row codec.
    pub(crate) fn codec(&self) -> &RowCodec {
        &self.codec
    }

    /// The key-encoding columns of an index, in key order (for a secondary index: its own
    /// columns then the clustered key's; the hidden row id has no key columns).
    pub fn key_columns(&self, index: usize) -> &[KeyColumn] {
        match index {
            0 => &self.pk_cols,
            i => &self.secondaries[i - 1].full_cols,
        }
    }

    /// Old versions of the clustered records (consistent reads follow roll pointers here).
    pub fn versions(&self) -> &VersionStore {
        &self.versions
    }

    /// The clustered index (for cursors of the lock manager and purge).
    pub(crate) fn clustered_index(&self) -> &BTree<ClusteredRec> {
        &self.clustered
    }

    /// Secondary index `index` (>= 1, in [`TableDef::indexes`] order).
    pub(crate) fn secondary_index(&self, index: usize) -> &BTree<SecondaryRec> {
        &self.secondaries[index - 1].tree
    }

    /// Encodes search values for a prefix of an index's key columns (see
    /// [`Table::key_columns`]); each value is coerced to its column type first, so a value
    /// the column cannot hold is an error (the SQL layer decides what that means for its
    /// predicate).
    pub fn encode_search_key(
        &self,
        index: usize,
        values: &[Value],
    ) -> Result<Vec<u8>, EngineError> {
        let cols = self.key_columns(index);
        let mut out = Vec::with_capacity(16);
        for (kc, v) in cols.iter().zip(values) {
            let v = kc.ty.coerce(v.clone(), "key")?;
            key::encode(*kc, &v, &mut out);
        }
        Ok(out)
    }

    /// Decodes an index key into column values (the hidden row id as an unsigned integer);
    /// for `LOCK_DATA` and error messages.
    pub fn decode_index_key(&self, index: usize, key: &[u8]) -> Vec<Value> {
        let cols = self.key_columns(index);
        let used = key::prefix_len(cols, key);
        let mut values = key::decode_key(cols, key);
        if self.def.has_hidden_primary() && key.len() >= used + ROW_ID_LEN {
            let mut id = [0u8; 8];
            id[2..].copy_from_slice(&key[used..used + ROW_ID_LEN]);
            values.push(Value::UInt(u64::from_be_bytes(id)));
        }
        values
    }

    /// The whole key of secondary index `index` (>= 1) for the row encoded in `row` with
    /// clustered key `pk`.
    pub(crate) fn secondary_key_of(&self, index: usize, row: &[u8], pk: &[u8]) -> Vec<u8> {
        let s = &self.secondaries[index - 1];
        let vals = self.codec.decode_columns(row, &s.columns);
        let mut k = Vec::with_capacity(16 + pk.len());
        for (kc, v) in s.cols.iter().zip(&vals) {
            key::encode(*kc, v, &mut k);
        }
        k.extend_from_slice(pk);
        k
    }

    /// The live row version `view` sees with clustered key `pk` (some columns), for a
    /// consistent point read.
    pub fn get_visible(
        &self,
        pk: &[u8],
        columns: &[usize],
        view: &crate::mvcc::ReadView,
        me: u64,
    ) -> Option<Vec<Value>> {
        self.clustered
            .get(pk, |r| match view.visible_version(r, me, &self.versions) {
                Visible::Nothing => None,
                Visible::Current => {
                    (!r.delete_mark()).then(|| self.codec.decode_columns(r.row(), columns))
                }
                Visible::Older(v) => {
                    (!v.delete_mark).then(|| self.codec.decode_columns(v.row_or(r.row()), columns))
                }
            })
            .flatten()
    }

    /// The clustered key of a (coerced) row; None for a hidden-row-id table.
    pub fn primary_key_of(&self, row: &[Value]) -> Option<Vec<u8>> {
        if self.def.has_hidden_primary() {
            return None;
        }
        let mut out = Vec::with_capacity(8);
        for (kc, &c) in self.pk_cols.iter().zip(&self.def.clustered().columns) {
            key::encode(*kc, &row[c], &mut out);
        }
        Some(out)
    }

    /// The live row with clustered key `pk`.
    pub fn get(&self, pk: &[u8]) -> Option<Vec<Value>> {
        self.clustered
            .get(pk, |r| {
                (!r.delete_mark()).then(|| self.codec.decode(r.row()))
            })
            .flatten()
    }

    /// Some columns of the live row with clustered key `pk`.
    pub fn get_columns(&self, pk: &[u8], columns: &[usize]) -> Option<Vec<Value>> {
        self.clustered
            .get(pk, |r| {
                (!r.delete_mark()).then(|| self.codec.decode_columns(r.row(), columns))
            })
            .flatten()
    }

    #[cfg(test)]
    /// The clustered record with key `pk`, delete-marked or not, with its metadata.
    pub(crate) fn get_record(&self, pk: &[u8]) -> Option<RecordVersion> {
        self.clustered.get(pk, |r| RecordVersion {
            row: self.codec.decode(r.row()),
            trx_id: r.trx_id(),
            roll_ptr: r.roll_ptr(),
            delete_mark: r.delete_mark(),
        })
    }

    /// A copy of this table under a new definition with the same columns (CREATE/DROP
    /// INDEX): see [`Table::rebuilt_mapped`].
    pub fn rebuilt(&self, def: TableDef, rebuilt_by: u64) -> Result<Table, EngineError> {
        let sources = (0..def.columns().len()).map(Some).collect::<Vec<_>>();
        self.rebuilt_mapped(def, &sources, DateTime::default(), rebuilt_by)
    }

    /// A copy of this table under a new definition (ALTER TABLE): new column `i` takes the
    /// old column `sources[i]`, coerced to its new type, or (None, an added column) its
    /// DEFAULT (`now` for CURRENT_TIMESTAMP), else its type's implicit default when NOT NULL
    /// (AUTO_INCREMENT numbers the rows). Every live row is re-inserted with its DB_TRX_ID, the AUTO_INCREMENT counter
    /// kept. Errors as insert (a new UNIQUE index over duplicate values: 1062; a value the new
    /// type cannot hold). Callers exclude DML on the table meanwhile (MySQL's exclusive
    /// metadata lock). `rebuilt_by` is a value of the transaction counter taken for the
    /// rebuild (see [`Table::rebuilt_after`]).
    pub fn rebuilt_mapped(
        &self,
        def: TableDef,
        sources: &[Option<usize>],
        now: DateTime,
        rebuilt_by: u64,
    ) -> Result<Table, EngineError> {
        let identity = sources.iter().enumerate().all(|(i, s)| *s == Some(i));
        if identity && sources.len() == self.def.columns().len() {
            if let Some(table) = self.rebuilt_bulk(&def, rebuilt_by) {
                return Ok(table);
            }
        }
        let added: Vec<(usize, Value)> = sources
            .iter()
            .enumerate()
            .filter(|(_, s)| s.is_none())
            .map(|(i, _)| (i, def.added_column_value(i, now)))
            .collect();
        let mut table = Table::new(def, self.clustered.capacity());
        table.rebuilt_by = rebuilt_by;
        for item in self.scan(0, KeyRange::all(), Direction::Forward) {
            let stamp = WriteStamp {
                trx_id: item.trx_id,
            };
            let old = item.row.expect("clustered scans return rows");
            let mut row: Vec<Value> = sources
                .iter()
                .map(|s| s.map_or(Value::Null, |c| old[c].clone()))
                .collect();
            for (i, v) in &added {
                row[*i] = v.clone();
            }
            table.insert(
                row,
                &InsertOptions {
                    stamp,
                    no_auto_value_on_zero: true,
                },
            )?;
        }
        table
            .next_auto_increment
            .fetch_max(self.auto_increment_value(), Relaxed);
        Ok(table)
    }

    /// Counts live records of index `index` in `range`, stopping at `limit` (for the
    /// planner's row estimates).
    pub fn count_range(&self, index: usize, range: KeyRange, limit: u64) -> u64 {
        fn count<R: Record>(
            tree: &BTree<R>,
            range: &KeyRange,
            limit: u64,
            live: impl Fn(R::Ref<'_>) -> bool,
        ) -> u64 {
            let mut cur = tree.cursor(LatchMode::Read);
            let mut on = match &range.lower {
                Bound::Included(k) => cur.search(k, SearchMode::Ge),
                Bound::Excluded(k) => cur.search(k, SearchMode::Gt),
                Bound::Unbounded => cur.first(),
            };
            let mut n = 0;
            while on && n < limit {
                let rec = cur.record().expect("on record");
                if !range.below_upper(rec.key()) {
                    break;
                }
                n += u64::from(live(rec));
                on = cur.move_next();
            }
            n
        }
        match index {
            0 => count(&self.clustered, &range, limit, |r| !r.delete_mark()),
            i => count(&self.secondaries[i - 1].tree, &range, limit, |r| {
                !r.delete_mark()
            }),
        }
    }

    /// Bytes of the rows this table's records hold (old versions keep copies of their own):
    /// what dropping or truncating it frees.
    pub(crate) fn row_bytes(&self) -> u64 {
        let mut bytes = 0;
        self.clustered
            .for_each_record(|r| bytes += r.row().len() as u64);
        bytes
    }

    /// Removes every row and resets the AUTO_INCREMENT counter (TRUNCATE TABLE).
    pub fn truncate(&self) {
        let _unique = self.lock_unique(|_| true);
        let bytes = self.row_bytes();
        self.clustered.truncate();
        for s in &self.secondaries {
            s.tree.truncate();
        }
        // Counted once freed: the count may make purge trim at once.
        crate::memory::note_table_rows_freed(bytes);
        self.rows.store(0, Relaxed);
        self.next_auto_increment.store(1, Relaxed);
        self.next_row_id.store(1, Relaxed);
    }
}

impl Drop for Table {
    /// Counts the rows this table frees, so purge gives their memory back to the OS once the
    /// engine is quiet (a table dropped or replaced by a rebuild can hold most of the heap).
    /// The trees are freed before they are counted, or a trim the count sets off could
    /// run while most of their pages are still allocated.
    fn drop(&mut self) {
        let bytes = self.row_bytes();
        let capacity = self.clustered.capacity();
        drop(std::mem::replace(&mut self.clustered, BTree::new(capacity)));
        for s in &mut self.secondaries {
            drop(std::mem::replace(&mut s.tree, BTree::new(capacity)));
        }
        crate::memory::note_table_rows_freed(bytes);
    }
}

/// A value as MySQL prints it in a duplicate-key message.
pub fn display_value(v: &Value) -> String {
    match v {
        Value::Null => "NULL".into(),
        Value::Int(i) => i.to_string(),
        Value::UInt(u) => u.to_string(),
        Value::Double(d) => d.to_string(),
        Value::Decimal(d) => d.to_string(),
        Value::Bytes(b) => String::from_utf8_lossy(b).into_owned(),
        Value::DateTime(dt) => dt.to_string(),
        Value::Time(t, fsp) => crate::time_value::format_time(*t, Some(*fsp)),
        Value::Enum(..) | Value::Set(..) => v.member_text().unwrap_or_default(),
    }
}

mod bulk;
pub mod footprint;
mod metadata_lock;
mod write;

#[cfg(test)]
mod tests;
