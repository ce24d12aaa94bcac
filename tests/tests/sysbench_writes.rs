//! sysbench 1.0's write scripts at 64 threads in both ps modes against the real binary, and
//! the same runs against a private MariaDB on the same machine: tpbed must finish every run
//! with no fatal error, report the 1213/1205 errors sysbench ignores (its default
//! `--mysql-ignore-errors`), and ignore no more of them than MariaDB does on the same run.
//! "The same run" is the same work: each script runs a fixed number of events (`--events`)
//! on both servers, since in a timed run the raw counts grow with throughput, which differs
//! between the servers and with the machine's load. A run that hits the time cap before its
//! events are done is compared per event.
//! It needs sysbench and `mariadbd` (installed by `.ci/run`); without either it skips, unless
//! TPBED_REQUIRE_TOOLS=1 makes that a failure.

use mysql::prelude::*;
use tpbed_tests::sysbench::{counted, sysbench};
use tpbed_tests::{has_program, require_tool, MariaDb, TestServer};

/// Each write script with its events per run (a few seconds of work for either server).
const WRITES: &[(&str, u64)] = &[
    ("oltp_read_write", 1_000),
    ("oltp_write_only", 1_500),
    ("oltp_update_index", 10_000),
    ("oltp_update_non_index", 10_000),
    ("oltp_insert", 10_000),
    ("oltp_delete", 10_000),
];

/// A run's time cap, for a machine too loaded to finish the events.
const TIME_CAP_S: u64 = 60;

struct Run {
    ignored: u64,
    queries: u64,
    events: u64,
}

fn run_script(
    port: u16,
    user: &str,
    password: &str,
    (script, events): (&str, u64),
    mode: &str,
) -> Run {
    sysbench(
        port,
        user,
        password,
        script,
        &["prepare".into(), "--threads=4".into()],
    );
    let text = sysbench(
        port,
        user,
        password,
        script,
        &[
            "run".into(),
            "--threads=64".into(),
            format!("--events={events}"),
            format!("--time={TIME_CAP_S}"),
            format!("--db-ps-mode={mode}"),
        ],
    );
    sysbench(port, user, password, script, &["cleanup".into()]);
    let run = Run {
        ignored: counted(&text, "ignored errors:"),
        queries: counted(&text, "queries:"),
        events: counted(&text, "transactions:"),
    };
    assert!(
        run.queries > 0 && run.events > 0,
        "{script} {mode} ran no queries:\n{text}"
    );
    run
}

#[test]
fn write_scripts_at_64_threads_ignore_no_more_errors_than_mariadb() {
    // The comparison is the test: without MariaDB it skips rather than pass on tpbed alone.
    if !require_tool("sysbench", has_program("sysbench"))
        || !require_tool("mariadbd", has_program("mariadbd"))
    {
        return;
    }
    let srv = TestServer::start(&[
        "--max-prepared-stmt-count=1048576",
        "--max-connections=1000",
    ]);
    srv.connect().query_drop("CREATE DATABASE sbtest").unwrap();
    let mariadb = MariaDb::start("writes", "256M", 500);
    let mut report = Vec::new();
    for &(script, events) in WRITES {
        for mode in ["auto", "disable"] {
            let ours = run_script(srv.port, "root", "", (script, events), mode);
            let theirs = run_script(mariadb.port, "sbtest", "sbtest", (script, events), mode);
            report.push((script, mode, ours, theirs));
        }
    }
    let mut worse = Vec::new();
    for (script, mode, ours, theirs) in &report {
        let line = format!(
            "{script:<22} {mode:<8} tpbed ignored {:>6} in {:>6} events ({:>7} queries); \
             MariaDB ignored {:>6} in {:>6} events ({:>7} queries)",
            ours.ignored, ours.events, ours.queries, theirs.ignored, theirs.events, theirs.queries
        );
        eprintln!("{line}");
        // Equal events: raw counts. ours.ignored / ours.events > t.ignored / t.events, without
        // division.
        if u128::from(ours.ignored) * u128::from(theirs.events)
            > u128::from(theirs.ignored) * u128::from(ours.events)
        {
            worse.push(line);
        }
    }
    assert!(
        worse.is_empty(),
        "tpbed ignored more errors than MariaDB:\n{}",
        worse.join("\n")
    );
}
