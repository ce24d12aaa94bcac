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
use crate::kernel_counts::KernelCounts;
use crate::lab::knobs::for_flavour;
use crate::lab::spec::{value_text, Config, Matrix};
use crate::lab::sysbench_client;
use crate::lab::target::{check_flags, plan_settings, sql_value, Live};
use crate::lab::verdict::{median, missing, record, CellMetrics, Measured, Measurements};
use crate::options::SysbenchArgs;
use crate::plot::Series;
use crate::queue::QueueArgs;
use crate::report::Report;

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

/// The metrics a cell records (queue metrics only for `queue`).
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
    ("jobs_per_s", "queue: jobs completed per second"),
    ("claim_p50_ms", "queue: median claim transaction latency"),
    ("claim_p99_ms", "queue: 99th percentile claim latency"),
    ("claim_max_ms", "queue: maximum claim latency"),
    ("empty_polls", "queue: claims that found no job"),
    ("retries", "queue: claims rolled back and retried"),
    ("fsyncs_per_job", "queue: redo fsyncs per completed job"),
];

fn extra<'a>(r: &'a Report, key: &str) -> Option<&'a str> {
    r.extra
        .iter()
        .find(|(k, _)| k == key)
        .map(|(_, v)| v.as_str())
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

/// A cell's metrics from its report.
pub(crate) fn metrics(r: &Report, queue: bool) -> CellMetrics {
    let l = r.lat();
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
    let mut out = vec![
        ("qps", Ok(r.qps())),
        ("tps", Ok(r.tps())),
        ("avg_ms", Ok(l.avg)),
        ("p95_ms", Ok(l.p95)),
        ("p99_ms", Ok(l.p99)),
        ("max_ms", Ok(l.max)),
        ("errors", Ok(r.total.c.errors.values().sum::<u64>() as f64)),
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
    if queue {
        let num = |s: Option<&str>| {
            s.and_then(|v| v.trim().parse::<f64>().ok())
                .ok_or_else(|| "not in the queue report".to_string())
        };
        let claim: Vec<Option<f64>> = extra(r, "claim latency ms p50 / p99 / max")
            .map(|v| v.split(" / ").map(|x| x.trim().parse().ok()).collect())
            .unwrap_or_default();
        let pick = |i: usize| {
            claim
                .get(i)
                .copied()
                .flatten()
                .ok_or_else(|| "not in the queue report".to_string())
        };
        let jobs = num(extra(r, "jobs/s (completed)"));
        let per_job = match (&jobs, delta(r, "Innodb_os_log_fsyncs")) {
            (Ok(j), Ok(f)) if *j > 0.0 => Ok(f / (j * r.secs)),
            (Ok(_), Ok(_)) => Err("no job completed".into()),
            (Err(e), _) => Err(e.clone()),
            (_, Err(e)) => Err(e),
        };
        out.extend([
            ("jobs_per_s", jobs),
            ("claim_p50_ms", pick(0)),
            ("claim_p99_ms", pick(1)),
            ("claim_max_ms", pick(2)),
            ("empty_polls", num(extra(r, "empty polls"))),
            ("retries", num(extra(r, "claims rolled back and retried"))),
            ("fsyncs_per_job", per_job),
        ]);
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
                    for (name, _) in METRICS {
                        missing(&mut out.m, &format!("{}.{name}@{v}", cfg.name), why);
                    }
                    tick(&format!("{} {}={v}", cfg.name, mx.vary));
                }
            };
            // put back what the previous configuration set globally, so this one is planned
            // against the server's own values (not the last configuration's)
            if !originals.is_empty() {
                if let Ok(mut c) = live.connect() {
                    for (k, orig) in &originals {
                        let _ = c.query(&format!("SET GLOBAL {k} = {}", sql_value(orig)));
                    }
                    c.quit();
                }
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
                let mut ch: Vec<String> = plan
                    .dynamic
                    .iter()
                    .map(|(k, v)| format!("SET GLOBAL {k}={v}"))
                    .collect();
                ch.extend(live.flags.iter().map(|(k, v)| format!("--{k}={v}")));
                out.changed.push(format!(
                    "{}: {}",
                    cfg.name,
                    if ch.is_empty() {
                        "defaults".into()
                    } else {
                        ch.join(", ")
                    }
                ));
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
                        for (name, _) in METRICS {
                            missing(&mut out.m, &format!("{}.{name}@{value}", cfg.name), &e);
                        }
                    }
                }
            }
        }
    }
    if let Ok(mut c) = live.connect() {
        for (k, orig) in &originals {
            let _ = c.query(&format!("SET GLOBAL {k} = {}", sql_value(orig)));
        }
        c.quit();
    }
    out.table = table(mx, &configs, &out.m);
    if let Some(p) = &mx.plot {
        for y in &p.y {
            let series = configs
                .iter()
                .map(|c| Series {
                    label: c.name.clone(),
                    points: mx
                        .values
                        .iter()
                        .filter_map(|v| match out.m.get(&format!("{}.{y}@{v}", c.name)) {
                            Some(Measured::Values(vs)) if !vs.is_empty() => {
                                Some((*v as f64, median(vs)))
                            }
                            _ => None,
                        })
                        .collect(),
                })
                .collect();
            out.plots.push((y.clone(), series));
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
}

/// A cell's metrics and, when the run ended early, why.
type CellOut = (CellMetrics, Option<String>);

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
    let host = live.addr.ip().to_string();
    let port = live.addr.port();
    match cell {
        Cell::Queue(mut a) => {
            a.conn.host = host;
            a.conn.port = port;
            a.conn.user = live.login.user.clone();
            a.conn.password = live.login.password.clone();
            a.conn.db = live.login.db.clone();
            a.run.time = mx.time_s;
            a.run.report_interval = 1;
            a.run.server_pid = live.pid();
            let r = crate::queue::queue_run(&a, wires, false)?;
            Ok((metrics(&r, true), r.fatal.clone()))
        }
        Cell::Run(mut a) => {
            a.normalize();
            a.conn.host = host;
            a.conn.port = port;
            a.conn.user = live.login.user.clone();
            a.conn.password = live.login.password.clone();
            a.conn.db = live.login.db.clone();
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
                (metrics(&r, false), r.fatal.clone())
            };
            std::thread::sleep(std::time::Duration::from_millis(300));
            Ok(ms)
        }
    }
}

fn fmt_cell(m: &Measurements, key: &str) -> String {
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
    use crate::lab::spec::Scale;

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
    }

    #[test]
    fn metrics_of_a_report_and_the_table() {
        let mut r = crate::report::tests::sample_report();
        r.extra = vec![
            ("jobs/s (completed)".into(), "1234.5".into()),
            (
                "claim latency ms p50 / p99 / max".into(),
                "0.100 / 0.900 / 5.000".into(),
            ),
            ("empty polls".into(), "7".into()),
            ("claims rolled back and retried".into(), "0".into()),
        ];
        let ms: BTreeMap<&str, Result<f64, String>> = metrics(&r, true).into_iter().collect();
        assert_eq!(ms["jobs_per_s"], Ok(1234.5));
        assert_eq!(ms["claim_p99_ms"], Ok(0.9));
        assert_eq!(ms["empty_polls"], Ok(7.0));
        for (name, _) in METRICS {
            assert!(ms.contains_key(name), "{name}");
        }
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
    }
}
