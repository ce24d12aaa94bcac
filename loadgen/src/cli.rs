//! Command line: sysbench's commands (prepare, run, cleanup) and tpbed-load's own (labelled
//! "ours"), each taking the options of `options`.

use clap::{Parser, Subcommand};

use crate::options::SysbenchArgs;

/// tpbed-load: a sysbench-compatible and job-queue load generator for MySQL-protocol servers.
#[derive(Debug, Parser)]
#[command(name = "tpbed-load", version, about, long_about = None, args_override_self = true)]
pub(crate) struct Cli {
    /// What to do.
    #[command(subcommand)]
    pub(crate) command: Command,
}

/// The sub-commands.
#[derive(Debug, Subcommand)]
pub(crate) enum Command {
    /// Create and fill the sbtest tables (sysbench `prepare`).
    Prepare(SysbenchArgs),
    /// Run a sysbench OLTP workload (sysbench `run`).
    Run(SysbenchArgs),
    /// Drop the sbtest tables (sysbench `cleanup`).
    Cleanup(SysbenchArgs),
    /// Job-queue workload: producers insert jobs, workers claim, work and complete them (ours).
    Queue(crate::queue::QueueArgs),
    /// TPC-C with sysbench-tpcc's schema: `tpcc prepare|run|check|cleanup` (ours).
    Tpcc(crate::tpcc::TpccArgs),
    /// Long statements (a fraction of events) mixed among short point selects (ours).
    Mixed(crate::extra::MixedArgs),
    /// N idle connections held open while M connections run point selects (ours).
    Idle(crate::extra::IdleArgs),
    /// A matrix of --threads x server configurations, with a Markdown report and SVG plots (ours).
    Sweep(crate::sweep::SweepArgs),
    /// Start tpbed-server in both thread-handling modes and compare them on oltp_read_only (ours).
    Demo(crate::demo::DemoArgs),
    /// The lab: list, show and run experiments that reproduce published findings (ours).
    Experiment(crate::lab::ExperimentArgs),
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dist::RandType;
    use crate::options::*;

    fn parse(args: &[&str]) -> Cli {
        Cli::try_parse_from(std::iter::once("tpbed-load").chain(args.iter().copied())).unwrap()
    }

    fn sysbench(cli: Cli) -> SysbenchArgs {
        match cli.command {
            Command::Run(mut a) | Command::Prepare(mut a) | Command::Cleanup(mut a) => {
                a.normalize();
                a
            }
            other => panic!("not a sysbench command: {other:?}"),
        }
    }

    #[test]
    fn defaults_are_sysbench_defaults() {
        let a = sysbench(parse(&["run"]));
        assert_eq!(a.workload, Workload::OltpReadOnly);
        assert_eq!(
            (a.oltp.tables, a.oltp.table_size, a.oltp.range_size),
            (1, 10_000, 100)
        );
        assert_eq!(a.oltp.point_selects, 10);
        assert_eq!(
            (
                a.oltp.simple_ranges,
                a.oltp.sum_ranges,
                a.oltp.order_ranges,
                a.oltp.distinct_ranges
            ),
            (1, 1, 1, 1)
        );
        assert_eq!(
            (
                a.oltp.index_updates,
                a.oltp.non_index_updates,
                a.oltp.delete_inserts
            ),
            (1, 1, 1)
        );
        assert!(!a.oltp.skip_trx && a.oltp.range_selects && a.oltp.auto_inc);
        assert_eq!((a.run.threads, a.run.time, a.run.events), (1, 10, 0));
        assert_eq!(a.run.rate, 0.0);
        assert_eq!(a.run.percentile, 95.0);
        assert_eq!(a.run.ps_mode, PsMode::Auto);
        assert_eq!(a.rand.rand_type, RandType::Special);
        assert_eq!(
            (a.rand.spec_iter, a.rand.spec_pct, a.rand.spec_res),
            (12, 1, 75)
        );
        assert_eq!(
            a.conn.ignore_errors,
            IgnoreList::Codes(vec![1213, 1020, 1205])
        );
        assert_eq!(
            (a.conn.user.as_str(), a.conn.db.as_str()),
            ("sbtest", "sbtest")
        );
    }

    #[test]
    fn sysbench_spellings_parse() {
        let a = sysbench(parse(&[
            "run",
            "--workload=oltp_point_select",
            "--tables=4",
            "--table_size=100000",
            "--threads=64",
            "--time=15",
            "--rate=2000",
            "--report-interval=1",
            "--rand-type=uniform",
            "--db-ps-mode=disable",
            "--skip-trx=on",
            "--mysql-ignore-errors=all",
            "--mysql-port=3307",
            "--mysql-password=sbtest",
        ]));
        assert_eq!(a.workload, Workload::OltpPointSelect);
        assert_eq!((a.oltp.tables, a.oltp.table_size), (4, 100_000));
        assert_eq!(
            (a.run.threads, a.run.time, a.run.rate, a.run.report_interval),
            (64, 15, 2000.0, 1)
        );
        assert_eq!(a.rand.rand_type, RandType::Uniform);
        assert_eq!(a.run.ps_mode, PsMode::Disable);
        assert!(a.oltp.skip_trx);
        assert!(a.conn.ignore_errors.contains(1062));
        assert_eq!(a.conn.port, 3307);
    }

    #[test]
    fn positional_script_name_like_sysbench() {
        let a = sysbench(parse(&["run", "oltp_point_select", "--threads=8"]));
        assert_eq!(a.workload, Workload::OltpPointSelect);
        assert_eq!(a.run.threads, 8);
    }

    #[test]
    fn every_script_name_is_accepted() {
        for name in [
            "oltp_point_select",
            "oltp_read_only",
            "oltp_read_write",
            "oltp_write_only",
            "oltp_update_index",
            "oltp_update_non_index",
            "oltp_insert",
            "oltp_delete",
            "select_random_points",
            "select_random_ranges",
            "bulk_insert",
        ] {
            let a = sysbench(parse(&["prepare", "--workload", name]));
            assert_eq!(a.workload.name(), name);
        }
    }

    #[test]
    fn bad_values_are_rejected() {
        let bad = |args: &[&str]| {
            Cli::try_parse_from(std::iter::once("tpbed-load").chain(args.iter().copied())).is_err()
        };
        assert!(bad(&["run", "--workload=oltp_nothing"]));
        assert!(bad(&["run", "--rand-type=zipf"]));
        assert!(bad(&["run", "--mysql-ignore-errors=12x"]));
        assert!(bad(&["run", "--skip-trx=maybe"]));
    }

    #[test]
    fn ignore_list_parsing() {
        assert_eq!(
            parse_ignore("1213, 1205").unwrap(),
            IgnoreList::Codes(vec![1213, 1205])
        );
        assert_eq!(parse_ignore("none").unwrap(), IgnoreList::Codes(vec![]));
        assert!(!parse_ignore("1213").unwrap().contains(1062));
        assert!(parse_ignore("ALL").unwrap().contains(1062));
    }
}
