//! Table statements through the real binary and the `mysql` crate: DDL as sysbench and
//! dumps write it, DML with MySQL's affected rows and info text, the error codes clients
//! branch on, result metadata from the table's column types, and prepared statements; each
//! in every connection-handling mode.

use mysql::prelude::*;
use mysql::{Conn, Row};
use tpbed_tests::{code, each_mode, mysql_error, Mode, TestServer};

/// The server's error number and message for `r`.
fn err_of<T: std::fmt::Debug>(r: mysql::Result<T>) -> (u16, String) {
    let e = mysql_error(r);
    (e.code, e.message)
}

fn setup(mode: Mode) -> (TestServer, Conn) {
    let srv = mode.start(&[]);
    let mut c = srv.connect();
    c.query_drop("CREATE DATABASE db").unwrap();
    c.query_drop("USE db").unwrap();
    (srv, c)
}

each_mode! {
    fn sysbench_ddl_and_its_errors(mode) {
        let (srv, mut c) = setup(mode);
        c.query_drop(
            "CREATE TABLE sbtest1(\n  id INTEGER NOT NULL AUTO_INCREMENT,\n  k INTEGER DEFAULT '0' NOT NULL,\n  \
             c CHAR(120) DEFAULT '' NOT NULL,\n  pad CHAR(60) DEFAULT '' NOT NULL,\n  PRIMARY KEY (id)\n) /*! ENGINE = innodb */ ",
        )
        .unwrap();
        c.query_drop("CREATE INDEX k_1 ON sbtest1(k)").unwrap();
        c.query_drop(
            "CREATE TABLE IF NOT EXISTS d (a BIGINT UNSIGNED NOT NULL, b VARCHAR(3), u INT, \
             PRIMARY KEY (a), UNIQUE KEY ub (b), KEY ku (u, a)) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COMMENT='x' AUTO_INCREMENT=7",
        )
        .unwrap();
        assert_eq!(code(c.query_drop("CREATE TABLE d (a INT)")), 1050);
        c.query_drop("CREATE TABLE IF NOT EXISTS d (a INT)")
            .unwrap();
        assert_eq!(code(c.query_drop("DROP TABLE nope")), 1051);
        c.query_drop("DROP TABLE IF EXISTS nope").unwrap();
        let (n, m) = err_of(c.query_drop("SELECT * FROM nope"));
        assert_eq!((n, m.as_str()), (1146, "Table 'db.nope' doesn't exist"));
        let (n, m) = err_of(c.query_drop("SELECT zz FROM sbtest1"));
        assert_eq!(
            (n, m.as_str()),
            (1054, "Unknown column 'zz' in 'field list'")
        );
        let (n, m) = err_of(c.query_drop("SELECT id FROM sbtest1 WHERE zz = 1"));
        assert_eq!(
            (n, m.as_str()),
            (1054, "Unknown column 'zz' in 'where clause'")
        );
        let tables: Vec<String> = c.query("SHOW TABLES").unwrap();
        assert_eq!(tables, vec!["d", "sbtest1"]);
        let create: (String, String) = c.query_first("SHOW CREATE TABLE sbtest1").unwrap().unwrap();
        assert!(
            create.1.contains("`id` int NOT NULL AUTO_INCREMENT"),
            "{}",
            create.1
        );
        assert!(create.1.contains("KEY `k_1` (`k`)"), "{}", create.1);
        let desc: Vec<Row> = c.query("DESCRIBE d").unwrap();
        let keys: Vec<String> = desc
            .iter()
            .map(|r| r.get::<String, _>(3).unwrap())
            .collect();
        assert_eq!(keys, vec!["PRI", "UNI", "MUL"]);
        let stats: Vec<(String, String, u64)> = c
            .query(
                "SELECT INDEX_NAME, COLUMN_NAME, SEQ_IN_INDEX FROM information_schema.STATISTICS \
                 WHERE TABLE_SCHEMA = 'db' AND TABLE_NAME = 'd' ORDER BY INDEX_NAME, SEQ_IN_INDEX",
            )
            .unwrap();
        assert_eq!(stats.len(), 4, "{stats:?}");
        assert!(
            stats.contains(&("PRIMARY".into(), "a".into(), 1)),
            "{stats:?}"
        );
        assert!(stats.contains(&("ku".into(), "a".into(), 2)), "{stats:?}");
        let per_table: Vec<(String, u64)> = c
            .query(
                "SELECT t.TABLE_NAME, COUNT(*) FROM information_schema.TABLES t JOIN information_schema.COLUMNS c \
                 ON c.TABLE_SCHEMA = t.TABLE_SCHEMA AND c.TABLE_NAME = t.TABLE_NAME \
                 WHERE t.TABLE_SCHEMA = 'db' GROUP BY t.TABLE_NAME ORDER BY t.TABLE_NAME",
            )
            .unwrap();
        assert_eq!(per_table, vec![("d".into(), 3), ("sbtest1".into(), 4)]);
        let analyze: Vec<(String, String, String, String)> = c.query("ANALYZE TABLE sbtest1").unwrap();
        assert_eq!(analyze[0].3, "OK");
        c.query_drop("TRUNCATE TABLE sbtest1").unwrap();
        c.query_drop("DROP TABLE sbtest1, d").unwrap();
        let mut fresh = srv.connect();
        assert_eq!(code(fresh.query_drop("CREATE TABLE t (a INT)")), 1046);
    }
}

each_mode! {
    fn inserts_updates_deletes_report_like_mysql(mode) {
        let (_srv, mut c) = setup(mode);
        c.query_drop(
            "CREATE TABLE t (id INT NOT NULL AUTO_INCREMENT, k INT NOT NULL DEFAULT 0, c VARCHAR(5), \
             PRIMARY KEY (id), UNIQUE KEY uk (c))",
        )
        .unwrap();
        c.query_drop("INSERT INTO t (k, c) VALUES (1, 'a'), (2, 'b'), (3, NULL)")
            .unwrap();
        assert_eq!(c.affected_rows(), 3);
        assert_eq!(c.last_insert_id(), 1);
        assert_eq!(c.info_str(), "Records: 3  Duplicates: 0  Warnings: 0");
        c.query_drop("INSERT INTO t (id, k) VALUES (0, 9)").unwrap();
        assert_eq!(c.last_insert_id(), 4, "0 into AUTO_INCREMENT generates");
        let last: u64 = c.query_first("SELECT LAST_INSERT_ID()").unwrap().unwrap();
        assert_eq!(last, 4);
        let (n, m) = err_of(c.query_drop("INSERT INTO t (id, k) VALUES (1, 5)"));
        assert_eq!(
            (n, m.as_str()),
            (1062, "Duplicate entry '1' for key 't.PRIMARY'")
        );
        let (n, m) = err_of(c.query_drop("INSERT INTO t (k, c) VALUES (5, 'a')"));
        assert_eq!(
            (n, m.as_str()),
            (1062, "Duplicate entry 'a' for key 't.uk'")
        );
        assert_eq!(code(c.query_drop("INSERT INTO t (k) VALUES (NULL)")), 1048);
        assert_eq!(
            code(c.query_drop("INSERT INTO t (k) VALUES (99999999999)")),
            1264
        );
        assert_eq!(
            code(c.query_drop("INSERT INTO t (k, c) VALUES (1, 'toolong')")),
            1406
        );
        c.query_drop("INSERT IGNORE INTO t (id, k) VALUES (1, 5), (10, 10)")
            .unwrap();
        assert_eq!(c.affected_rows(), 1);
        c.query_drop("INSERT INTO t (id, k) VALUES (1, 5) ON DUPLICATE KEY UPDATE k = k + VALUES(k)")
            .unwrap();
        assert_eq!(c.affected_rows(), 2);
        let k: i64 = c
            .query_first("SELECT k FROM t WHERE id = 1")
            .unwrap()
            .unwrap();
        assert_eq!(k, 6);
        c.query_drop("REPLACE INTO t (id, k, c) VALUES (2, 20, 'b2')")
            .unwrap();
        assert_eq!(c.affected_rows(), 2);
        c.query_drop("UPDATE t SET k = k + 1 WHERE id IN (1, 2, 99)")
            .unwrap();
        assert_eq!(c.affected_rows(), 2);
        assert_eq!(c.info_str(), "Rows matched: 2  Changed: 2  Warnings: 0");
        c.query_drop("UPDATE t SET k = k WHERE id = 1").unwrap();
        assert_eq!(c.info_str(), "Rows matched: 1  Changed: 0  Warnings: 0");
        c.query_drop("UPDATE t SET k = 100 ORDER BY id DESC LIMIT 2")
            .unwrap();
        let ks: Vec<(i64, i64)> = c.query("SELECT id, k FROM t ORDER BY id").unwrap();
        assert_eq!(ks, vec![(1, 7), (2, 21), (3, 3), (4, 100), (10, 100)]);
        c.query_drop("DELETE FROM t WHERE k >= 100 OR id = 3")
            .unwrap();
        assert_eq!(c.affected_rows(), 3);
        c.query_drop("DELETE FROM t ORDER BY id LIMIT 1").unwrap();
        let ids: Vec<i64> = c.query("SELECT id FROM t").unwrap();
        assert_eq!(ids, vec![2]);
    }
}

each_mode! {
    fn replace_counts_a_row_like_mysql(mode) {
        let (_srv, mut c) = setup(mode);
        let mut affected = |sql: &str| {
            c.query_drop(sql).unwrap();
            c.affected_rows()
        };
        // The primary key is the last unique index: REPLACE updates in place, and a row
        // equal to the new one is not counted as deleted.
        affected("CREATE TABLE p (id INT PRIMARY KEY, v INT)");
        assert_eq!(affected("INSERT INTO p VALUES (1, 1)"), 1);
        assert_eq!(affected("REPLACE INTO p VALUES (1, 1)"), 1);
        assert_eq!(affected("REPLACE INTO p VALUES (1, 2)"), 2);
        assert_eq!(affected("REPLACE INTO p VALUES (1, 2), (1, 2)"), 2);
        // A unique secondary index follows the primary key: a duplicate primary key is
        // deleted and inserted again, counted twice even when equal.
        affected("CREATE TABLE q (id INT PRIMARY KEY, u INT UNIQUE, v INT)");
        assert_eq!(affected("INSERT INTO q VALUES (1, 1, 1), (2, 2, 2)"), 2);
        assert_eq!(affected("REPLACE INTO q VALUES (1, 1, 1)"), 2);
        assert_eq!(affected("REPLACE INTO q VALUES (1, 1, 5)"), 2);
        assert_eq!(affected("REPLACE INTO q VALUES (2, 1, 9)"), 3);
        let rows: Vec<(i64, i64, i64)> = c.query("SELECT id, u, v FROM q").unwrap();
        assert_eq!(rows, vec![(2, 1, 9)]);
    }

    fn row_count_is_the_previous_statements_affected_rows(mode) {
        let (_srv, mut c) = setup(mode);
        let mut after = |sql: &str| -> i64 {
            let _ = c.query_drop(sql);
            c.query_first("SELECT ROW_COUNT()").unwrap().unwrap()
        };
        assert_eq!(after("CREATE TABLE rc (id INT PRIMARY KEY, v INT)"), 0);
        assert_eq!(after("INSERT INTO rc VALUES (1, 1), (2, 2), (3, 3)"), 3);
        assert_eq!(after("UPDATE rc SET v = 1"), 2, "changed rows");
        assert_eq!(after("UPDATE rc SET v = v"), 0);
        assert_eq!(after("SELECT * FROM rc"), -1, "a result set");
        assert_eq!(after("DELETE FROM rc WHERE id > 1"), 2);
        assert_eq!(after("INSERT INTO rc VALUES (1, 1)"), -1, "an error");
        assert_eq!(after("SET @a = 1"), 0);
        assert_eq!(after("INSERT INTO rc VALUES (1, 1) ON DUPLICATE KEY UPDATE v = 9"), 2);
        let both: (i64, i64) = c.query_first("SELECT ROW_COUNT(), ROW_COUNT()").unwrap().unwrap();
        assert_eq!(both, (-1, -1), "the SELECT before it returned rows");
    }

    fn the_diagnostics_area_keeps_max_error_count_and_counts_all(mode) {
        let (_srv, mut c) = setup(mode);
        c.query_drop("CREATE TABLE w (id INT PRIMARY KEY)").unwrap();
        c.query_drop("INSERT INTO w VALUES (1)").unwrap();
        // One duplicate-key warning per row, more than any max_error_count keeps.
        let n = 70_000;
        let sql = format!("INSERT IGNORE INTO w VALUES {}", vec!["(1)"; n].join(","));
        c.query_drop(&sql).unwrap();
        assert_eq!(c.affected_rows(), 0);
        assert_eq!(c.warnings(), u16::MAX, "the OK packet's count saturates");
        assert_eq!(
            c.info_str(),
            format!("Records: {n}  Duplicates: {n}  Warnings: {n}")
        );
        let shown: Vec<(String, u32, String)> = c.query("SHOW WARNINGS").unwrap();
        assert_eq!(shown.len(), 1024, "max_error_count's default");
        assert_eq!(shown[0].1, 1062);
        let counted: u64 = c.query_first("SHOW COUNT(*) WARNINGS").unwrap().unwrap();
        assert_eq!(counted, n as u64);
        let errors: u64 = c.query_first("SHOW COUNT(*) ERRORS").unwrap().unwrap();
        assert_eq!(errors, 0);
        // @@warning_count is the previous statement's count.
        c.query_drop("SET max_error_count = 2").unwrap();
        c.query_drop("SELECT 1/0, 2/0, 3/0").unwrap();
        let (w, e): (u64, u64) = c
            .query_first("SELECT @@warning_count, @@error_count")
            .unwrap()
            .unwrap();
        assert_eq!((w, e), (3, 0));
        c.query_drop("SELECT 1/0, 2/0, 3/0").unwrap();
        let shown: Vec<(String, u32, String)> = c.query("SHOW WARNINGS").unwrap();
        assert_eq!(shown.len(), 2);
        assert_eq!(code(c.query_drop("SET warning_count = 1")), 1238);
        assert_eq!(code(c.query_drop("SELECT @@global.error_count")), 1238);
        // A failed statement's error is its condition, and reading the counts keeps it.
        assert_eq!(code(c.query_drop("SELEC 1")), 1064);
        let (w, e): (u64, u64) = c
            .query_first("SELECT @@warning_count, @@error_count")
            .unwrap()
            .unwrap();
        assert_eq!((w, e), (1, 1));
        let shown: Vec<(String, u32, String)> = c.query("SHOW ERRORS").unwrap();
        assert_eq!((shown[0].0.as_str(), shown[0].1), ("Error", 1064));
        assert_eq!(code(c.query_drop("SELECT * FROM nosuch")), 1146);
        let shown: Vec<(String, u32, String)> = c.query("SHOW WARNINGS").unwrap();
        assert_eq!(shown.len(), 1);
        assert_eq!(shown[0].2, "Table 'db.nosuch' doesn't exist");
    }

    fn selects_aggregate_join_and_describe_columns(mode) {
        let (_srv, mut c) = setup(mode);
        c.query_drop(
            "CREATE TABLE a (id INT UNSIGNED NOT NULL AUTO_INCREMENT PRIMARY KEY, g INT, v DECIMAL(6,2), s CHAR(10))",
        )
        .unwrap();
        c.query_drop("CREATE TABLE b (aid INT UNSIGNED NOT NULL, n VARCHAR(10), KEY (aid))")
            .unwrap();
        c.query_drop("INSERT INTO a (g, v, s) VALUES (1, 1.50, 'x'), (1, 2.25, 'y'), (2, NULL, 'x'), (3, 4.00, 'z')")
            .unwrap();
        c.query_drop("INSERT INTO b VALUES (1, 'one'), (1, 'uno'), (3, 'three')")
            .unwrap();
        let g: Vec<(i64, i64, Option<String>, Option<String>)> = c
            .query(
                "SELECT g, COUNT(*), SUM(v), AVG(v) FROM a GROUP BY g HAVING COUNT(*) >= 1 ORDER BY g",
            )
            .unwrap();
        assert_eq!(
            g,
            vec![
                (1, 2, Some("3.75".into()), Some("1.875000".into())),
                (2, 1, None, None),
                (3, 1, Some("4.00".into()), Some("4.000000".into())),
            ]
        );
        let d: Vec<String> = c
            .query("SELECT DISTINCT s FROM a ORDER BY s DESC LIMIT 2")
            .unwrap();
        assert_eq!(d, vec!["z", "y"]);
        let j: Vec<(u32, String)> = c
            .query("SELECT a.id, b.n FROM a JOIN b ON b.aid = a.id WHERE a.g < 3 ORDER BY b.n")
            .unwrap();
        assert_eq!(
            j,
            vec![(1, "one".into()), (3, "three".into()), (1, "uno".into())]
        );
        let l: Vec<(u32, Option<String>)> = c
            .query("SELECT a.id, b.n FROM a LEFT JOIN b ON b.aid = a.id ORDER BY a.id, b.n")
            .unwrap();
        assert_eq!(l.len(), 5);
        assert_eq!(l[2], (2, None));
        let avg: String = c
            .query_first("SELECT AVG(id) FROM (SELECT * FROM a FORCE KEY (PRIMARY) LIMIT 3) t")
            .unwrap()
            .unwrap();
        assert_eq!(avg, "2.0000");
        let cnt: i64 = c
            .query_first("SELECT COUNT(*) FROM (SELECT * FROM a WHERE g LIKE '%1%' LIMIT 10) t")
            .unwrap()
            .unwrap();
        assert_eq!(cnt, 2);
        let page: Vec<u32> = c
            .query("SELECT id FROM a ORDER BY id LIMIT 2 OFFSET 1")
            .unwrap();
        assert_eq!(page, vec![2, 3]);
        let locked: Vec<u32> = c
            .query("SELECT id FROM a WHERE id = 1 FOR UPDATE SKIP LOCKED")
            .unwrap();
        assert_eq!(locked, vec![1]);
        let shared: Vec<u32> = c
            .query("SELECT id FROM a WHERE id = 1 LOCK IN SHARE MODE")
            .unwrap();
        assert_eq!(shared, vec![1]);
        // Result metadata carries the table's column types and flags.
        let r: Vec<Row> = c.query("SELECT id, v, s FROM a WHERE id = 1").unwrap();
        let cols = r[0].columns();
        use mysql::consts::{ColumnFlags as F, ColumnType as T};
        assert_eq!(cols[0].column_type(), T::MYSQL_TYPE_LONG);
        assert!(cols[0]
            .flags()
            .contains(F::NOT_NULL_FLAG | F::PRI_KEY_FLAG | F::UNSIGNED_FLAG | F::AUTO_INCREMENT_FLAG));
        assert_eq!(cols[0].table_str(), "a");
        assert_eq!(cols[0].schema_str(), "db");
        assert_eq!(cols[1].column_type(), T::MYSQL_TYPE_NEWDECIMAL);
        assert_eq!(cols[1].decimals(), 2);
        assert_eq!(cols[2].column_type(), T::MYSQL_TYPE_STRING);
        assert_eq!(cols[2].column_length(), 40);
    }
}

each_mode! {
    fn prepared_statements_plan_once_and_rebind(mode) {
        let (_srv, mut c) = setup(mode);
        c.query_drop("CREATE TABLE t (id INT NOT NULL PRIMARY KEY, k INT NOT NULL, c CHAR(20) NOT NULL, KEY k (k))")
            .unwrap();
        let ins = c.prep("INSERT INTO t (id, k, c) VALUES (?, ?, ?)").unwrap();
        for i in 1..=50i64 {
            c.exec_drop(&ins, (i, i % 5, format!("c{i}"))).unwrap();
        }
        let point = c.prep("SELECT c FROM t WHERE id=?").unwrap();
        assert_eq!(
            point.columns()[0].column_type(),
            mysql::consts::ColumnType::MYSQL_TYPE_STRING
        );
        for i in [1i64, 17, 50] {
            let v: Option<String> = c.exec_first(&point, (i,)).unwrap();
            assert_eq!(v, Some(format!("c{i}")));
        }
        let none: Option<String> = c.exec_first(&point, (999,)).unwrap();
        assert_eq!(none, None);
        let sum = c
            .prep("SELECT SUM(k) FROM t WHERE id BETWEEN ? AND ?")
            .unwrap();
        let s: String = c.exec_first(&sum, (1, 10)).unwrap().unwrap();
        assert_eq!(s, "20");
        let by_k = c
            .prep("SELECT id FROM t WHERE k IN (?, ?) ORDER BY id LIMIT ?")
            .unwrap();
        let ids: Vec<i64> = c.exec(&by_k, (0, 1, 3)).unwrap();
        assert_eq!(ids, vec![1, 5, 6]);
        let upd = c.prep("UPDATE t SET k=k+1 WHERE id=?").unwrap();
        c.exec_drop(&upd, (1,)).unwrap();
        assert_eq!(c.affected_rows(), 1);
        let del = c.prep("DELETE FROM t WHERE id=?").unwrap();
        c.exec_drop(&del, (2,)).unwrap();
        assert_eq!(c.affected_rows(), 1);
        // DDL under a prepared statement: it is planned again, as MySQL re-prepares.
        c.query_drop("CREATE INDEX c ON t (c)").unwrap();
        let v: Option<String> = c.exec_first(&point, (3,)).unwrap();
        assert_eq!(v.as_deref(), Some("c3"));
        let n: i64 = c.query_first("SELECT COUNT(*) FROM t").unwrap().unwrap();
        assert_eq!(n, 49);
        let (n, _) = err_of(c.prep("USE db"));
        assert_eq!(n, 1295);
    }
}

each_mode! {
    fn status_counters_follow_handler_reads(mode) {
        let (_srv, mut c) = setup(mode);
        c.query_drop("CREATE TABLE t (id INT NOT NULL PRIMARY KEY, k INT)")
            .unwrap();
        c.query_drop("INSERT INTO t VALUES (1, 1), (2, 2), (3, 3)")
            .unwrap();
        c.query_drop("FLUSH STATUS").unwrap();
        let _: Vec<i64> = c.query("SELECT k FROM t WHERE id = 2").unwrap();
        let _: Vec<i64> = c.query("SELECT k FROM t").unwrap();
        c.query_drop("UPDATE t SET k = 5 WHERE id = 1").unwrap();
        let st: Vec<(String, String)> = c.query("SHOW SESSION STATUS LIKE 'Handler_read%'").unwrap();
        let get = |n: &str| {
            st.iter()
                .find(|r| r.0 == n)
                .map(|r| r.1.parse::<u64>().unwrap())
        };
        assert!(get("Handler_read_key").unwrap() >= 2, "{st:?}");
        assert!(get("Handler_read_rnd_next").unwrap() >= 3, "{st:?}");
        let rows: Vec<(String, String)> = c.query("SHOW SESSION STATUS LIKE 'Innodb_rows_%'").unwrap();
        let get = |n: &str| {
            rows.iter()
                .find(|r| r.0 == n)
                .map(|r| r.1.parse::<u64>().unwrap())
        };
        assert_eq!(get("Innodb_rows_updated"), Some(1));
        assert!(get("Innodb_rows_read").unwrap() >= 5);
    }
}

each_mode! {
    fn insert_default_keyword_and_insert_select(mode) {
        let (_srv, mut c) = setup(mode);
        c.query_drop(
            "CREATE TABLE t (id INT AUTO_INCREMENT PRIMARY KEY, k INT NOT NULL DEFAULT 7, c VARCHAR(3) DEFAULT 'x')",
        )
        .unwrap();
        c.query_drop("INSERT INTO t VALUES (DEFAULT, DEFAULT, DEFAULT), (5, 1, 'y')")
            .unwrap();
        c.query_drop("INSERT INTO t (k) SELECT k + 1 FROM t WHERE id = 5")
            .unwrap();
        let rows: Vec<(i32, i32, String)> = c.query("SELECT * FROM t").unwrap();
        assert_eq!(
            rows,
            vec![(1, 7, "x".into()), (5, 1, "y".into()), (6, 2, "x".into())]
        );
        let n: i64 = c
            .query_first("SELECT COUNT(*) FROM t HAVING COUNT(*) > 2")
            .unwrap()
            .unwrap();
        assert_eq!(n, 3);
    }
}

/// Rows as text, for comparing whole result sets.
fn text_rows(c: &mut Conn, sql: &str) -> Vec<Vec<Option<String>>> {
    let rows: Vec<Row> = c.query(sql).unwrap();
    rows.into_iter()
        .map(|r| {
            (0..r.len())
                .map(|i| r.get_opt::<Option<String>, _>(i).unwrap().unwrap())
                .collect()
        })
        .collect()
}

/// The column names of a result set.
fn column_names(c: &mut Conn, sql: &str) -> Vec<String> {
    let r = c.query_iter(sql).unwrap();
    r.columns()
        .as_ref()
        .iter()
        .map(|c| c.name_str().into_owned())
        .collect()
}

#[test]
fn using_and_natural_joins_merge_their_columns_as_mysql_lists_them() {
    let (_srv, mut c) = setup(Mode::PerConnection);
    c.query_drop("CREATE TABLE a (v INT, id INT PRIMARY KEY, k INT)")
        .unwrap();
    c.query_drop("CREATE TABLE b (id INT PRIMARY KEY, w INT, k INT)")
        .unwrap();
    c.query_drop("INSERT INTO a VALUES (10, 1, 5), (20, 2, 6)")
        .unwrap();
    c.query_drop("INSERT INTO b VALUES (1, 100, 5), (3, 300, 7)")
        .unwrap();
    let s = |v: &str| Some(v.to_string());
    // The merged column first, then the left side's other columns, then the right side's.
    let using = "SELECT * FROM a JOIN b USING (id)";
    assert_eq!(column_names(&mut c, using), ["id", "v", "k", "w", "k"]);
    assert_eq!(
        text_rows(&mut c, using),
        [[s("1"), s("10"), s("5"), s("100"), s("5")]]
    );
    let natural = "SELECT * FROM a NATURAL LEFT JOIN b ORDER BY id";
    assert_eq!(column_names(&mut c, natural), ["id", "k", "v", "w"]);
    assert_eq!(
        text_rows(&mut c, natural),
        [
            [s("1"), s("5"), s("10"), s("100")],
            [s("2"), s("6"), s("20"), None]
        ]
    );
    // An unqualified merged name is one column; qualified, each side stays reachable.
    assert_eq!(
        text_rows(
            &mut c,
            "SELECT id, a.id, b.id FROM a LEFT JOIN b USING (id) WHERE id > 0 ORDER BY id"
        ),
        [[s("1"), s("1"), s("1")], [s("2"), s("2"), None]]
    );
    assert_eq!(
        err_of(c.query_drop("SELECT * FROM a JOIN b USING (nope)")),
        (1054, "Unknown column 'nope' in 'from clause'".into())
    );
    assert_eq!(
        err_of(c.query_drop("SELECT * FROM a JOIN b USING (k) JOIN b AS c USING (id)")),
        (1052, "Column 'id' in from clause is ambiguous".into())
    );
}
