//! The connection phase: the server greeting (HandshakeV10), the client's answer
//! (HandshakeResponse41, or an SSL request), AuthSwitchRequest and AuthMoreData.

use crate::caps::{Capabilities, StatusFlags};
use crate::error::ProtocolError;
use crate::lenenc::{put_lenenc_bytes, put_lenenc_int, put_nul_str, put_u16, put_u32, Reader};

/// The plugin name of `mysql_native_password`.
pub const NATIVE_PASSWORD: &str = "mysql_native_password";
/// The plugin name of `caching_sha2_password`.
pub const CACHING_SHA2_PASSWORD: &str = "caching_sha2_password";

fn lossy(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// The server greeting (Protocol::HandshakeV10), the first packet of every connection.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HandshakeV10 {
    /// Version string, e.g. `8.0.36-tpbed`.
    pub server_version: String,
    /// The thread id `CONNECTION_ID()` and KILL use.
    pub connection_id: u32,
    /// The 20-byte nonce (scramble) the auth plugins hash with the password.
    pub auth_plugin_data: [u8; 20],
    /// Capabilities the server offers.
    pub capabilities: Capabilities,
    /// Default collation id.
    pub charset: u8,
    /// Initial server status.
    pub status: StatusFlags,
    /// The auth plugin the server proposes for the first exchange.
    pub auth_plugin_name: String,
}

impl HandshakeV10 {
    /// Appends the greeting payload.
    pub fn encode(&self, out: &mut Vec<u8>) {
        let caps = self.capabilities.bits();
        out.push(10);
        put_nul_str(out, self.server_version.as_bytes());
        put_u32(out, self.connection_id);
        out.extend_from_slice(&self.auth_plugin_data[..8]);
        out.push(0);
        put_u16(out, caps as u16);
        out.push(self.charset);
        put_u16(out, self.status.bits());
        put_u16(out, (caps >> 16) as u16);
        let plugin_auth = self.capabilities.contains(Capabilities::PLUGIN_AUTH);
        out.push(if plugin_auth { 21 } else { 0 });
        out.extend_from_slice(&[0; 10]);
        if self.capabilities.contains(Capabilities::SECURE_CONNECTION) {
            out.extend_from_slice(&self.auth_plugin_data[8..]);
            out.push(0);
        }
        if plugin_auth {
            put_nul_str(out, self.auth_plugin_name.as_bytes());
        }
    }

    /// Decodes a greeting. A nonce shorter than 20 bytes is zero-padded; a plugin name
    /// without its NUL (an old MySQL bug) is accepted.
    pub fn decode(payload: &[u8]) -> Result<Self, ProtocolError> {
        let mut r = Reader::new(payload);
        if r.u8()? != 10 {
            return Err(ProtocolError::Unsupported(
                "handshake protocol other than v10",
            ));
        }
        let server_version = lossy(r.nul_str()?);
        let connection_id = r.u32()?;
        let mut auth_plugin_data = [0u8; 20];
        auth_plugin_data[..8].copy_from_slice(r.fixed(8)?);
        r.skip(1)?;
        let mut caps = u32::from(r.u16()?);
        let (mut charset, mut status, mut auth_plugin_name) =
            (0, StatusFlags::empty(), String::new());
        if !r.is_empty() {
            charset = r.u8()?;
            status = StatusFlags::from_bits_retain(r.u16()?);
            caps |= u32::from(r.u16()?) << 16;
            let data_len = usize::from(r.u8()?);
            r.skip(10)?;
            let capabilities = Capabilities::from_bits_retain(caps);
            if capabilities.contains(Capabilities::SECURE_CONNECTION) {
                let part2 = r.fixed(data_len.saturating_sub(8).max(13).min(r.remaining()))?;
                let part2 = part2.strip_suffix(&[0]).unwrap_or(part2);
                let n = part2.len().min(12);
                auth_plugin_data[8..8 + n].copy_from_slice(&part2[..n]);
            }
            if capabilities.contains(Capabilities::PLUGIN_AUTH) {
                auth_plugin_name = lossy(r.nul_str_or_rest());
            }
        }
        let capabilities = Capabilities::from_bits_retain(caps);
        Ok(Self {
            server_version,
            connection_id,
            auth_plugin_data,
            capabilities,
            charset,
            status,
            auth_plugin_name,
        })
    }
}

/// The client's answer to the greeting (Protocol::HandshakeResponse41).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HandshakeResponse {
    /// Capabilities the client asks for (the server intersects them with its own).
    pub capabilities: Capabilities,
    /// The largest packet the client will send.
    pub max_packet: u32,
    /// The client's collation id.
    pub charset: u8,
    /// Login user.
    pub username: String,
    /// The auth plugin's response (the scrambled password).
    pub auth_response: Vec<u8>,
    /// Initial database, with CONNECT_WITH_DB.
    pub database: Option<String>,
    /// The plugin `auth_response` was computed with, with PLUGIN_AUTH.
    pub auth_plugin_name: Option<String>,
    /// Connection attributes (`_client_name`, `_os`, ...), with CONNECT_ATTRS.
    pub connect_attrs: Vec<(String, String)>,
}

/// The fixed 32-byte prefix every 4.1 handshake response starts with.
const FIXED_PREFIX_LEN: usize = 32;

impl HandshakeResponse {
    /// Decodes a handshake response. An SSL request (the 32-byte prefix alone, with
    /// CLIENT_SSL) is [`ProtocolError::SslRequested`]; a pre-4.1 response is unsupported.
    pub fn decode(payload: &[u8]) -> Result<Self, ProtocolError> {
        let mut r = Reader::new(payload);
        let capabilities = Capabilities::from_bits_retain(r.u32()?);
        if !capabilities.contains(Capabilities::PROTOCOL_41) {
            return Err(ProtocolError::Unsupported("pre-4.1 handshake response"));
        }
        let max_packet = r.u32()?;
        let charset = r.u8()?;
        r.skip(23)?;
        if payload.len() == FIXED_PREFIX_LEN && capabilities.contains(Capabilities::SSL) {
            return Err(ProtocolError::SslRequested);
        }
        let username = lossy(r.nul_str()?);
        let auth_response =
            if capabilities.contains(Capabilities::PLUGIN_AUTH_LENENC_CLIENT_DATA) {
                r.lenenc_bytes()?
            } else if capabilities.contains(Capabilities::SECURE_CONNECTION) {
                let n = r.u8()?;
                r.fixed(usize::from(n))?
            } else {
                r.nul_str()?
            }
            .to_vec();
        let mut database = None;
        if capabilities.contains(Capabilities::CONNECT_WITH_DB) && !r.is_empty() {
            database = Some(lossy(r.nul_str_or_rest()));
        }
        let mut auth_plugin_name = None;
        if capabilities.contains(Capabilities::PLUGIN_AUTH) && !r.is_empty() {
            auth_plugin_name = Some(lossy(r.nul_str_or_rest()));
        }
        let mut connect_attrs = Vec::new();
        if capabilities.contains(Capabilities::CONNECT_ATTRS) && !r.is_empty() {
            let mut attrs = Reader::new(r.lenenc_bytes()?);
            while !attrs.is_empty() {
                let k = lossy(attrs.lenenc_bytes()?);
                let v = lossy(attrs.lenenc_bytes()?);
                connect_attrs.push((k, v));
            }
        }
        Ok(Self {
            capabilities,
            max_packet,
            charset,
            username,
            auth_response,
            database,
            auth_plugin_name,
            connect_attrs,
        })
    }

    /// Appends the response payload. Optional parts are written when their capability is set
    /// (an absent value is written empty), so that the flags alone say what follows.
    pub fn encode(&self, out: &mut Vec<u8>) {
        let caps = self.capabilities;
        put_u32(out, caps.bits());
        put_u32(out, self.max_packet);
        out.push(self.charset);
        out.extend_from_slice(&[0; 23]);
        put_nul_str(out, self.username.as_bytes());
        if caps.contains(Capabilities::PLUGIN_AUTH_LENENC_CLIENT_DATA) {
            put_lenenc_bytes(out, &self.auth_response);
        } else if caps.contains(Capabilities::SECURE_CONNECTION) {
            let n = self.auth_response.len().min(255);
            out.push(n as u8);
            out.extend_from_slice(&self.auth_response[..n]);
        } else {
            put_nul_str(out, &self.auth_response);
        }
        if caps.contains(Capabilities::CONNECT_WITH_DB) {
            put_nul_str(out, self.database.as_deref().unwrap_or("").as_bytes());
        }
        if caps.contains(Capabilities::PLUGIN_AUTH) {
            put_nul_str(
                out,
                self.auth_plugin_name.as_deref().unwrap_or("").as_bytes(),
            );
        }
        if caps.contains(Capabilities::CONNECT_ATTRS) {
            let mut attrs = Vec::new();
            for (k, v) in &self.connect_attrs {
                put_lenenc_bytes(&mut attrs, k.as_bytes());
                put_lenenc_bytes(&mut attrs, v.as_bytes());
            }
            put_lenenc_int(out, attrs.len() as u64);
            out.extend_from_slice(&attrs);
        }
    }
}

/// The SSL request: the 32-byte prefix of a handshake response with CLIENT_SSL, after which
/// the client starts TLS.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SslRequest {
    /// Capabilities the client asks for.
    pub capabilities: Capabilities,
    /// The largest packet the client will send.
    pub max_packet: u32,
    /// The client's collation id.
    pub charset: u8,
}

impl SslRequest {
    /// Decodes the 32-byte prefix (after [`HandshakeResponse::decode`] answered
    /// [`ProtocolError::SslRequested`]).
    pub fn decode(payload: &[u8]) -> Result<Self, ProtocolError> {
        let mut r = Reader::new(payload);
        let capabilities = Capabilities::from_bits_retain(r.u32()?);
        let max_packet = r.u32()?;
        let charset = r.u8()?;
        r.skip(23)?;
        Ok(Self {
            capabilities,
            max_packet,
            charset,
        })
    }

    /// Appends the 32-byte payload (CLIENT_SSL is added).
    pub fn encode(&self, out: &mut Vec<u8>) {
        put_u32(out, (self.capabilities | Capabilities::SSL).bits());
        put_u32(out, self.max_packet);
        out.push(self.charset);
        out.extend_from_slice(&[0; 23]);
    }
}

/// The server asks the client to authenticate again with another plugin (0xFE header).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AuthSwitchRequest {
    /// The plugin to use.
    pub plugin: String,
    /// The plugin's data, normally a fresh 20-byte nonce.
    pub data: Vec<u8>,
}

impl AuthSwitchRequest {
    /// The header byte.
    pub const HEADER: u8 = 0xFE;

    /// Appends the payload. MySQL terminates the nonce with a NUL; so does this.
    pub fn encode(&self, out: &mut Vec<u8>) {
        out.push(Self::HEADER);
        put_nul_str(out, self.plugin.as_bytes());
        put_nul_str(out, &self.data);
    }

    /// Decodes the payload, dropping the nonce's trailing NUL. A bare 0xFE (the pre-4.1
    /// "old password" switch) decodes with an empty plugin name.
    pub fn decode(payload: &[u8]) -> Result<Self, ProtocolError> {
        let mut r = Reader::new(payload);
        if r.u8()? != Self::HEADER {
            return Err(ProtocolError::Malformed("auth switch header"));
        }
        let plugin = lossy(r.nul_str_or_rest());
        let data = r.rest();
        let data = data.strip_suffix(&[0]).unwrap_or(data).to_vec();
        Ok(Self { plugin, data })
    }
}

/// Extra authentication data from the server (0x01 header), e.g. caching_sha2's
/// fast-auth verdict.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AuthMoreData {
    /// The plugin-specific bytes.
    pub data: Vec<u8>,
}

impl AuthMoreData {
    /// The header byte.
    pub const HEADER: u8 = 0x01;
    /// caching_sha2_password: the scramble matched the cache; an OK follows.
    pub const FAST_AUTH_SUCCESS: u8 = 3;
    /// caching_sha2_password: the cache missed; the client must send the password (over TLS
    /// or RSA-encrypted).
    pub const PERFORM_FULL_AUTH: u8 = 4;

    /// Appends the payload.
    pub fn encode(&self, out: &mut Vec<u8>) {
        out.push(Self::HEADER);
        out.extend_from_slice(&self.data);
    }

    /// Decodes the payload.
    pub fn decode(payload: &[u8]) -> Result<Self, ProtocolError> {
        match payload.split_first() {
            Some((&Self::HEADER, data)) => Ok(Self {
                data: data.to_vec(),
            }),
            Some(_) => Err(ProtocolError::Malformed("auth more data header")),
            None => Err(ProtocolError::Truncated),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn greeting() -> HandshakeV10 {
        HandshakeV10 {
            server_version: "8.0.36-tpbed".into(),
            connection_id: 7,
            auth_plugin_data: *b"abcdefghijklmnopqrst",
            capabilities: Capabilities::SERVER_DEFAULT,
            charset: 255,
            status: StatusFlags::AUTOCOMMIT,
            auth_plugin_name: NATIVE_PASSWORD.into(),
        }
    }

    #[test]
    fn greeting_round_trips() {
        let g = greeting();
        let mut out = Vec::new();
        g.encode(&mut out);
        assert_eq!(HandshakeV10::decode(&out), Ok(g));
    }

    #[test]
    fn response_variants_round_trip() {
        let base = HandshakeResponse {
            capabilities: Capabilities::CLIENT_DEFAULT | Capabilities::CONNECT_WITH_DB,
            max_packet: 1 << 24,
            charset: 45,
            username: "sbtest".into(),
            auth_response: vec![1; 20],
            database: Some("sbtest".into()),
            auth_plugin_name: Some(NATIVE_PASSWORD.into()),
            connect_attrs: vec![("_client_name".into(), "libmariadb".into())],
        };
        let lenenc_off =
            Capabilities::CLIENT_DEFAULT.difference(Capabilities::PLUGIN_AUTH_LENENC_CLIENT_DATA);
        let mut old = base.clone();
        old.capabilities = Capabilities::PROTOCOL_41;
        old.database = None;
        old.auth_plugin_name = None;
        old.connect_attrs.clear();
        let mut secure = base.clone();
        secure.capabilities = lenenc_off | Capabilities::CONNECT_WITH_DB;
        for resp in [base, secure, old] {
            let mut out = Vec::new();
            resp.encode(&mut out);
            assert_eq!(HandshakeResponse::decode(&out), Ok(resp));
        }
    }

    #[test]
    fn ssl_request_is_recognised() {
        let req = SslRequest {
            capabilities: Capabilities::CLIENT_DEFAULT,
            max_packet: 1 << 24,
            charset: 45,
        };
        let mut out = Vec::new();
        req.encode(&mut out);
        assert_eq!(out.len(), 32);
        assert_eq!(
            HandshakeResponse::decode(&out),
            Err(ProtocolError::SslRequested)
        );
        assert!(SslRequest::decode(&out)
            .unwrap()
            .capabilities
            .contains(Capabilities::SSL));
    }

    #[test]
    fn auth_switch_and_more_data() {
        let sw = AuthSwitchRequest {
            plugin: NATIVE_PASSWORD.into(),
            data: b"01234567890123456789".to_vec(),
        };
        let mut out = Vec::new();
        sw.encode(&mut out);
        assert_eq!(*out.last().unwrap(), 0);
        assert_eq!(AuthSwitchRequest::decode(&out), Ok(sw));
        let more = AuthMoreData {
            data: vec![AuthMoreData::FAST_AUTH_SUCCESS],
        };
        out.clear();
        more.encode(&mut out);
        assert_eq!(out, [1, 3]);
        assert_eq!(AuthMoreData::decode(&out), Ok(more));
    }
}
