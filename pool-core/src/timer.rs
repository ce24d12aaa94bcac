//! The stall checker (MySQL's TIMER_WORKER_THREAD): one pool-wide `tick(now)` that runs the
//! stall protocol of group.rs on every group (and, with `tpbed_thread_pool_steal=on`, offers
//! what a group cannot start to the others), then writes the periodic connection report. A
//! timer thread drives it every 10 ms (1 ms after a pass that woke a thread or kicked an event
//! up), or tests do with a manual clock. Invariant: a tick never runs a session and never
//! waits while holding a group mutex; expired sessions are told outside it.

use crate::config::Algorithm;
use crate::group::ConnState;
use crate::park::{self, WakeLevel};
use crate::policy::ConnFacts;
use crate::session::Session;
use crate::shared::Shared;
use crate::stats::ThreadState;
use crate::steal;
use crate::sync::{lock, wait_timeout, Arc};
use std::sync::atomic::Ordering;
use std::time::Duration;

/// Pause after a pass that did nothing (MySQL: 10 ms).
pub(crate) const IDLE_PERIOD: Duration = Duration::from_millis(10);
/// Pause after a pass that woke a thread (MySQL: 1 ms).
pub(crate) const BUSY_PERIOD: Duration = Duration::from_millis(1);

/// The timer thread's loop.
pub(crate) fn run<S: Session>(sh: Arc<Shared<S>>) {
    loop {
        let acted = tick(&sh, sh.clock.now());
        let ctl = lock(&sh.timer);
        if ctl.stop {
            return;
        }
        let period = if acted { BUSY_PERIOD } else { IDLE_PERIOD };
        let (ctl, _) = wait_timeout(&sh.timer_cv, ctl, period);
        if ctl.stop {
            return;
        }
    }
}

/// One stall-checker pass over every group; true when it woke or created a thread.
pub(crate) fn tick<S: Session>(sh: &Arc<Shared<S>>, now: Duration) -> bool {
    let mut acted = false;
    for g in 0..sh.groups.len() {
        acted |= tick_group(sh, g, now);
    }
    report(sh, now);
    acted
}

fn tick_group<S: Session>(sh: &Arc<Shared<S>>, g: usize, now: Duration) -> bool {
    let group = &sh.groups[g];
    let mut st = lock(&group.state);
    if st.shutdown {
        return false;
    }
    let knobs = &sh.knobs;
    // 1. Mark stalled threads, once per attachment.
    let stall = Duration::from_millis(10 * u64::from(knobs.stall_limit()));
    let mut newly_stalled = 0;
    for t in st.threads.iter_mut().flatten() {
        if let Some(a) = t.attached.as_mut() {
            if !a.marked_stalled && now.saturating_sub(a.attach_at) >= stall {
                a.marked_stalled = true;
                newly_stalled += 1;
            }
        }
    }
    st.stalled += newly_stalled;
    st.counters.stalled_queries_executed += newly_stalled as u64;
    let max_active = knobs.query_threads_per_group() as usize + st.stalled;
    let grew = max_active > st.last_max_active;
    st.last_max_active = max_active;

    // 2. Long-running transactions (only with a transaction limit).
    let share = sh.group_share(g);
    check_long_running(sh, g, &mut st, share, now);

    // 3. A waiting thread that executes directly and stalled gives the role up.
    let mut role_taken = false;
    if let Some(w) = st.waiting {
        let t = st.thread(w);
        if t.state == ThreadState::ProcessingDirect
            && t.attached.as_ref().is_some_and(|a| a.marked_stalled)
        {
            st.waiting = None;
            role_taken = true;
        }
    }

    // 4. The policy's tick (mysql: kick up at most one low-priority event per pass).
    let action = sh.policy.tick(&sh.facts(g, &st), knobs, now);
    let kicked = action.kick_up && st.promote_low_head();

    // Ours: cooperative yield. Ask the policy about every running statement; resume a
    // yielded one when it may run, and in any case once it has waited a stall limit.
    ask_to_yield(sh, g, &mut st, now);
    let mut acted = sh.resume_yielded(g, &mut st);
    if let Some((t, at)) = st.oldest_yielded() {
        if now.saturating_sub(at) >= stall {
            st.resume(t);
            acted = true;
        }
    }

    // 5. Wake or create one thread when needed. A queued event counts only when it could start
    //    (MySQL's `is_query_ready_to_process`: an event is queued and credit is available; or a
    //    rail lets it start).
    let ready = sh.startable(g, &st);
    let sleepers = !st.consumers.is_empty() || !st.reserves.is_empty();
    let algo1 = sh.algorithm == Algorithm::HighConcurrency;
    let need = grew
        || role_taken
        || (!sleepers && ready)
        || (algo1 && st.waiting.is_none() && !sh.dedicated && sh.credit(g, &st))
        || (share > 0 && ready);
    acted |= kicked;
    if need && park::wake(sh, g, &mut st, WakeLevel::OrCreate) {
        st.counters.wake_thread_stall_checker += 1;
        acted = true;
    }

    // Ours (tpbed_thread_pool_steal): offer events that cannot start here to other groups.
    let offered = if sh.steal {
        steal::offer(sh, g, &mut st)
    } else {
        0
    };

    // 6. Idle connections past wait_timeout.
    let expired = take_expired(group, &mut st, now);
    drop(st);
    if !expired.is_empty() {
        sh.log_info(&format!(
            "thread pool: group {g}: closing {} connection(s) idle past wait_timeout",
            expired.len()
        ));
    }
    for mut s in expired {
        s.expire();
        drop(s);
    }
    if offered > 0 {
        acted |= wake_thief(sh, g);
    }
    acted
}

/// The stall checker's long-running rule: with a transaction limit (`share` > 0), suspend the
/// limit while long-running transactions hold every slot, and re-apply it after a grace time.
fn check_long_running<S: Session>(
    sh: &Shared<S>,
    g: usize,
    st: &mut crate::shared::Guard<'_, S>,
    share: usize,
    now: Duration,
) {
    let knobs = &sh.knobs;
    if share == 0 {
        st.longrun.suspended_stamp = None;
    } else {
        let longrun = Duration::from_millis(u64::from(knobs.longrun_trx_limit()));
        if now.saturating_sub(st.longrun.last_check) >= longrun / 2 {
            st.longrun.last_check = now;
            let old = st
                .threads
                .iter()
                .flatten()
                .filter_map(|t| t.attached.as_ref())
                .filter(|a| now.saturating_sub(a.attach_at) > longrun)
                .count();
            match st.longrun.suspended_stamp {
                None if old >= share => {
                    st.longrun.suspended_stamp = Some(now);
                    sh.log_info(&format!(
                        "thread pool: group {g}: {old} long-running transactions hold every \
                         slot; transaction limit suspended"
                    ));
                }
                Some(_) if old > share / 2 => st.longrun.suspended_stamp = Some(now),
                Some(stamp) if now.saturating_sub(stamp) > longrun_grace(longrun) => {
                    st.longrun.suspended_stamp = None;
                    sh.log_info(&format!(
                        "thread pool: group {g}: transaction limit re-applied"
                    ));
                }
                _ => {}
            }
        }
    }
}

/// Removes the group's armed connections idle past `wait_timeout` and returns their sessions,
/// for the caller to close once the group mutex is released.
fn take_expired<S: Session>(
    group: &crate::group::Group<S>,
    st: &mut crate::shared::Guard<'_, S>,
    now: Duration,
) -> Vec<S> {
    let mut expired = Vec::new();
    if st.earliest_expire.is_some_and(|e| e <= now) {
        let mut earliest = None;
        for t in st.conns.tokens() {
            let Some(c) = st.conns.get_mut(t) else {
                continue;
            };
            if c.state != ConnState::Armed {
                continue;
            }
            // A reply still leaving is bounded by net_write_timeout (ring I/O), not by
            // wait_timeout: it is looked at again at the next tick.
            if c.expire_at <= now && !group.poller.sending(t) {
                let c = st.conns.remove(t).expect("token just listed");
                let _ = group.poller.deregister(t, c.fd);
                expired.extend(c.session);
            } else {
                earliest = Some(earliest.map_or(c.expire_at, |e: Duration| e.min(c.expire_at)));
            }
        }
        st.earliest_expire = earliest;
        st.connections -= expired.len();
        st.counters.connections_closed += expired.len() as u64;
        st.counters.tpbed_expired += expired.len() as u64;
    }
    expired
}

/// Sets the yield flag of every running statement of group `g` (attached, not in a reported
/// wait, not yielded already) that the policy says should yield at `now`.
fn ask_to_yield<S: Session>(
    sh: &Shared<S>,
    g: usize,
    st: &mut crate::shared::Guard<'_, S>,
    now: Duration,
) {
    let facts = sh.facts(g, st);
    for t in st.threads.iter().flatten() {
        let Some(a) = t.attached.as_ref() else {
            continue;
        };
        if a.wait_decremented || a.wait.is_some() || a.yielded_at.is_some() {
            continue;
        }
        let conn = ConnFacts {
            ran_for: now.saturating_sub(a.run_since),
            ..a.conn
        };
        if sh.policy.should_yield(&conn, &facts, &sh.knobs) {
            t.yield_flag.store(true, Ordering::Relaxed);
        }
    }
}

/// Wakes an idle query thread in a normal group other than `g` that has credit and nothing
/// queued, so it can steal what `g` offered.
fn wake_thief<S: Session>(sh: &Arc<Shared<S>>, g: usize) -> bool {
    for h in (0..sh.size).filter(|h| *h != g) {
        let mut st = lock(&sh.groups[h].state);
        if st.queued() == 0 && sh.credit(h, &st) && park::wake(sh, h, &mut st, WakeLevel::IfCreated)
        {
            return true;
        }
    }
    false
}

/// Grace before a suspended limit is re-applied: clamp(15 × longrun limit, 5 s, 30 s).
pub(crate) fn longrun_grace(longrun: Duration) -> Duration {
    (longrun * 15).clamp(Duration::from_secs(5), Duration::from_secs(30))
}

/// Writes the connection report every `connection_report_interval` s (a tenth of it during
/// the first three minutes).
fn report<S: Session>(sh: &Arc<Shared<S>>, now: Duration) {
    let secs = sh.knobs.connection_report_interval();
    if secs == 0 {
        return;
    }
    let mut every = Duration::from_secs(u64::from(secs));
    if now < Duration::from_secs(180) {
        every /= 10;
    }
    {
        let mut ctl = lock(&sh.timer);
        if now.saturating_sub(ctl.last_report) < every {
            return;
        }
        ctl.last_report = now;
    }
    let per_group: Vec<String> = sh
        .groups
        .iter()
        .map(|g| lock(&g.state).connections.to_string())
        .collect();
    let total: usize = sh.groups.iter().map(|g| lock(&g.state).connections).sum();
    sh.log_info(&format!(
        "thread pool: {total} connection(s); per group (Admin last): {}",
        per_group.join(" ")
    ));
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    #[test]
    fn grace_is_clamped() {
        assert_eq!(
            longrun_grace(Duration::from_millis(2000)),
            Duration::from_secs(30)
        );
        assert_eq!(
            longrun_grace(Duration::from_millis(10)),
            Duration::from_secs(5)
        );
        assert_eq!(
            longrun_grace(Duration::from_millis(1000)),
            Duration::from_secs(15)
        );
    }
}
