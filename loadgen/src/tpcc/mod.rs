//! `tpbed-load tpcc prepare|run|check|cleanup`: the TPC-C workload with Percona sysbench-tpcc's
//! schema and statements (table set 1), the specification's mix, keying and initial data, no
//! think time, and per-transaction-type results through the typed metrics. Not an audited
//! TPC-C: no terminals' keying and think times, no response-time constraints.

pub(crate) mod check;
pub(crate) mod keys;
pub(crate) mod load;
pub(crate) mod schema;
pub(crate) mod script;
pub(crate) mod txn;

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};
use std::time::Instant;

use clap::{Args, ValueEnum};

use crate::blocking::Blocking;
use crate::conn::WireFactory;
use crate::metrics::{txn_keys, TxnRecorder, Value};
use crate::options::{parse_bool, ConnArgs, RunArgs};
use crate::report::Report;
use crate::runner::{emit, engine_config, login, loopback_addr, run, Load};
use crate::script::Script;
use crate::tpcc::keys::{Keys, TYPES};

/// The database's size.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Scale {
    /// Warehouses.
    pub(crate) warehouses: u32,
    /// Items (and stock rows per warehouse): 100,000.
    pub(crate) items: u32,
    /// Customers (and orders) per district: 3,000.
    pub(crate) customers: u32,
}

/// What `tpbed-load tpcc` does.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum Action {
    /// Create the tables and load the initial database.
    Prepare,
    /// Run the transaction mix.
    Run,
    /// Run the consistency checks (with no load running).
    Check,
    /// Drop the tables.
    Cleanup,
}

/// `--trx-level`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum TrxLevel {
    /// REPEATABLE READ (sysbench-tpcc's default).
    #[value(name = "RR", alias = "rr")]
    Rr,
    /// READ COMMITTED.
    #[value(name = "RC", alias = "rc")]
    Rc,
    /// SERIALIZABLE.
    #[value(name = "SER", alias = "ser")]
    Ser,
}

impl TrxLevel {
    fn sql(self) -> &'static str {
        match self {
            TrxLevel::Rr => "REPEATABLE READ",
            TrxLevel::Rc => "READ COMMITTED",
            TrxLevel::Ser => "SERIALIZABLE",
        }
    }
}

/// `tpbed-load tpcc` options (sysbench-tpcc's names where it has them).
#[derive(Debug, Clone, Args)]
pub(crate) struct TpccArgs {
    /// prepare, run, check or cleanup.
    #[arg(value_enum)]
    pub(crate) action: Action,
    /// Warehouses (sysbench-tpcc: --scale). `run` may use fewer than were prepared.
    #[arg(long, alias = "scale", default_value_t = 1)]
    pub(crate) warehouses: u32,
    /// Add sysbench-tpcc's foreign keys at prepare (runs turn foreign_key_checks off, as it does).
    #[arg(long = "use-fk", alias = "use_fk", default_value = "on", value_parser = parse_bool, action = clap::ArgAction::Set)]
    pub(crate) use_fk: bool,
    /// Transaction isolation of the run's connections.
    #[arg(long = "trx-level", alias = "trx_level", value_enum, default_value_t = TrxLevel::Rr)]
    pub(crate) trx_level: TrxLevel,
    /// Storage engine named in CREATE TABLE.
    #[arg(long = "mysql-storage-engine", default_value = "innodb")]
    pub(crate) storage_engine: String,
    /// Seed of the run's and the load's random numbers (0: the current time).
    #[arg(long = "rand-seed", default_value_t = 0)]
    pub(crate) seed: u64,
    /// Ours, for tests only: items (and stock rows per warehouse) instead of 100,000. A
    /// database this small is not TPC-C's; `run` and `check` read the size from the tables.
    #[arg(long = "test-items", hide = true)]
    pub(crate) test_items: Option<u32>,
    /// Ours, for tests only: customers (and orders) per district instead of 3,000.
    #[arg(long = "test-customers", hide = true)]
    pub(crate) test_customers: Option<u32>,
    /// Connection options.
    #[command(flatten)]
    pub(crate) conn: ConnArgs,
    /// Run options (--threads: connections; at prepare and check, loader connections).
    #[command(flatten)]
    pub(crate) run: RunArgs,
}

impl TpccArgs {
    fn seed(&self) -> u64 {
        if self.seed != 0 {
            return self.seed;
        }
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos() as u64)
            .unwrap_or(1)
    }

    /// The size `prepare` loads.
    fn prepare_scale(&self) -> Result<Scale, String> {
        let s = Scale {
            warehouses: self.warehouses,
            items: self.test_items.unwrap_or(100_000),
            customers: self.test_customers.unwrap_or(3_000),
        };
        if s.warehouses == 0 || s.items < 20 || s.customers < 10 {
            return Err(
                "--warehouses must be at least 1 (and a test size at least 20 items, 10 customers)"
                    .into(),
            );
        }
        Ok(s)
    }

    fn connect(&self, wires: &Arc<WireFactory>) -> Result<Blocking, String> {
        Blocking::connect(
            loopback_addr(&self.conn.host, self.conn.port)?,
            &login(&self.conn),
            wires,
        )
    }
}

/// The metric keys TPC-C adds to every run's, with what each means.
pub(crate) fn metric_keys() -> Vec<(String, String)> {
    let mut keys = vec![(
        "tpmc".to_string(),
        "tpcc: New-Order transactions per minute (not an audited tpmC)".to_string(),
    )];
    for t in TYPES {
        keys.extend(txn_keys(t));
    }
    keys
}

/// `tpbed-load tpcc`.
pub(crate) fn tpcc_cmd(a: &TpccArgs, wires: &Arc<WireFactory>) -> Result<(), String> {
    match a.action {
        Action::Prepare => prepare(a, wires, true),
        Action::Cleanup => cleanup(a, wires, true),
        Action::Check => {
            let outcomes = check(a, wires)?;
            for o in &outcomes {
                println!("{}", o.line());
            }
            match outcomes.iter().filter(|o| o.failure.is_some()).count() {
                0 => Ok(()),
                n => Err(format!("{n} consistency check(s) failed")),
            }
        }
        Action::Run => match run_tpcc(a, wires, true)?.fatal {
            Some(f) => Err(f),
            None => Ok(()),
        },
    }
}

/// Drops the tables.
pub(crate) fn cleanup(a: &TpccArgs, wires: &Arc<WireFactory>, verbose: bool) -> Result<(), String> {
    let mut c = a.connect(wires)?;
    c.exec("SET SESSION foreign_key_checks = 0")?;
    for t in schema::TABLES {
        if verbose {
            println!("Dropping table '{t}'...");
        }
        c.exec(&format!("DROP TABLE IF EXISTS {t}"))?;
    }
    c.quit();
    Ok(())
}

/// Creates the tables and loads the initial database over `--threads` connections.
pub(crate) fn prepare(a: &TpccArgs, wires: &Arc<WireFactory>, verbose: bool) -> Result<(), String> {
    let scale = a.prepare_scale()?;
    let t0 = Instant::now();
    let mut c = a.connect(wires)?;
    c.exec("SET SESSION foreign_key_checks = 0")?;
    for sql in schema::create_tables(&a.storage_engine)
        .iter()
        .map(String::as_str)
        .chain(schema::INDEXES)
    {
        c.exec(sql)?;
    }
    if a.use_fk {
        for sql in schema::FOREIGN_KEYS {
            c.exec(sql)?;
        }
    }
    c.quit();
    let units = Arc::new(Mutex::new(
        load::units(&scale).into_iter().collect::<VecDeque<_>>(),
    ));
    let seed = a.seed();
    let threads = a.run.threads.max(1);
    if verbose {
        println!(
            "Loading {} warehouse(s) ({} items, {} customers per district) over {threads} connection(s)...",
            scale.warehouses, scale.items, scale.customers
        );
    }
    let handles: Vec<_> = (0..threads)
        .map(|t| {
            let (units, wires, a) = (units.clone(), wires.clone(), a.clone());
            std::thread::spawn(move || -> Result<(), String> {
                let mut c = a.connect(&wires)?;
                c.exec("SET SESSION foreign_key_checks = 0")?;
                let mut keys = Keys::new(scale, seed, seed ^ (t as u64 + 1) << 8);
                loop {
                    let Some(unit) = units.lock().expect("units").pop_front() else {
                        break;
                    };
                    if verbose {
                        println!("loading {unit:?}");
                    }
                    load::load(unit, &scale, &mut keys, &mut |sql: &str| {
                        c.exec(sql).map(|_| ())
                    })?;
                }
                c.quit();
                Ok(())
            })
        })
        .collect();
    for h in handles {
        h.join()
            .map_err(|_| "a loader thread panicked".to_string())??;
    }
    if verbose {
        println!("Loaded in {:.1}s", t0.elapsed().as_secs_f64());
    }
    Ok(())
}

/// One number from the first row of a query.
fn scalar(c: &mut Blocking, sql: &str) -> Result<u32, String> {
    let rows = c.rows(sql)?;
    let v = rows
        .first()
        .and_then(|r| r.first().cloned().flatten())
        .ok_or_else(|| {
            format!("no TPC-C data ({sql} returned nothing): run `tpbed-load tpcc prepare` first")
        })?;
    v.parse().map_err(|_| format!("{sql} returned {v:?}"))
}

/// The size the database was prepared with (warehouses: those `--warehouses` asks for).
fn prepared_scale(a: &TpccArgs, c: &mut Blocking) -> Result<Scale, String> {
    let have = scalar(c, "SELECT COUNT(*) FROM warehouse1")?;
    if a.warehouses == 0 || a.warehouses > have {
        return Err(format!(
            "--warehouses={} but the database has {have} warehouse(s)",
            a.warehouses
        ));
    }
    Ok(Scale {
        warehouses: a.warehouses,
        items: scalar(c, "SELECT MAX(i_id) FROM item1")?,
        customers: scalar(
            c,
            "SELECT MAX(c_id) FROM customer1 WHERE c_w_id = 1 AND c_d_id = 1",
        )?,
    })
}

/// Runs the consistency checks on every warehouse the database has, `--threads` at a time.
pub(crate) fn check(a: &TpccArgs, wires: &Arc<WireFactory>) -> Result<Vec<check::Outcome>, String> {
    let mut c = a.connect(wires)?;
    let warehouses = scalar(&mut c, "SELECT COUNT(*) FROM warehouse1")?;
    c.quit();
    let threads = (a.run.threads.max(1) as u32).min(warehouses.max(1));
    let handles: Vec<_> = (0..threads)
        .map(|t| {
            let (wires, a) = (wires.clone(), a.clone());
            std::thread::spawn(move || -> Result<Vec<check::Outcome>, String> {
                let mut c = a.connect(&wires)?;
                let mut out = Vec::new();
                for w in ((t + 1)..=warehouses).step_by(threads as usize) {
                    out.extend(check::check_warehouse(&mut c, w)?);
                }
                c.quit();
                Ok(out)
            })
        })
        .collect();
    let mut out = Vec::new();
    for h in handles {
        out.extend(
            h.join()
                .map_err(|_| "a check thread panicked".to_string())??,
        );
    }
    out.sort_by_key(|o| (o.warehouse, o.number));
    Ok(out)
}

/// Runs the mix; `live` prints interval lines and the report.
pub(crate) fn run_tpcc(
    a: &TpccArgs,
    wires: &Arc<WireFactory>,
    live: bool,
) -> Result<Report, String> {
    let mut c = a.connect(wires)?;
    let scale = prepared_scale(a, &mut c)?;
    c.quit();
    let seed = a.seed();
    let threads = a.run.threads.max(1);
    let engine = engine_config(&a.conn, &a.run, threads, seed)?;
    let rec = Arc::new(Mutex::new(TxnRecorder::new(TYPES)));
    let setup = vec![
        format!(
            "SET SESSION TRANSACTION ISOLATION LEVEL {}",
            a.trx_level.sql()
        ),
        "SET SESSION foreign_key_checks = 0".to_string(),
    ];
    let (rec2, ignore) = (rec.clone(), a.conn.ignore_errors.clone());
    let scripts = Arc::new(move |i: usize| -> Box<dyn Script> {
        Box::new(script::Terminal::new(
            Keys::new(
                scale,
                seed,
                seed.wrapping_add(i as u64 + 1).wrapping_mul(0x9e37_79b9),
            ),
            ignore.clone(),
            setup.clone(),
            rec2.clone(),
        ))
    });
    let load = Load::new(
        format!("tpcc ({} warehouse(s))", scale.warehouses),
        engine,
        scripts,
        wires.clone(),
        &a.run,
        live,
    );
    let mut report = run(load);
    let txns = rec
        .lock()
        .expect("tpcc recorder")
        .metrics(report.percentile);
    let new_orders = txns.first().map_or(0, |t| t.count);
    report.metrics.txns = txns;
    report.metrics.values = vec![Value {
        key: "tpmc",
        label: "New-Order transactions per minute (tpmC-like, not audited)",
        value: Ok(new_orders as f64 * 60.0 / report.secs.max(1e-9)),
        decimals: 1,
    }];
    report.metrics.notes = vec![
        (
            "warehouses / items / customers per district".into(),
            format!("{} / {} / {}", scale.warehouses, scale.items, scale.customers),
        ),
        (
            "mix / isolation / think time".into(),
            format!(
                "45% New-Order, 43% Payment, 4% each Order-Status, Delivery, Stock-Level / {} / none",
                a.trx_level.sql()
            ),
        ),
    ];
    if live {
        emit(&report, a.run.format, a.run.out.as_deref())?;
    }
    Ok(report)
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    #[derive(Debug, Parser)]
    struct Only {
        #[command(flatten)]
        a: TpccArgs,
    }

    #[test]
    fn options_parse_with_sysbench_tpcc_spellings() {
        let a = Only::try_parse_from([
            "x",
            "prepare",
            "--scale=4",
            "--use_fk=off",
            "--trx_level=RC",
            "--threads=2",
        ])
        .unwrap()
        .a;
        assert_eq!(a.action, Action::Prepare);
        assert_eq!(a.warehouses, 4);
        assert!(!a.use_fk);
        assert_eq!(a.trx_level, TrxLevel::Rc);
        assert_eq!(a.run.threads, 2);
        let s = a.prepare_scale().unwrap();
        assert_eq!((s.items, s.customers), (100_000, 3_000));
        let a = Only::try_parse_from(["x", "run", "--test-items=1000", "--test-customers=100"])
            .unwrap()
            .a;
        assert_eq!(a.warehouses, 1);
        assert_eq!(a.trx_level, TrxLevel::Rr);
        let s = a.prepare_scale().unwrap();
        assert_eq!((s.items, s.customers), (1000, 100));
        assert!(Only::try_parse_from(["x", "load"]).is_err());
        let a = Only::try_parse_from(["x", "prepare", "--warehouses=0"])
            .unwrap()
            .a;
        assert!(a.prepare_scale().is_err());
    }

    #[test]
    fn the_metric_keys_cover_every_type() {
        let keys = metric_keys();
        for t in TYPES {
            for f in ["tps", "p99_ms", "rollbacks", "lock_waits", "deadlocks"] {
                assert!(
                    keys.iter().any(|(k, _)| *k == format!("{t}_{f}")),
                    "{t}_{f}"
                );
            }
        }
        assert!(keys.iter().any(|(k, _)| k == "tpmc"));
    }
}
