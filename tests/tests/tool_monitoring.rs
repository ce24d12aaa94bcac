//! Monitoring tools against tpbed: `pt-kill` ends a long query,
//! `prometheus-mysqld-exporter`'s default collectors scrape it without an error, and
//! `pt-mysql-summary` reports on it to the end.

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use mysql::prelude::*;
use tpbed_tests::{has_program, on_path, require_tool, TestServer};

/// Waits until connection `id` runs `text` (processlist Info).
fn wait_running(c: &mut mysql::Conn, id: u32, text: &str) {
    let q = format!("SELECT INFO FROM information_schema.PROCESSLIST WHERE ID = {id}");
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let info: Option<Option<String>> = c.query_first(&q).unwrap();
        if info.flatten().as_deref() == Some(text) {
            return;
        }
        assert!(Instant::now() < deadline, "{text} never ran");
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn pt_kill_ends_a_long_query_and_keeps_the_connection() {
    if !require_tool("pt-kill (percona-toolkit)", has_program("pt-kill")) {
        return;
    }
    let srv = TestServer::start(&[]);
    let mut victim = srv.connect();
    let id = victim.connection_id();
    let sleeper = std::thread::spawn(move || {
        let t = Instant::now();
        let r: i64 = victim.query_first("SELECT SLEEP(30)").unwrap().unwrap();
        (r, t.elapsed(), victim)
    });
    wait_running(&mut srv.connect(), id, "SELECT SLEEP(30)");
    let out = Command::new("pt-kill")
        .args([
            "--host=127.0.0.1",
            &format!("--port={}", srv.port),
            "--user=root",
            "--busy-time=1",
            "--match-info=SLEEP",
            "--kill-query",
            "--interval=1",
            "--run-time=6",
            "--print",
        ])
        .output()
        .unwrap();
    let printed = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{printed}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(printed.contains(&format!("KILL QUERY {id} ")), "{printed}");
    let (r, took, mut victim) = sleeper.join().unwrap();
    assert_eq!(r, 1, "an interrupted SLEEP returns 1");
    assert!(
        took < Duration::from_secs(15),
        "pt-kill ended it ({took:?})"
    );
    let one: i64 = victim.query_first("SELECT 1").unwrap().unwrap();
    assert_eq!(one, 1, "KILL QUERY keeps the connection");
}

/// The body of `GET /metrics` from a server on 127.0.0.1:`port`, if it answers.
fn scrape(port: u16) -> Option<String> {
    let mut s = TcpStream::connect(("127.0.0.1", port)).ok()?;
    s.set_read_timeout(Some(Duration::from_secs(20))).ok()?;
    s.write_all(b"GET /metrics HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n")
        .ok()?;
    let mut body = String::new();
    s.read_to_string(&mut body).ok()?;
    Some(body)
}

#[test]
fn mysqld_exporter_scrapes_with_every_default_collector() {
    let exporter = "prometheus-mysqld-exporter";
    if !require_tool(exporter, on_path(exporter)) {
        return;
    }
    let srv = TestServer::start(&[]);
    let port = TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .unwrap()
        .port();
    let mut child = Command::new(exporter)
        .arg(format!("--web.listen-address=127.0.0.1:{port}"))
        .env(
            "DATA_SOURCE_NAME",
            format!("root@(127.0.0.1:{})/", srv.port),
        )
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(20);
    let metrics = loop {
        if let Some(m) = scrape(port).filter(|m| m.contains("mysql_up")) {
            break m;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            panic!("the exporter never answered on {port}");
        }
        std::thread::sleep(Duration::from_millis(100));
    };
    let _ = child.kill();
    let mut log = String::new();
    child
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut log)
        .unwrap();
    let _ = child.wait();
    assert!(metrics.contains("\nmysql_up 1\n"), "{metrics}");
    assert!(
        metrics.contains("mysql_global_status_threads_connected"),
        "global status is scraped"
    );
    assert!(
        metrics.contains("mysql_global_variables_max_connections 151"),
        "global variables are scraped"
    );
    let errors: Vec<&str> = log.lines().filter(|l| l.contains("level=error")).collect();
    assert!(errors.is_empty(), "collector errors: {errors:#?}");
}

#[test]
fn pt_mysql_summary_completes_without_a_shell_error() {
    if !require_tool(
        "pt-mysql-summary (percona-toolkit)",
        on_path("pt-mysql-summary"),
    ) {
        return;
    }
    let srv = TestServer::start(&[]);
    let out = Command::new("timeout")
        .args([
            "120",
            "pt-mysql-summary",
            "--host=127.0.0.1",
            &format!("--port={}", srv.port),
            "--user=root",
        ])
        .output()
        .unwrap();
    let report = String::from_utf8_lossy(&out.stdout);
    let errors = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{report}{errors}");
    // Its shell arithmetic fails loudly on a status or variable it expects and cannot find.
    assert!(errors.trim().is_empty(), "{errors}");
    assert!(report.contains("# The End"), "{report}");
    assert!(
        report.contains("Is not a slave, has 0 slaves connected"),
        "{report}"
    );
    assert!(report.contains("Prepared Statements | No"), "{report}");
}
