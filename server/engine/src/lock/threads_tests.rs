//! Multi-threaded tests: transactions on threads waiting for each other — deadlocks get
//! exactly one victim, timeouts fire on time, NOWAIT/SKIP LOCKED never block, a waiter is
//! granted when its blocker releases, KILL QUERY ends a wait, FCFS, CATS and VATS grant in
//! their orders.

use std::sync::mpsc;
use std::sync::Arc;
use std::thread;
use std::time::{Duration, Instant};

use super::tests::{at, key};
use super::*;

fn sys(schedule: ScheduleAlgorithm, deadlock_detect: bool) -> Arc<LockSys> {
    Arc::new(LockSys::new(LockConfig {
        shards: 16,
        schedule,
        deadlock_detect,
    }))
}

fn lock_x(s: &LockSys, t: &LockTrx, k: u64) -> Result<Acquired, LockError> {
    s.lock_rec(t, at(&key(k)), RecLockMode::X_REC_NOT_GAP, WaitPolicy::Wait)
}

/// Locks `k` X,REC_NOT_GAP, waiting up to `timeout` if needed.
fn lock_wait(s: &LockSys, t: &LockTrx, k: u64, timeout: Duration) -> Result<(), LockError> {
    match lock_x(s, t, k)? {
        Acquired::Granted => Ok(()),
        Acquired::Wait(w) => w.wait(timeout),
        Acquired::Skipped => unreachable!("Wait policy never skips"),
    }
}

/// Polls until `f` holds (at most 5 s).
fn eventually(mut f: impl FnMut() -> bool) {
    let t = Instant::now();
    while !f() {
        assert!(
            t.elapsed() < Duration::from_secs(5),
            "condition not reached"
        );
        thread::sleep(Duration::from_millis(2));
    }
}

/// Runs each transaction of a cycle on its own thread: it holds key i, then wants key
/// i+1 (mod n), and ends (releases everything) once its wait is over — or, with
/// `end_together`, once every wait is over. Returns each one's result.
fn cycle(
    s: &Arc<LockSys>,
    trxs: &[LockTrx],
    timeout: Duration,
    end_together: bool,
) -> Vec<Result<(), LockError>> {
    let barrier = Arc::new(std::sync::Barrier::new(trxs.len()));
    let n = trxs.len() as u64;
    for (i, t) in trxs.iter().enumerate() {
        assert!(matches!(lock_x(s, t, i as u64), Ok(Acquired::Granted)));
    }
    let handles: Vec<_> = trxs
        .iter()
        .enumerate()
        .map(|(i, t)| {
            let (s, t, barrier) = (Arc::clone(s), t.clone(), Arc::clone(&barrier));
            thread::spawn(move || {
                let r = lock_wait(&s, &t, (i as u64 + 1) % n, timeout);
                if end_together {
                    barrier.wait();
                }
                s.release_all(&t);
                r
            })
        })
        .collect();
    handles
        .into_iter()
        .map(|h| h.join().expect("thread"))
        .collect()
}

#[test]
fn two_trx_deadlock_has_exactly_one_victim_the_lighter() {
    let s = sys(ScheduleAlgorithm::Cats, true);
    let a = s.begin_trx(1, 101, 11);
    let b = s.begin_trx(2, 102, 12);
    a.set_undo_records(10);
    let res = cycle(&s, &[a, b], Duration::from_secs(20), false);
    assert_eq!(res[0], Ok(()), "the heavier one survives");
    assert_eq!(res[1], Err(LockError::Deadlock));
    assert_eq!(s.stats().deadlocks, 1);
    let report = s.latest_deadlock().expect("report");
    assert_eq!(report.trxs.len(), 2);
    assert_eq!(report.trxs[report.victim].trx_id, 2);
    let text = report.render(&super::tests::Names);
    assert!(text.contains("LATEST DETECTED DEADLOCK"), "{text}");
    assert!(text.contains("*** WE ROLL BACK TRANSACTION"), "{text}");
    assert!(text.contains("lock_mode X locks rec but not gap"), "{text}");
}

#[test]
fn three_trx_deadlock_has_exactly_one_victim() {
    let s = sys(ScheduleAlgorithm::Cats, true);
    let trxs: Vec<LockTrx> = (1..=3).map(|i| s.begin_trx(i, 100 + i, i)).collect();
    let res = cycle(&s, &trxs, Duration::from_secs(20), false);
    let victims = res
        .iter()
        .filter(|r| **r == Err(LockError::Deadlock))
        .count();
    assert_eq!(victims, 1, "{res:?}");
    assert_eq!(res.iter().filter(|r| r.is_ok()).count(), 2, "{res:?}");
    assert_eq!(s.stats().deadlocks, 1);
}

#[test]
fn without_detection_a_deadlock_ends_by_timeout() {
    let s = sys(ScheduleAlgorithm::Cats, false);
    let trxs: Vec<LockTrx> = (1..=2).map(|i| s.begin_trx(i, 100 + i, i)).collect();
    let res = cycle(&s, &trxs, Duration::from_millis(300), true);
    // A timed-out transaction keeps its locks (1205 rolls back only the statement), so
    // both time out.
    assert_eq!(
        res,
        vec![Err(LockError::WaitTimeout), Err(LockError::WaitTimeout)]
    );
    assert_eq!(s.stats().deadlocks, 0);
    assert_eq!(s.stats().lock_timeouts, 2);
}

#[test]
fn timeout_fires_at_the_configured_time_and_keeps_earlier_locks() {
    let s = sys(ScheduleAlgorithm::Cats, true);
    let a = s.begin_trx(1, 101, 11);
    let b = s.begin_trx(2, 102, 12);
    assert!(matches!(lock_x(&s, &a, 1), Ok(Acquired::Granted)));
    assert!(matches!(lock_x(&s, &b, 2), Ok(Acquired::Granted)));
    let t = Instant::now();
    let r = lock_wait(&s, &b, 1, Duration::from_millis(250));
    let took = t.elapsed();
    assert_eq!(r, Err(LockError::WaitTimeout));
    assert!(took >= Duration::from_millis(250), "{took:?}");
    // Generous upper bound: CI machines are shared; the wait ends on its deadline, not by
    // polling, so it is normally within a few ms.
    assert!(took < Duration::from_millis(250 + 1500), "{took:?}");
    let info = s.trx_lock_info(&b);
    assert_eq!(
        info.rows_locked, 1,
        "the earlier lock stays, the waiting one is gone"
    );
    assert!(info.requested_lock_id.is_none());
    let st = s.stats();
    assert_eq!(st.row_lock_waits, 1);
    assert!(
        st.row_lock_time_ms >= 250 && st.row_lock_time_max_ms >= 250,
        "{st:?}"
    );
    assert_eq!(st.row_lock_current_waits, 0);
    s.release_all(&a);
    s.release_all(&b);
}

#[test]
fn nowait_and_skip_locked_never_block() {
    let s = sys(ScheduleAlgorithm::Cats, true);
    let a = s.begin_trx(1, 101, 11);
    let b = s.begin_trx(2, 102, 12);
    for k in 0..1000 {
        assert!(matches!(lock_x(&s, &a, k), Ok(Acquired::Granted)));
    }
    let t = Instant::now();
    for k in 0..1000 {
        let skip = s.lock_rec(&b, at(&key(k)), RecLockMode::X, WaitPolicy::SkipLocked);
        assert!(matches!(skip, Ok(Acquired::Skipped)));
        let no = s.lock_rec(&b, at(&key(k)), RecLockMode::X, WaitPolicy::NoWait);
        assert_eq!(no.unwrap_err(), LockError::NoWait);
    }
    assert!(t.elapsed() < Duration::from_secs(1));
    assert_eq!(s.stats().row_lock_waits, 0);
    assert_eq!(s.trx_lock_info(&b).rows_locked, 0, "nothing enqueued");
    s.release_all(&a);
    s.release_all(&b);
}

#[test]
fn waiter_is_granted_when_the_blocker_releases() {
    let s = sys(ScheduleAlgorithm::Cats, true);
    let a = s.begin_trx(1, 101, 11);
    let b = s.begin_trx(2, 102, 12);
    assert!(matches!(lock_x(&s, &a, 1), Ok(Acquired::Granted)));
    let (s2, b2) = (Arc::clone(&s), b.clone());
    let h = thread::spawn(move || {
        let t = Instant::now();
        let r = lock_wait(&s2, &b2, 1, Duration::from_secs(20));
        (r, t.elapsed())
    });
    eventually(|| s.stats().row_lock_current_waits == 1);
    thread::sleep(Duration::from_millis(50));
    s.release_all(&a);
    let (r, took) = h.join().expect("thread");
    assert_eq!(r, Ok(()));
    assert!(took >= Duration::from_millis(50));
    assert!(s
        .data_locks(&super::tests::Names)
        .iter()
        .any(|r| r.engine_transaction_id == 2 && r.lock_status == "GRANTED"));
    s.release_all(&b);
}

#[test]
fn kill_query_ends_a_wait() {
    let s = sys(ScheduleAlgorithm::Cats, true);
    let a = s.begin_trx(1, 101, 11);
    let b = s.begin_trx(2, 102, 12);
    assert!(matches!(lock_x(&s, &a, 1), Ok(Acquired::Granted)));
    let (s2, b2) = (Arc::clone(&s), b.clone());
    let h = thread::spawn(move || lock_wait(&s2, &b2, 1, Duration::from_secs(20)));
    eventually(|| s.stats().row_lock_current_waits == 1);
    b.interrupt();
    assert_eq!(h.join().expect("thread"), Err(LockError::Interrupted));
    assert!(s.data_lock_waits().is_empty());
    b.clear_interrupt();
    s.release_all(&a);
    assert_eq!(lock_wait(&s, &b, 1, Duration::from_secs(1)), Ok(()));
    s.release_all(&b);
}

/// H holds key 1. A, then B, wait for it; B also holds keys 2 and 3, which C and D wait
/// for, so B blocks three transactions and A one. Returns who got key 1 first.
fn first_granted(schedule: ScheduleAlgorithm) -> TrxId {
    let s = sys(schedule, true);
    let [h, a, b, c, d] = [1u64, 2, 3, 4, 5].map(|i| s.begin_trx(i, 100 + i, i));
    assert!(matches!(lock_x(&s, &h, 1), Ok(Acquired::Granted)));
    assert!(matches!(lock_x(&s, &b, 2), Ok(Acquired::Granted)));
    assert!(matches!(lock_x(&s, &b, 3), Ok(Acquired::Granted)));
    let (tx, rx) = mpsc::channel::<TrxId>();
    let spawn = |t: &LockTrx, k: u64| {
        let (s, t, tx) = (Arc::clone(&s), t.clone(), tx.clone());
        thread::spawn(move || {
            lock_wait(&s, &t, k, Duration::from_secs(20)).expect("granted");
            tx.send(t.id()).expect("send");
            thread::sleep(Duration::from_millis(20));
            s.release_all(&t);
        })
    };
    let mut hs = vec![spawn(&a, 1)];
    eventually(|| s.stats().row_lock_current_waits == 1);
    hs.push(spawn(&b, 1));
    eventually(|| s.stats().row_lock_current_waits == 2);
    hs.push(spawn(&c, 2));
    hs.push(spawn(&d, 3));
    // The background thread has weighed B: itself, C and D.
    eventually(|| s.trx_lock_info(&b).schedule_weight == Some(3));
    // Under FCFS B also waits for A (an earlier waiter blocks), so A weighs all four.
    let a_weight = if schedule == ScheduleAlgorithm::Cats {
        1
    } else {
        4
    };
    assert_eq!(s.trx_lock_info(&a).schedule_weight, Some(a_weight));
    s.release_all(&h);
    let first = rx.recv_timeout(Duration::from_secs(10)).expect("a grant");
    for t in hs {
        t.join().expect("thread");
    }
    first
}

#[test]
fn fcfs_grants_in_arrival_order() {
    assert_eq!(first_granted(ScheduleAlgorithm::Fcfs), 2);
}

#[test]
fn cats_grants_the_heaviest_first() {
    assert_eq!(first_granted(ScheduleAlgorithm::Cats), 3);
}

/// H holds key 1; A waits for it, then E, whose transaction began a second before any other.
/// Returns who got key 1 first.
fn first_granted_with_an_elder(schedule: ScheduleAlgorithm) -> TrxId {
    let s = sys(schedule, true);
    let elder = Instant::now() - Duration::from_secs(1);
    let [h, a] = [1u64, 2].map(|i| s.begin_trx(i, 100 + i, i));
    let e = s.begin_trx_started(3, 103, 3, elder);
    assert!(matches!(lock_x(&s, &h, 1), Ok(Acquired::Granted)));
    let (tx, rx) = mpsc::channel::<TrxId>();
    let spawn = |t: &LockTrx| {
        let (s, t, tx) = (Arc::clone(&s), t.clone(), tx.clone());
        thread::spawn(move || {
            lock_wait(&s, &t, 1, Duration::from_secs(20)).expect("granted");
            tx.send(t.id()).expect("send");
            thread::sleep(Duration::from_millis(20));
            s.release_all(&t);
        })
    };
    let mut hs = vec![spawn(&a)];
    eventually(|| s.stats().row_lock_current_waits == 1);
    hs.push(spawn(&e));
    eventually(|| s.stats().row_lock_current_waits == 2);
    s.release_all(&h);
    let first = rx.recv_timeout(Duration::from_secs(10)).expect("a grant");
    for t in hs {
        t.join().expect("thread");
    }
    first
}

#[test]
fn vats_grants_the_eldest_transaction_first() {
    assert_eq!(first_granted_with_an_elder(ScheduleAlgorithm::Vats), 3);
    assert_eq!(first_granted_with_an_elder(ScheduleAlgorithm::Fcfs), 2);
}

/// A deadlock whose cycle runs through a waiter queued behind another waiter: T2 holds S on
/// key 1 and waits for T3's key 5; T1 waits for X on key 1 (behind T2's S); T3's S on key 1
/// queues behind T1's waiting X (no barging) although no granted lock conflicts with it.
/// T3 → T1 → T2 → T3: one victim, the lightest (T1), after which T3 is granted.
#[test]
fn deadlock_through_a_queued_waiter() {
    let s = sys(ScheduleAlgorithm::Cats, true);
    let [t1, t2, t3] = [1u64, 2, 3].map(|i| s.begin_trx(i, 100 + i, i));
    let k1 = key(1);
    let s_lock = |t: &LockTrx| s.lock_rec(t, at(&k1), RecLockMode::S_REC_NOT_GAP, WaitPolicy::Wait);
    assert!(matches!(s_lock(&t2), Ok(Acquired::Granted)));
    assert!(matches!(lock_x(&s, &t3, 5), Ok(Acquired::Granted)));
    t2.set_undo_records(5);
    t3.set_undo_records(5);
    let run = |t: &LockTrx, w: LockWait| {
        let (s, t) = (Arc::clone(&s), t.clone());
        thread::spawn(move || {
            let r = w.wait(Duration::from_secs(20));
            s.release_all(&t);
            r
        })
    };
    let wait_of = |r: Result<Acquired, LockError>| match r {
        Ok(Acquired::Wait(w)) => w,
        other => panic!("{other:?}"),
    };
    let h1 = run(&t1, wait_of(lock_x(&s, &t1, 1)));
    let h2 = run(&t2, wait_of(lock_x(&s, &t2, 5)));
    let h3 = run(&t3, wait_of(s_lock(&t3)));
    let r1 = h1.join().expect("t1");
    let r3 = h3.join().expect("t3");
    let r2 = h2.join().expect("t2");
    assert_eq!((r1, r2, r3), (Err(LockError::Deadlock), Ok(()), Ok(())));
    assert_eq!(s.stats().deadlocks, 1);
}

/// Eight threads run short transactions that X- or S-lock three random records of ten,
/// waiting as needed and retrying deadlock victims, under both policies. Every transaction
/// must finish without a timeout (no lost wake-up, no undetected deadlock), and a sampler
/// must never see two transactions granted conflicting record locks on one record.
fn stress(schedule: ScheduleAlgorithm) {
    use std::sync::atomic::{AtomicBool, AtomicU64, Ordering::Relaxed};
    let s = sys(schedule, true);
    let done = Arc::new(AtomicBool::new(false));
    let next_id = Arc::new(AtomicU64::new(1));
    let sampler = {
        let (s, done) = (Arc::clone(&s), Arc::clone(&done));
        thread::spawn(move || {
            let mut samples = 0u64;
            while !done.load(Relaxed) {
                let mut by_key: std::collections::HashMap<String, Vec<(TrxId, &str)>> =
                    Default::default();
                for r in s.data_locks(&super::tests::Names) {
                    if r.lock_status == "GRANTED" && r.lock_type == "RECORD" {
                        by_key
                            .entry(r.lock_data.unwrap_or_default())
                            .or_default()
                            .push((r.engine_transaction_id, r.lock_mode));
                    }
                }
                for (k, v) in by_key {
                    for a in &v {
                        for b in &v {
                            let x = a.1.starts_with('X') || b.1.starts_with('X');
                            assert!(a.0 == b.0 || !x, "conflicting grants on {k}: {v:?}");
                        }
                    }
                }
                samples += 1;
            }
            samples
        })
    };
    let start = Arc::new(std::sync::Barrier::new(8));
    let workers: Vec<_> = (0..8u64)
        .map(|w| {
            let (s, next_id, start) = (Arc::clone(&s), Arc::clone(&next_id), Arc::clone(&start));
            thread::spawn(move || {
                start.wait();
                let mut rng =
                    0x9E37_79B9_7F4A_7C15u64 ^ (w + 1).wrapping_mul(0xA24B_AED4_963E_E407);
                let mut rand = move |n: u64| {
                    rng ^= rng << 13;
                    rng ^= rng >> 7;
                    rng ^= rng << 17;
                    rng % n
                };
                let mut victims = 0;
                let mut committed = 0;
                while committed < 150 {
                    let t = s.begin_trx(next_id.fetch_add(1, Relaxed), w, w);
                    let mut outcome = Ok(());
                    for _ in 0..3 {
                        let k = key(rand(10));
                        let mode = match rand(4) {
                            0 => RecLockMode::S,
                            1 => RecLockMode::S_REC_NOT_GAP,
                            2 => RecLockMode::X,
                            _ => RecLockMode::X_REC_NOT_GAP,
                        };
                        outcome = match s.lock_rec(&t, at(&k), mode, WaitPolicy::Wait) {
                            Ok(Acquired::Granted) => Ok(()),
                            Ok(Acquired::Wait(wt)) => wt.wait(Duration::from_secs(10)),
                            other => panic!("{other:?}"),
                        };
                        if outcome.is_err() {
                            break;
                        }
                        // Hold the locks a moment, so that the workers overlap.
                        thread::sleep(Duration::from_micros(100));
                    }
                    s.release_all(&t);
                    match outcome {
                        Ok(()) => committed += 1,
                        Err(LockError::Deadlock) => victims += 1,
                        Err(e) => panic!("worker {w}: {e:?}"),
                    }
                }
                victims
            })
        })
        .collect();
    let victims: u64 = workers.into_iter().map(|h| h.join().expect("worker")).sum();
    done.store(true, Relaxed);
    assert!(sampler.join().expect("sampler") > 0);
    let st = s.stats();
    eprintln!("{schedule:?}: {st:?}");
    assert!(st.row_lock_waits > 0, "the workload contends");
    assert_eq!(s.stats().deadlocks, victims);
    assert_eq!(s.stats().lock_timeouts, 0);
    assert_eq!(s.stats().row_lock_current_waits, 0);
    assert!(s.data_locks(&super::tests::Names).is_empty());
}

#[test]
fn stress_cats() {
    stress(ScheduleAlgorithm::Cats);
}

#[test]
fn stress_fcfs() {
    stress(ScheduleAlgorithm::Fcfs);
}
