//! A statement of any size or shape gets a result or MySQL's error, never a dropped
//! connection, in every connection-handling mode: more than 61 tables in a join get 1116 (by
//! text and by prepare), and generated deep and wide statements (joins, FROM lists, nested
//! brackets, subqueries, CASE arms, operator chains) leave the server serving.

use proptest::prelude::*;
use proptest::test_runner::TestRunner;
use tpbed_tests::each_mode;

use mysql::prelude::*;

/// The MySQL error code of a `mysql` crate result (panics on success).
fn code<T: std::fmt::Debug>(r: mysql::Result<T>) -> u16 {
    match r {
        Err(mysql::Error::MySqlError(e)) => e.code,
        other => panic!("expected a server error, got {other:?}"),
    }
}

/// `t a0 SEP t a1 SEP ...` with `n` tables.
fn table_list(n: usize, sep: &str) -> String {
    (0..n)
        .map(|i| format!("t a{i}"))
        .collect::<Vec<_>>()
        .join(sep)
}

each_mode! {
    fn joins_past_61_tables_get_1116_and_the_server_keeps_serving(mode) {
        let srv = mode.start(&[]);
        let mut c = srv.connect();
        c.query_drop("CREATE DATABASE w").unwrap();
        c.query_drop("USE w").unwrap();
        c.query_drop("CREATE TABLE t (id INT PRIMARY KEY)").unwrap();
        c.query_drop("INSERT INTO t VALUES (1)").unwrap();
        // The two statements that used to overflow the connection thread's stack, and the
        // same shapes at MySQL's limit plus one.
        let aborting = [
            format!("SELECT 1 FROM x{}", " JOIN x".repeat(940)),
            format!("SELECT 1 FROM {}", table_list(4_670, ", ")),
            format!("INSERT INTO t SELECT 2 FROM {}", table_list(4_670, ", ")),
            format!("SELECT 1 FROM {}", table_list(62, ", ")),
            format!("SELECT 1 FROM {}", table_list(62, " JOIN ")),
            format!("UPDATE {} SET a0.id = 3", table_list(62, ", ")),
        ];
        for sql in &aborting {
            assert_eq!(code(c.query_drop(sql)), 1116, "{}", &sql[..40]);
            assert_eq!(code(c.prep(sql)), 1116, "prepared: {}", &sql[..40]);
        }
        // At the limit a comma join runs.
        let n: i64 = c
            .query_first(format!("SELECT COUNT(*) FROM {}", table_list(61, ", ")))
            .unwrap()
            .unwrap();
        assert_eq!(n, 1);
        // An unaliased item's column name is its text cut at 256 characters, as in MySQL.
        for sql in [
            format!("SELECT LENGTH('{}')", "a".repeat(300_000)),
            format!("SELECT LENGTH('{}') FROM t", "é".repeat(1_000)),
        ] {
            let result = c.query_iter(&sql).unwrap();
            let columns = result.columns();
            let name = columns.as_ref()[0].name_str();
            assert_eq!(name.chars().count(), 256, "{}", &sql[..20]);
            assert!(sql["SELECT ".len()..].starts_with(name.as_ref()), "{name}");
            drop(result);
        }
        // Another connection was never disturbed, and the rows are as they were.
        let mut other = srv.connect();
        let rows: Vec<i64> = other.query("SELECT id FROM w.t").unwrap();
        assert_eq!(rows, vec![1]);
    }
}

/// One generated statement shape and its size.
#[derive(Debug, Clone)]
enum Shape {
    /// `x JOIN x JOIN ...` without ON (sqlparser nests each in the one before).
    BareJoins(usize),
    /// `t a0 JOIN t a1 ON ... JOIN ...`.
    OnJoins(usize),
    /// `FROM t a0, t a1, ...`.
    FromList(usize),
    /// `SELECT ((((1))))`.
    Brackets(usize),
    /// `SELECT (SELECT (SELECT ... 1))`.
    ScalarSubqueries(usize),
    /// `SELECT * FROM (SELECT * FROM (... t) d) d`.
    DerivedTables(usize),
    /// `CASE WHEN .. THEN .. WHEN ..` with many arms.
    CaseArms(usize),
    /// `CASE WHEN 1 THEN CASE WHEN 1 THEN ... END END`.
    NestedCase(usize),
    /// `1 op 1 op 1 ...`.
    Chain(usize, &'static str),
}

impl Shape {
    fn sql(&self) -> String {
        match *self {
            Shape::BareJoins(n) => format!("SELECT 1 FROM t{}", " JOIN t".repeat(n)),
            Shape::OnJoins(n) => {
                let joins: String = (1..=n)
                    .map(|i| format!(" JOIN t a{i} ON a{i}.id = a0.id"))
                    .collect();
                format!("SELECT COUNT(*) FROM t a0{joins}")
            }
            Shape::FromList(n) => format!("SELECT COUNT(*) FROM {}", table_list(n, ", ")),
            Shape::Brackets(n) => format!("SELECT {}1{}", "(".repeat(n), ")".repeat(n)),
            Shape::ScalarSubqueries(n) => {
                format!("SELECT {}1{}", "(SELECT ".repeat(n), ")".repeat(n))
            }
            Shape::DerivedTables(n) => format!(
                "SELECT * FROM {}t{}",
                "(SELECT * FROM ".repeat(n),
                ") d".repeat(n)
            ),
            Shape::CaseArms(n) => {
                let arms: String = (0..n).map(|i| format!(" WHEN {i} THEN {i}")).collect();
                format!("SELECT CASE id{arms} ELSE -1 END FROM t")
            }
            Shape::NestedCase(n) => format!(
                "SELECT {}1{}",
                "CASE WHEN 1 THEN ".repeat(n),
                " END".repeat(n)
            ),
            Shape::Chain(n, op) => format!("SELECT {}", vec!["id"; n.max(1)].join(op)),
        }
    }
}

fn shape() -> impl Strategy<Value = Shape> {
    // Sizes around the bounds (61 tables, sqlparser's recursion limit, 512 levels) and far
    // past them.
    let size = prop_oneof![1..80usize, 80..700usize, 700..6_000usize];
    let op = prop_oneof![
        Just(" + "),
        Just(" OR "),
        Just(" AND "),
        Just(" * "),
        Just(" IS NULL = "),
        Just(" || "),
    ];
    prop_oneof![
        size.clone().prop_map(Shape::BareJoins),
        size.clone().prop_map(Shape::OnJoins),
        size.clone().prop_map(Shape::FromList),
        size.clone().prop_map(Shape::Brackets),
        size.clone().prop_map(Shape::ScalarSubqueries),
        size.clone().prop_map(Shape::DerivedTables),
        size.clone().prop_map(Shape::CaseArms),
        size.clone().prop_map(Shape::NestedCase),
        (size, op).prop_map(|(n, op)| Shape::Chain(n, op)),
    ]
}

each_mode! {
    fn generated_deep_and_wide_statements_get_results_or_errors(mode) {
        let srv = mode.start(&[]);
        let mut c = srv.connect();
        c.query_drop("CREATE DATABASE g").unwrap();
        c.query_drop("USE g").unwrap();
        c.query_drop("CREATE TABLE t (id INT PRIMARY KEY)").unwrap();
        c.query_drop("INSERT INTO t VALUES (1)").unwrap();
        let conn = std::cell::RefCell::new(c);
        let mut runner = TestRunner::new(ProptestConfig {
            cases: 40,
            ..ProptestConfig::default()
        });
        runner
            .run(&(shape(), any::<bool>()), |(shape, prepared)| {
                let sql = shape.sql();
                let mut c = conn.borrow_mut();
                let reply = if prepared {
                    c.prep(&sql).map(|_| ())
                } else {
                    c.query_drop(&sql)
                };
                match reply {
                    Ok(()) | Err(mysql::Error::MySqlError(_)) => {}
                    Err(e) => prop_assert!(false, "{shape:?}: {e}"),
                }
                // The connection still answers.
                let one: Option<i64> = c.query_first("SELECT 1").map_err(|e| {
                    TestCaseError::fail(format!("{shape:?}: connection lost: {e}"))
                })?;
                prop_assert_eq!(one, Some(1));
                Ok(())
            })
            .unwrap();
    }
}
