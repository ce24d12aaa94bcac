//! The privilege test of every planned statement, run each time it executes (a prepared
//! statement is checked again at every execution, as MySQL does): table statements by what
//! they name ([`crate::privileges::statement`]), the others by MySQL's rule for each —
//! SHOW CREATE DATABASE some privilege in the database (1044), CREATE/DROP
//! DATABASE CREATE/DROP on it (1044), LOCK TABLES the LOCK TABLES privilege in the database
//! and SELECT on each table, CHECKSUM TABLE SELECT, FLUSH RELOAD (1227), SHOW ENGINE INNODB
//! STATUS PROCESS (1227). Statements with their own test (USE and COM_INIT_DB, SET GLOBAL,
//! KILL, SHUTDOWN, account statements, binary-log SHOWs) make it where they run.

use crate::accounts::PrivSet;
use crate::context::Context;
use crate::error::{ErrorCode, SqlError, SqlResult};
use crate::privileges::access;
use crate::privileges::statement::{check_need, Need};
use crate::stmt::plan::Plan;
use crate::stmt::show::ShowPlan;

/// Checks that the session may run `plan`.
pub fn check(st: &Context, plan: &Plan) -> SqlResult<()> {
    if st
        .privileges
        .global
        .contains(PrivSet::GLOBAL.minus(PrivSet::GRANT_OPTION))
    {
        return Ok(());
    }
    match plan {
        Plan::Table(t) => crate::privileges::statement::check(st, &t.statement),
        // MySQL's `mysqld_show_create_db` names the client's host, not the account's.
        Plan::ShowCreateDatabase(s) if !access::can_see_db(st, &s.name) => Err(SqlError::new(
            ErrorCode::DbAccessDenied,
            format!(
                "Access denied for user '{}'@'{}' to database '{}'",
                st.user,
                access::client_host(st),
                s.name
            ),
        )),
        Plan::CreateDatabase { name, .. } => access::require_db(st, PrivSet::CREATE, name),
        Plan::DropDatabase { name, .. } => access::require_db(st, PrivSet::DROP, name),
        Plan::LockTables(tables) => {
            for t in tables {
                access::require_db(st, PrivSet::LOCK_TABLES, &t.db)?;
                access::require_table(st, PrivSet::SELECT, &t.db, &t.table)?;
            }
            Ok(())
        }
        Plan::ChecksumTable(c) => {
            for (db, table) in &c.tables {
                if let Some(db) = db.as_ref().or(st.db.as_ref()) {
                    access::require_table(st, PrivSet::SELECT, db, table)?;
                }
            }
            Ok(())
        }
        Plan::FlushStatus | Plan::NoOp("FLUSH") => access::require_global(st, PrivSet::RELOAD),
        Plan::Show(ShowPlan::InnodbStatus) => access::require_global(st, PrivSet::PROCESS),
        Plan::Show(ShowPlan::TableStatus { db, .. }) => check_need(st, &Need::ListDb(db.clone())),
        Plan::Show(ShowPlan::Index { db, table }) => match db.as_ref().or(st.db.as_ref()) {
            Some(db) => check_need(
                st,
                &Need::DescribeTable {
                    db: db.clone(),
                    table: table.clone(),
                },
            ),
            None => Ok(()),
        },
        _ => Ok(()),
    }
}
