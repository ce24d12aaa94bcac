//! Measurement state: counters, HdrHistograms (nanoseconds), per-interval samples.

use std::collections::BTreeMap;

use hdrhistogram::Histogram;

/// A fresh latency histogram: 1 ns .. 1 hour, 3 significant digits.
pub(crate) fn new_hist() -> Histogram<u64> {
    Histogram::new_with_bounds(1, 3_600_000_000_000, 3).expect("valid histogram bounds")
}

/// Records `ns` into `h`, clamping into the histogram's range.
pub(crate) fn record(h: &mut Histogram<u64>, ns: u64) {
    let v = ns.clamp(1, h.high());
    h.record(v).expect("value within bounds");
}

/// Query and event counters (sysbench's "SQL statistics").
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct Counters {
    /// Statements that returned a result set.
    pub(crate) reads: u64,
    /// Statements that affected rows.
    pub(crate) writes: u64,
    /// Other statements.
    pub(crate) others: u64,
    /// Completed events (transactions).
    pub(crate) events: u64,
    /// Errors in `--mysql-ignore-errors` (the event restarted).
    pub(crate) ignored: u64,
    /// Reconnects after a lost connection.
    pub(crate) reconnects: u64,
    /// Every error reply, by code.
    pub(crate) errors: BTreeMap<u16, u64>,
}

impl Counters {
    /// All statements.
    pub(crate) fn queries(&self) -> u64 {
        self.reads + self.writes + self.others
    }

    /// Adds `o` into `self`.
    pub(crate) fn add(&mut self, o: &Counters) {
        self.reads += o.reads;
        self.writes += o.writes;
        self.others += o.others;
        self.events += o.events;
        self.ignored += o.ignored;
        self.reconnects += o.reconnects;
        for (c, n) in &o.errors {
            *self.errors.entry(*c).or_default() += n;
        }
    }
}

/// Counters and latency of one interval or of the whole run.
#[derive(Debug, Clone)]
pub(crate) struct Acc {
    /// Counters.
    pub(crate) c: Counters,
    /// Event latency (from the intended start in open loop).
    pub(crate) lat: Histogram<u64>,
    /// Event service time (from the actual start).
    pub(crate) service: Histogram<u64>,
    /// Single statement latency.
    pub(crate) stmt: Histogram<u64>,
}

impl Default for Acc {
    fn default() -> Self {
        Acc {
            c: Counters::default(),
            lat: new_hist(),
            service: new_hist(),
            stmt: new_hist(),
        }
    }
}

impl Acc {
    /// Empties the counters and histograms, keeping the histograms' memory.
    pub(crate) fn reset(&mut self) {
        self.c = Counters::default();
        self.lat.reset();
        self.service.reset();
        self.stmt.reset();
    }

    /// Adds `o` into `self`.
    pub(crate) fn add(&mut self, o: &Acc) {
        self.c.add(&o.c);
        self.lat.add(&o.lat).expect("same bounds");
        self.service.add(&o.service).expect("same bounds");
        self.stmt.add(&o.stmt).expect("same bounds");
    }
}

/// Latency summary in milliseconds.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub(crate) struct LatMs {
    /// Minimum.
    pub(crate) min: f64,
    /// Mean.
    pub(crate) avg: f64,
    /// Median.
    pub(crate) p50: f64,
    /// 95th percentile.
    pub(crate) p95: f64,
    /// 99th percentile.
    pub(crate) p99: f64,
    /// 99.9th percentile.
    pub(crate) p999: f64,
    /// Maximum.
    pub(crate) max: f64,
    /// The `--percentile` value.
    pub(crate) pct: f64,
    /// Sum of all values.
    pub(crate) sum: f64,
}

impl LatMs {
    /// Summarises a nanosecond histogram; `pct` is sysbench's `--percentile`.
    pub(crate) fn of(h: &Histogram<u64>, pct: f64) -> LatMs {
        if h.is_empty() {
            return LatMs::default();
        }
        let ms = |ns: u64| ns as f64 / 1e6;
        LatMs {
            min: ms(h.min()),
            avg: h.mean() / 1e6,
            p50: ms(h.value_at_quantile(0.50)),
            p95: ms(h.value_at_quantile(0.95)),
            p99: ms(h.value_at_quantile(0.99)),
            p999: ms(h.value_at_quantile(0.999)),
            max: ms(h.max()),
            pct: ms(h.value_at_quantile((pct / 100.0).clamp(0.0, 1.0))),
            sum: h.mean() * h.len() as f64 / 1e6,
        }
    }
}

/// One `--report-interval` line.
#[derive(Debug, Clone, Default)]
pub(crate) struct IntervalSample {
    /// Seconds since the measured start at the end of the interval.
    pub(crate) t: f64,
    /// Length of the interval in seconds.
    pub(crate) secs: f64,
    /// Connections running events (sysbench "thds").
    pub(crate) threads: usize,
    /// Counters of the interval.
    pub(crate) c: Counters,
    /// Latency of the interval's events.
    pub(crate) lat: LatMs,
    /// Open loop: events waiting for a connection at the end of the interval.
    pub(crate) queue: usize,
    /// Connections busy with an event at the end of the interval.
    pub(crate) concurrency: usize,
    /// Server gauges sampled at the end of the interval (name, value).
    pub(crate) gauges: Vec<(String, f64)>,
}

/// Events and busy time of one connection (sysbench's "threads fairness").
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Fairness {
    /// Events completed in the measured window.
    pub(crate) events: u64,
    /// Seconds spent in those events.
    pub(crate) busy_secs: f64,
}

/// Mean and population standard deviation.
pub(crate) fn mean_sd(v: impl Iterator<Item = f64> + Clone) -> (f64, f64) {
    let n = v.clone().count();
    if n == 0 {
        return (0.0, 0.0);
    }
    let mean = v.clone().sum::<f64>() / n as f64;
    let var = v.map(|x| (x - mean) * (x - mean)).sum::<f64>() / n as f64;
    (mean, var.sqrt())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn latency_summary_in_ms() {
        let mut h = new_hist();
        for i in 1..=1000u64 {
            record(&mut h, i * 1_000_000);
        }
        let l = LatMs::of(&h, 95.0);
        assert!((l.min - 1.0).abs() < 0.01);
        assert!((l.max - 1000.0).abs() < 1.0);
        assert!((l.p50 - 500.0).abs() < 1.0);
        assert!((l.pct - 950.0).abs() < 1.0);
        assert!((l.p999 - 999.0).abs() < 1.0);
        assert!((l.sum - 500_500.0).abs() < 500.0);
    }

    #[test]
    fn counters_add_and_classify() {
        let mut a = Counters {
            reads: 1,
            writes: 1,
            others: 1,
            ..Counters::default()
        };
        *a.errors.entry(1213).or_default() += 2;
        let mut b = a.clone();
        b.add(&a);
        assert_eq!((b.reads, b.writes, b.others, b.queries()), (2, 2, 2, 6));
        assert_eq!(b.errors[&1213], 4);
    }

    #[test]
    fn fairness_stats() {
        let (m, sd) = mean_sd([1.0, 3.0].into_iter());
        assert_eq!((m, sd), (2.0, 1.0));
    }
}
