//! Long flat chains of `OR` and `AND` answer as in MySQL, in every connection-handling mode,
//! through text and prepared statements: MySQL reads such a chain as one list, so a
//! 5,000-term `WHERE id = 1 OR id = 2 OR ...` is an ordinary query (it used to get 1436), its
//! equalities on an indexed column are still index lookups, and its column name is its text
//! cut at 256 characters. A genuinely deep statement still gets 1436.

use mysql::prelude::*;
use mysql::Conn;
use tpbed_tests::{each_mode, has_program, require_tool, MariaDb, Mode};

/// Rows of `t`: ids 0..ROWS, `v` = id, and `n` NULL on odd ids.
const ROWS: i64 = 10_000;

/// The terms of the chains.
const TERMS: i64 = 5_000;

fn fixture(c: &mut Conn) {
    c.query_drop("CREATE TABLE t (id INT PRIMARY KEY, v INT, n INT, KEY kv (v))")
        .unwrap();
    let rows: Vec<String> = (0..ROWS)
        .map(|i| {
            let n = if i % 2 == 0 {
                i.to_string()
            } else {
                "NULL".into()
            };
            format!("({i}, {i}, {n})")
        })
        .collect();
    c.query_drop(format!("INSERT INTO t VALUES {}", rows.join(",")))
        .unwrap();
}

/// `col = 0 OR col = 2 OR ...`: the even values below 2 × TERMS.
fn even_or(col: &str) -> String {
    let terms: Vec<String> = (0..TERMS).map(|i| format!("{col} = {}", 2 * i)).collect();
    terms.join(" OR ")
}

/// `id <> 1 AND id <> 3 AND ...`: every odd id below 2 × TERMS excluded.
fn odd_excluded() -> String {
    let terms: Vec<String> = (0..TERMS).map(|i| format!("id <> {}", 2 * i + 1)).collect();
    terms.join(" AND ")
}

fn evens() -> Vec<i64> {
    (0..TERMS).map(|i| 2 * i).collect()
}

fn ids(c: &mut Conn, sql: &str) -> Vec<i64> {
    let mut v: Vec<i64> = c
        .query(sql)
        .unwrap_or_else(|e| panic!("{}: {e}", &sql[..60]));
    v.sort_unstable();
    v
}

fn prepared_ids(c: &mut Conn, sql: &str, params: Vec<mysql::Value>) -> Vec<i64> {
    let stmt = c
        .prep(sql)
        .unwrap_or_else(|e| panic!("prepare {}: {e}", &sql[..60]));
    let mut v: Vec<i64> = c.exec(&stmt, params).unwrap();
    v.sort_unstable();
    v
}

/// EXPLAIN's (type, key) for `sql`.
fn access(c: &mut Conn, sql: &str) -> (String, Option<String>) {
    let row: mysql::Row = c.query_first(format!("EXPLAIN {sql}")).unwrap().unwrap();
    (row.get("type").unwrap(), row.get("key").unwrap())
}

fn code<T: std::fmt::Debug>(r: mysql::Result<T>) -> u16 {
    match r {
        Err(mysql::Error::MySqlError(e)) => e.code,
        other => panic!("expected a server error, got {other:?}"),
    }
}

each_mode! {
    fn or_and_and_chains_of_5000_terms_answer(mode) {
        let srv = mode.start(&[]);
        let mut c = srv.connect();
        c.query_drop("CREATE DATABASE d").unwrap();
        c.query_drop("USE d").unwrap();
        fixture(&mut c);
        let or = format!("SELECT id FROM t WHERE {}", even_or("id"));
        assert_eq!(ids(&mut c, &or), evens(), "{mode:?}: OR, text");
        assert_eq!(prepared_ids(&mut c, &or, vec![]), evens(), "{mode:?}: OR, prepared");
        let and = format!("SELECT id FROM t WHERE id < {} AND {}", 2 * TERMS, odd_excluded());
        assert_eq!(ids(&mut c, &and), evens(), "{mode:?}: AND, text");
        assert_eq!(prepared_ids(&mut c, &and, vec![]), evens(), "{mode:?}: AND, prepared");
        // A parameter per term, numbered in the order written.
        let marks = vec!["id = ?"; TERMS as usize].join(" OR ");
        let params = evens().into_iter().map(mysql::Value::from).collect();
        let got = prepared_ids(&mut c, &format!("SELECT id FROM t WHERE {marks}"), params);
        assert_eq!(got, evens(), "{mode:?}: OR of parameters");
        // On a secondary index and mixed: (v = 0 OR ...) AND (n IS NULL OR n = ...).
        let mixed = format!(
            "SELECT id FROM t WHERE ({}) AND (n IS NULL OR {})",
            even_or("v"),
            even_or("n")
        );
        assert_eq!(ids(&mut c, &mixed), evens(), "{mode:?}: mixed");
        // Three-valued logic over the whole chain: n is NULL on odd rows.
        let nulls: Option<i64> = c
            .query_first(format!("SELECT COUNT(*) FROM t WHERE ({}) IS NULL", even_or("n")))
            .unwrap();
        assert_eq!(nulls, Some(ROWS / 2), "{mode:?}: NULL rows");
        // Equalities on an indexed column are still ranges of that index.
        let on_pk = format!("SELECT id FROM t WHERE {}", even_or("id"));
        assert_eq!(access(&mut c, &on_pk), ("range".into(), Some("PRIMARY".into())), "{mode:?}");
        let on_kv = format!("SELECT v FROM t WHERE {}", even_or("v"));
        assert_eq!(access(&mut c, &on_kv), ("range".into(), Some("kv".into())), "{mode:?}");
        // As a select item: its column name is its text cut at 256 characters.
        let item = even_or("id");
        let result = c.query_iter(format!("SELECT {item} FROM t WHERE id = 2")).unwrap();
        let name = result.columns().as_ref()[0].name_str().into_owned();
        drop(result);
        assert_eq!(name, item[..256], "{mode:?}");
        // Too much is still refused, and nothing overflows.
        let too_long = vec!["1"; 40_000].join(" OR ");
        assert_eq!(code(c.query_drop(format!("SELECT {too_long}"))), 1436, "{mode:?}");
        let deep = format!("SELECT {}1{}", "(".repeat(100_000), ")".repeat(100_000));
        assert_eq!(code(c.query_drop(&deep)), 1436, "{mode:?}");
        assert_eq!(code(c.prep(&deep)), 1436, "{mode:?}");
        assert_eq!(srv.scalar("SELECT 1"), "1", "{mode:?}");
    }
}

#[test]
fn long_chains_answer_like_mariadb() {
    if !require_tool("mariadbd", has_program("mariadbd")) {
        return;
    }
    let mdb = MariaDb::start("chains", "64M", 20);
    let mut theirs = mdb.connect();
    let srv = Mode::PerConnection.start(&[]);
    let mut ours = srv.connect();
    ours.query_drop("CREATE DATABASE sbtest").unwrap();
    ours.query_drop("USE sbtest").unwrap();
    for c in [&mut ours, &mut theirs] {
        fixture(c);
    }
    let ones = |op: &str, n: usize, last: &str| format!("{}{op}{last}", vec!["0"; n].join(op));
    for sql in [
        format!("SELECT id FROM t WHERE {}", even_or("id")),
        format!("SELECT id FROM t WHERE id < 10000 AND {}", odd_excluded()),
        format!("SELECT id FROM t WHERE ({}) IS NULL", even_or("n")),
        format!("SELECT id FROM t WHERE NOT ({}) AND id < 100", even_or("n")),
        format!(
            "SELECT ({}) IS NULL FROM t WHERE id = 1",
            ones(" OR ", 3_000, "NULL")
        ),
        format!("SELECT {} FROM t WHERE id = 1", ones(" OR ", 3_000, "1")),
        format!(
            "SELECT {} FROM t WHERE id = 1",
            ones(" AND ", 3_000, "NULL")
        ),
        format!(
            "SELECT ({}) + 1 FROM t WHERE id = 1",
            ones(" && ", 3_000, "1")
        ),
    ] {
        let o: Vec<Option<i64>> = ours.query(&sql).unwrap_or_else(|e| panic!("{e}"));
        let t: Vec<Option<i64>> = theirs.query(&sql).unwrap_or_else(|e| panic!("{e}"));
        let (mut o, mut t) = (o, t);
        o.sort_unstable();
        t.sort_unstable();
        assert_eq!(o, t, "{}", &sql[..80]);
    }
}
