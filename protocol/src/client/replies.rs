//! Parsing the replies to commands: one packet at a time, for the oldest command in flight,
//! whatever the reply's shape (OK, ERR, result sets, prepare metadata, field lists).
//!
//! Invariant: a reply's stage only moves forward, and `on_reply` says when the reply is
//! complete so the connection can move on to the next command's reply.

use std::collections::HashMap;
use std::sync::Arc;

use super::{ClientEvent, RowData};
use crate::caps::{Capabilities, StatusFlags};
use crate::column::ColumnDefinition;
use crate::error::ProtocolError;
use crate::lenenc::Reader;
use crate::packet::write_packet;
use crate::reply::{is_result_terminator, EofPacket, ErrPacket, OkPacket, StmtPrepareOk};

/// Column definitions being collected, with the EOF that follows them without DEPRECATE_EOF.
#[derive(Debug)]
pub(super) struct Defs {
    left: usize,
    eof_pending: bool,
    defs: Vec<ColumnDefinition>,
}

impl Defs {
    fn new(n: usize, caps: Capabilities) -> Self {
        let eof_pending = n > 0 && !caps.contains(Capabilities::DEPRECATE_EOF);
        Self {
            left: n,
            eof_pending,
            defs: Vec::with_capacity(n.min(256)),
        }
    }

    fn done(&self) -> bool {
        self.left == 0 && !self.eof_pending
    }

    fn push(&mut self, payload: &[u8]) -> Result<(), ProtocolError> {
        if self.left > 0 {
            self.defs.push(ColumnDefinition::decode(payload)?);
            self.left -= 1;
        } else if is_result_terminator(payload, Capabilities::empty()) {
            self.eof_pending = false;
        } else {
            return Err(ProtocolError::UnexpectedPacket(
                "expected EOF after column definitions",
            ));
        }
        Ok(())
    }
}

#[derive(Debug)]
pub(super) enum Expect {
    /// COM_QUERY / COM_STMT_EXECUTE / a raw command: OK, ERR or result sets.
    Results { binary: bool, stage: ResultStage },
    /// COM_STMT_PREPARE.
    Prepare { stage: PrepareStage },
    /// OK or ERR (an EOF counts as OK: COM_SET_OPTION answers with one without DEPRECATE_EOF).
    Ok,
    /// COM_STATISTICS: a bare string.
    Statistics,
    /// COM_FIELD_LIST: definitions up to a terminator.
    FieldList(Vec<ColumnDefinition>),
}

#[derive(Debug)]
pub(super) enum ResultStage {
    Start,
    Columns(Defs),
    Rows,
}

#[derive(Debug)]
pub(super) enum PrepareStage {
    Start,
    Params {
        ok: StmtPrepareOk,
        params: Defs,
    },
    Columns {
        ok: StmtPrepareOk,
        params: Vec<ColumnDefinition>,
        columns: Defs,
    },
}

#[derive(Debug)]
pub(super) struct Pending {
    pub(super) expect: Expect,
    /// The sequence id the next packet of this reply must carry.
    pub(super) seq: u8,
    /// COM_STMT_EXECUTE: the statement, whose cached result columns stand in for metadata the
    /// server skips (MARIADB_CLIENT_CACHE_METADATA).
    pub(super) stmt: Option<u32>,
}

/// Result columns per prepared statement, kept when MARIADB_CLIENT_CACHE_METADATA is in
/// effect: the server then sends an execute's column definitions only when they changed.
pub(super) type ColumnCache = HashMap<u32, Arc<[ColumnDefinition]>>;

/// Parses one packet of the oldest reply: the event it produces (if any) and whether the
/// reply is complete. A row takes `payload` into its event; any other packet leaves it for the
/// caller to reuse.
pub(super) fn on_reply(
    p: &mut Pending,
    caps: Capabilities,
    payload: &mut Vec<u8>,
    out: &mut Vec<u8>,
    cache: Option<&mut ColumnCache>,
) -> Result<(Option<ClientEvent>, bool), ProtocolError> {
    let first = payload.first().copied();
    let stmt = p.stmt;
    match &mut p.expect {
        Expect::Results { binary, stage } => match stage {
            ResultStage::Start => match first {
                Some(OkPacket::HEADER) => {
                    let ok = OkPacket::decode(payload, caps)?;
                    let more = ok.status.contains(StatusFlags::MORE_RESULTS_EXISTS);
                    Ok((Some(ClientEvent::Ok(ok)), !more))
                }
                Some(ErrPacket::HEADER) => {
                    Ok((Some(ClientEvent::Error(ErrPacket::decode(payload)?)), true))
                }
                Some(0xFB) => {
                    // LOCAL INFILE request: decline with an empty packet; OK or ERR follows.
                    write_packet(out, &mut p.seq, &[]);
                    Ok((None, false))
                }
                _ => {
                    let mut r = Reader::new(payload);
                    let n = r.lenenc_int()?;
                    if n == 0 {
                        return Err(ProtocolError::Malformed("result set with zero columns"));
                    }
                    let n =
                        usize::try_from(n).map_err(|_| ProtocolError::Malformed("column count"))?;
                    // MARIADB_CLIENT_CACHE_METADATA: a "metadata follows" byte; 0 means the
                    // columns are the ones last sent for this statement (no definitions and
                    // no EOF follow)
                    let follows = cache.is_none() || r.is_empty() || r.u8()? != 0;
                    if !follows {
                        let cols = stmt
                            .and_then(|id| cache.and_then(|c| c.get(&id)))
                            .filter(|c| c.len() == n)
                            .cloned()
                            .ok_or(ProtocolError::UnexpectedPacket(
                                "result metadata skipped for a statement without cached columns",
                            ))?;
                        *stage = ResultStage::Rows;
                        return Ok((Some(ClientEvent::ResultColumns(cols)), false));
                    }
                    *stage = ResultStage::Columns(Defs::new(n, caps));
                    Ok((None, false))
                }
            },
            ResultStage::Columns(defs) => {
                defs.push(payload)?;
                if !defs.done() {
                    return Ok((None, false));
                }
                let cols: Arc<[ColumnDefinition]> = std::mem::take(&mut defs.defs).into();
                if let (Some(id), Some(c)) = (stmt, cache) {
                    c.insert(id, Arc::clone(&cols));
                }
                *stage = ResultStage::Rows;
                Ok((Some(ClientEvent::ResultColumns(cols)), false))
            }
            ResultStage::Rows => {
                if first == Some(ErrPacket::HEADER) {
                    return Ok((Some(ClientEvent::Error(ErrPacket::decode(payload)?)), true));
                }
                if !is_result_terminator(payload, caps) {
                    return Ok((
                        Some(ClientEvent::Row(RowData::new(
                            std::mem::take(payload),
                            *binary,
                        ))),
                        false,
                    ));
                }
                let (status, warnings, affected_rows, last_insert_id) =
                    if caps.contains(Capabilities::DEPRECATE_EOF) {
                        let ok = OkPacket::decode(payload, caps)?;
                        (ok.status, ok.warnings, ok.affected_rows, ok.last_insert_id)
                    } else {
                        let eof = EofPacket::decode(payload)?;
                        (eof.status, eof.warnings, 0, 0)
                    };
                let more_results = status.contains(StatusFlags::MORE_RESULTS_EXISTS);
                *stage = ResultStage::Start;
                let ev = ClientEvent::ResultDone {
                    status,
                    affected_rows,
                    last_insert_id,
                    warnings,
                    more_results,
                };
                Ok((Some(ev), !more_results))
            }
        },
        Expect::Prepare { stage } => {
            match stage {
                PrepareStage::Start => {
                    if first == Some(ErrPacket::HEADER) {
                        return Ok((Some(ClientEvent::Error(ErrPacket::decode(payload)?)), true));
                    }
                    let ok = StmtPrepareOk::decode(payload)?;
                    *stage = PrepareStage::Params {
                        ok,
                        params: Defs::new(usize::from(ok.num_params), caps),
                    };
                }
                PrepareStage::Params { params, .. } => params.push(payload)?,
                PrepareStage::Columns { columns, .. } => columns.push(payload)?,
            }
            // Advance through stages that are already complete (empty lists).
            if let PrepareStage::Params { ok, params } = stage {
                if params.done() {
                    let ok = *ok;
                    let params = std::mem::take(&mut params.defs);
                    *stage = PrepareStage::Columns {
                        ok,
                        params,
                        columns: Defs::new(usize::from(ok.num_columns), caps),
                    };
                }
            }
            if let PrepareStage::Columns {
                ok,
                params,
                columns,
            } = stage
            {
                if columns.done() {
                    if let Some(c) = cache {
                        c.insert(ok.stmt_id, columns.defs.as_slice().into());
                    }
                    let ev = ClientEvent::Prepared {
                        stmt_id: ok.stmt_id,
                        params: std::mem::take(params),
                        columns: std::mem::take(&mut columns.defs),
                    };
                    return Ok((Some(ev), true));
                }
            }
            Ok((None, false))
        }
        Expect::Ok => match first {
            Some(OkPacket::HEADER) => Ok((
                Some(ClientEvent::Ok(OkPacket::decode(payload, caps)?)),
                true,
            )),
            Some(ErrPacket::HEADER) => {
                Ok((Some(ClientEvent::Error(ErrPacket::decode(payload)?)), true))
            }
            Some(EofPacket::HEADER) if payload.len() < 9 => {
                let eof = EofPacket::decode(payload)?;
                let ok = OkPacket {
                    status: eof.status,
                    warnings: eof.warnings,
                    ..OkPacket::default()
                };
                Ok((Some(ClientEvent::Ok(ok)), true))
            }
            Some(EofPacket::HEADER) => Ok((
                Some(ClientEvent::Ok(OkPacket::decode(payload, caps)?)),
                true,
            )),
            _ => Err(ProtocolError::UnexpectedPacket("expected OK or ERR")),
        },
        Expect::FieldList(defs) => {
            if first == Some(ErrPacket::HEADER) {
                return Ok((Some(ClientEvent::Error(ErrPacket::decode(payload)?)), true));
            }
            if is_result_terminator(payload, caps) {
                return Ok((
                    Some(ClientEvent::ResultColumns(std::mem::take(defs).into())),
                    true,
                ));
            }
            defs.push(ColumnDefinition::decode(payload)?);
            Ok((None, false))
        }
        Expect::Statistics => {
            if first == Some(ErrPacket::HEADER) {
                return Ok((Some(ClientEvent::Error(ErrPacket::decode(payload)?)), true));
            }
            Ok((
                Some(ClientEvent::Statistics(
                    String::from_utf8_lossy(payload).into_owned(),
                )),
                true,
            ))
        }
    }
}
