//! Compares tpbed's case outcomes with a reference server's: agreeing cases, differences that
//! are known differences between MySQL and MariaDB (MySQL's behaviour, which tpbed follows,
//! matched by a rule and listed with its source), and every other difference, which is a bug.

use std::fmt::Write as _;

use crate::lab::conformance::cases::{Case, Iso, Mode, Pred, Shape, Verb};
use crate::lab::conformance::run::{CaseResult, Outcome};
use crate::lab::target::Flavour;

/// A known difference between MySQL and MariaDB: tpbed follows MySQL, so a case it explains
/// is not a bug when the reference is MariaDB.
pub(crate) struct Known {
    /// Short name.
    pub(crate) name: &'static str,
    /// What MySQL (and so tpbed) does that MariaDB does not.
    pub(crate) mysql: &'static str,
    /// Where MySQL's behaviour is documented.
    pub(crate) source: &'static str,
    /// Whether it explains this case's difference (case, tpbed's result, MariaDB's).
    explains: fn(&Case, &CaseResult, &CaseResult) -> bool,
}

/// The known differences, in the order they are tried.
pub(crate) const KNOWN: &[Known] = &[
    Known {
        name: "nowait-error-code",
        mysql: "a NOWAIT read that meets a lock ends at once with 3572 (ER_LOCK_NOWAIT); \
                MariaDB ends it at once with 1205 (ER_LOCK_WAIT_TIMEOUT)",
        source: "MySQL 8.0.1, WL#3597 and WL#8919 (NOWAIT and SKIP LOCKED); MariaDB 10.3's \
                 NOWAIT is a lock wait timeout of 0",
        explains: nowait_error_code,
    },
    Known {
        name: "pk-range-upper-bound",
        mysql: "an ascending primary-key range scan under REPEATABLE READ that finds a record \
                equal to its inclusive upper bound stops there and does not lock the next \
                record; MariaDB takes a next-key lock on it (so the record after the range and \
                the gap before it are locked)",
        source: "MySQL 8.0.18, Bug#29508068 (row_search_mvcc no longer locks the record past \
                 the range of a clustered index scan)",
        explains: pk_range_upper_bound,
    },
];

fn nowait_error_code(c: &Case, tp: &CaseResult, md: &CaseResult) -> bool {
    matches!(
        c.b,
        Verb::ForUpdate(Mode::NoWait) | Verb::ForShare(Mode::NoWait)
    ) && tp.a == md.a
        && tp.b == Outcome::NoWait
        && md.b == Outcome::Error(1205)
}

fn pk_range_upper_bound(c: &Case, tp: &CaseResult, md: &CaseResult) -> bool {
    if c.shape != Shape::PrimaryKey
        || c.iso != Iso::RepeatableRead
        || c.pred != Pred::Range
        || c.a.writes_key()
        || tp.a != md.a
    {
        return false;
    }
    // the record after the range (30) and the gap before it (25): free on MySQL, locked on
    // MariaDB
    let locked =
        |o: &Outcome| matches!(o, Outcome::Timeout | Outcome::NoWait | Outcome::Error(1205));
    match (&tp.b, &md.b) {
        (Outcome::Skips(t), Outcome::Skips(m)) => {
            let extra: Vec<&i64> = m.iter().filter(|k| !t.contains(k)).collect();
            extra == [&30] && t.iter().all(|k| m.contains(k))
        }
        (t, m) => (c.b_key == 25 || c.b_key == 30) && locked(m) && !locked(t),
    }
}

/// One difference.
#[derive(Debug, Clone)]
pub(crate) struct Difference {
    /// The case.
    pub(crate) name: String,
    /// tpbed's A reply and B outcome.
    pub(crate) tpbed: String,
    /// The reference's.
    pub(crate) reference: String,
    /// The known difference that explains it.
    pub(crate) known: Option<&'static str>,
}

/// tpbed against one reference.
#[derive(Debug, Clone)]
pub(crate) struct Comparison {
    /// The reference target's name.
    pub(crate) reference: String,
    /// Cases both ran.
    pub(crate) cases: usize,
    /// Cases with the same A reply and B outcome.
    pub(crate) agreeing: usize,
    /// Every difference, known ones included.
    pub(crate) differences: Vec<Difference>,
}

impl Comparison {
    /// Differences a known MySQL-vs-MariaDB difference explains.
    pub(crate) fn known(&self) -> usize {
        self.differences
            .iter()
            .filter(|d| d.known.is_some())
            .count()
    }

    /// Every other difference.
    pub(crate) fn unexplained(&self) -> usize {
        self.differences.len() - self.known()
    }
}

fn both(r: &CaseResult) -> String {
    if r.a == "ok" {
        r.b.to_string()
    } else {
        format!("{} (A: {})", r.b, r.a)
    }
}

/// Compares tpbed's results with the reference's, case by case (both ran `cases` in order);
/// known differences apply only when the reference is MariaDB.
pub(crate) fn compare(
    cases: &[Case],
    tpbed: &[CaseResult],
    reference: &[CaseResult],
    name: &str,
    flavour: Option<Flavour>,
) -> Comparison {
    let mut c = Comparison {
        reference: name.to_string(),
        cases: 0,
        agreeing: 0,
        differences: Vec::new(),
    };
    for ((case, tp), rf) in cases.iter().zip(tpbed).zip(reference) {
        debug_assert_eq!(tp.name, rf.name);
        c.cases += 1;
        if tp.a == rf.a && tp.b == rf.b {
            c.agreeing += 1;
            continue;
        }
        let known = if flavour == Some(Flavour::MariaDb) {
            KNOWN
                .iter()
                .find(|k| (k.explains)(case, tp, rf))
                .map(|k| k.name)
        } else {
            None
        };
        c.differences.push(Difference {
            name: tp.name.clone(),
            tpbed: both(tp),
            reference: both(rf),
            known,
        });
    }
    c
}

fn cell(s: &str) -> String {
    s.replace('|', "\\|").replace('\n', " ")
}

/// The Markdown section of one comparison.
pub(crate) fn markdown(c: &Comparison) -> String {
    let mut md = String::new();
    let r = &c.reference;
    let _ = writeln!(
        md,
        "#### tpbed against {r}\n\n{} cases, {} agree, {} differ as MySQL and MariaDB are known to \
         differ, {} differ otherwise.\n",
        c.cases,
        c.agreeing,
        c.known(),
        c.unexplained()
    );
    let used: Vec<&Known> = KNOWN
        .iter()
        .filter(|k| c.differences.iter().any(|d| d.known == Some(k.name)))
        .collect();
    if !used.is_empty() {
        let _ = writeln!(
            md,
            "Known differences (MySQL's behaviour, which tpbed follows):\n\n\
             | known difference | MySQL | source | cases |\n|---|---|---|---|"
        );
        for k in used {
            let n = c
                .differences
                .iter()
                .filter(|d| d.known == Some(k.name))
                .count();
            let _ = writeln!(
                md,
                "| {} | {} | {} | {n} |",
                k.name,
                cell(k.mysql),
                cell(k.source)
            );
        }
        let _ = writeln!(
            md,
            "\n| case | tpbed | {r} | known difference |\n|---|---|---|---|"
        );
        for d in c.differences.iter().filter(|d| d.known.is_some()) {
            let _ = writeln!(
                md,
                "| `{}` | {} | {} | {} |",
                cell(&d.name),
                cell(&d.tpbed),
                cell(&d.reference),
                d.known.unwrap_or_default()
            );
        }
        md.push('\n');
    }
    if c.unexplained() > 0 {
        let _ = writeln!(
            md,
            "Differences no known MySQL-vs-MariaDB difference explains:\n\n\
             | case | tpbed | {r} |\n|---|---|---|"
        );
        for d in c.differences.iter().filter(|d| d.known.is_none()) {
            let _ = writeln!(
                md,
                "| `{}` | {} | {} |",
                cell(&d.name),
                cell(&d.tpbed),
                cell(&d.reference)
            );
        }
        md.push('\n');
    }
    md
}

/// Every case's outcome on one target, for a run without a reference.
pub(crate) fn outcomes_markdown(target: &str, results: &[CaseResult]) -> String {
    let mut md = format!("#### Every case on {target}\n\n| case | A | B |\n|---|---|---|\n");
    for r in results {
        let _ = writeln!(md, "| `{}` | {} | {} |", cell(&r.name), r.a, r.b);
    }
    md
}

#[cfg(test)]
mod tests {
    use super::*;

    fn case(pred: Pred, b: Verb, b_key: i64) -> Case {
        Case {
            shape: Shape::PrimaryKey,
            iso: Iso::RepeatableRead,
            pred,
            a: Verb::ForUpdate(Mode::Wait),
            b,
            b_key,
        }
    }

    fn res(c: &Case, b: Outcome) -> CaseResult {
        CaseResult {
            name: c.name(),
            a: "ok".into(),
            b,
        }
    }

    #[test]
    fn known_differences_explain_only_their_cases_and_only_against_mariadb() {
        let upper = case(Pred::Range, Verb::Insert, 25);
        let nowait = case(Pred::EqHit, Verb::ForUpdate(Mode::NoWait), 20);
        let bug = case(Pred::EqHit, Verb::Insert, 15);
        let same = case(Pred::EqMiss, Verb::Insert, 12);
        let cases = [upper.clone(), nowait.clone(), bug.clone(), same.clone()];
        let tp = [
            res(&upper, Outcome::Proceeds),
            res(&nowait, Outcome::NoWait),
            res(&bug, Outcome::Timeout),
            res(&same, Outcome::Timeout),
        ];
        let md = [
            res(&upper, Outcome::Timeout),
            res(&nowait, Outcome::Error(1205)),
            res(&bug, Outcome::Proceeds),
            res(&same, Outcome::Timeout),
        ];
        let c = compare(&cases, &tp, &md, "mariadb", Some(Flavour::MariaDb));
        assert_eq!(
            (c.cases, c.agreeing, c.known(), c.unexplained()),
            (4, 1, 2, 1)
        );
        assert_eq!(c.differences[0].known, Some("pk-range-upper-bound"));
        assert_eq!(c.differences[1].known, Some("nowait-error-code"));
        assert_eq!(c.differences[2].known, None);
        let text = markdown(&c);
        assert!(
            text.contains("4 cases, 1 agree, 2 differ as MySQL"),
            "{text}"
        );
        assert!(text.contains("Bug#29508068"), "{text}");
        assert!(
            text.contains("| waits, then 1205 | proceeds |"),
            "the bug lists both outcomes: {text}"
        );
        // against MySQL nothing is a known MySQL-vs-MariaDB difference
        let c = compare(&cases, &tp, &md, "mysql", Some(Flavour::MySql));
        assert_eq!(c.unexplained(), 3);
        // the upper-bound rule does not cover the record the range reads itself
        let inside = case(Pred::Range, Verb::Insert, 15);
        assert!(!pk_range_upper_bound(
            &inside,
            &res(&inside, Outcome::Proceeds),
            &res(&inside, Outcome::Timeout)
        ));
        let skip = case(Pred::Range, Verb::ForUpdate(Mode::SkipLocked), 0);
        assert!(pk_range_upper_bound(
            &skip,
            &res(&skip, Outcome::Skips(vec![10, 20])),
            &res(&skip, Outcome::Skips(vec![10, 20, 30]))
        ));
    }
}
