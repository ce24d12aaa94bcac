//! What the thread pool asks a parked session about, answered without reading the session's
//! input: the class of the next command from a peek at the socket (command byte, statement
//! kind, and a digest of the statement text with literals removed), and the lock facts from
//! counters the lock system keeps. Invariant: nothing here consumes input or blocks; each
//! answer costs at most one non-blocking `recv(MSG_PEEK)`.

use std::os::fd::RawFd;

use pool_core::policy::{StmtClass, StmtKind};

/// Bytes peeked: the packet header, the command byte and the start of the statement.
const PEEK: usize = 256;

/// `COM_QUERY`.
const COM_QUERY: u8 = 3;
/// `COM_STMT_EXECUTE`.
const COM_STMT_EXECUTE: u8 = 23;

/// The class of the command pending on `fd`; `prepared` gives the text of a prepared
/// statement by id (for `COM_STMT_EXECUTE`). Unknown when nothing is readable yet.
pub(crate) fn peek_class(
    fd: RawFd,
    prepared: impl Fn(u32) -> Option<(StmtKind, u64)>,
) -> StmtClass {
    let mut buf = [0u8; PEEK];
    // SAFETY: `buf` is a valid writable buffer of `PEEK` bytes for the duration of the call;
    // MSG_PEEK leaves the bytes queued and MSG_DONTWAIT keeps the call from blocking.
    let n = unsafe {
        libc::recv(
            fd,
            buf.as_mut_ptr().cast(),
            PEEK,
            libc::MSG_PEEK | libc::MSG_DONTWAIT,
        )
    };
    let Ok(n) = usize::try_from(n) else {
        return StmtClass::UNKNOWN;
    };
    class_of_packet(&buf[..n], prepared)
}

/// The class of the command whose packet starts `bytes` (header included).
pub(crate) fn class_of_packet(
    bytes: &[u8],
    prepared: impl Fn(u32) -> Option<(StmtKind, u64)>,
) -> StmtClass {
    let Some(&command) = bytes.get(4) else {
        return StmtClass::UNKNOWN;
    };
    let body = &bytes[5..];
    match command {
        COM_QUERY => StmtClass {
            command,
            kind: kind_of(body),
            digest: digest_of(body),
        },
        COM_STMT_EXECUTE => {
            let id = body
                .get(..4)
                .map(|b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]));
            let (kind, digest) = id.and_then(prepared).unwrap_or((StmtKind::Other, 0));
            StmtClass {
                command,
                kind,
                digest,
            }
        }
        _ => StmtClass {
            command,
            kind: StmtKind::Command,
            digest: 0,
        },
    }
}

/// `text` without leading blanks, comments and opening parentheses.
fn skip_noise(mut text: &[u8]) -> &[u8] {
    loop {
        let trimmed = text.trim_ascii_start();
        if let Some(rest) = trimmed.strip_prefix(b"/*") {
            text = match rest.windows(2).position(|w| w == b"*/") {
                Some(i) => &rest[i + 2..],
                None => &[],
            };
        } else if let Some(rest) = trimmed
            .strip_prefix(b"-- ")
            .or_else(|| trimmed.strip_prefix(b"#"))
        {
            text = match rest.iter().position(|&c| c == b'\n') {
                Some(i) => &rest[i + 1..],
                None => &[],
            };
        } else if let Some(rest) = trimmed.strip_prefix(b"(") {
            text = rest;
        } else {
            return trimmed;
        }
    }
}

/// The kind of a statement from its first keyword.
pub(crate) fn kind_of(text: &[u8]) -> StmtKind {
    let text = skip_noise(text);
    let end = text
        .iter()
        .position(|c| !c.is_ascii_alphabetic())
        .unwrap_or(text.len());
    let word = &text[..end];
    let is = |w: &str| word.eq_ignore_ascii_case(w.as_bytes());
    if is("select") || is("with") || is("table") || is("values") {
        StmtKind::Select
    } else if is("insert") {
        StmtKind::Insert
    } else if is("update") {
        StmtKind::Update
    } else if is("delete") {
        StmtKind::Delete
    } else if is("replace") {
        StmtKind::Replace
    } else if is("begin") || is("start") {
        StmtKind::Begin
    } else if is("commit") {
        StmtKind::Commit
    } else if is("rollback") {
        StmtKind::Rollback
    } else if is("set") {
        StmtKind::Set
    } else if is("show") || is("describe") || is("desc") || is("explain") {
        StmtKind::Show
    } else if is("create") || is("alter") || is("drop") || is("truncate") || is("rename") {
        StmtKind::Ddl
    } else if is("lock") || is("unlock") || is("flush") {
        StmtKind::Lock
    } else if word.is_empty() {
        StmtKind::Unknown
    } else {
        StmtKind::Other
    }
}

/// A 64-bit digest of a statement's text with its literals removed: numbers and quoted
/// strings count as one `?`, blanks only between two words (as one space), letters without
/// case, so the same statement
/// with other values has the same digest. Only the bytes given are read (a long statement is
/// classed by its start). FNV-1a; 0 is kept for "unknown".
pub(crate) fn digest_of(text: &[u8]) -> u64 {
    const OFFSET: u64 = 0xcbf2_9ce4_8422_2325;
    const PRIME: u64 = 0x0100_0000_01b3;
    let mut h = OFFSET;
    let mut feed = |b: u8| {
        h ^= u64::from(b);
        h = h.wrapping_mul(PRIME);
    };
    let text = skip_noise(text);
    let wordish = |c: u8| c.is_ascii_alphanumeric() || c == b'_' || c == b'`' || c == b'\'';
    let mut i = 0;
    let mut prev_word = false;
    let mut space = false;
    while i < text.len() {
        let c = text[i];
        if c.is_ascii_whitespace() {
            space = true;
            i += 1;
            continue;
        }
        if space && prev_word && (wordish(c) || c == b'"') {
            feed(b' ');
        }
        // A digit starts a number unless it continues a name (`t1`).
        let starts_token = space || !prev_word;
        space = false;
        if c == b'\'' || c == b'"' {
            // A quoted string (with doubled or escaped quotes) is one literal.
            i += 1;
            while i < text.len() {
                let escaped = text[i] == b'\\' || (text[i] == c && text.get(i + 1) == Some(&c));
                if escaped {
                    i += 2;
                } else if text[i] == c {
                    i += 1;
                    break;
                } else {
                    i += 1;
                }
            }
            feed(b'?');
            prev_word = true;
        } else if c.is_ascii_digit() && starts_token {
            while i < text.len() && (text[i].is_ascii_alphanumeric() || text[i] == b'.') {
                i += 1;
            }
            feed(b'?');
            prev_word = true;
        } else {
            prev_word = c.is_ascii_alphanumeric() || c == b'_' || c == b'`';
            feed(c.to_ascii_lowercase());
            i += 1;
        }
    }
    h.max(1)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn packet(command: u8, body: &[u8]) -> Vec<u8> {
        let len = (body.len() + 1) as u32;
        let mut p = len.to_le_bytes()[..3].to_vec();
        p.push(0);
        p.push(command);
        p.extend_from_slice(body);
        p
    }

    #[test]
    fn statement_kind_from_the_first_keyword() {
        assert_eq!(kind_of(b"  /* hint */ SELECT 1"), StmtKind::Select);
        assert_eq!(kind_of(b"(select 1) union (select 2)"), StmtKind::Select);
        assert_eq!(kind_of(b"start transaction"), StmtKind::Begin);
        assert_eq!(kind_of(b"UPDATE t SET c=1"), StmtKind::Update);
        assert_eq!(kind_of(b"LOCK TABLES t WRITE"), StmtKind::Lock);
        assert_eq!(kind_of(b"-- c\nDELETE FROM t"), StmtKind::Delete);
        assert_eq!(kind_of(b"do sleep(1)"), StmtKind::Other);
        assert_eq!(kind_of(b""), StmtKind::Unknown);
    }

    #[test]
    fn the_digest_ignores_literals_case_and_blanks() {
        assert_eq!(
            digest_of(b"SELECT c FROM sbtest1 WHERE id=42"),
            digest_of(b"select  c from sbtest1\nwhere id = 7")
        );
        assert_eq!(
            digest_of(b"SELECT c FROM sbtest1 WHERE id=42"),
            digest_of(b"select c from sbtest1 where id=1234")
        );
        assert_eq!(
            digest_of(b"select * from t where s='it''s' and n=1.5e3"),
            digest_of(b"select * from t where s='x' and n=2")
        );
        assert_ne!(
            digest_of(b"select c from sbtest1 where id=1"),
            digest_of(b"select c from sbtest2 where id=1"),
            "a digit inside a name is part of the name"
        );
        assert_ne!(digest_of(b"select 1"), 0);
        assert_eq!(digest_of(b"select 1"), digest_of(b"SELECT 22"));
        assert_eq!(
            digest_of(b"select * from t1 limit 5"),
            digest_of(b"select * from t1 limit 10")
        );
    }

    #[test]
    fn class_of_each_command() {
        let none = |_| None;
        let q = class_of_packet(&packet(COM_QUERY, b"SELECT 1"), none);
        assert_eq!((q.command, q.kind), (COM_QUERY, StmtKind::Select));
        assert_eq!(q.digest, digest_of(b"select 2"));
        let mut exec = 9u32.to_le_bytes().to_vec();
        exec.extend_from_slice(&[0, 1, 0, 0, 0]);
        let e = class_of_packet(&packet(COM_STMT_EXECUTE, &exec), |id| {
            (id == 9).then_some((StmtKind::Update, 77))
        });
        assert_eq!(
            (e.command, e.kind, e.digest),
            (COM_STMT_EXECUTE, StmtKind::Update, 77)
        );
        let ping = class_of_packet(&packet(14, b""), none);
        assert_eq!((ping.command, ping.kind), (14, StmtKind::Command));
        assert_eq!(class_of_packet(&[1, 0, 0], none), StmtClass::UNKNOWN);
    }
}
