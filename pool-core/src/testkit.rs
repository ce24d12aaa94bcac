//! Model sessions over the model network, shared by the unit tests and the loom models.
//! Invariant: a model session's `run` consumes exactly one command the client sent, so
//! "commands sent" = "runs" is the conservation law the tests check.

use crate::poller::model::ModelNet;
use crate::session::{Outcome, Session};
use crate::sync::atomic::{AtomicUsize, Ordering};
use crate::sync::{lock, wait, Arc, Condvar, Mutex};
use crate::wait::{self, WaitKind};
use std::collections::VecDeque;
use std::os::fd::RawFd;
use std::time::Duration;

/// What one command does.
#[derive(Debug, Clone)]
pub(crate) enum Cmd {
    /// Returns at once.
    Plain,
    /// Reports a wait of this kind around nothing. (Not in the loom models: a wait while
    /// holding the poll role creates a thread, and each thread multiplies their state space.)
    #[cfg_attr(loom, allow(dead_code))]
    Wait(WaitKind),
    /// Opens a transaction.
    Begin,
    /// Ends the transaction.
    Commit,
    /// Blocks until the gate opens (a CPU-bound statement that reports no wait).
    Gate(Arc<Gate>),
    /// Blocks until the gate opens inside a reported wait of this kind.
    WaitGate(WaitKind, Arc<Gate>),
    /// A long scan: calls the safe point in a loop until the gate opens (it may yield there).
    #[cfg_attr(loom, allow(dead_code))]
    Scan(Arc<Gate>),
    /// Waits for the gate, then passes one look of the safe point (where it may yield).
    #[cfg_attr(not(loom), allow(dead_code))]
    GateThenSafePoint(Arc<Gate>),
    /// Closes the connection.
    #[cfg_attr(loom, allow(dead_code))]
    Quit,
}

/// A latch a test opens.
#[derive(Debug)]
pub(crate) struct Gate {
    open: Mutex<bool>,
    cv: Condvar,
}

impl Gate {
    pub(crate) fn new() -> Arc<Gate> {
        Arc::new(Gate {
            open: Mutex::new(false),
            cv: Condvar::new(),
        })
    }

    pub(crate) fn open(&self) {
        *lock(&self.open) = true;
        self.cv.notify_all();
    }

    #[cfg(not(loom))]
    fn is_open(&self) -> bool {
        *lock(&self.open)
    }

    fn pass(&self) {
        let mut g = lock(&self.open);
        while !*g {
            g = wait(&self.cv, g);
        }
    }
}

/// Counters shared between a test and its sessions.
#[derive(Debug)]
pub(crate) struct Tally {
    runs: Mutex<usize>,
    ran: Condvar,
    pub(crate) dropped: AtomicUsize,
    pub(crate) expired: AtomicUsize,
}

impl Tally {
    pub(crate) fn new() -> Arc<Tally> {
        Arc::new(Tally {
            runs: Mutex::new(0),
            ran: Condvar::new(),
            dropped: AtomicUsize::new(0),
            expired: AtomicUsize::new(0),
        })
    }

    /// Commands run so far.
    #[cfg(not(loom))]
    pub(crate) fn runs(&self) -> usize {
        *lock(&self.runs)
    }

    /// Blocks until `n` commands have run: a lost wake-up in the pool leaves this waiting
    /// forever, which loom reports as a deadlock.
    pub(crate) fn wait_runs(&self, n: usize) {
        let mut r = lock(&self.runs);
        while *r < n {
            r = wait(&self.ran, r);
        }
    }

    fn count_run(&self) {
        *lock(&self.runs) += 1;
        self.ran.notify_all();
    }
}

/// A model connection: commands come from `script` when the model network says one arrived.
#[derive(Debug)]
pub(crate) struct ModelSession {
    pub(crate) net: Arc<ModelNet>,
    pub(crate) fd: RawFd,
    pub(crate) script: Arc<Mutex<VecDeque<Cmd>>>,
    pub(crate) tally: Arc<Tally>,
    pub(crate) in_trx: bool,
    pub(crate) admin: bool,
    pub(crate) idle: Duration,
    /// What the session reports as `Session::holds_locks`.
    pub(crate) holds_locks: bool,
    /// What the session reports as `Session::next_class`.
    pub(crate) class: crate::policy::StmtClass,
}

impl ModelSession {
    pub(crate) fn new(net: &Arc<ModelNet>, fd: RawFd, tally: &Arc<Tally>) -> ModelSession {
        ModelSession {
            net: net.clone(),
            fd,
            script: Arc::new(Mutex::new(VecDeque::new())),
            tally: tally.clone(),
            in_trx: false,
            admin: false,
            idle: Duration::from_secs(3600),
            holds_locks: false,
            class: crate::policy::StmtClass::UNKNOWN,
        }
    }

    /// A handle the test uses to send commands to this session.
    pub(crate) fn client(&self) -> Client {
        Client {
            net: self.net.clone(),
            fd: self.fd,
            script: self.script.clone(),
        }
    }
}

/// The client end of a model connection.
#[derive(Debug, Clone)]
pub(crate) struct Client {
    net: Arc<ModelNet>,
    fd: RawFd,
    script: Arc<Mutex<VecDeque<Cmd>>>,
}

impl Client {
    pub(crate) fn send(&self, cmd: Cmd) {
        lock(&self.script).push_back(cmd);
        self.net.send(self.fd);
    }
}

impl Session for ModelSession {
    fn handshake(&mut self) -> Outcome {
        Outcome::Continue
    }

    fn run(&mut self) -> Outcome {
        if !self.net.take(self.fd) {
            return Outcome::Close;
        }
        let cmd = lock(&self.script).pop_front();
        self.tally.count_run();
        match cmd {
            Some(Cmd::Plain) | None => {}
            Some(Cmd::Wait(k)) => {
                let _w = wait::begin(k);
            }
            Some(Cmd::WaitGate(k, g)) => {
                let _w = wait::begin(k);
                g.pass();
            }
            Some(Cmd::Begin) => self.in_trx = true,
            Some(Cmd::Commit) => self.in_trx = false,
            Some(Cmd::Gate(g)) => g.pass(),
            #[cfg(not(loom))]
            Some(Cmd::Scan(g)) => {
                while !g.is_open() {
                    for _ in 0..wait::SAFE_POINT_EVERY {
                        wait::safe_point();
                    }
                    std::thread::sleep(Duration::from_micros(200));
                }
            }
            #[cfg(loom)]
            Some(Cmd::Scan(g)) => g.pass(),
            Some(Cmd::GateThenSafePoint(g)) => {
                g.pass();
                for _ in 0..wait::SAFE_POINT_EVERY {
                    wait::safe_point();
                }
            }
            Some(Cmd::Quit) => return Outcome::Close,
        }
        Outcome::Continue
    }

    fn receive(&mut self, _input: crate::session::Received) {}

    /// The model's reply is one byte per command.
    fn run_deferred(&mut self, out: &mut Vec<u8>) -> Outcome {
        out.push(b'.');
        self.run()
    }

    fn write_timeout(&self) -> Duration {
        self.idle
    }

    fn in_transaction(&self) -> bool {
        self.in_trx
    }

    fn is_tp_admin(&self) -> bool {
        self.admin
    }

    fn high_priority(&self) -> bool {
        false
    }

    fn has_buffered_input(&self) -> bool {
        false
    }

    fn holds_locks(&self) -> bool {
        self.holds_locks
    }

    fn next_class(&self) -> crate::policy::StmtClass {
        self.class
    }

    fn raw_fd(&self) -> RawFd {
        self.fd
    }

    fn idle_timeout(&self) -> Duration {
        self.idle
    }

    fn expire(&mut self) {
        self.tally.expired.fetch_add(1, Ordering::SeqCst);
    }

    fn refuse_no_thread(&mut self, _error: &std::io::Error) {}

    fn kill(&self) {}
}

impl Drop for ModelSession {
    fn drop(&mut self) {
        self.tally.dropped.fetch_add(1, Ordering::SeqCst);
    }
}
