//! What a load run is, apart from how it is asked for: the workload (sysbench 1.0's scripts),
//! its options (connection, run, random numbers, the OLTP scripts' knobs) and their value
//! types, under sysbench's option names (tpbed-load's own labelled "ours"). The command line
//! and every command build on these.

use std::path::PathBuf;

use clap::{Args, Parser, ValueEnum};

use crate::dist::{DistParams, RandType};

/// The sysbench 1.0 OLTP scripts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
#[value(rename_all = "snake_case")]
pub(crate) enum Workload {
    /// One point SELECT per event.
    OltpPointSelect,
    /// BEGIN, point selects, four kinds of range SELECT, COMMIT.
    OltpReadOnly,
    /// oltp_read_only plus index/non-index UPDATEs and DELETE+INSERT.
    OltpReadWrite,
    /// BEGIN, UPDATEs, DELETE+INSERT, COMMIT.
    OltpWriteOnly,
    /// `UPDATE ... SET k=k+1` per event.
    OltpUpdateIndex,
    /// `UPDATE ... SET c=?` per event.
    OltpUpdateNonIndex,
    /// One text-protocol INSERT per event.
    OltpInsert,
    /// One DELETE per event.
    OltpDelete,
    /// `SELECT ... WHERE k IN (?, ...)` on sbtest1.
    SelectRandomPoints,
    /// `SELECT count(k) ... WHERE k BETWEEN ? AND ? OR ...` on sbtest1.
    SelectRandomRanges,
    /// One row per event into the thread's own table, sent as multi-row INSERTs.
    BulkInsert,
}

impl Workload {
    /// The sysbench script name.
    pub(crate) fn name(self) -> &'static str {
        match self {
            Workload::OltpPointSelect => "oltp_point_select",
            Workload::OltpReadOnly => "oltp_read_only",
            Workload::OltpReadWrite => "oltp_read_write",
            Workload::OltpWriteOnly => "oltp_write_only",
            Workload::OltpUpdateIndex => "oltp_update_index",
            Workload::OltpUpdateNonIndex => "oltp_update_non_index",
            Workload::OltpInsert => "oltp_insert",
            Workload::OltpDelete => "oltp_delete",
            Workload::SelectRandomPoints => "select_random_points",
            Workload::SelectRandomRanges => "select_random_ranges",
            Workload::BulkInsert => "bulk_insert",
        }
    }
}

/// `--db-ps-mode`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum PsMode {
    /// Server-side prepared statements (binary protocol) where the script uses them.
    Auto,
    /// Text protocol with the values inlined.
    Disable,
}

/// `--format` (ours).
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum Format {
    /// sysbench's text report.
    Text,
    /// One JSON document (per-interval lines included).
    Json,
    /// CSV: one row per interval, then a summary row.
    Csv,
}

/// `--loop` (ours): how `--rate` schedules events.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum LoopMode {
    /// Open loop: Poisson arrivals; an event waits for a free connection and its latency
    /// counts from its intended start (sysbench's `--rate` model, no coordinated omission).
    Open,
    /// Closed loop: each connection starts its next event when the previous one ends (paced by
    /// `--rate` if given, skipping missed slots); latency counts from the actual start.
    Closed,
}

/// `--io` (ours): how a client thread waits for and moves its connections' bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum IoMode {
    /// epoll readiness, one `sendto` and one `recvfrom` per statement.
    Epoll,
    /// io_uring: each statement's send and the connection's next receive are queued and the
    /// whole batch of the loop's connections is submitted by the `io_uring_enter` that also
    /// waits for the next completions. Connection set-up still uses epoll.
    Uring,
}

impl IoMode {
    /// Its name in reports.
    pub(crate) fn name(self) -> &'static str {
        match self {
            IoMode::Epoll => "epoll",
            IoMode::Uring => "io_uring",
        }
    }
}

/// Parses sysbench's boolean spellings (`on|off|true|false|1|0|yes|no`).
pub(crate) fn parse_bool(s: &str) -> Result<bool, String> {
    match s.to_ascii_lowercase().as_str() {
        "on" | "true" | "1" | "yes" => Ok(true),
        "off" | "false" | "0" | "no" => Ok(false),
        _ => Err(format!("expected on/off, got {s:?}")),
    }
}

/// Parses `--mysql-ignore-errors`: a comma list of codes, or `all`.
pub(crate) fn parse_ignore(s: &str) -> Result<IgnoreList, String> {
    if s.eq_ignore_ascii_case("all") {
        return Ok(IgnoreList::All);
    }
    if s.is_empty() || s.eq_ignore_ascii_case("none") {
        return Ok(IgnoreList::Codes(Vec::new()));
    }
    s.split(',')
        .map(|c| {
            c.trim()
                .parse::<u16>()
                .map_err(|e| format!("bad error code {c:?}: {e}"))
        })
        .collect::<Result<Vec<_>, _>>()
        .map(IgnoreList::Codes)
}

/// The error codes that restart an event instead of ending the run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum IgnoreList {
    /// Every error is ignored.
    All,
    /// Only these codes.
    Codes(Vec<u16>),
}

impl IgnoreList {
    /// Whether `code` is ignored.
    pub(crate) fn contains(&self, code: u16) -> bool {
        match self {
            IgnoreList::All => true,
            IgnoreList::Codes(c) => c.contains(&code),
        }
    }
}

/// `--mysql-*` connection options (sysbench's names).
#[derive(Debug, Clone, Args)]
pub(crate) struct ConnArgs {
    /// MySQL server host (loopback only: 127.0.0.0/8, localhost or ::1).
    #[arg(long = "mysql-host", default_value = "127.0.0.1")]
    pub(crate) host: String,
    /// MySQL server port.
    #[arg(long = "mysql-port", default_value_t = 3306)]
    pub(crate) port: u16,
    /// MySQL user.
    #[arg(long = "mysql-user", default_value = "sbtest")]
    pub(crate) user: String,
    /// MySQL password.
    #[arg(long = "mysql-password", default_value = "")]
    pub(crate) password: String,
    /// MySQL database name.
    #[arg(long = "mysql-db", default_value = "sbtest")]
    pub(crate) db: String,
    /// Error codes that restart the event (comma list or `all`).
    #[arg(long = "mysql-ignore-errors", default_value = "1213,1020,1205", value_parser = parse_ignore)]
    pub(crate) ignore_errors: IgnoreList,
}

/// sysbench's run options and tpbed-load's extensions.
#[derive(Debug, Clone, Args)]
pub(crate) struct RunArgs {
    /// Number of connections (sysbench: threads; each runs events back to back).
    #[arg(long, default_value_t = 1, alias = "num-threads")]
    pub(crate) threads: usize,
    /// Limit for total execution time in seconds (0: no limit, then --events must be set).
    #[arg(long, default_value_t = 10, alias = "max-time")]
    pub(crate) time: u64,
    /// Limit for total number of events (0: no limit).
    #[arg(long, default_value_t = 0, alias = "max-requests")]
    pub(crate) events: u64,
    /// Average event rate per second; 0 for unlimited (closed loop).
    #[arg(long, default_value_t = 0.0, alias = "tx-rate")]
    pub(crate) rate: f64,
    /// Intermediate report interval in seconds (0: none).
    #[arg(long = "report-interval", default_value_t = 0)]
    pub(crate) report_interval: u64,
    /// Percentile for the latency statistics (sysbench's one; ours always adds p50/p95/p99/p99.9).
    #[arg(long, default_value_t = 95.0)]
    pub(crate) percentile: f64,
    /// Prepared statements usage mode.
    #[arg(long = "db-ps-mode", value_enum, default_value_t = PsMode::Auto)]
    pub(crate) ps_mode: PsMode,
    /// Ours: seconds of load before measuring starts (statistics discarded, backlog drained).
    #[arg(long = "warmup-time", default_value_t = 0)]
    pub(crate) warmup_time: u64,
    /// Ours: report format.
    #[arg(long, value_enum, default_value_t = Format::Text)]
    pub(crate) format: Format,
    /// Ours: with --rate, open (default, latency from intended start) or closed (paced) loop.
    #[arg(long = "loop", value_enum, default_value_t = LoopMode::Open)]
    pub(crate) loop_mode: LoopMode,
    /// Ours: client I/O, epoll readiness or io_uring submission batches.
    #[arg(long = "io", value_enum, default_value_t = IoMode::Epoll)]
    pub(crate) io: IoMode,
    /// Ours: client event-loop threads (default: min(--threads, CPUs this process may use, 16)).
    #[arg(long = "client-threads")]
    pub(crate) client_threads: Option<usize>,
    /// Ours: PID of a local server to sample OS threads and RSS from /proc.
    #[arg(long = "server-pid")]
    pub(crate) server_pid: Option<u32>,
    /// Ours: do not open the side connection that samples SHOW GLOBAL STATUS.
    #[arg(long = "no-gauges")]
    pub(crate) no_gauges: bool,
    /// Ours: also write the report (same format) to this file.
    #[arg(long = "out")]
    pub(crate) out: Option<PathBuf>,
}

/// `--rand-*` options.
#[derive(Debug, Clone, Args)]
pub(crate) struct RandArgs {
    /// Random numbers distribution.
    #[arg(long = "rand-type", value_enum, default_value_t = RandType::Special)]
    pub(crate) rand_type: RandType,
    /// Number of iterations used for numbers generation.
    #[arg(long = "rand-spec-iter", default_value_t = 12)]
    pub(crate) spec_iter: u32,
    /// Percentage of values to be treated as 'special' (special distribution).
    #[arg(long = "rand-spec-pct", default_value_t = 1)]
    pub(crate) spec_pct: u32,
    /// Percentage of 'special' values to use (special distribution).
    #[arg(long = "rand-spec-res", default_value_t = 75)]
    pub(crate) spec_res: u32,
    /// Seed; 0 uses the current time.
    #[arg(long = "rand-seed", default_value_t = 0)]
    pub(crate) seed: u64,
    /// Parameter h for the pareto distribution.
    #[arg(long = "rand-pareto-h", default_value_t = 0.2)]
    pub(crate) pareto_h: f64,
}

impl SysbenchArgs {
    /// Applies the positional script name, if given, to `workload`.
    pub(crate) fn normalize(&mut self) {
        if let Some(w) = self.script.take() {
            self.workload = w;
        }
    }
}

impl RandArgs {
    /// The distribution parameters.
    pub(crate) fn params(&self) -> DistParams {
        DistParams {
            kind: self.rand_type,
            iter: self.spec_iter,
            pct: self.spec_pct,
            res: self.spec_res,
            pareto_h: self.pareto_h,
        }
    }

    /// The seed (the current time when `--rand-seed=0`).
    pub(crate) fn seed(&self) -> u64 {
        if self.seed != 0 {
            return self.seed;
        }
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos() as u64)
            .unwrap_or(1)
    }
}

/// The OLTP scripts' options (oltp_common.lua's names and defaults).
#[derive(Debug, Clone, Args)]
pub(crate) struct OltpArgs {
    /// Number of tables.
    #[arg(long, default_value_t = 1)]
    pub(crate) tables: u32,
    /// Number of rows per table.
    #[arg(long = "table-size", alias = "table_size", default_value_t = 10_000)]
    pub(crate) table_size: u32,
    /// Range size for range SELECT queries.
    #[arg(long = "range-size", alias = "range_size", default_value_t = 100)]
    pub(crate) range_size: u32,
    /// Number of point SELECT queries per transaction.
    #[arg(long = "point-selects", alias = "point_selects", default_value_t = 10)]
    pub(crate) point_selects: u32,
    /// Number of simple range SELECT queries per transaction.
    #[arg(long = "simple-ranges", alias = "simple_ranges", default_value_t = 1)]
    pub(crate) simple_ranges: u32,
    /// Number of SELECT SUM() queries per transaction.
    #[arg(long = "sum-ranges", alias = "sum_ranges", default_value_t = 1)]
    pub(crate) sum_ranges: u32,
    /// Number of SELECT ORDER BY queries per transaction.
    #[arg(long = "order-ranges", alias = "order_ranges", default_value_t = 1)]
    pub(crate) order_ranges: u32,
    /// Number of SELECT DISTINCT queries per transaction.
    #[arg(
        long = "distinct-ranges",
        alias = "distinct_ranges",
        default_value_t = 1
    )]
    pub(crate) distinct_ranges: u32,
    /// Number of UPDATE index queries per transaction.
    #[arg(long = "index-updates", alias = "index_updates", default_value_t = 1)]
    pub(crate) index_updates: u32,
    /// Number of UPDATE non-index queries per transaction.
    #[arg(
        long = "non-index-updates",
        alias = "non_index_updates",
        default_value_t = 1
    )]
    pub(crate) non_index_updates: u32,
    /// Number of DELETE/INSERT combinations per transaction.
    #[arg(long = "delete-inserts", alias = "delete_inserts", default_value_t = 1)]
    pub(crate) delete_inserts: u32,
    /// Enable/disable all range SELECT queries.
    #[arg(long = "range-selects", alias = "range_selects", default_value = "on", value_parser = parse_bool, action = clap::ArgAction::Set)]
    pub(crate) range_selects: bool,
    /// Don't start explicit transactions (AUTOCOMMIT mode).
    #[arg(long = "skip-trx", alias = "skip_trx", default_value = "off", num_args = 0..=1,
          default_missing_value = "on", value_parser = parse_bool, action = clap::ArgAction::Set)]
    pub(crate) skip_trx: bool,
    /// Use AUTO_INCREMENT for the primary key.
    #[arg(long = "auto-inc", alias = "auto_inc", default_value = "on", value_parser = parse_bool, action = clap::ArgAction::Set)]
    pub(crate) auto_inc: bool,
    /// Create a secondary index on k.
    #[arg(long = "create-secondary", alias = "create_secondary", default_value = "on", value_parser = parse_bool, action = clap::ArgAction::Set)]
    pub(crate) create_secondary: bool,
    /// Use a secondary index in place of the PRIMARY KEY.
    #[arg(long, default_value = "off", num_args = 0..=1, default_missing_value = "on", value_parser = parse_bool, action = clap::ArgAction::Set)]
    pub(crate) secondary: bool,
    /// Storage engine named in CREATE TABLE.
    #[arg(long = "mysql-storage-engine", default_value = "innodb")]
    pub(crate) storage_engine: String,
    /// select_random_points: number of points in the IN() list.
    #[arg(long = "random-points", alias = "random_points", default_value_t = 10)]
    pub(crate) random_points: u32,
    /// select_random_ranges: number of BETWEEN ranges per SELECT.
    #[arg(
        long = "number-of-ranges",
        alias = "number_of_ranges",
        default_value_t = 10
    )]
    pub(crate) number_of_ranges: u32,
    /// select_random_ranges: size of BETWEEN ranges.
    #[arg(long, default_value_t = 5)]
    pub(crate) delta: u32,
}

/// `prepare|run|cleanup`: the workload and every option group.
#[derive(Debug, Clone, Args)]
pub(crate) struct SysbenchArgs {
    /// sysbench script name.
    #[arg(long, value_enum, default_value_t = Workload::OltpReadOnly)]
    pub(crate) workload: Workload,
    /// The script name as sysbench takes it (`tpbed-load run oltp_point_select`); overrides --workload.
    #[arg(value_enum, value_name = "SCRIPT")]
    pub(crate) script: Option<Workload>,
    /// The script's options.
    #[command(flatten)]
    pub(crate) oltp: OltpArgs,
    /// Connection options.
    #[command(flatten)]
    pub(crate) conn: ConnArgs,
    /// Run options.
    #[command(flatten)]
    pub(crate) run: RunArgs,
    /// Random numbers options.
    #[command(flatten)]
    pub(crate) rand: RandArgs,
}

/// `SysbenchArgs` alone as a command line (for their defaults).
#[derive(Debug, Parser)]
struct OnlySysbench {
    #[command(flatten)]
    args: SysbenchArgs,
}

impl SysbenchArgs {
    /// Every option at its default (`tpbed-load run` with no options).
    pub(crate) fn defaults() -> SysbenchArgs {
        match OnlySysbench::try_parse_from(["tpbed-load"]) {
            Ok(o) => o.args,
            Err(e) => unreachable!("no options always parse: {e}"),
        }
    }
}
