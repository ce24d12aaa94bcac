//! `SHOW TABLE STATUS [{FROM | IN} db] [LIKE 'pattern']`, which sqlparser does not parse:
//! recognised from its tokens and answered with `information_schema.TABLES`'s rows of the
//! database under MySQL's column names (a `WHERE` filter is 1235).

use sqlparser::tokenizer::Token;

use crate::context::Context;
use crate::error::{SqlError, SqlResult};
use crate::exec::errors::no_database;
use crate::stmt::show::{ShowFilter, ShowPlan};
use crate::stmt::tokens::{is_keyword, starting_with};

/// `SHOW TABLE STATUS`'s columns.
pub const COLUMNS: &[&str] = &[
    "Name",
    "Engine",
    "Version",
    "Row_format",
    "Rows",
    "Avg_row_length",
    "Data_length",
    "Max_data_length",
    "Index_length",
    "Data_free",
    "Auto_increment",
    "Create_time",
    "Update_time",
    "Check_time",
    "Collation",
    "Checksum",
    "Create_options",
    "Comment",
];

/// The positions in an `information_schema.TABLES` row of the columns above (all but
/// the catalog, schema and type).
pub const FROM_TABLES: [usize; 18] = [
    2, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20,
];

/// The plan if `sql` is a SHOW TABLE STATUS (None for another statement or a malformed one,
/// left to sqlparser's 1064); 1046 without a database, 1049 for an unknown one.
pub fn parse(st: &Context, sql: &str) -> SqlResult<Option<ShowPlan>> {
    let Some(tokens) = starting_with(sql, "SHOW") else {
        return Ok(None);
    };
    let kw = is_keyword;
    let [_, table, status, rest @ ..] = tokens.as_slice() else {
        return Ok(None);
    };
    if !(kw(table, "TABLE") && kw(status, "STATUS")) {
        return Ok(None);
    }
    let (db, rest) = match rest {
        [from, Token::Word(db), rest @ ..] if kw(from, "FROM") || kw(from, "IN") => {
            (Some(db.value.clone()), rest)
        }
        _ => (None, rest),
    };
    let filter = match rest {
        [] => ShowFilter::None,
        [like, Token::SingleQuotedString(p)] if kw(like, "LIKE") => ShowFilter::Like(p.clone()),
        [w, ..] if kw(w, "WHERE") => {
            return Err(SqlError::unsupported("SHOW TABLE STATUS ... WHERE"))
        }
        _ => return Ok(None),
    };
    let db = match db {
        Some(d) => d,
        None => st.db.clone().ok_or_else(no_database)?,
    };
    if !st.core.database_exists(&db) {
        return Err(crate::error::unknown_db(&db));
    }
    Ok(Some(ShowPlan::TableStatus { db, filter }))
}
