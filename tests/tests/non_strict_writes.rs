//! Writes outside strict mode and under INSERT IGNORE, as MySQL stores them: a string too
//! long is truncated (1265), a number out of range clipped (1264), text read as far as it is
//! a number (1265, or 0 with 1366), and the statement succeeds with those warnings; in strict
//! mode the same INSERT is refused and nothing changes. UPDATE IGNORE cuts values the same
//! way and keeps, with a warning, a row its new values would make break a key or a CHECK.

use mysql::prelude::*;
use mysql::{Conn, Row};
use tpbed_tests::{mysql_error, TestServer};

fn warnings(c: &mut Conn) -> Vec<(u16, String)> {
    let rows: Vec<Row> = c.query("SHOW WARNINGS").unwrap();
    rows.into_iter()
        .map(|r| (r.get::<u16, _>(1).unwrap(), r.get::<String, _>(2).unwrap()))
        .collect()
}

fn w(code: u16, m: &str) -> (u16, String) {
    (code, m.to_string())
}

#[test]
fn values_are_cut_to_fit_with_mysqls_warnings_outside_strict_mode() {
    let srv = TestServer::start(&[]);
    let mut c = srv.connect();
    c.query_drop("CREATE DATABASE y").unwrap();
    c.query_drop("USE y").unwrap();
    c.query_drop(
        "CREATE TABLE t (id INT AUTO_INCREMENT PRIMARY KEY, a VARCHAR(3), b TINYINT, \
         c DOUBLE, d INT UNSIGNED)",
    )
    .unwrap();
    // Strict (the default): refused, nothing stored.
    let e = mysql_error(c.query_drop("INSERT INTO t (a) VALUES ('abcdef')"));
    assert_eq!((e.code, e.state.as_str()), (1406, "22001"));

    c.query_drop("SET sql_mode = ''").unwrap();
    c.query_drop(
        "INSERT INTO t (a, b, c, d) VALUES ('abcdef', 300, '1.5e3 apples', -5), \
         ('xy', 'abc', 2, '12abc')",
    )
    .unwrap();
    assert_eq!(c.affected_rows(), 2);
    assert_eq!(
        warnings(&mut c),
        [
            w(1265, "Data truncated for column 'a' at row 1"),
            w(1264, "Out of range value for column 'b' at row 1"),
            w(1265, "Data truncated for column 'c' at row 1"),
            w(1264, "Out of range value for column 'd' at row 1"),
            w(
                1366,
                "Incorrect integer value: 'abc' for column 'b' at row 2"
            ),
            w(1265, "Data truncated for column 'd' at row 2"),
        ]
    );
    c.query_drop("UPDATE t SET a = 'qwerty', b = -1000 WHERE a = 'xy'")
        .unwrap();
    assert_eq!(
        c.info_str(),
        "Rows matched: 1  Changed: 1  Warnings: 2",
        "the info line counts the warnings"
    );

    // INSERT IGNORE in strict mode stores the cut row too.
    c.query_drop("SET sql_mode = DEFAULT").unwrap();
    c.query_drop("INSERT IGNORE INTO t (a, b) VALUES ('longer', 1000)")
        .unwrap();
    assert_eq!(c.affected_rows(), 1);
    assert_eq!(
        warnings(&mut c),
        [
            w(1265, "Data truncated for column 'a' at row 1"),
            w(1264, "Out of range value for column 'b' at row 1"),
        ]
    );
    let rows: Vec<(String, i8, Option<f64>, Option<u32>)> =
        c.query("SELECT a, b, c, d FROM t ORDER BY id").unwrap();
    assert_eq!(
        rows,
        [
            ("abc".into(), 127, Some(1500.0), Some(0)),
            ("qwe".into(), -128, Some(2.0), Some(12)),
            ("lon".into(), 127, None, None),
        ]
    );
}

#[test]
fn update_ignore_keeps_a_row_that_would_break_a_key_and_cuts_values_to_fit() {
    let srv = TestServer::start(&[]);
    let mut c = srv.connect();
    c.query_drop("CREATE DATABASE y").unwrap();
    c.query_drop("USE y").unwrap();
    c.query_drop(
        "CREATE TABLE t (id INT PRIMARY KEY, u INT UNIQUE, a VARCHAR(3), b INT, \
         CHECK (b < 100))",
    )
    .unwrap();
    c.query_drop("INSERT INTO t VALUES (1, 1, 'a', 1), (2, 2, 'b', 2), (3, 3, 'c', 3)")
        .unwrap();
    // Strict mode and no IGNORE: the duplicate refuses the whole statement.
    assert_eq!(
        mysql_error(c.query_drop("UPDATE t SET u = 2 WHERE id = 1")).code,
        1062
    );
    c.query_drop("UPDATE IGNORE t SET u = u + 1 ORDER BY id DESC")
        .unwrap();
    assert_eq!(c.affected_rows(), 3);
    assert_eq!(c.info_str(), "Rows matched: 3  Changed: 3  Warnings: 0");
    // IGNORE: the second row, which would duplicate the first's new u, stays as it was.
    c.query_drop("update low_priority ignore t set u = 5 where id in (1, 2)")
        .unwrap();
    assert_eq!(c.affected_rows(), 1);
    assert_eq!(c.info_str(), "Rows matched: 2  Changed: 1  Warnings: 1");
    assert_eq!(
        warnings(&mut c),
        vec![w(1062, "Duplicate entry '5' for key 't.u'")]
    );
    // A value too long is cut, a CHECK violation keeps the row, both with warnings.
    c.query_drop("UPDATE IGNORE t SET a = 'abcdef' WHERE id = 1")
        .unwrap();
    assert_eq!(
        warnings(&mut c),
        vec![w(1265, "Data truncated for column 'a' at row 1")]
    );
    c.query_drop("UPDATE IGNORE t SET b = b + 200 WHERE id = 2")
        .unwrap();
    assert_eq!(
        warnings(&mut c),
        vec![w(3819, "Check constraint 't_chk_1' is violated.")]
    );
    let rows: Vec<(i32, i32, String, i32)> =
        c.query("SELECT id, u, a, b FROM t ORDER BY id").unwrap();
    assert_eq!(
        rows,
        vec![
            (1, 5, "abc".into(), 1),
            (2, 3, "b".into(), 2),
            (3, 4, "c".into(), 3)
        ]
    );
    // MySQL has no UPDATE OR ... and no UPDATE REPLACE.
    for bad in [
        "UPDATE OR IGNORE t SET a = 'x'",
        "UPDATE REPLACE t SET a = 'x'",
    ] {
        assert_eq!(mysql_error(c.query_drop(bad)).code, 1064, "{bad}");
    }
}
