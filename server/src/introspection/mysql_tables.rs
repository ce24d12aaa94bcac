//! The `mysql` schema's tables that monitoring and dump tools read: `mysql.user`, one row
//! per account with MySQL 8.0's columns, filled from tpbed's accounts, and the log tables
//! `general_log` and `slow_log`, empty as MySQL leaves them under `log_output=FILE` (tpbed
//! writes its logs to files only), with MySQL's definitions for `SHOW CREATE TABLE`.

use crate::accounts::{Account, AuthPlugin, Privilege};
use crate::introspection::pfs_empty_tables::EmptyTable;
use crate::introspection::vtables::{VType, VirtualTable};
use crate::introspection::ServerView;
use crate::value::Value;

/// The `*_priv` columns in MySQL's order, each with the privilege that sets it: a static
/// privilege tpbed tracks by name, else every static privilege (`ALL`).
const PRIVILEGE_COLUMNS: &[(&str, Privilege)] = &[
    ("Select_priv", Privilege::AllStatic),
    ("Insert_priv", Privilege::AllStatic),
    ("Update_priv", Privilege::AllStatic),
    ("Delete_priv", Privilege::AllStatic),
    ("Create_priv", Privilege::AllStatic),
    ("Drop_priv", Privilege::AllStatic),
    ("Reload_priv", Privilege::AllStatic),
    ("Shutdown_priv", Privilege::Shutdown),
    ("Process_priv", Privilege::Process),
    ("File_priv", Privilege::AllStatic),
    ("Grant_priv", Privilege::AllStatic),
    ("References_priv", Privilege::AllStatic),
    ("Index_priv", Privilege::AllStatic),
    ("Alter_priv", Privilege::AllStatic),
    ("Show_db_priv", Privilege::AllStatic),
    ("Super_priv", Privilege::Super),
    ("Create_tmp_table_priv", Privilege::AllStatic),
    ("Lock_tables_priv", Privilege::AllStatic),
    ("Execute_priv", Privilege::AllStatic),
    ("Repl_slave_priv", Privilege::AllStatic),
    ("Repl_client_priv", Privilege::ReplicationClient),
    ("Create_view_priv", Privilege::AllStatic),
    ("Show_view_priv", Privilege::AllStatic),
    ("Create_routine_priv", Privilege::AllStatic),
    ("Alter_routine_priv", Privilege::AllStatic),
    ("Create_user_priv", Privilege::CreateUser),
    ("Event_priv", Privilege::AllStatic),
    ("Trigger_priv", Privilege::AllStatic),
    ("Create_tablespace_priv", Privilege::AllStatic),
];

/// The `mysql` schema's tables.
pub static TABLES: [&dyn VirtualTable; 3] = [&User, &GENERAL_LOG, &SLOW_LOG];

/// `mysql.user`.
#[derive(Debug)]
pub struct User;

/// A log table: an [`EmptyTable`] with MySQL's definition, engine CSV.
#[derive(Debug)]
pub struct LogTable {
    table: EmptyTable,
    create: &'static str,
}

/// What `authentication_string` holds: empty for an empty password, MySQL's `*` and the
/// upper-case hex of SHA1(SHA1(password)) for mysql_native_password, and for
/// caching_sha2_password the hex of the fast-auth hash (MySQL stores a salted `$A$005$`
/// form tpbed does not keep).
fn authentication_string(a: &Account) -> String {
    let hex = |b: &[u8]| b.iter().map(|x| format!("{x:02X}")).collect::<String>();
    match a.plugin {
        _ if a.empty_password => String::new(),
        AuthPlugin::Native => format!("*{}", hex(&a.native_hash)),
        AuthPlugin::CachingSha2 => hex(&a.sha2_hash),
    }
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
                row.extend(
                    PRIVILEGE_COLUMNS
                        .iter()
                        .map(|(_, p)| yes_no(a.privileges.has(*p))),
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
                    Value::str(&authentication_string(a)),
                    yes_no(false),
                    Value::Null,
                    Value::Null,
                    yes_no(false),
                    yes_no(a.privileges.has(Privilege::AllStatic)),
                    yes_no(a.privileges.has(Privilege::AllStatic)),
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
        for (i, (p, _)) in PRIVILEGE_COLUMNS.iter().enumerate() {
            assert_eq!(names[i + 2], *p);
        }
        assert_eq!(names.len(), 2 + PRIVILEGE_COLUMNS.len() + 8 + 12);
    }
}
