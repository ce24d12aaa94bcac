//! tpbed-load: a sysbench-compatible and job-queue load generator for MySQL-protocol servers,
//! event-driven (many connections per client thread), closed or open loop.

mod blocking;
mod cli;
mod conn;
mod demo;
mod dist;
mod engine;
mod extra;
mod gauges;
mod json;
mod kernel_counts;
mod lab;
#[cfg(test)]
mod loop_tests;
mod machine;
#[cfg(test)]
mod mariadb_tests;
mod metrics;
mod oltp;
mod options;
mod plot;
mod queue;
mod report;
mod runner;
mod script;
mod session;
mod stats;
#[cfg(test)]
mod stub;
mod sweep;
mod sysbench;
mod tpcc;
mod worker;

use clap::Parser;

use crate::cli::{Cli, Command};

fn main() {
    let mut cli = Cli::parse();
    if let Command::Prepare(a) | Command::Run(a) | Command::Cleanup(a) = &mut cli.command {
        a.normalize();
    }
    // before any thread exists: the load runs in a session (scheduling group) of its own
    session::detach();
    machine::raise_nofile();
    let wires = sysbench::wires();
    let result = match &cli.command {
        Command::Prepare(a) => sysbench::prepare(a, &wires),
        Command::Cleanup(a) => sysbench::cleanup(a, &wires),
        Command::Run(a) => sysbench::run_cmd(a, &wires, true).and_then(fatal),
        Command::Queue(a) => queue::queue_cmd(a, &wires).and_then(fatal),
        Command::Mixed(a) => extra::mixed_cmd(a, &wires).and_then(fatal),
        Command::Idle(a) => extra::idle_cmd(a, &wires).and_then(fatal),
        Command::Tpcc(a) => tpcc::tpcc_cmd(a, &wires),
        Command::Sweep(a) => sweep::sweep_cmd(a, &wires),
        Command::Demo(a) => demo::demo_cmd(a, &wires),
        Command::Experiment(a) => lab::experiment_cmd(a, &wires),
    };
    if let Err(e) = result {
        eprintln!("tpbed-load: FATAL: {e}");
        std::process::exit(1);
    }
}

/// A run that ended on a fatal error fails the command.
fn fatal(r: report::Report) -> Result<(), String> {
    match r.fatal {
        Some(f) => Err(f),
        None => Ok(()),
    }
}
