//! A deadlock tpbed detects is reported in InnoDB's LATEST DETECTED DEADLOCK layout, which
//! `pt-deadlock-logger` parses into one row per transaction.

use std::process::Command;
use std::sync::{Arc, Barrier};

use mysql::prelude::*;
use tpbed_tests::{code, has_program, require_tool, TestServer};

/// Two transactions update rows 1 and 2 in opposite orders; returns the victim's connection id
/// and the survivor's.
fn make_deadlock(srv: &TestServer) -> (u32, u32) {
    let mut setup = srv.connect();
    setup.query_drop("CREATE DATABASE d").unwrap();
    setup
        .query_drop("CREATE TABLE d.t (id INT PRIMARY KEY, v INT)")
        .unwrap();
    setup
        .query_drop("INSERT INTO d.t VALUES (1, 0), (2, 0)")
        .unwrap();
    let both_hold = Arc::new(Barrier::new(2));
    let run = |first: u32, second: u32, delay_ms: u64| {
        let mut c = srv.connect();
        let both_hold = Arc::clone(&both_hold);
        std::thread::spawn(move || {
            let id = c.connection_id();
            c.query_drop("BEGIN").unwrap();
            c.query_drop(format!("UPDATE d.t SET v = {first} WHERE id = {first}"))
                .unwrap();
            both_hold.wait();
            std::thread::sleep(std::time::Duration::from_millis(delay_ms));
            let r = c.query_drop(format!("UPDATE d.t SET v = {first} WHERE id = {second}"));
            let deadlocked = r.is_err();
            if deadlocked {
                assert_eq!(code(r), 1213);
            } else {
                c.query_drop("COMMIT").unwrap();
            }
            (id, deadlocked)
        })
    };
    // The second asks last, closes the cycle and is chosen as the victim.
    let a = run(1, 2, 0);
    let b = run(2, 1, 300);
    let (a, b) = (a.join().unwrap(), b.join().unwrap());
    assert!(
        a.1 ^ b.1,
        "exactly one transaction is rolled back: {a:?} {b:?}"
    );
    if a.1 {
        (a.0, b.0)
    } else {
        (b.0, a.0)
    }
}

#[test]
fn deadlock_section_has_innodbs_layout_and_pt_deadlock_logger_reads_it() {
    let srv = TestServer::start(&[]);
    let (victim, survivor) = make_deadlock(&srv);
    let mut c = srv.connect();
    let status: Vec<(String, String, String)> = c.query("SHOW ENGINE INNODB STATUS").unwrap();
    let text = &status[0].2;
    for line in [
        "*** (1) TRANSACTION:",
        "mysql tables in use 1, locked 1",
        &format!("MySQL thread id {victim}, OS thread handle "),
        &format!("MySQL thread id {survivor}, OS thread handle "),
        "*** (1) HOLDS THE LOCK(S):",
        "*** (2) WAITING FOR THIS LOCK TO BE GRANTED:",
        "index PRIMARY of table `d`.`t` trx id ",
        "UPDATE d.t SET v = 2 WHERE id = 1",
        "*** WE ROLL BACK TRANSACTION (",
    ] {
        assert!(text.contains(line), "no {line:?} in {text}");
    }
    assert!(
        text.lines().any(|l| l.starts_with("TRANSACTION ")
            && l.contains(", ACTIVE ")
            && l.ends_with(" sec starting index read")),
        "{text}"
    );
    assert!(
        text.lines()
            .any(|l| l.starts_with("RECORD LOCKS space id ") && l.contains(" page no ")),
        "{text}"
    );

    if !require_tool(
        "pt-deadlock-logger (percona-toolkit)",
        has_program("pt-deadlock-logger"),
    ) {
        return;
    }
    let out = Command::new("pt-deadlock-logger")
        .arg(format!("h=127.0.0.1,P={},u=root", srv.port))
        .args(["--iterations", "1"])
        .output()
        .unwrap();
    let printed = String::from_utf8_lossy(&out.stdout);
    let errors = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success() && errors.trim().is_empty(),
        "{printed}{errors}"
    );
    // server ts thread txn_id txn_time user hostname ip db tbl idx lock_type lock_mode
    // wait_hold victim query
    let rows: Vec<Vec<&str>> = printed
        .lines()
        .skip(1)
        .map(|l| l.split(' ').collect())
        .collect();
    assert_eq!(rows.len(), 2, "{printed}");
    for r in &rows {
        let thread: u32 = r[2].parse().unwrap();
        assert!(thread == victim || thread == survivor, "{printed}");
        // No host name (tpbed resolves none), then the address and the user.
        assert_eq!(r[5..8], ["root", "", "127.0.0.1"], "{printed}");
        assert_eq!(r[8..13], ["d", "t", "PRIMARY", "RECORD", "X"], "{printed}");
        assert_eq!(r[14], if thread == victim { "1" } else { "0" }, "{printed}");
        assert_eq!(r[15], "UPDATE", "{printed}");
    }
}
