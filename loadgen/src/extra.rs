//! Our workloads beyond sysbench: `mixed` (a fraction of long statements among short point
//! selects, to exercise a thread pool's stall rule) and `idle` (N idle connections held open
//! while M connections run point selects).

use std::sync::{Arc, Mutex};
use std::time::Instant;

use clap::Args;
use hdrhistogram::Histogram;

use crate::conn::{Param, Reply, WireFactory};
use crate::dist::{Dist, DistParams, RandType};
use crate::metrics::Value;
use crate::options::{ConnArgs, IgnoreList, RunArgs};
use crate::report::Report;
use crate::runner::{emit, engine_config, run, Load};
use crate::script::{Op, Script, Step};
use crate::stats::{new_hist, record, LatMs};

/// `tpbed-load mixed` options.
#[derive(Debug, Clone, Args)]
pub(crate) struct MixedArgs {
    /// Fraction of events that run the long statement.
    #[arg(long = "long-fraction", default_value_t = 0.01)]
    pub(crate) long_fraction: f64,
    /// Duration of the long statement in seconds (`SELECT SLEEP(x)`).
    #[arg(long = "long-secs", default_value_t = 1.0)]
    pub(crate) long_secs: f64,
    /// A long statement to use instead of SLEEP (e.g. a heavy query).
    #[arg(long = "long-sql")]
    pub(crate) long_sql: Option<String>,
    /// Short statements go to sbtest1..N (prepared by `tpbed-load prepare`).
    #[arg(long, default_value_t = 1)]
    pub(crate) tables: u32,
    /// Rows per table.
    #[arg(long = "table-size", default_value_t = 10_000)]
    pub(crate) table_size: u32,
    /// Connection options.
    #[command(flatten)]
    pub(crate) conn: ConnArgs,
    /// Run options.
    #[command(flatten)]
    pub(crate) run: RunArgs,
}

/// `tpbed-load idle` options.
#[derive(Debug, Clone, Args)]
pub(crate) struct IdleArgs {
    /// Idle connections (log in, then send nothing until the end).
    #[arg(long, default_value_t = 1000)]
    pub(crate) idle: usize,
    /// Active connections running point selects on sbtest1..N.
    #[arg(long, default_value_t = 8)]
    pub(crate) active: usize,
    /// Tables of the point selects.
    #[arg(long, default_value_t = 1)]
    pub(crate) tables: u32,
    /// Rows per table.
    #[arg(long = "table-size", default_value_t = 10_000)]
    pub(crate) table_size: u32,
    /// Connection options.
    #[command(flatten)]
    pub(crate) conn: ConnArgs,
    /// Run options (--threads is replaced by --idle + --active).
    #[command(flatten)]
    pub(crate) run: RunArgs,
}

/// Latency of the short and the long statements.
#[derive(Debug)]
struct MixStats {
    short: Histogram<u64>,
    long: Histogram<u64>,
}

/// Settings shared by the connections.
#[derive(Debug)]
struct MixCfg {
    long_fraction: f64,
    long_sql: String,
    tables: u32,
    table_size: u32,
    ignore: IgnoreList,
}

/// One connection: a point select or (with probability `long_fraction`) the long statement;
/// or, for idle connections, nothing at all.
#[derive(Debug)]
struct MixScript {
    cfg: Arc<MixCfg>,
    stats: Arc<Mutex<MixStats>>,
    dist: Dist,
    active: bool,
    long: bool,
    sent: bool,
    t0: Instant,
}

impl Script for MixScript {
    fn active(&self) -> bool {
        self.active
    }

    fn prepares(&self) -> Vec<String> {
        (1..=self.cfg.tables)
            .map(|t| format!("SELECT c FROM sbtest{t} WHERE id=?"))
            .collect()
    }

    fn begin_event(&mut self) {
        self.long = self.dist.unit() < self.cfg.long_fraction;
        self.sent = false;
    }

    fn next(&mut self, last: Option<&Reply>) -> Step {
        if let Some(Reply::Error { code, message }) = last {
            return if self.cfg.ignore.contains(*code) {
                Step::Restart
            } else {
                Step::Fatal(format!("error {code}: {message}"))
            };
        }
        if !self.sent {
            self.sent = true;
            self.t0 = Instant::now();
            if self.long {
                return Step::Send(Op::Query(self.cfg.long_sql.clone()));
            }
            let t = self.dist.uniform(1, self.cfg.tables.max(1));
            let id = self.dist.uniform(1, self.cfg.table_size.max(1));
            return Step::Send(Op::Exec(t as usize - 1, vec![Param::Int(i64::from(id))]));
        }
        let ns = self.t0.elapsed().as_nanos() as u64;
        let mut s = self.stats.lock().expect("mix stats");
        record(if self.long { &mut s.long } else { &mut s.short }, ns);
        Step::EndEvent
    }
}

fn mix_load(
    name: String,
    conn: &ConnArgs,
    run_args: &RunArgs,
    cfg: MixCfg,
    idle: usize,
    connections: usize,
    wires: &Arc<WireFactory>,
) -> Result<(Load, Arc<Mutex<MixStats>>), String> {
    let seed = 0x5EED;
    let engine = engine_config(conn, run_args, connections, seed)?;
    let stats = Arc::new(Mutex::new(MixStats {
        short: new_hist(),
        long: new_hist(),
    }));
    let (cfg, stats2) = (Arc::new(cfg), stats.clone());
    let scripts = Arc::new(move |i: usize| -> Box<dyn Script> {
        let params = DistParams {
            kind: RandType::Uniform,
            ..DistParams::default()
        };
        Box::new(MixScript {
            cfg: cfg.clone(),
            stats: stats2.clone(),
            dist: Dist::new(params, seed + i as u64),
            active: i >= idle,
            long: false,
            sent: false,
            t0: Instant::now(),
        })
    });
    let load = Load::new(name, engine, scripts, wires.clone(), run_args, true);
    Ok((load, stats))
}

fn lat_line(h: &Histogram<u64>) -> String {
    let l = LatMs::of(h, 99.0);
    format!(
        "{} statements; p50 {:.2} / p99 {:.2} / max {:.2} ms",
        h.len(),
        l.p50,
        l.p99,
        l.max
    )
}

/// The metrics a `mixed` run adds, by key, with what each is.
pub(crate) fn metric_keys() -> Vec<(String, String)> {
    [
        (
            "short_per_s",
            "mixed: short statements (point selects) completed per second",
        ),
        (
            "short_p50_ms",
            "mixed: median latency of the short statements",
        ),
        (
            "short_p99_ms",
            "mixed: 99th percentile latency of the short statements",
        ),
        (
            "short_max_ms",
            "mixed: maximum latency of the short statements",
        ),
        ("long_per_s", "mixed: long statements completed per second"),
        (
            "long_p99_ms",
            "mixed: 99th percentile latency of the long statements",
        ),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v.to_string()))
    .collect()
}

/// The short and long statements' values of a `mixed` run of `secs` seconds.
fn mix_values(s: &MixStats, secs: f64) -> Vec<Value> {
    let (short, long) = (LatMs::of(&s.short, 99.0), LatMs::of(&s.long, 99.0));
    let lat = |h: &Histogram<u64>, v: f64| {
        if h.is_empty() {
            Err("no statement of this kind completed".to_string())
        } else {
            Ok(v)
        }
    };
    let secs = secs.max(1e-9);
    vec![
        Value {
            key: "short_per_s",
            label: "short statements/s",
            value: Ok(s.short.len() as f64 / secs),
            decimals: 1,
        },
        Value {
            key: "short_p50_ms",
            label: "short statements' median ms",
            value: lat(&s.short, short.p50),
            decimals: 2,
        },
        Value {
            key: "short_p99_ms",
            label: "short statements' p99 ms",
            value: lat(&s.short, short.p99),
            decimals: 2,
        },
        Value {
            key: "short_max_ms",
            label: "short statements' max ms",
            value: lat(&s.short, short.max),
            decimals: 2,
        },
        Value {
            key: "long_per_s",
            label: "long statements/s",
            value: Ok(s.long.len() as f64 / secs),
            decimals: 1,
        },
        Value {
            key: "long_p99_ms",
            label: "long statements' p99 ms",
            value: lat(&s.long, long.p99),
            decimals: 2,
        },
    ]
}

/// `tpbed-load mixed`.
pub(crate) fn mixed_cmd(a: &MixedArgs, wires: &Arc<WireFactory>) -> Result<Report, String> {
    mixed_run(a, wires, true)
}

/// A `mixed` run; `print`: write the report as `--format` says.
pub(crate) fn mixed_run(
    a: &MixedArgs,
    wires: &Arc<WireFactory>,
    print: bool,
) -> Result<Report, String> {
    if !(0.0..=1.0).contains(&a.long_fraction) {
        return Err("--long-fraction must be within 0..1".into());
    }
    let long_sql = a
        .long_sql
        .clone()
        .unwrap_or_else(|| format!("SELECT SLEEP({})", a.long_secs));
    let cfg = MixCfg {
        long_fraction: a.long_fraction,
        long_sql: long_sql.clone(),
        tables: a.tables,
        table_size: a.table_size,
        ignore: a.conn.ignore_errors.clone(),
    };
    let name = format!("mixed ({:.1}% long: {long_sql})", a.long_fraction * 100.0);
    let threads = a.run.threads.max(1);
    let (mut load, stats) = mix_load(name, &a.conn, &a.run, cfg, 0, threads, wires)?;
    load.live = print;
    let mut report = run(load);
    let s = stats.lock().expect("mix stats");
    report.metrics.notes = vec![
        ("short statements".into(), lat_line(&s.short)),
        ("long statements".into(), lat_line(&s.long)),
    ];
    report.metrics.values = mix_values(&s, report.secs);
    drop(s);
    if print {
        emit(&report, a.run.format, a.run.out.as_deref())?;
    }
    Ok(report)
}

/// `tpbed-load idle`.
pub(crate) fn idle_cmd(a: &IdleArgs, wires: &Arc<WireFactory>) -> Result<Report, String> {
    let cfg = MixCfg {
        long_fraction: 0.0,
        long_sql: String::new(),
        tables: a.tables,
        table_size: a.table_size,
        ignore: a.conn.ignore_errors.clone(),
    };
    let total = a.idle + a.active;
    if total == 0 {
        return Err("--idle + --active must be at least 1".into());
    }
    let name = format!("idle ({} idle + {} active connections)", a.idle, a.active);
    let (load, stats) = mix_load(name, &a.conn, &a.run, cfg, a.idle, total, wires)?;
    let mut report = run(load);
    let s = stats.lock().expect("mix stats");
    report.metrics.notes = vec![
        (
            "idle / active connections".into(),
            format!("{} / {}", a.idle, a.active),
        ),
        ("active point selects".into(), lat_line(&s.short)),
        (
            "server Threads_connected at the end".into(),
            report
                .server
                .status_after
                .get("Threads_connected")
                .map_or("n/a".into(), |v| format!("{v}")),
        ),
    ];
    drop(s);
    emit(&report, a.run.format, a.run.out.as_deref())?;
    Ok(report)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_mixed_run_reports_its_short_statements_apart_from_its_long_ones() {
        let mut s = MixStats {
            short: new_hist(),
            long: new_hist(),
        };
        for ms in 1..=100u64 {
            record(&mut s.short, ms * 1_000_000);
        }
        let v = mix_values(&s, 2.0);
        let get = |k: &str| v.iter().find(|x| x.key == k).unwrap().value.clone();
        assert_eq!(get("short_per_s"), Ok(50.0));
        let p50 = get("short_p50_ms").unwrap();
        assert!((49.5..=51.0).contains(&p50), "{p50}");
        let p99 = get("short_p99_ms").unwrap();
        assert!((98.0..=100.5).contains(&p99), "{p99}");
        assert!((get("short_max_ms").unwrap() - 100.0).abs() < 0.5);
        assert_eq!(get("long_per_s"), Ok(0.0));
        assert!(get("long_p99_ms").is_err());
        let keys: Vec<String> = metric_keys().into_iter().map(|k| k.0).collect();
        assert_eq!(
            keys,
            v.iter().map(|x| x.key.to_string()).collect::<Vec<_>>()
        );
    }
}
