//! Runs a scenario: opens its sessions (with the experiment's per-session settings), runs the
//! steps in order (statements, a statement sent and reaped later while others act, pauses,
//! counter reads, fixture tables), once per `each` value and per pass, and collects the
//! measurements.

use std::collections::{BTreeMap, BTreeSet};
use std::time::{Duration, Instant};

use crate::blocking::Blocking;
use crate::conn::Reply;
use crate::lab::counters::{read, source, Reading};
use crate::lab::spec::{line_of, Action, Experiment, Scenario, Step};
use crate::lab::target::Live;
use crate::lab::verdict::{median, missing, record, Measured, Measurements};
use crate::queue::{fixture_ddl, Schema};

/// Why a scenario stopped before its end.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Stop {
    /// The server behaved otherwise than the step required (the finding does not hold).
    Differs(String),
    /// The server cannot run a step (unsupported statement or setting).
    CannotRun(String),
}

/// Error codes that are lock behaviour, not a missing feature.
const LOCK_ERRORS: [u16; 4] = [1205, 1213, 1020, 3572];

struct Session {
    name: String,
    conn: Blocking,
    id: u64,
    sent: Option<Instant>,
}

fn schema(table: &str) -> Schema {
    match table {
        "q_v2" => Schema::V2,
        "q_v3" => Schema::V3,
        _ => Schema::V1,
    }
}

/// `INSERT`s of `jobs` ready jobs, run_at increasing, 1,000 per statement.
pub(crate) fn fill_sql(table: &str, jobs: u64) -> Vec<String> {
    let mut out = Vec::new();
    let mut i = 0;
    while i < jobs {
        let n = (jobs - i).min(1000);
        let rows: Vec<String> = (i..i + n)
            .map(|j| {
                if table == "q_v3" {
                    format!("({}, 0, {}, {}, 'job-{j}')", j % 4, j + 1, j % 10)
                } else {
                    format!("(0, {}, {}, 'job-{j}')", j + 1, j % 10)
                }
            })
            .collect();
        let cols = if table == "q_v3" {
            "shard, status, run_at, priority, payload"
        } else {
            "status, run_at, priority, payload"
        };
        out.push(format!(
            "INSERT INTO {table} ({cols}) VALUES {}",
            rows.join(",")
        ));
        i += n;
    }
    out
}

/// Opens the scenario's sessions with the per-session settings.
fn open_sessions(
    sc: &Scenario,
    settings: &BTreeMap<String, String>,
    live: &Live,
) -> Result<Vec<Session>, Stop> {
    let mut out = Vec::new();
    for name in &sc.sessions {
        let mut conn = match sc.users.get(name) {
            Some(user) => live.connect_as(
                user,
                sc.grants.get(user).map(Vec::as_slice).unwrap_or_default(),
            ),
            None => live.connect(),
        }
        .map_err(Stop::CannotRun)?;
        for (k, v) in settings {
            let sql = format!("SET SESSION {k} = {}", crate::lab::target::sql_value(v));
            if let Reply::Error { code, message } = conn.query(&sql).map_err(Stop::CannotRun)? {
                return Err(Stop::CannotRun(format!("{sql}: {code}: {message}")));
            }
        }
        let id = conn
            .rows("SELECT CONNECTION_ID()")
            .map_err(Stop::CannotRun)?
            .first()
            .and_then(|r| r.first().cloned().flatten())
            .and_then(|v| v.parse::<u64>().ok())
            .ok_or_else(|| Stop::CannotRun("SELECT CONNECTION_ID() gave no number".into()))?;
        out.push(Session {
            name: name.clone(),
            conn,
            id,
            sent: None,
        });
    }
    Ok(out)
}

/// Runs the scenario `passes` times on `live`; `wanted` are the measurement names the verdict
/// rules read (a `data_locks` group a pass did not see counts 0 there).
pub(crate) fn run(
    exp: &Experiment,
    sc: &Scenario,
    live: &Live,
    settings: &BTreeMap<String, String>,
    passes: usize,
    text: &str,
    wanted: &BTreeSet<String>,
) -> Result<Measurements, Stop> {
    let mut m = Measurements::new();
    let values: Vec<Option<i64>> = match &sc.each {
        Some(e) => e.values.iter().map(|v| Some(*v)).collect(),
        None => vec![None],
    };
    for _pass in 0..passes {
        // grouped counters seen in this pass: measure name -> group -> count
        let mut groups: BTreeMap<String, BTreeMap<String, f64>> = BTreeMap::new();
        let mut sessions = open_sessions(sc, settings, live)?;
        let mut obs = live.connect().map_err(Stop::CannotRun)?;
        for v in &values {
            let subst = |s: &str| match (v, &sc.each) {
                (Some(v), Some(e)) => s.replace(&format!("{{{}}}", e.name), &v.to_string()),
                _ => s.to_string(),
            };
            for st in &sc.step {
                if !st.get_ref().runs_at(*v) {
                    continue;
                }
                let mut pass = Pass {
                    sessions: &mut sessions,
                    obs: &mut obs,
                    m: &mut m,
                    groups: &mut groups,
                };
                let line = line_of(text, st.span().start);
                run_step(exp, live, st.get_ref(), line, &subst, &mut pass)?;
            }
        }
        for s in sessions {
            s.conn.quit();
        }
        obs.quit();
        record_groups(&mut m, groups, wanted);
    }
    mark_absent_groups(&mut m, wanted);
    Ok(m)
}

/// What one pass of a scenario works with: its sessions, the observer connection, the
/// measurements so far and the grouped counters seen in the pass.
struct Pass<'a> {
    sessions: &'a mut Vec<Session>,
    obs: &'a mut Blocking,
    m: &'a mut Measurements,
    groups: &'a mut BTreeMap<String, BTreeMap<String, f64>>,
}

/// Runs one step (written at `line` of the experiment's file), `subst` filling in the
/// scenario's looped value.
fn run_step(
    exp: &Experiment,
    live: &Live,
    step: &Step,
    line: usize,
    subst: &dyn Fn(&str) -> String,
    pass: &mut Pass<'_>,
) -> Result<(), Stop> {
    let sessions = &mut *pass.sessions;
    let obs = &mut *pass.obs;
    let m = &mut *pass.m;
    let action = step.action().map_err(Stop::CannotRun)?;
    let where_ = |msg: String| format!("{} line {line}: {msg}", exp.name);
    let si = step
        .session
        .as_ref()
        .and_then(|n| sessions.iter().position(|s| &s.name == n));
    match action {
        Action::Sql(sql) | Action::Send(sql) if si.is_none() => {
            return Err(Stop::CannotRun(where_(format!("no session for {sql}"))))
        }
        Action::Sql(sql) => {
            let s = &mut sessions[si.unwrap_or_default()];
            let sql = subst(&sql);
            let mut times = Vec::new();
            let mut last = None;
            for _ in 0..step.repeat.unwrap_or(1).max(1) {
                let t0 = Instant::now();
                let r = s.conn.query(&sql).map_err(|e| Stop::CannotRun(where_(e)))?;
                times.push(t0.elapsed().as_secs_f64() * 1000.0);
                last = Some(r);
            }
            let r = last.ok_or_else(|| Stop::CannotRun(where_("no reply".into())))?;
            match &step.error {
                Some(n) => record(m, &subst(n), error_code(&r)),
                None => check_reply(&r, step.expect_error, &s.name, &sql, &where_)?,
            }
            if let Some(t) = &step.time {
                record(m, &subst(t), median(&times));
            }
            if let Some(n) = &step.rows {
                record(m, &subst(n), rows_of(&r));
            }
        }
        Action::Send(sql) => {
            let s = &mut sessions[si.unwrap_or_default()];
            s.conn
                .start(&subst(&sql))
                .map_err(|e| Stop::CannotRun(where_(e)))?;
            s.sent = Some(Instant::now());
        }
        Action::Reap => {
            let Some(i) = si else {
                return Err(Stop::CannotRun(where_("reap needs a session".into())));
            };
            let s = &mut sessions[i];
            let r = s.conn.finish().map_err(|e| Stop::CannotRun(where_(e)))?;
            let ms = s
                .sent
                .take()
                .map_or(0.0, |t| t.elapsed().as_secs_f64() * 1000.0);
            match &step.error {
                Some(n) => record(m, &subst(n), error_code(&r)),
                None => check_reply(
                    &r,
                    step.expect_error,
                    &s.name,
                    "the statement sent",
                    &where_,
                )?,
            }
            if let Some(t) = &step.time {
                record(m, &subst(t), ms);
            }
            if let Some(n) = &step.rows {
                record(m, &subst(n), rows_of(&r));
            }
        }
        Action::Sleep(ms) => std::thread::sleep(Duration::from_millis(ms)),
        Action::Measure { name, counter } => {
            let name = subst(&name);
            let src = match source(&counter, live.flavour, live.pid().is_some()) {
                Ok(s) => s,
                Err(why) => {
                    missing(m, &name, &why);
                    return Ok(());
                }
            };
            let id = si.map(|i| sessions[i].id);
            // a server-wide value is read on the step's session when it names one
            // (e.g. a session in the Admin group while the pool refuses others)
            let conn = match si {
                Some(i) if src.is_global() => &mut sessions[i].conn,
                _ => &mut *obs,
            };
            match read(src, conn, id, live.pid()) {
                Ok(Reading::One(v)) => record(m, &name, v),
                Ok(Reading::Groups(gs)) => {
                    let g = pass.groups.entry(name.clone()).or_default();
                    for (k, n) in gs {
                        *g.entry(k).or_default() += n;
                    }
                }
                Err(why) => missing(m, &name, &why),
            }
        }
        Action::Create(t) => {
            let ddl = fixture_ddl(schema(&t)).map_err(Stop::CannotRun)?;
            for sql in [format!("DROP TABLE IF EXISTS {t}"), ddl] {
                obs.exec(&sql).map_err(|e| Stop::CannotRun(where_(e)))?;
            }
        }
        Action::Fill { table, jobs } => {
            for sql in fill_sql(&table, jobs) {
                obs.exec(&sql).map_err(|e| Stop::CannotRun(where_(e)))?;
            }
        }
    }
    Ok(())
}

/// Gives every group name the rules or any pass use a value in this pass (0 if unseen).
fn record_groups(
    m: &mut Measurements,
    groups: BTreeMap<String, BTreeMap<String, f64>>,
    wanted: &BTreeSet<String>,
) {
    for (name, g) in groups {
        let prefix = format!("{name}.");
        let mut keys: BTreeSet<String> = wanted
            .iter()
            .filter(|w| w.starts_with(&prefix))
            .cloned()
            .collect();
        keys.extend(m.keys().filter(|k| k.starts_with(&prefix)).cloned());
        keys.extend(g.keys().map(|k| format!("{prefix}{k}")));
        for k in keys {
            let n = g.get(&k[prefix.len()..]).copied().unwrap_or(0.0);
            record(m, &k, n);
        }
    }
}

/// A grouped counter the target lacks: the groups the rules ask for are missing too.
fn mark_absent_groups(m: &mut Measurements, wanted: &BTreeSet<String>) {
    let absent: Vec<(String, String)> = m
        .iter()
        .filter_map(|(k, v)| match v {
            Measured::Missing(w) => Some((k.clone(), w.clone())),
            Measured::Values(_) => None,
        })
        .collect();
    for (k, why) in absent {
        let prefix = format!("{k}.");
        for w in wanted.iter().filter(|w| w.starts_with(&prefix)) {
            missing(m, w, &why);
        }
    }
}

fn rows_of(r: &Reply) -> f64 {
    match r {
        Reply::Rows { count, .. } => *count as f64,
        Reply::Ok { affected, .. } => *affected as f64,
        _ => 0.0,
    }
}

/// The error code a reply ended with, 0 for success (a step's `error` record).
fn error_code(r: &Reply) -> f64 {
    match r {
        Reply::Error { code, .. } => f64::from(*code),
        _ => 0.0,
    }
}

fn check_reply(
    r: &Reply,
    expect: Option<u16>,
    session: &str,
    sql: &str,
    where_: &dyn Fn(String) -> String,
) -> Result<(), Stop> {
    let got = match r {
        Reply::Error { code, .. } => *code,
        _ => 0,
    };
    let msg = match r {
        Reply::Error { code, message } => format!("{code}: {message}"),
        _ => "success".into(),
    };
    match expect {
        Some(e) if e == got => Ok(()),
        Some(e) => Err(Stop::Differs(where_(format!(
            "session {session}: expected {} from {}, got {msg}",
            if e == 0 {
                "success".to_string()
            } else {
                format!("error {e}")
            },
            crate::blocking::abbreviate(sql)
        )))),
        None if got == 0 => Ok(()),
        None if LOCK_ERRORS.contains(&got) => Err(Stop::Differs(where_(format!(
            "session {session}: {} ended with {msg}",
            crate::blocking::abbreviate(sql)
        )))),
        None => Err(Stop::CannotRun(where_(format!(
            "session {session}: {} failed: {msg}",
            crate::blocking::abbreviate(sql)
        )))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fill_statements_cover_every_job_once() {
        let s = fill_sql("q_v1", 2500);
        assert_eq!(s.len(), 3);
        assert!(s[0].starts_with(
            "INSERT INTO q_v1 (status, run_at, priority, payload) VALUES (0, 1, 0, 'job-0'),"
        ));
        assert!(s[2].ends_with("(0, 2500, 9, 'job-2499')"));
        assert!(fill_sql("q_v3", 5)[0].contains("(shard, status"));
        assert!(fill_sql("q_v1", 0).is_empty());
    }
}
