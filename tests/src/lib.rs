//! Harness for integration tests that start the real `tpbed-server` binary on an ephemeral
//! 127.0.0.1 port, wait until it is ready, drive it with real clients and stop it.
//!
//! [`each_mode!`] runs a test once per connection-handling [`Mode`] (one thread per
//! connection, the pool on epoll, the pool on io_uring). Tests that cannot run what they name
//! (an outside tool such as sysbench, the mariadb CLI or PyMySQL missing; io_uring unusable;
//! a limit too low) call [`skip`] or [`require_tool`]: the skip is printed past the output
//! capture, and under `TPBED_REQUIRE_TOOLS=1` (set by `.ci/run` after installing the tools)
//! it fails the test instead, so CI never skips silently. [`code`] and its kin read the
//! server's errors and counters.

mod cli;
mod mariadb;
mod mode;
mod skip;
mod sql;
pub mod sysbench;

pub use cli::{cli_output, run_cli};
pub use mariadb::MariaDb;
pub use mode::Mode;
pub use skip::{has_program, has_python_module, on_path, require_tool, skip};
pub use sql::{
    code, global_status, history_len, load_queue_fixture, mysql_error, pool_waits, raw_code,
    raw_error, session_status, show_create_table, wait_purged,
};

use std::io::{BufRead, BufReader};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex, Once};
use std::time::{Duration, Instant};

/// A running `tpbed-server` process, killed on drop.
#[derive(Debug)]
pub struct TestServer {
    child: Child,
    /// The port it listens on (127.0.0.1).
    pub port: u16,
    log: Arc<Mutex<Vec<String>>>,
}

static BUILD_SERVER: Once = Once::new();
static BUILD_LOAD: Once = Once::new();

/// The workspace's target directory.
fn target_dir() -> PathBuf {
    if let Ok(d) = std::env::var("CARGO_TARGET_DIR") {
        return PathBuf::from(d);
    }
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("..")
        .join("target")
}

/// Path of a workspace binary (`tpbed-server`, `tpbed-load`), built first if needed with the
/// profile the tests run under.
pub fn binary(name: &str) -> PathBuf {
    let profile = if cfg!(debug_assertions) {
        "debug"
    } else {
        "release"
    };
    let (once, package) = match name {
        "tpbed-load" => (&BUILD_LOAD, "tpbed-load"),
        _ => (&BUILD_SERVER, "tpbed-server"),
    };
    once.call_once(|| {
        let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
        let mut cmd = Command::new(cargo);
        cmd.args(["build", "--quiet", "-p", package, "--bin", name]);
        if profile == "release" {
            cmd.arg("--release");
        }
        cmd.current_dir(concat!(env!("CARGO_MANIFEST_DIR"), "/.."));
        let status = cmd.status().expect("run cargo build for the binaries");
        assert!(status.success(), "cargo build of the binaries failed");
    });
    target_dir().join(profile).join(name)
}

impl TestServer {
    /// Starts the server with extra options (`--port=0` and `--bind-address=127.0.0.1` are
    /// added) and waits until it logs that it is ready.
    pub fn start(args: &[&str]) -> TestServer {
        let mut cmd = Command::new(binary("tpbed-server"));
        cmd.args(["--port=0", "--bind-address=127.0.0.1"])
            .args(args);
        TestServer::spawn(cmd)
    }

    /// Starts the server as [`TestServer::start`] does, under an address-space limit of
    /// `bytes` (`RLIMIT_AS`, as `prlimit --as=bytes` sets it) from its first instruction.
    pub fn start_with_address_space(args: &[&str], bytes: u64) -> TestServer {
        use std::os::unix::process::CommandExt;
        let mut cmd = Command::new(binary("tpbed-server"));
        cmd.args(["--port=0", "--bind-address=127.0.0.1"])
            .args(args);
        let limit = libc::rlimit {
            rlim_cur: bytes,
            rlim_max: bytes,
        };
        // SAFETY: setrlimit is async-signal-safe and only reads `limit`, a copy the closure
        // owns; nothing else runs between fork and exec.
        unsafe {
            cmd.pre_exec(move || {
                if libc::setrlimit(libc::RLIMIT_AS, &limit) != 0 {
                    return Err(std::io::Error::last_os_error());
                }
                Ok(())
            });
        }
        TestServer::spawn(cmd)
    }

    /// Spawns `cmd` (the server with its options) and waits until it logs that it is ready.
    fn spawn(mut cmd: Command) -> TestServer {
        let mut child = cmd
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect("start tpbed-server");
        let stderr = child.stderr.take().expect("stderr piped");
        let log = Arc::new(Mutex::new(Vec::new()));
        let (tx, rx) = std::sync::mpsc::channel();
        let sink = log.clone();
        std::thread::spawn(move || {
            for line in BufReader::new(stderr).lines().map_while(Result::ok) {
                let port: Option<u16> = line
                    .contains("ready for connections")
                    .then(|| line.split("port: ").nth(1))
                    .flatten()
                    .map(|p| {
                        p.split_whitespace()
                            .next()
                            .and_then(|s| s.parse().ok())
                            .unwrap_or(0)
                    });
                // Logged before `start` returns: the ready line is in `log_lines` then.
                sink.lock().unwrap().push(line);
                if let Some(port) = port {
                    let _ = tx.send(port);
                }
            }
        });
        let port = match rx.recv_timeout(Duration::from_secs(30)) {
            Ok(p) => p,
            Err(_) => {
                let _ = child.kill();
                panic!(
                    "tpbed-server did not become ready; log: {:?}",
                    log.lock().unwrap()
                );
            }
        };
        TestServer { child, port, log }
    }

    /// Every line the server has logged so far.
    pub fn log_lines(&self) -> Vec<String> {
        self.log.lock().unwrap().clone()
    }

    /// Waits up to `timeout` for a log line containing `needle`.
    pub fn wait_for_log(&self, needle: &str, timeout: Duration) -> bool {
        let end = Instant::now() + timeout;
        while Instant::now() < end {
            if self.log_lines().iter().any(|l| l.contains(needle)) {
                return true;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        false
    }

    /// Connection options for the `mysql` crate as `user`/`password`.
    pub fn opts(&self, user: &str, password: &str) -> mysql::Opts {
        mysql::OptsBuilder::new()
            .ip_or_hostname(Some("127.0.0.1"))
            .tcp_port(self.port)
            .user(Some(user))
            .pass(Some(password))
            .prefer_socket(false)
            .into()
    }

    /// A `mysql` crate connection as root.
    pub fn connect(&self) -> mysql::Conn {
        mysql::Conn::new(self.opts("root", "")).expect("connect as root")
    }

    /// A fresh server with the empty database `db`, and a root connection using it.
    pub fn with_database(db: &str) -> (TestServer, mysql::Conn) {
        let srv = TestServer::start(&[]);
        let mut c = srv.connect();
        mysql::prelude::Queryable::query_drop(&mut c, format!("CREATE DATABASE {db}"))
            .expect("CREATE DATABASE");
        mysql::prelude::Queryable::query_drop(&mut c, format!("USE {db}")).expect("USE");
        (srv, c)
    }

    /// A fresh server holding database `db` as `dump` (loaded with the `mariadb` CLI), and a
    /// root connection using it.
    pub fn loaded_from_dump(db: &str, dump: &[u8]) -> (TestServer, mysql::Conn) {
        let (srv, c) = TestServer::with_database(db);
        cli::run_cli("mariadb", srv.port, &["-uroot", db], dump);
        (srv, c)
    }

    /// A `mysql` crate connection as root with `db` as its default database.
    pub fn connect_db(&self, db: &str) -> mysql::Conn {
        let opts = mysql::OptsBuilder::from_opts(self.opts("root", "")).db_name(Some(db));
        mysql::Conn::new(opts).unwrap_or_else(|e| panic!("connect as root to {db}: {e}"))
    }

    /// A protocol-crate client connection (for byte-level tests) as `user`/`password`.
    pub fn raw_connect(
        &self,
        user: &str,
        password: &str,
    ) -> Result<
        protocol::client::blocking::Conn<std::net::TcpStream>,
        protocol::client::blocking::ClientError,
    > {
        let stream = std::net::TcpStream::connect(("127.0.0.1", self.port))?;
        stream.set_read_timeout(Some(Duration::from_secs(30)))?;
        protocol::client::blocking::Conn::connect(
            stream,
            protocol::client::ClientConfig::new(user, password),
        )
    }

    /// The first row's first column of `sql`, as text, on a fresh root connection.
    pub fn scalar(&self, sql: &str) -> String {
        use mysql::prelude::Queryable;
        let mut c = self.connect();
        let v: Option<String> = c.query_first(sql).expect("query");
        v.unwrap_or_default()
    }

    /// The server's process id.
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// The server's resident set size (KiB) and OS thread count, from /proc.
    pub fn rss_and_threads(&self) -> (u64, u64) {
        proc_rss_and_threads(self.pid())
    }

    /// Whether the process is still running.
    pub fn is_running(&mut self) -> bool {
        matches!(self.child.try_wait(), Ok(None))
    }

    /// Sends signal `sig` to the server process.
    pub fn signal(&self, sig: libc::c_int) {
        let pid = libc::pid_t::try_from(self.child.id()).expect("pid");
        // SAFETY: kill(2) on our own child process.
        assert_eq!(unsafe { libc::kill(pid, sig) }, 0, "kill({pid}, {sig})");
    }

    /// Waits up to `limit` for the process to end by itself; `None` if it is still running
    /// (drop then kills it).
    pub fn wait_exit(&mut self, limit: Duration) -> Option<std::process::ExitStatus> {
        let end = Instant::now() + limit;
        while Instant::now() < end {
            if let Ok(Some(st)) = self.child.try_wait() {
                return Some(st);
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        None
    }
}

impl Drop for TestServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// VmRSS (KiB) and Threads of a process, from /proc/PID/status.
pub fn proc_rss_and_threads(pid: u32) -> (u64, u64) {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    let field = |name: &str| {
        status
            .lines()
            .find_map(|l| l.strip_prefix(name))
            .and_then(|v| v.split_whitespace().next())
            .and_then(|v| v.parse().ok())
            .unwrap_or(0)
    };
    (field("VmRSS:"), field("Threads:"))
}

/// Raises this process's soft open-file limit to the hard limit (tests that hold thousands
/// of sockets); returns the new soft limit.
pub fn raise_nofile_limit() -> u64 {
    let mut lim = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit/setrlimit only read and write the struct passed by pointer.
    unsafe {
        if libc::getrlimit(libc::RLIMIT_NOFILE, &mut lim) != 0 {
            return 0;
        }
        lim.rlim_cur = lim.rlim_max;
        libc::setrlimit(libc::RLIMIT_NOFILE, &lim);
        libc::getrlimit(libc::RLIMIT_NOFILE, &mut lim);
    }
    lim.rlim_cur
}
