//! CHECK constraints through the real binary: MySQL's names (`<table>_chk_<n>`), their text
//! in SHOW CREATE TABLE, 3819 on INSERT, UPDATE and ON DUPLICATE KEY UPDATE (a warning and a
//! skipped row under INSERT IGNORE), NULL passing, NOT ENFORCED kept but not checked, and
//! ALTER TABLE adding (checked against the rows), dropping and renaming them; 3814 for a
//! subquery in a check.

use mysql::prelude::*;
use mysql::Conn;
use tpbed_tests::{mysql_error, show_create_table, TestServer};

fn setup() -> (TestServer, Conn) {
    let srv = TestServer::start(&[]);
    let mut c = srv.connect();
    c.query_drop("CREATE DATABASE d").unwrap();
    c.query_drop("USE d").unwrap();
    c.query_drop(
        "CREATE TABLE t (id INT PRIMARY KEY, a INT CHECK (a > 0), b INT, \
         CONSTRAINT small CHECK (b < 10), CHECK (a <> b) NOT ENFORCED)",
    )
    .unwrap();
    (srv, c)
}

fn violated(c: &mut Conn, sql: &str) -> String {
    let e = mysql_error(c.query_drop(sql));
    assert_eq!((e.code, e.state.as_str()), (3819, "HY000"), "{sql}");
    e.message
}

#[test]
fn checks_are_named_and_shown_as_mysql_does() {
    let (_srv, mut c) = setup();
    let text = show_create_table(&mut c, "t");
    assert!(
        text.contains(
            "  PRIMARY KEY (`id`),\n  CONSTRAINT `small` CHECK ((`b` < 10)),\n  \
             CONSTRAINT `t_chk_1` CHECK ((`a` > 0)),\n  \
             CONSTRAINT `t_chk_2` CHECK ((`a` <> `b`)) /*!80016 NOT ENFORCED */\n)"
        ),
        "{text}"
    );
}

#[test]
fn a_subquery_is_not_allowed() {
    let (_srv, mut c) = setup();
    let e = mysql_error(c.query_drop("CREATE TABLE s (a INT, CHECK (a IN (SELECT id FROM t)))"));
    assert_eq!(
        (e.code, e.message.as_str()),
        (
            3814,
            "An expression of a check constraint 's_chk_1' contains disallowed function."
        )
    );
    assert_eq!(
        mysql_error(c.query_drop("ALTER TABLE t ADD CHECK (EXISTS (SELECT 1 FROM t))")).code,
        3814
    );
}

#[test]
fn every_write_is_checked() {
    let (_srv, mut c) = setup();
    c.query_drop("INSERT INTO t VALUES (1, 1, 1)").unwrap(); // a <> b is not enforced
    c.query_drop("INSERT INTO t VALUES (2, NULL, NULL)")
        .unwrap(); // NULL is not FALSE
    assert_eq!(
        violated(&mut c, "INSERT INTO t VALUES (3, 0, 1)"),
        "Check constraint 't_chk_1' is violated."
    );
    assert_eq!(
        violated(&mut c, "INSERT INTO t VALUES (3, 1, 10)"),
        "Check constraint 'small' is violated."
    );
    assert_eq!(
        violated(&mut c, "UPDATE t SET a = -1 WHERE id = 1"),
        "Check constraint 't_chk_1' is violated."
    );
    violated(
        &mut c,
        "INSERT INTO t VALUES (1, 5, 5) ON DUPLICATE KEY UPDATE b = 50",
    );
    c.query_drop("INSERT IGNORE INTO t VALUES (4, -4, 1), (5, 5, 1)")
        .unwrap();
    let w: Vec<(String, u16, String)> = c.query("SHOW WARNINGS").unwrap();
    assert_eq!(
        w,
        vec![(
            "Warning".into(),
            3819,
            "Check constraint 't_chk_1' is violated.".into()
        )]
    );
    let ids: Vec<i64> = c.query("SELECT id FROM t ORDER BY id").unwrap();
    assert_eq!(ids, [1, 2, 5]);
    let a: Option<i64> = c.query_first("SELECT a FROM t WHERE id = 1").unwrap();
    assert_eq!(a, Some(1));
}

#[test]
fn alter_table_adds_drops_and_renames_checks() {
    let (_srv, mut c) = setup();
    c.query_drop("INSERT INTO t VALUES (1, 1, 5)").unwrap();
    // A new check is checked against the rows the table keeps.
    assert_eq!(
        violated(&mut c, "ALTER TABLE t ADD CONSTRAINT big CHECK (b > 7)"),
        "Check constraint 'big' is violated."
    );
    assert!(!show_create_table(&mut c, "t").contains("`big`"));
    c.query_drop("ALTER TABLE t ADD CHECK (b > 0), ADD COLUMN z INT CHECK (z IS NULL OR z > 1)")
        .unwrap();
    let text = show_create_table(&mut c, "t");
    assert!(
        text.contains("CONSTRAINT `t_chk_3` CHECK ((`b` > 0))"),
        "{text}"
    );
    assert!(text.contains("CONSTRAINT `t_chk_4` CHECK"), "{text}");
    violated(&mut c, "INSERT INTO t VALUES (2, 1, 0, NULL)");
    let e = mysql_error(c.query_drop("ALTER TABLE t DROP COLUMN a"));
    assert_eq!(e.code, 3959);
    assert_eq!(
        e.message,
        "Check constraint 't_chk_1' uses column 'a', hence column cannot be dropped or renamed."
    );
    assert_eq!(
        mysql_error(c.query_drop("ALTER TABLE t RENAME COLUMN b TO bb")).code,
        3959
    );
    c.query_drop("ALTER TABLE t DROP CHECK small, DROP CONSTRAINT t_chk_1")
        .unwrap();
    c.query_drop("INSERT INTO t VALUES (2, -1, 9, NULL)")
        .unwrap();
    c.query_drop("ALTER TABLE t RENAME TO u").unwrap();
    let text = show_create_table(&mut c, "u");
    assert!(
        text.contains("CONSTRAINT `u_chk_3` CHECK ((`b` > 0))"),
        "{text}"
    );
    assert!(!text.contains("t_chk"), "{text}");
    assert_eq!(
        violated(&mut c, "INSERT INTO u VALUES (3, 1, -1, NULL)"),
        "Check constraint 'u_chk_3' is violated."
    );
}
