//! The LOCAL INFILE exchange of `LOAD DATA LOCAL`: the server answers the query with a
//! request packet (0xFB followed by the file name), the client sends the file's bytes in
//! packets of any size, and an empty packet ends it; then the server sends the statement's
//! OK or ERR. Only a client that set `CLIENT_LOCAL_FILES` may be asked.

use crate::packet::write_packet_with;

/// The first byte of the request packet.
pub const LOCAL_INFILE_HEADER: u8 = 0xfb;

/// Writes the server's request for file `name`.
pub fn write_request(out: &mut Vec<u8>, seq: &mut u8, name: &[u8]) {
    write_packet_with(out, seq, |o| {
        o.push(LOCAL_INFILE_HEADER);
        o.extend_from_slice(name);
    });
}

/// The file name a reply packet asks for, if it is a LOCAL INFILE request.
pub fn decode_request(payload: &[u8]) -> Option<&[u8]> {
    match payload.split_first() {
        Some((&LOCAL_INFILE_HEADER, name)) => Some(name),
        _ => None,
    }
}

/// Whether a packet the client sent during the exchange ends the file.
pub fn is_end_of_file(payload: &[u8]) -> bool {
    payload.is_empty()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn request_round_trips() {
        let mut out = Vec::new();
        let mut seq = 1;
        write_request(&mut out, &mut seq, b"/tmp/data.txt");
        assert_eq!(seq, 2);
        assert_eq!(&out[..4], &[14, 0, 0, 1]);
        assert_eq!(decode_request(&out[4..]), Some(&b"/tmp/data.txt"[..]));
        assert_eq!(decode_request(&[0x00, 1]), None);
        assert!(is_end_of_file(&[]));
    }
}
