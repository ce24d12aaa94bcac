//! Bad input gets the right error or a clean close, one log line, and the server keeps
//! serving everyone else: wrong passwords, malformed handshakes, truncated and oversized
//! packets, random bytes, and thousands of mutated packets; each in every connection-handling
//! mode.

use std::io::{Read, Write};
use std::net::{Shutdown, TcpStream};
use std::time::Duration;

use mysql::prelude::*;
use protocol::packet::{frame_header, write_packet};
use rand::{Rng, SeedableRng};
use tpbed_tests::{each_mode, global_status, raw_error};

/// Reads everything the server sends until it closes (or `limit` passes).
fn read_to_close(s: &mut TcpStream, limit: Duration) -> Vec<u8> {
    s.set_read_timeout(Some(limit)).unwrap();
    let mut all = Vec::new();
    let mut buf = [0u8; 4096];
    loop {
        match s.read(&mut buf) {
            Ok(0) => return all,
            Ok(n) => all.extend_from_slice(&buf[..n]),
            Err(e) if e.kind() == std::io::ErrorKind::ConnectionReset => return all,
            Err(e) => panic!("server neither answered nor closed within {limit:?}: {e}"),
        }
    }
}

/// The first packet's payload in `bytes`.
fn first_payload(bytes: &[u8]) -> &[u8] {
    let (len, _) = frame_header(bytes).expect("a packet");
    &bytes[4..4 + len]
}

fn err_code(payload: &[u8]) -> u16 {
    assert_eq!(payload[0], 0xFF, "an ERR packet: {payload:?}");
    u16::from_le_bytes([payload[1], payload[2]])
}

each_mode! {
    fn wrong_password_and_unknown_user_get_1045_with_both_plugins(mode) {
        let srv = mode.start(&[]);
        let mut root = srv.connect();
        root.query_drop("CREATE USER 'nat'@'%' IDENTIFIED WITH mysql_native_password BY 'pw1'")
            .unwrap();
        root.query_drop("CREATE USER 'sha'@'%' IDENTIFIED BY 'pw2'")
            .unwrap();
        for (user, pw) in [("nat", "pw1"), ("sha", "pw2")] {
            let mut c =
                mysql::Conn::new(srv.opts(user, pw)).unwrap_or_else(|e| panic!("{user} logs in: {e}"));
            let u: String = c.query_first("SELECT CURRENT_USER()").unwrap().unwrap();
            assert_eq!(u, format!("{user}@%"));
            srv.raw_connect(user, pw)
                .unwrap_or_else(|e| panic!("raw client {user}: {e}"));
        }
        for (user, pw) in [
            ("nat", "bad"),
            ("sha", "bad"),
            ("nobody", "x"),
            ("root", "notempty"),
        ] {
            let e = raw_error(srv.raw_connect(user, pw));
            assert_eq!((e.code, e.sql_state_str()), (1045, "28000"), "{user}");
            let e = mysql::Conn::new(srv.opts(user, pw))
                .unwrap_err()
                .to_string();
            assert!(e.contains("1045"), "{user}: {e}");
        }
        assert!(srv.wait_for_log("wrong password for 'nat'", Duration::from_secs(2)));
        assert!(srv.wait_for_log("unknown user 'nobody'", Duration::from_secs(2)));
        // Each refused login (four users, two clients) is an aborted connect; the server goes
        // on serving.
        assert_eq!(global_status(&mut root, "Aborted_connects"), 8);
        assert_eq!(srv.scalar("SELECT 40+2"), "42");
    }
}

each_mode! {
    fn malformed_handshake_truncated_oversized_and_random_bytes(mode) {
        let srv = mode.start(&["--max-allowed-packet=2048", "--net-read-timeout=1"]);
        // Malformed handshake response: a packet too short to be one.
        let mut s = TcpStream::connect(("127.0.0.1", srv.port)).unwrap();
        let mut greeting = [0u8; 1024];
        let n = s.read(&mut greeting).unwrap();
        assert!(n > 4 && greeting[4] == 10, "protocol 10 greeting");
        let mut out = Vec::new();
        let mut seq = 1;
        write_packet(&mut out, &mut seq, &[1, 2, 3]);
        s.write_all(&out).unwrap();
        let reply = read_to_close(&mut s, Duration::from_secs(5));
        assert_eq!(err_code(first_payload(&reply)), 1043);
        assert!(srv.wait_for_log("malformed handshake response", Duration::from_secs(2)));

        // A truncated command packet: the header promises more than arrives; net_read_timeout=1.
        let mut c = srv.raw_connect("root", "").unwrap();
        c.stream_mut()
            .write_all(&[100, 0, 0, 0, 3, b's', b'e', b'l'])
            .unwrap();
        let s = c.stream_mut();
        let rest = read_to_close(s, Duration::from_secs(5));
        assert!(rest.is_empty(), "closed without a reply: {rest:?}");
        assert!(srv.wait_for_log(
            "Got timeout reading communication packets",
            Duration::from_secs(2)
        ));

        // A packet over max_allowed_packet: 1153 (08S01), then the connection closes.
        let mut c = srv.raw_connect("root", "").unwrap();
        let mut big = vec![3u8];
        big.extend(std::iter::repeat_n(b'x', 4096));
        let mut out = Vec::new();
        let mut seq = 0;
        write_packet(&mut out, &mut seq, &big);
        c.stream_mut().write_all(&out).unwrap();
        let reply = read_to_close(c.stream_mut(), Duration::from_secs(5));
        let p = first_payload(&reply);
        assert_eq!(err_code(p), 1153);
        assert_eq!(&p[4..9], b"08S01");
        assert!(srv.wait_for_log("bigger than 'max_allowed_packet'", Duration::from_secs(2)));

        // Random bytes after the handshake: an error or a clean close, never a hang.
        let mut rng = rand::rngs::StdRng::seed_from_u64(7);
        for _ in 0..20 {
            let mut c = srv.raw_connect("root", "").unwrap();
            let junk: Vec<u8> = (0..rng.random_range(1..300))
                .map(|_| rng.random())
                .collect();
            c.stream_mut().write_all(&junk).unwrap();
            c.stream_mut().shutdown(Shutdown::Write).unwrap();
            read_to_close(c.stream_mut(), Duration::from_secs(5));
        }

        // An unknown command byte: 1047 (08S01), and the connection goes on.
        let mut c = srv.raw_connect("root", "").unwrap();
        let mut out = Vec::new();
        let mut seq = 0;
        write_packet(&mut out, &mut seq, &[0x63, 1, 2]);
        c.stream_mut().write_all(&out).unwrap();
        let mut buf = [0u8; 256];
        let n = c.stream_mut().read(&mut buf).unwrap();
        let p = first_payload(&buf[..n]);
        assert_eq!(err_code(p), 1047);
        assert_eq!(&p[4..9], b"08S01");
        c.ping().expect("the connection still works after 1047");
        assert_eq!(srv.scalar("SELECT 40+2"), "42");
    }
}

/// Valid command packets to mutate.
fn seeds() -> Vec<Vec<u8>> {
    let mut v = vec![
        [&[3u8][..], b"select 1+1, @@version, concat('a', 'b')"].concat(),
        [
            &[3u8][..],
            b"SET @@session.wait_timeout = 100, autocommit = 1",
        ]
        .concat(),
        [&[3u8][..], b"show variables like 'max%'"].concat(),
        [&[0x16u8][..], b"select ?, ? + 1"].concat(),
        [&[2u8][..], b"mysql"].concat(),
        vec![0x0e],
        vec![0x1f],
        vec![0x09],
    ];
    // COM_STMT_EXECUTE of statement 1 with two parameters, types sent.
    let mut ex = vec![0x17, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 8, 0, 253, 0];
    ex.extend_from_slice(&7i64.to_le_bytes());
    ex.extend_from_slice(&[3, b'a', b'b', b'c']);
    v.push(ex);
    v
}

each_mode! {
    fn thousands_of_mutated_packets_then_the_server_still_answers(mode) {
        let srv = mode.start(&[]);
        let mut rng = rand::rngs::StdRng::seed_from_u64(2024);
        let seeds = seeds();
        let mut closed = 0;
        let rounds = 3000;
        let mut c = srv.raw_connect("root", "").unwrap();
        c.prepare("select ?, ? + 1").unwrap();
        for i in 0..rounds {
            let mut p = seeds[i % seeds.len()].clone();
            for _ in 0..rng.random_range(1..4) {
                match rng.random_range(0..3) {
                    0 => {
                        let at = rng.random_range(0..p.len());
                        p[at] = rng.random();
                    }
                    1 if p.len() > 1 => {
                        let cut = rng.random_range(1..p.len());
                        p.truncate(cut);
                    }
                    _ => {
                        let at = rng.random_range(0..=p.len());
                        p.insert(at, rng.random());
                    }
                }
            }
            let mut out = Vec::new();
            let mut seq = 0;
            write_packet(&mut out, &mut seq, &p);
            // COM_QUIT, SEND_LONG_DATA and STMT_CLOSE get no reply; ping after each packet so every
            // round ends on a known reply (or the close the packet asked for).
            write_packet(&mut out, &mut 0, &[0x0e]);
            if c.stream_mut().write_all(&out).is_err() {
                closed += 1;
                c = srv.raw_connect("root", "").unwrap();
                c.prepare("select ?, ? + 1").unwrap();
                continue;
            }
            // Read until the ping's OK: the last packet received is a 7+ byte OK with seq 1.
            let s = c.stream_mut();
            s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
            let mut got = Vec::new();
            let mut buf = [0u8; 8192];
            let alive = loop {
                match s.read(&mut buf) {
                    Ok(0) | Err(_) if got.is_empty() || !ends_with_ping_ok(&got) => break false,
                    Ok(n) => {
                        got.extend_from_slice(&buf[..n]);
                        if ends_with_ping_ok(&got) {
                            break true;
                        }
                    }
                    Err(_) => break false,
                }
            };
            if !alive {
                closed += 1;
                c = srv.raw_connect("root", "").unwrap();
                c.prepare("select ?, ? + 1").unwrap();
            }
        }
        assert_eq!(srv.scalar("SELECT 'still here'"), "still here");
        let mut check = srv.connect();
        let n: i64 = check.query_first("SELECT 6*7").unwrap().unwrap();
        assert_eq!(n, 42);
        eprintln!("{rounds} mutated packets, {closed} connections closed by the server or the packet");
    }
}

/// Whether `bytes` ends with a complete OK packet with sequence id 1 (a ping's reply).
fn ends_with_ping_ok(bytes: &[u8]) -> bool {
    let mut at = 0;
    let mut last = None;
    while let Some((len, seq)) = frame_header(&bytes[at..]) {
        if bytes.len() < at + 4 + len {
            return false;
        }
        last = Some((seq, bytes[at + 4..at + 4 + len].to_vec()));
        at += 4 + len;
    }
    at == bytes.len() && matches!(last, Some((1, p)) if p.first() == Some(&0))
}

each_mode! {
    /// libmariadb answers with `dummy_fallback_auth` and an empty response when it fails to load
    /// a client plugin (it does under concurrent connects, as sysbench's do): the server must ask
    /// for the account's plugin with an auth switch instead of checking the empty response.
    fn an_unknown_client_plugin_gets_an_auth_switch(mode) {
        use protocol::handshake::{AuthSwitchRequest, HandshakeResponse, HandshakeV10};
        let srv = mode.start(&[]);
        srv.connect()
            .query_drop("CREATE USER 'fb'@'%' IDENTIFIED WITH mysql_native_password BY 'pw'")
            .unwrap();
        let mut s = TcpStream::connect(("127.0.0.1", srv.port)).unwrap();
        s.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
        let mut buf = [0u8; 1024];
        let n = s.read(&mut buf).unwrap();
        let greeting = HandshakeV10::decode(first_payload(&buf[..n])).unwrap();
        let resp = HandshakeResponse {
            capabilities: protocol::Capabilities::CLIENT_DEFAULT,
            max_packet: 1 << 24,
            charset: 45,
            username: "fb".into(),
            auth_response: Vec::new(),
            database: None,
            auth_plugin_name: Some("dummy_fallback_auth".into()),
            connect_attrs: Vec::new(),
        };
        let mut out = Vec::new();
        let mut payload = Vec::new();
        resp.encode(&mut payload);
        write_packet(&mut out, &mut 1, &payload);
        s.write_all(&out).unwrap();
        let n = s.read(&mut buf).unwrap();
        let switch =
            AuthSwitchRequest::decode(first_payload(&buf[..n])).expect("an auth switch, not 1045");
        assert_eq!(switch.plugin, "mysql_native_password");
        let nonce = &switch.data[..20];
        assert_eq!(nonce, &greeting.auth_plugin_data[..]);
        let mut out = Vec::new();
        write_packet(
            &mut out,
            &mut 3,
            &protocol::auth::native_password_scramble(b"pw", nonce),
        );
        s.write_all(&out).unwrap();
        let n = s.read(&mut buf).unwrap();
        assert_eq!(first_payload(&buf[..n])[0], 0x00, "OK after the switch");
    }
}
