//! Account, database and connection administration: USE, CREATE/DROP DATABASE,
//! CREATE/DROP USER, KILL.

use crate::accounts::{AuthPlugin, PrivSet, Privilege};
use crate::connections::{KILL_CONNECTION, KILL_QUERY};
use crate::context::Context;
use crate::core::SYSTEM_DATABASES;
use crate::error::{ErrorCode, SqlError, SqlResult};
use crate::sql::env::StmtEnv;
use crate::sql::eval::{eval, to_i64};
use crate::sql::expr::BoundExpr;
use crate::sql::output::Output;
use crate::value::Value;
use crate::vars::{Counter, VarValue};

/// `USE db` and COM_INIT_DB.
pub fn use_db(st: &mut Context, db: &str) -> SqlResult<Output> {
    st.count(Counter::ComChangeDb);
    // Privileges first (1044), as MySQL checks them before the database's existence.
    if !crate::privileges::access::can_see_db(st, db) {
        return Err(crate::privileges::access::db_denied(st, db));
    }
    if !st.core.database_exists(db) {
        return Err(crate::error::unknown_db(db));
    }
    st.db = Some(db.to_string());
    st.conn.login.lock().unwrap_or_else(|e| e.into_inner()).db = Some(db.to_string());
    database_defaults(st, db);
    Ok(Output::ok())
}

/// Sets `character_set_database` and `collation_database` to the default database's, as
/// MySQL does when a session changes its default database.
pub fn database_defaults(st: &mut Context, db: &str) {
    let collation = crate::introspection::describe::database_collation(&st.core.catalog.engine, db);
    let charset = crate::sql::collations::charset_of(&collation).to_string();
    for (name, value) in [
        ("character_set_database", charset),
        ("collation_database", collation),
    ] {
        if let Ok(id) = st.core.vars.require(name) {
            st.set_var(id, VarValue::Str(value));
        }
    }
}

/// `CREATE SCHEMA name <options>` as the CREATE DATABASE it is a synonym of, for the forms
/// with options sqlparser reads only after DATABASE (None for any other statement).
pub fn create_schema_as_database(sql: &str) -> Option<String> {
    let rest = sql.trim_start();
    let after_create = rest.get(..6).filter(|w| w.eq_ignore_ascii_case("CREATE"))?;
    let tail = rest[after_create.len()..].trim_start();
    let word = tail.get(..6).filter(|w| w.eq_ignore_ascii_case("SCHEMA"))?;
    let after = &tail[word.len()..];
    after
        .starts_with(char::is_whitespace)
        .then(|| format!("CREATE DATABASE{after}"))
}

/// `CREATE DATABASE|SCHEMA ... [DEFAULT] ENCRYPTION [=] 'N'` without that clause, which
/// sqlparser does not read and MySQL 8.0 prints in SHOW CREATE DATABASE (so every dump of a
/// whole database carries it); None for other statements and for `'Y'`, which stays a syntax
/// error since tpbed has no keyring.
pub fn database_without_encryption(sql: &str) -> Option<String> {
    use crate::stmt::tokens::is_keyword;
    use sqlparser::dialect::MySqlDialect;
    use sqlparser::tokenizer::{Token, Tokenizer};
    let tokens = Tokenizer::new(&MySqlDialect {}, sql).tokenize().ok()?;
    // The significant tokens, by their index in `tokens` (whitespace is kept for the rebuild).
    let sig: Vec<usize> = (0..tokens.len())
        .filter(|&i| !matches!(tokens[i], Token::Whitespace(_)))
        .collect();
    let kw = |k: usize, words: &[&str]| {
        sig.get(k)
            .is_some_and(|&i| words.iter().any(|w| is_keyword(&tokens[i], w)))
    };
    if !kw(0, &["CREATE"]) || !kw(1, &["DATABASE", "SCHEMA"]) {
        return None;
    }
    let at = (2..sig.len()).find(|&k| kw(k, &["ENCRYPTION"]))?;
    let start = if kw(at - 1, &["DEFAULT"]) { at - 1 } else { at };
    let mut value = at + 1;
    if sig.get(value).is_some_and(|&i| tokens[i] == Token::Eq) {
        value += 1;
    }
    let end = *sig.get(value)?;
    match &tokens[end] {
        Token::SingleQuotedString(v) | Token::DoubleQuotedString(v)
            if v.eq_ignore_ascii_case("n") => {}
        _ => return None,
    }
    let kept = tokens[..sig[start]].iter().chain(&tokens[end + 1..]);
    Some(kept.map(ToString::to_string).collect())
}

/// `CREATE DATABASE [IF NOT EXISTS]`.
pub fn create_database(
    st: &mut Context,
    name: &str,
    collation: Option<&str>,
    if_not_exists: bool,
) -> SqlResult<Output> {
    st.count(Counter::ComCreateDb);
    if st.core.database_exists(name) {
        if if_not_exists {
            st.warn(
                1007,
                format!("Can't create database '{name}'; database exists"),
            );
            return Ok(Output::ok());
        }
        return Err(SqlError::new(
            ErrorCode::DbCreateExists,
            format!("Can't create database '{name}'; database exists"),
        ));
    }
    st.core.catalog.create_database(name, collation)?;
    Ok(Output::affected(1))
}

/// `DROP DATABASE [IF EXISTS]`.
pub fn drop_database(st: &mut Context, name: &str, if_exists: bool) -> SqlResult<Output> {
    st.count(Counter::ComDropDb);
    if SYSTEM_DATABASES.contains(&name.to_ascii_lowercase().as_str()) {
        return Err(SqlError::new(
            ErrorCode::DbAccessDenied,
            format!(
                "Access denied for user '{}'@'{}' to database '{name}'",
                st.user, st.account_host
            ),
        ));
    }
    let removed = st.core.catalog.drop_database(name);
    if !removed {
        if if_exists {
            st.warn(
                1008,
                format!("Can't drop database '{name}'; database doesn't exist"),
            );
            return Ok(Output::ok());
        }
        return Err(SqlError::new(
            ErrorCode::DbDropExists,
            format!("Can't drop database '{name}'; database doesn't exist"),
        ));
    }
    if st.db.as_deref() == Some(name) {
        st.db = None;
    }
    Ok(Output::ok())
}

/// `CREATE USER`.
pub fn create_users(
    st: &mut Context,
    users: &[(String, String, String, AuthPlugin)],
    if_not_exists: bool,
) -> SqlResult<Output> {
    st.count(Counter::ComCreateUser);
    crate::privileges::access::require_account_admin(st, PrivSet::INSERT)?;
    for (u, h, p, plugin) in users {
        st.core.accounts.create(u, h, p, *plugin, if_not_exists)?;
    }
    Ok(Output::ok())
}

/// `DROP USER`.
pub fn drop_users(
    st: &mut Context,
    users: &[(String, String)],
    if_exists: bool,
) -> SqlResult<Output> {
    st.count(Counter::ComDropUser);
    crate::privileges::access::require_account_admin(st, PrivSet::DELETE)?;
    for (u, h) in users {
        st.core.accounts.drop_user(u, h, if_exists)?;
    }
    Ok(Output::ok())
}

/// `KILL [QUERY|CONNECTION] id` and COM_PROCESS_KILL.
pub fn kill(st: &mut Context, id: &BoundExpr, query: bool, params: &[Value]) -> SqlResult<Output> {
    st.count(Counter::ComKill);
    let env = StmtEnv::new(st, params);
    let id = to_i64(&eval(id, &env)?).unwrap_or(0);
    kill_id(st, id, query)?;
    Ok(Output::ok())
}

/// `SHUTDOWN`: with the SHUTDOWN privilege, asks the server to shut down gracefully (the
/// client gets its OK first; `main` does the rest).
pub fn shutdown(st: &mut Context) -> SqlResult<Output> {
    if !st.privileges.has(Privilege::SHUTDOWN) {
        return Err(SqlError::need_privilege("SHUTDOWN"));
    }
    st.core
        .shutdown
        .request(crate::core::Reason::Statement(st.user.clone()));
    Ok(Output::ok())
}

/// Kills connection `id` (or its running statement) if `st` may.
pub fn kill_id(st: &Context, id: i64, query: bool) -> SqlResult<()> {
    let no_such = || SqlError::new(ErrorCode::NoSuchThread, format!("Unknown thread id: {id}"));
    let target = u32::try_from(id)
        .ok()
        .and_then(|i| st.core.connections.get(i))
        .ok_or_else(no_such)?;
    let owner = target
        .login
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .user
        .clone();
    if owner != st.user && !st.privileges.connection_admin() {
        return Err(SqlError::new(
            ErrorCode::KillDenied,
            format!("You are not owner of thread {id}"),
        ));
    }
    target.kill(if query { KILL_QUERY } else { KILL_CONNECTION });
    // A statement waiting for a row lock ends now with 1317.
    st.core.trx.interrupt_connection(u64::from(target.id));
    Ok(())
}
