//! TIME, YEAR, BIT and DECIMAL(65,30) columns through the real binary, as MySQL 8.0 has them:
//! literal forms and strict-mode errors (code, SQLSTATE, message), the text and binary
//! protocols with MySQL's result metadata, ORDER BY and index ranges, SHOW CREATE TABLE and
//! information_schema, and a mariadb-dump of such a table reloaded into a fresh server.

use mysql::consts::{ColumnFlags, ColumnType};
use mysql::prelude::*;
use mysql::{Conn, Row, Value};
use tpbed_tests::{has_program, mysql_error, require_tool, run_cli, show_create_table, TestServer};

fn setup() -> (TestServer, Conn) {
    TestServer::with_database("d")
}

/// The error a statement fails with: code, SQLSTATE, message.
fn error(c: &mut Conn, sql: &str) -> (u16, String, String) {
    let e = mysql_error(c.query_drop(sql));
    (e.code, e.state, e.message)
}

fn texts(c: &mut Conn, sql: &str) -> Vec<String> {
    c.query(sql).unwrap()
}

/// The first row of a prepared (binary-protocol) statement.
fn prepared_row(c: &mut Conn, sql: &str) -> Row {
    c.exec_first(sql, ()).unwrap().expect("a row")
}

#[test]
fn time_reads_back_as_mysql_prints_it() {
    let (_srv, mut c) = setup();
    c.query_drop("CREATE TABLE t (id INT PRIMARY KEY, t TIME, t3 TIME(3))")
        .unwrap();
    c.query_drop(
        "INSERT INTO t VALUES (1, '12:34:56.5', '12:34:56.5'), (2, '1 02:00:00', '1 02:00:00'), \
         (3, 123456, 123456), (4, '-838:59:59', '-00:00:01.2345'), (5, '838:59:59', '12:34'), \
         (6, '100:00:00', 1234)",
    )
    .unwrap();
    let pairs: Vec<(String, String)> = c.query("SELECT t, t3 FROM t ORDER BY id").unwrap();
    let expected = [
        ("12:34:57", "12:34:56.500"),
        ("26:00:00", "26:00:00.000"),
        ("12:34:56", "12:34:56.000"),
        ("-838:59:59", "-00:00:01.235"),
        ("838:59:59", "12:34:00.000"),
        ("100:00:00", "00:12:34.000"),
    ];
    assert_eq!(pairs, expected.map(|(a, b)| (a.to_string(), b.to_string())));
    // In string expressions a TIME keeps its column's digits too.
    let joined: String = c
        .query_first("SELECT CONCAT_WS('|', t, t3) FROM t WHERE id = 2")
        .unwrap()
        .unwrap();
    assert_eq!(joined, "26:00:00|26:00:00.000");
    // UPDATE coerces as INSERT does.
    c.query_drop("UPDATE t SET t3 = '-1 01:00:00.0004' WHERE id = 6")
        .unwrap();
    let t3: String = c
        .query_first("SELECT t3 FROM t WHERE id = 6")
        .unwrap()
        .unwrap();
    assert_eq!(t3, "-25:00:00.000");

    // Text protocol: MySQL's metadata, the value as text.
    let row: Row = c
        .query_first("SELECT t, t3 FROM t WHERE id = 2")
        .unwrap()
        .unwrap();
    let cols = row.columns_ref();
    assert_eq!(cols[0].column_type(), ColumnType::MYSQL_TYPE_TIME);
    assert_eq!((cols[0].column_length(), cols[0].decimals()), (10, 0));
    assert_eq!((cols[1].column_length(), cols[1].decimals()), (14, 3));
    assert!(cols[1].flags().contains(ColumnFlags::BINARY_FLAG));
    assert_eq!(row.as_ref(1), Some(&Value::Bytes(b"26:00:00.000".to_vec())));

    // Binary protocol: sign, days, hours, minutes, seconds, microseconds.
    let row = prepared_row(&mut c, "SELECT t, t3 FROM t WHERE id = 4");
    assert_eq!(row.as_ref(0), Some(&Value::Time(true, 34, 22, 59, 59, 0)));
    assert_eq!(row.as_ref(1), Some(&Value::Time(true, 0, 0, 0, 1, 235_000)));
    let row = prepared_row(&mut c, "SELECT t FROM t WHERE id = 2");
    assert_eq!(row.as_ref(0), Some(&Value::Time(false, 1, 2, 0, 0, 0)));
    // A TIME parameter is a time.
    let id: Option<i32> = c
        .exec_first(
            "SELECT id FROM t WHERE t = ?",
            (Value::Time(false, 1, 2, 0, 0, 0),),
        )
        .unwrap();
    assert_eq!(id, Some(2));

    // CAST and TIMEDIFF give TIME values.
    let row: Row = c
        .query_first("SELECT CAST('10:00:00' AS TIME), TIMEDIFF('12:00:00', '13:30:00')")
        .unwrap()
        .unwrap();
    assert_eq!(
        row.columns_ref()[1].column_type(),
        ColumnType::MYSQL_TYPE_TIME
    );
    assert_eq!(row.as_ref(0), Some(&Value::Bytes(b"10:00:00".to_vec())));
    assert_eq!(row.as_ref(1), Some(&Value::Bytes(b"-01:30:00".to_vec())));
    let cast: String = c
        .query_first("SELECT CAST('10:00:00.56' AS TIME(1))")
        .unwrap()
        .unwrap();
    assert_eq!(cast, "10:00:00.6");
}

#[test]
fn bad_times_are_1292_in_strict_mode() {
    let (_srv, mut c) = setup();
    c.query_drop("CREATE TABLE t (id INT PRIMARY KEY, t TIME)")
        .unwrap();
    for (literal, shown) in [
        ("'839:00:00'", "839:00:00"),
        ("'-839:00:00'", "-839:00:00"),
        ("'12:60:00'", "12:60:00"),
        ("'abc'", "abc"),
        ("8390000", "8390000"),
    ] {
        assert_eq!(
            error(&mut c, &format!("INSERT INTO t VALUES (1, {literal})")),
            (
                1292,
                "22007".to_string(),
                format!("Incorrect time value: '{shown}' for column 't' at row 1")
            ),
            "{literal}"
        );
    }
    // A binary-protocol TIME beyond the range, up to the largest day count, is 1292 too.
    for days in [35, u32::MAX] {
        let e = mysql_error(c.exec_drop(
            "INSERT INTO t VALUES (?, ?)",
            (1, Value::Time(false, days, 0, 0, 0, 0)),
        ));
        assert_eq!((e.code, e.state.as_str()), (1292, "22007"), "{days} days");
    }
    c.query_drop("INSERT INTO t VALUES (1, '01:00:00')")
        .unwrap();
    assert_eq!(
        error(&mut c, "UPDATE t SET t = '900:00:00'").0,
        1292,
        "UPDATE is checked too"
    );
    let n: i64 = c.query_first("SELECT COUNT(*) FROM t").unwrap().unwrap();
    assert_eq!(n, 1);
}

#[test]
fn time_orders_and_ranges_through_its_index() {
    let (_srv, mut c) = setup();
    c.query_drop("CREATE TABLE t (id INT PRIMARY KEY, t TIME(6), KEY kt (t))")
        .unwrap();
    c.query_drop(
        "INSERT INTO t VALUES (1, '10:00:00'), (2, '-10:00:00'), (3, '100:00:00'), \
         (4, '-00:00:00.000001'), (5, '00:00:00'), (6, '-838:59:59'), (7, '09:59:59.999999')",
    )
    .unwrap();
    let ids = |c: &mut Conn, sql: &str| -> Vec<i32> { c.query(sql).unwrap() };
    assert_eq!(
        ids(&mut c, "SELECT id FROM t ORDER BY t"),
        [6, 2, 4, 5, 7, 1, 3]
    );
    assert_eq!(
        ids(&mut c, "SELECT id FROM t ORDER BY t DESC"),
        [3, 1, 7, 5, 4, 2, 6]
    );
    let range = "SELECT id FROM t WHERE t >= '-10:00:00' AND t < '10:00:00' ORDER BY t";
    assert_eq!(ids(&mut c, range), [2, 4, 5, 7]);
    let plan: Row = c.query_first(format!("EXPLAIN {range}")).unwrap().unwrap();
    assert_eq!(plan.get::<String, _>("type").unwrap(), "range");
    assert_eq!(plan.get::<String, _>("key").unwrap(), "kt");
    let ids_prepared: Vec<i32> = c
        .exec(
            "SELECT id FROM t WHERE t > ? ORDER BY t",
            ("09:59:59.999999",),
        )
        .unwrap();
    assert_eq!(ids_prepared, [1, 3]);
}

#[test]
fn year_maps_two_digits_and_refuses_the_rest() {
    let (_srv, mut c) = setup();
    c.query_drop("CREATE TABLE t (id INT PRIMARY KEY, y YEAR)")
        .unwrap();
    c.query_drop(
        "INSERT INTO t VALUES (1, 2024), (2, 69), (3, '70'), (4, '0'), (5, 0), (6, '0000'), \
         (7, 1901), (8, '2155'), (9, 99)",
    )
    .unwrap();
    assert_eq!(
        texts(&mut c, "SELECT y FROM t ORDER BY id"),
        ["2024", "2069", "1970", "2000", "0000", "0000", "1901", "2155", "1999"]
    );
    let row: Row = c
        .query_first("SELECT y FROM t WHERE id = 5")
        .unwrap()
        .unwrap();
    let col = &row.columns_ref()[0];
    assert_eq!(col.column_type(), ColumnType::MYSQL_TYPE_YEAR);
    assert_eq!(col.column_length(), 4);
    assert!(col
        .flags()
        .contains(ColumnFlags::UNSIGNED_FLAG | ColumnFlags::ZEROFILL_FLAG));
    assert_eq!(row.as_ref(0), Some(&Value::Bytes(b"0000".to_vec())));
    let row = prepared_row(&mut c, "SELECT y FROM t WHERE id = 2");
    assert_eq!(row.as_ref(0), Some(&Value::Int(2069)));
    assert_eq!(
        texts(&mut c, "SELECT CONCAT(id) FROM t WHERE y > 1999 ORDER BY y"),
        ["4", "1", "2", "8"]
    );
    for bad in ["1900", "2156", "-1", "100"] {
        assert_eq!(
            error(&mut c, &format!("INSERT INTO t VALUES (10, {bad})")),
            (
                1264,
                "22003".to_string(),
                "Out of range value for column 'y' at row 1".to_string()
            ),
            "{bad}"
        );
    }
    assert_eq!(error(&mut c, "INSERT INTO t VALUES (10, 'abc')").0, 1366);
}

#[test]
fn bit_columns_hold_bits_and_send_raw_bytes() {
    let (_srv, mut c) = setup();
    c.query_drop("CREATE TABLE t (id INT PRIMARY KEY, b BIT(5), w BIT(12), l BIT(64))")
        .unwrap();
    c.query_drop(
        "INSERT INTO t VALUES (1, b'101', b'100000000001', 0), (2, 0b11, 4095, -1), \
         (3, x'1f', x'0102', b'1'), (4, 31, 0, 18446744073709551615)",
    )
    .unwrap();
    assert_eq!(
        texts(
            &mut c,
            "SELECT CONCAT_WS('|', b + 0, w + 0, l + 0) FROM t ORDER BY id"
        ),
        [
            "5|2049|0",
            "3|4095|18446744073709551615",
            "31|258|1",
            "31|0|18446744073709551615"
        ]
    );
    // The text protocol sends ceil(n / 8) big-endian bytes.
    let row: Row = c
        .query_first("SELECT b, w, l FROM t WHERE id = 1")
        .unwrap()
        .unwrap();
    let cols = row.columns_ref();
    assert_eq!(cols[0].column_type(), ColumnType::MYSQL_TYPE_BIT);
    assert_eq!(cols[0].column_length(), 5);
    assert_eq!(cols[1].column_length(), 12);
    assert!(cols[0].flags().contains(ColumnFlags::UNSIGNED_FLAG));
    assert_eq!(row.as_ref(0), Some(&Value::Bytes(vec![5])));
    assert_eq!(row.as_ref(1), Some(&Value::Bytes(vec![8, 1])));
    assert_eq!(row.as_ref(2), Some(&Value::Bytes(vec![0; 8])));
    // So does the binary protocol.
    let row = prepared_row(&mut c, "SELECT b, w FROM t WHERE id = 2");
    assert_eq!(row.as_ref(0), Some(&Value::Bytes(vec![3])));
    assert_eq!(row.as_ref(1), Some(&Value::Bytes(vec![0x0F, 0xFF])));
    let bins: Vec<String> = c.query("SELECT BIN(b) FROM t ORDER BY id").unwrap();
    assert_eq!(bins, ["101", "11", "11111", "11111"]);
    // Compared and ordered as numbers.
    assert_eq!(
        texts(
            &mut c,
            "SELECT CONCAT(id) FROM t WHERE w > 258 ORDER BY w DESC"
        ),
        ["2", "1"]
    );
    assert_eq!(
        error(&mut c, "CREATE TABLE x (b BIT(65))"),
        (
            1439,
            "42000".to_string(),
            "Display width out of range for 'b' (max = 64)".to_string()
        )
    );
    assert_eq!(
        error(&mut c, "CREATE TABLE x (b BIT(0))"),
        (
            3013,
            "HY000".to_string(),
            "Invalid size for column 'b'.".to_string()
        )
    );
    for bad in ["32", "b'100000'", "x'0100'", "-1"] {
        assert_eq!(
            error(&mut c, &format!("INSERT INTO t VALUES (9, {bad}, 0, 0)")),
            (
                1406,
                "22001".to_string(),
                "Data too long for column 'b' at row 1".to_string()
            ),
            "{bad}"
        );
    }
}

#[test]
fn decimal_65_30_is_exact_ordered_and_ranged() {
    let (_srv, mut c) = setup();
    c.query_drop("CREATE TABLE t (id INT PRIMARY KEY, d DECIMAL(65,30), KEY kd (d))")
        .unwrap();
    let max = format!("{}.{}", "9".repeat(35), "9".repeat(30));
    let tiny = format!("0.{}1", "0".repeat(29));
    c.query_drop(format!(
        "INSERT INTO t VALUES (1, '{max}'), (2, '-{max}'), (3, {tiny}), (4, -{tiny}), (5, 0), \
         (6, 12345678901234567890123456789012345.5)"
    ))
    .unwrap();
    assert_eq!(
        c.query::<i32, _>("SELECT id FROM t ORDER BY d").unwrap(),
        [2, 4, 5, 3, 6, 1]
    );
    let range = format!("SELECT id FROM t WHERE d > {tiny} AND d <= '{max}' ORDER BY d");
    assert_eq!(c.query::<i32, _>(&range).unwrap(), [6, 1]);
    let plan: Row = c.query_first(format!("EXPLAIN {range}")).unwrap().unwrap();
    assert_eq!(plan.get::<String, _>("key").unwrap(), "kd");
    // Exact arithmetic and comparison on 65 digits.
    let sum: String = c
        .query_first(format!("SELECT d - {tiny} FROM t WHERE id = 1"))
        .unwrap()
        .unwrap();
    assert_eq!(sum, format!("{}.{}8", "9".repeat(35), "9".repeat(29)));
    let n: i64 = c
        .query_first(format!(
            "SELECT COUNT(*) FROM t WHERE d = '{max}' OR d = {tiny}"
        ))
        .unwrap()
        .unwrap();
    assert_eq!(n, 2);
    // Both protocols carry every digit, with NEWDECIMAL metadata.
    let row: Row = c
        .query_first("SELECT d FROM t WHERE id = 2")
        .unwrap()
        .unwrap();
    let col = &row.columns_ref()[0];
    assert_eq!(col.column_type(), ColumnType::MYSQL_TYPE_NEWDECIMAL);
    assert_eq!((col.column_length(), col.decimals()), (67, 30));
    assert_eq!(
        row.as_ref(0),
        Some(&Value::Bytes(format!("-{max}").into_bytes()))
    );
    let prepared: String = c
        .exec_first("SELECT d FROM t WHERE d = ?", (max.clone(),))
        .unwrap()
        .unwrap();
    assert_eq!(prepared, max);
    // One digit too many is out of range; past 65 digits the type itself is refused.
    assert_eq!(
        error(&mut c, &format!("INSERT INTO t VALUES (9, '1{max}')")),
        (
            1264,
            "22003".to_string(),
            "Out of range value for column 'd' at row 1".to_string()
        )
    );
    assert_eq!(error(&mut c, "CREATE TABLE x (d DECIMAL(66,30))").0, 1426);
}

const EVERY_TYPE: &str = "CREATE TABLE typed (id INT NOT NULL, t TIME DEFAULT '01:02:03', \
     t6 TIME(6) NOT NULL, y YEAR DEFAULT '2024', b BIT(5) DEFAULT b'101', b64 BIT(64), \
     d DECIMAL(65,30), PRIMARY KEY (id), KEY kt (t6), KEY kd (d))";

fn fill_every_type(c: &mut Conn) {
    c.query_drop(EVERY_TYPE).unwrap();
    c.query_drop(
        "INSERT INTO typed VALUES (1, '-12:00:00', '838:59:59.000000', 1999, b'11111', \
         18446744073709551615, '-12345678901234567890123456789012345.123456789012345678901234567890'), \
         (2, NULL, '-00:00:00.5', 0, 0, 0, NULL), (3, DEFAULT, '1 00:00:00', DEFAULT, DEFAULT, b'1', 0.5)",
    )
    .unwrap();
}

/// Each row's columns as the text protocol sends them (BIT as its number), joined by `|`.
fn rows_as_text(c: &mut Conn, table: &str) -> Vec<String> {
    let rows: Vec<Row> = c
        .query(format!(
            "SELECT id, t, t6, y, b + 0, b64 + 0, d FROM {table} ORDER BY id"
        ))
        .unwrap();
    rows.iter()
        .map(|r| {
            (0..r.len())
                .map(|i| {
                    r.get::<Option<String>, _>(i)
                        .unwrap()
                        .unwrap_or_else(|| "null".into())
                })
                .collect::<Vec<_>>()
                .join("|")
        })
        .collect()
}

#[test]
fn show_create_table_round_trips_and_describes_the_types() {
    let (_srv, mut c) = setup();
    fill_every_type(&mut c);
    let create = show_create_table(&mut c, "typed");
    for spelled in [
        "`t` time DEFAULT '01:02:03'",
        "`t6` time(6) NOT NULL",
        "`y` year DEFAULT '2024'",
        "`b` bit(5) DEFAULT b'101'",
        "`b64` bit(64) DEFAULT NULL",
        "`d` decimal(65,30) DEFAULT NULL",
    ] {
        assert!(create.contains(spelled), "{spelled} in {create}");
    }
    assert_eq!(
        rows_as_text(&mut c, "typed")[2],
        "3|01:02:03|24:00:00.000000|2024|5|1|0.500000000000000000000000000000"
    );
    c.query_drop("ALTER TABLE typed RENAME TO old").unwrap();
    c.query_drop(&create).unwrap();
    assert_eq!(show_create_table(&mut c, "typed"), create);
    // ALTER TABLE rebuilds through the same definitions.
    c.query_drop("ALTER TABLE old ADD COLUMN extra INT")
        .unwrap();
    c.query_drop("ALTER TABLE old DROP COLUMN extra").unwrap();
    c.query_drop("INSERT INTO typed SELECT * FROM old").unwrap();
    assert_eq!(rows_as_text(&mut c, "typed"), rows_as_text(&mut c, "old"));

    let describe: Vec<Row> = c.query("DESCRIBE typed").unwrap();
    let types: Vec<String> = describe
        .iter()
        .map(|r| r.get::<String, _>(1).unwrap())
        .collect();
    assert_eq!(
        types,
        [
            "int",
            "time",
            "time(6)",
            "year",
            "bit(5)",
            "bit(64)",
            "decimal(65,30)"
        ]
    );
    let columns: Vec<String> = c
        .query(
            "SELECT CONCAT_WS('|', COLUMN_NAME, DATA_TYPE, COLUMN_TYPE, \
             IFNULL(NUMERIC_PRECISION, '-'), IFNULL(NUMERIC_SCALE, '-'), \
             IFNULL(DATETIME_PRECISION, '-'), IFNULL(COLUMN_DEFAULT, '-')) \
             FROM information_schema.COLUMNS WHERE TABLE_NAME = 'typed' ORDER BY ORDINAL_POSITION",
        )
        .unwrap();
    assert_eq!(
        columns[1..],
        [
            "t|time|time|-|-|0|01:02:03",
            "t6|time|time(6)|-|-|6|-",
            "y|year|year|-|-|-|2024",
            "b|bit|bit(5)|5|-|-|b'101'",
            "b64|bit|bit(64)|64|-|-|-",
            "d|decimal|decimal(65,30)|65|30|-|-",
        ]
    );
}

#[test]
fn mariadb_dump_of_the_types_reloads_unchanged() {
    if !require_tool("mariadb-dump", has_program("mariadb-dump"))
        || !require_tool("mariadb", has_program("mariadb"))
    {
        return;
    }
    let (srv, mut c) = setup();
    fill_every_type(&mut c);
    let before = (
        show_create_table(&mut c, "typed"),
        rows_as_text(&mut c, "typed"),
    );
    // BIT values go out as raw bytes in a string literal by default, as hex with --hex-blob.
    for options in [&[][..], &["--hex-blob"][..]] {
        let mut args = vec!["-uroot"];
        args.extend_from_slice(options);
        args.push("d");
        let dump = run_cli("mariadb-dump", srv.port, &args, b"");
        let (_fresh, mut f) = TestServer::loaded_from_dump("d", &dump);
        let after = (
            show_create_table(&mut f, "typed"),
            rows_as_text(&mut f, "typed"),
        );
        assert_eq!(after, before, "{options:?}");
    }
}

#[test]
fn outside_strict_mode_year_and_bit_are_clipped_with_mysqls_warnings() {
    let (_srv, mut c) = setup();
    c.query_drop("CREATE TABLE t (id INT PRIMARY KEY, y YEAR, b BIT(5), t TIME)")
        .unwrap();
    c.query_drop("SET sql_mode = ''").unwrap();
    c.query_drop("INSERT INTO t VALUES (1, 1800, 99, '01:00:00')")
        .unwrap();
    let warnings: Vec<(String, u16, String)> = c.query("SHOW WARNINGS").unwrap();
    assert_eq!(
        warnings,
        [
            (
                "Warning".to_string(),
                1264,
                "Out of range value for column 'y' at row 1".to_string()
            ),
            (
                "Warning".to_string(),
                1406,
                "Data too long for column 'b' at row 1".to_string()
            ),
        ]
    );
    let row: (String, u64) = c
        .query_first("SELECT y, b + 0 FROM t WHERE id = 1")
        .unwrap()
        .unwrap();
    assert_eq!(row, ("0000".to_string(), 31));
    // A TIME out of range keeps strict mode's error.
    assert_eq!(
        error(&mut c, "INSERT INTO t VALUES (2, 2000, 1, '900:00:00')").0,
        1292
    );
}

#[test]
fn a_bit_column_reads_as_its_bytes_in_string_context_and_year_4_is_year() {
    let (_srv, mut c) = setup();
    c.query_drop("CREATE TABLE bits (id INT PRIMARY KEY, b BIT(10))")
        .unwrap();
    c.query_drop("INSERT INTO bits VALUES (1, b'1111111111')")
        .unwrap();
    // String functions read its big-endian bytes; HEX and arithmetic read the number.
    let (concat, hex, len, plus): (String, String, u64, u64) = c
        .query_first("SELECT HEX(CONCAT('=', b)), HEX(b), LENGTH(b), b + 0 FROM bits")
        .unwrap()
        .unwrap();
    assert_eq!(
        (concat.as_str(), hex.as_str(), len, plus),
        ("3D03FF", "3FF", 2, 1023)
    );
    // YEAR(4), as MySQL 5.7 and MariaDB spell YEAR, is YEAR; other widths are 1818.
    c.query_drop("CREATE TABLE y4 (y YEAR(4))").unwrap();
    assert!(show_create_table(&mut c, "y4").contains("`y` year"));
    let (code, _, message) = error(&mut c, "CREATE TABLE y2 (y YEAR(2))");
    assert_eq!(
        (code, message.as_str()),
        (1818, "Supports only YEAR or YEAR(4) column.")
    );
}
