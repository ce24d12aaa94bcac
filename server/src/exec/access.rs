//! Access-path choice for one base table of a statement: for every candidate index, the
//! longest equality prefix over its key columns (IN lists become several ranges) plus one
//! range on the next column; the best index wins (a unique full-key equality first, then
//! more key parts, then an index whose order satisfies ORDER BY). Key values stay bound
//! expressions, so a prepared statement keeps its plan and only evaluates keys per execute.

use crate::engine::{ColumnType, IndexKind, Table};
use crate::exec::coltypes::key_len;
use crate::exec::scope::max_column;
use crate::sql::expr::{BinOp, BoundExpr};
use crate::value::Value;

/// MySQL's EXPLAIN `type`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AccessType {
    /// Unique full-key equality on constants.
    Const,
    /// Unique full-key equality on columns of earlier tables.
    EqRef,
    /// Equality on a key prefix.
    Ref,
    /// One or more key ranges.
    Range,
    /// A full scan of an index in its order.
    Index,
    /// A full scan of the clustered index.
    All,
}

impl AccessType {
    /// The EXPLAIN spelling.
    pub fn name(self) -> &'static str {
        match self {
            AccessType::Const => "const",
            AccessType::EqRef => "eq_ref",
            AccessType::Ref => "ref",
            AccessType::Range => "range",
            AccessType::Index => "index",
            AccessType::All => "ALL",
        }
    }
}

/// One key range to scan, as expressions: equality values for a key prefix, then optional
/// bounds on the next key column (`bool` = inclusive).
#[derive(Debug, Clone, PartialEq)]
pub struct RangeSpec {
    /// Values of the leading key columns.
    pub eq: Vec<BoundExpr>,
    /// Lower bound on the next column.
    pub lower: Option<(BoundExpr, bool)>,
    /// Upper bound on the next column.
    pub upper: Option<(BoundExpr, bool)>,
}

/// The chosen way to read a table.
#[derive(Debug, Clone)]
pub struct Access {
    /// Index position in the table (0 = clustered).
    pub index: usize,
    /// Ranges (empty = the whole index).
    pub specs: Vec<RangeSpec>,
    /// EXPLAIN type.
    pub kind: AccessType,
    /// Scan backwards (ORDER BY ... DESC served by the index).
    pub reverse: bool,
    /// Whether the scan order satisfies ORDER BY.
    pub ordered: bool,
    /// Conjuncts (by position in the list given to [`choose`]) the ranges fully express.
    pub consumed: Vec<usize>,
    /// Key columns used (EXPLAIN key_len).
    pub key_len: u32,
    /// EXPLAIN `ref` parts (`const` or a column name).
    pub refs: Vec<String>,
    /// Candidate indexes (EXPLAIN possible_keys).
    pub possible: Vec<usize>,
}

/// What the planner knows about the statement around the table.
pub struct Context<'a> {
    /// Offset of the table's columns in the combined row.
    pub offset: usize,
    /// Conjuncts that may restrict this table (columns below `offset` are known values).
    pub conjuncts: &'a [BoundExpr],
    /// ORDER BY as (table column, descending) when it names only this table's columns.
    pub order: Option<Vec<(usize, bool)>>,
    /// There is a LIMIT (an ordered full index scan may then beat a filesort).
    pub limited: bool,
    /// Indexes the hints allow.
    pub allowed: Vec<usize>,
    /// FORCE INDEX given: a full scan of a forced index beats a table scan.
    pub forced: bool,
    /// Name of each combined-row column before `offset`, for EXPLAIN's `ref`.
    pub outer_name: &'a dyn Fn(usize) -> String,
}

impl std::fmt::Debug for Context<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Context")
            .field("offset", &self.offset)
            .field("conjuncts", &self.conjuncts.len())
            .field("order", &self.order)
            .finish()
    }
}

/// Fewer ranges than this are planned from IN lists; more fall back to a scan. MySQL bounds
/// the range optimizer by memory (`range_optimizer_max_mem_size`, 8 MB by default), which
/// holds some tens of thousands of single-column ranges; 65,536 keys a list of that size.
const MAX_RANGES: usize = 65_536;

/// A value usable as a key: no column of this table or later.
fn is_known(e: &BoundExpr, offset: usize) -> bool {
    max_column(e).is_none_or(|m| m < offset)
}

fn column_of(e: &BoundExpr, offset: usize) -> Option<usize> {
    match e {
        BoundExpr::Column(i) if *i >= offset => Some(i - offset),
        _ => None,
    }
}

/// `col = known` (either side) → the known side.
fn equality(c: &BoundExpr, col: usize, offset: usize) -> Option<Vec<BoundExpr>> {
    match c {
        BoundExpr::Binary(BinOp::Eq, a, b) => {
            if column_of(a, offset) == Some(col) && is_known(b, offset) {
                return Some(vec![(**b).clone()]);
            }
            if column_of(b, offset) == Some(col) && is_known(a, offset) {
                return Some(vec![(**a).clone()]);
            }
            None
        }
        BoundExpr::InList(a, list, false) if column_of(a, offset) == Some(col) => list
            .iter()
            .all(|x| is_known(x, offset))
            .then(|| list.clone()),
        _ => None,
    }
}

type Bound = Option<(BoundExpr, bool)>;

/// Whether a range keeps its meaning in an ENUM or SET index, which orders by the member's
/// number: a point (the value is coerced to its member) or bounds that are numbers (compared
/// by number too). A string bound compares by text, in another order than the index's.
fn follows_member_order((lower, upper): &(Bound, Bound)) -> bool {
    let numeric = |b: &Bound| match b {
        None => true,
        Some((BoundExpr::Literal(v), _)) => matches!(v, Value::Int(_) | Value::UInt(_)),
        Some(_) => false,
    };
    (lower.is_some() && lower == upper) || (numeric(lower) && numeric(upper))
}

/// Whether a key value can search a column of type `ty`: a text column's index follows the
/// text comparison, so a number (compared with text as a number) cannot search it.
fn key_value_fits(ty: ColumnType, v: &BoundExpr) -> bool {
    !ty.is_text()
        || !matches!(
            v,
            BoundExpr::Literal(
                Value::Int(_) | Value::UInt(_) | Value::Decimal(_) | Value::Double(_)
            )
        )
}

fn bounds_fit(ty: ColumnType, (lower, upper): &(Bound, Bound)) -> bool {
    [lower, upper]
        .iter()
        .all(|b| b.as_ref().is_none_or(|(v, _)| key_value_fits(ty, v)))
}

/// A range conjunct on `col`: (lower, upper).
fn range(c: &BoundExpr, col: usize, offset: usize) -> Option<(Bound, Bound)> {
    match c {
        BoundExpr::Between(a, lo, hi, false)
            if column_of(a, offset) == Some(col)
                && is_known(lo, offset)
                && is_known(hi, offset) =>
        {
            Some((Some(((**lo).clone(), true)), Some(((**hi).clone(), true))))
        }
        BoundExpr::Binary(op, a, b) => {
            let (op, v) = if column_of(a, offset) == Some(col) && is_known(b, offset) {
                (*op, b)
            } else if column_of(b, offset) == Some(col) && is_known(a, offset) {
                let flipped = match op {
                    BinOp::Lt => BinOp::Gt,
                    BinOp::Le => BinOp::Ge,
                    BinOp::Gt => BinOp::Lt,
                    BinOp::Ge => BinOp::Le,
                    other => *other,
                };
                (flipped, a)
            } else {
                return None;
            };
            let v = (**v).clone();
            match op {
                BinOp::Lt => Some((None, Some((v, false)))),
                BinOp::Le => Some((None, Some((v, true)))),
                BinOp::Gt => Some((Some((v, false)), None)),
                BinOp::Ge => Some((Some((v, true)), None)),
                _ => None,
            }
        }
        _ => None,
    }
}

/// An OR of ranges/equalities on `col` (bracketed ORs in it too) → one (lower, upper) per
/// disjunct, in written order.
fn or_ranges(c: &BoundExpr, col: usize, offset: usize, out: &mut Vec<(Bound, Bound)>) -> bool {
    let mut pending = vec![c];
    while let Some(x) = pending.pop() {
        if let BoundExpr::Or(operands) = x {
            pending.extend(operands.iter().rev());
        } else if let Some(r) = range(x, col, offset) {
            out.push(r);
        } else if let Some(vals) = equality(x, col, offset) {
            for v in vals {
                out.push((Some((v.clone(), true)), Some((v, true))));
            }
        } else {
            return false;
        }
    }
    true
}

struct Candidate {
    index: usize,
    /// Rows of a row-constructor IN over the leading key columns (values in key order).
    tuples: Vec<Vec<BoundExpr>>,
    eq_parts: Vec<Vec<BoundExpr>>,
    ranges: Vec<(Bound, Bound)>,
    consumed: Vec<usize>,
    full_unique: bool,
    key_len: u32,
    refs: Vec<String>,
}

fn analyse(t: &Table, index: usize, ctx: &Context<'_>) -> Candidate {
    let def = t.def();
    let ix = &def.indexes()[index];
    let mut cols = ix.columns.clone();
    if index > 0 {
        cols.extend(def.clustered().columns.iter().copied());
    }
    let mut c = Candidate {
        index,
        tuples: Vec::new(),
        eq_parts: Vec::new(),
        ranges: Vec::new(),
        consumed: Vec::new(),
        full_unique: false,
        key_len: 0,
        refs: Vec::new(),
    };
    let mut combos = 1usize;
    let start = row_prefix(t, &cols, ctx, &mut c);
    if start > 0 {
        combos = c.tuples.len();
    }
    for (pos, &col) in cols.iter().enumerate().skip(start) {
        let column = &def.columns()[col];
        // A range without a lower bound also reads the NULLs (they sort first): its
        // conditions stay to be checked on a nullable column.
        let exact = !column.nullable;
        let eq = ctx.conjuncts.iter().enumerate().find_map(|(i, x)| {
            equality(x, col, ctx.offset)
                .filter(|vals| vals.iter().all(|v| key_value_fits(column.ty, v)))
                .map(|v| (i, v))
        });
        if let Some((i, vals)) = eq {
            if combos.saturating_mul(vals.len()) > MAX_RANGES {
                break;
            }
            combos *= vals.len();
            // A key equality holds only for equal non-NULL values, as `=` and `IN` do.
            c.consumed.push(i);
            c.refs.push(match &vals[..] {
                [BoundExpr::Column(o)] => (ctx.outer_name)(*o),
                [v] if max_column(v).is_some() => "func".into(),
                _ => "const".into(),
            });
            c.key_len += key_len(column.ty, column.nullable);
            c.eq_parts.push(vals);
            if pos + 1 == ix.columns.len() && ix.is_unique() && combos == 1 {
                c.full_unique = true;
                break;
            }
            continue;
        }
        let by_number = matches!(column.ty, ColumnType::Enum(_) | ColumnType::Set(_));
        let mut lower: Bound = None;
        let mut upper: Bound = None;
        let mut range_used = Vec::new();
        for (i, x) in ctx.conjuncts.iter().enumerate() {
            let r = range(x, col, ctx.offset)
                .filter(|r| (!by_number || follows_member_order(r)) && bounds_fit(column.ty, r));
            if let Some((lo, hi)) = r {
                let used = (lo.is_some() && lower.is_none()) || (hi.is_some() && upper.is_none());
                if lo.is_some() && lower.is_none() {
                    lower = lo;
                }
                if hi.is_some() && upper.is_none() {
                    upper = hi;
                }
                if used {
                    range_used.push(i);
                }
            }
        }
        if exact || lower.is_some() {
            c.consumed.extend(range_used);
        }
        if lower.is_some() || upper.is_some() {
            c.ranges.push((lower, upper));
            c.key_len += key_len(column.ty, column.nullable);
            c.refs.clear();
            break;
        }
        for (i, x) in ctx.conjuncts.iter().enumerate() {
            let mut out = Vec::new();
            if matches!(x, BoundExpr::Or(..))
                && or_ranges(x, col, ctx.offset, &mut out)
                && (!by_number || out.iter().all(follows_member_order))
                && out.iter().all(|r| bounds_fit(column.ty, r))
                && combos.saturating_mul(out.len()) <= MAX_RANGES
            {
                if exact || out.iter().all(|(lo, _)| lo.is_some()) {
                    c.consumed.push(i);
                }
                c.ranges = out;
                c.key_len += key_len(column.ty, column.nullable);
                c.refs.clear();
                break;
            }
        }
        break;
    }
    c
}

/// `(a, b) IN ((1, 2), ...)` on this table's columns, with every row known: the columns and
/// the rows.
fn row_in(c: &BoundExpr, offset: usize) -> Option<(Vec<usize>, &[BoundExpr])> {
    let BoundExpr::InList(x, list, false) = c else {
        return None;
    };
    let BoundExpr::Row(items) = &**x else {
        return None;
    };
    let cols = items
        .iter()
        .map(|e| column_of(e, offset))
        .collect::<Option<Vec<_>>>()?;
    list.iter()
        .all(|x| is_known(x, offset))
        .then_some((cols, list.as_slice()))
}

/// Fills the candidate's `tuples` from a row-constructor IN whose columns are exactly the
/// first key columns of the index (in any order); returns how many key columns it fixes.
fn row_prefix(t: &Table, cols: &[usize], ctx: &Context<'_>, c: &mut Candidate) -> usize {
    let def = t.def();
    for (i, x) in ctx.conjuncts.iter().enumerate() {
        let Some((row_cols, list)) = row_in(x, ctx.offset) else {
            continue;
        };
        let m = row_cols.len();
        if m > cols.len() || list.len() > MAX_RANGES {
            continue;
        }
        // Position in the row of each leading key column.
        let Some(order) = cols[..m]
            .iter()
            .map(|k| row_cols.iter().position(|rc| rc == k))
            .collect::<Option<Vec<_>>>()
        else {
            continue;
        };
        let mut tuples = Vec::with_capacity(list.len());
        for item in list {
            let BoundExpr::Row(vals) = item else {
                return 0;
            };
            let fits = order
                .iter()
                .zip(&cols[..m])
                .all(|(&j, &k)| key_value_fits(def.columns()[k].ty, &vals[j]));
            if !fits {
                return 0;
            }
            tuples.push(order.iter().map(|&j| vals[j].clone()).collect());
        }
        for &k in &cols[..m] {
            let column = &def.columns()[k];
            c.key_len += key_len(column.ty, column.nullable);
            c.refs.push("const".into());
        }
        c.tuples = tuples;
        c.consumed.push(i);
        return m;
    }
    0
}

fn specs_of(c: &Candidate) -> Vec<RangeSpec> {
    let mut specs = if c.tuples.is_empty() {
        vec![RangeSpec {
            eq: Vec::new(),
            lower: None,
            upper: None,
        }]
    } else {
        c.tuples
            .iter()
            .map(|t| RangeSpec {
                eq: t.clone(),
                lower: None,
                upper: None,
            })
            .collect()
    };
    for alts in &c.eq_parts {
        let mut next = Vec::with_capacity(specs.len() * alts.len());
        for s in &specs {
            for v in alts {
                let mut n = s.clone();
                n.eq.push(v.clone());
                next.push(n);
            }
        }
        specs = next;
    }
    if !c.ranges.is_empty() {
        let mut next = Vec::with_capacity(specs.len() * c.ranges.len());
        for s in &specs {
            for (lo, hi) in &c.ranges {
                let mut n = s.clone();
                n.lower = lo.clone();
                n.upper = hi.clone();
                next.push(n);
            }
        }
        specs = next;
    }
    if specs.len() == 1
        && specs[0].eq.is_empty()
        && specs[0].lower.is_none()
        && specs[0].upper.is_none()
    {
        specs.clear();
    }
    specs
}

/// Whether scanning index `index` with the equality prefix `eq_len` (one value each) gives
/// rows in ORDER BY order; Some(reverse) if so.
fn order_served(t: &Table, index: usize, eq_fixed: usize, order: &[(usize, bool)]) -> Option<bool> {
    let def = t.def();
    let mut cols = def.indexes()[index].columns.clone();
    if index > 0 {
        cols.extend(def.clustered().columns.iter().copied());
    }
    let desc = order.first()?.1;
    if order.iter().any(|o| o.1 != desc) {
        return None;
    }
    let mut pos = 0;
    for &(col, _) in order {
        loop {
            let at = *cols.get(pos)?;
            if at == col {
                pos += 1;
                break;
            }
            if pos < eq_fixed {
                pos += 1;
                continue;
            }
            return None;
        }
    }
    Some(desc)
}

/// Chooses the access path of table `t` in `ctx`.
pub fn choose(t: &Table, ctx: &Context<'_>) -> Access {
    let cands: Vec<Candidate> = ctx.allowed.iter().map(|&i| analyse(t, i, ctx)).collect();
    let possible: Vec<usize> = cands
        .iter()
        .filter(|c| !c.tuples.is_empty() || !c.eq_parts.is_empty() || !c.ranges.is_empty())
        .map(|c| c.index)
        .collect();
    let fixed = |c: &Candidate| {
        let row = if c.tuples.len() == 1 {
            c.tuples[0].len()
        } else {
            0
        };
        row + c.eq_parts.iter().filter(|a| a.len() == 1).count()
    };
    let serves = |c: &Candidate| {
        let single =
            c.tuples.len() <= 1 && c.eq_parts.iter().all(|a| a.len() == 1) && c.ranges.len() <= 1;
        match (&ctx.order, single) {
            (Some(o), true) if !o.is_empty() => order_served(t, c.index, fixed(c), o),
            _ => None,
        }
    };
    let score = |c: &Candidate| {
        (
            c.full_unique,
            (c.tuples.first().map_or(0, Vec::len) + c.eq_parts.len()) * 2
                + usize::from(!c.ranges.is_empty()),
            serves(c).is_some(),
            c.index == 0,
        )
    };
    let best = cands
        .iter()
        .filter(|c| !c.tuples.is_empty() || !c.eq_parts.is_empty() || !c.ranges.is_empty())
        .max_by(|a, b| score(a).cmp(&score(b)).then(b.index.cmp(&a.index)));
    if let Some(c) = best {
        let specs = specs_of(c);
        let known_consts = c.refs.iter().all(|r| r == "const");
        let kind = if c.full_unique {
            if known_consts {
                AccessType::Const
            } else {
                AccessType::EqRef
            }
        } else if c.ranges.is_empty() && specs.len() == 1 {
            AccessType::Ref
        } else {
            AccessType::Range
        };
        let reverse = serves(c);
        return Access {
            index: c.index,
            specs,
            kind,
            reverse: reverse.unwrap_or(false),
            ordered: reverse.is_some() || ctx.order.as_ref().is_some_and(|o| o.is_empty()),
            consumed: c.consumed.clone(),
            key_len: c.key_len,
            refs: if kind == AccessType::Range {
                Vec::new()
            } else {
                c.refs.clone()
            },
            possible,
        };
    }
    // No usable range: an index whose order serves ORDER BY ... LIMIT, a forced index, or
    // the clustered index.
    let ordered = cands.iter().find_map(|c| {
        let o = ctx.order.as_ref()?;
        order_served(t, c.index, 0, o).map(|rev| (c.index, rev))
    });
    let (index, reverse, served) = match ordered {
        Some((i, rev)) if ctx.limited || i == 0 || ctx.forced => (i, rev, true),
        _ => (if ctx.forced { ctx.allowed[0] } else { 0 }, false, false),
    };
    let kind = if index == 0 && !(served && ctx.limited) {
        AccessType::All
    } else {
        AccessType::Index
    };
    let key_len = if kind == AccessType::Index {
        let def = t.def();
        def.indexes()[index]
            .columns
            .iter()
            .map(|&c| key_len(def.columns()[c].ty, def.columns()[c].nullable))
            .sum()
    } else {
        0
    };
    Access {
        index,
        specs: Vec::new(),
        kind,
        reverse,
        ordered: served || ctx.order.as_ref().is_some_and(|o| o.is_empty()),
        consumed: Vec::new(),
        key_len,
        refs: Vec::new(),
        possible,
    }
}

/// True when every column the statement reads from the table is in the index's key
/// (EXPLAIN's `Using index`).
pub fn covering(t: &Table, index: usize, needed: &[usize]) -> bool {
    let def = t.def();
    if index == 0 || def.indexes()[index].kind == IndexKind::HiddenRowId {
        return false;
    }
    let mut cols = def.indexes()[index].columns.clone();
    cols.extend(def.clustered().columns.iter().copied());
    needed.iter().all(|c| cols.contains(c))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::{Column, ColumnType, IndexDef, IntKind, PageCapacity, TableDef};
    use crate::value::Value;

    fn int() -> ColumnType {
        ColumnType::Integer {
            kind: IntKind::Big,
            unsigned: true,
        }
    }

    /// q_v1 of the queue fixture: (id, status, run_at, priority), PRIMARY (id),
    /// idx_ready (status, run_at, id).
    fn queue() -> Table {
        let cols = ["id", "status", "run_at", "priority"]
            .iter()
            .map(|n| Column::new(n, int()).not_null())
            .collect();
        let def = TableDef::new(
            "q",
            cols,
            vec![
                IndexDef::new("PRIMARY", IndexKind::Primary, vec![0]),
                IndexDef::new("idx_ready", IndexKind::NonUnique, vec![1, 2, 0]),
            ],
        )
        .unwrap();
        Table::new(def, PageCapacity::default())
    }

    fn col(i: usize) -> Box<BoundExpr> {
        Box::new(BoundExpr::Column(i))
    }

    fn lit(v: i64) -> Box<BoundExpr> {
        Box::new(BoundExpr::Literal(Value::Int(v)))
    }

    fn plan(
        t: &Table,
        conj: &[BoundExpr],
        order: Option<Vec<(usize, bool)>>,
        limited: bool,
    ) -> Access {
        let name = |i: usize| format!("c{i}");
        choose(
            t,
            &Context {
                offset: 0,
                conjuncts: conj,
                order,
                limited,
                allowed: vec![0, 1],
                forced: false,
                outer_name: &name,
            },
        )
    }

    #[test]
    fn primary_point_is_const_and_consumed() {
        let t = queue();
        let a = plan(
            &t,
            &[BoundExpr::Binary(BinOp::Eq, col(0), lit(5))],
            None,
            false,
        );
        assert_eq!(
            (a.kind, a.index, a.consumed.clone()),
            (AccessType::Const, 0, vec![0])
        );
        assert_eq!(a.key_len, 8);
        let p = plan(
            &t,
            &[BoundExpr::Binary(
                BinOp::Eq,
                col(0),
                Box::new(BoundExpr::Param(0)),
            )],
            None,
            false,
        );
        assert_eq!(p.kind, AccessType::Const, "a parameter is a constant");
    }

    #[test]
    fn in_list_is_several_ranges() {
        let t = queue();
        let a = plan(
            &t,
            &[BoundExpr::InList(
                col(0),
                vec![*lit(1), *lit(2), *lit(3)],
                false,
            )],
            None,
            false,
        );
        assert_eq!((a.kind, a.specs.len()), (AccessType::Range, 3));
    }

    #[test]
    fn equality_prefix_serves_order_by() {
        let t = queue();
        let status0 = [BoundExpr::Binary(BinOp::Eq, col(1), lit(0))];
        let a = plan(&t, &status0, Some(vec![(2, false), (0, false)]), true);
        assert_eq!((a.kind, a.index, a.ordered), (AccessType::Ref, 1, true));
        let b = plan(&t, &status0, Some(vec![(3, false), (0, false)]), true);
        assert_eq!(
            (b.index, b.ordered),
            (1, false),
            "ORDER BY priority needs a filesort"
        );
        let c = plan(&t, &status0, Some(vec![(2, true), (0, true)]), true);
        assert!(c.ordered && c.reverse, "DESC is a backward scan");
    }

    #[test]
    fn range_after_prefix_and_order_only_scans() {
        let t = queue();
        let conj = [
            BoundExpr::Binary(BinOp::Eq, col(1), lit(1)),
            BoundExpr::Binary(BinOp::Gt, col(2), lit(100)),
        ];
        let a = plan(&t, &conj, None, false);
        assert_eq!((a.kind, a.index, a.key_len), (AccessType::Range, 1, 16));
        assert_eq!(a.consumed, vec![0, 1]);
        let full = plan(&t, &[], Some(vec![(0, false)]), true);
        assert_eq!(
            (full.kind, full.index, full.ordered),
            (AccessType::Index, 0, true)
        );
        let none = plan(
            &t,
            &[BoundExpr::Binary(BinOp::Eq, col(3), lit(1))],
            None,
            false,
        );
        assert_eq!(none.kind, AccessType::All);
    }
}
