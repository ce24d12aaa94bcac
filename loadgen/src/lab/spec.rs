//! The experiment file format (TOML): a header naming the study's finding, scale variables, a
//! `[scenario]` (sessions and ordered steps) or a `[matrix]` (configurations x workload x
//! concurrency x passes), and the `[[verdict]]` rules. Every error names the file's line.

use std::collections::BTreeMap;

use serde::Deserialize;
use toml::Spanned;

use crate::lab::verdict::Rule;

/// How big a run is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum Scale {
    /// Fits a 2-core machine: each experiment in minutes.
    Small,
    /// The studies' sizes, for bare-metal machines.
    Paper,
}

impl Scale {
    /// Its name in files and reports.
    pub(crate) fn name(self) -> &'static str {
        match self {
            Scale::Small => "small",
            Scale::Paper => "paper",
        }
    }
}

/// One experiment, as written in its file.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct Experiment {
    /// Short name (`f1-locks-per-claim`).
    pub(crate) name: String,
    /// The study and finding it reproduces (`queue-study F1`), or anything for a user's file.
    #[serde(default)]
    pub(crate) study: String,
    /// The finding in one sentence.
    #[serde(default)]
    pub(crate) finding: String,
    /// The study's own figures.
    #[serde(default)]
    pub(crate) figure: String,
    /// What the experiment does and why it measures the finding.
    #[serde(default)]
    pub(crate) about: String,
    /// Expected seconds per target at each scale.
    #[serde(default)]
    pub(crate) seconds: BTreeMap<String, u64>,
    /// Variables substituted as `{name}` in every string, per scale (`[scale.small]`).
    #[serde(default)]
    pub(crate) scale: BTreeMap<String, BTreeMap<String, toml::Value>>,
    /// Server variables this experiment needs on every session or target.
    #[serde(default)]
    pub(crate) settings: BTreeMap<String, toml::Value>,
    /// Lock-behaviour experiments.
    pub(crate) scenario: Option<Scenario>,
    /// Throughput and latency experiments.
    pub(crate) matrix: Option<Matrix>,
    /// Lock-conformance cases compared across targets.
    pub(crate) conformance: Option<crate::lab::conformance::Spec>,
    /// The rules that decide the verdict (all must hold).
    #[serde(default)]
    pub(crate) verdict: Vec<Spanned<Rule>>,
}

impl Experiment {
    /// The measurement names the verdict rules read.
    pub(crate) fn wanted(&self) -> std::collections::BTreeSet<String> {
        self.verdict
            .iter()
            .flat_map(|r| r.get_ref().names())
            .map(|n| crate::lab::across::split(&n).1.to_string())
            .collect()
    }

    /// Expected seconds per target at `scale` (60 when the file does not say).
    pub(crate) fn expected_secs(&self, scale: Scale) -> u64 {
        self.seconds.get(scale.name()).copied().unwrap_or(60)
    }

    /// The experiment's settings as text.
    pub(crate) fn settings_text(&self) -> BTreeMap<String, String> {
        self.settings
            .iter()
            .map(|(k, v)| (k.clone(), value_text(v)))
            .collect()
    }
}

/// Named sessions (opened once per pass) and ordered steps, run once per pass, or once per
/// `each` value in turn (a step with `from`/`until` only for some values).
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct Scenario {
    /// Session names; each is one connection, opened before the first step.
    pub(crate) sessions: Vec<String>,
    /// Sessions that log in as another user (created by the lab, password empty, all
    /// privileges on the lab's database only) instead of the lab's own login.
    #[serde(default)]
    pub(crate) users: BTreeMap<String, String>,
    /// Global privileges granted to such a user besides (`{ lab_admin = ["TP_CONNECTION_ADMIN"] }`).
    #[serde(default)]
    pub(crate) grants: BTreeMap<String, Vec<String>>,
    /// Run the steps once per value, with `{NAME}` substituted (one variable).
    pub(crate) each: Option<Each>,
    /// Passes (default 1; `--passes` overrides).
    pub(crate) passes: Option<usize>,
    /// Run the whole scenario once per name, each time with these settings added (`{config}`
    /// replaced by the name; a start-up setting restarts a server the lab started); every
    /// measurement is then named `NAME.MEASUREMENT`.
    pub(crate) config_each: Option<ConfigEach>,
    /// The steps, in order.
    pub(crate) step: Vec<Spanned<Step>>,
}

/// `each = { name = "k", values = [0, 100] }`.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct Each {
    /// Variable name.
    pub(crate) name: String,
    /// Its values.
    pub(crate) values: Vec<i64>,
}

/// One step as written (exactly one action field is set).
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct Step {
    /// The session running it (sql, send, reap, measure of a session's locks).
    pub(crate) session: Option<String>,
    /// Run a statement and wait for its reply.
    pub(crate) sql: Option<String>,
    /// Send a statement without waiting (it may block); `reap` collects the reply.
    pub(crate) send: Option<String>,
    /// Wait for the reply of the session's `send`.
    pub(crate) reap: Option<bool>,
    /// Pause.
    pub(crate) sleep_ms: Option<u64>,
    /// Record a measurement under this name.
    pub(crate) measure: Option<String>,
    /// With `measure`: the counter to read (see `experiment show`).
    pub(crate) counter: Option<String>,
    /// Create a table of the job-queue fixture (dropped first): `q_v1`, `q_v2`, `q_v3`.
    pub(crate) create: Option<String>,
    /// Insert ready jobs into a fixture table.
    pub(crate) fill: Option<String>,
    /// With `fill`: how many jobs.
    pub(crate) jobs: Option<u64>,
    /// With `sql`/`reap`: the error code the statement must end with (0: success).
    pub(crate) expect_error: Option<u16>,
    /// With `sql`/`reap`: record the statement's time in milliseconds under this name.
    pub(crate) time: Option<String>,
    /// With `sql`/`reap`: record the number of rows it returned under this name.
    pub(crate) rows: Option<String>,
    /// With `sql`/`reap`: record the error code the statement ended with (0: success) under
    /// this name and go on, whatever it is (instead of `expect_error`'s requirement).
    pub(crate) error: Option<String>,
    /// With `sql`: run it this many times and record the median time.
    pub(crate) repeat: Option<usize>,
    /// With `each`: run this step only when the value is at least this.
    pub(crate) from: Option<i64>,
    /// With `each`: run this step only when the value is at most this.
    pub(crate) until: Option<i64>,
}

impl Step {
    /// Whether the step runs for this `each` value.
    pub(crate) fn runs_at(&self, value: Option<i64>) -> bool {
        match value {
            Some(v) => self.from.is_none_or(|f| v >= f) && self.until.is_none_or(|u| v <= u),
            None => true,
        }
    }
}

/// What a step does (validated form of [`Step`]).
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Action {
    /// A statement, waited for.
    Sql(String),
    /// A statement sent without waiting.
    Send(String),
    /// Collect the reply of the last `send`.
    Reap,
    /// Pause.
    Sleep(u64),
    /// Read a counter.
    Measure {
        /// Measurement name.
        name: String,
        /// Counter name.
        counter: String,
    },
    /// Create a fixture table.
    Create(String),
    /// Insert ready jobs.
    Fill {
        /// Table.
        table: String,
        /// Jobs.
        jobs: u64,
    },
}

impl Step {
    /// The one action this step names.
    pub(crate) fn action(&self) -> Result<Action, String> {
        let mut found = Vec::new();
        if let Some(s) = &self.sql {
            found.push(Action::Sql(s.clone()));
        }
        if let Some(s) = &self.send {
            found.push(Action::Send(s.clone()));
        }
        if self.reap == Some(true) {
            found.push(Action::Reap);
        }
        if let Some(ms) = self.sleep_ms {
            found.push(Action::Sleep(ms));
        }
        if let Some(name) = &self.measure {
            let counter = self
                .counter
                .clone()
                .ok_or("`measure` needs `counter` (e.g. counter = \"record_locks\")")?;
            found.push(Action::Measure {
                name: name.clone(),
                counter,
            });
        }
        if let Some(t) = &self.create {
            found.push(Action::Create(t.clone()));
        }
        if let Some(t) = &self.fill {
            found.push(Action::Fill {
                table: t.clone(),
                jobs: self.jobs.ok_or("`fill` needs `jobs`")?,
            });
        }
        match found.len() {
            1 => Ok(found.remove(0)),
            0 => Err("a step needs one of sql, send, reap, sleep_ms, measure, create, fill".into()),
            _ => Err(
                "a step may do only one of sql, send, reap, sleep_ms, measure, create, fill".into(),
            ),
        }
    }
}

/// Configurations x workload x concurrency x passes.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct Matrix {
    /// `queue`, `tpcc`, `mixed` or a sysbench script name (`oltp_read_only`, ...).
    pub(crate) workload: String,
    /// The workload's options as `tpbed-load queue|tpcc run|run` takes them (without dashes).
    #[serde(default)]
    pub(crate) options: BTreeMap<String, toml::Value>,
    /// The option that takes the concurrency values (`threads` for sysbench, `workers`, `batch`).
    #[serde(default = "default_vary")]
    pub(crate) vary: String,
    /// Its values.
    pub(crate) values: Vec<u64>,
    /// Seconds per cell.
    pub(crate) time_s: u64,
    /// Passes (interleaved: every configuration once per pass); `--passes` overrides.
    pub(crate) passes: Option<usize>,
    /// The server configurations compared (default: one named `base`).
    #[serde(default)]
    pub(crate) config: Vec<Config>,
    /// More configurations from a list of names (after `config`'s).
    pub(crate) config_each: Option<ConfigEach>,
    /// Columns of the table (metric names).
    #[serde(default)]
    pub(crate) columns: Vec<String>,
    /// Plot a metric against the varied option.
    pub(crate) plot: Option<Plot>,
    /// The names `config_each` listed (filled when it is expanded): the report then puts
    /// every configuration in a column of its own.
    #[serde(skip)]
    pub(crate) listed: Vec<String>,
}

fn default_vary() -> String {
    "threads".into()
}

/// One configuration of a matrix.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct Config {
    /// Its name in measurement keys, tables and plots.
    pub(crate) name: String,
    /// Workload options added to (and overriding) the matrix's.
    #[serde(default)]
    pub(crate) options: BTreeMap<String, toml::Value>,
    /// Server variables of this configuration.
    #[serde(default)]
    pub(crate) settings: BTreeMap<String, toml::Value>,
    /// A workload of its own instead of the matrix's (a sysbench script name).
    #[serde(default)]
    pub(crate) workload: Option<String>,
    /// The client that runs its cells: `tpbed-load` (the default) or `sysbench` (the
    /// sysbench binary on PATH, sysbench scripts only).
    #[serde(default)]
    pub(crate) client: Option<String>,
}

impl Config {
    /// The workload its cells run.
    pub(crate) fn workload<'a>(&'a self, mx: &'a Matrix) -> &'a str {
        self.workload.as_deref().unwrap_or(&mx.workload)
    }

    /// Whether the sysbench binary runs its cells.
    pub(crate) fn by_sysbench(&self) -> bool {
        self.client.as_deref() == Some("sysbench")
    }
}

/// `[matrix.config_each]`: one configuration per name, each with these settings and options,
/// `{config}` in their values replaced by the name (`names = ["mysql", "fifo"]`, `settings =
/// { tpbed_thread_pool_policy = "{config}" }`): a list of policies is one line to extend.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct ConfigEach {
    /// The configurations' names, in order.
    pub(crate) names: Vec<String>,
    /// Workload options of each.
    #[serde(default)]
    pub(crate) options: BTreeMap<String, toml::Value>,
    /// Server variables of each.
    #[serde(default)]
    pub(crate) settings: BTreeMap<String, toml::Value>,
}

impl ConfigEach {
    /// The configurations it stands for.
    pub(crate) fn configs(&self) -> Vec<Config> {
        let named = |m: &BTreeMap<String, toml::Value>, name: &str| {
            m.iter()
                .map(|(k, v)| {
                    let v = match v {
                        toml::Value::String(s) => toml::Value::String(s.replace("{config}", name)),
                        other => other.clone(),
                    };
                    (k.clone(), v)
                })
                .collect()
        };
        self.names
            .iter()
            .map(|n| Config {
                name: n.clone(),
                options: named(&self.options, n),
                settings: named(&self.settings, n),
                workload: None,
                client: None,
            })
            .collect()
    }
}

/// `plot = { y = ["jobs_per_s"] }`.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct Plot {
    /// Metrics drawn, a chart per metric with a line per target and configuration.
    pub(crate) y: Vec<String>,
}

/// The 1-based line of a byte offset.
pub(crate) fn line_of(text: &str, offset: usize) -> usize {
    let end = offset.min(text.len());
    text.as_bytes()[..end]
        .iter()
        .filter(|b| **b == b'\n')
        .count()
        + 1
}

/// A TOML value as it is written into SQL or an option (strings unquoted).
pub(crate) fn value_text(v: &toml::Value) -> String {
    match v {
        toml::Value::String(s) => s.clone(),
        toml::Value::Integer(i) => i.to_string(),
        toml::Value::Float(f) => f.to_string(),
        toml::Value::Boolean(b) => b.to_string(),
        other => format!("{other:?}"),
    }
}

/// Replaces `{name}` with each variable's value.
fn substitute(text: &str, vars: &BTreeMap<String, toml::Value>) -> String {
    let mut out = text.to_string();
    for (k, v) in vars {
        out = out.replace(&format!("{{{k}}}"), &value_text(v));
    }
    out
}

/// Parses an experiment file at a scale: reads `[scale.NAME]`, substitutes its variables,
/// parses the result and checks it. `origin` names the file in messages. Also returns the
/// text after substitution (what step lines refer to).
pub(crate) fn parse_text(
    text: &str,
    scale: Scale,
    origin: &str,
) -> Result<(Experiment, String), String> {
    let at = |t: &str, span: Option<std::ops::Range<usize>>, msg: &str| match span {
        Some(s) => format!("{origin}:{}: {}", line_of(t, s.start), msg.trim()),
        None => format!("{origin}: {}", msg.trim()),
    };
    // The `[scale.*]` tables alone (the rest may hold `{name}` where TOML wants a value).
    let mut scales = String::new();
    let mut inside = false;
    for l in text.lines() {
        let t = l.trim_start();
        if t.starts_with('[') {
            inside = t.starts_with("[scale.");
        }
        scales.push_str(if inside { l } else { "" });
        scales.push('\n');
    }
    let raw: toml::Table =
        toml::from_str(&scales).map_err(|e| at(&scales, e.span(), e.message()))?;
    let vars: BTreeMap<String, toml::Value> = raw
        .get("scale")
        .and_then(|s| s.get(scale.name()))
        .and_then(|t| t.as_table())
        .map(|t| t.iter().map(|(k, v)| (k.clone(), v.clone())).collect())
        .unwrap_or_default();
    let text = substitute(text, &vars);
    let mut exp: Experiment =
        toml::from_str(&text).map_err(|e| at(&text, e.span(), e.message()))?;
    let mut listed = Vec::new();
    if let Some(mx) = exp.matrix.as_mut() {
        if let Some(each) = mx.config_each.take() {
            mx.config.extend(each.configs());
            mx.listed = each.names.clone();
            listed = each.names;
        }
    }
    if let Some(each) = exp.scenario.as_ref().and_then(|s| s.config_each.as_ref()) {
        listed = each.names.clone();
    }
    exp.verdict = expand_rules(std::mem::take(&mut exp.verdict), &listed)
        .map_err(|(span, msg)| at(&text, span, &msg))?;
    check(&exp).map_err(|(span, msg)| at(&text, span, &msg))?;
    Ok((exp, text))
}

type Located = (Option<std::ops::Range<usize>>, String);

/// A rule that names `{config}` stands for one rule per name `config_each` lists, in order,
/// each at the line of the rule as written.
fn expand_rules(
    rules: Vec<Spanned<Rule>>,
    names: &[String],
) -> Result<Vec<Spanned<Rule>>, Located> {
    let mut out = Vec::new();
    for r in rules {
        if !r.get_ref().names().iter().any(|n| n.contains("{config}")) {
            out.push(r);
            continue;
        }
        if names.is_empty() {
            return Err((
                Some(r.span()),
                "`{config}` in a rule needs a `config_each` list of names".into(),
            ));
        }
        for n in names {
            let rule = r.get_ref().map_names(|x| x.replace("{config}", n));
            out.push(Spanned::new(r.span(), rule));
        }
    }
    Ok(out)
}

fn check(e: &Experiment) -> Result<(), Located> {
    if e.name.trim().is_empty() {
        return Err((None, "`name` is empty".into()));
    }
    match (&e.scenario, &e.matrix) {
        (Some(s), None) => check_scenario(s)?,
        (None, Some(m)) => check_matrix(m)?,
        (None, None) if e.conformance.is_some() => {}
        (None, None) => {
            return Err((
                None,
                "an experiment needs a [scenario] or a [matrix]".into(),
            ))
        }
        (Some(_), Some(_)) => {
            return Err((
                None,
                "an experiment has a [scenario] or a [matrix], not both".into(),
            ))
        }
    }
    if let Some(c) = &e.conformance {
        if e.scenario.is_some() || e.matrix.is_some() {
            return Err((
                None,
                "an experiment with [conformance] has no [scenario] or [matrix]".into(),
            ));
        }
        c.check().map_err(|m| (None, m))?;
    }
    if e.verdict.is_empty() {
        return Err((
            None,
            "an experiment needs at least one [[verdict]] rule".into(),
        ));
    }
    for r in &e.verdict {
        r.get_ref().check().map_err(|m| (Some(r.span()), m))?;
    }
    check_names(e)
}

/// What an experiment measures, for checking the names its rules read: exact names, prefixes
/// of grouped counters (`NAME.GROUP`) and series (`NAME@X`).
struct Measurable {
    exact: std::collections::BTreeSet<String>,
    grouped: Vec<String>,
    /// What it records, in words (for the error).
    words: String,
}

impl Measurable {
    /// Every name a scenario records: its `measure`, `time` and `rows` names, with each
    /// `each` value substituted.
    fn of_scenario(s: &Scenario) -> Measurable {
        let values: Vec<Option<i64>> = match &s.each {
            Some(e) => e.values.iter().map(|v| Some(*v)).collect(),
            None => vec![None],
        };
        let mut m = Measurable {
            exact: Default::default(),
            grouped: Vec::new(),
            words: String::new(),
        };
        for st in &s.step {
            let step = st.get_ref();
            for v in values.iter().filter(|v| step.runs_at(**v)) {
                let subst = |n: &str| match (v, &s.each) {
                    (Some(v), Some(e)) => n.replace(&format!("{{{}}}", e.name), &v.to_string()),
                    _ => n.to_string(),
                };
                for n in [&step.time, &step.rows, &step.error].into_iter().flatten() {
                    m.exact.insert(subst(n));
                }
                if let Some(n) = &step.measure {
                    m.exact.insert(subst(n));
                    m.grouped.push(format!("{}.", subst(n)));
                }
            }
        }
        if let Some(each) = &s.config_each {
            let prefixed = |names: &[String]| -> Vec<String> {
                names
                    .iter()
                    .flat_map(|n| each.names.iter().map(move |c| format!("{c}.{n}")))
                    .collect()
            };
            m.exact = prefixed(&m.exact.iter().cloned().collect::<Vec<_>>())
                .into_iter()
                .collect();
            m.grouped = prefixed(&m.grouped);
        }
        m.words = m.exact.iter().cloned().collect::<Vec<_>>().join(", ");
        m
    }

    /// Every `CONFIGURATION.METRIC@VALUE` a matrix records.
    fn of_matrix(mx: &Matrix) -> Measurable {
        let base = [Config {
            name: "base".into(),
            options: BTreeMap::new(),
            settings: BTreeMap::new(),
            workload: None,
            client: None,
        }];
        let configs = if mx.config.is_empty() {
            &base[..]
        } else {
            &mx.config[..]
        };
        let mut exact = std::collections::BTreeSet::new();
        let mut metrics = std::collections::BTreeSet::new();
        for c in configs {
            for (metric, _) in crate::lab::matrix::metric_keys(c.workload(mx)) {
                for v in &mx.values {
                    exact.insert(format!("{}.{metric}@{v}", c.name));
                }
                metrics.insert(metric);
            }
        }
        let list = |v: Vec<String>| v.join(", ");
        let words = format!(
            "configurations {}; metrics {}; values {}",
            list(configs.iter().map(|c| c.name.clone()).collect()),
            list(metrics.into_iter().collect()),
            list(mx.values.iter().map(u64::to_string).collect())
        );
        Measurable {
            exact,
            grouped: Vec::new(),
            words,
        }
    }

    /// Whether a rule may read `name` (`series`: as a series `NAME@X`).
    fn has(&self, name: &str, series: bool) -> bool {
        if series {
            let prefix = format!("{name}@");
            self.exact.iter().any(|n| n.starts_with(&prefix))
        } else {
            self.exact.contains(name) || self.grouped.iter().any(|g| name.starts_with(g))
        }
    }
}

/// Every name a verdict rule reads is one the experiment measures: a misspelt name is an
/// error at the rule's line, not a target that *cannot run* it.
fn check_names(e: &Experiment) -> Result<(), Located> {
    let known = match (&e.scenario, &e.matrix) {
        (Some(s), _) => Measurable::of_scenario(s),
        (_, Some(mx)) => Measurable::of_matrix(mx),
        _ => Measurable {
            exact: crate::lab::conformance::MEASUREMENTS
                .iter()
                .map(|n| n.to_string())
                .collect(),
            grouped: Vec::new(),
            words: crate::lab::conformance::MEASUREMENTS.join(", "),
        },
    };
    for r in &e.verdict {
        let rule = r.get_ref();
        let series = matches!(rule, Rule::Fit { .. } | Rule::Trend { .. });
        if let Some(bad) = rule
            .names()
            .into_iter()
            .find(|n| !known.has(crate::lab::across::split(n).1, series))
        {
            let what = if series { "series" } else { "measurement" };
            let hint = match (&e.matrix, series) {
                (Some(_), false) => " (a matrix's are CONFIGURATION.METRIC@VALUE)",
                (Some(_), true) => " (a matrix's series are CONFIGURATION.METRIC)",
                (None, _) => "",
            };
            return Err((
                Some(r.span()),
                format!(
                    "the {what} `{bad}` in this `{}` rule is not one this experiment records{hint}; it records: {}",
                    rule.kind(),
                    known.words
                ),
            ));
        }
    }
    Ok(())
}

fn check_scenario(s: &Scenario) -> Result<(), Located> {
    if s.sessions.is_empty() {
        return Err((None, "[scenario] needs at least one session".into()));
    }
    if let Some(each) = &s.config_each {
        if !each.options.is_empty() {
            return Err((
                None,
                "[scenario.config_each] takes `names` and `settings` (a scenario has no workload options)".into(),
            ));
        }
        let mut names: Vec<&str> = each.names.iter().map(String::as_str).collect();
        names.sort_unstable();
        if names.is_empty() || names.windows(2).any(|w| w[0] == w[1]) {
            return Err((
                None,
                "[scenario.config_each] needs names, each different".into(),
            ));
        }
        if names.iter().any(|n| n.is_empty() || n.contains(['.', '@'])) {
            return Err((
                None,
                "a configuration name must be non-empty without '.' or '@'".into(),
            ));
        }
    }
    for (session, user) in &s.users {
        if !s.sessions.contains(session) {
            return Err((None, format!("users: {session:?} is not in sessions")));
        }
        if user.is_empty() || !user.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
            return Err((
                None,
                format!("users: {user:?} must be letters, digits and _"),
            ));
        }
    }
    for (user, privs) in &s.grants {
        if !s.users.values().any(|u| u == user) {
            return Err((None, format!("grants: {user:?} is not a user in users")));
        }
        if privs.iter().any(|p| {
            p.is_empty()
                || !p
                    .chars()
                    .all(|c| c.is_ascii_alphabetic() || c == '_' || c == ' ')
        }) {
            return Err((
                None,
                format!("grants: {user:?}: privileges are words like TP_CONNECTION_ADMIN"),
            ));
        }
    }
    let mut sent: BTreeMap<&str, bool> = BTreeMap::new();
    for st in &s.step {
        let span = Some(st.span());
        let step = st.get_ref();
        let action = step.action().map_err(|m| (span.clone(), m))?;
        let needs_session = matches!(action, Action::Sql(_) | Action::Send(_) | Action::Reap);
        if let Some(name) = &step.session {
            if !s.sessions.contains(name) {
                return Err((
                    span,
                    format!("session {name:?} is not in sessions = {:?}", s.sessions),
                ));
            }
        } else if needs_session {
            return Err((span, "this step needs `session`".into()));
        }
        let waits = matches!(action, Action::Sql(_) | Action::Reap);
        if !waits
            && (step.expect_error.is_some()
                || step.time.is_some()
                || step.rows.is_some()
                || step.error.is_some())
        {
            return Err((
                span,
                "expect_error, error, time and rows belong to a `sql` or `reap` step".into(),
            ));
        }
        if step.expect_error.is_some() && step.error.is_some() {
            return Err((
                span,
                "a step has `expect_error` (a requirement) or `error` (a record), not both".into(),
            ));
        }
        if (step.from.is_some() || step.until.is_some()) && s.each.is_none() {
            return Err((span, "`from` and `until` need `each`".into()));
        }
        if step.repeat.is_some() && !matches!(action, Action::Sql(_)) {
            return Err((span, "`repeat` belongs to a `sql` step".into()));
        }
        let who = step.session.as_deref().unwrap_or("");
        match action {
            Action::Send(_) => {
                let was = sent.insert(who, true);
                if was == Some(true) {
                    return Err((span, format!("session {who:?} sends again before its reap")));
                }
            }
            Action::Reap => {
                let was = sent.insert(who, false);
                if was != Some(true) {
                    return Err((span, format!("session {who:?} reaps with nothing sent")));
                }
            }
            Action::Sql(_) if sent.get(who) == Some(&true) => {
                return Err((
                    span,
                    format!("session {who:?} runs a statement while its send is pending"),
                ));
            }
            Action::Create(t) | Action::Fill { table: t, .. }
                if !matches!(t.as_str(), "q_v1" | "q_v2" | "q_v3") =>
            {
                return Err((
                    span,
                    format!("{t:?} is not a fixture table (q_v1, q_v2, q_v3)"),
                ));
            }
            _ => {}
        }
    }
    if let Some((who, _)) = sent.iter().find(|(_, pending)| **pending) {
        return Err((None, format!("session {who:?} sends without a reap")));
    }
    Ok(())
}

fn check_matrix(m: &Matrix) -> Result<(), Located> {
    if m.values.is_empty() {
        return Err((None, "[matrix] needs values".into()));
    }
    if m.time_s == 0 {
        return Err((None, "[matrix] time_s must be at least 1".into()));
    }
    let mut names: Vec<&str> = m.config.iter().map(|c| c.name.as_str()).collect();
    names.sort_unstable();
    if names.windows(2).any(|w| w[0] == w[1]) {
        return Err((None, "[matrix] configuration names must differ".into()));
    }
    if names.iter().any(|n| n.is_empty() || n.contains(['.', '@'])) {
        return Err((
            None,
            "a configuration name must be non-empty without '.' or '@'".into(),
        ));
    }
    for c in &m.config {
        match c.client.as_deref() {
            None | Some("tpbed-load") => {}
            Some("sysbench") if matches!(c.workload(m), "queue" | "tpcc" | "mixed") => {
                return Err((
                    None,
                    format!(
                        "configuration {:?}: sysbench runs sysbench scripts, not `{}`",
                        c.name,
                        c.workload(m)
                    ),
                ))
            }
            Some("sysbench") => {}
            Some(other) => {
                return Err((
                    None,
                    format!(
                        "configuration {:?}: client {other:?} is not `tpbed-load` or `sysbench`",
                        c.name
                    ),
                ))
            }
        }
    }
    Ok(())
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// [`parse_text`] without the text.
    pub(crate) fn parse(text: &str, scale: Scale, origin: &str) -> Result<Experiment, String> {
        parse_text(text, scale, origin).map(|(e, _)| e)
    }

    const GOOD: &str = r#"
name = "t"
[scale.small]
jobs = 50
[scenario]
sessions = ["a", "b"]
[[scenario.step]]
create = "q_v1"
[[scenario.step]]
fill = "q_v1"
jobs = {jobs}
[[scenario.step]]
session = "a"
sql = "BEGIN"
[[scenario.step]]
session = "b"
send = "SELECT 1"
[[scenario.step]]
session = "b"
reap = true
expect_error = 1205
time = "wait_ms"
[[scenario.step]]
measure = "locks"
counter = "record_locks"
session = "a"
[[verdict]]
rule = "count"
value = "locks"
at_least = 1
"#;

    #[test]
    fn a_scenario_parses_with_scale_variables() {
        let e = parse(GOOD, Scale::Small, "x.toml").unwrap();
        let s = e.scenario.unwrap();
        assert_eq!(s.step.len(), 6);
        assert_eq!(
            s.step[1].get_ref().action().unwrap(),
            Action::Fill {
                table: "q_v1".into(),
                jobs: 50
            }
        );
        assert_eq!(s.step[4].get_ref().action().unwrap(), Action::Reap);
    }

    fn err(text: &str) -> String {
        parse(text, Scale::Small, "x.toml").unwrap_err()
    }

    #[test]
    fn bad_files_name_the_line() {
        // a TOML syntax error
        let e = err("name = \"t\"\n\nfoo = = 1\n");
        assert!(e.starts_with("x.toml:3:"), "{e}");
        // an unknown field in a step
        let bad = GOOD.replace("reap = true", "reap = true\nwait = 3");
        let e = err(&bad);
        let line = bad.lines().position(|l| l == "wait = 3").unwrap() + 1;
        assert!(
            e.starts_with(&format!("x.toml:{line}:")) && e.contains("wait"),
            "{e}"
        );
        // a step with two actions: the line of its table
        let bad = GOOD.replace("sql = \"BEGIN\"", "sql = \"BEGIN\"\nsleep_ms = 5");
        let e = err(&bad);
        assert!(e.contains("only one of"), "{e}");
        let line: usize = e.split(':').nth(1).unwrap().parse().unwrap();
        let begin = bad.lines().position(|l| l == "sql = \"BEGIN\"").unwrap() + 1;
        assert!((begin - 2..=begin + 1).contains(&line), "{e}");
        // an unknown session
        let e = err(&GOOD.replace("session = \"a\"\nsql", "session = \"z\"\nsql"));
        assert!(e.contains("\"z\" is not in sessions"), "{e}");
        // a send never reaped
        let e = err(&GOOD.replace(
            "reap = true\nexpect_error = 1205\ntime = \"wait_ms\"",
            "sleep_ms = 1",
        ));
        assert!(e.contains("sends without a reap"), "{e}");
        // a bad verdict rule names its line
        let bad = GOOD.replace("at_least = 1", "");
        let e = err(&bad);
        let line = bad.lines().position(|l| l == "[[verdict]]").unwrap() + 1;
        assert!(e.starts_with(&format!("x.toml:{line}:")), "{e}");
        assert!(err("name = \"t\"\n").contains("[scenario] or a [matrix]"));
    }

    #[test]
    fn a_misspelt_name_in_a_rule_is_an_error_at_its_line() {
        let bad = GOOD.replace("value = \"locks\"", "value = \"lokcs\"");
        let e = err(&bad);
        let line = bad.lines().position(|l| l == "[[verdict]]").unwrap() + 1;
        assert!(
            e.starts_with(&format!("x.toml:{line}:"))
                && e.contains("`lokcs`")
                && e.contains("`count` rule")
                && e.contains("locks, wait_ms"),
            "{e}"
        );
        // a grouped counter's group is not known before the run: accepted
        parse(
            &GOOD.replace("value = \"locks\"", "value = \"locks.X,REC_NOT_GAP\""),
            Scale::Small,
            "x.toml",
        )
        .unwrap();
    }

    /// GOOD with its scenario run once per configuration `p1` and `p2`, and its rule
    /// written once as `{config}.wait_ms`.
    fn config_each_scenario() -> String {
        GOOD.replace(
            "[[scenario.step]]\ncreate",
            "[scenario.config_each]\nnames = [\"p1\", \"p2\"]\nsettings = { policy = \"{config}\" }\n[[scenario.step]]\ncreate",
        )
        .replace("value = \"locks\"", "value = \"{config}.wait_ms\"")
    }

    #[test]
    fn a_rule_with_config_stands_for_one_rule_per_listed_name() {
        let looped = config_each_scenario();
        let e = parse(&looped, Scale::Small, "x.toml").unwrap();
        let names: Vec<Vec<String>> = e.verdict.iter().map(|r| r.get_ref().names()).collect();
        assert_eq!(names, [["p1.wait_ms"], ["p2.wait_ms"]]);
        // both where the rule is written (as the rule without `{config}` is)
        let plain = parse(
            &looped.replace("{config}.wait_ms", "p1.wait_ms"),
            Scale::Small,
            "x.toml",
        )
        .unwrap();
        for r in &e.verdict {
            assert_eq!(r.span(), plain.verdict[0].span());
        }
        let each = e.scenario.unwrap().config_each.unwrap();
        assert_eq!(value_text(&each.configs()[1].settings["policy"]), "p2");
    }

    #[test]
    fn a_scenario_run_per_configuration_records_config_dot_name_only() {
        let looped = config_each_scenario();
        let e = err(&looped.replace("{config}.wait_ms", "wait_ms"));
        assert!(e.contains("`wait_ms`") && e.contains("p1.wait_ms"), "{e}");
        let e = err(&looped.replace("{config}.wait_ms", "p3.wait_ms"));
        assert!(e.contains("`p3.wait_ms`"), "{e}");
    }

    #[test]
    fn config_in_a_rule_without_a_list_is_an_error_at_the_rules_line() {
        let e = err(&GOOD.replace("value = \"locks\"", "value = \"{config}.locks\""));
        let line = GOOD.lines().position(|l| l == "[[verdict]]").unwrap() + 1;
        assert!(
            e.starts_with(&format!("x.toml:{line}:")) && e.contains("config_each"),
            "{e}"
        );
    }

    #[test]
    fn a_scenarios_config_list_takes_no_workload_options_and_no_repeated_name() {
        let looped = config_each_scenario();
        let e = err(&looped.replace("names = [\"p1\", \"p2\"]", "names = [\"p1\", \"p1\"]"));
        assert!(e.contains("each different"), "{e}");
        let e = err(&looped.replace(
            "settings = { policy",
            "options = { x = 1 }\nsettings = { policy",
        ));
        assert!(e.contains("no workload options"), "{e}");
    }

    #[test]
    fn an_error_record_is_a_measurement_and_excludes_expect_error() {
        let rec = GOOD.replace("expect_error = 1205", "error = \"wait_error\"");
        let e = parse(
            &rec.replace("value = \"locks\"", "value = \"wait_error\""),
            Scale::Small,
            "x.toml",
        )
        .unwrap();
        assert_eq!(e.verdict[0].get_ref().names(), ["wait_error"]);
        let e = err(&GOOD.replace("expect_error = 1205", "expect_error = 1205\nerror = \"w\""));
        assert!(e.contains("not both"), "{e}");
        let e = err(&GOOD.replace("send = \"SELECT 1\"", "send = \"SELECT 1\"\nerror = \"w\""));
        assert!(e.contains("belong to a `sql` or `reap` step"), "{e}");
    }

    #[test]
    fn a_matrix_parses_and_bad_ones_are_rejected() {
        let m = r#"
name = "m"
[matrix]
workload = "queue"
options = { batch = 10, isolation = "rc" }
vary = "workers"
values = [1, 2]
time_s = 1
columns = ["jobs_per_s"]
plot = { y = ["jobs_per_s"] }
[[matrix.config]]
name = "skip"
options = { claim = "skip-locked" }
[[matrix.config]]
name = "wait"
options = { claim = "for-update" }
[[verdict]]
rule = "ratio"
a = "skip.jobs_per_s@2"
b = "wait.jobs_per_s@2"
min = 1.2
"#;
        let e = parse(m, Scale::Small, "m.toml").unwrap();
        let mx = e.matrix.unwrap();
        assert_eq!(mx.config.len(), 2);
        assert_eq!(mx.values, vec![1, 2]);
        // a metric, a configuration or a value the matrix does not have
        for (from, to) in [
            ("a = \"skip.jobs_per_s@2\"", "a = \"skip.jobs_per_sec@2\""),
            ("a = \"skip.jobs_per_s@2\"", "a = \"skipp.jobs_per_s@2\""),
            ("b = \"wait.jobs_per_s@2\"", "b = \"wait.jobs_per_s@3\""),
        ] {
            let e = err(&m.replace(from, to));
            assert!(
                e.starts_with("x.toml:17:") && e.contains("CONFIGURATION.METRIC@VALUE"),
                "{e}"
            );
        }
        // configurations from a list of names
        let each = m.replace(
            "[[matrix.config]]\nname = \"skip\"",
            "[matrix.config_each]\nnames = [\"p1\", \"p2\"]\nsettings = { policy = \"{config}\", n = 3 }\n[[matrix.config]]\nname = \"skip\"",
        );
        let e = parse(
            &each.replace("b = \"wait.", "b = \"p2."),
            Scale::Small,
            "m.toml",
        )
        .unwrap();
        let names: Vec<&str> = e
            .matrix
            .as_ref()
            .unwrap()
            .config
            .iter()
            .map(|c| c.name.as_str())
            .collect();
        assert_eq!(names, ["skip", "wait", "p1", "p2"]);
        assert_eq!(e.matrix.as_ref().unwrap().listed, ["p1", "p2"]);
        let p2 = &e.matrix.as_ref().unwrap().config[3];
        assert_eq!(value_text(&p2.settings["policy"]), "p2");
        assert_eq!(value_text(&p2.settings["n"]), "3");
        assert!(err(&each.replace("\"p2\"]", "\"skip\"]")).contains("must differ"));
        let e = err(&m.replace("time_s = 1", "time_s = \"x\""));
        assert!(e.starts_with("x.toml:8:") && e.contains("u64"), "{e}");
        assert!(err(&m.replace("name = \"wait\"", "name = \"skip\"")).contains("must differ"));
        let e = err(&m.replace("name = \"wait\"", "name = \"wait\"\nclient = \"sysbench\""));
        assert!(e.contains("not `queue`"), "{e}");
        let tpcc = m.replace("workload = \"queue\"", "workload = \"tpcc\"");
        let e = err(&tpcc.replace("name = \"wait\"", "name = \"wait\"\nclient = \"sysbench\""));
        assert!(e.contains("not `tpcc`"), "{e}");
        let e = err(&m.replace("name = \"wait\"", "name = \"wait\"\nclient = \"mysqlslap\""));
        assert!(e.contains("is not `tpbed-load` or `sysbench`"), "{e}");
        let sb = m
            .replace("workload = \"queue\"", "workload = \"oltp_read_only\"")
            .replace("jobs_per_s@2", "qps@2")
            .replace(
                "name = \"wait\"",
                "name = \"wait\"\nclient = \"sysbench\"\nworkload = \"oltp_point_select\"",
            );
        let e = parse(&sb, Scale::Small, "m.toml").unwrap();
        let mx = e.matrix.unwrap();
        assert!(mx.config[1].by_sysbench() && !mx.config[0].by_sysbench());
        assert_eq!(mx.config[1].workload(&mx), "oltp_point_select");
        assert_eq!(mx.config[0].workload(&mx), "oltp_read_only");
    }
}
