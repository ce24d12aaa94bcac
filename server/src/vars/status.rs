//! Status counters (`SHOW STATUS`): per-session counters that are summed for the global view.
//!
//! Each session owns a block of relaxed atomics that only it increments, so the hot path never
//! bounces a shared cache line between cores; `SHOW GLOBAL STATUS` adds the live sessions'
//! blocks to the totals retired by closed sessions.

use std::sync::atomic::{AtomicU64, Ordering};

macro_rules! counters {
    ($($variant:ident => $name:literal),* $(,)?) => {
        /// A per-session status counter; its MySQL name is [`Counter::name`].
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        #[repr(usize)]
        pub enum Counter { $(
            #[doc = concat!("`", $name, "`")]
            $variant,
        )* }

        impl Counter {
            /// Every counter, in declaration order.
            pub const ALL: &'static [Counter] = &[$(Counter::$variant),*];

            /// The counter's name as `SHOW STATUS` prints it.
            pub fn name(self) -> &'static str {
                match self { $(Counter::$variant => $name),* }
            }
        }
    };
}

counters! {
    AbortedClients => "Aborted_clients",
    AbortedConnects => "Aborted_connects",
    BytesReceived => "Bytes_received",
    BytesSent => "Bytes_sent",
    ComAdminCommands => "Com_admin_commands",
    ComAlterUser => "Com_alter_user",
    ComBegin => "Com_begin",
    ComChangeDb => "Com_change_db",
    ComCommit => "Com_commit",
    ComCreateDb => "Com_create_db",
    ComCreateIndex => "Com_create_index",
    ComCreateTable => "Com_create_table",
    ComCreateUser => "Com_create_user",
    ComDelete => "Com_delete",
    ComDropDb => "Com_drop_db",
    ComDropTable => "Com_drop_table",
    ComDropUser => "Com_drop_user",
    ComExplain => "Com_explain_other",
    ComFlush => "Com_flush",
    ComGrant => "Com_grant",
    ComInsert => "Com_insert",
    ComKill => "Com_kill",
    ComLoad => "Com_load",
    ComRenameUser => "Com_rename_user",
    ComReplace => "Com_replace",
    ComRevoke => "Com_revoke",
    ComRollback => "Com_rollback",
    ComRollbackToSavepoint => "Com_rollback_to_savepoint",
    ComReleaseSavepoint => "Com_release_savepoint",
    ComShowEngineStatus => "Com_show_engine_status",
    ComSavepoint => "Com_savepoint",
    ComSelect => "Com_select",
    ComSetOption => "Com_set_option",
    ComSetPassword => "Com_set_password",
    ComShowCreateUser => "Com_show_create_user",
    ComShowCreateTable => "Com_show_create_table",
    ComShowDatabases => "Com_show_databases",
    ComShowFields => "Com_show_fields",
    ComShowGrants => "Com_show_grants",
    ComShowProcesslist => "Com_show_processlist",
    ComShowStatus => "Com_show_status",
    ComShowTables => "Com_show_tables",
    ComShowVariables => "Com_show_variables",
    ComShowWarnings => "Com_show_warnings",
    ComStmtClose => "Com_stmt_close",
    ComStmtExecute => "Com_stmt_execute",
    ComStmtFetch => "Com_stmt_fetch",
    ComStmtPrepare => "Com_stmt_prepare",
    ComStmtReset => "Com_stmt_reset",
    ComStmtSendLongData => "Com_stmt_send_long_data",
    ComTruncate => "Com_truncate",
    ComUpdate => "Com_update",
    ComAnalyze => "Com_analyze",
    HandlerDelete => "Handler_delete",
    HandlerReadFirst => "Handler_read_first",
    HandlerReadKey => "Handler_read_key",
    HandlerReadLast => "Handler_read_last",
    HandlerReadNext => "Handler_read_next",
    HandlerReadPrev => "Handler_read_prev",
    HandlerReadRnd => "Handler_read_rnd",
    HandlerReadRndNext => "Handler_read_rnd_next",
    HandlerUpdate => "Handler_update",
    HandlerWrite => "Handler_write",
    InnodbRowsDeleted => "Innodb_rows_deleted",
    InnodbRowsInserted => "Innodb_rows_inserted",
    InnodbRowsRead => "Innodb_rows_read",
    InnodbRowsUpdated => "Innodb_rows_updated",
    Questions => "Questions",
    Queries => "Queries",
    SlowQueries => "Slow_queries",
    TpbedTextPlanCacheHits => "Tpbed_text_plan_cache_hits",
}

/// Number of counters.
pub const COUNTERS: usize = Counter::ALL.len();

/// One session's counters. Only the owning session writes; anyone may read.
#[derive(Debug)]
pub struct SessionCounters {
    values: [AtomicU64; COUNTERS],
}

impl Default for SessionCounters {
    fn default() -> Self {
        SessionCounters {
            values: std::array::from_fn(|_| AtomicU64::new(0)),
        }
    }
}

impl SessionCounters {
    /// Adds `n` to counter `c` (owner only: a load and a store, no locked instruction).
    #[inline]
    pub fn add(&self, c: Counter, n: u64) {
        let slot = &self.values[c as usize];
        slot.store(
            slot.load(Ordering::Relaxed).wrapping_add(n),
            Ordering::Relaxed,
        );
    }

    /// Adds one to counter `c`.
    #[inline]
    pub fn incr(&self, c: Counter) {
        self.add(c, 1);
    }

    /// The current value of `c`.
    pub fn get(&self, c: Counter) -> u64 {
        self.values[c as usize].load(Ordering::Relaxed)
    }

    /// Sets every counter to zero (FLUSH STATUS on the session's own block).
    pub fn reset(&self) {
        for v in &self.values {
            v.store(0, Ordering::Relaxed);
        }
    }
}

/// Totals of counters of sessions that have closed (and FLUSH STATUS resets), shared.
#[derive(Debug)]
pub struct RetiredCounters {
    values: [AtomicU64; COUNTERS],
}

impl Default for RetiredCounters {
    fn default() -> Self {
        RetiredCounters {
            values: std::array::from_fn(|_| AtomicU64::new(0)),
        }
    }
}

impl RetiredCounters {
    /// Folds a closing session's counters into the totals.
    pub fn absorb(&self, s: &SessionCounters) {
        for c in Counter::ALL {
            self.values[*c as usize].fetch_add(s.get(*c), Ordering::Relaxed);
        }
    }

    /// Adds `n` to a counter directly (events outside any session, e.g. aborted connects).
    pub fn add(&self, c: Counter, n: u64) {
        self.values[c as usize].fetch_add(n, Ordering::Relaxed);
    }

    /// The retired total of `c`.
    pub fn get(&self, c: Counter) -> u64 {
        self.values[c as usize].load(Ordering::Relaxed)
    }

    /// Zeroes the retired totals (FLUSH STATUS).
    pub fn reset(&self) {
        for v in &self.values {
            v.store(0, Ordering::Relaxed);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn session_counts_fold_into_retired() {
        let s = SessionCounters::default();
        s.incr(Counter::Questions);
        s.add(Counter::BytesSent, 10);
        let r = RetiredCounters::default();
        r.absorb(&s);
        r.absorb(&s);
        assert_eq!(r.get(Counter::Questions), 2);
        assert_eq!(r.get(Counter::BytesSent), 20);
        assert_eq!(Counter::ComSelect.name(), "Com_select");
    }
}
