//! Group commit, the three flush modes, the counters and run-time changes.

use super::*;
use std::cell::Cell;
use std::rc::Rc;
use std::sync::Barrier;

/// A redo log in a scratch directory of its own, with the background flush effectively off
/// unless a test turns it on.
fn scratch_log(name: &str, mode: FlushAtCommit, fsync_us: u64) -> (RedoLog, PathBuf) {
    let dir = std::env::temp_dir().join(format!("tpbed-redo-test-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let log = RedoLog::open(RedoConfig {
        dir: dir.join(REDO_DIR),
        file: REDO_FILE.to_string(),
        capacity: DEFAULT_CAPACITY,
        flush_at_commit: mode,
        flush_timeout_s: 2700,
        fsync_us,
        sync_every_groups: 1,
    })
    .unwrap();
    (log, dir)
}

/// Runs `threads` committers of `per_thread` commits each, started together.
fn commit_concurrently(log: &RedoLog, threads: usize, per_thread: usize, bytes: u64) {
    let start = Barrier::new(threads);
    std::thread::scope(|s| {
        for _ in 0..threads {
            s.spawn(|| {
                start.wait();
                for _ in 0..per_thread {
                    log.commit(bytes);
                }
            });
        }
    });
}

#[test]
fn redo_concurrent_committers_share_emulated_fsyncs() {
    let (log, dir) = scratch_log("group-sleep", FlushAtCommit::Sync, 2000);
    commit_concurrently(&log, 16, 10, 200);
    let s = log.stats();
    eprintln!("160 commits on 16 threads, 2 ms syncs: {} fsyncs", s.fsyncs);
    assert_eq!(s.write_requests, 160);
    assert!(s.fsyncs > 0);
    // Each 2 ms sync covers everyone who queued during the previous one.
    assert!(s.fsyncs < 160 / 2, "{s:?}");
    assert_eq!(s.flushed_lsn, s.current_lsn);
    assert_eq!(s.current_lsn, 160 * (200 + COMMIT_RECORD_BYTES));
    assert_eq!(
        s.log_writes, s.fsyncs,
        "one write per group in mode 1: {s:?}"
    );
    assert_eq!((s.pending_fsyncs, s.pending_writes), (0, 0));
    drop(log);
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn redo_concurrent_committers_share_real_fdatasyncs() {
    let (log, dir) = scratch_log("group-real", FlushAtCommit::Sync, 0);
    let t = Instant::now();
    commit_concurrently(&log, 16, 10, 200);
    let took = t.elapsed();
    let s = log.stats();
    eprintln!(
        "160 commits on 16 threads with fdatasync: {} fsyncs in {took:?}",
        s.fsyncs
    );
    assert_eq!(s.write_requests, 160);
    // An fdatasync that returns at once (tmpfs) may leave nobody to share it with.
    assert!(s.fsyncs > 0 && s.fsyncs <= 160, "{s:?}");
    assert_eq!(s.flushed_lsn, s.current_lsn);
    drop(log);
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn redo_single_committer_syncs_once_per_commit_and_counts_add_up() {
    let (log, dir) = scratch_log("single", FlushAtCommit::Sync, 1);
    for _ in 0..10 {
        log.commit(1000);
    }
    let s = log.stats();
    assert_eq!((s.write_requests, s.fsyncs, s.log_writes), (10, 10, 10));
    assert_eq!(s.current_lsn, 10 * (1000 + COMMIT_RECORD_BYTES));
    assert_eq!(s.flushed_lsn, s.current_lsn);
    // Whole blocks, each write rewriting the block the previous one ended in.
    assert_eq!(s.os_log_written % BLOCK, 0);
    assert!(s.os_log_written >= s.current_lsn, "{s:?}");
    assert!(s.os_log_written <= s.current_lsn + 10 * BLOCK, "{s:?}");
    drop(log);
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn redo_modes_0_and_2_take_no_fsync_at_commit_and_modes_switch_at_run_time() {
    let (log, dir) = scratch_log("modes", FlushAtCommit::Background, 0);
    for _ in 0..20 {
        log.commit(100);
    }
    let s = log.stats();
    assert_eq!((s.write_requests, s.log_writes, s.fsyncs), (20, 0, 0));
    assert_eq!(s.flushed_lsn, 0);

    log.set_flush_at_commit(FlushAtCommit::Write);
    assert_eq!(log.flush_at_commit(), FlushAtCommit::Write);
    for _ in 0..20 {
        log.commit(100);
    }
    let s = log.stats();
    assert_eq!(s.write_requests, 40);
    assert_eq!(s.fsyncs, 0);
    assert!(s.log_writes > 0 && s.log_writes <= 20, "{s:?}");
    assert!(
        s.os_log_written >= s.current_lsn,
        "mode 2 wrote mode 0's bytes too: {s:?}"
    );
    assert_eq!(s.flushed_lsn, 0);

    log.set_flush_at_commit(FlushAtCommit::Sync);
    log.commit(100);
    let s = log.stats();
    assert_eq!(s.fsyncs, 1, "one sync covers everything before it: {s:?}");
    assert_eq!(s.flushed_lsn, s.current_lsn);
    drop(log);
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn sync_every_3_groups_syncs_the_third_and_writes_the_others() {
    let (log, dir) = scratch_log("every-3", FlushAtCommit::Sync, 0);
    log.set_sync_every_groups(3);
    assert_eq!(log.sync_every_groups(), 3);
    // One committer: every commit is a group of its own.
    for i in 1..=7u64 {
        log.commit(100);
        let s = log.stats();
        assert_eq!((s.write_requests, s.log_writes), (i, i), "{s:?}");
        assert_eq!(s.fsyncs, i / 3, "after {i} groups: {s:?}");
    }
    let s = log.stats();
    assert_eq!(s.flushed_lsn, 6 * (100 + COMMIT_RECORD_BYTES), "{s:?}");
    assert!(s.current_lsn > s.flushed_lsn);
    log.set_sync_every_groups(0);
    assert_eq!(log.sync_every_groups(), 1, "0 groups per sync reads as 1");
    log.commit(100);
    let s = log.stats();
    assert_eq!((s.fsyncs, s.flushed_lsn), (3, s.current_lsn), "{s:?}");
    drop(log);
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn redo_background_thread_syncs_what_modes_0_and_2_leave() {
    let (log, dir) = scratch_log("background", FlushAtCommit::Write, 0);
    log.commit(100);
    assert_eq!(log.stats().fsyncs, 0);
    log.set_flush_timeout_s(1);
    let deadline = Instant::now() + Duration::from_secs(5);
    while log.stats().flushed_lsn < log.stats().current_lsn && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
    }
    let s = log.stats();
    assert_eq!(s.flushed_lsn, s.current_lsn, "{s:?}");
    assert_eq!(s.fsyncs, 1);

    log.set_flush_at_commit(FlushAtCommit::Background);
    log.commit(100);
    assert_eq!(log.stats().log_writes, s.log_writes);
    let deadline = Instant::now() + Duration::from_secs(5);
    while log.stats().flushed_lsn < log.stats().current_lsn && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
    }
    let t = log.stats();
    assert_eq!(t.flushed_lsn, t.current_lsn, "{t:?}");
    assert_eq!((t.fsyncs, t.log_writes), (2, s.log_writes + 1));
    drop(log);
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn redo_emulated_fsync_takes_its_time_and_switches_back_to_fdatasync() {
    let (log, dir) = scratch_log("fsync-us", FlushAtCommit::Sync, 0);
    log.set_fsync_us(20_000);
    let t = Instant::now();
    log.commit(10);
    assert!(t.elapsed() >= Duration::from_millis(20));
    log.set_fsync_us(0);
    log.commit(10);
    assert_eq!(log.stats().fsyncs, 2);
    drop(log);
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn redo_file_is_a_bounded_ring() {
    let dir = std::env::temp_dir().join(format!("tpbed-redo-test-ring-{}", std::process::id()));
    let log = RedoLog::open(RedoConfig {
        dir: dir.join(REDO_DIR),
        file: REDO_FILE.to_string(),
        capacity: 64 * 1024,
        flush_at_commit: FlushAtCommit::Write,
        flush_timeout_s: 2700,
        fsync_us: 0,
        sync_every_groups: 1,
    })
    .unwrap();
    for _ in 0..100 {
        log.commit(3000);
    }
    // One commit larger than the whole ring writes only the ring's worth.
    log.commit(1 << 20);
    let s = log.stats();
    assert!(s.current_lsn > 4 * 64 * 1024);
    let len = std::fs::metadata(log.path()).unwrap().len();
    assert_eq!(len, HEADER + 64 * 1024);
    drop(log);
    let _ = std::fs::remove_dir_all(dir);
}

#[derive(Default)]
struct Waits {
    begun: Cell<u32>,
    ended: Cell<u32>,
}

impl wait::WaitObserver for Waits {
    fn wait_begin(&self, kind: WaitKind) {
        assert_eq!(kind, WaitKind::CommitFlush);
        self.begun.set(self.begun.get() + 1);
    }
    fn wait_end(&self, _: WaitKind) {
        self.ended.set(self.ended.get() + 1);
    }
}

#[test]
fn redo_commit_wait_is_reported_to_the_pool() {
    let (log, dir) = scratch_log("wait-hook", FlushAtCommit::Sync, 100);
    let obs = Rc::new(Waits::default());
    wait::install(obs.clone());
    log.commit(10);
    assert_eq!((obs.begun.get(), obs.ended.get()), (1, 1));
    log.set_flush_at_commit(FlushAtCommit::Background);
    log.commit(10);
    assert_eq!(obs.begun.get(), 1, "mode 0 does not wait");
    wait::uninstall();
    drop(log);
    let _ = std::fs::remove_dir_all(dir);
}
