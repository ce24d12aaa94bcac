//! `mysql`: the rules of MySQL's thread-pool plugin, decision for decision — the queue by
//! transaction state and session priority, high before low, the credit rule's three branches in
//! their order with their `<=` comparisons, and one kick-up per group per pass.

use super::{ConnFacts, Credit, GroupFacts, Policy, Queue, TickAction};
use crate::config::PoolKnobs;
use std::time::Duration;

/// MySQL's thread-pool plugin (the default policy).
#[derive(Debug, Clone, Copy, Default)]
pub struct Mysql;

impl Policy for Mysql {
    fn name(&self) -> &'static str {
        "mysql"
    }

    fn classify(&self, conn: &ConnFacts, knobs: &PoolKnobs) -> Queue {
        if is_high_priority(
            conn.in_transaction,
            knobs.prio_kickup_timer(),
            conn.high_priority,
        ) {
            Queue::High
        } else {
            Queue::Low
        }
    }

    fn pick(&self, group: &GroupFacts) -> Option<Queue> {
        if group.high_len > 0 {
            Some(Queue::High)
        } else if group.low_len > 0 {
            Some(Queue::Low)
        } else {
            None
        }
    }

    fn credit(&self, group: &GroupFacts, knobs: &PoolKnobs) -> Credit {
        credit_of(group, knobs)
    }

    fn tick(&self, group: &GroupFacts, knobs: &PoolKnobs, now: Duration) -> TickAction {
        TickAction {
            kick_up: kick_up_due(group.low_since, now, knobs.prio_kickup_timer()),
        }
    }

    fn should_yield(&self, _conn: &ConnFacts, _group: &GroupFacts, _knobs: &PoolKnobs) -> bool {
        false
    }
}

/// Inputs of MySQL's credit rule.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct CreditInputs {
    /// Per-group transaction share, 0 for none (always 0 in the Admin group).
    txnlim: usize,
    /// The long-running rule has suspended the limit.
    suspended: bool,
    /// `trxn_threads`.
    bound: usize,
    /// `thread_pool_max_active_query_threads`.
    max_active_query_threads: usize,
    /// `threads_active`.
    active: usize,
    /// `thread_pool_query_threads_per_group`.
    query_threads_per_group: usize,
    /// `stalled_threads`.
    stalled: usize,
}

impl CreditInputs {
    fn of(g: &GroupFacts, knobs: &PoolKnobs) -> CreditInputs {
        CreditInputs {
            txnlim: g.transaction_share,
            suspended: g.share_suspended,
            bound: g.bound,
            max_active_query_threads: knobs.max_active_query_threads() as usize,
            active: g.active,
            query_threads_per_group: knobs.query_threads_per_group() as usize,
            stalled: g.stalled,
        }
    }
}

/// MySQL's credit rule on a group's facts and the knobs in force.
pub(super) fn credit_of(group: &GroupFacts, knobs: &PoolKnobs) -> Credit {
    credit(CreditInputs::of(group, knobs))
}

/// MySQL's `is_credit_available`, branch for branch and comparison for comparison (the caller
/// is not counted yet, hence `<=` in the first and third branch), with the refusal's reason:
/// the first branch is admission, the other two the run cap.
fn credit(c: CreditInputs) -> Credit {
    let (ok, refusal) = if c.txnlim > 0 {
        (c.bound <= c.txnlim || c.suspended, Credit::RefuseAdmission)
    } else if c.max_active_query_threads > 0 {
        (c.active < c.max_active_query_threads, Credit::RefuseRunCap)
    } else {
        (
            c.active <= c.query_threads_per_group + c.stalled,
            Credit::RefuseRunCap,
        )
    };
    if ok {
        Credit::Grant
    } else {
        refusal
    }
}

/// MySQL's `is_credit_available` as a yes or no.
#[cfg(all(test, not(loom)))]
fn credit_available(c: CreditInputs) -> bool {
    credit(c).granted()
}

/// The queue an event goes to, as MySQL decides it: high if the transaction is already
/// active, or kick-up is off (timer 0), or the session asked for high priority.
fn is_high_priority(in_transaction: bool, kickup_timer_ms: u32, high: bool) -> bool {
    in_transaction || kickup_timer_ms == 0 || high
}

/// Whether the head of the low queue, queued at `head_since`, is due to move up: it has waited
/// longer than `timer_ms` (timer 0 never kicks up: every event is already high).
fn kick_up_due(head_since: Option<Duration>, now: Duration, timer_ms: u32) -> bool {
    timer_ms > 0
        && head_since
            .is_some_and(|at| now.saturating_sub(at) > Duration::from_millis(u64::from(timer_ms)))
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn inputs() -> impl Strategy<Value = CreditInputs> {
        (
            0usize..6,
            any::<bool>(),
            0usize..10,
            0usize..4,
            0usize..10,
            1usize..4,
            0usize..4,
        )
            .prop_map(|(txnlim, suspended, bound, maqt, active, qtpg, stalled)| {
                CreditInputs {
                    txnlim,
                    suspended,
                    bound,
                    max_active_query_threads: maqt,
                    active,
                    query_threads_per_group: qtpg,
                    stalled,
                }
            })
    }

    proptest! {
        #[test]
        fn credit_branches_in_order(c in inputs()) {
            let got = credit_available(c);
            if c.txnlim > 0 {
                // Branch 1 decides alone: max_active_query_threads is ignored under a limit.
                prop_assert_eq!(got, c.bound <= c.txnlim || c.suspended);
            } else if c.max_active_query_threads > 0 {
                prop_assert_eq!(got, c.active < c.max_active_query_threads);
            } else {
                prop_assert_eq!(got, c.active <= c.query_threads_per_group + c.stalled);
            }
        }

        #[test]
        fn granting_credit_keeps_the_documented_bounds(c in inputs()) {
            // Admitting one more thread when credit says yes never exceeds limit + 1.
            if credit_available(c) {
                if c.txnlim > 0 && !c.suspended {
                    prop_assert!(c.bound < c.txnlim + 1);
                } else if c.txnlim == 0 && c.max_active_query_threads == 0 {
                    prop_assert!(c.active < c.query_threads_per_group + c.stalled + 1);
                }
            }
        }

        #[test]
        fn a_refusal_names_the_branch_that_refused(c in inputs()) {
            match credit(c) {
                Credit::Grant => {}
                Credit::RefuseAdmission => prop_assert!(c.txnlim > 0),
                Credit::RefuseRunCap => prop_assert_eq!(c.txnlim, 0),
            }
        }

        #[test]
        fn the_policy_object_asks_the_same_rule(c in inputs(), high in 0usize..3, low in 0usize..3) {
            let mut cfg = crate::config::PoolConfig::mysql_defaults(2);
            cfg.max_active_query_threads = c.max_active_query_threads as u32;
            cfg.query_threads_per_group = c.query_threads_per_group as u32;
            let knobs = PoolKnobs::new(&cfg);
            let g = GroupFacts {
                now: Duration::ZERO,
                admin: false,
                high_len: high,
                low_len: low,
                high_since: None,
                low_since: None,
                active: c.active,
                bound: c.bound,
                waiting: 0,
                parked: 0,
                stalled: c.stalled,
                transaction_share: c.txnlim,
                share_suspended: c.suspended,
            };
            prop_assert_eq!(Mysql.credit(&g, &knobs), credit(c));
            let want = if high > 0 { Some(Queue::High) } else if low > 0 { Some(Queue::Low) } else { None };
            prop_assert_eq!(Mysql.pick(&g), want);
        }

        #[test]
        fn priority_rule(in_trx: bool, timer in 0u32..3, high: bool) {
            prop_assert_eq!(is_high_priority(in_trx, timer, high), in_trx || timer == 0 || high);
        }

        #[test]
        fn kick_up_only_when_the_head_is_older_than_the_timer(age in proptest::option::of(0u64..3000), timer in 0u32..2000) {
            let now = Duration::from_secs(10);
            let since = age.map(|a| now - Duration::from_millis(a));
            let want = timer > 0 && age.is_some_and(|a| a > u64::from(timer));
            prop_assert_eq!(kick_up_due(since, now, timer), want);
        }
    }

    #[test]
    fn credit_edges_match_mysql() {
        let base = CreditInputs {
            txnlim: 0,
            suspended: false,
            bound: 0,
            max_active_query_threads: 0,
            active: 1,
            query_threads_per_group: 1,
            stalled: 0,
        };
        // `<=`: with one thread active and one allowed, a second may still start.
        assert!(credit_available(base));
        assert!(!credit_available(CreditInputs { active: 2, ..base }));
        assert!(credit_available(CreditInputs {
            active: 2,
            stalled: 1,
            ..base
        }));
        assert!(!credit_available(CreditInputs {
            max_active_query_threads: 1,
            ..base
        }));
        let lim = CreditInputs {
            txnlim: 2,
            bound: 2,
            ..base
        };
        assert!(credit_available(lim));
        assert!(!credit_available(CreditInputs { bound: 3, ..lim }));
        assert!(credit_available(CreditInputs {
            bound: 3,
            suspended: true,
            ..lim
        }));
    }

    #[test]
    fn classify_follows_the_priority_rule() {
        let mut cfg = crate::config::PoolConfig::mysql_defaults(2);
        let knobs = PoolKnobs::new(&cfg);
        let conn = |in_transaction, high_priority| ConnFacts {
            in_transaction,
            high_priority,
            ..ConnFacts::default()
        };
        assert_eq!(Mysql.classify(&conn(false, false), &knobs), Queue::Low);
        assert_eq!(Mysql.classify(&conn(true, false), &knobs), Queue::High);
        assert_eq!(Mysql.classify(&conn(false, true), &knobs), Queue::High);
        cfg.prio_kickup_timer = 0;
        let knobs = PoolKnobs::new(&cfg);
        assert_eq!(Mysql.classify(&conn(false, false), &knobs), Queue::High);
    }
}
