//! Privileges through a real client: an account without grants is refused every statement
//! kind with MySQL's error (1142, 1143, 1044, 1227, 1045) and sees only its own rows in the
//! introspection tables; an account granted SELECT on one database reads it and nothing
//! else; a statements × privileges matrix at the table, database and global levels; SHOW
//! GRANTS, REVOKE and the grant tables; salted password storage and password changes.

use std::time::{Duration, Instant};

use mysql::prelude::*;
use mysql::Conn;
use tpbed_tests::{code, mysql_error, raw_code, TestServer};

/// A server with databases `d1` (table `t` with one row) and `d2` (table `u`), and the
/// accounts `nog` (no grants) and `sel` (SELECT on `d1.*`), both with password `pw`.
fn server() -> (TestServer, Conn) {
    let srv = TestServer::start(&[]);
    let mut root = srv.connect();
    for sql in [
        "CREATE DATABASE d1",
        "CREATE DATABASE d2",
        "CREATE TABLE d1.t (id INT PRIMARY KEY, v INT)",
        "INSERT INTO d1.t VALUES (1, 10)",
        "CREATE TABLE d2.u (id INT PRIMARY KEY)",
        "CREATE USER nog@'%' IDENTIFIED BY 'pw'",
        "CREATE USER sel@'%' IDENTIFIED WITH mysql_native_password BY 'pw'",
        "GRANT SELECT ON d1.* TO sel@'%'",
    ] {
        root.query_drop(sql)
            .unwrap_or_else(|e| panic!("{sql}: {e}"));
    }
    (srv, root)
}

fn login(srv: &TestServer, user: &str) -> Conn {
    Conn::new(srv.opts(user, "pw")).unwrap_or_else(|e| panic!("log in as {user}: {e}"))
}

fn strings(c: &mut Conn, sql: &str) -> Vec<String> {
    c.query(sql).unwrap_or_else(|e| panic!("{sql}: {e}"))
}

#[test]
fn an_account_without_grants_gets_mysqls_error_for_every_statement_kind() {
    let (srv, _root) = server();
    let mut c = login(&srv, "nog");
    let cases: &[(&str, u16, &str)] = &[
        (
            "SELECT * FROM d1.t",
            1142,
            "SELECT command denied to user 'nog'@'localhost' for table 't'",
        ),
        // Privileges come before existence: nothing is learnt of which tables exist.
        ("SELECT * FROM d1.nosuch", 1142, "for table 'nosuch'"),
        (
            "SELECT * FROM d1.t JOIN d2.u",
            1142,
            "SELECT command denied",
        ),
        (
            "INSERT INTO d1.t VALUES (2, 2)",
            1142,
            "INSERT command denied",
        ),
        (
            "REPLACE INTO d1.t VALUES (1, 2)",
            1142,
            "INSERT, DELETE command denied",
        ),
        ("UPDATE d1.t SET v = 2", 1142, "UPDATE command denied"),
        ("DELETE FROM d1.t", 1142, "DELETE command denied"),
        ("TRUNCATE TABLE d1.t", 1142, "DROP command denied"),
        ("DROP TABLE d1.t", 1142, "DROP command denied"),
        ("CREATE TABLE d1.n (id INT)", 1142, "CREATE command denied"),
        ("CREATE INDEX iv ON d1.t (v)", 1142, "INDEX command denied"),
        (
            "ALTER TABLE d1.t ADD COLUMN w INT",
            1142,
            "ALTER command denied",
        ),
        ("ANALYZE TABLE d1.t", 1142, "SELECT, INSERT command denied"),
        ("CHECKSUM TABLE d1.t", 1142, "SELECT command denied"),
        ("SHOW CREATE TABLE d1.t", 1142, "SHOW command denied"),
        ("SHOW COLUMNS FROM d1.t", 1142, "SELECT command denied"),
        ("DESCRIBE d1.t", 1142, "SELECT command denied"),
        ("EXPLAIN SELECT * FROM d1.t", 1142, "SELECT command denied"),
        ("SELECT * FROM mysql.user", 1142, "for table 'user'"),
        ("SELECT * FROM mysql.db", 1142, "for table 'db'"),
        (
            "SELECT * FROM mysql.tables_priv",
            1142,
            "for table 'tables_priv'",
        ),
        (
            "SELECT * FROM performance_schema.threads",
            1142,
            "for table 'threads'",
        ),
        (
            "SELECT * FROM performance_schema.events_statements_summary_by_digest",
            1142,
            "for table 'events_statements_summary_by_digest'",
        ),
        (
            "SELECT * FROM performance_schema.data_locks",
            1142,
            "for table 'data_locks'",
        ),
        (
            "SELECT * FROM d1.t",
            1142,
            "SELECT command denied to user 'nog'@'localhost'",
        ),
        (
            "DROP DATABASE d1",
            1044,
            "Access denied for user 'nog'@'%' to database 'd1'",
        ),
        ("CREATE DATABASE d3", 1044, "to database 'd3'"),
        ("USE d1", 1044, "to database 'd1'"),
        ("USE nosuchdb", 1044, "to database 'nosuchdb'"),
        ("SHOW TABLES FROM d1", 1044, "to database 'd1'"),
        ("SHOW TABLE STATUS FROM d1", 1044, "to database 'd1'"),
        (
            "SHOW CREATE DATABASE d1",
            1044,
            "Access denied for user 'nog'@'localhost' to database 'd1'",
        ),
        (
            "SHOW GRANTS FOR root@localhost",
            1044,
            "Access denied for user 'nog'@'%' to database 'mysql'",
        ),
        (
            "SHOW CREATE USER root@localhost",
            1044,
            "to database 'mysql'",
        ),
        (
            "SET PASSWORD FOR sel@'%' = 'x'",
            1044,
            "to database 'mysql'",
        ),
        ("GRANT SELECT ON d1.* TO nog@'%'", 1044, "to database 'd1'"),
        (
            "GRANT SELECT ON d1.t TO nog@'%'",
            1142,
            "SELECT, GRANT command denied to user 'nog'@'localhost' for table 't'",
        ),
        (
            "GRANT SELECT ON *.* TO nog@'%'",
            1045,
            "Access denied for user 'nog'@'%' (using password: YES)",
        ),
        (
            "REVOKE SELECT ON d1.* FROM sel@'%'",
            1044,
            "to database 'd1'",
        ),
        (
            "SELECT * FROM information_schema.INNODB_TRX",
            1227,
            "the PROCESS privilege",
        ),
        ("SHOW ENGINE INNODB STATUS", 1227, "the PROCESS privilege"),
        ("FLUSH TABLES", 1227, "the RELOAD privilege"),
        ("FLUSH STATUS", 1227, "the RELOAD privilege"),
        ("CREATE USER x@'%'", 1227, "the CREATE USER privilege"),
        ("DROP USER sel@'%'", 1227, "the CREATE USER privilege"),
        (
            "RENAME USER sel@'%' TO x@'%'",
            1227,
            "the CREATE USER privilege",
        ),
        (
            "ALTER USER sel@'%' IDENTIFIED BY 'x'",
            1227,
            "the CREATE USER privilege",
        ),
        ("SET GLOBAL max_connections = 10", 1227, "SUPER"),
        ("SHUTDOWN", 1227, "the SHUTDOWN privilege"),
    ];
    for (sql, want, text) in cases {
        let e = mysql_error(c.query_drop(sql));
        assert_eq!(e.code, *want, "{sql}: {}", e.message);
        assert!(e.message.contains(text), "{sql}: {}", e.message);
        let state = match want {
            1045 => "28000",
            1046 => "3D000",
            _ => "42000",
        };
        assert_eq!(e.state, state, "{sql}");
    }
    // A multi-byte name where an `INNODB_` prefix would be is an error, not a dropped
    // connection.
    let e = mysql_error(c.query_drop("SELECT * FROM information_schema.`INNODBéX`"));
    assert_eq!(e.code, 1146, "{}", e.message);
    assert_eq!(strings(&mut c, "SELECT 'alive'"), ["alive"]);
    // COM_INIT_DB and a database in the handshake are refused as USE is.
    assert_eq!(code(c.select_db("d1")), 1044);
    let opts = mysql::OptsBuilder::from_opts(srv.opts("nog", "pw")).db_name(Some("d1"));
    match Conn::new(opts) {
        Err(mysql::Error::MySqlError(e)) => assert_eq!(e.code, 1044, "{}", e.message),
        other => panic!("connecting to d1 as nog: {other:?}"),
    }
    // A prepared statement is refused at prepare.
    assert_eq!(code(c.prep("SELECT v FROM d1.t WHERE id = ?")), 1142);
    // What it may do: its own grants, SELECT without tables, information_schema.
    assert_eq!(
        strings(&mut c, "SHOW GRANTS"),
        ["GRANT USAGE ON *.* TO `nog`@`%`"]
    );
    assert_eq!(strings(&mut c, "SELECT 'ok'"), ["ok"]);
    assert_eq!(strings(&mut c, "SHOW DATABASES"), ["information_schema"]);
    let schemas = strings(
        &mut c,
        "SELECT DISTINCT TABLE_SCHEMA FROM information_schema.TABLES",
    );
    assert_eq!(schemas, ["information_schema"]);
    assert!(strings(
        &mut c,
        "SELECT TABLE_NAME FROM information_schema.COLUMNS WHERE TABLE_SCHEMA <> 'information_schema'"
    )
    .is_empty());
    assert_eq!(
        strings(
            &mut c,
            "SELECT SCHEMA_NAME FROM information_schema.SCHEMATA"
        ),
        ["information_schema"]
    );
}

#[test]
fn other_accounts_statements_are_hidden_without_process() {
    let (srv, mut root) = server();
    root.query_drop("CREATE USER watcher@'%' IDENTIFIED BY 'pw'")
        .unwrap();
    root.query_drop("GRANT PROCESS ON *.* TO watcher@'%'")
        .unwrap();
    let mut busy = srv.connect();
    let busy_id = busy.connection_id();
    let runner = std::thread::spawn(move || {
        let _: Vec<(i64, String)> = busy.query("SELECT SLEEP(3), 'secret-literal-42'").unwrap();
    });
    // Wait until root's statement shows to root.
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let n: Vec<u64> = root
            .query(format!(
                "SELECT ID FROM information_schema.PROCESSLIST WHERE ID = {busy_id} \
                 AND INFO LIKE '%secret-literal%'"
            ))
            .unwrap();
        if !n.is_empty() {
            break;
        }
        assert!(Instant::now() < deadline, "root's statement never showed");
        std::thread::sleep(Duration::from_millis(20));
    }
    let mut nog = login(&srv, "nog");
    let users = strings(&mut nog, "SELECT USER FROM information_schema.PROCESSLIST");
    assert_eq!(users, ["nog"], "only its own connection");
    let infos: Vec<Option<String>> = nog
        .query("SELECT Info FROM information_schema.PROCESSLIST")
        .unwrap();
    assert!(
        infos
            .iter()
            .flatten()
            .all(|i| !i.contains("secret-literal")),
        "{infos:?}"
    );
    let shown: Vec<mysql::Row> = nog.query("SHOW FULL PROCESSLIST").unwrap();
    assert_eq!(shown.len(), 1, "SHOW PROCESSLIST hides them too");
    // The performance_schema tables and INNODB_TRX are refused outright (see the test
    // above); with PROCESS every connection shows.
    let mut watcher = login(&srv, "watcher");
    let infos: Vec<Option<String>> = watcher
        .query("SELECT INFO FROM information_schema.PROCESSLIST")
        .unwrap();
    assert!(
        infos.iter().flatten().any(|i| i.contains("secret-literal")),
        "{infos:?}"
    );
    let trx: Vec<mysql::Row> = watcher
        .query("SELECT * FROM information_schema.INNODB_TRX")
        .unwrap();
    drop(trx);
    assert_eq!(
        code(watcher.query_drop("SELECT * FROM performance_schema.threads")),
        1142,
        "PROCESS is not SELECT on performance_schema"
    );
    runner.join().unwrap();
    // With SELECT on performance_schema, MySQL shows every thread and every sample text.
    root.query_drop("GRANT SELECT ON performance_schema.* TO nog@'%'")
        .unwrap();
    let samples = strings(
        &mut nog,
        "SELECT QUERY_SAMPLE_TEXT FROM performance_schema.events_statements_summary_by_digest",
    );
    assert!(
        samples.iter().any(|s| s.contains("secret-literal")),
        "{samples:?}"
    );
}

#[test]
fn select_on_one_database_reads_it_and_nothing_else() {
    let (srv, _root) = server();
    let mut c = login(&srv, "sel");
    let rows: Vec<(i64, i64)> = c.query("SELECT id, v FROM d1.t").unwrap();
    assert_eq!(rows, [(1, 10)]);
    c.query_drop("USE d1").unwrap();
    let rows: Vec<i64> = c.exec("SELECT v FROM t WHERE id = ?", (1,)).unwrap();
    assert_eq!(rows, [10]);
    assert_eq!(strings(&mut c, "SHOW TABLES"), ["t"]);
    assert_eq!(
        strings(&mut c, "SHOW DATABASES"),
        ["d1", "information_schema"]
    );
    let tables: Vec<(String, String)> = c
        .query(
            "SELECT TABLE_SCHEMA, TABLE_NAME FROM information_schema.TABLES \
             WHERE TABLE_SCHEMA <> 'information_schema' ORDER BY 1, 2",
        )
        .unwrap();
    assert_eq!(tables, [("d1".to_string(), "t".to_string())]);
    assert_eq!(code(c.query_drop("SELECT * FROM d2.u")), 1142);
    assert_eq!(code(c.query_drop("USE d2")), 1044);
    assert_eq!(code(c.query_drop("INSERT INTO t VALUES (2, 2)")), 1142);
    assert_eq!(code(c.query_drop("UPDATE t SET v = 1")), 1142);
    assert_eq!(code(c.query_drop("DELETE FROM t")), 1142);
    assert_eq!(code(c.query_drop("DROP TABLE t")), 1142);
    assert_eq!(
        code(c.query_drop("INSERT INTO d2.u SELECT id FROM t")),
        1142
    );
    assert_eq!(code(c.query_drop("SELECT * FROM mysql.user")), 1142);
    assert_eq!(
        mysql_error(c.query_drop("LOCK TABLES t READ")).message,
        "Access denied for user 'sel'@'%' to database 'd1'"
    );
    c.query_drop("SHOW CREATE TABLE t").unwrap();
    c.query_drop("DESCRIBE t").unwrap();
    assert_eq!(
        strings(&mut c, "SHOW GRANTS"),
        [
            "GRANT USAGE ON *.* TO `sel`@`%`",
            "GRANT SELECT ON `d1`.* TO `sel`@`%`"
        ]
    );
}

/// Each statement with the one privilege it needs on `d.t`.
const MATRIX: &[(&str, &str)] = &[
    ("SELECT * FROM d.t", "SELECT"),
    ("INSERT INTO d.t VALUES (2, 2)", "INSERT"),
    ("UPDATE d.t SET v = 3", "UPDATE"),
    ("DELETE FROM d.t", "DELETE"),
    ("CREATE INDEX iv ON d.t (v)", "INDEX"),
    ("ALTER TABLE d.t ADD COLUMN w INT", "ALTER"),
    ("DROP TABLE d.t", "DROP"),
    ("TRUNCATE TABLE d.t", "DROP"),
];
const PRIVILEGES: &[&str] = &[
    "SELECT", "INSERT", "UPDATE", "DELETE", "INDEX", "ALTER", "DROP",
];

#[test]
fn statements_by_privileges_matrix_at_every_level() {
    let srv = TestServer::start(&[]);
    let mut root = srv.connect();
    root.query_drop("CREATE DATABASE d").unwrap();
    root.query_drop("CREATE USER m@'%' IDENTIFIED BY 'pw'")
        .unwrap();
    let mut m = login(&srv, "m");
    let mut results = Vec::new();
    for level in ["d.t", "d.*", "*.*"] {
        for (sql, needed) in MATRIX {
            for p in PRIVILEGES {
                root.query_drop("DROP TABLE IF EXISTS d.t").unwrap();
                root.query_drop("CREATE TABLE d.t (id INT PRIMARY KEY, v INT)")
                    .unwrap();
                root.query_drop("INSERT INTO d.t VALUES (1, 1)").unwrap();
                root.query_drop("REVOKE ALL PRIVILEGES, GRANT OPTION FROM m@'%'")
                    .unwrap();
                root.query_drop(format!("GRANT {p} ON {level} TO m@'%'"))
                    .unwrap();
                // Global grants take effect at the next login, as in MySQL.
                if level == "*.*" {
                    m = login(&srv, "m");
                }
                let r = m.query_drop(*sql);
                let allowed = p == needed;
                match r {
                    Ok(()) => assert!(allowed, "{sql} ran with only {p} ON {level}"),
                    Err(mysql::Error::MySqlError(e)) => {
                        assert!(!allowed, "{sql} with {p} ON {level}: {}", e.message);
                        assert_eq!(e.code, 1142, "{sql} with {p} ON {level}: {}", e.message);
                        assert!(
                            e.message.starts_with(&format!("{needed} command denied")),
                            "{sql}: {}",
                            e.message
                        );
                    }
                    Err(e) => panic!("{sql}: {e}"),
                }
                results.push(allowed);
            }
        }
    }
    assert_eq!(results.len(), 3 * MATRIX.len() * PRIVILEGES.len());
    assert_eq!(results.iter().filter(|a| **a).count(), 3 * MATRIX.len());
}

#[test]
fn where_clauses_need_select_and_multi_privilege_statements_need_each() {
    let (srv, mut root) = server();
    root.query_drop("CREATE USER w@'%' IDENTIFIED BY 'pw'")
        .unwrap();
    root.query_drop("GRANT UPDATE, DELETE ON d1.t TO w@'%'")
        .unwrap();
    let mut w = login(&srv, "w");
    w.query_drop("UPDATE d1.t SET v = 5").unwrap();
    let e = mysql_error(w.query_drop("UPDATE d1.t SET v = 6 WHERE id = 1"));
    assert_eq!(e.code, 1143);
    assert_eq!(
        e.message,
        "SELECT command denied to user 'w'@'localhost' for column 'id' in table 't'"
    );
    assert_eq!(code(w.query_drop("DELETE FROM d1.t WHERE v = 5")), 1143);
    // COM_FIELD_LIST lists only a table the account holds some privilege on.
    root.query_drop("CREATE TABLE d1.hidden (id INT)").unwrap();
    let mut raw = srv.raw_connect("w", "pw").unwrap();
    raw.init_db("d1").unwrap();
    assert_eq!(raw_code(raw.raw_command(b"\x04hidden\0")), 1142);
    // A table-level grant shows that table alone of its database.
    assert_eq!(strings(&mut w, "SHOW TABLES FROM d1"), ["t"]);
    assert_eq!(
        strings(
            &mut w,
            "SELECT TABLE_NAME FROM information_schema.TABLES WHERE TABLE_SCHEMA = 'd1'"
        ),
        ["t"]
    );
    assert_eq!(
        strings(&mut w, "SHOW DATABASES"),
        ["d1", "information_schema"]
    );
    // REPLACE needs INSERT and DELETE; INSERT ... SELECT needs SELECT on the source.
    root.query_drop("GRANT INSERT ON d1.t TO w@'%'").unwrap();
    w.query_drop("REPLACE INTO d1.t VALUES (1, 7)").unwrap();
    assert_eq!(
        code(w.query_drop("INSERT INTO d1.t SELECT id + 10, v FROM d1.t")),
        1142
    );
    root.query_drop("GRANT SELECT ON d1.t TO w@'%'").unwrap();
    w.query_drop("INSERT INTO d1.t SELECT id + 10, v FROM d1.t")
        .unwrap();
    w.query_drop("DELETE FROM d1.t WHERE v = 5").unwrap();
    // A prepared statement is checked again at every execution.
    let stmt = w.prep("SELECT v FROM d1.t WHERE id = ?").unwrap();
    let v: Vec<i64> = w.exec(&stmt, (1,)).unwrap();
    assert_eq!(v, [7]);
    root.query_drop("REVOKE SELECT ON d1.t FROM w@'%'").unwrap();
    assert_eq!(code(w.exec::<i64, _, _>(&stmt, (1,))), 1142);
}

#[test]
fn grants_revoke_and_the_grant_tables_follow_mysql() {
    let (srv, mut root) = server();
    let q = |c: &mut Conn, sql: &str| c.query_drop(sql).unwrap_or_else(|e| panic!("{sql}: {e}"));
    q(&mut root, "CREATE USER g@'%' IDENTIFIED BY 'pw'");
    q(&mut root, "GRANT SELECT, INSERT ON d1.* TO g@'%'");
    q(
        &mut root,
        "GRANT ALL PRIVILEGES ON d2.u TO g@'%' WITH GRANT OPTION",
    );
    q(
        &mut root,
        "GRANT PROCESS, TP_CONNECTION_ADMIN ON *.* TO g@'%'",
    );
    assert_eq!(
        strings(&mut root, "SHOW GRANTS FOR g@'%'"),
        [
            "GRANT PROCESS ON *.* TO `g`@`%`",
            "GRANT TP_CONNECTION_ADMIN ON *.* TO `g`@`%`",
            "GRANT SELECT, INSERT ON `d1`.* TO `g`@`%`",
            "GRANT ALL PRIVILEGES ON `d2`.`u` TO `g`@`%` WITH GRANT OPTION",
        ]
    );
    let db: Vec<(String, String, String, String, String, String)> = root
        .query(
            "SELECT Host, Db, User, Select_priv, Insert_priv, Update_priv FROM mysql.db \
             WHERE User = 'g'",
        )
        .unwrap();
    assert_eq!(
        db,
        [(
            "%".into(),
            "d1".into(),
            "g".into(),
            "Y".into(),
            "Y".into(),
            "N".into()
        )]
    );
    let tp: Vec<(String, String, String, String)> = root
        .query("SELECT Db, Table_name, Grantor, Table_priv FROM mysql.tables_priv WHERE User = 'g'")
        .unwrap();
    assert_eq!(
        tp,
        [(
            "d2".into(),
            "u".into(),
            "root@localhost".into(),
            "Select,Insert,Update,Delete,Create,Drop,Grant,References,Index,Alter,Create View,Show view,Trigger"
                .into()
        )]
    );
    let user: Vec<(String, String)> = root
        .query("SELECT Process_priv, Select_priv FROM mysql.user WHERE User = 'g'")
        .unwrap();
    assert_eq!(user, [("Y".into(), "N".into())]);
    // The account passes on what it holds with GRANT OPTION, and nothing else.
    let mut g = login(&srv, "g");
    q(&mut g, "GRANT SELECT ON d2.u TO nog@'%'");
    assert_eq!(code(g.query_drop("GRANT SELECT ON d1.* TO nog@'%'")), 1044);
    // REVOKE removes rows that lose their last privilege; MySQL's errors for the rest.
    q(&mut root, "REVOKE INSERT ON d1.* FROM g@'%'");
    q(&mut root, "REVOKE SELECT ON d1.* FROM g@'%'");
    let left: Vec<String> = root
        .query("SELECT Db FROM mysql.db WHERE User = 'g'")
        .unwrap();
    assert!(left.is_empty(), "{left:?}");
    let e = mysql_error(root.query_drop("REVOKE SELECT ON d1.* FROM g@'%'"));
    assert_eq!(
        (e.code, e.message.as_str()),
        (
            1141,
            "There is no such grant defined for user 'g' on host '%'"
        )
    );
    assert_eq!(
        code(root.query_drop("REVOKE SELECT ON d1.t FROM g@'%'")),
        1147
    );
    assert_eq!(
        code(root.query_drop("GRANT SELECT ON d1.* TO nobody@'%'")),
        1410
    );
    assert_eq!(
        code(root.query_drop("GRANT PROCESS ON d1.* TO g@'%'")),
        1221
    );
    assert_eq!(
        code(root.query_drop("GRANT LOCK TABLES ON d1.t TO g@'%'")),
        1144
    );
    assert_eq!(
        code(root.query_drop("GRANT SELECT ON d1.nosuch TO g@'%'")),
        1146
    );
    assert_eq!(code(root.query_drop("SHOW GRANTS FOR nobody@'%'")), 1141);
    // root keeps every privilege but TP_CONNECTION_ADMIN.
    let root_grants = strings(&mut root, "SHOW GRANTS");
    assert!(root_grants[0].contains("SELECT, INSERT"), "{root_grants:?}");
    assert!(root_grants
        .iter()
        .all(|l| !l.contains("TP_CONNECTION_ADMIN")));
}

#[test]
fn passwords_are_stored_as_mysql_stores_them_and_can_be_changed() {
    let (srv, mut root) = server();
    let auth: Vec<(String, String, String)> = root
        .query(
            "SELECT User, plugin, authentication_string FROM mysql.user \
             WHERE User IN ('nog', 'sel') ORDER BY User",
        )
        .unwrap();
    let (_, plugin, sha2) = &auth[0];
    assert_eq!(plugin, "caching_sha2_password");
    assert!(sha2.starts_with("$A$005$"), "{sha2}");
    assert_eq!(sha2.len(), 70, "{sha2}");
    // Not the unsalted SHA256(SHA256('pw')) fast-auth scramble.
    assert!(!sha2
        .to_ascii_lowercase()
        .contains("ec7a74baa773cc5e99a439acfb045ad9396791c0a47ecb226ee4e3ae4a49bfbf"));
    assert_eq!(auth[1].2, "*D821809F681A40A6E379B50D0463EFAE20BDD122");
    let create = strings(&mut root, "SHOW CREATE USER nog@'%'");
    assert!(
        create[0].starts_with(&format!(
            "CREATE USER `nog`@`%` IDENTIFIED WITH 'caching_sha2_password' AS '{sha2}' REQUIRE NONE"
        )),
        "{create:?}"
    );
    // ALTER USER and SET PASSWORD change the password; the old one stops working.
    root.query_drop("ALTER USER nog@'%' IDENTIFIED BY 'new1'")
        .unwrap();
    assert!(Conn::new(srv.opts("nog", "pw")).is_err());
    let mut nog = Conn::new(srv.opts("nog", "new1")).unwrap();
    nog.query_drop("SET PASSWORD = 'new2'").unwrap();
    nog.query_drop("ALTER USER USER() IDENTIFIED BY 'new3'")
        .unwrap();
    Conn::new(srv.opts("nog", "new3")).unwrap();
    let after: String = root
        .query_first("SELECT authentication_string FROM mysql.user WHERE User = 'nog'")
        .unwrap()
        .unwrap();
    assert!(after.starts_with("$A$005$") && after != *sha2);
    // RENAME USER keeps the grants.
    root.query_drop("RENAME USER sel@'%' TO reader@'%'")
        .unwrap();
    let mut reader = login(&srv, "reader");
    reader.query_drop("SELECT * FROM d1.t").unwrap();
    assert_eq!(code(root.query_drop("RENAME USER sel@'%' TO x@'%'")), 1396);
    assert_eq!(
        code(root.query_drop("SET PASSWORD FOR nobody@'%' = 'x'")),
        1133
    );
    assert_eq!(
        code(root.query_drop("ALTER USER nobody@'%' IDENTIFIED BY 'x'")),
        1396
    );
}

#[test]
fn renaming_a_table_needs_alter_and_drop_and_create_and_insert_on_the_new_name() {
    let (srv, mut root) = server();
    root.query_drop("CREATE USER r@'%' IDENTIFIED BY 'pw'")
        .unwrap();
    root.query_drop("GRANT ALTER ON d1.t TO r@'%'").unwrap();
    let mut r = login(&srv, "r");
    let rename = "ALTER TABLE d1.t RENAME TO d1.t2";
    assert_eq!(
        mysql_error(r.query_drop(rename)).message,
        "DROP command denied to user 'r'@'localhost' for table 't'"
    );
    root.query_drop("GRANT DROP ON d1.t TO r@'%'").unwrap();
    assert_eq!(
        mysql_error(r.query_drop(rename)).message,
        "INSERT, CREATE command denied to user 'r'@'localhost' for table 't2'"
    );
    root.query_drop("GRANT CREATE, INSERT ON d1.* TO r@'%'")
        .unwrap();
    r.query_drop(rename).unwrap();
    let n: Vec<i64> = root.query("SELECT id FROM d1.t2").unwrap();
    assert_eq!(n, [1]);
}

#[test]
fn account_statements_column_reads_and_describing_follow_mysqls_tests() {
    let (srv, mut root) = server();
    for sql in [
        "CREATE USER cu@'%' IDENTIFIED BY 'pw'",
        "GRANT CREATE USER ON *.* TO cu@'%'",
        "CREATE USER mi@'%' IDENTIFIED BY 'pw'",
        "GRANT INSERT, UPDATE, DELETE ON mysql.* TO mi@'%'",
        "CREATE USER wo@'%' IDENTIFIED BY 'pw'",
        "GRANT INSERT, UPDATE, DELETE ON d1.t TO wo@'%'",
        "CREATE USER pr@'%' IDENTIFIED BY 'pw'",
        "GRANT PROCESS ON *.* TO pr@'%'",
        "CREATE USER gd@'%' IDENTIFIED BY 'pw'",
        "GRANT CREATE, ALTER ON *.* TO gd@'%'",
        "CREATE USER lk@'%' IDENTIFIED BY 'pw'",
        "GRANT SELECT, LOCK TABLES ON d1.* TO lk@'%'",
    ] {
        root.query_drop(sql)
            .unwrap_or_else(|e| panic!("{sql}: {e}"));
    }
    // CREATE USER creates accounts but does not set another account's password: that takes
    // UPDATE on the mysql schema.
    let mut cu = login(&srv, "cu");
    cu.query_drop("CREATE USER x1@'%'").unwrap();
    assert_eq!(
        mysql_error(cu.query_drop("SET PASSWORD FOR sel@'%' = 'pw'")).message,
        "Access denied for user 'cu'@'%' to database 'mysql'"
    );
    // INSERT, UPDATE and DELETE on the mysql schema stand in for CREATE USER.
    let mut mi = login(&srv, "mi");
    for sql in [
        "CREATE USER x2@'%'",
        "RENAME USER x2@'%' TO x3@'%'",
        "ALTER USER x3@'%' IDENTIFIED BY 'pw'",
        "SET PASSWORD FOR x3@'%' = 'pw2'",
        "DROP USER x3@'%'",
    ] {
        mi.query_drop(sql).unwrap_or_else(|e| panic!("{sql}: {e}"));
    }
    assert_eq!(code(mi.query_drop("SHOW GRANTS FOR sel@'%'")), 1044);
    // The values SET assigns read columns as WHERE does.
    let mut wo = login(&srv, "wo");
    wo.query_drop("UPDATE d1.t SET v = 2").unwrap();
    let e = mysql_error(wo.query_drop("UPDATE d1.t SET v = v + 1"));
    assert_eq!(
        (e.code, e.message.as_str()),
        (
            1143,
            "SELECT command denied to user 'wo'@'localhost' for column 'v' in table 't'"
        )
    );
    assert_eq!(
        code(wo.query_drop("INSERT INTO d1.t VALUES (1, 1) ON DUPLICATE KEY UPDATE v = v + 1")),
        1143
    );
    wo.query_drop("INSERT INTO d1.t VALUES (1, 1) ON DUPLICATE KEY UPDATE v = 3")
        .unwrap();
    // A grant on the table lets it be described; global privileges other than SELECT do not.
    wo.query_drop("DESCRIBE d1.t").unwrap();
    let mut gd = login(&srv, "gd");
    assert_eq!(code(gd.query_drop("SHOW COLUMNS FROM d1.t")), 1142);
    assert_eq!(code(gd.query_drop("SHOW INDEX FROM d1.t")), 1142);
    gd.query_drop("SHOW CREATE TABLE d1.t").unwrap();
    // Any global privilege lists a database's tables (those the account may see), not USE.
    let mut pr = login(&srv, "pr");
    assert!(strings(&mut pr, "SHOW TABLES FROM d1").is_empty());
    assert_eq!(code(pr.query_drop("USE d1")), 1044);
    // LOCK TABLES takes database-qualified names; RENAME TABLE needs ALTER and DROP.
    let mut lk = login(&srv, "lk");
    lk.query_drop("LOCK TABLES d1.t READ, d2.u AS x WRITE")
        .map(|()| panic!("d2.u is not lk's to lock"))
        .unwrap_or_else(|e| assert_eq!(code::<()>(Err(e)), 1044));
    lk.query_drop("LOCK TABLES d1.t READ").unwrap();
    lk.query_drop("UNLOCK TABLES").unwrap();
    assert_eq!(code(lk.query_drop("RENAME TABLE d1.t TO d1.t9")), 1142);
    root.query_drop("RENAME TABLE d1.t TO d1.t9").unwrap();
    let moved: Vec<i64> = root.query("SELECT id FROM d1.t9").unwrap();
    assert_eq!(moved, [1]);
}
