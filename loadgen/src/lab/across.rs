//! Rules that hold one target's figures against another's from the same run. A measurement
//! name `TARGET:NAME` reads NAME as target TARGET measured it (`mariadb:pool.tps@8`), so
//! `a = "pool.tps@8"`, `b = "mariadb:pool.tps@8"`, `min = 1` asks for at least MariaDB's TPS.
//! Such a rule is judged once every target of the experiment has run, on each target it does
//! not name; the target it names is its reference, and the rule is left out of that target's
//! outcomes and verdict.

use std::collections::BTreeSet;

use crate::lab::pages::ExpResult;
use crate::lab::spec::Experiment;
use crate::lab::verdict::{Measurements, Outcome, Rule, Verdict};

/// The target a name is qualified with, if any, and the measurement name itself.
pub(crate) fn split(name: &str) -> (Option<&str>, &str) {
    match name.split_once(':') {
        Some((target, rest)) => (Some(target), rest),
        None => (None, name),
    }
}

/// The targets a rule reads measurements of, besides the one judging it.
pub(crate) fn references(rule: &Rule) -> BTreeSet<String> {
    rule.names()
        .iter()
        .filter_map(|n| split(n).0.map(str::to_string))
        .collect()
}

/// Judges every rule of `exp` that names another target, on each target of `er` whose run
/// measured something (a target that stopped keeps the verdict it stopped with).
pub(crate) fn judge(er: &mut ExpResult, exp: &Experiment) {
    let rules: Vec<(usize, &Rule, BTreeSet<String>)> = exp
        .verdict
        .iter()
        .enumerate()
        .map(|(i, r)| (i, r.get_ref(), references(r.get_ref())))
        .filter(|(_, _, refs)| !refs.is_empty())
        .collect();
    if rules.is_empty() {
        return;
    }
    let ran: BTreeSet<String> = er.targets.iter().map(|t| t.target.clone()).collect();
    let mut qualified = Measurements::new();
    for t in &er.targets {
        for (k, v) in &t.measurements {
            qualified.insert(format!("{}:{k}", t.target), v.clone());
        }
    }
    for t in &mut er.targets {
        if t.measurements.is_empty() || t.outcomes.len() != exp.verdict.len() {
            continue;
        }
        let mut m = t.measurements.clone();
        m.extend(qualified.iter().map(|(k, v)| (k.clone(), v.clone())));
        let mut reference_of = Vec::new();
        for (i, rule, refs) in &rules {
            if refs.contains(&t.target) {
                reference_of.push(*i);
                continue;
            }
            t.outcomes[*i] = match refs.iter().find(|r| !ran.contains(*r)) {
                Some(absent) => Outcome {
                    rule: rule.describe(),
                    measured: "-".into(),
                    verdict: Verdict::CannotRun(format!("no target named {absent} in this run")),
                },
                None => rule.judge(&m),
            };
        }
        for i in reference_of.into_iter().rev() {
            t.outcomes.remove(i);
        }
        t.combine_outcomes();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lab::run::{cannot, Loaded};
    use crate::lab::spec::{parse_text, Scale};
    use crate::lab::verdict::record;

    const EXP: &str = r#"
name = "x"
[matrix]
workload = "queue"
vary = "workers"
values = [8]
time_s = 1
columns = ["jobs_per_s"]
[[matrix.config]]
name = "pool"
[[verdict]]
rule = "ratio"
a = "pool.jobs_per_s@8"
b = "mariadb:pool.jobs_per_s@8"
min = 1.0
[[verdict]]
rule = "count"
value = "pool.jobs_per_s@8"
at_least = 1
"#;

    /// The experiment's result with one run per (target, jobs per second in each pass).
    fn ran(targets: &[(&str, &[f64])]) -> (ExpResult, Experiment) {
        let (exp, text) = parse_text(EXP, Scale::Small, "x.toml").unwrap();
        let l = Loaded {
            exp: exp.clone(),
            text,
            origin: "x.toml".into(),
        };
        let mut er = ExpResult::new(&l);
        for (name, passes) in targets {
            let mut t = cannot(name, "-", &exp, 0.0);
            for v in *passes {
                record(&mut t.measurements, "pool.jobs_per_s@8", *v);
            }
            t.outcomes = exp
                .verdict
                .iter()
                .map(|r| r.get_ref().judge(&t.measurements))
                .collect();
            er.targets.push(t);
        }
        (er, exp)
    }

    #[test]
    fn a_qualified_name_reads_the_other_target_and_the_reference_does_not_judge_it() {
        let (mut er, exp) = ran(&[("tpbed", &[90.0, 91.0]), ("mariadb", &[100.0, 101.0])]);
        judge(&mut er, &exp);
        let tpbed = &er.targets[0];
        assert_eq!(tpbed.outcomes.len(), 2);
        assert!(matches!(tpbed.outcomes[0].verdict, Verdict::Differs(_)));
        let measured = &tpbed.outcomes[0].measured;
        assert!(measured.starts_with("90.50 / 100.5 = 0.9005"), "{measured}");
        assert!(matches!(tpbed.verdict, Verdict::Differs(_)));
        // MariaDB is the comparison's reference: only its own rule is left
        let mariadb = &er.targets[1];
        assert_eq!(mariadb.outcomes.len(), 1);
        assert_eq!(mariadb.verdict, Verdict::Reproduces);

        let (mut er, exp) = ran(&[("tpbed", &[120.0, 121.0]), ("mariadb", &[100.0, 101.0])]);
        judge(&mut er, &exp);
        assert_eq!(er.targets[0].verdict, Verdict::Reproduces);
    }

    #[test]
    fn a_reference_that_did_not_run_cannot_be_compared_with() {
        let (mut er, exp) = ran(&[("tpbed", &[90.0])]);
        judge(&mut er, &exp);
        let v = &er.targets[0].outcomes[0].verdict;
        assert_eq!(
            *v,
            Verdict::CannotRun("no target named mariadb in this run".into())
        );
    }

    #[test]
    fn a_qualified_name_is_checked_against_what_the_experiment_records() {
        let bad = EXP.replace("mariadb:pool.jobs_per_s@8", "mariadb:pool.jobs@8");
        let err = parse_text(&bad, Scale::Small, "x.toml").unwrap_err();
        assert!(err.contains("mariadb:pool.jobs@8"), "{err}");
    }
}
