//! Real sysbench 1.0.20 against the real binary: every OLTP script runs prepare, prewarm
//! (where the script has it), run and cleanup with `--db-ps-mode=auto` and `disable`, 16
//! tables (the `select_random_*` scripts accept only one), read-only scripts at 64 threads
//! and write scripts at 1, and any error line fails the test. Short runs keep it within a
//! few minutes on two cores.

use std::process::Command;

use mysql::prelude::*;
use tpbed_tests::{has_program, require_tool, TestServer};

const READ_ONLY: &[&str] = &[
    "oltp_point_select",
    "oltp_read_only",
    "select_random_points",
    "select_random_ranges",
];
const WRITES: &[&str] = &[
    "oltp_read_write",
    "oltp_write_only",
    "oltp_update_index",
    "oltp_update_non_index",
    "oltp_insert",
    "oltp_delete",
    "bulk_insert",
];

fn sysbench(port: u16, script: &str, args: &[String]) -> String {
    let out = Command::new("sysbench")
        .arg(script)
        .args([
            "--mysql-host=127.0.0.1".to_string(),
            format!("--mysql-port={port}"),
            "--mysql-user=root".to_string(),
            "--mysql-db=sbtest".to_string(),
        ])
        .args(args)
        .output()
        .expect("run sysbench");
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    let bad: Vec<&str> = text
        .lines()
        .filter(|l| {
            let l = l.to_ascii_lowercase();
            (l.contains("fatal") || l.contains("error") || l.contains("failed"))
                && !l.contains("ignored errors:                      0")
        })
        .collect();
    assert!(
        out.status.success() && bad.is_empty(),
        "sysbench {script} {args:?} failed:\n{text}"
    );
    text
}

fn counted(text: &str, what: &str) -> u64 {
    text.lines()
        .find(|l| l.trim_start().starts_with(what))
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|n| n.parse().ok())
        .unwrap_or(0)
}

#[test]
fn every_oltp_script_in_both_ps_modes() {
    if !require_tool("sysbench", has_program("sysbench")) {
        return;
    }
    let srv = TestServer::start(&[
        "--max-prepared-stmt-count=1048576",
        "--max-connections=1000",
    ]);
    srv.connect().query_drop("CREATE DATABASE sbtest").unwrap();
    for script in READ_ONLY.iter().chain(WRITES) {
        let read_only = READ_ONLY.contains(script);
        let tables = if script.starts_with("select_random") {
            1
        } else {
            16
        };
        let threads = if read_only { 64 } else { 1 };
        let prep_threads = if *script == "bulk_insert" { threads } else { 4 };
        for mode in ["auto", "disable"] {
            let common = [format!("--tables={tables}"), "--table-size=500".to_string()];
            let with =
                |extra: &[String]| -> Vec<String> { common.iter().chain(extra).cloned().collect() };
            sysbench(
                srv.port,
                script,
                &with(&["prepare".into(), format!("--threads={prep_threads}")]),
            );
            if *script != "bulk_insert" {
                sysbench(
                    srv.port,
                    script,
                    &with(&["prewarm".into(), "--threads=4".into()]),
                );
            }
            let run = sysbench(
                srv.port,
                script,
                &with(&[
                    "run".into(),
                    format!("--threads={threads}"),
                    "--time=2".into(),
                    format!("--db-ps-mode={mode}"),
                ]),
            );
            assert!(
                counted(&run, "queries:") > 0,
                "{script} {mode} ran no queries:\n{run}"
            );
            assert_eq!(counted(&run, "reconnects:"), 0, "{run}");
            sysbench(
                srv.port,
                script,
                &with(&["cleanup".into(), format!("--threads={threads}")]),
            );
        }
    }
    let left: Vec<String> = srv.connect().query("SHOW TABLES FROM sbtest").unwrap();
    assert!(left.is_empty(), "cleanup left tables: {left:?}");
}
