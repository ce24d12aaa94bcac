//! Character sets and collations as MySQL names them: the collations tpbed knows, the
//! character set each belongs to and each character set's default collation. Tables,
//! columns and databases record the ones they are given and show them; the engine stores
//! and compares every text column as utf8mb4 whatever they say (README's deviation table).

use crate::error::{ErrorCode, SqlError, SqlResult};

/// The server's default collation (`collation_server`, MySQL 8.0's default).
pub const SERVER_COLLATION: &str = "utf8mb4_0900_ai_ci";

/// Character sets and their default collations.
const CHARSETS: &[(&str, &str)] = &[
    ("utf8mb4", "utf8mb4_0900_ai_ci"),
    ("utf8mb3", "utf8mb3_general_ci"),
    ("latin1", "latin1_swedish_ci"),
    ("ascii", "ascii_general_ci"),
    ("binary", "binary"),
];

/// Every collation known, each starting with its character set's name.
const COLLATIONS: &[&str] = &[
    "utf8mb4_0900_ai_ci",
    "utf8mb4_0900_as_ci",
    "utf8mb4_0900_as_cs",
    "utf8mb4_0900_bin",
    "utf8mb4_bin",
    "utf8mb4_general_ci",
    "utf8mb4_unicode_ci",
    "utf8mb4_unicode_520_ci",
    "utf8mb3_general_ci",
    "utf8mb3_bin",
    "utf8mb3_unicode_ci",
    "latin1_swedish_ci",
    "latin1_general_ci",
    "latin1_general_cs",
    "latin1_bin",
    "latin1_german1_ci",
    "latin1_danish_ci",
    "latin1_spanish_ci",
    "ascii_general_ci",
    "ascii_bin",
    "binary",
];

/// A name as MySQL 8.0 reads it: case-insensitive, `utf8` meaning `utf8mb3`.
fn canonical(name: &str) -> String {
    let n = name.trim_matches(['\'', '"']).to_ascii_lowercase();
    match n.strip_prefix("utf8") {
        Some(rest) if rest.is_empty() || rest.starts_with('_') => format!("utf8mb3{rest}"),
        _ => n,
    }
}

/// The character set `charset` under its canonical name, and its default collation (1115
/// for an unknown one).
pub fn charset(charset: &str) -> SqlResult<(&'static str, &'static str)> {
    let cs = canonical(charset);
    CHARSETS
        .iter()
        .find(|(n, _)| *n == cs)
        .copied()
        .ok_or_else(|| {
            SqlError::new(
                ErrorCode::UnknownCharacterSet,
                format!("Unknown character set: '{charset}'"),
            )
        })
}

/// The collation `name` under its canonical name (1273 for an unknown one).
pub fn collation(name: &str) -> SqlResult<&'static str> {
    let c = canonical(name);
    COLLATIONS
        .iter()
        .find(|n| **n == c)
        .copied()
        .ok_or_else(|| {
            SqlError::new(
                ErrorCode::UnknownCollation,
                format!("Unknown collation: '{name}'"),
            )
        })
}

/// The character set a collation belongs to.
pub fn charset_of(collation: &str) -> &str {
    collation.split('_').next().unwrap_or(collation)
}

/// Whether `collation` is its character set's default.
pub fn is_default(collation: &str) -> bool {
    CHARSETS.iter().any(|(_, d)| *d == collation)
}

/// The collation a `CHARACTER SET cs [COLLATE c]` / `COLLATE c` clause names (None when
/// neither is given); 1253 when the collation is not of the character set.
pub fn resolve(
    charset_name: Option<&str>,
    collation_name: Option<&str>,
) -> SqlResult<Option<String>> {
    let coll = match (charset_name, collation_name) {
        (None, None) => return Ok(None),
        (Some(cs), None) => charset(cs)?.1,
        (None, Some(c)) => collation(c)?,
        (Some(cs), Some(c)) => {
            let (cs_name, _) = charset(cs)?;
            let coll = collation(c)?;
            if charset_of(coll) != cs_name {
                return Err(SqlError::new(
                    ErrorCode::CollationCharsetMismatch,
                    format!("COLLATION '{c}' is not valid for CHARACTER SET '{cs}'"),
                ));
            }
            coll
        }
    };
    Ok(Some(coll.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clauses_resolve_as_mysql_reads_them() {
        assert_eq!(resolve(None, None).unwrap(), None);
        assert_eq!(
            resolve(Some("LATIN1"), None).unwrap().as_deref(),
            Some("latin1_swedish_ci")
        );
        assert_eq!(
            resolve(Some("utf8"), Some("utf8_bin")).unwrap().as_deref(),
            Some("utf8mb3_bin")
        );
        assert_eq!(
            resolve(None, Some("utf8mb4_general_ci"))
                .unwrap()
                .as_deref(),
            Some("utf8mb4_general_ci")
        );
        let e = resolve(Some("latin1"), Some("utf8mb4_bin")).unwrap_err();
        assert_eq!(
            (e.code.code(), e.message.as_str()),
            (
                1253,
                "COLLATION 'utf8mb4_bin' is not valid for CHARACTER SET 'latin1'"
            )
        );
        assert_eq!(
            resolve(None, Some("klingon_ci")).unwrap_err().code.code(),
            1273
        );
        assert_eq!(
            resolve(Some("klingon"), None).unwrap_err().code.code(),
            1115
        );
        assert!(is_default("latin1_swedish_ci") && !is_default("utf8mb4_general_ci"));
        assert_eq!(charset_of("binary"), "binary");
    }
}
