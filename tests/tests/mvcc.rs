//! Multi-version reads through the real binary: a REPEATABLE READ transaction keeps seeing its
//! snapshot (through the clustered index and through a secondary index whose key another
//! transaction changed, for updated, deleted and inserted rows) while locking reads see the
//! latest version; READ COMMITTED sees each committed change at its next statement; a
//! transaction sees its own writes; purge removes what no snapshot needs any more. Each test
//! runs in every connection-handling mode.

use std::time::{Duration, Instant};

use mysql::prelude::*;
use mysql::Conn;
use tpbed_tests::{each_mode, mysql_error, Mode, TestServer};

fn setup(mode: Mode) -> (TestServer, Conn) {
    let srv = mode.start(&[]);
    let mut c = srv.connect();
    c.query_drop("CREATE DATABASE m").unwrap();
    c.query_drop("USE m").unwrap();
    c.query_drop(
        "CREATE TABLE t (id INT PRIMARY KEY, k INT NOT NULL, v VARCHAR(20), KEY k_idx (k))",
    )
    .unwrap();
    c.query_drop("INSERT INTO t VALUES (1, 5, 'one'), (2, 7, 'two'), (3, 9, 'three')")
        .unwrap();
    (srv, c)
}

each_mode! {
    fn repeatable_read_keeps_its_snapshot_through_every_index(mode) {
        let (srv, mut w) = setup(mode);
        let mut r = srv.connect_db("m");
        r.query_drop("START TRANSACTION WITH CONSISTENT SNAPSHOT")
            .unwrap();
        w.query_drop("UPDATE t SET k = 6, v = 'uno' WHERE id = 1")
            .unwrap();
        w.query_drop("DELETE FROM t WHERE id = 2").unwrap();
        w.query_drop("INSERT INTO t VALUES (4, 5, 'four')").unwrap();
        // The snapshot, by primary key, by full scan and through the secondary index.
        let by_pk: Vec<(i32, i32, String)> = r.query("SELECT id, k, v FROM t ORDER BY id").unwrap();
        assert_eq!(
            by_pk,
            vec![
                (1, 5, "one".into()),
                (2, 7, "two".into()),
                (3, 9, "three".into())
            ]
        );
        let via_k5: Vec<i32> = r.query("SELECT id FROM t WHERE k = 5").unwrap();
        assert_eq!(
            via_k5,
            vec![1],
            "the old k=5 entry still leads to row 1 for the snapshot"
        );
        let via_k6: Vec<i32> = r.query("SELECT id FROM t WHERE k = 6").unwrap();
        assert!(
            via_k6.is_empty(),
            "the new k=6 entry is not in the snapshot"
        );
        let count: u64 = r
            .query_first("SELECT COUNT(*) FROM t WHERE k >= 0")
            .unwrap()
            .unwrap();
        assert_eq!(count, 3);
        let point: Option<String> = r.query_first("SELECT v FROM t WHERE id = 2").unwrap();
        assert_eq!(point.as_deref(), Some("two"));
        // A locking read sees the latest committed versions.
        let latest: Vec<(i32, i32)> = r
            .query("SELECT id, k FROM t WHERE k BETWEEN 0 AND 100 ORDER BY id FOR SHARE")
            .unwrap();
        assert_eq!(latest, vec![(1, 6), (3, 9), (4, 5)]);
        r.query_drop("COMMIT").unwrap();
        let after: Vec<i32> = r.query("SELECT id FROM t ORDER BY id").unwrap();
        assert_eq!(after, vec![1, 3, 4]);
    }
}

each_mode! {
    fn read_committed_sees_each_commit_and_a_transaction_its_own_writes(mode) {
        let (srv, mut w) = setup(mode);
        let mut r = srv.connect_db("m");
        r.query_drop("SET SESSION TRANSACTION ISOLATION LEVEL READ COMMITTED")
            .unwrap();
        r.query_drop("BEGIN").unwrap();
        let k: i32 = r
            .query_first("SELECT k FROM t WHERE id = 1")
            .unwrap()
            .unwrap();
        assert_eq!(k, 5);
        w.query_drop("BEGIN").unwrap();
        w.query_drop("UPDATE t SET k = 50 WHERE id = 1").unwrap();
        let own: i32 = w
            .query_first("SELECT k FROM t WHERE id = 1")
            .unwrap()
            .unwrap();
        assert_eq!(own, 50, "a transaction sees its own change");
        let k: i32 = r
            .query_first("SELECT k FROM t WHERE id = 1")
            .unwrap()
            .unwrap();
        assert_eq!(k, 5, "uncommitted changes are invisible");
        w.query_drop("COMMIT").unwrap();
        let k: i32 = r
            .query_first("SELECT k FROM t WHERE id = 1")
            .unwrap()
            .unwrap();
        assert_eq!(k, 50, "RC sees the commit at its next statement");
        r.query_drop("COMMIT").unwrap();
        // READ UNCOMMITTED reads the latest version, committed or not.
        w.query_drop("BEGIN").unwrap();
        w.query_drop("UPDATE t SET k = 51 WHERE id = 1").unwrap();
        r.query_drop("SET SESSION TRANSACTION ISOLATION LEVEL READ UNCOMMITTED")
            .unwrap();
        let k: i32 = r
            .query_first("SELECT k FROM t WHERE id = 1")
            .unwrap()
            .unwrap();
        assert_eq!(k, 51);
        w.query_drop("ROLLBACK").unwrap();
        let k: i32 = r
            .query_first("SELECT k FROM t WHERE id = 1")
            .unwrap()
            .unwrap();
        assert_eq!(k, 50, "ROLLBACK restored the previous version");
    }
}

each_mode! {
    fn purge_removes_history_once_no_snapshot_needs_it(mode) {
        let (srv, mut w) = setup(mode);
        let history = |c: &mut Conn| -> u64 {
            c.query_first("SELECT COUNT FROM information_schema.INNODB_METRICS WHERE NAME = 'trx_rseg_history_len'")
                .unwrap()
                .unwrap()
        };
        let mut r = srv.connect_db("m");
        r.query_drop("BEGIN").unwrap();
        let _: Vec<i32> = r.query("SELECT id FROM t").unwrap();
        for i in 0..50 {
            w.query_drop(format!("UPDATE t SET v = 'v{i}' WHERE id = 3"))
                .unwrap();
        }
        std::thread::sleep(Duration::from_millis(200));
        assert!(history(&mut w) >= 50, "an open snapshot holds purge back");
        let v: String = r
            .query_first("SELECT v FROM t WHERE id = 3")
            .unwrap()
            .unwrap();
        assert_eq!(v, "three", "the snapshot still reads the oldest version");
        r.query_drop("COMMIT").unwrap();
        let t = Instant::now();
        while history(&mut w) > 0 && t.elapsed() < Duration::from_secs(20) {
            std::thread::sleep(Duration::from_millis(20));
        }
        assert_eq!(
            history(&mut w),
            0,
            "purge caught up once the snapshot closed"
        );
    }
}

each_mode! {
    /// CREATE INDEX rebuilds the table from its latest versions, so a REPEATABLE READ snapshot
    /// older than it cannot read the table any more: 1412, as in MySQL; a new snapshot reads it,
    /// and READ COMMITTED (a view per statement) is not affected. (Neither transaction has
    /// used the table before the rebuild: one that had would hold its metadata lock, and the
    /// rebuild would wait for it.)
    fn a_snapshot_older_than_a_rebuild_gets_1412(mode) {
        let (srv, mut w) = setup(mode);
        let mut r = srv.connect_db("m");
        let mut rc = srv.connect_db("m");
        rc.query_drop("SET SESSION transaction_isolation = 'READ-COMMITTED'")
            .unwrap();
        r.query_drop("START TRANSACTION WITH CONSISTENT SNAPSHOT")
            .unwrap();
        rc.query_drop("BEGIN").unwrap();
        w.query_drop("CREATE INDEX v_idx ON t (v)").unwrap();
        let e = mysql_error(r.query_drop("SELECT v FROM t WHERE id = 1"));
        assert_eq!((e.code, e.state.as_str()), (1412, "HY000"), "{}", e.message);
        assert!(
            e.message.contains("Table definition has changed"),
            "{}",
            e.message
        );
        let n: u64 = rc.query_first("SELECT COUNT(*) FROM t").unwrap().unwrap();
        assert_eq!(n, 3);
        r.query_drop("COMMIT").unwrap();
        let v: String = r
            .query_first("SELECT v FROM t WHERE id = 1")
            .unwrap()
            .unwrap();
        assert_eq!(v, "one");
        rc.query_drop("COMMIT").unwrap();
    }
}
