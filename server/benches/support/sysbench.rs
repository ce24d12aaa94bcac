//! The sysbench `sbtest` table shape shared by the engine benches: `id INT AUTO_INCREMENT
//! PRIMARY KEY, k INT NOT NULL DEFAULT 0, c CHAR(120), pad CHAR(60), KEY k_1 (k)`, filled as
//! sysbench's `prepare` fills it (c: ten 11-digit groups joined by '-', pad: five).

use tpbed_server::engine::{
    Column, ColumnType, IndexDef, IndexKind, InsertOptions, IntKind, PageCapacity, Table, TableDef,
};
use tpbed_server::value::Value;

/// A small deterministic generator (xorshift64*), so runs are repeatable.
#[derive(Debug)]
pub(crate) struct Rng(pub(crate) u64);

impl Rng {
    /// The next value in `0..n`.
    pub(crate) fn below(&mut self, n: u64) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D) % n
    }

    fn groups(&mut self, n: usize) -> Vec<u8> {
        let groups: Vec<String> = (0..n)
            .map(|_| format!("{:011}", self.below(100_000_000_000)))
            .collect();
        groups.join("-").into_bytes()
    }
}

/// An empty sbtest table.
pub(crate) fn sbtest(name: &str) -> Table {
    let int = ColumnType::Integer {
        kind: IntKind::Int,
        unsigned: false,
    };
    let def = TableDef::new(
        name,
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
        vec![
            IndexDef::new("PRIMARY", IndexKind::Primary, vec![0]),
            IndexDef::new("k_1", IndexKind::NonUnique, vec![1]),
        ],
    )
    .expect("sbtest definition");
    Table::new(def, PageCapacity::default())
}

/// A sysbench row with the given id.
pub(crate) fn row(rng: &mut Rng, id: i64, table_size: u64) -> Vec<Value> {
    vec![
        Value::Int(id),
        Value::Int(1 + rng.below(table_size) as i64),
        Value::Bytes(rng.groups(10)),
        Value::Bytes(rng.groups(5)),
    ]
}

/// Fills `table` with ids `1..=rows`, as sysbench prepare does (ascending).
pub(crate) fn fill(table: &Table, rows: u64, rng: &mut Rng) {
    let opts = InsertOptions::default();
    for id in 1..=rows {
        table
            .insert(row(rng, id as i64, rows), &opts)
            .expect("insert");
    }
}
