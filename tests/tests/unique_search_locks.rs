//! Unique searches through the real binary: a locking read, UPDATE or DELETE whose WHERE is an
//! equality on every column of a PRIMARY or UNIQUE key (`=` or an `IN` list) locks the
//! records it finds record-only and nothing past them, so another session's INSERT into the
//! neighbouring gap goes ahead at once, in REPEATABLE READ and READ COMMITTED; INSERT ... ON
//! DUPLICATE KEY UPDATE and REPLACE lock the row they change the same way; a unique search
//! that finds nothing still locks the gap the key falls in under REPEATABLE READ, and one that
//! meets a deleted (not yet purged) row locks it record-only. A clustered range whose bounds
//! are whole keys locks no gap outside them. Locks are read back from
//! `performance_schema.data_locks`. Each test runs in every connection-handling mode.

use std::thread;
use std::time::{Duration, Instant};

use mysql::prelude::*;
use mysql::Conn;
use tpbed_tests::{code, each_mode, Mode, TestServer};

/// gp(id INT PRIMARY KEY, v INT) with ids 10, 20, 30 and gu(id INT PRIMARY KEY, u INT,
/// v INT, UNIQUE KEY uk(u)) with (1, 10), (2, 20), (3, 30), in database `g`.
fn setup(mode: Mode) -> (TestServer, Conn) {
    let srv = mode.start(&[]);
    let mut c = srv.connect();
    for q in [
        "CREATE DATABASE g",
        "USE g",
        "CREATE TABLE gp (id INT PRIMARY KEY, v INT)",
        "INSERT INTO gp VALUES (10, 0), (20, 0), (30, 0)",
        "CREATE TABLE gu (id INT PRIMARY KEY, u INT, v INT, UNIQUE KEY uk (u))",
        "INSERT INTO gu VALUES (1, 10, 0), (2, 20, 0), (3, 30, 0)",
    ] {
        c.query_drop(q).unwrap();
    }
    (srv, c)
}

/// (INDEX_NAME, LOCK_MODE, LOCK_DATA) of one connection's granted record locks, sorted.
fn record_locks_of(c: &mut Conn, conn_id: u32) -> Vec<(String, String, String)> {
    let mut v: Vec<(String, String, String)> = c
        .query(format!(
            "SELECT l.INDEX_NAME, l.LOCK_MODE, l.LOCK_DATA FROM performance_schema.data_locks l \
             JOIN performance_schema.threads t ON t.THREAD_ID = l.THREAD_ID \
             WHERE t.PROCESSLIST_ID = {conn_id} AND l.LOCK_TYPE = 'RECORD' \
             AND l.LOCK_STATUS = 'GRANTED'"
        ))
        .unwrap();
    v.sort();
    v
}

/// An expected record lock: (INDEX_NAME, LOCK_MODE, LOCK_DATA).
type Expected = (&'static str, &'static str, &'static str);

fn locks(list: &[Expected]) -> Vec<(String, String, String)> {
    let mut v: Vec<(String, String, String)> = list
        .iter()
        .map(|&(i, m, d)| (i.to_string(), m.to_string(), d.to_string()))
        .collect();
    v.sort();
    v
}

/// A second session that inserts into the gaps; its lock waits time out after 1 s.
fn inserter(srv: &TestServer) -> Conn {
    let mut b = srv.connect_db("g");
    b.query_drop("SET SESSION innodb_lock_wait_timeout = 1")
        .unwrap();
    b
}

/// Runs `insert` in its own transaction (rolled back) and returns the error code, 0 if it
/// succeeded; panics if a success took as long as a lock wait.
fn try_insert(b: &mut Conn, insert: &str) -> u16 {
    b.query_drop("BEGIN").unwrap();
    let t = Instant::now();
    let r = b.query_drop(insert);
    let took = t.elapsed();
    b.query_drop("ROLLBACK").unwrap();
    match r {
        Ok(()) => {
            assert!(
                took < Duration::from_millis(900),
                "{insert} waited {took:?}"
            );
            0
        }
        Err(e) => code::<()>(Err(e)),
    }
}

const LEVELS: [&str; 2] = ["REPEATABLE READ", "READ COMMITTED"];

each_mode! {
    /// Every unique-search statement shape on gp's PRIMARY KEY locks only the rows it names,
    /// X,REC_NOT_GAP (S for FOR SHARE), and B's INSERT of 15 goes ahead at once.
    fn a_unique_primary_search_locks_only_its_records(mode) {
        let (srv, mut c) = setup(mode);
        let mut a = srv.connect_db("g");
        let a_id = a.connection_id();
        let mut b = inserter(&srv);
        let cases: [(&str, &[Expected]); 6] = [
            ("UPDATE gp SET v = v + 1 WHERE id = 10", &[("PRIMARY", "X,REC_NOT_GAP", "10")]),
            ("SELECT * FROM gp WHERE id = 10 FOR UPDATE", &[("PRIMARY", "X,REC_NOT_GAP", "10")]),
            ("SELECT * FROM gp WHERE id = 10 FOR SHARE", &[("PRIMARY", "S,REC_NOT_GAP", "10")]),
            (
                "SELECT * FROM gp WHERE id IN (10, 20) FOR UPDATE",
                &[("PRIMARY", "X,REC_NOT_GAP", "10"), ("PRIMARY", "X,REC_NOT_GAP", "20")],
            ),
            (
                "UPDATE gp SET v = v + 1 WHERE id IN (20, 10)",
                &[("PRIMARY", "X,REC_NOT_GAP", "10"), ("PRIMARY", "X,REC_NOT_GAP", "20")],
            ),
            ("DELETE FROM gp WHERE id = 10", &[("PRIMARY", "X,REC_NOT_GAP", "10")]),
        ];
        for level in LEVELS {
            a.query_drop(format!("SET SESSION TRANSACTION ISOLATION LEVEL {level}"))
                .unwrap();
            for (stmt, want) in cases {
                a.query_drop("BEGIN").unwrap();
                a.query_drop(stmt).unwrap();
                assert_eq!(record_locks_of(&mut c, a_id), locks(want), "{level}: {stmt}");
                assert_eq!(
                    try_insert(&mut b, "INSERT INTO gp VALUES (15, 0)"),
                    0,
                    "{level}: {stmt}"
                );
                assert_eq!(try_insert(&mut b, "INSERT INTO gp VALUES (25, 0)"), 0);
                a.query_drop("ROLLBACK").unwrap();
            }
        }
    }
}

each_mode! {
    /// A unique search on gu's UNIQUE key locks its entry and the row record-only, and no
    /// entry past it: B's INSERT of u = 15 goes ahead at once.
    fn a_unique_secondary_search_locks_only_its_entry_and_row(mode) {
        let (srv, mut c) = setup(mode);
        let mut a = srv.connect_db("g");
        let a_id = a.connection_id();
        let mut b = inserter(&srv);
        let want = locks(&[("PRIMARY", "X,REC_NOT_GAP", "1"), ("uk", "X,REC_NOT_GAP", "10, 1")]);
        for level in LEVELS {
            a.query_drop(format!("SET SESSION TRANSACTION ISOLATION LEVEL {level}"))
                .unwrap();
            for stmt in [
                "SELECT * FROM gu WHERE u = 10 FOR UPDATE",
                "UPDATE gu SET v = v + 1 WHERE u = 10",
                "DELETE FROM gu WHERE u = 10",
            ] {
                a.query_drop("BEGIN").unwrap();
                a.query_drop(stmt).unwrap();
                assert_eq!(record_locks_of(&mut c, a_id), want, "{level}: {stmt}");
                assert_eq!(
                    try_insert(&mut b, "INSERT INTO gu VALUES (4, 15, 0)"),
                    0,
                    "{level}: {stmt}"
                );
                a.query_drop("ROLLBACK").unwrap();
            }
        }
    }
}

each_mode! {
    /// INSERT ... ON DUPLICATE KEY UPDATE and REPLACE on an existing id lock that row
    /// record-only, X, and leave the gaps next to it open; a duplicate in a UNIQUE key keeps
    /// the duplicate check's next-key lock on its entry.
    fn upserts_lock_the_row_they_change_record_only(mode) {
        let (srv, mut c) = setup(mode);
        let mut a = srv.connect_db("g");
        let a_id = a.connection_id();
        let mut b = inserter(&srv);
        for stmt in [
            "INSERT INTO gp VALUES (10, 1) ON DUPLICATE KEY UPDATE v = v + 1",
            "REPLACE INTO gp VALUES (10, 1)",
        ] {
            a.query_drop("BEGIN").unwrap();
            a.query_drop(stmt).unwrap();
            assert_eq!(
                record_locks_of(&mut c, a_id),
                locks(&[("PRIMARY", "X,REC_NOT_GAP", "10")]),
                "{stmt}"
            );
            assert_eq!(try_insert(&mut b, "INSERT INTO gp VALUES (15, 0)"), 0, "{stmt}");
            assert_eq!(try_insert(&mut b, "INSERT INTO gp VALUES (5, 0)"), 0, "{stmt}");
            a.query_drop("ROLLBACK").unwrap();
        }

        // A duplicate in the UNIQUE key: the duplicate check's X next-key lock on the entry
        // and the row's clustered record; u = 15 goes into the open gap after the entry.
        a.query_drop("BEGIN").unwrap();
        a.query_drop("INSERT INTO gu VALUES (4, 10, 0) ON DUPLICATE KEY UPDATE v = v + 1")
            .unwrap();
        assert_eq!(
            record_locks_of(&mut c, a_id),
            locks(&[("PRIMARY", "X,REC_NOT_GAP", "1"), ("uk", "X", "10, 1")])
        );
        assert_eq!(try_insert(&mut b, "INSERT INTO gu VALUES (5, 15, 0)"), 0);
        a.query_drop("ROLLBACK").unwrap();
    }
}

each_mode! {
    /// A unique search that finds nothing (id = 15) locks the gap before 20 under REPEATABLE
    /// READ, so B's INSERT of 15 waits (here until its 1 s timeout, 1205) on an insert
    /// intention; under READ COMMITTED it locks nothing and the INSERT goes ahead.
    fn a_unique_miss_still_locks_its_gap_under_repeatable_read(mode) {
        let (srv, mut c) = setup(mode);
        let mut a = srv.connect_db("g");
        let a_id = a.connection_id();
        let mut b = inserter(&srv);
        let b_id = b.connection_id();
        a.query_drop("BEGIN").unwrap();
        let found: Vec<(i32, i32)> = a.query("SELECT * FROM gp WHERE id = 15 FOR UPDATE").unwrap();
        assert!(found.is_empty());
        assert_eq!(record_locks_of(&mut c, a_id), locks(&[("PRIMARY", "X,GAP", "20")]));
        let waiter = thread::spawn(move || {
            let r = try_insert(&mut b, "INSERT INTO gp VALUES (15, 0)");
            (r, b)
        });
        let want = (
            "PRIMARY".to_string(),
            "X,GAP,INSERT_INTENTION".to_string(),
            "WAITING".to_string(),
        );
        let deadline = Instant::now() + Duration::from_secs(5);
        loop {
            let waiting: Vec<(String, String, String)> = c
                .query(format!(
                    "SELECT l.INDEX_NAME, l.LOCK_MODE, l.LOCK_STATUS \
                     FROM performance_schema.data_locks l \
                     JOIN performance_schema.threads t ON t.THREAD_ID = l.THREAD_ID \
                     WHERE t.PROCESSLIST_ID = {b_id} AND l.LOCK_TYPE = 'RECORD'"
                ))
                .unwrap();
            if waiting.contains(&want) {
                break;
            }
            assert!(Instant::now() < deadline, "B never waited: {waiting:?}");
            thread::sleep(Duration::from_millis(20));
        }
        let (err, mut b) = waiter.join().unwrap();
        assert_eq!(err, 1205);
        // Past the last id the lock is on the supremum.
        let found: Vec<(i32, i32)> = a.query("SELECT * FROM gp WHERE id = 40 FOR UPDATE").unwrap();
        assert!(found.is_empty());
        assert!(record_locks_of(&mut c, a_id)
            .contains(&("PRIMARY".into(), "X".into(), "supremum pseudo-record".into())));
        assert_eq!(try_insert(&mut b, "INSERT INTO gp VALUES (45, 0)"), 1205);
        a.query_drop("ROLLBACK").unwrap();

        a.query_drop("SET SESSION TRANSACTION ISOLATION LEVEL READ COMMITTED")
            .unwrap();
        a.query_drop("BEGIN").unwrap();
        let found: Vec<(i32, i32)> = a.query("SELECT * FROM gp WHERE id = 15 FOR UPDATE").unwrap();
        assert!(found.is_empty());
        assert!(record_locks_of(&mut c, a_id).is_empty());
        assert_eq!(try_insert(&mut b, "INSERT INTO gp VALUES (15, 0)"), 0);
        a.query_drop("ROLLBACK").unwrap();
    }
}

each_mode! {
    /// While an old snapshot keeps purge from removing a deleted row, a unique search for it
    /// meets the delete-marked record: it locks it record-only and finds nothing, and the
    /// gaps on both sides stay open.
    fn a_unique_search_for_a_deleted_row_locks_it_record_only(mode) {
        let (srv, mut c) = setup(mode);
        let mut snapshot = srv.connect_db("g");
        snapshot
            .query_drop("START TRANSACTION WITH CONSISTENT SNAPSHOT")
            .unwrap();
        c.query_drop("DELETE FROM gp WHERE id = 20").unwrap();
        let mut a = srv.connect_db("g");
        let a_id = a.connection_id();
        let mut b = inserter(&srv);
        a.query_drop("BEGIN").unwrap();
        let found: Vec<(i32, i32)> = a.query("SELECT * FROM gp WHERE id = 20 FOR UPDATE").unwrap();
        assert!(found.is_empty());
        assert_eq!(
            record_locks_of(&mut c, a_id),
            locks(&[("PRIMARY", "X,REC_NOT_GAP", "20")])
        );
        assert_eq!(try_insert(&mut b, "INSERT INTO gp VALUES (15, 0)"), 0);
        assert_eq!(try_insert(&mut b, "INSERT INTO gp VALUES (25, 0)"), 0);
        a.query_drop("ROLLBACK").unwrap();
        snapshot.query_drop("COMMIT").unwrap();
    }
}

each_mode! {
    /// Under REPEATABLE READ a clustered range locks the row equal to a `>=` bound
    /// record-only and nothing past a row equal to a `<=` bound, as InnoDB since 8.0.18.
    fn a_clustered_range_locks_no_gap_outside_its_whole_key_bounds(mode) {
        let (srv, mut c) = setup(mode);
        let mut a = srv.connect_db("g");
        let a_id = a.connection_id();
        let mut b = inserter(&srv);
        a.query_drop("BEGIN").unwrap();
        let ids: Vec<i32> = a
            .query("SELECT id FROM gp WHERE id BETWEEN 10 AND 20 FOR UPDATE")
            .unwrap();
        assert_eq!(ids, vec![10, 20]);
        assert_eq!(
            record_locks_of(&mut c, a_id),
            locks(&[("PRIMARY", "X", "20"), ("PRIMARY", "X,REC_NOT_GAP", "10")])
        );
        assert_eq!(try_insert(&mut b, "INSERT INTO gp VALUES (5, 0)"), 0);
        assert_eq!(try_insert(&mut b, "INSERT INTO gp VALUES (25, 0)"), 0);
        assert_eq!(try_insert(&mut b, "INSERT INTO gp VALUES (15, 0)"), 1205);
        a.query_drop("ROLLBACK").unwrap();

        a.query_drop("BEGIN").unwrap();
        let ids: Vec<i32> = a.query("SELECT id FROM gp WHERE id >= 20 FOR UPDATE").unwrap();
        assert_eq!(ids, vec![20, 30]);
        assert_eq!(
            record_locks_of(&mut c, a_id),
            locks(&[
                ("PRIMARY", "X", "30"),
                ("PRIMARY", "X", "supremum pseudo-record"),
                ("PRIMARY", "X,REC_NOT_GAP", "20"),
            ])
        );
        assert_eq!(try_insert(&mut b, "INSERT INTO gp VALUES (15, 0)"), 0);
        a.query_drop("ROLLBACK").unwrap();
    }
}
