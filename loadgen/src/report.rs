//! Reports: sysbench's text sections (so existing parsers work) plus ours (percentiles, errors by
//! code, server counters as deltas, machine and placement), and JSON and CSV.

use std::fmt::Write;

use crate::gauges::{deltas, ServerInfo, SHOWN};
use crate::json::J;
use crate::machine::Machine;
use crate::metrics::WorkloadMetrics;
use crate::stats::{mean_sd, Acc, Fairness, IntervalSample, LatMs};

/// Everything a run produced.
#[derive(Debug, Clone)]
pub(crate) struct Report {
    /// Workload name (sysbench script or ours).
    pub(crate) workload: String,
    /// The command line.
    pub(crate) command_line: String,
    /// Connections (sysbench "threads").
    pub(crate) threads: usize,
    /// Client event-loop threads.
    pub(crate) client_threads: usize,
    /// The event loops' I/O (`--io`).
    pub(crate) io: &'static str,
    /// `--rate` (0: unlimited).
    pub(crate) rate: f64,
    /// Whether the rate is applied open loop.
    pub(crate) open_loop: bool,
    /// `--percentile`.
    pub(crate) percentile: f64,
    /// `--warmup-time` seconds.
    pub(crate) warmup: u64,
    /// Merged totals of the measured window.
    pub(crate) total: Acc,
    /// Measured seconds.
    pub(crate) secs: f64,
    /// Seconds to open all connections.
    pub(crate) connect_secs: f64,
    /// Per-connection fairness.
    pub(crate) fairness: Vec<Fairness>,
    /// Interval samples.
    pub(crate) intervals: Vec<IntervalSample>,
    /// The client machine.
    pub(crate) machine: Machine,
    /// The server.
    pub(crate) server: ServerInfo,
    /// CPU seconds tpbed-load used over the measured window.
    pub(crate) client_cpu_secs: f64,
    /// The error that ended the run, if any.
    pub(crate) fatal: Option<String>,
    /// The typed result: the totals' rates, latency and errors, and what the workload adds.
    pub(crate) metrics: WorkloadMetrics,
}

impl Report {
    /// How latency was measured, in words (every format states it).
    pub(crate) fn latency_basis(&self) -> String {
        if self.rate <= 0.0 {
            "closed loop (sysbench's model): each connection runs events back to back; latency from each event's actual start".into()
        } else if self.open_loop {
            format!(
                "open loop at {} events/s (Poisson arrivals): latency from each event's intended start (no coordinated omission)",
                self.rate
            )
        } else {
            format!(
                "closed loop paced at {} events/s (missed slots skipped): latency from each event's actual start (subject to coordinated omission)",
                self.rate
            )
        }
    }

    /// Copies the totals' TPS, QPS, event latency and errors into the typed metrics (the
    /// workload's own part is left as it is).
    pub(crate) fn with_totals(mut self) -> Report {
        self.metrics.tps = self.tps();
        self.metrics.qps = self.qps();
        self.metrics.latency = self.lat();
        self.metrics.errors = self.total.c.errors.clone();
        self
    }

    /// The event latency summary.
    pub(crate) fn lat(&self) -> LatMs {
        LatMs::of(&self.total.lat, self.percentile)
    }

    /// Queries per second.
    pub(crate) fn qps(&self) -> f64 {
        self.total.c.queries() as f64 / self.secs
    }

    /// Events (transactions) per second.
    pub(crate) fn tps(&self) -> f64 {
        self.total.c.events as f64 / self.secs
    }

    /// Client CPU seconds per 1,000 queries.
    pub(crate) fn cpu_per_kq(&self) -> f64 {
        let q = self.total.c.queries().max(1) as f64;
        self.client_cpu_secs / q * 1000.0
    }

    /// sysbench's text report, then ours.
    pub(crate) fn text(&self) -> String {
        let mut o = String::new();
        let c = &self.total.c;
        let s = self.secs;
        let row = |o: &mut String, label: &str, v: String| {
            let _ = writeln!(o, "{label:<41}{v}");
        };
        let _ = writeln!(o, "SQL statistics:");
        let _ = writeln!(o, "    queries performed:");
        row(&mut o, "        read:", c.reads.to_string());
        row(&mut o, "        write:", c.writes.to_string());
        row(&mut o, "        other:", c.others.to_string());
        row(&mut o, "        total:", c.queries().to_string());
        let per = |n: u64| format!("{n:<6} ({:.2} per sec.)", n as f64 / s);
        row(&mut o, "    transactions:", per(c.events));
        row(&mut o, "    queries:", per(c.queries()));
        row(&mut o, "    ignored errors:", per(c.ignored));
        row(&mut o, "    reconnects:", per(c.reconnects));
        let _ = writeln!(o);
        let _ = writeln!(o, "General statistics:");
        row(&mut o, "    total time:", format!("{s:.4}s"));
        row(&mut o, "    total number of events:", c.events.to_string());
        let _ = writeln!(o);
        let l = self.lat();
        let lrow = |o: &mut String, label: &str, v: f64| {
            let _ = writeln!(o, "{label:<25}{:>28}", format!("{v:.2}"));
        };
        let _ = writeln!(o, "Latency (ms):");
        lrow(&mut o, "         min:", l.min);
        lrow(&mut o, "         avg:", l.avg);
        lrow(&mut o, "         max:", l.max);
        lrow(
            &mut o,
            &format!("         {}th percentile:", fmt_pct(self.percentile)),
            l.pct,
        );
        lrow(&mut o, "         sum:", l.sum);
        let _ = writeln!(o);
        let (em, esd) = mean_sd(self.fairness.iter().map(|f| f.events as f64));
        let (tm, tsd) = mean_sd(self.fairness.iter().map(|f| f.busy_secs));
        let _ = writeln!(o, "Threads fairness:");
        let _ = writeln!(o, "{:<35}{em:.4}/{esd:3.2}", "    events (avg/stddev):");
        let _ = writeln!(
            o,
            "{:<35}{tm:.4}/{tsd:3.2}",
            "    execution time (avg/stddev):"
        );
        let _ = writeln!(o);
        self.text_ours(&mut o);
        o
    }

    fn text_ours(&self, o: &mut String) {
        let l = self.lat();
        let sv = LatMs::of(&self.total.service, self.percentile);
        let st = LatMs::of(&self.total.stmt, self.percentile);
        let _ = writeln!(o, "tpbed-load (extensions, not in sysbench's report):");
        let _ = writeln!(o, "    measurement: {}", self.latency_basis());
        let _ = writeln!(
            o,
            "    connections: {} over {} client thread(s), {} I/O; connect time {:.2}s; warmup {}s",
            self.threads, self.client_threads, self.io, self.connect_secs, self.warmup
        );
        let _ = writeln!(
            o,
            "    latency (ms)       p50      p95      p99    p99.9      max"
        );
        for (name, x) in [("event", l), ("event service", sv), ("statement", st)] {
            let _ = writeln!(
                o,
                "    {name:<14} {:>8.3} {:>8.3} {:>8.3} {:>8.3} {:>8.3}",
                x.p50, x.p95, x.p99, x.p999, x.max
            );
        }
        let errs = &self.total.c.errors;
        if errs.is_empty() {
            let _ = writeln!(o, "    errors by code: none");
        } else {
            let list: Vec<String> = errs.iter().map(|(c, n)| format!("{c}: {n}")).collect();
            let _ = writeln!(o, "    errors by code: {}", list.join(", "));
        }
        let _ = writeln!(
            o,
            "    client CPU: {:.2}s ({:.4}s per 1,000 queries)",
            self.client_cpu_secs,
            self.cpu_per_kq()
        );
        self.metrics.text(o, self.secs);
        if let Some(f) = &self.fatal {
            let _ = writeln!(o, "    FATAL: {f}");
        }
        let _ = writeln!(o);
        let m = &self.machine;
        let _ = writeln!(o, "Machine and placement:");
        let _ = writeln!(
            o,
            "    cores: {}; CPU: {}; kernel: {}",
            m.cores, m.model, m.kernel
        );
        let _ = writeln!(
            o,
            "    client CPUs: {}; server CPUs: {}",
            m.client_cpus,
            or_dash(&self.server.cpus)
        );
        let _ = writeln!(o, "    tpbed git revision: {}", m.git_rev);
        let _ = writeln!(o, "    command: {}", self.command_line);
        let srv = &self.server;
        if let (Some(a), Some(mx)) = (srv.proc_after, srv.proc_max) {
            let cpu = srv
                .proc_before
                .map(|b| a.cpu_secs - b.cpu_secs)
                .unwrap_or(0.0);
            let _ = writeln!(
                o,
                "    server pid {}: OS threads max {}, RSS max {:.1} MiB, CPU {:.2}s over the run",
                srv.pid.unwrap_or(0),
                mx.threads,
                mx.rss_kb as f64 / 1024.0,
                cpu
            );
        }
        match &srv.kernel {
            Some(Ok(k)) => {
                let q = (self.qps() * self.secs).max(1.0);
                let _ = writeln!(
                    o,
                    "    server system calls {:.0} ({:.2} per statement), context switches {:.0} ({:.2} per statement) over the measured interval (perf)",
                    k.syscalls,
                    k.syscalls / q,
                    k.context_switches,
                    k.context_switches / q
                );
            }
            Some(Err(e)) => {
                let _ = writeln!(o, "    server system calls and context switches: {e}");
            }
            None => {}
        }
        if !srv.status_after.is_empty() {
            let _ = writeln!(o);
            let _ = writeln!(
                o,
                "Server status over the measured interval (counters as deltas, levels at the end):"
            );
            let shown: Vec<String> = deltas(&srv.status_before, &srv.status_after)
                .into_iter()
                .filter(|(k, v, level)| *level || (*v != 0.0 && interesting(k)))
                .map(|(k, v, level)| format!("{k}{}={}", if level { "" } else { " Δ" }, num(v)))
                .collect();
            for chunk in shown.chunks(4) {
                let _ = writeln!(o, "    {}", chunk.join(", "));
            }
        }
        if !srv.variables.is_empty() {
            let _ = writeln!(o);
            let _ = writeln!(
                o,
                "Server variables (SHOW GLOBAL VARIABLES, {} rows; full list in --format json):",
                srv.variables.len()
            );
            let keys = [
                "version",
                "version_comment",
                "thread_handling",
                "thread_pool_size",
                "max_connections",
                "max_prepared_stmt_count",
                "innodb_buffer_pool_size",
                "innodb_flush_log_at_trx_commit",
                "transaction_isolation",
                "tx_isolation",
                "performance_schema",
            ];
            let shown: Vec<String> = srv
                .variables
                .iter()
                .filter(|(k, _)| keys.contains(&k.as_str()) || k.starts_with("tpbed_"))
                .map(|(k, v)| format!("{k}={v}"))
                .collect();
            for chunk in shown.chunks(3) {
                let _ = writeln!(o, "    {}", chunk.join(", "));
            }
        }
    }

    /// The JSON report.
    pub(crate) fn json(&self) -> String {
        let c = &self.total.c;
        let lat = |l: LatMs| {
            J::obj([
                ("min", J::n(l.min)),
                ("avg", J::n(l.avg)),
                ("p50", J::n(l.p50)),
                ("p95", J::n(l.p95)),
                ("p99", J::n(l.p99)),
                ("p99_9", J::n(l.p999)),
                ("max", J::n(l.max)),
                ("percentile", J::n(l.pct)),
                ("sum", J::n(l.sum)),
            ])
        };
        let errors = J::Obj(
            c.errors
                .iter()
                .map(|(k, v)| (k.to_string(), J::n(*v as f64)))
                .collect(),
        );
        let intervals = J::Arr(self.intervals.iter().map(interval_json).collect());
        let srv = &self.server;
        let status = J::Obj(
            deltas(&srv.status_before, &srv.status_after)
                .into_iter()
                .map(|(k, v, level)| (k, J::obj([("value", J::n(v)), ("delta", J::Bool(!level))])))
                .collect(),
        );
        let vars = J::Obj(
            srv.variables
                .iter()
                .map(|(k, v)| (k.clone(), J::s(v.clone())))
                .collect(),
        );
        let proc = |p: Option<crate::machine::ProcSample>| match p {
            Some(p) => J::obj([
                ("threads", J::n(p.threads as f64)),
                ("rss_kb", J::n(p.rss_kb as f64)),
                ("cpu_secs", J::n(p.cpu_secs)),
                (
                    "pool_ch_threads",
                    p.pool_ch_threads.map_or(J::Null, |n| J::n(n as f64)),
                ),
            ]),
            None => J::Null,
        };
        let m = &self.machine;
        J::obj([
            (
                "tool",
                J::s(format!("tpbed-load {}", env!("CARGO_PKG_VERSION"))),
            ),
            ("workload", J::s(self.workload.clone())),
            ("command_line", J::s(self.command_line.clone())),
            ("measurement", J::s(self.latency_basis())),
            ("threads", J::n(self.threads as f64)),
            ("client_threads", J::n(self.client_threads as f64)),
            ("client_io", J::s(self.io)),
            ("rate", J::n(self.rate)),
            ("open_loop", J::Bool(self.open_loop && self.rate > 0.0)),
            ("warmup_secs", J::n(self.warmup as f64)),
            ("total_time_secs", J::n(self.secs)),
            ("connect_secs", J::n(self.connect_secs)),
            (
                "queries",
                J::obj([
                    ("read", J::n(c.reads as f64)),
                    ("write", J::n(c.writes as f64)),
                    ("other", J::n(c.others as f64)),
                    ("total", J::n(c.queries() as f64)),
                ]),
            ),
            ("transactions", J::n(c.events as f64)),
            ("tps", J::n(self.tps())),
            ("qps", J::n(self.qps())),
            ("ignored_errors", J::n(c.ignored as f64)),
            ("reconnects", J::n(c.reconnects as f64)),
            ("errors_by_code", errors),
            ("latency_ms", lat(self.lat())),
            (
                "service_ms",
                lat(LatMs::of(&self.total.service, self.percentile)),
            ),
            (
                "statement_ms",
                lat(LatMs::of(&self.total.stmt, self.percentile)),
            ),
            ("client_cpu_secs", J::n(self.client_cpu_secs)),
            ("client_cpu_secs_per_1000_queries", J::n(self.cpu_per_kq())),
            ("workload_metrics", self.metrics.json(self.secs)),
            ("fatal", self.fatal.clone().map_or(J::Null, J::Str)),
            ("intervals", intervals),
            (
                "machine",
                J::obj([
                    ("cores", J::n(m.cores as f64)),
                    ("model", J::s(m.model.clone())),
                    ("kernel", J::s(m.kernel.clone())),
                    ("client_cpus", J::s(m.client_cpus.clone())),
                    ("server_cpus", J::s(srv.cpus.clone())),
                    ("git_rev", J::s(m.git_rev.clone())),
                ]),
            ),
            (
                "server",
                J::obj([
                    ("pid", srv.pid.map_or(J::Null, J::n)),
                    ("proc_before", proc(srv.proc_before)),
                    ("proc_after", proc(srv.proc_after)),
                    ("proc_max", proc(srv.proc_max)),
                    (
                        "kernel",
                        match &srv.kernel {
                            Some(Ok(k)) => J::obj([
                                ("syscalls", J::n(k.syscalls)),
                                ("context_switches", J::n(k.context_switches)),
                            ]),
                            Some(Err(e)) => J::obj([("error", J::s(e.clone()))]),
                            None => J::Null,
                        },
                    ),
                    ("status", status),
                    ("variables", vars),
                ]),
            ),
        ])
        .render()
    }

    /// CSV: a header, one row per interval, and a final `total` row.
    pub(crate) fn csv(&self) -> String {
        let mut o = String::new();
        let _ = writeln!(
            o,
            "kind,time_s,threads,tps,qps,reads_s,writes_s,others_s,lat_p50_ms,lat_p95_ms,lat_p99_ms,lat_p99_9_ms,lat_max_ms,err_s,reconn_s,queue,concurrency,{}",
            SHOWN.join(",")
        );
        for s in &self.intervals {
            let g: Vec<String> = SHOWN
                .iter()
                .map(|k| {
                    s.gauges
                        .iter()
                        .find(|(n, _)| n == k)
                        .map(|(_, v)| num(*v))
                        .unwrap_or_default()
                })
                .collect();
            let d = s.secs.max(1e-9);
            let _ = writeln!(
                o,
                "interval,{:.3},{},{:.2},{:.2},{:.2},{:.2},{:.2},{:.3},{:.3},{:.3},{:.3},{:.3},{:.2},{:.2},{},{},{}",
                s.t,
                s.threads,
                s.c.events as f64 / d,
                s.c.queries() as f64 / d,
                s.c.reads as f64 / d,
                s.c.writes as f64 / d,
                s.c.others as f64 / d,
                s.lat.p50,
                s.lat.p95,
                s.lat.p99,
                s.lat.p999,
                s.lat.max,
                s.c.ignored as f64 / d,
                s.c.reconnects as f64 / d,
                s.queue,
                s.concurrency,
                g.join(",")
            );
        }
        let c = &self.total.c;
        let l = self.lat();
        let s = self.secs;
        let _ = writeln!(
            o,
            "total,{:.3},{},{:.2},{:.2},{:.2},{:.2},{:.2},{:.3},{:.3},{:.3},{:.3},{:.3},{:.2},{:.2},,,{}",
            s,
            self.threads,
            self.tps(),
            self.qps(),
            c.reads as f64 / s,
            c.writes as f64 / s,
            c.others as f64 / s,
            l.p50,
            l.p95,
            l.p99,
            l.p999,
            l.max,
            c.ignored as f64 / s,
            c.reconnects as f64 / s,
            vec![""; SHOWN.len()].join(",")
        );
        o
    }
}

/// sysbench's per-interval line (plus its rate-mode queue line, and our gauges).
pub(crate) fn interval_line(s: &IntervalSample, pct: f64, rate_mode: bool) -> String {
    let d = s.secs.max(1e-9);
    let mut line = format!(
        "[ {}s ] thds: {} tps: {:.2} qps: {:.2} (r/w/o: {:.2}/{:.2}/{:.2}) lat (ms,{}%): {:.2} err/s: {:.2} reconn/s: {:.2}",
        s.t.round() as u64,
        s.threads,
        s.c.events as f64 / d,
        s.c.queries() as f64 / d,
        s.c.reads as f64 / d,
        s.c.writes as f64 / d,
        s.c.others as f64 / d,
        fmt_pct(pct),
        s.lat.pct,
        s.c.ignored as f64 / d,
        s.c.reconnects as f64 / d,
    );
    if rate_mode {
        let _ = write!(
            line,
            "\n[ {}s ] queue length: {}, concurrency: {}",
            s.t.round() as u64,
            s.queue,
            s.concurrency
        );
    }
    line
}

/// Our per-interval gauge line (printed after sysbench's).
pub(crate) fn gauge_line(s: &IntervalSample) -> Option<String> {
    if s.gauges.is_empty() {
        return None;
    }
    let g: Vec<String> = s
        .gauges
        .iter()
        .map(|(k, v)| format!("{k}: {}", num(*v)))
        .collect();
    Some(format!(
        "[ {}s ] (tpbed-load) p99: {:.2} max: {:.2} ms; {}",
        s.t.round() as u64,
        s.lat.p99,
        s.lat.max,
        g.join(" ")
    ))
}

fn interval_json(s: &IntervalSample) -> J {
    let d = s.secs.max(1e-9);
    J::obj([
        ("t", J::n(s.t)),
        ("threads", J::n(s.threads as f64)),
        ("tps", J::n(s.c.events as f64 / d)),
        ("qps", J::n(s.c.queries() as f64 / d)),
        ("reads_s", J::n(s.c.reads as f64 / d)),
        ("writes_s", J::n(s.c.writes as f64 / d)),
        ("others_s", J::n(s.c.others as f64 / d)),
        ("err_s", J::n(s.c.ignored as f64 / d)),
        ("reconn_s", J::n(s.c.reconnects as f64 / d)),
        ("lat_p50_ms", J::n(s.lat.p50)),
        ("lat_p95_ms", J::n(s.lat.p95)),
        ("lat_p99_ms", J::n(s.lat.p99)),
        ("lat_p99_9_ms", J::n(s.lat.p999)),
        ("lat_max_ms", J::n(s.lat.max)),
        ("queue", J::n(s.queue as f64)),
        ("concurrency", J::n(s.concurrency as f64)),
        (
            "gauges",
            J::Obj(
                s.gauges
                    .iter()
                    .map(|(k, v)| (k.clone(), J::n(*v)))
                    .collect(),
            ),
        ),
    ])
}

fn fmt_pct(p: f64) -> String {
    if p.fract() == 0.0 {
        format!("{}", p as u64)
    } else {
        format!("{p}")
    }
}

fn num(v: f64) -> String {
    if v.fract() == 0.0 && v.abs() < 1e15 {
        format!("{}", v as i64)
    } else {
        format!("{v:.2}")
    }
}

fn or_dash(s: &str) -> &str {
    if s.is_empty() {
        "-"
    } else {
        s
    }
}

fn interesting(k: &str) -> bool {
    k.starts_with("Innodb_row_lock")
        || k.starts_with("Innodb_os_log")
        || k.starts_with("Innodb_log")
        || k.starts_with("Com_")
        || k.starts_with("Threads_")
        || k.starts_with("Threadpool")
        || k.starts_with("Handler_")
        || k.starts_with("Innodb_rows")
        || k.starts_with("Innodb_deadlocks")
        || k.starts_with("Tpbed")
        || k.starts_with("tpbed")
        || matches!(
            k,
            "Questions"
                | "Queries"
                | "Connections"
                | "Aborted_clients"
                | "Aborted_connects"
                | "Bytes_sent"
                | "Bytes_received"
                | "Slow_queries"
        )
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::stats::record;

    /// A small report for formatting tests.
    pub(crate) fn sample_report() -> Report {
        let mut total = Acc::default();
        total.c.reads = 14_000;
        total.c.others = 2_000;
        total.c.events = 1_000;
        for i in 0..1000u64 {
            record(&mut total.lat, 1_000_000 + i * 1_000);
        }
        Report {
            workload: "oltp_read_only".into(),
            command_line: "tpbed-load run".into(),
            threads: 2,
            client_threads: 1,
            io: "epoll",
            rate: 0.0,
            open_loop: true,
            percentile: 95.0,
            warmup: 0,
            total,
            secs: 10.0,
            connect_secs: 0.01,
            fairness: vec![
                Fairness {
                    events: 499,
                    busy_secs: 9.99,
                },
                Fairness {
                    events: 501,
                    busy_secs: 9.99,
                },
            ],
            intervals: Vec::new(),
            machine: Machine::default(),
            server: ServerInfo::default(),
            client_cpu_secs: 1.6,
            fatal: None,
            metrics: WorkloadMetrics::default(),
        }
        .with_totals()
    }

    #[test]
    fn text_matches_sysbench_layout() {
        let t = sample_report().text();
        let lines: Vec<&str> = t.lines().collect();
        assert_eq!(lines[0], "SQL statistics:");
        assert_eq!(lines[2], "        read:                            14000");
        assert_eq!(lines[5], "        total:                           16000");
        assert_eq!(
            lines[6],
            "    transactions:                        1000   (100.00 per sec.)"
        );
        assert_eq!(
            lines[7],
            "    queries:                             16000  (1600.00 per sec.)"
        );
        assert_eq!(
            lines[8],
            "    ignored errors:                      0      (0.00 per sec.)"
        );
        assert_eq!(
            lines[12],
            "    total time:                          10.0000s"
        );
        assert_eq!(lines[13], "    total number of events:              1000");
        assert_eq!(lines[15], "Latency (ms):");
        assert_eq!(
            lines[16],
            "         min:                                    1.00"
        );
        assert_eq!(lines[19].len(), 53);
        assert!(lines[19].starts_with("         95th percentile:"));
        assert_eq!(lines[22], "Threads fairness:");
        assert_eq!(
            lines[23],
            "    events (avg/stddev):           500.0000/1.00"
        );
        assert_eq!(lines[24], "    execution time (avg/stddev):   9.9900/0.00");
        assert!(t.contains("closed loop"));
        assert!(t.contains("client CPU: 1.60s (0.1000s per 1,000 queries)"));
    }

    #[test]
    fn interval_line_matches_sysbench() {
        let mut s = IntervalSample {
            t: 1.0,
            secs: 1.0,
            threads: 2,
            ..Default::default()
        };
        s.c.events = 1123;
        s.c.reads = 15_722;
        s.c.others = 2_246;
        s.lat.pct = 2.14;
        assert_eq!(
            interval_line(&s, 95.0, false),
            "[ 1s ] thds: 2 tps: 1123.00 qps: 17968.00 (r/w/o: 15722.00/0.00/2246.00) lat (ms,95%): 2.14 err/s: 0.00 reconn/s: 0.00"
        );
        assert!(interval_line(&s, 95.0, true).ends_with("[ 1s ] queue length: 0, concurrency: 0"));
    }

    #[test]
    fn json_and_csv_carry_the_numbers() {
        let mut r = sample_report();
        r.total.c.errors.insert(1213, 3);
        r.intervals.push(IntervalSample {
            t: 1.0,
            secs: 1.0,
            threads: 2,
            ..Default::default()
        });
        let j = r.json();
        assert!(j.contains(r#""transactions":1000"#));
        assert!(j.contains(r#""errors_by_code":{"1213":3}"#));
        assert!(j.contains(r#""qps":1600"#));
        assert!(j.contains("closed loop"));
        let csv = r.csv();
        let rows: Vec<&str> = csv.lines().collect();
        assert_eq!(rows.len(), 3);
        assert!(rows[0].starts_with("kind,time_s,threads,tps,qps"));
        assert!(rows[2].starts_with("total,10.000,2,100.00,1600.00"));
        assert_eq!(rows[0].split(',').count(), rows[2].split(',').count());
        assert_eq!(rows[0].split(',').count(), rows[1].split(',').count());
    }
}
