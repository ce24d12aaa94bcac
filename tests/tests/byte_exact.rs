//! No byte changes on the way in or out: string literals keep their bytes (raw non-UTF-8
//! bytes in a COM_QUERY, `_binary`/`_utf8mb4`/`_latin1` introducers, `X'..'`), invalid UTF-8
//! into a utf8mb4 column is 1366, and temporal values print by column type and precision in
//! the text protocol; in every connection-handling mode, with the `mysql` crate, the
//! protocol crate's raw client, the mariadb CLI and a `mariadb-dump` taken from MariaDB.

use std::io::Write;
use std::process::{Command, Stdio};

use mysql::prelude::*;
use protocol::client::blocking::ClientError;
use tpbed_tests::{
    each_mode, has_program, mysql_error, require_tool, run_cli, MariaDb, Mode, TestServer,
};

/// Sends `sql` (any bytes) as one COM_QUERY on a raw root connection to database `d`.
fn raw_query(srv: &TestServer, sql: &[u8]) -> Result<(), ClientError> {
    let mut c = srv.raw_connect("root", "").expect("raw connect");
    c.init_db("d").expect("USE d");
    let mut payload = vec![0x03];
    payload.extend_from_slice(sql);
    c.raw_command(&payload).map(drop)
}

/// Five cells read as raw bytes.
type Bytes5 = (Vec<u8>, Vec<u8>, Vec<u8>, Vec<u8>, Vec<u8>);

/// `(id, bytes)` of every row of `SELECT id, col FROM ... ORDER BY id`, read as raw bytes.
fn bytes_of(c: &mut mysql::Conn, sql: &str) -> Vec<(i64, Vec<u8>)> {
    c.query_map(sql, |(id, b): (i64, Vec<u8>)| (id, b))
        .unwrap_or_else(|e| panic!("{sql}: {e}"))
}

each_mode! {
    fn raw_bytes_in_literals_are_stored_as_given(mode) {
        let srv = mode.start(&[]);
        let mut c = srv.connect();
        c.query_drop("CREATE DATABASE d").unwrap();
        c.query_drop("USE d").unwrap();
        c.query_drop("CREATE TABLE t (id INT PRIMARY KEY, b BLOB, vb VARBINARY(16), c VARCHAR(16))")
            .unwrap();
        // 0xFF, NUL (as MySQL's escape \0), a quote escape and a byte after a backslash.
        raw_query(&srv, b"INSERT INTO t (id, b, vb) VALUES (2, 'A\xFFB', 'x\\0\\'\xFE\\\xE9')")
            .unwrap();
        // An escape-range character sent as valid UTF-8 stays the same four bytes.
        raw_query(&srv, "INSERT INTO t (id, b, c) VALUES (3, '\u{10FF41}', 'é')".as_bytes())
            .unwrap();
        assert_eq!(
            bytes_of(&mut c, "SELECT id, b FROM t ORDER BY id"),
            vec![(2, b"A\xFFB".to_vec()), (3, vec![0xF4, 0x8F, 0xBD, 0x81])]
        );
        let n: i64 = c.query_first("SELECT LENGTH(b) FROM t WHERE id = 2").unwrap().unwrap();
        assert_eq!(n, 3);
        assert_eq!(
            bytes_of(&mut c, "SELECT id, vb FROM t WHERE id = 2"),
            vec![(2, b"x\0'\xFE\xE9".to_vec())]
        );
        // The bytes come back unchanged in both protocols.
        let text: Vec<u8> = c.query_first("SELECT b FROM t WHERE id = 2").unwrap().unwrap();
        assert_eq!(text, b"A\xFFB");
        let bin: Vec<u8> = c.exec_first("SELECT b FROM t WHERE id = ?", (2,)).unwrap().unwrap();
        assert_eq!(bin, b"A\xFFB");
        // A raw byte in a WHERE literal matches the stored bytes.
        raw_query(&srv, b"UPDATE t SET vb = 'hit' WHERE b = 'A\xFFB'").unwrap();
        let vb: String = c.query_first("SELECT vb FROM t WHERE id = 2").unwrap().unwrap();
        assert_eq!(vb, "hit");
    }

    fn invalid_utf8_into_a_text_column_is_1366(mode) {
        let srv = mode.start(&[]);
        let mut c = srv.connect();
        c.query_drop("CREATE DATABASE d").unwrap();
        c.query_drop("USE d").unwrap();
        c.query_drop("CREATE TABLE t (id INT PRIMARY KEY, c VARCHAR(16), b BLOB)").unwrap();
        for sql in [
            &b"INSERT INTO t VALUES (1, 'A\xFFB', NULL)"[..],
            b"INSERT INTO t (id, c) VALUES (1, _binary X'41FF42')",
            b"INSERT INTO t (id, c) VALUES (1, X'41FF42')",
        ] {
            match raw_query(&srv, sql) {
                Err(ClientError::Server(e)) => {
                    assert_eq!((e.code, e.sql_state_str()), (1366, "HY000"));
                    assert_eq!(
                        e.message,
                        "Incorrect string value: '\\xFFB' for column 'c' at row 1"
                    );
                }
                other => panic!("{}: {other:?}", String::from_utf8_lossy(sql)),
            }
        }
        // INSERT IGNORE skips the row with the same message as a warning.
        c.query_drop("INSERT IGNORE INTO t (id, c) VALUES (1, X'41FF42')").unwrap();
        let w: Vec<(String, u16, String)> = c.query("SHOW WARNINGS").unwrap();
        assert_eq!(
            w,
            vec![(
                "Warning".into(),
                1366,
                "Incorrect string value: '\\xFFB' for column 'c' at row 1".into()
            )]
        );
        let n: i64 = c.query_first("SELECT COUNT(*) FROM t").unwrap().unwrap();
        assert_eq!(n, 0, "nothing stored");
        // The same bytes are data in the BLOB column, and an UPDATE checks the same way.
        c.query_drop("INSERT INTO t VALUES (1, 'ok', X'41FF42')").unwrap();
        let e = mysql_error(c.query_drop("UPDATE t SET c = b WHERE id = 1"));
        assert_eq!((e.code, e.state.as_str()), (1366, "HY000"));
        let e = mysql_error(c.query_drop(
            "INSERT INTO t VALUES (1, 'x', NULL) ON DUPLICATE KEY UPDATE c = _binary X'FF'",
        ));
        assert_eq!(e.code, 1366);
        let c_now: String = c.query_first("SELECT c FROM t WHERE id = 1").unwrap().unwrap();
        assert_eq!(c_now, "ok");
    }

    fn introducers_and_hex_literals(mode) {
        let srv = mode.start(&[]);
        let mut c = srv.connect();
        let row: Bytes5 = c
            .query_first(
                "SELECT _binary 'a\\0b', _utf8mb4 'é', _latin1 X'E980', X'00FF', _binary X'0A'",
            )
            .unwrap()
            .unwrap();
        assert_eq!(
            row,
            (
                b"a\0b".to_vec(),
                "é".as_bytes().to_vec(),
                "é€".as_bytes().to_vec(),
                vec![0x00, 0xFF],
                vec![0x0A]
            )
        );
        let n: Vec<u8> = c.query_first("SELECT N'ü'").unwrap().unwrap();
        assert_eq!(n, "ü".as_bytes());
        let e = mysql_error(c.query_drop("SELECT _klingon 'x'"));
        assert_eq!((e.code, e.message.as_str()), (1115, "Unknown character set: 'klingon'"));
        c.query_drop("CREATE DATABASE d").unwrap();
        c.query_drop("CREATE TABLE d.t (id INT PRIMARY KEY, b VARBINARY(8), c VARCHAR(8))")
            .unwrap();
        c.query_drop("INSERT INTO d.t VALUES (1, _binary 'x\\0', _utf8mb4 'ü')").unwrap();
        let r: (Vec<u8>, Vec<u8>) = c.query_first("SELECT b, c FROM d.t").unwrap().unwrap();
        assert_eq!(r, (b"x\0".to_vec(), "ü".as_bytes().to_vec()));
    }

    fn mariadb_cli_reloads_a_blob_byte_for_byte(mode) {
        if !require_tool("the mariadb CLI", has_program("mariadb")) {
            return;
        }
        let srv = mode.start(&[]);
        let mut c = srv.connect();
        c.query_drop("CREATE DATABASE d").unwrap();
        c.query_drop("CREATE TABLE d.t (id INT PRIMARY KEY, b BLOB)").unwrap();
        // What mariadb-dump writes for a BLOB with bytes 00 and FF (no --hex-blob): the raw
        // 0xFF byte and MySQL's \0 escape.
        let input: &[u8] = b"INSERT INTO t VALUES (2,'A\xFFB'),(3,'\\0\xFF\\\\\\'\\n');\n";
        let mut child = Command::new("mariadb")
            .args(["-h127.0.0.1", &format!("-P{}", srv.port), "-uroot", "d"])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("run mariadb");
        child.stdin.take().unwrap().write_all(input).unwrap();
        let out = child.wait_with_output().unwrap();
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        assert_eq!(
            bytes_of(&mut c, "SELECT id, b FROM d.t ORDER BY id"),
            vec![(2, b"A\xFFB".to_vec()), (3, b"\0\xFF\\'\n".to_vec())]
        );
    }

    fn temporal_values_print_by_type_and_precision(mode) {
        let srv = mode.start(&[]);
        let mut c = srv.connect();
        c.query_drop("CREATE DATABASE d").unwrap();
        c.query_drop("USE d").unwrap();
        c.query_drop(
            "CREATE TABLE t (id INT PRIMARY KEY, d DATE, dt DATETIME, ts TIMESTAMP NULL, \
             dt6 DATETIME(6), dt3 DATETIME(3))",
        )
        .unwrap();
        c.query_drop(
            "INSERT INTO t VALUES (1, '2024-01-02', '2024-01-02 00:00:00', \
             '2024-01-02 00:00:00', '2024-01-02 00:00:00', '2024-01-02 03:04:05.5')",
        )
        .unwrap();
        // Text protocol: read every cell as the exact bytes sent.
        let row: (String, String, String, String, String) = c
            .query_first("SELECT d, dt, ts, dt6, dt3 FROM t")
            .unwrap()
            .unwrap();
        assert_eq!(
            row,
            (
                "2024-01-02".into(),
                "2024-01-02 00:00:00".into(),
                "2024-01-02 00:00:00".into(),
                "2024-01-02 00:00:00.000000".into(),
                "2024-01-02 03:04:05.500".into(),
            )
        );
        // Expressions typed DATE / DATETIME print the same way.
        let f: (String, String, String) = c
            .query_first("SELECT CAST(dt AS DATE), CAST(d AS DATETIME), CURDATE() FROM t")
            .unwrap()
            .unwrap();
        assert_eq!((f.0.as_str(), f.1.as_str(), f.2.len()), ("2024-01-02", "2024-01-02 00:00:00", 10));
        // Computed DATETIMEs (typed from their values) print the time, and every fraction.
        let m: (String, String, String) = c
            .query_first("SELECT MAX(dt), MAX(dt3), CASE WHEN id = 1 THEN dt3 END FROM t")
            .unwrap()
            .unwrap();
        assert_eq!(
            m,
            (
                "2024-01-02 00:00:00".into(),
                "2024-01-02 03:04:05.500".into(),
                "2024-01-02 03:04:05.500000".into()
            )
        );
    }
}

/// Runs the mariadb CLI as sbtest on database sbtest of `mdb` with `sql` on stdin.
fn run_on(mdb: &MariaDb, sql: &[u8]) {
    run_cli(
        "mariadb",
        mdb.port,
        &["-usbtest", "-psbtest", "sbtest"],
        sql,
    );
}

/// A `mariadb-dump` of a MariaDB table holding every byte value in a BLOB, UTF-8 text and
/// midnight DATETIME/DATETIME(6) values loads into tpbed with the mariadb CLI, byte for byte.
/// The dump skips LOCK TABLES and DISABLE KEYS (`schema_dump.rs` loads dumps with them).
#[test]
fn a_mariadb_dump_of_every_byte_reloads_unchanged() {
    if !require_tool("mariadbd", has_program("mariadbd"))
        || !require_tool("mariadb-dump", has_program("mariadb-dump"))
    {
        return;
    }
    let every_byte: Vec<u8> = (0..=255u8).collect();
    let hex: String = every_byte.iter().map(|b| format!("{b:02X}")).collect();
    let mdb = MariaDb::start("bytes", "64M", 50);
    run_on(
        &mdb,
        format!(
            "CREATE TABLE bx (id INT PRIMARY KEY, b BLOB, c VARCHAR(20), dt6 DATETIME(6), \
             dt DATETIME) DEFAULT CHARSET=utf8mb4;
             INSERT INTO bx VALUES (1, X'{hex}', 'héllo', '2024-01-02 00:00:00', \
             '2024-01-02 00:00:00');"
        )
        .as_bytes(),
    );
    let dump = run_cli(
        "mariadb-dump",
        mdb.port,
        &[
            "-usbtest",
            "-psbtest",
            "--skip-add-locks",
            "--skip-disable-keys",
            "sbtest",
            "bx",
        ],
        b"",
    );
    assert!(
        !dump.windows(hex.len()).any(|w| w == hex.as_bytes()),
        "the dump writes the BLOB as a string literal, not as hex"
    );
    for mode in Mode::ALL {
        mode.run(|mode| {
            let srv = mode.start(&[]);
            let mut c = srv.connect();
            c.query_drop("CREATE DATABASE sbtest").unwrap();
            run_cli("mariadb", srv.port, &["-uroot", "sbtest"], &dump);
            let row: (Vec<u8>, String, String, String) = c
                .query_first("SELECT b, c, dt6, dt FROM sbtest.bx WHERE id = 1")
                .unwrap()
                .unwrap();
            assert_eq!(row.0, every_byte, "{mode:?}");
            assert_eq!(
                (row.1.as_str(), row.2.as_str(), row.3.as_str()),
                ("héllo", "2024-01-02 00:00:00.000000", "2024-01-02 00:00:00")
            );
        });
    }
}

/// The string functions whose answer depends on whether a string is binary, over the BLOB `b`
/// and the utf8mb4 text `c` of row `id`, each as hex so any byte difference shows.
fn string_functions(pos: i64, len: i64) -> String {
    let mut cols = Vec::new();
    for col in ["b", "c"] {
        cols.extend([
            format!("HEX(SUBSTRING({col}, {pos}, {len}))"),
            format!("HEX(SUBSTRING({col}, {pos}))"),
            format!("HEX(SUBSTRING({col} FROM {pos} FOR {len}))"),
            format!("HEX(LEFT({col}, {len}))"),
            format!("HEX(RIGHT({col}, {len}))"),
            format!("HEX(UPPER({col}))"),
            format!("HEX(LOWER({col}))"),
            format!("CHAR_LENGTH({col})"),
            format!("LENGTH({col})"),
            format!("HEX(UPPER(SUBSTRING({col}, {pos})))"),
        ]);
    }
    format!("SELECT {} FROM p WHERE id = ?", cols.join(", "))
}

/// Every string function gives MariaDB's bytes for the same arbitrary bytes in a BLOB and
/// the same text in a utf8mb4 column, and `UPDATE ... SET b = SUBSTRING(b, ...)` stores the
/// bytes MariaDB stores. The text is drawn from characters whose case mapping is one
/// character to one character in every Unicode version (no `ß`, no dotted `İ`).
#[test]
fn string_functions_give_mariadbs_bytes_for_binary_and_text() {
    use proptest::prelude::*;
    use proptest::test_runner::TestRunner;

    if !require_tool("mariadbd", has_program("mariadbd")) {
        return;
    }
    let mdb = MariaDb::start("strfn", "64M", 50);
    let mut theirs = mdb.connect();
    let srv = Mode::PerConnection.start(&[]);
    let mut ours = srv.connect();
    ours.query_drop("CREATE DATABASE sbtest").unwrap();
    ours.query_drop("USE sbtest").unwrap();
    for c in [&mut theirs, &mut ours] {
        c.query_drop(
            "CREATE TABLE p (id INT PRIMARY KEY, b BLOB, c VARCHAR(64)) DEFAULT CHARSET=utf8mb4",
        )
        .unwrap();
    }
    let text_chars = prop::sample::select(vec![
        'a', 'Z', 'q', '0', ' ', 'é', 'É', 'ñ', 'α', 'Ω', 'д', 'Ж', '日', '本', '€', '😀',
    ]);
    let case = (
        prop::collection::vec(any::<u8>(), 0..12),
        prop::collection::vec(text_chars, 0..10),
        -6i64..8,
        -2i64..8,
    );
    let id = std::cell::Cell::new(0i64);
    let conns = std::cell::RefCell::new((ours, theirs));
    TestRunner::new(ProptestConfig {
        cases: 200,
        ..ProptestConfig::default()
    })
    .run(&case, |(bytes, chars, pos, len)| {
        id.set(id.get() + 1);
        let text: String = chars.into_iter().collect();
        let sql = string_functions(pos, len);
        let (ours, theirs) = &mut *conns.borrow_mut();
        let mut answers = Vec::new();
        for c in [ours, theirs] {
            c.exec_drop(
                "INSERT INTO p VALUES (?, ?, ?)",
                (id.get(), bytes.clone(), text.clone()),
            )
            .unwrap();
            let row: mysql::Row = c.exec_first(&sql, (id.get(),)).unwrap().unwrap();
            let cells: Vec<Option<Vec<u8>>> = row
                .unwrap()
                .into_iter()
                .map(|v| match v {
                    mysql::Value::NULL => None,
                    mysql::Value::Bytes(b) => Some(b),
                    mysql::Value::Int(i) => Some(i.to_string().into_bytes()),
                    mysql::Value::UInt(u) => Some(u.to_string().into_bytes()),
                    other => Some(format!("{other:?}").into_bytes()),
                })
                .collect();
            c.exec_drop(
                format!("UPDATE p SET b = SUBSTRING(b, {pos}, {len}) WHERE id = ?"),
                (id.get(),),
            )
            .unwrap();
            let stored: Option<Vec<u8>> = c
                .exec_first("SELECT b FROM p WHERE id = ?", (id.get(),))
                .unwrap()
                .unwrap();
            answers.push((cells, stored));
        }
        prop_assert_eq!(
            &answers[0],
            &answers[1],
            "bytes {:02X?}, text {:?}, pos {}, len {}",
            bytes,
            text,
            pos,
            len
        );
        Ok(())
    })
    .unwrap();
}

each_mode! {
    fn substring_of_a_blob_stores_its_bytes(mode) {
        let srv = mode.start(&[]);
        let mut c = srv.connect();
        c.query_drop("CREATE DATABASE d").unwrap();
        c.query_drop("USE d").unwrap();
        c.query_drop("CREATE TABLE t (id INT PRIMARY KEY, c BLOB)").unwrap();
        c.query_drop("INSERT INTO t VALUES (1, X'E697FF00')").unwrap();
        c.query_drop("UPDATE t SET c = SUBSTRING(c, 1, 3)").unwrap();
        let hex: String = c.query_first("SELECT HEX(c) FROM t").unwrap().unwrap();
        assert_eq!(hex, "E697FF");
        let (upper, chars): (String, i64) = c
            .query_first("SELECT HEX(UPPER(c)), CHAR_LENGTH(c) FROM t")
            .unwrap()
            .unwrap();
        assert_eq!((upper.as_str(), chars), ("E697FF", 3));
        // SUBSTRING without a position is a syntax error, as in MySQL.
        assert_eq!(mysql_error(c.query_drop("SELECT SUBSTRING('abc')")).code, 1064);
    }
}
