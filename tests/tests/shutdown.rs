//! Graceful shutdown of the real binary, in both connection-handling modes: SIGTERM under load
//! and the `SHUTDOWN` statement end the process with exit status 0 within the statement grace
//! period, roll back the transactions left open, join every thread (the process logs
//! "Shutdown complete" only after the handler joined its threads and the server was dropped)
//! and remove the temporary data directory.

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use mysql::prelude::Queryable;
use mysql::Conn;
use tpbed_tests::{code, TestServer};

/// The server's grace period for running statements (10 s) plus room for a loaded machine.
const EXIT_WITHIN: Duration = Duration::from_secs(30);

/// A `mysql` crate connection to `srv` as `user`/`password`.
fn connect(srv: &TestServer, user: &str, password: &str) -> mysql::Result<Conn> {
    Conn::new(srv.opts(user, password))
}

/// The number in the shutdown summary line before `what`.
fn summary_count(log: &str, what: &str) -> u64 {
    let line = log
        .lines()
        .find(|l| l.contains("Shutdown: "))
        .unwrap_or_else(|| panic!("no shutdown summary in the log:\n{log}"));
    let at = line.find(what).expect("summary field");
    line[..at]
        .split_whitespace()
        .last()
        .and_then(|n| n.parse().ok())
        .expect("a count")
}

fn datadir(c: &mut Conn) -> PathBuf {
    let d: String = c.query_first("SELECT @@datadir").unwrap().unwrap();
    PathBuf::from(d.trim_end_matches('/'))
}

fn sigterm_under_load(args: &[&str]) {
    let mut srv = TestServer::start(args);
    let mut admin = connect(&srv, "root", "").expect("connect");
    let dir = datadir(&mut admin);
    assert!(dir.is_dir(), "{}", dir.display());
    admin.query_drop("CREATE DATABASE s").unwrap();
    admin
        .query_drop("CREATE TABLE s.t (id INT PRIMARY KEY, v INT)")
        .unwrap();
    let rows: Vec<String> = (1..=64).map(|i| format!("({i}, 0)")).collect();
    admin
        .query_drop(format!("INSERT INTO s.t VALUES {}", rows.join(",")))
        .unwrap();
    // An idle connection with an open transaction: shutdown must roll it back.
    let mut idle = connect(&srv, "root", "").expect("connect");
    idle.query_drop("BEGIN").unwrap();
    idle.query_drop("UPDATE s.t SET v = v + 100 WHERE id = 64")
        .unwrap();
    // 64 clients running short read-write transactions until the server goes away.
    let stop = Arc::new(AtomicBool::new(false));
    let done = Arc::new(AtomicU64::new(0));
    let clients: Vec<_> = (0..64u64)
        .map(|k| {
            let mut c = connect(&srv, "root", "").expect("connect");
            let (stop, done) = (Arc::clone(&stop), Arc::clone(&done));
            std::thread::spawn(move || {
                let mut i = 0u64;
                while !stop.load(Ordering::Relaxed) {
                    let id = 1 + (k * 7 + i) % 63;
                    i += 1;
                    let ok = c.query_drop("BEGIN").is_ok()
                        && c.query_drop(format!("UPDATE s.t SET v = v + 1 WHERE id = {id}"))
                            .is_ok()
                        && c.query_drop(format!("SELECT v FROM s.t WHERE id = {id}"))
                            .is_ok()
                        && c.query_drop("COMMIT").is_ok();
                    if !ok {
                        return;
                    }
                    done.fetch_add(1, Ordering::Relaxed);
                }
            })
        })
        .collect();
    let t = Instant::now();
    while done.load(Ordering::Relaxed) < 200 && t.elapsed() < Duration::from_secs(20) {
        std::thread::sleep(Duration::from_millis(10));
    }
    assert!(done.load(Ordering::Relaxed) >= 200, "the load did not run");
    srv.signal(libc::SIGTERM);
    let status = srv.wait_exit(EXIT_WITHIN);
    stop.store(true, Ordering::Relaxed);
    for c in clients {
        c.join().expect("client thread");
    }
    drop(idle);
    drop(admin);
    let log = srv.log_lines().join("\n");
    let status = status.unwrap_or_else(|| panic!("no exit within {EXIT_WITHIN:?}:\n{log}"));
    assert_eq!(status.code(), Some(0), "{status:?}\n{log}");
    assert!(log.contains("Received signal 15"), "{log}");
    assert!(log.contains("Shutdown complete"), "{log}");
    assert!(
        summary_count(&log, "transactions rolled back") >= 1,
        "the idle open transaction was rolled back:\n{log}"
    );
    assert!(!dir.exists(), "{} left behind", dir.display());
}

#[test]
fn sigterm_under_load_exits_0_one_thread_per_connection() {
    sigterm_under_load(&[]);
}

#[test]
fn sigterm_under_load_exits_0_pool() {
    sigterm_under_load(&["--thread-handling=pool-of-threads"]);
}

fn shutdown_statement(args: &[&str]) {
    let mut srv = TestServer::start(args);
    let mut root = connect(&srv, "root", "").expect("connect");
    let dir = datadir(&mut root);
    root.query_drop("CREATE USER 'plain'@'%' IDENTIFIED BY 'pw'")
        .unwrap();
    let mut plain = connect(&srv, "plain", "pw").expect("connect plain");
    assert_eq!(code(plain.query_drop("SHUTDOWN")), 1227);
    root.query_drop("SHUTDOWN").expect("SHUTDOWN");
    let status = srv.wait_exit(EXIT_WITHIN);
    drop(plain);
    drop(root);
    let log = srv.log_lines().join("\n");
    let status = status.unwrap_or_else(|| panic!("no exit within {EXIT_WITHIN:?}:\n{log}"));
    assert_eq!(status.code(), Some(0), "{status:?}\n{log}");
    assert!(log.contains("Received SHUTDOWN from user root"), "{log}");
    assert!(log.contains("Shutdown complete"), "{log}");
    assert!(!dir.exists(), "{} left behind", dir.display());
}

#[test]
fn shutdown_statement_exits_0_one_thread_per_connection() {
    shutdown_statement(&[]);
}

#[test]
fn shutdown_statement_exits_0_pool() {
    shutdown_statement(&["--thread-handling=pool-of-threads"]);
}

#[test]
fn a_statement_still_running_after_the_grace_period_is_killed_pool() {
    let mut srv = TestServer::start(&["--thread-handling=pool-of-threads"]);
    let mut root = connect(&srv, "root", "").expect("connect");
    let dir = datadir(&mut root);
    let sleeper = std::thread::spawn(move || root.query_drop("SELECT SLEEP(120)"));
    std::thread::sleep(Duration::from_millis(300));
    let t = Instant::now();
    srv.signal(libc::SIGTERM);
    let status = srv.wait_exit(EXIT_WITHIN);
    let took = t.elapsed();
    let log = srv.log_lines().join("\n");
    let status = status.unwrap_or_else(|| panic!("no exit within {EXIT_WITHIN:?}:\n{log}"));
    assert_eq!(status.code(), Some(0), "{status:?}\n{log}");
    assert!(
        sleeper.join().expect("sleeper").is_err(),
        "the statement was cut short"
    );
    assert!(
        took >= Duration::from_secs(9),
        "waited for the grace period: {took:?}"
    );
    assert_eq!(summary_count(&log, "killed"), 1, "{log}");
    assert!(!dir.exists(), "{} left behind", dir.display());
}
