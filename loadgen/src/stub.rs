//! An in-process stub MySQL server for tests, built from the protocol crate's server-side
//! encoders: accepts any login, answers every SELECT (text or prepared) with one row and
//! everything else with OK, and can stall every reply during a time window.

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};

use protocol::caps::{Capabilities, StatusFlags};
use protocol::column::{ColumnDefinition, ColumnType};
use protocol::command::Command;
use protocol::handshake::{HandshakeResponse, HandshakeV10};
use protocol::packet::{write_packet_with, Framer};
use protocol::reply::{write_prepare_ok, OkPacket, ResultSetWriter};
use protocol::value::BinaryValue;

/// A running stub; it stops accepting when dropped (connections end when clients quit).
#[derive(Debug)]
pub(crate) struct Stub {
    /// Where it listens.
    pub(crate) addr: SocketAddr,
    stop: Arc<AtomicBool>,
}

/// When to stall: `after` the first command arrives, for `len`, every reply waits.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Stall {
    /// Offset from the first command.
    pub(crate) after: Duration,
    /// How long.
    pub(crate) len: Duration,
}

impl Stub {
    /// Starts a stub on an ephemeral loopback port.
    pub(crate) fn start(stall: Option<Stall>) -> Stub {
        Stub::start_with(stall, None)
    }

    /// Like `start`; with `drop_after`, each connection is closed without a reply when its
    /// command number `drop_after + 1` arrives (a lost connection, 2013, for the client).
    pub(crate) fn start_with(stall: Option<Stall>, drop_after: Option<u32>) -> Stub {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind stub");
        listener
            .set_nonblocking(true)
            .expect("nonblocking listener");
        let addr = listener.local_addr().expect("stub addr");
        let stop = Arc::new(AtomicBool::new(false));
        let stop2 = stop.clone();
        let first = Arc::new(OnceLock::<Instant>::new());
        let ids = Arc::new(AtomicU32::new(1));
        std::thread::spawn(move || {
            while !stop2.load(Ordering::Relaxed) {
                match listener.accept() {
                    Ok((s, _)) => {
                        let (first, ids) = (first.clone(), ids.clone());
                        std::thread::spawn(move || serve(s, stall, drop_after, &first, &ids));
                    }
                    Err(_) => std::thread::sleep(Duration::from_millis(2)),
                }
            }
        });
        Stub { addr, stop }
    }
}

impl Drop for Stub {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
    }
}

fn serve(
    mut s: TcpStream,
    stall: Option<Stall>,
    drop_after: Option<u32>,
    first: &OnceLock<Instant>,
    ids: &AtomicU32,
) {
    let mut commands = 0u32;
    let _ = s.set_nodelay(true);
    let caps = Capabilities::SERVER_DEFAULT;
    let mut out = Vec::new();
    let mut seq = 0u8;
    let greeting = HandshakeV10 {
        server_version: "8.0.36-tpbed-load-stub".into(),
        connection_id: ids.fetch_add(1, Ordering::Relaxed),
        auth_plugin_data: [7; 20],
        capabilities: caps,
        charset: 45,
        status: StatusFlags::AUTOCOMMIT,
        auth_plugin_name: "mysql_native_password".into(),
    };
    write_packet_with(&mut out, &mut seq, |o| greeting.encode(o));
    if s.write_all(&out).is_err() {
        return;
    }
    let mut framer = Framer::new(1 << 24);
    let mut buf = vec![0u8; 64 * 1024];
    let mut negotiated: Option<Capabilities> = None;
    let col = [ColumnDefinition::new("c", ColumnType::VarString)];
    loop {
        let (pseq, payload) = match framer.next_packet() {
            Ok(Some(p)) => p,
            Ok(None) => match s.read(&mut buf) {
                Ok(0) | Err(_) => return,
                Ok(n) => {
                    framer.push(&buf[..n]);
                    continue;
                }
            },
            Err(_) => return,
        };
        out.clear();
        let Some(c) = negotiated else {
            let Ok(resp) = HandshakeResponse::decode(&payload) else {
                return;
            };
            let c = resp.capabilities & caps;
            negotiated = Some(c);
            let mut seq = pseq.wrapping_add(1);
            OkPacket {
                status: StatusFlags::AUTOCOMMIT,
                ..OkPacket::default()
            }
            .write(&mut out, &mut seq, c);
            if s.write_all(&out).is_err() {
                return;
            }
            continue;
        };
        commands += 1;
        if drop_after.is_some_and(|n| commands > n) {
            return;
        }
        let t0 = *first.get_or_init(Instant::now);
        if let Some(st) = stall {
            let (a, b) = (t0 + st.after, t0 + st.after + st.len);
            let now = Instant::now();
            if now >= a && now < b {
                std::thread::sleep(b - now);
            }
        }
        let mut seq = 1u8;
        match Command::decode(&payload) {
            Ok(Command::Quit) | Err(_) => return,
            Ok(Command::StmtClose(_)) => continue,
            Ok(Command::Query(q)) if q.len() >= 6 && q[..6].eq_ignore_ascii_case(b"SELECT") => {
                let mut w = ResultSetWriter::start(&mut out, &mut seq, c, &col);
                w.text_row([Some(&b"stub"[..])]);
                w.finish(StatusFlags::AUTOCOMMIT, 0);
            }
            Ok(Command::StmtPrepare(q)) => {
                let n = q.iter().filter(|&&b| b == b'?').count();
                let params = vec![ColumnDefinition::new("?", ColumnType::LongLong); n];
                let id = ids.fetch_add(1, Ordering::Relaxed);
                write_prepare_ok(&mut out, &mut seq, c, id, &params, &col, 0);
            }
            Ok(Command::StmtExecute(_)) => {
                let mut w = ResultSetWriter::start(&mut out, &mut seq, c, &col);
                w.binary_row(&[BinaryValue::Bytes(b"stub".to_vec())], &col);
                w.finish(StatusFlags::AUTOCOMMIT, 0);
            }
            Ok(_) => OkPacket {
                status: StatusFlags::AUTOCOMMIT,
                ..OkPacket::default()
            }
            .write(&mut out, &mut seq, c),
        }
        if s.write_all(&out).is_err() {
            return;
        }
    }
}
