//! Statement shapes: a copied tree equals the parser's tree for the same text; texts the
//! copy could get wrong are parsed; and a server answers a statement from a copied tree with
//! exactly what it answers when it parses the text (results, errors and warnings).

use proptest::prelude::*;

use super::*;
use crate::context::{testing, Context};
use crate::sql::Output;

fn parse(cache: &ShapeCache, sql: &str) -> Parsed {
    cache
        .parse(sql, || None)
        .unwrap_or_else(|e| panic!("{sql}: {e:?}"))
}

/// Parses `first` then `second` through one cache; the second must equal the plain parse
/// and be a copy exactly when `copied`.
fn check_pair(first: &str, second: &str, copied: bool) {
    let cache = ShapeCache::default();
    let a = parse(&cache, first);
    assert!(!a.copied, "{first}");
    assert_eq!(a.statements, crate::sql::parse(first).unwrap(), "{first}");
    let b = parse(&cache, second);
    assert_eq!(b.copied, copied, "{first} / {second}");
    // Trees compare without their positions: a copy keeps the first text's positions but
    // where planning reads them (labels), which the tests of labels cover.
    assert_eq!(b.statements, crate::sql::parse(second).unwrap(), "{second}");
}

#[test]
fn texts_differing_in_literals_share_a_tree() {
    check_pair(
        "SELECT c_discount, c_last FROM customer1 WHERE c_w_id = 1 AND c_id = 7 FOR UPDATE",
        "SELECT c_discount, c_last FROM customer1 WHERE c_w_id = 12 AND c_id = 3000 FOR UPDATE",
        true,
    );
    check_pair(
        "UPDATE stock1 SET s_quantity = 10, s_ytd = s_ytd + 3 WHERE s_i_id = 5",
        "UPDATE stock1 SET s_quantity = 100, s_ytd = s_ytd + 1 WHERE s_i_id = 99999",
        true,
    );
    check_pair(
        "INSERT INTO t (a, b, c) VALUES (1, 'x', -2.5), (2, 'it''s', 0x1F)",
        "INSERT INTO t (a, b, c) VALUES (1000, 'y\\'z', -0.5e3), (3, '', 0xFF)",
        true,
    );
    check_pair(
        "SELECT a FROM t WHERE b IN (1, 2, 3) AND c LIKE 'a%' LIMIT 10",
        "SELECT a FROM t WHERE b IN (4, 2, 3) AND c LIKE '%' LIMIT 1",
        true,
    );
    // Equal literals in swapped places keep their places.
    check_pair(
        "SELECT a FROM t WHERE b = 1 AND c = 1",
        "SELECT a FROM t WHERE b = 1 AND c = 2",
        true,
    );
}

#[test]
fn a_different_literal_kind_or_word_is_another_shape() {
    check_pair(
        "SELECT a FROM t WHERE b = 1",
        "SELECT a FROM t WHERE b = '1'",
        false,
    );
    check_pair(
        "SELECT a FROM t WHERE b = 1",
        "SELECT a FROM t WHERE c = 1",
        false,
    );
    check_pair(
        "SELECT a FROM t WHERE b = 1",
        "SELECT a FROM t WHERE b = NULL",
        false,
    );
}

#[test]
fn an_operator_space_or_quote_is_another_shape() {
    let first = "SELECT a FROM t WHERE b = 1";
    for second in [
        "SELECT a FROM t WHERE b <= 1",
        "SELECT a FROM t WHERE b  = 1",
        "SELECT a FROM t WHERE `b` = 1",
        "SELECT a FROM t WHERE b = -1",
    ] {
        check_pair(first, second, false);
    }
}

#[test]
fn literals_the_tree_does_not_hold_as_values_are_never_copied() {
    // A string as an alias is a name; a type's length is a number field, not a value.
    check_pair("SELECT a AS 'x' FROM t", "SELECT a AS 'y' FROM t", false);
    check_pair(
        "CREATE TABLE t (a VARCHAR(10))",
        "CREATE TABLE t (a VARCHAR(20))",
        false,
    );
    // Adjacent strings are one value.
    check_pair(
        "SELECT a FROM t WHERE b = 'x' 'y'",
        "SELECT a FROM t WHERE b = 'p' 'q'",
        false,
    );
}

#[test]
fn labels_read_from_the_text_need_every_token_in_place() {
    // Same positions: copied; the label comes from the new text.
    check_pair("SELECT a + 1 FROM t", "SELECT a + 2 FROM t", true);
    check_pair("SELECT 1, 'ab'", "SELECT 7, 'xy'", true);
    // A longer literal moves the text after it: parsed.
    check_pair("SELECT a + 1 FROM t", "SELECT a + 10 FROM t", false);
    check_pair("SELECT 1 + 1", "SELECT 10 + 1", false);
    // Plain columns take their names from the tree: copied whatever the lengths.
    check_pair(
        "SELECT a, t.b FROM t WHERE c = 1",
        "SELECT a, t.b FROM t WHERE c = 100",
        true,
    );
}

#[test]
fn errors_are_the_parsers() {
    let cache = ShapeCache::default();
    for sql in [
        "SELECT FROM",
        "SELECT 'abc",
        "SELECT a FROM t WHERE b = 1; SELECT 2",
    ] {
        let plain = crate::sql::parse(sql).map_err(|e| format!("{e:?}"));
        let cached = cache
            .parse(sql, || None)
            .map(|p| p.statements)
            .map_err(|e| format!("{e:?}"));
        assert_eq!(cached, plain, "{sql}");
    }
    // LOCK IN SHARE MODE takes the plain parse's retry.
    let sql = "SELECT a FROM t WHERE b = 1 LOCK IN SHARE MODE";
    assert_eq!(
        parse(&cache, sql).statements,
        crate::sql::parse(sql).unwrap()
    );
}

#[test]
fn deeply_nested_texts_are_parsed_as_they_come() {
    // Finding the literals of a deep tree and copying it recurse once per level, so only
    // shallow texts keep a shape.
    let sum = |n: usize, last: &str| format!("SELECT {} + {last}", vec!["1"; n - 1].join(" + "));
    check_pair(&sum(MAX_DEPTH, "1"), &sum(MAX_DEPTH, "2"), true);
    check_pair(&sum(MAX_DEPTH + 2, "1"), &sum(MAX_DEPTH + 2, "2"), false);
    let union = |n: usize, last: &str| {
        format!(
            "{} UNION SELECT {last}",
            vec!["SELECT 1"; n].join(" UNION ")
        )
    };
    check_pair(
        &union(MAX_SET_OPERATIONS, "1"),
        &union(MAX_SET_OPERATIONS, "2"),
        true,
    );
    check_pair(
        &union(MAX_SET_OPERATIONS + 1, "1"),
        &union(MAX_SET_OPERATIONS + 1, "2"),
        false,
    );
}

#[test]
fn the_cache_keeps_at_most_its_slots() {
    let cache = ShapeCache::default();
    for i in 0..SLOTS + 10 {
        parse(&cache, &format!("SELECT c{i} FROM t WHERE a = 1"));
    }
    assert_eq!(cache.len(), SLOTS);
    // The most recent shape is still there.
    let last = SLOTS + 9;
    assert!(parse(&cache, &format!("SELECT c{last} FROM t WHERE a = 2")).copied);
}

/// What a statement gave: its output or error, and its warnings.
fn answer(st: &mut Context, sql: &str) -> String {
    let out: Vec<String> = crate::stmt::run_text(st, sql)
        .into_iter()
        .map(|r| match r {
            Ok(Output::Rows(rs)) => format!("{:?} {:?}", rs.columns, rs.rows),
            other => format!("{other:?}"),
        })
        .collect();
    format!("{out:?} {:?}", st.warnings)
}

const SETUP: &[&str] = &[
    "CREATE DATABASE d",
    "USE d",
    "CREATE TABLE t (id INT PRIMARY KEY, n BIGINT, s VARCHAR(8), x DECIMAL(6,2), \
     f DOUBLE, b VARBINARY(8), u TINYINT UNSIGNED)",
    "INSERT INTO t VALUES (1, 10, 'a', 1.5, 0.25, 'b', 1), (2, -3, 'bb', -2.25, 1e10, '', 200)",
];

/// Statement templates; each `#` is a literal.
const TEMPLATES: &[&str] = &[
    "SELECT id, n, s FROM t WHERE id = #",
    "SELECT id, n + #, s FROM t WHERE n > # ORDER BY id",
    "SELECT # , # + #",
    "SELECT id FROM t WHERE s = # OR s LIKE # ORDER BY id LIMIT #",
    "SELECT COUNT(*), SUM(x) FROM t WHERE id IN (#, #, #)",
    "INSERT INTO t (id, n, s, x, f, b, u) VALUES (#, #, #, #, #, #, #)",
    "INSERT IGNORE INTO t (id, s, u) VALUES (#, #, #)",
    "UPDATE t SET n = n + #, s = #, x = # WHERE id = #",
    "UPDATE t SET u = # WHERE id BETWEEN # AND #",
    "DELETE FROM t WHERE id = # AND n < #",
    "SELECT id FROM t WHERE id = # FOR UPDATE",
    "SELECT CONCAT(s, #), x * # FROM t ORDER BY id",
    "SELECT id AS # FROM t",
];

fn literal() -> impl Strategy<Value = String> {
    prop_oneof![
        (-3i64..300).prop_map(|n| n.to_string()),
        any::<i64>().prop_map(|n| n.to_string()),
        Just("18446744073709551616".to_string()),
        (-99999i32..99999, 0u32..100).prop_map(|(a, b)| format!("{a}.{b:02}")),
        (1u32..9, -320i32..320).prop_map(|(m, e)| format!("{m}e{e}")),
        "[a-z'\\\\%_é]{0,10}".prop_map(|s| format!("'{}'", s.replace('\'', "''"))),
        "[a-z]{0,4}".prop_map(|s| format!("\"{s}\"")),
        "[0-9A-F]{0,6}"
            .prop_map(|s| format!("X'{}'", if s.len() % 2 == 1 { format!("0{s}") } else { s })),
        "[0-9a-f]{1,6}".prop_map(|s| format!("0x{s}")),
        Just("NULL".to_string()),
        Just("N'n'".to_string()),
    ]
}

/// A template with its literals filled in.
fn statement() -> impl Strategy<Value = String> {
    (0..TEMPLATES.len(), proptest::collection::vec(literal(), 8)).prop_map(|(t, lits)| {
        let mut out = String::new();
        let mut lits = lits.into_iter();
        for c in TEMPLATES[t].chars() {
            match c {
                '#' => out.push_str(&lits.next().unwrap_or_default()),
                c => out.push(c),
            }
        }
        out
    })
}

/// A session of its own connection, whose shapes keep plans when `plans` says so.
fn context(id: u32, plans: bool) -> Context {
    let core = testing::core();
    let mut st = testing::root(&core);
    st.conn = std::sync::Arc::new(crate::connections::ConnInfo::new(
        id,
        "127.0.0.1".into(),
        -1,
    ));
    let shapes: Box<dyn std::any::Any + Send + Sync> = Box::new(ShapeCache {
        plans,
        ..ShapeCache::default()
    });
    assert!(st.conn.statement_state.set(shapes).is_ok());
    for sql in SETUP {
        let r = crate::stmt::run_text(&mut st, sql);
        assert!(r.iter().all(Result::is_ok), "{sql}: {r:?}");
    }
    st
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    /// Two servers run the same statements; one parses each text anew, the other keeps its
    /// shapes (without plans, so a text of a known shape is answered from a copy of its
    /// tree). Every answer is the same.
    #[test]
    fn copied_trees_answer_as_parsed_ones(stmts in proptest::collection::vec(statement(), 1..24)) {
        let mut cached = context(1, false);
        let mut fresh = context(2, false);
        // Each template once more first, so the cached server has every shape it can keep.
        for sql in stmts.iter().chain(stmts.iter()) {
            let a = answer(&mut cached, sql);
            *cache(&fresh).slots.lock().unwrap() = Slots::default();
            let b = answer(&mut fresh, sql);
            prop_assert_eq!(a, b, "{}", sql);
        }
        // The first template is always kept (its literal or NULL is a value), so its second
        // run was a copy.
        if stmts.iter().any(|s| s.starts_with("SELECT id, n, s FROM t WHERE id = ")) {
            prop_assert!(cache(&cached).copies.load(std::sync::atomic::Ordering::Relaxed) > 0);
        }
    }

    /// The same with plans kept: a text of a known shape may run from its shape's plan with
    /// its literals as parameters. Every answer is still the one a fresh parse gives.
    #[test]
    fn planned_texts_answer_as_parsed_ones(stmts in proptest::collection::vec(statement(), 1..24)) {
        let mut planned = context(1, true);
        let mut fresh = context(2, false);
        for sql in stmts.iter().chain(stmts.iter()).chain(stmts.iter()) {
            let a = answer(&mut planned, sql);
            *cache(&fresh).slots.lock().unwrap() = Slots::default();
            let b = answer(&mut fresh, sql);
            prop_assert_eq!(a, b, "{}", sql);
        }
    }
}

#[test]
fn a_copy_carries_the_digest_its_own_text_has() {
    let digests = |sql: &str| -> Digests { crate::digest::digests_of(sql, 1024).into() };
    let cache = ShapeCache::default();
    let first = "INSERT INTO t (a, b) VALUES (1, 'x') , (-2, NULL)";
    let second = "INSERT INTO t (a, b) VALUES (300, 'yy') , (-4, NULL)";
    let a = cache.parse(first, || Some(digests(first))).unwrap();
    assert_eq!(a.digests.as_deref(), Some(&*digests(first)));
    let b = cache
        .parse(second, || panic!("a copy computes no digest"))
        .unwrap();
    assert!(b.copied);
    assert_eq!(b.digests.as_deref(), Some(&*digests(second)));
}
