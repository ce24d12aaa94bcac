//! Lock conformance: the same cases of two sessions (A holds a statement in an open
//! transaction, B runs another) on every target, and tpbed's outcome for B compared with a
//! reference server's case by case; differences a known MySQL-vs-MariaDB difference explains
//! are counted apart, any other one makes the verdict "differs".

pub(crate) mod cases;
pub(crate) mod report;
pub(crate) mod run;

use serde::Deserialize;

use crate::lab::pages::ExpResult;
use crate::lab::spec::Experiment;
use crate::lab::target::{Flavour, Live};
use crate::lab::verdict::{missing, record, Measurements};

use cases::{generate, Case, Size};

/// `[conformance]` in an experiment file.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct Spec {
    /// `small` (a few hundred cases) or `large` (every combination).
    pub(crate) cases: String,
    /// `innodb_lock_wait_timeout` of both sessions, in seconds.
    #[serde(default = "one")]
    pub(crate) lock_wait_timeout: u64,
    /// Run only the cases with these names (all when empty).
    #[serde(default)]
    pub(crate) only: Vec<String>,
}

fn one() -> u64 {
    1
}

impl Spec {
    /// Checks the section.
    pub(crate) fn check(&self) -> Result<(), String> {
        self.size()?;
        if self.lock_wait_timeout == 0 {
            return Err("[conformance] lock_wait_timeout must be at least 1 (second)".into());
        }
        if !self.only.is_empty() {
            let names: Vec<String> = generate(self.size()?).iter().map(Case::name).collect();
            if let Some(o) = self.only.iter().find(|o| !names.contains(o)) {
                return Err(format!(
                    "[conformance] only: no case is named {o:?} at cases = {:?}",
                    self.cases
                ));
            }
        }
        Ok(())
    }

    fn size(&self) -> Result<Size, String> {
        match self.cases.as_str() {
            "small" => Ok(Size::Small),
            "large" => Ok(Size::Large),
            other => Err(format!(
                "[conformance] cases = {other:?}: expected \"small\" or \"large\""
            )),
        }
    }

    /// The cases this section runs, in order.
    pub(crate) fn cases(&self) -> Vec<Case> {
        let all = generate(self.size().unwrap_or(Size::Small));
        if self.only.is_empty() {
            return all;
        }
        all.into_iter()
            .filter(|c| self.only.contains(&c.name()))
            .collect()
    }
}

/// What one target gave: its measurements so far and every case's result.
pub(crate) struct TargetCases {
    /// `cases` (how many ran).
    pub(crate) measurements: Measurements,
    /// Every case, in order.
    pub(crate) results: Vec<run::CaseResult>,
}

/// The measurements a conformance experiment's rules may read.
pub(crate) const MEASUREMENTS: &[&str] = &[
    "cases",
    "agreeing",
    "known_differences",
    "unexplained_differences",
];

/// Runs every case on `live`.
pub(crate) fn run_target(
    spec: &Spec,
    live: &Live,
    tick: &dyn Fn(&str),
) -> Result<TargetCases, String> {
    let cases = spec.cases();
    let results = run::run_cases(&cases, live, spec.lock_wait_timeout, tick)?;
    let mut m = Measurements::new();
    record(&mut m, "cases", results.len() as f64);
    Ok(TargetCases {
        measurements: m,
        results,
    })
}

/// After every target ran the cases: compares tpbed (else the first target) with each other
/// target, records `agreeing`, `known_differences` and `unexplained_differences`, judges the
/// experiment's rules again and writes the comparison into the report.
pub(crate) fn judge(er: &mut ExpResult, exp: &Experiment, spec: &Spec) {
    let cases = spec.cases();
    let ran: Vec<usize> = (0..er.targets.len())
        .filter(|&i| !er.targets[i].cases.is_empty())
        .collect();
    let Some(&subject) = ran
        .iter()
        .find(|&&i| er.targets[i].flavour == Some(Flavour::Tpbed))
        .or(ran.first())
    else {
        return;
    };
    let mut total = (0usize, 0usize, 0usize);
    let mut md = String::new();
    let mut per_ref = Vec::new();
    for &i in ran.iter().filter(|&&i| i != subject) {
        let (s, r) = (&er.targets[subject], &er.targets[i]);
        let c = report::compare(&cases, &s.cases, &r.cases, &r.target, r.flavour);
        total.0 += c.agreeing;
        total.1 += c.known();
        total.2 += c.unexplained();
        md.push_str(&report::markdown(&c));
        per_ref.push((i, c));
    }
    let subject_name = er.targets[subject].target.clone();
    if per_ref.is_empty() {
        let t = &mut er.targets[subject];
        for name in ["agreeing", "known_differences", "unexplained_differences"] {
            missing(
                &mut t.measurements,
                name,
                "no reference target ran the cases (give a MariaDB or MySQL target beside tpbed)",
            );
        }
        t.extra_md = report::outcomes_markdown(&t.target, &t.cases);
    } else {
        let t = &mut er.targets[subject];
        record(&mut t.measurements, "agreeing", total.0 as f64);
        record(&mut t.measurements, "known_differences", total.1 as f64);
        record(
            &mut t.measurements,
            "unexplained_differences",
            total.2 as f64,
        );
        t.extra_md = md;
        for (i, c) in per_ref {
            let t = &mut er.targets[i];
            record(&mut t.measurements, "agreeing", c.agreeing as f64);
            record(&mut t.measurements, "known_differences", c.known() as f64);
            record(
                &mut t.measurements,
                "unexplained_differences",
                c.unexplained() as f64,
            );
            t.extra_md = format!("The comparison with {subject_name} is in its section.\n");
        }
    }
    for &i in &ran {
        let t = &mut er.targets[i];
        t.outcomes = exp
            .verdict
            .iter()
            .map(|r| r.get_ref().judge(&t.measurements))
            .collect();
        t.combine_outcomes();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(cases: &str, only: &[&str]) -> Spec {
        Spec {
            cases: cases.into(),
            lock_wait_timeout: 1,
            only: only.iter().map(|s| s.to_string()).collect(),
        }
    }

    #[test]
    fn only_keeps_the_named_cases_and_refuses_unknown_names() {
        let gp =
            "pk/rr/A: UPDATE t SET v = v + 1 WHERE k = 20/B: INSERT INTO t (k, v) VALUES (15, 0)";
        let s = spec("large", &[gp]);
        assert_eq!(s.check(), Ok(()));
        let kept = s.cases();
        assert_eq!(kept.len(), 1);
        assert_eq!(kept[0].name(), gp);
        assert!(spec("large", &["pk/rr/A: nothing"])
            .check()
            .unwrap_err()
            .contains("no case is named"));
        assert!(spec("huge", &[])
            .check()
            .unwrap_err()
            .contains("\"small\" or \"large\""));
        assert_eq!(spec("small", &[]).cases().len(), 288);
    }
}
