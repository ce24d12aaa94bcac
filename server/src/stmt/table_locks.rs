//! `LOCK TABLES [db.]t READ [LOCAL] | [LOW_PRIORITY] WRITE, ...` and `UNLOCK TABLES`. LOCK TABLES
//! commits the open transaction, then opens one that holds a table lock in the lock system
//! on each table (S for READ, X for WRITE: other sessions' writes, and for WRITE their
//! locking reads, wait for it); the session's statements run inside it until UNLOCK TABLES
//! commits it. While tables are locked, a table the statement did not lock is 1100.

use sqlparser::ast::{LockTable, LockTableType};
use sqlparser::tokenizer::Token;

use crate::context::Context;
use crate::engine::lock::TableLockMode;
use crate::error::{lock_error, SqlResult};
use crate::exec::errors::no_database;
use crate::sql::output::Output;
use crate::stmt::extra_parse::Toks;
use crate::stmt::transaction;

/// A table LOCK TABLES names.
#[derive(Debug, Clone)]
pub struct TableToLock {
    /// Database (the current one).
    pub db: String,
    /// Table.
    pub table: String,
    /// WRITE (else READ).
    pub write: bool,
}

/// Parses `LOCK {TABLE|TABLES} [db.]tbl [[AS] alias] {READ [LOCAL] | [LOW_PRIORITY] WRITE}, ...`
/// (sqlparser takes only unqualified names); `Ok(None)` for any other statement. An
/// unqualified name is in the current database (1046 without one).
pub fn parse(st: &Context, sql: &str) -> SqlResult<Option<Vec<TableToLock>>> {
    if !crate::stmt::tokens::begins_with_any(sql, &["LOCK"]) {
        return Ok(None);
    }
    let Some(mut t) = Toks::new(sql) else {
        return Ok(None);
    };
    if !(t.eat_seq(&["LOCK", "TABLES"]) || t.eat_seq(&["LOCK", "TABLE"])) {
        return Ok(None);
    }
    let mut tables = Vec::new();
    loop {
        let first = t.name()?;
        let (db, table) = if matches!(t.peek(), Some(Token::Period)) {
            t.i += 1;
            (first, t.name()?)
        } else {
            (st.db.clone().ok_or_else(no_database)?, first)
        };
        // An alias names the table only inside the locked session's statements, which look
        // tables up by name.
        if t.eat("AS") || !matches!(t.word().as_deref(), Some("READ" | "WRITE" | "LOW_PRIORITY")) {
            t.name()?;
        }
        let write = if t.eat("READ") {
            t.eat("LOCAL");
            false
        } else if t.eat("WRITE") || t.eat_seq(&["LOW_PRIORITY", "WRITE"]) {
            true
        } else {
            return Err(t.err());
        };
        tables.push(TableToLock { db, table, write });
        if matches!(t.peek(), Some(Token::Comma)) {
            t.i += 1;
            continue;
        }
        if !t.done() {
            return Err(t.err());
        }
        return Ok(Some(tables));
    }
}

/// Plans LOCK TABLES (1046 without a current database).
pub fn plan(st: &Context, tables: &[LockTable]) -> SqlResult<Vec<TableToLock>> {
    let db = st.db.clone().ok_or_else(no_database)?;
    Ok(tables
        .iter()
        .map(|t| TableToLock {
            db: db.clone(),
            table: t.table.value.clone(),
            write: matches!(t.lock_type, LockTableType::Write { .. }),
        })
        .collect())
}

/// Executes LOCK TABLES: releases what the session locked before, commits, then locks each
/// table (1146 for one that does not exist; a lock that waits past `lock_wait_timeout` is
/// 1205, and nothing stays locked).
pub fn lock(st: &mut Context, tables: &[TableToLock]) -> SqlResult<Output> {
    unlock(st);
    let resolved = tables
        .iter()
        .map(|t| Ok((t, st.core.catalog.table(&t.db, &t.table)?)))
        .collect::<SqlResult<Vec<_>>>()?;
    transaction::begin(st, None, false);
    let timeout = crate::exec::metadata_lock::lock_wait_timeout(st);
    for (t, table) in &resolved {
        let mode = if t.write {
            TableLockMode::X
        } else {
            TableLockMode::S
        };
        let locked = {
            let mut trx = st.trx.borrow_mut();
            let trx = trx.as_mut().expect("begun above");
            st.core.trx.lock_table(trx, table, mode, timeout)
        };
        if let Err(e) = locked {
            transaction::rollback(st);
            return Err(lock_error(e));
        }
    }
    st.locked_tables = Some(
        tables
            .iter()
            .map(|t| (t.db.clone(), t.table.clone()))
            .collect(),
    );
    Ok(Output::ok())
}

/// Executes UNLOCK TABLES: with tables locked, commits and releases them; else nothing.
pub fn unlock(st: &mut Context) -> Output {
    if st.locked_tables.take().is_some() {
        transaction::commit(st);
    }
    Output::ok()
}
