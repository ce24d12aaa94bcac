//! The engine: its settings, the state shared between client threads and the reporter, and the
//! threads' start, start-of-load barrier and join. Each thread runs a `worker::Worker`.

use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, AtomicI64, AtomicUsize, Ordering};
use std::sync::{Arc, Barrier, Mutex, OnceLock};
use std::time::{Duration, Instant};

use crate::conn::{Login, WireFactory};
use crate::options::{IgnoreList, IoMode, LoopMode, PsMode};
use crate::script::ScriptFactory;
use crate::stats::{Acc, Fairness};

/// What to run and how.
#[derive(Debug, Clone)]
pub(crate) struct EngineConfig {
    /// Server address (loopback).
    pub(crate) addr: SocketAddr,
    /// Credentials and database.
    pub(crate) login: Login,
    /// Number of connections.
    pub(crate) connections: usize,
    /// Client event-loop threads.
    pub(crate) client_threads: usize,
    /// How the event loops do their I/O.
    pub(crate) io: IoMode,
    /// Measured time (zero: until `events`).
    pub(crate) time: Duration,
    /// Event limit (0: none).
    pub(crate) events: u64,
    /// Load before measuring.
    pub(crate) warmup: Duration,
    /// Events per second (0: back to back).
    pub(crate) rate: f64,
    /// How `rate` is applied.
    pub(crate) loop_mode: LoopMode,
    /// Prepared statements or text.
    pub(crate) ps_mode: PsMode,
    /// Codes that make a lost connection reconnect (2013 etc. must be listed, as in sysbench).
    pub(crate) ignore: IgnoreList,
    /// Give up connecting after this long.
    pub(crate) connect_timeout: Duration,
    /// After the end, wait this long for statements in flight.
    pub(crate) drain: Duration,
    /// Seed for arrival times.
    pub(crate) seed: u64,
}

/// Per-thread state shared with the reporting thread.
#[derive(Debug, Default)]
pub(crate) struct Shard {
    /// Whole measured window up to the last interval the reporter took.
    pub(crate) total: Acc,
    /// Since the last interval sample (the client thread records only here).
    pub(crate) interval: Acc,
    /// Open-loop backlog right now.
    pub(crate) queue: usize,
    /// Connections inside an event right now.
    pub(crate) busy: usize,
    /// Connections that run events.
    pub(crate) active: usize,
}

/// State shared by the engine threads and the caller.
#[derive(Debug)]
pub(crate) struct Shared {
    /// One shard per client thread.
    pub(crate) shards: Vec<Mutex<Shard>>,
    /// Set to stop the run.
    pub(crate) stop: AtomicBool,
    /// First fatal error.
    pub(crate) fatal: Mutex<Option<String>>,
    /// Start of the load (after all connections are ready).
    pub(crate) start: OnceLock<Instant>,
    /// Start of measuring (start + warmup).
    pub(crate) measure_start: OnceLock<Instant>,
    /// Connections established (for progress while connecting).
    pub(crate) connected: AtomicUsize,
    /// Client threads that have finished their load and drained (they close on `stop`).
    pub(crate) drained: AtomicUsize,
    /// Events not yet started (`--events`), or i64::MAX.
    pub(crate) events_left: AtomicI64,
    /// All client threads have connected (plus the caller).
    pub(crate) ready: Barrier,
    /// The caller has set the start times.
    pub(crate) go: Barrier,
    /// The thread that started the engine (the reporter), unparked when a client thread has
    /// drained or the run failed, so it can sleep until its next interval instead of polling.
    pub(crate) reporter: std::thread::Thread,
}

impl Shared {
    /// Records the first fatal error and stops the run.
    pub(crate) fn fail(&self, msg: String) {
        let mut f = self.fatal.lock().expect("fatal lock");
        if f.is_none() {
            *f = Some(msg);
        }
        self.stop.store(true, Ordering::SeqCst);
        self.reporter.unpark();
    }

    /// A client thread has finished its load and drained: counts it and wakes the reporter.
    pub(crate) fn drained(&self) {
        self.drained.fetch_add(1, Ordering::SeqCst);
        self.reporter.unpark();
    }
}

/// What a finished run hands back.
#[derive(Debug)]
pub(crate) struct EngineResult {
    /// Per-connection fairness.
    pub(crate) fairness: Vec<Fairness>,
    /// Seconds it took to open every connection.
    pub(crate) connect_secs: f64,
    /// Measured seconds (from measure start to the last counted completion or the end).
    pub(crate) measured_secs: f64,
}

/// A running engine: threads started, waiting for connections.
#[derive(Debug)]
pub(crate) struct Engine {
    /// Shared state, for the reporter.
    pub(crate) shared: Arc<Shared>,
    handles: Vec<std::thread::JoinHandle<Vec<Fairness>>>,
    cfg: EngineConfig,
    t0: Instant,
}

impl Engine {
    /// Starts the client threads; they connect, prepare, and wait for `go`.
    pub(crate) fn start(
        cfg: EngineConfig,
        scripts: Arc<ScriptFactory>,
        wires: Arc<WireFactory>,
    ) -> Engine {
        let threads = cfg.client_threads.clamp(1, cfg.connections.max(1));
        let shared = Arc::new(Shared {
            shards: (0..threads).map(|_| Mutex::new(Shard::default())).collect(),
            stop: AtomicBool::new(false),
            fatal: Mutex::new(None),
            start: OnceLock::new(),
            measure_start: OnceLock::new(),
            connected: AtomicUsize::new(0),
            drained: AtomicUsize::new(0),
            events_left: AtomicI64::new(if cfg.events > 0 {
                cfg.events as i64
            } else {
                i64::MAX
            }),
            ready: Barrier::new(threads + 1),
            go: Barrier::new(threads + 1),
            reporter: std::thread::current(),
        });
        let t0 = Instant::now();
        let mut handles = Vec::new();
        for t in 0..threads {
            let conns: Vec<usize> = (t..cfg.connections).step_by(threads).collect();
            let (cfg2, shared2, scripts2, wires2) =
                (cfg.clone(), shared.clone(), scripts.clone(), wires.clone());
            let h = std::thread::Builder::new()
                .name(format!("tpbed-load-{t}"))
                .spawn(move || {
                    // wake for scheduled arrivals on time, not up to the default 50 µs late
                    // SAFETY: PR_SET_TIMERSLACK takes an integer argument and touches no memory.
                    unsafe { libc::prctl(libc::PR_SET_TIMERSLACK, 1 as libc::c_ulong) };
                    let mut w = crate::worker::Worker::new(
                        t,
                        cfg2,
                        shared2.clone(),
                        &conns,
                        &*scripts2,
                        wires2,
                    );
                    w.run()
                })
                .expect("spawn client thread");
            handles.push(h);
        }
        Engine {
            shared,
            handles,
            cfg,
            t0,
        }
    }

    /// Waits until every connection is ready (or failed), then starts the load. Returns the
    /// connect time in seconds.
    pub(crate) fn go(&self) -> f64 {
        self.shared.ready.wait();
        let connect = self.t0.elapsed().as_secs_f64();
        let now = Instant::now();
        let _ = self.shared.start.set(now);
        let _ = self.shared.measure_start.set(now + self.cfg.warmup);
        self.shared.go.wait();
        connect
    }

    /// The planned end of measuring, if the run is time-limited.
    pub(crate) fn end(&self) -> Option<Instant> {
        let ms = *self.shared.measure_start.get()?;
        (!self.cfg.time.is_zero()).then(|| ms + self.cfg.time)
    }

    /// Whether every client thread has finished its load (connections still open until `stop`).
    pub(crate) fn drained(&self) -> bool {
        self.shared.drained.load(Ordering::SeqCst) >= self.handles.len()
            || self.handles.iter().all(|h| h.is_finished())
    }

    /// Stops the load (threads drain and exit).
    pub(crate) fn stop(&self) {
        self.shared.stop.store(true, Ordering::SeqCst);
    }

    /// Joins the threads.
    pub(crate) fn join(self, connect_secs: f64) -> EngineResult {
        let mut fairness = Vec::new();
        for h in self.handles {
            match h.join() {
                Ok(f) => fairness.extend(f),
                Err(_) => self.shared.fail("a client thread panicked".into()),
            }
        }
        let ms = self.shared.measure_start.get().copied().unwrap_or(self.t0);
        let mut measured = ms.elapsed().as_secs_f64();
        if !self.cfg.time.is_zero() {
            measured = measured.min(self.cfg.time.as_secs_f64());
        }
        EngineResult {
            fairness,
            connect_secs,
            measured_secs: measured.max(1e-9),
        }
    }
}
