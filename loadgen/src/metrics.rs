//! A workload's typed result: what every run measures (TPS, QPS, event latency, errors by code),
//! what a workload with transaction types measures per type (latency, rollbacks, lock waits,
//! deadlocks), named values a workload adds, and descriptive notes. Reports render it; the lab
//! reads its numbers by key and never parses a report's text back.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use hdrhistogram::Histogram;

use crate::json::J;
use crate::stats::{new_hist, record, LatMs};

/// The per-transaction-type metrics, as `TYPE_FIELD` keys (`new_order_p99_ms`), with what each
/// means.
pub(crate) const TXN_FIELDS: &[(&str, &str)] = &[
    ("tps", "transactions of the type completed per second"),
    ("avg_ms", "mean latency of the type (retries included)"),
    ("p50_ms", "median latency of the type"),
    ("p95_ms", "95th percentile latency of the type"),
    ("p99_ms", "99th percentile latency of the type"),
    ("max_ms", "maximum latency of the type"),
    (
        "rollbacks",
        "transactions of the type rolled back (by design or after an error)",
    ),
    (
        "lock_waits",
        "statements of the type that ended on a lock wait timeout (1205)",
    ),
    (
        "deadlocks",
        "statements of the type chosen as a deadlock victim (1213)",
    ),
];

/// What one transaction type did over the measured window.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct TxnMetrics {
    /// The type's name, a metric key prefix (`new_order`).
    pub(crate) name: &'static str,
    /// Transactions of the type that completed (a retried one counts once).
    pub(crate) count: u64,
    /// Latency from the first statement to the last reply, retries included.
    pub(crate) latency: LatMs,
    /// Rolled back, by design (TPC-C's unused item) or after an error.
    pub(crate) rollbacks: u64,
    /// Statements that ended on ER_LOCK_WAIT_TIMEOUT (1205).
    pub(crate) lock_waits: u64,
    /// Statements that ended on ER_LOCK_DEADLOCK (1213).
    pub(crate) deadlocks: u64,
}

impl TxnMetrics {
    /// The type's metrics as `(TYPE_FIELD, value)`, in [`TXN_FIELDS`] order.
    pub(crate) fn named(&self, secs: f64) -> Vec<(String, f64)> {
        let l = &self.latency;
        let values = [
            self.count as f64 / secs.max(1e-9),
            l.avg,
            l.p50,
            l.p95,
            l.p99,
            l.max,
            self.rollbacks as f64,
            self.lock_waits as f64,
            self.deadlocks as f64,
        ];
        TXN_FIELDS
            .iter()
            .zip(values)
            .map(|((field, _), v)| (format!("{}_{field}", self.name), v))
            .collect()
    }
}

/// A number a workload adds (jobs/s, empty polls), or why the run could not give it.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Value {
    /// Metric key (`jobs_per_s`).
    pub(crate) key: &'static str,
    /// How the report labels it.
    pub(crate) label: &'static str,
    /// The number, or why it is missing.
    pub(crate) value: Result<f64, String>,
    /// Decimals shown in the report.
    pub(crate) decimals: usize,
}

/// A workload run's typed result.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct WorkloadMetrics {
    /// Events (transactions) per second.
    pub(crate) tps: f64,
    /// Statements per second.
    pub(crate) qps: f64,
    /// Event latency.
    pub(crate) latency: LatMs,
    /// Every error reply, by code.
    pub(crate) errors: BTreeMap<u16, u64>,
    /// Per transaction type (empty for a workload with one kind of event).
    pub(crate) txns: Vec<TxnMetrics>,
    /// Named values the workload adds.
    pub(crate) values: Vec<Value>,
    /// Descriptive lines (settings, a check's outcome), shown but never read as numbers.
    pub(crate) notes: Vec<(String, String)>,
}

impl WorkloadMetrics {
    /// The workload's own metrics by key: each transaction type's fields, then the values.
    pub(crate) fn own(&self, secs: f64) -> Vec<(String, Result<f64, String>)> {
        let mut out: Vec<(String, Result<f64, String>)> = self
            .txns
            .iter()
            .flat_map(|t| t.named(secs))
            .map(|(k, v)| (k, Ok(v)))
            .collect();
        out.extend(
            self.values
                .iter()
                .map(|v| (v.key.to_string(), v.value.clone())),
        );
        out
    }
}

impl WorkloadMetrics {
    /// The workload's own part of the text report: notes, values, then a table of the
    /// transaction types (nothing for a workload that adds nothing).
    pub(crate) fn text(&self, o: &mut String, secs: f64) {
        for (k, v) in &self.notes {
            let _ = writeln!(o, "    {k}: {v}");
        }
        for v in &self.values {
            match &v.value {
                Ok(x) => {
                    let _ = writeln!(o, "    {}: {x:.*}", v.label, v.decimals);
                }
                Err(why) => {
                    let _ = writeln!(o, "    {}: n/a ({why})", v.label);
                }
            }
        }
        if self.txns.is_empty() {
            return;
        }
        let _ = writeln!(
            o,
            "    {:<14} {:>9} {:>9} {:>9} {:>9} {:>9} {:>9} {:>9} {:>9} {:>10} {:>9}",
            "transaction",
            "count",
            "tps",
            "avg ms",
            "p50 ms",
            "p95 ms",
            "p99 ms",
            "max ms",
            "rollbacks",
            "1205 waits",
            "1213 dead"
        );
        for t in &self.txns {
            let l = &t.latency;
            let _ = writeln!(
                o,
                "    {:<14} {:>9} {:>9.2} {:>9.3} {:>9.3} {:>9.3} {:>9.3} {:>9.3} {:>9} {:>10} {:>9}",
                t.name,
                t.count,
                t.count as f64 / secs.max(1e-9),
                l.avg,
                l.p50,
                l.p95,
                l.p99,
                l.max,
                t.rollbacks,
                t.lock_waits,
                t.deadlocks
            );
        }
    }

    /// The workload's own part of the JSON report.
    pub(crate) fn json(&self, secs: f64) -> J {
        let txns = self
            .txns
            .iter()
            .map(|t| {
                J::obj(
                    std::iter::once(("name".to_string(), J::s(t.name)))
                        .chain(std::iter::once(("count".to_string(), J::n(t.count as f64))))
                        .chain(t.named(secs).into_iter().map(|(k, v)| {
                            let field = k[t.name.len() + 1..].to_string();
                            (field, J::n(v))
                        })),
                )
            })
            .collect();
        J::obj([
            (
                "notes",
                J::Obj(
                    self.notes
                        .iter()
                        .map(|(k, v)| (k.clone(), J::s(v.clone())))
                        .collect(),
                ),
            ),
            (
                "values",
                J::Obj(
                    self.values
                        .iter()
                        .map(|v| {
                            let x = match &v.value {
                                Ok(x) => J::n(*x),
                                Err(why) => J::obj([("missing", J::s(why.clone()))]),
                            };
                            (v.key.to_string(), x)
                        })
                        .collect(),
                ),
            ),
            ("transactions", J::Arr(txns)),
        ])
    }
}

/// The metric keys of a transaction type, with what each means.
pub(crate) fn txn_keys(name: &str) -> Vec<(String, String)> {
    TXN_FIELDS
        .iter()
        .map(|(f, what)| (format!("{name}_{f}"), format!("{name}: {what}")))
        .collect()
}

/// Counts of one transaction type while a run goes on.
#[derive(Debug)]
struct TxnCounts {
    count: u64,
    lat: Histogram<u64>,
    rollbacks: u64,
    lock_waits: u64,
    deadlocks: u64,
}

/// Collects per-type results from every connection of a run (shared behind a mutex; each
/// connection records once per transaction).
#[derive(Debug)]
pub(crate) struct TxnRecorder {
    names: &'static [&'static str],
    types: Vec<TxnCounts>,
}

/// How one transaction ended, as a connection reports it.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct TxnOutcome {
    /// Latency in nanoseconds, retries included.
    pub(crate) ns: u64,
    /// Rollbacks along the way (each retry, and a rollback by design).
    pub(crate) rollbacks: u64,
    /// Statements that ended on 1205.
    pub(crate) lock_waits: u64,
    /// Statements that ended on 1213.
    pub(crate) deadlocks: u64,
}

impl TxnRecorder {
    /// A recorder for these types (indexes into `names` name them in `record`).
    pub(crate) fn new(names: &'static [&'static str]) -> TxnRecorder {
        TxnRecorder {
            names,
            types: names
                .iter()
                .map(|_| TxnCounts {
                    count: 0,
                    lat: new_hist(),
                    rollbacks: 0,
                    lock_waits: 0,
                    deadlocks: 0,
                })
                .collect(),
        }
    }

    /// Records one completed transaction of type `t`.
    pub(crate) fn record(&mut self, t: usize, o: TxnOutcome) {
        let Some(c) = self.types.get_mut(t) else {
            return;
        };
        c.count += 1;
        record(&mut c.lat, o.ns);
        c.rollbacks += o.rollbacks;
        c.lock_waits += o.lock_waits;
        c.deadlocks += o.deadlocks;
    }

    /// The per-type metrics (`pct` is the report's `--percentile`).
    pub(crate) fn metrics(&self, pct: f64) -> Vec<TxnMetrics> {
        self.names
            .iter()
            .zip(&self.types)
            .map(|(name, c)| TxnMetrics {
                name,
                count: c.count,
                latency: LatMs::of(&c.lat, pct),
                rollbacks: c.rollbacks,
                lock_waits: c.lock_waits,
                deadlocks: c.deadlocks,
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_transaction_type_gives_every_field_under_its_prefix() {
        let mut h = new_hist();
        for ms in 1..=100u64 {
            record(&mut h, ms * 1_000_000);
        }
        let txn = |name, count| TxnMetrics {
            name,
            count,
            latency: LatMs::of(&h, 95.0),
            rollbacks: 1,
            lock_waits: 2,
            deadlocks: 3,
        };
        let m = WorkloadMetrics {
            txns: vec![txn("payment", 100), txn("delivery", 0)],
            values: vec![
                Value {
                    key: "jobs_per_s",
                    label: "jobs/s",
                    value: Ok(3.5),
                    decimals: 1,
                },
                Value {
                    key: "fsyncs_per_job",
                    label: "fsyncs per job",
                    value: Err("no such counter".into()),
                    decimals: 3,
                },
            ],
            ..Default::default()
        };
        let own: BTreeMap<String, Result<f64, String>> = m.own(10.0).into_iter().collect();
        assert_eq!(own["payment_tps"], Ok(10.0));
        assert_eq!(own["payment_rollbacks"], Ok(1.0));
        assert_eq!(own["payment_lock_waits"], Ok(2.0));
        assert_eq!(own["payment_deadlocks"], Ok(3.0));
        assert!((own["payment_p50_ms"].clone().unwrap() - 50.0).abs() < 0.1);
        assert!((own["payment_p99_ms"].clone().unwrap() - 99.0).abs() < 0.1);
        assert!((own["payment_max_ms"].clone().unwrap() - 100.0).abs() < 0.1);
        assert_eq!(own["delivery_tps"], Ok(0.0));
        assert_eq!(own["jobs_per_s"], Ok(3.5));
        assert!(own["fsyncs_per_job"].is_err());
        for (key, _) in txn_keys("payment").iter().chain(&txn_keys("delivery")) {
            assert!(own.contains_key(key), "{key}");
        }
        assert_eq!(own.len(), 2 * TXN_FIELDS.len() + 2);
        let mut text = String::new();
        m.text(&mut text, 10.0);
        assert!(text.contains("    jobs/s: 3.5\n"), "{text}");
        assert!(
            text.contains("fsyncs per job: n/a (no such counter)"),
            "{text}"
        );
        assert!(text.contains("payment"), "{text}");
        let j = m.json(10.0).render();
        assert!(j.contains(r#""jobs_per_s":3.5"#), "{j}");
        assert!(
            j.contains(r#""name":"payment","count":100,"tps":10"#),
            "{j}"
        );
    }
}
