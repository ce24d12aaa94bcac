//! Table locks and dumps through the real binary: `LOCK TABLES ... READ|WRITE` / `UNLOCK
//! TABLES` (1100 for a table not locked, the implicit commit, another session's write
//! waiting for a READ lock), and real `mariadb-dump` runs — default options and
//! `--single-transaction` — of a database with sysbench's tables and a foreign key, whose
//! output the `mariadb` CLI loads back into a fresh tpbed unchanged.

use std::thread;
use std::time::{Duration, Instant};

use mysql::prelude::*;
use mysql::Conn;
use tpbed_tests::{cli_output, code, has_program, mysql_error, require_tool, run_cli, TestServer};

fn server_with_db() -> (TestServer, Conn) {
    let srv = TestServer::start(&[]);
    let mut c = srv.connect();
    c.query_drop("CREATE DATABASE d").unwrap();
    c.query_drop("USE d").unwrap();
    (srv, c)
}

#[test]
fn lock_tables_follows_mysqls_rules() {
    let (srv, mut c) = server_with_db();
    c.query_drop("CREATE TABLE t (id INT PRIMARY KEY)").unwrap();
    c.query_drop("CREATE TABLE other (id INT PRIMARY KEY)")
        .unwrap();
    c.query_drop("UNLOCK TABLES").unwrap(); // nothing locked: a no-op
    assert_eq!(code(c.query_drop("LOCK TABLES nope READ")), 1146);

    // LOCK TABLES commits the open transaction.
    c.query_drop("BEGIN").unwrap();
    c.query_drop("INSERT INTO t VALUES (1)").unwrap();
    c.query_drop("LOCK TABLES t READ LOCAL").unwrap();
    let mut other = srv.connect_db("d");
    assert_eq!(
        other
            .query_first::<i64, _>("SELECT COUNT(*) FROM t")
            .unwrap(),
        Some(1)
    );

    // A table the statement did not lock is 1100; information_schema stays readable.
    let e = mysql_error(c.query_drop("SELECT * FROM other"));
    assert_eq!(
        (e.code, e.message.as_str()),
        (1100, "Table 'other' was not locked with LOCK TABLES")
    );
    c.query_drop("SELECT COUNT(*) FROM information_schema.TABLES")
        .unwrap();
    assert_eq!(
        c.query_first::<i64, _>("SELECT COUNT(*) FROM t").unwrap(),
        Some(1)
    );

    // Another session reads the READ-locked table, and its write waits for UNLOCK TABLES.
    other
        .query_drop("SET SESSION innodb_lock_wait_timeout = 1")
        .unwrap();
    assert_eq!(code(other.query_drop("INSERT INTO t VALUES (2)")), 1205);
    let writer = thread::spawn(move || {
        other
            .query_drop("SET SESSION innodb_lock_wait_timeout = 20")
            .unwrap();
        let started = Instant::now();
        other.query_drop("INSERT INTO t VALUES (3)").unwrap();
        started.elapsed()
    });
    thread::sleep(Duration::from_millis(400));
    c.query_drop("UNLOCK TABLES").unwrap();
    let waited = writer.join().unwrap();
    assert!(waited >= Duration::from_millis(300), "{waited:?}");
    c.query_drop("SELECT * FROM other").unwrap();

    // WRITE: the session itself writes the table it locked.
    c.query_drop("LOCK TABLES t WRITE, other READ").unwrap();
    c.query_drop("INSERT INTO t VALUES (4)").unwrap();
    c.query_drop("UNLOCK TABLES").unwrap();
    assert_eq!(
        c.query_first::<i64, _>("SELECT COUNT(*) FROM t").unwrap(),
        Some(3)
    );
}

/// sysbench's table definition (as `oltp_common.lua` creates it for MySQL) with `rows` rows.
fn sysbench_table(c: &mut Conn, name: &str, rows: u32) {
    c.query_drop(format!(
        "CREATE TABLE {name} (id INTEGER NOT NULL AUTO_INCREMENT, k INTEGER DEFAULT '0' NOT NULL, \
         c CHAR(120) DEFAULT '' NOT NULL, pad CHAR(60) DEFAULT '' NOT NULL, PRIMARY KEY (id)) \
         ENGINE = InnoDB"
    ))
    .unwrap();
    c.query_drop(format!("CREATE INDEX k_1 ON {name}(k)"))
        .unwrap();
    let values: Vec<String> = (1..=rows)
        .map(|i| format!("({}, '{i:011}-text', 'pad-{i}')", i * 7 % 100))
        .collect();
    c.query_drop(format!(
        "INSERT INTO {name} (k, c, pad) VALUES {}",
        values.join(",")
    ))
    .unwrap();
}

/// Every table of database `db`: its SHOW CREATE TABLE text and its rows as text.
fn snapshot(c: &mut Conn, db: &str) -> Vec<(String, String, Vec<String>)> {
    let tables: Vec<String> = c.query(format!("SHOW TABLES FROM {db}")).unwrap();
    tables
        .into_iter()
        .map(|t| {
            let (_, create): (String, String) = c
                .query_first(format!("SHOW CREATE TABLE {db}.{t}"))
                .unwrap()
                .unwrap();
            let rows: Vec<String> = c
                .query(format!(
                    "SELECT CONCAT_WS('|', id, k, c, pad) FROM {db}.{t} ORDER BY id"
                ))
                .unwrap();
            (t, create, rows)
        })
        .collect()
}

#[test]
fn mariadb_dump_output_reloads_into_a_fresh_server() {
    if !require_tool("mariadb-dump", has_program("mariadb-dump"))
        || !require_tool("mariadb", has_program("mariadb"))
    {
        return;
    }
    let (srv, mut c) = server_with_db();
    sysbench_table(&mut c, "sbtest1", 200);
    sysbench_table(&mut c, "sbtest2", 50);
    // A child of sbtest1 (dumped before its parent: the dump turns foreign_key_checks off).
    c.query_drop(
        "CREATE TABLE a_child (id INT PRIMARY KEY, k INT NOT NULL, c CHAR(10), pad CHAR(10), \
         CONSTRAINT a_fk FOREIGN KEY (k) REFERENCES sbtest1 (id) ON DELETE CASCADE)",
    )
    .unwrap();
    c.query_drop("INSERT INTO a_child VALUES (1, 5, 'x', 'y'), (2, 7, 'z', 'w')")
        .unwrap();
    let before = snapshot(&mut c, "d");
    for options in [&[][..], &["--single-transaction"][..]] {
        let mut args = vec!["-uroot"];
        args.extend_from_slice(options);
        args.push("d");
        let out = cli_output("mariadb-dump", srv.port, &args, b"");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "mariadb-dump {options:?}: {stderr}");
        let dump = out.stdout;
        let text = String::from_utf8_lossy(&dump);
        if options.is_empty() {
            assert!(text.contains("LOCK TABLES `sbtest1` WRITE;"), "{text}");
            assert!(
                text.contains("ALTER TABLE `sbtest1` DISABLE KEYS"),
                "{text}"
            );
        }

        let fresh = TestServer::start(&[]);
        let mut f = fresh.connect();
        f.query_drop("CREATE DATABASE d").unwrap();
        run_cli("mariadb", fresh.port, &["-uroot", "d"], &dump);
        assert_eq!(snapshot(&mut f, "d"), before, "{options:?}");
        // The reloaded foreign key is enforced.
        f.query_drop("DELETE FROM d.sbtest1 WHERE id = 5").unwrap();
        assert_eq!(
            f.query_first::<i64, _>("SELECT COUNT(*) FROM d.a_child")
                .unwrap(),
            Some(1)
        );
        assert_eq!(
            code(f.query_drop("INSERT INTO d.a_child VALUES (3, 9999, '', '')")),
            1452
        );
    }
}
