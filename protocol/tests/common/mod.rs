//! A scripted in-memory server built only from the crate's server-side pieces, so client
//! tests exercise "server encode -> client decode" and "client encode -> server decode" at
//! once, and a pump that moves bytes between the two in arbitrary chunks.

#![allow(dead_code, unreachable_pub)] // each test binary uses a different part of the helper

use protocol::auth::{
    caching_sha2_hash, caching_sha2_verify, native_password_hash, native_password_verify,
};
use protocol::client::{ClientConfig, ClientConnection, ClientEvent};
use protocol::command::{decode_execute_params, Command};
use protocol::handshake::{
    AuthMoreData, AuthSwitchRequest, HandshakeResponse, HandshakeV10, CACHING_SHA2_PASSWORD,
    NATIVE_PASSWORD,
};
use protocol::packet::{write_packet_with, Framer};
use protocol::resultset::{write_prepare_ok, ResultSetWriter};
use protocol::{
    BinaryValue, Capabilities, ColumnDefinition, ColumnFlags, ColumnType, EofPacket, ErrPacket,
    OkPacket, StatusFlags,
};

pub const USER: &str = "sbtest";
pub const PASSWORD: &str = "s3cret";
pub const NONCE: [u8; 20] = *b"0123456789abcdefghij";
pub const NONCE2: [u8; 20] = *b"ABCDEFGHIJ0123456789";

/// How the scripted server authenticates.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AuthMode {
    /// Greets with mysql_native_password.
    Native,
    /// Greets with caching_sha2_password; the fast path succeeds.
    Sha2Fast,
    /// Greets with caching_sha2_password and demands full authentication.
    Sha2Full,
    /// Greets with caching_sha2_password, then switches to mysql_native_password.
    SwitchToNative,
}

#[derive(Debug)]
enum Phase {
    Auth,
    Switched,
    Commands,
}

#[derive(Debug)]
pub struct MiniServer {
    framer: Framer,
    pub out: Vec<u8>,
    caps: Capabilities,
    mode: AuthMode,
    phase: Phase,
    stmt_types: Vec<(ColumnType, bool)>,
    pub commands_seen: usize,
}

pub fn columns() -> Vec<ColumnDefinition> {
    let mut id = ColumnDefinition::new("id", ColumnType::Long);
    id.flags = ColumnFlags::NOT_NULL | ColumnFlags::PRI_KEY | ColumnFlags::UNSIGNED;
    vec![
        id,
        ColumnDefinition::new("c", ColumnType::VarString),
        ColumnDefinition::new("n", ColumnType::LongLong),
    ]
}

impl MiniServer {
    pub fn new(mode: AuthMode, caps: Capabilities) -> Self {
        let plugin = if mode == AuthMode::Native {
            NATIVE_PASSWORD
        } else {
            CACHING_SHA2_PASSWORD
        };
        let hello = HandshakeV10 {
            server_version: "8.0.36-tpbed".into(),
            connection_id: 42,
            auth_plugin_data: NONCE,
            capabilities: caps,
            charset: 255,
            status: StatusFlags::AUTOCOMMIT,
            auth_plugin_name: plugin.into(),
        };
        let mut out = Vec::new();
        let mut seq = 0;
        write_packet_with(&mut out, &mut seq, |o| hello.encode(o));
        Self {
            framer: Framer::new(1 << 26),
            out,
            caps,
            mode,
            phase: Phase::Auth,
            stmt_types: Vec::new(),
            commands_seen: 0,
        }
    }

    pub fn feed(&mut self, bytes: &[u8]) {
        self.framer.push(bytes);
        while let Some((seq, payload)) = self.framer.next_packet().expect("client framing") {
            self.handle(seq, &payload);
        }
    }

    fn ok(&mut self, seq: u8, ok: OkPacket) {
        let mut seq = seq;
        ok.write(&mut self.out, &mut seq, self.caps);
    }

    fn handle(&mut self, seq: u8, payload: &[u8]) {
        let mut next = seq.wrapping_add(1);
        match self.phase {
            Phase::Auth => {
                let resp = HandshakeResponse::decode(payload).expect("handshake response");
                assert_eq!(resp.username, USER);
                self.caps &= resp.capabilities;
                let good = match self.mode {
                    AuthMode::Native => native_password_verify(
                        &native_password_hash(PASSWORD.as_bytes()),
                        &NONCE,
                        &resp.auth_response,
                    ),
                    _ => caching_sha2_verify(
                        &caching_sha2_hash(PASSWORD.as_bytes()),
                        &NONCE,
                        &resp.auth_response,
                    ),
                };
                match self.mode {
                    _ if !good => ErrPacket::new(1045, "28000", "Access denied")
                        .write(&mut self.out, &mut next),
                    AuthMode::Native => {
                        self.phase = Phase::Commands;
                        self.ok(
                            next,
                            OkPacket {
                                status: StatusFlags::AUTOCOMMIT,
                                ..OkPacket::default()
                            },
                        );
                    }
                    AuthMode::Sha2Fast | AuthMode::Sha2Full => {
                        let verdict = if self.mode == AuthMode::Sha2Fast {
                            AuthMoreData::FAST_AUTH_SUCCESS
                        } else {
                            AuthMoreData::PERFORM_FULL_AUTH
                        };
                        write_packet_with(&mut self.out, &mut next, |o| {
                            AuthMoreData {
                                data: vec![verdict],
                            }
                            .encode(o)
                        });
                        if self.mode == AuthMode::Sha2Fast {
                            self.phase = Phase::Commands;
                            self.ok(
                                next,
                                OkPacket {
                                    status: StatusFlags::AUTOCOMMIT,
                                    ..OkPacket::default()
                                },
                            );
                        }
                    }
                    AuthMode::SwitchToNative => {
                        self.phase = Phase::Switched;
                        let sw = AuthSwitchRequest {
                            plugin: NATIVE_PASSWORD.into(),
                            data: NONCE2.to_vec(),
                        };
                        write_packet_with(&mut self.out, &mut next, |o| sw.encode(o));
                    }
                }
            }
            Phase::Switched => {
                let stored = native_password_hash(PASSWORD.as_bytes());
                if native_password_verify(&stored, &NONCE2, payload) {
                    self.phase = Phase::Commands;
                    self.ok(
                        next,
                        OkPacket {
                            status: StatusFlags::AUTOCOMMIT,
                            ..OkPacket::default()
                        },
                    );
                } else {
                    ErrPacket::new(1045, "28000", "Access denied").write(&mut self.out, &mut next);
                }
            }
            Phase::Commands => {
                self.commands_seen += 1;
                assert_eq!(seq, 0, "commands start at sequence 0");
                self.command(payload, next);
            }
        }
    }

    fn command(&mut self, payload: &[u8], mut seq: u8) {
        let caps = self.caps;
        match Command::decode(payload) {
            Err(e) => ErrPacket::new(1047, "08S01", e.to_string()).write(&mut self.out, &mut seq),
            Ok(Command::Query(sql)) => self.query(std::str::from_utf8(sql).unwrap_or(""), seq),
            Ok(
                Command::Ping
                | Command::ResetConnection
                | Command::InitDb(_)
                | Command::StmtReset(_),
            ) => self.ok(
                seq,
                OkPacket {
                    status: StatusFlags::AUTOCOMMIT,
                    ..OkPacket::default()
                },
            ),
            Ok(Command::SetOption(_)) => {
                write_packet_with(&mut self.out, &mut seq, |o| EofPacket::default().encode(o));
            }
            Ok(Command::Statistics) => write_packet_with(&mut self.out, &mut seq, |o| {
                o.extend_from_slice(b"Uptime: 1")
            }),
            Ok(Command::StmtPrepare(_)) => {
                let params = [ColumnDefinition::new("?", ColumnType::LongLong)];
                write_prepare_ok(&mut self.out, &mut seq, caps, 7, &params, &columns(), 0);
            }
            Ok(Command::StmtExecute(ex)) => {
                match decode_execute_params(ex.params, 1, &mut self.stmt_types) {
                    Err(e) => {
                        ErrPacket::new(1210, "HY000", e.to_string()).write(&mut self.out, &mut seq)
                    }
                    Ok(values) => {
                        let cols = columns();
                        let mut rows = ResultSetWriter::start(&mut self.out, &mut seq, caps, &cols);
                        rows.binary_row(
                            &[
                                BinaryValue::UInt(1),
                                BinaryValue::Bytes(b"p".to_vec()),
                                values[0].clone(),
                            ],
                            &cols,
                        );
                        rows.binary_row(
                            &[BinaryValue::UInt(2), BinaryValue::Null, BinaryValue::Null],
                            &cols,
                        );
                        rows.finish(StatusFlags::AUTOCOMMIT, 0);
                    }
                }
            }
            Ok(Command::StmtClose(_) | Command::Quit) => {}
            Ok(Command::FieldList { .. }) => {
                for c in columns() {
                    write_packet_with(&mut self.out, &mut seq, |o| c.encode(o));
                }
                self.terminator(seq, StatusFlags::AUTOCOMMIT);
            }
            Ok(_) => {
                ErrPacket::new(1047, "08S01", "Unknown command").write(&mut self.out, &mut seq)
            }
        }
    }

    fn terminator(&mut self, mut seq: u8, status: StatusFlags) {
        if self.caps.contains(Capabilities::DEPRECATE_EOF) {
            let ok = OkPacket {
                status,
                ..OkPacket::default()
            };
            write_packet_with(&mut self.out, &mut seq, |o| ok.encode_as_eof(self.caps, o));
        } else {
            write_packet_with(&mut self.out, &mut seq, |o| {
                EofPacket {
                    warnings: 0,
                    status,
                }
                .encode(o)
            });
        }
    }

    /// `SELECT <n>` answers n rows; `ERR` an error; `MULTI` an OK then a 1-row result set;
    /// `BIG <n>` one row with an n-byte cell; anything else an OK with 1 affected row.
    fn query(&mut self, sql: &str, mut seq: u8) {
        let caps = self.caps;
        let mut words = sql.split_whitespace();
        match (
            words.next(),
            words.next().and_then(|w| w.parse::<usize>().ok()),
        ) {
            (Some("SELECT"), Some(n)) => {
                let cols = columns();
                let mut rows = ResultSetWriter::start(&mut self.out, &mut seq, caps, &cols);
                for i in 0..n {
                    let id = i.to_string();
                    rows.text_row([Some(id.as_bytes()), Some(&b"row"[..]), None]);
                }
                rows.finish(StatusFlags::AUTOCOMMIT, 0);
            }
            (Some("BIG"), Some(n)) => {
                let cols = &columns()[1..2];
                let cell = vec![b'x'; n];
                let mut rows = ResultSetWriter::start(&mut self.out, &mut seq, caps, cols);
                rows.text_row([Some(cell.as_slice())]);
                rows.finish(StatusFlags::AUTOCOMMIT, 0);
            }
            (Some("ERR"), _) => {
                ErrPacket::new(1064, "42000", "syntax").write(&mut self.out, &mut seq)
            }
            (Some("MULTI"), _) => {
                let ok = OkPacket {
                    affected_rows: 3,
                    status: StatusFlags::AUTOCOMMIT | StatusFlags::MORE_RESULTS_EXISTS,
                    ..OkPacket::default()
                };
                ok.write(&mut self.out, &mut seq, caps);
                let cols = &columns()[..1];
                let mut rows = ResultSetWriter::start(&mut self.out, &mut seq, caps, cols);
                rows.text_row([Some(&b"1"[..])]);
                rows.finish(StatusFlags::AUTOCOMMIT, 0);
            }
            _ => self.ok(
                seq,
                OkPacket {
                    affected_rows: 1,
                    last_insert_id: 5,
                    status: StatusFlags::AUTOCOMMIT,
                    warnings: 0,
                    info: String::new(),
                },
            ),
        }
    }
}

pub fn config() -> ClientConfig {
    let mut c = ClientConfig::new(USER, PASSWORD);
    c.database = Some("sbtest".into());
    c
}

/// Moves bytes both ways, cutting each transfer into pieces of the sizes in `chunks`
/// (cycled; 0 is read as 1), and collects the client's events until both sides are quiet.
pub fn pump(
    client: &mut ClientConnection,
    server: &mut MiniServer,
    chunks: &[usize],
) -> Vec<Result<ClientEvent, protocol::ProtocolError>> {
    let mut events = Vec::new();
    let mut sizes = chunks.iter().copied().cycle();
    let mut next_size = move || sizes.next().unwrap_or(usize::MAX).max(1);
    loop {
        let mut moved = false;
        while let Some(bytes) = client.poll_transmit() {
            let n = bytes.len().min(next_size());
            let piece = bytes[..n].to_vec();
            client.consume_transmit(n);
            server.feed(&piece);
            moved = true;
        }
        let from_server = std::mem::take(&mut server.out);
        for piece in from_server.chunks(next_size().min(from_server.len().max(1))) {
            client.feed(piece);
            while let Some(ev) = client.poll_event() {
                events.push(ev);
            }
            moved = true;
        }
        while let Some(ev) = client.poll_event() {
            events.push(ev);
        }
        if !moved {
            return events;
        }
    }
}
