//! `SHOW ENGINES` and `SHOW PLUGINS`, with MySQL's columns: the engines tpbed has (InnoDB,
//! its only table engine, and PERFORMANCE_SCHEMA) and the plugins
//! `information_schema.PLUGINS` lists.

use crate::introspection::vtables::VirtualTable;
use crate::introspection::ServerView;
use crate::value::Value;

/// `SHOW ENGINES`'s columns.
pub const ENGINE_COLUMNS: &[&str] = &[
    "Engine",
    "Support",
    "Comment",
    "Transactions",
    "XA",
    "Savepoints",
];

/// `SHOW ENGINES`'s rows.
pub fn engine_rows() -> Vec<Vec<Value>> {
    [
        [
            "InnoDB",
            "DEFAULT",
            "Supports transactions, row-level locking, and foreign keys",
            "YES",
            "NO",
            "YES",
        ],
        [
            "PERFORMANCE_SCHEMA",
            "YES",
            "Performance Schema",
            "NO",
            "NO",
            "NO",
        ],
    ]
    .iter()
    .map(|r| r.iter().map(|v| Value::str(v)).collect())
    .collect()
}

/// `SHOW PLUGINS`'s columns.
pub const PLUGIN_COLUMNS: &[&str] = &["Name", "Status", "Type", "Library", "License"];

/// `SHOW PLUGINS`'s rows: name, status, type, library and license of each PLUGINS row.
pub fn plugin_rows(server: &dyn ServerView) -> Vec<Vec<Value>> {
    let table = crate::introspection::pool_tables::Plugins;
    let index = |name: &str| {
        table
            .columns()
            .iter()
            .position(|(c, _)| *c == name)
            .unwrap_or(0)
    };
    let picks = [
        index("PLUGIN_NAME"),
        index("PLUGIN_STATUS"),
        index("PLUGIN_TYPE"),
        index("PLUGIN_LIBRARY"),
        index("PLUGIN_LICENSE"),
    ];
    table
        .rows(server)
        .into_iter()
        .map(|r| picks.iter().map(|&i| r[i].clone()).collect())
        .collect()
}
