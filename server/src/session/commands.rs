//! Command dispatch: one decoded COM_* packet, run and answered.

use pool_core::Outcome;
use protocol::{Command, OkPacket, ProtocolError};

use crate::connections::ConnCommand;
use crate::error::{ErrorCode, SqlError};
use crate::session::reply::write_ok;
use crate::session::{local_infile, statements, ClientSession};
use crate::vars::Counter;

/// Runs one command; the reply is left in the session's output buffer.
pub fn dispatch(s: &mut ClientSession, payload: &[u8]) -> Outcome {
    let Some(cmd) = decode(s, payload) else {
        return Outcome::Continue;
    };
    match cmd {
        Command::Query(text) => query(s, text),
        Command::StmtExecute(ex) => statements::execute(s, &ex),
        other => return dispatch_other(s, other),
    }
    Outcome::Continue
}

/// Every command but a statement's. Never inlined: its arms' locals would otherwise widen the
/// stack frame each statement runs under (cold stack lines are cache misses).
#[inline(never)]
fn dispatch_other(s: &mut ClientSession, cmd: Command<'_>) -> Outcome {
    match cmd {
        Command::Quit => {
            s.st.core.querylogs.general(s.st.conn.id, "Quit", "");
            s.quit = true;
            return Outcome::Close;
        }
        Command::Query(text) => query(s, text),
        Command::InitDb(db) => {
            let db = String::from_utf8_lossy(db).into_owned();
            s.st.core.querylogs.general(s.st.conn.id, "Init DB", &db);
            match crate::stmt::admin::use_db(&mut s.st, &db) {
                Ok(_) => ok(s),
                Err(e) => s.write_err(&e),
            }
        }
        Command::Ping => ok(s),
        Command::Debug => {
            crate::log::note(&format!("COM_DEBUG from connection {}", s.st.conn.id));
            ok(s)
        }
        Command::Statistics => statistics(s),
        Command::ProcessKill(id) => {
            match crate::stmt::admin::kill_id(&s.st, i64::from(id), false) {
                Ok(()) => ok(s),
                Err(e) => s.write_err(&e),
            }
        }
        Command::SetOption(opt) => set_option(s, opt),
        Command::ResetConnection => {
            s.st.reset();
            ok(s)
        }
        Command::FieldList { table, .. } => field_list(s, table),
        Command::ChangeUser(_) => {
            s.write_err(&SqlError::unsupported("COM_CHANGE_USER"));
        }
        Command::StmtPrepare(text) => statements::prepare(s, text),
        Command::StmtExecute(ex) => statements::execute(s, &ex),
        Command::StmtSendLongData {
            stmt_id,
            param,
            data,
        } => statements::send_long_data(s, stmt_id, param, data),
        Command::StmtClose(id) => statements::close(s, id),
        Command::StmtReset(id) => statements::reset(s, id),
        Command::StmtFetch { .. } => {
            s.write_err(&SqlError::unsupported("cursors (COM_STMT_FETCH)"));
        }
    }
    Outcome::Continue
}

/// The command in `payload`; None after answering an unknown or malformed one (1047, 1158).
fn decode<'p>(s: &mut ClientSession, payload: &'p [u8]) -> Option<Command<'p>> {
    match Command::decode(payload) {
        Ok(c) => Some(c),
        Err(ProtocolError::UnknownCommand(b)) => {
            s.write_err(&SqlError::new(ErrorCode::UnknownCommand, "Unknown command"));
            crate::log::write(
                crate::log::Level::Note,
                s.st.conn.id,
                &format!("unknown command byte 0x{b:02x}"),
            );
            None
        }
        Err(e) => {
            s.write_err(&SqlError::new(
                ErrorCode::NetReadError,
                format!("Malformed packet: {e}"),
            ));
            crate::log::write(
                crate::log::Level::Note,
                s.st.conn.id,
                &format!("malformed command packet: {e}"),
            );
            None
        }
    }
}

/// COM_QUERY: runs the text's statements (LOAD DATA LOCAL reads its file over the wire) and
/// answers each.
fn query(s: &mut ClientSession, text: &[u8]) {
    s.st.count(Counter::Questions);
    s.st.conn.begin(ConnCommand::Query, Some(text));
    let sql_text = crate::sql::bytes::decode(crate::sql::bytes::without_trailing_nul(text));
    s.st.core
        .querylogs
        .general(s.st.conn.id, "Query", &sql_text);
    let read = s.secs(s.st.core.ids.net_read_timeout);
    let (io, out, seq) = (&mut s.io, &mut s.out, &mut s.seq);
    let mut fetch = |name: &str| local_infile::transfer(io, out, seq, name, read);
    let results = crate::stmt::run_text_with_files(&mut s.st, &sql_text, &mut fetch);
    let n = results.len();
    for (i, r) in results.into_iter().enumerate() {
        s.st.count(Counter::Queries);
        match r {
            Ok(o) => s.write_result(&o, false, i + 1 < n),
            Err(e) => s.write_err(&e),
        }
    }
    s.st.conn.end();
}

/// COM_STATISTICS: the one-line status text.
fn statistics(s: &mut ClientSession) {
    let core = &s.st.core;
    let status = core.status(None);
    let get = |k: &str| {
        status
            .iter()
            .find(|(n, _)| n == k)
            .map(|(_, v)| v.clone())
            .unwrap_or_default()
    };
    let uptime = core.started.elapsed().as_secs_f64().max(1.0);
    let questions: f64 = get("Questions").parse().unwrap_or(0.0);
    let text = format!(
        "Uptime: {}  Threads: {}  Questions: {}  Slow queries: 0  Opens: 0  Flush tables: 1  Open tables: 0  Queries per second avg: {:.3}",
        get("Uptime"),
        get("Threads_connected"),
        get("Questions"),
        questions / uptime
    );
    protocol::packet::write_packet(&mut s.out, &mut s.seq, text.as_bytes());
}

/// COM_SET_OPTION: multi-statements on or off.
fn set_option(s: &mut ClientSession, opt: u16) {
    match opt {
        protocol::command::MYSQL_OPTION_MULTI_STATEMENTS_ON => s.st.multi_statements = true,
        protocol::command::MYSQL_OPTION_MULTI_STATEMENTS_OFF => s.st.multi_statements = false,
        _ => {
            s.write_err(&SqlError::new(ErrorCode::UnknownCommand, "Unknown command"));
            return;
        }
    }
    let status = s.st.status_flags();
    if s.st.caps.contains(protocol::Capabilities::DEPRECATE_EOF) {
        ok(s);
    } else {
        let eof = protocol::EofPacket {
            warnings: 0,
            status,
        };
        protocol::packet::write_packet_with(&mut s.out, &mut s.seq, |o| eof.encode(o));
    }
}

/// COM_FIELD_LIST: a table's column definitions, each with an empty default.
fn field_list(s: &mut ClientSession, table: &[u8]) {
    let t = String::from_utf8_lossy(table).into_owned();
    let listed = crate::privileges::statement::check_field_list(&s.st, &t)
        .and_then(|()| crate::exec::show::field_list(&s.st, &t));
    match listed {
        Ok(defs) => {
            for d in &defs {
                protocol::packet::write_packet_with(&mut s.out, &mut s.seq, |o| {
                    d.encode(o);
                    o.push(0xfb); // no default value
                });
            }
            let eof = protocol::EofPacket {
                warnings: 0,
                status: s.st.status_flags(),
            };
            if s.st.caps.contains(protocol::Capabilities::DEPRECATE_EOF) {
                ok(s);
            } else {
                protocol::packet::write_packet_with(&mut s.out, &mut s.seq, |o| eof.encode(o));
            }
        }
        Err(e) => s.write_err(&e),
    }
}

/// Writes a plain OK with the session's status flags.
pub fn ok(s: &mut ClientSession) {
    let ok = OkPacket {
        status: s.st.status_flags(),
        ..OkPacket::default()
    };
    write_ok(&mut s.out, &mut s.seq, s.st.caps, &ok);
}
