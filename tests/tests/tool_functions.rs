//! String and hash functions checksumming and monitoring scripts call, with the values MySQL
//! 8.0 returns (its manual's examples) and its column labels (the expression's text).

use mysql::prelude::*;
use tpbed_tests::TestServer;

#[test]
fn string_and_hash_functions_return_mysqls_values() {
    let srv = TestServer::start(&[]);
    let mut c = srv.connect();
    for (expr, want) in [
        ("LEFT('foobarbar', 5)", Some("fooba")),
        ("RIGHT('foobarbar', 4)", Some("rbar")),
        ("LEFT('héllo', 2)", Some("hé")),
        (
            "SUBSTRING_INDEX('www.mysql.com', '.', 2)",
            Some("www.mysql"),
        ),
        (
            "SUBSTRING_INDEX('www.mysql.com', '.', -2)",
            Some("mysql.com"),
        ),
        ("HEX('abc')", Some("616263")),
        ("HEX(255)", Some("FF")),
        ("CRC32('MySQL')", Some("3259397556")),
        ("MD5('testing')", Some("ae2b1fca515949e5d54fb22b8ed95575")),
        (
            "SHA1('abc')",
            Some("a9993e364706816aba3e25717850c26c9cd0d89d"),
        ),
        (
            "SHA2('abc', 224)",
            Some("23097d223405d8228642a477bda255b32aadbce4bda0b3f7e36c9da7"),
        ),
        ("SHA2('abc', 1)", None),
        ("MD5(NULL)", None),
        ("LEFT(NULL, 1)", None),
    ] {
        let got: Option<String> = c.query_first(format!("SELECT {expr}")).unwrap().unwrap();
        assert_eq!(got.as_deref(), want, "{expr}");
    }
    let result = c
        .query_iter("SELECT SUBSTRING_INDEX('a.b', '.', 1), CRC32('x')")
        .unwrap();
    let labels: Vec<String> = result
        .columns()
        .as_ref()
        .iter()
        .map(|col| col.name_str().into_owned())
        .collect();
    drop(result);
    assert_eq!(labels, ["SUBSTRING_INDEX('a.b', '.', 1)", "CRC32('x')"]);
    assert_eq!(
        tpbed_tests::code(c.query_drop("SELECT LEFT('a')")),
        1582,
        "wrong argument count"
    );
}

#[test]
fn interval_arithmetic_and_its_labels() {
    let srv = TestServer::start(&[]);
    let mut c = srv.connect();
    for (expr, want) in [
        (
            "DATE_ADD('2026-01-31 10:00:00', INTERVAL 1 MONTH)",
            Some("2026-02-28 10:00:00"),
        ),
        (
            "'2026-03-01 00:00:00' - INTERVAL 1 DAY",
            Some("2026-02-28 00:00:00"),
        ),
        (
            "INTERVAL 1 YEAR + '2024-02-29 12:00:00'",
            Some("2025-02-28 12:00:00"),
        ),
        (
            "DATE_SUB('2026-01-01 00:00:00', INTERVAL 90 MINUTE)",
            Some("2025-12-31 22:30:00"),
        ),
        (
            "ADDDATE('2026-01-01 00:00:00', INTERVAL 2 WEEK)",
            Some("2026-01-15 00:00:00"),
        ),
        ("DATE_ADD('not a date', INTERVAL 1 DAY)", None),
        ("DATE_ADD(NULL, INTERVAL 1 DAY)", None),
        (
            "CONVERT_TZ('2026-01-01 12:00:00', '+00:00', '+10:00')",
            Some("2026-01-01 22:00:00"),
        ),
        // Without MySQL's time zone tables a named zone gives NULL, in MySQL too.
        (
            "CONVERT_TZ('2026-01-01 12:00:00', 'UTC', 'Europe/Berlin')",
            None,
        ),
    ] {
        let got: Option<String> = c.query_first(format!("SELECT {expr}")).unwrap().unwrap();
        assert_eq!(got.as_deref(), want, "{expr}");
    }
    let recent: i64 = c
        .query_first("SELECT NOW() - INTERVAL 1 HOUR < NOW()")
        .unwrap()
        .unwrap();
    assert_eq!(recent, 1);
    c.query_drop("CREATE DATABASE f").unwrap();
    c.query_drop("CREATE TABLE f.t (c VARCHAR(40))").unwrap();
    c.query_drop("INSERT INTO f.t VALUES ('abcdefghijklmnopqrstuvwxyz')")
        .unwrap();
    let result = c
        .query_iter(
            "SELECT SUBSTRING(c,1,20), '2026-03-01' - interval 1 day, \
             DATE_ADD('2026-01-01', INTERVAL 1 MONTH) FROM f.t",
        )
        .unwrap();
    let labels: Vec<String> = result
        .columns()
        .as_ref()
        .iter()
        .map(|col| col.name_str().into_owned())
        .collect();
    drop(result);
    assert_eq!(
        labels,
        [
            "SUBSTRING(c,1,20)",
            "'2026-03-01' - interval 1 day",
            "DATE_ADD('2026-01-01', INTERVAL 1 MONTH)"
        ]
    );
}

#[test]
fn group_concat_joins_each_groups_values() {
    let srv = TestServer::start(&[]);
    let mut c = srv.connect();
    c.query_drop("CREATE DATABASE g").unwrap();
    c.query_drop("CREATE TABLE g.t (id INT PRIMARY KEY, k INT, v VARCHAR(10))")
        .unwrap();
    c.query_drop("INSERT INTO g.t VALUES (1,1,'a'),(2,1,'b'),(3,2,'c'),(4,2,NULL),(5,1,'a')")
        .unwrap();
    let rows: Vec<(i64, Option<String>, Option<String>)> = c
        .query(
            "SELECT k, GROUP_CONCAT(v), GROUP_CONCAT(DISTINCT v SEPARATOR '|') \
             FROM g.t GROUP BY k ORDER BY k",
        )
        .unwrap();
    assert_eq!(
        rows,
        [
            (1, Some("a,b,a".into()), Some("a|b".into())),
            (2, Some("c".into()), Some("c".into()))
        ]
    );
    let none: Option<Option<String>> = c
        .query_first("SELECT GROUP_CONCAT(id) FROM g.t WHERE id > 100")
        .unwrap();
    assert_eq!(none, Some(None), "no rows: NULL");
}
