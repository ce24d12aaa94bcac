//! Subqueries. Scalar subqueries `(SELECT ...)` in a SELECT over tables are planned with
//! the statement, correlated or not: the subquery's row starts with the enclosing SELECT's
//! columns, so a correlated reference is a known value to its access paths (a key value, as
//! a column of an earlier table is), and the executor runs it for each outer row.
//!
//! Uncorrelated `expr [NOT] IN (SELECT ...)` in a WHERE clause: the subquery is planned with
//! the statement and run once when the statement runs, and its first column becomes the IN
//! list, as MySQL materialises such a subquery. A plan made only to be kept (COM_QUERY's
//! planning step, COM_STMT_PREPARE) plans the subquery without running it and is marked
//! `materialized`, so [`execute`](crate::exec::execute) plans it again, running the
//! subquery under the statement's own transaction handling.

use std::collections::HashMap;
use std::ops::ControlFlow;
use std::sync::Arc;

use sqlparser::ast::{self, Expr};

use crate::error::{ErrorCode, SqlError, SqlResult};
use crate::exec::query::Query;
use crate::exec::run::Exec;
use crate::exec::scope::Scope;
use crate::exec::Planner;
use crate::sql::expr::SubqueryRef;
use crate::value::Value;

/// The key a subquery's values are kept under while its statement is bound: the address of
/// its AST node, which stays put between materialising and binding.
pub fn key(q: &ast::Query) -> usize {
    std::ptr::from_ref(q) as usize
}

/// Calls `f` with every expression of `e` that is not inside a subquery of it.
pub(crate) fn visit_own_expressions(e: &Expr, f: &mut dyn FnMut(&Expr)) {
    struct Own<'f> {
        depth: usize,
        f: &'f mut dyn FnMut(&Expr),
    }
    impl ast::Visitor for Own<'_> {
        type Break = ();
        fn pre_visit_query(&mut self, _q: &ast::Query) -> ControlFlow<()> {
            self.depth += 1;
            ControlFlow::Continue(())
        }
        fn post_visit_query(&mut self, _q: &ast::Query) -> ControlFlow<()> {
            self.depth -= 1;
            ControlFlow::Continue(())
        }
        fn pre_visit_expr(&mut self, e: &Expr) -> ControlFlow<()> {
            if self.depth == 0 {
                (self.f)(e);
            }
            ControlFlow::Continue(())
        }
    }
    let _ = ast::Visit::visit(e, &mut Own { depth: 0, f });
}

/// The scalar subqueries of a SELECT's own expressions (select list, WHERE, HAVING,
/// ORDER BY; not those nested inside them), each with its [`key`].
fn scalar_subqueries(s: &ast::Select, q: &ast::Query) -> Vec<(usize, ast::Query)> {
    let mut roots: Vec<&Expr> = Vec::new();
    for item in &s.projection {
        if let ast::SelectItem::UnnamedExpr(e) | ast::SelectItem::ExprWithAlias { expr: e, .. } =
            item
        {
            roots.push(e);
        }
    }
    roots.extend(s.selection.iter());
    roots.extend(s.having.iter());
    if let Some(ob) = &q.order_by {
        if let ast::OrderByKind::Expressions(list) = &ob.kind {
            roots.extend(list.iter().map(|o| &o.expr));
        }
    }
    let mut found = Vec::new();
    for r in roots {
        visit_own_expressions(r, &mut |x| {
            if let Expr::Subquery(sq) = x {
                found.push((key(sq), (**sq).clone()));
            }
        });
    }
    found
}

impl Planner<'_> {
    /// Plans the scalar subqueries of a SELECT (`s` of `q`) over its `scope`, which then
    /// resolves them; records which columns of enclosing SELECTs they read.
    pub(crate) fn plan_scalar_subqueries(
        &mut self,
        s: &ast::Select,
        q: &ast::Query,
        scope: &mut Scope<'_>,
    ) -> SqlResult<Vec<Arc<Query>>> {
        let mut planned = Vec::new();
        for (at, sq) in scalar_subqueries(s, q) {
            let params = self.params;
            self.outer_scope = scope.entries.clone();
            let inner = self.query(&sq);
            self.outer_scope.clear();
            let inner = inner?;
            if self.params != params {
                return Err(SqlError::unsupported(
                    "a ? placeholder in a scalar subquery",
                ));
            }
            if inner.items.len() != 1 {
                return Err(crate::sql::expr::operand_columns(1));
            }
            let own = scope.own_offset();
            scope
                .outer_used
                .borrow_mut()
                .extend(inner.outer_refs.iter().filter(|&&c| c < own));
            let inner = Arc::new(inner);
            let plan: Arc<dyn std::any::Any + Send + Sync> = inner.clone();
            scope.scalars.insert(
                at,
                SubqueryRef {
                    plan,
                    outer: inner.outer_refs.clone(),
                },
            );
            planned.push(inner);
        }
        Ok(planned)
    }

    /// The values of every `IN (SELECT ...)` subquery of `e`, by [`key`] (empty lists when
    /// the plan is only kept, see the module's doc).
    pub fn materialize_in_subqueries(&mut self, e: &Expr) -> SqlResult<HashMap<usize, Vec<Value>>> {
        let mut found = Vec::new();
        let _ = ast::visit_expressions(e, |x| {
            if let Expr::In {
                target: ast::InTarget::Subquery(q),
                ..
            } = x
            {
                found.push((key(q), (**q).clone()));
            }
            ControlFlow::<()>::Continue(())
        });
        let mut values = HashMap::new();
        for (k, q) in found {
            values.insert(k, self.in_list(&q)?);
        }
        Ok(values)
    }

    /// Plans a subquery of one column and, when the statement is about to run, runs it.
    fn in_list(&mut self, q: &ast::Query) -> SqlResult<Vec<Value>> {
        let params = self.params;
        let planned = self.query(q)?;
        if self.params != params {
            return Err(SqlError::unsupported("a ? placeholder in IN (SELECT ...)"));
        }
        if planned.items.len() != 1 {
            return Err(SqlError::new(
                ErrorCode::OperandColumns,
                "Operand should contain 1 column(s)",
            ));
        }
        self.materialized = true;
        if !self.run_subqueries {
            return Ok(Vec::new());
        }
        let rows = Exec::new(self.st, &[]).query(&planned)?;
        Ok(rows
            .into_iter()
            .filter_map(|r| r.into_iter().next())
            .collect())
    }
}
