//! The statement summary behind `performance_schema.events_statements_summary_by_digest`.
//!
//! Aggregation is sharded by connection: a connection always records into shard
//! `id % SHARDS`, so 64 connections running the same statement take 32 different mutexes,
//! each almost always uncontended, instead of one per digest. Reading merges the shards.
//! A registry of the distinct (schema, digest) keys, touched only when a shard sees a key
//! for the first time, enforces `performance_schema_digests_size`; statements past it are
//! summed in one row whose SCHEMA_NAME and DIGEST are NULL, as in MySQL.

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hash, Hasher};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Instant;

use super::Digest;

/// Number of aggregation shards.
const SHARDS: usize = 32;

/// Histogram buckets: bucket 0 is below 1,024 ns, then four per power of two up to 2^41 ns.
const BUCKETS: usize = 125;
const BASE_EXP: u32 = 10;

/// What one statement measured, recorded by [`DigestStore::record`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Measure {
    /// When the statement ended (its `LAST_SEEN`).
    pub ended: Instant,
    /// Wall time of the statement, in nanoseconds.
    pub timer_ns: u64,
    /// Time spent waiting for locks, in nanoseconds.
    pub lock_ns: u64,
    /// 1 when the statement failed.
    pub errors: u64,
    /// Warnings it raised.
    pub warnings: u64,
    /// Rows it changed.
    pub rows_affected: u64,
    /// Rows it returned.
    pub rows_sent: u64,
    /// Rows the engine handed the SQL layer for it.
    pub rows_examined: u64,
}

impl Default for Measure {
    /// A statement that ends now and counted nothing.
    fn default() -> Measure {
        Measure {
            ended: Instant::now(),
            timer_ns: 0,
            lock_ns: 0,
            errors: 0,
            warnings: 0,
            rows_affected: 0,
            rows_sent: 0,
            rows_examined: 0,
        }
    }
}

/// The 64-bit prefix of a SHA-256 is as good as any hash of it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Key([u8; 32]);

impl Hash for Key {
    fn hash<H: Hasher>(&self, state: &mut H) {
        let mut b = [0u8; 8];
        b.copy_from_slice(&self.0[..8]);
        state.write_u64(u64::from_le_bytes(b));
    }
}

/// Passes [`Key`]'s prefix through.
#[derive(Debug, Default)]
struct PrefixHasher(u64);

impl Hasher for PrefixHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = self.0.rotate_left(8) ^ u64::from(b);
        }
    }
    fn write_u64(&mut self, v: u64) {
        self.0 = v;
    }
}

type KeyMap<V> = HashMap<Key, V, BuildHasherDefault<PrefixHasher>>;

/// The slowest statement seen for a digest (QUERY_SAMPLE_*).
#[derive(Debug, Clone)]
struct Sample {
    text: Box<str>,
    seen_ns: u64,
    timer_ns: u64,
}

/// Sums of one key in one shard (or merged over shards).
#[derive(Debug, Clone)]
struct Stats {
    count: u64,
    sum_ns: u64,
    min_ns: u64,
    max_ns: u64,
    lock_ns: u64,
    errors: u64,
    warnings: u64,
    rows_affected: u64,
    rows_sent: u64,
    rows_examined: u64,
    first_ns: u64,
    last_ns: u64,
    hist: Box<[u32; BUCKETS]>,
    sample: Option<Sample>,
}

fn bucket(ns: u64) -> usize {
    if ns < 1 << BASE_EXP {
        return 0;
    }
    let e = 63 - ns.leading_zeros();
    let sub = ((ns >> (e - 2)) & 3) as usize;
    (((e - BASE_EXP) as usize) * 4 + sub + 1).min(BUCKETS - 1)
}

/// The upper bound of bucket `i`, in nanoseconds.
fn bucket_upper(i: usize) -> u64 {
    if i == 0 {
        return 1 << BASE_EXP;
    }
    let e = (i - 1) / 4 + BASE_EXP as usize;
    let sub = ((i - 1) % 4) as u64;
    (1u64 << e) + (sub + 1) * (1u64 << (e - 2))
}

impl Stats {
    fn new(now_ns: u64) -> Stats {
        Stats {
            count: 0,
            sum_ns: 0,
            min_ns: u64::MAX,
            max_ns: 0,
            lock_ns: 0,
            errors: 0,
            warnings: 0,
            rows_affected: 0,
            rows_sent: 0,
            rows_examined: 0,
            first_ns: now_ns,
            last_ns: now_ns,
            hist: Box::new([0; BUCKETS]),
            sample: None,
        }
    }

    fn add(&mut self, m: &Measure, now_ns: u64, sample: &str, sample_max: usize) {
        self.count += 1;
        self.sum_ns = self.sum_ns.saturating_add(m.timer_ns);
        self.min_ns = self.min_ns.min(m.timer_ns);
        self.max_ns = self.max_ns.max(m.timer_ns);
        self.lock_ns = self.lock_ns.saturating_add(m.lock_ns);
        self.errors += m.errors;
        self.warnings += m.warnings;
        self.rows_affected += m.rows_affected;
        self.rows_sent += m.rows_sent;
        self.rows_examined += m.rows_examined;
        self.last_ns = now_ns;
        let b = &mut self.hist[bucket(m.timer_ns)];
        *b = b.saturating_add(1);
        if self.sample.as_ref().is_none_or(|s| m.timer_ns > s.timer_ns) {
            let mut end = sample.len().min(sample_max);
            while !sample.is_char_boundary(end) {
                end -= 1;
            }
            self.sample = Some(Sample {
                text: sample[..end].into(),
                seen_ns: now_ns,
                timer_ns: m.timer_ns,
            });
        }
    }

    fn merge(&mut self, o: &Stats) {
        self.count += o.count;
        self.sum_ns = self.sum_ns.saturating_add(o.sum_ns);
        self.min_ns = self.min_ns.min(o.min_ns);
        self.max_ns = self.max_ns.max(o.max_ns);
        self.lock_ns = self.lock_ns.saturating_add(o.lock_ns);
        self.errors += o.errors;
        self.warnings += o.warnings;
        self.rows_affected += o.rows_affected;
        self.rows_sent += o.rows_sent;
        self.rows_examined += o.rows_examined;
        self.first_ns = self.first_ns.min(o.first_ns);
        self.last_ns = self.last_ns.max(o.last_ns);
        for (a, b) in self.hist.iter_mut().zip(o.hist.iter()) {
            *a = a.saturating_add(*b);
        }
        if let Some(s) = &o.sample {
            if self.sample.as_ref().is_none_or(|m| s.timer_ns > m.timer_ns) {
                self.sample = Some(s.clone());
            }
        }
    }

    /// The upper bound of the bucket holding quantile `q`, capped by the maximum (ns).
    fn quantile(&self, q: f64) -> u64 {
        let want = ((self.count as f64) * q).ceil().max(1.0) as u64;
        let mut seen = 0u64;
        for (i, n) in self.hist.iter().enumerate() {
            seen += u64::from(*n);
            if seen >= want {
                return bucket_upper(i).min(self.max_ns);
            }
        }
        self.max_ns
    }
}

/// One key's sums merged over shards: schema, digest, sums.
type Merged = (Option<Box<str>>, Arc<Digest>, Stats);

/// One key's sums in one shard.
#[derive(Debug)]
struct Entry {
    schema: Option<Box<str>>,
    digest: Arc<Digest>,
    stats: Stats,
}

#[derive(Debug, Default)]
struct Shard {
    map: KeyMap<Vec<Entry>>,
    overflow: Option<Stats>,
}

/// Distinct keys admitted so far.
#[derive(Debug, Default)]
struct Registry {
    keys: KeyMap<Vec<Option<Box<str>>>>,
    count: usize,
}

/// Pads a shard to its own cache lines.
#[derive(Debug, Default)]
#[repr(align(128))]
struct Padded(Mutex<Shard>);

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// One row of the summary, merged over shards.
#[derive(Debug, Clone, PartialEq)]
pub struct DigestRow {
    /// SCHEMA_NAME (None: no default database, or the overflow row).
    pub schema: Option<String>,
    /// DIGEST and DIGEST_TEXT (None: the overflow row).
    pub digest: Option<Arc<Digest>>,
    /// COUNT_STAR.
    pub count: u64,
    /// SUM_TIMER_WAIT (ps).
    pub sum_timer_ps: u64,
    /// MIN_TIMER_WAIT (ps).
    pub min_timer_ps: u64,
    /// AVG_TIMER_WAIT (ps).
    pub avg_timer_ps: u64,
    /// MAX_TIMER_WAIT (ps).
    pub max_timer_ps: u64,
    /// SUM_LOCK_TIME (ps).
    pub sum_lock_ps: u64,
    /// SUM_ERRORS.
    pub errors: u64,
    /// SUM_WARNINGS.
    pub warnings: u64,
    /// SUM_ROWS_AFFECTED.
    pub rows_affected: u64,
    /// SUM_ROWS_SENT.
    pub rows_sent: u64,
    /// SUM_ROWS_EXAMINED.
    pub rows_examined: u64,
    /// FIRST_SEEN (µs since the Unix epoch).
    pub first_seen_us: i64,
    /// LAST_SEEN (µs since the Unix epoch).
    pub last_seen_us: i64,
    /// QUANTILE_95 (ps).
    pub quantile_95_ps: u64,
    /// QUANTILE_99 (ps).
    pub quantile_99_ps: u64,
    /// QUANTILE_999 (ps).
    pub quantile_999_ps: u64,
    /// QUERY_SAMPLE_TEXT: the statement text of the slowest execution.
    pub sample_text: Option<String>,
    /// QUERY_SAMPLE_SEEN (µs since the Unix epoch).
    pub sample_seen_us: Option<i64>,
    /// QUERY_SAMPLE_TIMER_WAIT (ps).
    pub sample_timer_ps: Option<u64>,
}

/// The digest summary of one server.
#[derive(Debug)]
pub struct DigestStore {
    enabled: bool,
    limit: usize,
    max_length: usize,
    sample_max: usize,
    epoch: Instant,
    epoch_wall_us: i64,
    shards: Box<[Padded]>,
    registry: Mutex<Registry>,
}

fn ps(ns: u64) -> u64 {
    ns.saturating_mul(1000)
}

impl DigestStore {
    /// A store holding at most `limit` distinct (schema, digest) keys, with digest texts cut
    /// at `max_length` bytes and sample texts at `sample_max`; `enabled` false
    /// (`performance_schema=OFF`) records nothing.
    pub fn new(enabled: bool, limit: usize, max_length: usize, sample_max: usize) -> DigestStore {
        DigestStore {
            enabled,
            limit,
            max_length,
            sample_max,
            epoch: Instant::now(),
            epoch_wall_us: crate::time::now_micros(),
            shards: (0..SHARDS).map(|_| Padded::default()).collect(),
            registry: Mutex::new(Registry::default()),
        }
    }

    /// Whether statements are recorded.
    pub fn enabled(&self) -> bool {
        self.enabled
    }

    /// The longest digest text, in bytes.
    pub fn max_length(&self) -> usize {
        self.max_length
    }

    fn admit(&self, key: Key, schema: Option<&str>) -> bool {
        let mut r = lock(&self.registry);
        if let Some(list) = r.keys.get(&key) {
            if list.iter().any(|s| s.as_deref() == schema) {
                return true;
            }
        }
        if r.count >= self.limit {
            return false;
        }
        r.count += 1;
        r.keys.entry(key).or_default().push(schema.map(Box::from));
        true
    }

    /// Adds one statement of connection `conn` (which picks the shard) under `schema` and
    /// `digest`; `sample` is its text (QUERY_SAMPLE_TEXT if it is the slowest so far).
    pub fn record(
        &self,
        conn: u32,
        schema: Option<&str>,
        digest: &Arc<Digest>,
        m: &Measure,
        sample: &str,
    ) {
        let now = m.ended.saturating_duration_since(self.epoch).as_nanos() as u64;
        let key = Key(*digest.hash());
        let mut shard = lock(&self.shards[conn as usize % SHARDS].0);
        if let Some(e) = shard
            .map
            .get_mut(&key)
            .and_then(|l| l.iter_mut().find(|e| e.schema.as_deref() == schema))
        {
            e.stats.add(m, now, sample, self.sample_max);
            return;
        }
        if self.admit(key, schema) {
            let mut stats = Stats::new(now);
            stats.add(m, now, sample, self.sample_max);
            shard.map.entry(key).or_default().push(Entry {
                schema: schema.map(Box::from),
                digest: Arc::clone(digest),
                stats,
            });
        } else {
            shard.overflow.get_or_insert_with(|| Stats::new(now)).add(
                m,
                now,
                sample,
                self.sample_max,
            );
        }
    }

    /// TRUNCATE TABLE: forgets every digest.
    pub fn reset(&self) {
        for s in self.shards.iter() {
            let mut s = lock(&s.0);
            s.map.clear();
            s.overflow = None;
        }
        *lock(&self.registry) = Registry::default();
    }

    /// The summary rows, merged over shards, oldest FIRST_SEEN first (the overflow row last).
    pub fn rows(&self) -> Vec<DigestRow> {
        let mut merged: KeyMap<Vec<Merged>> = KeyMap::default();
        let mut overflow: Option<Stats> = None;
        for s in self.shards.iter() {
            let s = lock(&s.0);
            for (k, list) in &s.map {
                let into = merged.entry(*k).or_default();
                for e in list {
                    match into.iter_mut().find(|x| x.0 == e.schema) {
                        Some(x) => x.2.merge(&e.stats),
                        None => into.push((e.schema.clone(), e.digest.clone(), e.stats.clone())),
                    }
                }
            }
            if let Some(o) = &s.overflow {
                match &mut overflow {
                    Some(m) => m.merge(o),
                    None => overflow = Some(o.clone()),
                }
            }
        }
        let mut rows: Vec<DigestRow> = merged
            .into_values()
            .flatten()
            .map(|(schema, digest, st)| self.row(schema.map(String::from), Some(digest), &st))
            .collect();
        rows.sort_by_key(|r| r.first_seen_us);
        if let Some(o) = overflow {
            rows.push(self.row(None, None, &o));
        }
        rows
    }

    fn wall(&self, ns: u64) -> i64 {
        self.epoch_wall_us + (ns / 1000) as i64
    }

    fn row(&self, schema: Option<String>, digest: Option<Arc<Digest>>, s: &Stats) -> DigestRow {
        DigestRow {
            schema,
            digest,
            count: s.count,
            sum_timer_ps: ps(s.sum_ns),
            min_timer_ps: ps(if s.count == 0 { 0 } else { s.min_ns }),
            avg_timer_ps: ps(s.sum_ns) / s.count.max(1),
            max_timer_ps: ps(s.max_ns),
            sum_lock_ps: ps(s.lock_ns),
            errors: s.errors,
            warnings: s.warnings,
            rows_affected: s.rows_affected,
            rows_sent: s.rows_sent,
            rows_examined: s.rows_examined,
            first_seen_us: self.wall(s.first_ns),
            last_seen_us: self.wall(s.last_ns),
            quantile_95_ps: ps(s.quantile(0.95)),
            quantile_99_ps: ps(s.quantile(0.99)),
            quantile_999_ps: ps(s.quantile(0.999)),
            sample_text: s.sample.as_ref().map(|x| x.text.to_string()),
            sample_seen_us: s.sample.as_ref().map(|x| self.wall(x.seen_ns)),
            sample_timer_ps: s.sample.as_ref().map(|x| ps(x.timer_ns)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn d(text: &str) -> Arc<Digest> {
        Arc::new(Digest::new(text.to_string()))
    }

    fn m(ns: u64, rows: u64) -> Measure {
        Measure {
            timer_ns: ns,
            rows_examined: rows,
            rows_sent: rows,
            ..Measure::default()
        }
    }

    #[test]
    fn buckets_are_ordered_and_bound_their_values() {
        for ns in [
            0u64,
            1,
            1023,
            1024,
            1500,
            4096,
            10_000,
            123_456_789,
            1 << 40,
        ] {
            let b = bucket(ns);
            assert!(ns < bucket_upper(b), "{ns} in {b}");
            if b > 0 {
                assert!(ns >= bucket_upper(b - 1), "{ns} in {b}");
            }
        }
        assert_eq!(bucket(u64::MAX), BUCKETS - 1);
        assert!((1..BUCKETS).all(|i| bucket_upper(i) > bucket_upper(i - 1)));
    }

    #[test]
    fn shards_merge_into_one_row_per_key() {
        let s = DigestStore::new(true, 100, 1024, 1024);
        let a = d("SELECT ?");
        for conn in 0..64u32 {
            s.record(
                conn,
                Some("db"),
                &a,
                &m(1000 + u64::from(conn), 2),
                "SELECT 1",
            );
        }
        s.record(1, None, &a, &m(5, 0), "SELECT 2");
        let rows = s.rows();
        assert_eq!(rows.len(), 2);
        let r = rows
            .iter()
            .find(|r| r.schema.as_deref() == Some("db"))
            .unwrap();
        assert_eq!(r.count, 64);
        assert_eq!(r.rows_examined, 128);
        assert_eq!(r.min_timer_ps, 1_000_000);
        assert_eq!(r.max_timer_ps, 1_063_000);
        assert_eq!(r.avg_timer_ps, r.sum_timer_ps / 64);
        assert!(r.quantile_95_ps >= 1_000_000 && r.quantile_95_ps <= r.max_timer_ps);
        assert_eq!(r.sample_timer_ps, Some(1_063_000));
        s.reset();
        assert!(s.rows().is_empty());
    }

    #[test]
    fn keys_past_the_limit_go_to_the_null_row() {
        let s = DigestStore::new(true, 2, 1024, 1024);
        for (i, t) in ["A", "B", "C", "D"].iter().enumerate() {
            s.record(i as u32, None, &d(t), &m(10, 1), t);
        }
        // A key already admitted still gets its own row from another shard.
        s.record(7, None, &d("A"), &m(10, 1), "A");
        let rows = s.rows();
        assert_eq!(rows.len(), 3);
        let last = rows.last().unwrap();
        assert!(last.digest.is_none() && last.schema.is_none());
        assert_eq!(last.count, 2);
        let a = rows
            .iter()
            .find(|r| r.digest.as_ref().is_some_and(|x| x.text() == "A"))
            .unwrap();
        assert_eq!(a.count, 2);
    }
}
