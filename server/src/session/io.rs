//! Reading whole packets from a blocking socket with MySQL's timeouts, and writing replies.
//!
//! The first byte of a command may take up to `wait_timeout` (idle time); once a command has
//! started, the rest must arrive within `net_read_timeout`, as in mysqld.

use std::io::{ErrorKind, Read, Write};
use std::net::TcpStream;
use std::time::Duration;

use protocol::packet::Framer;
use protocol::ProtocolError;

/// Why reading a packet failed.
#[derive(Debug)]
pub enum ReadError {
    /// The client closed the connection (or it was shut down by KILL).
    Closed,
    /// No command arrived within the idle timeout.
    IdleTimeout,
    /// A command started but did not complete within `net_read_timeout`.
    ReadTimeout,
    /// The packet is larger than `max_allowed_packet`.
    TooLarge,
    /// The bytes are not valid MySQL framing.
    Protocol(ProtocolError),
    /// Another socket error.
    Io(std::io::Error),
}

/// A connection's socket with its read buffer.
#[derive(Debug)]
pub struct PacketIo {
    /// The socket.
    pub stream: TcpStream,
    framer: Framer,
    scratch: Vec<u8>,
    timeout: Option<Duration>,
    /// Bytes read so far (for `Bytes_received`), taken by the session.
    pub bytes_in: u64,
}

impl PacketIo {
    /// Wraps a connected socket; packets above `max_packet` bytes are refused.
    pub fn new(stream: TcpStream, max_packet: usize) -> PacketIo {
        PacketIo {
            stream,
            framer: Framer::new(max_packet),
            scratch: vec![0; 16 * 1024],
            timeout: None,
            bytes_in: 0,
        }
    }

    /// Whether bytes of a further packet are already buffered.
    pub fn has_buffered(&self) -> bool {
        self.framer.has_buffered()
    }

    fn set_timeout(&mut self, t: Duration) {
        if self.timeout != Some(t) {
            // A failure leaves the previous timeout in place, which is still bounded.
            let _ = self.stream.set_read_timeout(Some(t));
            self.timeout = Some(t);
        }
    }

    /// Reads one whole (joined) packet: waits up to `idle` for its first byte, then up to
    /// `read` for the rest.
    pub fn read_packet(
        &mut self,
        idle: Duration,
        read: Duration,
    ) -> Result<(u8, Vec<u8>), ReadError> {
        let mut started = self.framer.has_buffered();
        loop {
            match self.framer.next_packet() {
                Ok(Some(p)) => return Ok(p),
                Ok(None) => {}
                Err(ProtocolError::PacketTooLarge) => return Err(ReadError::TooLarge),
                Err(e) => return Err(ReadError::Protocol(e)),
            }
            self.set_timeout(if started { read } else { idle });
            match self.stream.read(&mut self.scratch) {
                Ok(0) => return Err(ReadError::Closed),
                Ok(n) => {
                    self.bytes_in += n as u64;
                    self.framer.push(&self.scratch[..n]);
                    started = true;
                }
                Err(e) if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut) => {
                    return Err(if started {
                        ReadError::ReadTimeout
                    } else {
                        ReadError::IdleTimeout
                    });
                }
                Err(e) if e.kind() == ErrorKind::Interrupted => {}
                Err(e)
                    if matches!(e.kind(), ErrorKind::ConnectionReset | ErrorKind::BrokenPipe) =>
                {
                    return Err(ReadError::Closed)
                }
                Err(e) => return Err(ReadError::Io(e)),
            }
        }
    }

    /// Writes `out` completely and clears it; returns the bytes written.
    pub fn flush(&mut self, out: &mut Vec<u8>) -> std::io::Result<u64> {
        let n = out.len() as u64;
        let r = self.stream.write_all(out);
        out.clear();
        r.map(|_| n)
    }
}
