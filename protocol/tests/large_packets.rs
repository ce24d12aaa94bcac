//! 16 MiB continuation: payloads of exactly 0xFFFFFF bytes (followed by an empty fragment)
//! and of 0xFFFFFF + 1 bytes survive the framer in both writers, through the client, and
//! the size limit holds across fragments.

mod common;

use common::{config, pump, AuthMode, MiniServer};
use protocol::client::{ClientConnection, ClientEvent};
use protocol::packet::{
    fragment_count, frame_header, write_packet, write_packet_with, Framer, MAX_PAYLOAD,
};
use protocol::{Capabilities, ProtocolError};

fn payload(len: usize) -> Vec<u8> {
    (0..len).map(|i| (i % 251) as u8).collect()
}

#[test]
fn exact_and_one_past_max_payload_round_trip() {
    for len in [MAX_PAYLOAD, MAX_PAYLOAD + 1] {
        let p = payload(len);
        for zero_copy in [false, true] {
            let mut wire = Vec::new();
            let mut seq = 254;
            if zero_copy {
                write_packet_with(&mut wire, &mut seq, |o| o.extend_from_slice(&p));
            } else {
                write_packet(&mut wire, &mut seq, &p);
            }
            assert_eq!(fragment_count(len), 2);
            assert_eq!(seq, 0, "two fragments, wrapping");
            assert_eq!(wire.len(), len + 8);
            assert_eq!(frame_header(&wire), Some((MAX_PAYLOAD, 254)));
            assert_eq!(
                frame_header(&wire[4 + MAX_PAYLOAD..]),
                Some((len - MAX_PAYLOAD, 255))
            );
            // A trailing small packet checks that the framer resumes at the right byte.
            write_packet(&mut wire, &mut seq, b"next");

            let mut f = Framer::new(len);
            let mut got = Vec::new();
            for piece in wire.chunks(1 << 20 | 3) {
                f.push(piece);
                while let Some(pkt) = f.next_packet().unwrap() {
                    got.push(pkt);
                }
            }
            assert_eq!(got.len(), 2);
            assert_eq!(got[0].0, 254);
            assert!(got[0].1 == p, "joined payload differs");
            assert_eq!(got[1], (0, b"next".to_vec()));
        }
    }
}

#[test]
fn limit_counts_the_joined_size() {
    let p = payload(MAX_PAYLOAD + 1);
    let mut wire = Vec::new();
    write_packet(&mut wire, &mut 0, &p);
    let mut f = Framer::new(MAX_PAYLOAD);
    f.push(&wire[..4 + MAX_PAYLOAD + 4]);
    // The second fragment's header alone is enough to refuse the packet.
    assert_eq!(f.next_packet(), Err(ProtocolError::PacketTooLarge));
}

#[test]
fn client_receives_a_row_longer_than_one_fragment() {
    for caps in [
        Capabilities::SERVER_DEFAULT,
        Capabilities::SERVER_DEFAULT.difference(Capabilities::DEPRECATE_EOF),
    ] {
        let mut client = ClientConnection::new(config());
        let mut server = MiniServer::new(AuthMode::Native, caps);
        let _ = pump(&mut client, &mut server, &[usize::MAX]);
        // The row payload is a 4-byte lenenc prefix plus the cell: make it exactly
        // MAX_PAYLOAD, then one past.
        for cell in [MAX_PAYLOAD - 4, MAX_PAYLOAD - 3] {
            client.query(&format!("BIG {cell}"));
            client.ping();
            let events: Vec<ClientEvent> = pump(&mut client, &mut server, &[1 << 20, 7])
                .into_iter()
                .map(Result::unwrap)
                .collect();
            assert_eq!(events.len(), 4, "columns, row, done, ping OK");
            let ClientEvent::Row(row) = &events[1] else {
                panic!("{:?}", events[1])
            };
            let cells = row.text_values().unwrap();
            assert_eq!(cells[0].as_ref().map(Vec::len), Some(cell));
            assert!(
                matches!(events[3], ClientEvent::Ok(_)),
                "sequence ids stayed in step"
            );
        }
    }
}
