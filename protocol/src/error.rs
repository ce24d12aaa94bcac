//! The one error type of the crate: every decoder returns it instead of panicking.

use std::fmt;

/// Why bytes could not be decoded (or a protocol exchange could not go on).
///
/// Decoders never panic on input; anything malformed, truncated or oversized ends up here, so
/// the server can answer with an ERR packet or close the connection.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ProtocolError {
    /// The payload ended before a field it announces.
    Truncated,
    /// A field holds a value the protocol does not allow; the text names the field.
    Malformed(&'static str),
    /// A packet (after joining continuation fragments) is larger than the configured maximum.
    PacketTooLarge,
    /// A packet's sequence id is not the one the exchange expects.
    BadSequence {
        /// The sequence id the exchange expected.
        expected: u8,
        /// The sequence id found in the header.
        got: u8,
    },
    /// The first payload byte is not a command this crate decodes (MySQL answers 1047).
    UnknownCommand(u8),
    /// A column or parameter type byte that is not a MySQL type code.
    UnknownColumnType(u8),
    /// The client sent an SSL request (a 32-byte handshake response with CLIENT_SSL); the
    /// server either starts TLS or refuses.
    SslRequested,
    /// A packet that is well formed but does not fit the current state of the exchange.
    UnexpectedPacket(&'static str),
    /// A protocol feature this crate does not implement; the text says which.
    Unsupported(&'static str),
}

impl fmt::Display for ProtocolError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Truncated => f.write_str("packet truncated"),
            Self::Malformed(what) => write!(f, "malformed packet: {what}"),
            Self::PacketTooLarge => f.write_str("packet larger than max_allowed_packet"),
            Self::BadSequence { expected, got } => {
                write!(
                    f,
                    "packets out of order: expected sequence {expected}, got {got}"
                )
            }
            Self::UnknownCommand(c) => write!(f, "unknown command 0x{c:02x}"),
            Self::UnknownColumnType(t) => write!(f, "unknown column type 0x{t:02x}"),
            Self::SslRequested => f.write_str("client requested SSL"),
            Self::UnexpectedPacket(what) => write!(f, "unexpected packet: {what}"),
            Self::Unsupported(what) => write!(f, "unsupported: {what}"),
        }
    }
}

impl std::error::Error for ProtocolError {}
