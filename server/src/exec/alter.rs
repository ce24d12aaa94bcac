//! ALTER TABLE: the operations are applied in order to a draft of the table's definition
//! (columns with the old column each comes from, keys by column name), which becomes the
//! new definition; executing rebuilds the table under it and swaps it in, as InnoDB's
//! copying ALTER does. Errors are MySQL's: 1060 duplicate column, 1054 unknown column,
//! 1091 nothing to drop, 1090 no column left, 1068 a second primary key, 1061 a duplicate key
//! name, 1062 a new UNIQUE key over duplicate values, 1050 RENAME TO a taken name.

use sqlparser::ast::{self, AlterColumnOperation, AlterTableOperation, MySQLColumnPosition};

use crate::context::{Context, Warning};
use crate::engine::{
    CheckDef, Column, ColumnDefault, ForeignKeyDef, IndexDef, IndexKind, TableDef, TableRebuild,
};
use crate::error::{engine_error, ErrorCode, SqlError, SqlResult};
use crate::exec::ddl::{
    column_definition, constraint_key, default_value, free_name, index_column_name,
    key_column_missing,
};
use crate::exec::metadata_lock::under_exclusive_lock;
use crate::exec::sources::table_name;
use crate::exec::{Body, Planner};
use crate::sql::alter::TABLE_OPTION_KEYS;
use crate::sql::output::Output;

/// A planned ALTER TABLE.
#[derive(Debug, Clone)]
pub struct AlterTable {
    /// Database.
    pub db: String,
    /// The table's name before the statement.
    pub table: String,
    /// The new definition (with the new name after RENAME TO).
    pub def: TableDef,
    /// For each new column, the old column it comes from (None: added).
    pub sources: Vec<Option<usize>>,
    /// `AUTO_INCREMENT = n`.
    pub auto_increment: Option<u64>,
    /// Notes the statement gives (`DISABLE KEYS` on InnoDB).
    pub notes: Vec<Warning>,
}

/// A key of the draft, by column names (a renamed or dropped column changes them).
#[derive(Debug, Clone)]
struct DraftKey {
    name: String,
    kind: IndexKind,
    columns: Vec<String>,
}

/// The definition as the operations so far left it.
struct Draft {
    db: String,
    table: String,
    name: String,
    columns: Vec<(Column, Option<usize>)>,
    keys: Vec<DraftKey>,
    checks: Vec<CheckDef>,
    foreign_keys: Vec<ForeignKeyDef>,
    auto_increment: Option<u64>,
    collation: Option<String>,
    notes: Vec<Warning>,
}

fn unknown_column(column: &str, table: &str) -> SqlError {
    SqlError::new(
        ErrorCode::BadField,
        format!("Unknown column '{column}' in '{table}'"),
    )
}

fn cant_drop(what: &str) -> SqlError {
    SqlError::new(
        ErrorCode::CantDropFieldOrKey,
        format!("Can't DROP '{what}'; check that column/key exists"),
    )
}

impl Draft {
    fn column(&self, name: &str) -> SqlResult<usize> {
        self.columns
            .iter()
            .position(|(c, _)| c.name.eq_ignore_ascii_case(name))
            .ok_or_else(|| unknown_column(name, &self.table))
    }

    fn check_new_name(&self, name: &str, except: Option<usize>) -> SqlResult<()> {
        let taken = self
            .columns
            .iter()
            .enumerate()
            .any(|(i, (c, _))| Some(i) != except && c.name.eq_ignore_ascii_case(name));
        if taken {
            return Err(SqlError::new(
                ErrorCode::DupFieldName,
                format!("Duplicate column name '{name}'"),
            ));
        }
        Ok(())
    }

    /// Where a column goes: FIRST, AFTER another (1054 if unknown), or `default`.
    fn position(&self, pos: &Option<MySQLColumnPosition>, default: usize) -> SqlResult<usize> {
        match pos {
            None => Ok(default),
            Some(MySQLColumnPosition::First) => Ok(0),
            Some(MySQLColumnPosition::After(after)) => Ok(self.column(&after.value)? + 1),
        }
    }

    /// 3959 if a CHECK constraint uses column `name` (which is to be dropped or renamed).
    fn unused_by_checks(&self, name: &str) -> SqlResult<()> {
        let quoted = format!("`{}`", name.to_lowercase());
        match self
            .checks
            .iter()
            .find(|c| c.expr.to_lowercase().contains(&quoted))
        {
            Some(c) => Err(SqlError::new(
                ErrorCode::DependentByCheckConstraint,
                format!(
                    "Check constraint '{}' uses column '{name}', hence column cannot be dropped \
                     or renamed.",
                    c.name
                ),
            )),
            None => Ok(()),
        }
    }

    fn rename_in_keys(&mut self, old: &str, new: &str) {
        for k in &mut self.keys {
            for c in &mut k.columns {
                if c.eq_ignore_ascii_case(old) {
                    *c = new.to_string();
                }
            }
        }
    }

    fn add_key(
        &mut self,
        kind: IndexKind,
        name: Option<String>,
        columns: Vec<String>,
    ) -> SqlResult<()> {
        for c in &columns {
            if self.column(c).is_err() {
                return Err(key_column_missing(c));
            }
        }
        let name = match kind {
            IndexKind::Primary => {
                if self.keys.iter().any(|k| k.kind == IndexKind::Primary) {
                    return Err(SqlError::new(
                        ErrorCode::MultiplePriKey,
                        "Multiple primary key defined",
                    ));
                }
                "PRIMARY".to_string()
            }
            _ => match name {
                Some(n) => n,
                None => {
                    let taken: Vec<IndexDef> = self
                        .keys
                        .iter()
                        .map(|k| IndexDef::new(&k.name, k.kind, Vec::new()))
                        .collect();
                    free_name(&taken, &columns[0])
                }
            },
        };
        if self.keys.iter().any(|k| k.name.eq_ignore_ascii_case(&name)) {
            return Err(SqlError::new(
                ErrorCode::DupKeyName,
                format!("Duplicate key name '{name}'"),
            ));
        }
        self.keys.push(DraftKey {
            name,
            kind,
            columns,
        });
        Ok(())
    }

    /// Adds the CHECK constraint `k` declares; false if it declares none.
    fn add_check(&mut self, k: &ast::TableConstraint) -> SqlResult<bool> {
        Ok(
            match crate::exec::checks::from_constraint(&self.name, k, &self.checks)? {
                Some(c) => {
                    self.checks.push(c);
                    true
                }
                None => false,
            },
        )
    }

    /// Adds the FOREIGN KEY `k` declares, with an index over its columns when no key leads
    /// with them; false if it declares none.
    fn add_foreign_key(&mut self, p: &Planner<'_>, k: &ast::TableConstraint) -> SqlResult<bool> {
        let Some(fk) = crate::exec::foreign_keys::declare(p, &self.name, k, &self.foreign_keys)?
        else {
            return Ok(false);
        };
        for c in &fk.columns {
            self.column(c).map_err(|_| key_column_missing(c))?;
        }
        let covers_fk_columns = |key: &DraftKey| {
            key.columns.len() >= fk.columns.len()
                && key
                    .columns
                    .iter()
                    .zip(&fk.columns)
                    .all(|(a, b)| a.eq_ignore_ascii_case(b))
        };
        if !self.keys.iter().any(covers_fk_columns) {
            let name = crate::exec::foreign_keys::index_name(k);
            self.add_key(IndexKind::NonUnique, name, fk.columns.clone())?;
        }
        self.foreign_keys.push(fk);
        Ok(true)
    }

    /// Drops the foreign key `name`; false if there is none.
    fn drop_foreign_key(&mut self, name: &str) -> bool {
        let before = self.foreign_keys.len();
        self.foreign_keys
            .retain(|f| !f.name.eq_ignore_ascii_case(name));
        self.foreign_keys.len() < before
    }

    fn drop_key(&mut self, name: &str) -> SqlResult<()> {
        let before = self.keys.len();
        self.keys.retain(|k| !k.name.eq_ignore_ascii_case(name));
        if self.keys.len() == before {
            return Err(cant_drop(name));
        }
        Ok(())
    }

    /// MODIFY (`old` = `new`) or CHANGE COLUMN: the column `old` redefined as `new`.
    fn redefine_column(
        &mut self,
        p: &Planner<'_>,
        old: &ast::Ident,
        new: &ast::Ident,
        data_type: &ast::DataType,
        options: &[ast::ColumnOption],
        pos: &Option<MySQLColumnPosition>,
    ) -> SqlResult<()> {
        let cd = ast::ColumnDef {
            name: new.clone(),
            data_type: data_type.clone(),
            options: named(options),
        };
        let i = self.column(&old.value)?;
        self.place_column(p, &cd, Some(i), pos)
    }

    /// ADD COLUMN, MODIFY or CHANGE: `replacing` is the column's position for the latter.
    fn place_column(
        &mut self,
        p: &Planner<'_>,
        cd: &ast::ColumnDef,
        replacing: Option<usize>,
        pos: &Option<MySQLColumnPosition>,
    ) -> SqlResult<()> {
        let d = column_definition(p, cd)?;
        let (col, keys) = (d.column, d.keys);
        for k in d.checks {
            self.add_check(&ast::TableConstraint::Check(k))?;
        }
        self.check_new_name(&col.name, replacing)?;
        let source = match replacing {
            Some(i) => {
                if !self.columns[i].0.name.eq_ignore_ascii_case(&col.name) {
                    self.unused_by_checks(&self.columns[i].0.name)?;
                }
                let (old, source) = self.columns.remove(i);
                self.rename_in_keys(&old.name, &col.name);
                source
            }
            None => None,
        };
        let default = replacing.unwrap_or(self.columns.len());
        let at = self.position(pos, default)?;
        let name = col.name.clone();
        self.columns.insert(at, (col, source));
        for kind in keys {
            self.add_key(kind, None, vec![name.clone()])?;
        }
        Ok(())
    }

    fn drop_column(&mut self, name: &str) -> SqlResult<()> {
        let i = self.column(name).map_err(|_| cant_drop(name))?;
        self.unused_by_checks(name)?;
        if self.columns.len() == 1 {
            return Err(SqlError::new(
                ErrorCode::CantRemoveAllFields,
                "You can't delete all columns with ALTER TABLE; use DROP TABLE instead",
            ));
        }
        self.columns.remove(i);
        for k in &mut self.keys {
            k.columns.retain(|c| !c.eq_ignore_ascii_case(name));
        }
        self.keys.retain(|k| !k.columns.is_empty());
        Ok(())
    }

    fn apply(&mut self, p: &Planner<'_>, op: &AlterTableOperation) -> SqlResult<()> {
        match op {
            AlterTableOperation::AddColumn {
                column_def,
                column_position,
                ..
            } => self.place_column(p, column_def, None, column_position),
            AlterTableOperation::ModifyColumn {
                col_name,
                data_type,
                options,
                column_position,
            } => self.redefine_column(p, col_name, col_name, data_type, options, column_position),
            AlterTableOperation::ChangeColumn {
                old_name,
                new_name,
                data_type,
                options,
                column_position,
            } => self.redefine_column(p, old_name, new_name, data_type, options, column_position),
            AlterTableOperation::RenameColumn {
                old_column_name,
                new_column_name,
            } => {
                let i = self.column(&old_column_name.value)?;
                self.check_new_name(&new_column_name.value, Some(i))?;
                self.unused_by_checks(&old_column_name.value)?;
                self.columns[i].0.name = new_column_name.value.clone();
                self.rename_in_keys(&old_column_name.value, &new_column_name.value);
                Ok(())
            }
            AlterTableOperation::DropColumn { column_names, .. } => column_names
                .iter()
                .try_for_each(|c| self.drop_column(&c.value)),
            AlterTableOperation::AlterColumn { column_name, op } => {
                let i = self.column(&column_name.value)?;
                let default = match op {
                    AlterColumnOperation::SetDefault { value } => {
                        default_value(p, &self.columns[i].0, value)?
                    }
                    AlterColumnOperation::DropDefault => ColumnDefault::None,
                    other => return Err(SqlError::unsupported(&format!("ALTER COLUMN {other}"))),
                };
                self.columns[i].0.default = default;
                Ok(())
            }
            AlterTableOperation::AddConstraint { constraint, .. } => {
                match constraint_key(constraint)? {
                    Some((kind, name, cols)) => {
                        self.add_key(kind, name, cols.iter().map(index_column_name).collect())
                    }
                    None if self.add_check(constraint)? => Ok(()),
                    None if self.add_foreign_key(p, constraint)? => Ok(()),
                    None => Err(SqlError::unsupported(&format!("ADD {constraint}"))),
                }
            }
            AlterTableOperation::DropPrimaryKey { .. } => self.drop_key("PRIMARY"),
            AlterTableOperation::DropForeignKey { name, .. } => {
                if self.drop_foreign_key(&name.value) {
                    Ok(())
                } else {
                    Err(cant_drop(&name.value))
                }
            }
            AlterTableOperation::DropIndex { name } => self.drop_key(&name.value),
            AlterTableOperation::DropConstraint { name, .. } => {
                let checks = self.checks.len();
                self.checks
                    .retain(|c| !c.name.eq_ignore_ascii_case(&name.value));
                if self.checks.len() < checks || self.drop_foreign_key(&name.value) {
                    return Ok(());
                }
                let unique = self.keys.iter().any(|k| {
                    k.kind == IndexKind::Unique && k.name.eq_ignore_ascii_case(&name.value)
                });
                if !unique {
                    return Err(SqlError::new(
                        ErrorCode::ConstraintNotFound,
                        format!("Constraint '{}' does not exist.", name.value),
                    ));
                }
                self.drop_key(&name.value)
            }
            AlterTableOperation::RenameTable { table_name: to } => {
                let (ast::RenameTableNameKind::As(n) | ast::RenameTableNameKind::To(n)) = to;
                let (db, new) = table_name(p, n)?;
                if db != self.db {
                    return Err(SqlError::unsupported("RENAME TO another database"));
                }
                let (old_prefix, new_prefix) =
                    (format!("{}_chk_", self.name), format!("{new}_chk_"));
                for c in &mut self.checks {
                    if let Some(n) = c.name.strip_prefix(&old_prefix) {
                        c.name = format!("{new_prefix}{n}");
                    }
                }
                self.name = new;
                Ok(())
            }
            AlterTableOperation::AutoIncrement { value, .. } => {
                self.auto_increment = value.to_string().parse().ok();
                Ok(())
            }
            AlterTableOperation::Algorithm { .. } | AlterTableOperation::Lock { .. } => Ok(()),
            AlterTableOperation::SetTblProperties { table_properties } => {
                if let Some(c) = crate::exec::ddl::options_collation(table_properties)? {
                    self.set_collation(c);
                }
                for o in table_properties {
                    if let ast::SqlOption::KeyValue { key, .. } = o {
                        self.table_option(&key.to_string());
                    }
                }
                Ok(())
            }
            other => Err(SqlError::unsupported(&format!("ALTER TABLE ... {other}"))),
        }
    }

    /// A new default collation (`ALTER TABLE ... CHARSET=`): the text columns keep the one
    /// they had, as in MySQL.
    fn set_collation(&mut self, collation: String) {
        let old = self.collation.clone();
        for (c, _) in &mut self.columns {
            if c.ty.is_text() && c.collation.is_none() {
                c.collation = Some(
                    old.clone()
                        .unwrap_or_else(|| crate::sql::collations::SERVER_COLLATION.into()),
                );
            }
        }
        self.collation = Some(collation);
    }

    /// A table option: InnoDB has no `DISABLE KEYS`/`ENABLE KEYS` (a note, as MySQL gives);
    /// ENGINE, comment and row format are accepted (the character set and collation are
    /// kept by [`Draft::set_collation`]).
    fn table_option(&mut self, key: &str) {
        if key.eq_ignore_ascii_case(TABLE_OPTION_KEYS) {
            self.notes.push(Warning {
                level: "Note",
                code: ErrorCode::IllegalHa.code(),
                message: format!(
                    "Table storage engine for '{}' doesn't have this option",
                    self.table
                ),
            });
        }
    }
}

fn named(options: &[ast::ColumnOption]) -> Vec<ast::ColumnOptionDef> {
    options
        .iter()
        .map(|o| ast::ColumnOptionDef {
            name: None,
            option: o.clone(),
        })
        .collect()
}

/// Plans ALTER TABLE.
pub fn plan_alter(p: &mut Planner<'_>, a: &ast::AlterTable) -> SqlResult<Body> {
    let (db, table) = table_name(p, &a.name)?;
    let t = p.table(&db, &table)?;
    let def = t.def();
    let mut draft = Draft {
        db: db.clone(),
        table: table.clone(),
        name: table.clone(),
        columns: def
            .columns()
            .iter()
            .cloned()
            .enumerate()
            .map(|(i, c)| (c, Some(i)))
            .collect(),
        keys: def
            .indexes()
            .iter()
            .filter(|ix| ix.kind != IndexKind::HiddenRowId)
            .map(|ix| DraftKey {
                name: ix.name.clone(),
                kind: ix.kind,
                columns: ix
                    .columns
                    .iter()
                    .map(|&c| def.columns()[c].name.clone())
                    .collect(),
            })
            .collect(),
        checks: def.checks().to_vec(),
        foreign_keys: def.foreign_keys().to_vec(),
        auto_increment: None,
        collation: def.collation().map(str::to_string),
        notes: Vec::new(),
    };
    for op in &a.operations {
        draft.apply(p, op)?;
    }
    let (columns, sources): (Vec<Column>, Vec<Option<usize>>) =
        draft.columns.iter().cloned().unzip();
    let indexes = draft
        .keys
        .iter()
        .map(|k| {
            let cols = k
                .columns
                .iter()
                .map(|c| draft.column(c))
                .collect::<SqlResult<Vec<_>>>()?;
            Ok(IndexDef::new(&k.name, k.kind, cols))
        })
        .collect::<SqlResult<Vec<_>>>()?;
    let def = TableDef::new(&draft.name, columns, indexes)
        .map_err(|e| engine_error(&e, 1))?
        .with_checks(draft.checks)
        .with_foreign_keys(draft.foreign_keys)
        .with_collation(draft.collation);
    Ok(Body::AlterTable(AlterTable {
        db,
        table,
        def,
        sources,
        auto_increment: draft.auto_increment,
        notes: draft.notes,
    }))
}

/// Executes ALTER TABLE: under the table's exclusive lock, the table is rebuilt under its
/// new definition and swapped in.
pub fn alter_table(st: &mut Context, a: &AlterTable) -> SqlResult<Output> {
    let kept: Vec<String> = st
        .core
        .catalog
        .table(&a.db, &a.table)?
        .def()
        .foreign_keys()
        .iter()
        .map(|f| f.name.clone())
        .collect();
    let added: Vec<String> = a
        .def
        .foreign_keys()
        .iter()
        .map(|f| f.name.clone())
        .filter(|n| !kept.contains(n))
        .collect();
    let parents = crate::exec::foreign_keys::added_parents(st, &a.def, &added);
    let t = under_exclusive_lock(st, &a.db, &a.table, || {
        let rebuild = TableRebuild {
            def: a.def.clone(),
            sources: a.sources.clone(),
            now: crate::time::datetime_from_micros(crate::time::now_micros()),
            rebuilt_by: st.core.trx.rebuild_stamp(),
        };
        st.core
            .catalog
            .engine
            .alter_table(&a.db, &a.table, rebuild, |new| {
                crate::exec::checks::verify_rows(st, &a.db, new)?;
                crate::exec::foreign_keys::verify_rows(st, &a.db, new, &parents)
            })
    })?;
    if let Some(n) = a.auto_increment {
        t.set_auto_increment(n);
    }
    st.core.catalog.bump();
    st.warnings.extend(a.notes.iter().cloned());
    Ok(Output::Ok {
        affected_rows: 0,
        last_insert_id: 0,
        info: "Records: 0  Duplicates: 0  Warnings: 0".into(),
    })
}
