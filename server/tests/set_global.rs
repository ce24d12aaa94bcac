//! `SET GLOBAL` of every dynamic variable, in both connection-handling modes, through the SQL
//! path a client uses. A variable a subsystem owns must reach that subsystem's running state
//! (read back from the subsystem, not the registry). Of the others, a GLOBAL+SESSION one must
//! reach new sessions (they copy the globals at connect); a global-only one must be listed
//! below, either as read from the registry where it is used or as accepted but not modelled.

use std::sync::Arc;

use tpbed_server::accounts::Privileges;
use tpbed_server::config::{parse_args, Config};
use tpbed_server::connections::ConnInfo;
use tpbed_server::context::Context;
use tpbed_server::engine::redo::FlushAtCommit;
use tpbed_server::server::{Handler, Server};
use tpbed_server::vars::registry::{Scope, VarType};
use tpbed_server::vars::VarValue;

/// Global-only dynamic variables without a hook whose users read the registry when they act.
const READ_AT_USE: &[&str] = &[
    // At each connect.
    "connect_timeout",
    "max_connections",
    // At each PREPARE.
    "max_prepared_stmt_count",
    // When a deadlock is resolved.
    "innodb_print_all_deadlocks",
    // At each LOAD DATA LOCAL.
    "local_infile",
];

/// Global-only dynamic variables tpbed accepts and shows but whose effect it does not model.
const NOT_MODELLED: &[&str] = &[
    "event_scheduler",
    "init_connect",
    "innodb_buffer_pool_size",
    "key_buffer_size",
    "key_cache_block_size",
    "query_cache_size",
    "server_id",
    "table_open_cache",
    // With the thread pool there is no thread cache.
    "thread_cache_size",
];

/// A variable's value as its owning subsystem holds it now; `None` for names no subsystem owns.
fn subsystem_value(server: &Server, name: &str) -> Option<VarValue> {
    let trx = &server.trx;
    let redo = &server.redo;
    let int = |n: u64| Some(VarValue::Int(n as i64));
    let knobs = match server.handler.get() {
        Some(Handler::Pool(p)) => Some(p.knobs()),
        _ => None,
    };
    let pool = |get: fn(&pool_core::PoolKnobs) -> u32| {
        knobs.as_ref().map(|k| VarValue::Int(i64::from(get(k))))
    };
    match name {
        "innodb_purge_batch_size" => int(trx.purge_config().batch_size),
        "innodb_max_purge_lag" => int(trx.purge_config().max_purge_lag),
        "innodb_max_purge_lag_delay" => int(trx.purge_config().max_purge_lag_delay),
        "innodb_deadlock_detect" => Some(VarValue::Bool(trx.locks.deadlock_detect())),
        "innodb_lock_schedule_algorithm" => {
            Some(VarValue::Str(trx.locks.schedule().as_str().to_string()))
        }
        "innodb_flush_log_at_trx_commit" => int(redo.flush_at_commit() as u64),
        "innodb_flush_log_at_timeout" => int(redo.flush_timeout_s()),
        "tpbed_log_fsync_us" => int(redo.fsync_us()),
        "tpbed_max_memory" => int(server.memory.max_memory()),
        "sync_binlog" => server.binlog.as_ref().map(|b| match b.flush_at_commit() {
            FlushAtCommit::Sync => VarValue::Int(b.sync_every_groups() as i64),
            _ => VarValue::Int(0),
        }),
        "general_log" => Some(VarValue::Bool(server.querylogs.general.is_on())),
        "slow_query_log" => Some(VarValue::Bool(server.querylogs.slow.is_on())),
        "general_log_file" => Some(VarValue::Str(server.querylogs.general.name())),
        "slow_query_log_file" => Some(VarValue::Str(server.querylogs.slow.name())),
        "log_output" => Some(VarValue::Str(server.querylogs.output())),
        "thread_cache_size" => match server.handler.get() {
            Some(Handler::PerConnection(h)) => int(u64::from(h.thread_cache_size())),
            _ => None,
        },
        "thread_pool_stall_limit" => pool(pool_core::PoolKnobs::stall_limit),
        "thread_pool_prio_kickup_timer" => pool(pool_core::PoolKnobs::prio_kickup_timer),
        "thread_pool_max_unused_threads" => pool(pool_core::PoolKnobs::max_unused_threads),
        "thread_pool_max_active_query_threads" => {
            pool(pool_core::PoolKnobs::max_active_query_threads)
        }
        "thread_pool_max_transactions_limit" => pool(pool_core::PoolKnobs::max_transactions_limit),
        "thread_pool_transaction_delay" => pool(pool_core::PoolKnobs::transaction_delay),
        "thread_pool_query_threads_per_group" => {
            pool(pool_core::PoolKnobs::query_threads_per_group)
        }
        "thread_pool_connection_report_interval" => {
            pool(pool_core::PoolKnobs::connection_report_interval)
        }
        "thread_pool_longrun_trx_limit" => pool(pool_core::PoolKnobs::longrun_trx_limit),
        "thread_pool_oversubscribe" => pool(pool_core::PoolKnobs::oversubscribe),
        "tpbed_thread_pool_time_slice" => pool(pool_core::PoolKnobs::time_slice),
        _ => None,
    }
}

/// A valid value other than the current global one, as an SQL literal.
fn other_value(name: &str, ty: VarType, now: &VarValue) -> String {
    match ty {
        VarType::Bool => if now.as_bool() { "OFF" } else { "ON" }.to_string(),
        VarType::Int { min, max } => {
            let n = now.as_int();
            match name {
                // 0 or 60..=600.
                "thread_pool_connection_report_interval" if n == 0 => "60".to_string(),
                _ if n < max => (n + 1).to_string(),
                _ => (n - 1).max(min).to_string(),
            }
        }
        VarType::Enum(names) => {
            let pick = names
                .iter()
                .find(|n| !n.eq_ignore_ascii_case(now.as_str()))
                .expect("an enum has two names");
            format!("'{pick}'")
        }
        VarType::Set(names) => {
            let pick = names
                .iter()
                .find(|n| !now.as_str().eq_ignore_ascii_case(n))
                .expect("a set has two names");
            format!("'{pick}'")
        }
        VarType::Seconds { .. } => {
            let secs: f64 = now.as_str().parse().expect("seconds");
            format!("{}", secs + 1.5)
        }
        VarType::Str => match name {
            "time_zone" => "'+01:00'".to_string(),
            "init_connect" => "'SET @tpbed_test = 1'".to_string(),
            n if n.starts_with("collation_") => "'utf8mb4_bin'".to_string(),
            n if n.starts_with("character_set_") => "'latin1'".to_string(),
            _ => "'tpbed_test_value'".to_string(),
        },
    }
}

fn root_session(server: &Arc<Server>) -> Context {
    let conn = Arc::new(ConnInfo::new(1, "127.0.0.1".into(), -1));
    let mut st = Context::new(Arc::clone(server.core()), conn);
    st.user = "root".into();
    st.account_host = "localhost".into();
    st.privileges = Privileges::all();
    st
}

/// Sets every dynamic variable of `server` (after starting its connection handler) and checks
/// where each value went; at least `want_hooked` must be owned by a subsystem.
fn walk(server: Arc<Server>, want_hooked: usize) {
    tpbed_server::listener::start_handler(&server).expect("handler starts");
    let mut st = root_session(&server);
    let vars = &server.vars;
    let mut hooked = 0;
    let mut copied = 0;
    for id in vars.sorted_ids() {
        let def = vars.def(id).clone();
        if !def.dynamic || def.scope == Scope::Session {
            continue;
        }
        let before = vars.global(id);
        let lit = other_value(def.name, def.ty, &before);
        let sql = format!("SET GLOBAL {} = {lit}", def.name);
        let out = tpbed_server::stmt::run_text(&mut st, &sql);
        assert!(
            out.iter().all(Result::is_ok),
            "{sql}: {:?}",
            out.iter().find_map(|r| r.as_ref().err())
        );
        let after = vars.global(id);
        assert_ne!(after, before, "{sql} changed nothing");
        match subsystem_value(&server, def.name) {
            Some(held) => {
                assert!(vars.has_hook(id), "{} has no on-set hook", def.name);
                assert_eq!(held, after, "{sql} did not reach its subsystem");
                hooked += 1;
            }
            None => {
                assert!(!vars.has_hook(id), "{}: hook without a read-back", def.name);
                if def.scope == Scope::Both {
                    let fresh = root_session(&server);
                    assert_eq!(fresh.vars.get(id), &after, "new sessions take {}", def.name);
                    copied += 1;
                } else {
                    assert!(
                        READ_AT_USE.contains(&def.name) || NOT_MODELLED.contains(&def.name),
                        "{}: a global variable with neither a hook nor a listed reader",
                        def.name
                    );
                }
            }
        }
    }
    assert!(hooked >= want_hooked, "{hooked} hooked variables reached");
    assert!(copied > 0);
}

#[test]
fn set_global_reaches_every_subsystem_one_thread_per_connection() {
    // Purge (3), locks (2), redo (3), the binary log (1), the thread cache (1), the memory
    // budget (1).
    walk(Server::from_config(&Config::default()).expect("server"), 11);
}

#[test]
fn set_global_reaches_every_subsystem_pool() {
    let args = vec!["--thread-handling=pool-of-threads".to_string()];
    // Purge (3), locks (2), redo (3), the binary log (1), the pool's dynamic knobs (9), the
    // memory budget (1).
    walk(
        Server::from_config(&parse_args(&args).expect("options")).expect("server"),
        19,
    );
}
