//! Multi-packet replies written as whole packets: result sets (text and binary rows) and
//! COM_STMT_PREPARE's answer.
//!
//! The writer is a typestate: [`ResultSetWriter::start`] writes the column count and
//! definitions and returns a [`RowWriter`]; rows go through it; [`RowWriter::finish`] consumes
//! it and writes the terminator. A reply therefore cannot be interleaved with another or left
//! without its terminator (the type is `#[must_use]`).

use crate::caps::{Capabilities, StatusFlags};
use crate::column::ColumnDefinition;
use crate::lenenc::{put_lenenc_bytes, put_lenenc_int, NULL_MARKER};
use crate::packet::{write_packet, write_packet_with};
use crate::reply::{EofPacket, OkPacket, StmtPrepareOk};
use crate::value::BinaryValue;

/// Entry point of the result-set typestate.
#[derive(Debug)]
pub struct ResultSetWriter {
    _private: (),
}

/// Writes the rows of a started result set; finish it with [`RowWriter::finish`].
#[derive(Debug)]
#[must_use = "a result set must be ended with RowWriter::finish"]
pub struct RowWriter<'o> {
    out: &'o mut Vec<u8>,
    seq: &'o mut u8,
    caps: Capabilities,
    num_columns: usize,
}

/// Column definitions encoded once, for a result whose metadata is the same at every
/// execution (a prepared statement's): starting its result set is then a copy per column
/// instead of an encoding.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EncodedColumns {
    /// The definition payloads, one after another.
    payloads: Vec<u8>,
    /// Where each payload ends in `payloads`.
    ends: Vec<usize>,
}

impl EncodedColumns {
    /// Encodes `columns` (each as [`ColumnDefinition::encode`] would).
    pub fn new(columns: &[ColumnDefinition]) -> EncodedColumns {
        let mut payloads = Vec::new();
        let ends = columns
            .iter()
            .map(|c| {
                c.encode(&mut payloads);
                payloads.len()
            })
            .collect();
        EncodedColumns { payloads, ends }
    }

    /// The number of columns.
    pub fn len(&self) -> usize {
        self.ends.len()
    }

    /// Whether there are no columns.
    pub fn is_empty(&self) -> bool {
        self.ends.is_empty()
    }

    fn payloads(&self) -> impl Iterator<Item = &[u8]> {
        let starts = std::iter::once(0).chain(self.ends.iter().copied());
        starts
            .zip(&self.ends)
            .map(|(start, &end)| &self.payloads[start..end])
    }
}

/// Writes column definitions, then (without DEPRECATE_EOF) an EOF.
fn write_definitions(
    out: &mut Vec<u8>,
    seq: &mut u8,
    caps: Capabilities,
    columns: &[ColumnDefinition],
) {
    for c in columns {
        write_packet_with(out, seq, |o| c.encode(o));
    }
    end_definitions(out, seq, caps);
}

/// The EOF after column definitions, unless the client has DEPRECATE_EOF.
fn end_definitions(out: &mut Vec<u8>, seq: &mut u8, caps: Capabilities) {
    if !caps.contains(Capabilities::DEPRECATE_EOF) {
        // The EOF after definitions carries no meaningful status; MySQL sends the current one,
        // but clients only read it at the final terminator.
        write_packet_with(out, seq, |o| EofPacket::default().encode(o));
    }
}

impl ResultSetWriter {
    /// Starts a result set: the column count, one definition per column, and an EOF unless
    /// the client has DEPRECATE_EOF. `columns` must not be empty — a statement without a
    /// result set answers with an [`OkPacket`] instead.
    pub fn start<'o>(
        out: &'o mut Vec<u8>,
        seq: &'o mut u8,
        caps: Capabilities,
        columns: &[ColumnDefinition],
    ) -> RowWriter<'o> {
        debug_assert!(
            !columns.is_empty(),
            "a reply without columns is an OK packet"
        );
        write_packet_with(out, seq, |o| put_lenenc_int(o, columns.len() as u64));
        write_definitions(out, seq, caps, columns);
        RowWriter {
            out,
            seq,
            caps,
            num_columns: columns.len(),
        }
    }

    /// [`ResultSetWriter::start`] with definitions encoded beforehand; the bytes written are
    /// the same. `columns` must not be empty.
    pub fn start_encoded<'o>(
        out: &'o mut Vec<u8>,
        seq: &'o mut u8,
        caps: Capabilities,
        columns: &EncodedColumns,
    ) -> RowWriter<'o> {
        debug_assert!(
            !columns.is_empty(),
            "a reply without columns is an OK packet"
        );
        write_packet_with(out, seq, |o| put_lenenc_int(o, columns.len() as u64));
        for payload in columns.payloads() {
            write_packet(out, seq, payload);
        }
        end_definitions(out, seq, caps);
        RowWriter {
            out,
            seq,
            caps,
            num_columns: columns.len(),
        }
    }
}

impl RowWriter<'_> {
    /// Writes a text-protocol row: each cell a length-encoded string, `None` for NULL.
    /// Cells are copied straight into the output buffer, nothing is allocated per cell.
    pub fn text_row<'c>(&mut self, cells: impl IntoIterator<Item = Option<&'c [u8]>>) {
        let mut written = 0;
        write_packet_with(self.out, self.seq, |o| {
            for cell in cells {
                match cell {
                    Some(b) => put_lenenc_bytes(o, b),
                    None => o.push(NULL_MARKER),
                }
                written += 1;
            }
        });
        debug_assert_eq!(written, self.num_columns, "one cell per column");
    }

    /// Writes a binary-protocol row (COM_STMT_EXECUTE results): 0x00, the null bitmap with
    /// its offset of 2, then each non-NULL value encoded by its column's type. A value past
    /// the end of `columns` is encoded by its own natural type.
    pub fn binary_row(&mut self, values: &[BinaryValue], columns: &[ColumnDefinition]) {
        write_packet_with(self.out, self.seq, |o| {
            o.push(0x00);
            let bitmap_at = o.len();
            o.resize(bitmap_at + (values.len() + 7 + 2) / 8, 0);
            for (i, v) in values.iter().enumerate() {
                if matches!(v, BinaryValue::Null) {
                    let bit = i + 2;
                    o[bitmap_at + bit / 8] |= 1 << (bit % 8);
                }
            }
            for (i, v) in values.iter().enumerate() {
                let ty = columns
                    .get(i)
                    .map_or_else(|| v.natural_type().0, |c| c.column_type);
                v.encode(ty, o);
            }
        });
    }

    /// Writes a binary-protocol row whose cells the caller encodes, for servers that keep
    /// their own value type: `is_null(i)` marks NULL cells (set in the bitmap, not encoded),
    /// `cell(i, out)` appends the encoding of non-NULL cell `i` (as [`BinaryValue::encode`]
    /// would for the column's type). Nothing is allocated per cell.
    pub fn binary_row_with(
        &mut self,
        is_null: impl Fn(usize) -> bool,
        mut cell: impl FnMut(usize, &mut Vec<u8>),
    ) {
        let n = self.num_columns;
        write_packet_with(self.out, self.seq, |o| {
            o.push(0x00);
            let bitmap_at = o.len();
            o.resize(bitmap_at + (n + 7 + 2) / 8, 0);
            for i in 0..n {
                if is_null(i) {
                    let bit = i + 2;
                    o[bitmap_at + bit / 8] |= 1 << (bit % 8);
                }
            }
            for i in 0..n {
                if !is_null(i) {
                    cell(i, o);
                }
            }
        });
    }

    /// The number of columns this result set was started with.
    pub fn num_columns(&self) -> usize {
        self.num_columns
    }

    /// Ends the result set: an EOF, or an OK with the 0xFE header under DEPRECATE_EOF.
    /// Set [`StatusFlags::MORE_RESULTS_EXISTS`] in `status` when another result follows.
    pub fn finish(self, status: StatusFlags, warnings: u16) {
        let caps = self.caps;
        if caps.contains(Capabilities::DEPRECATE_EOF) {
            let ok = OkPacket {
                status,
                warnings,
                ..OkPacket::default()
            };
            write_packet_with(self.out, self.seq, |o| ok.encode_as_eof(caps, o));
        } else {
            write_packet_with(self.out, self.seq, |o| {
                EofPacket { warnings, status }.encode(o)
            });
        }
    }
}

/// Writes the whole answer to COM_STMT_PREPARE: the prepare OK, the parameter definitions and
/// the column definitions (each list followed by an EOF unless DEPRECATE_EOF, and omitted when
/// empty).
pub fn write_prepare_ok(
    out: &mut Vec<u8>,
    seq: &mut u8,
    caps: Capabilities,
    stmt_id: u32,
    params: &[ColumnDefinition],
    columns: &[ColumnDefinition],
    warnings: u16,
) {
    let ok = StmtPrepareOk {
        stmt_id,
        num_columns: u16::try_from(columns.len()).unwrap_or(u16::MAX),
        num_params: u16::try_from(params.len()).unwrap_or(u16::MAX),
        warnings,
    };
    write_packet_with(out, seq, |o| ok.encode(o));
    for list in [params, columns] {
        if !list.is_empty() {
            write_definitions(out, seq, caps, list);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::column::ColumnType;
    use crate::packet::Framer;

    fn packets(wire: &[u8]) -> Vec<(u8, Vec<u8>)> {
        let mut f = Framer::new(1 << 20);
        f.push(wire);
        std::iter::from_fn(|| f.next_packet().unwrap()).collect()
    }

    #[test]
    fn text_result_set_classic_eof() {
        let cols = [
            ColumnDefinition::new("a", ColumnType::VarString),
            ColumnDefinition::new("b", ColumnType::Long),
        ];
        let (mut out, mut seq) = (Vec::new(), 1);
        let mut rows = ResultSetWriter::start(&mut out, &mut seq, Capabilities::PROTOCOL_41, &cols);
        rows.text_row([Some(&b"x"[..]), None]);
        rows.finish(StatusFlags::AUTOCOMMIT, 0);
        let p = packets(&out);
        let seqs: Vec<u8> = p.iter().map(|x| x.0).collect();
        assert_eq!(seqs, [1, 2, 3, 4, 5, 6]);
        assert_eq!(p[0].1, [2]);
        assert_eq!(p[3].1, [0xFE, 0, 0, 0, 0]);
        assert_eq!(p[4].1, [1, b'x', 0xFB]);
        assert_eq!(
            EofPacket::decode(&p[5].1).unwrap().status,
            StatusFlags::AUTOCOMMIT
        );
    }

    #[test]
    fn encoded_definitions_write_the_same_bytes() {
        let mut long = ColumnDefinition::new("c", ColumnType::String);
        long.schema = "sbtest".into();
        long.table = "sbtest1".into();
        long.org_table = "sbtest1".into();
        long.org_name = "c".into();
        long.column_length = 480;
        let cols = [long, ColumnDefinition::new("n", ColumnType::LongLong)];
        let encoded = EncodedColumns::new(&cols);
        assert_eq!(encoded.len(), 2);
        for caps in [Capabilities::PROTOCOL_41, Capabilities::DEPRECATE_EOF] {
            let (mut a, mut seq_a) = (Vec::new(), 1);
            ResultSetWriter::start(&mut a, &mut seq_a, caps, &cols).finish(StatusFlags::empty(), 0);
            let (mut b, mut seq_b) = (Vec::new(), 1);
            ResultSetWriter::start_encoded(&mut b, &mut seq_b, caps, &encoded)
                .finish(StatusFlags::empty(), 0);
            assert_eq!(a, b);
            assert_eq!(seq_a, seq_b);
        }
    }

    #[test]
    fn binary_row_bitmap_offset() {
        let cols = [
            ColumnDefinition::new("a", ColumnType::Long),
            ColumnDefinition::new("b", ColumnType::Long),
        ];
        let (mut out, mut seq) = (Vec::new(), 1);
        let mut rows =
            ResultSetWriter::start(&mut out, &mut seq, Capabilities::DEPRECATE_EOF, &cols);
        rows.binary_row(&[BinaryValue::Null, BinaryValue::Int(7)], &cols);
        rows.finish(StatusFlags::empty(), 0);
        let p = packets(&out);
        assert_eq!(p.len(), 5);
        assert_eq!(p[3].1, [0x00, 0b0000_0100, 7, 0, 0, 0]);
        assert_eq!(p[4].1[0], 0xFE);
    }

    #[test]
    fn prepare_reply_shapes() {
        let p1 = [ColumnDefinition::new("?", ColumnType::LongLong)];
        let (mut out, mut seq) = (Vec::new(), 1);
        write_prepare_ok(
            &mut out,
            &mut seq,
            Capabilities::PROTOCOL_41,
            9,
            &p1,
            &[],
            0,
        );
        assert_eq!(packets(&out).len(), 3);
        out.clear();
        write_prepare_ok(
            &mut out,
            &mut seq,
            Capabilities::DEPRECATE_EOF,
            9,
            &[],
            &[],
            0,
        );
        assert_eq!(packets(&out).len(), 1);
    }
}
