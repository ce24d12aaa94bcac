//! One thread per connection with MySQL's thread cache: a finished connection's thread waits
//! in the cache (at most `thread_cache_size` of them) for the next connection instead of
//! exiting. Invariant: a connection's fd is in `live` exactly while its session is alive, and
//! is removed under the mutex before the session (and so the fd) is dropped, so shutdown
//! never touches a closed or reused descriptor.

use crate::handler::ConnectionHandler;
use crate::poller::shutdown_fd;
use crate::session::{Outcome, Session};
use crate::stats::HandlerStats;
use crate::sync::{lock, thread, wait, Arc, Condvar, Mutex};
use std::collections::HashMap;
use std::fmt;
use std::os::fd::RawFd;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicU32, AtomicU64, AtomicUsize, Ordering};

struct State<S> {
    shutdown: bool,
    next_conn: u64,
    next_thread: u64,
    /// Open connections' sockets, by connection number.
    live: HashMap<u64, RawFd>,
    /// Cached (idle) threads: serial and the condvar they wait on.
    cached: Vec<(u64, Arc<Condvar>)>,
    /// A connection handed to a cached thread, by thread serial.
    handoff: HashMap<u64, (u64, S)>,
    handles: Vec<(u64, thread::JoinHandle<()>)>,
    finished: Vec<u64>,
}

struct Shared<S> {
    state: Mutex<State<S>>,
    cache_size: AtomicU32,
    created: AtomicU64,
    running: AtomicUsize,
}

/// `thread_handling=one-thread-per-connection`: the baseline every experiment compares with.
pub struct ThreadPerConnection<S: Session> {
    sh: Arc<Shared<S>>,
}

impl<S: Session> fmt::Debug for ThreadPerConnection<S> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ThreadPerConnection")
            .field("thread_cache_size", &self.thread_cache_size())
            .finish()
    }
}

impl<S: Session> ThreadPerConnection<S> {
    /// A handler whose cache keeps at most `thread_cache_size` idle threads.
    pub fn new(thread_cache_size: u32) -> ThreadPerConnection<S> {
        ThreadPerConnection {
            sh: Arc::new(Shared {
                state: Mutex::new(State {
                    shutdown: false,
                    next_conn: 0,
                    next_thread: 0,
                    live: HashMap::new(),
                    cached: Vec::new(),
                    handoff: HashMap::new(),
                    handles: Vec::new(),
                    finished: Vec::new(),
                }),
                cache_size: AtomicU32::new(thread_cache_size),
                created: AtomicU64::new(0),
                running: AtomicUsize::new(0),
            }),
        }
    }

    /// `@@thread_cache_size`.
    pub fn thread_cache_size(&self) -> u32 {
        self.sh.cache_size.load(Ordering::Relaxed)
    }

    /// `SET GLOBAL thread_cache_size`: cached threads beyond the new size exit.
    pub fn set_thread_cache_size(&self, size: u32) {
        self.sh.cache_size.store(size, Ordering::Relaxed);
        let mut st = lock(&self.sh.state);
        while st.cached.len() > size as usize {
            // Leaving the cache list without a hand-off tells the thread to exit.
            if let Some((_, cv)) = st.cached.pop() {
                cv.notify_one();
            }
        }
    }
}

fn reap<S>(st: &mut State<S>) {
    for s in std::mem::take(&mut st.finished) {
        if let Some(i) = st.handles.iter().position(|(x, _)| *x == s) {
            let (_, h) = st.handles.swap_remove(i);
            let _ = h.join();
        }
    }
}

fn thread_main<S: Session>(sh: Arc<Shared<S>>, serial: u64, first: (u64, S)) {
    let mut job = Some(first);
    while let Some((id, mut s)) = job.take() {
        let hs = catch_unwind(AssertUnwindSafe(|| s.handshake())).unwrap_or(Outcome::Close);
        if hs == Outcome::Continue {
            loop {
                sh.running.fetch_add(1, Ordering::Relaxed);
                let o = catch_unwind(AssertUnwindSafe(|| s.run())).unwrap_or(Outcome::Close);
                sh.running.fetch_sub(1, Ordering::Relaxed);
                if o == Outcome::Close {
                    break;
                }
            }
        }
        let mut st = lock(&sh.state);
        st.live.remove(&id);
        drop(st);
        drop(s);
        let mut st = lock(&sh.state);
        if st.shutdown || st.cached.len() >= sh.cache_size.load(Ordering::Relaxed) as usize {
            break;
        }
        let cv = Arc::new(Condvar::new());
        st.cached.push((serial, cv.clone()));
        // Outside the lock: a connection handed over meanwhile waits in `handoff`, which the
        // loop below looks at before it waits.
        drop(st);
        S::thread_idle();
        st = lock(&sh.state);
        loop {
            if let Some(j) = st.handoff.remove(&serial) {
                job = Some(j);
                break;
            }
            if st.shutdown || !st.cached.iter().any(|(x, _)| *x == serial) {
                st.cached.retain(|(x, _)| *x != serial);
                break;
            }
            st = wait(&cv, st);
        }
    }
    lock(&sh.state).finished.push(serial);
}

impl<S: Session> ConnectionHandler<S> for ThreadPerConnection<S> {
    /// Hands the connection to a cached thread, or starts a thread for it.
    fn add_connection(&self, session: S) {
        let mut st = lock(&self.sh.state);
        if st.shutdown {
            drop(st);
            drop(session);
            return;
        }
        let id = st.next_conn;
        st.next_conn += 1;
        st.live.insert(id, session.raw_fd());
        if let Some((serial, cv)) = st.cached.pop() {
            st.handoff.insert(serial, (id, session));
            cv.notify_one();
            return;
        }
        reap(&mut st);
        let serial = st.next_thread;
        st.next_thread += 1;
        let sh = self.sh.clone();
        // The session waits in a slot the new thread empties, so that it is still here to be
        // refused when the thread cannot be started.
        let slot = Arc::new(Mutex::new(Some(session)));
        let handed = slot.clone();
        match thread::Builder::new()
            .name(format!("conn-{serial}"))
            .stack_size(crate::session::SESSION_THREAD_STACK)
            .spawn(move || {
                if let Some(session) = lock(&handed).take() {
                    thread_main(sh, serial, (id, session));
                }
            }) {
            Ok(h) => {
                st.handles.push((serial, h));
                self.sh.created.fetch_add(1, Ordering::Relaxed);
            }
            Err(e) => {
                st.live.remove(&id);
                drop(st);
                if let Some(mut session) = lock(&slot).take() {
                    session.refuse_no_thread(&e);
                }
            }
        }
    }

    fn shutdown(&self) {
        let handoff: Vec<(u64, S)>;
        {
            let mut st = lock(&self.sh.state);
            st.shutdown = true;
            for fd in st.live.values() {
                shutdown_fd(*fd);
            }
            for (_, cv) in &st.cached {
                cv.notify_one();
            }
            handoff = st.handoff.drain().map(|(_, j)| j).collect();
            for (id, _) in &handoff {
                st.live.remove(id);
            }
        }
        drop(handoff);
        loop {
            let hs = std::mem::take(&mut lock(&self.sh.state).handles);
            if hs.is_empty() {
                break;
            }
            for (_, h) in hs {
                let _ = h.join();
            }
        }
    }

    fn stats(&self) -> HandlerStats {
        let st = lock(&self.sh.state);
        HandlerStats {
            threads_created: self.sh.created.load(Ordering::Relaxed),
            threads_cached: st.cached.len() as u64,
            threads_connected: st.live.len() as u64,
            threads_running: self.sh.running.load(Ordering::Relaxed) as u64,
            threads_alive: st.handles.len().saturating_sub(st.finished.len()) as u64,
        }
    }
}

impl<S: Session> Drop for ThreadPerConnection<S> {
    fn drop(&mut self) {
        self.shutdown();
    }
}
