//! One `tpbed-load` process drives 10,000 concurrent connections with at most 16 client
//! threads: `tpbed-load idle` holds 9,984 idle connections and 16 active ones running
//! point selects against tpbed-server in pool mode. The server counts every connection, the
//! client process never runs more OS threads than its event loops plus the main thread, and
//! the active connections keep completing events while all 10,000 are open.

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use mysql::prelude::*;
use tpbed_tests::{binary, proc_rss_and_threads, raise_nofile_limit, TestServer};

const CONNECTIONS: usize = 10_000;
const ACTIVE: usize = 16;

/// The number after `"key":` in a JSON text (the report's top-level numeric fields).
fn json_number(json: &str, key: &str) -> f64 {
    let at = json
        .find(&format!("\"{key}\":"))
        .unwrap_or_else(|| panic!("no {key} in the report: {json}"));
    json[at + key.len() + 3..]
        .trim_start()
        .split(|c: char| !(c.is_ascii_digit() || c == '.' || c == '-'))
        .next()
        .and_then(|v| v.parse().ok())
        .unwrap_or_else(|| panic!("{key} is not a number"))
}

#[test]
fn ten_thousand_connections_from_one_process_with_at_most_16_client_threads() {
    let limit = raise_nofile_limit();
    if limit < CONNECTIONS as u64 + 500 {
        tpbed_tests::skip(&format!(
            "RLIMIT_NOFILE hard limit {limit} is below the 10,500 sockets each side holds"
        ));
        return;
    }
    let srv = TestServer::start(&[
        "--thread-handling=pool-of-threads",
        "--max-connections=12000",
    ]);
    srv.connect().query_drop("CREATE DATABASE sbtest").unwrap();
    let port = srv.port.to_string();
    let conn = [
        "--mysql-host=127.0.0.1",
        "--mysql-port",
        port.as_str(),
        "--mysql-user=root",
        "--mysql-db=sbtest",
    ];
    let load = binary("tpbed-load");
    let prepared = Command::new(&load)
        .arg("prepare")
        .args(conn)
        .args(["--tables=1", "--table-size=1000"])
        .output()
        .expect("run tpbed-load prepare");
    assert!(
        prepared.status.success(),
        "{}",
        String::from_utf8_lossy(&prepared.stderr)
    );
    let idle = (CONNECTIONS - ACTIVE).to_string();
    let active = ACTIVE.to_string();
    let mut child = Command::new(&load)
        .arg("idle")
        .args(conn)
        .args(["--idle", idle.as_str(), "--active", active.as_str()])
        .args(["--time=5", "--table-size=1000", "--format=json"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start tpbed-load idle");
    // sample the client's OS threads and the server's connection count while it runs
    let pid = child.id();
    let (mut max_threads, mut max_connected) = (0u64, 0u64);
    let t0 = Instant::now();
    while child.try_wait().expect("wait").is_none() && t0.elapsed() < Duration::from_secs(240) {
        max_threads = max_threads.max(proc_rss_and_threads(pid).1);
        if let Ok(Some((_, n))) = srv
            .connect()
            .query_first::<(String, u64), _>("SHOW GLOBAL STATUS LIKE 'Threads_connected'")
        {
            max_connected = max_connected.max(n);
        }
        std::thread::sleep(Duration::from_millis(200));
    }
    let out = child.wait_with_output().expect("tpbed-load output");
    let json = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "tpbed-load idle failed: {}\n{json}",
        String::from_utf8_lossy(&out.stderr)
    );
    let client_threads = json_number(&json, "client_threads");
    let events = json_number(&json, "transactions");
    eprintln!(
        "{CONNECTIONS} connections: {client_threads} client threads, at most {max_threads} OS threads in tpbed-load, \
         server Threads_connected up to {max_connected}, {events} events by the {ACTIVE} active connections"
    );
    assert!(
        json_number(&json, "threads") as usize == CONNECTIONS,
        "{json}"
    );
    assert!(client_threads <= 16.0, "{client_threads} client threads");
    // event loops + the reporting main thread (+ the side connection's, none: it is blocking
    // on the main thread)
    assert!(
        max_threads <= client_threads as u64 + 1,
        "{max_threads} OS threads in tpbed-load for {client_threads} client threads"
    );
    // the sampling connection itself is one of the server's connections
    assert!(
        max_connected > CONNECTIONS as u64,
        "server saw at most {max_connected} connections"
    );
    assert!(events > 0.0, "the active connections ran no events");
}
