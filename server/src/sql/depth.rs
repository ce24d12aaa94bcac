//! A bound on how deep a statement's syntax tree can nest, checked on its tokens before it is
//! parsed. sqlparser builds operator chains (`1+1+...`, `a OR b OR ...`, `x IS NULL IS NULL
//! ...`, `SELECT 1 UNION SELECT 1 ...`) in a loop, without recursing, but labelling, binding,
//! evaluating and dropping the tree recurse once per level, so an unbounded chain would
//! overflow the connection thread's stack and abort the process.
//!
//! Invariant: the estimate is never below the real depth. Every operator token deepens the
//! operand it follows, a bracket adds a level over its deepest content, and only a comma
//! starts a fresh operand inside its brackets (a `;` starts a fresh statement). Set operations
//! are counted over the whole statement, since commas do not end their chain.

use sqlparser::keywords::Keyword;
use sqlparser::tokenizer::{Token, TokenWithSpan};

use crate::digest::normalize::is_string;
use crate::error::{ErrorCode, SqlError, SqlResult};

/// The deepest operator and bracket nesting a statement may have. Walking a tree this deep
/// takes about 3.5 MB of stack in a debug build (sqlparser's span computation, about 6.5 KB a
/// level, is the widest frame), well inside the connection threads' stacks.
pub const MAX_DEPTH: usize = 512;

/// The most set operations (`UNION`, `EXCEPT`, `INTERSECT`) one statement may chain.
pub const MAX_SET_OPERATIONS: usize = 512;

/// Whether a keyword combines operands the way an operator token does.
fn operator_keyword(k: Keyword) -> bool {
    use Keyword::*;
    matches!(
        k,
        AND | OR
            | XOR
            | NOT
            | IS
            | IN
            | BETWEEN
            | LIKE
            | ILIKE
            | REGEXP
            | RLIKE
            | DIV
            | MOD
            | COLLATE
            | ESCAPE
            | MEMBER
            | OVERLAPS
            | AT
            | SIMILAR
            | INTERVAL
            | BINARY
    )
}

fn too_deep(what: &str, limit: usize) -> SqlError {
    SqlError::new(
        ErrorCode::StackOverrunNeedMore,
        format!(
            "Thread stack overrun: the statement nests {what} more than {limit} levels deep. \
             Split it or use IN (...) lists"
        ),
    )
}

/// Refuses a token stream whose syntax tree could nest deeper than [`MAX_DEPTH`] (or chain
/// more than [`MAX_SET_OPERATIONS`] set operations) with 1436.
pub fn check(tokens: &[TokenWithSpan]) -> SqlResult<()> {
    // One frame per open bracket: the depth at which its content starts and the deepest
    // depth seen inside it.
    let mut frames: Vec<(usize, usize)> = Vec::new();
    let mut depth = 0usize;
    let mut set_ops = 0usize;
    for t in tokens {
        match &t.token {
            Token::Whitespace(_)
            | Token::Number(..)
            | Token::Period
            | Token::Placeholder(_)
            | Token::EOF => continue,
            Token::Word(w) => match w.keyword {
                Keyword::UNION | Keyword::EXCEPT | Keyword::INTERSECT | Keyword::MINUS => {
                    set_ops += 1;
                    if set_ops > MAX_SET_OPERATIONS {
                        return Err(too_deep("set operations", MAX_SET_OPERATIONS));
                    }
                    continue;
                }
                k if operator_keyword(k) => depth += 1,
                _ => continue,
            },
            Token::SemiColon => {
                frames.clear();
                depth = 0;
                set_ops = 0;
                continue;
            }
            Token::Comma => {
                depth = frames.last().map_or(0, |f| f.0);
                continue;
            }
            Token::LParen | Token::LBracket | Token::LBrace => {
                depth += 1;
                frames.push((depth, depth));
            }
            Token::RParen | Token::RBracket | Token::RBrace => {
                depth = frames.pop().map_or(depth, |f| f.1);
                continue;
            }
            t if is_string(t) => continue,
            // Every other token is an operator or punctuation that may combine operands.
            _ => depth += 1,
        }
        if depth > MAX_DEPTH {
            return Err(too_deep("operators and brackets", MAX_DEPTH));
        }
        if let Some(f) = frames.last_mut() {
            f.1 = f.1.max(depth);
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use sqlparser::dialect::MySqlDialect;
    use sqlparser::tokenizer::Tokenizer;

    use super::*;

    fn depth_ok(sql: &str) -> bool {
        let tokens = Tokenizer::new(&MySqlDialect {}, sql)
            .tokenize_with_location()
            .unwrap();
        check(&tokens).is_ok()
    }

    fn chain(op: &str, n: usize) -> String {
        format!("SELECT {}", vec!["1"; n].join(op))
    }

    #[test]
    fn long_operator_chains_are_refused_and_short_ones_pass() {
        for op in ["+", " OR ", " AND ", "*", " XOR ", "||", " DIV "] {
            assert!(depth_ok(&chain(op, MAX_DEPTH)), "{op}");
            assert!(!depth_ok(&chain(op, MAX_DEPTH + 2)), "{op}");
        }
        let is_null = format!("SELECT 1{}", " IS NULL".repeat(MAX_DEPTH + 1));
        assert!(!depth_ok(&is_null));
        let unions = vec!["SELECT 1, 2"; MAX_SET_OPERATIONS + 2].join(" UNION ");
        assert!(!depth_ok(&unions));
    }

    #[test]
    fn commas_start_fresh_operands_but_brackets_carry_their_depth_out() {
        // A huge IN list or VALUES list is flat.
        let list = vec!["1"; 100_000].join(",");
        assert!(depth_ok(&format!("SELECT 1 IN ({list})")));
        let rows = vec!["(1+1, 'a')"; 10_000].join(",");
        assert!(depth_ok(&format!("INSERT INTO t VALUES {rows}")));
        // A deep chain inside brackets still counts after the bracket closes.
        let inner = vec!["1"; 300].join("+");
        let outer = vec!["1"; 300].join("+");
        assert!(!depth_ok(&format!("SELECT ({inner}) + {outer}")));
        // Each statement of a multi-statement text is measured on its own.
        let half = chain("+", MAX_DEPTH / 2 + 10);
        assert!(depth_ok(&format!("{half}; {half}")));
        // Operators inside string literals do not count.
        let text = "+".repeat(10_000);
        assert!(depth_ok(&format!("SELECT '{text}'")));
    }
}
