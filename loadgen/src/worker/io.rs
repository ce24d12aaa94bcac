//! The client thread's I/O: epoll waits (until the deadline timer or I/O), reads fed to the wire, writes
//! with EPOLLOUT only while output is pending, batching measurements into the shard, closing.

use std::io::{ErrorKind, Read, Write};
use std::os::fd::{AsFd, AsRawFd};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use nix::errno::Errno;
use nix::sys::epoll::{Epoll, EpollEvent, EpollFlags, EpollTimeout};

use super::{token, Phase, Rec, Worker, TIMER_TOKEN};
use crate::stats::record;

impl Worker {
    /// Waits for I/O or until `until` and handles what came. A deadline in the future is left
    /// to the timerfd (re-armed only when it changed), so the wait itself arms no timer; one
    /// already passed only looks for what is ready.
    pub(super) fn poll(&mut self, until: Option<Instant>) {
        let timeout = match until {
            Some(u) if u <= Instant::now() => Some(Duration::ZERO),
            Some(u) => match self.deadline.arm(u) {
                Ok(()) => None,
                Err(_) => Some(u.saturating_duration_since(Instant::now())),
            },
            None => None,
        };
        let mut events = std::mem::take(&mut self.events);
        let n = match wait(&self.epoll, &mut events, timeout) {
            Ok(n) => n,
            Err(Errno::EINTR) => 0,
            Err(e) => {
                self.shared.fail(format!("epoll_wait: {e}"));
                0
            }
        };
        for ev in &events[..n] {
            if ev.data() == TIMER_TOKEN {
                self.deadline.expired();
                continue;
            }
            let idx = (ev.data() & 0xffff_ffff) as usize;
            let gen = (ev.data() >> 32) as u32;
            if idx >= self.conns.len()
                || self.conns[idx].gen != gen
                || self.conns[idx].sock.is_none()
            {
                continue;
            }
            self.on_io(idx, ev.events());
        }
        self.events = events;
        self.pump_connects();
        self.flush_recs();
    }

    pub(super) fn on_io(&mut self, i: usize, flags: EpollFlags) {
        if self.conns[i].phase == Phase::Connecting {
            if !flags.intersects(EpollFlags::EPOLLOUT | EpollFlags::EPOLLERR | EpollFlags::EPOLLHUP)
            {
                return;
            }
            let err = self.conns[i]
                .sock
                .as_ref()
                .and_then(|s| s.take_error().ok().flatten());
            if let Some(e) = err {
                return self.lost(i, format!("connect: {e}"));
            }
            self.conns[i].phase = Phase::Auth;
            self.flush(i);
        }
        if flags.intersects(
            EpollFlags::EPOLLIN
                | EpollFlags::EPOLLRDHUP
                | EpollFlags::EPOLLHUP
                | EpollFlags::EPOLLERR,
        ) {
            self.read(i);
        }
        if flags.contains(EpollFlags::EPOLLOUT) && self.conns[i].sock.is_some() {
            self.flush(i);
        }
    }

    pub(super) fn read(&mut self, i: usize) {
        loop {
            let Some(sock) = self.conns[i].sock.as_mut() else {
                return;
            };
            match sock.read(&mut self.buf) {
                Ok(0) => return self.lost(i, "server closed the connection".into()),
                Ok(n) => {
                    self.clock = Instant::now();
                    let data = &self.buf[..n];
                    if let Err(e) = self.conns[i].wire.feed(data) {
                        return self.fatal_conn(i, format!("protocol error: {e}"));
                    }
                    while let Some(reply) = self.conns[i].wire.poll_reply() {
                        self.on_reply(i, reply);
                        if self.conns[i].sock.is_none() {
                            return;
                        }
                    }
                    // the client may have answered by itself (handshake, auth switch)
                    self.flush(i);
                    if n < self.buf.len() {
                        return;
                    }
                }
                Err(e) if e.kind() == ErrorKind::WouldBlock => return,
                Err(e) if e.kind() == ErrorKind::Interrupted => {}
                Err(e) => return self.lost(i, e.to_string()),
            }
        }
    }

    pub(super) fn flush(&mut self, i: usize) {
        let c = &mut self.conns[i];
        if c.phase == Phase::Connecting {
            return;
        }
        if c.uring {
            return self.uring_flush(i);
        }
        if c.out_pos == c.out.len() {
            c.out.clear();
            c.out_pos = 0;
        }
        c.wire.transmit(&mut c.out);
        let Some(sock) = c.sock.as_mut() else { return };
        while c.out_pos < c.out.len() {
            match sock.write(&c.out[c.out_pos..]) {
                Ok(n) => c.out_pos += n,
                Err(e) if e.kind() == ErrorKind::WouldBlock => break,
                Err(e) if e.kind() == ErrorKind::Interrupted => {}
                Err(e) => return self.lost(i, e.to_string()),
            }
        }
        let pending = c.out_pos < c.out.len();
        if pending != c.want_out {
            c.want_out = pending;
            let mut flags = EpollFlags::EPOLLIN | EpollFlags::EPOLLRDHUP;
            if pending {
                flags |= EpollFlags::EPOLLOUT;
            }
            let mut ev = EpollEvent::new(flags, token(i, c.gen));
            if let Some(s) = c.sock.as_ref() {
                let _ = self.epoll.modify(s.as_fd(), &mut ev);
            }
        }
    }

    pub(super) fn flush_recs(&mut self) {
        let mut sh = self.shared.shards[self.id].lock().expect("shard");
        sh.queue = self.backlog.len();
        sh.busy = self.busy;
        if self.recs.is_empty() {
            return;
        }
        // only the interval: the reporter moves each interval into the total when it takes it
        let acc = &mut sh.interval;
        for r in self.recs.drain(..) {
            match r {
                Rec::StmtLat(ns) => record(&mut acc.stmt, ns),
                Rec::Counts([r, w, o]) => {
                    acc.c.reads += r;
                    acc.c.writes += w;
                    acc.c.others += o;
                }
                Rec::Event { lat, service } => {
                    acc.c.events += 1;
                    record(&mut acc.lat, lat);
                    record(&mut acc.service, service);
                }
                Rec::Error(code, ignored) => {
                    *acc.c.errors.entry(code).or_default() += 1;
                    if ignored {
                        acc.c.ignored += 1;
                    }
                }
                Rec::Reconnect => acc.c.reconnects += 1,
            }
        }
    }

    pub(super) fn close_all(&mut self) {
        self.uring_settle_sends();
        for i in 0..self.conns.len() {
            let c = &mut self.conns[i];
            if c.sock.is_none() {
                continue;
            }
            if c.ever_ready && c.phase != Phase::Busy {
                for sql in c.script.finish() {
                    c.wire.query(&sql, false);
                }
                for id in c.ids.iter().flatten() {
                    c.wire.close_stmt(*id);
                }
                c.wire.quit();
                c.wire.transmit(&mut c.out);
                if let Some(s) = c.sock.as_mut() {
                    let _ = s.set_nonblocking(false);
                    let _ = s.set_write_timeout(Some(Duration::from_secs(2)));
                    let _ = s.write_all(&c.out[c.out_pos..]);
                }
            }
            self.drop_socket(i);
            self.conns[i].phase = Phase::Dead;
        }
        self.uring_drain();
        self.flush_recs();
    }
}

/// `epoll_pwait2` (microsecond timeouts), falling back to `epoll_wait` (milliseconds).
fn wait(
    epoll: &Epoll,
    events: &mut [EpollEvent],
    timeout: Option<Duration>,
) -> Result<usize, Errno> {
    static NO_PWAIT2: AtomicBool = AtomicBool::new(false);
    if !NO_PWAIT2.load(Ordering::Relaxed) {
        let ts = timeout.map(|d| libc::timespec {
            tv_sec: d.as_secs() as libc::time_t,
            tv_nsec: d.subsec_nanos() as libc::c_long,
        });
        let tsp = ts
            .as_ref()
            .map_or(std::ptr::null(), |t| t as *const libc::timespec);
        // SAFETY: `events` is a valid buffer of `EpollEvent`, which is `repr(transparent)` over
        // `libc::epoll_event`; `tsp` is null or points to a live timespec; no signal mask.
        let r = unsafe {
            libc::syscall(
                libc::SYS_epoll_pwait2,
                epoll.0.as_raw_fd(),
                events.as_mut_ptr(),
                events.len() as libc::c_int,
                tsp,
                std::ptr::null::<libc::sigset_t>(),
                0usize,
            )
        };
        if r >= 0 {
            return Ok(r as usize);
        }
        let e = Errno::last();
        if e != Errno::ENOSYS {
            return Err(e);
        }
        NO_PWAIT2.store(true, Ordering::Relaxed);
    }
    let ms = timeout.map_or(EpollTimeout::NONE, |d| {
        EpollTimeout::from(d.as_micros().div_ceil(1000).min(u128::from(u16::MAX)) as u16)
    });
    epoll.wait(events, ms)
}
