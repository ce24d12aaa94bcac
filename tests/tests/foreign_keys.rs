//! Foreign keys InnoDB's way through the real binary: the definition in SHOW CREATE TABLE
//! with the index MySQL adds, the parent record a child insert locks `S,REC_NOT_GAP` (read
//! from `performance_schema.data_locks`), 1452 for an orphan, 1451 for a referenced parent,
//! ON DELETE CASCADE and SET NULL, `foreign_key_checks = 0`, and the deadlock two
//! transactions meet when each inserts a child of the same parent and then deletes it; the
//! constraint in `information_schema.REFERENTIAL_CONSTRAINTS` and `KEY_COLUMN_USAGE`.

use std::thread;
use std::time::Duration;

use mysql::prelude::*;
use mysql::Conn;
use tpbed_tests::{code, mysql_error, TestServer};

fn setup() -> (TestServer, Conn) {
    let srv = TestServer::start(&[]);
    let mut c = srv.connect();
    for sql in [
        "CREATE DATABASE d",
        "USE d",
        "CREATE TABLE parent (id INT PRIMARY KEY, v INT)",
        "CREATE TABLE child (id INT PRIMARY KEY, pid INT, \
         CONSTRAINT fk FOREIGN KEY (pid) REFERENCES parent (id) ON DELETE CASCADE)",
        "INSERT INTO parent VALUES (1, 1), (2, 2), (3, 3)",
    ] {
        c.query_drop(sql).unwrap();
    }
    (srv, c)
}

#[test]
fn definition_and_index_are_shown() {
    let (_srv, mut c) = setup();
    let (_, text): (String, String) = c.query_first("SHOW CREATE TABLE child").unwrap().unwrap();
    assert!(
        text.contains(
            "  PRIMARY KEY (`id`),\n  KEY `fk` (`pid`),\n  CONSTRAINT `fk` FOREIGN KEY (`pid`) \
             REFERENCES `parent` (`id`) ON DELETE CASCADE\n)"
        ),
        "{text}"
    );
    c.query_drop(
        "CREATE TABLE c2 (id INT PRIMARY KEY, pid INT, FOREIGN KEY (pid) REFERENCES parent (id))",
    )
    .unwrap();
    let (_, text): (String, String) = c.query_first("SHOW CREATE TABLE c2").unwrap().unwrap();
    assert!(
        text.contains("KEY `pid` (`pid`),\n  CONSTRAINT `c2_ibfk_1` FOREIGN KEY"),
        "{text}"
    );
}

#[test]
fn child_insert_locks_the_parent_record_shared() {
    let (_srv, mut c) = setup();
    c.query_drop("BEGIN").unwrap();
    c.query_drop("INSERT INTO child VALUES (10, 2)").unwrap();
    let locks: Vec<(String, String, Option<String>, String)> = c
        .query(
            "SELECT OBJECT_NAME, LOCK_MODE, LOCK_DATA, LOCK_STATUS FROM \
             performance_schema.data_locks WHERE OBJECT_NAME = 'parent' AND LOCK_TYPE = 'RECORD'",
        )
        .unwrap();
    assert_eq!(
        locks,
        vec![(
            "parent".into(),
            "S,REC_NOT_GAP".into(),
            Some("2".into()),
            "GRANTED".into()
        )]
    );
    c.query_drop("COMMIT").unwrap();
}

#[test]
fn orphans_referenced_parents_cascade_and_set_null() {
    let (_srv, mut c) = setup();
    let e = mysql_error(c.query_drop("INSERT INTO child VALUES (10, 9)"));
    assert_eq!((e.code, e.state.as_str()), (1452, "23000"));
    assert_eq!(
        e.message,
        "Cannot add or update a child row: a foreign key constraint fails (`d`.`child`, \
         CONSTRAINT `fk` FOREIGN KEY (`pid`) REFERENCES `parent` (`id`) ON DELETE CASCADE)"
    );
    c.query_drop("INSERT INTO child VALUES (10, 1), (11, 1), (12, 2), (13, NULL)")
        .unwrap();
    assert_eq!(
        code(c.query_drop("UPDATE child SET pid = 8 WHERE id = 12")),
        1452
    );

    // ON DELETE CASCADE; ON UPDATE not given is RESTRICT.
    c.query_drop("DELETE FROM parent WHERE id = 1").unwrap();
    let ids: Vec<i64> = c.query("SELECT id FROM child ORDER BY id").unwrap();
    assert_eq!(ids, [12, 13]);
    let e = mysql_error(c.query_drop("UPDATE parent SET id = 20 WHERE id = 2"));
    assert_eq!(e.code, 1451);
    assert_eq!(
        e.message,
        "Cannot delete or update a parent row: a foreign key constraint fails (`d`.`child`, \
         CONSTRAINT `fk` FOREIGN KEY (`pid`) REFERENCES `parent` (`id`) ON DELETE CASCADE)"
    );

    // RESTRICT (the default) and SET NULL.
    c.query_drop(
        "CREATE TABLE keep (id INT PRIMARY KEY, pid INT, FOREIGN KEY (pid) REFERENCES parent (id))",
    )
    .unwrap();
    c.query_drop("CREATE TABLE loose (id INT PRIMARY KEY, pid INT, FOREIGN KEY (pid) REFERENCES parent (id) ON DELETE SET NULL)")
        .unwrap();
    c.query_drop("INSERT INTO keep VALUES (1, 3)").unwrap();
    c.query_drop("INSERT INTO loose VALUES (1, 2)").unwrap();
    assert_eq!(code(c.query_drop("DELETE FROM parent WHERE id = 3")), 1451);
    c.query_drop("DELETE FROM child").unwrap();
    c.query_drop("DELETE FROM parent WHERE id = 2").unwrap();
    assert_eq!(
        c.query_first::<Option<i64>, _>("SELECT pid FROM loose")
            .unwrap(),
        Some(None)
    );

    // foreign_key_checks = 0 lets an orphan in, as dumps rely on.
    c.query_drop("SET foreign_key_checks = 0").unwrap();
    c.query_drop("INSERT INTO child VALUES (20, 99)").unwrap();
    c.query_drop("SET foreign_key_checks = 1").unwrap();
    assert_eq!(
        code(c.query_drop("INSERT INTO child VALUES (21, 99)")),
        1452
    );
}

/// T1 and T2 each insert a child of parent 1 (both hold `S,REC_NOT_GAP` on it), then each
/// deletes parent 1: T1's DELETE waits for T2's S lock, and T2's DELETE, waiting for T1's S
/// lock, closes the cycle. MySQL detects the deadlock and rolls one of them back with 1213
/// (InnoDB picks the lighter one; with equal weights the transaction whose request closed
/// the cycle, T2); the other's DELETE then goes ahead and cascades to its child row.
#[test]
fn two_child_inserts_and_a_parent_delete_deadlock() {
    let (srv, mut c) = setup();
    let mut t1 = srv.connect_db("d");
    let mut t2 = srv.connect_db("d");
    t1.query_drop("BEGIN").unwrap();
    t2.query_drop("BEGIN").unwrap();
    t1.query_drop("INSERT INTO child VALUES (10, 1)").unwrap();
    t2.query_drop("INSERT INTO child VALUES (11, 1)").unwrap();
    let first = thread::spawn(move || {
        let r = t1.query_drop("DELETE FROM parent WHERE id = 1");
        (t1, r)
    });
    thread::sleep(Duration::from_millis(300));
    let second = t2.query_drop("DELETE FROM parent WHERE id = 1");
    let (mut t1, first) = first.join().unwrap();
    let codes = [&first, &second].map(|r| match r {
        Ok(()) => 0,
        Err(mysql::Error::MySqlError(e)) => e.code,
        Err(e) => panic!("{e}"),
    });
    assert!(
        codes == [0, 1213] || codes == [1213, 0],
        "one DELETE succeeds, the other is the deadlock victim: {codes:?}"
    );
    t1.query_drop("COMMIT").unwrap();
    t2.query_drop("COMMIT").unwrap();
    assert_eq!(
        c.query_first::<i64, _>("SELECT COUNT(*) FROM parent WHERE id = 1")
            .unwrap(),
        Some(0)
    );
    // The survivor's child row went with its parent; the victim's insert was rolled back.
    assert_eq!(
        c.query_first::<i64, _>("SELECT COUNT(*) FROM child")
            .unwrap(),
        Some(0)
    );
}

#[test]
fn information_schema_lists_the_constraint() {
    let (_srv, mut c) = setup();
    let rc: Vec<(String, String, String, String, String, String, String)> = c
        .query(
            "SELECT CONSTRAINT_SCHEMA, CONSTRAINT_NAME, UNIQUE_CONSTRAINT_NAME, UPDATE_RULE, \
             DELETE_RULE, TABLE_NAME, REFERENCED_TABLE_NAME \
             FROM information_schema.REFERENTIAL_CONSTRAINTS",
        )
        .unwrap();
    assert_eq!(
        rc,
        vec![(
            "d".into(),
            "fk".into(),
            "PRIMARY".into(),
            "NO ACTION".into(),
            "CASCADE".into(),
            "child".into(),
            "parent".into()
        )]
    );
    type Usage = (String, String, String, u64, Option<String>, Option<String>);
    let mut kcu: Vec<Usage> = c
        .query(
            "SELECT CONSTRAINT_NAME, TABLE_NAME, COLUMN_NAME, ORDINAL_POSITION, \
             REFERENCED_TABLE_NAME, REFERENCED_COLUMN_NAME \
             FROM information_schema.KEY_COLUMN_USAGE WHERE TABLE_SCHEMA = 'd'",
        )
        .unwrap();
    kcu.sort();
    assert_eq!(
        kcu,
        vec![
            ("PRIMARY".into(), "child".into(), "id".into(), 1, None, None),
            (
                "PRIMARY".into(),
                "parent".into(),
                "id".into(),
                1,
                None,
                None
            ),
            (
                "fk".into(),
                "child".into(),
                "pid".into(),
                1,
                Some("parent".into()),
                Some("id".into())
            ),
        ]
    );
}

#[test]
fn alter_checks_the_rows_and_drop_table_keeps_the_parent() {
    let (_srv, mut c) = setup();
    c.query_drop("CREATE TABLE loose (id INT PRIMARY KEY, pid INT)")
        .unwrap();
    c.query_drop("INSERT INTO loose VALUES (1, 1), (2, 7)")
        .unwrap();
    let e = mysql_error(c.query_drop(
        "ALTER TABLE loose ADD CONSTRAINT lfk FOREIGN KEY (pid) REFERENCES parent (id)",
    ));
    assert_eq!(e.code, 1452, "{}", e.message);
    c.query_drop("DELETE FROM loose WHERE id = 2").unwrap();
    c.query_drop("ALTER TABLE loose ADD CONSTRAINT lfk FOREIGN KEY (pid) REFERENCES parent (id)")
        .unwrap();
    assert_eq!(code(c.query_drop("INSERT INTO loose VALUES (3, 7)")), 1452);
    c.query_drop("ALTER TABLE loose DROP FOREIGN KEY lfk")
        .unwrap();
    c.query_drop("INSERT INTO loose VALUES (3, 7)").unwrap();

    let e = mysql_error(c.query_drop("DROP TABLE parent"));
    assert_eq!(
        (e.code, e.message.as_str()),
        (
            3730,
            "Cannot drop table 'parent' referenced by a foreign key constraint 'fk' on table \
             'child'."
        )
    );
    c.query_drop("DROP TABLE child, parent").unwrap();
}
