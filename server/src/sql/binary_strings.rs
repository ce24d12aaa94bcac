//! Which expressions are binary strings, decided on the statement's syntax when it is bound:
//! MySQL's string functions count and fold characters of a text argument's character set but
//! work on the bytes of a binary string (a BINARY, VARBINARY or BLOB column, `X'..'`, `b'..'`,
//! `_binary '..'`, `CAST(.. AS BINARY)`, and string functions of those), so `SUBSTRING` of a
//! BLOB cuts bytes and `UPPER` leaves it as it is.

use sqlparser::ast::{self, DataType, Expr, FunctionArg, FunctionArgExpr, FunctionArguments};

use crate::engine::ColumnType;

/// Whether a column of this type holds binary strings.
pub fn binary_type(t: &ColumnType) -> bool {
    matches!(
        t,
        ColumnType::Binary(_) | ColumnType::VarBinary(_) | ColumnType::Blob(_)
    )
}

/// The unnamed argument expressions of a function call.
fn call_args(f: &ast::Function) -> impl Iterator<Item = &Expr> {
    let list = match &f.args {
        FunctionArguments::List(l) => l.args.as_slice(),
        _ => &[],
    };
    list.iter().filter_map(|a| match a {
        FunctionArg::Unnamed(FunctionArgExpr::Expr(e)) => Some(e),
        _ => None,
    })
}

/// Whether `e` is a binary string. `column` gives the type of a (qualified) column name, when
/// it is a table column.
pub fn is_binary(e: &Expr, column: &dyn Fn(Option<&str>, &str) -> Option<ColumnType>) -> bool {
    match e {
        Expr::Nested(inner) => is_binary(inner, column),
        Expr::Identifier(i) => column(None, &i.value).is_some_and(|t| binary_type(&t)),
        Expr::CompoundIdentifier(parts) => match parts.as_slice() {
            [.., q, c] => column(Some(&q.value), &c.value).is_some_and(|t| binary_type(&t)),
            _ => false,
        },
        Expr::Value(v) => matches!(
            v.value,
            ast::Value::HexStringLiteral(_) | ast::Value::SingleQuotedByteStringLiteral(_)
        ),
        Expr::Prefixed { prefix, .. } => prefix.value.eq_ignore_ascii_case("_binary"),
        Expr::Cast { data_type, .. } => matches!(
            data_type,
            DataType::Binary(_)
                | DataType::Varbinary(_)
                | DataType::Blob(_)
                | DataType::TinyBlob
                | DataType::MediumBlob
                | DataType::LongBlob
        ),
        Expr::Substring { expr, .. } => is_binary(expr, column),
        Expr::Function(f) => {
            let name = f.name.to_string().to_ascii_lowercase();
            let mut args = call_args(f);
            match name.as_str() {
                "substring" | "substr" | "mid" | "left" | "right" | "upper" | "ucase" | "lower"
                | "lcase" | "repeat" | "substring_index" => {
                    args.next().is_some_and(|a| is_binary(a, column))
                }
                // A concatenation is binary when any argument is.
                "concat" | "concat_ws" => args.any(|a| is_binary(a, column)),
                "unhex" => true,
                _ => false,
            }
        }
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use sqlparser::dialect::MySqlDialect;
    use sqlparser::parser::Parser;

    use super::*;

    fn binary(sql: &str) -> bool {
        let e = Parser::new(&MySqlDialect {})
            .try_with_sql(sql)
            .unwrap()
            .parse_expr()
            .unwrap();
        is_binary(&e, &|_, name| match name {
            "b" => Some(ColumnType::Blob(65_535)),
            "vb" => Some(ColumnType::VarBinary(10)),
            "t" => Some(ColumnType::Text(65_535)),
            _ => None,
        })
    }

    #[test]
    fn binary_columns_literals_and_casts_are_binary_and_text_is_not() {
        for e in [
            "b",
            "x.vb",
            "X'E697'",
            "_binary 'a'",
            "CAST(t AS BINARY)",
            "SUBSTRING(b, 1, 2)",
            "UPPER(LEFT(b, 3))",
            "CONCAT(t, b)",
            "UNHEX('41')",
            "(b)",
        ] {
            assert!(binary(e), "{e}");
        }
        for e in [
            "t",
            "'a'",
            "CONCAT(t, 'a')",
            "CAST(b AS CHAR)",
            "HEX(b)",
            "1",
            "c",
        ] {
            assert!(!binary(e), "{e}");
        }
    }
}
