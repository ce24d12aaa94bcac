//! The redo log and group commit: what a commit costs when it must reach the disk.
//!
//! tpbed keeps its data in memory and never recovers from the redo log, but the price of
//! `innodb_flush_log_at_trx_commit` is real: at 1 each committing read-write transaction
//! returns only after its redo bytes are written to a file and `fdatasync`ed, and whether a
//! batch-size or concurrency experiment reproduces depends on that cost and on how commits
//! share it. So the log writes the bytes it is given to a real file and syncs it as InnoDB
//! would, and counts what it did in MySQL's status counters.
//!
//! **Group commit.** A commit appends `redo_bytes` plus a commit record to the log, which
//! gives it an LSN (the log's length after its bytes). If no flush is running, it becomes the
//! *leader*: it writes everything appended so far (its own bytes and those of every committer
//! queued behind it) and syncs once; the others are *followers* and wait until a flush covers
//! their LSN, or become the next leader when the running flush does not cover them. Leader and
//! followers report the wait to the connection pool as [`WaitKind::CommitFlush`], so the pool
//! can run another connection meanwhile.
//!
//! **Modes** (`innodb_flush_log_at_trx_commit`, read at every commit so `SET GLOBAL` applies
//! at once): 1 writes and syncs at commit; 2 writes at commit and leaves the sync to the
//! background thread; 0 leaves both to it. The background thread writes and syncs whatever is
//! pending every `innodb_flush_log_at_timeout` seconds.
//!
//! **The file** is `<innodb_log_group_home_dir>/#innodb_redo/#ib_redo0` (MySQL 8.0.30's
//! layout; the home dir defaults to the datadir). It has a 2 KiB header and then a ring of
//! [`DEFAULT_CAPACITY`] bytes: LSN `l` lives at `HEADER + l % capacity`, so the file never
//! grows past header + capacity. Writes cover whole 512-byte blocks, and a write rewrites the
//! partly filled block the previous one ended in, as InnoDB does, so `Innodb_os_log_written`
//! exceeds the bytes committed by about one block per write. Each block starts with its block
//! number; the rest is zeros, as only the sizes and the syncs matter.
//!
//! **Emulated sync.** With `tpbed_log_fsync_us` > 0 (tpbed's own variable) a sync sleeps that
//! many microseconds instead of calling `fdatasync` and still counts as an fsync, for machines
//! whose disks sync unrealistically fast (tmpfs, battery-backed caches) or slowly.
//!
//! **The binary log** (`log_bin`, ON by default as in MySQL 8.0) is a second log of this kind,
//! `binlog.000001` in the datadir unless `--log-bin=NAME` names it. At `sync_binlog = 0` a
//! commit only writes it; at N > 0 the leader of every Nth commit group syncs it, and the other
//! groups are only written (MySQL's "synchronized after N commit groups"). It holds sizes, not
//! events. What it changes is when a committing transaction lets go of its row locks: with it,
//! the redo sync (InnoDB's prepare) and the binary log's sync both happen before the locks are
//! released, as in MySQL's two-phase commit; without it InnoDB releases them first and syncs
//! the redo after.
//!
//! I/O errors are logged once (through the engine's [`crate::log`] hook) and otherwise
//! ignored: nothing is recovered from this file, and a full disk should not stop the
//! experiment's commits.

use std::fs::File;
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicU8, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use pool_core::wait::{self, WaitKind};

/// The redo directory under `innodb_log_group_home_dir` (MySQL 8.0.30+'s name).
pub const REDO_DIR: &str = "#innodb_redo";
/// The redo file inside [`REDO_DIR`].
pub const REDO_FILE: &str = "#ib_redo0";
/// Size of the ring of log blocks after the header (the file is header + this).
pub const DEFAULT_CAPACITY: u64 = 32 << 20;
/// Bytes every commit appends besides the transaction's own redo (its commit record).
pub(crate) const COMMIT_RECORD_BYTES: u64 = 16;
/// The unit of log writes: a write starts and ends on a block boundary.
pub(crate) const BLOCK: u64 = 512;
/// Size of the file header before the ring.
const HEADER: u64 = 2048;
/// Largest single write (a longer range is written in pieces).
const MAX_WRITE: u64 = 1 << 20;

/// `innodb_flush_log_at_trx_commit`: what a commit waits for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FlushAtCommit {
    /// 0: nothing; the background thread writes and syncs about once per timeout.
    Background = 0,
    /// 1 (the default): written and synced before the commit returns.
    Sync = 1,
    /// 2: written before the commit returns, synced by the background thread.
    Write = 2,
}

impl FlushAtCommit {
    /// The mode of a variable value (anything but 0 and 2 is the safe default, 1).
    pub fn from_int(v: i64) -> FlushAtCommit {
        match v {
            0 => FlushAtCommit::Background,
            2 => FlushAtCommit::Write,
            _ => FlushAtCommit::Sync,
        }
    }
}

/// How a redo log starts: its file and the initial values of its variables.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RedoConfig {
    /// The directory (created if missing) that holds the file.
    pub dir: PathBuf,
    /// The file's name in `dir`: [`REDO_FILE`] for the redo log, `<basename>.000001` for the
    /// binary log.
    pub file: String,
    /// Bytes in the ring after the header (rounded up to whole blocks).
    pub capacity: u64,
    /// `innodb_flush_log_at_trx_commit`.
    pub flush_at_commit: FlushAtCommit,
    /// `innodb_flush_log_at_timeout`, seconds between background flushes.
    pub flush_timeout_s: u64,
    /// `tpbed_log_fsync_us`: 0 syncs with `fdatasync`, otherwise sleeps this long.
    pub fsync_us: u64,
    /// In [`FlushAtCommit::Sync`], sync once every this many commit groups (at least 1): 1
    /// for the redo log, `sync_binlog` for the binary log.
    pub sync_every_groups: u64,
}

impl RedoConfig {
    /// A log in `dir` with MySQL's defaults: flush and sync at every commit
    /// (`innodb_flush_log_at_trx_commit = 1`), background flush every second
    /// (`innodb_flush_log_at_timeout = 1`), real `fdatasync` (`tpbed_log_fsync_us = 0`).
    pub fn in_dir(dir: PathBuf) -> RedoConfig {
        RedoConfig {
            dir,
            file: REDO_FILE.to_string(),
            capacity: DEFAULT_CAPACITY,
            flush_at_commit: FlushAtCommit::Sync,
            flush_timeout_s: 1,
            fsync_us: 0,
            sync_every_groups: 1,
        }
    }
}

/// The log's counters at one moment (for `SHOW GLOBAL STATUS` and tests).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct RedoStats {
    /// `Innodb_log_write_requests`: commits that appended to the log.
    pub write_requests: u64,
    /// `Innodb_log_writes`: write calls to the redo file.
    pub log_writes: u64,
    /// `Innodb_os_log_written`: bytes written to the redo file (whole blocks).
    pub os_log_written: u64,
    /// `Innodb_os_log_fsyncs`: syncs of the redo file (emulated ones included).
    pub fsyncs: u64,
    /// `Innodb_os_log_pending_fsyncs`: syncs in progress now.
    pub pending_fsyncs: u64,
    /// `Innodb_os_log_pending_writes`: writes in progress now.
    pub pending_writes: u64,
    /// `Innodb_redo_log_current_lsn`: bytes appended so far.
    pub current_lsn: u64,
    /// `Innodb_redo_log_flushed_to_disk_lsn`: bytes written and synced so far.
    pub flushed_lsn: u64,
}

/// The redo log of one server: shared by every session, called once per committing
/// read-write transaction through [`RedoLog::commit`].
#[derive(Debug)]
pub struct RedoLog {
    inner: Arc<Inner>,
    background: Option<JoinHandle<()>>,
    path: PathBuf,
}

/// State shared with the background thread.
#[derive(Debug)]
struct Inner {
    file: File,
    capacity: u64,
    state: Mutex<State>,
    /// Signalled when a flush ends (followers wait on it).
    flushed: Condvar,
    /// Wakes the background thread (shutdown, timeout change).
    wake: Condvar,
    flush_at_commit: AtomicU8,
    flush_timeout_s: AtomicU64,
    fsync_us: AtomicU64,
    sync_every_groups: AtomicU64,
    counters: Counters,
    io_error_logged: AtomicBool,
}

/// Positions in the log, guarded by [`Inner::state`].
#[derive(Debug, Default)]
struct State {
    /// End of the appended log.
    lsn: u64,
    /// End of what is written to the file.
    written: u64,
    /// End of what is written and synced.
    flushed: u64,
    /// End of the last commit group done in [`FlushAtCommit::Sync`]: synced, or written in a
    /// group that `sync_every_groups` lets go without a sync.
    group_done: u64,
    /// Commit groups written since the last sync.
    groups_unsynced: u64,
    /// A leader is writing or syncing.
    leader: bool,
    /// The log is stopping (the background thread ends).
    shutdown: bool,
}

#[derive(Debug, Default)]
struct Counters {
    write_requests: AtomicU64,
    log_writes: AtomicU64,
    os_log_written: AtomicU64,
    fsyncs: AtomicU64,
    pending_fsyncs: AtomicU64,
    pending_writes: AtomicU64,
}

/// What a caller of [`Inner::flush_up_to`] needs before it returns.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Need {
    Written,
    /// A commit in [`FlushAtCommit::Sync`]: its group is done (synced when it is the Nth).
    Group,
    Synced,
}

impl State {
    fn covers(&self, lsn: u64, need: Need) -> bool {
        match need {
            Need::Written => self.written >= lsn,
            Need::Group => self.group_done >= lsn || self.flushed >= lsn,
            Need::Synced => self.flushed >= lsn,
        }
    }
}

impl RedoLog {
    /// Opens (creating or truncating) the redo file of `cfg` and starts the background flush
    /// thread.
    pub fn open(cfg: RedoConfig) -> std::io::Result<RedoLog> {
        std::fs::create_dir_all(&cfg.dir)?;
        let path = cfg.dir.join(&cfg.file);
        let file = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(true)
            .open(&path)?;
        let capacity = cfg.capacity.max(BLOCK).div_ceil(BLOCK) * BLOCK;
        let mut header = vec![0u8; HEADER as usize];
        let text = format!(
            "tpbed log {}: header {HEADER} bytes, then a ring of {capacity} bytes; \
             not recoverable (tpbed keeps its data in memory)\n",
            cfg.file
        );
        let n = text.len().min(header.len());
        header[..n].copy_from_slice(&text.as_bytes()[..n]);
        file.write_all_at(&header, 0)?;
        file.set_len(HEADER + capacity)?;
        file.sync_all()?;
        let inner = Arc::new(Inner {
            file,
            capacity,
            state: Mutex::new(State::default()),
            flushed: Condvar::new(),
            wake: Condvar::new(),
            flush_at_commit: AtomicU8::new(cfg.flush_at_commit as u8),
            flush_timeout_s: AtomicU64::new(cfg.flush_timeout_s.max(1)),
            fsync_us: AtomicU64::new(cfg.fsync_us),
            sync_every_groups: AtomicU64::new(cfg.sync_every_groups.max(1)),
            counters: Counters::default(),
            io_error_logged: AtomicBool::new(false),
        });
        let bg = inner.clone();
        let background = std::thread::Builder::new()
            .name(
                if cfg.file == REDO_FILE {
                    "tpbed-redo-flush"
                } else {
                    "tpbed-binlog"
                }
                .into(),
            )
            .spawn(move || bg.background())?;
        Ok(RedoLog {
            inner,
            background: Some(background),
            path,
        })
    }

    /// Makes one committing transaction's redo durable as `innodb_flush_log_at_trx_commit`
    /// says: appends `redo_bytes` plus a commit record, then returns at once (0), after the
    /// bytes are written (2), or after they are written and synced (1), with group commit
    /// (in 1, a group that `sync_every_groups` exempts is only written).
    /// Call it once per committing read-write transaction, after its changes are applied and
    /// before the OK packet; read-only transactions do not call it.
    pub fn commit(&self, redo_bytes: u64) {
        let inner = &*self.inner;
        inner
            .counters
            .write_requests
            .fetch_add(1, Ordering::Relaxed);
        let mode = self.flush_at_commit();
        let lsn = {
            let mut st = inner.state();
            st.lsn += redo_bytes.saturating_add(COMMIT_RECORD_BYTES);
            st.lsn
        };
        match mode {
            FlushAtCommit::Background => {}
            FlushAtCommit::Write => inner.flush_up_to(lsn, Need::Written),
            FlushAtCommit::Sync => inner.flush_up_to(lsn, Need::Group),
        }
    }

    /// The mode in force.
    pub fn flush_at_commit(&self) -> FlushAtCommit {
        FlushAtCommit::from_int(i64::from(
            self.inner.flush_at_commit.load(Ordering::Relaxed),
        ))
    }

    /// Changes `innodb_flush_log_at_trx_commit` for the commits that start from now on.
    pub fn set_flush_at_commit(&self, mode: FlushAtCommit) {
        self.inner
            .flush_at_commit
            .store(mode as u8, Ordering::Relaxed);
    }

    /// `innodb_flush_log_at_timeout` in force (seconds).
    pub fn flush_timeout_s(&self) -> u64 {
        self.inner.flush_timeout_s.load(Ordering::Relaxed)
    }

    /// Commit groups per sync in [`FlushAtCommit::Sync`] (`sync_binlog` for the binary log).
    pub fn sync_every_groups(&self) -> u64 {
        self.inner.sync_every_groups.load(Ordering::Relaxed)
    }

    /// Changes the commit groups per sync (at least 1) for the groups that start from now on.
    pub fn set_sync_every_groups(&self, n: u64) {
        self.inner
            .sync_every_groups
            .store(n.max(1), Ordering::Relaxed);
    }

    /// `tpbed_log_fsync_us` in force.
    pub fn fsync_us(&self) -> u64 {
        self.inner.fsync_us.load(Ordering::Relaxed)
    }

    /// Changes `innodb_flush_log_at_timeout` (seconds, at least 1); the background thread
    /// takes the new period at once.
    pub fn set_flush_timeout_s(&self, secs: u64) {
        self.inner
            .flush_timeout_s
            .store(secs.max(1), Ordering::Relaxed);
        let _st = self.inner.state();
        self.inner.wake.notify_all();
    }

    /// Changes `tpbed_log_fsync_us` (0: real `fdatasync`) for the syncs that start from now on.
    pub fn set_fsync_us(&self, us: u64) {
        self.inner.fsync_us.store(us, Ordering::Relaxed);
    }

    /// The counters and positions now.
    pub fn stats(&self) -> RedoStats {
        let c = &self.inner.counters;
        let (current_lsn, flushed_lsn) = {
            let st = self.inner.state();
            (st.lsn, st.flushed)
        };
        RedoStats {
            write_requests: c.write_requests.load(Ordering::Relaxed),
            log_writes: c.log_writes.load(Ordering::Relaxed),
            os_log_written: c.os_log_written.load(Ordering::Relaxed),
            fsyncs: c.fsyncs.load(Ordering::Relaxed),
            pending_fsyncs: c.pending_fsyncs.load(Ordering::Relaxed),
            pending_writes: c.pending_writes.load(Ordering::Relaxed),
            current_lsn,
            flushed_lsn,
        }
    }

    /// `SHOW GLOBAL STATUS` rows with MySQL's names (server-wide; not reset by FLUSH STATUS,
    /// as in MySQL).
    pub fn status_rows(&self) -> Vec<(String, String)> {
        let s = self.stats();
        [
            ("Innodb_log_write_requests", s.write_requests),
            ("Innodb_log_writes", s.log_writes),
            ("Innodb_os_log_fsyncs", s.fsyncs),
            ("Innodb_os_log_pending_fsyncs", s.pending_fsyncs),
            ("Innodb_os_log_pending_writes", s.pending_writes),
            ("Innodb_os_log_written", s.os_log_written),
            ("Innodb_redo_log_current_lsn", s.current_lsn),
            ("Innodb_redo_log_flushed_to_disk_lsn", s.flushed_lsn),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
    }

    /// The redo file's path.
    pub fn path(&self) -> &Path {
        &self.path
    }
}

impl Drop for RedoLog {
    fn drop(&mut self) {
        self.inner.state().shutdown = true;
        self.inner.wake.notify_all();
        if let Some(h) = self.background.take() {
            let _ = h.join();
        }
    }
}

impl Inner {
    fn state(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Returns when the log is written (or written and synced) at least up to `lsn`, leading
    /// a flush of everything appended so far when no flush is running.
    fn flush_up_to(&self, lsn: u64, need: Need) {
        let mut waiting: Option<wait::WaitGuard> = None;
        let mut st = self.state();
        loop {
            if st.covers(lsn, need) {
                return;
            }
            if waiting.is_none() {
                // Tell the pool before blocking, without holding the log's mutex meanwhile.
                drop(st);
                waiting.get_or_insert_with(|| wait::begin(WaitKind::CommitFlush));
                st = self.state();
                continue;
            }
            if st.leader {
                st = self.flushed.wait(st).unwrap_or_else(|e| e.into_inner());
                continue;
            }
            st.leader = true;
            let target = st.lsn;
            let from = st.written;
            let every = self.sync_every_groups.load(Ordering::Relaxed);
            let sync = match need {
                Need::Written => false,
                Need::Group => st.groups_unsynced + 1 >= every,
                Need::Synced => true,
            };
            drop(st);
            if target > from {
                self.write(from, target);
            }
            if sync {
                self.sync();
            }
            st = self.state();
            st.written = st.written.max(target);
            if sync {
                st.flushed = st.flushed.max(target);
                st.groups_unsynced = 0;
            } else if need == Need::Group {
                st.groups_unsynced += 1;
            }
            if need == Need::Group {
                st.group_done = st.group_done.max(target);
            }
            st.leader = false;
            self.flushed.notify_all();
        }
    }

    /// Writes the blocks that hold log bytes `from..to` (the leader only).
    fn write(&self, from: u64, to: u64) {
        let end = to.div_ceil(BLOCK) * BLOCK;
        // Only the last ring's worth can still be in the file.
        let mut pos = (from / BLOCK * BLOCK).max(end.saturating_sub(self.capacity));
        let c = &self.counters;
        c.pending_writes.fetch_add(1, Ordering::Relaxed);
        let mut buf = Vec::new();
        while pos < end {
            let off = pos % self.capacity;
            let len = (end - pos).min(self.capacity - off).min(MAX_WRITE);
            buf.clear();
            buf.resize(len as usize, 0);
            for (i, block) in buf.chunks_mut(BLOCK as usize).enumerate() {
                let no = pos / BLOCK + i as u64;
                block[..8].copy_from_slice(&no.to_le_bytes());
            }
            if let Err(e) = self.file.write_all_at(&buf, HEADER + off) {
                self.io_error("write", &e);
            }
            c.log_writes.fetch_add(1, Ordering::Relaxed);
            c.os_log_written.fetch_add(len, Ordering::Relaxed);
            pos += len;
        }
        c.pending_writes.fetch_sub(1, Ordering::Relaxed);
    }

    /// Syncs the file, or sleeps `tpbed_log_fsync_us` instead (the leader only).
    fn sync(&self) {
        let c = &self.counters;
        c.pending_fsyncs.fetch_add(1, Ordering::Relaxed);
        let us = self.fsync_us.load(Ordering::Relaxed);
        if us > 0 {
            std::thread::sleep(Duration::from_micros(us));
        } else if let Err(e) = self.file.sync_data() {
            self.io_error("fdatasync", &e);
        }
        c.fsyncs.fetch_add(1, Ordering::Relaxed);
        c.pending_fsyncs.fetch_sub(1, Ordering::Relaxed);
    }

    fn io_error(&self, what: &str, e: &std::io::Error) {
        if !self.io_error_logged.swap(true, Ordering::Relaxed) {
            crate::log::emit(
                crate::log::Level::Error,
                &format!(
                    "redo log {what} failed: {e} (further errors are not logged; commits go on)"
                ),
            );
        }
    }

    /// The background thread: every `innodb_flush_log_at_timeout` seconds, writes and syncs
    /// whatever commits in modes 0 and 2 left behind.
    fn background(&self) {
        let mut last = Instant::now();
        let mut st = self.state();
        loop {
            if st.shutdown {
                return;
            }
            let period = Duration::from_secs(self.flush_timeout_s.load(Ordering::Relaxed));
            let due = last + period;
            let now = Instant::now();
            if now < due {
                st = self
                    .wake
                    .wait_timeout(st, due - now)
                    .unwrap_or_else(|e| e.into_inner())
                    .0;
                continue;
            }
            last = now;
            let pending = st.lsn > st.flushed;
            let lsn = st.lsn;
            drop(st);
            if pending {
                self.flush_up_to(lsn, Need::Synced);
            }
            st = self.state();
        }
    }
}

#[cfg(test)]
mod tests;
