//! `tpbed_thread_pool_steal=on` (ours, not MySQL's): a group whose queued events cannot start
//! (no credit: stalled or overloaded) offers them on its crossbeam [`Injector`]; an idle
//! query thread of another normal group steals one, runs it with its own group's credit and
//! returns the connection to its home group. Invariant: a thread never holds two group
//! mutexes at once, and an offered token is only a hint — the thief re-validates it under the
//! home group's mutex, so an event offered twice or already taken runs once.
//!
//! [`Injector`]: crossbeam_deque::Injector

use crate::event;
use crate::group::ConnState;
use crate::poller::Token;
use crate::session::Session;
use crate::shared::{Guard, Shared};
use crate::sync::{lock, Arc};
use crossbeam_deque::Steal;

/// Called by the stall checker for group `g` (under its mutex): when events are queued and
/// none can start, offer the ones not offered yet. Returns how many were offered.
pub(crate) fn offer<S: Session>(sh: &Shared<S>, g: usize, st: &mut Guard<'_, S>) -> usize {
    if sh.groups[g].admin || st.queued() == 0 || sh.credit(g, st) {
        return 0;
    }
    let mut n = 0;
    let group = &sh.groups[g];
    let st = &mut **st;
    for q in st.high.iter_mut().chain(st.low.iter_mut()) {
        if !q.offered {
            q.offered = true;
            group.exported.push(q.token);
            n += 1;
        }
    }
    n
}

/// An idle query thread `me` of group `g` (guard `st`) tries to steal one event from another
/// normal group. `Ok` after running one, `Err` (guard back) when there was none.
pub(crate) fn try_steal<'a, S: Session>(
    sh: &'a Arc<Shared<S>>,
    g: usize,
    me: usize,
    st: Guard<'a, S>,
) -> Result<Guard<'a, S>, Guard<'a, S>> {
    if sh.groups[g].admin || !sh.credit(g, &st) {
        return Err(st);
    }
    drop(st);
    for h in (0..sh.size).filter(|h| *h != g) {
        loop {
            match sh.groups[h].exported.steal() {
                Steal::Success(token) => {
                    if run_stolen(sh, g, me, h, token) {
                        return Ok(lock(&sh.groups[g].state));
                    }
                }
                Steal::Retry => continue,
                Steal::Empty => break,
            }
        }
    }
    Err(lock(&sh.groups[g].state))
}

/// Takes `token` out of group `h`'s queue if it is still queued there, and runs it on thread
/// `me` of group `g`.
fn run_stolen<S: Session>(
    sh: &Arc<Shared<S>>,
    g: usize,
    me: usize,
    h: usize,
    token: Token,
) -> bool {
    let mut home = lock(&sh.groups[h].state);
    let Some(conn) = home.conns.get_mut(token) else {
        return false;
    };
    if conn.state != ConnState::Queued {
        return false;
    }
    let Some(mut session) = conn.session.take() else {
        return false;
    };
    conn.state = ConnState::Attached;
    let fd = conn.fd;
    home.unqueue(token);
    home.counters.tpbed_stolen += 1;
    drop(home);

    let now = sh.clock.now();
    let mut st = lock(&sh.groups[g].state);
    let conn = sh.conn_facts(h, &session);
    event::attach(sh, g, &mut st, me, now, event::Start::Queued, conn);
    drop(st);
    let (outcome, statements, exec_time) =
        event::run_connection(sh, g, me, h, token, &mut session, &conn.class);
    let end = sh.clock.now();
    let rearmed = event::rearm_early(sh, h, token, fd, outcome);
    let mut st = lock(&sh.groups[g].state);
    event::detach(&mut st, me, end.saturating_sub(now), statements, exec_time);
    drop(st);
    let home = lock(&sh.groups[h].state);
    drop(event::finish(
        sh, h, home, token, fd, session, outcome, end, rearmed,
    ));
    true
}
