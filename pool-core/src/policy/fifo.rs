//! `fifo`: one queue in arrival order — no priority classes, no kick-up — with MySQL's credit
//! rule, so that the queueing discipline is the only difference from `mysql`.

use super::{mysql, ConnFacts, Credit, GroupFacts, Policy, Queue, TickAction};
use crate::config::PoolKnobs;
use std::time::Duration;

/// First come, first served: every event joins the low queue and threads take its head.
#[derive(Debug, Clone, Copy, Default)]
pub struct Fifo;

impl Policy for Fifo {
    fn name(&self) -> &'static str {
        "fifo"
    }

    fn classify(&self, _conn: &ConnFacts, _knobs: &PoolKnobs) -> Queue {
        Queue::Low
    }

    fn pick(&self, group: &GroupFacts) -> Option<Queue> {
        (group.low_len > 0).then_some(Queue::Low)
    }

    fn credit(&self, group: &GroupFacts, knobs: &PoolKnobs) -> Credit {
        mysql::credit_of(group, knobs)
    }

    fn tick(&self, _group: &GroupFacts, _knobs: &PoolKnobs, _now: Duration) -> TickAction {
        TickAction::default()
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
    fn every_event_joins_one_queue_and_nothing_moves_up() {
        let mut cfg = PoolConfig::mysql_defaults(2);
        cfg.prio_kickup_timer = 1;
        let knobs = PoolKnobs::new(&cfg);
        for (in_transaction, high_priority) in [(false, false), (true, false), (false, true)] {
            let conn = ConnFacts {
                in_transaction,
                high_priority,
                ..ConnFacts::default()
            };
            assert_eq!(Fifo.classify(&conn, &knobs), Queue::Low);
        }
        let g = GroupFacts {
            now: Duration::ZERO,
            admin: false,
            high_len: 0,
            low_len: 2,
            high_since: None,
            low_since: Some(Duration::ZERO),
            active: 0,
            bound: 0,
            waiting: 0,
            parked: 0,
            stalled: 0,
            transaction_share: 0,
            share_suspended: false,
        };
        assert_eq!(Fifo.pick(&g), Some(Queue::Low));
        assert!(!Fifo.tick(&g, &knobs, Duration::from_secs(60)).kick_up);
        assert_eq!(Fifo.pick(&GroupFacts { low_len: 0, ..g }), None);
    }
}
