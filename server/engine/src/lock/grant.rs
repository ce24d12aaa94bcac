//! Grant policies (`innodb_lock_schedule_algorithm`): the order in which a queue's waiting
//! locks are considered when a lock is released, and whether a waiter that cannot be granted
//! still holds back the ones behind it. Invariant: a policy only orders; whether a lock may
//! be granted is decided by the compatibility rules alone.

use std::fmt;
use std::time::Instant;

/// A waiting lock as a policy sees it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Candidate {
    /// Position in the queue.
    pub pos: usize,
    /// Arrival order (smaller = waiting longer).
    pub seq: u64,
    /// CATS weight of the owner (how many transactions it transitively blocks, itself
    /// included; 0 until the background thread has computed it).
    pub weight: u64,
    /// When the owner's transaction started (VATS: the eldest first).
    pub started: Instant,
}

/// A grant policy.
pub trait GrantPolicy: Send + Sync + fmt::Debug {
    /// The variable value naming the policy.
    fn name(&self) -> &'static str;
    /// Sorts the candidates into the order they are considered.
    fn order(&self, cands: &mut [Candidate]);
    /// Whether a waiting lock ahead in the queue blocks a conflicting one behind it.
    fn earlier_waiters_block(&self) -> bool;
}

/// First come, first served: queue order; a waiter is granted only if nothing ahead of it
/// (granted or waiting) conflicts (InnoDB before 8.0.20, and its table locks always).
#[derive(Debug, Clone, Copy, Default)]
pub struct Fcfs;

impl GrantPolicy for Fcfs {
    fn name(&self) -> &'static str {
        "fcfs"
    }
    fn order(&self, cands: &mut [Candidate]) {
        cands.sort_by_key(|c| c.pos);
    }
    fn earlier_waiters_block(&self) -> bool {
        true
    }
}

/// Contention-Aware Transaction Scheduling (MySQL 8.0.20+ default): heaviest owner first,
/// ties to the longest waiting; each waiter compatible with what is granted is granted.
#[derive(Debug, Clone, Copy, Default)]
pub struct Cats;

impl GrantPolicy for Cats {
    fn name(&self) -> &'static str {
        "cats"
    }
    fn order(&self, cands: &mut [Candidate]) {
        cands.sort_by(|a, b| b.weight.cmp(&a.weight).then(a.seq.cmp(&b.seq)));
    }
    fn earlier_waiters_block(&self) -> bool {
        false
    }
}

/// Variance-Aware Transaction Scheduling (MariaDB 10.2–10.5's `vats`): the eldest
/// transaction first (the one that started earliest), ties to the longest waiting; each
/// waiter compatible with what is granted is granted.
#[derive(Debug, Clone, Copy, Default)]
pub struct Vats;

impl GrantPolicy for Vats {
    fn name(&self) -> &'static str {
        "vats"
    }
    fn order(&self, cands: &mut [Candidate]) {
        cands.sort_by(|a, b| a.started.cmp(&b.started).then(a.seq.cmp(&b.seq)));
    }
    fn earlier_waiters_block(&self) -> bool {
        false
    }
}

/// `innodb_lock_schedule_algorithm`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ScheduleAlgorithm {
    /// [`Fcfs`].
    Fcfs,
    /// [`Cats`] (default).
    #[default]
    Cats,
    /// [`Vats`].
    Vats,
}

impl ScheduleAlgorithm {
    /// Every algorithm, in the order the variable lists its values.
    pub const ALL: [ScheduleAlgorithm; 3] = [
        ScheduleAlgorithm::Fcfs,
        ScheduleAlgorithm::Cats,
        ScheduleAlgorithm::Vats,
    ];

    /// The variable's values (`fcfs`, `cats`, `vats`).
    pub const NAMES: [&'static str; 3] = ["fcfs", "cats", "vats"];

    /// The policy object.
    pub fn policy(self) -> &'static dyn GrantPolicy {
        match self {
            ScheduleAlgorithm::Fcfs => &Fcfs,
            ScheduleAlgorithm::Cats => &Cats,
            ScheduleAlgorithm::Vats => &Vats,
        }
    }

    /// The variable value (`fcfs`, `cats` or `vats`).
    pub fn as_str(self) -> &'static str {
        self.policy().name()
    }

    /// Parses a variable value (`fcfs`, `cats`, `vats`, any case).
    pub fn parse(s: &str) -> Option<ScheduleAlgorithm> {
        ScheduleAlgorithm::ALL
            .into_iter()
            .find(|a| a.as_str().eq_ignore_ascii_case(s))
    }

    /// Its position in [`ScheduleAlgorithm::ALL`] (how the lock system stores it).
    pub(crate) fn index(self) -> u8 {
        self as u8
    }

    /// The algorithm at `i` in [`ScheduleAlgorithm::ALL`] (CATS, the default, if none).
    pub(crate) fn from_index(i: u8) -> ScheduleAlgorithm {
        ScheduleAlgorithm::ALL
            .get(usize::from(i))
            .copied()
            .unwrap_or_default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn orders() {
        let t0 = Instant::now();
        let mk = |pos, seq, weight| Candidate {
            pos,
            seq,
            weight,
            started: t0,
        };
        let mut c = vec![mk(2, 7, 1), mk(1, 5, 3), mk(3, 9, 3)];
        Cats.order(&mut c);
        assert_eq!(c.iter().map(|c| c.pos).collect::<Vec<_>>(), vec![1, 3, 2]);
        Fcfs.order(&mut c);
        assert_eq!(c.iter().map(|c| c.pos).collect::<Vec<_>>(), vec![1, 2, 3]);
        assert_eq!(
            ScheduleAlgorithm::parse("CATS"),
            Some(ScheduleAlgorithm::Cats)
        );
        assert_eq!(ScheduleAlgorithm::parse("lifo"), None);
        assert_eq!(ScheduleAlgorithm::default().as_str(), "cats");
        assert_eq!(ScheduleAlgorithm::Fcfs.as_str(), "fcfs");
    }

    /// One queue on which the three orders all differ: the first to arrive is the lightest
    /// and youngest, the heaviest arrived second, the eldest transaction arrived last.
    #[test]
    fn vats_orders_by_age_where_fcfs_and_cats_do_not() {
        let t0 = Instant::now();
        let ms = std::time::Duration::from_millis;
        let cands = [
            Candidate {
                pos: 1,
                seq: 5,
                weight: 1,
                started: t0 + ms(20),
            },
            Candidate {
                pos: 2,
                seq: 7,
                weight: 3,
                started: t0 + ms(10),
            },
            Candidate {
                pos: 3,
                seq: 9,
                weight: 2,
                started: t0,
            },
        ];
        let order = |p: &dyn GrantPolicy| {
            let mut c = cands;
            p.order(&mut c);
            c.iter().map(|c| c.pos).collect::<Vec<_>>()
        };
        assert_eq!(order(&Fcfs), vec![1, 2, 3]);
        assert_eq!(order(&Cats), vec![2, 3, 1]);
        assert_eq!(order(&Vats), vec![3, 2, 1]);
        // two waiters of transactions that started together: the longer waiting first
        let mut tie = [
            cands[1],
            Candidate {
                started: t0 + ms(10),
                ..cands[0]
            },
        ];
        Vats.order(&mut tie);
        assert_eq!(tie.map(|c| c.pos), [1, 2]);
        // VATS, like CATS, grants past a waiter that cannot be granted
        assert!(!Vats.earlier_waiters_block());
        for a in ScheduleAlgorithm::ALL {
            assert_eq!(
                ScheduleAlgorithm::parse(&a.as_str().to_uppercase()),
                Some(a)
            );
            assert_eq!(ScheduleAlgorithm::from_index(a.index()), a);
        }
        assert_eq!(
            ScheduleAlgorithm::ALL.map(ScheduleAlgorithm::as_str),
            ScheduleAlgorithm::NAMES
        );
    }
}
