//! `tpbed-load tpcc` against tpbed-server: prepare loads the initial database (here one
//! warehouse at the hidden test size: 2,000 items, 100 customers per district) with the
//! specified cardinalities, the consistency checks pass after prepare and after a run of the
//! mix over four connections, the run reports every transaction type through its typed
//! metrics, and a balance changed behind the workload's back fails conditions 10 and 12.

use std::process::{Command, Output};

use mysql::prelude::*;
use tpbed_tests::{binary, TestServer};

fn tpcc(srv: &TestServer, action: &str, extra: &[&str]) -> Output {
    Command::new(binary("tpbed-load"))
        .args(["tpcc", action, "--mysql-user=root"])
        .arg(format!("--mysql-port={}", srv.port))
        .args(["--test-items=2000", "--test-customers=100"])
        .args(extra)
        .output()
        .expect("run tpbed-load tpcc")
}

fn text(o: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

/// Runs `check` and returns its output, asserting it passed or failed as `pass` says.
fn check(srv: &TestServer, pass: bool) -> String {
    let out = tpcc(srv, "check", &[]);
    let t = text(&out);
    assert_eq!(out.status.success(), pass, "check:\n{t}");
    let passed = t.lines().filter(|l| l.contains(" PASSED")).count();
    if pass {
        assert_eq!(passed, 10, "ten conditions, all passed:\n{t}");
    }
    t
}

fn count(c: &mut mysql::Conn, table: &str) -> u64 {
    c.query_first(format!("SELECT COUNT(*) FROM {table}"))
        .unwrap()
        .unwrap()
}

#[test]
fn prepare_run_and_check_one_small_warehouse() {
    let srv = TestServer::start(&["--max-connections=200"]);
    let mut c = srv.connect();
    c.query_drop("CREATE DATABASE sbtest").unwrap();
    let out = tpcc(&srv, "prepare", &["--threads=2"]);
    assert!(out.status.success(), "prepare:\n{}", text(&out));
    c.query_drop("USE sbtest").unwrap();
    for (table, rows) in [
        ("warehouse1", 1),
        ("district1", 10),
        ("item1", 2000),
        ("stock1", 2000),
        ("customer1", 1000),
        ("history1", 1000),
        ("orders1", 1000),
        ("new_orders1", 300),
    ] {
        assert_eq!(count(&mut c, table), rows, "{table}");
    }
    let lines = count(&mut c, "order_line1");
    assert!((5000..=15_000).contains(&lines), "{lines} order lines");
    check(&srv, true);

    let out = tpcc(
        &srv,
        "run",
        &["--threads=4", "--time=3", "--format=json", "--no-gauges"],
    );
    let t = text(&out);
    assert!(out.status.success(), "run:\n{t}");
    let json = t
        .lines()
        .find(|l| l.starts_with('{'))
        .unwrap_or_else(|| panic!("no JSON report:\n{t}"));
    let report: serde_json::Value = serde_json::from_str(json).expect("the report is JSON");
    assert!(report["fatal"].is_null(), "{json}");
    let m = &report["workload_metrics"];
    let types: Vec<&str> = m["transactions"]
        .as_array()
        .expect("transactions")
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert_eq!(
        types,
        [
            "new_order",
            "payment",
            "order_status",
            "delivery",
            "stock_level"
        ]
    );
    let count_of = |name: &str| {
        m["transactions"]
            .as_array()
            .unwrap()
            .iter()
            .find(|t| t["name"] == name)
            .and_then(|t| t["count"].as_f64())
            .unwrap()
    };
    assert!(
        count_of("new_order") > 0.0 && count_of("payment") > 0.0,
        "{m}"
    );
    let tpmc = m["values"]["tpmc"].as_f64().expect("tpmc");
    let secs = report["total_time_secs"].as_f64().unwrap();
    assert!(
        (tpmc - count_of("new_order") * 60.0 / secs).abs() < 1e-6,
        "{m}"
    );
    // every transaction is one event of the run
    let events: f64 = types.iter().map(|t| count_of(t)).sum();
    assert_eq!(events, report["transactions"].as_f64().unwrap(), "{m}");
    assert!(count(&mut c, "orders1") > 1000, "New-Orders were committed");
    check(&srv, true);

    // a customer with a delivered order: its balance no longer matches its orders and payments
    let who: (u32, u32) = c
        .query_first(
            "SELECT o_d_id, o_c_id FROM orders1 WHERE o_w_id = 1 AND o_id = 1 AND o_d_id = 1",
        )
        .unwrap()
        .unwrap();
    c.query_drop(format!(
        "UPDATE customer1 SET c_balance = c_balance + 1 WHERE c_w_id = 1 AND c_d_id = {} AND c_id = {}",
        who.0, who.1
    ))
    .unwrap();
    let t = check(&srv, false);
    for n in [10, 12] {
        assert!(
            t.contains(&format!("Check {n}, warehouse: 1 FAILED")),
            "condition {n} must fail:\n{t}"
        );
    }
    assert!(t.contains("Check 8, warehouse: 1 PASSED"), "{t}");

    let out = tpcc(&srv, "cleanup", &[]);
    assert!(out.status.success(), "cleanup:\n{}", text(&out));
    let left: Option<String> = c.query_first("SHOW TABLES LIKE '%1'").unwrap();
    assert_eq!(left, None, "cleanup drops every table");
}
