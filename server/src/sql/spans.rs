//! The source span of an expression, as sqlparser's `Spanned` gives it, found with a work
//! list instead of recursion. An operator chain as deep as [`crate::sql::depth::MAX_DEPTH`]
//! is that many levels of sqlparser's tree, and its own span walk takes about 6 KB of stack
//! a level in an unoptimised build (measured), most of a connection thread's stack.
//!
//! Invariant: the result equals `e.span()`. A span is the union of its parts' spans, and a
//! union ignores empty spans and is otherwise the smallest span covering both, so the forms
//! walked here may be taken apart in any order; every other form is asked for its own span.

use sqlparser::ast::{Expr, InTarget, Spanned};
use sqlparser::tokenizer::Span;

/// `e.span()` without recursing down the forms an operator chain is made of.
pub(crate) fn expr_span(e: &Expr) -> Span {
    let mut span = Span::empty();
    let mut pending = vec![e];
    while let Some(node) = pending.pop() {
        match node {
            Expr::BinaryOp { left, right, .. } => pending.extend([&**left, &**right]),
            Expr::IsNull(x)
            | Expr::IsNotNull(x)
            | Expr::IsTrue(x)
            | Expr::IsNotTrue(x)
            | Expr::IsFalse(x)
            | Expr::IsNotFalse(x)
            | Expr::IsUnknown(x)
            | Expr::IsNotUnknown(x)
            | Expr::Nested(x)
            | Expr::UnaryOp { expr: x, .. }
            | Expr::Cast { expr: x, .. } => pending.push(x),
            Expr::Between {
                expr, low, high, ..
            } => pending.extend([&**expr, &**low, &**high]),
            Expr::Like { expr, pattern, .. } | Expr::ILike { expr, pattern, .. } => {
                pending.extend([&**expr, &**pattern])
            }
            Expr::In {
                expr,
                target: InTarget::List(list),
                ..
            } => {
                pending.push(expr);
                pending.extend(list);
            }
            other => span = span.union(&other.span()),
        }
    }
    span
}

#[cfg(test)]
mod tests {
    use sqlparser::ast::{SelectItem, SetExpr, Statement};

    use super::*;

    /// The select items of `sql`'s first statement.
    fn items(sql: &str) -> Vec<Expr> {
        let mut statements = crate::sql::parse(sql).unwrap();
        let Statement::Query(q) = statements.remove(0) else {
            panic!("not a query: {sql}");
        };
        let SetExpr::Select(s) = *q.body else {
            panic!("not a select: {sql}");
        };
        s.projection
            .into_iter()
            .map(|item| match item {
                SelectItem::UnnamedExpr(e) => e,
                other => panic!("not an expression: {other}"),
            })
            .collect()
    }

    #[test]
    fn spans_equal_sqlparsers() {
        let sql = "SELECT 1 + 2 * 3, -a, (b), x IS NOT NULL, y BETWEEN 1 AND 2 IS TRUE, \
                   c LIKE 'a%' ESCAPE '!', d IN (1, (2), 3 + 4), CAST(e AS SIGNED) + 1, \
                   ABS(f) - g, h NOT LIKE 'b', (1, 2) = (3, 4), 'a' COLLATE utf8mb4_bin, \
                   1 OR 2 AND NOT 3, k->'$.a', ~m * 2";
        for e in items(sql) {
            assert_eq!(expr_span(&e), e.span(), "{e}");
        }
    }

    #[test]
    fn a_chain_at_the_depth_bound_is_walked_in_little_stack() {
        let chain = vec!["1"; crate::sql::depth::MAX_DEPTH].join(" + ");
        let found = items(&format!("SELECT {chain} IS NULL, 0 OR {chain}"));
        // sqlparser's own walk of these trees needs about 3 MB of stack unoptimised.
        let (found, want) = std::thread::Builder::new()
            .stack_size(64 << 20)
            .spawn(move || {
                let want: Vec<Span> = found.iter().map(Spanned::span).collect();
                (found, want)
            })
            .unwrap()
            .join()
            .unwrap();
        let spans = std::thread::Builder::new()
            .stack_size(256 << 10)
            .spawn(move || found.iter().map(expr_span).collect::<Vec<_>>())
            .unwrap()
            .join()
            .unwrap();
        assert_eq!(spans, want);
        assert_eq!(spans[0].start.column, 8, "{:?}", spans[0]);
    }
}
