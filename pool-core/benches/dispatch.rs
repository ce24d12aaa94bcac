//! What the pool's dispatch path costs per command, for every registered scheduling policy:
//! a client writes one byte, the group's poller sees the socket ready, the policy classifies
//! the event into a queue, a thread takes it (the policy's pick and credit), the session reads
//! the byte and writes one back, and the connection is re-armed in the poller. Measured as
//! round trips over Unix socket pairs through `PoolBuilder`'s public API, one group, with one
//! connection (a lone command: the path's latency) and with 16 (16 commands sent at once, so
//! events queue and threads pick among them). Every entry of `policy::REGISTRY` is measured:
//! a policy registered later is benched with no change here.
//!
//! `cargo bench -p tpbed-pool-core --bench dispatch`

// criterion_group! makes a public function it cannot document.
#![allow(missing_docs)]

use std::io::{Read, Write};
use std::os::fd::{AsRawFd, RawFd};
use std::os::unix::net::UnixStream;
use std::time::Duration;

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use pool_core::policy::REGISTRY;
use pool_core::{
    ConnectionHandler, LogSink, Outcome, PoolBuilder, PoolConfig, Received, Session, ThreadPool,
};

/// A session whose command is one byte and whose reply is that byte.
struct Echo {
    sock: UnixStream,
}

impl Echo {
    /// Reads one byte and writes it back; end of file or an error closes.
    fn echo(&mut self) -> Outcome {
        let mut b = [0u8; 1];
        match self.sock.read(&mut b) {
            Ok(1) if self.sock.write_all(&b).is_ok() => Outcome::Continue,
            _ => Outcome::Close,
        }
    }
}

impl Session for Echo {
    fn handshake(&mut self) -> Outcome {
        Outcome::Continue
    }
    fn run(&mut self) -> Outcome {
        self.echo()
    }
    fn receive(&mut self, _input: Received) {}
    fn run_deferred(&mut self, _out: &mut Vec<u8>) -> Outcome {
        self.echo()
    }
    fn write_timeout(&self) -> Duration {
        Duration::from_secs(30)
    }
    fn in_transaction(&self) -> bool {
        false
    }
    fn is_tp_admin(&self) -> bool {
        false
    }
    fn high_priority(&self) -> bool {
        false
    }
    fn has_buffered_input(&self) -> bool {
        false
    }
    fn raw_fd(&self) -> RawFd {
        self.sock.as_raw_fd()
    }
    fn idle_timeout(&self) -> Duration {
        Duration::from_secs(3600)
    }
    fn expire(&mut self) {}
    fn refuse_no_thread(&mut self, _error: &std::io::Error) {}
    fn kill(&self) {
        let _ = self.sock.shutdown(std::net::Shutdown::Both);
    }
}

/// A one-group pool running `policy` with `conns` echo connections; returns the client ends.
fn pool_with(policy: &str, conns: usize) -> (ThreadPool<Echo>, Vec<UnixStream>) {
    let mut config = PoolConfig::mysql_defaults(2);
    config.size = 1;
    config.policy = policy.to_string();
    let quiet: LogSink = std::sync::Arc::new(|_, _: &str| {});
    let (pool, _startup) = PoolBuilder::new(config)
        .log(quiet)
        .build::<Echo>()
        .unwrap_or_else(|e| panic!("a pool with policy {policy}: {e:?}"));
    let clients = (0..conns)
        .map(|_| {
            let (client, server) = UnixStream::pair().expect("socketpair");
            pool.add_connection(Echo { sock: server });
            client
        })
        .collect();
    (pool, clients)
}

/// Sends one command on every client, then reads every reply.
fn round_trip(clients: &mut [UnixStream]) {
    for c in clients.iter_mut() {
        c.write_all(b"x").expect("send");
    }
    let mut b = [0u8; 1];
    for c in clients.iter_mut() {
        c.read_exact(&mut b).expect("reply");
    }
}

fn dispatch(c: &mut Criterion) {
    let mut g = c.benchmark_group("dispatch");
    g.measurement_time(Duration::from_secs(3));
    g.warm_up_time(Duration::from_millis(500));
    for policy in REGISTRY {
        let name = policy.name();
        for conns in [1usize, 16] {
            let (pool, mut clients) = pool_with(name, conns);
            // the handshakes ran: every connection answers before the clock starts
            round_trip(&mut clients);
            g.throughput(Throughput::Elements(conns as u64));
            g.bench_function(BenchmarkId::new(name, format!("{conns} conn")), |b| {
                b.iter(|| round_trip(&mut clients))
            });
            drop(clients);
            pool.shutdown();
        }
    }
    g.finish();
}

criterion_group!(benches, dispatch);
criterion_main!(benches);
