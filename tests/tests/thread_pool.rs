//! The thread-group pool as a DBA sees it: MySQL's 13 variables (and MariaDB's two the
//! `mariadb` policy reads) only while the pool is loaded, cooperative yield under `time-slice`,
//! the stall rule (a CPU-bound statement delays its group's next statement by the stall limit;
//! a reported SLEEP does not), the transaction limit with the Admin group, on both pollers.

use std::io::Read;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use mysql::prelude::*;
use mysql::Conn;
use tpbed_tests::{binary, code, Mode, TestServer};

/// MySQL's 13 pool variables and, sorted among them, MariaDB's two that MySQL lacks
/// (`thread_pool_oversubscribe`, `thread_pool_priority`), read by the `mariadb` policy.
const MYSQL_POOL_VARIABLES: &[&str] = &[
    "thread_pool_algorithm",
    "thread_pool_connection_report_interval",
    "thread_pool_dedicated_listeners",
    "thread_pool_high_priority_connection",
    "thread_pool_longrun_trx_limit",
    "thread_pool_max_active_query_threads",
    "thread_pool_max_transactions_limit",
    "thread_pool_max_unused_threads",
    "thread_pool_oversubscribe",
    "thread_pool_prio_kickup_timer",
    "thread_pool_priority",
    "thread_pool_query_threads_per_group",
    "thread_pool_size",
    "thread_pool_stall_limit",
    "thread_pool_transaction_delay",
];

#[test]
fn pool_variables_exist_only_with_the_pool() {
    let per_conn = TestServer::start(&[]);
    let mut pc = per_conn.connect();
    let rows: Vec<(String, String)> = pc.query("SHOW VARIABLES LIKE 'thread_pool%'").unwrap();
    assert!(
        rows.is_empty(),
        "no thread_pool variables without the pool: {rows:?}"
    );
    let plugin: Option<String> = pc
        .query_first("SELECT PLUGIN_STATUS FROM information_schema.PLUGINS WHERE PLUGIN_NAME = 'thread_pool'")
        .unwrap();
    assert_eq!(plugin, None);
    assert_eq!(
        code(pc.query_drop("SELECT * FROM performance_schema.tp_thread_group_state")),
        1146
    );
    let pool = TestServer::start(&["--thread-handling=pool-of-threads", "--thread-pool-size=2"]);
    let mut c = pool.connect();
    let rows: Vec<(String, String)> = c.query("SHOW VARIABLES LIKE 'thread_pool%'").unwrap();
    let names: Vec<&str> = rows.iter().map(|r| r.0.as_str()).collect();
    assert_eq!(names, MYSQL_POOL_VARIABLES);
    let get = |n: &str| rows.iter().find(|r| r.0 == n).unwrap().1.clone();
    assert_eq!(get("thread_pool_size"), "2");
    assert_eq!(get("thread_pool_stall_limit"), "6");
    assert_eq!(
        get("thread_pool_max_transactions_limit"),
        "64",
        "MIN(32 x size, 512)"
    );
    assert_eq!(get("thread_pool_query_threads_per_group"), "2");
    assert_eq!(get("thread_pool_prio_kickup_timer"), "1000");
    assert_eq!(get("thread_pool_max_unused_threads"), "32");
    assert_eq!(get("thread_pool_longrun_trx_limit"), "2000");
    assert_eq!(get("thread_pool_oversubscribe"), "3", "MariaDB's default");
    assert_eq!(get("thread_pool_priority"), "auto", "MariaDB's default");
    c.query_drop("SET SESSION thread_pool_priority = 'high'")
        .unwrap();
    let p: String = c
        .query_first("SELECT @@session.thread_pool_priority")
        .unwrap()
        .unwrap();
    assert_eq!(p, "high");
    let th: String = c.query_first("SELECT @@thread_handling").unwrap().unwrap();
    assert_eq!(th, "pool-of-threads");
    assert_eq!(code(c.query_drop("SET GLOBAL thread_pool_size = 4")), 1238);
    c.query_drop("SET GLOBAL thread_pool_stall_limit = 10")
        .unwrap();
    let v: u64 = c
        .query_first("SELECT @@thread_pool_stall_limit")
        .unwrap()
        .unwrap();
    assert_eq!(v, 10);
    let plugin: Option<String> = c
        .query_first("SELECT PLUGIN_STATUS FROM information_schema.PLUGINS WHERE PLUGIN_NAME = 'thread_pool'")
        .unwrap();
    assert_eq!(plugin.as_deref(), Some("ACTIVE"));
    let groups: Vec<(u64, u64)> = c
        .query("SELECT TP_GROUP_ID, STALL_LIMIT FROM performance_schema.tp_thread_group_state ORDER BY TP_GROUP_ID")
        .unwrap();
    assert_eq!(
        groups,
        vec![(0, 10), (1, 10), (2, 10)],
        "two groups and the Admin group last"
    );
    let ours: Vec<(String, String)> = c.query("SHOW VARIABLES LIKE 'tpbed_thread_pool%'").unwrap();
    assert_eq!(ours.len(), 7, "ours are named tpbed_*: {ours:?}");
    assert!(
        ours.contains(&("tpbed_thread_pool_policy".into(), "mysql".into())),
        "the default policy is mysql: {ours:?}"
    );
    assert!(
        ours.contains(&(
            "tpbed_thread_pool_rails".into(),
            "open_transaction,admin".into()
        )),
        "every rail is on by default: {ours:?}"
    );
}

/// Ours: `--tpbed-thread-pool-policy` names the scheduling policy (any case; shown as
/// registered) and `--tpbed-thread-pool-rails` the rails in force, and the pool runs
/// statements under them.
#[test]
fn the_policy_is_chosen_at_start_up() {
    let srv = TestServer::start(&[
        "--thread-handling=pool-of-threads",
        "--tpbed-thread-pool-policy=FIFO",
        "--tpbed-thread-pool-rails=ADMIN",
    ]);
    let mut c = srv.connect();
    let shown: (String, String) = c
        .query_first("SELECT @@tpbed_thread_pool_policy, @@tpbed_thread_pool_rails")
        .unwrap()
        .unwrap();
    assert_eq!(shown, ("fifo".into(), "admin".into()));
    assert_eq!(
        code(c.query_drop("SET GLOBAL tpbed_thread_pool_policy = 'mysql'")),
        1238
    );
    c.query_drop("BEGIN").unwrap();
    let one: u64 = c.query_first("SELECT 1").unwrap().unwrap();
    assert_eq!(one, 1);
    c.query_drop("COMMIT").unwrap();
}

/// Ours: an unknown policy name stops the server at start-up with the registered names.
#[test]
fn an_unknown_policy_refuses_to_start() {
    let mut child = Command::new(binary("tpbed-server"))
        .args([
            "--port=0",
            "--bind-address=127.0.0.1",
            "--thread-handling=pool-of-threads",
            "--tpbed-thread-pool-policy=lottery",
        ])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start tpbed-server");
    let deadline = Instant::now() + Duration::from_secs(30);
    let status = loop {
        if let Some(st) = child.try_wait().expect("wait for tpbed-server") {
            break st;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            panic!("tpbed-server started with an unknown policy");
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let mut log = String::new();
    child
        .stderr
        .take()
        .expect("stderr piped")
        .read_to_string(&mut log)
        .unwrap();
    assert!(!status.success(), "{log}");
    assert!(
        log.contains("unknown policy 'lottery'") && log.contains("mysql, fifo"),
        "the message names the policy and the registered ones: {log}"
    );
}

/// One probe: `busy` starts `long_sql` in the (only) group, and once `watcher` (a connection
/// in the Admin group, which the group's stall does not hold up) sees it running, `probe`
/// sends `SELECT 1`. Returns the probe's latency and the head start: how long after `busy`
/// sent its statement the probe was sent.
fn probe_latency(
    srv: &TestServer,
    watcher: &mut Conn,
    long_sql: &'static str,
) -> (Duration, Duration) {
    let mut busy = srv.connect();
    let mut probe = srv.connect();
    probe.query_drop("SELECT 1").unwrap();
    let running = format!(
        "SELECT INFO FROM information_schema.PROCESSLIST WHERE ID = {} AND COMMAND = 'Query'",
        busy.connection_id()
    );
    let sent = Instant::now();
    let t = std::thread::spawn(move || {
        busy.query_drop(long_sql).unwrap();
    });
    loop {
        let info: Option<Option<String>> = watcher.query_first(&running).unwrap();
        if info.flatten().as_deref() == Some(long_sql) {
            break;
        }
        assert!(
            sent.elapsed() < Duration::from_secs(5),
            "the busy statement never ran"
        );
    }
    let head = sent.elapsed();
    let start = Instant::now();
    probe.query_drop("SELECT 1").unwrap();
    let took = start.elapsed();
    t.join().unwrap();
    (took, head)
}

/// The probe that shows what the scheduler does: among up to six tries, those whose probe
/// went out within 25 ms of the busy statement (well inside the 60 ms stall limit), the one
/// with the lowest latency (scheduling noise on a loaded machine only ever adds delay).
fn best_probe(
    srv: &TestServer,
    watcher: &mut Conn,
    long_sql: &'static str,
) -> (Duration, Duration) {
    let mut tries = Vec::new();
    for _ in 0..6 {
        let (took, head) = probe_latency(srv, watcher, long_sql);
        if head <= Duration::from_millis(25) {
            tries.push((took, head));
            if tries.len() == 3 {
                break;
            }
        }
    }
    tries
        .into_iter()
        .min()
        .unwrap_or_else(|| panic!("no probe went out within 25 ms of {long_sql}"))
}

/// Timing tests run one at a time.
static SERIAL: std::sync::Mutex<()> = std::sync::Mutex::new(());

/// The stall rule in `mode`; the caller holds [`SERIAL`] (also over the io_uring probe, whose
/// throwaway server would otherwise compete with another test's measurement).
fn stall_rule(mode: Mode) {
    let srv = mode.start(&[
        "--thread-pool-size=1",
        "--thread-pool-max-transactions-limit=0",
        "--thread-pool-query-threads-per-group=1",
        "--thread-pool-stall-limit=6",
    ]);
    let poller = mode.name();
    let mut c = srv.connect();
    // Calibrate a CPU-bound statement of about a second.
    let mut n: u64 = 20_000;
    loop {
        let t = Instant::now();
        c.query_drop(format!("SELECT BENCHMARK({n}, CONCAT('x', 1))"))
            .unwrap();
        if t.elapsed() > Duration::from_millis(600) {
            break;
        }
        n *= 2;
    }
    // A watcher in the Admin group (TP_CONNECTION_ADMIN) sees when a statement runs (PROCESS:
    // another account's statement shows in the processlist only with it).
    c.query_drop("CREATE USER 'watch'@'%' IDENTIFIED BY 'w'")
        .unwrap();
    c.query_drop("GRANT PROCESS, TP_CONNECTION_ADMIN ON *.* TO 'watch'@'%'")
        .unwrap();
    drop(c);
    let mut watcher = Conn::new(srv.opts("watch", "w")).unwrap();
    let sql: &'static str =
        Box::leak(format!("SELECT BENCHMARK({n}, CONCAT('x', 1))").into_boxed_str());
    let (cpu, cpu_head) = best_probe(&srv, &mut watcher, sql);
    let (sleep, sleep_head) = best_probe(&srv, &mut watcher, "SELECT SLEEP(0.3)");
    eprintln!(
        "{poller}: behind a CPU-bound statement {cpu:?} (sent {cpu_head:?} after it), behind \
         SLEEP {sleep:?} (sent {sleep_head:?} after it)"
    );
    let (stalled, sleeps): (u64, u64) = srv
        .connect()
        .query_first(
            "SELECT STALLED_QUERIES_EXECUTED, SLEEP_WAITS FROM performance_schema.tp_thread_group_stats WHERE TP_GROUP_ID = 0",
        )
        .unwrap()
        .unwrap();
    assert!(stalled >= 3, "STALLED_QUERIES_EXECUTED rose: {stalled}");
    assert!(sleeps >= 3, "SLEEP_WAITS rose: {sleeps}");
    // The stall limit is 60 ms from the statement's start, which is no earlier than it was
    // sent: the probe, sent `cpu_head` after that, waits for the stall checker to mark the
    // group stalled (up to 60 ms from the start, minus slack for timer granularity), plus at
    // most a checker period (10 ms) and scheduling.
    assert!(
        cpu + cpu_head >= Duration::from_millis(45),
        "the probe waited for the stall rule: {cpu:?} after a {cpu_head:?} head start"
    );
    assert!(
        cpu <= Duration::from_millis(60 + 20),
        "stall limit + at most 20 ms: {cpu:?}"
    );
    assert!(
        sleep < Duration::from_millis(20),
        "a reported wait frees the credit: {sleep:?}"
    );
}

#[test]
fn stall_rule_epoll() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    Mode::PoolEpoll.run(stall_rule);
}

/// Skipped (a failure under `TPBED_REQUIRE_TOOLS=1`) where io_uring is unusable, rather than
/// passing on the epoll fallback.
#[test]
fn stall_rule_io_uring() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    Mode::PoolIoUring.run(stall_rule);
}

/// The stall rule is the same when statement bytes move through the group's io_uring.
#[test]
fn stall_rule_ring() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    Mode::PoolRing.run(stall_rule);
}

#[test]
fn transaction_limit_admits_the_admin_group() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let srv = TestServer::start(&[
        "--thread-handling=pool-of-threads",
        "--thread-pool-size=1",
        "--thread-pool-max-transactions-limit=1",
        "--thread-pool-query-threads-per-group=1",
    ]);
    let mut root = srv.connect();
    root.query_drop("CREATE USER 'tp'@'%' IDENTIFIED BY 'x'")
        .unwrap();
    root.query_drop("GRANT ALL ON *.* TO 'tp'@'%'").unwrap();
    root.query_drop("GRANT TP_CONNECTION_ADMIN ON *.* TO 'tp'@'%'")
        .unwrap();
    drop(root);
    // MySQL admits share + 1 attached transactions per group: two holders fill a limit of 1.
    let mut holders: Vec<mysql::Conn> = (0..2).map(|_| srv.connect()).collect();
    for h in &mut holders {
        h.query_drop("BEGIN").unwrap();
        h.query_drop("SELECT 1").unwrap();
    }
    // A further transaction in the same group has to wait for a slot.
    let port = srv.port;
    let opts = srv.opts("root", "");
    let waiter = std::thread::spawn(move || {
        // The new connection's first statements (the crate's own, then BEGIN) wait for a slot.
        let t = Instant::now();
        let mut c = mysql::Conn::new(opts).unwrap();
        c.query_drop("BEGIN").unwrap();
        c.query_drop("SELECT 1").unwrap();
        c.query_drop("COMMIT").unwrap();
        (t.elapsed(), port)
    });
    std::thread::sleep(Duration::from_millis(400));
    let mut admin = mysql::Conn::new(srv.opts("tp", "x")).expect("TP_CONNECTION_ADMIN gets in");
    let t = Instant::now();
    admin
        .query_drop("SET GLOBAL thread_pool_max_transactions_limit = 8")
        .unwrap();
    assert!(
        t.elapsed() < Duration::from_secs(1),
        "the Admin group is not limited"
    );
    for h in &mut holders {
        h.query_drop("COMMIT").unwrap();
    }
    let (waited, _) = waiter.join().unwrap();
    assert!(
        waited >= Duration::from_millis(300),
        "the second transaction waited: {waited:?}"
    );
}

/// The io_uring poller with 1,100 connections (sysbench's 1,024 threads did not
/// finish connecting). Each connection logs in, runs a reported wait (`SLEEP`), which makes
/// the pool create threads that then retire (`thread_pool_max_unused_threads=2`), and must
/// still get its next statement answered: the kernel cancels the poll requests a retiring
/// thread submitted, and the poller has to submit them again.
#[test]
fn io_uring_serves_1100_connections_after_threads_retire() {
    use protocol::client::blocking::Conn;
    use protocol::client::ClientConfig;
    use std::net::TcpStream;
    use std::sync::{Arc, Barrier};

    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let n = 1100;
    assert!(
        tpbed_tests::raise_nofile_limit() >= n as u64 + 100,
        "the test holds {n} sockets"
    );
    if let Err(why) = Mode::PoolIoUring.available() {
        tpbed_tests::skip(&format!("io_uring is unavailable: {why}"));
        return;
    }
    let srv = Mode::PoolIoUring.start(&[
        "--thread-pool-size=1",
        "--max-connections=2000",
        "--thread-pool-max-transactions-limit=512",
        "--thread-pool-max-unused-threads=2",
    ]);
    let port = srv.port;
    let logged_in = Arc::new(Barrier::new(n));
    let slept = Arc::new(Barrier::new(n));
    let clients: Vec<_> = (0..n)
        .map(|_| {
            let (logged_in, slept) = (logged_in.clone(), slept.clone());
            std::thread::Builder::new()
                .stack_size(256 * 1024)
                .spawn(move || -> Result<(), String> {
                    // Bounded waits everywhere: a lost connection fails instead of hanging.
                    let login = (|| {
                        let s =
                            TcpStream::connect(("127.0.0.1", port)).map_err(|e| e.to_string())?;
                        s.set_read_timeout(Some(Duration::from_secs(30)))
                            .map_err(|e| e.to_string())?;
                        let mut c = Conn::connect(s, ClientConfig::new("root", ""))
                            .map_err(|e| format!("login: {e:?}"))?;
                        c.query("SELECT 1")
                            .map_err(|e| format!("first SELECT 1: {e:?}"))?;
                        Ok::<_, String>(c)
                    })();
                    logged_in.wait();
                    // Every thread reaches both barriers, whatever failed before them.
                    let slept_ok = login.and_then(|mut c| {
                        c.query("SELECT SLEEP(0.2)")
                            .map(|_| c)
                            .map_err(|e| format!("SLEEP: {e:?}"))
                    });
                    slept.wait();
                    let mut c = slept_ok?;
                    // Let the threads the sleeps created go idle and retire.
                    std::thread::sleep(Duration::from_millis(500));
                    c.query("SELECT 1")
                        .map(|_| ())
                        .map_err(|e| format!("SELECT 1 after the retirements: {e:?}"))
                })
                .expect("spawn a client thread")
        })
        .collect();
    let results: Vec<Result<(), String>> = clients.into_iter().map(|h| h.join().unwrap()).collect();
    let failed: Vec<&String> = results.iter().filter_map(|r| r.as_ref().err()).collect();
    let started: u64 = srv
        .connect()
        .query_first("SELECT CAST(SUM(THREADS_STARTED) AS UNSIGNED) FROM performance_schema.tp_thread_group_stats")
        .unwrap()
        .unwrap();
    eprintln!(
        "io_uring, {n} connections: {} failed, {started} pool threads started",
        failed.len()
    );
    assert!(
        failed.is_empty(),
        "{} of {n} connections failed, first: {:?}",
        failed.len(),
        failed.first()
    );
    assert!(
        started > 10,
        "the sleeps made the pool create (and retire) threads: {started}"
    );
}

/// Under `policy`, with one group, one run slot (`thread_pool_max_active_query_threads=1`,
/// which the stall rule does not widen) and a 5 ms time slice: a connection runs a nested-loop
/// join of a table with itself (a long scan), and once it runs another sends a point select.
/// Returns whether the point select finished well before the join did, the group's
/// `TPBED_YIELDS` and `Tpbed_thread_pool_yields` in SHOW GLOBAL STATUS.
fn point_select_beside_a_long_scan(policy: &str) -> (bool, u64, u64) {
    let srv = TestServer::start(&[
        "--thread-handling=pool-of-threads",
        "--thread-pool-size=1",
        "--thread-pool-max-transactions-limit=0",
        "--thread-pool-query-threads-per-group=1",
        "--thread-pool-max-active-query-threads=1",
        "--tpbed-thread-pool-time-slice=5",
        &format!("--tpbed-thread-pool-policy={policy}"),
    ]);
    let mut c = srv.connect();
    c.query_drop("CREATE DATABASE d").unwrap();
    c.query_drop("CREATE TABLE d.t (id INT PRIMARY KEY, c INT)")
        .unwrap();
    let values: Vec<String> = (1..=512).map(|i| format!("({i},{i})")).collect();
    c.query_drop(format!("INSERT INTO d.t VALUES {}", values.join(",")))
        .unwrap();
    c.query_drop("CREATE USER 'watch'@'%' IDENTIFIED BY 'w'")
        .unwrap();
    c.query_drop("GRANT PROCESS, TP_CONNECTION_ADMIN ON *.* TO 'watch'@'%'")
        .unwrap();
    let mut watcher = Conn::new(srv.opts("watch", "w")).unwrap();
    let mut scan = srv.connect();
    let mut point = srv.connect();
    point.query_drop("SELECT 1").unwrap();
    let sql = "SELECT COUNT(*) FROM d.t a JOIN d.t b ON a.c + b.c < 0";
    let running = format!(
        "SELECT INFO FROM information_schema.PROCESSLIST WHERE ID = {} AND COMMAND = 'Query'",
        scan.connection_id()
    );
    let t = std::thread::spawn(move || {
        let n: u64 = scan.query_first(sql).unwrap().unwrap();
        assert_eq!(n, 0);
        Instant::now()
    });
    let sent = Instant::now();
    loop {
        let info: Option<Option<String>> = watcher.query_first(&running).unwrap();
        if info.flatten().as_deref() == Some(sql) {
            break;
        }
        assert!(
            sent.elapsed() < Duration::from_secs(10),
            "the scan never ran"
        );
    }
    let id: u64 = point
        .query_first("SELECT id FROM d.t WHERE id = 7")
        .unwrap()
        .unwrap();
    assert_eq!(id, 7);
    let point_done = Instant::now();
    let scan_done = t.join().unwrap();
    // The scan runs for seconds; 200 ms of slack absorbs the scan's client reading its reply.
    let beside = point_done + Duration::from_millis(200) < scan_done;
    let group: u64 = watcher
        .query_first("SELECT TPBED_YIELDS FROM information_schema.TP_THREAD_GROUP_STATS WHERE TP_GROUP_ID = 0")
        .unwrap()
        .unwrap();
    let status: (String, u64) = watcher
        .query_first("SHOW GLOBAL STATUS LIKE 'Tpbed_thread_pool_yields'")
        .unwrap()
        .unwrap();
    (beside, group, status.1)
}

/// Ours: cooperative yield. Under `time-slice` the long scan gives its thread up at its safe
/// points after each quantum, so the point select runs while the scan goes on; under `mysql`
/// the point select waits for the scan (its only run slot is taken) and nothing yields.
#[test]
fn a_time_slice_lets_a_point_select_past_a_long_scan() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let (beside, yields, status) = point_select_beside_a_long_scan("time-slice");
    assert!(beside, "the point select finished while the scan ran");
    assert!(yields > 0, "the scan yielded: {yields}");
    assert_eq!(status, yields, "one group: the status total is its count");
    let (beside, yields, status) = point_select_beside_a_long_scan("mysql");
    assert!(!beside, "under mysql the point select waited for the scan");
    assert_eq!(
        (yields, status),
        (0, 0),
        "mysql never asks a statement to yield"
    );
}
