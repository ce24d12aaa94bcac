//! The SQL language: statement text as bytes ([`bytes`]), parsing with sqlparser (MySQL
//! dialect) under a nesting bound with long `AND`/`OR` chains regrouped ([`chains`]), string literals' character sets ([`charset`]), the collations tables record ([`collations`]), binding
//! names ([`names`]) into expressions ([`expr`]), evaluating them ([`eval`], [`functions`]) and the
//! shapes results take ([`output`]). Statements are planned and run above, in `exec` and
//! `stmt`.

pub mod alter;
pub mod binary_strings;
pub mod bytes;
pub mod chains;
pub mod charset;
pub mod collations;
pub mod date_arith;
pub mod depth;
pub mod env;
pub mod eval;
pub mod expr;
pub mod format;
pub mod functions;
pub mod join_width;
pub mod json_functions;
pub(crate) mod load_syntax;
pub mod names;
pub mod output;
pub(crate) mod spans;
pub mod stack;
pub mod text_cell;
pub mod text_functions;

pub use output::{Output, ResultSet};

use sqlparser::ast::Statement;
use sqlparser::dialect::MySqlDialect;
use sqlparser::parser::{Parser, ParserError};
use sqlparser::tokenizer::{TokenWithSpan, Tokenizer};

use crate::error::{ErrorCode, SqlError, SqlResult};

/// Turns a sqlparser error into MySQL's 1064 with the text near the error position (1436
/// when the parser's own recursion limit stopped it).
pub fn parse_error(sql: &str, e: &ParserError) -> SqlError {
    if matches!(e, ParserError::RecursionLimitExceeded) {
        return SqlError::new(
            ErrorCode::StackOverrunNeedMore,
            "Thread stack overrun: the statement nests brackets, subqueries or prefix operators \
             too deeply",
        );
    }
    let msg = e.to_string();
    // sqlparser reports "... at Line: L, Column: C"; point the near-text there.
    let near = msg
        .rsplit_once("Line: ")
        .and_then(|(_, pos)| {
            let (l, c) = pos.split_once(", Column: ")?;
            let line: usize = l.trim().parse().ok()?;
            let col: usize = c.trim().parse().ok()?;
            let start: usize = sql
                .split_inclusive('\n')
                .take(line.saturating_sub(1))
                .map(str::len)
                .sum();
            let offset = sql
                .get(start..)?
                .char_indices()
                .nth(col.saturating_sub(1))
                .map(|(i, _)| start + i)?;
            sql.get(offset..)
        })
        .unwrap_or("");
    // The message is text: a byte that is not UTF-8 shows as U+FFFD, not as its escape.
    SqlError::parse(&String::from_utf8_lossy(&bytes::restore(near)))
}

/// Tokenizes `sql`, bounds its nesting ([`depth::check`]), parses it and regroups its long
/// `AND`/`OR` chains ([`chains`]): the outer error is the nesting bound, the inner one
/// sqlparser's.
fn parse_bounded(sql: &str) -> SqlResult<Result<Vec<Statement>, ParserError>> {
    let tokens = match Tokenizer::new(&MySqlDialect {}, sql).tokenize_with_location() {
        Ok(t) => t,
        Err(e) => return Ok(Err(e.into())),
    };
    parse_tokens(tokens).map(|(_, parsed)| parsed)
}

/// [`parse_bounded`] from `sql`'s tokens, for a caller that tokenised it already (the
/// statement shape cache, `stmt::shapes`), with how deep the text nests.
pub fn parse_tokens(
    tokens: Vec<TokenWithSpan>,
) -> SqlResult<(depth::Nesting, Result<Vec<Statement>, ParserError>)> {
    let dialect = MySqlDialect {};
    let nesting = depth::check(&tokens)?;
    join_width::check(&tokens)?;
    let mut parser = Parser::new(&dialect).with_tokens_with_locations(tokens);
    let mut parsed = alter::parse_statements(&mut parser);
    if let Ok(statements) = &mut parsed {
        chains::regroup_statements(statements);
    }
    Ok((nesting, parsed))
}

/// Parses one or more statements (`;`-separated), refusing any that nest deeper than
/// [`depth::MAX_DEPTH`].
pub fn parse(sql: &str) -> SqlResult<Vec<Statement>> {
    match parse_bounded(sql)? {
        Ok(s) => Ok(s),
        Err(e) => {
            let rewritten = rewrite_lock_in_share_mode(sql).ok_or_else(|| parse_error(sql, &e))?;
            parse_bounded(&rewritten)?.map_err(|_| parse_error(sql, &e))
        }
    }
}

/// Rewrites `... LOCK IN SHARE MODE` (which sqlparser does not parse) as `... FOR SHARE`,
/// keeping the text's length-independent meaning; None when the text has no such clause.
pub fn rewrite_lock_in_share_mode(sql: &str) -> Option<String> {
    let lower = sql.to_ascii_lowercase();
    let at = lower.rfind("lock in share mode")?;
    let mut s = String::with_capacity(sql.len());
    s.push_str(&sql[..at]);
    s.push_str("FOR SHARE");
    s.push_str(&sql[at + "lock in share mode".len()..]);
    Some(s)
}

/// The most characters of an expression's text MySQL keeps as its column's name.
pub const MAX_LABEL_CHARS: usize = 256;

/// An unaliased select item's column name: its text, cut at [`MAX_LABEL_CHARS`] characters.
pub fn label(text: &str) -> String {
    match text.char_indices().nth(MAX_LABEL_CHARS) {
        Some((cut, _)) => text[..cut].to_string(),
        None => text.to_string(),
    }
}

/// The source text a span covers (MySQL labels computed columns with the text as typed).
pub fn span_text(sql: &str, span: sqlparser::tokenizer::Span) -> Option<&str> {
    let offset = |loc: sqlparser::tokenizer::Location| -> Option<usize> {
        if loc.line == 0 {
            return None;
        }
        let start: usize = sql
            .split_inclusive('\n')
            .take(loc.line as usize - 1)
            .map(str::len)
            .sum();
        let col = loc.column as usize - 1;
        let rest = sql.get(start..)?;
        Some(
            start
                + rest
                    .char_indices()
                    .nth(col)
                    .map(|(i, _)| i)
                    .unwrap_or(rest.len()),
        )
    };
    let (mut a, mut b) = (offset(span.start)?, offset(span.end)?);
    // sqlparser's span of `SUBSTRING(c, 1, 20)` (and of other keyword-like calls) starts at
    // the first argument: start at the function's name when the text begins inside a call.
    let before = sql.get(..a)?.trim_end();
    if let Some(head) = before.strip_suffix('(') {
        let name_len = head
            .chars()
            .rev()
            .take_while(|c| c.is_alphanumeric() || *c == '_')
            .map(char::len_utf8)
            .sum::<usize>();
        if name_len > 0 {
            a = head.len() - name_len;
        }
    }
    // The span of `INTERVAL n unit` covers only `n`.
    let before = sql.get(..a)?.trim_end();
    let keyword_at = before.len().saturating_sub(8);
    if before
        .get(keyword_at..)
        .is_some_and(|w| w.eq_ignore_ascii_case("interval"))
    {
        a = keyword_at;
    }
    b += interval_unit_after(sql.get(a..b)?, sql.get(b..)?);
    // sqlparser's spans stop before a function's argument list or its closing parenthesis;
    // extend to the balanced text.
    loop {
        let text = sql.get(a..b)?;
        let open = unquoted(text).filter(|(_, c)| *c == '(').count();
        let close = unquoted(text).filter(|(_, c)| *c == ')').count();
        let rest = sql.get(b..)?;
        let trimmed = rest.trim_start();
        let opens_args = open == close
            && trimmed.starts_with('(')
            && text.ends_with(|c: char| c.is_alphanumeric() || c == '_');
        if open > close {
            b += closing_paren(rest, open - close)? + 1;
        } else if opens_args {
            b += rest.len() - trimmed.len() + 1;
        } else {
            break;
        }
    }
    sql.get(a..b).map(str::trim).filter(|t| !t.is_empty())
}

/// How far past `text` its `INTERVAL n unit` reaches when the unit is not in it (the bytes
/// up to the end of the unit word in `rest`), or 0.
fn interval_unit_after(text: &str, rest: &str) -> usize {
    let words: Vec<&str> = text.split_whitespace().collect();
    let ends_in_interval = words.len() >= 2
        && words[words.len() - 2].eq_ignore_ascii_case("interval")
        && !crate::sql::date_arith::is_unit(words[words.len() - 1]);
    if !ends_in_interval {
        return 0;
    }
    let trimmed = rest.trim_start();
    let word_len = trimmed
        .find(|c: char| !(c.is_alphanumeric() || c == '_'))
        .unwrap_or(trimmed.len());
    if crate::sql::date_arith::is_unit(&trimmed[..word_len]) {
        rest.len() - trimmed.len() + word_len
    } else {
        0
    }
}

/// The characters of `text` outside quoted strings and names, with their byte offsets.
fn unquoted(text: &str) -> impl Iterator<Item = (usize, char)> + '_ {
    let mut quote: Option<char> = None;
    let mut escaped = false;
    text.char_indices().filter(move |&(_, c)| match quote {
        Some(q) => {
            if escaped {
                escaped = false;
            } else if c == '\\' && q != '`' {
                escaped = true;
            } else if c == q {
                quote = None;
            }
            false
        }
        None if matches!(c, '\'' | '"' | '`') => {
            quote = Some(c);
            false
        }
        None => true,
    })
}

/// The byte offset in `rest` of the parenthesis that closes `depth` open ones.
fn closing_paren(rest: &str, mut depth: usize) -> Option<usize> {
    for (i, c) in unquoted(rest) {
        match c {
            '(' => depth += 1,
            ')' => {
                depth -= 1;
                if depth == 0 {
                    return Some(i);
                }
            }
            _ => {}
        }
    }
    None
}

#[cfg(test)]
mod tests;
