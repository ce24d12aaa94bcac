//! `mariadb`: the decisions of MariaDB 10.11's thread pool — the queue by the session's
//! `thread_pool_priority` (auto: high inside a transaction), high before low, the
//! oversubscribe rule (a group runs up to `1 + thread_pool_oversubscribe` statements, more once
//! it stalls) and the kick-up of low-priority events older than
//! `thread_pool_prio_kickup_timer`.
//!
//! MariaDB's stall rule looks at the whole group: when no queued event was taken during a stall
//! limit, the group is stalled and may start one more. The pool's facts give the same signal
//! as the age of the oldest queued event: older than the stall limit means nothing was taken
//! for that long. The limit is `thread_pool_stall_limit` in tpbed's (MySQL's) unit of 10 ms;
//! MariaDB counts it in ms with a default of 500 (set `thread_pool_stall_limit=50`).
//!
//! MariaDB has no transaction limit and no active-thread cap: when tpbed's
//! `thread_pool_max_transactions_limit` or `thread_pool_max_active_query_threads` is set, it is
//! applied as MySQL applies it (set both to 0 to compare with MariaDB).

use super::{mysql, ConnFacts, Credit, GroupFacts, Policy, Queue, SessionPriority, TickAction};
use crate::config::PoolKnobs;
use std::time::Duration;

/// MariaDB 10.11's thread pool.
#[derive(Debug, Clone, Copy, Default)]
pub struct Mariadb;

impl Policy for Mariadb {
    fn name(&self) -> &'static str {
        "mariadb"
    }

    fn classify(&self, conn: &ConnFacts, _knobs: &PoolKnobs) -> Queue {
        match conn.priority {
            SessionPriority::High => Queue::High,
            SessionPriority::Low => Queue::Low,
            SessionPriority::Auto if conn.in_transaction => Queue::High,
            SessionPriority::Auto => Queue::Low,
        }
    }

    fn pick(&self, group: &GroupFacts) -> Option<Queue> {
        mysql::Mysql.pick(group)
    }

    fn credit(&self, group: &GroupFacts, knobs: &PoolKnobs) -> Credit {
        if group.transaction_share > 0 || knobs.max_active_query_threads() > 0 {
            return mysql::credit_of(group, knobs);
        }
        let stall = Duration::from_millis(10 * u64::from(knobs.stall_limit()));
        if oversubscribe_allows(group.active, knobs.oversubscribe()) || stalled(group, stall) {
            Credit::Grant
        } else {
            Credit::RefuseRunCap
        }
    }

    fn tick(&self, group: &GroupFacts, knobs: &PoolKnobs, now: Duration) -> TickAction {
        let timer = Duration::from_millis(u64::from(knobs.prio_kickup_timer()));
        TickAction {
            kick_up: group.age(Queue::Low, now).is_some_and(|age| age > timer),
        }
    }

    fn should_yield(&self, _conn: &ConnFacts, _group: &GroupFacts, _knobs: &PoolKnobs) -> bool {
        false
    }
}

/// MariaDB's `too_many_threads` negated: one more may start while fewer than
/// `1 + oversubscribe` run (the caller is not counted yet).
fn oversubscribe_allows(active: usize, oversubscribe: u32) -> bool {
    active < 1 + oversubscribe as usize
}

/// The group is stalled: an event has waited in a queue longer than the stall limit.
fn stalled(g: &GroupFacts, stall: Duration) -> bool {
    [Queue::High, Queue::Low]
        .into_iter()
        .filter_map(|q| g.age(q, g.now))
        .any(|age| age > stall)
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;
    use crate::config::PoolConfig;

    fn knobs(edit: impl FnOnce(&mut PoolConfig)) -> PoolKnobs {
        let mut c = PoolConfig::mysql_defaults(2);
        c.max_transactions_limit = 0;
        edit(&mut c);
        PoolKnobs::new(&c)
    }

    fn group(active: usize) -> GroupFacts {
        GroupFacts {
            now: Duration::from_secs(10),
            low_len: 1,
            low_since: Some(Duration::from_secs(10)),
            active,
            bound: active,
            ..GroupFacts::default()
        }
    }

    #[test]
    fn the_session_priority_picks_the_queue() {
        let k = knobs(|_| {});
        let c = |priority, in_transaction| ConnFacts {
            priority,
            in_transaction,
            high_priority: true,
            ..ConnFacts::default()
        };
        assert_eq!(
            Mariadb.classify(&c(SessionPriority::Auto, false), &k),
            Queue::Low
        );
        assert_eq!(
            Mariadb.classify(&c(SessionPriority::Auto, true), &k),
            Queue::High
        );
        assert_eq!(
            Mariadb.classify(&c(SessionPriority::High, false), &k),
            Queue::High
        );
        assert_eq!(
            Mariadb.classify(&c(SessionPriority::Low, true), &k),
            Queue::Low
        );
    }

    #[test]
    fn oversubscribe_caps_the_group_until_it_stalls() {
        let k = knobs(|c| c.oversubscribe = 3);
        assert_eq!(Mariadb.credit(&group(3), &k), Credit::Grant);
        assert_eq!(Mariadb.credit(&group(4), &k), Credit::RefuseRunCap);
        // The oldest event has waited longer than the stall limit (60 ms): one more may start.
        let old = GroupFacts {
            low_since: Some(Duration::from_millis(9_930)),
            ..group(4)
        };
        assert_eq!(Mariadb.credit(&old, &k), Credit::Grant);
        let k1 = knobs(|c| c.oversubscribe = 1);
        assert_eq!(Mariadb.credit(&group(1), &k1), Credit::Grant);
        assert_eq!(Mariadb.credit(&group(2), &k1), Credit::RefuseRunCap);
    }

    #[test]
    fn mysql_caps_apply_when_set() {
        let k = knobs(|c| c.max_active_query_threads = 1);
        assert_eq!(Mariadb.credit(&group(1), &k), Credit::RefuseRunCap);
        let limited = GroupFacts {
            transaction_share: 1,
            bound: 2,
            ..group(0)
        };
        assert_eq!(
            Mariadb.credit(&limited, &knobs(|_| {})),
            Credit::RefuseAdmission
        );
    }

    #[test]
    fn kick_up_after_the_timer() {
        let k = knobs(|c| c.prio_kickup_timer = 100);
        let g = group(0);
        assert!(
            !Mariadb
                .tick(&g, &k, g.now + Duration::from_millis(100))
                .kick_up
        );
        assert!(
            Mariadb
                .tick(&g, &k, g.now + Duration::from_millis(101))
                .kick_up
        );
    }
}
