//! Which rows of an introspection table a session sees, as MySQL filters them:
//!
//! - information_schema tables about schema objects (TABLES, COLUMNS, STATISTICS,
//!   SCHEMATA, KEY_COLUMN_USAGE, ...) show only the databases and tables the account holds
//!   some privilege on (MySQL: "you see only the rows for objects you have privileges for").
//! - information_schema.PROCESSLIST shows every connection only with PROCESS, else the
//!   connections of the same user name (MySQL's `fill_schema_processlist` compares the user
//!   name, as SHOW PROCESSLIST does).
//! - performance_schema tables are not filtered by row: reading one needs SELECT on it (see
//!   [`super::access`]), and then MySQL shows every row — `threads` with every
//!   connection's PROCESSLIST_INFO, `events_statements_summary_by_digest` with every
//!   QUERY_SAMPLE_TEXT, `data_locks` with every lock — since those tables use
//!   `pfs_updatable_acl` / `pfs_readonly_acl` (grant-checked) and their `make_row` applies no
//!   per-user filter (MySQL's performance_schema sources, `table_threads.cc`,
//!   `table_esms_by_digest.cc`, `table_data_locks.cc`). An account without a grant on
//!   performance_schema gets 1142 instead.
//! - information_schema's `INNODB_*` tables need PROCESS as a whole (1227), as MySQL's
//!   InnoDB information_schema plugins check it.

use crate::context::Context;
use crate::introspection::vtables::VirtualTable;
use crate::privileges::access;
use crate::value::Value;

/// The columns that name a row's database and table, in the order tried.
const SCHEMA_COLUMNS: &[&str] = &[
    "TABLE_SCHEMA",
    "SCHEMA_NAME",
    "CONSTRAINT_SCHEMA",
    "ROUTINE_SCHEMA",
    "TRIGGER_SCHEMA",
];
const TABLE_COLUMNS: &[&str] = &["TABLE_NAME", "EVENT_OBJECT_TABLE"];

fn text(v: &Value) -> Option<String> {
    match v {
        Value::Bytes(b) => Some(String::from_utf8_lossy(b).into_owned()),
        _ => None,
    }
}

/// The rows of `v` (in database `db`) the session may see.
pub fn rows(st: &Context, db: &str, v: &dyn VirtualTable) -> Vec<Vec<Value>> {
    let rows = v.rows(st.core.as_ref());
    if !db.eq_ignore_ascii_case("information_schema") {
        return rows;
    }
    let cols = v.columns();
    let find = |names: &[&str]| {
        names
            .iter()
            .find_map(|n| cols.iter().position(|(c, _)| c.eq_ignore_ascii_case(n)))
    };
    if v.name().eq_ignore_ascii_case("PROCESSLIST") {
        if st
            .privileges
            .global
            .contains(crate::accounts::PrivSet::PROCESS)
        {
            return rows;
        }
        let Some(user) = find(&["USER"]) else {
            return Vec::new();
        };
        return rows
            .into_iter()
            .filter(|r| r.get(user).and_then(text).as_deref() == Some(st.user.as_str()))
            .collect();
    }
    let Some(schema) = find(SCHEMA_COLUMNS) else {
        return rows;
    };
    let table = find(TABLE_COLUMNS);
    rows.into_iter()
        .filter(|r| {
            let Some(d) = r.get(schema).and_then(text) else {
                return true;
            };
            match table.and_then(|t| r.get(t)).and_then(text) {
                Some(t) => access::can_see_table(st, &d, &t),
                None => access::can_see_db(st, &d),
            }
        })
        .collect()
}
