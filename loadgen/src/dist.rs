//! sysbench 1.0's random-number distributions (`--rand-type`) and random strings.
//!
//! The algorithms follow sysbench 1.0's documented behaviour: `uniform` maps one
//! uniform double onto `[a, b]`; `gaussian` averages `--rand-spec-iter` uniform
//! draws; `special` sends `--rand-spec-res` percent of the values into the middle
//! `--rand-spec-pct` percent of the range and the rest through the gaussian;
//! `pareto` raises a uniform double to `ln(h)/ln(1-h)`.

use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};

/// Which distribution `--rand-type` selects.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum RandType {
    /// Every value in the range equally likely.
    Uniform,
    /// Mean of `--rand-spec-iter` uniform draws (bell-shaped around the middle).
    Gaussian,
    /// sysbench's default: a hot spot in the middle of the range.
    Special,
    /// Pareto with shape `--rand-pareto-h`: low values hot.
    Pareto,
}

/// Parameters of the distributions (sysbench's `--rand-spec-*` and `--rand-pareto-h`).
#[derive(Debug, Clone, Copy)]
pub(crate) struct DistParams {
    /// The distribution.
    pub(crate) kind: RandType,
    /// `--rand-spec-iter` (12).
    pub(crate) iter: u32,
    /// `--rand-spec-pct` (1).
    pub(crate) pct: u32,
    /// `--rand-spec-res` (75).
    pub(crate) res: u32,
    /// `--rand-pareto-h` (0.2).
    pub(crate) pareto_h: f64,
}

impl Default for DistParams {
    fn default() -> Self {
        DistParams {
            kind: RandType::Special,
            iter: 12,
            pct: 1,
            res: 75,
            pareto_h: 0.2,
        }
    }
}

/// A seeded generator that draws from the configured distribution.
#[derive(Debug)]
pub(crate) struct Dist {
    p: DistParams,
    pareto_power: f64,
    rng: SmallRng,
}

impl Dist {
    /// A generator with the given parameters and seed.
    pub(crate) fn new(p: DistParams, seed: u64) -> Self {
        let pareto_power = p.pareto_h.ln() / (1.0 - p.pareto_h).ln();
        Dist {
            p,
            pareto_power,
            rng: SmallRng::seed_from_u64(seed),
        }
    }

    /// A uniform double in `[0, 1)`.
    pub(crate) fn unit(&mut self) -> f64 {
        self.rng.random::<f64>()
    }

    /// A value in `[a, b]` from the `--rand-type` distribution (`sysbench.rand.default`).
    pub(crate) fn default(&mut self, a: u32, b: u32) -> u32 {
        match self.p.kind {
            RandType::Uniform => self.uniform(a, b),
            RandType::Gaussian => self.gaussian(a, b),
            RandType::Special => self.special(a, b),
            RandType::Pareto => self.pareto(a, b),
        }
    }

    /// A uniform value in `[a, b]` (`sysbench.rand.uniform`).
    pub(crate) fn uniform(&mut self, a: u32, b: u32) -> u32 {
        let span = f64::from(b - a) + 1.0;
        a + (self.unit() * span) as u32
    }

    fn gaussian(&mut self, a: u32, b: u32) -> u32 {
        let span = f64::from(b - a) + 1.0;
        let iter = self.p.iter.max(1);
        let sum: f64 = (0..iter).map(|_| self.unit() * span).sum();
        a + (sum / f64::from(iter)) as u32
    }

    fn special(&mut self, a: u32, b: u32) -> u32 {
        let t = f64::from(b - a);
        let widened = t * (100.0 / (100.0 - f64::from(self.p.res.min(99))));
        let rnd = self.unit();
        let pos = rnd * widened;
        if pos < t {
            let iter = self.p.iter.max(1);
            let sum: f64 = (0..iter).map(|_| self.unit()).sum();
            return a + (sum * t / f64::from(iter)) as u32;
        }
        let hot = t * f64::from(self.p.pct) / 100.0;
        let v = rnd * (hot + 1.0) + t / 2.0 - t * f64::from(self.p.pct) / 200.0;
        a + v as u32
    }

    fn pareto(&mut self, a: u32, b: u32) -> u32 {
        let span = f64::from(b - a) + 1.0;
        a + (span * self.unit().powf(self.pareto_power)) as u32
    }

    /// sysbench's `rand.string`: every `#` becomes a random digit, `@` a random letter.
    pub(crate) fn string(&mut self, template: &str) -> String {
        template
            .bytes()
            .map(|c| match c {
                b'#' => char::from(b'0' + self.uniform(0, 9) as u8),
                b'@' => char::from(b'a' + self.uniform(0, 25) as u8),
                other => char::from(other),
            })
            .collect()
    }

    /// An exponentially distributed gap with the given mean (Poisson arrivals).
    pub(crate) fn exp_gap(&mut self, mean_secs: f64) -> f64 {
        let u = 1.0 - self.unit();
        -u.ln() * mean_secs
    }

    /// A raw 64-bit value (to seed child generators).
    pub(crate) fn next_u64(&mut self) -> u64 {
        self.rng.random::<u64>()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample(kind: RandType, n: usize) -> Vec<u32> {
        let mut d = Dist::new(
            DistParams {
                kind,
                ..DistParams::default()
            },
            42,
        );
        (0..n).map(|_| d.default(1, 10_000)).collect()
    }

    #[test]
    fn every_type_stays_in_range() {
        for kind in [
            RandType::Uniform,
            RandType::Gaussian,
            RandType::Special,
            RandType::Pareto,
        ] {
            for v in sample(kind, 50_000) {
                assert!((1..=10_000).contains(&v), "{kind:?} gave {v}");
            }
        }
    }

    #[test]
    fn uniform_is_flat() {
        let v = sample(RandType::Uniform, 100_000);
        let low = v.iter().filter(|&&x| x <= 5_000).count() as f64 / v.len() as f64;
        assert!((low - 0.5).abs() < 0.01, "{low}");
        let mean = v.iter().map(|&x| f64::from(x)).sum::<f64>() / v.len() as f64;
        assert!((mean - 5_000.5).abs() < 60.0, "{mean}");
    }

    #[test]
    fn gaussian_concentrates_in_the_middle() {
        let v = sample(RandType::Gaussian, 100_000);
        // the mean of 12 uniforms has sd = range/sqrt(144) = range/12
        let mid =
            v.iter().filter(|&&x| (4_167..=5_833).contains(&x)).count() as f64 / v.len() as f64;
        assert!((mid - 0.68).abs() < 0.02, "within one sd: {mid}");
    }

    #[test]
    fn special_puts_75_percent_into_the_middle_1_percent() {
        let v = sample(RandType::Special, 200_000);
        // hot band: [t/2 - t/200, t/2 + t/200 + 1] around 5000
        let hot =
            v.iter().filter(|&&x| (4_950..=5_052).contains(&x)).count() as f64 / v.len() as f64;
        // 75 % land in the band directly; the gaussian 25 % add about 0.25 * 4 % more
        assert!(hot > 0.74 && hot < 0.80, "hot share {hot}");
    }

    #[test]
    fn pareto_favours_low_values() {
        let v = sample(RandType::Pareto, 100_000);
        // power = ln 0.2 / ln 0.8 = 7.21; P(x <= 0.2 span) = 0.2^(1/7.21) = 0.80
        let low = v.iter().filter(|&&x| x <= 2_000).count() as f64 / v.len() as f64;
        assert!((low - 0.80).abs() < 0.01, "{low}");
    }

    #[test]
    fn strings_follow_the_template() {
        let mut d = Dist::new(DistParams::default(), 7);
        let s = d.string("###-@@");
        assert_eq!(s.len(), 6);
        assert!(s[..3].bytes().all(|c| c.is_ascii_digit()));
        assert_eq!(&s[3..4], "-");
        assert!(s[4..].bytes().all(|c| c.is_ascii_lowercase()));
    }

    #[test]
    fn exponential_gaps_have_the_requested_mean() {
        let mut d = Dist::new(DistParams::default(), 9);
        let n = 100_000;
        let mean = (0..n).map(|_| d.exp_gap(0.002)).sum::<f64>() / f64::from(n);
        assert!((mean - 0.002).abs() < 0.00005, "{mean}");
    }
}
