//! Statement digests: each statement's text normalised MySQL-style ([`normalize`]), hashed
//! with SHA-256 (DIGEST: 64 hex digits; MySQL hashes its token array instead, so the values
//! differ from MySQL's but group the same statements), and summed per (schema, digest) in a
//! [`DigestStore`] that `performance_schema.events_statements_summary_by_digest` reads.
//!
//! Cost: a prepared statement's digest is computed once, at prepare time. A text statement
//! (COM_QUERY) whose shape (its text but for the literals) the connection parsed before
//! takes that shape's digests (`crate::stmt::shapes`); any other is looked up by a hash of
//! its exact text in a small per-connection cache ([`TextCache`]), so a connection repeating
//! a statement (BEGIN, COMMIT, the same query) pays a hash and a compare; a text never seen
//! on the connection is tokenised and normalised (about a microsecond for a short
//! statement). The measurements themselves are two clock reads and a counter read per
//! statement.

mod cache;
pub mod normalize;
pub mod store;

use std::cell::Cell;
use std::sync::Arc;
use std::time::Duration;

use sha2::{Digest as _, Sha256};

use crate::vars::registry::{Feature, Registry, Scope, VarDef, VarType, VarValue};

pub use cache::TextCache;
pub use store::{DigestRow, DigestStore, Measure};

/// A normalised statement text and its SHA-256.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Digest {
    hash: [u8; 32],
    text: Box<str>,
}

impl Digest {
    /// The digest of a normalised text.
    pub fn new(text: String) -> Digest {
        Digest {
            hash: Sha256::digest(text.as_bytes()).into(),
            text: text.into_boxed_str(),
        }
    }

    /// The SHA-256 of [`Digest::text`].
    pub fn hash(&self) -> &[u8; 32] {
        &self.hash
    }

    /// DIGEST_TEXT.
    pub fn text(&self) -> &str {
        &self.text
    }

    /// DIGEST: the hash as 64 lower-case hex digits.
    pub fn hex(&self) -> String {
        use std::fmt::Write as _;
        self.hash
            .iter()
            .fold(String::with_capacity(64), |mut s, b| {
                let _ = write!(s, "{b:02x}");
                s
            })
    }
}

/// The digests of every statement in `sql`, in order.
pub fn digests_of(sql: &str, max_length: usize) -> Vec<Arc<Digest>> {
    normalize::normalize(sql, max_length)
        .into_iter()
        .map(|t| Arc::new(Digest::new(t)))
        .collect()
}

/// A prepared statement's digest, computed once at COM_STMT_PREPARE.
#[derive(Debug, Clone)]
pub struct Prepared {
    digest: Arc<Digest>,
    text: Box<str>,
}

impl Prepared {
    /// The digest of prepared text `sql` (its first statement), or None when digests are
    /// off (`performance_schema=OFF`) or the text holds no statement.
    pub fn new(store: &DigestStore, sql: &str) -> Option<Prepared> {
        if !store.enabled() {
            return None;
        }
        let digest = digests_of(sql, store.max_length()).into_iter().next()?;
        Some(Prepared {
            digest,
            text: sql.into(),
        })
    }

    /// The statement's digest.
    pub fn digest(&self) -> &Arc<Digest> {
        &self.digest
    }

    /// The prepared text.
    pub fn text(&self) -> &str {
        &self.text
    }
}

thread_local! {
    /// Nanoseconds this thread has spent waiting for locks.
    static LOCK_WAIT_NS: Cell<u64> = const { Cell::new(0) };
}

/// Nanoseconds the calling thread has waited for locks so far (a statement's lock time is
/// the difference between two readings).
pub fn lock_wait_ns() -> u64 {
    LOCK_WAIT_NS.with(Cell::get)
}

/// Counts a lock wait of the calling thread into the SUM_LOCK_TIME of the statement it runs:
/// the session charges its transaction's lock-wait time here at the end of each statement and
/// before the transaction ends ([`crate::trx::Trx::take_lock_wait`]).
pub fn note_lock_wait(waited: Duration) {
    LOCK_WAIT_NS.with(|c| c.set(c.get().saturating_add(waited.as_nanos() as u64)));
}

/// The digest store configured by the start-up variables.
pub fn store_from(vars: &Registry) -> DigestStore {
    let int = |n: &str| vars.global_by_name(n).as_int();
    let size = match int("performance_schema_digests_size") {
        n if n < 0 => 10_000,
        n => n as usize,
    };
    let max_length = int("performance_schema_max_digest_length").min(int("max_digest_length"));
    DigestStore::new(
        vars.global_by_name("performance_schema").as_bool(),
        size,
        max_length.max(0) as usize,
        int("performance_schema_max_sql_text_length").max(0) as usize,
    )
}

fn read_only_int(name: &'static str, min: i64, max: i64, default: i64) -> VarDef {
    VarDef {
        name,
        scope: Scope::Global,
        dynamic: false,
        session_read_only: false,
        ty: VarType::Int { min, max },
        default: VarValue::Int(default),
        feature: Feature::Core,
    }
}

/// The digest variables (start-up only, as in MySQL). `performance_schema_digests_size`
/// -1 means MySQL's autosized default, 10,000.
pub fn definitions() -> Vec<VarDef> {
    vec![
        read_only_int("max_digest_length", 0, 1_048_576, 1024),
        read_only_int("performance_schema_digests_size", -1, 1_048_576, 10_000),
        read_only_int("performance_schema_max_digest_length", 0, 1_048_576, 1024),
        read_only_int("performance_schema_max_sql_text_length", 0, 1_048_576, 1024),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn digest_is_sha256_hex_of_the_text() {
        let d = Digest::new("SELECT ?".into());
        assert_eq!(d.hex().len(), 64);
        assert_eq!(d, Digest::new("SELECT ?".into()));
        assert_ne!(d.hash(), Digest::new("SELECT ? , ?".into()).hash());
    }

    #[test]
    fn lock_waits_accumulate_per_thread() {
        let before = LOCK_WAIT_NS.with(Cell::get);
        note_lock_wait(Duration::from_micros(3));
        assert_eq!(LOCK_WAIT_NS.with(Cell::get) - before, 3000);
    }
}
