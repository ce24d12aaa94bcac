//! A single pass over a statement's bytes that yields its shape key and literals without
//! sqlparser's tokenizer (which allocates a string per word).
//!
//! Invariant: when [`scan`] returns `Some`, sqlparser's MySQL tokenizer
//! (`tokenize_with_location`) succeeds on the same text, and
//! - [`Scanned::key`] is byte for byte the key the shape cache derives from those tokens
//!   (every non-literal token exactly, whitespace tokens included, and each literal's kind),
//!   so two texts with equal keys have token streams of the same length that are equal at
//!   every non-literal position and carry literals of the same kinds at the same positions
//!   (and a scanned text and a tokenised one share a key exactly when their tokens agree but
//!   for literal values);
//! - [`Scanned::literals`] holds one entry per literal token (a number or a single-quoted
//!   string), in text order: the value the parser makes of that token and the token's span
//!   (lines and columns as sqlparser counts them: columns in characters, from 1).
//!
//! The scanner handles what everyday statements use: words (plain and backquoted), numbers
//! (with sqlparser's MySQL rules for words that start with digits and for a `.` after a word),
//! single-quoted strings without escapes, `?` placeholders, whitespace, and the operators and
//! punctuation below. Anything else (comments, double-quoted, hex, bit and national strings,
//! charset introducers, escapes, `@` variables, non-ASCII bytes outside quotes) makes it
//! return `None`, and the caller tokenises the text with sqlparser instead.

use sqlparser::ast::{Value, ValueWithSpan};
use sqlparser::tokenizer::{Location, Span};

/// A text's shape key and literals.
#[derive(Debug)]
pub struct Scanned {
    /// The shape key: equal to the shape cache's key of the text's sqlparser tokens.
    pub key: Vec<u8>,
    /// Each literal token's value (as the parser makes it) and span, in text order.
    pub literals: Vec<ValueWithSpan>,
}

/// Scans `sql`; None when the text has anything the scanner does not reproduce exactly.
pub fn scan(sql: &str) -> Option<Scanned> {
    let mut s = Scanner {
        text: sql.as_bytes(),
        at: 0,
        line: 1,
        line_start: 0,
        wide: 0,
        key: Vec::with_capacity(sql.len() * 2 + 16),
        literals: Vec::new(),
        prev: Prev::Other,
        prev_solid: Prev::Other,
    };
    while s.at < s.text.len() {
        s.token()?;
    }
    Some(Scanned {
        key: s.key,
        literals: s.literals,
    })
}

// Key codes of the shape cache's key (one byte for the commonest tokens; the literal,
// word and other-token prefixes).
const LITERAL: u8 = 0;
const WORD: u8 = 1;
const OTHER: u8 = 2;
const SPACE: u8 = 3;
const NEWLINE: u8 = 4;
const TAB: u8 = 5;
const COMMA: u8 = 6;
const LPAREN: u8 = 7;
const RPAREN: u8 = 8;
const EQ: u8 = 9;
const PERIOD: u8 = 10;
const MUL: u8 = 11;
const PLUS: u8 = 12;
const MINUS: u8 = 13;
const LT: u8 = 14;
const GT: u8 = 15;
const LT_EQ: u8 = 16;
const GT_EQ: u8 = 17;
const NEQ: u8 = 18;
/// Literal kinds after [`LITERAL`]: a number (then its `long` flag), a single-quoted string.
const NUMBER: u8 = 1;
const STRING: u8 = 2;

/// What the previous token was, as far as sqlparser's splitting of the next one depends on it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Prev {
    Word,
    Period,
    Space,
    Other,
}

/// The scan's position and output.
struct Scanner<'a> {
    text: &'a [u8],
    at: usize,
    /// The line of `at` (from 1).
    line: u64,
    /// Where that line starts.
    line_start: usize,
    /// UTF-8 continuation bytes between `line_start` and `at` (a character is one column).
    wide: usize,
    key: Vec<u8>,
    literals: Vec<ValueWithSpan>,
    /// The previous token, whitespace included.
    prev: Prev,
    /// The previous token that is not whitespace.
    prev_solid: Prev,
}

/// Whether sqlparser's MySQL dialect takes `b` as part of a word (ASCII; non-ASCII bytes,
/// which it takes too, are refused where a word could continue).
fn word_part(b: u8) -> bool {
    b.is_ascii_alphanumeric() || matches!(b, b'_' | b'$' | b'@')
}

/// The end of the run of bytes from `i` that satisfy `f`.
fn run(text: &[u8], mut i: usize, f: impl Fn(u8) -> bool) -> usize {
    while text.get(i).is_some_and(|&b| f(b)) {
        i += 1;
    }
    i
}

impl Scanner<'_> {
    fn peek(&self, ahead: usize) -> Option<u8> {
        self.text.get(self.at + ahead).copied()
    }

    fn location(&self) -> Location {
        Location {
            line: self.line,
            column: (self.at - self.line_start - self.wide + 1) as u64,
        }
    }

    /// Scans one token; None when it is one the scanner does not handle.
    fn token(&mut self) -> Option<()> {
        let b = self.text[self.at];
        match b {
            b' ' | b'\x0b' | b'\x0c' => self.space(1, SPACE),
            b'\t' => self.space(1, TAB),
            b'\n' => {
                self.space(1, NEWLINE);
                self.new_line();
            }
            b'\r' => {
                if self.peek(1) == Some(b'\n') {
                    self.space(2, NEWLINE);
                    self.new_line();
                } else {
                    self.space(1, NEWLINE);
                }
            }
            b'\'' => self.string()?,
            b'`' => self.quoted_word()?,
            b'0'..=b'9' | b'.' => self.number()?,
            b'?' => self.placeholder()?,
            b if b.is_ascii_alphabetic() || b == b'_' || b == b'$' => {
                let end = run(self.text, self.at + 1, word_part);
                self.word(end)?;
            }
            _ => self.operator()?,
        }
        Some(())
    }

    fn space(&mut self, len: usize, code: u8) {
        self.at += len;
        self.key.push(code);
        self.prev = Prev::Space;
    }

    /// Bookkeeping after a line feed at `at - 1`.
    fn new_line(&mut self) {
        self.line += 1;
        self.line_start = self.at;
        self.wide = 0;
    }

    /// Emits a token of `len` bytes keyed by one `code` byte.
    fn one(&mut self, len: usize, code: u8) {
        self.at += len;
        self.key.push(code);
        self.prev = if code == PERIOD {
            Prev::Period
        } else {
            Prev::Other
        };
        self.prev_solid = self.prev;
    }

    /// Emits a token of `len` bytes that the key spells as its sqlparser `Debug` form.
    fn other(&mut self, len: usize, debug: &str) {
        self.at += len;
        self.key.push(OTHER);
        self.key
            .extend_from_slice(&(debug.len() as u32).to_le_bytes());
        self.key.extend_from_slice(debug.as_bytes());
        self.prev = Prev::Other;
        self.prev_solid = Prev::Other;
    }

    /// Emits the unquoted word `at..end`. None when a non-ASCII byte would continue it, or a
    /// quote follows it (`N'..'`, `X'..'`, `B'..'`, `_utf8mb4'..'` are other tokens or
    /// introducers).
    fn word(&mut self, end: usize) -> Option<()> {
        if self
            .text
            .get(end)
            .is_some_and(|&b| !b.is_ascii() || b == b'\'' || b == b'"')
        {
            return None;
        }
        self.push_word(0, self.at, end);
        self.at = end;
        Some(())
    }

    fn push_word(&mut self, quote: u32, from: usize, to: usize) {
        self.key.push(WORD);
        self.key.extend_from_slice(&quote.to_le_bytes());
        self.key
            .extend_from_slice(&((to - from) as u32).to_le_bytes());
        self.key.extend_from_slice(&self.text[from..to]);
        self.prev = Prev::Word;
        self.prev_solid = Prev::Word;
    }

    /// Consumes quoted content up to the byte `close` (not consumed), keeping lines and
    /// columns; None when it is unterminated or holds `close` doubled or (`escapes`) a
    /// backslash.
    fn quoted(&mut self, close: u8, escapes: bool) -> Option<usize> {
        let text = self.text;
        let mut i = self.at + 1;
        loop {
            let b = *text.get(i)?;
            if b == close {
                if text.get(i + 1) == Some(&close) {
                    return None;
                }
                self.at = i + 1;
                return Some(i);
            }
            if b == b'\\' && escapes {
                return None;
            }
            if b == b'\n' {
                self.line += 1;
                self.line_start = i + 1;
                self.wide = 0;
            } else if b & 0xC0 == 0x80 {
                self.wide += 1;
            }
            i += 1;
        }
    }

    fn string(&mut self) -> Option<()> {
        let start = self.location();
        let from = self.at + 1;
        let to = self.quoted(b'\'', true)?;
        // The text is UTF-8 and both ends are ASCII quotes.
        let s = std::str::from_utf8(&self.text[from..to]).ok()?;
        self.literal(
            start,
            &[LITERAL, STRING],
            Value::SingleQuotedString(s.to_owned()),
        );
        Some(())
    }

    fn quoted_word(&mut self) -> Option<()> {
        let from = self.at + 1;
        let to = self.quoted(b'`', false)?;
        self.push_word(u32::from('`'), from, to);
        Some(())
    }

    fn literal(&mut self, start: Location, key: &[u8], value: Value) {
        self.key.extend_from_slice(key);
        self.literals.push(ValueWithSpan {
            value,
            span: Span::new(start, self.location()),
        });
        self.prev = Prev::Other;
        self.prev_solid = Prev::Other;
    }

    /// A token starting with a digit or `.`: a number, a word that starts with digits, or a
    /// period, split as sqlparser's MySQL tokenizer splits them.
    fn number(&mut self) -> Option<()> {
        let text = self.text;
        let from = self.at;
        if text[from] == b'.' && self.peek(1) == Some(b'_') {
            // `._` is a period after a word, an error elsewhere.
            if self.prev_solid != Prev::Word {
                return None;
            }
            self.one(1, PERIOD);
            return Some(());
        }
        let mut i = run(text, from, |b| b.is_ascii_digit());
        if i - from == 1 && text[from] == b'0' && text.get(i) == Some(&b'x') {
            return None; // 0x.. hexadecimal literal
        }
        if text.get(i) == Some(&b'.') {
            i += 1;
        }
        // A lone `.` right after a word qualifies it (`t.1col`, `t.5`).
        if i - from == 1 && text[from] == b'.' && self.prev == Prev::Word {
            self.one(1, PERIOD);
            return Some(());
        }
        i = run(text, i, |b| b.is_ascii_digit());
        if i - from == 1 && text[from] == b'.' {
            self.one(1, PERIOD);
            return Some(());
        }
        // An `e` after the digits makes the number stop there, even when it does not start
        // an exponent (`1ea` is `1` then `ea`).
        let exponent = matches!(text.get(i), Some(b'e' | b'E'));
        if exponent {
            let mut j = i + 1;
            if matches!(text.get(j), Some(b'+' | b'-')) {
                j += 1;
            }
            if text.get(j).is_some_and(u8::is_ascii_digit) {
                i = run(text, j, |b| b.is_ascii_digit());
            }
        }
        if !exponent {
            // Digits followed by word characters are a word (`1a`, `1.5x`).
            let end = run(text, i, word_part);
            if end > i {
                return self.word(end);
            }
            if text.get(i).is_some_and(|b| !b.is_ascii()) {
                return None;
            }
        } else if self.prev == Prev::Period {
            // `t.1e5` names a column `1e5`.
            return self.word(i);
        }
        let long = text.get(i) == Some(&b'L');
        let s = std::str::from_utf8(&text[from..i]).ok()?.to_owned();
        let start = self.location();
        self.at = i + usize::from(long);
        self.literal(
            start,
            &[LITERAL, NUMBER, u8::from(long)],
            Value::Number(s, long),
        );
        Some(())
    }

    /// `?` and the digits after it: a placeholder.
    fn placeholder(&mut self) -> Option<()> {
        let end = run(self.text, self.at + 1, |b| b.is_ascii_digit());
        if self.text.get(end).is_some_and(|b| !b.is_ascii()) {
            return None; // sqlparser takes any numeric character
        }
        let digits = std::str::from_utf8(&self.text[self.at + 1..end]).ok()?;
        let debug = format!("Placeholder(\"?{digits}\")");
        self.other(end - self.at, &debug);
        Some(())
    }

    /// An operator or punctuation token.
    fn operator(&mut self) -> Option<()> {
        let b = self.text[self.at];
        let next = self.peek(1);
        match (b, next) {
            (b'(', _) => self.one(1, LPAREN),
            (b')', _) => self.one(1, RPAREN),
            (b',', _) => self.one(1, COMMA),
            (b'+', _) => self.one(1, PLUS),
            (b'*', _) => self.one(1, MUL),
            (b'-', Some(b'-')) => {
                // `--` and whitespace start a comment; otherwise a minus.
                match self.peek(2) {
                    Some(c) if c.is_ascii_whitespace() || c == b'\x0b' || !c.is_ascii() => {
                        return None
                    }
                    _ => self.one(1, MINUS),
                }
            }
            (b'-', Some(b'>')) if self.peek(2) == Some(b'>') => self.other(3, "LongArrow"),
            (b'-', Some(b'>')) => self.other(2, "Arrow"),
            (b'-', _) => self.one(1, MINUS),
            (b'/', Some(b'*')) => return None,
            (b'/', _) => self.other(1, "Div"),
            (b'%', _) => self.other(1, "Mod"),
            (b'=', Some(b'>')) => self.other(2, "RArrow"),
            (b'=', Some(b'=')) => self.other(2, "DoubleEq"),
            (b'=', _) => self.one(1, EQ),
            (b'!', Some(b'=')) => self.one(2, NEQ),
            (b'!', Some(b'!')) => self.other(2, "DoubleExclamationMark"),
            (b'!', Some(b'~')) => return None,
            (b'!', _) => self.other(1, "ExclamationMark"),
            (b'<', Some(b'=')) if self.peek(2) == Some(b'>') => self.other(3, "Spaceship"),
            (b'<', Some(b'=')) => self.one(2, LT_EQ),
            (b'<', Some(b'>')) => self.one(2, NEQ),
            (b'<', Some(b'<')) => self.other(2, "ShiftLeft"),
            (b'<', Some(b'@')) => self.other(2, "ArrowAt"),
            (b'<', _) => self.one(1, LT),
            (b'>', Some(b'=')) => self.one(2, GT_EQ),
            (b'>', Some(b'>')) => self.other(2, "ShiftRight"),
            (b'>', _) => self.one(1, GT),
            (b'|', Some(b'/')) => return None,
            (b'|', Some(b'|')) if self.peek(2) == Some(b'/') => return None,
            (b'|', Some(b'|')) => self.other(2, "StringConcat"),
            (b'|', _) => self.other(1, "Pipe"),
            (b'&', Some(b'&')) => self.other(2, "Overlap"),
            (b'&', _) => self.other(1, "Ampersand"),
            (b'^', Some(b'@')) => self.other(2, "CaretAt"),
            (b'^', _) => self.other(1, "Caret"),
            (b'~', Some(b'*')) => self.other(2, "TildeAsterisk"),
            (b'~', _) => self.other(1, "Tilde"),
            (b':', Some(b':')) => self.other(2, "DoubleColon"),
            (b':', Some(b'=')) => self.other(2, "Assignment"),
            (b':', _) => self.other(1, "Colon"),
            (b';', _) => self.other(1, "SemiColon"),
            (b'\\', _) => self.other(1, "Backslash"),
            (b'[', _) => self.other(1, "LBracket"),
            (b']', _) => self.other(1, "RBracket"),
            (b'{', _) => self.other(1, "LBrace"),
            (b'}', _) => self.other(1, "RBrace"),
            // `#` comments, `"` strings, `@` variables, non-ASCII and control bytes.
            _ => return None,
        }
        Some(())
    }
}

#[cfg(test)]
mod tests;
