//! Database- and table-level grants of one account (MySQL's `mysql.db` and
//! `mysql.tables_priv` rows), and GRANT/REVOKE applied to an account at any level. A grant
//! row exists only while it holds a privilege: revoking its last one removes it, as MySQL
//! deletes the row.

use crate::accounts::privilege::{PrivSet, Privilege, Privileges};
use crate::error::{ErrorCode, SqlError, SqlResult};

/// Where a GRANT or REVOKE applies: `*.*`, `db.*` or `db.table`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum GrantLevel {
    /// `*.*`.
    Global,
    /// `db.*`.
    Db(String),
    /// `db.table`.
    Table(String, String),
}

/// A database-level grant (a `mysql.db` row).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DbGrant {
    /// The database.
    pub db: String,
    /// Its privileges.
    pub privs: PrivSet,
}

/// A table-level grant (a `mysql.tables_priv` row).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TableGrant {
    /// The database.
    pub db: String,
    /// The table.
    pub table: String,
    /// Its privileges.
    pub privs: PrivSet,
    /// Who granted it first (`user@host`, `mysql.tables_priv.Grantor`).
    pub grantor: String,
    /// When it was granted first, in microseconds since the epoch.
    pub granted_at: i64,
}

/// Every grant of one account.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Grants {
    /// `*.*`.
    pub global: Privileges,
    /// `db.*`, in the order granted.
    pub dbs: Vec<DbGrant>,
    /// `db.table`, in the order granted.
    pub tables: Vec<TableGrant>,
}

/// Whether two database names are the same: exact, as MySQL compares them with
/// `lower_case_table_names=0`, except the system schemas, whose names are case-insensitive.
pub fn same_db(a: &str, b: &str) -> bool {
    a == b
        || (["information_schema", "mysql", "performance_schema", "sys"]
            .contains(&a.to_ascii_lowercase().as_str())
            && a.eq_ignore_ascii_case(b))
}

/// The static privileges `privs` stand for at a level whose grants may hold `allowed`, or
/// the error MySQL gives for a privilege the level does not have.
fn static_set(privs: &[Privilege], level: &GrantLevel, allowed: PrivSet) -> SqlResult<PrivSet> {
    let mut set = PrivSet::empty();
    for p in privs {
        match p {
            Privilege::All => set = set.union(allowed.minus(PrivSet::GRANT_OPTION)),
            Privilege::Usage => {}
            Privilege::Static(s) if allowed.contains(*s) => set = set.union(*s),
            Privilege::Static(_) => {
                return Err(match level {
                    GrantLevel::Table(..) => SqlError::new(
                        ErrorCode::IllegalGrantForTable,
                        "Illegal GRANT/REVOKE command; please consult the manual to see which \
                         privileges can be used",
                    ),
                    _ => SqlError::new(
                        ErrorCode::WrongUsage,
                        "Incorrect usage of DB GRANT and GLOBAL PRIVILEGES",
                    ),
                })
            }
            _ => {
                return Err(SqlError::new(
                    ErrorCode::IllegalPrivilegeLevel,
                    "Illegal privilege level specified for a dynamic privilege",
                ))
            }
        }
    }
    Ok(set)
}

/// Checks that every privilege can be granted at `level` (1221, 1144 or 3619 otherwise).
pub fn validate(privs: &[Privilege], level: &GrantLevel) -> SqlResult<()> {
    match level {
        GrantLevel::Global => Ok(()),
        GrantLevel::Db(_) => static_set(privs, level, PrivSet::DB).map(|_| ()),
        GrantLevel::Table(..) => static_set(privs, level, PrivSet::TABLE).map(|_| ()),
    }
}

impl Grants {
    /// GRANT `privs` ON `level` [WITH GRANT OPTION], by `grantor` (`user@host`).
    pub fn grant(
        &mut self,
        privs: &[Privilege],
        level: &GrantLevel,
        grant_option: bool,
        grantor: &str,
    ) -> SqlResult<()> {
        let option = if grant_option {
            PrivSet::GRANT_OPTION
        } else {
            PrivSet::empty()
        };
        match level {
            GrantLevel::Global => {
                for p in privs {
                    self.global.grant(*p);
                }
                self.global.global = self.global.global.union(option);
            }
            GrantLevel::Db(db) => {
                let set = static_set(privs, level, PrivSet::DB)?.union(option);
                if set.is_empty() {
                    return Ok(());
                }
                match self.dbs.iter_mut().find(|g| same_db(&g.db, db)) {
                    Some(g) => g.privs = g.privs.union(set),
                    None => self.dbs.push(DbGrant {
                        db: db.clone(),
                        privs: set,
                    }),
                }
            }
            GrantLevel::Table(db, table) => {
                let set = static_set(privs, level, PrivSet::TABLE)?.union(option);
                if set.is_empty() {
                    return Ok(());
                }
                match self
                    .tables
                    .iter_mut()
                    .find(|g| same_db(&g.db, db) && g.table == *table)
                {
                    Some(g) => g.privs = g.privs.union(set),
                    None => self.tables.push(TableGrant {
                        db: db.clone(),
                        table: table.clone(),
                        privs: set,
                        grantor: grantor.to_string(),
                        granted_at: crate::time::now_micros(),
                    }),
                }
            }
        }
        Ok(())
    }

    /// REVOKE `privs` ON `level`; `Ok(false)` when the account has no grant at that level
    /// (MySQL's 1141 or 1147, which the caller words).
    pub fn revoke(&mut self, privs: &[Privilege], level: &GrantLevel) -> SqlResult<bool> {
        match level {
            GrantLevel::Global => {
                for p in privs {
                    self.global.revoke(*p);
                }
                Ok(true)
            }
            GrantLevel::Db(db) => {
                let mut set = static_set(privs, level, PrivSet::DB)?;
                if privs.contains(&Privilege::All) {
                    set = set.union(PrivSet::GRANT_OPTION);
                }
                let Some(i) = self.dbs.iter().position(|g| same_db(&g.db, db)) else {
                    return Ok(false);
                };
                self.dbs[i].privs = self.dbs[i].privs.minus(set);
                if self.dbs[i].privs.is_empty() {
                    self.dbs.remove(i);
                }
                Ok(true)
            }
            GrantLevel::Table(db, table) => {
                let mut set = static_set(privs, level, PrivSet::TABLE)?;
                if privs.contains(&Privilege::All) {
                    set = set.union(PrivSet::GRANT_OPTION);
                }
                let Some(i) = self
                    .tables
                    .iter()
                    .position(|g| same_db(&g.db, db) && g.table == *table)
                else {
                    return Ok(false);
                };
                self.tables[i].privs = self.tables[i].privs.minus(set);
                if self.tables[i].privs.is_empty() {
                    self.tables.remove(i);
                }
                Ok(true)
            }
        }
    }

    /// The privileges the database-level grant on `db` holds.
    pub fn db(&self, db: &str) -> PrivSet {
        self.dbs
            .iter()
            .filter(|g| same_db(&g.db, db))
            .fold(PrivSet::empty(), |a, g| a.union(g.privs))
    }

    /// The privileges the table-level grant on `db.table` holds.
    pub fn table(&self, db: &str, table: &str) -> PrivSet {
        self.tables
            .iter()
            .filter(|g| same_db(&g.db, db) && g.table == table)
            .fold(PrivSet::empty(), |a, g| a.union(g.privs))
    }

    /// Whether any table of `db` has a table-level grant.
    pub fn any_table_in(&self, db: &str) -> bool {
        self.tables.iter().any(|g| same_db(&g.db, db))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sel() -> Privilege {
        Privilege::Static(PrivSet::SELECT)
    }

    #[test]
    fn db_and_table_grants_add_up_and_revoke_removes_empty_rows() {
        let mut g = Grants::default();
        g.grant(&[sel()], &GrantLevel::Db("d".into()), false, "r@h")
            .unwrap();
        g.grant(
            &[Privilege::Static(PrivSet::INSERT)],
            &GrantLevel::Db("d".into()),
            true,
            "r@h",
        )
        .unwrap();
        assert_eq!(
            g.db("d"),
            PrivSet::SELECT
                .union(PrivSet::INSERT)
                .union(PrivSet::GRANT_OPTION)
        );
        assert!(g.db("D").is_empty(), "database names are case-sensitive");
        assert!(g
            .revoke(&[Privilege::All], &GrantLevel::Db("d".into()))
            .unwrap());
        assert!(g.dbs.is_empty());
        assert!(!g.revoke(&[sel()], &GrantLevel::Db("d".into())).unwrap());
        g.grant(
            &[Privilege::All],
            &GrantLevel::Table("d".into(), "t".into()),
            false,
            "r@h",
        )
        .unwrap();
        assert_eq!(g.tables[0].grantor, "r@h");
        assert_eq!(
            g.table("d", "t"),
            PrivSet::TABLE.minus(PrivSet::GRANT_OPTION)
        );
        assert!(g.any_table_in("d"));
    }

    #[test]
    fn privileges_outside_their_level_are_mysqls_errors() {
        let mut g = Grants::default();
        let e = g
            .grant(
                &[Privilege::PROCESS],
                &GrantLevel::Db("d".into()),
                false,
                "",
            )
            .unwrap_err();
        assert_eq!(e.code, ErrorCode::WrongUsage);
        let e = g
            .grant(
                &[Privilege::Static(PrivSet::LOCK_TABLES)],
                &GrantLevel::Table("d".into(), "t".into()),
                false,
                "",
            )
            .unwrap_err();
        assert_eq!(e.code, ErrorCode::IllegalGrantForTable);
        let e = validate(&[Privilege::TpConnectionAdmin], &GrantLevel::Db("d".into())).unwrap_err();
        assert_eq!(e.code, ErrorCode::IllegalPrivilegeLevel);
    }
}
