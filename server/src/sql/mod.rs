//! The SQL front end: parse with sqlparser (MySQL dialect), plan into our own bound form
//! ([`Plan`]), execute against the session and server. Prepared statements are parsed and
//! planned once and executed many times with parameters.

pub mod admin;
pub mod depth;
pub mod env;
pub mod eval;
pub mod expr;
pub mod extra_parse;
pub mod format;
pub mod functions;
pub mod output;
pub mod plan;
pub mod select;
pub mod set;
pub mod show;
pub mod stack;
pub mod transaction;

pub use output::{Output, ResultSet};
pub use plan::{Plan, PreparedStmt};

use sqlparser::ast::Statement;
use sqlparser::dialect::MySqlDialect;
use sqlparser::parser::{Parser, ParserError};
use sqlparser::tokenizer::Tokenizer;

use crate::context::Context;
use crate::error::{ErrorCode, SqlError, SqlResult};
use crate::value::Value;

/// Turns a sqlparser error into MySQL's 1064 with the text near the error position (1436
/// when the parser's own recursion limit stopped it).
pub fn parse_error(sql: &str, e: &ParserError) -> SqlError {
    if matches!(e, ParserError::RecursionLimitExceeded) {
        return SqlError::new(
            ErrorCode::StackOverrunNeedMore,
            "Thread stack overrun: the statement nests brackets, subqueries or prefix operators \
             too deeply",
        );
    }
    let msg = e.to_string();
    // sqlparser reports "... at Line: L, Column: C"; point the near-text there.
    let near = msg
        .rsplit_once("Line: ")
        .and_then(|(_, pos)| {
            let (l, c) = pos.split_once(", Column: ")?;
            let line: usize = l.trim().parse().ok()?;
            let col: usize = c.trim().parse().ok()?;
            let start: usize = sql
                .split_inclusive('\n')
                .take(line.saturating_sub(1))
                .map(str::len)
                .sum();
            let offset = sql
                .get(start..)?
                .char_indices()
                .nth(col.saturating_sub(1))
                .map(|(i, _)| start + i)?;
            sql.get(offset..)
        })
        .unwrap_or("");
    SqlError::parse(near)
}

/// Tokenizes `sql`, bounds its nesting ([`depth::check`]) and parses it: the outer error is
/// the nesting bound, the inner one sqlparser's.
fn parse_bounded(sql: &str) -> SqlResult<Result<Vec<Statement>, ParserError>> {
    let dialect = MySqlDialect {};
    let tokens = match Tokenizer::new(&dialect, sql).tokenize_with_location() {
        Ok(t) => t,
        Err(e) => return Ok(Err(e.into())),
    };
    depth::check(&tokens)?;
    Ok(Parser::new(&dialect)
        .with_tokens_with_locations(tokens)
        .parse_statements())
}

/// Parses one or more statements (`;`-separated), refusing any that nest deeper than
/// [`depth::MAX_DEPTH`].
pub fn parse(sql: &str) -> SqlResult<Vec<Statement>> {
    match parse_bounded(sql)? {
        Ok(s) => Ok(s),
        Err(e) => {
            let rewritten =
                crate::exec::rewrite_lock_in_share_mode(sql).ok_or_else(|| parse_error(sql, &e))?;
            parse_bounded(&rewritten)?.map_err(|_| parse_error(sql, &e))
        }
    }
}

/// Plans the text of one statement (hand-parsed forms first, then sqlparser).
fn plan_one(st: &Context, sql: &str) -> SqlResult<Vec<PreparedStmt>> {
    if let Some(p) = extra_parse::try_plan(st, sql)? {
        return Ok(vec![p]);
    }
    let stmts = parse(sql)?;
    if stmts.is_empty() {
        return Err(SqlError::new(ErrorCode::EmptyQuery, "Query was empty"));
    }
    stmts.iter().map(|s| plan::plan(st, s, sql)).collect()
}

/// Runs a COM_QUERY: every statement in it (more than one only with multi-statements); stops
/// at the first error, which is the last element.
pub fn run_text(st: &mut Context, sql: &str) -> Vec<SqlResult<Output>> {
    let trimmed = sql.trim().trim_end_matches(';').trim();
    if trimmed.is_empty() {
        return vec![Err(SqlError::new(ErrorCode::EmptyQuery, "Query was empty"))];
    }
    // Each statement is summed under its digest (events_statements_summary_by_digest).
    let mut probe = crate::digest::TextProbe::begin(st, trimmed);
    let plans = match plan_one(st, trimmed) {
        Ok(p) => p,
        Err(e) => {
            let r = Err(e);
            probe.done(st, &r);
            return vec![r];
        }
    };
    if plans.len() > 1 && !st.multi_statements {
        // Without multi-statements MySQL parses only the first and reports the rest as a syntax
        // error; sqlparser split them, so answer as MySQL does for the whole text.
        let rest = trimmed.split_once(';').map(|(_, r)| r.trim()).unwrap_or("");
        let r = Err(SqlError::parse(rest));
        probe.done(st, &r);
        return vec![r];
    }
    let mut out = Vec::with_capacity(plans.len());
    for p in &plans {
        let r = execute(st, p, &[]);
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
    let p = plans.remove(0);
    if !p.plan.preparable() {
        return Err(SqlError::new(
            ErrorCode::UnsupportedPs,
            "This command is not supported in the prepared statement protocol yet",
        ));
    }
    Ok(p)
}

/// Executes a planned statement with parameter values (none for text statements).
pub fn execute(st: &mut Context, p: &PreparedStmt, params: &[Value]) -> SqlResult<Output> {
    if params.len() < p.params {
        return Err(SqlError::new(
            ErrorCode::WrongArguments,
            "Incorrect arguments to mysqld_stmt_execute",
        ));
    }
    // Every statement but SHOW WARNINGS/ERRORS starts a new diagnostics area, as in MySQL.
    if !matches!(p.plan, Plan::Show(show::ShowPlan::Warnings { .. })) {
        st.warnings.clear();
    }
    let r = plan::execute(st, &p.plan, params);
    st.take_shared_warnings();
    r
}
