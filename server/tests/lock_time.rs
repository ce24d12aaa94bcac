//! A statement that waits for a row lock has the wait counted in its digest's SUM_LOCK_TIME:
//! the engine charges the wait to the waiting transaction and the session takes it from there,
//! whether the statement commits its own transaction (autocommit) or runs inside one.

use std::sync::Arc;
use std::time::Duration;

use tpbed_server::accounts::Privileges;
use tpbed_server::config::Config;
use tpbed_server::connections::ConnInfo;
use tpbed_server::context::Context;
use tpbed_server::server::Server;
use tpbed_server::sql::Output;
use tpbed_server::stmt::run_text;
use tpbed_server::value::Value;

fn session(server: &Arc<Server>, id: u32) -> Context {
    let conn = Arc::new(ConnInfo::new(id, "127.0.0.1".into(), -1));
    server.connections.insert(conn.clone());
    let mut st = Context::new(Arc::clone(server.core()), conn);
    st.user = "root".into();
    st.account_host = "localhost".into();
    st.privileges = Privileges::all();
    st
}

fn run(st: &mut Context, sql: &str) -> Vec<Output> {
    run_text(st, sql)
        .into_iter()
        .map(|r| r.unwrap_or_else(|e| panic!("{sql}: {e}")))
        .collect()
}

/// SUM_LOCK_TIME (picoseconds) of the digest whose text starts with `prefix`.
fn lock_time_ps(st: &mut Context, prefix: &str) -> u64 {
    let sql = format!(
        "SELECT SUM_LOCK_TIME FROM performance_schema.events_statements_summary_by_digest \
         WHERE DIGEST_TEXT LIKE '{prefix}%'"
    );
    let out = run(st, &sql);
    let Some(Output::Rows(rs)) = out.into_iter().next() else {
        panic!("{sql}: no result set");
    };
    match rs.rows.first().and_then(|r| r.first()) {
        Some(Value::UInt(n)) => *n,
        Some(Value::Int(n)) => u64::try_from(*n).unwrap_or(0),
        other => panic!("{sql}: {other:?}"),
    }
}

/// Holds row 1 for `hold` in one session while another runs `waiter` (each statement in
/// `waiter` in order), and returns once both are done.
fn wait_behind_a_lock(server: &Arc<Server>, waiter: &'static [&'static str], hold: Duration) {
    let mut holder = session(server, 1);
    run(&mut holder, "BEGIN");
    run(&mut holder, "UPDATE lt.t SET v = v + 1 WHERE id = 1");
    let srv = Arc::clone(server);
    let h = std::thread::spawn(move || {
        let mut w = session(&srv, 2);
        run(&mut w, "USE lt");
        for sql in waiter {
            run(&mut w, sql);
        }
    });
    std::thread::sleep(hold);
    run(&mut holder, "COMMIT");
    h.join().expect("waiter");
}

fn server() -> Arc<Server> {
    let server = Server::from_config(&Config::default()).expect("server");
    let mut st = session(&server, 9);
    run(&mut st, "CREATE DATABASE lt");
    run(&mut st, "CREATE TABLE lt.t (id INT PRIMARY KEY, v INT)");
    run(&mut st, "INSERT INTO lt.t VALUES (1, 0), (2, 0)");
    server
}

#[test]
fn autocommit_statement_counts_its_lock_wait() {
    let server = server();
    wait_behind_a_lock(
        &server,
        &["UPDATE t SET v = 10 WHERE id = 1"],
        Duration::from_millis(300),
    );
    let mut st = session(&server, 3);
    let ps = lock_time_ps(&mut st, "UPDATE `t` SET `v` = ? WHERE `id` = ?");
    assert!(ps >= 250_000_000_000, "SUM_LOCK_TIME {ps} ps");
}

#[test]
fn statement_inside_a_transaction_counts_its_lock_wait() {
    let server = server();
    wait_behind_a_lock(
        &server,
        &["BEGIN", "SELECT v FROM t WHERE id = 1 FOR UPDATE", "COMMIT"],
        Duration::from_millis(300),
    );
    let mut st = session(&server, 3);
    let ps = lock_time_ps(&mut st, "SELECT `v` FROM `t` WHERE `id` = ? FOR UPDATE");
    assert!(ps >= 250_000_000_000, "SUM_LOCK_TIME {ps} ps");
    let commit = lock_time_ps(&mut st, "COMMIT");
    assert!(
        commit < 250_000_000_000,
        "COMMIT waited for nothing: {commit} ps"
    );
}
