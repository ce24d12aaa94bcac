//! What a table statement needs, read from its parsed form before any table is opened (so an
//! account without privileges gets 1142 for a table that does not exist, as in MySQL), and
//! checked again each time a prepared statement executes. The privileges are MySQL's
//! (its manual's "Privileges Provided by MySQL" and each statement's page):
//!
//! | statement | privilege |
//! |---|---|
//! | SELECT, and every table a statement only reads | SELECT |
//! | INSERT | INSERT (REPLACE: and DELETE; ON DUPLICATE KEY UPDATE: and UPDATE, SELECT on the columns its values read) |
//! | UPDATE / DELETE | UPDATE / DELETE on the changed tables, SELECT on the columns WHERE and SET values read |
//! | CREATE TABLE | CREATE (… SELECT: and INSERT; … LIKE t: SELECT on t) |
//! | CREATE / DROP INDEX | INDEX |
//! | ALTER TABLE | ALTER (RENAME: and DROP; the new name CREATE and INSERT) |
//! | DROP TABLE, TRUNCATE TABLE | DROP |
//! | ANALYZE TABLE | SELECT and INSERT |
//! | SHOW CREATE TABLE | some privilege on the table |
//! | SHOW COLUMNS, DESCRIBE, SHOW INDEX | SELECT on the database, or some grant on the table |
//! | SHOW TABLES, SHOW TABLE STATUS | some privilege in the database, or a global one (1044) |

use std::ops::ControlFlow;

use sqlparser::ast::{
    self, Expr, ObjectName, Statement, TableFactor, TableWithJoins, Visit, Visitor,
};

use crate::accounts::PrivSet;
use crate::context::Context;
use crate::error::SqlResult;
use crate::privileges::access;

/// One privilege test a statement needs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Need {
    /// Privileges on a table (1142).
    Table {
        /// Database.
        db: String,
        /// Table.
        table: String,
        /// Every one of these.
        privs: PrivSet,
    },
    /// Some privilege on a table (1142 naming `command`).
    AnyOnTable {
        /// Database.
        db: String,
        /// Table.
        table: String,
        /// The command the error names (`SHOW`, `SELECT`).
        command: &'static str,
    },
    /// SELECT on a column that WHERE reads of a table the statement changes (1143).
    Column {
        /// Database.
        db: String,
        /// Table.
        table: String,
        /// The column named in the error.
        column: String,
    },
    /// SELECT held globally or on the database, or any privilege granted on the table
    /// itself (1142 naming SELECT): what describing a table's columns or indexes asks.
    DescribeTable {
        /// Database.
        db: String,
        /// Table.
        table: String,
    },
    /// Some privilege in a database (1044).
    SeeDb(String),
    /// Some privilege in a database or any global privilege (1044): listing its tables.
    ListDb(String),
}

/// Relations a part of a statement names, without the names of its CTEs and `dual`.
#[derive(Default)]
struct Relations {
    names: Vec<ObjectName>,
    ctes: Vec<String>,
}

impl Visitor for Relations {
    type Break = ();
    fn pre_visit_query(&mut self, q: &ast::Query) -> ControlFlow<()> {
        if let Some(w) = &q.with {
            self.ctes
                .extend(w.cte_tables.iter().map(|c| c.alias.name.value.clone()));
        }
        ControlFlow::Continue(())
    }
    fn pre_visit_relation(&mut self, r: &ObjectName) -> ControlFlow<()> {
        self.names.push(r.clone());
        ControlFlow::Continue(())
    }
}

fn relations<V: Visit>(v: &V) -> Vec<ObjectName> {
    let mut r = Relations::default();
    let _ = v.visit(&mut r);
    let ctes = r.ctes;
    r.names
        .into_iter()
        .filter(|n| {
            let single = n.0.len() == 1;
            let last = crate::sql::names::last(n);
            !(single && (last.eq_ignore_ascii_case("dual") || ctes.contains(&last)))
        })
        .collect()
}

/// (database, table) of a name; None without a database (the planner gives 1046).
fn resolve(st: &Context, n: &ObjectName) -> Option<(String, String)> {
    let parts: Vec<String> = n.0.iter().map(crate::sql::names::part).collect();
    match parts.as_slice() {
        [t] => st.db.clone().map(|d| (d, t.clone())),
        [d, t] => Some((d.clone(), t.clone())),
        _ => None,
    }
}

/// Collects needs for one statement.
struct Needs<'a> {
    st: &'a Context,
    out: Vec<Need>,
}

impl Needs<'_> {
    fn table(&mut self, n: &ObjectName, privs: PrivSet) {
        if let Some((db, table)) = resolve(self.st, n) {
            self.out.push(Need::Table { db, table, privs });
        }
    }
    fn any(&mut self, n: &ObjectName, command: &'static str) {
        if let Some((db, table)) = resolve(self.st, n) {
            self.out.push(Need::AnyOnTable { db, table, command });
        }
    }
    fn describe(&mut self, n: &ObjectName) {
        if let Some((db, table)) = resolve(self.st, n) {
            self.out.push(Need::DescribeTable { db, table });
        }
    }
    fn reads<V: Visit>(&mut self, v: &V) {
        for n in relations(v) {
            self.table(&n, PrivSet::SELECT);
        }
    }
    /// SELECT on the first column `reads` (WHERE, then the values SET assigns) names, for a
    /// table the statement changes.
    fn where_reads<'e>(&mut self, target: &ObjectName, reads: impl IntoIterator<Item = &'e Expr>) {
        let mut column = None;
        for e in reads {
            let _ = ast::visit_expressions(e, |x| {
                match x {
                    Expr::Identifier(i) => column = Some(i.value.clone()),
                    Expr::CompoundIdentifier(p) => column = p.last().map(|i| i.value.clone()),
                    _ => return ControlFlow::Continue(()),
                }
                ControlFlow::Break(())
            });
            if column.is_some() {
                break;
            }
        }
        if let (Some(column), Some((db, table))) = (column, resolve(self.st, target)) {
            self.out.push(Need::Column { db, table, column });
        }
    }
}

/// The name (or alias) a FROM item is known by, and its table name.
fn factor_names(f: &TableFactor) -> Option<(String, &ObjectName)> {
    match f {
        TableFactor::Table { name, alias, .. } => Some((
            alias
                .as_ref()
                .map_or_else(|| crate::sql::names::last(name), |a| a.name.value.clone()),
            name,
        )),
        _ => None,
    }
}

/// Every table factor of a FROM list, those inside nested joins (`a JOIN (b JOIN c)`, and
/// `a JOIN b JOIN c` as sqlparser nests it) included, in the order written.
fn factors(t: &[TableWithJoins]) -> Vec<&TableFactor> {
    let mut out = Vec::new();
    let mut pending: Vec<&TableWithJoins> = t.iter().rev().collect();
    while let Some(twj) = pending.pop() {
        let mut inner = Vec::new();
        for f in std::iter::once(&twj.relation).chain(twj.joins.iter().map(|j| &j.relation)) {
            match f {
                TableFactor::NestedJoin {
                    table_with_joins, ..
                } => inner.push(&**table_with_joins),
                other => out.push(other),
            }
        }
        pending.extend(inner.into_iter().rev());
    }
    out
}

/// What `s` needs.
pub fn needs(st: &Context, s: &Statement) -> Vec<Need> {
    let mut n = Needs {
        st,
        out: Vec::new(),
    };
    match s {
        Statement::Query(q) => n.reads(q),
        Statement::Insert(i) => {
            if let ast::TableObject::TableName(t) = &i.table {
                let mut privs = PrivSet::INSERT;
                if i.replace_into {
                    privs = privs.union(PrivSet::DELETE);
                }
                let mut upsert = None;
                if let Some(ast::OnInsert::DuplicateKeyUpdate(assignments)) = &i.on {
                    privs = privs.union(PrivSet::UPDATE);
                    upsert = Some(assignments);
                }
                n.table(t, privs);
                // The values ON DUPLICATE KEY UPDATE assigns read columns as UPDATE's do.
                if let Some(assignments) = upsert {
                    n.where_reads(t, assignments.iter().map(|a| &a.value));
                }
            }
            if let Some(q) = &i.source {
                n.reads(q);
            }
        }
        Statement::Update(u) => update(&mut n, u),
        Statement::Delete(d) => delete(&mut n, d),
        Statement::CreateTable(c) => {
            let mut privs = PrivSet::CREATE;
            if let Some(q) = &c.query {
                privs = privs.union(PrivSet::INSERT);
                n.reads(q);
            }
            n.table(&c.name, privs);
            if let Some(
                ast::CreateTableLikeKind::Plain(l) | ast::CreateTableLikeKind::Parenthesized(l),
            ) = &c.like
            {
                n.table(&l.name, PrivSet::SELECT);
            }
        }
        Statement::CreateIndex(c) => n.table(&c.table_name, PrivSet::INDEX),
        Statement::AlterTable(a) => {
            let mut privs = PrivSet::ALTER;
            for op in &a.operations {
                if let ast::AlterTableOperation::RenameTable { table_name } = op {
                    privs = privs.union(PrivSet::DROP);
                    let (ast::RenameTableNameKind::As(to) | ast::RenameTableNameKind::To(to)) =
                        table_name;
                    n.table(to, PrivSet::CREATE.union(PrivSet::INSERT));
                }
            }
            n.table(&a.name, privs);
            n.out.rotate_right(1);
        }
        Statement::Drop {
            object_type: ast::ObjectType::Table,
            names,
            ..
        } => {
            for t in names {
                n.table(t, PrivSet::DROP);
            }
        }
        Statement::Drop {
            object_type: ast::ObjectType::Index,
            table: Some(t),
            ..
        } => n.table(t, PrivSet::INDEX),
        Statement::Truncate(t) => {
            for t in &t.table_names {
                n.table(&t.name, PrivSet::DROP);
            }
        }
        Statement::Analyze(a) => {
            for t in relations(a) {
                n.table(&t, PrivSet::SELECT.union(PrivSet::INSERT));
            }
        }
        Statement::ShowCreate {
            obj_type: ast::ShowCreateObject::Table,
            obj_name,
        } => n.any(obj_name, "SHOW"),
        Statement::ExplainTable { table_name, .. } => n.describe(table_name),
        Statement::ShowColumns { show_options, .. } => {
            if let Some(t) = show_options
                .show_in
                .as_ref()
                .and_then(|i| i.parent_name.as_ref())
            {
                n.describe(t);
            }
        }
        Statement::ShowTables { show_options, .. } => {
            let db = show_options
                .show_in
                .as_ref()
                .and_then(|i| i.parent_name.as_ref())
                .map(crate::sql::names::last)
                .or_else(|| st.db.clone());
            if let Some(db) = db {
                n.out.push(Need::ListDb(db));
            }
        }
        Statement::Explain { statement, .. } => return needs(st, statement),
        _ => {}
    }
    n.out
}

/// UPDATE: UPDATE on the tables it assigns to (the only one, or those an assignment's
/// qualifier names), SELECT on the others and on the columns WHERE reads.
fn update(n: &mut Needs<'_>, u: &ast::Update) {
    let all = factors(std::slice::from_ref(&u.table));
    let qualifiers: Vec<String> = u
        .assignments
        .iter()
        .flat_map(|a| match &a.target {
            ast::AssignmentTarget::ColumnName(c) => vec![c.clone()],
            ast::AssignmentTarget::Tuple(cs) => cs.clone(),
        })
        .filter(|c| c.0.len() > 1)
        .map(|c| crate::sql::names::part(&c.0[c.0.len() - 2]))
        .collect();
    let single = all.len() == 1;
    for f in &all {
        match factor_names(f) {
            Some((known_as, name)) => {
                if single || qualifiers.contains(&known_as) {
                    n.table(name, PrivSet::UPDATE);
                    let values = u.assignments.iter().map(|a| &a.value);
                    n.where_reads(name, u.selection.iter().chain(values));
                } else {
                    n.table(name, PrivSet::SELECT);
                }
            }
            None => n.reads(*f),
        }
    }
    if let Some(s) = &u.selection {
        n.reads(s);
    }
    for a in &u.assignments {
        n.reads(&a.value);
    }
}

/// DELETE: DELETE on the tables it deletes from, SELECT on the others and on the columns
/// WHERE reads.
fn delete(n: &mut Needs<'_>, d: &ast::Delete) {
    let from = match &d.from {
        ast::FromTable::WithFromKeyword(f) | ast::FromTable::WithoutKeyword(f) => f,
    };
    let mut all = factors(from);
    if let Some(using) = &d.using {
        all.extend(factors(using));
    }
    let targets: Vec<String> = d.tables.iter().map(crate::sql::names::last).collect();
    for (i, f) in all.iter().enumerate() {
        match factor_names(f) {
            Some((known_as, name)) => {
                let target = if targets.is_empty() {
                    i == 0
                } else {
                    targets.contains(&known_as)
                };
                if target {
                    n.table(name, PrivSet::DELETE);
                    n.where_reads(name, d.selection.as_ref());
                } else {
                    n.table(name, PrivSet::SELECT);
                }
            }
            None => n.reads(*f),
        }
    }
    if let Some(s) = &d.selection {
        n.reads(s);
    }
}

/// Checks what `s` needs against the session's privileges: the first one missing is the
/// error.
pub fn check(st: &Context, s: &Statement) -> SqlResult<()> {
    if st
        .privileges
        .global
        .contains(PrivSet::GLOBAL.minus(PrivSet::GRANT_OPTION))
    {
        return Ok(());
    }
    for need in needs(st, s) {
        check_need(st, &need)?;
    }
    Ok(())
}

/// Checks one need.
pub fn check_need(st: &Context, need: &Need) -> SqlResult<()> {
    match need {
        Need::Table { db, table, privs } => access::require_table(st, *privs, db, table),
        Need::AnyOnTable { db, table, command } => {
            if access::can_see_table(st, db, table) {
                Ok(())
            } else {
                Err(access::table_denied(st, command, table))
            }
        }
        Need::Column { db, table, column } => {
            if access::table_privileges(st, db, table).contains(PrivSet::SELECT) {
                Ok(())
            } else {
                Err(access::column_denied(st, "SELECT", column, table))
            }
        }
        Need::DescribeTable { db, table } => {
            if access::can_describe_table(st, db, table) {
                Ok(())
            } else {
                Err(access::table_denied(st, "SELECT", table))
            }
        }
        Need::ListDb(db) => {
            if access::can_see_db(st, db) || !st.privileges.global.is_empty() {
                Ok(())
            } else {
                Err(access::db_denied(st, db))
            }
        }
        Need::SeeDb(db) => {
            if access::can_see_db(st, db) {
                Ok(())
            } else {
                Err(access::db_denied(st, db))
            }
        }
    }
}

/// COM_FIELD_LIST of `table` in the current database: some privilege on it (1142 naming
/// SELECT), as MySQL's `mysqld_list_fields` path checks.
pub fn check_field_list(st: &Context, table: &str) -> SqlResult<()> {
    match &st.db {
        Some(db) => check_need(
            st,
            &Need::AnyOnTable {
                db: db.clone(),
                table: table.to_string(),
                command: "SELECT",
            },
        ),
        None => Ok(()),
    }
}
