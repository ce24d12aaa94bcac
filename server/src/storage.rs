//! The server's side of the storage engine: defines the engine's system variables, builds the
//! engine's typed configs from them at start-up, opens the redo log and the binary log in the
//! data directory, and registers the on-set hooks that carry `SET GLOBAL` of a storage variable
//! to the running engine.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::datadir::DataDir;
use crate::engine::lock::{LockConfig, ScheduleAlgorithm};
use crate::engine::redo::{FlushAtCommit, RedoConfig, RedoLog, DEFAULT_CAPACITY, REDO_DIR};
use crate::error::SqlResult;
use crate::startup::StartupError;
use crate::trx::{PurgeConfig, TrxSys};
use crate::vars::registry::{Scope, VarDef, VarType};
use crate::vars::{Registry, VarValue};

/// The storage engine's variables, with MySQL's names and the engine's typed configs'
/// defaults (which are MySQL's).
pub fn definitions() -> Vec<VarDef> {
    use Scope::{Both, Global};
    let int = |min: i64, max: i64| VarType::Int { min, max };
    let i = |v: u64| VarValue::Int(i64::try_from(v).unwrap_or(i64::MAX));
    let redo = RedoConfig::in_dir(PathBuf::new());
    let lock = LockConfig::default();
    let purge = PurgeConfig::default();
    vec![
        // Set at start-up to the real path (empty: a temporary directory).
        VarDef::new(
            "datadir",
            Global,
            VarType::Str,
            VarValue::Str(String::new()),
        )
        .read_only(),
        // The redo log and group commit.
        VarDef::new(
            "innodb_flush_log_at_trx_commit",
            Global,
            int(0, 2),
            i(redo.flush_at_commit as u64),
        ),
        VarDef::new(
            "innodb_flush_log_at_timeout",
            Global,
            int(1, 2700),
            i(redo.flush_timeout_s),
        ),
        VarDef::new(
            "innodb_log_group_home_dir",
            Global,
            VarType::Str,
            VarValue::Str("./".into()),
        )
        .read_only(),
        // The binary log: N syncs it at every Nth commit group; 0 writes it at commit and leaves
        // the sync to a background pass each second.
        VarDef::new(
            "sync_binlog",
            Global,
            int(0, 4_294_967_295),
            VarValue::Int(1),
        ),
        // Set at start-up to the binary log's path without its extension: `<datadir>/binlog`,
        // or the name `--log-bin=NAME` gives (relative to the datadir); empty when it is off.
        VarDef::new(
            "log_bin_basename",
            Global,
            VarType::Str,
            VarValue::Str(String::new()),
        )
        .read_only(),
        // Ours, not MySQL's: > 0 makes a log sync sleep this long instead of fdatasync.
        VarDef::new(
            "tpbed_log_fsync_us",
            Global,
            int(0, 10_000_000),
            i(redo.fsync_us),
        ),
        // Transactions, locks and purge.
        VarDef::new(
            "innodb_lock_wait_timeout",
            Both,
            int(1, 1_073_741_824),
            VarValue::Int(50),
        ),
        VarDef::new(
            "innodb_rollback_on_timeout",
            Global,
            VarType::Bool,
            VarValue::Bool(false),
        )
        .read_only(),
        VarDef::new(
            "innodb_deadlock_detect",
            Global,
            VarType::Bool,
            VarValue::Bool(lock.deadlock_detect),
        ),
        // Ours in MySQL 8.0 (MariaDB 10.2-10.5 had it, with fcfs and vats): CATS is what
        // 8.0.20+ always does.
        VarDef::new(
            "innodb_lock_schedule_algorithm",
            Global,
            VarType::Enum(&ScheduleAlgorithm::NAMES),
            VarValue::Str(lock.schedule.as_str().into()),
        ),
        VarDef::new(
            "innodb_print_all_deadlocks",
            Global,
            VarType::Bool,
            VarValue::Bool(false),
        ),
        VarDef::new(
            "innodb_table_locks",
            Both,
            VarType::Bool,
            VarValue::Bool(true),
        ),
        VarDef::new(
            "innodb_autoinc_lock_mode",
            Global,
            int(0, 2),
            VarValue::Int(2),
        )
        .read_only(),
        // Accepted; one purge coordinator thread does the work in tpbed.
        VarDef::new("innodb_purge_threads", Global, int(1, 32), VarValue::Int(4)).read_only(),
        VarDef::new(
            "innodb_purge_batch_size",
            Global,
            int(1, 5000),
            i(purge.batch_size),
        ),
        VarDef::new(
            "innodb_max_purge_lag",
            Global,
            int(0, i64::from(u32::MAX)),
            i(purge.max_purge_lag),
        ),
        VarDef::new(
            "innodb_max_purge_lag_delay",
            Global,
            int(0, 10_000_000),
            i(purge.max_purge_lag_delay),
        ),
        // Ours: lock-table shards (InnoDB 8.0 has 512 page shards).
        VarDef::new(
            "tpbed_lock_sys_shards",
            Global,
            int(1, 65_536),
            i(lock.shards as u64),
        )
        .read_only(),
    ]
}

/// The lock system's configuration from `tpbed_lock_sys_shards`,
/// `innodb_lock_schedule_algorithm` and `innodb_deadlock_detect`.
pub fn lock_config(vars: &Registry) -> LockConfig {
    LockConfig {
        shards: vars.global_by_name("tpbed_lock_sys_shards").as_int().max(1) as usize,
        schedule: ScheduleAlgorithm::parse(
            vars.global_by_name("innodb_lock_schedule_algorithm")
                .as_str(),
        )
        .unwrap_or(ScheduleAlgorithm::Cats),
        deadlock_detect: vars.global_by_name("innodb_deadlock_detect").as_bool(),
    }
}

/// Purge's configuration from `innodb_purge_batch_size`, `innodb_max_purge_lag` and
/// `innodb_max_purge_lag_delay`.
pub fn purge_config(vars: &Registry) -> PurgeConfig {
    PurgeConfig {
        batch_size: non_negative(&vars.global_by_name("innodb_purge_batch_size")),
        max_purge_lag: non_negative(&vars.global_by_name("innodb_max_purge_lag")),
        max_purge_lag_delay: non_negative(&vars.global_by_name("innodb_max_purge_lag_delay")),
    }
}

/// Resolves `datadir` (an empty value makes a temporary directory, removed when the returned
/// [`DataDir`] drops) and writes the real path back to `@@datadir`, then opens the redo log
/// under `innodb_log_group_home_dir` (relative to the datadir; default `./`) with the flush
/// variables' start-up values. Keep the [`DataDir`] until after the log is dropped (the
/// server declares it after the log, so dropping the server closes the log first).
pub fn open_redo(vars: &Registry) -> Result<(RedoLog, DataDir), StartupError> {
    let datadir =
        DataDir::resolve(vars.global_by_name("datadir").as_str()).map_err(StartupError::DataDir)?;
    if let Some(id) = vars.lookup("datadir") {
        vars.set_global_unchecked(id, VarValue::Str(datadir.shown()));
    }
    let home = vars.global_by_name("innodb_log_group_home_dir");
    let home = match home.as_str().trim() {
        "" => datadir.path().to_path_buf(),
        h => datadir.path().join(h),
    };
    let dir = home.join(REDO_DIR);
    let cfg = RedoConfig {
        capacity: DEFAULT_CAPACITY,
        flush_at_commit: FlushAtCommit::from_int(
            vars.global_by_name("innodb_flush_log_at_trx_commit")
                .as_int(),
        ),
        flush_timeout_s: non_negative(&vars.global_by_name("innodb_flush_log_at_timeout")),
        fsync_us: non_negative(&vars.global_by_name("tpbed_log_fsync_us")),
        ..RedoConfig::in_dir(dir.clone())
    };
    let log = RedoLog::open(cfg).map_err(|source| StartupError::Log {
        log: "redo log",
        dir: dir.clone(),
        source,
    })?;
    Ok((log, datadir))
}

/// The binary log's basename when `--log-bin` names none (MySQL 8.0's).
const DEFAULT_BINLOG_BASENAME: &str = "binlog";

/// Opens the binary log, `<basename>.000001`, when `log_bin` is ON (MySQL 8.0's default):
/// written at every commit that wrote rows, and synced at every `sync_binlog`th commit group
/// (never at commit when it is 0). The basename is `log_bin_basename` as `--log-bin=NAME` set
/// it, relative to the datadir and without its extension, as mysqld takes it (default
/// `binlog`); its full path is written back to `@@log_bin_basename`. None when `log_bin` is
/// OFF (`--skip-log-bin`, `--disable-log-bin`).
pub fn open_binlog(vars: &Registry, datadir: &DataDir) -> Result<Option<RedoLog>, StartupError> {
    let shown = vars.lookup("log_bin_basename");
    if !vars.global_by_name("log_bin").as_bool() {
        if let Some(id) = shown {
            vars.set_global_unchecked(id, VarValue::Str(String::new()));
        }
        return Ok(None);
    }
    let basename = binlog_basename(
        datadir.path(),
        vars.global_by_name("log_bin_basename").as_str(),
    );
    if let Some(id) = shown {
        vars.set_global_unchecked(id, VarValue::Str(basename.display().to_string()));
    }
    let dir = basename
        .parent()
        .map_or_else(|| datadir.path().to_path_buf(), PathBuf::from);
    let name = basename
        .file_name()
        .map_or(DEFAULT_BINLOG_BASENAME.into(), |n| n.to_string_lossy());
    let (flush_at_commit, sync_every_groups) =
        binlog_sync(vars.global_by_name("sync_binlog").as_int());
    let cfg = RedoConfig {
        file: format!("{name}.000001"),
        flush_at_commit,
        sync_every_groups,
        fsync_us: non_negative(&vars.global_by_name("tpbed_log_fsync_us")),
        ..RedoConfig::in_dir(dir.clone())
    };
    RedoLog::open(cfg)
        .map(Some)
        .map_err(|source| StartupError::Log {
            log: "binary log",
            dir,
            source,
        })
}

/// The binary log's path without extension for the `--log-bin` name `set` (empty: the
/// default): relative names are in `datadir`, and an extension is dropped, as mysqld drops it.
fn binlog_basename(datadir: &Path, set: &str) -> PathBuf {
    let set = set.trim();
    let path = datadir.join(if set.is_empty() {
        DEFAULT_BINLOG_BASENAME
    } else {
        set
    });
    match (path.file_stem(), path.extension()) {
        (Some(stem), Some(_)) => path.with_file_name(stem),
        _ => path,
    }
}

/// What a commit waits for in the binary log at `sync_binlog = n`, and every how many commit
/// groups it syncs: 0 only writes, N syncs every Nth group.
fn binlog_sync(n: i64) -> (FlushAtCommit, u64) {
    match u64::try_from(n) {
        Ok(0) | Err(_) => (FlushAtCommit::Write, 1),
        Ok(every) => (FlushAtCommit::Sync, every),
    }
}

/// Registers the on-set hooks of the storage variables: purge's three settings, the lock
/// system's deadlock detection and schedule, and the redo log's flush mode, timeout and
/// emulated sync, and the binary log's sync.
pub fn register_hooks(
    vars: &Registry,
    trx: &Arc<TrxSys>,
    redo: &Arc<RedoLog>,
    binlog: Option<&Arc<RedoLog>>,
) -> SqlResult<()> {
    let purge = |set: fn(&mut PurgeConfig, u64)| {
        let trx = Arc::clone(trx);
        move |n: u64| {
            let mut cfg = trx.purge_config();
            set(&mut cfg, n);
            trx.set_purge(cfg);
            Ok(())
        }
    };
    vars.on_set("innodb_purge_batch_size", purge(|c, n| c.batch_size = n))?;
    vars.on_set("innodb_max_purge_lag", purge(|c, n| c.max_purge_lag = n))?;
    vars.on_set(
        "innodb_max_purge_lag_delay",
        purge(|c, n| c.max_purge_lag_delay = n),
    )?;
    let t = Arc::clone(trx);
    vars.on_set("innodb_deadlock_detect", move |on: bool| {
        t.locks.set_deadlock_detect(on);
        Ok(())
    })?;
    let t = Arc::clone(trx);
    vars.on_set("innodb_lock_schedule_algorithm", move |name: String| {
        // The registry admits only the enum's names, which all parse.
        if let Some(a) = ScheduleAlgorithm::parse(&name) {
            t.locks.set_schedule(a);
        }
        Ok(())
    })?;
    let r = Arc::clone(redo);
    vars.on_set("innodb_flush_log_at_trx_commit", move |n: i64| {
        r.set_flush_at_commit(FlushAtCommit::from_int(n));
        Ok(())
    })?;
    let r = Arc::clone(redo);
    vars.on_set("innodb_flush_log_at_timeout", move |s: u64| {
        r.set_flush_timeout_s(s);
        Ok(())
    })?;
    let logs: Vec<Arc<RedoLog>> = std::iter::once(redo).chain(binlog).cloned().collect();
    vars.on_set("tpbed_log_fsync_us", move |us: u64| {
        for log in &logs {
            log.set_fsync_us(us);
        }
        Ok(())
    })?;
    let b = binlog.cloned();
    vars.on_set("sync_binlog", move |n: i64| {
        if let Some(b) = &b {
            let (mode, every) = binlog_sync(n);
            b.set_flush_at_commit(mode);
            b.set_sync_every_groups(every);
        }
        Ok(())
    })
}

/// A variable's value as a count (negative values, which validation rejects, as 0).
fn non_negative(v: &VarValue) -> u64 {
    u64::try_from(v.as_int()).unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use std::path::PathBuf;

    use crate::engine::redo::{FlushAtCommit, REDO_DIR, REDO_FILE};
    use crate::vars::VarValue;

    #[test]
    fn redo_server_builds_it_from_variables_and_set_global_reaches_it() {
        let base =
            std::env::temp_dir().join(format!("tpbed-redo-test-server-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&base);
        let args: Vec<String> = [
            format!("--datadir={}", base.join("data").display()),
            "--innodb-flush-log-at-trx-commit=2".to_string(),
            "--tpbed-log-fsync-us=500".to_string(),
        ]
        .into();
        let cfg = crate::config::parse_args(&args).unwrap();
        let server = crate::server::Server::from_config(&cfg).unwrap();
        let datadir = base.join("data").canonicalize().unwrap();
        assert_eq!(
            server.vars.global_by_name("datadir").as_str(),
            format!("{}/", datadir.display())
        );
        assert_eq!(
            server.redo.path(),
            datadir.join(REDO_DIR).join(REDO_FILE).as_path()
        );
        assert_eq!(server.redo.flush_at_commit(), FlushAtCommit::Write);
        let id = server
            .vars
            .lookup("innodb_flush_log_at_trx_commit")
            .unwrap();
        server.set_global(id, VarValue::Int(0)).unwrap();
        assert_eq!(server.redo.flush_at_commit(), FlushAtCommit::Background);
        assert_eq!(server.vars.global(id), VarValue::Int(0));
        let status = server.status(None);
        for name in [
            "Innodb_os_log_fsyncs",
            "Innodb_log_writes",
            "Innodb_os_log_written",
            "Innodb_log_write_requests",
            "Innodb_os_log_pending_fsyncs",
        ] {
            assert!(status.iter().any(|(k, _)| k == name), "{name} missing");
        }
        drop(server);
        assert!(datadir.is_dir(), "an explicit datadir is kept");
        let _ = std::fs::remove_dir_all(base);
    }

    #[test]
    fn log_bin_names_the_binary_log_as_mysqld_takes_it() {
        let base =
            std::env::temp_dir().join(format!("tpbed-binlog-test-name-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&base);
        let start = |extra: &[&str]| {
            let mut args = vec![format!("--datadir={}", base.join("data").display())];
            args.extend(extra.iter().map(|s| s.to_string()));
            crate::server::Server::from_config(&crate::config::parse_args(&args).unwrap()).unwrap()
        };
        std::fs::create_dir_all(base.join("data")).unwrap();
        let datadir = base.join("data").canonicalize().unwrap();
        let server = start(&[]);
        let binlog = server.binlog.as_ref().unwrap();
        assert_eq!(binlog.path(), datadir.join("binlog.000001").as_path());
        assert_eq!(
            server.vars.global_by_name("log_bin_basename").as_str(),
            datadir.join("binlog").display().to_string()
        );
        drop(server);
        // A name is relative to the datadir and loses its extension.
        let server = start(&["--log-bin=mysql-bin.log"]);
        assert!(server.vars.global_by_name("log_bin").as_bool());
        assert_eq!(
            server.binlog.as_ref().unwrap().path(),
            datadir.join("mysql-bin.000001").as_path()
        );
        drop(server);
        // An absolute path is kept; a later --log-bin turns an earlier --skip-log-bin back on.
        let elsewhere = base.join("logs").join("bin");
        let server = start(&[
            "--skip-log-bin",
            &format!("--log-bin={}", elsewhere.display()),
        ]);
        assert_eq!(
            server.binlog.as_ref().unwrap().path(),
            base.join("logs").join("bin.000001").as_path()
        );
        drop(server);
        let server = start(&["--log-bin=x", "--skip-log-bin"]);
        assert!(server.binlog.is_none());
        assert_eq!(server.vars.global_by_name("log_bin_basename").as_str(), "");
        drop(server);
        let _ = std::fs::remove_dir_all(base);
    }

    #[test]
    fn lock_schedule_algorithm_takes_vats_at_start_up_and_with_set_global() {
        use crate::engine::lock::ScheduleAlgorithm;
        let args = vec!["--innodb-lock-schedule-algorithm=VATS".to_string()];
        let server =
            crate::server::Server::from_config(&crate::config::parse_args(&args).unwrap()).unwrap();
        assert_eq!(server.trx.locks.schedule(), ScheduleAlgorithm::Vats);
        let id = server
            .vars
            .lookup("innodb_lock_schedule_algorithm")
            .unwrap();
        assert_eq!(server.vars.global(id), VarValue::Str("vats".into()));
        server.set_global(id, VarValue::Str("fcfs".into())).unwrap();
        assert_eq!(server.trx.locks.schedule(), ScheduleAlgorithm::Fcfs);
        server.set_global(id, VarValue::Str("vats".into())).unwrap();
        assert_eq!(server.trx.locks.schedule(), ScheduleAlgorithm::Vats);
    }

    #[test]
    fn redo_default_datadir_is_temporary() {
        let server = crate::server::Server::from_config(&crate::config::Config::default()).unwrap();
        let shown = server.vars.global_by_name("datadir").as_str().to_string();
        let expect = PathBuf::from(shown.trim_end_matches('/'));
        assert!(shown.ends_with('/'));
        assert!(expect.starts_with(std::env::temp_dir()));
        let name = expect.file_name().unwrap().to_str().unwrap().to_string();
        assert!(
            name.starts_with(&format!("tpbed-{}", std::process::id())),
            "{name}"
        );
        assert!(server.redo.path().is_file());
        assert_eq!(
            server
                .vars
                .global_by_name("innodb_log_group_home_dir")
                .as_str(),
            "./"
        );
        assert_eq!(
            server
                .vars
                .global_by_name("innodb_flush_log_at_trx_commit")
                .as_int(),
            1
        );
        drop(server);
        assert!(!expect.exists(), "removed with the server");
    }
}
