//! The server-wide state every session shares: variables, accounts, databases, connections
//! and the status counters that are not per session.

use std::sync::atomic::{AtomicI64, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock};

use pool_core::{ConnectionHandler, HandlerStats, ThreadPerConnection, ThreadPool};
use std::time::Instant;

use crate::accounts::Accounts;
use crate::config::{raw_value, Config};
use crate::connections::{ConnInfo, Connections};
use crate::log;
use crate::session::ClientSession;
use crate::startup::StartupError;
use crate::vars::registry::{Feature, RawValue, Registry};
use crate::vars::status::{Counter, RetiredCounters};
use crate::vars::system::definitions;
use crate::vars::{VarId, VarValue};

/// Databases that always exist (tpbed serves their introspection tables virtually).
pub const SYSTEM_DATABASES: &[&str] = &["information_schema", "mysql", "performance_schema", "sys"];

/// How connections are mapped to threads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ThreadHandling {
    /// One thread per connection (MySQL's default).
    PerConnection,
    /// The thread-group pool.
    Pool,
}

/// The connection handler the server runs, kept for its statistics and dynamic knobs.
#[derive(Debug, Clone)]
pub enum Handler {
    /// One thread per connection with a thread cache.
    PerConnection(Arc<ThreadPerConnection<ClientSession>>),
    /// The thread-group pool.
    Pool(Arc<ThreadPool<ClientSession>>),
}

impl Handler {
    /// The handler's thread counters.
    pub fn stats(&self) -> HandlerStats {
        match self {
            Handler::PerConnection(h) => h.stats(),
            Handler::Pool(p) => p.stats(),
        }
    }
}

/// Why the server shuts down.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Reason {
    /// A signal (its number).
    Signal(i32),
    /// The `SHUTDOWN` statement, by this user.
    Statement(String),
}

/// The request to shut down: set once, polled by `main` between its waits for a signal.
#[derive(Debug, Default)]
pub struct ShutdownRequest {
    reason: Mutex<Option<Reason>>,
}

impl ShutdownRequest {
    /// Asks for a shutdown (the first reason wins).
    pub fn request(&self, why: Reason) {
        let mut r = self.reason.lock().unwrap_or_else(|e| e.into_inner());
        if r.is_none() {
            *r = Some(why);
        }
    }

    /// Whether a shutdown was asked for.
    pub fn requested(&self) -> bool {
        self.reason().is_some()
    }

    /// Why a shutdown was asked for, if it was.
    pub fn reason(&self) -> Option<Reason> {
        self.reason
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }
}

/// State shared by all sessions of one server.
#[derive(Debug)]
pub struct Server {
    /// System variables.
    pub vars: Registry,
    /// Accounts and privileges.
    pub accounts: Accounts,
    /// User databases and their tables (the system ones are in [`SYSTEM_DATABASES`]).
    pub catalog: crate::exec::SharedCatalog,
    /// Live connections.
    pub connections: Connections,
    /// Counters of closed sessions and server-level events.
    pub retired: RetiredCounters,
    /// The connection handler (set once at start-up).
    pub handler: OnceLock<Handler>,
    /// `Max_used_connections`.
    pub max_used_connections: AtomicU64,
    /// Client connections holding a slot: counted from accept (including those still
    /// authenticating) by [`Server::take_connection_slot`], at most `max_connections + 1`; a
    /// refused connection gives its slot back before its error is sent, or never takes one.
    pub connection_count: AtomicU64,
    /// `Prepared_stmt_count`: statements prepared over all sessions.
    pub prepared_stmt_count: AtomicI64,
    /// How connections are handled (fixed at start-up).
    pub thread_handling: ThreadHandling,
    /// When the server started (`Uptime`).
    pub started: Instant,
    /// Ids of hot variables, looked up once.
    pub ids: HotVars,
    /// Transactions, purge and the lock system.
    pub trx: Arc<crate::trx::TrxSys>,
    /// The redo log: every committing read-write transaction calls `redo.commit(bytes)`.
    pub redo: Arc<crate::engine::redo::RedoLog>,
    /// The data directory (declared after `redo` so it is removed after the log closes).
    pub datadir: crate::datadir::DataDir,
    /// `events_statements_summary_by_digest`.
    pub digests: crate::digest::DigestStore,
    /// Set by SIGTERM, SIGINT or the `SHUTDOWN` statement; `main` waits for it.
    pub shutdown: ShutdownRequest,
}

/// Registry ids of variables read on every connection or command.
#[derive(Debug, Clone, Copy)]
pub struct HotVars {
    /// `autocommit`.
    pub autocommit: VarId,
    /// `max_connections`.
    pub max_connections: VarId,
    /// `max_allowed_packet`.
    pub max_allowed_packet: VarId,
    /// `max_prepared_stmt_count`.
    pub max_prepared_stmt_count: VarId,
    /// `wait_timeout`.
    pub wait_timeout: VarId,
    /// `interactive_timeout`.
    pub interactive_timeout: VarId,
    /// `net_read_timeout`.
    pub net_read_timeout: VarId,
    /// `net_write_timeout`.
    pub net_write_timeout: VarId,
    /// `connect_timeout`.
    pub connect_timeout: VarId,
    /// `sql_mode`.
    pub sql_mode: VarId,
    /// `sql_select_limit`.
    pub sql_select_limit: VarId,
    /// `thread_pool_high_priority_connection` (only with the pool).
    pub tp_high_priority: Option<VarId>,
    /// `innodb_lock_wait_timeout`.
    pub lock_wait_timeout: VarId,
    /// `transaction_isolation`.
    pub transaction_isolation: VarId,
    /// `transaction_read_only`.
    pub transaction_read_only: VarId,
}

impl Server {
    /// Builds the server state from the start-up configuration, logging what it adjusts or
    /// ignores; fails on an unknown command-line option, a bad value, or a data directory or
    /// redo log it cannot create.
    pub fn from_config(cfg: &Config) -> Result<Arc<Server>, StartupError> {
        crate::engine::log::install(log::engine_sink);
        for w in &cfg.warnings {
            log::warning(w);
        }
        // Decide the connection handling first: the pool's variables exist only with it.
        let mut pool = false;
        let mut loaded_dynamically = false;
        for s in &cfg.settings {
            match s.name.as_str() {
                "thread_handling" => {
                    let v = s.value.clone().unwrap_or_default().to_ascii_lowercase();
                    pool = v == "pool-of-threads";
                }
                "plugin_load_add" | "plugin_load" => {
                    let v = s.value.clone().unwrap_or_default();
                    for plugin in v.split([';', ',']).map(str::trim).filter(|p| !p.is_empty()) {
                        let file = plugin.rsplit('=').next().unwrap_or(plugin);
                        if file.starts_with("thread_pool") {
                            pool = true;
                            loaded_dynamically = true;
                        } else {
                            log::warning(&format!(
                                "Plugin '{plugin}' is not part of tpbed; ignored ({})",
                                s.whence()
                            ));
                        }
                    }
                }
                _ => {}
            }
        }
        let mut features = vec![Feature::Core];
        if pool {
            features.push(Feature::ThreadPool);
        }
        let mut defs = definitions();
        defs.extend(crate::storage::definitions());
        defs.extend(crate::thread_pool::definitions());
        defs.extend(crate::digest::definitions());
        let vars = Registry::new(defs, &features);
        for s in &cfg.settings {
            if matches!(
                s.name.as_str(),
                "plugin_load_add" | "plugin_load" | "thread_handling"
            ) {
                continue;
            }
            let Some(id) = vars.lookup(&s.name) else {
                let known_elsewhere = !pool && s.name.starts_with("thread_pool");
                if s.loose || known_elsewhere {
                    if known_elsewhere {
                        log::warning(&format!(
                            "'{}' ignored: the thread pool is not loaded ({})",
                            s.name,
                            s.whence()
                        ));
                    }
                    continue;
                }
                if matches!(s.origin, crate::config::Origin::CommandLine) {
                    return Err(StartupError::UnknownVariable(s.name.clone()));
                }
                log::warning(&format!(
                    "unknown variable '{}' ignored ({})",
                    s.name,
                    s.whence()
                ));
                continue;
            };
            let value = vars
                .parse_value(id, &raw_value(&s.value))
                .map_err(|e| StartupError::BadValue(format!("{} ({})", e.message, s.whence())))?;
            if let (VarValue::Int(got), RawValue::Int(asked)) = (&value, raw_value(&s.value)) {
                if *got != asked {
                    log::warning(&format!(
                        "option '{}': value {asked} adjusted to {got} ({})",
                        s.name,
                        s.whence()
                    ));
                }
            }
            vars.set_global_unchecked(id, value);
        }
        let th = vars
            .require("thread_handling")
            .map_err(|e| StartupError::MissingVariable(e.message))?;
        let label = match (pool, loaded_dynamically) {
            (true, true) => "loaded-dynamically",
            (true, false) => "pool-of-threads",
            _ => "one-thread-per-connection",
        };
        vars.set_global_unchecked(th, VarValue::Str(label.into()));
        let id = |n: &str| {
            vars.require(n)
                .map_err(|e| StartupError::MissingVariable(e.message))
        };
        let ids = HotVars {
            autocommit: id("autocommit")?,
            max_connections: id("max_connections")?,
            max_allowed_packet: id("max_allowed_packet")?,
            max_prepared_stmt_count: id("max_prepared_stmt_count")?,
            wait_timeout: id("wait_timeout")?,
            interactive_timeout: id("interactive_timeout")?,
            net_read_timeout: id("net_read_timeout")?,
            net_write_timeout: id("net_write_timeout")?,
            connect_timeout: id("connect_timeout")?,
            sql_mode: id("sql_mode")?,
            sql_select_limit: id("sql_select_limit")?,
            tp_high_priority: vars.lookup("thread_pool_high_priority_connection"),
            lock_wait_timeout: id("innodb_lock_wait_timeout")?,
            transaction_isolation: id("transaction_isolation")?,
            transaction_read_only: id("transaction_read_only")?,
        };
        let trx = crate::trx::TrxSys::new(
            crate::storage::lock_config(&vars),
            crate::storage::purge_config(&vars),
        );
        trx.start_purge().map_err(|e| StartupError::Thread {
            name: "purge",
            source: e,
        })?;
        // thread_pool_max_transactions_limit defaults to MIN(32 x size, 512) of the size in force.
        if pool
            && !cfg
                .settings
                .iter()
                .any(|s| s.name == "thread_pool_max_transactions_limit")
        {
            let size = vars
                .global_by_name("thread_pool_size")
                .as_int()
                .clamp(1, 512) as u32;
            let limit = pool_core::config::default_max_transactions_limit(size);
            vars.set_global_unchecked(
                id("thread_pool_max_transactions_limit")?,
                VarValue::Int(i64::from(limit)),
            );
        }
        // thread_cache_size autosizes to 8 + max_connections / 100 (at most 100) unless set.
        if !cfg.settings.iter().any(|s| s.name == "thread_cache_size") {
            let mc = vars.global(ids.max_connections).as_int();
            vars.set_global_unchecked(
                id("thread_cache_size")?,
                VarValue::Int((8 + mc / 100).min(100)),
            );
        }
        let (redo, datadir) = crate::storage::open_redo(&vars)?;
        let redo = Arc::new(redo);
        crate::storage::register_hooks(&vars, &trx, &redo)
            .map_err(|e| StartupError::MissingVariable(e.message))?;
        let digests = crate::digest::store_from(&vars);
        Ok(Arc::new(Server {
            redo,
            datadir,
            vars,
            accounts: Accounts::with_root(),
            catalog: crate::exec::SharedCatalog::default(),
            connections: Connections::default(),
            retired: RetiredCounters::default(),
            handler: OnceLock::new(),
            max_used_connections: AtomicU64::new(0),
            connection_count: AtomicU64::new(0),
            prepared_stmt_count: AtomicI64::new(0),
            thread_handling: if pool {
                ThreadHandling::Pool
            } else {
                ThreadHandling::PerConnection
            },
            started: Instant::now(),
            ids,
            trx,
            digests,
            shutdown: ShutdownRequest::default(),
        }))
    }

    /// SET GLOBAL of a validated value: the variable's on-set hook (if a subsystem registered
    /// one) applies it to the running server, then the registry stores it.
    pub fn set_global(&self, id: VarId, v: VarValue) -> crate::error::SqlResult<()> {
        self.vars.set_global(id, v)
    }

    /// Whether database `name` exists (system databases included).
    pub fn database_exists(&self, name: &str) -> bool {
        let lower = name.to_ascii_lowercase();
        SYSTEM_DATABASES.contains(&lower.as_str()) || self.catalog.engine.database(name).is_ok()
    }

    /// Every database name, system ones included, sorted.
    pub fn database_names(&self) -> Vec<String> {
        let mut v: Vec<String> = SYSTEM_DATABASES.iter().map(|s| s.to_string()).collect();
        v.extend(self.catalog.engine.database_names());
        v.sort();
        v
    }

    /// Counts a freshly accepted connection unless `max_connections + 1` are counted already
    /// (the last slot is the spare one only CONNECTION_ADMIN keeps); false if it was not
    /// counted, and then it must be refused with 1040. The check and the count are one
    /// atomic step, as in MySQL's acceptor.
    pub fn take_connection_slot(&self) -> bool {
        let max = self.vars.global(self.ids.max_connections).as_int().max(0) as u64;
        self.connection_count
            .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |c| {
                (c <= max).then_some(c + 1)
            })
            .is_ok()
    }

    /// Gives back a counted connection's slot if more than `max_connections` are counted,
    /// that is if the connection holds the spare slot; true if it did (the connection must
    /// then be refused with 1040 unless it has CONNECTION_ADMIN). The check and the release
    /// are one atomic step, so of two connections racing for the last ordinary slot one
    /// keeps it.
    pub fn release_spare_slot(&self) -> bool {
        let max = self.vars.global(self.ids.max_connections).as_int().max(0) as u64;
        self.connection_count
            .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |c| {
                (c > max).then(|| c - 1)
            })
            .is_ok()
    }

    /// Gives back a connection's slot.
    pub fn release_connection_slot(&self) {
        self.connection_count.fetch_sub(1, Ordering::Relaxed);
    }

    /// Records a connection count for `Max_used_connections`.
    pub fn note_connections(&self, n: u64) {
        self.max_used_connections.fetch_max(n, Ordering::Relaxed);
    }

    /// Status rows for `SHOW [GLOBAL|SESSION] STATUS`: the session's own counters for SESSION,
    /// the sum over every session (live and closed) for GLOBAL, plus server gauges.
    pub fn status(&self, session: Option<&ConnInfo>) -> Vec<(String, String)> {
        let live = self.connections.snapshot();
        let mut rows: Vec<(String, String)> = Vec::new();
        for c in Counter::ALL {
            let v = match session {
                Some(s) => s.counters.get(*c),
                None => self.retired.get(*c) + live.iter().map(|l| l.counters.get(*c)).sum::<u64>(),
            };
            rows.push((c.name().to_string(), v.to_string()));
        }
        let running = live
            .iter()
            .filter(|c| c.running.load(Ordering::Relaxed))
            .count();
        let threads = self.handler.get().map(Handler::stats).unwrap_or_default();
        let gauges = [
            (
                "Connections",
                self.connections
                    .peek_next_id()
                    .saturating_sub(1)
                    .to_string(),
            ),
            (
                "Max_used_connections",
                self.max_used_connections
                    .load(Ordering::Relaxed)
                    .to_string(),
            ),
            (
                "Prepared_stmt_count",
                self.prepared_stmt_count.load(Ordering::Relaxed).to_string(),
            ),
            ("Threads_cached", threads.threads_cached.to_string()),
            ("Threads_connected", live.len().to_string()),
            ("Threads_created", threads.threads_created.to_string()),
            ("Threads_running", running.to_string()),
            ("Uptime", self.started.elapsed().as_secs().to_string()),
            (
                "Uptime_since_flush_status",
                self.started.elapsed().as_secs().to_string(),
            ),
        ];
        rows.extend(gauges.into_iter().map(|(k, v)| (k.to_string(), v)));
        let l = self.trx.locks.stats();
        for (k, v) in [
            ("Innodb_row_lock_waits", l.row_lock_waits),
            ("Innodb_row_lock_time", l.row_lock_time_ms),
            ("Innodb_row_lock_time_avg", l.row_lock_time_avg_ms),
            ("Innodb_row_lock_time_max", l.row_lock_time_max_ms),
            ("Innodb_row_lock_current_waits", l.row_lock_current_waits),
            ("Innodb_deadlocks", l.deadlocks),
            ("Innodb_history_list_length", self.trx.history_len()),
        ] {
            rows.push((k.to_string(), v.to_string()));
        }
        rows.extend(self.redo.status_rows());
        rows.sort_by_key(|r| r.0.to_ascii_lowercase());
        rows
    }

    /// A status counter summed over every session, live and closed (its GLOBAL value).
    pub fn status_counter(&self, c: Counter) -> u64 {
        self.retired.get(c)
            + self
                .connections
                .snapshot()
                .iter()
                .map(|l| l.counters.get(c))
                .sum::<u64>()
    }

    /// FLUSH STATUS, as MySQL does it: the session's counters are added to the global totals
    /// and reset, and `Max_used_connections` restarts from the current count.
    pub fn flush_status(&self, session: &ConnInfo) {
        self.retired.absorb(&session.counters);
        session.counters.reset();
        self.max_used_connections
            .store(self.connections.len() as u64, Ordering::Relaxed);
    }
}
