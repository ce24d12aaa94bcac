//! The memory budget: how many heap bytes the server may hold before a statement that would
//! add more is refused, so a large value or a full store fails one statement with MySQL's
//! error instead of ending the process when an allocation fails.
//!
//! The limit is the smaller of `tpbed_max_memory` (0: none) and a ceiling derived at start-up
//! from the address-space limit (`RLIMIT_AS`, as `ulimit -v` or `prlimit --as` set it): the
//! heap already in use plus half the address space not yet mapped. The other half is left for
//! what the allocator count does not see (thread stacks, malloc arenas' reserved space,
//! fragmentation) and for the small allocations no check guards.
//!
//! What is checked against it: a write's row bytes before the store grows (1114, "The table
//! '%s' is full"), and a value of `CHECKED_VALUE` bytes or more before a statement builds
//! or copies it (1037). A statement's values may pass the limit by an eighth
//! (`VALUE_SLACK_DIVISOR`), and smaller values are not checked, so once writes have filled
//! the store to the limit, reads, deletes and updates of a few rows still go on.

use std::sync::atomic::{AtomicU64, Ordering::Relaxed};

use crate::error::{ErrorCode, SqlError, SqlResult};
use crate::memory::alloc::in_use;

/// Values shorter than this are built without a budget check (1 MiB: a value this small
/// cannot take a server near its limit, and checking every short string would cost a shared
/// atomic load each).
pub(crate) const CHECKED_VALUE: usize = 1 << 20;

/// A statement's values may take the server past its limit by `1 / VALUE_SLACK_DIVISOR` of
/// it, room that writes cannot fill.
const VALUE_SLACK_DIVISOR: u64 = 8;

/// Share of the free address space at start-up the heap may fill: 1/2, leaving the rest to
/// thread stacks and malloc's reserved arenas (64 MiB each, up to 8 per core with glibc).
const ADDRESS_SPACE_SHARE_DIVISOR: u64 = 2;

/// The server's memory limit and the checks against it.
#[derive(Debug)]
pub struct MemoryBudget {
    /// `tpbed_max_memory` in bytes; 0 is no limit.
    max_memory: AtomicU64,
    /// The ceiling the address-space limit implies; `u64::MAX` when the process has none.
    address_space: u64,
}

impl Default for MemoryBudget {
    fn default() -> Self {
        MemoryBudget::new(None)
    }
}

impl MemoryBudget {
    /// A budget with the address-space ceiling `address_space` (None: no such ceiling) and no
    /// `tpbed_max_memory`.
    pub fn new(address_space: Option<u64>) -> MemoryBudget {
        MemoryBudget {
            max_memory: AtomicU64::new(0),
            address_space: address_space.unwrap_or(u64::MAX),
        }
    }

    /// A budget whose address-space ceiling is read from this process's `RLIMIT_AS` and
    /// mapped size now (call it once at start-up, before the connection handler starts).
    pub fn from_process() -> MemoryBudget {
        MemoryBudget::new(address_space_ceiling())
    }

    /// Sets `tpbed_max_memory` (0: no limit).
    pub fn set_max_memory(&self, bytes: u64) {
        self.max_memory.store(bytes, Relaxed);
    }

    /// `tpbed_max_memory` as the budget holds it (0: no limit).
    pub fn max_memory(&self) -> u64 {
        self.max_memory.load(Relaxed)
    }

    /// The limit in force: the smaller of `tpbed_max_memory` and the address-space
    /// ceiling; None when neither applies.
    pub fn limit(&self) -> Option<u64> {
        let max = match self.max_memory.load(Relaxed) {
            0 => u64::MAX,
            n => n,
        };
        let l = max.min(self.address_space);
        (l != u64::MAX).then_some(l)
    }

    /// The address-space ceiling derived at start-up, if the process has one.
    pub fn address_space_ceiling(&self) -> Option<u64> {
        (self.address_space != u64::MAX).then_some(self.address_space)
    }

    /// Whether `bytes` more fit under the limit (plus `1 / slack_divisor` of it when given)
    /// with `used` bytes held.
    fn fits(&self, used: u64, bytes: usize, slack_divisor: Option<u64>) -> bool {
        self.limit().is_none_or(|l| {
            let ceiling = l.saturating_add(slack_divisor.map_or(0, |d| l / d));
            used.saturating_add(bytes as u64) <= ceiling
        })
    }

    /// Room for a value of `bytes` a statement is about to build or copy: 1037 when it would
    /// take the server past its limit and the slack values have. Values under
    /// `CHECKED_VALUE` always pass.
    pub fn reserve_value(&self, bytes: usize) -> SqlResult<()> {
        let slack = Some(VALUE_SLACK_DIVISOR);
        if bytes < CHECKED_VALUE || self.fits(in_use() as u64, bytes, slack) {
            return Ok(());
        }
        Err(out_of_memory(bytes))
    }

    /// Room for a row of `bytes` that a write adds to `table`: 1114 ("The table '...' is
    /// full") when the store would take the server past its limit.
    pub fn reserve_row(&self, bytes: usize, table: &str) -> SqlResult<()> {
        if self.fits(in_use() as u64, bytes, None) {
            return Ok(());
        }
        Err(SqlError::new(
            ErrorCode::RecordFileFull,
            format!("The table '{table}' is full"),
        ))
    }
}

/// MySQL's 1037 for an allocation of `bytes` that was refused.
pub(crate) fn out_of_memory(bytes: usize) -> SqlError {
    SqlError::new(
        ErrorCode::OutOfMemory,
        format!("Out of memory; restart server and try again (needed {bytes} bytes)"),
    )
}

/// The heap this process may reach under its address-space limit: what it holds now plus
/// `ADDRESS_SPACE_SHARE_DIVISOR`'s share of the address space not yet mapped. None when
/// `RLIMIT_AS` is unlimited (or cannot be read).
fn address_space_ceiling() -> Option<u64> {
    let mut lim = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit writes the limit into the struct we own.
    if unsafe { libc::getrlimit(libc::RLIMIT_AS, &mut lim) } != 0
        || lim.rlim_cur == libc::RLIM_INFINITY
    {
        return None;
    }
    let mapped = mapped_bytes().unwrap_or(0);
    Some(ceiling_for(lim.rlim_cur, mapped, in_use() as u64))
}

/// The ceiling for an address-space limit `limit` with `mapped` bytes mapped and `heap` of
/// them counted as heap.
fn ceiling_for(limit: u64, mapped: u64, heap: u64) -> u64 {
    heap.saturating_add(limit.saturating_sub(mapped) / ADDRESS_SPACE_SHARE_DIVISOR)
}

/// The process's mapped size (`VmSize` of /proc/self/status), in bytes.
fn mapped_bytes() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let kib = status
        .lines()
        .find_map(|l| l.strip_prefix("VmSize:"))?
        .split_whitespace()
        .next()?
        .parse::<u64>()
        .ok()?;
    Some(kib * 1024)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_limit_is_the_smaller_of_the_variable_and_the_address_space_ceiling() {
        let b = MemoryBudget::new(None);
        assert_eq!(b.limit(), None);
        b.set_max_memory(1 << 30);
        assert_eq!(b.limit(), Some(1 << 30));
        let b = MemoryBudget::new(Some(1 << 29));
        assert_eq!(b.limit(), Some(1 << 29));
        b.set_max_memory(1 << 30);
        assert_eq!(b.limit(), Some(1 << 29));
        b.set_max_memory(1 << 20);
        assert_eq!(b.limit(), Some(1 << 20));
        b.set_max_memory(0);
        assert_eq!(b.limit(), Some(1 << 29));
    }

    #[test]
    fn rows_past_the_limit_are_1114_and_large_values_1037() {
        // The counting allocator is not installed in unit tests: 0 bytes are in use, except
        // while the allocator's own test calls it directly.
        let _alone = crate::memory::alloc::COUNT_IN_TEST
            .lock()
            .unwrap_or_else(|e| e.into_inner());
        let b = MemoryBudget::new(None);
        b.set_max_memory(4 << 20);
        assert!(b.reserve_row(4 << 20, "t").is_ok());
        let e = b.reserve_row((4 << 20) + 1, "t").unwrap_err();
        assert_eq!(e.code, ErrorCode::RecordFileFull);
        assert_eq!(e.message, "The table 't' is full");
        // Values may pass the limit by an eighth of it.
        assert!(b.reserve_value((4 << 20) + (512 << 10)).is_ok());
        let e = b.reserve_value(5 << 20).unwrap_err();
        assert_eq!(e.code, ErrorCode::OutOfMemory);
        assert!(
            e.message.ends_with("(needed 5242880 bytes)"),
            "{}",
            e.message
        );
        // Small values are never refused, even past the limit.
        b.set_max_memory(1);
        assert!(b.reserve_value(CHECKED_VALUE - 1).is_ok());
    }

    #[test]
    fn the_address_space_ceiling_leaves_half_the_unmapped_space() {
        assert_eq!(
            ceiling_for(3 << 30, 1 << 30, 100 << 20),
            (100 << 20) + (1 << 30)
        );
        assert_eq!(ceiling_for(1 << 30, 2 << 30, 5), 5);
        assert!(mapped_bytes().is_some_and(|m| m > 0));
    }
}
