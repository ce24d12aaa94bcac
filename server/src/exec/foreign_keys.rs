//! FOREIGN KEY constraints InnoDB's way. Declared in CREATE TABLE and ALTER TABLE, named
//! `<table>_ibfk_<n>` when unnamed, with an index on the child's columns created when none
//! leads with them; kept in the child's definition and shown by SHOW CREATE TABLE.
//!
//! Enforced (with `foreign_key_checks` on) for keys that reference the parent's PRIMARY
//! KEY, as `row_ins_check_foreign_constraint` does: a child row written with a non-NULL key
//! locks the parent record `S,REC_NOT_GAP` (waiting for its writer) and is refused with 1452
//! when there is none; a parent row deleted, or its key changed, locks each child row that
//! references it (S to check, X to change) and is refused with 1451 (RESTRICT, NO ACTION)
//! or deletes/updates the child rows (CASCADE) or sets their key to NULL (SET NULL).

use std::sync::Arc;

use sqlparser::ast;

use crate::context::Context;
use crate::engine::lock::Strength;
use crate::engine::{ForeignKeyDef, KeyRange, ReferentialAction, Table, TableDef};
use crate::error::{engine_error, lock_error, ErrorCode, SqlError, SqlResult};
use crate::exec::sources::table_name;
use crate::exec::Planner;
use crate::introspection::describe::foreign_key_text;
use crate::trx::{Trx, WriteError};
use crate::value::Value;

fn action(a: &Option<ast::ReferentialAction>) -> SqlResult<Option<ReferentialAction>> {
    Ok(match a {
        None => None,
        Some(ast::ReferentialAction::Restrict) => Some(ReferentialAction::Restrict),
        Some(ast::ReferentialAction::NoAction) => Some(ReferentialAction::NoAction),
        Some(ast::ReferentialAction::Cascade) => Some(ReferentialAction::Cascade),
        Some(ast::ReferentialAction::SetNull) => Some(ReferentialAction::SetNull),
        Some(ast::ReferentialAction::SetDefault) => {
            return Err(SqlError::unsupported("ON DELETE/UPDATE SET DEFAULT"))
        }
    })
}

/// The foreign key a table constraint declares (None for other constraints); an unnamed
/// one takes the table's next `<table>_ibfk_<n>`.
pub fn declare(
    p: &Planner<'_>,
    table: &str,
    k: &ast::TableConstraint,
    taken: &[ForeignKeyDef],
) -> SqlResult<Option<ForeignKeyDef>> {
    let ast::TableConstraint::ForeignKey(fk) = k else {
        return Ok(None);
    };
    let name = fk
        .name
        .as_ref()
        .map(|n| n.value.clone())
        .unwrap_or_else(|| {
            let prefix = format!("{table}_ibfk_");
            let n = taken
                .iter()
                .filter_map(|f| f.name.strip_prefix(&prefix)?.parse::<u32>().ok())
                .max()
                .unwrap_or(0);
            format!("{prefix}{}", n + 1)
        });
    let (parent_db, parent_table) = table_name(p, &fk.foreign_table)?;
    Ok(Some(ForeignKeyDef {
        name,
        columns: fk.columns.iter().map(|c| c.value.clone()).collect(),
        parent_db,
        parent_table,
        parent_columns: fk
            .referred_columns
            .iter()
            .map(|c| c.value.clone())
            .collect(),
        on_delete: action(&fk.on_delete)?,
        on_update: action(&fk.on_update)?,
    }))
}

/// The name of the index MySQL creates for a foreign key whose columns no index leads with:
/// the constraint's declared name, else its first column's.
pub fn index_name(k: &ast::TableConstraint) -> Option<String> {
    match k {
        ast::TableConstraint::ForeignKey(fk) => fk
            .name
            .as_ref()
            .or(fk.index_name.as_ref())
            .map(|n| n.value.clone()),
        _ => None,
    }
}

/// A foreign key between two resolved tables, by column positions.
#[derive(Debug, Clone)]
struct Link {
    def: ForeignKeyDef,
    child_db: String,
    child: Arc<Table>,
    child_columns: Vec<usize>,
    /// The child's index that leads with the key columns.
    child_index: usize,
    parent: Arc<Table>,
    parent_columns: Vec<usize>,
}

/// The enforced foreign keys a write to one table meets: those where it is the child and
/// those where it is the parent.
#[derive(Debug, Clone, Default)]
pub struct ForeignKeys {
    as_child: Vec<Link>,
    as_parent: Vec<Link>,
}

fn positions(def: &TableDef, names: &[String]) -> Option<Vec<usize>> {
    names.iter().map(|n| def.column_index(n)).collect()
}

/// The parent table `fk` references, when it exists.
fn parent_of(st: &Context, fk: &ForeignKeyDef) -> Option<Arc<Table>> {
    st.core
        .catalog
        .engine
        .table(&fk.parent_db, &fk.parent_table)
        .ok()
}

/// The link of `fk` (child `db.child`) when both tables exist, the parent side names the
/// parent's PRIMARY KEY and an index leads with the child's columns.
fn link(st: &Context, db: &str, child: &Arc<Table>, fk: &ForeignKeyDef) -> Option<Link> {
    let parent = parent_of(st, fk)?;
    let parent_columns = positions(parent.def(), &fk.parent_columns)?;
    if parent.def().has_hidden_primary() || parent.def().clustered().columns != parent_columns {
        return None;
    }
    let child_columns = positions(child.def(), &fk.columns)?;
    let child_index = child
        .def()
        .indexes()
        .iter()
        .position(|ix| ix.columns.starts_with(&child_columns))?;
    Some(Link {
        def: fk.clone(),
        child_db: db.to_string(),
        child: Arc::clone(child),
        child_columns,
        child_index,
        parent,
        parent_columns,
    })
}

impl Link {
    /// `(`db`.`child`, CONSTRAINT ...)` for the error messages. Made only when a message
    /// needs it: every write plans its table's links, and almost none of them fails.
    fn detail(&self) -> String {
        fk_detail(&self.child_db, &self.child, &self.def)
    }
}

/// `(`db`.`child`, CONSTRAINT ...)`: how MySQL names a violated key in 1451 and 1452.
fn fk_detail(db: &str, child: &Table, fk: &ForeignKeyDef) -> String {
    format!("(`{db}`.`{}`, {})", child.name(), foreign_key_text(fk, db))
}

impl ForeignKeys {
    /// The foreign keys of writes to `table` (database `db`); the tables they involve join
    /// the plan's tables, so the plan is made again when one of them changes.
    pub fn plan(p: &mut Planner<'_>, db: &str, table: &Arc<Table>) -> ForeignKeys {
        let st = p.st;
        let as_child: Vec<Link> = table
            .def()
            .foreign_keys()
            .iter()
            .filter_map(|fk| link(st, db, table, fk))
            .collect();
        let mut as_parent = Vec::new();
        let cat = &st.core.catalog.engine;
        for child_db in cat.database_names() {
            let Ok(d) = cat.database(&child_db) else {
                continue;
            };
            for name in d.table_names() {
                let Some(child) = d.table(&name) else {
                    continue;
                };
                for fk in child.def().foreign_keys() {
                    if fk.parent_db == db && fk.parent_table == table.name() {
                        as_parent.extend(link(st, &child_db, &child, fk));
                    }
                }
            }
        }
        for l in as_child.iter().chain(&as_parent) {
            for (d, t) in [(&l.def.parent_db, &l.parent), (&l.child_db, &l.child)] {
                p.tables
                    .push((d.clone(), t.name().to_string(), Arc::clone(t)));
            }
        }
        ForeignKeys {
            as_child,
            as_parent,
        }
    }

    /// Whether `foreign_key_checks` is on in the session.
    pub fn on(st: &Context) -> bool {
        st.vars.get(st.core.ids.foreign_key_checks).as_bool()
    }

    /// Before a child row `row` is written: each non-NULL key must find its parent row, which
    /// stays locked `S,REC_NOT_GAP` (1452 when there is none).
    pub fn check_child(&self, st: &Context, row: &[Value]) -> SqlResult<()> {
        if self.as_child.is_empty() || !ForeignKeys::on(st) {
            return Ok(());
        }
        for l in &self.as_child {
            let key: Vec<Value> = l.child_columns.iter().map(|&c| row[c].clone()).collect();
            if key.iter().any(Value::is_null) {
                continue;
            }
            let found = match l.parent.encode_search_key(0, &key) {
                Ok(pk) => {
                    with_trx(st, |sys, trx, timeout| {
                        crate::trx::lock_row(sys, trx, &l.parent, &pk, Strength::S, timeout)
                    })
                    .map_err(lock_error)?;
                    l.parent.get(&pk).is_some()
                }
                Err(_) => false,
            };
            if !found {
                return Err(no_parent(&l.detail()));
            }
        }
        Ok(())
    }

    /// Whether the table is the parent of an enforced key (a delete then needs the rows it
    /// deletes, to find their children).
    pub fn is_parent(&self) -> bool {
        !self.as_parent.is_empty()
    }

    /// Before parent row `old` is deleted (`new` None) or changed to `new`: the child rows
    /// that reference its key are refused (1451), deleted or changed as each key says.
    pub fn check_parent(
        &self,
        st: &Context,
        old: &[Value],
        new: Option<&[Value]>,
    ) -> SqlResult<()> {
        if self.as_parent.is_empty() || !ForeignKeys::on(st) {
            return Ok(());
        }
        for l in &self.as_parent {
            let key: Vec<Value> = l.parent_columns.iter().map(|&c| old[c].clone()).collect();
            let new_key: Option<Vec<Value>> =
                new.map(|n| l.parent_columns.iter().map(|&c| n[c].clone()).collect());
            if new_key.as_ref() == Some(&key) || key.iter().any(Value::is_null) {
                continue;
            }
            let action = match new {
                None => l.def.on_delete,
                Some(_) => l.def.on_update,
            }
            .unwrap_or(ReferentialAction::Restrict);
            for pk in referencing_rows(l, &key) {
                let strength = match action {
                    ReferentialAction::Restrict | ReferentialAction::NoAction => Strength::S,
                    _ => Strength::X,
                };
                with_trx(st, |sys, trx, timeout| {
                    crate::trx::lock_row(sys, trx, &l.child, &pk, strength, timeout)
                })
                .map_err(lock_error)?;
                let Some(row) = l.child.get(&pk) else {
                    continue;
                };
                let still: Vec<Value> = l.child_columns.iter().map(|&c| row[c].clone()).collect();
                if still != key {
                    continue;
                }
                self.apply(st, l, action, &pk, row, new_key.as_deref())?;
            }
        }
        Ok(())
    }

    fn apply(
        &self,
        st: &Context,
        l: &Link,
        action: ReferentialAction,
        pk: &[u8],
        mut row: Vec<Value>,
        new_key: Option<&[Value]>,
    ) -> SqlResult<()> {
        match (action, new_key) {
            (ReferentialAction::Restrict | ReferentialAction::NoAction, _) => Err(SqlError::new(
                ErrorCode::RowIsReferenced,
                format!(
                    "Cannot delete or update a parent row: a foreign key constraint fails {}",
                    l.detail()
                ),
            )),
            (ReferentialAction::Cascade, None) => with_trx(st, |sys, trx, _| {
                crate::trx::delete_row(sys, trx, &l.child, pk);
                Ok(())
            })
            .map_err(lock_error),
            (ReferentialAction::Cascade, Some(k)) | (ReferentialAction::SetNull, Some(k)) => {
                for (i, &c) in l.child_columns.iter().enumerate() {
                    row[c] = if action == ReferentialAction::SetNull {
                        Value::Null
                    } else {
                        k[i].clone()
                    };
                }
                update_child(st, l, pk, row)
            }
            (ReferentialAction::SetNull, None) => {
                for &c in &l.child_columns {
                    row[c] = Value::Null;
                }
                update_child(st, l, pk, row)
            }
        }
    }
}

fn no_parent(detail: &str) -> SqlError {
    SqlError::new(
        ErrorCode::NoReferencedRow,
        format!("Cannot add or update a child row: a foreign key constraint fails {detail}"),
    )
}

/// The parent tables of the foreign keys named in `added` among `def`'s, for
/// [`verify_rows`] (looked up before the rebuild, which holds the catalog).
pub fn added_parents(st: &Context, def: &TableDef, added: &[String]) -> Vec<(String, Arc<Table>)> {
    def.foreign_keys()
        .iter()
        .filter(|fk| added.contains(&fk.name))
        .filter_map(|fk| Some((fk.name.clone(), parent_of(st, fk)?)))
        .collect()
}

/// 1452 for the first row of `child` (database `db`) that an added foreign key (with its
/// parent from [`added_parents`]) finds no parent row for: ALTER TABLE ADD FOREIGN KEY
/// checks the rows the table has.
pub fn verify_rows(
    st: &Context,
    db: &str,
    child: &Table,
    parents: &[(String, Arc<Table>)],
) -> SqlResult<()> {
    if !ForeignKeys::on(st) {
        return Ok(());
    }
    for (name, parent) in parents {
        let Some(fk) = child.def().foreign_keys().iter().find(|f| &f.name == name) else {
            continue;
        };
        let (Some(cols), Some(parent_cols)) = (
            positions(child.def(), &fk.columns),
            positions(parent.def(), &fk.parent_columns),
        ) else {
            continue;
        };
        if parent.def().has_hidden_primary() || parent.def().clustered().columns != parent_cols {
            continue;
        }
        for item in child.scan(0, KeyRange::all(), crate::engine::Direction::Forward) {
            let Some(row) = item.row else { continue };
            let key: Vec<Value> = cols.iter().map(|&c| row[c].clone()).collect();
            if key.iter().any(Value::is_null) {
                continue;
            }
            let found = parent
                .encode_search_key(0, &key)
                .is_ok_and(|pk| parent.get(&pk).is_some());
            if !found {
                return Err(no_parent(&fk_detail(db, child, fk)));
            }
        }
    }
    Ok(())
}

/// 3730 when DROP TABLE would drop a parent that a table not being dropped references
/// (with `foreign_key_checks` on).
pub fn check_drop(st: &Context, dropping: &[(String, String)]) -> SqlResult<()> {
    if !ForeignKeys::on(st) {
        return Ok(());
    }
    let mut refused = Ok(());
    crate::introspection::vtables::each_table(&st.core.catalog.engine, |db, t| {
        let dropped = |d: &str, n: &str| dropping.iter().any(|(x, y)| x == d && y == n);
        if refused.is_err() || dropped(db, t.name()) {
            return;
        }
        if let Some(fk) = t
            .def()
            .foreign_keys()
            .iter()
            .find(|fk| dropped(&fk.parent_db, &fk.parent_table))
        {
            refused = Err(SqlError::new(
                ErrorCode::FkCannotDropParent,
                format!(
                    "Cannot drop table '{}' referenced by a foreign key constraint '{}' on \
                     table '{}'.",
                    fk.parent_table,
                    fk.name,
                    t.name()
                ),
            ));
        }
    });
    refused
}

fn update_child(st: &Context, l: &Link, pk: &[u8], row: Vec<Value>) -> SqlResult<()> {
    let mut t = st.trx.borrow_mut();
    let trx = t.as_mut().expect("a table statement runs in a transaction");
    let timeout = st.lock_wait_timeout();
    match crate::trx::update_row(&st.core.trx, trx, &l.child, pk, row, timeout) {
        Ok(_) => Ok(()),
        Err(WriteError::Engine(e)) => Err(engine_error(&e, 1)),
        Err(WriteError::Lock(e)) => Err(lock_error(e)),
    }
}

/// The clustered keys of the child rows whose key columns equal `key` (latest versions).
fn referencing_rows(l: &Link, key: &[Value]) -> Vec<Vec<u8>> {
    let Ok(prefix) = l.child.encode_search_key(l.child_index, key) else {
        return Vec::new();
    };
    l.child
        .scan(
            l.child_index,
            KeyRange::prefix(prefix),
            crate::engine::Direction::Forward,
        )
        .map(|item| item.key[item.pk_offset..].to_vec())
        .collect()
}

fn with_trx<T>(
    st: &Context,
    f: impl FnOnce(
        &crate::trx::TrxSys,
        &mut Trx,
        std::time::Duration,
    ) -> Result<T, crate::engine::lock::LockError>,
) -> Result<T, crate::engine::lock::LockError> {
    let mut t = st.trx.borrow_mut();
    let trx = t.as_mut().expect("a table statement runs in a transaction");
    f(&st.core.trx, trx, st.lock_wait_timeout())
}
