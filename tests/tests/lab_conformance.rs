//! `tpbed-load experiment run` of a lock-conformance file that keeps a handful of cases, on
//! tpbed alone: each case's outcome for session B is classified (proceeds, waits then 1205,
//! 3572 at once, skipped rows, an error at once) as InnoDB's locking rules say it must be,
//! and without a reference target the verdict says it cannot compare.

use std::path::PathBuf;
use std::process::Command;

use tpbed_tests::binary;

fn out_dir(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!(
        "tpbed-lab-conformance-{}-{name}",
        std::process::id()
    ));
    let _ = std::fs::remove_dir_all(&d);
    d
}

/// (case name, A's reply, B's outcome as results.json spells it).
const CASES: &[(&str, &str, &str)] = &[
    // a unique search that finds its row locks only that row: the gap before it stays open
    (
        "pk/rr/A: UPDATE t SET v = v + 1 WHERE k = 20/B: INSERT INTO t (k, v) VALUES (15, 0)",
        "ok",
        r#"{"outcome":"proceeds"}"#,
    ),
    // on an empty table the same UPDATE locks the supremum: every insert waits
    (
        "pk/rr/empty/A: UPDATE t SET v = v + 1 WHERE k = 20/B: INSERT INTO t (k, v) VALUES (15, 0)",
        "ok",
        r#"{"outcome":"timeout"}"#,
    ),
    // a unique search that misses locks the gap under REPEATABLE READ ...
    (
        "pk/rr/A: SELECT k, v FROM t WHERE k = 15 FOR UPDATE/B: INSERT INTO t (k, v) VALUES (12, 0)",
        "ok",
        r#"{"outcome":"timeout"}"#,
    ),
    // ... and nothing under READ COMMITTED
    (
        "pk/rc/A: SELECT k, v FROM t WHERE k = 15 FOR UPDATE/B: INSERT INTO t (k, v) VALUES (12, 0)",
        "ok",
        r#"{"outcome":"proceeds"}"#,
    ),
    (
        "pk/rr/A: SELECT k, v FROM t WHERE k = 20 FOR UPDATE/B: SELECT k, v FROM t WHERE k = 20 FOR SHARE NOWAIT",
        "ok",
        r#"{"outcome":"no_wait"}"#,
    ),
    (
        "pk/rr/A: SELECT k, v FROM t WHERE k IN (10, 30) FOR UPDATE/B: SELECT k, v FROM t FOR UPDATE SKIP LOCKED",
        "ok",
        r#"{"outcome":"skips","detail":[10,30]}"#,
    ),
    // a shared lock does not keep another shared locker out
    (
        "pk/rr/A: SELECT k, v FROM t WHERE k = 20 FOR SHARE/B: SELECT k, v FROM t FOR SHARE SKIP LOCKED",
        "ok",
        r#"{"outcome":"skips","detail":[]}"#,
    ),
    // A's duplicate keeps its S lock on the row: B's duplicate check (S) goes ahead, 1062
    (
        "unique/rr/A: INSERT INTO t (id, k, v) VALUES (1020, 20, 0)/B: INSERT INTO t (id, k, v) VALUES (1020, 20, 0)",
        "1062",
        r#"{"outcome":"error","detail":1062}"#,
    ),
];

#[test]
fn a_handful_of_lock_conformance_cases_are_classified_on_tpbed() {
    let out = out_dir("cases");
    std::fs::create_dir_all(&out).expect("mkdir");
    let only: Vec<String> = CASES.iter().map(|c| format!("{:?}", c.0)).collect();
    let file = out.join("conformance.toml");
    std::fs::write(
        &file,
        format!(
            "name = \"some-conformance-cases\"\n\
             [conformance]\ncases = \"large\"\nlock_wait_timeout = 1\nonly = [{}]\n\
             [[verdict]]\nrule = \"count\"\nvalue = \"unexplained_differences\"\nequals = 0\n",
            only.join(", ")
        ),
    )
    .expect("write the experiment");
    let o = Command::new(binary("tpbed-load"))
        .args(["experiment", "run"])
        .arg(&file)
        .args(["--target", "tpbed", "--server-bin"])
        .arg(binary("tpbed-server"))
        .arg("--out")
        .arg(&out)
        .output()
        .expect("run tpbed-load experiment");
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert!(
        o.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&o.stderr)
    );
    // no reference: nothing to compare with, and the report says so
    assert!(
        stdout.contains("cannot run here") && stdout.contains("no reference target"),
        "{stdout}"
    );
    let json: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(out.join("results.json")).expect("results.json"),
    )
    .expect("results.json is JSON");
    let ran = json["experiments"][0]["targets"][0]["cases"]
        .as_array()
        .expect("the target's cases");
    assert_eq!(ran.len(), CASES.len(), "{ran:?}");
    for (name, a, b) in CASES {
        let r = ran
            .iter()
            .find(|r| r["name"] == *name)
            .unwrap_or_else(|| panic!("{name} did not run: {ran:?}"));
        assert_eq!(r["a"], *a, "{name}: A's reply");
        let want: serde_json::Value = serde_json::from_str(b).expect("expected outcome");
        assert_eq!(r["b"], want, "{name}: B's outcome");
    }
    let index = std::fs::read_to_string(out.join("index.md")).expect("index.md");
    assert!(
        index.contains("#### Every case on tpbed") && index.contains("| waits, then 1205 |"),
        "{index}"
    );
    let _ = std::fs::remove_dir_all(&out);
}
