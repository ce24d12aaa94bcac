//! JSON values as MySQL keeps them: parsed (with `serde_json`), refused with MySQL's parser
//! messages when malformed, and printed in MySQL's normalized form: one space after `:` and
//! `,`, object keys ordered by length then bytewise, the last of duplicate keys kept.

use serde_json::Value as Json;

/// Why a text is not JSON: the parser message MySQL gives and the byte offset of the fault.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct JsonSyntaxError {
    /// MySQL's (RapidJSON's) message for the fault.
    pub reason: &'static str,
    /// Byte offset in the text.
    pub position: usize,
}

/// Parses a JSON text.
pub fn parse(text: &[u8]) -> Result<Json, JsonSyntaxError> {
    if text.iter().all(u8::is_ascii_whitespace) {
        return Err(JsonSyntaxError {
            reason: "The document is empty.",
            position: text.len(),
        });
    }
    serde_json::from_slice(text).map_err(|e| JsonSyntaxError {
        reason: mysql_reason(&e),
        // RapidJSON reports running out of text at its end.
        position: if e.is_eof() {
            text.len()
        } else {
            offset(text, e.line(), e.column())
        },
    })
}

/// The text in MySQL's printed form, or why it is not JSON.
pub fn normalize(text: &[u8]) -> Result<String, JsonSyntaxError> {
    parse(text).map(|v| print(&v))
}

/// `v` as MySQL prints a JSON value.
pub fn print(v: &Json) -> String {
    let mut out = String::new();
    write(v, &mut out);
    out
}

fn write(v: &Json, out: &mut String) {
    match v {
        Json::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                write(item, out);
            }
            out.push(']');
        }
        Json::Object(map) => {
            let mut entries: Vec<_> = map.iter().collect();
            entries.sort_by(|a, b| a.0.len().cmp(&b.0.len()).then_with(|| a.0.cmp(b.0)));
            out.push('{');
            for (i, (k, item)) in entries.into_iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                out.push_str(&Json::String(k.clone()).to_string());
                out.push_str(": ");
                write(item, out);
            }
            out.push('}');
        }
        scalar => out.push_str(&scalar.to_string()),
    }
}

/// RapidJSON's message (which MySQL shows) for a `serde_json` error.
fn mysql_reason(e: &serde_json::Error) -> &'static str {
    let text = e.to_string();
    let has = |s: &str| text.starts_with(s);
    if has("trailing characters") {
        "The document root must not be followed by other values."
    } else if has("EOF while parsing an object") || has("expected `,` or `}`") {
        "Missing a comma or '}' after an object member."
    } else if has("EOF while parsing a list") || has("expected `,` or `]`") {
        "Missing a comma or ']' after an array element."
    } else if has("key must be a string") {
        "Missing a name for object member."
    } else if has("expected `:`") {
        "Missing a colon after a name of object member."
    } else if has("EOF while parsing a string") {
        "Missing a closing quotation mark in string."
    } else if has("invalid escape") || has("invalid unicode code point") {
        "Invalid escape character in string."
    } else if has("invalid UTF-8") || has("control character") {
        "Invalid encoding in string."
    } else {
        "Invalid value."
    }
}

/// The byte offset of 1-based `line` and `column` (as `serde_json` counts them) in `text`.
fn offset(text: &[u8], line: usize, column: usize) -> usize {
    let line_start: usize = text
        .split_inclusive(|&b| b == b'\n')
        .take(line.saturating_sub(1))
        .map(<[u8]>::len)
        .sum();
    (line_start + column.saturating_sub(1)).min(text.len())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn printed_as_mysql_prints() {
        assert_eq!(
            normalize(br#"{"bb":[1,2],"a" : 1,"b":{"y":null,"x":true}}"#).unwrap(),
            r#"{"a": 1, "b": {"x": true, "y": null}, "bb": [1, 2]}"#
        );
        assert_eq!(normalize(br#"{"a":1,"a":2}"#).unwrap(), r#"{"a": 2}"#);
        assert_eq!(normalize(b" \"x\\ny\" ").unwrap(), r#""x\ny""#);
        assert_eq!(normalize(b"1.50").unwrap(), "1.5");
    }

    #[test]
    fn faults_in_mysqls_words() {
        let e = normalize(b"{\"a\": 1").unwrap_err();
        assert_eq!(e.reason, "Missing a comma or '}' after an object member.");
        assert_eq!(
            normalize(b"[1] x").unwrap_err().reason,
            "The document root must not be followed by other values."
        );
        assert_eq!(
            normalize(b"").unwrap_err(),
            JsonSyntaxError {
                reason: "The document is empty.",
                position: 0
            }
        );
        let e = normalize(b"{\"a\" 1}").unwrap_err();
        assert_eq!(e.reason, "Missing a colon after a name of object member.");
        assert_eq!(normalize(b"nope").unwrap_err().reason, "Invalid value.");
    }
}
