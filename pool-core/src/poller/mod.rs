//! Readiness backends behind one trait. Invariant: registrations are one-shot — after a token
//! is reported it is not reported again until re-armed — and tokens are generation-tagged
//! connection ids, never raw fds, so a stale report for a closed and reused slot is recognised.

mod buf_ring;
mod epoll;
#[cfg(test)]
pub(crate) mod model;
pub(crate) mod ring_io;
mod uring;

pub(crate) use epoll::EpollPoller;
pub(crate) use uring::UringPoller;

use crate::config::{IoMode, PollerKind};
use crate::session::Received;
use std::io;
use std::os::fd::RawFd;
use std::time::Duration;

/// A connection's identity in a poller: slot index in the low 32 bits, the slot's generation
/// (modulo 2^30) in the next 30; the top two bits stay free for the kind of an io_uring data
/// request.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) struct Token(pub(crate) u64);

impl Token {
    /// Token of slot `index` at generation `generation`.
    pub(crate) fn new(index: u32, generation: u32) -> Token {
        Token((u64::from(generation & GENERATION_MASK) << 32) | u64::from(index))
    }

    /// The slot index.
    pub(crate) fn index(self) -> u32 {
        self.0 as u32
    }

    /// The slot generation (modulo 2^30).
    pub(crate) fn generation(self) -> u32 {
        (self.0 >> 32) as u32
    }
}

/// The generation bits a token keeps.
const GENERATION_MASK: u32 = (1 << 30) - 1;

/// Maximum events taken per poll, as MySQL's `epoll_wait` (32).
pub(crate) const MAX_EVENTS: usize = 32;

/// Deferred re-arms ([`Poller::rearm_deferred`]) after which a non-blocking poll hands them to
/// the kernel even while completions are still waiting to be taken.
pub(crate) const DEFER_BATCH: usize = 16;

/// One group's readiness source. A registration outlives the thread that made it: pool
/// threads retire while the connections they armed stay armed.
pub(crate) trait Poller: Send + Sync + 'static {
    /// Registers `fd` one-shot for input under `token`.
    fn register(&self, token: Token, fd: RawFd) -> io::Result<()>;
    /// Re-arms a registration after its report.
    fn rearm(&self, token: Token, fd: RawFd) -> io::Result<()>;
    /// Whether the thread attached to a connection re-arms it before taking the group mutex
    /// (group.rs, re-arm protocol) instead of under it.
    fn rearms_outside_group_lock(&self) -> bool {
        true
    }
    /// Re-arms a registration, possibly leaving the request queued in this process until a
    /// later `poll` hands it to the kernel (group.rs, re-arm protocol step 5). Called only under
    /// the group mutex while no thread of the group is blocked in `poll`. A backend that defers
    /// must hand every deferred request over in its next blocking `poll`, and in a non-blocking
    /// one once [`DEFER_BATCH`] requests are deferred. The default re-arms at once.
    fn rearm_deferred(&self, token: Token, fd: RawFd) -> io::Result<()> {
        self.rearm(token, fd)
    }
    /// Removes a registration (armed or not) before the fd is closed.
    fn deregister(&self, token: Token, fd: RawFd) -> io::Result<()>;
    /// Appends ready tokens to `out` (at most [`MAX_EVENTS`]). Blocks until at least one event
    /// or a wake-up when `block`; returns at once otherwise. May return nothing spuriously.
    fn poll(&self, out: &mut Vec<Token>, block: bool) -> io::Result<()>;
    /// Wakes the current and every later blocking `poll` (the group's wake fd; used at
    /// shutdown).
    fn wake(&self) -> io::Result<()>;
    /// Unblocks a thread blocked reading or writing `fd` (`shutdown(2)`): how KILL and
    /// shutdown reach a connection bound to a thread.
    fn interrupt(&self, fd: RawFd);
    /// Whether this poller moves statement bytes (`tpbed_thread_pool_io=ring`): the methods
    /// below then carry a connection's input and replies; a readiness-only poller has none.
    fn moves_bytes(&self) -> bool {
        false
    }
    /// What the connection received since it was last armed (taken once, before it runs).
    fn take_input(&self, _token: Token) -> Option<Received> {
        None
    }
    /// The reply the connection's last command left in `out` (taken, `out` left empty): what
    /// the socket takes without waiting leaves at once, the rest within `write_timeout` when
    /// the connection is next armed.
    fn queue_output(&self, _token: Token, _out: &mut Vec<u8>, _write_timeout: Duration) {}
    /// A reply of the connection is still leaving: `net_write_timeout` bounds it, not
    /// `wait_timeout`.
    fn sending(&self, _token: Token) -> bool {
        false
    }
}

/// The poller kind and I/O mode in force and, when io_uring was asked for but could not be
/// used, why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PollerChoice {
    /// The backend the pool runs.
    pub kind: PollerKind,
    /// How statement bytes move (`ring` runs on the io_uring backend).
    pub io: IoMode,
    /// Why the requested io_uring backend or ring I/O was replaced (for the server's log).
    pub fallback_reason: Option<String>,
}

/// Probes io_uring when requested: for ring I/O a ring with a provided-buffer ring and the
/// data operations, else a ring and its poll-add support. Ring I/O that cannot run falls back
/// to `poll` I/O on the requested poller kind, and io_uring readiness to epoll, with the reason.
pub fn choose(requested: PollerKind, io: IoMode) -> PollerChoice {
    let ring_failed = match io {
        IoMode::Ring => match uring::probe_ring() {
            Ok(()) => {
                return PollerChoice {
                    kind: PollerKind::IoUring,
                    io: IoMode::Ring,
                    fallback_reason: None,
                }
            }
            Err(reason) => Some(format!("ring I/O falls back to poll: {reason}")),
        },
        IoMode::Poll => None,
    };
    let (kind, uring_failed) = match requested {
        PollerKind::Epoll => (PollerKind::Epoll, None),
        PollerKind::IoUring => match uring::probe() {
            Ok(()) => (PollerKind::IoUring, None),
            Err(reason) => (PollerKind::Epoll, Some(reason)),
        },
    };
    let reasons: Vec<String> = ring_failed.into_iter().chain(uring_failed).collect();
    PollerChoice {
        kind,
        io: IoMode::Poll,
        fallback_reason: (!reasons.is_empty()).then(|| reasons.join("; ")),
    }
}

/// Makes one group's poller for `choice`.
pub(crate) fn new_poller(choice: &PollerChoice) -> io::Result<Box<dyn Poller>> {
    Ok(match (choice.io, choice.kind) {
        (IoMode::Ring, _) => Box::new(UringPoller::new_ring()?),
        (IoMode::Poll, PollerKind::Epoll) => Box::new(EpollPoller::new()?),
        (IoMode::Poll, PollerKind::IoUring) => Box::new(UringPoller::new()?),
    })
}

/// `shutdown(fd, SHUT_RDWR)`: a blocked `read` on the socket returns 0.
pub(crate) fn shutdown_fd(fd: RawFd) {
    // SAFETY: shutdown(2) takes any integer; on a non-socket it fails with ENOTSOCK/EBADF.
    // Callers hold the group mutex while the connection's slot (and so its open fd) exists.
    unsafe {
        libc::shutdown(fd, libc::SHUT_RDWR);
    }
}

/// A non-blocking eventfd used as a group's wake fd.
pub(crate) fn new_eventfd() -> io::Result<std::os::fd::OwnedFd> {
    use std::os::fd::FromRawFd;
    // SAFETY: eventfd returns a new fd or -1.
    let fd = unsafe { libc::eventfd(0, libc::EFD_CLOEXEC | libc::EFD_NONBLOCK) };
    if fd < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: fd is a fresh descriptor we own.
    Ok(unsafe { std::os::fd::OwnedFd::from_raw_fd(fd) })
}

/// Makes `fd` readable for good (the wake fd is never drained: a wake is sticky).
pub(crate) fn signal_eventfd(fd: RawFd) -> io::Result<()> {
    let one: u64 = 1;
    // SAFETY: writes 8 bytes from a live u64 to an eventfd.
    let n = unsafe { libc::write(fd, (&one as *const u64).cast(), 8) };
    if n == 8 {
        Ok(())
    } else {
        let e = io::Error::last_os_error();
        if e.kind() == io::ErrorKind::WouldBlock {
            Ok(())
        } else {
            Err(e)
        }
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;
    use std::io::Write;
    use std::net::{TcpListener, TcpStream};
    use std::os::fd::AsRawFd;

    fn one_shot_contract(p: &dyn Poller) {
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        let mut c = TcpStream::connect(l.local_addr().unwrap()).unwrap();
        let (s, _) = l.accept().unwrap();
        let t = Token::new(7, 3);
        p.register(t, s.as_raw_fd()).unwrap();
        let mut out = Vec::new();
        p.poll(&mut out, false).unwrap();
        assert!(out.is_empty());
        c.write_all(b"x").unwrap();
        while out.is_empty() {
            p.poll(&mut out, true).unwrap();
        }
        assert_eq!(out, vec![t]);
        assert_eq!((t.index(), t.generation()), (7, 3));
        out.clear();
        std::thread::sleep(std::time::Duration::from_millis(20));
        p.poll(&mut out, false).unwrap();
        assert!(out.is_empty(), "one-shot: no second report before re-arm");
        p.rearm(t, s.as_raw_fd()).unwrap();
        while out.is_empty() {
            p.poll(&mut out, true).unwrap();
        }
        assert_eq!(
            out,
            vec![t],
            "data still unread: reported again after re-arm"
        );
        out.clear();
        p.deregister(t, s.as_raw_fd()).unwrap();
        p.wake().unwrap();
        p.poll(&mut out, true).unwrap();
        p.poll(&mut out, true).unwrap();
        assert!(out.iter().all(|x| *x != t));
    }

    /// Registers a socket from a thread that then exits, makes it readable, and checks the
    /// poller still reports it (io_uring cancels an exited thread's requests).
    fn outlives_registering_thread(p: std::sync::Arc<dyn Poller>) {
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        let mut c = TcpStream::connect(l.local_addr().unwrap()).unwrap();
        let (s, _) = l.accept().unwrap();
        let t = Token::new(1, 9);
        let fd = s.as_raw_fd();
        let p2 = p.clone();
        std::thread::spawn(move || p2.register(t, fd).unwrap())
            .join()
            .unwrap();
        // Let the kernel finish the exited thread's teardown before the data arrives.
        std::thread::sleep(std::time::Duration::from_millis(50));
        c.write_all(b"x").unwrap();
        let mut out = Vec::new();
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
        while !out.contains(&t) && std::time::Instant::now() < deadline {
            p.poll(&mut out, false).unwrap();
            std::thread::sleep(std::time::Duration::from_millis(5));
        }
        assert!(
            out.contains(&t),
            "a registration made by an exited thread is still reported"
        );
        p.deregister(t, fd).unwrap();
    }

    /// Makes more sockets readable at once than an io_uring completion queue holds (512
    /// entries), registered and then re-armed, and checks each is reported exactly once per
    /// arming: a completion-queue overflow must not lose a report or fail a re-arm.
    fn reports_every_ready_socket(p: &dyn Poller) {
        const N: usize = 1500;
        let mut lim = libc::rlimit {
            rlim_cur: 0,
            rlim_max: 0,
        };
        // SAFETY: plain getrlimit/setrlimit on a local struct.
        unsafe {
            libc::getrlimit(libc::RLIMIT_NOFILE, &mut lim);
            lim.rlim_cur = lim.rlim_max;
            libc::setrlimit(libc::RLIMIT_NOFILE, &lim);
        }
        let pairs: Vec<_> = (0..N)
            .map(|_| std::os::unix::net::UnixStream::pair().unwrap())
            .collect();
        for (a, _) in pairs.iter() {
            (&*a).write_all(b"x").unwrap();
        }
        let token = |i: usize| Token::new(i as u32, 1);
        for round in 0..2 {
            for (i, (_, b)) in pairs.iter().enumerate() {
                if round == 0 {
                    p.register(token(i), b.as_raw_fd()).unwrap();
                } else {
                    p.rearm_deferred(token(i), b.as_raw_fd()).unwrap();
                }
            }
            let mut seen = vec![0u32; N];
            let mut out = Vec::new();
            let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
            while seen.contains(&0) && std::time::Instant::now() < deadline {
                out.clear();
                p.wake().unwrap();
                p.poll(&mut out, true).unwrap();
                for t in &out {
                    seen[t.index() as usize] += 1;
                }
            }
            let missing = seen.iter().filter(|&&n| n == 0).count();
            let repeated = seen.iter().filter(|&&n| n > 1).count();
            assert_eq!(
                (missing, repeated),
                (0, 0),
                "round {round}: missing, repeated"
            );
        }
        for (i, (_, b)) in pairs.iter().enumerate() {
            p.deregister(token(i), b.as_raw_fd()).unwrap();
        }
    }

    /// An io_uring poller, or None where the probe falls back to epoll: the calling test then
    /// fails under `TPBED_REQUIRE_TOOLS=1`, and otherwise writes `SKIPPED <test>: <reason>`
    /// to the terminal (past the harness's output capture) and runs nothing.
    fn uring() -> Option<UringPoller> {
        uring_for(IoMode::Poll)
    }

    /// As [`uring`], for I/O mode `io` (a ring-I/O poller for [`IoMode::Ring`]).
    fn uring_for(io: IoMode) -> Option<UringPoller> {
        let Some(why) = choose(PollerKind::IoUring, io).fallback_reason else {
            return Some(match io {
                IoMode::Poll => UringPoller::new().unwrap(),
                IoMode::Ring => UringPoller::new_ring().unwrap(),
            });
        };
        let test = std::thread::current()
            .name()
            .unwrap_or("an io_uring test")
            .to_string();
        if std::env::var("TPBED_REQUIRE_TOOLS").as_deref() == Ok("1") {
            panic!("{test} cannot run (TPBED_REQUIRE_TOOLS=1): io_uring unavailable: {why}");
        }
        let _ = writeln!(
            std::io::stderr().lock(),
            "SKIPPED {test}: io_uring unavailable: {why}"
        );
        None
    }

    /// Waits (at most 5 s) until `p` reports `t`.
    fn wait_for_report(p: &dyn Poller, t: Token) {
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
        let mut out = Vec::new();
        while !out.contains(&t) && std::time::Instant::now() < deadline {
            p.wake().unwrap();
            p.poll(&mut out, true).unwrap();
        }
        assert!(out.contains(&t), "the command is reported");
    }

    #[test]
    fn ring_reply_leaves_before_the_connection_is_rearmed() {
        let Some(p) = uring_for(IoMode::Ring) else {
            return;
        };
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        let mut c = TcpStream::connect(l.local_addr().unwrap()).unwrap();
        c.set_read_timeout(Some(std::time::Duration::from_secs(2)))
            .unwrap();
        let (s, _) = l.accept().unwrap();
        let t = Token::new(4, 1);
        p.register(t, s.as_raw_fd()).unwrap();
        for command in [&b"first"[..], b"second"] {
            c.write_all(command).unwrap();
            wait_for_report(&p, t);
            assert_eq!(p.take_input(t), Some(Received::Bytes(command.to_vec())));
            let mut reply = b"reply".to_vec();
            p.queue_output(t, &mut reply, std::time::Duration::from_secs(5));
            assert!(reply.is_empty(), "the reply buffer is taken");
            let mut got = [0u8; 5];
            std::io::Read::read_exact(&mut c, &mut got).expect("the reply arrives unarmed");
            assert_eq!(&got, b"reply");
            p.rearm(t, s.as_raw_fd()).unwrap();
            assert!(!p.sending(t), "nothing left for the ring to send");
        }
        p.deregister(t, s.as_raw_fd()).unwrap();
    }

    #[test]
    fn epoll_reports_every_ready_socket() {
        reports_every_ready_socket(&EpollPoller::new().unwrap());
    }

    #[test]
    fn uring_reports_every_ready_socket() {
        if let Some(p) = uring() {
            reports_every_ready_socket(&p);
        }
    }

    #[test]
    fn epoll_outlives_registering_thread() {
        outlives_registering_thread(std::sync::Arc::new(EpollPoller::new().unwrap()));
    }

    #[test]
    fn uring_outlives_registering_thread() {
        if let Some(p) = uring() {
            outlives_registering_thread(std::sync::Arc::new(p));
        }
    }

    #[test]
    fn epoll_is_one_shot() {
        one_shot_contract(&EpollPoller::new().unwrap());
    }

    #[test]
    fn uring_is_one_shot() {
        if let Some(p) = uring() {
            one_shot_contract(&p);
        }
    }
}
