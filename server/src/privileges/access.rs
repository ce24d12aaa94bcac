//! The session's access test, level by level as MySQL's `check_access` and
//! `check_grant` do: a privilege held globally covers every database, one held on a
//! database covers its tables. Global privileges are the session's copy taken at login
//! (MySQL: "Global privileges and passwords are unaffected for a connected client");
//! database and table grants are read as they are now, so a GRANT or REVOKE on them takes
//! effect at another session's next statement.
//!
//! The system schemas follow MySQL's internal-schema rules: information_schema is readable
//! by every account (its rows filtered, see [`super::visibility`]) except the `INNODB_*`
//! tables, which need PROCESS. performance_schema tables need a SELECT grant like any table:
//! MySQL makes only its variable and status tables world-readable (`pfs_readonly_world_acl`
//! in its performance_schema sources), and tpbed has none of those.

use crate::accounts::PrivSet;
use crate::context::Context;
use crate::error::{ErrorCode, SqlError, SqlResult};

/// What the schema a table is in decides before any grant is read.
enum Schema {
    /// information_schema: SELECT by anyone; `INNODB_*` needs PROCESS.
    Information,
    /// Any other database, `mysql` included: grants alone decide.
    Other,
}

fn schema(db: &str) -> Schema {
    if db.eq_ignore_ascii_case("information_schema") {
        Schema::Information
    } else {
        Schema::Other
    }
}

/// The static privileges the session holds on database `db` (global and database level).
pub fn db_privileges(st: &Context, db: &str) -> PrivSet {
    let global = st.privileges.global;
    if global.contains(PrivSet::GLOBAL.minus(PrivSet::GRANT_OPTION)) {
        return global;
    }
    st.core
        .accounts
        .with_grants(&st.user, &st.account_host, |g| {
            g.map_or(PrivSet::empty(), |g| g.db(db))
        })
        .union(global)
}

/// The static privileges the session holds on `db.table` (global, database and table level).
pub fn table_privileges(st: &Context, db: &str, table: &str) -> PrivSet {
    let global = st.privileges.global;
    if global.contains(PrivSet::GLOBAL.minus(PrivSet::GRANT_OPTION)) {
        return global;
    }
    st.core
        .accounts
        .with_grants(&st.user, &st.account_host, |g| {
            g.map_or(PrivSet::empty(), |g| g.db(db).union(g.table(db, table)))
        })
        .union(global)
}

/// Whether the session may see database `db` at all (SHOW DATABASES, USE): some privilege
/// on it or on one of its tables, or a global one, or SHOW DATABASES; information_schema
/// always.
pub fn can_see_db(st: &Context, db: &str) -> bool {
    if matches!(schema(db), Schema::Information) {
        return true;
    }
    let global = st.privileges.global;
    if global.intersects(PrivSet::DB.union(PrivSet::SHOW_DATABASES)) {
        return true;
    }
    st.core
        .accounts
        .with_grants(&st.user, &st.account_host, |g| {
            g.is_some_and(|g| !g.db(db).is_empty() || g.any_table_in(db))
        })
}

/// Whether the session holds some privilege on `db.table` (what SHOW TABLES, SHOW COLUMNS
/// and information_schema.TABLES ask).
pub fn can_see_table(st: &Context, db: &str, table: &str) -> bool {
    match schema(db) {
        Schema::Information => true,
        _ => table_privileges(st, db, table).intersects(PrivSet::TABLE),
    }
}

/// Whether the session may describe `db.table`'s columns and indexes (SHOW COLUMNS,
/// DESCRIBE, SHOW INDEX): SELECT held globally or on the database, or any privilege granted
/// on the table itself. MySQL's `check_grant` with "any combination will do" counts every
/// table-level grant but, of the global and database privileges, only the SELECT asked for.
pub fn can_describe_table(st: &Context, db: &str, table: &str) -> bool {
    if matches!(schema(db), Schema::Information) || db_privileges(st, db).contains(PrivSet::SELECT)
    {
        return true;
    }
    st.core
        .accounts
        .with_grants(&st.user, &st.account_host, |g| {
            g.is_some_and(|g| g.table(db, table).intersects(PrivSet::TABLE))
        })
}

/// The client's host as MySQL's `host_or_ip` names it in 1142 and 1143: `localhost` for a
/// loopback address (which MySQL resolves to it), else the address.
pub fn client_host(st: &Context) -> &str {
    match st.conn.host.as_str() {
        "127.0.0.1" | "::1" => "localhost",
        h => h,
    }
}

/// 1142: `command` denied on `table`, with the client's host as MySQL words it.
pub fn table_denied(st: &Context, command: &str, table: &str) -> SqlError {
    SqlError::new(
        ErrorCode::TableAccessDenied,
        format!(
            "{command} command denied to user '{}'@'{}' for table '{table}'",
            st.user,
            client_host(st)
        ),
    )
}

/// 1143: `command` denied on a column.
pub fn column_denied(st: &Context, command: &str, column: &str, table: &str) -> SqlError {
    SqlError::new(
        ErrorCode::ColumnAccessDenied,
        format!(
            "{command} command denied to user '{}'@'{}' for column '{column}' in table '{table}'",
            st.user,
            client_host(st)
        ),
    )
}

/// 1045 for the session's account, as MySQL answers a missing global privilege that only a
/// login-level check knows (FILE; GRANT of global privileges).
pub fn account_denied(st: &Context) -> SqlError {
    let using = match st.core.accounts.get(&st.user, &st.account_host) {
        Some(a) if !a.empty_password => "YES",
        _ => "NO",
    };
    SqlError::new(
        ErrorCode::AccessDenied,
        format!(
            "Access denied for user '{}'@'{}' (using password: {using})",
            st.user, st.account_host
        ),
    )
}

/// 1044: no access to database `db`, with the account's host as MySQL words it.
pub fn db_denied(st: &Context, db: &str) -> SqlError {
    SqlError::new(
        ErrorCode::DbAccessDenied,
        format!(
            "Access denied for user '{}'@'{}' to database '{db}'",
            st.user, st.account_host
        ),
    )
}

/// Requires every privilege of `need` on `db.table` (1142 naming the first one missing).
pub fn require_table(st: &Context, need: PrivSet, db: &str, table: &str) -> SqlResult<()> {
    match schema(db) {
        Schema::Information => {
            if need.minus(PrivSet::SELECT).is_empty() {
                if table
                    .get(..7)
                    .is_some_and(|p| p.eq_ignore_ascii_case("INNODB_"))
                {
                    return require_global(st, PrivSet::PROCESS);
                }
                return Ok(());
            }
            // MySQL refuses any change to information_schema as to a database.
            return Err(db_denied(st, db));
        }
        Schema::Other => {}
    }
    let missing = need.minus(table_privileges(st, db, table));
    if missing.is_empty() {
        Ok(())
    } else {
        Err(table_denied(st, &missing.command_desc(), table))
    }
}

/// Requires every privilege of `need` on database `db` (1044).
pub fn require_db(st: &Context, need: PrivSet, db: &str) -> SqlResult<()> {
    if matches!(schema(db), Schema::Information) || !need.minus(db_privileges(st, db)).is_empty() {
        return Err(db_denied(st, db));
    }
    Ok(())
}

/// The account statements' test (CREATE USER, DROP USER, RENAME USER, ALTER USER of
/// another account, REVOKE ALL): the global CREATE USER privilege, or `on_mysql` (INSERT,
/// DELETE or UPDATE, by the statement) held globally or on the `mysql` schema, as each of
/// those statements' pages in MySQL's manual states; 1227 naming CREATE USER otherwise.
pub fn require_account_admin(st: &Context, on_mysql: PrivSet) -> SqlResult<()> {
    if st.privileges.global.contains(PrivSet::CREATE_USER)
        || db_privileges(st, "mysql").contains(on_mysql)
    {
        Ok(())
    } else {
        Err(SqlError::need_privilege(PrivSet::CREATE_USER.first_name()))
    }
}

/// Requires the global privilege `need` (1227 naming it).
pub fn require_global(st: &Context, need: PrivSet) -> SqlResult<()> {
    if st.privileges.global.contains(need) {
        Ok(())
    } else {
        Err(SqlError::need_privilege(need.first_name()))
    }
}
