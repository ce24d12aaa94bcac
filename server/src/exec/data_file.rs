//! MySQL's delimited text format, both ways: [`Reader`] splits a data file into records of
//! fields as LOAD DATA reads them, [`Writer`] writes rows as SELECT ... INTO OUTFILE does.
//! The invariant: whatever the writer writes with a format, the reader reads back with the
//! same format as the same bytes, NULLs included (escapes on; MySQL's rules, which are not
//! lossless without an escape character).

use crate::sql::load_syntax::FileFormat;

/// Escaped letters with a meaning (`\0 \b \n \r \t \Z \N`): a separator that is one of them
/// is written doubled instead of escaped.
const ESCAPE_LETTERS: &[u8] = b"ntrb0ZN";

/// What an escape character followed by `c` stands for; `N` also marks a NULL field.
fn unescape(c: u8) -> u8 {
    match c {
        b'0' => 0,
        b'b' => 8,
        b'n' => b'\n',
        b'r' => b'\r',
        b't' => b'\t',
        b'Z' => 26,
        other => other,
    }
}

/// Splits a data file into records; fields are None for NULL.
#[derive(Debug)]
pub(crate) struct Reader<'a> {
    data: &'a [u8],
    pos: usize,
    field_term: &'a [u8],
    line_term: &'a [u8],
    line_start: &'a [u8],
    enclosed: Option<u8>,
    escaped: Option<u8>,
}

/// One record's fields (None: NULL).
pub(crate) type Record = Vec<Option<Vec<u8>>>;

impl<'a> Reader<'a> {
    /// A reader of `data` in format `f` (an empty line terminator means the field
    /// terminator, as in MySQL).
    pub(crate) fn new(data: &'a [u8], f: &'a FileFormat) -> Reader<'a> {
        let line_term = if f.line_term.is_empty() {
            &f.field_term[..]
        } else {
            &f.line_term[..]
        };
        Reader {
            data,
            pos: 0,
            field_term: &f.field_term,
            line_term,
            line_start: &f.line_start,
            enclosed: f.enclosed,
            escaped: f.escaped,
        }
    }

    fn at(&self, term: &[u8], pos: usize) -> bool {
        !term.is_empty() && self.data[pos..].starts_with(term)
    }

    /// The next record, or None at the end of the data.
    pub(crate) fn next_record(&mut self) -> Option<Record> {
        if self.pos >= self.data.len() {
            return None;
        }
        if !self.line_start.is_empty() {
            // Text before the prefix (a whole line without it, too) is skipped.
            let rest = &self.data[self.pos..];
            let found = rest
                .windows(self.line_start.len())
                .position(|w| w == self.line_start)?;
            self.pos += found + self.line_start.len();
        }
        let mut fields = Vec::new();
        loop {
            let (field, line_ended) = self.field();
            fields.push(field);
            if line_ended {
                return Some(fields);
            }
        }
    }

    /// Reads one field; returns it and whether the record ended after it.
    fn field(&mut self) -> (Option<Vec<u8>>, bool) {
        let mut buf = Vec::new();
        let mut escaped_n = false;
        let quote = self.enclosed.filter(|q| self.data.get(self.pos) == Some(q));
        if quote.is_some() {
            self.pos += 1;
        }
        let ended = loop {
            let Some(&b) = self.data.get(self.pos) else {
                break true;
            };
            if Some(b) == self.escaped && (quote != Some(b) || self.escaped != self.enclosed) {
                match self.data.get(self.pos + 1) {
                    None => {
                        buf.push(b);
                        self.pos += 1;
                    }
                    Some(&c) => {
                        escaped_n |= c == b'N';
                        buf.push(unescape(c));
                        self.pos += 2;
                    }
                }
                continue;
            }
            if let Some(q) = quote {
                if b == q {
                    let next = self.pos + 1;
                    if self.data.get(next) == Some(&q) {
                        buf.push(q);
                        self.pos += 2;
                        continue;
                    }
                    if next >= self.data.len() {
                        self.pos = next;
                        break true;
                    }
                    if self.at(self.line_term, next) {
                        self.pos = next + self.line_term.len();
                        break true;
                    }
                    if self.at(self.field_term, next) {
                        self.pos = next + self.field_term.len();
                        break false;
                    }
                }
                buf.push(b);
                self.pos += 1;
                continue;
            }
            if self.at(self.line_term, self.pos) {
                self.pos += self.line_term.len();
                break true;
            }
            if self.at(self.field_term, self.pos) {
                self.pos += self.field_term.len();
                break false;
            }
            buf.push(b);
            self.pos += 1;
        };
        let null = (buf.len() == 1 && escaped_n)
            || (quote.is_none() && self.enclosed.is_some() && buf == b"NULL");
        (if null { None } else { Some(buf) }, ended)
    }
}

/// Writes rows in a format.
#[derive(Debug)]
pub(crate) struct Writer {
    field_term: Vec<u8>,
    line_term: Vec<u8>,
    line_start: Vec<u8>,
    enclosed: Option<u8>,
    optionally: bool,
    escaped: Option<u8>,
    /// The enclosure, or without one the field terminator's first byte.
    field_sep: Option<u8>,
    /// The field terminator's first byte.
    field_term_first: Option<u8>,
    /// The line terminator's first byte.
    line_sep: Option<u8>,
}

impl Writer {
    /// A writer for format `f` (an empty line terminator means the field terminator).
    pub(crate) fn new(f: &FileFormat) -> Writer {
        let line_term = if f.line_term.is_empty() {
            f.field_term.clone()
        } else {
            f.line_term.clone()
        };
        let field_term_first = f.field_term.first().copied();
        Writer {
            field_sep: f.enclosed.or(field_term_first),
            field_term_first,
            line_sep: line_term.first().copied(),
            field_term: f.field_term.clone(),
            line_term,
            line_start: f.line_start.clone(),
            enclosed: f.enclosed,
            optionally: f.optionally,
            escaped: f.escaped,
        }
    }

    /// Appends one row: each cell's text (None: NULL) and whether it is a string (only
    /// strings are enclosed under OPTIONALLY).
    pub(crate) fn write_row<'c>(
        &self,
        out: &mut Vec<u8>,
        cells: impl IntoIterator<Item = (Option<&'c [u8]>, bool)>,
    ) {
        out.extend_from_slice(&self.line_start);
        for (i, (cell, string)) in cells.into_iter().enumerate() {
            if i > 0 {
                out.extend_from_slice(&self.field_term);
            }
            match cell {
                None => match self.escaped {
                    Some(e) => out.extend_from_slice(&[e, b'N']),
                    None => out.extend_from_slice(b"NULL"),
                },
                Some(text) => self.write_field(out, text, string),
            }
        }
        out.extend_from_slice(&self.line_term);
    }

    fn write_field(&self, out: &mut Vec<u8>, text: &[u8], string: bool) {
        let quote = self.enclosed.filter(|_| !self.optionally || string);
        if let Some(q) = quote {
            out.push(q);
        }
        match self.escaped {
            None => out.extend_from_slice(text),
            Some(e) => {
                let sep = if quote.is_some() {
                    self.field_sep
                } else {
                    self.field_term_first
                };
                let ambiguous = self.field_sep.is_some_and(|s| ESCAPE_LETTERS.contains(&s));
                // An unenclosed field's terminator that is an escape letter is written as
                // it is: doubling is for enclosures, and escaping would change its meaning.
                let raw_term = quote.is_none()
                    && self
                        .field_term_first
                        .is_some_and(|t| ESCAPE_LETTERS.contains(&t));
                for &x in text {
                    let special = x == e || Some(x) == sep || Some(x) == self.line_sep || x == 0;
                    if special && !(raw_term && Some(x) == self.field_term_first) {
                        let prefix = if Some(x) == self.field_sep && ambiguous {
                            x
                        } else {
                            e
                        };
                        out.push(prefix);
                        out.push(if x == 0 { b'0' } else { x });
                    } else {
                        out.push(x);
                    }
                }
            }
        }
        if let Some(q) = quote {
            out.push(q);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read_all(data: &[u8], f: &FileFormat) -> Vec<Record> {
        let mut r = Reader::new(data, f);
        std::iter::from_fn(|| r.next_record()).collect()
    }

    fn s(b: &[u8]) -> Option<Vec<u8>> {
        Some(b.to_vec())
    }

    #[test]
    fn default_format_reads_escapes_and_nulls() {
        let f = FileFormat::default();
        let recs = read_all(b"1\ta\\tb\\\nc\t\\N\n2\t\\0\\Z\tNULL\n\n", &f);
        assert_eq!(
            recs,
            vec![
                vec![s(b"1"), s(b"a\tb\nc"), None],
                vec![s(b"2"), s(&[0, 26]), s(b"NULL")],
                vec![s(b"")],
            ]
        );
        // The last line needs no terminator.
        assert_eq!(read_all(b"x\ty", &f), vec![vec![s(b"x"), s(b"y")]]);
    }

    #[test]
    fn csv_with_enclosures() {
        let f = FileFormat {
            field_term: b",".to_vec(),
            enclosed: Some(b'"'),
            optionally: true,
            line_term: b"\r\n".to_vec(),
            ..FileFormat::default()
        };
        let recs = read_all(
            b"1,\"a,b\",\"say \"\"hi\"\"\",NULL,\"NULL\"\r\n\"x\"y\",2\r\n",
            &f,
        );
        assert_eq!(
            recs,
            vec![
                vec![s(b"1"), s(b"a,b"), s(b"say \"hi\""), None, s(b"NULL")],
                vec![s(b"x\"y"), s(b"2")],
            ]
        );
    }

    #[test]
    fn lines_starting_by_skips_lines_without_the_prefix() {
        let f = FileFormat {
            line_start: b"xxx".to_vec(),
            field_term: b",".to_vec(),
            ..FileFormat::default()
        };
        let recs = read_all(b"xxx\"abc\",1\nsomething xxx\"def\",2\n\"ghi\",3\n", &f);
        assert_eq!(
            recs,
            vec![vec![s(b"\"abc\""), s(b"1")], vec![s(b"\"def\""), s(b"2")]]
        );
    }

    #[test]
    fn writer_escapes_as_mysql_and_reads_back() {
        let every: Vec<u8> = (0..=255).collect();
        for f in [
            FileFormat::default(),
            FileFormat {
                field_term: b",".to_vec(),
                enclosed: Some(b'"'),
                optionally: true,
                ..FileFormat::default()
            },
            FileFormat {
                field_term: b"||".to_vec(),
                enclosed: Some(b'\''),
                line_term: b"\r\n".to_vec(),
                line_start: b">".to_vec(),
                ..FileFormat::default()
            },
        ] {
            let w = Writer::new(&f);
            let mut out = Vec::new();
            let row: Vec<(Option<&[u8]>, bool)> = vec![
                (Some(b"12"), false),
                (Some(&every), true),
                (None, true),
                (Some(b""), true),
                (Some(b"N"), true),
            ];
            w.write_row(&mut out, row.clone());
            w.write_row(&mut out, row.clone());
            let back = read_all(&out, &f);
            let want: Record = row.iter().map(|(c, _)| c.map(<[u8]>::to_vec)).collect();
            assert_eq!(back, vec![want.clone(), want], "{f:?}");
        }
        let mut out = Vec::new();
        Writer::new(&FileFormat::default())
            .write_row(&mut out, [(Some(&b"a\tb\\c\nd\0"[..]), true), (None, true)]);
        assert_eq!(out, b"a\\\tb\\\\c\\\nd\\0\t\\N\n");
    }
}
