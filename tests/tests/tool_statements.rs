//! Statements outside tools send as MySQL accepts them: `KILL [QUERY] 'id'` with a quoted id
//! (pt-kill), a COM_QUERY ending in a NUL byte and `CREATE SCHEMA` (mariadb-slap),
//! `SET lock_wait_timeout` (prometheus-mysqld-exporter); in every connection-handling mode.

use std::time::{Duration, Instant};

use mysql::prelude::*;
use tpbed_tests::{code, each_mode, has_program, mysql_error, require_tool};

each_mode! {
    fn kill_takes_a_quoted_id(mode) {
        let srv = mode.start(&[]);
        let mut victim = srv.connect();
        let id = victim.connection_id();
        let sleeper = std::thread::spawn(move || {
            let t = Instant::now();
            let r: i64 = victim.query_first("SELECT SLEEP(20)").unwrap().unwrap();
            (r, t.elapsed(), victim)
        });
        let mut killer = srv.connect();
        let running = format!("SELECT INFO FROM information_schema.PROCESSLIST WHERE ID = {id}");
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            let info: Option<Option<String>> = killer.query_first(&running).unwrap();
            if info == Some(Some("SELECT SLEEP(20)".into())) {
                break;
            }
            assert!(Instant::now() < deadline, "the SLEEP never ran: {info:?}");
            std::thread::sleep(Duration::from_millis(20));
        }
        // pt-kill --kill-query sends the id quoted.
        killer.query_drop(format!("KILL QUERY '{id}'")).unwrap();
        let (r, took, mut victim) = sleeper.join().unwrap();
        assert_eq!(r, 1, "an interrupted SLEEP returns 1");
        assert!(took < Duration::from_secs(5), "KILL QUERY ended the sleep ({took:?})");
        let one: i64 = victim.query_first("SELECT 1").unwrap().unwrap();
        assert_eq!(one, 1, "KILL QUERY keeps the connection");
        killer.query_drop(format!("KILL CONNECTION \"{id}\"")).unwrap();
        assert!(victim.query_drop("SELECT 1").is_err(), "KILL closes the connection");
        assert_eq!(code(killer.query_drop("KILL '999999'")), 1094);
        assert_eq!(code(killer.query_drop("KILL QUERY '1' '2'")), 1064);
    }

    fn com_query_ending_in_nul_runs(mode) {
        let srv = mode.start(&[]);
        let mut c = srv.raw_connect("root", "").unwrap();
        let events = c.raw_command(b"\x03SELECT 40+2\0").expect("a trailing NUL is accepted");
        let rows: Vec<_> = events
            .iter()
            .filter_map(|e| match e {
                protocol::client::ClientEvent::Row(r) => Some(r.clone()),
                _ => None,
            })
            .collect();
        assert_eq!(rows.len(), 1, "{events:?}");
        // A NUL inside a literal is data, not an end.
        let rows = c.query("SELECT LENGTH('a\\0b')").unwrap();
        assert_eq!(rows, vec![vec![Some(b"3".to_vec())]]);
    }

    fn create_schema_is_create_database(mode) {
        let srv = mode.start(&[]);
        let mut c = srv.connect();
        c.query_drop("CREATE SCHEMA `slap`").unwrap();
        c.query_drop("CREATE SCHEMA IF NOT EXISTS slap").unwrap();
        assert_eq!(mysql_error(c.query_drop("CREATE SCHEMA slap")).code, 1007);
        c.query_drop("CREATE TABLE slap.t (id INT PRIMARY KEY)").unwrap();
        let dbs: Vec<String> = c.query("SHOW DATABASES LIKE 'slap'").unwrap();
        assert_eq!(dbs, vec!["slap".to_string()]);
        c.query_drop("DROP SCHEMA slap").unwrap();
    }

    fn lock_wait_timeout_is_accepted_and_shown(mode) {
        let srv = mode.start(&["--lock-wait-timeout=600"]);
        let mut c = srv.connect();
        let g: i64 = c.query_first("SELECT @@GLOBAL.lock_wait_timeout").unwrap().unwrap();
        assert_eq!(g, 600);
        c.query_drop("SET lock_wait_timeout=2").unwrap();
        let s: i64 = c.query_first("SELECT @@lock_wait_timeout").unwrap().unwrap();
        assert_eq!(s, 2);
        let row: Option<(String, String)> =
            c.query_first("SHOW SESSION VARIABLES LIKE 'lock_wait_timeout'").unwrap();
        assert_eq!(row, Some(("lock_wait_timeout".into(), "2".into())));
        c.query_drop("SET GLOBAL lock_wait_timeout = DEFAULT").unwrap();
        let g: i64 = c.query_first("SELECT @@GLOBAL.lock_wait_timeout").unwrap().unwrap();
        assert_eq!(g, 31_536_000);
        // Out of range: MySQL clamps with a warning in SET (1292), as for other integers.
        c.query_drop("SET lock_wait_timeout = 0").unwrap();
        let s: i64 = c.query_first("SELECT @@lock_wait_timeout").unwrap().unwrap();
        assert_eq!(s, 1);
    }

    fn mariadb_slap_auto_generated_sql_completes(mode) {
        if !require_tool("mariadb-slap", has_program("mariadb-slap")) {
            return;
        }
        let srv = mode.start(&[]);
        let out = std::process::Command::new("mariadb-slap")
            .args([
                "-h127.0.0.1",
                &format!("-P{}", srv.port),
                "-uroot",
                "--auto-generate-sql",
                "--concurrency=8",
                "--number-of-queries=200",
            ])
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
    }
}
