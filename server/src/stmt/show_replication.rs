//! The replication SHOW forms monitoring tools send. tpbed does not replicate, so the replica
//! forms answer with MySQL's columns and no rows, as a MySQL server that is no replica does.
//! The binary log forms give its one file and position: its events are only sizes (the volume
//! and syncs of commits), so the position is the 4-byte magic number every binary log starts
//! with plus the bytes commits appended.

use crate::core::Core;
use crate::error::{SqlError, SqlResult};
use crate::value::Value;

/// `SHOW SLAVE STATUS`'s columns (MySQL 8.0 keeps these names for the SLAVE spelling).
const SLAVE_STATUS: &[&str] = &[
    "Slave_IO_State",
    "Master_Host",
    "Master_User",
    "Master_Port",
    "Connect_Retry",
    "Master_Log_File",
    "Read_Master_Log_Pos",
    "Relay_Log_File",
    "Relay_Log_Pos",
    "Relay_Master_Log_File",
    "Slave_IO_Running",
    "Slave_SQL_Running",
    "Replicate_Do_DB",
    "Replicate_Ignore_DB",
    "Replicate_Do_Table",
    "Replicate_Ignore_Table",
    "Replicate_Wild_Do_Table",
    "Replicate_Wild_Ignore_Table",
    "Last_Errno",
    "Last_Error",
    "Skip_Counter",
    "Exec_Master_Log_Pos",
    "Relay_Log_Space",
    "Until_Condition",
    "Until_Log_File",
    "Until_Log_Pos",
    "Master_SSL_Allowed",
    "Master_SSL_CA_File",
    "Master_SSL_CA_Path",
    "Master_SSL_Cert",
    "Master_SSL_Cipher",
    "Master_SSL_Key",
    "Seconds_Behind_Master",
    "Master_SSL_Verify_Server_Cert",
    "Last_IO_Errno",
    "Last_IO_Error",
    "Last_SQL_Errno",
    "Last_SQL_Error",
    "Replicate_Ignore_Server_Ids",
    "Master_Server_Id",
    "Master_UUID",
    "Master_Info_File",
    "SQL_Delay",
    "SQL_Remaining_Delay",
    "Slave_SQL_Running_State",
    "Master_Retry_Count",
    "Master_Bind",
    "Last_IO_Error_Timestamp",
    "Last_SQL_Error_Timestamp",
    "Master_SSL_Crl",
    "Master_SSL_Crlpath",
    "Retrieved_Gtid_Set",
    "Executed_Gtid_Set",
    "Auto_Position",
    "Replicate_Rewrite_DB",
    "Channel_Name",
    "Master_TLS_Version",
    "Master_public_key_path",
    "Get_master_public_key",
    "Network_Namespace",
];

/// `SHOW SLAVE HOSTS`'s columns.
const SLAVE_HOSTS: &[&str] = &["Server_id", "Host", "Port", "Master_id", "Slave_UUID"];

/// `SHOW MASTER STATUS`'s columns.
pub const MASTER_STATUS: &[&str] = &[
    "File",
    "Position",
    "Binlog_Do_DB",
    "Binlog_Ignore_DB",
    "Executed_Gtid_Set",
];

/// `SHOW BINARY LOGS`'s columns.
pub const BINARY_LOGS: &[&str] = &["Log_name", "File_size", "Encrypted"];

/// The magic number at the start of every binary log file.
const BINLOG_MAGIC_BYTES: u64 = 4;

/// The binary log's file name and position, or None when `log_bin` is OFF.
fn binlog_position(core: &Core) -> Option<(String, u64)> {
    core.binlog.as_ref().map(|b| {
        let name = b.path().file_name().unwrap_or_default();
        (
            name.to_string_lossy().into_owned(),
            BINLOG_MAGIC_BYTES + b.stats().current_lsn,
        )
    })
}

/// `SHOW MASTER STATUS` (and 8.4's `SHOW BINARY LOG STATUS`): a row with the file and
/// position, no rows when `log_bin` is OFF.
pub fn master_status_rows(core: &Core) -> Vec<Vec<Value>> {
    binlog_position(core)
        .map(|(file, pos)| {
            vec![
                Value::str(&file),
                Value::UInt(pos),
                Value::str(""),
                Value::str(""),
                Value::str(""),
            ]
        })
        .into_iter()
        .collect()
}

/// `SHOW BINARY LOGS` (`SHOW MASTER LOGS`): the one file and its size; 1381 when `log_bin`
/// is OFF.
pub fn binary_logs_rows(core: &Core) -> SqlResult<Vec<Vec<Value>>> {
    let (file, size) = binlog_position(core).ok_or_else(|| {
        SqlError::new(
            crate::error::ErrorCode::NoBinaryLogging,
            "You are not using binary logging".to_string(),
        )
    })?;
    Ok(vec![vec![
        Value::str(&file),
        Value::UInt(size),
        Value::str("No"),
    ]])
}

/// MySQL 8.0.22's names for the REPLICA spellings: Slave becomes Replica, Master Source.
fn replica_names(slave: &[&str]) -> Vec<String> {
    slave
        .iter()
        .map(|c| {
            c.replace("Slave", "Replica")
                .replace("Master", "Source")
                .replace("master", "Source")
        })
        .collect()
}

fn names(cols: &[&str]) -> Vec<String> {
    cols.iter().map(|c| c.to_string()).collect()
}

/// The columns of the replication SHOW form `words` (upper case), or None if it is none.
pub fn columns(words: &[&str]) -> Option<Vec<String>> {
    Some(match words {
        ["SLAVE", "STATUS"] => names(SLAVE_STATUS),
        ["REPLICA", "STATUS"] => replica_names(SLAVE_STATUS),
        ["SLAVE", "HOSTS"] => names(SLAVE_HOSTS),
        ["REPLICAS"] => {
            let mut c = replica_names(SLAVE_HOSTS);
            c[0] = "Server_Id".into();
            c
        }
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn replica_spellings_take_mysqls_new_names() {
        let c = columns(&["REPLICA", "STATUS"]).unwrap();
        assert_eq!(c[0], "Replica_IO_State");
        assert!(c.contains(&"Seconds_Behind_Source".to_string()));
        assert!(c.contains(&"Get_Source_public_key".to_string()));
        assert_eq!(c.len(), SLAVE_STATUS.len());
        assert_eq!(
            columns(&["REPLICAS"]).unwrap(),
            ["Server_Id", "Host", "Port", "Source_id", "Replica_UUID"]
        );
        assert!(columns(&["SLAVE"]).is_none());
    }
}
