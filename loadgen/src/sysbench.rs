//! The `prepare`, `run` and `cleanup` commands for the sysbench scripts.

use std::ops::Range;
use std::sync::Arc;

use crate::blocking::Blocking;
use crate::conn::{MysqlWire, WireFactory};
use crate::dist::Dist;
use crate::oltp::{
    fill_rows_sql, index_sql, prepare_create_sql, prepare_rows, table_count, OltpConfig, OltpScript,
};
use crate::options::SysbenchArgs;
use crate::report::Report;
use crate::runner::{emit, engine_config, login, loopback_addr, run, Load};
use crate::script::Script;

fn config(a: &SysbenchArgs) -> OltpConfig {
    OltpConfig {
        workload: a.workload,
        opt: a.oltp.clone(),
        dist: a.rand.params(),
        ignore: a.conn.ignore_errors.clone(),
        threads: a.run.threads.max(1),
    }
}

/// `prepare`: creates and fills the tables on `--threads` connections. With at most as
/// many threads as tables, each connection takes whole tables (create, fill, index) dealt
/// round-robin, as sysbench does; with more, every table is created first, then its rows
/// are cut into `threads / tables` chunks that load in parallel, then it is indexed.
pub(crate) fn prepare(a: &SysbenchArgs, wires: &Arc<WireFactory>) -> Result<(), String> {
    prepare_with(a, wires, true)
}

/// One unit of `prepare` work.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Job {
    /// Create, fill and index a table, in that order.
    Table(u32),
    /// Create a table.
    Create(u32),
    /// Insert these rows (1-based row numbers) into a table.
    Fill(u32, Range<u32>),
    /// Create a table's secondary index.
    Index(u32),
}

/// The phases of `prepare` (each finishes before the next starts) for `tables` tables of
/// `rows` rows on `threads` connections.
fn prepare_phases(tables: u32, rows: u32, threads: usize) -> Vec<Vec<Job>> {
    let chunks = (threads / tables.max(1) as usize).clamp(1, rows.max(1) as usize) as u32;
    if chunks == 1 {
        return vec![(1..=tables).map(Job::Table).collect()];
    }
    let fills = (1..=tables)
        .flat_map(|t| {
            (0..chunks).map(move |c| {
                let lo = 1 + (u64::from(rows) * u64::from(c) / u64::from(chunks)) as u32;
                let hi = 1 + (u64::from(rows) * u64::from(c + 1) / u64::from(chunks)) as u32;
                Job::Fill(t, lo..hi)
            })
        })
        .collect();
    vec![
        (1..=tables).map(Job::Create).collect(),
        fills,
        (1..=tables).map(Job::Index).collect(),
    ]
}

/// `prepare`, printing sysbench's progress lines only when `verbose`.
pub(crate) fn prepare_with(
    a: &SysbenchArgs,
    wires: &Arc<WireFactory>,
    verbose: bool,
) -> Result<(), String> {
    let cfg = config(a);
    let tables = table_count(&cfg)?;
    let addr = loopback_addr(&a.conn.host, a.conn.port)?;
    let lg = login(&a.conn);
    let seed = a.rand.seed();
    let rows = prepare_rows(&cfg);
    for jobs in prepare_phases(tables, rows, a.run.threads.max(1)) {
        let jobs = Arc::new(jobs);
        let workers = a.run.threads.clamp(1, jobs.len().max(1));
        let handles: Vec<_> = (0..workers)
            .map(|w| {
                let (cfg, lg, wires, jobs) = (cfg.clone(), lg.clone(), wires.clone(), jobs.clone());
                std::thread::spawn(move || -> Result<(), String> {
                    let mut c = Blocking::connect(addr, &lg, &wires)?;
                    for (n, job) in jobs.iter().enumerate().skip(w).step_by(workers) {
                        let mut dist = Dist::new(cfg.dist, seed ^ (n as u64 + 1));
                        run_job(&mut c, &cfg, job, rows, &mut dist, verbose)?;
                    }
                    c.quit();
                    Ok(())
                })
            })
            .collect();
        for h in handles {
            h.join()
                .map_err(|_| "prepare thread panicked".to_string())??;
        }
    }
    Ok(())
}

/// Runs one `prepare` job on `c`.
fn run_job(
    c: &mut Blocking,
    cfg: &OltpConfig,
    job: &Job,
    rows: u32,
    dist: &mut Dist,
    verbose: bool,
) -> Result<(), String> {
    let say = |m: String| {
        if verbose {
            println!("{m}");
        }
    };
    let mut send = |sql: &str| c.exec(sql).map(|_| ());
    match job {
        Job::Table(t) => {
            run_job_parts(
                &mut send,
                cfg,
                *t,
                Some(1..rows.saturating_add(1)),
                true,
                dist,
                &say,
            )?;
        }
        Job::Create(t) => run_job_parts(&mut send, cfg, *t, None, false, dist, &say)?,
        Job::Fill(t, range) => {
            say(format!(
                "Inserting {} records into 'sbtest{t}'",
                range.end - range.start
            ));
            fill_rows_sql(&cfg.opt, *t, range.clone(), dist, &mut send)?;
        }
        Job::Index(t) => {
            if let Some(sql) = index_sql(cfg, *t) {
                say(format!("Creating a secondary index on 'sbtest{t}'..."));
                send(&sql)?;
            }
        }
    }
    Ok(())
}

/// Creates table `t`, then fills `fill` rows of it and indexes it if `index`.
fn run_job_parts(
    send: &mut impl FnMut(&str) -> Result<(), String>,
    cfg: &OltpConfig,
    t: u32,
    fill: Option<Range<u32>>,
    index: bool,
    dist: &mut Dist,
    say: &impl Fn(String),
) -> Result<(), String> {
    say(format!("Creating table 'sbtest{t}'..."));
    send(&prepare_create_sql(cfg, t))?;
    if let Some(range) = fill.filter(|r| !r.is_empty()) {
        say(format!(
            "Inserting {} records into 'sbtest{t}'",
            cfg.opt.table_size
        ));
        fill_rows_sql(&cfg.opt, t, range, dist, &mut *send)?;
    }
    if let Some(sql) = index.then(|| index_sql(cfg, t)).flatten() {
        say(format!("Creating a secondary index on 'sbtest{t}'..."));
        send(&sql)?;
    }
    Ok(())
}

/// `cleanup`: drops the tables.
pub(crate) fn cleanup(a: &SysbenchArgs, wires: &Arc<WireFactory>) -> Result<(), String> {
    cleanup_with(a, wires, true)
}

/// `cleanup`, printing sysbench's progress lines only when `verbose`.
pub(crate) fn cleanup_with(
    a: &SysbenchArgs,
    wires: &Arc<WireFactory>,
    verbose: bool,
) -> Result<(), String> {
    let cfg = config(a);
    let tables = table_count(&cfg)?;
    let mut c = Blocking::connect(
        loopback_addr(&a.conn.host, a.conn.port)?,
        &login(&a.conn),
        wires,
    )?;
    for t in 1..=tables {
        if verbose {
            println!("Dropping table 'sbtest{t}'...");
        }
        c.exec(&format!("DROP TABLE IF EXISTS sbtest{t}"))?;
    }
    c.quit();
    Ok(())
}

/// `run`: the measured load; returns the report (already printed).
pub(crate) fn run_cmd(
    a: &SysbenchArgs,
    wires: &Arc<WireFactory>,
    live: bool,
) -> Result<Report, String> {
    let cfg = Arc::new(config(a));
    table_count(&cfg)?;
    let seed = a.rand.seed();
    let engine = engine_config(&a.conn, &a.run, a.run.threads.max(1), seed)?;
    let scripts = Arc::new(move |i: usize| {
        Box::new(OltpScript::new(cfg.clone(), i, seed)) as Box<dyn Script>
    });
    let load = Load::new(
        a.workload.name().into(),
        engine,
        scripts,
        wires.clone(),
        &a.run,
        live,
    );
    let report = run(load);
    if live {
        emit(&report, a.run.format, a.run.out.as_deref())?;
    }
    Ok(report)
}

/// The real client's factory.
pub(crate) fn wires() -> Arc<WireFactory> {
    MysqlWire::factory()
}

#[cfg(test)]
mod prepare_tests {
    use super::*;

    #[test]
    fn at_most_one_thread_per_table_loads_whole_tables() {
        assert_eq!(
            prepare_phases(4, 1000, 4),
            vec![vec![
                Job::Table(1),
                Job::Table(2),
                Job::Table(3),
                Job::Table(4)
            ]]
        );
        assert_eq!(prepare_phases(3, 1000, 2).len(), 1);
    }

    #[test]
    fn more_threads_than_tables_load_chunks_that_cover_every_row_once() {
        let phases = prepare_phases(2, 1001, 8);
        assert_eq!(phases[0], vec![Job::Create(1), Job::Create(2)]);
        assert_eq!(phases[2], vec![Job::Index(1), Job::Index(2)]);
        for t in 1..=2 {
            let mut rows: Vec<u32> = phases[1]
                .iter()
                .filter_map(|j| match j {
                    Job::Fill(n, r) if *n == t => Some(r.clone()),
                    _ => None,
                })
                .flatten()
                .collect();
            assert_eq!(
                phases[1]
                    .iter()
                    .filter(|j| matches!(j, Job::Fill(n, _) if *n == t))
                    .count(),
                4
            );
            rows.sort_unstable();
            assert_eq!(rows, (1..=1001).collect::<Vec<_>>());
        }
        // Never more chunks than rows.
        assert_eq!(prepare_phases(1, 2, 8)[1].len(), 2);
    }
}
