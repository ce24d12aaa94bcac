//! The server's system calls and context switches over the measured window, as the kernel
//! counts them: `perf stat` attached to the server's PID with the `raw_syscalls:sys_enter`
//! tracepoint and the `context-switches` software event (every thread of the server, those it
//! creates meanwhile included). Where perf is missing or not allowed, the reason is kept.

use std::io::Read;
use std::process::{Child, Command, Stdio};

/// The events counted, in the order `perf stat` prints them.
const EVENTS: &str = "raw_syscalls:sys_enter,context-switches";

/// Counts over one window.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct KernelCounts {
    /// System calls entered.
    pub(crate) syscalls: f64,
    /// Context switches.
    pub(crate) context_switches: f64,
}

/// A `perf stat` counting the server since [`Counting::start`].
#[derive(Debug)]
pub(crate) struct Counting {
    child: Child,
}

impl Counting {
    /// Starts counting the process `pid`.
    pub(crate) fn start(pid: u32) -> Result<Counting, String> {
        let child = Command::new("perf")
            .args(["stat", "-x", ",", "-e", EVENTS, "-p", &pid.to_string()])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .map_err(|e| format!("perf could not be started: {e}"))?;
        Ok(Counting { child })
    }

    /// Stops counting (perf prints its counts on SIGINT) and reads them.
    pub(crate) fn finish(mut self) -> Result<KernelCounts, String> {
        let pid = nix::unistd::Pid::from_raw(self.child.id() as i32);
        let _ = nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGINT);
        let mut err = String::new();
        if let Some(mut e) = self.child.stderr.take() {
            let _ = e.read_to_string(&mut err);
        }
        let _ = self.child.wait();
        parse(&err)
    }
}

/// The counts in `perf stat -x,` output (value, unit, event, ...), or why there are none.
fn parse(out: &str) -> Result<KernelCounts, String> {
    let value = |event: &str| {
        let line = out
            .lines()
            .find(|l| l.split(',').nth(2) == Some(event))
            .ok_or_else(|| format!("perf printed no count of {event}: {}", out.trim()))?;
        let v = line.split(',').next().unwrap_or("");
        v.parse::<f64>()
            .map_err(|_| format!("perf could not count {event}: {v}"))
    };
    Ok(KernelCounts {
        syscalls: value("raw_syscalls:sys_enter")?,
        context_switches: value("context-switches")?,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_are_read_from_perfs_csv_and_a_refusal_says_why() {
        let out = "1234,,raw_syscalls:sys_enter,2000000,100.00,,\n56,,context-switches,2000000,100.00,28.000,/sec\n";
        assert_eq!(
            parse(out),
            Ok(KernelCounts {
                syscalls: 1234.0,
                context_switches: 56.0
            })
        );
        let refused =
            "<not supported>,,raw_syscalls:sys_enter,0,100.00,,\n3,,context-switches,1,100.00,,\n";
        assert!(parse(refused).unwrap_err().contains("<not supported>"));
        assert!(parse("Error: no access").unwrap_err().contains("no access"));
    }

    #[test]
    fn a_live_process_is_counted_where_perf_is_allowed() {
        let counted = Counting::start(std::process::id()).and_then(|c| {
            std::thread::sleep(std::time::Duration::from_millis(300));
            for _ in 0..1000 {
                let _ = std::fs::metadata("/");
            }
            c.finish()
        });
        match counted {
            Ok(k) => assert!(k.syscalls >= 1000.0, "{k:?}"),
            Err(e) => {
                let msg = format!("skipped: {e} (apt-get install linux-perf, as root)");
                assert!(
                    std::env::var("TPBED_REQUIRE_TOOLS").as_deref() != Ok("1"),
                    "{msg}"
                );
                eprintln!("{msg}");
            }
        }
    }
}
