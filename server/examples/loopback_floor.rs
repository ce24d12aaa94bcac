//! The kernel's floor under a thread-per-connection server on TCP loopback: what one
//! request/response round trip costs the server's threads when they do nothing but `recv` and
//! `send` (no parsing, no engine), so the server CPU per query that tpbed-server and MariaDB
//! reach under sysbench can be set against it on the same machine.
//!
//! `cargo run --release -p tpbed-server --example loopback_floor -- [CONNS] [SECONDS] [MODE]`
//! (defaults 8, 10, `threads`): CONNS client threads each send a 70-byte request (the size of
//! sysbench's point-select COM_STMT_EXECUTE), wait for a 160-byte reply (its result set) and
//! repeat. MODE `threads`: a server thread per connection reads a request with one `recv` and
//! answers with one `send`, as tpbed-server's sessions do. MODE `epoll`: one server thread
//! serves every connection from a level-triggered epoll set, so replies are batched per wake
//! whenever several requests are ready (the best case of an event-driven server). Client and
//! server share the machine's cores. Prints round trips per second and the server threads'
//! user and system CPU per round trip (`getrusage(RUSAGE_THREAD)` of each server thread at its
//! end).

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Request and reply sizes, in bytes, of one sysbench point select over the binary protocol.
const REQUEST: usize = 70;
const REPLY: usize = 160;

/// A thread's user and system CPU time so far, in microseconds.
fn thread_cpu_us() -> (f64, f64) {
    // SAFETY: getrusage fills the struct it is given; RUSAGE_THREAD is valid on Linux.
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    unsafe { libc::getrusage(libc::RUSAGE_THREAD, &mut ru) };
    let us = |t: libc::timeval| t.tv_sec as f64 * 1e6 + t.tv_usec as f64;
    (us(ru.ru_utime), us(ru.ru_stime))
}

/// One server connection: answers every request until the client closes. Returns the round
/// trips served and the thread's CPU (user, system) in microseconds.
fn serve(mut s: TcpStream) -> (u64, f64, f64) {
    s.set_nodelay(true).expect("TCP_NODELAY");
    let mut req = [0u8; REQUEST];
    let reply = [7u8; REPLY];
    let mut served = 0;
    loop {
        match s.read(&mut req) {
            Ok(0) | Err(_) => break,
            Ok(_) => {}
        }
        if s.write_all(&reply).is_err() {
            break;
        }
        served += 1;
    }
    let (user, sys) = thread_cpu_us();
    (served, user, sys)
}

/// One server thread for every connection, driven by a level-triggered epoll set: each ready
/// socket gets one `recv` and one `send`. Returns when every client has closed.
fn serve_epoll(conns: Vec<TcpStream>) -> (u64, f64, f64) {
    use std::os::fd::AsRawFd;
    // SAFETY: epoll_create1 returns a new descriptor or -1.
    let ep = unsafe { libc::epoll_create1(libc::EPOLL_CLOEXEC) };
    assert!(ep >= 0, "epoll_create1");
    for (i, c) in conns.iter().enumerate() {
        c.set_nodelay(true).expect("TCP_NODELAY");
        let mut ev = libc::epoll_event {
            events: libc::EPOLLIN as u32,
            u64: i as u64,
        };
        // SAFETY: registers a live socket with a live epoll set.
        let rc = unsafe { libc::epoll_ctl(ep, libc::EPOLL_CTL_ADD, c.as_raw_fd(), &mut ev) };
        assert_eq!(rc, 0, "epoll_ctl");
    }
    let mut events = [libc::epoll_event { events: 0, u64: 0 }; 64];
    let mut conns: Vec<Option<TcpStream>> = conns.into_iter().map(Some).collect();
    let (mut open, mut served) = (conns.len(), 0u64);
    let mut req = [0u8; REQUEST];
    let reply = [7u8; REPLY];
    while open > 0 {
        // SAFETY: waits into a live array of the length given.
        let n = unsafe { libc::epoll_wait(ep, events.as_mut_ptr(), events.len() as i32, -1) };
        for ev in &events[..n.max(0) as usize] {
            let i = ev.u64 as usize;
            let Some(s) = conns[i].as_mut() else { continue };
            let done = match s.read(&mut req) {
                Ok(0) | Err(_) => true,
                Ok(_) => s.write_all(&reply).is_err(),
            };
            if done {
                conns[i] = None;
                open -= 1;
            } else {
                served += 1;
            }
        }
    }
    let (user, sys) = thread_cpu_us();
    // SAFETY: closes the epoll descriptor made above.
    unsafe { libc::close(ep) };
    (served, user, sys)
}

/// One client: sends a request, reads its whole reply, repeats until `stop`.
fn client(addr: std::net::SocketAddr, stop: Arc<AtomicBool>) {
    let mut s = TcpStream::connect(addr).expect("connect");
    s.set_nodelay(true).expect("TCP_NODELAY");
    let req = [1u8; REQUEST];
    let mut reply = [0u8; REPLY];
    while !stop.load(Ordering::Relaxed) {
        if s.write_all(&req).is_err() || s.read_exact(&mut reply).is_err() {
            break;
        }
    }
}

fn main() {
    let mut args = std::env::args().skip(1);
    let conns: usize = args.next().map_or(8, |a| a.parse().expect("CONNS"));
    let secs: u64 = args.next().map_or(10, |a| a.parse().expect("SECONDS"));
    let epoll = match args.next().as_deref() {
        None | Some("threads") => false,
        Some("epoll") => true,
        Some(other) => panic!("MODE is threads or epoll, not {other}"),
    };
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
    let addr = listener.local_addr().expect("addr");
    let stop = Arc::new(AtomicBool::new(false));
    let clients: Vec<_> = (0..conns)
        .map(|_| {
            let stop = stop.clone();
            std::thread::spawn(move || client(addr, stop))
        })
        .collect();
    let accepted = (0..conns).map(|_| listener.accept().expect("accept").0);
    let servers: Vec<_> = if epoll {
        let all: Vec<_> = accepted.collect();
        vec![std::thread::spawn(move || serve_epoll(all))]
    } else {
        accepted
            .map(|s| std::thread::spawn(move || serve(s)))
            .collect()
    };
    let start = Instant::now();
    std::thread::sleep(Duration::from_secs(secs));
    stop.store(true, Ordering::Relaxed);
    for c in clients {
        c.join().expect("client thread");
    }
    let elapsed = start.elapsed().as_secs_f64();
    let (mut trips, mut user, mut sys) = (0u64, 0.0, 0.0);
    for s in servers {
        let (n, u, k) = s.join().expect("server thread");
        trips += n;
        user += u;
        sys += k;
    }
    let per = |x: f64| x / trips.max(1) as f64;
    let mode = if epoll {
        "epoll"
    } else {
        "thread-per-connection"
    };
    println!(
        "{mode} server, connections {conns}, {:.0} round trips/s, server CPU per round trip: {:.2} µs \
         (user {:.2}, sys {:.2})",
        trips as f64 / elapsed,
        per(user + sys),
        per(user),
        per(sys)
    );
}
