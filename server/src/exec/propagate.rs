//! Constant propagation through equalities, as MySQL's optimizer does it: columns joined by
//! `a = b` conjuncts form an equality class, and when one member of a class equals a
//! constant (a literal or a `?`), every member gets its own `member = constant` conjunct.
//! So `c_w_id = w_id AND w_id = 1` lets `c_w_id` pick an index as `c_w_id = 1` would. A
//! `a = b` between two members bound to the same constant then says nothing more and is
//! dropped. Only columns the caller calls compatible are joined (MySQL propagates only
//! between columns compared the same way: a number never stands in for a string).

use crate::sql::expr::{BinOp, BoundExpr};

/// A constant usable as a key value in every member of a class.
fn is_constant(e: &BoundExpr) -> bool {
    matches!(e, BoundExpr::Literal(v) if !v.is_null()) || matches!(e, BoundExpr::Param(_))
}

/// `a = b` with two columns.
fn column_pair(e: &BoundExpr) -> Option<(usize, usize)> {
    match e {
        BoundExpr::Binary(BinOp::Eq, a, b) => match (&**a, &**b) {
            (BoundExpr::Column(x), BoundExpr::Column(y)) if x != y => Some((*x, *y)),
            _ => None,
        },
        _ => None,
    }
}

/// `column = constant` (either side).
fn column_constant(e: &BoundExpr) -> Option<(usize, &BoundExpr)> {
    match e {
        BoundExpr::Binary(BinOp::Eq, a, b) => match (&**a, &**b) {
            (BoundExpr::Column(x), c) | (c, BoundExpr::Column(x)) if is_constant(c) => {
                Some((*x, c))
            }
            _ => None,
        },
        _ => None,
    }
}

/// Union-find over column indexes.
struct Classes {
    parent: Vec<usize>,
}

impl Classes {
    fn find(&mut self, mut x: usize) -> usize {
        while self.parent[x] != x {
            self.parent[x] = self.parent[self.parent[x]];
            x = self.parent[x];
        }
        x
    }

    fn union(&mut self, a: usize, b: usize) {
        let (ra, rb) = (self.find(a), self.find(b));
        if ra != rb {
            self.parent[ra] = rb;
        }
    }
}

/// Adds `member = constant` for every column of `facts` (conjuncts that all hold) whose
/// equality class has a constant, and drops the column equalities those make redundant.
/// `compatible(a, b)` says whether columns `a` and `b` may share a class; `eligible(c)`
/// whether column `c` may receive a derived conjunct (and take part at all).
pub(crate) fn propagate(
    facts: &mut Vec<BoundExpr>,
    width: usize,
    compatible: &dyn Fn(usize, usize) -> bool,
    eligible: &dyn Fn(usize) -> bool,
) {
    let mut classes = Classes {
        parent: (0..width).collect(),
    };
    let mut any_pair = false;
    for f in facts.iter() {
        if let Some((a, b)) = column_pair(f) {
            if a < width && b < width && eligible(a) && eligible(b) && compatible(a, b) {
                classes.union(a, b);
                any_pair = true;
            }
        }
    }
    if !any_pair {
        return;
    }
    // The first constant each class is equal to, and the columns already holding one.
    let mut constant: Vec<Option<BoundExpr>> = vec![None; width];
    let mut has_own = vec![false; width];
    for f in facts.iter() {
        if let Some((c, v)) = column_constant(f) {
            if c < width && eligible(c) {
                has_own[c] = true;
                let root = classes.find(c);
                if constant[root].is_none() {
                    constant[root] = Some(v.clone());
                }
            }
        }
    }
    // Each member without its own constant gets the class's; a member that has one keeps it
    // (two different constants in one class make every row fail either way).
    let roots: Vec<usize> = (0..width).map(|c| classes.find(c)).collect();
    let mut size = vec![0usize; width];
    for &r in &roots {
        size[r] += 1;
    }
    let mut derived = Vec::new();
    for col in 0..width {
        if has_own[col] || !eligible(col) || size[roots[col]] < 2 {
            continue;
        }
        if let Some(v) = &constant[roots[col]] {
            derived.push(BoundExpr::Binary(
                BinOp::Eq,
                Box::new(BoundExpr::Column(col)),
                Box::new(v.clone()),
            ));
        }
    }
    if derived.is_empty() {
        return;
    }
    // `a = b` is implied when both now equal the class's one constant (a class whose members
    // had constants of their own keeps its equalities: the constants may differ).
    let mut owners = vec![0usize; width];
    for (c, own) in has_own.iter().enumerate() {
        if *own {
            owners[roots[c]] += 1;
        }
    }
    facts.retain(|f| match column_pair(f) {
        Some((a, b)) if a < width && b < width && eligible(a) && eligible(b) => {
            let root = roots[a];
            !(roots[b] == root && constant[root].is_some() && owners[root] == 1)
        }
        _ => true,
    });
    facts.extend(derived);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::value::Value;

    fn col(i: usize) -> Box<BoundExpr> {
        Box::new(BoundExpr::Column(i))
    }

    fn eq(a: Box<BoundExpr>, b: Box<BoundExpr>) -> BoundExpr {
        BoundExpr::Binary(BinOp::Eq, a, b)
    }

    fn lit(v: i64) -> Box<BoundExpr> {
        Box::new(BoundExpr::Literal(Value::Int(v)))
    }

    fn run(mut facts: Vec<BoundExpr>, compatible: &dyn Fn(usize, usize) -> bool) -> Vec<BoundExpr> {
        propagate(&mut facts, 6, compatible, &|_| true);
        facts
    }

    #[test]
    fn a_constant_reaches_every_member_and_the_join_equality_goes() {
        // c_w_id(0) = w_id(3) AND w_id = 1 AND c_d_id(1) = ?
        let facts = vec![
            eq(col(0), col(3)),
            eq(col(3), lit(1)),
            eq(col(1), Box::new(BoundExpr::Param(0))),
        ];
        let out = run(facts, &|_, _| true);
        assert!(out.contains(&eq(col(0), lit(1))), "{out:?}");
        assert!(!out.contains(&eq(col(0), col(3))), "implied now: {out:?}");
        assert_eq!(out.len(), 3);
    }

    #[test]
    fn chains_carry_a_parameter() {
        let p = Box::new(BoundExpr::Param(2));
        let out = run(
            vec![
                eq(col(0), col(1)),
                eq(col(1), col(2)),
                eq(col(2), p.clone()),
            ],
            &|_, _| true,
        );
        assert!(out.contains(&eq(col(0), p.clone())) && out.contains(&eq(col(1), p)));
    }

    #[test]
    fn incompatible_columns_and_own_constants_stay() {
        let out = run(vec![eq(col(0), col(1)), eq(col(1), lit(7))], &|_, _| false);
        assert_eq!(out.len(), 2, "no class across incompatible types");
        let both = run(
            vec![eq(col(0), col(1)), eq(col(0), lit(1)), eq(col(1), lit(2))],
            &|_, _| true,
        );
        assert!(
            both.contains(&eq(col(0), col(1))),
            "two constants: the equality still decides"
        );
    }

    #[test]
    fn ineligible_columns_are_left_alone() {
        let mut facts = vec![eq(col(0), col(4)), eq(col(4), lit(3))];
        propagate(&mut facts, 6, &|_, _| true, &|c| c != 0);
        assert_eq!(facts.len(), 2);
    }
}
