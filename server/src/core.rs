//! The core: the state every statement of every session shares (variables, accounts, the
//! catalog, transactions, redo, digests, live connections, server-level counters), built
//! once at start-up by the server and held by each session. It knows the connection handler
//! only through [`HandlerView`].

use std::sync::atomic::{AtomicI64, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Instant, SystemTime};

use pool_core::{GroupStateRow, GroupStatsRow, HandlerStats, ThreadStateRow};

use crate::accounts::Accounts;
use crate::connections::{ConnInfo, Connections};
use crate::vars::registry::Registry;
use crate::vars::status::{Counter, RetiredCounters};
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

/// What the core reads of the connection handler that runs its sessions.
pub trait HandlerView: std::fmt::Debug + Send + Sync {
    /// The handler's thread counters.
    fn stats(&self) -> HandlerStats;
    /// The thread pool's introspection, when the handler is the pool.
    fn pool(&self) -> Option<&dyn PoolView>;
}

/// What the pool's introspection tables read of a running thread pool.
pub trait PoolView {
    /// The wall-clock time of the pool clock's zero.
    fn clock_epoch(&self) -> SystemTime;
    /// `tp_thread_group_state` rows.
    fn group_states(&self) -> Vec<GroupStateRow>;
    /// `tp_thread_group_stats` rows.
    fn group_stats(&self) -> Vec<GroupStatsRow>;
    /// `tp_thread_state` rows.
    fn thread_states(&self) -> Vec<ThreadStateRow>;
}

/// tpbed's thread-pool totals for `SHOW GLOBAL STATUS` (`Tpbed_thread_pool_*`, not MySQL's):
/// the per-group counters of `tp_thread_group_stats` summed over the groups, the oldest queued
/// event's age as the largest of the groups'.
fn pool_status_rows(groups: &[GroupStatsRow]) -> Vec<(String, String)> {
    let sum = |f: fn(&GroupStatsRow) -> u64| groups.iter().map(f).sum::<u64>();
    let oldest = groups
        .iter()
        .filter_map(|g| g.tpbed_oldest_event_age_ms)
        .max()
        .unwrap_or(0);
    [
        (
            "Tpbed_thread_pool_queue_waits_high",
            sum(|g| g.tpbed_dequeued_high),
        ),
        (
            "Tpbed_thread_pool_queue_waits_low",
            sum(|g| g.tpbed_dequeued_low),
        ),
        (
            "Tpbed_thread_pool_queue_wait_high_us",
            sum(|g| g.tpbed_queue_wait_high_us),
        ),
        (
            "Tpbed_thread_pool_queue_wait_low_us",
            sum(|g| g.tpbed_queue_wait_low_us),
        ),
        ("Tpbed_thread_pool_oldest_event_age_ms", oldest),
        ("Tpbed_thread_pool_kickups", sum(|g| g.prio_kickups)),
        (
            "Tpbed_thread_pool_stalls",
            sum(|g| g.stalled_queries_executed),
        ),
        ("Tpbed_thread_pool_yields", sum(|g| g.tpbed_yields)),
        (
            "Tpbed_thread_pool_threads_running",
            sum(|g| g.tpbed_threads_running),
        ),
        (
            "Tpbed_thread_pool_threads_waiting",
            sum(|g| g.tpbed_threads_waiting),
        ),
        (
            "Tpbed_thread_pool_threads_yielded",
            sum(|g| g.tpbed_threads_yielded),
        ),
        (
            "Tpbed_thread_pool_threads_parked",
            sum(|g| g.tpbed_threads_parked),
        ),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v.to_string()))
    .collect()
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

/// What statements need from the server: variables, accounts, the catalog, transactions,
/// redo, digests, live connections and the server-level counters.
#[derive(Debug)]
pub struct Core {
    /// System variables.
    pub vars: Registry,
    /// Accounts and privileges.
    pub accounts: Accounts,
    /// User databases and their tables (the system ones are in [`SYSTEM_DATABASES`]).
    pub catalog: crate::catalog::SharedCatalog,
    /// Live connections.
    pub connections: Connections,
    /// Counters of closed sessions and server-level events.
    pub retired: RetiredCounters,
    /// What the introspection tables and status read of the connection handler (set once
    /// at start-up).
    pub handler: OnceLock<Arc<dyn HandlerView>>,
    /// `Max_used_connections`.
    pub max_used_connections: AtomicU64,
    /// Client connections holding a slot: counted from accept (including those still
    /// authenticating) by [`Core::take_connection_slot`], at most `max_connections + 1`; a
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
    /// The binary log when `log_bin` is ON: a committing transaction that wrote syncs the redo
    /// and then this before it releases its locks (crate::stmt::transaction::commit).
    pub binlog: Option<Arc<crate::engine::redo::RedoLog>>,
    /// The data directory (declared after the logs so it is removed after they close).
    pub datadir: crate::datadir::DataDir,
    /// `events_statements_summary_by_digest`.
    pub digests: crate::digest::DigestStore,
    /// The general and slow query logs.
    pub querylogs: Arc<crate::querylog::QueryLogs>,
    /// Set by SIGTERM, SIGINT or the `SHUTDOWN` statement; `main` waits for it.
    pub shutdown: ShutdownRequest,
    /// The memory limit writes (1114) and large values (1037) are checked against.
    pub memory: Arc<crate::memory::MemoryBudget>,
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
    /// MariaDB's `thread_pool_priority` (only with the pool).
    pub tp_priority: Option<VarId>,
    /// `innodb_lock_wait_timeout`.
    pub lock_wait_timeout: VarId,
    /// `lock_wait_timeout` (metadata lock waits).
    pub metadata_lock_wait_timeout: VarId,
    /// `foreign_key_checks`.
    pub foreign_key_checks: VarId,
    /// `transaction_isolation`.
    pub transaction_isolation: VarId,
    /// `transaction_read_only`.
    pub transaction_read_only: VarId,
    /// `max_error_count`.
    pub max_error_count: VarId,
    /// `warning_count` (read from the session's diagnostics, not the registry).
    pub warning_count: VarId,
    /// `error_count` (likewise).
    pub error_count: VarId,
}

impl Core {
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

    /// How many user tables exist (`Open_tables`).
    pub fn table_count(&self) -> usize {
        let engine = &self.catalog.engine;
        engine
            .database_names()
            .iter()
            .filter_map(|db| engine.database(db).ok())
            .map(|d| d.table_names().len())
            .sum()
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
        let threads = self.handler.get().map(|h| h.stats()).unwrap_or_default();
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
            // Every table stays open from its creation: no table cache evicts one.
            ("Open_tables", self.table_count().to_string()),
            (
                "Opened_tables",
                self.status_counter(Counter::ComCreateTable).to_string(),
            ),
            (
                "Flush_commands",
                self.status_counter(Counter::ComFlush).to_string(),
            ),
        ];
        rows.extend(gauges.into_iter().map(|(k, v)| (k.to_string(), v)));
        rows.extend(
            crate::vars::idle_status::ALWAYS_ZERO
                .iter()
                .map(|k| (k.to_string(), "0".to_string())),
        );
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
        if let Some(pool) = self.handler.get().and_then(|h| h.pool()) {
            rows.extend(pool_status_rows(&pool.group_stats()));
        }
        // One lower-cased copy per name, not two per comparison.
        rows.sort_by_cached_key(|r| r.0.to_ascii_lowercase());
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
