//! Memory fails a statement, not the server, in both connection-handling modes: under an
//! address-space limit large values and a filling table get MySQL's errors (1037, 1114)
//! while a bystander's open transaction survives; `tpbed_max_memory` makes writes past it
//! fail with 1114 while reads and deletes go on; KILL QUERY ends a function building a huge
//! value.

use std::time::{Duration, Instant};

use mysql::prelude::*;
use tpbed_tests::TestServer;

/// The connection-handling modes every test here runs in.
const MODES: [&str; 2] = ["one-thread-per-connection", "pool-of-threads"];

/// The address-space limit of the reproduction (`prlimit --as=3GiB`).
const THREE_GIB: u64 = 3 << 30;

/// The MySQL error of a `mysql` crate result (panics on success or a non-server error).
fn server_error<T: std::fmt::Debug>(r: mysql::Result<T>) -> mysql::MySqlError {
    match r {
        Err(mysql::Error::MySqlError(e)) => e,
        other => panic!("expected a server error, got {other:?}"),
    }
}

/// `SELECT LENGTH(CONCAT(@a, ... n times))`.
fn concat_of_a(n: usize) -> String {
    format!("SELECT LENGTH(CONCAT({}))", vec!["@a"; n].join(", "))
}

/// A bystander's open transaction with an uncommitted row 0 in `d.t`.
fn bystander(srv: &TestServer) -> mysql::Conn {
    let mut b = srv.connect();
    b.query_drop("CREATE DATABASE d").unwrap();
    b.query_drop("CREATE TABLE d.t (id INT PRIMARY KEY, c LONGBLOB)")
        .unwrap();
    b.query_drop("BEGIN").unwrap();
    b.query_drop("INSERT INTO d.t VALUES (0, 'bystander')")
        .unwrap();
    b
}

/// The bystander commits and its row reads back from a new connection; the server serves
/// on.
fn bystander_commits(srv: &mut TestServer, mut b: mysql::Conn, mode: &str) {
    b.query_drop("COMMIT").unwrap();
    let mut fresh = srv.connect();
    let c: Option<String> = fresh.query_first("SELECT c FROM d.t WHERE id = 0").unwrap();
    assert_eq!(c.as_deref(), Some("bystander"), "{mode}");
    assert!(srv.is_running(), "{mode}: the server survived");
}

#[test]
fn an_address_space_limit_fails_statements_not_the_server() {
    for mode in MODES {
        let handling = format!("--thread-handling={mode}");
        let mut srv = TestServer::start_with_address_space(
            &[&handling, "--max-allowed-packet=1G", "--skip-log-bin"],
            THREE_GIB,
        );
        let b = bystander(&srv);
        let mut c = srv.connect();
        c.query_drop("SET @a = REPEAT('x', 60000000)").unwrap();

        // 40 copies pass max_allowed_packet: MySQL's NULL with 1301 once the arguments read
        // pass it, or 1037 if memory runs out first; never a lost server.
        match c.query_first::<Option<i64>, _>(concat_of_a(40)) {
            Ok(v) => {
                assert_eq!(v, Some(None), "{mode}: NULL");
                let w: Vec<(String, u16, String)> = c.query("SHOW WARNINGS").unwrap();
                assert_eq!(w.first().map(|w| w.1), Some(1301), "{mode}: {w:?}");
            }
            Err(e) => {
                let e = server_error::<()>(Err(e));
                assert_eq!((e.code, e.state.as_str()), (1037, "HY001"), "{mode}: {e:?}");
            }
        }

        // Each result is within max_allowed_packet, but together they are more than the
        // address space holds: 1037 for the statement that would pass the budget.
        let mut refused = None;
        for v in 1..=4 {
            let sql = format!("SET @v{v} = CONCAT({})", vec!["@a"; 16].join(", "));
            if let Err(e) = c.query_drop(&sql) {
                refused = Some((v, server_error::<()>(Err(e))));
                break;
            }
        }
        let (at, e) = refused.unwrap_or_else(|| panic!("{mode}: four 960 MB values fitted"));
        assert!(at >= 2, "{mode}: the first 960 MB value fits");
        assert_eq!((e.code, e.state.as_str()), (1037, "HY001"), "{mode}: {e:?}");
        assert!(
            e.message
                .starts_with("Out of memory; restart server and try again (needed "),
            "{mode}: {e:?}"
        );
        c.query_drop("SET @v1 = NULL, @v2 = NULL, @v3 = NULL, @v4 = NULL, @a = NULL")
            .unwrap();

        // 8 MB rows until the store reaches the budget: 1114, not an abort.
        let inserted = insert_until_full(&mut c, 8_000_000, 1000, mode);
        assert!(
            inserted >= 20,
            "{mode}: only {inserted} rows of 8 MB fitted"
        );
        eprintln!("{mode}: {inserted} rows of 8 MB before 1114");

        // Reads and deletes go on; the rows written before the limit are all there.
        let n: i64 = c
            .query_first("SELECT COUNT(*) FROM d.t WHERE id > 0")
            .unwrap()
            .unwrap();
        assert_eq!(n, i64::from(inserted), "{mode}");
        bystander_commits(&mut srv, b, mode);
        c.query_drop("DELETE FROM d.t WHERE id > 0").unwrap();
        assert_eq!(c.affected_rows(), u64::from(inserted), "{mode}");
        let mut next = srv.connect();
        let one: i64 = next.query_first("SELECT 1").unwrap().unwrap();
        assert_eq!(one, 1, "{mode}: a new connection is served");
    }
}

/// Inserts rows of `bytes` bytes into `d.t` (ids from 1) until one gets an error, which must
/// be 1114 "The table 't' is full" before `most` rows; returns the rows inserted.
fn insert_until_full(c: &mut mysql::Conn, bytes: usize, most: u32, mode: &str) -> u32 {
    let mut inserted = 0u32;
    let full = loop {
        assert!(
            inserted < most,
            "{mode}: {most} rows of {bytes} bytes fitted under the limit"
        );
        match c.exec_drop(
            "INSERT INTO d.t VALUES (?, REPEAT('x', ?))",
            (inserted + 1, bytes),
        ) {
            Ok(()) => inserted += 1,
            Err(e) => break server_error::<()>(Err(e)),
        }
    };
    assert_eq!(
        (full.code, full.state.as_str(), full.message.as_str()),
        (1114, "HY000", "The table 't' is full"),
        "{mode}"
    );
    inserted
}

/// The committed rows of `t` whose value is still `x` repeated.
fn rows_of_x(c: &mut mysql::Conn) -> i64 {
    c.query_first("SELECT COUNT(*) FROM d.t WHERE id > 0 AND c = REPEAT('x', 1000000)")
        .unwrap()
        .unwrap()
}

#[test]
fn tpbed_max_memory_fails_writes_past_it_with_1114() {
    for mode in MODES {
        let handling = format!("--thread-handling={mode}");
        let mut srv = TestServer::start(&[&handling, "--skip-log-bin"]);
        assert_eq!(
            srv.scalar("SELECT @@global.tpbed_max_memory"),
            "0",
            "{mode}"
        );
        let shown: Vec<(String, String)> = srv
            .connect()
            .query("SHOW VARIABLES LIKE 'tpbed_max_memory'")
            .unwrap();
        assert_eq!(shown, [("tpbed_max_memory".into(), "0".into())], "{mode}");
        let b = bystander(&srv);
        let mut c = srv.connect();
        c.query_drop("SET GLOBAL tpbed_max_memory = 268435456")
            .unwrap();
        assert_eq!(
            srv.scalar("SELECT @@global.tpbed_max_memory"),
            "268435456",
            "{mode}"
        );

        // 1 MB rows until the limit: 1114, with every row written before it committed.
        let inserted = insert_until_full(&mut c, 1_000_000, 300, mode);
        assert!(inserted >= 10, "{mode}: only {inserted} rows fitted");
        assert_eq!(rows_of_x(&mut c), i64::from(inserted), "{mode}");

        // An UPDATE writes new versions of its rows: past the limit it gets 1114 too, and
        // changes nothing.
        let e = server_error(
            c.query_drop("UPDATE d.t SET c = REPEAT('y', 1000000) WHERE id BETWEEN 1 AND 5"),
        );
        assert_eq!((e.code, e.state.as_str()), (1114, "HY000"), "{mode}: {e:?}");
        assert_eq!(
            rows_of_x(&mut c),
            i64::from(inserted),
            "{mode}: nothing lost"
        );

        // Reads, small statements, commits and deletes go on at the limit.
        bystander_commits(&mut srv, b, mode);
        let s: String = c.query_first("SELECT CONCAT('a', 'b')").unwrap().unwrap();
        assert_eq!(s, "ab", "{mode}");
        c.query_drop("DELETE FROM d.t WHERE id > 0").unwrap();
        assert_eq!(c.affected_rows(), u64::from(inserted), "{mode}");

        // Once purge has freed the deleted rows, writes fit again.
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            match c.exec_drop("INSERT INTO d.t VALUES (1000, REPEAT('z', 1000000))", ()) {
                Ok(()) => break,
                Err(e) => {
                    assert_eq!(server_error::<()>(Err(e)).code, 1114, "{mode}");
                    assert!(Instant::now() < deadline, "{mode}: purge freed nothing");
                    std::thread::sleep(Duration::from_millis(200));
                }
            }
        }
        c.query_drop("SET GLOBAL tpbed_max_memory = 0").unwrap();
        assert!(srv.is_running(), "{mode}");
    }
}

#[test]
fn kill_query_ends_a_function_building_a_huge_value() {
    for mode in MODES {
        let handling = format!("--thread-handling={mode}");
        let srv = TestServer::start(&[&handling, "--max-allowed-packet=1G"]);
        let mut victim = srv.connect();
        let id = victim.connection_id();
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            // About 1.4 GB of hex digits: seconds of work in one expression, no rows.
            let r = victim.query_first::<Option<i64>, _>(
                "SELECT LENGTH(HEX(HEX(HEX(REPEAT('a', 100000000)))))",
            );
            let _ = tx.send(r);
        });
        std::thread::sleep(Duration::from_millis(500));
        let killed_at = Instant::now();
        srv.connect()
            .query_drop(format!("KILL QUERY {id}"))
            .unwrap();
        let r = rx
            .recv_timeout(Duration::from_secs(30))
            .unwrap_or_else(|_| panic!("{mode}: KILL QUERY did not end the statement"));
        let e = server_error(r);
        assert_eq!((e.code, e.state.as_str()), (1317, "70100"), "{mode}: {e:?}");
        let took = killed_at.elapsed();
        assert!(
            took < Duration::from_secs(5),
            "{mode}: ended {took:?} after KILL"
        );
    }
}
