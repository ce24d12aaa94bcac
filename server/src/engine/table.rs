//! A table: its definition, the clustered index holding the rows and one B+tree per secondary
//! index, kept consistent by every write: each live row has exactly one non-delete-marked
//! entry (its secondary key columns ++ primary key) in every secondary index.
//!
//! Write order, chosen so that a failing statement leaves no trace: coerce → duplicate checks
//! on UNIQUE secondaries → clustered write (whose own duplicate check may still fail, before
//! anything else changed) → secondary writes (which cannot fail). Checks and inserts on a
//! UNIQUE secondary index are serialised by that index's mutex (an equal prefix may span
//! leaves); the row locks of the transactions issue replace that. Primary-key uniqueness is
//! decided under the leaf latch. No MVCC here: a delete-marked record is dead, and an insert
//! of an equal key reuses it in place, clearing the mark.

use std::sync::atomic::{AtomicI64, AtomicU64, Ordering::Relaxed};
use std::sync::{Mutex, MutexGuard};

use crate::engine::catalog::{IndexDef, TableDef};
use std::ops::Bound;

use crate::engine::cursor::{Direction, LatchMode, SearchMode};
use crate::engine::error::EngineError;
use crate::engine::index::{BTree, ClusteredRec, IndexStats, PageCapacity, Record, SecondaryRec};
use crate::engine::key::{self, KeyColumn};
use crate::engine::row::RowCodec;
use crate::engine::scan::KeyRange;
use crate::engine::types::ColumnType;
use crate::value::Value;

/// Bytes of the hidden row id (DB_ROW_ID).
pub const ROW_ID_LEN: usize = 6;

/// The transaction metadata a write stamps on clustered records.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct WriteStamp {
    /// The writing transaction (DB_TRX_ID).
    pub trx_id: u64,
    /// Its undo pointer for the previous version (DB_ROLL_PTR).
    pub roll_ptr: u64,
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
    def: TableDef,
    codec: RowCodec,
    pk_cols: Vec<KeyColumn>,
    pub(crate) clustered: BTree<ClusteredRec>,
    pub(crate) secondaries: Vec<Secondary>,
    next_auto_increment: AtomicU64,
    next_row_id: AtomicU64,
    rows: AtomicI64,
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
        Table {
            codec: def.row_codec(),
            pk_cols,
            clustered: BTree::new(capacity),
            secondaries,
            next_auto_increment: AtomicU64::new(1),
            next_row_id: AtomicU64::new(1),
            rows: AtomicI64::new(0),
            def,
        }
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
    pub fn codec(&self) -> &RowCodec {
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

    /// The clustered index (for cursors of the lock manager and purge).
    pub fn clustered_index(&self) -> &BTree<ClusteredRec> {
        &self.clustered
    }

    /// Secondary index `index` (>= 1, in [`TableDef::indexes`] order).
    pub fn secondary_index(&self, index: usize) -> &BTree<SecondaryRec> {
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

    fn secondary_prefix(&self, s: &Secondary, row: &[Value]) -> Vec<u8> {
        let mut out = Vec::with_capacity(16);
        for (kc, &c) in s.cols.iter().zip(&s.columns) {
            key::encode(*kc, &row[c], &mut out);
        }
        out
    }

    fn duplicate(&self, index: &IndexDef, row: &[Value]) -> EngineError {
        let entry: Vec<String> = index
            .columns
            .iter()
            .map(|&c| display_value(&row[c]))
            .collect();
        EngineError::DuplicateKey {
            entry: entry.join("-"),
            key: format!("{}.{}", self.name(), index.name),
        }
    }

    /// Assigns the AUTO_INCREMENT value if the row asks for one (NULL, or 0 unless
    /// NO_AUTO_VALUE_ON_ZERO), else moves the counter past an explicit value.
    fn auto_increment(
        &self,
        row: &mut [Value],
        no_auto_value_on_zero: bool,
    ) -> Result<Option<u64>, EngineError> {
        let Some(c) = self.def.auto_increment_column() else {
            return Ok(None);
        };
        let zero = matches!(row[c], Value::Int(0) | Value::UInt(0));
        if row[c].is_null() || (zero && !no_auto_value_on_zero) {
            let max = match self.def.columns()[c].ty {
                ColumnType::Integer {
                    kind,
                    unsigned: true,
                } => kind.unsigned_max(),
                ColumnType::Integer {
                    kind,
                    unsigned: false,
                } => kind.signed_range().1 as u64,
                _ => u64::MAX,
            };
            let v = self.next_auto_increment.fetch_add(1, Relaxed);
            if v > max {
                return Err(EngineError::AutoIncrementExhausted);
            }
            row[c] = Value::UInt(v);
            return Ok(Some(v));
        }
        Ok(None)
    }

    fn bump_auto_increment(&self, row: &[Value]) {
        if let Some(c) = self.def.auto_increment_column() {
            let explicit = match row[c] {
                Value::Int(i) if i > 0 => i as u64,
                Value::UInt(u) => u,
                _ => 0,
            };
            if explicit > 0 {
                self.next_auto_increment
                    .fetch_max(explicit.saturating_add(1), Relaxed);
            }
        }
    }

    fn lock_unique<'a>(&'a self, which: impl Fn(usize) -> bool) -> Vec<MutexGuard<'a, ()>> {
        self.secondaries
            .iter()
            .enumerate()
            .filter(|(i, s)| s.unique && which(*i))
            .map(|(_, s)| s.unique_lock.lock().unwrap_or_else(|e| e.into_inner()))
            .collect()
    }

    /// True if a live entry with secondary part `prefix` exists for another row than `own_pk`.
    fn unique_conflict(&self, s: &Secondary, prefix: &[u8], own_pk: Option<&[u8]>) -> bool {
        let mut cur = s.tree.cursor(LatchMode::Read);
        let mut on = cur.search(prefix, SearchMode::Ge);
        while on {
            let rec = cur.record().expect("on record");
            if rec.secondary_part() != prefix {
                return false;
            }
            if !rec.delete_mark && own_pk != Some(rec.primary_key()) {
                return true;
            }
            on = cur.move_next();
        }
        false
    }

    /// Checks UNIQUE secondaries for the new values (callers hold their mutexes).
    fn check_unique(
        &self,
        row: &[Value],
        own_pk: Option<&[u8]>,
        changed: &[bool],
    ) -> Result<(), EngineError> {
        for (i, s) in self.secondaries.iter().enumerate() {
            if !s.unique || !changed[i] || s.columns.iter().any(|&c| row[c].is_null()) {
                continue;
            }
            if self.unique_conflict(s, &self.secondary_prefix(s, row), own_pk) {
                return Err(self.duplicate(&self.def.indexes()[i + 1], row));
            }
        }
        Ok(())
    }

    fn insert_secondary(&self, s: &Secondary, prefix: Vec<u8>, pk: &[u8], trx_id: u64) {
        let pk_offset = prefix.len() as u32;
        let mut k = prefix;
        k.extend_from_slice(pk);
        let rec = SecondaryRec {
            key: k.into(),
            pk_offset,
            delete_mark: false,
        };
        let reused: Result<(), ()> = s.tree.insert_with(rec, trx_id, |existing, _| {
            existing.delete_mark = false; // re-insert of an equal key clears the mark in place
            Ok(())
        });
        debug_assert!(reused.is_ok());
    }

    fn mark_secondary(&self, s: &Secondary, prefix: &[u8], pk: &[u8], trx_id: u64) {
        let mut k = prefix.to_vec();
        k.extend_from_slice(pk);
        s.tree.modify(&k, |rec, max_trx_id| {
            rec.delete_mark = true;
            *max_trx_id = (*max_trx_id).max(trx_id);
        });
    }

    /// Inserts a full row (one value per column, e.g. from [`TableDef::fill_row`]) into every
    /// index. Errors: coercion (1264/1406/1366/1292), NULL in NOT NULL (1048), duplicate
    /// PRIMARY or UNIQUE key (1062), AUTO_INCREMENT exhausted (1467).
    pub fn insert(
        &self,
        mut row: Vec<Value>,
        opts: &InsertOptions,
    ) -> Result<InsertOutcome, EngineError> {
        let ai_col = self.def.auto_increment_column();
        if let Some(c) = ai_col {
            // Coerce the AUTO_INCREMENT column first, so that '0' and 0.0 count as zero.
            if !row[c].is_null() {
                let col = &self.def.columns()[c];
                row[c] = col
                    .ty
                    .coerce(std::mem::replace(&mut row[c], Value::Null), &col.name)?;
            }
        }
        let generated = self.auto_increment(&mut row, opts.no_auto_value_on_zero)?;
        let row = self.def.coerce_row(row)?;
        if generated.is_none() {
            self.bump_auto_increment(&row);
        }
        let pk = match self.primary_key_of(&row) {
            Some(pk) => pk,
            None => self.next_row_id.fetch_add(1, Relaxed).to_be_bytes()[8 - ROW_ID_LEN..].to_vec(),
        };
        let all = vec![true; self.secondaries.len()];
        let _unique = self.lock_unique(|_| true);
        if !_unique.is_empty() && self.get(&pk).is_some() {
            // MySQL reports a duplicate PRIMARY KEY before a duplicate UNIQUE key.
            return Err(self.duplicate(self.def.clustered(), &row));
        }
        self.check_unique(&row, None, &all)?;
        let rec = ClusteredRec {
            key: pk.as_slice().into(),
            row: self.codec.encode(&row),
            trx_id: opts.stamp.trx_id,
            roll_ptr: opts.stamp.roll_ptr,
            delete_mark: false,
        };
        self.clustered
            .insert_with(rec, opts.stamp.trx_id, |existing, new| {
                if existing.delete_mark {
                    *existing = new;
                    Ok(())
                } else {
                    Err(self.duplicate(self.def.clustered(), &row))
                }
            })?;
        for s in &self.secondaries {
            self.insert_secondary(s, self.secondary_prefix(s, &row), &pk, opts.stamp.trx_id);
        }
        self.rows.fetch_add(1, Relaxed);
        Ok(InsertOutcome {
            primary_key: pk,
            generated_auto_increment: generated,
        })
    }

    /// The live row with clustered key `pk`.
    pub fn get(&self, pk: &[u8]) -> Option<Vec<Value>> {
        self.clustered
            .get(pk, |r| (!r.delete_mark).then(|| self.codec.decode(&r.row)))
            .flatten()
    }

    /// Some columns of the live row with clustered key `pk`.
    pub fn get_columns(&self, pk: &[u8], columns: &[usize]) -> Option<Vec<Value>> {
        self.clustered
            .get(pk, |r| {
                (!r.delete_mark).then(|| self.codec.decode_columns(&r.row, columns))
            })
            .flatten()
    }

    /// The clustered record with key `pk`, delete-marked or not, with its metadata.
    pub fn get_record(&self, pk: &[u8]) -> Option<RecordVersion> {
        self.clustered.get(pk, |r| RecordVersion {
            row: self.codec.decode(&r.row),
            trx_id: r.trx_id,
            roll_ptr: r.roll_ptr,
            delete_mark: r.delete_mark,
        })
    }

    /// Replaces the live row with clustered key `pk` by `new_row` (a full row). Secondary
    /// entries whose columns changed are delete-marked and re-inserted; a changed primary key
    /// is delete-mark + insert in the clustered index and every secondary.
    pub fn update(
        &self,
        pk: &[u8],
        new_row: Vec<Value>,
        stamp: WriteStamp,
    ) -> Result<UpdateOutcome, EngineError> {
        let new_row = self.def.coerce_row(new_row)?;
        let Some(old_row) = self.get(pk) else {
            return Ok(UpdateOutcome::NotFound);
        };
        if old_row == new_row {
            return Ok(UpdateOutcome::Unchanged);
        }
        self.bump_auto_increment(&new_row);
        let new_pk = self.primary_key_of(&new_row).unwrap_or_else(|| pk.to_vec());
        let pk_changed = new_pk != pk;
        let new_prefixes: Vec<Vec<u8>> = self
            .secondaries
            .iter()
            .map(|s| self.secondary_prefix(s, &new_row))
            .collect();
        let old_prefixes: Vec<Vec<u8>> = self
            .secondaries
            .iter()
            .map(|s| self.secondary_prefix(s, &old_row))
            .collect();
        let changed: Vec<bool> = (0..self.secondaries.len())
            .map(|i| pk_changed || new_prefixes[i] != old_prefixes[i])
            .collect();
        let _unique = self.lock_unique(|i| changed[i]);
        if pk_changed && !_unique.is_empty() && self.get(&new_pk).is_some() {
            return Err(self.duplicate(self.def.clustered(), &new_row));
        }
        self.check_unique(&new_row, Some(pk), &changed)?;
        let bytes = self.codec.encode(&new_row);
        let mut old_prefixes = old_prefixes;
        if pk_changed {
            let rec = ClusteredRec {
                key: new_pk.as_slice().into(),
                row: bytes,
                trx_id: stamp.trx_id,
                roll_ptr: stamp.roll_ptr,
                delete_mark: false,
            };
            self.clustered
                .insert_with(rec, stamp.trx_id, |existing, new| {
                    if existing.delete_mark {
                        *existing = new;
                        Ok(())
                    } else {
                        Err(self.duplicate(self.def.clustered(), &new_row))
                    }
                })?;
            self.clustered.modify(pk, |rec, _| {
                rec.delete_mark = true;
                rec.trx_id = stamp.trx_id;
                rec.roll_ptr = stamp.roll_ptr;
            });
        } else {
            let actual_old = self.clustered.modify(pk, |rec, _| {
                rec.trx_id = stamp.trx_id;
                rec.roll_ptr = stamp.roll_ptr;
                std::mem::replace(&mut rec.row, bytes)
            });
            // Without row locks a concurrent writer may have changed the row since it was
            // read: maintain the secondaries from what was actually replaced.
            if let Some(actual) = actual_old {
                let actual = self.codec.decode(&actual);
                if actual != old_row {
                    old_prefixes = self
                        .secondaries
                        .iter()
                        .map(|s| self.secondary_prefix(s, &actual))
                        .collect();
                }
            }
        }
        for (i, s) in self.secondaries.iter().enumerate() {
            if pk_changed || old_prefixes[i] != new_prefixes[i] {
                self.mark_secondary(s, &old_prefixes[i], pk, stamp.trx_id);
                self.insert_secondary(s, new_prefixes[i].clone(), &new_pk, stamp.trx_id);
            }
        }
        Ok(UpdateOutcome::Updated {
            primary_key: new_pk,
        })
    }

    /// Delete-marks the live row with clustered key `pk` and its secondary entries; false
    /// if there is none.
    pub fn delete(&self, pk: &[u8], stamp: WriteStamp) -> bool {
        let old = self.clustered.modify(pk, |rec, _| {
            if rec.delete_mark {
                return None;
            }
            rec.delete_mark = true;
            rec.trx_id = stamp.trx_id;
            rec.roll_ptr = stamp.roll_ptr;
            Some(self.codec.decode(&rec.row))
        });
        let Some(Some(row)) = old else { return false };
        for s in &self.secondaries {
            self.mark_secondary(s, &self.secondary_prefix(s, &row), pk, stamp.trx_id);
        }
        self.rows.fetch_sub(1, Relaxed);
        true
    }

    /// Purge: physically removes the delete-marked clustered record `pk` and the
    /// delete-marked secondary entries of its row; false if `pk` is absent or live.
    pub fn purge(&self, pk: &[u8]) -> bool {
        let Some(rec) = self.clustered.remove_if(pk, |r| r.delete_mark) else {
            return false;
        };
        let row = self.codec.decode(&rec.row);
        for s in &self.secondaries {
            let mut k = self.secondary_prefix(s, &row);
            k.extend_from_slice(pk);
            s.tree.remove_if(&k, |r| r.delete_mark);
        }
        true
    }

    /// Purge of one delete-marked secondary entry (e.g. left by an update of an indexed
    /// column); `index` >= 1.
    pub fn purge_secondary(&self, index: usize, key: &[u8]) -> bool {
        self.secondaries[index - 1]
            .tree
            .remove_if(key, |r| r.delete_mark)
            .is_some()
    }

    /// A copy of this table under a new definition with the same columns (CREATE/DROP
    /// INDEX): every live row re-inserted with its DB_TRX_ID, the AUTO_INCREMENT counter kept.
    /// Errors as insert (a new UNIQUE index over duplicate values: 1062). Callers exclude DML
    /// on the table meanwhile (MySQL's exclusive metadata lock).
    pub fn rebuilt(&self, def: TableDef) -> Result<Table, EngineError> {
        let table = Table::new(def, self.clustered.capacity());
        for item in self.scan(0, KeyRange::all(), Direction::Forward) {
            let stamp = WriteStamp {
                trx_id: item.trx_id,
                roll_ptr: 0,
            };
            let row = item.row.expect("clustered scans return rows");
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
            live: impl Fn(&R) -> bool,
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
            0 => count(&self.clustered, &range, limit, |r| !r.delete_mark),
            i => count(&self.secondaries[i - 1].tree, &range, limit, |r| {
                !r.delete_mark
            }),
        }
    }

    /// Removes every row and resets the AUTO_INCREMENT counter (TRUNCATE TABLE).
    pub fn truncate(&self) {
        let _unique = self.lock_unique(|_| true);
        self.clustered.truncate();
        for s in &self.secondaries {
            s.tree.truncate();
        }
        self.rows.store(0, Relaxed);
        self.next_auto_increment.store(1, Relaxed);
        self.next_row_id.store(1, Relaxed);
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
    }
}

#[cfg(test)]
#[path = "table_tests.rs"]
mod tests;
