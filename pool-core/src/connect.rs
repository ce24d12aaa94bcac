//! Connection handlers: new connections wait in their group's connect queue until a
//! connection-handler thread authenticates them, then they are armed in the poller of their
//! group, or of the Admin group for `TP_CONNECTION_ADMIN` sessions.
//! Invariant: a connection is counted in its group's `connections` exactly from the moment its
//! slot is inserted until the slot is removed.

use crate::group::{Conn, ConnState};
use crate::park::{self, WakeLevel};
use crate::session::{Outcome, Session};
use crate::shared::{Guard, Role, Shared};
use crate::spawn;
use crate::stats::ThreadState;
use crate::sync::{lock, Arc};
use std::panic::{catch_unwind, AssertUnwindSafe};

/// Extra connection handlers allowed per group besides the permanent one:
/// max(5, ceil(160 / size)), as MySQL.
pub(crate) fn max_extra_handlers(size: usize) -> usize {
    160usize.div_ceil(size.max(1)).max(5)
}

/// Puts a new connection on group `g`'s connect queue and signals a connection handler,
/// creating an extra one when all are busy.
pub(crate) fn enqueue<S: Session>(sh: &Arc<Shared<S>>, g: usize, session: S) {
    let group = &sh.groups[g];
    let mut st = lock(&group.state);
    if st.shutdown {
        drop(st);
        sh.connecting
            .fetch_sub(1, std::sync::atomic::Ordering::Relaxed);
        drop(session);
        return;
    }
    st.connect_q.push_back(session);
    if let Some(t) = st.ch_sleepers.pop() {
        park::unpark(&mut st, t);
    } else if st.ch_threads < 1 + max_extra_handlers(sh.size) {
        let permanent = st.ch_threads == 0;
        spawn::spawn(sh, g, &mut st, Role::ConnHandler { permanent });
    }
}

/// A connection-handler thread's loop.
pub(crate) fn run<'a, S: Session>(
    sh: &'a Arc<Shared<S>>,
    g: usize,
    me: usize,
    permanent: bool,
) -> Guard<'a, S> {
    let group = &sh.groups[g];
    let mut st = lock(&group.state);
    loop {
        if st.shutdown {
            return st;
        }
        if let Some(s) = st.connect_q.pop_front() {
            let t = st.thread(me);
            t.state = ThreadState::ChProcessing;
            t.handshake_fd = Some(s.raw_fd());
            drop(st);
            admit(sh, g, Some(me), s);
            st = lock(&group.state);
            st.thread(me).state = ThreadState::Managing;
            continue;
        }
        match park::sleep_ch(me, permanent, st) {
            Ok(s) => st = s,
            Err(s) => return s,
        }
    }
}

/// Authenticates `session` and arms it in its group (the Admin group for TP admins); `ch` is
/// the connection-handler thread doing it, whose `handshake_fd` is cleared afterwards, while
/// the session (and so its fd) is still alive.
pub(crate) fn admit<S: Session>(sh: &Arc<Shared<S>>, g: usize, ch: Option<usize>, mut session: S) {
    let outcome = catch_unwind(AssertUnwindSafe(|| session.handshake())).unwrap_or(Outcome::Close);
    if let Some(me) = ch {
        lock(&sh.groups[g].state).thread(me).handshake_fd = None;
    }
    sh.connecting
        .fetch_sub(1, std::sync::atomic::Ordering::Relaxed);
    if outcome == Outcome::Close {
        drop(session);
        return;
    }
    let target = if session.is_tp_admin() { sh.size } else { g };
    arm_new(sh, target, session);
}

/// Inserts an authenticated session into group `g` and registers it with the poller (or
/// queues it at once when input is already buffered, since no readiness would come).
pub(crate) fn arm_new<S: Session>(sh: &Arc<Shared<S>>, g: usize, session: S) {
    let group = &sh.groups[g];
    let now = sh.clock.now();
    let mut st = lock(&group.state);
    if st.shutdown {
        drop(st);
        session.kill();
        drop(session);
        return;
    }
    let fd = session.raw_fd();
    let expire_at = now + session.idle_timeout();
    let buffered = session.has_buffered_input();
    let token = st.conns.insert(Conn {
        fd,
        session: Some(session),
        state: if buffered {
            ConnState::Queued
        } else {
            ConnState::Armed
        },
        expire_at,
        reported_while_attached: false,
    });
    st.connections += 1;
    st.counters.connections_started += 1;
    if buffered {
        let conn = st.conns.get_mut(token).expect("just inserted");
        let Some((queue, q)) = conn.session.as_ref().map(|s| sh.classify(g, token, s, now)) else {
            return;
        };
        st.push(queue, q);
        park::wake(sh, g, &mut st, WakeLevel::IfCreated);
        return;
    }
    st.note_expiry(expire_at);
    if let Err(e) = group.poller.register(token, fd) {
        let conn = st.conns.remove(token);
        st.connections -= 1;
        st.counters.connections_closed += 1;
        drop(st);
        sh.log_warn(&format!("thread pool: cannot register a connection: {e}"));
        drop(conn);
    }
}
