//! Bound expressions: a sqlparser expression with names resolved (system variables to
//! registry ids, functions to [`Func`], `?` to parameter indexes), ready to evaluate many
//! times without looking at the parse tree again.

use sqlparser::ast::{
    self, BinaryOperator, Expr, FunctionArg, FunctionArgExpr, FunctionArguments, UnaryOperator,
};

use crate::engine::ColumnType;
use crate::error::{ErrorCode, SqlError, SqlResult};
use crate::sql::bytes::restore;
use crate::sql::functions::Func;
use crate::value::Value;
use crate::vars::{Registry, VarId};

/// Which value of a system variable `@@name` reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum VarScopeRef {
    /// `@@name`: the session value if the variable has one, else the global.
    Default,
    /// `@@session.name` / `@@local.name`.
    Session,
    /// `@@global.name`.
    Global,
}

/// Binary operators tpbed evaluates.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BinOp {
    /// `+`
    Add,
    /// `-`
    Sub,
    /// `*`
    Mul,
    /// `/` (decimal division)
    Div,
    /// `DIV` (integer division)
    IntDiv,
    /// `%` / `MOD`
    Mod,
    /// `=`
    Eq,
    /// `<=>` (NULL-safe equality)
    NullSafeEq,
    /// `<>` / `!=`
    Ne,
    /// `<`
    Lt,
    /// `<=`
    Le,
    /// `>`
    Gt,
    /// `>=`
    Ge,
    /// `XOR`
    Xor,
    /// `&`
    BitAnd,
    /// `|`
    BitOr,
    /// `^`
    BitXor,
    /// `<<`
    Shl,
    /// `>>`
    Shr,
}

/// An expression ready to evaluate.
#[derive(Debug, Clone, PartialEq)]
pub enum BoundExpr {
    /// A constant.
    Literal(Value),
    /// The `n`th `?` of a prepared statement (0-based).
    Param(usize),
    /// `@@[scope.]name`.
    SysVar(VarId, VarScopeRef),
    /// `@name` (user variables are not stored; reads give NULL).
    UserVar(String),
    /// Column `index` of the current row.
    Column(usize),
    /// A binary operation.
    Binary(BinOp, Box<BoundExpr>, Box<BoundExpr>),
    /// `a AND b AND ...` (`&&`): a chain of AND as one node, its operands in written order
    /// (MySQL's `Item_cond_and`). Evaluated left to right: the first FALSE ends it; else NULL
    /// if an operand was NULL; else TRUE.
    And(Vec<BoundExpr>),
    /// `a OR b OR ...`: a chain of OR as one node (MySQL's `Item_cond_or`). Evaluated left to
    /// right: the first TRUE ends it; else NULL if an operand was NULL; else FALSE.
    Or(Vec<BoundExpr>),
    /// Unary minus.
    Neg(Box<BoundExpr>),
    /// `NOT` / `!`.
    Not(Box<BoundExpr>),
    /// `~`.
    BitNot(Box<BoundExpr>),
    /// `IS [NOT] NULL` (`true` = IS NULL).
    IsNull(Box<BoundExpr>, bool),
    /// `IS [NOT] TRUE/FALSE`: (expr, tests-for-true, negated).
    IsBool(Box<BoundExpr>, bool, bool),
    /// `expr [NOT] BETWEEN low AND high`.
    Between(Box<BoundExpr>, Box<BoundExpr>, Box<BoundExpr>, bool),
    /// `expr [NOT] IN (list)`.
    InList(Box<BoundExpr>, Vec<BoundExpr>, bool),
    /// `expr [NOT] LIKE pattern [ESCAPE c]`.
    Like(Box<BoundExpr>, Box<BoundExpr>, u8, bool),
    /// `CASE [operand] WHEN .. THEN .. [ELSE ..] END`.
    Case(
        Option<Box<BoundExpr>>,
        Vec<(BoundExpr, BoundExpr)>,
        Option<Box<BoundExpr>>,
    ),
    /// `CAST(expr AS type)` / `CONVERT(expr, type)`.
    Cast(Box<BoundExpr>, CastType),
    /// A function call.
    Call(Func, Vec<BoundExpr>),
    /// A scalar subquery `(SELECT ...)`, planned by the statement's planner.
    Subquery(SubqueryRef),
    /// A row constructor `(a, b, ...)`: only the left side and the items of `IN` take one
    /// (`(a, b) = (1, 2)` binds as `a = 1 AND b = 2`).
    Row(Vec<BoundExpr>),
}

impl BoundExpr {
    /// Whether the expression is typed DATE (`CAST(.. AS DATE)`, `CURDATE()`): its result
    /// column is a DATE, whatever its values hold.
    pub fn is_date(&self) -> bool {
        matches!(
            self,
            BoundExpr::Cast(_, CastType::Date) | BoundExpr::Call(Func::CurDate, _)
        )
    }
}

/// A planned scalar subquery as an expression holds it: the plan (of the executor's type,
/// which this layer does not know) and the columns of the enclosing statement's row it reads
/// (empty when it is uncorrelated).
#[derive(Clone)]
pub struct SubqueryRef {
    /// The plan.
    pub plan: std::sync::Arc<dyn std::any::Any + Send + Sync>,
    /// Outer row columns the subquery reads, ascending.
    pub outer: Vec<usize>,
}

impl PartialEq for SubqueryRef {
    fn eq(&self, other: &Self) -> bool {
        std::sync::Arc::ptr_eq(&self.plan, &other.plan)
    }
}

impl std::fmt::Debug for SubqueryRef {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SubqueryRef")
            .field("outer", &self.outer)
            .finish_non_exhaustive()
    }
}

/// Target types of CAST.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CastType {
    /// `SIGNED [INTEGER]`.
    Signed,
    /// `UNSIGNED [INTEGER]`.
    Unsigned,
    /// `CHAR[(n)]` / `BINARY`.
    Char,
    /// `DECIMAL(p, s)`: the scale.
    Decimal(u8),
    /// `DOUBLE` / `FLOAT` / `REAL`.
    Double,
    /// `DATE`.
    Date,
    /// `DATETIME`.
    DateTime,
    /// `TIME[(fsp)]`: the fractional digits.
    Time(u8),
}

/// What a binder needs to resolve names.
pub trait Resolver {
    /// Resolves a column reference (`name` or `qualifier.name`) to its index in the row.
    fn column(&self, qualifier: Option<&str>, name: &str) -> SqlResult<usize>;
    /// The variable registry.
    fn registry(&self) -> &Registry;
    /// The values the uncorrelated subquery of `expr IN (SELECT ...)` returned when the
    /// statement was planned (only statements over tables run subqueries).
    fn in_subquery(&self, _q: &ast::Query) -> SqlResult<Vec<Value>> {
        Err(SqlError::unsupported("IN with a subquery"))
    }
    /// The planned scalar subquery `(SELECT ...)` (only SELECTs over tables plan them).
    fn scalar_subquery(&self, _q: &ast::Query) -> SqlResult<BoundExpr> {
        Err(SqlError::unsupported("subqueries here"))
    }
    /// The type of the table column at row index `index`, when it is one.
    fn column_type(&self, _index: usize) -> Option<ColumnType> {
        None
    }
}

/// Binds expressions; counts `?` placeholders in order of appearance.
#[derive(Debug)]
pub struct Binder<'r, R: Resolver> {
    resolver: &'r R,
    /// Number of `?` placeholders bound so far.
    pub params: usize,
}

fn ident_lower(i: &ast::Ident) -> String {
    i.value.to_ascii_lowercase()
}

/// The value of a number, string or hex literal, as a statement binds it (a string is its
/// utf8mb4 bytes, `N'..'` too; hex is its bytes).
pub(crate) fn token_literal(v: &ast::Value) -> SqlResult<Value> {
    Ok(match v {
        ast::Value::Number(n, _) => number_literal(n)?,
        // N'..' is utf8mb3 in MySQL; every literal here is utf8mb4 bytes.
        ast::Value::SingleQuotedString(s)
        | ast::Value::DoubleQuotedString(s)
        | ast::Value::NationalStringLiteral(s) => Value::Bytes(restore(s).into_owned()),
        ast::Value::HexStringLiteral(h) => {
            Value::Bytes(crate::sql::eval::unhex(h).ok_or_else(|| SqlError::parse(h))?)
        }
        other => return Err(SqlError::unsupported(&format!("literal {other}"))),
    })
}

/// The value of a number literal's text (BIGINT, BIGINT UNSIGNED, DOUBLE with an exponent,
/// else DECIMAL), as the binder reads it.
pub(crate) fn number_literal(s: &str) -> SqlResult<Value> {
    if let Ok(i) = s.parse::<i64>() {
        return Ok(Value::Int(i));
    }
    if let Ok(u) = s.parse::<u64>() {
        return Ok(Value::UInt(u));
    }
    if s.contains(['e', 'E']) {
        return match s.parse::<f64>() {
            Ok(d) if d.is_finite() => Ok(Value::Double(d)),
            Ok(_) => Err(SqlError::new(
                ErrorCode::IllegalValueForType,
                format!("Illegal double '{s}' value found during parsing"),
            )),
            Err(_) => Err(SqlError::parse(s)),
        };
    }
    crate::sql::eval::parse_decimal(s)
        .map(Value::Decimal)
        .ok_or_else(|| SqlError::parse(s))
}

impl<'r, R: Resolver> Binder<'r, R> {
    /// A binder over `resolver`.
    pub fn new(resolver: &'r R) -> Self {
        Binder {
            resolver,
            params: 0,
        }
    }

    fn sysvar(&self, scope: VarScopeRef, name: &str) -> SqlResult<BoundExpr> {
        let id = self.resolver.registry().require(name)?;
        Ok(BoundExpr::SysVar(id, scope))
    }

    fn identifier(&mut self, parts: &[ast::Ident]) -> SqlResult<BoundExpr> {
        let first = &parts[0].value;
        if let Some(rest) = first.strip_prefix("@@") {
            let lower = rest.to_ascii_lowercase();
            let scope = match lower.as_str() {
                "global" => Some(VarScopeRef::Global),
                "session" | "local" => Some(VarScopeRef::Session),
                _ => None,
            };
            return match (scope, parts.len()) {
                (Some(s), 2) => self.sysvar(s, &parts[1].value),
                (None, 1) => self.sysvar(VarScopeRef::Default, rest),
                _ => Err(SqlError::parse(first)),
            };
        }
        if let Some(name) = first.strip_prefix('@') {
            return Ok(BoundExpr::UserVar(name.to_ascii_lowercase()));
        }
        match parts {
            // MySQL reads an unquoted `0b101` as a bit-value literal, never as a name.
            [col] if col.quote_style.is_none() && col.value.starts_with("0b") => {
                match crate::sql::eval::bit_literal(&col.value[2..]) {
                    Some(bytes) if col.value.len() > 2 => {
                        Ok(BoundExpr::Literal(Value::Bytes(bytes)))
                    }
                    _ => Ok(BoundExpr::Column(self.resolver.column(None, &col.value)?)),
                }
            }
            [col] => Ok(BoundExpr::Column(self.resolver.column(None, &col.value)?)),
            [.., q, col] => Ok(BoundExpr::Column(
                self.resolver.column(Some(&q.value), &col.value)?,
            )),
            [] => Err(SqlError::parse("")),
        }
    }

    /// Binds one expression.
    ///
    /// Operator chains nest up to [`crate::sql::depth::MAX_DEPTH`] levels and every level
    /// recurses through here, so this function only dispatches: each form that can repeat
    /// without brackets (binary operators, `IS ...`, `BETWEEN`, `IN`, `LIKE`, `::` casts) is
    /// bound by a small function of its own, and everything else by [`Binder::bind_other`].
    /// An unoptimised build gives every local of a function its own stack slot, so one match
    /// over every form cost all of its arms' slots at each level.
    pub fn bind(&mut self, e: &Expr) -> SqlResult<BoundExpr> {
        crate::sql::stack::check()?;
        match e {
            Expr::Nested(inner) => self.bind(inner),
            Expr::BinaryOp { left, op, right } => self.binary(e, left, op, right),
            Expr::IsNull(x) => self.postfix(x, |x| BoundExpr::IsNull(x, true)),
            Expr::IsNotNull(x) => self.postfix(x, |x| BoundExpr::IsNull(x, false)),
            Expr::IsTrue(x) => self.postfix(x, |x| BoundExpr::IsBool(x, true, false)),
            Expr::IsNotTrue(x) => self.postfix(x, |x| BoundExpr::IsBool(x, true, true)),
            Expr::IsFalse(x) => self.postfix(x, |x| BoundExpr::IsBool(x, false, false)),
            Expr::IsNotFalse(x) => self.postfix(x, |x| BoundExpr::IsBool(x, false, true)),
            Expr::Between {
                expr,
                negated,
                low,
                high,
            } => self.between(expr, low, high, *negated),
            Expr::In {
                expr,
                target,
                negated,
                ..
            } => self.in_target(expr, target, *negated),
            Expr::Like {
                negated,
                expr,
                pattern,
                escape_char,
                any: false,
            } => self.like(expr, pattern, escape_char.as_deref(), *negated),
            Expr::Cast {
                expr, data_type, ..
            } => self.cast_to(expr, data_type),
            _ => self.bind_other(e),
        }
    }

    /// `e` bound and boxed.
    fn boxed(&mut self, e: &Expr) -> SqlResult<Box<BoundExpr>> {
        self.bind(e).map(Box::new)
    }

    /// A postfix test (`IS [NOT] NULL/TRUE/FALSE`) of `operand`.
    fn postfix(
        &mut self,
        operand: &Expr,
        node: fn(Box<BoundExpr>) -> BoundExpr,
    ) -> SqlResult<BoundExpr> {
        self.boxed(operand).map(node)
    }

    /// `left op right` (`e`): the plain operators here, the forms that bind differently
    /// (`AND`/`OR` chains, date arithmetic, JSON arrows, row comparisons, `~` in a product)
    /// in functions of their own.
    fn binary(
        &mut self,
        e: &Expr,
        left: &Expr,
        op: &BinaryOperator,
        right: &Expr,
    ) -> SqlResult<BoundExpr> {
        match op {
            BinaryOperator::And | BinaryOperator::Or => return self.chain(e, op),
            BinaryOperator::Plus | BinaryOperator::Minus if is_date_arithmetic(left, op, right) => {
                return self.date_arithmetic(left, op, right)
            }
            BinaryOperator::Arrow | BinaryOperator::LongArrow => {
                return self.json_arrow(left, op, right)
            }
            _ => {}
        }
        if matches!(left, Expr::Tuple(_)) || matches!(right, Expr::Tuple(_)) {
            return self.row_comparison(left, op, right);
        }
        if let Some(product) = bit_not_of_product(op, right) {
            return self.bind(&regroup_bit_not(left, op, product));
        }
        let op = bin_op(op)?;
        let left = self.boxed(left)?;
        Ok(BoundExpr::Binary(op, left, self.boxed(right)?))
    }

    /// `date ± INTERVAL n unit` (or `INTERVAL n unit + date`) as DATE_ADD / DATE_SUB.
    fn date_arithmetic(
        &mut self,
        left: &Expr,
        op: &BinaryOperator,
        right: &Expr,
    ) -> SqlResult<BoundExpr> {
        let (date, interval) = match (left, right) {
            (_, Expr::Interval(iv)) => (left, iv),
            (Expr::Interval(iv), _) => (right, iv),
            _ => return Err(SqlError::unsupported("INTERVAL expressions")),
        };
        let func = if matches!(op, BinaryOperator::Minus) {
            Func::DateSub
        } else {
            Func::DateAdd
        };
        let mut args = vec![self.bind(date)?];
        args.extend(self.interval(interval)?);
        Ok(BoundExpr::Call(func, args))
    }

    /// `doc -> path` as JSON_EXTRACT, `doc ->> path` as JSON_UNQUOTE of it.
    fn json_arrow(
        &mut self,
        left: &Expr,
        op: &BinaryOperator,
        right: &Expr,
    ) -> SqlResult<BoundExpr> {
        let doc = self.bind(left)?;
        let extract = BoundExpr::Call(Func::JsonExtract, vec![doc, self.bind(right)?]);
        Ok(if matches!(op, BinaryOperator::LongArrow) {
            BoundExpr::Call(Func::JsonUnquote, vec![extract])
        } else {
            extract
        })
    }

    /// `expr [NOT] BETWEEN low AND high`.
    fn between(
        &mut self,
        expr: &Expr,
        low: &Expr,
        high: &Expr,
        negated: bool,
    ) -> SqlResult<BoundExpr> {
        let expr = self.boxed(expr)?;
        let low = self.boxed(low)?;
        Ok(BoundExpr::Between(expr, low, self.boxed(high)?, negated))
    }

    /// `expr [NOT] IN (list)` / `expr [NOT] IN (SELECT ...)`.
    fn in_target(
        &mut self,
        expr: &Expr,
        target: &ast::InTarget,
        negated: bool,
    ) -> SqlResult<BoundExpr> {
        match target {
            ast::InTarget::List(list) => {
                let e = Box::new(self.bind_operand(expr)?);
                let width = row_width(&e);
                let list = list
                    .iter()
                    .map(|x| {
                        let item = self.bind_operand(x)?;
                        if row_width(&item) != width {
                            return Err(operand_columns(width));
                        }
                        Ok(item)
                    })
                    .collect::<SqlResult<Vec<_>>>()?;
                Ok(BoundExpr::InList(e, list, negated))
            }
            ast::InTarget::Subquery(q) => {
                let e = self.boxed(expr)?;
                let list = self.resolver.in_subquery(q)?;
                Ok(BoundExpr::InList(
                    e,
                    list.into_iter().map(BoundExpr::Literal).collect(),
                    negated,
                ))
            }
            _ => Err(SqlError::unsupported("IN with a table")),
        }
    }

    /// `expr [NOT] LIKE pattern [ESCAPE 'c']`.
    fn like(
        &mut self,
        expr: &Expr,
        pattern: &Expr,
        escape: Option<&Expr>,
        negated: bool,
    ) -> SqlResult<BoundExpr> {
        let esc = like_escape(escape)?;
        let expr = self.boxed(expr)?;
        Ok(BoundExpr::Like(expr, self.boxed(pattern)?, esc, negated))
    }

    /// `CAST(expr AS type)` / `expr::type`.
    fn cast_to(&mut self, expr: &Expr, data_type: &ast::DataType) -> SqlResult<BoundExpr> {
        let e = self.boxed(expr)?;
        Ok(self.cast(e, cast_type(data_type)?))
    }

    /// The forms [`Binder::bind`] does not dispatch itself: leaves, unary operators and the
    /// forms written with brackets (functions, `CASE`, `CONVERT`, subqueries), which the
    /// parser's own recursion limit keeps shallow.
    fn bind_other(&mut self, e: &Expr) -> SqlResult<BoundExpr> {
        Ok(match e {
            Expr::Value(v) => match &v.value {
                ast::Value::Number(..)
                | ast::Value::SingleQuotedString(_)
                | ast::Value::DoubleQuotedString(_)
                | ast::Value::NationalStringLiteral(_)
                | ast::Value::HexStringLiteral(_) => BoundExpr::Literal(token_literal(&v.value)?),
                ast::Value::SingleQuotedByteStringLiteral(bits) => {
                    BoundExpr::Literal(Value::Bytes(
                        crate::sql::eval::bit_literal(bits).ok_or_else(|| SqlError::parse(bits))?,
                    ))
                }
                ast::Value::Boolean(t) => BoundExpr::Literal(Value::Int(i64::from(*t))),
                ast::Value::Null => BoundExpr::Literal(Value::Null),
                ast::Value::Placeholder(p) if p == "?" => {
                    self.params += 1;
                    BoundExpr::Param(self.params - 1)
                }
                // A literal the text plan cache stands a parameter in for: numbered by its
                // place among the text's literals (no client text spells `?#`).
                ast::Value::Placeholder(p) if p.starts_with("?#") => {
                    let i: usize = p[2..].parse().map_err(|_| SqlError::parse(p))?;
                    self.params = self.params.max(i + 1);
                    BoundExpr::Param(i)
                }
                other => return Err(SqlError::unsupported(&format!("literal {other}"))),
            },
            Expr::Prefixed { prefix, value } => {
                BoundExpr::Literal(crate::sql::charset::introduced(&prefix.value, value)?)
            }
            Expr::Identifier(i) => self.identifier(std::slice::from_ref(i))?,
            Expr::CompoundIdentifier(parts) => self.identifier(parts)?,
            Expr::UnaryOp { op, expr } => match op {
                UnaryOperator::Minus => match self.bind(expr)? {
                    // -(i64::MIN) does not fold: evaluating it reports 1690.
                    BoundExpr::Literal(Value::Int(i)) if i != i64::MIN => {
                        BoundExpr::Literal(Value::Int(-i))
                    }
                    BoundExpr::Literal(Value::UInt(u)) if u == 1u64 << 63 => {
                        BoundExpr::Literal(Value::Int(i64::MIN))
                    }
                    other => BoundExpr::Neg(Box::new(other)),
                },
                UnaryOperator::Plus => self.bind(expr)?,
                UnaryOperator::Not | UnaryOperator::BangNot => BoundExpr::Not(self.boxed(expr)?),
                UnaryOperator::BitwiseNot => self.bit_not(expr)?,
                other => return Err(SqlError::unsupported(&format!("operator {other}"))),
            },
            Expr::Tuple(_) => return Err(operand_columns(1)),
            Expr::Case {
                operand,
                conditions,
                else_result,
                ..
            } => {
                let operand = match operand {
                    Some(o) => Some(self.boxed(o)?),
                    None => None,
                };
                let mut arms = Vec::with_capacity(conditions.len());
                for c in conditions {
                    arms.push((self.bind(&c.condition)?, self.bind(&c.result)?));
                }
                let other = match else_result {
                    Some(e) => Some(self.boxed(e)?),
                    None => None,
                };
                BoundExpr::Case(operand, arms, other)
            }
            Expr::Convert {
                expr,
                data_type: Some(data_type),
                ..
            } => self.cast_to(expr, data_type)?,
            // Text is held as utf8mb4 bytes, so converting to it (or to binary) only makes
            // the value a string.
            Expr::Convert {
                expr,
                data_type: None,
                charset: Some(cs),
                ..
            } => match crate::sql::collations::charset(&cs.to_string())?.0 {
                "utf8mb4" | "utf8mb3" | "binary" => {
                    let e = self.boxed(expr)?;
                    self.cast(e, CastType::Char)
                }
                other => {
                    return Err(SqlError::unsupported(&format!(
                        "CONVERT(... USING {other})"
                    )))
                }
            },
            Expr::Substring {
                expr,
                substring_from,
                substring_for,
                ..
            } => {
                // `SUBSTRING(s)` has no position: MySQL's grammar refuses it.
                let Some(from) = substring_from else {
                    return Err(SqlError::parse(&format!("{e}")));
                };
                let mut args = vec![self.bind(expr)?, self.bind(from)?];
                if let Some(f) = substring_for {
                    args.push(self.bind(f)?);
                }
                self.on_bytes_if_binary(Func::Substring, expr, args)
            }
            Expr::Ceil { expr, .. } => BoundExpr::Call(Func::Ceil, vec![self.bind(expr)?]),
            Expr::Floor { expr, .. } => BoundExpr::Call(Func::Floor, vec![self.bind(expr)?]),
            Expr::Function(f) => self.function(f)?,
            Expr::Interval(_) => return Err(SqlError::unsupported("INTERVAL expressions")),
            Expr::Subquery(q) => self.resolver.scalar_subquery(q)?,
            Expr::Exists { .. } => return Err(SqlError::unsupported("EXISTS subqueries")),
            other => return Err(SqlError::unsupported(&format!("expression {other}"))),
        })
    }

    /// A chain of `op` (AND or OR) as one n-ary node. Its operands are the leaves of the
    /// operations of `op` under `e` not inside brackets, in written order, whatever the
    /// grouping (sqlparser's left-deep one or [`crate::sql::chains`]' balanced one); they are
    /// gathered with an explicit stack, so a chain of any length binds without recursing per
    /// operand.
    fn chain(&mut self, e: &Expr, op: &BinaryOperator) -> SqlResult<BoundExpr> {
        let mut operands = Vec::new();
        let mut pending = vec![e];
        while let Some(x) = pending.pop() {
            match x {
                Expr::BinaryOp { left, op: o, right } if o == op => {
                    pending.push(right);
                    pending.push(left);
                }
                operand => operands.push(self.bind(operand)?),
            }
        }
        Ok(if matches!(op, BinaryOperator::And) {
            BoundExpr::And(operands)
        } else {
            BoundExpr::Or(operands)
        })
    }

    /// An operand that may be a row constructor (the two sides of `IN`).
    fn bind_operand(&mut self, e: &Expr) -> SqlResult<BoundExpr> {
        match e {
            Expr::Tuple(items) => Ok(BoundExpr::Row(
                items
                    .iter()
                    .map(|x| self.bind(x))
                    .collect::<SqlResult<Vec<_>>>()?,
            )),
            Expr::Nested(inner) if matches!(**inner, Expr::Tuple(_)) => self.bind_operand(inner),
            other => self.bind(other),
        }
    }

    /// `(a, b) = (x, y)` as `a = x AND b = y` (`<>` as its negation); other comparisons of
    /// rows are not supported.
    fn row_comparison(
        &mut self,
        left: &Expr,
        op: &BinaryOperator,
        right: &Expr,
    ) -> SqlResult<BoundExpr> {
        let (l, r) = (self.bind_operand(left)?, self.bind_operand(right)?);
        let (BoundExpr::Row(ls), BoundExpr::Row(rs)) = (&l, &r) else {
            return Err(operand_columns(row_width(&l)));
        };
        if ls.len() != rs.len() {
            return Err(operand_columns(ls.len()));
        }
        let negated = match op {
            BinaryOperator::Eq => false,
            BinaryOperator::NotEq => true,
            other => {
                return Err(SqlError::unsupported(&format!(
                    "row comparison with {other}"
                )))
            }
        };
        let mut pairs: Vec<BoundExpr> = ls
            .iter()
            .zip(rs)
            .map(|(a, b)| BoundExpr::Binary(BinOp::Eq, Box::new(a.clone()), Box::new(b.clone())))
            .collect();
        let all = match pairs.len() {
            0 => return Err(operand_columns(1)),
            1 => pairs.swap_remove(0),
            _ => BoundExpr::And(pairs),
        };
        Ok(if negated {
            BoundExpr::Not(Box::new(all))
        } else {
            all
        })
    }

    /// `INTERVAL n unit` as the two arguments DATE_ADD/DATE_SUB take after the date: the
    /// amount and the unit's name (units made of two fields are not supported).
    fn interval(&mut self, iv: &ast::Interval) -> SqlResult<[BoundExpr; 2]> {
        let unit = iv
            .leading_field
            .as_ref()
            .map(|f| f.to_string())
            .filter(|u| iv.last_field.is_none() && crate::sql::date_arith::is_unit(u))
            .ok_or_else(|| SqlError::unsupported(&format!("INTERVAL {iv}")))?;
        Ok([self.bind(&iv.value)?, BoundExpr::Literal(Value::str(&unit))])
    }

    fn function(&mut self, f: &ast::Function) -> SqlResult<BoundExpr> {
        let name = match f.name.0.last() {
            Some(ast::ObjectNamePart::Identifier(i)) => ident_lower(i),
            _ => return Err(SqlError::parse(&f.name.to_string())),
        };
        let mut args = Vec::new();
        match &f.args {
            FunctionArguments::None => {}
            FunctionArguments::Subquery(_) => return Err(SqlError::unsupported("subqueries")),
            FunctionArguments::List(list) => {
                for a in &list.args {
                    match a {
                        FunctionArg::Unnamed(FunctionArgExpr::Expr(Expr::Interval(iv)))
                            if matches!(
                                name.as_str(),
                                "date_add" | "date_sub" | "adddate" | "subdate"
                            ) =>
                        {
                            args.extend(self.interval(iv)?)
                        }
                        FunctionArg::Unnamed(FunctionArgExpr::Expr(e)) => args.push(self.bind(e)?),
                        FunctionArg::Unnamed(FunctionArgExpr::Wildcard) => {
                            args.push(BoundExpr::Literal(Value::Int(1)))
                        }
                        other => {
                            return Err(SqlError::unsupported(&format!(
                                "function argument {other}"
                            )))
                        }
                    }
                }
            }
        }
        let func = Func::lookup(&name).ok_or_else(|| {
            SqlError::new(
                ErrorCode::SpDoesNotExist,
                format!("FUNCTION {name} does not exist"),
            )
        })?;
        func.check_arity(&name, args.len())?;
        if func.reads_text() {
            // HEX reads a BIT column as the number it is (MySQL's numeric HEX).
            let bits_as_text = func != Func::Hex;
            args = args
                .into_iter()
                .map(|a| self.column_text(a, bits_as_text))
                .collect();
        }
        let first = match &f.args {
            FunctionArguments::List(list) => match list.args.first() {
                Some(FunctionArg::Unnamed(FunctionArgExpr::Expr(e))) => Some(e),
                _ => None,
            },
            _ => None,
        };
        Ok(match first {
            Some(first) => self.on_bytes_if_binary(func, first, args),
            None => BoundExpr::Call(func, args),
        })
    }

    /// `~operand`. sqlparser reads `~`'s operand up to the next `+` or `-`, so `~a * b` arrives
    /// as `~(a * b)`; MySQL's `~` binds tighter than every binary operator, so it applies to the
    /// leftmost operand of an unbracketed operation (a bracketed one is `Expr::Nested`).
    fn bit_not(&mut self, operand: &Expr) -> SqlResult<BoundExpr> {
        match operand {
            Expr::BinaryOp { left, op, right }
                if !matches!(op, BinaryOperator::Arrow | BinaryOperator::LongArrow) =>
            {
                let inverted = Expr::UnaryOp {
                    op: UnaryOperator::BitwiseNot,
                    expr: left.clone(),
                };
                let left = self.bind(&inverted)?;
                let whole = Expr::BinaryOp {
                    left: Box::new(Expr::Value(ast::Value::Null.into())),
                    op: op.clone(),
                    right: right.clone(),
                };
                // Bind the operation with a stand-in on the left, then put the bound `~left`
                // in its place.
                match self.bind(&whole)? {
                    BoundExpr::Binary(op, _, right) => {
                        Ok(BoundExpr::Binary(op, Box::new(left), right))
                    }
                    other => Err(SqlError::unsupported(&format!("~ before {other:?}"))),
                }
            }
            other => Ok(BoundExpr::BitNot(Box::new(self.bind(other)?))),
        }
    }

    /// A call of `func` whose first argument, `first` as written, is a binary string works on
    /// its bytes: SUBSTRING, LEFT and RIGHT count bytes, CHAR_LENGTH is LENGTH, and UPPER and
    /// LOWER return the string unchanged.
    fn on_bytes_if_binary(&self, func: Func, first: &Expr, mut args: Vec<BoundExpr>) -> BoundExpr {
        let by_bytes = matches!(
            func,
            Func::Substring
                | Func::Left
                | Func::Right
                | Func::CharLength
                | Func::Upper
                | Func::Lower
        );
        let column = |q: Option<&str>, name: &str| {
            let index = self.resolver.column(q, name).ok()?;
            self.resolver.column_type(index)
        };
        if !by_bytes || !crate::sql::binary_strings::is_binary(first, &column) {
            return BoundExpr::Call(func, args);
        }
        match func {
            Func::Substring => BoundExpr::Call(Func::BinarySubstring, args),
            Func::Left => BoundExpr::Call(Func::BinaryLeft, args),
            Func::Right => BoundExpr::Call(Func::BinaryRight, args),
            Func::CharLength => BoundExpr::Call(Func::Length, args),
            _ => args.swap_remove(0),
        }
    }

    /// `CAST(e AS ty)`: a temporal column cast to a string prints as its type does.
    fn cast(&self, e: Box<BoundExpr>, ty: CastType) -> BoundExpr {
        match ty {
            CastType::Char => BoundExpr::Cast(Box::new(self.column_text(*e, true)), ty),
            _ => BoundExpr::Cast(e, ty),
        }
    }

    /// A column read as a string: a DATE/DATETIME/TIMESTAMP prints as its type does
    /// (`2024-01-02` for a DATE, every declared fractional digit for DATETIME(6)), a BIT(n)
    /// is its bytes when `bits_as_text`.
    fn column_text(&self, arg: BoundExpr, bits_as_text: bool) -> BoundExpr {
        let BoundExpr::Column(i) = arg else {
            return arg;
        };
        let (func, n) = match self.resolver.column_type(i) {
            Some(ColumnType::Date) => (Func::TemporalText, -1),
            Some(ColumnType::DateTime { fsp } | ColumnType::Timestamp { fsp }) => {
                (Func::TemporalText, i64::from(fsp))
            }
            Some(ColumnType::Bit(width)) if bits_as_text => (Func::BitText, i64::from(width)),
            _ => return arg,
        };
        BoundExpr::Call(func, vec![arg, BoundExpr::Literal(Value::Int(n))])
    }
}

/// Whether `left op right` (`op` being `+` or `-`) adds an interval to a date: `date ±
/// INTERVAL n unit` or `INTERVAL n unit + date`.
fn is_date_arithmetic(left: &Expr, op: &BinaryOperator, right: &Expr) -> bool {
    matches!(right, Expr::Interval(_))
        || (matches!(op, BinaryOperator::Plus) && matches!(left, Expr::Interval(_)))
}

/// The operator tpbed evaluates for sqlparser's `op` (1235 for the ones it does not).
fn bin_op(op: &BinaryOperator) -> SqlResult<BinOp> {
    Ok(match op {
        BinaryOperator::Plus => BinOp::Add,
        BinaryOperator::Minus => BinOp::Sub,
        BinaryOperator::Multiply => BinOp::Mul,
        BinaryOperator::Divide => BinOp::Div,
        BinaryOperator::MyIntegerDivide => BinOp::IntDiv,
        BinaryOperator::Modulo => BinOp::Mod,
        BinaryOperator::Eq => BinOp::Eq,
        BinaryOperator::Spaceship => BinOp::NullSafeEq,
        BinaryOperator::NotEq => BinOp::Ne,
        BinaryOperator::Lt => BinOp::Lt,
        BinaryOperator::LtEq => BinOp::Le,
        BinaryOperator::Gt => BinOp::Gt,
        BinaryOperator::GtEq => BinOp::Ge,
        BinaryOperator::Xor => BinOp::Xor,
        BinaryOperator::BitwiseAnd => BinOp::BitAnd,
        BinaryOperator::BitwiseOr => BinOp::BitOr,
        BinaryOperator::BitwiseXor => BinOp::BitXor,
        BinaryOperator::PGBitwiseShiftLeft => BinOp::Shl,
        BinaryOperator::PGBitwiseShiftRight => BinOp::Shr,
        other => return Err(SqlError::unsupported(&format!("operator {other}"))),
    })
}

/// The escape character of `LIKE ... [ESCAPE 'c']` (`\` when none is given): one character
/// or 1210.
fn like_escape(escape: Option<&Expr>) -> SqlResult<u8> {
    let wrong = || SqlError::new(ErrorCode::WrongArguments, "Incorrect arguments to ESCAPE");
    match escape {
        None => Ok(b'\\'),
        Some(Expr::Value(v)) => match &v.value {
            ast::Value::SingleQuotedString(s) if s.len() == 1 => Ok(s.as_bytes()[0]),
            _ => Err(wrong()),
        },
        Some(_) => Err(wrong()),
    }
}

/// Whether `op` is one of MySQL's multiplicative operators (`*`, `/`, `DIV`, `%`), which
/// share one precedence and group left to right.
fn is_multiplicative(op: &BinaryOperator) -> bool {
    matches!(
        op,
        BinaryOperator::Multiply
            | BinaryOperator::Divide
            | BinaryOperator::MyIntegerDivide
            | BinaryOperator::Modulo
    )
}

/// For `left op right` with a multiplicative `op` and `right` written `~a o b ...`: the
/// product sqlparser read as `~`'s operand (it stops `~`'s operand only at `+` or `-`).
fn bit_not_of_product<'e>(op: &BinaryOperator, right: &'e Expr) -> Option<&'e Expr> {
    match right {
        Expr::UnaryOp {
            op: UnaryOperator::BitwiseNot,
            expr,
        } if is_multiplicative(op) => match &**expr {
            Expr::BinaryOp { op: inner, .. } if is_multiplicative(inner) => Some(expr),
            _ => None,
        },
        _ => None,
    }
}

/// `left op ~(a o1 b o2 c)` as MySQL reads `left op ~a o1 b o2 c`: `~` takes only `a`, and
/// the operators, all of one precedence, group from the left: `((left op ~a) o1 b) o2 c`.
/// So `3 * ~0 * 0` multiplies `3 * ~0` first and overflows, as in MySQL.
fn regroup_bit_not(left: &Expr, op: &BinaryOperator, product: &Expr) -> Expr {
    // The product's left spine, outermost operation first; iterative so a long chain does
    // not recurse.
    let mut spine = Vec::new();
    let mut leaf = product;
    while let Expr::BinaryOp {
        left: inner_left,
        op: inner_op,
        right: inner_right,
    } = leaf
    {
        if !is_multiplicative(inner_op) {
            break;
        }
        spine.push((inner_op, inner_right));
        leaf = inner_left;
    }
    let mut regrouped = Expr::BinaryOp {
        left: Box::new(left.clone()),
        op: op.clone(),
        right: Box::new(Expr::UnaryOp {
            op: UnaryOperator::BitwiseNot,
            expr: Box::new(leaf.clone()),
        }),
    };
    for (inner_op, inner_right) in spine.into_iter().rev() {
        regrouped = Expr::BinaryOp {
            left: Box::new(regrouped),
            op: inner_op.clone(),
            right: inner_right.clone(),
        };
    }
    regrouped
}

/// The number of values an operand holds (1 unless it is a row constructor).
fn row_width(e: &BoundExpr) -> usize {
    match e {
        BoundExpr::Row(items) => items.len(),
        _ => 1,
    }
}

/// 1241: an operand with the wrong number of values.
pub(crate) fn operand_columns(n: usize) -> SqlError {
    SqlError::new(
        ErrorCode::OperandColumns,
        format!("Operand should contain {n} column(s)"),
    )
}

fn cast_type(t: &ast::DataType) -> SqlResult<CastType> {
    use ast::DataType as D;
    Ok(match t {
        D::Signed | D::SignedInteger | D::Int(_) | D::Integer(_) | D::BigInt(_) => CastType::Signed,
        D::Unsigned | D::UnsignedInteger => CastType::Unsigned,
        D::Char(_) | D::Varchar(_) | D::Binary(_) | D::Text | D::String(_) | D::Nvarchar(_) => {
            CastType::Char
        }
        D::Decimal(info) | D::Numeric(info) => CastType::Decimal(match info {
            ast::ExactNumberInfo::PrecisionAndScale(_, s) => u8::try_from(*s)
                .ok()
                .filter(|s| *s <= crate::sql::eval::MAX_DECIMAL_SCALE)
                .ok_or_else(|| {
                    SqlError::new(
                        ErrorCode::TooBigScale,
                        format!(
                            "Too big scale {s} specified for 'CAST'. Maximum is {}.",
                            crate::sql::eval::MAX_DECIMAL_SCALE
                        ),
                    )
                })?,
            _ => 0,
        }),
        D::Double(_) | D::Float(_) | D::Real | D::DoublePrecision => CastType::Double,
        D::Date => CastType::Date,
        D::Datetime(_) | D::Timestamp(..) => CastType::DateTime,
        D::Time(fsp, _) => CastType::Time(fsp.unwrap_or(0).min(6) as u8),
        other => return Err(SqlError::unsupported(&format!("CAST to {other}"))),
    })
}
