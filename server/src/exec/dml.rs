//! Single-table UPDATE and DELETE with WHERE, ORDER BY and LIMIT (INSERT is in `insert`).
//! Both first collect the matching rows through the chosen access path, then change them, so a
//! change cannot move a row into the part of the index still to be scanned.

use std::sync::Arc;

use sqlparser::ast::{self, Expr};

use crate::context::{Context, Warning};
use crate::engine::lock::WaitPolicy;
use crate::engine::{EngineError, Table, UpdateOutcome};
use crate::error::engine_error;
use crate::error::lock_error;
use crate::error::{SqlError, SqlResult};
use crate::exec::access::{self, Access};
use crate::exec::checks::BoundChecks;
use crate::exec::errors::check_text_columns;
use crate::exec::foreign_keys::ForeignKeys;
use crate::exec::query::{Source, SourceKind};
use crate::exec::run::{order_cmp, Exec, Flow, ReadLock};
use crate::exec::scope::{and_all, conjuncts, Scope};
use crate::exec::sources::{table_columns, table_name};
use crate::exec::Planner;
use crate::sql::eval::to_i64;
use crate::sql::expr::{Binder, BoundExpr};
use crate::sql::output::Output;
use crate::trx::WriteError;
use crate::value::Value;
use crate::vars::Counter;

/// A single-table scan with ORDER BY and LIMIT (UPDATE and DELETE targets).
#[derive(Debug, Clone)]
pub struct Target {
    /// The table and its access path.
    pub source: Source,
    /// ORDER BY over the table row.
    pub order: Vec<(BoundExpr, bool)>,
    /// The access order does not give ORDER BY.
    pub sort: bool,
    /// LIMIT.
    pub limit: Option<BoundExpr>,
}

/// A planned UPDATE.
#[derive(Debug, Clone)]
pub struct Update {
    /// Rows to change.
    pub target: Target,
    /// SET column = expression (over the old row).
    pub assignments: Vec<(usize, BoundExpr)>,
    /// The table's CHECK constraints, over the new row.
    pub checks: BoundChecks,
    /// The foreign keys a changed row meets.
    pub foreign_keys: ForeignKeys,
    /// UPDATE IGNORE: a row whose new values break a unique key or a CHECK constraint, or are
    /// not valid in their character set, stays as it was with a warning, and values are cut
    /// to fit as outside strict mode.
    pub ignore: bool,
}

/// A planned DELETE.
#[derive(Debug, Clone)]
pub struct Delete {
    /// Rows to delete.
    pub target: Target,
    /// The foreign keys whose child rows reference a deleted row.
    pub foreign_keys: ForeignKeys,
}

impl Target {
    /// The table.
    pub fn table(&self) -> &Arc<Table> {
        match &self.source.kind {
            SourceKind::Base { table, .. } => table,
            _ => unreachable!("UPDATE/DELETE targets are base tables"),
        }
    }

    fn access(&self) -> &Access {
        match &self.source.kind {
            SourceKind::Base { access, .. } => access,
            _ => unreachable!("UPDATE/DELETE targets are base tables"),
        }
    }
}

pub(crate) fn column_pos(t: &Table, n: &ast::ObjectName) -> SqlResult<usize> {
    let name = crate::sql::names::last(n);
    t.def()
        .column_index(&name)
        .ok_or_else(|| crate::exec::errors::unknown_column(&name, "field list"))
}

impl Planner<'_> {
    pub(crate) fn bind_with(&mut self, scope: &Scope<'_>, e: &Expr) -> SqlResult<BoundExpr> {
        let mut b = Binder::new(scope);
        b.params = self.params;
        let x = b.bind(e)?;
        self.params = b.params;
        Ok(x)
    }

    fn target(
        &mut self,
        twj: &ast::TableWithJoins,
        selection: Option<&Expr>,
        order_by: &[ast::OrderByExpr],
        limit: Option<&Expr>,
        assignments: &[ast::Assignment],
    ) -> SqlResult<(Target, Vec<(usize, BoundExpr)>)> {
        if !twj.joins.is_empty() {
            return Err(SqlError::unsupported("multi-table UPDATE/DELETE"));
        }
        let ast::TableFactor::Table { name, alias, .. } = &twj.relation else {
            return Err(SqlError::unsupported("UPDATE/DELETE of a derived table"));
        };
        let (db, tname) = table_name(self, name)?;
        let a = alias
            .as_ref()
            .map_or(tname.clone(), |a| a.name.value.clone());
        let table = self.table(&db, &tname)?;
        let mut scope = Scope::new(&self.st.core.vars);
        scope.push(&a, &db, table_columns(self.st, &table, &db, &a))?;
        scope.in_clause("field list");
        let mut sets = Vec::new();
        for asg in assignments {
            let ast::AssignmentTarget::ColumnName(n) = &asg.target else {
                return Err(SqlError::parse("SET (a, b) = ..."));
            };
            let col = column_pos(&table, n)?;
            sets.push((col, self.bind_with(&scope, &asg.value)?));
        }
        scope.in_clause("where clause");
        let mut parts = Vec::new();
        if let Some(w) = selection {
            conjuncts(self.bind_with(&scope, w)?, &mut parts);
        }
        scope.in_clause("order clause");
        let mut order = Vec::new();
        for o in order_by {
            order.push((
                self.bind_with(&scope, &o.expr)?,
                matches!(o.options.sort, Some(ast::OrderBySort::Desc)),
            ));
        }
        let limit = limit.map(|l| self.bind_with(&scope, l)).transpose()?;
        let order_cols: Option<Vec<(usize, bool)>> = order
            .iter()
            .map(|(e, d)| match e {
                BoundExpr::Column(i) => Some((*i, *d)),
                _ => None,
            })
            .collect();
        let name_of = |i: usize| format!("{db}.{a}.{}", table.def().columns()[i].name);
        let ctx = access::Context {
            offset: 0,
            conjuncts: &parts,
            order: order_cols,
            limited: limit.is_some(),
            allowed: (0..table.def().indexes().len()).collect(),
            forced: false,
            outer_name: &name_of,
        };
        let acc = access::choose(&table, &ctx);
        let sort = !order.is_empty() && !acc.ordered;
        let rest: Vec<BoundExpr> = parts
            .iter()
            .enumerate()
            .filter(|(i, _)| !acc.consumed.contains(i))
            .map(|(_, c)| c.clone())
            .collect();
        let width = table.def().columns().len();
        let source = Source {
            alias: a,
            db,
            offset: 0,
            width,
            left_join: false,
            filter: and_all(rest),
            full_filter: and_all(parts),
            needed: (0..width).collect(),
            kind: SourceKind::Base { table, access: acc },
        };
        Ok((
            Target {
                source,
                order,
                sort,
                limit,
            },
            sets,
        ))
    }

    /// Plans UPDATE.
    pub fn update(&mut self, u: &ast::Update) -> SqlResult<Update> {
        if u.from.is_some() {
            return Err(SqlError::unsupported("UPDATE ... FROM"));
        }
        // `OR IGNORE` is how the statement layer hands on MySQL's `UPDATE IGNORE`.
        let ignore = match u.or {
            None => false,
            Some(ast::SqliteOnConflict::Ignore) => true,
            Some(_) => return Err(SqlError::parse("OR")),
        };
        let (target, assignments) = self.target(
            &u.table,
            u.selection.as_ref(),
            &u.order_by,
            u.limit.as_ref(),
            &u.assignments,
        )?;
        let db = match &u.table.relation {
            ast::TableFactor::Table { name, .. } => table_name(self, name)?.0,
            _ => String::new(),
        };
        let checks = BoundChecks::plan(self, &db, target.table())?;
        let foreign_keys = ForeignKeys::plan(self, &db, &Arc::clone(target.table()));
        Ok(Update {
            target,
            assignments,
            checks,
            foreign_keys,
            ignore,
        })
    }

    /// Plans DELETE.
    pub fn delete(&mut self, d: &ast::Delete) -> SqlResult<Delete> {
        let (ast::FromTable::WithFromKeyword(from) | ast::FromTable::WithoutKeyword(from)) =
            &d.from;
        let [twj] = from.as_slice() else {
            return Err(SqlError::unsupported("multi-table DELETE"));
        };
        if !d.tables.is_empty() || d.using.is_some() {
            return Err(SqlError::unsupported("multi-table DELETE"));
        }
        let (target, _) = self.target(
            twj,
            d.selection.as_ref(),
            &d.order_by,
            d.limit.as_ref(),
            &[],
        )?;
        let db = match &twj.relation {
            ast::TableFactor::Table { name, .. } => table_name(self, name)?.0,
            _ => String::new(),
        };
        let foreign_keys = ForeignKeys::plan(self, &db, &Arc::clone(target.table()));
        Ok(Delete {
            target,
            foreign_keys,
        })
    }
}

/// The rows a target matches, in ORDER BY order and cut at LIMIT: (clustered key, row), the
/// row left empty unless `keep_rows`. The rows held are checked against the memory budget
/// as they are collected (1037), so an UPDATE of more large rows than memory holds fails
/// instead of ending the process; a DELETE that needs only the keys holds no rows.
fn matching(ex: &Exec<'_>, t: &Target, keep_rows: bool) -> SqlResult<Vec<(Vec<u8>, Vec<Value>)>> {
    let limit = match &t.limit {
        Some(l) => to_i64(&ex.eval(l, &[])?).unwrap_or(0).max(0) as usize,
        None => usize::MAX,
    };
    let table = t.table();
    let acc = t.access();
    let mut row = vec![Value::Null; t.source.width];
    let r = ex.ranges(table, acc, &row)?;
    let filter = if r.exact {
        t.source.filter.as_ref()
    } else {
        t.source.full_filter.as_ref()
    };
    let mut out = Vec::new();
    let hold = keep_rows || t.sort;
    // Row bytes collected since the budget was last asked for room.
    let mut unchecked = 0usize;
    if limit > 0 {
        let mut each = |row: &mut Vec<Value>, pk: &[u8]| -> SqlResult<Flow> {
            if !ex.holds(filter, row)? {
                return Ok(Flow::Rejected);
            }
            if hold {
                unchecked = unchecked.saturating_add(crate::memory::row_bytes(row) / 2);
                if unchecked >= crate::memory::CHECKED_VALUE {
                    ex.st.core.memory.reserve_value(unchecked)?;
                    unchecked = 0;
                }
            }
            out.push((pk.to_vec(), if hold { row.clone() } else { Vec::new() }));
            Ok(if t.sort || out.len() < limit {
                Flow::Next
            } else {
                Flow::Stop
            })
        };
        ex.read_base(table, acc, &t.source, &r, &mut row, &mut each)?;
    }
    if t.sort {
        let mut keyed = out
            .into_iter()
            .map(|(pk, row)| {
                let keys = t
                    .order
                    .iter()
                    .map(|(e, _)| ex.eval(e, &row))
                    .collect::<SqlResult<Vec<_>>>()?;
                Ok((keys, pk, row))
            })
            .collect::<SqlResult<Vec<_>>>()?;
        keyed.sort_by(|a, b| {
            for (i, (_, desc)) in t.order.iter().enumerate() {
                let o = order_cmp(&a.0[i], &b.0[i]);
                if o != std::cmp::Ordering::Equal {
                    return if *desc { o.reverse() } else { o };
                }
            }
            std::cmp::Ordering::Equal
        });
        out = keyed
            .into_iter()
            .take(limit)
            .map(|(_, pk, row)| (pk, if keep_rows { row } else { Vec::new() }))
            .collect();
    }
    Ok(out)
}

/// Outside strict mode (and under IGNORE) cuts each of the `cols` of `row` to fit its
/// column as MySQL stores it (see [`crate::engine::clip`]); returns the warnings, in order.
pub(crate) fn clip_columns(
    def: &crate::engine::schema::TableDef,
    row: &mut [Value],
    cols: impl IntoIterator<Item = usize>,
    rowno: u64,
) -> Vec<(u16, String)> {
    let mut warnings = Vec::new();
    for c in cols {
        let column = &def.columns()[c];
        if let Some(cut) = column.ty.clip(&row[c], &column.name, rowno) {
            row[c] = cut.value;
            warnings.push((cut.code, cut.message));
        }
    }
    warnings
}

pub(crate) fn warn(st: &mut Context, code: u16, message: String) {
    st.warnings.push(Warning {
        level: "Warning",
        code,
        message,
    });
}

pub(crate) fn info(st: &Context, affected: u64, info: String, last_insert_id: u64) -> Output {
    let _ = st;
    Output::Ok {
        affected_rows: affected,
        last_insert_id,
        info,
    }
}

/// UPDATE reads with exclusive locks, semi-consistently under READ COMMITTED (MySQL asks
/// InnoDB for semi-consistent reads in its UPDATE code only, sql_update.cc).
const UPDATE_LOCK: ReadLock = ReadLock {
    mode: crate::trx::ScanLockMode::Exclusive,
    policy: WaitPolicy::Wait,
    update: true,
};

/// DELETE reads with exclusive locks and waits for every locked row it reads, whatever the
/// isolation level.
const DELETE_LOCK: ReadLock = ReadLock {
    update: false,
    ..UPDATE_LOCK
};

/// Executes UPDATE.
pub fn update(st: &mut Context, u: &Update, params: &[Value]) -> SqlResult<Output> {
    st.count(Counter::ComUpdate);
    let mut ex = Exec::new(st, params);
    ex.lock = Some(UPDATE_LOCK);
    let rows = matching(&ex, &u.target, true)?;
    let sys = &st.core.trx;
    let table = u.target.table();
    let timeout = st.lock_wait_timeout();
    let (mut matched, mut changed) = (0u64, 0u64);
    let lenient = u.ignore || !st.sql_modes().strict;
    let mut warnings = Vec::new();
    'rows: for (n, (pk, old)) in rows.iter().enumerate() {
        matched += 1;
        let mut new = old.clone();
        for (col, e) in &u.assignments {
            let v = ex.eval(e, &new)?;
            if let Err(e) = check_text_columns(table.def(), [(*col, &v)], n as u64 + 1) {
                if u.ignore {
                    warnings.push((e.code.code(), e.message));
                    continue 'rows;
                }
                ex.flush();
                return Err(e);
            }
            new[*col] = v;
        }
        if lenient {
            let cols = u.assignments.iter().map(|(c, _)| *c);
            warnings.extend(clip_columns(table.def(), &mut new, cols, n as u64 + 1));
        }
        if let Err(e) = u.checks.verify(&ex, &new) {
            if u.ignore {
                warnings.push((e.code.code(), e.message));
                continue;
            }
            ex.flush();
            return Err(e);
        }
        let ncols = table.def().columns().len();
        let related = u
            .foreign_keys
            .check_child(st, &new[..ncols])
            .and_then(|()| {
                u.foreign_keys
                    .check_parent(st, &old[..ncols], Some(&new[..ncols]))
            });
        if let Err(e) = related {
            ex.flush();
            return Err(e);
        }
        // The new version is a new row in the store until purge frees the old one.
        if let Err(e) = st
            .core
            .memory
            .reserve_row(crate::memory::row_bytes(&new), table.name())
        {
            ex.flush();
            return Err(e);
        }
        let done = {
            let mut t = st.trx.borrow_mut();
            let trx = t.as_mut().expect("a table statement runs in a transaction");
            crate::trx::update_row(sys, trx, table, pk, new, timeout)
        };
        match done {
            Ok(UpdateOutcome::Updated { .. }) => changed += 1,
            Ok(UpdateOutcome::Unchanged) => {}
            Ok(UpdateOutcome::NotFound) => matched -= 1,
            Err(WriteError::Engine(e @ EngineError::DuplicateKey { .. })) if u.ignore => {
                let e = engine_error(&e, n as u64 + 1);
                warnings.push((e.code.code(), e.message));
            }
            Err(e) => {
                ex.flush();
                return Err(match e {
                    WriteError::Engine(e) => engine_error(&e, n as u64 + 1),
                    WriteError::Lock(e) => lock_error(e),
                });
            }
        }
    }
    ex.flush();
    for (code, m) in warnings {
        warn(st, code, m);
    }
    let c = &st.conn.counters;
    c.add(Counter::HandlerUpdate, changed);
    c.add(Counter::InnodbRowsUpdated, changed);
    let found_rows = st.caps.contains(protocol::Capabilities::FOUND_ROWS);
    let warnings = st.warnings.count();
    let text = format!("Rows matched: {matched}  Changed: {changed}  Warnings: {warnings}");
    Ok(info(
        st,
        if found_rows { matched } else { changed },
        text,
        0,
    ))
}

/// Executes DELETE.
pub fn delete(st: &mut Context, d: &Delete, params: &[Value]) -> SqlResult<Output> {
    st.count(Counter::ComDelete);
    let mut ex = Exec::new(st, params);
    ex.lock = Some(DELETE_LOCK);
    let parent = d.foreign_keys.is_parent();
    let rows = matching(&ex, &d.target, parent)?;
    ex.flush();
    let table = d.target.table();
    let ncols = table.def().columns().len();
    let mut deleted = 0;
    for (pk, old) in &rows {
        if parent {
            d.foreign_keys.check_parent(st, &old[..ncols], None)?;
        }
        let mut t = st.trx.borrow_mut();
        let trx = t.as_mut().expect("a table statement runs in a transaction");
        if crate::trx::delete_row(&st.core.trx, trx, table, pk) {
            deleted += 1;
        }
    }
    let c = &st.conn.counters;
    c.add(Counter::HandlerDelete, deleted);
    c.add(Counter::InnodbRowsDeleted, deleted);
    Ok(Output::affected(deleted))
}
