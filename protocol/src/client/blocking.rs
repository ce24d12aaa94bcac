//! A blocking client over any `Read + Write` (a `TcpStream`, a test pipe), built on
//! [`ClientConnection`]: for tests and tools, not for load generation.

use std::fmt;
use std::io::{self, Read, Write};
use std::sync::Arc;

use super::{ClientConfig, ClientConnection, ClientEvent};
use crate::column::ColumnDefinition;
use crate::error::ProtocolError;
use crate::reply::{ErrPacket, OkPacket};
use crate::value::BinaryValue;

/// Why a blocking call failed.
#[derive(Debug)]
pub enum ClientError {
    /// The stream failed or closed.
    Io(io::Error),
    /// The server's bytes could not be decoded (the connection is dead).
    Protocol(ProtocolError),
    /// The server answered with ERR (login refused, or the statement failed).
    Server(ErrPacket),
}

impl fmt::Display for ClientError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Io(e) => write!(f, "I/O error: {e}"),
            Self::Protocol(e) => write!(f, "protocol error: {e}"),
            Self::Server(e) => e.fmt(f),
        }
    }
}

impl std::error::Error for ClientError {}

impl From<io::Error> for ClientError {
    fn from(e: io::Error) -> Self {
        Self::Io(e)
    }
}

impl From<ProtocolError> for ClientError {
    fn from(e: ProtocolError) -> Self {
        Self::Protocol(e)
    }
}

/// A text query's complete answer (the last result set when there are several).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct QueryResult {
    /// Columns of the result set (empty for statements without one).
    pub columns: Vec<ColumnDefinition>,
    /// Rows, each cell `None` for NULL.
    pub rows: Vec<Vec<Option<Vec<u8>>>>,
    /// Affected rows from the final OK (0 after a result set without DEPRECATE_EOF).
    pub affected_rows: u64,
    /// Last insert id from the final OK.
    pub last_insert_id: u64,
    /// Warnings.
    pub warnings: u16,
}

/// A prepared statement's id and metadata.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Prepared {
    /// The statement id.
    pub stmt_id: u32,
    /// One definition per placeholder.
    pub params: Vec<ColumnDefinition>,
    /// The result columns.
    pub columns: Vec<ColumnDefinition>,
}

/// A logged-in blocking connection.
#[derive(Debug)]
pub struct Conn<S> {
    stream: S,
    conn: ClientConnection,
    buf: Vec<u8>,
}

impl<S: Read + Write> Conn<S> {
    /// Logs in over `stream` (already connected to the server).
    pub fn connect(stream: S, config: ClientConfig) -> Result<Self, ClientError> {
        let mut c = Self {
            stream,
            conn: ClientConnection::new(config),
            buf: vec![0; 64 * 1024],
        };
        match c.next_event()? {
            ClientEvent::Connected { .. } => Ok(c),
            ClientEvent::AuthFailed(e) => Err(ClientError::Server(e)),
            _ => Err(ProtocolError::UnexpectedPacket("event during login").into()),
        }
    }

    /// The sans-I/O core (capabilities, connection id, status flags).
    pub fn connection(&self) -> &ClientConnection {
        &self.conn
    }

    /// The underlying stream, e.g. to write malformed bytes or shut it down.
    pub fn stream_mut(&mut self) -> &mut S {
        &mut self.stream
    }

    /// Gives back the stream.
    pub fn into_inner(self) -> S {
        self.stream
    }

    fn flush(&mut self) -> Result<(), ClientError> {
        while let Some(bytes) = self.conn.poll_transmit() {
            let n = self.stream.write(bytes)?;
            if n == 0 {
                return Err(io::Error::from(io::ErrorKind::WriteZero).into());
            }
            self.conn.consume_transmit(n);
        }
        self.stream.flush()?;
        Ok(())
    }

    /// Sends what is pending and blocks until the next event.
    pub fn next_event(&mut self) -> Result<ClientEvent, ClientError> {
        loop {
            // Decoding may queue bytes (a handshake response, an auth switch answer): send
            // them before blocking on the reply they provoke.
            let ev = self.conn.poll_event();
            self.flush()?;
            if let Some(ev) = ev {
                return Ok(ev?);
            }
            let n = self.stream.read(&mut self.buf)?;
            if n == 0 {
                return Err(io::Error::from(io::ErrorKind::UnexpectedEof).into());
            }
            self.conn.feed(&self.buf[..n]);
        }
    }

    /// Collects every event until no command is in flight; an ERR becomes `Err`.
    fn drain(&mut self) -> Result<Vec<ClientEvent>, ClientError> {
        let mut events = Vec::new();
        let mut error = None;
        while !self.conn.is_idle() && !self.conn.is_closed() {
            match self.next_event()? {
                ClientEvent::Error(e) => error = Some(e),
                ev => events.push(ev),
            }
        }
        self.flush()?;
        match error {
            Some(e) => Err(ClientError::Server(e)),
            None => Ok(events),
        }
    }

    /// Runs a text query and returns every row of every result set.
    pub fn query(&mut self, sql: &str) -> Result<Vec<Vec<Option<Vec<u8>>>>, ClientError> {
        self.conn.query(sql);
        let mut rows = Vec::new();
        for ev in self.drain()? {
            if let ClientEvent::Row(r) = ev {
                rows.push(r.text_values()?);
            }
        }
        Ok(rows)
    }

    /// Runs a text query and returns its last result (columns, rows, OK fields).
    pub fn query_result(&mut self, sql: &str) -> Result<QueryResult, ClientError> {
        self.conn.query(sql);
        let mut res = QueryResult::default();
        for ev in self.drain()? {
            match ev {
                ClientEvent::ResultColumns(cols) => {
                    res = QueryResult {
                        columns: cols.to_vec(),
                        ..QueryResult::default()
                    };
                }
                ClientEvent::Row(r) => res.rows.push(r.text_values()?),
                ClientEvent::ResultDone {
                    affected_rows,
                    last_insert_id,
                    warnings,
                    ..
                } => {
                    (res.affected_rows, res.last_insert_id, res.warnings) =
                        (affected_rows, last_insert_id, warnings);
                }
                ClientEvent::Ok(ok) => {
                    res = QueryResult {
                        affected_rows: ok.affected_rows,
                        last_insert_id: ok.last_insert_id,
                        warnings: ok.warnings,
                        ..QueryResult::default()
                    };
                }
                _ => {}
            }
        }
        Ok(res)
    }

    /// Prepares a statement.
    pub fn prepare(&mut self, sql: &str) -> Result<Prepared, ClientError> {
        self.conn.prepare(sql);
        for ev in self.drain()? {
            if let ClientEvent::Prepared {
                stmt_id,
                params,
                columns,
            } = ev
            {
                return Ok(Prepared {
                    stmt_id,
                    params,
                    columns,
                });
            }
        }
        Err(ProtocolError::UnexpectedPacket("prepare reply without PREPARE_OK").into())
    }

    /// Executes a prepared statement and returns its rows decoded (empty for statements
    /// without a result set).
    pub fn execute(
        &mut self,
        stmt_id: u32,
        params: &[BinaryValue],
    ) -> Result<Vec<Vec<BinaryValue>>, ClientError> {
        self.conn.execute(stmt_id, params);
        let mut columns: Arc<[ColumnDefinition]> = Vec::new().into();
        let mut rows = Vec::new();
        for ev in self.drain()? {
            match ev {
                ClientEvent::ResultColumns(c) => columns = c,
                ClientEvent::Row(r) => rows.push(r.binary_values(&columns)?),
                _ => {}
            }
        }
        Ok(rows)
    }

    /// Closes a prepared statement (no reply).
    pub fn close_stmt(&mut self, stmt_id: u32) -> Result<(), ClientError> {
        self.conn.close_stmt(stmt_id);
        self.flush()
    }

    /// COM_PING.
    pub fn ping(&mut self) -> Result<(), ClientError> {
        self.conn.ping();
        self.drain().map(drop)
    }

    /// Sends an arbitrary command payload (seq 0) and returns the events of its reply (an
    /// ERR reply is `Err(ClientError::Server)`).
    pub fn raw_command(&mut self, payload: &[u8]) -> Result<Vec<ClientEvent>, ClientError> {
        self.conn.raw_command(payload);
        self.drain()
    }

    /// COM_INIT_DB: changes the default database.
    pub fn init_db(&mut self, db: &str) -> Result<OkPacket, ClientError> {
        self.conn.init_db(db);
        self.single_ok()
    }

    /// COM_RESET_CONNECTION.
    pub fn reset_connection(&mut self) -> Result<OkPacket, ClientError> {
        self.conn.reset_connection();
        self.single_ok()
    }

    fn single_ok(&mut self) -> Result<OkPacket, ClientError> {
        for ev in self.drain()? {
            if let ClientEvent::Ok(ok) = ev {
                return Ok(ok);
            }
        }
        Err(ProtocolError::UnexpectedPacket("expected OK").into())
    }

    /// COM_QUIT, then gives back the stream.
    pub fn quit(mut self) -> Result<S, ClientError> {
        self.conn.quit();
        self.flush()?;
        Ok(self.stream)
    }
}
