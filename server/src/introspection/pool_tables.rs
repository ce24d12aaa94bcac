//! The thread pool's introspection tables, as MySQL's plugin has them:
//! `performance_schema.tp_thread_group_state`, `tp_thread_group_stats` and `tp_thread_state`
//! (the Admin group is the last group), and `information_schema.PLUGINS`, which lists
//! `thread_pool` ACTIVE while the pool runs.

use std::time::Duration;

use crate::introspection::vtables::{VType, VirtualTable};
use crate::introspection::ServerView;
use crate::value::Value;

/// The tables that exist in `performance_schema` while the pool is loaded.
pub const PERFORMANCE_SCHEMA: &[&'static dyn VirtualTable] =
    &[&GroupState, &GroupStats, &ThreadStates];

fn u(v: impl Into<u64>) -> Value {
    Value::UInt(v.into())
}

fn opt_u(v: Option<u64>) -> Value {
    v.map_or(Value::Null, Value::UInt)
}

/// A pool-clock instant as microseconds since the epoch (MySQL shows these as timestamps).
fn when(server: &dyn ServerView, d: Option<Duration>) -> Value {
    let Some(p) = server.pool() else {
        return Value::Null;
    };
    match d {
        None => Value::Null,
        Some(d) => {
            let at = p.clock_epoch() + d;
            let us = at
                .duration_since(std::time::UNIX_EPOCH)
                .map(|x| x.as_micros() as i64)
                .unwrap_or(0);
            Value::DateTime(crate::time::datetime_from_micros(us))
        }
    }
}

/// `performance_schema.tp_thread_group_state`: one row per group, the Admin group last.
#[derive(Debug)]
pub struct GroupState;

impl VirtualTable for GroupState {
    fn name(&self) -> &'static str {
        "tp_thread_group_state"
    }
    fn columns(&self) -> &'static [(&'static str, VType)] {
        use VType::*;
        &[
            ("TP_GROUP_ID", UInt),
            ("CONSUMER_THREADS", UInt),
            ("RESERVE_THREADS", UInt),
            ("CONNECT_THREAD_COUNT", UInt),
            ("CONNECTION_COUNT", UInt),
            ("QUERY_THREADS_COUNT", UInt),
            ("QUEUED_QUERIES", UInt),
            ("QUEUED_TRANSACTIONS", UInt),
            ("STALL_LIMIT", UInt),
            ("PRIO_KICKUP_TIMER", UInt),
            ("ALGORITHM", Text),
            ("THREAD_COUNT", UInt),
            ("ACTIVE_THREAD_COUNT", UInt),
            ("STALLED_THREAD_COUNT", UInt),
            ("WAITING_THREAD_NUMBER", UInt),
            ("OLDEST_QUEUED", UInt),
            ("MAX_THREAD_IDS_IN_GROUP", UInt),
            ("EFFECTIVE_MAX_TRANSACTIONS_LIMIT", UInt),
            ("NUM_QUERY_THREADS", UInt),
            ("TIME_OF_LAST_THREAD_CREATION", Text),
            ("NUM_CONNECT_HANDLER_THREAD_IN_SLEEP", UInt),
            ("THREADS_BOUND_TO_TRANSACTION", UInt),
            ("TIME_OF_EARLIEST_CON_EXPIRE", Text),
            ("TIME_OF_LAST_LONGRUNNING_TRXS_CHECK", Text),
        ]
    }
    fn rows(&self, server: &dyn ServerView) -> Vec<Vec<Value>> {
        let Some(p) = server.pool() else {
            return Vec::new();
        };
        p.group_states()
            .into_iter()
            .map(|g| {
                vec![
                    u(g.tp_group_id),
                    u(g.consumer_threads),
                    u(g.reserve_threads),
                    u(g.connect_thread_count),
                    u(g.connection_count),
                    u(g.query_threads_count),
                    u(g.queued_queries),
                    u(g.queued_transactions),
                    u(g.stall_limit),
                    u(g.prio_kickup_timer),
                    Value::str(g.algorithm),
                    u(g.thread_count),
                    u(g.active_thread_count),
                    u(g.stalled_thread_count),
                    opt_u(g.waiting_thread_number.map(u64::from)),
                    opt_u(g.oldest_queued),
                    u(g.max_thread_ids_in_group),
                    u(g.effective_max_transactions_limit),
                    u(g.num_query_threads),
                    when(server, g.time_of_last_thread_creation),
                    u(g.num_connect_handler_thread_in_sleep),
                    u(g.threads_bound_to_transaction),
                    when(server, g.time_of_earliest_con_expire),
                    when(server, g.time_of_last_longrunning_trxs_check),
                ]
            })
            .collect()
    }
}

/// `performance_schema.tp_thread_group_stats`: cumulative counters per group, plus tpbed's
/// own (named `TPBED_*`, not MySQL's): its counters, the queue waits by queue, and the gauges
/// of the scheduling policy's state (oldest queued event, threads by state).
#[derive(Debug)]
pub struct GroupStats;

impl VirtualTable for GroupStats {
    fn name(&self) -> &'static str {
        "tp_thread_group_stats"
    }
    fn columns(&self) -> &'static [(&'static str, VType)] {
        use VType::*;
        &[
            ("TP_GROUP_ID", UInt),
            ("CONNECTIONS_STARTED", UInt),
            ("CONNECTIONS_CLOSED", UInt),
            ("QUERIES_EXECUTED", UInt),
            ("QUERIES_QUEUED", UInt),
            ("THREADS_STARTED", UInt),
            ("PRIO_KICKUPS", UInt),
            ("STALLED_QUERIES_EXECUTED", UInt),
            ("BECOME_CONSUMER_THREAD", UInt),
            ("BECOME_RESERVE_THREAD", UInt),
            ("BECOME_WAITING_THREAD", UInt),
            ("WAKE_THREAD_STALL_CHECKER", UInt),
            ("SLEEP_WAITS", UInt),
            ("DISK_IO_WAITS", UInt),
            ("ROW_LOCK_WAITS", UInt),
            ("GLOBAL_LOCK_WAITS", UInt),
            ("META_DATA_LOCK_WAITS", UInt),
            ("TABLE_LOCK_WAITS", UInt),
            ("USER_LOCK_WAITS", UInt),
            ("BINLOG_WAITS", UInt),
            ("GROUP_COMMIT_WAITS", UInt),
            ("FSYNC_WAITS", UInt),
            ("TPBED_TRX_DELAY_WAITS", UInt),
            ("TPBED_LISTENER_WAKEUPS", UInt),
            ("TPBED_DIRECT_EXECUTIONS", UInt),
            ("TPBED_STOLEN", UInt),
            ("TPBED_EXPIRED", UInt),
            ("TPBED_QUEUE_WAITS_HIGH", UInt),
            ("TPBED_QUEUE_WAITS_LOW", UInt),
            ("TPBED_QUEUE_WAIT_HIGH_US", UInt),
            ("TPBED_QUEUE_WAIT_LOW_US", UInt),
            ("TPBED_OLDEST_EVENT_AGE_MS", UInt),
            ("TPBED_YIELDS", UInt),
            ("TPBED_THREADS_RUNNING", UInt),
            ("TPBED_THREADS_WAITING", UInt),
            ("TPBED_THREADS_YIELDED", UInt),
            ("TPBED_THREADS_PARKED", UInt),
        ]
    }
    fn rows(&self, server: &dyn ServerView) -> Vec<Vec<Value>> {
        let Some(p) = server.pool() else {
            return Vec::new();
        };
        p.group_stats()
            .into_iter()
            .map(|g| {
                vec![
                    u(g.tp_group_id),
                    u(g.connections_started),
                    u(g.connections_closed),
                    u(g.queries_executed),
                    u(g.queries_queued),
                    u(g.threads_started),
                    u(g.prio_kickups),
                    u(g.stalled_queries_executed),
                    u(g.become_consumer_thread),
                    u(g.become_reserve_thread),
                    u(g.become_waiting_thread),
                    u(g.wake_thread_stall_checker),
                    u(g.sleep_waits),
                    u(g.disk_io_waits),
                    u(g.row_lock_waits),
                    u(g.global_lock_waits),
                    u(g.meta_data_lock_waits),
                    u(g.table_lock_waits),
                    u(g.user_lock_waits),
                    u(g.binlog_waits),
                    u(g.group_commit_waits),
                    u(g.fsync_waits),
                    u(g.tpbed_trx_delay_waits),
                    u(g.tpbed_listener_wakeups),
                    u(g.tpbed_direct_executions),
                    u(g.tpbed_stolen),
                    u(g.tpbed_expired),
                    u(g.tpbed_dequeued_high),
                    u(g.tpbed_dequeued_low),
                    u(g.tpbed_queue_wait_high_us),
                    u(g.tpbed_queue_wait_low_us),
                    opt_u(g.tpbed_oldest_event_age_ms),
                    u(g.tpbed_yields),
                    u(g.tpbed_threads_running),
                    u(g.tpbed_threads_waiting),
                    u(g.tpbed_threads_yielded),
                    u(g.tpbed_threads_parked),
                ]
            })
            .collect()
    }
}

/// `information_schema.TP_THREAD_GROUP_STATS`: MySQL's deprecated information_schema copy of
/// [`GroupStats`], same columns and rows (tpbed's `TPBED_*` included).
#[derive(Debug)]
pub struct GroupStatsInfoSchema;

impl VirtualTable for GroupStatsInfoSchema {
    fn name(&self) -> &'static str {
        "TP_THREAD_GROUP_STATS"
    }
    fn columns(&self) -> &'static [(&'static str, VType)] {
        GroupStats.columns()
    }
    fn rows(&self, server: &dyn ServerView) -> Vec<Vec<Value>> {
        GroupStats.rows(server)
    }
}

/// `performance_schema.tp_thread_state`: one row per pool thread.
#[derive(Debug)]
pub struct ThreadStates;

impl VirtualTable for ThreadStates {
    fn name(&self) -> &'static str {
        "tp_thread_state"
    }
    fn columns(&self) -> &'static [(&'static str, VType)] {
        use VType::*;
        &[
            ("TP_GROUP_ID", UInt),
            ("TP_THREAD_NUMBER", UInt),
            ("PROCESS_COUNT", UInt),
            ("WAIT_TYPE", Text),
            ("TP_THREAD_TYPE", Text),
            ("THREAD_ID", UInt),
            ("TIME_OF_ATTACH", Text),
            ("MARKED_STALLED", UInt),
            ("STATE", Text),
            ("EVENT_COUNT", UInt),
            ("ACCUMULATED_EVENT_TIME", UInt),
            ("EXEC_COUNT", UInt),
            ("ACCUMULATED_EXEC_TIME", UInt),
        ]
    }
    fn rows(&self, server: &dyn ServerView) -> Vec<Vec<Value>> {
        let Some(p) = server.pool() else {
            return Vec::new();
        };
        p.thread_states()
            .into_iter()
            .map(|t| {
                vec![
                    u(t.tp_group_id),
                    u(t.tp_thread_number),
                    opt_u(t.process_count),
                    t.wait_type.map_or(Value::Null, |w| {
                        Value::str(pool_core::stats::wait_type_name(w))
                    }),
                    Value::str(t.tp_thread_type.mysql_name()),
                    Value::UInt(t.thread_id.max(0) as u64),
                    when(server, t.time_of_attach),
                    u(u64::from(t.marked_stalled)),
                    Value::str(t.state.mysql_name()),
                    u(t.event_count),
                    u(t.accumulated_event_time),
                    u(t.exec_count),
                    u(t.accumulated_exec_time),
                ]
            })
            .collect()
    }
}

/// `information_schema.PLUGINS`: the storage engine and, in pool mode, `thread_pool`.
#[derive(Debug)]
pub struct Plugins;

impl VirtualTable for Plugins {
    fn name(&self) -> &'static str {
        "PLUGINS"
    }
    fn columns(&self) -> &'static [(&'static str, VType)] {
        use VType::*;
        &[
            ("PLUGIN_NAME", Text),
            ("PLUGIN_VERSION", Text),
            ("PLUGIN_STATUS", Text),
            ("PLUGIN_TYPE", Text),
            ("PLUGIN_LIBRARY", Text),
            ("PLUGIN_AUTHOR", Text),
            ("PLUGIN_DESCRIPTION", Text),
            ("PLUGIN_LICENSE", Text),
            ("LOAD_OPTION", Text),
        ]
    }
    fn rows(&self, server: &dyn ServerView) -> Vec<Vec<Value>> {
        let row = |name: &str, ty: &str, lib: Value, desc: &str| {
            vec![
                Value::str(name),
                Value::str("1.0"),
                Value::str("ACTIVE"),
                Value::str(ty),
                lib,
                Value::str("tpbed"),
                Value::str(desc),
                Value::str("MIT OR Apache-2.0"),
                Value::str("ON"),
            ]
        };
        let mut rows = vec![
            row(
                "mysql_native_password",
                "AUTHENTICATION",
                Value::Null,
                "Native MySQL authentication",
            ),
            row(
                "caching_sha2_password",
                "AUTHENTICATION",
                Value::Null,
                "Caching sha2 authentication (fast path)",
            ),
            row(
                "InnoDB",
                "STORAGE ENGINE",
                Value::Null,
                "tpbed's in-memory engine with InnoDB's locking",
            ),
        ];
        if server.pool().is_some() {
            rows.push(row(
                "thread_pool",
                "DAEMON",
                Value::str("thread_pool.so"),
                "Thread pool (pool-core)",
            ));
        }
        rows
    }
}
