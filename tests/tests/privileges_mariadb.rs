//! tpbed's privilege checks beside MariaDB 10.11's: the same accounts (no grants, SELECT on
//! one database, table-level grants, PROCESS, SUPER, ...) run the same statements on both
//! servers, and each answer's class (success, with a value for the statements that show what
//! an account can see, or the error number) must agree. Where MySQL 8.0 answers differently
//! from MariaDB, tpbed follows MySQL; each such case is listed in [`MYSQL_DIFFERS`] with the
//! MySQL source that says so, and any disagreement not listed there fails the test, as does a
//! listed one that no longer occurs. The statements tpbed lacks ([`NOT_SUPPORTED`]) may answer
//! 1235 where MariaDB runs them, and must answer as MariaDB wherever it refuses them.

use std::collections::BTreeMap;
use std::fmt;

use mysql::prelude::*;
use mysql::Conn;
use tpbed_tests::{has_program, require_tool, MariaDb, TestServer};

/// The accounts, each with the grants it holds (all with password `pw`, host `%`).
const ACCOUNTS: &[(&str, &[&str])] = &[
    ("nog", &[]),
    ("dbsel", &["SELECT ON d1.*"]),
    ("tblsel", &["SELECT ON d1.t"]),
    ("tblrw", &["SELECT, INSERT, UPDATE, DELETE ON d1.t"]),
    ("tblwo", &["INSERT, UPDATE, DELETE ON d1.t"]),
    ("tblddl", &["CREATE, DROP, ALTER, INDEX ON d1.t"]),
    ("dball", &["ALL PRIVILEGES ON d1.*"]),
    ("dblock", &["SELECT, LOCK TABLES ON d1.*"]),
    ("dbgrant", &["SELECT ON d1.* WITH GRANT OPTION"]),
    ("prc", &["PROCESS ON *.*"]),
    ("msel", &["SELECT ON mysql.*"]),
    ("psel", &["SELECT ON performance_schema.*"]),
    ("rld", &["RELOAD ON *.*"]),
    ("sup", &["SUPER ON *.*"]),
    ("cuser", &["CREATE USER ON *.*"]),
    ("gdml", &["SELECT, INSERT, UPDATE, DELETE ON *.*"]),
    ("gddl", &["CREATE, DROP, ALTER, INDEX ON *.*"]),
];

/// How a statement's answer is compared.
#[derive(Clone, Copy, PartialEq)]
enum Kind {
    /// Success or the error number.
    Outcome,
    /// As [`Kind::Outcome`], plus the first column of the first row on success.
    Value,
    /// As [`Kind::Outcome`]; on success on either server the fixture is rebuilt on both.
    Mutates,
}
use Kind::{Mutates, Outcome, Value};

/// The statements every account runs, in order. `{user}` stands for the account's name and
/// `{victim}` for the connection id of an idle administrator connection on that server.
const STATEMENTS: &[(&str, Kind)] = &[
    ("SELECT * FROM d1.t", Outcome),
    ("SELECT v FROM d1.t WHERE id = 1", Value),
    ("SELECT COUNT(*) FROM d1.t JOIN d2.u", Value),
    ("SELECT * FROM d2.u", Outcome),
    ("SELECT * FROM d1.nosuch", Outcome),
    ("INSERT INTO d1.t VALUES (100, 1)", Mutates),
    ("INSERT INTO d1.t SELECT id + 200, v FROM d1.t", Mutates),
    ("INSERT INTO d2.u SELECT id + 300 FROM d1.t", Mutates),
    (UPSERT, Mutates),
    (
        "INSERT INTO d1.t VALUES (1, 1) ON DUPLICATE KEY UPDATE v = v + 1",
        Mutates,
    ),
    (
        "INSERT INTO d1.t VALUES (1, 1) ON DUPLICATE KEY UPDATE v = VALUES(v)",
        Mutates,
    ),
    (
        "UPDATE d1.t JOIN d2.u ON d1.t.id = d2.u.id SET d1.t.v = 7",
        Mutates,
    ),
    (
        "DELETE d1.t FROM d1.t JOIN d2.u ON d1.t.id = d2.u.id",
        Mutates,
    ),
    ("SELECT COUNT(*) FROM d1.t JOIN d2.u JOIN d1.t AS t2", Value),
    ("REPLACE INTO d1.t VALUES (1, 10)", Mutates),
    ("UPDATE d1.t SET v = 2", Mutates),
    ("UPDATE d1.t SET v = v + 1", Mutates),
    ("UPDATE d1.t SET v = 3 WHERE id = 1", Mutates),
    ("DELETE FROM d1.t WHERE id = 100", Mutates),
    ("DELETE FROM d1.t", Mutates),
    ("CREATE TABLE d1.n (id INT)", Mutates),
    ("CREATE TABLE d2.n (id INT)", Mutates),
    ("CREATE TABLE d1.n LIKE d1.t", Mutates),
    ("CREATE TABLE d1.n AS SELECT * FROM d1.t", Mutates),
    ("ALTER TABLE d1.t ADD COLUMN w INT", Mutates),
    ("CREATE INDEX iv ON d1.t (v)", Mutates),
    ("TRUNCATE TABLE d1.t", Mutates),
    ("DROP TABLE d1.t", Mutates),
    ("DROP TABLE d2.u", Mutates),
    ("RENAME TABLE d1.t TO d1.t9", Mutates),
    ("LOCK TABLES d1.t READ", Outcome),
    ("LOCK TABLES d1.t WRITE", Outcome),
    ("ANALYZE TABLE d1.t", Outcome),
    ("CHECKSUM TABLE d1.t", Outcome),
    ("CREATE DATABASE d3", Mutates),
    ("DROP DATABASE d2", Mutates),
    ("USE d1", Outcome),
    ("USE d2", Outcome),
    ("SHOW TABLES FROM d1", Outcome),
    ("SHOW CREATE TABLE d1.t", Outcome),
    ("SHOW COLUMNS FROM d1.t", Outcome),
    ("DESCRIBE d1.t", Outcome),
    ("SHOW INDEX FROM d1.t", Outcome),
    ("SHOW TABLE STATUS FROM d1", Outcome),
    ("SHOW CREATE DATABASE d1", Outcome),
    ("EXPLAIN SELECT * FROM d1.t", Outcome),
    (
        "SELECT COUNT(*) FROM information_schema.TABLES WHERE TABLE_SCHEMA IN ('d1', 'd2')",
        Value,
    ),
    (
        "SELECT COUNT(*) FROM information_schema.SCHEMATA \
         WHERE SCHEMA_NAME IN ('d1', 'd2', 'mysql', 'performance_schema')",
        Value,
    ),
    ("SHOW GRANTS", Outcome),
    ("SHOW GRANTS FOR CURRENT_USER", Outcome),
    ("SHOW GRANTS FOR victim@'%'", Outcome),
    ("SHOW CREATE USER victim@'%'", Outcome),
    ("SHOW CREATE USER {user}@'%'", Outcome),
    ("SHOW GRANTS FOR dbsel@'%'", Outcome),
    (
        "SET PASSWORD FOR victim@'%' = '*D821809F681A40A6E379B50D0463EFAE20BDD122'",
        Outcome,
    ),
    ("ALTER USER victim@'%' IDENTIFIED BY 'pw'", Outcome),
    ("CREATE USER x1@'%'", Mutates),
    ("RENAME USER spare@'%' TO spare2@'%'", Mutates),
    ("DROP USER spare@'%'", Mutates),
    ("GRANT SELECT ON d1.* TO victim@'%'", Mutates),
    ("GRANT SELECT ON d1.t TO victim@'%'", Mutates),
    ("GRANT PROCESS ON *.* TO victim@'%'", Mutates),
    ("REVOKE SELECT ON d1.* FROM dbsel@'%'", Mutates),
    ("GRANT SELECT ON *.* TO victim@'%'", Mutates),
    (
        "REVOKE ALL PRIVILEGES, GRANT OPTION FROM victim@'%'",
        Mutates,
    ),
    ("KILL QUERY {victim}", Outcome),
    (
        "SET GLOBAL max_connections = @@global.max_connections",
        Outcome,
    ),
    ("SET GLOBAL wait_timeout = 28800", Outcome),
    ("SHUTDOWN", Outcome),
    ("FLUSH TABLES", Outcome),
    ("FLUSH STATUS", Outcome),
    ("SHOW ENGINE INNODB STATUS", Outcome),
    ("SELECT COUNT(*) FROM mysql.user", Outcome),
    ("SELECT COUNT(*) FROM mysql.db", Outcome),
    ("SELECT COUNT(*) FROM mysql.tables_priv", Outcome),
    ("SELECT authentication_string FROM mysql.user", Outcome),
    (
        "SELECT COUNT(*) > 0 FROM information_schema.PROCESSLIST WHERE USER <> '{user}'",
        Value,
    ),
    ("SELECT COUNT(*) FROM information_schema.PROCESSLIST", Value),
    ("SHOW PROCESSLIST", Outcome),
    ("SELECT COUNT(*) FROM performance_schema.threads", Outcome),
    (
        "SELECT COUNT(*) FROM information_schema.INNODB_TRX",
        Outcome,
    ),
    (
        "SELECT COUNT(*) FROM information_schema.INNODB_TRX WHERE trx_mysql_thread_id = {holder}",
        Value,
    ),
    (DIGEST_SAMPLES, Outcome),
    (DATA_LOCKS, Outcome),
];

/// Disagreements where tpbed answers as MySQL 8.0 does and MariaDB 10.11 otherwise:
/// (account, statement, tpbed's answer, MariaDB's answer, the MySQL source for tpbed's).
const MYSQL_DIFFERS: &[(&str, &str, &str, &str, &str)] = &[
    ("psel", DIGEST_SAMPLES, "ok", "1054", SAMPLE_SOURCE),
    ("gdml", DIGEST_SAMPLES, "ok", "1054", SAMPLE_SOURCE),
    ("psel", DATA_LOCKS, "ok", "1146", DATA_LOCKS_SOURCE),
    ("gdml", DATA_LOCKS, "ok", "1146", DATA_LOCKS_SOURCE),
    (
        "tblwo",
        UPSERT,
        "ok",
        "1143",
        "MySQL 8.0 source, sql/sql_insert.cc, Sql_cmd_insert_base::prepare_inner: the columns \
         ON DUPLICATE KEY UPDATE assigns are resolved wanting UPDATE, only its values wanting \
         SELECT (MariaDB 10.11 also wants SELECT on the assigned column)",
    ),
];

const UPSERT: &str = "INSERT INTO d1.t VALUES (1, 1) ON DUPLICATE KEY UPDATE v = 5";

/// Statements tpbed does not run (1235) once their privileges are granted; the test still
/// requires MariaDB's answer wherever MariaDB refuses them.
const NOT_SUPPORTED: &[&str] = &[
    "CREATE TABLE d1.n LIKE d1.t",
    "CREATE TABLE d1.n AS SELECT * FROM d1.t",
    "UPDATE d1.t JOIN d2.u ON d1.t.id = d2.u.id SET d1.t.v = 7",
    "DELETE d1.t FROM d1.t JOIN d2.u ON d1.t.id = d2.u.id",
];

const DIGEST_SAMPLES: &str =
    "SELECT COUNT(QUERY_SAMPLE_TEXT) FROM performance_schema.events_statements_summary_by_digest";
const SAMPLE_SOURCE: &str = "MySQL 8.0 Reference Manual, \"Statement Summary Tables\": \
     events_statements_summary_by_digest has QUERY_SAMPLE_TEXT since 8.0.3 \
     (MariaDB 10.11's table has no such column)";
const DATA_LOCKS: &str = "SELECT COUNT(*) FROM performance_schema.data_locks";
const DATA_LOCKS_SOURCE: &str = "MySQL 8.0 Reference Manual, \"The data_locks Table\" \
     (performance_schema.data_locks is new in MySQL 8.0; MariaDB 10.11 has no such table)";

/// One server's answer to one statement.
#[derive(Clone, PartialEq, Eq)]
enum Answer {
    /// Success; with the first value for [`Kind::Value`] statements.
    Ok(Option<String>),
    /// The error number.
    Err(u16),
}

impl fmt::Display for Answer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Answer::Ok(None) => write!(f, "ok"),
            Answer::Ok(Some(v)) => write!(f, "ok {v}"),
            Answer::Err(code) => write!(f, "{code}"),
        }
    }
}

/// One server under comparison: its administrator connection, and the ids of an idle
/// connection (the KILL target) and one holding an open transaction.
struct Side {
    admin: Conn,
    victim: u32,
    holder: u32,
    /// The victim and holder connections, open for the whole test.
    _conns: Vec<Conn>,
    /// How to reach the server (each account logs in with its own name).
    opts: mysql::OptsBuilder,
}

fn text(v: mysql::Value) -> String {
    match v {
        mysql::Value::NULL => "NULL".into(),
        mysql::Value::Bytes(b) => String::from_utf8_lossy(&b).into_owned(),
        mysql::Value::Int(i) => i.to_string(),
        mysql::Value::UInt(u) => u.to_string(),
        other => format!("{other:?}"),
    }
}

fn run(c: &mut Conn, sql: &str, kind: Kind) -> Answer {
    let r = if kind == Value {
        c.query_first::<mysql::Row, _>(sql)
            .map(|row| row.and_then(|r| r.unwrap().into_iter().next()).map(text))
    } else {
        c.query_drop(sql).map(|()| None)
    };
    match r {
        Ok(v) => Answer::Ok(v),
        Err(mysql::Error::MySqlError(e)) => Answer::Err(e.code),
        Err(e) => panic!("{sql}: {e}"),
    }
}

fn admin(c: &mut Conn, sql: &str) {
    c.query_drop(sql).unwrap_or_else(|e| panic!("{sql}: {e}"));
}

/// Databases `d1` (table `t`, one row) and `d2` (table `u`), and the accounts `victim` and
/// `spare` with no grants; dropped and made again after each statement that changed them.
fn fixture(c: &mut Conn) {
    for sql in [
        "DROP DATABASE IF EXISTS d1",
        "DROP DATABASE IF EXISTS d2",
        "DROP DATABASE IF EXISTS d3",
        "CREATE DATABASE d1",
        "CREATE TABLE d1.t (id INT PRIMARY KEY, v INT)",
        "INSERT INTO d1.t VALUES (1, 10)",
        "CREATE DATABASE d2",
        "CREATE TABLE d2.u (id INT PRIMARY KEY)",
        "INSERT INTO d2.u VALUES (1)",
        "DROP USER IF EXISTS victim@'%', spare@'%', spare2@'%', x1@'%'",
        "CREATE USER victim@'%' IDENTIFIED BY 'pw'",
        "CREATE USER spare@'%' IDENTIFIED BY 'pw'",
    ] {
        admin(c, sql);
    }
}

impl Side {
    fn new(opts: mysql::OptsBuilder, admin_user: &str, admin_pw: &str) -> Side {
        let admin_opts = || {
            opts.clone()
                .user(Some(admin_user))
                .pass(Some(admin_pw))
                .db_name(None::<String>)
        };
        let mut a = Conn::new(admin_opts()).expect("administrator connection");
        fixture(&mut a);
        for sql in [
            "CREATE DATABASE d9",
            "CREATE TABLE d9.h (id INT PRIMARY KEY)",
            "INSERT INTO d9.h VALUES (1)",
        ] {
            admin(&mut a, sql);
        }
        for (name, grants) in ACCOUNTS {
            admin(
                &mut a,
                &format!("CREATE USER {name}@'%' IDENTIFIED BY 'pw'"),
            );
            for g in *grants {
                let (privs, level) = g.split_once(" ON ").expect("privileges ON level");
                let (level, option) = match level.strip_suffix(" WITH GRANT OPTION") {
                    Some(level) => (level, " WITH GRANT OPTION"),
                    None => (level, ""),
                };
                admin(
                    &mut a,
                    &format!("GRANT {privs} ON {level} TO {name}@'%'{option}"),
                );
            }
        }
        let victim = Conn::new(admin_opts()).expect("victim connection");
        let mut holder = Conn::new(admin_opts()).expect("holder connection");
        admin(&mut holder, "BEGIN");
        admin(&mut holder, "SELECT * FROM d9.h FOR UPDATE");
        Side {
            victim: victim.connection_id(),
            holder: holder.connection_id(),
            admin: a,
            _conns: vec![victim, holder],
            opts,
        }
    }

    fn login(&self, user: &str) -> Conn {
        Conn::new(self.opts.clone().user(Some(user)).pass(Some("pw")))
            .unwrap_or_else(|e| panic!("log in as {user}: {e}"))
    }

    fn statement(&self, template: &str, user: &str) -> String {
        template
            .replace("{user}", user)
            .replace("{victim}", &self.victim.to_string())
            .replace("{holder}", &self.holder.to_string())
    }
}

fn tcp(port: u16) -> mysql::OptsBuilder {
    mysql::OptsBuilder::new()
        .ip_or_hostname(Some("127.0.0.1"))
        .tcp_port(port)
        .prefer_socket(false)
}

#[test]
fn statements_by_privileges_agree_with_mariadb() {
    if !require_tool("mariadbd", has_program("mariadbd"))
        || !require_tool("the mariadb CLI", has_program("mariadb"))
    {
        return;
    }
    let mdb = MariaDb::start("privs", "64M", 100);
    mdb.root_sql(
        "CREATE USER admin@'%' IDENTIFIED BY 'admin'; \
         GRANT ALL PRIVILEGES ON *.* TO admin@'%' WITH GRANT OPTION;",
    );
    let srv = TestServer::start(&[]);
    let mut sides = [
        Side::new(tcp(srv.port), "root", ""),
        Side::new(tcp(mdb.port), "admin", "admin"),
    ];
    let listed: BTreeMap<(&str, &str), (&str, &str)> = MYSQL_DIFFERS
        .iter()
        .map(|(user, sql, ours, theirs, _)| ((*user, *sql), (*ours, *theirs)))
        .collect();
    let mut unlisted = Vec::new();
    let mut seen_listed = Vec::new();
    let mut cases = 0;
    let mut unsupported = 0;
    for (user, _) in ACCOUNTS {
        let mut conns = [sides[0].login(user), sides[1].login(user)];
        for (template, kind) in STATEMENTS {
            let answers: Vec<Answer> = (0..2)
                .map(|i| {
                    let sql = sides[i].statement(template, user);
                    let a = run(&mut conns[i], &sql, *kind);
                    if template.starts_with("LOCK TABLES") {
                        let _ = conns[i].query_drop("UNLOCK TABLES");
                    }
                    a
                })
                .collect();
            cases += 1;
            if *kind == Mutates && answers.iter().any(|a| matches!(a, Answer::Ok(_))) {
                for side in &mut sides {
                    fixture(&mut side.admin);
                    regrant(&mut side.admin);
                }
            }
            let (ours, theirs) = (answers[0].to_string(), answers[1].to_string());
            if ours == theirs {
                continue;
            }
            if NOT_SUPPORTED.contains(template) && ours == "1235" && theirs.starts_with("ok") {
                unsupported += 1;
                continue;
            }
            match listed.get(&(*user, *template)) {
                Some(&(o, t)) if o == ours && t == theirs => {
                    seen_listed.push((*user, *template));
                }
                _ => unlisted.push(format!(
                    "{user}: {template}: tpbed {ours}, MariaDB {theirs}"
                )),
            }
        }
    }
    assert_eq!(cases, ACCOUNTS.len() * STATEMENTS.len());
    eprintln!(
        "{cases} cases: {} listed MySQL-vs-MariaDB differences, {unsupported} refused as \
         unsupported where MariaDB runs them, the rest the same answer",
        seen_listed.len()
    );
    let stale: Vec<_> = listed.keys().filter(|k| !seen_listed.contains(k)).collect();
    assert!(
        unlisted.is_empty() && stale.is_empty(),
        "{} of {cases} cases differ from MariaDB without a listed MySQL source:\n{}\n\
         listed differences that no longer occur: {stale:?}",
        unlisted.len(),
        unlisted.join("\n")
    );
}

/// Restores the grants the statements in the matrix may have changed on existing accounts.
fn regrant(c: &mut Conn) {
    admin(c, "REVOKE ALL PRIVILEGES, GRANT OPTION FROM dbsel@'%'");
    admin(c, "GRANT SELECT ON d1.* TO dbsel@'%'");
}
