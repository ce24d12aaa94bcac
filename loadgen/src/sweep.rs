//! `tpbed-load sweep`: a matrix of --threads x server configurations (existing endpoints or
//! start commands), with a progress bar, a Markdown report and SVG plots.

use std::fmt::Write as _;
use std::net::{SocketAddr, TcpListener};
use std::os::unix::process::CommandExt as _;
use std::path::{Path, PathBuf};
use std::process::{Child, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use clap::Args;
use indicatif::{ProgressBar, ProgressStyle};

use crate::blocking::Blocking;
use crate::conn::{Login, WireFactory};
use crate::dist::RandType;
use crate::machine::Machine;
use crate::options::{ConnArgs, OltpArgs, PsMode, SysbenchArgs, Workload};
use crate::plot::{line_chart, Chart, Series};
use crate::report::Report;
use crate::runner::loopback_addr;
use crate::sysbench::{cleanup_with, prepare_with, run_cmd};

/// `tpbed-load sweep` options.
#[derive(Debug, Clone, Args)]
pub(crate) struct SweepArgs {
    /// An existing server: NAME=HOST:PORT (loopback).
    #[arg(long = "server")]
    pub(crate) servers: Vec<String>,
    /// A server to start: 'NAME=COMMAND'; `{port}` in COMMAND becomes a free loopback port.
    #[arg(long = "server-cmd")]
    pub(crate) server_cmds: Vec<String>,
    /// Connection counts, comma-separated.
    #[arg(long, default_value = "8,64,256,1024")]
    pub(crate) threads: String,
    /// The sysbench script to run.
    #[arg(long, value_enum, default_value_t = Workload::OltpReadOnly)]
    pub(crate) workload: Workload,
    /// Seconds per cell.
    #[arg(long, default_value_t = 15)]
    pub(crate) time: u64,
    /// Ours: warmup seconds per cell.
    #[arg(long = "warmup-time", default_value_t = 0)]
    pub(crate) warmup_time: u64,
    /// Events per second (0: closed loop).
    #[arg(long, default_value_t = 0.0)]
    pub(crate) rate: f64,
    /// Prepared statements usage mode.
    #[arg(long = "db-ps-mode", value_enum, default_value_t = PsMode::Auto)]
    pub(crate) ps_mode: PsMode,
    /// Random numbers distribution.
    #[arg(long = "rand-type", value_enum, default_value_t = RandType::Uniform)]
    pub(crate) rand_type: RandType,
    /// Repeat the whole row of --threads this many times per server (medians reported).
    #[arg(long, default_value_t = 1)]
    pub(crate) passes: usize,
    /// Skip `prepare` (the tables already exist on every server).
    #[arg(long = "no-prepare")]
    pub(crate) no_prepare: bool,
    /// Output folder.
    #[arg(long, default_value = "tpbed-sweep")]
    pub(crate) out: PathBuf,
    /// Workload options.
    #[command(flatten)]
    pub(crate) oltp: OltpArgs,
    /// Connection options (host and port come from each server).
    #[command(flatten)]
    pub(crate) conn: ConnArgs,
}

/// Where a configuration's server is.
#[derive(Debug, Clone)]
pub(crate) enum Target {
    /// Already running.
    Endpoint(SocketAddr),
    /// Started by the sweep (shell command, `{port}` substituted).
    Command(String),
}

/// One named server configuration.
#[derive(Debug, Clone)]
pub(crate) struct ServerSpec {
    /// Its name in tables and plots.
    pub(crate) name: String,
    /// How to reach it.
    pub(crate) target: Target,
}

/// Parses `NAME=VALUE`.
pub(crate) fn split_named(s: &str) -> Result<(String, String), String> {
    let (n, v) = s
        .split_once('=')
        .ok_or_else(|| format!("expected NAME=VALUE, got {s:?}"))?;
    if n.is_empty() || v.is_empty() {
        return Err(format!("expected NAME=VALUE, got {s:?}"));
    }
    Ok((n.to_string(), v.to_string()))
}

/// Parses a comma list of connection counts.
pub(crate) fn parse_threads(s: &str) -> Result<Vec<usize>, String> {
    s.split(',')
        .map(|t| {
            t.trim()
                .parse::<usize>()
                .map_err(|e| format!("bad --threads entry {t:?}: {e}"))
        })
        .filter(|r| !matches!(r, Ok(0)))
        .collect()
}

/// A server this process started; stopped (SIGTERM, then SIGKILL) on drop.
#[derive(Debug)]
pub(crate) struct Managed {
    child: Child,
    /// Its address.
    pub(crate) addr: SocketAddr,
}

impl Managed {
    /// Runs `cmd` (through `sh -c exec`) with `{port}` replaced; logs go to `log`. The server
    /// gets a session of its own, so it does not share the client's scheduling group (see
    /// `session`), and is sent SIGTERM when the thread that started it ends.
    pub(crate) fn start(cmd: &str, log: &Path) -> Result<Managed, String> {
        let port = TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.local_addr())
            .map_err(|e| format!("no free port: {e}"))?
            .port();
        let cmd = cmd.replace("{port}", &port.to_string());
        let out = std::fs::File::create(log).map_err(|e| format!("{}: {e}", log.display()))?;
        let err = out.try_clone().map_err(|e| e.to_string())?;
        let mut command = std::process::Command::new("sh");
        command
            .arg("-c")
            .arg(format!("exec {cmd}"))
            .stdin(Stdio::null())
            .stdout(out)
            .stderr(err);
        // SAFETY: between fork and exec the closure only makes two system calls.
        unsafe {
            command.pre_exec(|| {
                nix::unistd::setsid()?;
                nix::sys::prctl::set_pdeathsig(nix::sys::signal::Signal::SIGTERM)?;
                Ok(())
            });
        }
        let child = command
            .spawn()
            .map_err(|e| format!("starting {cmd}: {e}"))?;
        Ok(Managed {
            child,
            addr: SocketAddr::from(([127, 0, 0, 1], port)),
        })
    }

    /// The server's PID.
    pub(crate) fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Waits until a login succeeds (or the process exits, or `timeout`).
    pub(crate) fn wait_ready(
        &mut self,
        login: &Login,
        wires: &Arc<WireFactory>,
        timeout: Duration,
    ) -> Result<(), String> {
        let until = Instant::now() + timeout;
        let mut last = String::new();
        while Instant::now() < until {
            if let Ok(Some(st)) = self.child.try_wait() {
                return Err(format!("server exited early ({st})"));
            }
            match Blocking::connect(self.addr, login, wires) {
                Ok(c) => {
                    c.quit();
                    return Ok(());
                }
                Err(e) => last = e,
            }
            std::thread::sleep(Duration::from_millis(200));
        }
        Err(format!("server not ready after {timeout:?}: {last}"))
    }
}

impl Drop for Managed {
    fn drop(&mut self) {
        let pid = nix::unistd::Pid::from_raw(self.child.id() as i32);
        let _ = nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGTERM);
        let until = Instant::now() + Duration::from_secs(30);
        while Instant::now() < until {
            if let Ok(Some(_)) = self.child.try_wait() {
                return;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A planned sweep.
#[derive(Debug, Clone)]
pub(crate) struct Plan {
    /// Server configurations, run one after another.
    pub(crate) servers: Vec<ServerSpec>,
    /// Connection counts.
    pub(crate) threads: Vec<usize>,
    /// Passes per server.
    pub(crate) passes: usize,
    /// Template of every cell's `run` (host, port, threads overwritten).
    pub(crate) template: SysbenchArgs,
    /// Run `prepare` on each server first.
    pub(crate) prepare: bool,
    /// Create the database first (for fresh servers).
    pub(crate) create_db: bool,
    /// Output folder.
    pub(crate) out: PathBuf,
    /// Title of the report.
    pub(crate) title: String,
}

/// One measured cell.
#[derive(Debug, Clone)]
pub(crate) struct Cell {
    /// Server name.
    pub(crate) server: String,
    /// Connections.
    pub(crate) threads: usize,
    /// The run's report.
    pub(crate) report: Report,
}

/// The default `run` arguments (every option at its default).
pub(crate) fn default_sysbench_args() -> SysbenchArgs {
    SysbenchArgs::defaults()
}

fn server_label(s: &ServerSpec) -> String {
    match &s.target {
        Target::Endpoint(a) => format!("existing server at {a}"),
        Target::Command(c) => format!("started with `{c}`"),
    }
}

/// Runs the plan; returns every cell (a failed cell is reported and skipped).
pub(crate) fn run_plan(plan: &Plan, wires: &Arc<WireFactory>) -> Result<Vec<Cell>, String> {
    std::fs::create_dir_all(plan.out.join("runs"))
        .map_err(|e| format!("{}: {e}", plan.out.display()))?;
    let total = (plan.servers.len() * plan.threads.len() * plan.passes) as u64;
    let bar = ProgressBar::new(total);
    bar.set_style(
        ProgressStyle::with_template("{spinner} [{elapsed_precise}] {bar:30} {pos}/{len} {msg}")
            .map_err(|e| e.to_string())?,
    );
    let mut cells = Vec::new();
    let t = &plan.template;
    let login = Login {
        user: t.conn.user.clone(),
        password: t.conn.password.clone(),
        db: t.conn.db.clone(),
    };
    let no_db = Login {
        db: String::new(),
        ..login.clone()
    };
    for spec in &plan.servers {
        bar.set_message(format!("{}: starting", spec.name));
        let mut managed = None;
        let addr = match &spec.target {
            Target::Endpoint(a) => *a,
            Target::Command(cmd) => {
                let log = plan.out.join(format!("{}.server.log", spec.name));
                let mut m = Managed::start(cmd, &log)?;
                m.wait_ready(&no_db, wires, Duration::from_secs(90))
                    .map_err(|e| format!("{}: {e} (log: {})", spec.name, log.display()))?;
                let a = m.addr;
                managed = Some(m);
                a
            }
        };
        if plan.create_db {
            let mut c = Blocking::connect(addr, &no_db, wires)?;
            c.exec(&format!("CREATE DATABASE IF NOT EXISTS {}", t.conn.db))?;
            c.quit();
        }
        let mut args = t.clone();
        args.conn.host = addr.ip().to_string();
        args.conn.port = addr.port();
        args.run.server_pid = managed.as_ref().map(Managed::pid);
        if plan.prepare {
            bar.set_message(format!("{}: prepare", spec.name));
            args.run.threads = 4;
            cleanup_with(&args, wires, false)
                .and_then(|()| prepare_with(&args, wires, false))
                .map_err(|e| format!("{}: prepare: {e}", spec.name))?;
        }
        for pass in 1..=plan.passes {
            for &threads in &plan.threads {
                bar.set_message(format!(
                    "{}: {} connections (pass {pass})",
                    spec.name, threads
                ));
                args.run.threads = threads;
                match run_cmd(&args, wires, false) {
                    Ok(r) => {
                        let f = plan
                            .out
                            .join("runs")
                            .join(format!("{}-{threads}-p{pass}.json", spec.name));
                        std::fs::write(&f, r.json())
                            .map_err(|e| format!("{}: {e}", f.display()))?;
                        if let Some(e) = &r.fatal {
                            bar.println(format!(
                                "{} at {threads}: run ended early: {e}",
                                spec.name
                            ));
                        }
                        cells.push(Cell {
                            server: spec.name.clone(),
                            threads,
                            report: r,
                        });
                    }
                    Err(e) => bar.println(format!("{} at {threads}: {e}", spec.name)),
                }
                bar.inc(1);
                // let the server retire the previous run's connections
                std::thread::sleep(Duration::from_millis(500));
            }
        }
        drop(managed);
    }
    bar.finish_with_message("done");
    Ok(cells)
}

/// The median cell (by QPS) of each (server, threads).
pub(crate) fn medians<'a>(plan: &Plan, cells: &'a [Cell]) -> Vec<(String, usize, &'a Cell)> {
    let mut out = Vec::new();
    for s in &plan.servers {
        for &t in &plan.threads {
            let mut v: Vec<&Cell> = cells
                .iter()
                .filter(|c| c.server == s.name && c.threads == t)
                .collect();
            v.sort_by(|a, b| a.report.qps().total_cmp(&b.report.qps()));
            if let Some(c) = v.get(v.len() / 2) {
                out.push((s.name.clone(), t, *c));
            }
        }
    }
    out
}

fn tr_max(r: &Report) -> String {
    r.intervals
        .iter()
        .flat_map(|s| s.gauges.iter())
        .filter(|(k, _)| k == "Threads_running")
        .map(|(_, v)| *v)
        .reduce(f64::max)
        .map_or("-".into(), |v| format!("{v:.0}"))
}

/// The comparison table (rows: connections; columns: server x QPS, TPS, avg, p95, p99, max,
/// Threads_running max), plus a QPS ratio column for two servers.
pub(crate) fn table(plan: &Plan, cells: &[Cell]) -> String {
    let med = medians(plan, cells);
    let mut o = String::new();
    let names: Vec<&str> = plan.servers.iter().map(|s| s.name.as_str()).collect();
    let _ = write!(o, "| connections |");
    for n in &names {
        let _ = write!(o, " {n} QPS | {n} TPS | {n} avg ms | {n} p95 ms | {n} p99 ms | {n} max ms | {n} Threads_running max |");
    }
    if names.len() == 2 {
        let _ = write!(o, " QPS {} / {} |", names[1], names[0]);
    }
    let _ = writeln!(o);
    let _ = write!(o, "|---:|");
    for _ in &names {
        let _ = write!(o, "---:|---:|---:|---:|---:|---:|---:|");
    }
    if names.len() == 2 {
        let _ = write!(o, "---:|");
    }
    let _ = writeln!(o);
    for &t in &plan.threads {
        let _ = write!(o, "| {t} |");
        let mut qps = Vec::new();
        for n in &names {
            match med.iter().find(|(s, th, _)| s == n && *th == t) {
                Some((_, _, c)) => {
                    let r = &c.report;
                    let l = r.lat();
                    qps.push(r.qps());
                    let _ = write!(
                        o,
                        " {:.0} | {:.1} | {:.2} | {:.2} | {:.2} | {:.2} | {} |",
                        r.qps(),
                        r.tps(),
                        l.avg,
                        l.p95,
                        l.p99,
                        l.max,
                        tr_max(r)
                    );
                }
                None => {
                    qps.push(f64::NAN);
                    let _ = write!(o, " failed | | | | | | |");
                }
            }
        }
        if names.len() == 2 {
            let ratio = qps[1] / qps[0];
            let _ = write!(
                o,
                " {} |",
                if ratio.is_finite() {
                    format!("{ratio:.2}")
                } else {
                    "-".into()
                }
            );
        }
        let _ = writeln!(o);
    }
    o
}

/// report.md's "Servers" section: each server with its CPUs and the variables that tell the
/// runs apart, read from its median cell.
fn servers_section(plan: &Plan, med: &[(String, usize, &Cell)]) -> String {
    let mut md = String::new();
    let _ = writeln!(md, "## Servers\n");
    for s in &plan.servers {
        let vars = med
            .iter()
            .find(|(n, _, _)| *n == s.name)
            .map(|(_, _, c)| {
                let keep = [
                    "version",
                    "thread_handling",
                    "thread_pool_size",
                    "max_connections",
                    "max_prepared_stmt_count",
                ];
                c.report
                    .server
                    .variables
                    .iter()
                    .filter(|(k, _)| keep.contains(&k.as_str()) || k.starts_with("tpbed_"))
                    .map(|(k, v)| format!("{k}={v}"))
                    .collect::<Vec<_>>()
                    .join(", ")
            })
            .unwrap_or_default();
        let cpus = med
            .iter()
            .find(|(n, _, _)| *n == s.name)
            .map(|(_, _, c)| c.report.server.cpus.clone())
            .unwrap_or_default();
        let _ = writeln!(
            md,
            "- **{}**: {}; server CPUs: {}; {}",
            s.name,
            server_label(s),
            if cpus.is_empty() { "-" } else { &cpus },
            vars
        );
    }
    md
}

/// Writes report.md and the SVG plots into the plan's folder; returns the report's path.
pub(crate) fn write_outputs(plan: &Plan, cells: &[Cell]) -> Result<PathBuf, String> {
    let med = medians(plan, cells);
    let per_server = |f: &dyn Fn(&Report) -> f64| -> Vec<Series> {
        plan.servers
            .iter()
            .map(|s| Series {
                label: s.name.clone(),
                points: med
                    .iter()
                    .filter(|(n, _, _)| *n == s.name)
                    .map(|(_, t, c)| (*t as f64, f(&c.report)))
                    .collect(),
                passes: Vec::new(),
            })
            .collect()
    };
    let wl = plan.template.workload.name();
    line_chart(
        &plan.out.join("throughput.svg"),
        &Chart {
            title: &format!("{wl}: throughput"),
            x_label: "connections",
            y_label: "queries/s",
            log_x: true,
            log_y: false,
        },
        &per_server(&|r| r.qps()),
    )?;
    let mut lat = Vec::new();
    for (what, f) in [
        ("p99", (|r: &Report| r.lat().p99) as fn(&Report) -> f64),
        ("max", |r: &Report| r.lat().max),
    ] {
        for mut s in per_server(&f) {
            s.label = format!("{} {what}", s.label);
            lat.push(s);
        }
    }
    line_chart(
        &plan.out.join("latency.svg"),
        &Chart {
            title: &format!("{wl}: event latency (p99 and max)"),
            x_label: "connections",
            y_label: "ms",
            log_x: true,
            log_y: true,
        },
        &lat,
    )?;
    let timeline: Vec<Series> = med
        .iter()
        .map(|(n, t, c)| Series {
            label: format!("{n} @{t}"),
            points: c
                .report
                .intervals
                .iter()
                .map(|s| (s.t, s.c.queries() as f64 / s.secs.max(1e-9)))
                .collect(),
            passes: Vec::new(),
        })
        .collect();
    line_chart(
        &plan.out.join("timeline.svg"),
        &Chart {
            title: &format!("{wl}: queries/s per interval"),
            x_label: "seconds",
            y_label: "queries/s",
            log_x: false,
            log_y: false,
        },
        &timeline,
    )?;
    let m = Machine::collect();
    let mut md = String::new();
    let _ = writeln!(md, "# {}\n", plan.title);
    let _ = writeln!(
        md,
        "Workload `{wl}` ({} tables x {} rows, --rand-type={}, --db-ps-mode={}), {} s per cell, {} pass(es) per server (median by QPS shown); {}.\n",
        plan.template.oltp.tables,
        plan.template.oltp.table_size,
        format!("{:?}", plan.template.rand.rand_type).to_lowercase(),
        format!("{:?}", plan.template.run.ps_mode).to_lowercase(),
        plan.template.run.time,
        plan.passes,
        cells.first().map_or("closed loop".to_string(), |c| c.report.latency_basis())
    );
    let _ = writeln!(md, "## Machine\n");
    let _ = writeln!(
        md,
        "- cores: {}; CPU: {}; kernel: {}",
        m.cores, m.model, m.kernel
    );
    let _ = writeln!(
        md,
        "- tpbed-load CPUs: {}; git revision: {}",
        m.client_cpus, m.git_rev
    );
    let _ = writeln!(
        md,
        "- client and server share the machine; nothing else is controlled\n"
    );
    md.push_str(&servers_section(plan, &med));
    let _ = writeln!(md, "\n## Results\n");
    md.push_str(&table(plan, cells));
    let _ = writeln!(
        md,
        "\nLatency is per event (one transaction); QPS counts every statement.\n"
    );
    let _ = writeln!(
        md,
        "![throughput](throughput.svg)\n\n![latency](latency.svg)\n\n![timeline](timeline.svg)\n"
    );
    let _ = writeln!(
        md,
        "Per-run JSON (with every SHOW GLOBAL VARIABLES row and status deltas): `runs/`."
    );
    let path = plan.out.join("report.md");
    std::fs::write(&path, md).map_err(|e| format!("{}: {e}", path.display()))?;
    Ok(path)
}

/// `tpbed-load sweep`.
pub(crate) fn sweep_cmd(a: &SweepArgs, wires: &Arc<WireFactory>) -> Result<(), String> {
    let mut servers = Vec::new();
    for s in &a.servers {
        let (name, ep) = split_named(s)?;
        let (host, port) = ep
            .rsplit_once(':')
            .ok_or_else(|| format!("{s}: expected NAME=HOST:PORT"))?;
        let port = port.parse::<u16>().map_err(|e| format!("{s}: {e}"))?;
        servers.push(ServerSpec {
            name,
            target: Target::Endpoint(loopback_addr(host, port)?),
        });
    }
    for s in &a.server_cmds {
        let (name, cmd) = split_named(s)?;
        servers.push(ServerSpec {
            name,
            target: Target::Command(cmd),
        });
    }
    if servers.is_empty() {
        return Err(
            "give at least one --server NAME=HOST:PORT or --server-cmd 'NAME=COMMAND'".into(),
        );
    }
    let mut template = default_sysbench_args();
    template.workload = a.workload;
    template.oltp = a.oltp.clone();
    template.conn = a.conn.clone();
    template.run.time = a.time;
    template.run.warmup_time = a.warmup_time;
    template.run.rate = a.rate;
    template.run.ps_mode = a.ps_mode;
    template.run.report_interval = 1;
    template.rand.rand_type = a.rand_type;
    let plan = Plan {
        servers,
        threads: parse_threads(&a.threads)?,
        passes: a.passes.max(1),
        template,
        prepare: !a.no_prepare,
        create_db: false,
        out: a.out.clone(),
        title: format!("tpbed-load sweep: {}", a.workload.name()),
    };
    let cells = run_plan(&plan, wires)?;
    println!("{}", table(&plan, &cells));
    let report = write_outputs(&plan, &cells)?;
    println!("report: {}", report.display());
    println!("tpbed-load sweep: results in {}", plan.out.display());
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_managed_server_runs_in_a_session_of_its_own() {
        let log = std::env::temp_dir().join(format!("tpbed-managed-{}.log", std::process::id()));
        let m = Managed::start("sleep 30 # {port}", &log).expect("start");
        let pid = nix::unistd::Pid::from_raw(m.pid() as i32);
        // spawn returns once the command was executed, so the session was started before it
        assert_eq!(nix::unistd::getsid(Some(pid)), Ok(pid));
        assert_ne!(nix::unistd::getsid(Some(pid)), nix::unistd::getsid(None));
        drop(m);
        let _ = std::fs::remove_file(&log);
    }

    #[test]
    fn parses_names_and_lists() {
        assert_eq!(
            split_named("pool=127.0.0.1:3307").unwrap(),
            ("pool".into(), "127.0.0.1:3307".into())
        );
        assert!(split_named("nope").is_err());
        assert_eq!(parse_threads("8, 64,1024").unwrap(), vec![8, 64, 1024]);
        assert!(parse_threads("8,x").is_err());
    }

    #[test]
    fn table_has_a_row_per_concurrency_and_a_ratio() {
        let mut plan = Plan {
            servers: vec![
                ServerSpec {
                    name: "a".into(),
                    target: Target::Endpoint("127.0.0.1:1".parse().unwrap()),
                },
                ServerSpec {
                    name: "b".into(),
                    target: Target::Endpoint("127.0.0.1:2".parse().unwrap()),
                },
            ],
            threads: vec![8, 64],
            passes: 1,
            template: default_sysbench_args(),
            prepare: false,
            create_db: false,
            out: PathBuf::from("/nonexistent"),
            title: "t".into(),
        };
        plan.passes = 1;
        let mk = |server: &str, threads: usize, q: u64| {
            let mut r = crate::report::tests::sample_report();
            r.total.c.reads = q;
            r.total.c.others = 0;
            Cell {
                server: server.into(),
                threads,
                report: r,
            }
        };
        let cells = vec![mk("a", 8, 1000), mk("b", 8, 2000), mk("a", 64, 1000)];
        let t = table(&plan, &cells);
        let rows: Vec<&str> = t.lines().collect();
        assert_eq!(rows.len(), 4);
        assert!(rows[0].contains("a QPS") && rows[0].contains("QPS b / a"));
        assert!(
            rows[2].starts_with("| 8 | 100 |") && rows[2].ends_with(" 2.00 |"),
            "{}",
            rows[2]
        );
        assert!(rows[3].contains("failed"));
    }
}
