//! `CHECKSUM TABLE t [, t2 ...] [QUICK | EXTENDED]`, which sqlparser does not parse:
//! recognised from its tokens, answered with MySQL's result set (`Table` as `db.t`,
//! `Checksum`). A table's checksum is the 32-bit wrapping sum of a CRC32 per row of a
//! consistent read, over each column in order (a NULL marker, or a length and the value's
//! bytes), so servers holding the same rows agree whatever their order; the number is not
//! MySQL's, which sums CRCs of its own row format. QUICK is NULL, as MySQL gives for InnoDB
//! (it keeps no live checksum); a missing table is NULL with its 1146 as an Error-level
//! warning, as MySQL answers.

use sqlparser::tokenizer::Token;

use crate::context::{Context, Warning};
use crate::error::{ErrorCode, SqlError, SqlResult};
use crate::exec::errors::no_database;
use crate::sql::output::{Output, ResultSet};
use crate::stmt::tokens::{is_keyword, starting_with};
use crate::value::Value;

/// A planned CHECKSUM TABLE.
#[derive(Debug, Clone)]
pub struct ChecksumTable {
    /// The tables: database (None: the current one) and name.
    pub tables: Vec<(Option<String>, String)>,
    /// QUICK: no checksum is computed.
    pub quick: bool,
}

/// The statement if `sql` is a CHECKSUM TABLE (a malformed one is left to sqlparser, which
/// answers 1064).
pub fn parse(sql: &str) -> Option<ChecksumTable> {
    let tokens = starting_with(sql, "CHECKSUM")?;
    let kw = is_keyword;
    let [checksum, table, rest @ ..] = tokens.as_slice() else {
        return None;
    };
    let mut rest: &[Token] = rest;
    if !(kw(checksum, "CHECKSUM") && kw(table, "TABLE")) {
        return None;
    }
    let mut quick = false;
    if let [init @ .., last] = rest {
        let (init, last): (&[Token], &Token) = (init, last);
        if kw(last, "QUICK") || kw(last, "EXTENDED") {
            quick = kw(last, "QUICK");
            rest = init;
        }
    }
    let mut tables = Vec::new();
    for name in rest.split(|t| matches!(t, Token::Comma)) {
        let word = |t: &Token| match t {
            Token::Word(w) => Some(w.value.clone()),
            _ => None,
        };
        tables.push(match name {
            [t] => (None, word(t)?),
            [db, Token::Period, t] => (Some(word(db)?), word(t)?),
            _ => return None,
        });
    }
    Some(ChecksumTable { tables, quick })
}

/// The checksum of rows: the wrapping sum of each row's CRC32.
fn checksum(rows: &[Vec<Value>]) -> u32 {
    let mut buf = Vec::new();
    rows.iter().fold(0u32, |sum, row| {
        buf.clear();
        for v in row {
            let bytes = match v {
                Value::Null => {
                    buf.push(0);
                    continue;
                }
                Value::Bytes(b) => b.clone(),
                other => crate::engine::table::display_value(other).into_bytes(),
            };
            buf.push(1);
            buf.extend_from_slice(&u32::try_from(bytes.len()).unwrap_or(u32::MAX).to_le_bytes());
            buf.extend_from_slice(&bytes);
        }
        sum.wrapping_add(crate::sql::text_functions::crc32(&buf))
    })
}

/// Every committed row of `db.table` as a consistent read gives it (1146 if absent).
fn rows(st: &Context, db: &str, table: &str) -> SqlResult<Vec<Vec<Value>>> {
    st.core.catalog.table(db, table)?;
    let sql = format!(
        "SELECT * FROM `{}`.`{}`",
        db.replace('`', "``"),
        table.replace('`', "``")
    );
    let Some(stmt) = crate::sql::parse(&sql)?.into_iter().next() else {
        return Err(SqlError::parse(&sql));
    };
    let planned = crate::exec::plan(st, stmt, &sql)?;
    match &planned.plan.body {
        crate::exec::Body::Select(q) => crate::exec::run::Exec::new(st, &[]).query(q),
        _ => Err(SqlError::unsupported("CHECKSUM TABLE of this table")),
    }
}

/// Executes CHECKSUM TABLE.
pub fn execute(st: &mut Context, c: &ChecksumTable) -> SqlResult<Output> {
    let mut out = Vec::new();
    for (db, table) in &c.tables {
        let db = match db {
            Some(d) => d.clone(),
            None => st.db.clone().ok_or_else(no_database)?,
        };
        let value = match rows(st, &db, table) {
            Ok(_) if c.quick => Value::Null,
            Ok(rows) => Value::UInt(u64::from(checksum(&rows))),
            Err(e) if e.code == ErrorCode::NoSuchTable => {
                st.warnings.push(Warning {
                    level: "Error",
                    code: e.code.code(),
                    message: e.message,
                });
                Value::Null
            }
            Err(e) => return Err(e),
        };
        out.push(vec![Value::str(&format!("{db}.{table}")), value]);
    }
    Ok(Output::Rows(ResultSet::text(&["Table", "Checksum"], out)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_mysqls_forms() {
        let c = parse("CHECKSUM TABLE t, `d`.`x y` EXTENDED").unwrap();
        assert_eq!(
            c.tables,
            vec![(None, "t".into()), (Some("d".into()), "x y".into())]
        );
        assert!(!c.quick);
        assert!(parse("checksum table t quick").unwrap().quick);
        assert!(parse("CHECKSUM TABLE").is_none());
        assert!(parse("CHECKSUM TABLE t,").is_none());
        assert!(parse("SELECT 1").is_none());
    }

    #[test]
    fn checksums_tell_columns_and_nulls_apart_but_not_row_order() {
        let row = |a: Value, b: Value| vec![a, b];
        let one = [
            row(Value::Int(1), Value::Null),
            row(Value::str("x"), Value::Int(2)),
        ];
        let swapped = [
            row(Value::str("x"), Value::Int(2)),
            row(Value::Int(1), Value::Null),
        ];
        assert_eq!(checksum(&one), checksum(&swapped));
        assert_ne!(
            checksum(&[row(Value::Int(1), Value::Null)]),
            checksum(&[row(Value::Null, Value::Int(1))])
        );
        assert_ne!(
            checksum(&[row(Value::str("ab"), Value::str(""))]),
            checksum(&[row(Value::str("a"), Value::str("b"))])
        );
        assert_eq!(checksum(&[]), 0);
    }
}
