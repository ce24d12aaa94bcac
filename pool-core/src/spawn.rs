//! Thread creation and exit: MySQL's limits and throttle for new query threads, starting a
//! thread of any role (it runs the role's loop from the role table in [`Shared`]), and the
//! bookkeeping when a thread exits. Invariant: a thread's slot, its role counter and the pool's
//! `alive` count change together, under the group mutex, at creation and at exit.

use crate::group::{GroupState, ThreadInfo};
use crate::session::Session;
use crate::shared::{Guard, Role, Shared};
use crate::stats::ThreadKind;
use crate::sync::{lock, thread, Arc};
use std::sync::atomic::Ordering;
use std::time::Duration;

/// Most threads a group may have (MySQL's 4096 thread slots).
pub(crate) const MAX_THREADS_PER_GROUP: usize = 4096;
/// Thread creation gaps when the group is busy and threads are plentiful, as MySQL codes
/// them: 50 and 100 compared against a microsecond clock, so microseconds (milliseconds may
/// have been meant; tpbed keeps MySQL's behaviour).
const CREATE_GAP_FEW: Duration = Duration::from_micros(50);
const CREATE_GAP_MANY: Duration = Duration::from_micros(100);

/// Creates a query thread unless MySQL's limits forbid it: more than 1 + connections threads, 4096
/// threads, the transaction cap (unless suspended), or the creation throttle. The cap lets the
/// group reach `share + 2` query threads, as MySQL's does: `share + 1` bound to transactions
/// (the credit rule's `<=`) and one more to poll.
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
    if share > 0 && st.longrun.suspended_stamp.is_none() && st.query_threads > share + 1 {
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
    let st = (sh.run_role)(&sh, g, me, role);
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
