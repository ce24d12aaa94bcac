//! A minimal JSON writer (objects, arrays, strings, numbers) for the reports.

use std::fmt::Write;

/// A JSON value.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum J {
    /// null
    Null,
    /// true/false
    Bool(bool),
    /// A number (non-finite values become null).
    Num(f64),
    /// A string.
    Str(String),
    /// An array.
    Arr(Vec<J>),
    /// An object, keys in insertion order.
    Obj(Vec<(String, J)>),
}

impl J {
    /// An object from (key, value) pairs.
    pub(crate) fn obj<K: Into<String>>(pairs: impl IntoIterator<Item = (K, J)>) -> J {
        J::Obj(pairs.into_iter().map(|(k, v)| (k.into(), v)).collect())
    }

    /// A string value.
    pub(crate) fn s(v: impl Into<String>) -> J {
        J::Str(v.into())
    }

    /// A number value.
    pub(crate) fn n(v: impl Into<f64>) -> J {
        J::Num(v.into())
    }

    /// Serialises compactly.
    pub(crate) fn render(&self) -> String {
        let mut out = String::new();
        self.write(&mut out);
        out
    }

    fn write(&self, out: &mut String) {
        match self {
            J::Null => out.push_str("null"),
            J::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
            J::Num(v) if !v.is_finite() => out.push_str("null"),
            J::Num(v) if v.fract() == 0.0 && v.abs() < 9e15 => {
                let _ = write!(out, "{}", *v as i64);
            }
            J::Num(v) => {
                let _ = write!(out, "{v}");
            }
            J::Str(s) => quote(s, out),
            J::Arr(a) => {
                out.push('[');
                for (i, v) in a.iter().enumerate() {
                    if i > 0 {
                        out.push(',');
                    }
                    v.write(out);
                }
                out.push(']');
            }
            J::Obj(o) => {
                out.push('{');
                for (i, (k, v)) in o.iter().enumerate() {
                    if i > 0 {
                        out.push(',');
                    }
                    quote(k, out);
                    out.push(':');
                    v.write(out);
                }
                out.push('}');
            }
        }
    }
}

fn quote(s: &str, out: &mut String) {
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if (c as u32) < 0x20 => {
                let _ = write!(out, "\\u{:04x}", c as u32);
            }
            c => out.push(c),
        }
    }
    out.push('"');
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn renders_nested_values() {
        let j = J::obj([
            ("a", J::n(1.0)),
            ("b", J::Arr(vec![J::n(0.5), J::Null, J::Bool(true)])),
            ("c", J::s("x\"y\n")),
            ("d", J::n(f64::NAN)),
        ]);
        assert_eq!(
            j.render(),
            r#"{"a":1,"b":[0.5,null,true],"c":"x\"y\n","d":null}"#
        );
    }
}
