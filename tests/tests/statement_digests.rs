//! `performance_schema.events_statements_summary_by_digest`, `performance_schema.threads` and
//! `information_schema.PROCESSLIST` against the real server: statements differing only in
//! literals share a digest, text and prepared executions aggregate together, counts, timers
//! and rows examined are real, TRUNCATE resets, the digest limit spills into the NULL row,
//! and every connection shows once in `threads` joined with the processlist; each in every
//! connection-handling mode.

use mysql::prelude::*;
use tpbed_tests::{each_mode, Mode, TestServer};

const SUMMARY: &str = "performance_schema.events_statements_summary_by_digest";
const POINT: &str = "SELECT `c` FROM `sbtest1` WHERE `id` = ?";

fn setup(c: &mut mysql::Conn) {
    c.query_drop("CREATE DATABASE d").unwrap();
    c.query_drop("USE d").unwrap();
    c.query_drop(
        "CREATE TABLE sbtest1 (id INT NOT NULL PRIMARY KEY, k INT NOT NULL, c VARCHAR(20) NOT NULL, KEY k_1 (k))",
    )
    .unwrap();
    let rows: Vec<String> = (1..=100)
        .map(|i| format!("({i}, {}, 'c{i}')", i % 10))
        .collect();
    c.query_drop(format!("INSERT INTO sbtest1 VALUES {}", rows.join(", ")))
        .unwrap();
}

fn rows_read(c: &mut mysql::Conn) -> u64 {
    let (_, v): (String, u64) = c
        .query_first("SHOW SESSION STATUS LIKE 'Innodb_rows_read'")
        .unwrap()
        .unwrap();
    v
}

/// (DIGEST, SCHEMA_NAME, COUNT_STAR, SUM, MIN, AVG, MAX, SUM_ROWS_EXAMINED, SUM_ROWS_SENT)
type Summary = (String, Option<String>, u64, u64, u64, u64, u64, u64, u64);

fn summary(c: &mut mysql::Conn, text: &str) -> Option<Summary> {
    c.exec_first(
        format!(
            "SELECT DIGEST, SCHEMA_NAME, COUNT_STAR, SUM_TIMER_WAIT, MIN_TIMER_WAIT, AVG_TIMER_WAIT, \
             MAX_TIMER_WAIT, SUM_ROWS_EXAMINED, SUM_ROWS_SENT FROM {SUMMARY} WHERE DIGEST_TEXT = ?"
        ),
        (text,),
    )
    .unwrap()
}

each_mode! {
    fn literals_share_a_digest_with_real_counts_and_timers(mode) {
        let srv = mode.start(&[]);
        let mut c = srv.connect();
        setup(&mut c);
        c.query_drop(format!("TRUNCATE TABLE {SUMMARY}")).unwrap();
        let before = rows_read(&mut c);
        for i in 1..=20 {
            let c_val: String = c
                .query_first(format!("SELECT c FROM sbtest1 WHERE id={i}"))
                .unwrap()
                .unwrap();
            assert_eq!(c_val, format!("c{i}"));
        }
        let read = rows_read(&mut c) - before;
        for i in [3, 40, 77] {
            let n: Vec<String> = c
                .query(format!(
                    "select c from sbtest1 where id between {i} and {} order by id",
                    i + 4
                ))
                .unwrap();
            assert_eq!(n.len(), 5);
        }
        let (digest, schema, count, sum, min, avg, max, examined, sent) =
            summary(&mut c, POINT).expect("one row for the point select");
        assert_eq!(count, 20);
        assert_eq!(schema.as_deref(), Some("d"));
        assert_eq!(digest.len(), 64);
        assert!(digest.bytes().all(|b| b.is_ascii_hexdigit()));
        assert_eq!(
            examined, read,
            "SUM_ROWS_EXAMINED is the rows the engine returned"
        );
        assert!(examined >= 20);
        assert_eq!(sent, 20);
        assert!(min > 0 && min <= avg && avg <= max, "{min} {avg} {max}");
        assert_eq!(avg, sum / count);
        let range = summary(
            &mut c,
            "SELECT `c` FROM `sbtest1` WHERE `id` BETWEEN ? AND ? ORDER BY `id`",
        )
        .expect("range row");
        assert_eq!((range.2, range.8), (3, 15));
        assert!(range.7 >= 15);
        // The summary takes WHERE, ORDER BY and GROUP BY like any table.
        let groups: Vec<(Option<String>, u64, u64)> = c
            .query(format!(
                "SELECT SCHEMA_NAME, COUNT(*), SUM(COUNT_STAR) FROM {SUMMARY} \
                 WHERE COUNT_STAR > 0 GROUP BY SCHEMA_NAME ORDER BY SCHEMA_NAME"
            ))
            .unwrap();
        let d = groups.iter().find(|g| g.0.as_deref() == Some("d")).unwrap();
        assert!(d.1 >= 3 && d.2 >= 24, "{groups:?}");
        let top: Vec<(String, u64)> = c
            .query(format!(
                "SELECT DIGEST_TEXT, COUNT_STAR FROM {SUMMARY} ORDER BY COUNT_STAR DESC LIMIT 1"
            ))
            .unwrap();
        assert_eq!(top, vec![(POINT.to_string(), 20)]);
        let (q95, q99, sample): (u64, u64, String) = c
            .exec_first(
                format!("SELECT QUANTILE_95, QUANTILE_99, QUERY_SAMPLE_TEXT FROM {SUMMARY} WHERE DIGEST_TEXT = ?"),
                (POINT,),
            )
            .unwrap()
            .unwrap();
        assert!(q95 > 0 && q95 <= q99 && q99 <= max);
        assert!(sample.starts_with("SELECT c FROM sbtest1 WHERE id="));
        // TRUNCATE resets: only the TRUNCATE itself is summed afterwards.
        c.query_drop(format!("TRUNCATE TABLE {SUMMARY}")).unwrap();
        let left: Vec<String> = c
            .query(format!("SELECT DIGEST_TEXT FROM {SUMMARY}"))
            .unwrap();
        assert_eq!(left.len(), 1, "{left:?}");
        assert!(left[0].starts_with("TRUNCATE TABLE"), "{left:?}");
    }
}

each_mode! {
    fn prepared_and_text_executions_aggregate_together(mode) {
        let srv = mode.start(&[]);
        let mut c = srv.connect();
        setup(&mut c);
        c.query_drop(format!("TRUNCATE TABLE {SUMMARY}")).unwrap();
        let stmt = c.prep("SELECT c FROM sbtest1 WHERE id=?").unwrap();
        for i in 1..=10 {
            let v: Option<String> = c.exec_first(&stmt, (i,)).unwrap();
            assert_eq!(v, Some(format!("c{i}")));
        }
        for i in 11..=15 {
            c.query_drop(format!("SELECT c FROM sbtest1 WHERE id = {i}"))
                .unwrap();
        }
        let row = summary(&mut c, POINT).expect("one digest for both protocols");
        assert_eq!(row.2, 15);
        assert_eq!(row.8, 15);
        // Multi-row INSERTs of any length share one digest; affected rows and errors are summed.
        c.query_drop("INSERT INTO sbtest1 VALUES (201, 1, 'a'), (202, 2, 'b')")
            .unwrap();
        c.query_drop("insert into sbtest1 values (203,3,'c'),(204,4,'d'),(205,5,'e')")
            .unwrap();
        let (count, affected): (u64, u64) = c
            .exec_first(
                format!("SELECT COUNT_STAR, SUM_ROWS_AFFECTED FROM {SUMMARY} WHERE DIGEST_TEXT = ?"),
                ("INSERT INTO `sbtest1` VALUES (...) /* , ... */",),
            )
            .unwrap()
            .unwrap();
        assert_eq!((count, affected), (2, 5));
        for i in 0..2 {
            assert!(c
                .query_drop(format!("SELECT nosuch FROM sbtest1 WHERE id = {i}"))
                .is_err());
        }
        let errors: u64 = c
            .exec_first(
                format!("SELECT SUM_ERRORS FROM {SUMMARY} WHERE DIGEST_TEXT = ?"),
                ("SELECT `nosuch` FROM `sbtest1` WHERE `id` = ?",),
            )
            .unwrap()
            .unwrap();
        assert_eq!(errors, 2);
    }
}

each_mode! {
    fn digests_past_the_limit_go_to_the_null_row(mode) {
        let srv = mode.start(&["--performance-schema-digests-size=3"]);
        let mut c = srv.connect();
        c.query_drop(format!("TRUNCATE TABLE {SUMMARY}")).unwrap();
        for q in [
            "SELECT 1",
            "SELECT 1, 2",
            "SELECT 1 + 2",
            "SELECT 'a' = 'b'",
        ] {
            c.query_drop(q).unwrap();
        }
        let rows: Vec<(Option<String>, u64)> = c
            .query(format!("SELECT DIGEST, COUNT_STAR FROM {SUMMARY}"))
            .unwrap();
        assert_eq!(rows.iter().filter(|r| r.0.is_some()).count(), 3, "{rows:?}");
        let null = rows
            .iter()
            .find(|r| r.0.is_none())
            .expect("NULL-digest row");
        assert!(null.1 >= 2, "{rows:?}");
    }
}

each_mode! {
    fn performance_schema_off_records_nothing(mode) {
        let srv = mode.start(&["--performance-schema=OFF"]);
        let mut c = srv.connect();
        c.query_drop("SELECT 1").unwrap();
        let n: u64 = c
            .query_first(format!("SELECT COUNT(*) FROM {SUMMARY}"))
            .unwrap()
            .unwrap();
        assert_eq!(n, 0);
    }
}

/// (THREAD_ID, PROCESSLIST_ID, ID, NAME, TYPE, CONNECTION_TYPE, THREAD_OS_ID)
type Joined = (u64, u64, u64, String, String, String, Option<u64>);

fn threads_join(srv: &TestServer, name: &str) {
    let mut conns: Vec<mysql::Conn> = (0..3).map(|_| srv.connect()).collect();
    let ids: Vec<u64> = conns
        .iter_mut()
        .map(|c| c.query_first("SELECT CONNECTION_ID()").unwrap().unwrap())
        .collect();
    let mut c = srv.connect();
    let me: u64 = c.query_first("SELECT CONNECTION_ID()").unwrap().unwrap();
    let rows: Vec<Joined> = c
        .query(
            "SELECT t.THREAD_ID, t.PROCESSLIST_ID, p.ID, t.NAME, t.TYPE, t.CONNECTION_TYPE, t.THREAD_OS_ID \
             FROM performance_schema.threads t JOIN information_schema.PROCESSLIST p \
             ON t.PROCESSLIST_ID = p.ID ORDER BY p.ID",
        )
        .unwrap();
    let mut seen: Vec<u64> = rows.iter().map(|r| r.2).collect();
    let mut want = ids.clone();
    want.push(me);
    want.sort();
    assert_eq!(seen, want, "each connection once: {rows:?}");
    seen.dedup();
    assert_eq!(seen.len(), rows.len());
    for r in &rows {
        assert_eq!(r.0, r.1 + 47, "THREAD_ID = PROCESSLIST_ID + 47");
        assert_eq!(r.1, r.2);
        assert_eq!(
            (r.3.as_str(), r.4.as_str(), r.5.as_str()),
            (name, "FOREGROUND", "TCP/IP")
        );
        assert!(r.6.is_some_and(|t| t > 0));
    }
    let mine: (String, Option<String>, Option<String>) = c
        .exec_first(
            "SELECT PROCESSLIST_COMMAND, PROCESSLIST_STATE, PROCESSLIST_INFO FROM performance_schema.threads \
             WHERE PROCESSLIST_ID = ?",
            (me,),
        )
        .unwrap()
        .unwrap();
    assert_eq!(mine.0, "Execute");
    assert_eq!(mine.1.as_deref(), Some("executing"));
    let bg: Vec<(u64, String)> = c
        .query("SELECT THREAD_ID, NAME FROM performance_schema.threads WHERE TYPE = 'BACKGROUND'")
        .unwrap();
    assert_eq!(bg, vec![(1, "thread/sql/main".to_string())]);
    drop(conns);
}

each_mode! {
    fn threads_join_processlist_once_per_connection(mode) {
        let srv = mode.start(&[]);
        let name = match mode {
            Mode::PerConnection => "thread/sql/one_connection",
            Mode::PoolEpoll | Mode::PoolIoUring | Mode::PoolRing => {
                "thread/thread_pool/tp_one_connection"
            }
        };
        threads_join(&srv, name);
    }
}
