//! `lock-aware`: the idea of CATS (contention-aware transaction scheduling) applied to the
//! thread scheduler — a statement of a connection whose transaction others wait on, or that
//! holds locks (`LOCK TABLES`, an open transaction's row locks), joins the high queue and runs
//! before every other; the rest queue low in arrival order and are kicked up after
//! `thread_pool_prio_kickup_timer`, with MySQL's credit rule.

use super::{mysql, ConnFacts, Credit, GroupFacts, Policy, Queue, TickAction};
use crate::config::PoolKnobs;
use std::time::Duration;

/// Lock holders (and first of all those others wait on) before everyone else.
#[derive(Debug, Clone, Copy, Default)]
pub struct LockAware;

impl Policy for LockAware {
    fn name(&self) -> &'static str {
        "lock-aware"
    }

    fn classify(&self, conn: &ConnFacts, _knobs: &PoolKnobs) -> Queue {
        if conn.blocks_others || conn.holds_locks {
            Queue::High
        } else {
            Queue::Low
        }
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

    fn should_yield(&self, _conn: &ConnFacts, _group: &GroupFacts, _knobs: &PoolKnobs) -> bool {
        false
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;
    use crate::config::PoolConfig;

    #[test]
    fn lock_holders_queue_high_and_a_plain_transaction_low() {
        let k = PoolKnobs::new(&PoolConfig::mysql_defaults(2));
        let c = |in_transaction, holds_locks, blocks_others| ConnFacts {
            in_transaction,
            holds_locks,
            blocks_others,
            ..ConnFacts::default()
        };
        assert_eq!(LockAware.classify(&c(false, false, false), &k), Queue::Low);
        assert_eq!(LockAware.classify(&c(true, false, false), &k), Queue::Low);
        assert_eq!(LockAware.classify(&c(false, true, false), &k), Queue::High);
        assert_eq!(LockAware.classify(&c(true, true, true), &k), Queue::High);
    }
}
