//! Server gauges: parsing `SHOW GLOBAL STATUS` / `SHOW GLOBAL VARIABLES` (sampled by the runner
//! on a side connection each interval), and counter deltas over the measured window.

use std::collections::BTreeMap;

use crate::machine::ProcSample;

/// Status variables that are levels, not counters (reported as values, not deltas).
pub(crate) const LEVELS: &[&str] = &[
    "Threads_running",
    "Threads_connected",
    "Threads_cached",
    "Max_used_connections",
    "Open_tables",
    "Open_files",
    "Innodb_row_lock_current_waits",
    "Innodb_row_lock_time_max",
    "Innodb_row_lock_time_avg",
    "Threadpool_threads",
    "Threadpool_idle_threads",
    "Uptime",
    "Uptime_since_flush_status",
    "Innodb_buffer_pool_pages_data",
    "Innodb_buffer_pool_pages_free",
    "Innodb_history_list_length",
    "Memory_used",
    "Prepared_stmt_count",
    "Tpbed_thread_pool_oldest_event_age_ms",
    "Tpbed_thread_pool_threads_running",
    "Tpbed_thread_pool_threads_waiting",
    "Tpbed_thread_pool_threads_yielded",
    "Tpbed_thread_pool_threads_parked",
];

/// The pool's status variables sampled each interval besides the counters' before/after
/// (levels, not counters), and the metric each one's largest sample becomes.
pub(crate) const POOL_LEVELS: &[(&str, &str)] = &[
    (
        "Tpbed_thread_pool_oldest_event_age_ms",
        "tp_oldest_event_age_ms_max",
    ),
    (
        "Tpbed_thread_pool_threads_waiting",
        "tp_threads_waiting_max",
    ),
];

/// The status values shown on each interval line.
pub(crate) const SHOWN: &[&str] = &["Threads_running", "Threads_connected"];

/// Parses the rows of `SHOW GLOBAL STATUS` into numbers (non-numeric values dropped).
pub(crate) fn numeric(rows: &[Vec<Option<String>>]) -> BTreeMap<String, f64> {
    rows.iter()
        .filter_map(|r| {
            let name = r.first()?.as_ref()?;
            let v = r.get(1)?.as_ref()?.parse::<f64>().ok()?;
            Some((name.clone(), v))
        })
        .collect()
}

/// Text rows (name, value) of `SHOW GLOBAL VARIABLES`.
pub(crate) fn pairs(rows: &[Vec<Option<String>>]) -> Vec<(String, String)> {
    rows.iter()
        .filter_map(|r| {
            Some((
                r.first()?.clone()?,
                r.get(1)?.clone().unwrap_or_else(|| "NULL".into()),
            ))
        })
        .collect()
}

/// Counter deltas `after - before` (levels: the `after` value).
pub(crate) fn deltas(
    before: &BTreeMap<String, f64>,
    after: &BTreeMap<String, f64>,
) -> Vec<(String, f64, bool)> {
    after
        .iter()
        .map(|(k, v)| {
            let level = LEVELS.contains(&k.as_str());
            let d = if level {
                *v
            } else {
                v - before.get(k).copied().unwrap_or(0.0)
            };
            (k.clone(), d, level)
        })
        .collect()
}

/// What the report says about the server.
#[derive(Debug, Clone, Default)]
pub(crate) struct ServerInfo {
    /// SHOW GLOBAL VARIABLES.
    pub(crate) variables: Vec<(String, String)>,
    /// SHOW GLOBAL STATUS before the measured interval.
    pub(crate) status_before: BTreeMap<String, f64>,
    /// SHOW GLOBAL STATUS after it.
    pub(crate) status_after: BTreeMap<String, f64>,
    /// --server-pid, its CPU placement, and /proc before/after.
    pub(crate) pid: Option<u32>,
    /// Cpus_allowed_list of the server process.
    pub(crate) cpus: String,
    /// /proc sample before.
    pub(crate) proc_before: Option<ProcSample>,
    /// /proc sample after.
    pub(crate) proc_after: Option<ProcSample>,
    /// Max OS threads / RSS seen while sampling.
    pub(crate) proc_max: Option<ProcSample>,
    /// The server's system calls and context switches over the measured window (perf), or
    /// why they could not be counted; `None` without --server-pid.
    pub(crate) kernel: Option<Result<crate::kernel_counts::KernelCounts, String>>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn deltas_keep_levels_and_subtract_counters() {
        let row = |k: &str, v: &str| vec![Some(k.to_string()), Some(v.to_string())];
        let before = numeric(&[
            row("Questions", "100"),
            row("Threads_running", "9"),
            row("Version", "x"),
        ]);
        let after = numeric(&[row("Questions", "250"), row("Threads_running", "3")]);
        let d = deltas(&before, &after);
        assert!(d.contains(&("Questions".into(), 150.0, false)));
        assert!(d.contains(&("Threads_running".into(), 3.0, true)));
        assert!(!before.contains_key("Version"));
    }
}
