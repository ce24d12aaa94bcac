//! The loads that stress how statement bytes move, in every connection-handling mode (so also
//! with the pool's ring I/O): `tpbed-load queue` with 16 SKIP LOCKED workers claims every job
//! exactly once with no error, and sysbench's write scripts at 64 threads finish without a
//! fatal error. The sysbench half needs sysbench (installed by `.ci/run`); without it it
//! skips, unless TPBED_REQUIRE_TOOLS=1 makes that a failure.

use std::process::Command;
use std::sync::{Mutex, MutexGuard};

use mysql::prelude::*;
use tpbed_tests::sysbench::{counted, sysbench};
use tpbed_tests::{binary, each_mode, has_program, require_tool};

/// The loads take both cores: one at a time.
static HEAVY: Mutex<()> = Mutex::new(());

fn heavy() -> MutexGuard<'static, ()> {
    HEAVY.lock().unwrap_or_else(|e| e.into_inner())
}

each_mode! {
    fn tpbed_load_queue_claims_every_job_once(mode) {
        let _serial = heavy();
        let srv = mode.start(&["--max-connections=200"]);
        srv.connect().query_drop("CREATE DATABASE sbtest").unwrap();
        let out = Command::new(binary("tpbed-load"))
            .args(["queue", "--claim=skip-locked", "--workers=16", "--producers=2"])
            .args(["--initial-jobs=2000", "--time=3", "--mysql-user=root"])
            .arg(format!("--mysql-port={}", srv.port))
            .output()
            .expect("run tpbed-load queue");
        let text = format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(out.status.success(), "tpbed-load queue failed:\n{text}");
        let line = |what: &str| {
            text.lines()
                .find(|l| l.contains(what))
                .unwrap_or_else(|| panic!("no '{what}' line in:\n{text}"))
                .to_string()
        };
        assert!(line("exactly-once check").contains("PASS"), "{text}");
        assert!(line("errors by code").contains("none"), "{text}");
    }

    fn sysbench_write_scripts_at_64_threads_have_no_fatal_error(mode) {
        if !require_tool("sysbench", has_program("sysbench")) {
            return;
        }
        let _serial = heavy();
        let srv = mode.start(&["--max-connections=200", "--max-prepared-stmt-count=1048576"]);
        srv.connect().query_drop("CREATE DATABASE sbtest").unwrap();
        for (script, events) in [("oltp_write_only", 1_000u64), ("oltp_read_write", 500)] {
            sysbench(srv.port, "root", "", script, &["prepare".into(), "--threads=4".into()]);
            let text = sysbench(
                srv.port,
                "root",
                "",
                script,
                &[
                    "run".into(),
                    "--threads=64".into(),
                    format!("--events={events}"),
                    "--time=60".into(),
                ],
            );
            assert_eq!(counted(&text, "transactions:"), events, "{script}:\n{text}");
            sysbench(srv.port, "root", "", script, &["cleanup".into()]);
        }
    }
}
