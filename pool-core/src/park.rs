//! Thread life cycle: creation (§1.7's limits and throttle), sleeping as consumer, reserve or
//! connection handler, waking, retirement and exit.
//!
//! # Park protocol (no lost wake-up)
//!
//! 1. A sleeper, holding the group mutex, pushes its number on a sleeper list, clears its
//!    `woken` flag and waits on its own condvar (which releases the mutex atomically).
//! 2. A waker, holding the same mutex, pops a number from a sleeper list, sets that thread's
//!    `woken` and notifies its condvar, under the mutex or (`take_consumer`) right after
//!    releasing it. A thread is on a list only between 1 and 3, so a pop always finds a thread
//!    that will see the flag; a notification that arrives after the sleeper has left costs it
//!    at most one spurious wake-up in a later sleep, which step 3 absorbs.
//! 3. The sleeper wakes (or wakes spuriously), re-checks `woken || shutdown` under the mutex
//!    and waits again if neither holds; on `shutdown` it removes itself from the list.
//!
//! Invariant: a thread number is on at most one sleeper list, and only while it sleeps.

use crate::group::{GroupState, ThreadInfo};
use crate::pool::{Guard, Shared};
use crate::session::Session;
use crate::stats::{ThreadKind, ThreadState};
use crate::sync::{lock, thread, wait, wait_timeout, Arc, Condvar};
use std::sync::atomic::Ordering;
use std::time::Duration;

/// Most threads a group may have (MySQL's 4096 thread slots).
pub(crate) const MAX_THREADS_PER_GROUP: usize = 4096;
/// An extra connection handler exits after this long idle (MySQL: 60 s).
pub(crate) const CH_IDLE_EXIT: Duration = Duration::from_secs(60);
/// Thread creation gaps when the group is busy and threads are plentiful, as MySQL codes
/// them (compared against a microsecond clock; threadpool.md §1.7 notes ms may be meant).
const CREATE_GAP_FEW: Duration = Duration::from_micros(50);
const CREATE_GAP_MANY: Duration = Duration::from_micros(100);

/// What a thread does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Role {
    Query,
    Listener,
    ConnHandler { permanent: bool },
}

/// How hard `wake` tries (MySQL's WAKE_IF_CREATED, WAKE_OR_CREATE_ONE; its WAKE_CONSUMER,
/// a hot sleeper only, is `take_consumer`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum WakeLevel {
    /// A consumer, else a reserve sleeper; never creates.
    IfCreated,
    /// A consumer, else a reserve, else create a query thread within §1.7's limits.
    OrCreate,
}

/// Marks sleeper `t` woken and signals it (park protocol step 2).
pub(crate) fn unpark<S>(st: &mut GroupState<S>, t: usize) {
    let ti = st.thread(t);
    ti.woken = true;
    ti.parker.notify_one();
}

/// Marks the most recent consumer sleeper woken (park protocol step 2) and returns its
/// condvar, for the caller to notify once it has released the group mutex, so that the woken
/// thread does not run into a mutex its waker still holds. The caller must notify it on every
/// path: the flag alone does not end the sleeper's wait.
pub(crate) fn take_consumer<S>(st: &mut GroupState<S>) -> Option<Arc<Condvar>> {
    let t = st.consumers.pop()?;
    let ti = st.thread(t);
    ti.woken = true;
    Some(ti.parker.clone())
}

/// Wakes one query thread of group `g` at `level`; true when one was woken or created.
pub(crate) fn wake<S: Session>(
    sh: &Arc<Shared<S>>,
    g: usize,
    st: &mut GroupState<S>,
    level: WakeLevel,
) -> bool {
    if let Some(t) = st.consumers.pop() {
        unpark(st, t);
        return true;
    }
    if let Some(t) = st.reserves.pop() {
        unpark(st, t);
        return true;
    }
    level == WakeLevel::OrCreate && create_query_thread(sh, g, st)
}

/// Creates a query thread unless §1.7 forbids it: more than 1 + connections threads, 4096
/// threads, the transaction cap `share + 1` (unless suspended), or the creation throttle.
pub(crate) fn create_query_thread<S: Session>(
    sh: &Arc<Shared<S>>,
    g: usize,
    st: &mut GroupState<S>,
) -> bool {
    if st.shutdown
        || st.query_threads > 1 + st.connections
        || st.query_threads >= MAX_THREADS_PER_GROUP
    {
        return false;
    }
    let share = sh.group_share(g);
    if share > 0 && st.longrun.suspended_stamp.is_none() && st.query_threads > share {
        return false;
    }
    let total = sh.total_query_threads.load(Ordering::Relaxed);
    if st.active > 0 && total >= 3 * sh.ncpu {
        let gap = if total < 5 * sh.ncpu {
            CREATE_GAP_FEW
        } else {
            CREATE_GAP_MANY
        };
        let now = sh.clock.now();
        if st
            .last_creation
            .is_some_and(|last| now.saturating_sub(last) < gap)
        {
            return false;
        }
    }
    spawn(sh, g, st, Role::Query)
}

/// Starts a thread of `role` in group `g`; false when refused (shutdown) or the OS failed.
pub(crate) fn spawn<S: Session>(
    sh: &Arc<Shared<S>>,
    g: usize,
    st: &mut GroupState<S>,
    role: Role,
) -> bool {
    if st.shutdown {
        return false;
    }
    let kind = match role {
        Role::Query => ThreadKind::QueryWorker,
        Role::Listener => ThreadKind::Listener,
        Role::ConnHandler { .. } => ThreadKind::ConnectionHandler,
    };
    let info = ThreadInfo::new(kind);
    let me = match st.threads.iter().position(Option::is_none) {
        Some(i) => {
            st.threads[i] = Some(info);
            i
        }
        None => {
            st.threads.push(Some(info));
            st.threads.len() - 1
        }
    };
    let mut handles = lock(&sh.handles);
    handles.reap();
    let serial = handles.next_serial();
    let sh2 = sh.clone();
    let name = match role {
        Role::Query => format!("tp{g}-q{me}"),
        Role::Listener => format!("tp{g}-l{me}"),
        Role::ConnHandler { .. } => format!("tp{g}-ch{me}"),
    };
    match thread::Builder::new()
        .name(name)
        .stack_size(crate::session::SESSION_THREAD_STACK)
        .spawn(move || thread_main(sh2, g, me, role, serial))
    {
        Ok(h) => {
            handles.push(serial, h);
            drop(handles);
            match role {
                Role::Query => {
                    st.query_threads += 1;
                    sh.total_query_threads.fetch_add(1, Ordering::Relaxed);
                }
                Role::Listener => st.listener_threads += 1,
                Role::ConnHandler { .. } => st.ch_threads += 1,
            }
            st.counters.threads_started += 1;
            st.last_creation = Some(sh.clock.now());
            sh.threads_created.fetch_add(1, Ordering::Relaxed);
            sh.alive.fetch_add(1, Ordering::Relaxed);
            true
        }
        Err(e) => {
            drop(handles);
            st.threads[me] = None;
            sh.log_warn(&format!(
                "thread pool: cannot create a thread in group {g}: {e}"
            ));
            false
        }
    }
}

fn thread_main<S: Session>(sh: Arc<Shared<S>>, g: usize, me: usize, role: Role, serial: u64) {
    if sh.pin && !sh.groups[g].cores.is_empty() {
        crate::placement::pin_current_thread(&sh.groups[g].cores);
    }
    {
        let mut st = lock(&sh.groups[g].state);
        // SAFETY: gettid has no preconditions.
        st.thread(me).os_tid = i64::from(unsafe { libc::gettid() });
    }
    let st = match role {
        Role::Query => crate::worker::run(&sh, g, me),
        Role::Listener => crate::listener::run_dedicated(&sh, g, me),
        Role::ConnHandler { permanent } => crate::connect::run(&sh, g, me, permanent),
    };
    exit(&sh, st, me, role);
    lock(&sh.handles).finished(serial);
}

/// Removes thread `me` from the group (its last act under the mutex).
fn exit<S: Session>(sh: &Shared<S>, mut st: Guard<'_, S>, me: usize, role: Role) {
    st.consumers.retain(|t| *t != me);
    st.reserves.retain(|t| *t != me);
    st.ch_sleepers.retain(|t| *t != me);
    if st.waiting == Some(me) {
        st.waiting = None;
    }
    st.threads[me] = None;
    match role {
        Role::Query => {
            st.query_threads -= 1;
            sh.total_query_threads.fetch_sub(1, Ordering::Relaxed);
        }
        Role::Listener => st.listener_threads -= 1,
        Role::ConnHandler { .. } => st.ch_threads -= 1,
    }
    sh.alive.fetch_sub(1, Ordering::Relaxed);
}

/// Sleeps query thread `me` as a consumer (while fewer than `query_threads_per_group` are)
/// or a reserve; returns `Err` (exit) at shutdown or when §1.7 says it should exit instead: a reserve when
/// `max_unused_threads` != 0 and reserves + 1 >= it, or any query thread while the group has
/// more query threads than its transaction share.
pub(crate) fn sleep_query<'a, S: Session>(
    sh: &'a Arc<Shared<S>>,
    g: usize,
    me: usize,
    mut st: Guard<'a, S>,
) -> Result<Guard<'a, S>, Guard<'a, S>> {
    let share = sh.group_share(g);
    if share > 0 && st.longrun.suspended_stamp.is_none() && st.query_threads > share {
        return Err(st);
    }
    let consumer = st.consumers.len() < sh.knobs.query_threads_per_group() as usize;
    if consumer {
        st.consumers.push(me);
        st.counters.become_consumer_thread += 1;
    } else {
        let max_unused = sh.knobs.max_unused_threads() as usize;
        if max_unused != 0 && st.reserves.len() + 1 >= max_unused {
            return Err(st);
        }
        st.reserves.push(me);
        st.counters.become_reserve_thread += 1;
    }
    let t = st.thread(me);
    t.woken = false;
    t.state = if consumer {
        ThreadState::SleepingConsumer
    } else {
        ThreadState::SleepingReserve
    };
    let parker = t.parker.clone();
    while !st.thread(me).woken && !st.shutdown {
        st = wait(&parker, st);
    }
    st.consumers.retain(|t| *t != me);
    st.reserves.retain(|t| *t != me);
    let t = st.thread(me);
    t.woken = false;
    t.state = ThreadState::Managing;
    if st.shutdown {
        Err(st)
    } else {
        Ok(st)
    }
}

/// Sleeps connection handler `me`: the permanent one indefinitely, an extra one at most
/// [`CH_IDLE_EXIT`], after which it should exit (`Err`).
pub(crate) fn sleep_ch<'a, S: Session>(
    me: usize,
    permanent: bool,
    mut st: Guard<'a, S>,
) -> Result<Guard<'a, S>, Guard<'a, S>> {
    st.ch_sleepers.push(me);
    let t = st.thread(me);
    t.woken = false;
    t.state = if permanent {
        ThreadState::ChSleepingIndefinite
    } else {
        ThreadState::ChSleepingTimed
    };
    let parker = t.parker.clone();
    let mut timed_out = false;
    while !st.thread(me).woken && !st.shutdown && !timed_out {
        if permanent {
            st = wait(&parker, st);
        } else {
            let (g2, to) = wait_timeout(&parker, st, CH_IDLE_EXIT);
            st = g2;
            timed_out = to;
        }
    }
    st.ch_sleepers.retain(|t| *t != me);
    let t = st.thread(me);
    let woken = t.woken;
    t.woken = false;
    t.state = ThreadState::Managing;
    if st.shutdown || (!woken && timed_out) {
        Err(st)
    } else {
        Ok(st)
    }
}
