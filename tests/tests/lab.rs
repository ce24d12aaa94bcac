//! `tpbed-load experiment` end to end against tpbed-server started by the lab: the scenario
//! and matrix files README shows, two built-in experiments, a rule the server does not meet
//! (it must say "differs"), and a bad file rejected with its line; and against a private
//! MariaDB the lab starts in both of its connection handling modes (skipped without MariaDB).

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use tpbed_tests::{binary, has_program, require_tool, TestServer};

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn out_dir(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("tpbed-lab-test-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    d
}

fn lab(args: &[&str], out: &Path) -> Output {
    lab_on(args, &["--target", "tpbed"], out)
}

fn lab_on(args: &[&str], targets: &[&str], out: &Path) -> Output {
    let server = binary("tpbed-server");
    Command::new(binary("tpbed-load"))
        .arg("experiment")
        .arg("run")
        .args(args)
        .args(targets)
        .arg("--server-bin")
        .arg(&server)
        .arg("--out")
        .arg(out)
        .output()
        .expect("run tpbed-load experiment")
}

/// The verdict the summary table gives `experiment` on tpbed.
fn verdict(stdout: &str, experiment: &str) -> String {
    stdout
        .lines()
        .find(|l| l.split_whitespace().next() == Some(experiment))
        .and_then(|l| {
            l.split("  ")
                .map(str::trim)
                .filter(|s| !s.is_empty())
                .nth(2)
        })
        .unwrap_or_else(|| panic!("no summary line for {experiment}:\n{stdout}"))
        .to_string()
}

fn text(o: &Output) -> (String, String) {
    (
        String::from_utf8_lossy(&o.stdout).into_owned(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

#[test]
fn readme_scenario_and_matrix_files_run_and_reproduce() {
    let readme = std::fs::read_to_string(repo().join("README.md")).expect("README.md");
    let files = [
        "loadgen/experiments/examples/row-lock-wait.toml",
        "loadgen/experiments/examples/claim-lock-waits.toml",
    ];
    for f in files {
        let body = std::fs::read_to_string(repo().join(f)).expect(f);
        assert!(
            readme.contains(body.trim()),
            "README must show {f} as it is"
        );
    }
    let out = out_dir("readme");
    let paths: Vec<String> = files
        .iter()
        .map(|f| repo().join(f).display().to_string())
        .collect();
    let args: Vec<&str> = paths.iter().map(String::as_str).collect();
    let o = lab(&args, &out);
    let (stdout, stderr) = text(&o);
    assert!(o.status.success(), "{stdout}\n{stderr}");
    assert_eq!(verdict(&stdout, "row-lock-wait"), "reproduces", "{stdout}");
    assert_eq!(
        verdict(&stdout, "claim-lock-waits"),
        "reproduces",
        "{stdout}"
    );
    assert!(
        stdout
            .lines()
            .last()
            .is_some_and(|l| l.contains(&out.display().to_string())),
        "the last line names the folder: {stdout}"
    );
    let index = std::fs::read_to_string(out.join("index.md")).expect("index.md");
    assert!(index.contains("| [row-lock-wait]") && index.contains("| [claim-lock-waits]"));
    let json = std::fs::read_to_string(out.join("results.json")).expect("results.json");
    assert!(json.contains("\"skip.row_lock_waits@4\"") && json.contains("\"second_ms\""));
    let _ = std::fs::remove_dir_all(&out);
}

#[test]
fn two_builtin_experiments_reproduce_on_tpbed() {
    let out = out_dir("builtin");
    let o = lab(&["f1", "f5", "--format", "text"], &out);
    let (stdout, stderr) = text(&o);
    assert!(o.status.success(), "{stdout}\n{stderr}");
    assert_eq!(
        verdict(&stdout, "f1-locks-per-claim"),
        "reproduces",
        "{stdout}"
    );
    assert_eq!(
        verdict(&stdout, "f5-timeout-keeps-locks"),
        "reproduces",
        "{stdout}"
    );
    // the measured lock counts, not only the verdict: 20 through idx_ready, 10 with status in the PK
    assert!(stdout.contains("20.00 / 10.00 = 2.00"), "{stdout}");
    // the report names settings no experiment asked for: the lab's own start-up options
    let index = std::fs::read_to_string(out.join("index.md")).expect("index.md");
    assert!(
        index.contains("Variables that differ from the defaults (from SHOW GLOBAL VARIABLES of")
            && index.contains("`max_connections=4000 (default 151)`"),
        "{index}"
    );
    let _ = std::fs::remove_dir_all(&out);
}

#[test]
fn a_rule_the_server_does_not_meet_differs_and_a_bad_file_names_its_line() {
    let dir = out_dir("rules");
    std::fs::create_dir_all(&dir).unwrap();
    let body =
        std::fs::read_to_string(repo().join("loadgen/experiments/examples/row-lock-wait.toml"))
            .unwrap();
    // the same scenario, judged by a rule that says the second writer does not wait, on a
    // server the lab did not start
    let strict = dir.join("strict.toml");
    std::fs::write(
        &strict,
        body.replace(
            "value = \"second_ms\"\nat_least = 250",
            "value = \"second_ms\"\nat_most = 100",
        ),
    )
    .unwrap();
    let server = TestServer::start(&[]);
    let endpoint = format!("mine=127.0.0.1:{}", server.port);
    let out = dir.join("out with a space");
    let o = lab_on(&[strict.to_str().unwrap()], &["--target", &endpoint], &out);
    let (stdout, stderr) = text(&o);
    assert_eq!(o.status.code(), Some(1), "{stdout}\n{stderr}");
    assert_eq!(verdict(&stdout, "row-lock-wait"), "differs", "{stdout}");
    assert!(
        stdout.lines().last().is_some_and(
            |l| l.contains("1 verdict(s) differ: row-lock-wait on mine: exit status 1")
        ),
        "{stdout}"
    );
    // the command line in the report reads back as it was typed
    let index = std::fs::read_to_string(out.join("index.md")).expect("index.md");
    assert!(
        index.contains(&format!("--out '{}'", out.display())),
        "{index}"
    );
    // the lab's database is gone from the server it did not start
    assert_eq!(
        server.scalar(
            "SELECT COUNT(*) FROM information_schema.SCHEMATA WHERE SCHEMA_NAME = 'tpbed_lab'"
        ),
        "0"
    );
    let o = lab_on(
        &[strict.to_str().unwrap(), "--no-fail"],
        &["--target", &endpoint],
        &dir.join("out2"),
    );
    let (stdout, stderr) = text(&o);
    assert!(o.status.success(), "{stdout}\n{stderr}");
    assert!(stdout.contains("(--no-fail: exit status 0)"), "{stdout}");
    drop(server);
    // a step with two actions, on line 14 of the file
    let bad = dir.join("bad.toml");
    let lines: Vec<&str> = body.lines().collect();
    let at = lines.iter().position(|l| *l == "sql = \"BEGIN\"").unwrap();
    let mut broken = lines.clone();
    broken.insert(at + 1, "sleep_ms = 5");
    std::fs::write(&bad, broken.join("\n")).unwrap();
    let line = error_line(&bad, &dir);
    assert!(
        (at - 1..=at + 2).contains(&line.0),
        "line {}, step at {}: {}",
        line.0,
        at + 1,
        line.1
    );
    assert!(line.1.contains("only one of"), "{}", line.1);
    // a misspelt name in a rule: an error at the rule, not a target that cannot run it
    let typo = dir.join("typo.toml");
    std::fs::write(
        &typo,
        body.replace("value = \"second_ms\"", "value = \"secnd_ms\""),
    )
    .unwrap();
    let rule_at = body
        .lines()
        .position(|l| l == "value = \"second_ms\"")
        .unwrap()
        + 1;
    let line = error_line(&typo, &dir);
    assert!((rule_at - 2..=rule_at).contains(&line.0), "{}", line.1);
    assert!(line.1.contains("`secnd_ms`"), "{}", line.1);
    let _ = std::fs::remove_dir_all(&dir);
}

/// Runs a file the lab must refuse: the line its error names, and the error.
fn error_line(file: &Path, dir: &Path) -> (usize, String) {
    let o = lab(&[file.to_str().unwrap()], &dir.join("refused"));
    let (stdout, stderr) = text(&o);
    assert!(!o.status.success(), "{stdout}");
    let name = file.display().to_string();
    let line: usize = stderr
        .split(&format!("{name}:"))
        .nth(1)
        .and_then(|r| r.split(':').next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("no line number in: {stderr}"));
    (line, stderr)
}

/// A fresh MariaDB data folder; the server itself is started by the lab.
struct MariaDbDir(PathBuf);

impl MariaDbDir {
    fn install() -> MariaDbDir {
        let base = std::env::temp_dir().join(format!("tpbed-lab-mdb-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&base);
        std::fs::create_dir_all(&base).expect("mkdir");
        let mut install = Command::new("mariadb-install-db");
        install.args([
            "--no-defaults",
            "--auth-root-authentication-method=normal",
            "--skip-test-db",
        ]);
        install.arg(format!("--datadir={}", base.join("data").display()));
        if as_root() {
            // mariadbd refuses to run as root; the package's mysql user owns the files
            let st = Command::new("chown")
                .args(["mysql:mysql"])
                .arg(&base)
                .status()
                .expect("chown");
            assert!(st.success(), "chown mysql {}", base.display());
            install.arg("--user=mysql");
        }
        let o = install.output().expect("run mariadb-install-db");
        assert!(
            o.status.success(),
            "mariadb-install-db: {}",
            String::from_utf8_lossy(&o.stderr)
        );
        MariaDbDir(base)
    }

    /// The `--target-cmd` that starts mariadbd on this folder.
    fn target_cmd(&self) -> String {
        format!(
            "mariadb=mariadbd --no-defaults{} --datadir={} --socket={} --bind-address=127.0.0.1 \
             --skip-log-bin --innodb-buffer-pool-size=64M --max-connections=500 --port={{port}}",
            if as_root() { " --user=mysql" } else { "" },
            self.0.join("data").display(),
            self.0.join("mysqld.sock").display()
        )
    }
}

impl Drop for MariaDbDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn as_root() -> bool {
    // SAFETY: geteuid has no preconditions.
    unsafe { libc::geteuid() == 0 }
}

#[test]
fn mariadb_runs_in_both_modes_with_its_own_units_and_says_why_it_cannot_run() {
    if !require_tool("mariadbd", has_program("mariadbd"))
        || !require_tool("mariadb-install-db", has_program("mariadb-install-db"))
    {
        return;
    }
    let mdb = MariaDbDir::install();
    let dir = out_dir("mariadb");
    std::fs::create_dir_all(&dir).unwrap();
    // one tiny cell per connection handling mode, each a restart of the same server
    let modes = dir.join("modes.toml");
    std::fs::write(
        &modes,
        r#"name = "two-modes"
study = "test"
finding = "both modes serve point selects"
figure = "-"
seconds = { small = 20, paper = 20 }
[matrix]
workload = "oltp_point_select"
options = { tables = 1, "table-size" = 100 }
values = [2]
time_s = 1
passes = 1
columns = ["qps"]
[[matrix.config]]
name = "per-conn"
settings = { thread_handling = "one-thread-per-connection" }
[[matrix.config]]
name = "pool"
settings = { thread_handling = "pool-of-threads" }
[[verdict]]
rule = "count"
value = "per-conn.qps@2"
at_least = 1
[[verdict]]
rule = "count"
value = "pool.qps@2"
at_least = 1
"#,
    )
    .unwrap();
    let cmd = mdb.target_cmd();
    let out = dir.join("out");
    // T3's own verdict on MariaDB is not what this checks: --no-fail
    let o = lab_on(
        &["t3", "t4", modes.to_str().unwrap(), "--no-fail"],
        &["--target-cmd", &cmd],
        &out,
    );
    let (stdout, stderr) = text(&o);
    assert!(o.status.success(), "{stdout}\n{stderr}");
    assert_eq!(verdict(&stdout, "two-modes"), "reproduces", "{stdout}");
    // T4's limit does not exist on MariaDB: the verdict carries mariadbd's own reason
    assert_eq!(
        verdict(&stdout, "t4-transaction-limit"),
        "cannot run here",
        "{stdout}"
    );
    assert!(
        stdout.contains("unknown variable 'thread_pool_max_transactions_limit=2'"),
        "{stdout}"
    );
    let index = std::fs::read_to_string(out.join("index.md")).expect("index.md");
    // MySQL's 10 ms units become MariaDB's milliseconds
    assert!(
        index.contains("thread_pool_stall_limit=6 set as thread_pool_stall_limit=60"),
        "{index}"
    );
    // the pool configuration ran on a server that reports the pool
    assert!(
        index.contains("pool: restarted with --thread_handling=pool-of-threads")
            && !index.contains("--thread_handling=pool-of-threads (the server reports"),
        "{index}"
    );
    assert!(
        index.contains("information_schema.SYSTEM_VARIABLES.DEFAULT_VALUE")
            && index.contains("`max_connections=500 (default 151)`"),
        "{index}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_matrix_compares_the_sysbench_binary_with_tpbed_load_on_one_server() {
    if !require_tool("sysbench", has_program("sysbench")) {
        return;
    }
    let dir = out_dir("clients");
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("clients.toml");
    std::fs::write(
        &file,
        r#"name = "two-clients"
study = "test"
finding = "both clients drive the server"
figure = "-"
seconds = { small = 10, paper = 10 }
[matrix]
workload = "oltp_point_select"
options = { tables = 1, "table-size" = 100 }
values = [2]
time_s = 1
passes = 1
columns = ["qps", "client_cpu_us_per_query", "server_cpu_us_per_query"]
[[matrix.config]]
name = "sysbench"
client = "sysbench"
[[matrix.config]]
name = "tpbed-load"
workload = "oltp_read_only"
[[verdict]]
rule = "count"
value = "sysbench.qps@2"
at_least = 1
[[verdict]]
rule = "count"
value = "tpbed-load.qps@2"
at_least = 1
"#,
    )
    .unwrap();
    let out = dir.join("out");
    let o = lab(&[file.to_str().unwrap()], &out);
    let (stdout, stderr) = text(&o);
    assert!(o.status.success(), "{stdout}\n{stderr}");
    assert_eq!(verdict(&stdout, "two-clients"), "reproduces", "{stdout}");
    let json = std::fs::read_to_string(out.join("results.json")).expect("results.json");
    // both clients' CPU per statement, and the server's, are numbers, not "missing"
    for key in [
        "sysbench.client_cpu_us_per_query@2",
        "sysbench.server_cpu_us_per_query@2",
        "tpbed-load.client_cpu_us_per_query@2",
        "tpbed-load.server_cpu_us_per_query@2",
    ] {
        let at = json
            .find(&format!("\"{key}\""))
            .unwrap_or_else(|| panic!("{key} in {json}"));
        let entry = json[at..].split('}').next().unwrap_or_default();
        assert!(
            entry.contains("\"values\"") && !entry.contains("\"missing\""),
            "{entry}"
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// `tpbed-load experiment show NAME --scale SCALE`.
fn show(name: &str, scale: &str) -> Output {
    Command::new(binary("tpbed-load"))
        .args(["experiment", "show", name, "--scale", scale])
        .output()
        .expect("run tpbed-load experiment show")
}

#[test]
fn the_policies_suite_loads_and_the_open_transaction_rail_prevents_starvation() {
    let experiments = [
        "policies-rail-starvation",
        "policies-rail-starvation-railed",
        "policies-read-only",
        "policies-t1",
        "policies-grant-order",
        "policies-bimodal",
    ];
    // every file of the suite parses at both scales; the matrices set the policy per column
    for name in experiments {
        for scale in ["small", "paper"] {
            let o = show(name, scale);
            let (stdout, stderr) = text(&o);
            assert!(o.status.success(), "{name} at {scale}: {stdout}\n{stderr}");
            assert!(
                stdout.starts_with(&format!("{name} (policies ")),
                "{stdout}"
            );
        }
    }
    let (shown, _) = text(&show("policies-read-only", "small"));
    assert!(
        shown.contains("config mysql:") && shown.contains("tpbed_thread_pool_policy=fifo"),
        "{shown}"
    );
    // the bimodal load's policies come from its list; the grant order sets each algorithm
    let (shown, _) = text(&show("policies-bimodal", "small"));
    assert!(
        shown.contains(
            "config fifo:  thread_handling=pool-of-threads tpbed_thread_pool_policy=fifo"
        ),
        "{shown}"
    );
    let (shown, _) = text(&show("policies-grant-order", "small"));
    assert!(
        shown.contains("innodb_lock_schedule_algorithm=vats"),
        "{shown}"
    );
    // the starvation scenario, rails on and off: the rail is what makes the COMMIT run
    let out = out_dir("policies");
    let o = lab(&[experiments[0], experiments[1], "--format", "text"], &out);
    let (stdout, stderr) = text(&o);
    assert!(o.status.success(), "{stdout}\n{stderr}");
    assert_eq!(verdict(&stdout, experiments[1]), "reproduces", "{stdout}");
    assert_eq!(verdict(&stdout, experiments[0]), "reproduces", "{stdout}");
    let index = std::fs::read_to_string(out.join("index.md")).expect("index.md");
    assert!(
        index.contains("mysql: --tpbed_thread_pool_rails= (start-up)")
            && index.contains(
                "tpbed_thread_pool_rails empty (tpbed's own start-up variable, not a MySQL setting"
            ),
        "{index}"
    );
    // the scenarios run once per policy: each policy is a column with its own verdict
    let columns = "| | mysql | fifo | mariadb | lock-aware | short-first | time-slice |";
    let verdicts = format!("| **verdict** |{}", " **reproduces** |".repeat(6));
    assert_eq!(index.matches(columns).count(), 2, "{index}");
    assert_eq!(index.matches(verdicts.as_str()).count(), 2, "{index}");
    assert!(
        index.contains("| waiter_error | 1205 | 1205 | 1205 | 1205 | 1205 | 1205 |")
            && index.contains("| waiter_error | 0.000 | 0.000 | 0.000 | 0.000 | 0.000 | 0.000 |"),
        "{index}"
    );
    let _ = std::fs::remove_dir_all(&out);
}
