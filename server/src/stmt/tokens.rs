//! Statements recognised from tokens where sqlparser does not parse them MySQL's way: a
//! statement's significant tokens (no whitespace or semicolons) when it starts with a given
//! word, and the keyword test the recognisers match them with.

use sqlparser::dialect::MySqlDialect;
use sqlparser::tokenizer::{Token, Tokenizer};

/// The significant tokens of `sql` if its first word is `first` (in any case); `None` for
/// another statement, or one that does not tokenize (sqlparser then answers 1064).
pub fn starting_with(sql: &str, first: &str) -> Option<Vec<Token>> {
    let head = sql.trim_start().get(..first.len())?;
    if !head.eq_ignore_ascii_case(first) {
        return None;
    }
    let tokens = Tokenizer::new(&MySqlDialect {}, sql).tokenize().ok()?;
    Some(
        tokens
            .into_iter()
            .filter(|t| !matches!(t, Token::Whitespace(_) | Token::SemiColon))
            .collect(),
    )
}

/// Whether `sql`, after leading whitespace, begins with one of `prefixes` (in any case). A
/// text test only, made before any tokenizing or copying, so the statements a recogniser
/// does not handle cost it nothing.
pub fn begins_with_any(sql: &str, prefixes: &[&str]) -> bool {
    let text = sql.trim_start().as_bytes();
    prefixes.iter().any(|p| {
        text.get(..p.len())
            .is_some_and(|head| head.eq_ignore_ascii_case(p.as_bytes()))
    })
}

/// Whether `t` is the unquoted keyword `k` (in any case).
pub fn is_keyword(t: &Token, k: &str) -> bool {
    matches!(t, Token::Word(w) if w.quote_style.is_none() && w.value.eq_ignore_ascii_case(k))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn begins_with_any_tests_the_text_after_whitespace_in_any_case() {
        assert!(begins_with_any("  lock tables t read", &["LOCK"]));
        assert!(begins_with_any("\n\tSeT x = 1", &["GRANT", "SET"]));
        assert!(begins_with_any("SETTINGS", &["SET"]));
        assert!(!begins_with_any("SELECT 1", &["SET", "SHOW"]));
        assert!(!begins_with_any("SE", &["SET"]));
        assert!(!begins_with_any("", &["SET"]));
        assert!(!begins_with_any("é SET", &["SET"]));
    }
}
