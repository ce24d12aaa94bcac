//! ENUM, SET and JSON columns through the real binary, in both protocols: MySQL's spelling in
//! SHOW CREATE TABLE, DESCRIBE and information_schema; values written by member text or
//! number and read back as text; ENUM ordered (ORDER BY, index order, gap locks) by member
//! number; strict-mode errors with MySQL's code, SQLSTATE and text; JSON validated, printed
//! in MySQL's normalized form, read with its functions and never indexed; the result
//! metadata MySQL sends for each; and a `mariadb-dump` of such a table reloaded unchanged.

use mysql::consts::{ColumnFlags, ColumnType};
use mysql::prelude::*;
use mysql::Conn;
use tpbed_tests::{
    cli_output, code, has_program, mysql_error, require_tool, show_create_table, TestServer,
};

const QUEUE: &str = "CREATE TABLE q (id INT PRIMARY KEY, \
     status ENUM('pending','claimed','done') NOT NULL DEFAULT 'pending', \
     tags SET('red','green','blue'), doc JSON, KEY st (status))";

fn setup() -> (TestServer, Conn) {
    TestServer::with_database("d")
}

fn error(r: mysql::Result<()>) -> (u16, String, String) {
    let e = mysql_error(r);
    (e.code, e.state, e.message)
}

#[test]
fn declarations_are_spelled_as_mysql_spells_them() {
    let (_srv, mut c) = setup();
    c.query_drop(QUEUE).unwrap();
    let create = show_create_table(&mut c, "q");
    for line in [
        "`status` enum('pending','claimed','done') NOT NULL DEFAULT 'pending',",
        "`tags` set('red','green','blue') DEFAULT NULL,",
        "`doc` json DEFAULT NULL,",
        "KEY `st` (`status`)",
    ] {
        assert!(create.contains(line), "{line} in {create}");
    }
    // The SHOW CREATE TABLE text creates the same table again.
    c.query_drop("CREATE DATABASE d2").unwrap();
    c.query_drop("USE d2").unwrap();
    c.query_drop(&create).unwrap();
    assert_eq!(show_create_table(&mut c, "d2.q"), create);
    c.query_drop("USE d").unwrap();

    let described: Vec<(String, String, String, Option<String>)> = c
        .query_map("DESCRIBE q", |r: mysql::Row| {
            (
                r.get::<String, _>(0).unwrap(),
                r.get::<String, _>(1).unwrap(),
                r.get::<String, _>(2).unwrap(),
                r.get::<Option<String>, _>(4).unwrap(),
            )
        })
        .unwrap();
    assert_eq!(
        described[1],
        (
            "status".into(),
            "enum('pending','claimed','done')".into(),
            "NO".into(),
            Some("pending".into())
        )
    );
    assert_eq!(described[3].1, "json");
    let collations: Vec<Option<String>> = c
        .query_map("SHOW FULL COLUMNS FROM q", |r: mysql::Row| {
            r.get::<Option<String>, _>("Collation").unwrap()
        })
        .unwrap();
    let utf8 = || Some("utf8mb4_0900_ai_ci".to_string());
    assert_eq!(collations, [None, utf8(), utf8(), None]);
    let columns: Vec<(String, String, Option<u64>, Option<String>)> = c
        .query(
            "SELECT COLUMN_TYPE, DATA_TYPE, CHARACTER_MAXIMUM_LENGTH, CHARACTER_SET_NAME \
             FROM information_schema.COLUMNS WHERE TABLE_SCHEMA = 'd' AND TABLE_NAME = 'q' \
             ORDER BY ORDINAL_POSITION",
        )
        .unwrap();
    assert_eq!(
        columns[1..],
        [
            (
                "enum('pending','claimed','done')".into(),
                "enum".into(),
                Some(7),
                Some("utf8mb4".into())
            ),
            (
                "set('red','green','blue')".into(),
                "set".into(),
                Some(14),
                Some("utf8mb4".into())
            ),
            ("json".into(), "json".into(), None, None),
        ]
    );
    // ALTER TABLE rebuilds through the same definitions.
    c.query_drop("ALTER TABLE q ADD COLUMN size ENUM('s','m''s') NOT NULL")
        .unwrap();
    assert!(show_create_table(&mut c, "q").contains("`size` enum('s','m''s') NOT NULL"));
}

#[test]
fn bad_declarations_are_mysqls_errors() {
    let (_srv, mut c) = setup();
    assert_eq!(
        error(c.query_drop("CREATE TABLE t (c ENUM('a','b','A'))")),
        (
            1291,
            "HY000".into(),
            "Column 'c' has duplicated value 'A' in ENUM".into()
        )
    );
    let members: Vec<String> = (0..65).map(|i| format!("'m{i}'")).collect();
    assert_eq!(
        error(c.query_drop(format!("CREATE TABLE t (c SET({}))", members.join(",")))),
        (
            1097,
            "HY000".into(),
            "Too many strings for column c and SET".into()
        )
    );
    assert_eq!(
        error(c.query_drop("CREATE TABLE t (c SET('a', 'b,c'))")),
        (
            1367,
            "22007".into(),
            "Illegal set 'b,c' value found during parsing".into()
        )
    );
    assert_eq!(
        error(c.query_drop("CREATE TABLE t (id INT PRIMARY KEY, j JSON, KEY (j))")),
        (
            3152,
            "42000".into(),
            "JSON column 'j' supports indexing only via generated columns on a specified JSON \
             path."
                .into()
        )
    );
    assert_eq!(
        code(c.query_drop("CREATE TABLE t (j JSON PRIMARY KEY)")),
        3152
    );
    let tables: Vec<String> = c.query("SHOW TABLES").unwrap();
    assert!(tables.is_empty(), "{tables:?}");
    c.query_drop(QUEUE).unwrap();
    assert_eq!(code(c.query_drop("ALTER TABLE q ADD INDEX (doc)")), 3152);
    assert_eq!(code(c.query_drop("CREATE INDEX d ON q (id, doc)")), 3152);
}

#[test]
fn enum_values_are_written_by_text_or_number_and_ordered_by_number() {
    let (_srv, mut c) = setup();
    c.query_drop(QUEUE).unwrap();
    c.query_drop(
        "INSERT INTO q (id, status) VALUES (1, 'done'), (2, 'PENDING'), (3, 2), (4, '3'), \
         (5, 'claimed  ')",
    )
    .unwrap();
    c.query_drop("INSERT INTO q (id) VALUES (6)").unwrap();
    // Read back as the declared spelling; ORDER BY follows the member order, not the text.
    let rows: Vec<(i32, String, i64)> = c
        .query("SELECT id, status, status + 0 FROM q ORDER BY status, id")
        .unwrap();
    assert_eq!(
        rows,
        [
            (2, "pending".into(), 1),
            (6, "pending".into(), 1),
            (3, "claimed".into(), 2),
            (5, "claimed".into(), 2),
            (1, "done".into(), 3),
            (4, "done".into(), 3),
        ]
    );
    let desc: Vec<i32> = c
        .query("SELECT id FROM q ORDER BY status DESC, id LIMIT 2")
        .unwrap();
    assert_eq!(desc, [1, 4]);
    // Compared with text as text (case-insensitively), with numbers by number.
    let by_text: Vec<i32> = c
        .query("SELECT id FROM q WHERE status = 'Claimed' ORDER BY id")
        .unwrap();
    assert_eq!(by_text, [3, 5]);
    let by_number: Vec<i32> = c
        .query("SELECT id FROM q WHERE status >= 2 AND status < 3 ORDER BY id")
        .unwrap();
    assert_eq!(by_number, [3, 5]);
    let text_range: Vec<i32> = c
        .query("SELECT id FROM q WHERE status < 'done' ORDER BY id")
        .unwrap();
    assert_eq!(text_range, [3, 5], "'claimed' < 'done' < 'pending' as text");

    // The index on the ENUM serves lookups and numeric ranges, in member order.
    let plan: (Option<String>, String) = c
        .query_first("EXPLAIN SELECT id FROM q WHERE status = 'claimed'")
        .map(|r: Option<mysql::Row>| {
            let r = r.unwrap();
            (r.get("key").unwrap(), r.get("type").unwrap())
        })
        .unwrap();
    assert_eq!(plan, (Some("st".into()), "ref".into()));
    let plan: (Option<String>, String) = c
        .query_first("EXPLAIN SELECT id FROM q WHERE status > 1")
        .map(|r: Option<mysql::Row>| {
            let r = r.unwrap();
            (r.get("key").unwrap(), r.get("type").unwrap())
        })
        .unwrap();
    assert_eq!(plan, (Some("st".into()), "range".into()));
    let in_index_order: Vec<String> = c
        .query("SELECT status FROM q FORCE INDEX (st) WHERE status > 1")
        .unwrap();
    assert_eq!(in_index_order, ["claimed", "claimed", "done", "done"]);

    // UPDATE coerces too.
    c.query_drop("UPDATE q SET status = 3 WHERE id = 2")
        .unwrap();
    c.query_drop("UPDATE q SET status = 'Claimed' WHERE id = 6")
        .unwrap();
    let updated: Vec<String> = c
        .query("SELECT status FROM q WHERE id IN (2, 6) ORDER BY id")
        .unwrap();
    assert_eq!(updated, ["done", "claimed"]);
}

#[test]
fn an_enum_primary_key_is_ordered_and_unique_by_member() {
    let (_srv, mut c) = setup();
    c.query_drop("CREATE TABLE p (size ENUM('small','medium','large') PRIMARY KEY, n INT)")
        .unwrap();
    c.query_drop("INSERT INTO p VALUES ('large', 3), ('small', 1), (2, 2)")
        .unwrap();
    // A full scan walks the clustered index: member order.
    let scanned: Vec<String> = c.query("SELECT size FROM p").unwrap();
    assert_eq!(scanned, ["small", "medium", "large"]);
    let e = mysql_error(c.query_drop("INSERT INTO p VALUES ('MEDIUM', 9)"));
    assert_eq!(
        (e.code, e.message.as_str()),
        (1062, "Duplicate entry 'medium' for key 'p.PRIMARY'")
    );
    let plan: String = c
        .query_first::<mysql::Row, _>("EXPLAIN SELECT n FROM p WHERE size = 'Large'")
        .unwrap()
        .unwrap()
        .get("type")
        .unwrap();
    assert_eq!(plan, "const");
    let n: Option<i32> = c
        .query_first("SELECT n FROM p WHERE size = 'Large'")
        .unwrap();
    assert_eq!(n, Some(3));
    let by_number: Vec<i32> = c.query("SELECT n FROM p WHERE size IN (1, 3)").unwrap();
    assert_eq!(by_number, [1, 3]);
}

#[test]
fn invalid_enum_and_set_values_are_data_truncated() {
    let (_srv, mut c) = setup();
    c.query_drop(QUEUE).unwrap();
    let truncated = |column: &str, row: u32| {
        (
            1265,
            "01000".to_string(),
            format!("Data truncated for column '{column}' at row {row}"),
        )
    };
    assert_eq!(
        error(c.query_drop("INSERT INTO q (id, status) VALUES (1, 'done'), (2, 'bogus')")),
        truncated("status", 2)
    );
    for bad in ["0", "4", "''"] {
        assert_eq!(
            error(c.query_drop(format!("INSERT INTO q (id, status) VALUES (1, {bad})"))),
            truncated("status", 1),
            "{bad}"
        );
    }
    assert_eq!(
        error(c.query_drop("INSERT INTO q (id, tags) VALUES (1, 'red,pink')")),
        truncated("tags", 1)
    );
    assert_eq!(
        error(c.query_drop("INSERT INTO q (id, tags) VALUES (1, 8)")),
        truncated("tags", 1)
    );
    c.query_drop("INSERT INTO q (id) VALUES (1)").unwrap();
    assert_eq!(
        error(c.query_drop("UPDATE q SET status = 'gone'")),
        truncated("status", 1)
    );
    // Nothing half-written stays behind.
    let rows: Vec<(i32, String)> = c.query("SELECT id, status FROM q").unwrap();
    assert_eq!(rows, [(1, "pending".into())]);
}

#[test]
fn outside_strict_mode_non_members_are_stored_as_mysql_stores_them() {
    let (_srv, mut c) = setup();
    c.query_drop(QUEUE).unwrap();
    c.query_drop("INSERT IGNORE INTO q (id, status, tags) VALUES (1, 'bogus', 'blue,pink')")
        .unwrap();
    let warnings: Vec<(String, u16, String)> = c.query("SHOW WARNINGS").unwrap();
    assert_eq!(
        warnings,
        [
            (
                "Warning".into(),
                1265,
                "Data truncated for column 'status' at row 1".into()
            ),
            (
                "Warning".into(),
                1265,
                "Data truncated for column 'tags' at row 1".into()
            ),
        ]
    );
    c.query_drop("SET SESSION sql_mode = ''").unwrap();
    c.query_drop("INSERT INTO q (id, status, tags) VALUES (2, 9, 9)")
        .unwrap();
    // The '' error value is index 0: it sorts first and reads as the empty string.
    let rows: Vec<(i32, String, i64, String)> = c
        .query("SELECT id, status, status + 0, tags FROM q ORDER BY id")
        .unwrap();
    assert_eq!(
        rows,
        [
            (1, "".into(), 0, "blue".into()),
            (2, "".into(), 0, "red".into())
        ]
    );
    // JSON stays an error.
    assert_eq!(
        code(c.query_drop("INSERT INTO q (id, doc) VALUES (3, '{')")),
        3140
    );
    // A row holding the error value is updated like any other.
    c.query_drop("UPDATE q SET tags = 'green' WHERE id = 1")
        .unwrap();
}

#[test]
fn set_values_are_bitmasks_read_as_member_lists() {
    let (_srv, mut c) = setup();
    c.query_drop(QUEUE).unwrap();
    c.query_drop(
        "INSERT INTO q (id, tags) VALUES (1, 'blue,RED'), (2, ''), (3, 6), (4, 'green,green'), \
         (5, NULL)",
    )
    .unwrap();
    let rows: Vec<(i32, Option<String>, Option<i64>)> = c
        .query("SELECT id, tags, tags + 0 FROM q ORDER BY tags, id")
        .unwrap();
    assert_eq!(
        rows,
        [
            (5, None, None),
            (2, Some("".into()), Some(0)),
            (4, Some("green".into()), Some(2)),
            (1, Some("red,blue".into()), Some(5)),
            (3, Some("green,blue".into()), Some(6)),
        ]
    );
    let matched: Vec<i32> = c.query("SELECT id FROM q WHERE tags = 'red,blue'").unwrap();
    assert_eq!(matched, [1]);
    let members: Vec<String> = (0..64).map(|i| format!("'m{i}'")).collect();
    c.query_drop(format!(
        "CREATE TABLE wide (id INT PRIMARY KEY, s SET({}))",
        members.join(",")
    ))
    .unwrap();
    c.query_drop("INSERT INTO wide VALUES (1, 'm63,m0')")
        .unwrap();
    let wide: (String, u64) = c.query_first("SELECT s, s + 0 FROM wide").unwrap().unwrap();
    assert_eq!(wide, ("m0,m63".into(), (1 << 63) | 1));
}

#[test]
fn json_is_validated_normalized_and_read_with_its_functions() {
    let (_srv, mut c) = setup();
    c.query_drop(QUEUE).unwrap();
    c.query_drop(
        r#"INSERT INTO q (id, doc) VALUES (1, '{"bb": [1,2], "a" : {"x":"y"}, "b": true}'),
           (2, '[1, "two", null]'), (3, '"text"')"#,
    )
    .unwrap();
    let docs: Vec<String> = c.query("SELECT doc FROM q ORDER BY id").unwrap();
    assert_eq!(
        docs,
        [
            r#"{"a": {"x": "y"}, "b": true, "bb": [1, 2]}"#,
            r#"[1, "two", null]"#,
            r#""text""#
        ]
    );
    let e = error(c.query_drop(r#"INSERT INTO q (id, doc) VALUES (4, '{"a": 1')"#));
    assert_eq!(
        e,
        (
            3140,
            "22032".into(),
            "Invalid JSON text: \"Missing a comma or '}' after an object member.\" at position \
             7 in value for column 'q.doc'."
                .into()
        )
    );
    assert_eq!(
        code(c.query_drop("UPDATE q SET doc = 'not json' WHERE id = 1")),
        3140
    );

    let (extracted, arrow, unquoted, wildcard): (String, String, String, String) = c
        .query_first(
            "SELECT JSON_EXTRACT(doc, '$.a'), doc->'$.a.x', doc->>'$.a.x', \
             JSON_EXTRACT(doc, '$.bb[*]') FROM q WHERE id = 1",
        )
        .unwrap()
        .unwrap();
    assert_eq!(
        (extracted, arrow, unquoted, wildcard),
        (
            r#"{"x": "y"}"#.into(),
            r#""y""#.into(),
            "y".into(),
            "[1, 2]".into()
        )
    );
    let missing: Option<String> = c
        .query_first("SELECT doc->'$.nope' FROM q WHERE id = 1")
        .unwrap()
        .unwrap();
    assert_eq!(missing, None);
    let second: String = c
        .query_first("SELECT JSON_UNQUOTE(JSON_EXTRACT(doc, '$[1]')) FROM q WHERE id = 2")
        .unwrap()
        .unwrap();
    assert_eq!(second, "two");
    let (valid, invalid, object, array): (i64, i64, String, String) = c
        .query_first(
            "SELECT JSON_VALID('{\"a\": 1}'), JSON_VALID('{'), \
             JSON_OBJECT('id', 7, 'a', JSON_ARRAY(1, 'x', NULL)), JSON_ARRAY()",
        )
        .unwrap()
        .unwrap();
    assert_eq!(
        (valid, invalid, object.as_str(), array.as_str()),
        (1, 0, r#"{"a": [1, "x", null], "id": 7}"#, "[]")
    );
    assert_eq!(
        error(c.query_drop("SELECT JSON_EXTRACT('[1]', 'x')")),
        (
            3143,
            "42000".into(),
            "Invalid JSON path expression. The error is around character position 1.".into()
        )
    );
    assert_eq!(code(c.query_drop("SELECT JSON_EXTRACT('{', '$')")), 3141);
}

#[test]
fn both_protocols_carry_mysqls_metadata_and_text() {
    let (_srv, mut c) = setup();
    c.query_drop(QUEUE).unwrap();
    let insert = c
        .prep("INSERT INTO q (id, status, tags, doc) VALUES (?, ?, ?, ?)")
        .unwrap();
    c.exec_drop(&insert, (1, "claimed", "green,red", r#"{"k":[true]}"#))
        .unwrap();
    c.exec_drop(&insert, (2, 3, 4, "[]")).unwrap();
    assert_eq!(code(c.exec_drop(&insert, (3, "nope", "", "[]"))), 1265);
    let sql = "SELECT status, tags, doc FROM q ORDER BY id";
    let text: Vec<(String, String, String)> = c.query(sql).unwrap();
    let stmt = c.prep(sql).unwrap();
    let binary: Vec<(String, String, String)> = c.exec(&stmt, ()).unwrap();
    let want: Vec<(String, String, String)> = vec![
        (
            "claimed".into(),
            "red,green".into(),
            r#"{"k": [true]}"#.into(),
        ),
        ("done".into(), "blue".into(), "[]".into()),
    ];
    assert_eq!(text, want);
    assert_eq!(binary, want);

    // ENUM and SET are MYSQL_TYPE_STRING with ENUM_FLAG / SET_FLAG in utf8mb4; JSON is
    // MYSQL_TYPE_JSON, a binary BLOB.
    let result = c.query_iter(sql).unwrap();
    let cols = result.columns();
    let cols = cols.as_ref();
    let meta: Vec<(ColumnType, bool, u16, u32)> = cols
        .iter()
        .map(|col| {
            (
                col.column_type(),
                col.flags()
                    .intersects(ColumnFlags::ENUM_FLAG | ColumnFlags::SET_FLAG),
                col.character_set(),
                col.column_length(),
            )
        })
        .collect();
    assert_eq!(
        meta,
        [
            (ColumnType::MYSQL_TYPE_STRING, true, 255, 28),
            (ColumnType::MYSQL_TYPE_STRING, true, 255, 56),
            (ColumnType::MYSQL_TYPE_JSON, false, 63, u32::MAX),
        ]
    );
    assert!(cols[0]
        .flags()
        .contains(ColumnFlags::ENUM_FLAG | ColumnFlags::NOT_NULL_FLAG));
    assert!(cols[1].flags().contains(ColumnFlags::SET_FLAG));
    assert!(cols[2]
        .flags()
        .contains(ColumnFlags::BLOB_FLAG | ColumnFlags::BINARY_FLAG));
    drop(result);
    let stmt = c.prep("SELECT status FROM q WHERE status = ?").unwrap();
    let found: Vec<String> = c.exec(&stmt, ("DONE",)).unwrap();
    assert_eq!(found, ["done"]);
}

#[test]
fn enum_gap_locks_follow_member_order() {
    let (srv, mut a) = setup();
    a.query_drop(QUEUE).unwrap();
    a.query_drop("INSERT INTO q (id, status) VALUES (10, 'done')")
        .unwrap();
    // 'pending' is member 1: in the index it lies before ('done', 10), though as text it
    // sorts after 'done'.
    a.query_drop("BEGIN").unwrap();
    let none: Vec<i32> = a
        .query("SELECT id FROM q WHERE status = 'pending' FOR UPDATE")
        .unwrap();
    assert!(none.is_empty());
    let mut b = srv.connect_db("d");
    b.query_drop("SET SESSION innodb_lock_wait_timeout = 1")
        .unwrap();
    // ('claimed', 5) falls in the locked gap before ('done', 10) ...
    assert_eq!(
        code(b.query_drop("INSERT INTO q (id, status) VALUES (5, 'claimed')")),
        1205
    );
    // ... ('done', 20) lies after it.
    b.query_drop("INSERT INTO q (id, status) VALUES (20, 'done')")
        .unwrap();
    let locks: Vec<(String, String)> = a
        .query(
            "SELECT LOCK_MODE, LOCK_DATA FROM performance_schema.data_locks \
             WHERE INDEX_NAME = 'st' ORDER BY LOCK_DATA",
        )
        .unwrap();
    assert!(
        locks.contains(&("X,GAP".into(), "3, 10".into())),
        "{locks:?}"
    );
    a.query_drop("ROLLBACK").unwrap();
    b.query_drop("INSERT INTO q (id, status) VALUES (5, 'claimed')")
        .unwrap();
}

/// A row of the queue table: id, status, tags, doc.
type QueueRow = (i32, String, Option<String>, Option<String>);

#[test]
fn mariadb_dump_of_enum_set_and_json_reloads_unchanged() {
    if !require_tool("mariadb-dump", has_program("mariadb-dump"))
        || !require_tool("mariadb", has_program("mariadb"))
    {
        return;
    }
    let (srv, mut c) = setup();
    c.query_drop(QUEUE).unwrap();
    c.query_drop(
        r#"INSERT INTO q VALUES (1, 'claimed', 'blue,red', '{"quote": "it''s \\"x\\"", "n": [1.5]}'),
           (2, 'pending', '', NULL), (3, 'done', NULL, '[]')"#,
    )
    .unwrap();
    let snapshot = |c: &mut Conn| -> (String, Vec<QueueRow>) {
        (
            show_create_table(c, "d.q"),
            c.query("SELECT id, status, tags, doc FROM d.q ORDER BY id")
                .unwrap(),
        )
    };
    let before = snapshot(&mut c);
    let out = cli_output("mariadb-dump", srv.port, &["-uroot", "d"], b"");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("`status` enum('pending','claimed','done') NOT NULL DEFAULT 'pending'"),
        "{text}"
    );
    let (_fresh, mut f) = TestServer::loaded_from_dump("d", &out.stdout);
    assert_eq!(snapshot(&mut f), before);
    // The reloaded ENUM still orders by member number.
    let order: Vec<i32> = f.query("SELECT id FROM d.q ORDER BY status").unwrap();
    assert_eq!(order, [2, 1, 3]);
}
