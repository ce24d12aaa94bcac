//! `tpbed-load experiment`: named, versioned experiments (scenarios and matrices in TOML) run
//! against tpbed and other MySQL-compatible servers, with counters, verdicts and reports.

pub(crate) mod across;
pub(crate) mod by_config;
pub(crate) mod conformance;
pub(crate) mod counters;
pub(crate) mod defaults;
pub(crate) mod knobs;
pub(crate) mod matrix;
pub(crate) mod pages;
pub(crate) mod run;
pub(crate) mod scenario;
pub(crate) mod server_log;
pub(crate) mod spec;
pub(crate) mod suite;
pub(crate) mod sysbench_client;
pub(crate) mod target;
pub(crate) mod verdict;

use std::path::PathBuf;
use std::sync::Arc;

use clap::{Args, Subcommand, ValueEnum};
use indicatif::{ProgressBar, ProgressStyle};

use crate::conn::WireFactory;
use crate::lab::pages::{ExpResult, MachineFacts, RunResult};
use crate::lab::spec::Scale;
use crate::lab::target::{parse_targets, How};

/// `tpbed-load experiment` options.
#[derive(Debug, Clone, Args)]
pub(crate) struct ExperimentArgs {
    /// What to do.
    #[command(subcommand)]
    pub(crate) cmd: ExpCmd,
}

/// `experiment list|show|run`.
#[derive(Debug, Clone, Subcommand)]
pub(crate) enum ExpCmd {
    /// Every built-in experiment: its study and finding, expected time per scale.
    List,
    /// What an experiment does, its statements, its verdict rule and the study's figures.
    Show {
        /// Experiment name (or its tag, e.g. f1) or a file.
        name: String,
        /// Show the statements at this scale.
        #[arg(long, value_enum, default_value_t = Scale::Small)]
        scale: Scale,
    },
    /// Run experiments (names, suites, `all`, or files) against targets.
    Run(LabRunArgs),
}

/// Output format of `experiment run`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum LabFormat {
    /// The summary table.
    Text,
    /// results.json on stdout.
    Json,
}

/// `tpbed-load experiment run` options.
#[derive(Debug, Clone, Args)]
pub(crate) struct LabRunArgs {
    /// Experiment names (or tags like f1), suites, `all`, or experiment files (./my.toml).
    #[arg(required = true)]
    pub(crate) what: Vec<String>,
    /// `tpbed` (start tpbed-server next to tpbed-load) or NAME=HOST:PORT (repeatable).
    #[arg(long = "target")]
    pub(crate) targets: Vec<String>,
    /// A server to start: 'NAME=COMMAND ... {port}' (repeatable).
    #[arg(long = "target-cmd")]
    pub(crate) target_cmds: Vec<String>,
    /// The tpbed-server binary for `--target tpbed` (default: next to tpbed-load, else PATH).
    #[arg(long = "server-bin")]
    pub(crate) server_bin: Option<PathBuf>,
    /// User to log in as on every target.
    #[arg(long, default_value = "root")]
    pub(crate) user: String,
    /// Password.
    #[arg(long, default_value = "")]
    pub(crate) password: String,
    /// small (fits a 2-core machine) or paper (the studies' sizes).
    #[arg(long, value_enum, default_value_t = Scale::Small)]
    pub(crate) scale: Scale,
    /// Passes per experiment (default: the experiment's own).
    #[arg(long)]
    pub(crate) passes: Option<usize>,
    /// Report folder.
    #[arg(long, default_value = "tpbed-lab")]
    pub(crate) out: PathBuf,
    /// What to print at the end.
    #[arg(long, value_enum, default_value_t = LabFormat::Text)]
    pub(crate) format: LabFormat,
    /// Exit 0 even when a verdict is *differs* (by default the run then exits 1).
    #[arg(long)]
    pub(crate) no_fail: bool,
}

/// `tpbed-load experiment`.
pub(crate) fn experiment_cmd(a: &ExperimentArgs, wires: &Arc<WireFactory>) -> Result<(), String> {
    match &a.cmd {
        ExpCmd::List => {
            print!("{}", list()?);
            Ok(())
        }
        ExpCmd::Show { name, scale } => {
            for l in suite::resolve(std::slice::from_ref(name), *scale)? {
                print!("{}", show(&l));
            }
            Ok(())
        }
        ExpCmd::Run(r) => run_cmd(r, wires),
    }
}

fn list() -> Result<String, String> {
    let mut o = String::new();
    o.push_str("suite             experiment                     small   paper  finding\n");
    for b in suite::BUILTINS {
        let small = suite::load(b, Scale::Small)?;
        let paper = suite::load(b, Scale::Paper)?;
        o.push_str(&format!(
            "{:<17} {:<30} {:>4} s {:>5} s  {}: {}\n",
            b.suite,
            small.exp.name,
            small.exp.expected_secs(Scale::Small),
            paper.exp.expected_secs(Scale::Paper),
            small.exp.study,
            small.exp.finding
        ));
    }
    o.push_str("\nrun: tpbed-load experiment run NAME...|SUITE|all|./file.toml --target tpbed [--target-cmd 'NAME=CMD {port}']\n");
    Ok(o)
}

/// `experiment show`: an experiment's finding, scales and settings, its steps, matrix or
/// cases, what it can measure and its verdict rules.
fn show(l: &run::Loaded) -> String {
    let e = &l.exp;
    let mut o = format!("{} ({})\n\n", e.name, l.origin);
    o.push_str(&format!(
        "study:   {}\nfinding: {}\nfigure:  {}\n",
        e.study, e.finding, e.figure
    ));
    if !e.about.trim().is_empty() {
        o.push_str(&format!("\n{}\n", e.about.trim()));
    }
    o.push_str(&format!(
        "\nexpected time per target: {}\n",
        e.seconds
            .iter()
            .map(|(k, v)| format!("{k} {v} s"))
            .collect::<Vec<_>>()
            .join(", ")
    ));
    for (scale, vars) in &e.scale {
        o.push_str(&format!(
            "scale {scale}: {}\n",
            vars.iter()
                .map(|(k, v)| format!("{k}={}", spec::value_text(v)))
                .collect::<Vec<_>>()
                .join(", ")
        ));
    }
    if !e.settings.is_empty() {
        o.push_str(&format!(
            "settings: {}\n",
            e.settings_text()
                .iter()
                .map(|(k, v)| format!("{k}={v}"))
                .collect::<Vec<_>>()
                .join(", ")
        ));
    }
    if let Some(sc) = &e.scenario {
        show_scenario(sc, &mut o);
        o.push_str("\ncounters a measure step may read:\n");
        for (c, what) in counters::COUNTERS {
            o.push_str(&format!("  {c:<16} {what}\n"));
        }
    }
    if let Some(mx) = &e.matrix {
        show_matrix(mx, &mut o);
    }
    if let Some(cf) = &e.conformance {
        show_conformance(cf, &mut o);
    }
    o.push_str("\nverdict (all rules must hold):\n");
    for r in &e.verdict {
        o.push_str(&format!("  {}\n", r.get_ref().describe()));
    }
    o
}

/// The scenario part of `experiment show`: sessions and each step with its checks.
fn show_scenario(sc: &spec::Scenario, o: &mut String) {
    o.push_str(&format!("\nsessions: {}\n", sc.sessions.join(", ")));
    if let Some(each) = &sc.each {
        o.push_str(&format!(
            "steps run once per {} in {:?}\n",
            each.name, each.values
        ));
    }
    for st in &sc.step {
        let s = st.get_ref();
        let who = s.session.as_deref().unwrap_or("-");
        let line = match s.action() {
            Ok(spec::Action::Sql(q)) => format!("{who}: {q}"),
            Ok(spec::Action::Send(q)) => format!("{who}: send {q}"),
            Ok(spec::Action::Reap) => format!("{who}: reap"),
            Ok(spec::Action::Sleep(ms)) => format!("sleep {ms} ms"),
            Ok(spec::Action::Measure { name, counter }) => {
                format!(
                    "measure {name} = {counter}{}",
                    s.session
                        .as_ref()
                        .map(|s| format!(" of {s}"))
                        .unwrap_or_default()
                )
            }
            Ok(spec::Action::Create(t)) => format!("create {t} (tests/fixtures/queue.sql)"),
            Ok(spec::Action::Fill { table, jobs }) => {
                format!("fill {table} with {jobs} ready jobs")
            }
            Err(e) => e,
        };
        let mut extra = Vec::new();
        if let Some(c) = s.expect_error {
            extra.push(format!("expect error {c}"));
        }
        if let Some(t) = &s.time {
            extra.push(format!("time -> {t}"));
        }
        if let Some(r) = &s.rows {
            extra.push(format!("rows -> {r}"));
        }
        if let Some(r) = s.repeat {
            extra.push(format!("x{r}, median"));
        }
        o.push_str(&format!(
            "  {line}{}\n",
            if extra.is_empty() {
                String::new()
            } else {
                format!("   [{}]", extra.join(", "))
            }
        ));
    }
}

/// The matrix part of `experiment show`: workload, configurations and each cell's metrics.
fn show_matrix(mx: &spec::Matrix, o: &mut String) {
    o.push_str(&format!(
        "\nworkload: {} {}\n{} in {:?}, {} s per cell, {} pass(es)\n",
        mx.workload,
        mx.options
            .iter()
            .map(|(k, v)| format!("--{k}={}", spec::value_text(v)))
            .collect::<Vec<_>>()
            .join(" "),
        mx.vary,
        mx.values,
        mx.time_s,
        mx.passes.unwrap_or(1)
    ));
    for c in &mx.config {
        o.push_str(&format!(
            "  config {}: {}{}{} {}\n",
            c.name,
            c.workload
                .as_ref()
                .map(|w| format!("workload {w} "))
                .unwrap_or_default(),
            if c.by_sysbench() {
                "client sysbench "
            } else {
                ""
            },
            c.options
                .iter()
                .map(|(k, v)| format!("--{k}={}", spec::value_text(v)))
                .collect::<Vec<_>>()
                .join(" "),
            c.settings
                .iter()
                .map(|(k, v)| format!("{k}={}", spec::value_text(v)))
                .collect::<Vec<_>>()
                .join(" ")
        ));
    }
    o.push_str("\nmetrics of each cell (CONFIGURATION.METRIC@VALUE):\n");
    let mut workloads: Vec<&str> = mx.config.iter().map(|c| c.workload(mx)).collect();
    workloads.push(&mx.workload);
    workloads.sort_unstable();
    workloads.dedup();
    let mut shown = std::collections::BTreeSet::new();
    for w in workloads {
        for (m, what) in matrix::metric_keys(w) {
            if shown.insert(m.clone()) {
                o.push_str(&format!("  {m:<20} {what}\n"));
            }
        }
    }
}

/// The conformance part of `experiment show`: how many cases and the first ones.
fn show_conformance(cf: &conformance::Spec, o: &mut String) {
    let cases = cf.cases();
    o.push_str(&format!(
        "\n{} cases, innodb_lock_wait_timeout = {} s; the first ones:\n",
        cases.len(),
        cf.lock_wait_timeout
    ));
    for c in cases.iter().take(5) {
        o.push_str(&format!("  {}\n", c.name()));
    }
}

fn run_cmd(a: &LabRunArgs, wires: &Arc<WireFactory>) -> Result<(), String> {
    let exps = suite::resolve(&a.what, a.scale)?;
    let targets = parse_targets(&a.targets, &a.target_cmds, a.server_bin.as_deref())?;
    std::fs::create_dir_all(&a.out).map_err(|e| format!("{}: {e}", a.out.display()))?;
    let total: u64 = exps
        .iter()
        .map(|l| run::expected(l, a.scale, targets.len()))
        .sum();
    let bar = ProgressBar::new(total.max(1));
    bar.set_style(
        ProgressStyle::with_template("[{elapsed_precise}] {bar:30} {percent:>3}% ETA {eta} {msg}")
            .map_err(|e| e.to_string())?,
    );
    let mut results = Vec::new();
    let mut done = 0u64;
    for l in &exps {
        let mut er = ExpResult::new(l);
        for t in &targets {
            let tick = |m: &str| bar.set_message(m.to_string());
            let tr = run::run_one(l, t, &a.user, &a.password, a.passes, &a.out, wires, &tick);
            bar.println(format!("{} on {}: {}", l.exp.name, t.name, tr.verdict));
            er.targets.push(tr);
            done += l.exp.expected_secs(a.scale);
            bar.set_position(done.min(total));
        }
        if let Some(cf) = &l.exp.conformance {
            conformance::judge(&mut er, &l.exp, cf);
        }
        across::judge(&mut er, &l.exp);
        results.push(er);
    }
    bar.finish_and_clear();
    let users: Vec<String> = {
        let mut u: Vec<String> = exps
            .iter()
            .filter_map(|l| l.exp.scenario.as_ref())
            .flat_map(|sc| sc.users.values().cloned())
            .collect();
        u.sort();
        u.dedup();
        u
    };
    let login = crate::conn::Login {
        user: a.user.clone(),
        password: a.password.clone(),
        db: String::new(),
    };
    let cleaned: Vec<String> = targets
        .iter()
        .map(|t| match target::clean_up(t, &login, &users, wires) {
            Ok(done) if done.is_empty() => String::new(),
            Ok(done) => format!(" (at the end the lab {done})"),
            Err(e) => format!(" (the lab could not drop its database at the end: {e})"),
        })
        .collect();
    let rr = RunResult {
        command: shell_line(std::env::args_os()),
        scale: a.scale.name().into(),
        machine: MachineFacts::collect(),
        targets: targets
            .iter()
            .zip(&cleaned)
            .map(|(t, cleaned)| {
                (
                    t.name.clone(),
                    match &t.how {
                        How::Tpbed(p) => format!("tpbed-server {} started by the lab", p.display()),
                        How::Endpoint(a) => format!("running server at {a}{cleaned}"),
                        How::Command(c) => format!("started by the lab: `{c}`"),
                    },
                )
            })
            .collect(),
        experiments: results,
    };
    let index = pages::write(&a.out, &rr)?;
    match a.format {
        LabFormat::Text => print!("{}", pages::summary(&rr)),
        LabFormat::Json => println!(
            "{}",
            serde_json::to_string_pretty(&rr).map_err(|e| e.to_string())?
        ),
    }
    let differs = differing(&rr);
    let mut line = format!(
        "tpbed-load experiment: report {} (results.json beside it); results in {}",
        index.display(),
        a.out.display()
    );
    if !differs.is_empty() {
        line.push_str(&format!(
            "; {} verdict(s) differ: {}{}",
            differs.len(),
            differs.join(", "),
            if a.no_fail {
                " (--no-fail: exit status 0)"
            } else {
                ": exit status 1 (--no-fail for 0)"
            }
        ));
    }
    if a.format == LabFormat::Json {
        eprintln!("{line}");
    } else {
        println!("{line}");
    }
    if !differs.is_empty() && !a.no_fail {
        std::process::exit(1);
    }
    Ok(())
}

/// `EXPERIMENT on TARGET` for each verdict that is *differs*.
fn differing(rr: &RunResult) -> Vec<String> {
    rr.experiments
        .iter()
        .flat_map(|e| {
            e.targets
                .iter()
                .filter(|t| matches!(t.verdict, verdict::Verdict::Differs(_)))
                .map(move |t| format!("{} on {}", e.name, t.target))
        })
        .collect()
}

/// A command line as a POSIX shell reads it back: each argument that holds anything but
/// `A-Za-z0-9_@%+=:,./-` in single quotes (a quote inside as `'\''`), an empty one as `''`.
pub(crate) fn shell_line(args: impl IntoIterator<Item = std::ffi::OsString>) -> String {
    args.into_iter()
        .map(|a| {
            let a = a.to_string_lossy().into_owned();
            let plain = !a.is_empty()
                && a.chars()
                    .all(|c| c.is_ascii_alphanumeric() || "_@%+=:,./-".contains(c));
            if plain {
                a
            } else {
                format!("'{}'", a.replace('\'', "'\\''"))
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_command_line_keeps_its_quoting() {
        let args = [
            "tpbed-load",
            "--target-cmd",
            "mariadb=mariadbd --port={port}",
            "",
            "it's",
            "--scale=small",
        ];
        let line = shell_line(args.iter().map(std::ffi::OsString::from));
        assert_eq!(
            line,
            "tpbed-load --target-cmd 'mariadb=mariadbd --port={port}' '' 'it'\\''s' --scale=small"
        );
    }
}
