//! The syntax of the file statements, which sqlparser does not parse the MySQL way:
//! `LOAD DATA ... INFILE` and the `INTO OUTFILE` / `INTO DUMPFILE` clause of a SELECT, with
//! their shared `FIELDS` / `LINES` options. Recognised from tokens; a SELECT's export clause
//! is cut out of the statement text so the rest plans as an ordinary SELECT.

use sqlparser::ast::Assignment;
use sqlparser::dialect::MySqlDialect;
use sqlparser::parser::Parser;
use sqlparser::tokenizer::{Location, Token, TokenWithSpan, Tokenizer};

use crate::error::{ErrorCode, SqlError, SqlResult};

/// How fields and lines are delimited in a data file (MySQL's defaults: tab-separated
/// fields, newline-terminated lines, backslash escapes, no enclosure).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct FileFormat {
    /// `FIELDS TERMINATED BY`.
    pub(crate) field_term: Vec<u8>,
    /// `[OPTIONALLY] ENCLOSED BY` (one byte or none).
    pub(crate) enclosed: Option<u8>,
    /// `OPTIONALLY`: only string values are enclosed on output.
    pub(crate) optionally: bool,
    /// `ESCAPED BY` (one byte or none).
    pub(crate) escaped: Option<u8>,
    /// `LINES STARTING BY`.
    pub(crate) line_start: Vec<u8>,
    /// `LINES TERMINATED BY`.
    pub(crate) line_term: Vec<u8>,
    /// Whether `ESCAPED BY` was given (under NO_BACKSLASH_ESCAPES the default has none).
    pub(crate) escaped_given: bool,
}

impl Default for FileFormat {
    fn default() -> FileFormat {
        FileFormat {
            field_term: b"\t".to_vec(),
            enclosed: None,
            optionally: false,
            escaped: Some(b'\\'),
            line_start: Vec::new(),
            line_term: b"\n".to_vec(),
            escaped_given: false,
        }
    }
}

impl FileFormat {
    /// The format with the session's sql_mode applied: NO_BACKSLASH_ESCAPES drops the
    /// default escape character (an explicit `ESCAPED BY` stays).
    pub(crate) fn for_session(&self, no_backslash_escapes: bool) -> FileFormat {
        let mut f = self.clone();
        if no_backslash_escapes && !f.escaped_given {
            f.escaped = None;
        }
        f
    }

    /// Fixed-width rows (no field terminator and no enclosure), which tpbed does not read
    /// or write.
    pub(crate) fn fixed_width(&self) -> bool {
        self.field_term.is_empty() && self.enclosed.is_none()
    }
}

/// How LOAD DATA treats a row whose key is taken.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum OnDuplicate {
    /// Neither keyword: an error (or, with LOCAL, as IGNORE).
    Error,
    /// `REPLACE`: the old row goes.
    Replace,
    /// `IGNORE`: the new row is skipped with a warning.
    Ignore,
}

/// Where an input field goes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Target {
    /// A column by name.
    Column(String),
    /// A user variable (`@name`).
    Var(String),
}

/// A parsed `LOAD DATA` statement.
#[derive(Debug, Clone)]
pub(crate) struct LoadDataSyntax {
    /// `LOCAL`: the client sends the file.
    pub(crate) local: bool,
    /// The file name as written.
    pub(crate) file: String,
    /// REPLACE / IGNORE.
    pub(crate) on_duplicate: OnDuplicate,
    /// The table's database, when qualified.
    pub(crate) db: Option<String>,
    /// The table.
    pub(crate) table: String,
    /// `CHARACTER SET`, if given.
    pub(crate) charset: Option<String>,
    /// FIELDS / LINES.
    pub(crate) format: FileFormat,
    /// `IGNORE n LINES`.
    pub(crate) ignore_lines: u64,
    /// The column / variable list (empty: every column in table order).
    pub(crate) targets: Vec<Target>,
    /// `SET col = expr, ...`.
    pub(crate) set: Vec<Assignment>,
    /// Where the statements after it begin in a multi-statement text (None: it is last).
    pub(crate) rest: Option<usize>,
}

/// A SELECT's `INTO OUTFILE` / `INTO DUMPFILE` clause.
#[derive(Debug, Clone)]
pub(crate) struct ExportClause {
    /// The file name as written.
    pub(crate) file: String,
    /// DUMPFILE: one row, written raw.
    pub(crate) dump: bool,
    /// `CHARACTER SET`, if given.
    pub(crate) charset: Option<String>,
    /// FIELDS / LINES.
    pub(crate) format: FileFormat,
}

/// Significant tokens with their byte offsets in the statement.
struct Cursor<'a> {
    sql: &'a str,
    toks: Vec<(Token, usize)>,
    i: usize,
}

/// The byte offset of a tokenizer location (1-based line and character column).
fn byte_offset(sql: &str, at: Location) -> usize {
    let mut line = 1u64;
    let mut col = 1u64;
    for (i, c) in sql.char_indices() {
        if line == at.line && col == at.column {
            return i;
        }
        if c == '\n' {
            line += 1;
            col = 1;
        } else {
            col += 1;
        }
    }
    sql.len()
}

impl<'a> Cursor<'a> {
    fn new(sql: &'a str) -> Option<Cursor<'a>> {
        let toks: Vec<TokenWithSpan> = Tokenizer::new(&MySqlDialect {}, sql)
            .tokenize_with_location()
            .ok()?;
        let toks = toks
            .into_iter()
            .filter(|t| !matches!(t.token, Token::Whitespace(_) | Token::EOF))
            .map(|t| {
                let at = byte_offset(sql, t.span.start);
                (t.token, at)
            })
            .collect();
        Some(Cursor { sql, toks, i: 0 })
    }
    fn peek(&self) -> Option<&Token> {
        self.toks.get(self.i).map(|(t, _)| t)
    }
    fn offset(&self) -> usize {
        self.toks.get(self.i).map_or(self.sql.len(), |(_, at)| *at)
    }
    fn word(&self) -> Option<String> {
        match self.peek() {
            Some(Token::Word(w)) if w.quote_style.is_none() => Some(w.value.to_ascii_uppercase()),
            _ => None,
        }
    }
    fn eat(&mut self, kw: &str) -> bool {
        if self.word().as_deref() == Some(kw) {
            self.i += 1;
            true
        } else {
            false
        }
    }
    fn err(&self) -> SqlError {
        SqlError::parse(self.sql.get(self.offset()..).unwrap_or(""))
    }
    fn expect(&mut self, kw: &str) -> SqlResult<()> {
        if self.eat(kw) {
            Ok(())
        } else {
            Err(self.err())
        }
    }
    fn string(&mut self) -> SqlResult<String> {
        match self.peek() {
            Some(Token::SingleQuotedString(s)) | Some(Token::DoubleQuotedString(s)) => {
                let s = s.clone();
                self.i += 1;
                Ok(s)
            }
            _ => Err(self.err()),
        }
    }
    fn name(&mut self) -> SqlResult<String> {
        match self.peek() {
            Some(Token::Word(w)) => {
                let v = w.value.clone();
                self.i += 1;
                Ok(v)
            }
            Some(Token::SingleQuotedString(s)) | Some(Token::DoubleQuotedString(s)) => {
                let v = s.clone();
                self.i += 1;
                Ok(v)
            }
            _ => Err(self.err()),
        }
    }
}

/// One byte of `ENCLOSED BY` / `ESCAPED BY`: empty is none, longer is 1083.
fn one_byte(s: &str) -> SqlResult<Option<u8>> {
    match s.as_bytes() {
        [] => Ok(None),
        [b] => Ok(Some(*b)),
        _ => Err(SqlError::new(
            ErrorCode::WrongFieldTerminators,
            "Field separator argument is not what is expected; check the manual",
        )),
    }
}

/// `[CHARACTER SET name] [{FIELDS|COLUMNS} ...] [LINES ...]`, each sub-option in any order.
fn format_options(c: &mut Cursor<'_>) -> SqlResult<(Option<String>, FileFormat)> {
    let mut charset = None;
    if c.eat("CHARACTER") {
        c.expect("SET")?;
        charset = Some(c.name()?);
    } else if c.eat("CHARSET") {
        charset = Some(c.name()?);
    }
    let mut f = FileFormat::default();
    if c.eat("FIELDS") || c.eat("COLUMNS") {
        let mut any = false;
        loop {
            if c.eat("TERMINATED") {
                c.expect("BY")?;
                f.field_term = c.string()?.into_bytes();
            } else if c.eat("OPTIONALLY") {
                c.expect("ENCLOSED")?;
                c.expect("BY")?;
                f.enclosed = one_byte(&c.string()?)?;
                f.optionally = true;
            } else if c.eat("ENCLOSED") {
                c.expect("BY")?;
                f.enclosed = one_byte(&c.string()?)?;
                f.optionally = false;
            } else if c.eat("ESCAPED") {
                c.expect("BY")?;
                f.escaped = one_byte(&c.string()?)?;
                f.escaped_given = true;
            } else {
                break;
            }
            any = true;
        }
        if !any {
            return Err(c.err());
        }
    }
    if c.eat("LINES") {
        let mut any = false;
        loop {
            if c.eat("STARTING") {
                c.expect("BY")?;
                f.line_start = c.string()?.into_bytes();
            } else if c.eat("TERMINATED") {
                c.expect("BY")?;
                f.line_term = c.string()?.into_bytes();
            } else {
                break;
            }
            any = true;
        }
        if !any {
            return Err(c.err());
        }
    }
    Ok((charset, f))
}

/// Whether `sql` starts with the keyword `LOAD` (a cheap test before tokenizing).
fn starts_with_load(sql: &str) -> bool {
    sql.trim_start()
        .get(..5)
        .is_some_and(|p| p.eq_ignore_ascii_case("load ") || p.eq_ignore_ascii_case("load\n"))
}

/// Parses `LOAD DATA ...`; None when `sql` is not a LOAD statement.
pub(crate) fn parse_load(sql: &str) -> Option<SqlResult<LoadDataSyntax>> {
    if !starts_with_load(sql) {
        return None;
    }
    let mut c = Cursor::new(sql)?;
    if !c.eat("LOAD") {
        return None;
    }
    Some(load_body(&mut c))
}

fn load_body(c: &mut Cursor<'_>) -> SqlResult<LoadDataSyntax> {
    if c.eat("XML") {
        return Err(SqlError::unsupported("LOAD XML"));
    }
    c.expect("DATA")?;
    // LOW_PRIORITY and CONCURRENT change nothing for an in-memory table.
    let _ = c.eat("LOW_PRIORITY") || c.eat("CONCURRENT");
    let local = c.eat("LOCAL");
    c.expect("INFILE")?;
    let file = c.string()?;
    let on_duplicate = if c.eat("REPLACE") {
        OnDuplicate::Replace
    } else if c.eat("IGNORE") {
        OnDuplicate::Ignore
    } else {
        OnDuplicate::Error
    };
    c.expect("INTO")?;
    c.expect("TABLE")?;
    let first = c.name()?;
    let (db, table) = if matches!(c.peek(), Some(Token::Period)) {
        c.i += 1;
        (Some(first), c.name()?)
    } else {
        (None, first)
    };
    if c.word().as_deref() == Some("PARTITION") {
        return Err(SqlError::unsupported("LOAD DATA ... PARTITION"));
    }
    let (charset, format) = format_options(c)?;
    if c.word().as_deref() == Some("ROWS") {
        return Err(SqlError::unsupported("ROWS IDENTIFIED BY"));
    }
    let mut ignore_lines = 0;
    if c.eat("IGNORE") {
        ignore_lines = match c.peek() {
            Some(Token::Number(n, _)) => n.parse::<u64>().map_err(|_| c.err())?,
            _ => return Err(c.err()),
        };
        c.i += 1;
        if !(c.eat("LINES") || c.eat("ROWS")) {
            return Err(c.err());
        }
    }
    let targets = if matches!(c.peek(), Some(Token::LParen)) {
        c.i += 1;
        target_list(c)?
    } else {
        Vec::new()
    };
    let set = if c.eat("SET") {
        let rest = c.sql.get(c.offset()..).unwrap_or("");
        let mut p = Parser::new(&MySqlDialect {})
            .try_with_sql(rest)
            .map_err(|_| SqlError::parse(rest))?;
        let set = p
            .parse_comma_separated(Parser::parse_assignment)
            .map_err(|_| SqlError::parse(rest))?;
        let base = c.offset();
        let mut ended = false;
        while p.consume_token(&Token::SemiColon) {
            ended = true;
        }
        let next = p.peek_token();
        if next.token != Token::EOF && !ended {
            return Err(SqlError::parse(&next.token.to_string()));
        }
        // Continue the cursor where the parser stopped.
        let at = if next.token == Token::EOF {
            c.sql.len()
        } else {
            base + byte_offset(rest, next.span.start)
        };
        c.i = c
            .toks
            .iter()
            .position(|(_, o)| *o >= at)
            .unwrap_or(c.toks.len());
        set
    } else {
        Vec::new()
    };
    while matches!(c.peek(), Some(Token::SemiColon)) {
        c.i += 1;
    }
    let rest = (c.i < c.toks.len()).then(|| c.offset());
    if rest.is_some() && !matches!(c.toks.get(c.i.wrapping_sub(1)), Some((Token::SemiColon, _))) {
        return Err(c.err());
    }
    Ok(LoadDataSyntax {
        local,
        file,
        on_duplicate,
        db,
        table,
        charset,
        format,
        ignore_lines,
        targets,
        set,
        rest,
    })
}

/// `col_or_@var, ...)` after the opening parenthesis (an empty list is allowed).
fn target_list(c: &mut Cursor<'_>) -> SqlResult<Vec<Target>> {
    let mut out = Vec::new();
    if matches!(c.peek(), Some(Token::RParen)) {
        c.i += 1;
        return Ok(out);
    }
    loop {
        let t = match c.peek() {
            Some(Token::Word(w)) if w.quote_style.is_none() && w.value.starts_with('@') => {
                let v = w.value[1..].to_string();
                c.i += 1;
                if v.is_empty() {
                    Target::Var(c.name()?)
                } else {
                    Target::Var(v)
                }
            }
            Some(Token::AtSign) => {
                c.i += 1;
                Target::Var(c.name()?)
            }
            Some(Token::Word(_)) => Target::Column(c.name()?),
            _ => return Err(c.err()),
        };
        out.push(t);
        match c.peek() {
            Some(Token::Comma) => c.i += 1,
            Some(Token::RParen) => {
                c.i += 1;
                return Ok(out);
            }
            _ => return Err(c.err()),
        }
    }
}

/// Finds a SELECT's top-level `INTO OUTFILE` / `INTO DUMPFILE` clause; returns the statement
/// without it and the clause, or None when there is none. (A cheap text test first, so
/// ordinary statements are not tokenized twice.)
pub(crate) fn split_export(sql: &str) -> Option<SqlResult<(String, ExportClause)>> {
    let lower = sql.to_ascii_lowercase();
    if !lower.contains("outfile") && !lower.contains("dumpfile") {
        return None;
    }
    let mut c = Cursor::new(sql)?;
    if c.word().as_deref() != Some("SELECT") && !matches!(c.peek(), Some(Token::LParen)) {
        return None;
    }
    let mut depth = 0i32;
    while c.i < c.toks.len() {
        match c.peek() {
            Some(Token::LParen) => depth += 1,
            Some(Token::RParen) => depth -= 1,
            Some(Token::Word(w))
                if depth == 0
                    && w.quote_style.is_none()
                    && w.value.eq_ignore_ascii_case("into") =>
            {
                let start = c.offset();
                c.i += 1;
                let dump = match c.word().as_deref() {
                    Some("OUTFILE") => false,
                    Some("DUMPFILE") => true,
                    _ => continue,
                };
                c.i += 1;
                return Some(export_clause(&mut c, start, dump));
            }
            _ => {}
        }
        c.i += 1;
    }
    None
}

fn export_clause(
    c: &mut Cursor<'_>,
    start: usize,
    dump: bool,
) -> SqlResult<(String, ExportClause)> {
    let file = c.string()?;
    let (charset, format) = if dump {
        (None, FileFormat::default())
    } else {
        format_options(c)?
    };
    let end = c.offset();
    let mut rest = String::with_capacity(c.sql.len());
    rest.push_str(&c.sql[..start]);
    rest.push(' ');
    rest.push_str(&c.sql[end..]);
    Ok((
        rest,
        ExportClause {
            file,
            dump,
            charset,
            format,
        },
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn load(sql: &str) -> LoadDataSyntax {
        parse_load(sql).expect("a LOAD statement").expect("parses")
    }

    #[test]
    fn load_data_defaults_and_options() {
        let l = load("LOAD DATA INFILE '/tmp/x' INTO TABLE t");
        assert!(!l.local);
        assert_eq!(l.format, FileFormat::default());
        assert_eq!(l.on_duplicate, OnDuplicate::Error);
        let l = load(
            "load data low_priority local infile 'f.csv' replace into table d.t \
             character set utf8mb4 fields terminated by ',' optionally enclosed by '\"' \
             escaped by '\\\\' lines starting by 'x' terminated by '\\r\\n' ignore 1 lines \
             (a, @b, `c`) set d = @b + 1",
        );
        assert!(l.local);
        assert_eq!(l.on_duplicate, OnDuplicate::Replace);
        assert_eq!((l.db.as_deref(), l.table.as_str()), (Some("d"), "t"));
        assert_eq!(l.charset.as_deref(), Some("utf8mb4"));
        assert_eq!(l.format.field_term, b",");
        assert_eq!(l.format.enclosed, Some(b'"'));
        assert!(l.format.optionally);
        assert_eq!(l.format.escaped, Some(b'\\'));
        assert_eq!(l.format.line_start, b"x");
        assert_eq!(l.format.line_term, b"\r\n");
        assert_eq!(l.ignore_lines, 1);
        assert_eq!(
            l.targets,
            vec![
                Target::Column("a".into()),
                Target::Var("b".into()),
                Target::Column("c".into())
            ]
        );
        assert_eq!(l.set.len(), 1);
        assert_eq!(l.rest, None);
        let sql = "LOAD DATA INFILE 'f' INTO TABLE t SET a = 1; SELECT 2";
        assert_eq!(load(sql).rest.map(|at| &sql[at..]), Some("SELECT 2"));
        let sql = "LOAD DATA INFILE 'f' INTO TABLE t;;SELECT 3;";
        assert_eq!(load(sql).rest.map(|at| &sql[at..]), Some("SELECT 3;"));
    }

    #[test]
    fn bad_load_syntax_is_1064_or_1083() {
        for bad in [
            "LOAD DATA INFILE x INTO TABLE t",
            "LOAD DATA INFILE 'x' INTO t",
            "LOAD DATA INFILE 'x' INTO TABLE t FIELDS",
            "LOAD DATA INFILE 'x' INTO TABLE t IGNORE LINES",
            "LOAD DATA INFILE 'x' INTO TABLE t (a b)",
            "LOAD DATA INFILE 'x' INTO TABLE t junk",
        ] {
            let e = parse_load(bad).unwrap().unwrap_err();
            assert_eq!(e.number(), 1064, "{bad}: {}", e.message);
        }
        let e = parse_load("LOAD DATA INFILE 'x' INTO TABLE t FIELDS ENCLOSED BY 'ab'")
            .unwrap()
            .unwrap_err();
        assert_eq!(e.number(), 1083);
        assert!(parse_load("SELECT 1").is_none());
    }

    #[test]
    fn export_clause_is_cut_out_wherever_it_stands() {
        let (rest, e) = split_export(
            "SELECT a, b INTO OUTFILE '/tmp/o' FIELDS TERMINATED BY ',' LINES TERMINATED BY ';' FROM t WHERE a > 1",
        )
        .unwrap()
        .unwrap();
        assert_eq!(rest, "SELECT a, b  FROM t WHERE a > 1");
        assert_eq!(e.file, "/tmp/o");
        assert!(!e.dump);
        assert_eq!(e.format.field_term, b",");
        assert_eq!(e.format.line_term, b";");
        let (rest, e) = split_export("SELECT * FROM t INTO DUMPFILE '/tmp/d'")
            .unwrap()
            .unwrap();
        assert_eq!(rest, "SELECT * FROM t  ");
        assert!(e.dump);
        // Inside a subquery or a string, it is not the statement's clause.
        assert!(split_export("SELECT 'into outfile' FROM t").is_none());
        assert!(split_export("SELECT * FROM t WHERE a IN (SELECT 1)").is_none());
    }
}
