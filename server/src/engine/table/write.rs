//! The write path of a table: insert, update, delete-mark and purge, keeping every index
//! consistent (see the order of steps in the parent module).

use std::sync::atomic::Ordering::Relaxed;
use std::sync::MutexGuard;

use super::{
    display_value, InsertOptions, InsertOutcome, InsertProbe, Secondary, Table, UpdateOutcome,
    WriteStamp, ROW_ID_LEN,
};
use crate::engine::cursor::{LatchMode, SearchMode};
use crate::engine::error::EngineError;
use crate::engine::index::{ClusteredRec, Record, SecondaryRec};
use crate::engine::key;
use crate::engine::schema::IndexDef;
use crate::engine::types::ColumnType;
use crate::value::Value;

impl Table {
    pub(super) fn secondary_prefix(&self, s: &Secondary, row: &[Value]) -> Vec<u8> {
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

    pub(super) fn lock_unique<'a>(
        &'a self,
        which: impl Fn(usize) -> bool,
    ) -> Vec<MutexGuard<'a, ()>> {
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
    ///
    /// [`TableDef::fill_row`]: crate::engine::schema::TableDef::fill_row
    pub fn insert(
        &self,
        row: Vec<Value>,
        opts: &InsertOptions,
    ) -> Result<InsertOutcome, EngineError> {
        self.insert_checked(row, opts, |_| Ok(()))
    }

    /// [`Table::insert`] with a hook for the lock manager's gap check: for each index, when a
    /// new record is created (not when a delete-marked equal record is reused), `check` runs
    /// under that leaf's latch with the new key and its successor (None: the supremum). If
    /// `check` fails, everything this insert did is undone before the error returns, and no
    /// latch is held then, so the caller may wait and retry. (The UNIQUE-index mutex of the
    /// module docs is held while `check` runs; a check must not block.)
    pub fn insert_checked<E: From<EngineError>>(
        &self,
        mut row: Vec<Value>,
        opts: &InsertOptions,
        mut check: impl FnMut(InsertProbe<'_>) -> Result<(), E>,
    ) -> Result<InsertOutcome, E> {
        if let Some(c) = self.def.auto_increment_column() {
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
            return Err(self.duplicate(self.def.clustered(), &row).into());
        }
        self.check_unique(&row, None, &all)?;
        let rec = ClusteredRec {
            key: pk.as_slice().into(),
            row: self.codec.encode(&row),
            trx_id: opts.stamp.trx_id,
            roll_ptr: opts.stamp.roll_ptr,
            delete_mark: false,
        };
        let mut replaced: Option<ClusteredRec> = None;
        self.clustered.insert_checked(
            rec,
            opts.stamp.trx_id,
            |succ| {
                check(InsertProbe {
                    index: 0,
                    key: &pk,
                    successor: succ.map(|r| r.key()),
                })
            },
            |existing, new| {
                if existing.delete_mark {
                    replaced = Some(std::mem::replace(existing, new));
                    Ok(())
                } else {
                    Err(self.duplicate(self.def.clustered(), &row).into())
                }
            },
        )?;
        let mut done: Vec<(usize, Vec<u8>, bool)> = Vec::with_capacity(self.secondaries.len());
        for (i, s) in self.secondaries.iter().enumerate() {
            let mut key = self.secondary_prefix(s, &row);
            let pk_offset = key.len() as u32;
            key.extend_from_slice(&pk);
            let rec = SecondaryRec {
                key: key.as_slice().into(),
                pk_offset,
                delete_mark: false,
            };
            let mut reused = false;
            let inserted = s.tree.insert_checked(
                rec,
                opts.stamp.trx_id,
                |succ| {
                    check(InsertProbe {
                        index: i + 1,
                        key: &key,
                        successor: succ.map(|r| r.key()),
                    })
                },
                |existing, _| {
                    existing.delete_mark = false; // re-insert of an equal key clears the mark
                    reused = true;
                    Ok(())
                },
            );
            if let Err(e) = inserted {
                self.undo_insert(&pk, replaced, &done);
                return Err(e);
            }
            done.push((i, key, reused));
        }
        self.rows.fetch_add(1, Relaxed);
        Ok(InsertOutcome {
            primary_key: pk,
            generated_auto_increment: generated,
        })
    }

    /// Takes back a partial insert: secondary entries (removed, or re-marked if they were
    /// reused) and the clustered record (removed, or the replaced delete-marked one put back).
    fn undo_insert(
        &self,
        pk: &[u8],
        replaced: Option<ClusteredRec>,
        done: &[(usize, Vec<u8>, bool)],
    ) {
        for (i, key, reused) in done.iter().rev() {
            let tree = &self.secondaries[*i].tree;
            if *reused {
                tree.modify(key, |r, _| r.delete_mark = true);
            } else {
                tree.remove_if(key, |_| true);
            }
        }
        match replaced {
            Some(old) => {
                self.clustered.modify(pk, |r, _| *r = old);
            }
            None => {
                self.clustered.remove_if(pk, |_| true);
            }
        }
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
}
