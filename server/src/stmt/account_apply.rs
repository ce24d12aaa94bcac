//! Runs the account statements [`super::account_stmts`] parses, with MySQL's privilege
//! requirements and errors:
//!
//! - GRANT/REVOKE: GRANT OPTION and every privilege granted, at the level granted or above;
//!   else 1045 for `*.*` (naming the account's host, as MariaDB 10.11 words it), 1044 for
//!   `db.*`, 1142 naming what is missing for a table.
//! - RENAME USER, ALTER USER of another account, `REVOKE ALL PRIVILEGES, GRANT OPTION`:
//!   CREATE USER, or UPDATE on the `mysql` schema (1227 naming CREATE USER).
//! - SET PASSWORD FOR another account: UPDATE on the `mysql` schema (1044 on `mysql`; CREATE
//!   USER is not enough, as MySQL's `check_change_password` tests).
//! - SHOW GRANTS FOR / SHOW CREATE USER of another account: SELECT on the `mysql` schema
//!   (1044 on `mysql`, MySQL's `check_access` on that schema).

use crate::accounts::{AuthPlugin, GrantLevel, PrivSet, Privilege};
use crate::context::Context;
use crate::error::{ErrorCode, SqlError, SqlResult};
use crate::privileges::{access, show_grants};
use crate::sql::output::{Output, ResultSet};
use crate::stmt::account_stmts::{resolve_level, AccountName, AccountStmt};
use crate::value::Value;
use crate::vars::Counter;

/// Runs an account statement.
pub fn execute(st: &mut Context, s: &AccountStmt) -> SqlResult<Output> {
    match s {
        AccountStmt::Grant {
            privileges,
            level,
            users,
            grant_option,
        } => {
            st.count(Counter::ComGrant);
            let level = resolve_level(level, st.db.as_deref())?;
            crate::accounts::grants::validate(privileges, &level)?;
            may_grant(st, privileges, &level, *grant_option)?;
            table_exists(st, &level)?;
            let grantor = format!("{}@{}", st.user, st.account_host);
            for (u, h) in users {
                st.core
                    .accounts
                    .grant(u, h, privileges, &level, *grant_option, &grantor)?;
            }
            Ok(Output::ok())
        }
        AccountStmt::Revoke {
            privileges,
            level,
            users,
            all_levels,
        } => {
            st.count(Counter::ComRevoke);
            if *all_levels {
                access::require_account_admin(st, PrivSet::UPDATE)?;
                for (u, h) in users {
                    if !st.core.accounts.clear_grants(u, h) {
                        return Err(SqlError::new(
                            ErrorCode::NonexistingGrant,
                            format!("There is no such grant defined for user '{u}' on host '{h}'"),
                        ));
                    }
                }
                return Ok(Output::ok());
            }
            let level = resolve_level(level, st.db.as_deref())?;
            crate::accounts::grants::validate(privileges, &level)?;
            may_grant(st, privileges, &level, false)?;
            for (u, h) in users {
                st.core.accounts.revoke(u, h, privileges, &level)?;
            }
            Ok(Output::ok())
        }
        AccountStmt::Rename(pairs) => {
            st.count(Counter::ComRenameUser);
            access::require_account_admin(st, PrivSet::UPDATE)?;
            for ((fu, fh), (tu, th)) in pairs {
                st.core.accounts.rename((fu, fh), (tu, th))?;
            }
            Ok(Output::ok())
        }
        AccountStmt::AlterPassword { users, if_exists } => {
            st.count(Counter::ComAlterUser);
            alter_passwords(st, users, *if_exists)
        }
        AccountStmt::SetPassword { user, password } => {
            st.count(Counter::ComSetPassword);
            let (u, h) = target(st, user.as_ref());
            if !is_self(st, &u, &h) {
                access::require_db(st, PrivSet::UPDATE, "mysql")?;
            }
            if !st.core.accounts.set_password(&u, &h, password, None) {
                return Err(SqlError::new(
                    ErrorCode::PasswordNoMatch,
                    "Can't find any matching row in the user table",
                ));
            }
            Ok(Output::ok())
        }
        AccountStmt::ShowGrants(user) => {
            st.count(Counter::ComShowGrants);
            show_grants_of(st, user.as_ref())
        }
        AccountStmt::ShowCreateUser(user) => {
            st.count(Counter::ComShowCreateUser);
            let (u, h) = target(st, user.as_ref());
            may_read_accounts(st, &u, &h)?;
            let a = st.core.accounts.get(&u, &h).ok_or_else(|| {
                SqlError::new(
                    ErrorCode::CannotUser,
                    format!("Operation SHOW CREATE USER failed for '{u}'@'{h}'"),
                )
            })?;
            let header = format!("CREATE USER for {u}@{h}");
            Ok(Output::Rows(ResultSet::text(
                &[header.as_str()],
                vec![vec![Value::str(&show_grants::create_user(&a))]],
            )))
        }
    }
}

/// The account a statement names, or the session's own.
fn target(st: &Context, user: Option<&AccountName>) -> AccountName {
    user.cloned()
        .unwrap_or_else(|| (st.user.clone(), st.account_host.clone()))
}

fn is_self(st: &Context, user: &str, host: &str) -> bool {
    user == st.user && host.eq_ignore_ascii_case(&st.account_host)
}

/// Another account's grants and definition are readable with SELECT on the `mysql` schema
/// (held globally or on the schema; a grant on `mysql.user` alone is not enough); the
/// session's own always.
fn may_read_accounts(st: &Context, user: &str, host: &str) -> SqlResult<()> {
    if is_self(st, user, host) {
        return Ok(());
    }
    access::require_db(st, PrivSet::SELECT, "mysql")
}

fn show_grants_of(st: &Context, user: Option<&AccountName>) -> SqlResult<Output> {
    let (u, h) = target(st, user);
    may_read_accounts(st, &u, &h)?;
    let a = st.core.accounts.get(&u, &h).ok_or_else(|| {
        SqlError::new(
            ErrorCode::NonexistingGrant,
            format!("There is no such grant defined for user '{u}' on host '{h}'"),
        )
    })?;
    let header = format!("Grants for {}@{}", a.user, a.host);
    let rows = show_grants::grant_lines(&a.user, &a.host, &a.grants)
        .into_iter()
        .map(|l| vec![Value::from_string(l)])
        .collect();
    Ok(Output::Rows(ResultSet::text(&[header.as_str()], rows)))
}

fn alter_passwords(
    st: &mut Context,
    users: &[(Option<AccountName>, String, Option<AuthPlugin>)],
    if_exists: bool,
) -> SqlResult<Output> {
    for (user, _, _) in users {
        let (u, h) = target(st, user.as_ref());
        if !is_self(st, &u, &h) {
            access::require_account_admin(st, PrivSet::UPDATE)?;
        }
    }
    for (user, password, plugin) in users {
        let (u, h) = target(st, user.as_ref());
        if !st.core.accounts.set_password(&u, &h, password, *plugin) {
            if if_exists {
                st.warn(
                    3162,
                    format!("Authorization ID '{u}'@'{h}' does not exist."),
                );
                continue;
            }
            return Err(SqlError::new(
                ErrorCode::CannotUser,
                format!("Operation ALTER USER failed for '{u}'@'{h}'"),
            ));
        }
    }
    Ok(Output::ok())
}

/// The static privileges a GRANT names at `level` (ALL: the level's whole set).
fn named_set(privileges: &[Privilege], level: &GrantLevel) -> PrivSet {
    let all = match level {
        GrantLevel::Global => PrivSet::GLOBAL,
        GrantLevel::Db(_) => PrivSet::DB,
        GrantLevel::Table(..) => PrivSet::TABLE,
    }
    .minus(PrivSet::GRANT_OPTION);
    privileges.iter().fold(PrivSet::empty(), |acc, p| match p {
        Privilege::All => acc.union(all),
        Privilege::Static(s) => acc.union(*s),
        _ => acc,
    })
}

/// The grantor holds GRANT OPTION and every privilege it grants (or revokes) at `level`.
fn may_grant(
    st: &Context,
    privileges: &[Privilege],
    level: &GrantLevel,
    grant_option: bool,
) -> SqlResult<()> {
    let mut need = named_set(privileges, level).union(PrivSet::GRANT_OPTION);
    if grant_option {
        need = need.union(PrivSet::GRANT_OPTION);
    }
    match level {
        GrantLevel::Global => {
            // An account with every static privilege may grant every dynamic one: MySQL's
            // root holds them all, tpbed's root all but TP_CONNECTION_ADMIN (so that its
            // connections stay in the pool's normal groups), which it must still grant.
            let everything = st.privileges.global.contains(PrivSet::GLOBAL);
            let dynamic_ok = everything
                || privileges
                    .iter()
                    .filter(|p| p.is_dynamic())
                    .all(|p| st.privileges.has(*p));
            if st.privileges.global.contains(need) && dynamic_ok {
                return Ok(());
            }
            Err(access::account_denied(st))
        }
        GrantLevel::Db(db) => access::require_db(st, need, db),
        GrantLevel::Table(db, table) => {
            if access::table_privileges(st, db, table).contains(need) {
                Ok(())
            } else {
                let missing = need.minus(access::table_privileges(st, db, table));
                Err(access::table_denied(st, &missing.command_desc(), table))
            }
        }
    }
}

/// A table-level GRANT names a table that exists (1146 otherwise), as MySQL requires.
fn table_exists(st: &Context, level: &GrantLevel) -> SqlResult<()> {
    let GrantLevel::Table(db, table) = level else {
        return Ok(());
    };
    let base = st.core.catalog.engine.table(db, table).is_ok();
    if base || crate::introspection::vtables::lookup(st.core.as_ref(), db, table).is_some() {
        return Ok(());
    }
    Err(SqlError::new(
        ErrorCode::NoSuchTable,
        format!("Table '{db}.{table}' doesn't exist"),
    ))
}
