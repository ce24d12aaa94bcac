//! Statement plans: what a parsed statement will do, with names resolved and expressions
//! bound, so a prepared statement is planned once and executed many times.

use sqlparser::ast::{self, Statement};

use crate::accounts::AuthPlugin;
use crate::context::Context;
use crate::error::{SqlError, SqlResult};
use crate::sql::expr::BoundExpr;
use crate::sql::output::Output;
use crate::stmt::admin;
use crate::stmt::select::{self, SelectPlan};
use crate::stmt::set::{self, SetItem, TxScope};
use crate::stmt::show::{self, ShowPlan};
use crate::stmt::transaction;
use crate::value::Value;

/// A planned statement.
#[derive(Debug, Clone)]
pub enum Plan {
    /// SELECT without tables.
    Select(SelectPlan),
    /// `DO expr, ...`: evaluate, discard.
    Do(Vec<BoundExpr>),
    /// `SET var = expr, ...`.
    Set(Vec<SetItem>),
    /// `SET NAMES charset [COLLATE collation]`.
    SetNames {
        /// Character set.
        charset: String,
        /// Collation, if given.
        collation: Option<String>,
    },
    /// `SET [GLOBAL|SESSION] TRANSACTION ...`.
    SetTransaction {
        /// Which characteristics change.
        scope: TxScope,
        /// New isolation level (MySQL spelling, e.g. `READ-COMMITTED`).
        isolation: Option<&'static str>,
        /// New access mode.
        read_only: Option<bool>,
    },
    /// A SHOW statement.
    Show(ShowPlan),
    /// `USE db`.
    Use(String),
    /// `CREATE DATABASE`.
    CreateDatabase {
        /// Name.
        name: String,
        /// The default collation its CHARACTER SET / COLLATE clauses name.
        collation: Option<String>,
        /// IF NOT EXISTS.
        if_not_exists: bool,
    },
    /// `DROP DATABASE`.
    DropDatabase {
        /// Name.
        name: String,
        /// IF EXISTS.
        if_exists: bool,
    },
    /// `CREATE USER`.
    CreateUser {
        /// Accounts to create: (user, host, password, plugin).
        users: Vec<(String, String, String, AuthPlugin)>,
        /// IF NOT EXISTS.
        if_not_exists: bool,
    },
    /// `DROP USER`.
    DropUser {
        /// Accounts.
        users: Vec<(String, String)>,
        /// IF EXISTS.
        if_exists: bool,
    },
    /// GRANT, REVOKE, RENAME USER, ALTER USER, SET PASSWORD, SHOW GRANTS, SHOW CREATE USER.
    Account(crate::stmt::account_stmts::AccountStmt),
    /// `KILL [QUERY|CONNECTION] id`.
    Kill {
        /// Connection id expression.
        id: BoundExpr,
        /// QUERY (else CONNECTION).
        query: bool,
    },
    /// `SHUTDOWN`.
    Shutdown,
    /// `BEGIN` / `START TRANSACTION`.
    Begin {
        /// READ ONLY (Some(true)) or READ WRITE (Some(false)); None: `transaction_read_only`.
        read_only: Option<bool>,
        /// WITH CONSISTENT SNAPSHOT.
        snapshot: bool,
    },
    /// `COMMIT`.
    Commit,
    /// `ROLLBACK`.
    Rollback,
    /// `SAVEPOINT name`.
    Savepoint(String),
    /// `ROLLBACK TO [SAVEPOINT] name`.
    RollbackTo(String),
    /// `RELEASE SAVEPOINT name`.
    ReleaseSavepoint(String),
    /// `FLUSH STATUS`.
    FlushStatus,
    /// Other FLUSH forms and `ANALYZE TABLE`-like maintenance that has nothing to do in memory.
    NoOp(&'static str),
    /// A statement on tables, planned by the table executor.
    Table(Box<crate::exec::TablePlan>),
    /// LOCK TABLES.
    LockTables(Vec<crate::stmt::table_locks::TableToLock>),
    /// UNLOCK TABLES.
    UnlockTables,
    /// SHOW CREATE DATABASE.
    ShowCreateDatabase(crate::stmt::show_create_database::ShowCreateDatabase),
    /// `CHECKSUM TABLE`.
    ChecksumTable(crate::stmt::checksum_table::ChecksumTable),
    /// `LOAD DATA [LOCAL] INFILE`.
    LoadData(Box<crate::stmt::file_stmts::LoadDataPlan>),
    /// `SELECT ... INTO OUTFILE / DUMPFILE`.
    Outfile(Box<crate::stmt::file_stmts::OutfilePlan>),
}

impl Plan {
    /// Whether COM_STMT_PREPARE accepts this statement (MySQL refuses USE, for example).
    pub fn preparable(&self) -> bool {
        !matches!(
            self,
            Plan::Use(_) | Plan::Show(ShowPlan::Warnings { .. }) | Plan::LoadData(_)
        )
    }
}

/// A planned statement with its parameter count and result columns.
#[derive(Debug, Clone)]
pub struct PreparedStmt {
    /// The plan.
    pub plan: Plan,
    /// Number of `?` placeholders.
    pub params: usize,
    /// Result column definitions as known at prepare time (empty when none; a table
    /// statement's are filled in by [`crate::stmt::prepare`] only).
    pub columns: Vec<protocol::ColumnDefinition>,
}

fn name_of(n: &ast::ObjectName) -> String {
    crate::sql::names::dotted(n)
}

/// Plans one parsed statement the caller has no further use for: a write, or a query over
/// tables, is kept in its plan as it is, not copied (every text statement is planned anew,
/// so the copy would be paid by each one, and a copy recurses once per level of the tree).
pub fn plan_owned(st: &Context, s: Statement, sql: &str) -> SqlResult<PreparedStmt> {
    match s {
        Statement::Insert(_) | Statement::Update(_) | Statement::Delete(_) => {
            table_statement(st, s, sql)
        }
        Statement::Query(q) => select::plan_owned(st, q, sql),
        s => plan(st, &s, sql),
    }
}

/// Plans one parsed statement.
pub fn plan(st: &Context, s: &Statement, sql: &str) -> SqlResult<PreparedStmt> {
    let simple = |plan: Plan| {
        Ok(PreparedStmt {
            plan,
            params: 0,
            columns: Vec::new(),
        })
    };
    match s {
        Statement::Query(q) => select::plan(st, q, sql),
        Statement::Set(set) => set::plan(st, set),
        Statement::ShowVariables { filter, global, .. } => {
            show::plan_vars(st, filter.as_ref(), *global, false)
        }
        Statement::ShowStatus { filter, global, .. } => {
            show::plan_vars(st, filter.as_ref(), *global, true)
        }
        Statement::ShowDatabases { show_options, .. } => {
            show::plan_databases(st, show_options.filter_position.as_ref())
        }
        Statement::ShowProcessList { full } => {
            simple(Plan::Show(ShowPlan::Processlist { full: *full }))
        }
        Statement::ShowVariable { variable } => show::plan_show_words(variable),
        Statement::ShowTables { .. }
        | Statement::ShowCreate { .. }
        | Statement::ShowColumns { .. } => table_statement(st, s.clone(), sql),
        Statement::Use(u) => match u {
            ast::Use::Object(n) | ast::Use::Database(n) | ast::Use::Schema(n) => {
                simple(Plan::Use(name_of(n)))
            }
            _ => Err(SqlError::unsupported("this form of USE")),
        },
        Statement::CreateDatabase {
            db_name,
            if_not_exists,
            default_charset,
            default_collation,
            ..
        } => simple(Plan::CreateDatabase {
            name: name_of(db_name),
            collation: crate::sql::collations::resolve(
                default_charset.as_deref(),
                default_collation.as_deref(),
            )?,
            if_not_exists: *if_not_exists,
        }),
        // CREATE SCHEMA is a synonym of CREATE DATABASE in MySQL.
        Statement::CreateSchema {
            schema_name: ast::SchemaName::Simple(n),
            if_not_exists,
            or_replace: false,
            ..
        } => simple(Plan::CreateDatabase {
            name: name_of(n),
            // With options it is planned as the CREATE DATABASE it stands for
            // (`admin::create_schema_as_database`).
            collation: None,
            if_not_exists: *if_not_exists,
        }),
        Statement::Drop {
            object_type,
            if_exists,
            names,
            ..
        } => match object_type {
            ast::ObjectType::Database | ast::ObjectType::Schema if names.len() == 1 => {
                simple(Plan::DropDatabase {
                    name: name_of(&names[0]),
                    if_exists: *if_exists,
                })
            }
            ast::ObjectType::Table | ast::ObjectType::Index => table_statement(st, s.clone(), sql),
            other => Err(SqlError::unsupported(&format!("DROP {other}"))),
        },
        Statement::Kill { modifier, id } => simple(Plan::Kill {
            id: BoundExpr::Literal(Value::UInt(*id)),
            query: matches!(modifier, Some(ast::KillType::Query)),
        }),
        Statement::StartTransaction { modes, .. } => simple(Plan::Begin {
            read_only: modes.iter().find_map(|m| match m {
                ast::TransactionMode::AccessMode(ast::TransactionAccessMode::ReadOnly) => {
                    Some(true)
                }
                ast::TransactionMode::AccessMode(ast::TransactionAccessMode::ReadWrite) => {
                    Some(false)
                }
                _ => None,
            }),
            snapshot: false,
        }),
        Statement::Commit { .. } => simple(Plan::Commit),
        Statement::LockTables { tables } => simple(Plan::LockTables(
            crate::stmt::table_locks::plan(st, tables)?,
        )),
        Statement::UnlockTables => simple(Plan::UnlockTables),
        Statement::Rollback {
            savepoint: None, ..
        } => simple(Plan::Rollback),
        Statement::Rollback {
            savepoint: Some(name),
            ..
        } => simple(Plan::RollbackTo(name.value.clone())),
        Statement::Savepoint { name } => simple(Plan::Savepoint(name.value.clone())),
        Statement::ReleaseSavepoint { name } => simple(Plan::ReleaseSavepoint(name.value.clone())),
        Statement::Flush { object_type, .. } => match object_type {
            ast::FlushType::Status => simple(Plan::FlushStatus),
            _ => simple(Plan::NoOp("FLUSH")),
        },
        Statement::CreateTable(_)
        | Statement::CreateIndex(_)
        | Statement::AlterTable(_)
        | Statement::Insert(_)
        | Statement::Update(_)
        | Statement::Delete(_)
        | Statement::Truncate(_)
        | Statement::Analyze(_)
        | Statement::ExplainTable { .. }
        | Statement::Explain { .. } => table_statement(st, s.clone(), sql),
        other => {
            let text = other.to_string();
            let head: String = text
                .split_whitespace()
                .take(2)
                .collect::<Vec<_>>()
                .join(" ");
            Err(SqlError::unsupported(&head))
        }
    }
}

/// Plans a statement that reads or changes tables (DDL, DML, SELECT with FROM, EXPLAIN,
/// SHOW TABLES/CREATE TABLE/COLUMNS). This is the seam where the table executor plugs in.
pub fn table_statement(st: &Context, s: Statement, sql: &str) -> SqlResult<PreparedStmt> {
    // Privileges first: an account without them learns nothing of which tables exist.
    crate::privileges::statement::check(st, &s)?;
    let p = crate::exec::plan(st, s, sql)?;
    Ok(PreparedStmt {
        plan: Plan::Table(Box::new(p.plan)),
        params: p.params,
        // Only COM_STMT_PREPARE reports them ([`crate::stmt::prepare`] fills them in).
        columns: Vec::new(),
    })
}

/// Executes a plan. A statement on tables, the usual one, runs under a small stack frame:
/// every other kind runs out of line in [`execute_other`].
pub fn execute(st: &mut Context, plan: &Plan, params: &[Value]) -> SqlResult<Output> {
    match plan {
        Plan::Table(t) => execute_table(st, t, params),
        other => execute_other(st, other, params),
    }
}

/// A statement that reads or changes tables, in its own transaction or the session's.
fn execute_table(
    st: &mut Context,
    t: &crate::exec::TablePlan,
    params: &[Value],
) -> SqlResult<Output> {
    match t.body.transactional() {
        None => {
            if t.body.commits_implicitly() {
                transaction::commit(st);
            }
            crate::exec::execute(st, t, params)
        }
        Some(writes) => {
            transaction::statement(st, writes, |st| crate::exec::execute(st, t, params))
        }
    }
}

/// Every plan but a table statement's. Never inlined: its arms' locals would otherwise widen
/// the stack frame each table statement runs under (cold stack lines are cache misses).
#[inline(never)]
fn execute_other(st: &mut Context, plan: &Plan, params: &[Value]) -> SqlResult<Output> {
    match plan {
        Plan::Table(t) => execute_table(st, t, params),
        Plan::Select(p) => select::execute(st, p, params),
        Plan::Do(exprs) => {
            let env = crate::sql::env::StmtEnv::new(st, params);
            for e in exprs {
                crate::sql::eval::eval(e, &env)?;
            }
            Ok(Output::ok())
        }
        Plan::Set(items) => set::execute(st, items, params),
        Plan::SetNames { charset, collation } => set::set_names(st, charset, collation.as_deref()),
        Plan::SetTransaction {
            scope,
            isolation,
            read_only,
        } => set::set_transaction(st, *scope, *isolation, *read_only),
        Plan::Show(p) => show::execute(st, p, params),
        Plan::Use(db) => admin::use_db(st, db),
        Plan::CreateDatabase {
            name,
            collation,
            if_not_exists,
        } => admin::create_database(st, name, collation.as_deref(), *if_not_exists),
        Plan::DropDatabase { name, if_exists } => admin::drop_database(st, name, *if_exists),
        Plan::CreateUser {
            users,
            if_not_exists,
        } => admin::create_users(st, users, *if_not_exists),
        Plan::DropUser { users, if_exists } => admin::drop_users(st, users, *if_exists),
        Plan::Account(s) => crate::stmt::account_apply::execute(st, s),
        Plan::Kill { id, query } => admin::kill(st, id, *query, params),
        Plan::Shutdown => admin::shutdown(st),
        Plan::Begin {
            read_only,
            snapshot,
        } => {
            st.count(crate::vars::Counter::ComBegin);
            Ok(transaction::begin(st, *read_only, *snapshot))
        }
        Plan::Commit => {
            st.count(crate::vars::Counter::ComCommit);
            transaction::commit(st);
            Ok(Output::ok())
        }
        Plan::Rollback => {
            st.count(crate::vars::Counter::ComRollback);
            transaction::rollback(st);
            Ok(Output::ok())
        }
        Plan::Savepoint(name) => {
            st.count(crate::vars::Counter::ComSavepoint);
            Ok(transaction::savepoint(st, name))
        }
        Plan::RollbackTo(name) => {
            st.count(crate::vars::Counter::ComRollbackToSavepoint);
            transaction::rollback_to(st, name)
        }
        Plan::ReleaseSavepoint(name) => {
            st.count(crate::vars::Counter::ComReleaseSavepoint);
            transaction::release(st, name)
        }
        Plan::FlushStatus => {
            st.count(crate::vars::Counter::ComFlush);
            st.core.flush_status(&st.conn);
            Ok(Output::ok())
        }
        Plan::NoOp(_) => Ok(Output::ok()),
        Plan::LockTables(tables) => crate::stmt::table_locks::lock(st, tables),
        Plan::UnlockTables => Ok(crate::stmt::table_locks::unlock(st)),
        Plan::ShowCreateDatabase(s) => crate::stmt::show_create_database::execute(st, s),
        Plan::ChecksumTable(c) => {
            transaction::statement(st, false, |st| crate::stmt::checksum_table::execute(st, c))
        }
        Plan::LoadData(l) => crate::stmt::file_stmts::execute_load(st, l),
        Plan::Outfile(o) => crate::stmt::file_stmts::execute_outfile(st, o, params),
    }
}
