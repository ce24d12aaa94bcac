//! Outside clients against the real binary: the `mariadb` CLI (batch and interactive-style
//! input) and PyMySQL, in every connection-handling mode. Each skips with a printed reason
//! when the tool is missing, unless TPBED_REQUIRE_TOOLS=1.

use std::io::Write;
use std::process::{Command, Stdio};

use tpbed_tests::{each_mode, has_program, has_python_module, require_tool, TestServer};

fn mariadb(srv: &TestServer, extra: &[&str], stdin: Option<&str>) -> (bool, String, String) {
    let mut cmd = Command::new("mariadb");
    cmd.args(["-h127.0.0.1", &format!("-P{}", srv.port), "-uroot"])
        .args(extra);
    cmd.stdin(if stdin.is_some() {
        Stdio::piped()
    } else {
        Stdio::null()
    });
    cmd.stdout(Stdio::piped()).stderr(Stdio::piped());
    let mut child = cmd.spawn().expect("run mariadb");
    if let Some(input) = stdin {
        child
            .stdin
            .take()
            .unwrap()
            .write_all(input.as_bytes())
            .unwrap();
    }
    let out = child.wait_with_output().unwrap();
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

each_mode! {
    fn mariadb_cli_gets_the_right_values(mode) {
        if !require_tool("the mariadb CLI", has_program("mariadb")) {
            return;
        }
        let srv = mode.start(&[]);
        let (ok, out, err) = mariadb(
            &srv,
            &["-N", "-e", "select @@version_comment, 1+1, now()"],
            None,
        );
        assert!(ok, "mariadb failed: {err}");
        let cols: Vec<&str> = out.trim_end().split('\t').collect();
        assert_eq!(cols.len(), 3, "{out}");
        assert!(cols[0].contains("tpbed"), "{out}");
        assert_eq!(cols[1], "2");
        assert_eq!(cols[2].len(), 19, "now(): {out}");
        // Session statements the CLI's commands send: \s (status), USE, SHOW, SET.
        let script = "status\nselect DATABASE(), USER() limit 1;\ncreate database cli_db;\nuse cli_db\nselect database();\n\
                      set session wait_timeout = 77;\nselect @@wait_timeout;\nshow variables like 'max_conn%';\nexit\n";
        let (ok, out, err) = mariadb(&srv, &["-A", "-t"], Some(script));
        assert!(ok, "interactive-style session failed: {err}\n{out}");
        assert!(out.contains("tpbed"), "status shows the server: {out}");
        assert!(
            out.contains("Uptime:"),
            "status shows COM_STATISTICS: {out}"
        );
        assert!(out.contains("| cli_db "), "{out}");
        assert!(out.contains(" 77 |"), "{out}");
        assert!(out.contains("max_connections"), "{out}");
        // An error is reported with MySQL's code and SQLSTATE, and the session goes on.
        let (ok, _, err) = mariadb(&srv, &["-e", "select nosuchfunc(1)"], None);
        assert!(!ok);
        assert!(err.contains("ERROR 1305 (42000)"), "{err}");
        let (ok, _, err) = mariadb(&srv, &["-e", "selec 1"], None);
        assert!(!ok);
        assert!(
            err.contains("ERROR 1064 (42000)") && err.contains("near 'selec 1'"),
            "{err}"
        );
    }
}

each_mode! {
    fn pymysql_connects_and_reads_typed_values(mode) {
        if !require_tool("python3 with PyMySQL", has_python_module("pymysql")) {
            return;
        }
        let srv = mode.start(&[]);
        let script = format!(
            r#"
import pymysql, datetime, decimal
c = pymysql.connect(host="127.0.0.1", port={port}, user="root", password="")
cur = c.cursor()
cur.execute("select @@version_comment, 1+1, now(), 2.50, 1e3, NULL, 'x'")
v = cur.fetchone()
assert "tpbed" in v[0], v
assert v[1] == 2 and isinstance(v[1], int), v
assert isinstance(v[2], datetime.datetime), v
assert v[3] == decimal.Decimal("2.50"), v
assert v[4] == 1000.0 and isinstance(v[4], float), v
assert v[5] is None and v[6] == "x", v
cur.execute("select @@autocommit, @@transaction_isolation")
assert cur.fetchone() == (0, "REPEATABLE-READ")
cur.execute("select %s + 1, %s", (41, "quoted ' string"))
assert cur.fetchone() == (42, "quoted ' string")
cur.execute("SET @@session.sql_mode = 'STRICT_TRANS_TABLES'")
cur.execute("select @@sql_mode")
assert cur.fetchone()[0] == "STRICT_TRANS_TABLES"
try:
    cur.execute("set global version = 'x'")
    raise SystemExit("read-only variable was set")
except pymysql.err.OperationalError as e:
    assert e.args[0] == 1238, e
c.close()
try:
    pymysql.connect(host="127.0.0.1", port={port}, user="root", password="wrong")
    raise SystemExit("wrong password accepted")
except pymysql.err.OperationalError as e:
    assert e.args[0] == 1045, e
print("ok")
"#,
            port = srv.port
        );
        let out = Command::new("python3")
            .args(["-c", &script])
            .output()
            .unwrap();
        assert!(
            out.status.success() && String::from_utf8_lossy(&out.stdout).contains("ok"),
            "pymysql script failed:\n{}\n{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
    }
}
