//! The live connections: what `SHOW PROCESSLIST` lists, what `KILL` reaches, and the
//! per-session counter blocks `SHOW GLOBAL STATUS` sums.

use std::collections::HashMap;
use std::os::fd::RawFd;
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, AtomicU8, Ordering};
use std::sync::{Arc, Mutex};

use crate::vars::SessionCounters;

/// No kill pending.
pub const KILL_NONE: u8 = 0;
/// `KILL QUERY`: end the running statement with 1317, keep the connection.
pub const KILL_QUERY: u8 = 1;
/// `KILL [CONNECTION]`: close the connection.
pub const KILL_CONNECTION: u8 = 2;

/// What a connection is doing, as `SHOW PROCESSLIST`'s Command column says.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
pub enum ConnCommand {
    /// Authenticating.
    Connect = 0,
    /// Idle between commands.
    Sleep = 1,
    /// Running a text query.
    Query = 2,
    /// Running a prepared statement.
    Execute = 3,
    /// Preparing a statement.
    Prepare = 4,
}

impl ConnCommand {
    /// The name MySQL shows.
    pub fn name(self) -> &'static str {
        match self {
            ConnCommand::Connect => "Connect",
            ConnCommand::Sleep => "Sleep",
            ConnCommand::Query => "Query",
            ConnCommand::Execute => "Execute",
            ConnCommand::Prepare => "Prepare",
        }
    }

    fn from_u8(v: u8) -> ConnCommand {
        match v {
            0 => ConnCommand::Connect,
            2 => ConnCommand::Query,
            3 => ConnCommand::Execute,
            4 => ConnCommand::Prepare,
            _ => ConnCommand::Sleep,
        }
    }
}

/// The part of a connection other threads may see or act on.
#[derive(Debug)]
pub struct ConnInfo {
    /// The connection id (`CONNECTION_ID()`, processlist Id).
    pub id: u32,
    /// The client address.
    pub host: String,
    /// Login user and current database, set after authentication and by USE.
    pub login: Mutex<Login>,
    /// The socket, for `shutdown()` on KILL.
    pub fd: RawFd,
    /// Pending kill: [`KILL_NONE`], [`KILL_QUERY`] or [`KILL_CONNECTION`].
    pub killed: AtomicU8,
    command: AtomicU8,
    /// The statement being run (processlist Info).
    info: Mutex<Vec<u8>>,
    /// When the current command started ([`coarse_now_us`]).
    since_us: AtomicU64,
    /// Whether a statement is executing now (`Threads_running`).
    pub running: AtomicBool,
    /// Whether the statement waits for a table's metadata lock.
    pub waiting_for_metadata_lock: AtomicBool,
    /// The session's status counters.
    pub counters: SessionCounters,
    /// OS thread id of the thread that last ran a command for the connection
    /// (`performance_schema.threads.THREAD_OS_ID`; 0 before the first).
    pub os_thread: AtomicU64,
    /// Digests of statement texts the connection ran recently.
    pub digest_cache: crate::digest::TextCache,
    /// State the statement layer keeps for the connection's life (its parsed shapes of the
    /// texts the connection ran, `stmt::shapes`), made on first use. This layer stores it
    /// without naming its type, so it imports nothing from the layers above.
    pub statement_state: std::sync::OnceLock<Box<dyn std::any::Any + Send + Sync>>,
}

thread_local! {
    static OS_THREAD: u64 = {
        // SAFETY: gettid has no preconditions.
        let tid = unsafe { libc::gettid() };
        u64::try_from(tid).unwrap_or(0)
    };
}

/// Who is logged in on a connection and where.
#[derive(Debug, Clone, Default)]
pub struct Login {
    /// User name (empty while connecting).
    pub user: String,
    /// The current database.
    pub db: Option<String>,
}

impl ConnInfo {
    /// The processlist State: none while idle, else what the statement is doing.
    pub fn state(&self) -> Option<&'static str> {
        if !self.running.load(Ordering::Relaxed) {
            None
        } else if self.waiting_for_metadata_lock.load(Ordering::Relaxed) {
            Some("Waiting for table metadata lock")
        } else {
            Some("executing")
        }
    }

    /// A new connection in the Connect state.
    pub fn new(id: u32, host: String, fd: RawFd) -> ConnInfo {
        ConnInfo {
            id,
            host,
            login: Mutex::new(Login::default()),
            fd,
            killed: AtomicU8::new(KILL_NONE),
            command: AtomicU8::new(ConnCommand::Connect as u8),
            info: Mutex::new(Vec::new()),
            since_us: AtomicU64::new(coarse_now_us()),
            running: AtomicBool::new(false),
            waiting_for_metadata_lock: AtomicBool::new(false),
            counters: SessionCounters::default(),
            os_thread: AtomicU64::new(0),
            digest_cache: crate::digest::TextCache::default(),
            statement_state: std::sync::OnceLock::new(),
        }
    }

    /// The current command.
    pub fn command(&self) -> ConnCommand {
        ConnCommand::from_u8(self.command.load(Ordering::Relaxed))
    }

    /// Marks the start of a command (`info` is the statement text, if any).
    pub fn begin(&self, cmd: ConnCommand, info: Option<&[u8]>) {
        self.command.store(cmd as u8, Ordering::Relaxed);
        self.running.store(true, Ordering::Relaxed);
        self.mark_state_change();
        if let Some(text) = info {
            // The buffer is reused from statement to statement: no allocation once warm.
            let mut buf = self.info.lock().unwrap_or_else(|e| e.into_inner());
            buf.clear();
            buf.extend_from_slice(&text[..text.len().min(1024)]);
        }
    }

    fn mark_state_change(&self) {
        self.os_thread
            .store(OS_THREAD.with(|t| *t), Ordering::Relaxed);
        self.since_us.store(coarse_now_us(), Ordering::Relaxed);
    }

    /// Seconds in the current command or idle state (processlist Time).
    pub fn seconds_in_state(&self) -> u64 {
        coarse_now_us().saturating_sub(self.since_us.load(Ordering::Relaxed)) / 1_000_000
    }

    /// The statement being run (processlist Info), if any.
    pub fn info_text(&self) -> Option<String> {
        let buf = self.info.lock().unwrap_or_else(|e| e.into_inner());
        (!buf.is_empty()).then(|| String::from_utf8_lossy(&buf).into_owned())
    }

    /// Marks the end of a command: the connection sleeps.
    pub fn end(&self) {
        self.command
            .store(ConnCommand::Sleep as u8, Ordering::Relaxed);
        self.running.store(false, Ordering::Relaxed);
        self.mark_state_change();
        self.info.lock().unwrap_or_else(|e| e.into_inner()).clear();
    }

    /// Requests a kill and unblocks the connection's socket for KILL CONNECTION.
    pub fn kill(&self, how: u8) {
        self.killed.fetch_max(how, Ordering::SeqCst);
        if how == KILL_CONNECTION {
            // SAFETY: shutdown on a descriptor only changes socket state; if the descriptor was
            // closed meanwhile the call fails harmlessly (the registry entry is removed before
            // the session closes its socket).
            unsafe {
                libc::shutdown(self.fd, libc::SHUT_RDWR);
            }
        }
    }
}

/// All live connections by id.
#[derive(Debug, Default)]
pub struct Connections {
    map: Mutex<HashMap<u32, Arc<ConnInfo>>>,
    next_id: AtomicU32,
    /// What the connections of the latest deadlock were running when it was resolved.
    pub at_deadlock: DeadlockStatements,
}

/// The statements the connections of the latest deadlock were running when its victim was
/// chosen, and how long their transactions had been active (SHOW ENGINE INNODB STATUS prints
/// them), kept with the deadlock's detection time.
#[derive(Debug, Default)]
pub struct DeadlockStatements {
    latest: Mutex<Option<(std::time::SystemTime, Vec<AtDeadlock>)>>,
}

/// One connection of a deadlock as it was when the deadlock was resolved.
#[derive(Debug, Clone, Default)]
pub struct AtDeadlock {
    /// The connection id.
    pub conn: u64,
    /// Its statement.
    pub statement: Option<String>,
    /// Seconds its transaction had been active.
    pub active_secs: u64,
    /// The OS thread that ran it.
    pub os_thread: u64,
    /// Statements it had received (`Questions`), for InnoDB's `query id`.
    pub queries: u64,
    /// The client address.
    pub host: String,
    /// The user.
    pub user: String,
}

impl DeadlockStatements {
    /// Records what the connections of the deadlock detected `at` run now, given their ids
    /// and transactions' active seconds.
    pub fn capture(&self, at: std::time::SystemTime, conns: &Connections, ids: &[(u64, u64)]) {
        let rows = ids
            .iter()
            .map(|&(conn, active_secs)| {
                let live = u32::try_from(conn).ok().and_then(|id| conns.get(id));
                match live {
                    Some(c) => AtDeadlock {
                        conn,
                        statement: c.info_text(),
                        active_secs,
                        os_thread: c.os_thread.load(Ordering::Relaxed),
                        queries: c.counters.get(crate::vars::Counter::Questions),
                        host: c.host.clone(),
                        user: c
                            .login
                            .lock()
                            .unwrap_or_else(|e| e.into_inner())
                            .user
                            .clone(),
                    },
                    None => AtDeadlock {
                        conn,
                        active_secs,
                        ..AtDeadlock::default()
                    },
                }
            })
            .collect();
        *self.latest.lock().unwrap_or_else(|e| e.into_inner()) = Some((at, rows));
    }

    /// Connection `conn` in the deadlock detected `at`, if it was captured.
    pub fn get(&self, at: std::time::SystemTime, conn: u64) -> Option<AtDeadlock> {
        let latest = self.latest.lock().unwrap_or_else(|e| e.into_inner());
        let (_, rows) = latest.as_ref().filter(|(when, _)| *when == at)?;
        rows.iter().find(|r| r.conn == conn).cloned()
    }
}

impl Connections {
    /// Allocates the next connection id (starting at 1, as MySQL does after start-up).
    pub fn next_id(&self) -> u32 {
        self.next_id.fetch_add(1, Ordering::Relaxed) + 1
    }

    /// The id the next connection will get (for the `Connections` status counter).
    pub fn peek_next_id(&self) -> u32 {
        self.next_id.load(Ordering::Relaxed) + 1
    }

    /// Registers a connection.
    pub fn insert(&self, c: Arc<ConnInfo>) {
        self.map
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(c.id, c);
    }

    /// Unregisters a connection.
    pub fn remove(&self, id: u32) -> Option<Arc<ConnInfo>> {
        self.map
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .remove(&id)
    }

    /// Looks a connection up.
    pub fn get(&self, id: u32) -> Option<Arc<ConnInfo>> {
        self.map
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get(&id)
            .cloned()
    }

    /// A snapshot of every connection, in id order.
    pub fn snapshot(&self) -> Vec<Arc<ConnInfo>> {
        let mut v: Vec<_> = self
            .map
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .values()
            .cloned()
            .collect();
        v.sort_by_key(|c| c.id);
        v
    }

    /// How many connections are registered.
    pub fn len(&self) -> usize {
        self.map.lock().unwrap_or_else(|e| e.into_inner()).len()
    }

    /// True when no connection is registered.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// Microseconds on the coarse monotonic clock (tick resolution, a few ms): enough for the
/// processlist's whole seconds, and read at every command start and end without the cost of
/// a precise clock read and its `Duration` arithmetic.
fn coarse_now_us() -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a valid, writable timespec; CLOCK_MONOTONIC_COARSE exists on every
    // Linux this server supports, and on failure `ts` stays zero.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC_COARSE, &mut ts) };
    (ts.tv_sec as u64) * 1_000_000 + (ts.tv_nsec as u64) / 1_000
}
