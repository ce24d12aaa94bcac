//! Grant policies (`innodb_lock_schedule_algorithm`): the order in which a queue's waiting
//! locks are considered when a lock is released, and whether a waiter that cannot be granted
//! still holds back the ones behind it. Invariant: a policy only orders; whether a lock may
//! be granted is decided by the compatibility rules alone.

use std::fmt;

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

/// `innodb_lock_schedule_algorithm`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ScheduleAlgorithm {
    /// [`Fcfs`].
    Fcfs,
    /// [`Cats`] (default).
    #[default]
    Cats,
}

impl ScheduleAlgorithm {
    /// The policy object.
    pub fn policy(self) -> &'static dyn GrantPolicy {
        match self {
            ScheduleAlgorithm::Fcfs => &Fcfs,
            ScheduleAlgorithm::Cats => &Cats,
        }
    }

    /// The variable value (`fcfs` or `cats`).
    pub fn as_str(self) -> &'static str {
        self.policy().name()
    }

    /// Parses a variable value (`fcfs`, `cats`, any case).
    pub fn parse(s: &str) -> Option<ScheduleAlgorithm> {
        match s.to_ascii_lowercase().as_str() {
            "fcfs" => Some(ScheduleAlgorithm::Fcfs),
            "cats" => Some(ScheduleAlgorithm::Cats),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn orders() {
        let mk = |pos, seq, weight| Candidate { pos, seq, weight };
        let mut c = vec![mk(2, 7, 1), mk(1, 5, 3), mk(3, 9, 3)];
        Cats.order(&mut c);
        assert_eq!(c.iter().map(|c| c.pos).collect::<Vec<_>>(), vec![1, 3, 2]);
        Fcfs.order(&mut c);
        assert_eq!(c.iter().map(|c| c.pos).collect::<Vec<_>>(), vec![1, 2, 3]);
        assert_eq!(
            ScheduleAlgorithm::parse("CATS"),
            Some(ScheduleAlgorithm::Cats)
        );
        assert_eq!(ScheduleAlgorithm::parse("vats"), None);
        assert_eq!(ScheduleAlgorithm::default().as_str(), "cats");
        assert_eq!(ScheduleAlgorithm::Fcfs.as_str(), "fcfs");
    }
}
