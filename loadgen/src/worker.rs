//! One client thread: an epoll instance and many non-blocking connections, each a small state
//! machine over its `Wire` and `Script`. Closed loop (sysbench's model) or open loop at `--rate`
//! (Poisson arrivals, latency from the intended start).

use std::collections::{BinaryHeap, VecDeque};
use std::net::TcpStream;
use std::os::fd::{AsFd, AsRawFd, OwnedFd};
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::{Duration, Instant};

use nix::errno::Errno;
use nix::sys::epoll::{Epoll, EpollCreateFlags, EpollEvent, EpollFlags};
use nix::sys::socket::{self, AddressFamily, SockFlag, SockType, SockaddrStorage};

use crate::conn::{inline_params, Reply, Wire, WireFactory};
use crate::dist::{Dist, DistParams};
use crate::engine::{EngineConfig, Shared};
use crate::options::{IoMode, LoopMode, PsMode};
use crate::script::{Kind, Op, Script, ScriptFactory, Step};
use crate::stats::Fairness;

mod io;
mod timer;
mod uring;

/// Where a connection is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Phase {
    /// Waiting to start connecting (connect ramp).
    Queued,
    /// Non-blocking connect in progress.
    Connecting,
    /// Handshake and authentication.
    Auth,
    /// Running setup statements.
    Setup,
    /// Preparing statements.
    Prepare,
    /// Ready, no event running.
    Idle,
    /// A statement is in flight.
    Busy,
    /// Inside an event, sleeping (Step::Sleep).
    Sleeping,
    /// Waiting for a paced start (closed loop with --rate).
    Paced,
    /// Closed or failed.
    Dead,
}

struct Conn {
    index: usize,
    gen: u32,
    phase: Phase,
    sock: Option<TcpStream>,
    wire: Box<dyn Wire>,
    script: Box<dyn Script>,
    active: bool,
    out: Vec<u8>,
    out_pos: usize,
    want_out: bool,
    setup: VecDeque<String>,
    prepares: Vec<String>,
    ids: Vec<Option<u32>>,
    intended: Instant,
    actual: Instant,
    stmt_start: Instant,
    next_slot: Instant,
    fair: Fairness,
    /// Statements of the current event by kind (read, write, other), counted when it ends.
    counts: [u64; 3],
    ever_ready: bool,
    /// `--io uring`: the socket is driven by the ring, not epoll.
    uring: bool,
    /// `--io uring`: the receive buffer (allocated when the connection joins the ring).
    rbuf: Vec<u8>,
    /// `--io uring`: a receive into `rbuf` is queued.
    recv_queued: bool,
    /// `--io uring`: a send from `out` is queued.
    send_queued: bool,
}

impl std::fmt::Debug for Conn {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Conn")
            .field("index", &self.index)
            .field("phase", &self.phase)
            .finish()
    }
}

/// A completed measurement, buffered until the shard is locked.
#[derive(Debug, Clone, Copy)]
enum Rec {
    StmtLat(u64),
    Counts([u64; 3]),
    Event { lat: u64, service: u64 },
    Error(u16, bool),
    Reconnect,
}

/// One client thread's state.
pub(crate) struct Worker {
    id: usize,
    cfg: EngineConfig,
    shared: Arc<Shared>,
    epoll: Epoll,
    conns: Vec<Conn>,
    wires: Arc<WireFactory>,
    connecting: usize,
    queued: VecDeque<usize>,
    unready: usize,
    timers: BinaryHeap<std::cmp::Reverse<(Instant, usize, u32)>>,
    /// Open loop: connections waiting for an arrival, longest-waiting first (each arrival goes
    /// to the connection idle the longest, as sysbench 1.0's event queue hands its events to
    /// the worker thread that has waited longest on its condition variable).
    idle: VecDeque<usize>,
    backlog: VecDeque<Instant>,
    next_arrival: Option<Instant>,
    dist: Dist,
    recs: Vec<Rec>,
    busy: usize,
    buf: Vec<u8>,
    window: Option<(Instant, Option<Instant>)>,
    ending: bool,
    /// The time of the last clock read (a read returning bytes, a timer pass, a start): replies
    /// and the statements sent in answer to them share it, one clock read per reply.
    clock: Instant,
    /// epoll_wait's output buffer, reused.
    events: Vec<nix::sys::epoll::EpollEvent>,
    /// `--io uring`: the ring, from the start of the load.
    uring: Option<uring::Ring>,
    /// The epoll loop's deadline timer (in the epoll set as `TIMER_TOKEN`).
    deadline: timer::Deadline,
}

impl std::fmt::Debug for Worker {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Worker")
            .field("id", &self.id)
            .field("conns", &self.conns.len())
            .finish()
    }
}

/// At most this many connects in flight per client thread.
const CONNECT_WINDOW: usize = 64;

/// How often the load loop looks at the stop flag when nothing else wakes it.
const STOP_CHECK: Duration = Duration::from_millis(100);

/// The epoll token of the deadline timer (no connection has this index and generation).
const TIMER_TOKEN: u64 = u64::MAX;

fn token(idx: usize, gen: u32) -> u64 {
    ((gen as u64) << 32) | idx as u64
}

impl Worker {
    /// A thread's worker for the connections `indices`.
    pub(crate) fn new(
        id: usize,
        cfg: EngineConfig,
        shared: Arc<Shared>,
        indices: &[usize],
        scripts: &ScriptFactory,
        wires: Arc<WireFactory>,
    ) -> Worker {
        let now = Instant::now();
        let conns: Vec<Conn> = indices
            .iter()
            .map(|&i| {
                let script = scripts(i);
                let active = script.active();
                Conn {
                    index: i,
                    gen: 0,
                    phase: Phase::Queued,
                    sock: None,
                    wire: wires(&cfg.login),
                    script,
                    active,
                    out: Vec::new(),
                    out_pos: 0,
                    want_out: false,
                    setup: VecDeque::new(),
                    prepares: Vec::new(),
                    ids: Vec::new(),
                    intended: now,
                    actual: now,
                    stmt_start: now,
                    next_slot: now,
                    fair: Fairness::default(),
                    counts: [0; 3],
                    ever_ready: false,
                    uring: false,
                    rbuf: Vec::new(),
                    recv_queued: false,
                    send_queued: false,
                }
            })
            .collect();
        let active = conns.iter().filter(|c| c.active).count();
        shared.shards[id].lock().expect("shard").active = active;
        let seed = cfg.seed ^ (id as u64 + 1).wrapping_mul(0xA24B_AED4_963E_E407);
        let epoll = Epoll::new(EpollCreateFlags::EPOLL_CLOEXEC).expect("epoll_create1");
        let deadline = timer::Deadline::new().expect("timerfd_create");
        epoll
            .add(
                deadline.fd(),
                EpollEvent::new(EpollFlags::EPOLLIN, TIMER_TOKEN),
            )
            .expect("epoll_ctl(timerfd)");
        Worker {
            id,
            unready: conns.len(),
            queued: (0..conns.len()).collect(),
            conns,
            cfg,
            shared,
            epoll,
            wires,
            connecting: 0,
            timers: BinaryHeap::new(),
            idle: VecDeque::new(),
            backlog: VecDeque::new(),
            next_arrival: None,
            dist: Dist::new(DistParams::default(), seed),
            recs: Vec::new(),
            busy: 0,
            buf: vec![0u8; 256 * 1024],
            window: None,
            ending: false,
            clock: now,
            events: vec![EpollEvent::empty(); 256],
            uring: None,
            deadline,
        }
    }

    /// Connects, waits for the start, runs the load, drains and closes; returns fairness.
    pub(crate) fn run(&mut self) -> Vec<Fairness> {
        let deadline = Instant::now() + self.cfg.connect_timeout;
        // Phase 1: connect and prepare every connection.
        while self.unready > 0 && !self.stopped() {
            self.pump_connects();
            if Instant::now() > deadline {
                self.shared.fail(format!(
                    "connect timeout: {} connection(s) not ready after {:?}",
                    self.unready, self.cfg.connect_timeout
                ));
                break;
            }
            self.poll(Some(Instant::now() + Duration::from_millis(50)));
        }
        self.shared.ready.wait();
        self.shared.go.wait();
        if self.cfg.io == IoMode::Uring {
            match uring::Ring::new(self.conns.len()) {
                Ok(r) => {
                    self.uring = Some(r);
                    for i in 0..self.conns.len() {
                        if self.conns[i].ever_ready && self.conns[i].phase != Phase::Dead {
                            self.uring_adopt(i);
                        }
                    }
                }
                Err(e) => self.shared.fail(format!("io_uring_setup: {e}")),
            }
        }
        // Phase 2: load.
        let start = *self.shared.start.get().expect("start set");
        let ms = *self.shared.measure_start.get().expect("measure start set");
        let end = (!self.cfg.time.is_zero()).then(|| ms + self.cfg.time);
        self.window = Some((ms, end));
        if self.cfg.rate > 0.0 && self.cfg.loop_mode == LoopMode::Open {
            self.next_arrival = Some(start + self.gap(self.thread_rate()));
        }
        let per_conn_rate = self.cfg.rate / self.cfg.connections.max(1) as f64;
        for i in 0..self.conns.len() {
            if self.conns[i].phase != Phase::Idle || !self.conns[i].active {
                continue;
            }
            self.clock = Instant::now();
            match (self.cfg.rate > 0.0, self.cfg.loop_mode) {
                (false, _) => self.start_event(i, start),
                (true, LoopMode::Open) => self.idle.push_back(i),
                (true, LoopMode::Closed) => {
                    let at = start + self.gap(per_conn_rate);
                    self.conns[i].next_slot = at;
                    self.pace(i, at);
                }
            }
        }
        // the stop check moves in whole steps, so the deadline timer is not re-armed per wait
        let mut check = start + STOP_CHECK;
        while !self.stopped() {
            let now = Instant::now();
            if end.is_some_and(|e| now >= e) {
                break;
            }
            if now >= check {
                check = now + STOP_CHECK;
            }
            self.arrivals(now);
            self.fire_timers(now);
            let mut wake = end.map_or(check, |e| e.min(check));
            if let Some(a) = self.next_arrival {
                wake = wake.min(a);
            }
            if let Some(std::cmp::Reverse((t, _, _))) = self.timers.peek() {
                wake = wake.min(*t);
            }
            self.wait_io(Some(wake));
            if self.cfg.events > 0
                && self.shared.events_left.load(Ordering::Relaxed) <= 0
                && self.busy == 0
            {
                break;
            }
        }
        // Phase 3: let events in flight finish (no new ones), bounded by the drain time; close.
        self.ending = true;
        self.next_arrival = None;
        self.backlog.clear();
        let drain_until = Instant::now() + self.cfg.drain;
        while self
            .conns
            .iter()
            .any(|c| matches!(c.phase, Phase::Busy | Phase::Sleeping))
            && Instant::now() < drain_until
        {
            self.fire_timers(Instant::now());
            self.wait_io(Some(Instant::now() + Duration::from_millis(5)));
        }
        // keep the connections open until the caller has taken its end-of-run snapshot
        self.shared.drained();
        while !self.stopped() {
            self.wait_io(Some(Instant::now() + Duration::from_millis(5)));
        }
        self.close_all();
        self.conns.iter().map(|c| c.fair).collect()
    }

    /// Waits for I/O until `until` and handles it, through the ring once it exists.
    fn wait_io(&mut self, until: Option<Instant>) {
        if self.uring.is_some() {
            self.uring_poll(until);
        } else {
            self.poll(until);
        }
    }

    fn stopped(&self) -> bool {
        self.shared.stop.load(Ordering::Relaxed)
    }

    fn thread_rate(&self) -> f64 {
        let threads = self.shared.shards.len();
        self.cfg.rate / threads as f64
    }

    fn gap(&mut self, rate: f64) -> Duration {
        Duration::from_secs_f64(self.dist.exp_gap(1.0 / rate))
    }

    // ---- connection set-up -------------------------------------------------------------

    fn pump_connects(&mut self) {
        while self.connecting < CONNECT_WINDOW {
            let Some(i) = self.queued.pop_front() else {
                break;
            };
            self.connecting += 1;
            if let Err(e) = self.open(i) {
                self.shared
                    .fail(format!("connect to {}: {e}", self.cfg.addr));
                return;
            }
        }
    }

    fn open(&mut self, i: usize) -> Result<(), Errno> {
        let family = if self.cfg.addr.is_ipv4() {
            AddressFamily::Inet
        } else {
            AddressFamily::Inet6
        };
        let fd: OwnedFd = socket::socket(
            family,
            SockType::Stream,
            SockFlag::SOCK_NONBLOCK | SockFlag::SOCK_CLOEXEC,
            None,
        )?;
        socket::setsockopt(&fd, socket::sockopt::TcpNoDelay, &true)?;
        let addr = SockaddrStorage::from(self.cfg.addr);
        match socket::connect(fd.as_raw_fd(), &addr) {
            Ok(()) | Err(Errno::EINPROGRESS) => {}
            Err(e) => return Err(e),
        }
        self.uring_release_out(i);
        let c = &mut self.conns[i];
        c.gen = c.gen.wrapping_add(1);
        c.phase = Phase::Connecting;
        c.wire = (self.wires)(&self.cfg.login);
        c.out.clear();
        c.out_pos = 0;
        c.want_out = true;
        let sock = TcpStream::from(fd);
        self.epoll.add(
            sock.as_fd(),
            EpollEvent::new(
                EpollFlags::EPOLLIN | EpollFlags::EPOLLOUT | EpollFlags::EPOLLRDHUP,
                token(i, c.gen),
            ),
        )?;
        c.sock = Some(sock);
        Ok(())
    }

    fn became_ready(&mut self, i: usize) {
        let now = Instant::now();
        self.clock = now;
        let c = &mut self.conns[i];
        c.phase = Phase::Idle;
        if !c.ever_ready {
            c.ever_ready = true;
            self.unready -= 1;
            self.connecting -= 1;
            self.shared.connected.fetch_add(1, Ordering::Relaxed);
            return;
        }
        // A reconnect finished during the load: back to the ring, restart the interrupted event.
        self.uring_adopt(i);
        let c = &mut self.conns[i];
        if c.active && !self.shared.stop.load(Ordering::Relaxed) {
            c.actual = now;
            c.phase = Phase::Busy;
            c.script.begin_event();
            self.busy += 1;
            self.drive(i, None);
        }
    }

    // ---- scheduling ----------------------------------------------------------------

    fn arrivals(&mut self, now: Instant) {
        self.clock = now;
        let rate = self.thread_rate();
        while let Some(at) = self.next_arrival {
            if at > now {
                break;
            }
            self.next_arrival = Some(at + self.gap(rate));
            match self.idle.pop_front() {
                Some(i) => self.start_event(i, at),
                None => self.backlog.push_back(at),
            }
        }
    }

    fn pace(&mut self, i: usize, at: Instant) {
        let c = &mut self.conns[i];
        c.phase = Phase::Paced;
        self.timers.push(std::cmp::Reverse((at, i, c.gen)));
    }

    fn fire_timers(&mut self, now: Instant) {
        self.clock = now;
        while let Some(std::cmp::Reverse((t, i, gen))) = self.timers.peek().copied() {
            if t > now {
                break;
            }
            self.timers.pop();
            if self.conns[i].gen != gen {
                continue;
            }
            match self.conns[i].phase {
                Phase::Sleeping => {
                    self.conns[i].phase = Phase::Busy;
                    self.drive(i, None);
                }
                Phase::Paced => {
                    self.conns[i].phase = Phase::Idle;
                    self.start_event(i, now);
                }
                _ => {}
            }
        }
    }

    /// Starts an event on idle connection `i` whose intended start was `intended`.
    fn start_event(&mut self, i: usize, intended: Instant) {
        if self.ending
            || self.stopped()
            || self.shared.events_left.fetch_sub(1, Ordering::Relaxed) <= 0
        {
            self.conns[i].phase = Phase::Idle;
            return;
        }
        let now = self.clock;
        let c = &mut self.conns[i];
        c.intended = if self.cfg.loop_mode == LoopMode::Open {
            intended
        } else {
            now
        };
        c.actual = now;
        c.phase = Phase::Busy;
        c.counts = [0; 3];
        c.script.begin_event();
        self.busy += 1;
        self.drive(i, None);
    }

    /// What happens after connection `i` finished an event.
    fn after_event(&mut self, i: usize) {
        let now = self.clock;
        self.conns[i].phase = Phase::Idle;
        if self.ending || self.stopped() {
            return;
        }
        if self.cfg.rate <= 0.0 {
            self.start_event(i, now);
            return;
        }
        match self.cfg.loop_mode {
            LoopMode::Open => match self.backlog.pop_front() {
                Some(at) => self.start_event(i, at),
                None => self.idle.push_back(i),
            },
            LoopMode::Closed => {
                let rate = self.cfg.rate / self.cfg.connections.max(1) as f64;
                let slot = self.conns[i].next_slot + self.gap(rate);
                // Late by less than a mean gap (a slow wake-up, a slow reply): start now but
                // keep the schedule, so jitter does not lower the rate. Later than that, the
                // missed slots are skipped, not queued: that is the closed loop's omission.
                let late = now.saturating_duration_since(slot).as_secs_f64();
                self.conns[i].next_slot = if late > 1.0 / rate { now } else { slot };
                if slot <= now {
                    self.start_event(i, now);
                } else {
                    self.pace(i, slot);
                }
            }
        }
    }

    // ---- the state machine -----------------------------------------------------------

    /// Feeds `last` (a reply, or None) to the script and carries out its steps.
    fn drive(&mut self, i: usize, mut last: Option<Reply>) {
        loop {
            let step = self.conns[i].script.next(last.as_ref());
            last = None;
            match step {
                Step::Send(op) => {
                    self.send(i, op);
                    return;
                }
                Step::Sleep(d) => {
                    let c = &mut self.conns[i];
                    c.phase = Phase::Sleeping;
                    self.timers
                        .push(std::cmp::Reverse((Instant::now() + d, i, c.gen)));
                    return;
                }
                Step::Restart => {
                    self.conns[i].script.begin_event();
                }
                Step::EndEvent => {
                    self.busy -= 1;
                    self.finish_event(i);
                    self.after_event(i);
                    return;
                }
                Step::Fatal(msg) => {
                    self.busy -= 1;
                    self.conns[i].phase = Phase::Idle;
                    self.shared
                        .fail(format!("connection {}: {msg}", self.conns[i].index));
                    return;
                }
            }
        }
    }

    /// Whether something that started at `from` and ends now is inside the measured window.
    fn measured(&self, from: Instant, now: Instant) -> bool {
        match self.window {
            Some((ms, end)) => from >= ms && end.is_none_or(|e| now <= e),
            None => false,
        }
    }

    fn finish_event(&mut self, i: usize) {
        let now = self.clock;
        let counts = std::mem::take(&mut self.conns[i].counts);
        let measured = self.measured(self.conns[i].intended, now);
        self.conns[i].script.end_event(measured);
        if !measured {
            return;
        }
        self.recs.push(Rec::Counts(counts));
        let c = &mut self.conns[i];
        let lat = now.duration_since(c.intended).as_nanos() as u64;
        let service = now.duration_since(c.actual).as_nanos() as u64;
        c.fair.events += 1;
        c.fair.busy_secs += service as f64 / 1e9;
        self.recs.push(Rec::Event { lat, service });
    }

    fn send(&mut self, i: usize, op: Op) {
        let c = &mut self.conns[i];
        let keep = c.script.wants_rows();
        match op {
            Op::Query(sql) => c.wire.query(&sql, keep),
            Op::Exec(slot, params) => match c.ids.get(slot).copied().flatten() {
                Some(id) => c.wire.execute(id, &params, keep),
                None => {
                    let sql = inline_params(&c.prepares[slot], &params);
                    c.wire.query(&sql, keep)
                }
            },
        }
        c.phase = Phase::Busy;
        c.stmt_start = self.clock;
        self.flush(i);
    }

    fn on_reply(&mut self, i: usize, reply: Reply) {
        let phase = self.conns[i].phase;
        match phase {
            Phase::Auth => match reply {
                Reply::Connected => {
                    let c = &mut self.conns[i];
                    c.setup = c.script.setup().into();
                    c.phase = Phase::Setup;
                    self.next_setup(i);
                }
                Reply::Error { code, message } => {
                    self.fatal_conn(i, format!("login failed: {code}: {message}"))
                }
                other => self.fatal_conn(i, format!("unexpected reply during login: {other:?}")),
            },
            Phase::Setup => match reply {
                Reply::Error { code, message } => {
                    self.fatal_conn(i, format!("setup failed: {code}: {message}"))
                }
                _ => self.next_setup(i),
            },
            Phase::Prepare => match reply {
                Reply::Prepared { id } => {
                    self.conns[i].ids.push(Some(id));
                    self.next_prepare(i);
                }
                // ER_UNSUPPORTED_PS: sysbench falls back to client-side emulation.
                Reply::Error { code: 1295, .. } => {
                    self.conns[i].ids.push(None);
                    self.next_prepare(i);
                }
                Reply::Error { code, message } => {
                    let sql = self.conns[i].prepares[self.conns[i].ids.len()].clone();
                    self.fatal_conn(i, format!("prepare failed: {code}: {message} ({sql})"))
                }
                other => self.fatal_conn(i, format!("unexpected reply to prepare: {other:?}")),
            },
            Phase::Busy => {
                let now = self.clock;
                let kind = Kind::of(&reply);
                if let Some(k) = kind {
                    self.conns[i].counts[k as usize] += 1;
                }
                let c = &self.conns[i];
                if self.measured(c.stmt_start, now) {
                    let ns = now.duration_since(c.stmt_start).as_nanos() as u64;
                    match (kind, &reply) {
                        (Some(_), _) => self.recs.push(Rec::StmtLat(ns)),
                        (None, Reply::Error { code, .. }) => {
                            self.recs
                                .push(Rec::Error(*code, self.cfg.ignore.contains(*code)));
                        }
                        (None, _) => {}
                    }
                }
                self.drive(i, Some(reply));
            }
            _ => {}
        }
    }

    fn next_setup(&mut self, i: usize) {
        let c = &mut self.conns[i];
        if let Some(sql) = c.setup.pop_front() {
            c.wire.query(&sql, false);
            self.flush(i);
            return;
        }
        c.prepares = c.script.prepares();
        c.ids.clear();
        if self.cfg.ps_mode == PsMode::Disable {
            c.ids = vec![None; c.prepares.len()];
        }
        c.phase = Phase::Prepare;
        self.next_prepare(i);
    }

    fn next_prepare(&mut self, i: usize) {
        let c = &mut self.conns[i];
        if c.ids.len() < c.prepares.len() {
            let sql = c.prepares[c.ids.len()].clone();
            c.wire.prepare(&sql);
            self.flush(i);
        } else {
            self.became_ready(i);
        }
    }

    fn fatal_conn(&mut self, i: usize, msg: String) {
        let index = self.conns[i].index;
        self.shared.fail(format!("connection {index}: {msg}"));
        self.kill(i);
    }

    /// Takes connection `i`'s socket out of epoll or the ring and closes it (a ring socket is
    /// shut down first, which completes its queued receive).
    fn drop_socket(&mut self, i: usize) {
        let c = &mut self.conns[i];
        if let Some(s) = c.sock.take() {
            if c.uring {
                let _ = s.shutdown(std::net::Shutdown::Both);
            } else {
                let _ = self.epoll.delete(s.as_fd());
            }
        }
        c.uring = false;
    }

    fn kill(&mut self, i: usize) {
        self.drop_socket(i);
        let c = &mut self.conns[i];
        if c.phase == Phase::Busy || c.phase == Phase::Sleeping {
            self.busy -= 1;
        }
        if !c.ever_ready {
            c.ever_ready = true;
            self.unready -= 1;
            self.connecting -= 1;
        }
        c.phase = Phase::Dead;
    }

    /// The connection broke: reconnect if the lost-connection code is ignored, else fail.
    fn lost(&mut self, i: usize, why: String) {
        let was_loaded = self.conns[i].ever_ready;
        if was_loaded && self.cfg.ignore.contains(2013) && !self.stopped() {
            let in_event = matches!(self.conns[i].phase, Phase::Busy | Phase::Sleeping);
            self.drop_socket(i);
            if in_event {
                self.busy -= 1;
            }
            self.recs.push(Rec::Error(2013, true));
            self.recs.push(Rec::Reconnect);
            if let Err(e) = self.open(i) {
                self.fatal_conn(i, format!("reconnect failed: {e}"));
            }
            return;
        }
        if self.stopped() {
            self.kill(i);
            return;
        }
        self.fatal_conn(i, format!("lost connection (2013): {why}"));
    }
}
