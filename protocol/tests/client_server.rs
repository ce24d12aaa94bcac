//! The client against the scripted server: login in every auth mode, text and binary result
//! sets, multi-results, prepare/execute type reuse, pipelining, both EOF styles.

mod common;

use common::{config, pump, AuthMode, MiniServer, PASSWORD};
use proptest::prelude::*;
use protocol::client::{ClientConfig, ClientConnection, ClientEvent};
use protocol::{BinaryValue, Capabilities, ProtocolError, StatusFlags};

fn eof_styles() -> [Capabilities; 2] {
    [
        Capabilities::SERVER_DEFAULT,
        Capabilities::SERVER_DEFAULT.difference(Capabilities::DEPRECATE_EOF),
    ]
}

fn connected(mode: AuthMode, caps: Capabilities) -> (ClientConnection, MiniServer) {
    let mut client = ClientConnection::new(config());
    let mut server = MiniServer::new(mode, caps);
    let events = pump(&mut client, &mut server, &[usize::MAX]);
    assert!(
        matches!(
            events.as_slice(),
            [Ok(ClientEvent::Connected {
                connection_id: 42,
                ..
            })]
        ),
        "{events:?}"
    );
    assert!(client.is_idle());
    (client, server)
}

#[test]
fn login_in_every_mode() {
    for caps in eof_styles() {
        for mode in [
            AuthMode::Native,
            AuthMode::Sha2Fast,
            AuthMode::SwitchToNative,
        ] {
            let (client, _) = connected(mode, caps);
            assert_eq!(client.server_version(), "8.0.36-tpbed");
            assert!(client.status().contains(StatusFlags::AUTOCOMMIT));
        }
    }
}

#[test]
fn wrong_password_is_auth_failed() {
    for mode in [
        AuthMode::Native,
        AuthMode::Sha2Fast,
        AuthMode::SwitchToNative,
    ] {
        let mut cfg = config();
        cfg.password = format!("{PASSWORD}x");
        let mut client = ClientConnection::new(cfg);
        let mut server = MiniServer::new(mode, Capabilities::SERVER_DEFAULT);
        let events = pump(&mut client, &mut server, &[3]);
        assert!(
            matches!(events.as_slice(), [Ok(ClientEvent::AuthFailed(e))] if e.code == 1045),
            "{events:?}"
        );
        assert!(client.is_closed());
    }
}

#[test]
fn sha2_full_auth_is_a_clear_error() {
    let mut client = ClientConnection::new(config());
    let mut server = MiniServer::new(AuthMode::Sha2Full, Capabilities::SERVER_DEFAULT);
    let events = pump(&mut client, &mut server, &[usize::MAX]);
    match events.as_slice() {
        [Err(ProtocolError::Unsupported(msg))] => assert!(msg.contains("TLS")),
        other => panic!("{other:?}"),
    }
}

#[test]
fn text_results_errors_and_multi_results() {
    for caps in eof_styles() {
        let (mut client, mut server) = connected(AuthMode::Native, caps);
        client.query("SELECT 3");
        client.query("ERR");
        client.query("MULTI");
        client.query("UPDATE");
        let events: Vec<ClientEvent> = pump(&mut client, &mut server, &[5, 1, 7])
            .into_iter()
            .map(Result::unwrap)
            .collect();
        let rows: Vec<_> = events
            .iter()
            .filter_map(|e| match e {
                ClientEvent::Row(r) => Some(r.text_values().unwrap()),
                _ => None,
            })
            .collect();
        assert_eq!(rows.len(), 4);
        assert_eq!(
            rows[2],
            vec![Some(b"2".to_vec()), Some(b"row".to_vec()), None]
        );
        assert!(matches!(events[0], ClientEvent::ResultColumns(ref c) if c.len() == 3));
        assert!(events
            .iter()
            .any(|e| matches!(e, ClientEvent::Error(err) if err.code == 1064)));
        assert!(events
            .iter()
            .any(|e| matches!(e, ClientEvent::Ok(ok) if ok.affected_rows == 3)));
        assert!(matches!(events.last(), Some(ClientEvent::Ok(ok)) if ok.last_insert_id == 5));
        let dones = events
            .iter()
            .filter(|e| {
                matches!(
                    e,
                    ClientEvent::ResultDone {
                        more_results: false,
                        ..
                    }
                )
            })
            .count();
        assert_eq!(dones, 2);
        assert!(client.is_idle());
    }
}

#[test]
fn prepare_and_execute_reuse_types() {
    for caps in eof_styles() {
        let (mut client, mut server) = connected(AuthMode::Sha2Fast, caps);
        client.prepare("SELECT id, c, n FROM t WHERE id = ?");
        let events = pump(&mut client, &mut server, &[2]);
        let Some(Ok(ClientEvent::Prepared {
            stmt_id,
            params,
            columns,
        })) = events.into_iter().next()
        else {
            panic!("no Prepared")
        };
        assert_eq!((stmt_id, params.len(), columns.len()), (7, 1, 3));
        for (i, v) in [BinaryValue::Int(-9), BinaryValue::Int(10)]
            .into_iter()
            .enumerate()
        {
            client.execute(stmt_id, std::slice::from_ref(&v));
            // header 4 + command 1 + id 4 + flags 1 + iterations 4 + null bitmap 1
            let new_params_bound = client.poll_transmit().unwrap()[15];
            assert_eq!(new_params_bound, u8::from(i == 0));
            let events: Vec<ClientEvent> = pump(&mut client, &mut server, &[4])
                .into_iter()
                .map(Result::unwrap)
                .collect();
            let cols = match &events[0] {
                ClientEvent::ResultColumns(c) => c.clone(),
                other => panic!("{other:?}"),
            };
            let ClientEvent::Row(row) = &events[1] else {
                panic!("{:?}", events[1])
            };
            assert!(row.is_binary());
            assert_eq!(
                row.binary_values(&cols).unwrap(),
                vec![BinaryValue::UInt(1), BinaryValue::Bytes(b"p".to_vec()), v]
            );
            let ClientEvent::Row(row) = &events[2] else {
                panic!()
            };
            assert_eq!(row.binary_values(&cols).unwrap()[1], BinaryValue::Null);
            assert!(matches!(events[3], ClientEvent::ResultDone { .. }));
        }
        // A NULL changes the bound types, so they are sent again (the server would otherwise
        // reject an execute without types; it answers with a row here).
        client.execute(stmt_id, &[BinaryValue::Null]);
        let events = pump(&mut client, &mut server, &[usize::MAX]);
        assert!(events.iter().all(Result::is_ok));
        assert!(matches!(events[1], Ok(ClientEvent::Row(_))));
        client.close_stmt(stmt_id);
        assert!(pump(&mut client, &mut server, &[1]).is_empty());
    }
}

#[test]
fn simple_commands() {
    let (mut client, mut server) = connected(
        AuthMode::Native,
        Capabilities::SERVER_DEFAULT.difference(Capabilities::DEPRECATE_EOF),
    );
    client.ping();
    client.set_option(1);
    client.statistics();
    client.reset_stmt(7);
    client.init_db("x");
    client.reset_connection();
    client.field_list("t", "");
    client.raw_command(&[0x00]);
    let events: Vec<ClientEvent> = pump(&mut client, &mut server, &[usize::MAX])
        .into_iter()
        .map(Result::unwrap)
        .collect();
    assert_eq!(events.len(), 8, "{events:?}");
    assert!(matches!(&events[2], ClientEvent::Statistics(s) if s == "Uptime: 1"));
    assert!(matches!(&events[6], ClientEvent::ResultColumns(c) if c.len() == 3));
    assert!(matches!(&events[7], ClientEvent::Error(e) if e.code == 1047));
    client.quit();
    assert!(client.is_closed());
    assert_eq!(client.poll_transmit(), Some(&[1, 0, 0, 0, 1][..]));
}

#[test]
fn commands_before_login_are_held() {
    let mut client = ClientConnection::new(ClientConfig {
        database: None,
        ..config()
    });
    client.query("SELECT 1");
    assert!(client.poll_transmit().is_none());
    let mut server = MiniServer::new(AuthMode::Native, Capabilities::SERVER_DEFAULT);
    let events = pump(&mut client, &mut server, &[usize::MAX]);
    assert!(matches!(events[0], Ok(ClientEvent::Connected { .. })));
    assert_eq!(events.len(), 4);
}

/// A `Read + Write` that is the scripted server.
struct Duplex(MiniServer);

impl std::io::Read for Duplex {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = buf.len().min(self.0.out.len()).min(3);
        buf[..n].copy_from_slice(&self.0.out[..n]);
        self.0.out.drain(..n);
        Ok(n)
    }
}

impl std::io::Write for Duplex {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.feed(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

#[test]
fn blocking_wrapper() {
    use protocol::client::blocking::{ClientError, Conn};
    let server = MiniServer::new(AuthMode::Sha2Fast, Capabilities::SERVER_DEFAULT);
    let mut conn = Conn::connect(Duplex(server), config()).unwrap();
    assert_eq!(conn.query("SELECT 2").unwrap().len(), 2);
    let res = conn.query_result("UPDATE").unwrap();
    assert_eq!((res.affected_rows, res.last_insert_id), (1, 5));
    assert!(matches!(conn.query("ERR"), Err(ClientError::Server(e)) if e.code == 1064));
    let stmt = conn.prepare("SELECT ?").unwrap();
    let rows = conn.execute(stmt.stmt_id, &[BinaryValue::Int(3)]).unwrap();
    assert_eq!(rows[0][2], BinaryValue::Int(3));
    conn.ping().unwrap();
    assert!(matches!(conn.raw_command(&[0xEE]), Err(ClientError::Server(e)) if e.code == 1047));
    conn.close_stmt(stmt.stmt_id).unwrap();
    let server = conn.quit().unwrap();
    assert!(server.0.commands_seen >= 8);

    let mut bad = config();
    bad.password.clear();
    let server = MiniServer::new(AuthMode::Native, Capabilities::SERVER_DEFAULT);
    assert!(
        matches!(Conn::connect(Duplex(server), bad), Err(ClientError::Server(e)) if e.code == 1045)
    );
}

/// The events of a fixed conversation, as comparable values.
fn conversation(chunks: &[usize], caps: Capabilities, mode: AuthMode) -> Vec<String> {
    let mut client = ClientConnection::new(config());
    let mut server = MiniServer::new(mode, caps);
    client.query("SELECT 3");
    client.query("MULTI");
    client.prepare("SELECT ?");
    client.execute(7, &[BinaryValue::Bytes(b"abc".to_vec())]);
    client.execute(7, &[BinaryValue::Bytes(b"de".to_vec())]);
    client.query("ERR");
    client.ping();
    pump(&mut client, &mut server, chunks)
        .into_iter()
        .map(|e| format!("{:?}", e.unwrap()))
        .collect()
}

proptest! {
    #[test]
    fn client_events_do_not_depend_on_chunking(chunks in proptest::collection::vec(1usize..64, 1..10),
                                               deprecate in any::<bool>(), sha2 in any::<bool>()) {
        let mut caps = Capabilities::SERVER_DEFAULT;
        caps.set(Capabilities::DEPRECATE_EOF, deprecate);
        let mode = if sha2 { AuthMode::Sha2Fast } else { AuthMode::Native };
        let whole = conversation(&[usize::MAX], caps, mode);
        prop_assert_eq!(whole.len(), 21);
        prop_assert_eq!(conversation(&chunks, caps, mode), whole);
    }
}
