//! The five TPC-C transactions as statement sequences driven by replies: each `next` takes the
//! reply to the previous statement and gives the next one, until the transaction's COMMIT (or
//! New-Order's ROLLBACK for an unused item) is answered. The statements are sysbench-tpcc's
//! (table set 1), with the specification's column updates where that script leaves them out
//! (Payment's `c_payment_cnt`, New-Order's `s_ytd`/`s_order_cnt`/`s_remote_cnt`), and money
//! added by the server so sums stay exact.

use crate::conn::{Param, Reply};
use crate::tpcc::keys::{Customer, Input, Line, DISTRICTS};

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

/// Moves `step` to `to` and sends `sql` (built before `step` is touched).
macro_rules! send {
    ($step:expr, $to:expr, $sql:expr $(,)?) => {{
        let sql: String = $sql;
        $step = $to;
        Ok(Next::Send(sql))
    }};
}

/// New-Order (TPC-C 2.4.2).
#[derive(Debug)]
pub(crate) struct NewOrder {
    w: u32,
    d: u32,
    c: u32,
    lines: Vec<Line>,
    step: u32,
    line: usize,
    o_id: u64,
    tax_factor: f64,
    discount: f64,
    price: f64,
    dist: String,
}

impl NewOrder {
    fn next(&mut self, last: Option<&Reply>) -> Result<Next, String> {
        let (w, d) = (self.w, self.d);
        match self.step {
            0 => send!(self.step, 1, "BEGIN".into()),
            1 => send!(
                self.step,
                2,
                format!(
                    "SELECT c_discount, c_last, c_credit, w_tax FROM customer1, warehouse1 \
                     WHERE w_id = {w} AND c_w_id = w_id AND c_d_id = {d} AND c_id = {}",
                    self.c
                ),
            ),
            2 => {
                self.discount = num(last, 0, "New-Order customer")?;
                self.tax_factor = 1.0 + num(last, 3, "New-Order warehouse")?;
                send!(
                    self.step,
                    3,
                    format!(
                        "SELECT d_next_o_id, d_tax FROM district1 \
                         WHERE d_w_id = {w} AND d_id = {d} FOR UPDATE"
                    ),
                )
            }
            3 => {
                self.o_id = num(last, 0, "New-Order district")? as u64;
                self.tax_factor += num(last, 1, "New-Order district")?;
                send!(
                    self.step,
                    4,
                    format!(
                        "UPDATE district1 SET d_next_o_id = {} WHERE d_id = {d} AND d_w_id = {w}",
                        self.o_id + 1
                    ),
                )
            }
            4 => {
                let all_local = u32::from(self.lines.iter().all(|l| l.supply_w == w));
                send!(
                    self.step,
                    5,
                    format!(
                        "INSERT INTO orders1 (o_id, o_d_id, o_w_id, o_c_id, o_entry_d, o_ol_cnt, \
                         o_all_local) VALUES ({}, {d}, {w}, {}, NOW(), {}, {all_local})",
                        self.o_id,
                        self.c,
                        self.lines.len()
                    ),
                )
            }
            5 => send!(
                self.step,
                6,
                format!(
                    "INSERT INTO new_orders1 (no_o_id, no_d_id, no_w_id) VALUES ({}, {d}, {w})",
                    self.o_id
                ),
            ),
            // one pass of 6..=9 per order line
            6 => send!(
                self.step,
                7,
                format!(
                    "SELECT i_price, i_name, i_data FROM item1 WHERE i_id = {}",
                    self.lines[self.line].item
                ),
            ),
            7 => {
                let Some(price) = first(last, 0)? else {
                    // the unused item: the order is rolled back (2.4.2.3)
                    return send!(self.step, 11, "ROLLBACK".into());
                };
                self.price = price
                    .parse()
                    .map_err(|_| format!("New-Order item: bad price {price:?}"))?;
                let l = self.lines[self.line];
                send!(
                    self.step,
                    8,
                    format!(
                        "SELECT s_quantity, s_data, s_dist_{d:02} s_dist FROM stock1 \
                         WHERE s_i_id = {} AND s_w_id = {} FOR UPDATE",
                        l.item, l.supply_w
                    ),
                )
            }
            8 => {
                let l = self.lines[self.line];
                let have = num(last, 0, "New-Order stock")? as i64;
                self.dist = first(last, 2)?.unwrap_or_default();
                let qty = i64::from(l.qty);
                let left = if have >= qty + 10 {
                    have - qty
                } else {
                    have - qty + 91
                };
                send!(
                    self.step,
                    9,
                    format!(
                        "UPDATE stock1 SET s_quantity = {left}, s_ytd = s_ytd + {qty}, \
                         s_order_cnt = s_order_cnt + 1, s_remote_cnt = s_remote_cnt + {} \
                         WHERE s_i_id = {} AND s_w_id = {}",
                        u32::from(l.supply_w != w),
                        l.item,
                        l.supply_w
                    ),
                )
            }
            9 => {
                let l = self.lines[self.line];
                let amount =
                    f64::from(l.qty) * self.price * self.tax_factor * (1.0 - self.discount);
                self.step = 10;
                Ok(Next::Send(format!(
                    "INSERT INTO order_line1 (ol_o_id, ol_d_id, ol_w_id, ol_number, ol_i_id, \
                     ol_supply_w_id, ol_quantity, ol_amount, ol_dist_info) \
                     VALUES ({}, {d}, {w}, {}, {}, {}, {}, {amount:.2}, {})",
                    self.o_id,
                    self.line + 1,
                    l.item,
                    l.supply_w,
                    l.qty,
                    lit(&self.dist)
                )))
            }
            10 => {
                self.line += 1;
                if self.line < self.lines.len() {
                    self.step = 6;
                    self.next(None)
                } else {
                    send!(self.step, 12, "COMMIT".into())
                }
            }
            11 => Ok(Next::Done { rolled_back: true }),
            _ => Ok(Next::Done { rolled_back: false }),
        }
    }
}

/// Payment (TPC-C 2.5.2).
#[derive(Debug)]
pub(crate) struct Payment {
    w: u32,
    d: u32,
    c_w: u32,
    c_d: u32,
    c: Customer,
    amount: String,
    step: u32,
    c_id: u32,
    w_name: String,
    d_name: String,
    bad_credit: bool,
}

impl Payment {
    fn customer_where(&self) -> String {
        format!(
            "c_w_id = {} AND c_d_id = {} AND c_id = {}",
            self.c_w, self.c_d, self.c_id
        )
    }

    fn next(&mut self, last: Option<&Reply>) -> Result<Next, String> {
        let (w, d, a) = (self.w, self.d, self.amount.clone());
        match self.step {
            0 => send!(self.step, 1, "BEGIN".into()),
            1 => send!(
                self.step,
                2,
                format!("UPDATE warehouse1 SET w_ytd = w_ytd + {a} WHERE w_id = {w}"),
            ),
            2 => send!(
                self.step,
                3,
                format!(
                    "SELECT w_street_1, w_street_2, w_city, w_state, w_zip, w_name \
                     FROM warehouse1 WHERE w_id = {w}"
                ),
            ),
            3 => {
                self.w_name = need(last, 5, "Payment warehouse")?;
                send!(
                    self.step,
                    4,
                    format!(
                        "UPDATE district1 SET d_ytd = d_ytd + {a} WHERE d_w_id = {w} AND d_id = {d}"
                    ),
                )
            }
            4 => send!(
                self.step,
                5,
                format!(
                    "SELECT d_street_1, d_street_2, d_city, d_state, d_zip, d_name \
                     FROM district1 WHERE d_w_id = {w} AND d_id = {d}"
                ),
            ),
            5 => {
                self.d_name = need(last, 5, "Payment district")?;
                match &self.c {
                    Customer::Id(c) => {
                        self.c_id = *c;
                        self.step = 8;
                        self.next(None)
                    }
                    Customer::Last(name) => send!(
                        self.step,
                        6,
                        format!(
                            "SELECT count(c_id) namecnt FROM customer1 \
                             WHERE c_w_id = {} AND c_d_id = {} AND c_last = {}",
                            self.c_w,
                            self.c_d,
                            lit(name)
                        ),
                    ),
                }
            }
            6 => {
                let name = match &self.c {
                    Customer::Last(n) => lit(n),
                    Customer::Id(_) => return Err("Payment: no last name".into()),
                };
                send!(
                    self.step,
                    7,
                    format!(
                        "SELECT c_id FROM customer1 WHERE c_w_id = {} AND c_d_id = {} \
                         AND c_last = {name} ORDER BY c_first",
                        self.c_w, self.c_d
                    ),
                )
            }
            7 => {
                self.c_id = middle(last, 0, "Payment customer")?;
                self.step = 8;
                self.next(None)
            }
            8 => send!(
                self.step,
                9,
                format!(
                    "SELECT c_first, c_middle, c_last, c_street_1, c_street_2, c_city, c_state, \
                     c_zip, c_phone, c_credit, c_credit_lim, c_discount, c_balance, \
                     c_ytd_payment, c_since FROM customer1 WHERE {} FOR UPDATE",
                    self.customer_where()
                ),
            ),
            9 => {
                self.bad_credit = need(last, 9, "Payment customer")? == "BC";
                if self.bad_credit {
                    send!(
                        self.step,
                        10,
                        format!(
                            "SELECT c_data FROM customer1 WHERE {}",
                            self.customer_where()
                        ),
                    )
                } else {
                    send!(
                        self.step,
                        11,
                        format!(
                            "UPDATE customer1 SET c_balance = c_balance - {a}, \
                             c_ytd_payment = c_ytd_payment + {a}, \
                             c_payment_cnt = c_payment_cnt + 1 WHERE {}",
                            self.customer_where()
                        ),
                    )
                }
            }
            10 => {
                let old = need(last, 0, "Payment customer data")?;
                let mut data = format!(
                    "| {} {} {} {d} {w} {a} {old}",
                    self.c_id, self.c_d, self.c_w
                );
                data.truncate(500);
                send!(
                    self.step,
                    11,
                    format!(
                        "UPDATE customer1 SET c_balance = c_balance - {a}, \
                         c_ytd_payment = c_ytd_payment + {a}, \
                         c_payment_cnt = c_payment_cnt + 1, c_data = {} WHERE {}",
                        lit(&data),
                        self.customer_where()
                    ),
                )
            }
            11 => {
                let mut h_data = format!("{:<10}    {:<10}", self.w_name, self.d_name);
                h_data.truncate(24);
                send!(
                    self.step,
                    12,
                    format!(
                        "INSERT INTO history1 (h_c_d_id, h_c_w_id, h_c_id, h_d_id, h_w_id, \
                         h_date, h_amount, h_data) VALUES ({}, {}, {}, {d}, {w}, NOW(), {a}, {})",
                        self.c_d,
                        self.c_w,
                        self.c_id,
                        lit(&h_data)
                    ),
                )
            }
            12 => send!(self.step, 13, "COMMIT".into()),
            _ => Ok(Next::Done { rolled_back: false }),
        }
    }
}

/// Order-Status (TPC-C 2.6.2).
#[derive(Debug)]
pub(crate) struct OrderStatus {
    w: u32,
    d: u32,
    c: Customer,
    step: u32,
    c_id: u32,
}

impl OrderStatus {
    fn next(&mut self, last: Option<&Reply>) -> Result<Next, String> {
        let (w, d) = (self.w, self.d);
        match self.step {
            0 => send!(self.step, 1, "BEGIN".into()),
            1 => match self.c.clone() {
                Customer::Last(name) => send!(
                    self.step,
                    2,
                    format!(
                        "SELECT count(c_id) namecnt FROM customer1 \
                         WHERE c_w_id = {w} AND c_d_id = {d} AND c_last = {}",
                        lit(&name)
                    ),
                ),
                Customer::Id(c) => {
                    self.c_id = c;
                    send!(
                        self.step,
                        4,
                        format!(
                            "SELECT c_balance, c_first, c_middle, c_last FROM customer1 \
                             WHERE c_w_id = {w} AND c_d_id = {d} AND c_id = {c}"
                        ),
                    )
                }
            },
            2 => {
                let name = match &self.c {
                    Customer::Last(n) => lit(n),
                    Customer::Id(_) => return Err("Order-Status: no last name".into()),
                };
                send!(
                    self.step,
                    3,
                    format!(
                        "SELECT c_balance, c_first, c_middle, c_id FROM customer1 \
                         WHERE c_w_id = {w} AND c_d_id = {d} AND c_last = {name} ORDER BY c_first"
                    ),
                )
            }
            3 => {
                self.c_id = middle(last, 3, "Order-Status customer")?;
                self.step = 4;
                self.next(None)
            }
            4 => send!(
                self.step,
                5,
                format!(
                    "SELECT o_id, o_carrier_id, o_entry_d FROM orders1 \
                     WHERE o_w_id = {w} AND o_d_id = {d} AND o_c_id = {} ORDER BY o_id DESC",
                    self.c_id
                ),
            ),
            5 => match first(last, 0)? {
                Some(o_id) => send!(
                    self.step,
                    6,
                    format!(
                        "SELECT ol_i_id, ol_supply_w_id, ol_quantity, ol_amount, ol_delivery_d \
                         FROM order_line1 WHERE ol_w_id = {w} AND ol_d_id = {d} AND ol_o_id = {}",
                        o_id.parse::<u64>()
                            .map_err(|_| format!("Order-Status: bad order id {o_id:?}"))?
                    ),
                ),
                None => send!(self.step, 7, "COMMIT".into()),
            },
            6 => send!(self.step, 7, "COMMIT".into()),
            _ => Ok(Next::Done { rolled_back: false }),
        }
    }
}

/// Delivery (TPC-C 2.7.4): the oldest undelivered order of each district, in one transaction.
#[derive(Debug)]
pub(crate) struct Delivery {
    w: u32,
    carrier: u32,
    step: u32,
    d: u32,
    o_id: u64,
    c_id: u64,
}

impl Delivery {
    fn order_where(&self) -> String {
        format!(
            "o_id = {} AND o_d_id = {} AND o_w_id = {}",
            self.o_id, self.d, self.w
        )
    }

    fn line_where(&self) -> String {
        format!(
            "ol_o_id = {} AND ol_d_id = {} AND ol_w_id = {}",
            self.o_id, self.d, self.w
        )
    }

    /// On to the next district, or COMMIT after the last.
    fn next_district(&mut self) -> Result<Next, String> {
        self.d += 1;
        if self.d > DISTRICTS {
            return send!(self.step, 9, "COMMIT".into());
        }
        self.step = 1;
        self.next(None)
    }

    fn next(&mut self, last: Option<&Reply>) -> Result<Next, String> {
        let (w, d) = (self.w, self.d);
        match self.step {
            0 => send!(self.step, 1, "BEGIN".into()),
            1 => send!(
                self.step,
                2,
                format!(
                    "SELECT no_o_id FROM new_orders1 WHERE no_d_id = {d} AND no_w_id = {w} \
                     ORDER BY no_o_id ASC LIMIT 1 FOR UPDATE"
                ),
            ),
            2 => match first(last, 0)? {
                // no undelivered order in this district: skipped (2.7.4.2)
                None => self.next_district(),
                Some(o) => {
                    self.o_id = o
                        .parse()
                        .map_err(|_| format!("Delivery: bad order id {o:?}"))?;
                    send!(
                        self.step,
                        3,
                        format!(
                            "DELETE FROM new_orders1 WHERE no_o_id = {} AND no_d_id = {d} \
                             AND no_w_id = {w}",
                            self.o_id
                        ),
                    )
                }
            },
            3 => {
                if matches!(last, Some(Reply::Ok { affected: 0, .. })) {
                    // another delivery took it between our read and delete
                    return self.next_district();
                }
                send!(
                    self.step,
                    4,
                    format!("SELECT o_c_id FROM orders1 WHERE {}", self.order_where()),
                )
            }
            4 => {
                self.c_id = num(last, 0, "Delivery order")? as u64;
                send!(
                    self.step,
                    5,
                    format!(
                        "UPDATE orders1 SET o_carrier_id = {} WHERE {}",
                        self.carrier,
                        self.order_where()
                    ),
                )
            }
            5 => send!(
                self.step,
                6,
                format!(
                    "UPDATE order_line1 SET ol_delivery_d = NOW() WHERE {}",
                    self.line_where()
                ),
            ),
            6 => send!(
                self.step,
                7,
                format!(
                    "SELECT SUM(ol_amount) sm FROM order_line1 WHERE {}",
                    self.line_where()
                ),
            ),
            7 => {
                let sum = need(last, 0, "Delivery order lines")?;
                let sum = if sum.is_empty() { "0".into() } else { sum };
                send!(
                    self.step,
                    8,
                    format!(
                        "UPDATE customer1 SET c_balance = c_balance + {sum}, \
                         c_delivery_cnt = c_delivery_cnt + 1 \
                         WHERE c_id = {} AND c_d_id = {d} AND c_w_id = {w}",
                        self.c_id
                    ),
                )
            }
            8 => self.next_district(),
            _ => Ok(Next::Done { rolled_back: false }),
        }
    }
}

/// Stock-Level (TPC-C 2.8.2), as sysbench-tpcc's one join.
#[derive(Debug)]
pub(crate) struct StockLevel {
    w: u32,
    d: u32,
    threshold: u32,
    step: u32,
}

impl StockLevel {
    fn next(&mut self, last: Option<&Reply>) -> Result<Next, String> {
        let (w, d) = (self.w, self.d);
        match self.step {
            0 => send!(self.step, 1, "BEGIN".into()),
            1 => send!(
                self.step,
                2,
                format!("SELECT d_next_o_id FROM district1 WHERE d_id = {d} AND d_w_id = {w}"),
            ),
            2 => {
                let next = num(last, 0, "Stock-Level district")? as u64;
                send!(
                    self.step,
                    3,
                    format!(
                        "SELECT COUNT(DISTINCT (s_i_id)) FROM order_line1, stock1 \
                         WHERE ol_w_id = {w} AND ol_d_id = {d} AND ol_o_id < {next} \
                         AND ol_o_id >= {} AND s_w_id = {w} AND s_i_id = ol_i_id \
                         AND s_quantity < {}",
                        next.saturating_sub(20),
                        self.threshold
                    ),
                )
            }
            3 => send!(self.step, 4, "COMMIT".into()),
            _ => Ok(Next::Done { rolled_back: false }),
        }
    }
}
