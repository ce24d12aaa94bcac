//! A received row, kept as its raw packet so that counting rows costs no decoding; cells are
//! decoded on demand, in the text or binary format the row arrived in.

use crate::column::{ColumnDefinition, ColumnFlags};
use crate::error::ProtocolError;
use crate::lenenc::Reader;
use crate::value::BinaryValue;

/// One row of a result set: the payload as received, and whether it is a binary-protocol row.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RowData {
    payload: Vec<u8>,
    binary: bool,
}

impl RowData {
    pub(crate) fn new(payload: Vec<u8>, binary: bool) -> Self {
        Self { payload, binary }
    }

    /// The raw row payload.
    pub fn raw(&self) -> &[u8] {
        &self.payload
    }

    /// Gives back the payload buffer (to reuse it).
    pub fn into_raw(self) -> Vec<u8> {
        self.payload
    }

    /// True for a COM_STMT_EXECUTE (binary-protocol) row.
    pub fn is_binary(&self) -> bool {
        self.binary
    }

    /// The cells of a text row, borrowed, `None` for NULL. A binary row has no text cells:
    /// the iterator yields one error.
    pub fn text_cells(&self) -> TextCells<'_> {
        TextCells {
            r: Reader::new(&self.payload),
            failed: self.binary,
        }
    }

    /// The cells of a text row copied out (what the blocking wrapper returns).
    pub fn text_values(&self) -> Result<Vec<Option<Vec<u8>>>, ProtocolError> {
        self.text_cells()
            .map(|c| c.map(|c| c.map(<[u8]>::to_vec)))
            .collect()
    }

    /// The values of a binary row, decoded with the result set's `columns` (types and the
    /// UNSIGNED flag). A text row is converted cell by cell to [`BinaryValue::Bytes`].
    pub fn binary_values(
        &self,
        columns: &[ColumnDefinition],
    ) -> Result<Vec<BinaryValue>, ProtocolError> {
        if !self.binary {
            let cells = self.text_values()?;
            return Ok(cells
                .into_iter()
                .map(|c| c.map_or(BinaryValue::Null, BinaryValue::Bytes))
                .collect());
        }
        let mut r = Reader::new(&self.payload);
        if r.u8()? != 0x00 {
            return Err(ProtocolError::Malformed("binary row header"));
        }
        let bitmap = r.fixed((columns.len() + 7 + 2) / 8)?;
        let mut values = Vec::with_capacity(columns.len());
        for (i, c) in columns.iter().enumerate() {
            let bit = i + 2;
            let null = bitmap
                .get(bit / 8)
                .is_some_and(|b| b & (1 << (bit % 8)) != 0);
            values.push(if null {
                BinaryValue::Null
            } else {
                BinaryValue::decode(
                    &mut r,
                    c.column_type,
                    c.flags.contains(ColumnFlags::UNSIGNED),
                )?
            });
        }
        if !r.is_empty() {
            return Err(ProtocolError::Malformed(
                "binary row longer than its columns",
            ));
        }
        Ok(values)
    }
}

/// Iterator over a text row's cells; see [`RowData::text_cells`].
#[derive(Debug, Clone)]
pub struct TextCells<'a> {
    r: Reader<'a>,
    failed: bool,
}

impl<'a> Iterator for TextCells<'a> {
    type Item = Result<Option<&'a [u8]>, ProtocolError>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.failed {
            self.failed = false;
            self.r = Reader::new(&[]);
            return Some(Err(ProtocolError::Malformed("binary row read as text")));
        }
        if self.r.is_empty() {
            return None;
        }
        let cell = self.r.lenenc_bytes_or_null();
        if cell.is_err() {
            self.r = Reader::new(&[]);
        }
        Some(cell)
    }
}
