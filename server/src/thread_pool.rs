//! The thread pool as the server configures it: MySQL's 13 `thread_pool_*` variables (which
//! exist only while the pool is loaded, as with MySQL's plugin), MariaDB's two that MySQL
//! lacks (`thread_pool_oversubscribe`, `thread_pool_priority`, for the `mariadb` policy), plus
//! tpbed's own
//! `tpbed_thread_pool_*` settings, the pool built from them, and the on-set hooks of the dynamic ones.

use std::sync::Arc;

use pool_core::config::{ConfigError, PoolKnobs};
use pool_core::{
    Algorithm, IoMode, LogLevel, PinMode, PollerKind, PoolBuilder, PoolConfig, Rails, ThreadPool,
};

use crate::error::{ErrorCode, SqlError, SqlResult};
use crate::log;
use crate::session::ClientSession;
use crate::vars::registry::{Feature, Registry, Scope, VarDef, VarType, VarValue};

fn def(name: &'static str, scope: Scope, dynamic: bool, ty: VarType, default: VarValue) -> VarDef {
    VarDef {
        name,
        scope,
        dynamic,
        session_read_only: false,
        ty,
        default,
        feature: Feature::ThreadPool,
    }
}

fn int(min: i64, max: i64) -> VarType {
    VarType::Int { min, max }
}

/// The pool's variables with MySQL's defaults for this machine's CPU count.
pub fn definitions() -> Vec<VarDef> {
    use Scope::*;
    let ncpu = std::thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(1);
    let d = PoolConfig::mysql_defaults(ncpu);
    let i = |v: u32| VarValue::Int(i64::from(v));
    let algorithm = match d.algorithm {
        Algorithm::LowConcurrency => 0,
        Algorithm::HighConcurrency => 1,
    };
    vec![
        def(
            "thread_pool_algorithm",
            Global,
            false,
            int(0, 1),
            i(algorithm),
        ),
        def(
            "thread_pool_connection_report_interval",
            Global,
            true,
            int(0, 600),
            i(d.connection_report_interval),
        ),
        def(
            "thread_pool_dedicated_listeners",
            Global,
            false,
            VarType::Bool,
            VarValue::Bool(d.dedicated_listeners),
        ),
        def(
            "thread_pool_high_priority_connection",
            Both,
            true,
            int(0, 1),
            i(0),
        ),
        def(
            "thread_pool_longrun_trx_limit",
            Global,
            true,
            int(10, 86_400_000),
            i(d.longrun_trx_limit),
        ),
        def(
            "thread_pool_max_active_query_threads",
            Global,
            true,
            int(0, 512),
            i(d.max_active_query_threads),
        ),
        def(
            "thread_pool_max_transactions_limit",
            Global,
            true,
            int(0, 1_000_000),
            i(d.max_transactions_limit),
        ),
        def(
            "thread_pool_max_unused_threads",
            Global,
            true,
            int(0, 4096),
            i(d.max_unused_threads),
        ),
        // MariaDB's, labelled as such in README: the `mariadb` policy reads them.
        def(
            "thread_pool_oversubscribe",
            Global,
            true,
            int(1, 1000),
            i(d.oversubscribe),
        ),
        def(
            "thread_pool_priority",
            Both,
            true,
            VarType::Enum(&["high", "low", "auto"]),
            VarValue::Str("auto".into()),
        ),
        def(
            "thread_pool_prio_kickup_timer",
            Global,
            true,
            int(0, i64::from(u32::MAX)),
            i(d.prio_kickup_timer),
        ),
        def(
            "thread_pool_query_threads_per_group",
            Global,
            true,
            int(1, 4096),
            i(d.query_threads_per_group),
        ),
        def("thread_pool_size", Global, false, int(1, 512), i(d.size)),
        def(
            "thread_pool_stall_limit",
            Global,
            true,
            int(4, 600),
            i(d.stall_limit),
        ),
        def(
            "thread_pool_transaction_delay",
            Global,
            true,
            int(0, 300_000),
            i(d.transaction_delay),
        ),
    ]
    .into_iter()
    .chain(tpbed_definitions(&d))
    .collect()
}

/// The pool's own variables (`tpbed_thread_pool_*`), labelled as non-MySQL settings in every
/// report.
fn tpbed_definitions(d: &PoolConfig) -> Vec<VarDef> {
    use Scope::*;
    let i = |v: u32| VarValue::Int(i64::from(v));
    vec![
        def(
            "tpbed_thread_pool_poller",
            Global,
            false,
            VarType::Enum(&["epoll", "io-uring"]),
            VarValue::Str("epoll".into()),
        ),
        def(
            "tpbed_thread_pool_io",
            Global,
            false,
            VarType::Enum(&["poll", "ring"]),
            VarValue::Str("poll".into()),
        ),
        def(
            "tpbed_thread_pool_pin",
            Global,
            false,
            VarType::Enum(&["off", "group"]),
            VarValue::Str("off".into()),
        ),
        def(
            "tpbed_thread_pool_steal",
            Global,
            false,
            VarType::Bool,
            VarValue::Bool(false),
        ),
        // Free text checked against pool-core's registry when the pool starts, so an unknown
        // name is refused with the registered names listed.
        def(
            "tpbed_thread_pool_policy",
            Global,
            false,
            VarType::Str,
            VarValue::Str(d.policy.clone()),
        ),
        def(
            "tpbed_thread_pool_time_slice",
            Global,
            true,
            int(1, 100_000),
            i(d.time_slice),
        ),
        def(
            "tpbed_thread_pool_rails",
            Global,
            false,
            VarType::Set(Rails::NAMES),
            VarValue::Str(d.rails.value()),
        ),
    ]
}

fn u(vars: &Registry, name: &str) -> u32 {
    vars.global_by_name(name)
        .as_int()
        .clamp(0, i64::from(u32::MAX)) as u32
}

/// The pool configuration the variables describe.
pub fn config(vars: &Registry) -> PoolConfig {
    let size = u(vars, "thread_pool_size");
    PoolConfig {
        size,
        algorithm: if u(vars, "thread_pool_algorithm") == 0 {
            Algorithm::LowConcurrency
        } else {
            Algorithm::HighConcurrency
        },
        dedicated_listeners: vars
            .global_by_name("thread_pool_dedicated_listeners")
            .as_bool(),
        stall_limit: u(vars, "thread_pool_stall_limit"),
        prio_kickup_timer: u(vars, "thread_pool_prio_kickup_timer"),
        max_unused_threads: u(vars, "thread_pool_max_unused_threads"),
        max_active_query_threads: u(vars, "thread_pool_max_active_query_threads"),
        max_transactions_limit: u(vars, "thread_pool_max_transactions_limit"),
        transaction_delay: u(vars, "thread_pool_transaction_delay"),
        query_threads_per_group: u(vars, "thread_pool_query_threads_per_group"),
        connection_report_interval: u(vars, "thread_pool_connection_report_interval"),
        longrun_trx_limit: u(vars, "thread_pool_longrun_trx_limit"),
        poller: PollerKind::parse(vars.global_by_name("tpbed_thread_pool_poller").as_str())
            .unwrap_or(PollerKind::Epoll),
        io: IoMode::parse(vars.global_by_name("tpbed_thread_pool_io").as_str())
            .unwrap_or(IoMode::Poll),
        pin: if vars.global_by_name("tpbed_thread_pool_pin").as_str() == "group" {
            PinMode::Group
        } else {
            PinMode::Off
        },
        steal: vars.global_by_name("tpbed_thread_pool_steal").as_bool(),
        policy: vars
            .global_by_name("tpbed_thread_pool_policy")
            .as_str()
            .to_string(),
        rails: Rails::parse(vars.global_by_name("tpbed_thread_pool_rails").as_str())
            .unwrap_or(Rails::ALL),
        oversubscribe: u(vars, "thread_pool_oversubscribe"),
        time_slice: u(vars, "tpbed_thread_pool_time_slice"),
    }
}

/// Writes back what the pool runs with after start-up corrections (and the poller in force).
fn record(vars: &Registry, c: &PoolConfig) {
    let set = |name: &str, v: VarValue| {
        if let Some(id) = vars.lookup(name) {
            vars.set_global_unchecked(id, v);
        }
    };
    set(
        "thread_pool_dedicated_listeners",
        VarValue::Bool(c.dedicated_listeners),
    );
    set(
        "thread_pool_query_threads_per_group",
        VarValue::Int(i64::from(c.query_threads_per_group)),
    );
    set(
        "tpbed_thread_pool_poller",
        VarValue::Str(c.poller.name().to_string()),
    );
    set(
        "tpbed_thread_pool_io",
        VarValue::Str(c.io.name().to_string()),
    );
    set("tpbed_thread_pool_policy", VarValue::Str(c.policy.clone()));
}

/// Starts the pool the variables describe, logging its start-up notes.
pub fn start(vars: &Registry) -> Result<Arc<ThreadPool<ClientSession>>, String> {
    let cfg = config(vars);
    let sink: pool_core::LogSink = Arc::new(|level, msg: &str| match level {
        LogLevel::Info => log::note(&format!("thread pool: {msg}")),
        LogLevel::Warning => log::warning(&format!("thread pool: {msg}")),
    });
    let (pool, startup) = PoolBuilder::new(cfg)
        .log(sink)
        .build::<ClientSession>()
        .map_err(|e| e.to_string())?;
    for w in &startup.warnings {
        log::warning(&format!("thread pool: {w}"));
    }
    if let Some(reason) = &startup.poller.fallback_reason {
        log::warning(&format!(
            "io_uring is not usable ({reason}); the thread pool uses {} with {} I/O",
            startup.poller.kind.name(),
            startup.poller.io.name()
        ));
    }
    let mut effective = startup.config.clone();
    effective.poller = startup.poller.kind;
    effective.io = startup.poller.io;
    record(vars, &effective);
    log::note(&format!(
        "thread pool: {} groups + Admin group, poller {}, {} I/O, max_transactions_limit {}, \
         policy {}, rails '{}'",
        effective.size,
        effective.poller.name(),
        effective.io.name(),
        effective.max_transactions_limit,
        effective.policy,
        effective.rails.value()
    ));
    Ok(Arc::new(pool))
}

fn refused(name: &str, v: &VarValue, e: &ConfigError) -> SqlError {
    SqlError::new(
        ErrorCode::WrongValueForVar,
        format!(
            "Variable '{name}' can't be set to the value of '{}' ({e})",
            v.show()
        ),
    )
}

/// Registers the on-set hooks of the pool's dynamic variables: each goes to its validated
/// setter on the running pool, which may refuse the value (1231, with the pool's reason).
/// `thread_pool_high_priority_connection` and `thread_pool_priority` have none: sessions read
/// their own copy.
pub fn register_hooks(vars: &Registry, pool: &Arc<ThreadPool<ClientSession>>) -> SqlResult<()> {
    type Setter = fn(&PoolKnobs, u32) -> Result<(), ConfigError>;
    let setters: [(&'static str, Setter); 11] = [
        ("thread_pool_stall_limit", PoolKnobs::set_stall_limit),
        (
            "thread_pool_prio_kickup_timer",
            PoolKnobs::set_prio_kickup_timer,
        ),
        (
            "thread_pool_max_unused_threads",
            PoolKnobs::set_max_unused_threads,
        ),
        (
            "thread_pool_max_active_query_threads",
            PoolKnobs::set_max_active_query_threads,
        ),
        (
            "thread_pool_max_transactions_limit",
            PoolKnobs::set_max_transactions_limit,
        ),
        (
            "thread_pool_transaction_delay",
            PoolKnobs::set_transaction_delay,
        ),
        (
            "thread_pool_query_threads_per_group",
            PoolKnobs::set_query_threads_per_group,
        ),
        (
            "thread_pool_connection_report_interval",
            PoolKnobs::set_connection_report_interval,
        ),
        (
            "thread_pool_longrun_trx_limit",
            PoolKnobs::set_longrun_trx_limit,
        ),
        ("thread_pool_oversubscribe", PoolKnobs::set_oversubscribe),
        ("tpbed_thread_pool_time_slice", PoolKnobs::set_time_slice),
    ];
    for (name, set) in setters {
        let knobs = pool.knobs();
        vars.on_set(name, move |n: u32| {
            set(&knobs, n).map_err(|e| refused(name, &VarValue::Int(i64::from(n)), &e))
        })?;
    }
    Ok(())
}
