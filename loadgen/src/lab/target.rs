//! The servers an experiment runs against: tpbed-server started next to tpbed-load, a running
//! server at HOST:PORT, or one started from a command; the server's flavour and version, and
//! server settings applied per session, globally, or by restarting a server the lab started.

use std::collections::BTreeMap;
use std::net::{SocketAddr, ToSocketAddrs};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use crate::blocking::Blocking;
use crate::conn::{Login, Reply, WireFactory};
use crate::demo::{find_server, SERVER_OPTS};
use crate::lab::server_log::start_failure;
use crate::sweep::{split_named, Managed};

/// The database the lab creates on every target and runs in.
pub(crate) const LAB_DB: &str = "tpbed_lab";

/// Which server implementation a target is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub(crate) enum Flavour {
    /// tpbed-server.
    Tpbed,
    /// MariaDB.
    MariaDb,
    /// MySQL (or a server that does not say otherwise).
    MySql,
}

/// The flavour from `SELECT VERSION()` and `@@version_comment`.
pub(crate) fn detect(version: &str, comment: &str) -> Flavour {
    let all = format!("{version} {comment}").to_lowercase();
    if all.contains("tpbed") {
        Flavour::Tpbed
    } else if all.contains("mariadb") {
        Flavour::MariaDb
    } else {
        Flavour::MySql
    }
}

/// How to reach or start a target.
#[derive(Debug, Clone)]
pub(crate) enum How {
    /// tpbed-server at this path, started by the lab.
    Tpbed(PathBuf),
    /// A running server.
    Endpoint(SocketAddr),
    /// A shell command with `{port}`, started by the lab.
    Command(String),
}

/// A named target as given on the command line.
#[derive(Debug, Clone)]
pub(crate) struct TargetSpec {
    /// Its name in reports.
    pub(crate) name: String,
    /// How to reach it.
    pub(crate) how: How,
}

/// Parses `--target tpbed|NAME=HOST:PORT` and `--target-cmd 'NAME=COMMAND'`.
pub(crate) fn parse_targets(
    targets: &[String],
    cmds: &[String],
    server_bin: Option<&Path>,
) -> Result<Vec<TargetSpec>, String> {
    let mut out = Vec::new();
    for t in targets {
        if t == "tpbed" {
            out.push(TargetSpec {
                name: "tpbed".into(),
                how: How::Tpbed(find_server(server_bin)?),
            });
            continue;
        }
        let (name, ep) = split_named(t)
            .map_err(|_| format!("--target {t:?}: expected `tpbed` or NAME=HOST:PORT"))?;
        let addr = ep
            .to_socket_addrs()
            .map_err(|e| format!("--target {t:?}: {e}"))?
            .next()
            .ok_or_else(|| format!("--target {t:?}: no address"))?;
        out.push(TargetSpec {
            name,
            how: How::Endpoint(addr),
        });
    }
    for c in cmds {
        let (name, cmd) = split_named(c)?;
        if !cmd.contains("{port}") {
            return Err(format!("--target-cmd {name}: the command needs {{port}}"));
        }
        out.push(TargetSpec {
            name,
            how: How::Command(cmd),
        });
    }
    let mut names: Vec<&str> = out.iter().map(|t| t.name.as_str()).collect();
    names.sort_unstable();
    if names.windows(2).any(|w| w[0] == w[1]) {
        return Err("two targets have the same name".into());
    }
    if out.is_empty() {
        return Err(
            "give --target tpbed, --target NAME=HOST:PORT or --target-cmd 'NAME=COMMAND {port}'"
                .into(),
        );
    }
    Ok(out)
}

/// A target the lab is connected to (and may have started).
pub(crate) struct Live {
    /// The spec it came from.
    pub(crate) spec: TargetSpec,
    /// Where it listens.
    pub(crate) addr: SocketAddr,
    /// Login (database: [`LAB_DB`]).
    pub(crate) login: Login,
    /// Flavour.
    pub(crate) flavour: Flavour,
    /// `SELECT VERSION()`.
    pub(crate) version: String,
    /// The server process when the lab started it.
    managed: Option<Managed>,
    /// Start-up settings it runs with (`--name=value`).
    pub(crate) flags: BTreeMap<String, String>,
    /// Where server logs go.
    log_dir: PathBuf,
    wires: Arc<WireFactory>,
}

impl std::fmt::Debug for Live {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Live")
            .field("name", &self.spec.name)
            .field("addr", &self.addr)
            .field("flavour", &self.flavour)
            .finish()
    }
}

impl Live {
    /// Starts or reaches the target with these start-up settings; creates [`LAB_DB`].
    pub(crate) fn open(
        spec: &TargetSpec,
        user: &str,
        password: &str,
        flags: BTreeMap<String, String>,
        log_dir: &Path,
        wires: &Arc<WireFactory>,
    ) -> Result<Live, String> {
        let no_db = Login {
            user: user.into(),
            password: password.into(),
            db: String::new(),
        };
        let extra: String = flags
            .iter()
            .map(|(k, v)| format!(" '--{k}={}'", v.replace('\'', "'\\''")))
            .collect();
        let cmd = match &spec.how {
            How::Tpbed(bin) => Some(format!(
                "'{}' --port={{port}} {SERVER_OPTS}{extra}",
                bin.display().to_string().replace('\'', "'\\''")
            )),
            How::Command(c) => Some(format!("{c}{extra}")),
            How::Endpoint(_) => {
                if !flags.is_empty() {
                    return Err(format!(
                        "{}: needs start-up settings ({}) and was not started by the lab",
                        spec.name,
                        flags.keys().cloned().collect::<Vec<_>>().join(", ")
                    ));
                }
                None
            }
        };
        let (addr, managed) = match cmd {
            Some(cmd) => {
                std::fs::create_dir_all(log_dir)
                    .map_err(|e| format!("{}: {e}", log_dir.display()))?;
                let log = log_dir.join(format!("{}.server.log", spec.name));
                let error_log = log_error_file(&cmd);
                let error_log_start = error_log
                    .as_ref()
                    .and_then(|p| std::fs::metadata(p).ok())
                    .map_or(0, |m| m.len());
                let mut m = Managed::start(&cmd, &log)?;
                m.wait_ready(&no_db, wires, Duration::from_secs(120))
                    .map_err(|e| {
                        let mut text = std::fs::read_to_string(&log).unwrap_or_default();
                        if let Some(p) = &error_log {
                            text.push_str(&written_since(p, error_log_start));
                        }
                        match start_failure(&text) {
                            Some(why) => format!(
                                "{} did not start: {why} ({e}; log: {})",
                                spec.name,
                                log.display()
                            ),
                            None => format!(
                                "{} did not start: {e}; it wrote nothing to stdout or stderr \
                                 (a server logging to a file, e.g. --log-error, keeps the reason there)",
                                spec.name
                            ),
                        }
                    })?;
                (m.addr, Some(m))
            }
            None => match &spec.how {
                How::Endpoint(a) => (*a, None),
                _ => unreachable!("a command was built for every started target"),
            },
        };
        let mut c =
            Blocking::connect(addr, &no_db, wires).map_err(|e| format!("{}: {e}", spec.name))?;
        let row = c.rows("SELECT VERSION(), @@version_comment")?;
        let cell = |i: usize| {
            row.first()
                .and_then(|r| r.get(i).cloned().flatten())
                .unwrap_or_default()
        };
        let (version, comment) = (cell(0), cell(1));
        c.exec(&format!("CREATE DATABASE IF NOT EXISTS {LAB_DB}"))?;
        c.quit();
        Ok(Live {
            spec: spec.clone(),
            addr,
            login: Login {
                db: LAB_DB.into(),
                ..no_db
            },
            flavour: detect(&version, &comment),
            version,
            managed,
            flags,
            log_dir: log_dir.to_path_buf(),
            wires: wires.clone(),
        })
    }

    /// The PID when the lab started the server.
    pub(crate) fn pid(&self) -> Option<u32> {
        self.managed.as_ref().map(Managed::pid)
    }

    /// The tpbed-server binary the lab starts it from (`--target tpbed`).
    pub(crate) fn binary(&self) -> Option<&Path> {
        match &self.spec.how {
            How::Tpbed(bin) => Some(bin),
            How::Endpoint(_) | How::Command(_) => None,
        }
    }

    /// Where the logs of servers the lab starts for this target go.
    pub(crate) fn log_dir(&self) -> &Path {
        &self.log_dir
    }

    /// The connection factory.
    pub(crate) fn wires(&self) -> &Arc<WireFactory> {
        &self.wires
    }

    /// Whether the lab can restart it with other start-up settings.
    pub(crate) fn restartable(&self) -> bool {
        self.managed.is_some()
    }

    /// Stops it (the lab started it) and starts it again with `flags`.
    pub(crate) fn restart(&mut self, flags: BTreeMap<String, String>) -> Result<(), String> {
        self.managed = None;
        let new = Live::open(
            &self.spec,
            &self.login.user,
            &self.login.password,
            flags,
            &self.log_dir,
            &self.wires,
        )?;
        *self = new;
        Ok(())
    }

    /// A new connection to [`LAB_DB`].
    pub(crate) fn connect(&self) -> Result<Blocking, String> {
        Blocking::connect(self.addr, &self.login, &self.wires)
    }

    /// A new connection to [`LAB_DB`] as `user` (empty password), which the lab creates
    /// first with every privilege on [`LAB_DB`] and, on `*.*`, only `grants`.
    pub(crate) fn connect_as(&self, user: &str, grants: &[String]) -> Result<Blocking, String> {
        let mut c = self.connect()?;
        c.exec(&format!("CREATE USER IF NOT EXISTS '{user}'@'%'"))?;
        c.exec(&format!(
            "GRANT ALL PRIVILEGES ON {LAB_DB}.* TO '{user}'@'%'"
        ))?;
        if !grants.is_empty() {
            c.exec(&format!(
                "GRANT {} ON *.* TO '{user}'@'%'",
                grants.join(", ")
            ))?;
        }
        c.quit();
        let login = Login {
            user: user.into(),
            password: String::new(),
            db: LAB_DB.into(),
        };
        Blocking::connect(self.addr, &login, &self.wires)
    }

    /// Every `SHOW GLOBAL VARIABLES` row.
    pub(crate) fn variables(&self) -> Result<Vec<(String, String)>, String> {
        let mut c = self.connect()?;
        let rows = c.rows("SHOW GLOBAL VARIABLES")?;
        c.quit();
        Ok(crate::gauges::pairs(&rows))
    }
}

/// On a running server the lab did not start, drops what the lab created there: [`LAB_DB`]
/// and the scenario users in `users`. Returns what it did, for the report.
pub(crate) fn clean_up(
    spec: &TargetSpec,
    login: &Login,
    users: &[String],
    wires: &Arc<WireFactory>,
) -> Result<String, String> {
    let How::Endpoint(addr) = &spec.how else {
        return Ok(String::new());
    };
    let login = Login {
        db: String::new(),
        ..login.clone()
    };
    let mut c =
        Blocking::connect(*addr, &login, wires).map_err(|e| format!("{}: {e}", spec.name))?;
    let mut done = vec![format!("dropped the lab's database {LAB_DB}")];
    c.exec(&format!("DROP DATABASE IF EXISTS {LAB_DB}"))?;
    for u in users {
        c.exec(&format!("DROP USER IF EXISTS '{u}'@'%'"))?;
        done.push(format!("user '{u}'@'%'"));
    }
    c.quit();
    Ok(done.join(", "))
}

/// A setting's value as SQL (numbers bare, words quoted).
pub(crate) fn sql_value(v: &str) -> String {
    if v.parse::<f64>().is_ok() || matches!(v.to_uppercase().as_str(), "ON" | "OFF" | "DEFAULT") {
        v.to_string()
    } else {
        format!("'{}'", v.replace('\'', "''"))
    }
}

/// A setting's variable name: `loose-` (or `loose_`) marks one a server may lack.
pub(crate) fn bare(name: &str) -> (&str, bool) {
    match name
        .strip_prefix("loose-")
        .or_else(|| name.strip_prefix("loose_"))
    {
        Some(n) => (n, true),
        None => (name, false),
    }
}

/// The global value of a variable now (`None`: the server has no such variable now).
pub(crate) fn global_value(c: &mut Blocking, name: &str) -> Result<Option<String>, String> {
    Ok(match c.query(&format!("SELECT @@GLOBAL.{name}"))? {
        Reply::Rows { rows, .. } => Some(
            rows.first()
                .and_then(|r| r.first().cloned().flatten())
                .unwrap_or_default(),
        ),
        _ => None,
    })
}

/// How a set of settings is applied on a target.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct SettingsPlan {
    /// Set with `SET {scope}` (per session, or globally before each run).
    pub(crate) dynamic: Vec<(String, String)>,
    /// Start-up flags the target must run with (a restart when they differ from its own).
    pub(crate) flags: BTreeMap<String, String>,
}

/// Decides how to apply `settings` on `live`: `SET {scope}` where the server takes it, else
/// a start-up flag (a variable the server lacks now may appear with other start-up flags,
/// e.g. the thread pool's); an error where neither can work.
pub(crate) fn plan_settings(
    live: &Live,
    settings: &BTreeMap<String, String>,
    scope: &str,
) -> Result<SettingsPlan, String> {
    let mut c = live.connect()?;
    let mut plan = SettingsPlan {
        dynamic: Vec::new(),
        flags: live
            .flags
            .iter()
            .filter(|(k, _)| settings.contains_key(*k))
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect(),
    };
    for (k, v) in settings {
        let (name, loose) = bare(k);
        if plan.flags.get(k) == Some(v) {
            continue;
        }
        let cur = global_value(&mut c, name)?;
        if cur
            .as_deref()
            .is_some_and(|cur| cur.eq_ignore_ascii_case(v))
        {
            continue;
        }
        if cur.is_some() {
            match c.query(&format!("SET {scope} {name} = {}", sql_value(v)))? {
                Reply::Error { .. } => {}
                _ => {
                    if scope == "GLOBAL" {
                        if let Some(cur) = &cur {
                            // put it back: the run sets it again right before it starts
                            let _ = c.query(&format!("SET GLOBAL {name} = {}", sql_value(cur)));
                        }
                    }
                    plan.dynamic.push((name.to_string(), v.clone()));
                    continue;
                }
            }
        }
        if cur.is_none() && !loose && !live.restartable() {
            c.quit();
            return Err(format!("the server has no variable {name}"));
        }
        plan.flags.insert(k.clone(), v.clone());
    }
    c.quit();
    Ok(plan)
}

/// After a start with flags: what each flagged variable is (a `loose-` one the server lacks
/// is named as ignored).
pub(crate) fn check_flags(live: &Live) -> Vec<String> {
    let Ok(mut c) = live.connect() else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for (k, v) in &live.flags {
        let (name, _) = bare(k);
        match global_value(&mut c, name) {
            Ok(Some(cur)) if cur.eq_ignore_ascii_case(v) => out.push(format!("--{k}={v}")),
            Ok(Some(cur)) => out.push(format!("--{k}={v} (the server reports {cur})")),
            _ => out.push(format!("--{k}={v} (ignored: the server has no {name})")),
        }
    }
    c.quit();
    out
}

/// The file a `--log-error=PATH` (or `--log_error=PATH`) option of a start command names (a
/// path without spaces): a server started with it writes the reason for a refused start there,
/// not to stderr.
fn log_error_file(cmd: &str) -> Option<std::path::PathBuf> {
    cmd.split_whitespace().find_map(|w| {
        let w = w.trim_matches(|c| c == '\'' || c == '"');
        w.strip_prefix("--log-error=")
            .or_else(|| w.strip_prefix("--log_error="))
            .filter(|p| !p.is_empty())
            .map(std::path::PathBuf::from)
    })
}

/// What `path` gained past byte `start` (all of it if it shrank), as text.
fn written_since(path: &std::path::Path, start: u64) -> String {
    let bytes = std::fs::read(path).unwrap_or_default();
    let from = usize::try_from(start).unwrap_or(0);
    let new = bytes.get(from..).unwrap_or(&bytes);
    String::from_utf8_lossy(new).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flavour_from_version_and_comment() {
        assert_eq!(
            detect(
                "8.0.40-tpbed",
                "tpbed test bed (MySQL protocol, in-memory engine)"
            ),
            Flavour::Tpbed
        );
        assert_eq!(
            detect("10.11.19-MariaDB-0+deb12u1", "Debian 12"),
            Flavour::MariaDb
        );
        assert_eq!(
            detect("8.4.3", "MySQL Community Server - GPL"),
            Flavour::MySql
        );
    }

    #[test]
    fn a_server_that_refuses_a_setting_says_why() {
        // refuses the flag the lab appends, in mariadbd's words, and exits
        let fake = "sh -c 'for a; do case \"$a\" in --thread_pool_max_transactions_limit=*) \
            printf \"%s 0 [ERROR] fake-mariadbd: unknown variable \\047%s\\047\\n%s 0 [ERROR] Aborting\\n\" \
            2026-12-02 \"${a#--}\" 2026-12-02 >&2; exit 1;; esac; done; exit 3' fake {port}";
        let spec = TargetSpec {
            name: "fake".into(),
            how: How::Command(fake.into()),
        };
        let dir = std::env::temp_dir().join(format!("tpbed-lab-refuse-{}", std::process::id()));
        let flags = BTreeMap::from([(
            "thread_pool_max_transactions_limit".to_string(),
            "2".to_string(),
        )]);
        let e = Live::open(&spec, "root", "", flags, &dir, &crate::sysbench::wires())
            .expect_err("the fake exits");
        assert!(
            e.contains("did not start: fake-mariadbd: unknown variable 'thread_pool_max_transactions_limit=2'"),
            "{e}"
        );
        assert!(!e.contains("Aborting"), "{e}");
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn targets_parse_and_reject_what_they_cannot_use() {
        let t = parse_targets(
            &["other=127.0.0.1:3307".into()],
            &["mdb=mariadbd --port={port}".into()],
            None,
        )
        .unwrap();
        assert_eq!(t.len(), 2);
        assert!(matches!(t[0].how, How::Endpoint(a) if a.port() == 3307));
        assert!(matches!(&t[1].how, How::Command(c) if c.contains("{port}")));
        assert!(parse_targets(&["x".into()], &[], None).is_err());
        assert!(parse_targets(&[], &["m=mariadbd".into()], None)
            .unwrap_err()
            .contains("{port}"));
        assert!(parse_targets(&[], &[], None).is_err());
        assert!(
            parse_targets(&["a=127.0.0.1:1".into(), "a=127.0.0.1:2".into()], &[], None).is_err()
        );
        assert_eq!(sql_value("2"), "2");
        assert_eq!(sql_value("READ-COMMITTED"), "'READ-COMMITTED'");
        assert_eq!(sql_value("OFF"), "OFF");
    }

    #[test]
    fn a_log_error_option_names_where_the_reason_is() {
        let cmd = "mariadbd --log-error=/tmp/lab/error.log --port={port}";
        assert_eq!(
            log_error_file(cmd),
            Some(std::path::PathBuf::from("/tmp/lab/error.log"))
        );
        assert_eq!(
            log_error_file("mysqld --log_error=e.log"),
            Some("e.log".into())
        );
        assert_eq!(log_error_file("mariadbd --port={port}"), None);
        let dir = std::env::temp_dir().join(format!("tpbed-lab-log-{}", std::process::id()));
        std::fs::write(&dir, "old error\nnew error\n").unwrap();
        assert_eq!(written_since(&dir, 10), "new error\n");
        assert_eq!(written_since(&dir, 1000), "old error\nnew error\n");
        let _ = std::fs::remove_file(&dir);
    }
}
