//! MySQL client/server protocol, both halves, with no I/O: bytes in, bytes out.
