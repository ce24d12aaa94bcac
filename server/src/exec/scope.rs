//! Name resolution over the sources of a statement: each source (table, derived table,
//! virtual table) owns a contiguous slice of the combined row, and a column reference
//! resolves to its index there. The clause being bound is kept for MySQL's 1054 message.

use std::cell::Cell;

use protocol::ColumnDefinition;

use crate::engine::ColumnType;
use crate::error::{ErrorCode, SqlError, SqlResult};
use crate::exec::errors::unknown_column;
use crate::sql::expr::{BoundExpr, Resolver};
use crate::vars::Registry;

/// One column a source contributes to the combined row.
#[derive(Debug, Clone)]
pub struct SourceColumn {
    /// Name (matched case-insensitively).
    pub name: String,
    /// The result metadata MySQL sends when the column is selected as is.
    pub def: ColumnDefinition,
    /// The engine type, for base tables.
    pub ty: Option<ColumnType>,
    /// Nullable.
    pub nullable: bool,
}

/// A source as name resolution sees it.
#[derive(Debug, Clone)]
pub struct ScopeEntry {
    /// Alias (or table name) used to qualify its columns.
    pub alias: String,
    /// Database of a base or virtual table ("" for derived tables).
    pub db: String,
    /// Its columns, in order.
    pub columns: Vec<SourceColumn>,
    /// Index of its first column in the combined row.
    pub offset: usize,
}

/// Every source of one SELECT level (or the single table of UPDATE/DELETE/INSERT).
#[derive(Debug)]
pub struct Scope<'r> {
    /// Sources in FROM order.
    pub entries: Vec<ScopeEntry>,
    registry: &'r Registry,
    /// The clause being bound (`field list`, `where clause`, `order clause`...).
    pub clause: Cell<&'static str>,
    /// Columns beyond the sources (INSERT ... ON DUPLICATE KEY UPDATE's `VALUES(col)`):
    /// names of the form `\0new` qualify them.
    pub extra_offset: Option<usize>,
    /// Combined-row indexes of the columns a USING or NATURAL join merged into the same-named
    /// column before it: unqualified names and `SELECT *` do not see them.
    pub merged: Vec<usize>,
    /// The order `SELECT *` lists the columns in (every source's columns in FROM order
    /// unless joins with USING or NATURAL reordered them).
    pub star: Option<Vec<usize>>,
}

impl<'r> Scope<'r> {
    /// A scope over no sources.
    pub fn new(registry: &'r Registry) -> Scope<'r> {
        Scope {
            entries: Vec::new(),
            registry,
            clause: Cell::new("field list"),
            extra_offset: None,
            merged: Vec::new(),
            star: None,
        }
    }

    /// Adds a source at the end of the combined row; returns its offset.
    pub fn push(&mut self, alias: &str, db: &str, columns: Vec<SourceColumn>) -> SqlResult<usize> {
        if self.entries.iter().any(|e| e.alias == alias) {
            return Err(SqlError::new(
                ErrorCode::NonUniqTable,
                format!("Not unique table/alias: '{alias}'"),
            ));
        }
        let offset = self.width();
        self.entries.push(ScopeEntry {
            alias: alias.to_string(),
            db: db.to_string(),
            columns,
            offset,
        });
        Ok(offset)
    }

    /// Width of the combined row.
    pub fn width(&self) -> usize {
        self.entries
            .last()
            .map_or(0, |e| e.offset + e.columns.len())
    }

    /// The source and column of a combined-row index.
    pub fn locate(&self, index: usize) -> Option<(usize, &SourceColumn)> {
        self.entries.iter().enumerate().find_map(|(s, e)| {
            (index >= e.offset && index < e.offset + e.columns.len())
                .then(|| (s, &e.columns[index - e.offset]))
        })
    }

    /// The columns `SELECT *` lists, in order.
    pub fn star_order(&self) -> Vec<usize> {
        self.star
            .clone()
            .unwrap_or_else(|| (0..self.width()).collect())
    }

    /// Sets the clause named by unknown-column errors.
    pub fn in_clause(&self, clause: &'static str) {
        self.clause.set(clause);
    }
}

impl Resolver for Scope<'_> {
    fn column(&self, qualifier: Option<&str>, name: &str) -> SqlResult<usize> {
        if qualifier == Some("\0new") {
            let first = self.entries.first();
            if let (Some(off), Some(e)) = (self.extra_offset, first) {
                if let Some(i) = e
                    .columns
                    .iter()
                    .position(|c| c.name.eq_ignore_ascii_case(name))
                {
                    return Ok(off + i);
                }
            }
            return Err(unknown_column(name, self.clause.get()));
        }
        let mut found = None;
        for e in &self.entries {
            if qualifier.is_some_and(|q| q != e.alias) {
                continue;
            }
            if let Some(i) = e
                .columns
                .iter()
                .position(|c| c.name.eq_ignore_ascii_case(name))
            {
                if qualifier.is_none() && self.merged.contains(&(e.offset + i)) {
                    continue;
                }
                if found.is_some() {
                    return Err(SqlError::new(
                        ErrorCode::NonUniqField,
                        format!("Column '{name}' in {} is ambiguous", self.clause.get()),
                    ));
                }
                found = Some(e.offset + i);
            }
        }
        found.ok_or_else(|| {
            let full = match qualifier {
                Some(q) => format!("{q}.{name}"),
                None => name.to_string(),
            };
            unknown_column(&full, self.clause.get())
        })
    }

    fn registry(&self) -> &Registry {
        self.registry
    }
}

/// Calls `f` with every column index an expression reads.
pub fn visit_columns(e: &BoundExpr, f: &mut dyn FnMut(usize)) {
    match e {
        BoundExpr::Column(i) => f(*i),
        BoundExpr::Literal(_)
        | BoundExpr::Param(_)
        | BoundExpr::SysVar(..)
        | BoundExpr::UserVar(_) => {}
        BoundExpr::Binary(_, a, b) => {
            visit_columns(a, f);
            visit_columns(b, f);
        }
        BoundExpr::Neg(a) | BoundExpr::Not(a) | BoundExpr::BitNot(a) => visit_columns(a, f),
        BoundExpr::IsNull(a, _) | BoundExpr::IsBool(a, ..) | BoundExpr::Cast(a, _) => {
            visit_columns(a, f)
        }
        BoundExpr::Between(a, b, c, _) => {
            visit_columns(a, f);
            visit_columns(b, f);
            visit_columns(c, f);
        }
        BoundExpr::InList(a, list, _) => {
            visit_columns(a, f);
            list.iter().for_each(|x| visit_columns(x, f));
        }
        BoundExpr::Like(a, b, ..) => {
            visit_columns(a, f);
            visit_columns(b, f);
        }
        BoundExpr::Case(op, arms, other) => {
            if let Some(o) = op {
                visit_columns(o, f);
            }
            for (w, t) in arms {
                visit_columns(w, f);
                visit_columns(t, f);
            }
            if let Some(o) = other {
                visit_columns(o, f);
            }
        }
        BoundExpr::Call(_, args) => args.iter().for_each(|x| visit_columns(x, f)),
    }
}

/// The highest column index an expression reads (None for a constant).
pub fn max_column(e: &BoundExpr) -> Option<usize> {
    let mut m = None;
    visit_columns(e, &mut |i| m = Some(m.map_or(i, |x: usize| x.max(i))));
    m
}

/// The lowest column index an expression reads.
pub fn min_column(e: &BoundExpr) -> Option<usize> {
    let mut m = None;
    visit_columns(e, &mut |i| m = Some(m.map_or(i, |x: usize| x.min(i))));
    m
}

/// Splits an expression into its top-level AND conjuncts.
pub fn conjuncts(e: BoundExpr, out: &mut Vec<BoundExpr>) {
    match e {
        BoundExpr::Binary(crate::sql::expr::BinOp::And, a, b) => {
            conjuncts(*a, out);
            conjuncts(*b, out);
        }
        other => out.push(other),
    }
}

/// Joins conjuncts back with AND (None when empty).
pub fn and_all(mut parts: Vec<BoundExpr>) -> Option<BoundExpr> {
    let first = if parts.is_empty() {
        return None;
    } else {
        parts.remove(0)
    };
    Some(parts.into_iter().fold(first, |acc, p| {
        BoundExpr::Binary(crate::sql::expr::BinOp::And, Box::new(acc), Box::new(p))
    }))
}
