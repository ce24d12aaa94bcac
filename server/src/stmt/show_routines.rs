//! `SHOW EVENTS [{FROM | IN} db]` and `SHOW {FUNCTION | PROCEDURE} STATUS`, with a `LIKE` or
//! `WHERE` filter, which sqlparser does not parse: tpbed has no events or stored routines,
//! so each answers with MySQL 8.0's columns and no rows (what `mariadb-dump --events
//! --routines` reads before it dumps them).

use sqlparser::tokenizer::Token;

use crate::context::Context;
use crate::error::SqlResult;
use crate::exec::errors::no_database;
use crate::stmt::tokens::{is_keyword, starting_with};

/// `SHOW EVENTS`'s columns.
const EVENTS: &[&str] = &[
    "Db",
    "Name",
    "Definer",
    "Time zone",
    "Type",
    "Execute at",
    "Interval value",
    "Interval field",
    "Starts",
    "Ends",
    "Status",
    "Originator",
    "character_set_client",
    "collation_connection",
    "Database Collation",
];

/// `SHOW {FUNCTION | PROCEDURE} STATUS`'s columns.
const ROUTINES: &[&str] = &[
    "Db",
    "Name",
    "Type",
    "Definer",
    "Modified",
    "Created",
    "Security_type",
    "Comment",
    "character_set_client",
    "collation_connection",
    "Database Collation",
];

/// What the statement names: events of a database (None: the current one), or routines.
#[derive(Debug, PartialEq, Eq)]
enum Shown {
    Events(Option<String>),
    Routines,
}

/// Recognises the statement's words (None for any other statement, or a malformed one,
/// which sqlparser then answers with 1064).
fn recognise(sql: &str) -> Option<Shown> {
    let tokens = starting_with(sql, "SHOW")?;
    let kw = is_keyword;
    let (shown, rest) = match tokens.as_slice() {
        [_, events, from, Token::Word(db), rest @ ..]
            if kw(events, "EVENTS") && (kw(from, "FROM") || kw(from, "IN")) =>
        {
            (Shown::Events(Some(db.value.clone())), rest)
        }
        [_, events, rest @ ..] if kw(events, "EVENTS") => (Shown::Events(None), rest),
        [_, kind, status, rest @ ..]
            if (kw(kind, "FUNCTION") || kw(kind, "PROCEDURE")) && kw(status, "STATUS") =>
        {
            (Shown::Routines, rest)
        }
        _ => return None,
    };
    // A filter over no rows: LIKE 'pattern' or WHERE and an expression.
    let filter_ok = match rest {
        [] => true,
        [like, Token::SingleQuotedString(_)] => kw(like, "LIKE"),
        [r#where, _, ..] => kw(r#where, "WHERE"),
        _ => false,
    };
    filter_ok.then_some(shown)
}

/// The statement's columns if `sql` is one of these forms (1046 for SHOW EVENTS without a
/// database, 1049 for an unknown one).
pub fn parse(st: &Context, sql: &str) -> SqlResult<Option<Vec<String>>> {
    let columns = match recognise(sql) {
        None => return Ok(None),
        Some(Shown::Routines) => ROUTINES,
        Some(Shown::Events(db)) => {
            let db = match db {
                Some(d) => d,
                None => st.db.clone().ok_or_else(no_database)?,
            };
            if !st.core.database_exists(&db) {
                return Err(crate::error::unknown_db(&db));
            }
            EVENTS
        }
    };
    Ok(Some(columns.iter().map(|c| c.to_string()).collect()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn recognises_mysqls_forms() {
        assert_eq!(recognise("SHOW EVENTS"), Some(Shown::Events(None)));
        assert_eq!(
            recognise("show events from `d` like 'x%'"),
            Some(Shown::Events(Some("d".into())))
        );
        assert_eq!(
            recognise("SHOW FUNCTION STATUS WHERE Db = 'd'"),
            Some(Shown::Routines)
        );
        assert_eq!(recognise("SHOW PROCEDURE STATUS"), Some(Shown::Routines));
        assert_eq!(recognise("SHOW EVENTS junk"), None);
        assert_eq!(recognise("SHOW FUNCTION"), None);
        assert_eq!(recognise("SHOW TABLES"), None);
    }
}
