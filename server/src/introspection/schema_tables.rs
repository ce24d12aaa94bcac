//! `information_schema.SCHEMATA` (every database with its default collation), `PARTITIONS`
//! (a row per table, none of them partitioned, with the table's sizes), and `ROUTINES`,
//! `TRIGGERS` and `FILES` with MySQL 8.0's columns and no rows: tpbed has no stored routines,
//! triggers or tablespace files.

use crate::core::SYSTEM_DATABASES;
use crate::introspection::describe;
use crate::introspection::pfs_empty_tables::EmptyTable;
use crate::introspection::table_sizes::TableSizes;
use crate::introspection::vtables::{each_table, VType, VirtualTable};
use crate::introspection::ServerView;
use crate::sql::collations::charset_of;
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
                let collation = describe::database_collation(&server.catalog().engine, db);
                vec![
                    Value::str("def"),
                    Value::str(db),
                    Value::str(charset_of(&collation)),
                    Value::str(&collation),
                    Value::Null,
                    Value::str("NO"),
                ]
            })
            .collect()
    }
}

/// `information_schema.FILES`.
pub const FILES: EmptyTable = EmptyTable::new(
    "FILES",
    &[
        ("FILE_ID", VType::UInt),
        ("FILE_NAME", VType::Text),
        ("FILE_TYPE", VType::Text),
        ("TABLESPACE_NAME", VType::Text),
        ("TABLE_CATALOG", VType::Text),
        ("TABLE_SCHEMA", VType::Text),
        ("TABLE_NAME", VType::Text),
        ("LOGFILE_GROUP_NAME", VType::Text),
        ("LOGFILE_GROUP_NUMBER", VType::UInt),
        ("ENGINE", VType::Text),
        ("FULLTEXT_KEYS", VType::Text),
        ("DELETED_ROWS", VType::UInt),
        ("UPDATE_COUNT", VType::UInt),
        ("FREE_EXTENTS", VType::UInt),
        ("TOTAL_EXTENTS", VType::UInt),
        ("EXTENT_SIZE", VType::UInt),
        ("INITIAL_SIZE", VType::UInt),
        ("MAXIMUM_SIZE", VType::UInt),
        ("AUTOEXTEND_SIZE", VType::UInt),
        ("CREATION_TIME", VType::Text),
        ("LAST_UPDATE_TIME", VType::Text),
        ("LAST_ACCESS_TIME", VType::Text),
        ("RECOVER_TIME", VType::UInt),
        ("TRANSACTION_COUNTER", VType::UInt),
        ("VERSION", VType::UInt),
        ("ROW_FORMAT", VType::Text),
        ("TABLE_ROWS", VType::UInt),
        ("AVG_ROW_LENGTH", VType::UInt),
        ("DATA_LENGTH", VType::UInt),
        ("MAX_DATA_LENGTH", VType::UInt),
        ("INDEX_LENGTH", VType::UInt),
        ("DATA_FREE", VType::UInt),
        ("CREATE_TIME", VType::Text),
        ("UPDATE_TIME", VType::Text),
        ("CHECK_TIME", VType::Text),
        ("CHECKSUM", VType::UInt),
        ("STATUS", VType::Text),
        ("EXTRA", VType::Text),
    ],
);

/// `information_schema.PARTITIONS`: as MySQL lists a table that is not partitioned, one row
/// per table with its partition columns NULL.
#[derive(Debug)]
pub struct Partitions;

impl VirtualTable for Partitions {
    fn name(&self) -> &'static str {
        "PARTITIONS"
    }
    fn columns(&self) -> &'static [(&'static str, VType)] {
        &[
            ("TABLE_CATALOG", VType::Text),
            ("TABLE_SCHEMA", VType::Text),
            ("TABLE_NAME", VType::Text),
            ("PARTITION_NAME", VType::Text),
            ("SUBPARTITION_NAME", VType::Text),
            ("PARTITION_ORDINAL_POSITION", VType::UInt),
            ("SUBPARTITION_ORDINAL_POSITION", VType::UInt),
            ("PARTITION_METHOD", VType::Text),
            ("SUBPARTITION_METHOD", VType::Text),
            ("PARTITION_EXPRESSION", VType::Text),
            ("SUBPARTITION_EXPRESSION", VType::Text),
            ("PARTITION_DESCRIPTION", VType::Text),
            ("TABLE_ROWS", VType::UInt),
            ("AVG_ROW_LENGTH", VType::UInt),
            ("DATA_LENGTH", VType::UInt),
            ("MAX_DATA_LENGTH", VType::UInt),
            ("INDEX_LENGTH", VType::UInt),
            ("DATA_FREE", VType::UInt),
            ("CREATE_TIME", VType::Text),
            ("UPDATE_TIME", VType::Text),
            ("CHECK_TIME", VType::Text),
            ("CHECKSUM", VType::UInt),
            ("PARTITION_COMMENT", VType::Text),
            ("NODEGROUP", VType::Text),
            ("TABLESPACE_NAME", VType::Text),
        ]
    }
    fn rows(&self, server: &dyn ServerView) -> Vec<Vec<Value>> {
        let mut rows = Vec::new();
        each_table(&server.catalog().engine, |db, t| {
            let z = TableSizes::read(t);
            let mut row = vec![Value::str("def"), Value::str(db), Value::str(t.name())];
            row.extend(std::iter::repeat_n(Value::Null, 9));
            let sizes = [
                z.rows,
                z.avg_row_length,
                z.data_length,
                0,
                z.index_length,
                z.data_free,
            ];
            row.extend(sizes.map(Value::UInt));
            row.extend(std::iter::repeat_n(Value::Null, 4));
            row.extend([Value::str(""), Value::Null, Value::Null]);
            rows.push(row);
        });
        rows
    }
}
