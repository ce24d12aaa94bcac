//! Accounts and privileges: `CREATE USER`, `DROP USER`, `GRANT ... ON *.*`, and the password
//! hashes both authentication plugins check against.
//!
//! The caching_sha2_password fast-auth cache is filled at CREATE USER (a tpbed deviation: MySQL
//! fills it at the first full authentication, which needs TLS or RSA that tpbed does not have).

use std::sync::RwLock;

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

/// A global privilege. Static privileges are kept coarse (tpbed checks few of them); the
/// dynamic ones the connection handling depends on are exact.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Privilege {
    /// Every static privilege (`ALL PRIVILEGES`): data, DDL, PROCESS, CREATE USER, SUPER...
    AllStatic,
    /// `SUPER`.
    Super,
    /// `PROCESS`: see every connection in the processlist.
    Process,
    /// `CREATE USER`.
    CreateUser,
    /// `SHUTDOWN`: the SHUTDOWN statement.
    Shutdown,
    /// `REPLICATION CLIENT`: SHOW MASTER STATUS and SHOW BINARY LOGS.
    ReplicationClient,
    /// `CONNECTION_ADMIN`: the spare connection past `max_connections`, KILL of others.
    ConnectionAdmin,
    /// `SYSTEM_VARIABLES_ADMIN`: SET GLOBAL.
    SystemVariablesAdmin,
    /// `TP_CONNECTION_ADMIN`: connections go to the thread pool's Admin group.
    TpConnectionAdmin,
    /// `USAGE` and the static privileges tpbed does not check (SELECT, INSERT, ...).
    Usage,
}

impl Privilege {
    /// Parses a privilege as written in GRANT (case-insensitive).
    pub fn from_name(name: &str) -> Option<Privilege> {
        let n = name
            .trim()
            .to_ascii_uppercase()
            .split_whitespace()
            .collect::<Vec<_>>()
            .join(" ");
        Some(match n.as_str() {
            "ALL" | "ALL PRIVILEGES" => Privilege::AllStatic,
            "SUPER" => Privilege::Super,
            "PROCESS" => Privilege::Process,
            "CREATE USER" => Privilege::CreateUser,
            "SHUTDOWN" => Privilege::Shutdown,
            "CONNECTION_ADMIN" => Privilege::ConnectionAdmin,
            "SYSTEM_VARIABLES_ADMIN" => Privilege::SystemVariablesAdmin,
            "TP_CONNECTION_ADMIN" => Privilege::TpConnectionAdmin,
            "REPLICATION CLIENT" => Privilege::ReplicationClient,
            // Static data and DDL privileges are all covered by AllStatic's checks (none).
            "SELECT"
            | "INSERT"
            | "UPDATE"
            | "DELETE"
            | "CREATE"
            | "DROP"
            | "RELOAD"
            | "FILE"
            | "REFERENCES"
            | "INDEX"
            | "ALTER"
            | "SHOW DATABASES"
            | "CREATE TEMPORARY TABLES"
            | "LOCK TABLES"
            | "EXECUTE"
            | "REPLICATION SLAVE"
            | "CREATE VIEW"
            | "SHOW VIEW"
            | "CREATE ROUTINE"
            | "ALTER ROUTINE"
            | "EVENT"
            | "TRIGGER"
            | "USAGE" => return Some(Privilege::Usage),
            _ => return None,
        })
    }
}

/// The set of privileges an account holds.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Privileges {
    all_static: bool,
    dynamic: Vec<Privilege>,
}

impl Privileges {
    /// What `GRANT ALL ON *.*` gives: every static privilege and the dynamic ones except
    /// `TP_CONNECTION_ADMIN`, which is granted only by name (so `root` and benchmark accounts
    /// are scheduled by the normal thread groups).
    pub fn all() -> Privileges {
        Privileges {
            all_static: true,
            dynamic: vec![Privilege::ConnectionAdmin, Privilege::SystemVariablesAdmin],
        }
    }

    /// Adds a privilege.
    pub fn grant(&mut self, p: Privilege) {
        match p {
            Privilege::AllStatic => {
                let all = Privileges::all();
                self.all_static = true;
                for d in all.dynamic {
                    self.grant(d);
                }
            }
            Privilege::Usage => {}
            p if !self.dynamic.contains(&p) => self.dynamic.push(p),
            _ => {}
        }
    }

    /// Whether the account holds `p` (SUPER, PROCESS, CREATE USER, SHUTDOWN and REPLICATION
    /// CLIENT are static privileges).
    pub fn has(&self, p: Privilege) -> bool {
        match p {
            Privilege::Usage => true,
            Privilege::AllStatic
            | Privilege::Super
            | Privilege::Process
            | Privilege::CreateUser
            | Privilege::Shutdown
            | Privilege::ReplicationClient => self.all_static || self.dynamic.contains(&p),
            _ => self.dynamic.contains(&p),
        }
    }

    /// `CONNECTION_ADMIN` or `SUPER`, MySQL's test for the spare connection and KILL.
    pub fn connection_admin(&self) -> bool {
        self.has(Privilege::ConnectionAdmin) || self.has(Privilege::Super)
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
    /// SHA1(SHA1(password)) for mysql_native_password.
    pub native_hash: [u8; 20],
    /// SHA256(SHA256(password)): the caching_sha2 fast-auth cache entry.
    pub sha2_hash: [u8; 32],
    /// Whether the password is empty (any plugin accepts an empty response).
    pub empty_password: bool,
    /// Global privileges.
    pub privileges: Privileges,
}

impl Account {
    fn new(user: &str, host: &str, password: &str, plugin: AuthPlugin) -> Account {
        Account {
            user: user.to_string(),
            host: host.to_string(),
            plugin,
            native_hash: protocol::auth::native_password_hash(password.as_bytes()),
            sha2_hash: protocol::auth::caching_sha2_hash(password.as_bytes()),
            empty_password: password.is_empty(),
            privileges: Privileges::default(),
        }
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
            root.privileges = Privileges::all();
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

    /// The privileges `user@host` (the account's own host pattern) holds now.
    pub fn privileges(&self, user: &str, host: &str) -> Privileges {
        let list = self.accounts.read().unwrap_or_else(|e| e.into_inner());
        list.iter()
            .find(|a| a.user == user && a.host == host)
            .map(|a| a.privileges.clone())
            .unwrap_or_default()
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

    /// GRANT privileges ON *.* TO user@host.
    pub fn grant(&self, user: &str, host: &str, privs: &[Privilege]) -> SqlResult<()> {
        let mut list = self.accounts.write().unwrap_or_else(|e| e.into_inner());
        let acct = list
            .iter_mut()
            .find(|a| a.user == user && a.host.eq_ignore_ascii_case(host))
            .ok_or_else(|| {
                SqlError::new(
                    ErrorCode::CannotUser,
                    format!("You are not allowed to create a user with GRANT ('{user}'@'{host}')"),
                )
            })?;
        for p in privs {
            acct.privileges.grant(*p);
        }
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
        assert!(root.privileges.connection_admin());
        assert!(!root.privileges.has(Privilege::TpConnectionAdmin));
        a.create("u", "%", "p", AuthPlugin::Native, false).unwrap();
        assert!(a.create("u", "%", "p", AuthPlugin::Native, false).is_err());
        a.grant("u", "%", &[Privilege::AllStatic]).unwrap();
        assert!(!a.privileges("u", "%").has(Privilege::TpConnectionAdmin));
        a.grant("u", "%", &[Privilege::TpConnectionAdmin]).unwrap();
        assert!(a.privileges("u", "%").has(Privilege::TpConnectionAdmin));
        a.drop_user("u", "%", false).unwrap();
        assert!(a.find("u", "127.0.0.1").is_none());
    }
}
