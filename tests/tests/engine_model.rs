//! Random INSERT/UPDATE/DELETE/SELECT sequences through the real server against an in-test
//! model (a BTreeMap from primary key to row): every affected-row count, error code and
//! result set must match. Statements go both as text and as prepared statements, and the
//! reads exercise the planner's paths (point, primary range, secondary equality and range,
//! IN lists, ORDER BY with and without LIMIT, aggregates). The run repeats in every
//! connection-handling mode.

use std::cell::RefCell;
use std::collections::BTreeMap;

use mysql::prelude::*;
use mysql::Conn;
use proptest::prelude::*;
use proptest::test_runner::TestRunner;
use tpbed_tests::each_mode;

#[derive(Debug, Clone)]
enum Op {
    Insert { id: i32, k: i32, c: Option<u8> },
    SetK { id: i32, k: i32 },
    BumpRange { lo: i32, hi: i32 },
    DeleteK { k: i32 },
    DeleteLimit { n: u8 },
    Point { id: i32 },
    RangeK { lo: i32, hi: i32 },
    InK { ks: Vec<i32> },
    TopById { n: u8, desc: bool },
    SumRange { lo: i32, hi: i32 },
    GroupByK,
    DistinctC { desc: bool },
}

fn op() -> impl Strategy<Value = Op> {
    let id = 0..40i32;
    let k = 0..8i32;
    prop_oneof![
        4 => (id.clone(), k.clone(), proptest::option::of(0..5u8)).prop_map(|(id, k, c)| Op::Insert { id, k, c }),
        2 => (id.clone(), k.clone()).prop_map(|(id, k)| Op::SetK { id, k }),
        1 => (id.clone(), id.clone()).prop_map(|(a, b)| Op::BumpRange { lo: a.min(b), hi: a.max(b) }),
        1 => k.clone().prop_map(|k| Op::DeleteK { k }),
        1 => (0..4u8).prop_map(|n| Op::DeleteLimit { n }),
        2 => id.clone().prop_map(|id| Op::Point { id }),
        2 => (k.clone(), k.clone()).prop_map(|(a, b)| Op::RangeK { lo: a.min(b), hi: a.max(b) }),
        1 => proptest::collection::vec(k.clone(), 1..4).prop_map(|ks| Op::InK { ks }),
        1 => (0..6u8, any::<bool>()).prop_map(|(n, desc)| Op::TopById { n, desc }),
        1 => (id.clone(), id).prop_map(|(a, b)| Op::SumRange { lo: a.min(b), hi: a.max(b) }),
        1 => Just(Op::GroupByK),
        1 => any::<bool>().prop_map(|desc| Op::DistinctC { desc }),
    ]
}

type Row = (i32, i32, Option<String>);

struct Model {
    rows: BTreeMap<i32, (i32, Option<String>)>,
}

impl Model {
    fn all(&self) -> impl Iterator<Item = Row> + '_ {
        self.rows.iter().map(|(id, (k, c))| (*id, *k, c.clone()))
    }
}

fn error_code<T>(r: mysql::Result<T>) -> Result<T, u16> {
    r.map_err(|e| match e {
        mysql::Error::MySqlError(e) => e.code,
        other => panic!("client error: {other}"),
    })
}

fn run(c: &mut Conn, ops: &[Op], prepared: bool) {
    c.query_drop("DROP TABLE IF EXISTS t").unwrap();
    c.query_drop(
        "CREATE TABLE t (id INT NOT NULL, k INT NOT NULL, c VARCHAR(10) NULL, PRIMARY KEY (id), KEY kx (k))",
    )
    .unwrap();
    let mut m = Model {
        rows: BTreeMap::new(),
    };
    for op in ops {
        match op {
            Op::Insert { id, k, c: cv } => {
                let cs = cv.map(|v| format!("c{v}"));
                let r = if prepared {
                    error_code(c.exec_drop(
                        "INSERT INTO t (id, k, c) VALUES (?, ?, ?)",
                        (id, k, cs.clone()),
                    ))
                } else {
                    let lit = cs.as_ref().map_or("NULL".to_string(), |s| format!("'{s}'"));
                    error_code(c.query_drop(format!(
                        "INSERT INTO t (id, k, c) VALUES ({id}, {k}, {lit})"
                    )))
                };
                if m.rows.contains_key(id) {
                    assert_eq!(r, Err(1062), "{op:?}");
                } else {
                    assert_eq!(r, Ok(()), "{op:?}");
                    assert_eq!(c.affected_rows(), 1);
                    m.rows.insert(*id, (*k, cs));
                }
            }
            Op::SetK { id, k } => {
                if prepared {
                    c.exec_drop("UPDATE t SET k = ? WHERE id = ?", (k, id))
                        .unwrap();
                } else {
                    c.query_drop(format!("UPDATE t SET k = {k} WHERE id = {id}"))
                        .unwrap();
                }
                let changed = match m.rows.get_mut(id) {
                    Some(r) if r.0 != *k => {
                        r.0 = *k;
                        1
                    }
                    _ => 0,
                };
                assert_eq!(c.affected_rows(), changed, "{op:?}");
            }
            Op::BumpRange { lo, hi } => {
                c.query_drop(format!(
                    "UPDATE t SET k = k + 1 WHERE id BETWEEN {lo} AND {hi}"
                ))
                .unwrap();
                let mut n = 0;
                for (_, r) in m.rows.range_mut(*lo..=*hi) {
                    r.0 += 1;
                    n += 1;
                }
                assert_eq!(c.affected_rows(), n, "{op:?}");
            }
            Op::DeleteK { k } => {
                if prepared {
                    c.exec_drop("DELETE FROM t WHERE k = ?", (k,)).unwrap();
                } else {
                    c.query_drop(format!("DELETE FROM t WHERE k = {k}"))
                        .unwrap();
                }
                let before = m.rows.len();
                m.rows.retain(|_, r| r.0 != *k);
                assert_eq!(c.affected_rows(), (before - m.rows.len()) as u64, "{op:?}");
            }
            Op::DeleteLimit { n } => {
                c.query_drop(format!("DELETE FROM t ORDER BY id DESC LIMIT {n}"))
                    .unwrap();
                let doomed: Vec<i32> = m.rows.keys().rev().take(*n as usize).copied().collect();
                for id in &doomed {
                    m.rows.remove(id);
                }
                assert_eq!(c.affected_rows(), doomed.len() as u64, "{op:?}");
            }
            Op::Point { id } => {
                let got: Vec<Row> = if prepared {
                    c.exec("SELECT id, k, c FROM t WHERE id=?", (id,)).unwrap()
                } else {
                    c.query(format!("SELECT id, k, c FROM t WHERE id={id}"))
                        .unwrap()
                };
                let want: Vec<Row> = m.all().filter(|r| r.0 == *id).collect();
                assert_eq!(got, want, "{op:?}");
            }
            Op::RangeK { lo, hi } => {
                let got: Vec<Row> = if prepared {
                    c.exec(
                        "SELECT id, k, c FROM t WHERE k BETWEEN ? AND ? ORDER BY id",
                        (lo, hi),
                    )
                    .unwrap()
                } else {
                    c.query(format!(
                        "SELECT id, k, c FROM t WHERE k >= {lo} AND k <= {hi} ORDER BY id"
                    ))
                    .unwrap()
                };
                let want: Vec<Row> = m.all().filter(|r| r.1 >= *lo && r.1 <= *hi).collect();
                assert_eq!(got, want, "{op:?}");
            }
            Op::InK { ks } => {
                let list = ks
                    .iter()
                    .map(|k| k.to_string())
                    .collect::<Vec<_>>()
                    .join(",");
                let mut got: Vec<Row> = c
                    .query(format!("SELECT id, k, c FROM t WHERE k IN ({list})"))
                    .unwrap();
                got.sort();
                let want: Vec<Row> = m.all().filter(|r| ks.contains(&r.1)).collect();
                assert_eq!(got, want, "{op:?}");
            }
            Op::TopById { n, desc } => {
                let dir = if *desc { "DESC" } else { "ASC" };
                let got: Vec<i32> = c
                    .query(format!("SELECT id FROM t ORDER BY id {dir} LIMIT {n}"))
                    .unwrap();
                let mut want: Vec<i32> = m.rows.keys().copied().collect();
                if *desc {
                    want.reverse();
                }
                want.truncate(*n as usize);
                assert_eq!(got, want, "{op:?}");
            }
            Op::SumRange { lo, hi } => {
                let got: (i64, Option<String>) = if prepared {
                    c.exec_first(
                        "SELECT COUNT(*), SUM(k) FROM t WHERE id BETWEEN ? AND ?",
                        (lo, hi),
                    )
                    .unwrap()
                    .unwrap()
                } else {
                    c.query_first(format!(
                        "SELECT COUNT(*), SUM(k) FROM t WHERE id BETWEEN {lo} AND {hi}"
                    ))
                    .unwrap()
                    .unwrap()
                };
                let in_range: Vec<i32> = m.rows.range(*lo..=*hi).map(|(_, r)| r.0).collect();
                let sum = (!in_range.is_empty()).then(|| {
                    in_range
                        .iter()
                        .map(|&k| i64::from(k))
                        .sum::<i64>()
                        .to_string()
                });
                assert_eq!(got, (in_range.len() as i64, sum), "{op:?}");
            }
            Op::DistinctC { desc } => {
                let dir = if *desc { "DESC" } else { "ASC" };
                let got: Vec<Option<String>> = c
                    .query(format!("SELECT DISTINCT c FROM t ORDER BY c {dir}"))
                    .unwrap();
                let mut want: Vec<Option<String>> = m.all().map(|r| r.2).collect();
                want.sort();
                want.dedup();
                if *desc {
                    want.reverse();
                }
                assert_eq!(got, want, "{op:?}");
            }
            Op::GroupByK => {
                let got: Vec<(i32, i64, i32)> = c
                    .query("SELECT k, COUNT(*), MAX(id) FROM t GROUP BY k ORDER BY k")
                    .unwrap();
                let mut want: BTreeMap<i32, (i64, i32)> = BTreeMap::new();
                for (id, k, _) in m.all() {
                    let e = want.entry(k).or_insert((0, id));
                    e.0 += 1;
                    e.1 = e.1.max(id);
                }
                let want: Vec<(i32, i64, i32)> =
                    want.into_iter().map(|(k, (n, mx))| (k, n, mx)).collect();
                assert_eq!(got, want, "{op:?}");
            }
        }
    }
    let all: Vec<Row> = c.query("SELECT id, k, c FROM t").unwrap();
    assert_eq!(all, m.all().collect::<Vec<_>>());
}

each_mode! {
    fn random_statements_match_a_btreemap_model(mode) {
        let srv = mode.start(&[]);
        let conn = RefCell::new(srv.connect());
        conn.borrow_mut().query_drop("CREATE DATABASE m").unwrap();
        conn.borrow_mut().query_drop("USE m").unwrap();
        let mut runner = TestRunner::new(ProptestConfig {
            cases: 48,
            ..ProptestConfig::default()
        });
        let strategy = (proptest::collection::vec(op(), 1..60), any::<bool>());
        runner
            .run(&strategy, |(ops, prepared)| {
                run(&mut conn.borrow_mut(), &ops, prepared);
                Ok(())
            })
            .unwrap();
        let inserts: (String, String) = conn
            .borrow_mut()
            .query_first("SHOW GLOBAL STATUS LIKE 'Com_insert'")
            .unwrap()
            .unwrap();
        assert!(inserts.1.parse::<u64>().unwrap() > 100, "{inserts:?}");
    }
}
