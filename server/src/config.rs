//! Start-up configuration as mysqld reads it: a `my.cnf`-style file (`[mysqld]`, `[server]`,
//! `!include`, `!includedir`, `loose-` prefixes) and then the command line, where every system
//! variable can be given as `--name=value` with dashes or underscores.
//!
//! Unknown names in a file are warned about and ignored, so a DBA's existing file starts the
//! server; an unknown name on the command line is an error, as in mysqld.

use std::path::{Path, PathBuf};

use crate::vars::registry::{normalize_name, parse_size, Feature, RawValue, Registry, VarDef};
use crate::vars::system::definitions;

/// Where a setting came from (for messages).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Origin {
    /// A line of an option file.
    File(PathBuf, usize),
    /// A command-line argument.
    CommandLine,
}

/// One `name[=value]` setting, before it is applied to the registry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Setting {
    /// Normalized name (lower case, underscores, no `loose_` prefix).
    pub name: String,
    /// The value as written; `None` for a bare boolean option.
    pub value: Option<String>,
    /// `loose-` prefix: unknown names are ignored silently.
    pub loose: bool,
    /// Where it came from.
    pub origin: Origin,
}

/// The parsed start-up configuration.
#[derive(Debug, Default)]
pub struct Config {
    /// Settings in the order they apply (file first, then command line).
    pub settings: Vec<Setting>,
    /// `--help` was given.
    pub help: bool,
    /// `--version` was given.
    pub version: bool,
    /// Warnings to log at start-up (unknown file options, ignored plugins, ...).
    pub warnings: Vec<String>,
}

/// Options that are not system variables (mysqld's own command-line options).
const NON_VARIABLE_OPTIONS: &[&str] =
    &["defaults_file", "no_defaults", "help", "version", "verbose"];

/// Option-file groups the server reads.
const GROUPS: &[&str] = &["mysqld", "server", "mysqld-8.0", "tpbed-server"];

/// Parses the command line (without argv\[0\]), reading `--defaults-file` first if given.
pub fn parse_args(args: &[String]) -> Result<Config, String> {
    let mut cfg = Config::default();
    let mut cli = Vec::new();
    let mut i = 0;
    while i < args.len() {
        let arg = &args[i];
        i += 1;
        let Some(body) = arg.strip_prefix("--") else {
            return Err(format!(
                "unexpected argument '{arg}' (options start with --)"
            ));
        };
        let (raw_name, mut value) = match body.split_once('=') {
            Some((n, v)) => (n.to_string(), Some(v.to_string())),
            None => (body.to_string(), None),
        };
        let name = normalize_name(&raw_name);
        match name.as_str() {
            "help" => cfg.help = true,
            "version" => cfg.version = true,
            "verbose" | "no_defaults" => {}
            "defaults_file" => {
                let path = value.take().or_else(|| {
                    i += 1;
                    args.get(i - 1).cloned()
                });
                let path = path.ok_or("--defaults-file needs a file name")?;
                read_option_file(Path::new(&path), &mut cfg, 0)?;
            }
            _ => {
                // `--name value` form for options that take a value (not booleans).
                if value.is_none() && takes_value(&name) {
                    if let Some(next) = args.get(i) {
                        if !next.starts_with("--") {
                            value = Some(next.clone());
                            i += 1;
                        }
                    }
                }
                cli.extend(make_settings(&name, value, Origin::CommandLine));
            }
        }
    }
    cfg.settings.extend(cli);
    Ok(cfg)
}

/// Every system variable the server can have: the core ones and those storage, the thread
/// pool and statement digests define.
pub fn variable_definitions() -> Vec<VarDef> {
    let mut defs = definitions();
    defs.extend(crate::storage::definitions());
    defs.extend(crate::thread_pool::definitions());
    defs.extend(crate::digest::definitions());
    defs.extend(crate::querylog::definitions());
    defs.extend(crate::memory::definitions());
    defs.extend(crate::stmt::plan_cache::definitions());
    defs
}

fn takes_value(name: &str) -> bool {
    let registry = Registry::new(
        variable_definitions(),
        &[Feature::Core, Feature::ThreadPool],
    );
    match registry.lookup(name) {
        Some(id) => !matches!(registry.def(id).ty, crate::vars::VarType::Bool),
        None => name == "plugin_load_add" || name == "plugin_load",
    }
}

/// The settings one option stands for: itself, except `log-bin=NAME`, mysqld's option (not
/// the read-only `log_bin` variable) that turns the binary log on and names its files.
fn make_settings(name: &str, value: Option<String>, origin: Origin) -> Vec<Setting> {
    let names_the_log = name.strip_prefix("loose_").unwrap_or(name) == "log_bin";
    let s = make_setting(name, value, origin);
    match &s.value {
        Some(basename) if names_the_log => vec![
            Setting {
                name: "log_bin_basename".into(),
                value: Some(basename.clone()),
                ..s.clone()
            },
            Setting {
                value: Some("ON".into()),
                ..s
            },
        ],
        _ => vec![s],
    }
}

fn make_setting(name: &str, value: Option<String>, origin: Origin) -> Setting {
    let mut name = name.to_string();
    let mut value = value;
    let mut loose = false;
    if let Some(rest) = name.strip_prefix("loose_") {
        name = rest.to_string();
        loose = true;
    }
    // mysqld's boolean prefixes.
    for (prefix, v) in [("skip_", "OFF"), ("disable_", "OFF"), ("enable_", "ON")] {
        if let Some(rest) = name.strip_prefix(prefix) {
            if value.is_none() && rest != "name_resolve" && rest != "networking" {
                name = rest.to_string();
                value = Some(v.to_string());
            } else if value.is_none() {
                // `skip-name-resolve` and `skip-networking` are variables themselves.
                value = Some("ON".to_string());
            }
            break;
        }
    }
    Setting {
        name,
        value,
        loose,
        origin,
    }
}

/// Reads a `my.cnf`-style file, appending settings from the server's groups.
pub fn read_option_file(path: &Path, cfg: &mut Config, depth: usize) -> Result<(), String> {
    if depth > 10 {
        return Err(format!("{}: !include nested too deeply", path.display()));
    }
    let text = std::fs::read_to_string(path)
        .map_err(|e| format!("could not open option file '{}': {e}", path.display()))?;
    let mut in_group = false;
    for (n, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') || line.starts_with(';') {
            continue;
        }
        if let Some(rest) = line.strip_prefix("!includedir") {
            let dir = Path::new(rest.trim());
            let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
                .map_err(|e| format!("{}: !includedir {}: {e}", path.display(), dir.display()))?
                .filter_map(|e| e.ok().map(|e| e.path()))
                .filter(|p| p.extension().is_some_and(|x| x == "cnf"))
                .collect();
            files.sort();
            for f in files {
                read_option_file(&f, cfg, depth + 1)?;
            }
            continue;
        }
        if let Some(rest) = line.strip_prefix("!include") {
            read_option_file(Path::new(rest.trim()), cfg, depth + 1)?;
            continue;
        }
        if line.starts_with('[') {
            let group = line
                .trim_start_matches('[')
                .trim_end_matches(']')
                .trim()
                .to_ascii_lowercase();
            in_group = GROUPS.contains(&group.as_str());
            continue;
        }
        if !in_group {
            continue;
        }
        let (name, value) = match line.split_once('=') {
            Some((k, v)) => (k.trim(), Some(unquote(strip_comment(v.trim())))),
            None => (line, None),
        };
        let name = normalize_name(name);
        if NON_VARIABLE_OPTIONS.contains(&name.as_str()) {
            continue;
        }
        cfg.settings.extend(make_settings(
            &name,
            value,
            Origin::File(path.to_path_buf(), n + 1),
        ));
    }
    Ok(())
}

fn strip_comment(v: &str) -> &str {
    if v.starts_with('"') || v.starts_with('\'') {
        return v;
    }
    match v.find(" #") {
        Some(i) => v[..i].trim_end(),
        None => v,
    }
}

fn unquote(v: &str) -> String {
    let b = v.as_bytes();
    if b.len() >= 2 && (b[0] == b'"' || b[0] == b'\'') && b[b.len() - 1] == b[0] {
        v[1..v.len() - 1].to_string()
    } else {
        v.to_string()
    }
}

/// Converts a configuration value to a raw value for the registry.
pub fn raw_value(v: &Option<String>) -> RawValue {
    match v {
        None => RawValue::Text("ON".into()),
        Some(s) => match parse_size(s) {
            Some(i) => RawValue::Int(i),
            None => RawValue::Text(s.clone()),
        },
    }
}

impl Setting {
    /// Where the setting came from, for messages.
    pub fn whence(&self) -> String {
        match &self.origin {
            Origin::File(p, line) => format!("{}:{line}", p.display()),
            Origin::CommandLine => "command line".into(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(a: &[&str]) -> Vec<String> {
        a.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn command_line_forms() {
        let c = parse_args(&args(&[
            "--port=3307",
            "--max-connections",
            "4000",
            "--skip-log-bin",
            "--wait_timeout=5",
            "--max-digest-length",
            "2048",
            "--thread-pool-size",
            "3",
            "--innodb-lock-wait-timeout",
            "7",
        ]))
        .unwrap();
        let s: Vec<(&str, Option<&str>)> = c
            .settings
            .iter()
            .map(|s| (s.name.as_str(), s.value.as_deref()))
            .collect();
        assert_eq!(
            s,
            vec![
                ("port", Some("3307")),
                ("max_connections", Some("4000")),
                ("log_bin", Some("OFF")),
                ("wait_timeout", Some("5")),
                ("max_digest_length", Some("2048")),
                ("thread_pool_size", Some("3")),
                ("innodb_lock_wait_timeout", Some("7")),
            ]
        );
    }

    #[test]
    fn option_file_groups_includes_and_loose() {
        let dir = std::env::temp_dir().join(format!("tpbed-cnf-{}", std::process::id()));
        std::fs::create_dir_all(dir.join("conf.d")).unwrap();
        std::fs::write(
            dir.join("conf.d/a.cnf"),
            "[mysqld]\nmax_connections = 300\n",
        )
        .unwrap();
        std::fs::write(
            dir.join("my.cnf"),
            format!(
                "[client]\nport=1\n[mysqld]\n# comment\nport = 3308 # trailing\nloose-foo-bar=1\nskip-name-resolve\nsql_mode=\"STRICT_TRANS_TABLES\"\n!includedir {}\n",
                dir.join("conf.d").display()
            ),
        )
        .unwrap();
        let c = parse_args(&args(&[
            &format!("--defaults-file={}", dir.join("my.cnf").display()),
            "--port=9",
        ]))
        .unwrap();
        let s: Vec<(&str, Option<&str>, bool)> = c
            .settings
            .iter()
            .map(|s| (s.name.as_str(), s.value.as_deref(), s.loose))
            .collect();
        assert_eq!(
            s,
            vec![
                ("port", Some("3308"), false),
                ("foo_bar", Some("1"), true),
                ("skip_name_resolve", Some("ON"), false),
                ("sql_mode", Some("STRICT_TRANS_TABLES"), false),
                ("max_connections", Some("300"), false),
                ("port", Some("9"), false),
            ]
        );
        std::fs::remove_dir_all(dir).unwrap();
    }
}
