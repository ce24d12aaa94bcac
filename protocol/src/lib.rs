//! MySQL client/server protocol, both halves, with no I/O: bytes in, bytes out.
//!
//! Layers, bottom up: [`lenenc`] (primitive fields), [`packet`] (framing and 16 MiB
//! continuation), [`caps`] (capability and status flags), the packet types of the
//! connection phase ([`handshake`], [`auth`]) and of the command phase ([`command`],
//! [`column`], [`value`], [`reply`], [`resultset`]), and the sans-I/O [`client`] built on
//! them. Every decoder returns [`ProtocolError`] on bad input and never panics.
//!
//! A server answers a query like this (the session layer owns the socket and the buffers):
//!
//! ```
//! use protocol::packet::Framer;
//! use protocol::{Capabilities, ColumnDefinition, ColumnType, Command, ResultSetWriter, StatusFlags};
//!
//! let mut framer = Framer::new(64 << 20); // max_allowed_packet
//! framer.push(&[9, 0, 0, 0, 0x03, b'S', b'E', b'L', b'E', b'C', b'T', b' ', b'1']);
//! let (seq, payload) = framer.next_packet()?.expect("a whole packet");
//! assert_eq!(Command::decode(&payload)?, Command::Query(b"SELECT 1"));
//!
//! let (mut out, mut seq) = (Vec::new(), seq.wrapping_add(1));
//! let columns = [ColumnDefinition::new("1", ColumnType::LongLong)];
//! let mut rows = ResultSetWriter::start(&mut out, &mut seq, Capabilities::SERVER_DEFAULT, &columns);
//! rows.text_row([Some(&b"1"[..])]);
//! rows.finish(StatusFlags::AUTOCOMMIT, 0);
//! assert_eq!(seq, 5); // column count, definition, row, OK-as-EOF
//! # Ok::<(), protocol::ProtocolError>(())
//! ```

#![warn(missing_docs)]

pub mod auth;
pub mod caps;
pub mod client;
pub mod column;
pub mod command;
pub mod error;
pub mod handshake;
pub mod lenenc;
pub mod local_infile;
pub mod packet;
pub mod reply;
pub mod resultset;
pub mod value;

pub use caps::{Capabilities, StatusFlags};
pub use column::{ColumnDefinition, ColumnFlags, ColumnType};
pub use command::Command;
pub use error::ProtocolError;
pub use reply::{EofPacket, ErrPacket, OkPacket, StmtPrepareOk};
pub use resultset::{EncodedColumns, ResultSetWriter, RowWriter};
pub use value::BinaryValue;
