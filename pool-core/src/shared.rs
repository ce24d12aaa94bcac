//! The state every thread of one pool shares: the groups, the dynamic knobs, the clock, the
//! join handles, the timer's control block, the log sink and the role table. Invariant: nothing
//! here is global — every pool owns its groups, threads and clock, so tests run several pools
//! side by side.

use crate::clock::Clock;
use crate::config::{Algorithm, PoolKnobs, Rails};
use crate::group::{Group, GroupState, Queued};
use crate::placement::RoundRobin;
use crate::policy::{ConnFacts, Credit, GroupFacts, Policy, Queue, StmtClass};
use crate::poller::Token;
use crate::service::ServiceTimes;
use crate::session::Session;
use crate::sync::{thread, Arc, Condvar, Mutex, MutexGuard};
use std::fmt;
use std::sync::atomic::{AtomicU64, AtomicUsize};
use std::time::Duration;

/// A group's guard.
pub(crate) type Guard<'a, S> = MutexGuard<'a, GroupState<S>>;

/// Severity of a pool log line.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LogLevel {
    /// Informational (MySQL's `[Note]`/`[System]`).
    Info,
    /// A warning.
    Warning,
}

/// Where the pool writes its log lines (the server's error log).
pub type LogSink = std::sync::Arc<dyn Fn(LogLevel, &str) + Send + Sync>;

/// What a pool thread does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Role {
    Query,
    Listener,
    ConnHandler { permanent: bool },
}

/// A role's loop: run by a pool thread of group `g` (second argument) with thread number `me`
/// (third) until the thread should exit; returns the group guard its exit is recorded under.
pub(crate) type RoleLoop<S> = for<'a> fn(&'a Arc<Shared<S>>, usize, usize, Role) -> Guard<'a, S>;

/// Timer-thread control.
#[derive(Debug, Default)]
pub(crate) struct TimerCtl {
    pub(crate) stop: bool,
    /// When the last connection report was written (pool clock).
    pub(crate) last_report: Duration,
}

/// Join handles of every thread the pool started.
pub(crate) struct Handles {
    next: u64,
    live: Vec<(u64, thread::JoinHandle<()>)>,
    finished: Vec<u64>,
}

impl fmt::Debug for Handles {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Handles")
            .field("live", &self.live.len())
            .finish()
    }
}

impl Handles {
    pub(crate) fn new() -> Handles {
        Handles {
            next: 0,
            live: Vec::new(),
            finished: Vec::new(),
        }
    }

    pub(crate) fn next_serial(&mut self) -> u64 {
        self.next += 1;
        self.next
    }

    pub(crate) fn push(&mut self, serial: u64, h: thread::JoinHandle<()>) {
        self.live.push((serial, h));
    }

    /// A thread's last act: it is about to return, so joining it cannot block for long.
    pub(crate) fn finished(&mut self, serial: u64) {
        self.finished.push(serial);
    }

    /// Takes every handle not joined yet (shutdown joins them).
    pub(crate) fn take_live(&mut self) -> Vec<(u64, thread::JoinHandle<()>)> {
        std::mem::take(&mut self.live)
    }

    /// Joins threads that have finished (retired workers and handlers).
    pub(crate) fn reap(&mut self) {
        for s in std::mem::take(&mut self.finished) {
            if let Some(i) = self.live.iter().position(|(x, _)| *x == s) {
                let (_, h) = self.live.swap_remove(i);
                let _ = h.join();
            }
        }
    }
}

/// State shared by every thread of one pool.
pub(crate) struct Shared<S> {
    pub(crate) size: usize,
    pub(crate) algorithm: Algorithm,
    pub(crate) dedicated: bool,
    pub(crate) pin: bool,
    pub(crate) steal: bool,
    /// The scheduling policy the groups consult (`tpbed_thread_pool_policy`).
    pub(crate) policy: &'static dyn Policy,
    /// The safety rails in force (`tpbed_thread_pool_rails`).
    pub(crate) rails: Rails,
    /// Service-time estimates per statement class, updated as statements finish.
    pub(crate) service: ServiceTimes,
    pub(crate) ncpu: usize,
    pub(crate) knobs: std::sync::Arc<PoolKnobs>,
    pub(crate) clock: std::sync::Arc<dyn Clock>,
    pub(crate) groups: Vec<Group<S>>,
    pub(crate) handles: Mutex<Handles>,
    pub(crate) timer: Mutex<TimerCtl>,
    pub(crate) timer_cv: Condvar,
    /// Statistics only (Relaxed): they order nothing.
    pub(crate) total_query_threads: AtomicUsize,
    pub(crate) running: AtomicUsize,
    pub(crate) connecting: AtomicUsize,
    pub(crate) alive: AtomicUsize,
    pub(crate) threads_created: AtomicU64,
    pub(crate) rr: RoundRobin,
    pub(crate) log: LogSink,
    pub(crate) connection_handlers: bool,
    /// The loop each role's thread runs (spawn.rs starts threads through it).
    pub(crate) run_role: RoleLoop<S>,
}

impl<S> Shared<S> {
    /// The transaction share of group `g` (0 for the Admin group and when the limit is 0).
    pub(crate) fn group_share(&self, g: usize) -> usize {
        if self.groups[g].admin {
            0
        } else {
            self.knobs.group_share() as usize
        }
    }

    /// The facts the policy sees about group `g` in state `st`.
    pub(crate) fn facts(&self, g: usize, st: &GroupState<S>) -> GroupFacts {
        st.facts(self.groups[g].admin, self.group_share(g), self.clock.now())
    }

    /// Whether group `g` in state `st` may start one more statement (the policy's credit).
    pub(crate) fn credit(&self, g: usize, st: &GroupState<S>) -> bool {
        self.policy
            .credit(&self.facts(g, st), &self.knobs)
            .granted()
    }

    /// Takes the event a free thread of group `g` runs next, and whether a rail let it past a
    /// refusal: with credit, the head of the queue the policy picks (stale entries dropped on
    /// the way); past a refusal, what the rails in force allow (policy/mod.rs): in the Admin
    /// group the same head, on an admission refusal the oldest event of an open transaction.
    pub(crate) fn take_event(&self, g: usize, st: &mut GroupState<S>) -> Option<(Token, bool)> {
        let facts = self.facts(g, st);
        match self.policy.credit(&facts, &self.knobs) {
            Credit::Grant => self.pop_picked(g, st, facts).map(|t| (t, false)),
            _ if facts.admin && self.rails.admin => {
                self.pop_picked(g, st, facts).map(|t| (t, true))
            }
            Credit::RefuseAdmission if self.rails.open_transaction => {
                st.take_in_transaction(facts.now).map(|t| (t, true))
            }
            _ => None,
        }
    }

    /// Resumes the statement of group `g` that yielded first, when the policy's credit allows
    /// one more statement and no queued event arrived before it yielded (a yielded statement
    /// goes back behind the events that were already waiting); true when it did.
    pub(crate) fn resume_yielded(&self, g: usize, st: &mut GroupState<S>) -> bool {
        let Some((t, at)) = st.oldest_yielded() else {
            return false;
        };
        if st.oldest_queued_at().is_some_and(|q| q <= at) {
            return false;
        }
        let facts = self.facts(g, st);
        let credit = self.policy.credit(&facts, &self.knobs);
        if credit.granted() || (facts.admin && self.rails.admin) {
            st.resume(t);
            return true;
        }
        false
    }

    /// Whether a queued event of group `g` could start now, by credit or by a rail.
    pub(crate) fn startable(&self, g: usize, st: &GroupState<S>) -> bool {
        if st.queued() == 0 {
            return false;
        }
        let facts = self.facts(g, st);
        match self.policy.credit(&facts, &self.knobs) {
            Credit::Grant => true,
            _ if facts.admin && self.rails.admin => true,
            Credit::RefuseAdmission if self.rails.open_transaction => st.queued_in_transaction > 0,
            _ => false,
        }
    }

    /// Pops the head of the queue the policy picks; when that queue held only stale entries,
    /// asks once more on the updated facts (each queue can be emptied at most once).
    fn pop_picked(&self, g: usize, st: &mut GroupState<S>, mut facts: GroupFacts) -> Option<Token> {
        for _ in 0..2 {
            let q = self.policy.pick(&facts)?;
            if let Some(t) = st.pop(q, facts.now) {
                return Some(t);
            }
            facts = self.facts(g, st);
        }
        None
    }

    /// Whether the high-concurrency algorithm is in force (algorithm 1 and more than one query
    /// thread per group).
    pub(crate) fn high_concurrency(&self) -> bool {
        self.algorithm == Algorithm::HighConcurrency && self.knobs.query_threads_per_group() > 1
    }

    pub(crate) fn log_info(&self, msg: &str) {
        (self.log)(LogLevel::Info, msg);
    }

    pub(crate) fn log_warn(&self, msg: &str) {
        (self.log)(LogLevel::Warning, msg);
    }
}

impl<S: Session> Shared<S> {
    /// The facts the policy sees about `session`, a connection of group `g` (the statement
    /// class and its estimate only for a policy that wants them).
    pub(crate) fn conn_facts(&self, g: usize, session: &S) -> ConnFacts {
        let class = if self.policy.wants_statement_class() {
            session.next_class()
        } else {
            StmtClass::UNKNOWN
        };
        ConnFacts {
            in_transaction: session.in_transaction(),
            admin: self.groups[g].admin,
            high_priority: session.high_priority(),
            priority: session.priority(),
            holds_locks: session.holds_locks(),
            blocks_others: session.blocks_others(),
            class,
            service_estimate: self.service.estimate(&class),
            ran_for: Duration::ZERO,
        }
    }

    /// The queue entry for a ready event of `session` (a connection of group `g`) queued at
    /// `at`, and the queue the policy puts it in.
    pub(crate) fn classify(
        &self,
        g: usize,
        token: Token,
        session: &S,
        at: Duration,
    ) -> (Queue, Queued) {
        let conn = self.conn_facts(g, session);
        let queue = self.policy.classify(&conn, &self.knobs);
        let q = Queued {
            token,
            at,
            offered: false,
            in_transaction: conn.in_transaction || conn.holds_locks,
        };
        (queue, q)
    }
}
