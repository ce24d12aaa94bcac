//! JSON functions over the engine's JSON parse and print: JSON_EXTRACT (and `->`),
//! JSON_UNQUOTE (and `->>`), JSON_VALID, JSON_OBJECT and JSON_ARRAY, with MySQL's path
//! language (`$`, `.key`, `."key"`, `.*`, `[n]`, `[*]`) and its errors 3141/3143.

use serde_json::Value as Json;

use crate::engine::json;
use crate::error::{ErrorCode, SqlError, SqlResult};
use crate::value::Value;

/// One step of a JSON path.
#[derive(Debug, Clone, PartialEq)]
enum Step {
    /// `.key` or `."key"`.
    Member(String),
    /// `.*`.
    AnyMember,
    /// `[n]`.
    Index(usize),
    /// `[*]`.
    AnyIndex,
}

/// A parsed path: its steps, and whether a wildcard makes the result an array of matches.
struct Path {
    steps: Vec<Step>,
    wildcard: bool,
}

fn invalid_path(position: usize) -> SqlError {
    SqlError::new(
        ErrorCode::InvalidJsonPath,
        format!("Invalid JSON path expression. The error is around character position {position}."),
    )
}

/// Parses a path as MySQL does; 3143 naming where it went wrong.
fn parse_path(text: &[u8]) -> SqlResult<Path> {
    let s = std::str::from_utf8(text)
        .map_err(|_| invalid_path(0))?
        .trim();
    let b = s.as_bytes();
    if b.first() != Some(&b'$') {
        return Err(invalid_path(1));
    }
    let mut steps = Vec::new();
    let mut i = 1;
    while i < b.len() {
        match b[i] {
            b' ' => i += 1,
            b'.' => {
                i += 1;
                if b.get(i) == Some(&b'*') {
                    steps.push(Step::AnyMember);
                    i += 1;
                } else if b.get(i) == Some(&b'"') {
                    let end = closing_quote(b, i + 1).ok_or_else(|| invalid_path(b.len()))?;
                    let key: String =
                        serde_json::from_str(&s[i..=end]).map_err(|_| invalid_path(end + 1))?;
                    steps.push(Step::Member(key));
                    i = end + 1;
                } else {
                    let start = i;
                    while i < b.len()
                        && (b[i].is_ascii_alphanumeric() || b[i] == b'_' || b[i] == b'$')
                    {
                        i += 1;
                    }
                    if start == i {
                        return Err(invalid_path(i + 1));
                    }
                    steps.push(Step::Member(s[start..i].to_string()));
                }
            }
            b'[' => {
                let close = s[i..]
                    .find(']')
                    .map(|o| i + o)
                    .ok_or_else(|| invalid_path(b.len()))?;
                let inner = s[i + 1..close].trim();
                steps.push(if inner == "*" {
                    Step::AnyIndex
                } else {
                    Step::Index(inner.parse().map_err(|_| invalid_path(i + 2))?)
                });
                i = close + 1;
            }
            _ => return Err(invalid_path(i + 1)),
        }
    }
    let wildcard = steps
        .iter()
        .any(|s| matches!(s, Step::AnyMember | Step::AnyIndex));
    Ok(Path { steps, wildcard })
}

fn closing_quote(b: &[u8], mut i: usize) -> Option<usize> {
    while i < b.len() {
        match b[i] {
            b'\\' => i += 2,
            b'"' => return Some(i),
            _ => i += 1,
        }
    }
    None
}

/// Collects the values `steps` reach from `v`.
fn walk<'a>(v: &'a Json, steps: &[Step], out: &mut Vec<&'a Json>) {
    let Some((step, rest)) = steps.split_first() else {
        out.push(v);
        return;
    };
    match (step, v) {
        (Step::Member(k), Json::Object(m)) => {
            if let Some(x) = m.get(k) {
                walk(x, rest, out);
            }
        }
        (Step::AnyMember, Json::Object(m)) => m.values().for_each(|x| walk(x, rest, out)),
        (Step::Index(n), Json::Array(a)) => {
            if let Some(x) = a.get(*n) {
                walk(x, rest, out);
            }
        }
        // A scalar is an array of one for `[0]`, as MySQL reads it.
        (Step::Index(0), scalar) if !scalar.is_array() => walk(scalar, rest, out),
        (Step::AnyIndex, Json::Array(a)) => a.iter().for_each(|x| walk(x, rest, out)),
        _ => {}
    }
}

fn invalid_argument(arg: usize, func: &str, e: json::JsonSyntaxError) -> SqlError {
    SqlError::new(
        ErrorCode::InvalidJsonTextInParam,
        format!(
            "Invalid JSON text in argument {arg} to function {func}: \"{}\" at position {}.",
            e.reason, e.position
        ),
    )
}

/// `JSON_EXTRACT(doc, path, ...)`: the value at the path; an array of every match when
/// there are several paths or a wildcard; NULL when nothing matches.
pub fn extract(doc: &[u8], paths: &[Vec<u8>]) -> SqlResult<Value> {
    let doc = json::parse(doc).map_err(|e| invalid_argument(1, "json_extract", e))?;
    let paths = paths
        .iter()
        .map(|p| parse_path(p))
        .collect::<SqlResult<Vec<_>>>()?;
    let mut found = Vec::new();
    for p in &paths {
        walk(&doc, &p.steps, &mut found);
    }
    let wrap = paths.len() > 1 || paths.iter().any(|p| p.wildcard);
    Ok(match (found.as_slice(), wrap) {
        ([], _) => Value::Null,
        ([one], false) => Value::from_string(json::print(one)),
        (all, _) => Value::from_string(json::print(&Json::Array(
            all.iter().map(|v| (*v).clone()).collect(),
        ))),
    })
}

/// `JSON_UNQUOTE(s)`: a JSON string's contents; any other text as it is.
pub fn unquote(text: &[u8]) -> SqlResult<Value> {
    if text.len() >= 2 && text[0] == b'"' && text[text.len() - 1] == b'"' {
        return match json::parse(text) {
            Ok(Json::String(s)) => Ok(Value::from_string(s)),
            Ok(_) => Ok(Value::Bytes(text.to_vec())),
            Err(e) => Err(invalid_argument(1, "json_unquote", e)),
        };
    }
    Ok(Value::Bytes(text.to_vec()))
}

/// `JSON_VALID(s)`: 1 for a JSON text, else 0.
pub fn valid(text: &[u8]) -> Value {
    Value::Int(i64::from(json::parse(text).is_ok()))
}

/// A SQL value as a JSON value: numbers as numbers, NULL as null, text as a string, and
/// the result of another JSON function (`nested`) as the JSON it is.
pub fn to_json(v: &Value, nested: bool) -> Json {
    match v {
        Value::Null => Json::Null,
        Value::Int(i) => Json::from(*i),
        Value::UInt(u) => Json::from(*u),
        Value::Double(d) => Json::from(*d),
        Value::Decimal(d) => d.to_string().parse().unwrap_or(Json::Null),
        Value::Bytes(b) if nested => json::parse(b).unwrap_or_else(|_| text(v)),
        _ => text(v),
    }
}

fn text(v: &Value) -> Json {
    Json::String(crate::sql::format::text(v))
}

/// `JSON_ARRAY(v, ...)`.
pub fn array(items: Vec<Json>) -> Value {
    Value::from_string(json::print(&Json::Array(items)))
}

/// A lower bound of the bytes `j` prints as, cheap to compute: a built document is refused
/// past max_allowed_packet before it is printed when its members alone pass it.
pub fn printed_len_lower_bound(j: &Json) -> usize {
    match j {
        Json::String(s) => s.len().saturating_add(2),
        Json::Array(a) => a
            .iter()
            .fold(2usize, |n, m| n.saturating_add(printed_len_lower_bound(m))),
        Json::Object(o) => o.iter().fold(2usize, |n, (k, v)| {
            n.saturating_add(k.len().saturating_add(3))
                .saturating_add(printed_len_lower_bound(v))
        }),
        _ => 1,
    }
}

/// `JSON_OBJECT(k, v, ...)`: a NULL key is 3158, as MySQL.
pub fn object(pairs: Vec<(Value, Json)>) -> SqlResult<Value> {
    let mut map = serde_json::Map::new();
    for (k, v) in pairs {
        if k.is_null() {
            return Err(SqlError::new(
                ErrorCode::JsonDocumentNullKey,
                "JSON documents may not contain NULL member names.",
            ));
        }
        map.insert(crate::sql::format::text(&k), v);
    }
    Ok(Value::from_string(json::print(&Json::Object(map))))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn x(doc: &str, paths: &[&str]) -> SqlResult<Value> {
        let paths: Vec<Vec<u8>> = paths.iter().map(|p| p.as_bytes().to_vec()).collect();
        extract(doc.as_bytes(), &paths)
    }

    #[test]
    fn paths_as_mysql_reads_them() {
        let doc = r#"{"a": {"b c": [10, 20]}, "n": 1}"#;
        assert_eq!(x(doc, &["$.n"]).unwrap(), Value::str("1"));
        assert_eq!(x(doc, &[r#"$.a."b c"[1]"#]).unwrap(), Value::str("20"));
        assert_eq!(x(doc, &["$.a.*[0]"]).unwrap(), Value::str("[10]"));
        assert_eq!(x(doc, &["$.n", "$.zz"]).unwrap(), Value::str("[1]"));
        assert_eq!(x(doc, &["$.zz"]).unwrap(), Value::Null);
        assert_eq!(
            x(doc, &["$.a"]).unwrap(),
            Value::str(r#"{"b c": [10, 20]}"#)
        );
        let e = x(doc, &["a.b"]).unwrap_err();
        assert_eq!(e.code, ErrorCode::InvalidJsonPath);
        let e = x("{", &["$"]).unwrap_err();
        assert_eq!(e.code, ErrorCode::InvalidJsonTextInParam);
    }

    #[test]
    fn unquote_and_build() {
        assert_eq!(unquote(br#""a\"b""#).unwrap(), Value::str("a\"b"));
        assert_eq!(unquote(b"[1]").unwrap(), Value::str("[1]"));
        assert_eq!(valid(b"{}"), Value::Int(1));
        assert_eq!(valid(b"{"), Value::Int(0));
        assert_eq!(
            array(vec![Json::from(1), to_json(&Value::str("x"), false)]),
            Value::str(r#"[1, "x"]"#)
        );
        assert_eq!(
            object(vec![
                (Value::str("b"), Json::Null),
                (Value::str("a"), Json::from(2))
            ])
            .unwrap(),
            Value::str(r#"{"a": 2, "b": null}"#)
        );
    }
}
