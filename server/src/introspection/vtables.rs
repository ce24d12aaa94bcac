//! Virtual tables: a schema plus a row snapshot taken when a statement reads them, so
//! introspection tables go through the same WHERE/ORDER BY/GROUP BY/join code as ordinary
//! tables. `information_schema.TABLES` (its sizes from [`table_sizes`](super::table_sizes)),
//! `COLUMNS` and `STATISTICS` live here; the other
//! introspection tables (in `innodb_tables`, `pfs_tables` and `pool_tables`) implement the
//! same trait.

use crate::core::ThreadHandling;
use crate::engine::{Catalog, IndexKind};
use crate::introspection::describe;
use crate::introspection::ServerView;
use crate::value::Value;

/// The kind of a virtual column (decides its result metadata).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum VType {
    /// A string.
    Text,
    /// An unsigned integer.
    UInt,
}

/// The length of a [`VType::Text`] column, in characters.
pub const TEXT_CHARS: u32 = 256;

/// A table whose rows are computed when read.
pub trait VirtualTable: Send + Sync + std::fmt::Debug {
    /// Its name as MySQL spells it.
    fn name(&self) -> &'static str;
    /// Columns and their kinds.
    fn columns(&self) -> &'static [(&'static str, VType)];
    /// A snapshot of the rows (one value per column).
    fn rows(&self, server: &dyn ServerView) -> Vec<Vec<Value>>;
    /// The engine of a table MySQL keeps as a base table (the log tables' `CSV`); `None`
    /// for the system databases' views, which take their database's kind
    /// ([`crate::introspection::system_schema_rows::kind_of`]).
    fn engine(&self) -> Option<&'static str> {
        None
    }
    /// `SHOW CREATE TABLE`'s text for a table MySQL defines with one; `None` gives 1146.
    fn create_statement(&self) -> Option<&'static str> {
        None
    }
    /// `TRUNCATE TABLE`: resets what the table sums; false when the table cannot be
    /// truncated.
    fn truncate(&self, _server: &dyn ServerView) -> bool {
        false
    }
}

/// The virtual table `db.name` (case-insensitive, as MySQL treats information_schema).
pub fn lookup(server: &dyn ServerView, db: &str, name: &str) -> Option<&'static dyn VirtualTable> {
    tables_of(server, db)
        .into_iter()
        .find(|t| t.name().eq_ignore_ascii_case(name))
}

/// Every virtual table of the system database `db` (none for another database).
pub fn tables_of(server: &dyn ServerView, db: &str) -> Vec<&'static dyn VirtualTable> {
    use crate::introspection::innodb_tables as innodb;
    if db.eq_ignore_ascii_case("information_schema") {
        let mut all: Vec<&'static dyn VirtualTable> = vec![
            &Tables,
            &Columns,
            &Statistics,
            &crate::introspection::pool_tables::Plugins,
            &innodb::InnodbTrx,
            &innodb::InnodbMetrics,
            &crate::introspection::table_sizes::InnodbTablestats,
            &crate::introspection::compression_tables::InnodbCmp,
            &crate::introspection::compression_tables::InnodbCmpMem,
            &crate::introspection::schema_tables::Schemata,
            &crate::introspection::schema_tables::ROUTINES,
            &crate::introspection::schema_tables::TRIGGERS,
            &crate::introspection::schema_tables::FILES,
            &crate::introspection::schema_tables::Partitions,
            &crate::introspection::pfs_tables::Processlist,
            &crate::introspection::constraints::KeyColumnUsage,
            &crate::introspection::constraints::ReferentialConstraints,
        ];
        // MySQL's plugin also shows its group statistics here (deprecated there).
        if server.thread_handling() == ThreadHandling::Pool {
            all.push(&crate::introspection::pool_tables::GroupStatsInfoSchema);
        }
        all
    } else if db.eq_ignore_ascii_case("performance_schema") {
        let mut all: Vec<&'static dyn VirtualTable> =
            crate::introspection::pfs_tables::PERFORMANCE_SCHEMA
                .iter()
                .copied()
                .chain([
                    &innodb::DataLocks as &'static dyn VirtualTable,
                    &innodb::DataLockWaits,
                    &crate::introspection::memory_summary::MemoryGlobal,
                ])
                .chain(
                    crate::introspection::pfs_empty_tables::EMPTY_TABLES
                        .iter()
                        .map(|t| *t as &'static dyn VirtualTable),
                )
                .collect();
        // As with MySQL's plugin, the tp_* tables exist only while the pool is loaded.
        if server.thread_handling() == ThreadHandling::Pool {
            all.extend(
                crate::introspection::pool_tables::PERFORMANCE_SCHEMA
                    .iter()
                    .copied(),
            );
        }
        all
    } else if db.eq_ignore_ascii_case("sys") {
        vec![&innodb::SysInnodbLockWaits]
    } else if db.eq_ignore_ascii_case("mysql") {
        crate::introspection::mysql_tables::TABLES.to_vec()
    } else {
        Vec::new()
    }
}

fn s(v: &str) -> Value {
    Value::str(v)
}

/// Calls `f` with each table of every database, and its database.
pub(crate) fn each_table(catalog: &Catalog, mut f: impl FnMut(&str, &crate::engine::Table)) {
    for db in catalog.database_names() {
        if let Ok(d) = catalog.database(&db) {
            for name in d.table_names() {
                if let Some(t) = d.table(&name) {
                    f(&db, &t);
                }
            }
        }
    }
}

/// `information_schema.TABLES`.
#[derive(Debug)]
pub struct Tables;

impl VirtualTable for Tables {
    fn name(&self) -> &'static str {
        "TABLES"
    }
    fn columns(&self) -> &'static [(&'static str, VType)] {
        use VType::*;
        &[
            ("TABLE_CATALOG", Text),
            ("TABLE_SCHEMA", Text),
            ("TABLE_NAME", Text),
            ("TABLE_TYPE", Text),
            ("ENGINE", Text),
            ("VERSION", UInt),
            ("ROW_FORMAT", Text),
            ("TABLE_ROWS", UInt),
            ("AVG_ROW_LENGTH", UInt),
            ("DATA_LENGTH", UInt),
            ("MAX_DATA_LENGTH", UInt),
            ("INDEX_LENGTH", UInt),
            ("DATA_FREE", UInt),
            ("AUTO_INCREMENT", UInt),
            ("CREATE_TIME", Text),
            ("UPDATE_TIME", Text),
            ("CHECK_TIME", Text),
            ("TABLE_COLLATION", Text),
            ("CHECKSUM", UInt),
            ("CREATE_OPTIONS", Text),
            ("TABLE_COMMENT", Text),
        ]
    }
    fn rows(&self, server: &dyn ServerView) -> Vec<Vec<Value>> {
        let catalog = &server.catalog().engine;
        let mut rows = Vec::new();
        each_table(catalog, |db, t| {
            let sizes = crate::introspection::table_sizes::TableSizes::read(t);
            let auto = match t.def().auto_increment_column() {
                Some(_) => Value::UInt(t.auto_increment_value()),
                None => Value::Null,
            };
            rows.push(vec![
                s("def"),
                s(db),
                s(t.name()),
                s("BASE TABLE"),
                s("InnoDB"),
                Value::UInt(10),
                s("Dynamic"),
                Value::UInt(sizes.rows),
                Value::UInt(sizes.avg_row_length),
                Value::UInt(sizes.data_length),
                Value::UInt(0),
                Value::UInt(sizes.index_length),
                Value::UInt(sizes.data_free),
                auto,
                Value::Null,
                Value::Null,
                Value::Null,
                s(describe::table_collation(t)),
                Value::Null,
                s(""),
                s(""),
            ]);
        });
        rows.extend(crate::introspection::system_schema_rows::tables(server));
        rows
    }
}

/// `information_schema.COLUMNS`.
#[derive(Debug)]
pub struct Columns;

impl VirtualTable for Columns {
    fn name(&self) -> &'static str {
        "COLUMNS"
    }
    fn columns(&self) -> &'static [(&'static str, VType)] {
        use VType::*;
        &[
            ("TABLE_CATALOG", Text),
            ("TABLE_SCHEMA", Text),
            ("TABLE_NAME", Text),
            ("COLUMN_NAME", Text),
            ("ORDINAL_POSITION", UInt),
            ("COLUMN_DEFAULT", Text),
            ("IS_NULLABLE", Text),
            ("DATA_TYPE", Text),
            ("CHARACTER_MAXIMUM_LENGTH", UInt),
            ("CHARACTER_OCTET_LENGTH", UInt),
            ("NUMERIC_PRECISION", UInt),
            ("NUMERIC_SCALE", UInt),
            ("DATETIME_PRECISION", UInt),
            ("CHARACTER_SET_NAME", Text),
            ("COLLATION_NAME", Text),
            ("COLUMN_TYPE", Text),
            ("COLUMN_KEY", Text),
            ("EXTRA", Text),
            ("PRIVILEGES", Text),
            ("COLUMN_COMMENT", Text),
            ("GENERATION_EXPRESSION", Text),
            ("SRS_ID", UInt),
        ]
    }
    fn rows(&self, server: &dyn ServerView) -> Vec<Vec<Value>> {
        let catalog = &server.catalog().engine;
        use crate::engine::ColumnType as T;
        let mut rows = Vec::new();
        each_table(catalog, |db, t| {
            for (i, c) in t.def().columns().iter().enumerate() {
                let (chars, octets) = match c.ty {
                    T::Char(n) | T::VarChar(n) => {
                        (Value::UInt(n.into()), Value::UInt(u64::from(n) * 4))
                    }
                    T::Binary(n) | T::VarBinary(n) | T::Text(n) | T::Blob(n) => {
                        (Value::UInt(n.into()), Value::UInt(n.into()))
                    }
                    T::Enum(m) => (
                        Value::UInt(m.longest_chars().into()),
                        Value::UInt(u64::from(m.longest_chars()) * 4),
                    ),
                    T::Set(m) => (
                        Value::UInt(m.joined_chars().into()),
                        Value::UInt(u64::from(m.joined_chars()) * 4),
                    ),
                    _ => (Value::Null, Value::Null),
                };
                let (prec, scale) = match c.ty {
                    T::Integer { kind, unsigned } => {
                        let digits = match kind {
                            crate::engine::IntKind::Tiny => 3,
                            crate::engine::IntKind::Small => 5,
                            crate::engine::IntKind::Medium => 7,
                            crate::engine::IntKind::Int => 10,
                            crate::engine::IntKind::Big => 19 + u64::from(unsigned),
                        };
                        (Value::UInt(digits), Value::UInt(0))
                    }
                    T::Decimal { precision, scale } => {
                        (Value::UInt(precision.into()), Value::UInt(scale.into()))
                    }
                    T::Float => (Value::UInt(12), Value::Null),
                    T::Double => (Value::UInt(22), Value::Null),
                    T::Bit(n) => (Value::UInt(n.into()), Value::Null),
                    _ => (Value::Null, Value::Null),
                };
                let dt_prec = match c.ty {
                    T::DateTime { fsp } | T::Timestamp { fsp } | T::Time { fsp } => {
                        Value::UInt(fsp.into())
                    }
                    _ => Value::Null,
                };
                let collation = describe::column_collation(t, c);
                rows.push(vec![
                    s("def"),
                    s(db),
                    s(t.name()),
                    s(&c.name),
                    Value::UInt(i as u64 + 1),
                    describe::default_text(c).map_or(Value::Null, |d| s(&d)),
                    s(if c.nullable { "YES" } else { "NO" }),
                    s(&describe::data_type(c.ty)),
                    chars,
                    octets,
                    prec,
                    scale,
                    dt_prec,
                    collation.map_or(Value::Null, |cl| s(crate::sql::collations::charset_of(cl))),
                    collation.map_or(Value::Null, s),
                    s(&c.ty.sql_name()),
                    s(describe::column_key(t, i)),
                    s(describe::extra(c)),
                    s("select,insert,update,references"),
                    s(""),
                    s(""),
                    Value::Null,
                ]);
            }
        });
        rows.extend(crate::introspection::system_schema_rows::columns(server));
        rows
    }
}

/// `information_schema.STATISTICS`: one row per index column.
#[derive(Debug)]
pub struct Statistics;

impl VirtualTable for Statistics {
    fn name(&self) -> &'static str {
        "STATISTICS"
    }
    fn columns(&self) -> &'static [(&'static str, VType)] {
        use VType::*;
        &[
            ("TABLE_CATALOG", Text),
            ("TABLE_SCHEMA", Text),
            ("TABLE_NAME", Text),
            ("NON_UNIQUE", UInt),
            ("INDEX_SCHEMA", Text),
            ("INDEX_NAME", Text),
            ("SEQ_IN_INDEX", UInt),
            ("COLUMN_NAME", Text),
            ("COLLATION", Text),
            ("CARDINALITY", UInt),
            ("SUB_PART", UInt),
            ("PACKED", Text),
            ("NULLABLE", Text),
            ("INDEX_TYPE", Text),
            ("COMMENT", Text),
            ("INDEX_COMMENT", Text),
            ("IS_VISIBLE", Text),
            ("EXPRESSION", Text),
        ]
    }
    fn rows(&self, server: &dyn ServerView) -> Vec<Vec<Value>> {
        let mut rows = Vec::new();
        each_table(&server.catalog().engine, |db, t| {
            rows.extend(statistics_rows(db, t))
        });
        rows
    }
}

/// The `STATISTICS` rows of table `t` of database `db`: one per index column (SHOW INDEX
/// shows the same).
pub fn statistics_rows(db: &str, t: &crate::engine::Table) -> Vec<Vec<Value>> {
    let mut rows = Vec::new();
    for ix in t.def().indexes() {
        if ix.kind == IndexKind::HiddenRowId {
            continue;
        }
        for (seq, &c) in ix.columns.iter().enumerate() {
            let col = &t.def().columns()[c];
            rows.push(vec![
                s("def"),
                s(db),
                s(t.name()),
                Value::UInt(u64::from(!ix.is_unique())),
                s(db),
                s(&ix.name),
                Value::UInt(seq as u64 + 1),
                s(&col.name),
                s("A"),
                Value::UInt(t.row_count()),
                Value::Null,
                Value::Null,
                s(if col.nullable { "YES" } else { "" }),
                s("BTREE"),
                s(""),
                s(""),
                s("YES"),
                Value::Null,
            ]);
        }
    }
    rows
}
