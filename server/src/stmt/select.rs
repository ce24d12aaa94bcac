//! SELECT without tables (`SELECT 1+1`, `SELECT @@version_comment LIMIT 1`, `... FROM DUAL`):
//! expressions evaluated once, filtered by WHERE, cut by LIMIT.

use sqlparser::ast::{self, SelectItem, SetExpr, TableFactor};

use crate::context::Context;
use crate::error::{SqlError, SqlResult};
use crate::sql::env::StmtEnv;
use crate::sql::eval::{eval, to_i64, truth};
use crate::sql::expr::{Binder, BoundExpr, Resolver};
use crate::sql::output::{column_for, date_column, Output, ResultSet};
use crate::stmt::plan::{Plan, PreparedStmt};
use crate::value::Value;
use crate::vars::{Counter, Registry};

/// A planned table-less SELECT.
#[derive(Debug, Clone)]
pub struct SelectPlan {
    /// Column labels.
    pub names: Vec<String>,
    /// Column expressions.
    pub exprs: Vec<BoundExpr>,
    /// WHERE.
    pub filter: Option<BoundExpr>,
    /// LIMIT.
    pub limit: Option<BoundExpr>,
    /// OFFSET.
    pub offset: Option<BoundExpr>,
}

/// Resolves names when there is no table: every column reference is unknown.
struct NoTables<'a> {
    registry: &'a Registry,
}

impl Resolver for NoTables<'_> {
    fn column(&self, _q: Option<&str>, name: &str) -> SqlResult<usize> {
        Err(SqlError::new(
            crate::error::ErrorCode::BadField,
            format!("Unknown column '{name}' in 'field list'"),
        ))
    }
    fn registry(&self) -> &Registry {
        self.registry
    }
}

/// Whether a SELECT without tables holds a subquery (the table planner runs those).
fn has_subquery(q: &ast::Query) -> bool {
    let mut found = false;
    let _ = ast::visit_expressions(q, |e| {
        found |= matches!(
            e,
            ast::Expr::Subquery(_)
                | ast::Expr::Exists { .. }
                | ast::Expr::In {
                    target: ast::InTarget::Subquery(_),
                    ..
                }
        );
        std::ops::ControlFlow::<()>::Continue(())
    });
    found
}

/// Plans a query.
pub fn plan(st: &Context, q: &ast::Query, sql: &str) -> SqlResult<PreparedStmt> {
    if reads_tables(q)? {
        return on_tables(st, Box::new(q.clone()), sql);
    }
    without_tables(st, q, sql)
}

/// Plans a query the caller has no further use for: one over tables goes to the table
/// planner as it is, not copied (a copy recurses once per level of the tree, as deep as the
/// nesting bound allows).
pub fn plan_owned(st: &Context, q: Box<ast::Query>, sql: &str) -> SqlResult<PreparedStmt> {
    if reads_tables(&q)? {
        return on_tables(st, q, sql);
    }
    without_tables(st, &q, sql)
}

/// Whether the table planner plans `q`: it reads a table other than DUAL or holds a
/// subquery (1235 for set operations).
fn reads_tables(q: &ast::Query) -> SqlResult<bool> {
    let SetExpr::Select(s) = q.body.as_ref() else {
        return Err(SqlError::unsupported("UNION and other set operations"));
    };
    Ok(!is_dual(s) || has_subquery(q))
}

/// Whether a SELECT reads no table but DUAL.
fn is_dual(s: &ast::Select) -> bool {
    s.from.iter().all(|t| {
        t.joins.is_empty()
            && matches!(&t.relation, TableFactor::Table { name, .. } if name.to_string().eq_ignore_ascii_case("dual"))
    })
}

/// `q` planned by the table planner.
fn on_tables(st: &Context, mut q: Box<ast::Query>, sql: &str) -> SqlResult<PreparedStmt> {
    if let SetExpr::Select(s) = q.body.as_mut() {
        if is_dual(s) {
            s.from.clear(); // FROM DUAL names no table
        }
    }
    crate::stmt::plan::table_statement(st, ast::Statement::Query(q), sql)
}

/// A SELECT without tables (`FROM DUAL` at most).
fn without_tables(st: &Context, q: &ast::Query, sql: &str) -> SqlResult<PreparedStmt> {
    let SetExpr::Select(s) = q.body.as_ref() else {
        return Err(SqlError::unsupported("UNION and other set operations"));
    };
    let resolver = NoTables {
        registry: &st.core.vars,
    };
    let mut binder = Binder::new(&resolver);
    let mut names = Vec::new();
    let mut exprs = Vec::new();
    for item in &s.projection {
        match item {
            SelectItem::UnnamedExpr(e) => {
                let label = match crate::sql::span_text(sql, crate::sql::spans::expr_span(e)) {
                    // The span of `-5` starts at the operand; MySQL labels the column `-5`.
                    Some(t)
                        if matches!(e, ast::Expr::UnaryOp { .. })
                            && !t.starts_with(['-', '+', '!', '~']) =>
                    {
                        let sign = e.to_string().chars().next().unwrap_or('-');
                        crate::sql::label(&format!("{sign}{t}"))
                    }
                    Some(t) => crate::sql::label(t),
                    None => crate::sql::label(&e.to_string()),
                };
                names.push(label);
                exprs.push(binder.bind(e)?);
            }
            SelectItem::ExprWithAlias { expr, alias } => {
                names.push(alias.value.clone());
                exprs.push(binder.bind(expr)?);
            }
            _ => {
                return Err(SqlError::new(
                    crate::error::ErrorCode::NoTablesUsed,
                    "No tables used",
                ))
            }
        }
    }
    let filter = s.selection.as_ref().map(|w| binder.bind(w)).transpose()?;
    let (limit, offset) = match &q.limit_clause {
        None => (None, None),
        Some(ast::LimitClause::LimitOffset { limit, offset, .. }) => (
            limit.as_ref().map(|l| binder.bind(l)).transpose()?,
            offset.as_ref().map(|o| binder.bind(&o.value)).transpose()?,
        ),
        Some(ast::LimitClause::OffsetCommaLimit { offset, limit }) => {
            (Some(binder.bind(limit)?), Some(binder.bind(offset)?))
        }
    };
    let params = binder.params;
    let columns = names
        .iter()
        .zip(&exprs)
        .map(|(n, e)| {
            if e.is_date() {
                date_column(n)
            } else {
                column_for(n, static_sample(e).as_ref())
            }
        })
        .collect();
    Ok(PreparedStmt {
        plan: Plan::Select(SelectPlan {
            names,
            exprs,
            filter,
            limit,
            offset,
        }),
        params,
        columns,
    })
}

/// A value of the type an expression is known to have before it runs (for prepare metadata).
fn static_sample(e: &BoundExpr) -> Option<Value> {
    match e {
        BoundExpr::Literal(v) => Some(v.clone()),
        BoundExpr::Binary(crate::sql::expr::BinOp::Div, ..) => {
            Some(Value::Decimal(crate::value::Decimal::new(0, 4)))
        }
        BoundExpr::Binary(..)
        | BoundExpr::And(_)
        | BoundExpr::Or(_)
        | BoundExpr::Not(_)
        | BoundExpr::IsNull(..)
        | BoundExpr::Like(..) => Some(Value::Int(0)),
        _ => Some(Value::Bytes(Vec::new())),
    }
}

/// Executes a table-less SELECT.
pub fn execute(st: &mut Context, p: &SelectPlan, params: &[Value]) -> SqlResult<Output> {
    st.count(Counter::ComSelect);
    let env = StmtEnv::new(st, params);
    let keep = match &p.filter {
        Some(f) => truth(&eval(f, &env)?) == Some(true),
        None => true,
    };
    let limit = match &p.limit {
        Some(l) => to_i64(&eval(l, &env)?).unwrap_or(0),
        None => i64::MAX,
    };
    let offset = match &p.offset {
        Some(o) => to_i64(&eval(o, &env)?).unwrap_or(0),
        None => 0,
    };
    let select_limit = st.var_int(st.core.ids.sql_select_limit);
    let mut rows = Vec::new();
    if keep && limit > 0 && offset == 0 && select_limit > 0 {
        let row = p
            .exprs
            .iter()
            .map(|e| eval(e, &env))
            .collect::<SqlResult<Vec<_>>>()?;
        rows.push(row);
    }
    Ok(Output::Rows(ResultSet::computed_with_dates(
        &p.names,
        |i| p.exprs.get(i).is_some_and(BoundExpr::is_date),
        rows,
    )))
}
