//! Long chains of `AND` or `OR` regrouped into balanced trees right after parsing.
//! sqlparser builds `a OR b OR c ...` left-deep, one level per operator, and every later walk
//! of the tree (spans for column names, clones, drop) recurses once per level, so a
//! 5,000-term chain would overflow the connection thread's stack. Regrouped, the same chain
//! is about log2(n) levels deep.
//!
//! Invariant: only the grouping changes, never the operands or their order. AND and OR are
//! associative in MySQL's three-valued logic and evaluated left to right, and the binder
//! flattens a chain of either shape into one n-ary node, so the result, the short-circuit
//! order and the `?` numbering are those of the statement as written. The text (`Display`,
//! spans) is unchanged too: a binary operation prints without brackets.

use std::ops::ControlFlow;

use sqlparser::ast::{BinaryOperator, Expr, Statement, VisitMut, VisitorMut};

/// Chains with fewer operands than this keep the shape sqlparser gave them.
pub const REGROUP_FROM: usize = 64;

/// Regroups every long `AND`/`OR` chain in `statements`.
pub fn regroup_statements(statements: &mut [Statement]) {
    for s in statements {
        let _ = s.visit(&mut Regroup);
    }
}

/// Regroups every long `AND`/`OR` chain in `e`.
pub fn regroup_expr(e: &mut Expr) {
    let _ = e.visit(&mut Regroup);
}

/// Regroups each chain before the visitor descends into it, so the walk itself only ever
/// meets balanced chains.
struct Regroup;

impl VisitorMut for Regroup {
    type Break = ();

    fn pre_visit_expr(&mut self, e: &mut Expr) -> ControlFlow<()> {
        regroup(e);
        ControlFlow::Continue(())
    }
}

/// The number of operands of the left-deep chain of `op` at `e`.
fn chain_len(mut e: &Expr, op: &BinaryOperator) -> usize {
    let mut n = 1;
    while let Expr::BinaryOp { left, op: o, .. } = e {
        if o != op {
            break;
        }
        n += 1;
        e = left;
    }
    n
}

/// Regroups the chain at `e` when it is a long left-deep chain of AND or OR.
fn regroup(e: &mut Expr) {
    let op = match e {
        Expr::BinaryOp {
            op: op @ (BinaryOperator::And | BinaryOperator::Or),
            ..
        } => op.clone(),
        _ => return,
    };
    let len = chain_len(e, &op);
    if len < REGROUP_FROM {
        return;
    }
    // Take the operands off the left spine, last first.
    let mut operands = Vec::with_capacity(len);
    let mut rest = std::mem::replace(e, Expr::value(sqlparser::ast::Value::Null));
    loop {
        match rest {
            Expr::BinaryOp { left, op: o, right } if o == op => {
                operands.push(*right);
                rest = *left;
            }
            leftmost => {
                operands.push(leftmost);
                break;
            }
        }
    }
    operands.reverse();
    *e = balanced(operands, &op);
}

/// The operands joined by `op` into a tree of depth ceil(log2(n)), in order: each round
/// joins neighbours pairwise.
fn balanced(mut operands: Vec<Expr>, op: &BinaryOperator) -> Expr {
    while operands.len() > 1 {
        let mut joined = Vec::with_capacity(operands.len().div_ceil(2));
        let mut it = operands.into_iter();
        while let Some(left) = it.next() {
            joined.push(match it.next() {
                Some(right) => Expr::BinaryOp {
                    left: Box::new(left),
                    op: op.clone(),
                    right: Box::new(right),
                },
                None => left,
            });
        }
        operands = joined;
    }
    operands
        .pop()
        .unwrap_or_else(|| Expr::value(sqlparser::ast::Value::Null))
}

#[cfg(test)]
mod tests {
    use sqlparser::dialect::MySqlDialect;
    use sqlparser::parser::Parser;

    use super::*;

    fn depth(e: &Expr) -> usize {
        match e {
            Expr::BinaryOp { left, right, .. } => 1 + depth(left).max(depth(right)),
            Expr::Nested(x) => 1 + depth(x),
            _ => 1,
        }
    }

    fn parse(text: &str) -> Expr {
        Parser::new(&MySqlDialect {})
            .try_with_sql(text)
            .and_then(|mut p| p.parse_expr())
            .unwrap()
    }

    #[test]
    fn a_long_chain_becomes_balanced_and_prints_the_same() {
        let terms: Vec<String> = (0..1_000).map(|i| format!("a = {i}")).collect();
        let text = terms.join(" OR ");
        let mut e = parse(&text);
        regroup_expr(&mut e);
        assert_eq!(e.to_string(), text);
        // 10 levels of OR over `a = i` (2 levels).
        assert_eq!(depth(&e), 12);
    }

    #[test]
    fn chains_inside_operands_are_regrouped_and_short_chains_keep_their_shape() {
        let and: Vec<String> = (0..100).map(|i| format!("b < {i}")).collect();
        let ors: Vec<String> = (0..100)
            .map(|_| format!("({})", and.join(" AND ")))
            .collect();
        let text = ors.join(" OR ");
        let mut e = parse(&text);
        regroup_expr(&mut e);
        assert_eq!(e.to_string(), text);
        // 7 levels of OR, a bracket, 7 levels of AND, `b < i` (2 levels).
        assert_eq!(depth(&e), 17);
        let short = vec!["c"; REGROUP_FROM - 1].join(" AND ");
        let mut e = parse(&short);
        let before = e.clone();
        regroup_expr(&mut e);
        assert_eq!(e, before);
    }
}
