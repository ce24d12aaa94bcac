//! sysbench 1.0 as the tests run it: its OLTP scripts against a server on 127.0.0.1 with four
//! tables of 1,000 rows, failing the test on any fatal error.

use std::process::Command;

/// Runs sysbench's `script` with `args` against `port` as `user`/`password` on database
/// `sbtest`; panics, with sysbench's output, when it fails or prints a fatal error. Returns
/// its output.
pub fn sysbench(port: u16, user: &str, password: &str, script: &str, args: &[String]) -> String {
    let out = Command::new("sysbench")
        .arg(script)
        .args([
            "--mysql-host=127.0.0.1".to_string(),
            format!("--mysql-port={port}"),
            format!("--mysql-user={user}"),
            format!("--mysql-password={password}"),
            "--mysql-db=sbtest".to_string(),
            "--tables=4".to_string(),
            "--table-size=1000".to_string(),
        ])
        .args(args)
        .output()
        .expect("run sysbench");
    checked_output(&out, &format!("sysbench {script} {args:?} on port {port}"))
}

/// A finished sysbench's stdout and stderr as one text; panics, naming `what` and with the
/// text, when it exited with an error or printed a fatal error or a failed statement.
pub fn checked_output(out: &std::process::Output, what: &str) -> String {
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    let fatal: Vec<&str> = text
        .lines()
        .filter(|l| {
            let l = l.to_ascii_lowercase();
            l.contains("fatal") || l.contains("failed") || l.starts_with("error")
        })
        .collect();
    assert!(
        out.status.success() && fatal.is_empty(),
        "{what} failed ({fatal:?}):\n{text}"
    );
    text
}

/// The number after `what` on sysbench's report line that starts with it (0 if none).
pub fn counted(text: &str, what: &str) -> u64 {
    text.lines()
        .find(|l| l.trim_start().starts_with(what))
        .and_then(|l| {
            l.split_whitespace()
                .nth(if what == "ignored errors:" { 2 } else { 1 })
        })
        .and_then(|n| n.parse().ok())
        .unwrap_or(0)
}
