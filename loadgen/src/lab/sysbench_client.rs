//! A matrix cell run by the sysbench binary instead of tpbed-load's client, so the two clients
//! can be compared on the same server in one run: the cell's options are sysbench's own names,
//! its report is parsed for the metrics sysbench gives (the rest are missing, with why), and
//! the client's CPU is the child's user+system time.

use std::process::Command;

use crate::lab::target::Live;
use crate::lab::verdict::CellMetrics;
use crate::machine::proc_sample;

/// Options of a cell that are tpbed-load's, not sysbench's.
const NOT_SYSBENCH: &[&str] = &["workload"];

/// The sysbench command line of a cell given as tpbed-load's (`tpbed-load run --workload=W
/// --opt=v ...`), against `live`, for `time_s` seconds.
pub(crate) fn command_line(args: &[String], live: &Live, time_s: u64) -> Vec<String> {
    let workload = args
        .iter()
        .find_map(|a| a.strip_prefix("--workload="))
        .unwrap_or("oltp_read_only")
        .to_string();
    let mut out = vec![
        workload,
        "--db-driver=mysql".into(),
        format!("--mysql-host={}", live.addr.ip()),
        format!("--mysql-port={}", live.addr.port()),
        format!("--mysql-user={}", live.login.user),
        format!("--mysql-password={}", live.login.password),
        format!("--mysql-db={}", live.login.db),
        format!("--time={time_s}"),
        "--report-interval=0".into(),
        "--percentile=95".into(),
    ];
    for a in args.iter().skip(2) {
        let name = a
            .trim_start_matches("--")
            .split('=')
            .next()
            .unwrap_or_default();
        if !NOT_SYSBENCH.contains(&name) {
            out.push(a.clone());
        }
    }
    out.push("run".into());
    out
}

/// The number after `label` on its line of a sysbench report (`queries: 100 (9.5 per sec.)`
/// gives 100; with `per_sec`, 9.5).
fn number(report: &str, label: &str, per_sec: bool) -> Option<f64> {
    let line = report.lines().find(|l| l.trim_start().starts_with(label))?;
    let rest = line.trim_start()[label.len()..].trim();
    if per_sec {
        rest.split_once('(')?
            .1
            .split_whitespace()
            .next()?
            .parse()
            .ok()
    } else {
        rest.split_whitespace().next()?.parse().ok()
    }
}

/// Metrics of a sysbench report (`client_cpu_s`: the run's client CPU seconds; `server_cpu_s`
/// the server's, when known).
pub(crate) fn metrics(report: &str, client_cpu_s: f64, server_cpu_s: Option<f64>) -> CellMetrics {
    let get = |label: &str, per_sec: bool| {
        number(report, label, per_sec).ok_or_else(|| format!("not in sysbench's report ({label})"))
    };
    let not_given = || Err::<f64, String>("sysbench's report does not give it".into());
    let queries = get("queries:", false);
    let per_query = |secs: f64| match &queries {
        Ok(q) if *q > 0.0 => Ok(secs * 1e6 / q),
        Ok(_) => Err("no query completed".to_string()),
        Err(e) => Err(e.clone()),
    };
    [
        ("qps", get("queries:", true)),
        ("tps", get("transactions:", true)),
        ("avg_ms", get("avg:", false)),
        ("p95_ms", get("95th percentile:", false)),
        ("p99_ms", not_given()),
        ("max_ms", get("max:", false)),
        ("errors", get("ignored errors:", false)),
        ("client_cpu_us_per_query", per_query(client_cpu_s)),
        (
            "server_cpu_us_per_query",
            server_cpu_s.map_or_else(
                || Err("the server was not started by the lab (no PID for /proc)".into()),
                per_query,
            ),
        ),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v))
    .collect()
}

/// CPU seconds of this process's waited-for children so far.
fn children_cpu_secs() -> f64 {
    // SAFETY: getrusage writes into the struct it is given and nothing else.
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: as above; RUSAGE_CHILDREN is a valid `who`.
    if unsafe { libc::getrusage(libc::RUSAGE_CHILDREN, &mut ru) } != 0 {
        return 0.0;
    }
    let secs = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 / 1e6;
    secs(ru.ru_utime) + secs(ru.ru_stime)
}

/// Runs one cell with sysbench against `live`; its metrics.
pub(crate) fn run(args: &[String], live: &Live, time_s: u64) -> Result<CellMetrics, String> {
    let line = command_line(args, live, time_s);
    let server0 = live.pid().and_then(proc_sample);
    // the servers the lab started are children too, but none of them is reaped while
    // sysbench runs, so the children's CPU grows by sysbench's alone
    let cpu0 = children_cpu_secs();
    let out = Command::new("sysbench")
        .args(&line)
        .output()
        .map_err(|e| format!("sysbench: {e} (is it installed?)"))?;
    let client = children_cpu_secs() - cpu0;
    let server1 = live.pid().and_then(proc_sample);
    let text = String::from_utf8_lossy(&out.stdout);
    if !out.status.success() {
        let err = String::from_utf8_lossy(&out.stderr);
        let why = err
            .lines()
            .chain(text.lines())
            .find(|l| l.contains("FATAL") || l.contains("rror"))
            .unwrap_or("no message");
        return Err(format!("sysbench {} failed: {why}", line.join(" ")));
    }
    let server = match (server0, server1) {
        (Some(a), Some(b)) => Some(b.cpu_secs - a.cpu_secs),
        _ => None,
    };
    Ok(metrics(&text, client, server))
}

#[cfg(test)]
mod tests {
    use super::*;

    const REPORT: &str = "SQL statistics:
    queries performed:
        read:                            140000
        other:                           20000
        total:                           160000
    transactions:                        10000  (999.50 per sec.)
    queries:                             160000 (15992.00 per sec.)
    ignored errors:                      0      (0.00 per sec.)
    reconnects:                          0      (0.00 per sec.)

Latency (ms):
         min:                                    0.90
         avg:                                    8.00
         max:                                   42.10
         95th percentile:                       12.08
         sum:                                79990.00
";

    #[test]
    fn a_sysbench_report_gives_its_metrics_and_names_what_it_lacks() {
        let m: std::collections::BTreeMap<_, _> =
            metrics(REPORT, 1.6, Some(3.2)).into_iter().collect();
        assert_eq!(m["qps"], Ok(15992.0));
        assert_eq!(m["tps"], Ok(999.5));
        assert_eq!(m["avg_ms"], Ok(8.0));
        assert_eq!(m["p95_ms"], Ok(12.08));
        assert_eq!(m["max_ms"], Ok(42.1));
        assert_eq!(m["errors"], Ok(0.0));
        assert_eq!(m["client_cpu_us_per_query"], Ok(10.0));
        assert_eq!(m["server_cpu_us_per_query"], Ok(20.0));
        assert!(m["p99_ms"].as_ref().unwrap_err().contains("does not give"));
        let m: std::collections::BTreeMap<_, _> =
            metrics("FATAL: nothing", 1.0, None).into_iter().collect();
        assert!(m["qps"].is_err() && m["server_cpu_us_per_query"].is_err());
    }
}
