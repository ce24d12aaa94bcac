//! SELECT planning over tables (one SELECT; no UNION or WITH): FROM (base, derived and
//! virtual tables; comma, CROSS, INNER and LEFT joins with ON, USING or NATURAL), WHERE
//! split into conjuncts, each placed at the join level of the last table it reads (a WHERE
//! conjunct on a LEFT-joined table waits for every table instead), an access path per base
//! table, aggregation, HAVING, ORDER BY (served by the first table's access order when that
//! gives it, else sorted), DISTINCT, LIMIT/OFFSET and the locking clause.

use std::sync::Arc;

use protocol::{ColumnDefinition, ColumnType as Wire};
use sqlparser::ast::{self, Expr, SelectItem, SetExpr, TableFactor};

use crate::engine::{ColumnType, Table};
use crate::error::{ErrorCode, SqlError, SqlResult};
use crate::exec::access::{self, Access};
use crate::exec::aggregate::{has_aggregate, AggBinder, AggSlot};
use crate::exec::coltypes::UTF8MB4;
use crate::exec::errors::no_such_table;
use crate::exec::join_columns::{Chain, JoinCondition};
use crate::exec::propagate::propagate;
use crate::exec::scope::{and_all, conjuncts, max_column, Scope, SourceColumn};
use crate::exec::sources::{
    agg_def, allowed_indexes, compute_needed, plan_moves, table_columns, table_name,
    virtual_columns,
};
use crate::exec::Planner;
use crate::introspection::vtables::{self, VirtualTable};
use crate::sql::expr::{Binder, BoundExpr};
use crate::sql::output::FixedColumns;

/// A locking clause (`FOR UPDATE`, `FOR SHARE`, `LOCK IN SHARE MODE`): the SELECT's
/// base-table reads take X or S row locks with this wait policy.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LockClause {
    /// Exclusive (FOR UPDATE) rather than shared.
    pub exclusive: bool,
    /// NOWAIT.
    pub nowait: bool,
    /// SKIP LOCKED.
    pub skip_locked: bool,
}

/// Where a source's rows come from.
#[derive(Debug, Clone)]
pub enum SourceKind {
    /// A base table read through an access path.
    Base {
        /// The table as planned.
        table: Arc<Table>,
        /// How it is read.
        access: Access,
    },
    /// A derived table (subquery in FROM), materialised first.
    Derived(Box<Query>),
    /// An introspection table.
    Virtual(&'static dyn VirtualTable),
}

/// One source of the nested loop.
#[derive(Debug, Clone)]
pub struct Source {
    /// Alias (or table name).
    pub alias: String,
    /// Database ("" for derived tables).
    pub db: String,
    /// Row origin.
    pub kind: SourceKind,
    /// First combined-row column.
    pub offset: usize,
    /// Number of columns.
    pub width: usize,
    /// LEFT JOIN: a row of NULLs when nothing matches.
    pub left_join: bool,
    /// Conditions evaluated at this level that the access path does not already ensure.
    pub filter: Option<BoundExpr>,
    /// Every condition of this level (used when a key value could not be used exactly).
    pub full_filter: Option<BoundExpr>,
    /// Columns (relative to the source) the statement reads.
    pub needed: Vec<usize>,
}

/// Aggregation: grouping expressions over the source row and the slot row's slots.
#[derive(Debug, Clone)]
pub struct Aggregation {
    /// GROUP BY expressions (empty: one group).
    pub group_by: Vec<BoundExpr>,
    /// Slots.
    pub slots: Vec<AggSlot>,
}

/// One result column: its label and, when known before execution, its metadata.
#[derive(Debug, Clone)]
pub struct OutColumn {
    /// Label.
    pub name: String,
    /// Metadata (None: derived from the values at execution).
    pub def: Option<ColumnDefinition>,
}

/// The result metadata of `columns` when every column's is known at planning, shared by all
/// executions.
pub fn fixed_columns(columns: &[OutColumn]) -> Option<FixedColumns> {
    let defs: Option<Arc<[ColumnDefinition]>> = columns.iter().map(|c| c.def.clone()).collect();
    defs.map(FixedColumns::new)
}

/// A planned SELECT over tables.
#[derive(Debug, Clone)]
pub struct Query {
    /// Sources in nested-loop order.
    pub sources: Vec<Source>,
    /// Width of the combined row.
    pub width: usize,
    /// WHERE conjuncts that must wait for every source (those on LEFT-joined tables).
    pub post_filter: Option<BoundExpr>,
    /// GROUP BY / aggregates.
    pub agg: Option<Aggregation>,
    /// HAVING over the slot row.
    pub having: Option<BoundExpr>,
    /// Select list (over the combined row, or the slot row when aggregated).
    pub items: Vec<BoundExpr>,
    /// Result columns.
    pub columns: Vec<OutColumn>,
    /// Their metadata when all of it is known at planning ([`fixed_columns`]).
    pub fixed_columns: Option<FixedColumns>,
    /// ORDER BY keys over the same row as `items`.
    pub order: Vec<(BoundExpr, bool)>,
    /// ORDER BY needs a sort (the access order does not give it).
    pub sort: bool,
    /// For each ORDER BY key that is also a select item, that item (its value is not
    /// stored twice).
    pub order_items: Vec<Option<usize>>,
    /// Select items that are a column of the innermost source read nowhere else: their
    /// value is moved out of the combined row instead of copied (the next row overwrites
    /// the slot anyway).
    pub movable: Vec<bool>,
    /// DISTINCT.
    pub distinct: bool,
    /// LIMIT.
    pub limit: Option<BoundExpr>,
    /// OFFSET.
    pub offset: Option<BoundExpr>,
    /// FOR UPDATE / FOR SHARE.
    pub lock: Option<LockClause>,
    /// EXPLAIN's `id` of this SELECT.
    pub select_id: usize,
    /// Leading row columns that belong to enclosing SELECTs (a correlated subquery's).
    pub outer_width: usize,
    /// Those columns it reads (empty: uncorrelated).
    pub outer_refs: Vec<usize>,
    /// Its scalar subqueries (for EXPLAIN; expressions hold them too).
    pub subqueries: Vec<Arc<Query>>,
}

/// Whether two columns compare alike, so one may take the other's constant: both integers
/// or decimals, both text, or the same type.
fn same_family(a: ColumnType, b: ColumnType) -> bool {
    let number =
        |t: ColumnType| matches!(t, ColumnType::Integer { .. } | ColumnType::Decimal { .. });
    (number(a) && number(b)) || (a.is_text() && b.is_text()) || a == b
}

/// Runs constant propagation ([`propagate`]) over the conjuncts every joined row satisfies
/// (WHERE and the ON of inner joins): columns of LEFT-joined tables take no part.
fn propagate_in_scope(scope: &Scope<'_>, left_joined: &[bool], facts: &mut Vec<BoundExpr>) {
    let inner = scope.entries.len() - left_joined.len();
    let source_of = |c: usize| {
        scope
            .locate(c)
            .and_then(|(s, col)| s.checked_sub(inner).map(|k| (k, col)))
    };
    let eligible =
        |c: usize| source_of(c).is_some_and(|(k, col)| !left_joined[k] && col.ty.is_some());
    let compatible = |a: usize, b: usize| match (source_of(a), source_of(b)) {
        (Some((_, x)), Some((_, y))) => match (x.ty, y.ty) {
            (Some(p), Some(q)) => same_family(p, q),
            _ => false,
        },
        _ => false,
    };
    propagate(facts, scope.width(), &compatible, &eligible);
}

fn ident_name(e: &Expr) -> Option<&str> {
    match e {
        Expr::Identifier(i) => Some(&i.value),
        Expr::CompoundIdentifier(p) => p.last().map(|i| i.value.as_str()),
        _ => None,
    }
}

/// One table of a FROM list as the planner takes it: the table factor, whether it is LEFT
/// joined, its own join condition, and the ON conditions of the nested joins it closes.
type Factor<'q> = (&'q TableFactor, bool, JoinCondition<'q>, Vec<&'q Expr>);

/// Whether a join is LEFT, and its condition; an error for the join kinds tpbed lacks.
fn join_kind(j: &ast::Join) -> SqlResult<(bool, JoinCondition<'_>)> {
    let (left, cons) = match &j.join_operator {
        // Tables are always joined in the order written, which is what STRAIGHT_JOIN asks for.
        ast::JoinOperator::Join(c)
        | ast::JoinOperator::Inner(c)
        | ast::JoinOperator::StraightJoin(c) => (false, Some(c)),
        ast::JoinOperator::Left(c) | ast::JoinOperator::LeftOuter(c) => (true, Some(c)),
        ast::JoinOperator::CrossJoin(_) => (false, None),
        other => {
            return Err(SqlError::unsupported(
                &format!("join {other:?}")
                    .chars()
                    .take(40)
                    .collect::<String>(),
            ))
        }
    };
    Ok((
        left,
        cons.map_or(Ok(JoinCondition::None), JoinCondition::of)?,
    ))
}

/// Appends a join's right side (or a FROM item's first table) to `factors`.
///
/// An inner join with a nested join on its right, as sqlparser reads `a JOIN b JOIN c [ON p]`
/// (`a JOIN (b JOIN c [ON p])`, ON-less joins nesting to the right as in MySQL's grammar) or
/// as written with brackets, joins the same rows as the nested tables listed in its place:
/// an inner join is a filter over the product, so its ON is carried by the nested join's last
/// table, where every table it can name has been joined. That holds when the nested joins
/// are inner joins with ON or no condition; with no outer condition, LEFT joins inside keep
/// their meaning too (`a × (b ⟕ c)` is `(a × b) ⟕ c`). Other nestings are unsupported.
/// The nesting is at most as deep as the tables are many (MySQL's 61, checked before parse).
fn push_factor<'q>(
    factors: &mut Vec<Factor<'q>>,
    relation: &'q TableFactor,
    left: bool,
    cond: JoinCondition<'q>,
) -> SqlResult<()> {
    if let TableFactor::NestedJoin {
        table_with_joins: nested,
        alias: None,
    } = relation
    {
        let outer_on = match cond {
            JoinCondition::None => Some(None),
            JoinCondition::On(e) => Some(Some(e)),
            _ => None,
        };
        let kinds = nested
            .joins
            .iter()
            .map(join_kind)
            .collect::<SqlResult<Vec<_>>>()?;
        let flattens = !left
            && outer_on.is_some()
            && kinds.iter().all(|(inner_left, c)| {
                matches!(c, JoinCondition::None | JoinCondition::On(_))
                    && !(*inner_left && matches!(outer_on, Some(Some(_))))
            });
        if flattens {
            push_factor(factors, &nested.relation, false, JoinCondition::None)?;
            for (j, (inner_left, c)) in nested.joins.iter().zip(kinds) {
                push_factor(factors, &j.relation, inner_left, c)?;
            }
            if let (Some(Some(on)), Some(last)) = (outer_on, factors.last_mut()) {
                last.3.push(on);
            }
            return Ok(());
        }
        return Err(SqlError::unsupported(
            "this nesting of joins (a nested join that is LEFT joined, or holds USING or NATURAL)",
        ));
    }
    factors.push((relation, left, cond, Vec::new()));
    Ok(())
}

struct PendingSource {
    alias: String,
    db: String,
    kind: PendingKind,
    left_join: bool,
    on: Vec<BoundExpr>,
    hints: Vec<ast::TableIndexHints>,
}

enum PendingKind {
    Base(Arc<Table>),
    Derived(Box<Query>),
    Virtual(&'static dyn VirtualTable),
}

impl Planner<'_> {
    /// Plans a SELECT (or a derived table's SELECT).
    pub fn query(&mut self, q: &ast::Query) -> SqlResult<Query> {
        let SetExpr::Select(s) = q.body.as_ref() else {
            return Err(SqlError::unsupported("UNION and other set operations"));
        };
        if q.with.is_some() {
            return Err(SqlError::unsupported("WITH (common table expressions)"));
        }
        self.select_ids += 1;
        let select_id = self.select_ids;
        let registry = &self.st.core.vars;
        let outer = std::mem::take(&mut self.outer_scope);
        let mut scope = Scope::nested(registry, outer);
        let mut pending: Vec<PendingSource> = Vec::new();
        // FROM: each item of the list a chain of joins.
        let mut factors: Vec<Factor<'_>> = Vec::new();
        let mut chain_starts = Vec::new();
        for twj in &s.from {
            chain_starts.push(factors.len());
            push_factor(&mut factors, &twj.relation, false, JoinCondition::None)?;
            for j in &twj.joins {
                let (left, cond) = join_kind(j)?;
                push_factor(&mut factors, &j.relation, left, cond)?;
            }
        }
        // A SELECT without tables reaches here when it holds a subquery: it reads one row.
        let wildcard = s.projection.iter().any(|i| {
            matches!(
                i,
                SelectItem::Wildcard(_) | SelectItem::QualifiedWildcard(..)
            )
        });
        if factors.is_empty() && wildcard {
            return Err(SqlError::new(ErrorCode::NoTablesUsed, "No tables used"));
        }
        let mut on_exprs: Vec<Option<Expr>> = Vec::new();
        let mut star = Vec::new();
        let mut chain = Chain::default();
        let mut carried_on: Vec<Vec<&Expr>> = Vec::new();
        for (n, (f, left, cond, carried)) in factors.into_iter().enumerate() {
            if n > 0 && chain_starts.contains(&n) {
                star.extend(std::mem::take(&mut chain).into_order());
            }
            let (alias, db, kind, hints, cols) = match f {
                TableFactor::Table {
                    name,
                    alias,
                    index_directives: index_hints,
                    ..
                } => {
                    let (db, t) = table_name(self, name)?;
                    let a = alias.as_ref().map_or(t.clone(), |a| a.name.value.clone());
                    if let Some(v) = vtables::lookup(self.st.core.as_ref(), &db, &t) {
                        let cols: Arc<[SourceColumn]> = virtual_columns(v, &db, &a).into();
                        (a, db, PendingKind::Virtual(v), Vec::new(), cols)
                    } else {
                        let table = self.table(&db, &t)?;
                        let cols = table_columns(self.st, &table, &db, &a);
                        let hints: Vec<ast::TableIndexHints> = index_hints
                            .iter()
                            .filter_map(|h| match h {
                                ast::TableIndexDirective::MySql(m) => Some(m.clone()),
                                #[allow(unreachable_patterns)]
                                _ => None,
                            })
                            .collect();
                        (a, db, PendingKind::Base(table), hints, cols)
                    }
                }
                TableFactor::Derived {
                    subquery, alias, ..
                } => {
                    let Some(alias) = alias else {
                        return Err(SqlError::new(
                            ErrorCode::Unknown,
                            "Every derived table must have its own alias",
                        ));
                    };
                    let a = alias.name.value.clone();
                    let inner = self.query(subquery)?;
                    let cols: Arc<[SourceColumn]> = inner
                        .columns
                        .iter()
                        .map(|c| {
                            let mut def = c.def.clone().unwrap_or_else(|| {
                                let mut d = ColumnDefinition::new(&c.name, Wire::VarString);
                                d.charset = UTF8MB4;
                                d.column_length = 1024;
                                d
                            });
                            def.table = a.clone();
                            SourceColumn {
                                name: c.name.clone(),
                                def,
                                ty: None,
                                nullable: true,
                            }
                        })
                        .collect();
                    (
                        a,
                        String::new(),
                        PendingKind::Derived(Box::new(inner)),
                        Vec::new(),
                        cols,
                    )
                }
                other => {
                    return Err(SqlError::unsupported(
                        &other.to_string().chars().take(40).collect::<String>(),
                    ))
                }
            };
            scope.push(&alias, &db, cols)?;
            let on = chain.join(&mut scope, cond)?;
            pending.push(PendingSource {
                alias: alias.clone(),
                db: db.clone(),
                kind,
                left_join: left,
                on: Vec::new(),
                hints,
            });
            on_exprs.push(on);
            carried_on.push(carried);
        }
        star.extend(chain.into_order());
        scope.star = Some(star);
        if let Some(w) = &s.selection {
            scope.subqueries = self.materialize_in_subqueries(w)?;
        }
        let subqueries = self.plan_scalar_subqueries(s, q, &mut scope)?;
        let aggregated = !matches!(&s.group_by, ast::GroupByExpr::Expressions(g, _) if g.is_empty())
            || s.projection.iter().any(|i| match i {
                SelectItem::UnnamedExpr(e) | SelectItem::ExprWithAlias { expr: e, .. } => {
                    has_aggregate(e)
                }
                _ => false,
            })
            || s.having.as_ref().is_some_and(has_aggregate);
        let aggb = AggBinder {
            scope: &scope,
            slots: Default::default(),
        };
        // Select list.
        scope.in_clause("field list");
        let mut items = Vec::new();
        let mut columns = Vec::new();
        let mut item_asts: Vec<Option<&Expr>> = Vec::new();
        for item in &s.projection {
            match item {
                SelectItem::Wildcard(_) | SelectItem::QualifiedWildcard(..) => {
                    let only = match item {
                        SelectItem::QualifiedWildcard(
                            ast::SelectItemQualifiedWildcardKind::ObjectName(n),
                            _,
                        ) => Some(crate::sql::names::last(n)),
                        _ => None,
                    };
                    let listed: Vec<usize> = match &only {
                        Some(o) => scope
                            .own()
                            .iter()
                            .filter(|e| e.alias == *o)
                            .flat_map(|e| e.offset..e.offset + e.columns.len())
                            .collect(),
                        None => scope.star_order(),
                    };
                    let any = !listed.is_empty() || only.is_none();
                    for i in listed {
                        let (s, c) = scope.locate(i).expect("a column of the scope");
                        let e = &scope.entries[s];
                        let bound = if aggregated {
                            aggb.bind(
                                &Expr::CompoundIdentifier(vec![
                                    ast::Ident::new(&e.alias),
                                    ast::Ident::new(&c.name),
                                ]),
                                &mut self.params,
                            )?
                        } else {
                            BoundExpr::Column(i)
                        };
                        items.push(bound);
                        columns.push(OutColumn {
                            name: c.name.clone(),
                            def: Some(c.def.clone()),
                        });
                        item_asts.push(None);
                    }
                    if !any {
                        return Err(SqlError::new(
                            ErrorCode::BadTable,
                            format!("Unknown table '{}'", only.unwrap_or_default()),
                        ));
                    }
                }
                SelectItem::ExprWithAliases { .. } => {
                    return Err(SqlError::unsupported("multiple aliases"))
                }
                SelectItem::UnnamedExpr(e) | SelectItem::ExprWithAlias { expr: e, .. } => {
                    let name = match item {
                        SelectItem::ExprWithAlias { alias, .. } => alias.value.clone(),
                        _ => ident_name(e)
                            .map(str::to_string)
                            .or_else(|| {
                                crate::sql::span_text(self.sql, crate::sql::spans::expr_span(e))
                                    .filter(|t| t.matches('(').count() == t.matches(')').count())
                                    .map(crate::sql::label)
                            })
                            .unwrap_or_else(|| crate::sql::label(&e.to_string())),
                    };
                    let bound = if aggregated {
                        aggb.bind(e, &mut self.params)?
                    } else {
                        let mut b = Binder::new(&scope);
                        b.params = self.params;
                        let x = b.bind(e)?;
                        self.params = b.params;
                        x
                    };
                    // A DATE expression's metadata is known now; other computed columns
                    // are typed from their values.
                    let def = bound
                        .is_date()
                        .then(|| crate::sql::output::date_column(&name));
                    items.push(bound);
                    columns.push(OutColumn { name, def });
                    item_asts.push(Some(e));
                }
            }
        }
        // WHERE and ON.
        let mut where_parts = Vec::new();
        let bind_base = |scope: &Scope<'_>, e: &Expr, params: &mut usize| -> SqlResult<BoundExpr> {
            let mut b = Binder::new(scope);
            b.params = *params;
            let x = b.bind(e)?;
            *params = b.params;
            Ok(x)
        };
        for (i, on) in on_exprs.iter().enumerate() {
            for e in on.iter().chain(carried_on[i].iter().copied()) {
                scope.in_clause("on clause");
                let x = bind_base(&scope, e, &mut self.params)?;
                conjuncts(x, &mut pending[i].on);
            }
        }
        if let Some(w) = &s.selection {
            if has_aggregate(w) {
                return Err(SqlError::new(
                    ErrorCode::InvalidGroupFuncUse,
                    "Invalid use of group function",
                ));
            }
            scope.in_clause("where clause");
            conjuncts(bind_base(&scope, w, &mut self.params)?, &mut where_parts);
        }
        // GROUP BY.
        let mut group_by = Vec::new();
        if let ast::GroupByExpr::Expressions(g, _) = &s.group_by {
            scope.in_clause("group statement");
            for e in g {
                let target = match e {
                    Expr::Value(v) => match &v.value {
                        ast::Value::Number(n, _) => n
                            .parse::<usize>()
                            .ok()
                            .and_then(|n| item_asts.get(n.wrapping_sub(1)).copied().flatten()),
                        _ => None,
                    },
                    Expr::Identifier(id) => s.projection.iter().find_map(|it| match it {
                        SelectItem::ExprWithAlias { expr, alias }
                            if alias.value.eq_ignore_ascii_case(&id.value) =>
                        {
                            Some(expr)
                        }
                        _ => None,
                    }),
                    _ => None,
                };
                group_by.push(bind_base(&scope, target.unwrap_or(e), &mut self.params)?);
            }
        }
        // HAVING.
        scope.in_clause("having clause");
        let having = match &s.having {
            Some(h) if aggregated => Some(aggb.bind(h, &mut self.params)?),
            Some(h) => Some(bind_base(&scope, h, &mut self.params)?),
            None => None,
        };
        // ORDER BY.
        scope.in_clause("order clause");
        let mut order = Vec::new();
        if let Some(ob) = &q.order_by {
            if let ast::OrderByKind::Expressions(list) = &ob.kind {
                for o in list {
                    let desc = matches!(o.options.sort, Some(ast::OrderBySort::Desc));
                    let by_position = match &o.expr {
                        Expr::Value(v) => match &v.value {
                            ast::Value::Number(n, _) => n.parse::<usize>().ok(),
                            _ => None,
                        },
                        _ => None,
                    };
                    let by_alias = match &o.expr {
                        Expr::Identifier(id) => columns
                            .iter()
                            .position(|c| c.name.eq_ignore_ascii_case(&id.value)),
                        _ => None,
                    };
                    let key = if let Some(n) = by_position {
                        items.get(n.wrapping_sub(1)).cloned().ok_or_else(|| {
                            crate::exec::errors::unknown_column(&n.to_string(), "order clause")
                        })?
                    } else if let Some(i) = by_alias {
                        items[i].clone()
                    } else if aggregated {
                        aggb.bind(&o.expr, &mut self.params)?
                    } else {
                        bind_base(&scope, &o.expr, &mut self.params)?
                    };
                    order.push((key, desc));
                }
            }
        }
        // LIMIT.
        let (limit, offset) = match &q.limit_clause {
            None => (None, None),
            Some(ast::LimitClause::LimitOffset { limit, offset, .. }) => (
                limit
                    .as_ref()
                    .map(|l| bind_base(&scope, l, &mut self.params))
                    .transpose()?,
                offset
                    .as_ref()
                    .map(|o| bind_base(&scope, &o.value, &mut self.params))
                    .transpose()?,
            ),
            Some(ast::LimitClause::OffsetCommaLimit { offset, limit }) => (
                Some(bind_base(&scope, limit, &mut self.params)?),
                Some(bind_base(&scope, offset, &mut self.params)?),
            ),
        };
        let lock = q.locks.first().map(|l| LockClause {
            exclusive: matches!(l.lock_type, ast::LockType::Update),
            nowait: matches!(l.nonblock, Some(ast::NonBlock::Nowait)),
            skip_locked: matches!(l.nonblock, Some(ast::NonBlock::SkipLocked)),
        });
        let slots = aggb.slots.into_inner();
        // Result metadata.
        for (i, c) in columns.iter_mut().enumerate() {
            if c.def.is_some() {
                if let Some(d) = &mut c.def {
                    d.name = c.name.clone();
                }
                continue;
            }
            c.def = match &items[i] {
                BoundExpr::Column(x) if !aggregated => scope.locate(*x).map(|(_, sc)| {
                    let mut d = sc.def.clone();
                    d.name = c.name.clone();
                    d
                }),
                BoundExpr::Column(x) => slots
                    .get(*x)
                    .and_then(|slot| agg_def(&c.name, slot, &scope)),
                _ => None,
            };
        }
        let distinct = matches!(s.distinct, Some(ast::Distinct::Distinct));
        let order_cols: Option<Vec<(usize, bool)>> = if aggregated || distinct {
            None
        } else if let Some(first) = scope.own().first() {
            order
                .iter()
                .map(|(e, desc)| match e {
                    BoundExpr::Column(i)
                        if *i >= first.offset && *i < first.offset + first.columns.len() =>
                    {
                        Some((*i - first.offset, *desc))
                    }
                    _ => None,
                })
                .collect()
        } else {
            None
        };
        // Conjunct placement.
        let entries = scope.own().to_vec();
        let level_of = |e: &BoundExpr| {
            max_column(e).map_or(0, |m| {
                entries
                    .iter()
                    .position(|x| m >= x.offset && m < x.offset + x.columns.len())
                    .unwrap_or(0)
            })
        };
        let mut post = Vec::new();
        let left_joined: Vec<bool> = pending.iter().map(|p| p.left_join).collect();
        for p in pending.iter_mut().filter(|p| !p.left_join) {
            where_parts.append(&mut p.on);
        }
        propagate_in_scope(&scope, &left_joined, &mut where_parts);
        for c in where_parts {
            let l = level_of(&c);
            if pending.get(l).is_none_or(|p| p.left_join) {
                post.push(c);
            } else {
                pending[l].on.push(c);
            }
        }
        let outer_name = |i: usize| {
            scope
                .locate(i)
                .map(|(s, c)| {
                    let e = &scope.entries[s];
                    if e.db.is_empty() {
                        format!("{}.{}", e.alias, c.name)
                    } else {
                        format!("{}.{}.{}", e.db, e.alias, c.name)
                    }
                })
                .unwrap_or_else(|| "func".into())
        };
        let limited = limit.is_some();
        let mut sources = Vec::new();
        let mut first_ordered = order.is_empty();
        for (k, p) in pending.into_iter().enumerate() {
            let e = &entries[k];
            let full = and_all(p.on.clone());
            let (kind, residual) = match p.kind {
                PendingKind::Base(table) => {
                    let allowed = allowed_indexes(&table, &p.hints)?;
                    let forced = p
                        .hints
                        .iter()
                        .any(|h| matches!(h.hint_type, ast::TableIndexHintType::Force));
                    let ctx = access::Context {
                        offset: e.offset,
                        conjuncts: &p.on,
                        order: if k == 0 { order_cols.clone() } else { None },
                        limited,
                        allowed,
                        forced,
                        outer_name: &outer_name,
                    };
                    let acc = access::choose(&table, &ctx);
                    if k == 0 && acc.ordered {
                        first_ordered = true;
                    }
                    let rest: Vec<BoundExpr> =
                        p.on.iter()
                            .enumerate()
                            .filter(|(i, _)| !acc.consumed.contains(i))
                            .map(|(_, c)| c.clone())
                            .collect();
                    (SourceKind::Base { table, access: acc }, and_all(rest))
                }
                PendingKind::Derived(q) => (SourceKind::Derived(q), full.clone()),
                PendingKind::Virtual(v) => (SourceKind::Virtual(v), full.clone()),
            };
            sources.push(Source {
                alias: p.alias,
                db: p.db,
                kind,
                offset: e.offset,
                width: e.columns.len(),
                left_join: p.left_join,
                filter: residual,
                full_filter: full,
                needed: Vec::new(),
            });
        }
        let sort = !(order.is_empty() || first_ordered && order_cols.is_some());
        let mut query = Query {
            width: scope.width(),
            sources,
            post_filter: and_all(post),
            agg: aggregated.then_some(Aggregation { group_by, slots }),
            having,
            items,
            fixed_columns: fixed_columns(&columns),
            columns,
            order,
            sort,
            order_items: Vec::new(),
            movable: Vec::new(),
            distinct,
            limit,
            offset,
            lock,
            select_id,
            outer_width: scope.own_offset(),
            outer_refs: {
                let mut r = scope.outer_used.borrow().clone();
                r.sort_unstable();
                r.dedup();
                r
            },
            subqueries,
        };
        compute_needed(&mut query);
        plan_moves(&mut query);
        Ok(query)
    }

    /// The table `db.name`, remembered so a prepared plan can detect DDL.
    pub fn table(&mut self, db: &str, name: &str) -> SqlResult<Arc<Table>> {
        self.st.check_table_locked(db, name)?;
        let t = self
            .st
            .core
            .catalog
            .engine
            .table(db, name)
            .map_err(|_| no_such_table(db, name))?;
        self.tables
            .push((db.to_string(), name.to_string(), t.clone()));
        Ok(t)
    }
}
