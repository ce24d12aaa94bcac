//! Capability and server-status flags, with MySQL's names and bit values.

use bitflags::bitflags;

bitflags! {
    /// `CLIENT_*` capability flags exchanged in the handshake. Unknown bits are kept as they
    /// arrive ([`Capabilities::from_bits_retain`]) so nothing a peer sends is lost.
    #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
    pub struct Capabilities: u32 {
        /// New, more secure passwords (always set by modern clients).
        const LONG_PASSWORD = 1;
        /// Report found rows instead of affected rows.
        const FOUND_ROWS = 1 << 1;
        /// All column flags are sent.
        const LONG_FLAG = 1 << 2;
        /// A database name may follow in the handshake response.
        const CONNECT_WITH_DB = 1 << 3;
        /// `db.table.column` is not allowed.
        const NO_SCHEMA = 1 << 4;
        /// Compression protocol.
        const COMPRESS = 1 << 5;
        /// ODBC client (no special behaviour).
        const ODBC = 1 << 6;
        /// `LOAD DATA LOCAL` may be used.
        const LOCAL_FILES = 1 << 7;
        /// Spaces before `(` are ignored.
        const IGNORE_SPACE = 1 << 8;
        /// The 4.1 protocol (the only one this crate speaks).
        const PROTOCOL_41 = 1 << 9;
        /// `interactive_timeout` instead of `wait_timeout` applies.
        const INTERACTIVE = 1 << 10;
        /// TLS is (to be) used.
        const SSL = 1 << 11;
        /// Do not issue SIGPIPE (client-side only).
        const IGNORE_SIGPIPE = 1 << 12;
        /// The client knows about transactions (status flags in OK).
        const TRANSACTIONS = 1 << 13;
        /// Formerly the 4.1 protocol flag.
        const RESERVED = 1 << 14;
        /// 4.1 authentication (a length-prefixed auth response).
        const SECURE_CONNECTION = 1 << 15;
        /// Several statements per COM_QUERY.
        const MULTI_STATEMENTS = 1 << 16;
        /// Several result sets per COM_QUERY.
        const MULTI_RESULTS = 1 << 17;
        /// Several result sets per COM_STMT_EXECUTE.
        const PS_MULTI_RESULTS = 1 << 18;
        /// Authentication plugins are named in the handshake.
        const PLUGIN_AUTH = 1 << 19;
        /// Connection attributes follow the handshake response.
        const CONNECT_ATTRS = 1 << 20;
        /// The auth response is a length-encoded string.
        const PLUGIN_AUTH_LENENC_CLIENT_DATA = 1 << 21;
        /// The client can handle the expired-password sandbox mode.
        const CAN_HANDLE_EXPIRED_PASSWORDS = 1 << 22;
        /// Session-state change information in OK packets.
        const SESSION_TRACK = 1 << 23;
        /// OK packets (0xFE header) replace EOF packets.
        const DEPRECATE_EOF = 1 << 24;
        /// Result-set metadata may be omitted.
        const OPTIONAL_RESULTSET_METADATA = 1 << 25;
        /// zstd compression.
        const ZSTD_COMPRESSION_ALGORITHM = 1 << 26;
        /// Query attributes in COM_QUERY and COM_STMT_EXECUTE.
        const QUERY_ATTRIBUTES = 1 << 27;
        /// Multi-factor authentication.
        const MULTI_FACTOR_AUTHENTICATION = 1 << 28;
        /// Reserved for extending the flags.
        const CAPABILITY_EXTENSION = 1 << 29;
        /// Verify the server certificate (client-side only).
        const SSL_VERIFY_SERVER_CERT = 1 << 30;
        /// Keep options after a failed connect (client-side only).
        const REMEMBER_OPTIONS = 1 << 31;
    }
}

impl Capabilities {
    /// What tpbed's server advertises by default: the flags the usual MySQL clients check
    /// for at connect time (protocol 4.1, secure connection, plugin auth with length-encoded
    /// data, connect attributes, multi-statements and multi-results, session tracking,
    /// DEPRECATE_EOF, LOCAL_FILES for `LOAD DATA LOCAL`, which the server variable
    /// `local_infile` still gates). Left out on purpose: SSL and compression (not
    /// implemented), QUERY_ATTRIBUTES (COM_QUERY would carry a prefix),
    /// and flags that change statement semantics the engine would then have to honour
    /// (FOUND_ROWS, which Connector/J asks for, IGNORE_SPACE, NO_SCHEMA, ODBC).
    pub const SERVER_DEFAULT: Self = Self::LONG_PASSWORD
        .union(Self::LONG_FLAG)
        .union(Self::LOCAL_FILES)
        .union(Self::CONNECT_WITH_DB)
        .union(Self::PROTOCOL_41)
        .union(Self::INTERACTIVE)
        .union(Self::IGNORE_SIGPIPE)
        .union(Self::TRANSACTIONS)
        .union(Self::RESERVED)
        .union(Self::SECURE_CONNECTION)
        .union(Self::MULTI_STATEMENTS)
        .union(Self::MULTI_RESULTS)
        .union(Self::PS_MULTI_RESULTS)
        .union(Self::PLUGIN_AUTH)
        .union(Self::CONNECT_ATTRS)
        .union(Self::PLUGIN_AUTH_LENENC_CLIENT_DATA)
        .union(Self::SESSION_TRACK)
        .union(Self::DEPRECATE_EOF);

    /// What this crate's client asks for by default (intersected with the server's flags at
    /// connect).
    pub const CLIENT_DEFAULT: Self = Self::LONG_PASSWORD
        .union(Self::LONG_FLAG)
        .union(Self::PROTOCOL_41)
        .union(Self::TRANSACTIONS)
        .union(Self::SECURE_CONNECTION)
        .union(Self::MULTI_STATEMENTS)
        .union(Self::MULTI_RESULTS)
        .union(Self::PS_MULTI_RESULTS)
        .union(Self::PLUGIN_AUTH)
        .union(Self::PLUGIN_AUTH_LENENC_CLIENT_DATA)
        .union(Self::CONNECT_ATTRS)
        .union(Self::DEPRECATE_EOF);
}

bitflags! {
    /// `SERVER_STATUS_*` flags carried by OK and EOF packets.
    #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
    pub struct StatusFlags: u16 {
        /// A transaction is active.
        const IN_TRANS = 1;
        /// Autocommit mode is on (PyMySQL reads this to decide on `SET AUTOCOMMIT`).
        const AUTOCOMMIT = 1 << 1;
        /// Another result set follows this one.
        const MORE_RESULTS_EXISTS = 1 << 3;
        /// The query used a bad index.
        const NO_GOOD_INDEX_USED = 1 << 4;
        /// The query used no index.
        const NO_INDEX_USED = 1 << 5;
        /// A read-only cursor was opened by COM_STMT_EXECUTE.
        const CURSOR_EXISTS = 1 << 6;
        /// The last row of a cursor was sent.
        const LAST_ROW_SENT = 1 << 7;
        /// A database was dropped.
        const DB_DROPPED = 1 << 8;
        /// `NO_BACKSLASH_ESCAPES` is in the SQL mode.
        const NO_BACKSLASH_ESCAPES = 1 << 9;
        /// A prepared statement's result metadata changed since it was prepared.
        const METADATA_CHANGED = 1 << 10;
        /// The query was logged as slow.
        const QUERY_WAS_SLOW = 1 << 11;
        /// The result set holds OUT parameters.
        const PS_OUT_PARAMS = 1 << 12;
        /// The active transaction is read-only.
        const IN_TRANS_READONLY = 1 << 13;
        /// Session state changed (session-track data follows in OK).
        const SESSION_STATE_CHANGED = 1 << 14;
    }
}
