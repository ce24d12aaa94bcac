//! Scheduler tests on real threads with the model network and a manual clock: the stall
//! rule, the wait hook, the transaction limit, the Admin group, expiry and shutdown, each
//! driven by explicit `tick(now)` calls so time is exact. The tests that do not depend on a
//! policy's own rules run once per registered policy ([`each_policy`]).

use crate::builder::PoolBuilder;
use crate::clock::ManualClock;
use crate::config::{PoolConfig, Rails};
use crate::handler::ConnectionHandler;
use crate::poller::model::ModelNet;
use crate::pool::ThreadPool;
use crate::testkit::{Client, Cmd, Gate, ModelSession, Tally};
use crate::wait::WaitKind;
use std::cell::Cell;
use std::sync::Arc;
use std::time::{Duration, Instant};

thread_local! {
    /// The policy the rigs of this test thread start their pool with.
    static POLICY: Cell<&'static str> = const { Cell::new("mysql") };
}

/// Runs `body` once for every registered policy; each rig it makes runs that policy.
fn each_policy(body: impl Fn()) {
    for p in crate::policy::names() {
        eprintln!("policy {p}");
        POLICY.with(|c| c.set(p));
        body();
    }
    POLICY.with(|c| c.set("mysql"));
}

pub(crate) struct Rig {
    pub(crate) pool: ThreadPool<ModelSession>,
    pub(crate) net: crate::sync::Arc<ModelNet>,
    pub(crate) clock: Arc<ManualClock>,
    pub(crate) tally: crate::sync::Arc<Tally>,
}

pub(crate) fn rig(edit: impl FnOnce(&mut PoolConfig)) -> Rig {
    rig_logging(edit, Arc::new(|_, _| {}))
}

pub(crate) fn rig_logging(edit: impl FnOnce(&mut PoolConfig), log: crate::shared::LogSink) -> Rig {
    rig_full(edit, log, false)
}

/// The rig with the deferring model poller (io_uring's re-arm rules) when `defer`.
fn rig_full(edit: impl FnOnce(&mut PoolConfig), log: crate::shared::LogSink, defer: bool) -> Rig {
    let mut c = PoolConfig::mysql_defaults(2);
    c.size = 1;
    c.max_transactions_limit = 0;
    c.query_threads_per_group = 1;
    c.policy = POLICY.with(Cell::get).to_string();
    edit(&mut c);
    let net = ModelNet::new(c.size as usize + 1);
    let clock = Arc::new(ManualClock::new());
    let n2 = net.clone();
    let (pool, _) = PoolBuilder::new(c)
        .clock(clock.clone())
        .manual_ticks()
        .inline_handshake()
        .log(log)
        .pollers(Box::new(move |g| {
            Ok(Box::new(ModelNet::poller(&n2, g, defer)))
        }))
        .build::<ModelSession>()
        .expect("pool starts");
    Rig {
        pool,
        net,
        clock,
        tally: Tally::new(),
    }
}

impl Rig {
    fn connect(&self, fd: i32, admin: bool) -> Client {
        let mut s = ModelSession::new(&self.net, fd, &self.tally);
        s.admin = admin;
        let c = s.client();
        self.pool.add_connection(s);
        c
    }

    fn tick_at(&self, ms: u64) {
        let target = Duration::from_millis(ms);
        let now = crate::clock::Clock::now(&*self.clock);
        self.clock.advance(target.saturating_sub(now));
        self.pool.tick(target);
    }
}

/// Waits (real time, bounded) until `f` holds.
fn eventually(what: &str, f: impl Fn() -> bool) {
    let t = Instant::now();
    while !f() {
        assert!(
            t.elapsed() < Duration::from_secs(5),
            "timed out waiting for {what}"
        );
        std::thread::sleep(Duration::from_millis(1));
    }
}

/// Gives the pool time to do what it should not (a negative check).
fn settle() {
    std::thread::sleep(Duration::from_millis(30));
}

#[test]
fn a_stalled_statement_lets_the_next_one_in_after_the_stall_limit() {
    each_policy(|| {
        let r = rig(|_| {});
        let a = r.connect(1, false);
        let b = r.connect(2, false);
        let gate = Gate::new();
        a.send(Cmd::Gate(gate.clone()));
        eventually("A runs", || r.tally.runs() == 1);
        b.send(Cmd::Plain);
        settle();
        assert_eq!(
            r.tally.runs(),
            1,
            "A holds the only credit and the poll role"
        );
        r.tick_at(50);
        settle();
        assert_eq!(r.tally.runs(), 1, "not stalled before 60 ms");
        r.tick_at(60);
        eventually("B runs after the stall", || r.tally.runs() == 2);
        let stats = r.pool.group_stats()[0];
        assert_eq!(stats.stalled_queries_executed, 1);
        assert!(stats.wake_thread_stall_checker >= 1);
        let state = &r.pool.group_states()[0];
        assert_eq!(state.stalled_thread_count, 1);
        gate.open();
        eventually("A detaches", || {
            r.pool.group_states()[0].active_thread_count == 0
        });
        assert_eq!(r.pool.group_states()[0].stalled_thread_count, 0);
        r.pool.shutdown();
        assert_eq!(r.pool.stats().threads_alive, 0);
        assert_eq!(r.tally.dropped.load(std::sync::atomic::Ordering::SeqCst), 2);
    });
}

#[test]
fn a_reported_wait_hands_the_role_on_without_a_tick() {
    each_policy(|| {
        let r = rig(|_| {});
        let a = r.connect(1, false);
        let b = r.connect(2, false);
        let gate = Gate::new();
        a.send(Cmd::WaitGate(WaitKind::Sleep, gate.clone()));
        eventually("A runs", || r.tally.runs() == 1);
        b.send(Cmd::Plain);
        eventually("B runs during A's wait", || r.tally.runs() == 2);
        let stats = r.pool.group_stats()[0];
        assert_eq!(stats.sleep_waits, 1);
        assert_eq!(stats.stalled_queries_executed, 0);
        let rows = r.pool.thread_states();
        assert!(rows.iter().any(|t| t.wait_type == Some(WaitKind::Sleep)));
        gate.open();
        r.pool.shutdown();
    });
}

/// A pool with `thread_pool_max_transactions_limit = 1` (share 1) where connections A and B
/// have begun transactions, so share + 1 = 2 threads are bound; returns it with A, B and an
/// idle connection C.
fn two_bound_under_limit_one() -> (Rig, Client, Client, Client) {
    let r = rig(|c| c.max_transactions_limit = 1);
    let a = r.connect(1, false);
    let b = r.connect(2, false);
    let c = r.connect(3, false);
    a.send(Cmd::Begin);
    eventually("A begins", || r.tally.runs() == 1);
    b.send(Cmd::Begin);
    // A stays bound, reading; the stall checker hands the poll role on.
    r.tick_at(60);
    eventually("B begins (bound = share + 1)", || r.tally.runs() == 2);
    (r, a, b, c)
}

#[test]
fn the_transaction_limit_holds_new_work_but_not_the_admin_group() {
    each_policy(|| {
        // size 1, limit 1: share 1, so at most share + 1 = 2 threads bound.
        let (r, a, b, c) = two_bound_under_limit_one();
        let admin = r.connect(4, true);
        c.send(Cmd::Plain);
        for ms in [120, 180, 240] {
            r.tick_at(ms);
        }
        settle();
        assert_eq!(r.tally.runs(), 2, "C waits: the group is at its limit");
        let st = &r.pool.group_states()[0];
        assert_eq!(st.threads_bound_to_transaction, 2);
        assert_eq!(st.effective_max_transactions_limit, 1);
        admin.send(Cmd::Plain);
        eventually("the Admin group is not limited", || r.tally.runs() == 3);
        assert_eq!(r.pool.group_states()[1].effective_max_transactions_limit, 0);
        a.send(Cmd::Commit);
        eventually("C runs once A commits", || r.tally.runs() == 5);
        b.send(Cmd::Commit);
        eventually("B commits", || r.tally.runs() == 6);
        r.pool.shutdown();
        assert_eq!(r.pool.stats().threads_alive, 0);
    });
}

#[test]
fn raising_the_limit_at_run_time_admits_waiting_work() {
    each_policy(|| {
        let (r, _a, _b, c) = two_bound_under_limit_one();
        c.send(Cmd::Plain);
        r.tick_at(120);
        settle();
        assert_eq!(r.tally.runs(), 2);
        r.pool.knobs().set_max_transactions_limit(3).unwrap();
        r.tick_at(180);
        eventually("C runs under the raised limit", || r.tally.runs() == 3);
        r.pool.shutdown();
    });
}

#[test]
fn idle_connections_expire_at_wait_timeout() {
    each_policy(|| {
        let r = rig(|_| {});
        let mut s = ModelSession::new(&r.net, 1, &r.tally);
        s.idle = Duration::from_millis(100);
        r.pool.add_connection(s);
        r.tick_at(50);
        assert_eq!(r.tally.expired.load(std::sync::atomic::Ordering::SeqCst), 0);
        r.tick_at(101);
        assert_eq!(r.tally.expired.load(std::sync::atomic::Ordering::SeqCst), 1);
        assert_eq!(r.tally.dropped.load(std::sync::atomic::Ordering::SeqCst), 1);
        let st = r.pool.group_stats()[0];
        assert_eq!((st.connections_closed, st.tpbed_expired), (1, 1));
        assert_eq!(r.pool.stats().threads_connected, 0);
        r.pool.shutdown();
    });
}

#[test]
fn events_without_credit_queue_low_and_are_kicked_up() {
    // max_active_query_threads = 1: branch 2 of the credit rule, which stalls do not widen.
    let r = rig(|c| {
        c.max_active_query_threads = 1;
        c.prio_kickup_timer = 100;
    });
    let a = r.connect(1, false);
    let b = r.connect(2, false);
    let gate = Gate::new();
    a.send(Cmd::Gate(gate.clone()));
    eventually("A", || r.tally.runs() == 1);
    b.send(Cmd::Plain);
    // A stalls; the stall checker takes the poll role from it and starts a thread, which
    // polls B but has no credit, so B is queued (low priority: no transaction).
    r.tick_at(60);
    eventually("B queued low", || {
        r.pool.group_states()[0].queued_transactions == 1
    });
    assert_eq!(r.tally.runs(), 1);
    r.tick_at(150);
    assert_eq!(
        r.pool.group_stats()[0].prio_kickups,
        0,
        "waited 90 ms < 100 ms"
    );
    r.tick_at(170);
    let st = &r.pool.group_states()[0];
    assert_eq!(
        (st.queued_queries, st.queued_transactions),
        (1, 0),
        "kicked up"
    );
    assert_eq!(r.pool.group_stats()[0].prio_kickups, 1);
    gate.open();
    eventually("B runs once A detaches", || r.tally.runs() == 2);
    assert_eq!(r.pool.group_stats()[0].queries_queued, 1);
    r.pool.shutdown();
}

#[test]
fn shutdown_closes_parked_and_bound_sessions_and_joins_threads() {
    each_policy(|| {
        let r = rig(|c| c.max_transactions_limit = 4);
        let a = r.connect(1, false);
        let _b = r.connect(2, false);
        a.send(Cmd::Begin);
        eventually("A bound", || r.tally.runs() == 1);
        r.pool.shutdown();
        assert_eq!(r.pool.stats().threads_alive, 0);
        assert_eq!(r.tally.dropped.load(std::sync::atomic::Ordering::SeqCst), 2);
        r.pool.shutdown();
    });
}

#[test]
fn every_sent_command_runs_and_quit_closes() {
    each_policy(|| {
        every_sent_command_runs(false);
    });
}

/// The same with deferred re-arms (group.rs, re-arm protocol step 5).
#[test]
fn every_sent_command_runs_with_deferred_rearms() {
    each_policy(|| {
        every_sent_command_runs(true);
    });
}

fn every_sent_command_runs(defer: bool) {
    let r = rig_full(
        |c| c.query_threads_per_group = 2,
        Arc::new(|_, _| {}),
        defer,
    );
    let a = r.connect(1, false);
    let b = r.connect(2, false);
    for i in 0..20 {
        a.send(Cmd::Plain);
        b.send(Cmd::Wait(WaitKind::RowLock));
        r.tally.wait_runs(2 * (i + 1));
    }
    a.send(Cmd::Quit);
    r.tally.wait_runs(41);
    eventually("A closed", || {
        r.pool.group_stats()[0].connections_closed == 1
    });
    let st = r.pool.group_stats()[0];
    assert_eq!(st.row_lock_waits, 20);
    assert_eq!(st.queries_executed, 41);
    r.pool.shutdown();
}

#[test]
fn long_running_transactions_suspend_the_limit_and_it_comes_back() {
    each_policy(|| {
        // share 1; longrun 10 ms (checked every 5 ms).
        let r = rig(|c| {
            c.max_transactions_limit = 1;
            c.longrun_trx_limit = 10;
        });
        let suspended = || {
            r.pool.group_states()[0]
                .time_of_last_longrunning_trxs_check
                .is_some()
        };
        let a = r.connect(1, false);
        let b = r.connect(2, false);
        let c = r.connect(3, false);
        a.send(Cmd::Begin);
        eventually("A", || r.tally.runs() == 1);
        r.tick_at(5);
        assert!(!suspended(), "A is 5 ms old: not long-running yet");
        b.send(Cmd::Begin);
        c.send(Cmd::Plain);
        // A (older than 10 ms) holds the only slot: count 1 >= share 1 suspends the limit, and
        // thread creation is no longer capped at share + 1, so B and C both get in.
        r.tick_at(60);
        assert!(suspended());
        for ms in [70, 80, 90, 100] {
            r.tick_at(ms);
        }
        eventually("B and C run while the limit is suspended", || {
            r.tally.runs() == 3
        });
        // C's statement is counted when it runs, before its thread detaches (and, on epoll,
        // re-arms first): wait for that, then A and B are the two bound threads.
        eventually("C's thread detaches; A and B stay bound", || {
            r.pool.group_states()[0].threads_bound_to_transaction == 2
        });
        a.send(Cmd::Commit);
        b.send(Cmd::Commit);
        eventually("commits", || r.tally.runs() == 5);
        // count 0 <= share / 2: re-applied once the stamp is older than the 5 s grace.
        r.tick_at(3000);
        assert!(suspended(), "within the grace period");
        r.tick_at(5200);
        assert!(
            !suspended(),
            "re-applied after clamp(15 x 10 ms, 5 s, 30 s)"
        );
        r.pool.shutdown();
    });
}

#[test]
fn transaction_delay_is_a_reported_wait_outside_transactions() {
    each_policy(|| {
        let r = rig(|c| c.transaction_delay = 30);
        let a = r.connect(1, false);
        let t = Instant::now();
        a.send(Cmd::Begin);
        r.tally.wait_runs(1);
        assert!(t.elapsed() >= Duration::from_millis(30));
        let t = Instant::now();
        a.send(Cmd::Commit);
        r.tally.wait_runs(2);
        assert!(
            t.elapsed() < Duration::from_millis(30),
            "no delay inside a transaction"
        );
        assert_eq!(r.pool.group_stats()[0].tpbed_trx_delay_waits, 1);
        r.pool.shutdown();
    });
}

#[test]
fn dedicated_listener_only_polls() {
    each_policy(|| {
        let r = rig(|c| {
            c.max_transactions_limit = 4;
            c.dedicated_listeners = true;
        });
        let rows = r.pool.thread_states();
        assert!(rows
            .iter()
            .any(|t| t.tp_thread_type == crate::stats::ThreadKind::Listener));
        assert_eq!(r.pool.group_states()[0].algorithm, "Dedicated Listeners");
        let a = r.connect(1, false);
        let b = r.connect(2, false);
        for i in 0..10 {
            a.send(Cmd::Plain);
            b.send(Cmd::Plain);
            r.tally.wait_runs(2 * (i + 1));
        }
        assert_eq!(r.pool.group_stats()[0].tpbed_direct_executions, 0);
        r.pool.shutdown();
    });
}

#[test]
fn connection_report_every_tenth_of_the_interval_for_three_minutes() {
    each_policy(|| {
        let lines = Arc::new(std::sync::Mutex::new(Vec::<String>::new()));
        let l2 = lines.clone();
        let r = rig_logging(
            |c| c.connection_report_interval = 60,
            Arc::new(move |_, m: &str| l2.lock().unwrap().push(m.to_string())),
        );
        let _a = r.connect(1, false);
        let reports = || {
            lines
                .lock()
                .unwrap()
                .iter()
                .filter(|l| l.contains("connection(s); per group"))
                .count()
        };
        r.tick_at(5_000);
        assert_eq!(reports(), 0);
        r.tick_at(6_000);
        assert_eq!(reports(), 1, "6 s = 60 s / 10 in the first three minutes");
        assert!(lines
            .lock()
            .unwrap()
            .iter()
            .any(|l| l.contains("1 connection(s)")));
        r.tick_at(200_000);
        assert_eq!(reports(), 2);
        r.tick_at(230_000);
        assert_eq!(
            reports(),
            2,
            "after three minutes the full 60 s interval applies"
        );
        r.tick_at(260_000);
        assert_eq!(reports(), 3);
        r.pool.shutdown();
    });
}

#[test]
fn the_stall_checker_starts_no_thread_for_queued_work_without_credit() {
    each_policy(|| {
        // max_active_query_threads = 1: stalls do not widen the credit, so B stays queued.
        let r = rig(|c| c.max_active_query_threads = 1);
        let a = r.connect(1, false);
        let b = r.connect(2, false);
        let gate = Gate::new();
        a.send(Cmd::Gate(gate.clone()));
        eventually("A", || r.tally.runs() == 1);
        b.send(Cmd::Plain);
        r.tick_at(60);
        eventually("B queued", || {
            let st = &r.pool.group_states()[0];
            st.queued_queries + st.queued_transactions == 1
        });
        settle();
        let before = r.pool.group_stats()[0];
        for ms in [70, 80, 90, 100, 110] {
            r.tick_at(ms);
            settle();
        }
        let after = r.pool.group_stats()[0];
        let runs = r.tally.runs();
        // Let A finish before asserting, so a failure does not leave a thread behind the gate.
        gate.open();
        eventually("B runs once A detaches", || r.tally.runs() == 2);
        r.pool.shutdown();
        assert_eq!(runs, 1, "B waited for credit");
        assert_eq!(
            (after.threads_started, after.wake_thread_stall_checker),
            (before.threads_started, before.wake_thread_stall_checker),
            "an event that cannot start is no reason to wake or create a thread"
        );
    });
}

#[test]
fn query_threads_above_the_transaction_share_stay_as_sleepers() {
    each_policy(|| {
        // share 1: share + 1 = 2 bound, and one more thread to poll.
        let (r, a, b, c) = two_bound_under_limit_one();
        c.send(Cmd::Plain);
        for ms in [70, 80, 90, 100, 110, 120] {
            r.tick_at(ms);
        }
        settle();
        let runs_at_limit = r.tally.runs();
        let threads_at_limit = r.pool.group_states()[0].query_threads_count;
        a.send(Cmd::Commit);
        b.send(Cmd::Commit);
        eventually("C and the commits run", || r.tally.runs() == 5);
        settle();
        let idle = r.pool.group_states()[0].clone();
        r.pool.shutdown();
        assert_eq!(runs_at_limit, 2, "C waited for a transaction slot");
        assert_eq!(
            threads_at_limit, 3,
            "the cap is share + 2: two bound and a poller"
        );
        assert_eq!(idle.threads_bound_to_transaction, 0);
        assert_eq!(
            idle.query_threads_count, 3,
            "without dedicated listeners an idle thread sleeps instead of exiting"
        );
    });
}

/// Queues, with the only credit held by a stalled statement, a statement of a connection
/// outside a transaction (B) and then one inside a transaction (C), and lets a kick-up come
/// due; returns the (high, low) queue lengths and the kick-ups, after letting everything run.
fn classes_queued(policy: &'static str) -> ((u32, u32), u64) {
    POLICY.with(|c| c.set(policy));
    // max_active_query_threads = 1: a stall does not widen the credit, so B and C wait.
    let r = rig(|c| {
        c.max_active_query_threads = 1;
        c.prio_kickup_timer = 100;
    });
    POLICY.with(|c| c.set("mysql"));
    let a = r.connect(1, false);
    let b = r.connect(2, false);
    let c = r.connect(3, false);
    c.send(Cmd::Begin);
    eventually("C begins", || r.tally.runs() == 1);
    let gate = Gate::new();
    a.send(Cmd::Gate(gate.clone()));
    eventually("A runs", || r.tally.runs() == 2);
    b.send(Cmd::Plain);
    r.tick_at(60);
    let queued = |n| {
        let st = &r.pool.group_states()[0];
        st.queued_queries + st.queued_transactions == n
    };
    eventually("B queued", || queued(1));
    c.send(Cmd::Plain);
    eventually("C queued", || queued(2));
    let st = &r.pool.group_states()[0];
    let lengths = (st.queued_queries, st.queued_transactions);
    r.tick_at(200);
    let kickups = r.pool.group_stats()[0].prio_kickups;
    gate.open();
    eventually("B and C run once A detaches", || r.tally.runs() == 4);
    r.pool.shutdown();
    (lengths, kickups)
}

#[test]
fn mysql_queues_a_transaction_high_and_kicks_the_low_head_up() {
    assert_eq!(classes_queued("mysql"), ((1, 1), 1));
}

#[test]
fn fifo_queues_every_statement_in_one_queue_and_never_kicks_up() {
    assert_eq!(classes_queued("fifo"), ((0, 2), 0));
}

#[test]
fn an_unknown_policy_is_refused_with_the_registered_names() {
    let mut c = PoolConfig::mysql_defaults(2);
    c.policy = "FIFO".into();
    let (pool, startup) = PoolBuilder::new(c.clone())
        .manual_ticks()
        .build::<ModelSession>()
        .expect("a registered name, any case");
    assert_eq!(startup.config.policy, "fifo", "reported as registered");
    pool.shutdown();
    c.policy = "lottery".into();
    let e = PoolBuilder::new(c)
        .manual_ticks()
        .build::<ModelSession>()
        .expect_err("not registered");
    let msg = e.to_string();
    assert!(msg.contains("unknown policy 'lottery'"), "{msg}");
    for n in crate::policy::names() {
        assert!(msg.contains(n), "{msg} lists {n}");
    }
}

/// Whether, with `rails`, an Admin-group statement (B) runs while another (A) holds the Admin
/// group's only credit (`max_active_query_threads = 1`: a stall does not widen it).
fn admin_passes_the_run_cap(rails: Rails) -> bool {
    let r = rig(|c| {
        c.max_active_query_threads = 1;
        c.rails = rails;
    });
    let a = r.connect(1, true);
    let b = r.connect(2, true);
    let gate = Gate::new();
    a.send(Cmd::Gate(gate.clone()));
    eventually("A runs", || r.tally.runs() == 1);
    b.send(Cmd::Plain);
    // The stall checker takes the poll role from A; the thread it starts finds B.
    r.tick_at(60);
    let ran = ran_within(&r, 2, Duration::from_secs(1));
    gate.open();
    eventually("both ran", || r.tally.runs() == 2);
    r.pool.shutdown();
    ran
}

/// Whether the tally reaches `runs` within `limit` (real time).
fn ran_within(r: &Rig, runs: usize, limit: Duration) -> bool {
    let t = Instant::now();
    while r.tally.runs() < runs && t.elapsed() < limit {
        std::thread::sleep(Duration::from_millis(1));
    }
    r.tally.runs() >= runs
}

#[test]
fn the_admin_group_passes_the_run_cap() {
    each_policy(|| {
        assert!(admin_passes_the_run_cap(Rails::ALL), "B ran past the cap");
        let off = Rails {
            admin: false,
            ..Rails::ALL
        };
        assert!(
            !admin_passes_the_run_cap(off),
            "with the admin rail off, B waits for A as in MySQL"
        );
    });
}

/// With `rails`: C opens a transaction while there is no limit, so its thread lets it go
/// between statements; then the limit becomes 1 (share 1), A and B fill share + 1 slots, and D
/// (no transaction) and C's COMMIT come. Returns whether D waited, whether C's COMMIT ran while
/// the slots were full, and how many events were still queued then.
fn open_transaction_past_a_full_limit(rails: Rails) -> (bool, bool, u32) {
    let r = rig(|c| c.rails = rails);
    let a = r.connect(1, false);
    let b = r.connect(2, false);
    let c = r.connect(3, false);
    let d = r.connect(4, false);
    c.send(Cmd::Begin);
    eventually("C begins", || r.tally.runs() == 1);
    r.pool.knobs().set_max_transactions_limit(1).unwrap();
    a.send(Cmd::Begin);
    eventually("A begins", || r.tally.runs() == 2);
    b.send(Cmd::Begin);
    r.tick_at(60);
    eventually("B begins (bound = share + 1)", || r.tally.runs() == 3);
    d.send(Cmd::Plain);
    for ms in [120, 180] {
        r.tick_at(ms);
    }
    settle();
    let d_waited = r.tally.runs() == 3;
    c.send(Cmd::Commit);
    for ms in [240, 300] {
        r.tick_at(ms);
    }
    let c_ran = ran_within(&r, 4, Duration::from_secs(1));
    let st = r.pool.group_states()[0].clone();
    a.send(Cmd::Commit);
    b.send(Cmd::Commit);
    eventually("everything runs once A and B commit", || {
        r.tally.runs() == 7
    });
    r.pool.shutdown();
    (d_waited, c_ran, st.queued_queries + st.queued_transactions)
}

#[test]
fn an_open_transaction_passes_an_admission_refusal() {
    each_policy(|| {
        assert_eq!(
            open_transaction_past_a_full_limit(Rails::ALL),
            (true, true, 1),
            "D waits for a slot; C's COMMIT runs; only D is still queued"
        );
        let off = Rails {
            open_transaction: false,
            ..Rails::ALL
        };
        assert_eq!(
            open_transaction_past_a_full_limit(off),
            (true, false, 2),
            "with the rail off, C's COMMIT waits for a slot too, as in MySQL"
        );
    });
}

/// Under `policy` with one run slot (`max_active_query_threads = 1`, which a stall does not
/// widen) and a 10 ms time slice: A runs a long scan, B sends a point statement, and the stall
/// checker passes at 20 ms. Returns whether B ran while A's scan was still going, and the
/// group's yield count.
fn point_statement_beside_a_scan(policy: &'static str) -> (bool, u64) {
    POLICY.with(|c| c.set(policy));
    let r = rig(|c| {
        c.max_active_query_threads = 1;
        c.time_slice = 10;
    });
    POLICY.with(|c| c.set("mysql"));
    let a = r.connect(1, false);
    let b = r.connect(2, false);
    let gate = Gate::new();
    a.send(Cmd::Scan(gate.clone()));
    eventually("A scans", || r.tally.runs() == 1);
    b.send(Cmd::Plain);
    r.tick_at(20);
    let ran = ran_within(&r, 2, Duration::from_millis(500));
    let yields = r.pool.group_stats()[0].tpbed_yields;
    gate.open();
    eventually("both ran", || r.tally.runs() == 2);
    eventually("A detaches", || {
        r.pool.group_states()[0].active_thread_count == 0
    });
    r.pool.shutdown();
    assert_eq!(r.pool.stats().threads_alive, 0);
    (ran, yields)
}

#[test]
fn a_time_slice_lets_a_point_statement_past_a_long_scan() {
    assert_eq!(point_statement_beside_a_scan("time-slice"), (true, 1));
}

#[test]
fn without_a_time_slice_the_point_statement_waits_and_nothing_yields() {
    assert_eq!(point_statement_beside_a_scan("mysql"), (false, 0));
}

/// Queues, while the only credit is held by a gated statement, one event of a connection
/// that holds locks outside a transaction (`LOCK TABLES`) and then one of a plain connection;
/// returns the (high, low) queue lengths under `policy`.
fn lock_holder_queued(policy: &'static str) -> (u32, u32) {
    POLICY.with(|c| c.set(policy));
    let r = rig(|c| c.max_active_query_threads = 1);
    POLICY.with(|c| c.set("mysql"));
    let a = r.connect(1, false);
    let mut holder = ModelSession::new(&r.net, 2, &r.tally);
    holder.holds_locks = true;
    let h = holder.client();
    r.pool.add_connection(holder);
    let c = r.connect(3, false);
    let gate = Gate::new();
    a.send(Cmd::Gate(gate.clone()));
    eventually("A runs", || r.tally.runs() == 1);
    h.send(Cmd::Plain);
    r.tick_at(60);
    let queued = |n| {
        let st = &r.pool.group_states()[0];
        st.queued_queries + st.queued_transactions == n
    };
    eventually("the holder queued", || queued(1));
    c.send(Cmd::Plain);
    eventually("C queued", || queued(2));
    let st = r.pool.group_states()[0].clone();
    gate.open();
    eventually("all ran", || r.tally.runs() == 3);
    let stats = r.pool.group_stats()[0];
    assert_eq!(stats.tpbed_dequeued_high + stats.tpbed_dequeued_low, 2);
    r.pool.shutdown();
    (st.queued_queries, st.queued_transactions)
}

#[test]
fn lock_aware_queues_a_lock_holder_high_where_mysql_queues_it_low() {
    assert_eq!(lock_holder_queued("lock-aware"), (1, 1));
    assert_eq!(lock_holder_queued("mysql"), (0, 2));
}

#[test]
fn short_first_learns_a_class_is_long_and_queues_it_low() {
    use crate::policy::{StmtClass, StmtKind};
    POLICY.with(|c| c.set("short-first"));
    let r = rig(|c| c.max_active_query_threads = 1);
    POLICY.with(|c| c.set("mysql"));
    let scan = StmtClass {
        command: 3,
        kind: StmtKind::Select,
        digest: 42,
    };
    let mut long = ModelSession::new(&r.net, 1, &r.tally);
    long.class = scan;
    let l = long.client();
    r.pool.add_connection(long);
    let a = r.connect(2, false);
    // The class's first statement runs 50 ms on the manual clock: its estimate is long.
    let gate = Gate::new();
    l.send(Cmd::Gate(gate.clone()));
    eventually("the first scan runs", || r.tally.runs() == 1);
    r.clock.advance(Duration::from_millis(50));
    gate.open();
    eventually("it detaches", || {
        r.pool.group_states()[0].active_thread_count == 0
    });
    // A holds the only credit; the next scan of the class queues low.
    let gate = Gate::new();
    a.send(Cmd::Gate(gate.clone()));
    eventually("A runs", || r.tally.runs() == 2);
    l.send(Cmd::Plain);
    r.tick_at(120);
    eventually("the scan queued", || {
        let st = &r.pool.group_states()[0];
        st.queued_queries + st.queued_transactions == 1
    });
    let st = r.pool.group_states()[0].clone();
    gate.open();
    eventually("it runs", || r.tally.runs() == 3);
    r.pool.shutdown();
    assert_eq!((st.queued_queries, st.queued_transactions), (0, 1));
}

/// With `rails`, under a transaction limit of 1 filled by A and B, whether the statement of a
/// connection that holds locks outside any transaction (`LOCK TABLES`) runs.
fn lock_holder_past_a_full_limit(rails: Rails) -> bool {
    let r = rig(|c| c.rails = rails);
    let a = r.connect(1, false);
    let b = r.connect(2, false);
    let mut holder = ModelSession::new(&r.net, 3, &r.tally);
    holder.holds_locks = true;
    let h = holder.client();
    r.pool.add_connection(holder);
    r.pool.knobs().set_max_transactions_limit(1).unwrap();
    a.send(Cmd::Begin);
    eventually("A begins", || r.tally.runs() == 1);
    b.send(Cmd::Begin);
    r.tick_at(60);
    eventually("B begins (bound = share + 1)", || r.tally.runs() == 2);
    h.send(Cmd::Plain);
    for ms in [120, 180, 240] {
        r.tick_at(ms);
    }
    let ran = ran_within(&r, 3, Duration::from_secs(1));
    a.send(Cmd::Commit);
    b.send(Cmd::Commit);
    eventually("everything runs", || r.tally.runs() == 5);
    r.pool.shutdown();
    ran
}

#[test]
fn a_lock_holder_always_gets_a_thread() {
    each_policy(|| {
        assert!(lock_holder_past_a_full_limit(Rails::ALL));
        let off = Rails {
            open_transaction: false,
            ..Rails::ALL
        };
        assert!(
            !lock_holder_past_a_full_limit(off),
            "with the rail off it waits"
        );
    });
}
