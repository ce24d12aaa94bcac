//! The text of an `INSERT`/`REPLACE ... VALUES` whose rows hold only plain literals (unsigned
//! or negated integers and decimals, single-quoted strings without backslashes, NULL,
//! DEFAULT) is read here in one pass: the rows become the expressions sqlparser would have
//! produced, and only the statement around them (with its first row) goes through sqlparser.
//! A bulk load's statement of thousands of rows then costs a byte scan per value instead of
//! the general parser's work per token. Anything else in a row (an expression, a
//! placeholder, a comment, a quoted identifier in a row) gives None and the caller parses the
//! whole text as before, so what this path accepts parses to the same statement either way.

use sqlparser::ast::{self, Expr, SetExpr, Statement, UnaryOperator};

/// [`parse_rows`] for a statement of at least two rows. A single row gains nothing here (its
/// first row is the whole text, so sqlparser would read all of it), and the caller's
/// statement shapes serve a repeated one better.
pub(crate) fn parse_several(sql: &str) -> Option<Statement> {
    parse_rows(sql, 2)
}

/// The statement `sql` parses to, when it is an INSERT or REPLACE with at least `min_rows`
/// literal-only VALUES rows; None when the fast path does not apply (the caller then parses
/// `sql` itself).
fn parse_rows(sql: &str, min_rows: usize) -> Option<Statement> {
    let b = sql.as_bytes();
    if !(starts_with_word(b, b"INSERT") || starts_with_word(b, b"REPLACE")) {
        return None;
    }
    let open = values_start(b)?;
    if min_rows > 1 && !may_have_second_row(&b[open..]) {
        return None;
    }
    let (rows, first_end) = scan_rows(sql, open)?;
    if rows.rows.len() < min_rows {
        return None;
    }
    let tail = &sql[rows.end..];
    if tail.contains(';') {
        return None; // several statements: the full parse splits them
    }
    // The statement with its first row only: sqlparser checks everything but the rows.
    let mut head = String::with_capacity(first_end + tail.len());
    head.push_str(&sql[..first_end]);
    head.push_str(tail);
    let mut parsed = crate::sql::parse(&head).ok()?;
    let [Statement::Insert(insert)] = parsed.as_mut_slice() else {
        return None;
    };
    let SetExpr::Values(values) = insert.source.as_deref_mut()?.body.as_mut() else {
        return None;
    };
    let [first] = values.rows.as_slice() else {
        return None;
    };
    let template = first.clone();
    values.rows = rows
        .rows
        .into_iter()
        .map(|content| {
            let mut row = template.clone();
            row.content = content;
            row
        })
        .collect();
    parsed.pop()
}

/// Rows scanned from the text, and the byte offset just past them.
struct Rows {
    rows: Vec<Vec<Expr>>,
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
    let mut j = i + 1;
    loop {
        match *b.get(j)? {
            b'\\' if q != b'`' => return None,
            c if c == q => {
                if b.get(j + 1) == Some(&q) {
                    j += 2;
                } else {
                    return Some(j + 1);
                }
            }
            _ => j += 1,
        }
    }
}

/// Whether `rows` (the text from the first row's `(`) could hold a second row: rows are
/// separated by `)`, optional whitespace and `,`, so text without that sequence (even
/// inside a string) has one row at most. A byte test that spares building the first row's
/// values only to find it alone.
fn may_have_second_row(rows: &[u8]) -> bool {
    rows.iter()
        .enumerate()
        .any(|(i, &c)| c == b')' && rows.get(skip_ws(rows, i + 1)) == Some(&b','))
}

/// Scans the rows starting at the `(` at `open`: returns them and the offset just past the
/// first row.
fn scan_rows(sql: &str, open: usize) -> Option<(Rows, usize)> {
    let b = sql.as_bytes();
    let mut rows = Vec::new();
    let mut first_end = 0;
    let mut i = open;
    loop {
        if b.get(i) != Some(&b'(') {
            return None;
        }
        let mut row = Vec::with_capacity(rows.last().map_or(4, Vec::len));
        i += 1;
        loop {
            i = skip_ws(b, i);
            let (e, next) = literal(sql, i)?;
            row.push(e);
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
        rows.push(row);
        if rows.len() == 1 {
            first_end = i;
        }
        let after = skip_ws(b, i);
        if b.get(after) == Some(&b',') {
            i = skip_ws(b, after + 1);
        } else {
            return Some((Rows { rows, end: i }, first_end));
        }
    }
}

/// The literal at `i` as sqlparser's expression, and the offset past it.
fn literal(sql: &str, i: usize) -> Option<(Expr, usize)> {
    let b = sql.as_bytes();
    match *b.get(i)? {
        b'\'' => {
            let end = skip_quoted(b, i, b'\'')?;
            let body = &sql[i + 1..end - 1];
            let text = if body.contains("''") {
                body.replace("''", "'")
            } else {
                body.to_string()
            };
            let next = skip_ws(b, end);
            if b.get(next) == Some(&b'\'') {
                return None; // adjacent strings concatenate: the full parser's job
            }
            Some((Expr::value(ast::Value::SingleQuotedString(text)), end))
        }
        b'-' => {
            let (e, end) = number(sql, i + 1)?;
            let neg = Expr::UnaryOp {
                op: UnaryOperator::Minus,
                expr: Box::new(e),
            };
            Some((neg, end))
        }
        b'0'..=b'9' => number(sql, i),
        c if is_ident(c) => {
            let mut end = i;
            while end < b.len() && is_ident(b[end]) {
                end += 1;
            }
            let w = &sql[i..end];
            if w.eq_ignore_ascii_case("NULL") {
                Some((Expr::value(ast::Value::Null), end))
            } else if w.eq_ignore_ascii_case("DEFAULT") {
                Some((Expr::Identifier(ast::Ident::new(w)), end))
            } else {
                None
            }
        }
        _ => None,
    }
}

/// A number `digits[.digits]` at `i` not run into a word (`1e5`, `0x1F`, `12abc` are left
/// to the full parser).
fn number(sql: &str, i: usize) -> Option<(Expr, usize)> {
    let b = sql.as_bytes();
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
    let n = ast::Value::Number(sql[i..end].to_string(), false);
    Some((Expr::value(n), end))
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// The fast path for any number of rows.
    fn parse(sql: &str) -> Option<Statement> {
        parse_rows(sql, 1)
    }

    /// The fast path's statement equals sqlparser's for `sql` (spans aside).
    fn same_as_full_parse(sql: &str) {
        let fast = parse(sql).unwrap_or_else(|| panic!("fast path refused {sql}"));
        let full = crate::sql::parse(sql).expect("parses");
        assert_eq!(full.as_slice(), std::slice::from_ref(&fast), "{sql}");
    }

    #[test]
    fn sysbench_prepare_rows_parse_as_sqlparser_parses_them() {
        same_as_full_parse(
            "INSERT INTO sbtest1(k, c, pad) VALUES(4993, '8368-0981', '2287-1'),\
             (5020, '9-1', '4-0'),(5,'a''b','')",
        );
        same_as_full_parse("insert ignore into t values (1,NULL,DEFAULT) , ( -2 , 3.25 , 'x' )");
        same_as_full_parse("REPLACE INTO d.t (a) VALUE (1),(2)");
        same_as_full_parse(
            "INSERT INTO t (a, b) VALUES (1, 2), (3, 4) ON DUPLICATE KEY UPDATE b = VALUES(b) + 1",
        );
        same_as_full_parse("INSERT INTO `values` (`values`) VALUES ('values (1)')");
    }

    #[test]
    fn anything_but_plain_literals_goes_to_the_full_parser() {
        for sql in [
            "INSERT INTO t VALUES (1), (now())",
            "INSERT INTO t VALUES (?, 1)",
            "INSERT INTO t VALUES ('a\\'b')",
            "INSERT INTO t VALUES (\"x\")",
            "INSERT INTO t VALUES (1e5)",
            "INSERT INTO t VALUES (0x1F)",
            "INSERT INTO t VALUES (1 + 2)",
            "INSERT INTO t VALUES ('a' 'b')",
            "INSERT INTO t VALUES ()",
            "INSERT INTO t VALUES (1); SELECT 1",
            "INSERT INTO t /* VALUES (1) */ SELECT 2",
            "INSERT INTO t SELECT * FROM (VALUES ROW(1)) AS x",
            "INSERT INTO t SET a = 1",
            "INSERT INTO t VALUES (1),",
            "SELECT 1",
        ] {
            assert!(parse(sql).is_none(), "{sql}");
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
        assert!(parse("INSERT INTO t VALUES (1, 'a')").is_some());
        let two = "INSERT INTO t VALUES (1, 'a'), (2, 'b')";
        let full = crate::sql::parse(two).expect("parses");
        assert_eq!(
            full,
            vec![parse_several(two).expect("two rows take the fast path")]
        );
    }

    #[test]
    fn a_bad_statement_around_the_rows_is_left_to_the_full_parser() {
        assert!(parse("INSERT INTO VALUES (1)").is_none());
        assert!(parse("INSERT INTO t VALUES (1) garbage here").is_none());
    }

    fn literal_text() -> impl Strategy<Value = String> {
        prop_oneof![
            any::<i64>().prop_map(|n| n.to_string()),
            any::<u64>().prop_map(|n| n.to_string()),
            (0u32..100_000, 0u32..1000).prop_map(|(a, b)| format!("{a}.{b}")),
            "[a-zA-Z0-9 ,()'-]{0,12}".prop_map(|s| format!("'{}'", s.replace('\'', "''"))),
            Just("NULL".to_string()),
            Just("default".to_string()),
        ]
    }

    proptest! {
        #[test]
        fn literal_rows_parse_as_sqlparser_parses_them(
            rows in prop::collection::vec(prop::collection::vec(literal_text(), 3), 1..8),
            spaced in any::<bool>(),
        ) {
            let sep = if spaced { " , " } else { "," };
            let body: Vec<String> = rows.iter().map(|r| format!("({})", r.join(sep))).collect();
            let sql = format!("INSERT INTO t(a, b, c) VALUES{}", body.join(sep));
            same_as_full_parse(&sql);
        }
    }
}
