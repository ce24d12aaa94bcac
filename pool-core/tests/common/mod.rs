//! A toy line protocol over real loopback TCP for the integration tests: one command per
//! line, one reply line per command. `sleep N` reports a wait (`wait::begin(Sleep)`) for N ms,
//! `spin N` burns N ms of CPU without reporting one, `begin`/`commit` open and close a
//! transaction, `quit` closes, anything else is echoed. The first line is the handshake
//! (`hello` or `hello admin`).

#![allow(dead_code, unreachable_pub)]

use pool_core::{
    wait, ConnectionHandler, IoMode, Outcome, PollerKind, Received, Session, WaitKind,
};
use std::io::{BufRead, BufReader, Write};
use std::net::{Shutdown, TcpListener, TcpStream};
use std::os::fd::{AsRawFd, RawFd};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// The server side of one toy connection.
#[derive(Debug)]
pub struct LineSession {
    reader: BufReader<TcpStream>,
    writer: TcpStream,
    /// Bytes a ring-I/O pool received for this connection, not yet read as lines.
    received: Vec<u8>,
    in_trx: bool,
    admin: bool,
    idle: Duration,
}

impl LineSession {
    pub fn new(stream: TcpStream, idle: Duration) -> LineSession {
        let writer = stream.try_clone().expect("clone socket");
        LineSession {
            reader: BufReader::new(stream),
            writer,
            received: Vec::new(),
            in_trx: false,
            admin: false,
            idle,
        }
    }

    /// The next command line: from the bytes a ring received first, the rest from the socket.
    fn next_line(&mut self) -> Option<String> {
        let mut line = match self.received.iter().position(|b| *b == b'\n') {
            Some(i) => return Some(lossy(self.received.drain(..=i).collect())),
            None => lossy(std::mem::take(&mut self.received)),
        };
        match self.reader.read_line(&mut line) {
            Ok(0) | Err(_) => None,
            Ok(_) => Some(line),
        }
    }

    fn execute(&mut self, line: &str) -> Outcome {
        match self.command(line) {
            (o, None) => o,
            (_, Some(r)) => self.reply(&r),
        }
    }

    /// Runs one command line; the reply to write, if any.
    fn command(&mut self, line: &str) -> (Outcome, Option<String>) {
        let line = line.trim().to_string();
        let mut words = line.split_whitespace();
        let cmd = words.next().unwrap_or("");
        let ms = words.next().and_then(|w| w.parse().ok()).unwrap_or(0u64);
        let reply = match cmd {
            "sleep" => {
                let _w = wait::begin(WaitKind::Sleep);
                std::thread::sleep(Duration::from_millis(ms));
                "slept"
            }
            "spin" => {
                let t = Instant::now();
                let mut x = 0u64;
                while t.elapsed() < Duration::from_millis(ms) {
                    x = std::hint::black_box(x.wrapping_mul(31).wrapping_add(7));
                }
                "spun"
            }
            "begin" => {
                self.in_trx = true;
                "begun"
            }
            "commit" => {
                self.in_trx = false;
                "committed"
            }
            "quit" => return (Outcome::Close, None),
            _ => return (Outcome::Continue, Some(line)),
        };
        (Outcome::Continue, Some(reply.to_string()))
    }

    /// Writes replies a ring-I/O pool has not sent yet (before blocking for a new command).
    fn reply_bytes(&mut self, out: &mut Vec<u8>) -> bool {
        let ok = self.writer.write_all(out).is_ok();
        out.clear();
        ok
    }

    fn reply(&mut self, s: &str) -> Outcome {
        match self.writer.write_all(format!("{s}\n").as_bytes()) {
            Ok(()) => Outcome::Continue,
            Err(_) => Outcome::Close,
        }
    }
}

impl Session for LineSession {
    fn handshake(&mut self) -> Outcome {
        let mut line = String::new();
        match self.reader.read_line(&mut line) {
            Ok(0) | Err(_) => return Outcome::Close,
            Ok(_) => {}
        }
        self.admin = line.trim() == "hello admin";
        self.reply("hi")
    }

    fn run(&mut self) -> Outcome {
        match self.next_line() {
            Some(line) => self.execute(&line),
            None => Outcome::Close,
        }
    }

    fn receive(&mut self, input: Received) {
        if let Received::Bytes(b) = input {
            self.received.extend_from_slice(&b);
        }
    }

    fn run_deferred(&mut self, out: &mut Vec<u8>) -> Outcome {
        if self.received.is_empty() && !self.reply_bytes(out) {
            return Outcome::Close;
        }
        let Some(line) = self.next_line() else {
            return Outcome::Close;
        };
        let (outcome, reply) = self.command(&line);
        if let Some(r) = reply {
            out.extend_from_slice(format!("{r}\n").as_bytes());
        }
        outcome
    }

    fn write_timeout(&self) -> Duration {
        Duration::from_secs(10)
    }

    fn in_transaction(&self) -> bool {
        self.in_trx
    }

    fn is_tp_admin(&self) -> bool {
        self.admin
    }

    fn high_priority(&self) -> bool {
        false
    }

    fn has_buffered_input(&self) -> bool {
        !self.reader.buffer().is_empty() || self.received.contains(&b'\n')
    }

    fn raw_fd(&self) -> RawFd {
        self.writer.as_raw_fd()
    }

    fn idle_timeout(&self) -> Duration {
        self.idle
    }

    fn expire(&mut self) {
        let _ = self.reply("expired");
    }

    fn refuse_no_thread(&mut self, _error: &std::io::Error) {
        let _ = self.reply("no thread");
    }

    fn kill(&self) {
        let _ = self.writer.shutdown(Shutdown::Both);
    }

    fn thread_idle() {
        IDLE_RELEASES.fetch_add(1, Ordering::Relaxed);
    }

    fn idle_release_after() -> Option<Duration> {
        Some(IDLE_RELEASE_AFTER)
    }
}

/// Waits up to 10 s for `f` to hold, polling every 2 ms; fails the test naming `what`.
pub fn eventually(what: &str, f: impl Fn() -> bool) {
    let t = Instant::now();
    while !f() {
        assert!(t.elapsed() < Duration::from_secs(10), "timed out: {what}");
        std::thread::sleep(Duration::from_millis(2));
    }
}

/// How long a pool thread that ran commands sleeps before it calls `thread_idle`.
pub const IDLE_RELEASE_AFTER: Duration = Duration::from_millis(50);

/// Calls of `LineSession::thread_idle` in this test binary.
pub static IDLE_RELEASES: AtomicUsize = AtomicUsize::new(0);

fn lossy(b: Vec<u8>) -> String {
    String::from_utf8_lossy(&b).into_owned()
}

/// An acceptor thread feeding a handler.
#[derive(Debug)]
pub struct Server {
    pub addr: std::net::SocketAddr,
    stop: Arc<AtomicBool>,
    acceptor: Option<JoinHandle<()>>,
}

impl Server {
    pub fn start(handler: Arc<dyn ConnectionHandler<LineSession>>, idle: Duration) -> Server {
        let l = TcpListener::bind("127.0.0.1:0").expect("bind");
        let addr = l.local_addr().unwrap();
        let stop = Arc::new(AtomicBool::new(false));
        let s2 = stop.clone();
        let acceptor = std::thread::spawn(move || {
            for s in l.incoming() {
                if s2.load(Ordering::SeqCst) {
                    break;
                }
                if let Ok(s) = s {
                    let _ = s.set_nodelay(true);
                    handler.add_connection(LineSession::new(s, idle));
                }
            }
        });
        Server {
            addr,
            stop,
            acceptor: Some(acceptor),
        }
    }

    pub fn client(&self) -> Client {
        Client::connect(self.addr, false)
    }

    pub fn admin(&self) -> Client {
        Client::connect(self.addr, true)
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        let _ = TcpStream::connect(self.addr);
        if let Some(a) = self.acceptor.take() {
            let _ = a.join();
        }
    }
}

/// A toy client.
#[derive(Debug)]
pub struct Client {
    reader: BufReader<TcpStream>,
    writer: TcpStream,
}

impl Client {
    fn connect(addr: std::net::SocketAddr, admin: bool) -> Client {
        let s = TcpStream::connect(addr).expect("connect");
        s.set_nodelay(true).unwrap();
        s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
        let mut c = Client {
            reader: BufReader::new(s.try_clone().unwrap()),
            writer: s,
        };
        c.send(if admin { "hello admin" } else { "hello" });
        assert_eq!(c.recv(), "hi");
        c
    }

    pub fn send(&mut self, line: &str) {
        self.writer
            .write_all(format!("{line}\n").as_bytes())
            .expect("send");
    }

    /// The next reply line ("" at end of file).
    pub fn recv(&mut self) -> String {
        let mut line = String::new();
        let _ = self.reader.read_line(&mut line);
        line.trim().to_string()
    }

    /// Sends `line` and times the reply.
    pub fn call(&mut self, line: &str) -> (String, Duration) {
        let t = Instant::now();
        self.send(line);
        let r = self.recv();
        (r, t.elapsed())
    }
}

/// The backends to run a test on: epoll, io_uring readiness and io_uring ring I/O. Where
/// io_uring (or its data path) is unusable the test fails under `TPBED_REQUIRE_TOOLS=1`;
/// otherwise it writes `SKIPPED <test> on io_uring: <reason>` to the terminal (past the
/// harness's output capture) and runs on what remains.
pub fn pollers() -> Vec<(PollerKind, IoMode)> {
    let mut v = vec![(PollerKind::Epoll, IoMode::Poll)];
    for io in [IoMode::Poll, IoMode::Ring] {
        match pool_core::poller::choose(PollerKind::IoUring, io).fallback_reason {
            None => v.push((PollerKind::IoUring, io)),
            Some(why) => {
                let test = std::thread::current()
                    .name()
                    .unwrap_or("a pool test")
                    .to_string();
                if std::env::var("TPBED_REQUIRE_TOOLS").as_deref() == Ok("1") {
                    panic!("{test} cannot run on io_uring (TPBED_REQUIRE_TOOLS=1): {why}");
                }
                let _ = writeln!(
                    std::io::stderr().lock(),
                    "SKIPPED {test} on io_uring ({} I/O): {why}",
                    io.name()
                );
            }
        }
    }
    v
}
