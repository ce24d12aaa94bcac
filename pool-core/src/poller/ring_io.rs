//! One connection's statement I/O under `tpbed_thread_pool_io=ring`, as a state machine the
//! io_uring backend drives (and the loom models check without a kernel). Invariant: at most one
//! request of a connection is in flight, and none while its session runs — a receive is armed
//! only when the connection is parked with nothing left to send, a send only for a reply the
//! session finished, and the next receive only once that reply has left completely. So a
//! connection's commands are reported one at a time, in order, and its socket is the
//! session's own whenever a thread holds it.

use crate::session::Received;
use std::os::fd::RawFd;
use std::time::{Duration, Instant};

/// The request a connection has in flight.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Op {
    /// A receive into a provided buffer.
    Recv,
    /// A send of the rest of the reply.
    Send,
}

/// What the backend does next for a connection after an event.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Next {
    /// Submit a receive.
    Recv,
    /// Submit a send of [`ConnIo::unsent`], bounded by `net_write_timeout`.
    Send,
    /// Report the connection to its group: input (or a failure) waits in [`ConnIo::take_input`].
    Report,
}

/// How a receive ended, as the backend read its completion.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum RecvEnd<'a> {
    /// Bytes arrived.
    Data(&'a [u8]),
    /// End of file or a socket error: the session's own read finds out which.
    Closed,
    /// No provided buffer was free, or the submitting thread exited: submit it again.
    Retry,
}

/// How a send ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum SendEnd {
    /// This many bytes left.
    Sent(usize),
    /// Cancelled: by the `net_write_timeout` link, or by the exit of the submitting thread.
    Cancelled,
    /// The socket failed (reset, shut down by KILL).
    Failed,
}

/// A registered connection's I/O state.
#[derive(Debug)]
pub(crate) struct ConnIo {
    pub(crate) fd: RawFd,
    in_flight: Option<Op>,
    input: Vec<u8>,
    failure: Option<Received>,
    output: Vec<u8>,
    sent: usize,
    write_timeout: Duration,
    deadline: Option<Instant>,
}

impl ConnIo {
    pub(crate) fn new(fd: RawFd) -> ConnIo {
        ConnIo {
            fd,
            in_flight: None,
            input: Vec::new(),
            failure: None,
            output: Vec::new(),
            sent: 0,
            write_timeout: Duration::from_secs(60),
            deadline: None,
        }
    }

    /// The request in flight, if any.
    pub(crate) fn in_flight(&self) -> Option<Op> {
        self.in_flight
    }

    /// Parks the connection (register or re-arm): send the queued reply first, else receive.
    /// Nothing new is armed while a request is in flight or a report is not yet taken.
    pub(crate) fn arm(&mut self, now: Instant) -> Option<Next> {
        if self.in_flight.is_some() || !self.input.is_empty() || self.failure.is_some() {
            return None;
        }
        Some(if self.sent < self.output.len() {
            self.deadline = Some(now + self.write_timeout);
            self.in_flight = Some(Op::Send);
            Next::Send
        } else {
            self.in_flight = Some(Op::Recv);
            Next::Recv
        })
    }

    /// A reply the session finished, sent at the next [`arm`](ConnIo::arm).
    pub(crate) fn queue_output(&mut self, out: &mut Vec<u8>, write_timeout: Duration) {
        debug_assert!(self.in_flight.is_none() && self.sent == self.output.len());
        std::mem::swap(&mut self.output, out);
        out.clear();
        self.sent = 0;
        self.write_timeout = write_timeout;
    }

    /// The part of the reply still to send.
    pub(crate) fn unsent(&self) -> &[u8] {
        &self.output[self.sent..]
    }

    /// The send's `net_write_timeout`.
    pub(crate) fn write_timeout(&self) -> Duration {
        self.write_timeout
    }

    /// Whether a reply is still leaving (the connection is bounded by `net_write_timeout`,
    /// not by `wait_timeout`, meanwhile).
    pub(crate) fn sending(&self) -> bool {
        self.in_flight == Some(Op::Send)
    }

    /// A receive completed.
    pub(crate) fn on_recv(&mut self, end: RecvEnd<'_>) -> Next {
        debug_assert_eq!(self.in_flight, Some(Op::Recv));
        match end {
            RecvEnd::Data(b) => {
                self.in_flight = None;
                self.input.extend_from_slice(b);
                Next::Report
            }
            RecvEnd::Closed => {
                self.in_flight = None;
                Next::Report
            }
            RecvEnd::Retry => Next::Recv,
        }
    }

    /// A send completed: continue where it stopped, or receive once the reply has left.
    pub(crate) fn on_send(&mut self, end: SendEnd, now: Instant) -> Next {
        debug_assert_eq!(self.in_flight, Some(Op::Send));
        let timed_out = self.deadline.is_some_and(|d| now >= d);
        match end {
            SendEnd::Sent(n) => self.sent = (self.sent + n).min(self.output.len()),
            SendEnd::Cancelled if !timed_out => {}
            SendEnd::Cancelled | SendEnd::Failed => {
                self.in_flight = None;
                self.failure = Some(Received::WriteFailed { timed_out });
                self.release_output();
                return Next::Report;
            }
        }
        if self.sent < self.output.len() {
            return Next::Send;
        }
        self.release_output();
        self.in_flight = Some(Op::Recv);
        Next::Recv
    }

    /// Hands what the connection received (or why it failed) to the thread about to run it.
    pub(crate) fn take_input(&mut self) -> Option<Received> {
        if let Some(f) = self.failure.take() {
            return Some(f);
        }
        (!self.input.is_empty()).then(|| Received::Bytes(std::mem::take(&mut self.input)))
    }

    /// The reply buffer, taken when the connection is deregistered while its send is in
    /// flight: the kernel may still read it until the send's completion arrives.
    pub(crate) fn take_output(&mut self) -> Vec<u8> {
        self.sent = 0;
        std::mem::take(&mut self.output)
    }

    fn release_output(&mut self) {
        self.output = Vec::new();
        self.sent = 0;
        self.deadline = None;
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    #[test]
    fn a_reply_leaves_before_the_next_receive_and_a_partial_send_continues() {
        let now = Instant::now();
        let mut c = ConnIo::new(3);
        assert_eq!(c.arm(now), Some(Next::Recv));
        assert_eq!(c.arm(now), None, "one request in flight");
        assert_eq!(c.on_recv(RecvEnd::Data(b"abc")), Next::Report);
        assert_eq!(c.take_input(), Some(Received::Bytes(b"abc".to_vec())));
        let mut out = b"reply".to_vec();
        c.queue_output(&mut out, Duration::from_secs(1));
        assert!(out.is_empty());
        assert_eq!(c.arm(now), Some(Next::Send));
        assert_eq!(c.on_send(SendEnd::Sent(2), now), Next::Send);
        assert_eq!(c.unsent(), b"ply");
        assert_eq!(
            c.on_send(SendEnd::Cancelled, now),
            Next::Send,
            "thread exit"
        );
        assert_eq!(c.on_send(SendEnd::Sent(3), now), Next::Recv);
        assert!(!c.sending());
        assert_eq!(c.in_flight(), Some(Op::Recv));
    }

    #[test]
    fn a_send_past_its_timeout_or_failed_reports_the_failure() {
        let now = Instant::now();
        let mut c = ConnIo::new(3);
        let mut out = b"reply".to_vec();
        c.queue_output(&mut out, Duration::from_secs(1));
        assert_eq!(c.arm(now), Some(Next::Send));
        let later = now + Duration::from_secs(2);
        assert_eq!(c.on_send(SendEnd::Cancelled, later), Next::Report);
        assert_eq!(
            c.take_input(),
            Some(Received::WriteFailed { timed_out: true })
        );
        c.queue_output(&mut b"x".to_vec(), Duration::from_secs(1));
        assert_eq!(c.arm(now), Some(Next::Send));
        assert_eq!(c.on_send(SendEnd::Failed, now), Next::Report);
        assert_eq!(
            c.take_input(),
            Some(Received::WriteFailed { timed_out: false })
        );
    }

    #[test]
    fn end_of_file_is_reported_with_no_bytes_and_a_retry_stays_in_flight() {
        let mut c = ConnIo::new(3);
        assert_eq!(c.arm(Instant::now()), Some(Next::Recv));
        assert_eq!(c.on_recv(RecvEnd::Retry), Next::Recv);
        assert_eq!(c.in_flight(), Some(Op::Recv));
        assert_eq!(c.on_recv(RecvEnd::Closed), Next::Report);
        assert_eq!(c.take_input(), None);
        assert_eq!(c.in_flight(), None);
    }
}
