//! tpbed-load generates load from a scheduling group apart from a server started beside it.
//! With autogroup scheduling a session is one CFS group whose weight is split over its cores by
//! load; a client started from the server's shell (here: the test process, which starts both)
//! shared the server's group, and with the server's threads runnable on another core the
//! client's one event loop got a sliver of its own core (oltp_read_only at 64 connections,
//! server on CPU 0, client on CPU 1: a fraction of sysbench's QPS). Checked here: the load
//! runs in another session and autogroup than the server, whether tpbed-load is a plain child
//! or leads its process group (an interactive shell's job, where it forks), and a SIGINT to the
//! job's process group (a terminal's Ctrl-C) still ends the load at once.

use std::os::unix::process::{CommandExt as _, ExitStatusExt as _};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use mysql::prelude::*;
use tpbed_tests::{binary, TestServer};

/// Whether the kernel schedules by session; without it there is nothing to check (skips with
/// the reason, or fails under `TPBED_REQUIRE_TOOLS=1`).
fn autogroup_enabled() -> bool {
    let on = std::fs::read_to_string("/proc/sys/kernel/sched_autogroup_enabled")
        .is_ok_and(|s| s.trim() == "1");
    if !on {
        if std::env::var("TPBED_REQUIRE_TOOLS").as_deref() == Ok("1") {
            panic!("autogroup scheduling is required (TPBED_REQUIRE_TOOLS=1) but disabled");
        }
        eprintln!("SKIPPED: kernel.sched_autogroup_enabled is not 1: sessions are not groups");
    }
    on
}

/// `/proc/PID/autogroup` ("/autogroup-N nice K"), or None once the process is gone.
fn autogroup(pid: u32) -> Option<String> {
    std::fs::read_to_string(format!("/proc/{pid}/autogroup"))
        .ok()
        .map(|s| s.split_whitespace().next().unwrap_or_default().to_string())
}

fn session(pid: u32) -> i32 {
    // SAFETY: getsid takes a process id and returns a session id or -1.
    unsafe { libc::getsid(pid as libc::pid_t) }
}

/// Whether `pid` exists and is not a zombie.
fn alive(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .ok()
        .and_then(|s| s.rsplit_once(") ").map(|(_, rest)| !rest.starts_with('Z')))
        .unwrap_or(false)
}

/// The `tpbed-load` children of `pid` (its main thread's), waiting up to 5 s for one.
fn load_children(pid: u32) -> Vec<u32> {
    let until = Instant::now() + Duration::from_secs(5);
    loop {
        let list: Vec<u32> = std::fs::read_to_string(format!("/proc/{pid}/task/{pid}/children"))
            .unwrap_or_default()
            .split_whitespace()
            .filter_map(|p| p.parse().ok())
            .filter(|p| {
                std::fs::read_to_string(format!("/proc/{p}/comm"))
                    .is_ok_and(|c| c.trim() == "tpbed-load")
            })
            .collect();
        if !list.is_empty() || Instant::now() > until {
            return list;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// A server with 1,000 sbtest rows, and the connection options for it.
fn prepared() -> (TestServer, Vec<String>) {
    let srv = TestServer::start(&[]);
    srv.connect().query_drop("CREATE DATABASE sbtest").unwrap();
    let conn = vec![
        "--mysql-host=127.0.0.1".to_string(),
        format!("--mysql-port={}", srv.port),
        "--mysql-user=root".to_string(),
        "--mysql-db=sbtest".to_string(),
    ];
    let out = Command::new(binary("tpbed-load"))
        .arg("prepare")
        .args(&conn)
        .args(["--tables=1", "--table-size=1000"])
        .output()
        .expect("run tpbed-load prepare");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    (srv, conn)
}

/// `tpbed-load run` of point selects for `secs` seconds.
fn run_cmd(conn: &[String], secs: u32) -> Command {
    let mut c = Command::new(binary("tpbed-load"));
    c.arg("run")
        .args(conn)
        .args([
            "--workload=oltp_point_select",
            "--tables=1",
            "--table-size=1000",
        ])
        .args(["--threads=4", "--no-gauges", &format!("--time={secs}")])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    as_terminal_job(&mut c);
    c
}

/// Starts `c` with SIGINT and SIGQUIT at their default action, as a terminal's job has them:
/// a test run from a script's background job inherits them ignored, and an ignored Ctrl-C
/// rightly ends nothing.
fn as_terminal_job(c: &mut Command) {
    // SAFETY: signal(2) is async-signal-safe, and the closure touches nothing else.
    unsafe {
        c.pre_exec(|| {
            libc::signal(libc::SIGINT, libc::SIG_DFL);
            libc::signal(libc::SIGQUIT, libc::SIG_DFL);
            Ok(())
        });
    }
}

/// Asserts that the process `worker` runs in another session and autogroup than the server.
fn assert_apart(srv: &TestServer, worker: u32) {
    let until = Instant::now() + Duration::from_secs(5);
    // the worker starts its session right after it starts: wait for it
    while session(worker) != worker as i32 && Instant::now() < until {
        std::thread::sleep(Duration::from_millis(20));
    }
    let (w, s) = (autogroup(worker), autogroup(srv.pid()));
    assert!(w.is_some() && s.is_some(), "autogroups {w:?} / {s:?}");
    assert_ne!(
        session(worker),
        session(srv.pid()),
        "the load shares the server's session"
    );
    assert_ne!(w, s, "the load shares the server's scheduling group");
}

fn finish(child: Child) -> String {
    let out = child.wait_with_output().expect("tpbed-load output");
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success(),
        "tpbed-load failed ({}): {}\n{text}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(text.contains("queries:"), "no report: {text}");
    text
}

#[test]
fn a_plain_child_runs_its_load_in_a_group_of_its_own() {
    if !autogroup_enabled() {
        return;
    }
    let (srv, conn) = prepared();
    let child = run_cmd(&conn, 2).spawn().expect("start tpbed-load");
    assert_apart(&srv, child.id());
    finish(child);
}

#[test]
fn a_process_group_leader_forks_its_load_into_a_group_of_its_own() {
    if !autogroup_enabled() {
        return;
    }
    let (srv, conn) = prepared();
    let child = run_cmd(&conn, 2)
        .process_group(0)
        .spawn()
        .expect("start tpbed-load");
    let workers = load_children(child.id());
    assert_eq!(workers.len(), 1, "one worker process: {workers:?}");
    assert_apart(&srv, workers[0]);
    // the job's own process stays in the test's session (a shell's job control sees it)
    assert_eq!(session(child.id()), session(std::process::id()));
    // the report comes through and the job exits with the worker's status
    finish(child);
    assert!(!alive(workers[0]), "worker left running");
}

/// A terminal's Ctrl-C: SIGINT to the job's process group, which the worker's session is not.
fn interrupt_group(pgid: u32) {
    // SAFETY: kill with a negative id signals that process group.
    let r = unsafe { libc::kill(-(pgid as libc::pid_t), libc::SIGINT) };
    assert_eq!(r, 0, "kill(-{pgid}, SIGINT)");
}

fn assert_gone_soon(pid: u32, what: &str) {
    let until = Instant::now() + Duration::from_secs(10);
    while alive(pid) && Instant::now() < until {
        std::thread::sleep(Duration::from_millis(20));
    }
    assert!(
        !alive(pid),
        "{what} {pid} still runs after the job's SIGINT"
    );
}

#[test]
fn ctrl_c_on_the_job_still_ends_the_load() {
    if !autogroup_enabled() {
        return;
    }
    let (srv, conn) = prepared();
    // tpbed-load leads the job: the worker is its child, the parent relays
    let mut job = run_cmd(&conn, 60)
        .process_group(0)
        .spawn()
        .expect("start tpbed-load");
    let worker = *load_children(job.id()).first().expect("a worker");
    assert_apart(&srv, worker);
    let t0 = Instant::now();
    interrupt_group(job.id());
    let st = job.wait().expect("wait");
    assert_eq!(st.signal(), Some(libc::SIGINT), "job ended by {st}");
    assert_gone_soon(worker, "worker");
    assert!(t0.elapsed() < Duration::from_secs(10));

    // tpbed-load inside a script's job: it starts the session itself, a relay child stays
    let mut script = Command::new("sh");
    script
        .arg("-c")
        .arg(r#""$@"; exit 0"#)
        .arg("sh")
        .arg(binary("tpbed-load"))
        .arg("run")
        .args(&conn)
        .args([
            "--workload=oltp_point_select",
            "--tables=1",
            "--table-size=1000",
        ])
        .args(["--threads=4", "--no-gauges", "--time=60"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .process_group(0);
    as_terminal_job(&mut script);
    let mut job = script.spawn().expect("start sh");
    let load = *load_children(job.id()).first().expect("tpbed-load");
    assert_apart(&srv, load);
    // the relay is the child that stayed in the job's session; a child the worker forks for a
    // moment (`git rev-parse` for the report) also shows as tpbed-load until it execs
    let relay: Vec<u32> = load_children(load)
        .into_iter()
        .filter(|&p| session(p) == session(job.id()))
        .collect();
    assert_eq!(
        relay.len(),
        1,
        "one relay process in the job's session: {relay:?}"
    );
    interrupt_group(job.id());
    assert_gone_soon(load, "tpbed-load");
    assert_gone_soon(relay[0], "relay");
    let _ = job.wait();
}
