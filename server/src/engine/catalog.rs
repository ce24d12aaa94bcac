//! The catalog: table definitions (columns, indexes, the clustered index first) and the
//! registry of databases and tables. Lookups take shared locks only, so readers never block
//! each other; DDL takes the registry's write lock.
//!
//! Clustered index choice follows InnoDB: the PRIMARY KEY; else the first UNIQUE index whose
//! columns are all NOT NULL; else a hidden 6-byte row id (`GEN_CLUST_INDEX`).

use std::collections::BTreeMap;
use std::sync::{Arc, RwLock};

use crate::engine::error::EngineError;
use crate::engine::index::PageCapacity;
use crate::engine::key::KeyColumn;
use crate::engine::row::RowCodec;
use crate::engine::table::Table;
use crate::engine::types::ColumnType;
use crate::value::{DateTime, Value};

/// A column's DEFAULT.
#[derive(Debug, Clone, PartialEq)]
pub enum ColumnDefault {
    /// No DEFAULT clause: NULL for a nullable column, else the column must be given.
    None,
    /// A constant (already coerced to the column type).
    Value(Value),
    /// `DEFAULT CURRENT_TIMESTAMP` (or NOW()).
    CurrentTimestamp,
}

/// One column.
#[derive(Debug, Clone, PartialEq)]
pub struct Column {
    /// Name as declared (compared case-insensitively).
    pub name: String,
    /// Type.
    pub ty: ColumnType,
    /// NULL allowed.
    pub nullable: bool,
    /// DEFAULT.
    pub default: ColumnDefault,
    /// AUTO_INCREMENT.
    pub auto_increment: bool,
}

impl Column {
    /// A nullable column without default.
    pub fn new(name: &str, ty: ColumnType) -> Column {
        Column {
            name: name.to_string(),
            ty,
            nullable: true,
            default: ColumnDefault::None,
            auto_increment: false,
        }
    }

    /// The same column, NOT NULL.
    pub fn not_null(mut self) -> Column {
        self.nullable = false;
        self
    }

    /// The same column, AUTO_INCREMENT.
    pub fn auto_increment(mut self) -> Column {
        self.auto_increment = true;
        self
    }

    /// The same column with a constant DEFAULT.
    pub fn default_value(mut self, v: Value) -> Column {
        self.default = ColumnDefault::Value(v);
        self
    }

    /// The key-encoding view of the column.
    pub fn key_column(&self) -> KeyColumn {
        KeyColumn {
            ty: self.ty,
            nullable: self.nullable,
        }
    }
}

/// Kinds of index.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IndexKind {
    /// PRIMARY KEY.
    Primary,
    /// UNIQUE KEY.
    Unique,
    /// KEY / INDEX.
    NonUnique,
    /// The hidden row-id clustered index of a table without a usable unique key.
    HiddenRowId,
}

/// One index: a name and the columns it orders by.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IndexDef {
    /// `PRIMARY`, the declared name, or `GEN_CLUST_INDEX`.
    pub name: String,
    /// Kind.
    pub kind: IndexKind,
    /// Column positions in key order (empty for the hidden row id).
    pub columns: Vec<usize>,
}

impl IndexDef {
    /// An index over `columns`.
    pub fn new(name: &str, kind: IndexKind, columns: Vec<usize>) -> IndexDef {
        IndexDef {
            name: name.to_string(),
            kind,
            columns,
        }
    }

    /// PRIMARY or UNIQUE.
    pub fn is_unique(&self) -> bool {
        matches!(
            self.kind,
            IndexKind::Primary | IndexKind::Unique | IndexKind::HiddenRowId
        )
    }
}

/// Name of InnoDB's hidden clustered index.
pub const GEN_CLUST_INDEX: &str = "GEN_CLUST_INDEX";

/// A validated table definition; `indexes[0]` is the clustered index.
#[derive(Debug, Clone, PartialEq)]
pub struct TableDef {
    name: String,
    columns: Vec<Column>,
    indexes: Vec<IndexDef>,
    auto_increment: Option<usize>,
}

impl TableDef {
    /// Validates columns and indexes (names unique, one PRIMARY, one AUTO_INCREMENT column that
    /// starts an index) and picks the clustered index. PRIMARY KEY columns become NOT NULL, as
    /// in MySQL.
    pub fn new(
        name: &str,
        mut columns: Vec<Column>,
        indexes: Vec<IndexDef>,
    ) -> Result<TableDef, EngineError> {
        for (i, c) in columns.iter().enumerate() {
            c.ty.validate(&c.name)?;
            if columns[..i]
                .iter()
                .any(|o| o.name.eq_ignore_ascii_case(&c.name))
            {
                return Err(EngineError::DuplicateColumn(c.name.clone()));
            }
        }
        let mut primary = None;
        for (i, ix) in indexes.iter().enumerate() {
            if indexes[..i]
                .iter()
                .any(|o| o.name.eq_ignore_ascii_case(&ix.name))
            {
                return Err(EngineError::DuplicateKeyName(ix.name.clone()));
            }
            if ix.columns.is_empty() || ix.columns.iter().any(|&c| c >= columns.len()) {
                return Err(EngineError::BadColumnDefinition {
                    column: ix.name.clone(),
                    reason: "index names no or unknown columns".into(),
                });
            }
            if ix.kind == IndexKind::HiddenRowId {
                return Err(EngineError::BadColumnDefinition {
                    column: ix.name.clone(),
                    reason: "the hidden row id is not declared".into(),
                });
            }
            if ix.kind == IndexKind::Primary {
                if primary.is_some() {
                    return Err(EngineError::MultiplePrimaryKey);
                }
                primary = Some(i);
            }
        }
        if let Some(p) = primary {
            for &c in &indexes[p].columns {
                columns[c].nullable = false;
            }
        }
        let clustered = primary.or_else(|| {
            indexes.iter().position(|ix| {
                ix.kind == IndexKind::Unique && ix.columns.iter().all(|&c| !columns[c].nullable)
            })
        });
        let mut ordered = Vec::with_capacity(indexes.len() + 1);
        match clustered {
            Some(c) => ordered.push(indexes[c].clone()),
            None => ordered.push(IndexDef::new(
                GEN_CLUST_INDEX,
                IndexKind::HiddenRowId,
                Vec::new(),
            )),
        }
        ordered.extend(
            indexes
                .into_iter()
                .enumerate()
                .filter(|(i, _)| Some(*i) != clustered)
                .map(|(_, ix)| ix),
        );
        let autos: Vec<usize> = (0..columns.len())
            .filter(|&i| columns[i].auto_increment)
            .collect();
        let auto_increment = match autos.as_slice() {
            [] => None,
            [c] => {
                let integer = matches!(columns[*c].ty, ColumnType::Integer { .. });
                if !integer || !ordered.iter().any(|ix| ix.columns.first() == Some(c)) {
                    return Err(EngineError::WrongAutoKey);
                }
                Some(*c)
            }
            _ => return Err(EngineError::WrongAutoKey),
        };
        Ok(TableDef {
            name: name.to_string(),
            columns,
            indexes: ordered,
            auto_increment,
        })
    }

    /// Table name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Columns in declaration order.
    pub fn columns(&self) -> &[Column] {
        &self.columns
    }

    /// Indexes, clustered first.
    pub fn indexes(&self) -> &[IndexDef] {
        &self.indexes
    }

    /// The clustered index.
    pub fn clustered(&self) -> &IndexDef {
        &self.indexes[0]
    }

    /// True when the clustered index is the hidden row id.
    pub fn has_hidden_primary(&self) -> bool {
        self.indexes[0].kind == IndexKind::HiddenRowId
    }

    /// Position of a column, by case-insensitive name.
    pub fn column_index(&self, name: &str) -> Option<usize> {
        self.columns
            .iter()
            .position(|c| c.name.eq_ignore_ascii_case(name))
    }

    /// Position of an index, by case-insensitive name.
    pub fn index_position(&self, name: &str) -> Option<usize> {
        self.indexes
            .iter()
            .position(|ix| ix.name.eq_ignore_ascii_case(name))
    }

    /// The AUTO_INCREMENT column.
    pub fn auto_increment_column(&self) -> Option<usize> {
        self.auto_increment
    }

    /// The row codec for this layout.
    pub fn row_codec(&self) -> RowCodec {
        RowCodec::new(self.columns.iter().map(|c| (c.ty, c.nullable)))
    }

    /// Builds a full row from the values given for some columns: the others get their
    /// DEFAULT (`now` for CURRENT_TIMESTAMP), NULL if nullable, NULL for the AUTO_INCREMENT
    /// column (to be generated); a NOT NULL column with none of these is an error (1364).
    pub fn fill_row(
        &self,
        given: Vec<(usize, Value)>,
        now: DateTime,
    ) -> Result<Vec<Value>, EngineError> {
        let mut row: Vec<Option<Value>> = vec![None; self.columns.len()];
        for (i, v) in given {
            row[i] = Some(v);
        }
        row.into_iter()
            .zip(&self.columns)
            .enumerate()
            .map(|(i, (v, c))| match (v, &c.default) {
                (Some(v), _) => Ok(v),
                (None, ColumnDefault::Value(d)) => Ok(d.clone()),
                (None, ColumnDefault::CurrentTimestamp) => Ok(Value::DateTime(now)),
                (None, ColumnDefault::None) if c.nullable || Some(i) == self.auto_increment => {
                    Ok(Value::Null)
                }
                (None, ColumnDefault::None) => Err(EngineError::NoDefault {
                    column: c.name.clone(),
                }),
            })
            .collect()
    }

    /// Coerces every value to its column's type and checks NOT NULL.
    pub fn coerce_row(&self, row: Vec<Value>) -> Result<Vec<Value>, EngineError> {
        row.into_iter()
            .zip(&self.columns)
            .map(|(v, c)| {
                let v = c.ty.coerce(v, &c.name)?;
                if v.is_null() && !c.nullable {
                    return Err(EngineError::NullNotAllowed {
                        column: c.name.clone(),
                    });
                }
                Ok(v)
            })
            .collect()
    }
}

/// A database: a name and its tables.
#[derive(Debug)]
pub struct Database {
    name: String,
    tables: RwLock<BTreeMap<String, Arc<Table>>>,
}

impl Database {
    /// Database name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// A table by name (case-sensitive, as MySQL with `lower_case_table_names=0`).
    pub fn table(&self, name: &str) -> Option<Arc<Table>> {
        self.tables
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .get(name)
            .cloned()
    }

    /// Table names in order.
    pub fn table_names(&self) -> Vec<String> {
        self.tables
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .keys()
            .cloned()
            .collect()
    }
}

/// All databases and tables of a server.
#[derive(Debug, Default)]
pub struct Catalog {
    databases: RwLock<BTreeMap<String, Arc<Database>>>,
    page_capacity: PageCapacity,
}

impl Catalog {
    /// An empty catalog with the default page capacity.
    pub fn new() -> Catalog {
        Catalog::default()
    }

    /// An empty catalog whose new tables use `page_capacity` (tests use small pages).
    pub fn with_page_capacity(page_capacity: PageCapacity) -> Catalog {
        Catalog {
            databases: RwLock::default(),
            page_capacity,
        }
    }

    /// CREATE DATABASE; Ok(false) if it existed and `if_not_exists`.
    pub fn create_database(&self, name: &str, if_not_exists: bool) -> Result<bool, EngineError> {
        let mut dbs = self.databases.write().unwrap_or_else(|e| e.into_inner());
        if dbs.contains_key(name) {
            return if if_not_exists {
                Ok(false)
            } else {
                Err(EngineError::DatabaseExists(name.into()))
            };
        }
        dbs.insert(
            name.to_string(),
            Arc::new(Database {
                name: name.to_string(),
                tables: RwLock::default(),
            }),
        );
        Ok(true)
    }

    /// DROP DATABASE; Ok(false) if it did not exist and `if_exists`.
    pub fn drop_database(&self, name: &str, if_exists: bool) -> Result<bool, EngineError> {
        let mut dbs = self.databases.write().unwrap_or_else(|e| e.into_inner());
        match dbs.remove(name) {
            Some(_) => Ok(true),
            None if if_exists => Ok(false),
            None => Err(EngineError::DropNoSuchDatabase(name.into())),
        }
    }

    /// A database by name.
    pub fn database(&self, name: &str) -> Result<Arc<Database>, EngineError> {
        self.databases
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .get(name)
            .cloned()
            .ok_or_else(|| EngineError::NoSuchDatabase(name.into()))
    }

    /// Database names in order.
    pub fn database_names(&self) -> Vec<String> {
        self.databases
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .keys()
            .cloned()
            .collect()
    }

    /// A table by database and name.
    pub fn table(&self, db: &str, name: &str) -> Result<Arc<Table>, EngineError> {
        self.database(db)?
            .table(name)
            .ok_or_else(|| EngineError::NoSuchTable(db.into(), name.into()))
    }

    /// CREATE TABLE. With `if_not_exists` an existing table is returned with `false`.
    pub fn create_table(
        &self,
        db: &str,
        def: TableDef,
        if_not_exists: bool,
    ) -> Result<(Arc<Table>, bool), EngineError> {
        let _ddl = self.databases.write().unwrap_or_else(|e| e.into_inner());
        let database = _ddl
            .get(db)
            .cloned()
            .ok_or_else(|| EngineError::NoSuchDatabase(db.into()))?;
        let mut tables = database.tables.write().unwrap_or_else(|e| e.into_inner());
        if let Some(t) = tables.get(def.name()) {
            return if if_not_exists {
                Ok((t.clone(), false))
            } else {
                Err(EngineError::TableExists(def.name().into()))
            };
        }
        let table = Arc::new(Table::new(def, self.page_capacity));
        tables.insert(table.name().to_string(), table.clone());
        Ok((table, true))
    }

    /// CREATE INDEX (or ALTER TABLE ADD INDEX): rebuilds the table with the new index and
    /// replaces it in the registry (see [`Table::rebuilt`]); returns the new table.
    pub fn create_index(
        &self,
        db: &str,
        table: &str,
        index: IndexDef,
    ) -> Result<Arc<Table>, EngineError> {
        self.alter_indexes(db, table, |indexes| {
            indexes.push(index);
            Ok(())
        })
    }

    /// DROP INDEX: rebuilds the table without it (1091 if there is no such index).
    pub fn drop_index(&self, db: &str, table: &str, name: &str) -> Result<Arc<Table>, EngineError> {
        self.alter_indexes(db, table, |indexes| {
            let before = indexes.len();
            indexes.retain(|ix| !ix.name.eq_ignore_ascii_case(name));
            if indexes.len() == before {
                return Err(EngineError::CantDropKey(name.to_string()));
            }
            Ok(())
        })
    }

    fn alter_indexes(
        &self,
        db: &str,
        table: &str,
        change: impl FnOnce(&mut Vec<IndexDef>) -> Result<(), EngineError>,
    ) -> Result<Arc<Table>, EngineError> {
        let ddl = self.databases.write().unwrap_or_else(|e| e.into_inner());
        let database = ddl
            .get(db)
            .cloned()
            .ok_or_else(|| EngineError::NoSuchDatabase(db.into()))?;
        let mut tables = database.tables.write().unwrap_or_else(|e| e.into_inner());
        let old = tables
            .get(table)
            .cloned()
            .ok_or_else(|| EngineError::NoSuchTable(db.into(), table.into()))?;
        let mut indexes: Vec<IndexDef> = old
            .def()
            .indexes()
            .iter()
            .filter(|ix| ix.kind != IndexKind::HiddenRowId)
            .cloned()
            .collect();
        change(&mut indexes)?;
        let def = TableDef::new(old.name(), old.def().columns().to_vec(), indexes)?;
        let new = Arc::new(old.rebuilt(def)?);
        tables.insert(table.to_string(), new.clone());
        Ok(new)
    }

    /// DROP TABLE; Ok(false) if it did not exist and `if_exists`.
    pub fn drop_table(&self, db: &str, name: &str, if_exists: bool) -> Result<bool, EngineError> {
        let _ddl = self.databases.write().unwrap_or_else(|e| e.into_inner());
        let removed = _ddl.get(db).and_then(|d| {
            d.tables
                .write()
                .unwrap_or_else(|e| e.into_inner())
                .remove(name)
        });
        match removed {
            Some(_) => Ok(true),
            None if if_exists => Ok(false),
            None => Err(EngineError::UnknownTable(format!("{db}.{name}"))),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::types::IntKind;

    fn int() -> ColumnType {
        ColumnType::Integer {
            kind: IntKind::Int,
            unsigned: false,
        }
    }

    #[test]
    fn clustered_index_choice() {
        let cols = || vec![Column::new("a", int()), Column::new("b", int()).not_null()];
        let t = TableDef::new(
            "t",
            cols(),
            vec![IndexDef::new("k", IndexKind::NonUnique, vec![0])],
        )
        .unwrap();
        assert_eq!(t.clustered().name, GEN_CLUST_INDEX);
        let t = TableDef::new(
            "t",
            cols(),
            vec![IndexDef::new("u", IndexKind::Unique, vec![1])],
        )
        .unwrap();
        assert_eq!(t.clustered().name, "u");
        let t = TableDef::new(
            "t",
            cols(),
            vec![
                IndexDef::new("k", IndexKind::NonUnique, vec![1]),
                IndexDef::new("PRIMARY", IndexKind::Primary, vec![0, 1]),
            ],
        )
        .unwrap();
        assert_eq!(t.clustered().name, "PRIMARY");
        assert!(!t.columns()[0].nullable);
        assert_eq!(t.indexes()[1].name, "k");
    }

    #[test]
    fn definition_errors() {
        let c = Column::new("a", int()).auto_increment();
        assert_eq!(
            TableDef::new("t", vec![c.clone()], vec![])
                .unwrap_err()
                .code(),
            1075
        );
        let pk = || IndexDef::new("PRIMARY", IndexKind::Primary, vec![0]);
        assert!(TableDef::new("t", vec![c.clone()], vec![pk()]).is_ok());
        assert_eq!(
            TableDef::new("t", vec![c.clone()], vec![pk(), pk()])
                .unwrap_err()
                .code(),
            1061
        );
        assert_eq!(
            TableDef::new("t", vec![c.clone(), c], vec![])
                .unwrap_err()
                .code(),
            1060
        );
    }

    #[test]
    fn registry() {
        let cat = Catalog::new();
        assert!(cat.create_database("db", false).unwrap());
        assert_eq!(cat.create_database("db", false).unwrap_err().code(), 1007);
        let def = TableDef::new("t", vec![Column::new("a", int())], vec![]).unwrap();
        let (t, created) = cat.create_table("db", def.clone(), false).unwrap();
        assert!(created);
        assert_eq!(
            cat.create_table("db", def.clone(), false)
                .unwrap_err()
                .code(),
            1050
        );
        assert!(Arc::ptr_eq(
            &cat.create_table("db", def, true).unwrap().0,
            &t
        ));
        assert_eq!(cat.table("db", "T").unwrap_err().code(), 1146);
        assert_eq!(cat.database("nope").unwrap_err().code(), 1049);
        t.insert(vec![Value::Int(1)], &Default::default()).unwrap();
        t.insert(vec![Value::Int(1)], &Default::default()).unwrap();
        let u = IndexDef::new("u", IndexKind::Unique, vec![0]);
        assert_eq!(cat.create_index("db", "t", u).unwrap_err().code(), 1062);
        let k = IndexDef::new("k", IndexKind::NonUnique, vec![0]);
        let t2 = cat.create_index("db", "t", k).unwrap();
        assert_eq!((t2.row_count(), t2.index_count()), (2, 2));
        assert_eq!(
            t2.count_range(1, crate::engine::scan::KeyRange::all(), 10),
            2
        );
        assert_eq!(cat.drop_index("db", "t", "nope").unwrap_err().code(), 1091);
        assert_eq!(cat.drop_index("db", "t", "K").unwrap().index_count(), 1);
        assert!(cat.drop_table("db", "t", false).unwrap());
        assert_eq!(cat.drop_table("db", "t", false).unwrap_err().code(), 1051);
        assert!(cat.drop_database("db", false).unwrap());
    }
}
