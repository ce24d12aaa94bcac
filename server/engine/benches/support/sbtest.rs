//! What the engine's benches share: sysbench's `sbtest1` table and the random digits sysbench
//! fills its text columns with.

use std::sync::Arc;

use tpbed_engine::value::Value;
use tpbed_engine::{
    Column, ColumnType, IndexDef, IndexKind, IntKind, PageCapacity, Table, TableDef,
};

/// sysbench's `sb_rand_str` digits from a xorshift generator.
pub(crate) struct Rng(pub(crate) u64);

impl Rng {
    pub(crate) fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    /// `groups` groups of 11 random digits joined by '-' (c: 10 groups, pad: 5).
    pub(crate) fn digits(&mut self, groups: usize) -> Value {
        let mut s = Vec::with_capacity(groups * 12);
        for g in 0..groups {
            if g > 0 {
                s.push(b'-');
            }
            for _ in 0..11 {
                s.push(b'0' + (self.next() % 10) as u8);
            }
        }
        Value::Bytes(s)
    }
}

/// sysbench's `sbtest1`, with or without its `k_1` index.
pub(crate) fn sbtest(with_k_index: bool) -> Arc<Table> {
    let int = ColumnType::Integer {
        kind: IntKind::Int,
        unsigned: false,
    };
    let mut indexes = vec![IndexDef::new("PRIMARY", IndexKind::Primary, vec![0])];
    if with_k_index {
        indexes.push(IndexDef::new("k_1", IndexKind::NonUnique, vec![1]));
    }
    let def = TableDef::new(
        "sbtest1",
        vec![
            Column::new("id", int).not_null().auto_increment(),
            Column::new("k", int)
                .not_null()
                .default_value(Value::Int(0)),
            Column::new("c", ColumnType::Char(120))
                .not_null()
                .default_value(Value::str("")),
            Column::new("pad", ColumnType::Char(60))
                .not_null()
                .default_value(Value::str("")),
        ],
        indexes,
    )
    .expect("sbtest definition");
    Arc::new(Table::new(def, PageCapacity::default()))
}
