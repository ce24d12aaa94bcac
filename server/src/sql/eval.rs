//! Evaluation of bound expressions with MySQL's type rules: integer arithmetic stays integer
//! (overflow is error 1690), `/` is decimal division, strings compare case-insensitively
//! (utf8mb4_0900_ai_ci for ASCII), comparisons with NULL give NULL.

use std::cmp::Ordering;

use crate::engine::time_value::{parse_time, time_number};
use crate::error::{ErrorCode, SqlError, SqlResult};
use crate::sql::expr::{BinOp, BoundExpr, CastType, SubqueryRef, VarScopeRef};
use crate::sql::functions::{call, Func};
use crate::value::{Decimal, Value, I256};
use crate::vars::VarId;

/// What evaluation needs from the session and statement.
pub trait EvalEnv {
    /// The value of parameter `i` of a prepared statement.
    fn param(&self, i: usize) -> SqlResult<Value>;
    /// A system variable's value.
    fn sysvar(&self, id: VarId, scope: VarScopeRef) -> SqlResult<Value>;
    /// A user variable `@name` (None when unset).
    fn user_var(&self, name: &str) -> Option<&Value>;
    /// The current row (column references index into it).
    fn row(&self) -> &[Value];
    /// Session facts for functions such as CONNECTION_ID() and DATABASE().
    fn session_fact(&self, f: Func) -> Value;
    /// The statement's start time, microseconds since the epoch (NOW() is constant in a
    /// statement).
    fn now_micros(&self) -> i64;
    /// Sleeps (SLEEP()), reporting the wait to the connection handler; `Ok(true)` when a KILL
    /// QUERY interrupted it.
    fn sleep(&self, seconds: f64) -> SqlResult<bool>;
    /// Whether the statement has been killed (checked by long loops such as BENCHMARK()).
    fn killed(&self) -> bool;
    /// The session's `max_allowed_packet`: no value a function builds may be longer.
    fn max_allowed_packet(&self) -> usize;
    /// Room for a value of `bytes` a function is about to build or copy: 1037 when the
    /// server's memory budget cannot hold it (values under
    /// `memory::CHECKED_VALUE` always pass).
    fn reserve(&self, _bytes: usize) -> SqlResult<()> {
        Ok(())
    }
    /// Adds a warning to the statement's diagnostics (SHOW WARNINGS).
    fn warn(&self, code: ErrorCode, message: String);
    /// Whether `sql_mode` has `ERROR_FOR_DIVISION_BY_ZERO` (a division by zero warns).
    fn division_by_zero_warns(&self) -> bool;
    /// The value of a scalar subquery over the current row (NULL when it returns no row).
    fn scalar_subquery(&self, _q: &SubqueryRef) -> SqlResult<Value> {
        Err(SqlError::unsupported("subqueries here"))
    }
}

/// Decimal scale added by `/` (MySQL's `div_precision_increment` default).
const DIV_PRECISION: u8 = 4;

fn out_of_range(what: &str) -> SqlError {
    SqlError::new(
        ErrorCode::DataOutOfRange,
        format!("BIGINT value is out of range in '{what}'"),
    )
}

/// Parses a decimal literal (`12.50`, `-3`, `.5`).
pub fn parse_decimal(s: &str) -> Option<Decimal> {
    let s = s.trim();
    let (neg, body) = match s.strip_prefix('-') {
        Some(r) => (true, r),
        None => (false, s.strip_prefix('+').unwrap_or(s)),
    };
    let (int, frac) = body.split_once('.').unwrap_or((body, ""));
    if int.is_empty() && frac.is_empty() {
        return None;
    }
    if !int.bytes().all(|c| c.is_ascii_digit())
        || !frac.bytes().all(|c| c.is_ascii_digit())
        || frac.len() > 30
    {
        return None;
    }
    let digits = format!("{int}{frac}");
    let unscaled: I256 = if digits.is_empty() {
        I256::ZERO
    } else {
        I256::from_str_radix(&digits, 10).ok()?
    };
    Some(Decimal::new(
        if neg { -unscaled } else { unscaled },
        frac.len() as u8,
    ))
}

/// Decodes a hex literal body (`X'4142'` → "AB").
pub fn unhex(h: &str) -> Option<Vec<u8>> {
    if !h.len().is_multiple_of(2) {
        return None;
    }
    (0..h.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(h.get(i..i + 2)?, 16).ok())
        .collect()
}

/// The bytes of a bit-value literal `b'1010'`: the bits big-endian, left-padded with zeros to
/// whole bytes (None if a character is not 0 or 1).
pub fn bit_literal(bits: &str) -> Option<Vec<u8>> {
    if !bits.bytes().all(|c| c == b'0' || c == b'1') {
        return None;
    }
    let padded = format!("{}{bits}", "0".repeat((8 - bits.len() % 8) % 8));
    (0..padded.len())
        .step_by(8)
        .map(|i| u8::from_str_radix(&padded[i..i + 8], 2).ok())
        .collect()
}

/// A string as MySQL converts it to a number: the longest numeric prefix, else 0; past the
/// double range, the largest double of its sign (MySQL warns 1292 where it casts).
pub fn str_to_f64(b: &[u8]) -> f64 {
    let f = numeric_prefix(b);
    if f.is_infinite() {
        f64::MAX.copysign(f)
    } else {
        f
    }
}

/// The longest numeric prefix of a string as a double (infinite past the double range), else 0.
fn numeric_prefix(b: &[u8]) -> f64 {
    let s = String::from_utf8_lossy(b);
    let s = s.trim_start();
    let mut end = 0;
    let bytes = s.as_bytes();
    let mut seen_dot = false;
    let mut seen_e = false;
    while end < bytes.len() {
        let c = bytes[end];
        let ok = c.is_ascii_digit()
            || ((c == b'-' || c == b'+') && (end == 0 || matches!(bytes[end - 1], b'e' | b'E')))
            || (c == b'.' && !seen_dot && !seen_e)
            || ((c == b'e' || c == b'E') && !seen_e && end > 0);
        if !ok {
            break;
        }
        seen_dot |= c == b'.';
        seen_e |= c == b'e' || c == b'E';
        end += 1;
    }
    let mut t = &s[..end];
    while !t.is_empty() && t.parse::<f64>().is_err() {
        t = &t[..t.len() - 1];
    }
    t.parse().unwrap_or(0.0)
}

/// The value as a double (strings by their numeric prefix, NULL as None).
pub fn to_f64(v: &Value) -> Option<f64> {
    Some(match v {
        Value::Null => return None,
        Value::Int(i) => *i as f64,
        Value::UInt(u) => *u as f64,
        Value::Double(d) => *d,
        Value::Decimal(d) => d.to_f64(),
        Value::Bytes(b) => str_to_f64(b),
        Value::DateTime(dt) => {
            let date =
                f64::from(dt.year) * 1e10 + f64::from(dt.month) * 1e8 + f64::from(dt.day) * 1e6;
            date + f64::from(dt.hour) * 1e4 + f64::from(dt.minute) * 100.0 + f64::from(dt.second)
        }
        Value::Time(t, _) => time_number(*t).to_f64(),
        Value::Enum(..) | Value::Set(..) => v.member_number()? as f64,
    })
}

/// The value as a signed integer, MySQL-style (rounding doubles and decimals).
pub fn to_i64(v: &Value) -> Option<i64> {
    Some(match v {
        Value::Null => return None,
        Value::Int(i) => *i,
        Value::UInt(u) => *u as i64,
        Value::Double(d) => d.round() as i64,
        Value::Decimal(d) => d.to_f64().round() as i64,
        Value::Bytes(b) => {
            let s = String::from_utf8_lossy(b);
            match s.trim().parse::<i64>() {
                Ok(i) => i,
                Err(_) => str_to_f64(b).round() as i64,
            }
        }
        Value::DateTime(_) | Value::Time(..) => to_f64(v)?.round() as i64,
        Value::Enum(..) | Value::Set(..) => v.member_number()? as i64,
    })
}

/// SQL truth of a value: NULL → None, numbers by non-zero.
pub fn truth(v: &Value) -> Option<bool> {
    match v {
        Value::Null => None,
        Value::Int(i) => Some(*i != 0),
        Value::UInt(u) => Some(*u != 0),
        _ => to_f64(v).map(|f| f != 0.0),
    }
}

fn bool_val(b: Option<bool>) -> Value {
    match b {
        None => Value::Null,
        Some(b) => Value::Int(i64::from(b)),
    }
}

/// The value as text bytes (numbers formatted as MySQL prints them).
pub fn to_bytes(v: &Value) -> Option<Vec<u8>> {
    Some(match v {
        Value::Null => return None,
        Value::Bytes(b) => b.clone(),
        other => crate::sql::format::text(other).into_bytes(),
    })
}

fn is_numeric(v: &Value) -> bool {
    matches!(
        v,
        Value::Int(_) | Value::UInt(_) | Value::Double(_) | Value::Decimal(_)
    )
}

/// Compares two non-NULL values with MySQL's rules: numbers numerically, strings
/// case-insensitively, a number against a string numerically, an ENUM or SET value against
/// a number by its number and against anything else by its text.
pub fn compare(a: &Value, b: &Value) -> Option<Ordering> {
    match (a, b) {
        (Value::Null, _) | (_, Value::Null) => None,
        (Value::Enum(i, m), Value::Bytes(y)) => Some(cmp_ci(m.enum_text(*i).as_bytes(), y)),
        (Value::Bytes(x), Value::Enum(i, m)) => Some(cmp_ci(x, m.enum_text(*i).as_bytes())),
        (Value::Enum(..) | Value::Set(..), other) | (other, Value::Enum(..) | Value::Set(..))
            if !is_numeric(other) =>
        {
            Some(cmp_ci(&to_bytes(a)?, &to_bytes(b)?))
        }
        (Value::Int(x), Value::Int(y)) => Some(x.cmp(y)),
        (Value::UInt(x), Value::UInt(y)) => Some(x.cmp(y)),
        (Value::Int(x), Value::UInt(y)) => Some(if *x < 0 {
            Ordering::Less
        } else {
            (*x as u64).cmp(y)
        }),
        (Value::UInt(x), Value::Int(y)) => Some(if *y < 0 {
            Ordering::Greater
        } else {
            x.cmp(&(*y as u64))
        }),
        (Value::Decimal(x), Value::Decimal(y)) => Some(x.cmp_exact(*y)),
        (Value::Decimal(x), Value::Int(y)) => Some(x.cmp_exact(Decimal::new(i128::from(*y), 0))),
        (Value::Int(x), Value::Decimal(y)) => Some(Decimal::new(i128::from(*x), 0).cmp_exact(*y)),
        (Value::Bytes(x), Value::Bytes(y)) => Some(cmp_ci(x, y)),
        (Value::DateTime(x), Value::DateTime(y)) => Some(x.cmp(y)),
        (Value::DateTime(x), Value::Bytes(y)) | (Value::Bytes(y), Value::DateTime(x)) => {
            let other = crate::time::parse_datetime(&String::from_utf8_lossy(y))?;
            let o = x.cmp(&other);
            Some(if matches!(a, Value::DateTime(_)) {
                o
            } else {
                o.reverse()
            })
        }
        (Value::Time(x, _), Value::Time(y, _)) => Some(x.cmp(y)),
        (Value::Time(x, _), Value::Bytes(y)) => {
            Some(x.cmp(&parse_time(&String::from_utf8_lossy(y))?))
        }
        (Value::Bytes(x), Value::Time(y, _)) => {
            Some(parse_time(&String::from_utf8_lossy(x))?.cmp(y))
        }
        _ => to_f64(a)?.partial_cmp(&to_f64(b)?),
    }
}

/// `(a, b) IN ((x, y), ...)`: true when a row of the list equals the operand in every
/// value, NULL when none does but one might (a NULL comparison and no inequality), else
/// false.
fn row_in_list(x: &BoundExpr, list: &[BoundExpr], env: &dyn EvalEnv) -> SqlResult<Option<bool>> {
    let BoundExpr::Row(xs) = x else {
        return Err(crate::sql::expr::operand_columns(1));
    };
    let values = xs
        .iter()
        .map(|e| eval(e, env))
        .collect::<SqlResult<Vec<_>>>()?;
    let mut saw_null = false;
    for item in list {
        let BoundExpr::Row(ys) = item else {
            return Err(crate::sql::expr::operand_columns(values.len()));
        };
        let mut row = Some(true);
        for (v, y) in values.iter().zip(ys) {
            match compare(v, &eval(y, env)?) {
                Some(Ordering::Equal) => {}
                None => row = None,
                Some(_) => {
                    row = Some(false);
                    break;
                }
            }
        }
        match row {
            Some(true) => return Ok(Some(true)),
            None => saw_null = true,
            Some(false) => {}
        }
    }
    Ok(if saw_null { None } else { Some(false) })
}

/// Case-insensitive (ASCII) byte comparison, ignoring trailing spaces (PAD SPACE).
pub fn cmp_ci(a: &[u8], b: &[u8]) -> Ordering {
    let trim = |s: &[u8]| s.len() - s.iter().rev().take_while(|c| **c == b' ').count();
    let (a, b) = (&a[..trim(a)], &b[..trim(b)]);
    for (x, y) in a.iter().zip(b) {
        match x.to_ascii_lowercase().cmp(&y.to_ascii_lowercase()) {
            Ordering::Equal => {}
            o => return o,
        }
    }
    a.len().cmp(&b.len())
}

/// SQL LIKE with `%`, `_` and an escape byte, case-insensitive.
pub fn like(text: &[u8], pat: &[u8], esc: u8) -> bool {
    fn go(t: &[u8], p: &[u8], esc: u8) -> bool {
        let (mut ti, mut pi) = (0, 0);
        let mut back: Option<(usize, usize)> = None;
        loop {
            if pi < p.len() {
                let c = p[pi];
                if c == b'%' {
                    back = Some((pi, ti));
                    pi += 1;
                    continue;
                }
                if ti < t.len() {
                    let (lit, adv) = if c == esc && pi + 1 < p.len() {
                        (Some(p[pi + 1]), 2)
                    } else {
                        (None, 1)
                    };
                    let matches = match lit {
                        Some(l) => l.eq_ignore_ascii_case(&t[ti]),
                        None => c == b'_' || c.eq_ignore_ascii_case(&t[ti]),
                    };
                    if matches {
                        pi += adv;
                        ti += 1;
                        continue;
                    }
                }
            } else if ti == t.len() {
                return true;
            }
            match back {
                Some((bp, bt)) if bt < t.len() => {
                    back = Some((bp, bt + 1));
                    pi = bp + 1;
                    ti = bt + 1;
                }
                _ => return false,
            }
        }
    }
    go(text, pat, esc)
}

/// An exact decimal of an integer or decimal value (None for doubles, strings, NULL).
pub fn decimal_of(v: &Value) -> Option<Decimal> {
    match v {
        Value::Int(i) => Some(Decimal::new(i128::from(*i), 0)),
        Value::UInt(u) => Some(Decimal::new(i128::from(*u), 0)),
        Value::Decimal(d) => Some(*d),
        _ => None,
    }
}

fn align(a: Decimal, b: Decimal) -> Option<(I256, I256, u8)> {
    let s = a.scale.max(b.scale);
    let x = a
        .unscaled()
        .checked_mul(I256::new(10).checked_pow(u32::from(s - a.scale))?)?;
    let y = b
        .unscaled()
        .checked_mul(I256::new(10).checked_pow(u32::from(s - b.scale))?)?;
    Some((x, y, s))
}

/// The most digits after the point a decimal keeps (MySQL's `DECIMAL_MAX_SCALE`).
pub use crate::engine::types::MAX_DECIMAL_SCALE;

/// A decimal of `unscaled` at `scale`, rounded (half away from zero) to at most
/// [`MAX_DECIMAL_SCALE`] digits after the point; `scale` is at most twice that plus 4.
fn limit_scale(unscaled: I256, scale: u8) -> Decimal {
    if scale <= MAX_DECIMAL_SCALE {
        return Decimal::new(unscaled, scale);
    }
    let drop = I256::new(10).pow(u32::from(scale - MAX_DECIMAL_SCALE));
    let (q, r) = (unscaled / drop, unscaled % drop);
    let q = if r.unsigned_abs() * 2 >= drop.unsigned_abs() {
        q + unscaled.signum()
    } else {
        q
    };
    Decimal::new(q, MAX_DECIMAL_SCALE)
}

/// An ENUM or SET value as its number (arithmetic context); any other value as it is.
fn member_as_number(v: &Value) -> Value {
    match v.member_number() {
        Some(n) => i64::try_from(n).map_or(Value::UInt(n), Value::Int),
        None => v.clone(),
    }
}

fn arith(op: BinOp, a: &Value, b: &Value) -> SqlResult<Value> {
    if a.is_null() || b.is_null() {
        return Ok(Value::Null);
    }
    if a.member_number().is_some() || b.member_number().is_some() {
        return arith(op, &member_as_number(a), &member_as_number(b));
    }
    if let (Value::Int(x), Value::Int(y)) = (a, b) {
        if let Some(r) = int_arith(op, *x, *y) {
            return r;
        }
    }
    let exact = is_numeric(a)
        && is_numeric(b)
        && !matches!(a, Value::Double(_))
        && !matches!(b, Value::Double(_));
    if exact {
        if let Some(r) = decimal_arith(op, a, b) {
            return r;
        }
    }
    double_arith(op, a, b)
}

/// BIGINT arithmetic of two signed integers; None for `/`, which MySQL computes exactly.
fn int_arith(op: BinOp, x: i64, y: i64) -> Option<SqlResult<Value>> {
    let r = match op {
        BinOp::Add => x.checked_add(y),
        BinOp::Sub => x.checked_sub(y),
        BinOp::Mul => x.checked_mul(y),
        BinOp::IntDiv => {
            if y == 0 {
                return Some(Ok(Value::Null));
            }
            x.checked_div(y)
        }
        BinOp::Mod => {
            if y == 0 {
                return Some(Ok(Value::Null));
            }
            Some(x.wrapping_rem(y))
        }
        _ => None,
    };
    match (op, r) {
        (BinOp::Div, _) => None,
        (_, Some(v)) => Some(Ok(Value::Int(v))),
        (_, None) => Some(Err(out_of_range(&format!("({x} {op:?} {y})")))),
    }
}

/// Exact (DECIMAL) arithmetic of two exact operands; None when they do not align or the
/// result does not fit, so the caller falls back to DOUBLE as MySQL does.
fn decimal_arith(op: BinOp, a: &Value, b: &Value) -> Option<SqlResult<Value>> {
    if let (Some(x), Some(y)) = (decimal_of(a), decimal_of(b)) {
        if let Some((p, q, s)) = align(x, y) {
            let d = match op {
                BinOp::Add => p.checked_add(q).map(|u| Decimal::new(u, s)),
                BinOp::Sub => p.checked_sub(q).map(|u| Decimal::new(u, s)),
                BinOp::Mul => x
                    .unscaled()
                    .checked_mul(y.unscaled())
                    .map(|u| limit_scale(u, x.scale + y.scale)),
                BinOp::Div => {
                    if q == 0 {
                        return Some(Ok(Value::Null));
                    }
                    let scale = x.scale + DIV_PRECISION;
                    // result = x / y with `scale` digits: x.unscaled() * 10^(scale - x.scale + y.scale) / y.unscaled()
                    let shift = u32::from(scale + y.scale - x.scale);
                    I256::new(10)
                        .checked_pow(shift)
                        .and_then(|p| x.unscaled().checked_mul(p))
                        .and_then(|n| {
                            let (qt, rem) =
                                (n.checked_div(y.unscaled())?, n.checked_rem(y.unscaled())?);
                            // Round half away from zero, as MySQL's decimal division does.
                            let away = if (n < 0) != (y.unscaled() < 0) {
                                I256::MINUS_ONE
                            } else {
                                I256::ONE
                            };
                            let qt = if rem.unsigned_abs() * 2 >= y.unscaled().unsigned_abs() {
                                qt.checked_add(away)?
                            } else {
                                qt
                            };
                            Some(limit_scale(qt, scale))
                        })
                }
                BinOp::IntDiv => {
                    if q == 0 {
                        return Some(Ok(Value::Null));
                    }
                    return Some(
                        p.checked_div(q)
                            .and_then(|r| i64::try_from(r).ok())
                            .map(Value::Int)
                            .ok_or_else(|| out_of_range("DIV")),
                    );
                }
                BinOp::Mod => {
                    if q == 0 {
                        return Some(Ok(Value::Null));
                    }
                    Some(Decimal::new(p.checked_rem(q).unwrap_or(I256::ZERO), s))
                }
                _ => None,
            };
            if let Some(d) = d {
                let unsigned = matches!(a, Value::UInt(_)) || matches!(b, Value::UInt(_));
                if let (Value::UInt(_) | Value::Int(_), Value::UInt(_) | Value::Int(_), 0) =
                    (a, b, d.scale)
                {
                    // As MySQL: +, - and * with an UNSIGNED operand give an UNSIGNED result,
                    // so a negative one is out of range.
                    if unsigned && matches!(op, BinOp::Add | BinOp::Sub | BinOp::Mul) {
                        return Some(u64::try_from(d.unscaled()).map(Value::UInt).map_err(|_| {
                            SqlError::new(
                                ErrorCode::DataOutOfRange,
                                format!(
                                    "BIGINT UNSIGNED value is out of range in '({} {} {})'",
                                    crate::sql::format::text(a),
                                    match op {
                                        BinOp::Add => "+",
                                        BinOp::Sub => "-",
                                        _ => "*",
                                    },
                                    crate::sql::format::text(b)
                                ),
                            )
                        }));
                    }
                    return Some(
                        i64::try_from(d.unscaled())
                            .map(Value::Int)
                            .or_else(|_| u64::try_from(d.unscaled()).map(Value::UInt))
                            .map_err(|_| out_of_range("arithmetic")),
                    );
                }
                return Some(Ok(Value::Decimal(d)));
            }
        }
    }
    None
}

/// DOUBLE arithmetic, with MySQL's out-of-range error for an infinite result.
fn double_arith(op: BinOp, a: &Value, b: &Value) -> SqlResult<Value> {
    let (x, y) = (to_f64(a).unwrap_or(0.0), to_f64(b).unwrap_or(0.0));
    let r = match op {
        BinOp::Add => Value::Double(x + y),
        BinOp::Sub => Value::Double(x - y),
        BinOp::Mul => Value::Double(x * y),
        BinOp::Div => {
            if y == 0.0 {
                Value::Null
            } else {
                Value::Double(x / y)
            }
        }
        BinOp::IntDiv => {
            if y == 0.0 {
                Value::Null
            } else {
                let q = (x / y).trunc();
                if !(-9.223_372_036_854_776e18..9.223_372_036_854_776e18).contains(&q) {
                    return Err(out_of_range(&format!("({x} DIV {y})")));
                }
                Value::Int(q as i64)
            }
        }
        BinOp::Mod => {
            if y == 0.0 {
                Value::Null
            } else {
                Value::Double(x % y)
            }
        }
        _ => Value::Null,
    };
    match r {
        Value::Double(d) if !d.is_finite() => Err(SqlError::new(
            ErrorCode::DataOutOfRange,
            format!("DOUBLE value is out of range in '({x:?} {op:?} {y:?})'"),
        )),
        r => Ok(r),
    }
}

fn bits(op: BinOp, a: &Value, b: &Value) -> Value {
    let (Some(x), Some(y)) = (to_i64(a), to_i64(b)) else {
        return Value::Null;
    };
    let (x, y) = (x as u64, y as u64);
    Value::UInt(match op {
        BinOp::BitAnd => x & y,
        BinOp::BitOr => x | y,
        BinOp::BitXor => x ^ y,
        BinOp::Shl => {
            if y >= 64 {
                0
            } else {
                x << y
            }
        }
        _ => {
            if y >= 64 {
                0
            } else {
                x >> y
            }
        }
    })
}

/// A copy of a stored value (a column's, a user variable's) for the expression that reads
/// it: a string of `memory::CHECKED_VALUE` bytes or more is checked
/// against the memory budget and copied fallibly, so a statement that reads a large value
/// many times fails with 1037 instead of ending the process.
fn copy_value(v: &Value, env: &dyn EvalEnv) -> SqlResult<Value> {
    match v {
        Value::Bytes(b) if b.len() >= crate::memory::CHECKED_VALUE => {
            env.reserve(b.len())?;
            Ok(Value::Bytes(crate::memory::try_copy(b)?))
        }
        other => Ok(other.clone()),
    }
}

/// MySQL's AND over `operands`, left to right: the first FALSE ends it (later operands are
/// not evaluated); else NULL (None) if an operand was NULL; else TRUE.
pub fn all_of(operands: &[BoundExpr], env: &dyn EvalEnv) -> SqlResult<Option<bool>> {
    let mut saw_null = false;
    for x in operands {
        match truth(&eval(x, env)?) {
            Some(false) => return Ok(Some(false)),
            None => saw_null = true,
            Some(true) => {}
        }
    }
    Ok(if saw_null { None } else { Some(true) })
}

/// MySQL's OR over `operands`, left to right: the first TRUE ends it (later operands are not
/// evaluated); else NULL (None) if an operand was NULL; else FALSE.
pub fn any_of(operands: &[BoundExpr], env: &dyn EvalEnv) -> SqlResult<Option<bool>> {
    let mut saw_null = false;
    for x in operands {
        match truth(&eval(x, env)?) {
            Some(true) => return Ok(Some(true)),
            None => saw_null = true,
            Some(false) => {}
        }
    }
    Ok(if saw_null { None } else { Some(false) })
}

/// Evaluates `e` in `env`.
///
/// Operator chains nest up to [`crate::sql::depth::MAX_DEPTH`] levels and every level
/// recurses through here, so this function only dispatches: each form that can repeat
/// without brackets (binary operators, `IS ...`, `BETWEEN`, `IN`, `LIKE`, `::` casts) is
/// evaluated by a small function of its own, and everything else by [`eval_other`] (an
/// unoptimised build gives every local of a function its own stack slot, so one match over
/// every form cost all of its arms' slots at each level).
pub fn eval(e: &BoundExpr, env: &dyn EvalEnv) -> SqlResult<Value> {
    crate::sql::stack::check()?;
    match e {
        BoundExpr::Literal(v) => Ok(v.clone()),
        BoundExpr::Binary(BinOp::Xor, l, r) => xor(l, r, env),
        BoundExpr::Binary(
            op @ (BinOp::Eq
            | BinOp::Ne
            | BinOp::Lt
            | BinOp::Le
            | BinOp::Gt
            | BinOp::Ge
            | BinOp::NullSafeEq),
            l,
            r,
        ) => comparison(*op, l, r, env),
        BoundExpr::Binary(
            op @ (BinOp::BitAnd | BinOp::BitOr | BinOp::BitXor | BinOp::Shl | BinOp::Shr),
            l,
            r,
        ) => bitwise(*op, l, r, env),
        BoundExpr::Binary(op, l, r) => arithmetic(*op, l, r, env),
        BoundExpr::IsNull(x, want_null) => is_null(x, *want_null, env),
        BoundExpr::IsBool(x, want_true, negated) => is_bool(x, *want_true, *negated, env),
        BoundExpr::Between(x, lo, hi, negated) => between(x, lo, hi, *negated, env),
        BoundExpr::InList(x, list, negated) => in_list(x, list, *negated, env),
        BoundExpr::Like(x, p, esc, negated) => like_match(x, p, *esc, *negated, env),
        BoundExpr::Cast(x, t) => cast_of(x, *t, env),
        _ => eval_other(e, env),
    }
}

/// `l XOR r`.
fn xor(l: &BoundExpr, r: &BoundExpr, env: &dyn EvalEnv) -> SqlResult<Value> {
    let a = truth(&eval(l, env)?);
    let b = truth(&eval(r, env)?);
    Ok(bool_val(a.zip(b).map(|(a, b)| a ^ b)))
}

/// `l op r` for a comparison `op` (`=`, `<=>`, `<>`, `<`, `<=`, `>`, `>=`).
fn comparison(op: BinOp, l: &BoundExpr, r: &BoundExpr, env: &dyn EvalEnv) -> SqlResult<Value> {
    let a = eval(l, env)?;
    let b = eval(r, env)?;
    if op == BinOp::NullSafeEq {
        return Ok(Value::Int(i64::from(match (a.is_null(), b.is_null()) {
            (true, true) => true,
            (false, false) => compare(&a, &b) == Some(Ordering::Equal),
            _ => false,
        })));
    }
    Ok(bool_val(compare(&a, &b).map(|o| match op {
        BinOp::Eq => o == Ordering::Equal,
        BinOp::Ne => o != Ordering::Equal,
        BinOp::Lt => o == Ordering::Less,
        BinOp::Le => o != Ordering::Greater,
        BinOp::Gt => o == Ordering::Greater,
        _ => o != Ordering::Less,
    })))
}

/// `l op r` for a bit operator (`&`, `|`, `^`, `<<`, `>>`).
fn bitwise(op: BinOp, l: &BoundExpr, r: &BoundExpr, env: &dyn EvalEnv) -> SqlResult<Value> {
    let a = eval(l, env)?;
    Ok(bits(op, &a, &eval(r, env)?))
}

/// `l op r` for an arithmetic operator; a division by zero is NULL, with warning 1365 under
/// `ERROR_FOR_DIVISION_BY_ZERO`.
fn arithmetic(op: BinOp, l: &BoundExpr, r: &BoundExpr, env: &dyn EvalEnv) -> SqlResult<Value> {
    let a = eval(l, env)?;
    let b = eval(r, env)?;
    let v = arith(op, &a, &b)?;
    // arith gives NULL for non-NULL operands only when the divisor is zero
    let by_zero = matches!(op, BinOp::Div | BinOp::IntDiv | BinOp::Mod)
        && v.is_null()
        && !a.is_null()
        && !b.is_null();
    if by_zero && env.division_by_zero_warns() {
        env.warn(ErrorCode::DivisionByZero, "Division by 0".into());
    }
    Ok(v)
}

/// `x IS [NOT] NULL` (`want_null` for IS NULL).
fn is_null(x: &BoundExpr, want_null: bool, env: &dyn EvalEnv) -> SqlResult<Value> {
    let null = eval(x, env)?.is_null();
    Ok(Value::Int(i64::from(null == want_null)))
}

/// `x IS [NOT] TRUE/FALSE`.
fn is_bool(x: &BoundExpr, want_true: bool, negated: bool, env: &dyn EvalEnv) -> SqlResult<Value> {
    let is = truth(&eval(x, env)?) == Some(want_true);
    Ok(Value::Int(i64::from(is != negated)))
}

/// `x [NOT] BETWEEN lo AND hi`.
fn between(
    x: &BoundExpr,
    lo: &BoundExpr,
    hi: &BoundExpr,
    negated: bool,
    env: &dyn EvalEnv,
) -> SqlResult<Value> {
    let v = eval(x, env)?;
    let l = eval(lo, env)?;
    let h = eval(hi, env)?;
    let ge = compare(&v, &l).map(|o| o != Ordering::Less);
    let le = compare(&v, &h).map(|o| o != Ordering::Greater);
    let r = match (ge, le) {
        (Some(false), _) | (_, Some(false)) => Some(false),
        (Some(true), Some(true)) => Some(true),
        _ => None,
    };
    Ok(bool_val(r.map(|b| b != negated)))
}

/// `x [NOT] IN (list)`: TRUE on the first equal item, else NULL if a comparison was NULL,
/// else FALSE (negated for NOT IN).
fn in_list(
    x: &BoundExpr,
    list: &[BoundExpr],
    negated: bool,
    env: &dyn EvalEnv,
) -> SqlResult<Value> {
    if matches!(x, BoundExpr::Row(_)) {
        return Ok(bool_val(
            row_in_list(x, list, env)?.map(|found| found != negated),
        ));
    }
    let v = eval(x, env)?;
    if v.is_null() {
        return Ok(Value::Null);
    }
    let mut saw_null = false;
    for item in list {
        let w = eval(item, env)?;
        match compare(&v, &w) {
            Some(Ordering::Equal) => return Ok(Value::Int(i64::from(!negated))),
            None => saw_null = true,
            _ => {}
        }
    }
    Ok(if saw_null {
        Value::Null
    } else {
        Value::Int(i64::from(negated))
    })
}

/// `x [NOT] LIKE p` with escape character `esc`.
fn like_match(
    x: &BoundExpr,
    p: &BoundExpr,
    esc: u8,
    negated: bool,
    env: &dyn EvalEnv,
) -> SqlResult<Value> {
    let v = eval(x, env)?;
    let pat = eval(p, env)?;
    Ok(match (to_bytes(&v), to_bytes(&pat)) {
        (Some(t), Some(p)) => Value::Int(i64::from(like(&t, &p, esc) != negated)),
        _ => Value::Null,
    })
}

/// `CAST(x AS t)`: a string past the double range cast to DOUBLE warns with 1292.
fn cast_of(x: &BoundExpr, t: CastType, env: &dyn EvalEnv) -> SqlResult<Value> {
    let v = eval(x, env)?;
    if let (CastType::Double, Value::Bytes(b)) = (t, &v) {
        if numeric_prefix(b).is_infinite() {
            env.warn(
                ErrorCode::TruncatedWrongValue,
                format!(
                    "Truncated incorrect DOUBLE value: '{}'",
                    String::from_utf8_lossy(b)
                ),
            );
        }
    }
    Ok(cast(v, t))
}

/// The forms [`eval`] does not dispatch itself: leaves, unary operators, `AND`/`OR` lists
/// and the forms written with brackets (`CASE`, functions, subqueries, rows), which the
/// parser's own recursion limit keeps shallow.
fn eval_other(e: &BoundExpr, env: &dyn EvalEnv) -> SqlResult<Value> {
    Ok(match e {
        BoundExpr::Param(i) => env.param(*i)?,
        BoundExpr::SysVar(id, scope) => env.sysvar(*id, *scope)?,
        BoundExpr::UserVar(name) => match env.user_var(name) {
            Some(v) => copy_value(v, env)?,
            None => Value::Null,
        },
        BoundExpr::Column(i) => match env.row().get(*i) {
            Some(v) => copy_value(v, env)?,
            None => Value::Null,
        },
        BoundExpr::And(operands) => bool_val(all_of(operands, env)?),
        BoundExpr::Or(operands) => bool_val(any_of(operands, env)?),
        BoundExpr::Neg(x) => match eval(x, env)? {
            Value::Null => Value::Null,
            Value::Int(i) => Value::Int(
                i.checked_neg()
                    .ok_or_else(|| out_of_range(&format!("-({i})")))?,
            ),
            Value::UInt(u) => match i64::try_from(u) {
                Ok(i) => Value::Int(-i),
                Err(_) if u == 1u64 << 63 => Value::Int(i64::MIN),
                Err(_) => return Err(out_of_range(&format!("-({u})"))),
            },
            Value::Decimal(d) => Value::Decimal(Decimal::new(
                d.unscaled()
                    .checked_neg()
                    .ok_or_else(|| out_of_range("-(decimal)"))?,
                d.scale,
            )),
            other => Value::Double(-to_f64(&other).unwrap_or(0.0)),
        },
        BoundExpr::Not(x) => bool_val(truth(&eval(x, env)?).map(|b| !b)),
        BoundExpr::BitNot(x) => match to_i64(&eval(x, env)?) {
            None => Value::Null,
            Some(i) => Value::UInt(!(i as u64)),
        },
        BoundExpr::Row(_) => return Err(crate::sql::expr::operand_columns(1)),
        BoundExpr::Subquery(q) => env.scalar_subquery(q)?,
        BoundExpr::Case(operand, arms, other) => {
            let base = match operand {
                Some(o) => Some(eval(o, env)?),
                None => None,
            };
            for (cond, result) in arms {
                let c = eval(cond, env)?;
                let hit = match &base {
                    Some(b) => compare(b, &c) == Some(Ordering::Equal),
                    None => truth(&c) == Some(true),
                };
                if hit {
                    return eval(result, env);
                }
            }
            match other {
                Some(o) => eval(o, env)?,
                None => Value::Null,
            }
        }
        BoundExpr::Call(f, args) => call(*f, args, env)?,
        // Dispatched by `eval`.
        BoundExpr::Literal(_)
        | BoundExpr::Binary(..)
        | BoundExpr::IsNull(..)
        | BoundExpr::IsBool(..)
        | BoundExpr::Between(..)
        | BoundExpr::InList(..)
        | BoundExpr::Like(..)
        | BoundExpr::Cast(..) => return eval(e, env),
    })
}

/// CAST(v AS t).
pub fn cast(v: Value, t: CastType) -> Value {
    if v.is_null() {
        return Value::Null;
    }
    match t {
        CastType::Signed => to_i64(&v).map(Value::Int).unwrap_or(Value::Null),
        CastType::Unsigned => to_i64(&v)
            .map(|i| Value::UInt(i as u64))
            .unwrap_or(Value::Null),
        CastType::Char => to_bytes(&v).map(Value::Bytes).unwrap_or(Value::Null),
        CastType::Double => to_f64(&v).map(Value::Double).unwrap_or(Value::Null),
        CastType::Decimal(scale) => {
            // Exact where the value converts exactly; otherwise by its double, as before.
            let exact = crate::engine::ColumnType::Decimal {
                precision: crate::engine::types::MAX_DECIMAL_PRECISION,
                scale,
            }
            .coerce(v.clone(), "");
            exact.unwrap_or_else(|_| {
                let f = to_f64(&v).unwrap_or(0.0);
                let unscaled = (f * 10f64.powi(i32::from(scale))).round() as i128;
                Value::Decimal(Decimal::new(unscaled, scale))
            })
        }
        CastType::Time(fsp) => crate::engine::ColumnType::Time { fsp }
            .coerce(v, "")
            .unwrap_or(Value::Null),
        CastType::Date | CastType::DateTime => {
            let dt = match &v {
                Value::DateTime(dt) => Some(*dt),
                other => to_bytes(other)
                    .and_then(|b| crate::time::parse_datetime(&String::from_utf8_lossy(&b))),
            };
            match dt {
                Some(mut dt) => {
                    if t == CastType::Date {
                        dt = crate::value::DateTime {
                            year: dt.year,
                            month: dt.month,
                            day: dt.day,
                            ..Default::default()
                        };
                    }
                    Value::DateTime(dt)
                }
                None => Value::Null,
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn like_patterns() {
        assert!(like(b"hello", b"h%o", b'\\'));
        assert!(like(b"HELLO", b"h_llo", b'\\'));
        assert!(!like(b"hello", b"h_lo", b'\\'));
        assert!(like(b"50%", b"50\\%", b'\\'));
        assert!(!like(b"50x", b"50\\%", b'\\'));
        assert!(like(b"12304", b"%0%", b'\\'));
        assert!(like(b"", b"%", b'\\'));
    }

    #[test]
    fn numbers_and_strings() {
        assert_eq!(str_to_f64(b" 12abc"), 12.0);
        assert_eq!(str_to_f64(b"1e3x"), 1000.0);
        assert_eq!(
            compare(&Value::str("abc"), &Value::str("ABC ")),
            Some(Ordering::Equal)
        );
        assert_eq!(
            compare(&Value::Int(-1), &Value::UInt(1)),
            Some(Ordering::Less)
        );
        assert_eq!(
            arith(BinOp::Div, &Value::Int(1), &Value::Int(3)).unwrap(),
            Value::Decimal(Decimal::new(3333, 4))
        );
        assert_eq!(
            arith(BinOp::Div, &Value::Int(2), &Value::Int(3)).unwrap(),
            Value::Decimal(Decimal::new(6667, 4))
        );
        assert_eq!(
            arith(BinOp::Add, &Value::Int(1), &Value::Int(1)).unwrap(),
            Value::Int(2)
        );
        assert!(arith(BinOp::Add, &Value::Int(i64::MAX), &Value::Int(1)).is_err());
        assert_eq!(
            arith(BinOp::Div, &Value::Int(1), &Value::Int(0)).unwrap(),
            Value::Null
        );
        assert_eq!(parse_decimal("-1.50"), Some(Decimal::new(-150, 2)));
    }
}
