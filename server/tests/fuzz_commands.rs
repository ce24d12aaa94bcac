//! Fuzzes the real `tpbed-server` binary (built with the test profile, so with overflow
//! checks) over 127.0.0.1 with a seeded generator, in both connection-handling modes: every
//! command byte with random payloads, every built-in function with extreme arguments
//! (`i64::MIN/MAX`, 0, -1, huge lengths, NULL), every binary parameter type with arbitrary
//! bytes, deep nesting, huge IN lists, long-data floods and mutated packets.
//!
//! A case fails the run when the server answers ERR 1105 "Internal error" (a caught panic),
//! sends no reply within the timeout (a hang), breaks the sequence ids, drops a connection
//! without an error, or exits. At the end the server must be back to the threads it started
//! with (plus its thread cache) and its RSS must have stayed bounded.
//!
//! `TPBED_FUZZ_CASES` sets the cases per handling mode (default: 4,000 or 30 seconds,
//! whichever ends first, so `cargo test` stays short) and `TPBED_FUZZ_SEED` the seed
//! (default: fixed, so a plain `cargo test` is repeatable); a failure prints both and the
//! case. Long runs go faster optimised, with overflow checks still on:
//! `TPBED_FUZZ_CASES=1000000 cargo test -p tpbed-server --profile fuzz --test fuzz_commands`.

use std::io::{BufRead, BufReader, ErrorKind, Read, Write};
use std::net::TcpStream;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use protocol::client::blocking::Conn;
use protocol::client::ClientConfig;
use protocol::packet::{frame_header, write_packet, MAX_PAYLOAD};
use protocol::Capabilities;
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

/// The server's `max_allowed_packet` during the run: small, so floods reach it quickly.
const MAX_PACKET: usize = 4 << 20;
/// A reply slower than this is a hang.
const REPLY_TIMEOUT: Duration = Duration::from_secs(60);
/// Connections the cases rotate over.
const CONNECTIONS: usize = 4;

/// A running server process, killed on drop.
struct Server {
    child: Child,
    port: u16,
}

impl Server {
    fn start(mode: &str) -> Server {
        let mut child = Command::new(env!("CARGO_BIN_EXE_tpbed-server"))
            .args([
                "--port=0",
                "--bind-address=127.0.0.1",
                &format!("--thread-handling={mode}"),
                &format!("--max-allowed-packet={MAX_PACKET}"),
                "--max-prepared-stmt-count=64",
            ])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect("start tpbed-server");
        let stderr = child.stderr.take().expect("stderr piped");
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let mut sent = false;
            for line in BufReader::new(stderr).lines().map_while(Result::ok) {
                if !sent {
                    if let Some(p) = line.split("port: ").nth(1) {
                        let port: u16 = p.split_whitespace().next().unwrap().parse().unwrap();
                        tx.send(port).unwrap();
                        sent = true;
                    }
                }
                if line.contains("internal error") || line.contains("panicked") {
                    eprintln!("server: {line}");
                }
            }
        });
        let port = rx
            .recv_timeout(Duration::from_secs(60))
            .expect("server ready");
        Server { child, port }
    }

    fn alive(&mut self) -> bool {
        matches!(self.child.try_wait(), Ok(None))
    }

    /// VmRSS (KiB) and Threads from /proc.
    fn rss_and_threads(&self) -> (u64, u64) {
        let status = std::fs::read_to_string(format!("/proc/{}/status", self.child.id())).unwrap();
        let field = |name: &str| -> u64 {
            status
                .lines()
                .find_map(|l| l.strip_prefix(name))
                .and_then(|v| v.split_whitespace().next())
                .and_then(|v| v.parse().ok())
                .unwrap_or(0)
        };
        (field("VmRSS:"), field("Threads:"))
    }

    fn connect(&self) -> TcpStream {
        let stream = TcpStream::connect(("127.0.0.1", self.port)).expect("connect");
        stream.set_read_timeout(Some(REPLY_TIMEOUT)).unwrap();
        let mut cfg = ClientConfig::new("root", "");
        // Plain EOF-terminated result sets and one statement per query keep the reply
        // reader below simple.
        cfg.capabilities = Capabilities::CLIENT_DEFAULT
            .difference(Capabilities::DEPRECATE_EOF | Capabilities::MULTI_STATEMENTS);
        let mut conn = Conn::connect(stream, cfg).expect("log in");
        // A table with a column of each kind for the cases that read and write rows.
        let mut setup = |sql: &str| {
            conn.query(sql).unwrap_or_else(|e| panic!("{sql}: {e}"));
        };
        setup("CREATE DATABASE IF NOT EXISTS fz");
        setup("USE fz");
        setup(
            "CREATE TABLE IF NOT EXISTS t (id BIGINT PRIMARY KEY AUTO_INCREMENT, i BIGINT, \
             u BIGINT UNSIGNED, d DECIMAL(20,6), f DOUBLE, s VARCHAR(64), dt DATETIME)",
        );
        // A table of one row for the wide joins: a join within the 61-table limit over `t`,
        // which the cases fill, would be a cross product no server finishes.
        setup("CREATE TABLE IF NOT EXISTS one (id INT PRIMARY KEY)");
        setup("INSERT IGNORE INTO one VALUES (1)");
        conn.into_inner()
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// How a reply ended.
#[derive(Debug)]
enum Reply {
    /// OK, a result set or another complete non-error reply.
    Done,
    /// PREPARE_OK with its statement id.
    Prepared(u32),
    /// ERR with its code and message.
    Err(u16, String),
    /// No reply: the command has none.
    Nothing,
    /// The server closed the connection.
    Closed,
}

/// Why a case failed.
type Failure = String;

/// Reads one packet; `Ok(None)` on a clean close.
fn read_packet(s: &mut TcpStream) -> Result<Option<(u8, Vec<u8>)>, Failure> {
    let mut payload = Vec::new();
    let mut first_seq = None;
    loop {
        let mut header = [0u8; 4];
        match s.read_exact(&mut header) {
            Ok(()) => {}
            Err(e) if e.kind() == ErrorKind::UnexpectedEof && first_seq.is_none() => {
                return Ok(None)
            }
            Err(e) if e.kind() == ErrorKind::ConnectionReset && first_seq.is_none() => {
                return Ok(None)
            }
            Err(e) if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut) => {
                return Err(format!("no reply within {REPLY_TIMEOUT:?} (hang)"))
            }
            Err(e) => return Err(format!("read failed: {e}")),
        }
        let (len, seq) = frame_header(&header).expect("four bytes");
        let start = payload.len();
        payload.resize(start + len, 0);
        s.read_exact(&mut payload[start..])
            .map_err(|e| format!("truncated packet: {e}"))?;
        first_seq.get_or_insert(seq);
        if len < MAX_PAYLOAD {
            return Ok(Some((first_seq.unwrap_or(seq), payload)));
        }
    }
}

fn lenenc(p: &[u8]) -> u64 {
    match p.first() {
        Some(&b) if b < 0xFB => u64::from(b),
        Some(0xFC) if p.len() >= 3 => u64::from(u16::from_le_bytes([p[1], p[2]])),
        Some(0xFD) if p.len() >= 4 => u64::from(u32::from_le_bytes([p[1], p[2], p[3], 0])),
        Some(0xFE) if p.len() >= 9 => u64::from_le_bytes(p[1..9].try_into().unwrap()),
        _ => u64::MAX,
    }
}

fn is_eof(p: &[u8]) -> bool {
    p.first() == Some(&0xFE) && p.len() < 9
}

fn err_of(p: &[u8]) -> Reply {
    let code = u16::from_le_bytes([
        p.get(1).copied().unwrap_or(0),
        p.get(2).copied().unwrap_or(0),
    ]);
    let msg = p.get(9..).map(String::from_utf8_lossy).unwrap_or_default();
    Reply::Err(code, msg.into_owned())
}

/// Reads the whole reply to a command of kind `cmd`, checking the sequence ids run on from
/// `next_seq`.
fn read_reply(s: &mut TcpStream, cmd: u8, mut next_seq: u8) -> Result<Reply, Failure> {
    let mut next = |s: &mut TcpStream| -> Result<Option<Vec<u8>>, Failure> {
        match read_packet(s)? {
            None => Ok(None),
            Some((seq, p)) => {
                if seq != next_seq {
                    return Err(format!("sequence id {seq}, expected {next_seq}"));
                }
                next_seq = next_seq.wrapping_add((p.len() / MAX_PAYLOAD + 1) as u8);
                Ok(Some(p))
            }
        }
    };
    let Some(first) = next(s)? else {
        return Ok(Reply::Closed);
    };
    match (cmd, first.first().copied()) {
        (_, Some(0xFF)) => return Ok(err_of(&first)),
        (_, Some(0x00)) if cmd != 0x16 => return Ok(Reply::Done),
        (0x09, _) => return Ok(Reply::Done),
        (_, Some(0xFE)) if cmd != 0x04 => return Ok(Reply::Done),
        _ => {}
    }
    // How many EOF-terminated runs of packets follow.
    let runs = match cmd {
        0x04 => {
            if is_eof(&first) {
                return Ok(Reply::Done);
            }
            1
        }
        0x16 => {
            let n = |i: usize| u16::from_le_bytes([first[i], first[i + 1]]);
            if first.len() < 9 {
                return Err(format!("short PREPARE_OK {first:?}"));
            }
            usize::from(n(7) > 0) + usize::from(n(5) > 0)
        }
        _ => {
            if lenenc(&first) == u64::MAX {
                return Err(format!("bad column count {first:?}"));
            }
            2
        }
    };
    for _ in 0..runs {
        loop {
            let Some(p) = next(s)? else {
                return Err("connection closed inside a reply".into());
            };
            if p.first() == Some(&0xFF) {
                return Ok(err_of(&p));
            }
            if is_eof(&p) {
                break;
            }
        }
    }
    if cmd == 0x16 {
        return Ok(Reply::Prepared(u32::from_le_bytes(
            first[1..5].try_into().expect("four bytes"),
        )));
    }
    Ok(Reply::Done)
}

/// Values that break naive arithmetic and length handling.
const EXTREMES: &[&str] = &[
    "9223372036854775807",
    "-9223372036854775808",
    "-(-9223372036854775808)",
    "18446744073709551615",
    "18446744073709551616",
    "0",
    "-1",
    "1",
    "NULL",
    "''",
    "'abc'",
    "'-9223372036854775808'",
    "'1e400'",
    "1e308",
    "-1e308",
    "2.5e-308",
    "0.000000000000000000000000000001",
    "99999999999999999999999999999999999.99",
    "-99999999999999999999999999999999999.99",
    "X'FF00FE'",
    "'2024-02-29 23:59:59.999999'",
    "'9999-12-31 23:59:59'",
    "'0000-00-00'",
    "4294967296",
    "2147483648",
    "@@max_allowed_packet",
    "@undefined",
    "REPEAT('x', 1000)",
    "'%_\\\\'",
    "CAST(-1 AS UNSIGNED)",
    "1/0",
    "0.1*0.1*0.1*0.1*0.1*0.1*0.1*0.1*0.1*0.1*0.1*0.1*0.1*0.1*0.1*0.1",
];

/// Every built-in function with its arity (`None`: variadic).
const FUNCTIONS: &[(&str, Option<usize>)] = &[
    ("VERSION", Some(0)),
    ("DATABASE", Some(0)),
    ("USER", Some(0)),
    ("CURRENT_USER", Some(0)),
    ("CONNECTION_ID", Some(0)),
    ("LAST_INSERT_ID", Some(1)),
    ("NOW", Some(1)),
    ("UTC_TIMESTAMP", Some(0)),
    ("CURDATE", Some(0)),
    ("UNIX_TIMESTAMP", Some(1)),
    ("TIMEDIFF", Some(2)),
    ("CONCAT", None),
    ("CONCAT_WS", None),
    ("LENGTH", Some(1)),
    ("CHAR_LENGTH", Some(1)),
    ("SUBSTRING", Some(3)),
    ("SUBSTRING", Some(2)),
    ("MID", Some(3)),
    ("UPPER", Some(1)),
    ("LOWER", Some(1)),
    ("REPEAT", Some(2)),
    ("ABS", Some(1)),
    ("ROUND", Some(2)),
    ("ROUND", Some(1)),
    ("FLOOR", Some(1)),
    ("CEIL", Some(1)),
    ("MOD", Some(2)),
    ("GREATEST", None),
    ("LEAST", None),
    ("COALESCE", None),
    ("IFNULL", Some(2)),
    ("NULLIF", Some(2)),
    ("IF", Some(3)),
    ("RAND", Some(1)),
    ("SLEEP", Some(1)),
    ("BENCHMARK", Some(2)),
];

const BINARY_OPS: &[&str] = &[
    "+", "-", "*", "/", "DIV", "%", "MOD", "=", "<=>", "<>", "<", ">=", "AND", "OR", "XOR", "&",
    "|", "^", "<<", ">>", "LIKE", "NOT LIKE",
];

const CASTS: &[&str] = &[
    "SIGNED",
    "UNSIGNED",
    "CHAR",
    "DOUBLE",
    "DECIMAL(65,30)",
    "DECIMAL(10,2)",
    "DECIMAL(65,31)",
    "DATE",
    "DATETIME",
];

/// Column types a binary parameter may claim (with and without the unsigned flag).
const PARAM_TYPES: &[u8] = &[
    0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 245, 246, 247, 248, 249,
    250, 251, 252, 253, 254, 255,
];

fn pick<'a>(rng: &mut StdRng, from: &[&'a str]) -> &'a str {
    from[rng.random_range(0..from.len())]
}

/// A scalar expression of extreme leaves, up to `depth` levels of functions and operators.
fn expr(rng: &mut StdRng, depth: u32) -> String {
    if depth == 0 || rng.random_bool(0.3) {
        // SLEEP and BENCHMARK only with tiny arguments: a case must stay fast.
        return pick(rng, EXTREMES).to_owned();
    }
    match rng.random_range(0..4) {
        0 => {
            let (name, arity) = FUNCTIONS[rng.random_range(0..FUNCTIONS.len())];
            if name == "SLEEP" {
                return "SLEEP(0)".into();
            }
            if name == "BENCHMARK" {
                return format!(
                    "BENCHMARK({}, {})",
                    rng.random_range(0..3),
                    expr(rng, depth - 1)
                );
            }
            let n = arity.unwrap_or_else(|| rng.random_range(1..6));
            let args: Vec<String> = (0..n).map(|_| expr(rng, depth - 1)).collect();
            format!("{name}({})", args.join(", "))
        }
        1 => format!(
            "({} {} {})",
            expr(rng, depth - 1),
            pick(rng, BINARY_OPS),
            expr(rng, depth - 1)
        ),
        2 => format!("CAST({} AS {})", expr(rng, depth - 1), pick(rng, CASTS)),
        _ => format!(
            "CASE WHEN {} THEN {} ELSE {} END",
            expr(rng, depth - 1),
            expr(rng, depth - 1),
            expr(rng, depth - 1)
        ),
    }
}

/// A statement nesting up to a few thousand levels in one of the recursive forms, or joining
/// up to a few thousand copies of the one-row table.
fn deep(rng: &mut StdRng) -> String {
    let max = if rng.random_bool(0.1) { 3000 } else { 700 };
    let n = rng.random_range(1..max);
    match rng.random_range(0..10) {
        0 => format!(
            "SELECT {}",
            vec!["1"; n].join(pick(rng, &["+", "*", " OR ", " AND "]))
        ),
        8 => format!(
            "SELECT 1 FROM one{}",
            " JOIN one".repeat(n + rng.random_range(0..2000))
        ),
        9 => {
            let tables: Vec<String> = (0..n.max(1) * 2).map(|i| format!("one a{i}")).collect();
            format!("SELECT 1 FROM {}", tables.join(", "))
        }
        1 => format!("SELECT {}1{}", "(".repeat(n), ")".repeat(n)),
        2 => format!("SELECT {}1", "-".repeat(n)),
        3 => format!("SELECT {}1", "NOT ".repeat(n)),
        4 => format!("SELECT 1{}", " IS NULL".repeat(n)),
        5 => vec!["SELECT 1"; n.min(1500)].join(" UNION "),
        6 => format!("SELECT {}1{}", "ABS(".repeat(n), ")".repeat(n)),
        _ => format!(
            "SELECT {}1{}",
            "CASE WHEN 1 THEN ".repeat(n),
            " END".repeat(n)
        ),
    }
}

/// A text statement over the table.
fn table_statement(rng: &mut StdRng) -> String {
    match rng.random_range(0..4) {
        0 => format!(
            "INSERT INTO t (i, u, d, f, s, dt) VALUES ({}, {}, {}, {}, {}, {})",
            expr(rng, 1),
            expr(rng, 1),
            expr(rng, 1),
            expr(rng, 1),
            expr(rng, 1),
            expr(rng, 1)
        ),
        1 => format!(
            "SELECT id, i + u, d * f, CONCAT(s, dt) FROM t WHERE {} LIMIT 5",
            expr(rng, 2)
        ),
        2 => format!(
            "UPDATE t SET i = {} WHERE id = {}",
            expr(rng, 2),
            expr(rng, 1)
        ),
        _ => format!("DELETE FROM t WHERE i = {} LIMIT 1", expr(rng, 1)),
    }
}

/// Arbitrary bytes for a binary parameter value: the right width for the type, or not.
fn param_bytes(rng: &mut StdRng, ty: u8) -> Vec<u8> {
    let width = match ty {
        1 => 1,
        2 | 13 => 2,
        3 | 4 | 9 => 4,
        5 | 8 => 8,
        6 => 0,
        7 | 10 | 11 | 12 | 14 | 17 | 18 | 19 => {
            // Temporal values: a length byte then that many bytes (0, 4, 7, 8, 11, 12).
            let len = *[0u8, 4, 7, 8, 11, 12, 255]
                .get(rng.random_range(0..7))
                .unwrap_or(&0);
            let mut v = vec![len];
            v.extend((0..len.min(12)).map(|_| rng.random::<u8>()));
            return v;
        }
        _ => {
            // Length-encoded bytes, sometimes lying about the length.
            let n = rng.random_range(0..40usize);
            let mut v = vec![if rng.random_bool(0.1) { 0xFC } else { n as u8 }];
            v.extend((0..n).map(|_| rng.random::<u8>()));
            return v;
        }
    };
    let extreme: [u8; 8] = match rng.random_range(0..5) {
        0 => i64::MIN.to_le_bytes(),
        1 => i64::MAX.to_le_bytes(),
        2 => (-1i64).to_le_bytes(),
        3 => f64::NAN.to_le_bytes(),
        _ => rng.random(),
    };
    extreme[..width].to_vec()
}

/// A COM_STMT_EXECUTE payload for `stmt` with `n` parameters of random types and bytes.
fn execute_payload(rng: &mut StdRng, stmt: u32, n: usize) -> Vec<u8> {
    let mut p = vec![0x17];
    p.extend_from_slice(&stmt.to_le_bytes());
    p.push(if rng.random_bool(0.9) {
        0
    } else {
        rng.random()
    });
    p.extend_from_slice(&1u32.to_le_bytes());
    if n > 0 {
        let mut nulls = vec![0u8; n.div_ceil(8)];
        for b in &mut nulls {
            *b = if rng.random_bool(0.8) {
                0
            } else {
                rng.random()
            };
        }
        p.extend_from_slice(&nulls);
        p.push(u8::from(rng.random_bool(0.95)));
        let types: Vec<u8> = (0..n)
            .map(|_| PARAM_TYPES[rng.random_range(0..PARAM_TYPES.len())])
            .collect();
        for t in &types {
            p.push(*t);
            p.push(if rng.random_bool(0.3) { 0x80 } else { 0 });
        }
        for t in &types {
            p.extend(param_bytes(rng, *t));
        }
    }
    if rng.random_bool(0.05) {
        let cut = rng.random_range(0..p.len());
        p.truncate(cut.max(1));
    }
    p
}

/// One case: the packets to send and the command kind whose reply to read.
struct Case {
    what: String,
    packets: Vec<Vec<u8>>,
    /// The kind of the last packet (its reply is read; earlier ones have none).
    cmd: u8,
}

fn query(sql: String) -> Case {
    let mut p = vec![0x03];
    p.extend_from_slice(sql.as_bytes());
    Case {
        what: format!("query {}", &sql[..sql.len().min(300)]),
        packets: vec![p],
        cmd: 0x03,
    }
}

/// Statements prepared on each connection, with their parameter counts.
const PREPARED: &[(&str, usize)] = &[
    ("SELECT ?", 1),
    ("SELECT ? + ?, CONCAT(?, 'x'), SUBSTRING(?, ?, ?)", 6),
    ("SELECT REPEAT(?, ?), ABS(?), ROUND(?, ?)", 5),
    (
        "INSERT INTO t (i, u, d, f, s, dt) VALUES (?, ?, ?, ?, ?, ?)",
        6,
    ),
    ("SELECT id FROM t WHERE i = ? OR s LIKE ? LIMIT 3", 2),
];

fn case(rng: &mut StdRng, stmts: &[u32]) -> Case {
    let pick_stmt = |rng: &mut StdRng| {
        let i = rng.random_range(0..stmts.len());
        (stmts[i], PREPARED[i].1)
    };
    match rng.random_range(0..100) {
        0..=29 => query(format!("SELECT {}", expr(rng, 3))),
        30..=39 => query(table_statement(rng)),
        40..=43 => query(deep(rng)),
        44..=45 => {
            // Mostly modest; one in twenty up to 60,000 items.
            let max = if rng.random_bool(0.05) { 60_000 } else { 1_000 };
            let n = rng.random_range(1..max);
            let items: Vec<String> = (0..n).map(|i| i.to_string()).collect();
            query(format!("SELECT 7 IN ({})", items.join(",")))
        }
        46..=62 => {
            let (id, n) = pick_stmt(rng);
            Case {
                what: format!("execute of statement {id} with random parameters"),
                packets: vec![execute_payload(rng, id, n)],
                cmd: 0x17,
            }
        }
        63..=65 => {
            // A long-data flood: sometimes past max_allowed_packet, then the execute.
            let (id, n) = pick_stmt(rng);
            // Mostly small; one in ten goes up to twice max_allowed_packet.
            let big = rng.random_bool(0.1);
            let chunk = rng.random_range(1..(if big { 1usize << 20 } else { 4096 }));
            let total = rng.random_range(0..(if big { MAX_PACKET * 2 } else { 65536 }));
            let mut packets = Vec::new();
            let mut sent = 0;
            while sent < total {
                let mut p = vec![0x18];
                p.extend_from_slice(&id.to_le_bytes());
                p.extend_from_slice(&(rng.random_range(0..n as u16 + 2)).to_le_bytes());
                p.resize(p.len() + chunk, b'z');
                packets.push(p);
                sent += chunk;
            }
            packets.push(execute_payload(rng, id, n));
            Case {
                what: format!("{total} bytes of long data in {chunk}-byte packets, then execute"),
                packets,
                cmd: 0x17,
            }
        }
        66..=77 => {
            // Any command byte with a random payload.
            let cmd = if rng.random_bool(0.8) {
                rng.random_range(0..0x21u8)
            } else {
                rng.random()
            };
            // COM_QUIT and COM_FIELD_LIST on a missing table are covered; COM_SHUTDOWN-like
            // bytes are unknown commands.
            let len = rng.random_range(0..64usize);
            let mut p = vec![cmd];
            p.extend((0..len).map(|_| rng.random::<u8>()));
            Case {
                what: format!("command 0x{cmd:02x} with {len} random bytes"),
                packets: vec![p],
                cmd,
            }
        }
        78..=87 => {
            // A valid query or execute with bytes flipped, cut or appended.
            let mut p = if rng.random_bool(0.5) {
                let mut q = vec![0x03];
                q.extend_from_slice(format!("SELECT {}", expr(rng, 2)).as_bytes());
                q
            } else {
                let (id, n) = pick_stmt(rng);
                execute_payload(rng, id, n)
            };
            for _ in 0..rng.random_range(1..6) {
                let i = rng.random_range(0..p.len());
                match rng.random_range(0..3) {
                    0 => p[i] ^= 1 << rng.random_range(0..8),
                    1 => p.truncate(i.max(1)),
                    _ => p.insert(i.max(1), rng.random()),
                }
            }
            defuse_long_waits(&mut p);
            let cmd = p[0];
            Case {
                what: format!("mutated packet {:?}", &p[..p.len().min(80)]),
                packets: vec![p],
                cmd,
            }
        }
        88..=91 => {
            let n = rng.random_range(0..4usize);
            let ops: Vec<String> = (0..n)
                .map(|_| format!("CAST({} AS {})", expr(rng, 1), pick(rng, CASTS)))
                .collect();
            query(if ops.is_empty() {
                "SELECT CAST(NULL AS SIGNED)".into()
            } else {
                format!("SELECT {}", ops.join(", "))
            })
        }
        92..=95 => query(format!(
            "SELECT {} {} {}",
            pick(rng, EXTREMES),
            pick(rng, BINARY_OPS),
            pick(rng, EXTREMES)
        )),
        _ => {
            // Prepare and close a statement of random text (max_prepared_stmt_count is 64).
            let sql = format!("SELECT {}", expr(rng, 2));
            let mut p = vec![0x16];
            p.extend_from_slice(sql.as_bytes());
            Case {
                what: format!("prepare {sql}"),
                packets: vec![p],
                cmd: 0x16,
            }
        }
    }
}

/// Prepares [`PREPARED`] on `s`; returns their ids.
/// Renames `SLEEP` and `BENCHMARK` in a mutated packet to functions of the same length that
/// return at once (`FLOOR`, `CONCAT_WS`): a mutation can turn `SLEEP(0)` into `SLEEP(70)`, whose
/// reply rightly takes longer than the hang timeout.
fn defuse_long_waits(p: &mut [u8]) {
    for (from, to) in [(&b"SLEEP"[..], &b"FLOOR"[..]), (b"BENCHMARK", b"CONCAT_WS")] {
        let mut i = 0;
        while i + from.len() <= p.len() {
            if p[i..i + from.len()].eq_ignore_ascii_case(from) {
                p[i..i + from.len()].copy_from_slice(to);
                i += from.len();
            } else {
                i += 1;
            }
        }
    }
}

fn prepare_all(s: &mut TcpStream) -> Vec<u32> {
    PREPARED
        .iter()
        .map(|(sql, _)| {
            let mut p = vec![0x16];
            p.extend_from_slice(sql.as_bytes());
            let mut wire = Vec::new();
            write_packet(&mut wire, &mut 0, &p);
            s.write_all(&wire).unwrap();
            let (_, ok) = read_packet(s).unwrap().expect("PREPARE_OK");
            assert_eq!(ok[0], 0, "prepare {sql}: {ok:?}");
            let id = u32::from_le_bytes(ok[1..5].try_into().unwrap());
            let (cols, params) = (
                u16::from_le_bytes([ok[5], ok[6]]),
                u16::from_le_bytes([ok[7], ok[8]]),
            );
            for n in [params, cols] {
                if n > 0 {
                    while !is_eof(&read_packet(s).unwrap().unwrap().1) {}
                }
            }
            id
        })
        .collect()
}

/// What a run does.
#[derive(Debug, Clone, Copy)]
struct Settings {
    cases: u64,
    seed: u64,
    /// Stop early after this long (the default short run).
    budget: Option<Duration>,
}

/// Runs up to `cfg.cases` cases against a server in `mode`; returns (cases run, elapsed).
fn fuzz(mode: &str, cfg: Settings) -> (u64, Duration) {
    let Settings {
        cases,
        seed,
        budget,
    } = cfg;
    let mut server = Server::start(mode);
    let (rss0, threads0) = server.rss_and_threads();
    let mut rng = StdRng::seed_from_u64(seed);
    let mut conns: Vec<(TcpStream, Vec<u32>)> = (0..CONNECTIONS)
        .map(|_| {
            let mut s = server.connect();
            let ids = prepare_all(&mut s);
            (s, ids)
        })
        .collect();
    let started = Instant::now();
    let mut peak_rss = rss0;
    let mut ran = 0;
    for n in 0..cases {
        if budget.is_some_and(|b| started.elapsed() > b) {
            break;
        }
        ran += 1;
        let slot = rng.random_range(0..CONNECTIONS);
        // Keep the table small, so scans stay fast however long the run.
        let c = if n % 256 == 255 {
            query("TRUNCATE TABLE t".into())
        } else {
            case(&mut rng, &conns[slot].1)
        };
        let fail = |why: &str| -> ! {
            panic!(
                "{mode}: case {n} (seed {seed}) failed: {why}\n  case: {}",
                c.what
            )
        };
        let s = &mut conns[slot].0;
        let mut wire = Vec::new();
        let mut last_seq = 0;
        for p in &c.packets {
            wire.clear();
            let mut seq = 0u8;
            write_packet(&mut wire, &mut seq, p);
            last_seq = seq;
            if let Err(e) = s.write_all(&wire) {
                // The server may close after an error it sent (1153); the reply read says.
                if e.kind() != ErrorKind::BrokenPipe && e.kind() != ErrorKind::ConnectionReset {
                    fail(&format!("write failed: {e}"));
                }
                break;
            }
        }
        let reply = match c.cmd {
            0x01 | 0x18 | 0x19 => Ok(Reply::Nothing),
            cmd => read_reply(s, cmd, last_seq),
        };
        let mut reprepare = false;
        let reopen = match reply {
            Err(why) => fail(&why),
            Ok(Reply::Prepared(id)) => {
                // Close it again: the statement count stays far below the limit.
                let mut close = vec![0x19];
                close.extend_from_slice(&id.to_le_bytes());
                wire.clear();
                write_packet(&mut wire, &mut 0, &close);
                s.write_all(&wire)
                    .unwrap_or_else(|e| fail(&format!("write failed: {e}")));
                false
            }
            // COM_RESET_CONNECTION closed the connection's statements.
            Ok(Reply::Done) if c.cmd == 0x1f => {
                reprepare = true;
                false
            }
            Ok(Reply::Err(1105, msg)) if msg.starts_with("Internal error") => {
                fail(&format!("a panic reached the client: {msg}"))
            }
            // mysqld closes the connection after these errors.
            Ok(Reply::Err(code, _)) => matches!(code, 1153 | 1158 | 1159),
            Ok(Reply::Closed) => fail("the connection closed without an error"),
            Ok(Reply::Done) => false,
            Ok(Reply::Nothing) => c.cmd == 0x01,
        };
        if !server.alive() {
            fail("the server exited");
        }
        if reopen {
            let mut s = server.connect();
            let ids = prepare_all(&mut s);
            conns[slot] = (s, ids);
        } else if reprepare {
            let ids = prepare_all(&mut conns[slot].0);
            conns[slot].1 = ids;
        }
        if n % 1000 == 999 {
            peak_rss = peak_rss.max(server.rss_and_threads().0);
        }
    }
    let elapsed = started.elapsed();
    drop(conns);
    // Every connection's thread goes back to the cache or ends; the pool keeps its own.
    let deadline = Instant::now() + Duration::from_secs(10);
    let (mut rss, mut threads) = server.rss_and_threads();
    while threads > threads0 + 32 && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(100));
        (rss, threads) = server.rss_and_threads();
    }
    eprintln!(
        "{mode}: {ran} cases (seed {seed}) in {elapsed:.1?}; threads {threads0} -> {threads}; \
         RSS {rss0} KiB -> peak {peak_rss} KiB -> {rss} KiB at the end"
    );
    assert!(server.alive(), "{mode}: the server exited");
    assert!(
        threads <= threads0 + 32,
        "{mode}: {threads} threads after the run, {threads0} before"
    );
    assert!(
        peak_rss < 1 << 20,
        "{mode}: RSS reached {peak_rss} KiB (limit 1 GiB)"
    );
    (ran, elapsed)
}

fn settings() -> Settings {
    let var = |name: &str| -> Option<u64> {
        std::env::var(name)
            .ok()
            .and_then(|v| v.replace('_', "").parse().ok())
    };
    let cases = var("TPBED_FUZZ_CASES");
    Settings {
        cases: cases.unwrap_or(4000),
        seed: var("TPBED_FUZZ_SEED").unwrap_or(0x7b_ed_f0_22),
        budget: cases.is_none().then_some(Duration::from_secs(30)),
    }
}

#[test]
fn fuzz_one_thread_per_connection() {
    fuzz("one-thread-per-connection", settings());
}

#[test]
fn fuzz_pool_of_threads() {
    let cfg = settings();
    fuzz(
        "pool-of-threads",
        Settings {
            seed: cfg.seed ^ 0x5eed,
            ..cfg
        },
    );
}
