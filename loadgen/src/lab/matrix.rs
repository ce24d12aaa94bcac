//! Runs a matrix: for each pass, each configuration in turn (A B A B), each value of the varied
//! option, one run of the configuration's workload (`tpbed-load queue`, or a sysbench script
//! by tpbed-load's client or the sysbench binary) against the target; server settings set
//! globally, or by restarting a server the lab started (in the target flavour's own names and
//! units). Every cell's metrics become measurements `CONFIG.METRIC@VALUE`.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::sync::Arc;

use clap::Parser;

use crate::conn::WireFactory;
use crate::extra::MixedArgs;
use crate::kernel_counts::KernelCounts;
use crate::lab::knobs::for_flavour;
use crate::lab::spec::{value_text, Config, Matrix};
use crate::lab::sysbench_client;
use crate::lab::target::{check_flags, plan_settings, sql_value, Live, SettingsPlan};
use crate::lab::verdict::{median, missing, record, CellMetrics, Measured, Measurements};
use crate::options::SysbenchArgs;
use crate::plot::Series;
use crate::queue::QueueArgs;
use crate::report::Report;
use crate::tpcc::TpccArgs;

/// What a matrix produced on one target.
#[derive(Debug, Default)]
pub(crate) struct MatrixOut {
    /// Every cell's metrics.
    pub(crate) m: Measurements,
    /// The table (Markdown): rows are values, columns configuration x column.
    pub(crate) table: String,
    /// Lines to plot: (metric, series per configuration).
    pub(crate) plots: Vec<(String, Vec<Series>)>,
    /// What happened along the way (restarts, settings, failed cells).
    pub(crate) notes: Vec<String>,
    /// Settings the lab changed, per configuration.
    pub(crate) changed: Vec<String>,
}

/// The metrics every cell records, whatever its workload.
pub(crate) const METRICS: &[(&str, &str)] = &[
    ("qps", "statements per second"),
    ("tps", "events (transactions) per second"),
    ("avg_ms", "mean event latency"),
    ("p95_ms", "95th percentile event latency"),
    ("p99_ms", "99th percentile event latency"),
    ("max_ms", "maximum event latency"),
    ("errors", "ignored errors (the event was retried)"),
    (
        "threads_running_max",
        "largest Threads_running sampled each second",
    ),
    (
        "os_threads_max",
        "largest OS thread count of the server (/proc)",
    ),
    (
        "pool_ch_threads_max",
        "largest count of the server's pool connection-handler threads (tpbed's thread names in /proc)",
    ),
    (
        "rss_mb_max",
        "largest resident memory of the server in MiB (/proc)",
    ),
    ("row_lock_waits", "Innodb_row_lock_waits over the run"),
    ("fsyncs", "Innodb_os_log_fsyncs over the run"),
    (
        "client_cpu_us_per_query",
        "the client's CPU time (user + system) per statement",
    ),
    (
        "server_cpu_us_per_query",
        "the server's CPU time per statement (/proc; servers the lab started)",
    ),
    (
        "server_syscalls_per_query",
        "the server's system calls per statement (perf's raw_syscalls:sys_enter; servers the lab started)",
    ),
    (
        "server_ctx_switches_per_query",
        "the server's context switches per statement (perf; servers the lab started)",
    ),
    (
        "tp_queue_waits_high",
        "events taken from the pool's high-priority queues over the run (Tpbed_thread_pool_queue_waits_high; tpbed's pool only)",
    ),
    (
        "tp_queue_waits_low",
        "events taken from the pool's low-priority queues over the run (Tpbed_thread_pool_queue_waits_low)",
    ),
    (
        "tp_queue_wait_high_avg_us",
        "mean time an event taken from a high queue waited there (Tpbed_thread_pool_queue_wait_high_us / queue_waits_high)",
    ),
    (
        "tp_queue_wait_low_avg_us",
        "mean time an event taken from a low queue waited there (Tpbed_thread_pool_queue_wait_low_us / queue_waits_low)",
    ),
    (
        "tp_oldest_event_age_ms_max",
        "largest age of the oldest queued event sampled each second (Tpbed_thread_pool_oldest_event_age_ms)",
    ),
    (
        "tp_kickups",
        "low-queue events kicked up to the high queue over the run (Tpbed_thread_pool_kickups)",
    ),
    (
        "tp_stalls",
        "statements the stall checker marked stalled over the run (Tpbed_thread_pool_stalls)",
    ),
    (
        "tp_yields",
        "cooperative yields over the run (Tpbed_thread_pool_yields)",
    ),
    (
        "tp_threads_waiting_max",
        "largest count of pool threads in a reported wait, sampled each second (Tpbed_thread_pool_threads_waiting)",
    ),
];

/// The metrics a cell of `workload` records: every cell's, then the workload's own.
pub(crate) fn metric_keys(workload: &str) -> Vec<(String, String)> {
    let mut keys: Vec<(String, String)> = METRICS
        .iter()
        .map(|(k, what)| (k.to_string(), what.to_string()))
        .collect();
    match workload {
        "queue" => keys.extend(crate::queue::metric_keys()),
        "tpcc" => keys.extend(crate::tpcc::metric_keys()),
        "mixed" => keys.extend(crate::extra::metric_keys()),
        _ => {}
    }
    keys
}

/// Why a pool counter is missing: tpbed's pool counters exist only while its pool runs.
fn no_pool(name: &str) -> String {
    format!(
        "the server has no status variable {name} (tpbed's own pool counter: only tpbed-server with thread_handling=pool-of-threads has it)"
    )
}

/// The pool's counters over the run: deltas, queue-wait means, and the largest samples of
/// its levels; each missing with why on a server without tpbed's pool.
fn pool_metrics(r: &Report) -> CellMetrics {
    let d = |name: &str| delta(r, name).map_err(|_| no_pool(name));
    let avg = |sum: &str, n: &str, queue: &str| {
        let (s, n) = (d(sum)?, d(n)?);
        if n > 0.0 {
            Ok(s / n)
        } else {
            Err(format!("no event was taken from a {queue} queue"))
        }
    };
    let mut out: CellMetrics = vec![
        (
            "tp_queue_waits_high".into(),
            d("Tpbed_thread_pool_queue_waits_high"),
        ),
        (
            "tp_queue_waits_low".into(),
            d("Tpbed_thread_pool_queue_waits_low"),
        ),
        (
            "tp_queue_wait_high_avg_us".into(),
            avg(
                "Tpbed_thread_pool_queue_wait_high_us",
                "Tpbed_thread_pool_queue_waits_high",
                "high",
            ),
        ),
        (
            "tp_queue_wait_low_avg_us".into(),
            avg(
                "Tpbed_thread_pool_queue_wait_low_us",
                "Tpbed_thread_pool_queue_waits_low",
                "low",
            ),
        ),
        ("tp_kickups".into(), d("Tpbed_thread_pool_kickups")),
        ("tp_stalls".into(), d("Tpbed_thread_pool_stalls")),
        ("tp_yields".into(), d("Tpbed_thread_pool_yields")),
    ];
    for (var, key) in crate::gauges::POOL_LEVELS {
        let max = r
            .intervals
            .iter()
            .flat_map(|s| s.gauges.iter())
            .filter(|(k, _)| k == var)
            .map(|(_, v)| *v)
            .chain(r.server.status_after.get(*var).copied())
            .reduce(f64::max)
            .ok_or_else(|| no_pool(var));
        out.push((key.to_string(), max));
    }
    out
}

fn delta(r: &Report, name: &str) -> Result<f64, String> {
    match (
        r.server.status_after.get(name),
        r.server.status_before.get(name),
    ) {
        (Some(a), Some(b)) => Ok(a - b),
        _ => Err(format!("the server has no status variable {name}")),
    }
}

/// `secs` of CPU per statement of the run, in µs.
fn per_query(r: &Report, secs: f64) -> Result<f64, String> {
    let queries = r.qps() * r.secs;
    if queries > 0.0 {
        Ok(secs * 1e6 / queries)
    } else {
        Err("no statement completed".into())
    }
}

/// A kernel count of the server per statement of the run.
fn kernel_per_query(r: &Report, count: impl Fn(&KernelCounts) -> f64) -> Result<f64, String> {
    match &r.server.kernel {
        Some(Ok(k)) => per_query(r, count(k) / 1e6),
        Some(Err(e)) => Err(e.clone()),
        None => Err("the server was not started by the lab (no PID to count)".into()),
    }
}

/// A cell's metrics from its report's typed metrics: every cell's, then what `workload`
/// adds; a key the workload should give but did not is missing, with why.
pub(crate) fn metrics(r: &Report, workload: &str) -> CellMetrics {
    let m = &r.metrics;
    let l = &m.latency;
    let no_pid =
        || Err::<f64, String>("the server was not started by the lab (no PID for /proc)".into());
    let tr = r
        .intervals
        .iter()
        .flat_map(|s| s.gauges.iter())
        .filter(|(k, _)| k == "Threads_running")
        .map(|(_, v)| *v)
        .reduce(f64::max)
        .ok_or_else(|| "no Threads_running sample".to_string());
    let common = [
        ("qps", Ok(m.qps)),
        ("tps", Ok(m.tps)),
        ("avg_ms", Ok(l.avg)),
        ("p95_ms", Ok(l.p95)),
        ("p99_ms", Ok(l.p99)),
        ("max_ms", Ok(l.max)),
        ("errors", Ok(m.errors.values().sum::<u64>() as f64)),
        ("threads_running_max", tr),
        (
            "os_threads_max",
            r.server
                .proc_max
                .as_ref()
                .map_or_else(no_pid, |p| Ok(p.threads as f64)),
        ),
        (
            "pool_ch_threads_max",
            r.server.proc_max.as_ref().map_or_else(no_pid, |p| {
                p.pool_ch_threads.map(|n| n as f64).ok_or_else(|| {
                    "no thread of the server has a tpbed pool thread name".to_string()
                })
            }),
        ),
        (
            "rss_mb_max",
            r.server
                .proc_max
                .as_ref()
                .map_or_else(no_pid, |p| Ok(p.rss_kb as f64 / 1024.0)),
        ),
        ("row_lock_waits", delta(r, "Innodb_row_lock_waits")),
        ("fsyncs", delta(r, "Innodb_os_log_fsyncs")),
        ("client_cpu_us_per_query", per_query(r, r.client_cpu_secs)),
        (
            "server_cpu_us_per_query",
            match (&r.server.proc_before, &r.server.proc_after) {
                (Some(a), Some(b)) => per_query(r, b.cpu_secs - a.cpu_secs),
                _ => no_pid(),
            },
        ),
        (
            "server_syscalls_per_query",
            kernel_per_query(r, |k| k.syscalls),
        ),
        (
            "server_ctx_switches_per_query",
            kernel_per_query(r, |k| k.context_switches),
        ),
    ];
    let mut out: CellMetrics = common
        .into_iter()
        .map(|(k, v)| (k.to_string(), v))
        .collect();
    out.extend(pool_metrics(r));
    out.extend(m.own(r.secs));
    for (key, _) in metric_keys(workload) {
        if !out.iter().any(|(k, _)| *k == key) {
            out.push((
                key,
                Err(format!("the {workload} workload did not report it")),
            ));
        }
    }
    out
}

/// The command line of one cell, as `tpbed-load` would take it.
pub(crate) fn cell_args(mx: &Matrix, cfg: &Config, value: u64) -> Vec<String> {
    let mut opts: BTreeMap<String, String> = mx
        .options
        .iter()
        .map(|(k, v)| (k.clone(), value_text(v)))
        .collect();
    for (k, v) in &cfg.options {
        opts.insert(k.clone(), value_text(v));
    }
    opts.insert(mx.vary.clone(), value.to_string());
    let mut args = vec!["tpbed-load".to_string()];
    let workload = cfg.workload(mx);
    if workload == "queue" {
        args.push("queue".into());
    } else if workload == "tpcc" {
        args.push("tpcc".into());
        args.push("run".into());
    } else if workload == "mixed" {
        args.push("mixed".into());
    } else {
        args.push("run".into());
        args.push(format!("--workload={workload}"));
    }
    for (k, v) in opts {
        if v == "true" {
            args.push(format!("--{k}"));
        } else {
            args.push(format!("--{k}={v}"));
        }
    }
    args
}

/// Runs the matrix on `live`.
pub(crate) fn run(
    mx: &Matrix,
    base_settings: &BTreeMap<String, String>,
    live: &mut Live,
    passes: usize,
    wires: &Arc<WireFactory>,
    tick: &dyn Fn(&str),
) -> MatrixOut {
    let mut out = MatrixOut::default();
    let configs: Vec<Config> = if mx.config.is_empty() {
        vec![Config {
            name: "base".into(),
            options: BTreeMap::new(),
            settings: BTreeMap::new(),
            workload: None,
            client: None,
        }]
    } else {
        mx.config.clone()
    };
    let mut prepared = false;
    let mut originals: BTreeMap<String, String> = BTreeMap::new();
    for pass in 1..=passes {
        for cfg in &configs {
            let mut settings = base_settings.clone();
            for (k, v) in &cfg.settings {
                settings.insert(k.clone(), value_text(v));
            }
            let fail_all = |out: &mut MatrixOut, why: &str| {
                for v in &mx.values {
                    for (name, _) in metric_keys(cfg.workload(mx)) {
                        missing(&mut out.m, &format!("{}.{name}@{v}", cfg.name), why);
                    }
                    tick(&format!("{} {}={v}", cfg.name, mx.vary));
                }
            };
            // put back what the previous configuration set globally, so this one is planned
            // against the server's own values (not the last configuration's)
            if !originals.is_empty() {
                restore_globals(live, &originals);
            }
            let planned =
                for_flavour(&settings, live.flavour).and_then(|(settings, translated)| {
                    if pass == 1 {
                        out.notes
                            .extend(translated.into_iter().map(|t| format!("{}: {t}", cfg.name)));
                    }
                    plan_settings(live, &settings, "GLOBAL")
                });
            let plan = match planned {
                Ok(p) => p,
                Err(why) => {
                    fail_all(&mut out, &why);
                    continue;
                }
            };
            if plan.flags != live.flags {
                if !live.restartable() {
                    let why = format!(
                        "{} needs a restart and the target was not started by the lab",
                        plan.flags
                            .iter()
                            .map(|(k, v)| format!("{k}={v}"))
                            .collect::<Vec<_>>()
                            .join(", ")
                    );
                    fail_all(&mut out, &why);
                    continue;
                }
                if let Err(e) = live.restart(plan.flags.clone()) {
                    fail_all(&mut out, &format!("restart failed: {e}"));
                    continue;
                }
                prepared = false;
                // a fresh server runs with its own values
                originals.clear();
                out.notes.push(format!(
                    "pass {pass}, {}: restarted with {}",
                    cfg.name,
                    check_flags(live).join(" ")
                ));
            }
            if pass == 1 {
                out.changed
                    .push(format!("{}: {}", cfg.name, settings_changed(&plan, live)));
            }
            if let Ok(mut c) = live.connect() {
                for (k, v) in &plan.dynamic {
                    if !originals.contains_key(k) {
                        if let Ok(rows) = c.rows(&format!("SELECT @@GLOBAL.{k}")) {
                            if let Some(o) = rows.first().and_then(|r| r.first().cloned().flatten())
                            {
                                originals.insert(k.clone(), o);
                            }
                        }
                    }
                    let _ = c.query(&format!("SET GLOBAL {k} = {}", sql_value(v)));
                }
                c.quit();
            }
            for &value in &mx.values {
                tick(&format!("{} {}={value} (pass {pass})", cfg.name, mx.vary));
                let args = cell_args(mx, cfg, value);
                let res = run_cell(&args, cfg, mx, live, wires, &mut prepared);
                match res {
                    Ok((ms, fatal)) => {
                        for (name, v) in ms {
                            let key = format!("{}.{name}@{value}", cfg.name);
                            match v {
                                Ok(x) => record(&mut out.m, &key, x),
                                Err(why) => missing(&mut out.m, &key, &why),
                            }
                        }
                        if let Some(f) = &fatal {
                            out.notes.push(format!(
                                "pass {pass}, {} at {value}: run ended early: {f}",
                                cfg.name
                            ));
                        }
                    }
                    Err(e) => {
                        out.notes
                            .push(format!("pass {pass}, {} at {value}: {e}", cfg.name));
                        for (name, _) in metric_keys(cfg.workload(mx)) {
                            missing(&mut out.m, &format!("{}.{name}@{value}", cfg.name), &e);
                        }
                    }
                }
            }
        }
    }
    restore_globals(live, &originals);
    out.table = table(mx, &configs, &out.m);
    out.plots = plots(mx, &configs, &out.m);
    out
}

/// What a configuration changes on the target: its SET GLOBALs and the start-up flags the
/// target runs with, or `defaults`.
fn settings_changed(plan: &SettingsPlan, live: &Live) -> String {
    let mut ch: Vec<String> = plan
        .dynamic
        .iter()
        .map(|(k, v)| format!("SET GLOBAL {k}={v}"))
        .collect();
    ch.extend(live.flags.iter().map(|(k, v)| format!("--{k}={v}")));
    if ch.is_empty() {
        "defaults".into()
    } else {
        ch.join(", ")
    }
}

/// Sets each global variable back to the value it had before the matrix changed it.
fn restore_globals(live: &mut Live, originals: &BTreeMap<String, String>) {
    if let Ok(mut c) = live.connect() {
        for (k, orig) in originals {
            let _ = c.query(&format!("SET GLOBAL {k} = {}", sql_value(orig)));
        }
        c.quit();
    }
}

/// The plotted metrics: for each, one series per configuration over the varied values.
fn plots(mx: &Matrix, configs: &[Config], m: &Measurements) -> Vec<(String, Vec<Series>)> {
    let mut out = Vec::new();
    if let Some(p) = &mx.plot {
        for y in &p.y {
            let series = configs
                .iter()
                .map(|c| {
                    let cells: Vec<(f64, &[f64])> = mx
                        .values
                        .iter()
                        .filter_map(|v| match m.get(&format!("{}.{y}@{v}", c.name)) {
                            Some(Measured::Values(vs)) if !vs.is_empty() => {
                                Some((*v as f64, vs.as_slice()))
                            }
                            _ => None,
                        })
                        .collect();
                    Series {
                        label: c.name.clone(),
                        points: cells.iter().map(|(x, vs)| (*x, median(vs))).collect(),
                        passes: cells
                            .iter()
                            .flat_map(|(x, vs)| vs.iter().map(move |v| (*x, *v)))
                            .collect(),
                    }
                })
                .collect();
            out.push((y.clone(), series));
        }
    }
    out
}

/// A cell's command line (`tpbed-load run|queue OPTIONS`) as the command it names.
#[derive(Debug, Parser)]
#[command(name = "tpbed-load", args_override_self = true)]
enum Cell {
    /// A sysbench script.
    Run(SysbenchArgs),
    /// The job queue.
    Queue(QueueArgs),
    /// TPC-C.
    Tpcc(TpccArgs),
    /// Point selects among long statements.
    Mixed(MixedArgs),
}

/// A cell's metrics and, when the run ended early, why.
type CellOut = (CellMetrics, Option<String>);

/// Points a cell's connection options at the live server, as the lab's login.
fn point_at(conn: &mut crate::options::ConnArgs, live: &Live) {
    conn.host = live.addr.ip().to_string();
    conn.port = live.addr.port();
    conn.user = live.login.user.clone();
    conn.password = live.login.password.clone();
    conn.db = live.login.db.clone();
}

fn run_cell(
    args: &[String],
    cfg: &Config,
    mx: &Matrix,
    live: &Live,
    wires: &Arc<WireFactory>,
    prepared: &mut bool,
) -> Result<CellOut, String> {
    let cell = Cell::try_parse_from(args).map_err(|e| {
        format!(
            "bad workload options ({}): {}",
            args[1..].join(" "),
            e.to_string().lines().next().unwrap_or_default()
        )
    })?;
    match cell {
        Cell::Queue(mut a) => {
            point_at(&mut a.conn, live);
            a.run.time = mx.time_s;
            a.run.report_interval = 1;
            a.run.server_pid = live.pid();
            let r = crate::queue::queue_run(&a, wires, false)?;
            Ok((metrics(&r, "queue"), r.fatal.clone()))
        }
        Cell::Tpcc(mut a) => {
            point_at(&mut a.conn, live);
            a.run.report_interval = 1;
            a.run.server_pid = live.pid();
            if !*prepared {
                let mut p = a.clone();
                p.run.threads = 4;
                crate::tpcc::cleanup(&p, wires, false)
                    .and_then(|()| crate::tpcc::prepare(&p, wires, false))
                    .map_err(|e| format!("prepare: {e}"))?;
                *prepared = true;
            }
            a.run.time = mx.time_s;
            let r = crate::tpcc::run_tpcc(&a, wires, false)?;
            std::thread::sleep(std::time::Duration::from_millis(300));
            Ok((metrics(&r, "tpcc"), r.fatal.clone()))
        }
        Cell::Mixed(mut a) => {
            point_at(&mut a.conn, live);
            a.run.report_interval = 1;
            a.run.server_pid = live.pid();
            if !*prepared {
                // the short statements' tables, as `tpbed-load prepare` makes them
                let sb = [
                    "tpbed-load".to_string(),
                    "run".into(),
                    "--workload=oltp_point_select".into(),
                    format!("--tables={}", a.tables),
                    format!("--table-size={}", a.table_size),
                    "--threads=4".into(),
                ];
                let Ok(Cell::Run(mut p)) = Cell::try_parse_from(sb) else {
                    return Err("prepare: the point selects' tables".into());
                };
                p.normalize();
                p.conn = a.conn.clone();
                crate::sysbench::cleanup_with(&p, wires, false)
                    .and_then(|()| crate::sysbench::prepare_with(&p, wires, false))
                    .map_err(|e| format!("prepare: {e}"))?;
                *prepared = true;
            }
            a.run.time = mx.time_s;
            let r = crate::extra::mixed_run(&a, wires, false)?;
            std::thread::sleep(std::time::Duration::from_millis(300));
            Ok((metrics(&r, "mixed"), r.fatal.clone()))
        }
        Cell::Run(mut a) => {
            a.normalize();
            let workload = a.workload.name();
            point_at(&mut a.conn, live);
            a.run.report_interval = 1;
            a.run.server_pid = live.pid();
            if !*prepared {
                let mut p = a.clone();
                p.run.threads = 4;
                crate::sysbench::cleanup_with(&p, wires, false)
                    .and_then(|()| crate::sysbench::prepare_with(&p, wires, false))
                    .map_err(|e| format!("prepare: {e}"))?;
                *prepared = true;
            }
            let ms = if cfg.by_sysbench() {
                (sysbench_client::run(args, live, mx.time_s)?, None)
            } else {
                a.run.time = mx.time_s;
                let r = crate::sysbench::run_cmd(&a, wires, false)?;
                (metrics(&r, workload), r.fatal.clone())
            };
            std::thread::sleep(std::time::Duration::from_millis(300));
            Ok(ms)
        }
    }
}

/// A cell of a table: the median over passes, `n/a` when the target cannot give it.
pub(crate) fn fmt_cell(m: &Measurements, key: &str) -> String {
    match m.get(key) {
        Some(Measured::Values(v)) if !v.is_empty() => {
            let x = median(v);
            if x.abs() >= 100.0 {
                format!("{x:.0}")
            } else if x.abs() >= 1.0 {
                format!("{x:.2}")
            } else {
                format!("{x:.3}")
            }
        }
        Some(Measured::Missing(_)) => "n/a".into(),
        _ => "-".into(),
    }
}

/// The Markdown table: medians over passes, a row per configuration and value.
pub(crate) fn table(mx: &Matrix, configs: &[Config], m: &Measurements) -> String {
    let cols: Vec<String> = if mx.columns.is_empty() {
        vec!["qps".into()]
    } else {
        mx.columns.clone()
    };
    let mut o = format!("| configuration | {} |", mx.vary);
    let mut sep = "|---|---:|".to_string();
    for col in &cols {
        let _ = write!(o, " {col} |");
        sep.push_str("---:|");
    }
    let _ = writeln!(o);
    let _ = writeln!(o, "{sep}");
    for c in configs {
        for v in &mx.values {
            let _ = write!(o, "| {} | {v} |", c.name);
            for col in &cols {
                let _ = write!(o, " {} |", fmt_cell(m, &format!("{}.{col}@{v}", c.name)));
            }
            let _ = writeln!(o);
        }
    }
    o
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lab::spec::tests::parse;
    use crate::lab::spec::{Plot, Scale};
    use crate::metrics::WorkloadMetrics;

    const M: &str = r#"
name = "m"
[matrix]
workload = "queue"
options = { batch = 10, isolation = "rc", "initial-jobs" = 500 }
vary = "workers"
values = [1, 4]
time_s = 2
[[matrix.config]]
name = "skip"
options = { claim = "skip-locked" }
[[verdict]]
rule = "count"
value = "skip.jobs_per_s@4"
at_least = 1
"#;

    #[test]
    fn a_mixed_cell_runs_tpbed_load_mixed_and_reads_its_short_and_long_statements() {
        let text = M
            .replace("workload = \"queue\"", "workload = \"mixed\"")
            .replace(
                "options = { batch = 10, isolation = \"rc\", \"initial-jobs\" = 500 }",
                "options = { \"long-fraction\" = 0.05, \"long-sql\" = \"SELECT SUM(k) FROM sbtest1 WHERE id BETWEEN 1 AND 500\" }",
            )
            .replace("vary = \"workers\"", "vary = \"threads\"")
            .replace("options = { claim = \"skip-locked\" }", "settings = { tpbed_thread_pool_policy = \"fifo\" }")
            .replace("skip.jobs_per_s@4", "skip.short_p99_ms@4");
        let e = parse(&text, Scale::Small, "m.toml").unwrap();
        let mx = e.matrix.unwrap();
        let args = cell_args(&mx, &mx.config[0], 4);
        assert_eq!(args[1], "mixed");
        assert!(args.contains(
            &"--long-sql=SELECT SUM(k) FROM sbtest1 WHERE id BETWEEN 1 AND 500".to_string()
        ));
        match Cell::try_parse_from(&args) {
            Ok(Cell::Mixed(a)) => {
                assert_eq!(a.run.threads, 4);
                assert!((a.long_fraction - 0.05).abs() < 1e-9);
            }
            other => panic!("{args:?}: {other:?}"),
        }
        let keys: Vec<String> = metric_keys("mixed").into_iter().map(|k| k.0).collect();
        for k in ["short_p99_ms", "short_per_s", "long_p99_ms", "qps"] {
            assert!(keys.contains(&k.to_string()), "{k}");
        }
        // the sysbench binary has no mixed workload
        let e = crate::lab::spec::tests::parse(
            &text.replace("name = \"skip\"", "name = \"skip\"\nclient = \"sysbench\""),
            Scale::Small,
            "m.toml",
        )
        .unwrap_err();
        assert!(e.contains("not `mixed`"), "{e}");
    }

    #[test]
    fn pool_counters_are_deltas_means_and_largest_samples_or_missing_without_the_pool() {
        let mut r = crate::report::tests::sample_report();
        let ms: BTreeMap<String, Result<f64, String>> =
            metrics(&r, "oltp_read_only").into_iter().collect();
        // no pool (MariaDB, or tpbed with one thread per connection): missing with why, not 0
        for k in [
            "tp_stalls",
            "tp_queue_wait_high_avg_us",
            "tp_oldest_event_age_ms_max",
        ] {
            assert!(
                ms[k]
                    .as_ref()
                    .is_err_and(|e| e.contains("tpbed's own pool counter")),
                "{k}: {:?}",
                ms[k]
            );
        }
        let set = |m: &mut BTreeMap<String, f64>, pairs: &[(&str, f64)]| {
            for (k, v) in pairs {
                m.insert(format!("Tpbed_thread_pool_{k}"), *v);
            }
        };
        set(
            &mut r.server.status_before,
            &[
                ("queue_waits_high", 100.0),
                ("queue_waits_low", 10.0),
                ("queue_wait_high_us", 5_000.0),
                ("queue_wait_low_us", 70.0),
                ("kickups", 1.0),
                ("stalls", 2.0),
                ("yields", 0.0),
                ("oldest_event_age_ms", 9.0),
                ("threads_waiting", 0.0),
            ],
        );
        set(
            &mut r.server.status_after,
            &[
                ("queue_waits_high", 300.0),
                ("queue_waits_low", 10.0),
                ("queue_wait_high_us", 25_000.0),
                ("queue_wait_low_us", 70.0),
                ("kickups", 4.0),
                ("stalls", 7.0),
                ("yields", 0.0),
                ("oldest_event_age_ms", 3.0),
                ("threads_waiting", 1.0),
            ],
        );
        let mut s = crate::stats::IntervalSample {
            t: 1.0,
            secs: 1.0,
            threads: 1,
            c: Default::default(),
            lat: Default::default(),
            queue: 0,
            concurrency: 0,
            gauges: vec![
                ("Tpbed_thread_pool_oldest_event_age_ms".into(), 250.0),
                ("Tpbed_thread_pool_threads_waiting".into(), 2.0),
            ],
        };
        r.intervals.push(s.clone());
        s.gauges[0].1 = 40.0;
        r.intervals.push(s);
        let ms: BTreeMap<String, Result<f64, String>> =
            metrics(&r, "oltp_read_only").into_iter().collect();
        assert_eq!(ms["tp_queue_waits_high"], Ok(200.0));
        assert_eq!(ms["tp_queue_waits_low"], Ok(0.0));
        assert_eq!(ms["tp_queue_wait_high_avg_us"], Ok(100.0));
        assert!(ms["tp_queue_wait_low_avg_us"]
            .as_ref()
            .is_err_and(|e| e.contains("no event was taken from a low queue")));
        assert_eq!(ms["tp_kickups"], Ok(3.0));
        assert_eq!(ms["tp_stalls"], Ok(5.0));
        assert_eq!(ms["tp_yields"], Ok(0.0));
        assert_eq!(ms["tp_oldest_event_age_ms_max"], Ok(250.0));
        assert_eq!(ms["tp_threads_waiting_max"], Ok(2.0));
        for (k, _) in METRICS {
            assert!(ms.contains_key(*k), "{k}");
        }
    }

    #[test]
    fn cells_become_command_lines_the_cli_accepts() {
        let e = parse(M, Scale::Small, "m.toml").unwrap();
        let mx = e.matrix.unwrap();
        let args = cell_args(&mx, &mx.config[0], 4);
        assert_eq!(
            args,
            [
                "tpbed-load",
                "queue",
                "--batch=10",
                "--claim=skip-locked",
                "--initial-jobs=500",
                "--isolation=rc",
                "--workers=4"
            ]
        );
        assert!(matches!(Cell::try_parse_from(&args), Ok(Cell::Queue(_))));
        let mut sb = mx.clone();
        sb.workload = "oltp_read_only".into();
        sb.vary = "threads".into();
        sb.options = BTreeMap::from([("tables".to_string(), toml::Value::Integer(2))]);
        let args = cell_args(
            &sb,
            &Config {
                name: "x".into(),
                options: BTreeMap::new(),
                settings: BTreeMap::new(),
                workload: None,
                client: None,
            },
            8,
        );
        assert_eq!(
            args,
            [
                "tpbed-load",
                "run",
                "--workload=oltp_read_only",
                "--tables=2",
                "--threads=8"
            ]
        );
        assert!(matches!(Cell::try_parse_from(&args), Ok(Cell::Run(_))));
        let mut tpcc = mx.clone();
        tpcc.workload = "tpcc".into();
        tpcc.vary = "threads".into();
        tpcc.options = BTreeMap::from([("warehouses".to_string(), toml::Value::Integer(2))]);
        let args = cell_args(
            &tpcc,
            &Config {
                name: "x".into(),
                options: BTreeMap::new(),
                settings: BTreeMap::new(),
                workload: None,
                client: None,
            },
            8,
        );
        assert_eq!(
            args,
            ["tpbed-load", "tpcc", "run", "--threads=8", "--warehouses=2"]
        );
        match Cell::try_parse_from(&args) {
            Ok(Cell::Tpcc(a)) => assert_eq!((a.warehouses, a.run.threads), (2, 8)),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn metrics_of_a_report_and_the_table() {
        use crate::queue::{queue_metrics, OnceCheck, QueueStats};
        let mut r = crate::report::tests::sample_report();
        r.total.c.errors.insert(1213, 3);
        let mut r = r.with_totals();
        let mut s = QueueStats {
            claims: 90,
            empty_polls: 7,
            retries: 4,
            lock_waits: 3,
            deadlocks: 1,
            ..QueueStats::default()
        };
        for ms in 1..=100u64 {
            crate::stats::record(&mut s.claim_lat, ms * 100_000);
        }
        let check = OnceCheck::compute(20_000, &(1..=12_345).collect::<Vec<u64>>(), 7_655, 0);
        let own: WorkloadMetrics = queue_metrics(&s, &check, r.secs, r.percentile, Ok(2469.0));
        r.metrics.txns = own.txns;
        r.metrics.values = own.values;
        let ms: BTreeMap<String, Result<f64, String>> = metrics(&r, "queue").into_iter().collect();
        assert_eq!(ms["tps"], Ok(100.0));
        assert_eq!(ms["qps"], Ok(1600.0));
        assert_eq!(ms["errors"], Ok(3.0));
        assert_eq!(ms["jobs_per_s"], Ok(1234.5));
        assert_eq!(ms["empty_polls"], Ok(7.0));
        assert_eq!(ms["retries"], Ok(4.0));
        assert_eq!(ms["fsyncs_per_job"], Ok(0.2));
        assert_eq!(ms["claim_tps"], Ok(9.7));
        assert_eq!(ms["claim_rollbacks"], Ok(4.0));
        assert_eq!(ms["claim_lock_waits"], Ok(3.0));
        assert_eq!(ms["claim_deadlocks"], Ok(1.0));
        let near = |k: &str, v: f64| {
            let got = ms[k].clone().unwrap();
            assert!((got - v).abs() < v * 0.01, "{k}: {got} vs {v}");
        };
        near("claim_p50_ms", 5.0);
        near("claim_p99_ms", 9.9);
        near("claim_max_ms", 10.0);
        near("avg_ms", r.lat().avg);
        near("p99_ms", r.lat().p99);
        for (name, _) in metric_keys("queue") {
            assert!(ms.contains_key(&name), "{name}");
        }
        // a value the workload leaves out is missing with why, not a number
        r.metrics.values.retain(|v| v.key != "empty_polls");
        r.metrics.txns.clear();
        let ms: BTreeMap<String, Result<f64, String>> = metrics(&r, "queue").into_iter().collect();
        for k in ["empty_polls", "claim_p99_ms", "claim_deadlocks"] {
            assert!(
                ms[k].as_ref().is_err_and(|e| e.contains("did not report")),
                "{k}: {:?}",
                ms[k]
            );
        }
        // TPC-C's per-type metrics come from its recorder, every key of every type
        let mut rec = crate::metrics::TxnRecorder::new(crate::tpcc::keys::TYPES);
        for (t, ms) in [(0usize, 4u64), (0, 6), (3, 40)] {
            rec.record(
                t,
                crate::metrics::TxnOutcome {
                    ns: ms * 1_000_000,
                    rollbacks: u64::from(ms == 6),
                    lock_waits: 0,
                    deadlocks: u64::from(ms == 6),
                },
            );
        }
        r.metrics.txns = rec.metrics(95.0);
        r.metrics.values.clear();
        let ms: BTreeMap<String, Result<f64, String>> = metrics(&r, "tpcc").into_iter().collect();
        assert_eq!(ms["new_order_tps"], Ok(0.2));
        assert_eq!(ms["new_order_rollbacks"], Ok(1.0));
        assert_eq!(ms["new_order_deadlocks"], Ok(1.0));
        assert_eq!(ms["delivery_tps"], Ok(0.1));
        assert!((ms["delivery_max_ms"].clone().unwrap() - 40.0).abs() < 0.1);
        assert_eq!(ms["stock_level_tps"], Ok(0.0));
        assert!(ms["tpmc"]
            .as_ref()
            .is_err_and(|e| e.contains("did not report")));
        for (name, _) in metric_keys("tpcc") {
            assert!(ms.contains_key(&name), "{name}");
        }
        // a sysbench cell has no queue keys at all
        let ms: BTreeMap<String, Result<f64, String>> =
            metrics(&r, "oltp_read_only").into_iter().collect();
        assert!(!ms.contains_key("empty_polls") && ms.contains_key("qps"));
        let e = parse(M, Scale::Small, "m.toml").unwrap();
        let mx = e.matrix.unwrap();
        let mut m = Measurements::new();
        record(&mut m, "skip.qps@1", 10.0);
        record(&mut m, "skip.qps@1", 30.0);
        missing(&mut m, "skip.qps@4", "gone");
        let t = table(&mx, &mx.config, &m);
        assert!(
            t.contains("| 1 | 20.00 |") && t.contains("| 4 | n/a |"),
            "{t}"
        );
        // a plot's line goes through the median, and each pass is a point of its own
        let mut mx = mx;
        mx.plot = Some(Plot {
            y: vec!["qps".into()],
        });
        let p = plots(&mx, &mx.config, &m);
        assert_eq!(p[0].0, "qps");
        assert_eq!(p[0].1[0].points, vec![(1.0, 20.0)]);
        assert_eq!(p[0].1[0].passes, vec![(1.0, 10.0), (1.0, 30.0)]);
    }
}
