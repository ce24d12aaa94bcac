//! The text of `SHOW GRANTS` and `SHOW CREATE USER`, as MySQL 8.0 prints them: one GRANT per
//! level (the static global privileges, then the dynamic ones, then each database, then each
//! table), privileges in `mysql.user` column order, names quoted with backticks.

use crate::accounts::privilege::DYNAMIC_PRIVILEGES;
use crate::accounts::{Account, Grants, PrivSet};

/// `name` quoted as an identifier.
pub fn quote(name: &str) -> String {
    format!("`{}`", name.replace('`', "``"))
}

/// `` `user`@`host` ``.
pub fn account(user: &str, host: &str) -> String {
    format!("{}@{}", quote(user), quote(host))
}

/// The privilege list of one GRANT at a level whose grants may hold `level_all`.
fn list(privs: PrivSet, level_all: PrivSet) -> String {
    let plain = privs.minus(PrivSet::GRANT_OPTION);
    if plain.is_empty() {
        "USAGE".to_string()
    } else if level_all != PrivSet::GLOBAL && plain == level_all.minus(PrivSet::GRANT_OPTION) {
        "ALL PRIVILEGES".to_string()
    } else {
        plain.names().collect::<Vec<_>>().join(", ")
    }
}

fn with_option(privs: PrivSet) -> &'static str {
    if privs.contains(PrivSet::GRANT_OPTION) {
        " WITH GRANT OPTION"
    } else {
        ""
    }
}

/// The lines of `SHOW GRANTS FOR user@host`.
pub fn grant_lines(user: &str, host: &str, g: &Grants) -> Vec<String> {
    let to = account(user, host);
    let global = g.global.global;
    let mut lines = vec![format!(
        "GRANT {} ON *.* TO {to}{}",
        list(global, PrivSet::GLOBAL),
        with_option(global)
    )];
    let dynamic: Vec<&str> = DYNAMIC_PRIVILEGES
        .iter()
        .filter(|(p, _)| g.global.dynamic.contains(p))
        .map(|(_, n)| *n)
        .collect();
    if !dynamic.is_empty() {
        lines.push(format!(
            "GRANT {} ON *.* TO {to}{}",
            dynamic.join(","),
            with_option(global)
        ));
    }
    for d in &g.dbs {
        lines.push(format!(
            "GRANT {} ON {}.* TO {to}{}",
            list(d.privs, PrivSet::DB),
            quote(&d.db),
            with_option(d.privs)
        ));
    }
    for t in &g.tables {
        lines.push(format!(
            "GRANT {} ON {}.{} TO {to}{}",
            list(t.privs, PrivSet::TABLE),
            quote(&t.db),
            quote(&t.table),
            with_option(t.privs)
        ));
    }
    lines
}

/// The text of `SHOW CREATE USER user@host`.
pub fn create_user(a: &Account) -> String {
    let auth = if a.auth_string.is_empty() {
        String::new()
    } else {
        format!(" AS '{}'", a.auth_string)
    };
    format!(
        "CREATE USER {} IDENTIFIED WITH '{}'{auth} REQUIRE NONE PASSWORD EXPIRE DEFAULT \
         ACCOUNT UNLOCK PASSWORD HISTORY DEFAULT PASSWORD REUSE INTERVAL DEFAULT PASSWORD \
         REQUIRE CURRENT DEFAULT",
        account(&a.user, &a.host),
        a.plugin.name()
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::accounts::{GrantLevel, Privilege, Privileges};

    #[test]
    fn lines_follow_mysqls_format() {
        let mut g = Grants::default();
        assert_eq!(grant_lines("u", "%", &g), ["GRANT USAGE ON *.* TO `u`@`%`"]);
        let sel = Privilege::Static(PrivSet::SELECT);
        let ins = Privilege::Static(PrivSet::INSERT);
        g.grant(&[ins, sel], &GrantLevel::Db("d`b".into()), false, "")
            .unwrap();
        g.grant(
            &[Privilege::All],
            &GrantLevel::Table("d".into(), "t".into()),
            true,
            "",
        )
        .unwrap();
        g.grant(
            &[Privilege::PROCESS, Privilege::TpConnectionAdmin],
            &GrantLevel::Global,
            false,
            "",
        )
        .unwrap();
        assert_eq!(
            grant_lines("u", "%", &g),
            [
                "GRANT PROCESS ON *.* TO `u`@`%`",
                "GRANT TP_CONNECTION_ADMIN ON *.* TO `u`@`%`",
                "GRANT SELECT, INSERT ON `d``b`.* TO `u`@`%`",
                "GRANT ALL PRIVILEGES ON `d`.`t` TO `u`@`%` WITH GRANT OPTION",
            ]
        );
        let root = Grants {
            global: Privileges::all(),
            ..Grants::default()
        };
        let lines = grant_lines("root", "localhost", &root);
        assert!(lines[0].starts_with("GRANT SELECT, INSERT, UPDATE, DELETE, CREATE, DROP, RELOAD"));
        assert!(lines[0].ends_with("DROP ROLE ON *.* TO `root`@`localhost` WITH GRANT OPTION"));
        assert_eq!(
            lines[1],
            "GRANT CONNECTION_ADMIN,SYSTEM_VARIABLES_ADMIN ON *.* TO `root`@`localhost` WITH GRANT OPTION"
        );
    }
}
