//! The server's system calls and context switches over the measured window, as the kernel
//! counts them: `perf stat` attached to the server's PID with the `raw_syscalls:sys_enter`
//! tracepoint and the `context-switches` software event (every thread of the server, those it
//! creates meanwhile included). [`Counting::start`] returns only once perf has acknowledged that
//! its counters are enabled, so the window starts when the caller's does however long perf
//! takes to set up. Where perf is missing or not allowed, the reason is kept.

use std::fs::{File, OpenOptions};
use std::io::{Read, Write};
use std::os::unix::fs::OpenOptionsExt as _;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// The events counted, in the order `perf stat` prints them.
const EVENTS: &str = "raw_syscalls:sys_enter,context-switches";

/// How long perf may take to set up its counters before counting is given up.
const SETUP_LIMIT: Duration = Duration::from_secs(20);

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
    fifos: Fifos,
}

/// The two FIFOs of perf's `--control`: commands in, acknowledgements out. Removed on drop.
#[derive(Debug)]
struct Fifos {
    dir: PathBuf,
}

impl Fifos {
    fn new() -> Result<Fifos, String> {
        use std::sync::atomic::{AtomicU32, Ordering};
        static NEXT: AtomicU32 = AtomicU32::new(0);
        let n = NEXT.fetch_add(1, Ordering::Relaxed);
        let dir = std::env::temp_dir().join(format!("tpbed-perf-{}-{n}", std::process::id()));
        std::fs::create_dir_all(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
        let fifos = Fifos { dir };
        for path in [fifos.ctl(), fifos.ack()] {
            nix::unistd::mkfifo(
                &path,
                nix::sys::stat::Mode::S_IRUSR | nix::sys::stat::Mode::S_IWUSR,
            )
            .map_err(|e| format!("mkfifo {}: {e}", path.display()))?;
        }
        Ok(fifos)
    }

    fn ctl(&self) -> PathBuf {
        self.dir.join("ctl")
    }

    fn ack(&self) -> PathBuf {
        self.dir.join("ack")
    }
}

impl Drop for Fifos {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

impl Counting {
    /// Starts counting the process `pid`: perf starts with its counters disabled, and they are
    /// enabled, and acknowledged, before this returns.
    pub(crate) fn start(pid: u32) -> Result<Counting, String> {
        let fifos = Fifos::new()?;
        let control = format!("fifo:{},{}", fifos.ctl().display(), fifos.ack().display());
        let child = Command::new("perf")
            .args([
                "stat",
                "-x",
                ",",
                "-e",
                EVENTS,
                "--delay",
                "-1",
                "--control",
                &control,
            ])
            .args(["-p", &pid.to_string()])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .map_err(|e| format!("perf could not be started: {e}"))?;
        let mut counting = Counting { child, fifos };
        match counting.enable() {
            Ok(()) => Ok(counting),
            Err(why) => {
                let said = counting.stop();
                Err(format!("{why}: {}", said.trim()))
            }
        }
    }

    /// Sends `enable` on the control FIFO and waits for perf's `ack`.
    fn enable(&mut self) -> Result<(), String> {
        let deadline = Instant::now() + SETUP_LIMIT;
        let mut ctl = self.open_when_perf_listens(deadline)?;
        let mut ack = OpenOptions::new()
            .read(true)
            .custom_flags(libc::O_NONBLOCK)
            .open(self.fifos.ack())
            .map_err(|e| format!("perf's acknowledgement FIFO: {e}"))?;
        ctl.write_all(b"enable\n")
            .map_err(|e| format!("perf's control FIFO: {e}"))?;
        wait_for_ack(&mut ack, deadline)
    }

    /// The control FIFO opened for writing, once perf has opened it (opening a FIFO without
    /// a reader fails with ENXIO when non-blocking); an error if perf exits or the limit passes.
    fn open_when_perf_listens(&mut self, deadline: Instant) -> Result<File, String> {
        loop {
            match OpenOptions::new()
                .write(true)
                .custom_flags(libc::O_NONBLOCK)
                .open(self.fifos.ctl())
            {
                Ok(f) => return Ok(f),
                Err(e) if e.raw_os_error() == Some(libc::ENXIO) => {}
                Err(e) => return Err(format!("perf's control FIFO: {e}")),
            }
            if let Ok(Some(status)) = self.child.try_wait() {
                return Err(format!("perf exited ({status}) before counting"));
            }
            if Instant::now() >= deadline {
                return Err(format!(
                    "perf did not open its control FIFO in {SETUP_LIMIT:?}"
                ));
            }
            std::thread::sleep(Duration::from_millis(5));
        }
    }

    /// Stops perf (it prints its counts on SIGINT) and returns what it wrote to stderr.
    fn stop(&mut self) -> String {
        let pid = nix::unistd::Pid::from_raw(self.child.id() as i32);
        let _ = nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGINT);
        let mut err = String::new();
        if let Some(mut e) = self.child.stderr.take() {
            let _ = e.read_to_string(&mut err);
        }
        let _ = self.child.wait();
        err
    }

    /// Stops counting and reads the counts.
    pub(crate) fn finish(mut self) -> Result<KernelCounts, String> {
        parse(&self.stop())
    }
}

/// Waits until perf writes `ack` on its acknowledgement FIFO, or the deadline passes.
fn wait_for_ack(ack: &mut File, deadline: Instant) -> Result<(), String> {
    use std::os::fd::AsFd as _;
    let mut said = Vec::new();
    while !said.windows(3).any(|w| w == b"ack") {
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return Err(format!(
                "perf did not enable its counters in {SETUP_LIMIT:?}"
            ));
        }
        let ms = u16::try_from(left.as_millis()).unwrap_or(u16::MAX);
        let mut fds = [nix::poll::PollFd::new(
            ack.as_fd(),
            nix::poll::PollFlags::POLLIN,
        )];
        match nix::poll::poll(&mut fds, nix::poll::PollTimeout::from(ms)) {
            Ok(0) | Err(nix::errno::Errno::EINTR) => continue,
            Ok(_) => {}
            Err(e) => return Err(format!("waiting for perf: {e}")),
        }
        let mut buf = [0u8; 64];
        match ack.read(&mut buf) {
            Ok(0) => return Err("perf closed its acknowledgement FIFO".to_string()),
            Ok(n) => said.extend_from_slice(&buf[..n]),
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {}
            Err(e) => return Err(format!("perf's acknowledgement FIFO: {e}")),
        }
    }
    Ok(())
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
    fn a_live_process_is_counted_from_start_to_finish_where_perf_is_allowed() {
        let counted = Counting::start(std::process::id()).and_then(|c| {
            for _ in 0..1000 {
                let _ = std::fs::metadata("/");
            }
            c.finish()
        });
        match counted {
            // No pause after `start`: its counters are already enabled when it returns.
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
