//! One client connection: the handshake, then a loop of whole commands, each decoded, run and
//! answered. The same code runs under both connection-handling models (it implements
//! [`pool_core::Session`]); nothing here knows which one drives it.

pub mod commands;
pub mod handshake;
pub mod io;
pub(crate) mod local_infile;
pub mod panic;
pub(crate) mod pool_facts;
pub mod reply;
pub mod state;
pub mod statements;

use std::net::TcpStream;
use std::os::fd::{AsRawFd, RawFd};
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Duration;

use pool_core::policy::{SessionPriority, StmtClass};
use pool_core::{Outcome, Received, Session};

use crate::accounts::Privilege;
use crate::connections::{ConnInfo, KILL_NONE};
use crate::core::Core;
use crate::error::{ErrorCode, SqlError};
use crate::log;
use crate::vars::Counter;
use io::{PacketIo, ReadError};
use protocol::packet::FramerBuffers;
use state::SessionState;

/// A client connection driven by a connection handler.
#[derive(Debug)]
pub struct ClientSession {
    io: PacketIo,
    out: Vec<u8>,
    seq: u8,
    /// Everything but the socket.
    pub st: SessionState,
    nonce: [u8; 20],
    /// Whether the connection holds a slot in [`Core::connection_count`].
    counted: bool,
    authenticated: bool,
    quit: bool,
    /// Bytes the pool's io_uring received for the coming command (ring I/O).
    received: Vec<u8>,
    /// The pool's io_uring could not send the last reply (ring I/O): the connection ends.
    write_failed: bool,
}

impl ClientSession {
    /// A session for a freshly accepted socket. It takes a slot in
    /// [`Core::connection_count`] if one is left (else the handshake refuses it with 1040
    /// before the greeting); the slot goes back when the session drops or is refused.
    pub fn new(core: Arc<Core>, stream: TcpStream) -> ClientSession {
        let counted = core.take_connection_slot();
        let host = stream
            .peer_addr()
            .map(|a| a.ip().to_string())
            .unwrap_or_else(|_| "unknown".into());
        let _ = stream.set_nodelay(true);
        let write_timeout = core.vars.global(core.ids.net_write_timeout).as_int();
        let _ = stream.set_write_timeout(Some(Duration::from_secs(write_timeout.max(1) as u64)));
        let id = core.connections.next_id();
        let conn = Arc::new(ConnInfo::new(id, host, stream.as_raw_fd()));
        core.connections.insert(conn.clone());
        let max_packet = core.vars.global(core.ids.max_allowed_packet).as_int() as usize;
        ClientSession {
            io: PacketIo::new(stream, max_packet),
            out: Vec::new(),
            seq: 0,
            st: SessionState::new(core, conn),
            nonce: handshake::new_nonce(),
            counted,
            authenticated: false,
            quit: false,
            received: Vec::new(),
            write_failed: false,
        }
    }

    fn secs(&self, id: crate::vars::VarId) -> Duration {
        Duration::from_secs(self.st.vars.get(id).as_int().max(1) as u64)
    }

    /// The idle timeout that applies: `interactive_timeout` for interactive clients.
    fn idle(&self) -> Duration {
        let ids = self.st.core.ids;
        self.secs(if self.st.interactive {
            ids.interactive_timeout
        } else {
            ids.wait_timeout
        })
    }

    /// Sends what is buffered; false when the socket failed.
    fn flush(&mut self) -> bool {
        match self.io.flush(&mut self.out) {
            Ok(n) => {
                self.st.conn.counters.add(Counter::BytesSent, n);
                true
            }
            Err(_) => false,
        }
    }

    fn take_bytes_in(&mut self) {
        let n = std::mem::take(&mut self.io.bytes_in);
        self.st.conn.counters.add(Counter::BytesReceived, n);
    }

    /// Writes a statement's result with the session's status flags and warning count
    /// (`more`: another result of the same COM_QUERY follows), and records the id it
    /// generated for `LAST_INSERT_ID()` and its affected rows for `ROW_COUNT()`.
    fn write_result(&mut self, o: &crate::sql::Output, binary: bool, more: bool) {
        self.st.row_count = -1;
        if let crate::sql::Output::Ok {
            last_insert_id,
            affected_rows,
            ..
        } = o
        {
            if *last_insert_id != 0 {
                self.st.last_insert_id = *last_insert_id;
            }
            self.st.row_count = i64::try_from(*affected_rows).unwrap_or(i64::MAX);
        }
        if let crate::sql::Output::Rows(rs) = o {
            if let Err(e) = self.reserve_reply(rs) {
                self.write_err(&e);
                return;
            }
        }
        let warnings = self.st.warnings.count().min(u64::from(u16::MAX)) as u16;
        let mut status = self.st.status_flags();
        if more {
            status |= protocol::StatusFlags::MORE_RESULTS_EXISTS;
        }
        reply::write_output(
            &mut self.out,
            &mut self.seq,
            self.st.caps,
            o,
            binary,
            status,
            warnings,
        );
    }

    /// Room for a result set's packets before they are encoded: the reply buffer holds every
    /// row and a text row is assembled in a buffer of its own first, so a result with large
    /// values needs their bytes plus its largest row's. 1037 (and no rows) when the memory
    /// budget or the allocator refuses it.
    fn reserve_reply(&mut self, rs: &crate::sql::ResultSet) -> crate::error::SqlResult<()> {
        let row_bytes = |row: &[crate::value::Value]| {
            row.iter()
                .map(|v| match v {
                    crate::value::Value::Bytes(b) => b.len().saturating_add(9),
                    _ => 32,
                })
                .fold(0usize, usize::saturating_add)
        };
        let (total, largest) = rs.rows.iter().fold((0usize, 0usize), |(t, l), r| {
            let n = row_bytes(r);
            (t.saturating_add(n), l.max(n))
        });
        if total < crate::memory::CHECKED_VALUE {
            return Ok(());
        }
        let need = total.saturating_add(largest);
        self.st.core.memory.reserve_value(need)?;
        self.out
            .try_reserve(total)
            .map_err(|_| crate::memory::out_of_memory(need))
    }

    /// Writes an ERR packet with the current sequence id.
    fn write_err(&mut self, e: &SqlError) {
        self.st.row_count = -1;
        reply::write_err(&mut self.out, &mut self.seq, e);
    }

    /// Ends the connection after a read failure, logging what MySQL would.
    fn read_failed(&mut self, e: ReadError) -> Outcome {
        let id = self.st.conn.id;
        match e {
            ReadError::Closed => {
                if self.st.conn.killed.load(Ordering::Relaxed) == KILL_NONE {
                    self.st.core.retired.add(Counter::AbortedClients, 1);
                }
            }
            ReadError::IdleTimeout => {
                self.seq = 0;
                self.write_err(&SqlError::new(
                    ErrorCode::ClientInteractionTimeout,
                    "The client was disconnected by the server because of inactivity. See wait_timeout and interactive_timeout for configuring this behavior.",
                ));
                self.flush();
                self.st.core.retired.add(Counter::AbortedClients, 1);
                log::write(
                    log::Level::Note,
                    id,
                    "Aborted connection: idle longer than wait_timeout",
                );
            }
            ReadError::ReadTimeout => {
                self.st.core.retired.add(Counter::AbortedClients, 1);
                log::write(
                    log::Level::Note,
                    id,
                    "Aborted connection: Got timeout reading communication packets",
                );
            }
            ReadError::TooLarge => {
                // As mysqld: the error follows the header that announced too much.
                self.seq = self.io.last_header_seq().wrapping_add(1);
                self.write_err(&SqlError::new(
                    ErrorCode::NetPacketTooLarge,
                    "Got a packet bigger than 'max_allowed_packet' bytes",
                ));
                self.flush();
                let read = self.secs(self.st.core.ids.net_read_timeout);
                self.io.drain_before_close(read.min(Duration::from_secs(5)));
                self.st.core.retired.add(Counter::AbortedClients, 1);
                log::write(
                    log::Level::Note,
                    id,
                    "Aborted connection: Got a packet bigger than 'max_allowed_packet' bytes",
                );
            }
            ReadError::Protocol(p) => {
                self.write_err(&SqlError::new(
                    ErrorCode::NetReadError,
                    format!("Got an error reading communication packets: {p}"),
                ));
                self.flush();
                self.st.core.retired.add(Counter::AbortedClients, 1);
                log::write(log::Level::Note, id, &format!("Aborted connection: {p}"));
            }
            ReadError::Io(err) => {
                self.st.core.retired.add(Counter::AbortedClients, 1);
                log::write(log::Level::Note, id, &format!("Aborted connection: {err}"));
            }
        }
        Outcome::Close
    }
}

thread_local! {
    /// The reply buffer of the thread running a session's command.
    static OUT: std::cell::RefCell<Vec<u8>> = const { std::cell::RefCell::new(Vec::new()) };
    /// The input buffers of the thread running a session's command.
    static IN: std::cell::RefCell<FramerBuffers> = std::cell::RefCell::default();
}

/// A command at least this long is followed by [`release_free_memory`].
const LARGE_PACKET: usize = 1 << 20;

/// Gives the allocator's free memory back to the OS (the engine's release: the server's
/// allocator's own). A large command (a multi-megabyte statement tokenizes into millions of
/// small allocations) leaves its thread's malloc arena holding that memory once freed; under
/// the thread pool successive commands run on different threads, each keeping its own, so a
/// few large packets held 90 MB. Called only after a large command, so its cost (a walk of the
/// arenas) is rare; an idle thread gives its whole heap back instead (`thread_idle`).
fn release_free_memory() {
    tpbed_engine::release_free_memory();
}

impl ClientSession {
    /// Reads, runs and answers one command (`deferred`: the reply stays in `out`, which is
    /// sent first if the session must wait for the command's first byte).
    fn run_one(&mut self, deferred: bool) -> Outcome {
        if deferred && !self.io.has_buffered() && !self.out.is_empty() && !self.flush() {
            return Outcome::Close;
        }
        let (idle, read) = (self.idle(), self.secs(self.st.core.ids.net_read_timeout));
        let packet = self.io.read_packet(idle, read);
        self.take_bytes_in();
        let (seq, payload) = match packet {
            Ok(p) => p,
            Err(e) => return self.read_failed(e),
        };
        // The reply follows the last fragment of the command (a command of 16 MiB or more
        // arrives in several).
        self.seq = seq.wrapping_add(protocol::packet::fragment_count(payload.len()) as u8);
        // A KILL QUERY that found no statement running ends nothing: the new command starts
        // unkilled (a KILL CONNECTION stays).
        let _ = self.st.conn.killed.compare_exchange(
            crate::connections::KILL_QUERY,
            KILL_NONE,
            Ordering::Relaxed,
            Ordering::Relaxed,
        );
        let (reply_start, reply_seq) = (self.out.len(), self.seq);
        let outcome = match panic::catch(|| commands::dispatch(self, &payload)) {
            Ok(o) => o,
            Err(what) => {
                // Whatever part of a reply was written goes; the client gets one error.
                self.out.truncate(reply_start);
                self.seq = reply_seq;
                self.st.shared_warnings.get_mut().clear();
                self.st.conn.end();
                log::write(
                    log::Level::Error,
                    self.st.conn.id,
                    &format!("command failed with an internal error: {what}"),
                );
                self.write_err(&SqlError::new(
                    ErrorCode::Unknown,
                    format!("Internal error: {what}"),
                ));
                Outcome::Continue
            }
        };
        let large = payload.len() >= LARGE_PACKET;
        self.io.recycle(payload);
        if large {
            release_free_memory();
        }
        let outcome =
            if self.st.conn.killed.load(Ordering::Relaxed) >= crate::connections::KILL_CONNECTION {
                Outcome::Close
            } else {
                outcome
            };
        // A deferred reply stays in `out` for the pool to send, unless the connection ends.
        if (!deferred || outcome == Outcome::Close) && !self.flush() {
            return Outcome::Close;
        }
        outcome
    }

    /// Runs one command with the thread's reply and input buffers lent to the session (an
    /// idle connection holds none), its reply appended to `out`; `deferred` leaves the reply
    /// there for the pool to send.
    fn run_with_buffers(&mut self, out: &mut Vec<u8>, deferred: bool) -> Outcome {
        std::mem::swap(&mut self.out, out);
        IN.with(|b| self.io.borrow_buffers(&mut b.borrow_mut()));
        let received = std::mem::take(&mut self.received);
        self.io.push_received(&received);
        let outcome = self.run_one(deferred);
        IN.with(|b| self.io.return_buffers(&mut b.borrow_mut()));
        std::mem::swap(&mut self.out, out);
        outcome
    }
}

impl Session for ClientSession {
    fn handshake(&mut self) -> Outcome {
        let outcome = handshake::run(self);
        self.take_bytes_in();
        if outcome == Outcome::Continue {
            self.authenticated = true;
            self.st.conn.end();
        }
        outcome
    }

    fn run(&mut self) -> Outcome {
        OUT.with(|b| {
            let mut out = b.borrow_mut();
            let outcome = self.run_with_buffers(&mut out, false);
            out.clear();
            if out.capacity() > 1 << 20 {
                *out = Vec::new();
            }
            outcome
        })
    }

    fn receive(&mut self, input: Received) {
        match input {
            Received::Bytes(b) => self.received.extend_from_slice(&b),
            Received::WriteFailed { .. } => self.write_failed = true,
        }
    }

    fn run_deferred(&mut self, out: &mut Vec<u8>) -> Outcome {
        // As when a blocking write of the reply fails: the connection ends.
        if self.write_failed {
            return Outcome::Close;
        }
        self.run_with_buffers(out, true)
    }

    fn write_timeout(&self) -> Duration {
        self.secs(self.st.core.ids.net_write_timeout)
    }

    fn in_transaction(&self) -> bool {
        self.st.in_transaction
    }

    fn is_tp_admin(&self) -> bool {
        self.st.privileges.has(Privilege::TpConnectionAdmin)
    }

    fn high_priority(&self) -> bool {
        self.st
            .core
            .ids
            .tp_high_priority
            .is_some_and(|id| self.st.vars.get(id).as_bool())
    }

    fn priority(&self) -> SessionPriority {
        let Some(id) = self.st.core.ids.tp_priority else {
            return SessionPriority::Auto;
        };
        match self.st.vars.get(id).as_str() {
            "high" => SessionPriority::High,
            "low" => SessionPriority::Low,
            _ => SessionPriority::Auto,
        }
    }

    fn holds_locks(&self) -> bool {
        self.st.locked_tables.is_some()
            || self.st.trx.try_borrow().is_ok_and(|t| {
                t.as_ref()
                    .and_then(|t| t.lock_handle())
                    .is_some_and(|l| l.holds_locks())
            })
    }

    fn blocks_others(&self) -> bool {
        self.st.trx.try_borrow().is_ok_and(|t| {
            t.as_ref()
                .and_then(|t| t.lock_handle())
                .is_some_and(|l| l.blocks_others())
        })
    }

    fn next_class(&self) -> StmtClass {
        if self.io.has_buffered() || !self.received.is_empty() {
            // Bytes already taken off the socket: the framer and the ring keep them.
            return StmtClass::UNKNOWN;
        }
        pool_facts::peek_class(self.io.stream.as_raw_fd(), |id| {
            let digest = self.st.statements.get(&id)?.digest.as_ref()?;
            let hash = digest.digest().hash();
            let key = u64::from_le_bytes(hash[..8].try_into().ok()?);
            Some((pool_facts::kind_of(digest.text().as_bytes()), key.max(1)))
        })
    }

    fn has_buffered_input(&self) -> bool {
        self.io.has_buffered()
    }

    fn raw_fd(&self) -> RawFd {
        self.io.stream.as_raw_fd()
    }

    fn idle_timeout(&self) -> Duration {
        self.idle()
    }

    fn expire(&mut self) {
        self.read_failed(ReadError::IdleTimeout);
    }

    fn refuse_no_thread(&mut self, error: &std::io::Error) {
        handshake::refuse_no_thread(self, error);
    }

    fn kill(&self) {
        self.st.conn.kill(crate::connections::KILL_CONNECTION);
    }

    /// A thread going idle (entering the thread cache, or a pool query thread asleep after
    /// its statements) gives its allocator heap back: the pages its sessions allocated and
    /// others later freed into (undo, sort runs, rows freed by purge) stay with it otherwise.
    fn thread_idle() {
        crate::memory::release_thread_memory();
    }

    /// A pool query thread that ran statements gives its free memory back after sleeping a
    /// second without work.
    fn idle_release_after() -> Option<Duration> {
        Some(Duration::from_secs(1))
    }
}

impl Drop for ClientSession {
    fn drop(&mut self) {
        let core = self.st.core.clone();
        // The slot goes first: once the session is gone from the processlist
        // (`Threads_connected`), it holds no slot either.
        if self.counted {
            core.release_connection_slot();
        }
        self.st.close_all_statements();
        if let Some(c) = core.connections.remove(self.st.conn.id) {
            core.retired.absorb(&c.counters);
        }
    }
}
