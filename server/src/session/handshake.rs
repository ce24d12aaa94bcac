//! The connection phase: greeting, handshake response, optional auth switch, the
//! caching_sha2_password fast path, the `max_connections` check and the final OK or ERR.

use std::sync::atomic::Ordering;
use std::time::Duration;

use pool_core::Outcome;
use protocol::handshake::{AuthMoreData, AuthSwitchRequest, HandshakeResponse, HandshakeV10};
use protocol::packet::write_packet_with;
use protocol::{Capabilities, ErrPacket, OkPacket, ProtocolError, StatusFlags};

use crate::accounts::{Account, AuthPlugin};
use crate::error::{ErrorCode, SqlError};
use crate::log;
use crate::session::io::ReadError;
use crate::session::ClientSession;
use crate::vars::Counter;

/// A fresh 20-byte scramble: printable ASCII without `\0` or `$`, as MySQL makes them.
pub fn new_nonce() -> [u8; 20] {
    let mut n = [0u8; 20];
    for b in &mut n {
        *b = loop {
            let c = rand::random::<u8>() & 0x7f;
            if c > b' ' && c != b'$' && c != 0x7f {
                break c;
            }
        };
    }
    n
}

/// Refuses the connection: counted and logged before the client can see the error, so a
/// client that reads `Aborted_connects` right after its refusal finds it counted.
fn deny(s: &mut ClientSession, e: SqlError, why: &str) -> Outcome {
    s.st.core.retired.add(Counter::AbortedConnects, 1);
    log::write(
        log::Level::Note,
        s.st.conn.id,
        &format!("Aborted connection ({}): {why}", s.st.conn.host),
    );
    s.write_err(&e);
    s.flush();
    Outcome::Close
}

/// [`deny`] in place of the greeting: the client has not yet said it speaks protocol 4.1, so
/// the ERR carries no `#SQLSTATE` marker, as mysqld sends an error before the handshake.
fn deny_before_greeting(s: &mut ClientSession, e: SqlError, why: &str) -> Outcome {
    s.st.core.retired.add(Counter::AbortedConnects, 1);
    log::write(
        log::Level::Note,
        s.st.conn.id,
        &format!("Aborted connection ({}): {why}", s.st.conn.host),
    );
    let p = ErrPacket::new(e.code.code(), e.code.sql_state(), e.message);
    write_packet_with(&mut s.out, &mut s.seq, |o| p.encode_before_greeting(o));
    s.flush();
    Outcome::Close
}

/// No thread could be started for this new connection: MySQL logs it and sends 1135 in place
/// of the greeting.
pub(crate) fn refuse_no_thread(s: &mut ClientSession, error: &std::io::Error) {
    let errno = error.raw_os_error().unwrap_or(0);
    log::write(
        log::Level::Warning,
        s.st.conn.id,
        &format!("Can't create thread to handle new connection(errno= {errno})"),
    );
    s.st.core.retired.add(Counter::AbortedConnects, 1);
    s.seq = 0;
    let e = ErrPacket::new(
        ErrorCode::CantCreateThread.code(),
        ErrorCode::CantCreateThread.sql_state(),
        format!(
            "Can't create a new thread (errno {errno}); if you are not out of available \
             memory, you can consult the manual for a possible OS-dependent bug"
        ),
    );
    write_packet_with(&mut s.out, &mut s.seq, |o| e.encode_before_greeting(o));
    s.flush();
}

fn bad_handshake(s: &mut ClientSession, why: &str) -> Outcome {
    deny(
        s,
        SqlError::new(ErrorCode::HandshakeError, "Bad handshake"),
        why,
    )
}

/// Reads the next packet of the exchange within `connect_timeout`.
fn read(s: &mut ClientSession) -> Result<Vec<u8>, ReadError> {
    let t = Duration::from_secs(
        s.st.core
            .vars
            .global(s.st.core.ids.connect_timeout)
            .as_int()
            .max(1) as u64,
    );
    let (seq, payload) = s.io.read_packet(t, t)?;
    if seq != s.seq {
        return Err(ReadError::Protocol(ProtocolError::BadSequence {
            expected: s.seq,
            got: seq,
        }));
    }
    s.seq = seq.wrapping_add(1);
    Ok(payload)
}

fn read_or_abort(s: &mut ClientSession) -> Result<Vec<u8>, Outcome> {
    read(s).map_err(|e| {
        let why = match &e {
            ReadError::Closed => "client closed the connection during the handshake".to_string(),
            ReadError::IdleTimeout | ReadError::ReadTimeout => {
                "connect_timeout reached during the handshake".into()
            }
            ReadError::TooLarge => "handshake packet too large".into(),
            ReadError::Protocol(p) => format!("malformed handshake: {p}"),
            ReadError::Io(e) => e.to_string(),
        };
        if matches!(e, ReadError::Protocol(_) | ReadError::TooLarge) {
            bad_handshake(s, &why)
        } else {
            s.st.core.retired.add(Counter::AbortedConnects, 1);
            log::write(
                log::Level::Note,
                s.st.conn.id,
                &format!("Aborted connection ({}): {why}", s.st.conn.host),
            );
            Outcome::Close
        }
    })
}

fn check_password(acct: &Account, plugin: AuthPlugin, nonce: &[u8; 20], response: &[u8]) -> bool {
    if acct.empty_password {
        return response.is_empty();
    }
    match plugin {
        AuthPlugin::Native => {
            protocol::auth::native_password_verify(&acct.native_hash, nonce, response)
        }
        AuthPlugin::CachingSha2 => {
            protocol::auth::caching_sha2_verify(&acct.sha2_hash, nonce, response)
        }
    }
}

/// Runs the connection phase; `Continue` means the client is logged in.
pub fn run(s: &mut ClientSession) -> Outcome {
    let core = s.st.core.clone();
    if !s.counted {
        // Not even the spare CONNECTION_ADMIN slot was left at accept: refuse before the
        // greeting. The connection never held a slot.
        s.seq = 0;
        return deny_before_greeting(
            s,
            SqlError::new(ErrorCode::ConCount, "Too many connections"),
            "too many connections",
        );
    }
    let default_plugin = core.vars.global_by_name("default_authentication_plugin");
    let greeting = HandshakeV10 {
        server_version: crate::vars::system::SERVER_VERSION.to_string(),
        connection_id: s.st.conn.id,
        auth_plugin_data: s.nonce,
        capabilities: Capabilities::SERVER_DEFAULT,
        charset: 255,
        status: StatusFlags::AUTOCOMMIT,
        auth_plugin_name: default_plugin.as_str().to_string(),
    };
    s.seq = 0;
    write_packet_with(&mut s.out, &mut s.seq, |o| greeting.encode(o));
    if !s.flush() {
        return Outcome::Close;
    }
    let payload = match read_or_abort(s) {
        Ok(p) => p,
        Err(o) => return o,
    };
    let resp = match HandshakeResponse::decode(&payload) {
        Ok(r) => r,
        Err(ProtocolError::SslRequested) => {
            return deny(
                s,
                SqlError::new(
                    ErrorCode::HandshakeError,
                    "SSL is not enabled on this server (tpbed speaks plain TCP)",
                ),
                "client requested SSL",
            )
        }
        Err(e) => return bad_handshake(s, &format!("malformed handshake response: {e}")),
    };
    s.st.caps = resp.capabilities & Capabilities::SERVER_DEFAULT;
    if !s.st.caps.contains(Capabilities::PROTOCOL_41) {
        return bad_handshake(s, "client does not speak protocol 4.1");
    }
    s.st.interactive = resp.capabilities.contains(Capabilities::INTERACTIVE);
    s.st.multi_statements = resp.capabilities.contains(Capabilities::MULTI_STATEMENTS);
    let host = s.st.conn.host.clone();
    let using = if resp.auth_response.is_empty() {
        "NO"
    } else {
        "YES"
    };
    let denied = |user: &str| {
        SqlError::new(
            ErrorCode::AccessDenied,
            format!("Access denied for user '{user}'@'{host}' (using password: {using})"),
        )
    };
    let Some(acct) = core.accounts.find(&resp.username, &host) else {
        let e = denied(&resp.username);
        return deny(s, e, &format!("unknown user '{}'", resp.username));
    };
    // The plugin the client answered with: none named means the pre-plugin native method; a
    // name we do not know (libmariadb sends `dummy_fallback_auth` with an empty response when
    // it fails to load a client plugin, which happens under concurrent connects) is no
    // answer at all. Anything but the account's plugin gets an auth switch, as in MySQL.
    let client_plugin = match resp.auth_plugin_name.as_deref() {
        None => Some(AuthPlugin::Native),
        Some(name) => AuthPlugin::from_name(name),
    };
    let mut response = resp.auth_response.clone();
    if client_plugin != Some(acct.plugin) {
        let switch = AuthSwitchRequest {
            plugin: acct.plugin.name().to_string(),
            data: s.nonce.to_vec(),
        };
        write_packet_with(&mut s.out, &mut s.seq, |o| switch.encode(o));
        if !s.flush() {
            return Outcome::Close;
        }
        response = match read_or_abort(s) {
            Ok(p) => p,
            Err(o) => return o,
        };
    }
    if !check_password(&acct, acct.plugin, &s.nonce, &response) {
        let e = denied(&resp.username);
        return deny(s, e, &format!("wrong password for '{}'", resp.username));
    }
    if acct.plugin == AuthPlugin::CachingSha2 && !acct.empty_password {
        let more = AuthMoreData {
            data: vec![AuthMoreData::FAST_AUTH_SUCCESS],
        };
        write_packet_with(&mut s.out, &mut s.seq, |o| more.encode(o));
    }
    s.st.user = acct.user.clone();
    s.st.account_host = acct.host.clone();
    s.st.privileges = acct.privileges().clone();
    // Past `max_connections` only CONNECTION_ADMIN stays: anyone else gives the spare slot
    // back before the 1040 goes out, so a client that reconnects at once finds it free.
    if !s.st.privileges.connection_admin() && core.release_spare_slot() {
        s.counted = false;
        return deny(
            s,
            SqlError::new(ErrorCode::ConCount, "Too many connections"),
            "too many connections",
        );
    }
    if let Some(db) = resp.database.as_deref().filter(|d| !d.is_empty()) {
        if !crate::privileges::access::can_see_db(&s.st, db) {
            let e = crate::privileges::access::db_denied(&s.st, db);
            return deny(s, e, &format!("no access to database '{db}'"));
        }
        if !core.database_exists(db) {
            return deny(
                s,
                crate::error::unknown_db(db),
                &format!("unknown database '{db}'"),
            );
        }
        s.st.db = Some(db.to_string());
        crate::stmt::admin::database_defaults(&mut s.st, db);
    }
    {
        let mut login = s.st.conn.login.lock().unwrap_or_else(|e| e.into_inner());
        login.user = s.st.user.clone();
        login.db = s.st.db.clone();
    }
    core.note_connections(core.connection_count.load(Ordering::Relaxed));
    core.querylogs.general(
        s.st.conn.id,
        "Connect",
        &format!(
            "{}@{} on {} using TCP/IP",
            s.st.user,
            s.st.conn.host,
            s.st.db.as_deref().unwrap_or("")
        ),
    );
    let ok = OkPacket {
        status: s.st.status_flags(),
        ..OkPacket::default()
    };
    write_packet_with(&mut s.out, &mut s.seq, |o| ok.encode(s.st.caps, o));
    if !s.flush() {
        return Outcome::Close;
    }
    Outcome::Continue
}
