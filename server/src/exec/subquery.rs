//! Uncorrelated `expr [NOT] IN (SELECT ...)` in a WHERE clause: the subquery is planned with
//! the statement and run once when the statement runs, and its first column becomes the IN
//! list, as MySQL materialises such a subquery. A plan made only to be kept (COM_QUERY's
//! planning step, COM_STMT_PREPARE) plans the subquery without running it and is marked
//! `materialized`, so [`execute`](crate::exec::execute) plans it again, running the
//! subquery under the statement's own transaction handling.

use std::collections::HashMap;
use std::ops::ControlFlow;

use sqlparser::ast::{self, Expr};

use crate::error::{ErrorCode, SqlError, SqlResult};
use crate::exec::run::Exec;
use crate::exec::Planner;
use crate::value::Value;

/// The key a subquery's values are kept under while its statement is bound: the address of
/// its AST node, which stays put between materialising and binding.
pub fn key(q: &ast::Query) -> usize {
    std::ptr::from_ref(q) as usize
}

impl Planner<'_> {
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
