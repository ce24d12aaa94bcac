//! LOAD DATA [LOCAL] INFILE: reads a delimited text file (from the server's disk, or sent by
//! the client for LOCAL), turns each record into a row the way MySQL does (missing fields,
//! extra fields, `\N` for NOT NULL columns, `@var` targets, `SET`) and writes the rows in
//! batches through INSERT's row writer, so rows meet the same checks, duplicate handling and
//! non-strict clipping as a multi-row INSERT. The statement answers with MySQL's
//! "Records: N  Deleted: N  Skipped: N  Warnings: N".

use std::sync::Arc;

use sqlparser::ast::{self, Expr};

use crate::context::Context;
use crate::engine::Table;
use crate::error::{ErrorCode, SqlError, SqlResult};
use crate::exec::checks::BoundChecks;
use crate::exec::data_file::{Reader, Record};
use crate::exec::dml::column_pos;
use crate::exec::file_access;
use crate::exec::foreign_keys::ForeignKeys;
use crate::exec::insert::{write_rows, Insert, InsertSource, Written};
use crate::exec::run::Exec;
use crate::exec::scope::{Scope, SourceColumn};
use crate::exec::sources::table_columns;
use crate::exec::Planner;
use crate::sql::expr::BoundExpr;
use crate::sql::load_syntax::{LoadDataSyntax, OnDuplicate, Target};
use crate::sql::output::Output;
use crate::value::Value;
use crate::vars::Counter;

/// Rows handed to the row writer at a time: large enough that per-batch costs vanish,
/// small enough that a big file is not converted into rows all at once.
const BATCH_ROWS: usize = 1000;

/// The alias under which SET expressions see the statement's `@var` targets.
const VARS_ALIAS: &str = "\0load_vars";

/// Where input field `i` goes.
#[derive(Debug, Clone)]
enum FieldTarget {
    /// A table column (its position).
    Column(usize),
    /// The n-th distinct `@var` of the statement.
    Var(usize),
}

/// A LOAD DATA statement resolved against the catalog.
#[derive(Debug)]
struct Resolved {
    table: Arc<Table>,
    fields: Vec<FieldTarget>,
    vars: Vec<String>,
    /// SET assignments: column and expression over (table row ++ vars); None is DEFAULT.
    set: Vec<(usize, Option<BoundExpr>)>,
    insert: Insert,
}

/// The database and table a LOAD DATA names.
pub(crate) fn target_table(st: &Context, l: &LoadDataSyntax) -> SqlResult<(String, String)> {
    let db = match &l.db {
        Some(d) => d.clone(),
        None => st.db.clone().ok_or_else(crate::exec::errors::no_database)?,
    };
    Ok((db, l.table.clone()))
}

/// The checks MySQL makes before it reads the file (for LOCAL, before it asks the client
/// for it): LOCAL enabled on both sides (3948), the FILE privilege for a server file
/// (1045), the table's privileges and existence.
pub(crate) fn check_before_read(st: &Context, l: &LoadDataSyntax) -> SqlResult<()> {
    if l.local {
        let server_on = st.core.vars.global_by_name("local_infile").as_bool();
        if !server_on || !st.caps.contains(protocol::Capabilities::LOCAL_FILES) {
            return Err(SqlError::new(
                ErrorCode::ClientLocalFilesDisabled,
                "Loading local data is disabled; this must be enabled on both the client and \
                 server sides",
            ));
        }
    } else {
        file_access::require_file_privilege(st)?;
    }
    let (db, table) = target_table(st, l)?;
    use crate::accounts::PrivSet;
    let need = if l.on_duplicate == OnDuplicate::Replace {
        PrivSet::INSERT.union(PrivSet::DELETE)
    } else {
        PrivSet::INSERT
    };
    crate::privileges::access::require_table(st, need, &db, &table)?;
    st.check_table_locked(&db, &table)?;
    st.core
        .catalog
        .engine
        .table(&db, &table)
        .map_err(|_| crate::exec::errors::no_such_table(&db, &table))?;
    Ok(())
}

/// Rewrites `@name` references to the statement's own `@var` targets as columns of
/// [`VARS_ALIAS`], so SET sees each row's values.
fn rewrite_vars(e: &Expr, vars: &[String]) -> Expr {
    let mut e = e.clone();
    let _ = ast::visit_expressions_mut(&mut e, |x| {
        if let Expr::Identifier(id) = x {
            if let Some(name) = id.value.strip_prefix('@') {
                if vars.iter().any(|v| v.eq_ignore_ascii_case(name)) {
                    *x = Expr::CompoundIdentifier(vec![
                        ast::Ident::new(VARS_ALIAS),
                        ast::Ident::new(name.to_ascii_lowercase()),
                    ]);
                }
            }
        }
        std::ops::ControlFlow::<()>::Continue(())
    });
    e
}

/// Resolves the table, the field targets and the SET list, and plans the INSERT they feed.
fn resolve(st: &Context, l: &LoadDataSyntax, sql: &str) -> SqlResult<Resolved> {
    let (db, tname) = target_table(st, l)?;
    let mut p = Planner {
        st,
        sql,
        db: Some(db.clone()),
        params: 0,
        select_ids: 0,
        tables: Vec::new(),
        materialized: false,
        run_subqueries: false,
        outer_scope: Vec::new(),
    };
    let table = p.table(&db, &tname)?;
    let def = table.def();
    let mut vars: Vec<String> = Vec::new();
    let fields: Vec<FieldTarget> = if l.targets.is_empty() {
        (0..def.columns().len()).map(FieldTarget::Column).collect()
    } else {
        l.targets
            .iter()
            .map(|t| match t {
                Target::Column(c) => def
                    .column_index(c)
                    .map(FieldTarget::Column)
                    .ok_or_else(|| crate::exec::errors::unknown_column(c, "field list")),
                Target::Var(v) => {
                    let v = v.to_ascii_lowercase();
                    let n = vars.iter().position(|x| *x == v).unwrap_or_else(|| {
                        vars.push(v);
                        vars.len() - 1
                    });
                    Ok(FieldTarget::Var(n))
                }
            })
            .collect::<SqlResult<_>>()?
    };
    let registry = &st.core.vars;
    let mut scope = Scope::new(registry);
    scope.push(&tname, &db, table_columns(st, &table, &db, &tname))?;
    let var_columns: Vec<SourceColumn> = vars
        .iter()
        .map(|v| SourceColumn {
            name: v.clone(),
            def: protocol::ColumnDefinition::new(v, protocol::ColumnType::VarString),
            ty: None,
            nullable: true,
        })
        .collect();
    scope.push(VARS_ALIAS, "", var_columns)?;
    let mut set = Vec::new();
    for a in &l.set {
        let ast::AssignmentTarget::ColumnName(n) = &a.target else {
            return Err(SqlError::parse("SET (a, b) = ..."));
        };
        let col = column_pos(&table, n)?;
        let e = match &a.value {
            Expr::Identifier(id) if id.value.eq_ignore_ascii_case("default") => None,
            e => Some(p.bind_with(&scope, &rewrite_vars(e, &vars))?),
        };
        set.push((col, e));
    }
    let mut columns: Vec<usize> = fields
        .iter()
        .filter_map(|f| match f {
            FieldTarget::Column(c) => Some(*c),
            FieldTarget::Var(_) => None,
        })
        .collect();
    columns.extend(set.iter().map(|(c, _)| *c));
    let checks = BoundChecks::plan(&p, &db, &table)?;
    let foreign_keys = ForeignKeys::plan(&mut p, &db, &table);
    // With LOCAL the server cannot stop the client's transfer, so duplicates and bad values
    // become warnings as with IGNORE (MySQL's rule), unless REPLACE is given.
    let ignore =
        l.on_duplicate == OnDuplicate::Ignore || (l.local && l.on_duplicate == OnDuplicate::Error);
    let insert = Insert {
        table: Arc::clone(&table),
        columns,
        source: InsertSource::Values(Vec::new()),
        ignore,
        replace: l.on_duplicate == OnDuplicate::Replace,
        on_duplicate: Vec::new(),
        checks,
        foreign_keys,
    };
    Ok(Resolved {
        table,
        fields,
        vars,
        set,
        insert,
    })
}

/// Reads the server-side file a non-LOCAL LOAD DATA names.
fn read_server_file(st: &Context, name: &str) -> SqlResult<Vec<u8>> {
    let path = file_access::resolve(st, name);
    file_access::check_secure(st, &path)?;
    std::fs::read(&path).map_err(|e| {
        SqlError::new(
            ErrorCode::FileNotFound,
            format!(
                "File '{}' not found {}",
                path.display(),
                file_access::os_error(&e)
            ),
        )
    })
}

/// Executes LOAD DATA inside the statement's transaction. `local` holds the file the client
/// sent (LOCAL), else the server's file is read.
pub(crate) fn execute(
    st: &mut Context,
    l: &LoadDataSyntax,
    sql: &str,
    local: Option<Vec<u8>>,
) -> SqlResult<Output> {
    st.count(Counter::ComLoad);
    let data = match local {
        Some(d) => d,
        None => read_server_file(st, &l.file)?,
    };
    let r = resolve(st, l, sql)?;
    crate::exec::metadata_lock::hold_shared(st, [&r.table])?;
    let format = l.format.for_session(st.sql_modes().no_backslash_escapes);
    if format.fixed_width() {
        return Err(SqlError::unsupported(
            "LOAD DATA with empty FIELDS TERMINATED BY and ENCLOSED BY (fixed-width rows)",
        ));
    }
    let mut reader = Reader::new(&data, &format);
    for _ in 0..l.ignore_lines {
        if reader.next_record().is_none() {
            break;
        }
    }
    let strict = st.sql_modes().strict && !r.insert.ignore;
    let mut load = Loader {
        r: &r,
        strict,
        records: 0,
        w: Written::default(),
        last_vars: vec![Value::Null; r.vars.len()],
    };
    let result = load.run(st, &mut reader);
    let c = &st.conn.counters;
    c.add(Counter::HandlerWrite, load.w.inserted);
    c.add(Counter::InnodbRowsInserted, load.w.inserted);
    result?;
    for (v, val) in r.vars.iter().zip(std::mem::take(&mut load.last_vars)) {
        st.user_vars.insert(v.clone(), val);
    }
    std::mem::take(&mut load.w.warnings).report(st);
    let deleted = if r.insert.replace { load.w.dups } else { 0 };
    let skipped = load.records.saturating_sub(load.w.inserted);
    let info = format!(
        "Records: {}  Deleted: {deleted}  Skipped: {skipped}  Warnings: {}",
        load.records,
        st.warnings.count()
    );
    Ok(Output::Ok {
        affected_rows: load.w.affected,
        last_insert_id: load.w.first_id,
        info,
    })
}

/// One execution's running state.
struct Loader<'r> {
    r: &'r Resolved,
    /// Strict mode without IGNORE/LOCAL: 1261/1262/1263 are errors.
    strict: bool,
    /// Records read (after IGNORE n LINES).
    records: u64,
    w: Written,
    /// The `@var` values of the last record, left in the user variables afterwards.
    last_vars: Vec<Value>,
}

impl Loader<'_> {
    /// Converts and writes every record, a batch at a time.
    fn run(&mut self, st: &Context, reader: &mut Reader<'_>) -> SqlResult<()> {
        let ex = Exec::new(st, &[]);
        let mut batch: Vec<Vec<Option<Value>>> = Vec::with_capacity(BATCH_ROWS);
        let mut first = 1u64;
        while let Some(rec) = reader.next_record() {
            self.records += 1;
            let rowno = self.records;
            let mut notes = Vec::new();
            let row = self.convert(&ex, rec, rowno, &mut notes)?;
            if !notes.is_empty() {
                // This row's conversion warnings come after the earlier rows' write warnings.
                self.flush(st, &ex, &mut batch, &mut first)?;
                self.w.warnings.extend(notes);
            }
            batch.push(row);
            if batch.len() >= BATCH_ROWS {
                self.flush(st, &ex, &mut batch, &mut first)?;
            }
        }
        self.flush(st, &ex, &mut batch, &mut first)
    }

    fn flush(
        &mut self,
        st: &Context,
        ex: &Exec<'_>,
        batch: &mut Vec<Vec<Option<Value>>>,
        first: &mut u64,
    ) -> SqlResult<()> {
        if batch.is_empty() {
            return Ok(());
        }
        // A KILL QUERY ends a long load between batches (1317), rolling the statement back.
        let killed = st.conn.killed.load(std::sync::atomic::Ordering::Relaxed);
        if killed != crate::connections::KILL_NONE {
            return Err(SqlError::new(
                crate::error::ErrorCode::QueryInterrupted,
                "Query execution was interrupted",
            ));
        }
        let n = batch.len() as u64;
        let rows = std::mem::replace(batch, Vec::with_capacity(BATCH_ROWS));
        write_rows(ex, &self.r.insert, rows, *first, &mut self.w)?;
        *first += n;
        Ok(())
    }

    /// A per-row condition: an error in strict mode, else a warning for `notes`.
    fn condition(
        &self,
        code: ErrorCode,
        message: String,
        notes: &mut Vec<(u16, String)>,
    ) -> SqlResult<()> {
        if self.strict {
            return Err(SqlError::new(code, message));
        }
        notes.push((code as u16, message));
        Ok(())
    }

    /// One record as values for the INSERT's columns (fields, then SET results).
    fn convert(
        &mut self,
        ex: &Exec<'_>,
        rec: Record,
        rowno: u64,
        notes: &mut Vec<(u16, String)>,
    ) -> SqlResult<Vec<Option<Value>>> {
        let r = self.r;
        let def = r.table.def();
        let now = crate::time::datetime_from_micros(ex.now);
        if rec.len() > r.fields.len() {
            self.condition(
                ErrorCode::WarnTooManyRecords,
                format!(
                    "Row {rowno} was truncated; it contained more data than there were input \
                     columns"
                ),
                notes,
            )?;
        }
        let short = rec.len() < r.fields.len();
        if short {
            self.condition(
                ErrorCode::WarnTooFewRecords,
                format!("Row {rowno} doesn't contain data for all columns"),
                notes,
            )?;
        }
        let mut row = Vec::with_capacity(r.insert.columns.len());
        let mut vars = vec![Value::Null; r.vars.len()];
        let mut fields = rec.into_iter();
        for target in &r.fields {
            let field = fields.next();
            match target {
                FieldTarget::Var(n) => {
                    vars[*n] = match field {
                        Some(Some(b)) => Value::Bytes(b),
                        _ => Value::Null,
                    };
                }
                FieldTarget::Column(c) => {
                    let v = match field {
                        // A missing field: the column's default, or its type's implicit one.
                        None => def.added_column_value(*c, now),
                        Some(Some(b)) => Value::Bytes(b),
                        Some(None) => self.null_for(*c, rowno, notes)?,
                    };
                    row.push(Some(v));
                }
            }
        }
        if !r.set.is_empty() {
            // SET sees the row as read so far (defaults elsewhere) and the @vars.
            let mut env: Vec<Value> = (0..def.columns().len())
                .map(|c| def.added_column_value(c, now))
                .collect();
            for (pos, v) in r.insert.columns.iter().zip(&row) {
                if let Some(v) = v {
                    env[*pos] = v.clone();
                }
            }
            env.extend(vars.iter().cloned());
            for (col, e) in &r.set {
                let v = match e {
                    Some(e) => {
                        let v = ex.eval(e, &env)?;
                        env[*col] = v.clone();
                        Some(v)
                    }
                    None => None,
                };
                row.push(v);
            }
        }
        self.last_vars = vars;
        Ok(row)
    }

    /// `\N` for column `c`: NULL where the column takes it (or generates a value), else
    /// the type's implicit default with 1263.
    fn null_for(&self, c: usize, rowno: u64, notes: &mut Vec<(u16, String)>) -> SqlResult<Value> {
        let def = self.r.table.def();
        let col = &def.columns()[c];
        if col.nullable || def.auto_increment_column() == Some(c) {
            return Ok(Value::Null);
        }
        self.condition(
            ErrorCode::WarnNullToNotNull,
            format!(
                "Column set to default value; NULL supplied to NOT NULL column '{}' at row \
                 {rowno}",
                col.name
            ),
            notes,
        )?;
        Ok(col.ty.implicit_default())
    }
}
