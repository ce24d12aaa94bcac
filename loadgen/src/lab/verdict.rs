//! Measurements and the rules that turn them into a verdict. A measurement is every pass's
//! value, or the reason a target cannot give it; a rule is data (ratio with bounds, linear fit
//! with r², monotonic trend, count), and a difference is judged against the pass-to-pass spread
//! measured in the same run.

use std::collections::BTreeMap;
use std::fmt;

use serde::{Deserialize, Serialize};

/// One named measurement.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum Measured {
    /// The value of each pass.
    Values(Vec<f64>),
    /// The target cannot give it (why).
    Missing(String),
}

/// Every measurement of one experiment on one target, by name (`NAME` or `SERIES@X`).
pub(crate) type Measurements = BTreeMap<String, Measured>;

/// One matrix cell's metrics by name: a number, or why the cell could not give it.
pub(crate) type CellMetrics = Vec<(String, Result<f64, String>)>;

/// Adds a pass's value to a measurement (a missing one stays missing).
pub(crate) fn record(m: &mut Measurements, name: &str, v: f64) {
    match m
        .entry(name.to_string())
        .or_insert_with(|| Measured::Values(Vec::new()))
    {
        Measured::Values(vs) => vs.push(v),
        Measured::Missing(_) => {}
    }
}

/// Marks a measurement missing.
pub(crate) fn missing(m: &mut Measurements, name: &str, why: &str) {
    m.insert(name.to_string(), Measured::Missing(why.to_string()));
}

/// What a rule concluded.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "verdict", content = "why", rename_all = "snake_case")]
pub(crate) enum Verdict {
    /// The finding holds here.
    Reproduces,
    /// It does not (why).
    Differs(String),
    /// The difference is not larger than the pass-to-pass spread (why).
    WithinNoise(String),
    /// The target cannot give what the rule needs (why).
    CannotRun(String),
}

impl Verdict {
    /// The word the report uses.
    pub(crate) fn word(&self) -> &'static str {
        match self {
            Verdict::Reproduces => "reproduces",
            Verdict::Differs(_) => "differs",
            Verdict::WithinNoise(_) => "within noise",
            Verdict::CannotRun(_) => "cannot run here",
        }
    }

    fn rank(&self) -> u8 {
        match self {
            Verdict::Reproduces => 0,
            Verdict::WithinNoise(_) => 1,
            Verdict::Differs(_) => 2,
            Verdict::CannotRun(_) => 3,
        }
    }

    /// The verdict of an experiment: the worst of its rules' (cannot run > differs > within
    /// noise > reproduces); no rule at all cannot reproduce anything.
    pub(crate) fn combine(all: &[Verdict]) -> Verdict {
        all.iter()
            .max_by_key(|v| v.rank())
            .cloned()
            .unwrap_or_else(|| Verdict::CannotRun("no rule was evaluated".into()))
    }
}

impl fmt::Display for Verdict {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Verdict::Reproduces => write!(f, "reproduces"),
            Verdict::Differs(w) | Verdict::WithinNoise(w) | Verdict::CannotRun(w) => {
                write!(f, "{} ({w})", self.word())
            }
        }
    }
}

/// Direction of a trend.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum Direction {
    /// Rises with x.
    Up,
    /// Falls with x.
    Down,
}

/// A verdict rule, as written in `[[verdict]]`.
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize)]
#[serde(tag = "rule", rename_all = "snake_case", deny_unknown_fields)]
pub(crate) enum Rule {
    /// median(a) / median(b) within [min, max] (either may be open).
    Ratio {
        /// Numerator measurement.
        a: String,
        /// Denominator measurement.
        b: String,
        /// Lower bound.
        min: Option<f64>,
        /// Upper bound.
        max: Option<f64>,
    },
    /// Least-squares line through the series `SERIES@X`: slope x factor within bounds, r² at least.
    Fit {
        /// Series name.
        series: String,
        /// Multiplier applied to the slope before it is compared and shown (unit change).
        #[serde(default = "one")]
        factor: f64,
        /// Unit of the scaled slope.
        #[serde(default)]
        unit: String,
        /// Lower bound of the scaled slope.
        min_slope: Option<f64>,
        /// Upper bound of the scaled slope.
        max_slope: Option<f64>,
        /// Least r².
        min_r2: f64,
    },
    /// The series moves one way: every step at most `tolerance` (relative) against it, and
    /// last/first (up) or first/last (down) at least `min_change`.
    Trend {
        /// Series name.
        series: String,
        /// Which way.
        direction: Direction,
        /// Least overall change factor.
        #[serde(default = "one")]
        min_change: f64,
        /// Largest step against the direction, relative.
        #[serde(default = "tenth")]
        tolerance: f64,
    },
    /// median(value) compared with a number.
    Count {
        /// Measurement.
        value: String,
        /// Must equal.
        equals: Option<f64>,
        /// Must be at most.
        at_most: Option<f64>,
        /// Must be at least.
        at_least: Option<f64>,
    },
}

fn one() -> f64 {
    1.0
}

fn tenth() -> f64 {
    0.1
}

/// The median (NaN for none).
pub(crate) fn median(v: &[f64]) -> f64 {
    let mut s: Vec<f64> = v.iter().copied().filter(|x| x.is_finite()).collect();
    if s.is_empty() {
        return f64::NAN;
    }
    s.sort_by(f64::total_cmp);
    let n = s.len();
    if n % 2 == 1 {
        s[n / 2]
    } else {
        (s[n / 2 - 1] + s[n / 2]) / 2.0
    }
}

/// Pass-to-pass spread: (max - min) / median (0 for one pass or a zero median).
pub(crate) fn spread(v: &[f64]) -> f64 {
    let m = median(v);
    if v.len() < 2 || m == 0.0 || !m.is_finite() {
        return 0.0;
    }
    let lo = v.iter().copied().fold(f64::INFINITY, f64::min);
    let hi = v.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    ((hi - lo) / m).abs()
}

/// Whether a factor `r` between two sides (a ratio, or a trend's overall change) is no larger
/// than the pass-to-pass spread `noise`. Judged the same for `r` and `1 / r`, so that swapping
/// the sides of a rule cannot change whether it is noise: a side at 1/40 of the other is as far
/// from it as one at 40 times.
pub(crate) fn within_spread(r: f64, noise: f64) -> bool {
    noise > 0.0 && r > 0.0 && r.max(1.0 / r) - 1.0 <= noise
}

/// Least-squares line through points: (slope, intercept, r²).
pub(crate) fn fit(points: &[(f64, f64)]) -> (f64, f64, f64) {
    let n = points.len() as f64;
    let mx = points.iter().map(|p| p.0).sum::<f64>() / n;
    let my = points.iter().map(|p| p.1).sum::<f64>() / n;
    let sxx: f64 = points.iter().map(|p| (p.0 - mx).powi(2)).sum();
    let sxy: f64 = points.iter().map(|p| (p.0 - mx) * (p.1 - my)).sum();
    let syy: f64 = points.iter().map(|p| (p.1 - my).powi(2)).sum();
    let slope = if sxx == 0.0 { 0.0 } else { sxy / sxx };
    let r2 = if sxx == 0.0 || syy == 0.0 {
        0.0
    } else {
        (sxy * sxy) / (sxx * syy)
    };
    (slope, my - slope * mx, r2)
}

/// What a rule found: the verdict and the measured figure in words.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct Outcome {
    /// The rule, as text.
    pub(crate) rule: String,
    /// The measured figure.
    pub(crate) measured: String,
    /// The verdict.
    pub(crate) verdict: Verdict,
}

fn values<'a>(m: &'a Measurements, name: &str) -> Result<&'a [f64], Verdict> {
    match m.get(name) {
        Some(Measured::Values(v)) if !v.is_empty() => Ok(v),
        Some(Measured::Values(_)) | None => {
            Err(Verdict::CannotRun(format!("{name} was not measured")))
        }
        Some(Measured::Missing(why)) => Err(Verdict::CannotRun(format!("{name}: {why}"))),
    }
}

/// The points of `SERIES@X` (median per x), in x order, with the largest pass spread.
pub(crate) fn series(m: &Measurements, name: &str) -> Result<(Vec<(f64, f64)>, f64), Verdict> {
    let prefix = format!("{name}@");
    let mut pts = Vec::new();
    let mut noise: f64 = 0.0;
    for k in m.keys() {
        let Some(x) = k.strip_prefix(&prefix).and_then(|x| x.parse::<f64>().ok()) else {
            continue;
        };
        let vs = values(m, k)?;
        noise = noise.max(spread(vs));
        pts.push((x, median(vs)));
    }
    pts.sort_by(|a, b| a.0.total_cmp(&b.0));
    if pts.len() < 2 {
        return Err(Verdict::CannotRun(format!(
            "series {name} has {} point(s)",
            pts.len()
        )));
    }
    Ok((pts, noise))
}

fn fmt_num(v: f64) -> String {
    if v == 0.0 || (v.abs() >= 100.0 && v.fract() == 0.0) {
        format!("{v:.0}")
    } else if v.abs() >= 100.0 {
        format!("{v:.1}")
    } else if v.abs() >= 1.0 {
        format!("{v:.2}")
    } else {
        format!("{v:.4}")
    }
}

fn bounds_text(lo: Option<f64>, hi: Option<f64>) -> String {
    match (lo, hi) {
        (Some(l), Some(h)) => format!("in [{}, {}]", fmt_num(l), fmt_num(h)),
        (Some(l), None) => format!(">= {}", fmt_num(l)),
        (None, Some(h)) => format!("<= {}", fmt_num(h)),
        (None, None) => "any".into(),
    }
}

impl Rule {
    /// Checks the rule's own fields (bounds present, not inverted).
    pub(crate) fn check(&self) -> Result<(), String> {
        let ordered = |lo: Option<f64>, hi: Option<f64>| match (lo, hi) {
            (Some(l), Some(h)) if l > h => Err(format!("bounds inverted: {l} > {h}")),
            (None, None) => Err("give min and/or max".to_string()),
            _ => Ok(()),
        };
        match self {
            Rule::Ratio { min, max, .. } => ordered(*min, *max),
            Rule::Fit {
                min_slope,
                max_slope,
                min_r2,
                ..
            } => {
                if !(0.0..=1.0).contains(min_r2) {
                    return Err("min_r2 must be in [0, 1]".into());
                }
                match (min_slope, max_slope) {
                    (Some(l), Some(h)) if l > h => Err(format!("bounds inverted: {l} > {h}")),
                    _ => Ok(()),
                }
            }
            Rule::Trend {
                min_change,
                tolerance,
                ..
            } => {
                if *min_change < 1.0 || *tolerance < 0.0 {
                    Err("min_change must be >= 1 and tolerance >= 0".into())
                } else {
                    Ok(())
                }
            }
            Rule::Count {
                equals,
                at_most,
                at_least,
                ..
            } => {
                if equals.is_none() && at_most.is_none() && at_least.is_none() {
                    return Err("a count rule needs equals, at_most or at_least".into());
                }
                ordered(at_least.or(*equals), at_most.or(*equals))
            }
        }
    }

    /// The measurement (or series) names it reads.
    pub(crate) fn names(&self) -> Vec<String> {
        match self {
            Rule::Ratio { a, b, .. } => vec![a.clone(), b.clone()],
            Rule::Fit { series, .. } | Rule::Trend { series, .. } => vec![series.clone()],
            Rule::Count { value, .. } => vec![value.clone()],
        }
    }

    /// The same rule with every name it reads passed through `f` (a rule written once with
    /// `{config}` becomes one rule per configuration).
    pub(crate) fn map_names(&self, f: impl Fn(&str) -> String) -> Rule {
        let mut r = self.clone();
        match &mut r {
            Rule::Ratio { a, b, .. } => {
                *a = f(a);
                *b = f(b);
            }
            Rule::Fit { series, .. } | Rule::Trend { series, .. } => *series = f(series),
            Rule::Count { value, .. } => *value = f(value),
        }
        r
    }

    /// The configuration the rule judges: the one its first name (`a`, `value`, `series`)
    /// belongs to (`fifo` of `fifo.qps@8`), or `None` for a name without one.
    pub(crate) fn subject(&self) -> Option<String> {
        let first = self.names().into_iter().next()?;
        first.split_once('.').map(|(c, _)| c.to_string())
    }

    /// The rule's name as written (`rule = "ratio"`).
    pub(crate) fn kind(&self) -> &'static str {
        match self {
            Rule::Ratio { .. } => "ratio",
            Rule::Fit { .. } => "fit",
            Rule::Trend { .. } => "trend",
            Rule::Count { .. } => "count",
        }
    }

    /// The rule in words.
    pub(crate) fn describe(&self) -> String {
        match self {
            Rule::Ratio { a, b, min, max } => format!("{a} / {b} {}", bounds_text(*min, *max)),
            Rule::Fit {
                series,
                unit,
                min_slope,
                max_slope,
                min_r2,
                ..
            } => format!(
                "linear fit of {series}: slope {} {unit}, r² >= {min_r2}",
                bounds_text(*min_slope, *max_slope)
            ),
            Rule::Trend {
                series,
                direction,
                min_change,
                tolerance,
            } => format!(
                "{series} {} monotonically (steps against it <= {:.0}%), overall x{} or more",
                if *direction == Direction::Up {
                    "rises"
                } else {
                    "falls"
                },
                tolerance * 100.0,
                fmt_num(*min_change)
            ),
            Rule::Count {
                value,
                equals,
                at_most,
                at_least,
            } => match equals {
                Some(e) => format!("{value} = {}", fmt_num(*e)),
                None => format!("{value} {}", bounds_text(*at_least, *at_most)),
            },
        }
    }

    /// Applies the rule.
    pub(crate) fn judge(&self, m: &Measurements) -> Outcome {
        let (measured, verdict) = match self.eval(m) {
            Ok(x) => x,
            Err(v) => ("-".to_string(), v),
        };
        Outcome {
            rule: self.describe(),
            measured,
            verdict,
        }
    }

    fn eval(&self, m: &Measurements) -> Result<(String, Verdict), Verdict> {
        match self {
            Rule::Ratio { a, b, min, max } => ratio(m, a, b, min, max),
            Rule::Fit {
                series: name,
                factor,
                unit,
                min_slope,
                max_slope,
                min_r2,
            } => fit_rule(m, name, factor, unit, min_slope, max_slope, min_r2),
            Rule::Trend {
                series: name,
                direction,
                min_change,
                tolerance,
            } => trend(m, name, direction, min_change, tolerance),
            Rule::Count {
                value,
                equals,
                at_most,
                at_least,
            } => count(m, self, value, equals, at_most, at_least),
        }
    }
}

/// Judges a ratio rule: the ratio of two measured values' medians against its bounds and
/// the pass spread.
fn ratio(
    m: &Measurements,
    a: &str,
    b: &str,
    min: &Option<f64>,
    max: &Option<f64>,
) -> Result<(String, Verdict), Verdict> {
    let (va, vb) = (values(m, a)?, values(m, b)?);
    let (ma, mb) = (median(va), median(vb));
    let r = if mb == 0.0 {
        if ma == 0.0 {
            return Ok((
                "0 / 0".into(),
                Verdict::Differs(format!("{a} and {b} are both 0")),
            ));
        }
        f64::INFINITY
    } else {
        ma / mb
    };
    let noise = spread(va).max(spread(vb));
    let lo = min.unwrap_or(f64::NEG_INFINITY);
    let hi = max.unwrap_or(f64::INFINITY);
    let inside = lo <= r && r <= hi;
    let claims_difference = !(lo <= 1.0 && 1.0 <= hi);
    let noisy = within_spread(r, noise);
    let text = format!(
        "{} / {} = {} (pass spread {:.1}%)",
        fmt_num(ma),
        fmt_num(mb),
        fmt_num(r),
        noise * 100.0
    );
    let why = format!(
        "ratio {} against {} with pass spread {:.1}%",
        fmt_num(r),
        bounds_text(*min, *max),
        noise * 100.0
    );
    let v = if claims_difference {
        if noisy {
            Verdict::WithinNoise(why)
        } else if inside {
            Verdict::Reproduces
        } else {
            Verdict::Differs(why)
        }
    } else if inside {
        Verdict::Reproduces
    } else if noisy {
        Verdict::WithinNoise(why)
    } else {
        Verdict::Differs(why)
    };
    Ok((text, v))
}

/// Judges a fit rule: a series' least-squares slope and r² against their bounds.
fn fit_rule(
    m: &Measurements,
    name: &str,
    factor: &f64,
    unit: &str,
    min_slope: &Option<f64>,
    max_slope: &Option<f64>,
    min_r2: &f64,
) -> Result<(String, Verdict), Verdict> {
    let (pts, _) = series(m, name)?;
    if pts.len() < 3 {
        return Err(Verdict::CannotRun(format!(
            "a fit needs 3 points, {name} has {}",
            pts.len()
        )));
    }
    let (slope, icpt, r2) = fit(&pts);
    let s = slope * factor;
    let text = format!(
        "slope {} {unit} (intercept {}), r² {:.3}, {} points",
        fmt_num(s),
        fmt_num(icpt),
        r2,
        pts.len()
    );
    let lo = min_slope.unwrap_or(f64::NEG_INFINITY);
    let hi = max_slope.unwrap_or(f64::INFINITY);
    let v = if r2 < *min_r2 {
        Verdict::Differs(format!("not linear: r² {r2:.3} < {min_r2}"))
    } else if s < lo || s > hi {
        Verdict::Differs(format!(
            "slope {} {unit} not {}",
            fmt_num(s),
            bounds_text(*min_slope, *max_slope)
        ))
    } else {
        Verdict::Reproduces
    };
    Ok((text, v))
}

/// Judges a trend rule: a series' overall change and its steps against the expected direction.
fn trend(
    m: &Measurements,
    name: &str,
    direction: &Direction,
    min_change: &f64,
    tolerance: &f64,
) -> Result<(String, Verdict), Verdict> {
    let (pts, noise) = series(m, name)?;
    let ys: Vec<f64> = pts.iter().map(|p| p.1).collect();
    let (first, last) = (ys[0], ys[ys.len() - 1]);
    let up = *direction == Direction::Up;
    let change = if up { last / first } else { first / last };
    let against = ys
        .windows(2)
        .map(|w| {
            if up {
                (w[0] - w[1]) / w[0].abs().max(1e-12)
            } else {
                (w[1] - w[0]) / w[0].abs().max(1e-12)
            }
        })
        .fold(0.0_f64, f64::max);
    let text = format!(
        "{} (x{} overall, worst step against {:.1}%, pass spread {:.1}%)",
        pts.iter()
            .map(|(x, y)| format!("{}: {}", fmt_num(*x), fmt_num(*y)))
            .collect::<Vec<_>>()
            .join(", "),
        fmt_num(change),
        against * 100.0,
        noise * 100.0
    );
    let v = if within_spread(change, noise) {
        Verdict::WithinNoise(format!(
            "overall change x{} within pass spread {:.1}%",
            fmt_num(change),
            noise * 100.0
        ))
    } else if change < *min_change {
        Verdict::Differs(format!(
            "overall change x{} < x{}",
            fmt_num(change),
            fmt_num(*min_change)
        ))
    } else if against > *tolerance {
        Verdict::Differs(format!(
            "not monotonic: a step goes {:.1}% the other way",
            against * 100.0
        ))
    } else {
        Verdict::Reproduces
    };
    Ok((text, v))
}

/// Judges a count rule: a measured value's median against exact or bounding counts.
fn count(
    m: &Measurements,
    rule: &Rule,
    value: &str,
    equals: &Option<f64>,
    at_most: &Option<f64>,
    at_least: &Option<f64>,
) -> Result<(String, Verdict), Verdict> {
    let vs = values(m, value)?;
    let v = median(vs);
    let ok = equals.is_none_or(|e| (v - e).abs() < 1e-9)
        && at_most.is_none_or(|h| v <= h)
        && at_least.is_none_or(|l| v >= l);
    let text = if vs.len() > 1 {
        format!(
            "{value} = {} (passes: {})",
            fmt_num(v),
            vs.iter()
                .map(|x| fmt_num(*x))
                .collect::<Vec<_>>()
                .join(" / ")
        )
    } else {
        format!("{value} = {}", fmt_num(v))
    };
    let verdict = if ok {
        Verdict::Reproduces
    } else {
        Verdict::Differs(format!(
            "{value} = {} not {}",
            fmt_num(v),
            rule.describe().trim_start_matches(value).trim()
        ))
    };
    Ok((text, verdict))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(pairs: &[(&str, &[f64])]) -> Measurements {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), Measured::Values(v.to_vec())))
            .collect()
    }

    fn ratio(min: Option<f64>, max: Option<f64>) -> Rule {
        Rule::Ratio {
            a: "a".into(),
            b: "b".into(),
            min,
            max,
        }
    }

    #[test]
    fn ratio_on_both_sides_of_its_bound_and_against_noise() {
        let r = ratio(Some(1.5), None);
        // 2.0 with no spread: reproduces
        let m = ms(&[("a", &[200.0, 200.0]), ("b", &[100.0, 100.0])]);
        assert_eq!(r.judge(&m).verdict, Verdict::Reproduces);
        // 1.2 with little spread: differs
        let m = ms(&[("a", &[120.0, 121.0]), ("b", &[100.0, 100.0])]);
        assert!(matches!(r.judge(&m).verdict, Verdict::Differs(_)));
        // 1.6 but passes spread by 80%: within noise
        let m = ms(&[("a", &[100.0, 160.0, 220.0]), ("b", &[100.0, 100.0, 100.0])]);
        assert!(matches!(r.judge(&m).verdict, Verdict::WithinNoise(_)));
        // a "no difference" finding: 1.01 inside [0.98, 1.02] reproduces, 1.10 differs,
        // 1.10 with 15% spread is within noise
        let same = ratio(Some(0.98), Some(1.02));
        let m = ms(&[("a", &[101.0, 101.0]), ("b", &[100.0, 100.0])]);
        assert_eq!(same.judge(&m).verdict, Verdict::Reproduces);
        let m = ms(&[("a", &[110.0, 110.0]), ("b", &[100.0, 100.0])]);
        assert!(matches!(same.judge(&m).verdict, Verdict::Differs(_)));
        let m = ms(&[("a", &[100.0, 110.0, 115.0]), ("b", &[100.0, 100.0])]);
        assert!(matches!(same.judge(&m).verdict, Verdict::WithinNoise(_)));
        // upper bound
        let le = ratio(None, Some(0.6));
        let m = ms(&[("a", &[50.0]), ("b", &[100.0])]);
        assert_eq!(le.judge(&m).verdict, Verdict::Reproduces);
        let m = ms(&[("a", &[70.0]), ("b", &[100.0])]);
        assert!(matches!(le.judge(&m).verdict, Verdict::Differs(_)));
    }

    #[test]
    fn swapping_a_ratio_s_sides_does_not_change_whether_it_is_noise() {
        // a is 1/40 of b in every pass, and a's own passes spread by 300% of its median
        let small = [0.5, 1.0, 3.5];
        let large = [39.0, 40.0, 41.0];
        let below = ratio(None, Some(0.5));
        let m = ms(&[("a", &small), ("b", &large)]);
        assert_eq!(below.judge(&m).verdict, Verdict::Reproduces);
        let above = ratio(Some(2.0), None);
        let m = ms(&[("a", &large), ("b", &small)]);
        assert_eq!(above.judge(&m).verdict, Verdict::Reproduces);
        // the same spread around a side only 1/2 of the other is noise, either way round
        let half = [19.5, 20.0, 20.5];
        let noisy = [5.0, 10.0, 35.0];
        let m = ms(&[("a", &noisy), ("b", &half)]);
        assert!(matches!(below.judge(&m).verdict, Verdict::WithinNoise(_)));
        let m = ms(&[("a", &half), ("b", &noisy)]);
        assert!(matches!(above.judge(&m).verdict, Verdict::WithinNoise(_)));
        assert!(within_spread(0.5, 1.0) && within_spread(2.0, 1.0));
        assert!(!within_spread(0.4, 1.0) && !within_spread(2.5, 1.0));
        assert!(!within_spread(0.0, 1.0) && !within_spread(0.5, 0.0));
    }

    #[test]
    fn a_missing_counter_cannot_run_and_is_not_a_number() {
        let mut m = ms(&[("b", &[10.0])]);
        missing(&mut m, "a", "MariaDB has no performance_schema.data_locks");
        let o = ratio(Some(1.5), None).judge(&m);
        assert_eq!(o.measured, "-");
        match o.verdict {
            Verdict::CannotRun(w) => assert!(w.contains("data_locks"), "{w}"),
            v => panic!("{v:?}"),
        }
        record(&mut m, "a", 3.0);
        assert!(matches!(m["a"], Measured::Missing(_)));
        let o = ratio(Some(1.5), None).judge(&ms(&[("b", &[1.0])]));
        assert!(matches!(o.verdict, Verdict::CannotRun(_)));
    }

    fn fit_rule() -> Rule {
        Rule::Fit {
            series: "t".into(),
            factor: 1000.0,
            unit: "µs/row".into(),
            min_slope: Some(0.0),
            max_slope: None,
            min_r2: 0.9,
        }
    }

    #[test]
    fn fit_slope_and_r2() {
        // t = 0.5 + 0.00013 * k (ms): 0.13 µs per row
        let line: Vec<(String, Vec<f64>)> = [0.0, 1000.0, 2000.0, 4000.0]
            .iter()
            .map(|k| (format!("t@{k}"), vec![0.5 + 0.00013 * k]))
            .collect();
        let m: Measurements = line
            .iter()
            .map(|(k, v)| (k.clone(), Measured::Values(v.clone())))
            .collect();
        let o = fit_rule().judge(&m);
        assert_eq!(o.verdict, Verdict::Reproduces, "{}", o.measured);
        assert!(
            o.measured.starts_with("slope 0.1300 µs/row"),
            "{}",
            o.measured
        );
        // flat: slope 0 is not above... the bound is >= 0, so flat data fails on r²
        let m = ms(&[
            ("t@0", &[1.0]),
            ("t@1000", &[1.2]),
            ("t@2000", &[0.9]),
            ("t@4000", &[1.1]),
        ]);
        assert!(matches!(fit_rule().judge(&m).verdict, Verdict::Differs(_)));
        // falling line: r² high, slope below the bound
        let m = ms(&[("t@0", &[3.0]), ("t@1000", &[2.0]), ("t@2000", &[1.0])]);
        match fit_rule().judge(&m).verdict {
            Verdict::Differs(w) => assert!(w.contains("slope"), "{w}"),
            v => panic!("{v:?}"),
        }
        let m = ms(&[("t@0", &[3.0]), ("t@1000", &[2.0])]);
        assert!(matches!(
            fit_rule().judge(&m).verdict,
            Verdict::CannotRun(_)
        ));
    }

    #[test]
    fn trend_up_down_and_noise() {
        let up = Rule::Trend {
            series: "p".into(),
            direction: Direction::Up,
            min_change: 1.5,
            tolerance: 0.1,
        };
        let m = ms(&[("p@1", &[1.0]), ("p@2", &[1.4]), ("p@3", &[2.0])]);
        assert_eq!(up.judge(&m).verdict, Verdict::Reproduces);
        // rises overall but dips 30% in the middle
        let m = ms(&[
            ("p@1", &[1.0]),
            ("p@2", &[2.0]),
            ("p@3", &[1.4]),
            ("p@4", &[2.0]),
        ]);
        assert!(matches!(up.judge(&m).verdict, Verdict::Differs(_)));
        // rises too little
        let m = ms(&[("p@1", &[1.0]), ("p@2", &[1.1]), ("p@3", &[1.2])]);
        assert!(matches!(up.judge(&m).verdict, Verdict::Differs(_)));
        // a 20% rise with passes 50% apart
        let m = ms(&[("p@1", &[1.0, 1.5]), ("p@3", &[1.5, 1.5])]);
        assert!(matches!(up.judge(&m).verdict, Verdict::WithinNoise(_)));
        let down = Rule::Trend {
            series: "p".into(),
            direction: Direction::Down,
            min_change: 2.0,
            tolerance: 0.0,
        };
        let m = ms(&[("p@1", &[4.0]), ("p@2", &[2.0]), ("p@3", &[1.0])]);
        assert_eq!(down.judge(&m).verdict, Verdict::Reproduces);
        let m = ms(&[("p@1", &[1.0]), ("p@2", &[2.0]), ("p@3", &[4.0])]);
        assert!(matches!(down.judge(&m).verdict, Verdict::Differs(_)));
    }

    #[test]
    fn count_equals_at_most_at_least() {
        let eq = Rule::Count {
            value: "n".into(),
            equals: Some(10.0),
            at_most: None,
            at_least: None,
        };
        assert_eq!(
            eq.judge(&ms(&[("n", &[10.0])])).verdict,
            Verdict::Reproduces
        );
        assert!(matches!(
            eq.judge(&ms(&[("n", &[11.0])])).verdict,
            Verdict::Differs(_)
        ));
        let le = Rule::Count {
            value: "n".into(),
            equals: None,
            at_most: Some(0.0),
            at_least: None,
        };
        assert_eq!(le.judge(&ms(&[("n", &[0.0])])).verdict, Verdict::Reproduces);
        assert!(matches!(
            le.judge(&ms(&[("n", &[1.0])])).verdict,
            Verdict::Differs(_)
        ));
        let ge = Rule::Count {
            value: "n".into(),
            equals: None,
            at_most: None,
            at_least: Some(1900.0),
        };
        assert_eq!(
            ge.judge(&ms(&[("n", &[2001.0])])).verdict,
            Verdict::Reproduces
        );
        assert!(matches!(
            ge.judge(&ms(&[("n", &[1.5])])).verdict,
            Verdict::Differs(_)
        ));
        assert!(ge.check().is_ok());
        let none = Rule::Count {
            value: "n".into(),
            equals: None,
            at_most: None,
            at_least: None,
        };
        assert!(none.check().is_err());
    }

    #[test]
    fn the_worst_rule_decides() {
        use Verdict::*;
        assert_eq!(Verdict::combine(&[Reproduces, Reproduces]), Reproduces);
        assert_eq!(
            Verdict::combine(&[Reproduces, WithinNoise("x".into())]).word(),
            "within noise"
        );
        assert_eq!(
            Verdict::combine(&[Differs("d".into()), WithinNoise("x".into())]).word(),
            "differs"
        );
        assert_eq!(
            Verdict::combine(&[Differs("d".into()), CannotRun("c".into())]).word(),
            "cannot run here"
        );
        assert_eq!(Verdict::combine(&[]).word(), "cannot run here");
    }
}
