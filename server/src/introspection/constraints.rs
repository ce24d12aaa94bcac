//! `information_schema.KEY_COLUMN_USAGE` (a row per column of each PRIMARY KEY, UNIQUE key
//! and FOREIGN KEY) and `information_schema.REFERENTIAL_CONSTRAINTS` (a row per FOREIGN
//! KEY), as MySQL fills them.

use crate::engine::{IndexKind, ReferentialAction};
use crate::introspection::vtables::{each_table, VType, VirtualTable};
use crate::introspection::ServerView;
use crate::value::Value;

fn s(v: &str) -> Value {
    Value::str(v)
}

/// `information_schema.KEY_COLUMN_USAGE`.
#[derive(Debug)]
pub struct KeyColumnUsage;

impl VirtualTable for KeyColumnUsage {
    fn name(&self) -> &'static str {
        "KEY_COLUMN_USAGE"
    }
    fn columns(&self) -> &'static [(&'static str, VType)] {
        use VType::*;
        &[
            ("CONSTRAINT_CATALOG", Text),
            ("CONSTRAINT_SCHEMA", Text),
            ("CONSTRAINT_NAME", Text),
            ("TABLE_CATALOG", Text),
            ("TABLE_SCHEMA", Text),
            ("TABLE_NAME", Text),
            ("COLUMN_NAME", Text),
            ("ORDINAL_POSITION", UInt),
            ("POSITION_IN_UNIQUE_CONSTRAINT", UInt),
            ("REFERENCED_TABLE_SCHEMA", Text),
            ("REFERENCED_TABLE_NAME", Text),
            ("REFERENCED_COLUMN_NAME", Text),
        ]
    }
    fn rows(&self, server: &dyn ServerView) -> Vec<Vec<Value>> {
        let mut rows = Vec::new();
        each_table(&server.catalog().engine, |db, t| {
            let def = t.def();
            let row = |constraint: &str, column: &str, i: usize| {
                vec![
                    s("def"),
                    s(db),
                    s(constraint),
                    s("def"),
                    s(db),
                    s(t.name()),
                    s(column),
                    Value::UInt(i as u64 + 1),
                ]
            };
            for ix in def.indexes() {
                if matches!(ix.kind, IndexKind::Primary | IndexKind::Unique) {
                    for (i, &c) in ix.columns.iter().enumerate() {
                        let mut r = row(&ix.name, &def.columns()[c].name, i);
                        r.extend([Value::Null, Value::Null, Value::Null, Value::Null]);
                        rows.push(r);
                    }
                }
            }
            for fk in def.foreign_keys() {
                for (i, (c, p)) in fk.columns.iter().zip(&fk.parent_columns).enumerate() {
                    let mut r = row(&fk.name, c, i);
                    r.extend([
                        Value::UInt(i as u64 + 1),
                        s(&fk.parent_db),
                        s(&fk.parent_table),
                        s(p),
                    ]);
                    rows.push(r);
                }
            }
        });
        rows
    }
}

/// `information_schema.REFERENTIAL_CONSTRAINTS`.
#[derive(Debug)]
pub struct ReferentialConstraints;

impl VirtualTable for ReferentialConstraints {
    fn name(&self) -> &'static str {
        "REFERENTIAL_CONSTRAINTS"
    }
    fn columns(&self) -> &'static [(&'static str, VType)] {
        use VType::*;
        &[
            ("CONSTRAINT_CATALOG", Text),
            ("CONSTRAINT_SCHEMA", Text),
            ("CONSTRAINT_NAME", Text),
            ("UNIQUE_CONSTRAINT_CATALOG", Text),
            ("UNIQUE_CONSTRAINT_SCHEMA", Text),
            ("UNIQUE_CONSTRAINT_NAME", Text),
            ("MATCH_OPTION", Text),
            ("UPDATE_RULE", Text),
            ("DELETE_RULE", Text),
            ("TABLE_NAME", Text),
            ("REFERENCED_TABLE_NAME", Text),
        ]
    }
    fn rows(&self, server: &dyn ServerView) -> Vec<Vec<Value>> {
        let cat = &server.catalog().engine;
        let rule =
            |a: Option<ReferentialAction>| s(a.unwrap_or(ReferentialAction::NoAction).as_str());
        let mut rows = Vec::new();
        each_table(cat, |db, t| {
            for fk in t.def().foreign_keys() {
                // The parent's unique key over the referenced columns (NULL if none).
                let unique = cat
                    .table(&fk.parent_db, &fk.parent_table)
                    .ok()
                    .and_then(|p| {
                        let def = p.def();
                        let cols: Option<Vec<usize>> = fk
                            .parent_columns
                            .iter()
                            .map(|c| def.column_index(c))
                            .collect();
                        let cols = cols?;
                        def.indexes()
                            .iter()
                            .find(|ix| {
                                matches!(ix.kind, IndexKind::Primary | IndexKind::Unique)
                                    && ix.columns == cols
                            })
                            .map(|ix| s(&ix.name))
                    })
                    .unwrap_or(Value::Null);
                rows.push(vec![
                    s("def"),
                    s(db),
                    s(&fk.name),
                    s("def"),
                    s(&fk.parent_db),
                    unique,
                    s("NONE"),
                    rule(fk.on_update),
                    rule(fk.on_delete),
                    s(t.name()),
                    s(&fk.parent_table),
                ]);
            }
        });
        rows
    }
}
