//! Applications' ORMs against tpbed, through PyMySQL: Django (the contrib apps' migrations and
//! one app's, ORM writes, a `select_for_update(skip_locked=True)` claim loop) and SQLAlchemy 2
//! (a model whose columns are reserved words, `with_for_update(skip_locked=True)`). Each claim
//! loop runs 8 threads over 2,000 jobs and every job must be claimed exactly once.

use std::path::PathBuf;
use std::process::Command;

use mysql::prelude::*;
use tpbed_tests::{has_python_module, require_tool, TestServer};

/// A fixture under `tests/fixtures/`.
fn fixture(path: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("fixtures")
        .join(path)
}

/// Runs a Python script against `srv`, bounded in time; returns the JSON line it printed.
fn run_python(srv: &TestServer, script: &PathBuf, args: &[String]) -> serde_json::Value {
    let mut child = Command::new("timeout")
        .arg("300")
        .arg("python3")
        .arg(script)
        .args(args)
        .env("TPBED_PORT", srv.port.to_string())
        .env("PYTHONDONTWRITEBYTECODE", "1")
        .output()
        .expect("python3 runs");
    let stderr = String::from_utf8_lossy(&child.stderr).to_string();
    assert!(
        child.status.success(),
        "{} failed ({}):\n{stderr}",
        script.display(),
        child.status
    );
    let stdout = String::from_utf8(std::mem::take(&mut child.stdout)).expect("utf-8");
    let last = stdout.lines().last().unwrap_or_default();
    serde_json::from_str(last).unwrap_or_else(|e| panic!("{e}: {stdout}\n{stderr}"))
}

/// Every one of `jobs` was claimed exactly once, by more than one worker.
fn assert_exactly_once(out: &serde_json::Value, jobs: u64) {
    assert_eq!(out["processed"], jobs, "{out}");
    assert_eq!(out["claimed_once"], jobs, "{out}");
    assert_eq!(out["claimed_more"], 0, "{out}");
    assert!(out["workers_that_claimed"].as_u64() > Some(1), "{out}");
}

#[test]
fn django_migrates_writes_and_claims_each_job_once_with_skip_locked() {
    if !require_tool("Django (pip install django)", has_python_module("django"))
        || !require_tool("PyMySQL", has_python_module("pymysql"))
    {
        return;
    }
    let srv = TestServer::start(&[]);
    let mut c = srv.connect();
    c.query_drop("CREATE DATABASE django_site").unwrap();
    let out = run_python(&srv, &fixture("django_site/run.py"), &[]);
    // contenttypes, auth, admin, sessions and the jobs app (19 migrations in Django 5.2):
    // every one applied and recorded
    assert_eq!(out["migrations_pending"], 0, "{out}");
    assert!(out["migrations_applied"].as_u64() >= Some(19), "{out}");
    assert_exactly_once(&out, 2000);
    assert_eq!(out["done"], 2000, "{out}");
    assert_eq!(out["alice_jobs_before_delete"], 1000, "{out}");
    assert_eq!(out["owned_after_delete"], 0, "{out}");
    assert_eq!(out["users"], 0, "{out}");
    // the schema Django built is there, with its foreign keys and CHECK constraint
    let ddl: (String, String) = c
        .query_first("SHOW CREATE TABLE django_site.jobs_job")
        .unwrap()
        .unwrap();
    assert!(
        ddl.1
            .contains("FOREIGN KEY (`owner_id`) REFERENCES `auth_user` (`id`)"),
        "{}",
        ddl.1
    );
    assert!(
        ddl.1.contains("CONSTRAINT `jobs_claims_bounded` CHECK"),
        "{}",
        ddl.1
    );
}

#[test]
fn sqlalchemy_reserved_word_columns_and_skip_locked_claims_each_job_once() {
    if !require_tool(
        "SQLAlchemy (pip install sqlalchemy)",
        has_python_module("sqlalchemy"),
    ) || !require_tool("PyMySQL", has_python_module("pymysql"))
    {
        return;
    }
    let srv = TestServer::start(&[]);
    srv.connect()
        .query_drop("CREATE DATABASE sqlalchemy_site")
        .unwrap();
    let out = run_python(
        &srv,
        &fixture("sqlalchemy_jobs.py"),
        &[srv.port.to_string()],
    );
    assert_exactly_once(&out, 2000);
    assert_eq!(out["jobs"], 2000, "{out}");
    assert_eq!(out["first_desc"], "first", "{out}");
    assert_eq!(out["group"], "default", "{out}");
}
