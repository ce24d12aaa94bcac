//! CHECK constraints: declared in CREATE TABLE (as a table constraint or a column option)
//! and ALTER TABLE, named as MySQL names them (`<table>_chk_<n>`), kept as text in the
//! table's definition, bound over the table's columns when an INSERT or UPDATE is planned,
//! and enforced on every row written: a row for which an enforced check is FALSE (not NULL)
//! is refused with 3819.

use sqlparser::ast::{self, Expr};
use sqlparser::dialect::MySqlDialect;
use sqlparser::parser::Parser;

use crate::context::Context;
use crate::engine::{CheckDef, Direction, KeyRange, Table};
use crate::error::{ErrorCode, SqlError, SqlResult};
use crate::exec::run::Exec;
use crate::exec::scope::Scope;
use crate::exec::sources::build_table_columns;
use crate::exec::Planner;
use crate::sql::eval::truth;
use crate::sql::expr::BoundExpr;
use crate::value::Value;
use crate::vars::Registry;

/// The expression text a check keeps: identifiers backquoted, as MySQL prints them.
pub fn check_text(e: &Expr) -> String {
    let mut e = e.clone();
    let _ = ast::visit_expressions_mut(&mut e, |x| {
        match x {
            Expr::Identifier(i) => i.quote_style = Some('`'),
            Expr::CompoundIdentifier(parts) => {
                for i in parts {
                    i.quote_style = Some('`');
                }
            }
            _ => {}
        }
        std::ops::ControlFlow::<()>::Continue(())
    });
    e.to_string()
}

/// A check as declared: `name` None takes the table's next `<table>_chk_<n>`, counting on
/// from the generated names `taken` already has.
pub fn declare(
    table: &str,
    name: Option<&str>,
    e: &Expr,
    enforced: bool,
    taken: &[CheckDef],
) -> CheckDef {
    let name = name.map(str::to_string).unwrap_or_else(|| {
        let prefix = format!("{table}_chk_");
        let n = taken
            .iter()
            .filter_map(|c| c.name.strip_prefix(&prefix)?.parse::<u32>().ok())
            .max()
            .unwrap_or(0);
        format!("{prefix}{}", n + 1)
    });
    CheckDef {
        name,
        expr: check_text(e),
        enforced,
    }
}

/// The check a table constraint declares (None for other constraints); a subquery in it is
/// 3814, as in MySQL (a check reads only the row it checks).
pub fn from_constraint(
    table: &str,
    k: &ast::TableConstraint,
    taken: &[CheckDef],
) -> SqlResult<Option<CheckDef>> {
    let ast::TableConstraint::Check(c) = k else {
        return Ok(None);
    };
    let check = declare(
        table,
        c.name.as_ref().map(|n| n.value.as_str()),
        &c.expr,
        c.enforced != Some(false),
        taken,
    );
    let subquery = ast::visit_expressions(&*c.expr, |e| match e {
        Expr::Subquery(_)
        | Expr::Exists { .. }
        | Expr::In {
            target: ast::InTarget::Subquery(_) | ast::InTarget::Table { .. },
            ..
        } => std::ops::ControlFlow::Break(()),
        _ => std::ops::ControlFlow::Continue(()),
    });
    if subquery.is_break() {
        return Err(SqlError::new(
            ErrorCode::CheckConstraintFunctionIsNotAllowed,
            format!(
                "An expression of a check constraint '{}' contains disallowed function.",
                check.name
            ),
        ));
    }
    Ok(Some(check))
}

/// A table's enforced checks, bound over its columns (a row of the table is the input).
#[derive(Debug, Clone, Default)]
pub struct BoundChecks(Vec<(String, BoundExpr)>);

impl BoundChecks {
    /// Binds the enforced checks of `table` (in database `db`) for a statement's plan.
    pub fn plan(p: &Planner<'_>, db: &str, table: &Table) -> SqlResult<BoundChecks> {
        BoundChecks::bind(&p.st.core.vars, db, table)
    }

    fn bind(vars: &Registry, db: &str, table: &Table) -> SqlResult<BoundChecks> {
        let checks = table.def().checks();
        if checks.iter().all(|c| !c.enforced) {
            return Ok(BoundChecks::default());
        }
        let mut scope = Scope::new(vars);
        scope.push(
            table.name(),
            db,
            build_table_columns(table, db, table.name()),
        )?;
        let dialect = MySqlDialect {};
        checks
            .iter()
            .filter(|c| c.enforced)
            .map(|c| {
                let e = Parser::new(&dialect)
                    .try_with_sql(&c.expr)
                    .and_then(|mut parser| parser.parse_expr())
                    .map_err(|e| crate::sql::parse_error(&c.expr, &e))?;
                let bound = crate::sql::expr::Binder::new(&scope).bind(&e)?;
                Ok((c.name.clone(), bound))
            })
            .collect::<SqlResult<_>>()
            .map(BoundChecks)
    }

    /// 3819 for the first check `row` (the table's columns in order) makes FALSE.
    pub fn verify(&self, ex: &Exec<'_>, row: &[Value]) -> SqlResult<()> {
        for (name, e) in &self.0 {
            if truth(&ex.eval(e, row)?) == Some(false) {
                return Err(SqlError::new(
                    ErrorCode::CheckConstraintViolated,
                    format!("Check constraint '{name}' is violated."),
                ));
            }
        }
        Ok(())
    }
}

/// 3819 for the first row of `table` that an enforced check makes FALSE (ALTER TABLE checks
/// the rows it keeps against the checks they will be under).
pub fn verify_rows(st: &Context, db: &str, table: &Table) -> SqlResult<()> {
    let checks = BoundChecks::bind(&st.core.vars, db, table)?;
    if checks.0.is_empty() {
        return Ok(());
    }
    let ex = Exec::new(st, &[]);
    for item in table.scan(0, KeyRange::all(), Direction::Forward) {
        if let Some(row) = item.row {
            checks.verify(&ex, &row)?;
        }
    }
    Ok(())
}
