//! Executing a planned SELECT: a nested loop over the sources (each base table read through
//! its access path, from the statement's consistent-read view or, for a locking read, with
//! row locks on the latest versions; derived and virtual tables materialised first),
//! conditions evaluated at the level the plan placed them (WHERE conditions on a LEFT-joined
//! table once every source has a row), then aggregation, DISTINCT, sort and LIMIT. With no
//! sort, grouping or DISTINCT the loop stops as soon as LIMIT rows are out.

use std::cell::{Cell, OnceCell, RefCell};
use std::cmp::Ordering;
use std::ops::Bound;

use foldhash::{HashMap, HashMapExt, HashSet, HashSetExt};

use crate::context::Context;
use crate::engine::key::{self, KeyColumn};
use crate::engine::lock::WaitPolicy;
use crate::engine::{Direction, HandlerStats, KeyRange, ReadView, Table};
use crate::error::lock_error;
use crate::error::{ErrorCode, SqlError, SqlResult};
use crate::exec::access::{covering, Access, AccessType};
use crate::exec::aggregate::Acc;
use crate::exec::query::{Query, Source, SourceKind};
use crate::sql::env::{StmtEnv, SubqueryRunner};
use crate::sql::eval::{compare, eval, to_i64, truth};
use crate::sql::expr::{BoundExpr, SubqueryRef};
use crate::sql::output::{column_for, fit_datetime_decimals, ResultSet};
use crate::trx::{LockingScan, ScanLockMode, ScanOptions};
use crate::value::Value;
use crate::vars::Counter;

/// Handler-level counters of one statement, added to the session's status at the end.
#[derive(Debug, Default)]
pub struct Counters {
    /// Handler_read_key.
    pub read_key: Cell<u64>,
    /// Handler_read_first.
    pub read_first: Cell<u64>,
    /// Handler_read_next.
    pub read_next: Cell<u64>,
    /// Handler_read_prev.
    pub read_prev: Cell<u64>,
    /// Handler_read_rnd_next.
    pub read_rnd_next: Cell<u64>,
    /// Innodb_rows_read: rows the engine returned.
    pub rows_read: Cell<u64>,
}

fn bump(c: &Cell<u64>, n: u64) {
    c.set(c.get() + n);
}

/// The execution context of one statement.
#[derive(Debug)]
pub struct Exec<'a> {
    /// The session.
    pub st: &'a Context,
    /// Parameter values.
    pub params: &'a [Value],
    /// Statement start (NOW()).
    pub now: i64,
    /// Counters.
    pub counters: Counters,
    /// Base-table reads lock rows this way (None: consistent reads).
    pub lock: Option<ReadLock>,
    /// The consistent-read view and the reader's transaction id (None: read the latest
    /// versions, READ UNCOMMITTED), fetched at the first consistent read.
    view: OnceCell<Option<(ReadView, u64)>>,
    /// Values of the uncorrelated scalar subqueries run so far, by plan address: MySQL
    /// evaluates such a subquery once per statement.
    scalars: RefCell<HashMap<usize, Value>>,
}

/// Most records a consistent (non-locking) scan reads per latch hold: each refill reads twice
/// as many as the one before, from one, up to this (InnoDB keeps a prefetch cache of rows for
/// plain SELECTs for the same reason: one latch and cursor restore per batch, not per row).
const READ_AHEAD_ROWS: usize = 64;

/// How a statement's base-table reads lock.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ReadLock {
    /// S or X.
    pub mode: ScanLockMode,
    /// Wait, NOWAIT or SKIP LOCKED.
    pub policy: WaitPolicy,
    /// UPDATE: semi-consistent reads under READ COMMITTED.
    pub update: bool,
}

/// What a row sink says after a row.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Flow {
    /// The row matched; go on.
    Next,
    /// The row did not match its conditions (READ COMMITTED unlocks it); go on.
    Rejected,
    /// Stop reading.
    Stop,
}

/// A key bound after evaluation: None when its value was NULL (nothing matches), Some(None)
/// when it could not be used exactly (the scan goes unbounded on that side).
type EvaluatedBound = Option<Option<(Vec<u8>, bool)>>;

/// Called for every row a base-table read produces, with the row's clustered key; false
/// stops the read.
pub type RowSink<'s> = dyn FnMut(&mut Vec<Value>, &[u8]) -> SqlResult<Flow> + 's;

/// Ranges of one scan, with whether every key value was usable as is.
#[derive(Debug)]
pub struct Ranges {
    /// Key ranges in scan order (empty: nothing matches).
    pub ranges: Vec<KeyRange>,
    /// All key values converted exactly, so the consumed conditions hold for every row.
    pub exact: bool,
    /// The ranges may overlap: drop repeated rows.
    pub dedupe: bool,
    /// Each range is a full unique key: at most one row each.
    pub point: bool,
}

impl<'a> Exec<'a> {
    /// A context for a statement of `st` with `params`.
    pub fn new(st: &'a Context, params: &'a [Value]) -> Exec<'a> {
        Exec {
            st,
            params,
            now: crate::time::now_micros(),
            counters: Counters::default(),
            lock: None,
            view: OnceCell::new(),
            scalars: RefCell::new(HashMap::new()),
        }
    }

    /// The statement's consistent-read view (made at the transaction's first consistent read
    /// under REPEATABLE READ, per statement under READ COMMITTED).
    fn read_view(&self) -> Option<&(ReadView, u64)> {
        self.view
            .get_or_init(|| {
                let mut t = self.st.trx.borrow_mut();
                let trx = t.as_mut()?;
                if trx.isolation == crate::trx::Isolation::ReadUncommitted {
                    return None;
                }
                let me = trx.id();
                Some((self.st.core.trx.view(trx).clone(), me))
            })
            .as_ref()
    }

    /// The evaluation environment over `row`.
    pub fn env<'b>(&'b self, row: &'b [Value]) -> StmtEnv<'b> {
        StmtEnv {
            st: self.st,
            params: self.params,
            row,
            now: self.now,
            subqueries: Some(self),
        }
    }

    /// Evaluates `e` over `row`.
    pub fn eval(&self, e: &BoundExpr, row: &[Value]) -> SqlResult<Value> {
        eval(e, &self.env(row))
    }

    /// Whether a condition holds over `row` (absent conditions hold). A KILL QUERY that
    /// arrived meanwhile (say during a `SLEEP()` in the condition) ends the statement with
    /// 1317, as mysqld's row loop does.
    pub fn holds(&self, e: Option<&BoundExpr>, row: &[Value]) -> SqlResult<bool> {
        match e {
            None => Ok(true),
            Some(e) => {
                let env = self.env(row);
                let t = truth(&eval(e, &env)?) == Some(true);
                self.interrupted()?;
                Ok(t)
            }
        }
    }

    /// Fails with 1317 when a KILL QUERY arrived while a row was being evaluated (say during a
    /// `SLEEP()` in a select item), as mysqld's row loop does.
    fn interrupted(&self) -> SqlResult<()> {
        let killed = self
            .st
            .conn
            .killed
            .load(std::sync::atomic::Ordering::Relaxed);
        if killed != crate::connections::KILL_NONE {
            return Err(SqlError::new(
                ErrorCode::QueryInterrupted,
                "Query execution was interrupted",
            ));
        }
        Ok(())
    }

    /// Adds the counters to the session's status.
    pub fn flush(&self) {
        let c = &self.st.conn.counters;
        let n = &self.counters;
        for (counter, cell) in [
            (Counter::HandlerReadKey, &n.read_key),
            (Counter::HandlerReadFirst, &n.read_first),
            (Counter::HandlerReadNext, &n.read_next),
            (Counter::HandlerReadPrev, &n.read_prev),
            (Counter::HandlerReadRndNext, &n.read_rnd_next),
            (Counter::InnodbRowsRead, &n.rows_read),
        ] {
            if cell.get() > 0 {
                c.add(counter, cell.get());
            }
        }
    }

    /// Evaluates an access path's key ranges over the current combined row.
    pub fn ranges(&self, t: &Table, access: &Access, row: &[Value]) -> SqlResult<Ranges> {
        let cols: &[KeyColumn] = t.key_columns(access.index);
        let unique_len = {
            let ix = &t.def().indexes()[access.index];
            ix.is_unique().then_some(ix.columns.len())
        };
        let mut out = Ranges {
            ranges: Vec::with_capacity(access.specs.len().max(1)),
            exact: true,
            dedupe: false,
            point: true,
        };
        if access.specs.is_empty() {
            out.ranges.push(KeyRange::all());
            out.point = false;
            return Ok(out);
        }
        let env = self.env(row);
        'spec: for spec in &access.specs {
            let mut prefix = Vec::with_capacity(16);
            for (i, e) in spec.eq.iter().enumerate() {
                let v = eval(e, &env)?;
                if v.is_null() {
                    continue 'spec; // col = NULL matches nothing
                }
                match exact_key(cols[i], v) {
                    Some(k) => key::encode(cols[i], &k, &mut prefix),
                    None => return Ok(full_scan(out)),
                }
            }
            let n = spec.eq.len();
            let bound = |b: &Option<(BoundExpr, bool)>| -> SqlResult<EvaluatedBound> {
                let Some((e, incl)) = b else {
                    return Ok(Some(None));
                };
                let v = eval(e, &env)?;
                if v.is_null() {
                    return Ok(None);
                }
                Ok(Some(exact_key(cols[n], v).map(|k| {
                    let mut p = prefix.clone();
                    key::encode(cols[n], &k, &mut p);
                    (p, *incl)
                })))
            };
            let (Some(lo), Some(hi)) = (bound(&spec.lower)?, bound(&spec.upper)?) else {
                continue; // a bound of NULL: nothing compares true
            };
            let has_range = spec.lower.is_some() || spec.upper.is_some();
            if has_range
                && (lo.is_none() && spec.lower.is_some() || hi.is_none() && spec.upper.is_some())
            {
                out.exact = false;
            }
            let edge = |b: Option<(Vec<u8>, bool)>, prefix: &mut Vec<u8>, last: bool| match b {
                Some((k, true)) => Bound::Included(k),
                Some((k, false)) => Bound::Excluded(k),
                None if prefix.is_empty() => Bound::Unbounded,
                None if last => Bound::Included(std::mem::take(prefix)),
                None => Bound::Included(prefix.clone()),
            };
            out.point &= !has_range && unique_len == Some(n);
            let lower = edge(lo, &mut prefix, false);
            let upper = edge(hi, &mut prefix, true);
            out.ranges.push(KeyRange { lower, upper });
        }
        if out.ranges.len() > 1 {
            if out.ranges.iter().all(|r| r.lower == r.upper) {
                out.ranges
                    .sort_by(|a, b| bound_key(&a.lower).cmp(bound_key(&b.lower)));
                out.ranges.dedup();
            } else {
                out.dedupe = true;
            }
            if access.reverse {
                out.ranges.reverse();
            }
        }
        Ok(out)
    }

    /// Runs a query; returns its result rows (one value per select item).
    pub fn query(&self, q: &Query) -> SqlResult<Vec<Vec<Value>>> {
        self.query_in(q, &[])
    }

    /// Runs a query nested in another whose current row is `outer` (a correlated subquery
    /// reads the first `q.outer_width` columns of its row from there).
    pub fn query_in(&self, q: &Query, outer: &[Value]) -> SqlResult<Vec<Vec<Value>>> {
        let limit = match &q.limit {
            Some(l) => to_i64(&self.eval(l, &[])?).unwrap_or(0).max(0) as u64,
            None => u64::MAX,
        };
        let offset = match &q.offset {
            Some(o) => to_i64(&self.eval(o, &[])?).unwrap_or(0).max(0) as u64,
            None => 0,
        };
        let all_base = q
            .sources
            .iter()
            .all(|s| matches!(s.kind, SourceKind::Base { .. }));
        let materialized: Vec<Option<Vec<Vec<Value>>>> = if all_base {
            Vec::new()
        } else {
            q.sources
                .iter()
                .map(|s| match &s.kind {
                    SourceKind::Derived(inner) => self.query(inner).map(Some),
                    SourceKind::Virtual(v) => Ok(Some(crate::privileges::visibility::rows(
                        self.st, &s.db, *v,
                    ))),
                    SourceKind::Base { .. } => Ok(None),
                })
                .collect::<SqlResult<_>>()?
        };
        let early = q.agg.is_none() && !q.distinct && !q.sort;
        let want = offset.saturating_add(limit);
        let sorting = q.sort || (q.agg.is_some() && !q.order.is_empty());
        // ORDER BY keys that are not select items are evaluated per row; the rest are read
        // from the items when sorting.
        let keyed = sorting && q.order_items.iter().any(Option::is_none);
        // Result rows, and their ORDER BY keys when sorting.
        let mut out: Vec<Vec<Value>> = Vec::new();
        let mut keys: Vec<Vec<Value>> = Vec::new();
        let mut groups: HashMap<Vec<u8>, usize> = HashMap::new();
        let mut accs: Vec<Vec<Acc>> = Vec::new();
        let mut keybuf = Vec::new();
        let mut row: Vec<Value> = std::iter::repeat_with(|| Value::Null)
            .take(q.width)
            .collect();
        let n = q.outer_width.min(outer.len());
        row[..n].clone_from_slice(&outer[..n]);
        if limit > 0 || q.agg.is_some() {
            let mut sink = |row: &mut [Value]| -> SqlResult<bool> {
                if !self.holds(q.post_filter.as_ref(), row)? {
                    return Ok(true);
                }
                match &q.agg {
                    None => {
                        if !self.holds(q.having.as_ref(), row)? {
                            return Ok(true);
                        }
                        if keyed {
                            let mut k = Vec::with_capacity(q.order.len());
                            for (j, (e, _)) in q.order.iter().enumerate() {
                                k.push(match q.order_items[j] {
                                    Some(_) => Value::Null, // read from the item
                                    None => self.eval(e, row)?,
                                });
                            }
                            keys.push(k);
                        }
                        let mut items = Vec::with_capacity(q.items.len());
                        for (e, &mv) in q.items.iter().zip(&q.movable) {
                            items.push(match e {
                                BoundExpr::Column(i) if mv => {
                                    std::mem::replace(&mut row[*i], Value::Null)
                                }
                                e => self.eval(e, row)?,
                            });
                        }
                        self.interrupted()?;
                        out.push(items);
                        Ok(!(early && out.len() as u64 >= want))
                    }
                    Some(a) => {
                        let n = accs.len();
                        let i = if a.group_by.is_empty() {
                            0 // one group: no key to look up
                        } else {
                            keybuf.clear();
                            for g in &a.group_by {
                                group_key(&self.eval(g, row)?, &mut keybuf);
                            }
                            match groups.get(&keybuf) {
                                Some(&i) => i,
                                None => {
                                    groups.insert(keybuf.clone(), n);
                                    n
                                }
                            }
                        };
                        if i == n {
                            accs.push(vec![Acc::new(); a.slots.len()]);
                        }
                        for (slot, acc) in a.slots.iter().zip(accs[i].iter_mut()) {
                            let v = match &slot.arg {
                                Some(e) => self.eval(e, row)?,
                                None => Value::Int(1),
                            };
                            acc.add(slot, v);
                        }
                        Ok(true)
                    }
                }
            };
            self.level(q, 0, &materialized, &mut row, &mut sink)?;
        }
        if let Some(a) = &q.agg {
            if accs.is_empty() && a.group_by.is_empty() {
                accs.push(vec![Acc::new(); a.slots.len()]);
            }
            for g in &accs {
                let slot_row: Vec<Value> = a
                    .slots
                    .iter()
                    .zip(g)
                    .map(|(s, acc)| acc.finish(s))
                    .collect();
                if !self.holds(q.having.as_ref(), &slot_row)? {
                    continue;
                }
                let items = q
                    .items
                    .iter()
                    .map(|e| self.eval(e, &slot_row))
                    .collect::<SqlResult<Vec<_>>>()?;
                if keyed {
                    let mut k = Vec::with_capacity(q.order.len());
                    for (j, (e, _)) in q.order.iter().enumerate() {
                        k.push(match q.order_items[j] {
                            Some(_) => Value::Null,
                            None => self.eval(e, &slot_row)?,
                        });
                    }
                    keys.push(k);
                }
                out.push(items);
            }
        }
        if !q.distinct && !sorting && offset == 0 {
            out.truncate(limit.min(out.len() as u64) as usize);
            return Ok(out);
        }
        Ok(finish(q, out, &keys, sorting, offset, limit))
    }

    fn level(
        &self,
        q: &Query,
        k: usize,
        materialized: &[Option<Vec<Vec<Value>>>],
        row: &mut Vec<Value>,
        sink: &mut dyn FnMut(&mut [Value]) -> SqlResult<bool>,
    ) -> SqlResult<bool> {
        crate::sql::stack::check()?;
        let Some(src) = q.sources.get(k) else {
            return sink(row);
        };
        let mut matched = false;
        let mut go_on = true;
        match &src.kind {
            SourceKind::Base { table, access } => {
                let r = self.ranges(table, access, row)?;
                let filter = if r.exact {
                    src.filter.as_ref()
                } else {
                    src.full_filter.as_ref()
                };
                let mut each = |row: &mut Vec<Value>, _pk: &[u8]| -> SqlResult<Flow> {
                    if !self.holds(filter, row)? {
                        return Ok(Flow::Rejected);
                    }
                    matched = true;
                    Ok(if self.level(q, k + 1, materialized, row, sink)? {
                        Flow::Next
                    } else {
                        Flow::Stop
                    })
                };
                go_on = self.read_base(table, access, src, &r, row, &mut each)?;
            }
            SourceKind::Derived(_) | SourceKind::Virtual(_) => {
                let rows = materialized
                    .get(k)
                    .and_then(|m| m.as_deref())
                    .unwrap_or(&[]);
                for r in rows {
                    row[src.offset..src.offset + src.width].clone_from_slice(&r[..src.width]);
                    if !self.holds(src.full_filter.as_ref(), row)? {
                        continue;
                    }
                    matched = true;
                    if !self.level(q, k + 1, materialized, row, sink)? {
                        go_on = false;
                        break;
                    }
                }
            }
        }
        if go_on && !matched && src.left_join {
            for v in &mut row[src.offset..src.offset + src.width] {
                *v = Value::Null;
            }
            return self.level(q, k + 1, materialized, row, sink);
        }
        Ok(go_on)
    }

    /// Reads the rows of a base table for the ranges `r`, writing the needed columns into
    /// `row` and calling `each`; stops when `each` says so.
    pub fn read_base(
        &self,
        table: &Table,
        access: &Access,
        src: &Source,
        r: &Ranges,
        row: &mut Vec<Value>,
        each: &mut RowSink<'_>,
    ) -> SqlResult<bool> {
        if let Some(lock) = self.lock {
            return self.read_base_locking(table, access, src, r, row, each, lock);
        }
        let c = &self.counters;
        let view = self.read_view();
        if view.is_some_and(|(v, _)| table.rebuilt_after(v.low_limit_id)) {
            return Err(SqlError::new(
                ErrorCode::TableDefChanged,
                "Table definition has changed, please retry transaction",
            ));
        }
        if r.point && access.index == 0 {
            for range in &r.ranges {
                let Bound::Included(pk) = &range.lower else {
                    continue;
                };
                bump(&c.read_key, 1);
                let got = match view {
                    Some((v, me)) => table.get_visible(pk, &src.needed, v, *me),
                    None => table.get_columns(pk, &src.needed),
                };
                let Some(vals) = got else {
                    continue;
                };
                bump(&c.rows_read, 1);
                for (v, &col) in vals.into_iter().zip(&src.needed) {
                    row[src.offset + col] = v;
                }
                if each(row, pk)? == Flow::Stop {
                    return Ok(false);
                }
            }
            return Ok(true);
        }
        let dir = if access.reverse {
            Direction::Backward
        } else {
            Direction::Forward
        };
        let mut seen: HashSet<Vec<u8>> = HashSet::new();
        let full = access.kind == AccessType::All;
        for range in &r.ranges {
            let mut scan = table
                .scan(access.index, range.clone(), dir)
                .fetch_rows(true)
                .project(src.needed.clone())
                .prefetch(READ_AHEAD_ROWS);
            if let Some((v, me)) = view {
                scan = scan.read_view(v, *me);
            }
            let mut stop = false;
            while let Some(mut item) = scan.next_item() {
                if r.dedupe && !seen.insert(item.primary_key().to_vec()) {
                    continue;
                }
                let Some(vals) = item.row.as_mut() else {
                    continue;
                };
                bump(&c.rows_read, 1);
                for (j, &col) in src.needed.iter().enumerate() {
                    row[src.offset + col] = std::mem::replace(&mut vals[j], Value::Null);
                }
                if each(row, item.primary_key())? == Flow::Stop {
                    stop = true;
                    break;
                }
            }
            self.count_scan(scan.stats(), full);
            if stop {
                return Ok(false);
            }
        }
        Ok(true)
    }
}

impl SubqueryRunner for Exec<'_> {
    fn scalar(&self, sq: &SubqueryRef, row: &[Value]) -> SqlResult<Value> {
        let Some(q) = sq.plan.downcast_ref::<Query>() else {
            return Err(SqlError::unsupported("this subquery"));
        };
        let at = std::ptr::from_ref(q) as usize;
        let cached = sq.outer.is_empty();
        if cached {
            if let Some(v) = self.scalars.borrow().get(&at) {
                return Ok(v.clone());
            }
        }
        let mut rows = self.query_in(q, row)?;
        if rows.len() > 1 {
            return Err(SqlError::new(
                ErrorCode::SubqueryNo1Row,
                "Subquery returns more than 1 row",
            ));
        }
        let v = rows
            .pop()
            .and_then(|mut r| (!r.is_empty()).then(|| r.swap_remove(0)))
            .unwrap_or(Value::Null);
        if cached {
            self.scalars.borrow_mut().insert(at, v.clone());
        }
        Ok(v)
    }
}

impl Exec<'_> {
    /// [`Exec::read_base`] for locking reads: IS/IX on the table, then a [`LockingScan`] per
    /// range; READ COMMITTED releases rows the conditions reject, and a semi-consistent row
    /// that matches is locked (waiting) and read again.
    #[allow(clippy::too_many_arguments)]
    fn read_base_locking(
        &self,
        table: &Table,
        access: &Access,
        src: &Source,
        r: &Ranges,
        row: &mut Vec<Value>,
        each: &mut RowSink<'_>,
        lock: ReadLock,
    ) -> SqlResult<bool> {
        let sys = &self.st.core.trx;
        let timeout = self.st.lock_wait_timeout();
        let (lt, gaps) = {
            let mut t = self.st.trx.borrow_mut();
            let trx = t.as_mut().expect("a table statement runs in a transaction");
            let mode = match lock.mode {
                ScanLockMode::Shared => crate::engine::lock::TableLockMode::IS,
                ScanLockMode::Exclusive => crate::engine::lock::TableLockMode::IX,
            };
            sys.lock_table(trx, table, mode, timeout)
                .map_err(lock_error)?;
            let lt = trx
                .lock_handle()
                .cloned()
                .expect("read-write after a table lock");
            (lt, trx.isolation.gap_locks())
        };
        let opts = ScanOptions {
            mode: lock.mode,
            policy: lock.policy,
            gaps,
            unique_point: r.point,
            covering_shared: lock.mode == ScanLockMode::Shared
                && access.index != 0
                && covering(table, access.index, &src.needed),
            semi_consistent: lock.update && !gaps && access.index == 0 && !r.point,
            timeout,
        };
        let filter = if r.exact {
            src.filter.as_ref()
        } else {
            src.full_filter.as_ref()
        };
        let c = &self.counters;
        let dir = if access.reverse {
            Direction::Backward
        } else {
            Direction::Forward
        };
        let full = access.kind == AccessType::All;
        let mut seen: HashSet<Vec<u8>> = HashSet::new();
        for range in &r.ranges {
            let mut scan = LockingScan::new(
                sys,
                lt.clone(),
                table,
                access.index,
                range.clone(),
                dir,
                opts,
                src.needed.clone(),
            );
            let mut stop = false;
            loop {
                let fetched = scan.fetch().map_err(lock_error);
                let mut fetched = match fetched {
                    Ok(Some(f)) => f,
                    Ok(None) => break,
                    Err(e) => {
                        self.count_scan(&scan.stats, full);
                        return Err(e);
                    }
                };
                if r.dedupe && !seen.insert(fetched.pk.clone()) {
                    continue;
                }
                for (j, &col) in src.needed.iter().enumerate() {
                    row[src.offset + col] = std::mem::replace(&mut fetched.row[j], Value::Null);
                }
                if fetched.semi {
                    if self.holds(filter, row)? {
                        scan.lock_semi_row();
                    }
                    continue;
                }
                bump(&c.rows_read, 1);
                match each(row, &fetched.pk)? {
                    Flow::Next => {}
                    Flow::Rejected => {
                        if !gaps {
                            scan.unlock_row();
                        }
                    }
                    Flow::Stop => {
                        stop = true;
                        break;
                    }
                }
            }
            self.count_scan(&scan.stats, full);
            if stop {
                return Ok(false);
            }
        }
        Ok(true)
    }

    /// Adds one scan's counters: a full scan counts as Handler_read_first and _rnd_next.
    fn count_scan(&self, s: &HandlerStats, full: bool) {
        let c = &self.counters;
        if full {
            bump(&c.read_first, s.read_key);
            bump(&c.read_rnd_next, s.read_next + 1);
        } else {
            bump(&c.read_key, s.read_key);
            bump(&c.read_next, s.read_next);
            bump(&c.read_prev, s.read_prev);
        }
    }
}

fn full_scan(mut out: Ranges) -> Ranges {
    out.ranges.clear();
    out.ranges.push(KeyRange::all());
    out.exact = false;
    out.dedupe = false;
    out.point = false;
    out
}

fn bound_key(b: &Bound<Vec<u8>>) -> &[u8] {
    match b {
        Bound::Included(k) | Bound::Excluded(k) => k,
        Bound::Unbounded => &[],
    }
}

/// The value coerced to the key column's type, if that loses nothing. A text key takes only
/// strings: a number compared with a text column compares as numbers ('05' = 5), which the
/// text's index order does not follow.
fn exact_key(col: KeyColumn, v: Value) -> Option<Value> {
    if col.ty.holds_integer_as_is(&v) {
        return Some(v); // a point lookup's usual key: nothing to coerce or compare
    }
    if col.ty.is_text() && !matches!(v, Value::Bytes(_)) {
        return None;
    }
    let coerced = col.ty.coerce(v.clone(), "key").ok()?;
    (compare(&coerced, &v) == Some(Ordering::Equal)).then_some(coerced)
}

/// ORDER BY comparison: NULL first, ENUM and SET values by their number (member order, as
/// filesort orders them), then MySQL's comparison.
pub fn order_cmp(a: &Value, b: &Value) -> Ordering {
    match (a, b) {
        (Value::Null, Value::Null) => Ordering::Equal,
        (Value::Null, _) => Ordering::Less,
        (_, Value::Null) => Ordering::Greater,
        (Value::Enum(x, _), Value::Enum(y, _)) => x.cmp(y),
        (Value::Set(x, _), Value::Set(y, _)) => x.cmp(y),
        _ => compare(a, b).unwrap_or(Ordering::Equal),
    }
}

/// Sorts of at least this many rows fold their string keys first ([`FoldedKey`]).
const FOLD_SORT_ROWS: usize = 8;

/// One ORDER BY key whose values are all strings or NULL, folded once per row (ASCII
/// lower-cased, trailing spaces cut: what [`order_cmp`] compares) so that the sort compares
/// plain bytes instead of collating both sides of every comparison, as filesort compares
/// sort keys.
struct FoldedKey {
    /// The folded strings, one after another.
    bytes: Vec<u8>,
    /// Per row index: where its folded string lies in `bytes`; None for NULL (and for rows
    /// not being sorted).
    spans: Vec<Option<(usize, usize)>>,
}

impl FoldedKey {
    /// Folds the values of the rows `(row index < rows, value)`; None when one is not a
    /// string.
    fn build<'v>(
        rows: usize,
        values: impl Iterator<Item = (usize, &'v Value)>,
    ) -> Option<FoldedKey> {
        let mut k = FoldedKey {
            bytes: Vec::new(),
            spans: vec![None; rows],
        };
        for (row, v) in values {
            k.spans[row] = match v {
                Value::Null => None,
                Value::Bytes(b) => {
                    let kept = b.len() - b.iter().rev().take_while(|&&c| c == b' ').count();
                    let start = k.bytes.len();
                    k.bytes.extend_from_slice(&b[..kept]);
                    k.bytes[start..].make_ascii_lowercase();
                    Some((start, k.bytes.len()))
                }
                _ => return None,
            };
        }
        Some(k)
    }

    /// [`order_cmp`] of rows `a` and `b`'s values.
    fn cmp(&self, a: usize, b: usize) -> Ordering {
        match (self.spans[a], self.spans[b]) {
            (None, None) => Ordering::Equal,
            (None, Some(_)) => Ordering::Less,
            (Some(_), None) => Ordering::Greater,
            (Some((sa, ea)), Some((sb, eb))) => self.bytes[sa..ea].cmp(&self.bytes[sb..eb]),
        }
    }
}

/// Appends a grouping key for `v`: equal under MySQL's comparison gives equal bytes
/// (numbers by value, strings case-insensitively without trailing spaces).
pub fn group_key(v: &Value, out: &mut Vec<u8>) {
    match v {
        Value::Null => out.push(0),
        Value::Int(i) => {
            out.push(1);
            out.extend_from_slice(&i128::from(*i).to_be_bytes());
        }
        Value::UInt(u) => {
            out.push(1);
            out.extend_from_slice(&i128::from(*u).to_be_bytes());
        }
        Value::Decimal(d) => {
            let (mut u, mut s) = (d.unscaled(), d.scale);
            while s > 0 && u % 10 == 0 {
                u /= 10;
                s -= 1;
            }
            // A whole number that fits an integer's key is keyed as that integer.
            let whole = if s == 0 { i128::try_from(u).ok() } else { None };
            if let Some(i) = whole {
                out.push(1);
                out.extend_from_slice(&i.to_be_bytes());
            } else {
                out.push(2);
                out.extend_from_slice(&u.to_be_bytes());
                out.push(s);
            }
        }
        Value::Double(d) => {
            out.push(3);
            out.extend_from_slice(&d.to_bits().to_be_bytes());
        }
        Value::Bytes(b) => {
            out.push(4);
            let end = b.len() - b.iter().rev().take_while(|c| **c == b' ').count();
            out.extend_from_slice(&(end as u64).to_be_bytes());
            let start = out.len();
            out.extend_from_slice(&b[..end]);
            out[start..].make_ascii_lowercase();
        }
        Value::DateTime(dt) => {
            out.push(5);
            out.extend_from_slice(&key::pack_datetime(dt).to_be_bytes());
        }
        Value::Time(t, _) => {
            out.push(7);
            out.extend_from_slice(&t.to_be_bytes());
        }
        Value::Enum(..) | Value::Set(..) => {
            // Grouped by the number, which names one member text each.
            out.push(6);
            out.extend_from_slice(&v.member_number().unwrap_or(0).to_be_bytes());
        }
    }
}

/// The result set of a query's rows with its column metadata: the plan's own when it was
/// all known at planning, else computed columns typed from their values.
pub fn result_set(q: &Query, rows: Vec<Vec<Value>>) -> ResultSet {
    if let Some(fixed) = &q.fixed_columns {
        return ResultSet {
            columns: fixed.defs.clone(),
            encoded: Some(fixed.encoded.clone()),
            rows,
        };
    }
    let defs = q
        .columns
        .iter()
        .enumerate()
        .map(|(i, c)| match &c.def {
            Some(d) => d.clone(),
            None => {
                let sample = rows.iter().map(|r| &r[i]).find(|v| !v.is_null());
                let mut d = column_for(&c.name, sample.or(rows.first().map(|r| &r[i])));
                fit_datetime_decimals(&mut d, rows.iter().map(|r| &r[i]));
                if rows.iter().any(|r| r[i].is_null()) {
                    d.flags.remove(protocol::ColumnFlags::NOT_NULL);
                }
                d
            }
        })
        .collect();
    ResultSet::new(defs, rows)
}

/// A query's last stage over its result rows: DISTINCT, ORDER BY (by select items or by the
/// per-row `keys`), then OFFSET and LIMIT.
fn finish(
    q: &Query,
    out: Vec<Vec<Value>>,
    keys: &[Vec<Value>],
    sorting: bool,
    offset: u64,
    limit: u64,
) -> Vec<Vec<Value>> {
    let mut order: Vec<usize> = (0..out.len()).collect();
    if q.distinct {
        let mut seen: HashSet<Vec<u8>> = HashSet::with_capacity(order.len());
        let mut k = Vec::new();
        order.retain(|&i| {
            k.clear();
            out[i].iter().for_each(|v| group_key(v, &mut k));
            // One exact-size copy per distinct row; duplicates allocate nothing.
            !seen.contains(k.as_slice()) && seen.insert(k.clone())
        });
    }
    if sorting {
        let value = |r: usize, i: usize| match q.order_items[i] {
            Some(it) => &out[r][it],
            None => &keys[r][i],
        };
        let folded: Vec<Option<FoldedKey>> = (0..q.order.len())
            .map(|i| {
                (order.len() >= FOLD_SORT_ROWS)
                    .then(|| FoldedKey::build(out.len(), order.iter().map(|&r| (r, value(r, i)))))
                    .flatten()
            })
            .collect();
        order.sort_by(|&a, &b| {
            // The rows are the statement's own: a cooperative safe point.
            pool_core::wait::safe_point();
            for (i, (_, desc)) in q.order.iter().enumerate() {
                let o = match &folded[i] {
                    Some(f) => f.cmp(a, b),
                    None => order_cmp(value(a, i), value(b, i)),
                };
                if o != Ordering::Equal {
                    return if *desc { o.reverse() } else { o };
                }
            }
            Ordering::Equal
        });
    }
    let skip = offset.min(order.len() as u64) as usize;
    let take = limit.min((order.len() - skip) as u64) as usize;
    let mut slots: Vec<Option<Vec<Value>>> = out.into_iter().map(Some).collect();
    order[skip..skip + take]
        .iter()
        .filter_map(|&i| slots[i].take())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::value::Decimal;

    fn key(v: &Value) -> Vec<u8> {
        let mut k = Vec::new();
        group_key(v, &mut k);
        k
    }

    #[test]
    fn group_keys_follow_mysql_equality() {
        assert_eq!(key(&Value::Int(3)), key(&Value::UInt(3)));
        assert_eq!(
            key(&Value::Int(3)),
            key(&Value::Decimal(Decimal::new(300, 2)))
        );
        assert_eq!(key(&Value::str("Abc  ")), key(&Value::str("aBC")));
        assert_ne!(key(&Value::Null), key(&Value::Int(0)));
    }

    proptest::proptest! {
        #[test]
        fn folded_keys_order_strings_as_order_cmp_does(
            texts in proptest::collection::vec(
                proptest::option::of("[aAbB ]{0,5}"), 1..40),
        ) {
            let values: Vec<Value> = texts
                .iter()
                .map(|t| t.as_deref().map_or(Value::Null, Value::str))
                .collect();
            let folded = FoldedKey::build(values.len(), values.iter().enumerate()).unwrap();
            for a in 0..values.len() {
                for b in 0..values.len() {
                    proptest::prop_assert_eq!(
                        folded.cmp(a, b),
                        order_cmp(&values[a], &values[b]),
                        "{:?} vs {:?}", values[a], values[b]
                    );
                }
            }
        }
    }

    #[test]
    fn folded_keys_are_only_for_strings() {
        let values = [Value::str("a"), Value::Int(1)];
        assert!(FoldedKey::build(2, values.iter().enumerate()).is_none());
    }

    #[test]
    fn nulls_sort_first() {
        assert_eq!(order_cmp(&Value::Null, &Value::Int(-5)), Ordering::Less);
        assert_eq!(
            order_cmp(&Value::str("b"), &Value::str("A")),
            Ordering::Greater
        );
    }
}
