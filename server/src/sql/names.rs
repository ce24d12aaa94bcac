//! Names as the statement wrote them, without their quotes: a backquoted `` `id` `` and a
//! bare `id` are the same name (column names then compare case-insensitively, as in MySQL).

use sqlparser::ast::{ObjectName, ObjectNamePart};

/// One part of a dotted name, unquoted.
pub fn part(p: &ObjectNamePart) -> String {
    match p {
        ObjectNamePart::Identifier(i) => i.value.clone(),
        other => other.to_string(),
    }
}

/// The last part of a dotted name (the column of `t.c`, the table of `db.t`), unquoted.
pub fn last(n: &ObjectName) -> String {
    n.0.last().map(part).unwrap_or_default()
}

/// Every part of a dotted name, unquoted, joined with dots.
pub fn dotted(n: &ObjectName) -> String {
    n.0.iter().map(part).collect::<Vec<_>>().join(".")
}

#[cfg(test)]
mod tests {
    use super::*;
    use sqlparser::ast::Ident;

    #[test]
    fn quotes_are_not_part_of_the_name() {
        let n = ObjectName::from(vec![
            Ident::with_quote('`', "my db"),
            Ident::with_quote('`', "Id"),
        ]);
        assert_eq!(last(&n), "Id");
        assert_eq!(dotted(&n), "my db.Id");
        assert_eq!(last(&ObjectName::from(vec![Ident::new("x")])), "x");
    }
}
