//! The rebuild of a table whose rows keep their layout (CREATE INDEX, DROP INDEX): the live
//! clustered records are copied in key order into a clustered index built bottom-up, and
//! each secondary index is built by sorting its keys and building its pages bottom-up, as
//! InnoDB's sorted index build does, instead of inserting row by row.
//! The table it gives is the one the row-by-row rebuild gives (same records, counters and
//! errors): where that is not certain, it declines and the caller rebuilds row by row.
//!
//! Memory: the old clustered records are read in place, under one shared leaf latch at a
//! time, and never copied as a whole. A first walk gathers only each secondary index's
//! entries, their key bytes back to back in one buffer ([`SortRun`]: about 24 bytes plus the
//! key per entry), which are sorted and built into pages one index at a time; a second walk
//! streams the records into the new clustered index's leaves. So a rebuild needs the new
//! table's bytes plus one index's keys beside the old table, not a copy of every row.

use std::sync::atomic::Ordering::Relaxed;

use crate::cursor::LatchMode;
use crate::index::{BTree, ClusteredRec, KeyBuf, SecondaryRec};
use crate::row_buf::RowBuf;
use crate::schema::TableDef;
use crate::types::ColumnType;
use crate::value::Value;

use super::Table;

/// One secondary index's entries for its sorted build: the encoded keys (secondary part ++
/// primary key) back to back in `bytes`, and per entry where its key lies, where its
/// primary-key part starts and which transaction wrote its row.
#[derive(Debug, Default)]
struct SortRun {
    bytes: Vec<u8>,
    entries: Vec<SortEntry>,
}

/// An entry of a [`SortRun`].
#[derive(Debug, Clone, Copy)]
struct SortEntry {
    /// Offset of the key in [`SortRun::bytes`].
    at: usize,
    /// Key length.
    len: u32,
    /// Where the primary-key part starts within the key.
    pk_offset: u32,
    /// DB_TRX_ID of the row (raises its leaf's `max_trx_id`).
    trx_id: u64,
}

impl SortRun {
    /// A run with room for `entries` entries.
    fn with_capacity(entries: usize) -> SortRun {
        SortRun {
            bytes: Vec::new(),
            entries: Vec::with_capacity(entries),
        }
    }

    /// Adds the entry `key` (its primary-key part the last `pk_len` bytes) of a row written
    /// by `trx_id`.
    fn push(&mut self, key: &[u8], pk_len: usize, trx_id: u64) {
        if self.bytes.capacity() == 0 {
            // Keys of one index are about one size: room for as many as there are entries.
            self.bytes
                .reserve(key.len() * self.entries.capacity().max(1));
        }
        let entry = SortEntry {
            at: self.bytes.len(),
            len: u32::try_from(key.len()).expect("a key under 4 GiB"),
            pk_offset: u32::try_from(key.len() - pk_len).expect("a key under 4 GiB"),
            trx_id,
        };
        self.bytes.extend_from_slice(key);
        self.entries.push(entry);
    }

    fn key(&self, e: &SortEntry) -> &[u8] {
        &self.bytes[e.at..e.at + e.len as usize]
    }

    fn secondary_part(&self, e: &SortEntry) -> &[u8] {
        &self.key(e)[..e.pk_offset as usize]
    }

    /// Sorts the entries by key.
    fn sort(&mut self) {
        let bytes = &self.bytes;
        let key = |e: &SortEntry| &bytes[e.at..e.at + e.len as usize];
        self.entries.sort_unstable_by(|a, b| key(a).cmp(key(b)));
    }

    /// Whether two (sorted) entries share a secondary part.
    fn has_repeat(&self) -> bool {
        self.entries
            .windows(2)
            .any(|w| self.secondary_part(&w[0]) == self.secondary_part(&w[1]))
    }

    /// The (sorted) entries as records.
    fn into_tree(self, capacity: crate::index::PageCapacity) -> BTree<SecondaryRec> {
        BTree::from_sorted(
            capacity,
            self.entries.iter().map(|e| {
                (
                    SecondaryRec::new(self.key(e), e.pk_offset as usize),
                    e.trx_id,
                )
            }),
        )
    }
}

impl Table {
    /// This table under `def` built in bulk, when `def` keeps the row layout and the
    /// clustered key; None when it does not, or when a UNIQUE secondary index of `def` has
    /// a repeated key (the row-by-row rebuild then decides: NULLs may repeat, anything else
    /// is its 1062).
    pub(super) fn rebuilt_bulk(&self, def: &TableDef, rebuilt_by: u64) -> Option<Table> {
        let same_layout = def.columns().len() == self.def.columns().len()
            && def
                .columns()
                .iter()
                .zip(self.def.columns())
                .all(|(a, b)| a.ty == b.ty && a.nullable == b.nullable);
        if !same_layout || def.clustered() != self.def.clustered() {
            return None;
        }
        let capacity = self.clustered.capacity();
        let mut table = Table::new(def.clone(), capacity);
        table.rebuilt_by = rebuilt_by;
        let (mut runs, live, auto) = table.gather(self, def.auto_increment_column());
        for i in (0..runs.len()).rev() {
            let mut run = runs.pop().expect("one run per secondary index");
            run.sort();
            if table.secondaries[i].unique && run.has_repeat() {
                return None;
            }
            table.secondaries[i].tree = run.into_tree(capacity);
        }
        let next_auto = self.auto_increment_value().max(auto);
        table.next_auto_increment.store(next_auto, Relaxed);
        table
            .next_row_id
            .store(self.next_row_id.load(Relaxed), Relaxed);
        table.rows.store(live as i64, Relaxed);
        table.clustered = BTree::from_sorted(capacity, live_records(&self.clustered));
        Some(table)
    }

    /// One walk of `old`'s clustered leaves: the entries of each of this table's secondary
    /// indexes, the live row count and one past the largest positive value of the
    /// AUTO_INCREMENT column `auto` (as re-inserting the rows would move the counter).
    fn gather(&self, old: &Table, auto: Option<usize>) -> (Vec<SortRun>, u64, u64) {
        let rows = old.row_count() as usize;
        let mut runs: Vec<SortRun> = (0..self.secondaries.len())
            .map(|_| SortRun::with_capacity(rows))
            .collect();
        let (mut live, mut floor) = (0u64, 0u64);
        // An integer AUTO_INCREMENT column that leads the clustered key orders the records
        // by its value, so the last live record holds the largest: only that one is read.
        let leading = auto.filter(|&c| {
            self.def.clustered().columns.first() == Some(&c)
                && matches!(self.def.columns()[c].ty, ColumnType::Integer { .. })
        });
        let mut last_live: Vec<u8> = Vec::new();
        old.clustered.for_each_record(|r| {
            if r.delete_mark() {
                return;
            }
            live += 1;
            for (i, run) in runs.iter_mut().enumerate() {
                let key = self.secondary_key_of(i + 1, r.row(), r.key());
                run.push(&key, r.key().len(), r.trx_id());
            }
            match (auto, leading) {
                (_, Some(_)) => {
                    last_live.clear();
                    last_live.extend_from_slice(r.key());
                }
                (Some(c), None) => floor = floor.max(self.auto_increment_after(c, r.row())),
                (None, None) => {}
            }
        });
        if let (Some(c), true) = (leading, live > 0) {
            floor = old
                .clustered
                .get(&last_live, |r| self.auto_increment_after(c, r.row()))
                .unwrap_or(0);
        }
        (runs, live, floor)
    }

    /// One past the value of AUTO_INCREMENT column `c` in `row` when positive, else 0.
    fn auto_increment_after(&self, c: usize, row: &[u8]) -> u64 {
        match self.codec.decode_columns(row, &[c]).as_slice() {
            [Value::Int(i)] if *i > 0 => (*i as u64).saturating_add(1),
            [Value::UInt(u)] if *u > 0 => u.saturating_add(1),
            _ => 0,
        }
    }
}

/// The live records of `tree` in key order, each copied out of its leaf while that leaf is
/// latched (shared) and handed on at once, with its DB_TRX_ID; delete-marked ones are left
/// out and roll pointers are not kept (the rebuilt table has no older versions).
fn live_records(tree: &BTree<ClusteredRec>) -> impl Iterator<Item = (ClusteredRec, u64)> + '_ {
    let mut cursor = tree.cursor(LatchMode::Read);
    let mut on = cursor.first();
    std::iter::from_fn(move || {
        while on {
            let rec = cursor.record().expect("a positioned cursor has a record");
            let copy = (!rec.delete_mark()).then(|| {
                let trx_id = rec.trx_id();
                let r = ClusteredRec::new(KeyBuf::from(rec.key()), RowBuf::new(rec.row()), trx_id);
                (r, trx_id)
            });
            on = cursor.move_next();
            if copy.is_some() {
                return copy;
            }
        }
        None
    })
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;
    use crate::index::PageCapacity;
    use crate::scan::KeyRange;
    use crate::schema::{Column, IndexDef, IndexKind};
    use crate::table::{InsertOptions, WriteStamp};
    use crate::types::IntKind;
    use crate::Direction;

    const INT: ColumnType = ColumnType::Integer {
        kind: IntKind::Int,
        unsigned: false,
    };

    /// t(id INT AUTO_INCREMENT PRIMARY KEY, k INT, u INT, c VARCHAR(8)) with the given
    /// secondary indexes (over k, then u UNIQUE).
    fn def(secondaries: bool) -> TableDef {
        let mut indexes = vec![IndexDef::new("PRIMARY", IndexKind::Primary, vec![0])];
        if secondaries {
            indexes.push(IndexDef::new("k_idx", IndexKind::NonUnique, vec![1]));
            indexes.push(IndexDef::new("u_idx", IndexKind::Unique, vec![2]));
        }
        let columns = vec![
            Column::new("id", INT).not_null().auto_increment(),
            Column::new("k", INT),
            Column::new("u", INT),
            Column::new("c", ColumnType::VarChar(8)),
        ];
        TableDef::new("t", columns, indexes).expect("valid definition")
    }

    /// The row-by-row rebuild, as `Table::rebuilt_mapped` does it without the bulk path.
    fn rebuilt_row_by_row(t: &Table, def: TableDef, by: u64) -> Result<Table, EngineError> {
        let mut table = Table::new(def, t.clustered.capacity());
        table.rebuilt_by = by;
        for item in t.scan(0, KeyRange::all(), Direction::Forward) {
            let opts = InsertOptions {
                stamp: WriteStamp {
                    trx_id: item.trx_id,
                },
                no_auto_value_on_zero: true,
            };
            table.insert(item.row.expect("a clustered scan returns rows"), &opts)?;
        }
        table
            .next_auto_increment
            .fetch_max(t.auto_increment_value(), Relaxed);
        Ok(table)
    }

    /// Everything a reader of the table can see, index by index.
    /// (clustered key, row, DB_TRX_ID) per record, the keys of each secondary index, the row
    /// count and the AUTO_INCREMENT counter.
    type Contents = (Vec<(Vec<u8>, Vec<Value>, u64)>, Vec<Vec<Vec<u8>>>, u64, u64);

    fn contents(t: &Table) -> Contents {
        let mut clustered = Vec::new();
        t.clustered.for_each_record(|r| {
            clustered.push((r.key().to_vec(), t.codec.decode(r.row()), r.trx_id()));
        });
        let secondaries = t
            .secondaries
            .iter()
            .map(|s| {
                let mut keys = Vec::new();
                s.tree.for_each_record(|r| keys.push(r.key().to_vec()));
                keys
            })
            .collect();
        (
            clustered,
            secondaries,
            t.row_count(),
            t.auto_increment_value(),
        )
    }

    use crate::error::EngineError;

    proptest! {
        /// CREATE INDEX's bulk rebuild gives the table the row-by-row rebuild gives, or the
        /// same error (a repeated UNIQUE value), deleted rows and NULLs included.
        #[test]
        fn bulk_rebuild_equals_row_by_row_rebuild(
            rows in prop::collection::vec(
                (prop::option::of(0i64..20), prop::option::of(0i64..400), "[a-z]{0,8}", any::<bool>()),
                0..120,
            ),
        ) {
            let t = Table::new(def(false), PageCapacity { leaf: 4, inner: 4 });
            for (n, (k, u, c, delete)) in rows.iter().enumerate() {
                let opt = |v: Option<i64>| v.map_or(Value::Null, Value::Int);
                let row = vec![Value::Null, opt(*k), opt(*u), Value::str(c)];
                let stamp = WriteStamp { trx_id: n as u64 + 10 };
                let opts = InsertOptions { stamp, no_auto_value_on_zero: false };
                let out = t.insert(row, &opts).expect("no unique key yet");
                if *delete {
                    assert!(t.delete(&out.primary_key, stamp, &mut Vec::new()));
                }
            }
            let bulk = t.rebuilt(def(true), 99);
            let by_row = rebuilt_row_by_row(&t, def(true), 99);
            match (bulk, by_row) {
                (Ok(b), Ok(r)) => {
                    prop_assert_eq!(contents(&b), contents(&r));
                    prop_assert!(b.rebuilt_after(99) && !b.rebuilt_after(100));
                }
                (Err(b), Err(r)) => prop_assert_eq!(b.message(1), r.message(1)),
                (b, r) => prop_assert!(false, "bulk {:?} vs row by row {:?}", b.is_ok(), r.is_ok()),
            }
        }
    }

    #[test]
    fn a_table_replaced_by_its_rebuild_is_freed_before_it_is_counted() {
        use std::sync::{Arc, Weak};
        let t = Table::new(def(false), PageCapacity { leaf: 4, inner: 4 });
        for n in 0..40 {
            let row = vec![Value::Null, Value::Int(n), Value::Int(n), Value::str("c")];
            t.insert(row, &InsertOptions::default()).expect("insert");
        }
        let leaf = |t: &Table| {
            let g = t
                .clustered
                .descend(&[], crate::index::Route::BeforeEqual, false, None);
            Arc::downgrade(g.page())
        };
        let old_leaf = leaf(&t);
        let rebuilt = t.rebuilt(def(true), 1).expect("CREATE INDEX");
        let seen: Arc<std::sync::Mutex<Vec<bool>>> = Arc::default();
        let (watched, record) = (old_leaf.clone(), seen.clone());
        crate::memory::ON_NOTE.with(|f| {
            *f.borrow_mut() = Some(Box::new(move || {
                record
                    .lock()
                    .unwrap()
                    .push(Weak::upgrade(&watched).is_some());
            }));
        });
        drop(t);
        crate::memory::ON_NOTE.with(|f| *f.borrow_mut() = None);
        assert_eq!(
            *seen.lock().unwrap(),
            [false],
            "the old leaf was still allocated"
        );
        assert!(leaf(&rebuilt).upgrade().is_some());
    }

    /// The AUTO_INCREMENT counter after a rebuild of `t` (bulk, then row by row).
    fn counters_after_rebuild(t: &Table, def: &TableDef) -> (u64, u64) {
        let bulk = t.rebuilt(def.clone(), 1).expect("bulk rebuild");
        let by_row = rebuilt_row_by_row(t, def.clone(), 1).expect("row-by-row rebuild");
        (bulk.auto_increment_value(), by_row.auto_increment_value())
    }

    #[test]
    fn the_counter_passes_the_largest_live_value_as_row_by_row() {
        // The AUTO_INCREMENT column leads the key: the last live record is read.
        let t = Table::new(def(false), PageCapacity { leaf: 4, inner: 4 });
        for id in [-3, 5, 2, 9] {
            let row = vec![
                Value::Int(id),
                Value::Int(1),
                Value::Int(id),
                Value::str("c"),
            ];
            let out = t.insert(row, &InsertOptions::default()).expect("insert");
            if id == 9 {
                assert!(t.delete(&out.primary_key, WriteStamp::default(), &mut Vec::new()));
            }
        }
        t.next_auto_increment.store(1, Relaxed);
        assert_eq!(counters_after_rebuild(&t, &def(true)), (6, 6));
        // Every value not positive: the counter stays as it was.
        let t = Table::new(def(false), PageCapacity { leaf: 4, inner: 4 });
        let row = vec![
            Value::Int(-4),
            Value::Int(1),
            Value::Int(1),
            Value::str("c"),
        ];
        t.insert(row, &InsertOptions::default()).expect("insert");
        t.next_auto_increment.store(1, Relaxed);
        assert_eq!(counters_after_rebuild(&t, &def(true)), (1, 1));

        // The AUTO_INCREMENT column second in the key: every record is read.
        let second = |secondary: bool| {
            let mut indexes = vec![
                IndexDef::new("PRIMARY", IndexKind::Primary, vec![1, 0]),
                IndexDef::new("id_idx", IndexKind::NonUnique, vec![0]),
            ];
            if secondary {
                indexes.push(IndexDef::new("k_idx", IndexKind::NonUnique, vec![2]));
            }
            let columns = vec![
                Column::new("id", INT).not_null().auto_increment(),
                Column::new("g", INT).not_null(),
                Column::new("k", INT),
            ];
            TableDef::new("t", columns, indexes).expect("valid definition")
        };
        let t = Table::new(second(false), PageCapacity { leaf: 4, inner: 4 });
        for (id, g) in [(7, 1), (3, 2)] {
            let row = vec![Value::Int(id), Value::Int(g), Value::Int(0)];
            t.insert(row, &InsertOptions::default()).expect("insert");
        }
        t.next_auto_increment.store(1, Relaxed);
        assert_eq!(counters_after_rebuild(&t, &second(true)), (8, 8));
    }

    #[test]
    fn a_changed_layout_is_left_to_the_row_by_row_rebuild() {
        let t = Table::new(def(false), PageCapacity::default());
        let mut wider = def(true);
        assert!(t.rebuilt_bulk(&wider, 1).is_some());
        wider = TableDef::new(
            "t",
            vec![Column::new("id", INT).not_null(), Column::new("k", INT)],
            vec![IndexDef::new("PRIMARY", IndexKind::Primary, vec![0])],
        )
        .expect("valid definition");
        assert!(t.rebuilt_bulk(&wider, 1).is_none());
    }
}
