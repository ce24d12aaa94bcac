//! Where the server keeps its files: `--datadir=PATH`, or by default a fresh directory
//! `tpbed-<pid>` under the system temp dir that is removed again when the server goes away.
//!
//! "Goes away" has two paths: dropping the [`DataDir`] removes it (in-process servers, unit
//! tests, and the binary's graceful shutdown on SIGTERM, SIGINT or `SHUTDOWN`); a server killed
//! with SIGKILL leaves its directory behind, which the next server to start removes once the
//! process that owned it no longer exists.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU32, Ordering};

use crate::engine::redo::REDO_DIR;

/// Prefix of the default data directories under the temp dir (`tpbed-<pid>`).
const TEMP_PREFIX: &str = "tpbed-";

/// The server's data directory, and whether the server created it and must remove it.
#[derive(Debug)]
pub struct DataDir {
    path: PathBuf,
    owned: bool,
}

impl DataDir {
    /// Resolves the `datadir` setting: an empty value means a fresh `tpbed-<pid>` directory
    /// under the system temp dir (owned: removed at exit); a path is created if missing and
    /// kept at exit, as mysqld keeps its datadir.
    pub fn resolve(setting: &str) -> Result<DataDir, String> {
        if setting.trim().is_empty() {
            return DataDir::temporary(&std::env::temp_dir(), std::process::id());
        }
        let path = PathBuf::from(setting.trim());
        std::fs::create_dir_all(&path)
            .map_err(|e| format!("Can't create data directory '{}': {e}", path.display()))?;
        let path = path
            .canonicalize()
            .map_err(|e| format!("Can't use data directory '{}': {e}", path.display()))?;
        Ok(DataDir { path, owned: false })
    }

    /// Creates `<base>/tpbed-<pid>` (emptied if a dead server of the same pid left it), after
    /// removing directories left by servers that no longer run. Later calls in the same process
    /// (several in-process servers, as in unit tests) get `tpbed-<pid>.<n>`.
    pub fn temporary(base: &Path, pid: u32) -> Result<DataDir, String> {
        sweep_stale(base, pid);
        let name = match SEQUENCE.fetch_add(1, Ordering::Relaxed) {
            0 => format!("{TEMP_PREFIX}{pid}"),
            n => format!("{TEMP_PREFIX}{pid}.{n}"),
        };
        let path = base.join(name);
        if path.exists() {
            let _ = std::fs::remove_dir_all(&path);
        }
        std::fs::create_dir_all(&path)
            .map_err(|e| format!("Can't create data directory '{}': {e}", path.display()))?;
        Ok(DataDir { path, owned: true })
    }

    /// The directory's absolute path.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Whether the server created the directory and removes it at exit.
    pub fn owned(&self) -> bool {
        self.owned
    }

    /// The path as `@@datadir` shows it: absolute, with a trailing slash, as mysqld does.
    pub fn shown(&self) -> String {
        let mut s = self.path.display().to_string();
        if !s.ends_with('/') {
            s.push('/');
        }
        s
    }
}

impl Drop for DataDir {
    fn drop(&mut self) {
        if self.owned {
            let _ = std::fs::remove_dir_all(&self.path);
        }
    }
}

/// How many temporary data directories this process has made.
static SEQUENCE: AtomicU32 = AtomicU32::new(0);

/// Removes `<base>/tpbed-<pid>[.<n>]` directories of processes that no longer exist and that hold
/// a redo directory (so only directories a tpbed server made are touched).
fn sweep_stale(base: &Path, own_pid: u32) {
    let Ok(entries) = std::fs::read_dir(base) else {
        return;
    };
    for e in entries.flatten() {
        let name = e.file_name();
        let Some(pid) = name
            .to_str()
            .and_then(|n| n.strip_prefix(TEMP_PREFIX))
            .and_then(|p| p.split('.').next())
            .and_then(|p| p.parse::<u32>().ok())
        else {
            continue;
        };
        if pid == own_pid || process_exists(pid) {
            continue;
        }
        let path = e.path();
        if path.join(REDO_DIR).is_dir() {
            let _ = std::fs::remove_dir_all(&path);
        }
    }
}

/// Whether a process with this id exists (a permission error still means it does).
fn process_exists(pid: u32) -> bool {
    let Ok(pid) = libc::pid_t::try_from(pid) else {
        return false;
    };
    // SAFETY: signal 0 only checks whether the process exists and may be signalled.
    let r = unsafe { libc::kill(pid, 0) };
    r == 0 || std::io::Error::last_os_error().raw_os_error() != Some(libc::ESRCH)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scratch(name: &str) -> PathBuf {
        let p =
            std::env::temp_dir().join(format!("tpbed-datadir-test-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&p);
        std::fs::create_dir_all(&p).unwrap();
        p
    }

    #[test]
    fn temporary_dir_is_created_shown_with_a_slash_and_removed_on_drop() {
        let base = scratch("tmp");
        let d = DataDir::temporary(&base, 4_000_000).unwrap();
        assert!(d.owned());
        assert!(d.path().is_dir());
        assert!(d.path().starts_with(&base));
        let name = d.path().file_name().unwrap().to_str().unwrap().to_string();
        assert!(name.starts_with("tpbed-4000000"), "{name}");
        assert_eq!(d.shown(), format!("{}/", d.path().display()));
        let p = d.path().to_path_buf();
        drop(d);
        assert!(!p.exists());
        let _ = std::fs::remove_dir_all(&base);
    }

    #[test]
    fn explicit_dir_is_created_and_kept() {
        let base = scratch("explicit");
        let want = base.join("data");
        let d = DataDir::resolve(want.to_str().unwrap()).unwrap();
        assert!(!d.owned());
        assert_eq!(d.path(), want.canonicalize().unwrap());
        drop(d);
        assert!(want.is_dir());
        let _ = std::fs::remove_dir_all(&base);
    }

    #[test]
    fn stale_dirs_of_dead_servers_are_swept_and_others_kept() {
        let base = scratch("sweep");
        // pid_max is at most 2^22 on Linux, so this pid cannot be running.
        let dead = base.join("tpbed-4194999");
        std::fs::create_dir_all(dead.join(REDO_DIR)).unwrap();
        let dead_second = base.join("tpbed-4194999.2");
        std::fs::create_dir_all(dead_second.join(REDO_DIR)).unwrap();
        // A directory without a redo directory is not ours: kept.
        let foreign = base.join("tpbed-4194998");
        std::fs::create_dir_all(&foreign).unwrap();
        // A live process's directory is kept (our own pid stands in for a running server).
        let live_pid = std::process::id();
        let live = base.join(format!("tpbed-{live_pid}"));
        std::fs::create_dir_all(live.join(REDO_DIR)).unwrap();
        let d = DataDir::temporary(&base, 4_000_001).unwrap();
        assert!(!dead.exists());
        assert!(!dead_second.exists());
        assert!(foreign.exists());
        assert!(live.exists());
        drop(d);
        let _ = std::fs::remove_dir_all(&base);
    }
}
