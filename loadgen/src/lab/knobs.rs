//! Server settings in each flavour's own terms: experiments name MySQL's variables and units
//! (tpbed uses MySQL's), and a MariaDB target gets its counterpart where one exists. A setting
//! with no counterpart goes to the server unchanged, so the server itself accepts it, ignores
//! it (a `loose-` one), or refuses it at start-up with its own reason; tpbed's own settings
//! (`tpbed_*`, not `loose-`) make a configuration *cannot run here* on another server, except a
//! scheduling policy that reproduces that server's own pool.

use std::collections::BTreeMap;

use crate::lab::target::{bare, Flavour};

/// How a MySQL variable reads on MariaDB.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Counterpart {
    /// MySQL's name (tpbed's too).
    mysql: &'static str,
    /// MariaDB's name.
    mariadb: &'static str,
    /// MariaDB's value = MySQL's value x this (1: the same unit).
    factor: u64,
    /// Why, for the report.
    why: &'static str,
}

/// MySQL variables whose MariaDB counterpart differs in name or unit. Not listed (so passed
/// as they are): `thread_pool_max_transactions_limit` and
/// `thread_pool_query_threads_per_group`, which MariaDB's pool does not have (its
/// `thread_pool_oversubscribe` counts threads beyond the first, at least 1, so no value of it
/// means "one query thread per group").
const MARIADB: &[Counterpart] = &[
    Counterpart {
        mysql: "thread_pool_stall_limit",
        mariadb: "thread_pool_stall_limit",
        factor: 10,
        why: "MySQL counts it in 10 ms units, MariaDB in ms",
    },
    Counterpart {
        mysql: "transaction_isolation",
        mariadb: "tx_isolation",
        factor: 1,
        why: "MariaDB before 11.1 names it tx_isolation (later ones keep the name)",
    },
];

/// `tpbed_thread_pool_policy` values that are another flavour's own pool, decision for
/// decision: on that flavour the setting is dropped (its pool-of-threads is the reference).
const OWN_POOL: &[(Flavour, &str, &str)] = &[
    (
        Flavour::MariaDb,
        "mariadb",
        "MariaDB's own pool-of-threads, which tpbed's mariadb policy reproduces",
    ),
    (
        Flavour::MySql,
        "mysql",
        "MySQL's own thread-pool plugin, which tpbed's mysql policy reproduces",
    ),
];

/// A tpbed-only setting (`tpbed_*`) on another flavour: `Ok(note)` when it stands for that
/// server's own behaviour (so it is not set), `Err(why)` when the server has nothing like it.
fn tpbed_only(name: &str, value: &str, flavour: Flavour) -> Result<String, String> {
    if name == "tpbed_thread_pool_policy" {
        if let Some((_, _, what)) = OWN_POOL
            .iter()
            .find(|(f, p, _)| *f == flavour && p.eq_ignore_ascii_case(value.trim()))
        {
            return Ok(format!("{name}={value} not set: the server runs {what}"));
        }
    }
    let server = match flavour {
        Flavour::MariaDb => "MariaDB",
        Flavour::MySql => "MySQL",
        Flavour::Tpbed => "tpbed",
    };
    Err(format!(
        "{name}={value} is tpbed's own setting; {server} has no counterpart"
    ))
}

/// `settings` as `flavour` names them, with a line for each one translated.
pub(crate) fn for_flavour(
    settings: &BTreeMap<String, String>,
    flavour: Flavour,
) -> Result<(BTreeMap<String, String>, Vec<String>), String> {
    let table: &[Counterpart] = match flavour {
        Flavour::MariaDb => MARIADB,
        Flavour::MySql | Flavour::Tpbed => &[],
    };
    let mut out = BTreeMap::new();
    let mut notes = Vec::new();
    for (k, v) in settings {
        let (name, loose) = bare(k);
        if flavour != Flavour::Tpbed && !loose && name.starts_with("tpbed_") {
            notes.push(tpbed_only(name, v, flavour)?);
            continue;
        }
        let Some(c) = table.iter().find(|c| c.mysql == name) else {
            out.insert(k.clone(), v.clone());
            continue;
        };
        let value = if c.factor == 1 {
            v.clone()
        } else {
            let n: u64 = v
                .trim()
                .parse()
                .map_err(|_| format!("{name}={v}: expected a whole number"))?;
            (n * c.factor).to_string()
        };
        let key = if loose {
            format!("loose-{}", c.mariadb)
        } else {
            c.mariadb.to_string()
        };
        notes.push(format!(
            "{name}={v} set as {}={value} ({})",
            c.mariadb, c.why
        ));
        out.insert(key, value);
    }
    Ok((out, notes))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    #[test]
    fn mariadb_gets_its_own_names_and_units_and_others_pass_unchanged() {
        let t3 = s(&[
            ("thread_handling", "pool-of-threads"),
            ("thread_pool_size", "1"),
            ("loose-thread_pool_query_threads_per_group", "1"),
            ("thread_pool_stall_limit", "6"),
        ]);
        let (m, notes) = for_flavour(&t3, Flavour::MariaDb).unwrap();
        assert_eq!(m["thread_pool_stall_limit"], "60");
        assert_eq!(m["thread_handling"], "pool-of-threads");
        assert_eq!(m["loose-thread_pool_query_threads_per_group"], "1");
        assert_eq!(notes.len(), 1);
        assert!(notes[0].contains("in ms"), "{notes:?}");
        let (m, notes) = for_flavour(&t3, Flavour::Tpbed).unwrap();
        assert_eq!(m, t3);
        assert!(notes.is_empty());
        assert_eq!(for_flavour(&t3, Flavour::MySql).unwrap().0, t3);
        // no counterpart: the server decides (and refuses with its reason)
        let t4 = s(&[("thread_pool_max_transactions_limit", "2")]);
        assert_eq!(for_flavour(&t4, Flavour::MariaDb).unwrap().0, t4);
        let iso = s(&[("loose-transaction_isolation", "READ-COMMITTED")]);
        let (m, _) = for_flavour(&iso, Flavour::MariaDb).unwrap();
        assert_eq!(m["loose-tx_isolation"], "READ-COMMITTED");
        let bad = s(&[("thread_pool_stall_limit", "six")]);
        assert!(for_flavour(&bad, Flavour::MariaDb).is_err());
    }

    #[test]
    fn tpbed_settings_elsewhere_are_the_servers_own_pool_or_cannot_run() {
        let pool = |policy: &str| {
            s(&[
                ("thread_handling", "pool-of-threads"),
                ("tpbed_thread_pool_policy", policy),
            ])
        };
        // the policy that reproduces MariaDB's pool is MariaDB's pool: dropped, with a note
        let (m, notes) = for_flavour(&pool("mariadb"), Flavour::MariaDb).unwrap();
        assert_eq!(m, s(&[("thread_handling", "pool-of-threads")]));
        assert!(
            notes[0].contains("MariaDB's own pool-of-threads"),
            "{notes:?}"
        );
        let (m, _) = for_flavour(&pool("mysql"), Flavour::MySql).unwrap();
        assert!(!m.contains_key("tpbed_thread_pool_policy"));
        // any other policy, and any other tpbed setting, has no counterpart there
        for (policy, flavour) in [
            ("fifo", Flavour::MariaDb),
            ("mysql", Flavour::MariaDb),
            ("mariadb", Flavour::MySql),
        ] {
            let e = for_flavour(&pool(policy), flavour).unwrap_err();
            assert!(e.contains("tpbed's own setting; M"), "{e}");
        }
        let rails = s(&[("tpbed_thread_pool_rails", "")]);
        assert!(for_flavour(&rails, Flavour::MariaDb).is_err());
        // a loose one goes to the server, which ignores it; tpbed takes all of them
        let loose = s(&[("loose-tpbed_thread_pool_io", "ring")]);
        assert_eq!(for_flavour(&loose, Flavour::MariaDb).unwrap().0, loose);
        assert_eq!(
            for_flavour(&pool("fifo"), Flavour::Tpbed).unwrap().0,
            pool("fifo")
        );
    }
}
