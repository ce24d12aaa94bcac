//! `information_schema.SCHEMATA` (every database, utf8mb4), and `ROUTINES` and `TRIGGERS`
//! with MySQL 8.0's columns and no rows: tpbed has no stored routines or triggers.

use crate::core::SYSTEM_DATABASES;
use crate::introspection::pfs_empty_tables::EmptyTable;
use crate::introspection::vtables::{VType, VirtualTable};
use crate::introspection::ServerView;
use crate::value::Value;

/// `information_schema.ROUTINES`.
pub const ROUTINES: EmptyTable = EmptyTable::new(
    "ROUTINES",
    &[
        ("SPECIFIC_NAME", VType::Text),
        ("ROUTINE_CATALOG", VType::Text),
        ("ROUTINE_SCHEMA", VType::Text),
        ("ROUTINE_NAME", VType::Text),
        ("ROUTINE_TYPE", VType::Text),
        ("DATA_TYPE", VType::Text),
        ("CHARACTER_MAXIMUM_LENGTH", VType::UInt),
        ("CHARACTER_OCTET_LENGTH", VType::UInt),
        ("NUMERIC_PRECISION", VType::UInt),
        ("NUMERIC_SCALE", VType::UInt),
        ("DATETIME_PRECISION", VType::UInt),
        ("CHARACTER_SET_NAME", VType::Text),
        ("COLLATION_NAME", VType::Text),
        ("DTD_IDENTIFIER", VType::Text),
        ("ROUTINE_BODY", VType::Text),
        ("ROUTINE_DEFINITION", VType::Text),
        ("EXTERNAL_NAME", VType::Text),
        ("EXTERNAL_LANGUAGE", VType::Text),
        ("PARAMETER_STYLE", VType::Text),
        ("IS_DETERMINISTIC", VType::Text),
        ("SQL_DATA_ACCESS", VType::Text),
        ("SQL_PATH", VType::Text),
        ("SECURITY_TYPE", VType::Text),
        ("CREATED", VType::Text),
        ("LAST_ALTERED", VType::Text),
        ("SQL_MODE", VType::Text),
        ("ROUTINE_COMMENT", VType::Text),
        ("DEFINER", VType::Text),
        ("CHARACTER_SET_CLIENT", VType::Text),
        ("COLLATION_CONNECTION", VType::Text),
        ("DATABASE_COLLATION", VType::Text),
    ],
);

/// `information_schema.TRIGGERS`.
pub const TRIGGERS: EmptyTable = EmptyTable::new(
    "TRIGGERS",
    &[
        ("TRIGGER_CATALOG", VType::Text),
        ("TRIGGER_SCHEMA", VType::Text),
        ("TRIGGER_NAME", VType::Text),
        ("EVENT_MANIPULATION", VType::Text),
        ("EVENT_OBJECT_CATALOG", VType::Text),
        ("EVENT_OBJECT_SCHEMA", VType::Text),
        ("EVENT_OBJECT_TABLE", VType::Text),
        ("ACTION_ORDER", VType::UInt),
        ("ACTION_CONDITION", VType::Text),
        ("ACTION_STATEMENT", VType::Text),
        ("ACTION_ORIENTATION", VType::Text),
        ("ACTION_TIMING", VType::Text),
        ("ACTION_REFERENCE_OLD_TABLE", VType::Text),
        ("ACTION_REFERENCE_NEW_TABLE", VType::Text),
        ("ACTION_REFERENCE_OLD_ROW", VType::Text),
        ("ACTION_REFERENCE_NEW_ROW", VType::Text),
        ("CREATED", VType::Text),
        ("SQL_MODE", VType::Text),
        ("DEFINER", VType::Text),
        ("CHARACTER_SET_CLIENT", VType::Text),
        ("COLLATION_CONNECTION", VType::Text),
        ("DATABASE_COLLATION", VType::Text),
    ],
);

/// `information_schema.SCHEMATA`.
#[derive(Debug)]
pub struct Schemata;

impl VirtualTable for Schemata {
    fn name(&self) -> &'static str {
        "SCHEMATA"
    }
    fn columns(&self) -> &'static [(&'static str, VType)] {
        use VType::*;
        &[
            ("CATALOG_NAME", Text),
            ("SCHEMA_NAME", Text),
            ("DEFAULT_CHARACTER_SET_NAME", Text),
            ("DEFAULT_COLLATION_NAME", Text),
            ("SQL_PATH", Text),
            ("DEFAULT_ENCRYPTION", Text),
        ]
    }
    fn rows(&self, server: &dyn ServerView) -> Vec<Vec<Value>> {
        let mut names: Vec<String> = SYSTEM_DATABASES.iter().map(|s| s.to_string()).collect();
        names.extend(server.catalog().engine.database_names());
        names.sort();
        names
            .iter()
            .map(|db| {
                vec![
                    Value::str("def"),
                    Value::str(db),
                    Value::str("utf8mb4"),
                    Value::str("utf8mb4_0900_ai_ci"),
                    Value::Null,
                    Value::str("NO"),
                ]
            })
            .collect()
    }
}
