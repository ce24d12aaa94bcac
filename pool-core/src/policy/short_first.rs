//! `short-first`: DARC (Perséphone, SOSP'21) on the thread pool — statements are sorted by
//! class (command, statement kind and digest) with the pool's running estimate of each class's
//! service time: short classes (and open transactions and lock holders) join the high queue,
//! long ones the low queue, and the last run slot MySQL's credit rule gives a group is kept
//! for short statements: a long one may not take it while another statement runs.
//!
//! A class is short while its estimate is at most a tenth of the stall limit (6 ms at the
//! default `thread_pool_stall_limit` of 6), and while it has no estimate yet. A long statement
//! waits at most `thread_pool_prio_kickup_timer` in the low queue before it is moved up, as in
//! `mysql`, so reserving a slot never leaves it queued for ever.

use super::{mysql, ConnFacts, Credit, GroupFacts, Policy, Queue, TickAction};
use crate::config::PoolKnobs;
use std::time::Duration;

/// Short classes first, with a run slot reserved for them.
#[derive(Debug, Clone, Copy, Default)]
pub struct ShortFirst;

impl Policy for ShortFirst {
    fn name(&self) -> &'static str {
        "short-first"
    }

    fn classify(&self, conn: &ConnFacts, knobs: &PoolKnobs) -> Queue {
        if conn.in_transaction || conn.holds_locks || is_short(conn, knobs) {
            Queue::High
        } else {
            Queue::Low
        }
    }

    fn pick(&self, group: &GroupFacts) -> Option<Queue> {
        mysql::Mysql.pick(group)
    }

    fn credit(&self, group: &GroupFacts, knobs: &PoolKnobs) -> Credit {
        let credit = mysql::credit_of(group, knobs);
        if !credit.granted() || group.high_len > 0 || group.low_len == 0 || group.active == 0 {
            return credit;
        }
        // Only long statements wait and one runs: keep the group's last slot for a short one
        // (an idle group takes a long one, so a reserved slot never idles a whole group).
        let after = GroupFacts {
            active: group.active + 1,
            bound: group.bound + 1,
            ..*group
        };
        match mysql::credit_of(&after, knobs) {
            Credit::Grant => Credit::Grant,
            refused => refused,
        }
    }

    fn tick(&self, group: &GroupFacts, knobs: &PoolKnobs, now: Duration) -> TickAction {
        let timer = knobs.prio_kickup_timer();
        TickAction {
            kick_up: timer > 0
                && group
                    .age(Queue::Low, now)
                    .is_some_and(|age| age > Duration::from_millis(u64::from(timer))),
        }
    }

    fn should_yield(&self, _conn: &ConnFacts, _group: &GroupFacts, _knobs: &PoolKnobs) -> bool {
        false
    }

    fn wants_statement_class(&self) -> bool {
        true
    }
}

/// The longest estimate a short class may have: a tenth of the stall limit.
fn short_limit(knobs: &PoolKnobs) -> Duration {
    Duration::from_millis(u64::from(knobs.stall_limit()))
}

/// Whether `conn`'s next statement belongs to a short class (unmeasured classes are short).
fn is_short(conn: &ConnFacts, knobs: &PoolKnobs) -> bool {
    conn.service_estimate
        .is_none_or(|e| e <= short_limit(knobs))
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;
    use crate::config::PoolConfig;

    fn knobs() -> PoolKnobs {
        let mut c = PoolConfig::mysql_defaults(2);
        c.max_transactions_limit = 0;
        c.query_threads_per_group = 1;
        PoolKnobs::new(&c)
    }

    fn group(active: usize, high_len: usize, low_len: usize) -> GroupFacts {
        GroupFacts {
            high_len,
            low_len,
            active,
            bound: active,
            ..GroupFacts::default()
        }
    }

    #[test]
    fn long_classes_queue_low_and_unmeasured_ones_high() {
        let k = knobs();
        let with = |est: Option<u64>| ConnFacts {
            service_estimate: est.map(Duration::from_micros),
            ..ConnFacts::default()
        };
        assert_eq!(ShortFirst.classify(&with(None), &k), Queue::High);
        assert_eq!(ShortFirst.classify(&with(Some(200)), &k), Queue::High);
        assert_eq!(ShortFirst.classify(&with(Some(6_000)), &k), Queue::High);
        assert_eq!(ShortFirst.classify(&with(Some(6_001)), &k), Queue::Low);
        let holder = ConnFacts {
            holds_locks: true,
            ..with(Some(50_000))
        };
        assert_eq!(ShortFirst.classify(&holder, &k), Queue::High);
        assert!(ShortFirst.wants_statement_class());
    }

    #[test]
    fn the_last_slot_is_kept_for_short_statements() {
        let k = knobs();
        // MySQL's rule (one query thread per group) lets a second start while one runs.
        assert_eq!(mysql::credit_of(&group(1, 0, 1), &k), Credit::Grant);
        assert_eq!(ShortFirst.credit(&group(0, 0, 1), &k), Credit::Grant);
        assert_eq!(ShortFirst.credit(&group(1, 0, 1), &k), Credit::RefuseRunCap);
        assert_eq!(ShortFirst.credit(&group(1, 1, 1), &k), Credit::Grant);
        assert_eq!(ShortFirst.credit(&group(2, 1, 0), &k), Credit::RefuseRunCap);
        // With a single slot (max_active_query_threads = 1) an idle group takes a long one.
        let mut c = PoolConfig::mysql_defaults(2);
        c.max_transactions_limit = 0;
        c.max_active_query_threads = 1;
        assert_eq!(
            ShortFirst.credit(&group(0, 0, 1), &PoolKnobs::new(&c)),
            Credit::Grant
        );
    }
}
