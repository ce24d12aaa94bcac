//! Statements: plans every statement into a [`Plan`] (table statements through `exec`,
//! the rest here: SET, SHOW, transactions, accounts, administration) and runs it against a
//! [`Context`], with its digest measured. Prepared statements are parsed and planned once
//! and executed many times with parameters.

pub mod account_apply;
pub mod account_stmts;
pub mod admin;
pub mod checksum_table;
pub mod extra_parse;
pub mod file_stmts;
pub mod plan;
pub(crate) mod plan_cache;
pub mod privilege_checks;
pub mod probe;
pub mod scan;
pub mod select;
pub mod set;
pub mod shapes;
pub mod show;
pub mod show_create_database;
pub mod show_engines;
pub mod show_replication;
pub mod show_routines;
pub mod show_table_status;
pub mod table_locks;
pub mod tokens;
pub mod transaction;
pub mod update_modifiers;

pub use plan::{Plan, PreparedStmt};

use crate::context::Context;
use crate::error::{ErrorCode, SqlError, SqlResult};
use crate::sql::{parse, Output};
use crate::value::Value;

/// A text's plans: made for it, or its shape's plan with the text's literals as parameters.
enum Planned {
    Fresh(Vec<PreparedStmt>),
    Reused(plan_cache::Hit),
}

impl Planned {
    fn stmts(&self) -> &[PreparedStmt] {
        match self {
            Planned::Fresh(p) => p,
            Planned::Reused(hit) => std::slice::from_ref(&*hit.stmt),
        }
    }

    fn params(&self) -> &[Value] {
        match self {
            Planned::Fresh(_) => &[],
            Planned::Reused(hit) => &hit.params,
        }
    }
}

/// Plans the text of one statement (hand-parsed forms first, then sqlparser).
fn plan_one(st: &Context, sql: &str) -> SqlResult<Vec<PreparedStmt>> {
    match plan_text(st, sql, None)? {
        Planned::Fresh(p) => Ok(p),
        // Not reached: only a text parsed through its shape reuses a plan.
        Planned::Reused(hit) => Ok(vec![PreparedStmt::clone(&hit.stmt)]),
    }
}

/// [`plan_one`]; with `digests`, the text is parsed through the connection's statement
/// shapes ([`shapes`]) and `digests` receives the text's digests when its shape knew them,
/// and a text whose shape keeps a plan the session may use comes back as that plan with the
/// text's literals as parameters ([`plan_cache`]).
fn plan_text(
    st: &Context,
    sql: &str,
    digests: Option<&mut Option<shapes::Digests>>,
) -> SqlResult<Planned> {
    let fresh = |p| Ok(Planned::Fresh(p));
    if let Some(p) = extra_parse::try_plan(st, sql)? {
        return fresh(vec![p]);
    }
    if let Some(p) = file_stmts::try_plan(st, sql, plan_one)? {
        return fresh(p);
    }
    if let Some(tables) = table_locks::parse(st, sql)? {
        return fresh(vec![PreparedStmt {
            plan: Plan::LockTables(tables),
            params: 0,
            columns: Vec::new(),
        }]);
    }
    if let Some(c) = checksum_table::parse(sql) {
        return fresh(vec![PreparedStmt {
            plan: Plan::ChecksumTable(c),
            params: 0,
            columns: Vec::new(),
        }]);
    }
    if let Some(plan) = show_table_status::parse(st, sql)? {
        return fresh(vec![PreparedStmt {
            plan: Plan::Show(plan),
            params: 0,
            columns: Vec::new(),
        }]);
    }
    if let Some(columns) = show_routines::parse(st, sql)? {
        return fresh(vec![PreparedStmt {
            plan: Plan::Show(show::ShowPlan::Empty(columns)),
            params: 0,
            columns: Vec::new(),
        }]);
    }
    if let Some(s) = show_create_database::parse(sql) {
        return fresh(vec![PreparedStmt {
            plan: Plan::ShowCreateDatabase(s),
            params: 0,
            columns: Vec::new(),
        }]);
    }
    if let Some(insert) = crate::exec::insert_values::parse_several(sql) {
        return fresh(vec![plan::plan_owned(st, insert, sql)?]);
    }
    let rewritten = update_modifiers::rewrite(sql)?;
    let parsed = match digests {
        Some(out) if rewritten.is_none() => {
            match shapes::parse_or_reuse(st, sql, st.core.digests.enabled()) {
                Ok(Err(reused)) => {
                    *out = reused.digests;
                    return Ok(Planned::Reused(reused.hit));
                }
                Ok(Ok(p)) => {
                    *out = p.digests;
                    Ok(p.statements)
                }
                Err(e) => Err(e),
            }
        }
        _ => parse(rewritten.as_deref().unwrap_or(sql)),
    };
    let sql = rewritten.as_deref().unwrap_or(sql);
    let stmts = match parsed {
        Err(e) => {
            let plain = admin::database_without_encryption(sql);
            let text = plain.as_deref().unwrap_or(sql);
            match admin::create_schema_as_database(text) {
                Some(database) => parse(&database).map_err(|_| e)?,
                None if plain.is_some() => parse(text).map_err(|_| e)?,
                None => return Err(e),
            }
        }
        ok => ok?,
    };
    if stmts.is_empty() {
        return Err(SqlError::new(ErrorCode::EmptyQuery, "Query was empty"));
    }
    stmts
        .into_iter()
        .map(|s| match s {
            sqlparser::ast::Statement::RenameTable(pairs) => rename_table(st, &pairs, sql),
            s => plan::plan_owned(st, s, sql),
        })
        .collect::<SqlResult<_>>()
        .map(Planned::Fresh)
}

/// `RENAME TABLE a TO b` runs as `ALTER TABLE a RENAME TO b`, which needs what MySQL's RENAME
/// TABLE needs (ALTER and DROP on the old name, CREATE and INSERT on the new one). Renaming
/// several tables at once (atomic in MySQL) is not supported.
fn rename_table(
    st: &Context,
    pairs: &[sqlparser::ast::RenameTable],
    sql: &str,
) -> SqlResult<PreparedStmt> {
    let [pair] = pairs else {
        return Err(SqlError::unsupported("RENAME TABLE of more than one table"));
    };
    let alter = format!("ALTER TABLE {} RENAME TO {}", pair.old_name, pair.new_name);
    match parse(&alter)?.as_slice() {
        [s] => plan::plan(st, s, sql),
        _ => Err(SqlError::parse(sql)),
    }
}

/// Runs a COM_QUERY: every statement in it (more than one only with multi-statements); stops
/// at the first error, which is the last element. A LOAD DATA LOCAL fails: there is no
/// client to send its file (see [`run_text_with_files`]).
pub fn run_text(st: &mut Context, sql: &str) -> Vec<SqlResult<Output>> {
    run_text_with_files(st, sql, &mut |_| {
        Err(SqlError::unsupported(
            "LOAD DATA LOCAL without a client connection",
        ))
    })
}

/// [`run_text`] for a client connection: `fetch` asks the client for the file of a LOAD
/// DATA LOCAL.
pub fn run_text_with_files(
    st: &mut Context,
    sql: &str,
    fetch: &mut file_stmts::FetchLocal<'_>,
) -> Vec<SqlResult<Output>> {
    let trimmed = sql.trim().trim_end_matches(';').trim();
    if trimmed.is_empty() {
        return vec![Err(SqlError::new(ErrorCode::EmptyQuery, "Query was empty"))];
    }
    // Each statement is summed under its digest (events_statements_summary_by_digest).
    let mut probe = probe::TextProbe::begin(st, trimmed);
    let mut digests = None;
    let planned = plan_text(st, trimmed, Some(&mut digests));
    if let Some(d) = digests {
        probe.use_digests(d);
    }
    let plans = match planned {
        Ok(p) => p,
        Err(e) => {
            st.begin_diagnostics();
            st.record_error(&e);
            let r = Err(e);
            probe.done(st, &r);
            return vec![r];
        }
    };
    if let Planned::Reused(_) = &plans {
        st.count(crate::vars::Counter::TpbedTextPlanCacheHits);
    }
    let params = plans.params();
    let plans = plans.stmts();
    if plans.len() > 1 && !st.multi_statements {
        // Without multi-statements MySQL parses only the first and reports the rest as a syntax
        // error; sqlparser split them, so answer as MySQL does for the whole text.
        let rest = trimmed.split_once(';').map(|(_, r)| r.trim()).unwrap_or("");
        let e = SqlError::parse(rest);
        st.begin_diagnostics();
        st.record_error(&e);
        let r = Err(e);
        probe.done(st, &r);
        return vec![r];
    }
    let keep = reads_diagnostics(trimmed);
    let mut out = Vec::with_capacity(plans.len());
    for (i, p) in plans.iter().enumerate() {
        let r = match &p.plan {
            Plan::LoadData(l) if l.local() => file_stmts::execute_local(st, l, i == 0, fetch),
            _ => execute_keeping(st, p, params, keep),
        };
        probe.done(st, &r);
        let failed = r.is_err();
        out.push(r);
        if failed {
            break;
        }
    }
    out
}

/// Prepares a statement for COM_STMT_PREPARE.
pub fn prepare(st: &Context, sql: &str) -> SqlResult<PreparedStmt> {
    let trimmed = sql.trim().trim_end_matches(';').trim();
    let mut plans = plan_one(st, trimmed)?;
    if plans.len() != 1 {
        return Err(SqlError::parse(
            trimmed.split_once(';').map(|(_, r)| r).unwrap_or(""),
        ));
    }
    let mut p = plans.remove(0);
    if let Plan::Table(t) = &p.plan {
        p.columns = t.prepared_columns();
    }
    if !p.plan.preparable() {
        return Err(SqlError::new(
            ErrorCode::UnsupportedPs,
            "This command is not supported in the prepared statement protocol yet",
        ));
    }
    Ok(p)
}

/// Whether a statement text reads `@@warning_count` or `@@error_count`: as in MySQL, such a
/// statement keeps the diagnostics area it reports on instead of starting its own.
fn reads_diagnostics(sql: &str) -> bool {
    let b = sql.as_bytes();
    let at = |i: usize, word: &[u8]| {
        b.get(i..i + word.len())
            .is_some_and(|s| s.eq_ignore_ascii_case(word))
    };
    (0..b.len()).any(|i| {
        b[i] == b'@'
            && at(i, b"@@")
            && [
                b"warning_count".as_slice(),
                b"error_count",
                b"session.warning_count",
                b"session.error_count",
            ]
            .iter()
            .any(|w| at(i + 2, w))
    })
}

/// Executes a planned statement with parameter values (none for text statements).
pub fn execute(st: &mut Context, p: &PreparedStmt, params: &[Value]) -> SqlResult<Output> {
    execute_keeping(st, p, params, false)
}

/// [`execute`]; `keep`: the statement reads the diagnostics counts, so it keeps the area.
fn execute_keeping(
    st: &mut Context,
    p: &PreparedStmt,
    params: &[Value],
    keep: bool,
) -> SqlResult<Output> {
    if params.len() < p.params {
        return Err(SqlError::new(
            ErrorCode::WrongArguments,
            "Incorrect arguments to mysqld_stmt_execute",
        ));
    }
    // Every statement but SHOW WARNINGS/ERRORS (and one reading their counts) starts a new
    // diagnostics area, as in MySQL.
    if keep {
        st.warnings.keep();
    } else if !matches!(p.plan, Plan::Show(show::ShowPlan::Warnings { .. })) {
        st.begin_diagnostics();
    }
    let r = privilege_checks::check(st, &p.plan).and_then(|()| plan::execute(st, &p.plan, params));
    if plan_cache::moves_epoch(&p.plan) {
        shapes::session_changed(st);
    }
    st.take_shared_warnings();
    if let Err(e) = &r {
        st.record_error(e);
    }
    r
}
