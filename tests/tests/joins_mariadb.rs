//! Joins written without ON beside MariaDB 10.11: `a JOIN b JOIN c`, with the ON of a later
//! join, nested in brackets or mixed with LEFT and CROSS joins, give MariaDB's rows in
//! MariaDB's column order (a JOIN without ON is a cross join, as in MySQL), or its error.

use mysql::prelude::*;
use mysql::Conn;
use tpbed_tests::{has_program, require_tool, MariaDb, Mode};

/// The tables: `a`, `b` and `c`, each with ids that the others partly share.
const FIXTURE: &[&str] = &[
    "CREATE TABLE a (id INT PRIMARY KEY, x VARCHAR(8))",
    "CREATE TABLE b (id INT PRIMARY KEY, y VARCHAR(8))",
    "CREATE TABLE c (id INT PRIMARY KEY, z VARCHAR(8))",
    "INSERT INTO a VALUES (1, 'a1'), (2, 'a2'), (3, 'a3')",
    "INSERT INTO b VALUES (1, 'b1'), (2, 'b2'), (4, 'b4')",
    "INSERT INTO c VALUES (2, 'c2'), (4, 'c4'), (5, 'c5')",
];

const QUERIES: &[&str] = &[
    "SELECT * FROM a JOIN b JOIN c ORDER BY a.id, b.id, c.id",
    "SELECT COUNT(*) FROM a JOIN b JOIN c",
    "SELECT COUNT(*) FROM a JOIN b JOIN c JOIN a AS a2",
    "SELECT a.x, b.y, c.z FROM a JOIN b JOIN c ON b.id = c.id ORDER BY 1, 2, 3",
    "SELECT * FROM a JOIN b JOIN c ON b.id = c.id ON a.id = b.id ORDER BY a.id",
    "SELECT * FROM a INNER JOIN b CROSS JOIN c WHERE a.id = b.id AND b.id = c.id",
    "SELECT a.x, b.y, c.z FROM a JOIN b LEFT JOIN c ON b.id = c.id ORDER BY 1, 2",
    "SELECT * FROM a JOIN (b JOIN c ON b.id = c.id) ON a.id = c.id",
    "SELECT * FROM (a JOIN b ON a.id = b.id) JOIN c ORDER BY a.id, c.id",
    "SELECT a.id, b.id, c.id FROM a JOIN b JOIN c WHERE a.id = b.id ORDER BY 1, 3",
    "SELECT a.x, c.z FROM a STRAIGHT_JOIN b JOIN c ON b.id = c.id WHERE a.id = 3 ORDER BY 2",
    "SELECT * FROM a, b JOIN c ON b.id = c.id ORDER BY a.id, b.id",
    "SELECT COUNT(*) FROM a JOIN b JOIN c ON a.id = c.id",
];

/// A query's rows (every value as text) or its error number.
fn answer(c: &mut Conn, sql: &str) -> Result<Vec<Vec<String>>, u16> {
    match c.query::<mysql::Row, _>(sql) {
        Ok(rows) => Ok(rows
            .into_iter()
            .map(|r| {
                r.unwrap()
                    .into_iter()
                    .map(|v| match v {
                        mysql::Value::NULL => "NULL".to_string(),
                        mysql::Value::Bytes(b) => String::from_utf8_lossy(&b).into_owned(),
                        mysql::Value::Int(i) => i.to_string(),
                        mysql::Value::UInt(u) => u.to_string(),
                        other => format!("{other:?}"),
                    })
                    .collect()
            })
            .collect()),
        Err(mysql::Error::MySqlError(e)) => Err(e.code),
        Err(e) => panic!("{sql}: {e}"),
    }
}

#[test]
fn joins_without_on_give_mariadbs_rows() {
    if !require_tool("mariadbd", has_program("mariadbd")) {
        return;
    }
    let mdb = MariaDb::start("joins", "64M", 50);
    let mut theirs = mdb.connect();
    let srv = Mode::PerConnection.start(&[]);
    let mut ours = srv.connect();
    ours.query_drop("CREATE DATABASE sbtest").unwrap();
    ours.query_drop("USE sbtest").unwrap();
    for c in [&mut ours, &mut theirs] {
        for sql in FIXTURE {
            c.query_drop(*sql).unwrap_or_else(|e| panic!("{sql}: {e}"));
        }
    }
    let mut differ = Vec::new();
    let mut answered = 0;
    for sql in QUERIES {
        let (o, t) = (answer(&mut ours, sql), answer(&mut theirs, sql));
        if o != t {
            differ.push(format!("{sql}\n  tpbed:   {o:?}\n  MariaDB: {t:?}"));
        } else if o.as_ref().is_ok_and(|rows| !rows.is_empty()) {
            answered += 1;
        }
        // The same through a prepared statement.
        let prepared = ours
            .prep(*sql)
            .and_then(|s| ours.exec::<mysql::Row, _, _>(&s, ()))
            .map(|rows| rows.len())
            .map_err(|e| match e {
                mysql::Error::MySqlError(e) => e.code,
                other => panic!("{sql}: {other}"),
            });
        assert_eq!(
            prepared,
            t.as_ref().map(Vec::len).map_err(|c| *c),
            "{sql} prepared"
        );
    }
    assert!(differ.is_empty(), "{}", differ.join("\n"));
    assert!(
        answered >= QUERIES.len() - 1,
        "{answered} queries gave rows"
    );
}
