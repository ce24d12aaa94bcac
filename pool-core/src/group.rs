//! One thread group's state machine. Invariant: every field of [`GroupState`] changes only
//! under the group mutex, sessions never run while it is held, and each counter below agrees
//! with the per-thread records it summarises (`active`, `bound`, `stalled` are recounted at
//! every attach in test builds, the loom models included).
//!
//! # Layers
//!
//! The crate's modules import one another only downward. Each line below imports only from its
//! own line and the lines before it (`tests/layers.rs` reads every `crate::` path and checks
//! this, and that the import cycles are exactly the ones named after the list):
//!
//! 1. `sync`, `session`, `wait`, `placement`, `clock`, `config`, `policy`, `service`, `stats`, `poller`, `handler`:
//!    the vocabulary — loom shim, contracts, time, settings, policies, snapshot types, pollers;
//! 2. `group`: one group's state machine and its protocols (this file);
//! 3. `shared`: the state every thread of a pool shares, and the role table's type;
//! 4. `spawn`: thread creation and exit;
//! 5. `park`: sleeping and waking;
//! 6. `event`: event processing and the wait hook;
//! 7. `listener`, `steal`: the waiting role; running another group's event;
//! 8. `worker`, `connect`, `timer`: the role loops and the stall checker;
//! 9. `pool`, `introspect`: the pool object and shutdown; the snapshots;
//! 10. `builder`, `thread_per_conn`: building a pool (and its role table); the other model;
//! 11. `testkit`, `model_tests`, `loom`: test code.
//!
//! Import cycles: none.
//!
//! One cycle remains at run time and is broken on purpose: a role loop wakes a thread
//! (`park::wake`), a wake may create a query thread (`spawn`), and a new thread runs a role
//! loop (`worker::run`, `listener::run_dedicated`, `connect::run`). `spawn` reaches those loops
//! only through the function pointer `Shared::run_role`, which `builder` fills in, so the
//! imports stay downward. The worker loop calls into the waiting role (`listener`), which does
//! not call back: a waiting thread that executes an event directly runs `event::process`, as
//! the worker loop does, and a thread that steals runs the same functions.
//!
//! # Connection states
//!
//! A connection slot is `Armed` (registered one-shot in the poller, session parked in the
//! slot), `Queued` (reported ready, waiting in the high or low FIFO) or `Attached` (its
//! session moved to a thread). Only `Armed` connections expire; only the owner of an
//! `Attached` connection removes it.
//!
//! # Re-arm protocol (a connection that stays open after its statement)
//!
//! 1. With a poller that allows it (epoll), the owner re-arms the registration before it takes
//!    the group mutex; the session, and so the fd, is still the owner's, so the fd cannot be
//!    closed or reused meanwhile.
//! 2. A report of a connection that is still `Attached` only sets `reported_while_attached`.
//! 3. Under the mutex the owner parks the session (`Armed`) and, if the flag is set, re-arms
//!    once more: readiness is level-triggered, so the consumed report comes again.
//! 4. Otherwise (io_uring, or step 1 not taken) the owner re-arms under the mutex as before.
//! 5. In step 4, when no thread of the group is blocked in the poller (the waiting thread, if
//!    any, is not `Polling`), the re-arm may be deferred to the next poll
//!    (`Poller::rearm_deferred`): a thread that finds nothing to run polls before it sleeps
//!    (listener.rs), and it takes the `Polling` state under this mutex, after any deferred
//!    push, so its blocking poll submits the request. A connection that becomes readable
//!    meanwhile is reported by that poll, as a level-triggered epoll would report it.
//!
//! # Stall protocol (the stall checker, every 10 ms, per group under its mutex)
//!
//! 1. Mark each attached thread whose `time_of_attach` is at least `stall_limit × 10 ms` old
//!    as stalled, once per attachment (`STALLED_QUERIES_EXECUTED += 1`, `stalled += 1`); the
//!    credit ceiling `query_threads_per_group + stalled` grows with it.
//! 2. With a transaction limit, every `longrun_trx_limit / 2` ms apply the long-running rule
//!    (suspend the limit when all slots are held by old transactions; re-apply after the
//!    grace period once they fall to half or fewer).
//! 3. If the waiting thread is itself executing (direct execution) and is stalled, take the
//!    role away from it so another thread can poll.
//! 4. Ask the policy's tick what else to do (`mysql`: kick up at most one low-priority event
//!    older than `prio_kickup_timer`).
//! 5. Wake or create one thread if the ceiling grew, or no thread sleeps and an event is
//!    ready (queued, with credit to start it), or (algorithm 1) credit exists and nobody
//!    polls, or a transaction limit is set and an event is ready, or step 3 took the role.
//! 6. Close armed connections idle past `wait_timeout` (outside the mutex: `Session::expire`).
//!
//! With `tpbed_thread_pool_steal=on`, between steps 5 and 6 a group whose queued events cannot
//! start offers them to the other normal groups and, outside its mutex, wakes an idle thread of
//! one of them (steal.rs).
//!
//! # Shutdown protocol
//!
//! 1. Under each group mutex: set `shutdown`, take every parked session (armed, queued,
//!    connecting) out of the group, interrupt (`shutdown(2)`) every attached connection and
//!    every one a connection handler is authenticating.
//! 2. Wake every sleeping thread of the group and the poller's wake fd.
//! 3. Outside the mutex: drop the connecting sessions; deregister, `Session::kill` and drop the
//!    armed and queued ones.
//! 4. Stop the timer thread.
//! 5. Join every thread; threads see `shutdown` at their next decision, attached ones when
//!    their `run` returns (the interrupted socket reads EOF), and drop their session instead of
//!    re-arming it. No thread is created once `shutdown` is set.

use crate::policy::{ConnFacts, GroupFacts, Queue};
use crate::poller::{Poller, Token};
use crate::stats::{GroupStatsRow, ThreadKind, ThreadState};
use crate::sync::{Arc, Condvar, Mutex};
use crate::wait::WaitKind;
use std::collections::VecDeque;
use std::os::fd::RawFd;
use std::sync::atomic::AtomicBool;
use std::time::Duration;

/// Where a connection is in its pooled life.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ConnState {
    Armed,
    Queued,
    Attached,
}

/// A pooled connection.
#[derive(Debug)]
pub(crate) struct Conn<S> {
    pub(crate) fd: RawFd,
    /// None while `Attached` (the session is on a thread).
    pub(crate) session: Option<S>,
    pub(crate) state: ConnState,
    pub(crate) expire_at: Duration,
    /// Reported by the poller while `Attached`: its owner re-armed it before taking the group
    /// mutex (`event::finish`) and must arm it once more under the mutex.
    pub(crate) reported_while_attached: bool,
}

#[derive(Debug)]
struct Slot<S> {
    generation: u32,
    conn: Option<Conn<S>>,
}

/// Connection slots addressed by generation-tagged [`Token`]s.
#[derive(Debug)]
pub(crate) struct Slab<S> {
    slots: Vec<Slot<S>>,
    free: Vec<u32>,
    len: usize,
}

impl<S> Slab<S> {
    pub(crate) fn new() -> Slab<S> {
        Slab {
            slots: Vec::new(),
            free: Vec::new(),
            len: 0,
        }
    }

    pub(crate) fn insert(&mut self, conn: Conn<S>) -> Token {
        self.len += 1;
        if let Some(i) = self.free.pop() {
            let slot = &mut self.slots[i as usize];
            slot.generation = slot.generation.wrapping_add(1);
            slot.conn = Some(conn);
            Token::new(i, slot.generation)
        } else {
            let i = self.slots.len() as u32;
            self.slots.push(Slot {
                generation: 0,
                conn: Some(conn),
            });
            Token::new(i, 0)
        }
    }

    pub(crate) fn get_mut(&mut self, t: Token) -> Option<&mut Conn<S>> {
        match self.slots.get_mut(t.index() as usize) {
            Some(s) if s.generation == t.generation() => s.conn.as_mut(),
            _ => None,
        }
    }

    pub(crate) fn remove(&mut self, t: Token) -> Option<Conn<S>> {
        let slot = self.slots.get_mut(t.index() as usize)?;
        if slot.generation != t.generation() {
            return None;
        }
        let c = slot.conn.take()?;
        self.free.push(t.index());
        self.len -= 1;
        Some(c)
    }

    #[cfg(all(test, not(loom)))]
    pub(crate) fn len(&self) -> usize {
        self.len
    }

    /// Tokens of every live connection.
    pub(crate) fn tokens(&self) -> Vec<Token> {
        self.slots
            .iter()
            .enumerate()
            .filter(|(_, s)| s.conn.is_some())
            .map(|(i, s)| Token::new(i as u32, s.generation))
            .collect()
    }
}

/// A queued event.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Queued {
    pub(crate) token: Token,
    pub(crate) at: Duration,
    /// Already offered to other groups (steal.rs).
    pub(crate) offered: bool,
    /// The connection had a transaction open, or held locks, when its event was queued (it
    /// cannot change while queued): the rails let it past an admission refusal.
    pub(crate) in_transaction: bool,
}

/// What a thread is attached to.
#[derive(Debug)]
pub(crate) struct Attachment {
    pub(crate) attach_at: Duration,
    pub(crate) marked_stalled: bool,
    pub(crate) wait: Option<WaitKind>,
    /// A reported wait (or a yield) in progress took this thread out of `active`.
    pub(crate) wait_decremented: bool,
    /// The connection's facts when the thread attached (`ran_for` is filled in when asked).
    pub(crate) conn: ConnFacts,
    /// When the running statement started or last resumed after a yield.
    pub(crate) run_since: Duration,
    /// The statement gave its thread's credit up at a safe point at this time and waits to
    /// resume (event.rs, cooperative yield).
    pub(crate) yielded_at: Option<Duration>,
}

impl Attachment {
    /// A fresh attachment at `now` of a connection with facts `conn`.
    pub(crate) fn new(now: Duration, conn: ConnFacts) -> Attachment {
        Attachment {
            attach_at: now,
            marked_stalled: false,
            wait: None,
            wait_decremented: false,
            conn,
            run_since: now,
            yielded_at: None,
        }
    }
}

/// One thread of the group (a `tp_thread_state` row).
#[derive(Debug)]
pub(crate) struct ThreadInfo {
    pub(crate) kind: ThreadKind,
    pub(crate) state: ThreadState,
    pub(crate) parker: Arc<Condvar>,
    /// Set by a waker under the mutex; the sleeper clears it (park.rs).
    pub(crate) woken: bool,
    pub(crate) os_tid: i64,
    /// The socket of the connection this connection handler is authenticating (shutdown
    /// interrupts it); cleared under the mutex before the session can be dropped.
    pub(crate) handshake_fd: Option<RawFd>,
    pub(crate) attached: Option<Attachment>,
    /// Set by the stall checker when the policy asks the running statement to yield; read by
    /// the thread at its safe points without the mutex.
    pub(crate) yield_flag: std::sync::Arc<AtomicBool>,
    pub(crate) event_count: u64,
    pub(crate) acc_event_time: Duration,
    pub(crate) exec_count: u64,
    pub(crate) acc_exec_time: Duration,
}

impl ThreadInfo {
    pub(crate) fn new(kind: ThreadKind) -> ThreadInfo {
        ThreadInfo {
            kind,
            state: ThreadState::Managing,
            parker: Arc::new(Condvar::new()),
            woken: false,
            os_tid: 0,
            handshake_fd: None,
            attached: None,
            yield_flag: std::sync::Arc::new(AtomicBool::new(false)),
            event_count: 0,
            acc_event_time: Duration::ZERO,
            exec_count: 0,
            acc_exec_time: Duration::ZERO,
        }
    }
}

/// The long-running-transaction rule's state.
#[derive(Debug, Default)]
pub(crate) struct Longrun {
    /// When the rule suspended the limit, refreshed while it should stay suspended.
    pub(crate) suspended_stamp: Option<Duration>,
    pub(crate) last_check: Duration,
}

/// The mutable state of one group.
#[derive(Debug)]
pub(crate) struct GroupState<S> {
    pub(crate) conns: Slab<S>,
    /// `queued_queries`: high priority.
    pub(crate) high: VecDeque<Queued>,
    /// `queued_trans`: low priority.
    pub(crate) low: VecDeque<Queued>,
    /// Entries of `high` and `low` with `in_transaction` set.
    pub(crate) queued_in_transaction: usize,
    /// New connections waiting for a connection handler.
    pub(crate) connect_q: VecDeque<S>,
    pub(crate) threads: Vec<Option<ThreadInfo>>,
    pub(crate) consumers: Vec<usize>,
    pub(crate) reserves: Vec<usize>,
    pub(crate) ch_sleepers: Vec<usize>,
    /// The waiting thread (listener role), at most one.
    pub(crate) waiting: Option<usize>,
    /// Attached threads not in a reported wait.
    pub(crate) active: usize,
    /// Threads inside event processing (`trxn_threads`).
    pub(crate) bound: usize,
    /// Attached threads marked stalled.
    pub(crate) stalled: usize,
    /// Attached threads whose statement yielded and waits to resume.
    pub(crate) yielded: usize,
    pub(crate) query_threads: usize,
    pub(crate) listener_threads: usize,
    pub(crate) ch_threads: usize,
    /// Connections admitted and not yet closed (`Threads_connected` share).
    pub(crate) connections: usize,
    pub(crate) shutdown: bool,
    pub(crate) longrun: Longrun,
    pub(crate) last_creation: Option<Duration>,
    pub(crate) last_max_active: usize,
    pub(crate) earliest_expire: Option<Duration>,
    pub(crate) counters: GroupStatsRow,
}

impl<S> GroupState<S> {
    pub(crate) fn new() -> GroupState<S> {
        GroupState {
            conns: Slab::new(),
            high: VecDeque::new(),
            low: VecDeque::new(),
            queued_in_transaction: 0,
            connect_q: VecDeque::new(),
            threads: Vec::new(),
            consumers: Vec::new(),
            reserves: Vec::new(),
            ch_sleepers: Vec::new(),
            waiting: None,
            active: 0,
            bound: 0,
            stalled: 0,
            yielded: 0,
            query_threads: 0,
            listener_threads: 0,
            ch_threads: 0,
            connections: 0,
            shutdown: false,
            longrun: Longrun::default(),
            last_creation: None,
            last_max_active: 0,
            earliest_expire: None,
            counters: GroupStatsRow::default(),
        }
    }

    pub(crate) fn thread(&mut self, me: usize) -> &mut ThreadInfo {
        self.threads[me]
            .as_mut()
            .expect("a running thread keeps its slot until it exits")
    }

    pub(crate) fn queued(&self) -> usize {
        self.high.len() + self.low.len()
    }

    /// Whether the group's waiting thread is inside (or about to enter) a blocking poll.
    pub(crate) fn blocked_in_poll(&self) -> bool {
        self.waiting.is_some_and(|w| {
            self.threads[w]
                .as_ref()
                .is_some_and(|t| t.state == ThreadState::Polling)
        })
    }

    /// Moves the head of the low queue to the tail of the high queue (a kick-up); false when
    /// the low queue is empty.
    pub(crate) fn promote_low_head(&mut self) -> bool {
        let Some(q) = self.low.pop_front() else {
            return false;
        };
        self.high.push_back(q);
        self.counters.prio_kickups += 1;
        true
    }

    /// Queues `q` at the tail of `queue`.
    pub(crate) fn push(&mut self, queue: Queue, q: Queued) {
        self.queued_in_transaction += usize::from(q.in_transaction);
        match queue {
            Queue::High => self.high.push_back(q),
            Queue::Low => self.low.push_back(q),
        }
        self.counters.queries_queued += 1;
    }

    fn queue_mut(&mut self, queue: Queue) -> &mut VecDeque<Queued> {
        match queue {
            Queue::High => &mut self.high,
            Queue::Low => &mut self.low,
        }
    }

    /// Removes entry `i` of `queue`.
    fn unqueue_at(&mut self, queue: Queue, i: usize) -> Option<Queued> {
        let q = self.queue_mut(queue).remove(i)?;
        self.queued_in_transaction -= usize::from(q.in_transaction);
        Some(q)
    }

    fn is_queued(&mut self, token: Token) -> bool {
        self.conns
            .get_mut(token)
            .is_some_and(|c| c.state == ConnState::Queued)
    }

    /// The head of `queue` that still names a queued connection, dropping stale entries; the
    /// entry stays queued.
    pub(crate) fn head(&mut self, queue: Queue) -> Option<Token> {
        loop {
            let token = self.queue_mut(queue).front()?.token;
            if self.is_queued(token) {
                return Some(token);
            }
            self.unqueue_at(queue, 0);
        }
    }

    /// Takes the head of `queue` (see [`head`](GroupState::head)) at `now`, counting how
    /// long it waited.
    pub(crate) fn pop(&mut self, queue: Queue, now: Duration) -> Option<Token> {
        let token = self.head(queue)?;
        let q = self.unqueue_at(queue, 0)?;
        self.count_dequeue(queue, q.at, now);
        Some(token)
    }

    /// Adds one event of `queue`, queued at `at` and taken at `now`, to the queue-wait
    /// counters.
    fn count_dequeue(&mut self, queue: Queue, at: Duration, now: Duration) {
        let waited = now.saturating_sub(at).as_micros() as u64;
        let c = &mut self.counters;
        match queue {
            Queue::High => {
                c.tpbed_dequeued_high += 1;
                c.tpbed_queue_wait_high_us += waited;
            }
            Queue::Low => {
                c.tpbed_dequeued_low += 1;
                c.tpbed_queue_wait_low_us += waited;
            }
        }
    }

    /// Takes the oldest queued event of a connection with an open transaction (high queue
    /// first), dropping stale entries on the way; None when there is none (without a scan when
    /// none is queued).
    pub(crate) fn take_in_transaction(&mut self, now: Duration) -> Option<Token> {
        for queue in [Queue::High, Queue::Low] {
            let mut i = 0;
            while self.queued_in_transaction > 0 {
                let Some(q) = self.queue_mut(queue).get(i).copied() else {
                    break;
                };
                if !q.in_transaction {
                    i += 1;
                    continue;
                }
                self.unqueue_at(queue, i);
                if self.is_queued(q.token) {
                    self.count_dequeue(queue, q.at, now);
                    return Some(q.token);
                }
            }
        }
        None
    }

    /// Removes every queue entry of `token` (another group's thread took it, steal.rs).
    pub(crate) fn unqueue(&mut self, token: Token) {
        for queue in [Queue::High, Queue::Low] {
            while let Some(i) = self.queue_mut(queue).iter().position(|q| q.token == token) {
                self.unqueue_at(queue, i);
            }
        }
    }

    /// Empties both queues (shutdown).
    pub(crate) fn clear_queues(&mut self) {
        self.high.clear();
        self.low.clear();
        self.queued_in_transaction = 0;
    }

    /// The facts a policy sees about this group at `now`; `admin` and the transaction `share`
    /// come from the pool.
    pub(crate) fn facts(&self, admin: bool, share: usize, now: Duration) -> GroupFacts {
        GroupFacts {
            now,
            admin,
            high_len: self.high.len(),
            low_len: self.low.len(),
            high_since: self.high.front().map(|q| q.at),
            low_since: self.low.front().map(|q| q.at),
            active: self.active,
            bound: self.bound,
            waiting: self.bound.saturating_sub(self.active),
            parked: self.consumers.len() + self.reserves.len(),
            stalled: self.stalled,
            transaction_share: share,
            share_suspended: self.longrun.suspended_stamp.is_some(),
        }
    }

    /// The queue time of the oldest event in either queue, None when both are empty.
    pub(crate) fn oldest_queued_at(&self) -> Option<Duration> {
        match (self.high.front(), self.low.front()) {
            (Some(h), Some(l)) => Some(h.at.min(l.at)),
            (h, l) => h.or(l).map(|q| q.at),
        }
    }

    /// The thread whose statement yielded first and still waits to resume, with its yield
    /// time.
    pub(crate) fn oldest_yielded(&self) -> Option<(usize, Duration)> {
        if self.yielded == 0 {
            return None;
        }
        self.threads
            .iter()
            .enumerate()
            .filter_map(|(i, t)| {
                let at = t.as_ref()?.attached.as_ref()?.yielded_at?;
                Some((i, at))
            })
            .min_by_key(|(_, at)| *at)
    }

    /// Lets the yielded statement of thread `t` resume: it counts as active again and its
    /// thread is woken.
    pub(crate) fn resume(&mut self, t: usize) {
        let ti = self.thread(t);
        let Some(a) = ti.attached.as_mut() else {
            return;
        };
        if a.yielded_at.take().is_none() {
            return;
        }
        let back = std::mem::take(&mut a.wait_decremented);
        ti.parker.notify_one();
        if back {
            self.active += 1;
        }
        self.yielded -= 1;
    }

    /// Resumes every yielded statement (shutdown).
    pub(crate) fn resume_all(&mut self) {
        while let Some((t, _)) = self.oldest_yielded() {
            self.resume(t);
        }
    }

    /// Lowers `earliest_expire` to `at`.
    pub(crate) fn note_expiry(&mut self, at: Duration) {
        self.earliest_expire = Some(self.earliest_expire.map_or(at, |e| e.min(at)));
    }

    /// Recounts `active`, `bound` and `stalled` from the per-thread records (loom checks).
    #[cfg(test)]
    pub(crate) fn recount(&self) -> (usize, usize, usize) {
        let mut active = 0;
        let mut bound = 0;
        let mut stalled = 0;
        for t in self.threads.iter().flatten() {
            if let Some(a) = &t.attached {
                bound += 1;
                if !a.wait_decremented {
                    active += 1;
                }
                if a.marked_stalled {
                    stalled += 1;
                }
            }
        }
        (active, bound, stalled)
    }
}

/// A thread group: its state, poller and placement.
pub(crate) struct Group<S> {
    pub(crate) id: usize,
    /// The Admin group (index = size): never transaction-limited, no transaction delay.
    pub(crate) admin: bool,
    pub(crate) state: Mutex<GroupState<S>>,
    pub(crate) poller: Box<dyn Poller>,
    /// Cores for `tpbed_thread_pool_pin=group` (empty: unpinned).
    pub(crate) cores: Vec<usize>,
    /// Events offered to other groups under `tpbed_thread_pool_steal=on` (steal.rs).
    pub(crate) exported: crossbeam_deque::Injector<Token>,
}

impl<S> std::fmt::Debug for Group<S> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Group")
            .field("id", &self.id)
            .field("admin", &self.admin)
            .finish()
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;
    use crate::policy::{Mysql, Policy};
    use proptest::prelude::*;

    proptest! {
        #[test]
        fn kick_up_moves_at_most_one_and_only_when_due(ages in proptest::collection::vec(0u64..3000, 0..6), timer in 1u32..2000) {
            let mut st: GroupState<()> = GroupState::new();
            let now = Duration::from_secs(10);
            for (i, a) in ages.iter().enumerate() {
                st.low.push_back(Queued { token: Token::new(i as u32, 0), at: now - Duration::from_millis(*a), offered: false, in_transaction: false });
            }
            let before = st.low.len();
            let mut cfg = crate::config::PoolConfig::mysql_defaults(2);
            cfg.prio_kickup_timer = timer;
            let knobs = crate::config::PoolKnobs::new(&cfg);
            let due = Mysql.tick(&st.facts(false, 0, now), &knobs, now).kick_up;
            let moved = due && st.promote_low_head();
            let head_due = ages.first().is_some_and(|a| *a > u64::from(timer));
            prop_assert_eq!(moved, head_due);
            prop_assert_eq!(st.high.len(), usize::from(moved));
            prop_assert_eq!(st.low.len() + st.high.len(), before);
            prop_assert_eq!(st.counters.prio_kickups, u64::from(moved));
        }
    }

    #[test]
    fn slab_tokens_are_generation_tagged() {
        let mut s: Slab<u8> = Slab::new();
        let conn = |v| Conn {
            fd: 0,
            session: Some(v),
            state: ConnState::Armed,
            expire_at: Duration::ZERO,
            reported_while_attached: false,
        };
        let a = s.insert(conn(1));
        assert!(s.remove(a).is_some());
        let b = s.insert(conn(2));
        assert_eq!(a.index(), b.index());
        assert_ne!(a, b);
        assert!(
            s.get_mut(a).is_none(),
            "a stale token does not reach the new connection"
        );
        assert_eq!(s.get_mut(b).unwrap().session, Some(2));
        assert_eq!(s.len(), 1);
    }
}
