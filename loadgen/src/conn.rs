//! The connection adapter: the only place that talks to `protocol::client`. The engine sees
//! `Wire` (bytes in, replies out, bytes to send); swapping client implementations is local here.

use std::collections::VecDeque;
use std::sync::Arc;

use protocol::caps::StatusFlags;
use protocol::client::{ClientConfig, ClientConnection, ClientEvent, RowData};
use protocol::column::ColumnDefinition;
use protocol::value::BinaryValue;

/// A statement parameter (sysbench binds INT as LONGLONG and CHAR as VAR_STRING).
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Param {
    /// A signed integer.
    Int(i64),
    /// A string.
    Str(String),
}

impl Param {
    /// The value as a SQL literal (for text-protocol fallback).
    pub(crate) fn to_sql(&self) -> String {
        match self {
            Param::Int(v) => v.to_string(),
            Param::Str(s) => format!("'{}'", s.replace('\\', "\\\\").replace('\'', "''")),
        }
    }
}

/// Replaces each `?` outside quotes in `sql` with the next parameter's literal.
pub(crate) fn inline_params(sql: &str, params: &[Param]) -> String {
    let mut out = String::with_capacity(sql.len() + params.len() * 8);
    let mut it = params.iter();
    let mut quote: Option<char> = None;
    for c in sql.chars() {
        match (quote, c) {
            (None, '\'' | '"' | '`') => {
                quote = Some(c);
                out.push(c);
            }
            (Some(q), _) if c == q => {
                quote = None;
                out.push(c);
            }
            (None, '?') => match it.next() {
                Some(p) => out.push_str(&p.to_sql()),
                None => out.push('?'),
            },
            _ => out.push(c),
        }
    }
    out
}

/// One complete reply to a command (or to the handshake).
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Reply {
    /// Authentication succeeded.
    Connected,
    /// An OK packet.
    Ok {
        /// Affected rows.
        affected: u64,
        /// Last insert id.
        last_insert_id: u64,
    },
    /// A result set; `rows` holds the rows only when asked for (else it is empty).
    Rows {
        /// Number of rows.
        count: u64,
        /// Text values of each row (NULL as None), when kept.
        rows: Vec<Vec<Option<String>>>,
    },
    /// COM_STMT_PREPARE succeeded.
    Prepared {
        /// The server's statement id.
        id: u32,
    },
    /// An ERR packet.
    Error {
        /// The MySQL error code.
        code: u16,
        /// The message.
        message: String,
    },
}

/// Connection parameters.
#[derive(Debug, Clone)]
pub(crate) struct Login {
    /// User name.
    pub(crate) user: String,
    /// Password.
    pub(crate) password: String,
    /// Database to select in the handshake.
    pub(crate) db: String,
}

/// A sans-I/O MySQL client connection as the engine drives it.
pub(crate) trait Wire: Send {
    /// Bytes received from the socket.
    fn feed(&mut self, data: &[u8]) -> Result<(), String>;
    /// The next complete reply, if one is ready.
    fn poll_reply(&mut self) -> Option<Reply>;
    /// Appends bytes waiting to be sent to `out`.
    fn transmit(&mut self, out: &mut Vec<u8>);
    /// Sends COM_QUERY; `keep_rows` decides whether the reply carries its rows.
    fn query(&mut self, sql: &str, keep_rows: bool);
    /// Sends COM_STMT_PREPARE.
    fn prepare(&mut self, sql: &str);
    /// Sends COM_STMT_EXECUTE.
    fn execute(&mut self, stmt: u32, params: &[Param], keep_rows: bool);
    /// Sends COM_STMT_CLOSE (no reply).
    fn close_stmt(&mut self, stmt: u32);
    /// Sends COM_QUIT (no reply).
    fn quit(&mut self);
}

/// Makes the wire of a new connection.
pub(crate) type WireFactory = dyn Fn(&Login) -> Box<dyn Wire> + Send + Sync;

/// The real thing: `protocol::client::ClientConnection` behind `Wire`.
#[derive(Debug)]
pub(crate) struct MysqlWire {
    c: ClientConnection,
    /// Per command in flight (in order): keep rows?
    keep: VecDeque<bool>,
    /// The current result's columns (shared with the connection's metadata cache).
    columns: Arc<[ColumnDefinition]>,
    count: u64,
    rows: Vec<Vec<Option<String>>>,
    dead: Option<String>,
    /// COM_STMT_EXECUTE parameters, reused from statement to statement.
    params: Vec<BinaryValue>,
}

impl MysqlWire {
    /// A connection that logs in as `login` (sysbench's capabilities: no DEPRECATE_EOF).
    pub(crate) fn new(login: &Login) -> MysqlWire {
        let mut cfg = ClientConfig::new(&login.user, &login.password);
        cfg.database = (!login.db.is_empty()).then(|| login.db.clone());
        cfg.connect_attrs = vec![
            ("_client_name".into(), "tpbed-load".into()),
            ("_client_version".into(), env!("CARGO_PKG_VERSION").into()),
        ];
        MysqlWire {
            c: ClientConnection::new(cfg),
            keep: VecDeque::new(),
            columns: Vec::new().into(),
            count: 0,
            rows: Vec::new(),
            dead: None,
            params: Vec::new(),
        }
    }

    /// The factory the engine uses.
    pub(crate) fn factory() -> std::sync::Arc<WireFactory> {
        std::sync::Arc::new(|l: &Login| Box::new(MysqlWire::new(l)) as Box<dyn Wire>)
    }

    fn keep_row(&mut self, row: &RowData) {
        let cells: Vec<Option<String>> = if row.is_binary() {
            match row.binary_values(&self.columns) {
                Ok(v) => v
                    .into_iter()
                    .map(|b| match b {
                        BinaryValue::Null => None,
                        BinaryValue::Bytes(b) => Some(String::from_utf8_lossy(&b).into_owned()),
                        other => Some(other.to_text()),
                    })
                    .collect(),
                Err(_) => Vec::new(),
            }
        } else {
            row.text_cells()
                .map(|c| {
                    c.ok()
                        .flatten()
                        .map(|b| String::from_utf8_lossy(b).into_owned())
                })
                .collect()
        };
        self.rows.push(cells);
    }

    fn done(&mut self, r: Reply) -> Reply {
        self.keep.pop_front();
        r
    }
}

impl Wire for MysqlWire {
    fn feed(&mut self, data: &[u8]) -> Result<(), String> {
        if let Some(e) = &self.dead {
            return Err(e.clone());
        }
        self.c.feed(data);
        Ok(())
    }

    fn poll_reply(&mut self) -> Option<Reply> {
        loop {
            let ev = match self.c.poll_event()? {
                Ok(ev) => ev,
                Err(e) => {
                    let msg = format!("malformed packet: {e}");
                    self.dead = Some(msg.clone());
                    // CR_MALFORMED_PACKET: the connection cannot go on
                    return Some(self.done(Reply::Error {
                        code: 2027,
                        message: msg,
                    }));
                }
            };
            match ev {
                ClientEvent::Connected { .. } => return Some(Reply::Connected),
                ClientEvent::AuthFailed(e) => {
                    return Some(Reply::Error {
                        code: e.code,
                        message: e.message,
                    })
                }
                ClientEvent::ResultColumns(cols) => {
                    self.columns = cols;
                    self.count = 0;
                    self.rows.clear();
                }
                ClientEvent::Row(row) => {
                    self.count += 1;
                    if self.keep.front().copied().unwrap_or(false) {
                        self.keep_row(&row);
                    }
                    // the next row (or packet) is read into this row's buffer: no allocation
                    self.c.recycle_row(row);
                }
                ClientEvent::ResultDone { more_results, .. } => {
                    if !more_results {
                        let rows = std::mem::take(&mut self.rows);
                        let count = self.count;
                        return Some(self.done(Reply::Rows { count, rows }));
                    }
                }
                ClientEvent::Ok(ok) => {
                    if !ok.status.contains(StatusFlags::MORE_RESULTS_EXISTS) {
                        return Some(self.done(Reply::Ok {
                            affected: ok.affected_rows,
                            last_insert_id: ok.last_insert_id,
                        }));
                    }
                }
                ClientEvent::Error(e) => {
                    return Some(self.done(Reply::Error {
                        code: e.code,
                        message: e.message,
                    }))
                }
                ClientEvent::Prepared { stmt_id, .. } => {
                    return Some(self.done(Reply::Prepared { id: stmt_id }))
                }
                ClientEvent::Statistics(_) => {}
            }
        }
    }

    fn transmit(&mut self, out: &mut Vec<u8>) {
        self.c.take_transmit(out);
    }

    fn query(&mut self, sql: &str, keep_rows: bool) {
        self.keep.push_back(keep_rows);
        self.c.query(sql);
    }

    fn prepare(&mut self, sql: &str) {
        self.keep.push_back(false);
        self.c.prepare(sql);
    }

    fn execute(&mut self, stmt: u32, params: &[Param], keep_rows: bool) {
        self.keep.push_back(keep_rows);
        self.params.clear();
        self.params.extend(params.iter().map(|p| match p {
            Param::Int(v) => BinaryValue::Int(*v),
            Param::Str(s) => BinaryValue::Bytes(s.as_bytes().to_vec()),
        }));
        self.c.execute(stmt, &self.params);
    }

    fn close_stmt(&mut self, stmt: u32) {
        self.c.close_stmt(stmt);
    }

    fn quit(&mut self) {
        self.c.quit();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn inlining_replaces_placeholders_outside_quotes() {
        let sql = inline_params(
            "SELECT c FROM t WHERE id BETWEEN ? AND ? AND c <> '?'",
            &[Param::Int(5), Param::Int(104)],
        );
        assert_eq!(
            sql,
            "SELECT c FROM t WHERE id BETWEEN 5 AND 104 AND c <> '?'"
        );
        assert_eq!(
            inline_params("SET c=?", &[Param::Str("a'b".into())]),
            "SET c='a''b'"
        );
    }
}
