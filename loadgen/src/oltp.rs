//! The sysbench 1.0 OLTP scripts: table DDL and data for `prepare`, `cleanup`, and each
//! script's per-event statement mix (same statements, same order, same defaults).

use std::collections::VecDeque;
use std::sync::Arc;

use crate::conn::{Param, Reply};
use crate::dist::{Dist, DistParams};
use crate::options::{IgnoreList, OltpArgs, Workload};
use crate::script::{Op, Script, Step};

/// sysbench's template for `c` (10 groups of 11 digits).
pub(crate) const C_TEMPLATE: &str = "###########-###########-###########-###########-###########-###########-###########-###########-###########-###########";
/// sysbench's template for `pad` (5 groups).
pub(crate) const PAD_TEMPLATE: &str = "###########-###########-###########-###########-###########";
/// sysbench's multi-row INSERT cut-off.
pub(crate) const BULK_LIMIT: usize = 512 * 1024;

/// The statement kinds of oltp_common.lua, in the order their texts are defined.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    PointSelect,
    SimpleRange,
    SumRange,
    OrderRange,
    DistinctRange,
    IndexUpdate,
    NonIndexUpdate,
    Delete,
    Insert,
}

impl Kind {
    fn sql(self, table: u32) -> String {
        let t = table;
        match self {
            Kind::PointSelect => format!("SELECT c FROM sbtest{t} WHERE id=?"),
            Kind::SimpleRange => format!("SELECT c FROM sbtest{t} WHERE id BETWEEN ? AND ?"),
            Kind::SumRange => format!("SELECT SUM(k) FROM sbtest{t} WHERE id BETWEEN ? AND ?"),
            Kind::OrderRange => {
                format!("SELECT c FROM sbtest{t} WHERE id BETWEEN ? AND ? ORDER BY c")
            }
            Kind::DistinctRange => {
                format!("SELECT DISTINCT c FROM sbtest{t} WHERE id BETWEEN ? AND ? ORDER BY c")
            }
            Kind::IndexUpdate => format!("UPDATE sbtest{t} SET k=k+1 WHERE id=?"),
            Kind::NonIndexUpdate => format!("UPDATE sbtest{t} SET c=? WHERE id=?"),
            Kind::Delete => format!("DELETE FROM sbtest{t} WHERE id=?"),
            Kind::Insert => format!("INSERT INTO sbtest{t} (id, k, c, pad) VALUES (?, ?, ?, ?)"),
        }
    }
}

/// Everything a script needs, shared by all connections of a run.
#[derive(Debug, Clone)]
pub(crate) struct OltpConfig {
    /// The script.
    pub(crate) workload: Workload,
    /// Its options.
    pub(crate) opt: OltpArgs,
    /// Distribution parameters.
    pub(crate) dist: DistParams,
    /// `--mysql-ignore-errors`.
    pub(crate) ignore: IgnoreList,
    /// `--threads` (select_random_* partition the table by thread).
    pub(crate) threads: usize,
}

/// Which prepared statements a script uses, in sysbench's prepare order:
/// (kind, table) pairs; BEGIN and COMMIT are `None` kinds with table 0.
fn statement_plan(cfg: &OltpConfig) -> Vec<(Option<Kind>, u32, String)> {
    let o = &cfg.opt;
    let mut plan = Vec::new();
    let each = |plan: &mut Vec<(Option<Kind>, u32, String)>, k: Kind| {
        for t in 1..=o.tables {
            plan.push((Some(k), t, k.sql(t)));
        }
    };
    let trx = |plan: &mut Vec<(Option<Kind>, u32, String)>| {
        if !o.skip_trx {
            plan.push((None, 0, "BEGIN".into()));
            plan.push((None, 1, "COMMIT".into()));
        }
    };
    let ranges = |plan: &mut Vec<(Option<Kind>, u32, String)>| {
        if o.range_selects {
            for k in [
                Kind::SimpleRange,
                Kind::SumRange,
                Kind::OrderRange,
                Kind::DistinctRange,
            ] {
                each(plan, k);
            }
        }
    };
    let writes = |plan: &mut Vec<(Option<Kind>, u32, String)>| {
        each(plan, Kind::IndexUpdate);
        each(plan, Kind::NonIndexUpdate);
        each(plan, Kind::Delete);
        each(plan, Kind::Insert);
    };
    match cfg.workload {
        Workload::OltpPointSelect => each(&mut plan, Kind::PointSelect),
        Workload::OltpReadOnly => {
            each(&mut plan, Kind::PointSelect);
            trx(&mut plan);
            ranges(&mut plan);
        }
        Workload::OltpReadWrite => {
            trx(&mut plan);
            each(&mut plan, Kind::PointSelect);
            ranges(&mut plan);
            writes(&mut plan);
        }
        Workload::OltpWriteOnly => {
            trx(&mut plan);
            writes(&mut plan);
        }
        Workload::OltpUpdateIndex => each(&mut plan, Kind::IndexUpdate),
        Workload::OltpUpdateNonIndex => each(&mut plan, Kind::NonIndexUpdate),
        Workload::OltpDelete => each(&mut plan, Kind::Delete),
        Workload::SelectRandomPoints => {
            let marks = vec!["?"; o.random_points.max(1) as usize].join(", ");
            let sql = format!("\n        SELECT id, k, c, pad\n          FROM sbtest1\n          WHERE k IN ({marks})\n        ");
            plan.push((None, 2, sql));
        }
        Workload::SelectRandomRanges => {
            let ranges = vec!["k BETWEEN ? AND ?"; o.number_of_ranges.max(1) as usize].join(" OR ");
            let sql = format!(
                "\n        SELECT count(k)\n          FROM sbtest1\n          WHERE {ranges}"
            );
            plan.push((None, 3, sql));
        }
        Workload::OltpInsert | Workload::BulkInsert => {}
    }
    plan
}

/// Index of (kind, table) in `OltpScript::slots`: table statements by kind, then BEGIN/COMMIT
/// and the select_random_* statements (kind `None`, told apart by `table`).
fn slot_key(kind: Option<Kind>, table: u32, tables: u32) -> usize {
    let per_kind = tables as usize + 1;
    match kind {
        Some(k) => k as usize * per_kind + table as usize,
        None => (Kind::Insert as usize + 1) * per_kind + table as usize,
    }
}

/// One connection's instance of a sysbench script.
#[derive(Debug)]
pub(crate) struct OltpScript {
    cfg: Arc<OltpConfig>,
    dist: Dist,
    conn: usize,
    plan: Vec<(Option<Kind>, u32, String)>,
    /// Plan position by `slot_key(kind, table)` (usize::MAX: not planned).
    slots: Vec<usize>,
    pending: VecDeque<Op>,
    bulk: String,
    bulk_id: u64,
}

impl OltpScript {
    /// The script of connection number `conn`.
    pub(crate) fn new(cfg: Arc<OltpConfig>, conn: usize, seed: u64) -> Self {
        let plan = statement_plan(&cfg);
        let mut slots = Vec::new();
        for (pos, (k, t, _)) in plan.iter().enumerate() {
            let key = slot_key(*k, *t, cfg.opt.tables);
            if slots.len() <= key {
                slots.resize(key + 1, usize::MAX);
            }
            if slots[key] == usize::MAX {
                slots[key] = pos;
            }
        }
        let dist = Dist::new(
            cfg.dist,
            seed ^ (conn as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15),
        );
        OltpScript {
            cfg,
            dist,
            conn,
            plan,
            slots,
            pending: VecDeque::new(),
            bulk: String::new(),
            bulk_id: 0,
        }
    }

    fn slot(&self, kind: Option<Kind>, table: u32) -> usize {
        match self.slots.get(slot_key(kind, table, self.cfg.opt.tables)) {
            Some(&pos) if pos != usize::MAX => pos,
            _ => panic!("statement {kind:?} on table {table} was not planned"),
        }
    }

    fn table(&mut self) -> u32 {
        self.dist.uniform(1, self.cfg.opt.tables.max(1))
    }

    fn id(&mut self) -> i64 {
        i64::from(self.dist.default(1, self.cfg.opt.table_size.max(1)))
    }

    fn push(&mut self, kind: Option<Kind>, table: u32, params: Vec<Param>) {
        let slot = self.slot(kind, table);
        self.pending.push_back(Op::Exec(slot, params));
    }

    fn point_selects(&mut self, n: u32) {
        let t = self.table();
        for _ in 0..n {
            let id = self.id();
            self.push(Some(Kind::PointSelect), t, vec![Param::Int(id)]);
        }
    }

    fn range(&mut self, kind: Kind, n: u32) {
        let t = self.table();
        for _ in 0..n {
            let id = self.id();
            let hi = id + i64::from(self.cfg.opt.range_size) - 1;
            self.push(Some(kind), t, vec![Param::Int(id), Param::Int(hi)]);
        }
    }

    fn writes(&mut self) {
        let cfg = self.cfg.clone();
        let o = &cfg.opt;
        let t = self.table();
        for _ in 0..o.index_updates {
            let id = self.id();
            self.push(Some(Kind::IndexUpdate), t, vec![Param::Int(id)]);
        }
        let t = self.table();
        for _ in 0..o.non_index_updates {
            let c = self.dist.string(C_TEMPLATE);
            let id = self.id();
            self.push(
                Some(Kind::NonIndexUpdate),
                t,
                vec![Param::Str(c), Param::Int(id)],
            );
        }
        let t = self.table();
        for _ in 0..o.delete_inserts {
            let id = self.id();
            let k = self.id();
            let c = self.dist.string(C_TEMPLATE);
            let pad = self.dist.string(PAD_TEMPLATE);
            self.push(Some(Kind::Delete), t, vec![Param::Int(id)]);
            self.push(
                Some(Kind::Insert),
                t,
                vec![
                    Param::Int(id),
                    Param::Int(k),
                    Param::Str(c),
                    Param::Str(pad),
                ],
            );
        }
    }

    fn ranges(&mut self) {
        let cfg = self.cfg.clone();
        let o = &cfg.opt;
        if o.range_selects {
            self.range(Kind::SimpleRange, o.simple_ranges);
            self.range(Kind::SumRange, o.sum_ranges);
            self.range(Kind::OrderRange, o.order_ranges);
            self.range(Kind::DistinctRange, o.distinct_ranges);
        }
    }

    fn partition(&self) -> (u32, u32) {
        let threads = self.cfg.threads.max(1) as u32;
        let len = self.cfg.opt.table_size / threads;
        let lo = len * (self.conn as u32 % threads);
        (lo, lo + len)
    }

    fn bulk_flush(&mut self) -> Option<String> {
        if self.bulk.is_empty() {
            return None;
        }
        Some(std::mem::take(&mut self.bulk))
    }
}

impl Script for OltpScript {
    fn prepares(&self) -> Vec<String> {
        self.plan.iter().map(|(_, _, sql)| sql.clone()).collect()
    }

    fn begin_event(&mut self) {
        self.pending.clear();
        let cfg = self.cfg.clone();
        let o = &cfg.opt;
        let trx = !o.skip_trx;
        match self.cfg.workload {
            Workload::OltpPointSelect => self.point_selects(1),
            Workload::OltpReadOnly => {
                if trx {
                    self.push(None, 0, vec![]);
                }
                self.point_selects(o.point_selects);
                self.ranges();
                if trx {
                    self.push(None, 1, vec![]);
                }
            }
            Workload::OltpReadWrite | Workload::OltpWriteOnly => {
                if trx {
                    self.push(None, 0, vec![]);
                }
                if self.cfg.workload == Workload::OltpReadWrite {
                    self.point_selects(o.point_selects);
                    self.ranges();
                }
                self.writes();
                if trx {
                    self.push(None, 1, vec![]);
                }
            }
            Workload::OltpUpdateIndex => {
                let t = self.table();
                for _ in 0..o.index_updates {
                    let id = self.id();
                    self.push(Some(Kind::IndexUpdate), t, vec![Param::Int(id)]);
                }
            }
            Workload::OltpUpdateNonIndex => {
                let t = self.table();
                for _ in 0..o.non_index_updates {
                    let c = self.dist.string(C_TEMPLATE);
                    let id = self.id();
                    self.push(
                        Some(Kind::NonIndexUpdate),
                        t,
                        vec![Param::Str(c), Param::Int(id)],
                    );
                }
            }
            Workload::OltpDelete => {
                let t = self.table();
                let id = self.id();
                self.push(Some(Kind::Delete), t, vec![Param::Int(id)]);
            }
            Workload::OltpInsert => {
                let t = self.table();
                let k = self.id();
                let c = self.dist.string(C_TEMPLATE);
                let pad = self.dist.string(PAD_TEMPLATE);
                let id = if o.auto_inc {
                    0
                } else {
                    i64::from(self.dist.next_u64() as u32) - 2_147_483_648
                };
                self.pending.push_back(Op::Query(format!(
                    "INSERT INTO sbtest{t} (id, k, c, pad) VALUES ({id}, {k}, '{c}', '{pad}')"
                )));
            }
            Workload::SelectRandomPoints => {
                let (lo, hi) = self.partition();
                let params = (0..o.random_points.max(1))
                    .map(|_| Param::Int(i64::from(self.dist.default(lo, hi))))
                    .collect();
                self.push(None, 2, params);
            }
            Workload::SelectRandomRanges => {
                let (lo, hi) = self.partition();
                let mut params = Vec::new();
                for _ in 0..o.number_of_ranges.max(1) {
                    let v = i64::from(self.dist.default(lo, hi));
                    params.push(Param::Int(v));
                    params.push(Param::Int(v + i64::from(o.delta)));
                }
                self.push(None, 3, params);
            }
            Workload::BulkInsert => {
                self.bulk_id += 1;
                let row = format!("({0},{0})", self.bulk_id);
                if self.bulk.is_empty() {
                    self.bulk = format!("INSERT INTO sbtest{} VALUES", self.conn + 1);
                } else if self.bulk.len() + row.len() + 1 > BULK_LIMIT {
                    let full = std::mem::replace(
                        &mut self.bulk,
                        format!("INSERT INTO sbtest{} VALUES", self.conn + 1),
                    );
                    self.pending.push_back(Op::Query(full));
                    self.bulk.push_str(&row);
                    return;
                } else {
                    self.bulk.push(',');
                }
                self.bulk.push_str(&row);
            }
        }
    }

    fn next(&mut self, last: Option<&Reply>) -> Step {
        if let Some(Reply::Error { code, message }) = last {
            return if self.cfg.ignore.contains(*code) {
                Step::Restart
            } else {
                Step::Fatal(format!("error {code}: {message}"))
            };
        }
        match self.pending.pop_front() {
            Some(op) => Step::Send(op),
            None => Step::EndEvent,
        }
    }

    fn finish(&mut self) -> Vec<String> {
        self.bulk_flush().into_iter().collect()
    }
}

/// `CREATE TABLE` for sbtest`n`, byte for byte as sysbench sends it.
pub(crate) fn create_table_sql(o: &OltpArgs, n: u32) -> String {
    let id = if o.auto_inc {
        "INTEGER NOT NULL AUTO_INCREMENT"
    } else {
        "INTEGER NOT NULL"
    };
    let key = if o.secondary {
        "KEY xid"
    } else {
        "PRIMARY KEY"
    };
    format!(
        "CREATE TABLE sbtest{n}(\n  id {id},\n  k INTEGER DEFAULT '0' NOT NULL,\n  c CHAR(120) DEFAULT '' NOT NULL,\n  pad CHAR(60) DEFAULT '' NOT NULL,\n  {key} (id)\n) /*! ENGINE = {} */ ",
        o.storage_engine
    )
}

/// The multi-row INSERTs that fill sbtest`n` with `rows` rows (cut at 512 KiB like sysbench).
#[cfg(test)]
pub(crate) fn fill_table_sql(o: &OltpArgs, n: u32, rows: u32, dist: &mut Dist) -> Vec<String> {
    let mut out = Vec::new();
    let collect = |sql: &str| {
        out.push(sql.to_string());
        Ok(())
    };
    let _ = fill_rows_sql(o, n, 1..rows.saturating_add(1), dist, collect);
    out
}

/// Hands `send` the multi-row INSERTs for rows `rows` (1-based row numbers, the `id` when
/// `--auto_inc=off`) of sbtest`n`, one statement at a time (cut at 512 KiB like sysbench),
/// so a large table is never held in memory whole; stops at `send`'s first error.
pub(crate) fn fill_rows_sql(
    o: &OltpArgs,
    n: u32,
    rows: std::ops::Range<u32>,
    dist: &mut Dist,
    mut send: impl FnMut(&str) -> Result<(), String>,
) -> Result<(), String> {
    let head = if o.auto_inc {
        format!("INSERT INTO sbtest{n}(k, c, pad) VALUES")
    } else {
        format!("INSERT INTO sbtest{n}(id, k, c, pad) VALUES")
    };
    let mut cur = String::with_capacity(BULK_LIMIT);
    for i in rows {
        let k = dist.default(1, o.table_size.max(1));
        let c = dist.string(C_TEMPLATE);
        let pad = dist.string(PAD_TEMPLATE);
        let row = if o.auto_inc {
            format!("({k}, '{c}', '{pad}')")
        } else {
            format!("({i}, {k}, '{c}', '{pad}')")
        };
        if !cur.is_empty() && cur.len() + row.len() + 1 > BULK_LIMIT {
            send(&cur)?;
            cur.clear();
        }
        if cur.is_empty() {
            cur.push_str(&head);
        } else {
            cur.push(',');
        }
        cur.push_str(&row);
    }
    if !cur.is_empty() {
        send(&cur)?;
    }
    Ok(())
}

/// How many rows `prepare` puts in each table.
pub(crate) fn prepare_rows(cfg: &OltpConfig) -> u32 {
    let none = cfg.workload == Workload::BulkInsert
        || (cfg.workload == Workload::OltpInsert && !cfg.opt.auto_inc);
    if none {
        0
    } else {
        cfg.opt.table_size
    }
}

/// The statement `prepare` ends table `n` with: its secondary index, if any.
pub(crate) fn index_sql(cfg: &OltpConfig, n: u32) -> Option<String> {
    (cfg.workload != Workload::BulkInsert && cfg.opt.create_secondary)
        .then(|| format!("CREATE INDEX k_{n} ON sbtest{n}(k)"))
}

/// `CREATE TABLE` for table `n` of the workload (bulk_insert has its own shape).
pub(crate) fn prepare_create_sql(cfg: &OltpConfig, n: u32) -> String {
    if cfg.workload == Workload::BulkInsert {
        return format!(
            "CREATE TABLE IF NOT EXISTS sbtest{n} (\n          id INTEGER NOT NULL,\n          k INTEGER DEFAULT '0' NOT NULL,\n          PRIMARY KEY (id))"
        );
    }
    create_table_sql(&cfg.opt, n)
}

/// Every statement `prepare` sends for table `n` (DDL, data, secondary index).
#[cfg(test)]
pub(crate) fn prepare_table_sql(cfg: &OltpConfig, n: u32, dist: &mut Dist) -> Vec<String> {
    let mut v = vec![prepare_create_sql(cfg, n)];
    v.extend(fill_table_sql(&cfg.opt, n, prepare_rows(cfg), dist));
    v.extend(index_sql(cfg, n));
    v
}

/// How many tables `prepare`/`cleanup` handle (bulk_insert: one per thread).
pub(crate) fn table_count(cfg: &OltpConfig) -> Result<u32, String> {
    match cfg.workload {
        Workload::BulkInsert => Ok(cfg.threads as u32),
        Workload::SelectRandomPoints | Workload::SelectRandomRanges if cfg.opt.tables != 1 => Err(
            format!("{} does not support --tables > 1", cfg.workload.name()),
        ),
        _ => Ok(cfg.opt.tables),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cli::{Cli, Command};
    use clap::Parser;

    fn cfg(workload: &str, extra: &[&str]) -> OltpConfig {
        let mut args = vec!["tpbed-load", "run", "--workload", workload, "--tables=4"];
        args.extend_from_slice(extra);
        let Command::Run(a) = Cli::try_parse_from(args).unwrap().command else {
            unreachable!()
        };
        OltpConfig {
            workload: a.workload,
            opt: a.oltp,
            dist: a.rand.params(),
            ignore: a.conn.ignore_errors,
            threads: 8,
        }
    }

    /// Runs one event, answering every statement with OK; returns the SQL of each statement.
    fn one_event(c: &OltpConfig) -> Vec<String> {
        let mut s = OltpScript::new(Arc::new(c.clone()), 3, 11);
        let sqls = s.prepares();
        s.begin_event();
        let mut out = Vec::new();
        let mut last = None;
        loop {
            match s.next(last.as_ref()) {
                Step::Send(Op::Query(q)) => out.push(q),
                Step::Send(Op::Exec(slot, params)) => {
                    assert_eq!(
                        sqls[slot].matches('?').count(),
                        params.len(),
                        "{}",
                        sqls[slot]
                    );
                    out.push(sqls[slot].clone());
                }
                Step::EndEvent => return out,
                other => panic!("unexpected {other:?}"),
            }
            last = Some(Reply::Ok {
                affected: 1,
                last_insert_id: 0,
            });
        }
    }

    fn count(stmts: &[String], prefix: &str) -> usize {
        stmts
            .iter()
            .filter(|s| s.trim_start().starts_with(prefix))
            .count()
    }

    #[test]
    fn statements_per_event_match_sysbench_defaults() {
        let cases: [(&str, usize); 10] = [
            ("oltp_point_select", 1),
            ("oltp_read_only", 16),
            ("oltp_read_write", 20),
            ("oltp_write_only", 6),
            ("oltp_update_index", 1),
            ("oltp_update_non_index", 1),
            ("oltp_delete", 1),
            ("oltp_insert", 1),
            ("select_random_points", 1),
            ("select_random_ranges", 1),
        ];
        for (w, n) in cases {
            let extra: &[&str] = if w.starts_with("select_random") {
                &["--tables=1"]
            } else {
                &[]
            };
            let ev = one_event(&cfg(w, extra));
            assert_eq!(ev.len(), n, "{w}: {ev:#?}");
        }
        let ro = one_event(&cfg("oltp_read_only", &[]));
        assert_eq!(ro.first().map(String::as_str), Some("BEGIN"));
        assert_eq!(ro.last().map(String::as_str), Some("COMMIT"));
        assert_eq!(ro.iter().filter(|s| s.contains("WHERE id=?")).count(), 10);
        assert_eq!(ro.iter().filter(|s| s.contains("BETWEEN")).count(), 4);
        let rw = one_event(&cfg("oltp_read_write", &[]));
        assert_eq!(
            (
                count(&rw, "UPDATE"),
                count(&rw, "DELETE"),
                count(&rw, "INSERT")
            ),
            (2, 1, 1)
        );
        let ins = one_event(&cfg("oltp_insert", &[]));
        assert!(
            ins[0].starts_with("INSERT INTO sbtest") && ins[0].contains("VALUES (0, "),
            "{}",
            ins[0]
        );
    }

    #[test]
    fn options_change_the_mix() {
        assert_eq!(
            one_event(&cfg("oltp_read_only", &["--skip-trx=on"])).len(),
            14
        );
        assert_eq!(
            one_event(&cfg("oltp_read_only", &["--range-selects=off"])).len(),
            12
        );
        assert_eq!(
            one_event(&cfg(
                "oltp_read_only",
                &["--point-selects=3", "--sum-ranges=2"]
            ))
            .len(),
            10
        );
        assert_eq!(
            one_event(&cfg("oltp_write_only", &["--delete-inserts=3"])).len(),
            10
        );
        // oltp_point_select ignores --point-selects, as sysbench does
        assert_eq!(
            one_event(&cfg("oltp_point_select", &["--point-selects=5"])).len(),
            1
        );
    }

    #[test]
    fn prepared_statement_counts_match_the_capture() {
        let n = |w: &str| {
            OltpScript::new(Arc::new(cfg(w, &[])), 0, 1)
                .prepares()
                .len()
        };
        assert_eq!(n("oltp_point_select"), 4);
        assert_eq!(n("oltp_read_only"), 22);
        assert_eq!(n("oltp_insert"), 0);
    }

    #[test]
    fn ranges_and_ids_stay_in_the_table() {
        let c = cfg(
            "oltp_read_only",
            &["--table-size=1000", "--rand-type=uniform"],
        );
        let mut s = OltpScript::new(Arc::new(c), 0, 5);
        for _ in 0..200 {
            s.begin_event();
            while let Step::Send(op) = s.next(Some(&Reply::Ok {
                affected: 0,
                last_insert_id: 0,
            })) {
                if let Op::Exec(_, p) = op {
                    if let [Param::Int(lo), Param::Int(hi)] = p[..] {
                        assert_eq!(hi - lo, 99);
                        assert!((1..=1000).contains(&lo));
                    }
                }
            }
        }
    }

    #[test]
    fn ignored_errors_restart_and_others_are_fatal() {
        let mut s = OltpScript::new(Arc::new(cfg("oltp_read_write", &[])), 0, 5);
        s.begin_event();
        let deadlock = Reply::Error {
            code: 1213,
            message: "Deadlock".into(),
        };
        assert_eq!(s.next(Some(&deadlock)), Step::Restart);
        let dup = Reply::Error {
            code: 1062,
            message: "Duplicate".into(),
        };
        assert!(matches!(s.next(Some(&dup)), Step::Fatal(_)));
    }

    #[test]
    fn prepare_sql_is_sysbench_shaped() {
        let c = cfg("oltp_read_only", &["--table-size=3000"]);
        let mut d = Dist::new(c.dist, 1);
        let v = prepare_table_sql(&c, 2, &mut d);
        assert!(v[0].starts_with("CREATE TABLE sbtest2(\n  id INTEGER NOT NULL AUTO_INCREMENT,"));
        assert!(v[0].ends_with(") /*! ENGINE = innodb */ "));
        assert!(v[1].starts_with("INSERT INTO sbtest2(k, c, pad) VALUES("));
        assert!(v[1..v.len() - 1].iter().all(|s| s.len() <= BULK_LIMIT));
        let rows: usize = v[1..v.len() - 1]
            .iter()
            .map(|s| s.matches("'),(").count() + 1)
            .sum();
        assert_eq!(rows, 3000);
        assert_eq!(v.last().unwrap(), "CREATE INDEX k_2 ON sbtest2(k)");
        // c is 119 characters, pad 59
        assert_eq!(C_TEMPLATE.len(), 119);
        assert_eq!(PAD_TEMPLATE.len(), 59);
    }

    #[test]
    fn bulk_insert_batches_rows() {
        let c = cfg("bulk_insert", &[]);
        let mut s = OltpScript::new(Arc::new(c), 0, 5);
        let mut flushed = Vec::new();
        for _ in 0..60_000 {
            s.begin_event();
            while let Step::Send(Op::Query(q)) = s.next(None) {
                flushed.push(q);
            }
        }
        flushed.extend(s.finish());
        assert!(flushed.len() >= 2);
        assert!(flushed
            .iter()
            .all(|q| q.starts_with("INSERT INTO sbtest1 VALUES(1,1)")
                || q.starts_with("INSERT INTO sbtest1 VALUES(")));
        let rows: usize = flushed.iter().map(|q| q.matches("),(").count() + 1).sum();
        assert_eq!(rows, 60_000);
    }
}
