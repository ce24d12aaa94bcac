//! System variables and status counters: SET with MySQL's errors, SHOW with LIKE and WHERE,
//! `@@` reads, option files and command-line options, FLUSH STATUS, `Com_*`/`Questions`.

use mysql::prelude::*;
use tpbed_tests::{mysql_error, TestServer};

/// The server's error number and SQLSTATE for `r`.
fn code<T: std::fmt::Debug>(r: mysql::Result<T>) -> (u16, String) {
    let e = mysql_error(r);
    (e.code, e.state)
}

#[test]
fn set_follows_mysql_rules() {
    let srv = TestServer::start(&[]);
    let mut c = srv.connect();
    assert_eq!(
        code(c.query_drop("SET GLOBAL version = 'x'")),
        (1238, "HY000".into())
    );
    assert_eq!(
        code(c.query_drop("SET nosuch_var = 1")),
        (1193, "HY000".into())
    );
    assert_eq!(
        code(c.query_drop("SET autocommit = 7")),
        (1231, "42000".into())
    );
    assert_eq!(
        code(c.query_drop("SET transaction_isolation = 'SOMETIMES'")),
        (1231, "42000".into())
    );
    assert_eq!(
        code(c.query_drop("SET max_connections = 10")),
        (1229, "HY000".into())
    );
    assert_eq!(
        code(c.query_drop("SET max_allowed_packet = 4096")),
        (1621, "HY000".into())
    );
    assert_eq!(
        code(c.query_drop("SET wait_timeout = 'abc'")),
        (1232, "42000".into())
    );
    c.query_drop("SET GLOBAL max_connections = 500, @@session.wait_timeout = 99")
        .unwrap();
    let (mc, wt): (u64, u64) = c
        .query_first("SELECT @@global.max_connections, @@wait_timeout")
        .unwrap()
        .unwrap();
    assert_eq!((mc, wt), (500, 99));
    assert_eq!(
        code(c.query_first::<u64, _>("SELECT @@session.max_connections")),
        (1238, "HY000".into())
    );
    // Out of range is clamped with a warning, as MySQL does.
    c.query_drop("SET SESSION wait_timeout = 0").unwrap();
    let w: (String, u16, String) = c.query_first("SHOW WARNINGS").unwrap().unwrap();
    assert_eq!(w.1, 1292);
    c.query_drop("SET wait_timeout = DEFAULT").unwrap();
    let wt: u64 = c.query_first("SELECT @@wait_timeout").unwrap().unwrap();
    assert_eq!(wt, 28800);
    c.query_drop("SET tmp_table_size=2*1024*1024*1024").unwrap();
    let t: u64 = c.query_first("SELECT @@tmp_table_size").unwrap().unwrap();
    assert_eq!(t, 2 << 30);
    c.query_drop("SET NAMES latin1").unwrap();
    let cs: (String, String) = c
        .query_first("SELECT @@character_set_client, @@collation_connection")
        .unwrap()
        .unwrap();
    assert_eq!(cs, ("latin1".into(), "latin1_swedish_ci".into()));
    c.query_drop("SET SESSION TRANSACTION ISOLATION LEVEL READ COMMITTED")
        .unwrap();
    let iso: String = c
        .query_first("SELECT @@transaction_isolation")
        .unwrap()
        .unwrap();
    assert_eq!(iso, "READ-COMMITTED");
    // SET GLOBAL needs SYSTEM_VARIABLES_ADMIN or SUPER.
    c.query_drop("CREATE USER 'plain'@'%' IDENTIFIED BY 'p'")
        .unwrap();
    let mut p = mysql::Conn::new(srv.opts("plain", "p")).unwrap();
    assert_eq!(
        code(p.query_drop("SET GLOBAL max_connections = 10")),
        (1227, "42000".into())
    );
    p.query_drop("SET SESSION sql_mode = 'ANSI_QUOTES'")
        .unwrap();
}

#[test]
fn show_variables_and_status_filters_and_counters() {
    let srv = TestServer::start(&[]);
    let mut c = srv.connect();
    let rows: Vec<(String, String)> = c.query("SHOW VARIABLES LIKE 'max_conn%'").unwrap();
    assert_eq!(rows, vec![("max_connections".into(), "151".into())]);
    let rows: Vec<(String, String)> = c
        .query("SHOW GLOBAL VARIABLES WHERE Variable_name IN ('autocommit', 'port')")
        .unwrap();
    assert_eq!(rows[0], ("autocommit".into(), "ON".into()));
    assert_eq!(rows[1].1, srv.port.to_string());
    let before: (String, u64) = c
        .query_first("SHOW SESSION STATUS LIKE 'Com_select'")
        .unwrap()
        .unwrap();
    for _ in 0..5 {
        c.query_drop("SELECT 1").unwrap();
    }
    let after: (String, u64) = c
        .query_first("SHOW SESSION STATUS LIKE 'Com_select'")
        .unwrap()
        .unwrap();
    assert_eq!(after.1, before.1 + 5);
    let q: Vec<(String, String)> = c
        .query("SHOW GLOBAL STATUS WHERE Variable_name LIKE 'Threads_%'")
        .unwrap();
    let names: Vec<&str> = q.iter().map(|r| r.0.as_str()).collect();
    assert_eq!(
        names,
        vec![
            "Threads_cached",
            "Threads_connected",
            "Threads_created",
            "Threads_running"
        ]
    );
    let running: u64 = q[3].1.parse().unwrap();
    assert!(running >= 1, "this SHOW is running");
    let all: Vec<(String, String)> = c.query("SHOW GLOBAL STATUS").unwrap();
    for want in [
        "Questions",
        "Queries",
        "Connections",
        "Uptime",
        "Bytes_received",
        "Bytes_sent",
        "Aborted_clients",
        "Aborted_connects",
        "Max_used_connections",
        "Prepared_stmt_count",
        "Com_insert",
    ] {
        assert!(all.iter().any(|(n, _)| n == want), "SHOW STATUS has {want}");
    }
    c.query_drop("FLUSH STATUS").unwrap();
    let (_, n): (String, u64) = c
        .query_first("SHOW SESSION STATUS LIKE 'Com_select'")
        .unwrap()
        .unwrap();
    assert_eq!(n, 0, "FLUSH STATUS resets session counters");
    let (_, g): (String, u64) = c
        .query_first("SHOW GLOBAL STATUS LIKE 'Com_select'")
        .unwrap()
        .unwrap();
    assert!(g >= 5, "and keeps them in the global totals");
}

#[test]
fn option_file_and_command_line_use_mysql_names() {
    let dir = std::env::temp_dir().join(format!("tpbed-vars-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let cnf = dir.join("my.cnf");
    std::fs::write(
        &cnf,
        "[client]\nport=1\n[mysqld]\nmax_connections = 333\ninnodb_log_file_size = 48M\nno_such_option = 1\nplugin-load-add=thread_pool.so\nloose-foo=1\nwait-timeout=600\n",
    )
    .unwrap();
    let srv = TestServer::start(&[
        &format!("--defaults-file={}", cnf.display()),
        "--max-prepared-stmt-count",
        "99",
    ]);
    let mut c = srv.connect();
    let row: (u64, u64, String, u64) = c
        .query_first("SELECT @@max_connections, @@max_prepared_stmt_count, @@thread_handling, @@wait_timeout")
        .unwrap()
        .unwrap();
    assert_eq!(row, (333, 99, "loaded-dynamically".into(), 600));
    assert!(srv.wait_for_log(
        "'innodb_log_file_size' is a MySQL option tpbed does not model",
        std::time::Duration::from_secs(2)
    ));
    assert!(srv.wait_for_log(
        "unknown variable 'no_such_option' ignored",
        std::time::Duration::from_secs(2)
    ));
    std::fs::remove_dir_all(dir).unwrap();
}
