//! A model network for loom and unit tests: fds are plain numbers, "data arrives" is a call,
//! and readiness follows epoll's one-shot, level-triggered rules. Invariant: a token is
//! reported at most once per arm, and data that arrives while disarmed is reported at re-arm.
//! A deferring poller ([`ModelNet::poller`] with `defer`) behaves as the io_uring backend: re-arms
//! under the group mutex, deferred ones arm only when a poll submits them (every blocking poll;
//! a non-blocking one once [`DEFER_BATCH`] are deferred).

use super::{Poller, Token, DEFER_BATCH};
use crate::sync::{lock, wait, Arc, Condvar, Mutex};
use std::collections::{HashMap, VecDeque};
use std::io;
use std::os::fd::RawFd;

#[derive(Debug, Default)]
struct Fd {
    group: usize,
    token: Option<Token>,
    armed: bool,
    pending: u32,
    interrupted: bool,
}

#[derive(Debug, Default)]
struct Net {
    fds: HashMap<RawFd, Fd>,
    ready: Vec<VecDeque<Token>>,
    woken: Vec<bool>,
    /// Threads inside a blocking poll, per group: the "at most one listener" check.
    blocking: Vec<usize>,
    /// Deferred re-arms not yet submitted, per group.
    unsubmitted: Vec<Vec<(Token, RawFd)>>,
}

/// The shared model network; [`ModelNet::poller`] gives each group its poller.
#[derive(Debug)]
pub(crate) struct ModelNet {
    net: Mutex<Net>,
    cvs: Vec<Condvar>,
    /// Signalled when data arrives or an fd is interrupted (blocking reads).
    data: Condvar,
}

impl ModelNet {
    pub(crate) fn new(groups: usize) -> Arc<ModelNet> {
        Arc::new(ModelNet {
            net: Mutex::new(Net {
                fds: HashMap::new(),
                ready: (0..groups).map(|_| VecDeque::new()).collect(),
                woken: vec![false; groups],
                blocking: vec![0; groups],
                unsubmitted: (0..groups).map(|_| Vec::new()).collect(),
            }),
            cvs: (0..groups).map(|_| Condvar::new()).collect(),
            data: Condvar::new(),
        })
    }

    /// Group `group`'s poller: epoll's re-arm rules, or with `defer` io_uring's (re-arms
    /// under the group mutex, deferrable to the next poll).
    pub(crate) fn poller(net: &Arc<ModelNet>, group: usize, defer: bool) -> ModelPoller {
        ModelPoller {
            net: net.clone(),
            group,
            defer,
        }
    }

    /// A client sends one command on `fd`.
    pub(crate) fn send(&self, fd: RawFd) {
        let mut n = lock(&self.net);
        let e = n.fds.entry(fd).or_default();
        e.pending += 1;
        self.data.notify_all();
        let fire = if e.armed {
            e.armed = false;
            e.token.map(|t| (e.group, t))
        } else {
            None
        };
        if let Some((g, t)) = fire {
            n.ready[g].push_back(t);
            self.cvs[g].notify_all();
        }
    }

    /// The session on `fd` reads one command, blocking until one arrives; false when the fd
    /// was interrupted (shutdown) first.
    pub(crate) fn take(&self, fd: RawFd) -> bool {
        let mut n = lock(&self.net);
        loop {
            let e = n.fds.entry(fd).or_default();
            if e.pending > 0 {
                e.pending -= 1;
                return true;
            }
            if e.interrupted {
                return false;
            }
            n = wait(&self.data, n);
        }
    }

    fn arm(&self, group: usize, token: Token, fd: RawFd) {
        let mut n = lock(&self.net);
        self.arm_locked(&mut n, group, token, fd);
    }

    /// Arms every deferred re-arm of `group` (a submission).
    fn submit_locked(&self, n: &mut Net, group: usize) {
        for (token, fd) in std::mem::take(&mut n.unsubmitted[group]) {
            self.arm_locked(n, group, token, fd);
        }
    }

    fn arm_locked(&self, n: &mut Net, group: usize, token: Token, fd: RawFd) {
        let e = n.fds.entry(fd).or_default();
        e.group = group;
        e.token = Some(token);
        if e.pending > 0 {
            e.armed = false;
            n.ready[group].push_back(token);
            self.cvs[group].notify_all();
        } else {
            e.armed = true;
        }
    }
}

/// One group's view of the model network.
#[derive(Debug)]
pub(crate) struct ModelPoller {
    net: Arc<ModelNet>,
    group: usize,
    /// Behave as the io_uring backend (re-arms under the mutex, deferrable).
    defer: bool,
}

impl Poller for ModelPoller {
    fn register(&self, token: Token, fd: RawFd) -> io::Result<()> {
        self.net.arm(self.group, token, fd);
        Ok(())
    }

    fn rearm(&self, token: Token, fd: RawFd) -> io::Result<()> {
        self.net.arm(self.group, token, fd);
        Ok(())
    }

    fn rearms_outside_group_lock(&self) -> bool {
        !self.defer
    }

    fn rearm_deferred(&self, token: Token, fd: RawFd) -> io::Result<()> {
        if !self.defer {
            return self.rearm(token, fd);
        }
        let mut n = lock(&self.net.net);
        assert_eq!(
            n.blocking[self.group], 0,
            "a re-arm deferred while a thread blocks in the poller"
        );
        n.unsubmitted[self.group].push((token, fd));
        Ok(())
    }

    fn deregister(&self, token: Token, fd: RawFd) -> io::Result<()> {
        let mut n = lock(&self.net.net);
        if let Some(e) = n.fds.get_mut(&fd) {
            e.armed = false;
            e.token = None;
        }
        n.ready[self.group].retain(|t| *t != token);
        n.unsubmitted[self.group].retain(|(t, _)| *t != token);
        Ok(())
    }

    fn poll(&self, out: &mut Vec<Token>, block: bool) -> io::Result<()> {
        let g = self.group;
        let mut n = lock(&self.net.net);
        if block {
            n.blocking[g] += 1;
            assert!(
                n.blocking[g] <= 1,
                "two threads block in group {g}'s poller"
            );
            self.net.submit_locked(&mut n, g);
        } else if n.unsubmitted[g].len() >= DEFER_BATCH {
            self.net.submit_locked(&mut n, g);
        }
        loop {
            if !n.ready[g].is_empty() || !block || n.woken[g] {
                out.extend(n.ready[g].drain(..));
                if block {
                    n.blocking[g] -= 1;
                }
                return Ok(());
            }
            n = wait(&self.net.cvs[g], n);
        }
    }

    fn wake(&self) -> io::Result<()> {
        let mut n = lock(&self.net.net);
        n.woken[self.group] = true;
        self.net.cvs[self.group].notify_all();
        Ok(())
    }

    fn interrupt(&self, fd: RawFd) {
        lock(&self.net.net).fds.entry(fd).or_default().interrupted = true;
        self.net.data.notify_all();
    }
}
