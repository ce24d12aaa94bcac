//! Graceful shutdown of the real binary, in both connection-handling modes: SIGTERM under load
//! and the `SHUTDOWN` statement end the process with exit status 0 within the statement grace
//! period, roll back the transactions left open, join every thread (the process logs
//! "Shutdown complete" only after the handler joined its threads and the server was dropped)
//! and remove the temporary data directory.

use std::io::{BufRead, BufReader};
use std::path::PathBuf;
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use mysql::prelude::Queryable;
use mysql::{Conn, OptsBuilder};

/// The server's grace period for running statements (10 s) plus room for a loaded machine.
const EXIT_WITHIN: Duration = Duration::from_secs(30);

/// A server process this test stops itself (so it can see how the process ends).
struct Proc {
    child: Child,
    port: u16,
    log: Arc<Mutex<Vec<String>>>,
}

impl Proc {
    fn start(args: &[&str]) -> Proc {
        let mut child = Command::new(tpbed_tests::binary("tpbed-server"))
            .args(["--port=0", "--bind-address=127.0.0.1"])
            .args(args)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect("start tpbed-server");
        let stderr = child.stderr.take().expect("stderr piped");
        let log = Arc::new(Mutex::new(Vec::new()));
        let (tx, rx) = std::sync::mpsc::channel();
        let sink = Arc::clone(&log);
        std::thread::spawn(move || {
            for line in BufReader::new(stderr).lines().map_while(Result::ok) {
                if line.contains("ready for connections") {
                    let port = line
                        .split("port: ")
                        .nth(1)
                        .and_then(|p| p.split_whitespace().next())
                        .and_then(|p| p.parse::<u16>().ok());
                    let _ = tx.send(port.unwrap_or(0));
                }
                sink.lock().unwrap().push(line);
            }
        });
        let port = rx
            .recv_timeout(Duration::from_secs(30))
            .expect("server ready");
        Proc { child, port, log }
    }

    fn connect(&self, user: &str, password: &str) -> mysql::Result<Conn> {
        Conn::new(
            OptsBuilder::new()
                .ip_or_hostname(Some("127.0.0.1"))
                .tcp_port(self.port)
                .user(Some(user))
                .pass(Some(password))
                .prefer_socket(false),
        )
    }

    fn signal(&self, sig: libc::c_int) {
        let pid = libc::pid_t::try_from(self.child.id()).expect("pid");
        // SAFETY: kill(2) on our own child process.
        assert_eq!(unsafe { libc::kill(pid, sig) }, 0);
    }

    /// Waits for the process to end by itself (killing it after `limit`).
    fn wait_exit(&mut self, limit: Duration) -> Option<ExitStatus> {
        let end = Instant::now() + limit;
        while Instant::now() < end {
            if let Ok(Some(st)) = self.child.try_wait() {
                return Some(st);
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        None
    }

    fn log_text(&self) -> String {
        self.log.lock().unwrap().join("\n")
    }
}

impl Drop for Proc {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn code<T: std::fmt::Debug>(r: mysql::Result<T>) -> u16 {
    match r {
        Err(mysql::Error::MySqlError(e)) => e.code,
        other => panic!("expected a server error, got {other:?}"),
    }
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
    let mut srv = Proc::start(args);
    let mut admin = srv.connect("root", "").expect("connect");
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
    let mut idle = srv.connect("root", "").expect("connect");
    idle.query_drop("BEGIN").unwrap();
    idle.query_drop("UPDATE s.t SET v = v + 100 WHERE id = 64")
        .unwrap();
    // 64 clients running short read-write transactions until the server goes away.
    let stop = Arc::new(AtomicBool::new(false));
    let done = Arc::new(AtomicU64::new(0));
    let clients: Vec<_> = (0..64u64)
        .map(|k| {
            let mut c = srv.connect("root", "").expect("connect");
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
    let log = srv.log_text();
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
    let mut srv = Proc::start(args);
    let mut root = srv.connect("root", "").expect("connect");
    let dir = datadir(&mut root);
    root.query_drop("CREATE USER 'plain'@'%' IDENTIFIED BY 'pw'")
        .unwrap();
    let mut plain = srv.connect("plain", "pw").expect("connect plain");
    assert_eq!(code(plain.query_drop("SHUTDOWN")), 1227);
    root.query_drop("SHUTDOWN").expect("SHUTDOWN");
    let status = srv.wait_exit(EXIT_WITHIN);
    drop(plain);
    drop(root);
    let log = srv.log_text();
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
    let mut srv = Proc::start(&["--thread-handling=pool-of-threads"]);
    let mut root = srv.connect("root", "").expect("connect");
    let dir = datadir(&mut root);
    let sleeper = std::thread::spawn(move || root.query_drop("SELECT SLEEP(120)"));
    std::thread::sleep(Duration::from_millis(300));
    let t = Instant::now();
    srv.signal(libc::SIGTERM);
    let status = srv.wait_exit(EXIT_WITHIN);
    let took = t.elapsed();
    let log = srv.log_text();
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
