//! Where things go: round-robin group assignment and the `tpbed_thread_pool_pin=group` cpuset.
//! Invariant: group g's cpuset is {c : c mod size = g mod ncores}; over the normal groups these
//! sets cover every core, so every core is still used when size < ncores.

/// Logical CPUs available to this process (at least 1).
pub(crate) fn cpu_count() -> usize {
    std::thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(1)
}

/// The cores group `group` of `size` normal groups may run on, out of `ncores` cores
/// (indices into the core list): {c : c mod size = g mod ncores}. Empty for the Admin group
/// (index `size`) when size < ncores; it then runs unpinned.
pub(crate) fn group_cores(group: usize, size: usize, ncores: usize) -> Vec<usize> {
    if ncores == 0 || size == 0 {
        return Vec::new();
    }
    (0..ncores).filter(|c| c % size == group % ncores).collect()
}

/// Restricts the calling thread to `cores` (indices into `core_affinity::get_core_ids()`).
/// Returns false when the platform refused or the list is empty.
pub(crate) fn pin_current_thread(cores: &[usize]) -> bool {
    let Some(ids) = core_affinity::get_core_ids() else {
        return false;
    };
    let chosen: Vec<usize> = cores
        .iter()
        .filter_map(|&i| ids.get(i).map(|c| c.id))
        .collect();
    match chosen.as_slice() {
        [] => false,
        [one] => core_affinity::set_for_current(core_affinity::CoreId { id: *one }),
        many => {
            // core_affinity pins to a single core; a multi-core cpuset needs the raw call.
            // SAFETY: cpu_set_t is plain data, zeroed is its empty set, and CPU_SET only
            // writes inside it for ids below CPU_SETSIZE (checked).
            unsafe {
                let mut set: libc::cpu_set_t = std::mem::zeroed();
                for &id in many {
                    if id < libc::CPU_SETSIZE as usize {
                        libc::CPU_SET(id, &mut set);
                    }
                }
                libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set) == 0
            }
        }
    }
}

/// Round-robin choice of the next normal group, as MySQL's `next = (next + 1) % size`.
#[derive(Debug, Default)]
pub(crate) struct RoundRobin {
    next: std::sync::atomic::AtomicUsize,
}

impl RoundRobin {
    /// The group for the next connection.
    pub(crate) fn next(&self, size: usize) -> usize {
        self.next.fetch_add(1, std::sync::atomic::Ordering::Relaxed) % size.max(1)
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    #[test]
    fn every_core_used_when_fewer_groups_than_cores() {
        let size = 3;
        let ncores = 8;
        let mut seen = vec![false; ncores];
        for g in 0..size {
            for c in group_cores(g, size, ncores) {
                assert_eq!(c % size, g % ncores);
                seen[c] = true;
            }
        }
        assert!(seen.iter().all(|s| *s));
    }

    #[test]
    fn more_groups_than_cores_share_cores() {
        assert_eq!(group_cores(0, 4, 2), vec![0]);
        assert_eq!(group_cores(3, 4, 2), vec![1]);
        assert_eq!(group_cores(4, 4, 2), vec![0]);
    }
}
