//! The system variables tpbed knows, with MySQL 8.0's names, scopes and defaults.
//!
//! Each feature adds its variables here; a variable tpbed accepts but whose effect it does
//! not model says so in its comment.

use super::registry::{Feature, Scope, VarDef, VarType, VarValue};

/// `sql_mode` names in MySQL's canonical order.
pub const SQL_MODES: &[&str] = &[
    "REAL_AS_FLOAT",
    "PIPES_AS_CONCAT",
    "ANSI_QUOTES",
    "IGNORE_SPACE",
    "ONLY_FULL_GROUP_BY",
    "NO_UNSIGNED_SUBTRACTION",
    "NO_DIR_IN_CREATE",
    "ANSI",
    "NO_AUTO_VALUE_ON_ZERO",
    "NO_BACKSLASH_ESCAPES",
    "STRICT_TRANS_TABLES",
    "STRICT_ALL_TABLES",
    "NO_ZERO_IN_DATE",
    "NO_ZERO_DATE",
    "ALLOW_INVALID_DATES",
    "ERROR_FOR_DIVISION_BY_ZERO",
    "TRADITIONAL",
    "HIGH_NOT_PRECEDENCE",
    "NO_ENGINE_SUBSTITUTION",
    "PAD_CHAR_TO_FULL_LENGTH",
    "TIME_TRUNCATE_FRACTIONAL",
];

/// MySQL 8.0's default `sql_mode`.
pub const DEFAULT_SQL_MODE: &str = "ONLY_FULL_GROUP_BY,STRICT_TRANS_TABLES,NO_ZERO_IN_DATE,\
NO_ZERO_DATE,ERROR_FOR_DIVISION_BY_ZERO,NO_ENGINE_SUBSTITUTION";

/// MySQL 8.0's default `optimizer_switch`.
const OPTIMIZER_SWITCH: &str = "index_merge=on,index_merge_union=on,index_merge_sort_union=on,\
index_merge_intersection=on,engine_condition_pushdown=on,index_condition_pushdown=on,mrr=on,\
mrr_cost_based=on,block_nested_loop=on,batched_key_access=off,materialization=on,semijoin=on,\
loosescan=on,firstmatch=on,duplicateweedout=on,subquery_materialization_cost_based=on,\
use_index_extensions=on,condition_fanout_filter=on,derived_merge=on,use_invisible_indexes=off,\
skip_scan=on,hash_join=on,subquery_to_derived=off,prefer_ordering_index=on,\
hypergraph_optimizer=off,derived_condition_pushdown=on,hash_set_operations=on";

/// The server version reported in the handshake and by `VERSION()`.
pub const SERVER_VERSION: &str = "8.0.40-tpbed";

const ISOLATION_LEVELS: &[&str] = &[
    "READ-UNCOMMITTED",
    "READ-COMMITTED",
    "REPEATABLE-READ",
    "SERIALIZABLE",
];
const CHARSETS: &[&str] = &["utf8mb4", "utf8mb3", "utf8", "latin1", "binary", "ascii"];
const THREAD_HANDLING: &[&str] = &[
    "one-thread-per-connection",
    "pool-of-threads",
    "no-threads",
    "loaded-dynamically",
];

struct B {
    def: VarDef,
}

fn var(name: &'static str, scope: Scope, ty: VarType, default: VarValue) -> B {
    B {
        def: VarDef {
            name,
            scope,
            dynamic: true,
            session_read_only: false,
            ty,
            default,
            feature: Feature::Core,
        },
    }
}

impl B {
    fn read_only(mut self) -> B {
        self.def.dynamic = false;
        self
    }
    fn session_read_only(mut self) -> B {
        self.def.session_read_only = true;
        self
    }
}

fn int(min: i64, max: i64) -> VarType {
    VarType::Int { min, max }
}
fn i(v: i64) -> VarValue {
    VarValue::Int(v)
}
fn s(v: &str) -> VarValue {
    VarValue::Str(v.to_string())
}
fn b(v: bool) -> VarValue {
    VarValue::Bool(v)
}

/// Every variable definition (the registry keeps those of enabled features). The storage
/// engine's are defined in `crate::storage`, the query logs' in `crate::querylog`.
pub fn definitions() -> Vec<VarDef> {
    [
        identity_and_network(),
        connection_handling(),
        character_sets(),
        sql_behaviour(),
    ]
    .into_iter()
    .flatten()
    .map(|b| b.def)
    .collect()
}

/// Server identity and networking.
fn identity_and_network() -> Vec<B> {
    use Scope::*;
    const U32: i64 = u32::MAX as i64;
    vec![
        // Server identity and networking.
        var("version", Global, VarType::Str, s(SERVER_VERSION)).read_only(),
        var(
            "version_comment",
            Global,
            VarType::Str,
            s("tpbed test bed (MySQL protocol, in-memory engine)"),
        )
        .read_only(),
        var("version_compile_os", Global, VarType::Str, s("Linux")).read_only(),
        var(
            "version_compile_machine",
            Global,
            VarType::Str,
            s(std::env::consts::ARCH),
        )
        .read_only(),
        var("protocol_version", Global, int(0, 255), i(10)).read_only(),
        var("hostname", Global, VarType::Str, s("localhost")).read_only(),
        var("port", Global, int(0, 65535), i(3306)).read_only(),
        var("bind_address", Global, VarType::Str, s("127.0.0.1")).read_only(),
        var("server_id", Global, int(0, U32), i(1)),
        var("license", Global, VarType::Str, s("MIT OR Apache-2.0")).read_only(),
        var("have_ssl", Global, VarType::Str, s("DISABLED")).read_only(),
        var("skip_networking", Global, VarType::Bool, b(false)).read_only(),
        var("skip_name_resolve", Global, VarType::Bool, b(true)).read_only(),
        var("lower_case_table_names", Global, int(0, 2), i(0)).read_only(),
        var(
            "default_authentication_plugin",
            Global,
            VarType::Enum(&["caching_sha2_password", "mysql_native_password"]),
            s("caching_sha2_password"),
        )
        .read_only(),
        var("performance_schema", Global, VarType::Bool, b(true)).read_only(),
        var("system_time_zone", Global, VarType::Str, s("UTC")).read_only(),
        var("time_zone", Both, VarType::Str, s("SYSTEM")),
        var("open_files_limit", Global, int(0, i64::MAX), i(0)).read_only(),
        var("back_log", Global, int(1, 65535), i(151)).read_only(),
    ]
}

/// Connection handling, timeouts and file access.
fn connection_handling() -> Vec<B> {
    use Scope::*;
    const U32: i64 = u32::MAX as i64;
    vec![
        // Connection handling.
        var(
            "thread_handling",
            Global,
            VarType::Enum(THREAD_HANDLING),
            s("one-thread-per-connection"),
        )
        .read_only(),
        var("max_connections", Global, int(1, 100_000), i(151)),
        var("max_user_connections", Both, int(0, U32), i(0)),
        var("thread_cache_size", Global, int(0, 16384), i(9)),
        var("thread_stack", Global, int(131_072, i64::MAX), i(1_048_576)).read_only(),
        var(
            "max_allowed_packet",
            Both,
            int(1024, 1_073_741_824),
            i(67_108_864),
        )
        .session_read_only(),
        var("net_buffer_length", Both, int(1024, 1_048_576), i(16_384)).session_read_only(),
        var(
            "max_prepared_stmt_count",
            Global,
            int(0, 4_194_304),
            i(16_382),
        ),
        var("wait_timeout", Both, int(1, 31_536_000), i(28_800)),
        var("interactive_timeout", Both, int(1, 31_536_000), i(28_800)),
        var("connect_timeout", Global, int(2, 31_536_000), i(10)),
        var("net_read_timeout", Both, int(1, 31_536_000), i(30)),
        var("net_write_timeout", Both, int(1, 31_536_000), i(60)),
        // Bounds metadata-lock waits in MySQL; tpbed's DDL takes no metadata lock that waits.
        var("lock_wait_timeout", Both, int(1, 31_536_000), i(31_536_000)),
        var("init_connect", Global, VarType::Str, s("")),
        // LOAD DATA LOCAL: off by default, as in MySQL 8.0 (3948 while off).
        var("local_infile", Global, VarType::Bool, b(false)),
        // Where LOAD DATA INFILE / SELECT ... INTO OUTFILE may touch server files: empty is
        // anywhere, `NULL` nowhere, a directory only below it. MySQL's default depends on
        // the package layout; tpbed's is empty (a test bed, files under the user's control).
        var("secure_file_priv", Global, VarType::Str, s("")).read_only(),
    ]
}

/// Character sets and collations.
fn character_sets() -> Vec<B> {
    use Scope::*;
    vec![
        // Character sets (tpbed stores bytes and speaks utf8mb4; these are recorded and shown).
        var(
            "character_set_client",
            Both,
            VarType::Enum(CHARSETS),
            s("utf8mb4"),
        ),
        var(
            "character_set_connection",
            Both,
            VarType::Enum(CHARSETS),
            s("utf8mb4"),
        ),
        var("character_set_results", Both, VarType::Str, s("utf8mb4")),
        var(
            "character_set_server",
            Both,
            VarType::Enum(CHARSETS),
            s("utf8mb4"),
        ),
        var(
            "character_set_database",
            Both,
            VarType::Enum(CHARSETS),
            s("utf8mb4"),
        ),
        var("character_set_system", Global, VarType::Str, s("utf8mb3")).read_only(),
        var("character_set_filesystem", Both, VarType::Str, s("binary")),
        var(
            "collation_connection",
            Both,
            VarType::Str,
            s("utf8mb4_0900_ai_ci"),
        ),
        var(
            "collation_server",
            Both,
            VarType::Str,
            s("utf8mb4_0900_ai_ci"),
        ),
        var(
            "collation_database",
            Both,
            VarType::Str,
            s("utf8mb4_0900_ai_ci"),
        ),
    ]
}

/// SQL behaviour, logs and the options tpbed accepts without modelling.
fn sql_behaviour() -> Vec<B> {
    use Scope::*;
    vec![
        // SQL behaviour.
        var("autocommit", Both, VarType::Bool, b(true)),
        var(
            "sql_mode",
            Both,
            VarType::Set(SQL_MODES),
            s(DEFAULT_SQL_MODE),
        ),
        var(
            "transaction_isolation",
            Both,
            VarType::Enum(ISOLATION_LEVELS),
            s("REPEATABLE-READ"),
        ),
        var("transaction_read_only", Both, VarType::Bool, b(false)),
        var("auto_increment_increment", Both, int(1, 65535), i(1)),
        var("auto_increment_offset", Both, int(1, 65535), i(1)),
        var("sql_select_limit", Both, int(0, i64::MAX), i(i64::MAX)),
        var("sql_safe_updates", Both, VarType::Bool, b(false)),
        var("sql_auto_is_null", Both, VarType::Bool, b(false)),
        var("sql_notes", Both, VarType::Bool, b(true)),
        var("sql_warnings", Both, VarType::Bool, b(false)),
        var("sql_quote_show_create", Both, VarType::Bool, b(true)),
        var("foreign_key_checks", Both, VarType::Bool, b(true)),
        var("unique_checks", Both, VarType::Bool, b(true)),
        var("big_tables", Both, VarType::Bool, b(false)),
        var("div_precision_increment", Both, int(0, 30), i(4)),
        var("group_concat_max_len", Both, int(4, i64::MAX), i(1024)),
        var("max_error_count", Both, int(0, 65535), i(1024)),
        // The session's diagnostics counts (the statement before the one reading them).
        var("warning_count", Session, int(0, i64::MAX), i(0)).read_only(),
        var("error_count", Session, int(0, i64::MAX), i(0)).read_only(),
        var("tmp_table_size", Both, int(1024, i64::MAX), i(16_777_216)),
        var(
            "max_heap_table_size",
            Both,
            int(16_384, i64::MAX),
            i(16_777_216),
        ),
        var("sort_buffer_size", Both, int(32_768, i64::MAX), i(262_144)),
        var("join_buffer_size", Both, int(128, i64::MAX), i(262_144)),
        var("default_storage_engine", Both, VarType::Str, s("InnoDB")),
        var(
            "default_tmp_storage_engine",
            Both,
            VarType::Str,
            s("InnoDB"),
        ),
        var(
            "explicit_defaults_for_timestamp",
            Both,
            VarType::Bool,
            b(true),
        ),
        var(
            "session_track_gtids",
            Both,
            VarType::Enum(&["OFF", "OWN_GTID", "ALL_GTIDS"]),
            s("OFF"),
        ),
        var(
            "session_track_transaction_info",
            Both,
            VarType::Enum(&["OFF", "STATE", "CHARACTERISTICS"]),
            s("OFF"),
        ),
        var(
            "query_cache_type",
            Both,
            VarType::Enum(&["OFF", "ON", "DEMAND"]),
            s("OFF"),
        ),
        var("query_cache_size", Global, int(0, i64::MAX), i(0)),
        // Accepted and shown: tpbed keeps every table open, with no cache to size.
        var("table_open_cache", Global, int(1, 524_288), i(4000)),
        var("table_definition_cache", Global, int(400, 524_288), i(2000)).read_only(),
        var("table_open_cache_instances", Global, int(1, 64), i(16)).read_only(),
        // Accepted and shown: tpbed has no cost-based optimizer to switch.
        var("optimizer_switch", Both, VarType::Str, s(OPTIMIZER_SWITCH)),
        // Accepted and shown: tpbed has no MyISAM key cache.
        var("key_buffer_size", Global, int(0, i64::MAX), i(8_388_608)),
        var("key_cache_block_size", Global, int(512, 16_384), i(1024)),
        // The query log variables are defined in `crate::querylog`.
        // The binary log (crate::storage): ON as in MySQL 8.0; --skip-log-bin turns it off.
        var("log_bin", Global, VarType::Bool, b(true)).read_only(),
        var(
            "event_scheduler",
            Global,
            VarType::Enum(&["OFF", "ON", "DISABLED"]),
            s("OFF"),
        ),
        var(
            "innodb_buffer_pool_size",
            Global,
            int(5_242_880, i64::MAX),
            i(134_217_728),
        ),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_unique_and_normalized() {
        let defs = definitions();
        let mut names: Vec<&str> = defs.iter().map(|d| d.name).collect();
        for n in &names {
            assert_eq!(*n, n.to_ascii_lowercase().replace('-', "_"));
        }
        names.sort();
        names.dedup();
        assert_eq!(names.len(), defs.len());
    }
}
