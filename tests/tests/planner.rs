//! The planner on TPC-C's statements (Percona's sysbench-tpcc schema): EXPLAIN shows the
//! access MySQL would pick, and the index path returns exactly the rows a full scan
//! (`IGNORE INDEX`) returns over a generated table.

use mysql::prelude::*;
use mysql::{Conn, Row};
use tpbed_tests::{session_status, TestServer};

/// Last names as TPC-C builds them, in mixed case so the collation matters.
const SYLLABLES: [&str; 10] = [
    "BAR", "ought", "Able", "PRI", "pres", "Ese", "ANTI", "cally", "Ation", "EING",
];

fn last_name(n: usize) -> String {
    format!(
        "{}{}{}",
        SYLLABLES[(n / 100) % 10],
        SYLLABLES[(n / 10) % 10],
        SYLLABLES[n % 10]
    )
}

/// warehouse1 (2 rows) and customer1 (2 warehouses x 3 districts x 300 customers) with
/// TPC-C's keys.
fn tpcc() -> (TestServer, Conn) {
    let (srv, mut c) = TestServer::with_database("tpcc");
    c.query_drop(
        "CREATE TABLE warehouse1 (w_id smallint not null, w_name varchar(10), \
         w_tax decimal(4,2), w_ytd decimal(12,2), primary key (w_id))",
    )
    .unwrap();
    c.query_drop(
        "CREATE TABLE customer1 (c_id int not null, c_d_id tinyint not null, \
         c_w_id smallint not null, c_first varchar(16), c_middle char(2), c_last varchar(16), \
         c_credit char(2), c_discount decimal(4,2), c_balance decimal(12,2), \
         PRIMARY KEY(c_w_id, c_d_id, c_id))",
    )
    .unwrap();
    c.query_drop("CREATE INDEX idx_customer1 ON customer1 (c_w_id,c_d_id,c_last,c_first)")
        .unwrap();
    c.query_drop("INSERT INTO warehouse1 VALUES (1, 'one', 0.10, 0), (2, 'two', 0.20, 0)")
        .unwrap();
    for w in 1..=2 {
        for d in 1..=3 {
            let rows: Vec<String> = (1..=300)
                .map(|i| {
                    let first = format!("F{:03}", (i * 37) % 300);
                    let credit = if i % 10 == 0 { "BC" } else { "GC" };
                    format!(
                        "({i}, {d}, {w}, '{first}', 'OE', '{}', '{credit}', 0.{:02}, {})",
                        last_name((i * 7 + d) % 120),
                        i % 50,
                        i * 3
                    )
                })
                .collect();
            c.query_drop(format!("INSERT INTO customer1 VALUES {}", rows.join(",")))
                .unwrap();
        }
    }
    (srv, c)
}

#[derive(Debug, PartialEq)]
struct Plan {
    table: String,
    kind: String,
    key: Option<String>,
    key_ref: Option<String>,
    rows: u64,
    extra: String,
}

fn explain(c: &mut Conn, sql: &str) -> Vec<Plan> {
    let rows: Vec<Row> = c.query(format!("EXPLAIN {sql}")).unwrap();
    rows.into_iter()
        .map(|r| Plan {
            table: r.get(2).unwrap(),
            kind: r.get(4).unwrap(),
            key: r.get::<Option<String>, _>(6).unwrap(),
            key_ref: r.get::<Option<String>, _>(8).unwrap(),
            rows: r.get::<String, _>(9).unwrap().parse().unwrap(),
            extra: r.get::<Option<String>, _>(11).unwrap().unwrap_or_default(),
        })
        .collect()
}

/// Every row of a query, as text, in the order returned.
fn rows(c: &mut Conn, sql: &str) -> Vec<Vec<Option<String>>> {
    let rs: Vec<Row> = c.query(sql).unwrap();
    rs.into_iter()
        .map(|r| {
            (0..r.len())
                .map(|i| r.get::<Option<String>, _>(i).unwrap())
                .collect()
        })
        .collect()
}

/// The same rows as a full scan of `table` gives: `sql` has `{hint}` where the table is
/// named, replaced once by nothing and once by `IGNORE INDEX` of every index.
fn same_as_full_scan(c: &mut Conn, sql: &str, indexes: &str) -> usize {
    let fast = rows(c, &sql.replace("{hint}", ""));
    let slow = rows(
        c,
        &sql.replace("{hint}", &format!("IGNORE INDEX ({indexes})")),
    );
    assert_eq!(fast, slow, "{sql}");
    fast.len()
}

#[test]
fn new_order_customer_lookup_is_const_through_the_join() {
    let (_srv, mut c) = tpcc();
    let sql = "SELECT c_discount, c_last, c_credit, w_tax FROM customer1, warehouse1 \
               WHERE w_id = 2 AND c_w_id = w_id AND c_d_id = 3 AND c_id = 40";
    let plan = explain(&mut c, sql);
    assert_eq!(plan.len(), 2);
    for (p, table, key_ref) in [
        (&plan[0], "customer1", "const,const,const"),
        (&plan[1], "warehouse1", "const"),
    ] {
        assert_eq!(
            (
                p.table.as_str(),
                p.kind.as_str(),
                p.key.as_deref(),
                p.key_ref.as_deref(),
                p.rows,
                p.extra.as_str()
            ),
            (table, "const", Some("PRIMARY"), Some(key_ref), 1, ""),
            "{p:?}"
        );
    }
    let want = vec![vec![
        Some("0.40".to_string()),
        Some(last_name((40 * 7 + 3) % 120)),
        Some("BC".to_string()),
        Some("0.20".to_string()),
    ]];
    assert_eq!(rows(&mut c, sql), want);
    // Through a chain of equalities and with the constant on the other table's side.
    let chained = "SELECT c_id FROM warehouse1 JOIN customer1 ON c_w_id = w_id \
                   WHERE w_id = 1 AND c_d_id = 1 AND c_id = 7";
    let p = explain(&mut c, chained);
    assert_eq!((p[1].kind.as_str(), p[1].rows), ("const", 1), "{p:?}");
    assert_eq!(rows(&mut c, chained), vec![vec![Some("7".to_string())]]);
    // A LEFT JOIN's inner table is not given the outer table's constant from WHERE.
    let left = "SELECT w_id, c_id FROM warehouse1 LEFT JOIN customer1 \
                ON c_w_id = w_id AND c_d_id = 1 AND c_id = 999 WHERE w_id = 1";
    assert_eq!(rows(&mut c, left), vec![vec![Some("1".to_string()), None]]);
}

#[test]
fn last_name_lookups_read_the_text_index() {
    let (_srv, mut c) = tpcc();
    let name = last_name(123 % 120);
    // Payment: the count and the ids by first name (covered by idx_customer1).
    for sql in [
        format!(
            "SELECT count(c_id) namecnt FROM customer1 WHERE c_w_id = 1 AND c_d_id = 2 \
             AND c_last = '{name}'"
        ),
        format!(
            "SELECT c_id FROM customer1 WHERE c_w_id = 1 AND c_d_id = 2 AND c_last = '{name}' \
             ORDER BY c_first"
        ),
    ] {
        let p = &explain(&mut c, &sql)[0];
        assert_eq!(
            (
                p.kind.as_str(),
                p.key.as_deref(),
                p.key_ref.as_deref(),
                p.extra.as_str()
            ),
            (
                "ref",
                Some("idx_customer1"),
                Some("const,const,const"),
                "Using index"
            ),
            "{sql}: {p:?}"
        );
        assert!(p.rows < 20, "counted in the index: {p:?}");
    }
    // Order-Status reads columns the index lacks: ref, no filesort.
    let sql = format!(
        "SELECT c_balance, c_first, c_middle, c_id FROM customer1 WHERE c_w_id = 1 \
         AND c_d_id = 2 AND c_last = '{name}' ORDER BY c_first"
    );
    let p = &explain(&mut c, &sql)[0];
    assert_eq!(
        (p.kind.as_str(), p.key.as_deref(), p.extra.as_str()),
        ("ref", Some("idx_customer1"), ""),
        "{p:?}"
    );
    // The index path finds every spelling the comparison finds, in the same order.
    let all = "PRIMARY, idx_customer1";
    let lower = name.to_lowercase();
    for sql in [
        format!(
            "SELECT c_id, c_last FROM customer1 {{hint}} WHERE c_w_id = 1 AND c_d_id = 2 \
             AND c_last = '{lower}' ORDER BY c_first, c_id"
        ),
        format!(
            "SELECT c_id, c_first FROM customer1 {{hint}} WHERE c_w_id = 2 AND c_d_id = 3 \
             AND c_last = '{}  ' ORDER BY c_first, c_id",
            name.to_uppercase()
        ),
        "SELECT c_id, c_last FROM customer1 {hint} WHERE c_w_id = 1 AND c_d_id = 1 \
         AND c_last >= 'bar' AND c_last < 'BARC' ORDER BY c_last, c_first, c_id"
            .to_string(),
        "SELECT c_w_id, c_d_id, c_id FROM customer1 {hint} WHERE c_w_id = 2 AND c_d_id = 1 \
         AND c_last IN ('barbarpres', 'OUGHTBARBAR', 'nothing') ORDER BY c_w_id, c_d_id, c_id"
            .to_string(),
    ] {
        let n = same_as_full_scan(&mut c, &sql, all);
        assert!(n > 0, "the query finds rows: {sql}");
    }
    // A number compared with text compares as a number: no index search.
    let p = &explain(
        &mut c,
        "SELECT c_id FROM customer1 WHERE c_w_id = 1 AND c_d_id = 1 AND c_last = 5",
    )[0];
    assert_eq!(p.key_ref.as_deref(), Some("const,const"), "{p:?}");
}

#[test]
fn a_unique_text_key_compares_as_the_collation() {
    let (_srv, mut c) = TestServer::with_database("u");
    c.query_drop("CREATE TABLE t (id INT PRIMARY KEY, name VARCHAR(20), UNIQUE KEY (name))")
        .unwrap();
    c.query_drop("INSERT INTO t VALUES (1, 'Smith')").unwrap();
    let e = c
        .query_drop("INSERT INTO t VALUES (2, 'SMITH ')")
        .unwrap_err();
    assert!(e.to_string().contains("1062"), "{e}");
    let got: Vec<(i32, String)> = c
        .query("SELECT id, name FROM t WHERE name = 'smith'")
        .unwrap();
    assert_eq!(got, vec![(1, "Smith".to_string())]);
    let p = &explain(&mut c, "SELECT id FROM t WHERE name = 'smith'")[0];
    assert_eq!((p.kind.as_str(), p.key.as_deref()), ("const", Some("name")));
}

/// A table of `n` rows: id (PRIMARY), k = id % 97 (indexed), g = id % 5 and v text.
fn generated(c: &mut Conn, n: usize) {
    c.query_drop(
        "CREATE TABLE g (id INT PRIMARY KEY, k INT, g INT, v VARCHAR(12), KEY k_g (k, g))",
    )
    .unwrap();
    for chunk in (0..n).collect::<Vec<_>>().chunks(2000) {
        let rows: Vec<String> = chunk
            .iter()
            .map(|i| format!("({i}, {}, {}, 'v{}')", i % 97, i % 5, i % 13))
            .collect();
        c.query_drop(format!("INSERT INTO g VALUES {}", rows.join(",")))
            .unwrap();
    }
}

#[test]
fn in_lists_and_or_chains_are_index_lookups() {
    let (_srv, mut c) = TestServer::with_database("g");
    generated(&mut c, 20_000);
    let ids: Vec<String> = (0..10_000)
        .map(|i| ((i * 7919) % 25_000).to_string())
        .collect();
    let big = format!(
        "SELECT count(*), sum(id) FROM g {{hint}} WHERE id IN ({})",
        ids.join(",")
    );
    let p = &explain(&mut c, &big.replace("{hint}", ""))[0];
    assert_eq!(
        (p.kind.as_str(), p.key.as_deref()),
        ("range", Some("PRIMARY")),
        "{p:?}"
    );
    same_as_full_scan(&mut c, &big, "PRIMARY, k_g");
    let expected: usize = (0..10_000)
        .map(|i| (i * 7919) % 25_000)
        .filter(|v| *v < 20_000)
        .collect::<std::collections::BTreeSet<_>>()
        .len();
    let got: Vec<(usize, String)> = c.query(big.replace("{hint}", "")).unwrap();
    assert_eq!(got[0].0, expected, "duplicates and misses counted once");
    // An OR of equalities on an indexed column.
    let or = "SELECT id FROM g {hint} WHERE k = 5 OR k = 90 OR k = 5 OR k = 13 ORDER BY id";
    let p = &explain(&mut c, &or.replace("{hint}", ""))[0];
    assert_eq!(
        (p.kind.as_str(), p.key.as_deref()),
        ("range", Some("k_g")),
        "{p:?}"
    );
    assert!(same_as_full_scan(&mut c, or, "PRIMARY, k_g") > 0);
}

#[test]
fn row_constructor_in_uses_the_key_prefix() {
    let (_srv, mut c) = TestServer::with_database("g");
    generated(&mut c, 3_000);
    let sql = "SELECT id, k, g FROM g {hint} WHERE (k, g) IN ((5, 0), (10, 3), (5, 0), (96, 4)) \
               ORDER BY id";
    let p = &explain(&mut c, &sql.replace("{hint}", ""))[0];
    assert_eq!(
        (p.kind.as_str(), p.key.as_deref()),
        ("range", Some("k_g")),
        "{p:?}"
    );
    assert!(same_as_full_scan(&mut c, sql, "PRIMARY, k_g") > 0);
    // Columns in another order than the key's, and a row equality.
    let swapped = "SELECT id FROM g {hint} WHERE (g, k) IN ((0, 5), (4, 96)) ORDER BY id";
    assert!(same_as_full_scan(&mut c, swapped, "PRIMARY, k_g") > 0);
    let eq = "SELECT id FROM g {hint} WHERE (k, g) = (10, 3) ORDER BY id";
    assert!(same_as_full_scan(&mut c, eq, "PRIMARY, k_g") > 0);
    // NULL in a row: no match, and NOT IN is NULL (no rows) when a row might match.
    let n: Vec<u64> = c
        .query("SELECT count(*) FROM g WHERE (k, g) NOT IN ((5, NULL))")
        .unwrap();
    let all_but: Vec<u64> = c.query("SELECT count(*) FROM g WHERE k <> 5").unwrap();
    assert_eq!(
        n, all_but,
        "(5, x) NOT IN ((5, NULL)) is NULL, any other k is true"
    );
    let e = c
        .query_drop("SELECT id FROM g WHERE (k, g) IN ((1, 2, 3))")
        .unwrap_err();
    assert!(e.to_string().contains("1241"), "{e}");
}

#[test]
fn scalar_subqueries_in_the_select_list() {
    let (_srv, mut c) = tpcc();
    // Uncorrelated, also without FROM.
    let got: Vec<(i32, i64, Option<i32>)> = c
        .query("SELECT w_id, (SELECT count(*) FROM customer1), (SELECT 7) FROM warehouse1 ORDER BY w_id")
        .unwrap();
    assert_eq!(got, vec![(1, 1800, Some(7)), (2, 1800, Some(7))]);
    // Run once for the statement, not once per warehouse.
    let before = session_status(&mut c, "Innodb_rows_read");
    let n: Vec<(i32, i64)> = c
        .query("SELECT w_id, (SELECT count(*) FROM customer1) FROM warehouse1")
        .unwrap();
    let read = session_status(&mut c, "Innodb_rows_read") - before;
    assert_eq!(n.len(), 2);
    assert!(read < 2 * 1800, "{read} rows read");
    let one: Vec<Option<String>> = c
        .query("SELECT (SELECT w_name FROM warehouse1 WHERE w_id = 2)")
        .unwrap();
    assert_eq!(one, vec![Some("two".to_string())]);
    let dual: Vec<Option<i64>> = c
        .query("SELECT (SELECT count(*) FROM warehouse1) FROM DUAL")
        .unwrap();
    assert_eq!(dual, vec![Some(2)]);
    // Correlated: per customer, its warehouse's tax and the customers of its district, the
    // same as a join and a grouped derived table give.
    let sub = rows(
        &mut c,
        "SELECT c.c_id, c.c_d_id, c.c_w_id, \
         (SELECT w_tax FROM warehouse1 WHERE w_id = c.c_w_id) tax, \
         (SELECT count(*) FROM customer1 x WHERE x.c_w_id = c.c_w_id AND x.c_d_id = c.c_d_id \
          AND x.c_balance > c.c_balance) richer \
         FROM customer1 c WHERE c.c_id <= 20 ORDER BY c.c_w_id, c.c_d_id, c.c_id",
    );
    let join = rows(
        &mut c,
        "SELECT c.c_id, c.c_d_id, c.c_w_id, w_tax, 300 - c.c_id \
         FROM customer1 c JOIN warehouse1 ON w_id = c.c_w_id \
         WHERE c.c_id <= 20 ORDER BY c.c_w_id, c.c_d_id, c.c_id",
    );
    assert_eq!(sub.len(), 120);
    assert_eq!(sub, join);
    let p = explain(
        &mut c,
        "SELECT c_id, (SELECT w_tax FROM warehouse1 WHERE w_id = c.c_w_id) FROM customer1 c",
    );
    assert_eq!(
        (p[1].kind.as_str(), p[1].key.as_deref()),
        ("eq_ref", Some("PRIMARY")),
        "{p:?}"
    );
    // A subquery in WHERE is a key value.
    let top: Vec<i32> = c
        .query("SELECT w_id FROM warehouse1 WHERE w_id = (SELECT max(c_w_id) FROM customer1)")
        .unwrap();
    assert_eq!(top, vec![2]);
    for (sql, code) in [
        (
            "SELECT (SELECT w_id FROM warehouse1) FROM warehouse1",
            "1242",
        ),
        (
            "SELECT (SELECT w_id, w_tax FROM warehouse1) FROM warehouse1",
            "1241",
        ),
    ] {
        let e = c.query_drop(sql).unwrap_err();
        assert!(e.to_string().contains(code), "{sql}: {e}");
    }
}

#[test]
fn tpcc_check_ten_with_straight_join() {
    let (_srv, mut c) = tpcc();
    c.query_drop(
        "CREATE TABLE orders1 (o_id int not null, o_d_id tinyint not null, \
         o_w_id smallint not null, o_c_id int, PRIMARY KEY(o_w_id, o_d_id, o_id))",
    )
    .unwrap();
    c.query_drop(
        "CREATE TABLE order_line1 (ol_o_id int not null, ol_d_id tinyint not null, \
         ol_w_id smallint not null, ol_number tinyint not null, ol_amount decimal(6,2), \
         ol_delivery_d datetime, PRIMARY KEY(ol_w_id, ol_d_id, ol_o_id, ol_number))",
    )
    .unwrap();
    c.query_drop("CREATE INDEX idx_orders1 ON orders1 (o_w_id,o_d_id,o_c_id,o_id)")
        .unwrap();
    // Customer i of district 1, warehouse 1 has one order of i lines of 1.00 each.
    for i in 1..=30 {
        c.query_drop(format!("INSERT INTO orders1 VALUES ({i}, 1, 1, {i})"))
            .unwrap();
        let lines: Vec<String> = (1..=i)
            .map(|n| format!("({i}, 1, 1, {n}, 1.00, NOW())"))
            .collect();
        c.query_drop(format!(
            "INSERT INTO order_line1 VALUES {}",
            lines.join(",")
        ))
        .unwrap();
    }
    let sql = "SELECT count(*) FROM (SELECT c.c_id, c.c_d_id, c.c_w_id, \
               (SELECT sum(ol_amount) FROM orders1 STRAIGHT_JOIN order_line1 \
                WHERE OL_W_ID=O_W_ID AND OL_D_ID = O_D_ID AND OL_O_ID = O_ID \
                AND OL_DELIVERY_D IS NOT NULL AND O_W_ID=c.c_w_id AND O_D_ID=c.C_D_ID \
                AND O_C_ID=c.C_ID) sm \
               FROM customer1 c WHERE c.c_w_id = 1 AND c.c_d_id = 1) t WHERE sm = c_id";
    let n: Vec<u64> = c.query(sql).unwrap();
    assert_eq!(n, vec![30]);
    let p = explain(&mut c, sql);
    let inner: Vec<(&str, &str)> = p
        .iter()
        .filter(|x| x.table == "orders1" || x.table == "order_line1")
        .map(|x| (x.table.as_str(), x.kind.as_str()))
        .collect();
    assert_eq!(
        inner,
        vec![("orders1", "ref"), ("order_line1", "ref")],
        "written order, both by index: {p:?}"
    );
    let orders = p.iter().find(|x| x.table == "orders1").unwrap();
    assert_eq!(
        orders.rows, 1,
        "one order per customer, sampled: {orders:?}"
    );
}

#[test]
fn delivery_and_update_plans_read_as_mysql_shows_them() {
    let (_srv, mut c) = TestServer::with_database("d");
    c.query_drop(
        "CREATE TABLE new_orders1 (no_o_id int not null, no_d_id tinyint not null, \
         no_w_id smallint not null, PRIMARY KEY(no_w_id, no_d_id, no_o_id))",
    )
    .unwrap();
    let rows: Vec<String> = (1..=300)
        .map(|i| format!("({}, {}, 1)", 2000 + i, i % 10 + 1))
        .collect();
    c.query_drop(format!("INSERT INTO new_orders1 VALUES {}", rows.join(",")))
        .unwrap();
    // Delivery's claim reads only key columns: the clustered index covers it.
    let p = &explain(
        &mut c,
        "SELECT no_o_id FROM new_orders1 WHERE no_d_id = 5 AND no_w_id = 1 \
         ORDER BY no_o_id ASC LIMIT 1 FOR UPDATE",
    )[0];
    assert_eq!(
        (p.kind.as_str(), p.key.as_deref(), p.extra.as_str()),
        ("ref", Some("PRIMARY"), "Using index"),
        "{p:?}"
    );
    // A single-table DELETE or UPDATE by key is a range with its WHERE checked.
    for sql in [
        "DELETE FROM new_orders1 WHERE no_o_id = 2004 AND no_d_id = 5 AND no_w_id = 1",
        "UPDATE new_orders1 SET no_o_id = no_o_id WHERE no_d_id = 5 AND no_w_id = 1",
    ] {
        let p = &explain(&mut c, sql)[0];
        assert_eq!(
            (
                p.kind.as_str(),
                p.key.as_deref(),
                p.key_ref.as_deref(),
                p.extra.starts_with("Using where")
            ),
            ("range", Some("PRIMARY"), None, true),
            "{sql}: {p:?}"
        );
    }
    // A range on a key is rechecked per row.
    let p = &explain(
        &mut c,
        "SELECT no_o_id FROM new_orders1 WHERE no_w_id = 1 AND no_d_id = 2 AND no_o_id > 2100",
    )[0];
    assert_eq!(
        (p.kind.as_str(), p.extra.as_str()),
        ("range", "Using where; Using index"),
        "{p:?}"
    );
}
