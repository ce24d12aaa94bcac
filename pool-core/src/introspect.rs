//! Introspection: snapshots of a pool for the performance_schema tables `tp_thread_group_state`,
//! `tp_thread_group_stats` and `tp_thread_state`. Invariant: a snapshot of one group is taken
//! under that group's mutex, so its fields agree with each other.

use crate::pool::ThreadPool;
use crate::session::Session;
use crate::stats::{GroupStateRow, GroupStatsRow, ThreadStateRow};
use crate::sync::lock;

impl<S: Session> ThreadPool<S> {
    /// `performance_schema.tp_thread_group_state`, the Admin group last.
    pub fn group_states(&self) -> Vec<GroupStateRow> {
        let knobs = &self.sh.knobs;
        let now = self.sh.clock.now();
        let algorithm = if self.sh.dedicated {
            "Dedicated Listeners"
        } else if self.sh.high_concurrency() {
            "High Concurrency"
        } else {
            "Low Concurrency"
        };
        self.sh
            .groups
            .iter()
            .map(|g| {
                let st = lock(&g.state);
                GroupStateRow {
                    tp_group_id: g.id as u32,
                    consumer_threads: st.consumers.len() as u32,
                    reserve_threads: st.reserves.len() as u32,
                    connect_thread_count: st.ch_threads as u32,
                    connection_count: st.connections as u32,
                    queued_queries: st.high.len() as u32,
                    queued_transactions: st.low.len() as u32,
                    stall_limit: knobs.stall_limit(),
                    prio_kickup_timer: knobs.prio_kickup_timer(),
                    algorithm,
                    thread_count: (st.query_threads + st.listener_threads + st.ch_threads) as u32,
                    active_thread_count: st.active as u32,
                    stalled_thread_count: st.stalled as u32,
                    waiting_thread_number: st.waiting.map(|w| w as u32),
                    oldest_queued: st
                        .low
                        .front()
                        .map(|q| now.saturating_sub(q.at).as_millis() as u64),
                    max_thread_ids_in_group: st.threads.len() as u32,
                    effective_max_transactions_limit: self.sh.group_share(g.id) as u32,
                    num_query_threads: knobs.query_threads_per_group(),
                    time_of_last_thread_creation: st.last_creation,
                    num_connect_handler_thread_in_sleep: st.ch_sleepers.len() as u32,
                    threads_bound_to_transaction: st.bound as u32,
                    query_threads_count: st.query_threads as u32,
                    time_of_earliest_con_expire: st.earliest_expire,
                    time_of_last_longrunning_trxs_check: st.longrun.suspended_stamp,
                }
            })
            .collect()
    }

    /// `performance_schema.tp_thread_group_stats`, the Admin group last, with tpbed's gauges
    /// (oldest event, threads by state) taken in the same snapshot.
    pub fn group_stats(&self) -> Vec<GroupStatsRow> {
        let now = self.sh.clock.now();
        self.sh
            .groups
            .iter()
            .map(|g| {
                let st = lock(&g.state);
                let mut row = st.counters;
                row.tp_group_id = g.id as u32;
                row.tpbed_oldest_event_age_ms = st
                    .oldest_queued_at()
                    .map(|at| now.saturating_sub(at).as_millis() as u64);
                for a in st
                    .threads
                    .iter()
                    .flatten()
                    .filter_map(|t| t.attached.as_ref())
                {
                    if a.yielded_at.is_some() {
                        row.tpbed_threads_yielded += 1;
                    } else if a.wait.is_some() {
                        row.tpbed_threads_waiting += 1;
                    } else {
                        row.tpbed_threads_running += 1;
                    }
                }
                row.tpbed_threads_parked = (st.consumers.len() + st.reserves.len()) as u64;
                row
            })
            .collect()
    }

    /// `performance_schema.tp_thread_state`: one row per live thread, by group.
    pub fn thread_states(&self) -> Vec<ThreadStateRow> {
        let now = self.sh.clock.now();
        let mut rows = Vec::new();
        for g in &self.sh.groups {
            let st = lock(&g.state);
            for (n, t) in st.threads.iter().enumerate() {
                let Some(t) = t else { continue };
                let a = t.attached.as_ref();
                rows.push(ThreadStateRow {
                    tp_group_id: g.id as u32,
                    tp_thread_number: n as u32,
                    process_count: a
                        .map(|a| (now.saturating_sub(a.attach_at).as_millis() / 10) as u64),
                    wait_type: a.and_then(|a| a.wait),
                    tp_thread_type: t.kind,
                    thread_id: t.os_tid,
                    time_of_attach: a.map(|a| a.attach_at),
                    marked_stalled: a.is_some_and(|a| a.marked_stalled),
                    state: t.state,
                    event_count: t.event_count,
                    accumulated_event_time: t.acc_event_time.as_micros() as u64,
                    exec_count: t.exec_count,
                    accumulated_exec_time: t.acc_exec_time.as_micros() as u64,
                });
            }
        }
        rows
    }
}
