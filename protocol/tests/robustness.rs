//! Property tests: random and mutated bytes never panic any decoder, and the client survives
//! garbage in every state (it may report an error, and then stays quiet).

mod common;

use common::{config, pump, AuthMode, MiniServer};
use proptest::collection::vec;
use proptest::prelude::*;
use protocol::client::{ClientConnection, RowData};
use protocol::command::{decode_execute_params, Command};
use protocol::handshake::{
    AuthMoreData, AuthSwitchRequest, HandshakeResponse, HandshakeV10, SslRequest,
};
use protocol::packet::{write_packet, Framer};
use protocol::{
    Capabilities, ColumnDefinition, ColumnType, EofPacket, ErrPacket, OkPacket, StmtPrepareOk,
};

/// Valid payloads of each kind, to mutate.
fn seeds() -> Vec<Vec<u8>> {
    let mut seeds = Vec::new();
    let mut client = ClientConnection::new(config());
    let server = MiniServer::new(AuthMode::Native, Capabilities::SERVER_DEFAULT);
    let greeting = server.out.clone();
    seeds.push(greeting[4..].to_vec());
    client.feed(&greeting);
    assert!(client.poll_event().is_none());
    seeds.push(client.poll_transmit().unwrap()[4..].to_vec());
    let mut out = Vec::new();
    for c in common::columns() {
        out.clear();
        c.encode(&mut out);
        seeds.push(out.clone());
    }
    let mut execute = vec![0x17, 7, 0, 0, 0, 0, 1, 0, 0, 0];
    protocol::command::encode_execute_params(
        &[
            protocol::BinaryValue::Int(5),
            protocol::BinaryValue::Bytes(b"abc".to_vec()),
            protocol::BinaryValue::Null,
        ],
        true,
        &mut execute,
    );
    seeds.push(execute);
    seeds.push(b"\x03SELECT 1".to_vec());
    out.clear();
    OkPacket {
        affected_rows: 300,
        info: "x".into(),
        ..OkPacket::default()
    }
    .encode(Capabilities::SERVER_DEFAULT, &mut out);
    seeds.push(out.clone());
    seeds.push(vec![0x00, 0x00, 0x01, 0x41, 0xFB, 0x02]);
    seeds
}

/// A seed with a few bytes overwritten, inserted or removed.
fn mutated() -> impl Strategy<Value = Vec<u8>> {
    let n = seeds().len();
    (0..n, vec((any::<u16>(), any::<u8>(), 0u8..3), 1..6)).prop_map(|(i, edits)| {
        let mut b = seeds().swap_remove(i);
        for (pos, byte, op) in edits {
            let pos = usize::from(pos) % (b.len() + 1);
            match op {
                0 if pos < b.len() => b[pos] = byte,
                1 => b.insert(pos, byte),
                _ if pos < b.len() => {
                    b.remove(pos);
                }
                _ => b.truncate(pos),
            }
        }
        b
    })
}

fn input() -> impl Strategy<Value = Vec<u8>> {
    prop_oneof![vec(any::<u8>(), 0..200), mutated()]
}

fn column_type() -> impl Strategy<Value = ColumnType> {
    any::<u8>().prop_filter_map("defined type", ColumnType::from_u8)
}

fn decode_everything(b: &[u8], caps: Capabilities, types: &mut Vec<(ColumnType, bool)>, n: usize) {
    let _ = HandshakeV10::decode(b);
    let _ = HandshakeResponse::decode(b);
    let _ = SslRequest::decode(b);
    let _ = AuthSwitchRequest::decode(b);
    let _ = AuthMoreData::decode(b);
    let _ = Command::decode(b);
    let _ = decode_execute_params(b, n, types);
    let _ = ColumnDefinition::decode(b);
    let _ = OkPacket::decode(b, caps);
    let _ = ErrPacket::decode(b);
    let _ = EofPacket::decode(b);
    let _ = StmtPrepareOk::decode(b);
    if let Ok(Command::StmtExecute(ex)) = Command::decode(b) {
        let _ = decode_execute_params(ex.params, n, types);
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(1000))]

    #[test]
    fn decoders_never_panic(b in input(), caps in any::<u32>(), n in 0usize..300,
                            types in vec((column_type(), any::<bool>()), 0..8)) {
        let mut types = types;
        decode_everything(&b, Capabilities::from_bits_retain(caps), &mut types, n);
    }

    #[test]
    fn rows_never_panic(b in input(), binary in any::<bool>(), types in vec((column_type(), any::<bool>()), 0..8)) {
        let cols: Vec<ColumnDefinition> = types.iter().map(|(t, u)| {
            let mut c = ColumnDefinition::new("c", *t);
            c.flags.set(protocol::ColumnFlags::UNSIGNED, *u);
            c
        }).collect();
        let row = protocol_row(b, binary);
        let _ = row.binary_values(&cols);
        let _ = row.text_values();
        let _: Vec<_> = row.text_cells().collect();
    }

    #[test]
    fn framer_never_panics(chunks in vec(vec(any::<u8>(), 0..64), 0..20), max in 0usize..512) {
        let mut f = Framer::new(max);
        for c in chunks {
            f.push(&c);
            while let Ok(Some(_)) = f.next_packet() {}
        }
    }

    #[test]
    fn client_survives_garbage(stage in 0u8..3, garbage in input(), framed in any::<bool>(), cut in 1usize..50) {
        let mut client = ClientConnection::new(config());
        let mut server = MiniServer::new(AuthMode::Native, Capabilities::SERVER_DEFAULT);
        if stage > 0 {
            let _ = pump(&mut client, &mut server, &[usize::MAX]);
        }
        if stage > 1 {
            client.query("SELECT 1");
            client.prepare("SELECT ?");
            client.execute(7, &[protocol::BinaryValue::Int(1)]);
            while client.poll_transmit().is_some() {
                client.consume_transmit(usize::MAX);
            }
        }
        let mut wire = Vec::new();
        if framed {
            // Well framed with the sequence id the client expects next, so the payload
            // reaches the decoders instead of failing the sequence check.
            let mut seq = match stage { 0 => 0, 1 => 2, _ => 1 };
            write_packet(&mut wire, &mut seq, &garbage);
        } else {
            wire = garbage;
        }
        let mut errors = 0;
        for piece in wire.chunks(cut) {
            client.feed(piece);
            while let Some(ev) = client.poll_event() {
                errors += usize::from(ev.is_err());
            }
        }
        prop_assert!(errors <= 1, "an error is reported once, then the connection is dead");
        if errors == 1 {
            prop_assert!(client.is_closed());
        }
    }
}

/// A row as the client would deliver it: through a one-column result set.
fn protocol_row(payload: Vec<u8>, binary: bool) -> RowData {
    use protocol::client::ClientEvent;
    let mut client = ClientConnection::new(config());
    let mut server = MiniServer::new(AuthMode::Native, Capabilities::SERVER_DEFAULT);
    let _ = pump(&mut client, &mut server, &[usize::MAX]);
    if binary {
        client.execute(7, &[]);
    } else {
        client.query("SELECT 1");
    }
    client.consume_transmit(usize::MAX);
    let mut wire = Vec::new();
    let mut seq = 1;
    write_packet(&mut wire, &mut seq, &[1]);
    let mut def = Vec::new();
    ColumnDefinition::new("c", ColumnType::VarString).encode(&mut def);
    write_packet(&mut wire, &mut seq, &def);
    // A payload that looks like a terminator or ERR would not be a row; make it one.
    let mut payload = payload;
    if matches!(payload.first(), Some(0xFE | 0xFF)) {
        payload.insert(0, 0);
    }
    write_packet(&mut wire, &mut seq, &payload);
    client.feed(&wire);
    loop {
        match client.poll_event() {
            Some(Ok(ClientEvent::Row(r))) => return r,
            Some(Ok(_)) => {}
            other => panic!("{other:?}"),
        }
    }
}
