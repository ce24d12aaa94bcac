//! Delivery (TPC-C 2.7.4): for each district of a warehouse, deliver its oldest new order:
//! delete it from NEW_ORDER, set the carrier, date the lines and credit the customer.

use crate::conn::Reply;
use crate::tpcc::keys::DISTRICTS;

use super::{first, need, num, Next};

/// Delivery (TPC-C 2.7.4): the oldest undelivered order of each district, in one transaction.
#[derive(Debug)]
pub(crate) struct Delivery {
    pub(super) w: u32,
    pub(super) carrier: u32,
    pub(super) step: u32,
    pub(super) d: u32,
    pub(super) o_id: u64,
    pub(super) c_id: u64,
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

    pub(super) fn next(&mut self, last: Option<&Reply>) -> Result<Next, String> {
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
