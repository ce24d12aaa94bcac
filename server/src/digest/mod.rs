//! Statement digests: each statement's text normalised MySQL-style ([`normalize`]), hashed
//! with SHA-256 (DIGEST: 64 hex digits; MySQL hashes its token array instead, so the values
//! differ from MySQL's but group the same statements), and summed per (schema, digest) in a
//! [`DigestStore`] that `performance_schema.events_statements_summary_by_digest` reads.
//!
//! Cost: a prepared statement's digest is computed once, at prepare time. A text statement
//! (COM_QUERY) is looked up by a hash of its exact text in a small per-connection cache
//! ([`TextCache`]), so a connection repeating a statement (BEGIN, COMMIT, the same query)
//! pays a hash and a compare; a text never seen on the connection is tokenised and
//! normalised (about a microsecond for a short statement). The measurements themselves are
//! two clock reads and a counter read per statement.

mod cache;
pub mod normalize;
pub mod store;

use std::cell::Cell;
use std::sync::Arc;
use std::time::{Duration, Instant};

use sha2::{Digest as _, Sha256};

use crate::context::Context;
use crate::error::SqlResult;
use crate::sql::Output;
use crate::vars::registry::{Feature, Registry, Scope, VarDef, VarType, VarValue};
use crate::vars::Counter;

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
    pub fn new(st: &Context, sql: &str) -> Option<Prepared> {
        let store = &st.core.digests;
        if !store.enabled() {
            return None;
        }
        let digest = digests_of(sql, store.max_length()).into_iter().next()?;
        Some(Prepared {
            digest,
            text: sql.into(),
        })
    }
}

thread_local! {
    /// Nanoseconds this thread has spent waiting for locks.
    static LOCK_WAIT_NS: Cell<u64> = const { Cell::new(0) };
}

/// Counts a lock wait of the calling thread into the SUM_LOCK_TIME of the statement it runs:
/// the session charges its transaction's lock-wait time here at the end of each statement and
/// before the transaction ends ([`crate::trx::Trx::take_lock_wait`]).
pub fn note_lock_wait(waited: Duration) {
    LOCK_WAIT_NS.with(|c| c.set(c.get().saturating_add(waited.as_nanos() as u64)));
}

/// The clock and counters at the start of a statement.
#[derive(Debug, Clone, Copy)]
pub struct Probe {
    start: Instant,
    rows_read: u64,
    lock_ns: u64,
}

impl Probe {
    /// Starts measuring a statement of `st`; None when digests are off.
    pub fn start(st: &Context) -> Option<Probe> {
        st.core.digests.enabled().then(|| Probe {
            start: Instant::now(),
            rows_read: st.conn.counters.get(Counter::InnodbRowsRead),
            lock_ns: LOCK_WAIT_NS.with(Cell::get),
        })
    }

    /// What the statement measured, ending at `now`, now that it produced `r`.
    fn measure(&self, st: &Context, now: Instant, r: &SqlResult<Output>) -> Measure {
        let timer_ns = now.saturating_duration_since(self.start).as_nanos() as u64;
        if let Some(trx) = st.trx.borrow().as_ref() {
            note_lock_wait(trx.take_lock_wait());
        }
        let (rows_sent, rows_affected) = match r {
            Ok(Output::Rows(rs)) => (rs.rows.len() as u64, 0),
            Ok(Output::Ok { affected_rows, .. }) => (0, *affected_rows),
            Err(_) => (0, 0),
        };
        Measure {
            ended: now,
            timer_ns,
            lock_ns: LOCK_WAIT_NS
                .with(Cell::get)
                .saturating_sub(self.lock_ns)
                .min(timer_ns),
            errors: u64::from(r.is_err()),
            warnings: st.warnings.len() as u64,
            rows_affected,
            rows_sent,
            rows_examined: st
                .conn
                .counters
                .get(Counter::InnodbRowsRead)
                .saturating_sub(self.rows_read),
        }
    }

    /// Records a COM_STMT_EXECUTE of `p` that produced `r`.
    pub fn finish_execute(self, st: &Context, p: &Prepared, r: &SqlResult<Output>) {
        let m = self.measure(st, Instant::now(), r);
        st.core
            .digests
            .record(st.conn.id, st.db.as_deref(), &p.digest, &m, &p.text);
    }
}

/// Measures the statements of one COM_QUERY in turn.
#[derive(Debug)]
pub struct TextProbe<'a> {
    sql: &'a str,
    probe: Option<Probe>,
    digests: Option<Arc<[Arc<Digest>]>>,
    next: usize,
}

impl<'a> TextProbe<'a> {
    /// Starts measuring the first statement of `sql`.
    pub fn begin(st: &Context, sql: &'a str) -> TextProbe<'a> {
        TextProbe {
            sql,
            probe: Probe::start(st),
            digests: None,
            next: 0,
        }
    }

    /// Records the current statement, which produced `r`, and starts the next one.
    pub fn done(&mut self, st: &Context, r: &SqlResult<Output>) {
        let Some(p) = self.probe else {
            return;
        };
        let m = p.measure(st, Instant::now(), r);
        let store = &st.core.digests;
        let digests = self
            .digests
            .get_or_insert_with(|| st.conn.digest_cache.get(self.sql, store.max_length()));
        let i = self.next.min(digests.len().saturating_sub(1));
        if let Some(d) = digests.get(i) {
            store.record(st.conn.id, st.db.as_deref(), d, &m, self.sql);
        }
        self.next += 1;
        // The next statement starts after the bookkeeping, which is not its cost.
        self.probe = Probe::start(st);
    }
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
