//! A private MariaDB server for tests that compare tpbed with it: started on a free loopback
//! port by `loadgen/scripts/mariadb.sh` in its own directory, stopped and removed on drop.

use std::io::Write;
use std::net::TcpListener;
use std::path::PathBuf;
use std::process::{Command, Stdio};

/// A running private MariaDB (user and database `sbtest`, password `sbtest`).
#[derive(Debug)]
pub struct MariaDb {
    base: PathBuf,
    /// Its port on 127.0.0.1.
    pub port: u16,
}

fn script() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../loadgen/scripts/mariadb.sh")
}

impl MariaDb {
    /// Starts one in `$TMPDIR/tpbed-NAME-mdb-PID` with the given buffer pool and connection
    /// limit; panics if it does not come up.
    pub fn start(name: &str, buffer_pool: &str, max_connections: u32) -> MariaDb {
        let port = TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.local_addr())
            .expect("a free port")
            .port();
        let base = std::env::temp_dir().join(format!("tpbed-{name}-mdb-{}", std::process::id()));
        let st = Command::new("bash")
            .arg(script())
            .args([
                "start",
                base.to_str().expect("utf-8 temp dir"),
                &port.to_string(),
            ])
            .env("BUFFER_POOL", buffer_pool)
            .env("MAX_CONNECTIONS", max_connections.to_string())
            .stdout(Stdio::null())
            .status()
            .expect("run mariadb.sh");
        assert!(st.success(), "mariadb.sh start failed");
        MariaDb { base, port }
    }

    /// A connection over TCP as `sbtest`/`sbtest` to database `sbtest`.
    pub fn connect(&self) -> mysql::Conn {
        mysql::Conn::new(
            mysql::OptsBuilder::new()
                .ip_or_hostname(Some("127.0.0.1"))
                .tcp_port(self.port)
                .prefer_socket(false)
                .user(Some("sbtest"))
                .pass(Some("sbtest"))
                .db_name(Some("sbtest")),
        )
        .expect("connect to MariaDB")
    }

    /// Runs `sql` as MariaDB's `root` (through its Unix socket, where root authenticates by
    /// operating-system user); panics if it fails.
    pub fn root_sql(&self, sql: &str) {
        let mut child = Command::new("mariadb")
            .args(["--no-defaults", "-uroot"])
            .arg(format!(
                "--socket={}",
                self.base.join("mysqld.sock").display()
            ))
            .stdin(Stdio::piped())
            .stderr(Stdio::piped())
            .stdout(Stdio::null())
            .spawn()
            .expect("run the mariadb CLI");
        child
            .stdin
            .take()
            .expect("piped stdin")
            .write_all(sql.as_bytes())
            .expect("write to the mariadb CLI");
        let out = child.wait_with_output().expect("wait for the mariadb CLI");
        assert!(
            out.status.success(),
            "{sql}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
}

impl Drop for MariaDb {
    fn drop(&mut self) {
        let _ = Command::new("bash")
            .arg(script())
            .args(["stop", self.base.to_str().unwrap_or_default()])
            .status();
        let _ = std::fs::remove_dir_all(&self.base);
    }
}
