//! Parking and waking pool threads: a query thread sleeps as a consumer or a reserve, a
//! connection handler sleeps (the permanent one indefinitely); wakers pop a sleeper, or create
//! a query thread (spawn.rs) when none sleeps and the level allows it.
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

use crate::group::GroupState;
use crate::session::Session;
use crate::shared::{Guard, Shared};
use crate::spawn::create_query_thread;
use crate::stats::ThreadState;
use crate::sync::{wait, wait_timeout, Arc, Condvar};
use std::time::Duration;

/// An extra connection handler exits after this long idle (MySQL: 60 s).
pub(crate) const CH_IDLE_EXIT: Duration = Duration::from_secs(60);

/// How hard `wake` tries (MySQL's WAKE_IF_CREATED, WAKE_OR_CREATE_ONE; its WAKE_CONSUMER,
/// a hot sleeper only, is `take_consumer`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum WakeLevel {
    /// A consumer, else a reserve sleeper; never creates.
    IfCreated,
    /// A consumer, else a reserve, else create a query thread within MySQL's limits
    /// (`spawn::create_query_thread`).
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

/// Sleeps query thread `me` as a consumer (while fewer than `query_threads_per_group` are)
/// or a reserve, for at most `limit` if one is given; returns whether it slept that long
/// unwoken (it is then off the sleeper lists, as a woken thread), or `Err` (exit) at shutdown
/// or, as in MySQL, when it should exit instead: a reserve when `max_unused_threads` != 0
/// and reserves + 1 >= it, or, with dedicated listeners only, any query thread while the
/// group has more query threads than its transaction share (the other algorithms keep such
/// a thread as a consumer or reserve).
pub(crate) fn sleep_query<'a, S: Session>(
    sh: &'a Arc<Shared<S>>,
    g: usize,
    me: usize,
    mut st: Guard<'a, S>,
    limit: Option<Duration>,
) -> Result<(Guard<'a, S>, bool), Guard<'a, S>> {
    let share = sh.group_share(g);
    if sh.dedicated && share > 0 && st.query_threads > share {
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
    let mut timed_out = false;
    while !st.thread(me).woken && !st.shutdown && !timed_out {
        match limit {
            None => st = wait(&parker, st),
            Some(d) => (st, timed_out) = wait_timeout(&parker, st, d),
        }
    }
    st.consumers.retain(|t| *t != me);
    st.reserves.retain(|t| *t != me);
    let t = st.thread(me);
    let slept_out = timed_out && !t.woken;
    t.woken = false;
    t.state = ThreadState::Managing;
    if st.shutdown {
        Err(st)
    } else {
        Ok((st, slept_out))
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
