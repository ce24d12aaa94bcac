//! The `prepare`, `run` and `cleanup` commands for the sysbench scripts.

use std::sync::Arc;

use crate::blocking::Blocking;
use crate::conn::{MysqlWire, WireFactory};
use crate::dist::Dist;
use crate::oltp::{prepare_table_sql, table_count, OltpConfig, OltpScript};
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

/// `prepare`: creates and fills the tables, `--threads` connections dealing tables round-robin.
pub(crate) fn prepare(a: &SysbenchArgs, wires: &Arc<WireFactory>) -> Result<(), String> {
    prepare_with(a, wires, true)
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
    let workers = a.run.threads.clamp(1, tables.max(1) as usize);
    let seed = a.rand.seed();
    let handles: Vec<_> = (0..workers)
        .map(|w| {
            let (cfg, lg, wires) = (cfg.clone(), lg.clone(), wires.clone());
            std::thread::spawn(move || -> Result<(), String> {
                let mut c = Blocking::connect(addr, &lg, &wires)?;
                let mut dist = Dist::new(cfg.dist, seed ^ (w as u64 + 1));
                for t in ((w as u32 + 1)..=tables).step_by(workers) {
                    let say = |m: String| {
                        if verbose {
                            println!("{m}");
                        }
                    };
                    say(format!("Creating table 'sbtest{t}'..."));
                    let stmts = prepare_table_sql(&cfg, t, &mut dist);
                    let has_rows = stmts.iter().any(|s| s.starts_with("INSERT"));
                    for (i, sql) in stmts.iter().enumerate() {
                        if i == 1 && has_rows {
                            say(format!(
                                "Inserting {} records into 'sbtest{t}'",
                                cfg.opt.table_size
                            ));
                        }
                        if sql.starts_with("CREATE INDEX") {
                            say(format!("Creating a secondary index on 'sbtest{t}'..."));
                        }
                        c.exec(sql)?;
                    }
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
