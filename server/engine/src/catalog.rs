//! The registry of databases and tables. Lookups take shared locks only, so readers never
//! block each other; DDL takes the registry's write lock.

use std::collections::BTreeMap;
use std::sync::{Arc, RwLock};

pub use crate::schema::{
    CheckDef, Column, ColumnDefault, ForeignKeyDef, IndexDef, IndexKind, ReferentialAction,
    TableDef, GEN_CLUST_INDEX,
};

use crate::error::EngineError;
use crate::index::PageCapacity;
use crate::table::Table;
use crate::value::DateTime;

/// What ALTER TABLE makes of a table (see [`Catalog::alter_table`]).
#[derive(Debug, Clone)]
pub struct TableRebuild {
    /// The new definition (its name may differ: RENAME TO).
    pub def: TableDef,
    /// For each new column, the old column its values come from (None: added).
    pub sources: Vec<Option<usize>>,
    /// The time an added `DEFAULT CURRENT_TIMESTAMP` column gets.
    pub now: DateTime,
    /// See [`Table::rebuilt_after`].
    pub rebuilt_by: u64,
}

/// A database: a name, its default collation and its tables.
#[derive(Debug)]
pub struct Database {
    name: String,
    collation: Option<String>,
    tables: RwLock<BTreeMap<String, Arc<Table>>>,
}

impl Database {
    /// Database name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The default collation CREATE DATABASE gave it (None: the server's).
    pub fn collation(&self) -> Option<&str> {
        self.collation.as_deref()
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

    /// CREATE DATABASE with its default collation; Ok(false) if it existed and
    /// `if_not_exists`.
    pub fn create_database(
        &self,
        name: &str,
        collation: Option<&str>,
        if_not_exists: bool,
    ) -> Result<bool, EngineError> {
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
                collation: collation.map(str::to_string),
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
    /// replaces it in the registry (see [`Table::rebuilt`], which `rebuilt_by` is for);
    /// returns the new table.
    pub fn create_index(
        &self,
        db: &str,
        table: &str,
        index: IndexDef,
        rebuilt_by: u64,
    ) -> Result<Arc<Table>, EngineError> {
        self.alter_indexes(db, table, rebuilt_by, |indexes| {
            indexes.push(index);
            Ok(())
        })
    }

    /// DROP INDEX: rebuilds the table without it (1091 if there is no such index).
    pub fn drop_index(
        &self,
        db: &str,
        table: &str,
        name: &str,
        rebuilt_by: u64,
    ) -> Result<Arc<Table>, EngineError> {
        self.alter_indexes(db, table, rebuilt_by, |indexes| {
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
        rebuilt_by: u64,
        change: impl FnOnce(&mut Vec<IndexDef>) -> Result<(), EngineError>,
    ) -> Result<Arc<Table>, EngineError> {
        self.replace_table(db, table, |old| {
            let mut indexes: Vec<IndexDef> = old
                .def()
                .indexes()
                .iter()
                .filter(|ix| ix.kind != IndexKind::HiddenRowId)
                .cloned()
                .collect();
            change(&mut indexes)?;
            let def = TableDef::new(old.name(), old.def().columns().to_vec(), indexes)?
                .with_checks(old.def().checks().to_vec())
                .with_foreign_keys(old.def().foreign_keys().to_vec())
                .with_collation(old.def().collation().map(str::to_string));
            old.rebuilt(def, rebuilt_by)
        })
    }

    /// ALTER TABLE: rebuilds the table under `rebuild.def` (see [`Table::rebuilt_mapped`]),
    /// lets `validate` refuse the new table (a CHECK constraint its rows violate), and puts
    /// it in the registry under the definition's name, which may be a new one (`RENAME TO`;
    /// 1050 if that name is taken).
    pub fn alter_table<E: From<EngineError>>(
        &self,
        db: &str,
        table: &str,
        rebuild: TableRebuild,
        validate: impl FnOnce(&Table) -> Result<(), E>,
    ) -> Result<Arc<Table>, E> {
        self.replace_table(db, table, |old| {
            let new = old.rebuilt_mapped(
                rebuild.def,
                &rebuild.sources,
                rebuild.now,
                rebuild.rebuilt_by,
            )?;
            validate(&new)?;
            Ok(new)
        })
    }

    /// Replaces table `db.table` by what `rebuild` makes of it, under the registry's write
    /// lock, keyed by the new table's name.
    fn replace_table<E: From<EngineError>>(
        &self,
        db: &str,
        table: &str,
        rebuild: impl FnOnce(&Table) -> Result<Table, E>,
    ) -> Result<Arc<Table>, E> {
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
        let new = Arc::new(rebuild(&old)?);
        if new.name() != table {
            if tables.contains_key(new.name()) {
                return Err(EngineError::TableExists(new.name().into()).into());
            }
            tables.remove(table);
        }
        tables.insert(new.name().to_string(), new.clone());
        old.retire();
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
            Some(t) => {
                t.retire();
                Ok(true)
            }
            None if if_exists => Ok(false),
            None => Err(EngineError::UnknownTable(format!("{db}.{name}"))),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::types::{ColumnType, IntKind};
    use crate::value::Value;

    fn int() -> ColumnType {
        ColumnType::Integer {
            kind: IntKind::Int,
            unsigned: false,
        }
    }

    #[test]
    fn registry() {
        let cat = Catalog::new();
        assert!(cat.create_database("db", None, false).unwrap());
        assert_eq!(
            cat.create_database("db", None, false)
                .unwrap_err()
                .code()
                .code(),
            1007
        );
        let def = TableDef::new("t", vec![Column::new("a", int())], vec![]).unwrap();
        let (t, created) = cat.create_table("db", def.clone(), false).unwrap();
        assert!(created);
        assert_eq!(
            cat.create_table("db", def.clone(), false)
                .unwrap_err()
                .code()
                .code(),
            1050
        );
        assert!(Arc::ptr_eq(
            &cat.create_table("db", def, true).unwrap().0,
            &t
        ));
        assert_eq!(cat.table("db", "T").unwrap_err().code().code(), 1146);
        assert_eq!(cat.database("nope").unwrap_err().code().code(), 1049);
        t.insert(vec![Value::Int(1)], &Default::default()).unwrap();
        t.insert(vec![Value::Int(1)], &Default::default()).unwrap();
        let u = IndexDef::new("u", IndexKind::Unique, vec![0]);
        assert_eq!(
            cat.create_index("db", "t", u, 0).unwrap_err().code().code(),
            1062
        );
        let k = IndexDef::new("k", IndexKind::NonUnique, vec![0]);
        let t2 = cat.create_index("db", "t", k, 0).unwrap();
        assert_eq!((t2.row_count(), t2.index_count()), (2, 2));
        assert_eq!(t2.count_range(1, crate::scan::KeyRange::all(), 10), 2);
        assert_eq!(
            cat.drop_index("db", "t", "nope", 0)
                .unwrap_err()
                .code()
                .code(),
            1091
        );
        assert_eq!(cat.drop_index("db", "t", "K", 0).unwrap().index_count(), 1);
        assert!(cat.drop_table("db", "t", false).unwrap());
        assert_eq!(
            cat.drop_table("db", "t", false).unwrap_err().code().code(),
            1051
        );
        assert!(cat.drop_database("db", false).unwrap());
    }
}
