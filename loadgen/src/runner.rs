//! Runs a load: starts the engine, prints sysbench's per-interval lines, samples server gauges,
//! snapshots counters around the measured window, and assembles the `Report`.

use std::collections::BTreeMap;
use std::io::Write as _;
use std::net::{SocketAddr, ToSocketAddrs};
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::blocking::Blocking;
use crate::conn::{Login, WireFactory};
use crate::engine::{Engine, EngineConfig, Shared};
use crate::gauges::{numeric, pairs, ServerInfo, SHOWN};
use crate::machine::{affinity, proc_sample, self_cpu_secs, Machine, ProcSample};
use crate::metrics::WorkloadMetrics;
use crate::options::{ConnArgs, Format, LoopMode, RunArgs};
use crate::report::{gauge_line, interval_line, Report};
use crate::script::ScriptFactory;
use crate::stats::{Acc, IntervalSample, LatMs};

/// Resolves `--mysql-host`/`--mysql-port`, refusing anything that is not loopback.
pub(crate) fn loopback_addr(host: &str, port: u16) -> Result<SocketAddr, String> {
    let addrs: Vec<SocketAddr> = (host, port)
        .to_socket_addrs()
        .map_err(|e| format!("cannot resolve {host}: {e}"))?
        .collect();
    addrs
        .iter()
        .find(|a| a.ip().is_loopback() && a.is_ipv4())
        .or_else(|| addrs.iter().find(|a| a.ip().is_loopback()))
        .copied()
        .ok_or_else(|| {
            format!(
                "{host} is not a loopback address; tpbed-load only drives servers on this machine"
            )
        })
}

/// The login of `--mysql-user/-password/-db`.
pub(crate) fn login(c: &ConnArgs) -> Login {
    Login {
        user: c.user.clone(),
        password: c.password.clone(),
        db: c.db.clone(),
    }
}

/// The default number of client threads: min(connections, CPUs this process may use, 16).
pub(crate) fn default_client_threads(connections: usize) -> usize {
    let cpus = std::thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(1);
    connections.min(cpus).clamp(1, 16)
}

/// Everything needed to run one load.
pub(crate) struct Load {
    /// Name in the report.
    pub(crate) workload: String,
    /// Engine settings.
    pub(crate) engine: EngineConfig,
    /// Scripts per connection.
    pub(crate) scripts: Arc<ScriptFactory>,
    /// Wire per connection.
    pub(crate) wires: Arc<WireFactory>,
    /// `--report-interval` seconds (0: none printed).
    pub(crate) report_interval: u64,
    /// `--percentile`.
    pub(crate) percentile: f64,
    /// Where interval lines go (text format prints them live).
    pub(crate) format: Format,
    /// Print interval lines and headers live.
    pub(crate) live: bool,
    /// `--server-pid`.
    pub(crate) server_pid: Option<u32>,
    /// Sample SHOW GLOBAL STATUS on a side connection.
    pub(crate) gauges: bool,
}

impl Load {
    /// A load with the report and sampling options of `run` (`--report-interval`,
    /// `--percentile`, `--format`, `--server-pid`, gauges unless `--no-gauges`).
    pub(crate) fn new(
        workload: String,
        engine: EngineConfig,
        scripts: Arc<ScriptFactory>,
        wires: Arc<WireFactory>,
        run: &RunArgs,
        live: bool,
    ) -> Load {
        Load {
            workload,
            engine,
            scripts,
            wires,
            report_interval: run.report_interval,
            percentile: run.percentile,
            format: run.format,
            live,
            server_pid: run.server_pid,
            gauges: !run.no_gauges,
        }
    }
}

impl std::fmt::Debug for Load {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Load")
            .field("workload", &self.workload)
            .field("engine", &self.engine)
            .finish()
    }
}

/// Builds the engine settings from the common options.
pub(crate) fn engine_config(
    conn: &ConnArgs,
    run: &RunArgs,
    connections: usize,
    seed: u64,
) -> Result<EngineConfig, String> {
    if run.time == 0 && run.events == 0 {
        return Err("either --time or --events must be non-zero (every run is bounded)".into());
    }
    if run.rate < 0.0 || !run.rate.is_finite() {
        return Err("--rate must be >= 0".into());
    }
    Ok(EngineConfig {
        addr: loopback_addr(&conn.host, conn.port)?,
        login: login(conn),
        connections,
        client_threads: run
            .client_threads
            .unwrap_or_else(|| default_client_threads(connections)),
        io: run.io,
        time: Duration::from_secs(run.time),
        events: run.events,
        warmup: Duration::from_secs(run.warmup_time),
        rate: run.rate,
        loop_mode: run.loop_mode,
        ps_mode: run.ps_mode,
        ignore: conn.ignore_errors.clone(),
        connect_timeout: Duration::from_secs(120),
        drain: Duration::from_secs(10),
        seed,
    })
}

/// The command line as typed.
pub(crate) fn command_line() -> String {
    std::env::args().collect::<Vec<_>>().join(" ")
}

/// Moves every shard's interval into its total and into `acc` (emptied first), and returns the
/// backlog, busy and active connections. The histograms are emptied in place, not replaced:
/// a fresh set is three 270 KB allocations per shard and interval, whose pages the kernel
/// then faults in one by one.
fn collect_interval(shared: &Shared, acc: &mut Acc) -> (usize, usize, usize) {
    acc.reset();
    let (mut queue, mut busy, mut active) = (0, 0, 0);
    for s in &shared.shards {
        let mut sh = s.lock().expect("shard");
        let sh = &mut *sh;
        sh.total.add(&sh.interval);
        acc.add(&sh.interval);
        sh.interval.reset();
        queue += sh.queue;
        busy += sh.busy;
        active += sh.active;
    }
    (queue, busy, active)
}

fn collect_total(shared: &Shared) -> Acc {
    let mut acc = Acc::default();
    for s in &shared.shards {
        let sh = s.lock().expect("shard");
        // what the client threads recorded after the last interval was taken counts too
        acc.add(&sh.total);
        acc.add(&sh.interval);
    }
    acc
}

fn status(conn: &mut Option<Blocking>) -> BTreeMap<String, f64> {
    match conn.as_mut().map(|c| c.rows("SHOW GLOBAL STATUS")) {
        Some(Ok(rows)) => numeric(&rows),
        Some(Err(e)) => {
            eprintln!("tpbed-load: side connection failed, no more server gauges: {e}");
            *conn = None;
            BTreeMap::new()
        }
        None => BTreeMap::new(),
    }
}

fn max_proc(a: Option<ProcSample>, b: Option<ProcSample>) -> Option<ProcSample> {
    match (a, b) {
        (Some(a), Some(b)) => Some(ProcSample {
            threads: a.threads.max(b.threads),
            rss_kb: a.rss_kb.max(b.rss_kb),
            cpu_secs: a.cpu_secs.max(b.cpu_secs),
            pool_ch_threads: a.pool_ch_threads.max(b.pool_ch_threads),
        }),
        (x, None) | (None, x) => x,
    }
}

/// The side connection that samples the server's status counters, when gauges are asked for.
fn gauge_connection(load: &Load) -> Option<Blocking> {
    if !load.gauges {
        return None;
    }
    match Blocking::connect(load.engine.addr, &load.engine.login, &load.wires) {
        Ok(c) => Some(c),
        Err(e) => {
            eprintln!("tpbed-load: no server gauges: {e}");
            None
        }
    }
}

/// sysbench's opening lines, printed before the run starts.
fn print_banner(load: &Load, rate_mode: bool) {
    println!(
        "tpbed-load {} (sysbench-compatible report; workload {})",
        env!("CARGO_PKG_VERSION"),
        load.workload
    );
    println!();
    println!("Running the test with following options:");
    println!("Number of threads: {}", load.engine.connections);
    if rate_mode {
        println!("Target transaction rate: {}/sec", load.engine.rate);
    }
    if load.report_interval > 0 {
        println!(
            "Report intermediate results every {} second(s)",
            load.report_interval
        );
    }
    println!(
        "Client event-loop threads (tpbed-load): {}",
        load.engine
            .client_threads
            .min(load.engine.connections.max(1))
    );
    println!();
    println!("Initializing worker threads...");
    println!();
    let _ = std::io::stdout().flush();
}

/// One interval's server gauges: the shown status counters, the deltas of row-lock waits and
/// questions since the previous interval, and the server process's threads and RSS.
fn interval_gauges(
    st: &BTreeMap<String, f64>,
    prev_status: &BTreeMap<String, f64>,
    proc: Option<ProcSample>,
) -> Vec<(String, f64)> {
    let mut gauges: Vec<(String, f64)> = SHOWN
        .iter()
        .filter_map(|k| st.get(*k).map(|v| (k.to_string(), *v)))
        .collect();
    // tpbed's pool levels, when the server has its pool (the lab's matrices keep their largest)
    for (k, _) in crate::gauges::POOL_LEVELS {
        if let Some(v) = st.get(*k) {
            gauges.push((k.to_string(), *v));
        }
    }
    for k in ["Innodb_row_lock_waits", "Questions"] {
        if let (Some(a), Some(b)) = (st.get(k), prev_status.get(k)) {
            gauges.push((format!("{k}_delta"), a - b));
        }
    }
    if let Some(p) = proc {
        gauges.push(("server_os_threads".into(), p.threads as f64));
        gauges.push((
            "server_rss_mb".into(),
            (p.rss_kb as f64 / 1024.0 * 10.0).round() / 10.0,
        ));
    }
    gauges
}

/// Runs `load` and returns its report (a fatal error is inside the report).
pub(crate) fn run(load: Load) -> Report {
    let machine = Machine::collect();
    let mut side = gauge_connection(&load);
    let mut server = ServerInfo {
        pid: load.server_pid,
        cpus: load
            .server_pid
            .map(|p| affinity(Some(p)))
            .unwrap_or_default(),
        ..Default::default()
    };
    if let Some(c) = side.as_mut() {
        server.variables = c
            .rows("SHOW GLOBAL VARIABLES")
            .map(|r| pairs(&r))
            .unwrap_or_default();
    }
    let rate_mode = load.engine.rate > 0.0;
    let live = load.live && load.format == Format::Text;
    if live {
        print_banner(&load, rate_mode);
    }
    let engine = Engine::start(
        load.engine.clone(),
        load.scripts.clone(),
        load.wires.clone(),
    );
    let connect_secs = engine.go();
    if live {
        println!("Threads started!");
        println!();
        let _ = std::io::stdout().flush();
    }
    let shared = engine.shared.clone();
    let measure_start = *shared.measure_start.get().expect("measure start");
    // warmup: wait, then discard what the interval accumulators gathered (the client threads
    // unpark this thread when they drain or fail, so it sleeps until the time it waits for)
    while Instant::now() < measure_start
        && !engine.drained()
        && !shared.stop.load(std::sync::atomic::Ordering::Relaxed)
    {
        std::thread::park_timeout(measure_start.saturating_duration_since(Instant::now()));
    }
    let mut acc = Acc::default();
    let _ = collect_interval(&shared, &mut acc);
    server.status_before = status(&mut side);
    server.proc_before = load.server_pid.and_then(proc_sample);
    server.proc_max = server.proc_before;
    let counting = load.server_pid.map(crate::kernel_counts::Counting::start);
    let cpu0 = self_cpu_secs();
    let tick = Duration::from_secs(if load.report_interval > 0 {
        load.report_interval
    } else {
        1
    });
    let end = engine.end();
    let mut intervals = Vec::new();
    let mut next = measure_start + tick;
    let mut last = measure_start;
    let mut prev_status = server.status_before.clone();
    loop {
        let now = Instant::now();
        let stop_at = end.map_or(next, |e| e.min(next));
        if now < stop_at && !engine.drained() && shared.fatal.lock().expect("fatal").is_none() {
            std::thread::park_timeout(stop_at - now);
            continue;
        }
        let at_end = end.is_some_and(|e| now >= e)
            || engine.drained()
            || shared.fatal.lock().expect("fatal").is_some();
        if now >= next || at_end {
            let (queue, busy, active) = collect_interval(&shared, &mut acc);
            let st = status(&mut side);
            let proc = load.server_pid.and_then(proc_sample);
            server.proc_max = max_proc(server.proc_max, proc);
            let gauges = interval_gauges(&st, &prev_status, proc);
            if !st.is_empty() {
                prev_status = st;
            }
            let secs = now.duration_since(last).as_secs_f64();
            let sample = IntervalSample {
                t: now.duration_since(measure_start).as_secs_f64(),
                secs,
                threads: active,
                lat: LatMs::of(&acc.lat, load.percentile),
                c: std::mem::take(&mut acc.c),
                queue,
                concurrency: busy,
                gauges,
            };
            let full = secs >= tick.as_secs_f64() * 0.5;
            if live && load.report_interval > 0 && full {
                println!("{}", interval_line(&sample, load.percentile, rate_mode));
                if let Some(g) = gauge_line(&sample) {
                    println!("{g}");
                }
                let _ = std::io::stdout().flush();
            }
            if full || sample.c.events > 0 {
                intervals.push(sample);
            }
            last = now;
            next += tick;
        }
        if at_end {
            break;
        }
    }
    let client_cpu_secs = self_cpu_secs() - cpu0;
    server.status_after = status(&mut side);
    server.proc_after = load.server_pid.and_then(proc_sample);
    server.proc_max = max_proc(server.proc_max, server.proc_after);
    server.kernel = counting.map(|c| c.and_then(crate::kernel_counts::Counting::finish));
    engine.stop();
    let res = engine.join(connect_secs);
    let total = collect_total(&shared);
    let fatal = shared.fatal.lock().expect("fatal").clone();
    let client_threads = shared.shards.len();
    if let Some(c) = side {
        c.quit();
    }
    if live {
        println!();
    }
    Report {
        workload: load.workload,
        command_line: command_line(),
        threads: load.engine.connections,
        client_threads,
        io: load.engine.io.name(),
        rate: load.engine.rate,
        open_loop: load.engine.loop_mode == LoopMode::Open,
        percentile: load.percentile,
        warmup: load.engine.warmup.as_secs(),
        total,
        secs: res.measured_secs,
        connect_secs: res.connect_secs,
        fairness: res.fairness,
        intervals,
        machine,
        server,
        client_cpu_secs,
        fatal,
        metrics: WorkloadMetrics::default(),
    }
    .with_totals()
}

/// Prints (and with `--out` writes) the report in the chosen format.
pub(crate) fn emit(
    report: &Report,
    format: Format,
    out: Option<&std::path::Path>,
) -> Result<(), String> {
    let text = match format {
        Format::Text => report.text(),
        Format::Json => report.json() + "\n",
        Format::Csv => report.csv(),
    };
    print!("{text}");
    let _ = std::io::stdout().flush();
    if let Some(p) = out {
        std::fs::write(p, &text).map_err(|e| format!("writing {}: {e}", p.display()))?;
    }
    Ok(())
}
