//! `time-slice`: `mysql`'s decisions plus a quantum — a statement that has run
//! `tpbed_thread_pool_time_slice` ms since it started or last resumed is asked to yield at its
//! next safe point (Concord's cooperative model: threads are never preempted). A yielded
//! statement keeps its locks and its thread, gives its credit up, and resumes behind the
//! events that were queued before it yielded. Statements others wait on and Admin-group
//! statements are never asked to yield.

use super::{mysql, ConnFacts, Credit, GroupFacts, Policy, Queue, TickAction};
use crate::config::PoolKnobs;
use std::time::Duration;

/// MySQL's pool with a time slice.
#[derive(Debug, Clone, Copy, Default)]
pub struct TimeSlice;

impl Policy for TimeSlice {
    fn name(&self) -> &'static str {
        "time-slice"
    }

    fn classify(&self, conn: &ConnFacts, knobs: &PoolKnobs) -> Queue {
        mysql::Mysql.classify(conn, knobs)
    }

    fn pick(&self, group: &GroupFacts) -> Option<Queue> {
        mysql::Mysql.pick(group)
    }

    fn credit(&self, group: &GroupFacts, knobs: &PoolKnobs) -> Credit {
        mysql::credit_of(group, knobs)
    }

    fn tick(&self, group: &GroupFacts, knobs: &PoolKnobs, now: Duration) -> TickAction {
        mysql::Mysql.tick(group, knobs, now)
    }

    fn should_yield(&self, conn: &ConnFacts, _group: &GroupFacts, knobs: &PoolKnobs) -> bool {
        !conn.admin
            && !conn.blocks_others
            && conn.ran_for >= Duration::from_millis(u64::from(knobs.time_slice()))
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;
    use crate::config::PoolConfig;

    #[test]
    fn yields_after_the_quantum_unless_others_wait_on_it() {
        let mut c = PoolConfig::mysql_defaults(2);
        c.time_slice = 20;
        let k = PoolKnobs::new(&c);
        let g = GroupFacts {
            now: Duration::ZERO,
            admin: false,
            high_len: 0,
            low_len: 0,
            high_since: None,
            low_since: None,
            active: 1,
            bound: 1,
            waiting: 0,
            parked: 0,
            stalled: 0,
            transaction_share: 0,
            share_suspended: false,
        };
        let ran = |ms| ConnFacts {
            ran_for: Duration::from_millis(ms),
            ..ConnFacts::default()
        };
        assert!(!TimeSlice.should_yield(&ran(19), &g, &k));
        assert!(TimeSlice.should_yield(&ran(20), &g, &k));
        let blocker = ConnFacts {
            blocks_others: true,
            ..ran(500)
        };
        assert!(!TimeSlice.should_yield(&blocker, &g, &k));
        let admin = ConnFacts {
            admin: true,
            ..ran(500)
        };
        assert!(!TimeSlice.should_yield(&admin, &g, &k));
        assert!(!mysql::Mysql.should_yield(&ran(500), &g, &k));
    }
}
