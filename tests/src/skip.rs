//! Skips that cannot pass silently: a test that cannot run what it names (an outside tool
//! missing, io_uring unusable, a resource limit too low) says so on the terminal, past the
//! test harness's output capture, and under `TPBED_REQUIRE_TOOLS=1` fails instead.

use std::io::Write;
use std::process::{Command, Stdio};

/// Whether every test must run what it names (`TPBED_REQUIRE_TOOLS=1`, set by `.ci/run`).
fn everything_required() -> bool {
    std::env::var("TPBED_REQUIRE_TOOLS").as_deref() == Ok("1")
}

/// Ends the calling test's claim to have run: panics under `TPBED_REQUIRE_TOOLS=1`, otherwise
/// writes `SKIPPED <test>: <reason>` to the terminal (not to the captured output, so the
/// skip shows in a plain `cargo test`). The caller returns without running its checks.
pub fn skip(reason: &str) {
    let test = std::thread::current()
        .name()
        .unwrap_or("a test")
        .to_string();
    if everything_required() {
        panic!("{test} cannot run (TPBED_REQUIRE_TOOLS=1): {reason}");
    }
    // Straight to the process's stderr: the harness captures only `print!`/`eprint!`.
    let _ = writeln!(std::io::stderr().lock(), "SKIPPED {test}: {reason}");
}

/// Whether an outside tool is available. Without it: [`skip`]s (which panics under
/// `TPBED_REQUIRE_TOOLS=1`) and returns false.
pub fn require_tool(what: &str, available: bool) -> bool {
    if !available {
        skip(&format!(
            "{what} is not installed; install it (see .ci/run)"
        ));
    }
    available
}

/// Whether `program` runs (`program --version` exits successfully).
pub fn has_program(program: &str) -> bool {
    Command::new(program)
        .arg("--version")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

/// Whether `program` is on the PATH (for tools without a `--version` that exits 0).
pub fn on_path(program: &str) -> bool {
    std::env::var_os("PATH")
        .is_some_and(|path| std::env::split_paths(&path).any(|dir| dir.join(program).is_file()))
}

/// Whether python3 can import `module`.
pub fn has_python_module(module: &str) -> bool {
    Command::new("python3")
        .args(["-c", &format!("import {module}")])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}
