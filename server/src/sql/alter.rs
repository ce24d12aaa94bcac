//! ALTER TABLE the MySQL way: sqlparser parses each operation, and this module adds the
//! clauses it does not know — table options (`ENGINE=`, `[DEFAULT] CHARSET=`, `COLLATE=`,
//! `COMMENT=`, `ROW_FORMAT=`, `CONVERT TO CHARACTER SET`), `DISABLE KEYS`/`ENABLE KEYS`,
//! `DROP KEY` and `DROP CHECK` — so the statement stays one sqlparser `AlterTable`. A table
//! option travels as a `SET TBLPROPERTIES` key/value ([`TABLE_OPTION_KEYS`] is the key of
//! `DISABLE`/`ENABLE KEYS`).

use sqlparser::ast::helpers::attached_token::AttachedToken;
use sqlparser::ast::{
    AlterTable, AlterTableOperation, Expr, Ident, ObjectName, SqlOption, Statement,
};
use sqlparser::keywords::Keyword;
use sqlparser::parser::{Parser, ParserError};
use sqlparser::tokenizer::Token;

/// The option key `DISABLE KEYS` / `ENABLE KEYS` are carried under (value `DISABLE` or
/// `ENABLE`).
pub const TABLE_OPTION_KEYS: &str = "KEYS";

/// Parses `;`-separated statements as sqlparser does, with ALTER TABLE parsed here.
pub fn parse_statements(p: &mut Parser<'_>) -> Result<Vec<Statement>, ParserError> {
    let mut stmts = Vec::new();
    loop {
        let mut separated = stmts.is_empty();
        while p.consume_token(&Token::SemiColon) {
            separated = true;
        }
        if p.peek_token().token == Token::EOF {
            return Ok(stmts);
        }
        if !separated {
            return p.expected("end of statement", p.peek_token());
        }
        let stmt = if p.parse_keywords(&[Keyword::ALTER, Keyword::TABLE]) {
            alter_table(p)?
        } else {
            p.parse_statement()?
        };
        stmts.push(stmt);
    }
}

/// `ALTER TABLE` after its two keywords.
fn alter_table(p: &mut Parser<'_>) -> Result<Statement, ParserError> {
    let if_exists = p.parse_keywords(&[Keyword::IF, Keyword::EXISTS]);
    let name = p.parse_object_name(false)?;
    let mut operations = Vec::new();
    loop {
        operations.push(operation(p)?);
        // MySQL separates operations by commas; table options may also follow each other.
        if !p.consume_token(&Token::Comma) && !starts_table_option(p) {
            break;
        }
    }
    Ok(Statement::AlterTable(AlterTable {
        name,
        if_exists,
        only: false,
        operations,
        location: None,
        on_cluster: None,
        table_type: None,
        end_token: AttachedToken(p.get_current_token().clone()),
    }))
}

/// One operation: a MySQL form sqlparser lacks, or sqlparser's.
fn operation(p: &mut Parser<'_>) -> Result<AlterTableOperation, ParserError> {
    if starts_table_option(p) {
        return table_option(p);
    }
    for (kw, value) in [(Keyword::DISABLE, "DISABLE"), (Keyword::ENABLE, "ENABLE")] {
        if p.parse_keywords(&[kw, Keyword::KEYS]) {
            return Ok(option(
                TABLE_OPTION_KEYS,
                Expr::Identifier(Ident::new(value)),
            ));
        }
    }
    if p.parse_keywords(&[Keyword::DROP, Keyword::KEY]) {
        return Ok(AlterTableOperation::DropIndex {
            name: p.parse_identifier()?,
        });
    }
    if p.parse_keywords(&[Keyword::DROP, Keyword::CHECK]) {
        return Ok(AlterTableOperation::DropConstraint {
            if_exists: false,
            name: p.parse_identifier()?,
            drop_behavior: None,
        });
    }
    p.parse_alter_table_operation()
}

fn option(key: &str, value: Expr) -> AlterTableOperation {
    AlterTableOperation::SetTblProperties {
        table_properties: vec![SqlOption::KeyValue {
            key: ObjectName::from(vec![Ident::new(key)]),
            value,
        }],
    }
}

fn keyword(t: &Token) -> Keyword {
    match t {
        Token::Word(w) if w.quote_style.is_none() => w.keyword,
        _ => Keyword::NoKeyword,
    }
}

/// Whether a table option starts at the cursor.
fn starts_table_option(p: &Parser<'_>) -> bool {
    let [a, b] = p.peek_tokens::<2>();
    let charset = |k| matches!(k, Keyword::CHARACTER | Keyword::CHARSET | Keyword::COLLATE);
    match keyword(&a) {
        Keyword::ENGINE | Keyword::ROW_FORMAT | Keyword::COMMENT => true,
        Keyword::CONVERT => keyword(&b) == Keyword::TO,
        Keyword::DEFAULT => charset(keyword(&b)),
        k => charset(k),
    }
}

/// The table option at the cursor (see [`starts_table_option`]).
fn table_option(p: &mut Parser<'_>) -> Result<AlterTableOperation, ParserError> {
    let _ = p.parse_keyword(Keyword::DEFAULT);
    let key = if p.parse_keyword(Keyword::ENGINE) {
        "ENGINE"
    } else if p.parse_keyword(Keyword::ROW_FORMAT) {
        "ROW_FORMAT"
    } else if p.parse_keyword(Keyword::COMMENT) {
        "COMMENT"
    } else if p.parse_keyword(Keyword::COLLATE) {
        "COLLATE"
    } else if p.parse_keywords(&[Keyword::CONVERT, Keyword::TO]) {
        if !p.parse_keyword(Keyword::CHARSET) {
            p.expect_keywords(&[Keyword::CHARACTER, Keyword::SET])?;
        }
        "CONVERT TO CHARACTER SET"
    } else {
        if !p.parse_keyword(Keyword::CHARSET) {
            p.expect_keywords(&[Keyword::CHARACTER, Keyword::SET])?;
        }
        "CHARACTER SET"
    };
    let _ = p.consume_token(&Token::Eq);
    let next = p.next_token();
    let value = match next.token {
        Token::Word(w) => Expr::Identifier(Ident::new(w.value)),
        Token::SingleQuotedString(s) | Token::DoubleQuotedString(s) => {
            Expr::value(sqlparser::ast::Value::SingleQuotedString(s))
        }
        _ => return p.expected("a table option value", next),
    };
    if key == "CONVERT TO CHARACTER SET" && p.parse_keyword(Keyword::COLLATE) {
        let _ = p.parse_identifier()?;
    }
    Ok(option(key, value))
}
