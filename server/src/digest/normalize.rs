//! Statement normalisation for digests, from sqlparser's MySQL tokens.
//!
//! The rules follow what MySQL's `DIGEST_TEXT` shows:
//! - every literal (numbers, strings, hex and bit values, `NULL` except after `IS`/`NOT`) and
//!   every `?` placeholder becomes `?`; a sign directly before a number that is not a binary
//!   operator is dropped (`= -1` → `= ?`); a charset introducer before a string is dropped;
//! - two or more comma-separated values become `?, ...`; a parenthesised single value `(?)`
//!   and a parenthesised value list `(...)`; two or more such rows become
//!   `(?) /* , ... */` or `(...) /* , ... */` (multi-row VALUES, `IN ((1,2),(3,4))`);
//! - keywords are upper-cased, identifiers back-quoted with their case kept, comments
//!   dropped, and every token is followed by one space (`COUNT ( * )`, `` `t` . `c` ``);
//! - the text is cut at `max_length` bytes with `...` appended, as MySQL does at
//!   `performance_schema_max_digest_length`.
//!
//! MySQL decides keyword against identifier from its parse; tpbed has only tokens, so a
//! word that is a MySQL reserved word is a keyword, any other word that sqlparser knows as a
//! keyword is an identifier where an expression or a name is expected (after `SELECT`, `,`,
//! `(`, an operator, `WHERE`, `SET`, `BY`...; or next to a `.`) and a keyword elsewhere, and
//! every other word is an identifier.

use sqlparser::dialect::MySqlDialect;
use sqlparser::keywords::Keyword;
use sqlparser::tokenizer::{Token, TokenWithSpan, Tokenizer, Word};

/// Input beyond this many bytes is not tokenised: a digest never needs more, and bulk
/// statements (multi-row INSERTs of megabytes) would otherwise pay for it.
const MAX_INPUT: usize = 64 * 1024;

/// MySQL 8.0's reserved words (they are keywords wherever they appear unquoted), sorted.
const RESERVED: &[&str] = &[
    "ACCESSIBLE",
    "ADD",
    "ALL",
    "ALTER",
    "ANALYZE",
    "AND",
    "AS",
    "ASC",
    "ASENSITIVE",
    "BEFORE",
    "BETWEEN",
    "BIGINT",
    "BINARY",
    "BLOB",
    "BOTH",
    "BY",
    "CALL",
    "CASCADE",
    "CASE",
    "CHANGE",
    "CHAR",
    "CHARACTER",
    "CHECK",
    "COLLATE",
    "COLUMN",
    "CONDITION",
    "CONSTRAINT",
    "CONTINUE",
    "CONVERT",
    "CREATE",
    "CROSS",
    "CUBE",
    "CUME_DIST",
    "CURRENT_DATE",
    "CURRENT_TIME",
    "CURRENT_TIMESTAMP",
    "CURRENT_USER",
    "CURSOR",
    "DATABASE",
    "DATABASES",
    "DAY_HOUR",
    "DAY_MICROSECOND",
    "DAY_MINUTE",
    "DAY_SECOND",
    "DEC",
    "DECIMAL",
    "DECLARE",
    "DEFAULT",
    "DELAYED",
    "DELETE",
    "DENSE_RANK",
    "DESC",
    "DESCRIBE",
    "DETERMINISTIC",
    "DISTINCT",
    "DISTINCTROW",
    "DIV",
    "DOUBLE",
    "DROP",
    "DUAL",
    "EACH",
    "ELSE",
    "ELSEIF",
    "EMPTY",
    "ENCLOSED",
    "ESCAPED",
    "EXCEPT",
    "EXISTS",
    "EXIT",
    "EXPLAIN",
    "FALSE",
    "FETCH",
    "FIRST_VALUE",
    "FLOAT",
    "FLOAT4",
    "FLOAT8",
    "FOR",
    "FORCE",
    "FOREIGN",
    "FROM",
    "FULLTEXT",
    "FUNCTION",
    "GENERATED",
    "GET",
    "GRANT",
    "GROUP",
    "GROUPING",
    "GROUPS",
    "HAVING",
    "HIGH_PRIORITY",
    "HOUR_MICROSECOND",
    "HOUR_MINUTE",
    "HOUR_SECOND",
    "IF",
    "IGNORE",
    "IN",
    "INDEX",
    "INFILE",
    "INNER",
    "INOUT",
    "INSENSITIVE",
    "INSERT",
    "INT",
    "INT1",
    "INT2",
    "INT3",
    "INT4",
    "INT8",
    "INTEGER",
    "INTERSECT",
    "INTERVAL",
    "INTO",
    "IS",
    "ITERATE",
    "JOIN",
    "JSON_TABLE",
    "KEY",
    "KEYS",
    "KILL",
    "LAG",
    "LAST_VALUE",
    "LATERAL",
    "LEAD",
    "LEADING",
    "LEAVE",
    "LEFT",
    "LIKE",
    "LIMIT",
    "LINEAR",
    "LINES",
    "LOAD",
    "LOCALTIME",
    "LOCALTIMESTAMP",
    "LOCK",
    "LONG",
    "LONGBLOB",
    "LONGTEXT",
    "LOOP",
    "LOW_PRIORITY",
    "MATCH",
    "MAXVALUE",
    "MEDIUMBLOB",
    "MEDIUMINT",
    "MEDIUMTEXT",
    "MIDDLEINT",
    "MINUTE_MICROSECOND",
    "MINUTE_SECOND",
    "MOD",
    "MODIFIES",
    "NATURAL",
    "NOT",
    "NO_WRITE_TO_BINLOG",
    "NTH_VALUE",
    "NTILE",
    "NULL",
    "NUMERIC",
    "OF",
    "ON",
    "OPTIMIZE",
    "OPTION",
    "OPTIONALLY",
    "OR",
    "ORDER",
    "OUT",
    "OUTER",
    "OUTFILE",
    "OVER",
    "PARTITION",
    "PERCENT_RANK",
    "PRECISION",
    "PRIMARY",
    "PROCEDURE",
    "PURGE",
    "RANGE",
    "RANK",
    "READ",
    "READS",
    "READ_WRITE",
    "REAL",
    "RECURSIVE",
    "REFERENCES",
    "REGEXP",
    "RELEASE",
    "RENAME",
    "REPEAT",
    "REPLACE",
    "REQUIRE",
    "RESIGNAL",
    "RESTRICT",
    "RETURN",
    "REVOKE",
    "RIGHT",
    "RLIKE",
    "ROW",
    "ROWS",
    "ROW_NUMBER",
    "SCHEMA",
    "SCHEMAS",
    "SECOND_MICROSECOND",
    "SELECT",
    "SENSITIVE",
    "SEPARATOR",
    "SET",
    "SHOW",
    "SIGNAL",
    "SMALLINT",
    "SPATIAL",
    "SPECIFIC",
    "SQL",
    "SQLEXCEPTION",
    "SQLSTATE",
    "SQLWARNING",
    "SQL_BIG_RESULT",
    "SQL_CALC_FOUND_ROWS",
    "SQL_SMALL_RESULT",
    "SSL",
    "STARTING",
    "STORED",
    "STRAIGHT_JOIN",
    "SYSTEM",
    "TABLE",
    "TERMINATED",
    "THEN",
    "TINYBLOB",
    "TINYINT",
    "TINYTEXT",
    "TO",
    "TRAILING",
    "TRIGGER",
    "TRUE",
    "UNDO",
    "UNION",
    "UNIQUE",
    "UNLOCK",
    "UNSIGNED",
    "UPDATE",
    "USAGE",
    "USE",
    "USING",
    "UTC_DATE",
    "UTC_TIME",
    "UTC_TIMESTAMP",
    "VALUES",
    "VARBINARY",
    "VARCHAR",
    "VARCHARACTER",
    "VARYING",
    "VIRTUAL",
    "WHEN",
    "WHERE",
    "WHILE",
    "WINDOW",
    "WITH",
    "WRITE",
    "XOR",
    "YEAR_MONTH",
    "ZEROFILL",
];

/// Reserved words after which a name or an expression follows (a non-reserved keyword
/// there is used as an identifier).
const BEFORE_NAME: &[&str] = &[
    "AND", "AS", "BETWEEN", "BY", "CASE", "DESCRIBE", "DISTINCT", "DIV", "ELSE", "FROM", "HAVING",
    "INTO", "JOIN", "LIKE", "MOD", "NOT", "ON", "OR", "REGEXP", "RLIKE", "SELECT", "SET", "TABLE",
    "THEN", "USE", "WHEN", "WHERE", "XOR",
];

/// Keywords that stay keywords right after `SET` (`SET SESSION ...`, `SET NAMES ...`).
const SET_KEYWORDS: &[&str] = &[
    "GLOBAL",
    "LOCAL",
    "NAMES",
    "PASSWORD",
    "PERSIST",
    "PERSIST_ONLY",
    "SESSION",
    "TRANSACTION",
];

/// One normalised token.
#[derive(Debug, Clone, PartialEq)]
enum Out {
    /// A literal or placeholder: `?`.
    Value,
    /// Two or more comma-separated values: `?, ...`.
    ValueList,
    /// `(?)`.
    Row1,
    /// `(...)`.
    RowN,
    /// `(?) /* , ... */`.
    Row1List,
    /// `(...) /* , ... */`.
    RowNList,
    /// `(`.
    LParen,
    /// `)`.
    RParen,
    /// `,`.
    Comma,
    /// An identifier or variable, already quoted (ends an operand, like a value).
    Name(String),
    /// A keyword or operator, as printed.
    Word(String),
}

impl Out {
    fn text(&self) -> &str {
        match self {
            Out::Value => "?",
            Out::ValueList => "?, ...",
            Out::Row1 => "(?)",
            Out::RowN => "(...)",
            Out::Row1List => "(?) /* , ... */",
            Out::RowNList => "(...) /* , ... */",
            Out::LParen => "(",
            Out::RParen => ")",
            Out::Comma => ",",
            Out::Name(s) | Out::Word(s) => s,
        }
    }

    /// Whether a `-`/`+` after this token is a binary operator.
    fn ends_operand(&self) -> bool {
        !matches!(self, Out::LParen | Out::Comma | Out::Word(_))
    }

    fn is_values(&self) -> bool {
        matches!(self, Out::Value | Out::ValueList)
    }
}

/// Normalises `sql` into one digest text per statement (statements split at top-level
/// `;`; empty ones dropped). Never fails: text the tokenizer rejects is normalised up to
/// the point of the error.
pub fn normalize(sql: &str, max_length: usize) -> Vec<String> {
    let mut cut = false;
    let mut input = sql;
    if input.len() > MAX_INPUT {
        let mut end = MAX_INPUT;
        while !input.is_char_boundary(end) {
            end -= 1;
        }
        input = &input[..end];
        cut = true;
    }
    let mut tokens: Vec<TokenWithSpan> = Vec::new();
    let failed = Tokenizer::new(&MySqlDialect {}, input)
        .with_unescape(false)
        .tokenize_with_location_into_buf(&mut tokens)
        .is_err();
    let significant: Vec<&Token> = tokens
        .iter()
        .map(|t| &t.token)
        .filter(|t| !matches!(t, Token::Whitespace(_) | Token::EOF))
        .collect();
    let mut out = Vec::new();
    let mut pieces = significant
        .split(|t| matches!(t, Token::SemiColon))
        .peekable();
    while let Some(piece) = pieces.next() {
        if piece.is_empty() {
            continue;
        }
        let last = pieces.peek().is_none();
        let mut n = Normalizer::default();
        n.run(piece);
        out.push(n.render(max_length, last && (cut || failed)));
    }
    out
}

#[derive(Debug, Default)]
struct Normalizer {
    out: Vec<Out>,
}

fn upper(w: &Word) -> String {
    w.value.to_ascii_uppercase()
}

fn is_reserved(upper: &str) -> bool {
    RESERVED.binary_search(&upper).is_ok()
}

/// Whether `t` is a string, byte-string or hex literal: an operand, never an operator.
pub(crate) fn is_string(t: &Token) -> bool {
    matches!(
        t,
        Token::SingleQuotedString(_)
            | Token::DoubleQuotedString(_)
            | Token::NationalStringLiteral(_)
            | Token::HexStringLiteral(_)
            | Token::SingleQuotedByteStringLiteral(_)
            | Token::DoubleQuotedByteStringLiteral(_)
            | Token::EscapedStringLiteral(_)
            | Token::UnicodeStringLiteral(_)
            | Token::TripleSingleQuotedString(_)
            | Token::TripleDoubleQuotedString(_)
            | Token::DollarQuotedString(_)
            | Token::TripleSingleQuotedByteStringLiteral(_)
            | Token::TripleDoubleQuotedByteStringLiteral(_)
            | Token::SingleQuotedRawStringLiteral(_)
            | Token::DoubleQuotedRawStringLiteral(_)
            | Token::TripleSingleQuotedRawStringLiteral(_)
            | Token::TripleDoubleQuotedRawStringLiteral(_)
            | Token::QuoteDelimitedStringLiteral(_)
            | Token::NationalQuoteDelimitedStringLiteral(_)
    )
}

fn word_is(t: Option<&&Token>, kw: &str) -> bool {
    matches!(t, Some(Token::Word(w)) if w.quote_style.is_none() && w.value.eq_ignore_ascii_case(kw))
}

/// `name` back-quoted, with back-quotes inside doubled.
fn quote(name: &str) -> String {
    let mut s = String::with_capacity(name.len() + 2);
    s.push('`');
    for c in name.chars() {
        if c == '`' {
            s.push('`');
        }
        s.push(c);
    }
    s.push('`');
    s
}

/// Whether a token before a word puts the word where a name or expression is expected.
fn before_name(prev: &Token, first: bool) -> bool {
    match prev {
        Token::Comma
        | Token::LParen
        | Token::Eq
        | Token::DoubleEq
        | Token::Neq
        | Token::Lt
        | Token::Gt
        | Token::LtEq
        | Token::GtEq
        | Token::Spaceship
        | Token::Plus
        | Token::Minus
        | Token::Mul
        | Token::Div
        | Token::Mod
        | Token::Caret
        | Token::Pipe
        | Token::Ampersand
        | Token::ShiftLeft
        | Token::ShiftRight
        | Token::StringConcat
        | Token::Assignment
        | Token::ExclamationMark => true,
        Token::Word(w) if w.quote_style.is_none() => {
            let u = upper(w);
            BEFORE_NAME.contains(&u.as_str()) || (first && u == "UPDATE")
        }
        _ => false,
    }
}

impl Normalizer {
    fn push(&mut self, o: Out) {
        match o {
            Out::Value => {
                let n = self.out.len();
                if n >= 2 && self.out[n - 1] == Out::Comma && self.out[n - 2].is_values() {
                    self.out.truncate(n - 2);
                    self.out.push(Out::ValueList);
                } else {
                    self.out.push(Out::Value);
                }
            }
            Out::RParen => {
                let n = self.out.len();
                let row = if n >= 2 && self.out[n - 2] == Out::LParen {
                    match self.out[n - 1] {
                        Out::Value => Some(Out::Row1),
                        Out::ValueList => Some(Out::RowN),
                        _ => None,
                    }
                } else {
                    None
                };
                match row {
                    Some(r) => {
                        self.out.truncate(n - 2);
                        self.push_row(r);
                    }
                    None => self.out.push(Out::RParen),
                }
            }
            other => self.out.push(other),
        }
    }

    /// Pushes `(?)` or `(...)`, merging it into a preceding row of the same kind.
    fn push_row(&mut self, row: Out) {
        let list = match row {
            Out::Row1 => Out::Row1List,
            _ => Out::RowNList,
        };
        let n = self.out.len();
        if n >= 2
            && self.out[n - 1] == Out::Comma
            && (self.out[n - 2] == row || self.out[n - 2] == list)
        {
            self.out.truncate(n - 2);
            self.out.push(list);
        } else {
            self.out.push(row);
        }
    }

    fn run(&mut self, toks: &[&Token]) {
        let mut i = 0;
        while i < toks.len() {
            let t = toks[i];
            let prev = i.checked_sub(1).map(|p| toks[p]);
            let next = toks.get(i + 1).copied();
            match t {
                Token::Number(..) | Token::Placeholder(_) => self.push(Out::Value),
                _ if is_string(t) => {
                    // Adjacent strings are one literal ('a' 'b' is 'ab').
                    if !prev.is_some_and(is_string) {
                        self.push(Out::Value);
                    }
                }
                Token::Minus | Token::Plus
                    if matches!(next, Some(Token::Number(..)))
                        && !self.out.last().is_some_and(Out::ends_operand) => {}
                Token::LParen => self.push(Out::LParen),
                Token::RParen => self.push(Out::RParen),
                Token::Comma => self.push(Out::Comma),
                Token::AtSign => {
                    // `@`quoted`` user variable.
                    if let Some(Token::Word(w)) = next {
                        self.push(Out::Name(format!("@{}", quote(&w.value))));
                        i += 1;
                    } else {
                        self.push(Out::Word("@".into()));
                    }
                }
                Token::Word(w) => {
                    if let Some(o) = self.word(toks, i, w) {
                        self.push(o);
                    }
                }
                other => self.push(Out::Word(other.to_string())),
            }
            i += 1;
        }
    }

    /// The normalised form of the word at `toks[i]` (None: dropped).
    fn word(&self, toks: &[&Token], i: usize, w: &Word) -> Option<Out> {
        let prev = i.checked_sub(1).map(|p| &toks[p]);
        let next = toks.get(i + 1);
        match w.quote_style {
            Some('`') => return Some(Out::Name(format!("`{}`", w.value))),
            Some(_) => return Some(Out::Name(quote(&w.value))),
            None => {}
        }
        if let Some(rest) = w.value.strip_prefix("@@") {
            return Some(Out::Name(format!("@@{}", quote(rest))));
        }
        if let Some(rest) = w.value.strip_prefix('@') {
            return Some(Out::Name(format!("@{}", quote(rest))));
        }
        if w.value.starts_with('_') && next.is_some_and(|t| is_string(t)) {
            return None; // charset introducer
        }
        let u = upper(w);
        if u == "NULL" {
            return Some(if word_is(prev, "IS") || word_is(prev, "NOT") {
                Out::Word(u)
            } else {
                Out::Value
            });
        }
        if is_reserved(&u) {
            return Some(Out::Word(u));
        }
        if w.keyword == Keyword::NoKeyword {
            return Some(Out::Name(quote(&w.value)));
        }
        let next_tok: Option<&Token> = next.copied();
        if matches!(next_tok, Some(Token::LParen)) {
            return Some(Out::Word(u));
        }
        if matches!(next_tok, Some(Token::Period)) || matches!(prev, Some(Token::Period)) {
            return Some(Out::Name(quote(&w.value)));
        }
        let Some(prev) = prev else {
            return Some(Out::Word(u));
        };
        let as_type = word_is(Some(prev), "AS") && matches!(next_tok, Some(Token::RParen));
        let set_kw = word_is(Some(prev), "SET") && SET_KEYWORDS.contains(&u.as_str());
        let on_dup = word_is(Some(prev), "ON") && u == "DUPLICATE";
        if !as_type && !set_kw && !on_dup && before_name(prev, i == 1) {
            Some(Out::Name(quote(&w.value)))
        } else {
            Some(Out::Word(u))
        }
    }

    /// The digest text: tokens joined by single spaces, cut at `max_length` bytes. With
    /// `incomplete` (the input was cut or did not tokenise to the end) a trailing partial row
    /// list is dropped back to the last complete one, so a long multi-row INSERT digests
    /// like a short one.
    fn render(mut self, max_length: usize, incomplete: bool) -> String {
        let mut truncated = false;
        if incomplete {
            match self
                .out
                .iter()
                .rposition(|o| matches!(o, Out::Row1List | Out::RowNList))
            {
                Some(p) => self.out.truncate(p + 1),
                None => truncated = true,
            }
        }
        let mut s = String::with_capacity(64);
        for o in &self.out {
            let t = o.text();
            let need = t.len() + usize::from(!s.is_empty());
            if s.len() + need > max_length {
                truncated = true;
                break;
            }
            if !s.is_empty() {
                s.push(' ');
            }
            s.push_str(t);
        }
        if truncated {
            if !s.is_empty() {
                s.push(' ');
            }
            s.push_str("...");
        }
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn one(sql: &str) -> String {
        let v = normalize(sql, 1024);
        assert_eq!(v.len(), 1, "{sql}: {v:?}");
        v.into_iter().next().unwrap()
    }

    #[test]
    fn reserved_list_is_sorted() {
        assert!(RESERVED.windows(2).all(|w| w[0] < w[1]));
    }

    #[test]
    fn point_select() {
        assert_eq!(
            one("SELECT c FROM sbtest1 WHERE id=4992"),
            "SELECT `c` FROM `sbtest1` WHERE `id` = ?"
        );
        assert_eq!(
            one("select c from sbtest1 where id = ?"),
            "SELECT `c` FROM `sbtest1` WHERE `id` = ?"
        );
    }

    #[test]
    fn queue_claim() {
        assert_eq!(
            one("SELECT id FROM q WHERE status = 0 ORDER BY run_at, id LIMIT 10 FOR UPDATE SKIP LOCKED"),
            "SELECT `id` FROM `q` WHERE `status` = ? ORDER BY `run_at` , `id` LIMIT ? FOR UPDATE SKIP LOCKED"
        );
        assert_eq!(
            one("UPDATE q SET status = 1, owner = 'w1', lease_until = 99 WHERE id IN (1, 2, 3)"),
            "UPDATE `q` SET `status` = ? , `owner` = ? , `lease_until` = ? WHERE `id` IN (...)"
        );
        assert_eq!(
            one("DELETE FROM q WHERE id IN (7)"),
            "DELETE FROM `q` WHERE `id` IN (?)"
        );
        assert_eq!(
            one("SELECT id FROM q WHERE status=0 LOCK IN SHARE MODE"),
            "SELECT `id` FROM `q` WHERE `status` = ? LOCK IN SHARE MODE"
        );
    }

    #[test]
    fn value_rows() {
        assert_eq!(
            one("INSERT INTO t (a, b) VALUES (1, 'x'), (2, 'y'), (3, NULL)"),
            "INSERT INTO `t` ( `a` , `b` ) VALUES (...) /* , ... */"
        );
        assert_eq!(
            one("INSERT INTO t VALUES (1, 'x')"),
            "INSERT INTO `t` VALUES (...)"
        );
        assert_eq!(
            one("insert into t values (1),(2)"),
            "INSERT INTO `t` VALUES (?) /* , ... */"
        );
        assert_eq!(one("SELECT 1, 2, 3"), "SELECT ?, ...");
        assert_eq!(
            one("SELECT * FROM t LIMIT 5, 10"),
            "SELECT * FROM `t` LIMIT ?, ..."
        );
    }

    #[test]
    fn literals_signs_and_null() {
        assert_eq!(
            one("SELECT -1, a - 1, x'AF', _utf8mb4'é' 'more', N'n', 0x1f, 1.5e3 FROM t"),
            "SELECT ? , `a` - ?, ... FROM `t`"
        );
        assert_eq!(
            one("SELECT a FROM t WHERE b IS NOT NULL AND c IS NULL AND d = NULL"),
            "SELECT `a` FROM `t` WHERE `b` IS NOT NULL AND `c` IS NULL AND `d` = ?"
        );
    }

    #[test]
    fn identifiers_and_keywords() {
        assert_eq!(
            one("select t.status, `order`, count(*), sum(x) as total from db.t group by t.status"),
            "SELECT `t` . `status` , `order` , COUNT ( * ) , SUM ( `x` ) AS `total` FROM `db` . `t` GROUP BY `t` . `status`"
        );
        assert_eq!(
            one("SELECT @@version_comment LIMIT 1"),
            "SELECT @@`version_comment` LIMIT ?"
        );
        assert_eq!(
            one("SET SESSION TRANSACTION ISOLATION LEVEL READ COMMITTED"),
            "SET SESSION TRANSACTION ISOLATION LEVEL READ COMMITTED"
        );
        assert_eq!(one("SET autocommit = 1"), "SET `autocommit` = ?");
        assert_eq!(one("begin"), "BEGIN");
        assert_eq!(
            one("SHOW GLOBAL STATUS LIKE 'x%'"),
            "SHOW GLOBAL STATUS LIKE ?"
        );
        assert_eq!(one("SELECT sleep(1)"), "SELECT `sleep` (?)");
        assert_eq!(one("SELECT `a``b` FROM t"), "SELECT `a``b` FROM `t`");
    }

    #[test]
    fn comments_whitespace_and_statements() {
        assert_eq!(
            one("  select /* c */ a\n\t from t -- tail\n where b = 'it''s' # x\n"),
            "SELECT `a` FROM `t` WHERE `b` = ?"
        );
        assert_eq!(
            normalize("BEGIN; SELECT 1;; COMMIT;", 1024),
            vec!["BEGIN", "SELECT ?", "COMMIT"]
        );
        assert!(normalize("  ; -- nothing\n", 1024).is_empty());
    }

    #[test]
    fn cut_at_max_length_and_long_inserts() {
        let d = one(&format!("SELECT {} FROM t", vec!["a"; 400].join(", ")));
        assert!(d.len() <= 1024 + 4 && d.ends_with("..."), "{d}");
        let d = normalize(&format!("SELECT {} FROM t", vec!["a"; 400].join(", ")), 64);
        assert!(d[0].ends_with("..."), "{d:?}");
        assert!(d[0].len() <= 68, "{d:?}");
        let rows: Vec<String> = (0..20_000).map(|i| format!("({i}, 'p{i}')")).collect();
        let big = format!("INSERT INTO t VALUES {}", rows.join(", "));
        assert!(big.len() > MAX_INPUT);
        assert_eq!(one(&big), "INSERT INTO `t` VALUES (...) /* , ... */");
        assert_eq!(one("SELECT 'unterminated"), "SELECT ...");
    }
}

#[cfg(test)]
mod props {
    use super::normalize;
    use proptest::prelude::*;

    fn sql_string(s: &str) -> String {
        format!("'{}'", s.replace('\\', "\\\\").replace('\'', "''"))
    }

    proptest! {
        #[test]
        fn never_panics_on_text(s in "\\PC{0,200}") {
            let _ = normalize(&s, 1024);
        }

        #[test]
        fn never_panics_on_bytes(b in proptest::collection::vec(any::<u8>(), 0..300), max in 0usize..100) {
            for d in normalize(&String::from_utf8_lossy(&b), max) {
                prop_assert!(d.len() <= max.max(3) + 4);
            }
        }

        #[test]
        fn literals_do_not_change_the_digest(
            id in any::<i64>(),
            s in "[a-zA-Z0-9 '\\\\%_]{0,20}",
            list in proptest::collection::vec(any::<u32>(), 2..8),
            rows in proptest::collection::vec((any::<i32>(), "[a-z']{0,8}"), 2..6),
            limit in any::<u16>(),
            f in any::<f64>().prop_filter("finite", |f| f.is_finite()),
        ) {
            let ids: Vec<String> = list.iter().map(u32::to_string).collect();
            let a = format!(
                "SELECT c FROM t WHERE id = {id} AND s = {} AND x IN ({}) AND y > {f:?} LIMIT {limit}",
                sql_string(&s),
                ids.join(", ")
            );
            let b = "select c from t where id=1 and s='x' and x in (7,8) and y > 0.5 limit 1";
            prop_assert_eq!(normalize(&a, 1024), normalize(b, 1024));
            let vals: Vec<String> = rows.iter().map(|(n, t)| format!("({n}, {})", sql_string(t))).collect();
            let a = format!("INSERT INTO t (a, b) VALUES {}", vals.join(", "));
            let b = "INSERT INTO t (a, b) VALUES (1, 'x'), (2, NULL)";
            prop_assert_eq!(normalize(&a, 1024), normalize(b, 1024));
        }
    }
}
