//! The system databases' own tables in the catalogue, as MySQL lists them: information_schema
//! views, performance_schema tables and sys views in `information_schema.TABLES` and
//! `COLUMNS`, and in `SHOW [FULL] TABLES FROM` each system database.

use mysql::prelude::*;
use tpbed_tests::TestServer;

#[test]
fn system_tables_are_listed_with_their_kind_and_columns() {
    let srv = TestServer::start(&["--thread-handling=pool-of-threads"]);
    let mut c = srv.connect();
    let kinds: Vec<(String, String, Option<String>)> = c
        .query(
            "SELECT TABLE_SCHEMA, TABLE_TYPE, ENGINE FROM information_schema.TABLES \
             WHERE TABLE_NAME IN ('COLUMNS', 'data_locks', 'tp_thread_group_state', \
             'innodb_lock_waits') ORDER BY TABLE_SCHEMA, TABLE_NAME",
        )
        .unwrap();
    let kind = |db: &str, t: &str, e: Option<&str>| (db.into(), t.into(), e.map(String::from));
    assert_eq!(
        kinds,
        [
            kind("information_schema", "SYSTEM VIEW", None),
            kind(
                "performance_schema",
                "BASE TABLE",
                Some("PERFORMANCE_SCHEMA")
            ),
            kind(
                "performance_schema",
                "BASE TABLE",
                Some("PERFORMANCE_SCHEMA")
            ),
            kind("sys", "VIEW", None),
        ]
    );
    let cols: Vec<(String, String, u64)> = c
        .query(
            "SELECT COLUMN_NAME, COLUMN_TYPE, ORDINAL_POSITION FROM information_schema.COLUMNS \
             WHERE TABLE_SCHEMA = 'performance_schema' AND TABLE_NAME = 'data_locks' \
             AND COLUMN_NAME IN ('ENGINE', 'THREAD_ID', 'LOCK_MODE') ORDER BY ORDINAL_POSITION",
        )
        .unwrap();
    let names: Vec<&str> = cols.iter().map(|(n, _, _)| n.as_str()).collect();
    assert_eq!(names, ["ENGINE", "THREAD_ID", "LOCK_MODE"]);
    assert_eq!(cols[0].1, "varchar(256)");
    assert_eq!(cols[1].1, "bigint unsigned");
    // Every column of every listed table is in COLUMNS.
    let missing: u64 = c
        .query_first(
            "SELECT COUNT(*) FROM information_schema.TABLES t LEFT JOIN \
             information_schema.COLUMNS c ON c.TABLE_SCHEMA = t.TABLE_SCHEMA \
             AND c.TABLE_NAME = t.TABLE_NAME WHERE c.COLUMN_NAME IS NULL",
        )
        .unwrap()
        .unwrap();
    assert_eq!(missing, 0);
    let full: Vec<(String, String)> = c
        .query("SHOW FULL TABLES FROM information_schema LIKE 'PROCESS%'")
        .unwrap();
    assert_eq!(
        full,
        [("PROCESSLIST".to_string(), "SYSTEM VIEW".to_string())]
    );
    let sys: Vec<String> = c.query("SHOW TABLES FROM sys").unwrap();
    assert_eq!(sys, ["innodb_lock_waits"]);
}
