//! Encoding statement results for the wire: OK, ERR, and text or binary result sets.

use protocol::packet::write_packet_with;
use protocol::{
    BinaryValue, Capabilities, ColumnDefinition, ColumnType, ErrPacket, OkPacket, ResultSetWriter,
    StatusFlags,
};

use crate::error::SqlError;
use crate::sql::text_cell::bit_bytes;
pub use crate::sql::text_cell::text_cell;
use crate::sql::{Output, ResultSet};
use crate::value::Value;

/// Writes an ERR packet.
pub fn write_err(out: &mut Vec<u8>, seq: &mut u8, e: &SqlError) {
    let p = ErrPacket::new(e.number(), e.sql_state(), e.message.clone());
    write_packet_with(out, seq, |o| p.encode(o));
}

/// Writes an OK packet.
pub fn write_ok(out: &mut Vec<u8>, seq: &mut u8, caps: Capabilities, ok: &OkPacket) {
    write_packet_with(out, seq, |o| ok.encode(caps, o));
}

/// Appends the binary-protocol encoding of a non-NULL value for column `col` (strings are
/// copied straight from the value; nothing is allocated).
pub fn binary_cell(v: &Value, col: &ColumnDefinition, out: &mut Vec<u8>) {
    let ty = col.column_type;
    match v {
        Value::Bytes(b) => protocol::lenenc::put_lenenc_bytes(out, b),
        Value::UInt(u) if ty == ColumnType::Bit => {
            let (bytes, start) = bit_bytes(*u, col);
            protocol::lenenc::put_lenenc_bytes(out, &bytes[start..]);
        }
        Value::Decimal(d) => {
            let text = d.to_string();
            protocol::lenenc::put_lenenc_bytes(out, text.as_bytes());
        }
        Value::Enum(i, m) => protocol::lenenc::put_lenenc_bytes(out, m.enum_text(*i).as_bytes()),
        Value::Set(bits, m) => {
            protocol::lenenc::put_lenenc_bytes(out, m.set_text(*bits).as_bytes())
        }
        other => binary_value(other, ty).encode(ty, out),
    }
}

/// A non-string value in the binary protocol for a column of type `ty`.
fn binary_value(v: &Value, ty: ColumnType) -> BinaryValue {
    match v {
        Value::Null => BinaryValue::Null,
        Value::Int(i) => BinaryValue::Int(*i),
        Value::UInt(u) => BinaryValue::UInt(*u),
        Value::Double(d) => BinaryValue::Double(*d),
        Value::Decimal(d) => BinaryValue::Bytes(d.to_string().into_bytes()),
        Value::Bytes(b) => BinaryValue::Bytes(b.clone()),
        Value::Enum(..) | Value::Set(..) => {
            BinaryValue::Bytes(v.member_text().unwrap_or_default().into_bytes())
        }
        Value::DateTime(dt) if ty == ColumnType::Date => BinaryValue::Date {
            year: dt.year,
            month: dt.month,
            day: dt.day,
        },
        Value::Time(t, _) => {
            let abs = t.unsigned_abs();
            let secs = abs / 1_000_000;
            BinaryValue::Time {
                negative: *t < 0,
                days: (secs / 86_400) as u32,
                hours: (secs / 3600 % 24) as u8,
                minutes: (secs / 60 % 60) as u8,
                seconds: (secs % 60) as u8,
                micros: (abs % 1_000_000) as u32,
            }
        }
        Value::DateTime(dt) => BinaryValue::DateTime {
            year: dt.year,
            month: dt.month,
            day: dt.day,
            hour: dt.hour,
            minute: dt.minute,
            second: dt.second,
            micros: dt.micros,
        },
    }
}

/// Writes a result set; `binary` for COM_STMT_EXECUTE.
pub fn write_rows(
    out: &mut Vec<u8>,
    seq: &mut u8,
    caps: Capabilities,
    rs: &ResultSet,
    binary: bool,
    status: StatusFlags,
    warnings: u16,
) {
    if rs.columns.is_empty() {
        write_ok(
            out,
            seq,
            caps,
            &OkPacket {
                status,
                warnings,
                ..OkPacket::default()
            },
        );
        return;
    }
    let mut w = match &rs.encoded {
        Some(encoded) => ResultSetWriter::start_encoded(out, seq, caps, encoded),
        None => ResultSetWriter::start(out, seq, caps, &rs.columns),
    };
    let mut cells: Vec<u8> = Vec::new();
    // Text rows only: a binary row is encoded straight into the packet.
    let mut bounds: Vec<Option<(usize, usize)>> = Vec::new();
    for row in &rs.rows {
        if binary {
            w.binary_row_with(
                |i| row[i].is_null(),
                |i, o| binary_cell(&row[i], &rs.columns[i], o),
            );
        } else {
            cells.clear();
            bounds.clear();
            for (v, col) in row.iter().zip(rs.columns.iter()) {
                if v.is_null() {
                    bounds.push(None);
                } else {
                    let start = cells.len();
                    text_cell(v, col, &mut cells);
                    bounds.push(Some((start, cells.len())));
                }
            }
            w.text_row(bounds.iter().map(|b| b.map(|(s, e)| &cells[s..e])));
        }
    }
    w.finish(status, warnings);
}

/// Writes one statement's output (`status` carries SERVER_MORE_RESULTS_EXISTS when another
/// result follows).
pub fn write_output(
    out: &mut Vec<u8>,
    seq: &mut u8,
    caps: Capabilities,
    o: &Output,
    binary: bool,
    status: StatusFlags,
    warnings: u16,
) {
    match o {
        Output::Ok {
            affected_rows,
            last_insert_id,
            info,
        } => write_ok(
            out,
            seq,
            caps,
            &OkPacket {
                affected_rows: *affected_rows,
                last_insert_id: *last_insert_id,
                status,
                warnings,
                info: info.clone(),
            },
        ),
        Output::Rows(rs) => write_rows(out, seq, caps, rs, binary, status, warnings),
    }
}

/// The column definitions of a prepared statement's parameters (MySQL sends `?` as
/// VAR_STRING placeholders).
pub fn param_definitions(n: usize) -> Vec<ColumnDefinition> {
    (0..n)
        .map(|_| {
            let mut c = ColumnDefinition::new("?", ColumnType::VarString);
            c.charset = 63;
            c.flags = protocol::ColumnFlags::BINARY;
            c
        })
        .collect()
}
