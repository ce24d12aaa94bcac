//! INSERT (multi-row, column lists, DEFAULT, IGNORE, ON DUPLICATE KEY UPDATE, INSERT ...
//! SELECT) and REPLACE, with MySQL's affected rows (1 per insert, 2 per duplicate-key
//! update or replace, 1 for a REPLACE that finds the same row in its last unique index),
//! info text and first generated AUTO_INCREMENT value.

use std::sync::Arc;

use sqlparser::ast::{self, Expr};

use crate::context::Context;
use crate::engine::lock::Strength;
use crate::engine::{EngineError, IndexKind, InsertOptions, Table, UpdateOutcome};
use crate::error::engine_error;
use crate::error::lock_error;
use crate::error::{ErrorCode, SqlError, SqlResult};
use crate::exec::checks::BoundChecks;
use crate::exec::dml::{clip_columns, column_pos, info, warn};
use crate::exec::errors::check_text_columns;
use crate::exec::foreign_keys::ForeignKeys;
use crate::exec::query::Query;
use crate::exec::run::Exec;
use crate::exec::scope::Scope;
use crate::exec::sources::{table_columns, table_name};
use crate::exec::Planner;
use crate::sql::expr::BoundExpr;
use crate::sql::output::Output;
use crate::trx::{DupLock, WriteError};
use crate::value::Value;
use crate::vars::Counter;

/// Where INSERT rows come from.
#[derive(Debug, Clone)]
pub enum InsertSource {
    /// VALUES rows of expressions (None: the DEFAULT keyword).
    Values(Vec<Vec<Option<BoundExpr>>>),
    /// INSERT ... SELECT.
    Select(Box<Query>),
}

/// A planned INSERT or REPLACE.
#[derive(Debug, Clone)]
pub struct Insert {
    /// Target table.
    pub table: Arc<Table>,
    /// Target columns, in the order values are given.
    pub columns: Vec<usize>,
    /// Rows.
    pub source: InsertSource,
    /// INSERT IGNORE.
    pub ignore: bool,
    /// REPLACE.
    pub replace: bool,
    /// ON DUPLICATE KEY UPDATE assignments over (existing row ++ new row).
    pub on_duplicate: Vec<(usize, BoundExpr)>,
    /// The table's CHECK constraints, over a row to write.
    pub checks: BoundChecks,
    /// The foreign keys a row written to the table meets.
    pub foreign_keys: ForeignKeys,
}

/// Rewrites `VALUES(col)` as a reference to the new row's column.
fn rewrite_values(e: &Expr) -> Expr {
    let mut e = e.clone();
    let _ = ast::visit_expressions_mut(&mut e, |x| {
        if let Expr::Function(f) = x {
            if f.name.to_string().eq_ignore_ascii_case("values") {
                if let ast::FunctionArguments::List(l) = &f.args {
                    if let [ast::FunctionArg::Unnamed(ast::FunctionArgExpr::Expr(
                        Expr::Identifier(c),
                    ))] = l.args.as_slice()
                    {
                        *x = Expr::CompoundIdentifier(vec![ast::Ident::new("\0new"), c.clone()]);
                    }
                }
            }
        }
        std::ops::ControlFlow::<()>::Continue(())
    });
    e
}

impl Planner<'_> {
    /// Binds VALUES rows: one optional expression per given column (None: DEFAULT).
    fn bind_rows(&mut self, v: &ast::Values) -> SqlResult<InsertSource> {
        let empty = Scope::new(&self.st.core.vars);
        let mut rows = Vec::with_capacity(v.rows.len());
        for r in &v.rows {
            let row = r
                .iter()
                .map(|e| match e {
                    Expr::Identifier(id) if id.value.eq_ignore_ascii_case("default") => Ok(None),
                    e => self.bind_with(&empty, e).map(Some),
                })
                .collect::<SqlResult<Vec<_>>>()?;
            rows.push(row);
        }
        Ok(InsertSource::Values(rows))
    }

    /// Plans INSERT / REPLACE.
    pub fn insert(&mut self, i: &ast::Insert) -> SqlResult<Insert> {
        let ast::TableObject::TableName(name) = &i.table else {
            return Err(SqlError::unsupported("INSERT INTO TABLE FUNCTION"));
        };
        let (db, tname) = table_name(self, name)?;
        let table = self.table(&db, &tname)?;
        let ncols = table.def().columns().len();
        let mut columns: Vec<usize> = i
            .columns
            .iter()
            .map(|c| column_pos(&table, c))
            .collect::<SqlResult<_>>()?;
        let registry = &self.st.core.vars;
        let mut scope = Scope::new(registry);
        scope.push(&tname, &db, table_columns(self.st, &table, &db, &tname))?;
        let source = match i.source.as_deref() {
            Some(q) => match q.body.as_ref() {
                ast::SetExpr::Values(v) => {
                    if let Some(rows) = crate::exec::insert_values::text_rows(self, v) {
                        InsertSource::Values(rows?)
                    } else {
                        self.bind_rows(v)?
                    }
                }
                _ => InsertSource::Select(Box::new(self.query(q)?)),
            },
            None if !i.assignments.is_empty() => {
                let empty = Scope::new(registry);
                let mut row = Vec::new();
                for a in &i.assignments {
                    let ast::AssignmentTarget::ColumnName(n) = &a.target else {
                        return Err(SqlError::parse("SET (a, b) = ..."));
                    };
                    columns.push(column_pos(&table, n)?);
                    row.push(Some(self.bind_with(&empty, &a.value)?));
                }
                InsertSource::Values(vec![row])
            }
            None => return Err(SqlError::parse("INSERT without values")),
        };
        if columns.is_empty() {
            columns = (0..ncols).collect();
        }
        let given = match &source {
            InsertSource::Values(rows) => rows.first().map_or(columns.len(), Vec::len),
            InsertSource::Select(q) => q.items.len(),
        };
        let bad_row = match &source {
            InsertSource::Values(rows) => rows.iter().position(|r| r.len() != columns.len()),
            InsertSource::Select(_) => (given != columns.len()).then_some(0),
        };
        if let Some(r) = bad_row {
            return Err(SqlError::new(
                ErrorCode::WrongValueCountOnRow,
                format!("Column count doesn't match value count at row {}", r + 1),
            ));
        }
        let mut on_duplicate = Vec::new();
        if let Some(ast::OnInsert::DuplicateKeyUpdate(assignments)) = &i.on {
            scope.extra_offset = Some(ncols);
            scope.in_clause("field list");
            for a in assignments {
                let ast::AssignmentTarget::ColumnName(n) = &a.target else {
                    return Err(SqlError::parse("SET (a, b) = ..."));
                };
                let col = column_pos(&table, n)?;
                let e = self.bind_with(&scope, &rewrite_values(&a.value))?;
                on_duplicate.push((col, e));
            }
        }
        let checks = BoundChecks::plan(self, &db, &table)?;
        let foreign_keys = ForeignKeys::plan(self, &db, &table);
        Ok(Insert {
            table,
            columns,
            checks,
            foreign_keys,
            source,
            ignore: i.ignore,
            replace: i.replace_into,
            on_duplicate,
        })
    }
}

/// The clustered key of the live row holding the duplicate that `err` reports for `row`.
fn conflicting_row(t: &Table, err: &EngineError, row: &[Value]) -> Option<Conflict> {
    let EngineError::DuplicateKey { key, .. } = err else {
        return None;
    };
    let index_name = key.rsplit('.').next()?;
    let index = t.def().index_position(index_name)?;
    let coerced = t.def().coerce_row(row.to_vec()).ok()?;
    let indexes = t.def().indexes();
    let last_unique = !indexes[index + 1..]
        .iter()
        .any(|ix| ix.kind == IndexKind::Unique);
    let pk = if index == 0 {
        t.primary_key_of(&coerced)?
    } else {
        conflicting_secondary(t, index, &coerced)?
    };
    Some(Conflict {
        pk,
        last_unique,
        row: coerced,
    })
}

/// A row a duplicate key conflicts with.
struct Conflict {
    /// Its clustered key.
    pk: Vec<u8>,
    /// The duplicate is in the last unique index (in key order), where MySQL's REPLACE
    /// updates the row in place instead of deleting it and inserting again.
    last_unique: bool,
    /// The row that was being written, coerced to the table's columns.
    row: Vec<Value>,
}

/// The clustered key of the row holding `coerced`'s value in unique secondary `index`.
fn conflicting_secondary(t: &Table, index: usize, coerced: &[Value]) -> Option<Vec<u8>> {
    let vals: Vec<Value> = t.def().indexes()[index]
        .columns
        .iter()
        .map(|&c| coerced[c].clone())
        .collect();
    let prefix = t.encode_search_key(index, &vals).ok()?;
    let item = t
        .scan(
            index,
            crate::engine::KeyRange::prefix(prefix),
            crate::engine::Direction::Forward,
        )
        .next()?;
    Some(item.primary_key().to_vec())
}

/// What writing rows added up to (summed over a statement's batches).
#[derive(Debug, Default)]
pub(crate) struct Written {
    /// Affected rows as MySQL counts them (1 per insert, 2 per duplicate-key update, 1 per
    /// row a REPLACE deleted).
    pub(crate) affected: u64,
    /// Rows inserted.
    pub(crate) inserted: u64,
    /// Rows changed by ON DUPLICATE KEY UPDATE.
    pub(crate) updated: u64,
    /// Duplicates met (replaced, updated or skipped).
    pub(crate) dups: u64,
    /// The first AUTO_INCREMENT value generated (0: none).
    pub(crate) first_id: u64,
    /// Warnings of skipped or adjusted rows, in order.
    pub(crate) warnings: RowWarnings,
}

/// The warnings rows raise while a statement writes them, bounded: past the most any
/// `max_error_count` keeps (65,535), a warning is only counted, so a statement that warns
/// on every one of millions of rows holds a bounded list.
#[derive(Debug, Default)]
pub(crate) struct RowWarnings {
    kept: Vec<(u16, String)>,
    unkept: u64,
}

impl RowWarnings {
    /// The most kept.
    const LIMIT: usize = u16::MAX as usize;

    /// Adds a warning: (code, message).
    pub(crate) fn push(&mut self, w: (u16, String)) {
        if self.kept.len() < Self::LIMIT {
            self.kept.push(w);
        } else {
            self.unkept += 1;
        }
    }

    /// Adds several warnings.
    pub(crate) fn extend(&mut self, ws: impl IntoIterator<Item = (u16, String)>) {
        for w in ws {
            self.push(w);
        }
    }

    /// Moves them into the statement's diagnostics area.
    pub(crate) fn report(self, st: &mut Context) {
        for (code, m) in self.kept {
            warn(st, code, m);
        }
        st.warnings.add_unkept(self.unkept);
    }
}

/// The per-statement settings every row's write uses.
struct RowWriter<'a> {
    i: &'a Insert,
    opts: InsertOptions,
    dup: DupLock,
    timeout: std::time::Duration,
    now: crate::value::DateTime,
    lenient: bool,
}

/// Executes INSERT / REPLACE: evaluates the source rows, then writes them one by one.
pub fn insert(st: &mut Context, i: &Insert, params: &[Value]) -> SqlResult<Output> {
    st.count(if i.replace {
        Counter::ComReplace
    } else {
        Counter::ComInsert
    });
    let mut ex = Exec::new(st, params);
    if matches!(i.source, InsertSource::Select(_))
        && st
            .trx
            .borrow()
            .as_ref()
            .is_some_and(|t| t.isolation.gap_locks())
    {
        // INSERT ... SELECT reads its source with shared next-key locks under RR.
        ex.lock = Some(crate::exec::run::ReadLock {
            mode: crate::trx::ScanLockMode::Shared,
            policy: crate::engine::lock::WaitPolicy::Wait,
            update: false,
        });
    }
    let input = source_rows(&mut ex, &i.source)?;
    ex.flush();
    let now = ex.now;
    insert_rows(st, i, params, now, input)
}

/// The source's rows, one optional value per target column (None: DEFAULT).
fn source_rows(ex: &mut Exec<'_>, source: &InsertSource) -> SqlResult<Vec<Vec<Option<Value>>>> {
    match source {
        InsertSource::Values(rows) => rows
            .iter()
            .map(|r| {
                r.iter()
                    .map(|e| e.as_ref().map(|e| ex.eval(e, &[])).transpose())
                    .collect::<SqlResult<Vec<_>>>()
            })
            .collect(),
        InsertSource::Select(q) => Ok(ex
            .query(q)?
            .into_iter()
            .map(|r| r.into_iter().map(Some).collect())
            .collect()),
    }
}

/// Writes `input` (one optional value per column of `i.columns`, None for DEFAULT) into
/// `i`'s table and answers with the statement's OK packet. `now` is the statement's start
/// ([`Exec::now`], for DEFAULT CURRENT_TIMESTAMP).
fn insert_rows(
    st: &mut Context,
    i: &Insert,
    params: &[Value],
    now: i64,
    input: Vec<Vec<Option<Value>>>,
) -> SqlResult<Output> {
    let records = input.len();
    let mut ex = Exec::new(st, params);
    ex.now = now;
    let mut w = Written::default();
    let r = write_rows(&ex, i, input, 1, &mut w);
    drop(ex);
    if let Err(e) = r {
        let c = &st.conn.counters;
        c.add(Counter::HandlerWrite, w.inserted);
        c.add(Counter::InnodbRowsInserted, w.inserted);
        return Err(e);
    }
    Ok(finish(st, i, records, w))
}

/// Writes rows of values for `i.columns` (None: the column's DEFAULT) into `i.table` inside
/// the open statement transaction, with INSERT's checks, duplicate handling (IGNORE,
/// REPLACE, ON DUPLICATE KEY UPDATE) and non-strict clipping, adding what they did to `w`.
/// `first_row` is the 1-based number of `input[0]` in the statement, for messages. On an
/// error the rows written so far stay counted in `w`; the caller adds them to the counters.
pub(crate) fn write_rows(
    ex: &Exec<'_>,
    i: &Insert,
    input: Vec<Vec<Option<Value>>>,
    first_row: u64,
    w: &mut Written,
) -> SqlResult<()> {
    let st = ex.st;
    let writer = RowWriter {
        i,
        opts: InsertOptions {
            no_auto_value_on_zero: st.sql_modes().no_auto_value_on_zero,
            ..InsertOptions::default()
        },
        dup: if i.replace || !i.on_duplicate.is_empty() {
            DupLock::Exclusive
        } else {
            DupLock::Shared
        },
        timeout: st.lock_wait_timeout(),
        now: crate::time::datetime_from_micros(ex.now),
        lenient: i.ignore || !st.sql_modes().strict,
    };
    for (n, values) in input.into_iter().enumerate() {
        let rowno = first_row + n as u64;
        if let Some(full) = writer.full_row(ex, values, rowno, w)? {
            writer.write(ex, full, rowno, w)?;
        }
    }
    Ok(())
}

impl RowWriter<'_> {
    /// The whole row to write for the given `values` (defaults filled, non-strict clipping,
    /// CHECK and foreign-key checks passed, its memory reserved); None when INSERT IGNORE
    /// skips it with a warning.
    fn full_row(
        &self,
        ex: &Exec<'_>,
        values: Vec<Option<Value>>,
        rowno: u64,
        w: &mut Written,
    ) -> SqlResult<Option<Vec<Value>>> {
        let (i, t, st) = (self.i, &self.i.table, ex.st);
        let given: Vec<(usize, Value)> = i
            .columns
            .iter()
            .copied()
            .zip(values)
            .filter_map(|(c, v)| v.map(|v| (c, v)))
            .collect();
        if let Err(e) = check_text_columns(t.def(), given.iter().map(|(c, v)| (*c, v)), rowno) {
            // INSERT IGNORE skips the row with a warning, as for the other value errors.
            if i.ignore {
                w.warnings.push((e.code.code(), e.message));
                return Ok(None);
            }
            return Err(e);
        }
        // The columns the statement gave, for non-strict clipping (not collected otherwise).
        let given_cols: Option<Vec<usize>> = self
            .lenient
            .then(|| given.iter().map(|(c, _)| *c).collect());
        let mut full = t
            .def()
            .fill_row(given, self.now)
            .map_err(|e| engine_error(&e, rowno))?;
        if let Some(cols) = given_cols {
            w.warnings
                .extend(clip_columns(t.def(), &mut full, cols, rowno));
        }
        if let Err(e) = i.checks.verify(ex, &full) {
            // INSERT IGNORE skips the row with a warning, as MySQL does for 3819.
            if i.ignore {
                w.warnings.push((e.code.code(), e.message));
                return Ok(None);
            }
            return Err(e);
        }
        i.foreign_keys.check_child(st, &full)?;
        st.core
            .memory
            .reserve_row(crate::memory::row_bytes(&full), t.name())?;
        Ok(Some(full))
    }

    /// Inserts `full`; on a duplicate key, REPLACE deletes the conflicting row and tries
    /// again, ON DUPLICATE KEY UPDATE updates it, IGNORE warns, anything else fails.
    fn write(&self, ex: &Exec<'_>, full: Vec<Value>, rowno: u64, w: &mut Written) -> SqlResult<()> {
        let (i, t, st) = (self.i, &self.i.table, ex.st);
        let sys = &st.core.trx;
        // Only REPLACE and ON DUPLICATE KEY UPDATE need the row again after a failed try.
        let keep = i.replace || !i.on_duplicate.is_empty();
        let mut attempt = Some(full);
        loop {
            let row = if keep {
                attempt.clone()
            } else {
                attempt.take()
            };
            let row = row.expect("a row to insert");
            let res = {
                let mut tb = st.trx.borrow_mut();
                let trx = tb
                    .as_mut()
                    .expect("a table statement runs in a transaction");
                crate::trx::insert_row(sys, trx, t, row, &self.opts, self.dup, self.timeout)
            };
            let e = match res {
                Ok(out) => {
                    if let (Some(id), 0) = (out.generated_auto_increment, w.first_id) {
                        w.first_id = id;
                    }
                    w.affected += 1;
                    w.inserted += 1;
                    return Ok(());
                }
                Err(WriteError::Engine(e)) => e,
                Err(WriteError::Lock(e)) => return Err(lock_error(e)),
            };
            match (&e, attempt.as_ref()) {
                (EngineError::DuplicateKey { .. }, Some(row)) if keep => {
                    let Some(conflict) = conflicting_row(t, &e, row) else {
                        return Err(engine_error(&e, rowno));
                    };
                    let pk = conflict.pk;
                    self.lock_conflicting(st, &pk)?;
                    // MySQL's REPLACE updates in place when the duplicate is in the last
                    // unique index and no foreign key references the table, and a row
                    // already equal to the new one is then neither deleted nor counted as a
                    // duplicate: 1 affected row, not 2.
                    if i.replace
                        && conflict.last_unique
                        && !i.foreign_keys.is_parent()
                        && t.get(&pk) == Some(conflict.row)
                    {
                        w.affected += 1;
                        w.inserted += 1;
                        return Ok(());
                    }
                    if i.replace {
                        let deleted = {
                            let mut tb = st.trx.borrow_mut();
                            let trx = tb
                                .as_mut()
                                .expect("a table statement runs in a transaction");
                            crate::trx::delete_row(sys, trx, t, &pk)
                        };
                        if deleted {
                            w.affected += 1;
                            w.dups += 1;
                        }
                        continue;
                    }
                    let Some(old) = t.get(&pk) else { continue };
                    return self.update_duplicate(ex, &pk, old, row, rowno, w);
                }
                _ if i.ignore => {
                    if matches!(e, EngineError::DuplicateKey { .. }) {
                        w.dups += 1;
                    }
                    w.warnings.push((e.code().code(), e.message(rowno)));
                    return Ok(());
                }
                _ => return Err(engine_error(&e, rowno)),
            }
        }
    }

    /// Locks the row a duplicate key conflicts with, exclusively (REPLACE, ON DUPLICATE KEY
    /// UPDATE).
    fn lock_conflicting(&self, st: &Context, pk: &[u8]) -> SqlResult<()> {
        let mut tb = st.trx.borrow_mut();
        let trx = tb
            .as_mut()
            .expect("a table statement runs in a transaction");
        crate::trx::lock_row(
            &st.core.trx,
            trx,
            &self.i.table,
            pk,
            Strength::X,
            self.timeout,
        )
        .map_err(lock_error)
    }

    /// ON DUPLICATE KEY UPDATE of the locked row `pk` (now `old`) with the assignments over
    /// (`old` ++ the row that was to be inserted).
    fn update_duplicate(
        &self,
        ex: &Exec<'_>,
        pk: &[u8],
        old: Vec<Value>,
        attempt: &[Value],
        rowno: u64,
        w: &mut Written,
    ) -> SqlResult<()> {
        let (i, t, st) = (self.i, &self.i.table, ex.st);
        let mut env_row = old.clone();
        env_row.extend(attempt.iter().cloned());
        let mut new = old;
        for (col, e) in &i.on_duplicate {
            let v = ex.eval(e, &env_row)?;
            check_text_columns(t.def(), [(*col, &v)], rowno)?;
            new[*col] = v.clone();
            env_row[*col] = v;
        }
        i.checks.verify(ex, &new)?;
        i.foreign_keys.check_child(st, &new)?;
        st.core
            .memory
            .reserve_row(crate::memory::row_bytes(&new), t.name())?;
        i.foreign_keys
            .check_parent(st, &env_row[..new.len()], Some(&new))?;
        w.dups += 1;
        let done = {
            let mut tb = st.trx.borrow_mut();
            let trx = tb
                .as_mut()
                .expect("a table statement runs in a transaction");
            crate::trx::update_row(&st.core.trx, trx, t, pk, new, self.timeout)
        };
        match done {
            Ok(UpdateOutcome::Updated { .. }) => {
                w.affected += 2;
                w.updated += 1;
                Ok(())
            }
            Ok(_) => Ok(()),
            Err(WriteError::Engine(e)) => Err(engine_error(&e, rowno)),
            Err(WriteError::Lock(e)) => Err(lock_error(e)),
        }
    }
}

/// Counts the statement's rows and answers with MySQL's OK packet and info text.
fn finish(st: &mut Context, i: &Insert, records: usize, w: Written) -> Output {
    let c = &st.conn.counters;
    c.add(Counter::HandlerWrite, w.inserted);
    c.add(Counter::InnodbRowsInserted, w.inserted);
    c.add(Counter::HandlerUpdate, w.updated);
    c.add(Counter::InnodbRowsUpdated, w.updated);
    w.warnings.report(st);
    let records = match &i.source {
        InsertSource::Values(_) => records,
        InsertSource::Select(_) => w.affected as usize,
    };
    let text = if records > 1 || matches!(i.source, InsertSource::Select(_)) {
        format!(
            "Records: {records}  Duplicates: {}  Warnings: {}",
            w.dups,
            st.warnings.count()
        )
    } else {
        String::new()
    };
    info(st, w.affected, text, w.first_id)
}
