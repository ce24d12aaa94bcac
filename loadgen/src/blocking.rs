//! A blocking client over the same `Wire` adapter, for set-up work (prepare, cleanup, queue
//! checks) and the side connection that samples server gauges.

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::sync::Arc;
use std::time::Duration;

use crate::conn::{Login, Reply, Wire, WireFactory};

/// One blocking connection.
pub(crate) struct Blocking {
    sock: TcpStream,
    wire: Box<dyn Wire>,
    buf: Vec<u8>,
    out: Vec<u8>,
}

impl std::fmt::Debug for Blocking {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Blocking")
            .field("peer", &self.sock.peer_addr().ok())
            .finish()
    }
}

impl Blocking {
    /// Connects and logs in.
    pub(crate) fn connect(
        addr: SocketAddr,
        login: &Login,
        wires: &Arc<WireFactory>,
    ) -> Result<Blocking, String> {
        let sock = TcpStream::connect_timeout(&addr, Duration::from_secs(10))
            .map_err(|e| format!("connect to {addr}: {e}"))?;
        let _ = sock.set_nodelay(true);
        let _ = sock.set_read_timeout(Some(Duration::from_secs(600)));
        let mut b = Blocking {
            sock,
            wire: wires(login),
            buf: vec![0; 64 * 1024],
            out: Vec::new(),
        };
        match b.wait()? {
            Reply::Connected => Ok(b),
            Reply::Error { code, message } => {
                Err(format!("login to {addr} failed: {code}: {message}"))
            }
            other => Err(format!("unexpected reply to login: {other:?}")),
        }
    }

    fn send(&mut self) -> Result<(), String> {
        self.out.clear();
        self.wire.transmit(&mut self.out);
        self.sock
            .write_all(&self.out)
            .map_err(|e| format!("write: {e}"))
    }

    fn wait(&mut self) -> Result<Reply, String> {
        loop {
            let reply = self.wire.poll_reply();
            self.send()?;
            if let Some(r) = reply {
                return Ok(r);
            }
            let n = self
                .sock
                .read(&mut self.buf)
                .map_err(|e| format!("read: {e}"))?;
            if n == 0 {
                return Err("server closed the connection (2013)".into());
            }
            self.wire.feed(&self.buf[..n])?;
        }
    }

    /// Runs a text statement and returns its reply (errors are replies, not `Err`).
    pub(crate) fn query(&mut self, sql: &str) -> Result<Reply, String> {
        self.wire.query(sql, true);
        self.wait()
    }

    /// Sends a text statement without waiting for its reply (`finish` collects it), for a
    /// statement that blocks while another session acts.
    pub(crate) fn start(&mut self, sql: &str) -> Result<(), String> {
        self.wire.query(sql, true);
        self.send()
    }

    /// Waits for the reply of the statement `start` sent.
    pub(crate) fn finish(&mut self) -> Result<Reply, String> {
        self.wait()
    }

    /// Runs a statement and turns an error reply into `Err`.
    pub(crate) fn exec(&mut self, sql: &str) -> Result<Reply, String> {
        match self.query(sql)? {
            Reply::Error { code, message } => {
                Err(format!("{code}: {message} (in: {})", abbreviate(sql)))
            }
            r => Ok(r),
        }
    }

    /// Runs a query and returns its rows.
    pub(crate) fn rows(&mut self, sql: &str) -> Result<Vec<Vec<Option<String>>>, String> {
        match self.exec(sql)? {
            Reply::Rows { rows, .. } => Ok(rows),
            _ => Ok(Vec::new()),
        }
    }

    /// Sends COM_QUIT and closes.
    pub(crate) fn quit(mut self) {
        self.wire.quit();
        let _ = self.send();
    }
}

/// The first 120 characters of a statement, for error messages.
pub(crate) fn abbreviate(sql: &str) -> String {
    if sql.len() <= 120 {
        return sql.to_string();
    }
    let mut end = 120;
    while !sql.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}... ({} bytes)", &sql[..end], sql.len())
}
