//! Server settings in each flavour's own terms: experiments name MySQL's variables and units
//! (tpbed uses MySQL's), and a MariaDB target gets its counterpart where one exists. A setting
//! with no counterpart goes to the server unchanged, so the server itself accepts it, ignores
//! it (a `loose-` one), or refuses it at start-up with its own reason.

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
}
