//! The `mysql` schema's tables that monitoring and dump tools read: `mysql.user`, one row
//! per account with MySQL 8.0's columns, filled from tpbed's accounts; the grant tables
//! `mysql.db` and `mysql.tables_priv` (in [`grant_tables`](super::grant_tables)); and the log tables
//! `general_log` and `slow_log`, empty as MySQL leaves them under `log_output=FILE` (tpbed
//! writes its logs to files only), with MySQL's definitions for `SHOW CREATE TABLE`.

use crate::accounts::privilege::STATIC_PRIVILEGES;
use crate::accounts::PrivSet;
use crate::introspection::pfs_empty_tables::EmptyTable;
use crate::introspection::vtables::{VType, VirtualTable};
use crate::introspection::ServerView;
use crate::value::Value;

/// The `mysql` schema's tables.
pub static TABLES: [&dyn VirtualTable; 5] = [
    &User,
    &super::grant_tables::Db,
    &super::grant_tables::TablesPriv,
    &GENERAL_LOG,
    &SLOW_LOG,
];

/// `mysql.user`.
#[derive(Debug)]
pub struct User;

/// A log table: an [`EmptyTable`] with MySQL's definition, engine CSV.
#[derive(Debug)]
pub struct LogTable {
    table: EmptyTable,
    create: &'static str,
}

impl VirtualTable for User {
    fn name(&self) -> &'static str {
        "user"
    }
    fn columns(&self) -> &'static [(&'static str, VType)] {
        use VType::*;
        &[
            ("Host", Text),
            ("User", Text),
            ("Select_priv", Text),
            ("Insert_priv", Text),
            ("Update_priv", Text),
            ("Delete_priv", Text),
            ("Create_priv", Text),
            ("Drop_priv", Text),
            ("Reload_priv", Text),
            ("Shutdown_priv", Text),
            ("Process_priv", Text),
            ("File_priv", Text),
            ("Grant_priv", Text),
            ("References_priv", Text),
            ("Index_priv", Text),
            ("Alter_priv", Text),
            ("Show_db_priv", Text),
            ("Super_priv", Text),
            ("Create_tmp_table_priv", Text),
            ("Lock_tables_priv", Text),
            ("Execute_priv", Text),
            ("Repl_slave_priv", Text),
            ("Repl_client_priv", Text),
            ("Create_view_priv", Text),
            ("Show_view_priv", Text),
            ("Create_routine_priv", Text),
            ("Alter_routine_priv", Text),
            ("Create_user_priv", Text),
            ("Event_priv", Text),
            ("Trigger_priv", Text),
            ("Create_tablespace_priv", Text),
            ("ssl_type", Text),
            ("ssl_cipher", Text),
            ("x509_issuer", Text),
            ("x509_subject", Text),
            ("max_questions", UInt),
            ("max_updates", UInt),
            ("max_connections", UInt),
            ("max_user_connections", UInt),
            ("plugin", Text),
            ("authentication_string", Text),
            ("password_expired", Text),
            ("password_last_changed", Text),
            ("password_lifetime", UInt),
            ("account_locked", Text),
            ("Create_role_priv", Text),
            ("Drop_role_priv", Text),
            ("Password_reuse_history", UInt),
            ("Password_reuse_time", UInt),
            ("Password_require_current", Text),
            ("User_attributes", Text),
        ]
    }
    fn rows(&self, server: &dyn ServerView) -> Vec<Vec<Value>> {
        let yes_no = |b: bool| Value::str(if b { "Y" } else { "N" });
        server
            .accounts()
            .list()
            .iter()
            .map(|a| {
                let mut row = vec![Value::str(&a.host), Value::str(&a.user)];
                let global = a.privileges().global;
                row.extend(
                    STATIC_PRIVILEGES[..29]
                        .iter()
                        .map(|(p, _, _)| yes_no(global.contains(*p))),
                );
                row.extend([
                    Value::str(""),
                    Value::str(""),
                    Value::str(""),
                    Value::str(""),
                ]);
                row.extend([0, 0, 0, 0].map(Value::UInt));
                row.extend([
                    Value::str(a.plugin.name()),
                    Value::str(&a.auth_string),
                    yes_no(false),
                    Value::Null,
                    Value::Null,
                    yes_no(false),
                    yes_no(global.contains(PrivSet::CREATE_ROLE)),
                    yes_no(global.contains(PrivSet::DROP_ROLE)),
                    Value::Null,
                    Value::Null,
                    Value::Null,
                    Value::Null,
                ]);
                row
            })
            .collect()
    }
}

/// `mysql.general_log`.
pub static GENERAL_LOG: LogTable = LogTable {
    table: EmptyTable::new(
        "general_log",
        &[
            ("event_time", VType::Text),
            ("user_host", VType::Text),
            ("thread_id", VType::UInt),
            ("server_id", VType::UInt),
            ("command_type", VType::Text),
            ("argument", VType::Text),
        ],
    ),
    create: "CREATE TABLE `general_log` (\n  \
             `event_time` timestamp(6) NOT NULL DEFAULT CURRENT_TIMESTAMP(6) ON UPDATE CURRENT_TIMESTAMP(6),\n  \
             `user_host` mediumtext NOT NULL,\n  \
             `thread_id` bigint unsigned NOT NULL,\n  \
             `server_id` int unsigned NOT NULL,\n  \
             `command_type` varchar(64) NOT NULL,\n  \
             `argument` mediumblob NOT NULL\n\
             ) ENGINE=CSV DEFAULT CHARSET=utf8mb3 COMMENT='General log'",
};

/// `mysql.slow_log`.
pub static SLOW_LOG: LogTable = LogTable {
    table: EmptyTable::new(
        "slow_log",
        &[
            ("start_time", VType::Text),
            ("user_host", VType::Text),
            ("query_time", VType::Text),
            ("lock_time", VType::Text),
            ("rows_sent", VType::UInt),
            ("rows_examined", VType::UInt),
            ("db", VType::Text),
            ("last_insert_id", VType::UInt),
            ("insert_id", VType::UInt),
            ("server_id", VType::UInt),
            ("sql_text", VType::Text),
            ("thread_id", VType::UInt),
        ],
    ),
    create: "CREATE TABLE `slow_log` (\n  \
             `start_time` timestamp(6) NOT NULL DEFAULT CURRENT_TIMESTAMP(6) ON UPDATE CURRENT_TIMESTAMP(6),\n  \
             `user_host` mediumtext NOT NULL,\n  \
             `query_time` time(6) NOT NULL,\n  \
             `lock_time` time(6) NOT NULL,\n  \
             `rows_sent` int NOT NULL,\n  \
             `rows_examined` int NOT NULL,\n  \
             `db` varchar(512) NOT NULL,\n  \
             `last_insert_id` int NOT NULL,\n  \
             `insert_id` int NOT NULL,\n  \
             `server_id` int unsigned NOT NULL,\n  \
             `sql_text` mediumblob NOT NULL,\n  \
             `thread_id` bigint unsigned NOT NULL\n\
             ) ENGINE=CSV DEFAULT CHARSET=utf8mb3 COMMENT='Slow log'",
};

impl VirtualTable for LogTable {
    fn name(&self) -> &'static str {
        self.table.name()
    }
    fn columns(&self) -> &'static [(&'static str, VType)] {
        self.table.columns()
    }
    fn rows(&self, server: &dyn ServerView) -> Vec<Vec<Value>> {
        self.table.rows(server)
    }
    fn engine(&self) -> Option<&'static str> {
        Some("CSV")
    }
    fn create_statement(&self) -> Option<&'static str> {
        Some(self.create)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_privilege_column_is_a_column() {
        let names: Vec<&str> = User.columns().iter().map(|(n, _)| *n).collect();
        for (i, (_, _, column)) in STATIC_PRIVILEGES[..29].iter().enumerate() {
            assert_eq!(names[i + 2], *column);
        }
        assert_eq!(names.len(), 2 + 29 + 8 + 12);
        assert_eq!(names[2 + 29 + 8 + 6], "Create_role_priv");
    }
}
