//! `mysql.db` and `mysql.tables_priv`: one row per database-level and table-level grant of
//! every account, with MySQL 8.0's columns (`Table_priv` is the SET of the table
//! privileges; tpbed has no column privileges, so `Column_priv` is always empty).

use crate::accounts::{Account, PrivSet};
use crate::introspection::vtables::{VType, VirtualTable};
use crate::introspection::ServerView;
use crate::value::Value;

/// `mysql.db`'s privilege columns, in MySQL's order.
const DB_COLUMNS: &[(&str, PrivSet)] = &[
    ("Select_priv", PrivSet::SELECT),
    ("Insert_priv", PrivSet::INSERT),
    ("Update_priv", PrivSet::UPDATE),
    ("Delete_priv", PrivSet::DELETE),
    ("Create_priv", PrivSet::CREATE),
    ("Drop_priv", PrivSet::DROP),
    ("Grant_priv", PrivSet::GRANT_OPTION),
    ("References_priv", PrivSet::REFERENCES),
    ("Index_priv", PrivSet::INDEX),
    ("Alter_priv", PrivSet::ALTER),
    ("Create_tmp_table_priv", PrivSet::CREATE_TEMPORARY_TABLES),
    ("Lock_tables_priv", PrivSet::LOCK_TABLES),
    ("Create_view_priv", PrivSet::CREATE_VIEW),
    ("Show_view_priv", PrivSet::SHOW_VIEW),
    ("Create_routine_priv", PrivSet::CREATE_ROUTINE),
    ("Alter_routine_priv", PrivSet::ALTER_ROUTINE),
    ("Execute_priv", PrivSet::EXECUTE),
    ("Event_priv", PrivSet::EVENT),
    ("Trigger_priv", PrivSet::TRIGGER),
];

/// `mysql.tables_priv.Table_priv`'s members, in MySQL's SET order.
const TABLE_PRIV_NAMES: &[(PrivSet, &str)] = &[
    (PrivSet::SELECT, "Select"),
    (PrivSet::INSERT, "Insert"),
    (PrivSet::UPDATE, "Update"),
    (PrivSet::DELETE, "Delete"),
    (PrivSet::CREATE, "Create"),
    (PrivSet::DROP, "Drop"),
    (PrivSet::GRANT_OPTION, "Grant"),
    (PrivSet::REFERENCES, "References"),
    (PrivSet::INDEX, "Index"),
    (PrivSet::ALTER, "Alter"),
    (PrivSet::CREATE_VIEW, "Create View"),
    (PrivSet::SHOW_VIEW, "Show view"),
    (PrivSet::TRIGGER, "Trigger"),
];

/// `mysql.db`.
#[derive(Debug)]
pub struct Db;

/// `mysql.tables_priv`.
#[derive(Debug)]
pub struct TablesPriv;

/// `mysql.db`'s columns.
static DB_TABLE_COLUMNS: [(&str, VType); 22] = {
    let mut cols = [("", VType::Text); 22];
    cols[0] = ("Host", VType::Text);
    cols[1] = ("Db", VType::Text);
    cols[2] = ("User", VType::Text);
    let mut i = 0;
    while i < DB_COLUMNS.len() {
        cols[3 + i] = (DB_COLUMNS[i].0, VType::Text);
        i += 1;
    }
    cols
};

impl VirtualTable for Db {
    fn name(&self) -> &'static str {
        "db"
    }
    fn columns(&self) -> &'static [(&'static str, VType)] {
        &DB_TABLE_COLUMNS
    }
    fn rows(&self, server: &dyn ServerView) -> Vec<Vec<Value>> {
        let yes_no = |b: bool| Value::str(if b { "Y" } else { "N" });
        let mut rows = Vec::new();
        for a in server.accounts().list() {
            for g in &a.grants.dbs {
                let mut row = vec![Value::str(&a.host), Value::str(&g.db), Value::str(&a.user)];
                row.extend(DB_COLUMNS.iter().map(|(_, p)| yes_no(g.privs.contains(*p))));
                rows.push(row);
            }
        }
        rows
    }
}

/// A table grant's `Table_priv` value.
fn table_priv(privs: PrivSet) -> String {
    TABLE_PRIV_NAMES
        .iter()
        .filter(|(p, _)| privs.contains(*p))
        .map(|(_, n)| *n)
        .collect::<Vec<_>>()
        .join(",")
}

fn timestamp(micros: i64) -> String {
    let dt = crate::time::datetime_from_micros(micros);
    format!(
        "{:04}-{:02}-{:02} {:02}:{:02}:{:02}",
        dt.year, dt.month, dt.day, dt.hour, dt.minute, dt.second
    )
}

impl VirtualTable for TablesPriv {
    fn name(&self) -> &'static str {
        "tables_priv"
    }
    fn columns(&self) -> &'static [(&'static str, VType)] {
        use VType::Text;
        &[
            ("Host", Text),
            ("Db", Text),
            ("User", Text),
            ("Table_name", Text),
            ("Grantor", Text),
            ("Timestamp", Text),
            ("Table_priv", Text),
            ("Column_priv", Text),
        ]
    }
    fn rows(&self, server: &dyn ServerView) -> Vec<Vec<Value>> {
        let row = |a: &Account, g: &crate::accounts::grants::TableGrant| {
            vec![
                Value::str(&a.host),
                Value::str(&g.db),
                Value::str(&a.user),
                Value::str(&g.table),
                Value::str(&g.grantor),
                Value::str(&timestamp(g.granted_at)),
                Value::str(&table_priv(g.privs)),
                Value::str(""),
            ]
        };
        server
            .accounts()
            .list()
            .iter()
            .flat_map(|a| a.grants.tables.iter().map(move |g| row(a, g)))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn columns_are_mysqls() {
        let names: Vec<&str> = Db.columns().iter().map(|(n, _)| *n).collect();
        assert_eq!(names[..4], ["Host", "Db", "User", "Select_priv"]);
        assert_eq!(names[21], "Trigger_priv");
        assert_eq!(
            table_priv(
                PrivSet::SELECT
                    .union(PrivSet::GRANT_OPTION)
                    .union(PrivSet::TRIGGER)
            ),
            "Select,Grant,Trigger"
        );
    }
}
