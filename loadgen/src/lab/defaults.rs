//! Which server variables differ from the server's defaults, read where each flavour keeps its
//! defaults: MariaDB's `information_schema.SYSTEM_VARIABLES.DEFAULT_VALUE`; MySQL's
//! `performance_schema.variables_info`, which says where each value came from (not the default
//! value itself, which only `mysqld --no-defaults --verbose --help` prints on the server's
//! machine); tpbed keeps no defaults a client can read, so the lab starts the same
//! tpbed-server binary with nothing but a port and compares its `SHOW GLOBAL VARIABLES`.
//! Where no default can be known, the report says so instead of listing nothing.

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use serde::Serialize;

use crate::blocking::Blocking;
use crate::conn::{Login, WireFactory};
use crate::lab::target::{Flavour, Live};
use crate::sweep::Managed;

/// Variables of a tpbed-server that differ between two instances of the same build for
/// reasons other than settings: the reference runs on another port, in its own data folder
/// (where the query logs' default files are).
const INSTANCE_VARS: &[&str] = &["port", "datadir", "general_log_file", "slow_query_log_file"];

/// What the report says about a target's variables against its defaults.
#[derive(Debug, Clone, Default, Serialize)]
pub(crate) struct NonDefaults {
    /// Where the defaults came from, or why they cannot be known.
    pub(crate) source: String,
    /// Whether the defaults could be read (`source` is then a reason, `differs` empty).
    pub(crate) known: bool,
    /// `name=value (default D)` or `name=value (set by SOURCE)`, by name.
    pub(crate) differs: Vec<String>,
}

/// Whether two variable values are the same setting (case, and numbers written differently).
pub(crate) fn same_value(a: &str, b: &str) -> bool {
    if a.eq_ignore_ascii_case(b) {
        return true;
    }
    match (a.trim().parse::<f64>(), b.trim().parse::<f64>()) {
        (Ok(x), Ok(y)) => x == y,
        _ => false,
    }
}

/// From MariaDB's `VARIABLE_NAME, GLOBAL_VALUE, DEFAULT_VALUE` rows: the variables whose
/// global value is not the default, and how many have no default to compare with.
pub(crate) fn from_mariadb(rows: &[Vec<Option<String>>]) -> (Vec<String>, usize) {
    let mut out = Vec::new();
    let mut unknown = 0;
    for r in rows {
        let cell = |i: usize| r.get(i).cloned().flatten();
        let (Some(name), Some(value)) = (cell(0), cell(1)) else {
            continue;
        };
        match cell(2) {
            // an empty default is one the server works out at start-up (paths, sizes)
            None => unknown += 1,
            Some(d) if d.is_empty() => unknown += 1,
            Some(d) if !same_value(&value, &d) => {
                out.push(format!("{}={value} (default {d})", name.to_lowercase()))
            }
            Some(_) => {}
        }
    }
    out.sort();
    (out, unknown)
}

/// From MySQL's `VARIABLE_NAME, VARIABLE_VALUE, VARIABLE_SOURCE` rows of the variables not
/// `COMPILED` in.
pub(crate) fn from_mysql(rows: &[Vec<Option<String>>]) -> Vec<String> {
    let mut out: Vec<String> = rows
        .iter()
        .filter_map(|r| {
            let name = r.first()?.clone()?;
            let value = r.get(1)?.clone().unwrap_or_else(|| "NULL".into());
            let source = r.get(2)?.clone()?;
            Some(format!(
                "{}={value} (set by {})",
                name.to_lowercase(),
                source.to_lowercase()
            ))
        })
        .collect();
    out.sort();
    out
}

/// The variables of `now` that differ from `defaults` (both `SHOW GLOBAL VARIABLES`).
pub(crate) fn compare(now: &[(String, String)], defaults: &[(String, String)]) -> Vec<String> {
    let mut out: Vec<String> = now
        .iter()
        .filter(|(k, _)| !INSTANCE_VARS.contains(&k.as_str()))
        .filter_map(|(k, v)| match defaults.iter().find(|(d, _)| d == k) {
            Some((_, d)) if same_value(v, d) => None,
            Some((_, d)) => Some(format!("{k}={v} (default {d})")),
            None => Some(format!("{k}={v} (not in the defaults)")),
        })
        .collect();
    out.sort();
    out
}

/// `SHOW GLOBAL VARIABLES` of the tpbed-server at `bin` started with no settings but a port
/// and `extra`.
fn tpbed_defaults(
    bin: &Path,
    extra: &str,
    login: &Login,
    log_dir: &Path,
    wires: &Arc<WireFactory>,
) -> Result<Vec<(String, String)>, String> {
    let log = log_dir.join("defaults-reference.server.log");
    let cmd = format!(
        "'{}' --port={{port}} {extra}",
        bin.display().to_string().replace('\'', "'\\''")
    );
    let mut m = Managed::start(&cmd, &log)?;
    let no_db = Login {
        db: String::new(),
        ..login.clone()
    };
    m.wait_ready(&no_db, wires, Duration::from_secs(30))?;
    let mut c = Blocking::connect(m.addr, &no_db, wires)?;
    let rows = c.rows("SHOW GLOBAL VARIABLES")?;
    c.quit();
    Ok(crate::gauges::pairs(&rows))
}

/// Reads which variables of `live` differ from its flavour's defaults.
pub(crate) fn non_defaults(live: &Live) -> NonDefaults {
    let unknown = |why: String| NonDefaults {
        source: why,
        known: false,
        differs: Vec::new(),
    };
    let mut c = match live.connect() {
        Ok(c) => c,
        Err(e) => return unknown(format!("defaults not read: {e}")),
    };
    let r = match live.flavour {
        Flavour::MariaDb => c
            .rows(
                "SELECT VARIABLE_NAME, GLOBAL_VALUE, DEFAULT_VALUE \
                 FROM information_schema.SYSTEM_VARIABLES WHERE GLOBAL_VALUE IS NOT NULL",
            )
            .map(|rows| {
                let (differs, no_default) = from_mariadb(&rows);
                NonDefaults {
                    source: format!(
                        "information_schema.SYSTEM_VARIABLES.DEFAULT_VALUE \
                         ({no_default} variables have no default there and are not compared)"
                    ),
                    known: true,
                    differs,
                }
            }),
        Flavour::MySql => c
            .rows(
                "SELECT v.VARIABLE_NAME, g.VARIABLE_VALUE, v.VARIABLE_SOURCE \
                 FROM performance_schema.variables_info v \
                 JOIN performance_schema.global_variables g USING (VARIABLE_NAME) \
                 WHERE v.VARIABLE_SOURCE <> 'COMPILED'",
            )
            .map(|rows| NonDefaults {
                source: "performance_schema.variables_info: every variable not COMPILED in, \
                         with where it was set (the default values themselves are printed \
                         only by mysqld --no-defaults --verbose --help on the server's machine; \
                         values the server sized at start-up count as COMPILED)"
                    .into(),
                known: true,
                differs: from_mysql(&rows),
            }),
        Flavour::Tpbed => match live.binary() {
            None => Ok(unknown(
                "defaults cannot be known: tpbed-server keeps no default values a client can \
                 read, and the lab compares with a server it starts from the same binary, \
                 which it does not have for a running server"
                    .into(),
            )),
            Some(bin) => c.rows("SHOW GLOBAL VARIABLES").and_then(|rows| {
                let now = crate::gauges::pairs(&rows);
                let reference = |extra: &str| {
                    tpbed_defaults(bin, extra, &live.login, live.log_dir(), live.wires())
                };
                let mut defaults = reference("")?;
                let mut how = "started with only --port".to_string();
                // the pool's variables exist only in pool mode: their defaults come from a
                // second reference started in the target's mode
                let mode = now.iter().find(|(k, _)| k == "thread_handling");
                let default_mode = defaults.iter().find(|(k, _)| k == "thread_handling");
                if let (Some((_, m)), Some((_, d))) = (mode, default_mode) {
                    if m != d {
                        let more = reference(&format!("--thread-handling={m}"))?;
                        for (k, v) in more {
                            if !defaults.iter().any(|(d, _)| *d == k) {
                                defaults.push((k, v));
                            }
                        }
                        how = format!("{how}, and with only --thread-handling={m} for the variables of that mode");
                    }
                }
                Ok(NonDefaults {
                    source: format!(
                        "SHOW GLOBAL VARIABLES of {} {how} (port and datadir not compared)",
                        bin.display()
                    ),
                    known: true,
                    differs: compare(&now, &defaults),
                })
            }),
        },
    };
    c.quit();
    r.unwrap_or_else(|e| unknown(format!("defaults cannot be known: {e}")))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(cells: &[Option<&str>]) -> Vec<Option<String>> {
        cells.iter().map(|c| c.map(str::to_string)).collect()
    }

    #[test]
    fn each_flavour_names_what_differs_from_its_defaults() {
        let (d, unknown) = from_mariadb(&[
            row(&[Some("MAX_CONNECTIONS"), Some("4000"), Some("151")]),
            row(&[
                Some("THREAD_HANDLING"),
                Some("pool-of-threads"),
                Some("one-thread-per-connection"),
            ]),
            row(&[Some("AUTOCOMMIT"), Some("ON"), Some("on")]),
            row(&[Some("LONG_QUERY_TIME"), Some("10.000000"), Some("10")]),
            row(&[Some("DATADIR"), Some("/tmp/x/"), None]),
            row(&[Some("BASEDIR"), Some("/usr/"), Some("")]),
        ]);
        assert_eq!(
            d,
            [
                "max_connections=4000 (default 151)",
                "thread_handling=pool-of-threads (default one-thread-per-connection)"
            ]
        );
        assert_eq!(unknown, 2);
        assert_eq!(
            from_mysql(&[row(&[
                Some("max_connections"),
                Some("4000"),
                Some("COMMAND_LINE")
            ])]),
            ["max_connections=4000 (set by command_line)"]
        );
        let p = |v: &[(&str, &str)]| -> Vec<(String, String)> {
            v.iter()
                .map(|(a, b)| (a.to_string(), b.to_string()))
                .collect()
        };
        assert_eq!(
            compare(
                &p(&[
                    ("port", "40001"),
                    ("max_connections", "4000"),
                    ("autocommit", "ON"),
                    ("x", "1")
                ]),
                &p(&[
                    ("port", "3306"),
                    ("max_connections", "151"),
                    ("autocommit", "ON")
                ])
            ),
            [
                "max_connections=4000 (default 151)",
                "x=1 (not in the defaults)"
            ]
        );
    }
}
