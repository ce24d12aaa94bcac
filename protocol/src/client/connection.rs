//! The client state machine: login (greeting, response, auth switch, caching_sha2 fast
//! path), then a FIFO of commands in flight whose replies `replies` parses packet by packet.
//!
//! Invariant: every reply packet belongs to the oldest command in `pending`, and its sequence
//! id is the one that command's reply expects next.

use std::collections::{HashMap, VecDeque};

use super::replies::{on_reply, ColumnCache, Expect, Pending, PrepareStage, ResultStage};
use super::{ClientConfig, ClientEvent, RowData};
use crate::auth::{caching_sha2_scramble, native_password_scramble};
use crate::caps::{Capabilities, StatusFlags};
use crate::column::ColumnType;
use crate::command::{code, encode_execute_params};
use crate::error::ProtocolError;
use crate::handshake::{
    AuthMoreData, AuthSwitchRequest, HandshakeResponse, HandshakeV10, CACHING_SHA2_PASSWORD,
    NATIVE_PASSWORD,
};
use crate::lenenc::{put_nul_str, put_u16, put_u32};
use crate::packet::{fragment_count, write_packet, write_packet_with, Framer};
use crate::reply::{ErrPacket, OkPacket};
use crate::value::BinaryValue;

/// Capabilities this client never asks for, because it does not implement them.
const NEVER: Capabilities = Capabilities::SSL
    .union(Capabilities::COMPRESS)
    .union(Capabilities::QUERY_ATTRIBUTES)
    .union(Capabilities::OPTIONAL_RESULTSET_METADATA)
    .union(Capabilities::ZSTD_COMPRESSION_ALGORITHM)
    .union(Capabilities::MULTI_FACTOR_AUTHENTICATION)
    .union(Capabilities::LOCAL_FILES);

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Plugin {
    Native,
    CachingSha2,
}

impl Plugin {
    fn from_name(name: &str) -> Option<Self> {
        match name {
            NATIVE_PASSWORD => Some(Self::Native),
            CACHING_SHA2_PASSWORD => Some(Self::CachingSha2),
            _ => None,
        }
    }

    fn name(self) -> &'static str {
        match self {
            Self::Native => NATIVE_PASSWORD,
            Self::CachingSha2 => CACHING_SHA2_PASSWORD,
        }
    }

    fn scramble(self, password: &[u8], nonce: &[u8]) -> Vec<u8> {
        match self {
            Self::Native => native_password_scramble(password, nonce),
            Self::CachingSha2 => caching_sha2_scramble(password, nonce),
        }
    }
}

#[derive(Debug)]
enum Phase {
    Greeting,
    Auth {
        plugin: Plugin,
        seq: u8,
    },
    Ready,
    /// Login refused, QUIT sent, or a fatal error: nothing more is sent or accepted.
    Closed,
}

/// A sans-I/O MySQL client connection; see the [module docs](super) for how to drive it.
#[derive(Debug)]
pub struct ClientConnection {
    config: ClientConfig,
    phase: Phase,
    caps: Capabilities,
    framer: Framer,
    out: Vec<u8>,
    out_pos: usize,
    /// Commands issued before login completed.
    deferred: Vec<u8>,
    pending: VecDeque<Pending>,
    /// Parameter types last sent per statement, to set new-params-bound only when they change.
    stmt_types: HashMap<u32, Vec<(ColumnType, bool)>>,
    /// COM_QUIT was issued: no further commands are accepted.
    quit_sent: bool,
    /// Result columns per statement, when MariaDB's MARIADB_CLIENT_CACHE_METADATA was
    /// negotiated (the server then skips unchanged metadata in execute results).
    column_cache: Option<ColumnCache>,
    connection_id: u32,
    server_version: String,
    status: StatusFlags,
}

impl ClientConnection {
    /// A connection waiting for the server's greeting.
    pub fn new(config: ClientConfig) -> Self {
        let framer = Framer::new(usize::try_from(config.max_packet).unwrap_or(usize::MAX));
        Self {
            config,
            phase: Phase::Greeting,
            caps: Capabilities::empty(),
            framer,
            out: Vec::new(),
            out_pos: 0,
            deferred: Vec::new(),
            pending: VecDeque::new(),
            stmt_types: HashMap::new(),
            quit_sent: false,
            column_cache: None,
            connection_id: 0,
            server_version: String::new(),
            status: StatusFlags::empty(),
        }
    }

    /// Hands over bytes received from the server; decode them with [`Self::poll_event`].
    pub fn feed(&mut self, bytes: &[u8]) {
        self.framer.push(bytes);
    }

    /// Hands a row's buffer back once the caller is done with it, so a later packet reuses
    /// the allocation (optional: a row simply dropped costs one allocation per row).
    pub fn recycle_row(&mut self, row: RowData) {
        self.framer.recycle(row.into_raw());
    }

    /// Bytes waiting to be sent, if any.
    pub fn poll_transmit(&self) -> Option<&[u8]> {
        let rest = self.out.get(self.out_pos..).unwrap_or(&[]);
        (!rest.is_empty()).then_some(rest)
    }

    /// Marks the first `n` bytes of [`Self::poll_transmit`] as sent.
    pub fn consume_transmit(&mut self, n: usize) {
        self.out_pos = (self.out_pos + n).min(self.out.len());
        if self.out_pos == self.out.len() {
            self.out.clear();
            self.out_pos = 0;
        }
    }

    /// Moves all bytes waiting to be sent to the end of `dst`.
    pub fn take_transmit(&mut self, dst: &mut Vec<u8>) {
        dst.extend_from_slice(self.out.get(self.out_pos..).unwrap_or(&[]));
        self.out.clear();
        self.out_pos = 0;
    }

    /// The capabilities in effect (client's request intersected with the server's), once the
    /// greeting has been answered.
    pub fn capabilities(&self) -> Capabilities {
        self.caps
    }

    /// The server's id for this connection (from the greeting).
    pub fn connection_id(&self) -> u32 {
        self.connection_id
    }

    /// The greeting's version string.
    pub fn server_version(&self) -> &str {
        &self.server_version
    }

    /// The status flags of the last OK or EOF received.
    pub fn status(&self) -> StatusFlags {
        self.status
    }

    /// True when logged in and no command awaits its reply.
    pub fn is_idle(&self) -> bool {
        matches!(self.phase, Phase::Ready) && self.pending.is_empty()
    }

    /// True after login failed, QUIT was sent (and every earlier reply arrived) or a fatal
    /// error occurred.
    pub fn is_closed(&self) -> bool {
        matches!(self.phase, Phase::Closed)
    }

    /// Commands sent whose reply has not fully arrived.
    pub fn in_flight(&self) -> usize {
        self.pending.len()
    }

    /// The next event from the bytes fed so far; `None` when more bytes are needed (or the
    /// connection is closed). An `Err` is fatal.
    pub fn poll_event(&mut self) -> Option<Result<ClientEvent, ProtocolError>> {
        loop {
            if self.is_closed() {
                return None;
            }
            let r = match self.framer.next_packet() {
                Ok(None) => return None,
                Ok(Some((seq, payload))) => self.handle(seq, payload),
                Err(e) => Err(e),
            };
            match r {
                Ok(Some(ev)) => return Some(Ok(ev)),
                Ok(None) => {}
                Err(e) => {
                    self.phase = Phase::Closed;
                    self.pending.clear();
                    return Some(Err(e));
                }
            }
        }
    }

    // ----- commands -----

    fn send(&mut self, expect: Option<Expect>, f: impl FnOnce(&mut Vec<u8>)) {
        self.send_for(None, expect, f);
    }

    fn send_for(
        &mut self,
        stmt: Option<u32>,
        expect: Option<Expect>,
        f: impl FnOnce(&mut Vec<u8>),
    ) {
        if self.quit_sent {
            return;
        }
        let buf = match self.phase {
            Phase::Ready => &mut self.out,
            Phase::Greeting | Phase::Auth { .. } => &mut self.deferred,
            Phase::Closed => return,
        };
        let mut seq = 0;
        write_packet_with(buf, &mut seq, f);
        if let Some(expect) = expect {
            self.pending.push_back(Pending { expect, seq, stmt });
        }
    }

    /// Sends COM_QUERY; the reply is [`ClientEvent::Ok`], [`ClientEvent::Error`] or a text
    /// result set (`ResultColumns`, `Row`s, `ResultDone`), possibly several with
    /// MULTI_STATEMENTS.
    pub fn query(&mut self, sql: &str) {
        self.send(
            Some(Expect::Results {
                binary: false,
                stage: ResultStage::Start,
            }),
            |o| {
                o.push(code::QUERY);
                o.extend_from_slice(sql.as_bytes());
            },
        );
    }

    /// Sends COM_STMT_PREPARE; the reply is [`ClientEvent::Prepared`] or an error.
    pub fn prepare(&mut self, sql: &str) {
        self.send(
            Some(Expect::Prepare {
                stage: PrepareStage::Start,
            }),
            |o| {
                o.push(code::STMT_PREPARE);
                o.extend_from_slice(sql.as_bytes());
            },
        );
    }

    /// Sends COM_STMT_EXECUTE with `params` bound by their natural types. Types are sent
    /// (new-params-bound = 1) on a statement's first execute and whenever they change; later
    /// executes send only values. The reply is like [`Self::query`]'s, with binary rows.
    pub fn execute(&mut self, stmt_id: u32, params: &[BinaryValue]) {
        let same = self.stmt_types.get(&stmt_id).is_some_and(|t| {
            t.len() == params.len() && t.iter().zip(params).all(|(t, p)| *t == p.natural_type())
        });
        if !same && !self.is_closed() {
            self.stmt_types.insert(
                stmt_id,
                params.iter().map(BinaryValue::natural_type).collect(),
            );
        }
        self.send_for(
            Some(stmt_id),
            Some(Expect::Results {
                binary: true,
                stage: ResultStage::Start,
            }),
            |o| {
                o.push(code::STMT_EXECUTE);
                put_u32(o, stmt_id);
                o.push(0);
                put_u32(o, 1);
                encode_execute_params(params, !same, o);
            },
        );
    }

    /// Sends COM_STMT_CLOSE (no reply).
    pub fn close_stmt(&mut self, stmt_id: u32) {
        self.stmt_types.remove(&stmt_id);
        if let Some(c) = self.column_cache.as_mut() {
            c.remove(&stmt_id);
        }
        self.send(None, |o| {
            o.push(code::STMT_CLOSE);
            put_u32(o, stmt_id);
        });
    }

    /// Sends COM_STMT_RESET; the reply is OK or an error.
    pub fn reset_stmt(&mut self, stmt_id: u32) {
        self.send(Some(Expect::Ok), |o| {
            o.push(code::STMT_RESET);
            put_u32(o, stmt_id);
        });
    }

    /// Sends COM_PING; the reply is OK.
    pub fn ping(&mut self) {
        self.send(Some(Expect::Ok), |o| o.push(code::PING));
    }

    /// Sends COM_INIT_DB; the reply is OK or an error.
    pub fn init_db(&mut self, db: &str) {
        self.send(Some(Expect::Ok), |o| {
            o.push(code::INIT_DB);
            o.extend_from_slice(db.as_bytes());
        });
    }

    /// Sends COM_RESET_CONNECTION (which also deallocates prepared statements); the reply is
    /// OK or an error.
    pub fn reset_connection(&mut self) {
        self.stmt_types.clear();
        if let Some(c) = self.column_cache.as_mut() {
            c.clear();
        }
        self.send(Some(Expect::Ok), |o| o.push(code::RESET_CONNECTION));
    }

    /// Sends COM_SET_OPTION; the reply is OK (or EOF, reported as OK) or an error.
    pub fn set_option(&mut self, option: u16) {
        self.send(Some(Expect::Ok), |o| {
            o.push(code::SET_OPTION);
            put_u16(o, option);
        });
    }

    /// Sends COM_FIELD_LIST; the reply is one [`ClientEvent::ResultColumns`] with the
    /// table's columns, or an error.
    pub fn field_list(&mut self, table: &str, wildcard: &str) {
        self.send(Some(Expect::FieldList(Vec::new())), |o| {
            o.push(code::FIELD_LIST);
            put_nul_str(o, table.as_bytes());
            o.extend_from_slice(wildcard.as_bytes());
        });
    }

    /// Sends COM_STATISTICS; the reply is [`ClientEvent::Statistics`].
    pub fn statistics(&mut self) {
        self.send(Some(Expect::Statistics), |o| o.push(code::STATISTICS));
    }

    /// Sends an arbitrary command payload (for tests of malformed input); its reply is parsed
    /// like a query's: OK, ERR or result sets.
    pub fn raw_command(&mut self, payload: &[u8]) {
        self.send(
            Some(Expect::Results {
                binary: false,
                stage: ResultStage::Start,
            }),
            |o| {
                o.extend_from_slice(payload);
            },
        );
    }

    /// Sends COM_QUIT; the connection is closed for further commands (replies to commands
    /// already in flight are still decoded). Before login nothing is sent: just close the
    /// socket.
    pub fn quit(&mut self) {
        self.send(None, |o| o.push(code::QUIT));
        self.quit_sent = true;
        self.close_if_quit_done();
    }

    fn close_if_quit_done(&mut self) {
        if self.quit_sent && self.pending.is_empty() {
            self.phase = Phase::Closed;
        }
    }

    // ----- replies -----

    fn handle(
        &mut self,
        seq: u8,
        mut payload: Vec<u8>,
    ) -> Result<Option<ClientEvent>, ProtocolError> {
        match self.phase {
            Phase::Greeting => {
                check_seq(0, seq)?;
                self.on_greeting(&payload)
            }
            Phase::Auth {
                plugin,
                seq: expected,
            } => {
                check_seq(expected, seq)?;
                self.on_auth(plugin, seq, &payload)
            }
            Phase::Ready => {
                let caps = self.caps;
                let Some(p) = self.pending.front_mut() else {
                    return Err(ProtocolError::UnexpectedPacket(
                        "packet with no command in flight",
                    ));
                };
                check_seq(p.seq, seq)?;
                p.seq = seq.wrapping_add(fragment_count(payload.len()) as u8);
                let (event, done) = on_reply(
                    p,
                    caps,
                    &mut payload,
                    &mut self.out,
                    self.column_cache.as_mut(),
                )?;
                // a row took the payload; anything else leaves its buffer for the next packet
                self.framer.recycle(payload);
                if done {
                    self.pending.pop_front();
                    self.close_if_quit_done();
                }
                if let Some(s) = event.as_ref().and_then(event_status) {
                    self.status = s;
                }
                Ok(event)
            }
            Phase::Closed => Ok(None),
        }
    }

    fn on_greeting(&mut self, payload: &[u8]) -> Result<Option<ClientEvent>, ProtocolError> {
        if payload.first() == Some(&ErrPacket::HEADER) {
            // "Too many connections" (1040) and host blocks arrive instead of a greeting.
            self.phase = Phase::Closed;
            return Ok(Some(ClientEvent::AuthFailed(ErrPacket::decode(payload)?)));
        }
        let hello = HandshakeV10::decode(payload)?;
        // A MariaDB server (no CLIENT_MYSQL, i.e. LONG_PASSWORD, in its greeting) puts extended
        // capabilities in the last 4 of the 10 reserved bytes; the client answers in the last 4
        // of its 23 filler bytes. Only MARIADB_CLIENT_CACHE_METADATA is asked for.
        let mariadb_ext = if hello.capabilities.contains(Capabilities::LONG_PASSWORD) {
            0
        } else {
            mariadb_extended_caps(payload)
        };
        let cache_metadata = mariadb_ext & MARIADB_CACHE_METADATA != 0;
        if !hello.capabilities.contains(Capabilities::PROTOCOL_41) {
            return Err(ProtocolError::Unsupported(
                "server without the 4.1 protocol",
            ));
        }
        let mut caps = (self.config.capabilities & hello.capabilities).difference(NEVER)
            | Capabilities::PROTOCOL_41;
        caps.set(
            Capabilities::CONNECT_WITH_DB,
            self.config.database.is_some()
                && hello.capabilities.contains(Capabilities::CONNECT_WITH_DB),
        );
        self.caps = caps;
        self.connection_id = hello.connection_id;
        self.server_version = hello.server_version;
        self.status = hello.status;
        let plugin = Plugin::from_name(&hello.auth_plugin_name).unwrap_or(Plugin::Native);
        let resp = HandshakeResponse {
            capabilities: caps,
            max_packet: self.config.max_packet,
            charset: self.config.charset,
            username: self.config.user.clone(),
            auth_response: plugin
                .scramble(self.config.password.as_bytes(), &hello.auth_plugin_data),
            database: self.config.database.clone(),
            auth_plugin_name: Some(plugin.name().to_owned()),
            connect_attrs: self.config.connect_attrs.clone(),
        };
        let mut seq = 1;
        write_packet_with(&mut self.out, &mut seq, |o| {
            let at = o.len();
            resp.encode(o);
            if cache_metadata {
                // capabilities (4), max packet (4), charset (1), then 23 filler bytes
                if let Some(ext) = o.get_mut(at + 28..at + 32) {
                    ext.copy_from_slice(&MARIADB_CACHE_METADATA.to_le_bytes());
                }
            }
        });
        self.column_cache = cache_metadata.then(ColumnCache::new);
        self.phase = Phase::Auth { plugin, seq };
        Ok(None)
    }

    fn on_auth(
        &mut self,
        plugin: Plugin,
        seq: u8,
        payload: &[u8],
    ) -> Result<Option<ClientEvent>, ProtocolError> {
        let mut next = seq.wrapping_add(1);
        match payload.first() {
            Some(&OkPacket::HEADER) => {
                let ok = OkPacket::decode(payload, self.caps)?;
                self.status = ok.status;
                self.phase = Phase::Ready;
                self.out.append(&mut self.deferred);
                Ok(Some(ClientEvent::Connected {
                    connection_id: self.connection_id,
                    server_version: self.server_version.clone(),
                    status: ok.status,
                }))
            }
            Some(&ErrPacket::HEADER) => {
                self.phase = Phase::Closed;
                self.pending.clear();
                Ok(Some(ClientEvent::AuthFailed(ErrPacket::decode(payload)?)))
            }
            Some(&AuthSwitchRequest::HEADER) => {
                let sw = AuthSwitchRequest::decode(payload)?;
                let plugin = Plugin::from_name(&sw.plugin)
                    .ok_or(ProtocolError::Unsupported("auth plugin requested by AuthSwitchRequest"))?;
                let resp = plugin.scramble(self.config.password.as_bytes(), &sw.data);
                write_packet(&mut self.out, &mut next, &resp);
                self.phase = Phase::Auth { plugin, seq: next };
                Ok(None)
            }
            Some(&AuthMoreData::HEADER) if plugin == Plugin::CachingSha2 => {
                match AuthMoreData::decode(payload)?.data.as_slice() {
                    [AuthMoreData::FAST_AUTH_SUCCESS] => {
                        self.phase = Phase::Auth { plugin, seq: next };
                        Ok(None)
                    }
                    [AuthMoreData::PERFORM_FULL_AUTH] => Err(ProtocolError::Unsupported(
                        "caching_sha2_password full authentication needs TLS or the server's RSA key; \
                         this client does neither (only the fast path, when the server has the password cached)",
                    )),
                    _ => Err(ProtocolError::UnexpectedPacket("caching_sha2_password auth data")),
                }
            }
            _ => Err(ProtocolError::UnexpectedPacket("reply to the handshake response")),
        }
    }
}

/// MARIADB_CLIENT_CACHE_METADATA (bit 36 of the capabilities, bit 4 of MariaDB's extension).
const MARIADB_CACHE_METADATA: u32 = 1 << 4;

/// MariaDB's extended capabilities from a greeting: protocol version (1), the version string
/// and its NUL, connection id (4), auth data (8), filler (1), capabilities (2), charset (1),
/// status (2), capabilities (2), auth data length (1), 6 reserved bytes, then these 4.
fn mariadb_extended_caps(greeting: &[u8]) -> u32 {
    let Some(nul) = greeting.iter().skip(1).position(|&b| b == 0) else {
        return 0;
    };
    let at = 1 + nul + 1 + 4 + 8 + 1 + 2 + 1 + 2 + 2 + 1 + 6;
    greeting
        .get(at..at + 4)
        .map_or(0, |b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
}

fn check_seq(expected: u8, got: u8) -> Result<(), ProtocolError> {
    if expected == got {
        Ok(())
    } else {
        Err(ProtocolError::BadSequence { expected, got })
    }
}

fn event_status(ev: &ClientEvent) -> Option<StatusFlags> {
    match ev {
        ClientEvent::Ok(ok) => Some(ok.status),
        ClientEvent::ResultDone { status, .. } => Some(*status),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::column::ColumnDefinition;
    use crate::reply::EofPacket;
    use crate::resultset::write_prepare_ok;

    /// A MariaDB-style greeting (no CLIENT_MYSQL bit) offering MARIADB_CLIENT_CACHE_METADATA.
    fn mariadb_greeting() -> Vec<u8> {
        let hello = HandshakeV10 {
            server_version: "10.11.19-MariaDB".into(),
            connection_id: 9,
            auth_plugin_data: *b"abcdefghijklmnopqrst",
            capabilities: Capabilities::SERVER_DEFAULT
                .difference(Capabilities::LONG_PASSWORD)
                .difference(Capabilities::DEPRECATE_EOF),
            charset: 45,
            status: StatusFlags::AUTOCOMMIT,
            auth_plugin_name: NATIVE_PASSWORD.into(),
        };
        let mut payload = Vec::new();
        hello.encode(&mut payload);
        let at = 1 + hello.server_version.len() + 1 + 4 + 8 + 1 + 2 + 1 + 2 + 2 + 1 + 6;
        payload[at..at + 4].copy_from_slice(&MARIADB_CACHE_METADATA.to_le_bytes());
        let mut wire = Vec::new();
        write_packet(&mut wire, &mut 0, &payload);
        wire
    }

    fn events(c: &mut ClientConnection, wire: &[u8]) -> Vec<ClientEvent> {
        c.feed(wire);
        std::iter::from_fn(|| c.poll_event())
            .map(|e| e.expect("well-formed reply"))
            .collect()
    }

    #[test]
    fn cached_metadata_stands_in_for_skipped_execute_metadata() {
        let mut c = ClientConnection::new(ClientConfig::new("sbtest", "sbtest"));
        assert!(events(&mut c, &mariadb_greeting()).is_empty());
        let mut resp = Vec::new();
        c.take_transmit(&mut resp);
        // payload starts after the 4-byte header; extended capabilities at 28..32
        assert_eq!(&resp[4 + 28..4 + 32], &MARIADB_CACHE_METADATA.to_le_bytes());
        let caps = c.capabilities();
        let mut ok = Vec::new();
        OkPacket::default().write(&mut ok, &mut 2, caps);
        assert!(matches!(
            events(&mut c, &ok).as_slice(),
            [ClientEvent::Connected { .. }]
        ));

        let cols = vec![ColumnDefinition::new("c", ColumnType::VarString)];
        c.prepare("SELECT c FROM t WHERE id=?");
        let mut wire = Vec::new();
        let param = ColumnDefinition::new("?", ColumnType::LongLong);
        write_prepare_ok(&mut wire, &mut 1, caps, 5, &[param], &cols, 0);
        assert!(matches!(
            events(&mut c, &wire).as_slice(),
            [ClientEvent::Prepared { stmt_id: 5, .. }]
        ));

        // an execute whose result says "metadata does not follow": count, flag 0, row, EOF
        let mut wire = Vec::new();
        let mut seq = 1;
        write_packet(&mut wire, &mut seq, &[1, 0]);
        write_packet(&mut wire, &mut seq, &[0x00, 0x00, 1, b'x']);
        write_packet_with(&mut wire, &mut seq, |o| EofPacket::default().encode(o));
        let mut seen = Vec::new();
        for _ in 0..2 {
            c.execute(5, &[BinaryValue::Int(1)]);
            let got = events(&mut c, &wire);
            match got.as_slice() {
                [ClientEvent::ResultColumns(c), ClientEvent::Row(_), ClientEvent::ResultDone { .. }]
                    if c[..] == cols[..] =>
                {
                    seen.push(std::sync::Arc::clone(c))
                }
                _ => panic!("{got:?}"),
            }
            assert!(c.is_idle());
        }
        // both executes hand out the cached columns themselves, not copies
        assert!(std::sync::Arc::ptr_eq(&seen[0], &seen[1]));
    }
}
