//! Order-Status (TPC-C 2.6.2): find the customer (by id or last name), its last order and
//! that order's lines; read only.

use crate::conn::Reply;
use crate::tpcc::keys::Customer;

use super::{first, lit, middle, Next};

/// Order-Status (TPC-C 2.6.2).
#[derive(Debug)]
pub(crate) struct OrderStatus {
    pub(super) w: u32,
    pub(super) d: u32,
    pub(super) c: Customer,
    pub(super) step: u32,
    pub(super) c_id: u32,
}

impl OrderStatus {
    pub(super) fn next(&mut self, last: Option<&Reply>) -> Result<Next, String> {
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
