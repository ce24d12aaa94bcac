//! EXPLAIN in MySQL's traditional format: one row per table in join order (derived tables
//! after the SELECT that reads them), with the access type, the index, the key parts used,
//! an estimate of rows (counted in the index for constant keys) and the Extra telltales
//! `Using where`, `Using index`, `Using temporary`, `Using filesort`.

use protocol::ColumnDefinition;

use crate::context::Context;
use crate::error::SqlResult;
use crate::exec::access::{covering, AccessType};
use crate::exec::query::{Query, Source, SourceKind};
use crate::exec::run::Exec;
use crate::exec::Body;
use crate::sql::output::{Output, ResultSet};
use crate::value::Value;

const NAMES: [&str; 12] = [
    "id",
    "select_type",
    "table",
    "partitions",
    "type",
    "possible_keys",
    "key",
    "key_len",
    "ref",
    "rows",
    "filtered",
    "Extra",
];

/// The result columns of EXPLAIN.
pub fn columns() -> Vec<ColumnDefinition> {
    ResultSet::text(&NAMES, Vec::new()).columns.to_vec()
}

fn opt(s: Option<String>) -> Value {
    s.map_or(Value::Null, |s| Value::str(&s))
}

/// Whether the index holds every column read (`Using index`): a secondary index that covers
/// them, or the clustered index when they are all key columns.
fn reads_only_key(table: &crate::engine::Table, index: usize, needed: &[usize]) -> bool {
    let def = table.def();
    if index == 0 {
        return !def.has_hidden_primary()
            && needed.iter().all(|c| def.clustered().columns.contains(c));
    }
    covering(table, index, needed)
}

/// Rows with one value of the first `parts` key columns of an index, sampled at the index's
/// first key (InnoDB estimates from sampled pages the same way): the estimate of a `ref`
/// whose key values come from earlier tables.
fn rows_per_key(table: &crate::engine::Table, index: usize, parts: usize, cap: u64) -> u64 {
    use crate::engine::{key, Direction, KeyRange};
    let cols = table.key_columns(index);
    let Some(first) = table
        .scan(index, KeyRange::all(), Direction::Forward)
        .next()
    else {
        return 1;
    };
    let mut len = 0;
    for c in cols.iter().take(parts) {
        len += key::decode(*c, &first.key[len..]).1;
    }
    let range = KeyRange::prefix(first.key[..len].to_vec());
    let n = table
        .scan(index, range, Direction::Forward)
        .take(cap as usize)
        .count() as u64;
    n.max(1)
}

/// Rows a source is expected to produce (counted for constant key ranges, capped).
fn estimate(ex: &Exec<'_>, s: &Source) -> u64 {
    const CAP: u64 = 1_000_000;
    match &s.kind {
        SourceKind::Base { table, access } => match access.kind {
            AccessType::Const | AccessType::EqRef => 1,
            AccessType::All | AccessType::Index => table.row_count().max(1),
            _ if s.offset > 0 && !access.refs.iter().all(|r| r == "const") => {
                rows_per_key(table, access.index, access.refs.len(), CAP)
            }
            _ => {
                let row = vec![Value::Null; s.offset + s.width];
                let Ok(r) = ex.ranges(table, access, &row) else {
                    return table.row_count().max(1);
                };
                let mut n = 0u64;
                for range in r.ranges {
                    for _ in table.scan(access.index, range, crate::engine::Direction::Forward) {
                        n += 1;
                        if n >= CAP {
                            return n;
                        }
                    }
                }
                n.max(1)
            }
        },
        SourceKind::Derived(q) => ex.query(q).map_or(1, |r| r.len() as u64).max(1),
        SourceKind::Virtual(v) => (v.rows(ex.st.core.as_ref()).len() as u64).max(1),
    }
}

/// The rows of one SELECT and those it encloses; `role` is its select_type when it is not the
/// statement's top SELECT.
fn select_rows(ex: &Exec<'_>, q: &Query, role: Option<&str>, out: &mut Vec<Vec<Value>>) {
    let has_inner = !q.subqueries.is_empty()
        || q.sources
            .iter()
            .any(|s| matches!(s.kind, SourceKind::Derived(_)));
    let select_type = match (role, has_inner) {
        (Some(r), _) => r,
        (None, true) => "PRIMARY",
        (None, false) => "SIMPLE",
    };
    let mut derived = Vec::new();
    for (k, s) in q.sources.iter().enumerate() {
        let mut extra: Vec<&str> = Vec::new();
        let (table, kind, possible, key, key_len, refs, filtered) = match &s.kind {
            SourceKind::Base { table, access } => {
                let names = |ixs: &[usize]| {
                    (!ixs.is_empty()).then(|| {
                        ixs.iter()
                            .map(|&i| table.def().indexes()[i].name.clone())
                            .collect::<Vec<_>>()
                            .join(",")
                    })
                };
                let key = (access.kind != AccessType::All)
                    .then(|| table.def().indexes()[access.index].name.clone());
                let residual =
                    s.filter.is_some() || (k + 1 == q.sources.len() && q.post_filter.is_some());
                // MySQL leaves range conditions in the WHERE it checks per row.
                let rechecked = access.kind == AccessType::Range && s.full_filter.is_some();
                if (residual || rechecked) && access.kind != AccessType::Const {
                    extra.push("Using where");
                }
                if !matches!(access.kind, AccessType::All | AccessType::Const)
                    && reads_only_key(table, access.index, &s.needed)
                {
                    extra.push("Using index");
                }
                if access.reverse {
                    extra.push("Backward index scan");
                }
                if k > 0 && matches!(access.kind, AccessType::All | AccessType::Index) {
                    extra.push("Using join buffer (hash join)");
                }
                (
                    s.alias.clone(),
                    access.kind.name(),
                    names(&access.possible),
                    key,
                    (access.kind != AccessType::All).then(|| access.key_len.to_string()),
                    (!access.refs.is_empty()).then(|| access.refs.join(",")),
                    if residual { "10.00" } else { "100.00" },
                )
            }
            SourceKind::Derived(inner) => {
                derived.push(inner);
                if s.filter.is_some() {
                    extra.push("Using where");
                }
                (
                    format!("<derived{}>", inner.select_id),
                    "ALL",
                    None,
                    None,
                    None,
                    None,
                    "100.00",
                )
            }
            SourceKind::Virtual(v) => {
                if s.filter.is_some() {
                    extra.push("Using where");
                }
                (
                    v.name().to_string(),
                    "ALL",
                    None,
                    None,
                    None,
                    None,
                    "100.00",
                )
            }
        };
        if k == 0 {
            let grouped = q.agg.as_ref().is_some_and(|a| !a.group_by.is_empty());
            if grouped || q.distinct {
                extra.push("Using temporary");
            }
            if q.sort || (q.agg.is_some() && !q.order.is_empty() && grouped) {
                extra.push("Using filesort");
            }
        }
        out.push(vec![
            Value::UInt(q.select_id as u64),
            Value::str(select_type),
            Value::str(&table),
            Value::Null,
            Value::str(kind),
            opt(possible),
            opt(key),
            opt(key_len),
            opt(refs),
            Value::UInt(estimate(ex, s)),
            Value::str(filtered),
            opt((!extra.is_empty()).then(|| extra.join("; "))),
        ]);
    }
    for sq in &q.subqueries {
        let role = if sq.outer_refs.is_empty() {
            "SUBQUERY"
        } else {
            "DEPENDENT SUBQUERY"
        };
        select_rows(ex, sq, Some(role), out);
    }
    for d in derived {
        select_rows(ex, d, Some("DERIVED"), out);
    }
}

/// Executes EXPLAIN of a planned statement.
pub fn execute(st: &mut Context, body: &Body, params: &[Value]) -> SqlResult<Output> {
    let ex = Exec::new(st, params);
    let mut rows = Vec::new();
    match body {
        Body::Select(q) => select_rows(&ex, q, None, &mut rows),
        Body::Update(crate::exec::dml::Update { target, .. })
        | Body::Delete(crate::exec::dml::Delete { target, .. }) => {
            let q = Query {
                sources: vec![target.source.clone()],
                width: target.source.width,
                post_filter: None,
                agg: None,
                having: None,
                items: Vec::new(),
                columns: Vec::new(),
                fixed_columns: None,
                order: target.order.clone(),
                sort: target.sort,
                order_items: Vec::new(),
                movable: Vec::new(),
                distinct: false,
                limit: None,
                offset: None,
                lock: None,
                select_id: 1,
                outer_width: 0,
                outer_refs: Vec::new(),
                subqueries: Vec::new(),
            };
            select_rows(&ex, &q, None, &mut rows);
            if let Some(r) = rows.first_mut() {
                // A single-table UPDATE or DELETE reads its keys as a range and checks its
                // WHERE per row, as MySQL's EXPLAIN shows it.
                let keyed = matches!(
                    &target.source.kind,
                    SourceKind::Base { access, .. } if !matches!(access.kind, AccessType::All | AccessType::Index)
                );
                if keyed {
                    r[4] = Value::str("range");
                    r[8] = Value::Null;
                    if target.source.full_filter.is_some() {
                        r[11] = Value::str(&match &r[11] {
                            Value::Bytes(b) if !b.starts_with(b"Using where") => {
                                format!("Using where; {}", String::from_utf8_lossy(b))
                            }
                            Value::Bytes(b) => String::from_utf8_lossy(b).into_owned(),
                            _ => "Using where".to_string(),
                        });
                    }
                }
                r[1] = Value::str(if matches!(body, Body::Update(_)) {
                    "UPDATE"
                } else {
                    "DELETE"
                });
            }
        }
        Body::Insert(i) => rows.push(vec![
            Value::UInt(1),
            Value::str("INSERT"),
            Value::str(i.table.name()),
            Value::Null,
            Value::str("ALL"),
            Value::Null,
            Value::Null,
            Value::Null,
            Value::Null,
            Value::Null,
            Value::Null,
            Value::Null,
        ]),
        _ => {}
    }
    Ok(Output::Rows(ResultSet::text(&NAMES, rows)))
}
