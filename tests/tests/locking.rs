//! Row locks through the real binary, read back from `performance_schema.data_locks`: the
//! lock counts and modes of the job-queue claim on the shared fixture (RR and RC, the three
//! access shapes, filesort), implicit locks of fresh inserts, and the behaviours a worker
//! sees with two or more connections: gap locks blocking a producer, 1205 keeping the
//! transaction and its locks, deadlocks, NOWAIT, KILL QUERY, and RC's semi-consistent read.
//! Each test runs in every connection-handling mode, so lock waits meet the pool's wait hook.

use std::thread;
use std::time::{Duration, Instant};

use mysql::prelude::*;
use mysql::Conn;
use tpbed_tests::{code, each_mode, load_queue_fixture, pool_waits, Mode, TestServer};

const CLAIM: &str =
    "SELECT id FROM {t} WHERE status=0 ORDER BY run_at, id LIMIT 10 FOR UPDATE SKIP LOCKED";

/// Inserts `n` ready jobs (ids 1..=n, run_at = id, priority descending) into `table`.
fn jobs(c: &mut Conn, table: &str, n: u64, status: u8, first: u64) {
    let values: Vec<String> = (first..first + n)
        .map(|i| format!("({i}, {status}, {i}, {})", 1000 - i as i64))
        .collect();
    c.query_drop(format!(
        "INSERT INTO {table} (id, status, run_at, priority) VALUES {}",
        values.join(",")
    ))
    .unwrap();
}

fn setup(mode: Mode) -> (TestServer, Conn) {
    let srv = mode.start(&[]);
    let mut c = srv.connect();
    c.query_drop("CREATE DATABASE q").unwrap();
    c.query_drop("USE q").unwrap();
    load_queue_fixture(&mut c);
    (srv, c)
}

/// (INDEX_NAME, LOCK_MODE, LOCK_STATUS, count) of every lock, sorted.
fn lock_summary(c: &mut Conn) -> Vec<(Option<String>, String, String, u64)> {
    let mut v: Vec<(Option<String>, String, String, u64)> = c
        .query(
            "SELECT INDEX_NAME, LOCK_MODE, LOCK_STATUS, COUNT(*) FROM performance_schema.data_locks \
             GROUP BY INDEX_NAME, LOCK_MODE, LOCK_STATUS",
        )
        .unwrap();
    v.sort();
    v
}

fn row(ix: Option<&str>, mode: &str, n: u64) -> (Option<String>, String, String, u64) {
    (
        ix.map(str::to_string),
        mode.to_string(),
        "GRANTED".to_string(),
        n,
    )
}

fn claim(c: &mut Conn, table: &str) -> Vec<u64> {
    c.query(CLAIM.replace("{t}", table)).unwrap()
}

each_mode! {
    fn claim_lock_counts_follow_the_index_and_isolation_level(mode) {
        let (srv, mut c) = setup(mode);
        jobs(&mut c, "q_v1", 200, 0, 1);
        jobs(&mut c, "q_v2", 200, 0, 1);
        let mut w = srv.connect_db("q");

        // q_v1 under RR: IX + 10 idx_ready next-key X + 10 PRIMARY X,REC_NOT_GAP.
        w.query_drop("BEGIN").unwrap();
        assert_eq!(claim(&mut w, "q_v1"), (1..=10).collect::<Vec<u64>>());
        assert_eq!(
            lock_summary(&mut c),
            vec![
                row(None, "IX", 1),
                row(Some("PRIMARY"), "X,REC_NOT_GAP", 10),
                row(Some("idx_ready"), "X", 10),
            ]
        );
        // No lock on an 11th record: the scan stopped at LIMIT.
        let pks: Vec<String> = c
            .query("SELECT LOCK_DATA FROM performance_schema.data_locks WHERE INDEX_NAME='PRIMARY'")
            .unwrap();
        assert!(!pks.contains(&"11".to_string()), "{pks:?}");
        w.query_drop("ROLLBACK").unwrap();
        assert!(
            lock_summary(&mut c).is_empty(),
            "ROLLBACK releases every lock"
        );

        // q_v1 under RC: both records X,REC_NOT_GAP.
        w.query_drop("SET SESSION TRANSACTION ISOLATION LEVEL READ COMMITTED")
            .unwrap();
        w.query_drop("BEGIN").unwrap();
        assert_eq!(claim(&mut w, "q_v1").len(), 10);
        assert_eq!(
            lock_summary(&mut c),
            vec![
                row(None, "IX", 1),
                row(Some("PRIMARY"), "X,REC_NOT_GAP", 10),
                row(Some("idx_ready"), "X,REC_NOT_GAP", 10),
            ]
        );
        w.query_drop("COMMIT").unwrap();

        // q_v2 under RR: status leads the clustered key, so 10 PRIMARY X.
        w.query_drop("SET SESSION TRANSACTION ISOLATION LEVEL REPEATABLE READ")
            .unwrap();
        w.query_drop("BEGIN").unwrap();
        assert_eq!(claim(&mut w, "q_v2").len(), 10);
        assert_eq!(
            lock_summary(&mut c),
            vec![row(None, "IX", 1), row(Some("PRIMARY"), "X", 10)]
        );
        w.query_drop("COMMIT").unwrap();
    }
}

each_mode! {
    /// A shared locking read that a secondary index covers locks only the secondary records;
    /// one that needs the row locks the clustered records too, and so does FOR UPDATE.
    fn a_covering_shared_read_locks_only_the_secondary_index(mode) {
        let (srv, mut c) = setup(mode);
        jobs(&mut c, "q_v1", 50, 0, 1);
        let mut w = srv.connect_db("q");
        let ready = "FROM q_v1 WHERE status = 0 ORDER BY run_at, id LIMIT 10";
        let plan: Vec<mysql::Row> = w.query(format!("EXPLAIN SELECT id {ready}")).unwrap();
        let extra: Option<String> = plan[0].get("Extra").expect("Extra column");
        assert!(
            extra.as_deref().unwrap_or("").contains("Using index"),
            "{extra:?}"
        );

        w.query_drop("BEGIN").unwrap();
        let ids: Vec<u64> = w.query(format!("SELECT id {ready} FOR SHARE")).unwrap();
        assert_eq!(ids, (1..=10).collect::<Vec<u64>>());
        assert_eq!(
            lock_summary(&mut c),
            vec![row(None, "IS", 1), row(Some("idx_ready"), "S", 10)]
        );
        w.query_drop("COMMIT").unwrap();

        w.query_drop("BEGIN").unwrap();
        let rows: Vec<(u64, Option<Vec<u8>>)> = w
            .query(format!("SELECT id, payload {ready} FOR SHARE"))
            .unwrap();
        assert_eq!(rows.len(), 10);
        assert_eq!(
            lock_summary(&mut c),
            vec![
                row(None, "IS", 1),
                row(Some("PRIMARY"), "S,REC_NOT_GAP", 10),
                row(Some("idx_ready"), "S", 10),
            ]
        );
        w.query_drop("COMMIT").unwrap();
    }
}

each_mode! {
    fn a_filesort_claim_locks_every_qualifying_row(mode) {
        let (srv, mut c) = setup(mode);
        let n = 150u64;
        jobs(&mut c, "q_v1", n, 0, 1);
        jobs(&mut c, "q_v1", 20, 1, 1000);
        let sql =
            "SELECT id FROM q_v1 WHERE status=0 ORDER BY priority, id LIMIT 10 FOR UPDATE SKIP LOCKED";
        let plan: Vec<mysql::Row> = c.query(format!("EXPLAIN {sql}")).unwrap();
        let key: Option<String> = plan[0].get("key").unwrap();
        let extra: Option<String> = plan[0].get("Extra").unwrap();
        assert_eq!(key.as_deref(), Some("idx_ready"));
        assert!(extra.unwrap_or_default().contains("Using filesort"));
        let records = |c: &mut Conn| -> u64 {
            c.query_first("SELECT COUNT(*) FROM performance_schema.data_locks WHERE LOCK_TYPE='RECORD'")
                .unwrap()
                .unwrap()
        };
        let mut w = srv.connect_db("q");
        w.query_drop("BEGIN").unwrap();
        let got: Vec<u64> = w.query(sql).unwrap();
        assert_eq!(got.len(), 10);
        // RR: N secondary next-key + N clustered + the gap lock on the first status=1 entry.
        assert_eq!(records(&mut c), 2 * n + 1);
        let gap: Vec<(String, String)> = c
            .query(
                "SELECT LOCK_MODE, LOCK_DATA FROM performance_schema.data_locks \
                 WHERE INDEX_NAME='idx_ready' AND LOCK_MODE='X,GAP'",
            )
            .unwrap();
        assert_eq!(
            gap,
            vec![("X,GAP".to_string(), "1, 1000, 1000".to_string())]
        );
        w.query_drop("ROLLBACK").unwrap();
        w.query_drop("SET SESSION transaction_isolation = 'READ-COMMITTED'")
            .unwrap();
        w.query_drop("BEGIN").unwrap();
        let got: Vec<u64> = w.query(sql).unwrap();
        assert_eq!(got.len(), 10);
        assert_eq!(records(&mut c), 2 * n);
        w.query_drop("ROLLBACK").unwrap();
    }
}

each_mode! {
    fn a_fresh_insert_has_an_implicit_lock_until_someone_touches_it(mode) {
        let (srv, mut c) = setup(mode);
        let mut ins = srv.connect_db("q");
        ins.query_drop("BEGIN").unwrap();
        ins.query_drop("INSERT INTO q_v1 (id, status, run_at) VALUES (7, 0, 7)")
            .unwrap();
        let recs: u64 = c
            .query_first("SELECT COUNT(*) FROM performance_schema.data_locks WHERE LOCK_TYPE='RECORD'")
            .unwrap()
            .unwrap();
        assert_eq!(recs, 0, "an INSERT creates no lock struct");
        let inserter: u64 = c
            .query_first("SELECT ENGINE_TRANSACTION_ID FROM performance_schema.data_locks WHERE LOCK_TYPE='TABLE'")
            .unwrap()
            .unwrap();
        // Another transaction touches the row: NOWAIT fails, and the inserter's lock is explicit.
        let mut other = srv.connect_db("q");
        other.query_drop("BEGIN").unwrap();
        assert_eq!(
            code(other.query_drop("SELECT * FROM q_v1 WHERE id = 7 FOR UPDATE NOWAIT")),
            3572
        );
        let locks: Vec<(u64, String, String, String)> = c
            .query(
                "SELECT ENGINE_TRANSACTION_ID, LOCK_MODE, LOCK_STATUS, LOCK_DATA FROM performance_schema.data_locks \
                 WHERE LOCK_TYPE='RECORD' AND INDEX_NAME='PRIMARY'",
            )
            .unwrap();
        assert_eq!(
            locks,
            vec![(
                inserter,
                "X,REC_NOT_GAP".to_string(),
                "GRANTED".to_string(),
                "7".to_string()
            )]
        );
        // SKIP LOCKED skips the uncommitted row.
        assert!(claim(&mut other, "q_v1").is_empty());
        ins.query_drop("COMMIT").unwrap();
        assert_eq!(claim(&mut other, "q_v1"), vec![7]);
    }
}

each_mode! {
    /// The empty-queue gap lock: under RR an open claim that found nothing blocks a producer's
    /// INSERT into its range until `innodb_lock_wait_timeout`; under RC the INSERT completes.
    fn an_empty_claim_blocks_producers_under_rr_only(mode) {
        let (srv, mut c) = setup(mode);
        jobs(&mut c, "q_v1", 5, 1, 100); // running jobs only: the ready queue is empty
        let mut w = srv.connect_db("q");
        w.query_drop("BEGIN").unwrap();
        assert!(claim(&mut w, "q_v1").is_empty());
        let mut p = srv.connect_db("q");
        p.query_drop("SET SESSION innodb_lock_wait_timeout = 2")
            .unwrap();
        let started = Instant::now();
        let producer = thread::spawn(move || {
            let r = p.query_drop("INSERT INTO q_v1 (status, run_at) VALUES (0, 50)");
            (code(r), started.elapsed(), p)
        });
        // The waiting insert intention is visible while it waits.
        let mut seen = Vec::new();
        for _ in 0..100 {
            seen = c
                .query::<(String, String), _>(
                    "SELECT LOCK_MODE, LOCK_STATUS FROM performance_schema.data_locks WHERE LOCK_STATUS='WAITING'",
                )
                .unwrap();
            if !seen.is_empty() {
                break;
            }
            thread::sleep(Duration::from_millis(20));
        }
        assert_eq!(
            seen,
            vec![("X,GAP,INSERT_INTENTION".to_string(), "WAITING".to_string())]
        );
        let waits: u64 = c
            .query_first("SELECT COUNT(*) FROM performance_schema.data_lock_waits")
            .unwrap()
            .unwrap();
        assert_eq!(waits, 1);
        let blocking: u64 = c
            .query_first("SELECT COUNT(*) FROM sys.innodb_lock_waits")
            .unwrap()
            .unwrap();
        assert_eq!(blocking, 1);
        let (err, took, mut p) = producer.join().unwrap();
        assert_eq!(err, 1205);
        assert!(took >= Duration::from_millis(1900), "{took:?}");
        w.query_drop("ROLLBACK").unwrap();

        // Under RC the claim takes no gap locks: the INSERT completes at once.
        w.query_drop("SET SESSION TRANSACTION ISOLATION LEVEL READ COMMITTED")
            .unwrap();
        w.query_drop("BEGIN").unwrap();
        assert!(claim(&mut w, "q_v1").is_empty());
        let t = Instant::now();
        p.query_drop("INSERT INTO q_v1 (status, run_at) VALUES (0, 50)")
            .unwrap();
        assert!(
            t.elapsed() < Duration::from_millis(500),
            "{:?}",
            t.elapsed()
        );
        w.query_drop("COMMIT").unwrap();
    }
}

each_mode! {
    fn a_lock_wait_timeout_keeps_the_transaction_and_its_locks(mode) {
        let (srv, mut c) = setup(mode);
        jobs(&mut c, "q_v1", 20, 0, 1);
        let mut a = srv.connect_db("q");
        let mut b = srv.connect_db("q");
        a.query_drop("BEGIN").unwrap();
        a.query_drop("SELECT * FROM q_v1 WHERE id = 1 FOR UPDATE")
            .unwrap();
        b.query_drop("SET SESSION innodb_lock_wait_timeout = 1")
            .unwrap();
        b.query_drop("BEGIN").unwrap();
        b.query_drop("UPDATE q_v1 SET attempts = 1 WHERE id = 5")
            .unwrap();
        let b_id: u64 = b.query_first("SELECT CONNECTION_ID()").unwrap().unwrap();
        let before: Vec<(String, String)> = c
            .query(format!(
                "SELECT l.LOCK_MODE, IFNULL(l.LOCK_DATA, '') FROM performance_schema.data_locks l \
                 JOIN information_schema.INNODB_TRX t ON t.trx_id = l.ENGINE_TRANSACTION_ID \
                 WHERE t.trx_mysql_thread_id = {b_id} ORDER BY 1, 2"
            ))
            .unwrap();
        assert_eq!(
            code(b.query_drop("SELECT * FROM q_v1 WHERE id = 1 FOR UPDATE")),
            1205
        );
        let after: Vec<(String, String)> = c
            .query(format!(
                "SELECT l.LOCK_MODE, IFNULL(l.LOCK_DATA, '') FROM performance_schema.data_locks l \
                 JOIN information_schema.INNODB_TRX t ON t.trx_id = l.ENGINE_TRANSACTION_ID \
                 WHERE t.trx_mysql_thread_id = {b_id} ORDER BY 1, 2"
            ))
            .unwrap();
        assert!(!before.is_empty());
        assert_eq!(
            after, before,
            "the timed-out statement's transaction keeps its locks"
        );
        // Still open, with its change.
        let attempts: u8 = b
            .query_first("SELECT attempts FROM q_v1 WHERE id = 5")
            .unwrap()
            .unwrap();
        assert_eq!(attempts, 1);
        let timeouts: u64 = c
            .query_first(
                "SELECT COUNT FROM information_schema.INNODB_METRICS WHERE NAME = 'lock_timeouts'",
            )
            .unwrap()
            .unwrap();
        assert!(timeouts >= 1);
        // In the pool, the statement told the pool it waited for a row lock (so the pool could
        // run another connection of its group meanwhile).
        if mode != Mode::PerConnection {
            assert!(pool_waits(&mut c, "ROW_LOCK_WAITS") >= 1);
        }
        b.query_drop("ROLLBACK").unwrap();
        let attempts: u8 = b
            .query_first("SELECT attempts FROM q_v1 WHERE id = 5")
            .unwrap()
            .unwrap();
        assert_eq!(attempts, 0, "ROLLBACK undid the update");
        a.query_drop("COMMIT").unwrap();
    }
}

each_mode! {
    fn a_deadlock_rolls_back_exactly_one_transaction(mode) {
        let (srv, mut c) = setup(mode);
        jobs(&mut c, "q_v1", 2, 0, 1);
        c.query_drop("SET GLOBAL innodb_print_all_deadlocks = ON")
            .unwrap();
        let mut a = srv.connect_db("q");
        let mut b = srv.connect_db("q");
        a.query_drop("BEGIN").unwrap();
        b.query_drop("BEGIN").unwrap();
        a.query_drop("UPDATE q_v1 SET attempts = attempts + 1 WHERE id = 1")
            .unwrap();
        b.query_drop("UPDATE q_v1 SET attempts = attempts + 1 WHERE id = 2")
            .unwrap();
        let ta = thread::spawn(move || {
            let r = a.query_drop("UPDATE q_v1 SET attempts = attempts + 1 WHERE id = 2");
            (r.map_err(|e| e.to_string()), a)
        });
        thread::sleep(Duration::from_millis(200));
        let rb = b.query_drop("UPDATE q_v1 SET attempts = attempts + 1 WHERE id = 1");
        let (ra, mut a) = ta.join().unwrap();
        let failures = [ra.is_err(), rb.is_err()];
        assert_eq!(failures.iter().filter(|f| **f).count(), 1, "{ra:?} {rb:?}");
        if let Err(e) = &ra {
            assert!(e.contains("1213"), "{e}");
        }
        if let Err(e) = &rb {
            assert!(e.to_string().contains("1213"), "{e}");
        }
        // The survivor commits both of its updates; the victim's are gone.
        if ra.is_ok() {
            a.query_drop("COMMIT").unwrap();
            b.query_drop("COMMIT").unwrap();
        } else {
            b.query_drop("COMMIT").unwrap();
            a.query_drop("COMMIT").unwrap();
        }
        let total: u64 = c
            .query_first("SELECT SUM(attempts) FROM q_v1")
            .unwrap()
            .unwrap();
        assert_eq!(total, 2);
        let deadlocks: u64 = c
            .query_first(
                "SELECT COUNT FROM information_schema.INNODB_METRICS WHERE NAME = 'lock_deadlocks'",
            )
            .unwrap()
            .unwrap();
        assert_eq!(deadlocks, 1);
        let status: Vec<(String, String, String)> = c.query("SHOW ENGINE INNODB STATUS").unwrap();
        assert!(
            status[0].2.contains("LATEST DETECTED DEADLOCK"),
            "{}",
            status[0].2
        );
        // innodb_print_all_deadlocks: the error log has the deadlock, once.
        let logged = srv
            .log_lines()
            .iter()
            .filter(|l| l.contains("Transactions deadlock detected"))
            .count();
        assert_eq!(logged, 1, "{:?}", srv.log_lines());
        assert!(srv
            .log_lines()
            .iter()
            .any(|l| l.contains("*** WE ROLL BACK TRANSACTION")));
    }
}

each_mode! {
    fn kill_query_ends_a_lock_wait(mode) {
        let (srv, mut c) = setup(mode);
        jobs(&mut c, "q_v1", 3, 0, 1);
        let mut a = srv.connect_db("q");
        a.query_drop("BEGIN").unwrap();
        a.query_drop("SELECT * FROM q_v1 WHERE id = 2 FOR UPDATE")
            .unwrap();
        let mut b = srv.connect_db("q");
        b.query_drop("SET SESSION innodb_lock_wait_timeout = 20")
            .unwrap();
        b.query_drop("BEGIN").unwrap();
        b.query_drop("SELECT * FROM q_v1 WHERE id = 3 FOR UPDATE")
            .unwrap();
        let b_id: u64 = b.query_first("SELECT CONNECTION_ID()").unwrap().unwrap();
        let waiter = thread::spawn(move || {
            let r = b.query_drop("SELECT * FROM q_v1 WHERE id = 2 FOR UPDATE");
            (code(r), b)
        });
        for _ in 0..100 {
            let n: u64 = c
                .query_first("SELECT COUNT(*) FROM performance_schema.data_lock_waits")
                .unwrap()
                .unwrap();
            if n == 1 {
                break;
            }
            thread::sleep(Duration::from_millis(20));
        }
        c.query_drop(format!("KILL QUERY {b_id}")).unwrap();
        let (err, mut b) = waiter.join().unwrap();
        assert_eq!(err, 1317);
        // Only the statement ended: the transaction and its earlier lock remain.
        let mine: u64 = c
            .query_first(format!(
                "SELECT COUNT(*) FROM performance_schema.data_locks l JOIN information_schema.INNODB_TRX t \
                 ON t.trx_id = l.ENGINE_TRANSACTION_ID WHERE t.trx_mysql_thread_id = {b_id} AND l.LOCK_DATA = '3'"
            ))
            .unwrap()
            .unwrap();
        assert_eq!(mine, 1);
        b.query_drop("ROLLBACK").unwrap();
        a.query_drop("ROLLBACK").unwrap();
    }
}

each_mode! {
    /// READ COMMITTED UPDATE does not wait on a row another transaction has locked when the
    /// row's latest committed version fails its WHERE; DELETE and REPEATABLE READ wait.
    fn rc_update_reads_semi_consistently(mode) {
        let (srv, mut c) = setup(mode);
        c.query_drop("CREATE TABLE jobs (id INT PRIMARY KEY, status INT NOT NULL, owner VARCHAR(10))")
            .unwrap();
        let values: Vec<String> = (1..=40).map(|i| format!("({i}, 0, NULL)")).collect();
        c.query_drop(format!("INSERT INTO jobs VALUES {}", values.join(",")))
            .unwrap();
        c.query_drop("UPDATE jobs SET status = 1, owner = 'a' WHERE id <= 10")
            .unwrap();
        // Claimer A holds its running jobs (committed status 1) while it finishes them.
        let mut a = srv.connect_db("q");
        a.query_drop("BEGIN").unwrap();
        a.query_drop("SELECT * FROM jobs WHERE id <= 10 FOR UPDATE")
            .unwrap();
        let mut b = srv.connect_db("q");
        b.query_drop("SET SESSION innodb_lock_wait_timeout = 1")
            .unwrap();
        b.query_drop("SET SESSION TRANSACTION ISOLATION LEVEL READ COMMITTED")
            .unwrap();
        b.query_drop("BEGIN").unwrap();
        let t = Instant::now();
        b.query_drop("UPDATE jobs SET status = 1, owner = 'b' WHERE status = 0 ORDER BY id LIMIT 10")
            .unwrap();
        assert!(
            t.elapsed() < Duration::from_millis(500),
            "{:?}",
            t.elapsed()
        );
        assert_eq!(b.affected_rows(), 10);
        let mine: Vec<i32> = b
            .query("SELECT id FROM jobs WHERE owner = 'b' ORDER BY id")
            .unwrap();
        assert_eq!(mine, (11..=20).collect::<Vec<i32>>());
        b.query_drop("COMMIT").unwrap();
        // A DELETE of the same rows is no semi-consistent read (MySQL's are UPDATE's alone):
        // it waits for A's first locked row, under READ COMMITTED too.
        b.query_drop("BEGIN").unwrap();
        assert_eq!(code(b.query_drop("DELETE FROM jobs WHERE status = 0")), 1205);
        b.query_drop("ROLLBACK").unwrap();
        // Under RR the same claim locks the first scanned row and waits for A.
        b.query_drop("SET SESSION TRANSACTION ISOLATION LEVEL REPEATABLE READ")
            .unwrap();
        b.query_drop("BEGIN").unwrap();
        assert_eq!(
            code(b.query_drop(
                "UPDATE jobs SET status = 1, owner = 'b' WHERE status = 0 ORDER BY id LIMIT 10"
            )),
            1205
        );
        b.query_drop("ROLLBACK").unwrap();
        a.query_drop("COMMIT").unwrap();
    }
}

each_mode! {
    fn transactions_commit_roll_back_and_keep_savepoints(mode) {
        let (srv, mut c) = setup(mode);
        let mut a = srv.connect_db("q");
        a.query_drop("BEGIN").unwrap();
        a.query_drop("INSERT INTO q_v1 (id, status, run_at) VALUES (1, 0, 1)")
            .unwrap();
        a.query_drop("SAVEPOINT s1").unwrap();
        a.query_drop("INSERT INTO q_v1 (id, status, run_at) VALUES (2, 0, 2)")
            .unwrap();
        a.query_drop("UPDATE q_v1 SET status = 1 WHERE id = 1")
            .unwrap();
        let seen: u64 = c.query_first("SELECT COUNT(*) FROM q_v1").unwrap().unwrap();
        assert_eq!(seen, 0, "uncommitted rows are invisible to others");
        a.query_drop("ROLLBACK TO SAVEPOINT s1").unwrap();
        let mine: Vec<(u64, u8)> = a.query("SELECT id, status FROM q_v1").unwrap();
        assert_eq!(mine, vec![(1, 0)]);
        assert_eq!(code(a.query_drop("ROLLBACK TO s9")), 1305);
        // A failing statement undoes only itself.
        assert_eq!(
            code(a.query_drop("INSERT INTO q_v1 (id, status, run_at) VALUES (3, 0, 3), (1, 0, 1)")),
            1062
        );
        a.query_drop("COMMIT").unwrap();
        let all: Vec<u64> = c.query("SELECT id FROM q_v1 ORDER BY id").unwrap();
        assert_eq!(all, vec![1]);
        // A READ ONLY transaction reads but refuses writes.
        a.query_drop("START TRANSACTION READ ONLY").unwrap();
        let n: u64 = a.query_first("SELECT COUNT(*) FROM q_v1").unwrap().unwrap();
        assert_eq!(n, 1);
        assert_eq!(
            code(a.query_drop("UPDATE q_v1 SET status = 1 WHERE id = 1")),
            1792
        );
        a.query_drop("COMMIT").unwrap();
        // A dropped connection rolls back and releases its locks.
        let mut d = srv.connect_db("q");
        d.query_drop("BEGIN").unwrap();
        d.query_drop("UPDATE q_v1 SET status = 2 WHERE id = 1")
            .unwrap();
        drop(d);
        let mut ok = false;
        for _ in 0..100 {
            let n: u64 = c
                .query_first("SELECT COUNT(*) FROM performance_schema.data_locks")
                .unwrap()
                .unwrap();
            if n == 0 {
                ok = true;
                break;
            }
            thread::sleep(Duration::from_millis(20));
        }
        assert!(ok, "the closed connection's locks are released");
        let status: u8 = c
            .query_first("SELECT status FROM q_v1 WHERE id = 1")
            .unwrap()
            .unwrap();
        assert_eq!(status, 0);
    }
}

/// (INDEX_NAME, LOCK_MODE, LOCK_STATUS) of one transaction's record locks, sorted.
fn record_locks_of(c: &mut Conn, conn_id: u32) -> Vec<(String, String, String)> {
    let mut v: Vec<(String, String, String)> = c
        .query(format!(
            "SELECT l.INDEX_NAME, l.LOCK_MODE, l.LOCK_STATUS FROM performance_schema.data_locks l \
             JOIN performance_schema.threads t ON t.THREAD_ID = l.THREAD_ID \
             WHERE t.PROCESSLIST_ID = {conn_id} AND l.LOCK_TYPE = 'RECORD'"
        ))
        .unwrap();
    v.sort();
    v
}

each_mode! {
    /// An INSERT that meets another transaction's uncommitted entry in a UNIQUE secondary index
    /// waits for it with an S next-key lock (InnoDB's duplicate scan), and goes ahead when that
    /// transaction rolls back; a committed duplicate gets 1062 with the S lock held.
    fn a_unique_secondary_duplicate_waits_for_its_writer(mode) {
        let (srv, mut c) = setup(mode);
        c.query_drop("CREATE TABLE u (id INT PRIMARY KEY, email VARCHAR(20), UNIQUE KEY uk (email))")
            .unwrap();
        let mut a = srv.connect_db("q");
        let mut b = srv.connect_db("q");
        let b_id = b.connection_id();
        a.query_drop("BEGIN").unwrap();
        a.query_drop("INSERT INTO u VALUES (1, 'x@y')").unwrap();
        let tb = thread::spawn(move || {
            b.query_drop("BEGIN").unwrap();
            let r = b.query_drop("INSERT INTO u VALUES (2, 'x@y')");
            (r.map_err(|e| e.to_string()), b)
        });
        // B waits on the duplicate entry; A's implicit lock on it became explicit.
        let deadline = Instant::now() + Duration::from_secs(10);
        while record_locks_of(&mut c, b_id) != [("uk".into(), "S".into(), "WAITING".into())] {
            assert!(Instant::now() < deadline, "{:?}", lock_summary(&mut c));
            thread::sleep(Duration::from_millis(20));
        }
        assert!(lock_summary(&mut c).contains(&row(Some("uk"), "X,REC_NOT_GAP", 1)));
        a.query_drop("ROLLBACK").unwrap();
        let (rb, mut b) = tb.join().unwrap();
        assert!(rb.is_ok(), "{rb:?}");
        b.query_drop("COMMIT").unwrap();

        // A committed duplicate: 1062 at once, the S next-key lock on the entry kept.
        let mut d = srv.connect_db("q");
        let d_id = d.connection_id();
        d.query_drop("BEGIN").unwrap();
        assert_eq!(code(d.query_drop("INSERT INTO u VALUES (3, 'x@y')")), 1062);
        let held = record_locks_of(&mut c, d_id);
        assert!(
            held.contains(&("uk".into(), "S".into(), "GRANTED".into())),
            "{held:?}"
        );
        d.query_drop("ROLLBACK").unwrap();
        let n: u64 = c.query_first("SELECT COUNT(*) FROM u").unwrap().unwrap();
        assert_eq!(n, 1);
    }
}

each_mode! {
    /// An UPDATE that moves a row into a gap another transaction has locked (re-queueing a job
    /// under an open empty claim) waits on its insert intention there, as an INSERT does, in RR;
    /// in RC the claim holds no gap lock and the UPDATE completes at once.
    fn an_update_into_a_locked_gap_waits_like_an_insert(mode) {
        let (srv, mut c) = setup(mode);
        jobs(&mut c, "q_v1", 5, 1, 100); // running jobs only: the ready queue is empty
        let mut w = srv.connect_db("q");
        w.query_drop("BEGIN").unwrap();
        assert!(claim(&mut w, "q_v1").is_empty());
        let mut p = srv.connect_db("q");
        p.query_drop("SET SESSION innodb_lock_wait_timeout = 1")
            .unwrap();
        let p_id = p.connection_id();
        let requeue = "UPDATE q_v1 SET status = 0 WHERE id = 102";
        let producer = thread::spawn(move || {
            let r = p.query_drop(requeue);
            (code(r), p)
        });
        let want = (
            "idx_ready".to_string(),
            "X,GAP,INSERT_INTENTION".to_string(),
            "WAITING".to_string(),
        );
        let deadline = Instant::now() + Duration::from_secs(5);
        while !record_locks_of(&mut c, p_id).contains(&want) {
            assert!(
                Instant::now() < deadline,
                "{:?}",
                record_locks_of(&mut c, p_id)
            );
            thread::sleep(Duration::from_millis(20));
        }
        let (err, mut p) = producer.join().unwrap();
        assert_eq!(err, 1205);
        let status: u8 = c
            .query_first("SELECT status FROM q_v1 WHERE id = 102")
            .unwrap()
            .unwrap();
        assert_eq!(status, 1, "the timed-out UPDATE was rolled back");
        w.query_drop("ROLLBACK").unwrap();
        p.query_drop("ROLLBACK").unwrap();

        w.query_drop("SET SESSION TRANSACTION ISOLATION LEVEL READ COMMITTED")
            .unwrap();
        w.query_drop("BEGIN").unwrap();
        assert!(claim(&mut w, "q_v1").is_empty());
        let t = Instant::now();
        p.query_drop(requeue).unwrap();
        assert!(
            t.elapsed() < Duration::from_millis(500),
            "{:?}",
            t.elapsed()
        );
        w.query_drop("COMMIT").unwrap();
    }
}
