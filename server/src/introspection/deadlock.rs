//! The LATEST DETECTED DEADLOCK section of `SHOW ENGINE INNODB STATUS` (and of the error
//! log with `innodb_print_all_deadlocks`) in InnoDB's layout, so tools that parse it
//! (pt-deadlock-logger) read it: each transaction's header, its connection's thread line and
//! statement, the locks it holds and waits for, and the victim.

use std::fmt::Write as _;

use crate::connections::AtDeadlock;
use crate::engine::lock::{DeadlockReport, DeadlockTrx, LockDesc, LockNames, LockObject};
use crate::introspection::ServerView;

/// InnoDB's thread line of a connection: id, `OS thread handle`, `query id`, host, user and
/// what it was doing.
fn thread_line(c: &AtDeadlock) -> String {
    let writes = c.statement.as_deref().is_some_and(|s| {
        let head = s.trim_start().get(..6).unwrap_or("").to_ascii_uppercase();
        matches!(head.as_str(), "UPDATE" | "DELETE" | "INSERT" | "REPLAC")
    });
    format!(
        "MySQL thread id {}, OS thread handle {}, query id {} {} {} {}",
        c.conn,
        c.os_thread,
        c.queries,
        c.host,
        c.user,
        if writes { "updating" } else { "executing" }
    )
}

/// A lock as InnoDB prints it: `RECORD LOCKS space id S page no P n bits B index I of table
/// `d`.`t` trx id T lock_mode ...` and the record (the table id stands for the space id; tpbed
/// keeps no per-page lock bitmaps, so `n bits` is 0).
fn lock_lines(out: &mut String, l: &LockDesc, trx: u64, names: &dyn LockNames) {
    match &l.object {
        LockObject::Table(t) => {
            let (db, tb) = names.table(*t).unwrap_or_default();
            let _ = writeln!(
                out,
                "TABLE LOCK table `{db}`.`{tb}` trx id {trx} {}",
                l.status_mode
            );
        }
        LockObject::Record { index, key } => {
            let (db, tb, ix) = names.index(*index).unwrap_or_default();
            let _ = writeln!(
                out,
                "RECORD LOCKS space id {} page no {} n bits 0 index {ix} of table `{db}`.`{tb}` trx id {trx} {}",
                index.0 / 1024,
                l.page,
                l.status_mode
            );
            let _ = match key {
                None => writeln!(out, "Record lock, heap no 1 PHYSICAL RECORD: n_fields 1; compact format; info bits 0\n 0: len 8; hex 73757072656d756d; asc supremum;;"),
                Some(k) => writeln!(out, "Record lock: {}", names.lock_data(*index, k)),
            };
        }
    }
}

/// The tables a deadlocked transaction's locks name.
fn tables_in_use(t: &DeadlockTrx) -> usize {
    let mut tables: Vec<u64> = t
        .holds
        .iter()
        .chain(std::iter::once(&t.waiting_for))
        .map(|l| match &l.object {
            LockObject::Table(t) => t.0,
            LockObject::Record { index, .. } => index.0 / 1024,
        })
        .collect();
    tables.sort_unstable();
    tables.dedup();
    tables.len()
}

/// The section for `report`, with names from `names` and connections from `server`.
pub fn render(server: &dyn ServerView, report: &DeadlockReport, names: &dyn LockNames) -> String {
    let mut out = String::from(
        "------------------------\nLATEST DETECTED DEADLOCK\n------------------------\n",
    );
    let _ = writeln!(out, "{}", super::innodb_tables::datetime_text(report.at));
    let statements = &server.connections().at_deadlock;
    for (k, t) in report.trxs.iter().enumerate() {
        let n = k + 1;
        let at = statements
            .get(report.at, t.connection_id)
            .unwrap_or_else(|| AtDeadlock {
                conn: t.connection_id,
                ..AtDeadlock::default()
            });
        let _ = writeln!(out, "*** ({n}) TRANSACTION:");
        let _ = writeln!(
            out,
            "TRANSACTION {}, ACTIVE {} sec starting index read",
            t.trx_id, at.active_secs
        );
        let in_use = tables_in_use(t);
        let _ = writeln!(out, "mysql tables in use {in_use}, locked {in_use}");
        let _ = writeln!(
            out,
            "LOCK WAIT {} lock struct(s), heap size 1136, {} row lock(s), undo log entries {}",
            t.lock_structs, t.rows_locked, t.undo_records
        );
        let _ = writeln!(out, "{}", thread_line(&at));
        if let Some(s) = &at.statement {
            let _ = writeln!(out, "{s}");
        }
        let _ = writeln!(out, "\n*** ({n}) HOLDS THE LOCK(S):");
        for l in &t.holds {
            lock_lines(&mut out, l, t.trx_id, names);
        }
        let _ = writeln!(out, "\n*** ({n}) WAITING FOR THIS LOCK TO BE GRANTED:");
        lock_lines(&mut out, &t.waiting_for, t.trx_id, names);
        out.push('\n');
    }
    let _ = writeln!(out, "*** WE ROLL BACK TRANSACTION ({})", report.victim + 1);
    out
}
