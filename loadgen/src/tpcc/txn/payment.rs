//! Payment (TPC-C 2.5.2): add the amount to the warehouse's and district's year-to-date,
//! find the customer (by id, or the middle one of a last name), charge it (a bad-credit
//! customer's data gets the payment prepended) and insert the history row.

use crate::conn::Reply;
use crate::tpcc::keys::Customer;

use super::{lit, middle, need, Next};

/// Payment (TPC-C 2.5.2).
#[derive(Debug)]
pub(crate) struct Payment {
    pub(super) w: u32,
    pub(super) d: u32,
    pub(super) c_w: u32,
    pub(super) c_d: u32,
    pub(super) c: Customer,
    pub(super) amount: String,
    pub(super) step: u32,
    pub(super) c_id: u32,
    pub(super) w_name: String,
    pub(super) d_name: String,
    pub(super) bad_credit: bool,
}

impl Payment {
    fn customer_where(&self) -> String {
        format!(
            "c_w_id = {} AND c_d_id = {} AND c_id = {}",
            self.c_w, self.c_d, self.c_id
        )
    }

    pub(super) fn next(&mut self, last: Option<&Reply>) -> Result<Next, String> {
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
