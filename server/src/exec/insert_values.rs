//! The text of an `INSERT`/`REPLACE ... VALUES` whose rows hold only plain literals (unsigned
//! or negated integers and decimals, single-quoted strings without backslashes, NULL,
//! DEFAULT) is read here without the general parser: a bulk load's statement of thousands
//! of rows then costs a byte scan per value instead of the parser's work per token, and
//! no syntax tree of its values is built, bound and dropped.
//!
//! It happens in two steps. [`parse_several`] checks that every row is literal-only and
//! has sqlparser parse the statement with its first row only (the head). The planner, given
//! a statement whose VALUES holds one row while the statement's text holds two or more
//! literal-only rows (which a full parse of that text never gives), reads the rows from
//! the text ([`text_rows`]) into the values the binder would have made of them. The plan
//! keeps the text and the head, so a plan made again after a catalog change reads the same
//! rows. Anything else in a row (an expression, a placeholder, a comment, a quoted
//! identifier in a row) makes [`parse_several`] give None and the caller parses the whole
//! text as before, so what this path accepts plans to the same statement either way.

use sqlparser::ast::{self, Expr, SetExpr, Statement, UnaryOperator};

use crate::error::SqlResult;
use crate::exec::scope::Scope;
use crate::exec::Planner;
use crate::sql::expr::BoundExpr;
use crate::value::Value;

/// The head statement (the text with its first row only) of `sql` when `sql` is an INSERT
/// or REPLACE with at least two literal-only VALUES rows; None when the fast path does not
/// apply (the caller then parses `sql` itself). Plan it with `sql` as the statement text:
/// the planner reads the rows from there. A single row gains nothing here (its first row is
/// the whole text), and the caller's statement shapes serve a repeated one better.
pub(crate) fn parse_several(sql: &str) -> Option<Statement> {
    let found = find_rows(sql)?;
    // The statement with its first row only: sqlparser checks everything but the rows.
    let mut head = String::with_capacity(found.first_end + sql.len() - found.end);
    head.push_str(&sql[..found.first_end]);
    head.push_str(&sql[found.end..]);
    let mut parsed = crate::sql::parse(&head).ok()?;
    let [Statement::Insert(insert)] = parsed.as_slice() else {
        return None;
    };
    let SetExpr::Values(values) = insert.source.as_deref()?.body.as_ref() else {
        return None;
    };
    let [first] = values.rows.as_slice() else {
        return None;
    };
    (first.content.len() == found.first_len).then(|| parsed.pop())?
}

/// The rows of the statement being planned, bound, when it is a head [`parse_several`]
/// made: `values` (its VALUES) holds one row of the width of the first row of the text
/// `p.sql`, and the text holds two or more literal-only rows. None otherwise: the caller
/// binds `values`' rows. Each row is one value per given column, None for DEFAULT.
pub(crate) fn text_rows(
    p: &mut Planner<'_>,
    values: &ast::Values,
) -> Option<SqlResult<Vec<Vec<Option<BoundExpr>>>>> {
    let [first] = values.rows.as_slice() else {
        return None;
    };
    let sql = p.sql;
    let b = sql.as_bytes();
    if !(starts_with_word(b, b"INSERT") || starts_with_word(b, b"REPLACE")) {
        return None;
    }
    let open = values_start(b)?;
    if !may_have_second_row(&b[open..]) {
        return None;
    }
    // One pass reads and binds the rows; the checks of `find_rows` follow it.
    let width = first.content.len();
    let mut rows: Vec<Vec<Option<BoundExpr>>> = Vec::new();
    let mut row = Vec::with_capacity(width);
    let mut failed = None;
    let scan = scan_rows(sql, open, &mut |item| match item {
        Item::Value(lit) => match bind_literal(p, lit) {
            Ok(v) => row.push(v),
            Err(e) => {
                failed.get_or_insert(e);
                row.push(None);
            }
        },
        Item::RowEnd => rows.push(std::mem::replace(&mut row, Vec::with_capacity(width))),
    })?;
    if scan.rows < 2 || sql[scan.end..].contains(';') || rows[0].len() != width {
        return None;
    }
    Some(match failed {
        Some(e) => Err(e),
        None => Ok(rows),
    })
}

/// What the binder makes of the literal `lit` (None for DEFAULT).
fn bind_literal(p: &mut Planner<'_>, lit: Literal<'_>) -> SqlResult<Option<BoundExpr>> {
    Ok(Some(match lit {
        Literal::Str { body, doubled } => {
            let bytes = if doubled {
                crate::sql::bytes::restore(&body.replace("''", "'")).into_owned()
            } else {
                crate::sql::bytes::restore(body).into_owned()
            };
            BoundExpr::Literal(Value::Bytes(bytes))
        }
        Literal::Number(n) => BoundExpr::Literal(crate::sql::expr::number_literal(n)?),
        Literal::Negative(n) => {
            // Negation folds as the binder folds it (or not, at i64::MIN): let it decide.
            let e = Expr::UnaryOp {
                op: UnaryOperator::Minus,
                expr: Box::new(Expr::value(ast::Value::Number(n.to_string(), false))),
            };
            let empty = Scope::new(&p.st.core.vars);
            p.bind_with(&empty, &e)?
        }
        Literal::Null => BoundExpr::Literal(Value::Null),
        Literal::Default => return Ok(None),
    }))
}

/// Where the literal-only rows of an INSERT/REPLACE text are.
struct Found {
    /// Offset just past the first row's `)`.
    first_end: usize,
    /// Values in the first row.
    first_len: usize,
    /// Offset just past the last row's `)`.
    end: usize,
}

/// The rows of `sql` when it is an INSERT or REPLACE whose VALUES holds two or more
/// literal-only rows and nothing follows them but text without `;` (several statements are
/// the full parser's to split).
fn find_rows(sql: &str) -> Option<Found> {
    let b = sql.as_bytes();
    if !(starts_with_word(b, b"INSERT") || starts_with_word(b, b"REPLACE")) {
        return None;
    }
    let open = values_start(b)?;
    if !may_have_second_row(&b[open..]) {
        return None;
    }
    let (mut first_len, mut values) = (None, 0usize);
    let scan = scan_rows(sql, open, &mut |item| match item {
        Item::Value(_) => values += 1,
        Item::RowEnd => {
            first_len.get_or_insert(values);
        }
    })?;
    if scan.rows < 2 || sql[scan.end..].contains(';') {
        return None;
    }
    Some(Found {
        first_end: scan.first_end,
        first_len: first_len?,
        end: scan.end,
    })
}

/// What [`scan_rows`] meets, in text order.
enum Item<'a> {
    /// A row's next value.
    Value(Literal<'a>),
    /// The end of a row.
    RowEnd,
}

/// A literal as it stands in the text.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Literal<'a> {
    /// A single-quoted string's text between the quotes, doubled quotes not yet undone, and
    /// whether it holds any.
    Str { body: &'a str, doubled: bool },
    /// An unsigned number `digits[.digits]`.
    Number(&'a str),
    /// `-` and an unsigned number (the number's text).
    Negative(&'a str),
    /// NULL.
    Null,
    /// The DEFAULT keyword.
    Default,
}

/// The rows' extent: how many, and the offsets just past the first one and the last one.
struct Scan {
    rows: usize,
    first_end: usize,
    end: usize,
}

/// Whether `b` starts (after whitespace) with the keyword `kw`, case-insensitively.
fn starts_with_word(b: &[u8], kw: &[u8]) -> bool {
    let s = skip_ws(b, 0);
    b.len() >= s + kw.len()
        && b[s..s + kw.len()].eq_ignore_ascii_case(kw)
        && !b.get(s + kw.len()).is_some_and(|&c| is_ident(c))
}

fn is_ident(c: u8) -> bool {
    c.is_ascii_alphanumeric() || c == b'_' || c == b'$' || c >= 0x80
}

fn skip_ws(b: &[u8], mut i: usize) -> usize {
    while b.get(i).is_some_and(|c| c.is_ascii_whitespace()) {
        i += 1;
    }
    i
}

/// The offset of the `(` opening the first row after a top-level `VALUES` or `VALUE`
/// keyword; None when there is none, or the text before it has a comment (which could hide
/// or fake the keyword).
fn values_start(b: &[u8]) -> Option<usize> {
    let (mut i, mut depth) = (0usize, 0usize);
    while i < b.len() {
        match b[i] {
            q @ (b'\'' | b'"' | b'`') => i = skip_quoted(b, i, q)?,
            b'#' => return None,
            b'-' if b.get(i + 1) == Some(&b'-') => return None,
            b'/' if b.get(i + 1) == Some(&b'*') => return None,
            b'(' => {
                depth += 1;
                i += 1;
            }
            b')' => {
                depth = depth.checked_sub(1)?;
                i += 1;
            }
            c if is_ident(c) => {
                let start = i;
                while i < b.len() && is_ident(b[i]) {
                    i += 1;
                }
                let w = &b[start..i];
                let keyword = w.eq_ignore_ascii_case(b"VALUES") || w.eq_ignore_ascii_case(b"VALUE");
                if depth == 0 && keyword {
                    let open = skip_ws(b, i);
                    return (b.get(open) == Some(&b'(')).then_some(open);
                }
            }
            _ => i += 1,
        }
    }
    None
}

/// The offset past the quoted run starting at `i` (quote `q`, doubled to escape it); None
/// at a backslash inside quotes (its meaning depends on NO_BACKSLASH_ESCAPES) or an open
/// quote.
fn skip_quoted(b: &[u8], i: usize, q: u8) -> Option<usize> {
    quoted_end(b, i, q).map(|(end, _)| end)
}

/// [`skip_quoted`], and whether the run holds a doubled quote.
fn quoted_end(b: &[u8], i: usize, q: u8) -> Option<(usize, bool)> {
    let mut j = i + 1;
    let mut doubled = false;
    loop {
        let rest = &b[j..];
        let at = j + if q == b'`' {
            memchr::memchr(q, rest)?
        } else {
            memchr::memchr2(q, b'\\', rest)?
        };
        if b[at] != q {
            return None; // a backslash
        }
        if b.get(at + 1) == Some(&q) {
            doubled = true;
            j = at + 2;
        } else {
            return Some((at + 1, doubled));
        }
    }
}

/// Whether `rows` (the text from the first row's `(`) could hold a second row: rows are
/// separated by `)`, optional whitespace and `,`, so text without that sequence (even
/// inside a string) has one row at most. A byte test that spares building the first row's
/// values only to find it alone.
fn may_have_second_row(rows: &[u8]) -> bool {
    memchr::memchr_iter(b')', rows).any(|i| rows.get(skip_ws(rows, i + 1)) == Some(&b','))
}

/// Scans the rows starting at the `(` at `open`, handing `visit` each value and each row's
/// end in order; None (perhaps after some calls) when a row holds anything but literals.
fn scan_rows(sql: &str, open: usize, visit: &mut dyn FnMut(Item<'_>)) -> Option<Scan> {
    let b = sql.as_bytes();
    let (mut rows, mut first_end) = (0usize, 0usize);
    let mut i = open;
    loop {
        if b.get(i) != Some(&b'(') {
            return None;
        }
        i += 1;
        loop {
            i = skip_ws(b, i);
            let (lit, next) = literal(sql, i)?;
            visit(Item::Value(lit));
            i = skip_ws(b, next);
            match b.get(i) {
                Some(b',') => i += 1,
                Some(b')') => {
                    i += 1;
                    break;
                }
                _ => return None,
            }
        }
        visit(Item::RowEnd);
        rows += 1;
        if rows == 1 {
            first_end = i;
        }
        let after = skip_ws(b, i);
        if b.get(after) == Some(&b',') {
            i = skip_ws(b, after + 1);
        } else {
            return Some(Scan {
                rows,
                first_end,
                end: i,
            });
        }
    }
}

/// The literal at `i`, and the offset past it.
fn literal(sql: &str, i: usize) -> Option<(Literal<'_>, usize)> {
    let b = sql.as_bytes();
    match *b.get(i)? {
        b'\'' => {
            let (end, doubled) = quoted_end(b, i, b'\'')?;
            let next = skip_ws(b, end);
            if b.get(next) == Some(&b'\'') {
                return None; // adjacent strings concatenate: the full parser's job
            }
            let body = &sql[i + 1..end - 1];
            Some((Literal::Str { body, doubled }, end))
        }
        b'-' => {
            let end = number(b, i + 1)?;
            Some((Literal::Negative(&sql[i + 1..end]), end))
        }
        b'0'..=b'9' => {
            let end = number(b, i)?;
            Some((Literal::Number(&sql[i..end]), end))
        }
        c if is_ident(c) => {
            let mut end = i;
            while end < b.len() && is_ident(b[end]) {
                end += 1;
            }
            let w = &b[i..end];
            if w.eq_ignore_ascii_case(b"NULL") {
                Some((Literal::Null, end))
            } else if w.eq_ignore_ascii_case(b"DEFAULT") {
                Some((Literal::Default, end))
            } else {
                None
            }
        }
        _ => None,
    }
}

/// The end of a number `digits[.digits]` at `i` not run into a word (`1e5`, `0x1F`,
/// `12abc` are left to the full parser).
fn number(b: &[u8], i: usize) -> Option<usize> {
    let digits = |from: usize| {
        let mut j = from;
        while b.get(j).is_some_and(u8::is_ascii_digit) {
            j += 1;
        }
        j
    };
    let mut end = digits(i);
    if end == i {
        return None;
    }
    if b.get(end) == Some(&b'.') {
        let frac = digits(end + 1);
        if frac == end + 1 {
            return None;
        }
        end = frac;
    }
    if b.get(end).is_some_and(|&c| is_ident(c) || c == b'.') {
        return None;
    }
    Some(end)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::context::{testing, Context};
    use crate::exec::insert::InsertSource;
    use crate::exec::Body;
    use proptest::prelude::*;

    /// A session on database `d`, which holds `t (a, b, c)` and sysbench's `sbtest1`.
    fn session() -> Context {
        let core = testing::core();
        let mut st = testing::root(&core);
        for sql in [
            "CREATE DATABASE d",
            "USE d",
            "CREATE TABLE t (a INT, b INT, c VARCHAR(40))",
            "CREATE TABLE sbtest1 (id INT NOT NULL AUTO_INCREMENT, k INT DEFAULT '0' NOT NULL, \
             c CHAR(120) DEFAULT '' NOT NULL, pad CHAR(60) DEFAULT '' NOT NULL, PRIMARY KEY (id))",
        ] {
            for r in crate::stmt::run_text(&mut st, sql) {
                r.unwrap_or_else(|e| panic!("{sql}: {e:?}"));
            }
        }
        st
    }

    /// The VALUES rows `stmt` plans to with `sql` as its text.
    fn planned_rows(
        st: &Context,
        stmt: Statement,
        sql: &str,
    ) -> SqlResult<Vec<Vec<Option<BoundExpr>>>> {
        let planned = crate::exec::plan(st, stmt, sql)?;
        match planned.plan.body {
            Body::Insert(i) => match i.source {
                InsertSource::Values(rows) => Ok(rows),
                other => panic!("{sql}: {other:?}"),
            },
            _ => panic!("{sql}: not an INSERT"),
        }
    }

    /// The head of `sql` plans to the rows (or the error) the full parse plans to.
    fn plans_as_full_parse(st: &Context, sql: &str) {
        let head = parse_several(sql).unwrap_or_else(|| panic!("fast path refused {sql}"));
        let full = crate::sql::parse(sql).expect("parses").remove(0);
        let want = planned_rows(st, full, sql);
        let got = planned_rows(st, head, sql);
        match (&want, &got) {
            (Ok(w), Ok(g)) => assert_eq!(w, g, "{sql}"),
            (Err(w), Err(g)) => assert_eq!((w.code, &w.message), (g.code, &g.message), "{sql}"),
            _ => panic!("{sql}: {want:?} against {got:?}"),
        }
    }

    #[test]
    fn literal_rows_plan_as_the_full_parse_plans_them() {
        let st = session();
        for sql in [
            "INSERT INTO sbtest1(k, c, pad) VALUES(4993, '8368-0981', '2287-1'),\
             (5020, '9-1', '4-0'),(5,'a''b','')",
            "insert ignore into t values (1,NULL,DEFAULT) , ( -2 , 3.25 , 'x' )",
            "REPLACE INTO d.t (a) VALUE (1),(2)",
            "INSERT INTO t (a, b) VALUES (1, 2), (3, 4) ON DUPLICATE KEY UPDATE b = VALUES(b) + 1",
            "INSERT INTO t (c) VALUES ('values (1)'), ('it''s'), ('')",
            "INSERT INTO t VALUES (-9223372036854775808, 9223372036854775808, 18446744073709551615),\
             (-9223372036854775809, -0.5, 99999999999999999999999999.125)",
            // The binder's error for a row of the wrong width, at the same row.
            "INSERT INTO t VALUES (1, 2, 'x'), (3, 4)",
        ] {
            plans_as_full_parse(&st, sql);
        }
    }

    #[test]
    fn a_statement_of_one_row_is_bound_from_its_syntax_tree() {
        let st = session();
        // A one-row statement planned with a text of two rows is not a head of that text
        // unless its row has the text's first row's width.
        let one = crate::sql::parse("INSERT INTO t (a) VALUES (7)")
            .expect("parses")
            .remove(0);
        let rows = planned_rows(&st, one, "INSERT INTO t (a, b) VALUES (1, 2), (3, 4)").unwrap();
        assert_eq!(rows, vec![vec![Some(BoundExpr::Literal(Value::Int(7)))]]);
    }

    #[test]
    fn anything_but_plain_literals_goes_to_the_full_parser() {
        for sql in [
            "INSERT INTO t VALUES (1), (now())",
            "INSERT INTO t VALUES (?, 1), (2, 3)",
            "INSERT INTO t VALUES ('a\\'b'), ('c')",
            "INSERT INTO t VALUES (\"x\"), ('y')",
            "INSERT INTO t VALUES (1e5), (1)",
            "INSERT INTO t VALUES (0x1F), (1)",
            "INSERT INTO t VALUES (1 + 2), (3)",
            "INSERT INTO t VALUES ('a' 'b'), ('c')",
            "INSERT INTO t VALUES (), ()",
            "INSERT INTO t VALUES (1), (2); SELECT 1",
            "INSERT INTO t /* VALUES (1), (2) */ SELECT 2",
            "INSERT INTO t SELECT * FROM (VALUES ROW(1), ROW(2)) AS x",
            "INSERT INTO t SET a = 1",
            "INSERT INTO t VALUES (1), (2),",
            "SELECT 1",
        ] {
            assert!(parse_several(sql).is_none(), "{sql}");
        }
    }

    #[test]
    fn a_single_row_is_left_to_the_caller() {
        assert!(parse_several("INSERT INTO t VALUES (1, 'a')").is_none());
        assert!(!may_have_second_row(
            b"(1, 'a') ON DUPLICATE KEY UPDATE a = 1"
        ));
        assert!(may_have_second_row(b"(1, 'a') , (2, 'b')"));
        // A string that looks like a row separator only sends the text to the full scan.
        assert!(may_have_second_row(b"('x),y')"));
        assert!(parse_several("INSERT INTO t VALUES ('x),y')").is_none());
        let two = "INSERT INTO t VALUES (1, 'a'), (2, 'b')";
        let head = crate::sql::parse("INSERT INTO t VALUES (1, 'a')").expect("parses");
        assert_eq!(
            head,
            vec![parse_several(two).expect("two rows take the fast path")]
        );
    }

    #[test]
    fn a_bad_statement_around_the_rows_is_left_to_the_full_parser() {
        assert!(parse_several("INSERT INTO VALUES (1), (2)").is_none());
        assert!(parse_several("INSERT INTO t VALUES (1), (2) garbage here").is_none());
    }

    fn literal_text() -> impl Strategy<Value = String> {
        prop_oneof![
            any::<i64>().prop_map(|n| n.to_string()),
            any::<u64>().prop_map(|n| n.to_string()),
            (0u32..100_000, 0u32..1000).prop_map(|(a, b)| format!("{a}.{b}")),
            (0u32..100_000, 0u32..1000).prop_map(|(a, b)| format!("-{a}.{b}")),
            "[a-zA-Z0-9 ,()'-]{0,12}".prop_map(|s| format!("'{}'", s.replace('\'', "''"))),
            Just("NULL".to_string()),
            Just("default".to_string()),
        ]
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(64))]
        #[test]
        fn literal_rows_plan_as_sqlparser_parses_them(
            rows in prop::collection::vec(prop::collection::vec(literal_text(), 3), 2..8),
            spaced in any::<bool>(),
        ) {
            let sep = if spaced { " , " } else { "," };
            let body: Vec<String> = rows.iter().map(|r| format!("({})", r.join(sep))).collect();
            let sql = format!("INSERT INTO t(a, b, c) VALUES{}", body.join(sep));
            plans_as_full_parse(&session(), &sql);
        }
    }
}
