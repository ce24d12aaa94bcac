//! ENUM and SET member lists and the values over them. A list is interned for the life of the
//! process, so a column type that names it stays `Copy` and a value carries it for free; the
//! lists are few (one per distinct declaration), so the interner only grows with schemas.

use std::collections::HashSet;
use std::fmt;
use std::sync::{Mutex, OnceLock};

/// The members of an ENUM or SET column, in declaration order, as declared (trailing spaces
/// cut, as MySQL cuts them).
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct Members(&'static [Box<str>]);

/// Most members an ENUM may have (MySQL's limit).
pub const MAX_ENUM_MEMBERS: usize = 65_535;
/// Most members a SET may have (one bit each in 64).
pub const MAX_SET_MEMBERS: usize = 64;

impl Members {
    /// The interned list of these names.
    pub fn intern<S: AsRef<str>>(names: &[S]) -> Members {
        static LISTS: OnceLock<Mutex<HashSet<&'static [Box<str>]>>> = OnceLock::new();
        let list: Vec<Box<str>> = names
            .iter()
            .map(|n| n.as_ref().trim_end_matches(' ').into())
            .collect();
        let mut lists = LISTS
            .get_or_init(Default::default)
            .lock()
            .unwrap_or_else(|p| p.into_inner());
        if let Some(&known) = lists.get(list.as_slice()) {
            return Members(known);
        }
        let leaked: &'static [Box<str>] = Box::leak(list.into_boxed_slice());
        lists.insert(leaked);
        Members(leaked)
    }

    /// Number of members.
    pub fn len(self) -> usize {
        self.0.len()
    }

    /// True for an empty list.
    pub fn is_empty(self) -> bool {
        self.0.is_empty()
    }

    /// The members in declaration order.
    pub fn names(self) -> impl Iterator<Item = &'static str> {
        self.0.iter().map(|n| &**n)
    }

    /// The 1-based position of the member equal to `text` (ASCII case and trailing spaces
    /// ignored, as MySQL matches ENUM input).
    pub fn position(self, text: &[u8]) -> Option<u16> {
        let text = trim_spaces(text);
        self.0
            .iter()
            .position(|m| m.as_bytes().eq_ignore_ascii_case(text))
            .map(|i| (i + 1) as u16)
    }

    /// The text of ENUM index `index` (1-based; 0 is the empty error value).
    pub fn enum_text(self, index: u16) -> &'static str {
        usize::from(index)
            .checked_sub(1)
            .and_then(|i| self.0.get(i))
            .map_or("", |m| m)
    }

    /// The text of SET bitmask `bits`: its members in declaration order, comma-joined.
    pub fn set_text(self, bits: u64) -> String {
        let mut out = String::new();
        for (i, m) in self.0.iter().enumerate() {
            if bits & (1 << i) != 0 {
                if !out.is_empty() {
                    out.push(',');
                }
                out.push_str(m);
            }
        }
        out
    }

    /// The bitmask of a comma-separated member list (empty items ignored); None when an item
    /// is not a member.
    pub fn set_bits(self, text: &[u8]) -> Option<u64> {
        let mut bits = 0u64;
        for item in text.split(|&b| b == b',').filter(|i| !i.is_empty()) {
            bits |= 1 << (self.position(item)? - 1);
        }
        Some(bits)
    }

    /// Characters of the longest member: an ENUM's display length.
    pub fn longest_chars(self) -> u32 {
        self.names().map(|n| n.chars().count()).max().unwrap_or(0) as u32
    }

    /// Characters of every member comma-joined: a SET's display length.
    pub fn joined_chars(self) -> u32 {
        let chars: usize = self.names().map(|n| n.chars().count()).sum();
        (chars + self.len().saturating_sub(1)) as u32
    }

    /// The bitmask with every member set.
    pub fn all_bits(self) -> u64 {
        match self.0.len() {
            64.. => u64::MAX,
            n => (1u64 << n) - 1,
        }
    }

    /// Bytes an ENUM index takes (MySQL's pack length): 1 up to 255 members, else 2.
    pub fn enum_width(self) -> usize {
        if self.0.len() < 256 {
            1
        } else {
            2
        }
    }

    /// Bytes a SET bitmask takes (MySQL's pack length): 1, 2, 3, 4 or 8.
    pub fn set_width(self) -> usize {
        match self.0.len().div_ceil(8) {
            0 | 1 => 1,
            w @ 2..=4 => w,
            _ => 8,
        }
    }

    /// The list as MySQL prints it inside `enum(...)`/`set(...)`: quoted, `'` doubled.
    pub fn quoted(self) -> String {
        let quoted: Vec<String> = self
            .0
            .iter()
            .map(|m| format!("'{}'", m.replace('\'', "''")))
            .collect();
        quoted.join(",")
    }

    /// The first member named twice (ASCII case ignored), which MySQL refuses.
    pub fn duplicate(self) -> Option<&'static str> {
        self.0.iter().enumerate().find_map(|(i, m)| {
            self.0[..i]
                .iter()
                .any(|p| p.eq_ignore_ascii_case(m))
                .then_some(&**m)
        })
    }
}

impl fmt::Debug for Members {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list().entries(self.0.iter()).finish()
    }
}

fn trim_spaces(mut b: &[u8]) -> &[u8] {
    while let [rest @ .., b' '] = b {
        b = rest;
    }
    b
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn interned_lists_are_shared_and_matched_by_text() {
        let a = Members::intern(&["pending", "claimed", "done"]);
        let b = Members::intern(&["pending", "claimed", "done  "]);
        assert!(std::ptr::eq(a.0, b.0));
        assert_eq!(a.position(b"CLAIMED "), Some(2));
        assert_eq!(a.position(b"x"), None);
        assert_eq!(a.enum_text(3), "done");
        assert_eq!(a.enum_text(0), "");
        assert_eq!(a.set_bits(b"done,PENDING"), Some(0b101));
        assert_eq!(a.set_text(0b101), "pending,done");
        assert_eq!(a.set_bits(b"done,x"), None);
        assert_eq!(Members::intern(&["it's"]).quoted(), "'it''s'");
        assert_eq!(Members::intern(&["a", "b", "A"]).duplicate(), Some("A"));
    }

    #[test]
    fn widths_follow_mysql_pack_lengths() {
        let names: Vec<String> = (0..300).map(|i| i.to_string()).collect();
        assert_eq!(Members::intern(&names[..255]).enum_width(), 1);
        assert_eq!(Members::intern(&names).enum_width(), 2);
        assert_eq!(Members::intern(&names[..8]).set_width(), 1);
        assert_eq!(Members::intern(&names[..17]).set_width(), 3);
        assert_eq!(Members::intern(&names[..33]).set_width(), 8);
        assert_eq!(Members::intern(&names[..64]).all_bits(), u64::MAX);
    }
}
