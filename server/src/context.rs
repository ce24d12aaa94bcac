//! What a statement runs against: the [`Core`] and its session's statement-facing state —
//! who is logged in, session and user variables, the current database, the open transaction
//! and its savepoints, warnings. `sql` and `exec` take this, never the session or the
//! server; dropping it rolls the open transaction back.

use std::collections::HashMap;
use std::sync::Arc;

use protocol::{Capabilities, StatusFlags};

use crate::accounts::Privileges;
use crate::connections::ConnInfo;
use crate::core::Core;
use crate::vars::{Counter, SessionVars, VarValue};

/// A warning or note for `SHOW WARNINGS`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Warning {
    /// `Warning`, `Note` or `Error`.
    pub level: &'static str,
    /// The MySQL code.
    pub code: u16,
    /// The message.
    pub message: String,
}

/// The diagnostics area: the conditions of the last statement. `SHOW WARNINGS` lists at
/// most `max_error_count` of them (as MySQL keeps), while the counts (the OK packet's
/// warning count, `SHOW COUNT(*) WARNINGS`) include every one raised, so a statement that
/// warns per row holds a bounded list however many rows it writes.
#[derive(Debug, Default)]
pub struct Diagnostics {
    list: Vec<Warning>,
    count: u64,
    errors: u64,
    limit: usize,
    /// The counts of the statement before this one, for `@@warning_count` and
    /// `@@error_count` (the statement reading them starts a diagnostics area of its own).
    previous: (u64, u64),
}

impl Diagnostics {
    /// An empty area keeping at most `limit` conditions.
    pub fn new(limit: usize) -> Diagnostics {
        Diagnostics {
            limit,
            ..Diagnostics::default()
        }
    }

    /// Starts a statement's area, keeping at most `limit` conditions.
    pub fn begin(&mut self, limit: usize) {
        self.previous = (self.count, self.errors);
        self.list.clear();
        (self.count, self.errors, self.limit) = (0, 0, limit);
    }

    /// Keeps the area for a statement that reads its counts (they become the previous
    /// statement's, as `@@warning_count` reads them).
    pub fn keep(&mut self) {
        self.previous = (self.count, self.errors);
    }

    /// Adds a condition (counted always, kept while under the limit).
    pub fn push(&mut self, w: Warning) {
        self.count += 1;
        if w.level == "Error" {
            self.errors += 1;
        }
        if self.list.len() < self.limit {
            self.list.push(w);
        }
    }

    /// Counts `n` warnings their raiser counted but did not keep (it holds a bounded list).
    pub fn add_unkept(&mut self, n: u64) {
        self.count += n;
    }

    /// Adds several conditions.
    pub fn extend(&mut self, ws: impl IntoIterator<Item = Warning>) {
        for w in ws {
            self.push(w);
        }
    }

    /// The kept conditions, in the order they were raised.
    pub fn iter(&self) -> std::slice::Iter<'_, Warning> {
        self.list.iter()
    }

    /// Conditions raised (kept or not).
    pub fn count(&self) -> u64 {
        self.count
    }

    /// Errors raised (kept or not).
    pub fn errors(&self) -> u64 {
        self.errors
    }

    /// The previous statement's (warnings, errors), as `@@warning_count`/`@@error_count`.
    pub fn previous_counts(&self) -> (u64, u64) {
        self.previous
    }
}

/// The `sql_mode` flags statements consult, parsed from the comma-separated variable once
/// per change instead of searched per statement.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct SqlModes {
    /// `NO_BACKSLASH_ESCAPES`: reported in the status flags of OK and EOF packets.
    pub no_backslash_escapes: bool,
    /// `NO_AUTO_VALUE_ON_ZERO`: inserting 0 into an AUTO_INCREMENT column stores 0.
    pub no_auto_value_on_zero: bool,
    /// `ERROR_FOR_DIVISION_BY_ZERO`: a division by zero adds warning 1365 to its NULL.
    pub error_for_division_by_zero: bool,
    /// `STRICT_TRANS_TABLES` or `STRICT_ALL_TABLES` (every table is transactional): a value
    /// too long or out of range for its column is an error; without it, it is cut to fit
    /// with a warning.
    pub strict: bool,
}

impl SqlModes {
    /// The flags set in a `sql_mode` value (names are matched case-insensitively).
    pub fn parse(modes: &str) -> SqlModes {
        let has = |name: &str| {
            modes
                .split(',')
                .any(|m| m.trim().eq_ignore_ascii_case(name))
        };
        SqlModes {
            no_backslash_escapes: has("NO_BACKSLASH_ESCAPES"),
            no_auto_value_on_zero: has("NO_AUTO_VALUE_ON_ZERO"),
            error_for_division_by_zero: has("ERROR_FOR_DIVISION_BY_ZERO"),
            strict: has("STRICT_TRANS_TABLES") || has("STRICT_ALL_TABLES"),
        }
    }
}

/// A new session's variables (the globals' current values) and what is parsed from them.
fn session_vars(core: &Core) -> (SessionVars, SqlModes) {
    let vars = core.vars.session_copy();
    let modes = SqlModes::parse(vars.get(core.ids.sql_mode).as_str());
    (vars, modes)
}

/// A session's statement-facing state and the core it runs against.
#[derive(Debug)]
pub struct Context {
    /// What every session shares.
    pub core: Arc<Core>,
    /// This connection's shared part (processlist, kill flag, counters).
    pub conn: Arc<ConnInfo>,
    /// Session copies of the variables; written through [`Context::set_var`].
    pub vars: SessionVars,
    /// Parsed from the session's `sql_mode` (kept by `set_var`).
    sql_modes: SqlModes,
    /// Capabilities agreed with the client.
    pub caps: Capabilities,
    /// Login user.
    pub user: String,
    /// Host pattern of the matched account (`CURRENT_USER()`).
    pub account_host: String,
    /// The account's privileges at login.
    pub privileges: Privileges,
    /// The current database.
    pub db: Option<String>,
    /// `LAST_INSERT_ID()`.
    pub last_insert_id: u64,
    /// `ROW_COUNT()`: the previous statement's affected rows, or -1 after a result set or an
    /// error.
    pub row_count: i64,
    /// A transaction stays open past the current statement (SERVER_STATUS_IN_TRANS): set by
    /// BEGIN, or by a statement or SAVEPOINT with autocommit off; cleared by COMMIT and
    /// ROLLBACK.
    pub in_transaction: bool,
    /// Warnings of the last statement.
    pub warnings: Diagnostics,
    /// Warnings raised during evaluation, moved into `warnings` when the statement ends.
    pub shared_warnings: std::cell::RefCell<Vec<Warning>>,
    /// The client said CLIENT_INTERACTIVE (`interactive_timeout` applies).
    pub interactive: bool,
    /// Multi-statements are on (CLIENT_MULTI_STATEMENTS or COM_SET_OPTION).
    pub multi_statements: bool,
    /// User variables (`@name`).
    pub user_vars: HashMap<String, crate::value::Value>,
    /// Characteristics `SET TRANSACTION` (no scope) gave the next transaction only.
    pub next_transaction: Vec<(crate::vars::VarId, VarValue)>,
    /// The current transaction (begun by BEGIN, or by a statement; ended by COMMIT,
    /// ROLLBACK, autocommit at statement end, or the connection closing).
    pub trx: std::cell::RefCell<Option<crate::trx::Trx>>,
    /// Savepoints of the current transaction: (name, undo-log position).
    pub savepoints: Vec<(String, usize)>,
    /// The tables `LOCK TABLES` locked (database, table), until `UNLOCK TABLES`.
    pub locked_tables: Option<Vec<(String, String)>>,
    /// The tables whose metadata lock the current transaction holds shared (see
    /// [`crate::exec::metadata_lock`]), released when the transaction ends.
    pub metadata_locks: Vec<Arc<crate::engine::Table>>,
    /// State the table executor keeps for the connection (its shared source columns,
    /// `exec::sources`), made on first use. The core stores it without naming its type, so
    /// it imports nothing from the layers above.
    pub exec_state: std::cell::OnceCell<Box<dyn std::any::Any + Send>>,
}

impl Drop for Context {
    /// A closing connection rolls its transaction back and releases every lock.
    fn drop(&mut self) {
        if let Some(trx) = self.trx.get_mut().take() {
            self.core.trx.rollback(trx);
        }
        self.release_metadata_locks();
    }
}

impl Context {
    /// A fresh state for a connection that has not logged in yet.
    pub fn new(core: Arc<Core>, conn: Arc<ConnInfo>) -> Context {
        let (vars, sql_modes) = session_vars(&core);
        let limit = usize::try_from(vars.get(core.ids.max_error_count).as_int()).unwrap_or(0);
        Context {
            core,
            conn,
            vars,
            sql_modes,
            caps: Capabilities::empty(),
            user: String::new(),
            account_host: String::new(),
            privileges: Privileges::default(),
            db: None,
            last_insert_id: 0,
            row_count: -1,
            in_transaction: false,
            warnings: Diagnostics::new(limit),
            shared_warnings: std::cell::RefCell::default(),
            interactive: false,
            multi_statements: false,
            user_vars: HashMap::new(),
            next_transaction: Vec::new(),
            trx: std::cell::RefCell::new(None),
            savepoints: Vec::new(),
            locked_tables: None,
            metadata_locks: Vec::new(),
            exec_state: std::cell::OnceCell::new(),
        }
    }

    /// Releases the metadata locks the ending transaction held.
    pub fn release_metadata_locks(&mut self) {
        for t in self.metadata_locks.drain(..) {
            t.metadata_lock().release_shared();
        }
    }

    /// The status flags OK and EOF packets carry.
    pub fn status_flags(&self) -> StatusFlags {
        let mut s = StatusFlags::empty();
        if self.autocommit() {
            s |= StatusFlags::AUTOCOMMIT;
        }
        if self.in_transaction {
            s |= StatusFlags::IN_TRANS;
        }
        if self.sql_modes.no_backslash_escapes {
            s |= StatusFlags::NO_BACKSLASH_ESCAPES;
        }
        s
    }

    /// The session's `autocommit`.
    pub fn autocommit(&self) -> bool {
        self.vars.get(self.core.ids.autocommit).as_bool()
    }

    /// The flags of the session's `sql_mode` that statements consult.
    pub fn sql_modes(&self) -> SqlModes {
        self.sql_modes
    }

    /// Sets a session variable (validated by the caller), keeping what is parsed from it in
    /// step: every session-scope write goes through here.
    pub fn set_var(&mut self, id: crate::vars::VarId, v: VarValue) {
        if id == self.core.ids.sql_mode {
            self.sql_modes = SqlModes::parse(v.as_str());
        }
        self.vars.set(id, v);
    }

    /// A session variable by registry id (as an int).
    pub fn var_int(&self, id: crate::vars::VarId) -> i64 {
        self.vars.get(id).as_int()
    }

    /// `max_error_count`: how many conditions a statement's diagnostics area keeps.
    pub fn max_error_count(&self) -> usize {
        usize::try_from(self.var_int(self.core.ids.max_error_count)).unwrap_or(0)
    }

    /// Adds the error a statement ends with to its diagnostics area, as SHOW WARNINGS and
    /// SHOW ERRORS list it.
    pub fn record_error(&mut self, e: &crate::error::SqlError) {
        self.warnings.push(Warning {
            level: "Error",
            code: e.code.code(),
            message: e.message.clone(),
        });
    }

    /// Starts a statement's diagnostics area (every statement but SHOW WARNINGS/ERRORS).
    pub fn begin_diagnostics(&mut self) {
        let limit = self.max_error_count();
        self.warnings.begin(limit);
    }

    /// 1100 when `LOCK TABLES` holds tables and `db.table` is not one of them
    /// (`information_schema` and `performance_schema` are always readable, as in MySQL).
    pub fn check_table_locked(&self, db: &str, table: &str) -> crate::error::SqlResult<()> {
        let system = db.eq_ignore_ascii_case("information_schema")
            || db.eq_ignore_ascii_case("performance_schema");
        match &self.locked_tables {
            Some(locked) if !system && !locked.iter().any(|(d, t)| d == db && t == table) => {
                Err(crate::error::SqlError::new(
                    crate::error::ErrorCode::TableNotLocked,
                    format!("Table '{table}' was not locked with LOCK TABLES"),
                ))
            }
            _ => Ok(()),
        }
    }

    /// The session's `innodb_lock_wait_timeout`.
    pub fn lock_wait_timeout(&self) -> std::time::Duration {
        std::time::Duration::from_secs(self.var_int(self.core.ids.lock_wait_timeout).max(1) as u64)
    }

    /// Counts one event in the session's status counters.
    pub fn count(&self, c: Counter) {
        self.conn.counters.incr(c);
    }

    /// Adds a warning raised where only a shared reference to the session is at hand
    /// (expression evaluation); [`Context::take_shared_warnings`] moves it into
    /// `warnings` when the statement ends.
    pub fn warn_shared(&self, code: u16, message: impl Into<String>) {
        self.shared_warnings.borrow_mut().push(Warning {
            level: "Warning",
            code,
            message: message.into(),
        });
    }

    /// Moves the warnings raised through [`Context::warn_shared`] into `warnings`.
    pub fn take_shared_warnings(&mut self) {
        let w = self.shared_warnings.get_mut();
        if !w.is_empty() {
            self.warnings.extend(w.drain(..));
        }
    }

    /// Adds a warning for SHOW WARNINGS.
    pub fn warn(&mut self, code: u16, message: impl Into<String>) {
        self.warnings.push(Warning {
            level: "Warning",
            code,
            message: message.into(),
        });
    }

    /// COM_RESET_CONNECTION's part of the statement state: variables back to the globals,
    /// transaction ended, LAST_INSERT_ID cleared; the login and database stay.
    pub fn reset(&mut self) {
        (self.vars, self.sql_modes) = session_vars(&self.core);
        self.last_insert_id = 0;
        if let Some(trx) = self.trx.get_mut().take() {
            self.core.trx.rollback(trx);
        }
        self.release_metadata_locks();
        self.savepoints.clear();
        self.in_transaction = false;
        self.warnings = Diagnostics::new(self.max_error_count());
        self.user_vars.clear();
        self.next_transaction.clear();
    }

    /// The session value shown for `@@name` of a boolean or integer variable.
    pub fn var_value(&self, id: crate::vars::VarId) -> &VarValue {
        self.vars.get(id)
    }
}

#[cfg(test)]
mod tests {
    use super::SqlModes;
    use crate::trx::Isolation;

    #[test]
    fn sql_modes_are_parsed_from_the_list() {
        let m = SqlModes::parse(crate::vars::system::DEFAULT_SQL_MODE);
        assert_eq!(
            m,
            SqlModes {
                error_for_division_by_zero: true,
                strict: true,
                ..SqlModes::default()
            }
        );
        let m = SqlModes::parse("STRICT_TRANS_TABLES,no_auto_value_on_zero");
        assert!(m.no_auto_value_on_zero && !m.no_backslash_escapes && m.strict);
        let m = SqlModes::parse("NO_BACKSLASH_ESCAPES");
        assert!(m.no_backslash_escapes && !m.no_auto_value_on_zero && !m.strict);
        assert!(SqlModes::parse("strict_all_tables").strict);
        assert_eq!(SqlModes::parse(""), SqlModes::default());
    }

    #[test]
    fn isolation_names_parse_in_any_case_with_spaces_or_dashes() {
        for (s, want) in [
            ("READ-COMMITTED", Isolation::ReadCommitted),
            ("read committed", Isolation::ReadCommitted),
            ("Read-Uncommitted", Isolation::ReadUncommitted),
            ("serializable", Isolation::Serializable),
            ("REPEATABLE-READ", Isolation::RepeatableRead),
            ("READ-COMMITTE", Isolation::RepeatableRead),
        ] {
            assert_eq!(Isolation::parse(s), want, "{s}");
        }
    }
}

/// Cores and contexts for unit tests: built from the default configuration without starting
/// a server (no listener, no connection handler).
#[cfg(test)]
pub(crate) mod testing {
    use std::sync::Arc;

    use super::Context;
    use crate::accounts::Privileges;
    use crate::connections::ConnInfo;
    use crate::core::Core;

    /// A core with the default configuration.
    pub(crate) fn core() -> Arc<Core> {
        let server = crate::server::Server::from_config(&crate::config::Config::default())
            .expect("the default configuration builds");
        Arc::clone(server.core())
    }

    /// A context logged in as `root` with every privilege, on connection 1.
    pub(crate) fn root(core: &Arc<Core>) -> Context {
        let conn = Arc::new(ConnInfo::new(1, "127.0.0.1".into(), -1));
        core.connections.insert(Arc::clone(&conn));
        let mut st = Context::new(Arc::clone(core), conn);
        st.user = "root".into();
        st.account_host = "localhost".into();
        st.privileges = Privileges::all();
        st
    }
}
