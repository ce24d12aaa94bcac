//! Property tests: every packet type survives encode -> decode (server encode, client decode
//! and the reverse), and the framer reassembles any packet stream however it is cut.

use proptest::collection::vec;
use proptest::prelude::*;
use protocol::column::ColumnFlags;
use protocol::command::{
    decode_execute_params, encode_execute_params, ChangeUser, Command, StmtExecute,
};
use protocol::handshake::{
    AuthMoreData, AuthSwitchRequest, HandshakeResponse, HandshakeV10, SslRequest,
};
use protocol::lenenc::Reader;
use protocol::packet::{write_packet, write_packet_with, Framer};
use protocol::{
    BinaryValue, Capabilities, ColumnDefinition, ColumnType, EofPacket, ErrPacket, OkPacket,
    StatusFlags, StmtPrepareOk,
};

/// Text without NUL (names, versions, plugin names are NUL-terminated on the wire).
fn name() -> impl Strategy<Value = String> {
    "[a-zA-Z0-9_ .éü-]{0,24}"
}

fn caps() -> impl Strategy<Value = Capabilities> {
    any::<u32>().prop_map(Capabilities::from_bits_retain)
}

fn status() -> impl Strategy<Value = StatusFlags> {
    any::<u16>().prop_map(StatusFlags::from_bits_retain)
}

fn column_type() -> impl Strategy<Value = ColumnType> {
    any::<u8>().prop_filter_map("defined type", ColumnType::from_u8)
}

fn column() -> impl Strategy<Value = ColumnDefinition> {
    (
        name(),
        name(),
        name(),
        name(),
        name(),
        any::<u16>(),
        any::<u32>(),
        column_type(),
        any::<u16>(),
        any::<u8>(),
    )
        .prop_map(
            |(
                schema,
                table,
                org_table,
                name,
                org_name,
                charset,
                column_length,
                column_type,
                flags,
                decimals,
            )| {
                ColumnDefinition {
                    schema,
                    table,
                    org_table,
                    name,
                    org_name,
                    charset,
                    column_length,
                    column_type,
                    flags: ColumnFlags::from_bits_retain(flags),
                    decimals,
                }
            },
        )
}

/// A value together with a column type it round-trips through, and the unsigned flag.
fn typed_value() -> impl Strategy<Value = (BinaryValue, ColumnType, bool)> {
    use ColumnType as T;
    prop_oneof![
        any::<i8>().prop_map(|v| (BinaryValue::Int(v.into()), T::Tiny, false)),
        any::<u8>().prop_map(|v| (BinaryValue::UInt(v.into()), T::Tiny, true)),
        any::<i16>().prop_map(|v| (BinaryValue::Int(v.into()), T::Short, false)),
        any::<u16>().prop_map(|v| (BinaryValue::UInt(v.into()), T::Year, true)),
        any::<i32>().prop_map(|v| (BinaryValue::Int(v.into()), T::Long, false)),
        any::<u32>().prop_map(|v| (BinaryValue::UInt(v.into()), T::Int24, true)),
        any::<i64>().prop_map(|v| (BinaryValue::Int(v), T::LongLong, false)),
        any::<u64>().prop_map(|v| (BinaryValue::UInt(v), T::LongLong, true)),
        proptest::num::f32::NORMAL.prop_map(|v| (BinaryValue::Float(v), T::Float, false)),
        proptest::num::f64::NORMAL.prop_map(|v| (BinaryValue::Double(v), T::Double, false)),
        vec(any::<u8>(), 0..300).prop_map(|v| (BinaryValue::Bytes(v), T::VarString, false)),
        vec(any::<u8>(), 0..40).prop_map(|v| (BinaryValue::Bytes(v), T::NewDecimal, false)),
        vec(any::<u8>(), 0..40).prop_map(|v| (BinaryValue::Bytes(v), T::Blob, false)),
        (any::<u16>(), any::<u8>(), any::<u8>()).prop_map(|(year, month, day)| (
            BinaryValue::Date { year, month, day },
            T::Date,
            false
        )),
        (
            any::<u16>(),
            any::<u8>(),
            any::<u8>(),
            any::<u8>(),
            any::<u8>(),
            any::<u8>(),
            any::<u32>(),
            prop_oneof![Just(T::DateTime), Just(T::Timestamp)]
        )
            .prop_map(|(year, month, day, hour, minute, second, micros, t)| {
                (
                    BinaryValue::DateTime {
                        year,
                        month,
                        day,
                        hour,
                        minute,
                        second,
                        micros,
                    },
                    t,
                    false,
                )
            }),
        (
            any::<bool>(),
            any::<u32>(),
            any::<u8>(),
            any::<u8>(),
            any::<u8>(),
            any::<u32>()
        )
            .prop_map(|(negative, days, hours, minutes, seconds, micros)| {
                (
                    BinaryValue::Time {
                        negative,
                        days,
                        hours,
                        minutes,
                        seconds,
                        micros,
                    },
                    T::Time,
                    false,
                )
            }),
        Just((BinaryValue::Null, T::Null, false)),
    ]
}

/// A parameter value a client sends (its natural type decodes it back exactly).
fn param() -> impl Strategy<Value = BinaryValue> {
    typed_value().prop_map(|(v, _, _)| v)
}

fn bytes(max: usize) -> impl Strategy<Value = Vec<u8>> {
    vec(any::<u8>(), 0..max)
}

fn round_trip_command(c: &Command<'_>) -> Result<(), TestCaseError> {
    let mut out = Vec::new();
    c.encode(&mut out);
    prop_assert_eq!(&Command::decode(&out)?, c);
    Ok(())
}

proptest! {
    #[test]
    fn greeting(version in name(), id in any::<u32>(), nonce in any::<[u8; 20]>(), caps in caps(),
                charset in any::<u8>(), status in status(), plugin in name()) {
        let caps = caps | Capabilities::PROTOCOL_41 | Capabilities::SECURE_CONNECTION | Capabilities::PLUGIN_AUTH;
        let g = HandshakeV10 { server_version: version, connection_id: id, auth_plugin_data: nonce, capabilities: caps,
                               charset, status, auth_plugin_name: plugin };
        let mut out = Vec::new();
        g.encode(&mut out);
        prop_assert_eq!(HandshakeV10::decode(&out)?, g);
    }

    #[test]
    fn handshake_response(caps in caps(), max_packet in any::<u32>(), charset in any::<u8>(), user in name(),
                          auth in bytes(256), db in name(), plugin in name(),
                          attrs in vec((name(), name()), 0..5)) {
        let caps = (caps | Capabilities::PROTOCOL_41).difference(Capabilities::SSL);
        let lenenc = caps.contains(Capabilities::PLUGIN_AUTH_LENENC_CLIENT_DATA);
        let secure = caps.contains(Capabilities::SECURE_CONNECTION);
        let mut auth = auth;
        if !lenenc && secure { auth.truncate(255) }
        if !lenenc && !secure { auth.retain(|&b| b != 0) }
        let r = HandshakeResponse {
            capabilities: caps, max_packet, charset, username: user, auth_response: auth,
            database: caps.contains(Capabilities::CONNECT_WITH_DB).then_some(db),
            auth_plugin_name: caps.contains(Capabilities::PLUGIN_AUTH).then_some(plugin),
            connect_attrs: if caps.contains(Capabilities::CONNECT_ATTRS) { attrs } else { Vec::new() },
        };
        let mut out = Vec::new();
        r.encode(&mut out);
        prop_assert_eq!(HandshakeResponse::decode(&out)?, r);
    }

    #[test]
    fn ssl_request(caps in caps(), max_packet in any::<u32>(), charset in any::<u8>()) {
        let caps = caps | Capabilities::PROTOCOL_41 | Capabilities::SSL;
        let req = SslRequest { capabilities: caps, max_packet, charset };
        let mut out = Vec::new();
        req.encode(&mut out);
        prop_assert_eq!(HandshakeResponse::decode(&out), Err(protocol::ProtocolError::SslRequested));
        prop_assert_eq!(SslRequest::decode(&out)?, req);
    }

    #[test]
    fn auth_packets(plugin in name(), data in bytes(64)) {
        let sw = AuthSwitchRequest { plugin, data: data.clone() };
        let mut out = Vec::new();
        sw.encode(&mut out);
        prop_assert_eq!(AuthSwitchRequest::decode(&out)?, sw);
        let more = AuthMoreData { data };
        out.clear();
        more.encode(&mut out);
        prop_assert_eq!(AuthMoreData::decode(&out)?, more);
    }

    #[test]
    fn ok_err_eof_prepare(affected_rows in any::<u64>(), last_insert_id in any::<u64>(), status in status(),
                          warnings in any::<u16>(), info in ".{0,40}", caps in caps(), code in any::<u16>(),
                          state in "[0-9A-Z]{5}", stmt_id in any::<u32>(), nc in any::<u16>(), np in any::<u16>()) {
        let caps = caps | Capabilities::PROTOCOL_41;
        let ok = OkPacket { affected_rows, last_insert_id, status, warnings, info };
        let mut out = Vec::new();
        ok.encode(caps, &mut out);
        prop_assert_eq!(OkPacket::decode(&out, caps)?, ok.clone());
        out.clear();
        ok.encode_as_eof(caps, &mut out);
        prop_assert!(protocol::reply::is_result_terminator(&out, Capabilities::DEPRECATE_EOF));
        prop_assert_eq!(OkPacket::decode(&out, caps)?, ok);

        let err = ErrPacket::new(code, &state, "message");
        out.clear();
        err.encode(&mut out);
        prop_assert_eq!(ErrPacket::decode(&out)?, err);

        let eof = EofPacket { warnings, status };
        out.clear();
        eof.encode(&mut out);
        prop_assert_eq!(EofPacket::decode(&out)?, eof);

        let p = StmtPrepareOk { stmt_id, num_columns: nc, num_params: np, warnings };
        out.clear();
        p.encode(&mut out);
        prop_assert_eq!(StmtPrepareOk::decode(&out)?, p);
    }

    #[test]
    fn column_definition(c in column()) {
        let mut out = Vec::new();
        c.encode(&mut out);
        prop_assert_eq!(ColumnDefinition::decode(&out)?, c);
    }

    #[test]
    fn commands(text in bytes(200), id in any::<u32>(), n in any::<u32>(), p in any::<u16>(), flags in any::<u8>(),
                table in "[a-z]{0,10}", auth in bytes(255), charset in any::<u16>()) {
        let table = table.as_bytes();
        let all = [
            Command::Quit, Command::InitDb(&text), Command::Query(&text),
            Command::FieldList { table, wildcard: &text }, Command::Statistics, Command::ProcessKill(id),
            Command::Debug, Command::Ping, Command::StmtPrepare(&text),
            Command::StmtExecute(StmtExecute { stmt_id: id, flags, iteration_count: n, params: &text }),
            Command::StmtSendLongData { stmt_id: id, param: p, data: &text },
            Command::StmtClose(id), Command::StmtReset(id), Command::StmtFetch { stmt_id: id, num_rows: n },
            Command::SetOption(p), Command::ResetConnection,
            Command::ChangeUser(ChangeUser { user: table, auth_response: &auth, database: table,
                charset: Some(charset), auth_plugin: Some(b"mysql_native_password"), connect_attrs: &text }),
        ];
        for c in &all {
            round_trip_command(c)?;
        }
    }

    #[test]
    fn binary_values((v, ty, unsigned) in typed_value()) {
        let mut out = Vec::new();
        v.encode(ty, &mut out);
        let mut r = Reader::new(&out);
        prop_assert_eq!(BinaryValue::decode(&mut r, ty, unsigned)?, v);
        prop_assert!(r.is_empty());
    }

    #[test]
    fn execute_params(values in vec(param(), 0..20)) {
        let mut types = Vec::new();
        let mut out = Vec::new();
        encode_execute_params(&values, true, &mut out);
        prop_assert_eq!(decode_execute_params(&out, values.len(), &mut types)?, values.clone());
        out.clear();
        encode_execute_params(&values, false, &mut out);
        prop_assert_eq!(decode_execute_params(&out, values.len(), &mut types)?, values);
    }

    #[test]
    fn framer_reassembles_any_cut(payloads in vec(bytes(2000), 0..12), start_seq in any::<u8>(),
                                  cuts in vec(1usize..700, 1..30), zero_copy in any::<bool>()) {
        let mut wire = Vec::new();
        let mut seq = start_seq;
        let mut expected = Vec::new();
        for p in &payloads {
            expected.push((seq, p.clone()));
            if zero_copy {
                write_packet_with(&mut wire, &mut seq, |o| o.extend_from_slice(p));
            } else {
                write_packet(&mut wire, &mut seq, p);
            }
        }
        let mut framer = Framer::new(4096);
        let mut got = Vec::new();
        let mut rest = wire.as_slice();
        for n in cuts.iter().cycle() {
            if rest.is_empty() { break }
            let (piece, tail) = rest.split_at((*n).min(rest.len()));
            rest = tail;
            framer.push(piece);
            while let Some(p) = framer.next_packet()? {
                got.push(p);
            }
        }
        prop_assert_eq!(got, expected);
        prop_assert!(!framer.has_buffered());
    }
}
