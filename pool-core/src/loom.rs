//! Loom models of the real scheduler (groups, workers, listener role, wait hook, stall
//! checker, shutdown) over the model network and a manual clock.
//!
//! Run (release, preemption bound 2; each model stays at 1–2 groups and ≤ 3 threads):
//!
//! ```text
//! LOOM_MAX_PREEMPTIONS=2 RUSTFLAGS="--cfg loom" \
//!     cargo test -p tpbed-pool-core --release --lib loom
//! ```
//!
//! On the 2-core development machine the first six models take 12–35 s together (the slowest,
//! `loom_limit_admits_share_plus_one`, 8–20 s alone; the spread is other load), after a
//! release build of about 100 s from clean; `loom_high_concurrency_consumer_wake` adds about
//! 3 s alone (its runs reach the deferred consumer wake some 21,000 times);
//! `loom_owner_rearm_races_the_next_report` under a second (it deadlocks, i.e. fails, when
//! `event::finish` ignores a report made while attached); all eight 40 s together. The two
//! deferred-re-arm models (the io_uring backend's rules) bring it to ten, 22 s together on a
//! quieter machine. `loom_ring_completions_in_order_once` (ring I/O's completion path, on
//! `poller::ring_io` with a model kernel) takes under a second. Without
//! `LOOM_MAX_PREEMPTIONS` the models set the bound to 2 themselves.
//! `loom_every_policy_runs_every_command` runs two small models per registered policy; with
//! `mysql` and `fifo` all twelve took 141 s together while other builds shared the machine.
//! `loom_yield_lets_the_next_statement_run_and_resumes` (cooperative yield: give the credit
//! up at a safe point, the next statement runs on a new thread, resume) runs at one preemption:
//! about a minute on a machine loaded by four other builds.
//!
//! What each model checks, in every explored interleaving:
//! - no lost wake-up: the main thread blocks until every sent command has run, so a lost
//!   wake-up is a deadlock, which loom reports;
//! - at most one thread blocks in a group's poller (the model poller asserts it);
//! - at every attach (event.rs `check_admission`): counters agree with the threads' records,
//!   the thread had credit, with limit 0 `active <= query_threads_per_group + stalled + 1`,
//!   with a limit `bound <= share + 1`, and the Admin group has no limit;
//! - clean shutdown: `shutdown()` returns only after joining every pool thread, and every
//!   session is dropped exactly once.

use crate::builder::PoolBuilder;
use crate::clock::ManualClock;
use crate::config::PoolConfig;
use crate::handler::ConnectionHandler;
use crate::poller::model::ModelNet;
use crate::pool::ThreadPool;
use crate::sync::atomic::Ordering;
use crate::sync::Arc;
use crate::testkit::{Client, Cmd, Gate, ModelSession, Tally};
use crate::wait::WaitKind;
use std::time::Duration;

struct Rig {
    pool: ThreadPool<ModelSession>,
    net: Arc<ModelNet>,
    clock: std::sync::Arc<ManualClock>,
    tally: Arc<Tally>,
}

/// One normal group with one query thread, limit 0, no connection report; the Admin group
/// gets its thread only when `admin` (each thread multiplies loom's state space). Algorithm 0:
/// with one query thread per group algorithm 1 behaves the same, except that its stall-check
/// clause "credit and nobody polls" would start a thread in the thread-less Admin group.
fn rig(admin: bool, edit: impl FnOnce(&mut PoolConfig)) -> Rig {
    rig_with(admin, false, edit)
}

/// [`rig`] with the deferring model poller (io_uring's re-arm rules) when `defer`.
fn rig_with(admin: bool, defer: bool, edit: impl FnOnce(&mut PoolConfig)) -> Rig {
    let mut c = PoolConfig::mysql_defaults(2);
    c.algorithm = crate::config::Algorithm::LowConcurrency;
    c.size = 1;
    c.max_transactions_limit = 0;
    c.query_threads_per_group = 1;
    c.connection_report_interval = 0;
    edit(&mut c);
    let net = ModelNet::new(c.size as usize + 1);
    let clock = std::sync::Arc::new(ManualClock::new());
    let n2 = net.clone();
    let mut b = PoolBuilder::new(c);
    if !admin {
        b = b.without_admin_threads();
    }
    let (pool, _) = b
        .clock(clock.clone())
        .manual_ticks()
        .inline_handshake()
        .log(std::sync::Arc::new(|_, _| {}))
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

    fn finish(self, sessions: usize) {
        self.pool.shutdown();
        assert_eq!(
            self.pool.stats().threads_alive,
            0,
            "shutdown joined every thread"
        );
        assert_eq!(self.tally.dropped.load(Ordering::SeqCst), sessions);
    }
}

fn model(f: impl Fn() + Sync + Send + 'static) {
    let mut b = loom::model::Builder::new();
    if b.preemption_bound.is_none() {
        b.preemption_bound = Some(2);
    }
    b.check(f);
}

/// [`model`] with at most `bound` preemptions whatever `LOOM_MAX_PREEMPTIONS` says: for a
/// model whose three threads run long protocols, whose state space at bound 2 outgrows CI.
fn model_bounded(bound: usize, f: impl Fn() + Sync + Send + 'static) {
    let mut b = loom::model::Builder::new();
    b.preemption_bound = Some(bound);
    b.check(f);
}

/// Two connections, one worker: both commands run whatever the interleaving of the
/// listener's poll, queueing or direct execution and the re-arms, and a later command still
/// finds a poller.
#[test]
fn loom_no_lost_wakeup_one_worker() {
    model(|| two_commands_then_a_third(false));
}

/// Every registered policy: two connections, one worker, every command runs (as
/// [`loom_no_lost_wakeup_one_worker`]), and a statement stalled behind the only credit lets the
/// next one in at the stall tick (as [`loom_stall_tick_admits_the_next_statement`]).
#[test]
fn loom_every_policy_runs_every_command() {
    for p in crate::policy::names() {
        model(move || {
            let r = rig(false, |c| c.policy = p.into());
            two_commands_then_a_third_on(r);
        });
        model(move || stall_tick_admits_the_next_statement(p));
    }
}

/// Two connections send a command each, then the first sends another once both ran: every
/// command runs. `defer`: the model poller defers re-arms (io_uring's rules).
fn two_commands_then_a_third(defer: bool) {
    two_commands_then_a_third_on(rig_with(false, defer, |_| {}));
}

/// [`two_commands_then_a_third`] on the pool of `r`.
fn two_commands_then_a_third_on(r: Rig) {
    let a = r.connect(1, false);
    let b = r.connect(2, false);
    a.send(Cmd::Plain);
    b.send(Cmd::Plain);
    r.tally.wait_runs(2);
    // Both re-armed: a later command must find a poller again.
    a.send(Cmd::Plain);
    r.tally.wait_runs(3);
    r.finish(2);
}

/// A reported wait while holding the listener role hands the role to a new thread, and the
/// other connection's command runs during the wait (2 workers + main).
#[test]
fn loom_wait_hands_the_role_on() {
    model(|| {
        let r = rig(false, |_| {});
        let a = r.connect(1, false);
        let b = r.connect(2, false);
        let gate = Gate::new();
        a.send(Cmd::WaitGate(WaitKind::Sleep, gate.clone()));
        r.tally.wait_runs(1);
        b.send(Cmd::Plain);
        r.tally.wait_runs(2);
        gate.open();
        r.finish(2);
    });
}

/// A statement that reports no wait stalls; a `tick` past the stall limit lets the next one
/// in (the stall protocol's steps 1, 3 and 5), with `active <= qtpg + stalled + 1`.
#[test]
fn loom_stall_tick_admits_the_next_statement() {
    model(|| stall_tick_admits_the_next_statement("mysql"));
}

/// The body of [`loom_stall_tick_admits_the_next_statement`] under `policy`.
fn stall_tick_admits_the_next_statement(policy: &str) {
    let r = rig(false, |c| c.policy = policy.into());
    let a = r.connect(1, false);
    let b = r.connect(2, false);
    let gate = Gate::new();
    a.send(Cmd::Gate(gate.clone()));
    r.tally.wait_runs(1);
    b.send(Cmd::Plain);
    r.clock.advance(Duration::from_millis(60));
    r.pool.tick(Duration::from_millis(60));
    r.tally.wait_runs(2);
    assert_eq!(r.pool.group_stats()[0].stalled_queries_executed, 1);
    gate.open();
    r.finish(2);
}

/// `time-slice` with one run slot (`max_active_query_threads = 1`): a statement asked to yield
/// at the tick gives its credit up at its safe point, the next statement runs on another
/// thread, and the yielded one resumes and finishes; no wake-up is lost on the way. Bounded
/// to one preemption: at two it ran past ten minutes on the loaded 2-core machine.
#[test]
fn loom_yield_lets_the_next_statement_run_and_resumes() {
    model_bounded(1, || {
        let r = rig(false, |c| {
            c.policy = "time-slice".into();
            c.max_active_query_threads = 1;
            c.time_slice = 10;
        });
        let a = r.connect(1, false);
        let b = r.connect(2, false);
        let gate = Gate::new();
        a.send(Cmd::GateThenSafePoint(gate.clone()));
        r.tally.wait_runs(1);
        b.send(Cmd::Plain);
        r.clock.advance(Duration::from_millis(20));
        r.pool.tick(Duration::from_millis(20));
        gate.open();
        r.tally.wait_runs(2);
        assert_eq!(r.pool.group_stats()[0].tpbed_yields, 1);
        r.finish(2);
    });
}

/// With a transaction limit, a connection in a transaction stays bound while the Admin
/// group still runs an admin's command; then the transaction ends and all is joined.
#[test]
fn loom_admin_group_is_never_limited() {
    model(|| {
        let r = rig(true, |c| c.max_transactions_limit = 1);
        let a = r.connect(1, false);
        let admin = r.connect(2, true);
        a.send(Cmd::Begin);
        admin.send(Cmd::Plain);
        r.tally.wait_runs(2);
        a.send(Cmd::Commit);
        r.tally.wait_runs(3);
        r.finish(2);
    });
}

/// Shutdown racing with a command in flight: every thread is joined and every session
/// dropped once, whether the command ran, was queued or was still in the network.
#[test]
fn loom_shutdown_races_a_command() {
    model(|| {
        let r = rig(false, |_| {});
        let a = r.connect(1, false);
        a.send(Cmd::Plain);
        r.finish(1);
    });
}

/// With a transaction limit (share 1) two transactions may be bound (share + 1): the second
/// gets in once the stall checker takes the poll role from the first, which stays bound
/// reading its next statement; shutdown then interrupts both bound reads.
#[test]
fn loom_limit_admits_share_plus_one() {
    model(|| {
        let r = rig(false, |c| c.max_transactions_limit = 1);
        let a = r.connect(1, false);
        let b = r.connect(2, false);
        a.send(Cmd::Begin);
        r.tally.wait_runs(1);
        b.send(Cmd::Begin);
        r.clock.advance(Duration::from_millis(60));
        r.pool.tick(Duration::from_millis(60));
        r.tally.wait_runs(2);
        assert_eq!(r.pool.group_states()[0].threads_bound_to_transaction, 2);
        // Shutdown interrupts both bound reads.
        r.finish(2);
    });
}

/// Algorithm 1 with two query threads: a worker that takes an event while another is queued
/// marks a sleeping consumer woken under the mutex and notifies it after releasing it; every
/// command still runs and a later one still finds a poller.
#[test]
fn loom_high_concurrency_consumer_wake() {
    model(|| {
        let r = rig(false, |c| {
            c.algorithm = crate::config::Algorithm::HighConcurrency;
            c.query_threads_per_group = 2;
        });
        let a = r.connect(1, false);
        let b = r.connect(2, false);
        a.send(Cmd::Plain);
        b.send(Cmd::Plain);
        r.tally.wait_runs(2);
        a.send(Cmd::Plain);
        r.tally.wait_runs(3);
        r.finish(2);
    });
}

/// Re-arm protocol (group.rs): the owner re-arms before it takes the group mutex, and the
/// next command, sent while the first one still runs, is reported either while the
/// connection is still attached (the thread that polls only flags it; the owner arms it again
/// under the mutex) or once it is parked; it runs in every interleaving. A reported wait hands
/// the listener role to a second thread, so a thread polls while the owner is attached.
#[test]
fn loom_owner_rearm_races_the_next_report() {
    model(|| {
        let r = rig(false, |_| {});
        let a = r.connect(1, false);
        let gate = Gate::new();
        a.send(Cmd::WaitGate(WaitKind::Sleep, gate.clone()));
        r.tally.wait_runs(1);
        a.send(Cmd::Plain);
        gate.open();
        r.tally.wait_runs(2);
        r.finish(1);
    });
}

/// Deferred re-arms (group.rs, re-arm protocol step 5; the io_uring backend's rules): with one
/// worker every re-arm is deferred to the next poll, and every command still runs, including a
/// later one sent after both connections were re-armed.
#[test]
fn loom_deferred_rearm_no_lost_wakeup() {
    model(|| two_commands_then_a_third(true));
}

/// Deferred re-arms with two threads: a reported wait hands the listener role to a second
/// thread, which blocks in the poller while the owner re-arms (so the owner must not defer:
/// the model poller asserts it) or has not yet started polling (so its poll submits the
/// deferred re-arm); the next command runs in every interleaving.
#[test]
fn loom_deferred_rearm_races_a_blocked_poller() {
    model(|| {
        let r = rig_with(false, true, |_| {});
        let a = r.connect(1, false);
        let gate = Gate::new();
        a.send(Cmd::WaitGate(WaitKind::Sleep, gate.clone()));
        r.tally.wait_runs(1);
        gate.open();
        a.send(Cmd::Plain);
        r.tally.wait_runs(2);
        r.finish(1);
    });
}

/// The ring I/O completion path (poller/ring_io.rs) between a model kernel and two pool
/// threads: the kernel completes the one request in flight a byte at a time (so every reply
/// is a partial send first), a thread that takes a report runs the connection's commands,
/// queues the reply and re-arms. Checks in every interleaving: no completion is lost (the
/// main thread waits for every reply: a lost one is a deadlock); a connection's commands run
/// in the order sent and never on two threads at once; each reply reaches the client exactly
/// once, in order (a send buffer freed early or twice would lose or repeat bytes); shutdown
/// with a send in flight joins both threads, and the buffer of that send is handed over once
/// (to the completion that ends it), never again.
mod ring_completions {
    use crate::poller::ring_io::{ConnIo, Next, RecvEnd, SendEnd};
    use crate::session::Received;
    use crate::sync::{lock, thread, wait, Arc, Condvar, Mutex};
    use std::time::{Duration, Instant};

    #[derive(Default)]
    struct Net {
        io: Option<ConnIo>,
        /// Bytes the client has still to send (one command each).
        client_out: Vec<u8>,
        /// Reports not yet taken by a thread.
        reports: usize,
        running: bool,
        ran: Vec<u8>,
        client_in: Vec<u8>,
        shutdown: bool,
        /// Reply bytes handed over by deregistering while the send was in flight.
        orphaned: Vec<u8>,
    }

    struct Rig {
        net: Mutex<Net>,
        cv: Condvar,
    }

    /// The kernel completes the request in flight, if it can: one byte per completion.
    fn kernel_step(n: &mut Net, now: Instant) -> bool {
        let Some(io) = n.io.as_mut() else {
            return false;
        };
        match io.in_flight() {
            Some(crate::poller::ring_io::Op::Recv) if !n.client_out.is_empty() => {
                let b = n.client_out.remove(0);
                assert_eq!(io.on_recv(RecvEnd::Data(&[b])), Next::Report);
                n.reports += 1;
                true
            }
            Some(crate::poller::ring_io::Op::Send) => {
                n.client_in.push(io.unsent()[0]);
                let next = io.on_send(SendEnd::Sent(1), now);
                assert_ne!(next, Next::Report);
                true
            }
            _ => false,
        }
    }

    fn worker(rig: &Rig) {
        let mut n = lock(&rig.net);
        loop {
            while n.reports == 0 && !n.shutdown {
                n = wait(&rig.cv, n);
            }
            if n.shutdown {
                return;
            }
            n.reports -= 1;
            assert!(!n.running, "a connection runs on one thread at a time");
            n.running = true;
            let Some(Received::Bytes(cmds)) = n.io.as_mut().and_then(ConnIo::take_input) else {
                panic!("a report carries the bytes received");
            };
            drop(n);
            // The command runs outside the lock; its reply is the command twice.
            let mut reply: Vec<u8> = cmds.iter().flat_map(|c| [*c, *c]).collect();
            n = lock(&rig.net);
            n.ran.extend_from_slice(&cmds);
            n.running = false;
            let io = n.io.as_mut().expect("registered");
            io.queue_output(&mut reply, Duration::from_secs(60));
            assert!(reply.is_empty(), "the reply buffer moves to the ring");
            assert_eq!(io.arm(Instant::now()), Some(Next::Send));
            rig.cv.notify_all();
        }
    }

    pub(super) fn two_commands_then_shutdown() {
        let rig = Arc::new(Rig {
            net: Mutex::new(Net {
                io: Some(ConnIo::new(3)),
                client_out: vec![1, 2],
                ..Net::default()
            }),
            cv: Condvar::new(),
        });
        assert_eq!(
            lock(&rig.net).io.as_mut().unwrap().arm(Instant::now()),
            Some(Next::Recv)
        );
        let workers: Vec<_> = (0..2)
            .map(|_| {
                let rig = rig.clone();
                thread::spawn(move || worker(&rig))
            })
            .collect();
        // The model kernel, until both commands ran and the first reply is out.
        let mut n = lock(&rig.net);
        while n.ran.len() < 2 || n.client_in.len() < 2 {
            if kernel_step(&mut n, Instant::now()) {
                rig.cv.notify_all();
            } else {
                n = wait(&rig.cv, n);
            }
        }
        assert_eq!(n.ran, vec![1, 2], "commands run in the order sent");
        // Shutdown, possibly with the second reply's send in flight: deregister hands its
        // buffer over once, the threads are joined.
        n.shutdown = true;
        let mut io = n.io.take().expect("registered");
        let in_flight = io.sending();
        n.orphaned = io.take_output();
        assert!(
            io.take_output().is_empty(),
            "a send buffer is handed over once"
        );
        if !in_flight {
            assert!(n.orphaned.is_empty());
        }
        rig.cv.notify_all();
        drop(n);
        for w in workers {
            w.join().unwrap();
        }
        let n = lock(&rig.net);
        let sent_or_orphaned = n.client_in.len() + n.orphaned.len().min(4 - n.client_in.len());
        assert_eq!(&n.client_in[..], &[1, 1, 2, 2][..n.client_in.len()]);
        assert_eq!(
            sent_or_orphaned, 4,
            "every reply byte left once or waits orphaned"
        );
    }
}

#[test]
fn loom_ring_completions_in_order_once() {
    model(ring_completions::two_commands_then_shutdown);
}
