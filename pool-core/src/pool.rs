//! The thread-group pool object: the state its threads share, the [`ConnectionHandler`]
//! implementation and shutdown (the protocol is in group.rs). Building is in builder.rs,
//! introspection snapshots in stats.rs. Invariant: nothing here is global — every pool owns its groups,
//! threads and clock, so tests run several pools side by side.

use crate::clock::Clock;
use crate::config::{Algorithm, ConfigError, PoolConfig, PoolKnobs};
use crate::group::{credit_available, CreditInputs, Group, GroupState};
use crate::park;
use crate::poller::{Poller, PollerChoice};
use crate::session::Session;
use crate::stats::HandlerStats;
use crate::sync::{lock, thread, Arc, Condvar, Mutex, MutexGuard};
use crate::timer::{self, TimerCtl};
use crate::ConnectionHandler;
use std::fmt;
use std::io;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::time::{Duration, SystemTime};

/// A group's guard.
pub(crate) type Guard<'a, S> = MutexGuard<'a, GroupState<S>>;

/// Severity of a pool log line.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LogLevel {
    /// Informational (MySQL's `[Note]`/`[System]`).
    Info,
    /// A warning.
    Warning,
}

/// Where the pool writes its log lines (the server's error log).
pub type LogSink = std::sync::Arc<dyn Fn(LogLevel, &str) + Send + Sync>;

/// Makes one group's poller; given the group index.
pub type PollerFactory = Box<dyn Fn(usize) -> io::Result<Box<dyn Poller>>>;

/// Why a pool could not start.
#[derive(Debug)]
pub enum PoolError {
    /// The configuration is invalid.
    Config(ConfigError),
    /// A poller or thread could not be created.
    Io(io::Error),
}

impl fmt::Display for PoolError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PoolError::Config(e) => write!(f, "thread pool configuration: {e}"),
            PoolError::Io(e) => write!(f, "thread pool start-up: {e}"),
        }
    }
}

impl std::error::Error for PoolError {}

/// What happened at start-up, for the server's log.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PoolStartup {
    /// The poller in force (and why io_uring fell back to epoll, if it did).
    pub poller: PollerChoice,
    /// Start-up corrections (dedicated listeners forced off, query threads lowered, ...).
    pub warnings: Vec<String>,
    /// The configuration in force after the corrections.
    pub config: PoolConfig,
}

/// Join handles of every thread the pool started.
pub(crate) struct Handles {
    next: u64,
    live: Vec<(u64, thread::JoinHandle<()>)>,
    finished: Vec<u64>,
}

impl fmt::Debug for Handles {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Handles")
            .field("live", &self.live.len())
            .finish()
    }
}

impl Handles {
    pub(crate) fn new() -> Handles {
        Handles {
            next: 0,
            live: Vec::new(),
            finished: Vec::new(),
        }
    }

    pub(crate) fn next_serial(&mut self) -> u64 {
        self.next += 1;
        self.next
    }

    pub(crate) fn push(&mut self, serial: u64, h: thread::JoinHandle<()>) {
        self.live.push((serial, h));
    }

    /// A thread's last act: it is about to return, so joining it cannot block for long.
    pub(crate) fn finished(&mut self, serial: u64) {
        self.finished.push(serial);
    }

    /// Joins threads that have finished (retired workers and handlers).
    pub(crate) fn reap(&mut self) {
        for s in std::mem::take(&mut self.finished) {
            if let Some(i) = self.live.iter().position(|(x, _)| *x == s) {
                let (_, h) = self.live.swap_remove(i);
                let _ = h.join();
            }
        }
    }
}

/// State shared by every thread of one pool.
pub(crate) struct Shared<S> {
    pub(crate) size: usize,
    pub(crate) algorithm: Algorithm,
    pub(crate) dedicated: bool,
    pub(crate) pin: bool,
    pub(crate) steal: bool,
    pub(crate) ncpu: usize,
    pub(crate) knobs: std::sync::Arc<PoolKnobs>,
    pub(crate) clock: std::sync::Arc<dyn Clock>,
    pub(crate) groups: Vec<Group<S>>,
    pub(crate) handles: Mutex<Handles>,
    pub(crate) timer: Mutex<TimerCtl>,
    pub(crate) timer_cv: Condvar,
    /// Statistics only (Relaxed): they order nothing.
    pub(crate) total_query_threads: AtomicUsize,
    pub(crate) running: AtomicUsize,
    pub(crate) connecting: AtomicUsize,
    pub(crate) alive: AtomicUsize,
    pub(crate) threads_created: AtomicU64,
    pub(crate) rr: crate::placement::RoundRobin,
    pub(crate) log: LogSink,
    pub(crate) connection_handlers: bool,
}

impl<S> Shared<S> {
    /// The transaction share of group `g` (0 for the Admin group and when the limit is 0).
    pub(crate) fn group_share(&self, g: usize) -> usize {
        if self.groups[g].admin {
            0
        } else {
            self.knobs.group_share() as usize
        }
    }

    /// §1.4's credit rule for group `g` in state `st`.
    pub(crate) fn credit(&self, g: usize, st: &GroupState<S>) -> bool {
        credit_available(CreditInputs {
            txnlim: self.group_share(g),
            suspended: st.longrun.suspended_stamp.is_some(),
            bound: st.bound,
            max_active_query_threads: self.knobs.max_active_query_threads() as usize,
            active: st.active,
            query_threads_per_group: self.knobs.query_threads_per_group() as usize,
            stalled: st.stalled,
        })
    }

    pub(crate) fn log_info(&self, msg: &str) {
        (self.log)(LogLevel::Info, msg);
    }

    pub(crate) fn log_warn(&self, msg: &str) {
        (self.log)(LogLevel::Warning, msg);
    }
}

/// MySQL's thread-group pool (`thread_handling=pool-of-threads`).
///
/// ```no_run
/// # use pool_core::{ConnectionHandler, PoolBuilder, PoolConfig, Session, ThreadPool};
/// # fn demo<S: Session>(accepted: impl Iterator<Item = S>) -> Result<(), pool_core::PoolError> {
/// let (pool, startup) = PoolBuilder::new(PoolConfig::default()).build::<S>()?;
/// if let Some(why) = &startup.poller.fallback_reason {
///     eprintln!("io_uring unavailable, using epoll: {why}");
/// }
/// pool.knobs().set_stall_limit(10).expect("in range"); // SET GLOBAL thread_pool_stall_limit
/// for s in accepted {
///     pool.add_connection(s);
/// }
/// pool.shutdown();
/// # Ok(()) }
/// ```
pub struct ThreadPool<S: Session> {
    pub(crate) sh: Arc<Shared<S>>,
    pub(crate) timer: Mutex<Option<thread::JoinHandle<()>>>,
    pub(crate) started_at: SystemTime,
    pub(crate) poller: PollerChoice,
}

impl<S: Session> fmt::Debug for ThreadPool<S> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ThreadPool")
            .field("size", &self.sh.size)
            .field("poller", &self.poller)
            .finish()
    }
}

impl<S: Session> ThreadPool<S> {
    /// The dynamic knobs; `SET GLOBAL` of a `thread_pool_*` variable goes through their
    /// validated setters and takes effect at the scheduler's next decision.
    pub fn knobs(&self) -> std::sync::Arc<PoolKnobs> {
        self.sh.knobs.clone()
    }

    /// `thread_pool_size`.
    pub fn size(&self) -> usize {
        self.sh.size
    }

    /// The poller in force.
    pub fn poller(&self) -> &PollerChoice {
        &self.poller
    }

    /// Wall-clock time of the pool clock's zero, to render the snapshots' `TIME_OF_*`.
    pub fn clock_epoch(&self) -> SystemTime {
        self.started_at
            .checked_sub(self.sh.clock.now())
            .unwrap_or(self.started_at)
    }

    /// One stall-checker pass at `now` (pool clock). The timer thread calls this every 10 ms;
    /// with [`PoolBuilder::manual_ticks`](crate::PoolBuilder::manual_ticks) the caller does. True when it woke a thread.
    pub fn tick(&self, now: Duration) -> bool {
        timer::tick(&self.sh, now)
    }
}

impl<S: Session> ConnectionHandler<S> for ThreadPool<S> {
    /// Assigns the next normal group round-robin and queues the connection for that group's
    /// connection handlers, which authenticate it and arm it (in the Admin group when the
    /// session turns out to be a TP admin).
    fn add_connection(&self, session: S) {
        let g = self.sh.rr.next(self.sh.size);
        self.sh.connecting.fetch_add(1, Ordering::Relaxed);
        if self.sh.connection_handlers {
            crate::connect::enqueue(&self.sh, g, session);
        } else {
            crate::connect::admit(&self.sh, g, None, session);
        }
    }

    /// Runs the shutdown protocol (group.rs) and joins every thread. Idempotent.
    fn shutdown(&self) {
        let sh = &self.sh;
        let mut parked = Vec::new();
        for group in &sh.groups {
            let mut st = lock(&group.state);
            st.shutdown = true;
            for t in st.conns.tokens() {
                let Some(c) = st.conns.get_mut(t) else {
                    continue;
                };
                if c.session.is_some() {
                    let c = st.conns.remove(t).expect("token just listed");
                    st.connections -= 1;
                    st.counters.connections_closed += 1;
                    parked.push((group.id, t, c));
                } else {
                    group.poller.interrupt(c.fd);
                }
            }
            for fd in st.threads.iter().flatten().filter_map(|t| t.handshake_fd) {
                group.poller.interrupt(fd);
            }
            st.high.clear();
            st.low.clear();
            let connecting: Vec<S> = st.connect_q.drain(..).collect();
            sh.connecting.fetch_sub(connecting.len(), Ordering::Relaxed);
            for t in std::mem::take(&mut st.consumers)
                .into_iter()
                .chain(std::mem::take(&mut st.reserves))
                .chain(std::mem::take(&mut st.ch_sleepers))
            {
                park::unpark(&mut st, t);
            }
            drop(st);
            let _ = group.poller.wake();
            drop(connecting);
        }
        for (g, t, c) in parked {
            let _ = sh.groups[g].poller.deregister(t, c.fd);
            if let Some(s) = c.session {
                s.kill();
                drop(s);
            }
        }
        {
            let mut ctl = lock(&sh.timer);
            ctl.stop = true;
            sh.timer_cv.notify_all();
        }
        if let Some(h) = lock(&self.timer).take() {
            let _ = h.join();
        }
        loop {
            let live = std::mem::take(&mut lock(&sh.handles).live);
            if live.is_empty() {
                break;
            }
            for (_, h) in live {
                let _ = h.join();
            }
        }
    }

    fn stats(&self) -> HandlerStats {
        let sh = &self.sh;
        let connected: usize = sh.groups.iter().map(|g| lock(&g.state).connections).sum();
        HandlerStats {
            threads_created: sh.threads_created.load(Ordering::Relaxed),
            threads_cached: 0,
            threads_connected: (connected + sh.connecting.load(Ordering::Relaxed)) as u64,
            threads_running: sh.running.load(Ordering::Relaxed) as u64,
            threads_alive: sh.alive.load(Ordering::Relaxed) as u64,
        }
    }
}

impl<S: Session> Drop for ThreadPool<S> {
    /// Shuts the pool down if the owner did not: its threads hold the shared state.
    fn drop(&mut self) {
        self.shutdown();
    }
}
