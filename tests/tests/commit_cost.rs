//! Commit cost: the redo log's variables and counters as MySQL names them, `--datadir`, group
//! commit seen from clients (concurrent committers share fsyncs; a job queue claiming 50 jobs
//! per transaction needs far fewer fsyncs per job than one claiming 1), and the binary log,
//! which keeps a committing writer's row locks through its syncs.

use std::path::PathBuf;
use std::sync::{Arc, Barrier};

use mysql::prelude::*;
use mysql::Conn;
use tpbed_tests::{code, global_status as status, TestServer};

#[test]
fn variables_and_counters_exist_with_mysql_defaults() {
    let srv = TestServer::start(&[]);
    let mut c = srv.connect();
    let (trx_commit, timeout, home, fsync_us): (u64, u64, String, u64) = c
        .query_first(
            "SELECT @@global.innodb_flush_log_at_trx_commit, @@innodb_flush_log_at_timeout, \
             @@innodb_log_group_home_dir, @@tpbed_log_fsync_us",
        )
        .unwrap()
        .unwrap();
    assert_eq!(
        (trx_commit, timeout, home.as_str(), fsync_us),
        (1, 1, "./", 0)
    );
    // The default datadir is a real, fresh directory holding the redo file.
    let datadir: String = c.query_first("SELECT @@datadir").unwrap().unwrap();
    assert!(datadir.ends_with('/'), "{datadir}");
    let redo = PathBuf::from(&datadir).join("#innodb_redo/#ib_redo0");
    assert!(redo.is_file(), "{} missing", redo.display());
    for name in [
        "Innodb_os_log_fsyncs",
        "Innodb_log_writes",
        "Innodb_os_log_written",
        "Innodb_log_write_requests",
        "Innodb_os_log_pending_fsyncs",
    ] {
        let _ = status(&mut c, name);
    }
    let all: Vec<(String, String)> = c.query("SHOW GLOBAL STATUS LIKE 'Innodb_os_log%'").unwrap();
    assert!(all.len() >= 4, "{all:?}");

    // Global and dynamic; the home dir is read-only; out-of-range values are clamped.
    c.query_drop(
        "SET GLOBAL innodb_flush_log_at_trx_commit = 2, GLOBAL innodb_flush_log_at_timeout = 5, \
         GLOBAL tpbed_log_fsync_us = 2000",
    )
    .unwrap();
    let got: (u64, u64, u64) = c
        .query_first(
            "SELECT @@global.innodb_flush_log_at_trx_commit, @@global.innodb_flush_log_at_timeout, \
             @@global.tpbed_log_fsync_us",
        )
        .unwrap()
        .unwrap();
    assert_eq!(got, (2, 5, 2000));
    assert_eq!(
        code(c.query_drop("SET SESSION innodb_flush_log_at_trx_commit = 0")),
        1229
    );
    assert_eq!(
        code(c.query_drop("SET GLOBAL innodb_log_group_home_dir = '/tmp'")),
        1238
    );
    assert_eq!(code(c.query_drop("SET GLOBAL datadir = '/tmp'")), 1238);
    c.query_drop("SET GLOBAL innodb_flush_log_at_timeout = 0")
        .unwrap();
    let t: u64 = c
        .query_first("SELECT @@global.innodb_flush_log_at_timeout")
        .unwrap()
        .unwrap();
    assert_eq!(t, 1);
    c.query_drop("SET GLOBAL innodb_flush_log_at_trx_commit = DEFAULT")
        .unwrap();
    let m: u64 = c
        .query_first("SELECT @@global.innodb_flush_log_at_trx_commit")
        .unwrap()
        .unwrap();
    assert_eq!(m, 1);
}

#[test]
fn datadir_option_places_the_redo_file() {
    let dir = std::env::temp_dir().join(format!("tpbed-commit-cost-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let opt = format!("--datadir={}", dir.display());
    let srv = TestServer::start(&[&opt, "--innodb-flush-log-at-trx-commit=0"]);
    let shown = srv.scalar("SELECT @@datadir");
    let real = dir.canonicalize().unwrap();
    assert_eq!(shown, format!("{}/", real.display()));
    assert!(real.join("#innodb_redo/#ib_redo0").is_file());
    assert_eq!(
        srv.scalar("SELECT @@global.innodb_flush_log_at_trx_commit"),
        "0"
    );
    drop(srv);
    let _ = std::fs::remove_dir_all(&dir);
}

/// With the binary log on (the default) a committing writer syncs the redo and the binary log
/// before it lets go of its row locks, so a reader waiting with FOR UPDATE waits out both
/// syncs; with `--skip-log-bin` the locks go first and the redo is synced after, so the reader
/// gets the row while the writer's COMMIT still waits for its one sync.
#[test]
fn a_committing_writer_holds_its_row_locks_through_the_binary_log_sync() {
    const SYNC_MS: u64 = 1000;
    for (args, log_bin) in [(&[][..], true), (&["--skip-log-bin"][..], false)] {
        let srv = Arc::new(TestServer::start(args));
        assert_eq!(
            srv.scalar("SELECT @@log_bin"),
            if log_bin { "1" } else { "0" }
        );
        assert_eq!(srv.scalar("SELECT @@sync_binlog"), "1");
        let datadir = srv.scalar("SELECT @@datadir");
        assert_eq!(
            PathBuf::from(&datadir).join("binlog.000001").is_file(),
            log_bin
        );
        let mut a = srv.connect();
        a.query_drop("CREATE DATABASE d").unwrap();
        a.query_drop("CREATE TABLE d.t (id INT PRIMARY KEY, v INT)")
            .unwrap();
        a.query_drop("INSERT INTO d.t VALUES (1, 0)").unwrap();
        a.query_drop(format!(
            "SET GLOBAL tpbed_log_fsync_us = {}",
            SYNC_MS * 1000
        ))
        .unwrap();
        a.query_drop("BEGIN").unwrap();
        a.query_drop("UPDATE d.t SET v = 1 WHERE id = 1").unwrap();
        let s2 = Arc::clone(&srv);
        let reader = std::thread::spawn(move || {
            let mut b = s2.connect();
            b.query_drop("BEGIN").unwrap();
            let v: Option<i64> = b
                .query_first("SELECT v FROM d.t WHERE id = 1 FOR UPDATE")
                .unwrap();
            (std::time::Instant::now(), v)
        });
        let mut watch = srv.connect();
        while watch
            .query_first::<u64, _>("SELECT COUNT(*) FROM performance_schema.data_lock_waits")
            .unwrap()
            != Some(1)
        {
            std::thread::sleep(std::time::Duration::from_millis(5));
        }
        let t0 = std::time::Instant::now();
        a.query_drop("COMMIT").unwrap();
        let committed = t0.elapsed();
        let (granted, v) = reader.join().unwrap();
        let waited = granted.duration_since(t0).as_millis() as u64;
        assert_eq!(v, Some(1), "the reader sees the committed row");
        if log_bin {
            assert!(
                committed.as_millis() as u64 >= 2 * SYNC_MS - 50,
                "{committed:?}"
            );
            assert!(waited >= 2 * SYNC_MS - 50, "reader waited {waited} ms");
        } else {
            assert!(
                committed.as_millis() as u64 >= SYNC_MS - 50,
                "{committed:?}"
            );
            assert!(waited < SYNC_MS, "reader waited {waited} ms");
        }
    }
}

/// `SHOW MASTER STATUS` and `SHOW BINARY LOGS` give the binary log's file and a position that
/// moves with every commit that wrote and with nothing else; with `--skip-log-bin` the first
/// has no rows and the second is 1381, as in MySQL.
#[test]
fn show_master_status_and_binary_logs_follow_the_commits_that_wrote() {
    let srv = TestServer::start(&[]);
    let mut c = srv.connect();
    let status = |c: &mut Conn| -> (String, u64) {
        let rows: Vec<mysql::Row> = c.query("SHOW MASTER STATUS").unwrap();
        assert_eq!(rows.len(), 1);
        let names: Vec<String> = rows[0]
            .columns_ref()
            .iter()
            .map(|c| c.name_str().to_string())
            .collect();
        assert_eq!(
            names,
            [
                "File",
                "Position",
                "Binlog_Do_DB",
                "Binlog_Ignore_DB",
                "Executed_Gtid_Set"
            ]
        );
        (rows[0].get(0).unwrap(), rows[0].get(1).unwrap())
    };
    let (file, start) = status(&mut c);
    assert_eq!(file, "binlog.000001");
    assert!(start >= 4, "{start}");
    c.query_drop("CREATE DATABASE d").unwrap();
    c.query_drop("CREATE TABLE d.t (id INT PRIMARY KEY)")
        .unwrap();
    let (_, before) = status(&mut c);
    c.query_drop("INSERT INTO d.t VALUES (1), (2)").unwrap();
    let (_, after_insert) = status(&mut c);
    assert!(after_insert > before, "{before} -> {after_insert}");
    c.query_drop("SELECT * FROM d.t").unwrap();
    c.query_drop("BEGIN").unwrap();
    c.query_drop("SELECT * FROM d.t FOR UPDATE").unwrap();
    c.query_drop("COMMIT").unwrap();
    assert_eq!(status(&mut c).1, after_insert, "reads append nothing");
    let logs: Vec<(String, u64, String)> = c.query("SHOW BINARY LOGS").unwrap();
    assert_eq!(logs, [(file.clone(), after_insert, "No".to_string())]);
    let master: Vec<(String, u64, String)> = c.query("SHOW MASTER LOGS").unwrap();
    assert_eq!(master, logs);
    assert_eq!(status(&mut c), (file, after_insert));
    // MySQL's privilege: SUPER or REPLICATION CLIENT.
    c.query_drop("CREATE USER 'mon'@'%' IDENTIFIED BY 'p'")
        .unwrap();
    let mut mon = mysql::Conn::new(srv.opts("mon", "p")).unwrap();
    let e = tpbed_tests::mysql_error(mon.query_drop("SHOW MASTER STATUS"));
    assert_eq!((e.code, e.state.as_str()), (1227, "42000"), "{e:?}");
    assert_eq!(code(mon.query_drop("SHOW BINARY LOGS")), 1227);
    c.query_drop("GRANT REPLICATION CLIENT ON *.* TO 'mon'@'%'")
        .unwrap();
    let mut mon = mysql::Conn::new(srv.opts("mon", "p")).unwrap();
    assert_eq!(
        mon.query::<mysql::Row, _>("SHOW MASTER STATUS")
            .unwrap()
            .len(),
        1
    );

    let off = TestServer::start(&["--skip-log-bin"]);
    let mut c = off.connect();
    let rows: Vec<mysql::Row> = c.query("SHOW MASTER STATUS").unwrap();
    assert!(rows.is_empty());
    let rows: Vec<mysql::Row> = c.query("SHOW BINARY LOG STATUS").unwrap();
    assert!(rows.is_empty());
    let e = tpbed_tests::mysql_error(c.query_drop("SHOW BINARY LOGS"));
    assert_eq!((e.code, e.state.as_str()), (1381, "HY000"), "{e:?}");
    assert_eq!(e.message, "You are not using binary logging");
}

/// The pool's reported commit waits (`GROUP_COMMIT_WAITS`; 0 without the pool).
fn group_commit_waits(c: &mut Conn, pool: bool) -> u64 {
    if !pool {
        return 0;
    }
    let per_group: Vec<u64> = c
        .query("SELECT GROUP_COMMIT_WAITS FROM performance_schema.tp_thread_group_stats")
        .unwrap();
    per_group.iter().sum()
}

/// 16 connections doing autocommit INSERTs with a 2 ms emulated sync: the fsyncs, the commits
/// and the commit waits the pool was told about.
fn concurrent_inserts(args: &[&str]) -> (u64, u64, u64) {
    let srv = Arc::new(TestServer::start(args));
    let pool = args.contains(&"--thread-handling=pool-of-threads");
    let mut c = srv.connect();
    c.query_drop("CREATE DATABASE cc").unwrap();
    c.query_drop(
        "CREATE TABLE cc.t (id BIGINT NOT NULL AUTO_INCREMENT PRIMARY KEY, conn INT, n INT)",
    )
    .unwrap();
    c.query_drop("SET GLOBAL innodb_flush_log_at_trx_commit = 1, GLOBAL tpbed_log_fsync_us = 2000")
        .unwrap();
    const CONNS: usize = 16;
    const PER_CONN: usize = 25;
    let fsyncs_before = status(&mut c, "Innodb_os_log_fsyncs");
    let waits_before = group_commit_waits(&mut c, pool);
    let start = Arc::new(Barrier::new(CONNS));
    let workers: Vec<_> = (0..CONNS)
        .map(|i| {
            let srv = srv.clone();
            let start = start.clone();
            std::thread::spawn(move || {
                let mut w = srv.connect();
                start.wait();
                for n in 0..PER_CONN {
                    w.exec_drop("INSERT INTO cc.t (conn, n) VALUES (?, ?)", (i, n))
                        .unwrap();
                }
            })
        })
        .collect();
    for w in workers {
        w.join().unwrap();
    }
    let fsyncs = status(&mut c, "Innodb_os_log_fsyncs") - fsyncs_before;
    let waits = group_commit_waits(&mut c, pool) - waits_before;
    let commits = (CONNS * PER_CONN) as u64;
    let rows: u64 = c.query_first("SELECT COUNT(*) FROM cc.t").unwrap().unwrap();
    assert_eq!(rows, commits);
    eprintln!("{args:?}: {commits} autocommit INSERTs on {CONNS} connections: {fsyncs} fsyncs");
    (fsyncs, commits, waits)
}

#[test]
fn concurrent_committers_share_fsyncs() {
    let (fsyncs, commits, _) = concurrent_inserts(&[]);
    assert!(fsyncs > 0, "commits do not reach the redo log");
    assert!(fsyncs < commits, "{fsyncs} fsyncs for {commits} commits");
}

// With the pool, every commit that waits for the flush (leader or follower) tells the pool,
// which counts it as a group-commit wait and may run another connection of the group
// meanwhile.
#[test]
fn concurrent_committers_share_fsyncs_in_the_pool() {
    let (fsyncs, commits, waits) =
        concurrent_inserts(&["--thread-handling=pool-of-threads", "--thread-pool-size=2"]);
    assert!(fsyncs > 0, "commits do not reach the redo log");
    assert!(fsyncs < commits, "{fsyncs} fsyncs for {commits} commits");
    assert!(
        waits >= commits,
        "{waits} GROUP_COMMIT_WAITS for {commits} commits"
    );
}

fn queue_fixture(c: &mut Conn, jobs: usize) {
    c.query_drop("CREATE DATABASE IF NOT EXISTS q").unwrap();
    c.query_drop("USE q").unwrap();
    c.query_drop("DROP TABLE IF EXISTS q_v1").unwrap();
    let ddl: String = include_str!("../fixtures/queue.sql")
        .lines()
        .filter(|l| !l.trim_start().starts_with("--"))
        .collect::<Vec<_>>()
        .join("\n");
    let v1 = ddl
        .split(';')
        .find(|s| s.contains("CREATE TABLE q_v1"))
        .expect("q_v1 in the fixture");
    c.query_drop(v1).unwrap();
    for chunk in (0..jobs).collect::<Vec<_>>().chunks(500) {
        let rows: Vec<String> = chunk.iter().map(|i| format!("({})", 1000 + i)).collect();
        c.query_drop(format!(
            "INSERT INTO q_v1 (run_at) VALUES {}",
            rows.join(",")
        ))
        .unwrap();
    }
}

/// Runs `workers` claimers until the queue is empty: claim `batch` jobs with SKIP LOCKED and
/// mark them running in one transaction, then delete them in a second. Returns the fsyncs
/// per job processed.
fn fsyncs_per_job(srv: &Arc<TestServer>, batch: usize, workers: usize, jobs: usize) -> f64 {
    let mut c = srv.connect();
    queue_fixture(&mut c, jobs);
    let before = status(&mut c, "Innodb_os_log_fsyncs");
    let handles: Vec<_> = (0..workers)
        .map(|w| {
            let srv = srv.clone();
            std::thread::spawn(move || {
                let mut c = srv.connect();
                c.query_drop("USE q").unwrap();
                let mut done = 0usize;
                loop {
                    c.query_drop("BEGIN").unwrap();
                    let ids: Vec<u64> = c
                        .query(format!(
                            "SELECT id FROM q_v1 WHERE status=0 ORDER BY run_at, id \
                             LIMIT {batch} FOR UPDATE SKIP LOCKED"
                        ))
                        .unwrap();
                    if ids.is_empty() {
                        c.query_drop("COMMIT").unwrap();
                        return done;
                    }
                    let list = ids.iter().map(u64::to_string).collect::<Vec<_>>().join(",");
                    let marked = c.query_drop(format!(
                        "UPDATE q_v1 SET status=1, owner='w{w}', attempts=attempts+1 \
                         WHERE id IN ({list})"
                    ));
                    // Near the end of the queue two claimers' scans both hold the gap
                    // before the first status=1 entry (next-key locks under REPEATABLE
                    // READ), and each UPDATE inserts its new index entries into that gap:
                    // InnoDB's deadlock. The victim is rolled back whole; its jobs go back
                    // to the queue and it claims again, as a worker does.
                    if marked.is_err() {
                        assert_eq!(code(marked), 1213);
                        continue;
                    }
                    c.query_drop("COMMIT").unwrap();
                    c.query_drop("BEGIN").unwrap();
                    c.query_drop(format!("DELETE FROM q_v1 WHERE id IN ({list})"))
                        .unwrap();
                    c.query_drop("COMMIT").unwrap();
                    done += ids.len();
                }
            })
        })
        .collect();
    let processed: usize = handles.into_iter().map(|h| h.join().unwrap()).sum();
    assert_eq!(processed, jobs, "every job processed exactly once");
    let fsyncs = status(&mut c, "Innodb_os_log_fsyncs") - before;
    fsyncs as f64 / jobs as f64
}

#[test]
fn batch_50_claims_need_fewer_fsyncs_per_job_than_batch_1() {
    let srv = Arc::new(TestServer::start(&[]));
    let mut c = srv.connect();
    c.query_drop("SET GLOBAL innodb_flush_log_at_trx_commit = 1, GLOBAL tpbed_log_fsync_us = 1000")
        .unwrap();
    const WORKERS: usize = 4;
    let one = fsyncs_per_job(&srv, 1, WORKERS, 400);
    let fifty = fsyncs_per_job(&srv, 50, WORKERS, 2000);
    eprintln!("fsyncs per job: batch 1 {one:.3}, batch 50 {fifty:.3} (the study: 1.289 -> 0.114)");
    assert!(
        one > 0.2,
        "batch 1: {one:.3} fsyncs per job; commits do not reach the redo log"
    );
    assert!(fifty > 0.0, "batch 50: no fsync at all");
    assert!(
        fifty * 5.0 < one,
        "batch 50 ({fifty:.3}/job) should need far fewer fsyncs per job than batch 1 ({one:.3}/job)"
    );
}
