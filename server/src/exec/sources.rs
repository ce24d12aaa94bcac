//! Helpers around the sources of a statement: naming tables, the columns a base or virtual
//! table contributes, the indexes its hints allow, which columns each source must fetch,
//! and the metadata of aggregate results.

use protocol::{ColumnDefinition, ColumnFlags, ColumnType as Wire};
use sqlparser::ast;

use std::sync::Arc;

use crate::context::Context;
use crate::engine::Table;
use crate::error::{ErrorCode, SqlError, SqlResult};
use crate::exec::aggregate::{AggFunc, AggSlot};
use crate::exec::coltypes::{self, KeyFlags, BINARY, UTF8MB4};
use crate::exec::errors::no_database;
use crate::exec::query::{Query, SourceKind};
use crate::exec::scope::{visit_columns, Scope, SourceColumn};
use crate::exec::Planner;
use crate::introspection::vtables::{VType, VirtualTable};
use crate::sql::expr::BoundExpr;

/// Splits `db.table` / `table` with the session's database.
pub fn table_name(p: &Planner<'_>, n: &ast::ObjectName) -> SqlResult<(String, String)> {
    let parts: Vec<String> = n.0.iter().map(crate::sql::names::part).collect();
    match parts.as_slice() {
        [t] => Ok((p.db.clone().ok_or_else(no_database)?, t.clone())),
        [d, t] => Ok((d.clone(), t.clone())),
        _ => Err(SqlError::parse(&n.to_string())),
    }
}

/// Source column lists a connection keeps; past this many, the list starts again empty.
const SHARED_COLUMN_LISTS: usize = 32;

/// A connection's source column lists of base tables: each is made once per table object
/// (a rebuilt table is a new object with a new id), database and alias, and shared by the
/// scopes of the connection's later statements.
#[derive(Debug, Default)]
struct SharedColumns {
    lists: std::cell::RefCell<Vec<SharedList>>,
}

/// One shared list and what it was made for.
#[derive(Debug)]
struct SharedList {
    /// The table object's id.
    table: u64,
    db: String,
    alias: String,
    columns: Arc<[SourceColumn]>,
}

/// The columns base table `t` contributes to a scope under `alias` in database `db`, shared
/// with the connection's earlier statements that read it the same way ([`build_table_columns`]
/// makes them).
pub fn table_columns(st: &Context, t: &Table, db: &str, alias: &str) -> Arc<[SourceColumn]> {
    let shared = st
        .exec_state
        .get_or_init(|| Box::new(SharedColumns::default()))
        .downcast_ref::<SharedColumns>()
        .expect("the connection's executor state is its shared source columns");
    let mut lists = shared.lists.borrow_mut();
    if let Some(l) = lists
        .iter()
        .find(|l| l.table == t.id() && l.db == db && l.alias == alias)
    {
        return Arc::clone(&l.columns);
    }
    if lists.len() >= SHARED_COLUMN_LISTS {
        lists.clear();
    }
    let cols: Arc<[SourceColumn]> = build_table_columns(t, db, alias).into();
    lists.push(SharedList {
        table: t.id(),
        db: db.to_string(),
        alias: alias.to_string(),
        columns: Arc::clone(&cols),
    });
    cols
}

/// The columns a base table contributes to a scope, made afresh.
pub fn build_table_columns(t: &Table, db: &str, alias: &str) -> Vec<SourceColumn> {
    let def = t.def();
    def.columns()
        .iter()
        .enumerate()
        .map(|(i, c)| {
            let mut keys = KeyFlags::default();
            for ix in def.indexes() {
                match ix.kind {
                    crate::engine::IndexKind::Primary if ix.columns.contains(&i) => {
                        keys.primary = true
                    }
                    crate::engine::IndexKind::Unique if ix.columns.first() == Some(&i) => {
                        keys.unique = ix.columns.len() == 1;
                        keys.multiple |= ix.columns.len() > 1;
                    }
                    crate::engine::IndexKind::NonUnique if ix.columns.first() == Some(&i) => {
                        keys.multiple = true
                    }
                    _ => {}
                }
            }
            SourceColumn {
                name: c.name.clone(),
                def: coltypes::definition(db, alias, t.name(), &c.name, &c.name, c, keys),
                ty: Some(c.ty),
                nullable: c.nullable,
            }
        })
        .collect()
}

/// The columns virtual table `v` contributes under `alias` in database `db`, with their
/// result metadata (a virtual table has no keys, so no key flags).
pub fn virtual_columns(v: &dyn VirtualTable, db: &str, alias: &str) -> Vec<SourceColumn> {
    v.columns()
        .iter()
        .map(|(name, ty)| {
            let mut d = match ty {
                VType::Text => {
                    let mut d = ColumnDefinition::new(name, Wire::VarString);
                    d.charset = UTF8MB4;
                    d.column_length = crate::introspection::vtables::TEXT_CHARS * 4;
                    d
                }
                VType::UInt => {
                    let mut d = ColumnDefinition::new(name, Wire::LongLong);
                    d.charset = BINARY;
                    d.column_length = 21;
                    d.flags = ColumnFlags::UNSIGNED | ColumnFlags::NUM;
                    d
                }
            };
            d.schema = db.to_string();
            d.table = alias.to_string();
            d.org_table = v.name().to_string();
            d.org_name = name.to_string();
            SourceColumn {
                name: name.to_string(),
                def: d,
                ty: None,
                nullable: true,
            }
        })
        .collect()
}

/// Static metadata of an aggregate's result.
pub fn agg_def(name: &str, slot: &AggSlot, scope: &Scope<'_>) -> Option<ColumnDefinition> {
    let arg_def = || match &slot.arg {
        Some(BoundExpr::Column(i)) => scope.locate(*i).map(|(_, c)| c.def.clone()),
        _ => None,
    };
    let numeric = |ty: Wire, len: u32, decimals: u8, not_null: bool| {
        let mut d = ColumnDefinition::new(name, ty);
        d.charset = BINARY;
        d.column_length = len;
        d.decimals = decimals;
        d.flags = ColumnFlags::BINARY | ColumnFlags::NUM;
        if not_null {
            d.flags |= ColumnFlags::NOT_NULL;
        }
        d
    };
    let int_arg = matches!(&slot.arg, Some(BoundExpr::Column(i))
        if scope.locate(*i).is_some_and(|(_, c)| matches!(c.ty, Some(crate::engine::ColumnType::Integer { .. }))));
    match slot.func {
        AggFunc::Count => Some(numeric(Wire::LongLong, 21, 0, true)),
        AggFunc::Sum if int_arg => Some(numeric(Wire::NewDecimal, 33, 0, false)),
        AggFunc::Avg if int_arg => Some(numeric(Wire::NewDecimal, 14, 4, false)),
        AggFunc::Min | AggFunc::Max | AggFunc::First => arg_def().map(|mut d| {
            d.name = name.to_string();
            if slot.func != AggFunc::First {
                d.flags.remove(
                    ColumnFlags::NOT_NULL | ColumnFlags::PRI_KEY | ColumnFlags::AUTO_INCREMENT,
                );
                d.org_name.clear();
                d.org_table.clear();
                d.table.clear();
            }
            d
        }),
        _ => None,
    }
}

/// The indexes of `t` the statement's `FORCE`/`USE`/`IGNORE INDEX` hints leave to the planner,
/// by position; an unknown index name is MySQL's error 1176 (`ER_KEY_DOES_NOT_EXITS`).
pub fn allowed_indexes(t: &Table, hints: &[ast::TableIndexHints]) -> SqlResult<Vec<usize>> {
    let def = t.def();
    let mut allowed: Vec<usize> = (0..def.indexes().len()).collect();
    for h in hints {
        let mut named = Vec::new();
        for n in &h.index_names {
            match def.index_position(&n.value) {
                Some(i) => named.push(i),
                None => {
                    return Err(SqlError::new(
                        ErrorCode::KeyDoesNotExist,
                        format!("Key '{}' doesn't exist in table '{}'", n.value, t.name()),
                    ))
                }
            }
        }
        match h.hint_type {
            ast::TableIndexHintType::Use | ast::TableIndexHintType::Force => {
                if !named.is_empty() {
                    allowed.retain(|i| named.contains(i));
                }
            }
            ast::TableIndexHintType::Ignore => allowed.retain(|i| !named.contains(i)),
        }
    }
    if allowed.is_empty() {
        allowed.push(0);
    }
    Ok(allowed)
}

/// Decides which ORDER BY keys reuse a select item and which items may be moved out of the
/// combined row (non-aggregated queries only).
pub fn plan_moves(q: &mut Query) {
    q.order_items = q
        .order
        .iter()
        .map(|(e, _)| q.items.iter().position(|i| i == e))
        .collect();
    q.movable = vec![false; q.items.len()];
    let Some(last) = q.sources.last() else { return };
    if q.agg.is_some() || q.having.is_some() {
        return;
    }
    let inner = last.offset..last.offset + last.width;
    let mut reads = vec![0usize; q.width];
    let mut count = |e: &BoundExpr| {
        visit_columns(e, &mut |i| {
            if i < reads.len() {
                reads[i] += 1;
            }
        })
    };
    q.items.iter().for_each(&mut count);
    for (k, (e, _)) in q.order.iter().enumerate() {
        if q.order_items[k].is_none() {
            count(e);
        }
    }
    for (m, item) in q.movable.iter_mut().zip(&q.items) {
        if let BoundExpr::Column(i) = item {
            *m = inner.contains(i) && reads[*i] == 1;
        }
    }
}

/// Fills each source's `needed` columns from every expression that reads the combined row.
pub fn compute_needed(q: &mut Query) {
    let mut used = vec![false; q.width];
    let mut mark = |e: &BoundExpr| {
        visit_columns(e, &mut |i| {
            if i < used.len() {
                used[i] = true;
            }
        })
    };
    match &q.agg {
        Some(a) => {
            a.group_by.iter().for_each(&mut mark);
            a.slots
                .iter()
                .filter_map(|s| s.arg.as_ref())
                .for_each(&mut mark);
        }
        None => {
            q.items.iter().for_each(&mut mark);
            q.order.iter().for_each(|(e, _)| mark(e));
            if let Some(h) = &q.having {
                mark(h);
            }
        }
    }
    if let Some(f) = &q.post_filter {
        mark(f);
    }
    for s in &q.sources {
        if let Some(f) = &s.full_filter {
            mark(f);
        }
        if let SourceKind::Base { access, .. } = &s.kind {
            for spec in &access.specs {
                spec.eq.iter().for_each(&mut mark);
                spec.lower.iter().for_each(|(e, _)| mark(e));
                spec.upper.iter().for_each(|(e, _)| mark(e));
            }
        }
    }
    for s in &mut q.sources {
        s.needed = (0..s.width).filter(|&i| used[s.offset + i]).collect();
    }
}
