//! The system databases' own tables as `information_schema.TABLES` and `COLUMNS` list them
//! (MySQL lists its information_schema views, performance_schema tables and sys views
//! there too, so tools that walk the catalogue find them), and the kind of table each is. A
//! text column is a `varchar` of [`TEXT_CHARS`] in utf8mb4, an integer one a `bigint
//! unsigned`, as the rows are sent.

use crate::core::SYSTEM_DATABASES;
use crate::introspection::vtables::{tables_of, VType, VirtualTable, TEXT_CHARS};
use crate::introspection::ServerView;
use crate::value::Value;

fn s(v: &str) -> Value {
    Value::str(v)
}

/// Each virtual table with its database.
fn each(server: &dyn ServerView) -> Vec<(&'static str, &'static dyn VirtualTable)> {
    SYSTEM_DATABASES
        .iter()
        .flat_map(|db| tables_of(server, db).into_iter().map(move |t| (*db, t)))
        .collect()
}

/// The TABLE_TYPE and ENGINE of the system database `db`'s tables: information_schema's
/// are `SYSTEM VIEW`s, performance_schema's `BASE TABLE`s of engine `PERFORMANCE_SCHEMA`,
/// sys's `VIEW`s.
pub fn kind_of(db: &str) -> (&'static str, Option<&'static str>) {
    if db.eq_ignore_ascii_case("information_schema") {
        ("SYSTEM VIEW", None)
    } else if db.eq_ignore_ascii_case("performance_schema") {
        ("BASE TABLE", Some("PERFORMANCE_SCHEMA"))
    } else {
        ("VIEW", None)
    }
}

/// `information_schema.TABLES` rows.
pub fn tables(server: &dyn ServerView) -> Vec<Vec<Value>> {
    each(server)
        .into_iter()
        .map(|(db, t)| {
            let (kind, engine) = t.engine().map_or(kind_of(db), |e| ("BASE TABLE", Some(e)));
            let mut row = vec![s("def"), s(db), s(t.name()), s(kind)];
            row.push(engine.map_or(Value::Null, s));
            row.push(Value::UInt(10));
            row.extend(std::iter::repeat_n(Value::Null, 11));
            row.push(engine.map_or(Value::Null, |_| s("utf8mb4_0900_ai_ci")));
            row.push(Value::Null);
            row.push(s(""));
            row.push(s(""));
            row
        })
        .collect()
}

/// `information_schema.COLUMNS` rows, one per column of each virtual table.
pub fn columns(server: &dyn ServerView) -> Vec<Vec<Value>> {
    let mut rows = Vec::new();
    for (db, t) in each(server) {
        for (i, (name, ty)) in t.columns().iter().enumerate() {
            let text = matches!(ty, VType::Text);
            let mut row = vec![
                s("def"),
                s(db),
                s(t.name()),
                s(name),
                Value::UInt(i as u64 + 1),
                Value::Null,
                s("YES"),
            ];
            if text {
                row.extend([
                    s("varchar"),
                    Value::UInt(TEXT_CHARS.into()),
                    Value::UInt(u64::from(TEXT_CHARS) * 4),
                    Value::Null,
                    Value::Null,
                    Value::Null,
                    s("utf8mb4"),
                    s("utf8mb4_0900_ai_ci"),
                    s(&format!("varchar({TEXT_CHARS})")),
                ]);
            } else {
                row.extend([
                    s("bigint"),
                    Value::Null,
                    Value::Null,
                    Value::UInt(20),
                    Value::UInt(0),
                    Value::Null,
                    Value::Null,
                    Value::Null,
                    s("bigint unsigned"),
                ]);
            }
            row.extend([s(""), s(""), s("select"), s(""), s(""), Value::Null]);
            rows.push(row);
        }
    }
    rows
}
