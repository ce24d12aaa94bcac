//! `tpbed-load demo`: starts tpbed-server twice on loopback (one thread per connection, then
//! the thread pool), prepares a small dataset, runs oltp_read_only at 8/64/256/1024
//! connections, prints the comparison and writes report.md and SVG plots.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use clap::Args;

use crate::conn::WireFactory;
use crate::dist::RandType;
use crate::options::Workload;
use crate::sweep::{
    default_sysbench_args, parse_threads, run_plan, split_named, table, write_outputs, Plan,
    ServerSpec, Target,
};

/// `tpbed-load demo` options.
#[derive(Debug, Clone, Args)]
pub(crate) struct DemoArgs {
    /// The tpbed-server binary (default: next to tpbed-load, else on PATH).
    #[arg(long = "server-bin")]
    pub(crate) server_bin: Option<PathBuf>,
    /// Instead of tpbed-server, start these servers: 'NAME=COMMAND' with `{port}` (repeatable).
    #[arg(long = "server-cmd")]
    pub(crate) server_cmds: Vec<String>,
    /// Output folder.
    #[arg(long, default_value = "tpbed-demo")]
    pub(crate) out: PathBuf,
    /// Seconds per run.
    #[arg(long, default_value_t = 15)]
    pub(crate) time: u64,
    /// Connection counts.
    #[arg(long, default_value = "8,64,256,1024")]
    pub(crate) threads: String,
    /// Tables of the dataset.
    #[arg(long, default_value_t = 4)]
    pub(crate) tables: u32,
    /// Rows per table.
    #[arg(long = "table-size", default_value_t = 10_000)]
    pub(crate) table_size: u32,
    /// User to log in as.
    #[arg(long = "mysql-user", default_value = "root")]
    pub(crate) user: String,
    /// Password.
    #[arg(long = "mysql-password", default_value = "")]
    pub(crate) password: String,
}

/// The options the demo starts tpbed-server with (what its runs need).
pub(crate) const SERVER_OPTS: &str =
    "--bind-address=127.0.0.1 --max-connections=4000 --max-prepared-stmt-count=1048576";

/// Finds tpbed-server: `--server-bin`, next to this executable, then on PATH.
pub(crate) fn find_server(explicit: Option<&Path>) -> Result<PathBuf, String> {
    if let Some(p) = explicit {
        return if p.is_file() {
            Ok(p.to_path_buf())
        } else {
            Err(format!("--server-bin {} does not exist", p.display()))
        };
    }
    if let Some(dir) = std::env::current_exe()
        .ok()
        .and_then(|e| e.parent().map(Path::to_path_buf))
    {
        let p = dir.join("tpbed-server");
        if p.is_file() {
            return Ok(p);
        }
    }
    for dir in std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default()) {
        let p = dir.join("tpbed-server");
        if p.is_file() {
            return Ok(p);
        }
    }
    Err("tpbed-server not found next to tpbed-load or on PATH; build it (cargo build --release) or pass --server-bin".into())
}

/// The two server configurations of the demo.
pub(crate) fn demo_servers(bin: &Path) -> Vec<ServerSpec> {
    let quoted = format!("'{}'", bin.display().to_string().replace('\'', "'\\''"));
    ["one-thread-per-connection", "pool-of-threads"]
        .iter()
        .map(|mode| ServerSpec {
            name: if *mode == "pool-of-threads" {
                "pool".into()
            } else {
                "per-conn".into()
            },
            target: Target::Command(format!(
                "{quoted} --port={{port}} --thread-handling={mode} {SERVER_OPTS}"
            )),
        })
        .collect()
}

/// `tpbed-load demo`.
pub(crate) fn demo_cmd(a: &DemoArgs, wires: &Arc<WireFactory>) -> Result<(), String> {
    let servers = if a.server_cmds.is_empty() {
        demo_servers(&find_server(a.server_bin.as_deref())?)
    } else {
        a.server_cmds
            .iter()
            .map(|s| {
                split_named(s).map(|(name, cmd)| ServerSpec {
                    name,
                    target: Target::Command(cmd),
                })
            })
            .collect::<Result<_, _>>()?
    };
    let mut template = default_sysbench_args();
    template.workload = Workload::OltpReadOnly;
    template.oltp.tables = a.tables;
    template.oltp.table_size = a.table_size;
    template.conn.user = a.user.clone();
    template.conn.password = a.password.clone();
    template.run.time = a.time;
    template.run.report_interval = 1;
    template.rand.rand_type = RandType::Uniform;
    let plan = Plan {
        servers,
        threads: parse_threads(&a.threads)?,
        passes: 1,
        template,
        prepare: true,
        create_db: true,
        out: a.out.clone(),
        title: "tpbed-load demo: one thread per connection vs the thread pool".into(),
    };
    println!(
        "tpbed-load demo: {} server configuration(s) x {:?} connections, oltp_read_only, {} s each",
        plan.servers.len(),
        plan.threads,
        a.time
    );
    for s in &plan.servers {
        if let Target::Command(c) = &s.target {
            println!("  {}: {c}", s.name);
        }
    }
    let cells = run_plan(&plan, wires)?;
    println!();
    print!("{}", table(&plan, &cells));
    let report = write_outputs(&plan, &cells)?;
    println!();
    println!(
        "report: {} (plots: throughput.svg, latency.svg, timeline.svg)",
        report.display()
    );
    println!("tpbed-load demo: results in {}", plan.out.display());
    if cells.is_empty() {
        return Err("no run succeeded".into());
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn demo_starts_both_modes_with_the_limits_it_needs() {
        let s = demo_servers(Path::new("/opt/x/tpbed-server"));
        assert_eq!(s.len(), 2);
        let cmds: Vec<String> = s
            .iter()
            .map(|s| match &s.target {
                Target::Command(c) => c.clone(),
                Target::Endpoint(_) => unreachable!(),
            })
            .collect();
        assert!(cmds[0].contains("--thread-handling=one-thread-per-connection"));
        assert!(cmds[1].contains("--thread-handling=pool-of-threads"));
        for c in &cmds {
            assert!(c.starts_with("'/opt/x/tpbed-server' --port={port}"));
            assert!(
                c.contains("--max-connections=4000")
                    && c.contains("--max-prepared-stmt-count=1048576")
            );
            assert!(c.contains("--bind-address=127.0.0.1"));
        }
        assert!(find_server(Some(Path::new("/nonexistent/tpbed-server"))).is_err());
    }
}
