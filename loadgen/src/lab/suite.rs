//! The built-in experiments (TOML files in `loadgen/experiments/`, compiled in) and how a
//! `run` argument names them: an experiment name or its finding tag (`f1`), a suite, `all`, or
//! a file path.

use crate::lab::run::Loaded;
use crate::lab::spec::{parse_text, Scale};

/// A built-in experiment file.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Builtin {
    /// Its suite.
    pub(crate) suite: &'static str,
    /// File name under `loadgen/experiments/`.
    pub(crate) file: &'static str,
    /// Contents.
    pub(crate) text: &'static str,
}

macro_rules! builtin {
    ($suite:expr, $file:expr) => {
        Builtin {
            suite: $suite,
            file: $file,
            text: include_str!(concat!("../../experiments/", $file)),
        }
    };
}

/// Every built-in experiment, in the order `all` runs them.
pub(crate) const BUILTINS: &[Builtin] = &[
    builtin!("queue-study", "f1-locks-per-claim.toml"),
    builtin!("queue-study", "f2-lock-modes.toml"),
    builtin!("queue-study", "f4-empty-queue-rr.toml"),
    builtin!("queue-study", "f5-timeout-keeps-locks.toml"),
    builtin!("queue-study", "f6-skip-cost.toml"),
    builtin!("queue-study", "f3-filesort-locks.toml"),
    builtin!("queue-study", "f7-skip-locked-vs-waiting.toml"),
    builtin!("queue-study", "f9-batch-size.toml"),
    builtin!("queue-study", "f10-workers.toml"),
    builtin!("queue-study", "f8-purge-held-back.toml"),
    builtin!("queue-study", "f8b-purge-idle-rc.toml"),
    builtin!("queue-study", "f11-shard-prefix.toml"),
    builtin!("threadpool-study", "t1-pool-vs-per-connection.toml"),
    builtin!("threadpool-study", "t3-stall-limit.toml"),
    builtin!("threadpool-study", "t4-transaction-limit.toml"),
    builtin!("threadpool-study", "t5-os-threads.toml"),
    builtin!("threadpool-study", "t2-pool-size.toml"),
    builtin!("saturation", "h1-saturation.toml"),
    builtin!("saturation", "h2-knee.toml"),
    builtin!("comparisons", "pool-vs-per-connection.toml"),
    builtin!("comparisons", "server-vs-mariadb.toml"),
    builtin!("comparisons", "tpcc-vs-mariadb.toml"),
    builtin!("comparisons", "compare-sysbench.toml"),
    builtin!("comparisons", "ring-io.toml"),
    builtin!("lock-conformance", "lock-conformance.toml"),
    builtin!("policies", "policies-rail-starvation.toml"),
    builtin!("policies", "policies-rail-starvation-railed.toml"),
    builtin!("policies", "policies-read-only.toml"),
    builtin!("policies", "policies-t1.toml"),
    builtin!("policies", "policies-grant-order.toml"),
    builtin!("policies", "policies-bimodal.toml"),
];

/// The suite names.
pub(crate) fn suites() -> Vec<&'static str> {
    let mut s: Vec<&str> = BUILTINS.iter().map(|b| b.suite).collect();
    s.dedup();
    s
}

/// Parses a built-in at `scale`.
pub(crate) fn load(b: &Builtin, scale: Scale) -> Result<Loaded, String> {
    let origin = format!("{} (loadgen/experiments/{})", b.suite, b.file);
    let (exp, text) = parse_text(b.text, scale, &format!("loadgen/experiments/{}", b.file))?;
    Ok(Loaded { exp, text, origin })
}

/// The experiments `args` name, in order, without repeats.
pub(crate) fn resolve(args: &[String], scale: Scale) -> Result<Vec<Loaded>, String> {
    let all: Vec<Loaded> = BUILTINS
        .iter()
        .map(|b| load(b, scale))
        .collect::<Result<_, _>>()?;
    let mut out: Vec<Loaded> = Vec::new();
    for a in args {
        let picked: Vec<Loaded> = if a == "all" {
            all.clone()
        } else if suites().contains(&a.as_str()) {
            BUILTINS
                .iter()
                .zip(&all)
                .filter(|(b, _)| b.suite == a)
                .map(|(_, l)| l.clone())
                .collect()
        } else if a.ends_with(".toml") || a.contains('/') {
            let text = std::fs::read_to_string(a).map_err(|e| format!("{a}: {e}"))?;
            let (exp, text) = parse_text(&text, scale, a)?;
            vec![Loaded {
                exp,
                text,
                origin: a.clone(),
            }]
        } else {
            let found: Vec<Loaded> = all
                .iter()
                .filter(|l| l.exp.name == *a || l.exp.name.split('-').next() == Some(a.as_str()))
                .cloned()
                .collect();
            if found.is_empty() {
                return Err(format!(
                    "no experiment, suite or file {a:?} (see `tpbed-load experiment list`)"
                ));
            }
            found
        };
        for l in picked {
            if !out.iter().any(|o| o.exp.name == l.exp.name) {
                out.push(l);
            }
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_builtin_parses_at_both_scales_and_names_resolve() {
        for b in BUILTINS {
            for s in [Scale::Small, Scale::Paper] {
                let l = load(b, s).unwrap_or_else(|e| panic!("{e}"));
                assert!(
                    !l.exp.study.is_empty() && !l.exp.figure.is_empty(),
                    "{}",
                    b.file
                );
                assert!(l.exp.seconds.contains_key("small"), "{}", b.file);
            }
        }
        let all = resolve(&["all".into()], Scale::Small).unwrap();
        assert_eq!(all.len(), BUILTINS.len());
        let qs = resolve(&["queue-study".into(), "f1".into()], Scale::Small).unwrap();
        assert!(!qs.is_empty() && qs[0].exp.name.starts_with("f1-"));
        assert!(resolve(&["nope".into()], Scale::Small).is_err());
    }

    #[test]
    fn every_other_file_in_the_folder_parses_at_both_scales() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("experiments");
        let mut others = 0;
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            let name = path.file_name().unwrap().to_string_lossy().into_owned();
            if !name.ends_with(".toml") || BUILTINS.iter().any(|b| b.file == name) {
                continue;
            }
            others += 1;
            let text = std::fs::read_to_string(&path).unwrap();
            for s in [Scale::Small, Scale::Paper] {
                parse_text(&text, s, &name).unwrap_or_else(|e| panic!("{name}: {e}"));
            }
        }
        assert!(others > 0, "no file beside the built-ins");
    }
}
