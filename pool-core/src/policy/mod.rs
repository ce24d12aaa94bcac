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
//! | should a running statement yield | [`Policy::should_yield`] | every stall-checker pass, per running statement; it yields at its next safe point ([`crate::wait::safe_point`]) |
//!
//! Every hook is called under the group mutex, once per decision, through one `dyn Policy`
//! call; facts are built on the stack, so no decision allocates.
//!
//! # Rails (enforced by the pool, whatever the policy answers)
//!
//! Both are on unless `tpbed_thread_pool_rails` ([`crate::Rails`]) turns them off.
//!
//! - A connection with an open transaction, or holding locks (`LOCK TABLES`), is never held
//!   back by an admission refusal ([`Credit::RefuseAdmission`]): its transaction was admitted
//!   when it began, and what it holds is released only by its next statements, so a free
//!   thread takes the oldest queued event of such a connection past the refusal.
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
mod lock_aware;
mod mariadb;
mod mysql;
mod registry;
mod short_first;
mod time_slice;

pub use fifo::Fifo;
pub use lock_aware::LockAware;
pub use mariadb::Mariadb;
pub use mysql::Mysql;
pub use registry::{by_name, names, Registration, REGISTRY};
pub use short_first::ShortFirst;
pub use time_slice::TimeSlice;

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

/// The kind of statement a command carries: the command itself for the commands that are not
/// statements, else the statement's first keyword.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum StmtKind {
    /// Not known (nothing readable yet, or a policy that did not ask).
    #[default]
    Unknown,
    /// `SELECT` (and `WITH`, `TABLE`, `VALUES`).
    Select,
    /// `INSERT`.
    Insert,
    /// `UPDATE`.
    Update,
    /// `DELETE`.
    Delete,
    /// `REPLACE`.
    Replace,
    /// `BEGIN`, `START TRANSACTION`.
    Begin,
    /// `COMMIT`.
    Commit,
    /// `ROLLBACK`.
    Rollback,
    /// `SET`.
    Set,
    /// `SHOW`, `DESCRIBE`, `EXPLAIN`.
    Show,
    /// `CREATE`, `ALTER`, `DROP`, `TRUNCATE`, `RENAME`.
    Ddl,
    /// `LOCK TABLES`, `UNLOCK TABLES`, `FLUSH`.
    Lock,
    /// Any other statement.
    Other,
    /// A command that is not a statement (`COM_PING`, `COM_QUIT`, `COM_STMT_PREPARE`, ...).
    Command,
}

/// The class of a connection's next statement: what a policy that sorts by statement sees.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct StmtClass {
    /// The MySQL command byte (`COM_QUERY` = 3, `COM_STMT_EXECUTE` = 23, ...); 0 when unknown
    /// (0 is `COM_SLEEP`, which a client never sends).
    pub command: u8,
    /// The statement's kind.
    pub kind: StmtKind,
    /// A digest of the statement's normalized text (literals removed), 0 when not known. The
    /// same statement with other literals has the same digest.
    pub digest: u64,
}

impl StmtClass {
    /// Nothing known.
    pub const UNKNOWN: StmtClass = StmtClass {
        command: 0,
        kind: StmtKind::Unknown,
        digest: 0,
    };

    /// Whether anything is known.
    pub fn known(&self) -> bool {
        *self != StmtClass::UNKNOWN
    }
}

/// MariaDB's per-session `thread_pool_priority`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum SessionPriority {
    /// `auto` (the default): high while a transaction is open, else low.
    #[default]
    Auto,
    /// `high`.
    High,
    /// `low`.
    Low,
}

/// What a policy knows about one connection.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct ConnFacts {
    /// A transaction is open (MySQL's `thd_is_transaction_active`).
    pub in_transaction: bool,
    /// The connection is in the Admin group (`TP_CONNECTION_ADMIN`).
    pub admin: bool,
    /// `thread_pool_high_priority_connection` is set for the session.
    pub high_priority: bool,
    /// MariaDB's `thread_pool_priority` of the session.
    pub priority: SessionPriority,
    /// The connection holds row or table locks (`LOCK TABLES`, locks of its open transaction).
    pub holds_locks: bool,
    /// Another transaction waits for a lock this connection's transaction holds.
    pub blocks_others: bool,
    /// The class of its next statement; [`StmtClass::UNKNOWN`] unless the policy asks for it
    /// ([`Policy::wants_statement_class`]).
    pub class: StmtClass,
    /// The pool's running estimate of the service time of statements of `class` (an
    /// exponentially weighted average of their run times); None until one has run.
    pub service_estimate: Option<Duration>,
    /// How long the current statement has run since it started or last resumed (zero while
    /// the event is queued).
    pub ran_for: Duration,
}

/// What a policy knows about one group at a decision (`Default`: an empty, idle group at
/// time zero).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct GroupFacts {
    /// The pool clock at the decision.
    pub now: Duration,
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

    /// Whether a running statement (`conn`, with `ran_for` set) should give its thread up at
    /// its next safe point. Asked by the stall checker for every running statement of the
    /// group, at every pass.
    fn should_yield(&self, conn: &ConnFacts, group: &GroupFacts, knobs: &PoolKnobs) -> bool;

    /// Whether [`classify`](Policy::classify) reads `conn.class` and `conn.service_estimate`:
    /// finding a statement's class costs a look at the connection's pending input, so the pool
    /// only does it for a policy that says so.
    fn wants_statement_class(&self) -> bool {
        false
    }
}
