//! Purge held back by an idle transaction, through the real binary on the shared fixture's
//! `q_v1` (`KEY idx_ready (status, run_at, id)`): a single-threaded claim loop (`SELECT id ...
//! WHERE status = 0 ORDER BY run_at, id LIMIT 10 FOR UPDATE SKIP LOCKED`, `UPDATE ... SET
//! status = 1`, COMMIT, then `DELETE` in a second transaction), no simulated work.
//!
//! - Without an old read view, purge keeps up: the claim's median latency, the index records
//!   it walks (`Handler_read_next` of the claim) and `INNODB_METRICS` `trx_rseg_history_len`
//!   stay flat from the first tenth of the jobs to the last.
//! - With an idle REPEATABLE READ transaction on another connection that has read
//!   (`BEGIN; SELECT COUNT(*) FROM q_v1`), nothing is purged: every status change leaves a
//!   delete-marked `idx_ready` entry at the front of the `status = 0` range, so each claim
//!   walks all earlier ones; records walked, median latency and history length grow with the
//!   jobs processed.
//! - An idle READ COMMITTED transaction that has read does not hold purge back.
//! - After the idle RR transaction commits, purge catches up: history length falls back, and
//!   claims walk few records and are fast again.
//!
//! The study this reproduces used 100,000 jobs. The held-back run is quadratic in the job
//! count, so in the test suite (a debug build on a 2-core machine) each run processes 4,000
//! jobs (400 claims), which already shows the effect by a wide margin (the last tenth's
//! claims walk ~3,600 delete-marked records, the first tenth's ~200) and keeps the file
//! within about a minute.
//! `TPBED_PURGE_JOBS=100000 cargo test --release -p tpbed-tests --test purge -- --nocapture`
//! runs the study's size with the same assertions (BENCHMARKS.md quotes such a run).
//!
//! One connection-handling mode (one thread per connection) only: what is measured is the
//! engine's purge against read views, which the handling mode does not change, and the
//! file takes about 20 s per mode (52 s for all three).

use std::sync::Mutex;
use std::time::{Duration, Instant};

use mysql::prelude::*;
use mysql::Conn;
use tpbed_tests::{history_len, load_queue_fixture, session_status, TestServer};

/// Jobs per measured run: `TPBED_PURGE_JOBS`, else 4,000 (see the file comment).
fn jobs() -> usize {
    std::env::var("TPBED_PURGE_JOBS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(4_000)
}
const BATCH: usize = 10;

static HEAVY: Mutex<()> = Mutex::new(());

fn setup() -> (TestServer, Conn) {
    let srv = TestServer::start(&["--innodb-lock-wait-timeout=20"]);
    srv.connect().query_drop("CREATE DATABASE db").unwrap();
    let mut c = srv.connect_db("db");
    load_queue_fixture(&mut c);
    (srv, c)
}

fn prefill(c: &mut Conn, n: usize) {
    let t = Instant::now();
    let mut run_at = {
        let max: Option<Option<u64>> = c.query_first("SELECT MAX(run_at) FROM q_v1").unwrap();
        max.flatten().unwrap_or(1_000)
    };
    for chunk in (0..n).collect::<Vec<_>>().chunks(500) {
        let rows: Vec<String> = chunk
            .iter()
            .map(|i| {
                run_at += 1;
                format!("(0, {run_at}, 'job {i}')")
            })
            .collect();
        c.query_drop(format!(
            "INSERT INTO q_v1 (status, run_at, payload) VALUES {}",
            rows.join(",")
        ))
        .unwrap();
    }
    eprintln!("prefill of {n} jobs: {:.2?}", t.elapsed());
}

/// What a claim loop measured.
#[derive(Debug, Default)]
struct Run {
    /// Latency of each claim statement (the locking SELECT), µs.
    claim_us: Vec<f64>,
    /// Index records the claim stepped over (`Handler_read_next`), per claim.
    walked: Vec<u64>,
    /// (claims done, trx_rseg_history_len), every tenth of the run.
    history: Vec<(usize, u64)>,
    /// Time of each part of the loop: claim SELECT, claim UPDATE + COMMIT, DELETE + COMMIT.
    parts: [Duration; 3],
}

fn median(v: &[f64]) -> f64 {
    let mut v = v.to_vec();
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

impl Run {
    fn tenth<T: Copy>(v: &[T], last: bool) -> &[T] {
        let n = (v.len() / 10).max(1);
        if last {
            &v[v.len() - n..]
        } else {
            &v[..n]
        }
    }

    /// Median claim latency of the first and the last tenth, µs.
    fn latency(&self) -> (f64, f64) {
        (
            median(Self::tenth(&self.claim_us, false)),
            median(Self::tenth(&self.claim_us, true)),
        )
    }

    /// Median records walked per claim in the first and the last tenth.
    fn walked(&self) -> (f64, f64) {
        let w: Vec<f64> = self.walked.iter().map(|&x| x as f64).collect();
        (
            median(Self::tenth(&w, false)),
            median(Self::tenth(&w, true)),
        )
    }

    fn print(&self, name: &str) {
        let (l0, l1) = self.latency();
        let (w0, w1) = self.walked();
        eprintln!(
            "{name}: {} claims; claim p50 first/last tenth {:.0}/{:.0} us; records walked \
             {w0:.0}/{w1:.0}; history length {:?}; time in claim SELECT / UPDATE+COMMIT / \
             DELETE+COMMIT {:.2?}",
            self.claim_us.len(),
            l0,
            l1,
            self.history,
            self.parts
        );
    }
}

/// Claims and deletes `jobs` jobs, one batch at a time, on `c`; samples history length on
/// `admin`.
fn claim_loop(c: &mut Conn, admin: &mut Conn, jobs: usize) -> Run {
    let claims = jobs / BATCH;
    let mut run = Run::default();
    for i in 0..claims {
        if i % (claims / 10).max(1) == 0 {
            run.history.push((i, history_len(admin)));
        }
        c.query_drop("BEGIN").unwrap();
        let before = session_status(c, "Handler_read_next");
        let t = Instant::now();
        let ids: Vec<u64> = c
            .query(format!(
                "SELECT id FROM q_v1 WHERE status = 0 ORDER BY run_at, id LIMIT {BATCH} \
                 FOR UPDATE SKIP LOCKED"
            ))
            .unwrap();
        run.claim_us.push(t.elapsed().as_secs_f64() * 1e6);
        run.parts[0] += t.elapsed();
        run.walked
            .push(session_status(c, "Handler_read_next") - before);
        assert_eq!(ids.len(), BATCH, "claim {i}: queue ran dry");
        let list = ids.iter().map(u64::to_string).collect::<Vec<_>>().join(",");
        let t = Instant::now();
        c.query_drop(format!(
            "UPDATE q_v1 SET status = 1, owner = 'w', lease_until = {i} WHERE id IN ({list})"
        ))
        .unwrap();
        assert_eq!(c.affected_rows(), BATCH as u64);
        c.query_drop("COMMIT").unwrap();
        run.parts[1] += t.elapsed();
        let t = Instant::now();
        c.query_drop("BEGIN").unwrap();
        c.query_drop(format!("DELETE FROM q_v1 WHERE id IN ({list})"))
            .unwrap();
        assert_eq!(c.affected_rows(), BATCH as u64);
        c.query_drop("COMMIT").unwrap();
        run.parts[2] += t.elapsed();
    }
    run.history.push((claims, history_len(admin)));
    run
}

/// How long purge may take to catch up after a run of `jobs` jobs.
fn purge_timeout(jobs: usize) -> Duration {
    Duration::from_secs(30).max(Duration::from_millis(2 * jobs as u64))
}

/// Polls history length until it is at most `target`; returns the trajectory (ms, length).
fn wait_for_purge(admin: &mut Conn, target: u64, timeout: Duration) -> Vec<(u128, u64)> {
    let t = Instant::now();
    let mut seen = Vec::new();
    loop {
        let len = history_len(admin);
        seen.push((t.elapsed().as_millis(), len));
        if len <= target {
            return seen;
        }
        assert!(
            t.elapsed() < timeout,
            "history length did not fall to {target} within {timeout:?}: {seen:?}"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// Checks that a run without an old read view stayed flat.
fn assert_flat(run: &Run, name: &str) {
    let (l0, l1) = run.latency();
    let (w0, w1) = run.walked();
    let max_hist = run.history.iter().map(|h| h.1).max().unwrap_or(0);
    // Purge runs behind the claims by at most a few of its batches.
    assert!(
        max_hist <= (jobs() / BATCH / 4) as u64,
        "{name}: history length grew to {max_hist} ({:?})",
        run.history
    );
    // Purge may lag behind by some claims on a loaded machine; held back, the last tenth walks
    // ~0.9 * jobs records.
    assert!(
        w1 <= w0 + 0.1 * jobs() as f64,
        "{name}: records walked per claim grew from {w0} to {w1}"
    );
    // Latency is noisy on a shared machine: flat means well under the held-back growth.
    assert!(
        l1 <= 2.0 * l0 + 300.0,
        "{name}: claim p50 grew from {l0:.0} to {l1:.0} us"
    );
}

#[test]
fn without_an_old_read_view_claims_and_history_stay_flat() {
    let _g = HEAVY.lock().unwrap_or_else(|e| e.into_inner());
    let (srv, mut admin) = setup();
    let mut c = srv.connect_db("db");
    let jobs = jobs();

    prefill(&mut admin, jobs);
    let run = claim_loop(&mut c, &mut admin, jobs);
    run.print("no idle transaction");
    assert_flat(&run, "no idle transaction");

    // An idle READ COMMITTED transaction that has read holds no view between statements.
    wait_for_purge(&mut admin, 5, purge_timeout(jobs));
    prefill(&mut admin, jobs);
    let mut idle = srv.connect_db("db");
    idle.query_drop("SET SESSION transaction_isolation = 'READ-COMMITTED'")
        .unwrap();
    idle.query_drop("BEGIN").unwrap();
    let n: u64 = idle
        .query_first("SELECT COUNT(*) FROM q_v1")
        .unwrap()
        .unwrap();
    assert_eq!(n, jobs as u64);
    let run = claim_loop(&mut c, &mut admin, jobs);
    run.print("idle RC transaction");
    assert_flat(&run, "idle RC transaction");
    idle.query_drop("COMMIT").unwrap();
}

#[test]
fn an_idle_repeatable_read_transaction_holds_back_purge_until_it_commits() {
    let _g = HEAVY.lock().unwrap_or_else(|e| e.into_inner());
    let (srv, mut admin) = setup();
    let mut c = srv.connect_db("db");
    let jobs = jobs();
    let after_jobs = jobs / 4;
    prefill(&mut admin, jobs + after_jobs);

    let mut idle = srv.connect_db("db");
    idle.query_drop("BEGIN").unwrap();
    let n: u64 = idle
        .query_first("SELECT COUNT(*) FROM q_v1")
        .unwrap()
        .unwrap();
    assert_eq!(n, (jobs + after_jobs) as u64);

    let run = claim_loop(&mut c, &mut admin, jobs);
    run.print("idle RR transaction");
    let (l0, l1) = run.latency();
    let (w0, w1) = run.walked();
    let claims = (jobs / BATCH) as u64;
    // Every claim and every completion committed an update undo that purge may not touch.
    let (_, hist_end) = *run.history.last().unwrap();
    assert!(
        hist_end >= 2 * claims,
        "history length {hist_end} after {claims} claims and completions: {:?}",
        run.history
    );
    assert!(
        run.history.windows(2).all(|w| w[1].1 > w[0].1),
        "history length did not rise throughout: {:?}",
        run.history
    );
    // The claims walk the delete-marked entries of every job claimed before them.
    assert!(
        w1 >= 0.8 * (jobs as f64 * 0.9) && w1 >= 10.0 * (w0 + 10.0),
        "records walked per claim: first tenth {w0}, last tenth {w1}"
    );
    assert!(
        l1 >= 3.0 * l0,
        "claim p50 only went from {l0:.0} to {l1:.0} us"
    );

    // The idle transaction ends: purge catches up and claims are cheap again.
    idle.query_drop("COMMIT").unwrap();
    let trajectory = wait_for_purge(&mut admin, 5, purge_timeout(jobs));
    eprintln!("after COMMIT of the idle transaction, history length (ms, len): {trajectory:?}");
    assert!(!trajectory.is_empty() && trajectory[0].1 <= hist_end);
    let after = claim_loop(&mut c, &mut admin, after_jobs);
    after.print("after the idle transaction committed");
    let (a0, a1) = after.walked();
    assert!(
        a0.max(a1) <= w0 + 100.0,
        "claims still walk {a0}/{a1} records after purge (held back: {w1})"
    );
    let all_after = median(&after.claim_us);
    assert!(
        all_after * 3.0 <= l1,
        "claim p50 after purge {all_after:.0} us vs {l1:.0} us held back"
    );
    let max_hist = after.history.iter().map(|h| h.1).max().unwrap_or(0);
    assert!(max_hist <= claims / 4, "{:?}", after.history);
}
