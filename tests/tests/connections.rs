//! Connection limits: 2,000 concurrent connections in thread-per-connection mode, and
//! `max_connections` with the spare slot for CONNECTION_ADMIN, which a refused connection
//! never holds, and the 1040 sent in place of the greeting once that slot is taken too; and
//! every spelling of an account name that CREATE USER takes.

use std::io::Read;
use std::time::{Duration, Instant};

use mysql::prelude::*;
use tpbed_tests::{
    cli_output, each_mode, global_status as status, has_program, raise_nofile_limit, raw_code,
    raw_error, require_tool, TestServer,
};

#[test]
fn two_thousand_concurrent_connections_each_query_and_close_cleanly() {
    let limit = raise_nofile_limit();
    assert!(
        limit >= 4200,
        "the test needs 2,000 sockets; open-file limit is {limit}"
    );
    let srv = TestServer::start(&["--max-connections=4000"]);
    let n = 2000;
    let started = Instant::now();
    // Open from 8 threads at once, each holding its connections open.
    let per = n / 8;
    let handles: Vec<_> = (0..8)
        .map(|t| {
            let port = srv.port;
            std::thread::spawn(move || {
                let mut conns = Vec::with_capacity(per);
                for i in 0..per {
                    let stream = std::net::TcpStream::connect(("127.0.0.1", port)).unwrap();
                    stream
                        .set_read_timeout(Some(Duration::from_secs(60)))
                        .unwrap();
                    let mut c = protocol::client::blocking::Conn::connect(
                        stream,
                        protocol::client::ClientConfig::new("root", ""),
                    )
                    .unwrap_or_else(|e| panic!("connection {t}/{i}: {e}"));
                    let rows = c.query("SELECT CONNECTION_ID()").unwrap();
                    assert_eq!(rows.len(), 1);
                    conns.push(c);
                }
                conns
            })
        })
        .collect();
    let conns: Vec<_> = handles
        .into_iter()
        .flat_map(|h| h.join().unwrap())
        .collect();
    assert_eq!(conns.len(), n);
    let mut admin = srv.connect();
    assert!(status(&mut admin, "Threads_connected") > n as u64);
    assert!(status(&mut admin, "Max_used_connections") > n as u64);
    eprintln!("{n} connections open in {:?}", started.elapsed());
    for c in conns {
        c.quit().unwrap();
    }
    let end = Instant::now() + Duration::from_secs(30);
    while status(&mut admin, "Threads_connected") > 1 && Instant::now() < end {
        std::thread::sleep(Duration::from_millis(50));
    }
    assert_eq!(
        status(&mut admin, "Threads_connected"),
        1,
        "every connection closed"
    );
    assert_eq!(
        status(&mut admin, "Aborted_clients"),
        0,
        "COM_QUIT is a clean close"
    );
}

/// Creates `app` (no privileges) and `ops` (CONNECTION_ADMIN), both with password `pw`, on
/// `root`'s server.
fn create_app_and_ops(root: &mut mysql::Conn) {
    root.query_drop("CREATE USER 'app'@'%' IDENTIFIED BY 'pw'")
        .unwrap();
    root.query_drop("CREATE USER 'ops'@'%' IDENTIFIED BY 'pw'")
        .unwrap();
    root.query_drop("GRANT CONNECTION_ADMIN ON *.* TO 'ops'@'%'")
        .unwrap();
}

#[test]
fn connection_152_gets_1040_and_connection_admin_gets_the_spare_slot() {
    let srv = TestServer::start(&[]);
    // root stays connected: it is connection 1, so no connection is still closing when the
    // limit is reached.
    let mut root = srv.connect();
    create_app_and_ops(&mut root);
    let mc: u64 = root
        .query_first("SELECT @@max_connections")
        .unwrap()
        .unwrap();
    assert_eq!(mc, 151, "MySQL's default");
    let mut held = Vec::new();
    for i in 1..151 {
        held.push(
            srv.raw_connect("app", "pw")
                .unwrap_or_else(|e| panic!("connection {}: {e}", i + 1)),
        );
    }
    let e = raw_error(srv.raw_connect("app", "pw"));
    assert_eq!(
        (e.code, e.sql_state_str()),
        (1040, "08004"),
        "connection 152"
    );
    assert_eq!(e.message, "Too many connections");
    let mut ops = srv
        .raw_connect("ops", "pw")
        .expect("CONNECTION_ADMIN takes the spare slot");
    assert_eq!(ops.query("SELECT 1").unwrap().len(), 1);
    assert_eq!(
        raw_code(srv.raw_connect("ops", "pw")),
        1040,
        "only one spare slot"
    );
    drop(held);
}

each_mode! {
    /// Refused connections hold no slot, not even while they close: right after a run of
    /// 1040s, a CONNECTION_ADMIN user's connect takes the spare slot, round after round.
    fn connection_admin_connects_right_after_refused_connections(mode) {
        const MAX: u64 = 3;
        const ROUNDS: usize = 100;
        const REFUSED_PER_ROUND: usize = 5;
        let srv = mode.start(&[&format!("--max-connections={MAX}")]);
        // root and MAX - 1 app connections fill the ordinary slots.
        let mut root = srv.connect();
        create_app_and_ops(&mut root);
        let _held: Vec<_> = (1..MAX)
            .map(|i| {
                srv.raw_connect("app", "pw")
                    .unwrap_or_else(|e| panic!("app connection {i}: {e}"))
            })
            .collect();
        for round in 0..ROUNDS {
            for i in 0..REFUSED_PER_ROUND {
                assert_eq!(
                    raw_code(srv.raw_connect("app", "pw")),
                    1040,
                    "{mode:?} round {round}: app connection {i} past max_connections"
                );
            }
            let ops = srv.raw_connect("ops", "pw").unwrap_or_else(|e| {
                panic!("{mode:?} round {round}: CONNECTION_ADMIN refused right after 1040s: {e}")
            });
            ops.quit().unwrap();
            // The next round starts once the server has closed ops (its slot goes back
            // before it leaves the processlist).
            let end = Instant::now() + Duration::from_secs(10);
            while status(&mut root, "Threads_connected") > MAX {
                assert!(
                    Instant::now() < end,
                    "{mode:?} round {round}: ops still connected after 10 s"
                );
                std::thread::sleep(Duration::from_millis(1));
            }
        }
    }
}

#[test]
fn every_account_spelling_mysql_takes_names_the_same_account() {
    let srv = TestServer::start(&[]);
    let mut root = srv.connect();
    for sql in [
        "CREATE USER bare@'%' IDENTIFIED BY 'pw'",
        "CREATE USER 'quoted'@'%'",
        "CREATE USER `ticked`@`%`",
        "CREATE USER word@localhost",
        "CREATE USER alone",
        "CREATE USER dq@\"10.0.0.%\"",
    ] {
        root.query_drop(sql)
            .unwrap_or_else(|e| panic!("{sql}: {e}"));
    }
    let rows: Vec<(String, String)> = root
        .query(
            "SELECT user, host FROM mysql.user \
             WHERE user IN ('bare', 'quoted', 'ticked', 'word', 'alone', 'dq') ORDER BY user",
        )
        .unwrap();
    let rows: Vec<(&str, &str)> = rows.iter().map(|(u, h)| (u.as_str(), h.as_str())).collect();
    assert_eq!(
        rows,
        [
            ("alone", "%"),
            ("bare", "%"),
            ("dq", "10.0.0.%"),
            ("quoted", "%"),
            ("ticked", "%"),
            ("word", "localhost"),
        ]
    );
    root.query_drop("GRANT SELECT ON *.* TO bare@'%'").unwrap();
    srv.raw_connect("bare", "pw")
        .expect("bare@'%' logs in with its password");
}

/// One packet from `s`: its sequence id and payload.
fn read_packet(s: &mut std::net::TcpStream) -> (u8, Vec<u8>) {
    let mut header = [0u8; 4];
    s.read_exact(&mut header).expect("a packet header");
    let len = usize::from(header[0]) | usize::from(header[1]) << 8 | usize::from(header[2]) << 16;
    let mut payload = vec![0u8; len];
    s.read_exact(&mut payload).expect("a packet payload");
    (header[3], payload)
}

#[test]
fn past_the_spare_slot_1040_replaces_the_greeting_without_an_sqlstate() {
    let srv = TestServer::start(&["--max-connections=1"]);
    let mut root = srv.connect();
    // The spare slot: a connection that got its greeting and has not answered it.
    let mut spare = std::net::TcpStream::connect(("127.0.0.1", srv.port)).unwrap();
    spare
        .set_read_timeout(Some(Duration::from_secs(10)))
        .unwrap();
    let (_, greeting) = read_packet(&mut spare);
    assert_eq!(greeting[0], 10, "protocol version 10");
    // The client has not yet said it speaks protocol 4.1: no `#` and SQLSTATE, as mysqld.
    let mut refused = std::net::TcpStream::connect(("127.0.0.1", srv.port)).unwrap();
    refused
        .set_read_timeout(Some(Duration::from_secs(10)))
        .unwrap();
    let (seq, payload) = read_packet(&mut refused);
    let mut want = vec![0xff, 0x10, 0x04];
    want.extend_from_slice(b"Too many connections");
    assert_eq!(
        (seq, String::from_utf8_lossy(&payload)),
        (0, String::from_utf8_lossy(&want))
    );
    let mut rest = Vec::new();
    refused.read_to_end(&mut rest).unwrap();
    assert!(rest.is_empty(), "the server closes after the ERR: {rest:?}");
    // Clients still show the number and the message.
    match mysql::Conn::new(srv.opts("root", "")) {
        Err(mysql::Error::MySqlError(e)) => {
            assert_eq!((e.code, e.message.as_str()), (1040, "Too many connections"))
        }
        other => panic!("connecting past the spare slot: {other:?}"),
    }
    assert_eq!(raw_code(srv.raw_connect("root", "")), 1040);
    if require_tool("the mariadb CLI", has_program("mariadb")) {
        let out = cli_output("mariadb", srv.port, &["-uroot", "-e", "SELECT 1"], b"");
        let stderr = String::from_utf8_lossy(&out.stderr);
        // The CLI reports it as an error before its TLS handshake, naming the server's.
        assert!(
            !out.status.success() && stderr.contains("1040 - Too many connections"),
            "{stderr}"
        );
    }
    drop(spare);
    let one: i64 = root.query_first("SELECT 1").unwrap().unwrap();
    assert_eq!(one, 1);
}
