//! Runs experiments on targets one after another: starts or reaches each target, applies the
//! experiment's settings (per session, globally, or at start-up), runs its scenario or matrix,
//! and judges its rules; a target that cannot give what an experiment needs says why.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::sync::Arc;
use std::time::Instant;

use serde::Serialize;

use crate::conn::WireFactory;
use crate::lab::by_config;
use crate::lab::conformance::{self, run::CaseResult};
use crate::lab::defaults::{non_defaults, NonDefaults};
use crate::lab::knobs::for_flavour;
use crate::lab::matrix;
use crate::lab::scenario::{self, Stop};
use crate::lab::spec::{value_text, ConfigEach, Experiment, Scale, Scenario};
use crate::lab::target::{check_flags, plan_settings, Flavour, Live, TargetSpec};
use crate::lab::verdict::{missing, Measurements, Outcome, Rule, Verdict};
use crate::plot::Series;

/// An experiment ready to run: the parsed file and its text after substitution.
#[derive(Debug, Clone)]
pub(crate) struct Loaded {
    /// The experiment.
    pub(crate) exp: Experiment,
    /// Its text (step lines refer to it).
    pub(crate) text: String,
    /// Built-in suite or file path.
    pub(crate) origin: String,
}

/// One experiment on one target.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct TargetRun {
    /// Target name.
    pub(crate) target: String,
    /// Its flavour, when the lab reached it.
    pub(crate) flavour: Option<Flavour>,
    /// `SELECT VERSION()`.
    pub(crate) version: String,
    /// CPUs the server may run on (servers the lab started).
    pub(crate) server_cpus: String,
    /// Settings the lab changed from the server's defaults, and how.
    pub(crate) changed: Vec<String>,
    /// Key server variables as the run saw them.
    pub(crate) variables: BTreeMap<String, String>,
    /// Every variable that differs from the server's default at the end of the run.
    pub(crate) non_default: NonDefaults,
    /// Every measurement with every pass.
    pub(crate) measurements: Measurements,
    /// Each rule's figure and verdict.
    pub(crate) outcomes: Vec<Outcome>,
    /// The experiment's verdict here.
    pub(crate) verdict: Verdict,
    /// What happened along the way.
    pub(crate) notes: Vec<String>,
    /// Wall time.
    pub(crate) seconds: f64,
    /// Matrix table (Markdown).
    #[serde(skip)]
    pub(crate) table: String,
    /// Matrix plots: metric and series.
    #[serde(skip)]
    pub(crate) plots: Vec<(String, Vec<Series>)>,
    /// Lock-conformance cases and each one's outcome.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub(crate) cases: Vec<CaseResult>,
    /// More of the report (Markdown) after the rules.
    #[serde(skip)]
    pub(crate) extra_md: String,
}

impl TargetRun {
    /// Sets the verdict from the outcomes: the worst of them ([`Verdict::combine`]).
    pub(crate) fn combine_outcomes(&mut self) {
        self.verdict = Verdict::combine(
            &self
                .outcomes
                .iter()
                .map(|o| o.verdict.clone())
                .collect::<Vec<_>>(),
        );
    }

    /// The measured figures, one per rule.
    pub(crate) fn figure(&self) -> String {
        self.outcomes
            .iter()
            .map(|o| o.measured.clone())
            .collect::<Vec<_>>()
            .join("; ")
    }
}

/// Variables the report shows for each target.
const KEY_VARS: &[&str] = &[
    "version",
    "version_comment",
    "thread_handling",
    "thread_pool_size",
    "transaction_isolation",
    "tx_isolation",
    "innodb_lock_wait_timeout",
    "innodb_rollback_on_timeout",
    "innodb_flush_log_at_trx_commit",
    "max_connections",
    "performance_schema",
    "thread_pool_query_threads_per_group",
    "thread_pool_stall_limit",
    "thread_pool_max_transactions_limit",
    "thread_pool_oversubscribe",
];

/// Every rule of `exp` with nothing measured and the run's verdict `v`.
fn unmeasured(exp: &Experiment, v: &Verdict) -> Vec<Outcome> {
    exp.verdict
        .iter()
        .map(|r| Outcome {
            rule: r.get_ref().describe(),
            measured: "-".into(),
            verdict: v.clone(),
        })
        .collect()
}

pub(crate) fn cannot(target: &str, why: &str, exp: &Experiment, secs: f64) -> TargetRun {
    let v = Verdict::CannotRun(why.to_string());
    TargetRun {
        target: target.into(),
        flavour: None,
        version: String::new(),
        server_cpus: String::new(),
        changed: Vec::new(),
        variables: BTreeMap::new(),
        non_default: NonDefaults {
            source: "the server was not reached".into(),
            known: false,
            differs: Vec::new(),
        },
        measurements: Measurements::new(),
        outcomes: unmeasured(exp, &v),
        verdict: v,
        notes: Vec::new(),
        seconds: secs,
        table: String::new(),
        plots: Vec::new(),
        cases: Vec::new(),
        extra_md: String::new(),
    }
}

/// Runs one experiment on one target.
#[allow(clippy::too_many_arguments)]
pub(crate) fn run_one(
    l: &Loaded,
    spec: &TargetSpec,
    user: &str,
    password: &str,
    passes: Option<usize>,
    out: &Path,
    wires: &Arc<WireFactory>,
    tick: &dyn Fn(&str),
) -> TargetRun {
    let t0 = Instant::now();
    let exp = &l.exp;
    let logs = out.join("logs");
    let mut live = match Live::open(spec, user, password, BTreeMap::new(), &logs, wires) {
        Ok(live) => live,
        Err(e) => return cannot(&spec.name, &e, exp, t0.elapsed().as_secs_f64()),
    };
    let settings = exp.settings_text();
    let mut changed = Vec::new();
    let mut notes = Vec::new();
    let mut table = String::new();
    let mut plots = Vec::new();
    let mut cases = Vec::new();
    let mut stops: BTreeMap<String, Stop> = BTreeMap::new();
    let result: Result<Measurements, Stop> = if let Some(sc) = &exp.scenario {
        tick(&format!("{} on {}", exp.name, spec.name));
        let passes = passes.or(sc.passes).unwrap_or(1).max(1);
        let mut ctx = ScenarioCtx {
            l,
            sc,
            live: &mut live,
            passes,
            notes: &mut notes,
            changed: &mut changed,
        };
        match &sc.config_each {
            None => ctx.run(&settings, None, &exp.wanted()),
            Some(each) => Ok(ctx.run_each(&settings, each, &mut stops, tick)),
        }
    } else if let Some(mx) = &exp.matrix {
        let r = matrix::run(
            mx,
            &settings,
            &mut live,
            passes.or(mx.passes).unwrap_or(1).max(1),
            wires,
            &|m: &str| tick(&format!("{} on {}: {m}", exp.name, spec.name)),
        );
        changed.extend(r.changed);
        notes.extend(r.notes);
        table = r.table;
        plots = r.plots;
        Ok(r.m)
    } else if let Some(cf) = &exp.conformance {
        let r = conformance::run_target(cf, &live, &|m: &str| {
            tick(&format!("{} on {}: {m}", exp.name, spec.name))
        });
        r.map(|r| {
            cases = r.results;
            r.measurements
        })
        .map_err(Stop::CannotRun)
    } else {
        Err(Stop::CannotRun("no scenario or matrix".into()))
    };
    let wanted: BTreeSet<String> = KEY_VARS.iter().map(|s| s.to_string()).collect();
    let variables = live
        .variables()
        .map(|vs| vs.into_iter().filter(|(k, _)| wanted.contains(k)).collect())
        .unwrap_or_default();
    let non_default = non_defaults(&live);
    let server_cpus = live
        .pid()
        .map(|p| crate::machine::affinity(Some(p)))
        .unwrap_or_default();
    let (flavour, version) = (live.flavour, live.version.clone());
    drop(live);
    let (measurements, outcomes) = match result {
        Ok(m) => {
            let o: Vec<Outcome> = exp
                .verdict
                .iter()
                .map(|r| judge(r.get_ref(), &m, &stops))
                .collect();
            (m, o)
        }
        Err(stop) => {
            let v = match stop {
                Stop::Differs(w) => Verdict::Differs(w),
                Stop::CannotRun(w) => Verdict::CannotRun(w),
            };
            (Measurements::new(), unmeasured(exp, &v))
        }
    };
    let verdict = Verdict::combine(
        &outcomes
            .iter()
            .map(|o| o.verdict.clone())
            .collect::<Vec<_>>(),
    );
    let extra_md = config_columns(
        exp,
        &measurements,
        &outcomes,
        &stops,
        &mut table,
        &mut notes,
    );
    TargetRun {
        target: spec.name.clone(),
        flavour: Some(flavour),
        version,
        server_cpus,
        changed,
        variables,
        non_default,
        measurements,
        outcomes,
        verdict,
        notes,
        seconds: t0.elapsed().as_secs_f64(),
        table,
        plots,
        cases,
        extra_md,
    }
}

/// The report's table with each configuration in a column, for an experiment that lists its
/// configurations: a matrix's replaces `table`; a looped scenario's is returned as extra text,
/// with a note per configuration that stopped.
fn config_columns(
    exp: &Experiment,
    measurements: &Measurements,
    outcomes: &[Outcome],
    stops: &BTreeMap<String, Stop>,
    table: &mut String,
    notes: &mut Vec<String>,
) -> String {
    let rules: Vec<_> = exp.verdict.iter().map(|r| r.get_ref().clone()).collect();
    let mut extra_md = String::new();
    if let Some(mx) = exp.matrix.as_ref().filter(|mx| !mx.listed.is_empty()) {
        // configurations in columns: the verdict of each, then every column at every value
        let configs: Vec<String> = mx.config.iter().map(|c| c.name.clone()).collect();
        let cols = if mx.columns.is_empty() {
            vec!["qps".to_string()]
        } else {
            mx.columns.clone()
        };
        let rows: Vec<String> = cols
            .iter()
            .flat_map(|c| mx.values.iter().map(move |v| format!("{c}@{v}")))
            .collect();
        *table = by_config::table(&configs, &rows, measurements, &rules, outcomes);
    } else if let Some(each) = exp.scenario.as_ref().and_then(|s| s.config_each.as_ref()) {
        let mut rows: Vec<String> = Vec::new();
        for k in measurements.keys() {
            if let Some((_, row)) = k.split_once('.') {
                if !rows.iter().any(|r| r == row) {
                    rows.push(row.to_string());
                }
            }
        }
        extra_md = format!(
            "Each configuration in a column (medians over passes):\n\n{}",
            by_config::table(&each.names, &rows, measurements, &rules, outcomes)
        );
        for (name, stop) in stops {
            let (Stop::Differs(why) | Stop::CannotRun(why)) = stop;
            notes.push(format!("{name}: stopped: {why}"));
        }
    }
    extra_md
}

/// A rule's outcome; a rule whose configuration's scenario stopped gets that stop's verdict
/// (a step that did not behave as required: *differs*; one the server could not run:
/// *cannot run here*), not a missing measurement's.
fn judge(rule: &Rule, m: &Measurements, stops: &BTreeMap<String, Stop>) -> Outcome {
    let stopped = rule.subject().and_then(|c| stops.get(&c).map(|s| (c, s)));
    match stopped {
        None => rule.judge(m),
        Some((c, stop)) => Outcome {
            rule: rule.describe(),
            measured: "-".into(),
            verdict: match stop {
                Stop::Differs(w) => Verdict::Differs(format!("{c}: {w}")),
                Stop::CannotRun(w) => Verdict::CannotRun(format!("{c}: {w}")),
            },
        },
    }
}

/// What running a scenario on a target needs, once or per configuration.
struct ScenarioCtx<'a> {
    l: &'a Loaded,
    sc: &'a Scenario,
    live: &'a mut Live,
    passes: usize,
    notes: &'a mut Vec<String>,
    changed: &'a mut Vec<String>,
}

impl ScenarioCtx<'_> {
    /// Runs the scenario once with `settings`: session ones set on each session, start-up ones
    /// by restarting a server the lab started (`label` names the configuration in notes).
    fn run(
        &mut self,
        settings: &BTreeMap<String, String>,
        label: Option<&str>,
        wanted: &BTreeSet<String>,
    ) -> Result<Measurements, Stop> {
        let prefix = label.map(|l| format!("{l}: ")).unwrap_or_default();
        let (settings, translated) =
            for_flavour(settings, self.live.flavour).map_err(Stop::CannotRun)?;
        self.notes
            .extend(translated.into_iter().map(|t| format!("{prefix}{t}")));
        let plan = plan_settings(self.live, &settings, "SESSION").map_err(Stop::CannotRun)?;
        if plan.flags != self.live.flags {
            if !self.live.restartable() {
                return Err(Stop::CannotRun(format!(
                    "{} can only be set at start-up and the target was not started by the lab",
                    plan.flags.keys().cloned().collect::<Vec<_>>().join(", ")
                )));
            }
            self.live
                .restart(plan.flags.clone())
                .map_err(Stop::CannotRun)?;
            self.changed.extend(
                check_flags(self.live)
                    .into_iter()
                    .map(|f| format!("{prefix}{f} (start-up)")),
            );
        }
        self.changed.extend(
            plan.dynamic
                .iter()
                .map(|(k, v)| format!("{prefix}SET SESSION {k}={v}")),
        );
        let session: BTreeMap<String, String> = plan.dynamic.into_iter().collect();
        let exp = &self.l.exp;
        scenario::run(
            exp,
            self.sc,
            self.live,
            &session,
            self.passes,
            &self.l.text,
            wanted,
        )
    }

    /// Runs the scenario once per configuration `each` lists, with its settings over the
    /// experiment's; every measurement is named `CONFIG.NAME`. A configuration that stops
    /// leaves its names missing, and its stop in `stops`.
    fn run_each(
        &mut self,
        settings: &BTreeMap<String, String>,
        each: &ConfigEach,
        stops: &mut BTreeMap<String, Stop>,
        tick: &dyn Fn(&str),
    ) -> Measurements {
        let wanted = self.l.exp.wanted();
        let mut m = Measurements::new();
        for cfg in each.configs() {
            tick(&format!("{}: {}", self.l.exp.name, cfg.name));
            let mut s = settings.clone();
            s.extend(cfg.settings.iter().map(|(k, v)| (k.clone(), value_text(v))));
            let dot = format!("{}.", cfg.name);
            let mine: BTreeSet<String> = wanted
                .iter()
                .filter_map(|w| w.strip_prefix(&dot).map(str::to_string))
                .collect();
            match self.run(&s, Some(&cfg.name), &mine) {
                Ok(got) => m.extend(got.into_iter().map(|(k, v)| (format!("{dot}{k}"), v))),
                Err(stop) => {
                    let (Stop::Differs(why) | Stop::CannotRun(why)) = &stop;
                    for w in &mine {
                        missing(&mut m, &format!("{dot}{w}"), why);
                    }
                    stops.insert(cfg.name.clone(), stop);
                }
            }
        }
        m
    }
}

/// Expected seconds of `l` on `targets` targets at `scale`.
pub(crate) fn expected(l: &Loaded, scale: Scale, targets: usize) -> u64 {
    l.exp.expected_secs(scale) * targets as u64
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lab::verdict::record;

    #[test]
    fn a_stopped_configuration_gets_its_stops_verdict_and_the_others_their_own() {
        let count = |value: &str| Rule::Count {
            value: value.into(),
            equals: Some(1205.0),
            at_most: None,
            at_least: None,
        };
        let mut m = Measurements::new();
        record(&mut m, "mysql.waiter_error", 1205.0);
        missing(&mut m, "fifo.waiter_error", "line 9: ended with success");
        missing(&mut m, "mariadb.waiter_error", "restart failed");
        let stops = BTreeMap::from([
            (
                "fifo".to_string(),
                Stop::Differs("line 9: ended with success".into()),
            ),
            (
                "mariadb".to_string(),
                Stop::CannotRun("restart failed".into()),
            ),
        ]);
        assert_eq!(
            judge(&count("mysql.waiter_error"), &m, &stops).verdict,
            Verdict::Reproduces
        );
        let fifo = judge(&count("fifo.waiter_error"), &m, &stops).verdict;
        assert_eq!(
            fifo,
            Verdict::Differs("fifo: line 9: ended with success".into())
        );
        let mdb = judge(&count("mariadb.waiter_error"), &m, &stops).verdict;
        assert!(matches!(mdb, Verdict::CannotRun(w) if w.contains("restart failed")));
    }
}
