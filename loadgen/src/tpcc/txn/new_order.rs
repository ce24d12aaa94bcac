//! New-Order (TPC-C 2.4.2): read the customer, warehouse and district, take the district's
//! next order id, insert the order, then per line read the item (none: roll back), lock and
//! update its stock and insert the order line.

use crate::conn::Reply;
use crate::tpcc::keys::Line;

use super::{first, lit, num, Next};

/// New-Order (TPC-C 2.4.2).
#[derive(Debug)]
pub(crate) struct NewOrder {
    pub(super) w: u32,
    pub(super) d: u32,
    pub(super) c: u32,
    pub(super) lines: Vec<Line>,
    pub(super) step: u32,
    pub(super) line: usize,
    pub(super) o_id: u64,
    pub(super) tax_factor: f64,
    pub(super) discount: f64,
    pub(super) price: f64,
    pub(super) dist: String,
}

impl NewOrder {
    pub(super) fn next(&mut self, last: Option<&Reply>) -> Result<Next, String> {
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
