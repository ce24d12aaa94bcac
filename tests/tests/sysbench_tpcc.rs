//! Percona-Lab's sysbench-tpcc (vendored under `tests/clients/`) against the real binary at
//! scale 1, one table set: `prepare` with one thread, a short `run` with two threads, then
//! `check`, whose ten consistency checks must all pass. A fatal error or a failed statement
//! in any phase fails the test; the deadlocks and lock wait timeouts sysbench retries by
//! default (1213, 1205) are allowed in `run`, as on MySQL.

use std::path::PathBuf;
use std::process::Command;
use std::time::Instant;

use mysql::prelude::*;
use tpbed_tests::sysbench::checked_output;
use tpbed_tests::{has_program, require_tool, TestServer};

/// The consistency checks `tpcc_check.lua` runs, by the numbers it prints.
const CHECKS: [u32; 10] = [1, 2, 3, 4, 5, 7, 8, 9, 10, 12];

/// The vendored scripts' folder and the one-thread wrapper beside it.
fn scripts() -> (PathBuf, PathBuf) {
    let clients = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("clients");
    (
        clients.join("sysbench-tpcc"),
        clients.join("sysbench-tpcc-one-thread.lua"),
    )
}

/// Runs one sysbench-tpcc command against `port`; panics with sysbench's output when it exits
/// with an error or prints a fatal error. Returns its output.
fn tpcc(port: u16, command: &str, args: &[&str]) -> String {
    let (dir, wrapper) = scripts();
    let started = Instant::now();
    let out = Command::new("sysbench")
        .env("LUA_PATH", format!("{}/?.lua;;", dir.display()))
        .arg(&wrapper)
        .args([
            "--db-driver=mysql",
            "--mysql-host=127.0.0.1",
            &format!("--mysql-port={port}"),
            "--mysql-user=root",
            "--mysql-db=tpcc",
            "--tables=1",
            "--scale=1",
        ])
        .args(args)
        .arg(command)
        .output()
        .expect("run sysbench");
    let text = checked_output(&out, &format!("sysbench-tpcc {command}"));
    eprintln!(
        "sysbench-tpcc {command}: {:.1} s",
        started.elapsed().as_secs_f64()
    );
    text
}

/// The number on sysbench's report line that starts with `what` (its first field).
fn reported(text: &str, what: &str) -> Option<f64> {
    text.lines()
        .find(|l| l.trim_start().starts_with(what))
        .and_then(|l| l.trim_start()[what.len()..].split_whitespace().next())
        .and_then(|n| n.parse().ok())
}

#[test]
fn prepare_run_and_every_check_pass_at_scale_1() {
    if !require_tool("sysbench", has_program("sysbench")) {
        return;
    }
    let srv = TestServer::start(&[]);
    srv.connect().query_drop("CREATE DATABASE tpcc").unwrap();

    tpcc(srv.port, "prepare", &["--threads=1"]);
    let mut c = srv.connect_db("tpcc");
    for (table, rows) in [
        ("warehouse1", 1),
        ("district1", 10),
        ("customer1", 30_000),
        ("history1", 30_000),
        ("orders1", 30_000),
        ("new_orders1", 9_000),
        ("stock1", 100_000),
        ("item1", 100_000),
    ] {
        let n: u64 = c
            .query_first(format!("SELECT COUNT(*) FROM {table}"))
            .unwrap()
            .unwrap();
        assert_eq!(n, rows, "rows in {table} after prepare");
    }
    let orders_before: u64 = c
        .query_first("SELECT COUNT(*) FROM orders1")
        .unwrap()
        .unwrap();

    let run = tpcc(srv.port, "run", &["--threads=2", "--time=10"]);
    let transactions = reported(&run, "transactions:").unwrap_or(0.0);
    assert!(transactions > 0.0, "run committed no transaction:\n{run}");
    let orders_after: u64 = c
        .query_first("SELECT COUNT(*) FROM orders1")
        .unwrap()
        .unwrap();
    assert!(
        orders_after > orders_before,
        "New-Order added no order ({orders_before} before, {orders_after} after):\n{run}"
    );

    let check = tpcc(srv.port, "check", &["--threads=1"]);
    for n in CHECKS {
        assert!(
            check.contains(&format!("Check {n}, warehouse: 1 PASSED")),
            "check {n} did not pass:\n{check}"
        );
    }
}
