//! The client half, sans-I/O: a [`ClientConnection`] turns received bytes into
//! [`ClientEvent`]s and method calls into bytes to send, so one thread can drive thousands
//! of connections. [`blocking::Conn`] wraps it over any `Read + Write` for tests and tools.
//!
//! Driving it:
//! 1. create it with a [`ClientConfig`] (the server speaks first, nothing is sent yet);
//! 2. whenever bytes arrive, [`ClientConnection::feed`] them, then call
//!    [`ClientConnection::poll_event`] until it returns `None`;
//! 3. whenever [`ClientConnection::poll_transmit`] returns bytes, write them and report how
//!    many with [`ClientConnection::consume_transmit`];
//! 4. issue commands ([`ClientConnection::query`], ...) at any time; those issued before
//!    [`ClientEvent::Connected`] are held until login succeeds, later ones may be pipelined and
//!    their replies come back in order.
//!
//! An `Err` from `poll_event` is fatal: the connection is dead afterwards.
//!
//! ```
//! use protocol::client::{ClientConfig, ClientConnection, ClientEvent};
//! use protocol::handshake::HandshakeV10;
//! use protocol::packet::write_packet_with;
//! use protocol::{Capabilities, OkPacket, StatusFlags};
//!
//! let mut conn = ClientConnection::new(ClientConfig::new("sbtest", "sbtest"));
//! conn.query("SELECT 1"); // held until the login succeeds
//!
//! // What a server would send: a greeting, then (after our response) an OK.
//! let hello = HandshakeV10 {
//!     server_version: "8.0.36-tpbed".into(),
//!     connection_id: 7,
//!     auth_plugin_data: *b"abcdefghijklmnopqrst",
//!     capabilities: Capabilities::SERVER_DEFAULT,
//!     charset: 255,
//!     status: StatusFlags::AUTOCOMMIT,
//!     auth_plugin_name: "mysql_native_password".into(),
//! };
//! let mut from_server = Vec::new();
//! write_packet_with(&mut from_server, &mut 0, |o| hello.encode(o));
//! conn.feed(&from_server);
//! assert!(conn.poll_event().is_none()); // greeting answered, nothing to report yet
//!
//! let response = conn.poll_transmit().expect("handshake response").to_vec();
//! conn.consume_transmit(response.len());
//! assert_eq!(response[3], 1); // sequence id 1
//!
//! from_server.clear();
//! OkPacket { status: StatusFlags::AUTOCOMMIT, ..OkPacket::default() }.write(&mut from_server, &mut 2, conn.capabilities());
//! conn.feed(&from_server);
//! assert!(matches!(conn.poll_event(), Some(Ok(ClientEvent::Connected { connection_id: 7, .. }))));
//! assert_eq!(&conn.poll_transmit().unwrap()[4..], b"\x03SELECT 1"); // now released
//! ```

pub mod blocking;
mod connection;
mod replies;
mod row;

pub use connection::ClientConnection;
pub use row::{RowData, TextCells};

use std::sync::Arc;

use crate::caps::{Capabilities, StatusFlags};
use crate::column::ColumnDefinition;
use crate::reply::{ErrPacket, OkPacket};

/// How to log in.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClientConfig {
    /// Login user.
    pub user: String,
    /// Password in clear (only scrambles of it are sent).
    pub password: String,
    /// Database to select in the handshake (CONNECT_WITH_DB).
    pub database: Option<String>,
    /// Capabilities to ask for; intersected with the server's. SSL, compression and query
    /// attributes are never requested, whatever is set here.
    pub capabilities: Capabilities,
    /// Collation id (45 = utf8mb4_general_ci, what sysbench's libmariadb sends).
    pub charset: u8,
    /// The largest packet this client sends and accepts.
    pub max_packet: u32,
    /// Connection attributes sent with CONNECT_ATTRS.
    pub connect_attrs: Vec<(String, String)>,
}

impl ClientConfig {
    /// `user`/`password` with [`Capabilities::CLIENT_DEFAULT`], utf8mb4, a 64 MiB packet limit
    /// (MySQL 8's `max_allowed_packet` default) and no database.
    pub fn new(user: &str, password: &str) -> Self {
        Self {
            user: user.to_owned(),
            password: password.to_owned(),
            database: None,
            capabilities: Capabilities::CLIENT_DEFAULT,
            charset: 45,
            max_packet: 64 << 20,
            connect_attrs: vec![("_client_name".to_owned(), "tpbed".to_owned())],
        }
    }
}

/// Something the server said, decoded.
#[derive(Debug, Clone, PartialEq)]
pub enum ClientEvent {
    /// Login succeeded.
    Connected {
        /// The server's id for this connection.
        connection_id: u32,
        /// The greeting's version string.
        server_version: String,
        /// Status from the login OK.
        status: StatusFlags,
    },
    /// Login was refused; the connection is over.
    AuthFailed(ErrPacket),
    /// A result set starts with these columns (rows and a [`ClientEvent::ResultDone`] follow).
    /// Shared: an execute whose metadata the server skipped (MARIADB_CLIENT_CACHE_METADATA)
    /// hands out the statement's cached columns without copying them.
    ResultColumns(Arc<[ColumnDefinition]>),
    /// One row of the current result set.
    Row(RowData),
    /// The current result set ended.
    ResultDone {
        /// Status after the result set.
        status: StatusFlags,
        /// Affected rows (only non-zero under DEPRECATE_EOF).
        affected_rows: u64,
        /// Last insert id (only non-zero under DEPRECATE_EOF).
        last_insert_id: u64,
        /// Warning count.
        warnings: u16,
        /// Another result of the same command follows.
        more_results: bool,
    },
    /// A command succeeded without a result set (if its status has MORE_RESULTS_EXISTS, more
    /// results of the same command follow).
    Ok(OkPacket),
    /// A command failed; this ends its reply.
    Error(ErrPacket),
    /// COM_STMT_PREPARE succeeded.
    Prepared {
        /// The statement id to execute and close.
        stmt_id: u32,
        /// One definition per placeholder.
        params: Vec<ColumnDefinition>,
        /// The result columns (empty for statements without a result set).
        columns: Vec<ColumnDefinition>,
    },
    /// COM_STATISTICS' status line.
    Statistics(String),
}
