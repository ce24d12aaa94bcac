//! The table executor: plans and runs every statement that reads or changes tables (DDL,
//! INSERT/REPLACE/UPDATE/DELETE, SELECT with FROM, EXPLAIN, SHOW TABLES/CREATE TABLE/
//! COLUMNS) on the engine's catalog. A plan resolves tables and binds expressions once;
//! executing it evaluates only key values and expressions. A plan remembers the DDL version
//! it was made under and is made again from its statement when a table it uses changed.

pub mod access;
pub mod aggregate;
pub mod alter;
pub mod checks;
pub mod coltypes;
pub(crate) mod data_file;
pub mod ddl;
pub mod dml;
pub mod errors;
pub mod explain;
pub(crate) mod file_access;
pub mod foreign_keys;
pub mod insert;
pub(crate) mod insert_values;
pub mod join_columns;
pub(crate) mod load_data;
pub mod metadata_lock;
pub(crate) mod outfile;
pub(crate) mod propagate;
pub mod query;
pub mod run;
pub mod scope;
pub mod show;
pub mod sources;
pub mod subquery;

use std::sync::Arc;

use sqlparser::ast::Statement;

use crate::context::Context;
use crate::engine::Table;
use crate::error::{SqlError, SqlResult};
use crate::sql::output::Output;
use crate::value::Value;
use crate::vars::Counter;

/// The planning context of one statement.
#[derive(Debug)]
pub struct Planner<'a> {
    /// The session.
    pub st: &'a Context,
    /// The statement text (column labels are the text as typed).
    pub sql: &'a str,
    /// The current database.
    pub db: Option<String>,
    /// `?` placeholders bound so far, in order of appearance.
    pub params: usize,
    /// SELECTs numbered so far (EXPLAIN ids).
    pub select_ids: usize,
    /// Tables resolved: (database, name, table).
    pub tables: Vec<(String, String, Arc<Table>)>,
    /// Whether the statement has `IN (SELECT ...)` subqueries (see [`subquery`]).
    pub materialized: bool,
    /// Whether those subqueries run now (the plan is about to be executed).
    pub run_subqueries: bool,
    /// The sources of the enclosing SELECT while a scalar subquery of it is planned (taken
    /// by the subquery's [`Planner::query`]; derived tables see none).
    pub outer_scope: Vec<scope::ScopeEntry>,
}

/// What a table statement does.
#[derive(Debug, Clone)]
pub enum Body {
    /// CREATE TABLE.
    CreateTable(ddl::CreateTable),
    /// CREATE INDEX.
    CreateIndex(ddl::CreateIndex),
    /// ALTER TABLE.
    AlterTable(alter::AlterTable),
    /// DROP TABLE.
    DropTables(ddl::DropTables),
    /// DROP INDEX.
    DropIndex(ddl::DropIndex),
    /// TRUNCATE TABLE.
    Truncate(Arc<Table>),
    /// TRUNCATE TABLE of a virtual table (performance_schema summaries).
    TruncateVirtual(&'static dyn crate::introspection::vtables::VirtualTable),
    /// ANALYZE TABLE.
    Analyze(Vec<(String, String)>),
    /// SHOW TABLES / SHOW CREATE TABLE / SHOW COLUMNS.
    Show(show::ShowTable),
    /// SELECT.
    Select(query::Query),
    /// INSERT / REPLACE.
    Insert(insert::Insert),
    /// UPDATE.
    Update(dml::Update),
    /// DELETE.
    Delete(dml::Delete),
    /// EXPLAIN of a SELECT/UPDATE/DELETE/INSERT.
    Explain(Box<Body>),
}

impl Body {
    /// Whether the statement runs inside a transaction: Some(writes) for SELECT, DML and
    /// EXPLAIN (EXPLAIN reads no rows but is harmless there), None for DDL and SHOW.
    pub fn transactional(&self) -> Option<bool> {
        match self {
            Body::Select(_) | Body::Explain(_) => Some(false),
            Body::Insert(_) | Body::Update(_) | Body::Delete(_) => Some(true),
            _ => None,
        }
    }

    /// DDL commits the open transaction first, as in MySQL.
    pub fn commits_implicitly(&self) -> bool {
        matches!(
            self,
            Body::CreateTable(_)
                | Body::CreateIndex(_)
                | Body::AlterTable(_)
                | Body::DropTables(_)
                | Body::DropIndex(_)
                | Body::Truncate(_)
        )
    }
}

/// A planned table statement.
#[derive(Debug, Clone)]
pub struct TablePlan {
    /// What it does.
    pub body: Body,
    /// The statement, for re-planning after DDL.
    pub statement: Arc<Statement>,
    /// Its text.
    pub sql: Arc<str>,
    /// The DDL version the plan was made under.
    pub version: u64,
    /// Tables it resolved.
    pub tables: Vec<(String, String, Arc<Table>)>,
    /// It has `IN (SELECT ...)` subqueries: planned again, running them, at every execution.
    pub materialized: bool,
}

impl TablePlan {
    /// Result column definitions as known at prepare time (empty when none): what
    /// COM_STMT_PREPARE reports. A text statement has no use for them, so planning does
    /// not make them.
    pub fn prepared_columns(&self) -> Vec<protocol::ColumnDefinition> {
        match &self.body {
            Body::Select(q) => run::result_set(q, Vec::new()).columns.to_vec(),
            Body::Show(s) => show::columns(s),
            Body::Explain(_) => explain::columns(),
            _ => Vec::new(),
        }
    }
}

/// A planned table statement with its parameter count.
#[derive(Debug)]
pub struct Planned {
    /// The plan.
    pub plan: TablePlan,
    /// Number of `?` placeholders.
    pub params: usize,
}

/// Plans a table statement.
pub fn plan(st: &Context, stmt: Statement, sql: &str) -> SqlResult<Planned> {
    plan_with(st, Arc::new(stmt), sql, false)
}

/// Plans a table statement, running its `IN (SELECT ...)` subqueries if `run_subqueries`.
fn plan_with(
    st: &Context,
    stmt: Arc<Statement>,
    sql: &str,
    run_subqueries: bool,
) -> SqlResult<Planned> {
    let version = st.core.catalog.version();
    let mut p = Planner {
        st,
        sql,
        db: st.db.clone(),
        params: 0,
        select_ids: 0,
        tables: Vec::new(),
        materialized: false,
        run_subqueries,
        outer_scope: Vec::new(),
    };
    let body = p.statement(&stmt)?;
    Ok(Planned {
        params: p.params,
        plan: TablePlan {
            body,
            statement: stmt,
            sql: Arc::from(sql),
            version,
            tables: p.tables,
            materialized: p.materialized,
        },
    })
}

impl Planner<'_> {
    fn statement(&mut self, stmt: &Statement) -> SqlResult<Body> {
        match stmt {
            Statement::Query(q) => Ok(Body::Select(self.query(q)?)),
            Statement::CreateTable(c) => ddl::plan_create_table(self, c),
            Statement::CreateIndex(c) => ddl::plan_create_index(self, c),
            Statement::AlterTable(a) => alter::plan_alter(self, a),
            Statement::Drop { .. } => ddl::plan_drop(self, stmt),
            Statement::Truncate(t) => ddl::plan_truncate(self, t),
            Statement::Analyze(a) => ddl::plan_analyze(self, a),
            Statement::Insert(i) => Ok(Body::Insert(self.insert(i)?)),
            Statement::Update(u) => Ok(Body::Update(self.update(u)?)),
            Statement::Delete(d) => Ok(Body::Delete(self.delete(d)?)),
            Statement::ShowTables { .. }
            | Statement::ShowCreate { .. }
            | Statement::ShowColumns { .. }
            | Statement::ExplainTable { .. } => Ok(Body::Show(show::plan(self, stmt)?)),
            Statement::Explain { statement, .. } => {
                let inner = self.statement(statement)?;
                match inner {
                    Body::Select(_) | Body::Update(_) | Body::Delete(_) | Body::Insert(_) => {
                        Ok(Body::Explain(Box::new(inner)))
                    }
                    _ => Err(SqlError::unsupported("EXPLAIN of this statement")),
                }
            }
            other => Err(SqlError::unsupported(
                &other
                    .to_string()
                    .split_whitespace()
                    .take(2)
                    .collect::<Vec<_>>()
                    .join(" "),
            )),
        }
    }
}

/// Whether every table the plan resolved is still the catalog's.
pub(crate) fn still_valid(st: &Context, plan: &TablePlan) -> bool {
    let cat = &st.core.catalog;
    plan.version == cat.version()
        || plan.tables.iter().all(|(db, name, t)| {
            cat.engine
                .table(db, name)
                .is_ok_and(|now| Arc::ptr_eq(&now, t))
        })
}

/// How many times a statement is planned again because DDL replaced one of its tables while
/// it waited for their metadata locks, before it runs on what it has.
const MAX_REPLANS: usize = 4;

/// Executes a table plan with parameter values: a statement that reads or writes tables first
/// holds their metadata locks (see [`metadata_lock`]); a plan whose tables DDL replaced is
/// made again, out of line in [`execute_replanned`].
pub fn execute(st: &mut Context, plan: &TablePlan, params: &[Value]) -> SqlResult<Output> {
    if plan.materialized {
        // A plan whose IN subqueries were run when it was made is made again with fresh results.
        return execute_replanned(st, plan, params, MAX_REPLANS);
    }
    match run_if_valid(st, plan, params) {
        Some(out) => out,
        None => execute_replanned(st, plan, params, MAX_REPLANS - 1),
    }
}

/// Runs `plan` unless DDL replaced one of its tables, checked before and after taking their
/// metadata locks; None when it did.
fn run_if_valid(st: &mut Context, plan: &TablePlan, params: &[Value]) -> Option<SqlResult<Output>> {
    if !still_valid(st, plan) {
        return None;
    }
    if !uses_tables(&plan.body) {
        return Some(run_body(st, &plan.body, params));
    }
    if let Err(e) = metadata_lock::hold_shared(st, plan.tables.iter().map(|(_, _, t)| t)) {
        return Some(Err(e));
    }
    still_valid(st, plan).then(|| run_body(st, &plan.body, params))
}

/// Makes the plan again from its statement and runs it, up to `attempts` more times while DDL
/// keeps replacing its tables, then runs the last one made. Never inlined: planning's locals
/// would otherwise widen the stack frame every statement runs under.
#[inline(never)]
fn execute_replanned(
    st: &mut Context,
    plan: &TablePlan,
    params: &[Value],
    attempts: usize,
) -> SqlResult<Output> {
    let mut fresh = plan_with(st, Arc::clone(&plan.statement), &plan.sql, true)?.plan;
    for _ in 0..attempts {
        if let Some(out) = run_if_valid(st, &fresh, params) {
            return out;
        }
        fresh = plan_with(st, Arc::clone(&plan.statement), &plan.sql, true)?.plan;
    }
    run_body(st, &fresh.body, params)
}

/// Whether the statement reads or writes its tables' rows (and so holds their metadata
/// locks); DDL takes them exclusive itself.
fn uses_tables(body: &Body) -> bool {
    matches!(
        body,
        Body::Select(_) | Body::Insert(_) | Body::Update(_) | Body::Delete(_) | Body::Explain(_)
    )
}

/// Runs a statement's body. The row statements run under a small stack frame: every other
/// body runs out of line in [`run_other`].
fn run_body(st: &mut Context, body: &Body, params: &[Value]) -> SqlResult<Output> {
    match body {
        Body::Select(q) => select(st, q, params),
        Body::Insert(i) => insert::insert(st, i, params),
        Body::Update(u) => dml::update(st, u, params),
        Body::Delete(d) => dml::delete(st, d, params),
        other => run_other(st, other, params),
    }
}

/// A SELECT on tables.
fn select(st: &mut Context, q: &query::Query, params: &[Value]) -> SqlResult<Output> {
    st.count(Counter::ComSelect);
    let mut ex = run::Exec::new(st, params);
    ex.lock = select_lock(st, q);
    let rows = ex.query(q)?;
    ex.flush();
    Ok(Output::Rows(run::result_set(q, rows)))
}

/// Every body but a row statement's. Never inlined: its arms' locals would otherwise widen
/// the stack frame each row statement runs under (cold stack lines are cache misses).
#[inline(never)]
fn run_other(st: &mut Context, body: &Body, params: &[Value]) -> SqlResult<Output> {
    match body {
        Body::Select(q) => select(st, q, params),
        Body::Insert(i) => insert::insert(st, i, params),
        Body::Update(u) => dml::update(st, u, params),
        Body::Delete(d) => dml::delete(st, d, params),
        Body::CreateTable(c) => ddl::create_table(st, c),
        Body::CreateIndex(c) => ddl::create_index(st, c),
        Body::AlterTable(a) => alter::alter_table(st, a),
        Body::DropTables(d) => ddl::drop_tables(st, d),
        Body::DropIndex(d) => ddl::drop_index(st, d),
        Body::Truncate(t) => {
            st.count(Counter::ComTruncate);
            metadata_lock::under_exclusive_locks(st, std::slice::from_ref(t), || {
                t.truncate();
                Ok(())
            })?;
            Ok(Output::ok())
        }
        Body::TruncateVirtual(v) => crate::introspection::pfs_tables::truncate(st, *v),
        Body::Analyze(tables) => ddl::analyze(st, tables),
        Body::Show(s) => show::execute(st, s),
        Body::Explain(inner) => {
            st.count(Counter::ComExplain);
            explain::execute(st, inner, params)
        }
    }
}

/// How a SELECT's base-table reads lock: its FOR UPDATE / FOR SHARE clause, or, under
/// SERIALIZABLE with autocommit off, a shared lock on every plain SELECT.
fn select_lock(st: &Context, q: &query::Query) -> Option<run::ReadLock> {
    use crate::engine::lock::WaitPolicy;
    use crate::trx::ScanLockMode;
    match &q.lock {
        Some(l) => Some(run::ReadLock {
            mode: if l.exclusive {
                ScanLockMode::Exclusive
            } else {
                ScanLockMode::Shared
            },
            policy: if l.nowait {
                WaitPolicy::NoWait
            } else if l.skip_locked {
                WaitPolicy::SkipLocked
            } else {
                WaitPolicy::Wait
            },
            update: false,
        }),
        None => {
            let serializable = st
                .trx
                .borrow()
                .as_ref()
                .is_some_and(|t| t.isolation == crate::trx::Isolation::Serializable);
            (serializable && !st.autocommit()).then_some(run::ReadLock {
                mode: ScanLockMode::Shared,
                policy: WaitPolicy::Wait,
                update: false,
            })
        }
    }
}

#[cfg(test)]
mod tests;
