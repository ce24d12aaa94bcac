//! Job-queue workloads (the job-queue study): producers insert jobs, workers claim them in a
//! short transaction (SKIP LOCKED, FOR UPDATE, NOWAIT or two-phase), work outside it, and
//! complete them with a DELETE; an exactly-once check runs at the end.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use clap::{Args, ValueEnum};
use hdrhistogram::Histogram;

use crate::blocking::Blocking;
use crate::conn::{Reply, WireFactory};
use crate::dist::{Dist, DistParams};
use crate::metrics::{txn_keys, TxnMetrics, Value, WorkloadMetrics};
use crate::options::{ConnArgs, LoopMode, PsMode, RunArgs};
use crate::report::Report;
use crate::runner::{emit, engine_config, login, loopback_addr, run, Load};
use crate::script::{Op, Script, Step};
use crate::stats::{new_hist, record, LatMs};

/// The shared fixture: the canonical DDL of q_v1, q_v2, q_v3.
pub(crate) const FIXTURE: &str = include_str!("../../tests/fixtures/queue.sql");

/// Which table layout.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum Schema {
    /// `PRIMARY KEY (id)`, status in the secondary `idx_ready (status, run_at, id)`.
    V1,
    /// Status leads the clustered key: `PRIMARY KEY (status, run_at, id)`.
    V2,
    /// Shard prefix: `PRIMARY KEY (shard, status, run_at, id)`; each worker claims from its shard.
    V3,
}

impl Schema {
    fn table(self) -> &'static str {
        match self {
            Schema::V1 => "q_v1",
            Schema::V2 => "q_v2",
            Schema::V3 => "q_v3",
        }
    }
}

/// How a worker claims jobs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum Claim {
    /// `SELECT ... FOR UPDATE SKIP LOCKED`, then UPDATE the ids.
    SkipLocked,
    /// `SELECT ... FOR UPDATE` (waits for locked rows), then UPDATE the ids.
    ForUpdate,
    /// `UPDATE ... ORDER BY run_at, id LIMIT n` first, then read the claimed ids back.
    TwoPhase,
    /// `SELECT ... FOR UPDATE NOWAIT`: a locked row fails the claim, which is rolled back and retried.
    Nowait,
}

/// Transaction isolation of the workers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum Isolation {
    /// READ COMMITTED.
    Rc,
    /// REPEATABLE READ.
    Rr,
}

/// `tpbed-load queue` options.
#[derive(Debug, Clone, Args)]
pub(crate) struct QueueArgs {
    /// Table layout.
    #[arg(long, value_enum, default_value_t = Schema::V1)]
    pub(crate) schema: Schema,
    /// Claim strategy.
    #[arg(long, value_enum, default_value_t = Claim::SkipLocked)]
    pub(crate) claim: Claim,
    /// Jobs per claim (LIMIT n).
    #[arg(long, default_value_t = 10)]
    pub(crate) batch: u32,
    /// Producer connections.
    #[arg(long, default_value_t = 2)]
    pub(crate) producers: usize,
    /// Worker connections.
    #[arg(long, default_value_t = 8)]
    pub(crate) workers: usize,
    /// Shards (schema v3): jobs are spread over them, worker w claims from shard w mod shards.
    #[arg(long, default_value_t = 4)]
    pub(crate) shards: u32,
    /// Isolation level of every connection.
    #[arg(long, value_enum, default_value_t = Isolation::Rc)]
    pub(crate) isolation: Isolation,
    /// Simulated processing time per job, outside the transaction (microseconds).
    #[arg(long = "work-us", default_value_t = 0)]
    pub(crate) work_us: u64,
    /// Lease written with each claim (lease_until = now + lease).
    #[arg(long = "lease-ms", default_value_t = 30_000)]
    pub(crate) lease_ms: u64,
    /// Jobs inserted before the run starts.
    #[arg(long = "initial-jobs", default_value_t = 10_000)]
    pub(crate) initial_jobs: u64,
    /// Jobs per producer INSERT.
    #[arg(long = "produce-batch", default_value_t = 10)]
    pub(crate) produce_batch: u32,
    /// Total jobs/s all producers together insert (0: as fast as they can).
    #[arg(long = "producer-rate", default_value_t = 0.0)]
    pub(crate) producer_rate: f64,
    /// Pause after an empty poll (milliseconds).
    #[arg(long = "poll-ms", default_value_t = 1)]
    pub(crate) poll_ms: u64,
    /// Keep the table afterwards (default: drop it).
    #[arg(long)]
    pub(crate) keep: bool,
    /// Connection options.
    #[command(flatten)]
    pub(crate) conn: ConnArgs,
    /// Run options (--threads and --rate are not used: see --producers/--workers).
    #[command(flatten)]
    pub(crate) run: RunArgs,
}

/// What the queue scripts measure, shared by all of them.
#[derive(Debug)]
pub(crate) struct QueueStats {
    /// Claim transactions that got at least one job.
    pub(crate) claims: u64,
    /// Jobs claimed.
    pub(crate) claimed: u64,
    /// Claims that found nothing.
    pub(crate) empty_polls: u64,
    /// Claims rolled back after an error (lock wait timeout, deadlock, NOWAIT conflict).
    pub(crate) retries: u64,
    /// Claim statements that ended on a lock wait timeout (1205).
    pub(crate) lock_waits: u64,
    /// Claim statements chosen as a deadlock victim (1213).
    pub(crate) deadlocks: u64,
    /// Claim latency (BEGIN sent to COMMIT answered), nanoseconds.
    pub(crate) claim_lat: Histogram<u64>,
    /// Every job id completed (the DELETE removed it).
    pub(crate) completed: Vec<u64>,
    /// DELETEs that removed fewer rows than their claim held (a job lost or taken twice).
    pub(crate) short_deletes: u64,
    /// Jobs the producers inserted during the run.
    pub(crate) produced: u64,
}

impl Default for QueueStats {
    fn default() -> Self {
        QueueStats {
            claims: 0,
            claimed: 0,
            empty_polls: 0,
            retries: 0,
            lock_waits: 0,
            deadlocks: 0,
            claim_lat: new_hist(),
            completed: Vec::new(),
            short_deletes: 0,
            produced: 0,
        }
    }
}

fn now_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_millis() as u64)
        .unwrap_or(0)
}

/// Codes after which a claim is rolled back and retried.
pub(crate) const RETRY_CODES: [u16; 4] = [1205, 1213, 1020, 3572];

/// The claim statements of one strategy (pure text, for tests and for the scripts).
pub(crate) fn claim_select(table: &str, shard: Option<u32>, batch: u32, claim: Claim) -> String {
    let filter = shard
        .map(|s| format!("shard = {s} AND "))
        .unwrap_or_default();
    let lock = match claim {
        Claim::SkipLocked => " FOR UPDATE SKIP LOCKED",
        Claim::ForUpdate => " FOR UPDATE",
        Claim::Nowait => " FOR UPDATE NOWAIT",
        Claim::TwoPhase => "",
    };
    format!(
        "SELECT id FROM {table} WHERE {filter}status = 0 ORDER BY run_at, id LIMIT {batch}{lock}"
    )
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum WState {
    Start,
    Begun,
    Selected,
    Updated,
    ReadBack,
    Committed,
    RolledBack,
    Worked,
    Deleted,
}

/// A worker connection.
#[derive(Debug)]
struct Worker {
    table: &'static str,
    shard: Option<u32>,
    args: Arc<QueueArgs>,
    stats: Arc<Mutex<QueueStats>>,
    owner: String,
    seq: u64,
    st: WState,
    ids: Vec<u64>,
    t0: Instant,
}

impl Worker {
    fn id_list(&self) -> String {
        self.ids
            .iter()
            .map(u64::to_string)
            .collect::<Vec<_>>()
            .join(",")
    }

    fn rows_to_ids(reply: &Reply) -> Vec<u64> {
        match reply {
            Reply::Rows { rows, .. } => rows
                .iter()
                .filter_map(|r| r.first().cloned().flatten().and_then(|v| v.parse().ok()))
                .collect(),
            _ => Vec::new(),
        }
    }

    fn rollback(&mut self, code: u16) -> Step {
        self.st = WState::RolledBack;
        let mut s = self.stats.lock().expect("queue stats");
        s.retries += 1;
        s.lock_waits += u64::from(code == 1205);
        s.deadlocks += u64::from(code == 1213);
        drop(s);
        Step::Send(Op::Query("ROLLBACK".into()))
    }

    fn update_sql(&self, lease: u64) -> String {
        let filter = self
            .shard
            .map(|s| format!("shard = {s} AND "))
            .unwrap_or_default();
        match self.args.claim {
            Claim::TwoPhase => format!(
                "UPDATE {} SET status = 1, owner = '{}', lease_until = {lease}, attempts = attempts + 1 WHERE {filter}status = 0 ORDER BY run_at, id LIMIT {}",
                self.table, self.owner, self.args.batch
            ),
            _ => format!(
                "UPDATE {} SET status = 1, owner = '{}', lease_until = {lease}, attempts = attempts + 1 WHERE id IN ({})",
                self.table,
                self.owner,
                self.id_list()
            ),
        }
    }
}

impl Script for Worker {
    fn setup(&self) -> Vec<String> {
        vec![isolation_sql(self.args.isolation)]
    }

    fn wants_rows(&self) -> bool {
        true
    }

    fn begin_event(&mut self) {
        self.st = WState::Start;
        self.ids.clear();
    }

    fn next(&mut self, last: Option<&Reply>) -> Step {
        if let Some(Reply::Error { code, message }) = last {
            if self.st == WState::Deleted && RETRY_CODES.contains(code) {
                // the completion failed on a lock: send it again
                self.st = WState::Worked;
                return self.next(None);
            }
            if self.st == WState::Deleted || self.st == WState::RolledBack {
                return Step::Fatal(format!("error {code}: {message}"));
            }
            return if RETRY_CODES.contains(code) {
                self.rollback(*code)
            } else {
                Step::Fatal(format!("error {code}: {message}"))
            };
        }
        let lease = now_ms() + self.args.lease_ms;
        match self.st {
            WState::Start => {
                self.seq += 1;
                self.t0 = Instant::now();
                self.st = WState::Begun;
                Step::Send(Op::Query("BEGIN".into()))
            }
            WState::Begun => {
                if self.args.claim == Claim::TwoPhase {
                    self.owner = format!(
                        "{}-{}",
                        self.owner.split('-').next().unwrap_or("w"),
                        self.seq
                    );
                    self.st = WState::Updated;
                    return Step::Send(Op::Query(self.update_sql(lease)));
                }
                self.st = WState::Selected;
                Step::Send(Op::Query(claim_select(
                    self.table,
                    self.shard,
                    self.args.batch,
                    self.args.claim,
                )))
            }
            WState::Selected => {
                self.ids = last.map(Self::rows_to_ids).unwrap_or_default();
                if self.ids.is_empty() {
                    self.st = WState::Committed;
                    return Step::Send(Op::Query("COMMIT".into()));
                }
                self.st = WState::Updated;
                Step::Send(Op::Query(self.update_sql(lease)))
            }
            WState::Updated => {
                if self.args.claim == Claim::TwoPhase {
                    if matches!(last, Some(Reply::Ok { affected: 0, .. })) {
                        self.st = WState::Committed;
                        return Step::Send(Op::Query("COMMIT".into()));
                    }
                    let filter = self
                        .shard
                        .map(|s| format!("shard = {s} AND "))
                        .unwrap_or_default();
                    self.st = WState::ReadBack;
                    return Step::Send(Op::Query(format!(
                        "SELECT id FROM {} WHERE {filter}status = 1 AND owner = '{}'",
                        self.table, self.owner
                    )));
                }
                self.st = WState::Committed;
                Step::Send(Op::Query("COMMIT".into()))
            }
            WState::ReadBack => {
                self.ids = last.map(Self::rows_to_ids).unwrap_or_default();
                self.st = WState::Committed;
                Step::Send(Op::Query("COMMIT".into()))
            }
            WState::Committed => {
                let ns = self.t0.elapsed().as_nanos() as u64;
                let mut s = self.stats.lock().expect("queue stats");
                record(&mut s.claim_lat, ns);
                if self.ids.is_empty() {
                    s.empty_polls += 1;
                    drop(s);
                    self.st = WState::Deleted;
                    return Step::Sleep(Duration::from_millis(self.args.poll_ms));
                }
                s.claims += 1;
                s.claimed += self.ids.len() as u64;
                drop(s);
                self.st = WState::Worked;
                Step::Sleep(Duration::from_micros(
                    self.args.work_us * self.ids.len() as u64,
                ))
            }
            WState::RolledBack => {
                self.st = WState::Deleted;
                self.ids.clear();
                Step::Sleep(Duration::from_millis(self.args.poll_ms))
            }
            WState::Worked => {
                self.st = WState::Deleted;
                let filter = self
                    .shard
                    .map(|s| format!("shard = {s} AND "))
                    .unwrap_or_default();
                // v2/v3 look the ids up through idx_id; the status guard keeps a re-claimed row safe
                Step::Send(Op::Query(format!(
                    "DELETE FROM {} WHERE {filter}id IN ({}) AND status = 1",
                    self.table,
                    self.id_list()
                )))
            }
            WState::Deleted => {
                if let Some(Reply::Ok { affected, .. }) = last {
                    let mut s = self.stats.lock().expect("queue stats");
                    if (*affected as usize) < self.ids.len() {
                        s.short_deletes += 1;
                    }
                    s.completed.extend_from_slice(&self.ids);
                }
                Step::EndEvent
            }
        }
    }
}

/// A producer connection: one multi-row INSERT per event, paced by `--producer-rate`.
#[derive(Debug)]
struct Producer {
    table: &'static str,
    args: Arc<QueueArgs>,
    stats: Arc<Mutex<QueueStats>>,
    dist: Dist,
    sent: bool,
    next_shard: u32,
}

impl Script for Producer {
    fn setup(&self) -> Vec<String> {
        vec![isolation_sql(self.args.isolation)]
    }

    fn begin_event(&mut self) {
        self.sent = false;
    }

    fn next(&mut self, last: Option<&Reply>) -> Step {
        if let Some(Reply::Error { code, message }) = last {
            return if RETRY_CODES.contains(code) {
                Step::Restart
            } else {
                Step::Fatal(format!("producer error {code}: {message}"))
            };
        }
        if !self.sent {
            self.sent = true;
            let sql = insert_jobs_sql(
                self.table,
                &self.args,
                self.args.produce_batch,
                now_ms(),
                &mut self.next_shard,
                &mut self.dist,
            );
            return Step::Send(Op::Query(sql));
        }
        if let Some(Reply::Ok { affected, .. }) = last {
            self.stats.lock().expect("queue stats").produced += affected;
            let per = self.args.producer_rate / self.args.producers.max(1) as f64;
            if per > 0.0 {
                let gap = f64::from(self.args.produce_batch) / per;
                return Step::Sleep(Duration::from_secs_f64(gap));
            }
        }
        Step::EndEvent
    }
}

fn isolation_sql(i: Isolation) -> String {
    let level = match i {
        Isolation::Rc => "READ COMMITTED",
        Isolation::Rr => "REPEATABLE READ",
    };
    format!("SET SESSION TRANSACTION ISOLATION LEVEL {level}")
}

/// A multi-row INSERT of `n` ready jobs (shards round-robin for v3).
pub(crate) fn insert_jobs_sql(
    table: &str,
    args: &QueueArgs,
    n: u32,
    run_at: u64,
    shard: &mut u32,
    dist: &mut Dist,
) -> String {
    let v3 = args.schema == Schema::V3;
    let mut sql = if v3 {
        format!("INSERT INTO {table} (shard, status, run_at, priority, payload) VALUES ")
    } else {
        format!("INSERT INTO {table} (status, run_at, priority, payload) VALUES ")
    };
    for i in 0..n {
        if i > 0 {
            sql.push(',');
        }
        let prio = dist.uniform(0, 9);
        let payload = dist.string("@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@");
        if v3 {
            let s = *shard % args.shards.max(1);
            *shard = shard.wrapping_add(1);
            sql.push_str(&format!("({s}, 0, {run_at}, {prio}, '{payload}')"));
        } else {
            sql.push_str(&format!("(0, {run_at}, {prio}, '{payload}')"));
        }
    }
    sql
}

/// The CREATE TABLE of `schema` from the fixture.
pub(crate) fn fixture_ddl(schema: Schema) -> Result<String, String> {
    let name = schema.table();
    let sql: Vec<&str> = FIXTURE
        .lines()
        .filter(|l| !l.trim_start().starts_with("--"))
        .collect();
    sql.join("\n")
        .split(';')
        .map(|s| s.trim().to_string())
        .find(|s| s.starts_with(&format!("CREATE TABLE {name} ")))
        .ok_or_else(|| format!("tests/fixtures/queue.sql has no CREATE TABLE {name}"))
}

/// Result of the exactly-once check.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct OnceCheck {
    /// Jobs that existed: initial + produced.
    pub(crate) total: u64,
    /// Distinct jobs completed.
    pub(crate) completed: u64,
    /// Job ids completed more than once.
    pub(crate) duplicates: u64,
    /// Rows still in the table (ready, or claimed when the run stopped).
    pub(crate) remaining: u64,
    /// DELETEs that removed fewer rows than claimed.
    pub(crate) short_deletes: u64,
}

impl OnceCheck {
    /// Every job was completed exactly once or is still in the table, none twice, none lost.
    pub(crate) fn ok(&self) -> bool {
        self.duplicates == 0
            && self.short_deletes == 0
            && self.completed + self.remaining == self.total
    }

    /// Computes the check from the completed ids.
    pub(crate) fn compute(
        total: u64,
        completed: &[u64],
        remaining: u64,
        short_deletes: u64,
    ) -> OnceCheck {
        let mut ids = completed.to_vec();
        ids.sort_unstable();
        let n = ids.len() as u64;
        ids.dedup();
        let distinct = ids.len() as u64;
        OnceCheck {
            total,
            completed: distinct,
            duplicates: n - distinct,
            remaining,
            short_deletes,
        }
    }
}

/// A server status counter's change over the run.
fn status_delta(r: &Report, name: &str) -> Result<f64, String> {
    match (
        r.server.status_after.get(name),
        r.server.status_before.get(name),
    ) {
        (Some(a), Some(b)) => Ok(a - b),
        _ => Err(format!("the server has no status variable {name}")),
    }
}

/// The queue's own metrics (values and the claim transaction) of a run; `fsyncs` is the
/// server's redo fsyncs over it.
pub(crate) fn queue_metrics(
    s: &QueueStats,
    check: &OnceCheck,
    secs: f64,
    pct: f64,
    fsyncs: Result<f64, String>,
) -> WorkloadMetrics {
    let secs = secs.max(1e-9);
    let done = check.completed as f64;
    let per_job = match fsyncs {
        Ok(_) if done == 0.0 => Err("no job completed".to_string()),
        Ok(f) => Ok(f / done),
        Err(e) => Err(e),
    };
    let value = |key, label, value, decimals| Value {
        key,
        label,
        value,
        decimals,
    };
    WorkloadMetrics {
        txns: vec![TxnMetrics {
            name: "claim",
            count: s.claims + s.empty_polls,
            latency: LatMs::of(&s.claim_lat, pct),
            rollbacks: s.retries,
            lock_waits: s.lock_waits,
            deadlocks: s.deadlocks,
        }],
        values: vec![
            value("jobs_per_s", "jobs/s (completed)", Ok(done / secs), 1),
            value("empty_polls", "empty polls", Ok(s.empty_polls as f64), 0),
            value(
                "retries",
                "claims rolled back and retried",
                Ok(s.retries as f64),
                0,
            ),
            value(
                "fsyncs_per_job",
                "redo fsyncs per completed job",
                per_job,
                3,
            ),
        ],
        ..Default::default()
    }
}

/// The metric keys the queue adds to every run's, with what each means.
pub(crate) fn metric_keys() -> Vec<(String, String)> {
    let mut keys = vec![
        (
            "jobs_per_s".to_string(),
            "queue: jobs completed per second".to_string(),
        ),
        (
            "empty_polls".into(),
            "queue: claims that found no job".into(),
        ),
        (
            "retries".into(),
            "queue: claims rolled back and retried".into(),
        ),
        (
            "fsyncs_per_job".into(),
            "queue: redo fsyncs per completed job".into(),
        ),
    ];
    keys.extend(txn_keys("claim"));
    keys
}

/// `tpbed-load queue`.
pub(crate) fn queue_cmd(a: &QueueArgs, wires: &Arc<WireFactory>) -> Result<Report, String> {
    queue_run(a, wires, true)
}

/// Runs the queue workload; `print` shows interval lines and the report on stdout.
pub(crate) fn queue_run(
    a: &QueueArgs,
    wires: &Arc<WireFactory>,
    print: bool,
) -> Result<Report, String> {
    if a.workers == 0 {
        return Err("--workers must be at least 1".into());
    }
    let args = Arc::new(a.clone());
    let table = a.schema.table();
    let addr = loopback_addr(&a.conn.host, a.conn.port)?;
    let lg = login(&a.conn);
    let mut admin = Blocking::connect(addr, &lg, wires)?;
    admin.exec(&format!("DROP TABLE IF EXISTS {table}"))?;
    admin.exec(&fixture_ddl(a.schema)?)?;
    let mut dist = Dist::new(DistParams::default(), 7);
    let mut shard = 0u32;
    let t = now_ms();
    let mut left = a.initial_jobs;
    while left > 0 {
        let n = left.min(1000) as u32;
        admin.exec(&insert_jobs_sql(
            table,
            a,
            n,
            t.saturating_sub(left),
            &mut shard,
            &mut dist,
        ))?;
        left -= u64::from(n);
    }
    let stats = Arc::new(Mutex::new(QueueStats::default()));
    let mut run_args: RunArgs = a.run.clone();
    run_args.rate = 0.0;
    run_args.loop_mode = LoopMode::Closed;
    run_args.ps_mode = PsMode::Disable;
    let connections = a.producers + a.workers;
    let mut engine = engine_config(&a.conn, &run_args, connections, 1)?;
    engine.ignore = crate::options::IgnoreList::Codes(RETRY_CODES.to_vec());
    let (args2, stats2) = (args.clone(), stats.clone());
    let producers = a.producers;
    let scripts = Arc::new(move |i: usize| -> Box<dyn Script> {
        if i < producers {
            Box::new(Producer {
                table,
                args: args2.clone(),
                stats: stats2.clone(),
                dist: Dist::new(DistParams::default(), 100 + i as u64),
                sent: false,
                next_shard: i as u32,
            })
        } else {
            let w = (i - producers) as u32;
            Box::new(Worker {
                table,
                shard: (args2.schema == Schema::V3).then(|| w % args2.shards.max(1)),
                args: args2.clone(),
                stats: stats2.clone(),
                owner: format!("w{w}"),
                seq: 0,
                st: WState::Start,
                ids: Vec::new(),
                t0: Instant::now(),
            })
        }
    });
    let name = format!("queue {} {:?} batch={}", table, a.claim, a.batch).to_lowercase();
    let load = Load::new(name, engine, scripts, wires.clone(), &a.run, print);
    let mut report = run(load);
    let remaining = admin
        .rows(&format!("SELECT COUNT(*) FROM {table}"))?
        .first()
        .and_then(|r| r.first().cloned().flatten())
        .and_then(|v| v.parse::<u64>().ok())
        .unwrap_or(0);
    if !a.keep {
        admin.exec(&format!("DROP TABLE IF EXISTS {table}"))?;
    }
    admin.quit();
    let s = stats.lock().expect("queue stats");
    let check = OnceCheck::compute(
        a.initial_jobs + s.produced,
        &s.completed,
        remaining,
        s.short_deletes,
    );
    let fsyncs = status_delta(&report, "Innodb_os_log_fsyncs");
    let lock_waits = status_delta(&report, "Innodb_row_lock_waits")
        .map(|v| format!("{}", v as i64))
        .unwrap_or_else(|_| "n/a".into());
    let own = queue_metrics(&s, &check, report.secs, report.percentile, fsyncs);
    report.metrics.txns = own.txns;
    report.metrics.values = own.values;
    report.metrics.notes = vec![
        (
            "schema / claim / isolation".into(),
            format!("{table} / {:?} / {:?}", a.claim, a.isolation),
        ),
        (
            "producers / workers / batch".into(),
            format!("{} / {} / {}", a.producers, a.workers, a.batch),
        ),
        (
            "claims / jobs claimed".into(),
            format!("{} / {}", s.claims, s.claimed),
        ),
        (
            "lock waits (Innodb_row_lock_waits delta)".into(),
            lock_waits,
        ),
        (
            "exactly-once check".into(),
            format!(
                "{}: total {} = completed {} + remaining {}; duplicates {}; short deletes {}",
                if check.ok() { "PASS" } else { "FAIL" },
                check.total,
                check.completed,
                check.remaining,
                check.duplicates,
                check.short_deletes
            ),
        ),
    ];
    drop(s);
    if print {
        emit(&report, a.run.format, a.run.out.as_deref())?;
    }
    if !check.ok() {
        return Err(format!("exactly-once check failed: {check:?}"));
    }
    Ok(report)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fixture_has_every_schema_with_lease_and_priority() {
        for s in [Schema::V1, Schema::V2, Schema::V3] {
            let ddl = fixture_ddl(s).unwrap();
            assert!(ddl.contains("lease_until BIGINT UNSIGNED NULL"), "{ddl}");
            assert!(ddl.contains("priority INT NOT NULL DEFAULT 0"), "{ddl}");
        }
        assert!(fixture_ddl(Schema::V1)
            .unwrap()
            .contains("KEY idx_ready (status, run_at, id)"));
        assert!(fixture_ddl(Schema::V2)
            .unwrap()
            .contains("PRIMARY KEY (status, run_at, id)"));
        assert!(fixture_ddl(Schema::V3)
            .unwrap()
            .contains("PRIMARY KEY (shard, status, run_at, id)"));
    }

    #[test]
    fn claim_statements_per_strategy() {
        assert_eq!(
            claim_select("q_v1", None, 10, Claim::SkipLocked),
            "SELECT id FROM q_v1 WHERE status = 0 ORDER BY run_at, id LIMIT 10 FOR UPDATE SKIP LOCKED"
        );
        assert!(claim_select("q_v3", Some(2), 5, Claim::Nowait)
            .starts_with("SELECT id FROM q_v3 WHERE shard = 2 AND status = 0"));
        assert!(claim_select("q_v1", None, 1, Claim::ForUpdate).ends_with("LIMIT 1 FOR UPDATE"));
    }

    #[test]
    fn exactly_once_check() {
        assert!(OnceCheck::compute(10, &[1, 2, 3], 7, 0).ok());
        let dup = OnceCheck::compute(10, &[1, 2, 2], 8, 0);
        assert_eq!(dup.duplicates, 1);
        assert!(!dup.ok());
        assert!(
            !OnceCheck::compute(10, &[1, 2, 3], 6, 0).ok(),
            "a lost job fails"
        );
        assert!(!OnceCheck::compute(10, &[1, 2, 3], 7, 1).ok());
    }
}
