//! The write path of a table: insert, update, delete-mark and purge, keeping every index
//! consistent (see the order of steps in the parent module).

use std::sync::atomic::Ordering::Relaxed;
use std::sync::MutexGuard;

use super::{
    display_value, Change, Existing, InsertOptions, InsertOutcome, InsertProbe, ProbeKind, Purged,
    RemovedHook, SecChange, SecOp, Secondary, Table, UpdateOutcome, WriteStamp, ROW_ID_LEN,
};
use crate::cursor::{LatchMode, SearchMode};
use crate::error::EngineError;
use crate::index::{ClusteredMut, ClusteredRec, SecondaryRec};
use crate::key;
use crate::mvcc::{self, Version};
use crate::row_buf::RowBuf;
use crate::schema::IndexDef;
use crate::types::ColumnType;
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

    /// The duplicate checks of an insert or update on the UNIQUE secondaries (those in
    /// `changed`), as InnoDB's duplicate scan does them (callers hold the unique mutexes):
    /// where entries with the new row's values exist, delete-marked ones included, `check`
    /// sees each of them in key order and then the record after them, under the leaf latch; a
    /// live entry of another row is a duplicate, reported after `check` has seen it. NULLs
    /// never conflict.
    fn scan_unique<E: From<EngineError>>(
        &self,
        row: &[Value],
        own_pk: &[u8],
        changed: &[bool],
        check: &dyn Fn(InsertProbe<'_>) -> Result<(), E>,
    ) -> Result<(), E> {
        let writer = |pk: &[u8], delete_mark: bool| Existing {
            trx_id: self.clustered.get(pk, |r| r.trx_id()).unwrap_or(0),
            delete_mark,
        };
        for (i, s) in self.secondaries.iter().enumerate() {
            if !s.unique || !changed[i] || s.columns.iter().any(|&c| row[c].is_null()) {
                continue;
            }
            let prefix = self.secondary_prefix(s, row);
            let mut cur = s.tree.cursor(LatchMode::Read);
            let mut on = cur.search(&prefix, SearchMode::Ge);
            let mut found = false;
            while on {
                let rec = cur.record().expect("on record");
                let ex = writer(rec.primary_key(), rec.delete_mark());
                if rec.secondary_part() != prefix.as_slice() {
                    if found {
                        check(InsertProbe {
                            index: i + 1,
                            key: &prefix,
                            successor: Some(rec.key()),
                            kind: ProbeKind::DuplicateScanEnd(Some(ex)),
                        })?;
                    }
                    break;
                }
                found = true;
                check(InsertProbe {
                    index: i + 1,
                    key: rec.key(),
                    successor: None,
                    kind: ProbeKind::Duplicate(ex),
                })?;
                if !rec.delete_mark() && rec.primary_key() != own_pk {
                    return Err(self.duplicate(&self.def.indexes()[i + 1], row).into());
                }
                on = cur.move_next();
            }
            if found && !on {
                check(InsertProbe {
                    index: i + 1,
                    key: &prefix,
                    successor: None,
                    kind: ProbeKind::DuplicateScanEnd(None),
                })?;
            }
        }
        Ok(())
    }

    /// The gap check of an entry an update is about to insert into index `index` (0: the
    /// clustered index): `check` sees the gap before the first record at or after `key`, or
    /// for the clustered index an equal record ([`ProbeKind::Duplicate`]); nothing when an
    /// equal secondary entry exists (the update reuses it in place). Returns whether an
    /// equal clustered record is live (a duplicate primary key).
    fn probe_new_entry<E: From<EngineError>>(
        &self,
        index: usize,
        key: &[u8],
        check: &dyn Fn(InsertProbe<'_>) -> Result<(), E>,
    ) -> Result<bool, E> {
        let gap = |successor: Option<&[u8]>| {
            check(InsertProbe {
                index,
                key,
                successor,
                kind: ProbeKind::Gap,
            })
        };
        if index == 0 {
            let mut cur = self.clustered.cursor(LatchMode::Read);
            let on = cur.search(key, SearchMode::Ge);
            match cur.record().filter(|_| on) {
                Some(r) if r.key() == key => {
                    check(InsertProbe {
                        index,
                        key,
                        successor: None,
                        kind: ProbeKind::Duplicate(Existing {
                            trx_id: r.trx_id(),
                            delete_mark: r.delete_mark(),
                        }),
                    })?;
                    Ok(!r.delete_mark())
                }
                succ => gap(succ.map(|r| r.key())).map(|()| false),
            }
        } else {
            let mut cur = self.secondaries[index - 1].tree.cursor(LatchMode::Read);
            let on = cur.search(key, SearchMode::Ge);
            match cur.record().filter(|_| on) {
                Some(r) if r.key() == key => Ok(false),
                succ => gap(succ.map(|r| r.key())).map(|()| false),
            }
        }
    }

    /// Inserts the secondary entry `prefix ++ pk`, or clears the delete mark of an equal
    /// entry in place; logs which of the two happened.
    fn insert_secondary(
        &self,
        i: usize,
        prefix: Vec<u8>,
        pk: &[u8],
        trx_id: u64,
        sec: &mut Vec<SecChange>,
    ) {
        let s = &self.secondaries[i];
        let pk_offset = prefix.len();
        let mut k = prefix;
        k.extend_from_slice(pk);
        let rec = SecondaryRec::new(&k, pk_offset);
        let mut op = SecOp::Inserted;
        let reused: Result<(), ()> = s.tree.insert_with(rec, trx_id, |existing, _| {
            existing.set_delete_mark(false); // re-insert of an equal key clears the mark in place
            op = SecOp::Unmarked;
            Ok(())
        });
        debug_assert!(reused.is_ok());
        sec.push(SecChange {
            index: i + 1,
            key: k,
            op,
        });
    }

    /// Delete-marks the entry with whole key `k` in secondary `i` (0-based) and logs it.
    fn mark_secondary(&self, i: usize, k: Vec<u8>, trx_id: u64, sec: &mut Vec<SecChange>) {
        let marked = self.secondaries[i].tree.modify(&k, |rec, max_trx_id| {
            *max_trx_id = (*max_trx_id).max(trx_id);
            !rec.set_delete_mark(true)
        });
        if marked == Some(true) {
            sec.push(SecChange {
                index: i + 1,
                key: k,
                op: SecOp::Marked,
            });
        }
    }

    /// Inserts a full row (one value per column, e.g. from [`TableDef::fill_row`]) into every
    /// index. Errors: coercion (1264/1406/1366/1292), NULL in NOT NULL (1048), duplicate
    /// PRIMARY or UNIQUE key (1062), AUTO_INCREMENT exhausted (1467).
    ///
    /// [`TableDef::fill_row`]: crate::schema::TableDef::fill_row
    pub fn insert(
        &self,
        row: Vec<Value>,
        opts: &InsertOptions,
    ) -> Result<InsertOutcome, EngineError> {
        self.insert_checked(row, opts, |_| Ok(()), &mut Vec::new())
    }

    /// [`Table::insert`] with a hook for the lock manager, logging what it changed into
    /// `log` (for rollback and purge). For each index, `check` runs under the latch of the
    /// leaf the new entry goes into: with the new key and its successor (None: the supremum)
    /// when a record is created, or with the equal clustered record (`existing`) when one
    /// exists (a duplicate check: live means 1062 after the check passes, delete-marked means
    /// it is overwritten in place). If `check` fails, everything this insert did is undone
    /// before the error returns, and no latch is held then, so the caller may wait and retry.
    /// (The UNIQUE-index mutex of the module docs is held while `check` runs; a check must
    /// not block.)
    pub(crate) fn insert_checked<E: From<EngineError>>(
        &self,
        mut row: Vec<Value>,
        opts: &InsertOptions,
        check: impl FnMut(InsertProbe<'_>) -> Result<(), E>,
        log: &mut Vec<Change>,
    ) -> Result<InsertOutcome, E> {
        let check = std::cell::RefCell::new(check);
        let check = |p: InsertProbe<'_>| (check.borrow_mut())(p);
        if let Some(c) = self.def.auto_increment_column() {
            // Coerce the AUTO_INCREMENT column first, so that '0' and 0.0 count as zero.
            if !row[c].is_null() {
                let col = &self.def.columns()[c];
                row[c] = col
                    .ty
                    .coerce(std::mem::replace(&mut row[c], Value::Null), &col.name)?;
            }
        }
        // Every other column first: a value its column refuses uses no AUTO_INCREMENT value,
        // as MySQL converts a row's values before it asks the engine for one.
        let auto = self.def.auto_increment_column();
        let mut row = self.def.coerce_row_except(row, auto)?;
        let generated = self.auto_increment(&mut row, opts.no_auto_value_on_zero)?;
        if let Some(c) = auto {
            row[c] = self
                .def
                .coerce_value(c, std::mem::replace(&mut row[c], Value::Null))?;
        }
        if generated.is_none() {
            self.bump_auto_increment(&row);
        }
        let pk = match self.primary_key_of(&row) {
            Some(pk) => pk,
            None => self.next_row_id.fetch_add(1, Relaxed).to_be_bytes()[8 - ROW_ID_LEN..].to_vec(),
        };
        let _unique = self.lock_unique(|_| true);
        if !_unique.is_empty() {
            // MySQL reports a duplicate PRIMARY KEY before a duplicate UNIQUE key.
            let found = self.clustered.get(&pk, |r| Existing {
                trx_id: r.trx_id(),
                delete_mark: r.delete_mark(),
            });
            if let Some(ex) = found {
                check(InsertProbe {
                    index: 0,
                    key: &pk,
                    successor: None,
                    kind: ProbeKind::Duplicate(ex),
                })?;
                if !ex.delete_mark {
                    return Err(self.duplicate(self.def.clustered(), &row).into());
                }
            }
            self.scan_unique(&row, &pk, &vec![true; self.secondaries.len()], &check)?;
        }
        let trx_id = opts.stamp.trx_id;
        let rec = ClusteredRec::new(pk.as_slice().into(), self.codec.encode(&row), trx_id);
        // The roll pointer of the delete-marked record this insert overwrote, if any.
        let mut prior: Option<u64> = None;
        self.clustered.insert_checked(
            rec,
            trx_id,
            |succ| {
                check(InsertProbe {
                    index: 0,
                    key: &pk,
                    successor: succ.map(|r| r.key()),
                    kind: ProbeKind::Gap,
                })
            },
            |existing, mut new| {
                check(InsertProbe {
                    index: 0,
                    key: &pk,
                    successor: None,
                    kind: ProbeKind::Duplicate(Existing {
                        trx_id: existing.trx_id,
                        delete_mark: existing.delete_mark(),
                    }),
                })?;
                if !existing.delete_mark() {
                    return Err(self.duplicate(self.def.clustered(), &row).into());
                }
                let ptr = self.versions.put(Version::of(existing));
                new.set_roll_ptr(ptr);
                *existing = new;
                prior = Some(ptr);
                Ok(())
            },
        )?;
        let mut sec: Vec<SecChange> = Vec::with_capacity(self.secondaries.len());
        for (i, s) in self.secondaries.iter().enumerate() {
            let mut key = self.secondary_prefix(s, &row);
            let pk_offset = key.len();
            key.extend_from_slice(&pk);
            let rec = SecondaryRec::new(&key, pk_offset);
            let mut op = SecOp::Inserted;
            let inserted = s.tree.insert_checked(
                rec,
                trx_id,
                |succ| {
                    check(InsertProbe {
                        index: i + 1,
                        key: &key,
                        successor: succ.map(|r| r.key()),
                        kind: ProbeKind::Gap,
                    })
                },
                |existing, _| {
                    existing.set_delete_mark(false); // re-insert of an equal key clears the mark
                    op = SecOp::Unmarked;
                    Ok(())
                },
            );
            if let Err(e) = inserted {
                let change = Change {
                    pk: pk.clone(),
                    prior: prior.unwrap_or(0),
                    created: prior.is_none(),
                    secondary: sec,
                };
                // The clustered record is live now; rollback uncounts what it removes.
                self.rows.fetch_add(1, Relaxed);
                self.rollback(&change);
                return Err(e);
            }
            sec.push(SecChange {
                index: i + 1,
                key,
                op,
            });
        }
        self.rows.fetch_add(1, Relaxed);
        log.push(Change {
            pk: pk.clone(),
            prior: prior.unwrap_or(0),
            created: prior.is_none(),
            secondary: sec,
        });
        Ok(InsertOutcome {
            primary_key: pk,
            generated_auto_increment: generated,
        })
    }

    /// Replaces the live row with clustered key `pk` by `new_row` (a full row), logging the
    /// change. Secondary entries whose columns changed are delete-marked and re-inserted; a
    /// changed primary key is delete-mark + insert in the clustered index and every secondary.
    pub fn update(
        &self,
        pk: &[u8],
        new_row: Vec<Value>,
        stamp: WriteStamp,
        log: &mut Vec<Change>,
    ) -> Result<UpdateOutcome, EngineError> {
        self.update_checked(pk, new_row, stamp, |_| Ok(()), log)
    }

    /// [`Table::update`] whose new entries are checked first, before anything changes:
    /// `check` sees, for a changed primary key, the clustered record with the new key
    /// ([`ProbeKind::Duplicate`]) or the gap it goes into; for each secondary index whose
    /// entry changes, a unique index's duplicate scan and then the gap of the new entry (none
    /// when an equal delete-marked entry is reused in place). Each probe is made under the
    /// leaf latch it reads, but the change is applied after the probes, under latches of its
    /// own, so a gap lock granted to another transaction in between is not seen.
    pub(crate) fn update_checked<E: From<EngineError>>(
        &self,
        pk: &[u8],
        new_row: Vec<Value>,
        stamp: WriteStamp,
        check: impl FnMut(InsertProbe<'_>) -> Result<(), E>,
        log: &mut Vec<Change>,
    ) -> Result<UpdateOutcome, E> {
        let check = std::cell::RefCell::new(check);
        let check = |p: InsertProbe<'_>| (check.borrow_mut())(p);
        let new_row = self.def.coerce_row(new_row)?;
        let Some(old_bytes) = self
            .clustered
            .get(pk, |r| (!r.delete_mark()).then(|| r.row().to_vec()))
            .flatten()
        else {
            return Ok(UpdateOutcome::NotFound);
        };
        let old_row = self.codec.decode(&old_bytes);
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
        if pk_changed && self.probe_new_entry(0, &new_pk, &check)? {
            return Err(self.duplicate(self.def.clustered(), &new_row).into());
        }
        self.scan_unique(&new_row, pk, &changed, &check)?;
        for (i, prefix) in new_prefixes.iter().enumerate() {
            if changed[i] {
                let mut key = prefix.clone();
                key.extend_from_slice(&new_pk);
                // An equal secondary entry is the row's own (delete-marked) one: reused.
                self.probe_new_entry(i + 1, &key, &check)?;
            }
        }
        let mut bytes = Some(self.codec.encode(&new_row));
        let trx_id = stamp.trx_id;
        let mut old_prefixes = old_prefixes;
        let mut sec_old = Vec::new();
        let mut sec_new = Vec::new();
        let mut new_prior: Option<u64> = None;
        if pk_changed {
            let rec = ClusteredRec::new(
                new_pk.as_slice().into(),
                bytes.take().expect("unused"),
                trx_id,
            );
            self.clustered
                .insert_with(rec, trx_id, |existing, mut new| {
                    if existing.delete_mark() {
                        let ptr = self.versions.put(Version::of(existing));
                        new.set_roll_ptr(ptr);
                        *existing = new;
                        new_prior = Some(ptr);
                        Ok(())
                    } else {
                        Err(self.duplicate(self.def.clustered(), &new_row))
                    }
                })
                .map_err(E::from)?;
        }
        let old_prior = self.clustered.modify(pk, |rec, _| {
            let ptr = self.versions.put(Version::of(rec));
            rec.trx_id = trx_id;
            rec.set_roll_ptr(ptr);
            if pk_changed {
                rec.set_delete_mark(true);
                (ptr, None)
            } else {
                let new = bytes.take().expect("unused");
                (ptr, Some(std::mem::replace(&mut rec.row, new)))
            }
        });
        let Some((old_ptr, replaced)) = old_prior else {
            return Ok(UpdateOutcome::NotFound);
        };
        if let Some(actual) = replaced.filter(|a| a[..] != old_bytes[..]) {
            // Without row locks a concurrent writer may have changed the row since it was
            // read: maintain the secondaries from what was actually replaced.
            let actual = self.codec.decode(&actual);
            old_prefixes = self
                .secondaries
                .iter()
                .map(|s| self.secondary_prefix(s, &actual))
                .collect();
        }
        drop(old_bytes);
        for i in 0..self.secondaries.len() {
            if pk_changed || old_prefixes[i] != new_prefixes[i] {
                let old_key = [old_prefixes[i].as_slice(), pk].concat();
                self.mark_secondary(i, old_key, trx_id, &mut sec_old);
                self.insert_secondary(i, new_prefixes[i].clone(), &new_pk, trx_id, &mut sec_new);
            }
        }
        if pk_changed {
            log.push(Change {
                pk: pk.to_vec(),
                prior: old_ptr,
                created: false,
                secondary: sec_old,
            });
            log.push(Change {
                pk: new_pk.clone(),
                prior: new_prior.unwrap_or(0),
                created: new_prior.is_none(),
                secondary: sec_new,
            });
        } else {
            sec_old.extend(sec_new);
            log.push(Change {
                pk: pk.to_vec(),
                prior: old_ptr,
                created: false,
                secondary: sec_old,
            });
        }
        Ok(UpdateOutcome::Updated {
            primary_key: new_pk,
        })
    }

    /// Delete-marks the live row with clustered key `pk` and its secondary entries, logging
    /// the change; false if there is none.
    pub fn delete(&self, pk: &[u8], stamp: WriteStamp, log: &mut Vec<Change>) -> bool {
        // In place: the row's bytes stay in the record until purge, and the version the
        // mark leaves keeps none of its own, so a delete needs no memory per row. A record
        // stored without room for a roll pointer (never changed since its insert) is
        // stored again once, with the full header.
        let old = self.clustered.modify_stored(pk, |stored, _| {
            let mut rec = ClusteredMut::parse(stored);
            if rec.delete_mark() {
                return (None, None);
            }
            let ptr = self.versions.put(Version::header_of(&rec));
            let keys: Vec<Vec<u8>> = (1..self.index_count())
                .map(|i| self.secondary_key_of(i, rec.row(), pk))
                .collect();
            let rewrite = rec.set_header(stamp.trx_id, ptr, true);
            (Some((ptr, keys)), rewrite)
        });
        let Some(Some((ptr, keys))) = old else {
            return false;
        };
        let mut sec = Vec::new();
        for (i, key) in keys.into_iter().enumerate() {
            self.mark_secondary(i, key, stamp.trx_id, &mut sec);
        }
        self.rows.fetch_sub(1, Relaxed);
        log.push(Change {
            pk: pk.to_vec(),
            prior: ptr,
            created: false,
            secondary: sec,
        });
        true
    }

    /// Undoes one logged change of a transaction that still holds the row (rollback):
    /// secondary operations in reverse, then the clustered record back to its prior version
    /// (or removed, if the change created it). Removed keys are reported to `removed`
    /// (index, key) under their leaf latch with their successor, for gap-lock inheritance.
    pub fn rollback(&self, change: &Change) {
        self.rollback_with(change, &mut |_, _, _| {});
    }

    /// [`Table::rollback`] reporting each physically removed record as (index, key,
    /// successor key or None for the supremum), under its leaf latch. Returns the row bytes
    /// it freed (see [`mvcc::release`]).
    pub(crate) fn rollback_with(&self, change: &Change, removed: &mut RemovedHook<'_>) -> u64 {
        for sc in change.secondary.iter().rev() {
            let tree = &self.secondaries[sc.index - 1].tree;
            match sc.op {
                SecOp::Inserted => {
                    tree.remove_reporting(
                        &sc.key,
                        |_| true,
                        |succ| removed(sc.index, &sc.key, succ.map(|r| r.key())),
                    );
                }
                SecOp::Unmarked => {
                    tree.modify(&sc.key, |r, _| r.set_delete_mark(true));
                }
                SecOp::Marked => {
                    tree.modify(&sc.key, |r, _| r.set_delete_mark(false));
                }
            }
        }
        let was_live = self
            .clustered
            .get(&change.pk, |r| !r.delete_mark())
            .unwrap_or(false);
        let mut freed = 0;
        let now_live = if change.created {
            let gone = self.clustered.remove_reporting(
                &change.pk,
                |_| true,
                |succ| removed(0, &change.pk, succ.map(|r| r.key())),
            );
            freed += gone.map_or(0, |r| mvcc::release(r.row));
            false
        } else {
            let Some(v) = self.versions.get(change.prior) else {
                debug_assert!(false, "the prior version of an uncommitted change is kept");
                return 0;
            };
            let live = !v.delete_mark;
            // Under the write latch: no reader is walking this record's chain now.
            let undone = match v.row {
                // The change left the row's bytes as they were (a delete-mark).
                None => self.clustered.modify_stored(&change.pk, |stored, _| {
                    let rewrite =
                        ClusteredMut::parse(stored).set_header(v.trx_id, v.roll_ptr, v.delete_mark);
                    self.versions.free(change.prior);
                    (None, rewrite)
                }),
                Some(row) => self.clustered.modify(&change.pk, |r, _| {
                    r.trx_id = v.trx_id;
                    r.set_roll_ptr(v.roll_ptr);
                    r.set_delete_mark(v.delete_mark);
                    self.versions.free(change.prior);
                    Some(std::mem::replace(&mut r.row, row))
                }),
            };
            freed += undone.flatten().map_or(0, mvcc::release);
            live
        };
        match (was_live, now_live) {
            (true, false) => {
                self.rows.fetch_sub(1, Relaxed);
            }
            (false, true) => {
                self.rows.fetch_add(1, Relaxed);
            }
            _ => {}
        }
        freed
    }

    /// Purge of one committed change by transaction `trx_id`, once every read view sees
    /// that transaction: frees the version it replaced, removes the clustered record if
    /// the change left it delete-marked and nobody wrote it since (with its delete-marked
    /// secondary entries), and removes secondary entries it delete-marked that no
    /// remaining version of the row needs. Removed records are reported as by
    /// [`Table::rollback_with`]. Returns the records removed and the row bytes freed.
    pub(crate) fn purge_change(
        &self,
        change: &Change,
        trx_id: u64,
        removed: &mut RemovedHook<'_>,
    ) -> Purged {
        let mut out = Purged {
            records: 0,
            bytes: self.versions.free(change.prior),
        };
        let gone = self.clustered.remove_reporting(
            &change.pk,
            |r| r.delete_mark() && r.trx_id() == trx_id,
            |succ| removed(0, &change.pk, succ.map(|r| r.key())),
        );
        if let Some(rec) = gone {
            out.records += 1;
            for i in 1..self.index_count() {
                let k = self.secondary_key_of(i, &rec.row, &change.pk);
                out.records += self.purge_secondary_entry(i, &k, removed);
            }
            out.bytes += mvcc::release(rec.row);
        }
        for sc in &change.secondary {
            if sc.op == SecOp::Marked && !self.version_needs(sc.index, &sc.key, &change.pk) {
                out.records += self.purge_secondary_entry(sc.index, &sc.key, removed);
            }
        }
        out
    }

    fn purge_secondary_entry(
        &self,
        index: usize,
        key: &[u8],
        removed: &mut RemovedHook<'_>,
    ) -> u64 {
        self.secondaries[index - 1]
            .tree
            .remove_reporting(
                key,
                |r| r.delete_mark(),
                |succ| removed(index, key, succ.map(|r| r.key())),
            )
            .map_or(0, |_| 1)
    }

    /// Whether a live (not delete-marked) version of row `pk` still reachable through its
    /// roll pointers has secondary entry `key` in index `index` (InnoDB's "may an old
    /// version still need this entry").
    fn version_needs(&self, index: usize, key: &[u8], pk: &[u8]) -> bool {
        let s = &self.secondaries[index - 1];
        let Some(first) = self.clustered.get(pk, Version::copy_of) else {
            return false;
        };
        let mut v = Some(first);
        let mut newer = RowBuf::new(&[]);
        while let Some(mut ver) = v {
            let row = ver.row.take().unwrap_or(newer);
            if !ver.delete_mark {
                let cols = self.codec.decode_columns(&row, &s.columns);
                let mut k = Vec::with_capacity(key.len());
                for (kc, val) in s.cols.iter().zip(&cols) {
                    key::encode(*kc, val, &mut k);
                }
                k.extend_from_slice(pk);
                if k == key {
                    return true;
                }
            }
            v = self.versions.get(ver.roll_ptr);
            newer = row;
        }
        false
    }

    /// Purge without a transaction's log: physically removes the delete-marked clustered
    /// record `pk` and the delete-marked secondary entries of its row; false if `pk` is
    /// absent or live.
    pub fn purge(&self, pk: &[u8]) -> bool {
        let Some(rec) = self.clustered.remove_if(pk, |r| r.delete_mark()) else {
            return false;
        };
        for (i, s) in self.secondaries.iter().enumerate() {
            let k = self.secondary_key_of(i + 1, &rec.row, pk);
            s.tree.remove_if(&k, |r| r.delete_mark());
        }
        true
    }

    #[cfg(test)]
    /// Purge of one delete-marked secondary entry (e.g. left by an update of an indexed
    /// column); `index` >= 1.
    pub(crate) fn purge_secondary(&self, index: usize, key: &[u8]) -> bool {
        self.secondaries[index - 1]
            .tree
            .remove_if(key, |r| r.delete_mark())
            .is_some()
    }
}
