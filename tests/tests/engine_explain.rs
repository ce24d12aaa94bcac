//! EXPLAIN telltales on the shared queue fixture (`tests/fixtures/queue.sql`): the plans a
//! DBA looks for when a job-queue claim is slow, in every connection-handling mode.

use mysql::prelude::*;
use mysql::{Conn, Row};
use tpbed_tests::{each_mode, load_queue_fixture, Mode, TestServer};

fn fixture(mode: Mode) -> (TestServer, Conn) {
    let srv = mode.start(&[]);
    let mut c = srv.connect();
    c.query_drop("CREATE DATABASE q").unwrap();
    c.query_drop("USE q").unwrap();
    load_queue_fixture(&mut c);
    for t in ["q_v1", "q_v2"] {
        let rows: Vec<String> = (0..200)
            .map(|i| format!("({}, {}, {})", i % 3, 1000 + i, i % 7))
            .collect();
        c.query_drop(format!(
            "INSERT INTO {t} (status, run_at, priority) VALUES {}",
            rows.join(",")
        ))
        .unwrap();
    }
    (srv, c)
}

#[derive(Debug)]
struct Plan {
    table: String,
    kind: String,
    key: Option<String>,
    rows: u64,
    extra: String,
}

fn explain(c: &mut Conn, sql: &str) -> Vec<Plan> {
    let rows: Vec<Row> = c.query(format!("EXPLAIN {sql}")).unwrap();
    let cols: Vec<String> = rows[0]
        .columns()
        .iter()
        .map(|c| c.name_str().to_string())
        .collect();
    assert_eq!(
        cols,
        [
            "id",
            "select_type",
            "table",
            "partitions",
            "type",
            "possible_keys",
            "key",
            "key_len",
            "ref",
            "rows",
            "filtered",
            "Extra"
        ]
    );
    rows.into_iter()
        .map(|r| Plan {
            table: r.get(2).unwrap(),
            kind: r.get(4).unwrap(),
            key: r.get::<Option<String>, _>(6).unwrap(),
            rows: r.get::<String, _>(9).unwrap().parse().unwrap(),
            extra: r.get::<Option<String>, _>(11).unwrap().unwrap_or_default(),
        })
        .collect()
}

each_mode! {
    fn primary_key_point_and_range(mode) {
        let (_srv, mut c) = fixture(mode);
        let p = &explain(&mut c, "SELECT * FROM q_v1 WHERE id = 5")[0];
        assert_eq!(
            (p.kind.as_str(), p.key.as_deref(), p.rows),
            ("const", Some("PRIMARY"), 1),
            "{p:?}"
        );
        let p = &explain(&mut c, "SELECT * FROM q_v1 WHERE id BETWEEN 10 AND 19")[0];
        assert_eq!(
            (p.kind.as_str(), p.key.as_deref(), p.rows),
            ("range", Some("PRIMARY"), 10),
            "{p:?}"
        );
        assert!(!p.extra.contains("filesort"), "{p:?}");
        let p = &explain(&mut c, "SELECT * FROM q_v1 WHERE id IN (1, 2, 3)")[0];
        assert_eq!((p.kind.as_str(), p.rows), ("range", 3), "{p:?}");
        let p = &explain(&mut c, "SELECT * FROM q_v1 WHERE priority = 3")[0];
        assert_eq!((p.kind.as_str(), p.key.as_deref()), ("ALL", None), "{p:?}");
        assert!(p.extra.contains("Using where"), "{p:?}");
    }
}

each_mode! {
    fn secondary_range_and_covering_index(mode) {
        let (_srv, mut c) = fixture(mode);
        let p = &explain(
            &mut c,
            "SELECT * FROM q_v1 WHERE status = 1 AND run_at > 1100",
        )[0];
        assert_eq!(
            (p.kind.as_str(), p.key.as_deref()),
            ("range", Some("idx_ready")),
            "{p:?}"
        );
        let p = &explain(&mut c, "SELECT id FROM q_v1 WHERE status = 2")[0];
        assert_eq!(
            (p.kind.as_str(), p.key.as_deref()),
            ("ref", Some("idx_ready")),
            "{p:?}"
        );
        assert!(p.extra.contains("Using index"), "{p:?}");
        let p = &explain(&mut c, "SELECT * FROM q_v2 WHERE id = 7")[0];
        assert_eq!(
            (p.kind.as_str(), p.key.as_deref()),
            ("ref", Some("idx_id")),
            "{p:?}"
        );
    }
}

each_mode! {
    fn ready_claim_uses_idx_ready_order_without_filesort(mode) {
        let (_srv, mut c) = fixture(mode);
        let sql = "SELECT id FROM q_v1 WHERE status = 0 ORDER BY run_at, id LIMIT 10";
        let p = &explain(&mut c, sql)[0];
        assert_eq!(p.key.as_deref(), Some("idx_ready"), "{p:?}");
        assert_eq!(p.kind, "ref", "{p:?}");
        assert!(!p.extra.contains("Using filesort"), "{p:?}");
        let ids: Vec<u64> = c.query(sql).unwrap();
        assert_eq!(ids, (0..10).map(|i| 1 + 3 * i).collect::<Vec<u64>>());
        let p = &explain(
            &mut c,
            "SELECT id FROM q_v2 WHERE status = 0 ORDER BY run_at, id LIMIT 10",
        )[0];
        assert_eq!(p.key.as_deref(), Some("PRIMARY"), "{p:?}");
        assert!(!p.extra.contains("Using filesort"), "{p:?}");
        // The claim stops after LIMIT rows.
        c.query_drop("FLUSH STATUS").unwrap();
        let _: Vec<u64> = c.query(sql).unwrap();
        let next: (String, String) = c
            .query_first("SHOW SESSION STATUS LIKE 'Handler_read_next'")
            .unwrap()
            .unwrap();
        assert!(next.1.parse::<u64>().unwrap() <= 10, "{next:?}");
    }
}

each_mode! {
    fn priority_order_needs_a_filesort(mode) {
        let (_srv, mut c) = fixture(mode);
        let sql = "SELECT id FROM q_v1 WHERE status = 0 ORDER BY priority, id LIMIT 10";
        let p = &explain(&mut c, sql)[0];
        assert_eq!(p.key.as_deref(), Some("idx_ready"), "{p:?}");
        assert!(p.extra.contains("Using filesort"), "{p:?}");
        let got: Vec<(u64, i64)> = c
            .query("SELECT id, priority FROM q_v1 WHERE status = 0 ORDER BY priority, id LIMIT 10")
            .unwrap();
        let mut all: Vec<(i64, u64)> = c
            .query::<(u64, i64), _>("SELECT id, priority FROM q_v1 WHERE status = 0")
            .unwrap()
            .into_iter()
            .map(|(i, p)| (p, i))
            .collect();
        all.sort();
        let want: Vec<(u64, i64)> = all.into_iter().take(10).map(|(p, i)| (i, p)).collect();
        assert_eq!(got, want);
        let p = &explain(&mut c, "SELECT status, COUNT(*) FROM q_v1 GROUP BY status")[0];
        assert!(p.extra.contains("Using temporary"), "{p:?}");
        let plans = explain(
            &mut c,
            "SELECT AVG(id) FROM (SELECT * FROM q_v1 FORCE KEY (PRIMARY) LIMIT 5) t",
        );
        assert_eq!(plans[0].table, "<derived2>");
        assert_eq!(plans[1].table, "q_v1");
    }
}
