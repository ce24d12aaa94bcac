//! Reading whole packets from a blocking socket with MySQL's timeouts, and writing replies.
//!
//! The first byte of a command may take up to `wait_timeout` (idle time); once a command has
//! started, the rest must arrive within `net_read_timeout`, as in mysqld.

use std::io::{ErrorKind, Read, Write};
use std::net::TcpStream;
use std::time::Duration;

use protocol::packet::{Framer, FramerBuffers};
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

thread_local! {
    /// The read buffer, one per thread: a connection keeps only the bytes of packets it has
    /// not finished reading, so an idle connection holds no buffer.
    static SCRATCH: std::cell::RefCell<Vec<u8>> = std::cell::RefCell::new(vec![0; 64 * 1024]);
}

/// A connection's socket with its framing state.
#[derive(Debug)]
pub struct PacketIo {
    /// The socket.
    pub stream: TcpStream,
    framer: Framer,
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
            timeout: None,
            bytes_in: 0,
        }
    }

    /// Receives the coming command into `from`'s buffers ([`Framer::borrow_buffers`]).
    pub fn borrow_buffers(&mut self, from: &mut FramerBuffers) {
        self.framer.borrow_buffers(from);
    }

    /// Hands the buffers back to `to` when no bytes are pending, so an idle connection holds
    /// none ([`Framer::return_buffers`]).
    pub fn return_buffers(&mut self, to: &mut FramerBuffers) {
        self.framer.return_buffers(to);
    }

    /// Gives a command's payload buffer back for the next packet ([`Framer::recycle`]).
    pub fn recycle(&mut self, payload: Vec<u8>) {
        self.framer.recycle(payload);
    }

    /// The sequence id of the last packet header read ([`Framer::last_header_seq`]).
    pub fn last_header_seq(&self) -> u8 {
        self.framer.last_header_seq()
    }

    /// Takes bytes the pool's io_uring received from this socket (ring I/O).
    pub fn push_received(&mut self, bytes: &[u8]) {
        if !bytes.is_empty() {
            self.framer.push(bytes);
            self.bytes_in += bytes.len() as u64;
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
            let read = SCRATCH.with(|s| {
                let mut s = s.borrow_mut();
                let r = self.stream.read(&mut s[..]);
                if let Ok(n) = r {
                    self.framer.push(&s[..n]);
                }
                r
            });
            match read {
                Ok(0) => return Err(ReadError::Closed),
                Ok(n) => {
                    self.bytes_in += n as u64;
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

    /// Before closing after an error the client may still be sending into (1153 for a
    /// packet over `max_allowed_packet`): stops writing and reads and discards what arrives
    /// for up to `limit`, so the client can finish its write and read the error instead of
    /// having its write reset (which clients report as 2006, server gone away).
    pub fn drain_before_close(&mut self, limit: Duration) {
        let _ = self.stream.shutdown(std::net::Shutdown::Write);
        let deadline = std::time::Instant::now() + limit;
        let mut sink = [0u8; 16 * 1024];
        loop {
            let left = deadline.saturating_duration_since(std::time::Instant::now());
            if left.is_zero() {
                return;
            }
            self.set_timeout(left);
            match self.stream.read(&mut sink) {
                Ok(0) => return,
                Ok(n) => self.bytes_in += n as u64,
                Err(e) if e.kind() == ErrorKind::Interrupted => {}
                Err(_) => return,
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
