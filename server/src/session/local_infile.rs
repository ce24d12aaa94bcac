//! The server's half of the LOCAL INFILE exchange: sends the request for the file the
//! statement names, then reads the client's packets until the empty one that ends the file.
//! Runs in the middle of a COM_QUERY, so the sequence numbers continue the command's.

use std::time::Duration;

use crate::error::{ErrorCode, SqlError, SqlResult};
use crate::session::io::{PacketIo, ReadError};

/// Asks the client for `name` and returns the file's bytes, waiting up to `read_timeout`
/// for each packet. A connection that fails mid-file is an error (the session then finds
/// the connection gone).
pub(crate) fn transfer(
    io: &mut PacketIo,
    out: &mut Vec<u8>,
    seq: &mut u8,
    name: &str,
    read_timeout: Duration,
) -> SqlResult<Vec<u8>> {
    protocol::local_infile::write_request(out, seq, name.as_bytes());
    if io.flush(out).is_err() {
        return Err(lost("writing the file request"));
    }
    let mut data = Vec::new();
    loop {
        let (last_seq, payload) = io
            .read_packet(read_timeout, read_timeout)
            .map_err(|e| lost(&read_error(&e)))?;
        *seq = last_seq.wrapping_add(protocol::packet::fragment_count(payload.len()) as u8);
        if protocol::local_infile::is_end_of_file(&payload) {
            return Ok(data);
        }
        if data.try_reserve(payload.len()).is_err() {
            return Err(SqlError::new(
                ErrorCode::OutOfMemory,
                format!(
                    "Out of memory; restart server and try again (needed {} bytes)",
                    payload.len()
                ),
            ));
        }
        data.extend_from_slice(&payload);
    }
}

fn read_error(e: &ReadError) -> String {
    match e {
        ReadError::Closed => "the client closed the connection".into(),
        ReadError::IdleTimeout | ReadError::ReadTimeout => "timeout".into(),
        ReadError::TooLarge => "a packet bigger than 'max_allowed_packet'".into(),
        ReadError::Protocol(p) => p.to_string(),
        ReadError::Io(e) => e.to_string(),
    }
}

/// 1158 (ER_NET_READ_ERROR) for a transfer that did not finish.
fn lost(what: &str) -> SqlError {
    SqlError::new(
        ErrorCode::NetReadError,
        format!("Got an error reading communication packets ({what})"),
    )
}
