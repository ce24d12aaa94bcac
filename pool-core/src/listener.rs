//! The waiting (listener) role: poll, then execute one event directly or queue them all by
//! priority; a dedicated listener only polls, queues and wakes. Invariant: at most one thread
//! per group holds the role (`GroupState::waiting`); it is taken and given up only under the
//! group mutex, and a blocking poll happens only while holding the role.

use crate::event::{self, Start};
use crate::group::ConnState;
use crate::park::{self, WakeLevel};
use crate::poller::Token;
use crate::session::Session;
use crate::shared::{Guard, Shared};
use crate::stats::ThreadState;
use crate::sync::{lock, Arc};

/// Takes the waiting-thread role, blocks in the poller, then either executes a single event
/// directly (keeping the role while it runs) or queues every event and gives the role up.
pub(crate) fn wait_for_events<'a, S: Session>(
    sh: &'a Arc<Shared<S>>,
    g: usize,
    me: usize,
    mut st: Guard<'a, S>,
    events: &mut Vec<Token>,
) -> Guard<'a, S> {
    let group = &sh.groups[g];
    debug_assert!(
        st.waiting.is_none() || st.waiting == Some(me),
        "one waiting thread"
    );
    st.waiting = Some(me);
    st.counters.become_waiting_thread += 1;
    st.thread(me).state = ThreadState::Polling;
    drop(st);
    events.clear();
    let polled = group.poller.poll(events, true);
    let mut st = lock(&group.state);
    st.thread(me).state = ThreadState::Managing;
    if let Err(e) = polled {
        sh.log_warn(&format!("thread pool: poll failed in group {g}: {e}"));
    }
    if st.shutdown || st.waiting != Some(me) {
        if st.waiting == Some(me) {
            st.waiting = None;
        }
        return st;
    }
    let mut ready = resolve(&mut st, events);
    if !ready.is_empty() {
        st.counters.tpbed_listener_wakeups += 1;
    }
    let high = sh.high_concurrency();
    if ready.len() == 1 && !high && !sh.dedicated && st.queued() == 0 && sh.credit(g, &st) {
        // Direct execution: the thread keeps the waiting role while it runs the event; a
        // reported wait or the stall checker hands the role on.
        let token = ready[0];
        let mut st = event::process(sh, g, me, st, token, Start::Direct, None);
        if st.waiting == Some(me) {
            st.waiting = None;
        }
        return st;
    }
    if high && ready.len() == 1 && !sh.dedicated {
        // High concurrency: one extra non-blocking poll to batch.
        drop(st);
        events.clear();
        let _ = group.poller.poll(events, false);
        st = lock(&group.state);
        ready.extend(resolve(&mut st, events));
    }
    enqueue(sh, g, &mut st, &ready);
    if sh.dedicated {
        // A dedicated listener only polls, queues and wakes.
        for _ in 0..ready.len() {
            let level = if st.query_threads < sh.group_share(g) {
                WakeLevel::OrCreate
            } else {
                WakeLevel::IfCreated
            };
            if !park::wake(sh, g, &mut st, level) {
                break;
            }
        }
    } else {
        st.waiting = None;
        if st.queued() > 1 {
            park::wake(sh, g, &mut st, WakeLevel::IfCreated);
        }
    }
    st
}

/// A non-blocking poll by a draining worker; events found are queued.
pub(crate) fn poll_nonblocking<'a, S: Session>(
    sh: &'a Arc<Shared<S>>,
    g: usize,
    st: Guard<'a, S>,
    events: &mut Vec<Token>,
) -> Guard<'a, S> {
    let group = &sh.groups[g];
    drop(st);
    events.clear();
    let _ = group.poller.poll(events, false);
    let mut st = lock(&group.state);
    let ready = resolve(&mut st, events);
    enqueue(sh, g, &mut st, &ready);
    st
}

/// Keeps the tokens that name an armed connection and marks those queued; flags reports of
/// attached connections for their owners.
fn resolve<S>(st: &mut Guard<'_, S>, events: &[Token]) -> Vec<Token> {
    let mut ready = Vec::with_capacity(events.len());
    for &t in events {
        if let Some(c) = st.conns.get_mut(t) {
            match c.state {
                ConnState::Armed => {
                    c.state = ConnState::Queued;
                    ready.push(t);
                }
                // Re-armed by its owner before it parked the session (group.rs, re-arm
                // protocol step 2): the owner arms it again under the mutex.
                ConnState::Attached => c.reported_while_attached = true,
                ConnState::Queued => {}
            }
        }
    }
    ready
}

/// Queues `ready` events of group `g` in the queue the policy picks for each.
pub(crate) fn enqueue<S: Session>(
    sh: &Shared<S>,
    g: usize,
    st: &mut Guard<'_, S>,
    ready: &[Token],
) {
    let now = sh.clock.now();
    for &t in ready {
        let Some((queue, q)) = st
            .conns
            .get_mut(t)
            .and_then(|c| c.session.as_ref())
            .map(|s| sh.classify(g, t, s, now))
        else {
            continue;
        };
        st.push(queue, q);
    }
}

/// A dedicated listener thread: polls until shutdown.
pub(crate) fn run_dedicated<'a, S: Session>(
    sh: &'a Arc<Shared<S>>,
    g: usize,
    me: usize,
) -> Guard<'a, S> {
    let mut st = lock(&sh.groups[g].state);
    let mut events = Vec::new();
    loop {
        if st.shutdown {
            return st;
        }
        st = wait_for_events(sh, g, me, st, &mut events);
    }
}
