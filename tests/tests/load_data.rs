//! LOAD DATA [LOCAL] INFILE and SELECT ... INTO OUTFILE/DUMPFILE through real clients: the
//! `mysql` crate's LOCAL INFILE handler and the `mariadb` tools. Every column type written by
//! INTO OUTFILE and loaded back by LOAD DATA LOCAL is byte-for-byte the same, MariaDB loading
//! the same file holds the same rows, and `mariadb-dump --tab` output loads back; plus
//! MySQL's gates (local_infile, FILE, secure_file_priv), errors and warnings.

use std::io::Write;
use std::path::{Path, PathBuf};

use mysql::prelude::*;
use mysql::{Conn, LocalInfileHandler, OptsBuilder, Row, Value};
use tpbed_tests::{code, has_program, mysql_error, require_tool, MariaDb, TestServer};

/// A fresh directory for one test's files.
fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("tpbed-load-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("scratch dir");
    dir
}

/// A handler that sends the named file from this machine.
fn file_handler() -> LocalInfileHandler {
    LocalInfileHandler::new(|name, out| {
        let path = String::from_utf8_lossy(name).into_owned();
        out.write_all(&std::fs::read(path)?)
    })
}

/// A root connection to `db` with the LOCAL INFILE handler.
fn local_conn(opts: mysql::Opts, db: &str) -> Conn {
    let opts = OptsBuilder::from_opts(opts)
        .db_name(Some(db))
        .local_infile_handler(Some(file_handler()));
    Conn::new(opts).expect("connect")
}

/// A server with `local_infile=ON` and database `d`, and a root connection to it.
fn server(extra: &[&str]) -> (TestServer, Conn) {
    let mut args = vec!["--local-infile=ON"];
    args.extend_from_slice(extra);
    let srv = TestServer::start(&args);
    srv.connect().query_drop("CREATE DATABASE d").unwrap();
    let c = local_conn(srv.opts("root", ""), "d");
    (srv, c)
}

fn rows(c: &mut Conn, sql: &str) -> Vec<Vec<Value>> {
    c.query::<Row, _>(sql)
        .unwrap_or_else(|e| panic!("{sql}: {e}"))
        .into_iter()
        .map(Row::unwrap)
        .collect()
}

fn quote(p: &Path) -> String {
    format!("'{}'", p.display())
}

/// The warnings of the last statement as (code, message).
fn warnings(c: &mut Conn) -> Vec<(u16, String)> {
    c.query_map("SHOW WARNINGS", |(_, code, msg): (String, u16, String)| {
        (code, msg)
    })
    .unwrap()
}

/// Every column type tpbed has, with values that test the escaping: every byte 0-255,
/// separators, escapes, the texts `\N` and `NULL`, empty strings and NULLs.
const TYPES: &str = "id INT PRIMARY KEY, ti TINYINT, tu TINYINT UNSIGNED, si SMALLINT, \
     mi MEDIUMINT, bi BIGINT, bu BIGINT UNSIGNED, de DECIMAL(20,6), fl FLOAT, db DOUBLE, \
     ch CHAR(10), vc VARCHAR(300), tx TEXT, bl BLOB, bn BINARY(4), vb VARBINARY(300), \
     dt DATE, dtm DATETIME(6), ts TIMESTAMP NULL, tm TIME, yr YEAR, js JSON, \
     en ENUM('a','b c','d,e'), st SET('x','y','z')";

fn fill_types(c: &mut Conn, table: &str) {
    c.query_drop(format!("CREATE TABLE {table} ({TYPES})"))
        .unwrap();
    let every: Vec<u8> = (0..=255).collect();
    let insert =
        format!("INSERT INTO {table} VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)");
    let texts = [
        "tab\there",
        "line\nbreak\r\n",
        "back\\slash\\",
        "quote\" and ' and ,",
        "\\N",
        "NULL",
        "",
        "é ü 漢字",
    ];
    for (i, t) in texts.iter().enumerate() {
        let id = i as i64 + 1;
        let bytes = if i == 0 {
            every.clone()
        } else {
            t.as_bytes().to_vec()
        };
        let params: Vec<Value> = vec![
            Value::Int(id),
            Value::Int(-128 + id),
            Value::UInt(255 - id as u64),
            Value::Int(-32768 + id),
            Value::Int(8_388_607 - id),
            Value::Int(i64::MIN + id),
            Value::UInt(u64::MAX - id as u64),
            Value::Bytes(format!("-12345678901234.{id:06}").into_bytes()),
            Value::Bytes(format!("{}.25", id).into_bytes()),
            Value::Bytes(format!("-{id}.0625e5").into_bytes()),
            Value::Bytes(t.chars().take(10).collect::<String>().into_bytes()),
            Value::Bytes(t.as_bytes().to_vec()),
            Value::Bytes(t.as_bytes().to_vec()),
            Value::Bytes(bytes.clone()),
            Value::Bytes(bytes.iter().take(4).copied().collect()),
            Value::Bytes(bytes),
            Value::Bytes(format!("2024-0{}-1{}", (i % 9) + 1, i).into_bytes()),
            Value::Bytes(format!("2023-12-31 23:59:5{i}.12345{i}").into_bytes()),
            Value::Bytes(format!("2020-02-29 12:00:0{i}").into_bytes()),
            Value::Bytes(format!("-838:59:5{i}").into_bytes()),
            Value::Int(1901 + id),
            Value::Bytes(
                format!(
                    r#"{{"k": {}, "n": [{id}, null, true]}}"#,
                    serde_json::to_string(t).unwrap()
                )
                .into_bytes(),
            ),
            Value::Bytes(["a", "b c", "d,e"][i % 3].as_bytes().to_vec()),
            Value::Bytes(["", "x", "x,z", "x,y,z"][i % 4].as_bytes().to_vec()),
        ];
        c.exec_drop(&insert, params).unwrap();
    }
    // A row of NULLs but the key.
    c.query_drop(format!("INSERT INTO {table} (id) VALUES (100)"))
        .unwrap();
}

/// The formats the round trip is tried in.
const FORMATS: &[&str] = &[
    "",
    "FIELDS TERMINATED BY ',' OPTIONALLY ENCLOSED BY '\"' LINES TERMINATED BY '\\r\\n'",
    "FIELDS TERMINATED BY '|' ENCLOSED BY '''' ESCAPED BY '#' LINES STARTING BY '>' TERMINATED BY ';;'",
];

#[test]
fn every_type_round_trips_byte_for_byte_and_loads_the_same_in_mariadb() {
    let dir = scratch("roundtrip");
    let (_srv, mut c) = server(&[]);
    fill_types(&mut c, "src");
    let want = rows(&mut c, "SELECT * FROM src ORDER BY id");
    assert_eq!(want.len(), 9);
    let mut files = Vec::new();
    for (n, format) in FORMATS.iter().enumerate() {
        let file = dir.join(format!("src{n}.txt"));
        c.query_drop(format!(
            "SELECT * FROM src INTO OUTFILE {} {format}",
            quote(&file)
        ))
        .unwrap();
        assert_eq!(c.affected_rows(), 9);
        let table = format!("dst{n}");
        c.query_drop(format!("CREATE TABLE {table} ({TYPES})"))
            .unwrap();
        c.query_drop(format!(
            "LOAD DATA LOCAL INFILE {} INTO TABLE {table} {format}",
            quote(&file)
        ))
        .unwrap();
        assert_eq!(c.affected_rows(), 9, "{format}");
        assert_eq!(
            c.info_str(),
            "Records: 9  Deleted: 0  Skipped: 0  Warnings: 0",
            "{format}"
        );
        let got = rows(&mut c, &format!("SELECT * FROM {table} ORDER BY id"));
        assert_eq!(got, want, "round trip in format {format:?}");
        files.push((file, format));
    }

    if !require_tool("mariadbd", has_program("mariadbd")) {
        return;
    }
    let mdb = MariaDb::start("load-data", "64M", 20);
    let mut m = local_conn(
        OptsBuilder::new()
            .ip_or_hostname(Some("127.0.0.1"))
            .tcp_port(mdb.port)
            .prefer_socket(false)
            .user(Some("sbtest"))
            .pass(Some("sbtest"))
            .into(),
        "sbtest",
    );
    m.query_drop("SET time_zone = '+00:00'").unwrap();
    c.query_drop("SET time_zone = '+00:00'").unwrap();
    for (n, (file, format)) in files.iter().enumerate() {
        let table = format!("dst{n}");
        m.query_drop(format!(
            "CREATE TABLE {table} ({TYPES}) DEFAULT CHARSET = utf8mb4"
        ))
        .unwrap();
        m.query_drop(format!(
            "LOAD DATA LOCAL INFILE {} INTO TABLE {table} CHARACTER SET utf8mb4 {format}",
            quote(file)
        ))
        .unwrap();
        assert_eq!(m.info_str(), c_info(&mut c, file, format, n));
        // JSON is compared as text: MariaDB keeps it as written, which is tpbed's text.
        let ours = rows(&mut c, &format!("SELECT * FROM dst{n} ORDER BY id"));
        let theirs = rows(&mut m, &format!("SELECT * FROM {table} ORDER BY id"));
        assert_eq!(theirs, ours, "MariaDB's rows from {format:?}");
    }
}

/// tpbed's info string for loading `file` again into a fresh table (for comparison).
fn c_info(c: &mut Conn, file: &Path, format: &str, n: usize) -> String {
    let table = format!("again{n}");
    c.query_drop(format!("CREATE TABLE {table} ({TYPES})"))
        .unwrap();
    c.query_drop(format!(
        "LOAD DATA LOCAL INFILE {} INTO TABLE {table} {format}",
        quote(file)
    ))
    .unwrap();
    c.info_str().to_string()
}

#[test]
fn outfile_escapes_exactly_as_mysql_writes() {
    let dir = scratch("escapes");
    let (_srv, mut c) = server(&[]);
    c.query_drop("CREATE TABLE t (a INT, b VARCHAR(20), c VARCHAR(20), d VARBINARY(8))")
        .unwrap();
    c.exec_drop(
        "INSERT INTO t VALUES (1, ?, NULL, ?)",
        ("a\tb\\c\nd,\"e", Value::Bytes(vec![0, b'x', b'\r'])),
    )
    .unwrap();
    let out = |c: &mut Conn, name: &str, format: &str| {
        let file = dir.join(name);
        c.query_drop(format!(
            "SELECT * FROM t INTO OUTFILE {} {format}",
            quote(&file)
        ))
        .unwrap();
        std::fs::read(file).unwrap()
    };
    // Default: the escape character before itself, the field and line terminators' first
    // bytes and NUL (written as `0`); NULL as `\N`.
    assert_eq!(
        out(&mut c, "default.txt", ""),
        b"1\ta\\\tb\\\\c\\\nd,\"e\t\\N\t\\0x\r\n".to_vec()
    );
    // Enclosed: the enclosure instead of the field terminator; numbers stay bare under
    // OPTIONALLY.
    assert_eq!(
        out(
            &mut c,
            "csv.txt",
            "FIELDS TERMINATED BY ',' OPTIONALLY ENCLOSED BY '\"'"
        ),
        b"1,\"a\tb\\\\c\\\nd,\\\"e\",\\N,\"\\0x\r\"\n".to_vec()
    );
    // No escape character: bytes as they are, NULL as the word NULL.
    assert_eq!(
        out(&mut c, "raw.txt", "FIELDS ESCAPED BY ''"),
        b"1\ta\tb\\c\nd,\"e\tNULL\t\0x\r\n".to_vec()
    );
    // DUMPFILE: one row's values, raw.
    let file = dir.join("dump.bin");
    c.query_drop(format!("SELECT d FROM t INTO DUMPFILE {}", quote(&file)))
        .unwrap();
    assert_eq!(std::fs::read(&file).unwrap(), vec![0, b'x', b'\r']);
    c.query_drop("INSERT INTO t (a) VALUES (2)").unwrap();
    let e = mysql_error(c.query_drop(format!(
        "SELECT a FROM t INTO DUMPFILE {}",
        quote(&dir.join("two.bin"))
    )));
    assert_eq!((e.code, e.state.as_str()), (1172, "42000"));
    // The file exists: 1086, and it is not overwritten.
    let e = mysql_error(c.query_drop(format!("SELECT 1 INTO OUTFILE {}", quote(&file))));
    assert_eq!(e.code, 1086);
    assert_eq!(
        e.message,
        format!("File '{}' already exists", file.display())
    );
    assert_eq!(std::fs::read(&file).unwrap(), vec![0, b'x', b'\r']);
    // INTO OUTFILE may stand before FROM, too.
    let file = dir.join("early.txt");
    c.query_drop(format!(
        "SELECT a INTO OUTFILE {} FROM t ORDER BY a",
        quote(&file)
    ))
    .unwrap();
    assert_eq!(std::fs::read(&file).unwrap(), b"1\n2\n".to_vec());
}

#[test]
fn short_long_and_null_lines_warn_or_fail_as_mysql() {
    let dir = scratch("lines");
    let (_srv, mut c) = server(&[]);
    let file = dir.join("b.txt");
    std::fs::write(&file, b"1\t2\t3\n4\n\\N\tx\nzz\ty\n").unwrap();
    c.query_drop("CREATE TABLE t (a INT NOT NULL, b VARCHAR(5) NOT NULL)")
        .unwrap();
    // Strict mode: the first bad line fails the statement and nothing stays.
    let load = |how: &str| format!("LOAD DATA {how} INFILE {} INTO TABLE t", quote(&file));
    let e = mysql_error(c.query_drop(load("")));
    assert_eq!((e.code, e.state.as_str()), (1262, "01000"));
    assert_eq!(
        e.message,
        "Row 1 was truncated; it contained more data than there were input columns"
    );
    let n: u64 = c.query_first("SELECT COUNT(*) FROM t").unwrap().unwrap();
    assert_eq!(n, 0);
    c.query_drop("SET sql_mode = 'STRICT_TRANS_TABLES'")
        .unwrap();
    std::fs::write(dir.join("short.txt"), b"4\n").unwrap();
    let e = mysql_error(c.query_drop(format!(
        "LOAD DATA INFILE {} INTO TABLE t",
        quote(&dir.join("short.txt"))
    )));
    assert_eq!(e.code, 1261);
    std::fs::write(dir.join("null.txt"), b"\\N\tx\n").unwrap();
    let e = mysql_error(c.query_drop(format!(
        "LOAD DATA INFILE {} INTO TABLE t",
        quote(&dir.join("null.txt"))
    )));
    assert_eq!((e.code, e.state.as_str()), (1263, "22004"));
    // LOCAL (and IGNORE) turn them into warnings, in row order, and load every line.
    for how in ["LOCAL", "IGNORE"] {
        c.query_drop("DELETE FROM t").unwrap();
        let sql = if how == "LOCAL" {
            load("LOCAL")
        } else {
            format!("LOAD DATA INFILE {} IGNORE INTO TABLE t", quote(&file))
        };
        c.query_drop(sql).unwrap();
        assert_eq!(c.affected_rows(), 4);
        assert_eq!(
            c.info_str(),
            "Records: 4  Deleted: 0  Skipped: 0  Warnings: 4"
        );
        assert_eq!(
            warnings(&mut c),
            vec![
                (
                    1262,
                    "Row 1 was truncated; it contained more data than there were input columns"
                        .to_string()
                ),
                (
                    1261,
                    "Row 2 doesn't contain data for all columns".to_string()
                ),
                (
                    1263,
                    "Column set to default value; NULL supplied to NOT NULL column 'a' at row 3"
                        .to_string()
                ),
                (
                    1366,
                    "Incorrect integer value: 'zz' for column 'a' at row 4".to_string()
                ),
            ],
            "{how}"
        );
        let got: Vec<(i64, String)> = c.query("SELECT a, b FROM t ORDER BY a, b").unwrap();
        assert_eq!(
            got,
            vec![
                (0, "x".into()),
                (0, "y".into()),
                (1, "2".into()),
                (4, "".into())
            ]
        );
    }
}

#[test]
fn duplicates_replace_ignore_and_batches() {
    let dir = scratch("dups");
    let (_srv, mut c) = server(&[]);
    c.query_drop("CREATE TABLE t (id INT PRIMARY KEY, v VARCHAR(10))")
        .unwrap();
    c.query_drop("INSERT INTO t VALUES (3, 'old'), (2500, 'old')")
        .unwrap();
    let file = dir.join("many.txt");
    let text: String = (1..=5000).map(|i| format!("{i}\tnew{i}\n")).collect();
    std::fs::write(&file, text).unwrap();
    // Without LOCAL or IGNORE a duplicate is an error, and the statement rolls back.
    let e = mysql_error(c.query_drop(format!("LOAD DATA INFILE {} INTO TABLE t", quote(&file))));
    assert_eq!(e.code, 1062);
    let n: u64 = c.query_first("SELECT COUNT(*) FROM t").unwrap().unwrap();
    assert_eq!(n, 2);
    // IGNORE skips them with 1062 warnings, over several batches.
    c.query_drop(format!(
        "LOAD DATA INFILE {} IGNORE INTO TABLE t",
        quote(&file)
    ))
    .unwrap();
    assert_eq!(c.affected_rows(), 4998);
    assert_eq!(
        c.info_str(),
        "Records: 5000  Deleted: 0  Skipped: 2  Warnings: 2"
    );
    let w = warnings(&mut c);
    assert_eq!(w[0].0, 1062);
    assert_eq!(w[1].1, "Duplicate entry '2500' for key 't.PRIMARY'");
    // REPLACE deletes and re-inserts: two affected rows per replaced row.
    std::fs::write(dir.join("two.txt"), b"3\tr3\n9999\tr\n").unwrap();
    c.query_drop(format!(
        "LOAD DATA INFILE {} REPLACE INTO TABLE t",
        quote(&dir.join("two.txt"))
    ))
    .unwrap();
    assert_eq!(c.affected_rows(), 3);
    assert_eq!(
        c.info_str(),
        "Records: 2  Deleted: 1  Skipped: 0  Warnings: 0"
    );
    let v: String = c
        .query_first("SELECT v FROM t WHERE id = 3")
        .unwrap()
        .unwrap();
    assert_eq!(v, "r3");
    let n: u64 = c.query_first("SELECT COUNT(*) FROM t").unwrap().unwrap();
    assert_eq!(n, 5001);
    let (handler, rows): (u64, u64) = (
        tpbed_tests::session_status(&mut c, "Com_load"),
        tpbed_tests::session_status(&mut c, "Handler_write"),
    );
    assert_eq!(handler, 3);
    assert!(rows >= 5000, "Handler_write {rows}");
}

#[test]
fn column_lists_user_variables_set_and_ignore_lines() {
    let dir = scratch("columns");
    let (_srv, mut c) = server(&[]);
    c.query_drop(
        "CREATE TABLE t (id INT AUTO_INCREMENT PRIMARY KEY, name VARCHAR(20), \
         price DECIMAL(8,2) NOT NULL DEFAULT 1.00, note VARCHAR(10) DEFAULT 'none')",
    )
    .unwrap();
    let file = dir.join("items.csv");
    std::fs::write(
        &file,
        b"name,price,skip\r\n\"pen, blue\",2.50,x\r\npaper,\\N,y\r\n",
    )
    .unwrap();
    c.query_drop(format!(
        "LOAD DATA LOCAL INFILE {} INTO TABLE t FIELDS TERMINATED BY ',' ENCLOSED BY '\"' \
         LINES TERMINATED BY '\\r\\n' IGNORE 1 LINES (name, @p, @ignored) \
         SET price = IFNULL(@p, 0) * 2, note = UPPER(@ignored)",
        quote(&file)
    ))
    .unwrap();
    assert_eq!(
        c.info_str(),
        "Records: 2  Deleted: 0  Skipped: 0  Warnings: 0"
    );
    let got: Vec<(u32, String, String, String)> = c
        .query("SELECT id, name, price, note FROM t ORDER BY id")
        .unwrap();
    assert_eq!(
        got,
        vec![
            (1, "pen, blue".into(), "5.00".into(), "X".into()),
            (2, "paper".into(), "0.00".into(), "Y".into())
        ]
    );
    // The variables keep the last row's values, as in MySQL.
    let last: Option<String> = c.query_first("SELECT @ignored").unwrap();
    assert_eq!(last.as_deref(), Some("y"));
    // An unknown column is 1054; an unknown table 1146, before the client sends anything.
    let e = mysql_error(c.query_drop(format!(
        "LOAD DATA LOCAL INFILE {} INTO TABLE t (nope)",
        quote(&file)
    )));
    assert_eq!(e.code, 1054);
    assert_eq!(
        code(c.query_drop(format!(
            "LOAD DATA LOCAL INFILE {} INTO TABLE missing",
            quote(&file)
        ))),
        1146
    );
}

#[test]
fn local_infile_is_off_by_default_and_gated_on_both_sides() {
    let dir = scratch("gates");
    let file = dir.join("x.txt");
    std::fs::write(&file, b"1\n").unwrap();
    let srv = TestServer::start(&[]);
    srv.connect().query_drop("CREATE DATABASE d").unwrap();
    let mut c = local_conn(srv.opts("root", ""), "d");
    c.query_drop("CREATE TABLE t (a INT)").unwrap();
    let off: u64 = c
        .query_first("SELECT @@global.local_infile")
        .unwrap()
        .unwrap();
    assert_eq!(off, 0);
    let load = format!("LOAD DATA LOCAL INFILE {} INTO TABLE t", quote(&file));
    let e = mysql_error(c.query_drop(&load));
    assert_eq!((e.code, e.state.as_str()), (3948, "42000"));
    assert_eq!(
        e.message,
        "Loading local data is disabled; this must be enabled on both the client and server sides"
    );
    // Session scope does not exist; SET GLOBAL turns it on.
    assert_eq!(code(c.query_drop("SET SESSION local_infile = 1")), 1229);
    c.query_drop("SET GLOBAL local_infile = ON").unwrap();
    c.query_drop(&load).unwrap();
    assert_eq!(c.affected_rows(), 1);
    // A client that did not set CLIENT_LOCAL_FILES (the protocol crate's) is refused too.
    let mut raw = srv.raw_connect("root", "").unwrap();
    assert_eq!(
        tpbed_tests::raw_code(raw.query(&load.replace("TABLE t", "TABLE d.t"))),
        3948
    );
    // LOAD DATA cannot be prepared (1295), as in MySQL.
    assert_eq!(code(c.prep(&load)), 1295);
    // The connection stays usable after the exchange; a multi-statement query may start with
    // LOAD DATA LOCAL (the file request comes before any result).
    let mut counts = Vec::new();
    let mut it = c
        .query_iter(format!("{load}; SELECT COUNT(*) FROM t"))
        .unwrap();
    while let Some(set) = it.iter() {
        for row in set {
            counts.push(mysql::from_row::<u64>(row.unwrap()));
        }
    }
    drop(it);
    assert_eq!(counts, vec![2]);
    let n: u64 = c.query_first("SELECT COUNT(*) FROM t").unwrap().unwrap();
    assert_eq!(n, 2);
    // The mariadb CLI sends the file when it is asked to, and refuses otherwise.
    if !require_tool("mariadb", has_program("mariadb")) {
        return;
    }
    let port = srv.port.to_string();
    let out = std::process::Command::new("mariadb")
        .args([
            "-h127.0.0.1",
            "-P",
            &port,
            "-uroot",
            "--local-infile=1",
            "d",
            "-e",
        ])
        .arg(format!("{load}; SELECT COUNT(*) FROM t"))
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(String::from_utf8_lossy(&out.stdout).contains('3'));
}

#[test]
fn file_privilege_and_secure_file_priv() {
    let dir = scratch("secure");
    let inside = dir.join("in");
    std::fs::create_dir_all(&inside).unwrap();
    let priv_arg = format!("--secure-file-priv={}", inside.display());
    let (srv, mut c) = server(&[&priv_arg]);
    let shown: String = c.query_first("SELECT @@secure_file_priv").unwrap().unwrap();
    assert_eq!(shown, inside.display().to_string());
    assert_eq!(code(c.query_drop("SET GLOBAL secure_file_priv = ''")), 1238);
    c.query_drop("CREATE TABLE t (a INT)").unwrap();
    c.query_drop("INSERT INTO t VALUES (7)").unwrap();
    // Outside the directory: 1290, for both statements.
    let outside = dir.join("out.txt");
    std::fs::write(&outside, b"1\n").unwrap();
    let e = mysql_error(c.query_drop(format!(
        "SELECT * FROM t INTO OUTFILE {}",
        quote(&dir.join("new.txt"))
    )));
    assert_eq!((e.code, e.state.as_str()), (1290, "HY000"));
    assert_eq!(
        e.message,
        "The MySQL server is running with the --secure-file-priv option so it cannot execute \
         this statement"
    );
    let e = mysql_error(c.query_drop(format!("LOAD DATA INFILE {} INTO TABLE t", quote(&outside))));
    assert_eq!(e.code, 1290);
    // `..` does not climb out.
    let sneaky = format!("{}/../new.txt", inside.display());
    assert_eq!(
        code(c.query_drop(format!("SELECT * FROM t INTO OUTFILE '{sneaky}'"))),
        1290
    );
    // A link inside that points outside does not either.
    let link = inside.join("link.txt");
    std::os::unix::fs::symlink(&outside, &link).unwrap();
    assert_eq!(
        code(c.query_drop(format!("LOAD DATA INFILE {} INTO TABLE t", quote(&link)))),
        1290
    );
    // Inside: allowed; LOCAL is not restricted by it.
    let file = inside.join("t.txt");
    c.query_drop(format!("SELECT * FROM t INTO OUTFILE {}", quote(&file)))
        .unwrap();
    c.query_drop(format!("LOAD DATA INFILE {} INTO TABLE t", quote(&file)))
        .unwrap();
    c.query_drop(format!(
        "LOAD DATA LOCAL INFILE {} INTO TABLE t",
        quote(&outside)
    ))
    .unwrap();
    let n: u64 = c.query_first("SELECT COUNT(*) FROM t").unwrap().unwrap();
    assert_eq!(n, 3);
    // A missing input file: 29 with the OS error.
    let e = mysql_error(c.query_drop(format!(
        "LOAD DATA INFILE {} INTO TABLE t",
        quote(&inside.join("none.txt"))
    )));
    assert_eq!(e.code, 29);
    assert!(e.message.contains("(OS errno 2 - "), "{}", e.message);
    // Without FILE: 1045, as MySQL answers; LOCAL needs no FILE.
    c.query_drop("CREATE USER u IDENTIFIED BY 'pw'").unwrap();
    c.query_drop("GRANT SELECT, INSERT ON d.* TO u").unwrap();
    let mut u = local_conn(srv.opts("u", "pw"), "d");
    let e = mysql_error(u.query_drop(format!("LOAD DATA INFILE {} INTO TABLE t", quote(&file))));
    assert_eq!((e.code, e.state.as_str()), (1045, "28000"));
    assert_eq!(
        e.message,
        "Access denied for user 'u'@'%' (using password: YES)"
    );
    assert_eq!(
        code(u.query_drop(format!(
            "SELECT * FROM t INTO OUTFILE {}",
            quote(&inside.join("u.txt"))
        ))),
        1045
    );
    u.query_drop(format!(
        "LOAD DATA LOCAL INFILE {} INTO TABLE t",
        quote(&outside)
    ))
    .unwrap();
    c.query_drop("GRANT FILE ON *.* TO u").unwrap();
    let mut u = local_conn(srv.opts("u", "pw"), "d");
    u.query_drop(format!("LOAD DATA INFILE {} INTO TABLE t", quote(&file)))
        .unwrap();
    // FILE is a global privilege only.
    assert_eq!(code(c.query_drop("GRANT FILE ON d.* TO u")), 1221);

    // NULL disables both statements.
    let srv2 = TestServer::start(&["--secure-file-priv=NULL"]);
    let mut c2 = srv2.connect();
    assert_eq!(
        code(c2.query_drop(format!(
            "SELECT 1 INTO OUTFILE {}",
            quote(&inside.join("n"))
        ))),
        1290
    );
}

#[test]
fn mariadb_dump_tab_output_loads_back() {
    if !require_tool("mariadb-dump", has_program("mariadb-dump")) {
        return;
    }
    let dir = scratch("tab");
    let (srv, mut c) = server(&[]);
    fill_types(&mut c, "src");
    let port = srv.port.to_string();
    let tab = format!("--tab={}", dir.display());
    let out = std::process::Command::new("mariadb-dump")
        .args(["-h127.0.0.1", "-P", &port, "-uroot", &tab, "d", "src"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let data = dir.join("src.txt");
    assert!(data.exists(), "mariadb-dump wrote no data file");
    c.query_drop(format!("CREATE TABLE dst ({TYPES})")).unwrap();
    c.query_drop(format!(
        "LOAD DATA LOCAL INFILE {} INTO TABLE dst",
        quote(&data)
    ))
    .unwrap();
    assert_eq!(
        rows(&mut c, "SELECT * FROM dst ORDER BY id"),
        rows(&mut c, "SELECT * FROM src ORDER BY id")
    );
}

#[test]
fn outfile_bytes_match_mariadbs() {
    if !require_tool("mariadbd", has_program("mariadbd")) {
        return;
    }
    let dir = scratch("mariadb-outfile");
    // MariaDB's server writes its files as its own user.
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o777)).unwrap();
    let setup = [
        "CREATE TABLE esc (a INT, b VARCHAR(20), c VARCHAR(20), d VARBINARY(8), e DOUBLE, f DATE)",
        r#"INSERT INTO esc VALUES (1, 'a\tb\\c\nd,"e', NULL, X'00780D', 1.5, '2024-01-02'),
         (2, 'N', '', 'Z', -2e-5, NULL), (3, 'n b''b', 'NULL', X'5C4E', 10, '2020-02-29')"#,
    ];
    let (_srv, mut c) = server(&[]);
    let mdb = MariaDb::start("load-data-outfile", "64M", 20);
    for sql in setup {
        c.query_drop(sql).unwrap();
        mdb.root_sql(&format!("USE sbtest; {sql}"));
    }
    let formats = [
        "",
        r#"FIELDS TERMINATED BY ',' OPTIONALLY ENCLOSED BY '"'"#,
        r#"FIELDS TERMINATED BY ',' ENCLOSED BY '"' LINES TERMINATED BY ','"#,
        "FIELDS ESCAPED BY ''",
        "FIELDS TERMINATED BY 'n' ENCLOSED BY ''",
        "FIELDS ENCLOSED BY 'b' ESCAPED BY '#' LINES STARTING BY '>'",
    ];
    for (i, format) in formats.iter().enumerate() {
        let ours = dir.join(format!("tpbed{i}.txt"));
        let theirs = dir.join(format!("mariadb{i}.txt"));
        c.query_drop(format!(
            "SELECT * FROM esc INTO OUTFILE {} {format}",
            quote(&ours)
        ))
        .unwrap();
        mdb.root_sql(&format!(
            "USE sbtest; SELECT * FROM esc INTO OUTFILE {} {format}",
            quote(&theirs)
        ));
        assert_eq!(
            String::from_utf8_lossy(&std::fs::read(&ours).unwrap()),
            String::from_utf8_lossy(&std::fs::read(&theirs).unwrap()),
            "{format:?}"
        );
    }
}

#[test]
fn kill_query_ends_a_long_load() {
    let dir = scratch("kill");
    let (srv, mut c) = server(&[]);
    c.query_drop("CREATE TABLE t (id INT PRIMARY KEY, v VARCHAR(20))")
        .unwrap();
    let file = dir.join("big.txt");
    let text: String = (1..=300_000).map(|i| format!("{i}\tv{i}\n")).collect();
    std::fs::write(&file, text).unwrap();
    let id: u32 = c.query_first("SELECT CONNECTION_ID()").unwrap().unwrap();
    let mut admin = srv.connect();
    let killer = std::thread::spawn(move || {
        std::thread::sleep(std::time::Duration::from_millis(300));
        admin.query_drop(format!("KILL QUERY {id}")).unwrap();
    });
    let started = std::time::Instant::now();
    let e = mysql_error(c.query_drop(format!(
        "LOAD DATA LOCAL INFILE {} INTO TABLE t",
        quote(&file)
    )));
    killer.join().unwrap();
    assert_eq!(e.code, 1317, "{} after {:?}", e.message, started.elapsed());
    let n: u64 = c.query_first("SELECT COUNT(*) FROM t").unwrap().unwrap();
    assert_eq!(n, 0, "the statement rolled back");
}
