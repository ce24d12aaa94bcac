//! Start-up options of mysqld 8.0 that tpbed does not model and has no variable for: given on
//! the command line or in an option file, each is accepted with a warning in the error log
//! (instead of the unknown-variable error), so a production `my.cnf` or command line starts
//! the server.

/// The options, in their normalised spelling (lower case, underscores).
const OPTIONS: &[&str] = &[
    "binlog_cache_size",
    "binlog_expire_logs_seconds",
    "binlog_format",
    "binlog_row_image",
    "enforce_gtid_consistency",
    "gtid_mode",
    "innodb_adaptive_hash_index",
    "innodb_buffer_pool_instances",
    "innodb_doublewrite",
    "innodb_file_per_table",
    "innodb_flush_method",
    "innodb_flush_neighbors",
    "innodb_io_capacity",
    "innodb_io_capacity_max",
    "innodb_log_buffer_size",
    "innodb_log_file_size",
    "innodb_log_files_in_group",
    "innodb_open_files",
    "innodb_read_io_threads",
    "innodb_redo_log_capacity",
    "innodb_stats_persistent",
    "innodb_thread_concurrency",
    "innodb_write_io_threads",
    "log_bin_trust_function_creators",
    "log_queries_not_using_indexes",
    "log_replica_updates",
    "log_slave_updates",
    "log_slow_admin_statements",
    "log_timestamps",
    "max_binlog_size",
    "mysqlx",
    "pid_file",
    "read_buffer_size",
    "read_rnd_buffer_size",
    "relay_log",
    "slow_launch_time",
    "socket",
    "symbolic_links",
    "table_open_cache_triggers",
    "tmpdir",
    "transaction_write_set_extraction",
];

/// Whether `name` (normalised) is a mysqld option tpbed only accepts.
pub fn is_mysql_option(name: &str) -> bool {
    OPTIONS.contains(&name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn none_is_a_variable_tpbed_has() {
        let defs = crate::config::variable_definitions();
        let both: Vec<&&str> = OPTIONS
            .iter()
            .filter(|o| defs.iter().any(|d| d.name == **o))
            .collect();
        assert!(both.is_empty(), "tpbed variables: {both:?}");
    }
}
