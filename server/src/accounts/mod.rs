//! Accounts: `CREATE USER`, `DROP USER`, `RENAME USER`, password changes, the grants of
//! each account at every level, and the password hashes both authentication plugins check
//! against.
//!
//! What `mysql.user` shows of a password is what MySQL stores: `*` and SHA1(SHA1(password))
//! for mysql_native_password, a salted `$A$005$` string for caching_sha2_password. The
//! caching_sha2_password fast-auth cache entry, SHA256(SHA256(password)), lives only in
//! memory and is shown nowhere. It is filled when the password is set (a tpbed deviation:
//! MySQL fills it at the first full authentication, which needs TLS or RSA that tpbed does
//! not have).

pub mod grants;
pub mod privilege;
pub mod sha2_crypt;

use std::sync::RwLock;

pub use grants::{GrantLevel, Grants};
pub use privilege::{PrivSet, Privilege, Privileges};

use crate::error::{ErrorCode, SqlError, SqlResult};

/// An authentication plugin an account uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AuthPlugin {
    /// `mysql_native_password`: SHA1 challenge-response.
    Native,
    /// `caching_sha2_password`: SHA256 challenge-response (fast path only).
    CachingSha2,
}

impl AuthPlugin {
    /// The plugin's name on the wire and in `mysql.user`.
    pub fn name(self) -> &'static str {
        match self {
            AuthPlugin::Native => "mysql_native_password",
            AuthPlugin::CachingSha2 => "caching_sha2_password",
        }
    }

    /// Parses a plugin name.
    pub fn from_name(name: &str) -> Option<AuthPlugin> {
        match name.to_ascii_lowercase().as_str() {
            "mysql_native_password" => Some(AuthPlugin::Native),
            "caching_sha2_password" => Some(AuthPlugin::CachingSha2),
            _ => None,
        }
    }
}

/// One account, `'user'@'host'`.
#[derive(Debug, Clone)]
pub struct Account {
    /// User name.
    pub user: String,
    /// Host pattern (`%`, `localhost`, an address, or a `%`/`_` pattern).
    pub host: String,
    /// The plugin this account authenticates with.
    pub plugin: AuthPlugin,
    /// SHA1(SHA1(password)) for mysql_native_password (zeros for another plugin).
    pub native_hash: [u8; 20],
    /// SHA256(SHA256(password)): the caching_sha2 fast-auth cache entry, in memory only
    /// (zeros for another plugin).
    pub sha2_hash: [u8; 32],
    /// What `mysql.user.authentication_string` holds, as MySQL stores it.
    pub auth_string: String,
    /// Whether the password is empty (any plugin accepts an empty response).
    pub empty_password: bool,
    /// Grants at every level.
    pub grants: Grants,
}

impl Account {
    fn new(user: &str, host: &str, password: &str, plugin: AuthPlugin) -> Account {
        let mut a = Account {
            user: user.to_string(),
            host: host.to_string(),
            plugin,
            native_hash: [0; 20],
            sha2_hash: [0; 32],
            auth_string: String::new(),
            empty_password: true,
            grants: Grants::default(),
        };
        a.set_password(password, plugin);
        a
    }

    /// Sets the password (and plugin): the stored string and the hash login checks.
    fn set_password(&mut self, password: &str, plugin: AuthPlugin) {
        let pw = password.as_bytes();
        self.plugin = plugin;
        self.empty_password = pw.is_empty();
        self.native_hash = [0; 20];
        self.sha2_hash = [0; 32];
        match plugin {
            AuthPlugin::Native => {
                self.native_hash = protocol::auth::native_password_hash(pw);
                let hex: String = self
                    .native_hash
                    .iter()
                    .map(|x| format!("{x:02X}"))
                    .collect();
                self.auth_string = if pw.is_empty() {
                    String::new()
                } else {
                    format!("*{hex}")
                };
            }
            AuthPlugin::CachingSha2 => {
                self.sha2_hash = protocol::auth::caching_sha2_hash(pw);
                self.auth_string = sha2_crypt::authentication_string(pw);
            }
        }
    }

    /// The account's global privileges.
    pub fn privileges(&self) -> &Privileges {
        &self.grants.global
    }
}

/// Every account of the server.
#[derive(Debug)]
pub struct Accounts {
    accounts: RwLock<Vec<Account>>,
}

/// Whether a host pattern matches a client address (`localhost` matches loopback addresses,
/// as MySQL does with name resolution for TCP clients on 127.0.0.1).
pub fn host_matches(pattern: &str, client: &str) -> bool {
    let loopback = client == "127.0.0.1" || client == "::1" || client == "localhost";
    if pattern.eq_ignore_ascii_case("localhost") {
        return loopback;
    }
    like_match(pattern.as_bytes(), client.as_bytes())
}

/// SQL LIKE matching with `%` and `_` (case-insensitive, no escape character).
pub fn like_match(pattern: &[u8], text: &[u8]) -> bool {
    // Iterative matcher with backtracking to the last `%`.
    let (mut p, mut t) = (0usize, 0usize);
    let (mut star, mut mark) = (None::<usize>, 0usize);
    while t < text.len() {
        if p < pattern.len() && (pattern[p] == b'_' || pattern[p].eq_ignore_ascii_case(&text[t])) {
            p += 1;
            t += 1;
        } else if p < pattern.len() && pattern[p] == b'%' {
            star = Some(p);
            p += 1;
            mark = t;
        } else if let Some(s) = star {
            p = s + 1;
            mark += 1;
            t = mark;
        } else {
            return false;
        }
    }
    while p < pattern.len() && pattern[p] == b'%' {
        p += 1;
    }
    p == pattern.len()
}

impl Accounts {
    /// The initial accounts: `root@localhost` and `root@%` with an empty password and every
    /// privilege but `TP_CONNECTION_ADMIN`.
    pub fn with_root() -> Accounts {
        let mut list = Vec::new();
        for host in ["localhost", "%"] {
            let mut root = Account::new("root", host, "", AuthPlugin::CachingSha2);
            root.grants.global = Privileges::all();
            list.push(root);
        }
        Accounts {
            accounts: RwLock::new(list),
        }
    }

    /// Every account, ordered by host and user as `mysql.user`'s primary key orders them.
    pub fn list(&self) -> Vec<Account> {
        let mut list = self
            .accounts
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .clone();
        list.sort_by(|a, b| (&a.host, &a.user).cmp(&(&b.host, &b.user)));
        list
    }

    /// The account a client `user` from `client_host` logs in as: the most specific matching
    /// host (exact before patterns, `%` last), as MySQL sorts `mysql.user`.
    pub fn find(&self, user: &str, client_host: &str) -> Option<Account> {
        let list = self.accounts.read().unwrap_or_else(|e| e.into_inner());
        let mut matches: Vec<&Account> = list
            .iter()
            .filter(|a| a.user == user && host_matches(&a.host, client_host))
            .collect();
        matches.sort_by_key(|a| {
            let wild = a.host.contains('%') || a.host.contains('_');
            (wild, std::cmp::Reverse(a.host.len()))
        });
        matches.first().map(|a| (*a).clone())
    }

    /// Runs `f` on the grants of `user@host` (the account's own host pattern) as they are
    /// now (None when the account was dropped).
    pub fn with_grants<R>(
        &self,
        user: &str,
        host: &str,
        f: impl FnOnce(Option<&Grants>) -> R,
    ) -> R {
        let list = self.accounts.read().unwrap_or_else(|e| e.into_inner());
        f(list
            .iter()
            .find(|a| a.user == user && a.host == host)
            .map(|a| &a.grants))
    }

    /// The global privileges `user@host` (the account's own host pattern) holds now.
    pub fn privileges(&self, user: &str, host: &str) -> Privileges {
        self.with_grants(user, host, |g| {
            g.map(|g| g.global.clone()).unwrap_or_default()
        })
    }

    /// The account `user@host` (its own host pattern, case-insensitive as MySQL compares
    /// host names).
    pub fn get(&self, user: &str, host: &str) -> Option<Account> {
        let list = self.accounts.read().unwrap_or_else(|e| e.into_inner());
        list.iter()
            .find(|a| a.user == user && a.host.eq_ignore_ascii_case(host))
            .cloned()
    }

    /// Removes every grant of `user@host` at every level; false when it does not exist.
    pub fn clear_grants(&self, user: &str, host: &str) -> bool {
        self.update(user, host, |a| a.grants = Grants::default())
            .is_some()
    }

    /// Whether `user@host` exists.
    pub fn exists(&self, user: &str, host: &str) -> bool {
        self.with_grants(user, host, |g| g.is_some())
    }

    /// CREATE USER; fails with 1396 when it exists (unless `if_not_exists`).
    pub fn create(
        &self,
        user: &str,
        host: &str,
        password: &str,
        plugin: AuthPlugin,
        if_not_exists: bool,
    ) -> SqlResult<()> {
        let mut list = self.accounts.write().unwrap_or_else(|e| e.into_inner());
        if list
            .iter()
            .any(|a| a.user == user && a.host.eq_ignore_ascii_case(host))
        {
            if if_not_exists {
                return Ok(());
            }
            return Err(SqlError::new(
                ErrorCode::CannotUser,
                format!("Operation CREATE USER failed for '{user}'@'{host}'"),
            ));
        }
        list.push(Account::new(user, host, password, plugin));
        Ok(())
    }

    /// DROP USER; fails with 1396 when it does not exist (unless `if_exists`).
    pub fn drop_user(&self, user: &str, host: &str, if_exists: bool) -> SqlResult<()> {
        let mut list = self.accounts.write().unwrap_or_else(|e| e.into_inner());
        let before = list.len();
        list.retain(|a| !(a.user == user && a.host.eq_ignore_ascii_case(host)));
        if list.len() == before && !if_exists {
            return Err(SqlError::new(
                ErrorCode::CannotUser,
                format!("Operation DROP USER failed for '{user}'@'{host}'"),
            ));
        }
        Ok(())
    }

    /// Runs `f` on the account `user@host` to change it; None when it does not exist.
    fn update<R>(&self, user: &str, host: &str, f: impl FnOnce(&mut Account) -> R) -> Option<R> {
        let mut list = self.accounts.write().unwrap_or_else(|e| e.into_inner());
        list.iter_mut()
            .find(|a| a.user == user && a.host.eq_ignore_ascii_case(host))
            .map(f)
    }

    /// GRANT privileges ON level TO user@host [WITH GRANT OPTION] by `grantor`
    /// (`user@host`); 1410 when the account does not exist.
    pub fn grant(
        &self,
        user: &str,
        host: &str,
        privs: &[Privilege],
        level: &GrantLevel,
        grant_option: bool,
        grantor: &str,
    ) -> SqlResult<()> {
        self.update(user, host, |a| {
            a.grants.grant(privs, level, grant_option, grantor)
        })
        .unwrap_or_else(|| {
            Err(SqlError::new(
                ErrorCode::CantCreateUserWithGrant,
                "You are not allowed to create a user with GRANT",
            ))
        })
    }

    /// REVOKE privileges ON level FROM user@host: 1141 (1147 for a table) when the account
    /// has no grant at that level, as MySQL says for an account that does not exist too.
    pub fn revoke(
        &self,
        user: &str,
        host: &str,
        privs: &[Privilege],
        level: &GrantLevel,
    ) -> SqlResult<()> {
        let found = self
            .update(user, host, |a| a.grants.revoke(privs, level))
            .unwrap_or(Ok(false))?;
        if found {
            return Ok(());
        }
        Err(match level {
            GrantLevel::Table(_, t) => SqlError::new(
                ErrorCode::NonexistingTableGrant,
                format!(
                    "There is no such grant defined for user '{user}' on host '{host}' on table '{t}'"
                ),
            ),
            _ => SqlError::new(
                ErrorCode::NonexistingGrant,
                format!("There is no such grant defined for user '{user}' on host '{host}'"),
            ),
        })
    }

    /// Sets the password of `user@host`, keeping its plugin unless `plugin` names one; false
    /// when the account does not exist.
    pub fn set_password(
        &self,
        user: &str,
        host: &str,
        password: &str,
        plugin: Option<AuthPlugin>,
    ) -> bool {
        self.update(user, host, |a| {
            let plugin = plugin.unwrap_or(a.plugin);
            a.set_password(password, plugin);
        })
        .is_some()
    }

    /// RENAME USER from TO to: 1396 when `from` does not exist or `to` does.
    pub fn rename(&self, from: (&str, &str), to: (&str, &str)) -> SqlResult<()> {
        let mut list = self.accounts.write().unwrap_or_else(|e| e.into_inner());
        let same =
            |a: &Account, (u, h): (&str, &str)| a.user == u && a.host.eq_ignore_ascii_case(h);
        let failed = || {
            SqlError::new(
                ErrorCode::CannotUser,
                format!("Operation RENAME USER failed for '{}'@'{}'", from.0, from.1),
            )
        };
        if list.iter().any(|a| same(a, to)) {
            return Err(failed());
        }
        let acct = list.iter_mut().find(|a| same(a, from)).ok_or_else(failed)?;
        acct.user = to.0.to_string();
        acct.host = to.1.to_string();
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn host_patterns() {
        assert!(host_matches("%", "10.1.2.3"));
        assert!(host_matches("localhost", "127.0.0.1"));
        assert!(!host_matches("localhost", "10.0.0.1"));
        assert!(host_matches("10.%", "10.0.0.1"));
        assert!(host_matches("127.0.0._", "127.0.0.1"));
        assert!(!host_matches("127.0.0.2", "127.0.0.1"));
        assert!(like_match(b"a%c", b"abbbc"));
        assert!(!like_match(b"a%c", b"abbbd"));
    }

    #[test]
    fn root_lacks_tp_connection_admin_until_granted_by_name() {
        let a = Accounts::with_root();
        let root = a.find("root", "127.0.0.1").unwrap();
        assert!(root.privileges().connection_admin());
        assert!(!root.privileges().has(Privilege::TpConnectionAdmin));
        a.create("u", "%", "p", AuthPlugin::Native, false).unwrap();
        assert!(a.create("u", "%", "p", AuthPlugin::Native, false).is_err());
        a.grant("u", "%", &[Privilege::All], &GrantLevel::Global, false, "")
            .unwrap();
        assert!(!a.privileges("u", "%").has(Privilege::TpConnectionAdmin));
        a.grant(
            "u",
            "%",
            &[Privilege::TpConnectionAdmin],
            &GrantLevel::Global,
            false,
            "",
        )
        .unwrap();
        assert!(a.privileges("u", "%").has(Privilege::TpConnectionAdmin));
        a.drop_user("u", "%", false).unwrap();
        assert!(a.find("u", "127.0.0.1").is_none());
    }

    #[test]
    fn stored_passwords_are_mysqls_and_the_sha2_cache_is_not_stored() {
        let a = Accounts::with_root();
        a.create("n", "%", "pw", AuthPlugin::Native, false).unwrap();
        a.create("s", "%", "pw", AuthPlugin::CachingSha2, false)
            .unwrap();
        let n = a.find("n", "10.0.0.1").unwrap();
        assert_eq!(n.auth_string, "*D821809F681A40A6E379B50D0463EFAE20BDD122");
        let s = a.find("s", "10.0.0.1").unwrap();
        assert!(s.auth_string.starts_with("$A$005$"));
        assert!(sha2_crypt::verify(&s.auth_string, b"pw"));
        let cache: String = s.sha2_hash.iter().map(|x| format!("{x:02X}")).collect();
        assert!(!s.auth_string.contains(&cache));
        assert!(a.set_password("s", "%", "other", None));
        let s2 = a.find("s", "10.0.0.1").unwrap();
        assert!(sha2_crypt::verify(&s2.auth_string, b"other"));
        assert_ne!(s2.sha2_hash, s.sha2_hash);
    }

    #[test]
    fn rename_and_revoke_report_mysqls_errors() {
        let a = Accounts::with_root();
        a.create("u", "%", "", AuthPlugin::Native, false).unwrap();
        a.rename(("u", "%"), ("v", "localhost")).unwrap();
        assert!(a.exists("v", "localhost"));
        assert_eq!(
            a.rename(("u", "%"), ("w", "%")).unwrap_err().code,
            ErrorCode::CannotUser
        );
        let sel = [Privilege::Static(PrivSet::SELECT)];
        let e = a
            .revoke("v", "localhost", &sel, &GrantLevel::Db("d".into()))
            .unwrap_err();
        assert_eq!(e.code, ErrorCode::NonexistingGrant);
        let e = a
            .grant("nobody", "%", &sel, &GrantLevel::Global, false, "")
            .unwrap_err();
        assert_eq!(e.code, ErrorCode::CantCreateUserWithGrant);
    }
}
