//! The general and slow query logs: written to files in mysqld 8.0's formats, switched and
//! moved at run time as in MySQL, and read by the DBA's tools (`mysqldumpslow`,
//! `pt-query-digest`).

use std::path::{Path, PathBuf};
use std::process::Command;

use mysql::prelude::*;
use tpbed_tests::{code, has_program, on_path, require_tool, TestServer};

/// A fresh directory for one test's log files, removed when dropped.
struct LogDir(PathBuf);

impl LogDir {
    fn new(name: &str) -> LogDir {
        let dir = std::env::temp_dir().join(format!("tpbed-qlog-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        LogDir(dir)
    }

    fn file(&self, name: &str) -> String {
        self.0.join(name).display().to_string()
    }
}

impl Drop for LogDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn read(path: &str) -> String {
    std::fs::read_to_string(path).unwrap_or_default()
}

fn run_tool(program: &str, args: &[&str]) -> String {
    let out = Command::new(program).args(args).output().unwrap();
    assert!(
        out.status.success(),
        "{program} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

#[test]
fn general_log_is_switched_and_moved_at_run_time() {
    let dir = LogDir::new("general");
    let datadir = format!("--datadir={}", dir.0.display());
    let srv = TestServer::start(&[&datadir, "--general-log=OFF"]);
    let mut c = srv.connect();
    let id = c.connection_id();
    // The default file is host_name.log in the data directory.
    let default: String = c.query_first("SELECT @@general_log_file").unwrap().unwrap();
    assert_eq!(Path::new(&default), dir.0.join("localhost.log"));
    c.query_drop("SELECT 'before'").unwrap();
    let moved = dir.file("general.log");
    c.query_drop(format!("SET GLOBAL general_log_file = '{moved}'"))
        .unwrap();
    c.query_drop("SET GLOBAL general_log = ON").unwrap();
    c.query_drop("SELECT 'logged'").unwrap();
    c.query_drop("SET GLOBAL general_log = OFF").unwrap();
    c.query_drop("SELECT 'after'").unwrap();
    let text = read(&moved);
    assert!(text.starts_with("tpbed-server, Version: "), "{text}");
    assert!(
        text.contains("Time                 Id Command    Argument\n"),
        "{text}"
    );
    let line = text
        .lines()
        .find(|l| l.contains("SELECT 'logged'"))
        .unwrap_or_else(|| panic!("no Query line: {text}"));
    // mysqld's layout: ISO 8601 time, TAB, the id right-aligned in 5, the command, TAB.
    let (time, rest) = line.split_once('\t').unwrap();
    assert!(time.ends_with('Z') && time.contains('T'), "{line}");
    assert_eq!(rest, format!("{id:>5} Query\tSELECT 'logged'"));
    assert!(
        !text.contains("'before'") && !text.contains("'after'"),
        "{text}"
    );
    assert!(
        !Path::new(&default).exists(),
        "nothing went to the default file"
    );
    // Only files: TABLE is refused and FILE stays.
    assert_eq!(code(c.query_drop("SET GLOBAL log_output = 'TABLE'")), 1235);
    assert_eq!(
        code(c.query_drop("SET GLOBAL log_output = 'FILE,TABLE'")),
        1235
    );
    let out: String = c.query_first("SELECT @@log_output").unwrap().unwrap();
    assert_eq!(out, "FILE");
    // A file that cannot be opened is refused and the log stays where it was.
    c.query_drop("SET GLOBAL general_log = ON").unwrap();
    let bad = "/nonexistent-dir/x.log";
    assert_eq!(
        code(c.query_drop(format!("SET GLOBAL general_log_file = '{bad}'"))),
        1231
    );
    c.query_drop("SELECT 'still here'").unwrap();
    assert!(read(&moved).contains("SELECT 'still here'"));
    // With the log off too, MySQL checks the name when it is set: no option files, no
    // directory, no missing directory.
    c.query_drop("SET GLOBAL slow_query_log = OFF").unwrap();
    for (var, bad) in [
        ("general_log_file", dir.file("my.cnf")),
        ("slow_query_log_file", dir.file("tpbed.INI")),
        ("slow_query_log_file", dir.0.display().to_string()),
        ("slow_query_log_file", dir.file("missing/slow.log")),
    ] {
        assert_eq!(
            code(c.query_drop(format!("SET GLOBAL {var} = '{bad}'"))),
            1231,
            "{var} = {bad}"
        );
    }
    c.query_drop(format!(
        "SET GLOBAL slow_query_log_file = '{}'",
        dir.file("s.log")
    ))
    .unwrap();
    // log_output=NONE keeps the switch on but writes nothing.
    c.query_drop("SET GLOBAL log_output = 'NONE'").unwrap();
    c.query_drop("SELECT 'not written'").unwrap();
    assert!(!read(&moved).contains("not written"));
}

#[test]
fn slow_log_takes_statements_longer_than_long_query_time() {
    let dir = LogDir::new("slow");
    let slow = dir.file("slow.log");
    let file = format!("--slow-query-log-file={slow}");
    let srv = TestServer::start(&["--slow-query-log=ON", &file, "--long-query-time=0.2"]);
    let mut c = srv.connect();
    let lqt: String = c.query_first("SELECT @@long_query_time").unwrap().unwrap();
    assert_eq!(lqt, "0.200000");
    c.query_drop("SELECT 'fast'").unwrap();
    c.query_drop("SELECT SLEEP(0.3), 'slow'").unwrap();
    let text = read(&slow);
    assert!(!text.contains("'fast'"), "{text}");
    let at = text.find("# Time: ").expect("an entry");
    let entry: Vec<&str> = text[at..].lines().collect();
    assert!(entry[1].starts_with("# User@Host: root[root] @ localhost [127.0.0.1]  Id: "));
    let q: Vec<&str> = entry[2].split_whitespace().collect();
    assert_eq!(q[0..2], ["#", "Query_time:"], "{}", entry[2]);
    let secs: f64 = q[2].parse().unwrap();
    assert!((0.3..5.0).contains(&secs), "{}", entry[2]);
    assert_eq!(q[3], "Lock_time:");
    assert_eq!(q[5..], ["Rows_sent:", "1", "Rows_examined:", "0"]);
    assert!(entry[3].starts_with("SET timestamp="), "{text}");
    assert_eq!(entry[4], "SELECT SLEEP(0.3), 'slow';");
    let n: (String, String) = c
        .query_first("SHOW SESSION STATUS LIKE 'Slow_queries'")
        .unwrap()
        .unwrap();
    assert_eq!(n.1, "1");
    // Off at run time: nothing more is written.
    c.query_drop("SET GLOBAL slow_query_log = OFF").unwrap();
    c.query_drop("SELECT SLEEP(0.3), 'unlogged'").unwrap();
    assert!(!read(&slow).contains("'unlogged'"));
}

/// A claim with `FOR UPDATE SKIP LOCKED` that skips 10,000 rows another transaction holds
/// reports only the rows it returned as examined. MySQL counts a row as examined when the
/// storage engine hands it to the executor (`sql/sql_executor.cc`,
/// `thd->inc_examined_row_count` per row read); InnoDB's `row_search_mvcc`
/// (`storage/innobase/row/row0sel.cc`) moves past a record whose lock is `DB_SKIP_LOCKED`
/// inside the engine (`goto next_rec`) without returning it, so skipped rows are not counted
/// (the MySQL 8.0 manual, "Locking Read Concurrency with NOWAIT and SKIP LOCKED": skipped rows
/// are removed from the result set by the engine).
#[test]
fn skip_locked_claim_counts_only_the_rows_it_returned() {
    let dir = LogDir::new("skip");
    let slow = dir.file("slow.log");
    let file = format!("--slow-query-log-file={slow}");
    let srv = TestServer::start(&["--slow-query-log=ON", &file]);
    let mut holder = srv.connect();
    holder.query_drop("CREATE DATABASE q").unwrap();
    holder
        .query_drop("CREATE TABLE q.jobs (id INT PRIMARY KEY, status INT NOT NULL)")
        .unwrap();
    for chunk in 0..11 {
        let rows: Vec<String> = (1..=1000)
            .map(|i| format!("({}, 0)", chunk * 1000 + i))
            .collect();
        holder
            .query_drop(format!("INSERT INTO q.jobs VALUES {}", rows.join(",")))
            .unwrap();
    }
    holder.query_drop("BEGIN").unwrap();
    let held: Vec<i64> = holder
        .query("SELECT id FROM q.jobs WHERE id <= 10000 FOR UPDATE")
        .unwrap();
    assert_eq!(held.len(), 10_000);
    let mut worker = srv.connect_db("q");
    worker.query_drop("SET long_query_time = 0").unwrap();
    worker.query_drop("BEGIN").unwrap();
    let claim = "SELECT id FROM jobs WHERE status = 0 ORDER BY id LIMIT 5 FOR UPDATE SKIP LOCKED";
    let got: Vec<i64> = worker.query(claim).unwrap();
    assert_eq!(got, vec![10_001, 10_002, 10_003, 10_004, 10_005]);
    worker.query_drop("COMMIT").unwrap();
    holder.query_drop("COMMIT").unwrap();
    let text = read(&slow);
    let at = text
        .find(&format!("{claim};"))
        .expect("the claim is logged");
    let stats = text[..at]
        .lines()
        .rev()
        .find(|l| l.starts_with("# Query_time: "))
        .unwrap();
    assert!(
        stats.ends_with("Rows_sent: 5  Rows_examined: 5"),
        "skipped rows are not examined: {stats}"
    );

    if require_tool("mysqldumpslow", on_path("mysqldumpslow")) {
        // Grouped by statement with numbers abstracted; the counts come from each entry.
        let summary = run_tool("mysqldumpslow", &["-s", "c", &slow]);
        assert!(
            summary.contains("ORDER BY id LIMIT N FOR UPDATE SKIP LOCKED"),
            "{summary}"
        );
    }
    if require_tool("pt-query-digest", has_program("pt-query-digest")) {
        let report = run_tool("pt-query-digest", &["--limit", "100%", &slow]);
        // The claim's section ends with its text; its attribute table comes before.
        let at = report
            .find("FOR UPDATE SKIP LOCKED\\G")
            .unwrap_or_else(|| panic!("the claim is not in the report: {report}"));
        let examined = report[..at]
            .lines()
            .rev()
            .find(|l| l.starts_with("# Rows examine"))
            .unwrap_or_else(|| panic!("no rows examined: {report}"));
        let fields: Vec<&str> = examined.split_whitespace().collect();
        assert_eq!(fields[4], "5", "total rows examined: {examined}");
    }
}
