//! `SHOW CREATE {DATABASE | SCHEMA} [IF NOT EXISTS] name`, which sqlparser does not parse:
//! recognised from its tokens, answered with MySQL's text (the database's default character
//! set and collation, unencrypted).

use sqlparser::tokenizer::Token;

use crate::context::Context;
use crate::error::SqlResult;
use crate::introspection::describe;
use crate::sql::output::{Output, ResultSet};
use crate::stmt::tokens::{is_keyword, starting_with};
use crate::value::Value;

/// A planned SHOW CREATE DATABASE.
#[derive(Debug, Clone)]
pub struct ShowCreateDatabase {
    /// The database.
    pub name: String,
    /// IF NOT EXISTS (printed inside the statement, as MySQL does).
    pub if_not_exists: bool,
}

/// The statement if `sql` is a SHOW CREATE DATABASE (a malformed one is left to sqlparser,
/// which answers 1064).
pub fn parse(sql: &str) -> Option<ShowCreateDatabase> {
    let words = starting_with(sql, "SHOW")?;
    let kw = is_keyword;
    let [show, create, db, rest @ ..] = words.as_slice() else {
        return None;
    };
    if !(kw(show, "SHOW") && kw(create, "CREATE") && (kw(db, "DATABASE") || kw(db, "SCHEMA"))) {
        return None;
    }
    let (if_not_exists, name) = match rest {
        [i, n, e, name] if kw(i, "IF") && kw(n, "NOT") && kw(e, "EXISTS") => (true, name),
        [name] => (false, name),
        _ => return None,
    };
    match name {
        Token::Word(w) => Some(ShowCreateDatabase {
            name: w.value.clone(),
            if_not_exists,
        }),
        _ => None,
    }
}

/// Executes SHOW CREATE DATABASE (1049 for an unknown database).
pub fn execute(st: &Context, s: &ShowCreateDatabase) -> SqlResult<Output> {
    if !st.core.database_exists(&s.name) {
        return Err(crate::error::unknown_db(&s.name));
    }
    let if_not_exists = if s.if_not_exists {
        "/*!32312 IF NOT EXISTS*/ "
    } else {
        ""
    };
    let collation = describe::database_collation(&st.core.catalog.engine, &s.name);
    let named = if describe::collation_named(&collation) {
        format!(" COLLATE {collation}")
    } else {
        String::new()
    };
    let text = format!(
        "CREATE DATABASE {if_not_exists}`{}` /*!40100 DEFAULT CHARACTER SET {}{named} */ \
         /*!80016 DEFAULT ENCRYPTION='N' */",
        s.name.replace('`', "``"),
        crate::sql::collations::charset_of(&collation)
    );
    Ok(Output::Rows(ResultSet::text(
        &["Database", "Create Database"],
        vec![vec![Value::str(&s.name), Value::str(&text)]],
    )))
}
