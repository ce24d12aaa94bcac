//! Aggregates: COUNT/SUM/MIN/MAX/AVG accumulators with MySQL's result types (SUM and AVG of
//! exact numbers are DECIMAL, AVG adds 4 digits of scale), and the rewrite that turns a
//! select list into expressions over the aggregate row (one slot per aggregate and per bare
//! column, the latter keeping the group's first value).

use std::cell::RefCell;
use std::cmp::Ordering;
use std::ops::ControlFlow;

use sqlparser::ast::{self, Expr, FunctionArg, FunctionArgExpr, FunctionArguments};

use crate::error::{ErrorCode, SqlError, SqlResult};
use crate::exec::scope::Scope;
use crate::sql::eval::{compare, to_f64};
use crate::sql::expr::{Binder, BoundExpr, Resolver};
use crate::value::{Decimal, Value, I256};
use crate::vars::Registry;

/// An aggregate function.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AggFunc {
    /// COUNT(expr) / COUNT(*) (arg None).
    Count,
    /// SUM.
    Sum,
    /// AVG.
    Avg,
    /// MIN.
    Min,
    /// MAX.
    Max,
    /// A bare column in an aggregated select: the group's first value.
    First,
    /// GROUP_CONCAT: the group's non-NULL values joined by the slot's separator.
    GroupConcat,
}

/// One slot of the aggregate row.
#[derive(Debug, Clone, PartialEq)]
pub struct AggSlot {
    /// Function.
    pub func: AggFunc,
    /// Argument over the source row (None for COUNT(*)).
    pub arg: Option<BoundExpr>,
    /// DISTINCT.
    pub distinct: bool,
    /// GROUP_CONCAT's SEPARATOR (`,` unless given).
    pub separator: Vec<u8>,
}

/// Running state of one slot.
#[derive(Debug, Clone)]
pub struct Acc {
    count: u64,
    sum_exact: Option<Decimal>,
    sum_float: f64,
    float: bool,
    best: Value,
    seen: Vec<Value>,
    first: bool,
    joined: Option<Vec<u8>>,
}

impl Acc {
    /// A fresh accumulator.
    pub fn new() -> Acc {
        Acc {
            count: 0,
            sum_exact: Some(Decimal::new(0, 0)),
            sum_float: 0.0,
            float: false,
            best: Value::Null,
            seen: Vec::new(),
            first: true,
            joined: None,
        }
    }

    /// Adds one input value.
    pub fn add(&mut self, slot: &AggSlot, v: Value) {
        if slot.func == AggFunc::First {
            if self.first {
                self.best = v;
                self.first = false;
            }
            return;
        }
        if slot.arg.is_some() && v.is_null() {
            return;
        }
        if slot.distinct {
            if self
                .seen
                .iter()
                .any(|s| compare(s, &v) == Some(Ordering::Equal))
            {
                return;
            }
            self.seen.push(v.clone());
        }
        self.count += 1;
        match slot.func {
            AggFunc::Count | AggFunc::First => {}
            AggFunc::GroupConcat => {
                let text = crate::sql::eval::to_bytes(&v).unwrap_or_default();
                match &mut self.joined {
                    Some(out) => {
                        out.extend_from_slice(&slot.separator);
                        out.extend_from_slice(&text);
                    }
                    None => self.joined = Some(text),
                }
            }
            AggFunc::Sum | AggFunc::Avg => {
                let exact = crate::sql::eval::decimal_of(&v);
                match (exact, self.sum_exact) {
                    (Some(d), Some(s)) if !self.float => self.sum_exact = add_dec(s, d),
                    _ => self.float = true,
                }
                self.sum_float += to_f64(&v).unwrap_or(0.0);
            }
            AggFunc::Min | AggFunc::Max => {
                let better = self.best.is_null()
                    || match compare(&v, &self.best) {
                        Some(Ordering::Less) => slot.func == AggFunc::Min,
                        Some(Ordering::Greater) => slot.func == AggFunc::Max,
                        _ => false,
                    };
                if better {
                    self.best = v;
                }
            }
        }
    }

    /// The slot's result.
    pub fn finish(&self, slot: &AggSlot) -> Value {
        match slot.func {
            AggFunc::Count => Value::Int(self.count as i64),
            AggFunc::First | AggFunc::Min | AggFunc::Max => self.best.clone(),
            AggFunc::GroupConcat => self.joined.clone().map_or(Value::Null, Value::Bytes),
            _ if self.count == 0 => Value::Null,
            AggFunc::Sum => match (self.float, self.sum_exact) {
                (false, Some(d)) => Value::Decimal(d),
                _ => Value::Double(self.sum_float),
            },
            AggFunc::Avg => match (self.float, self.sum_exact) {
                (false, Some(d)) => {
                    let scale = d.scale + 4;
                    let num = d.unscaled() * I256::new(100_000);
                    let q = num / I256::from(self.count);
                    let rounded = (q + q.signum() * 5) / 10;
                    // MySQL's AVG keeps four more digits, at most DECIMAL's 30.
                    let scale_kept = scale.min(crate::engine::types::MAX_DECIMAL_SCALE);
                    Value::Decimal(crate::engine::coerce::rescale(
                        Decimal::new(rounded, scale),
                        scale_kept,
                    ))
                }
                _ => Value::Double(self.sum_float / self.count as f64),
            },
        }
    }
}

impl Default for Acc {
    fn default() -> Self {
        Acc::new()
    }
}

fn add_dec(a: Decimal, b: Decimal) -> Option<Decimal> {
    let s = a.scale.max(b.scale);
    let x = a
        .unscaled()
        .checked_mul(I256::new(10).checked_pow(u32::from(s - a.scale))?)?;
    let y = b
        .unscaled()
        .checked_mul(I256::new(10).checked_pow(u32::from(s - b.scale))?)?;
    Some(Decimal::new(x.checked_add(y)?, s))
}

/// The aggregate a function call names, if it is one.
pub fn agg_func(f: &ast::Function) -> Option<AggFunc> {
    let name = f.name.to_string().to_ascii_lowercase();
    Some(match name.as_str() {
        "count" => AggFunc::Count,
        "sum" => AggFunc::Sum,
        "avg" => AggFunc::Avg,
        "min" => AggFunc::Min,
        "max" => AggFunc::Max,
        "group_concat" => AggFunc::GroupConcat,
        _ => return None,
    })
}

/// Whether an expression contains an aggregate call.
pub fn has_aggregate(e: &Expr) -> bool {
    let mut found = false;
    // An aggregate inside a subquery aggregates the subquery's rows.
    crate::exec::subquery::visit_own_expressions(e, &mut |x| {
        if let Expr::Function(f) = x {
            found |= agg_func(f).is_some();
        }
    });
    found
}

/// Binds expressions of an aggregated SELECT: aggregate arguments and bare columns bind
/// against the source scope and become slots; the expression itself reads the slot row.
#[derive(Debug)]
pub struct AggBinder<'s, 'r> {
    /// The sources.
    pub scope: &'s Scope<'r>,
    /// Slots registered so far.
    pub slots: RefCell<Vec<AggSlot>>,
}

impl Resolver for AggBinder<'_, '_> {
    fn column(&self, qualifier: Option<&str>, name: &str) -> SqlResult<usize> {
        if qualifier == Some("\0agg") {
            return name
                .parse()
                .map_err(|_| SqlError::new(ErrorCode::Unknown, "bad aggregate slot"));
        }
        let base = self.scope.column(qualifier, name)?;
        let slot = AggSlot {
            func: AggFunc::First,
            arg: Some(BoundExpr::Column(base)),
            distinct: false,
            separator: Vec::new(),
        };
        let mut slots = self.slots.borrow_mut();
        if let Some(i) = slots.iter().position(|s| *s == slot) {
            return Ok(i);
        }
        slots.push(slot);
        Ok(slots.len() - 1)
    }

    fn column_type(&self, index: usize) -> Option<crate::engine::ColumnType> {
        match self.slots.borrow().get(index) {
            Some(AggSlot {
                func: AggFunc::First,
                arg: Some(BoundExpr::Column(base)),
                ..
            }) => self.scope.column_type(*base),
            _ => None,
        }
    }

    fn registry(&self) -> &Registry {
        self.scope.registry()
    }
}

impl AggBinder<'_, '_> {
    /// Binds `e` over the slot row; `params` is the statement's running `?` count.
    pub fn bind(&self, e: &Expr, params: &mut usize) -> SqlResult<BoundExpr> {
        let mut rewritten = e.clone();
        let mut failure = None;
        let _ = ast::visit_expressions_mut(&mut rewritten, |x| {
            let Expr::Function(f) = x else {
                return ControlFlow::Continue(());
            };
            let Some(func) = agg_func(f) else {
                return ControlFlow::Continue(());
            };
            match self.slot_for(func, f, params) {
                Ok(i) => {
                    *x = Expr::CompoundIdentifier(vec![
                        ast::Ident::new("\0agg"),
                        ast::Ident::new(i.to_string()),
                    ]);
                    ControlFlow::Continue(())
                }
                Err(e) => {
                    failure = Some(e);
                    ControlFlow::Break(())
                }
            }
        });
        if let Some(e) = failure {
            return Err(e);
        }
        let mut b = Binder::new(self);
        b.params = *params;
        let out = b.bind(&rewritten)?;
        *params = b.params;
        Ok(out)
    }

    fn slot_for(&self, func: AggFunc, f: &ast::Function, params: &mut usize) -> SqlResult<usize> {
        let FunctionArguments::List(list) = &f.args else {
            return Err(SqlError::parse(&f.to_string()));
        };
        let distinct = matches!(
            list.duplicate_treatment,
            Some(ast::DuplicateTreatment::Distinct)
        );
        let arg = match list.args.as_slice() {
            [FunctionArg::Unnamed(FunctionArgExpr::Wildcard)] if func == AggFunc::Count => None,
            [FunctionArg::Unnamed(FunctionArgExpr::Expr(e))] => {
                if has_aggregate(e) {
                    return Err(SqlError::new(
                        ErrorCode::InvalidGroupFuncUse,
                        "Invalid use of group function",
                    ));
                }
                let mut b = Binder::new(self.scope);
                b.params = *params;
                let bound = b.bind(e)?;
                *params = b.params;
                Some(bound)
            }
            _ => return Err(SqlError::parse(&f.to_string())),
        };
        let mut separator = b",".to_vec();
        for clause in &list.clauses {
            match clause {
                ast::FunctionArgumentClause::Separator(v) if func == AggFunc::GroupConcat => {
                    match &v.value {
                        ast::Value::SingleQuotedString(s) | ast::Value::DoubleQuotedString(s) => {
                            separator = crate::sql::bytes::restore(s).into_owned()
                        }
                        other => return Err(SqlError::parse(&other.to_string())),
                    }
                }
                other => return Err(SqlError::unsupported(&format!("{other} in an aggregate"))),
            }
        }
        let slot = AggSlot {
            func,
            arg,
            distinct,
            separator,
        };
        let mut slots = self.slots.borrow_mut();
        slots.push(slot);
        Ok(slots.len() - 1)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sum_and_avg_are_decimal() {
        let slot = AggSlot {
            func: AggFunc::Avg,
            arg: Some(BoundExpr::Column(0)),
            distinct: false,
            separator: Vec::new(),
        };
        let mut a = Acc::new();
        for v in [1, 2, 2] {
            a.add(&slot, Value::Int(v));
        }
        assert_eq!(
            a.finish(&slot).clone(),
            Value::Decimal(Decimal::new(16667, 4))
        );
        let sum = AggSlot {
            func: AggFunc::Sum,
            ..slot.clone()
        };
        let mut s = Acc::new();
        s.add(&sum, Value::Int(5));
        s.add(&sum, Value::Null);
        assert_eq!(s.finish(&sum), Value::Decimal(Decimal::new(5, 0)));
        assert_eq!(Acc::new().finish(&sum), Value::Null);
    }
}
