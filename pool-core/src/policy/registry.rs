//! The registered policies: one line per policy, first the default. Invariant: names are
//! unique, lowercase, and what `tpbed_thread_pool_policy` accepts.

use super::{Fifo, LockAware, Mariadb, Mysql, Policy, ShortFirst, TimeSlice};

/// A registered policy: the stateless object the pool consults.
pub type Registration = &'static dyn Policy;

/// Every policy the pool can run, the default (`mysql`) first.
pub static REGISTRY: &[Registration] = &[
    &Mysql,      // MySQL's thread-pool plugin, decision for decision (the default)
    &Fifo,       // one queue in arrival order, MySQL's credit rule
    &Mariadb,    // MariaDB 10.11's pool: session priority, oversubscribe, group stall rule
    &ShortFirst, // DARC: short statement classes first, a run slot kept for them
    &LockAware,  // statements of lock holders and of transactions others wait on first
    &TimeSlice,  // mysql plus a cooperative yield after a quantum
];

/// The registered names, in registry order.
pub fn names() -> impl Iterator<Item = &'static str> {
    REGISTRY.iter().map(|p| p.name())
}

/// The policy registered under `name` (any case).
pub fn by_name(name: &str) -> Option<Registration> {
    REGISTRY
        .iter()
        .copied()
        .find(|p| p.name().eq_ignore_ascii_case(name))
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    #[test]
    fn names_are_unique_lowercase_and_found() {
        let all: Vec<&str> = names().collect();
        assert_eq!(all.first(), Some(&"mysql"), "the default comes first");
        for (i, n) in all.iter().enumerate() {
            assert_eq!(*n, n.to_ascii_lowercase());
            assert!(!all[..i].contains(n), "{n} registered twice");
            assert_eq!(by_name(&n.to_ascii_uppercase()).map(|p| p.name()), Some(*n));
        }
        assert!(by_name("no-such-policy").is_none());
    }
}
