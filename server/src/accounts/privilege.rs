//! Privileges as MySQL names them: the static ones as bits of a [`PrivSet`] (one bit per
//! `*_priv` column of `mysql.user`, in that column order), the dynamic ones by name, and the
//! levels each static privilege may be granted at.

/// A static privilege, or a dynamic one, or `ALL` / `USAGE` as written in GRANT.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Privilege {
    /// A static privilege: one bit of a [`PrivSet`].
    Static(PrivSet),
    /// `ALL [PRIVILEGES]`: every static privilege the level allows, GRANT OPTION excepted.
    All,
    /// `USAGE`: no privilege.
    Usage,
    /// `CONNECTION_ADMIN`: the spare connection past `max_connections`, KILL of others.
    ConnectionAdmin,
    /// `SYSTEM_VARIABLES_ADMIN`: SET GLOBAL.
    SystemVariablesAdmin,
    /// `TP_CONNECTION_ADMIN`: connections go to the thread pool's Admin group.
    TpConnectionAdmin,
}

/// A set of static privileges.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub struct PrivSet(pub u32);

/// The static privileges: bit, GRANT's name, `mysql.user` column, in `mysql.user` column
/// order (which is also the order SHOW GRANTS lists them in).
pub const STATIC_PRIVILEGES: &[(PrivSet, &str, &str)] = &[
    (PrivSet::SELECT, "SELECT", "Select_priv"),
    (PrivSet::INSERT, "INSERT", "Insert_priv"),
    (PrivSet::UPDATE, "UPDATE", "Update_priv"),
    (PrivSet::DELETE, "DELETE", "Delete_priv"),
    (PrivSet::CREATE, "CREATE", "Create_priv"),
    (PrivSet::DROP, "DROP", "Drop_priv"),
    (PrivSet::RELOAD, "RELOAD", "Reload_priv"),
    (PrivSet::SHUTDOWN, "SHUTDOWN", "Shutdown_priv"),
    (PrivSet::PROCESS, "PROCESS", "Process_priv"),
    (PrivSet::FILE, "FILE", "File_priv"),
    (PrivSet::GRANT_OPTION, "GRANT OPTION", "Grant_priv"),
    (PrivSet::REFERENCES, "REFERENCES", "References_priv"),
    (PrivSet::INDEX, "INDEX", "Index_priv"),
    (PrivSet::ALTER, "ALTER", "Alter_priv"),
    (PrivSet::SHOW_DATABASES, "SHOW DATABASES", "Show_db_priv"),
    (PrivSet::SUPER, "SUPER", "Super_priv"),
    (
        PrivSet::CREATE_TEMPORARY_TABLES,
        "CREATE TEMPORARY TABLES",
        "Create_tmp_table_priv",
    ),
    (PrivSet::LOCK_TABLES, "LOCK TABLES", "Lock_tables_priv"),
    (PrivSet::EXECUTE, "EXECUTE", "Execute_priv"),
    (
        PrivSet::REPLICATION_SLAVE,
        "REPLICATION SLAVE",
        "Repl_slave_priv",
    ),
    (
        PrivSet::REPLICATION_CLIENT,
        "REPLICATION CLIENT",
        "Repl_client_priv",
    ),
    (PrivSet::CREATE_VIEW, "CREATE VIEW", "Create_view_priv"),
    (PrivSet::SHOW_VIEW, "SHOW VIEW", "Show_view_priv"),
    (
        PrivSet::CREATE_ROUTINE,
        "CREATE ROUTINE",
        "Create_routine_priv",
    ),
    (
        PrivSet::ALTER_ROUTINE,
        "ALTER ROUTINE",
        "Alter_routine_priv",
    ),
    (PrivSet::CREATE_USER, "CREATE USER", "Create_user_priv"),
    (PrivSet::EVENT, "EVENT", "Event_priv"),
    (PrivSet::TRIGGER, "TRIGGER", "Trigger_priv"),
    (
        PrivSet::CREATE_TABLESPACE,
        "CREATE TABLESPACE",
        "Create_tablespace_priv",
    ),
    (PrivSet::CREATE_ROLE, "CREATE ROLE", "Create_role_priv"),
    (PrivSet::DROP_ROLE, "DROP ROLE", "Drop_role_priv"),
];

impl PrivSet {
    /// `SELECT`.
    pub const SELECT: PrivSet = PrivSet(1);
    /// `INSERT`.
    pub const INSERT: PrivSet = PrivSet(1 << 1);
    /// `UPDATE`.
    pub const UPDATE: PrivSet = PrivSet(1 << 2);
    /// `DELETE`.
    pub const DELETE: PrivSet = PrivSet(1 << 3);
    /// `CREATE`.
    pub const CREATE: PrivSet = PrivSet(1 << 4);
    /// `DROP`.
    pub const DROP: PrivSet = PrivSet(1 << 5);
    /// `RELOAD`: FLUSH.
    pub const RELOAD: PrivSet = PrivSet(1 << 6);
    /// `SHUTDOWN`.
    pub const SHUTDOWN: PrivSet = PrivSet(1 << 7);
    /// `PROCESS`: every connection's statement, InnoDB's tables and status.
    pub const PROCESS: PrivSet = PrivSet(1 << 8);
    /// `FILE`.
    pub const FILE: PrivSet = PrivSet(1 << 9);
    /// `GRANT OPTION`.
    pub const GRANT_OPTION: PrivSet = PrivSet(1 << 10);
    /// `REFERENCES`.
    pub const REFERENCES: PrivSet = PrivSet(1 << 11);
    /// `INDEX`.
    pub const INDEX: PrivSet = PrivSet(1 << 12);
    /// `ALTER`.
    pub const ALTER: PrivSet = PrivSet(1 << 13);
    /// `SHOW DATABASES`.
    pub const SHOW_DATABASES: PrivSet = PrivSet(1 << 14);
    /// `SUPER`.
    pub const SUPER: PrivSet = PrivSet(1 << 15);
    /// `CREATE TEMPORARY TABLES`.
    pub const CREATE_TEMPORARY_TABLES: PrivSet = PrivSet(1 << 16);
    /// `LOCK TABLES`.
    pub const LOCK_TABLES: PrivSet = PrivSet(1 << 17);
    /// `EXECUTE`.
    pub const EXECUTE: PrivSet = PrivSet(1 << 18);
    /// `REPLICATION SLAVE`.
    pub const REPLICATION_SLAVE: PrivSet = PrivSet(1 << 19);
    /// `REPLICATION CLIENT`: SHOW MASTER STATUS and SHOW BINARY LOGS.
    pub const REPLICATION_CLIENT: PrivSet = PrivSet(1 << 20);
    /// `CREATE VIEW`.
    pub const CREATE_VIEW: PrivSet = PrivSet(1 << 21);
    /// `SHOW VIEW`.
    pub const SHOW_VIEW: PrivSet = PrivSet(1 << 22);
    /// `CREATE ROUTINE`.
    pub const CREATE_ROUTINE: PrivSet = PrivSet(1 << 23);
    /// `ALTER ROUTINE`.
    pub const ALTER_ROUTINE: PrivSet = PrivSet(1 << 24);
    /// `CREATE USER`.
    pub const CREATE_USER: PrivSet = PrivSet(1 << 25);
    /// `EVENT`.
    pub const EVENT: PrivSet = PrivSet(1 << 26);
    /// `TRIGGER`.
    pub const TRIGGER: PrivSet = PrivSet(1 << 27);
    /// `CREATE TABLESPACE`.
    pub const CREATE_TABLESPACE: PrivSet = PrivSet(1 << 28);
    /// `CREATE ROLE`.
    pub const CREATE_ROLE: PrivSet = PrivSet(1 << 29);
    /// `DROP ROLE`.
    pub const DROP_ROLE: PrivSet = PrivSet(1 << 30);

    /// Every static privilege.
    pub const GLOBAL: PrivSet = PrivSet((1 << 31) - 1);
    /// What a database-level grant may hold (MySQL's DB_ACLS).
    pub const DB: PrivSet = PrivSet(
        PrivSet::SELECT.0
            | PrivSet::INSERT.0
            | PrivSet::UPDATE.0
            | PrivSet::DELETE.0
            | PrivSet::CREATE.0
            | PrivSet::DROP.0
            | PrivSet::GRANT_OPTION.0
            | PrivSet::REFERENCES.0
            | PrivSet::INDEX.0
            | PrivSet::ALTER.0
            | PrivSet::CREATE_TEMPORARY_TABLES.0
            | PrivSet::LOCK_TABLES.0
            | PrivSet::EXECUTE.0
            | PrivSet::CREATE_VIEW.0
            | PrivSet::SHOW_VIEW.0
            | PrivSet::CREATE_ROUTINE.0
            | PrivSet::ALTER_ROUTINE.0
            | PrivSet::EVENT.0
            | PrivSet::TRIGGER.0,
    );
    /// What a table-level grant may hold (MySQL's TABLE_ACLS).
    pub const TABLE: PrivSet = PrivSet(
        PrivSet::SELECT.0
            | PrivSet::INSERT.0
            | PrivSet::UPDATE.0
            | PrivSet::DELETE.0
            | PrivSet::CREATE.0
            | PrivSet::DROP.0
            | PrivSet::GRANT_OPTION.0
            | PrivSet::REFERENCES.0
            | PrivSet::INDEX.0
            | PrivSet::ALTER.0
            | PrivSet::CREATE_VIEW.0
            | PrivSet::SHOW_VIEW.0
            | PrivSet::TRIGGER.0,
    );

    /// The empty set.
    pub const fn empty() -> PrivSet {
        PrivSet(0)
    }
    /// Whether no privilege is in the set.
    pub const fn is_empty(self) -> bool {
        self.0 == 0
    }
    /// Whether every privilege of `other` is in the set.
    pub const fn contains(self, other: PrivSet) -> bool {
        self.0 & other.0 == other.0
    }
    /// Whether one privilege of `other` is in the set.
    pub const fn intersects(self, other: PrivSet) -> bool {
        self.0 & other.0 != 0
    }
    /// Both sets together.
    pub const fn union(self, other: PrivSet) -> PrivSet {
        PrivSet(self.0 | other.0)
    }
    /// The privileges of the set that are also in `other`.
    pub const fn intersection(self, other: PrivSet) -> PrivSet {
        PrivSet(self.0 & other.0)
    }
    /// The set without `other`'s privileges.
    pub const fn minus(self, other: PrivSet) -> PrivSet {
        PrivSet(self.0 & !other.0)
    }
    /// GRANT's names of the privileges in the set, in `mysql.user` column order.
    pub fn names(self) -> impl Iterator<Item = &'static str> {
        STATIC_PRIVILEGES
            .iter()
            .filter(move |(p, _, _)| self.contains(*p))
            .map(|(_, n, _)| *n)
    }
    /// The first privilege of the set (for messages naming one privilege).
    pub fn first_name(self) -> &'static str {
        self.names().next().unwrap_or("USAGE")
    }

    /// The set as MySQL's `get_privilege_desc` words it in 1142: every name, comma-separated,
    /// GRANT OPTION as `GRANT`.
    pub fn command_desc(self) -> String {
        self.names()
            .map(|n| if n == "GRANT OPTION" { "GRANT" } else { n })
            .collect::<Vec<_>>()
            .join(", ")
    }
}

/// Dynamic privileges tpbed knows, in the order SHOW GRANTS lists them.
pub const DYNAMIC_PRIVILEGES: &[(Privilege, &str)] = &[
    (Privilege::ConnectionAdmin, "CONNECTION_ADMIN"),
    (Privilege::SystemVariablesAdmin, "SYSTEM_VARIABLES_ADMIN"),
    (Privilege::TpConnectionAdmin, "TP_CONNECTION_ADMIN"),
];

impl Privilege {
    /// `SUPER`.
    pub const SUPER: Privilege = Privilege::Static(PrivSet::SUPER);
    /// `PROCESS`.
    pub const PROCESS: Privilege = Privilege::Static(PrivSet::PROCESS);
    /// `CREATE USER`.
    pub const CREATE_USER: Privilege = Privilege::Static(PrivSet::CREATE_USER);
    /// `SHUTDOWN`.
    pub const SHUTDOWN: Privilege = Privilege::Static(PrivSet::SHUTDOWN);
    /// `REPLICATION CLIENT`.
    pub const REPLICATION_CLIENT: Privilege = Privilege::Static(PrivSet::REPLICATION_CLIENT);
    /// `RELOAD`.
    pub const RELOAD: Privilege = Privilege::Static(PrivSet::RELOAD);

    /// Parses a privilege as written in GRANT (case-insensitive, spaces collapsed).
    pub fn from_name(name: &str) -> Option<Privilege> {
        let n = name
            .split_whitespace()
            .collect::<Vec<_>>()
            .join(" ")
            .to_ascii_uppercase();
        match n.as_str() {
            "ALL" | "ALL PRIVILEGES" => return Some(Privilege::All),
            "USAGE" => return Some(Privilege::Usage),
            // GRANT OPTION is granted with WITH GRANT OPTION, revoked by name.
            "GRANT OPTION" => return Some(Privilege::Static(PrivSet::GRANT_OPTION)),
            _ => {}
        }
        if let Some((p, _)) = DYNAMIC_PRIVILEGES.iter().find(|(_, d)| *d == n) {
            return Some(*p);
        }
        STATIC_PRIVILEGES
            .iter()
            .find(|(p, name, _)| *name == n && *p != PrivSet::GRANT_OPTION)
            .map(|(p, _, _)| Privilege::Static(*p))
    }

    /// The name SHOW GRANTS and error messages use.
    pub fn name(self) -> &'static str {
        match self {
            Privilege::Static(p) => p.first_name(),
            Privilege::All => "ALL PRIVILEGES",
            Privilege::Usage => "USAGE",
            d => DYNAMIC_PRIVILEGES
                .iter()
                .find(|(p, _)| *p == d)
                .map_or("USAGE", |(_, n)| *n),
        }
    }

    /// Whether this is a dynamic privilege (granted only ON *.*).
    pub fn is_dynamic(self) -> bool {
        DYNAMIC_PRIVILEGES.iter().any(|(p, _)| *p == self)
    }
}

/// An account's global privileges: static ones and dynamic ones.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Privileges {
    /// Static privileges granted ON *.*.
    pub global: PrivSet,
    /// Dynamic privileges.
    pub dynamic: Vec<Privilege>,
}

impl Privileges {
    /// What `root` holds: every static privilege with GRANT OPTION, and the dynamic ones
    /// except `TP_CONNECTION_ADMIN`, which is granted only by name (so `root` and benchmark
    /// accounts are scheduled by the normal thread groups).
    pub fn all() -> Privileges {
        Privileges {
            global: PrivSet::GLOBAL,
            dynamic: vec![Privilege::ConnectionAdmin, Privilege::SystemVariablesAdmin],
        }
    }

    /// Adds a privilege at the global level (`ALL` is every static privilege but GRANT
    /// OPTION, and also the dynamic ones but `TP_CONNECTION_ADMIN`, as MySQL's `ALL ON *.*`
    /// grants every dynamic privilege the server registered).
    pub fn grant(&mut self, p: Privilege) {
        match p {
            Privilege::All => {
                self.global = self
                    .global
                    .union(PrivSet::GLOBAL.minus(PrivSet::GRANT_OPTION));
                for d in [Privilege::ConnectionAdmin, Privilege::SystemVariablesAdmin] {
                    self.grant(d);
                }
            }
            Privilege::Usage => {}
            Privilege::Static(s) => self.global = self.global.union(s),
            d => {
                if !self.dynamic.contains(&d) {
                    self.dynamic.push(d);
                }
            }
        }
    }

    /// Removes a privilege at the global level; false when the account did not hold it.
    pub fn revoke(&mut self, p: Privilege) -> bool {
        match p {
            Privilege::All => {
                self.global = self.global.intersection(PrivSet::GRANT_OPTION);
                self.dynamic.clear();
                true
            }
            Privilege::Usage => true,
            Privilege::Static(s) => {
                self.global = self.global.minus(s);
                true
            }
            d => {
                self.dynamic.retain(|x| *x != d);
                true
            }
        }
    }

    /// Whether the account holds `p` globally.
    pub fn has(&self, p: Privilege) -> bool {
        match p {
            Privilege::Usage => true,
            Privilege::All => self
                .global
                .contains(PrivSet::GLOBAL.minus(PrivSet::GRANT_OPTION)),
            Privilege::Static(s) => self.global.contains(s),
            d => self.dynamic.contains(&d),
        }
    }

    /// `CONNECTION_ADMIN` or `SUPER`, MySQL's test for the spare connection and KILL.
    pub fn connection_admin(&self) -> bool {
        self.has(Privilege::ConnectionAdmin) || self.has(Privilege::SUPER)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_and_levels_are_mysqls() {
        for (p, name, _) in STATIC_PRIVILEGES {
            if *p != PrivSet::GRANT_OPTION {
                assert_eq!(Privilege::from_name(name), Some(Privilege::Static(*p)));
            }
        }
        assert_eq!(
            Privilege::from_name("lock   tables"),
            Some(Privilege::Static(PrivSet::LOCK_TABLES))
        );
        assert_eq!(
            Privilege::from_name("tp_connection_admin"),
            Some(Privilege::TpConnectionAdmin)
        );
        assert_eq!(Privilege::from_name("BOGUS"), None);
        assert_eq!(STATIC_PRIVILEGES.len(), 31);
        assert!(!PrivSet::DB.contains(PrivSet::PROCESS));
        assert!(!PrivSet::TABLE.contains(PrivSet::LOCK_TABLES));
        assert!(PrivSet::DB.contains(PrivSet::TABLE));
        assert_eq!(
            PrivSet::SELECT.union(PrivSet::GRANT_OPTION).command_desc(),
            "SELECT, GRANT"
        );
    }

    #[test]
    fn all_excludes_grant_option_and_tp_connection_admin() {
        let mut p = Privileges::default();
        p.grant(Privilege::All);
        assert!(p.has(Privilege::All));
        assert!(!p.global.contains(PrivSet::GRANT_OPTION));
        assert!(!p.has(Privilege::TpConnectionAdmin));
        assert!(p.connection_admin());
        p.revoke(Privilege::Static(PrivSet::SELECT));
        assert!(!p.has(Privilege::All));
        assert!(p.has(Privilege::PROCESS));
    }
}
