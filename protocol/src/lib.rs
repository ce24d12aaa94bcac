//! MySQL client/server protocol, both halves, with no I/O: bytes in, bytes out.
//!
//! Layers, bottom up: [`lenenc`] (primitive fields), [`packet`] (framing and 16 MiB
//! continuation), [`caps`] (capability and status flags), the packet types of the
//! connection phase ([`handshake`], [`auth`]) and of the command phase ([`command`],
//! [`column`], [`value`], [`reply`], [`resultset`]), and the sans-I/O [`client`] built on them. Every decoder returns
//! [`ProtocolError`] on bad input and never panics.

pub mod auth;
pub mod caps;
pub mod client;
pub mod column;
pub mod command;
pub mod error;
pub mod handshake;
pub mod lenenc;
pub mod packet;
pub mod reply;
pub mod resultset;
pub mod value;

pub use caps::{Capabilities, StatusFlags};
pub use column::{ColumnDefinition, ColumnFlags, ColumnType};
pub use command::Command;
pub use error::ProtocolError;
pub use reply::{EofPacket, ErrPacket, OkPacket, StmtPrepareOk};
pub use resultset::{ResultSetWriter, RowWriter};
pub use value::BinaryValue;
