//! Nothing a client sends crashes the server, a connection or the protocol, in both
//! connection-handling modes: deep nesting gets 1436, arithmetic and function edges get
//! MySQL's errors and warnings, oversized results and long data stop at
//! `max_allowed_packet`, large packets keep their sequence ids, the prepared-statement limit
//! holds under concurrency, KILL QUERY ends a row loop with 1317, and a connection's
//! buffers shrink back after a large packet.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::{Duration, Instant};

use mysql::prelude::*;
use protocol::client::blocking::ClientError;
use protocol::packet::{frame_header, write_packet};
use protocol::BinaryValue;
use tpbed_tests::TestServer;

/// The connection-handling modes every test here runs in.
const MODES: [&str; 2] = ["one-thread-per-connection", "pool-of-threads"];

/// Starts a server in `mode` with `args` added.
fn start(mode: &str, args: &[&str]) -> TestServer {
    let handling = format!("--thread-handling={mode}");
    let mut all = vec![handling.as_str()];
    all.extend_from_slice(args);
    TestServer::start(&all)
}

/// The MySQL error code of a `mysql` crate result (panics on success).
fn code<T: std::fmt::Debug>(r: mysql::Result<T>) -> u16 {
    match r {
        Err(mysql::Error::MySqlError(e)) => e.code,
        other => panic!("expected a server error, got {other:?}"),
    }
}

fn server_code<T: std::fmt::Debug>(r: Result<T, ClientError>) -> (u16, String) {
    match r {
        Err(ClientError::Server(e)) => (e.code, e.message),
        other => panic!("expected a server error, got {other:?}"),
    }
}

#[test]
fn deep_nesting_gets_1436_and_the_server_keeps_serving() {
    for mode in MODES {
        let mut srv = start(mode, &[]);
        let mut c = srv.connect();
        let chain = |op: &str, n: usize| format!("SELECT {}", vec!["1"; n].join(op));
        // The reproduction: 2,000 terms used to overflow the connection thread's stack.
        for sql in [
            chain("+", 2_000),
            chain("+", 200_000),
            // AND/OR chains are lists; past 32,768 operands they are refused all the same.
            chain(" OR ", 40_000),
            format!("SELECT {}1{}", "(".repeat(2_000), ")".repeat(2_000)),
            format!("SELECT {}1{}", "(".repeat(100_000), ")".repeat(100_000)),
            format!("SELECT 1{}", " IS NULL".repeat(3_000)),
            format!("SELECT {}1", "NOT ".repeat(3_000)),
            format!("SELECT {}1", "- ".repeat(3_000)),
            vec!["SELECT 1"; 3_000].join(" UNION "),
        ] {
            assert_eq!(code(c.query_drop(&sql)), 1436, "{mode}: {}", &sql[..40]);
        }
        // Within the bound (512 levels) the same forms run: as text, twice (parsed, then
        // through the connection's statement shapes), and prepared.
        for (sql, want) in [
            (chain("+", 500), 500),
            (chain("+", 512), 512),
            (format!("SELECT 1{}", " IS NULL".repeat(511)), 0),
            (format!("SELECT 1{}", " LIKE 1".repeat(511)), 1),
            (format!("SELECT 1{}", " BETWEEN 0 AND 2".repeat(255)), 1),
        ] {
            for _ in 0..2 {
                let n: i64 = c.query_first(&sql).unwrap().unwrap();
                assert_eq!(n, want, "{mode}: {}", &sql[..40]);
            }
            let stmt = c.prep(&sql).unwrap();
            let n: i64 = c.exec_first(&stmt, ()).unwrap().unwrap();
            assert_eq!(n, want, "{mode}: prepared {}", &sql[..40]);
            c.close(stmt).unwrap();
        }
        let hit: i64 = c
            .query_first(format!("SELECT {}", vec!["0"; 200].join(" OR ")))
            .unwrap()
            .unwrap();
        assert_eq!(hit, 0, "{mode}");
        // Flat lists are not nesting: a 100,000-item IN list runs.
        let list: Vec<String> = (0..100_000).map(|i| i.to_string()).collect();
        let found: i64 = c
            .query_first(format!("SELECT 99999 IN ({})", list.join(",")))
            .unwrap()
            .unwrap();
        assert_eq!(found, 1, "{mode}");
        // Prepared statements are bounded the same way.
        assert_eq!(code(c.prep(chain("+", 5_000))), 1436, "{mode}");
        assert!(srv.is_running(), "{mode}: the server survived");
        assert_eq!(srv.scalar("SELECT 1"), "1", "{mode}");
    }
}

#[test]
fn arithmetic_and_function_edges_answer_like_mysql() {
    for mode in MODES {
        let mut srv = start(mode, &[]);
        let mut c = srv.connect();
        // Used to drop the connection (an overflow in SUBSTRING).
        let s: String = c
            .query_first("SELECT SUBSTRING('abc', 2, 9223372036854775807)")
            .unwrap()
            .unwrap();
        assert_eq!(s, "bc", "{mode}");
        let s: String = c
            .query_first("SELECT SUBSTRING('abc', -9223372036854775808, 2)")
            .unwrap()
            .unwrap();
        assert_eq!(s, "", "{mode}");
        for (sql, want) in [
            ("SELECT -(-9223372036854775808)", 1690),
            ("SELECT 9223372036854775807 + 1", 1690),
            ("SELECT -9223372036854775808 * -1", 1690),
            ("SELECT -9223372036854775808 DIV -1", 1690),
            ("SELECT ABS(-9223372036854775808)", 1690),
            ("SELECT 1e308 * 10", 1690),
            ("SELECT -1e308 - 1e308", 1690),
            ("SELECT 1e308 DIV 1e-308", 1690),
            ("SELECT 1e309", 1367),
            ("SELECT CAST(1 AS DECIMAL(65,31))", 1425),
        ] {
            assert_eq!(code(c.query_drop(sql)), want, "{mode}: {sql}");
        }
        // Decimal scales stay within 30 digits however long the chain.
        let d: String = c
            .query_first(format!("SELECT 1{}", "/3".repeat(20)))
            .unwrap()
            .unwrap();
        assert!(d.starts_with("0.000000000"), "{mode}: {d}");
        let d: String = c
            .query_first(format!("SELECT 0.5{}", "*0.5".repeat(60)))
            .unwrap()
            .unwrap();
        assert_eq!(d.split('.').nth(1).map(str::len), Some(30), "{mode}: {d}");
        let r: f64 = c.query_first("SELECT ROUND(1e308, 30)").unwrap().unwrap();
        assert_eq!(r, 1e308, "{mode}");
        // `~` binds tighter than every binary operator.
        let (zero, all, xor): (u64, u64, u64) = c
            .query_first("SELECT ~0 * 0, ~(0 * 0), ~1 ^ 1")
            .unwrap()
            .unwrap();
        assert_eq!((zero, all, xor), (0, u64::MAX, u64::MAX), "{mode}");
        // A product after it groups from the left: `3 * ~0` overflows before `* 0`.
        assert_eq!(code(c.query_drop("SELECT 3 * ~0 * 0")), 1690, "{mode}");
        // A string past the double range casts to the largest double, with warning 1292.
        let big: f64 = c
            .query_first("SELECT CAST('1e400' AS DOUBLE)")
            .unwrap()
            .unwrap();
        assert_eq!(big, f64::MAX, "{mode}");
        let warning: (String, u16, String) = c.query_first("SHOW WARNINGS").unwrap().unwrap();
        assert_eq!(
            (warning.1, warning.2.as_str()),
            (1292, "Truncated incorrect DOUBLE value: '1e400'"),
            "{mode}"
        );
        assert!(srv.is_running(), "{mode}");
        let one: i64 = c.query_first("SELECT 1").unwrap().unwrap();
        assert_eq!(one, 1, "{mode}: the connection survived");
    }
}

#[test]
fn results_over_max_allowed_packet_are_null_with_warning_1301() {
    for mode in MODES {
        let srv = start(mode, &["--max-allowed-packet=1048576"]);
        let mut c = srv.connect();
        for (sql, func) in [
            ("SELECT REPEAT('a', 2097152)", "repeat"),
            (
                "SELECT CONCAT(REPEAT('a', 700000), REPEAT('b', 700000))",
                "concat",
            ),
            (
                "SELECT CONCAT_WS(',', REPEAT('a', 700000), REPEAT('b', 700000))",
                "concat_ws",
            ),
            ("SELECT REPEAT('ab', 9223372036854775807)", "repeat"),
            ("SELECT HEX(HEX(REPEAT('a', 300000)))", "hex"),
            (
                "SELECT JSON_ARRAY(REPEAT('a', 600000), REPEAT('b', 600000))",
                "json_array",
            ),
            (
                "SELECT JSON_OBJECT('a', REPEAT('a', 600000), 'b', REPEAT('b', 600000))",
                "json_object",
            ),
            // Escaping grows the document past the limit only when it is printed.
            ("SELECT JSON_ARRAY(REPEAT('\"', 600000))", "json_array"),
        ] {
            let v: Option<Option<String>> = c.query_first(sql).unwrap();
            assert_eq!(v, Some(None), "{mode}: {sql}");
            let w: Vec<(String, u16, String)> = c.query("SHOW WARNINGS").unwrap();
            assert_eq!(w.len(), 1, "{mode}: {sql}: {w:?}");
            assert_eq!(w[0].1, 1301, "{mode}");
            assert_eq!(
                w[0].2,
                format!(
                    "Result of {func}() was larger than max_allowed_packet (1048576) - truncated"
                ),
                "{mode}"
            );
        }
        let n: i64 = c
            .query_first("SELECT LENGTH(REPEAT('a', 1048576))")
            .unwrap()
            .unwrap();
        assert_eq!(n, 1_048_576, "{mode}: the limit itself fits");
    }
}

#[test]
fn a_binary_time_parameter_with_a_huge_day_count_is_a_value() {
    for mode in MODES {
        let srv = start(mode, &[]);
        let mut c = srv.connect();
        let stmt = c.prep("SELECT ?").unwrap();
        let v: Option<String> = c
            .exec_first(
                &stmt,
                (mysql::Value::Time(true, u32::MAX, 23, 59, 59, 999_999),),
            )
            .unwrap();
        assert_eq!(
            v.as_deref(),
            Some("-103079215103:59:59.999999"),
            "{mode}: days * 24 + hours without overflow"
        );
    }
}

#[test]
fn long_data_stops_at_max_allowed_packet() {
    for mode in MODES {
        let srv = start(mode, &["--max-allowed-packet=1048576"]);
        let mut c = srv.raw_connect("root", "").unwrap();
        let p = c.prepare("SELECT LENGTH(?)").unwrap();
        let send_long = |c: &mut protocol::client::blocking::Conn<TcpStream>, n: usize| {
            let mut payload = vec![0x18];
            payload.extend_from_slice(&p.stmt_id.to_le_bytes());
            payload.extend_from_slice(&0u16.to_le_bytes());
            payload.resize(payload.len() + n, b'x');
            let mut wire = Vec::new();
            write_packet(&mut wire, &mut 0, &payload);
            c.stream_mut().write_all(&wire).unwrap();
        };
        // Under the limit: the parameter is the data sent.
        for _ in 0..3 {
            send_long(&mut c, 300_000);
        }
        let rows = c.execute(p.stmt_id, &[BinaryValue::Null]).unwrap();
        assert_eq!(rows, vec![vec![BinaryValue::Int(900_000)]], "{mode}");
        // Past it: the execute fails as MySQL's does; nothing more is kept.
        for _ in 0..20 {
            send_long(&mut c, 500_000);
        }
        let (code, msg) = server_code(c.execute(p.stmt_id, &[BinaryValue::Null]));
        assert_eq!(code, 1105, "{mode}");
        assert!(
            msg.contains("longer than 'max_allowed_packet'"),
            "{mode}: {msg}"
        );
        // The statement is usable again afterwards.
        let rows = c
            .execute(p.stmt_id, &[BinaryValue::Bytes(b"abc".to_vec())])
            .unwrap();
        assert_eq!(rows, vec![vec![BinaryValue::Int(3)]], "{mode}");
    }
}

/// Reads one whole packet (joined fragments): (first sequence id, payload).
fn read_packet(s: &mut TcpStream) -> (u8, Vec<u8>) {
    let mut payload = Vec::new();
    let mut first = None;
    loop {
        let mut h = [0u8; 4];
        s.read_exact(&mut h).expect("a packet header");
        let (len, seq) = frame_header(&h).unwrap();
        first.get_or_insert(seq);
        let at = payload.len();
        payload.resize(at + len, 0);
        s.read_exact(&mut payload[at..]).expect("a packet body");
        if len < protocol::packet::MAX_PAYLOAD {
            return (first.unwrap_or(seq), payload);
        }
    }
}

#[test]
fn packets_over_16_mib_and_over_the_limit_keep_their_sequence_ids() {
    for mode in MODES {
        let srv = start(mode, &[]);
        // 20 MiB of query: two wire fragments (ids 0 and 1), so the reply starts at id 2.
        let mut c = srv.connect();
        let big = "a".repeat(20 << 20);
        let n: i64 = c
            .query_first(format!("SELECT LENGTH('{big}')"))
            .unwrap()
            .unwrap();
        assert_eq!(n, 20 << 20, "{mode}");
        let mut raw = srv.raw_connect("root", "").unwrap();
        let mut q = b"\x03SELECT LENGTH('".to_vec();
        q.extend_from_slice(big.as_bytes());
        q.extend_from_slice(b"')");
        let mut wire = Vec::new();
        write_packet(&mut wire, &mut 0, &q);
        raw.stream_mut().write_all(&wire).unwrap();
        let (seq, first) = read_packet(raw.stream_mut());
        assert_eq!(
            (seq, first.as_slice()),
            (2, &[1u8][..]),
            "{mode}: column count"
        );
        drop(raw);
        let big_srv = srv;
        let big_srv_port = big_srv.port;

        // Over max_allowed_packet: 1153 follows the refused header (id 0), so it is id 1.
        let srv = start(mode, &["--max-allowed-packet=1048576"]);
        let mut raw = srv.raw_connect("root", "").unwrap();
        let mut q = b"\x03SELECT '".to_vec();
        q.resize(2 << 20, b'x');
        let mut wire = Vec::new();
        write_packet(&mut wire, &mut 0, &q);
        let _ = raw.stream_mut().write_all(&wire);
        let (seq, err) = read_packet(raw.stream_mut());
        assert_eq!(seq, 1, "{mode}");
        assert_eq!(err[0], 0xFF, "{mode}");
        assert_eq!(u16::from_le_bytes([err[1], err[2]]), 1153, "{mode}");
        // PyMySQL checks every id: the reproduction that used to fail with "Packet sequence
        // number wrong" for both the 20 MiB query and the 1153 error.
        if tpbed_tests::require_tool("PyMySQL", tpbed_tests::has_python_module("pymysql")) {
            let script = format!(
                "import pymysql\n\
                 c = pymysql.connect(host='127.0.0.1', port={}, user='root', password='')\n\
                 cur = c.cursor()\n\
                 cur.execute(\"SELECT LENGTH('\" + 'a' * (20 << 20) + \"')\")\n\
                 print(cur.fetchone()[0])\n\
                 d = pymysql.connect(host='127.0.0.1', port={}, user='root', password='')\n\
                 try:\n\
                 \x20   d.cursor().execute(\"SELECT '\" + 'y' * (2 << 20) + \"'\")\n\
                 except pymysql.err.OperationalError as e:\n\
                 \x20   print(e.args[0])\n",
                big_srv_port, srv.port
            );
            let out = std::process::Command::new("python3")
                .args(["-c", &script])
                .output()
                .unwrap();
            let text = String::from_utf8_lossy(&out.stdout);
            assert_eq!(
                text.split_whitespace().collect::<Vec<_>>(),
                ["20971520", "1153"],
                "{mode}: {}",
                String::from_utf8_lossy(&out.stderr)
            );
        }
    }
}

#[test]
fn the_prepared_statement_limit_holds_under_concurrent_prepares() {
    for mode in MODES {
        let srv = start(mode, &["--max-prepared-stmt-count=100"]);
        let threads: Vec<_> = (0..8)
            .map(|t| {
                let mut c = srv.raw_connect("root", "").unwrap();
                std::thread::spawn(move || {
                    let mut ok = 0;
                    for i in 0..40 {
                        match c.prepare(&format!("SELECT {t} + {i}")) {
                            Ok(_) => ok += 1,
                            Err(e) => assert_eq!(server_code::<()>(Err(e)).0, 1461),
                        }
                    }
                    (ok, c)
                })
            })
            .collect();
        let done: Vec<(usize, _)> = threads.into_iter().map(|h| h.join().unwrap()).collect();
        let total: usize = done.iter().map(|(n, _)| n).sum();
        assert_eq!(
            total, 100,
            "{mode}: exactly max_prepared_stmt_count succeed"
        );
        let mut c = srv.connect();
        let n: Option<(String, u64)> = c
            .query_first("SHOW GLOBAL STATUS LIKE 'Prepared_stmt_count'")
            .unwrap();
        assert_eq!(n.map(|r| r.1), Some(100), "{mode}");
        drop(done);
    }
}

#[test]
fn kill_query_ends_a_row_loop_with_1317() {
    for mode in MODES {
        let srv = start(mode, &[]);
        let mut c = srv.connect();
        c.query_drop("CREATE DATABASE k").unwrap();
        c.query_drop("CREATE TABLE k.t (id INT PRIMARY KEY)")
            .unwrap();
        c.query_drop("INSERT INTO k.t VALUES (1), (2), (3)")
            .unwrap();
        let id = c.connection_id();
        // A SLEEP in the condition, then one in a select item.
        for sql in [
            "SELECT id FROM k.t WHERE SLEEP(10)",
            "SELECT SLEEP(10), id FROM k.t",
        ] {
            let victim = std::thread::spawn(move || {
                let t = Instant::now();
                let r = c.query::<(i64, i64), _>(sql);
                (r, t.elapsed(), c)
            });
            std::thread::sleep(Duration::from_millis(500));
            srv.connect()
                .query_drop(format!("KILL QUERY {id}"))
                .unwrap();
            let (r, took, back) = victim.join().unwrap();
            c = back;
            assert_eq!(code(r), 1317, "{mode}: {sql}");
            assert!(took < Duration::from_secs(5), "{mode}: {sql}: {took:?}");
        }
        // The next statement is not killed.
        let t = Instant::now();
        let s: i64 = c.query_first("SELECT SLEEP(0.2)").unwrap().unwrap();
        assert_eq!(s, 0, "{mode}");
        assert!(t.elapsed() >= Duration::from_millis(200), "{mode}");
    }
}

#[test]
fn large_garbage_packets_leave_no_lasting_memory() {
    for mode in MODES {
        let srv = start(mode, &[]);
        let mut c = srv.raw_connect("root", "").unwrap();
        let warm = c.query("SELECT 1").unwrap();
        assert_eq!(warm.len(), 1);
        let (rss0, _) = srv.rss_and_threads();
        // 3 MiB that tokenize into about a million tokens, then fail to parse.
        let mut junk = vec![0x03];
        junk.extend(b"x1 + y2 * z3 , ".repeat((3 << 20) / 15));
        for _ in 0..40 {
            let mut wire = Vec::new();
            write_packet(&mut wire, &mut 0, &junk);
            c.stream_mut().write_all(&wire).unwrap();
            let (_, reply) = read_packet(c.stream_mut());
            assert_eq!(reply[0], 0xFF, "{mode}: a syntax error");
        }
        let (rss1, _) = srv.rss_and_threads();
        eprintln!("{mode}: RSS {rss0} KiB -> {rss1} KiB after 40 garbage 3 MiB queries");
        assert!(
            rss1 < rss0 + 16 * 1024,
            "{mode}: RSS grew from {rss0} to {rss1} KiB"
        );
    }
}

/// The server's virtual memory size in bytes, from /proc.
fn vm_size(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmSize:"))
        .and_then(|v| v.split_whitespace().next())
        .and_then(|v| v.parse::<u64>().ok())
        .unwrap_or(0)
        * 1024
}

/// In thread-per-connection mode a connection whose thread cannot be started gets 1135 and a
/// log line, and everyone else is served on. The server's address space is capped a little
/// above its size, so that a new connection thread's stack no longer fits.
#[test]
fn a_connection_without_a_thread_gets_1135() {
    let srv = start("one-thread-per-connection", &["--thread-cache-size=0"]);
    let mut first = srv.connect();
    let cap = vm_size(srv.pid()) + (24 << 20);
    let limit = libc::rlimit {
        rlim_cur: cap,
        rlim_max: cap,
    };
    // SAFETY: prlimit only reads `limit` and writes no old value.
    let set = unsafe {
        libc::prlimit(
            libc::pid_t::try_from(srv.pid()).unwrap(),
            libc::RLIMIT_AS,
            &limit,
            std::ptr::null_mut(),
        )
    };
    assert_eq!(set, 0, "prlimit: {}", std::io::Error::last_os_error());
    // Each connection thread reserves an 8 MiB stack: a few more fit, then none.
    let refused = (0..16).find_map(|_| match mysql::Conn::new(srv.opts("root", "")) {
        Ok(c) => {
            std::mem::forget(c);
            None
        }
        Err(mysql::Error::MySqlError(e)) => Some(e),
        Err(other) => panic!("expected 1135, got {other}"),
    });
    let e = refused.expect("a connection was refused");
    assert_eq!(e.code, 1135, "{e:?}");
    assert!(
        e.message.starts_with("Can't create a new thread (errno "),
        "{e:?}"
    );
    assert!(srv.wait_for_log(
        "[Warning] [Server] Can't create thread to handle new connection(errno=",
        Duration::from_secs(5)
    ));
    let one: i64 = first.query_first("SELECT 1").unwrap().unwrap();
    assert_eq!(one, 1, "the connection that had its thread is served on");
}
