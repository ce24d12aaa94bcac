//! Built-in scalar functions.

use crate::error::{ErrorCode, SqlError, SqlResult};
use crate::sql::eval::{compare, eval, to_bytes, to_f64, to_i64, EvalEnv};
use crate::sql::expr::BoundExpr;
use crate::sql::text_functions as tf;
use crate::time::{datetime_from_micros, datetime_to_unix};
use crate::value::{DateTime, Decimal, Value};

/// A TIMEDIFF argument: a datetime (true, microseconds since the epoch) or a time (false,
/// its microseconds).
fn time_point(v: Value) -> Option<(bool, i64)> {
    let as_datetime =
        |v: Value| match crate::sql::eval::cast(v, crate::sql::expr::CastType::DateTime) {
            Value::DateTime(dt) => Some((
                true,
                datetime_to_unix(&dt) * 1_000_000 + i64::from(dt.micros),
            )),
            _ => None,
        };
    match v {
        Value::DateTime(_) => as_datetime(v),
        Value::Time(t, _) => Some((false, t)),
        Value::Bytes(ref b) if b.iter().filter(|&&c| c == b'-').count() >= 2 => as_datetime(v),
        other => match crate::sql::eval::cast(other, crate::sql::expr::CastType::Time(6)) {
            Value::Time(t, _) => Some((false, t)),
            _ => None,
        },
    }
}

/// A built-in function.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Func {
    /// `VERSION()`
    Version,
    /// `DATABASE()` / `SCHEMA()`
    Database,
    /// `USER()` / `SESSION_USER()` / `SYSTEM_USER()`
    User,
    /// `CURRENT_USER()`
    CurrentUser,
    /// `CONNECTION_ID()`
    ConnectionId,
    /// `LAST_INSERT_ID()`
    LastInsertId,
    /// `ROW_COUNT()`
    RowCount,
    /// `NOW()` / `CURRENT_TIMESTAMP` / `LOCALTIME` / `SYSDATE()`
    Now,
    /// `UTC_TIMESTAMP()`
    UtcTimestamp,
    /// `CURDATE()` / `CURRENT_DATE`
    CurDate,
    /// `UNIX_TIMESTAMP([dt])`
    UnixTimestamp,
    /// `TIMEDIFF(a, b)` (seconds as `HH:MM:SS` text)
    TimeDiff,
    /// `CONCAT(...)`
    Concat,
    /// `CONCAT_WS(sep, ...)`
    ConcatWs,
    /// `LENGTH()` / `OCTET_LENGTH()`
    Length,
    /// `CHAR_LENGTH()` / `CHARACTER_LENGTH()`
    CharLength,
    /// `SUBSTRING()` / `SUBSTR()` / `MID()`
    Substring,
    /// `UPPER()` / `UCASE()`
    Upper,
    /// `LOWER()` / `LCASE()`
    Lower,
    /// `REPEAT(s, n)`
    Repeat,
    /// `ABS()`
    Abs,
    /// `ROUND(x[, d])`
    Round,
    /// `FLOOR()`
    Floor,
    /// `CEIL()` / `CEILING()`
    Ceil,
    /// `MOD(a, b)`
    Mod,
    /// `GREATEST(...)`
    Greatest,
    /// `LEAST(...)`
    Least,
    /// `COALESCE(...)`
    Coalesce,
    /// `IFNULL(a, b)`
    IfNull,
    /// `NULLIF(a, b)`
    NullIf,
    /// `IF(c, a, b)`
    If,
    /// `RAND()`
    Rand,
    /// `SLEEP(seconds)`: a wait reported to the connection handler.
    Sleep,
    /// `BENCHMARK(count, expr)`: evaluates `expr` `count` times on the CPU, reporting no wait.
    Benchmark,
    /// `LEFT(s, n)`
    Left,
    /// `RIGHT(s, n)`
    Right,
    /// Not callable by name: `SUBSTRING` of a binary string, in bytes.
    BinarySubstring,
    /// Not callable by name: `LEFT` of a binary string, in bytes.
    BinaryLeft,
    /// Not callable by name: `RIGHT` of a binary string, in bytes.
    BinaryRight,
    /// `SUBSTRING_INDEX(s, delim, count)`
    SubstringIndex,
    /// `HEX(x)`
    Hex,
    /// `BIN(n)`: the binary digits of an integer (a BIT column's bits).
    Bin,
    /// `CRC32(s)`
    Crc32,
    /// `MD5(s)`
    Md5,
    /// `SHA1(s)` / `SHA(s)`
    Sha1,
    /// `SHA2(s, bits)`
    Sha2,
    /// `DATE_ADD(d, INTERVAL n unit)` / `ADDDATE` / `d + INTERVAL n unit`: bound with the
    /// arguments (d, n, unit name).
    DateAdd,
    /// `DATE_SUB(d, INTERVAL n unit)` / `SUBDATE` / `d - INTERVAL n unit`.
    DateSub,
    /// `CONVERT_TZ(dt, from, to)`
    ConvertTz,
    /// `JSON_EXTRACT(doc, path, ...)` / `doc->path`
    JsonExtract,
    /// `JSON_UNQUOTE(s)` (`doc->>path` is `JSON_UNQUOTE(JSON_EXTRACT(doc, path))`)
    JsonUnquote,
    /// `JSON_VALID(s)`
    JsonValid,
    /// `JSON_OBJECT(k, v, ...)`
    JsonObject,
    /// `JSON_ARRAY(v, ...)`
    JsonArray,
    /// Not callable by name: a DATE/DATETIME/TIMESTAMP column's value as text, the way its
    /// type prints (arguments: the value, then its precision, -1 for a DATE), where a string
    /// function reads the column.
    TemporalText,
    /// Not callable by name: a BIT(n) column's value as a string, its ceil(n/8) big-endian
    /// bytes as MySQL reads a BIT column in string context (arguments: the value, then n).
    BitText,
}

impl Func {
    /// Whether the function reads its arguments as strings (a temporal column then reads as
    /// its type prints, see [`Func::TemporalText`], a BIT column as its bytes, see
    /// [`Func::BitText`]).
    pub fn reads_text(self) -> bool {
        use Func::*;
        matches!(
            self,
            Concat
                | ConcatWs
                | Length
                | CharLength
                | Substring
                | Upper
                | Lower
                | Repeat
                | Left
                | Right
                | BinarySubstring
                | BinaryLeft
                | BinaryRight
                | SubstringIndex
                | Hex
                | Crc32
                | Md5
                | Sha1
                | Sha2
        )
    }

    /// Resolves a function name (lower case).
    pub fn lookup(name: &str) -> Option<Func> {
        use Func::*;
        Some(match name {
            "version" => Version,
            "database" | "schema" => Database,
            "user" | "session_user" | "system_user" => User,
            "current_user" => CurrentUser,
            "connection_id" => ConnectionId,
            "last_insert_id" => LastInsertId,
            "row_count" => RowCount,
            "now" | "current_timestamp" | "localtime" | "localtimestamp" | "sysdate" => Now,
            "utc_timestamp" => UtcTimestamp,
            "curdate" | "current_date" => CurDate,
            "unix_timestamp" => UnixTimestamp,
            "timediff" => TimeDiff,
            "concat" => Concat,
            "concat_ws" => ConcatWs,
            "length" | "octet_length" => Length,
            "char_length" | "character_length" => CharLength,
            "substring" | "substr" | "mid" => Substring,
            "upper" | "ucase" => Upper,
            "lower" | "lcase" => Lower,
            "repeat" => Repeat,
            "abs" => Abs,
            "round" => Round,
            "floor" => Floor,
            "ceil" | "ceiling" => Ceil,
            "mod" => Mod,
            "greatest" => Greatest,
            "least" => Least,
            "coalesce" => Coalesce,
            "ifnull" => IfNull,
            "nullif" => NullIf,
            "if" => If,
            "rand" => Rand,
            "sleep" => Sleep,
            "benchmark" => Benchmark,
            "left" => Left,
            "right" => Right,
            "substring_index" => SubstringIndex,
            "hex" => Hex,
            "bin" => Bin,
            "crc32" => Crc32,
            "md5" => Md5,
            "sha1" | "sha" => Sha1,
            "sha2" => Sha2,
            "date_add" | "adddate" => DateAdd,
            "date_sub" | "subdate" => DateSub,
            "convert_tz" => ConvertTz,
            "json_extract" => JsonExtract,
            "json_unquote" => JsonUnquote,
            "json_valid" => JsonValid,
            "json_object" => JsonObject,
            "json_array" => JsonArray,
            _ => return None,
        })
    }

    /// Checks the argument count (1582 for native functions, as MySQL).
    pub fn check_arity(self, name: &str, n: usize) -> SqlResult<()> {
        use Func::*;
        let ok = match self {
            Version | Database | User | CurrentUser | ConnectionId | RowCount | UtcTimestamp
            | CurDate => n == 0,
            Now => n <= 1,
            LastInsertId | UnixTimestamp | Rand => n <= 1,
            Length | CharLength | Upper | Lower | Abs | Floor | Ceil | Sleep => n == 1,
            Hex | Bin | Crc32 | Md5 | Sha1 | JsonUnquote | JsonValid => n == 1,
            JsonExtract => n >= 2,
            JsonObject => n.is_multiple_of(2),
            JsonArray => true,
            Left | Right | BinaryLeft | BinaryRight | Sha2 => n == 2,
            SubstringIndex | DateAdd | DateSub | ConvertTz => n == 3,
            TemporalText | BitText => n == 2,
            Round => n == 1 || n == 2,
            Substring | BinarySubstring => n == 2 || n == 3,
            TimeDiff | Repeat | Mod | IfNull | NullIf | Benchmark => n == 2,
            If => n == 3,
            Concat | Coalesce => n >= 1,
            ConcatWs | Greatest | Least => n >= 2,
        };
        if ok {
            Ok(())
        } else {
            Err(SqlError::new(
                ErrorCode::WrongParamcountToNativeFct,
                format!("Incorrect parameter count in the call to native function '{name}'"),
            ))
        }
    }
}

fn round_f64(x: f64, d: i64) -> f64 {
    let m = 10f64.powi(d.clamp(-30, 30) as i32);
    let r = (x * m).round() / m;
    // Scaling a huge value up overflows: it has no digits that far right to round.
    if r.is_finite() {
        r
    } else {
        x
    }
}

fn round_decimal(v: Decimal, d: i64) -> Decimal {
    let d = d.clamp(0, 30) as u8;
    if d >= v.scale {
        return v;
    }
    let drop = 10i128.pow(u32::from(v.scale - d));
    let (q, r) = (v.unscaled() / drop, v.unscaled() % drop);
    let q = if r.abs() * 2 >= drop {
        q + v.unscaled().signum()
    } else {
        q
    };
    Decimal::new(q, d)
}

/// Room for a result of `len` bytes that `name()` builds: `Ok(None)` (the result is NULL,
/// with warning 1301) when it would exceed `max_allowed_packet`, as MySQL; 1037 when the
/// memory cannot be had, so a huge result fails this statement instead of the process.
fn result_buffer(len: usize, name: &str, env: &dyn EvalEnv) -> SqlResult<Option<Vec<u8>>> {
    let max = env.max_allowed_packet();
    if len > max {
        env.warn(
            ErrorCode::WarnAllowedPacketOverflowed,
            format!("Result of {name}() was larger than max_allowed_packet ({max}) - truncated"),
        );
        return Ok(None);
    }
    env.reserve(len)?;
    crate::memory::try_buffer(len).map(Some)
}

/// Bytes a function writes into a result between two checks for KILL QUERY (1 MiB: about a
/// millisecond of copying, so a kill ends even a gigabyte result within a few milliseconds).
const KILL_CHECK_BYTES: usize = 1 << 20;

/// 1317 when the statement has been killed: checked by functions that build large values.
fn check_killed(env: &dyn EvalEnv) -> SqlResult<()> {
    if env.killed() {
        return Err(SqlError::new(
            ErrorCode::QueryInterrupted,
            "Query execution was interrupted",
        ));
    }
    Ok(())
}

/// `HEX()` of a string: NULL with 1301 past `max_allowed_packet`; built in slices between
/// which KILL QUERY is checked.
fn hex_of_bytes(b: &[u8], env: &dyn EvalEnv) -> SqlResult<Value> {
    let Some(mut out) = result_buffer(b.len().saturating_mul(2), "hex", env)? else {
        return Ok(Value::Null);
    };
    for chunk in b.chunks(KILL_CHECK_BYTES / 2) {
        check_killed(env)?;
        tf::hex_upper_into(&mut out, chunk);
    }
    Ok(Value::Bytes(out))
}

/// The bytes to check against the memory budget when a result growing in place reaches
/// `len` by adding `added`: the growth, but at least a checked value's worth once the result
/// is large, so many small arguments are checked too.
fn growth(len: usize, added: usize) -> usize {
    if len >= crate::memory::CHECKED_VALUE {
        added.max(crate::memory::CHECKED_VALUE)
    } else {
        added
    }
}

/// `CONCAT(...)`: NULL when an argument is NULL; NULL with 1301 as soon as the arguments
/// read so far pass `max_allowed_packet` (the rest are not evaluated). The result grows in
/// one buffer as each argument arrives, so at most one argument's copy is held beside it.
fn concat(args: &[BoundExpr], env: &dyn EvalEnv) -> SqlResult<Value> {
    let max = env.max_allowed_packet();
    let mut out: Option<Vec<u8>> = None;
    for i in 0..args.len() {
        check_killed(env)?;
        let Some(b) = text_arg(args, i, env)? else {
            return Ok(Value::Null);
        };
        let len = out.as_ref().map_or(0, Vec::len).saturating_add(b.len());
        if len > max {
            return result_buffer(len, "concat", env).map(|_| Value::Null);
        }
        match &mut out {
            None => out = Some(b),
            Some(o) => {
                env.reserve(growth(len, b.len()))?;
                crate::memory::try_extend(o, &b)?;
            }
        }
    }
    Ok(Value::Bytes(out.unwrap_or_default()))
}

/// `CONCAT_WS(sep, ...)`: NULL when the separator is NULL; NULL arguments are skipped; NULL
/// with 1301 as soon as the result would pass `max_allowed_packet`.
fn concat_ws(args: &[BoundExpr], env: &dyn EvalEnv) -> SqlResult<Value> {
    let Some(sep) = text_arg(args, 0, env)? else {
        return Ok(Value::Null);
    };
    let max = env.max_allowed_packet();
    let mut out: Option<Vec<u8>> = None;
    for i in 1..args.len() {
        check_killed(env)?;
        let Some(b) = text_arg(args, i, env)? else {
            continue;
        };
        let len = match &out {
            None => b.len(),
            Some(o) => o.len().saturating_add(sep.len()).saturating_add(b.len()),
        };
        if len > max {
            return result_buffer(len, "concat_ws", env).map(|_| Value::Null);
        }
        match &mut out {
            None => out = Some(b),
            Some(o) => {
                env.reserve(growth(len, sep.len().saturating_add(b.len())))?;
                crate::memory::try_extend(o, &sep)?;
                crate::memory::try_extend(o, &b)?;
            }
        }
    }
    Ok(Value::Bytes(out.unwrap_or_default()))
}

/// `REPEAT(s, n)`: NULL with 1301 past `max_allowed_packet`. The result is written by
/// copying what is already written (so a million one-byte copies are twenty large ones),
/// at most [`KILL_CHECK_BYTES`] (or one `s`) at a time, with KILL QUERY checked between.
fn repeat(s: &[u8], n: i64, env: &dyn EvalEnv) -> SqlResult<Value> {
    let n = usize::try_from(n).unwrap_or(0);
    let total = s.len().saturating_mul(n);
    let Some(mut out) = result_buffer(total, "repeat", env)? else {
        return Ok(Value::Null);
    };
    if total == 0 {
        return Ok(Value::Bytes(out));
    }
    out.extend_from_slice(s);
    // Invariant: out.len() is a whole number of copies of `s`, so copying any prefix of it
    // to its end continues the pattern; every step but the last copies whole copies.
    while out.len() < total {
        check_killed(env)?;
        let left = total - out.len();
        let step = out.len().min(left).min(KILL_CHECK_BYTES.max(s.len()));
        let step = if step == left {
            step
        } else {
            step - step % s.len()
        };
        out.extend_from_within(..step);
    }
    Ok(Value::Bytes(out))
}

fn text_arg(args: &[BoundExpr], i: usize, env: &dyn EvalEnv) -> SqlResult<Option<Vec<u8>>> {
    Ok(to_bytes(&eval(&args[i], env)?))
}

/// Evaluates one of the string and hash functions of [`text_functions`]; NULL in, NULL out.
fn text_function(f: Func, args: &[BoundExpr], env: &dyn EvalEnv) -> SqlResult<Value> {
    use Func::*;
    let first = eval(&args[0], env)?;
    if f == Bin {
        return Ok(match first {
            Value::Null => Value::Null,
            Value::UInt(u) => Value::str(&format!("{u:b}")),
            other => to_i64(&other).map_or(Value::Null, |n| Value::str(&format!("{:b}", n as u64))),
        });
    }
    if f == Hex {
        return Ok(match first {
            Value::Null => Value::Null,
            Value::Bytes(b) => hex_of_bytes(&b, env)?,
            Value::UInt(u) => Value::str(&format!("{u:X}")),
            other => match to_f64(&other) {
                Some(x) => Value::str(&format!("{:X}", x.round() as i64 as u64)),
                None => Value::Null,
            },
        });
    }
    let Some(s) = to_bytes(&first) else {
        return Ok(Value::Null);
    };
    let int_arg = |i: usize| -> SqlResult<Option<i64>> { Ok(to_i64(&eval(&args[i], env)?)) };
    Ok(match f {
        Left | Right | BinaryLeft | BinaryRight => match int_arg(1)? {
            Some(n) if matches!(f, Left | BinaryLeft) => {
                Value::Bytes(tf::left(&s, n, f == BinaryLeft))
            }
            Some(n) => Value::Bytes(tf::right(&s, n, f == BinaryRight)),
            None => Value::Null,
        },
        SubstringIndex => match (text_arg(args, 1, env)?, int_arg(2)?) {
            (Some(d), Some(n)) => Value::Bytes(tf::substring_index(&s, &d, n)),
            _ => Value::Null,
        },
        Crc32 => Value::UInt(u64::from(tf::crc32(&s))),
        Md5 => Value::str(&tf::md5_hex(&s)),
        Sha1 => Value::str(&tf::sha1_hex(&s)),
        Sha2 => int_arg(1)?
            .and_then(|bits| tf::sha2_hex(&s, bits))
            .map_or(Value::Null, |h| Value::str(&h)),
        _ => Value::Null,
    })
}

/// Evaluates one of the JSON functions of [`json_functions`]; a NULL document or path is a
/// NULL result.
fn json_function(f: Func, args: &[BoundExpr], env: &dyn EvalEnv) -> SqlResult<Value> {
    use crate::sql::json_functions as jf;
    use Func::*;
    // A nested JSON function's result is JSON, not a string to quote.
    let member = |e: &BoundExpr| -> SqlResult<serde_json::Value> {
        let nested = matches!(e, BoundExpr::Call(JsonExtract | JsonObject | JsonArray, _));
        Ok(jf::to_json(&eval(e, env)?, nested))
    };
    // A built document is bounded by max_allowed_packet like any other string result; its
    // members' own sizes are checked as they arrive, before the document is built.
    let max = env.max_allowed_packet();
    let mut members_len = 0usize;
    let bounded = |v: Value, name: &str| -> SqlResult<Value> {
        let len = match &v {
            Value::Bytes(b) => b.len(),
            _ => 0,
        };
        Ok(result_buffer(len, name, env)?.map_or(Value::Null, |_| v))
    };
    Ok(match f {
        JsonArray => {
            let mut items = Vec::with_capacity(args.len());
            for a in args {
                let j = member(a)?;
                members_len = members_len.saturating_add(jf::printed_len_lower_bound(&j));
                items.push(j);
                if members_len > max {
                    return result_buffer(members_len, "json_array", env).map(|_| Value::Null);
                }
            }
            bounded(jf::array(items), "json_array")?
        }
        JsonObject => {
            let mut pairs = Vec::with_capacity(args.len() / 2);
            for kv in args.chunks(2) {
                let key = eval(&kv[0], env)?;
                let j = member(&kv[1])?;
                members_len = members_len.saturating_add(jf::printed_len_lower_bound(&j));
                pairs.push((key, j));
                if members_len > max {
                    return result_buffer(members_len, "json_object", env).map(|_| Value::Null);
                }
            }
            bounded(jf::object(pairs)?, "json_object")?
        }
        _ => {
            let texts = (0..args.len())
                .map(|i| text_arg(args, i, env))
                .collect::<SqlResult<Option<Vec<_>>>>()?;
            match (f, texts.as_deref()) {
                (_, None) => Value::Null,
                (JsonExtract, Some([doc, paths @ ..])) => jf::extract(doc, paths)?,
                (JsonUnquote, Some([s])) => jf::unquote(s)?,
                (JsonValid, Some([s])) => jf::valid(s),
                _ => Value::Null,
            }
        }
    })
}

/// Evaluates a function call.
pub fn call(f: Func, args: &[BoundExpr], env: &dyn EvalEnv) -> SqlResult<Value> {
    use Func::*;
    let arg = |i: usize| eval(&args[i], env);
    Ok(match f {
        Version | Database | User | CurrentUser | ConnectionId | RowCount => env.session_fact(f),
        Left | Right | BinaryLeft | BinaryRight | SubstringIndex | Hex | Bin | Crc32 | Md5
        | Sha1 | Sha2 => return text_function(f, args, env),
        JsonExtract | JsonUnquote | JsonValid | JsonObject | JsonArray => {
            return json_function(f, args, env)
        }
        ConvertTz | DateAdd | DateSub | Now | UtcTimestamp | CurDate | UnixTimestamp | TimeDiff
        | BitText | TemporalText => return time_function(f, args, env),
        Abs | Round | Floor | Ceil | Mod | Greatest | Least => {
            return numeric_function(f, args, env)
        }
        LastInsertId => match args.first() {
            None => env.session_fact(f),
            Some(a) => eval(a, env)?,
        },
        Concat => concat(args, env)?,
        ConcatWs => concat_ws(args, env)?,
        Length => text_arg(args, 0, env)?.map_or(Value::Null, |b| Value::Int(b.len() as i64)),
        CharLength => text_arg(args, 0, env)?.map_or(Value::Null, |b| {
            Value::Int(i64::try_from(tf::char_length(&b)).unwrap_or(i64::MAX))
        }),
        Substring | BinarySubstring => {
            let Some(s) = text_arg(args, 0, env)? else {
                return Ok(Value::Null);
            };
            let Some(pos) = to_i64(&arg(1)?) else {
                return Ok(Value::Null);
            };
            let len = match args.get(2) {
                Some(e) => match to_i64(&eval(e, env)?) {
                    Some(l) => Some(l),
                    None => return Ok(Value::Null),
                },
                None => None,
            };
            Value::Bytes(tf::substring(&s, pos, len, f == BinarySubstring))
        }
        Upper | Lower => match text_arg(args, 0, env)? {
            Some(b) => {
                env.reserve(b.len())?;
                Value::Bytes(if f == Upper {
                    tf::upper(&b)
                } else {
                    tf::lower(&b)
                })
            }
            None => Value::Null,
        },
        Repeat => match (text_arg(args, 0, env)?, to_i64(&arg(1)?)) {
            (Some(s), Some(n)) => repeat(&s, n, env)?,
            _ => Value::Null,
        },
        Coalesce => {
            for a in args {
                let v = eval(a, env)?;
                if !v.is_null() {
                    return Ok(v);
                }
            }
            Value::Null
        }
        IfNull => {
            let v = arg(0)?;
            if v.is_null() {
                arg(1)?
            } else {
                v
            }
        }
        NullIf => {
            let (a, b) = (arg(0)?, arg(1)?);
            if compare(&a, &b) == Some(std::cmp::Ordering::Equal) {
                Value::Null
            } else {
                a
            }
        }
        If => {
            if crate::sql::eval::truth(&arg(0)?) == Some(true) {
                arg(1)?
            } else {
                arg(2)?
            }
        }
        Rand => Value::Double(rand::random::<f64>()),
        Sleep => {
            let secs = to_f64(&arg(0)?).unwrap_or(0.0);
            if secs < 0.0 {
                return Err(SqlError::new(
                    ErrorCode::WrongArguments,
                    "Incorrect arguments to sleep.",
                ));
            }
            Value::Int(i64::from(env.sleep(secs)?))
        }
        Benchmark => {
            let n = to_i64(&arg(0)?).unwrap_or(0);
            if n < 0 {
                return Err(SqlError::new(
                    ErrorCode::WrongArguments,
                    "Incorrect count value to function BENCHMARK",
                ));
            }
            for i in 0..n {
                if i % 4096 == 0 && env.killed() {
                    return Err(SqlError::new(
                        ErrorCode::QueryInterrupted,
                        "Query execution was interrupted",
                    ));
                }
                std::hint::black_box(eval(&args[1], env)?);
            }
            Value::Int(0)
        }
    })
}

/// Evaluates a date, time or temporal-text function.
fn time_function(f: Func, args: &[BoundExpr], env: &dyn EvalEnv) -> SqlResult<Value> {
    use Func::*;
    let arg = |i: usize| eval(&args[i], env);
    Ok(match f {
        ConvertTz => match (text_arg(args, 1, env)?, text_arg(args, 2, env)?) {
            (Some(from), Some(to)) => crate::sql::date_arith::convert_tz(
                &arg(0)?,
                &String::from_utf8_lossy(&from),
                &String::from_utf8_lossy(&to),
            ),
            _ => Value::Null,
        },
        DateAdd | DateSub => {
            let unit = text_arg(args, 2, env)?.unwrap_or_default();
            crate::sql::date_arith::add(
                &arg(0)?,
                to_f64(&arg(1)?),
                &String::from_utf8_lossy(&unit),
                f == DateSub,
            )
        }
        Now => Value::DateTime(datetime_from_micros(
            env.now_micros() / 1_000_000 * 1_000_000,
        )),
        UtcTimestamp => Value::DateTime(datetime_from_micros(
            env.now_micros() / 1_000_000 * 1_000_000,
        )),
        CurDate => {
            let dt = datetime_from_micros(env.now_micros());
            Value::DateTime(DateTime {
                year: dt.year,
                month: dt.month,
                day: dt.day,
                ..DateTime::default()
            })
        }
        UnixTimestamp => match args.first() {
            None => Value::Int(env.now_micros() / 1_000_000),
            Some(a) => {
                match crate::sql::eval::cast(eval(a, env)?, crate::sql::expr::CastType::DateTime) {
                    Value::DateTime(dt) => Value::Int(datetime_to_unix(&dt)),
                    _ => Value::Null,
                }
            }
        },
        TimeDiff => match (time_point(arg(0)?), time_point(arg(1)?)) {
            (Some((x_is_datetime, x)), Some((y_is_datetime, y)))
                if x_is_datetime == y_is_datetime =>
            {
                let max = crate::engine::time_value::MAX_TIME_MICROS;
                {
                    let span = (x - y).clamp(-max, max);
                    Value::Time(span, if span % 1_000_000 == 0 { 0 } else { 6 })
                }
            }
            _ => Value::Null,
        },
        BitText => match (arg(0)?, arg(1)?) {
            (Value::UInt(bits), Value::Int(width)) => {
                let n = usize::try_from(width).unwrap_or(64).div_ceil(8).clamp(1, 8);
                Value::Bytes(bits.to_be_bytes()[8 - n..].to_vec())
            }
            (other, _) => other,
        },
        TemporalText => match (arg(0)?, arg(1)?) {
            (Value::DateTime(dt), Value::Int(fsp)) => {
                let mut out = Vec::with_capacity(26);
                crate::sql::format::write_temporal(&mut out, &dt, u8::try_from(fsp).ok());
                Value::Bytes(out)
            }
            (other, _) => other,
        },
        _ => unreachable!("not a time function: {f:?}"),
    })
}

/// Evaluates a numeric function (ABS, ROUND, FLOOR/CEIL, MOD, GREATEST/LEAST).
fn numeric_function(f: Func, args: &[BoundExpr], env: &dyn EvalEnv) -> SqlResult<Value> {
    use Func::*;
    let arg = |i: usize| eval(&args[i], env);
    Ok(match f {
        Abs => match arg(0)? {
            Value::Int(i) => Value::Int(i.checked_abs().ok_or_else(|| {
                SqlError::new(
                    ErrorCode::DataOutOfRange,
                    "BIGINT value is out of range in 'abs'",
                )
            })?),
            Value::UInt(u) => Value::UInt(u),
            Value::Decimal(d) => Value::Decimal(Decimal::new(
                d.unscaled().checked_abs().ok_or_else(|| {
                    SqlError::new(
                        ErrorCode::DataOutOfRange,
                        "DECIMAL value is out of range in 'abs'",
                    )
                })?,
                d.scale,
            )),
            Value::Null => Value::Null,
            other => Value::Double(to_f64(&other).unwrap_or(0.0).abs()),
        },
        Round => {
            let d = match args.get(1) {
                Some(e) => to_i64(&eval(e, env)?).unwrap_or(0),
                None => 0,
            };
            match arg(0)? {
                Value::Null => Value::Null,
                Value::Int(i) if d >= 0 => Value::Int(i),
                Value::UInt(u) if d >= 0 => Value::UInt(u),
                Value::Decimal(x) => Value::Decimal(round_decimal(x, d)),
                other => Value::Double(round_f64(to_f64(&other).unwrap_or(0.0), d)),
            }
        }
        Floor | Ceil => match arg(0)? {
            Value::Null => Value::Null,
            v @ (Value::Int(_) | Value::UInt(_)) => v,
            other => {
                let x = to_f64(&other).unwrap_or(0.0);
                let r = if f == Floor { x.floor() } else { x.ceil() };
                if matches!(other, Value::Double(_) | Value::Bytes(_)) {
                    Value::Double(r)
                } else {
                    Value::Int(r as i64)
                }
            }
        },
        Mod => eval(
            &BoundExpr::Binary(
                crate::sql::expr::BinOp::Mod,
                Box::new(args[0].clone()),
                Box::new(args[1].clone()),
            ),
            env,
        )?,
        Greatest | Least => {
            let mut best: Option<Value> = None;
            for a in args {
                let v = eval(a, env)?;
                if v.is_null() {
                    return Ok(Value::Null);
                }
                best = Some(match best {
                    None => v,
                    Some(b) => {
                        let o = compare(&v, &b).unwrap_or(std::cmp::Ordering::Equal);
                        let take = if f == Greatest { o.is_gt() } else { o.is_lt() };
                        if take {
                            v
                        } else {
                            b
                        }
                    }
                });
            }
            best.unwrap_or(Value::Null)
        }
        _ => unreachable!("not a numeric function: {f:?}"),
    })
}
