//! SHOW TABLES, SHOW CREATE TABLE and `SHOW [FULL] COLUMNS` / DESCRIBE, with MySQL's column
//! names; LIKE filters the first column.

use protocol::ColumnDefinition;
use sqlparser::ast::{self, Statement};

use crate::context::Context;
use crate::error::{SqlError, SqlResult};
use crate::exec::errors::no_database;
use crate::exec::sources::table_name;
use crate::exec::Planner;
use crate::introspection::{describe, system_schema_rows, vtables};
use crate::sql::eval::like;
use crate::sql::output::{Output, ResultSet};
use crate::value::Value;
use crate::vars::Counter;

/// A planned SHOW on tables.
#[derive(Debug, Clone)]
pub enum ShowTable {
    /// `SHOW [FULL] TABLES [FROM db] [LIKE pattern]`.
    Tables {
        /// Database.
        db: String,
        /// FULL: add `Table_type`.
        full: bool,
        /// LIKE pattern.
        like: Option<String>,
    },
    /// SHOW CREATE TABLE.
    Create {
        /// Database.
        db: String,
        /// Table.
        table: String,
    },
    /// SHOW CREATE TABLE of a system table MySQL defines with a statement (the log tables).
    CreateSystem {
        /// Its name as MySQL spells it.
        table: &'static str,
        /// MySQL's definition.
        text: &'static str,
    },
    /// `SHOW [FULL] COLUMNS` / `DESCRIBE`.
    Columns {
        /// Database.
        db: String,
        /// Table.
        table: String,
        /// FULL.
        full: bool,
        /// LIKE pattern.
        like: Option<String>,
    },
}

fn like_of(opts: &ast::ShowStatementOptions) -> SqlResult<Option<String>> {
    match &opts.filter_position {
        None => Ok(None),
        Some(
            ast::ShowStatementFilterPosition::Infix(f)
            | ast::ShowStatementFilterPosition::Suffix(f),
        ) => match f {
            ast::ShowStatementFilter::Like(p) | ast::ShowStatementFilter::NoKeyword(p) => {
                Ok(Some(p.clone()))
            }
            _ => Err(SqlError::unsupported("SHOW ... WHERE on tables")),
        },
    }
}

fn parent(opts: &ast::ShowStatementOptions) -> Option<&ast::ObjectName> {
    opts.show_in.as_ref().and_then(|s| s.parent_name.as_ref())
}

/// Plans a SHOW on tables.
pub fn plan(p: &mut Planner<'_>, s: &Statement) -> SqlResult<ShowTable> {
    match s {
        Statement::ShowTables {
            full, show_options, ..
        } => {
            let db = match parent(show_options) {
                Some(n) => crate::sql::names::dotted(n),
                None => p.db.clone().ok_or_else(no_database)?,
            };
            if !p.st.core.database_exists(&db) {
                return Err(crate::error::unknown_db(&db));
            }
            Ok(ShowTable::Tables {
                db,
                full: *full,
                like: like_of(show_options)?,
            })
        }
        Statement::ShowCreate { obj_type, obj_name } => {
            if !matches!(obj_type, ast::ShowCreateObject::Table) {
                return Err(SqlError::unsupported("SHOW CREATE of this object"));
            }
            let (db, table) = table_name(p, obj_name)?;
            let system = crate::introspection::vtables::lookup(p.st.core.as_ref(), &db, &table);
            if let Some((v, text)) = system.and_then(|v| Some((v, v.create_statement()?))) {
                return Ok(ShowTable::CreateSystem {
                    table: v.name(),
                    text,
                });
            }
            p.table(&db, &table)?;
            Ok(ShowTable::Create { db, table })
        }
        Statement::ShowColumns {
            full, show_options, ..
        } => {
            let Some(n) = parent(show_options) else {
                return Err(SqlError::parse("SHOW COLUMNS"));
            };
            let (db, table) = table_name(p, n)?;
            p.table(&db, &table)?;
            Ok(ShowTable::Columns {
                db,
                table,
                full: *full,
                like: like_of(show_options)?,
            })
        }
        Statement::ExplainTable { table_name: n, .. } => {
            let (db, table) = table_name(p, n)?;
            p.table(&db, &table)?;
            Ok(ShowTable::Columns {
                db,
                table,
                full: false,
                like: None,
            })
        }
        _ => Err(SqlError::unsupported("SHOW")),
    }
}

fn names(s: &ShowTable) -> Vec<String> {
    match s {
        ShowTable::Tables { db, full, .. } => {
            let mut v = vec![format!("Tables_in_{db}")];
            if *full {
                v.push("Table_type".into());
            }
            v
        }
        ShowTable::Create { .. } | ShowTable::CreateSystem { .. } => {
            vec!["Table".into(), "Create Table".into()]
        }
        ShowTable::Columns { full, .. } => {
            let mut v: Vec<String> = ["Field", "Type"].iter().map(|s| s.to_string()).collect();
            if *full {
                v.push("Collation".into());
            }
            v.extend(
                ["Null", "Key", "Default", "Extra"]
                    .iter()
                    .map(|s| s.to_string()),
            );
            if *full {
                v.extend(["Privileges", "Comment"].iter().map(|s| s.to_string()));
            }
            v
        }
    }
}

/// The result columns of a SHOW.
pub fn columns(s: &ShowTable) -> Vec<ColumnDefinition> {
    let n = names(s);
    let refs: Vec<&str> = n.iter().map(String::as_str).collect();
    ResultSet::text(&refs, Vec::new()).columns.to_vec()
}

fn keep(like_pat: &Option<String>, v: &str) -> bool {
    like_pat
        .as_ref()
        .is_none_or(|p| like(v.as_bytes(), p.as_bytes(), b'\\'))
}

/// Executes a SHOW on tables.
pub fn execute(st: &mut Context, s: &ShowTable) -> SqlResult<Output> {
    let cat = &st.core.catalog;
    let mut rows = Vec::new();
    match s {
        ShowTable::Tables { db, full, like: l } => {
            st.count(Counter::ComShowTables);
            let mut tables: Vec<(String, &str)> = cat
                .engine
                .database(db)
                .map(|d| d.table_names())
                .unwrap_or_default()
                .into_iter()
                .map(|t| (t, "BASE TABLE"))
                .collect();
            let (system_kind, _) = system_schema_rows::kind_of(db);
            tables.extend(
                vtables::tables_of(st.core.as_ref(), db)
                    .iter()
                    .map(|t| (t.name().to_string(), system_kind)),
            );
            for (t, kind) in tables
                .iter()
                .filter(|(t, _)| keep(l, t) && crate::privileges::access::can_see_table(st, db, t))
            {
                let mut r = vec![Value::str(t)];
                if *full {
                    r.push(Value::str(kind));
                }
                rows.push(r);
            }
        }
        ShowTable::Create { db, table } => {
            st.count(Counter::ComShowCreateTable);
            let t = cat.table(db, table)?;
            rows.push(vec![
                Value::str(table),
                Value::str(&describe::create_table_text(&t, db)),
            ]);
        }
        ShowTable::CreateSystem { table, text } => {
            st.count(Counter::ComShowCreateTable);
            rows.push(vec![Value::str(table), Value::str(text)]);
        }
        ShowTable::Columns {
            db,
            table,
            full,
            like: l,
        } => {
            st.count(Counter::ComShowFields);
            let t = cat.table(db, table)?;
            for (i, c) in t.def().columns().iter().enumerate() {
                if !keep(l, &c.name) {
                    continue;
                }
                let mut r = vec![Value::str(&c.name), Value::str(&c.ty.sql_name())];
                if *full {
                    r.push(describe::column_collation(&t, c).map_or(Value::Null, Value::str));
                }
                r.push(Value::str(if c.nullable { "YES" } else { "NO" }));
                r.push(Value::str(describe::column_key(&t, i)));
                r.push(describe::default_text(c).map_or(Value::Null, |d| Value::str(&d)));
                r.push(Value::str(describe::extra(c)));
                if *full {
                    r.push(Value::str("select,insert,update,references"));
                    r.push(Value::str(""));
                }
                rows.push(r);
            }
        }
    }
    let n = names(s);
    let refs: Vec<&str> = n.iter().map(String::as_str).collect();
    Ok(Output::Rows(ResultSet::text(&refs, rows)))
}

/// The columns of `db.table` for COM_FIELD_LIST: (column definition of each column).
pub fn field_list(st: &Context, table: &str) -> SqlResult<Vec<ColumnDefinition>> {
    let db = st.db.clone().ok_or_else(no_database)?;
    let t = st.core.catalog.table(&db, table)?;
    Ok(crate::exec::sources::build_table_columns(&t, &db, table)
        .into_iter()
        .map(|c| c.def)
        .collect())
}
