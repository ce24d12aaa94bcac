//! The client thread's io_uring path (`--io uring`). Once a connection is ready for the load it
//! leaves epoll and keeps one receive queued in the ring; each statement's bytes go out as a
//! send entry. Everything queued while the loop handles a batch of completions is submitted by
//! the one `io_uring_enter` that also waits for the next completions (with the loop's timeout),
//! so a wake that answers k replies costs one system call instead of 2k + 1 (k sends, k
//! receives, one epoll wait). Connection set-up (connect, handshake, prepares) and reconnects
//! stay on epoll; the epoll fd itself is watched by a poll entry in the ring.
//!
//! Buffers handed to the kernel stay put until their completion is taken: a connection's
//! receive buffer is allocated once and never resized, its output buffer is not written while
//! a send is queued (an output buffer of a connection that reconnects with a send still queued
//! is parked until the ring is idle), and the loop waits for every queued entry before the
//! buffers are dropped.

use std::os::fd::AsRawFd;
use std::time::{Duration, Instant};

use io_uring::{opcode, types, IoUring};
use nix::errno::Errno;

use super::Worker;

/// Bytes a connection's queued receive can take (larger replies take several completions).
const RECV_BUF: usize = 16 * 1024;
/// Submission queue entries; a full queue is submitted and the push retried.
const SQ_ENTRIES: u32 = 1024;

/// What a completion is for (the low two bits of its `user_data`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Recv = 0,
    Send = 1,
    Epoll = 2,
}

fn user_data(kind: Kind, idx: usize, gen: u32) -> u64 {
    ((gen as u64) << 32) | ((idx as u64) << 2) | kind as u64
}

fn decode(ud: u64) -> (Kind, usize, u32) {
    let kind = match ud & 3 {
        0 => Kind::Recv,
        1 => Kind::Send,
        _ => Kind::Epoll,
    };
    (kind, ((ud & 0xffff_ffff) >> 2) as usize, (ud >> 32) as u32)
}

/// A client thread's ring and what it has queued.
pub(super) struct Ring {
    ring: IoUring,
    /// Entries queued or submitted whose completion has not been taken.
    in_flight: usize,
    /// Whether the poll entry on the epoll fd is queued.
    epoll_armed: bool,
    /// Output buffers of connections that reconnected while a send from them was queued.
    parked: Vec<Vec<u8>>,
    /// Completions taken from the queue, handled after the ring is released.
    done: Vec<(u64, i32)>,
}

impl std::fmt::Debug for Ring {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Ring")
            .field("in_flight", &self.in_flight)
            .finish()
    }
}

impl Ring {
    /// A ring for `connections` connections, single issuer with deferred task work where the
    /// kernel has it (6.1+), plain otherwise.
    pub(super) fn new(connections: usize) -> std::io::Result<Ring> {
        // every connection has at most one receive and one send queued, plus the epoll poll;
        // the kernel wants at least as many completion entries as submission entries
        let cq = (2 * connections + 16)
            .next_power_of_two()
            .clamp(2 * SQ_ENTRIES as usize, 65_536) as u32;
        let ring = IoUring::builder()
            .setup_single_issuer()
            .setup_defer_taskrun()
            .setup_cqsize(cq)
            .setup_clamp()
            .build(SQ_ENTRIES)
            .or_else(|_| {
                IoUring::builder()
                    .setup_cqsize(cq)
                    .setup_clamp()
                    .build(SQ_ENTRIES)
            })?;
        Ok(Ring {
            ring,
            in_flight: 0,
            epoll_armed: false,
            parked: Vec::new(),
            done: Vec::new(),
        })
    }

    fn push(&mut self, entry: io_uring::squeue::Entry) {
        loop {
            // SAFETY: the entry's buffers and fds are the connection's, kept alive and unmoved
            // until its completion is taken (module doc).
            if unsafe { self.ring.submission().push(&entry) }.is_ok() {
                self.in_flight += 1;
                return;
            }
            let _ = self.ring.submit();
        }
    }
}

impl Worker {
    /// Moves the ready connection `i` from epoll to the ring and queues its first receive.
    pub(super) fn uring_adopt(&mut self, i: usize) {
        if self.uring.is_none() {
            return;
        }
        let c = &mut self.conns[i];
        let Some(sock) = c.sock.as_ref() else { return };
        let _ = self.epoll.delete(sock);
        if c.rbuf.is_empty() {
            c.rbuf = vec![0u8; RECV_BUF];
        }
        c.uring = true;
        c.want_out = false;
        self.uring_recv(i);
        // output the epoll path could not write yet
        self.uring_flush(i);
    }

    /// Queues a receive for connection `i` unless one is queued.
    fn uring_recv(&mut self, i: usize) {
        let c = &mut self.conns[i];
        let (Some(ring), Some(sock)) = (self.uring.as_mut(), c.sock.as_ref()) else {
            return;
        };
        if c.recv_queued || !c.uring {
            return;
        }
        let e = opcode::Recv::new(
            types::Fd(sock.as_raw_fd()),
            c.rbuf.as_mut_ptr(),
            c.rbuf.len() as u32,
        )
        .build()
        .user_data(user_data(Kind::Recv, i, c.gen));
        c.recv_queued = true;
        ring.push(e);
    }

    /// The ring's flush: takes the wire's output and queues it as one send, unless a send of
    /// this connection is queued (its completion flushes again).
    pub(super) fn uring_flush(&mut self, i: usize) {
        let c = &mut self.conns[i];
        if c.send_queued {
            return;
        }
        if c.out_pos == c.out.len() {
            c.out.clear();
            c.out_pos = 0;
        }
        c.wire.transmit(&mut c.out);
        let (Some(ring), Some(sock)) = (self.uring.as_mut(), c.sock.as_ref()) else {
            return;
        };
        if c.out_pos == c.out.len() {
            return;
        }
        let rest = &c.out[c.out_pos..];
        let e = opcode::Send::new(
            types::Fd(sock.as_raw_fd()),
            rest.as_ptr(),
            rest.len() as u32,
        )
        .flags(libc::MSG_NOSIGNAL)
        .build()
        .user_data(user_data(Kind::Send, i, c.gen));
        c.send_queued = true;
        ring.push(e);
    }

    /// Connection `i` is about to get a new socket: an output buffer a queued send still reads
    /// is parked, not reused.
    pub(super) fn uring_release_out(&mut self, i: usize) {
        let c = &mut self.conns[i];
        if let (true, Some(ring)) = (c.send_queued, self.uring.as_mut()) {
            ring.parked.push(std::mem::take(&mut c.out));
        }
    }

    /// Submits what is queued and waits until a completion arrives or `until`, then handles
    /// every completion there is (the ring's counterpart of `poll`).
    pub(super) fn uring_poll(&mut self, until: Option<Instant>) {
        let epfd = self.epoll.0.as_raw_fd();
        let Some(ring) = self.uring.as_mut() else {
            return self.poll(until);
        };
        if !ring.epoll_armed {
            ring.epoll_armed = true;
            let e = opcode::PollAdd::new(types::Fd(epfd), libc::POLLIN as u32)
                .build()
                .user_data(user_data(Kind::Epoll, 0, 0));
            ring.push(e);
        }
        let timeout = until.map_or(Duration::from_secs(1), |u| {
            u.saturating_duration_since(Instant::now())
        });
        let ts = types::Timespec::from(timeout);
        let args = types::SubmitArgs::new().timespec(&ts);
        match ring.ring.submitter().submit_with_args(1, &args) {
            Ok(_) => {}
            Err(e)
                if matches!(
                    e.raw_os_error(),
                    Some(libc::ETIME) | Some(libc::EINTR) | Some(libc::EBUSY)
                ) => {}
            Err(e) => self.shared.fail(format!("io_uring_enter: {e}")),
        }
        let mut done = std::mem::take(&mut ring.done);
        done.extend(ring.ring.completion().map(|c| (c.user_data(), c.result())));
        ring.in_flight -= done.len();
        for &(ud, res) in &done {
            let (kind, i, gen) = decode(ud);
            match kind {
                Kind::Epoll => {
                    if let Some(r) = self.uring.as_mut() {
                        r.epoll_armed = false;
                    }
                    self.poll(Some(Instant::now()));
                }
                Kind::Recv => self.uring_received(i, gen, res),
                Kind::Send => self.uring_sent(i, gen, res),
            }
        }
        done.clear();
        if let Some(r) = self.uring.as_mut() {
            r.done = done;
            if r.in_flight == 0 {
                r.parked.clear();
            }
        }
        self.pump_connects();
        self.flush_recs();
    }

    fn uring_received(&mut self, i: usize, gen: u32, res: i32) {
        let c = &mut self.conns[i];
        c.recv_queued = false;
        if c.gen != gen || c.sock.is_none() || !c.uring {
            // a stale receive of a socket that was replaced: the new one may need its own
            self.uring_recv(i);
            return;
        }
        if res < 0 {
            let e = Errno::from_raw(-res);
            if matches!(e, Errno::EINTR | Errno::EAGAIN) {
                return self.uring_recv(i);
            }
            return self.lost(i, e.desc().to_string());
        }
        if res == 0 {
            return self.lost(i, "server closed the connection".into());
        }
        self.clock = Instant::now();
        let c = &mut self.conns[i];
        if let Err(e) = c.wire.feed(&c.rbuf[..res as usize]) {
            return self.fatal_conn(i, format!("protocol error: {e}"));
        }
        while let Some(reply) = self.conns[i].wire.poll_reply() {
            self.on_reply(i, reply);
            if self.conns[i].sock.is_none() || self.conns[i].gen != gen {
                return;
            }
        }
        self.uring_flush(i);
        self.uring_recv(i);
    }

    fn uring_sent(&mut self, i: usize, gen: u32, res: i32) {
        let c = &mut self.conns[i];
        if c.gen != gen {
            // the send of a replaced socket (its buffer was parked)
            c.send_queued = false;
            return self.uring_flush(i);
        }
        c.send_queued = false;
        if res < 0 {
            let e = Errno::from_raw(-res);
            if matches!(e, Errno::EINTR | Errno::EAGAIN) {
                return self.uring_flush(i);
            }
            if c.sock.is_some() {
                return self.lost(i, e.desc().to_string());
            }
            return;
        }
        c.out_pos += res as usize;
        self.uring_flush(i);
    }

    /// Before the connections close: waits (bounded) until no send is queued, so the closing
    /// statements go out after the load's, in order.
    pub(super) fn uring_settle_sends(&mut self) {
        let until = Instant::now() + Duration::from_secs(2);
        while self.uring.is_some()
            && self.conns.iter().any(|c| c.send_queued)
            && Instant::now() < until
        {
            self.uring_poll(Some(Instant::now() + Duration::from_millis(5)));
        }
    }

    /// After the sockets are shut down: waits (bounded) for the completions of every queued
    /// entry, so no buffer the kernel may still write is dropped. Past the bound the buffers
    /// are leaked rather than freed under the kernel.
    pub(super) fn uring_drain(&mut self) {
        let until = Instant::now() + Duration::from_secs(2);
        loop {
            let Some(ring) = self.uring.as_mut() else {
                return;
            };
            // nothing but the poll on the epoll fd is left: cancel it (the cancel and the poll
            // complete as two completions)
            if ring.in_flight == 1 && ring.epoll_armed {
                let e = opcode::AsyncCancel::new(user_data(Kind::Epoll, 0, 0))
                    .build()
                    .user_data(user_data(Kind::Epoll, 0, 0));
                ring.push(e);
                ring.epoll_armed = false;
            }
            if ring.in_flight == 0 {
                return;
            }
            if Instant::now() >= until {
                for c in &mut self.conns {
                    std::mem::forget(std::mem::take(&mut c.rbuf));
                    std::mem::forget(std::mem::take(&mut c.out));
                }
                if let Some(r) = self.uring.as_mut() {
                    std::mem::forget(std::mem::take(&mut r.parked));
                }
                return;
            }
            self.uring_wait_only(Duration::from_millis(5));
        }
    }

    /// Takes completions without handling them (the connections are closed).
    fn uring_wait_only(&mut self, timeout: Duration) {
        let Some(ring) = self.uring.as_mut() else {
            return;
        };
        let ts = types::Timespec::from(timeout);
        let args = types::SubmitArgs::new().timespec(&ts);
        let _ = ring.ring.submitter().submit_with_args(1, &args);
        let n = ring.ring.completion().count();
        ring.in_flight = ring.in_flight.saturating_sub(n);
    }
}
