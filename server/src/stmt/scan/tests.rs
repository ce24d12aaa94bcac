//! The scanner against sqlparser's MySQL tokenizer: whenever it scans a text, its key is the
//! shape cache's key of the tokenizer's tokens and its literals are the tokenizer's literal
//! tokens, valued as the parser values them and at their spans.

use proptest::prelude::*;
use sqlparser::ast::Value;
use sqlparser::dialect::MySqlDialect;
use sqlparser::tokenizer::{Span, TokenWithSpan, Tokenizer};

use super::*;

use crate::stmt::shapes::{is_literal, literal_value};

/// The shape cache's key of `tokens`.
fn key_of(tokens: &[TokenWithSpan]) -> Vec<u8> {
    crate::stmt::shapes::key_of(tokens).0
}

fn tokens(sql: &str) -> Option<Vec<TokenWithSpan>> {
    Tokenizer::new(&MySqlDialect {}, sql)
        .tokenize_with_location()
        .ok()
}

/// Scans `sql` and, when it scans, checks the result against sqlparser's tokens.
fn check(sql: &str) -> Option<Scanned> {
    let got = scan(sql)?;
    let Some(tokens) = tokens(sql) else {
        panic!("{sql:?} scans, but sqlparser's tokenizer refuses it");
    };
    assert_eq!(got.key, key_of(&tokens), "key of {sql:?}: {tokens:?}");
    let want: Vec<(Value, Span)> = tokens
        .iter()
        .filter(|t| is_literal(&t.token))
        .map(|t| (literal_value(&t.token), t.span))
        .collect();
    let have: Vec<(Value, Span)> = got
        .literals
        .iter()
        .map(|l| (l.value.clone(), l.span))
        .collect();
    assert_eq!(have, want, "literals of {sql:?}");
    Some(got)
}

fn number(n: &str) -> Value {
    Value::Number(n.to_owned(), false)
}

fn string(s: &str) -> Value {
    Value::SingleQuotedString(s.to_owned())
}

/// The literal values of `sql` (which must scan).
fn values(sql: &str) -> Vec<Value> {
    check(sql)
        .unwrap_or_else(|| panic!("{sql:?} does not scan"))
        .literals
        .into_iter()
        .map(|l| l.value)
        .collect()
}

const TPCC: &[&str] = &[
    "SELECT c_discount, c_last, c_credit, w_tax FROM customer1, warehouse1 WHERE w_id = 1 AND c_w_id = w_id AND c_d_id = 3 AND c_id = 1234",
    "UPDATE district1 SET d_next_o_id = d_next_o_id + 1 WHERE d_w_id = 1 AND d_id = 7",
    "SELECT s_quantity, s_data, s_dist_01 s_dist FROM stock1 WHERE s_i_id = 5521 AND s_w_id = 1 FOR UPDATE",
    "INSERT INTO order_line1 (ol_o_id, ol_d_id, ol_w_id, ol_number, ol_i_id, ol_supply_w_id, ol_quantity, ol_amount, ol_dist_info) VALUES (3001,7,1,1,5521,1,5,321.55,'abcdefghijabcdefghijabcd')",
    "SELECT c FROM sbtest1 WHERE id=5012",
    "SELECT d_next_o_id, d_tax FROM district1 WHERE d_w_id = 1 AND d_id = 7 FOR UPDATE",
    "INSERT INTO orders1 (o_id, o_d_id, o_w_id, o_c_id, o_entry_d, o_ol_cnt, o_all_local) VALUES(3001, 7, 1, 1234, '2026-12-06 20:58:00', 11, 1)",
    "SELECT count(c_id) FROM customer1 WHERE c_w_id = 1 AND c_d_id = 3 AND c_last = 'BARBARBAR'",
    "UPDATE customer1 SET c_balance = c_balance - 12.50, c_ytd_payment = c_ytd_payment + 12.50 WHERE c_w_id = ? AND c_id = ?",
    "DELETE FROM new_orders1 WHERE no_o_id = 2101 AND no_d_id = 4 AND no_w_id = 1",
    "SELECT `c`, `weird name` FROM `sbtest1` WHERE `id` BETWEEN 10 AND 110 ORDER BY c",
    "UPDATE t SET a = NULL, b = TRUE, c = FALSE WHERE d IS NOT NULL AND e <> 3 AND f != -4",
];

#[test]
fn oltp_statements_scan_as_sqlparser_tokenises_them() {
    for sql in TPCC {
        assert!(check(sql).is_some(), "{sql}");
    }
    assert_eq!(
        values(TPCC[3]),
        ["3001", "7", "1", "1", "5521", "1", "5", "321.55"]
            .map(number)
            .into_iter()
            .chain([string("abcdefghijabcdefghijabcd")])
            .collect::<Vec<_>>()
    );
    assert_eq!(values(TPCC[4]), [number("5012")]);
}

#[test]
fn null_true_false_and_placeholders_are_key_tokens() {
    // Not literals: they stay in the key, so texts differing in them have different keys.
    assert_eq!(values("SELECT NULL, TRUE, FALSE, ?, ?12"), []);
    let key = |s: &str| check(s).map(|s| s.key);
    assert_ne!(key("SELECT NULL"), key("SELECT TRUE"));
    assert_ne!(key("SELECT ?1"), key("SELECT ?2"));
    assert_eq!(key("SELECT 1"), key("SELECT 2"));
    assert_eq!(key("SELECT 'a'"), key("SELECT 'bcd'"));
    assert_ne!(key("SELECT 1"), key("SELECT '1'"));
    assert_ne!(key("SELECT 1"), key("SELECT  1"));
}

#[test]
fn digits_and_periods_split_as_in_mysql() {
    // Words that start with digits.
    assert_eq!(values("SELECT 1a, 12abc, 1$, 1.5a, .5a, 1.x FROM t1"), []);
    assert_eq!(values("SELECT t1.c1 FROM t1"), []);
    // Numbers, with exponents and their stops.
    assert_eq!(values("SELECT 1e5"), [number("1e5")]);
    assert_eq!(
        values("SELECT 1E+5, 2e-3"),
        [number("1E+5"), number("2e-3")]
    );
    assert_eq!(
        values("SELECT 1.5, .5, 5., 1.e3"),
        ["1.5", ".5", "5.", "1.e3"].map(number)
    );
    assert_eq!(values("SELECT 1ea"), [number("1")]); // then the word `ea`
    assert_eq!(values("SELECT 1e+a"), [number("1")]);
    assert_eq!(values("SELECT 1e5a"), [number("1e5")]);
    assert_eq!(values("SELECT 1e5L"), [Value::Number("1e5".into(), true)]);
    assert_eq!(values("SELECT 1L"), []); // a word
                                         // A period right after a word qualifies it.
    assert_eq!(values("SELECT a.1"), [number("1")]);
    assert_eq!(values("SELECT a .5"), [number(".5")]);
    assert_eq!(values("SELECT a.5.6"), [number("5.6")]);
    assert_eq!(values("SELECT a.1e5"), []); // the column `1e5`
    assert_eq!(values("SELECT `a`.5"), [number("5")]);
    assert_eq!(values("SELECT t._c"), []);
    assert_eq!(values("SELECT 1..2"), [number("1."), number(".2")]);
    assert_eq!(values("SELECT (1).5"), [number("1"), number(".5")]);
    assert!(check("SELECT 0x1F").is_none());
    assert_eq!(values("SELECT 0X1F"), []); // a word
                                           // `._` after a word (even across whitespace) is a period; elsewhere sqlparser refuses it.
    assert_eq!(values("SELECT t ._c"), []);
    assert!(check("SELECT (._c)").is_none());
}

#[test]
fn minus_signs_and_operators_split_as_in_mysql() {
    assert_eq!(values("SELECT x-1"), [number("1")]);
    assert_eq!(values("SELECT --1"), [number("1")]);
    assert_eq!(values("SELECT 1--1"), [number("1"), number("1")]);
    assert!(check("SELECT 1 -- comment").is_none());
    assert!(check("SELECT 1 --\tcomment").is_none());
    for sql in [
        "SELECT a<=>b, a<=b, a>=b, a<>b, a!=b, a<b, a>b, a=b, a==b, a<<b, a>>b",
        "SELECT a->'$.x', a->>'$.y', a-->b, a=>b, x:=1",
        "SELECT a||b, a|b, a&&b, a&b, a^b, ~a, a~*b, !a, !!a, a%b, a/b, a*b, a<@b, a^@b",
        "SELECT a::b, a:b; SELECT [1], {2}, \\",
        "SELECT a<=-1, a<+1, a<-1, a|>b",
    ] {
        assert!(check(sql).is_some(), "{sql}");
    }
}

#[test]
fn words_and_quoted_words() {
    assert_eq!(values("SELECT $a, a$b, a@b, _x FROM `we ird`x"), []);
    assert_eq!(
        values("SELECT `` FROM `a b`.`c\nd` WHERE x = 1"),
        [number("1")]
    );
    // Spans count lines and characters.
    let s = check("SELECT `é\nü` ,\n  'ça\nva'  , 7").expect("scans");
    assert_eq!(s.literals.len(), 2);
    let span = |l: &ValueWithSpan| {
        (
            (l.span.start.line, l.span.start.column),
            (l.span.end.line, l.span.end.column),
        )
    };
    assert_eq!(span(&s.literals[0]), ((3, 3), (4, 4)));
    assert_eq!(span(&s.literals[1]), ((4, 8), (4, 9)));
}

#[test]
fn what_the_scanner_leaves_to_sqlparser() {
    for sql in [
        "SELECT 1 /* c */",
        "SELECT 1 # c",
        "SELECT 1 #c",
        "SELECT \"a\"",
        "SELECT 'it''s'",
        "SELECT 'a\\nb'",
        "SELECT N'a'",
        "SELECT n'a'",
        "SELECT x'1f'",
        "SELECT X'1F'",
        "SELECT b'01'",
        "SELECT _utf8mb4'a'",
        "SELECT @v",
        "SELECT @@autocommit",
        "SELECT é",
        "SELECT a\u{a0}b",
        "SELECT 'unterminated",
        "SELECT `unterminated",
        "SELECT `a``b`",
        "SELECT 1é",
        "SELECT ?١",
        "SELECT a|/b",
        "SELECT a||/b",
        "SELECT a!~b",
        "SELECT 1\u{1}",
    ] {
        assert!(check(sql).is_none(), "{sql:?}");
    }
    // Still refused after a period.
    assert!(check("SELECT t.x'1f'").is_none());
}

#[test]
fn whitespace_kinds_are_in_the_key() {
    for sql in [
        "SELECT\t1",
        "SELECT\n1",
        "SELECT\r\n1",
        "SELECT\r1",
        "SELECT\x0b1",
        "SELECT\x0c1",
    ] {
        assert!(check(sql).is_some(), "{sql:?}");
    }
    assert_ne!(
        check("SELECT\t1").map(|s| s.key),
        check("SELECT 1").map(|s| s.key)
    );
    assert_eq!(
        check("SELECT\r\n1").map(|s| s.key),
        check("SELECT\n1").map(|s| s.key)
    );
}

/// Pieces of OLTP-ish texts, tricky ones included.
fn piece() -> impl Strategy<Value = String> {
    let fixed = prop::sample::select(vec![
        "SELECT", "FROM", "WHERE", "AND", "UPDATE", "SET", "INSERT", "INTO", "VALUES", "DELETE",
        "NULL", "TRUE", "FALSE", "FOR", "LIMIT", "(", ")", ",", ".", "=", "<", ">", "<=", ">=",
        "<>", "!=", "<=>", "+", "-", "*", "/", "%", "?", "?1", ":=", ":", "::", ";", "||", "|",
        "&&", "&", "^", "~", "!", "->", "->>", "--", "-- x", "#", "@", "@@", "$", "\"d\"", "/*c*/",
        "\\", "[", "]", "{", "}", "=>", "==", "<<", ">>", "é", "_", "N", "x", "b", "0x", "L", "e",
        "E", "e5", "E-", "0",
    ])
    .prop_map(str::to_owned);
    prop_oneof![
        6 => fixed,
        3 => "[a-zA-Z_$][a-zA-Z0-9_$]{0,5}",
        1 => "[0-9][a-zA-Z0-9_]{0,3}",
        4 => "[0-9]{1,4}(\\.[0-9]{0,3})?([eE][+-]?[0-9]{0,2})?L?",
        1 => "\\.[0-9]{0,3}([eE][0-9]{0,2})?",
        2 => "'[a-z0-9 ,.\n\u{e9}\u{4e2d}]{0,6}'",
        1 => "'[a-z'\\\\]{0,3}'?",
        1 => "`[a-z0-9 .\u{e9}`]{0,4}`?",
        1 => "[NnXxBb_][a-z0-9]{0,2}'[0-9a-f]{0,2}'",
    ]
}

fn separator() -> impl Strategy<Value = String> {
    prop_oneof![
        3 => Just(String::new()),
        5 => Just(" ".to_owned()),
        1 => "[ \t\n\r\u{b}\u{c}]{1,3}",
    ]
}

fn text() -> impl Strategy<Value = String> {
    prop::collection::vec((piece(), separator()), 0..16)
        .prop_map(|parts| parts.into_iter().flat_map(|(p, s)| [p, s]).collect())
}

/// Everyday pieces that the scanner must handle.
fn plain_piece() -> impl Strategy<Value = String> {
    let fixed = prop::sample::select(vec![
        "SELECT", "FROM", "WHERE", "AND", "OR", "UPDATE", "SET", "INSERT", "INTO", "VALUES",
        "NULL", "TRUE", "FALSE", "FOR", "UPDATE", "IN", "(", ")", ",", "=", "<", ">", "<=", ">=",
        "<>", "!=", "+", "-", "*", "/", "?",
    ])
    .prop_map(str::to_owned);
    prop_oneof![
        5 => fixed,
        4 => "[a-z_][a-z0-9_]{0,8}(\\.[a-z_][a-z0-9_]{0,8})?",
        1 => "`[a-z0-9 ]{1,8}`",
        3 => "-?[0-9]{1,6}(\\.[0-9]{1,3})?",
        2 => "'[a-zA-Z0-9 :,.-]{0,12}'",
    ]
}

/// The generated texts are not mostly refused (else the property below would hold vacuously).
#[test]
fn most_generated_texts_scan() {
    use proptest::strategy::ValueTree;
    let mut runner = proptest::test_runner::TestRunner::deterministic();
    let strategy = text();
    let (mut scanned, mut with_literals) = (0, 0);
    for _ in 0..1000 {
        let sql = strategy.new_tree(&mut runner).expect("a text").current();
        if let Some(s) = check(&sql) {
            scanned += 1;
            with_literals += usize::from(!s.literals.is_empty());
        }
    }
    assert!(
        scanned >= 250 && with_literals >= 100,
        "{scanned} {with_literals}"
    );
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 2000, ..ProptestConfig::default() })]

    #[test]
    fn scanned_texts_match_sqlparser(sql in text()) {
        check(&sql);
    }

    #[test]
    fn arbitrary_texts_never_panic_and_match_when_scanned(sql in any::<String>()) {
        check(&sql);
    }

    #[test]
    fn ascii_soup_never_panics_and_matches_when_scanned(
        sql in "[-+*/%=<>!|&^~:;.,()\\[\\]{}?@#$`'\"\\\\0-9eExXLaN_ \t\n\r]{0,24}"
    ) {
        check(&sql);
    }

    #[test]
    fn everyday_texts_scan(parts in prop::collection::vec(plain_piece(), 1..24)) {
        let sql = parts.join(" ");
        prop_assert!(check(&sql).is_some(), "{:?} does not scan", sql);
    }

    /// Two texts of one template with different literal values: equal keys, and sqlparser's
    /// tokens agree at every non-literal position and hold literals of one kind at the same
    /// positions, valued and placed as the scanner says.
    #[test]
    fn equal_keys_mean_equal_tokens_but_literals(
        template in prop::collection::vec((plain_piece(), any::<bool>()), 1..16),
        numbers in prop::collection::vec("[0-9]{1,6}(\\.[0-9]{1,3})?", 16),
        strings in prop::collection::vec("[a-zA-Z0-9 ]{0,10}", 16),
    ) {
        // Each slot is a number or a string literal (by the flag), the rest is fixed.
        let render = |alt: bool| {
            let mut out = Vec::new();
            for (i, (p, literal)) in template.iter().enumerate() {
                out.push(match (literal, i % 2 == 0) {
                    (false, _) => p.clone(),
                    (true, true) if alt => numbers[i].clone(),
                    (true, true) => "1".to_owned(),
                    (true, false) if alt => format!("'{}'", strings[i]),
                    (true, false) => "'x'".to_owned(),
                });
            }
            out.join(" ")
        };
        let (a, b) = (render(false), render(true));
        let (sa, sb) = (check(&a).expect("scans"), check(&b).expect("scans"));
        prop_assert_eq!(&sa.key, &sb.key);
        let (ta, tb) = (tokens(&a).expect("tokenises"), tokens(&b).expect("tokenises"));
        prop_assert_eq!(ta.len(), tb.len());
        let mut literal = 0;
        for (x, y) in ta.iter().zip(&tb) {
            if is_literal(&x.token) {
                prop_assert_eq!(std::mem::discriminant(&x.token), std::mem::discriminant(&y.token));
                prop_assert_eq!(&sb.literals[literal].value, &literal_value(&y.token));
                prop_assert_eq!(sb.literals[literal].span, y.span);
                literal += 1;
            } else {
                prop_assert_eq!(&x.token, &y.token);
            }
        }
        prop_assert_eq!(literal, sb.literals.len());
    }
}
