//! Facts about the client machine and a local server process: cores, CPU model, kernel, CPU
//! placement, git revision, /proc samples (threads, RSS, CPU time), file-descriptor limit.

use std::path::Path;

/// The machine a report was measured on.
#[derive(Debug, Clone, Default)]
pub(crate) struct Machine {
    /// `nproc` (online CPUs).
    pub(crate) cores: usize,
    /// /proc/cpuinfo model name.
    pub(crate) model: String,
    /// `uname -r`.
    pub(crate) kernel: String,
    /// CPUs this process may run on (its affinity mask).
    pub(crate) client_cpus: String,
    /// Git revision of the working tree tpbed-load was run from, if any.
    pub(crate) git_rev: String,
}

impl Machine {
    /// Collects the facts.
    pub(crate) fn collect() -> Machine {
        let cpuinfo = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
        let model = cpuinfo
            .lines()
            .find(|l| l.starts_with("model name"))
            .and_then(|l| l.split_once(':'))
            .map(|(_, v)| v.trim().to_string())
            .unwrap_or_else(|| "unknown".into());
        let kernel = std::fs::read_to_string("/proc/sys/kernel/osrelease")
            .unwrap_or_default()
            .trim()
            .to_string();
        // SAFETY: sysconf has no memory-safety preconditions.
        let cores = unsafe { libc::sysconf(libc::_SC_NPROCESSORS_ONLN) }.max(1) as usize;
        Machine {
            cores,
            model,
            kernel,
            client_cpus: affinity(None),
            git_rev: git_rev(),
        }
    }
}

/// The CPU list a process (None: this one) may run on, from /proc/PID/status.
pub(crate) fn affinity(pid: Option<u32>) -> String {
    let path = match pid {
        Some(p) => format!("/proc/{p}/status"),
        None => "/proc/self/status".into(),
    };
    std::fs::read_to_string(path)
        .unwrap_or_default()
        .lines()
        .find(|l| l.starts_with("Cpus_allowed_list:"))
        .map(|l| l["Cpus_allowed_list:".len()..].trim().to_string())
        .unwrap_or_default()
}

/// `git rev-parse --short HEAD` plus `-dirty`, of the repository holding the current directory,
/// else of the one holding the tpbed-load executable (e.g. `target/release` inside the tree).
pub(crate) fn git_rev() -> String {
    let here = std::env::current_dir().ok();
    let exe = std::env::current_exe()
        .ok()
        .and_then(|e| e.parent().map(Path::to_path_buf));
    for dir in [here, exe].into_iter().flatten() {
        let rev = git_rev_in(&dir);
        if rev != "unknown" {
            return rev;
        }
    }
    "unknown".into()
}

fn git_rev_in(dir: &Path) -> String {
    let run = |args: &[&str]| {
        std::process::Command::new("git")
            .arg("-C")
            .arg(dir)
            .args(args)
            .output()
            .ok()
            .filter(|o| o.status.success())
            .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
    };
    match run(&["rev-parse", "--short", "HEAD"]) {
        Some(rev) => {
            let dirty = run(&["status", "--porcelain", "--untracked-files=no"])
                .is_some_and(|s| !s.is_empty());
            if dirty {
                format!("{rev}-dirty")
            } else {
                rev
            }
        }
        None => "unknown".into(),
    }
}

/// A sample of a local process from /proc.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub(crate) struct ProcSample {
    /// OS threads.
    pub(crate) threads: u64,
    /// Resident set size in KiB.
    pub(crate) rss_kb: u64,
    /// utime + stime in seconds.
    pub(crate) cpu_secs: f64,
    /// Threads named as a tpbed thread pool's connection handlers (`tpN-chM`); `None` when
    /// no thread carries a tpbed pool name (another server, or one thread per connection).
    pub(crate) pool_ch_threads: Option<u64>,
}

/// Samples `/proc/<pid>` (None if the process is gone).
pub(crate) fn proc_sample(pid: u32) -> Option<ProcSample> {
    let dir = format!("/proc/{pid}");
    let status = std::fs::read_to_string(format!("{dir}/status")).ok()?;
    let field = |name: &str| {
        status
            .lines()
            .find(|l| l.starts_with(name))
            .and_then(|l| l[name.len()..].split_whitespace().next())
            .and_then(|v| v.parse::<u64>().ok())
            .unwrap_or(0)
    };
    Some(ProcSample {
        threads: field("Threads:"),
        rss_kb: field("VmRSS:"),
        cpu_secs: proc_cpu_secs(Path::new(&dir)),
        pool_ch_threads: pool_ch_threads(Path::new(&dir)),
    })
}

/// The kind of tpbed pool thread a thread name `tpN-ROLEM` names (`q`, `l` or `ch`).
fn pool_role(name: &str) -> Option<&str> {
    let rest = name.strip_prefix("tp")?;
    let (group, role_no) = rest.split_once('-')?;
    let role = role_no.trim_end_matches(|c: char| c.is_ascii_digit());
    let numbered = role.len() < role_no.len() && group.bytes().all(|b| b.is_ascii_digit());
    (numbered && !group.is_empty() && matches!(role, "q" | "l" | "ch")).then_some(role)
}

/// Counts the process's tpbed pool connection-handler threads by their names.
fn pool_ch_threads(dir: &Path) -> Option<u64> {
    let mut pool = false;
    let mut ch = 0;
    for task in std::fs::read_dir(dir.join("task")).ok()?.flatten() {
        let name = std::fs::read_to_string(task.path().join("comm")).unwrap_or_default();
        if let Some(role) = pool_role(name.trim_end()) {
            pool = true;
            ch += u64::from(role == "ch");
        }
    }
    pool.then_some(ch)
}

fn proc_cpu_secs(dir: &Path) -> f64 {
    let stat = std::fs::read_to_string(dir.join("stat")).unwrap_or_default();
    // fields after the parenthesised command: state is field 3, utime 14, stime 15
    let rest = stat.rsplit_once(')').map(|(_, r)| r).unwrap_or("");
    let f: Vec<&str> = rest.split_whitespace().collect();
    let ticks = |i: usize| f.get(i).and_then(|v| v.parse::<f64>().ok()).unwrap_or(0.0);
    // SAFETY: sysconf has no memory-safety preconditions.
    let hz = unsafe { libc::sysconf(libc::_SC_CLK_TCK) }.max(1) as f64;
    (ticks(11) + ticks(12)) / hz
}

/// CPU seconds (user + system) this process has used so far (getrusage).
pub(crate) fn self_cpu_secs() -> f64 {
    match nix::sys::resource::getrusage(nix::sys::resource::UsageWho::RUSAGE_SELF) {
        Ok(u) => {
            let t = |tv: nix::sys::time::TimeVal| tv.tv_sec() as f64 + tv.tv_usec() as f64 / 1e6;
            t(u.user_time()) + t(u.system_time())
        }
        Err(_) => 0.0,
    }
}

/// Raises RLIMIT_NOFILE's soft limit to the hard limit; returns the new soft limit.
pub(crate) fn raise_nofile() -> u64 {
    use nix::sys::resource::{getrlimit, setrlimit, Resource};
    match getrlimit(Resource::RLIMIT_NOFILE) {
        Ok((soft, hard)) => {
            if soft < hard && setrlimit(Resource::RLIMIT_NOFILE, hard, hard).is_ok() {
                return hard;
            }
            soft
        }
        Err(_) => 0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn machine_facts_and_self_sample() {
        let m = Machine::collect();
        assert!(m.cores >= 1);
        assert!(!m.kernel.is_empty());
        assert!(!m.client_cpus.is_empty());
        let s = proc_sample(std::process::id()).expect("own /proc entry");
        assert!(s.threads >= 1 && s.rss_kb > 0);
        assert!(raise_nofile() >= 1024);
        // the test process names no thread as a tpbed pool does
        assert_eq!(s.pool_ch_threads, None);
    }

    #[test]
    fn pool_thread_names_are_told_by_role() {
        assert_eq!(pool_role("tp0-ch12"), Some("ch"));
        assert_eq!(pool_role("tp1-q3"), Some("q"));
        assert_eq!(pool_role("tp2-l0"), Some("l"));
        for other in [
            "tp-timer",
            "conn-7",
            "tp0-ch",
            "tpx-q1",
            "tp0-x1",
            "tokio-runtime",
        ] {
            assert_eq!(pool_role(other), None, "{other}");
        }
    }
}
