//! Hot paths of the codec: writing text and binary rows, decoding the commands sysbench sends
//! (COM_STMT_EXECUTE with reused types, COM_QUERY), framing, and the client decoding a result
//! set row by row.

// criterion_group! makes a public function it cannot document.
#![allow(missing_docs)]

use std::hint::black_box;

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use protocol::client::{ClientConfig, ClientConnection, ClientEvent};
use protocol::command::{decode_execute_params, encode_execute_params, Command};
use protocol::handshake::HandshakeV10;
use protocol::packet::{write_packet, write_packet_with, Framer};
use protocol::{
    BinaryValue, Capabilities, ColumnDefinition, ColumnType, OkPacket, ResultSetWriter, StatusFlags,
};

/// sysbench's `c` column: CHAR(120).
const C: &[u8] = b"83868641912-28773972837-60736120486-75162659906-27563526494-20381887404-41576422241-93426793964-56405065102-33518432330";

fn columns() -> Vec<ColumnDefinition> {
    vec![
        ColumnDefinition::new("id", ColumnType::Long),
        ColumnDefinition::new("k", ColumnType::Long),
        ColumnDefinition::new("c", ColumnType::String),
        ColumnDefinition::new("pad", ColumnType::String),
    ]
}

fn rows(c: &mut Criterion) {
    let cols = columns();
    let mut g = c.benchmark_group("rows");
    g.throughput(Throughput::Elements(100));
    let mut out = Vec::with_capacity(1 << 16);
    let ids: Vec<Vec<u8>> = (0..100u32).map(|i| i.to_string().into_bytes()).collect();
    g.bench_function("text_100_rows_4_cols", |b| {
        b.iter(|| {
            out.clear();
            let mut seq = 1;
            let mut w =
                ResultSetWriter::start(&mut out, &mut seq, Capabilities::SERVER_DEFAULT, &cols);
            for id in &ids {
                w.text_row([
                    Some(id.as_slice()),
                    Some(id.as_slice()),
                    Some(C),
                    Some(&C[..60]),
                ]);
            }
            w.finish(StatusFlags::AUTOCOMMIT, 0);
            black_box(out.len())
        })
    });
    let values = [
        BinaryValue::Int(7),
        BinaryValue::Int(5050),
        BinaryValue::Bytes(C.to_vec()),
        BinaryValue::Bytes(C[..60].to_vec()),
    ];
    g.bench_function("binary_100_rows_4_cols", |b| {
        b.iter(|| {
            out.clear();
            let mut seq = 1;
            let mut w =
                ResultSetWriter::start(&mut out, &mut seq, Capabilities::SERVER_DEFAULT, &cols);
            for _ in 0..100 {
                w.binary_row(&values, &cols);
            }
            w.finish(StatusFlags::AUTOCOMMIT, 0);
            black_box(out.len())
        })
    });
    g.finish();
}

fn commands(c: &mut Criterion) {
    let mut g = c.benchmark_group("commands");
    g.throughput(Throughput::Elements(1));
    // A point-select execute after the first one: new-params-bound = 0.
    let mut execute = vec![0x17, 3, 0, 0, 0, 0, 1, 0, 0, 0];
    encode_execute_params(&[BinaryValue::Int(4711)], false, &mut execute);
    let mut types = vec![(ColumnType::LongLong, false)];
    g.bench_function("decode_execute_point_select", |b| {
        b.iter(|| match Command::decode(black_box(&execute)) {
            Ok(Command::StmtExecute(ex)) => {
                decode_execute_params(ex.params, 1, &mut types).map(|v| v.len())
            }
            _ => Ok(0),
        })
    });
    let query = b"\x03SELECT c FROM sbtest1 WHERE id=4711".to_vec();
    g.bench_function("decode_query", |b| {
        b.iter(|| Command::decode(black_box(&query)).is_ok())
    });
    let mut wire = Vec::new();
    for _ in 0..64 {
        write_packet(&mut wire, &mut 0, &execute);
    }
    g.throughput(Throughput::Elements(64));
    g.bench_function("frame_64_commands", |b| {
        b.iter(|| {
            let mut f = Framer::new(1 << 24);
            f.push(black_box(&wire));
            let mut n = 0;
            while let Ok(Some(_)) = f.next_packet() {
                n += 1;
            }
            n
        })
    });
    g.finish();
}

fn client(c: &mut Criterion) {
    // A logged-in client, and the bytes of one 100-row text result set for it.
    let hello = HandshakeV10 {
        server_version: "8.0.36-tpbed".into(),
        connection_id: 1,
        auth_plugin_data: [7; 20],
        capabilities: Capabilities::SERVER_DEFAULT,
        charset: 255,
        status: StatusFlags::AUTOCOMMIT,
        auth_plugin_name: "mysql_native_password".into(),
    };
    let mut login = Vec::new();
    write_packet_with(&mut login, &mut 0, |o| hello.encode(o));
    OkPacket::default().write(&mut login, &mut 2, Capabilities::SERVER_DEFAULT);
    let cols = columns();
    let mut reply = Vec::new();
    let mut seq = 1;
    let mut w = ResultSetWriter::start(&mut reply, &mut seq, Capabilities::SERVER_DEFAULT, &cols);
    for _ in 0..100 {
        w.text_row([
            Some(&b"4711"[..]),
            Some(&b"5050"[..]),
            Some(C),
            Some(&C[..60]),
        ]);
    }
    w.finish(StatusFlags::AUTOCOMMIT, 0);

    let mut conn = ClientConnection::new(ClientConfig::new("sbtest", "sbtest"));
    conn.feed(&login);
    while let Some(ev) = conn.poll_event() {
        assert!(matches!(ev, Ok(ClientEvent::Connected { .. })), "{ev:?}");
    }
    conn.consume_transmit(usize::MAX);
    let mut g = c.benchmark_group("client");
    g.throughput(Throughput::Elements(100));
    g.bench_function("count_100_text_rows", |b| {
        b.iter(|| {
            conn.query("SELECT c FROM sbtest1 WHERE id BETWEEN ? AND ?");
            conn.consume_transmit(usize::MAX);
            conn.feed(&reply);
            let mut rows = 0;
            while let Some(Ok(ev)) = conn.poll_event() {
                rows += usize::from(matches!(ev, ClientEvent::Row(_)));
            }
            rows
        })
    });
    g.finish();
}

criterion_group!(benches, rows, commands, client);
criterion_main!(benches);
