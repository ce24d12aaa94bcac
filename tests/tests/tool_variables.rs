//! Variables, status and SHOW forms monitoring tools read, as MySQL 8.0 has them: MySQL
//! start-up options tpbed does not model are accepted with a warning, `optimizer_switch`,
//! the table counters, and SHOW PROCESSLIST's integer columns.

use mysql::consts::ColumnType;
use mysql::prelude::*;
use tpbed_tests::TestServer;

fn status(c: &mut mysql::Conn, name: &str) -> String {
    let row: Option<(String, String)> = c
        .query_first(format!("SHOW GLOBAL STATUS LIKE '{name}'"))
        .unwrap();
    row.unwrap_or_else(|| panic!("no status {name}")).1
}

#[test]
fn mysql_options_tpbed_does_not_model_are_accepted_with_a_warning() {
    let srv = TestServer::start(&["--innodb-log-file-size=48M", "--binlog_format=ROW"]);
    for option in ["innodb_log_file_size", "binlog_format"] {
        assert!(
            srv.log_lines().iter().any(|l| l.contains("[Warning]")
                && l.contains(&format!(
                    "'{option}' is a MySQL option tpbed does not model"
                ))),
            "{:?}",
            srv.log_lines()
        );
    }
    let mut c = srv.connect();
    let switch: String = c.query_first("SELECT @@optimizer_switch").unwrap().unwrap();
    assert!(switch.starts_with("index_merge=on,"), "{switch}");
    assert!(switch.contains(",hash_join=on,"), "{switch}");
}

#[test]
fn table_counters_and_zero_status_are_shown() {
    let srv = TestServer::start(&[]);
    let mut c = srv.connect();
    assert_eq!(status(&mut c, "Open_tables"), "0");
    c.query_drop("CREATE DATABASE s").unwrap();
    c.query_drop("CREATE TABLE s.a (id INT PRIMARY KEY)")
        .unwrap();
    c.query_drop("CREATE TABLE s.b (id INT PRIMARY KEY)")
        .unwrap();
    assert_eq!(status(&mut c, "Open_tables"), "2");
    assert_eq!(status(&mut c, "Opened_tables"), "2");
    c.query_drop("DROP TABLE s.b").unwrap();
    assert_eq!(status(&mut c, "Open_tables"), "1");
    assert_eq!(status(&mut c, "Com_prepare_sql"), "0");
    let before: u64 = status(&mut c, "Flush_commands").parse().unwrap();
    c.query_drop("FLUSH STATUS").unwrap();
    let after: u64 = status(&mut c, "Flush_commands").parse().unwrap();
    assert_eq!(after, before + 1);
}

#[test]
fn show_processlist_sends_id_and_time_as_integers() {
    let srv = TestServer::start(&[]);
    let mut c = srv.connect();
    let id = c.connection_id();
    let result = c.query_iter("SHOW PROCESSLIST").unwrap();
    let types: Vec<(String, ColumnType)> = result
        .columns()
        .as_ref()
        .iter()
        .map(|col| (col.name_str().into_owned(), col.column_type()))
        .collect();
    let rows: Vec<mysql::Row> = result.map(Result::unwrap).collect();
    assert_eq!(types[0], ("Id".into(), ColumnType::MYSQL_TYPE_LONGLONG));
    assert_eq!(types[5], ("Time".into(), ColumnType::MYSQL_TYPE_LONGLONG));
    assert_eq!(types[1].1, ColumnType::MYSQL_TYPE_VAR_STRING);
    let mine = rows
        .iter()
        .find(|r| r.get::<u32, _>(0) == Some(id))
        .expect("the session's own row");
    assert!(mine.get::<i64, _>(5).is_some());
}

#[test]
fn performance_schema_tables_tools_read_have_mysqls_columns() {
    let srv = TestServer::start(&[]);
    let mut c = srv.connect();
    for (table, columns, first, last) in [
        (
            "events_waits_summary_global_by_event_name",
            6,
            "EVENT_NAME",
            "MAX_TIMER_WAIT",
        ),
        (
            "events_statements_summary_by_thread_by_event_name",
            30,
            "THREAD_ID",
            "COUNT_SECONDARY",
        ),
        ("setup_instruments", 7, "NAME", "DOCUMENTATION"),
        (
            "prepared_statements_instances",
            38,
            "OBJECT_INSTANCE_BEGIN",
            "COUNT_SECONDARY",
        ),
        (
            "table_io_waits_summary_by_index_usage",
            39,
            "OBJECT_TYPE",
            "MAX_TIMER_DELETE",
        ),
        (
            "table_lock_waits_summary_by_table",
            68,
            "OBJECT_TYPE",
            "MAX_TIMER_WRITE_EXTERNAL",
        ),
        (
            "file_summary_by_instance",
            25,
            "FILE_NAME",
            "MAX_TIMER_MISC",
        ),
    ] {
        let result = c
            .query_iter(format!("SELECT * FROM performance_schema.{table}"))
            .unwrap();
        let names: Vec<String> = result
            .columns()
            .as_ref()
            .iter()
            .map(|col| col.name_str().into_owned())
            .collect();
        let rows = result.count();
        assert_eq!(names.len(), columns, "{table}: {names:?}");
        assert_eq!(names[0], first, "{table}");
        assert_eq!(names[columns - 1], last, "{table}");
        assert_eq!(rows, 0, "{table} has no figures in tpbed");
    }
}

#[test]
fn engines_plugins_and_schema_tables_answer_with_mysqls_columns() {
    let srv = TestServer::start(&[]);
    let mut c = srv.connect();
    c.query_drop("CREATE DATABASE listed").unwrap();
    let engines: Vec<(String, String, String, String, String, String)> =
        c.query("SHOW ENGINES").unwrap();
    assert!(
        engines
            .iter()
            .any(|e| e.0 == "InnoDB" && e.1 == "DEFAULT" && e.3 == "YES"),
        "{engines:?}"
    );
    let plugins: Vec<(String, String, String, Option<String>, String)> =
        c.query("SHOW PLUGINS").unwrap();
    assert!(
        plugins
            .iter()
            .any(|p| p.0 == "InnoDB" && p.1 == "ACTIVE" && p.2 == "STORAGE ENGINE"),
        "{plugins:?}"
    );
    let schemas: Vec<(String, String)> = c
        .query("SELECT SCHEMA_NAME, DEFAULT_CHARACTER_SET_NAME FROM information_schema.SCHEMATA")
        .unwrap();
    assert!(
        schemas.contains(&("listed".into(), "utf8mb4".into())),
        "{schemas:?}"
    );
    assert!(schemas.iter().any(|s| s.0 == "information_schema"));
    for (table, first) in [
        ("ROUTINES", "SPECIFIC_NAME"),
        ("TRIGGERS", "TRIGGER_CATALOG"),
    ] {
        let result = c
            .query_iter(format!("SELECT * FROM information_schema.{table}"))
            .unwrap();
        let name = result.columns().as_ref()[0].name_str().into_owned();
        assert_eq!(name, first);
        assert_eq!(result.count(), 0, "{table}: tpbed has none");
    }
}
