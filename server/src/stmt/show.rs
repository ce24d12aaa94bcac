//! SHOW statements: VARIABLES and STATUS (with LIKE or WHERE), DATABASES, PROCESSLIST,
//! WARNINGS/ERRORS.

use sqlparser::ast::{self, ShowStatementFilter, ShowStatementFilterPosition};

use crate::accounts::Privilege;
use crate::context::Context;
use crate::error::{ErrorCode, SqlError, SqlResult};
use crate::sql::env::StmtEnv;
use crate::sql::eval::{eval, truth};
use crate::sql::expr::{Binder, BoundExpr, Resolver};
use crate::sql::output::{Output, ResultSet};
use crate::stmt::plan::{Plan, PreparedStmt};
use crate::value::Value;
use crate::vars::{Counter, Registry, Scope};

/// A row filter of a SHOW statement.
#[derive(Debug, Clone)]
pub enum ShowFilter {
    /// No filter.
    None,
    /// `LIKE 'pattern'` on the first column.
    Like(String),
    /// `WHERE expr` over the result's columns.
    Where(BoundExpr),
}

/// A planned SHOW.
#[derive(Debug, Clone)]
pub enum ShowPlan {
    /// `SHOW [GLOBAL|SESSION] VARIABLES` or `STATUS`.
    Vars {
        /// GLOBAL.
        global: bool,
        /// STATUS (else VARIABLES).
        status: bool,
        /// Filter.
        filter: ShowFilter,
    },
    /// `SHOW DATABASES`.
    Databases(ShowFilter),
    /// `SHOW [FULL] PROCESSLIST`.
    Processlist {
        /// FULL: whole statement text.
        full: bool,
    },
    /// `SHOW WARNINGS` / `SHOW ERRORS`, or `SHOW COUNT(*) WARNINGS|ERRORS`.
    Warnings {
        /// ERRORS only.
        errors: bool,
        /// Only how many (`COUNT(*)`).
        count: bool,
    },
    /// `SHOW ENGINE INNODB STATUS`.
    InnodbStatus,
    /// A form answered with these columns and no rows (the replica SHOWs).
    Empty(Vec<String>),
    /// `SHOW MASTER STATUS` / `SHOW BINARY LOG STATUS`.
    MasterStatus,
    /// `SHOW BINARY LOGS` / `SHOW MASTER LOGS`.
    BinaryLogs,
    /// `SHOW [STORAGE] ENGINES`.
    Engines,
    /// `SHOW PLUGINS`.
    Plugins,
    /// `SHOW TABLE STATUS` (see `show_table_status`).
    TableStatus {
        /// Database.
        db: String,
        /// LIKE on the table name.
        filter: ShowFilter,
    },
    /// `SHOW {INDEX | INDEXES | KEYS} {FROM | IN} table [{FROM | IN} db]`.
    Index {
        /// Database (None: the current one).
        db: Option<String>,
        /// Table.
        table: String,
    },
}

/// `SHOW INDEX`'s columns.
const INDEX_COLUMNS: &[&str] = &[
    "Table",
    "Non_unique",
    "Key_name",
    "Seq_in_index",
    "Column_name",
    "Collation",
    "Cardinality",
    "Sub_part",
    "Packed",
    "Null",
    "Index_type",
    "Comment",
    "Index_comment",
    "Visible",
    "Expression",
];

/// The positions in an `information_schema.STATISTICS` row of SHOW INDEX's columns.
const INDEX_FROM_STATISTICS: [usize; 15] = [2, 3, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17];

/// Binds WHERE over a fixed list of column names.
struct Columns<'a> {
    names: &'a [&'a str],
    registry: &'a Registry,
}

impl Resolver for Columns<'_> {
    fn column(&self, _q: Option<&str>, name: &str) -> SqlResult<usize> {
        self.names
            .iter()
            .position(|n| n.eq_ignore_ascii_case(name))
            .ok_or_else(|| {
                SqlError::new(
                    ErrorCode::BadField,
                    format!("Unknown column '{name}' in 'where clause'"),
                )
            })
    }
    fn registry(&self) -> &Registry {
        self.registry
    }
}

fn filter(
    st: &Context,
    f: Option<&ShowStatementFilter>,
    names: &[&str],
) -> SqlResult<(ShowFilter, usize)> {
    Ok(match f {
        None => (ShowFilter::None, 0),
        Some(ShowStatementFilter::Like(p)) | Some(ShowStatementFilter::NoKeyword(p)) => {
            (ShowFilter::Like(p.clone()), 0)
        }
        Some(ShowStatementFilter::ILike(p)) => (ShowFilter::Like(p.clone()), 0),
        Some(ShowStatementFilter::Where(e)) => {
            let r = Columns {
                names,
                registry: &st.core.vars,
            };
            let mut b = Binder::new(&r);
            let bound = b.bind(e)?;
            (ShowFilter::Where(bound), b.params)
        }
    })
}

const VAR_COLUMNS: &[&str] = &["Variable_name", "Value"];

/// Plans SHOW VARIABLES / SHOW STATUS.
pub fn plan_vars(
    st: &Context,
    f: Option<&ShowStatementFilter>,
    global: bool,
    status: bool,
) -> SqlResult<PreparedStmt> {
    let (filter, params) = filter(st, f, VAR_COLUMNS)?;
    Ok(PreparedStmt {
        plan: Plan::Show(ShowPlan::Vars {
            global,
            status,
            filter,
        }),
        params,
        columns: Vec::new(),
    })
}

/// Plans SHOW DATABASES.
pub fn plan_databases(
    st: &Context,
    f: Option<&ShowStatementFilterPosition>,
) -> SqlResult<PreparedStmt> {
    let inner = f.map(|p| match p {
        ShowStatementFilterPosition::Infix(f) | ShowStatementFilterPosition::Suffix(f) => f,
    });
    let (filter, params) = filter(st, inner, &["Database"])?;
    Ok(PreparedStmt {
        plan: Plan::Show(ShowPlan::Databases(filter)),
        params,
        columns: Vec::new(),
    })
}

/// Plans `SHOW word ...` forms sqlparser keeps as words (WARNINGS, ERRORS, ENGINE ...).
pub fn plan_show_words(words: &[ast::Ident]) -> SqlResult<PreparedStmt> {
    let w: Vec<String> = words.iter().map(|i| i.value.to_ascii_uppercase()).collect();
    let plan = match w.iter().map(String::as_str).collect::<Vec<_>>().as_slice() {
        ["WARNINGS"] => ShowPlan::Warnings {
            errors: false,
            count: false,
        },
        ["ERRORS"] => ShowPlan::Warnings {
            errors: true,
            count: false,
        },
        ["COUNT", "WARNINGS"] => ShowPlan::Warnings {
            errors: false,
            count: true,
        },
        ["COUNT", "ERRORS"] => ShowPlan::Warnings {
            errors: true,
            count: true,
        },
        ["ENGINE", "INNODB", "STATUS"] => ShowPlan::InnodbStatus,
        ["ENGINES"] | ["STORAGE", "ENGINES"] => ShowPlan::Engines,
        ["PLUGINS"] => ShowPlan::Plugins,
        ["MASTER", "STATUS"] | ["BINARY", "LOG", "STATUS"] => ShowPlan::MasterStatus,
        ["BINARY", "LOGS"] | ["MASTER", "LOGS"] => ShowPlan::BinaryLogs,
        [kind, from, _, rest @ ..]
            if matches!(*kind, "INDEX" | "INDEXES" | "KEYS") && matches!(*from, "FROM" | "IN") =>
        {
            // `FROM t [FROM db]`, or `FROM db.t` (its parts arrive as two words).
            let (db, table) = match rest {
                [] => (None, &words[2]),
                [_] => (Some(words[2].value.clone()), &words[3]),
                [from, _] if matches!(*from, "FROM" | "IN") => {
                    (Some(words[4].value.clone()), &words[2])
                }
                _ => return Err(SqlError::parse(&words[3].value)),
            };
            ShowPlan::Index {
                db,
                table: table.value.clone(),
            }
        }
        other => match crate::stmt::show_replication::columns(other) {
            Some(columns) => ShowPlan::Empty(columns),
            None => return Err(SqlError::unsupported(&format!("SHOW {}", w.join(" ")))),
        },
    };
    Ok(PreparedStmt {
        plan: Plan::Show(plan),
        params: 0,
        columns: Vec::new(),
    })
}

/// MySQL's privilege test for the binary log SHOWs: SUPER or REPLICATION CLIENT, else 1227.
fn need_replication_client(st: &Context) -> SqlResult<()> {
    if st.privileges.has(Privilege::SUPER) || st.privileges.has(Privilege::REPLICATION_CLIENT) {
        Ok(())
    } else {
        Err(SqlError::need_privilege("SUPER, REPLICATION CLIENT"))
    }
}

fn keep(st: &Context, f: &ShowFilter, row: &[Value], params: &[Value]) -> SqlResult<bool> {
    Ok(match f {
        ShowFilter::None => true,
        ShowFilter::Like(p) => match &row[0] {
            // MySQL's LIKE: `\_` and `\%` stand for themselves (`SHOW ... LIKE 'innodb\_%'`).
            Value::Bytes(b) => crate::sql::eval::like(b, p.as_bytes(), b'\\'),
            _ => false,
        },
        ShowFilter::Where(e) => {
            let mut env = StmtEnv::new(st, params);
            env.row = row;
            truth(&eval(e, &env)?) == Some(true)
        }
    })
}

/// Executes a SHOW.
pub fn execute(st: &mut Context, p: &ShowPlan, params: &[Value]) -> SqlResult<Output> {
    let (names, rows): (&[&str], Vec<Vec<Value>>) = match p {
        ShowPlan::Vars {
            global,
            status: false,
            ..
        } => (VAR_COLUMNS, variable_rows(st, *global)),
        ShowPlan::Vars {
            global,
            status: true,
            ..
        } => {
            st.count(Counter::ComShowStatus);
            let rows = st
                .core
                .status(if *global { None } else { Some(&st.conn) })
                .into_iter()
                .map(|(k, v)| vec![Value::str(&k), Value::str(&v)])
                .collect();
            (VAR_COLUMNS, rows)
        }
        ShowPlan::Databases(_) => {
            st.count(Counter::ComShowDatabases);
            (
                &["Database"],
                st.core
                    .database_names()
                    .iter()
                    .filter(|d| crate::privileges::access::can_see_db(st, d))
                    .map(|d| vec![Value::str(d)])
                    .collect(),
            )
        }
        ShowPlan::Processlist { full } => return Ok(processlist(st, *full)),
        ShowPlan::Warnings { errors, count } => return Ok(warnings(st, *errors, *count)),
        ShowPlan::Engines => (
            crate::stmt::show_engines::ENGINE_COLUMNS,
            crate::stmt::show_engines::engine_rows(),
        ),
        ShowPlan::Plugins => (
            crate::stmt::show_engines::PLUGIN_COLUMNS,
            crate::stmt::show_engines::plugin_rows(st.core.as_ref()),
        ),
        ShowPlan::TableStatus { db, .. } => {
            let rows = crate::privileges::visibility::rows(
                st,
                "information_schema",
                &crate::introspection::vtables::Tables,
            )
            .into_iter()
            .filter(|r| matches!(&r[1], Value::Bytes(b) if b == db.as_bytes()))
            .map(|r| {
                crate::stmt::show_table_status::FROM_TABLES
                    .iter()
                    .map(|&i| r[i].clone())
                    .collect()
            })
            .collect();
            (crate::stmt::show_table_status::COLUMNS, rows)
        }
        ShowPlan::Index { db, table } => {
            let db = match db {
                Some(d) => d.clone(),
                None => st.db.clone().ok_or_else(crate::exec::errors::no_database)?,
            };
            let t = st.core.catalog.table(&db, table)?;
            let rows = crate::introspection::vtables::statistics_rows(&db, &t)
                .into_iter()
                .map(|r| {
                    INDEX_FROM_STATISTICS
                        .iter()
                        .map(|&i| r[i].clone())
                        .collect()
                })
                .collect();
            (INDEX_COLUMNS, rows)
        }
        ShowPlan::MasterStatus => {
            need_replication_client(st)?;
            (
                crate::stmt::show_replication::MASTER_STATUS,
                crate::stmt::show_replication::master_status_rows(st.core.as_ref()),
            )
        }
        ShowPlan::BinaryLogs => {
            need_replication_client(st)?;
            (
                crate::stmt::show_replication::BINARY_LOGS,
                crate::stmt::show_replication::binary_logs_rows(st.core.as_ref())?,
            )
        }
        ShowPlan::Empty(columns) => {
            let names: Vec<&str> = columns.iter().map(String::as_str).collect();
            return Ok(Output::Rows(ResultSet::text(&names, Vec::new())));
        }
        ShowPlan::InnodbStatus => {
            st.count(Counter::ComShowEngineStatus);
            let text = crate::introspection::innodb_tables::innodb_status(st.core.as_ref());
            (
                &["Type", "Name", "Status"],
                vec![vec![
                    Value::str("InnoDB"),
                    Value::str(""),
                    Value::str(&text),
                ]],
            )
        }
    };
    let f = match p {
        ShowPlan::Vars { filter, .. }
        | ShowPlan::Databases(filter)
        | ShowPlan::TableStatus { filter, .. } => filter.clone(),
        _ => ShowFilter::None,
    };
    let mut kept = Vec::with_capacity(rows.len());
    for r in rows {
        if keep(st, &f, &r, params)? {
            kept.push(r);
        }
    }
    Ok(Output::Rows(ResultSet::text(names, kept)))
}

/// SHOW [GLOBAL|SESSION] VARIABLES: (name, value) of every variable in the scope.
fn variable_rows(st: &Context, global: bool) -> Vec<Vec<Value>> {
    st.count(Counter::ComShowVariables);
    let reg = &st.core.vars;
    reg.sorted_ids()
        .into_iter()
        .filter(|id| !(global && reg.def(*id).scope == Scope::Session))
        .map(|id| {
            let def = reg.def(id);
            let (warnings, errors) = st.warnings.previous_counts();
            let v = if global || def.scope == Scope::Global {
                reg.global(id).show()
            } else if id == st.core.ids.warning_count {
                warnings.to_string()
            } else if id == st.core.ids.error_count {
                errors.to_string()
            } else {
                st.vars.get(id).show()
            };
            vec![Value::str(def.name), Value::str(&v)]
        })
        .collect()
}

/// SHOW [FULL] PROCESSLIST: the connections the account may see.
fn processlist(st: &Context, full: bool) -> Output {
    st.count(Counter::ComShowProcesslist);
    let all = st.privileges.has(Privilege::PROCESS);
    let rows = st
        .core
        .connections
        .snapshot()
        .into_iter()
        .filter_map(|c| {
            let login = c.login.lock().unwrap_or_else(|e| e.into_inner()).clone();
            if !all && login.user != st.user {
                return None;
            }
            let info = c.info_text();
            let info = info.map(|i| {
                if full {
                    i
                } else {
                    i.chars().take(100).collect()
                }
            });
            let secs = c.seconds_in_state();
            Some(vec![
                Value::UInt(u64::from(c.id)),
                Value::str(if login.user.is_empty() {
                    "unauthenticated user"
                } else {
                    &login.user
                }),
                Value::str(&c.host),
                login.db.as_deref().map_or(Value::Null, Value::str),
                Value::str(c.command().name()),
                Value::Int(i64::try_from(secs).unwrap_or(i64::MAX)),
                Value::str(c.state().unwrap_or("")),
                info.as_deref().map_or(Value::Null, Value::str),
            ])
        })
        .collect();
    // Id and Time are integers on the wire (BIGINT UNSIGNED and a signed integer),
    // as MySQL sends them; the rest is text.
    let names = [
        "Id", "User", "Host", "db", "Command", "Time", "State", "Info",
    ];
    let columns: Vec<_> = names
        .iter()
        .map(|n| {
            let sample = match *n {
                "Id" => Value::UInt(0),
                "Time" => Value::Int(0),
                _ => Value::str(""),
            };
            crate::sql::output::column_for(n, Some(&sample))
        })
        .collect();
    Output::Rows(ResultSet::new(columns.into(), rows))
}

/// SHOW WARNINGS / SHOW ERRORS (or only their count): the diagnostics area, which they
/// leave as it is.
fn warnings(st: &Context, errors: bool, count: bool) -> Output {
    st.count(Counter::ComShowWarnings);
    if count {
        let (label, n) = if errors {
            ("@@session.error_count", st.warnings.errors())
        } else {
            ("@@session.warning_count", st.warnings.count())
        };
        let value = Value::UInt(n);
        let columns = vec![crate::sql::output::column_for(label, Some(&value))];
        return Output::Rows(ResultSet::new(columns.into(), vec![vec![value]]));
    }
    let rows = st
        .warnings
        .iter()
        .filter(|w| !errors || w.level == "Error")
        .map(|w| {
            vec![
                Value::str(w.level),
                Value::UInt(u64::from(w.code)),
                Value::str(&w.message),
            ]
        })
        .collect();
    Output::Rows(ResultSet::text(&["Level", "Code", "Message"], rows))
}
