//! Column types through the real binary: DECIMAL's limits refused with MySQL's errors (1426
//! past 65 digits, 1425 past 30 decimals, 1427 for more decimals than digits), and a wide
//! DECIMAL keeping its digits exactly through both protocols.

use mysql::prelude::*;
use mysql::Conn;
use tpbed_tests::{mysql_error, TestServer};

fn setup() -> (TestServer, Conn) {
    TestServer::with_database("d")
}

fn refused(c: &mut Conn, column_type: &str) -> (u16, String, String) {
    let e = mysql_error(c.query_drop(format!("CREATE TABLE t (c {column_type})")));
    (e.code, e.state, e.message)
}

#[test]
fn decimal_limits_are_mysqls_errors() {
    let (_srv, mut c) = setup();
    let too_big = |code, message: &str| (code, "42000".to_string(), message.to_string());
    assert_eq!(
        refused(&mut c, "DECIMAL(66,2)"),
        too_big(
            1426,
            "Too-big precision 66 specified for 'c'. Maximum is 65."
        )
    );
    assert_eq!(
        refused(&mut c, "DECIMAL(40,31)"),
        too_big(
            1425,
            "Too big scale 31 specified for column 'c'. Maximum is 30."
        )
    );
    assert_eq!(
        refused(&mut c, "DECIMAL(5,6)"),
        too_big(
            1427,
            "For float(M,D), double(M,D) or decimal(M,D), M must be >= D (column 'c')."
        )
    );
    // None of them left a table behind.
    let tables: Vec<String> = c.query("SHOW TABLES").unwrap();
    assert!(tables.is_empty(), "{tables:?}");
}

#[test]
fn a_wide_decimal_keeps_every_digit_in_both_protocols() {
    let (_srv, mut c) = setup();
    c.query_drop("CREATE TABLE t (id INT PRIMARY KEY, c DECIMAL(38,10))")
        .unwrap();
    let big = "9999999999999999999999999999.9999999999";
    c.query_drop(format!("INSERT INTO t VALUES (1, '{big}')"))
        .unwrap();
    let text: String = c
        .query_first("SELECT c FROM t WHERE id = 1")
        .unwrap()
        .unwrap();
    assert_eq!(text, big);
    let prepared: String = c
        .exec_first("SELECT c FROM t WHERE id = ?", (1,))
        .unwrap()
        .unwrap();
    assert_eq!(prepared, big);
    let difference: String = c
        .query_first("SELECT c - 0.0000000001 FROM t WHERE id = 1")
        .unwrap()
        .unwrap();
    assert_eq!(difference, "9999999999999999999999999999.9999999998");
}
