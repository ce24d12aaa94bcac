//! The five TPC-C transactions as statement sequences driven by replies: each `next` takes the
//! reply to the previous statement and gives the next one, until the transaction's COMMIT (or
//! New-Order's ROLLBACK for an unused item) is answered. The statements are sysbench-tpcc's
//! (table set 1), with the specification's column updates where that script leaves them out
//! (Payment's `c_payment_cnt`, New-Order's `s_ytd`/`s_order_cnt`/`s_remote_cnt`), and money
//! added by the server so sums stay exact.

/// Moves `step` to `to` and sends `sql` (built before `step` is touched).
macro_rules! send {
    ($step:expr, $to:expr, $sql:expr $(,)?) => {{
        let sql: String = $sql;
        $step = $to;
        Ok(Next::Send(sql))
    }};
}

mod delivery;
mod new_order;
mod order_status;
mod payment;
mod stock_level;

use crate::conn::{Param, Reply};
use crate::tpcc::keys::Input;

pub(crate) use delivery::Delivery;
pub(crate) use new_order::NewOrder;
pub(crate) use order_status::OrderStatus;
pub(crate) use payment::Payment;
pub(crate) use stock_level::StockLevel;

/// What a transaction wants next.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Next {
    /// Send this statement.
    Send(String),
    /// The transaction is over: committed, or rolled back by design.
    Done {
        /// Whether it ended with a ROLLBACK (New-Order's unused item).
        rolled_back: bool,
    },
}

/// A string as a SQL literal.
fn lit(s: &str) -> String {
    Param::Str(s.to_string()).to_sql()
}

/// The rows of a result-set reply.
fn rows(last: Option<&Reply>) -> Result<&[Vec<Option<String>>], String> {
    match last {
        Some(Reply::Rows { rows, .. }) => Ok(rows),
        other => Err(format!("expected rows, got {other:?}")),
    }
}

/// Column `i` of the first row (None when there is no row; NULL is an empty string).
fn first(last: Option<&Reply>, i: usize) -> Result<Option<String>, String> {
    Ok(rows(last)?
        .first()
        .map(|r| r.get(i).cloned().flatten().unwrap_or_default()))
}

/// Column `i` of the first row, which must exist.
fn need(last: Option<&Reply>, i: usize, what: &str) -> Result<String, String> {
    first(last, i)?.ok_or_else(|| {
        format!("{what}: no row (is the database prepared? run `tpbed-load tpcc prepare`)")
    })
}

/// Column `i` of the first row as a number.
fn num(last: Option<&Reply>, i: usize, what: &str) -> Result<f64, String> {
    let v = need(last, i, what)?;
    v.trim()
        .parse()
        .map_err(|_| format!("{what}: {v:?} is not a number"))
}

/// The middle customer (position n/2 rounded up) of a by-last-name lookup, column `i`.
fn middle(last: Option<&Reply>, i: usize, what: &str) -> Result<u32, String> {
    let r = rows(last)?;
    if r.is_empty() {
        return Err(format!(
            "{what}: no customer has the last name (is the database prepared?)"
        ));
    }
    let pick = &r[r.len().div_ceil(2) - 1];
    let v = pick.get(i).cloned().flatten().unwrap_or_default();
    v.parse()
        .map_err(|_| format!("{what}: bad customer id {v:?}"))
}

/// One running transaction.
#[derive(Debug)]
pub(crate) enum Txn {
    /// New-Order.
    NewOrder(NewOrder),
    /// Payment.
    Payment(Payment),
    /// Order-Status.
    OrderStatus(OrderStatus),
    /// Delivery.
    Delivery(Delivery),
    /// Stock-Level.
    StockLevel(StockLevel),
}

impl Txn {
    /// A transaction at its start.
    pub(crate) fn start(input: &Input) -> Txn {
        match input.clone() {
            Input::NewOrder { w, d, c, lines } => Txn::NewOrder(NewOrder {
                w,
                d,
                c,
                lines,
                step: 0,
                line: 0,
                o_id: 0,
                tax_factor: 0.0,
                discount: 0.0,
                price: 0.0,
                dist: String::new(),
            }),
            Input::Payment {
                w,
                d,
                c_w,
                c_d,
                c,
                cents,
            } => Txn::Payment(Payment {
                w,
                d,
                c_w,
                c_d,
                c,
                amount: format!("{}.{:02}", cents / 100, cents % 100),
                step: 0,
                c_id: 0,
                w_name: String::new(),
                d_name: String::new(),
                bad_credit: false,
            }),
            Input::OrderStatus { w, d, c } => Txn::OrderStatus(OrderStatus {
                w,
                d,
                c,
                step: 0,
                c_id: 0,
            }),
            Input::Delivery { w, carrier } => Txn::Delivery(Delivery {
                w,
                carrier,
                step: 0,
                d: 1,
                o_id: 0,
                c_id: 0,
            }),
            Input::StockLevel { w, d, threshold } => Txn::StockLevel(StockLevel {
                w,
                d,
                threshold,
                step: 0,
            }),
        }
    }

    /// The next statement, given the reply to the previous one (None at the start).
    pub(crate) fn next(&mut self, last: Option<&Reply>) -> Result<Next, String> {
        match self {
            Txn::NewOrder(t) => t.next(last),
            Txn::Payment(t) => t.next(last),
            Txn::OrderStatus(t) => t.next(last),
            Txn::Delivery(t) => t.next(last),
            Txn::StockLevel(t) => t.next(last),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tpcc::keys::{Customer, Line};

    fn rows(r: &[&[&str]]) -> Reply {
        Reply::Rows {
            count: r.len() as u64,
            rows: r
                .iter()
                .map(|row| row.iter().map(|v| Some(v.to_string())).collect())
                .collect(),
        }
    }

    fn ok(affected: u64) -> Reply {
        Reply::Ok {
            affected,
            last_insert_id: 0,
        }
    }

    /// Feeds `replies` in turn (the first `next` gets None) and returns the statements sent.
    fn drive(t: &mut Txn, replies: &[Reply]) -> Vec<String> {
        let mut sent = Vec::new();
        let mut last: Option<&Reply> = None;
        for r in replies {
            match t.next(last).unwrap() {
                Next::Send(sql) => sent.push(sql),
                done => panic!("ended early: {done:?} after {sent:?}"),
            }
            last = Some(r);
        }
        sent
    }

    #[test]
    fn new_order_with_an_unused_item_rolls_back() {
        let lines = vec![
            Line {
                item: 7,
                supply_w: 1,
                qty: 3,
            },
            Line {
                item: 100_001,
                supply_w: 1,
                qty: 1,
            },
        ];
        let mut t = Txn::start(&Input::NewOrder {
            w: 1,
            d: 4,
            c: 42,
            lines,
        });
        let sent = drive(
            &mut t,
            &[
                ok(0),
                rows(&[&["0.10", "BARBARBAR", "GC", "0.05"]]),
                rows(&[&["3001", "0.05"]]),
                ok(1),
                ok(1),
                ok(1),
                rows(&[&["10.00", "name", "data"]]),
                rows(&[&["12", "data", "DIST04"]]),
                ok(1),
                ok(1),
                rows(&[]),
                ok(0),
            ],
        );
        assert_eq!(sent[0], "BEGIN");
        assert!(
            sent[3].starts_with("UPDATE district1 SET d_next_o_id = 3002"),
            "{}",
            sent[3]
        );
        assert!(
            sent[4].contains("VALUES (3001, 4, 1, 42, NOW(), 2, 1)"),
            "{}",
            sent[4]
        );
        // 12 in stock, 3 ordered: below 3 + 10, so 12 - 3 + 91
        assert!(
            sent[8].starts_with("UPDATE stock1 SET s_quantity = 100,"),
            "{}",
            sent[8]
        );
        // 3 x 10.00 x (1 + 0.05 + 0.05) x (1 - 0.10) = 29.70
        assert!(sent[9].contains(", 29.70, 'DIST04')"), "{}", sent[9]);
        assert!(sent[10].contains("WHERE i_id = 100001"), "{}", sent[10]);
        assert_eq!(sent[11], "ROLLBACK");
        assert_eq!(t.next(Some(&ok(0))), Ok(Next::Done { rolled_back: true }));
    }

    #[test]
    fn payment_by_last_name_charges_the_middle_customer() {
        let mut t = Txn::start(&Input::Payment {
            w: 1,
            d: 2,
            c_w: 3,
            c_d: 5,
            c: Customer::Last("BARABLEPRI".into()),
            cents: 123_456,
        });
        let w = rows(&[&["s1", "s2", "city", "ST", "123411111", "wname"]]);
        let d = rows(&[&["s1", "s2", "city", "ST", "123411111", "dname"]]);
        let customer = rows(&[&[
            "f",
            "OE",
            "BARABLEPRI",
            "",
            "",
            "",
            "",
            "",
            "",
            "BC",
            "50000",
            "0.1",
            "-10",
            "10",
            "",
        ]]);
        let sent = drive(
            &mut t,
            &[
                ok(0),
                ok(1),
                w,
                ok(1),
                d,
                rows(&[&["3"]]),
                rows(&[&["17"], &["29"], &["8"]]),
                customer,
                rows(&[&["old data"]]),
                ok(1),
                ok(1),
                ok(0),
            ],
        );
        assert_eq!(
            sent[1],
            "UPDATE warehouse1 SET w_ytd = w_ytd + 1234.56 WHERE w_id = 1"
        );
        assert!(sent[6].ends_with("AND c_last = 'BARABLEPRI' ORDER BY c_first"));
        // three namesakes: the second (position 3/2 rounded up) is charged
        assert!(
            sent[7].contains("c_w_id = 3 AND c_d_id = 5 AND c_id = 29 FOR UPDATE"),
            "{}",
            sent[7]
        );
        assert!(
            sent[9].contains("c_data = '| 29 5 3 2 1 1234.56 old data'"),
            "{}",
            sent[9]
        );
        assert!(
            sent[10]
                .contains("VALUES (5, 3, 29, 2, 1, NOW(), 1234.56, 'wname         dname     ')"),
            "{}",
            sent[10]
        );
        assert_eq!(sent[11], "COMMIT");
        assert_eq!(t.next(Some(&ok(0))), Ok(Next::Done { rolled_back: false }));
    }

    #[test]
    fn delivery_skips_a_district_without_new_orders() {
        let mut t = Txn::start(&Input::Delivery { w: 2, carrier: 7 });
        let mut replies = vec![ok(0), rows(&[])];
        replies.extend([
            rows(&[&["2101"]]),
            ok(1),
            rows(&[&["55"]]),
            ok(1),
            ok(9),
            rows(&[&["123.45"]]),
            ok(1),
        ]);
        let sent = drive(&mut t, &replies);
        assert!(
            sent[1].contains("no_d_id = 1 AND no_w_id = 2"),
            "{}",
            sent[1]
        );
        assert!(
            sent[2].contains("no_d_id = 2 AND no_w_id = 2"),
            "district 1 is skipped: {}",
            sent[2]
        );
        assert!(sent[5].starts_with("UPDATE orders1 SET o_carrier_id = 7 WHERE o_id = 2101"));
        assert!(
            sent[8].contains("c_balance = c_balance + 123.45"),
            "{}",
            sent[8]
        );
        assert!(
            sent[8].contains("WHERE c_id = 55 AND c_d_id = 2 AND c_w_id = 2"),
            "{}",
            sent[8]
        );
    }
}
