//! A session's state apart from its socket: the statement [`Context`] (login, variables,
//! database, transaction, warnings) plus what only the command loop uses — the prepared
//! statements. Dropping it rolls the open transaction back (through the context).

use std::ops::{Deref, DerefMut};
use std::sync::Arc;

use crate::connections::ConnInfo;
use crate::context::Context;
use crate::core::Core;
use crate::stmt::PreparedStmt;

/// A prepared statement as the session keeps it.
#[derive(Debug)]
pub struct SessionStmt {
    /// The planned statement (shared so an execute can run it while the session's statement
    /// map stays borrowable: no remove and re-insert per execute).
    pub stmt: Arc<PreparedStmt>,
    /// Parameter types from the last execute that sent them (reused when the client does not
    /// resend types).
    pub param_types: Vec<(protocol::ColumnType, bool)>,
    /// Data collected by COM_STMT_SEND_LONG_DATA, per parameter.
    pub long_data: Vec<Option<Vec<u8>>>,
    /// Long data went past `max_allowed_packet` (or could not be stored): the next execute
    /// fails with this error, as MySQL's, instead of the data growing without bound.
    pub long_data_error: Option<crate::error::SqlError>,
    /// Its statement digest, computed at prepare time (None with performance_schema off).
    pub digest: Option<Arc<crate::digest::Prepared>>,
}

/// Everything a session knows except its socket.
#[derive(Debug)]
pub struct SessionState {
    /// What statements run against.
    pub ctx: Context,
    /// Prepared statements by id (looked up by every execute, so a fast hash).
    pub statements: foldhash::HashMap<u32, SessionStmt>,
    /// The next statement id.
    pub next_stmt_id: u32,
}

impl Deref for SessionState {
    type Target = Context;

    fn deref(&self) -> &Context {
        &self.ctx
    }
}

impl DerefMut for SessionState {
    fn deref_mut(&mut self) -> &mut Context {
        &mut self.ctx
    }
}

impl SessionState {
    /// A fresh state for a connection that has not logged in yet.
    pub fn new(core: Arc<Core>, conn: Arc<ConnInfo>) -> SessionState {
        SessionState {
            ctx: Context::new(core, conn),
            statements: foldhash::HashMap::default(),
            next_stmt_id: 1,
        }
    }

    /// Drops every prepared statement (COM_RESET_CONNECTION, disconnect).
    pub fn close_all_statements(&mut self) {
        let n = self.statements.len() as i64;
        self.statements.clear();
        self.ctx
            .core
            .prepared_stmt_count
            .fetch_sub(n, std::sync::atomic::Ordering::Relaxed);
    }

    /// COM_RESET_CONNECTION: variables back to the globals, statements closed, transaction
    /// ended, LAST_INSERT_ID cleared; the login and database stay.
    pub fn reset(&mut self) {
        self.close_all_statements();
        self.ctx.reset();
    }
}
