//! Stock-Level (TPC-C 2.8.2): count the distinct items of the district's last 20 orders whose
//! stock is below the threshold; read only.

use crate::conn::Reply;

use super::{num, Next};

/// Stock-Level (TPC-C 2.8.2), as sysbench-tpcc's one join.
#[derive(Debug)]
pub(crate) struct StockLevel {
    pub(super) w: u32,
    pub(super) d: u32,
    pub(super) threshold: u32,
    pub(super) step: u32,
}

impl StockLevel {
    pub(super) fn next(&mut self, last: Option<&Reply>) -> Result<Next, String> {
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
