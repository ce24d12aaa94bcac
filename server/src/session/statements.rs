//! Server-side prepared statements: COM_STMT_PREPARE, EXECUTE (binary protocol), SEND_LONG_DATA,
//! CLOSE and RESET, with `max_prepared_stmt_count`.

use std::sync::atomic::Ordering;
use std::sync::Arc;

use protocol::command::{decode_execute_params_with_long_data, StmtExecute};
use protocol::resultset::write_prepare_ok;
use protocol::{BinaryValue, ColumnType};

use crate::connections::ConnCommand;
use crate::error::{ErrorCode, SqlError};
use crate::session::commands::ok;
use crate::session::reply::param_definitions;
use crate::session::state::SessionStmt;
use crate::session::ClientSession;
use crate::sql;
use crate::value::{DateTime, Value};
use crate::vars::Counter;

fn unknown(id: u32, what: &str) -> SqlError {
    SqlError::new(
        ErrorCode::UnknownStmtHandler,
        format!("Unknown prepared statement handler ({id}) given to {what}"),
    )
}

/// COM_STMT_PREPARE.
pub fn prepare(s: &mut ClientSession, text: &[u8]) {
    s.st.count(Counter::ComStmtPrepare);
    s.st.conn.begin(ConnCommand::Prepare, Some(text));
    let core = s.st.core.clone();
    let max = core.vars.global(core.ids.max_prepared_stmt_count).as_int();
    // Take a slot before preparing, atomically, so concurrent prepares cannot pass the limit
    // together; a failed prepare gives it back.
    let took = core
        .prepared_stmt_count
        .fetch_update(Ordering::AcqRel, Ordering::Acquire, |n| {
            (n < max).then_some(n + 1)
        });
    if took.is_err() {
        s.write_err(&SqlError::new(
            ErrorCode::MaxPreparedStmtCountReached,
            format!(
                "Can't create more than max_prepared_stmt_count statements (current value: {max})"
            ),
        ));
        s.st.conn.end();
        return;
    }
    let sql_text = crate::sql::bytes::decode(crate::sql::bytes::without_trailing_nul(text));
    s.st.core
        .querylogs
        .general(s.st.conn.id, "Prepare", &sql_text);
    match crate::stmt::prepare(&s.st, &sql_text) {
        Ok(stmt) => {
            let id = s.st.next_stmt_id;
            s.st.next_stmt_id = s.st.next_stmt_id.wrapping_add(1).max(1);
            write_prepare_ok(
                &mut s.out,
                &mut s.seq,
                s.st.caps,
                id,
                &param_definitions(stmt.params),
                &stmt.columns,
                0,
            );
            let n = stmt.params;
            let digest = crate::digest::Prepared::new(&s.st.core.digests, &sql_text);
            s.st.statements.insert(
                id,
                SessionStmt {
                    stmt: Arc::new(stmt),
                    param_types: Vec::new(),
                    long_data: vec![None; n],
                    long_data_error: None,
                    digest: digest.map(Arc::new),
                },
            );
        }
        Err(e) => {
            core.prepared_stmt_count.fetch_sub(1, Ordering::AcqRel);
            s.write_err(&e);
        }
    }
    s.st.conn.end();
}

/// Converts a bound parameter to a SQL value.
fn param_value(v: BinaryValue, ty: ColumnType) -> Value {
    match v {
        BinaryValue::Null => Value::Null,
        BinaryValue::Int(i) => Value::Int(i),
        BinaryValue::UInt(u) => Value::UInt(u),
        BinaryValue::Float(f) => Value::Double(f64::from(f)),
        BinaryValue::Double(d) => Value::Double(d),
        BinaryValue::Bytes(b) => match ty {
            ColumnType::NewDecimal | ColumnType::Decimal => std::str::from_utf8(&b)
                .ok()
                .and_then(sql::eval::parse_decimal)
                .map(Value::Decimal)
                .unwrap_or(Value::Bytes(b)),
            _ => Value::Bytes(b),
        },
        BinaryValue::Date { year, month, day } => Value::DateTime(DateTime {
            year,
            month,
            day,
            ..DateTime::default()
        }),
        BinaryValue::DateTime {
            year,
            month,
            day,
            hour,
            minute,
            second,
            micros,
        } => Value::DateTime(DateTime {
            year,
            month,
            day,
            hour,
            minute,
            second,
            micros,
        }),
        BinaryValue::Time {
            negative,
            days,
            hours,
            minutes,
            seconds,
            micros,
        } => {
            let h = u64::from(days) * 24 + u64::from(hours);
            let secs = i128::from(h) * 3600 + i128::from(minutes) * 60 + i128::from(seconds);
            let span = secs * 1_000_000 + i128::from(micros);
            match i64::try_from(span) {
                Ok(t) if t <= crate::engine::time_value::MAX_TIME_MICROS => Value::Time(
                    if negative { -t } else { t },
                    if micros == 0 { 0 } else { 6 },
                ),
                // Beyond TIME's range: the text the client sent, for the column's coercion
                // to refuse (or a SELECT to echo).
                _ => {
                    let sign = if negative { "-" } else { "" };
                    let frac = if micros != 0 {
                        format!(".{micros:06}")
                    } else {
                        String::new()
                    };
                    Value::str(&format!("{sign}{h:02}:{minutes:02}:{seconds:02}{frac}"))
                }
            }
        }
    }
}

/// COM_STMT_EXECUTE.
pub fn execute(s: &mut ClientSession, ex: &StmtExecute<'_>) {
    s.st.count(Counter::ComStmtExecute);
    s.st.count(Counter::Questions);
    s.st.count(Counter::Queries);
    s.st.conn.begin(ConnCommand::Execute, None);
    let probe = crate::stmt::probe::Probe::start(&s.st);
    let Some(entry) = s.st.statements.get_mut(&ex.stmt_id) else {
        s.write_err(&unknown(ex.stmt_id, "mysqld_stmt_execute"));
        s.st.conn.end();
        return;
    };
    if let Some(e) = entry.long_data_error.take() {
        entry.long_data.iter_mut().for_each(|d| *d = None);
        s.write_err(&e);
        s.st.conn.end();
        return;
    }
    // Which parameters came by COM_STMT_SEND_LONG_DATA; usually none, and then nothing is
    // allocated.
    let long: Vec<bool> = if entry.long_data.iter().any(Option::is_some) {
        entry.long_data.iter().map(Option::is_some).collect()
    } else {
        Vec::new()
    };
    let decoded = decode_execute_params_with_long_data(
        ex.params,
        entry.stmt.params,
        &mut entry.param_types,
        &long,
    );
    let params = decoded.map(|values| {
        values
            .into_iter()
            .enumerate()
            .map(|(i, v)| match entry.long_data[i].take() {
                Some(data) => Value::Bytes(data),
                None => param_value(
                    v,
                    entry
                        .param_types
                        .get(i)
                        .map_or(ColumnType::VarString, |t| t.0),
                ),
            })
            .collect::<Vec<Value>>()
    });
    let stmt = Arc::clone(&entry.stmt);
    let digest = entry.digest.clone();
    let result = match params {
        Ok(params) => crate::stmt::execute(&mut s.st, &stmt, &params),
        Err(e) => Err(SqlError::new(
            ErrorCode::WrongArguments,
            format!("Incorrect arguments to mysqld_stmt_execute ({e})"),
        )),
    };
    if let (Some(p), Some(d)) = (probe, &digest) {
        p.finish_execute(&s.st, d, &result);
    }
    match result {
        Ok(o) => s.write_result(&o, true, false),
        Err(e) => s.write_err(&e),
    }
    s.st.conn.end();
}

/// COM_STMT_SEND_LONG_DATA (no reply).
pub fn send_long_data(s: &mut ClientSession, id: u32, param: u16, data: &[u8]) {
    s.st.count(Counter::ComStmtSendLongData);
    let max = s.st.vars.get(s.st.core.ids.max_allowed_packet).as_int();
    let max = usize::try_from(max).unwrap_or(usize::MAX);
    let Some(entry) = s.st.statements.get_mut(&id) else {
        return;
    };
    if entry.long_data_error.is_some() {
        return;
    }
    let Some(slot) = entry.long_data.get_mut(usize::from(param)) else {
        return;
    };
    let buf = slot.get_or_insert_with(Vec::new);
    let failed = if buf.len().saturating_add(data.len()) > max {
        Some(SqlError::new(
            ErrorCode::Unknown,
            "Parameter of prepared statement which is set through mysql_send_long_data() is \
             longer than 'max_allowed_packet' bytes",
        ))
    } else if buf.try_reserve(data.len()).is_err() {
        Some(SqlError::new(
            ErrorCode::OutOfMemory,
            format!(
                "Out of memory; restart server and try again (needed {} bytes)",
                data.len()
            ),
        ))
    } else {
        buf.extend_from_slice(data);
        None
    };
    if let Some(e) = failed {
        // The data collected so far is useless: free it now.
        entry.long_data.iter_mut().for_each(|d| *d = None);
        entry.long_data_error = Some(e);
    }
}

/// COM_STMT_CLOSE (no reply).
pub fn close(s: &mut ClientSession, id: u32) {
    s.st.count(Counter::ComStmtClose);
    if s.st.statements.remove(&id).is_some() {
        s.st.core
            .prepared_stmt_count
            .fetch_sub(1, Ordering::Relaxed);
    }
}

/// COM_STMT_RESET.
pub fn reset(s: &mut ClientSession, id: u32) {
    s.st.count(Counter::ComStmtReset);
    match s.st.statements.get_mut(&id) {
        Some(entry) => {
            entry.long_data.iter_mut().for_each(|d| *d = None);
            entry.long_data_error = None;
            ok(s);
        }
        None => s.write_err(&unknown(id, "mysqld_stmt_reset")),
    }
}
