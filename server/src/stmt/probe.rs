//! Statement probes: the clock and counters around each statement, recorded under its digest
//! in the core's [`DigestStore`](crate::digest::DigestStore) and, when it ran long enough, in
//! the slow query log when it ends.

use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime};

use crate::context::Context;
use crate::digest::{self, Digest, Measure, Prepared};
use crate::error::SqlResult;
use crate::sql::Output;
use crate::vars::Counter;

/// The clock and counters at the start of a statement.
#[derive(Debug, Clone, Copy)]
pub struct Probe {
    start: Instant,
    wall: SystemTime,
    rows_read: u64,
    lock_ns: u64,
}

impl Probe {
    /// Starts measuring a statement of `st`; None when digests and the slow log are off.
    pub fn start(st: &Context) -> Option<Probe> {
        (st.core.digests.enabled() || st.core.querylogs.slow_on()).then(|| Probe {
            start: Instant::now(),
            wall: SystemTime::now(),
            rows_read: st.conn.counters.get(Counter::InnodbRowsRead),
            lock_ns: digest::lock_wait_ns(),
        })
    }

    /// What the statement measured, ending at `now`, now that it produced `r`.
    fn measure(&self, st: &Context, now: Instant, r: &SqlResult<Output>) -> Measure {
        let timer_ns = now.saturating_duration_since(self.start).as_nanos() as u64;
        if let Some(trx) = st.trx.borrow().as_ref() {
            digest::note_lock_wait(trx.take_lock_wait());
        }
        let (rows_sent, rows_affected) = match r {
            Ok(Output::Rows(rs)) => (rs.rows.len() as u64, 0),
            Ok(Output::Ok { affected_rows, .. }) => (0, *affected_rows),
            Err(_) => (0, 0),
        };
        Measure {
            ended: now,
            timer_ns,
            lock_ns: digest::lock_wait_ns()
                .saturating_sub(self.lock_ns)
                .min(timer_ns),
            errors: u64::from(r.is_err()),
            warnings: st.warnings.count(),
            rows_affected,
            rows_sent,
            rows_examined: st
                .conn
                .counters
                .get(Counter::InnodbRowsRead)
                .saturating_sub(self.rows_read),
        }
    }

    /// Writes the statement `text`, which measured `m`, to the slow log if it qualifies.
    fn log_slow(&self, st: &Context, m: &Measure, text: &str) {
        // With the slow log off nothing is written or counted: skip building the entry.
        if !st.core.querylogs.slow_on() {
            return;
        }
        let user_host = crate::querylog::format::user_host(&st.user, &st.conn.host);
        let entry = crate::querylog::SlowEntry {
            started: self.wall,
            query_time: Duration::from_nanos(m.timer_ns),
            lock_time: Duration::from_nanos(m.lock_ns),
            rows_sent: m.rows_sent,
            rows_examined: m.rows_examined,
            conn_id: st.conn.id,
            user_host: &user_host,
            db: st.db.as_deref(),
            text,
        };
        if st.core.querylogs.slow(&st.vars, &entry) {
            st.count(Counter::SlowQueries);
        }
    }

    /// Records a COM_STMT_EXECUTE of `p` that produced `r`.
    pub fn finish_execute(self, st: &Context, p: &Prepared, r: &SqlResult<Output>) {
        let m = self.measure(st, Instant::now(), r);
        self.log_slow(st, &m, p.text());
        if st.core.digests.enabled() {
            st.core
                .digests
                .record(st.conn.id, st.db.as_deref(), p.digest(), &m, p.text());
        }
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

    /// Uses `digests` as the text's statement digests (they came with its parse).
    pub fn use_digests(&mut self, digests: Arc<[Arc<Digest>]>) {
        self.digests = Some(digests);
    }

    /// Records the current statement, which produced `r`, and starts the next one.
    pub fn done(&mut self, st: &Context, r: &SqlResult<Output>) {
        let Some(p) = self.probe else {
            return;
        };
        let m = p.measure(st, Instant::now(), r);
        p.log_slow(st, &m, self.sql);
        let store = &st.core.digests;
        if store.enabled() {
            let digests = self
                .digests
                .get_or_insert_with(|| st.conn.digest_cache.get(self.sql, store.max_length()));
            let i = self.next.min(digests.len().saturating_sub(1));
            if let Some(d) = digests.get(i) {
                store.record(st.conn.id, st.db.as_deref(), d, &m, self.sql);
            }
        }
        self.next += 1;
        // The next statement starts after the bookkeeping, which is not its cost.
        self.probe = Probe::start(st);
    }
}
