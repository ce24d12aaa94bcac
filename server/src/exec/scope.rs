//! Name resolution over the sources of a statement: each source (table, derived table,
//! virtual table) owns a contiguous slice of the combined row, and a column reference
//! resolves to its index there. The clause being bound is kept for MySQL's 1054 message.

use std::cell::{Cell, RefCell};
use std::collections::HashMap;
use std::sync::Arc;

use protocol::ColumnDefinition;

use crate::engine::ColumnType;
use crate::error::{ErrorCode, SqlError, SqlResult};
use crate::exec::errors::unknown_column;
use crate::sql::expr::{BoundExpr, Resolver, SubqueryRef};
use crate::value::Value;
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
    /// Its columns, in order (a base table's are shared, see
    /// [`crate::exec::sources::table_columns`]).
    pub columns: Arc<[SourceColumn]>,
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
    /// The values of each `IN (SELECT ...)` subquery, by the address of its AST (see
    /// `exec::subquery`).
    pub subqueries: HashMap<usize, Vec<Value>>,
    /// Columns beyond the sources (INSERT ... ON DUPLICATE KEY UPDATE's `VALUES(col)`):
    /// names of the form `\0new` qualify them.
    pub extra_offset: Option<usize>,
    /// Combined-row indexes of the columns a USING or NATURAL join merged into the same-named
    /// column before it: unqualified names and `SELECT *` do not see them.
    pub merged: Vec<usize>,
    /// The order `SELECT *` lists the columns in (every source's columns in FROM order
    /// unless joins with USING or NATURAL reordered them).
    pub star: Option<Vec<usize>>,
    /// How many leading entries are the sources of enclosing SELECTs (a correlated
    /// subquery's row starts with theirs); names resolve in this SELECT's own sources first.
    pub outer_entries: usize,
    /// Columns of enclosing SELECTs that names resolved to.
    pub outer_used: RefCell<Vec<usize>>,
    /// The scalar subqueries planned for this SELECT, by the address of their AST.
    pub scalars: HashMap<usize, SubqueryRef>,
}

impl<'r> Scope<'r> {
    /// A scope over no sources.
    pub fn new(registry: &'r Registry) -> Scope<'r> {
        Scope {
            entries: Vec::new(),
            registry,
            clause: Cell::new("field list"),
            subqueries: HashMap::new(),
            extra_offset: None,
            merged: Vec::new(),
            star: None,
            outer_entries: 0,
            outer_used: RefCell::new(Vec::new()),
            scalars: HashMap::new(),
        }
    }

    /// A scope whose row starts with the sources of enclosing SELECTs (`outer`).
    pub fn nested(registry: &'r Registry, outer: Vec<ScopeEntry>) -> Scope<'r> {
        let mut s = Scope::new(registry);
        s.outer_entries = outer.len();
        s.entries = outer;
        s
    }

    /// This SELECT's own sources (after those of enclosing SELECTs).
    pub fn own(&self) -> &[ScopeEntry] {
        &self.entries[self.outer_entries..]
    }

    /// The first combined-row column of this SELECT's own sources.
    pub fn own_offset(&self) -> usize {
        self.own().first().map_or(self.width(), |e| e.offset)
    }

    /// Adds a source at the end of the combined row; returns its offset.
    pub fn push(
        &mut self,
        alias: &str,
        db: &str,
        columns: impl Into<Arc<[SourceColumn]>>,
    ) -> SqlResult<usize> {
        // An enclosing SELECT's source of the same name is hidden, not a clash.
        if self.own().iter().any(|e| e.alias == alias) {
            return Err(SqlError::new(
                ErrorCode::NonUniqTable,
                format!("Not unique table/alias: '{alias}'"),
            ));
        }
        let offset = self.width();
        self.entries.push(ScopeEntry {
            alias: alias.to_string(),
            db: db.to_string(),
            columns: columns.into(),
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
            .unwrap_or_else(|| (self.own_offset()..self.width()).collect())
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
        if let Some(i) = self.find(self.own(), qualifier, name)? {
            return Ok(i);
        }
        if let Some(i) = self.find(&self.entries[..self.outer_entries], qualifier, name)? {
            self.outer_used.borrow_mut().push(i);
            return Ok(i);
        }
        let full = match qualifier {
            Some(q) => format!("{q}.{name}"),
            None => name.to_string(),
        };
        Err(unknown_column(&full, self.clause.get()))
    }

    fn scalar_subquery(&self, q: &sqlparser::ast::Query) -> SqlResult<BoundExpr> {
        self.scalars
            .get(&crate::exec::subquery::key(q))
            .map(|r| BoundExpr::Subquery(r.clone()))
            .ok_or_else(|| SqlError::unsupported("subqueries here"))
    }

    fn registry(&self) -> &Registry {
        self.registry
    }

    fn column_type(&self, index: usize) -> Option<ColumnType> {
        self.locate(index).and_then(|(_, c)| c.ty)
    }

    fn in_subquery(&self, q: &sqlparser::ast::Query) -> SqlResult<Vec<Value>> {
        self.subqueries
            .get(&crate::exec::subquery::key(q))
            .cloned()
            .ok_or_else(|| SqlError::unsupported("IN with a subquery here"))
    }
}

impl Scope<'_> {
    /// The column `[qualifier.]name` among `entries` (None: not there; 1052 when two match).
    fn find(
        &self,
        entries: &[ScopeEntry],
        qualifier: Option<&str>,
        name: &str,
    ) -> SqlResult<Option<usize>> {
        let mut found = None;
        for e in entries {
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
        Ok(found)
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
        BoundExpr::Call(_, args)
        | BoundExpr::Row(args)
        | BoundExpr::And(args)
        | BoundExpr::Or(args) => args.iter().for_each(|x| visit_columns(x, f)),
        BoundExpr::Subquery(q) => q.outer.iter().for_each(|&i| f(i)),
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

/// Splits an expression into its top-level AND conjuncts (those of bracketed ANDs too), in
/// written order.
pub fn conjuncts(e: BoundExpr, out: &mut Vec<BoundExpr>) {
    let mut pending = vec![e];
    while let Some(x) = pending.pop() {
        match x {
            BoundExpr::And(operands) => pending.extend(operands.into_iter().rev()),
            other => out.push(other),
        }
    }
}

/// Joins conjuncts back with AND (None when empty).
pub fn and_all(mut parts: Vec<BoundExpr>) -> Option<BoundExpr> {
    match parts.len() {
        0 => None,
        1 => parts.pop(),
        _ => Some(BoundExpr::And(parts)),
    }
}
