//! Account statements: `GRANT` and `REVOKE` at the global, database and table levels,
//! `RENAME USER`, `ALTER USER ... IDENTIFIED BY`, `SET PASSWORD`, `SHOW GRANTS` and
//! `SHOW CREATE USER`, parsed from tokens and run with MySQL's privilege requirements: the
//! grantor holds GRANT OPTION and what it grants at that level; account management needs
//! CREATE USER; another account's grants or definition need SELECT on `mysql`.

use sqlparser::tokenizer::Token;

use crate::accounts::{AuthPlugin, GrantLevel, PrivSet, Privilege};
use crate::error::{ErrorCode, SqlError, SqlResult};
use crate::stmt::extra_parse::Toks;
use crate::stmt::plan::{Plan, PreparedStmt};

/// `user@host`; None stands for the session's own account.
pub type AccountName = (String, String);

/// An account statement.
#[derive(Debug, Clone)]
pub enum AccountStmt {
    /// `GRANT privileges ON level TO accounts [WITH GRANT OPTION]`.
    Grant {
        /// Privileges.
        privileges: Vec<Privilege>,
        /// Level.
        level: LevelName,
        /// Accounts.
        users: Vec<AccountName>,
        /// WITH GRANT OPTION.
        grant_option: bool,
    },
    /// `REVOKE privileges ON level FROM accounts`, or with `all_levels` the
    /// `REVOKE ALL PRIVILEGES, GRANT OPTION FROM accounts` form.
    Revoke {
        /// Privileges.
        privileges: Vec<Privilege>,
        /// Level.
        level: LevelName,
        /// Accounts.
        users: Vec<AccountName>,
        /// Every privilege at every level.
        all_levels: bool,
    },
    /// `RENAME USER a TO b, ...`.
    Rename(Vec<(AccountName, AccountName)>),
    /// `ALTER USER [IF EXISTS] account IDENTIFIED [WITH plugin] BY 'password', ...`.
    AlterPassword {
        /// (account or None for USER(), password, plugin named).
        users: Vec<(Option<AccountName>, String, Option<AuthPlugin>)>,
        /// IF EXISTS.
        if_exists: bool,
    },
    /// `SET PASSWORD [FOR account] = 'password'`.
    SetPassword {
        /// The account, None for the session's own.
        user: Option<AccountName>,
        /// The new password.
        password: String,
    },
    /// `SHOW GRANTS [FOR account]`.
    ShowGrants(Option<AccountName>),
    /// `SHOW CREATE USER account`.
    ShowCreateUser(Option<AccountName>),
}

fn stmt(s: AccountStmt) -> PreparedStmt {
    PreparedStmt {
        plan: Plan::Account(s),
        params: 0,
        columns: Vec::new(),
    }
}

/// Plans an account statement; `Ok(None)` for any other statement.
pub fn try_plan(sql: &str) -> SqlResult<Option<PreparedStmt>> {
    if !crate::stmt::tokens::begins_with_any(
        sql,
        &["GRANT", "REVOKE", "RENAME", "ALTER", "SET", "SHOW"],
    ) {
        return Ok(None);
    }
    let Some(mut t) = Toks::new(sql) else {
        return Ok(None);
    };
    let s = if t.eat("GRANT") {
        grant(&mut t)?
    } else if t.eat("REVOKE") {
        revoke(&mut t)?
    } else if t.eat_seq(&["RENAME", "USER"]) {
        rename(&mut t)?
    } else if t.eat_seq(&["ALTER", "USER"]) {
        alter_user(&mut t)?
    } else if t.eat_seq(&["SET", "PASSWORD"]) {
        let user = if t.eat("FOR") { own_or(&mut t)? } else { None };
        if !matches!(t.next(), Some(Token::Eq)) {
            t.i -= 1;
            return Err(t.err());
        }
        AccountStmt::SetPassword {
            user,
            password: t.string()?,
        }
    } else if t.eat_seq(&["SHOW", "GRANTS"]) {
        let user = if t.eat("FOR") { own_or(&mut t)? } else { None };
        if t.eat("USING") {
            return Err(SqlError::unsupported("SHOW GRANTS ... USING (roles)"));
        }
        AccountStmt::ShowGrants(user)
    } else if t.eat_seq(&["SHOW", "CREATE", "USER"]) {
        AccountStmt::ShowCreateUser(own_or(&mut t)?)
    } else {
        return Ok(None);
    };
    if !t.done() {
        return Err(t.err());
    }
    Ok(Some(stmt(s)))
}

/// An account, or `CURRENT_USER[()]` / `USER()` (None: the session's own).
fn own_or(t: &mut Toks) -> SqlResult<Option<AccountName>> {
    if t.eat("CURRENT_USER") || t.eat("USER") {
        if matches!(t.peek(), Some(Token::LParen)) {
            t.i += 1;
            if !matches!(t.next(), Some(Token::RParen)) {
                t.i -= 1;
                return Err(t.err());
            }
        }
        return Ok(None);
    }
    t.account().map(Some)
}

/// A privilege list up to ON; `(privileges, grant option named)`.
fn privilege_list(t: &mut Toks) -> SqlResult<(Vec<Privilege>, bool)> {
    let mut privileges = Vec::new();
    let mut option = false;
    loop {
        let mut words = Vec::new();
        while let Some(w) = t.word() {
            if w == "ON" || (w == "FROM" && !words.is_empty()) {
                break;
            }
            words.push(w);
            t.i += 1;
            if matches!(t.peek(), Some(Token::Comma) | Some(Token::LParen)) {
                break;
            }
        }
        if matches!(t.peek(), Some(Token::LParen)) {
            return Err(SqlError::unsupported("column privileges"));
        }
        let name = words.join(" ");
        if name == "GRANT OPTION" {
            option = true;
        } else {
            let p = Privilege::from_name(&name).ok_or_else(|| SqlError::parse(&name))?;
            privileges.push(p);
        }
        if matches!(t.peek(), Some(Token::Comma)) {
            t.i += 1;
            continue;
        }
        break;
    }
    Ok((privileges, option))
}

/// `*.*`, `*`, `db.*`, `db.table` or `table` after ON [TABLE].
fn level(t: &mut Toks) -> SqlResult<LevelName> {
    t.eat("TABLE");
    let part = |t: &mut Toks| -> SqlResult<Option<String>> {
        match t.next() {
            Some(Token::Mul) => Ok(None),
            Some(Token::Word(w)) => Ok(Some(w.value)),
            _ => {
                t.i -= 1;
                Err(t.err())
            }
        }
    };
    let first = part(t)?;
    if matches!(t.peek(), Some(Token::Period)) {
        t.i += 1;
        let second = part(t)?;
        return match (first, second) {
            (None, None) => Ok(LevelName::Global),
            (Some(db), None) => Ok(LevelName::Db(Some(db))),
            (Some(db), Some(table)) => Ok(LevelName::Table(Some(db), table)),
            (None, Some(_)) => Err(t.err()),
        };
    }
    Ok(match first {
        None => LevelName::Db(None),
        Some(table) => LevelName::Table(None, table),
    })
}

/// A level as written: a missing database is the current one when the statement runs.
#[derive(Debug, Clone)]
pub enum LevelName {
    /// `*.*`.
    Global,
    /// `db.*`, or `*` (the current database).
    Db(Option<String>),
    /// `db.table`, or `table` (in the current database).
    Table(Option<String>, String),
}

fn users(t: &mut Toks) -> SqlResult<Vec<AccountName>> {
    let mut users = vec![t.account()?];
    while matches!(t.peek(), Some(Token::Comma)) {
        t.i += 1;
        users.push(t.account()?);
    }
    Ok(users)
}

/// The level as a [`GrantLevel`], with the current database for a missing one (1046 without).
pub(crate) fn resolve_level(l: &LevelName, db: Option<&str>) -> SqlResult<GrantLevel> {
    let current = || {
        db.map(str::to_string)
            .ok_or_else(|| SqlError::new(ErrorCode::NoDb, "No database selected"))
    };
    Ok(match l {
        LevelName::Global => GrantLevel::Global,
        LevelName::Db(d) => GrantLevel::Db(d.clone().map_or_else(current, Ok)?),
        LevelName::Table(d, t) => GrantLevel::Table(d.clone().map_or_else(current, Ok)?, t.clone()),
    })
}

fn grant(t: &mut Toks) -> SqlResult<AccountStmt> {
    let (privileges, _) = privilege_list(t)?;
    if !t.eat("ON") {
        return Err(t.err());
    }
    let l = level(t)?;
    if !t.eat("TO") {
        return Err(t.err());
    }
    let users = users(t)?;
    let grant_option = t.eat_seq(&["WITH", "GRANT", "OPTION"]);
    Ok(AccountStmt::Grant {
        privileges,
        level: l,
        users,
        grant_option,
    })
}

fn revoke(t: &mut Toks) -> SqlResult<AccountStmt> {
    let (privileges, option) = privilege_list(t)?;
    if privileges == [Privilege::All] && option && t.eat("FROM") {
        return Ok(AccountStmt::Revoke {
            privileges,
            level: LevelName::Global,
            users: users(t)?,
            all_levels: true,
        });
    }
    if !t.eat("ON") {
        return Err(t.err());
    }
    let l = level(t)?;
    if !t.eat("FROM") {
        return Err(t.err());
    }
    let mut privileges = privileges;
    if option {
        privileges.push(Privilege::Static(PrivSet::GRANT_OPTION));
    }
    Ok(AccountStmt::Revoke {
        privileges,
        level: l,
        users: users(t)?,
        all_levels: false,
    })
}

fn rename(t: &mut Toks) -> SqlResult<AccountStmt> {
    let mut pairs = Vec::new();
    loop {
        let from = t.account()?;
        if !t.eat("TO") {
            return Err(t.err());
        }
        pairs.push((from, t.account()?));
        if matches!(t.peek(), Some(Token::Comma)) {
            t.i += 1;
            continue;
        }
        return Ok(AccountStmt::Rename(pairs));
    }
}

fn alter_user(t: &mut Toks) -> SqlResult<AccountStmt> {
    let if_exists = t.eat_seq(&["IF", "EXISTS"]);
    let mut users = Vec::new();
    loop {
        let user = own_or(t)?;
        if !t.eat("IDENTIFIED") {
            return Err(SqlError::unsupported(&format!(
                "ALTER USER option {}",
                t.rest_text()
            )));
        }
        let mut plugin = None;
        if t.eat("WITH") {
            let name = t.name()?;
            plugin = Some(AuthPlugin::from_name(&name).ok_or_else(|| {
                SqlError::new(ErrorCode::Unknown, format!("Plugin '{name}' is not loaded"))
            })?);
        }
        if !t.eat("BY") {
            return Err(SqlError::unsupported("IDENTIFIED ... AS 'hash'"));
        }
        users.push((user, t.string()?, plugin));
        if matches!(t.peek(), Some(Token::Comma)) {
            t.i += 1;
            continue;
        }
        return Ok(AccountStmt::AlterPassword { users, if_exists });
    }
}
