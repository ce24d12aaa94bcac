//! The file statements as plans: `LOAD DATA [LOCAL] INFILE` and `SELECT ... INTO
//! OUTFILE/DUMPFILE` (syntax in [`crate::sql::load_syntax`], execution in
//! [`crate::exec::load_data`] and [`crate::exec::outfile`]). A LOCAL load asks the client for
//! its file through a callback the session supplies, after the checks MySQL makes first.

use crate::context::Context;
use crate::error::{SqlError, SqlResult};
use crate::exec::{load_data, outfile};
use crate::sql::load_syntax::{self, ExportClause, LoadDataSyntax};
use crate::sql::output::Output;
use crate::stmt::plan::{Plan, PreparedStmt};
use crate::stmt::transaction;
use crate::value::Value;

/// A planned LOAD DATA (resolved against the catalog when it runs: it cannot be prepared).
#[derive(Debug, Clone)]
pub struct LoadDataPlan {
    syntax: LoadDataSyntax,
    sql: String,
}

impl LoadDataPlan {
    /// Whether the client sends the file (LOCAL).
    pub fn local(&self) -> bool {
        self.syntax.local
    }
}

/// A planned SELECT ... INTO OUTFILE/DUMPFILE: the SELECT without its export clause.
#[derive(Debug, Clone)]
pub struct OutfilePlan {
    select: PreparedStmt,
    clause: ExportClause,
}

/// Asks the client for a LOCAL file by name and returns its bytes.
pub type FetchLocal<'a> = dyn FnMut(&str) -> SqlResult<Vec<u8>> + 'a;

/// Plans a file statement (with the statements after a LOAD DATA in a multi-statement
/// text); None when `sql` is not one. `plan_text` plans other text: the SELECT left when an
/// export clause is cut out, the statements after a LOAD DATA.
pub fn try_plan(
    st: &Context,
    sql: &str,
    plan_text: impl FnOnce(&Context, &str) -> SqlResult<Vec<PreparedStmt>>,
) -> SqlResult<Option<Vec<PreparedStmt>>> {
    let simple = |plan| PreparedStmt {
        plan,
        params: 0,
        columns: Vec::new(),
    };
    if let Some(l) = load_syntax::parse_load(sql) {
        let l = l?;
        check_charset(l.charset.as_deref())?;
        let (own, rest) = match l.rest {
            Some(at) => (sql[..at].trim_end(), Some(&sql[at..])),
            None => (sql, None),
        };
        let plan = LoadDataPlan {
            syntax: l.clone(),
            sql: own.to_string(),
        };
        let mut plans = vec![simple(Plan::LoadData(Box::new(plan)))];
        if let Some(rest) = rest {
            plans.extend(plan_text(st, rest)?);
        }
        return Ok(Some(plans));
    }
    if let Some(split) = load_syntax::split_export(sql) {
        let (rest, clause) = split?;
        check_charset(clause.charset.as_deref())?;
        let mut plans = plan_text(st, &rest)?;
        if plans.len() != 1 {
            return Err(SqlError::parse(&rest));
        }
        let select = plans.remove(0);
        if !is_query(&select.plan) {
            return Err(SqlError::parse(&rest));
        }
        let params = select.params;
        return Ok(Some(vec![PreparedStmt {
            plan: Plan::Outfile(Box::new(OutfilePlan { select, clause })),
            params,
            columns: Vec::new(),
        }]));
    }
    Ok(None)
}

/// 1115 for an unknown `CHARACTER SET` (a known one is accepted; file bytes are not
/// converted).
fn check_charset(name: Option<&str>) -> SqlResult<()> {
    match name {
        Some(cs) if !cs.eq_ignore_ascii_case("binary") => {
            crate::sql::collations::resolve(Some(cs), None).map(|_| ())
        }
        _ => Ok(()),
    }
}

/// Whether a plan is a SELECT (the only statement an export clause belongs to).
fn is_query(p: &Plan) -> bool {
    match p {
        Plan::Select(_) => true,
        Plan::Table(t) => matches!(t.body, crate::exec::Body::Select(_)),
        _ => false,
    }
}

/// Executes a server-side LOAD DATA (a LOCAL one without its file is refused as MySQL
/// refuses it when the client cannot send one).
pub fn execute_load(st: &mut Context, p: &LoadDataPlan) -> SqlResult<Output> {
    load_data::check_before_read(st, &p.syntax)?;
    if p.syntax.local {
        return Err(SqlError::unsupported("LOAD DATA LOCAL here"));
    }
    transaction::statement(st, true, |st| {
        load_data::execute(st, &p.syntax, &p.sql, None)
    })
}

/// Executes LOAD DATA LOCAL: checks, asks the client for the file, loads it. `first` says
/// whether it is the first statement of its COM_QUERY (the file request must come before
/// any other result of the query).
pub fn execute_local(
    st: &mut Context,
    p: &LoadDataPlan,
    first: bool,
    fetch: &mut FetchLocal<'_>,
) -> SqlResult<Output> {
    st.begin_diagnostics();
    let r = load_local(st, p, first, fetch);
    st.take_shared_warnings();
    if let Err(e) = &r {
        st.record_error(e);
    }
    r
}

fn load_local(
    st: &mut Context,
    p: &LoadDataPlan,
    first: bool,
    fetch: &mut FetchLocal<'_>,
) -> SqlResult<Output> {
    load_data::check_before_read(st, &p.syntax)?;
    if !first {
        return Err(SqlError::unsupported(
            "LOAD DATA LOCAL after another statement of a multi-statement query",
        ));
    }
    let data = fetch(&p.syntax.file)?;
    transaction::statement(st, true, |st| {
        load_data::execute(st, &p.syntax, &p.sql, Some(data))
    })
}

/// Executes SELECT ... INTO OUTFILE/DUMPFILE.
pub fn execute_outfile(st: &mut Context, p: &OutfilePlan, params: &[Value]) -> SqlResult<Output> {
    crate::stmt::privilege_checks::check(st, &p.select.plan)?;
    outfile::execute(st, &p.clause, |st| {
        crate::stmt::plan::execute(st, &p.select.plan, params)
    })
}
