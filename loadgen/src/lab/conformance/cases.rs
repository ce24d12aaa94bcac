//! The lock-conformance cases: session A holds one statement in an open transaction, session B
//! runs another; every case is a table shape, an isolation level, A's verb and predicate, and
//! B's verb and key. The same list, in the same order, is generated for every target.

use serde::Serialize;

/// The rows every non-empty table starts with: 10, 20, 30, then 40 to 250 by 10, so a range
/// over 10..20 is selective enough that every optimizer picks the index.
pub(crate) fn initial_keys() -> Vec<i64> {
    (1..=25).map(|i| i * 10).collect()
}

/// The column a new row's `id` gets: far from every initial id, so an insert's duplicate
/// check meets the key column's index, not the primary key.
const NEW_ID_OFFSET: i64 = 1000;

/// How the table is indexed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum Shape {
    /// `k` is the primary key.
    PrimaryKey,
    /// `id` is the primary key, `k` has a UNIQUE index.
    UniqueKey,
    /// `id` is the primary key, `k` has a non-unique index.
    NonUniqueKey,
    /// No index at all: InnoDB's hidden clustered key.
    NoIndex,
}

impl Shape {
    /// Every shape, in case order.
    pub(crate) const ALL: [Shape; 4] = [
        Shape::PrimaryKey,
        Shape::UniqueKey,
        Shape::NonUniqueKey,
        Shape::NoIndex,
    ];

    /// Its short name in case names.
    pub(crate) fn name(self) -> &'static str {
        match self {
            Shape::PrimaryKey => "pk",
            Shape::UniqueKey => "unique",
            Shape::NonUniqueKey => "nonunique",
            Shape::NoIndex => "noindex",
        }
    }

    /// `CREATE TABLE` for `table`.
    pub(crate) fn create(self, table: &str) -> String {
        match self {
            Shape::PrimaryKey => {
                format!("CREATE TABLE {table} (k INT NOT NULL PRIMARY KEY, v INT NOT NULL)")
            }
            Shape::UniqueKey => format!(
                "CREATE TABLE {table} (id INT NOT NULL PRIMARY KEY, k INT NOT NULL, \
                 v INT NOT NULL, UNIQUE KEY uk (k))"
            ),
            Shape::NonUniqueKey => format!(
                "CREATE TABLE {table} (id INT NOT NULL PRIMARY KEY, k INT NOT NULL, \
                 v INT NOT NULL, KEY ik (k))"
            ),
            Shape::NoIndex => {
                format!("CREATE TABLE {table} (id INT NOT NULL, k INT NOT NULL, v INT NOT NULL)")
            }
        }
    }

    /// The column list and the values of a row with key `k` (`id` is `k` for the initial
    /// rows, `k + 1000` for new ones).
    fn row(self, k: i64, initial: bool) -> (&'static str, String) {
        let id = if initial { k } else { k + NEW_ID_OFFSET };
        match self {
            Shape::PrimaryKey => ("(k, v)", format!("({k}, 0)")),
            _ => ("(id, k, v)", format!("({id}, {k}, 0)")),
        }
    }

    /// The `INSERT` that fills `table` with `keys`.
    pub(crate) fn fill(self, table: &str, keys: &[i64]) -> Option<String> {
        if keys.is_empty() {
            return None;
        }
        let cols = self.row(0, true).0;
        let vals: Vec<String> = keys.iter().map(|&k| self.row(k, true).1).collect();
        Some(format!(
            "INSERT INTO {table} {cols} VALUES {}",
            vals.join(", ")
        ))
    }
}

/// The isolation level both sessions run at.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum Iso {
    /// REPEATABLE READ.
    RepeatableRead,
    /// READ COMMITTED.
    ReadCommitted,
}

impl Iso {
    /// Both levels, in case order.
    pub(crate) const ALL: [Iso; 2] = [Iso::RepeatableRead, Iso::ReadCommitted];

    /// Its short name.
    pub(crate) fn name(self) -> &'static str {
        match self {
            Iso::RepeatableRead => "rr",
            Iso::ReadCommitted => "rc",
        }
    }

    /// `SET SESSION TRANSACTION ISOLATION LEVEL ...`.
    pub(crate) fn set_sql(self) -> &'static str {
        match self {
            Iso::RepeatableRead => "SET SESSION TRANSACTION ISOLATION LEVEL REPEATABLE READ",
            Iso::ReadCommitted => "SET SESSION TRANSACTION ISOLATION LEVEL READ COMMITTED",
        }
    }
}

/// A's predicate on `k`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum Pred {
    /// `k = 20`, a row.
    EqHit,
    /// `k = 15`, no row.
    EqMiss,
    /// `k BETWEEN 10 AND 20`: an inclusive upper bound that is a row.
    Range,
    /// `k IN (10, 30)`.
    InList,
    /// `k = 260`, past the last row.
    PastLast,
    /// `k = 20` on an empty table.
    EmptyTable,
    /// `k >= 20 AND k < 35` (larger scale): an exclusive upper bound that is no row.
    RangeOpen,
    /// `k > 240` (larger scale): a range that runs to the end of the index.
    RangeToEnd,
}

impl Pred {
    /// The predicates of the small scale.
    pub(crate) const SMALL: [Pred; 6] = [
        Pred::EqHit,
        Pred::EqMiss,
        Pred::Range,
        Pred::InList,
        Pred::PastLast,
        Pred::EmptyTable,
    ];

    /// Every predicate.
    pub(crate) const ALL: [Pred; 8] = [
        Pred::EqHit,
        Pred::EqMiss,
        Pred::Range,
        Pred::InList,
        Pred::PastLast,
        Pred::EmptyTable,
        Pred::RangeOpen,
        Pred::RangeToEnd,
    ];

    /// The WHERE condition.
    pub(crate) fn sql(self) -> &'static str {
        match self {
            Pred::EqHit | Pred::EmptyTable => "k = 20",
            Pred::EqMiss => "k = 15",
            Pred::Range => "k BETWEEN 10 AND 20",
            Pred::InList => "k IN (10, 30)",
            Pred::PastLast => "k = 260",
            Pred::RangeOpen => "k >= 20 AND k < 35",
            Pred::RangeToEnd => "k > 240",
        }
    }

    /// The key an INSERT, REPLACE or upsert by A writes for this predicate (none for ranges
    /// and lists).
    pub(crate) fn insert_key(self) -> Option<i64> {
        match self {
            Pred::EqHit | Pred::EmptyTable => Some(20),
            Pred::EqMiss => Some(15),
            Pred::PastLast => Some(260),
            Pred::Range | Pred::InList | Pred::RangeOpen | Pred::RangeToEnd => None,
        }
    }

    /// Whether the table is empty.
    pub(crate) fn empty_table(self) -> bool {
        self == Pred::EmptyTable
    }

    /// The keys B probes around this predicate: the rows it reads, the gaps beside them, and
    /// the record after it.
    pub(crate) fn probes(self) -> &'static [i64] {
        match self {
            Pred::EqHit | Pred::EmptyTable => &[10, 15, 20, 25, 30],
            Pred::EqMiss => &[10, 12, 15, 20, 25],
            Pred::Range => &[5, 10, 15, 20, 25, 30, 35],
            Pred::InList => &[10, 15, 20, 30, 35],
            Pred::PastLast => &[240, 250, 255, 260, 265],
            Pred::RangeOpen => &[15, 20, 25, 30, 35, 40, 45],
            Pred::RangeToEnd => &[230, 240, 245, 250, 255],
        }
    }
}

/// How a locking read waits.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum Mode {
    /// Waits (up to `innodb_lock_wait_timeout`).
    Wait,
    /// `NOWAIT`.
    NoWait,
    /// `SKIP LOCKED`.
    SkipLocked,
}

impl Mode {
    fn suffix(self) -> &'static str {
        match self {
            Mode::Wait => "",
            Mode::NoWait => " NOWAIT",
            Mode::SkipLocked => " SKIP LOCKED",
        }
    }
}

/// A statement verb.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum Verb {
    /// `SELECT ... FOR UPDATE`.
    ForUpdate(Mode),
    /// `SELECT ... FOR SHARE`.
    ForShare(Mode),
    /// `UPDATE ... SET v = v + 1`.
    Update,
    /// `DELETE`.
    Delete,
    /// `INSERT`.
    Insert,
    /// `INSERT ... ON DUPLICATE KEY UPDATE v = v + 1`.
    Upsert,
    /// `REPLACE`.
    Replace,
}

impl Verb {
    /// A's verbs.
    pub(crate) const A: [Verb; 7] = [
        Verb::ForUpdate(Mode::Wait),
        Verb::ForShare(Mode::Wait),
        Verb::Update,
        Verb::Delete,
        Verb::Insert,
        Verb::Upsert,
        Verb::Replace,
    ];

    /// B's verbs.
    pub(crate) const B: [Verb; 11] = [
        Verb::ForUpdate(Mode::Wait),
        Verb::ForUpdate(Mode::NoWait),
        Verb::ForUpdate(Mode::SkipLocked),
        Verb::ForShare(Mode::Wait),
        Verb::ForShare(Mode::NoWait),
        Verb::ForShare(Mode::SkipLocked),
        Verb::Update,
        Verb::Delete,
        Verb::Insert,
        Verb::Upsert,
        Verb::Replace,
    ];

    /// Whether it writes a key given by value (INSERT, upsert, REPLACE).
    pub(crate) fn writes_key(self) -> bool {
        matches!(self, Verb::Insert | Verb::Upsert | Verb::Replace)
    }

    /// Whether it skips locked rows.
    pub(crate) fn skips(self) -> bool {
        matches!(
            self,
            Verb::ForUpdate(Mode::SkipLocked) | Verb::ForShare(Mode::SkipLocked)
        )
    }

    /// The statement on `table` over `cond` (reads, UPDATE, DELETE) or writing key `k`.
    pub(crate) fn sql(self, table: &str, shape: Shape, cond: &str, k: i64) -> String {
        let write = |head: &str, tail: &str| {
            let (cols, vals) = shape.row(k, false);
            format!("{head} INTO {table} {cols} VALUES {vals}{tail}")
        };
        match self {
            Verb::ForUpdate(w) => format!(
                "SELECT k, v FROM {table}{} FOR UPDATE{}",
                where_(cond),
                w.suffix()
            ),
            Verb::ForShare(w) => format!(
                "SELECT k, v FROM {table}{} FOR SHARE{}",
                where_(cond),
                w.suffix()
            ),
            Verb::Update => format!("UPDATE {table} SET v = v + 1{}", where_(cond)),
            Verb::Delete => format!("DELETE FROM {table}{}", where_(cond)),
            Verb::Insert => write("INSERT", ""),
            Verb::Upsert => write("INSERT", " ON DUPLICATE KEY UPDATE v = v + 1"),
            Verb::Replace => write("REPLACE", ""),
        }
    }
}

fn where_(cond: &str) -> String {
    if cond.is_empty() {
        String::new()
    } else {
        format!(" WHERE {cond}")
    }
}

/// One case.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub(crate) struct Case {
    /// Table shape.
    pub(crate) shape: Shape,
    /// Isolation level of both sessions.
    pub(crate) iso: Iso,
    /// A's predicate.
    pub(crate) pred: Pred,
    /// A's verb.
    pub(crate) a: Verb,
    /// B's verb.
    pub(crate) b: Verb,
    /// B's key (unused by a SKIP LOCKED scan, which reads the whole table).
    pub(crate) b_key: i64,
}

impl Case {
    /// A's statement on `table`.
    pub(crate) fn a_sql(&self, table: &str) -> String {
        let k = self.pred.insert_key().unwrap_or(0);
        self.a.sql(table, self.shape, self.pred.sql(), k)
    }

    /// B's statement on `table`: a SKIP LOCKED read scans the whole table, other reads and
    /// UPDATE/DELETE name `k = KEY`, writes insert KEY.
    pub(crate) fn b_sql(&self, table: &str) -> String {
        if self.b.skips() {
            return self.b.sql(table, self.shape, "", 0);
        }
        let cond = format!("k = {}", self.b_key);
        self.b.sql(table, self.shape, &cond, self.b_key)
    }

    /// The keys the table starts with.
    pub(crate) fn keys(&self) -> Vec<i64> {
        if self.pred.empty_table() {
            Vec::new()
        } else {
            initial_keys()
        }
    }

    /// A stable name: `SHAPE/ISO[/empty]/A: statement/B: statement` on table `t`.
    pub(crate) fn name(&self) -> String {
        format!(
            "{}/{}{}/A: {}/B: {}",
            self.shape.name(),
            self.iso.name(),
            if self.pred.empty_table() {
                "/empty"
            } else {
                ""
            },
            self.a_sql("t"),
            self.b_sql("t")
        )
    }
}

/// How many cases a scale runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Size {
    /// A few hundred cases: every shape, level, A statement and B verb, B's keys sampled.
    Small,
    /// Every combination (several thousand cases).
    Large,
}

/// Every A statement of a predicate set: reads, UPDATE and DELETE for each predicate, writes
/// for each predicate that names one key.
fn a_statements(preds: &[Pred]) -> Vec<(Pred, Verb)> {
    let mut out = Vec::new();
    for &p in preds {
        for v in Verb::A {
            if v.writes_key() && p.insert_key().is_none() {
                continue;
            }
            out.push((p, v));
        }
    }
    out
}

/// Every B statement for predicate `p`: each verb at each probe key, one SKIP LOCKED scan per
/// strength.
fn b_statements(p: Pred) -> Vec<(Verb, i64)> {
    let mut out = Vec::new();
    for v in Verb::B {
        if v.skips() {
            out.push((v, 0));
            continue;
        }
        for &k in p.probes() {
            out.push((v, k));
        }
    }
    out
}

/// The cases of a size, in a fixed order. The small size keeps, for each shape, level and A
/// statement, one B statement, rotating through B's verbs and keys so each meets many A
/// statements somewhere in the run.
pub(crate) fn generate(size: Size) -> Vec<Case> {
    let preds: &[Pred] = match size {
        Size::Small => &Pred::SMALL,
        Size::Large => &Pred::ALL,
    };
    let mut out = Vec::new();
    let mut turn = 0usize;
    for shape in Shape::ALL {
        for iso in Iso::ALL {
            for (pred, a) in a_statements(preds) {
                let bs = b_statements(pred);
                let picked: Vec<(Verb, i64)> = match size {
                    Size::Large => bs,
                    Size::Small => {
                        turn += 1;
                        // a stride prime to every list length walks all of B's statements
                        vec![bs[(turn * 11) % bs.len()]]
                    }
                };
                for (b, b_key) in picked {
                    out.push(Case {
                        shape,
                        iso,
                        pred,
                        a,
                        b,
                        b_key,
                    });
                }
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn small_is_a_few_hundred_cases_covering_every_verb_and_large_is_every_combination() {
        let small = generate(Size::Small);
        let large = generate(Size::Large);
        assert!((200..=500).contains(&small.len()), "{}", small.len());
        assert!(large.len() > 10 * small.len(), "{}", large.len());
        for v in Verb::B {
            assert!(small.iter().any(|c| c.b == v), "{v:?} never runs as B");
        }
        for v in Verb::A {
            assert!(small.iter().any(|c| c.a == v), "{v:?} never runs as A");
        }
        for s in Shape::ALL {
            for i in Iso::ALL {
                assert!(small.iter().any(|c| c.shape == s && c.iso == i));
            }
        }
        for set in [&small, &large] {
            let mut names: Vec<String> = set.iter().map(Case::name).collect();
            names.sort();
            names.dedup();
            assert_eq!(names.len(), set.len(), "case names are unique");
        }
        // writes never get a range: INSERT has no predicate
        assert!(large
            .iter()
            .all(|c| !c.a.writes_key() || c.pred.insert_key().is_some()));
    }

    #[test]
    fn statements_read_as_sql() {
        let c = Case {
            shape: Shape::UniqueKey,
            iso: Iso::RepeatableRead,
            pred: Pred::EqHit,
            a: Verb::Upsert,
            b: Verb::ForShare(Mode::NoWait),
            b_key: 25,
        };
        assert_eq!(
            c.a_sql("t"),
            "INSERT INTO t (id, k, v) VALUES (1020, 20, 0) ON DUPLICATE KEY UPDATE v = v + 1"
        );
        assert_eq!(
            c.b_sql("t"),
            "SELECT k, v FROM t WHERE k = 25 FOR SHARE NOWAIT"
        );
        let skip = Case {
            b: Verb::ForUpdate(Mode::SkipLocked),
            ..c
        };
        assert_eq!(skip.b_sql("t"), "SELECT k, v FROM t FOR UPDATE SKIP LOCKED");
        assert_eq!(
            Shape::PrimaryKey.fill("t", &[10, 20]).unwrap(),
            "INSERT INTO t (k, v) VALUES (10, 0), (20, 0)"
        );
    }
}
