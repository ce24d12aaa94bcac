//! Tests against a real MariaDB (Debian's package) started privately on a loopback port, and
//! against real sysbench when installed. Without the tools they print why and pass, unless
//! `TPBED_REQUIRE_TOOLS=1`.

use std::net::TcpListener;
use std::path::PathBuf;
use std::process::Command as Proc;
use std::sync::Arc;

use clap::Parser;

use crate::cli::{Cli, Command};
use crate::conn::MysqlWire;

fn have(tool: &str) -> bool {
    Proc::new("sh")
        .arg("-c")
        .arg(format!("command -v {tool}"))
        .output()
        .is_ok_and(|o| o.status.success())
}

/// Whether `tools` are installed; otherwise skips (prints why) or fails under TPBED_REQUIRE_TOOLS=1.
fn require(tools: &[&str]) -> bool {
    let missing: Vec<&str> = tools.iter().copied().filter(|t| !have(t)).collect();
    if missing.is_empty() {
        return true;
    }
    let msg = format!(
        "skipped: {} not installed (apt-get install mariadb-server sysbench)",
        missing.join(", ")
    );
    assert!(
        std::env::var("TPBED_REQUIRE_TOOLS").as_deref() != Ok("1"),
        "{msg}"
    );
    eprintln!("{msg}");
    false
}

/// A private MariaDB on a free loopback port, stopped on drop.
struct Mariadb {
    base: PathBuf,
    port: u16,
}

impl Mariadb {
    fn start() -> Mariadb {
        let port = TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let base =
            std::env::temp_dir().join(format!("tpbed-load-test-mdb-{}-{port}", std::process::id()));
        let st = Proc::new(Self::script())
            .args(["start", base.to_str().unwrap(), &port.to_string()])
            .output()
            .expect("run mariadb.sh");
        assert!(
            st.status.success(),
            "mariadb.sh start failed: {}",
            String::from_utf8_lossy(&st.stderr)
        );
        Mariadb { base, port }
    }

    fn script() -> PathBuf {
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("scripts/mariadb.sh")
    }

    fn args(&self, cmd: &str, extra: &[&str]) -> Vec<String> {
        let mut v: Vec<String> = ["tpbed-load", cmd, "--mysql-password=sbtest", "--mysql-port"]
            .iter()
            .map(|s| s.to_string())
            .collect();
        v.push(self.port.to_string());
        v.extend(extra.iter().map(|s| s.to_string()));
        v
    }
}

impl Drop for Mariadb {
    fn drop(&mut self) {
        let _ = Proc::new(Self::script())
            .args(["stop", self.base.to_str().unwrap()])
            .output();
        let _ = std::fs::remove_dir_all(&self.base);
    }
}

fn sysbench_args(argv: Vec<String>) -> crate::options::SysbenchArgs {
    match Cli::try_parse_from(argv).unwrap().command {
        Command::Run(a) | Command::Prepare(a) | Command::Cleanup(a) => a,
        _ => unreachable!(),
    }
}

#[test]
fn against_mariadb_and_sysbench() {
    if !require(&["mariadbd", "mariadb-install-db", "mariadb", "mariadb-admin"]) {
        return;
    }
    let db = Mariadb::start();
    let wires = MysqlWire::factory();
    let data = ["--tables=2", "--table-size=2000"];
    crate::sysbench::prepare(&sysbench_args(db.args("prepare", &data)), &wires).unwrap();
    let mut run = data.to_vec();
    run.extend([
        "--workload=oltp_read_only",
        "--threads=4",
        "--time=2",
        "--rand-type=uniform",
        "--format=json",
    ]);
    let r = crate::sysbench::run_cmd(&sysbench_args(db.args("run", &run)), &wires, false).unwrap();
    assert!(r.fatal.is_none(), "{:?}", r.fatal);
    assert!(r.total.c.events > 50, "{}", r.total.c.events);
    assert_eq!(
        r.total.c.queries(),
        16 * r.total.c.events,
        "16 statements per oltp_read_only event"
    );
    assert_eq!(r.total.c.reads, 14 * r.total.c.events);
    assert!(r
        .server
        .variables
        .iter()
        .any(|(k, v)| k == "version" && v.contains("MariaDB")));
    assert!(r.server.status_after.get("Questions") > r.server.status_before.get("Questions"));
    // the write mix: 14 reads / 4 writes / 2 others per event (a deleted-then-inserted row may
    // make a DELETE find nothing under concurrency, which sysbench also counts as other)
    let mut rw = data.to_vec();
    rw.extend(["--workload=oltp_read_write", "--threads=2", "--time=2"]);
    let r = crate::sysbench::run_cmd(&sysbench_args(db.args("run", &rw)), &wires, false).unwrap();
    assert!(r.fatal.is_none(), "{:?}", r.fatal);
    // a restarted event (ignored deadlock) re-sends its statements, as in sysbench
    assert!(r.total.c.queries() >= 20 * r.total.c.events);
    assert!(r.total.c.queries() <= 20 * (r.total.c.events + r.total.c.ignored + 2));
    if require(&["sysbench"]) {
        let out = Proc::new("sysbench")
            .args([
                "oltp_read_only",
                "--db-driver=mysql",
                "--mysql-host=127.0.0.1",
                "--mysql-user=sbtest",
                "--mysql-password=sbtest",
            ])
            .arg(format!("--mysql-port={}", db.port))
            .args([
                "--tables=2",
                "--table-size=2000",
                "--threads=2",
                "--time=2",
                "run",
            ])
            .output()
            .expect("sysbench");
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(
            out.status.success() && text.contains("queries performed"),
            "sysbench on our tables: {text}"
        );
    }
    let q = match Cli::try_parse_from(
        db.args("queue", &["--time=2", "--initial-jobs=2000", "--workers=4"]),
    )
    .unwrap()
    .command
    {
        Command::Queue(q) => q,
        _ => unreachable!(),
    };
    let r =
        crate::queue::queue_cmd(&q, &wires).expect("queue run with a passing exactly-once check");
    assert!(r
        .metrics
        .notes
        .iter()
        .any(|(k, v)| k == "exactly-once check" && v.starts_with("PASS")));
    crate::sysbench::cleanup(
        &sysbench_args(db.args("cleanup", &data)),
        &Arc::clone(&wires),
    )
    .unwrap();
}
