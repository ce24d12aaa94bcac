//! Table locks and dumps through the real binary: `LOCK TABLES ... READ|WRITE` / `UNLOCK
//! TABLES` (1100 for a table not locked, the implicit commit, another session's write
//! waiting for a READ lock); `CHECKSUM TABLE`; character sets and collations kept as given;
//! the catalog tables dump tools read (`mysql.user`, `information_schema.FILES`,
//! `PARTITIONS`) and their `IN (SELECT ...)`; and the round trip of a database with
//! sysbench's tables, a table of every column type, every byte value in a BLOB and foreign
//! keys: real `mariadb-dump` runs (default options and `--single-transaction`) of tpbed load
//! with the `mariadb` CLI into a fresh tpbed and into a private MariaDB, a MariaDB dump of
//! the same schema loads into tpbed, and the data compares equal on all of them; a
//! `--databases` dump creates its databases in a fresh server.

use std::thread;
use std::time::{Duration, Instant};

use mysql::prelude::*;
use mysql::Conn;
use tpbed_tests::{
    cli_output, code, has_program, mysql_error, require_tool, show_create_table, MariaDb,
    TestServer,
};

fn server_with_db() -> (TestServer, Conn) {
    TestServer::with_database("d")
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

/// The database every server holds the dumped tables in, with a collation MariaDB knows too.
const CREATE_DB: &str =
    "CREATE DATABASE d DEFAULT CHARACTER SET utf8mb4 COLLATE utf8mb4_general_ci";

/// Every byte value, as a hex literal.
fn every_byte() -> String {
    let hex: String = (0..=255u8).map(|b| format!("{b:02X}")).collect();
    format!("X'{hex}'")
}

/// The every-type table's columns: a definition and the literals of rows 1 and 2 (row 3 is
/// NULL in every column). A new column type is one line here.
fn every_type_columns() -> Vec<(&'static str, [String; 2])> {
    let row = |a: &str, b: &str| [a.to_string(), b.to_string()];
    vec![
        ("ti TINYINT", row("-128", "127")),
        ("tu TINYINT UNSIGNED", row("0", "255")),
        ("si SMALLINT", row("-32768", "32767")),
        ("su SMALLINT UNSIGNED", row("0", "65535")),
        ("mi MEDIUMINT", row("-8388608", "8388607")),
        ("mu MEDIUMINT UNSIGNED", row("0", "16777215")),
        ("i INT", row("-2147483648", "2147483647")),
        ("iu INT UNSIGNED", row("0", "4294967295")),
        (
            "bi BIGINT",
            row("-9223372036854775808", "9223372036854775807"),
        ),
        ("bu BIGINT UNSIGNED", row("0", "18446744073709551615")),
        ("f FLOAT", row("1.5", "-3.25")),
        ("db DOUBLE", row("3.141592653589793", "-1e300")),
        (
            "de DECIMAL(20,6)",
            row("-12345678901234.123456", "0.000001"),
        ),
        ("ch CHAR(10)", row("'abc'", "'é'")),
        ("vc VARCHAR(64)", row("'héllo wörld'", "''")),
        ("bn BINARY(4)", row("X'00FF0001'", "'ab'")),
        ("vb VARBINARY(300)", [every_byte(), "X'00FF'".into()]),
        ("tt TINYTEXT", row("'t'", "'tab\\there'")),
        ("tx TEXT", row("'multi\\nline'", "'quote\\'s'")),
        ("mt MEDIUMTEXT", row("'m'", "'back\\\\slash'")),
        ("lt LONGTEXT", row("'l'", "'😀'")),
        ("tb TINYBLOB", row("X'00FF'", "X'FF00'")),
        ("bl BLOB", [every_byte(), "X'00FF'".into()]),
        ("mb MEDIUMBLOB", row("X'00'", "X'FF'")),
        ("lb LONGBLOB", row("X'0A0D1A5C2722'", "X''")),
        ("dt DATE", row("'2024-01-02'", "'1000-01-01'")),
        (
            "dtm DATETIME",
            row("'2024-01-02 00:00:00'", "'2024-12-31 23:59:59'"),
        ),
        (
            "dtm6 DATETIME(6)",
            row("'2024-01-02 00:00:00'", "'2024-01-02 03:04:05.123456'"),
        ),
        (
            "ts TIMESTAMP NULL",
            row("'2024-01-02 00:00:00'", "'2038-01-01 00:00:00'"),
        ),
        (
            "ts6 TIMESTAMP(6) NULL",
            row("'2024-01-02 00:00:00.5'", "'2030-01-02 03:04:05.000001'"),
        ),
        (
            "en ENUM('pending','claimed','done')",
            row("'claimed'", "'done'"),
        ),
        ("st SET('a','b','c')", row("'a,c'", "''")),
        ("js JSON", row("'{\"a\": 1, \"b\": [1, 2]}'", "'[]'")),
        ("tm TIME", row("'-838:59:59'", "'12:34:56'")),
        ("tm3 TIME(3)", row("'838:59:58.999'", "'00:00:00.5'")),
        ("yr YEAR", row("1901", "2155")),
        ("bt BIT(10)", row("b'1111111111'", "b'0'")),
        (
            "d65 DECIMAL(65,30)",
            row(
                "'-99999999999999999999999999999999999.999999999999999999999999999999'",
                "'0.000000000000000000000000000001'",
            ),
        ),
    ]
}

/// sysbench's table definition (as `oltp_common.lua` creates it for MySQL) with `rows` rows.
fn sysbench_table(name: &str, rows: u32) -> String {
    let values: Vec<String> = (1..=rows)
        .map(|i| format!("({}, '{i:011}-text', 'pad-{i}')", i * 7 % 100))
        .collect();
    format!(
        "CREATE TABLE {name} (id INTEGER NOT NULL AUTO_INCREMENT, k INTEGER DEFAULT '0' NOT NULL, \
         c CHAR(120) DEFAULT '' NOT NULL, pad CHAR(60) DEFAULT '' NOT NULL, PRIMARY KEY (id)) \
         ENGINE = InnoDB;\nCREATE INDEX k_1 ON {name}(k);\n\
         INSERT INTO {name} (k, c, pad) VALUES {};\n",
        values.join(",")
    )
}

/// The schema and data every server is given: sysbench tables, the every-type table, a
/// latin1 parent and a child with a latin1 column and foreign keys (one to a sysbench
/// table, dumped before its parent: dumps turn foreign_key_checks off).
fn schema_sql() -> String {
    let cols = every_type_columns();
    let defs: Vec<&str> = cols.iter().map(|(d, _)| *d).collect();
    let mut sql = sysbench_table("sbtest1", 200) + &sysbench_table("sbtest2", 50);
    sql += &format!(
        "CREATE TABLE every_type (id INT PRIMARY KEY, {});\n",
        defs.join(", ")
    );
    for r in 0..2 {
        let lits: Vec<&str> = cols.iter().map(|(_, l)| l[r].as_str()).collect();
        sql += &format!(
            "INSERT INTO every_type VALUES ({}, {});\n",
            r + 1,
            lits.join(", ")
        );
    }
    sql += "INSERT INTO every_type (id) VALUES (3);\n";
    sql += "CREATE TABLE parent (id INT PRIMARY KEY, name VARCHAR(20)) DEFAULT CHARSET=latin1;\n\
            CREATE TABLE a_child (id INT PRIMARY KEY, k INT NOT NULL, pid INT, \
            note VARCHAR(20) CHARACTER SET latin1 COLLATE latin1_swedish_ci, \
            CONSTRAINT a_fk FOREIGN KEY (k) REFERENCES sbtest1 (id) ON DELETE CASCADE, \
            CONSTRAINT p_fk FOREIGN KEY (pid) REFERENCES parent (id));\n\
            INSERT INTO parent VALUES (1, 'année'), (2, 'b');\n\
            INSERT INTO a_child VALUES (1, 5, 1, 'x'), (2, 7, NULL, 'çà'), (3, 7, 2, NULL);\n";
    sql
}

/// The tables of `schema_sql`.
const TABLES: &[&str] = &["a_child", "every_type", "parent", "sbtest1", "sbtest2"];

/// Runs `program` (the mariadb CLI or mariadb-dump) and requires it to succeed without a
/// word on stderr; returns its stdout.
fn run_clean(program: &str, port: u16, args: &[&str], input: &[u8]) -> Vec<u8> {
    let out = cli_output(program, port, args, input);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success() && stderr.is_empty(),
        "{program} {args:?}: {stderr}"
    );
    out.stdout
}

/// How a column enters the per-row CRC both servers compute alike, by its
/// information_schema `DATA_TYPE`: binary strings as hex, text converted to utf8mb4 (a
/// latin1 column's bytes differ between MariaDB and tpbed), other types as their text; a
/// NULL marked apart from any value. A new type that prints differently on the two servers
/// gets its own arm here.
fn checksum_expr(name: &str, data_type: &str) -> String {
    let v = if data_type.contains("binary") || data_type.contains("blob") {
        format!("HEX(`{name}`)")
    } else if data_type.contains("char") || data_type.contains("text") {
        format!("CONVERT(`{name}` USING utf8mb4)")
    } else {
        format!("`{name}`")
    };
    format!("IFNULL(CONCAT('=', {v}), '-')")
}

/// Per table: `COUNT(*)` and the sum of a CRC32 per row over every column (see
/// [`checksum_expr`]), computed the same way by tpbed and MariaDB. The columns are read from
/// `c`'s information_schema.
fn crc_checksums(c: &mut Conn, db: &str) -> Vec<(String, String)> {
    TABLES
        .iter()
        .map(|t| {
            let cols: Vec<(String, String)> = c
                .exec(
                    "SELECT COLUMN_NAME, DATA_TYPE FROM information_schema.COLUMNS \
                     WHERE TABLE_SCHEMA = ? AND TABLE_NAME = ? ORDER BY ORDINAL_POSITION",
                    (db, *t),
                )
                .unwrap();
            assert!(!cols.is_empty(), "{t}");
            let exprs: Vec<String> = cols
                .iter()
                .map(|(name, ty)| checksum_expr(name, ty))
                .collect();
            let sum: (i64, Option<String>) = c
                .query_first(format!(
                    "SELECT COUNT(*), CAST(SUM(CRC32(CONCAT_WS('#', {}))) AS CHAR) FROM {db}.{t}",
                    exprs.join(", ")
                ))
                .unwrap()
                .unwrap();
            (
                t.to_string(),
                format!("{} {}", sum.0, sum.1.unwrap_or_default()),
            )
        })
        .collect()
}

/// `CHECKSUM TABLE` of every table of `db`.
fn checksum_table(c: &mut Conn, db: &str) -> Vec<(String, Option<u64>)> {
    let list: Vec<String> = TABLES.iter().map(|t| format!("{db}.{t}")).collect();
    c.query(format!("CHECKSUM TABLE {}", list.join(", ")))
        .unwrap()
}

/// A fresh tpbed with database `d`, into which the mariadb CLI loads `dump`.
fn load_into_fresh_tpbed(dump: &[u8]) -> (TestServer, Conn) {
    let srv = TestServer::start(&[]);
    let mut c = srv.connect();
    c.query_drop(CREATE_DB).unwrap();
    run_clean("mariadb", srv.port, &["-uroot", "d"], dump);
    (srv, c)
}

/// A connection to the private MariaDB as its user sbtest, in utf8mb4 (the `mysql` crate
/// asks for utf8mb4_0900_ai_ci, which MariaDB 10.11 does not know).
fn mariadb_conn(mdb: &MariaDb) -> Conn {
    let opts = mysql::OptsBuilder::new()
        .ip_or_hostname(Some("127.0.0.1"))
        .tcp_port(mdb.port)
        .user(Some("sbtest"))
        .pass(Some("sbtest"))
        .db_name(Some("sbtest"))
        .init(vec!["SET NAMES utf8mb4"])
        .prefer_socket(false);
    Conn::new(opts).expect("connect to MariaDB")
}

#[test]
fn dumps_round_trip_between_tpbed_and_mariadb() {
    if !require_tool("mariadb-dump", has_program("mariadb-dump"))
        || !require_tool("mariadb", has_program("mariadb"))
        || !require_tool("mariadbd", has_program("mariadbd"))
    {
        return;
    }
    let schema = schema_sql();
    let srv = TestServer::start(&[]);
    let mut c = srv.connect();
    c.query_drop(CREATE_DB).unwrap();
    let utf8mb4 = "--default-character-set=utf8mb4";
    run_clean(
        "mariadb",
        srv.port,
        &[utf8mb4, "-uroot", "d"],
        schema.as_bytes(),
    );
    let crc = crc_checksums(&mut c, "d");
    let checksums = checksum_table(&mut c, "d");
    let creates: Vec<String> = TABLES
        .iter()
        .map(|t| show_create_table(&mut c, &format!("d.{t}")))
        .collect();
    // A nullable TIMESTAMP says NULL, as MySQL prints it.
    assert!(
        creates[1].contains("`ts6` timestamp(6) NULL DEFAULT NULL,"),
        "{}",
        creates[1]
    );
    let every: Vec<u8> = c
        .query_first("SELECT vb FROM d.every_type WHERE id = 1")
        .unwrap()
        .unwrap();
    assert_eq!(every, (0..=255u8).collect::<Vec<u8>>());

    // The same schema and data in MariaDB compare equal, and its dump loads into tpbed.
    let mdb = MariaDb::start("dump", "64M", 50);
    let mut m = mariadb_conn(&mdb);
    m.query_drop("ALTER DATABASE sbtest CHARACTER SET utf8mb4 COLLATE utf8mb4_general_ci")
        .unwrap();
    let mariadb_cli = ["-usbtest", "-psbtest", "sbtest"];
    let mut schema_cli = vec![utf8mb4];
    schema_cli.extend(mariadb_cli);
    run_clean("mariadb", mdb.port, &schema_cli, schema.as_bytes());
    assert_eq!(
        crc_checksums(&mut m, "sbtest"),
        crc,
        "MariaDB holds the same data"
    );
    let from_mariadb = run_clean("mariadb-dump", mdb.port, &mariadb_cli, b"");
    let (_fresh, mut f) = load_into_fresh_tpbed(&from_mariadb);
    assert_eq!(crc_checksums(&mut f, "d"), crc, "MariaDB's dump in tpbed");
    assert_eq!(
        checksum_table(&mut f, "d"),
        checksums,
        "MariaDB's dump in tpbed"
    );

    // The XML form runs too (the mariadb CLI does not load it).
    let xml = run_clean("mariadb-dump", srv.port, &["-uroot", "--xml", "d"], b"");
    assert!(String::from_utf8_lossy(&xml).contains("<table_data name=\"every_type\">"));
    for options in [
        &[][..],
        &["--single-transaction"][..],
        &["--routines", "--events", "--triggers"][..],
    ] {
        let mut args = vec!["-uroot"];
        args.extend_from_slice(options);
        args.push("d");
        let dump = run_clean("mariadb-dump", srv.port, &args, b"");
        let text = String::from_utf8_lossy(&dump);
        if options.is_empty() {
            assert!(text.contains("LOCK TABLES `sbtest1` WRITE;"), "{text}");
            assert!(
                text.contains("ALTER TABLE `sbtest1` DISABLE KEYS"),
                "{text}"
            );
        }
        // Into a fresh tpbed: the same definitions, data and checksums.
        let (_fresh, mut f) = load_into_fresh_tpbed(&dump);
        let reloaded: Vec<String> = TABLES
            .iter()
            .map(|t| show_create_table(&mut f, &format!("d.{t}")))
            .collect();
        assert_eq!(reloaded, creates, "{options:?}");
        assert_eq!(crc_checksums(&mut f, "d"), crc, "{options:?}");
        assert_eq!(checksum_table(&mut f, "d"), checksums, "{options:?}");
        // The reloaded foreign keys are enforced.
        f.query_drop("DELETE FROM d.sbtest1 WHERE id = 5").unwrap();
        assert_eq!(
            f.query_first::<i64, _>("SELECT COUNT(*) FROM d.a_child")
                .unwrap(),
            Some(2)
        );
        assert_eq!(
            code(f.query_drop("INSERT INTO d.a_child VALUES (9, 9999, NULL, '')")),
            1452
        );
        // Into MariaDB, over the tables it holds: the same data.
        run_clean("mariadb", mdb.port, &mariadb_cli, &dump);
        assert_eq!(
            crc_checksums(&mut m, "sbtest"),
            crc,
            "{options:?} in MariaDB"
        );
        let note: String = m
            .query_first(
                "SELECT CHARACTER_SET_NAME FROM information_schema.COLUMNS \
                          WHERE TABLE_SCHEMA = 'sbtest' AND TABLE_NAME = 'a_child' \
                          AND COLUMN_NAME = 'note'",
            )
            .unwrap()
            .unwrap();
        assert_eq!(note, "latin1", "{options:?}");
    }
}

/// `mariadb-dump --databases` writes each database's own `CREATE DATABASE` from SHOW CREATE
/// DATABASE, with MySQL 8.0's `/*!80016 DEFAULT ENCRYPTION='N' */`; the dump loads into a
/// fresh server that has no such database yet. The `mysql` log tables are listed and
/// defined as MySQL defines them, as whole-server dumps read them.
#[test]
fn database_dumps_create_their_databases_and_log_tables_are_defined() {
    if !require_tool("mariadb-dump", has_program("mariadb-dump"))
        || !require_tool("mariadb", has_program("mariadb"))
    {
        return;
    }
    let srv = TestServer::start(&[]);
    let mut c = srv.connect();
    c.query_drop(CREATE_DB).unwrap();
    run_clean(
        "mariadb",
        srv.port,
        &["--default-character-set=utf8mb4", "-uroot", "d"],
        schema_sql().as_bytes(),
    );
    c.query_drop("CREATE DATABASE e CHARACTER SET latin1")
        .unwrap();
    c.query_drop("CREATE TABLE e.t (id INT PRIMARY KEY, v VARCHAR(8))")
        .unwrap();
    c.query_drop("INSERT INTO e.t VALUES (1, 'x'), (2, NULL)")
        .unwrap();
    let crc = crc_checksums(&mut c, "d");
    let dump = run_clean(
        "mariadb-dump",
        srv.port,
        &["-uroot", "--databases", "d", "e"],
        b"",
    );
    let text = String::from_utf8_lossy(&dump);
    assert!(
        text.contains("CREATE DATABASE /*!32312 IF NOT EXISTS*/ `e` /*!40100 DEFAULT CHARACTER SET latin1 */ /*!80016 DEFAULT ENCRYPTION='N' */;"),
        "{text}"
    );
    let fresh = TestServer::start(&[]);
    run_clean("mariadb", fresh.port, &["-uroot"], &dump);
    let mut f = fresh.connect();
    assert_eq!(crc_checksums(&mut f, "d"), crc);
    let e: Vec<(i64, Option<String>)> = f.query("SELECT id, v FROM e.t ORDER BY id").unwrap();
    assert_eq!(e, vec![(1, Some("x".into())), (2, None)]);
    let create_e: (String, String) = f.query_first("SHOW CREATE DATABASE e").unwrap().unwrap();
    assert!(
        create_e.1.contains("DEFAULT CHARACTER SET latin1"),
        "{}",
        create_e.1
    );
    // Only 'N' is understood: tpbed has no keyring.
    assert_eq!(
        code(f.query_drop("CREATE DATABASE g ENCRYPTION = 'Y'")),
        1064
    );
    f.query_drop("CREATE SCHEMA IF NOT EXISTS g DEFAULT ENCRYPTION = 'n'")
        .unwrap();

    // The log tables: base tables of engine CSV with MySQL's definitions, and empty, since
    // tpbed logs to files only.
    let kinds: Vec<(String, String, String)> = f
        .query(
            "SELECT TABLE_NAME, TABLE_TYPE, ENGINE FROM information_schema.TABLES \
             WHERE TABLE_SCHEMA = 'mysql' AND TABLE_NAME LIKE '%log' ORDER BY TABLE_NAME",
        )
        .unwrap();
    let csv = |n: &str| (n.to_string(), "BASE TABLE".to_string(), "CSV".to_string());
    assert_eq!(kinds, vec![csv("general_log"), csv("slow_log")]);
    let general = show_create_table(&mut f, "mysql.general_log");
    assert!(
        general.starts_with("CREATE TABLE `general_log` (\n  `event_time` timestamp(6)"),
        "{general}"
    );
    assert!(
        general.ends_with("ENGINE=CSV DEFAULT CHARSET=utf8mb3 COMMENT='General log'"),
        "{general}"
    );
    let slow = show_create_table(&mut f, "mysql.slow_log");
    assert!(slow.contains("`query_time` time(6) NOT NULL,"), "{slow}");
    assert_eq!(
        f.query_first::<i64, _>("SELECT COUNT(*) FROM mysql.slow_log")
            .unwrap(),
        Some(0)
    );
    assert_eq!(
        code(f.query_drop("SHOW CREATE TABLE mysql.no_such_table")),
        1146
    );
}

#[test]
fn checksum_table_answers_as_mysql_does() {
    let (srv, mut c) = server_with_db();
    c.query_drop("CREATE TABLE t (id INT PRIMARY KEY, v VARCHAR(10), b BLOB)")
        .unwrap();
    c.query_drop("CREATE TABLE empty_one (id INT PRIMARY KEY)")
        .unwrap();
    let sum = |c: &mut Conn| -> Option<u64> {
        let r: Vec<(String, Option<u64>)> = c.query("CHECKSUM TABLE t").unwrap();
        assert_eq!(r[0].0, "d.t");
        r[0].1
    };
    c.query_drop("INSERT INTO t VALUES (1, 'a', NULL), (2, NULL, X'00FF')")
        .unwrap();
    let first = sum(&mut c);
    assert!(first.is_some_and(|n| n > 0), "{first:?}");
    // Another server holding the same rows, inserted in another order, agrees.
    let other = TestServer::start(&[]);
    let mut o = other.connect();
    o.query_drop("CREATE DATABASE d").unwrap();
    o.query_drop("USE d").unwrap();
    o.query_drop("CREATE TABLE t (id INT PRIMARY KEY, v VARCHAR(10), b BLOB)")
        .unwrap();
    o.query_drop("INSERT INTO t VALUES (2, NULL, X'00FF')")
        .unwrap();
    o.query_drop("INSERT INTO t VALUES (1, 'a', NULL)").unwrap();
    assert_eq!(sum(&mut o), first);
    // A NULL moved to another column, or a changed byte, changes it.
    o.query_drop("UPDATE t SET v = NULL, b = 'a' WHERE id = 1")
        .unwrap();
    assert_ne!(sum(&mut o), first);
    o.query_drop("UPDATE t SET v = 'a', b = NULL WHERE id = 1")
        .unwrap();
    assert_eq!(sum(&mut o), first);
    o.query_drop("UPDATE t SET b = X'00FE' WHERE id = 2")
        .unwrap();
    assert_ne!(sum(&mut o), first);

    // Several tables, an empty one 0, QUICK NULL (InnoDB keeps no live checksum), a
    // missing one NULL with its error as a warning.
    let r: Vec<(String, Option<u64>)> = c
        .query("CHECKSUM TABLE t, d.empty_one, nope EXTENDED")
        .unwrap();
    assert_eq!(
        r,
        vec![
            ("d.t".into(), first),
            ("d.empty_one".into(), Some(0)),
            ("d.nope".into(), None)
        ]
    );
    let w: Vec<(String, u16, String)> = c.query("SHOW WARNINGS").unwrap();
    assert_eq!(
        w,
        vec![("Error".into(), 1146, "Table 'd.nope' doesn't exist".into())]
    );
    let q: Vec<(String, Option<u64>)> = c.query("CHECKSUM TABLE t QUICK").unwrap();
    assert_eq!(q, vec![("d.t".into(), None)]);
    // A transaction's own uncommitted change is not in another session's checksum.
    c.query_drop("BEGIN").unwrap();
    c.query_drop("INSERT INTO t VALUES (3, 'c', NULL)").unwrap();
    let mut reader = srv.connect_db("d");
    assert_eq!(sum(&mut reader), first);
    c.query_drop("ROLLBACK").unwrap();
    let mut nodb = srv.connect();
    assert_eq!(code(nodb.query_drop("CHECKSUM TABLE t")), 1046);
}

#[test]
fn character_sets_and_collations_are_kept_as_given() {
    let srv = TestServer::start(&[]);
    let mut c = srv.connect();
    c.query_drop("CREATE DATABASE l CHARACTER SET latin1")
        .unwrap();
    c.query_drop(CREATE_DB).unwrap();
    let create_db: (String, String) = c.query_first("SHOW CREATE DATABASE l").unwrap().unwrap();
    assert_eq!(
        create_db.1,
        "CREATE DATABASE `l` /*!40100 DEFAULT CHARACTER SET latin1 */ \
         /*!80016 DEFAULT ENCRYPTION='N' */"
    );
    // CREATE SCHEMA is CREATE DATABASE, options included.
    c.query_drop("CREATE SCHEMA s COLLATE utf8mb4_bin").unwrap();
    let create_schema: (String, String) = c.query_first("SHOW CREATE SCHEMA s").unwrap().unwrap();
    assert!(
        create_schema
            .1
            .contains("DEFAULT CHARACTER SET utf8mb4 COLLATE utf8mb4_bin"),
        "{create_schema:?}"
    );
    // The session's database defaults follow its default database, by USE or at connect.
    c.query_drop("USE l").unwrap();
    let defaults: (String, String) = c
        .query_first("SELECT @@character_set_database, @@collation_database")
        .unwrap()
        .unwrap();
    assert_eq!(defaults, ("latin1".into(), "latin1_swedish_ci".into()));
    let mut in_d = srv.connect_db("d");
    let coll: String = in_d
        .query_first("SELECT @@collation_database")
        .unwrap()
        .unwrap();
    assert_eq!(coll, "utf8mb4_general_ci");
    let schemata: Vec<(String, String, String)> = c
        .query(
            "SELECT SCHEMA_NAME, DEFAULT_CHARACTER_SET_NAME, DEFAULT_COLLATION_NAME \
             FROM information_schema.SCHEMATA WHERE SCHEMA_NAME IN ('d', 'l') ORDER BY 1",
        )
        .unwrap();
    assert_eq!(
        schemata,
        vec![
            ("d".into(), "utf8mb4".into(), "utf8mb4_general_ci".into()),
            ("l".into(), "latin1".into(), "latin1_swedish_ci".into())
        ]
    );
    // A table takes its database's default; its own options and a column's win.
    c.query_drop("CREATE TABLE l.inherits (a VARCHAR(3))")
        .unwrap();
    c.query_drop(
        "CREATE TABLE d.t (a VARCHAR(3), b TEXT CHARACTER SET latin1, \
         c CHAR(2) COLLATE utf8mb4_bin, n INT) DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci",
    )
    .unwrap();
    assert!(
        show_create_table(&mut c, "l.inherits").ends_with(") ENGINE=InnoDB DEFAULT CHARSET=latin1")
    );
    assert_eq!(
        show_create_table(&mut c, "d.t"),
        "CREATE TABLE `t` (\n  `a` varchar(3) DEFAULT NULL,\n  \
         `b` text CHARACTER SET latin1 COLLATE latin1_swedish_ci DEFAULT NULL,\n  \
         `c` char(2) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin DEFAULT NULL,\n  \
         `n` int DEFAULT NULL\n) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci"
    );
    let tables: Vec<(String, String)> = c
        .query(
            "SELECT TABLE_NAME, TABLE_COLLATION FROM information_schema.TABLES \
             WHERE TABLE_SCHEMA IN ('d', 'l') ORDER BY 1",
        )
        .unwrap();
    assert_eq!(
        tables,
        vec![
            ("inherits".into(), "latin1_swedish_ci".into()),
            ("t".into(), "utf8mb4_unicode_ci".into())
        ]
    );
    let columns: Vec<(String, Option<String>, Option<String>)> = c
        .query(
            "SELECT COLUMN_NAME, CHARACTER_SET_NAME, COLLATION_NAME FROM information_schema.COLUMNS \
             WHERE TABLE_SCHEMA = 'd' AND TABLE_NAME = 't' ORDER BY ORDINAL_POSITION",
        )
        .unwrap();
    let s = |v: &str| Some(v.to_string());
    assert_eq!(
        columns,
        vec![
            ("a".into(), s("utf8mb4"), s("utf8mb4_unicode_ci")),
            ("b".into(), s("latin1"), s("latin1_swedish_ci")),
            ("c".into(), s("utf8mb4"), s("utf8mb4_bin")),
            ("n".into(), None, None)
        ]
    );
    // ALTER TABLE's new default leaves the columns' collations as they were.
    c.query_drop("ALTER TABLE l.inherits DEFAULT CHARSET=utf8mb4")
        .unwrap();
    assert!(show_create_table(&mut c, "l.inherits")
        .contains("`a` varchar(3) CHARACTER SET latin1 COLLATE latin1_swedish_ci DEFAULT NULL"));
    // Unknown names and mismatches are MySQL's errors.
    let e = mysql_error(c.query_drop("CREATE TABLE d.x (a TEXT) COLLATE klingon_ci"));
    assert_eq!(
        (e.code, e.message.as_str()),
        (1273, "Unknown collation: 'klingon_ci'")
    );
    let e = mysql_error(c.query_drop("CREATE DATABASE y CHARACTER SET klingon"));
    assert_eq!(
        (e.code, e.message.as_str()),
        (1115, "Unknown character set: 'klingon'")
    );
    let e = mysql_error(
        c.query_drop("CREATE TABLE d.x (a TEXT CHARACTER SET latin1 COLLATE utf8mb4_bin)"),
    );
    assert_eq!(
        (e.code, e.message.as_str()),
        (
            1253,
            "COLLATION 'utf8mb4_bin' is not valid for CHARACTER SET 'latin1'"
        )
    );
}

#[test]
fn catalog_tables_dump_tools_read() {
    let (_srv, mut c) = server_with_db();
    c.query_drop("CREATE USER 'app'@'%' IDENTIFIED WITH mysql_native_password BY 'pw'")
        .unwrap();
    c.query_drop("GRANT PROCESS ON *.* TO 'app'@'%'").unwrap();
    let users: Vec<(String, String, String, String, String, String, String)> = c
        .query(
            "SELECT Host, User, plugin, authentication_string, account_locked, Select_priv, \
             Process_priv FROM mysql.user ORDER BY Host, User",
        )
        .unwrap();
    let row = |h: &str, u: &str, p: &str, a: &str, s: &str, pr: &str| {
        (
            h.into(),
            u.into(),
            p.into(),
            a.into(),
            "N".into(),
            s.into(),
            pr.into(),
        )
    };
    assert_eq!(
        users,
        vec![
            // SHA1(SHA1('pw')), as MySQL stores it for mysql_native_password.
            row(
                "%",
                "app",
                "mysql_native_password",
                "*D821809F681A40A6E379B50D0463EFAE20BDD122",
                "N",
                "Y"
            ),
            row("%", "root", "caching_sha2_password", "", "Y", "Y"),
            row("localhost", "root", "caching_sha2_password", "", "Y", "Y"),
        ]
    );
    let files: i64 = c
        .query_first("SELECT COUNT(*) FROM information_schema.FILES")
        .unwrap()
        .unwrap();
    assert_eq!(files, 0);
    // PARTITIONS lists each table once, unpartitioned; mariadb-dump's tablespace query runs.
    c.query_drop("CREATE TABLE t (id INT PRIMARY KEY)").unwrap();
    let parts: Vec<(String, Option<String>)> = c
        .query(
            "SELECT TABLE_NAME, PARTITION_NAME FROM information_schema.PARTITIONS \
             WHERE TABLE_SCHEMA = 'd'",
        )
        .unwrap();
    assert_eq!(parts, vec![("t".into(), None)]);
    let none: Vec<String> = c
        .query(
            "SELECT FILE_NAME FROM INFORMATION_SCHEMA.FILES WHERE FILE_TYPE = 'UNDO LOG' \
             AND LOGFILE_GROUP_NAME IN (SELECT DISTINCT LOGFILE_GROUP_NAME FROM \
             INFORMATION_SCHEMA.FILES WHERE TABLESPACE_NAME IN (SELECT DISTINCT TABLESPACE_NAME \
             FROM INFORMATION_SCHEMA.PARTITIONS WHERE TABLE_SCHEMA IN ('d')))",
        )
        .unwrap();
    assert!(none.is_empty());
    // No events or stored routines: MySQL's columns, no rows.
    for (sql, columns) in [
        ("SHOW EVENTS", 15),
        ("SHOW EVENTS FROM d LIKE 'x%'", 15),
        ("SHOW FUNCTION STATUS WHERE Db = 'd'", 11),
        ("SHOW PROCEDURE STATUS", 11),
    ] {
        let r = c.query_iter(sql).unwrap();
        assert_eq!(r.columns().as_ref().len(), columns, "{sql}");
        assert_eq!(r.count(), 0, "{sql}");
    }
    assert_eq!(code(c.query_drop("SHOW EVENTS FROM nope")), 1049);
    // SHOW INDEX: information_schema.STATISTICS's rows under MySQL's column names.
    c.query_drop("CREATE TABLE k (id INT PRIMARY KEY, a INT, b INT, KEY ab (a, b))")
        .unwrap();
    for sql in [
        "SHOW INDEX FROM k",
        "SHOW KEYS IN k FROM d",
        "SHOW INDEXES FROM d.k",
    ] {
        let keys: Vec<(String, u8, String, u32, String)> = c
            .query_map(sql, |r: mysql::Row| {
                let cell = |i: usize| r.get::<String, usize>(i).unwrap_or_default();
                (
                    cell(0),
                    cell(1).parse().unwrap_or(9),
                    cell(2),
                    cell(3).parse().unwrap_or(0),
                    cell(4),
                )
            })
            .unwrap();
        assert_eq!(
            keys,
            vec![
                ("k".into(), 0, "PRIMARY".into(), 1, "id".into()),
                ("k".into(), 1, "ab".into(), 1, "a".into()),
                ("k".into(), 1, "ab".into(), 2, "b".into()),
            ],
            "{sql}"
        );
    }
    assert_eq!(code(c.query_drop("SHOW INDEX FROM nope")), 1146);
    // SHOW TABLE STATUS: information_schema.TABLES's rows under MySQL's column names.
    c.query_drop("ALTER TABLE k DEFAULT CHARSET=latin1")
        .unwrap();
    for (sql, names) in [
        ("SHOW TABLE STATUS", vec!["k", "t"]),
        ("SHOW TABLE STATUS FROM d LIKE 'k%'", vec!["k"]),
    ] {
        let rows: Vec<(String, String, String)> = c
            .query_map(sql, |r: mysql::Row| {
                let cell = |i: usize| r.get::<String, usize>(i).unwrap_or_default();
                (cell(0), cell(1), cell(14))
            })
            .unwrap();
        let got: Vec<&str> = rows.iter().map(|r| r.0.as_str()).collect();
        assert_eq!(got, names, "{sql}");
        assert_eq!(
            (rows[0].1.as_str(), rows[0].2.as_str()),
            ("InnoDB", "latin1_swedish_ci")
        );
    }
    let mut nodb = _srv.connect();
    assert_eq!(code(nodb.query_drop("SHOW TABLE STATUS")), 1046);
    assert_eq!(code(c.query_drop("SHOW TABLE STATUS IN nope")), 1049);
}

#[test]
fn in_subqueries_read_what_the_statement_sees() {
    let (_srv, mut c) = server_with_db();
    c.query_drop("CREATE TABLE p (id INT PRIMARY KEY)").unwrap();
    c.query_drop("CREATE TABLE k (id INT PRIMARY KEY, pid INT)")
        .unwrap();
    c.query_drop("INSERT INTO p VALUES (1), (2), (3)").unwrap();
    c.query_drop("INSERT INTO k VALUES (1, 1), (2, 3), (3, NULL)")
        .unwrap();
    let ids: Vec<i64> = c
        .query("SELECT id FROM p WHERE id IN (SELECT pid FROM k) ORDER BY id")
        .unwrap();
    assert_eq!(ids, vec![1, 3]);
    // NOT IN over a list with a NULL is never true, as in MySQL.
    let ids: Vec<i64> = c
        .query("SELECT id FROM p WHERE id NOT IN (SELECT pid FROM k)")
        .unwrap();
    assert!(ids.is_empty());
    let ids: Vec<i64> = c
        .query("SELECT id FROM p WHERE id NOT IN (SELECT pid FROM k WHERE pid IS NOT NULL)")
        .unwrap();
    assert_eq!(ids, vec![2]);
    // A prepared statement reads the subquery's rows as they are at each execution.
    let stmt = c
        .prep("SELECT COUNT(*) FROM p WHERE id IN (SELECT pid FROM k)")
        .unwrap();
    assert_eq!(c.exec_first::<i64, _, _>(&stmt, ()).unwrap(), Some(2));
    c.query_drop("UPDATE k SET pid = 2 WHERE id = 3").unwrap();
    assert_eq!(c.exec_first::<i64, _, _>(&stmt, ()).unwrap(), Some(3));
    let e = mysql_error(c.query_drop("SELECT id FROM p WHERE id IN (SELECT id, pid FROM k)"));
    assert_eq!((e.code, e.state.as_str()), (1241, "21000"));
}

#[test]
fn temporal_columns_read_as_strings_print_as_their_type() {
    let (_srv, mut c) = server_with_db();
    c.query_drop("CREATE TABLE t (d DATE, dt DATETIME, dt6 DATETIME(6), ts3 TIMESTAMP(3) NULL)")
        .unwrap();
    c.query_drop(
        "INSERT INTO t VALUES ('2024-01-02', '2024-01-02 00:00:00', '2024-01-02 00:00:00', \
         '2024-01-02 03:04:05.5')",
    )
    .unwrap();
    let row: (String, String, i64) = c
        .query_first("SELECT CONCAT_WS('|', d, dt, dt6, ts3), CONCAT(d), LENGTH(dt6) FROM t")
        .unwrap()
        .unwrap();
    assert_eq!(
        (row.0.as_str(), row.1.as_str(), row.2),
        (
            "2024-01-02|2024-01-02 00:00:00|2024-01-02 00:00:00.000000|2024-01-02 03:04:05.500",
            "2024-01-02",
            26
        )
    );
    // CONVERT(... USING) to the character sets text is held in makes a string.
    let conv: (String, Vec<u8>) = c
        .query_first("SELECT CONVERT(d USING utf8mb4), CONVERT(dt6 USING binary) FROM t")
        .unwrap()
        .unwrap();
    assert_eq!(
        (conv.0.as_str(), conv.1.as_slice()),
        ("2024-01-02", &b"2024-01-02 00:00:00.000000"[..])
    );
    // Comparisons still read the values as dates.
    let n: i64 = c
        .query_first("SELECT COUNT(*) FROM t WHERE d = '2024-01-02' AND dt6 < '2024-01-03'")
        .unwrap()
        .unwrap();
    assert_eq!(n, 1);
}
