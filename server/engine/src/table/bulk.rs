//! The rebuild of a table whose rows keep their layout (CREATE INDEX, DROP INDEX): the live
//! clustered records are copied in key order into a clustered index
//! built bottom-up, and each secondary index is built by sorting its keys and building its
//! pages bottom-up, as InnoDB's sorted index build does, instead of inserting row by row.
//! The table it gives is the one the row-by-row rebuild gives (same records, counters and
//! errors): where that is not certain, it declines and the caller rebuilds row by row.

use std::sync::atomic::Ordering::Relaxed;

use crate::index::{BTree, ClusteredRec, KeyBuf, Record, SecondaryRec};
use crate::row_buf::RowBuf;
use crate::schema::TableDef;
use crate::value::Value;

use super::Table;

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
        let mut table = Table::new(def.clone(), self.clustered.capacity());
        table.rebuilt_by = rebuilt_by;
        let mut live: Vec<ClusteredRec> = Vec::with_capacity(self.row_count() as usize);
        self.clustered.for_each_record(|r| {
            if !r.delete_mark() {
                live.push(ClusteredRec::new(
                    KeyBuf::from(r.key()),
                    RowBuf::new(r.row()),
                    r.trx_id(),
                ));
            }
        });
        for i in 0..table.secondaries.len() {
            let tree = table.sorted_secondary(i + 1, &live)?;
            table.secondaries[i].tree = tree;
        }
        let auto = def
            .auto_increment_column()
            .map(|c| table.auto_increment_floor(c, &live));
        let next_auto = self.auto_increment_value().max(auto.unwrap_or(0));
        table.next_auto_increment.store(next_auto, Relaxed);
        table
            .next_row_id
            .store(self.next_row_id.load(Relaxed), Relaxed);
        table.rows.store(live.len() as i64, Relaxed);
        let capacity = self.clustered.capacity();
        table.clustered = BTree::from_sorted(
            capacity,
            live.into_iter().map(|r| {
                let trx_id = r.trx_id;
                (r, trx_id)
            }),
        );
        Some(table)
    }

    /// Secondary index `index` over `rows` (live clustered records in key order), built from
    /// its sorted keys; None when it is UNIQUE and two entries share a secondary part.
    fn sorted_secondary(&self, index: usize, rows: &[ClusteredRec]) -> Option<BTree<SecondaryRec>> {
        let mut keys: Vec<(Vec<u8>, usize, u64)> = rows
            .iter()
            .map(|r| {
                let k = self.secondary_key_of(index, &r.row, r.key());
                let pk_offset = k.len() - r.key().len();
                (k, pk_offset, r.trx_id)
            })
            .collect();
        keys.sort_unstable_by(|a, b| a.0.cmp(&b.0));
        if self.secondaries[index - 1].unique
            && keys
                .windows(2)
                .any(|w| w[0].0[..w[0].1] == w[1].0[..w[1].1])
        {
            return None;
        }
        let capacity = self.clustered.capacity();
        Some(BTree::from_sorted(
            capacity,
            keys.into_iter()
                .map(|(k, off, trx_id)| (SecondaryRec::new(&k, off), trx_id)),
        ))
    }

    /// One past the largest value of AUTO_INCREMENT column `c` in `rows`, as re-inserting
    /// them would move the counter.
    fn auto_increment_floor(&self, c: usize, rows: &[ClusteredRec]) -> u64 {
        rows.iter()
            .map(
                |r| match self.codec.decode_columns(&r.row, &[c]).as_slice() {
                    [Value::Int(i)] if *i > 0 => (*i as u64).saturating_add(1),
                    [Value::UInt(u)] if *u > 0 => u.saturating_add(1),
                    _ => 0,
                },
            )
            .max()
            .unwrap_or(0)
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;
    use crate::index::PageCapacity;
    use crate::scan::KeyRange;
    use crate::schema::{Column, IndexDef, IndexKind};
    use crate::table::{InsertOptions, WriteStamp};
    use crate::types::{ColumnType, IntKind};
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
