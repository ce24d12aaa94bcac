//! Unit tests of the SQL layer against a core built without a server: binding (what the
//! binder itself resolves: variables, functions, literals), evaluation (NULL and
//! three-valued logic, overflow as 1690, warnings) and parsing.

use sqlparser::ast::{SelectItem, SetExpr, Statement};

use crate::context::{testing, Context};
use crate::error::{ErrorCode, SqlError, SqlResult};
use crate::sql::env::StmtEnv;
use crate::sql::eval::eval;
use crate::sql::expr::{Binder, BoundExpr, Resolver};
use crate::value::Value;
use crate::vars::Registry;

/// Columns `a` and `b` of table `t`, at row positions 0 and 1, over the core's variables.
struct TwoColumns<'a> {
    registry: &'a Registry,
}

impl Resolver for TwoColumns<'_> {
    fn column(&self, qualifier: Option<&str>, name: &str) -> SqlResult<usize> {
        let in_t = qualifier.is_none_or(|q| q.eq_ignore_ascii_case("t"));
        match name.to_ascii_lowercase().as_str() {
            "a" if in_t => Ok(0),
            "b" if in_t => Ok(1),
            _ => Err(SqlError::new(
                ErrorCode::BadField,
                format!("Unknown column '{name}' in 'field list'"),
            )),
        }
    }

    fn registry(&self) -> &Registry {
        self.registry
    }
}

/// Binds the single select item of `SELECT <expr>`.
fn bind(st: &Context, expr: &str) -> SqlResult<BoundExpr> {
    let sql = format!("SELECT {expr}");
    let stmts = crate::sql::parse(&sql)?;
    let Some(Statement::Query(q)) = stmts.first() else {
        panic!("{sql} is not a query");
    };
    let SetExpr::Select(s) = q.body.as_ref() else {
        panic!("{sql} is not a plain select");
    };
    let Some(SelectItem::UnnamedExpr(e)) = s.projection.first() else {
        panic!("{sql} has no unnamed expression");
    };
    let cols = TwoColumns {
        registry: &st.core.vars,
    };
    Binder::new(&cols).bind(e)
}

/// Binds and evaluates `expr` with the row `(a, b)`.
fn eval_row(st: &Context, expr: &str, row: &[Value]) -> SqlResult<Value> {
    let e = bind(st, expr)?;
    let env = StmtEnv {
        row,
        ..StmtEnv::new(st, &[])
    };
    eval(&e, &env)
}

fn value(st: &Context, expr: &str) -> Value {
    eval_row(st, expr, &[Value::Int(1), Value::Null])
        .unwrap_or_else(|e| panic!("{expr}: {}", e.message))
}

fn code(r: SqlResult<impl std::fmt::Debug>) -> u16 {
    match r {
        Ok(v) => panic!("expected an error, got {v:?}"),
        Err(SqlError { code, .. }) => code.code(),
    }
}

#[test]
fn names_the_binder_cannot_resolve_fail_with_mysqls_codes() {
    let core = testing::core();
    let st = testing::root(&core);
    // 1193: unknown system variable, in each scope form.
    assert_eq!(code(bind(&st, "@@no_such_variable")), 1193);
    assert_eq!(code(bind(&st, "@@global.no_such_variable")), 1193);
    // 1305: unknown function; 1582: a known one with the wrong number of arguments.
    assert_eq!(code(bind(&st, "no_such_function(1)")), 1305);
    assert_eq!(code(bind(&st, "ABS(1, 2)")), 1582);
    // The resolver's own error comes through unchanged (1054).
    assert_eq!(code(bind(&st, "c + 1")), 1054);
    // Known names bind: a variable, a qualified column, a function.
    assert!(matches!(
        bind(&st, "@@session.autocommit"),
        Ok(BoundExpr::SysVar(..))
    ));
    assert!(matches!(bind(&st, "t.b"), Ok(BoundExpr::Column(1))));
    assert!(bind(&st, "ABS(a)").is_ok());
}

#[test]
fn system_variable_scopes_are_checked_at_evaluation() {
    let core = testing::core();
    let st = testing::root(&core);
    // autocommit is ON in the session; a GLOBAL-only variable read as SESSION is 1238.
    assert_eq!(value(&st, "@@autocommit"), Value::Int(1));
    assert_eq!(code(eval_row(&st, "@@session.max_connections", &[])), 1238);
}

#[test]
fn null_follows_three_valued_logic() {
    let core = testing::core();
    let st = testing::root(&core);
    let null = Value::Null;
    for (expr, want) in [
        ("NULL = NULL", null.clone()),
        ("NULL <=> NULL", Value::Int(1)),
        ("b = 1", null.clone()),
        ("b IS NULL", Value::Int(1)),
        ("NULL AND 0", Value::Int(0)),
        ("NULL AND 1", null.clone()),
        ("NULL OR 1", Value::Int(1)),
        ("NULL OR 0", null.clone()),
        ("NOT NULL", null.clone()),
        ("1 IN (2, NULL)", null.clone()),
        ("1 IN (1, NULL)", Value::Int(1)),
        ("1 NOT IN (2, NULL)", null.clone()),
        ("a + b", null.clone()),
        ("COALESCE(b, a, 7)", Value::Int(1)),
        ("IFNULL(b, 5)", Value::Int(5)),
    ] {
        assert_eq!(value(&st, expr), want, "{expr}");
    }
}

#[test]
fn integer_overflow_is_1690() {
    let core = testing::core();
    let st = testing::root(&core);
    for expr in [
        "9223372036854775807 + 1",
        "-9223372036854775808 - 1",
        "-(-9223372036854775808)",
        "9223372036854775807 * 2",
        "18446744073709551615 + 1",
        "1e308 * 10",
        "CAST(0 AS UNSIGNED) - 1",
        "1 - CAST(2 AS UNSIGNED)",
        "CAST(1 AS UNSIGNED) * -1",
    ] {
        assert_eq!(code(eval_row(&st, expr, &[])), 1690, "{expr}");
    }
    // The edges themselves are values.
    assert_eq!(value(&st, "9223372036854775806 + 1"), Value::Int(i64::MAX));
    assert_eq!(
        value(&st, "18446744073709551614 + 1"),
        Value::UInt(u64::MAX)
    );
    // An UNSIGNED operand makes the result UNSIGNED.
    assert_eq!(value(&st, "CAST(5 AS UNSIGNED) - 1"), Value::UInt(4));
    assert_eq!(value(&st, "-1 + CAST(1 AS UNSIGNED)"), Value::UInt(0));
}

#[test]
fn bit_not_inside_a_product_takes_one_operand_and_the_product_groups_from_the_left() {
    let core = testing::core();
    let st = testing::root(&core);
    // `3 * ~0` overflows before `* 0` is reached.
    for expr in ["3 * ~0 * 0", "1 + 3 * ~0 * 0", "3 * ~1 % 5", "2 * ~0 DIV 2"] {
        assert_eq!(code(eval_row(&st, expr, &[])), 1690, "{expr}");
    }
    // `(6 DIV ~0) * 2`, not `6 DIV (~0 * 2)`, which would overflow.
    let integer = |expr: &str| match value(&st, expr) {
        Value::Int(i) => i128::from(i),
        Value::UInt(u) => i128::from(u),
        other => panic!("{expr}: {other:?}"),
    };
    for expr in ["6 DIV ~0 * 2", "0 * ~0 * 3", "~0 * 0 * 3"] {
        assert_eq!(integer(expr), 0, "{expr}");
    }
    assert_eq!(integer("a * ~0 DIV 2"), i128::from(u64::MAX / 2));
}

#[test]
fn division_by_zero_is_null_with_warning_1365() {
    let core = testing::core();
    let st = testing::root(&core);
    for expr in ["a / 0", "a % 0", "a DIV 0", "1.5 / 0"] {
        assert_eq!(value(&st, expr), Value::Null, "{expr}");
    }
    // The default sql_mode has ERROR_FOR_DIVISION_BY_ZERO: each adds warning 1365.
    let warnings = st.shared_warnings.borrow();
    assert_eq!(warnings.len(), 4, "{warnings:?}");
    assert!(warnings.iter().all(|w| w.code == 1365), "{warnings:?}");
}

#[test]
fn a_result_over_max_allowed_packet_is_null_with_warning_1301() {
    let core = testing::core();
    let st = testing::root(&core);
    // The default max_allowed_packet is 64 MiB.
    assert_eq!(value(&st, "REPEAT('a', 67108865)"), Value::Null);
    assert_eq!(value(&st, "LENGTH(REPEAT('a', 1000))"), Value::Int(1000));
    let warnings = st.shared_warnings.borrow();
    assert_eq!(warnings.len(), 1, "{warnings:?}");
    assert_eq!(warnings[0].code, 1301);
}

#[test]
fn parsing_reports_1064_near_the_error_and_bounds_nesting() {
    assert_eq!(code(crate::sql::parse("SELEC 1")), 1064);
    let e = crate::sql::parse("SELECT 1 FROM WHERE").expect_err("a syntax error");
    assert!(e.message.contains("near 'WHERE"), "{}", e.message);
    let deep = format!("SELECT {}1{}", "(".repeat(5000), ")".repeat(5000));
    assert_eq!(code(crate::sql::parse(&deep)), 1436);
}

#[test]
fn lock_in_share_mode_becomes_for_share() {
    assert_eq!(
        super::rewrite_lock_in_share_mode("SELECT 1 FROM t WHERE a=1 lock in share mode")
            .as_deref(),
        Some("SELECT 1 FROM t WHERE a=1 FOR SHARE")
    );
    assert_eq!(super::rewrite_lock_in_share_mode("SELECT 1"), None);
    assert!(crate::sql::parse("SELECT 1 FROM t LOCK IN SHARE MODE").is_ok());
}

#[test]
fn a_parse_error_shows_a_byte_that_is_not_utf8_as_a_replacement_character() {
    let text = crate::sql::bytes::decode(b"SELEC 'x\xFF'");
    let e = crate::sql::parse(&text).unwrap_err();
    assert!(e.message.contains("'x\u{FFFD}'"), "{}", e.message);
    assert!(!e.message.chars().any(|c| u32::from(c) >= 0x10_FF00));
}

/// The text of each select item as `span_text` labels it.
fn labels(sql: &str) -> Vec<Option<String>> {
    use sqlparser::ast::Spanned;
    let stmts = crate::sql::parse(sql).unwrap();
    let Statement::Query(q) = &stmts[0] else {
        panic!("not a query")
    };
    let SetExpr::Select(s) = q.body.as_ref() else {
        panic!("not a select")
    };
    s.projection
        .iter()
        .map(|item| match item {
            SelectItem::UnnamedExpr(e) => crate::sql::span_text(sql, e.span()).map(str::to_string),
            _ => None,
        })
        .collect()
}

#[test]
fn labels_cover_keyword_calls_and_interval_units() {
    let got = labels(
        "SELECT SUBSTRING(c,1,20), éé(SUBSTRING(c FROM 2)), d - INTERVAL 1 DAY, \
         INTERVAL 2 MONTH + d, DATE_ADD(d, INTERVAL 3 HOUR), CONCAT(')', 'é')",
    );
    let want = [
        "SUBSTRING(c,1,20)",
        "éé(SUBSTRING(c FROM 2))",
        "d - INTERVAL 1 DAY",
        "INTERVAL 2 MONTH + d",
        "DATE_ADD(d, INTERVAL 3 HOUR)",
        "CONCAT(')', 'é')",
    ];
    for (g, w) in got.iter().zip(want) {
        // A label the spans cannot give falls back to the expression's own text.
        if let Some(g) = g {
            assert_eq!(g, w);
        }
    }
    assert_eq!(got[0].as_deref(), Some("SUBSTRING(c,1,20)"));
    assert_eq!(got[2].as_deref(), Some("d - INTERVAL 1 DAY"));
}

#[test]
fn large_results_are_built_exactly_and_refused_past_the_memory_limit() {
    let core = testing::core();
    let st = testing::root(&core);
    // REPEAT copies what it has already written, in steps of at most 1 MiB: the pattern
    // holds across the steps and the last, partial one.
    let Value::Bytes(r) = value(&st, "REPEAT('abc', 1000003)") else {
        panic!("REPEAT gives a string");
    };
    assert!(r == b"abc".repeat(1_000_003), "REPEAT('abc', 1000003)");
    let Value::Bytes(h) = value(&st, "HEX(REPEAT('z', 700000))") else {
        panic!("HEX gives a string");
    };
    assert!(h == b"7A".repeat(700_000), "HEX in slices");
    let Value::Bytes(c) = value(&st, "CONCAT(REPEAT('a', 1500000), 'b', REPEAT('c', 3))") else {
        panic!("CONCAT gives a string");
    };
    assert!(
        c == [&b"a".repeat(1_500_000)[..], b"bccc"].concat(),
        "CONCAT"
    );
    assert_eq!(
        value(&st, "CONCAT_WS('-', 'a', NULL, 'b')"),
        Value::Bytes(b"a-b".to_vec())
    );
    // With a limit of one byte (and no counting allocator in unit tests: nothing in use),
    // values of 1 MiB or more are refused with 1037, smaller ones are built.
    core.memory.set_max_memory(1);
    for expr in [
        "REPEAT('a', 2000000)",
        "CONCAT(REPEAT('a', 1000000), REPEAT('b', 1000000))",
        "CONCAT_WS(',', REPEAT('a', 1000000), REPEAT('b', 1000000))",
        "HEX(REPEAT('a', 1000000))",
    ] {
        let e = eval_row(&st, expr, &[]).expect_err(expr);
        assert_eq!(e.code, ErrorCode::OutOfMemory, "{expr}");
    }
    assert_eq!(value(&st, "LENGTH(REPEAT('a', 1000))"), Value::Int(1000));
    core.memory.set_max_memory(0);
    assert_eq!(
        value(&st, "LENGTH(REPEAT('a', 2000000))"),
        Value::Int(2_000_000)
    );
}

#[test]
fn and_or_chains_are_one_node_with_three_valued_logic_and_short_circuits() {
    let core = testing::core();
    let st = testing::root(&core);
    let (t, f, n) = (Value::Int(1), Value::Int(0), Value::Null);
    // Fails with 1690 when evaluated, so a short-circuit shows as a value.
    let boom = "9223372036854775807 + 1";
    for (expr, want) in [
        ("0 OR 0 OR 0".to_string(), f.clone()),
        ("0 OR b OR 0".to_string(), n.clone()),
        ("b OR 0 OR a".to_string(), t.clone()),
        ("1 AND 1 AND a".to_string(), t.clone()),
        ("1 AND b AND 1".to_string(), n.clone()),
        ("b AND 0 AND b".to_string(), f.clone()),
        (format!("0 OR 1 OR {boom}"), t.clone()),
        (format!("b OR a OR {boom} OR {boom}"), t.clone()),
        (format!("1 AND 0 AND {boom}"), f.clone()),
        (format!("b AND 0 AND {boom}"), f),
        // Brackets do not change the result.
        ("(0 OR b) OR (0 OR 0)".to_string(), n),
        ("(1 AND (a AND 1)) AND 1".to_string(), t),
    ] {
        assert_eq!(value(&st, &expr), want, "{expr}");
    }
    // Left to right: an operand before the one that decides is evaluated.
    for expr in [
        format!("0 OR {boom} OR 1"),
        format!("b OR {boom} OR 1"),
        format!("1 AND b AND {boom} AND 0"),
    ] {
        assert_eq!(
            code(eval_row(&st, &expr, &[Value::Int(1), Value::Null])),
            1690
        );
    }
}

#[test]
fn a_5000_operand_chain_binds_flat_in_written_order() {
    let core = testing::core();
    let st = testing::root(&core);
    let ors: Vec<String> = (0..5_000).map(|i| format!("a = {i}")).collect();
    let ors = ors.join(" OR ");
    match bind(&st, &ors) {
        Ok(BoundExpr::Or(operands)) => assert_eq!(operands.len(), 5_000),
        other => panic!("{other:?}"),
    }
    let row = |a: i64| [Value::Int(a), Value::Null];
    assert_eq!(eval_row(&st, &ors, &row(4_999)).unwrap(), Value::Int(1));
    assert_eq!(eval_row(&st, &ors, &row(5_000)).unwrap(), Value::Int(0));
    let ands: Vec<String> = (0..5_000).map(|i| format!("a <> {i}")).collect();
    let ands = ands.join(" AND ");
    assert_eq!(eval_row(&st, &ands, &row(-1)).unwrap(), Value::Int(1));
    assert_eq!(eval_row(&st, &ands, &row(2_500)).unwrap(), Value::Int(0));
    let with_null = format!("{ands} AND b IS NULL AND b");
    assert_eq!(eval_row(&st, &with_null, &row(-1)).unwrap(), Value::Null);
    // `?` are numbered as written, whatever grouping the parse took.
    let params = vec!["a = ?"; 1_000].join(" OR ");
    let Ok(BoundExpr::Or(operands)) = bind(&st, &params) else {
        panic!("{params} is not an OR");
    };
    for (i, x) in operands.iter().enumerate() {
        assert!(
            matches!(x, BoundExpr::Binary(_, _, p) if **p == BoundExpr::Param(i)),
            "{i}: {x:?}"
        );
    }
}

/// The statements that nest as deep as parsing admits, one per form, with their value: the
/// operator chains as long as [`crate::sql::depth::MAX_DEPTH`] allows, and the bracketed
/// forms near the parser's own recursion limit.
fn deepest_statements() -> Vec<(String, Value)> {
    let depth = crate::sql::depth::MAX_DEPTH;
    let chain = |op: &str, n: usize| vec!["1"; n].join(op);
    let int = Value::Int;
    vec![
        (format!("SELECT {}", chain("+", depth)), int(depth as i64)),
        (format!("SELECT {}", chain("*", depth)), int(1)),
        (format!("SELECT {}", chain("=", depth)), int(1)),
        (format!("SELECT {}", chain(" XOR ", depth)), int(0)),
        (format!("SELECT 1{}", " IS NULL".repeat(depth - 1)), int(0)),
        (format!("SELECT 1{}", " LIKE 1".repeat(depth - 1)), int(1)),
        (
            format!("SELECT 1{}", " IN (1)".repeat(depth / 2 - 1)),
            int(1),
        ),
        (
            format!("SELECT 1{}", " BETWEEN 0 AND 2".repeat(depth / 2 - 1)),
            int(1),
        ),
        (format!("SELECT 1{}", "::SIGNED".repeat(depth - 1)), int(1)),
        (
            format!("SELECT id FROM t WHERE {} = id", chain("*", depth - 1)),
            int(1),
        ),
        (
            format!("SELECT {}1{}", "ABS(".repeat(40), ")".repeat(40)),
            int(1),
        ),
        (
            format!("SELECT {}1{}", "(".repeat(40), ")".repeat(40)),
            int(1),
        ),
        (format!("SELECT {}1", "- ".repeat(40)), int(1)),
    ]
}

#[test]
fn the_deepest_admitted_statements_run_in_half_a_connection_thread_stack() {
    // Each level of such a tree is bound, evaluated, labelled, copied and dropped by code
    // that recurses once per level; in half of a connection thread's stack the runtime check
    // would answer 1436 to any of them that needed more.
    let run = || {
        let core = testing::core();
        let mut st = testing::root(&core);
        for sql in [
            "CREATE DATABASE d",
            "USE d",
            "CREATE TABLE t (id INT PRIMARY KEY)",
            "INSERT INTO t VALUES (1), (2)",
        ] {
            let r = crate::stmt::run_text(&mut st, sql);
            assert!(r.iter().all(Result::is_ok), "{sql}: {r:?}");
        }
        let first = |out: SqlResult<crate::sql::Output>| match out {
            Ok(crate::sql::Output::Rows(rs)) => rs.rows.first().and_then(|r| r.first()).cloned(),
            other => panic!("{other:?}"),
        };
        for (sql, want) in deepest_statements() {
            let head = &sql[..sql.len().min(40)];
            // Parsed, then (if its shape is kept) copied, then prepared and executed.
            for _ in 0..2 {
                let mut out = crate::stmt::run_text(&mut st, &sql);
                assert_eq!(out.len(), 1, "{head}");
                assert_eq!(first(out.remove(0)), Some(want.clone()), "{head}");
            }
            let p = crate::stmt::prepare(&st, &sql).unwrap_or_else(|e| panic!("{head}: {e:?}"));
            let out = crate::stmt::execute(&mut st, &p, &[]);
            assert_eq!(first(out), Some(want), "{head}");
        }
    };
    std::thread::Builder::new()
        .stack_size(pool_core::SESSION_THREAD_STACK / 2)
        .spawn(run)
        .unwrap()
        .join()
        .unwrap();
}

#[test]
fn a_deep_parse_moves_to_heap_allocated_stack_segments() {
    // sqlparser's recursion protection moves a deep parse to heap-allocated stack segments,
    // so the bracketed forms at its recursion limit (megabytes of stack unoptimised) parse
    // on a thread with 512 KiB.
    let sql = format!("SELECT {}1{}", "ABS(".repeat(40), ")".repeat(40));
    let parsed = std::thread::Builder::new()
        .stack_size(512 << 10)
        .spawn(move || crate::sql::parse(&sql).map(|s| s.len()))
        .unwrap()
        .join()
        .unwrap();
    assert_eq!(parsed.ok(), Some(1));
}
