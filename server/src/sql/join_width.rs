//! MySQL's bound on the tables of one join, checked on a statement's tokens before it is
//! parsed: a query block may name at most [`MAX_TABLES`] tables (ER_TOO_MANY_TABLES, 1116).
//! sqlparser nests each ON-less `JOIN` inside the one before it, and binding and execution
//! recurse once per table, so an unbounded FROM list would overflow the thread's stack.
//!
//! Invariant: the count is never below the number of table references a query block has.
//! `FROM` (or a multi-table `UPDATE`) names the first table and every comma or `JOIN` at the
//! same bracket level one more, until a clause keyword ends the list. A bracket opened where a
//! table reference may stand is a nested join whose tables count towards the enclosing block,
//! unless a `SELECT` inside it makes it a derived table (a block of its own, which counts once).

use sqlparser::keywords::Keyword;
use sqlparser::tokenizer::{Token, TokenWithSpan};

use crate::error::{ErrorCode, SqlError, SqlResult};

/// MySQL's limit: 64 bits of a table map less the outer-reference, pseudo and random bits.
pub const MAX_TABLES: usize = 61;

/// One bracket level's table list.
#[derive(Debug, Default)]
struct Level {
    /// Tables counted so far in the list this level is in.
    tables: usize,
    /// Whether a comma or a `JOIN` at this level adds a table.
    in_list: bool,
    /// Whether a `SELECT` opened a query block at this level (a derived table or subquery).
    block: bool,
}

/// Whether a keyword ends a FROM list (a clause that cannot hold table references).
fn ends_list(k: Keyword) -> bool {
    use Keyword::*;
    matches!(
        k,
        WHERE
            | GROUP
            | HAVING
            | ORDER
            | LIMIT
            | WINDOW
            | FOR
            | LOCK
            | INTO
            | SET
            | UNION
            | EXCEPT
            | INTERSECT
            | MINUS
            | VALUES
            | RETURNING
    )
}

fn too_many() -> SqlError {
    SqlError::new(
        ErrorCode::TooManyTables,
        format!("Too many tables; MySQL can only use {MAX_TABLES} tables in a join"),
    )
}

/// Refuses a token stream any of whose query blocks joins more than [`MAX_TABLES`] tables,
/// with 1116.
pub fn check(tokens: &[TokenWithSpan]) -> SqlResult<()> {
    let mut levels = vec![Level::default()];
    // The previous significant token: a bracket after FROM, JOIN, a comma or another bracket
    // of a table list opens a nested join; after anything else (USING, INDEX, a function name)
    // it holds no table references.
    let mut prev: Option<&Token> = None;
    let mut statement_start = true;
    for t in tokens {
        let token = &t.token;
        if matches!(token, Token::Whitespace(_) | Token::EOF) {
            continue;
        }
        let first = std::mem::replace(&mut statement_start, false);
        let Some(level) = levels.last_mut() else {
            break;
        };
        match token {
            Token::Word(w) => match w.keyword {
                Keyword::SELECT => {
                    *level = Level {
                        block: true,
                        ..Level::default()
                    }
                }
                Keyword::FROM => {
                    level.in_list = true;
                    level.tables += 1;
                }
                // `UPDATE t1, t2 SET ...`; an UPDATE later in a statement is ON DUPLICATE KEY
                // UPDATE's assignment list.
                Keyword::UPDATE if first => {
                    level.in_list = true;
                    level.tables = 1;
                }
                Keyword::JOIN | Keyword::STRAIGHT_JOIN if level.in_list => level.tables += 1,
                k if ends_list(k) => level.in_list = false,
                _ => {}
            },
            Token::Comma if level.in_list => level.tables += 1,
            Token::SemiColon => {
                levels = vec![Level::default()];
                statement_start = true;
            }
            Token::LParen => {
                let nested = level.in_list && prev.is_some_and(opens_table_reference);
                levels.push(Level {
                    tables: usize::from(nested),
                    in_list: nested,
                    block: false,
                });
            }
            Token::RParen if levels.len() > 1 => {
                let inner = levels.pop().unwrap_or_default();
                if let Some(outer) = levels.last_mut().filter(|_| inner.in_list && !inner.block) {
                    // The bracket itself was counted as one table where it stands.
                    outer.tables += inner.tables.saturating_sub(1);
                }
            }
            _ => {}
        }
        if levels.last().is_some_and(|l| l.tables > MAX_TABLES) {
            return Err(too_many());
        }
        prev = Some(token);
    }
    Ok(())
}

/// Whether a bracket after this token stands where a table reference may.
fn opens_table_reference(t: &Token) -> bool {
    match t {
        Token::Comma | Token::LParen => true,
        Token::Word(w) => matches!(
            w.keyword,
            Keyword::FROM | Keyword::JOIN | Keyword::STRAIGHT_JOIN
        ),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use sqlparser::dialect::MySqlDialect;
    use sqlparser::tokenizer::Tokenizer;

    use super::*;

    fn width_ok(sql: &str) -> bool {
        let tokens = Tokenizer::new(&MySqlDialect {}, sql)
            .tokenize_with_location()
            .unwrap();
        check(&tokens).is_ok()
    }

    fn list(n: usize, sep: &str) -> String {
        (0..n)
            .map(|i| format!("t a{i}"))
            .collect::<Vec<_>>()
            .join(sep)
    }

    #[test]
    fn sixty_one_tables_join_and_sixty_two_are_refused() {
        for sep in [
            ", ",
            " JOIN ",
            " STRAIGHT_JOIN ",
            " LEFT JOIN ",
            " CROSS JOIN ",
        ] {
            assert!(
                width_ok(&format!("SELECT 1 FROM {}", list(61, sep))),
                "{sep}"
            );
            assert!(
                !width_ok(&format!("SELECT 1 FROM {}", list(62, sep))),
                "{sep}"
            );
        }
        let on = (1..62)
            .map(|i| format!(" JOIN t a{i} ON a{i}.id = a0.id"))
            .collect::<String>();
        assert!(!width_ok(&format!("SELECT 1 FROM t a0{on}")));
        assert!(!width_ok(&format!(
            "SELECT 1 FROM x{}",
            " JOIN x".repeat(940)
        )));
        assert!(!width_ok(&format!(
            "INSERT INTO u SELECT 1 FROM {}",
            list(62, ", ")
        )));
        assert!(!width_ok(&format!(
            "DELETE FROM {} WHERE 1",
            list(62, ", ")
        )));
        assert!(!width_ok(&format!(
            "UPDATE {} SET a0.v = 1",
            list(62, ", ")
        )));
    }

    #[test]
    fn nested_joins_count_towards_their_block_and_derived_tables_once() {
        let half = list(31, ", ");
        assert!(!width_ok(&format!("SELECT 1 FROM ({half}), ({half})")));
        assert!(width_ok(&format!("SELECT 1 FROM ({half}), t")));
        assert!(!width_ok(&format!(
            "SELECT 1 FROM t JOIN ({half} JOIN {half})"
        )));
        // Each derived table and subquery is a block of its own.
        let derived = format!("(SELECT 1 FROM {half}) d");
        assert!(width_ok(&format!(
            "SELECT 1 FROM {derived}, {derived}, {derived}"
        )));
        let sub = format!("(SELECT 1 FROM {})", list(50, ", "));
        assert!(width_ok(&format!(
            "SELECT {sub}, {sub} FROM {} WHERE 1 IN {sub}",
            list(50, ", ")
        )));
        // Each block of a union counts on its own, as does each statement of a text.
        let block = format!("SELECT 1 FROM {}", list(40, ", "));
        assert!(width_ok(&format!("{block} UNION {block} UNION {block}")));
        assert!(width_ok(&format!("{block}; {block}")));
    }

    #[test]
    fn commas_outside_table_lists_do_not_count() {
        let many = vec!["1"; 200].join(", ");
        assert!(width_ok(&format!(
            "SELECT {many} FROM t WHERE a IN ({many})"
        )));
        assert!(width_ok(&format!(
            "SELECT 1 FROM t WHERE a IN ({many}) ORDER BY {many}"
        )));
        assert!(width_ok(&format!(
            "SELECT 1 FROM t USE INDEX ({many}) JOIN u USING ({many})"
        )));
        let cols = (0..100).map(|i| format!("c{i}=1")).collect::<Vec<_>>();
        let cols = cols.join(", ");
        assert!(width_ok(&format!(
            "INSERT INTO t VALUES (1) ON DUPLICATE KEY UPDATE {cols}"
        )));
        assert!(width_ok(&format!("UPDATE t SET {cols}")));
        assert!(width_ok(&format!(
            "SELECT EXTRACT(YEAR FROM d), {many} FROM t"
        )));
    }
}
