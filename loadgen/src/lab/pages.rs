//! The report of a run: `index.md` (a table of experiment, the study's figure, each target's
//! figure and verdict, then a section per experiment with its setup, counters and plots),
//! SVG plots, `results.json` with every pass, and the summary printed on stdout.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use serde::Serialize;

use crate::lab::run::{Loaded, TargetRun};
use crate::lab::verdict::Measured;
use crate::machine::Machine;
use crate::plot::{line_chart, Chart, Series};

/// One experiment's results on every target.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct ExpResult {
    /// Experiment name.
    pub(crate) name: String,
    /// Where it came from (suite or file).
    pub(crate) origin: String,
    /// The study and finding.
    pub(crate) study: String,
    /// The finding.
    pub(crate) finding: String,
    /// The study's figures.
    pub(crate) study_figure: String,
    /// The rules.
    pub(crate) rules: Vec<String>,
    /// Per target.
    pub(crate) targets: Vec<TargetRun>,
    /// The x axis of the plots: the option a matrix varies, or a scenario's `each` name.
    #[serde(skip)]
    pub(crate) x_label: String,
}

impl ExpResult {
    /// An empty result for `l`.
    pub(crate) fn new(l: &Loaded) -> ExpResult {
        ExpResult {
            name: l.exp.name.clone(),
            origin: l.origin.clone(),
            study: l.exp.study.clone(),
            finding: l.exp.finding.clone(),
            study_figure: l.exp.figure.clone(),
            rules: l
                .exp
                .verdict
                .iter()
                .map(|r| r.get_ref().describe())
                .collect(),
            targets: Vec::new(),
            x_label: match (&l.exp.matrix, &l.exp.scenario) {
                (Some(m), _) => axis_label(&m.vary),
                (_, Some(sc)) => sc.each.as_ref().map(|e| e.name.clone()).unwrap_or_default(),
                _ => String::new(),
            },
        }
    }
}

/// The x axis label of a matrix varying `vary`.
fn axis_label(vary: &str) -> String {
    match vary {
        "threads" => "connections (threads)".into(),
        other => other.into(),
    }
}

/// The whole run, as results.json holds it.
#[derive(Debug, Serialize)]
pub(crate) struct RunResult {
    /// The command line.
    pub(crate) command: String,
    /// Scale.
    pub(crate) scale: String,
    /// Machine facts.
    pub(crate) machine: MachineFacts,
    /// Targets: name and how the lab reached it.
    pub(crate) targets: Vec<(String, String)>,
    /// Every experiment.
    pub(crate) experiments: Vec<ExpResult>,
}

/// What the report says about the machine.
#[derive(Debug, Serialize)]
pub(crate) struct MachineFacts {
    /// Online CPUs.
    pub(crate) cores: usize,
    /// CPU model.
    pub(crate) model: String,
    /// Kernel.
    pub(crate) kernel: String,
    /// CPUs tpbed-load may run on.
    pub(crate) client_cpus: String,
    /// Git revision.
    pub(crate) git_rev: String,
}

impl MachineFacts {
    /// This machine.
    pub(crate) fn collect() -> MachineFacts {
        let m = Machine::collect();
        MachineFacts {
            cores: m.cores,
            model: m.model,
            kernel: m.kernel,
            client_cpus: m.client_cpus,
            git_rev: m.git_rev,
        }
    }
}

fn cell(s: &str) -> String {
    s.replace('|', "\\|").replace('\n', " ")
}

/// The summary table printed at the end.
pub(crate) fn summary(r: &RunResult) -> String {
    let mut o = String::new();
    let w = r
        .experiments
        .iter()
        .map(|e| e.name.len())
        .max()
        .unwrap_or(10)
        .max(10);
    let tw = r
        .targets
        .iter()
        .map(|t| t.0.len())
        .max()
        .unwrap_or(6)
        .max(6);
    let _ = writeln!(
        o,
        "{:<w$}  {:<tw$}  {:<16}  measured",
        "experiment", "target", "verdict"
    );
    for e in &r.experiments {
        for t in &e.targets {
            let _ = writeln!(
                o,
                "{:<w$}  {:<tw$}  {:<16}  {}",
                e.name,
                t.target,
                t.verdict.word(),
                match &t.verdict {
                    crate::lab::verdict::Verdict::CannotRun(why) => why.clone(),
                    _ => t.figure(),
                }
            );
        }
    }
    o
}

fn slug(s: &str) -> String {
    s.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' {
                c
            } else {
                '_'
            }
        })
        .collect()
}

/// Writes index.md, the plots and results.json into `dir`; returns index.md's path.
pub(crate) fn write(dir: &Path, r: &RunResult) -> Result<PathBuf, String> {
    std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let mut md = String::new();
    write_summary(&mut md, r);
    for e in &r.experiments {
        let _ = writeln!(md, "\n## {}\n", e.name);
        let _ = writeln!(md, "<a id=\"{}\"></a>\n", slug(&e.name));
        let _ = writeln!(md, "{} — {}\n", cell(&e.study), e.finding);
        let _ = writeln!(md, "Study's figure: {}\n", e.study_figure);
        let _ = writeln!(md, "Source: `{}`. Rules (all must hold):\n", e.origin);
        for rule in &e.rules {
            let _ = writeln!(md, "- {rule}");
        }
        for t in &e.targets {
            write_target(&mut md, e, t);
        }
        plot_metrics(dir, &mut md, e)?;
        plot_fits(dir, &mut md, e)?;
    }
    let index = dir.join("index.md");
    std::fs::write(&index, md).map_err(|e| format!("{}: {e}", index.display()))?;
    let json = serde_json::to_string_pretty(r).map_err(|e| e.to_string())?;
    let jp = dir.join("results.json");
    std::fs::write(&jp, json + "\n").map_err(|e| format!("{}: {e}", jp.display()))?;
    Ok(index)
}

/// The report's head: the command, the machine, the targets and every experiment's verdict
/// on each target.
fn write_summary(md: &mut String, r: &RunResult) {
    let m = &r.machine;
    let _ = writeln!(md, "# tpbed-load experiment run\n");
    let _ = writeln!(md, "```sh\n{}\n```\n", r.command);
    let _ = writeln!(
        md,
        "Scale `{}`. Machine: {} CPUs ({}), kernel {}; tpbed-load may run on CPUs {}; git revision {}. \
         Client and servers share this machine unless a target is elsewhere; nothing else on it is controlled.\n",
        r.scale, m.cores, m.model, m.kernel, m.client_cpus, m.git_rev
    );
    let _ = writeln!(md, "Targets:\n");
    for (n, how) in &r.targets {
        let _ = writeln!(md, "- **{n}**: {}", cell(how));
    }
    let _ = writeln!(md, "\n## Verdicts\n");
    let _ = write!(md, "| experiment | study's figure |");
    let mut sep = "|---|---|".to_string();
    for (n, _) in &r.targets {
        let _ = write!(md, " {n}: measured | {n}: verdict |");
        sep.push_str("---|---|");
    }
    let _ = writeln!(md, "\n{sep}");
    for e in &r.experiments {
        let _ = write!(
            md,
            "| [{}](#{}) | {} |",
            e.name,
            slug(&e.name),
            cell(&e.study_figure)
        );
        for (n, _) in &r.targets {
            match e.targets.iter().find(|t| &t.target == n) {
                Some(t) => {
                    let _ = write!(
                        md,
                        " {} | {} |",
                        cell(&t.figure()),
                        cell(&t.verdict.to_string())
                    );
                }
                None => {
                    let _ = write!(md, " - | not run |");
                }
            }
        }
        let _ = writeln!(md);
    }
}

/// One experiment's section for one target: the server, its settings and variables, the
/// verdict with each rule's outcome, and the measurements.
fn write_target(md: &mut String, e: &ExpResult, t: &TargetRun) {
    let _ = writeln!(md, "\n### {} on {}\n", e.name, t.target);
    let _ = writeln!(
        md,
        "Server: {} ({}), CPUs {}, {:.0} s. Settings changed by the lab: {}.\n",
        if t.version.is_empty() {
            "-"
        } else {
            &t.version
        },
        t.flavour.map_or("-".into(), |f| format!("{f:?}")),
        if t.server_cpus.is_empty() {
            "-"
        } else {
            &t.server_cpus
        },
        t.seconds,
        if t.changed.is_empty() {
            "none".into()
        } else {
            t.changed.join(", ")
        }
    );
    if !t.variables.is_empty() {
        let _ = writeln!(
            md,
            "Variables: {}\n",
            t.variables
                .iter()
                .map(|(k, v)| format!("`{k}={v}`"))
                .collect::<Vec<_>>()
                .join(", ")
        );
    }
    let nd = &t.non_default;
    if !nd.known {
        let _ = writeln!(
            md,
            "Variables that differ from the defaults: {}.\n",
            nd.source
        );
    } else if nd.differs.is_empty() {
        let _ = writeln!(
            md,
            "No variable differs from the defaults ({}).\n",
            nd.source
        );
    } else {
        let _ = writeln!(
            md,
            "Variables that differ from the defaults (from {}): {}\n",
            nd.source,
            nd.differs
                .iter()
                .map(|d| format!("`{d}`"))
                .collect::<Vec<_>>()
                .join(", ")
        );
    }
    let _ = writeln!(md, "**Verdict: {}**\n", cell(&t.verdict.to_string()));
    let _ = writeln!(md, "| rule | measured | verdict |\n|---|---|---|");
    for o in &t.outcomes {
        let _ = writeln!(
            md,
            "| {} | {} | {} |",
            cell(&o.rule),
            cell(&o.measured),
            cell(&o.verdict.to_string())
        );
    }
    if !t.extra_md.is_empty() {
        let _ = writeln!(md, "\n{}", t.extra_md);
    }
    if !t.table.is_empty() {
        let _ = writeln!(md, "\nMedians over passes:\n\n{}", t.table);
    } else if !t.measurements.is_empty() {
        let _ = writeln!(
            md,
            "\nMeasurements (every pass):\n\n| name | passes |\n|---|---|"
        );
        for (k, v) in &t.measurements {
            let text = match v {
                Measured::Values(vs) => vs
                    .iter()
                    .map(|x| format!("{x:.4}"))
                    .collect::<Vec<_>>()
                    .join(" / "),
                Measured::Missing(w) => format!("missing: {w}"),
            };
            let _ = writeln!(md, "| {k} | {} |", cell(&text));
        }
    }
    for n in &t.notes {
        let _ = writeln!(md, "- {}", cell(n));
    }
}

/// One plot per metric, with every target's configurations as series.
fn plot_metrics(dir: &Path, md: &mut String, e: &ExpResult) -> Result<(), String> {
    let mut metrics: Vec<&String> = e
        .targets
        .iter()
        .flat_map(|t| t.plots.iter().map(|p| &p.0))
        .collect();
    metrics.sort();
    metrics.dedup();
    for metric in metrics {
        let series: Vec<Series> = e
            .targets
            .iter()
            .flat_map(|t| {
                t.plots
                    .iter()
                    .filter(|p| &p.0 == metric)
                    .flat_map(|p| p.1.iter())
                    .map(|s| Series {
                        label: format!("{} {}", t.target, s.label),
                        points: s.points.clone(),
                        passes: s.passes.clone(),
                    })
                    .collect::<Vec<_>>()
            })
            .filter(|s| !s.points.is_empty())
            .collect();
        if series.is_empty() {
            continue;
        }
        let file = format!("{}-{}.svg", slug(&e.name), slug(metric));
        line_chart(
            &dir.join(&file),
            &Chart {
                title: &format!("{}: {metric} (line: median; dots: each pass)", e.name),
                x_label: &e.x_label,
                y_label: metric,
                log_x: false,
                log_y: false,
            },
            &series,
        )?;
        let _ = writeln!(md, "\n![{metric}]({file})");
    }
    Ok(())
}

/// Each series a fit or trend rule read, drawn with its linear fit.
fn plot_fits(dir: &Path, md: &mut String, e: &ExpResult) -> Result<(), String> {
    for t in &e.targets {
        for (name, pts, passes) in fit_series(t) {
            let file = format!("{}-{}-{}.svg", slug(&e.name), slug(&t.target), slug(&name));
            let (slope, icpt, _) = crate::lab::verdict::fit(&pts);
            let line: Vec<(f64, f64)> = pts.iter().map(|(x, _)| (*x, icpt + slope * x)).collect();
            line_chart(
                &dir.join(&file),
                &Chart {
                    title: &format!("{} on {}: {name} with its linear fit", e.name, t.target),
                    x_label: if e.x_label.is_empty() {
                        &name
                    } else {
                        &e.x_label
                    },
                    y_label: "median of the passes",
                    log_x: false,
                    log_y: false,
                },
                &[
                    Series {
                        label: "measured (line: median; dots: each pass)".into(),
                        points: pts,
                        passes,
                    },
                    Series {
                        label: "fit".into(),
                        points: line,
                        passes: Vec::new(),
                    },
                ],
            )?;
            let _ = writeln!(md, "\n![{name} on {}]({file})", t.target);
        }
    }
    Ok(())
}

/// Points (x, y) of a chart.
type Points = Vec<(f64, f64)>;

/// Series a fit or trend rule read, with their median points and every pass's.
fn fit_series(t: &TargetRun) -> Vec<(String, Points, Points)> {
    let mut names: Vec<String> = t
        .measurements
        .keys()
        .filter_map(|k| k.split_once('@').map(|(s, _)| s.to_string()))
        .collect();
    names.sort();
    names.dedup();
    if !t.table.is_empty() {
        return Vec::new();
    }
    names
        .into_iter()
        .filter_map(|n| {
            crate::lab::verdict::series(&t.measurements, &n)
                .ok()
                .map(|(p, _)| {
                    let passes = passes_of(&t.measurements, &n);
                    (n, p, passes)
                })
        })
        .filter(|(_, p, _)| p.len() >= 3)
        .collect()
}

/// Every pass of the series `NAME@X`, as (x, value).
fn passes_of(m: &crate::lab::verdict::Measurements, name: &str) -> Vec<(f64, f64)> {
    let prefix = format!("{name}@");
    m.iter()
        .filter_map(|(k, v)| {
            let x = k.strip_prefix(&prefix)?.parse::<f64>().ok()?;
            match v {
                Measured::Values(vs) => Some(vs.iter().map(move |v| (x, *v))),
                Measured::Missing(_) => None,
            }
        })
        .flatten()
        .collect()
}
