//! The background lock-wait thread: woken per new wait (and once a second), it snapshots the
//! waits-for graph, stores each waiter's CATS weight, and — with `innodb_deadlock_detect` —
//! breaks every cycle by cancelling the lightest member's wait with 1213. Invariant: a victim
//! is chosen only from a cycle re-validated edge by edge with each member still in the same
//! wait, so a cycle that dissolved since the snapshot never costs a transaction.

use std::collections::HashMap;
use std::sync::atomic::Ordering::Relaxed;
use std::sync::Arc;
use std::time::{Duration, SystemTime};

use super::introspect::{DeadlockReport, DeadlockTrx, LockDesc};
use super::queue::has_to_wait;
use super::sys::Inner;
use super::table::{lock, Target};
use super::trx::{TrxId, TrxShared, WaitOutcome};

/// How often the thread refreshes weights without being woken (InnoDB's lock-wait thread
/// also runs once a second).
const IDLE_PERIOD: Duration = Duration::from_secs(1);

/// Cycles broken per wake-up before yielding (each victim re-snapshots the graph).
const MAX_VICTIMS_PER_PASS: usize = 64;

/// A waiting transaction in the snapshot.
#[derive(Debug)]
struct Node {
    trx: Arc<TrxShared>,
    entry: u64,
    hash: u64,
    target: Target,
    blockers: Vec<TrxId>,
}

/// The thread body; returns at shutdown.
pub(crate) fn run(inner: &Inner) {
    loop {
        {
            let mut f = lock(&inner.bg);
            if !f.wake && !f.shutdown {
                f = inner
                    .bg_cond
                    .wait_timeout(f, IDLE_PERIOD)
                    .unwrap_or_else(|e| e.into_inner())
                    .0;
            }
            if f.shutdown {
                return;
            }
            f.wake = false;
        }
        refresh(inner);
    }
}

/// One pass: weights, then deadlocks until none is left.
pub(crate) fn refresh(inner: &Inner) {
    for _ in 0..MAX_VICTIMS_PER_PASS {
        let graph = snapshot(inner);
        if graph.is_empty() {
            return;
        }
        set_weights(&graph);
        if !inner.deadlock_detect.load(Relaxed) {
            return;
        }
        let Some(cycle) = find_cycle(&graph) else {
            return;
        };
        resolve(inner, &graph, &cycle);
    }
}

fn snapshot(inner: &Inner) -> Vec<Node> {
    let waiters: Vec<Arc<TrxShared>> = lock(&inner.waiters).values().cloned().collect();
    let mut out = Vec::with_capacity(waiters.len());
    for trx in waiters {
        let (entry, hash, target) = {
            let st = trx.state();
            match &st.wait {
                Some(w) if w.outcome == WaitOutcome::Waiting => (w.entry, w.hash, w.target.clone()),
                _ => continue,
            }
        };
        let blockers = {
            let mut shard = inner.table.shard(hash);
            let Some(q) = shard.queue(hash, target.as_ref()) else {
                continue;
            };
            let Some(pos) = q.locks.iter().position(|l| l.id == entry && l.waiting) else {
                continue;
            };
            q.blockers_of(pos, inner.policy_for(&target))
        };
        out.push(Node {
            trx,
            entry,
            hash,
            target,
            blockers,
        });
    }
    // Most recent waits first: the search starts from the newest waiter, as InnoDB's does.
    out.sort_by_key(|n| std::cmp::Reverse(n.entry));
    out
}

/// CATS weight of each waiter: itself plus every waiter that transitively waits for it.
fn set_weights(graph: &[Node]) {
    let at: HashMap<TrxId, usize> = graph
        .iter()
        .enumerate()
        .map(|(i, n)| (n.trx.id, i))
        .collect();
    // waited_by[b] = the waiters that wait directly for b.
    let mut waited_by = vec![Vec::new(); graph.len()];
    for (i, n) in graph.iter().enumerate() {
        for b in &n.blockers {
            if let Some(&j) = at.get(b) {
                waited_by[j].push(i);
            }
        }
    }
    let mut seen = vec![usize::MAX; graph.len()];
    for (root, n) in graph.iter().enumerate() {
        let mut count = 0u64;
        let mut stack = vec![root];
        seen[root] = root;
        while let Some(x) = stack.pop() {
            count += 1;
            for &w in &waited_by[x] {
                if seen[w] != root {
                    seen[w] = root;
                    stack.push(w);
                }
            }
        }
        n.trx.schedule_weight.store(count, Relaxed);
    }
}

/// A cycle of the waits-for graph as node indices, each waiting for the next.
fn find_cycle(graph: &[Node]) -> Option<Vec<usize>> {
    let at: HashMap<TrxId, usize> = graph
        .iter()
        .enumerate()
        .map(|(i, n)| (n.trx.id, i))
        .collect();
    let succ: Vec<Vec<usize>> = graph
        .iter()
        .map(|n| {
            n.blockers
                .iter()
                .filter_map(|b| at.get(b).copied())
                .collect()
        })
        .collect();
    // 0 = unvisited, 1 = on the path, 2 = done.
    let mut color = vec![0u8; graph.len()];
    for root in 0..graph.len() {
        if color[root] != 0 {
            continue;
        }
        let mut path: Vec<(usize, usize)> = vec![(root, 0)];
        color[root] = 1;
        while let Some(top) = path.last_mut() {
            let x = top.0;
            if let Some(&y) = succ[x].get(top.1) {
                top.1 += 1;
                match color[y] {
                    0 => {
                        color[y] = 1;
                        path.push((y, 0));
                    }
                    1 => {
                        let from = path.iter().position(|&(p, _)| p == y).expect("on path");
                        return Some(path[from..].iter().map(|&(p, _)| p).collect());
                    }
                    _ => {}
                }
            } else {
                color[x] = 2;
                path.pop();
            }
        }
    }
    None
}

/// Re-validates `cycle` and cancels its victim.
fn resolve(inner: &Inner, graph: &[Node], cycle: &[usize]) {
    let mut members = Vec::with_capacity(cycle.len());
    for (k, &i) in cycle.iter().enumerate() {
        let n = &graph[i];
        let next = &graph[cycle[(k + 1) % cycle.len()]];
        let mut shard = inner.table.shard(n.hash);
        let Some(q) = shard.queue(n.hash, n.target.as_ref()) else {
            return;
        };
        let Some(pos) = q.locks.iter().position(|l| l.id == n.entry && l.waiting) else {
            return;
        };
        if !q
            .blockers_of(pos, inner.policy_for(&n.target))
            .contains(&next.trx.id)
        {
            return;
        }
        let w = &q.locks[pos];
        let sup = q.target.is_supremum();
        let waiting_for = LockDesc::of(w, &q.target);
        // What the next member holds here that this one waits for.
        let blocking: Vec<LockDesc> = q
            .locks
            .iter()
            .filter(|l| l.trx.id == next.trx.id && has_to_wait(w.mode, l.mode, sup))
            .map(|l| LockDesc::of(l, &q.target))
            .collect();
        members.push((i, waiting_for, blocking));
    }
    let weights: Vec<(u64, u64)> = cycle
        .iter()
        .map(|&i| (graph[i].trx.weight(), graph[i].entry))
        .collect();
    // Lightest; among equals the most recent waiter (the one that closed the cycle).
    let v = (0..cycle.len())
        .min_by(|&a, &b| {
            weights[a]
                .0
                .cmp(&weights[b].0)
                .then(weights[b].1.cmp(&weights[a].1))
        })
        .expect("a cycle has members");
    let victim = &graph[cycle[v]];
    let mut trxs: Vec<DeadlockTrx> = Vec::with_capacity(cycle.len());
    for (k, (i, waiting_for, _)) in members.iter().enumerate() {
        let t = &graph[*i].trx;
        let (structs, rows) = {
            let st = t.state();
            (st.lock_structs(), st.rows_locked)
        };
        // Member k holds what member k-1 waits for.
        let prev = (k + members.len() - 1) % members.len();
        trxs.push(DeadlockTrx {
            trx_id: t.id,
            thread_id: t.thread_id,
            connection_id: t.connection_id,
            lock_structs: structs,
            rows_locked: rows,
            undo_records: t.undo_records.load(Relaxed),
            holds: members[prev].2.clone(),
            waiting_for: waiting_for.clone(),
        });
    }
    // Counted and reported before the victim wakes, so whoever sees its 1213 sees both.
    inner.cancel_waiting(
        &victim.trx,
        victim.entry,
        victim.hash,
        &victim.target,
        Some(WaitOutcome::Deadlock),
        || {
            inner.stats.deadlocks.fetch_add(1, Relaxed);
            let report = DeadlockReport {
                at: SystemTime::now(),
                trxs,
                victim: v,
            };
            *lock(&victim.trx.deadlock) = Some(report.clone());
            *lock(&inner.latest_deadlock) = Some(report);
        },
    );
}
