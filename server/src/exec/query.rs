//! SELECT planning over tables (one SELECT; no UNION or WITH): FROM (base, derived and
//! virtual tables; comma, CROSS, INNER and LEFT joins with ON, USING or NATURAL), WHERE
//! split into conjuncts, each placed at the join level of the last table it reads (a WHERE
//! conjunct on a LEFT-joined table waits for every table instead), an access path per base
//! table, aggregation, HAVING, ORDER BY (served by the first table's access order when that
//! gives it, else sorted), DISTINCT, LIMIT/OFFSET and the locking clause.
//!
//! [`Planner::query`] runs as named stages in that order: the FROM list resolved onto a
//! scope, the subqueries, each clause bound (sharing a `Clauses` context), the result
//! metadata, then the conjuncts placed and each source's access path chosen.

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

/// A FROM table once resolved, until its conjuncts are placed and its access path chosen.
struct PendingSource<'q> {
    alias: String,
    db: String,
    kind: PendingKind,
    left_join: bool,
    /// Its join condition as written (USING and NATURAL made into `=` pairs).
    on_expr: Option<Expr>,
    /// The ON conditions of the nested joins it closes ([`push_factor`]).
    carried_on: Vec<&'q Expr>,
    /// The conjuncts evaluated at its join level: first those of its join conditions, then
    /// (for an inner-joined table) the WHERE's and inner ON's placed there.
    on: Vec<BoundExpr>,
    hints: Vec<ast::TableIndexHints>,
}

enum PendingKind {
    Base(Arc<Table>),
    Derived(Box<Query>),
    Virtual(&'static dyn VirtualTable),
}

/// One FROM table resolved: its names, row origin, index hints and columns.
struct FromTable {
    alias: String,
    db: String,
    kind: PendingKind,
    hints: Vec<ast::TableIndexHints>,
    columns: Arc<[SourceColumn]>,
}

/// The FROM list flattened into tables in join order ([`push_factor`]), with the index of
/// the first table of each comma-separated item.
fn from_factors(s: &ast::Select) -> SqlResult<(Vec<Factor<'_>>, Vec<usize>)> {
    let mut factors = Vec::new();
    let mut chain_starts = Vec::new();
    for twj in &s.from {
        chain_starts.push(factors.len());
        push_factor(&mut factors, &twj.relation, false, JoinCondition::None)?;
        for j in &twj.joins {
            let (left, cond) = join_kind(j)?;
            push_factor(&mut factors, &j.relation, left, cond)?;
        }
    }
    Ok((factors, chain_starts))
}

/// The columns a derived table `alias` shows: its SELECT's result columns, those whose
/// metadata is known only at execution typed as text.
fn derived_columns(inner: &Query, alias: &str) -> Arc<[SourceColumn]> {
    inner
        .columns
        .iter()
        .map(|c| {
            let mut def = c.def.clone().unwrap_or_else(|| {
                let mut d = ColumnDefinition::new(&c.name, Wire::VarString);
                d.charset = UTF8MB4;
                d.column_length = 1024;
                d
            });
            def.table = alias.to_string();
            SourceColumn {
                name: c.name.clone(),
                def,
                ty: None,
                nullable: true,
            }
        })
        .collect()
}

/// What the clause stages of one SELECT share once its FROM is planned: the statement, the
/// scope names resolve in, and whether it aggregates (its select list, HAVING and ORDER BY
/// then bind over the slot row through `agg`).
struct Clauses<'c, 'r> {
    q: &'c ast::Query,
    s: &'c ast::Select,
    scope: &'c Scope<'r>,
    aggregated: bool,
    agg: AggBinder<'c, 'r>,
}

impl Clauses<'_, '_> {
    /// Binds `e` over the slot row when the SELECT aggregates, else over the source row.
    fn bind(&self, e: &Expr, params: &mut usize) -> SqlResult<BoundExpr> {
        if self.aggregated {
            self.agg.bind(e, params)
        } else {
            bind_base(self.scope, e, params)
        }
    }
}

/// Binds `e` over the source row of `scope`; `params` is the statement's running `?` count.
fn bind_base(scope: &Scope<'_>, e: &Expr, params: &mut usize) -> SqlResult<BoundExpr> {
    let mut b = Binder::new(scope);
    b.params = *params;
    let x = b.bind(e)?;
    *params = b.params;
    Ok(x)
}

/// The bound select list: per item (a `*` standing for one per column) its expression,
/// result column and, when written as an expression, its syntax (GROUP BY 2 names it).
struct SelectList<'q> {
    items: Vec<BoundExpr>,
    columns: Vec<OutColumn>,
    asts: Vec<Option<&'q Expr>>,
}

/// The query's one SELECT; an error for set operations and WITH.
fn single_select(q: &ast::Query) -> SqlResult<&ast::Select> {
    let SetExpr::Select(s) = q.body.as_ref() else {
        return Err(SqlError::unsupported("UNION and other set operations"));
    };
    if q.with.is_some() {
        return Err(SqlError::unsupported("WITH (common table expressions)"));
    }
    Ok(s)
}

/// Whether the SELECT aggregates: it groups, or its select list or HAVING holds an
/// aggregate.
fn is_aggregated(s: &ast::Select) -> bool {
    !matches!(&s.group_by, ast::GroupByExpr::Expressions(g, _) if g.is_empty())
        || s.projection.iter().any(|i| match i {
            SelectItem::UnnamedExpr(e) | SelectItem::ExprWithAlias { expr: e, .. } => {
                has_aggregate(e)
            }
            _ => false,
        })
        || s.having.as_ref().is_some_and(has_aggregate)
}

/// The query's locking clause (its first, as MySQL reads one).
fn lock_clause(q: &ast::Query) -> Option<LockClause> {
    q.locks.first().map(|l| LockClause {
        exclusive: matches!(l.lock_type, ast::LockType::Update),
        nowait: matches!(l.nonblock, Some(ast::NonBlock::Nowait)),
        skip_locked: matches!(l.nonblock, Some(ast::NonBlock::SkipLocked)),
    })
}

impl Planner<'_> {
    /// Plans a SELECT (or a derived table's SELECT), in stages: FROM, IN and scalar
    /// subqueries, the select list and each clause bound, result metadata, then the WHERE's
    /// conjuncts placed at their join levels and each source's access path chosen.
    pub fn query(&mut self, q: &ast::Query) -> SqlResult<Query> {
        let s = single_select(q)?;
        self.select_ids += 1;
        let select_id = self.select_ids;
        let outer = std::mem::take(&mut self.outer_scope);
        let mut scope = Scope::nested(&self.st.core.vars, outer);
        let mut pending = self.plan_from(s, &mut scope)?;
        if let Some(w) = &s.selection {
            scope.subqueries = self.materialize_in_subqueries(w)?;
        }
        let subqueries = self.plan_scalar_subqueries(s, q, &mut scope)?;
        let aggregated = is_aggregated(s);
        let c = Clauses {
            q,
            s,
            scope: &scope,
            aggregated,
            agg: AggBinder {
                scope: &scope,
                slots: Default::default(),
            },
        };
        let SelectList {
            items,
            mut columns,
            asts,
        } = self.bind_select_list(&c)?;
        let where_parts = self.bind_where(&c, &mut pending)?;
        let group_by = self.bind_group_by(&c, &asts)?;
        let having = self.bind_having(&c)?;
        let order = self.bind_order_by(&c, &items, &columns)?;
        let (limit, offset) = self.bind_limit(&c)?;
        let slots = c.agg.slots.into_inner();
        set_column_defs(&mut columns, &items, &scope, aggregated, &slots);
        let distinct = matches!(s.distinct, Some(ast::Distinct::Distinct));
        let order_cols = if aggregated || distinct {
            None
        } else {
            first_table_order(&scope, &order)
        };
        let post = place_conjuncts(&scope, &mut pending, where_parts);
        let (sources, first_ordered) = plan_sources(
            &scope,
            pending,
            &order_cols,
            limit.is_some(),
            order.is_empty(),
        )?;
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
            lock: lock_clause(q),
            select_id,
            outer_width: scope.own_offset(),
            outer_refs: outer_refs(&scope),
            subqueries,
        };
        compute_needed(&mut query);
        plan_moves(&mut query);
        Ok(query)
    }

    /// Plans the FROM list: resolves each table (planning derived tables), pushes its
    /// columns onto `scope` in join order, and records `SELECT *`'s column order.
    fn plan_from<'q>(
        &mut self,
        s: &'q ast::Select,
        scope: &mut Scope<'_>,
    ) -> SqlResult<Vec<PendingSource<'q>>> {
        let (factors, chain_starts) = from_factors(s)?;
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
        let mut pending = Vec::new();
        let mut star = Vec::new();
        let mut chain = Chain::default();
        for (n, (f, left, cond, carried_on)) in factors.into_iter().enumerate() {
            if n > 0 && chain_starts.contains(&n) {
                star.extend(std::mem::take(&mut chain).into_order());
            }
            let t = self.resolve_table(f)?;
            scope.push(&t.alias, &t.db, t.columns)?;
            let on_expr = chain.join(scope, cond)?;
            pending.push(PendingSource {
                alias: t.alias,
                db: t.db,
                kind: t.kind,
                left_join: left,
                on_expr,
                carried_on,
                on: Vec::new(),
                hints: t.hints,
            });
        }
        star.extend(chain.into_order());
        scope.star = Some(star);
        Ok(pending)
    }

    /// Resolves one FROM table: a named (base or introspection) table or a derived table.
    fn resolve_table(&mut self, f: &TableFactor) -> SqlResult<FromTable> {
        match f {
            TableFactor::Table {
                name,
                alias,
                index_directives,
                ..
            } => self.named_table(name, alias.as_ref(), index_directives),
            TableFactor::Derived {
                subquery, alias, ..
            } => self.derived_table(subquery, alias.as_ref()),
            other => Err(SqlError::unsupported(
                &other.to_string().chars().take(40).collect::<String>(),
            )),
        }
    }

    /// Resolves a named table: an introspection table if `name` is one, else a base table
    /// with its index hints.
    fn named_table(
        &mut self,
        name: &ast::ObjectName,
        alias: Option<&ast::TableAlias>,
        index_hints: &[ast::TableIndexDirective],
    ) -> SqlResult<FromTable> {
        let (db, t) = table_name(self, name)?;
        let alias = alias.map_or(t.clone(), |a| a.name.value.clone());
        if let Some(v) = vtables::lookup(self.st.core.as_ref(), &db, &t) {
            let columns = virtual_columns(v, &db, &alias).into();
            return Ok(FromTable {
                alias,
                db,
                kind: PendingKind::Virtual(v),
                hints: Vec::new(),
                columns,
            });
        }
        let table = self.table(&db, &t)?;
        let columns = table_columns(self.st, &table, &db, &alias);
        let hints = index_hints
            .iter()
            .filter_map(|h| match h {
                ast::TableIndexDirective::MySql(m) => Some(m.clone()),
                #[allow(unreachable_patterns)]
                _ => None,
            })
            .collect();
        Ok(FromTable {
            alias,
            db,
            kind: PendingKind::Base(table),
            hints,
            columns,
        })
    }

    /// Plans a derived table (a subquery in FROM), which must have an alias.
    fn derived_table(
        &mut self,
        subquery: &ast::Query,
        alias: Option<&ast::TableAlias>,
    ) -> SqlResult<FromTable> {
        let Some(alias) = alias else {
            return Err(SqlError::new(
                ErrorCode::Unknown,
                "Every derived table must have its own alias",
            ));
        };
        let alias = alias.name.value.clone();
        let inner = self.query(subquery)?;
        let columns = derived_columns(&inner, &alias);
        Ok(FromTable {
            alias,
            db: String::new(),
            kind: PendingKind::Derived(Box::new(inner)),
            hints: Vec::new(),
            columns,
        })
    }

    /// Binds the select list in order, each `*` and `t.*` expanded to its columns.
    fn bind_select_list<'c>(&mut self, c: &Clauses<'c, '_>) -> SqlResult<SelectList<'c>> {
        c.scope.in_clause("field list");
        let mut list = SelectList {
            items: Vec::new(),
            columns: Vec::new(),
            asts: Vec::new(),
        };
        let s: &'c ast::Select = c.s;
        for item in &s.projection {
            match item {
                SelectItem::Wildcard(_) | SelectItem::QualifiedWildcard(..) => {
                    self.bind_wildcard(c, item, &mut list)?
                }
                SelectItem::ExprWithAliases { .. } => {
                    return Err(SqlError::unsupported("multiple aliases"))
                }
                SelectItem::UnnamedExpr(e) | SelectItem::ExprWithAlias { expr: e, .. } => {
                    self.bind_select_expr(c, item, e, &mut list)?
                }
            }
        }
        Ok(list)
    }

    /// Appends the columns a `*` or `t.*` stands for, in `SELECT *` order; an error when
    /// `t` names no table of this SELECT.
    fn bind_wildcard(
        &mut self,
        c: &Clauses<'_, '_>,
        item: &SelectItem,
        list: &mut SelectList<'_>,
    ) -> SqlResult<()> {
        let scope = c.scope;
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
            let (s, col) = scope.locate(i).expect("a column of the scope");
            let e = &scope.entries[s];
            let bound = if c.aggregated {
                c.agg.bind(
                    &Expr::CompoundIdentifier(vec![
                        ast::Ident::new(&e.alias),
                        ast::Ident::new(&col.name),
                    ]),
                    &mut self.params,
                )?
            } else {
                BoundExpr::Column(i)
            };
            list.items.push(bound);
            list.columns.push(OutColumn {
                name: col.name.clone(),
                def: Some(col.def.clone()),
            });
            list.asts.push(None);
        }
        if !any {
            return Err(SqlError::new(
                ErrorCode::BadTable,
                format!("Unknown table '{}'", only.unwrap_or_default()),
            ));
        }
        Ok(())
    }

    /// Appends a select-list expression `e` (the whole of `item`) under its label.
    fn bind_select_expr<'c>(
        &mut self,
        c: &Clauses<'_, '_>,
        item: &SelectItem,
        e: &'c Expr,
        list: &mut SelectList<'c>,
    ) -> SqlResult<()> {
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
        let bound = c.bind(e, &mut self.params)?;
        // A DATE expression's metadata is known now; other computed columns are typed from
        // their values.
        let def = bound
            .is_date()
            .then(|| crate::sql::output::date_column(&name));
        list.items.push(bound);
        list.columns.push(OutColumn { name, def });
        list.asts.push(Some(e));
        Ok(())
    }

    /// Binds each table's join conditions into its conjuncts, then the WHERE into the
    /// conjuncts returned; an aggregate in the WHERE is an error.
    fn bind_where(
        &mut self,
        c: &Clauses<'_, '_>,
        pending: &mut [PendingSource<'_>],
    ) -> SqlResult<Vec<BoundExpr>> {
        for p in pending.iter_mut() {
            for e in p.on_expr.iter().chain(p.carried_on.iter().copied()) {
                c.scope.in_clause("on clause");
                let x = bind_base(c.scope, e, &mut self.params)?;
                conjuncts(x, &mut p.on);
            }
        }
        let mut where_parts = Vec::new();
        if let Some(w) = &c.s.selection {
            if has_aggregate(w) {
                return Err(SqlError::new(
                    ErrorCode::InvalidGroupFuncUse,
                    "Invalid use of group function",
                ));
            }
            c.scope.in_clause("where clause");
            conjuncts(bind_base(c.scope, w, &mut self.params)?, &mut where_parts);
        }
        Ok(where_parts)
    }

    /// Binds GROUP BY over the source row; a position or a select-list alias stands for
    /// that item's expression.
    fn bind_group_by(
        &mut self,
        c: &Clauses<'_, '_>,
        asts: &[Option<&Expr>],
    ) -> SqlResult<Vec<BoundExpr>> {
        let mut group_by = Vec::new();
        let ast::GroupByExpr::Expressions(g, _) = &c.s.group_by else {
            return Ok(group_by);
        };
        c.scope.in_clause("group statement");
        for e in g {
            let target = match e {
                Expr::Value(v) => match &v.value {
                    ast::Value::Number(n, _) => n
                        .parse::<usize>()
                        .ok()
                        .and_then(|n| asts.get(n.wrapping_sub(1)).copied().flatten()),
                    _ => None,
                },
                Expr::Identifier(id) => c.s.projection.iter().find_map(|it| match it {
                    SelectItem::ExprWithAlias { expr, alias }
                        if alias.value.eq_ignore_ascii_case(&id.value) =>
                    {
                        Some(expr)
                    }
                    _ => None,
                }),
                _ => None,
            };
            group_by.push(bind_base(c.scope, target.unwrap_or(e), &mut self.params)?);
        }
        Ok(group_by)
    }

    /// Binds HAVING (over the slot row when the SELECT aggregates).
    fn bind_having(&mut self, c: &Clauses<'_, '_>) -> SqlResult<Option<BoundExpr>> {
        c.scope.in_clause("having clause");
        c.s.having
            .as_ref()
            .map(|h| c.bind(h, &mut self.params))
            .transpose()
    }

    /// Binds ORDER BY's keys with their direction; a position or a result column's label
    /// stands for that select item.
    fn bind_order_by(
        &mut self,
        c: &Clauses<'_, '_>,
        items: &[BoundExpr],
        columns: &[OutColumn],
    ) -> SqlResult<Vec<(BoundExpr, bool)>> {
        c.scope.in_clause("order clause");
        let mut order = Vec::new();
        let Some(ob) = &c.q.order_by else {
            return Ok(order);
        };
        let ast::OrderByKind::Expressions(list) = &ob.kind else {
            return Ok(order);
        };
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
            } else {
                c.bind(&o.expr, &mut self.params)?
            };
            order.push((key, desc));
        }
        Ok(order)
    }

    /// Binds LIMIT and OFFSET (either syntax) over the source row.
    fn bind_limit(
        &mut self,
        c: &Clauses<'_, '_>,
    ) -> SqlResult<(Option<BoundExpr>, Option<BoundExpr>)> {
        let scope = c.scope;
        Ok(match &c.q.limit_clause {
            None => (None, None),
            Some(ast::LimitClause::LimitOffset { limit, offset, .. }) => (
                limit
                    .as_ref()
                    .map(|l| bind_base(scope, l, &mut self.params))
                    .transpose()?,
                offset
                    .as_ref()
                    .map(|o| bind_base(scope, &o.value, &mut self.params))
                    .transpose()?,
            ),
            Some(ast::LimitClause::OffsetCommaLimit { offset, limit }) => (
                Some(bind_base(scope, limit, &mut self.params)?),
                Some(bind_base(scope, offset, &mut self.params)?),
            ),
        })
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

/// Completes the result metadata: a column known at planning takes its label; a plain
/// column of a source (or of an aggregate's slot) takes that column's metadata; the rest
/// stay to be typed from their values.
fn set_column_defs(
    columns: &mut [OutColumn],
    items: &[BoundExpr],
    scope: &Scope<'_>,
    aggregated: bool,
    slots: &[AggSlot],
) {
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
            BoundExpr::Column(x) => slots.get(*x).and_then(|slot| agg_def(&c.name, slot, scope)),
            _ => None,
        };
    }
}

/// ORDER BY as (column of the first table, descending) when every key is a column of that
/// table, so its access path may give the order.
fn first_table_order(scope: &Scope<'_>, order: &[(BoundExpr, bool)]) -> Option<Vec<(usize, bool)>> {
    let first = scope.own().first()?;
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
}

/// Places the WHERE's conjuncts, with the ON conjuncts of inner joins, after constant
/// propagation: each at the join level of the last table it reads, or in the returned
/// post-join filter when that table is LEFT joined (or there is none).
fn place_conjuncts(
    scope: &Scope<'_>,
    pending: &mut [PendingSource<'_>],
    mut where_parts: Vec<BoundExpr>,
) -> Vec<BoundExpr> {
    let entries = scope.own();
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
    propagate_in_scope(scope, &left_joined, &mut where_parts);
    for c in where_parts {
        let l = level_of(&c);
        if pending.get(l).is_none_or(|p| p.left_join) {
            post.push(c);
        } else {
            pending[l].on.push(c);
        }
    }
    post
}

/// The name EXPLAIN's `ref` gives combined-row column `i` (`func` for none).
fn outer_column_name(scope: &Scope<'_>, i: usize) -> String {
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
}

/// Makes each pending table a source of the nested loop: a base table gets its access path
/// (the first one asked for `order_cols`) and keeps as filter the conjuncts that path does
/// not ensure. Also returns whether the order is given (no ORDER BY, or the first table's
/// access path reads in it).
fn plan_sources(
    scope: &Scope<'_>,
    pending: Vec<PendingSource<'_>>,
    order_cols: &Option<Vec<(usize, bool)>>,
    limited: bool,
    unordered: bool,
) -> SqlResult<(Vec<Source>, bool)> {
    let outer_name = |i: usize| outer_column_name(scope, i);
    let entries = scope.own();
    let mut sources = Vec::new();
    let mut first_ordered = unordered;
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
    Ok((sources, first_ordered))
}

/// The enclosing SELECTs' columns this SELECT read, sorted and without repeats.
fn outer_refs(scope: &Scope<'_>) -> Vec<usize> {
    let mut r = scope.outer_used.borrow().clone();
    r.sort_unstable();
    r.dedup();
    r
}
