//! Client commands (the first payload byte of every packet after login), decoded by borrowing
//! from the packet, and the binary parameters of COM_STMT_EXECUTE.

use crate::column::ColumnType;
use crate::error::ProtocolError;
use crate::lenenc::{put_nul_str, put_u16, put_u32, Reader};
use crate::value::BinaryValue;

/// Command bytes (`enum_server_command`) this crate decodes.
pub mod code {
    /// COM_QUIT.
    pub const QUIT: u8 = 0x01;
    /// COM_INIT_DB.
    pub const INIT_DB: u8 = 0x02;
    /// COM_QUERY.
    pub const QUERY: u8 = 0x03;
    /// COM_FIELD_LIST.
    pub const FIELD_LIST: u8 = 0x04;
    /// COM_STATISTICS.
    pub const STATISTICS: u8 = 0x09;
    /// COM_PROCESS_KILL.
    pub const PROCESS_KILL: u8 = 0x0C;
    /// COM_DEBUG.
    pub const DEBUG: u8 = 0x0D;
    /// COM_PING.
    pub const PING: u8 = 0x0E;
    /// COM_CHANGE_USER.
    pub const CHANGE_USER: u8 = 0x11;
    /// COM_STMT_PREPARE.
    pub const STMT_PREPARE: u8 = 0x16;
    /// COM_STMT_EXECUTE.
    pub const STMT_EXECUTE: u8 = 0x17;
    /// COM_STMT_SEND_LONG_DATA.
    pub const STMT_SEND_LONG_DATA: u8 = 0x18;
    /// COM_STMT_CLOSE.
    pub const STMT_CLOSE: u8 = 0x19;
    /// COM_STMT_RESET.
    pub const STMT_RESET: u8 = 0x1A;
    /// COM_SET_OPTION.
    pub const SET_OPTION: u8 = 0x1B;
    /// COM_STMT_FETCH.
    pub const STMT_FETCH: u8 = 0x1C;
    /// COM_RESET_CONNECTION.
    pub const RESET_CONNECTION: u8 = 0x1F;
}

/// COM_SET_OPTION's argument: multi-statements on.
pub const MYSQL_OPTION_MULTI_STATEMENTS_ON: u16 = 0;
/// COM_SET_OPTION's argument: multi-statements off.
pub const MYSQL_OPTION_MULTI_STATEMENTS_OFF: u16 = 1;

/// One decoded client command; byte fields borrow from the packet payload.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Command<'a> {
    /// Close the connection (no reply).
    Quit,
    /// Change the default database.
    InitDb(&'a [u8]),
    /// A text-protocol statement (possibly several with MULTI_STATEMENTS).
    Query(&'a [u8]),
    /// List a table's columns (sent by the mysql CLI's auto-rehash).
    FieldList {
        /// The table name.
        table: &'a [u8],
        /// A LIKE pattern for column names (often empty).
        wildcard: &'a [u8],
    },
    /// A one-line status string (`mysqladmin status`, the CLI's `\s`).
    Statistics,
    /// Kill a connection by id (the old form of `KILL`).
    ProcessKill(u32),
    /// Dump debug information to the server log.
    Debug,
    /// Liveness check; answered with OK.
    Ping,
    /// Re-authenticate as another user on this connection.
    ChangeUser(ChangeUser<'a>),
    /// Prepare a statement.
    StmtPrepare(&'a [u8]),
    /// Execute a prepared statement.
    StmtExecute(StmtExecute<'a>),
    /// Send a chunk of a parameter's value ahead of execute (no reply).
    StmtSendLongData {
        /// The statement.
        stmt_id: u32,
        /// Zero-based parameter index.
        param: u16,
        /// The chunk.
        data: &'a [u8],
    },
    /// Deallocate a prepared statement (no reply).
    StmtClose(u32),
    /// Drop long data and cursors of a statement; answered with OK.
    StmtReset(u32),
    /// Fetch rows from a cursor.
    StmtFetch {
        /// The statement.
        stmt_id: u32,
        /// How many rows.
        num_rows: u32,
    },
    /// Turn multi-statements on or off (see the `MYSQL_OPTION_*` constants).
    SetOption(u16),
    /// Reset session state without re-authenticating.
    ResetConnection,
}

/// COM_CHANGE_USER, as sent by 4.1+ clients (SECURE_CONNECTION auth response).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChangeUser<'a> {
    /// The new user.
    pub user: &'a [u8],
    /// The auth response computed with the connection's current nonce.
    pub auth_response: &'a [u8],
    /// The new default database (may be empty).
    pub database: &'a [u8],
    /// The client's collation id, when sent.
    pub charset: Option<u16>,
    /// The auth plugin the response was computed with, when sent.
    pub auth_plugin: Option<&'a [u8]>,
    /// Connection attributes, undecoded (a lenenc-prefixed block), when sent.
    pub connect_attrs: &'a [u8],
}

/// COM_STMT_EXECUTE's fixed part; `params` is decoded with [`decode_execute_params`] once the
/// statement's parameter count is known.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StmtExecute<'a> {
    /// The statement.
    pub stmt_id: u32,
    /// Cursor flags (0 = no cursor).
    pub flags: u8,
    /// Always 1.
    pub iteration_count: u32,
    /// The rest of the payload: null bitmap, new-params-bound flag, types, values.
    pub params: &'a [u8],
}

impl<'a> Command<'a> {
    /// Decodes a command payload. A command byte this crate does not handle is
    /// [`ProtocolError::UnknownCommand`] (answered with error 1047).
    pub fn decode(payload: &'a [u8]) -> Result<Self, ProtocolError> {
        let mut r = Reader::new(payload);
        let cmd = r.u8()?;
        Ok(match cmd {
            code::QUIT => Self::Quit,
            code::INIT_DB => Self::InitDb(r.rest()),
            code::QUERY => Self::Query(r.rest()),
            code::FIELD_LIST => {
                let table = r.nul_str()?;
                Self::FieldList {
                    table,
                    wildcard: r.rest(),
                }
            }
            code::STATISTICS => Self::Statistics,
            code::PROCESS_KILL => Self::ProcessKill(r.u32()?),
            code::DEBUG => Self::Debug,
            code::PING => Self::Ping,
            code::CHANGE_USER => Self::ChangeUser(ChangeUser::decode(&mut r)?),
            code::STMT_PREPARE => Self::StmtPrepare(r.rest()),
            code::STMT_EXECUTE => Self::StmtExecute(StmtExecute {
                stmt_id: r.u32()?,
                flags: r.u8()?,
                iteration_count: r.u32()?,
                params: r.rest(),
            }),
            code::STMT_SEND_LONG_DATA => Self::StmtSendLongData {
                stmt_id: r.u32()?,
                param: r.u16()?,
                data: r.rest(),
            },
            code::STMT_CLOSE => Self::StmtClose(r.u32()?),
            code::STMT_RESET => Self::StmtReset(r.u32()?),
            code::STMT_FETCH => Self::StmtFetch {
                stmt_id: r.u32()?,
                num_rows: r.u32()?,
            },
            code::SET_OPTION => Self::SetOption(r.u16()?),
            code::RESET_CONNECTION => Self::ResetConnection,
            other => return Err(ProtocolError::UnknownCommand(other)),
        })
    }

    /// Appends the command payload (client side).
    pub fn encode(&self, out: &mut Vec<u8>) {
        match self {
            Self::Quit => out.push(code::QUIT),
            Self::InitDb(db) => {
                out.push(code::INIT_DB);
                out.extend_from_slice(db);
            }
            Self::Query(sql) => {
                out.push(code::QUERY);
                out.extend_from_slice(sql);
            }
            Self::FieldList { table, wildcard } => {
                out.push(code::FIELD_LIST);
                put_nul_str(out, table);
                out.extend_from_slice(wildcard);
            }
            Self::Statistics => out.push(code::STATISTICS),
            Self::ProcessKill(id) => {
                out.push(code::PROCESS_KILL);
                put_u32(out, *id);
            }
            Self::Debug => out.push(code::DEBUG),
            Self::Ping => out.push(code::PING),
            Self::ChangeUser(cu) => cu.encode(out),
            Self::StmtPrepare(sql) => {
                out.push(code::STMT_PREPARE);
                out.extend_from_slice(sql);
            }
            Self::StmtExecute(ex) => {
                out.push(code::STMT_EXECUTE);
                put_u32(out, ex.stmt_id);
                out.push(ex.flags);
                put_u32(out, ex.iteration_count);
                out.extend_from_slice(ex.params);
            }
            Self::StmtSendLongData {
                stmt_id,
                param,
                data,
            } => {
                out.push(code::STMT_SEND_LONG_DATA);
                put_u32(out, *stmt_id);
                put_u16(out, *param);
                out.extend_from_slice(data);
            }
            Self::StmtClose(id) => {
                out.push(code::STMT_CLOSE);
                put_u32(out, *id);
            }
            Self::StmtReset(id) => {
                out.push(code::STMT_RESET);
                put_u32(out, *id);
            }
            Self::StmtFetch { stmt_id, num_rows } => {
                out.push(code::STMT_FETCH);
                put_u32(out, *stmt_id);
                put_u32(out, *num_rows);
            }
            Self::SetOption(opt) => {
                out.push(code::SET_OPTION);
                put_u16(out, *opt);
            }
            Self::ResetConnection => out.push(code::RESET_CONNECTION),
        }
    }
}

impl<'a> ChangeUser<'a> {
    fn decode(r: &mut Reader<'a>) -> Result<Self, ProtocolError> {
        let user = r.nul_str()?;
        let n = r.u8()?;
        let auth_response = r.fixed(usize::from(n))?;
        let database = r.nul_str_or_rest();
        let charset = if r.is_empty() { None } else { Some(r.u16()?) };
        let auth_plugin = if r.is_empty() {
            None
        } else {
            Some(r.nul_str_or_rest())
        };
        Ok(Self {
            user,
            auth_response,
            database,
            charset,
            auth_plugin,
            connect_attrs: r.rest(),
        })
    }

    fn encode(&self, out: &mut Vec<u8>) {
        out.push(code::CHANGE_USER);
        put_nul_str(out, self.user);
        let n = self.auth_response.len().min(255);
        out.push(n as u8);
        out.extend_from_slice(&self.auth_response[..n]);
        put_nul_str(out, self.database);
        if let Some(cs) = self.charset {
            put_u16(out, cs);
            if let Some(plugin) = self.auth_plugin {
                put_nul_str(out, plugin);
                out.extend_from_slice(self.connect_attrs);
            }
        }
    }
}

/// The unsigned bit in a parameter's type flag byte.
const PARAM_UNSIGNED: u8 = 0x80;

/// Decodes COM_STMT_EXECUTE's parameters for a statement with `num_params` placeholders.
///
/// When the new-params-bound flag is 1 the types are read and stored into `types`; when it is
/// 0 the types stored by the previous execute of the statement are used (sysbench sends types
/// only on the first execute). Parameters sent with COM_STMT_SEND_LONG_DATA are not in the
/// packet; use [`decode_execute_params_with_long_data`] for those.
pub fn decode_execute_params(
    rest: &[u8],
    num_params: usize,
    types: &mut Vec<(ColumnType, bool)>,
) -> Result<Vec<BinaryValue>, ProtocolError> {
    decode_execute_params_with_long_data(rest, num_params, types, &[])
}

/// Like [`decode_execute_params`], but a parameter `i` with `long_data[i] == true` is not read
/// from the packet and comes back as an empty [`BinaryValue::Bytes`] for the caller to replace
/// with the data it collected.
pub fn decode_execute_params_with_long_data(
    rest: &[u8],
    num_params: usize,
    types: &mut Vec<(ColumnType, bool)>,
    long_data: &[bool],
) -> Result<Vec<BinaryValue>, ProtocolError> {
    if num_params == 0 {
        return Ok(Vec::new());
    }
    let mut r = Reader::new(rest);
    let null_bitmap = r.fixed(num_params.div_ceil(8))?;
    match r.u8()? {
        0 => {
            if types.len() != num_params {
                return Err(ProtocolError::Malformed("execute without parameter types"));
            }
        }
        1 => {
            // Each type is 2 bytes; check before allocating for a hostile num_params.
            if r.remaining() < num_params.saturating_mul(2) {
                return Err(ProtocolError::Truncated);
            }
            types.clear();
            for _ in 0..num_params {
                let ty = ColumnType::try_from_u8(r.u8()?)?;
                types.push((ty, r.u8()? & PARAM_UNSIGNED != 0));
            }
        }
        _ => return Err(ProtocolError::Malformed("new-params-bound flag")),
    }
    let mut values = Vec::with_capacity(num_params.min(r.remaining() + 64));
    for (i, &(ty, unsigned)) in types.iter().enumerate() {
        let is_null = null_bitmap
            .get(i / 8)
            .is_some_and(|b| b & (1 << (i % 8)) != 0);
        values.push(if is_null {
            BinaryValue::Null
        } else if long_data.get(i).copied().unwrap_or(false) {
            BinaryValue::Bytes(Vec::new())
        } else {
            BinaryValue::decode(&mut r, ty, unsigned)?
        });
    }
    Ok(values)
}

/// Encodes COM_STMT_EXECUTE's parameter block (client side). With `send_types` the
/// new-params-bound flag is 1 and each value's [`BinaryValue::natural_type`] is sent.
pub fn encode_execute_params(values: &[BinaryValue], send_types: bool, out: &mut Vec<u8>) {
    if values.is_empty() {
        return;
    }
    let bitmap_at = out.len();
    out.resize(bitmap_at + values.len().div_ceil(8), 0);
    for (i, v) in values.iter().enumerate() {
        if matches!(v, BinaryValue::Null) {
            out[bitmap_at + i / 8] |= 1 << (i % 8);
        }
    }
    out.push(u8::from(send_types));
    if send_types {
        for v in values {
            let (ty, unsigned) = v.natural_type();
            out.extend_from_slice(&[ty as u8, if unsigned { PARAM_UNSIGNED } else { 0 }]);
        }
    }
    for v in values {
        v.encode(v.natural_type().0, out);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unknown_and_truncated_commands() {
        assert_eq!(
            Command::decode(&[0x00]),
            Err(ProtocolError::UnknownCommand(0))
        );
        assert_eq!(
            Command::decode(&[0x20]),
            Err(ProtocolError::UnknownCommand(0x20))
        );
        assert_eq!(Command::decode(&[]), Err(ProtocolError::Truncated));
        assert_eq!(
            Command::decode(&[code::STMT_CLOSE, 1, 2]),
            Err(ProtocolError::Truncated)
        );
    }

    #[test]
    fn commands_round_trip() {
        let params = [0u8, 1, 8, 0, 42, 0, 0, 0, 0, 0, 0, 0];
        let cu = ChangeUser {
            user: b"u",
            auth_response: &[1; 20],
            database: b"db",
            charset: Some(45),
            auth_plugin: Some(b"mysql_native_password"),
            connect_attrs: &[0],
        };
        let cmds = [
            Command::Quit,
            Command::InitDb(b"db"),
            Command::Query(b"SELECT 1"),
            Command::FieldList {
                table: b"t",
                wildcard: b"%",
            },
            Command::Statistics,
            Command::ProcessKill(9),
            Command::Debug,
            Command::Ping,
            Command::ChangeUser(cu),
            Command::StmtPrepare(b"SELECT ?"),
            Command::StmtExecute(StmtExecute {
                stmt_id: 3,
                flags: 0,
                iteration_count: 1,
                params: &params,
            }),
            Command::StmtSendLongData {
                stmt_id: 3,
                param: 1,
                data: b"xx",
            },
            Command::StmtClose(3),
            Command::StmtReset(3),
            Command::StmtFetch {
                stmt_id: 3,
                num_rows: 10,
            },
            Command::SetOption(MYSQL_OPTION_MULTI_STATEMENTS_OFF),
            Command::ResetConnection,
        ];
        for c in cmds {
            let mut out = Vec::new();
            c.encode(&mut out);
            assert_eq!(Command::decode(&out), Ok(c));
        }
    }

    #[test]
    fn sysbench_style_params_reuse_types() {
        // First execute: new-params-bound = 1, LONGLONG signed 42.
        let values = [
            BinaryValue::Int(42),
            BinaryValue::Bytes(b"abc".to_vec()),
            BinaryValue::Null,
        ];
        let mut first = Vec::new();
        encode_execute_params(&values, true, &mut first);
        let mut types = Vec::new();
        assert_eq!(
            decode_execute_params(&first, 3, &mut types),
            Ok(values.to_vec())
        );
        assert_eq!(types[0], (ColumnType::LongLong, false));
        // Later execute: flag 0, types reused.
        let mut later = Vec::new();
        encode_execute_params(&values, false, &mut later);
        assert_eq!(
            decode_execute_params(&later, 3, &mut types),
            Ok(values.to_vec())
        );
        assert!(decode_execute_params(&later, 3, &mut Vec::new()).is_err());
        assert_eq!(
            decode_execute_params(&first, 1000, &mut types),
            Err(ProtocolError::Truncated)
        );
    }
}
