//! Statement shapes: text statements that differ only in their literals share one parse and
//! one digest. A connection keeps the parsed tree of each shape it ran; the next text of the
//! same shape gets a copy of that tree with its own literals in place of the first text's,
//! and the shape's digests, so it is tokenised once and neither parsed nor normalised.
//!
//! Invariant: a copied tree with the literals put in equals the tree the parser makes of the
//! new text. A shape is kept only when that holds by construction:
//! - the key is every token but the literals, exactly, and each literal's kind;
//! - each literal token is one value of the tree, found by its position, equal to the value
//!   the parser makes of that token; the tree's other values come from tokens in the key;
//! - where planning reads the text at tree positions (the labels of computed select items),
//!   a copy is used only when every token sits where it sat in the first text.
//!
//! Finding the literals and copying the tree recurse once per level of the tree, so texts
//! nesting deeper than [`MAX_DEPTH`] levels (or chaining more than [`MAX_SET_OPERATIONS`]
//! set operations) keep no shape: they are parsed as they come, and a text as deep as the
//! nesting bound costs no more stack than its parse.
//!
//! Parsing depends on the text alone, so no catalog, privilege or session change makes a
//! shape stale: each statement is still planned (names, privileges, plan) from its tree,
//! unless the shape keeps a plan ([`crate::stmt::plan_cache`], which says when that is).

use std::collections::HashMap;
use std::ops::ControlFlow;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use sqlparser::ast::{
    Expr, Select, SelectItem, Statement, Value, ValueWithSpan, Visit, VisitMut, Visitor, VisitorMut,
};
use sqlparser::dialect::MySqlDialect;
use sqlparser::tokenizer::{Location, Span, Token, TokenWithSpan, Tokenizer, Whitespace};

use crate::context::Context;
use crate::digest::Digest;
use crate::error::SqlResult;
use crate::sql::depth::Nesting;
use crate::stmt::plan_cache;
use crate::stmt::scan;

/// Shapes a connection keeps; the least recently used one makes room for a new one.
const SLOTS: usize = 64;
/// Texts longer than this are parsed as they come (they rarely repeat).
const MAX_TEXT: usize = 4096;
/// Texts nesting deeper than this many operator and bracket levels are parsed as they come:
/// finding a shape's literals and copying its tree recurse once per level of sqlparser's tree
/// (5 to 8 KB of stack a level in an unoptimised build, measured), so a tree as deep as
/// [`crate::sql::depth::MAX_DEPTH`] would take 3 to 4 MB of a connection thread's stack.
const MAX_DEPTH: usize = 64;
/// Texts chaining more set operations (`UNION`, ...) than this are parsed as they come
/// (copying one costs about 18 KB of stack in an unoptimised build, measured).
const MAX_SET_OPERATIONS: usize = 16;

/// The digests of one text's statements.
pub type Digests = Arc<[Arc<Digest>]>;

/// A text of a known shape answered from the shape's plan ([`plan_cache`]), with its digests.
#[derive(Debug)]
pub(crate) struct Reused {
    /// The plan and the text's literals as its parameters.
    pub(crate) hit: plan_cache::Hit,
    /// The shape's digests.
    pub(crate) digests: Option<Digests>,
}

/// A parsed text: its statements, and its digests when its shape knew them.
#[derive(Debug)]
pub struct Parsed {
    /// The statements, as [`crate::sql::parse`] makes them.
    pub statements: Vec<Statement>,
    /// The digests of the text, when they came with its shape.
    pub digests: Option<Digests>,
    /// Whether the statements are a copy of a shape's tree (not parsed).
    pub copied: bool,
}

/// One shape's parsed tree and what a copy needs.
#[derive(Debug)]
struct Shape {
    tree: Statement,
    /// For each value of the tree in visiting order: the literal that replaces it, or None
    /// for a value the key fixes (`NULL`, `TRUE`, a placeholder).
    values: Box<[Option<u32>]>,
    /// Every token's position in the first text, when planning reads the text.
    positions: Option<Box<[Span]>>,
    /// The first text's digests (None when digests were off).
    digests: Option<Digests>,
    /// The shape's plan with its literals as parameters.
    plan: Mutex<plan_cache::State>,
}

#[derive(Debug)]
struct Slot {
    used: u64,
    /// None: a shape whose tree cannot be copied; its texts are parsed as they come.
    shape: Option<Arc<Shape>>,
}

#[derive(Debug, Default)]
struct Slots {
    clock: u64,
    map: HashMap<Box<[u8]>, Slot>,
}

/// A connection's statement shapes (only the owning connection uses it, so its mutex is
/// uncontended).
#[derive(Debug, Default)]
pub struct ShapeCache {
    slots: Mutex<Slots>,
    /// Whether shapes keep plans (`tpbed_text_plan_cache`).
    plans: bool,
    /// Moved by every statement that may change what planning reads
    /// ([`plan_cache::moves_epoch`]); a plan is used only in the epoch it was made in.
    epoch: AtomicU64,
    /// Texts answered with a copy (for tests).
    #[cfg(test)]
    copies: std::sync::atomic::AtomicU64,
}

impl ShapeCache {
    /// The shape under `key` (Some(None) for a shape known not to be copyable).
    fn get(&self, key: &[u8]) -> Option<Option<Arc<Shape>>> {
        let mut s = self.slots.lock().unwrap_or_else(|e| e.into_inner());
        s.clock += 1;
        let now = s.clock;
        let slot = s.map.get_mut(key)?;
        slot.used = now;
        Some(slot.shape.clone())
    }

    fn put(&self, key: Vec<u8>, shape: Option<Arc<Shape>>) {
        let mut s = self.slots.lock().unwrap_or_else(|e| e.into_inner());
        if s.map.len() >= SLOTS {
            let oldest = s
                .map
                .iter()
                .min_by_key(|(_, slot)| slot.used)
                .map(|(k, _)| k.clone());
            if let Some(k) = oldest {
                s.map.remove(&k);
            }
        }
        s.clock += 1;
        let used = s.clock;
        s.map.insert(key.into_boxed_slice(), Slot { used, shape });
    }

    /// Shapes held (for tests).
    #[cfg(test)]
    fn len(&self) -> usize {
        self.slots
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .map
            .len()
    }
}

/// Parses `sql` as [`crate::sql::parse`] does, through the connection's shapes: `digests`
/// says whether a new shape should carry the text's digests (statement digests are on).
/// A text whose shape keeps a plan the session may use comes back as that plan instead.
pub(crate) fn parse_or_reuse(
    st: &Context,
    sql: &str,
    digests: bool,
) -> SqlResult<Result<Parsed, Reused>> {
    let cache = cache(st);
    let epoch = cache.epoch.load(Ordering::Relaxed);
    let plans = cache.plans;
    cache.parse_with(
        sql,
        || digests.then(|| st.conn.digest_cache.get(sql, st.core.digests.max_length())),
        |shape, literals| {
            if !plans {
                return None;
            }
            plan_cache::reuse(
                st,
                &shape.plan,
                (&shape.tree, &shape.values),
                (sql, literals.len()),
                epoch,
                || {
                    literals
                        .iter()
                        .map(|v| crate::sql::expr::token_literal(&v.value).ok())
                        .collect()
                },
            )
        },
    )
}

/// The connection's shape cache, made the first time the connection parses.
pub(crate) fn cache(st: &Context) -> &ShapeCache {
    st.conn
        .statement_state
        .get_or_init(|| {
            Box::new(ShapeCache {
                plans: st.core.vars.global_by_name(plan_cache::VARIABLE).as_bool(),
                ..ShapeCache::default()
            })
        })
        .downcast_ref::<ShapeCache>()
        .expect("the connection's statement state is its shape cache")
}

/// Marks that a statement ran which may change what planning reads: no plan made before it
/// is used after it.
pub(crate) fn session_changed(st: &Context) {
    cache(st).epoch.fetch_add(1, Ordering::Relaxed);
}

impl ShapeCache {
    /// Parses `sql` as [`crate::sql::parse`] does, from a copy of its shape's tree when the
    /// cache has it; a new shape is kept with the digests `digests` gives.
    pub fn parse(&self, sql: &str, digests: impl FnOnce() -> Option<Digests>) -> SqlResult<Parsed> {
        match self.parse_with(sql, digests, |_, _| None)? {
            Ok(parsed) => Ok(parsed),
            // Not reached: nothing is reused here.
            Err(_) => Ok(Parsed {
                statements: crate::sql::parse(sql)?,
                digests: None,
                copied: false,
            }),
        }
    }

    /// A copy of `shape`'s tree with `values` (the text's literals) put in, as parsed text.
    fn copied(&self, shape: &Shape, values: Vec<ValueWithSpan>) -> Option<Parsed> {
        let tree = shape.copy(values)?;
        #[cfg(test)]
        self.copies
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        Some(Parsed {
            statements: vec![tree],
            digests: shape.digests.clone(),
            copied: true,
        })
    }

    /// [`ShapeCache::parse`]; for a text of a known shape, `reuse` may answer with the
    /// shape's plan instead (given the shape and the text's literals, in text order).
    ///
    /// A text is first looked up by [`scan`]'s key, which needs no tokens; a text the scanner
    /// does not read, a new shape, and a shape that needs every token's position are looked up
    /// (or kept) through sqlparser's tokens.
    fn parse_with(
        &self,
        sql: &str,
        digests: impl FnOnce() -> Option<Digests>,
        reuse: impl Fn(&Shape, &[ValueWithSpan]) -> Option<plan_cache::Hit>,
    ) -> SqlResult<Result<Parsed, Reused>> {
        let plain = || {
            Ok(Ok(Parsed {
                statements: crate::sql::parse(sql)?,
                digests: None,
                copied: false,
            }))
        };
        if sql.len() > MAX_TEXT {
            return plain();
        }
        // Whether `reuse` was asked already (it plans the shape the first time it is asked).
        let mut asked = false;
        if let Some(scanned) = scan::scan(sql) {
            if let Some(Some(shape)) = self.get(&scanned.key) {
                if let Some(hit) = reuse(&shape, &scanned.literals) {
                    return Ok(Err(Reused {
                        hit,
                        digests: shape.digests.clone(),
                    }));
                }
                asked = true;
                if shape.positions.is_none() {
                    return match self.copied(&shape, scanned.literals) {
                        Some(parsed) => Ok(Ok(parsed)),
                        None => plain(),
                    };
                }
            }
        }
        let Ok(tokens) = Tokenizer::new(&MySqlDialect {}, sql).tokenize_with_location() else {
            return plain();
        };
        let (key, literals) = key_of(&tokens);
        let known = self.get(&key);
        if let Some(Some(shape)) = &known {
            let values = literal_spans(&tokens, &literals);
            if !asked {
                if let Some(hit) = reuse(shape, &values) {
                    return Ok(Err(Reused {
                        hit,
                        digests: shape.digests.clone(),
                    }));
                }
            }
            if shape.fits(&tokens) {
                return match self.copied(shape, values) {
                    Some(parsed) => Ok(Ok(parsed)),
                    None => plain(),
                };
            }
        }
        let values: Vec<(Value, Span)> = literals
            .iter()
            .map(|&i| (literal_value(&tokens[i].token), tokens[i].span))
            .collect();
        let positions: Box<[Span]> = tokens.iter().map(|t| t.span).collect();
        let (nesting, parsed) = crate::sql::parse_tokens(tokens)?;
        let statements = match parsed {
            Ok(s) => s,
            // The error path (and its `LOCK IN SHARE MODE` retry) is the plain parse's.
            Err(_) => return plain(),
        };
        if known.is_some() {
            return Ok(Ok(Parsed {
                statements,
                digests: None,
                copied: false,
            }));
        }
        let shape = match statements.as_slice() {
            [tree] if shallow(nesting) => Shape::new(tree, &values, positions).map(|mut s| {
                s.digests = digests();
                Arc::new(s)
            }),
            _ => None,
        };
        let digests = shape.as_ref().and_then(|s| s.digests.clone());
        self.put(key, shape);
        Ok(Ok(Parsed {
            statements,
            digests,
            copied: false,
        }))
    }
}

/// Whether a text nesting `n` deep may keep a shape ([`MAX_DEPTH`], [`MAX_SET_OPERATIONS`]).
fn shallow(n: Nesting) -> bool {
    n.depth <= MAX_DEPTH && n.set_operations <= MAX_SET_OPERATIONS
}

/// Whether `token` is a literal a shape leaves out of its key.
pub(crate) fn is_literal(token: &Token) -> bool {
    matches!(
        token,
        Token::Number(..)
            | Token::SingleQuotedString(_)
            | Token::DoubleQuotedString(_)
            | Token::NationalStringLiteral(_)
            | Token::HexStringLiteral(_)
    )
}

/// The value the parser makes of literal token `token` (its
/// [`sqlparser::parser::Parser::parse_value`]).
pub(crate) fn literal_value(token: &Token) -> Value {
    match token {
        Token::Number(n, long) => Value::Number(n.clone(), *long),
        Token::SingleQuotedString(s) => Value::SingleQuotedString(s.clone()),
        Token::DoubleQuotedString(s) => Value::DoubleQuotedString(s.clone()),
        Token::NationalStringLiteral(s) => Value::NationalStringLiteral(s.clone()),
        Token::HexStringLiteral(s) => Value::HexStringLiteral(s.clone()),
        _ => Value::Null,
    }
}

/// The shape key of `tokens` (each non-literal token exactly, each literal's kind) and the
/// indexes of its literal tokens.
pub(crate) fn key_of(tokens: &[TokenWithSpan]) -> (Vec<u8>, Vec<usize>) {
    use std::io::Write as _;
    let mut key = Vec::with_capacity(tokens.len() * 8);
    let mut literals = Vec::new();
    for (i, t) in tokens.iter().enumerate() {
        match &t.token {
            Token::Number(_, long) => key.extend_from_slice(&[0, 1, u8::from(*long)]),
            Token::SingleQuotedString(_) => key.extend_from_slice(&[0, 2]),
            Token::DoubleQuotedString(_) => key.extend_from_slice(&[0, 3]),
            Token::NationalStringLiteral(_) => key.extend_from_slice(&[0, 4]),
            Token::HexStringLiteral(_) => key.extend_from_slice(&[0, 5]),
            Token::Word(w) => {
                // Length-prefixed, so no two token lists share a key.
                let q = w.quote_style.map_or(0, u32::from);
                key.push(1);
                key.extend_from_slice(&q.to_le_bytes());
                key.extend_from_slice(&(w.value.len() as u32).to_le_bytes());
                key.extend_from_slice(w.value.as_bytes());
            }
            // The commonest tokens in one byte each (codes above the three prefixes).
            Token::Whitespace(Whitespace::Space) => key.push(3),
            Token::Whitespace(Whitespace::Newline) => key.push(4),
            Token::Whitespace(Whitespace::Tab) => key.push(5),
            Token::Comma => key.push(6),
            Token::LParen => key.push(7),
            Token::RParen => key.push(8),
            Token::Eq => key.push(9),
            Token::Period => key.push(10),
            Token::Mul => key.push(11),
            Token::Plus => key.push(12),
            Token::Minus => key.push(13),
            Token::Lt => key.push(14),
            Token::Gt => key.push(15),
            Token::LtEq => key.push(16),
            Token::GtEq => key.push(17),
            Token::Neq => key.push(18),
            Token::EOF => key.push(19),
            other => {
                key.push(2);
                let at = key.len();
                key.extend_from_slice(&[0; 4]);
                let _ = write!(key, "{other:?}");
                let len = (key.len() - at - 4) as u32;
                key[at..at + 4].copy_from_slice(&len.to_le_bytes());
            }
        }
        if is_literal(&t.token) {
            literals.push(i);
        }
    }
    (key, literals)
}

impl Shape {
    /// The shape of parsed `tree` whose literal tokens are `literals` (value and position,
    /// in text order); None when a copy could differ from a parse.
    fn new(tree: &Statement, literals: &[(Value, Span)], positions: Box<[Span]>) -> Option<Shape> {
        let mut finder = Finder {
            literals,
            used: vec![false; literals.len()],
            values: Vec::new(),
            refused: false,
            reads_text: false,
        };
        let _ = tree.visit(&mut finder);
        if finder.refused || finder.used.iter().any(|u| !u) {
            return None;
        }
        Some(Shape {
            tree: tree.clone(),
            values: finder.values.into_boxed_slice(),
            positions: finder.reads_text.then_some(positions),
            digests: None,
            plan: Mutex::default(),
        })
    }

    /// Whether a text of this shape with `tokens` may use a copy: always, unless planning
    /// reads the text and a token moved.
    fn fits(&self, tokens: &[TokenWithSpan]) -> bool {
        self.positions.as_ref().is_none_or(|p| {
            p.len() == tokens.len() && p.iter().zip(tokens).all(|(a, t)| *a == t.span)
        })
    }

    /// A copy of the tree with a text's literals (`values`, in text order) put in (None only
    /// if the tree and its shape disagree, which [`Shape::new`] rules out).
    fn copy(&self, values: Vec<ValueWithSpan>) -> Option<Statement> {
        let values: Vec<Option<ValueWithSpan>> = values.into_iter().map(Some).collect();
        let mut tree = self.tree.clone();
        let mut filler = Filler {
            values,
            slots: &self.values,
            at: 0,
        };
        let done = VisitMut::visit(&mut tree, &mut filler);
        (done.is_continue() && filler.at == self.values.len()).then_some(tree)
    }
}

/// The values and spans of the literal tokens of `tokens` (at indexes `literals`).
fn literal_spans(tokens: &[TokenWithSpan], literals: &[usize]) -> Vec<ValueWithSpan> {
    literals
        .iter()
        .map(|&i| ValueWithSpan {
            value: literal_value(&tokens[i].token),
            span: tokens[i].span,
        })
        .collect()
}

/// Matches a parsed tree's values with the text's literal tokens.
struct Finder<'a> {
    literals: &'a [(Value, Span)],
    used: Vec<bool>,
    values: Vec<Option<u32>>,
    refused: bool,
    reads_text: bool,
}

fn at(l: Location) -> (u64, u64) {
    (l.line, l.column)
}

impl Visitor for Finder<'_> {
    type Break = ();

    fn pre_visit_value(&mut self, v: &ValueWithSpan) -> ControlFlow<()> {
        let start = at(v.span.start);
        let found = self
            .literals
            .binary_search_by_key(&start, |(_, s)| at(s.start));
        match found {
            Ok(i) if !self.used[i] && self.literals[i].0 == v.value => {
                self.used[i] = true;
                self.values.push(Some(i as u32));
            }
            Ok(_) => {
                self.refused = true;
                return ControlFlow::Break(());
            }
            Err(_) => self.values.push(None),
        }
        ControlFlow::Continue(())
    }

    fn pre_visit_select(&mut self, s: &Select) -> ControlFlow<()> {
        // Unaliased computed items are labelled with their text (`crate::sql::span_text`),
        // and a SELECT without tables labels every unaliased item so.
        self.reads_text |= s.projection.iter().any(|item| match item {
            SelectItem::UnnamedExpr(e) => {
                s.from.is_empty() || !matches!(e, Expr::Identifier(_) | Expr::CompoundIdentifier(_))
            }
            _ => false,
        });
        ControlFlow::Continue(())
    }
}

/// Puts a text's literals into a copied tree.
struct Filler<'a> {
    values: Vec<Option<ValueWithSpan>>,
    slots: &'a [Option<u32>],
    at: usize,
}

impl VisitorMut for Filler<'_> {
    type Break = ();

    fn pre_visit_value(&mut self, v: &mut ValueWithSpan) -> ControlFlow<()> {
        let Some(slot) = self.slots.get(self.at) else {
            return ControlFlow::Break(());
        };
        self.at += 1;
        if let Some(i) = slot {
            match self.values.get_mut(*i as usize).and_then(Option::take) {
                Some(new) => *v = new,
                None => return ControlFlow::Break(()),
            }
        }
        ControlFlow::Continue(())
    }
}

#[cfg(test)]
mod tests;
