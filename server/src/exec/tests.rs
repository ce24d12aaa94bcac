//! Unit tests of the executor against a core built without a server: table statements
//! planned by [`plan`](super::plan) and run by [`execute`](super::execute) on a
//! [`Context`], each under the statement transaction every table statement runs in; name
//! resolution errors with MySQL's codes; the access path the planner picks.

use crate::context::{testing, Context};
use crate::error::{SqlError, SqlResult};
use crate::exec::access::AccessType;
use crate::exec::query::SourceKind;
use crate::exec::{Body, Planned};
use crate::sql::Output;
use crate::value::Value;

/// Plans one table statement.
fn plan(st: &Context, sql: &str) -> SqlResult<Planned> {
    let mut stmts = crate::sql::parse(sql)?;
    assert_eq!(stmts.len(), 1, "{sql}");
    super::plan(st, stmts.remove(0), sql)
}

/// Plans and runs one table statement as the statement layer does: DDL commits first, a
/// statement that reads or writes rows runs in a statement transaction.
fn run(st: &mut Context, sql: &str) -> SqlResult<Output> {
    let p = plan(st, sql)?;
    match p.plan.body.transactional() {
        None => {
            if p.plan.body.commits_implicitly() {
                crate::stmt::transaction::commit(st);
            }
            super::execute(st, &p.plan, &[])
        }
        Some(writes) => {
            crate::stmt::transaction::statement(st, writes, |st| super::execute(st, &p.plan, &[]))
        }
    }
}

fn rows(st: &mut Context, sql: &str) -> Vec<Vec<Value>> {
    match run(st, sql) {
        Ok(Output::Rows(rs)) => rs.rows,
        other => panic!("{sql}: {other:?}"),
    }
}

fn affected(st: &mut Context, sql: &str) -> u64 {
    match run(st, sql) {
        Ok(Output::Ok { affected_rows, .. }) => affected_rows,
        other => panic!("{sql}: {other:?}"),
    }
}

fn code(r: SqlResult<impl std::fmt::Debug>) -> u16 {
    match r {
        Ok(v) => panic!("expected an error, got {v:?}"),
        Err(SqlError { code, .. }) => code.code(),
    }
}

fn int(i: i64) -> Value {
    Value::Int(i)
}

/// A context in database `d` with table `t` (primary key `id`, secondary index `k_idx` on
/// `k`, unique index `v_u` on `v`) holding three rows.
fn with_table() -> Context {
    let core = testing::core();
    core.catalog.create_database("d", None).expect("create d");
    let mut st = testing::root(&core);
    st.db = Some("d".into());
    run(
        &mut st,
        "CREATE TABLE t (id INT PRIMARY KEY, k INT, v VARCHAR(10), \
         KEY k_idx (k), UNIQUE KEY v_u (v))",
    )
    .expect("create table");
    assert_eq!(
        affected(
            &mut st,
            "INSERT INTO t VALUES (1, 10, 'a'), (2, 20, 'b'), (3, 20, NULL)"
        ),
        3
    );
    st
}

#[test]
fn rows_go_in_and_come_back() {
    let mut st = with_table();
    assert_eq!(
        rows(&mut st, "SELECT id, k, v FROM t ORDER BY id"),
        vec![
            vec![int(1), int(10), Value::str("a")],
            vec![int(2), int(20), Value::str("b")],
            vec![int(3), int(20), Value::Null],
        ]
    );
    assert_eq!(
        rows(&mut st, "SELECT id FROM t WHERE k = 20 ORDER BY id DESC"),
        vec![vec![int(3)], vec![int(2)]]
    );
    assert_eq!(
        rows(
            &mut st,
            "SELECT COUNT(*), SUM(k) FROM t WHERE v IS NOT NULL"
        ),
        vec![vec![
            int(2),
            Value::Decimal(crate::value::Decimal::new(30, 0))
        ]]
    );
}

#[test]
fn update_and_delete_change_exactly_the_matching_rows() {
    let mut st = with_table();
    assert_eq!(affected(&mut st, "UPDATE t SET k = k + 5 WHERE k = 20"), 2);
    assert_eq!(affected(&mut st, "UPDATE t SET v = 'z' WHERE id = 99"), 0);
    assert_eq!(
        rows(&mut st, "SELECT id, k FROM t ORDER BY id"),
        vec![
            vec![int(1), int(10)],
            vec![int(2), int(25)],
            vec![int(3), int(25)],
        ]
    );
    assert_eq!(
        affected(&mut st, "DELETE FROM t WHERE k > 20 AND v IS NULL"),
        1
    );
    assert_eq!(
        rows(&mut st, "SELECT id FROM t ORDER BY id"),
        vec![vec![int(1)], vec![int(2)]]
    );
    assert_eq!(st.core.catalog.table("d", "t").expect("t").row_count(), 2);
}

#[test]
fn a_duplicate_key_is_1062_and_the_statement_changes_nothing() {
    let mut st = with_table();
    // The second row repeats the primary key of an existing one: the whole statement fails.
    let e = run(&mut st, "INSERT INTO t VALUES (4, 40, 'd'), (1, 50, 'e')").expect_err("dup");
    assert_eq!(e.code.code(), 1062, "{}", e.message);
    assert!(
        e.message.contains("'1'") && e.message.contains("PRIMARY"),
        "{}",
        e.message
    );
    // A unique secondary index too, on UPDATE.
    assert_eq!(
        code(run(&mut st, "UPDATE t SET v = 'a' WHERE id = 2")),
        1062
    );
    assert_eq!(
        rows(&mut st, "SELECT id, v FROM t ORDER BY id"),
        vec![
            vec![int(1), Value::str("a")],
            vec![int(2), Value::str("b")],
            vec![int(3), Value::Null],
        ]
    );
    // NULLs do not collide in a unique index.
    assert_eq!(affected(&mut st, "INSERT INTO t VALUES (5, 50, NULL)"), 1);
}

#[test]
fn names_that_do_not_resolve_fail_with_mysqls_codes() {
    let mut st = with_table();
    run(&mut st, "CREATE TABLE u (id INT PRIMARY KEY, k INT)").expect("create u");
    assert_eq!(code(plan(&st, "SELECT nosuch FROM t")), 1054);
    assert_eq!(code(plan(&st, "SELECT id FROM t WHERE t.nosuch = 1")), 1054);
    assert_eq!(code(plan(&st, "SELECT * FROM nosuch")), 1146);
    assert_eq!(
        code(plan(&st, "SELECT k FROM t JOIN u ON t.id = u.id")),
        1052
    );
    assert_eq!(code(plan(&st, "SELECT 1 FROM t JOIN t")), 1066);
    assert_eq!(
        code(plan(&st, "INSERT INTO t (id, nosuch) VALUES (1, 2)")),
        1054
    );
    assert_eq!(code(plan(&st, "UPDATE t SET nosuch = 1")), 1054);
    st.db = None;
    assert_eq!(code(plan(&st, "SELECT * FROM t")), 1046);
    assert!(plan(&st, "SELECT * FROM d.t").is_ok());
}

/// The access path chosen for the one table of `sql`: (index name, EXPLAIN type).
fn access(st: &Context, sql: &str) -> (String, AccessType) {
    let p = plan(st, sql).unwrap_or_else(|e| panic!("{sql}: {}", e.message));
    let Body::Select(q) = &p.plan.body else {
        panic!("{sql}: not a select");
    };
    let SourceKind::Base { table, access } = &q.sources[0].kind else {
        panic!("{sql}: not a base table");
    };
    let name = table.def().indexes()[access.index].name.clone();
    (name, access.kind)
}

#[test]
fn the_planner_uses_the_index_a_predicate_names() {
    let mut st = with_table();
    run(
        &mut st,
        "CREATE TABLE p (id INT PRIMARY KEY, u INT, UNIQUE KEY u_u (u))",
    )
    .expect("p");
    let a = |sql| access(&st, sql);
    let idx = |n: &str, k| (n.to_string(), k);
    assert_eq!(
        a("SELECT * FROM t WHERE id = 2"),
        idx("PRIMARY", AccessType::Const)
    );
    assert_eq!(
        a("SELECT * FROM t WHERE id > 1"),
        idx("PRIMARY", AccessType::Range)
    );
    assert_eq!(
        a("SELECT * FROM t WHERE id IN (1, 3)"),
        idx("PRIMARY", AccessType::Range)
    );
    assert_eq!(
        a("SELECT * FROM t WHERE k = 20"),
        idx("k_idx", AccessType::Ref)
    );
    assert_eq!(
        a("SELECT * FROM t WHERE k BETWEEN 5 AND 15"),
        idx("k_idx", AccessType::Range)
    );
    assert_eq!(
        a("SELECT * FROM p WHERE u = 7"),
        idx("u_u", AccessType::Const)
    );
    // Text keys hold collation weights: a string equality searches them, a number (compared
    // as a number, '05' = 5) does not.
    assert_eq!(
        a("SELECT * FROM t WHERE v = 'B'"),
        idx("v_u", AccessType::Const)
    );
    assert_eq!(
        a("SELECT * FROM t WHERE v = 5"),
        idx("PRIMARY", AccessType::All),
        "a number compares with text as a number"
    );
    assert_eq!(
        a("SELECT * FROM t WHERE v > 'a' AND v < 'c'"),
        idx("v_u", AccessType::Range)
    );
    // A unique full-key equality wins over a non-unique one.
    assert_eq!(
        a("SELECT * FROM t WHERE k = 20 AND id = 2"),
        idx("PRIMARY", AccessType::Const)
    );
    // No usable predicate: a full scan of the clustered index.
    assert_eq!(
        a("SELECT * FROM t WHERE k + 1 = 21"),
        idx("PRIMARY", AccessType::All)
    );
    assert_eq!(a("SELECT * FROM t"), idx("PRIMARY", AccessType::All));
}

/// The result metadata of `sql`'s columns: (table alias, original table, name) of each.
fn column_tables(st: &mut Context, sql: &str) -> Vec<(String, String, String)> {
    match run(st, sql) {
        Ok(Output::Rows(rs)) => rs
            .columns
            .iter()
            .map(|c| (c.table.clone(), c.org_table.clone(), c.name.clone()))
            .collect(),
        other => panic!("{sql}: {other:?}"),
    }
}

#[test]
fn a_table_s_source_columns_are_shared_until_ddl_rebuilds_it() {
    use crate::exec::sources::table_columns;
    use std::sync::Arc;
    let mut st = with_table();
    let t = st.core.catalog.table("d", "t").expect("t");
    let first = table_columns(&st, &t, "d", "t");
    assert!(Arc::ptr_eq(&first, &table_columns(&st, &t, "d", "t")));
    // Another alias or database is another list: the metadata names them.
    assert!(!Arc::ptr_eq(&first, &table_columns(&st, &t, "d", "a")));
    assert!(!Arc::ptr_eq(&first, &table_columns(&st, &t, "e", "t")));
    assert_eq!(
        column_tables(&mut st, "SELECT a.id FROM t a WHERE a.id = 1"),
        vec![("a".into(), "t".into(), "id".into())]
    );
    assert_eq!(
        column_tables(&mut st, "SELECT b.id FROM t AS b WHERE b.id = 1"),
        vec![("b".into(), "t".into(), "id".into())]
    );
    // ALTER TABLE makes a new table object: its statements see the new column.
    run(&mut st, "ALTER TABLE t ADD COLUMN w INT").expect("alter");
    let t2 = st.core.catalog.table("d", "t").expect("t");
    assert_eq!(table_columns(&st, &t2, "d", "t").len(), 4);
    assert_eq!(
        rows(&mut st, "SELECT * FROM t WHERE id = 1"),
        vec![vec![int(1), int(10), Value::str("a"), Value::Null]]
    );
    assert_eq!(affected(&mut st, "UPDATE t SET w = 7 WHERE id = 1"), 1);
    assert_eq!(
        rows(&mut st, "SELECT w FROM t WHERE id = 1"),
        vec![vec![int(7)]]
    );
}

#[test]
fn prepared_columns_are_made_on_request_only() {
    let st = with_table();
    let p = plan(&st, "SELECT id, v FROM t WHERE k = 20").expect("plan");
    let names: Vec<String> = p
        .plan
        .prepared_columns()
        .iter()
        .map(|c| c.name.clone())
        .collect();
    assert_eq!(names, ["id", "v"]);
    assert!(plan(&st, "UPDATE t SET k = 1 WHERE id = 1")
        .expect("plan")
        .plan
        .prepared_columns()
        .is_empty());
    // A text statement's plan carries none; COM_STMT_PREPARE's does.
    let text = crate::stmt::plan::table_statement(
        &st,
        crate::sql::parse("SELECT id FROM t")
            .expect("parse")
            .remove(0),
        "SELECT id FROM t",
    )
    .expect("plan");
    assert!(text.columns.is_empty());
    let prepared = crate::stmt::prepare(&st, "SELECT id FROM t").expect("prepare");
    assert_eq!(prepared.columns.len(), 1);
}
