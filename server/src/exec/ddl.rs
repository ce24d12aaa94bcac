//! DDL: CREATE TABLE as sysbench and dumps write it (table options such as ENGINE and
//! COMMENT are accepted; AUTO_INCREMENT and the character set and collation are kept),
//! CREATE/DROP INDEX (the table is rebuilt under the new definition and swapped in),
//! DROP TABLE [IF EXISTS], TRUNCATE and ANALYZE TABLE.

use sqlparser::ast::{self, ColumnOption, Expr, Statement, TableConstraint};

use crate::context::Context;
use crate::engine::{Column, ColumnDefault, IndexDef, IndexKind, TableDef};
use crate::error::engine_error;
use crate::error::{ErrorCode, SqlError, SqlResult};
use crate::exec::coltypes::column_type;
use crate::exec::errors::no_such_table;
use crate::exec::metadata_lock::{under_exclusive_lock, under_exclusive_locks};
use crate::exec::sources::table_name;
use crate::exec::{Body, Planner};
use crate::sql::collations::resolve;
use crate::sql::output::{Output, ResultSet};
use crate::value::Value;
use crate::vars::Counter;

/// A planned CREATE TABLE.
#[derive(Debug, Clone)]
pub struct CreateTable {
    /// Database.
    pub db: String,
    /// The validated definition.
    pub def: TableDef,
    /// IF NOT EXISTS.
    pub if_not_exists: bool,
    /// `AUTO_INCREMENT = n` table option.
    pub auto_increment: Option<u64>,
}

/// A planned CREATE INDEX.
#[derive(Debug, Clone)]
pub struct CreateIndex {
    /// Database.
    pub db: String,
    /// Table.
    pub table: String,
    /// The new index.
    pub index: IndexDef,
}

/// A planned DROP TABLE.
#[derive(Debug, Clone)]
pub struct DropTables {
    /// (database, table) pairs.
    pub names: Vec<(String, String)>,
    /// IF EXISTS.
    pub if_exists: bool,
}

/// A planned DROP INDEX.
#[derive(Debug, Clone)]
pub struct DropIndex {
    /// Database.
    pub db: String,
    /// Table.
    pub table: String,
    /// Index name.
    pub index: String,
}

fn ident(i: &ast::Ident) -> String {
    i.value.clone()
}

fn index_columns(def_cols: &[Column], cols: &[ast::IndexColumn]) -> SqlResult<Vec<usize>> {
    cols.iter()
        .map(|c| {
            let name = index_column_name(c);
            def_cols
                .iter()
                .position(|x| x.name.eq_ignore_ascii_case(&name))
                .ok_or_else(|| key_column_missing(&name))
        })
        .collect()
}

/// 1072 for an index over a column the table does not have.
pub fn key_column_missing(name: &str) -> SqlError {
    SqlError::new(
        ErrorCode::KeyColumnDoesNotExist,
        format!("Key column '{name}' doesn't exist in table"),
    )
}

/// `base`, or `base_2`, `base_3`, ... : the first index name not taken (MySQL's naming of
/// an unnamed key after its first column).
pub fn free_name(indexes: &[IndexDef], base: &str) -> String {
    let taken = |n: &str| indexes.iter().any(|i| i.name.eq_ignore_ascii_case(n));
    if !taken(base) {
        return base.to_string();
    }
    (2..)
        .map(|i| format!("{base}_{i}"))
        .find(|n| !taken(n))
        .unwrap_or_default()
}

/// A DEFAULT clause's value for `col`.
pub fn default_value(p: &Planner<'_>, col: &Column, e: &Expr) -> SqlResult<ColumnDefault> {
    let invalid = || {
        SqlError::new(
            ErrorCode::InvalidDefault,
            format!("Invalid default value for '{}'", col.name),
        )
    };
    if let Expr::Function(f) = e {
        let n = f.name.to_string().to_ascii_lowercase();
        if matches!(
            n.as_str(),
            "now" | "current_timestamp" | "localtimestamp" | "localtime"
        ) {
            return Ok(ColumnDefault::CurrentTimestamp);
        }
    }
    if let Expr::Identifier(i) = e {
        if i.value.eq_ignore_ascii_case("current_timestamp") {
            return Ok(ColumnDefault::CurrentTimestamp);
        }
    }
    let scope = crate::exec::scope::Scope::new(&p.st.core.vars);
    let bound = crate::sql::expr::Binder::new(&scope)
        .bind(e)
        .map_err(|_| invalid())?;
    let v = crate::sql::eval::eval(&bound, &crate::sql::env::StmtEnv::new(p.st, &[]))?;
    if v.is_null() {
        return if col.nullable {
            Ok(ColumnDefault::Value(Value::Null))
        } else {
            Err(invalid())
        };
    }
    col.ty
        .coerce(v, &col.name)
        .map(ColumnDefault::Value)
        .map_err(|_| invalid())
}

/// A column as a column definition declares it, with the keys (`PRIMARY KEY`, `UNIQUE`)
/// and CHECK constraints its options declare.
#[derive(Debug)]
pub struct DeclaredColumn {
    /// The column.
    pub column: Column,
    /// Keys over the column alone.
    pub keys: Vec<IndexKind>,
    /// CHECK options (named by a `CONSTRAINT name` before them, if any).
    pub checks: Vec<ast::CheckConstraint>,
}

/// Plans a column definition.
pub fn column_definition(p: &Planner<'_>, cd: &ast::ColumnDef) -> SqlResult<DeclaredColumn> {
    let ty = column_type(&cd.data_type)?;
    crate::exec::coltypes::check_bit_width(&cd.name.value, ty)?;
    let mut col = Column::new(&cd.name.value, ty);
    let mut default = None;
    let mut keys = Vec::new();
    let mut checks = Vec::new();
    let (mut charset, mut collation) = (None, None);
    for o in &cd.options {
        match &o.option {
            ColumnOption::Check(c) => {
                let mut c = c.clone();
                c.name = c.name.or_else(|| o.name.clone());
                checks.push(c);
            }
            ColumnOption::NotNull => col.nullable = false,
            ColumnOption::Null => col.nullable = true,
            ColumnOption::Default(e) => default = Some(e.clone()),
            ColumnOption::PrimaryKey(_) => keys.push(IndexKind::Primary),
            ColumnOption::Unique(_) => keys.push(IndexKind::Unique),
            ColumnOption::DialectSpecific(toks)
                if toks
                    .iter()
                    .any(|t| t.to_string().eq_ignore_ascii_case("AUTO_INCREMENT")) =>
            {
                col.auto_increment = true
            }
            ColumnOption::CharacterSet(n) => charset = Some(crate::sql::names::last(n)),
            ColumnOption::Collation(n) => collation = Some(crate::sql::names::last(n)),
            ColumnOption::Comment(_) | ColumnOption::OnUpdate(_) => {}
            other => return Err(SqlError::unsupported(&format!("column option {other}"))),
        }
    }
    if col.ty.is_text() {
        col.collation = resolve(charset.as_deref(), collation.as_deref())?;
    }
    if let Some(e) = default {
        col.default = default_value(p, &col, &e)?;
    }
    Ok(DeclaredColumn {
        column: col,
        keys,
        checks,
    })
}

/// The collation table options name (`[DEFAULT] CHARSET=`, `CHARACTER SET`, `COLLATE`);
/// None when they name none.
pub fn options_collation(options: &[ast::SqlOption]) -> SqlResult<Option<String>> {
    let (mut charset, mut collation) = (None, None);
    for o in options {
        if let ast::SqlOption::KeyValue { key, value } = o {
            let value = value.to_string().trim_matches(['\'', '"', '`']).to_string();
            match key
                .to_string()
                .to_ascii_uppercase()
                .trim_start_matches("DEFAULT ")
            {
                "CHARSET" | "CHARACTER SET" => charset = Some(value),
                "COLLATE" => collation = Some(value),
                _ => {}
            }
        }
    }
    resolve(charset.as_deref(), collation.as_deref())
}

/// A key a table constraint declares: kind, name as given, columns as written.
pub type DeclaredKey<'a> = (IndexKind, Option<String>, &'a [ast::IndexColumn]);

/// The key a table constraint declares; None for the constraints that declare no key.
pub fn constraint_key(k: &TableConstraint) -> SqlResult<Option<DeclaredKey<'_>>> {
    Ok(match k {
        TableConstraint::PrimaryKey(pk) => Some((IndexKind::Primary, None, &pk.columns)),
        TableConstraint::Unique(u) => Some((
            IndexKind::Unique,
            u.index_name.as_ref().or(u.name.as_ref()).map(ident),
            &u.columns,
        )),
        TableConstraint::Index(ix) => Some((
            IndexKind::NonUnique,
            ix.name.as_ref().map(ident),
            &ix.columns,
        )),
        TableConstraint::ForeignKey(_) | TableConstraint::Check(_) => None,
        other => return Err(SqlError::unsupported(&format!("constraint {other}"))),
    })
}

/// The name of an index column as written (`col(10)`: a prefix of `col`).
pub fn index_column_name(c: &ast::IndexColumn) -> String {
    match &c.column.expr {
        Expr::Identifier(i) => i.value.clone(),
        Expr::Function(f) => crate::sql::names::last(&f.name),
        other => other.to_string(),
    }
}

/// Plans CREATE TABLE.
pub fn plan_create_table(p: &mut Planner<'_>, c: &ast::CreateTable) -> SqlResult<Body> {
    if c.query.is_some() || c.like.is_some() || c.clone.is_some() {
        return Err(SqlError::unsupported("CREATE TABLE ... SELECT / LIKE"));
    }
    let (db, name) = table_name(p, &c.name)?;
    if !p.st.core.database_exists(&db) {
        return Err(crate::error::unknown_db(&db));
    }
    let mut columns = Vec::new();
    let mut indexes: Vec<IndexDef> = Vec::new();
    let mut pending_keys: Vec<(IndexKind, Option<String>, Vec<usize>)> = Vec::new();
    let mut checks = Vec::new();
    let mut foreign_key_index = Vec::new();
    for cd in &c.columns {
        let d = column_definition(p, cd)?;
        pending_keys.extend(d.keys.into_iter().map(|k| (k, None, vec![columns.len()])));
        for k in d.checks {
            let k = ast::TableConstraint::Check(k);
            checks.extend(crate::exec::checks::from_constraint(&name, &k, &checks)?);
        }
        columns.push(d.column);
    }
    let mut foreign_keys = Vec::new();
    for k in &c.constraints {
        if let Some((kind, name, cols)) = constraint_key(k)? {
            pending_keys.push((kind, name, index_columns(&columns, cols)?));
        }
        checks.extend(crate::exec::checks::from_constraint(&name, k, &checks)?);
        if let Some(fk) = crate::exec::foreign_keys::declare(p, &name, k, &foreign_keys)? {
            let cols = fk
                .columns
                .iter()
                .map(|c| {
                    columns
                        .iter()
                        .position(|x: &Column| x.name.eq_ignore_ascii_case(c))
                        .ok_or_else(|| key_column_missing(c))
                })
                .collect::<SqlResult<Vec<_>>>()?;
            foreign_key_index.push((crate::exec::foreign_keys::index_name(k), cols));
            foreign_keys.push(fk);
        }
    }
    for (kind, nm, cols) in pending_keys {
        let name = match kind {
            IndexKind::Primary => "PRIMARY".to_string(),
            _ => nm.unwrap_or_else(|| free_name(&indexes, &columns[cols[0]].name)),
        };
        indexes.push(IndexDef::new(&name, kind, cols));
    }
    // MySQL creates an index for a foreign key whose columns no index leads with.
    for (nm, cols) in foreign_key_index {
        if !indexes.iter().any(|ix| ix.columns.starts_with(&cols)) {
            let name = nm.unwrap_or_else(|| free_name(&indexes, &columns[cols[0]].name));
            indexes.push(IndexDef::new(&name, IndexKind::NonUnique, cols));
        }
    }
    let mut auto_increment = None;
    let mut collation = None;
    if let ast::CreateTableOptions::Plain(opts) | ast::CreateTableOptions::With(opts) =
        &c.table_options
    {
        collation = options_collation(opts)?;
        for o in opts {
            if let ast::SqlOption::KeyValue { key, value } = o {
                if key.to_string().eq_ignore_ascii_case("AUTO_INCREMENT") {
                    auto_increment = value.to_string().parse().ok();
                }
            }
        }
    }
    // Without its own, a table takes its database's default collation, as in MySQL.
    let collation = collation.or_else(|| {
        let database = p.st.core.catalog.engine.database(&db).ok()?;
        database.collation().map(str::to_string)
    });
    let def = TableDef::new(&name, columns, indexes)
        .map_err(|e| engine_error(&e, 1))?
        .with_checks(checks)
        .with_foreign_keys(foreign_keys)
        .with_collation(collation);
    Ok(Body::CreateTable(CreateTable {
        db,
        def,
        if_not_exists: c.if_not_exists,
        auto_increment,
    }))
}

/// Executes CREATE TABLE.
pub fn create_table(st: &mut Context, c: &CreateTable) -> SqlResult<Output> {
    st.count(Counter::ComCreateTable);
    let cat = &st.core.catalog;
    let (t, created) = cat
        .engine
        .create_table(&c.db, c.def.clone(), c.if_not_exists)
        .map_err(|e| engine_error(&e, 1))?;
    if !created {
        st.warnings.push(crate::context::Warning {
            level: "Note",
            code: 1050,
            message: format!("Table '{}' already exists", c.def.name()),
        });
        return Ok(Output::ok());
    }
    if let Some(n) = c.auto_increment {
        t.set_auto_increment(n);
    }
    cat.bump();
    Ok(Output::ok())
}

/// Plans CREATE INDEX.
pub fn plan_create_index(p: &mut Planner<'_>, c: &ast::CreateIndex) -> SqlResult<Body> {
    let (db, table) = table_name(p, &c.table_name)?;
    let t = p.table(&db, &table)?;
    let cols = index_columns(t.def().columns(), &c.columns)?;
    let name = match &c.name {
        Some(n) => crate::sql::names::last(n),
        None => free_name(t.def().indexes(), &t.def().columns()[cols[0]].name),
    };
    let kind = if c.unique {
        IndexKind::Unique
    } else {
        IndexKind::NonUnique
    };
    Ok(Body::CreateIndex(CreateIndex {
        db,
        table,
        index: IndexDef::new(&name, kind, cols),
    }))
}

/// Executes CREATE INDEX (the engine rebuilds the table with the new index).
pub fn create_index(st: &mut Context, c: &CreateIndex) -> SqlResult<Output> {
    st.count(Counter::ComCreateIndex);
    under_exclusive_lock(st, &c.db, &c.table, || {
        st.core
            .catalog
            .engine
            .create_index(
                &c.db,
                &c.table,
                c.index.clone(),
                st.core.trx.rebuild_stamp(),
            )
            .map_err(|e| engine_error(&e, 1))
    })?;
    st.core.catalog.bump();
    Ok(Output::Ok {
        affected_rows: 0,
        last_insert_id: 0,
        info: "Records: 0  Duplicates: 0  Warnings: 0".into(),
    })
}

/// Plans DROP TABLE / DROP INDEX.
pub fn plan_drop(p: &mut Planner<'_>, s: &Statement) -> SqlResult<Body> {
    let Statement::Drop {
        object_type,
        if_exists,
        names,
        table,
        ..
    } = s
    else {
        return Err(SqlError::unsupported("DROP"));
    };
    match object_type {
        ast::ObjectType::Table => Ok(Body::DropTables(DropTables {
            names: names
                .iter()
                .map(|n| table_name(p, n))
                .collect::<SqlResult<_>>()?,
            if_exists: *if_exists,
        })),
        _ => {
            let Some(t) = table else {
                return Err(SqlError::parse("DROP INDEX without ON table"));
            };
            let (db, table) = table_name(p, t)?;
            p.table(&db, &table)?;
            Ok(Body::DropIndex(DropIndex {
                db,
                table,
                index: names
                    .first()
                    .map(crate::sql::names::last)
                    .unwrap_or_default(),
            }))
        }
    }
}

/// Executes DROP TABLE.
pub fn drop_tables(st: &mut Context, d: &DropTables) -> SqlResult<Output> {
    st.count(Counter::ComDropTable);
    let cat = &st.core.catalog;
    let missing: Vec<String> = d
        .names
        .iter()
        .filter(|(db, t)| cat.engine.table(db, t).is_err())
        .map(|(db, t)| format!("{db}.{t}"))
        .collect();
    if !missing.is_empty() && !d.if_exists {
        return Err(SqlError::new(
            ErrorCode::BadTable,
            format!("Unknown table '{}'", missing.join(",")),
        ));
    }
    crate::exec::foreign_keys::check_drop(st, &d.names)?;
    let tables: Vec<_> = d
        .names
        .iter()
        .filter_map(|(db, t)| cat.engine.table(db, t).ok())
        .collect();
    under_exclusive_locks(st, &tables, || {
        for (db, t) in &d.names {
            if cat.engine.drop_table(db, t, true).unwrap_or(false) {
                cat.bump();
            }
        }
        Ok(())
    })?;
    for m in missing {
        st.warnings.push(crate::context::Warning {
            level: "Note",
            code: 1051,
            message: format!("Unknown table '{m}'"),
        });
    }
    Ok(Output::ok())
}

/// Executes DROP INDEX.
pub fn drop_index(st: &mut Context, d: &DropIndex) -> SqlResult<Output> {
    under_exclusive_lock(st, &d.db, &d.table, || {
        st.core
            .catalog
            .engine
            .drop_index(&d.db, &d.table, &d.index, st.core.trx.rebuild_stamp())
            .map_err(|e| engine_error(&e, 1))
    })?;
    st.core.catalog.bump();
    Ok(Output::ok())
}

/// Plans TRUNCATE TABLE.
pub fn plan_truncate(p: &mut Planner<'_>, t: &ast::Truncate) -> SqlResult<Body> {
    let Some(first) = t.table_names.first() else {
        return Err(SqlError::parse("TRUNCATE"));
    };
    let (db, name) = table_name(p, &first.name)?;
    if let Some(v) = crate::introspection::vtables::lookup(p.st.core.as_ref(), &db, &name) {
        return Ok(Body::TruncateVirtual(v));
    }
    Ok(Body::Truncate(p.table(&db, &name)?))
}

/// Plans ANALYZE TABLE.
pub fn plan_analyze(p: &mut Planner<'_>, a: &ast::Analyze) -> SqlResult<Body> {
    let Some(n) = &a.table_name else {
        return Err(SqlError::parse("ANALYZE"));
    };
    Ok(Body::Analyze(vec![table_name(p, n)?]))
}

/// Executes ANALYZE TABLE: statistics are exact in memory, so every table reports OK.
pub fn analyze(st: &mut Context, tables: &[(String, String)]) -> SqlResult<Output> {
    st.count(Counter::ComAnalyze);
    let mut rows = Vec::new();
    for (db, t) in tables {
        let name = Value::str(&format!("{db}.{t}"));
        if st.core.catalog.engine.table(db, t).is_ok() {
            rows.push(vec![
                name,
                Value::str("analyze"),
                Value::str("status"),
                Value::str("OK"),
            ]);
        } else {
            rows.push(vec![
                name.clone(),
                Value::str("analyze"),
                Value::str("Error"),
                Value::str(&no_such_table(db, t).message),
            ]);
            rows.push(vec![
                name,
                Value::str("analyze"),
                Value::str("status"),
                Value::str("Operation failed"),
            ]);
        }
    }
    Ok(Output::Rows(ResultSet::text(
        &["Table", "Op", "Msg_type", "Msg_text"],
        rows,
    )))
}
