//! Runs conformance cases on one target over one pair of connections: the table is created
//! afresh for each case, A's statement is left open in its transaction while B's runs with a
//! short `innodb_lock_wait_timeout`, and both always roll back. B's reply is classified into
//! an [`Outcome`].

use std::fmt;
use std::time::Instant;

use serde::Serialize;

use crate::blocking::Blocking;
use crate::conn::Reply;
use crate::lab::conformance::cases::Case;
use crate::lab::target::{Flavour, Live};

/// The table every case runs on (dropped and created again for each case).
const TABLE: &str = "lock_conformance";

/// What B's statement did.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "outcome", content = "detail", rename_all = "snake_case")]
pub(crate) enum Outcome {
    /// It ended without waiting for a lock (with rows or rows changed, or none).
    Proceeds,
    /// A SKIP LOCKED read returned at once without these keys of the table.
    Skips(Vec<i64>),
    /// It waited for the whole lock wait timeout and ended with 1205.
    Timeout,
    /// It ended at once with 3572 (NOWAIT).
    NoWait,
    /// It ended with 1213.
    Deadlock,
    /// It ended at once with another error (a duplicate key's 1062, or 1205 without waiting).
    Error(u16),
    /// The connection failed (why).
    Failed(String),
}

impl fmt::Display for Outcome {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Outcome::Proceeds => write!(f, "proceeds"),
            Outcome::Skips(ks) if ks.is_empty() => write!(f, "skips nothing"),
            Outcome::Skips(ks) => write!(
                f,
                "skips {}",
                ks.iter().map(i64::to_string).collect::<Vec<_>>().join(", ")
            ),
            Outcome::Timeout => write!(f, "waits, then 1205"),
            Outcome::NoWait => write!(f, "3572 at once"),
            Outcome::Deadlock => write!(f, "1213"),
            Outcome::Error(c) => write!(f, "{c} at once"),
            Outcome::Failed(why) => write!(f, "failed: {why}"),
        }
    }
}

/// One case on one target.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub(crate) struct CaseResult {
    /// The case's name (its shape, level and both statements).
    pub(crate) name: String,
    /// A's reply: `ok` or the error code.
    pub(crate) a: String,
    /// B's outcome.
    pub(crate) b: Outcome,
}

/// Classifies B's reply: `ms` is how long it took, `timeout_ms` the lock wait timeout, and
/// `table` the keys the table held (for a SKIP LOCKED read, `Some`).
pub(crate) fn classify(
    reply: Result<Reply, String>,
    ms: u64,
    timeout_ms: u64,
    table: Option<&[i64]>,
) -> Outcome {
    match reply {
        Err(e) => Outcome::Failed(e),
        Ok(Reply::Error { code: 1205, .. }) if ms * 2 >= timeout_ms => Outcome::Timeout,
        Ok(Reply::Error { code: 3572, .. }) => Outcome::NoWait,
        Ok(Reply::Error { code: 1213, .. }) => Outcome::Deadlock,
        Ok(Reply::Error { code, .. }) => Outcome::Error(code),
        Ok(Reply::Rows { rows, .. }) => match table {
            Some(keys) => {
                let got: Vec<i64> = rows
                    .iter()
                    .filter_map(|r| r.first().cloned().flatten())
                    .filter_map(|v| v.parse().ok())
                    .collect();
                Outcome::Skips(keys.iter().copied().filter(|k| !got.contains(k)).collect())
            }
            None => Outcome::Proceeds,
        },
        Ok(_) => Outcome::Proceeds,
    }
}

/// A's reply in a few words.
fn a_reply(r: &Result<Reply, String>) -> String {
    match r {
        Ok(Reply::Error { code, .. }) => code.to_string(),
        Ok(_) => "ok".into(),
        Err(e) => format!("failed: {e}"),
    }
}

/// The statement as this server spells it: MariaDB has no `FOR SHARE`, only `LOCK IN SHARE
/// MODE` (with the same NOWAIT and SKIP LOCKED).
pub(crate) fn spelled(sql: &str, flavour: Flavour) -> String {
    match flavour {
        Flavour::MariaDb => sql.replace(" FOR SHARE", " LOCK IN SHARE MODE"),
        Flavour::Tpbed | Flavour::MySql => sql.to_string(),
    }
}

/// The two sessions.
struct Pair {
    a: Blocking,
    b: Blocking,
}

impl Pair {
    fn open(live: &Live, timeout_s: u64) -> Result<Pair, String> {
        let mut p = Pair {
            a: live.connect()?,
            b: live.connect()?,
        };
        for c in [&mut p.a, &mut p.b] {
            c.exec(&format!(
                "SET SESSION innodb_lock_wait_timeout = {timeout_s}"
            ))?;
        }
        Ok(p)
    }
}

/// Runs `cases` on `live` with this lock wait timeout (seconds); `tick` hears progress.
pub(crate) fn run_cases(
    cases: &[Case],
    live: &Live,
    timeout_s: u64,
    tick: &dyn Fn(&str),
) -> Result<Vec<CaseResult>, String> {
    let mut pair = Pair::open(live, timeout_s)?;
    let mut out = Vec::with_capacity(cases.len());
    for (i, case) in cases.iter().enumerate() {
        if i % 20 == 0 {
            tick(&format!("case {} of {}", i + 1, cases.len()));
        }
        let r = match run_case(&mut pair, case, live.flavour, timeout_s) {
            Ok(r) => r,
            Err(e) => {
                // a broken session: the case failed; later cases get a new pair
                pair = Pair::open(live, timeout_s)?;
                CaseResult {
                    name: case.name(),
                    a: String::new(),
                    b: Outcome::Failed(e),
                }
            }
        };
        out.push(r);
    }
    let _ = pair.a.exec(&format!("DROP TABLE IF EXISTS {TABLE}"));
    pair.a.quit();
    pair.b.quit();
    Ok(out)
}

/// One case: set up the table, A's statement, B's, then both roll back.
fn run_case(
    p: &mut Pair,
    case: &Case,
    flavour: Flavour,
    timeout_s: u64,
) -> Result<CaseResult, String> {
    p.a.exec(&format!("DROP TABLE IF EXISTS {TABLE}"))?;
    p.a.exec(&case.shape.create(TABLE))?;
    let keys = case.keys();
    if let Some(fill) = case.shape.fill(TABLE, &keys) {
        p.a.exec(&fill)?;
    }
    for c in [&mut p.a, &mut p.b] {
        c.exec(case.iso.set_sql())?;
        c.exec("BEGIN")?;
    }
    let a = p.a.query(&spelled(&case.a_sql(TABLE), flavour));
    let a_text = a_reply(&a);
    a?;
    let t0 = Instant::now();
    let b = p.b.query(&spelled(&case.b_sql(TABLE), flavour));
    let ms = t0.elapsed().as_millis() as u64;
    let broken = b.is_err();
    let outcome = classify(
        b,
        ms,
        timeout_s * 1000,
        case.b.skips().then_some(keys.as_slice()),
    );
    if broken {
        return Err(outcome.to_string());
    }
    p.b.exec("ROLLBACK")?;
    p.a.exec("ROLLBACK")?;
    Ok(CaseResult {
        name: case.name(),
        a: a_text,
        b: outcome,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn err(code: u16) -> Result<Reply, String> {
        Ok(Reply::Error {
            code,
            message: String::new(),
        })
    }

    #[test]
    fn replies_are_classified_by_code_time_and_rows() {
        assert_eq!(classify(err(1205), 1000, 1000, None), Outcome::Timeout);
        assert_eq!(classify(err(1205), 3, 1000, None), Outcome::Error(1205));
        assert_eq!(classify(err(3572), 3, 1000, None), Outcome::NoWait);
        assert_eq!(classify(err(1213), 3, 1000, None), Outcome::Deadlock);
        assert_eq!(classify(err(1062), 3, 1000, None), Outcome::Error(1062));
        let ok = Ok(Reply::Ok {
            affected: 1,
            last_insert_id: 0,
        });
        assert_eq!(classify(ok, 3, 1000, None), Outcome::Proceeds);
        let rows = Ok(Reply::Rows {
            count: 2,
            rows: vec![
                vec![Some("10".into()), Some("0".into())],
                vec![Some("30".into()), Some("0".into())],
            ],
        });
        assert_eq!(
            classify(rows, 3, 1000, Some(&[10, 20, 30, 40])),
            Outcome::Skips(vec![20, 40])
        );
        assert_eq!(Outcome::Skips(vec![20, 40]).to_string(), "skips 20, 40");
    }

    #[test]
    fn mariadb_spells_for_share_its_own_way() {
        assert_eq!(
            spelled("SELECT k FROM t FOR SHARE SKIP LOCKED", Flavour::MariaDb),
            "SELECT k FROM t LOCK IN SHARE MODE SKIP LOCKED"
        );
        assert_eq!(
            spelled("SELECT k FROM t FOR SHARE", Flavour::Tpbed),
            "SELECT k FROM t FOR SHARE"
        );
    }
}
