//! The text plan cache through the real binary: every test runs the same text statements on
//! a server with the cache (the default) and on one started with
//! `--tpbed-text-plan-cache=OFF`, and compares what a client sees of each statement — result
//! columns (names, types, flags), rows, affected rows, last insert id, info, errors and
//! `SHOW WARNINGS` — and the record locks it holds (`performance_schema.data_locks`). The
//! cached server's `Tpbed_text_plan_cache_hits` says which texts ran from a cached plan, so a
//! test also shows the cache was used where it may be and not where it may not.

use mysql::prelude::*;
use mysql::Conn;
use tpbed_tests::{wait_purged, TestServer};

/// The two servers, cached and uncached.
struct Pair {
    cached: TestServer,
    plain: TestServer,
}

impl Pair {
    fn start() -> Pair {
        Pair {
            cached: TestServer::start(&[]),
            plain: TestServer::start(&["--tpbed-text-plan-cache=OFF"]),
        }
    }

    /// A root connection to each server.
    fn connect(&self) -> (Conn, Conn) {
        (self.cached.connect(), self.plain.connect())
    }

    /// Runs `sqls` on both servers as root (one connection each, kept for the whole list).
    fn setup(&self, sqls: &[&str]) {
        let (mut a, mut b) = self.connect();
        for s in sqls {
            a.query_drop(s).unwrap_or_else(|e| panic!("{s}: {e}"));
            b.query_drop(s).unwrap_or_else(|e| panic!("{s}: {e}"));
        }
    }
}

/// What a client sees of one text statement, then of `SHOW WARNINGS` after it.
fn outcome(c: &mut Conn, sql: &str) -> String {
    let mut out = String::new();
    match c.query_iter(sql) {
        Err(e) => out.push_str(&format!("error {e}\n")),
        Ok(mut r) => {
            while let Some(set) = r.iter() {
                for col in set.columns().as_ref() {
                    out.push_str(&format!(
                        "column {} {:?} {:?} {} {}\n",
                        col.name_str(),
                        col.column_type(),
                        col.flags(),
                        col.column_length(),
                        col.decimals()
                    ));
                }
                for row in set {
                    match row {
                        Ok(row) => out.push_str(&format!("row {:?}\n", row.unwrap())),
                        Err(e) => out.push_str(&format!("row error {e}\n")),
                    }
                }
            }
            out.push_str(&format!(
                "affected {} id {:?} info {:?}\n",
                r.affected_rows(),
                r.last_insert_id(),
                r.info_str()
            ));
        }
    }
    let warnings: Vec<(String, u32, String)> = c.query("SHOW WARNINGS").unwrap();
    for w in warnings {
        out.push_str(&format!("warning {w:?}\n"));
    }
    out
}

fn hits(c: &mut Conn) -> u64 {
    let v: Option<(String, u64)> = c
        .query_first("SHOW SESSION STATUS LIKE 'Tpbed_text_plan_cache_hits'")
        .unwrap();
    v.expect("the hit counter").1
}

/// Runs each text on both connections and checks the client sees the same; returns the
/// texts the cached connection answered from a plan (their indexes in `sqls`).
fn same(a: &mut Conn, b: &mut Conn, sqls: &[&str]) -> Vec<usize> {
    let mut cached = Vec::new();
    for (i, s) in sqls.iter().enumerate() {
        let before = hits(a);
        let x = outcome(a, s);
        if hits(a) > before {
            cached.push(i);
        }
        let y = outcome(b, s);
        assert_eq!(x, y, "{s}");
    }
    assert_eq!(hits(b), 0, "the uncached server reuses no plan");
    cached
}

const TABLES: &[&str] = &[
    "CREATE DATABASE d",
    "CREATE DATABASE e",
    "CREATE TABLE d.t (id INT PRIMARY KEY, s VARCHAR(10), n INT, \
     e ENUM('a','b','c'), KEY ks (s), KEY ke (e), KEY kn (n))",
    "INSERT INTO d.t VALUES (1,'1',10,'a'),(2,'2',20,'b'),(3,'3',30,'c'),(4,'10',40,'a')",
    "CREATE TABLE e.t (id INT PRIMARY KEY, s VARCHAR(10), n INT, \
     e ENUM('a','b','c'), KEY ks (s), KEY ke (e), KEY kn (n))",
    "INSERT INTO e.t VALUES (1,'x',100,'b'),(2,'y',200,'c')",
];

fn pair_with_tables() -> (Pair, Conn, Conn) {
    let p = Pair::start();
    p.setup(TABLES);
    let (mut a, mut b) = p.connect();
    for c in [&mut a, &mut b] {
        c.query_drop("USE d").unwrap();
    }
    (p, a, b)
}

#[test]
fn repeated_shapes_run_from_the_cache_with_the_same_results() {
    let (_p, mut a, mut b) = pair_with_tables();
    let sqls = [
        "SELECT n, s FROM t WHERE id = 1",
        "SELECT n, s FROM t WHERE id = 2",
        "SELECT n, s FROM t WHERE id = 3",
        "SELECT id FROM t WHERE n BETWEEN 15 AND 35 ORDER BY id LIMIT 1",
        "SELECT id FROM t WHERE n BETWEEN 5 AND 45 ORDER BY id LIMIT 3",
        "SELECT id FROM t WHERE id IN (1, 4) AND s = '10'",
        "SELECT id FROM t WHERE id IN (2, 3) AND s = '3'",
        "UPDATE t SET n = n + 1 WHERE id = 1",
        "UPDATE t SET n = n + 2.5 WHERE id = 2",
        "INSERT INTO t (id, s, n) VALUES (10, 'ten', 100)",
        "INSERT INTO t (id, s, n) VALUES (11, 'eleven', 110)",
        "INSERT INTO t (id, s, n) VALUES (11, 'dup', 1) ON DUPLICATE KEY UPDATE n = 7",
        "INSERT INTO t (id, s, n) VALUES (12, 'twelve', 1) ON DUPLICATE KEY UPDATE n = 8",
        "DELETE FROM t WHERE id = 10",
        "DELETE FROM t WHERE id = 12",
        "SELECT id, n, s FROM t ORDER BY id",
    ];
    let cached = same(&mut a, &mut b, &sqls);
    assert_eq!(
        cached,
        vec![1, 2, 4, 6, 8, 10, 12, 14],
        "texts answered from a plan"
    );
}

#[test]
fn literals_in_the_select_list_order_by_and_functions_are_not_parameters() {
    let (_p, mut a, mut b) = pair_with_tables();
    let sqls = [
        // Labels and types come from the literals.
        "SELECT 1, n FROM t WHERE id = 1",
        "SELECT 2.5, n FROM t WHERE id = 1",
        "SELECT 'abc', n FROM t WHERE id = 2",
        "SELECT n + 1 FROM t WHERE id = 1",
        "SELECT n + 22 FROM t WHERE id = 1",
        // A position, not a value.
        "SELECT id, n FROM t ORDER BY 1 DESC",
        "SELECT id, n FROM t ORDER BY 2 DESC",
        "SELECT s, COUNT(*) FROM t GROUP BY 1",
        "SELECT s, COUNT(*) FROM t GROUP BY 2",
        // Arguments the binder reads as constants.
        "SELECT id FROM t WHERE s = CAST(3 AS CHAR)",
        "SELECT id FROM t WHERE s = CAST(1 AS CHAR)",
        "SELECT id FROM t WHERE s LIKE '1%'",
        "SELECT id FROM t WHERE s LIKE '2%'",
        "SELECT id FROM t WHERE s LIKE '1|%' ESCAPE '|'",
        "SELECT id FROM t WHERE s LIKE '1!%' ESCAPE '!'",
        "SELECT id FROM t WHERE n = -10",
        "SELECT id FROM t WHERE n = -20",
        "SELECT id FROM t WHERE s = _utf8mb4'1'",
        "SELECT id FROM t WHERE s = _utf8mb4'2'",
    ];
    let cached = same(&mut a, &mut b, &sqls);
    assert!(cached.is_empty(), "texts answered from a plan: {cached:?}");
}

/// (INDEX_NAME, LOCK_MODE, LOCK_DATA) of the record locks a connection holds.
fn record_locks(c: &mut Conn, id: u32) -> Vec<(String, String, String)> {
    let mut v: Vec<(String, String, String)> = c
        .query(format!(
            "SELECT l.INDEX_NAME, l.LOCK_MODE, l.LOCK_DATA FROM performance_schema.data_locks l \
             JOIN performance_schema.threads t ON t.THREAD_ID = l.THREAD_ID \
             WHERE t.PROCESSLIST_ID = {id} AND l.LOCK_TYPE = 'RECORD'"
        ))
        .unwrap();
    v.sort();
    v
}

/// Runs each locking text in its own transaction on both servers and compares the record
/// locks it holds; returns the texts answered from a plan.
fn same_locks(p: &Pair, sqls: &[&str]) -> Vec<usize> {
    let (mut a, mut b) = p.connect();
    let (mut wa, mut wb) = p.connect();
    for c in [&mut a, &mut b] {
        c.query_drop("USE d").unwrap();
    }
    let mut cached = Vec::new();
    for (i, s) in sqls.iter().enumerate() {
        let mut held = Vec::new();
        for (c, watch) in [(&mut a, &mut wa), (&mut b, &mut wb)] {
            c.query_drop("BEGIN").unwrap();
            let before = hits(c);
            let seen = outcome(c, s);
            if hits(c) > before && held.is_empty() {
                cached.push(i);
            }
            held.push((seen, record_locks(watch, c.connection_id())));
            c.query_drop("ROLLBACK").unwrap();
        }
        assert_eq!(held[0], held[1], "{s}");
    }
    cached
}

#[test]
fn a_cached_plan_takes_the_locks_of_a_planned_text() {
    let (p, _a, _b) = pair_with_tables();
    let cached = same_locks(
        &p,
        &[
            // A number compared with a text column searches no index: never cached.
            "SELECT id FROM t WHERE s = 1 FOR UPDATE",
            "SELECT id FROM t WHERE s = 10 FOR UPDATE",
            "UPDATE t SET n = 0 WHERE s = 2",
            "UPDATE t SET n = 0 WHERE s = 3",
            // A string compared with an integer column searches its index as a number does.
            "SELECT id FROM t WHERE id = '2' FOR UPDATE",
            "SELECT id FROM t WHERE id = '3abc' FOR UPDATE",
            "SELECT id FROM t WHERE n >= '25' FOR SHARE",
            "SELECT id FROM t WHERE n >= '35' FOR SHARE",
            // ENUM ranges follow the member order only with number bounds: never cached.
            "SELECT id FROM t WHERE e BETWEEN 1 AND 2 FOR UPDATE",
            "SELECT id FROM t WHERE e BETWEEN 2 AND 3 FOR UPDATE",
            "SELECT id FROM t WHERE e BETWEEN 'a' AND 'a' FOR UPDATE",
            "SELECT id FROM t WHERE e BETWEEN 'b' AND 'b' FOR UPDATE",
            // Plain cached searches.
            "SELECT id FROM t WHERE s = '1' FOR UPDATE",
            "SELECT id FROM t WHERE s = '10' FOR UPDATE",
            "DELETE FROM t WHERE id > 3",
            "DELETE FROM t WHERE id > 1",
            "UPDATE t SET n = n + 1 WHERE id IN (1, 2)",
            "UPDATE t SET n = n + 1 WHERE id IN (3, 4)",
        ],
    );
    assert_eq!(cached, vec![5, 7, 13, 15, 17], "texts answered from a plan");
}

#[test]
fn a_plan_follows_sql_mode_database_and_table_changes() {
    let (p, mut a, mut b) = pair_with_tables();
    p.setup(&["CREATE TABLE d.w (id INT PRIMARY KEY, n INT)"]);
    let cached = same(
        &mut a,
        &mut b,
        &[
            "SET sql_mode = ''",
            "INSERT INTO w VALUES (1, '12abc')",
            "INSERT INTO w VALUES (2, '13xyz')",
            "INSERT INTO w VALUES (3, 'nope')",
            "SET sql_mode = 'STRICT_TRANS_TABLES'",
            "INSERT INTO w VALUES (4, '14abc')",
            "INSERT INTO w VALUES (5, '15abc')",
            "INSERT INTO w VALUES (6, '16')",
            "SELECT id, n FROM w WHERE id >= 1",
            "SELECT n, s FROM t WHERE id = 1",
            "SELECT n, s FROM t WHERE id = 2",
            "USE e",
            "SELECT n, s FROM t WHERE id = 1",
            "SELECT n, s FROM t WHERE id = 2",
            "ALTER TABLE t ADD COLUMN x INT DEFAULT 7",
            "SELECT * FROM t WHERE id = 1",
            "SELECT * FROM t WHERE id = 2",
            "SELECT n, s FROM t WHERE id = 2",
            "ALTER TABLE t DROP COLUMN s",
            "SELECT n, s FROM t WHERE id = 1",
            "SELECT * FROM t WHERE id = 1",
            "USE d",
            "SELECT * FROM t WHERE id = 1",
        ],
    );
    // From the second text of a shape on, texts run from a plan; after a change (SET, USE,
    // ALTER TABLE) the plan is made again, in the new state, for the next text (and a shape
    // that no longer plans, such as one naming a dropped column, keeps none).
    assert_eq!(
        cached,
        vec![2, 3, 5, 6, 7, 10, 12, 13, 16, 17, 20, 22],
        "texts answered from a plan"
    );
}

#[test]
fn another_sessions_ddl_replans_a_cached_shape() {
    let (p, mut a, mut b) = pair_with_tables();
    let sqls = [
        "SELECT * FROM t WHERE id = 1",
        "SELECT * FROM t WHERE id = 2",
    ];
    let first = same(&mut a, &mut b, &sqls);
    assert_eq!(first, vec![1]);
    p.setup(&["ALTER TABLE d.t ADD COLUMN y VARCHAR(3) DEFAULT 'why'"]);
    let after = same(&mut a, &mut b, &["SELECT * FROM t WHERE id = 3"]);
    assert_eq!(after, vec![0], "made again, and used");
    p.setup(&["DROP TABLE d.t"]);
    let gone = same(&mut a, &mut b, &["SELECT * FROM t WHERE id = 4"]);
    assert!(gone.is_empty());
}

#[test]
fn revoked_privileges_apply_to_the_next_cached_text() {
    let p = Pair::start();
    p.setup(TABLES);
    p.setup(&[
        "CREATE USER u@'%' IDENTIFIED BY 'pw'",
        "GRANT SELECT, UPDATE ON d.* TO u@'%'",
    ]);
    let mut a = Conn::new(p.cached.opts("u", "pw")).unwrap();
    let mut b = Conn::new(p.plain.opts("u", "pw")).unwrap();
    for c in [&mut a, &mut b] {
        c.query_drop("USE d").unwrap();
    }
    let before = same(
        &mut a,
        &mut b,
        &[
            "SELECT n FROM t WHERE id = 1",
            "SELECT n FROM t WHERE id = 2",
            "UPDATE t SET n = 5 WHERE id = 1",
            "UPDATE t SET n = 6 WHERE id = 2",
        ],
    );
    assert_eq!(before, vec![1, 3]);
    p.setup(&["REVOKE UPDATE ON d.* FROM u@'%'"]);
    let after = same(
        &mut a,
        &mut b,
        &[
            "SELECT n FROM t WHERE id = 3",
            "UPDATE t SET n = 7 WHERE id = 3",
            "UPDATE t SET n = 8 WHERE id = 4",
        ],
    );
    assert_eq!(
        after,
        vec![0, 1, 2],
        "the privilege check runs on every text"
    );
    let mut r = p.cached.connect();
    let n: Vec<(i32, i32)> = r.query("SELECT id, n FROM d.t ORDER BY id").unwrap();
    assert_eq!(n, vec![(1, 5), (2, 6), (3, 30), (4, 40)]);
}

#[test]
fn lock_tables_and_other_tables_keep_their_errors() {
    let (_p, mut a, mut b) = pair_with_tables();
    let cached = same(
        &mut a,
        &mut b,
        &[
            "SELECT n FROM t WHERE id = 1",
            "SELECT n FROM t WHERE id = 2",
            "LOCK TABLES e.t READ",
            "SELECT n FROM t WHERE id = 3",
            "SELECT n FROM e.t WHERE id = 1",
            "SELECT n FROM e.t WHERE id = 2",
            "UNLOCK TABLES",
            "SELECT n FROM t WHERE id = 3",
            "SELECT n FROM t WHERE id = 4",
            "SELECT 1e400 FROM t WHERE id = 1",
            "SELECT n FROM t WHERE n = 1e400",
            "SELECT n FROM t WHERE n = 1e300",
            "SELECT n FROM t WHERE n = 1e999",
            "SELECT COUNT(*) FROM performance_schema.data_locks WHERE LOCK_TYPE = 'TABLE'",
            "SELECT COUNT(*) FROM performance_schema.data_locks WHERE LOCK_TYPE = 'RECORD'",
        ],
    );
    assert_eq!(cached, vec![1, 7, 8, 11], "texts answered from a plan");
}

/// A small pseudo-random generator (xorshift), so the differential run is repeatable.
struct Rng(u64);

impl Rng {
    fn below(&mut self, n: u64) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0 % n
    }

    fn pick<'a>(&mut self, items: &[&'a str]) -> &'a str {
        items[self.below(items.len() as u64) as usize]
    }
}

/// A literal of a random kind: an integer, a decimal, a double, a numeric or other string.
fn literal(r: &mut Rng) -> String {
    match r.below(6) {
        0 | 1 => r.below(14).to_string(),
        2 => format!("{}.{}", r.below(40), r.below(10)),
        3 => format!("{}e0", r.below(30)),
        4 => format!("'{}'", r.below(14)),
        _ => format!(
            "'{}{}'",
            r.below(5),
            ["x", "abc", " ", ""][r.below(4) as usize]
        ),
    }
}

/// One statement of a small grammar over `d.t` with random literals in every position the
/// grammar has (allowed by the cache or not).
fn statement(r: &mut Rng) -> String {
    let col = |r: &mut Rng| r.pick(&["id", "s", "n", "e"]);
    let op = |r: &mut Rng| r.pick(&["=", "<", ">=", "<>", "<=>"]);
    let cond = |r: &mut Rng| match r.below(4) {
        0 => format!("{} {} {}", col(r), op(r), literal(r)),
        1 => format!("{} IN ({}, {})", col(r), literal(r), literal(r)),
        2 => format!("{} BETWEEN {} AND {}", col(r), literal(r), literal(r)),
        _ => format!(
            "({} {} {} OR {} {} {})",
            col(r),
            op(r),
            literal(r),
            col(r),
            op(r),
            literal(r)
        ),
    };
    let lock = r.pick(&["", " FOR UPDATE", " FOR SHARE"]);
    match r.below(6) {
        0 | 1 => format!(
            "SELECT id, s, n, e FROM t WHERE {} AND {} ORDER BY id LIMIT {}{lock}",
            cond(r),
            cond(r),
            1 + r.below(5)
        ),
        2 => format!(
            "UPDATE t SET n = n + {}, s = {} WHERE {}",
            literal(r),
            literal(r),
            cond(r)
        ),
        3 => format!("DELETE FROM t WHERE {} LIMIT 1", cond(r)),
        4 => format!(
            "INSERT IGNORE INTO t (id, s, n, e) VALUES ({}, {}, {}, {})",
            10 + r.below(30),
            literal(r),
            literal(r),
            r.pick(&["'a'", "'b'", "2", "'z'"])
        ),
        _ => format!(
            "INSERT INTO t (id, s, n) VALUES ({}, {}, {}) ON DUPLICATE KEY UPDATE n = n + {}",
            r.below(12),
            literal(r),
            literal(r),
            literal(r)
        ),
    }
}

#[test]
fn random_statements_see_the_same_with_and_without_the_cache() {
    let (p, _a, _b) = pair_with_tables();
    let mut r = Rng(0x9e37_79b9_7f4a_7c15);
    let shapes: Vec<String> = (0..40).map(|_| statement(&mut r)).collect();
    let (mut a, mut b) = p.connect();
    let (mut wa, mut wb) = p.connect();
    let mut cached = 0;
    for round in 0..4 {
        for c in [&mut a, &mut b] {
            c.query_drop("USE d").unwrap();
            c.query_drop(if round % 2 == 0 {
                "SET sql_mode = ''"
            } else {
                "SET sql_mode = DEFAULT"
            })
            .unwrap();
        }
        for _ in 0..50 {
            // A shape's texts come back with new literals: the same shape, new values.
            let mut g = Rng(r.below(1 << 40) | 1);
            let base = &shapes[g.below(shapes.len() as u64) as usize];
            let sql = relit(base, &mut g);
            let mut seen = Vec::new();
            let mut hit = false;
            for (c, w) in [(&mut a, &mut wa), (&mut b, &mut wb)] {
                c.query_drop("BEGIN").unwrap();
                let before = hits(c);
                let out = outcome(c, &sql);
                if hits(c) > before {
                    cached += 1;
                    hit = true;
                }
                seen.push((out, record_locks(w, c.connection_id())));
                c.query_drop("COMMIT").unwrap();
                // A later locking read locks the delete-marked records purge has not
                // removed yet: let each server purge before the next text.
                wait_purged(w, std::time::Duration::from_secs(60));
            }
            assert_eq!(seen[0], seen[1], "{sql} (from a plan: {hit})");
        }
    }
    let table =
        |c: &mut Conn| -> Vec<mysql::Row> { c.query("SELECT * FROM d.t ORDER BY id").unwrap() };
    assert_eq!(
        format!("{:?}", table(&mut a)),
        format!("{:?}", table(&mut b))
    );
    assert!(cached > 30, "only {cached} texts ran from a plan");
}

/// `sql` with each literal replaced by a new one of the same kind (so the text keeps its
/// shape).
fn relit(sql: &str, r: &mut Rng) -> String {
    let mut out = String::new();
    let b = sql.as_bytes();
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        let word_before = i > 0 && (b[i - 1].is_ascii_alphanumeric() || b[i - 1] == b'_');
        if c == b'\'' {
            let end = sql[i + 1..].find('\'').map_or(b.len(), |e| i + 1 + e);
            out.push_str(&format!(
                "'{}{}'",
                r.below(14),
                ["", "x", " "][r.below(3) as usize]
            ));
            i = end + 1;
        } else if c.is_ascii_digit() && !word_before {
            let mut end = i;
            while end < b.len() && (b[end].is_ascii_alphanumeric() || b[end] == b'.') {
                end += 1;
            }
            let lit = &sql[i..end];
            out.push_str(&if lit.contains('e') {
                format!("{}e0", r.below(30))
            } else if lit.contains('.') {
                format!("{}.{}", r.below(40), r.below(10))
            } else {
                r.below(14).to_string()
            });
            i = end;
        } else {
            out.push(c as char);
            i += 1;
        }
    }
    out
}
