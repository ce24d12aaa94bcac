//! Event processing: a query thread attaches to a queued connection, runs it, detaches and
//! returns it to its home group (re-armed, or removed when it closed), with the wait hook
//! installed while it runs. Invariant: a thread increments `active` and `bound` exactly once
//! per attachment and undoes both at detach; a reported wait takes it out of `active` only
//! when it was not marked stalled.

use crate::group::{Attachment, ConnState};
use crate::park::{self, WakeLevel};
use crate::policy::{ConnFacts, StmtClass};
use crate::poller::Token;
use crate::session::{Outcome, Session};
use crate::shared::{Guard, Shared};
use crate::stats::ThreadState;
use crate::sync::{lock, wait, Arc, Condvar};
use crate::wait::{self as wait_hook, WaitKind, WaitObserver};
use std::any::Any;
use std::cell::{Cell, RefCell};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::rc::Rc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

/// How a thread came to run an event.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Start {
    /// The waiting thread runs the single event its poll returned (with credit).
    Direct,
    /// A thread took it from a queue with credit.
    Queued,
    /// A thread took it from a queue past a credit refusal, by a rail (policy/mod.rs).
    Rail,
}

/// Attaches thread `me` of group `g` to the queued connection `token` of the same group,
/// runs it, detaches and re-arms it. `wake` is a sleeper already marked woken
/// (`park::take_consumer`); it is notified as soon as the mutex is released.
pub(crate) fn process<'a, S: Session>(
    sh: &'a Arc<Shared<S>>,
    g: usize,
    me: usize,
    mut st: Guard<'a, S>,
    token: Token,
    how: Start,
    wake: Option<Arc<Condvar>>,
) -> Guard<'a, S> {
    let now = sh.clock.now();
    let session = st.conns.get_mut(token).and_then(|conn| {
        let s = conn.session.take()?;
        conn.state = ConnState::Attached;
        Some((s, conn.fd))
    });
    let Some((mut session, fd)) = session else {
        if let Some(cv) = wake {
            cv.notify_one();
        }
        return st;
    };
    let conn = sh.conn_facts(g, &session);
    attach(sh, g, &mut st, me, now, how, conn);
    drop(st);
    if let Some(cv) = wake {
        cv.notify_one();
    }

    let (outcome, statements, exec_time) =
        run_connection(sh, g, me, g, token, &mut session, &conn.class);

    let end = sh.clock.now();
    let rearmed = rearm_early(sh, g, token, fd, outcome);
    let mut st = lock(&sh.groups[g].state);
    detach(&mut st, me, end.saturating_sub(now), statements, exec_time);
    finish(sh, g, st, token, fd, session, outcome, end, rearmed)
}

/// Re-arm protocol step 1 (group.rs): a connection that stays open is re-armed in its home
/// group's poller before the owner takes the group mutex, when the poller allows it. None when
/// it is left to [`finish`].
pub(crate) fn rearm_early<S>(
    sh: &Shared<S>,
    home: usize,
    token: Token,
    fd: std::os::fd::RawFd,
    outcome: Outcome,
) -> Option<std::io::Result<()>> {
    let poller = &sh.groups[home].poller;
    (outcome == Outcome::Continue && poller.rearms_outside_group_lock())
        .then(|| poller.rearm(token, fd))
}

/// Returns a detached connection to its home group `home` (`st` is that group's guard):
/// parked and armed (`rearmed`: the result of [`rearm_early`]; None re-arms here, under the
/// mutex), or removed and dropped (outside the mutex) when it closed.
#[allow(clippy::too_many_arguments)]
pub(crate) fn finish<'a, S: Session>(
    sh: &'a Arc<Shared<S>>,
    home: usize,
    mut st: Guard<'a, S>,
    token: Token,
    fd: std::os::fd::RawFd,
    session: S,
    outcome: Outcome,
    end: Duration,
    rearmed: Option<std::io::Result<()>>,
) -> Guard<'a, S> {
    let group = &sh.groups[home];
    if outcome == Outcome::Close || st.shutdown {
        st.conns.remove(token);
        // The fd is still open (the session owns it), so deregistering is safe.
        let _ = group.poller.deregister(token, fd);
        st.connections -= 1;
        st.counters.connections_closed += 1;
        drop(st);
        drop(session);
        return lock(&group.state);
    }
    let expire_at = end + session.idle_timeout();
    let conn = st
        .conns
        .get_mut(token)
        .expect("an attached connection is removed only by its owner");
    conn.session = Some(session);
    conn.state = ConnState::Armed;
    conn.expire_at = expire_at;
    let reported = std::mem::take(&mut conn.reported_while_attached);
    st.note_expiry(expire_at);
    let armed = match rearmed {
        Some(Ok(())) if !reported => Ok(()),
        Some(Err(e)) => Err(e),
        // Re-arm protocol step 5: nobody is blocked in this group's poller, so the next
        // poll, whoever makes it, hands the request to the kernel.
        None if !st.blocked_in_poll() => group.poller.rearm_deferred(token, fd),
        // Re-arm protocol step 3 (a report consumed while attached comes again) or step 4
        // (io_uring: the poll request is pushed here).
        _ => group.poller.rearm(token, fd),
    };
    if let Err(e) = armed {
        let conn = st.conns.remove(token);
        st.connections -= 1;
        st.counters.connections_closed += 1;
        drop(st);
        sh.log_warn(&format!(
            "thread pool: re-arm failed, closing connection: {e}"
        ));
        drop(conn);
        return lock(&group.state);
    }
    st
}

/// Records thread `me` of group `g` as attached at `now` to a connection with facts `conn`.
pub(crate) fn attach<S>(
    sh: &Shared<S>,
    g: usize,
    st: &mut Guard<'_, S>,
    me: usize,
    now: Duration,
    how: Start,
    conn: ConnFacts,
) {
    #[cfg(test)]
    let admitted_with_credit = sh.credit(g, st);
    st.active += 1;
    st.bound += 1;
    let t = st.thread(me);
    t.attached = Some(Attachment::new(now, conn));
    t.yield_flag.store(false, Ordering::Relaxed);
    t.state = if how == Start::Direct {
        ThreadState::ProcessingDirect
    } else {
        ThreadState::ProcessingQueued
    };
    t.event_count += 1;
    if how == Start::Direct {
        st.counters.tpbed_direct_executions += 1;
    }
    #[cfg(test)]
    check_admission(sh, g, st, admitted_with_credit, how);
    #[cfg(not(test))]
    let _ = (sh, g);
}

/// Test builds check the admission invariants at every attach: the counters agree with the
/// per-thread records, and a thread admitted with credit leaves at most limit + 1 running:
/// `active <= query_threads_per_group + stalled + 1` without a transaction limit,
/// `bound <= share + 1` with one (not suspended). A reported wait that ends lets its thread
/// back into `active` without a credit check (as in MySQL), so the first bound holds at
/// admission, not at every instant. A thread admitted by a rail ([`Start::Rail`]) had no
/// credit and the bounds do not apply to it.
#[cfg(test)]
fn check_admission<S>(sh: &Shared<S>, g: usize, st: &Guard<'_, S>, with_credit: bool, how: Start) {
    assert_eq!(
        st.recount(),
        (st.active, st.bound, st.stalled),
        "group {g} counters"
    );
    assert!(
        with_credit || how == Start::Rail,
        "group {g}: a thread attached without credit"
    );
    if how == Start::Rail {
        return;
    }
    let share = sh.group_share(g);
    let qtpg = sh.knobs.query_threads_per_group() as usize;
    let waiting_in_wait = st
        .threads
        .iter()
        .flatten()
        .filter(|t| t.attached.as_ref().is_some_and(|a| a.wait_decremented))
        .count();
    if share == 0 && sh.knobs.max_active_query_threads() == 0 && waiting_in_wait == 0 {
        assert!(
            st.active <= qtpg + st.stalled + 1,
            "group {g}: active {} > qtpg {qtpg} + stalled {} + 1",
            st.active,
            st.stalled
        );
    }
    if share > 0 && st.longrun.suspended_stamp.is_none() {
        assert!(
            st.bound <= share + 1,
            "group {g}: bound {} > share {share} + 1",
            st.bound
        );
    }
    if sh.groups[g].admin {
        assert_eq!(share, 0, "the Admin group is never transaction-limited");
    }
}

pub(crate) fn detach<S>(
    st: &mut Guard<'_, S>,
    me: usize,
    attached_for: Duration,
    statements: u64,
    exec_time: Duration,
) {
    let t = st.thread(me);
    let a = t
        .attached
        .take()
        .expect("detach follows attach on the same thread");
    t.state = ThreadState::Managing;
    t.exec_count += statements;
    t.acc_exec_time += exec_time;
    t.acc_event_time += attached_for;
    if !a.wait_decremented {
        st.active -= 1;
    }
    if a.marked_stalled {
        st.stalled -= 1;
    }
    st.bound -= 1;
    st.counters.queries_executed += statements;
}

/// Runs connection `token` of group `home` on thread `me` of group `g` ([`run_attached`]). When
/// `home`'s poller moves the bytes (ring I/O), the session first gets what the ring received
/// and runs in its non-blocking form; the reply it leaves goes back to the poller, which sends
/// it when the connection is re-armed.
pub(crate) fn run_connection<S: Session>(
    sh: &Arc<Shared<S>>,
    g: usize,
    me: usize,
    home: usize,
    token: Token,
    session: &mut S,
    class: &StmtClass,
) -> (Outcome, u64, Duration) {
    let poller = &sh.groups[home].poller;
    if !poller.moves_bytes() {
        return run_attached(sh, g, me, session, None, class);
    }
    if let Some(input) = poller.take_input(token) {
        session.receive(input);
    }
    let mut out = Vec::new();
    let ran = run_attached(sh, g, me, session, Some(&mut out), class);
    if ran.0 == Outcome::Continue {
        poller.queue_output(token, &mut out, session.write_timeout());
    }
    ran
}

/// Runs the session while the thread stays attached: once, again while input is buffered,
/// and (with a transaction limit, normal groups) for every statement of an open transaction.
/// With `out` the session runs in its non-blocking form and appends its replies there. The
/// first statement's run time (less the time it spent yielded) goes into the service-time
/// estimate of `class`, the class it had when the thread attached.
fn run_attached<S: Session>(
    sh: &Arc<Shared<S>>,
    g: usize,
    me: usize,
    session: &mut S,
    mut out: Option<&mut Vec<u8>>,
    class: &StmtClass,
) -> (Outcome, u64, Duration) {
    let observer = thread_observer(sh, g, me);
    observer.depth.set(0);
    observer.yielded_for.set(Duration::ZERO);
    wait_hook::install(observer.clone());
    let admin = sh.groups[g].admin;
    if !admin {
        let delay = sh.knobs.transaction_delay();
        if delay > 0 && !session.in_transaction() {
            observer.begin(Reason::TrxDelay);
            std::thread::sleep(Duration::from_millis(u64::from(delay)));
            observer.end();
        }
    }
    let mut statements = 0;
    let mut exec_time = Duration::ZERO;
    let outcome = loop {
        let start = sh.clock.now();
        sh.running.fetch_add(1, Ordering::Relaxed);
        let o = catch_unwind(AssertUnwindSafe(|| match out.as_deref_mut() {
            Some(out) => session.run_deferred(out),
            None => session.run(),
        }))
        .unwrap_or(Outcome::Close);
        sh.running.fetch_sub(1, Ordering::Relaxed);
        statements += 1;
        let took = sh.clock.now().saturating_sub(start);
        if statements == 1 {
            sh.service
                .record(class, took.saturating_sub(observer.yielded_for.get()));
        }
        exec_time += took;
        if o == Outcome::Close {
            break Outcome::Close;
        }
        if session.has_buffered_input() {
            continue;
        }
        if !admin && sh.knobs.max_transactions_limit() > 0 && session.in_transaction() {
            // Stay bound: the next read blocks on this connection (bounded by wait_timeout).
            continue;
        }
        break Outcome::Continue;
    };
    wait_hook::uninstall();
    (outcome, statements, exec_time)
}

#[cfg(not(loom))]
thread_local! {
    /// This thread's wait observer, made at its first attachment and reused by later ones.
    static OBSERVER: RefCell<Option<Rc<dyn Any>>> = const { RefCell::new(None) };
}

// Loom runs every model thread on one OS thread: the cache must be a loom thread-local.
#[cfg(loom)]
loom::thread_local! {
    static OBSERVER: RefCell<Option<Rc<dyn Any>>> = RefCell::new(None);
}

/// The wait observer of thread `me` of group `g`: made once per thread, so an attachment
/// allocates nothing and touches no shared reference count.
fn thread_observer<S: Session>(sh: &Arc<Shared<S>>, g: usize, me: usize) -> Rc<Observer<S>> {
    OBSERVER.with(|cell| {
        let mut cell = cell.borrow_mut();
        let cached = cell
            .clone()
            .and_then(|o| o.downcast::<Observer<S>>().ok())
            .filter(|o| Arc::ptr_eq(&o.sh, sh) && o.g == g && o.me == me);
        if let Some(o) = cached {
            return o;
        }
        let yield_flag = lock(&sh.groups[g].state).thread(me).yield_flag.clone();
        let o = Rc::new(Observer {
            sh: sh.clone(),
            g,
            me,
            depth: Cell::new(0),
            yield_flag,
            yielded_for: Cell::new(Duration::ZERO),
        });
        *cell = Some(o.clone());
        o
    })
}

/// Why a thread waits: a wait the engine reported, or the pool's own transaction delay.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Reason {
    Kind(WaitKind),
    TrxDelay,
}

/// The wait hook of an attached worker (MySQL's `thd_wait_begin`/`thd_wait_end`): while a
/// reported wait lasts, the thread does not count as active, and a waiting thread hands its
/// role on.
struct Observer<S: Session> {
    sh: Arc<Shared<S>>,
    g: usize,
    me: usize,
    /// Nesting depth: only the outermost begin/end count.
    depth: Cell<u32>,
    /// This thread's "please yield" flag (`ThreadInfo::yield_flag`).
    yield_flag: std::sync::Arc<AtomicBool>,
    /// Time the current attachment's first statement spent yielded.
    yielded_for: Cell<Duration>,
}

impl<S: Session> Observer<S> {
    fn begin(&self, reason: Reason) {
        let d = self.depth.get();
        self.depth.set(d + 1);
        if d > 0 {
            return;
        }
        let mut st = lock(&self.sh.groups[self.g].state);
        let me = self.me;
        let t = st.thread(me);
        let Some(a) = t.attached.as_mut() else {
            return;
        };
        a.wait = match reason {
            Reason::Kind(k) => Some(k),
            Reason::TrxDelay => None,
        };
        let decrement = !a.marked_stalled;
        a.wait_decremented = decrement;
        if decrement {
            st.active -= 1;
        }
        let c = &mut st.counters;
        match reason {
            Reason::Kind(WaitKind::Sleep) => c.sleep_waits += 1,
            Reason::Kind(WaitKind::RowLock) => c.row_lock_waits += 1,
            Reason::Kind(WaitKind::UserLock) => c.user_lock_waits += 1,
            Reason::Kind(WaitKind::CommitFlush) => c.group_commit_waits += 1,
            Reason::TrxDelay => c.tpbed_trx_delay_waits += 1,
        }
        // The wake is unconditional: a waiting thread hands its role to a woken or new
        // thread; any other waiter wakes a sleeper if one exists.
        if st.waiting == Some(me) {
            st.waiting = None;
            park::wake(&self.sh, self.g, &mut st, WakeLevel::OrCreate);
        } else {
            park::wake(&self.sh, self.g, &mut st, WakeLevel::IfCreated);
        }
    }

    fn end(&self) {
        let d = self.depth.get().saturating_sub(1);
        self.depth.set(d);
        if d > 0 {
            return;
        }
        let mut st = lock(&self.sh.groups[self.g].state);
        let t = st.thread(self.me);
        let Some(a) = t.attached.as_mut() else {
            return;
        };
        a.wait = None;
        if std::mem::take(&mut a.wait_decremented) {
            st.active += 1;
        }
    }
}

impl<S: Session> Observer<S> {
    /// Cooperative yield at a safe point: the statement gives its credit up as a reported wait
    /// does (handing the waiting role on and waking a thread), then its thread sleeps until
    /// the group resumes it (`Shared::resume_yielded`, or the stall checker) or shuts down.
    /// The statement keeps its locks and its place; the caller holds no latch.
    fn yield_now(&self) {
        let sh = &self.sh;
        let mut st = lock(&sh.groups[self.g].state);
        self.yield_flag.store(false, Ordering::Relaxed);
        let me = self.me;
        let now = sh.clock.now();
        if self.depth.get() > 0 || st.shutdown {
            return;
        }
        let t = st.thread(me);
        let parker = t.parker.clone();
        let Some(a) = t.attached.as_mut() else {
            return;
        };
        if a.yielded_at.is_some() {
            return;
        }
        a.yielded_at = Some(now);
        let decrement = !a.marked_stalled && !a.wait_decremented;
        a.wait_decremented = decrement;
        if decrement {
            st.active -= 1;
        }
        st.yielded += 1;
        st.counters.tpbed_yields += 1;
        let woke = if st.waiting == Some(me) {
            st.waiting = None;
            park::wake(sh, self.g, &mut st, WakeLevel::OrCreate)
        } else {
            park::wake(sh, self.g, &mut st, WakeLevel::IfCreated)
        };
        if !woke && st.queued() == 0 {
            // Nobody could use the credit now: carry on at once.
            st.resume(me);
        }
        loop {
            if st.shutdown {
                st.resume(me);
            }
            let yielded = st
                .thread(me)
                .attached
                .as_ref()
                .is_some_and(|a| a.yielded_at.is_some());
            if !yielded {
                break;
            }
            st = wait(&parker, st);
        }
        let back = sh.clock.now();
        if let Some(a) = st.thread(me).attached.as_mut() {
            a.run_since = back;
        }
        self.yielded_for
            .set(self.yielded_for.get() + back.saturating_sub(now));
    }
}

impl<S: Session> WaitObserver for Observer<S> {
    fn wait_begin(&self, kind: WaitKind) {
        self.begin(Reason::Kind(kind));
    }

    fn wait_end(&self, _kind: WaitKind) {
        self.end();
    }

    fn safe_point(&self) {
        if self.yield_flag.load(Ordering::Relaxed) {
            self.yield_now();
        }
    }

    fn yield_requested(&self) -> bool {
        self.yield_flag.load(Ordering::Relaxed)
    }
}
