//! Text plan cache: a connection plans a statement shape ([`crate::stmt::shapes`]) once, with
//! its literals standing as parameters, and runs every later text of the shape from that plan
//! with the text's literals as the parameter values, so neither the tree copy nor planning is
//! paid again. It is invisible to clients: a text runs from the cache only where the plan with
//! parameters is the plan its literals would have made.
//!
//! Invariant: the cached plan executed with a text's literal values does what planning that
//! text would: same rows, columns, warnings, errors, counters and locks. It holds by these
//! rules, each checked before a shape's plan is kept:
//! - Allow-list of positions. Every literal of the text must sit in one of: the value side of
//!   `column op literal` (`=`, `<>`, `<`, `<=`, `>`, `>=`, `<=>`), of `column [NOT] IN (...)`
//!   and of `column [NOT] BETWEEN .. AND ..`, in a WHERE, ON or HAVING condition reached
//!   through `AND`/`OR`/`XOR`/`NOT` and brackets only; an operand of `+ - * / %` (or the
//!   whole value) on the right of an `UPDATE ... SET`, in an `INSERT`/`REPLACE ... VALUES`
//!   row or in an `ON DUPLICATE KEY UPDATE`; a `LIMIT` or `OFFSET` number. Anywhere else (the
//!   select list, whose labels and column types come from literals; ORDER BY and GROUP BY,
//!   where a number is a position; a function argument such as CAST's, INTERVAL's, a JSON
//!   path or a LIKE pattern or ESCAPE; an introducer, COLLATE or a typed literal like
//!   `DATE '...'`; a unary minus, which the binder folds) the shape keeps no plan.
//! - The access path reads a constant's type in two places (`exec::access`): a number never
//!   searches a text column's index, and a range over an ENUM or SET index needs number
//!   bounds or a single point. A parameter passes both tests, so a kept plan needs: a number
//!   compared with a column that is not CHAR/VARCHAR/TEXT/ENUM/SET in any table the
//!   statement uses, a string or hex literal compared with a column that is not ENUM or SET,
//!   and the compared column known in one of those tables. Otherwise the parameter plan
//!   could search (and lock) where the literal one scans, or the other way round.
//! - Only `SELECT` (one query block, no `UNION`, CTE, subquery or derived table), `INSERT`/
//!   `REPLACE ... VALUES`, single-table `UPDATE` and `DELETE`, on base tables only (a
//!   performance_schema or information_schema table is read when planned), one statement a
//!   text, a plan whose `IN (SELECT ...)` subqueries are not materialized.
//! - A plan is used only while the session is as it was when it was made: the same current
//!   database and `sql_mode`, no `LOCK TABLES` in force, and no statement since that can
//!   change what planning reads (every statement but SELECT/INSERT/UPDATE/DELETE/EXPLAIN,
//!   SHOW, DO, transaction control and the like moves a per-connection epoch). DDL is met by
//!   the DDL-version check of [`crate::exec::execute`]; a plan whose tables were replaced is
//!   dropped and made again. Privileges are checked at every execution, as for prepared
//!   statements, so a GRANT or REVOKE applies to the next text.
//!
//! A shape's plan is made the second time the shape is seen (the first text is planned as
//! usual with its literals, which reports any error of the text itself); planning the shape
//! with parameters that fails, or a plan the rules refuse, leaves the shape uncached. The
//! shape cache's bound ([`crate::stmt::shapes`] keeps 64 shapes a connection) bounds the
//! plans. `--tpbed-text-plan-cache=OFF` turns the cache off.

use std::collections::HashSet;
use std::ops::ControlFlow;
use std::sync::{Arc, Mutex};

use sqlparser::ast::{
    self, BinaryOperator, Expr, ObjectName, SetExpr, Statement, TableFactor, Visit, VisitMut,
    Visitor, VisitorMut,
};
use sqlparser::tokenizer::Location;

use crate::context::{Context, SqlModes};
use crate::stmt::plan::{Plan, PreparedStmt};
use crate::value::Value;
use crate::vars::{Scope, VarDef, VarType, VarValue};

/// The start-up option that turns the cache on or off.
pub(crate) const VARIABLE: &str = "tpbed_text_plan_cache";

/// The cache's variable: read-only, global, ON by default.
pub(crate) fn definitions() -> Vec<VarDef> {
    vec![VarDef::new(VARIABLE, Scope::Global, VarType::Bool, VarValue::Bool(true)).read_only()]
}

/// What a shape knows of its plan.
#[derive(Debug, Default)]
pub(crate) enum State {
    /// Not made yet.
    #[default]
    Untried,
    /// The shape cannot keep a plan (the rules refused it, or planning it failed).
    Refused,
    /// The plan, and the session it was made in.
    Ready(Arc<Cached>),
}

/// A shape's plan with parameters.
#[derive(Debug)]
pub(crate) struct Cached {
    stmt: Arc<PreparedStmt>,
    db: Option<String>,
    modes: SqlModes,
    epoch: u64,
}

/// A text answered from its shape's plan: the plan and the text's literals as parameters.
#[derive(Debug)]
pub(crate) struct Hit {
    /// The shape's plan.
    pub(crate) stmt: Arc<PreparedStmt>,
    /// The text's literals, in text order.
    pub(crate) params: Vec<Value>,
}

/// The plan for `sql`, a text of `literals` literals of the shape whose first text parsed to
/// `tree` (`slots`: for each value of the tree in visiting order, the literal it came from),
/// with the text's literal values `params` gives (None when one is not a value, as an
/// out-of-range double: the text is then planned, and fails, as usual), when the shape keeps
/// a plan the session may use; made here the first time it is asked for. `epoch` is the
/// connection's session epoch.
pub(crate) fn reuse(
    st: &Context,
    state: &Mutex<State>,
    (tree, slots): (&Statement, &[Option<u32>]),
    (sql, literals): (&str, usize),
    epoch: u64,
    params: impl FnOnce() -> Option<Vec<Value>>,
) -> Option<Hit> {
    // Under LOCK TABLES planning checks each table is locked: plan every text then.
    if st.locked_tables.is_some() {
        return None;
    }
    let mut guard = state.lock().unwrap_or_else(|e| e.into_inner());
    let cached = match &*guard {
        State::Refused => return None,
        State::Ready(c) if usable(st, c, epoch) => Arc::clone(c),
        State::Ready(_) | State::Untried => match make(st, tree, slots, sql, literals) {
            Some(stmt) => {
                let c = Arc::new(Cached {
                    stmt: Arc::new(stmt),
                    db: st.db.clone(),
                    modes: st.sql_modes(),
                    epoch,
                });
                *guard = State::Ready(Arc::clone(&c));
                c
            }
            None => {
                *guard = State::Refused;
                return None;
            }
        },
    };
    drop(guard);
    Some(Hit {
        stmt: Arc::clone(&cached.stmt),
        params: params()?,
    })
}

/// Whether the session may still run `c`: nothing planning reads has changed.
fn usable(st: &Context, c: &Cached, epoch: u64) -> bool {
    let Plan::Table(t) = &c.stmt.plan else {
        return false;
    };
    c.epoch == epoch
        && st.locked_tables.is_none()
        && c.db == st.db
        && c.modes == st.sql_modes()
        && crate::exec::still_valid(st, t)
}

/// The plan of the shape `tree` with its literals as parameters, when the rules allow it.
fn make(
    st: &Context,
    tree: &Statement,
    slots: &[Option<u32>],
    sql: &str,
    literals: usize,
) -> Option<PreparedStmt> {
    let positions = allowed(tree)?;
    let mut template = tree.clone();
    let mut filler = Placeholders {
        slots,
        at: 0,
        allowed: &positions.values,
        refused: false,
    };
    let _ = VisitMut::visit(&mut template, &mut filler);
    if filler.refused || filler.at != slots.len() {
        return None;
    }
    // Labels are read from the text only in the select list, which holds no literal and
    // comes before every literal, so it sits where it sat in the first text.
    let p = crate::stmt::plan::plan_owned(st, template, sql).ok()?;
    let Plan::Table(t) = &p.plan else {
        return None;
    };
    let fits = p.params == literals
        && !t.materialized
        && matches!(
            t.body,
            crate::exec::Body::Select(_)
                | crate::exec::Body::Insert(_)
                | crate::exec::Body::Update(_)
                | crate::exec::Body::Delete(_)
        )
        && covers(st, &positions.tables, &t.tables)
        && types_fit(&positions.compared, &t.tables);
    fits.then_some(p)
}

/// Every table the statement names is one the plan resolved (a base table).
fn covers(
    st: &Context,
    named: &[(Option<String>, String)],
    resolved: &[(String, String, Arc<crate::engine::Table>)],
) -> bool {
    named.iter().all(|(db, name)| {
        let Some(db) = db.as_ref().or(st.db.as_ref()) else {
            return false;
        };
        resolved
            .iter()
            .any(|(d, n, _)| d.eq_ignore_ascii_case(db) && n.eq_ignore_ascii_case(name))
    })
}

/// The access-path rule on compared columns (see the module doc).
fn types_fit(
    compared: &[(String, bool)],
    tables: &[(String, String, Arc<crate::engine::Table>)],
) -> bool {
    use crate::engine::ColumnType;
    compared.iter().all(|(column, number)| {
        let mut found = false;
        for (_, _, t) in tables {
            for c in t.def().columns() {
                if !c.name.eq_ignore_ascii_case(column) {
                    continue;
                }
                found = true;
                let enum_or_set = matches!(c.ty, ColumnType::Enum(_) | ColumnType::Set(_));
                if enum_or_set || (*number && c.ty.is_text()) {
                    return false;
                }
            }
        }
        found
    })
}

/// The literal positions of a statement the allow-list admits, and what the other rules
/// check once the statement is planned.
#[derive(Debug, Default)]
struct Positions {
    /// Where each admitted literal starts.
    values: HashSet<(u64, u64)>,
    /// For each literal compared with a column: the column's name and whether the literal
    /// is a number.
    compared: Vec<(String, bool)>,
    /// The tables the statement names: (database, table).
    tables: Vec<(Option<String>, String)>,
}

fn at(l: Location) -> (u64, u64) {
    (l.line, l.column)
}

/// The allowed literal positions of `tree`; None for a statement the cache does not take.
fn allowed(tree: &Statement) -> Option<Positions> {
    let mut shape = Structure::default();
    let _ = tree.visit(&mut shape);
    let mut p = Positions::default();
    if shape.refused {
        return None;
    }
    p.tables = shape.tables;
    match tree {
        Statement::Query(q) => {
            if shape.queries != 1 {
                return None;
            }
            let SetExpr::Select(s) = &*q.body else {
                return None;
            };
            for t in &s.from {
                for j in &t.joins {
                    if let Some(ast::JoinConstraint::On(e)) = join_constraint(&j.join_operator) {
                        p.condition(e);
                    }
                }
            }
            if let Some(w) = &s.selection {
                p.condition(w);
            }
            if let Some(h) = &s.having {
                p.condition(h);
            }
            match &q.limit_clause {
                Some(ast::LimitClause::LimitOffset { limit, offset, .. }) => {
                    if let Some(l) = limit {
                        p.number(l);
                    }
                    if let Some(o) = offset {
                        p.number(&o.value);
                    }
                }
                Some(ast::LimitClause::OffsetCommaLimit { offset, limit }) => {
                    p.number(offset);
                    p.number(limit);
                }
                None => {}
            }
        }
        Statement::Insert(i) => {
            if shape.queries != 1 {
                return None;
            }
            let q = i.source.as_ref()?;
            let SetExpr::Values(v) = &*q.body else {
                return None;
            };
            for row in &v.rows {
                for e in &row.content {
                    p.value(e);
                }
            }
            for a in &i.assignments {
                p.value(&a.value);
            }
            if let Some(ast::OnInsert::DuplicateKeyUpdate(set)) = &i.on {
                for a in set {
                    p.value(&a.value);
                }
            }
        }
        Statement::Update(u) => {
            if shape.queries != 0 || !u.table.joins.is_empty() || u.from.is_some() {
                return None;
            }
            for a in &u.assignments {
                p.value(&a.value);
            }
            if let Some(w) = &u.selection {
                p.condition(w);
            }
            if let Some(l) = &u.limit {
                p.number(l);
            }
        }
        Statement::Delete(d) => {
            if shape.queries != 0 || !d.tables.is_empty() || d.using.is_some() {
                return None;
            }
            let (ast::FromTable::WithFromKeyword(from) | ast::FromTable::WithoutKeyword(from)) =
                &d.from;
            if from.len() != 1 || !from[0].joins.is_empty() {
                return None;
            }
            if let Some(w) = &d.selection {
                p.condition(w);
            }
            if let Some(l) = &d.limit {
                p.number(l);
            }
        }
        _ => return None,
    }
    Some(p)
}

fn join_constraint(op: &ast::JoinOperator) -> Option<&ast::JoinConstraint> {
    use ast::JoinOperator as J;
    match op {
        J::Join(c)
        | J::Inner(c)
        | J::Left(c)
        | J::LeftOuter(c)
        | J::Right(c)
        | J::RightOuter(c)
        | J::CrossJoin(c) => Some(c),
        _ => None,
    }
}

/// A number, string or hex literal (the kinds a shape leaves out of its key).
fn literal(e: &Expr) -> Option<(&ast::ValueWithSpan, bool)> {
    match e {
        Expr::Value(v) => match &v.value {
            ast::Value::Number(..) => Some((v, true)),
            ast::Value::SingleQuotedString(_)
            | ast::Value::DoubleQuotedString(_)
            | ast::Value::NationalStringLiteral(_)
            | ast::Value::HexStringLiteral(_) => Some((v, false)),
            _ => None,
        },
        _ => None,
    }
}

/// The column a compared operand names (brackets aside).
fn column_name(e: &Expr) -> Option<&str> {
    match e {
        Expr::Nested(e) => column_name(e),
        Expr::Identifier(i) => Some(&i.value),
        Expr::CompoundIdentifier(parts) => parts.last().map(|i| i.value.as_str()),
        _ => None,
    }
}

impl Positions {
    fn admit(&mut self, v: &ast::ValueWithSpan) {
        self.values.insert(at(v.span.start));
    }

    /// A literal compared with `column`.
    fn compared(&mut self, column: &Expr, e: &Expr) {
        if let (Some(name), Some((v, number))) = (column_name(column), literal(e)) {
            self.admit(v);
            self.compared.push((name.to_owned(), number));
        }
    }

    /// A WHERE, ON or HAVING condition.
    fn condition(&mut self, e: &Expr) {
        use BinaryOperator as B;
        match e {
            Expr::Nested(e) => self.condition(e),
            Expr::UnaryOp {
                op: ast::UnaryOperator::Not,
                expr,
            } => self.condition(expr),
            Expr::BinaryOp { left, op, right } => match op {
                B::And | B::Or | B::Xor => {
                    self.condition(left);
                    self.condition(right);
                }
                B::Eq | B::NotEq | B::Lt | B::LtEq | B::Gt | B::GtEq | B::Spaceship => {
                    self.compared(left, right);
                    self.compared(right, left);
                }
                _ => {}
            },
            Expr::In {
                expr,
                target: ast::InTarget::List(list),
                ..
            } => {
                for x in list {
                    self.compared(expr, x);
                }
            }
            Expr::Between {
                expr, low, high, ..
            } => {
                self.compared(expr, low);
                self.compared(expr, high);
            }
            _ => {}
        }
    }

    /// A value written into a row (SET's right-hand side, a VALUES item).
    fn value(&mut self, e: &Expr) {
        use BinaryOperator as B;
        match e {
            Expr::Nested(e) => self.value(e),
            Expr::BinaryOp {
                left,
                op: B::Plus | B::Minus | B::Multiply | B::Divide | B::Modulo,
                right,
            } => {
                self.value(left);
                self.value(right);
            }
            e => {
                if let Some((v, _)) = literal(e) {
                    self.admit(v);
                }
            }
        }
    }

    /// A LIMIT or OFFSET count.
    fn number(&mut self, e: &Expr) {
        if let Some((v, true)) = literal(e) {
            self.admit(v);
        }
    }
}

/// The structural rules: one query block, base tables only, no subquery.
#[derive(Default)]
struct Structure {
    queries: usize,
    refused: bool,
    tables: Vec<(Option<String>, String)>,
}

impl Visitor for Structure {
    type Break = ();

    fn pre_visit_query(&mut self, q: &ast::Query) -> ControlFlow<()> {
        self.queries += 1;
        if q.with.is_some() || !matches!(*q.body, SetExpr::Select(_) | SetExpr::Values(_)) {
            self.refused = true;
            return ControlFlow::Break(());
        }
        ControlFlow::Continue(())
    }

    fn pre_visit_table_factor(&mut self, t: &TableFactor) -> ControlFlow<()> {
        match t {
            TableFactor::Table { args: None, .. } => ControlFlow::Continue(()),
            _ => {
                self.refused = true;
                ControlFlow::Break(())
            }
        }
    }

    fn pre_visit_relation(&mut self, n: &ObjectName) -> ControlFlow<()> {
        let parts: Option<Vec<&str>> =
            n.0.iter()
                .map(|p| p.as_ident().map(|i| i.value.as_str()))
                .collect();
        match parts.as_deref() {
            Some([table]) => self.tables.push((None, (*table).to_owned())),
            Some([db, table]) => self
                .tables
                .push((Some((*db).to_owned()), (*table).to_owned())),
            _ => {
                self.refused = true;
                return ControlFlow::Break(());
            }
        }
        ControlFlow::Continue(())
    }

    fn pre_visit_expr(&mut self, e: &Expr) -> ControlFlow<()> {
        let subquery = match e {
            Expr::Subquery(_) | Expr::Exists { .. } => true,
            Expr::In { target, .. } => !matches!(target, ast::InTarget::List(_)),
            _ => false,
        };
        if subquery {
            self.refused = true;
            return ControlFlow::Break(());
        }
        ControlFlow::Continue(())
    }
}

/// Turns the admitted literals of a shape's tree into numbered parameters (`?#n`, n the
/// literal's place in the text); a literal outside the admitted positions refuses the shape.
struct Placeholders<'a> {
    slots: &'a [Option<u32>],
    at: usize,
    allowed: &'a HashSet<(u64, u64)>,
    refused: bool,
}

impl VisitorMut for Placeholders<'_> {
    type Break = ();

    fn pre_visit_value(&mut self, v: &mut ast::ValueWithSpan) -> ControlFlow<()> {
        let Some(slot) = self.slots.get(self.at) else {
            self.refused = true;
            return ControlFlow::Break(());
        };
        self.at += 1;
        if let Some(i) = slot {
            if !self.allowed.contains(&at(v.span.start)) {
                self.refused = true;
                return ControlFlow::Break(());
            }
            v.value = ast::Value::Placeholder(format!("?#{i}"));
        }
        ControlFlow::Continue(())
    }
}

/// Whether running `plan` may change what planning reads (the session's database, its
/// variables, `LOCK TABLES`, the accounts, the tables): every statement but the ones that
/// only read or write rows, show, or control the transaction.
pub(crate) fn moves_epoch(plan: &Plan) -> bool {
    use crate::exec::Body;
    match plan {
        Plan::Table(t) => !matches!(
            t.body,
            Body::Select(_)
                | Body::Insert(_)
                | Body::Update(_)
                | Body::Delete(_)
                | Body::Explain(_)
                | Body::Show(_)
        ),
        Plan::Select(_)
        | Plan::Do(_)
        | Plan::Show(_)
        | Plan::Begin { .. }
        | Plan::Commit
        | Plan::Rollback
        | Plan::Savepoint(_)
        | Plan::RollbackTo(_)
        | Plan::ReleaseSavepoint(_)
        | Plan::NoOp(_)
        | Plan::ShowCreateDatabase(_)
        | Plan::ChecksumTable(_)
        | Plan::Outfile(_) => false,
        _ => true,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// How many literals of `sql` the allow-list admits (None: the statement is refused).
    fn admitted(sql: &str) -> Option<usize> {
        let tree = crate::sql::parse(sql).unwrap().remove(0);
        allowed(&tree).map(|p| p.values.len())
    }

    #[test]
    fn compared_written_and_limit_values_are_admitted() {
        assert_eq!(
            admitted(
                "SELECT a FROM t WHERE b = 1 AND (c IN (2, 'x') OR d BETWEEN 3 AND 4) LIMIT 5, 6"
            ),
            Some(7)
        );
        assert_eq!(
            admitted("SELECT a FROM t JOIN u ON t.k = u.k AND u.z > 1 WHERE NOT (b <> 'q')"),
            Some(2)
        );
        assert_eq!(
            admitted("UPDATE t SET a = a + 1, b = 'x' WHERE c = 2 LIMIT 3"),
            Some(4)
        );
        assert_eq!(
            admitted("INSERT INTO t (a, b) VALUES (1, 'x') ON DUPLICATE KEY UPDATE b = b * 2"),
            Some(3)
        );
        assert_eq!(admitted("DELETE FROM t WHERE a >= 1.5 LIMIT 1"), Some(2));
    }

    #[test]
    fn other_positions_are_not_admitted() {
        for sql in [
            "SELECT 1, a FROM t WHERE b = 2",
            "SELECT a FROM t ORDER BY 1",
            "SELECT a FROM t GROUP BY 1",
            "SELECT a FROM t WHERE b = -1",
            "SELECT a FROM t WHERE CAST(b AS CHAR) = CAST(1 AS CHAR)",
            "SELECT a FROM t WHERE b LIKE 'x%'",
            "SELECT a FROM t WHERE b + 1 = 2",
            "SELECT a FROM t WHERE 1 = 1",
            "SELECT a FROM t WHERE b = DATE '2020-01-01'",
            "UPDATE t SET a = CONCAT(b, 'x') WHERE c = 1",
        ] {
            let tree = crate::sql::parse(sql).unwrap().remove(0);
            let all = count_literals(&tree);
            assert!(admitted(sql).unwrap() < all, "{sql}");
        }
    }

    #[test]
    fn subqueries_unions_and_other_statements_are_refused() {
        for sql in [
            "SELECT a FROM t WHERE b IN (SELECT c FROM u)",
            "SELECT a FROM t WHERE b = (SELECT 1)",
            "SELECT a FROM (SELECT a FROM t) d WHERE a = 1",
            "SELECT a FROM t UNION SELECT a FROM u",
            "WITH c AS (SELECT 1) SELECT a FROM t",
            "INSERT INTO t SELECT a FROM u WHERE b = 1",
            "UPDATE t JOIN u ON t.k = u.k SET t.a = 1",
            "DELETE t FROM t JOIN u ON t.k = u.k WHERE u.a = 1",
            "SET @a = 1",
            "EXPLAIN SELECT a FROM t WHERE b = 1",
        ] {
            assert_eq!(admitted(sql), None, "{sql}");
        }
    }

    fn count_literals(tree: &Statement) -> usize {
        struct Count(usize);
        impl Visitor for Count {
            type Break = ();
            fn pre_visit_value(&mut self, v: &ast::ValueWithSpan) -> ControlFlow<()> {
                if literal(&Expr::Value(v.clone())).is_some() {
                    self.0 += 1;
                }
                ControlFlow::Continue(())
            }
        }
        let mut c = Count(0);
        let _ = tree.visit(&mut c);
        c.0
    }
}
