//! `UPDATE [LOW_PRIORITY] [IGNORE] ...`, whose modifiers sqlparser would read as a table
//! name: the text without them, IGNORE handed on in the only form sqlparser keeps (its
//! `UPDATE OR IGNORE`). MySQL has no `UPDATE OR ...` and no `UPDATE REPLACE`, so a client's
//! own is a syntax error here, before sqlparser could take it.

use sqlparser::dialect::MySqlDialect;
use sqlparser::tokenizer::{Token, Tokenizer};

use crate::error::{SqlError, SqlResult};
use crate::stmt::tokens::is_keyword;

/// The words after UPDATE that this module handles.
const MODIFIERS: &[&str] = &["LOW_PRIORITY", "IGNORE", "OR", "REPLACE"];

/// `sql` rewritten when it is an UPDATE with modifiers; `None` for any other statement.
pub fn rewrite(sql: &str) -> SqlResult<Option<String>> {
    let text = sql.trim_start();
    let Some(rest) = text
        .get(..6)
        .filter(|w| w.eq_ignore_ascii_case("UPDATE"))
        .map(|_| &text[6..])
    else {
        return Ok(None);
    };
    // A cheap look at the next word first: most UPDATEs have no modifier.
    let next = rest.trim_start();
    let starts_modifier = rest.starts_with(char::is_whitespace)
        && MODIFIERS.iter().any(|m| {
            next.get(..m.len())
                .is_some_and(|w| w.eq_ignore_ascii_case(m))
                && !next[m.len()..].starts_with(|c: char| c.is_alphanumeric() || c == '_')
        });
    if !starts_modifier {
        return Ok(None);
    }
    let Ok(tokens) = Tokenizer::new(&MySqlDialect {}, text).tokenize() else {
        return Ok(None);
    };
    let mut out = String::with_capacity(text.len() + 4);
    let mut ignore = false;
    let mut i = 1; // tokens[0] is UPDATE
    loop {
        match tokens.get(i) {
            Some(Token::Whitespace(_)) => i += 1,
            Some(t) if is_keyword(t, "LOW_PRIORITY") => i += 1,
            Some(t) if is_keyword(t, "IGNORE") && !ignore => {
                ignore = true;
                i += 1;
            }
            Some(t) if is_keyword(t, "OR") || is_keyword(t, "REPLACE") => {
                let near: String = tokens[i..].iter().map(ToString::to_string).collect();
                return Err(SqlError::parse(&near));
            }
            _ => break,
        }
    }
    out.push_str(if ignore {
        "UPDATE OR IGNORE "
    } else {
        "UPDATE "
    });
    out.extend(tokens[i..].iter().map(ToString::to_string));
    Ok(Some(out))
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        /// Any text after UPDATE and a modifier: no panic, and a rewrite keeps what follows.
        #[test]
        fn any_text_is_handled(m in "(?i)(low_priority|ignore|or|replace)", rest in "\\PC{0,40}") {
            let sql = format!("UPDATE {m} {rest}");
            if let Ok(Some(out)) = rewrite(&sql) {
                prop_assert!(out.starts_with("UPDATE "));
            }
        }
    }

    #[test]
    fn modifiers_are_taken_out_and_ignore_handed_on() {
        let r = |s: &str| rewrite(s).unwrap();
        assert_eq!(r("UPDATE t SET a = 1"), None);
        assert_eq!(r("update ignored SET a = 1"), None);
        assert_eq!(
            r("update ignore t set a = 1").as_deref(),
            Some("UPDATE OR IGNORE t set a = 1")
        );
        assert_eq!(
            r("UPDATE LOW_PRIORITY IGNORE `t` SET a = 'x'").as_deref(),
            Some("UPDATE OR IGNORE `t` SET a = 'x'")
        );
        assert_eq!(
            r("UPDATE LOW_PRIORITY t SET a = 1").as_deref(),
            Some("UPDATE t SET a = 1")
        );
        for bad in ["UPDATE OR IGNORE t SET a = 1", "UPDATE REPLACE t SET a = 1"] {
            assert_eq!(rewrite(bad).unwrap_err().code.code(), 1064, "{bad}");
        }
    }
}
