//! The thread-group pool object: the [`ConnectionHandler`] implementation and shutdown (the
//! protocol is in group.rs). The state its threads share is in shared.rs, building in
//! builder.rs, introspection snapshots in introspect.rs. Invariant: after `shutdown` returns
//! no thread of the pool runs and no session is left in it.

use crate::config::{ConfigError, PoolConfig, PoolKnobs};
use crate::connect;
use crate::handler::ConnectionHandler;
use crate::park;
use crate::poller::{Poller, PollerChoice};
use crate::session::Session;
use crate::shared::Shared;
use crate::stats::HandlerStats;
use crate::sync::{lock, thread, Arc, Mutex};
use std::fmt;
use std::io;
use std::sync::atomic::Ordering;
use std::time::SystemTime;

/// Makes one group's poller; given the group index.
pub(crate) type PollerFactory = Box<dyn Fn(usize) -> io::Result<Box<dyn Poller>>>;

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

/// MySQL's thread-group pool (`thread_handling=pool-of-threads`).
///
/// ```no_run
/// # use pool_core::{ConnectionHandler, PoolBuilder, PoolConfig, Session, ThreadPool};
/// # fn demo<S: Session>(accepted: impl Iterator<Item = S>) -> Result<(), pool_core::PoolError> {
/// let (pool, startup) = PoolBuilder::new(PoolConfig::default()).build::<S>()?;
/// if let Some(why) = &startup.poller.fallback_reason {
///     eprintln!("io_uring unavailable, using epoll: {why}");
/// }
/// // SET GLOBAL thread_pool_stall_limit = 10
/// pool.knobs().set_stall_limit(10).expect("in range");
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

    /// Wall-clock time of the pool clock's zero, to render the snapshots' `TIME_OF_*`.
    pub fn clock_epoch(&self) -> SystemTime {
        self.started_at
            .checked_sub(self.sh.clock.now())
            .unwrap_or(self.started_at)
    }

    /// One stall-checker pass at `now` (pool clock). The timer thread calls this every 10 ms;
    /// with `PoolBuilder::manual_ticks` the caller does. True when it woke a thread or kicked
    /// an event up.
    #[cfg(test)]
    pub(crate) fn tick(&self, now: std::time::Duration) -> bool {
        crate::timer::tick(&self.sh, now)
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
            connect::enqueue(&self.sh, g, session);
        } else {
            connect::admit(&self.sh, g, None, session);
        }
    }

    /// Runs the shutdown protocol (group.rs) and joins every thread. Idempotent.
    fn shutdown(&self) {
        let sh = &self.sh;
        let mut parked = Vec::new();
        for group in &sh.groups {
            let mut st = lock(&group.state);
            st.shutdown = true;
            st.resume_all();
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
            st.clear_queues();
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
            let live = lock(&sh.handles).take_live();
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
