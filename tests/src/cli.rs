//! Running the outside command-line clients (the mariadb CLI, mariadb-dump) against a server
//! on 127.0.0.1.

use std::io::Write;
use std::process::{Command, Output, Stdio};

/// Runs `program` against 127.0.0.1:`port` with `args` and `input` on stdin; returns what it
/// did (status, stdout, stderr).
pub fn cli_output(program: &str, port: u16, args: &[&str], input: &[u8]) -> Output {
    let mut child = Command::new(program)
        .args(["--no-defaults", "-h127.0.0.1", &format!("-P{port}")])
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("run {program}: {e}"));
    child.stdin.take().unwrap().write_all(input).unwrap();
    child.wait_with_output().unwrap()
}

/// [`cli_output`] that panics unless the program succeeds; returns its stdout.
pub fn run_cli(program: &str, port: u16, args: &[&str], input: &[u8]) -> Vec<u8> {
    let out = cli_output(program, port, args, input);
    assert!(
        out.status.success(),
        "{program} {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    out.stdout
}
