//! Joins with `USING (...)` and `NATURAL`: the columns they name (or the columns both sides
//! share) are compared with `=`, and each pair becomes one column. The right side's copy is
//! merged away, so unqualified names and `SELECT *` see a single column, listed first, then
//! the left side's other columns, then the right side's, as MySQL lists them.

use sqlparser::ast::{self, BinaryOperator, Expr, Ident};

use crate::error::{ErrorCode, SqlError, SqlResult};
use crate::exec::errors::unknown_column;
use crate::exec::scope::Scope;

/// How a joined table is matched to what precedes it.
#[derive(Debug)]
pub enum JoinCondition<'a> {
    /// CROSS JOIN, a comma, or a JOIN without a condition.
    None,
    /// `ON expr`.
    On(&'a Expr),
    /// `USING (columns)`.
    Using(Vec<String>),
    /// `NATURAL [LEFT] JOIN`: every column name both sides have.
    Natural,
}

impl<'a> JoinCondition<'a> {
    /// The condition of a parsed join constraint.
    pub fn of(c: &'a ast::JoinConstraint) -> SqlResult<JoinCondition<'a>> {
        Ok(match c {
            ast::JoinConstraint::On(e) => JoinCondition::On(e),
            ast::JoinConstraint::Using(names) => {
                JoinCondition::Using(names.iter().map(crate::sql::names::last).collect())
            }
            ast::JoinConstraint::Natural => JoinCondition::Natural,
            ast::JoinConstraint::None => JoinCondition::None,
            ast::JoinConstraint::UsingAlias(..) => {
                return Err(SqlError::unsupported("JOIN ... USING (...) AS alias"))
            }
        })
    }
}

/// The columns of one chain of joins (one item of a FROM list) in `SELECT *` order, as
/// combined-row indexes.
#[derive(Debug, Default)]
pub struct Chain {
    order: Vec<usize>,
}

impl Chain {
    /// Adds the source just pushed onto `scope` (its columns at `offset..`) under `cond`, and
    /// returns the ON condition to bind for it (USING and NATURAL made into `=` pairs).
    pub fn join(
        &mut self,
        scope: &mut Scope<'_>,
        cond: JoinCondition<'_>,
    ) -> SqlResult<Option<Expr>> {
        let right = scope.entries.last().expect("the source was pushed");
        let right_cols: Vec<usize> = (right.offset..right.offset + right.columns.len()).collect();
        let names = match cond {
            JoinCondition::None => {
                self.order.extend(right_cols);
                return Ok(None);
            }
            JoinCondition::On(e) => {
                self.order.extend(right_cols);
                return Ok(Some(e.clone()));
            }
            JoinCondition::Using(names) => names,
            JoinCondition::Natural => self
                .visible(scope)
                .filter(|(_, n)| position(scope, &right_cols, n).is_some())
                .map(|(_, n)| n.to_string())
                .collect(),
        };
        let mut pairs = Vec::new();
        for name in &names {
            let mut on_left = self
                .visible(scope)
                .filter(|(_, n)| n.eq_ignore_ascii_case(name));
            let left = on_left.next().map(|(i, _)| i);
            if on_left.next().is_some() {
                return Err(SqlError::new(
                    ErrorCode::NonUniqField,
                    format!("Column '{name}' in from clause is ambiguous"),
                ));
            }
            match (left, position(scope, &right_cols, name)) {
                (Some(l), Some(r)) => pairs.push((l, r)),
                _ => return Err(unknown_column(name, "from clause")),
            }
        }
        let lefts: Vec<usize> = pairs.iter().map(|&(l, _)| l).collect();
        let rights: Vec<usize> = pairs.iter().map(|&(_, r)| r).collect();
        let mut order = lefts.clone();
        order.extend(self.order.iter().filter(|i| !lefts.contains(i)));
        order.extend(right_cols.iter().filter(|i| !rights.contains(i)));
        self.order = order;
        scope.merged.extend(&rights);
        Ok(pairs
            .iter()
            .map(|&(l, r)| equal(scope, l, r))
            .reduce(|a, b| Expr::BinaryOp {
                left: Box::new(a),
                op: BinaryOperator::And,
                right: Box::new(b),
            }))
    }

    /// The chain's columns in `SELECT *` order.
    pub fn into_order(self) -> Vec<usize> {
        self.order
    }

    /// The chain's columns an unqualified name can reach, with their names.
    fn visible<'s>(&'s self, scope: &'s Scope<'_>) -> impl Iterator<Item = (usize, &'s str)> + 's {
        self.order
            .iter()
            .filter(|i| !scope.merged.contains(i))
            .filter_map(|&i| scope.locate(i).map(|(_, c)| (i, c.name.as_str())))
    }
}

/// Where in `cols` (a source's columns) the column `name` is.
fn position(scope: &Scope<'_>, cols: &[usize], name: &str) -> Option<usize> {
    cols.iter().copied().find(|&i| {
        scope
            .locate(i)
            .is_some_and(|(_, c)| c.name.eq_ignore_ascii_case(name))
    })
}

/// `left_alias.column = right_alias.column` for two combined-row indexes.
fn equal(scope: &Scope<'_>, l: usize, r: usize) -> Expr {
    let side = |i: usize| {
        let (s, c) = scope.locate(i).expect("a column of the scope");
        Expr::CompoundIdentifier(vec![
            Ident::new(&scope.entries[s].alias),
            Ident::new(&c.name),
        ])
    };
    Expr::BinaryOp {
        left: Box::new(side(l)),
        op: BinaryOperator::Eq,
        right: Box::new(side(r)),
    }
}
