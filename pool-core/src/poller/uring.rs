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

use super::{new_eventfd, shutdown_fd, signal_eventfd, Poller, Token, DEFER_BATCH, MAX_EVENTS};
use io_uring::{opcode, squeue, types, IoUring};
use std::collections::HashMap;
use std::io;
use std::os::fd::{AsRawFd, OwnedFd, RawFd};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

const WAKE: u64 = u64::MAX;
/// `user_data` of requests whose completions carry nothing (poll removals).
const IGNORE: u64 = u64::MAX - 1;
/// Submission queue entries per ring; a full queue is submitted and the push retried.
const ENTRIES: u32 = 256;

/// One group's ring and wake fd.
pub(crate) struct UringPoller {
    ring: IoUring,
    sq: Mutex<()>,
    cq: Mutex<()>,
    /// Registered tokens and their fds, from `register` until `deregister`. Lock order:
    /// `live` before `sq`; a poll request for a token is pushed only while `live` is held.
    live: Mutex<HashMap<u64, RawFd>>,
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

impl UringPoller {
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
        let _sq = self.sq.lock().unwrap_or_else(|p| p.into_inner());
        loop {
            // SAFETY: `sq` is held, so no other SubmissionQueue exists; the entry refers to no
            // buffers (poll requests carry only an fd and a mask). The temporary queue syncs
            // the shared tail when dropped, so a later enter by any thread submits the entry.
            let pushed = unsafe { self.ring.submission_shared().push(&e).is_ok() };
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

    fn live(&self) -> std::sync::MutexGuard<'_, HashMap<u64, RawFd>> {
        self.live.lock().unwrap_or_else(|p| p.into_inner())
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
    fn take_completions(&self, out: &mut Vec<Token>) -> io::Result<bool> {
        let mut woken = false;
        let mut cancelled = Vec::new();
        {
            let _cq = self.cq.lock().unwrap_or_else(|p| p.into_inner());
            // SAFETY: `cq` is held, so no other CompletionQueue exists.
            let cq = unsafe { self.ring.completion_shared() };
            for cqe in cq.take(MAX_EVENTS) {
                match cqe.user_data() {
                    WAKE => woken = true,
                    IGNORE => {}
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
                if let Some(&fd) = live.get(&ud) {
                    self.push_poll(ud, fd)?;
                }
            }
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
        live.insert(token.0, fd);
        self.push_poll(token.0, fd)
    }

    /// Re-arms are pushed under the group mutex: whether one may be deferred depends on
    /// whether a thread of the group is blocked in `poll`, which only that mutex tells
    /// (group.rs, re-arm protocol steps 4 and 5).
    fn rearms_outside_group_lock(&self) -> bool {
        false
    }

    fn rearm_deferred(&self, token: Token, fd: RawFd) -> io::Result<()> {
        let mut live = self.live();
        live.insert(token.0, fd);
        self.enqueue(Self::poll_request(token.0, fd))?;
        self.deferred.fetch_add(1, Ordering::Release);
        Ok(())
    }

    fn deregister(&self, token: Token, _fd: RawFd) -> io::Result<()> {
        let mut live = self.live();
        live.remove(&token.0);
        let e = opcode::PollRemove::new(token.0).build().user_data(IGNORE);
        self.push(e)
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
