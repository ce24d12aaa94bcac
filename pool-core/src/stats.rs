//! Snapshot types for introspection: one struct per performance_schema table
//! (`tp_thread_group_state`, `tp_thread_group_stats`, `tp_thread_state`), field for column,
//! plus the handler-wide [`HandlerStats`]. Invariant: each type holds values only, so a
//! snapshot taken under a group's mutex (introspect.rs) stays as consistent as it was taken.

use crate::wait::WaitKind;
use std::time::Duration;

/// Handler-wide counters behind MySQL's `Threads_*` status variables.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct HandlerStats {
    /// `Threads_created`: threads started to serve connections since start-up (pool: every
    /// worker, listener and connection-handler thread ever started).
    pub threads_created: u64,
    /// `Threads_cached`: idle threads in the thread cache (0 in the pool).
    pub threads_cached: u64,
    /// `Threads_connected`: open client connections (handshaking ones included).
    pub threads_connected: u64,
    /// Sessions inside `Session::run` right now (the handler's view of `Threads_running`).
    pub threads_running: u64,
    /// OS threads the handler owns right now.
    pub threads_alive: u64,
}

/// `TP_THREAD_TYPE` of `tp_thread_state`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ThreadKind {
    /// `QUERY_WORKER_THREAD`: executes statements (and polls when it is the waiting thread).
    QueryWorker,
    /// `LISTENER_WORKER_THREAD`: only polls (dedicated listeners).
    Listener,
    /// `CONNECTION_HANDLER_WORKER_THREAD`: authenticates new connections.
    ConnectionHandler,
}

impl ThreadKind {
    /// The column value MySQL shows.
    pub fn mysql_name(self) -> &'static str {
        match self {
            ThreadKind::QueryWorker => "QUERY_WORKER_THREAD",
            ThreadKind::Listener => "LISTENER_WORKER_THREAD",
            ThreadKind::ConnectionHandler => "CONNECTION_HANDLER_WORKER_THREAD",
        }
    }
}

/// `STATE` of `tp_thread_state`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ThreadState {
    /// `MANAGING`: between decisions, holding the group mutex.
    Managing,
    /// `POLLING`: the waiting thread, blocked in the poller.
    Polling,
    /// `PROCESSING_DIRECT`: executing an event it polled itself.
    ProcessingDirect,
    /// `PROCESSING_QUEUED`: executing an event taken from a queue.
    ProcessingQueued,
    /// `SLEEPING_CONSUMER`: idle, hot.
    SleepingConsumer,
    /// `SLEEPING_RESERVE`: idle, cold.
    SleepingReserve,
    /// `CH_PROCESSING`: a connection handler authenticating.
    ChProcessing,
    /// `CH_SLEEPING_TIMED`: an extra connection handler idle (exits after 60 s).
    ChSleepingTimed,
    /// `CH_SLEEPING_INDEFINITE`: the permanent connection handler idle.
    ChSleepingIndefinite,
}

impl ThreadState {
    /// The column value MySQL shows.
    pub fn mysql_name(self) -> &'static str {
        match self {
            ThreadState::Managing => "MANAGING",
            ThreadState::Polling => "POLLING",
            ThreadState::ProcessingDirect => "PROCESSING_DIRECT",
            ThreadState::ProcessingQueued => "PROCESSING_QUEUED",
            ThreadState::SleepingConsumer => "SLEEPING_CONSUMER",
            ThreadState::SleepingReserve => "SLEEPING_RESERVE",
            ThreadState::ChProcessing => "CH_PROCESSING",
            ThreadState::ChSleepingTimed => "CH_SLEEPING_TIMED",
            ThreadState::ChSleepingIndefinite => "CH_SLEEPING_INDEFINITE",
        }
    }
}

/// The `WAIT_TYPE` column value for a reported wait.
pub fn wait_type_name(kind: WaitKind) -> &'static str {
    match kind {
        WaitKind::RowLock => "ROW_LOCK",
        WaitKind::Sleep => "SLEEP",
        WaitKind::UserLock => "USER_LOCK",
        WaitKind::CommitFlush => "GROUP_COMMIT",
    }
}

/// One row of `performance_schema.tp_thread_group_state`. Times are on the pool clock
/// (`ThreadPool::clock_epoch` converts them to wall time).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GroupStateRow {
    /// TP_GROUP_ID (the Admin group is `size`, the last row).
    pub tp_group_id: u32,
    /// CONSUMER_THREADS: idle hot threads.
    pub consumer_threads: u32,
    /// RESERVE_THREADS: idle cold threads.
    pub reserve_threads: u32,
    /// CONNECT_THREAD_COUNT: connection-handler threads.
    pub connect_thread_count: u32,
    /// CONNECTION_COUNT: connections in the group.
    pub connection_count: u32,
    /// QUEUED_QUERIES: the high-priority queue length.
    pub queued_queries: u32,
    /// QUEUED_TRANSACTIONS: the low-priority queue length.
    pub queued_transactions: u32,
    /// STALL_LIMIT (10 ms units).
    pub stall_limit: u32,
    /// PRIO_KICKUP_TIMER (ms).
    pub prio_kickup_timer: u32,
    /// ALGORITHM: 'Low Concurrency', 'High Concurrency' or 'Dedicated Listeners'.
    pub algorithm: &'static str,
    /// THREAD_COUNT: threads of the group.
    pub thread_count: u32,
    /// ACTIVE_THREAD_COUNT: attached threads not in a reported wait.
    pub active_thread_count: u32,
    /// STALLED_THREAD_COUNT.
    pub stalled_thread_count: u32,
    /// WAITING_THREAD_NUMBER: the waiting (listener) thread's number, if any.
    pub waiting_thread_number: Option<u32>,
    /// OLDEST_QUEUED: age in ms of the low-priority head, if any.
    pub oldest_queued: Option<u64>,
    /// MAX_THREAD_IDS_IN_GROUP: thread-number slots used so far.
    pub max_thread_ids_in_group: u32,
    /// EFFECTIVE_MAX_TRANSACTIONS_LIMIT: the group's share (0 = none; always 0 for Admin).
    pub effective_max_transactions_limit: u32,
    /// NUM_QUERY_THREADS: `query_threads_per_group` as in force.
    pub num_query_threads: u32,
    /// TIME_OF_LAST_THREAD_CREATION.
    pub time_of_last_thread_creation: Option<Duration>,
    /// NUM_CONNECT_HANDLER_THREAD_IN_SLEEP.
    pub num_connect_handler_thread_in_sleep: u32,
    /// THREADS_BOUND_TO_TRANSACTION: threads inside event processing (bound or executing).
    pub threads_bound_to_transaction: u32,
    /// QUERY_THREADS_COUNT: query worker threads alive.
    pub query_threads_count: u32,
    /// TIME_OF_EARLIEST_CON_EXPIRE.
    pub time_of_earliest_con_expire: Option<Duration>,
    /// TIME_OF_LAST_LONGRUNNING_TRXS_CHECK: set while the long-running rule suspends the limit.
    pub time_of_last_longrunning_trxs_check: Option<Duration>,
}

/// Cumulative per-group counters: one row of `performance_schema.tp_thread_group_stats`, plus
/// tpbed's own counters (named `tpbed_*` when rendered).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct GroupStatsRow {
    /// TP_GROUP_ID.
    pub tp_group_id: u32,
    /// CONNECTIONS_STARTED.
    pub connections_started: u64,
    /// CONNECTIONS_CLOSED.
    pub connections_closed: u64,
    /// QUERIES_EXECUTED: `Session::run` calls completed.
    pub queries_executed: u64,
    /// QUERIES_QUEUED: events put on a queue (not executed directly).
    pub queries_queued: u64,
    /// THREADS_STARTED.
    pub threads_started: u64,
    /// PRIO_KICKUPS.
    pub prio_kickups: u64,
    /// STALLED_QUERIES_EXECUTED.
    pub stalled_queries_executed: u64,
    /// BECOME_CONSUMER_THREAD.
    pub become_consumer_thread: u64,
    /// BECOME_RESERVE_THREAD.
    pub become_reserve_thread: u64,
    /// BECOME_WAITING_THREAD.
    pub become_waiting_thread: u64,
    /// WAKE_THREAD_STALL_CHECKER.
    pub wake_thread_stall_checker: u64,
    /// SLEEP_WAITS.
    pub sleep_waits: u64,
    /// DISK_IO_WAITS (never reported by tpbed: storage is in memory).
    pub disk_io_waits: u64,
    /// ROW_LOCK_WAITS.
    pub row_lock_waits: u64,
    /// GLOBAL_LOCK_WAITS (not reported by tpbed).
    pub global_lock_waits: u64,
    /// META_DATA_LOCK_WAITS (not reported by tpbed).
    pub meta_data_lock_waits: u64,
    /// TABLE_LOCK_WAITS (not reported by tpbed).
    pub table_lock_waits: u64,
    /// USER_LOCK_WAITS.
    pub user_lock_waits: u64,
    /// BINLOG_WAITS (not reported by tpbed).
    pub binlog_waits: u64,
    /// GROUP_COMMIT_WAITS: commit-flush waits.
    pub group_commit_waits: u64,
    /// FSYNC_WAITS (not reported separately by tpbed: commit flushes count as group commit).
    pub fsync_waits: u64,
    /// Ours: waits the pool reported for `thread_pool_transaction_delay`.
    pub tpbed_trx_delay_waits: u64,
    /// Ours: blocking polls that returned at least one event (listener wake-ups).
    pub tpbed_listener_wakeups: u64,
    /// Ours: events executed directly by the waiting thread.
    pub tpbed_direct_executions: u64,
    /// Ours: events of this group run by another group's thread (`tpbed_thread_pool_steal`).
    pub tpbed_stolen: u64,
    /// Ours: idle connections closed at `wait_timeout`.
    pub tpbed_expired: u64,
    /// Ours: events taken from the high queue.
    pub tpbed_dequeued_high: u64,
    /// Ours: events taken from the low queue.
    pub tpbed_dequeued_low: u64,
    /// Ours: the time events taken from the high queue waited there, summed (µs).
    pub tpbed_queue_wait_high_us: u64,
    /// Ours: the time events taken from the low queue waited there, summed (µs).
    pub tpbed_queue_wait_low_us: u64,
    /// Ours: statements that gave their thread up at a safe point (cooperative yield).
    pub tpbed_yields: u64,
    /// Ours, a gauge: the age in ms of the oldest event in either queue, None when both are
    /// empty.
    pub tpbed_oldest_event_age_ms: Option<u64>,
    /// Ours, a gauge: attached threads running a statement (not in a reported wait, not
    /// yielded).
    pub tpbed_threads_running: u64,
    /// Ours, a gauge: attached threads inside a reported wait.
    pub tpbed_threads_waiting: u64,
    /// Ours, a gauge: attached threads whose statement yielded and waits to resume.
    pub tpbed_threads_yielded: u64,
    /// Ours, a gauge: query threads asleep as consumers or reserves.
    pub tpbed_threads_parked: u64,
}

/// One row of `performance_schema.tp_thread_state`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ThreadStateRow {
    /// TP_GROUP_ID.
    pub tp_group_id: u32,
    /// TP_THREAD_NUMBER (per group).
    pub tp_thread_number: u32,
    /// PROCESS_COUNT: centiseconds since attach, None when idle.
    pub process_count: Option<u64>,
    /// WAIT_TYPE: the reported wait in progress.
    pub wait_type: Option<WaitKind>,
    /// TP_THREAD_TYPE.
    pub tp_thread_type: ThreadKind,
    /// THREAD_ID: the OS thread id (tpbed has no performance_schema thread ids of its own).
    pub thread_id: i64,
    /// TIME_OF_ATTACH on the pool clock.
    pub time_of_attach: Option<Duration>,
    /// MARKED_STALLED.
    pub marked_stalled: bool,
    /// STATE.
    pub state: ThreadState,
    /// EVENT_COUNT: events (attachments) processed.
    pub event_count: u64,
    /// ACCUMULATED_EVENT_TIME (µs attached).
    pub accumulated_event_time: u64,
    /// EXEC_COUNT: statements (`Session::run` calls) executed.
    pub exec_count: u64,
    /// ACCUMULATED_EXEC_TIME (µs inside `Session::run`).
    pub accumulated_exec_time: u64,
}
