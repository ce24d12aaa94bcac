//! Query worker threads' decision loop: take queued work when the group has credit (or a rail
//! lets it), else take the waiting role and poll, else steal (when enabled), else sleep.
//! Invariant: a worker runs an event only with credit or by a rail (policy/mod.rs), and holds
//! the group mutex at every decision.

use crate::event::{self, Start};
use crate::listener;
use crate::park;
use crate::session::Session;
use crate::shared::{Guard, Shared};
use crate::steal;
use crate::sync::{lock, Arc};
use std::time::Duration;

/// Whether a worker ran events since it last called [`Session::thread_idle`], and how long
/// it sleeps before calling it (`None`: never).
struct IdleRelease {
    after: Option<Duration>,
    ran: bool,
}

impl IdleRelease {
    fn new<S: Session>() -> IdleRelease {
        IdleRelease {
            after: S::idle_release_after(),
            ran: false,
        }
    }

    /// How long the thread may sleep before it releases (`None`: indefinitely).
    fn sleep_limit(&self) -> Option<Duration> {
        self.after.filter(|_| self.ran)
    }

    fn release<S: Session>(&mut self) {
        S::thread_idle();
        self.ran = false;
    }
}

/// The query worker's loop. Returns the group guard when the
/// thread should exit.
pub(crate) fn run<'a, S: Session>(sh: &'a Arc<Shared<S>>, g: usize, me: usize) -> Guard<'a, S> {
    let group = &sh.groups[g];
    let mut st = lock(&group.state);
    let mut events = Vec::new();
    let mut idle = IdleRelease::new::<S>();
    loop {
        if st.shutdown {
            return st;
        }
        // While draining, a thread polls without blocking whenever nobody polls and the high
        // queue is empty, so one hot thread both polls and executes.
        if !sh.dedicated && st.waiting.is_none() && st.high.is_empty() && !st.low.is_empty() {
            st = listener::poll_nonblocking(sh, g, st, &mut events);
        }
        if let Some((token, by_rail)) = sh.take_event(g, &mut st) {
            // The consumer is notified once `process` has released the mutex.
            let consumer = if sh.high_concurrency() && (st.queued() > 0 || st.waiting.is_none()) {
                park::take_consumer(&mut st)
            } else {
                None
            };
            let how = if by_rail { Start::Rail } else { Start::Queued };
            st = event::process(sh, g, me, st, token, how, consumer);
            idle.ran = true;
            continue;
        }
        // A statement yielded in this group: before this thread blocks in a poll or sleeps,
        // look for input that arrived meanwhile, then let the statement resume.
        if st.oldest_yielded().is_some() {
            if !sh.dedicated && st.waiting.is_none() {
                st = listener::poll_nonblocking(sh, g, st, &mut events);
                if let Some((token, by_rail)) = sh.take_event(g, &mut st) {
                    let how = if by_rail { Start::Rail } else { Start::Queued };
                    st = event::process(sh, g, me, st, token, how, None);
                    idle.ran = true;
                    continue;
                }
            }
            if sh.resume_yielded(g, &mut st) {
                continue;
            }
        }
        if !sh.dedicated && st.waiting.is_none() {
            st = listener::wait_for_events(sh, g, me, st, &mut events);
            // It may have run one of them directly.
            idle.ran |= !events.is_empty();
            continue;
        }
        if sh.steal {
            match steal::try_steal(sh, g, me, st) {
                Ok(s) => {
                    st = s;
                    continue;
                }
                Err(s) => st = s,
            }
        }
        match park::sleep_query(sh, g, me, st, idle.sleep_limit()) {
            Ok((s, false)) => st = s,
            Ok((s, true)) => {
                // Asleep for `idle_release_after` after running statements: give back what
                // the thread keeps for itself, outside the mutex (it holds no role), then
                // decide again. A busy thread never gets here.
                drop(s);
                idle.release::<S>();
                st = lock(&group.state);
            }
            Err(s) => return s,
        }
    }
}
