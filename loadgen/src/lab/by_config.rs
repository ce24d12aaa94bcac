//! The report's side-by-side view of an experiment that lists its configurations
//! (`config_each`): a column per configuration, its own verdict on top (the rules it is the
//! subject of), then the median of each measurement; a measurement a configuration could not
//! give is `n/a`, with the reason under the table, never a number.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use crate::lab::matrix::fmt_cell;
use crate::lab::verdict::{Measured, Measurements, Outcome, Rule, Verdict};

/// Each configuration's verdict: the worst of the outcomes of the rules whose subject
/// ([`Rule::subject`]) it is, or `None` when no rule judges it (a baseline).
pub(crate) fn verdicts(
    configs: &[String],
    rules: &[Rule],
    outcomes: &[Outcome],
) -> Vec<Option<Verdict>> {
    configs
        .iter()
        .map(|c| {
            let mine: Vec<Verdict> = rules
                .iter()
                .zip(outcomes)
                .filter(|(r, _)| r.subject().as_deref() == Some(c.as_str()))
                .map(|(_, o)| o.verdict.clone())
                .collect();
            (!mine.is_empty()).then(|| Verdict::combine(&mine))
        })
        .collect()
}

/// The table: a column per configuration; a row `verdict`, then a row per name in `rows`
/// (the median of `CONFIG.ROW`); then each reason a cell is `n/a`, with the cells it explains.
pub(crate) fn table(
    configs: &[String],
    rows: &[String],
    m: &Measurements,
    rules: &[Rule],
    outcomes: &[Outcome],
) -> String {
    let mut o = String::from("| |");
    let mut sep = String::from("|---|");
    for c in configs {
        let _ = write!(o, " {c} |");
        sep.push_str("---:|");
    }
    let _ = writeln!(o, "\n{sep}");
    o.push_str("| **verdict** |");
    for (c, v) in configs.iter().zip(verdicts(configs, rules, outcomes)) {
        // a baseline the target could not run at all says so, not `(baseline)`
        let none = !rows.is_empty()
            && rows
                .iter()
                .all(|r| matches!(m.get(&format!("{c}.{r}")), Some(Measured::Missing(_))));
        let word = match &v {
            Some(v) => v.word(),
            None if none => "cannot run here",
            None => "(baseline)",
        };
        let _ = write!(o, " **{word}** |");
    }
    o.push('\n');
    let mut reasons: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for row in rows {
        let _ = write!(o, "| {row} |");
        for c in configs {
            let key = format!("{c}.{row}");
            if let Some(Measured::Missing(why)) = m.get(&key) {
                reasons.entry(why.clone()).or_default().push(key.clone());
            }
            let _ = write!(o, " {} |", fmt_cell(m, &key));
        }
        o.push('\n');
    }
    if !reasons.is_empty() {
        o.push_str("\nMissing (`n/a`), and why:\n\n");
        for (why, keys) in reasons {
            let shown: Vec<&str> = keys.iter().take(6).map(String::as_str).collect();
            let more = keys.len().saturating_sub(shown.len());
            let _ = write!(o, "- {}: `{}`", why.replace('|', "\\|"), shown.join("`, `"));
            if more > 0 {
                let _ = write!(o, " and {more} more");
            }
            o.push('\n');
        }
    }
    o
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lab::verdict::{missing, record};

    fn ratio(a: &str, b: &str, max: f64) -> Rule {
        Rule::Ratio {
            a: a.into(),
            b: b.into(),
            min: None,
            max: Some(max),
        }
    }

    #[test]
    fn each_configuration_gets_the_verdict_of_its_own_rules_and_missing_cells_say_why() {
        let mut m = Measurements::new();
        for (k, v) in [
            ("per-conn.max_ms@8", 100.0),
            ("mysql.max_ms@8", 40.0),
            ("fifo.max_ms@8", 90.0),
            ("mysql.tp_stalls@8", 3.0),
            ("fifo.tp_stalls@8", 0.0),
        ] {
            record(&mut m, k, v);
        }
        missing(&mut m, "per-conn.tp_stalls@8", "no pool here");
        let rules = vec![
            ratio("mysql.max_ms@8", "per-conn.max_ms@8", 0.6),
            ratio("fifo.max_ms@8", "per-conn.max_ms@8", 0.6),
        ];
        let outcomes: Vec<Outcome> = rules.iter().map(|r| r.judge(&m)).collect();
        let configs: Vec<String> = ["per-conn", "mysql", "fifo"].map(String::from).to_vec();
        let v = verdicts(&configs, &rules, &outcomes);
        assert_eq!(v[0], None);
        assert_eq!(v[1], Some(Verdict::Reproduces));
        assert!(matches!(v[2], Some(Verdict::Differs(_))), "{v:?}");
        let t = table(
            &configs,
            &["max_ms@8".into(), "tp_stalls@8".into()],
            &m,
            &rules,
            &outcomes,
        );
        assert!(t.starts_with("| | per-conn | mysql | fifo |\n"), "{t}");
        assert!(
            t.contains("| **verdict** | **(baseline)** | **reproduces** | **differs** |"),
            "{t}"
        );
        assert!(t.contains("| tp_stalls@8 | n/a | 3.00 | 0.000 |"), "{t}");
        assert!(t.contains("- no pool here: `per-conn.tp_stalls@8`"), "{t}");
        // a baseline with nothing measured could not run
        let mut gone = Measurements::new();
        missing(&mut gone, "per-conn.max_ms@8", "tpbed's own setting");
        let t = table(&configs[..1], &["max_ms@8".into()], &gone, &[], &[]);
        assert!(t.contains("| **verdict** | **cannot run here** |"), "{t}");
    }
}
