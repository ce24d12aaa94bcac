//! Server replies that are single packets: OK, ERR, EOF and COM_STMT_PREPARE's OK, each with
//! an encoder (server side) and a decoder (client side).

use crate::caps::{Capabilities, StatusFlags};
use crate::error::ProtocolError;
use crate::lenenc::{put_lenenc_bytes, put_lenenc_int, put_u16, put_u32, Reader};
use crate::packet::write_packet_with;

/// The result-set writer lives in [`crate::resultset`]; re-exported here beside the packets it
/// writes.
pub use crate::resultset::{write_prepare_ok, ResultSetWriter, RowWriter};

/// The OK packet: a statement finished without a result set (or, with DEPRECATE_EOF, a result
/// set ended).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct OkPacket {
    /// Rows changed (or found, with FOUND_ROWS).
    pub affected_rows: u64,
    /// `LAST_INSERT_ID()` after the statement.
    pub last_insert_id: u64,
    /// Server status; keep AUTOCOMMIT and IN_TRANS accurate, clients read them.
    pub status: StatusFlags,
    /// Warning count.
    pub warnings: u16,
    /// Human-readable info (`Rows matched: 1  Changed: 1  Warnings: 0`).
    pub info: String,
}

impl OkPacket {
    /// The header byte of an OK packet.
    pub const HEADER: u8 = 0x00;
    /// The header byte of an OK packet that ends a result set under DEPRECATE_EOF.
    pub const EOF_HEADER: u8 = 0xFE;

    /// Appends the OK payload. `caps` are the capabilities in effect on the connection (the
    /// client's intersected with the server's): they decide whether status, warnings and a
    /// length-encoded info string are present.
    pub fn encode(&self, caps: Capabilities, out: &mut Vec<u8>) {
        self.encode_with_header(Self::HEADER, caps, out);
    }

    /// Appends the OK payload with the 0xFE header, the result-set terminator under
    /// DEPRECATE_EOF.
    pub fn encode_as_eof(&self, caps: Capabilities, out: &mut Vec<u8>) {
        self.encode_with_header(Self::EOF_HEADER, caps, out);
    }

    fn encode_with_header(&self, header: u8, caps: Capabilities, out: &mut Vec<u8>) {
        out.push(header);
        put_lenenc_int(out, self.affected_rows);
        put_lenenc_int(out, self.last_insert_id);
        if caps.contains(Capabilities::PROTOCOL_41) {
            put_u16(out, self.status.bits());
            put_u16(out, self.warnings);
        } else if caps.contains(Capabilities::TRANSACTIONS) {
            put_u16(out, self.status.bits());
        }
        if caps.contains(Capabilities::SESSION_TRACK) {
            // No session-state changes are reported, so SESSION_STATE_CHANGED never follows.
            put_lenenc_bytes(out, self.info.as_bytes());
        } else if !self.info.is_empty() {
            // Documented as string<EOF>, but MySQL's net_send_ok stores it length-encoded and
            // clients (mysql_common, libmysqlclient) parse it so.
            put_lenenc_bytes(out, self.info.as_bytes());
        }
    }

    /// Writes the OK as a whole packet with sequence id `*seq`.
    pub fn write(&self, out: &mut Vec<u8>, seq: &mut u8, caps: Capabilities) {
        write_packet_with(out, seq, |o| self.encode(caps, o));
    }

    /// Decodes an OK payload (0x00 or 0xFE header). Session-state data after the info
    /// string is skipped.
    pub fn decode(payload: &[u8], caps: Capabilities) -> Result<Self, ProtocolError> {
        let mut r = Reader::new(payload);
        if !matches!(r.u8()?, Self::HEADER | Self::EOF_HEADER) {
            return Err(ProtocolError::Malformed("OK header"));
        }
        let affected_rows = r.lenenc_int()?;
        let last_insert_id = r.lenenc_int()?;
        let (mut status, mut warnings) = (StatusFlags::empty(), 0);
        if caps.contains(Capabilities::PROTOCOL_41) {
            status = StatusFlags::from_bits_retain(r.u16()?);
            warnings = r.u16()?;
        } else if caps.contains(Capabilities::TRANSACTIONS) {
            status = StatusFlags::from_bits_retain(r.u16()?);
        }
        let info = if caps.contains(Capabilities::SESSION_TRACK) {
            if r.is_empty() {
                &[][..]
            } else {
                r.lenenc_bytes()?
            }
        } else if r.is_empty() {
            &[][..]
        } else {
            r.lenenc_bytes()?
        };
        let info = String::from_utf8_lossy(info).into_owned();
        Ok(Self {
            affected_rows,
            last_insert_id,
            status,
            warnings,
            info,
        })
    }
}

/// The ERR packet: a statement (or the login) failed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ErrPacket {
    /// MySQL error number, e.g. 1064.
    pub code: u16,
    /// The five-character SQLSTATE, e.g. `42000`.
    pub sql_state: [u8; 5],
    /// The message.
    pub message: String,
}

impl ErrPacket {
    /// The header byte.
    pub const HEADER: u8 = 0xFF;

    /// An ERR with `code`, `sql_state` (five ASCII characters; anything else becomes
    /// `HY000`) and `message`.
    pub fn new(code: u16, sql_state: &str, message: impl Into<String>) -> Self {
        let sql_state = <[u8; 5]>::try_from(sql_state.as_bytes()).unwrap_or(*b"HY000");
        Self {
            code,
            sql_state,
            message: message.into(),
        }
    }

    /// The SQLSTATE as text.
    pub fn sql_state_str(&self) -> &str {
        std::str::from_utf8(&self.sql_state).unwrap_or("HY000")
    }

    /// Appends the ERR payload (4.1 form, with the `#` SQLSTATE marker).
    pub fn encode(&self, out: &mut Vec<u8>) {
        out.push(Self::HEADER);
        put_u16(out, self.code);
        out.push(b'#');
        out.extend_from_slice(&self.sql_state);
        out.extend_from_slice(self.message.as_bytes());
    }

    /// Appends the ERR payload without the SQLSTATE, as a server sends an error before it
    /// knows the client's capabilities (in place of the greeting).
    pub fn encode_before_greeting(&self, out: &mut Vec<u8>) {
        out.push(Self::HEADER);
        put_u16(out, self.code);
        out.extend_from_slice(self.message.as_bytes());
    }

    /// Writes the ERR as a whole packet with sequence id `*seq`.
    pub fn write(&self, out: &mut Vec<u8>, seq: &mut u8) {
        write_packet_with(out, seq, |o| self.encode(o));
    }

    /// Decodes an ERR payload; without the `#` marker the state is `HY000`.
    pub fn decode(payload: &[u8]) -> Result<Self, ProtocolError> {
        let mut r = Reader::new(payload);
        if r.u8()? != Self::HEADER {
            return Err(ProtocolError::Malformed("ERR header"));
        }
        let code = r.u16()?;
        let mut sql_state = *b"HY000";
        if r.peek() == Some(b'#') {
            r.skip(1)?;
            sql_state.copy_from_slice(r.fixed(5)?);
        }
        let message = String::from_utf8_lossy(r.rest()).into_owned();
        Ok(Self {
            code,
            sql_state,
            message,
        })
    }
}

impl std::fmt::Display for ErrPacket {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "ERROR {} ({}): {}",
            self.code,
            self.sql_state_str(),
            self.message
        )
    }
}

impl std::error::Error for ErrPacket {}

/// The classic EOF packet, ending column definitions and rows for clients without
/// DEPRECATE_EOF.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct EofPacket {
    /// Warning count.
    pub warnings: u16,
    /// Server status.
    pub status: StatusFlags,
}

impl EofPacket {
    /// The header byte.
    pub const HEADER: u8 = 0xFE;

    /// Appends the 5-byte EOF payload.
    pub fn encode(&self, out: &mut Vec<u8>) {
        out.push(Self::HEADER);
        put_u16(out, self.warnings);
        put_u16(out, self.status.bits());
    }

    /// Decodes an EOF payload (a bare 0xFE, as pre-4.1 servers send, has zero fields).
    pub fn decode(payload: &[u8]) -> Result<Self, ProtocolError> {
        let mut r = Reader::new(payload);
        if r.u8()? != Self::HEADER || payload.len() >= 9 {
            return Err(ProtocolError::Malformed("EOF header"));
        }
        if r.is_empty() {
            return Ok(Self::default());
        }
        let warnings = r.u16()?;
        let status = StatusFlags::from_bits_retain(r.u16()?);
        Ok(Self { warnings, status })
    }
}

/// True if `payload` is a result-set terminator (EOF, or OK-as-EOF under DEPRECATE_EOF) and
/// not a row whose first cell happens to start with 0xFE.
pub fn is_result_terminator(payload: &[u8], caps: Capabilities) -> bool {
    let limit = if caps.contains(Capabilities::DEPRECATE_EOF) {
        crate::packet::MAX_PAYLOAD
    } else {
        9
    };
    payload.first() == Some(&EofPacket::HEADER) && payload.len() < limit
}

/// COM_STMT_PREPARE's first reply packet.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StmtPrepareOk {
    /// The new statement's id.
    pub stmt_id: u32,
    /// Columns of its result set (0 for statements without one).
    pub num_columns: u16,
    /// Placeholders.
    pub num_params: u16,
    /// Warning count.
    pub warnings: u16,
}

impl StmtPrepareOk {
    /// Appends the 12-byte payload.
    pub fn encode(&self, out: &mut Vec<u8>) {
        out.push(0x00);
        put_u32(out, self.stmt_id);
        put_u16(out, self.num_columns);
        put_u16(out, self.num_params);
        out.push(0);
        put_u16(out, self.warnings);
    }

    /// Decodes the payload (a missing warning count, as very old servers send, is 0).
    pub fn decode(payload: &[u8]) -> Result<Self, ProtocolError> {
        let mut r = Reader::new(payload);
        if r.u8()? != 0x00 {
            return Err(ProtocolError::Malformed("prepare OK header"));
        }
        let stmt_id = r.u32()?;
        let num_columns = r.u16()?;
        let num_params = r.u16()?;
        let warnings = if r.is_empty() {
            0
        } else {
            r.skip(1)?;
            r.u16()?
        };
        Ok(Self {
            stmt_id,
            num_columns,
            num_params,
            warnings,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ok_round_trips_under_each_capability_set() {
        let ok = OkPacket {
            affected_rows: 300,
            last_insert_id: 1 << 40,
            status: StatusFlags::AUTOCOMMIT | StatusFlags::IN_TRANS,
            warnings: 2,
            info: "Rows matched: 1".into(),
        };
        for caps in [Capabilities::PROTOCOL_41, Capabilities::SERVER_DEFAULT] {
            let mut out = Vec::new();
            ok.encode(caps, &mut out);
            assert_eq!(OkPacket::decode(&out, caps), Ok(ok.clone()));
            out.clear();
            ok.encode_as_eof(caps, &mut out);
            assert_eq!(out[0], 0xFE);
            assert!(is_result_terminator(&out, Capabilities::DEPRECATE_EOF));
            assert_eq!(OkPacket::decode(&out, caps), Ok(ok.clone()));
        }
    }

    #[test]
    fn err_eof_prepare_round_trip() {
        let err = ErrPacket::new(1064, "42000", "You have an error in your SQL syntax");
        let mut out = Vec::new();
        err.encode(&mut out);
        assert_eq!(ErrPacket::decode(&out), Ok(err.clone()));
        assert_eq!(
            err.to_string(),
            "ERROR 1064 (42000): You have an error in your SQL syntax"
        );
        assert_eq!(
            ErrPacket::decode(&[0xFF, 0x15, 0x04, b'x'])
                .unwrap()
                .sql_state_str(),
            "HY000"
        );

        let eof = EofPacket {
            warnings: 1,
            status: StatusFlags::AUTOCOMMIT,
        };
        out.clear();
        eof.encode(&mut out);
        assert!(is_result_terminator(&out, Capabilities::empty()));
        assert_eq!(EofPacket::decode(&out), Ok(eof));

        let p = StmtPrepareOk {
            stmt_id: 5,
            num_columns: 1,
            num_params: 2,
            warnings: 0,
        };
        out.clear();
        p.encode(&mut out);
        assert_eq!(out.len(), 12);
        assert_eq!(StmtPrepareOk::decode(&out), Ok(p));
    }
}
