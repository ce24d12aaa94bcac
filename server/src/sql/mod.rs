//! The SQL language: statement text as bytes ([`bytes`]), parsing with sqlparser (MySQL
//! dialect) under a nesting bound, string literals' character sets ([`charset`]), binding
//! names ([`names`]) into expressions ([`expr`]), evaluating them ([`eval`], [`functions`]) and the
//! shapes results take ([`output`]). Statements are planned and run above, in `exec` and
//! `stmt`.

pub mod alter;
pub mod bytes;
pub mod charset;
pub mod depth;
pub mod env;
pub mod eval;
pub mod expr;
pub mod format;
pub mod functions;
pub mod names;
pub mod output;
pub mod stack;

pub use output::{Output, ResultSet};

use sqlparser::ast::Statement;
use sqlparser::dialect::MySqlDialect;
use sqlparser::parser::{Parser, ParserError};
use sqlparser::tokenizer::Tokenizer;

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

/// Tokenizes `sql`, bounds its nesting ([`depth::check`]) and parses it: the outer error is
/// the nesting bound, the inner one sqlparser's.
fn parse_bounded(sql: &str) -> SqlResult<Result<Vec<Statement>, ParserError>> {
    let dialect = MySqlDialect {};
    let tokens = match Tokenizer::new(&dialect, sql).tokenize_with_location() {
        Ok(t) => t,
        Err(e) => return Ok(Err(e.into())),
    };
    depth::check(&tokens)?;
    let mut parser = Parser::new(&dialect).with_tokens_with_locations(tokens);
    Ok(alter::parse_statements(&mut parser))
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
    let (a, mut b) = (offset(span.start)?, offset(span.end)?);
    // sqlparser's spans stop before a function's argument list or its closing parenthesis;
    // extend to the balanced text.
    loop {
        let text = sql.get(a..b)?;
        let open = text.bytes().filter(|c| *c == b'(').count();
        let close = text.bytes().filter(|c| *c == b')').count();
        let rest = sql.get(b..)?;
        let trimmed = rest.trim_start();
        let skipped = rest.len() - trimmed.len();
        let closes_call = open > close && trimmed.starts_with(')');
        let opens_args = open == close
            && trimmed.starts_with('(')
            && text.ends_with(|c: char| c.is_alphanumeric() || c == '_');
        if closes_call || opens_args {
            b += skipped + 1;
        } else {
            break;
        }
    }
    sql.get(a..b).map(str::trim).filter(|t| !t.is_empty())
}

#[cfg(test)]
mod tests;
