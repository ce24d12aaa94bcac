//! ALTER TABLE through the real binary: the column, key and table-option operations Django's
//! migrations and dumps send, the table's rows carried through each rebuild, MySQL's errors
//! for what cannot be done, the `DISABLE KEYS` note, and the exclusive metadata lock that
//! waits for every open transaction that used the table, readers included (1205 after
//! `lock_wait_timeout`), with new statements queued behind it; SHOW CREATE DATABASE.

use std::thread;
use std::time::{Duration, Instant};

use mysql::prelude::*;
use mysql::Conn;
use tpbed_tests::{code, mysql_error, show_create_table, TestServer};

fn setup() -> (TestServer, Conn) {
    let srv = TestServer::start(&[]);
    let mut c = srv.connect();
    c.query_drop("CREATE DATABASE d").unwrap();
    c.query_drop("USE d").unwrap();
    c.query_drop("CREATE TABLE t (id INT PRIMARY KEY, a INT, b VARCHAR(10))")
        .unwrap();
    c.query_drop("INSERT INTO t VALUES (1, 10, 'x'), (2, 20, 'y')")
        .unwrap();
    (srv, c)
}

#[test]
fn columns_are_added_changed_and_dropped_with_their_rows() {
    let (_srv, mut c) = setup();
    c.query_drop(
        "ALTER TABLE t ADD COLUMN n INT NOT NULL, ADD COLUMN s VARCHAR(5) DEFAULT 'z' FIRST",
    )
    .unwrap();
    let rows: Vec<(String, i64, i64, String, i64)> =
        c.query("SELECT s, id, a, b, n FROM t ORDER BY id").unwrap();
    assert_eq!(
        rows,
        vec![
            ("z".into(), 1, 10, "x".into(), 0),
            ("z".into(), 2, 20, "y".into(), 0)
        ]
    );
    let cols: Vec<String> = c.query("SELECT column_name FROM information_schema.columns WHERE table_name = 't' ORDER BY ordinal_position").unwrap();
    assert_eq!(cols, ["s", "id", "a", "b", "n"]);

    c.query_drop("ALTER TABLE t MODIFY b VARCHAR(20) NOT NULL DEFAULT 'q' AFTER id, CHANGE a aa BIGINT, RENAME COLUMN n TO nn, DROP COLUMN s")
        .unwrap();
    let text = show_create_table(&mut c, "t");
    assert!(
        text.contains("  `id` int NOT NULL,\n  `b` varchar(20) NOT NULL DEFAULT 'q',\n  `aa` bigint DEFAULT NULL,\n  `nn` int NOT NULL,"),
        "{text}"
    );
    let rows: Vec<(i64, String, i64)> = c.query("SELECT id, b, aa FROM t ORDER BY id").unwrap();
    assert_eq!(rows, vec![(1, "x".into(), 10), (2, "y".into(), 20)]);

    c.query_drop("ALTER TABLE t ALTER COLUMN nn SET DEFAULT 7")
        .unwrap();
    c.query_drop("INSERT INTO t (id, b) VALUES (3, 'w')")
        .unwrap();
    assert_eq!(
        c.query_first::<i64, _>("SELECT nn FROM t WHERE id = 3")
            .unwrap(),
        Some(7)
    );
}

#[test]
fn keys_are_added_and_dropped() {
    let (_srv, mut c) = setup();
    c.query_drop("ALTER TABLE t ADD INDEX ka (a), ADD CONSTRAINT ub UNIQUE (b)")
        .unwrap();
    let text = show_create_table(&mut c, "t");
    assert!(text.contains("UNIQUE KEY `ub` (`b`)"), "{text}");
    assert!(text.contains("KEY `ka` (`a`)"), "{text}");
    assert_eq!(
        code(c.query_drop("INSERT INTO t VALUES (3, 30, 'x')")),
        1062
    );
    c.query_drop("ALTER TABLE t DROP KEY ka, DROP INDEX ub, DROP PRIMARY KEY, ADD PRIMARY KEY (a)")
        .unwrap();
    let text = show_create_table(&mut c, "t");
    assert!(text.contains("PRIMARY KEY (`a`)"), "{text}");
    assert!(!text.contains("`ka`") && !text.contains("`ub`"), "{text}");
    // A UNIQUE constraint is dropped by its name.
    c.query_drop("ALTER TABLE t ADD UNIQUE KEY u2 (b)").unwrap();
    c.query_drop("ALTER TABLE t DROP CONSTRAINT u2").unwrap();
    assert!(!show_create_table(&mut c, "t").contains("u2"));
}

#[test]
fn table_options_rename_and_the_disable_keys_note() {
    let (_srv, mut c) = setup();
    c.query_drop("ALTER TABLE t ENGINE=InnoDB, DEFAULT CHARSET=utf8mb4 ROW_FORMAT=DYNAMIC")
        .unwrap();
    c.query_drop("ALTER TABLE t AUTO_INCREMENT = 50").unwrap();
    c.query_drop("/*!40000 ALTER TABLE `t` DISABLE KEYS */")
        .unwrap();
    let w: Vec<(String, u16, String)> = c.query("SHOW WARNINGS").unwrap();
    assert_eq!(
        w,
        vec![(
            "Note".into(),
            1031,
            "Table storage engine for 't' doesn't have this option".into()
        )]
    );
    c.query_drop("ALTER TABLE t ENABLE KEYS").unwrap();
    c.query_drop("ALTER TABLE t RENAME TO t2").unwrap();
    let tables: Vec<String> = c.query("SHOW TABLES").unwrap();
    assert_eq!(tables, ["t2"]);
    assert_eq!(
        c.query_first::<i64, _>("SELECT COUNT(*) FROM t2").unwrap(),
        Some(2)
    );
    c.query_drop("CREATE TABLE t3 (x INT)").unwrap();
    assert_eq!(code(c.query_drop("ALTER TABLE t2 RENAME TO t3")), 1050);
}

#[test]
fn errors_are_mysqls() {
    let (_srv, mut c) = setup();
    let cases = [
        (
            "ALTER TABLE t ADD COLUMN a INT",
            1060,
            "Duplicate column name 'a'",
        ),
        (
            "ALTER TABLE t DROP COLUMN nope",
            1091,
            "Can't DROP 'nope'; check that column/key exists",
        ),
        (
            "ALTER TABLE t DROP INDEX nope",
            1091,
            "Can't DROP 'nope'; check that column/key exists",
        ),
        (
            "ALTER TABLE t MODIFY nope INT",
            1054,
            "Unknown column 'nope' in 't'",
        ),
        (
            "ALTER TABLE t ADD PRIMARY KEY (a)",
            1068,
            "Multiple primary key defined",
        ),
        (
            "ALTER TABLE t ADD UNIQUE (a), ADD INDEX a (b)",
            1061,
            "Duplicate key name 'a'",
        ),
        (
            "ALTER TABLE t DROP COLUMN id, DROP COLUMN a, DROP COLUMN b",
            1090,
            "You can't delete all columns with ALTER TABLE; use DROP TABLE instead",
        ),
        (
            "ALTER TABLE nope ADD COLUMN x INT",
            1146,
            "Table 'd.nope' doesn't exist",
        ),
        (
            "ALTER TABLE t DROP CONSTRAINT nope",
            3940,
            "Constraint 'nope' does not exist.",
        ),
    ];
    for (sql, want, message) in cases {
        let e = mysql_error(c.query_drop(sql));
        assert_eq!((e.code, e.message.as_str()), (want, message), "{sql}");
    }
    c.query_drop("UPDATE t SET a = 10").unwrap();
    let e = mysql_error(c.query_drop("ALTER TABLE t ADD UNIQUE KEY ua (a)"));
    assert_eq!(e.code, 1062);
    assert_eq!(e.message, "Duplicate entry '10' for key 't.ua'");
    // Nothing changed after the errors.
    assert!(!show_create_table(&mut c, "t").contains("ua"));
}

#[test]
fn alter_waits_for_an_open_transaction_on_the_table() {
    let (srv, mut c) = setup();
    let mut writer = srv.connect_db("d");
    writer.query_drop("BEGIN").unwrap();
    writer
        .query_drop("UPDATE t SET a = a + 1 WHERE id = 1")
        .unwrap();

    // Past lock_wait_timeout: 1205 with MySQL's message, and the table is unchanged.
    c.query_drop("SET SESSION lock_wait_timeout = 1").unwrap();
    let started = Instant::now();
    let e = mysql_error(c.query_drop("ALTER TABLE t ADD COLUMN late INT"));
    assert_eq!(e.code, 1205);
    assert_eq!(
        e.message,
        "Lock wait timeout exceeded; try restarting transaction"
    );
    assert!(started.elapsed() >= Duration::from_millis(900));
    assert!(!show_create_table(&mut c, "t").contains("late"));

    // Within it: the ALTER goes ahead once the writer commits, and keeps its change.
    c.query_drop("SET SESSION lock_wait_timeout = 20").unwrap();
    let altering = thread::spawn(move || {
        let started = Instant::now();
        c.query_drop("ALTER TABLE t ADD COLUMN late INT").unwrap();
        (c, started.elapsed())
    });
    thread::sleep(Duration::from_millis(400));
    writer.query_drop("COMMIT").unwrap();
    let (mut c, waited) = altering.join().unwrap();
    assert!(waited >= Duration::from_millis(300), "{waited:?}");
    assert!(show_create_table(&mut c, "t").contains("`late` int"));
    assert_eq!(
        c.query_first::<i64, _>("SELECT a FROM t WHERE id = 1")
            .unwrap(),
        Some(11)
    );
}

/// The processlist State of connection `id`.
fn state_of(c: &mut Conn, id: u64) -> String {
    c.query_first(format!(
        "SELECT STATE FROM information_schema.PROCESSLIST WHERE ID = {id}"
    ))
    .unwrap()
    .unwrap_or_default()
}

/// Polls until connection `id` waits for a metadata lock (at most 10 s).
fn wait_until_waiting(c: &mut Conn, id: u64) {
    let started = Instant::now();
    while state_of(c, id) != "Waiting for table metadata lock" {
        assert!(
            started.elapsed() < Duration::from_secs(10),
            "connection {id} never waited: {}",
            state_of(c, id)
        );
        thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn alter_waits_for_a_reader_and_new_statements_queue_behind_it() {
    let (srv, mut c) = setup();
    let mut reader = srv.connect_db("d");
    reader.query_drop("BEGIN").unwrap();
    let n: u64 = reader
        .query_first("SELECT COUNT(*) FROM t")
        .unwrap()
        .unwrap();

    // A consistent read holds the table's metadata lock to the end of its transaction.
    c.query_drop("SET SESSION lock_wait_timeout = 1").unwrap();
    let e = mysql_error(c.query_drop("ALTER TABLE t ADD COLUMN late INT"));
    assert_eq!((e.code, e.state.as_str()), (1205, "HY000"));
    // The abandoned ALTER left nothing behind: others read and write the table at once.
    let mut other = srv.connect_db("d");
    other.query_drop("UPDATE t SET a = a WHERE id = 1").unwrap();

    // A waiting ALTER makes every new statement on the table wait behind it.
    c.query_drop("SET SESSION lock_wait_timeout = 30").unwrap();
    let alter_id: u64 = c.query_first("SELECT CONNECTION_ID()").unwrap().unwrap();
    let altering = thread::spawn(move || {
        c.query_drop("ALTER TABLE t ADD COLUMN late INT").unwrap();
        c
    });
    let mut watcher = srv.connect_db("d");
    wait_until_waiting(&mut watcher, alter_id);
    let select_id: u64 = other
        .query_first("SELECT CONNECTION_ID()")
        .unwrap()
        .unwrap();
    let selecting = thread::spawn(move || {
        let started = Instant::now();
        let n: u64 = other
            .query_first("SELECT COUNT(*) FROM t")
            .unwrap()
            .unwrap();
        (n, started.elapsed())
    });
    wait_until_waiting(&mut watcher, select_id);
    // The reader's own transaction goes on reading the table it holds.
    let again: u64 = reader
        .query_first("SELECT COUNT(*) FROM t")
        .unwrap()
        .unwrap();
    assert_eq!(again, n);
    thread::sleep(Duration::from_millis(300));
    reader.query_drop("COMMIT").unwrap();
    let mut c = altering.join().unwrap();
    let (after, waited) = selecting.join().unwrap();
    assert_eq!(after, n);
    assert!(waited >= Duration::from_millis(300), "{waited:?}");
    assert!(show_create_table(&mut c, "t").contains("`late` int"));
}

#[test]
fn drop_and_truncate_wait_for_a_reader() {
    let (srv, mut c) = setup();
    let mut reader = srv.connect_db("d");
    reader.query_drop("BEGIN").unwrap();
    let _: Option<u64> = reader.query_first("SELECT COUNT(*) FROM t").unwrap();
    c.query_drop("SET SESSION lock_wait_timeout = 1").unwrap();
    for ddl in ["TRUNCATE TABLE t", "DROP TABLE t"] {
        let e = mysql_error(c.query_drop(ddl));
        assert_eq!(e.code, 1205, "{ddl}: {}", e.message);
    }
    reader.query_drop("COMMIT").unwrap();
    c.query_drop("DROP TABLE t").unwrap();
}

#[test]
fn show_create_database_reads_as_mysqls() {
    let (_srv, mut c) = setup();
    let row: Option<(String, String)> = c.query_first("SHOW CREATE DATABASE d").unwrap();
    assert_eq!(
        row,
        Some((
            "d".into(),
            "CREATE DATABASE `d` /*!40100 DEFAULT CHARACTER SET utf8mb4 COLLATE \
             utf8mb4_0900_ai_ci */ /*!80016 DEFAULT ENCRYPTION='N' */"
                .into()
        ))
    );
    let row: Option<(String, String)> = c
        .query_first("SHOW CREATE SCHEMA IF NOT EXISTS `d`")
        .unwrap();
    assert!(row
        .unwrap()
        .1
        .starts_with("CREATE DATABASE /*!32312 IF NOT EXISTS*/ `d` "));
    let e = mysql_error(c.query_drop("SHOW CREATE DATABASE nope"));
    assert_eq!(
        (e.code, e.message.as_str()),
        (1049, "Unknown database 'nope'")
    );
}
