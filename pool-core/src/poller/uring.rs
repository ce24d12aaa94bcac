//! io_uring backend: one `IORING_OP_POLL_ADD` (one-shot) per armed connection, its token as
//! `user_data`. Re-arms are pushed by workers while they hold their group's mutex (no SQPOLL).
//! A re-arm made while a thread of the group is blocked in `poll` is submitted at once (one
//! `io_uring_enter`); otherwise it is deferred ([`Poller::rearm_deferred`]) and handed to the
//! kernel by the next poll's own enter: the blocking poll's `io_uring_enter` submits every
//! pushed request before it waits, and a non-blocking poll (made only while events are queued,
//! so a blocking poll follows once they are drained), which otherwise makes no system call,
//! submits once [`DEFER_BATCH`] re-arms are waiting. Under load that turns one enter per
//! statement into one per batch. Invariant: the submission queue is
//! touched only under `sq` and the completion queue only under `cq`, which is what the
//! io-uring crate's `*_shared` accessors require; `deferred` never counts fewer requests than
//! are pushed and unsubmitted, or is at least [`DEFER_BATCH`] (it is cleared before a
//! submission, never after, and set to the batch when the kernel refuses one).
//!
//! A request belongs to the thread whose `io_uring_enter` submitted it, and the kernel cancels
//! a thread's requests when it exits (the completion carries `-ECANCELED`). Pool threads
//! retire (`thread_pool_max_unused_threads`, the transaction-limit cap, idle connection
//! handlers), so every registered token is kept in `live` with its fd until it is
//! deregistered, and a cancelled poll of a live token is submitted again by the thread that
//! takes the completion. Without this, the connections armed by a retired thread were never
//! reported again (sysbench's 1,024 threads did not finish connecting).
//!
//! With `tpbed_thread_pool_io=ring` ([`UringPoller::new_ring`]) the same ring moves the bytes:
//! arming a connection submits a receive into the group's provided-buffer ring (or first the
//! send of what its last reply left unsent, with `net_write_timeout` as a linked timeout), and
//! a receive's completion copies the bytes into the connection's [`ConnIo`] and reports its
//! token, so the thread that runs the command calls no `recv`. It offers the reply to the
//! socket once without waiting (`queue_output`): a reply that fits the send buffer costs one
//! `send` instead of a ring send whose completion (and its timeout's) would wake a polling
//! thread only to submit the next receive. The receive is
//! one-shot, not multishot: a multishot receive would stay armed while a thread runs the
//! session and could take bytes the session is reading itself (the rest of a long command,
//! the next command of a transaction held bound by the transaction limit). The user data of a
//! data request is the token with the request's kind in its top two bits (tokens never use
//! them, [`Token::new`]). A request's memory (a reply buffer, a timeout) outlives it: a
//! connection deregistered with a request in flight leaves it in `orphans` until the
//! completion comes, and a poller dropped with requests in flight cancels them and waits.

use super::buf_ring::{BufRing, BGID};
use super::ring_io::{ConnIo, Next, Op, RecvEnd, SendEnd};
use super::{new_eventfd, shutdown_fd, signal_eventfd, Poller, Token, DEFER_BATCH, MAX_EVENTS};
use crate::session::Received;
use io_uring::{cqueue, opcode, squeue, types, IoUring};
use std::collections::HashMap;
use std::io;
use std::os::fd::{AsRawFd, OwnedFd, RawFd};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

const WAKE: u64 = u64::MAX;
/// `user_data` of requests whose completions carry nothing (poll removals, cancels, linked
/// timeouts).
const IGNORE: u64 = u64::MAX - 1;
/// Submission queue entries per ring; a full queue is submitted and the push retried.
const ENTRIES: u32 = 256;
/// Kind bits of a data request's `user_data`.
const RECV: u64 = 1 << 62;
const SEND: u64 = 2 << 62;
const KIND: u64 = 3 << 62;
/// How long a dropped poller waits for the completions of its cancelled requests.
const DRAIN_LIMIT: Duration = Duration::from_secs(2);

/// A registered connection: its fd and, in ring mode, its I/O state.
#[derive(Debug)]
struct Live {
    io: ConnIo,
    /// The send's linked timeout, read by the kernel when the send is submitted.
    write_limit: Box<types::Timespec>,
}

/// What a request in flight for a deregistered connection still refers to.
#[derive(Debug)]
struct Orphan {
    _output: Vec<u8>,
    _write_limit: Box<types::Timespec>,
}

/// One group's ring and wake fd.
pub(crate) struct UringPoller {
    ring: IoUring,
    sq: Mutex<()>,
    cq: Mutex<()>,
    /// Registered tokens (user data of their requests without the kind bits), from `register`
    /// until `deregister`. Lock order: `cq`, then `live`, then `orphans`, then `sq`; a request
    /// for a token is pushed only while `live` is held.
    live: Mutex<HashMap<u64, Live>>,
    /// Requests in flight of deregistered connections, by user data, until their completion.
    orphans: Mutex<HashMap<u64, Orphan>>,
    /// Ring mode: the buffers receives land in. None: readiness only.
    bufs: Option<BufRing>,
    /// Requests pushed by `rearm_deferred` since the last submission.
    deferred: AtomicUsize,
    wake: OwnedFd,
}

impl std::fmt::Debug for UringPoller {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("UringPoller")
            .field("ring_fd", &self.ring.as_raw_fd())
            .finish()
    }
}

/// `send(MSG_DONTWAIT)` of `bytes` on `fd`: how many left (0 on any error, which the ring's
/// own send of the rest then reports).
fn send_without_waiting(fd: RawFd, bytes: &[u8]) -> usize {
    if bytes.is_empty() {
        return 0;
    }
    // SAFETY: sends from a live slice; the fd is the connection's open socket.
    let n = unsafe {
        libc::send(
            fd,
            bytes.as_ptr().cast(),
            bytes.len(),
            libc::MSG_DONTWAIT | libc::MSG_NOSIGNAL,
        )
    };
    usize::try_from(n).unwrap_or(0)
}

fn poll_flags() -> u32 {
    (libc::POLLIN | libc::POLLRDHUP) as u32
}

/// Checks that io_uring can be used here: not disabled by sysctl, a ring can be created, and
/// a poll request completes. Returns the reason when it cannot.
pub(super) fn probe() -> Result<(), String> {
    if let Ok(v) = std::fs::read_to_string("/proc/sys/kernel/io_uring_disabled") {
        if v.trim() == "2" {
            return Err("io_uring is disabled (kernel.io_uring_disabled=2)".into());
        }
    }
    let p = UringPoller::new().map_err(|e| format!("io_uring_setup failed: {e}"))?;
    let mut probe = io_uring::Probe::new();
    p.ring
        .submitter()
        .register_probe(&mut probe)
        .map_err(|e| format!("io_uring probe failed: {e}"))?;
    if !probe.is_supported(opcode::PollAdd::CODE) {
        return Err("io_uring lacks IORING_OP_POLL_ADD".into());
    }
    p.wake().map_err(|e| format!("eventfd write failed: {e}"))?;
    let mut out = Vec::new();
    let mut woken = false;
    for _ in 0..3 {
        woken |= p
            .poll_inner(&mut out, true)
            .map_err(|e| format!("io_uring wait failed: {e}"))?;
        if woken {
            return Ok(());
        }
    }
    Err("io_uring poll request did not complete".into())
}

/// Checks that the ring data path can be used here: a ring with a provided-buffer ring, and
/// receive, send, linked timeouts and cancellation. Returns the reason when it cannot.
pub(super) fn probe_ring() -> Result<(), String> {
    probe()?;
    let p = UringPoller::new_ring().map_err(|e| format!("no provided-buffer ring: {e}"))?;
    let mut probe = io_uring::Probe::new();
    p.ring
        .submitter()
        .register_probe(&mut probe)
        .map_err(|e| format!("io_uring probe failed: {e}"))?;
    let needed = [
        (opcode::Recv::CODE, "IORING_OP_RECV"),
        (opcode::Send::CODE, "IORING_OP_SEND"),
        (opcode::LinkTimeout::CODE, "IORING_OP_LINK_TIMEOUT"),
        (opcode::AsyncCancel::CODE, "IORING_OP_ASYNC_CANCEL"),
    ];
    match needed.iter().find(|(code, _)| !probe.is_supported(*code)) {
        Some((_, name)) => Err(format!("io_uring lacks {name}")),
        None => Ok(()),
    }
}

impl UringPoller {
    /// A ring that also moves statement bytes (`tpbed_thread_pool_io=ring`).
    pub(crate) fn new_ring() -> io::Result<UringPoller> {
        let mut p = UringPoller::new()?;
        p.bufs = Some(BufRing::register(&p.ring)?);
        Ok(p)
    }

    /// A new ring with a poll request on its wake fd.
    pub(crate) fn new() -> io::Result<UringPoller> {
        // A poll completion is posted by task work run on the thread that submitted the
        // request. Cooperative task running (Linux 5.19+) lets that work wait for the thread's
        // next kernel entry instead of interrupting it with an IPI (a VM exit here); a sleeping
        // thread is still woken for it. Older kernels refuse the flag: plain ring then.
        let ring = match IoUring::builder().setup_coop_taskrun().build(ENTRIES) {
            Ok(r) => r,
            Err(e) if e.raw_os_error() == Some(libc::EINVAL) => {
                IoUring::builder().build(ENTRIES)?
            }
            Err(e) => return Err(e),
        };
        let wake = new_eventfd()?;
        let p = UringPoller {
            ring,
            sq: Mutex::new(()),
            cq: Mutex::new(()),
            live: Mutex::new(HashMap::new()),
            orphans: Mutex::new(HashMap::new()),
            bufs: None,
            deferred: AtomicUsize::new(0),
            wake,
        };
        p.arm_wake()?;
        Ok(p)
    }

    fn arm_wake(&self) -> io::Result<()> {
        let e = opcode::PollAdd::new(types::Fd(self.wake.as_raw_fd()), poll_flags())
            .build()
            .user_data(WAKE);
        self.push(e)
    }

    /// Pushes `e` and submits everything pushed so far.
    fn push(&self, e: squeue::Entry) -> io::Result<()> {
        self.enqueue(e)?;
        self.submit().map(drop)
    }

    /// Pushes `e` without submitting it (a full queue is submitted first).
    fn enqueue(&self, e: squeue::Entry) -> io::Result<()> {
        self.enqueue_all(&[e])
    }

    /// Pushes `es` next to each other (a linked pair stays together) without submitting them.
    fn enqueue_all(&self, es: &[squeue::Entry]) -> io::Result<()> {
        let _sq = self.sq.lock().unwrap_or_else(|p| p.into_inner());
        loop {
            // SAFETY: `sq` is held, so no other SubmissionQueue exists; the entries refer to
            // memory that outlives them: poll requests carry only an fd and a mask, receives a
            // provided-buffer group, sends a reply buffer and a timeout kept in `live` or
            // `orphans` until their completion. The temporary queue syncs the shared tail when
            // dropped, so a later enter by any thread submits the entries.
            let pushed = unsafe { self.ring.submission_shared().push_multiple(es).is_ok() };
            if pushed {
                return Ok(());
            }
            // A full queue the kernel will not take yet: fail rather than spin holding `sq`.
            if !self.submit()? {
                return Err(io::Error::from_raw_os_error(libc::EBUSY));
            }
        }
    }

    /// Submits every pushed request (one `io_uring_enter`); false when the kernel refused.
    /// Kernels before 5.19 refuse with EBUSY while completions wait in the overflow list; the
    /// requests then stay pushed and are counted as deferred, so the next poll, which reaps
    /// completions first, submits them.
    fn submit(&self) -> io::Result<bool> {
        self.deferred.store(0, Ordering::Relaxed);
        match self.ring.submit() {
            Ok(_) => Ok(true),
            Err(e) if e.raw_os_error() == Some(libc::EBUSY) => {
                self.deferred.store(DEFER_BATCH, Ordering::Release);
                Ok(false)
            }
            Err(e) => Err(e),
        }
    }

    fn live(&self) -> std::sync::MutexGuard<'_, HashMap<u64, Live>> {
        self.live.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn orphans(&self) -> std::sync::MutexGuard<'_, HashMap<u64, Orphan>> {
        self.orphans.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Arms connection `key` (`live` held): a poll request, or in ring mode the send of its
    /// queued reply or a receive. Returns whether a request was pushed.
    fn arm(&self, key: u64, fd: RawFd, live: &mut HashMap<u64, Live>) -> io::Result<bool> {
        let l = live.entry(key).or_insert_with(|| Live {
            io: ConnIo::new(fd),
            write_limit: Box::new(types::Timespec::new()),
        });
        if self.bufs.is_none() {
            self.enqueue(Self::poll_request(key, fd))?;
            return Ok(true);
        }
        match l.io.arm(Instant::now()) {
            Some(next) => self.push_next(key, l, next).map(|()| true),
            None => Ok(false),
        }
    }

    /// Pushes (without submitting) the data request `next` of connection `key`.
    fn push_next(&self, key: u64, l: &mut Live, next: Next) -> io::Result<()> {
        let fd = types::Fd(l.io.fd);
        match next {
            Next::Recv => self.enqueue(
                opcode::Recv::new(fd, std::ptr::null_mut(), BufRing::buf_len())
                    .buf_group(BGID)
                    .build()
                    .flags(squeue::Flags::BUFFER_SELECT)
                    .user_data(key | RECV),
            ),
            Next::Send => {
                *l.write_limit = types::Timespec::from(l.io.write_timeout());
                let rest = l.io.unsent();
                let send = opcode::Send::new(fd, rest.as_ptr(), rest.len() as u32)
                    .flags(libc::MSG_NOSIGNAL | libc::MSG_WAITALL)
                    .build()
                    .flags(squeue::Flags::IO_LINK)
                    .user_data(key | SEND);
                let limit = opcode::LinkTimeout::new(&*l.write_limit)
                    .build()
                    .user_data(IGNORE);
                self.enqueue_all(&[send, limit])
            }
            Next::Report => Ok(()),
        }
    }

    /// Handles the completion of data request `ud` (`live` held): updates its connection,
    /// reports it or pushes its next request. Returns whether a request was pushed.
    fn complete_data(
        &self,
        cqe: &cqueue::Entry,
        live: &mut HashMap<u64, Live>,
        out: &mut Vec<Token>,
    ) -> io::Result<bool> {
        let (ud, res) = (cqe.user_data(), cqe.result());
        let bid = cqueue::buffer_select(cqe.flags());
        let key = ud & !KIND;
        let Some(l) = live.get_mut(&key).filter(|l| {
            let op = if ud & KIND == RECV {
                Op::Recv
            } else {
                Op::Send
            };
            l.io.in_flight() == Some(op)
        }) else {
            self.orphans().remove(&ud);
            if let (Some(b), Some(bufs)) = (bid, &self.bufs) {
                bufs.recycle(b);
            }
            return Ok(false);
        };
        let next = if ud & KIND == RECV {
            let end = match (res, bid, &self.bufs) {
                (n, Some(b), Some(bufs)) if n > 0 => RecvEnd::Data(bufs.filled(b, n as usize)),
                (n, _, _) if n == -libc::ENOBUFS || n == -libc::ECANCELED => RecvEnd::Retry,
                _ => RecvEnd::Closed,
            };
            let next = l.io.on_recv(end);
            if let (Some(b), Some(bufs)) = (bid, &self.bufs) {
                bufs.recycle(b);
            }
            next
        } else {
            let end = match res {
                n if n >= 0 => SendEnd::Sent(n as usize),
                n if n == -libc::ECANCELED => SendEnd::Cancelled,
                _ => SendEnd::Failed,
            };
            l.io.on_send(end, Instant::now())
        };
        if next == Next::Report {
            out.push(Token(key));
            return Ok(false);
        }
        self.push_next(key, l, next).map(|()| true)
    }

    fn poll_request(token: u64, fd: RawFd) -> squeue::Entry {
        opcode::PollAdd::new(types::Fd(fd), poll_flags())
            .build()
            .user_data(token)
    }

    fn push_poll(&self, token: u64, fd: RawFd) -> io::Result<()> {
        self.push(Self::poll_request(token, fd))
    }

    /// Drains completions into `out`; returns whether the wake fd fired.
    fn poll_inner(&self, out: &mut Vec<Token>, block: bool) -> io::Result<bool> {
        if block {
            // The enter submits every pushed request, deferred re-arms included.
            self.deferred.store(0, Ordering::Relaxed);
            match self.ring.submit_and_wait(1) {
                Ok(_) => {}
                Err(e) if e.raw_os_error() == Some(libc::EINTR) => {}
                // Refused (see `submit`): completions are waiting, the requests stay pushed.
                Err(e) if e.raw_os_error() == Some(libc::EBUSY) => {
                    self.deferred.store(DEFER_BATCH, Ordering::Release);
                }
                Err(e) => return Err(e),
            }
        }
        let mut woken = self.take_completions(out)?;
        if !block && self.deferred.load(Ordering::Acquire) >= DEFER_BATCH {
            // A poll request whose socket is already readable completes inside the enter.
            self.submit()?;
            woken |= self.take_completions(out)?;
        }
        Ok(woken)
    }

    /// Takes up to [`MAX_EVENTS`] completions into `out`; returns whether the wake fd fired.
    /// Data completions are handled under `cq` (their provided buffers are recycled in
    /// completion order by one thread at a time); requests they lead to are submitted before
    /// returning.
    fn take_completions(&self, out: &mut Vec<Token>) -> io::Result<bool> {
        let mut woken = false;
        let mut cancelled = Vec::new();
        let mut pushed = false;
        {
            let _cq = self.cq.lock().unwrap_or_else(|p| p.into_inner());
            // SAFETY: `cq` is held, so no other CompletionQueue exists.
            let cqes: Vec<cqueue::Entry> = unsafe { self.ring.completion_shared() }
                .take(MAX_EVENTS)
                .collect();
            let mut live = None;
            for cqe in &cqes {
                match cqe.user_data() {
                    WAKE => woken = true,
                    IGNORE => {}
                    ud if ud & KIND != 0 => {
                        let live = live.get_or_insert_with(|| self.live());
                        pushed |= self.complete_data(cqe, live, out)?;
                    }
                    ud if cqe.result() == -libc::ECANCELED => cancelled.push(ud),
                    // Ready, or failed: either way the owner finds out by reading.
                    ud => out.push(Token(ud)),
                }
            }
        }
        if !cancelled.is_empty() {
            // Cancelled by deregister (no longer live: nothing to do) or by the exit of the
            // thread that submitted it (still live: submit it again from this thread).
            let live = self.live();
            for ud in cancelled {
                if let Some(l) = live.get(&ud) {
                    self.push_poll(ud, l.io.fd)?;
                }
            }
        }
        if pushed {
            self.submit()?;
        }
        if woken {
            // The eventfd is never drained, so the new request completes at once: the wake
            // stays sticky for every later poll, whichever thread took this completion.
            self.arm_wake()?;
        }
        Ok(woken)
    }
}

impl Poller for UringPoller {
    fn register(&self, token: Token, fd: RawFd) -> io::Result<()> {
        self.rearm(token, fd)
    }

    fn rearm(&self, token: Token, fd: RawFd) -> io::Result<()> {
        let mut live = self.live();
        if self.arm(token.0, fd, &mut live)? {
            self.submit()?;
        }
        Ok(())
    }

    /// Re-arms are pushed under the group mutex: whether one may be deferred depends on
    /// whether a thread of the group is blocked in `poll`, which only that mutex tells
    /// (group.rs, re-arm protocol steps 4 and 5).
    fn rearms_outside_group_lock(&self) -> bool {
        false
    }

    fn rearm_deferred(&self, token: Token, fd: RawFd) -> io::Result<()> {
        let mut live = self.live();
        if self.arm(token.0, fd, &mut live)? {
            self.deferred.fetch_add(1, Ordering::Release);
        }
        Ok(())
    }

    fn deregister(&self, token: Token, _fd: RawFd) -> io::Result<()> {
        let mut live = self.live();
        let Some(mut l) = live.remove(&token.0) else {
            return Ok(());
        };
        let e = match (self.bufs.is_some(), l.io.in_flight()) {
            (false, _) => opcode::PollRemove::new(token.0).build(),
            (true, None) => return Ok(()),
            (true, Some(op)) => {
                let ud = token.0 | if op == Op::Recv { RECV } else { SEND };
                self.orphans().insert(
                    ud,
                    Orphan {
                        _output: l.io.take_output(),
                        _write_limit: l.write_limit,
                    },
                );
                opcode::AsyncCancel::new(ud).build()
            }
        };
        self.push(e.user_data(IGNORE))
    }

    fn take_input(&self, token: Token) -> Option<Received> {
        self.live().get_mut(&token.0)?.io.take_input()
    }

    /// The reply is first offered to the socket without waiting (the caller's thread holds the
    /// session, so nothing is in flight on it): a reply that fits the socket's send buffer
    /// leaves at once, and the connection's next request is only its receive. What did not
    /// leave, or a socket error, goes to the ring's send (whose completion reports the error).
    fn queue_output(&self, token: Token, out: &mut Vec<u8>, write_timeout: Duration) {
        let Some(fd) = self.live().get(&token.0).map(|l| l.io.fd) else {
            return;
        };
        let left = send_without_waiting(fd, out);
        out.drain(..left);
        if let Some(l) = self.live().get_mut(&token.0) {
            l.io.queue_output(out, write_timeout);
        }
    }

    fn sending(&self, token: Token) -> bool {
        self.live().get(&token.0).is_some_and(|l| l.io.sending())
    }

    fn moves_bytes(&self) -> bool {
        self.bufs.is_some()
    }

    fn poll(&self, out: &mut Vec<Token>, block: bool) -> io::Result<()> {
        self.poll_inner(out, block).map(|_| ())
    }

    fn wake(&self) -> io::Result<()> {
        signal_eventfd(self.wake.as_raw_fd())
    }

    fn interrupt(&self, fd: RawFd) {
        shutdown_fd(fd);
    }
}

impl Drop for UringPoller {
    /// Ring mode: the kernel may still read a reply buffer or fill a provided buffer until a
    /// request's completion, so every request in flight is cancelled and its completion
    /// awaited (at most [`DRAIN_LIMIT`]); what has not completed by then is leaked, never
    /// freed under the kernel.
    fn drop(&mut self) {
        if self.bufs.is_none() {
            return;
        }
        let cancels: Vec<u64> = {
            let mut live = self.live();
            let mut orphans = self.orphans();
            for (key, mut l) in live.drain() {
                if let Some(op) = l.io.in_flight() {
                    let ud = key | if op == Op::Recv { RECV } else { SEND };
                    orphans.insert(
                        ud,
                        Orphan {
                            _output: l.io.take_output(),
                            _write_limit: l.write_limit,
                        },
                    );
                }
            }
            orphans.keys().copied().collect()
        };
        for ud in cancels {
            let _ = self.enqueue(opcode::AsyncCancel::new(ud).build().user_data(IGNORE));
        }
        let deadline = Instant::now() + DRAIN_LIMIT;
        let mut out = Vec::new();
        while !self.orphans().is_empty() && Instant::now() < deadline {
            let _ = self.submit();
            let _ = self.take_completions(&mut out);
            std::thread::sleep(Duration::from_millis(1));
        }
        if !self.orphans().is_empty() {
            std::mem::forget(std::mem::take(&mut *self.orphans()));
            std::mem::forget(self.bufs.take());
        }
    }
}
