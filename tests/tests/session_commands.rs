//! Session commands and statements: COM_PING/INIT_DB/RESET_CONNECTION/STATISTICS, KILL,
//! `max_prepared_stmt_count`, `wait_timeout` (ER 4031), `connect_timeout`, syntax errors,
//! unsupported statements, statements that cannot be prepared, multi-statements; each in
//! every connection-handling mode.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::{Duration, Instant};

use mysql::prelude::*;
use tpbed_tests::{code, each_mode, raw_code, raw_error};

each_mode! {
    fn ping_init_db_reset_connection_and_statistics(mode) {
        let srv = mode.start(&[]);
        let mut c = srv.raw_connect("root", "").unwrap();
        c.ping().unwrap();
        assert_eq!(raw_code(c.init_db("nope")), 1049);
        c.query("CREATE DATABASE d1").unwrap();
        c.init_db("d1").unwrap();
        assert_eq!(
            c.query("SELECT DATABASE()").unwrap()[0][0].as_deref(),
            Some(&b"d1"[..])
        );
        c.query("SET @@session.wait_timeout = 123, @v = 5").unwrap();
        c.reset_connection().unwrap();
        assert_eq!(
            c.query("SELECT @@wait_timeout, @v").unwrap()[0],
            vec![Some(b"28800".to_vec()), None]
        );
        assert_eq!(
            c.query("SELECT DATABASE()").unwrap()[0][0].as_deref(),
            Some(&b"d1"[..]),
            "reset keeps the db"
        );
        let mut m = srv.connect();
        m.query_drop("SELECT 1").unwrap();
        let stat = {
            let mut raw = srv.raw_connect("root", "").unwrap();
            let mut out = Vec::new();
            protocol::packet::write_packet(&mut out, &mut 0, &[0x09]);
            let s = raw.stream_mut();
            s.write_all(&out).unwrap();
            let mut buf = [0u8; 1024];
            let n = s.read(&mut buf).unwrap();
            String::from_utf8_lossy(&buf[4..n]).into_owned()
        };
        assert!(
            stat.contains("Uptime: ") && stat.contains("Questions: "),
            "{stat}"
        );
    }

    fn kill_query_ends_a_sleep_and_kill_connection_closes(mode) {
        let srv = mode.start(&[]);
        let mut victim = srv.connect();
        let id = victim.connection_id();
        let sleeper = std::thread::spawn(move || {
            let t = Instant::now();
            let r: i64 = victim.query_first("SELECT SLEEP(20)").unwrap().unwrap();
            (r, t.elapsed(), victim)
        });
        // KILL QUERY is sent while the victim's SLEEP runs: the processlist shows it.
        let mut killer = srv.connect();
        let running = format!(
            "SELECT COMMAND, INFO FROM information_schema.PROCESSLIST WHERE ID = {id}"
        );
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            let row: Option<(String, Option<String>)> = killer.query_first(&running).unwrap();
            if row == Some(("Query".into(), Some("SELECT SLEEP(20)".into()))) {
                break;
            }
            assert!(Instant::now() < deadline, "the SLEEP never ran: {row:?}");
            std::thread::sleep(Duration::from_millis(20));
        }
        killer.query_drop(format!("KILL QUERY {id}")).unwrap();
        let (r, took, mut victim) = sleeper.join().unwrap();
        assert_eq!(r, 1, "an interrupted SLEEP returns 1");
        assert!(
            took < Duration::from_secs(5),
            "KILL QUERY ended the sleep ({took:?})"
        );
        let one: i64 = victim.query_first("SELECT 1").unwrap().unwrap();
        assert_eq!(one, 1, "KILL QUERY keeps the connection");
        killer.query_drop(format!("KILL {id}")).unwrap();
        assert!(
            victim.query_drop("SELECT 1").is_err(),
            "KILL closes the connection"
        );
        assert_eq!(code(killer.query_drop("KILL 999999")), 1094);
        // Another user's connection needs CONNECTION_ADMIN.
        killer
            .query_drop("CREATE USER 'weak'@'%' IDENTIFIED BY 'w'")
            .unwrap();
        let mut weak = mysql::Conn::new(srv.opts("weak", "w")).unwrap();
        assert_eq!(
            code(weak.query_drop(format!("KILL {}", killer.connection_id()))),
            1095
        );
    }

    fn max_prepared_stmt_count_is_enforced(mode) {
        let srv = mode.start(&["--max-prepared-stmt-count=3"]);
        let mut c = srv.raw_connect("root", "").unwrap();
        let ids: Vec<u32> = (0..3)
            .map(|i| c.prepare(&format!("SELECT {i}")).unwrap().stmt_id)
            .collect();
        let e = raw_error(c.prepare("SELECT 4"));
        assert_eq!((e.code, e.sql_state_str()), (1461, "42000"));
        assert!(
            e.message.contains("max_prepared_stmt_count"),
            "{}",
            e.message
        );
        c.close_stmt(ids[0]).unwrap();
        c.prepare("SELECT 5").expect("a slot is free again");
        let mut m = srv.connect();
        let (_, n): (String, u64) = m
            .query_first("SHOW GLOBAL STATUS LIKE 'Prepared_stmt_count'")
            .unwrap()
            .unwrap();
        assert_eq!(n, 3);
    }

    fn wait_timeout_sends_4031_and_connect_timeout_closes(mode) {
        let srv = mode.start(&["--connect-timeout=2"]);
        let mut c = srv.raw_connect("root", "").unwrap();
        c.query("SET SESSION wait_timeout = 1").unwrap();
        // The server speaks first: an ERR 4031 (HY000) once the session has idled past
        // wait_timeout, then it closes.
        let s = c.stream_mut();
        s.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
        let mut got = Vec::new();
        let mut buf = [0u8; 512];
        while let Ok(n) = s.read(&mut buf) {
            if n == 0 {
                break;
            }
            got.extend_from_slice(&buf[..n]);
        }
        assert!(got.len() > 13 && got[4] == 0xFF, "an ERR packet: {got:?}");
        assert_eq!(u16::from_le_bytes([got[5], got[6]]), 4031);
        assert_eq!(&got[8..13], b"HY000");
        assert!(srv.wait_for_log("idle longer than wait_timeout", Duration::from_secs(2)));
        // A client that connects and never answers the greeting is dropped after connect_timeout.
        let mut s = TcpStream::connect(("127.0.0.1", srv.port)).unwrap();
        s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
        let t = Instant::now();
        let mut buf = [0u8; 512];
        let mut total = 0;
        while let Ok(n) = s.read(&mut buf) {
            if n == 0 {
                break;
            }
            total += n;
        }
        assert!(total > 0, "got the greeting");
        let waited = t.elapsed();
        assert!(
            waited >= Duration::from_millis(1500) && waited < Duration::from_secs(6),
            "closed after ~2 s: {waited:?}"
        );
    }

    fn syntax_unsupported_unpreparable_and_multi_statements(mode) {
        let srv = mode.start(&[]);
        let mut c = srv.raw_connect("root", "").unwrap();
        let e = raw_error(c.query("SELEC 1"));
        assert_eq!((e.code, e.sql_state_str()), (1064, "42000"));
        assert!(e.message.contains("near 'SELEC 1'"), "{}", e.message);
        assert_eq!(raw_code(c.query("SELECT 1 UNION SELECT 2")), 1235);
        assert_eq!(raw_code(c.prepare("USE mysql")), 1295);
        assert_eq!(raw_code(c.query("SELECT nosuch")), 1054);
        assert_eq!(raw_code(c.query("SELECT * FROM t")), 1046);
        // The protocol client asks for CLIENT_MULTI_STATEMENTS: two statements, two results.
        let mut m = srv.connect();
        let sets: Vec<Vec<i64>> = m
            .query_iter("SELECT 1; SELECT 2")
            .map(|mut r| {
                let mut out = Vec::new();
                while let Some(set) = r.iter() {
                    out.push(
                        set.map(|row| mysql::from_row::<i64>(row.unwrap()))
                            .collect(),
                    );
                }
                out
            })
            .unwrap();
        assert_eq!(sets, vec![vec![1], vec![2]]);
    }
}
