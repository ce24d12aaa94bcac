//! Runs experiments on targets one after another: starts or reaches each target, applies the
//! experiment's settings (per session, globally, or at start-up), runs its scenario or matrix,
//! and judges its rules; a target that cannot give what an experiment needs says why.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::sync::Arc;
use std::time::Instant;

use serde::Serialize;

use crate::conn::WireFactory;
use crate::lab::conformance::{self, run::CaseResult};
use crate::lab::defaults::{non_defaults, NonDefaults};
use crate::lab::knobs::for_flavour;
use crate::lab::matrix;
use crate::lab::scenario::{self, Stop};
use crate::lab::spec::{Experiment, Scale};
use crate::lab::target::{check_flags, plan_settings, Flavour, Live, TargetSpec};
use crate::lab::verdict::{Measurements, Outcome, Verdict};
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

fn cannot(target: &str, why: &str, exp: &Experiment, secs: f64) -> TargetRun {
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
    let result: Result<Measurements, Stop> = if let Some(sc) = &exp.scenario {
        tick(&format!("{} on {}", exp.name, spec.name));
        let planned = for_flavour(&settings, live.flavour).and_then(|(settings, translated)| {
            notes.extend(translated);
            plan_settings(&live, &settings, "SESSION")
        });
        match planned {
            Err(e) => Err(Stop::CannotRun(e)),
            Ok(plan) => {
                let restarted = if plan.flags.is_empty() {
                    Ok(())
                } else if live.restartable() {
                    live.restart(plan.flags.clone()).map(|()| {
                        changed.extend(
                            check_flags(&live)
                                .into_iter()
                                .map(|f| format!("{f} (start-up)")),
                        );
                    })
                } else {
                    Err(format!(
                        "{} can only be set at start-up and the target was not started by the lab",
                        plan.flags.keys().cloned().collect::<Vec<_>>().join(", ")
                    ))
                };
                changed.extend(
                    plan.dynamic
                        .iter()
                        .map(|(k, v)| format!("SET SESSION {k}={v}")),
                );
                let session: BTreeMap<String, String> = plan.dynamic.into_iter().collect();
                match restarted {
                    Err(e) => Err(Stop::CannotRun(e)),
                    Ok(()) => scenario::run(
                        exp,
                        sc,
                        &live,
                        &session,
                        passes.or(sc.passes).unwrap_or(1).max(1),
                        &l.text,
                        &exp.wanted(),
                    ),
                }
            }
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
            let o: Vec<Outcome> = exp.verdict.iter().map(|r| r.get_ref().judge(&m)).collect();
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
        extra_md: String::new(),
    }
}

/// Expected seconds of `l` on `targets` targets at `scale`.
pub(crate) fn expected(l: &Loaded, scale: Scale, targets: usize) -> u64 {
    l.exp.expected_secs(scale) * targets as u64
}
