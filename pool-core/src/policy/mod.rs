//! Connection-scheduling policies: the decisions a thread group makes, behind one trait, so a
//! researcher changes *what* the pool decides without touching *how* it runs. Invariant: a
//! policy sees facts (plain copies of counters and flags), never the group's state, and the
//! pool's loops keep the mechanism — pollers, the queues' storage, parking and waking, thread
//! creation, the group mutex, the wait hook, the stall tick's clock — and the safety rails.
//!
//! # The decisions
//!
//! | decision | hook | asked |
//! |---|---|---|
//! | which queue a ready event joins | [`Policy::classify`] | per event, by the poller's thread or a connection handler |
//! | which queue a free thread takes from | [`Policy::pick`] | per event taken |
//! | may one more statement start (admission, run cap) | [`Policy::credit`] | before a thread takes an event or runs one directly, by the stall tick, by work stealing |
//! | what the periodic tick does (kick-up) | [`Policy::tick`] | every stall-checker pass, per group |
//! | should a running statement yield | [`Policy::should_yield`] | (no safe point asks it yet) |
//!
//! Every hook is called under the group mutex, once per decision, through one `dyn Policy`
//! call; facts are built on the stack, so no decision allocates.
//!
//! # Rails (enforced by the pool, whatever the policy answers)
//!
//! Both are on unless `tpbed_thread_pool_rails` ([`crate::Rails`]) turns them off.
//!
//! - A connection with an open transaction is never held back by an admission refusal
//!   ([`Credit::RefuseAdmission`]): its transaction was admitted when it began, so a free
//!   thread takes the oldest queued event of an open transaction past the refusal.
//! - The Admin group (`TP_CONNECTION_ADMIN`) bypasses every refusal of [`Policy::credit`].
//!
//! A run-cap refusal ([`Credit::RefuseRunCap`]) still holds a normal group's transactions back,
//! as MySQL's stall rule does, so a policy's run cap must let the group make progress (MySQL's
//! widens by one for every stalled statement). With `mysql` and a transaction limit, a
//! connection in a transaction keeps its thread until it ends, so the first rail only acts on
//! transactions that were open when the limit was raised from 0; the second lets Admin-group
//! statements start without waiting for the stall rule.
//!
//! # Adding a policy
//!
//! One file in this directory with a unit struct that implements [`Policy`], and one line in
//! [`REGISTRY`] (registry.rs). The model tests and the loom models run every registered policy;
//! docs/policies.md walks through an example.

mod fifo;
mod mysql;
mod registry;

pub use fifo::Fifo;
pub use mysql::Mysql;
pub use registry::{by_name, names, Registration, REGISTRY};

use crate::config::PoolKnobs;
use std::fmt;
use std::time::Duration;

/// A group's two FIFOs of ready events. MySQL calls them `queued_queries` (high) and
/// `queued_trans` (low); `tp_thread_group_state` shows their lengths.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Queue {
    /// The high-priority queue (`QUEUED_QUERIES`).
    High,
    /// The low-priority queue (`QUEUED_TRANSACTIONS`).
    Low,
}

/// What a policy knows about one connection.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ConnFacts {
    /// A transaction is open (MySQL's `thd_is_transaction_active`).
    pub in_transaction: bool,
    /// The connection is in the Admin group (`TP_CONNECTION_ADMIN`).
    pub admin: bool,
    /// `thread_pool_high_priority_connection` is set for the session.
    pub high_priority: bool,
}

/// What a policy knows about one group at a decision.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct GroupFacts {
    /// The Admin group.
    pub admin: bool,
    /// Events in the high queue.
    pub high_len: usize,
    /// Events in the low queue.
    pub low_len: usize,
    /// When the oldest event of the high queue was queued (pool clock), None when empty.
    pub high_since: Option<Duration>,
    /// When the oldest event of the low queue was queued (pool clock), None when empty.
    pub low_since: Option<Duration>,
    /// Attached threads not inside a reported wait (`threads_active`).
    pub active: usize,
    /// Threads attached to a connection (`trxn_threads`): running, waiting or bound to an
    /// open transaction.
    pub bound: usize,
    /// Attached threads inside a reported wait that gave up their credit.
    pub waiting: usize,
    /// Query threads asleep as consumers or reserves.
    pub parked: usize,
    /// Attached threads marked stalled.
    pub stalled: usize,
    /// This group's share of `thread_pool_max_transactions_limit`, 0 for none (always 0 in
    /// the Admin group).
    pub transaction_share: usize,
    /// The long-running rule has suspended the transaction limit in this group.
    pub share_suspended: bool,
}

impl GroupFacts {
    /// How long the oldest event of `q` has waited at `now`, None when `q` is empty.
    pub fn age(&self, q: Queue, now: Duration) -> Option<Duration> {
        let since = match q {
            Queue::High => self.high_since,
            Queue::Low => self.low_since,
        };
        since.map(|at| now.saturating_sub(at))
    }

    /// Events in both queues.
    pub fn queued(&self) -> usize {
        self.high_len + self.low_len
    }
}

/// The answer to "may one more statement start in this group?".
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Credit {
    /// Yes.
    Grant,
    /// No: the group's transaction slots are taken (admission control). The rails let an
    /// open transaction's statement and the Admin group through.
    RefuseAdmission,
    /// No: the group runs as many statements as it may (MySQL's stall rule). The rails let
    /// the Admin group through.
    RefuseRunCap,
}

impl Credit {
    /// Whether the policy granted it.
    pub fn granted(self) -> bool {
        self == Credit::Grant
    }
}

/// What the periodic tick does in a group, besides the pool's own duties (stall marking, the
/// long-running rule, waking threads, idle expiry).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct TickAction {
    /// Move the head of the low queue to the tail of the high queue.
    pub kick_up: bool,
}

/// A connection-scheduling policy. Implementations are stateless unit structs (or hold only
/// what is fixed at start-up); the dynamic knobs come as `knobs` at each decision.
pub trait Policy: Send + Sync + fmt::Debug + 'static {
    /// The name `tpbed_thread_pool_policy` takes.
    fn name(&self) -> &'static str;

    /// The queue a connection's ready event joins.
    fn classify(&self, conn: &ConnFacts, knobs: &PoolKnobs) -> Queue;

    /// The queue a free thread takes its next event from; None when it should take none.
    /// Only asked when [`credit`](Policy::credit) allowed a start (or a rail did).
    fn pick(&self, group: &GroupFacts) -> Option<Queue>;

    /// Whether the group may start one more statement: both admission (the transaction limit)
    /// and the run cap (the stall rule). The caller is not counted in `group` yet.
    fn credit(&self, group: &GroupFacts, knobs: &PoolKnobs) -> Credit;

    /// What the stall checker does for this group at `now` (called once per pass).
    fn tick(&self, group: &GroupFacts, knobs: &PoolKnobs, now: Duration) -> TickAction;

    /// Whether a running statement should give its thread up at its next safe point.
    fn should_yield(&self, conn: &ConnFacts, group: &GroupFacts) -> bool;
}
