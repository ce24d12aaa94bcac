//! Statements sqlparser does not parse the MySQL way, recognised from tokens: `CREATE USER`,
//! `DROP USER` (the other account statements are in [`super::account_stmts`]),
//! `SET [GLOBAL|SESSION] TRANSACTION ...` (sqlparser drops the scope), `DO`, `SHUTDOWN` and
//! `KILL [QUERY|CONNECTION] 'id'` (a quoted id, as pt-kill sends it).

use sqlparser::dialect::MySqlDialect;
use sqlparser::tokenizer::{Token, Tokenizer};

use crate::accounts::AuthPlugin;
use crate::context::Context;
use crate::error::{SqlError, SqlResult};
use crate::stmt::plan::{Plan, PreparedStmt};
use crate::stmt::set::TxScope;

/// A cursor over significant tokens.
pub(crate) struct Toks {
    pub(crate) t: Vec<Token>,
    pub(crate) i: usize,
}

impl Toks {
    pub(crate) fn new(sql: &str) -> Option<Toks> {
        let t = Tokenizer::new(&MySqlDialect {}, sql).tokenize().ok()?;
        let t = t
            .into_iter()
            .filter(|t| !matches!(t, Token::Whitespace(_)))
            .collect();
        Some(Toks { t, i: 0 })
    }
    pub(crate) fn peek(&self) -> Option<&Token> {
        self.t.get(self.i)
    }
    pub(crate) fn next(&mut self) -> Option<Token> {
        let t = self.t.get(self.i).cloned();
        self.i += 1;
        t
    }
    pub(crate) fn word(&self) -> Option<String> {
        match self.peek() {
            Some(Token::Word(w)) if w.quote_style.is_none() => Some(w.value.to_ascii_uppercase()),
            _ => None,
        }
    }
    pub(crate) fn eat(&mut self, kw: &str) -> bool {
        if self.word().as_deref() == Some(kw) {
            self.i += 1;
            true
        } else {
            false
        }
    }
    pub(crate) fn eat_seq(&mut self, kws: &[&str]) -> bool {
        let save = self.i;
        for k in kws {
            if !self.eat(k) {
                self.i = save;
                return false;
            }
        }
        true
    }
    pub(crate) fn done(&mut self) -> bool {
        while matches!(self.peek(), Some(Token::SemiColon)) {
            self.i += 1;
        }
        self.i >= self.t.len() || matches!(self.peek(), Some(Token::EOF))
    }
    pub(crate) fn rest_text(&self) -> String {
        self.t[self.i.min(self.t.len())..]
            .iter()
            .map(|t| t.to_string())
            .collect::<Vec<_>>()
            .join(" ")
    }
    pub(crate) fn err(&self) -> SqlError {
        SqlError::parse(&self.rest_text())
    }
    pub(crate) fn string(&mut self) -> SqlResult<String> {
        match self.next() {
            Some(Token::SingleQuotedString(s)) | Some(Token::DoubleQuotedString(s)) => Ok(s),
            _ => {
                self.i -= 1;
                Err(self.err())
            }
        }
    }
    /// A name: quoted string, backquoted identifier or bare word.
    pub(crate) fn name(&mut self) -> SqlResult<String> {
        match self.next() {
            Some(Token::SingleQuotedString(s)) | Some(Token::DoubleQuotedString(s)) => Ok(s),
            Some(Token::Word(w)) => Ok(w.value),
            _ => {
                self.i -= 1;
                Err(self.err())
            }
        }
    }
    /// `user[@host]` in any quoting; the host defaults to `%`.
    pub(crate) fn account(&mut self) -> SqlResult<(String, String)> {
        let user = self.name()?;
        if let Some(host) = user.strip_prefix('@') {
            return Err(SqlError::parse(host));
        }
        if let Some((u, h)) = user.split_once('@') {
            // `u@'%'`: the tokenizer keeps the `@` on the bare user name and quotes the host.
            let host = if h.is_empty() {
                self.name()?
            } else {
                h.to_string()
            };
            return Ok((u.to_string(), host));
        }
        match self.peek() {
            Some(Token::AtSign) => {
                self.i += 1;
                Ok((user, self.name()?))
            }
            Some(Token::Word(w)) if w.value.starts_with('@') => {
                let host = w.value[1..].to_string();
                self.i += 1;
                Ok((user, host))
            }
            _ => Ok((user, "%".to_string())),
        }
    }
}

fn stmt(plan: Plan) -> PreparedStmt {
    PreparedStmt {
        plan,
        params: 0,
        columns: Vec::new(),
    }
}

/// Plans the statement if it is one of the hand-parsed forms; `Ok(None)` hands it to sqlparser.
pub fn try_plan(st: &Context, sql: &str) -> SqlResult<Option<PreparedStmt>> {
    if let Some(p) = crate::stmt::account_stmts::try_plan(sql)? {
        return Ok(Some(p));
    }
    let interesting = crate::stmt::tokens::begins_with_any(
        sql,
        &["CREATE", "DROP", "SET", "DO", "START", "SHUTDOWN", "KILL"],
    );
    if !interesting {
        return Ok(None);
    }
    let Some(mut t) = Toks::new(sql) else {
        return Ok(None);
    };
    if t.eat_seq(&["CREATE", "USER"]) {
        return create_user(&mut t).map(Some);
    }
    t.i = 0;
    if t.eat_seq(&["DROP", "USER"]) {
        let if_exists = t.eat_seq(&["IF", "EXISTS"]);
        let mut users = vec![t.account()?];
        while matches!(t.peek(), Some(Token::Comma)) {
            t.i += 1;
            users.push(t.account()?);
        }
        if !t.done() {
            return Err(t.err());
        }
        return Ok(Some(stmt(Plan::DropUser { users, if_exists })));
    }
    t.i = 0;
    if t.eat("SHUTDOWN") {
        if !t.done() {
            return Err(t.err());
        }
        return Ok(Some(stmt(Plan::Shutdown)));
    }
    t.i = 0;
    if t.eat("KILL") {
        // The id is an expression in MySQL; a quoted one converts to a number as it runs.
        let query = t.eat("QUERY");
        if !query {
            t.eat("CONNECTION");
        }
        let id = match t.peek() {
            Some(Token::SingleQuotedString(s)) | Some(Token::DoubleQuotedString(s)) => {
                crate::sql::bytes::restore(s).into_owned()
            }
            _ => return Ok(None),
        };
        t.i += 1;
        if !t.done() {
            return Err(t.err());
        }
        return Ok(Some(stmt(Plan::Kill {
            id: crate::sql::expr::BoundExpr::Literal(crate::value::Value::Bytes(id)),
            query,
        })));
    }
    t.i = 0;
    if t.eat("SET") {
        let scope = if t.eat("GLOBAL") {
            TxScope::Global
        } else if t.eat("SESSION") || t.eat("LOCAL") {
            TxScope::Session
        } else {
            TxScope::Next
        };
        if t.eat("TRANSACTION") {
            return set_transaction(&mut t, scope).map(Some);
        }
        return Ok(None);
    }
    t.i = 0;
    if t.eat_seq(&["START", "TRANSACTION"]) {
        // sqlparser does not know WITH CONSISTENT SNAPSHOT.
        let (mut read_only, mut snapshot) = (None, false);
        while !t.done() {
            if t.eat_seq(&["WITH", "CONSISTENT", "SNAPSHOT"]) {
                snapshot = true;
            } else if t.eat_seq(&["READ", "ONLY"]) {
                read_only = Some(true);
            } else if t.eat_seq(&["READ", "WRITE"]) {
                read_only = Some(false);
            } else {
                return Err(t.err());
            }
            if matches!(t.peek(), Some(Token::Comma)) {
                t.i += 1;
            }
        }
        return Ok(Some(stmt(Plan::Begin {
            read_only,
            snapshot,
        })));
    }
    t.i = 0;
    if t.eat("DO") {
        let select = format!("SELECT {}", sql.trim_start()[2..].trim_start());
        let p = crate::stmt::plan::plan(st, &parse_one(&select)?, &select)?;
        return match p.plan {
            Plan::Select(s) => Ok(Some(PreparedStmt {
                plan: Plan::Do(s.exprs),
                params: p.params,
                columns: Vec::new(),
            })),
            _ => Err(t.err()),
        };
    }
    Ok(None)
}

fn parse_one(sql: &str) -> SqlResult<sqlparser::ast::Statement> {
    let mut v = crate::sql::parse(sql)?;
    if v.len() != 1 {
        return Err(SqlError::parse(sql));
    }
    Ok(v.remove(0))
}

fn create_user(t: &mut Toks) -> SqlResult<PreparedStmt> {
    let if_not_exists = t.eat_seq(&["IF", "NOT", "EXISTS"]);
    let mut users = Vec::new();
    loop {
        let (u, h) = t.account()?;
        let mut password = String::new();
        let mut plugin = AuthPlugin::CachingSha2;
        if t.eat("IDENTIFIED") {
            if t.eat("WITH") {
                let name = t.name()?;
                plugin = AuthPlugin::from_name(&name).ok_or_else(|| {
                    SqlError::new(
                        crate::error::ErrorCode::Unknown,
                        format!("Plugin '{name}' is not loaded"),
                    )
                })?;
            }
            if t.eat("BY") {
                password = t.string()?;
            } else if t.eat("AS") {
                return Err(SqlError::unsupported("IDENTIFIED ... AS 'hash'"));
            }
        }
        users.push((u, h, password, plugin));
        if matches!(t.peek(), Some(Token::Comma)) {
            t.i += 1;
            continue;
        }
        break;
    }
    if !t.done() {
        return Err(SqlError::unsupported(&format!(
            "CREATE USER option {}",
            t.rest_text()
        )));
    }
    Ok(stmt(Plan::CreateUser {
        users,
        if_not_exists,
    }))
}

fn set_transaction(t: &mut Toks, scope: TxScope) -> SqlResult<PreparedStmt> {
    let mut isolation = None;
    let mut read_only = None;
    loop {
        if t.eat_seq(&["ISOLATION", "LEVEL"]) {
            isolation = Some(if t.eat_seq(&["READ", "UNCOMMITTED"]) {
                "READ-UNCOMMITTED"
            } else if t.eat_seq(&["READ", "COMMITTED"]) {
                "READ-COMMITTED"
            } else if t.eat_seq(&["REPEATABLE", "READ"]) {
                "REPEATABLE-READ"
            } else if t.eat("SERIALIZABLE") {
                "SERIALIZABLE"
            } else {
                return Err(t.err());
            });
        } else if t.eat_seq(&["READ", "WRITE"]) {
            read_only = Some(false);
        } else if t.eat_seq(&["READ", "ONLY"]) {
            read_only = Some(true);
        } else {
            return Err(t.err());
        }
        if matches!(t.peek(), Some(Token::Comma)) {
            t.i += 1;
            continue;
        }
        break;
    }
    if !t.done() {
        return Err(t.err());
    }
    Ok(stmt(Plan::SetTransaction {
        scope,
        isolation,
        read_only,
    }))
}
