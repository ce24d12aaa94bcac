//! A bound on how deep a statement's syntax tree can nest, checked on its tokens before it is
//! parsed. sqlparser builds operator chains (`1+1+...`, `a OR b OR ...`, `x IS NULL IS NULL
//! ...`, `SELECT 1 UNION SELECT 1 ...`) in a loop, without recursing, but regrouping,
//! binding, evaluating and dropping the tree recurse once per level, so an unbounded chain
//! would overflow the connection thread's stack and abort the process.
//!
//! Chains of `AND`/`&&` and `OR` are the exception MySQL users rely on (`WHERE id = 1 OR id =
//! 2 OR ...` with thousands of terms): the parse is regrouped into a balanced tree
//! ([`crate::sql::chains`]) and bound as one n-ary node, so such a chain costs at most
//! [`CHAIN_LEVELS`] levels of the bound however long it is. Until it is regrouped, sqlparser's
//! tree is as deep as the chain is long (a statement that fails to parse drops it that deep),
//! so the chain itself is bounded by [`MAX_CHAIN_DEPTH`].
//!
//! Invariant: both estimates are never below the real depth of the tree they bound. Every
//! operator token deepens the operand it follows, a bracket adds a level over its deepest
//! content, and only a comma starts a fresh operand inside its brackets (a `;` starts a fresh
//! statement); an `AND`/`OR` starts a fresh operand one chain level deeper. Set operations are
//! counted over the whole statement, since commas do not end their chain.

use sqlparser::keywords::Keyword;
use sqlparser::tokenizer::{Token, TokenWithSpan};

use crate::digest::normalize::is_string;
use crate::error::{ErrorCode, SqlError, SqlResult};

/// The deepest operator and bracket nesting a statement may have. The walks of a tree this
/// deep that recurse once per level (regrouping `AND`/`OR` chains, binding, evaluating,
/// dropping) take at most about 1.3 MB of a connection thread's 8 MiB stack in an
/// unoptimised build with debug info, and about 0.8 MB optimised (measured on every operator
/// chain at this bound, as text and prepared: unoptimised, regrouping's walk is the widest,
/// about 2.4 KB a level); the statement shape cache does not keep such trees, and labels
/// are found without recursing.
pub const MAX_DEPTH: usize = 512;

/// The most levels a chain of `AND`/`OR` counts towards [`MAX_DEPTH`]: a chain shorter than
/// [`crate::sql::chains::REGROUP_FROM`] operands keeps sqlparser's shape (one level per
/// operator), a longer one is regrouped to about log2 of its length (at most 32 levels), and an
/// `OR` chain's operands may be `AND` chains, so two such chains stack.
pub const CHAIN_LEVELS: usize = 2 * crate::sql::chains::REGROUP_FROM;

/// The deepest a statement may nest counting every `AND`/`OR` as a level, as sqlparser's tree
/// has them before regrouping. Dropping that tree (when the statement fails to parse) takes
/// about 85 bytes of stack a level in a debug build (measured: 20,000 levels need 1.75 MB), so
/// this many levels take under 3 MB of the connection threads' 8 MiB stacks.
pub const MAX_CHAIN_DEPTH: usize = 32_768;

/// The most set operations (`UNION`, `EXCEPT`, `INTERSECT`) one statement may chain.
pub const MAX_SET_OPERATIONS: usize = 512;

/// Whether a keyword combines operands the way an operator token does.
fn operator_keyword(k: Keyword) -> bool {
    use Keyword::*;
    matches!(
        k,
        AND | OR
            | XOR
            | NOT
            | IS
            | IN
            | BETWEEN
            | LIKE
            | ILIKE
            | REGEXP
            | RLIKE
            | DIV
            | MOD
            | COLLATE
            | ESCAPE
            | MEMBER
            | OVERLAPS
            | AT
            | SIMILAR
            | INTERVAL
            | BINARY
    )
}

fn too_deep(what: &str, limit: usize) -> SqlError {
    SqlError::new(
        ErrorCode::StackOverrunNeedMore,
        format!(
            "Thread stack overrun: the statement nests {what} more than {limit} levels deep. \
             Split it or use IN (...) lists"
        ),
    )
}

/// Two depths of one place in the tree: as bound (`AND`/`OR` chains regrouped) and as
/// sqlparser builds it (every `AND`/`OR` a level).
#[derive(Debug, Clone, Copy, Default)]
struct Depths {
    bound: usize,
    raw: usize,
}

impl Depths {
    fn deeper(self, levels: usize) -> Depths {
        Depths {
            bound: self.bound + levels,
            raw: self.raw + levels,
        }
    }

    /// Each depth the deeper of the two.
    fn widest(self, other: Depths) -> Depths {
        Depths {
            bound: self.bound.max(other.bound),
            raw: self.raw.max(other.raw),
        }
    }
}

/// What the check knows of one bracket's content (or of the statement outside brackets).
#[derive(Debug, Default)]
struct Level {
    /// The depths at which the content starts.
    base: Depths,
    /// `AND`/`OR` operators since the content (or its last comma) started.
    chain: usize,
    /// `BETWEEN`s whose `AND` is still to come.
    betweens: usize,
    /// How far the current operand of the chain reaches below the chain.
    term: Depths,
    /// How far the chain's deepest operand so far reaches below it.
    term_max: Depths,
    /// The deepest depths anywhere in the content.
    deepest: Depths,
}

impl Level {
    /// Where the chain's operands start: every operand of a left-deep chain may sit under
    /// all of its operators, so this counts the whole chain so far (capped for the regrouped
    /// tree).
    fn chain_base(&self) -> Depths {
        Depths {
            bound: self.base.bound + self.chain.min(CHAIN_LEVELS),
            raw: self.base.raw + self.chain,
        }
    }

    /// The depths of the current operand's deepest point.
    fn current(&self) -> Depths {
        let c = self.chain_base();
        Depths {
            bound: c.bound + self.term.bound,
            raw: c.raw + self.term.raw,
        }
    }

    /// The deepest the content reaches now: the chain over its deepest operand.
    fn reach(&self) -> Depths {
        let c = self.chain_base();
        Depths {
            bound: c.bound + self.term_max.bound,
            raw: c.raw + self.term_max.raw,
        }
    }

    /// The current operand now reaches down to `to`.
    fn reach_down(&mut self, to: Depths) {
        let c = self.chain_base();
        self.term.bound = self.term.bound.max(to.bound.saturating_sub(c.bound));
        self.term.raw = self.term.raw.max(to.raw.saturating_sub(c.raw));
        self.note_term();
    }

    fn note_term(&mut self) {
        self.term_max = self.term_max.widest(self.term);
    }

    /// One more operator over the current operand.
    fn operator(&mut self) {
        self.term = self.term.deeper(1);
        self.note_term();
    }

    /// An `AND`/`OR`: the chain grows by one and a fresh operand starts.
    fn chain_operator(&mut self) {
        self.chain += 1;
        self.term = Depths::default();
    }

    /// A comma: a fresh operand with no chain over it.
    fn comma(&mut self) {
        self.chain = 0;
        self.term = Depths::default();
        self.term_max = Depths::default();
    }
}

/// How deep a token stream nests, as [`check`] estimates it (never below the real depth).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Nesting {
    /// The deepest operator and bracket level of any of its statements, `AND`/`OR` chains
    /// counted as regrouped.
    pub depth: usize,
    /// The most set operations one of its statements chains.
    pub set_operations: usize,
}

/// Refuses a token stream whose syntax tree could nest deeper than [`MAX_DEPTH`] once its
/// `AND`/`OR` chains are regrouped, or deeper than [`MAX_CHAIN_DEPTH`] before (or chain more
/// than [`MAX_SET_OPERATIONS`] set operations), with 1436; else says how deep it nests.
pub fn check(tokens: &[TokenWithSpan]) -> SqlResult<Nesting> {
    // The statement's level first, then one per open bracket.
    let mut levels = vec![Level::default()];
    let mut set_ops = 0usize;
    let mut nesting = Nesting::default();
    for t in tokens {
        let Some(level) = levels.last_mut() else {
            return Ok(nesting);
        };
        match &t.token {
            Token::Whitespace(_)
            | Token::Number(..)
            | Token::Period
            | Token::Placeholder(_)
            | Token::EOF => continue,
            Token::Word(w) => match w.keyword {
                Keyword::UNION | Keyword::EXCEPT | Keyword::INTERSECT | Keyword::MINUS => {
                    set_ops += 1;
                    if set_ops > MAX_SET_OPERATIONS {
                        return Err(too_deep("set operations", MAX_SET_OPERATIONS));
                    }
                    nesting.set_operations = nesting.set_operations.max(set_ops);
                    continue;
                }
                Keyword::BETWEEN => {
                    level.betweens += 1;
                    level.operator();
                }
                // The `AND` of `BETWEEN x AND y` is part of the BETWEEN, not a chain.
                Keyword::AND if level.betweens > 0 => {
                    level.betweens -= 1;
                    level.operator();
                }
                Keyword::AND | Keyword::OR => level.chain_operator(),
                k if operator_keyword(k) => level.operator(),
                _ => continue,
            },
            // `&&` is AND.
            Token::Overlap => level.chain_operator(),
            Token::SemiColon => {
                levels = vec![Level::default()];
                set_ops = 0;
                continue;
            }
            Token::Comma => {
                level.comma();
                continue;
            }
            Token::LParen | Token::LBracket | Token::LBrace => {
                level.operator();
                let base = level.current();
                levels.push(Level {
                    base,
                    deepest: base,
                    ..Level::default()
                });
            }
            Token::RParen | Token::RBracket | Token::RBrace => {
                if levels.len() > 1 {
                    let inner = levels.pop().map(|l| l.deepest).unwrap_or_default();
                    if let Some(outer) = levels.last_mut() {
                        outer.reach_down(inner);
                    }
                }
            }
            t if is_string(t) => continue,
            // Every other token is an operator or punctuation that may combine operands.
            _ => level.operator(),
        }
        let Some(level) = levels.last_mut() else {
            return Ok(nesting);
        };
        let reach = level.reach();
        if reach.bound > MAX_DEPTH {
            return Err(too_deep("operators and brackets", MAX_DEPTH));
        }
        if reach.raw > MAX_CHAIN_DEPTH {
            return Err(too_deep("AND and OR operators", MAX_CHAIN_DEPTH));
        }
        level.deepest = level.deepest.widest(reach);
        nesting.depth = nesting.depth.max(reach.bound);
    }
    Ok(nesting)
}

#[cfg(test)]
mod tests {
    use sqlparser::dialect::MySqlDialect;
    use sqlparser::tokenizer::Tokenizer;

    use super::*;

    fn depth_ok(sql: &str) -> bool {
        let tokens = Tokenizer::new(&MySqlDialect {}, sql)
            .tokenize_with_location()
            .unwrap();
        check(&tokens).is_ok()
    }

    fn chain(op: &str, n: usize) -> String {
        format!("SELECT {}", vec!["1"; n].join(op))
    }

    #[test]
    fn long_operator_chains_are_refused_and_short_ones_pass() {
        for op in ["+", "*", " XOR ", "||", " DIV "] {
            assert!(depth_ok(&chain(op, MAX_DEPTH)), "{op}");
            assert!(!depth_ok(&chain(op, MAX_DEPTH + 2)), "{op}");
        }
        let is_null = format!("SELECT 1{}", " IS NULL".repeat(MAX_DEPTH + 1));
        assert!(!depth_ok(&is_null));
        let unions = vec!["SELECT 1, 2"; MAX_SET_OPERATIONS + 2].join(" UNION ");
        assert!(!depth_ok(&unions));
    }

    #[test]
    fn and_or_chains_count_a_few_levels_however_long() {
        for op in [" OR ", " AND ", " && "] {
            assert!(depth_ok(&chain(op, 20_000)), "{op}");
            // Until it is regrouped the chain is as deep as it is long: that stays bounded.
            assert!(!depth_ok(&chain(op, MAX_CHAIN_DEPTH + 2)), "{op}");
        }
        let terms: Vec<String> = (0..5_000)
            .map(|i| format!("id = {i} AND v > -{i}"))
            .collect();
        assert!(depth_ok(&format!(
            "SELECT * FROM t WHERE ({}) AND NOT (x OR y)",
            terms.join(" OR ")
        )));
        // An operand is measured as before, wherever it sits in the chain.
        let deep = vec!["1"; MAX_DEPTH + 2].join("+");
        assert!(!depth_ok(&format!("SELECT 1 OR {deep} OR 1")));
        assert!(!depth_ok(&format!("SELECT {deep} AND 1")));
        // Every operand of a chain sits under all of its operators until the chain is long
        // enough to be regrouped.
        let operand = vec!["1"; MAX_DEPTH - 4].join("+");
        assert!(!depth_ok(&format!("SELECT {operand}{}", " OR 1".repeat(7))));
        assert!(depth_ok(&format!("SELECT {operand} OR 1 OR 1")));
        // The AND of BETWEEN is not a chain.
        let betweens = format!("SELECT 1{}", " BETWEEN 0 AND 2".repeat(MAX_DEPTH / 2 + 1));
        assert!(!depth_ok(&betweens));
        // A bracketed chain carries its levels out, not its length.
        let or = chain(" OR ", 10_000).replace("SELECT ", "");
        assert!(depth_ok(&format!("SELECT ({or}) AND ({or}) OR (({or}))")));
    }

    fn nesting(sql: &str) -> Nesting {
        let tokens = Tokenizer::new(&MySqlDialect {}, sql)
            .tokenize_with_location()
            .unwrap();
        check(&tokens).unwrap()
    }

    #[test]
    fn the_check_reports_the_deepest_statement_it_passed() {
        let flat = nesting("SELECT a, b FROM t WHERE c = 1");
        assert!(flat.depth <= 2 && flat.set_operations == 0, "{flat:?}");
        // Never below the real depth: 99 operators over the first operand.
        let deep = nesting(&chain("+", 100));
        assert!((99..=100).contains(&deep.depth), "{deep:?}");
        // The deepest of several statements, and the most set operations of one.
        let unions = ["SELECT 1"; 4].join(" UNION ");
        let both = nesting(&format!("{}; {unions}; SELECT 1", chain("*", 50)));
        assert!((49..=50).contains(&both.depth), "{both:?}");
        assert_eq!(both.set_operations, 3);
        // A long AND chain counts as regrouped.
        assert!(nesting(&chain(" OR ", 10_000)).depth <= CHAIN_LEVELS + 1);
    }

    #[test]
    fn commas_start_fresh_operands_but_brackets_carry_their_depth_out() {
        // A huge IN list or VALUES list is flat.
        let list = vec!["1"; 100_000].join(",");
        assert!(depth_ok(&format!("SELECT 1 IN ({list})")));
        let rows = vec!["(1+1, 'a')"; 10_000].join(",");
        assert!(depth_ok(&format!("INSERT INTO t VALUES {rows}")));
        // A deep chain inside brackets still counts after the bracket closes.
        let inner = vec!["1"; 300].join("+");
        let outer = vec!["1"; 300].join("+");
        assert!(!depth_ok(&format!("SELECT ({inner}) + {outer}")));
        // Each statement of a multi-statement text is measured on its own.
        let half = chain("+", MAX_DEPTH / 2 + 10);
        assert!(depth_ok(&format!("{half}; {half}")));
        // Operators inside string literals do not count.
        let text = "+".repeat(10_000);
        assert!(depth_ok(&format!("SELECT '{text}'")));
    }
}
