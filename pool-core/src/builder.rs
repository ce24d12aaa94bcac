//! Building a pool: validate the configuration, probe and create the pollers, start each
//! group's threads (as MySQL: `query_threads_per_group` query threads, a dedicated listener when
//! configured, the permanent connection handler) and the timer. Invariant: a pool that
//! `build` returns has every group running; on error nothing is left running.

use crate::clock::{Clock, SystemClock};
use crate::config::{ConfigError, PinMode, PoolConfig, PoolKnobs};
use crate::connect;
use crate::group::{Group, GroupState};
use crate::listener;
use crate::placement::{self, RoundRobin};
use crate::policy;
use crate::poller::{self, PollerChoice};
use crate::pool::{PollerFactory, PoolError, PoolStartup, ThreadPool};
use crate::session::Session;
use crate::shared::{Guard, Handles, LogSink, Role, Shared, TimerCtl};
use crate::spawn;
use crate::sync::{lock, thread, Arc, Condvar, Mutex};
use crate::timer;
use crate::worker;
use std::fmt;
use std::sync::atomic::{AtomicU64, AtomicUsize};
use std::time::SystemTime;

/// Builds a [`ThreadPool`]: configuration plus optional log sink, clock, pollers and timer.
pub struct PoolBuilder {
    config: PoolConfig,
    log: LogSink,
    clock: std::sync::Arc<dyn Clock>,
    pollers: Option<PollerFactory>,
    timer_thread: bool,
    connection_handlers: bool,
    admin_threads: bool,
}

impl fmt::Debug for PoolBuilder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("PoolBuilder")
            .field("config", &self.config)
            .field("timer_thread", &self.timer_thread)
            .finish()
    }
}

impl PoolBuilder {
    /// A builder for `config`, logging to stderr, on the system clock, with the configured
    /// poller kind and its own timer thread.
    pub fn new(config: PoolConfig) -> PoolBuilder {
        PoolBuilder {
            config,
            log: std::sync::Arc::new(|level, msg| eprintln!("[{level:?}] {msg}")),
            clock: std::sync::Arc::new(SystemClock::new()),
            pollers: None,
            timer_thread: true,
            connection_handlers: true,
            admin_threads: true,
        }
    }

    /// Sends log lines to `sink`.
    pub fn log(mut self, sink: LogSink) -> PoolBuilder {
        self.log = sink;
        self
    }

    /// Uses `clock` for every time stamp and the stall checker.
    #[cfg(test)]
    pub(crate) fn clock(mut self, clock: std::sync::Arc<dyn Clock>) -> PoolBuilder {
        self.clock = clock;
        self
    }

    /// No timer thread: the caller drives the stall checker with [`ThreadPool::tick`].
    #[cfg(test)]
    pub(crate) fn manual_ticks(mut self) -> PoolBuilder {
        self.timer_thread = false;
        self
    }

    /// Makes each group's poller with `factory` instead of the configured kind.
    #[cfg(test)]
    pub(crate) fn pollers(mut self, factory: PollerFactory) -> PoolBuilder {
        self.pollers = Some(factory);
        self
    }

    /// No connection-handler threads: `add_connection` authenticates on the caller's thread
    /// (loom models, which must stay within a few threads).
    #[cfg(test)]
    pub(crate) fn inline_handshake(mut self) -> PoolBuilder {
        self.connection_handlers = false;
        self
    }

    /// No threads at start-up in the Admin group (loom models that do not use it, to stay
    /// within loom's thread budget).
    #[cfg(all(test, loom))]
    pub(crate) fn without_admin_threads(mut self) -> PoolBuilder {
        self.admin_threads = false;
        self
    }

    /// Validates the configuration, probes the poller, and starts every group's threads.
    pub fn build<S: Session>(self) -> Result<(ThreadPool<S>, PoolStartup), PoolError> {
        let (mut config, warnings) = self.config.validate().map_err(PoolError::Config)?;
        let chosen = policy::by_name(&config.policy).ok_or_else(|| {
            PoolError::Config(ConfigError::UnknownPolicy {
                name: config.policy.clone(),
                known: policy::names().collect(),
            })
        })?;
        config.policy = chosen.name().to_string();
        let choice = match &self.pollers {
            Some(_) => PollerChoice {
                kind: config.poller,
                io: config.io,
                fallback_reason: None,
            },
            None => poller::choose(config.poller, config.io),
        };
        let size = config.size as usize;
        let ncpu = placement::cpu_count();
        let ncores = core_affinity::get_core_ids().map_or(ncpu, |c| c.len());
        let mut groups = Vec::with_capacity(size + 1);
        for g in 0..=size {
            let p = match &self.pollers {
                Some(f) => f(g),
                None => poller::new_poller(&choice),
            }
            .map_err(PoolError::Io)?;
            groups.push(Group {
                id: g,
                admin: g == size,
                state: Mutex::new(GroupState::new()),
                poller: p,
                cores: if config.pin == PinMode::Group {
                    placement::group_cores(g, size, ncores)
                } else {
                    Vec::new()
                },
                exported: crossbeam_deque::Injector::new(),
            });
        }
        let sh = Arc::new(Shared {
            size,
            algorithm: config.algorithm,
            dedicated: config.dedicated_listeners,
            pin: config.pin == PinMode::Group,
            steal: config.steal,
            policy: chosen,
            rails: config.rails,
            service: Default::default(),
            ncpu,
            knobs: std::sync::Arc::new(PoolKnobs::new(&config)),
            clock: self.clock,
            groups,
            handles: Mutex::new(Handles::new()),
            timer: Mutex::new(TimerCtl::default()),
            timer_cv: Condvar::new(),
            total_query_threads: AtomicUsize::new(0),
            running: AtomicUsize::new(0),
            connecting: AtomicUsize::new(0),
            alive: AtomicUsize::new(0),
            threads_created: AtomicU64::new(0),
            rr: RoundRobin::default(),
            log: self.log,
            connection_handlers: self.connection_handlers,
            run_role: run_role::<S>,
        });
        // Start-up per group, as MySQL: query_threads_per_group query threads, a dedicated
        // listener when configured, and the permanent connection handler.
        for g in 0..=size {
            if g == size && !self.admin_threads {
                continue;
            }
            let mut st = lock(&sh.groups[g].state);
            for _ in 0..config.query_threads_per_group {
                spawn::spawn(&sh, g, &mut st, Role::Query);
            }
            if sh.dedicated {
                spawn::spawn(&sh, g, &mut st, Role::Listener);
            }
            if sh.connection_handlers {
                spawn::spawn(&sh, g, &mut st, Role::ConnHandler { permanent: true });
            }
        }
        let pool = ThreadPool {
            sh,
            timer: Mutex::new(None),
            started_at: SystemTime::now(),
            poller: choice.clone(),
        };
        if self.timer_thread {
            let sh2 = pool.sh.clone();
            // On failure `pool` drops here, which shuts down the threads already started.
            let h = thread::Builder::new()
                .name("tp-timer".into())
                .spawn(move || timer::run(sh2))
                .map_err(PoolError::Io)?;
            *lock(&pool.timer) = Some(h);
        }
        Ok((
            pool,
            PoolStartup {
                poller: choice,
                warnings,
                config,
            },
        ))
    }
}

/// The role table: the loop a pool thread of each role runs. Spawning (spawn.rs) reaches the
/// role loops only through this function, which the pool's [`Shared`] state holds, because the
/// loops themselves spawn threads (a wake may create a query thread).
fn run_role<'a, S: Session>(
    sh: &'a Arc<Shared<S>>,
    g: usize,
    me: usize,
    role: Role,
) -> Guard<'a, S> {
    match role {
        Role::Query => worker::run(sh, g, me),
        Role::Listener => listener::run_dedicated(sh, g, me),
        Role::ConnHandler { permanent } => connect::run(sh, g, me, permanent),
    }
}
