//! The server: the [`Core`] every session shares plus the connection handler that runs the
//! sessions, built from the start-up configuration.

use std::ops::Deref;
use std::sync::atomic::{AtomicI64, AtomicU64};
use std::sync::{Arc, OnceLock};
use std::time::{Instant, SystemTime};

use pool_core::{
    ConnectionHandler, GroupStateRow, GroupStatsRow, HandlerStats, ThreadPerConnection, ThreadPool,
    ThreadStateRow,
};

use crate::accounts::Accounts;
use crate::config::{raw_value, Config};
use crate::connections::Connections;
use crate::core::{Core, HandlerView, HotVars, PoolView, ShutdownRequest, ThreadHandling};
use crate::log;
use crate::session::ClientSession;
use crate::startup::StartupError;
use crate::vars::registry::{Feature, RawValue, Registry};
use crate::vars::status::RetiredCounters;
use crate::vars::VarValue;

/// The connection handler the server runs, kept for its statistics and dynamic knobs.
#[derive(Debug, Clone)]
pub enum Handler {
    /// One thread per connection with a thread cache.
    PerConnection(Arc<ThreadPerConnection<ClientSession>>),
    /// The thread-group pool.
    Pool(Arc<ThreadPool<ClientSession>>),
}

impl HandlerView for Handler {
    fn stats(&self) -> HandlerStats {
        match self {
            Handler::PerConnection(h) => h.stats(),
            Handler::Pool(p) => p.stats(),
        }
    }

    fn pool(&self) -> Option<&dyn PoolView> {
        match self {
            Handler::PerConnection(_) => None,
            Handler::Pool(p) => Some(p.as_ref()),
        }
    }
}

impl PoolView for ThreadPool<ClientSession> {
    fn clock_epoch(&self) -> SystemTime {
        ThreadPool::clock_epoch(self)
    }
    fn group_states(&self) -> Vec<GroupStateRow> {
        ThreadPool::group_states(self)
    }
    fn group_stats(&self) -> Vec<GroupStatsRow> {
        ThreadPool::group_stats(self)
    }
    fn thread_states(&self) -> Vec<ThreadStateRow> {
        ThreadPool::thread_states(self)
    }
}

/// The shared core and the connection handler that runs its sessions.
#[derive(Debug)]
pub struct Server {
    /// What every session shares.
    core: Arc<Core>,
    /// The connection handler (set once at start-up), typed for its dynamic knobs.
    pub handler: OnceLock<Handler>,
}

impl Deref for Server {
    type Target = Core;

    fn deref(&self) -> &Core {
        &self.core
    }
}

impl Server {
    /// Builds the server state from the start-up configuration, logging what it adjusts or
    /// ignores; fails on an unknown command-line option, a bad value, or a data directory or
    /// redo log it cannot create.
    pub fn from_config(cfg: &Config) -> Result<Arc<Server>, StartupError> {
        Ok(Arc::new(Server {
            core: Arc::new(Self::core_from_config(cfg)?),
            handler: OnceLock::new(),
        }))
    }

    /// The core sessions hold.
    pub fn core(&self) -> &Arc<Core> {
        &self.core
    }

    /// Records the connection handler once it runs (later calls change nothing).
    pub fn set_handler(&self, h: Handler) {
        if self.handler.set(h.clone()).is_ok() {
            let _ = self.core.handler.set(Arc::new(h));
        }
    }

    /// Builds the core from the start-up configuration (see [`Server::from_config`]).
    fn core_from_config(cfg: &Config) -> Result<Core, StartupError> {
        crate::engine::log::install(log::engine_sink);
        for w in &cfg.warnings {
            log::warning(w);
        }
        let (pool, loaded_dynamically) = connection_handling(cfg);
        let mut features = vec![Feature::Core];
        if pool {
            features.push(Feature::ThreadPool);
        }
        let vars = Registry::new(crate::config::variable_definitions(), &features);
        apply_settings(cfg, &vars, pool)?;
        let th = vars
            .require("thread_handling")
            .map_err(|e| StartupError::MissingVariable(e.message))?;
        let label = match (pool, loaded_dynamically) {
            (true, true) => "loaded-dynamically",
            (true, false) => "pool-of-threads",
            _ => "one-thread-per-connection",
        };
        vars.set_global_unchecked(th, VarValue::Str(label.into()));
        let ids = hot_vars(&vars)?;
        let trx = crate::trx::TrxSys::new(
            crate::storage::lock_config(&vars),
            crate::storage::purge_config(&vars),
        );
        trx.start_purge().map_err(|e| StartupError::Thread {
            name: "purge",
            source: e,
        })?;
        autosize(cfg, &vars, pool, &ids)?;
        let (redo, datadir) = crate::storage::open_redo(&vars)?;
        let redo = Arc::new(redo);
        let binlog = crate::storage::open_binlog(&vars, &datadir)?.map(Arc::new);
        crate::storage::register_hooks(&vars, &trx, &redo, binlog.as_ref())
            .map_err(|e| StartupError::MissingVariable(e.message))?;
        let memory =
            crate::memory::start(&vars).map_err(|e| StartupError::MissingVariable(e.message))?;
        let digests = crate::digest::store_from(&vars);
        let querylogs = crate::querylog::QueryLogs::start(&vars, datadir.path())?;
        Ok(Core {
            redo,
            binlog,
            datadir,
            vars,
            accounts: Accounts::with_root(),
            catalog: crate::catalog::SharedCatalog::default(),
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
            querylogs,
            shutdown: ShutdownRequest::default(),
            memory,
        })
    }
}

/// Whether the start-up settings load the thread pool: (pool, loaded as a plugin). Decided
/// first, since the pool's variables exist only with it.
fn connection_handling(cfg: &Config) -> (bool, bool) {
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
    (pool, loaded_dynamically)
}

/// Applies the start-up settings to the registry: unknown names warned about (or refused on
/// the command line), values parsed and adjusted as mysqld does.
fn apply_settings(cfg: &Config, vars: &Registry, pool: bool) -> Result<(), StartupError> {
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
            if crate::vars::mysql_only::is_mysql_option(&s.name) {
                log::warning(&format!(
                    "'{}' is a MySQL option tpbed does not model; accepted and ignored ({})",
                    s.name,
                    s.whence()
                ));
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
    Ok(())
}

/// The ids of the variables read on hot paths.
fn hot_vars(vars: &Registry) -> Result<HotVars, StartupError> {
    let id = |n: &str| {
        vars.require(n)
            .map_err(|e| StartupError::MissingVariable(e.message))
    };
    Ok(HotVars {
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
        tp_priority: vars.lookup("thread_pool_priority"),
        lock_wait_timeout: id("innodb_lock_wait_timeout")?,
        metadata_lock_wait_timeout: id("lock_wait_timeout")?,
        foreign_key_checks: id("foreign_key_checks")?,
        transaction_isolation: id("transaction_isolation")?,
        transaction_read_only: id("transaction_read_only")?,
        max_error_count: id("max_error_count")?,
        warning_count: id("warning_count")?,
        error_count: id("error_count")?,
    })
}

/// The defaults MySQL sizes from other settings, unless the settings gave them.
fn autosize(cfg: &Config, vars: &Registry, pool: bool, ids: &HotVars) -> Result<(), StartupError> {
    let id = |n: &str| {
        vars.require(n)
            .map_err(|e| StartupError::MissingVariable(e.message))
    };
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
    Ok(())
}
