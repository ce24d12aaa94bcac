//! The initial database of TPC-C 4.3.3.1, cut into units (a range of items, a warehouse with
//! its districts, a range of one warehouse's stock, one district's customers, history, orders,
//! new orders and order lines) that `--threads` connections take from a shared list and load
//! with multi-row INSERTs. Strings are random letters and digits of the specified lengths.

use crate::tpcc::keys::{last_name, Keys, DISTRICTS};
use crate::tpcc::Scale;

/// Rows per range of items or stock.
const RANGE: u32 = 10_000;

/// Rows per INSERT at most.
const ROWS_PER_INSERT: usize = 1_000;

/// Bytes per INSERT at most (well under the default max_allowed_packet).
const BYTES_PER_INSERT: usize = 512 * 1024;

/// One piece of the initial load.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Unit {
    /// Items `from..=to`.
    Items(u32, u32),
    /// A warehouse row and its ten districts.
    Warehouse(u32),
    /// Stock `from..=to` of a warehouse.
    Stock(u32, u32, u32),
    /// A district's customers, history, orders, new orders and order lines.
    District(u32, u32),
}

/// Every unit of the load at `scale`, large ones first.
pub(crate) fn units(scale: &Scale) -> Vec<Unit> {
    let ranges =
        |n: u32| (0..n.div_ceil(RANGE)).map(move |k| (k * RANGE + 1, ((k + 1) * RANGE).min(n)));
    let mut out = Vec::new();
    for w in 1..=scale.warehouses {
        out.extend((1..=DISTRICTS).map(|d| Unit::District(w, d)));
        out.extend(ranges(scale.items).map(|(a, b)| Unit::Stock(w, a, b)));
        out.push(Unit::Warehouse(w));
    }
    out.extend(ranges(scale.items).map(|(a, b)| Unit::Items(a, b)));
    out
}

/// Builds multi-row INSERTs of one table and hands each full statement to `exec`.
struct Batch<'a> {
    head: String,
    sql: String,
    rows: usize,
    exec: &'a mut dyn FnMut(&str) -> Result<(), String>,
}

impl<'a> Batch<'a> {
    fn new(head: &str, exec: &'a mut dyn FnMut(&str) -> Result<(), String>) -> Batch<'a> {
        Batch {
            head: format!("{head} VALUES "),
            sql: String::new(),
            rows: 0,
            exec,
        }
    }

    fn row(&mut self, values: &str) -> Result<(), String> {
        if self.rows == 0 {
            self.sql.clear();
            self.sql.push_str(&self.head);
        } else {
            self.sql.push(',');
        }
        self.sql.push('(');
        self.sql.push_str(values);
        self.sql.push(')');
        self.rows += 1;
        if self.rows >= ROWS_PER_INSERT || self.sql.len() >= BYTES_PER_INSERT {
            self.flush()?;
        }
        Ok(())
    }

    fn flush(&mut self) -> Result<(), String> {
        if self.rows > 0 {
            self.rows = 0;
            (self.exec)(&self.sql)?;
        }
        Ok(())
    }
}

/// An address: street 1, street 2, city, state, zip.
fn address(k: &mut Keys) -> String {
    format!(
        "'{}', '{}', '{}', '{}', '{}11111'",
        k.alnum(10, 20),
        k.alnum(10, 20),
        k.alnum(10, 20),
        k.alnum(2, 2).to_uppercase(),
        k.digits(4)
    )
}

/// A data string of 26..=50 characters, 10% of them with "ORIGINAL" inside (4.3.3.1).
fn data(k: &mut Keys) -> String {
    let mut s = k.alnum(26, 50);
    if k.uniform(1, 10) == 1 {
        let at = k.uniform(0, (s.len() - 8) as u32) as usize;
        s.replace_range(at..at + 8, "ORIGINAL");
    }
    s
}

/// Money as a decimal literal from cents.
fn money(cents: u64) -> String {
    format!("{}.{:02}", cents / 100, cents % 100)
}

/// Loads `unit` through `exec`.
pub(crate) fn load(
    unit: Unit,
    scale: &Scale,
    k: &mut Keys,
    exec: &mut dyn FnMut(&str) -> Result<(), String>,
) -> Result<(), String> {
    match unit {
        Unit::Items(from, to) => items(from, to, k, exec),
        Unit::Warehouse(w) => warehouse(w, scale, k, exec),
        Unit::Stock(w, from, to) => stock(w, from, to, k, exec),
        Unit::District(w, d) => district(w, d, scale, k, exec),
    }
}

fn items(
    from: u32,
    to: u32,
    k: &mut Keys,
    exec: &mut dyn FnMut(&str) -> Result<(), String>,
) -> Result<(), String> {
    let mut b = Batch::new(
        "INSERT INTO item1 (i_id, i_im_id, i_name, i_price, i_data)",
        exec,
    );
    for i in from..=to {
        let row = format!(
            "{i}, {}, '{}', {}, '{}'",
            k.uniform(1, 10_000),
            k.alnum(14, 24),
            money(u64::from(k.uniform(100, 10_000))),
            data(k)
        );
        b.row(&row)?;
    }
    b.flush()
}

fn warehouse(
    w: u32,
    scale: &Scale,
    k: &mut Keys,
    exec: &mut dyn FnMut(&str) -> Result<(), String>,
) -> Result<(), String> {
    // W_YTD is the sum of D_YTD, each the sum of its customers' initial 10.00 payments
    let d_ytd = u64::from(scale.customers) * 1000;
    let row = format!(
        "INSERT INTO warehouse1 (w_id, w_name, w_street_1, w_street_2, w_city, w_state, w_zip, \
         w_tax, w_ytd) VALUES ({w}, '{}', {}, 0.{:02}, {})",
        k.alnum(6, 10),
        address(k),
        k.uniform(0, 20),
        money(d_ytd * u64::from(DISTRICTS))
    );
    exec(&row)?;
    let mut b = Batch::new(
        "INSERT INTO district1 (d_id, d_w_id, d_name, d_street_1, d_street_2, d_city, d_state, \
         d_zip, d_tax, d_ytd, d_next_o_id)",
        exec,
    );
    for d in 1..=DISTRICTS {
        let row = format!(
            "{d}, {w}, '{}', {}, 0.{:02}, {}, {}",
            k.alnum(6, 10),
            address(k),
            k.uniform(0, 20),
            money(d_ytd),
            scale.customers + 1
        );
        b.row(&row)?;
    }
    b.flush()
}

fn stock(
    w: u32,
    from: u32,
    to: u32,
    k: &mut Keys,
    exec: &mut dyn FnMut(&str) -> Result<(), String>,
) -> Result<(), String> {
    let mut b = Batch::new(
        "INSERT INTO stock1 (s_i_id, s_w_id, s_quantity, s_dist_01, s_dist_02, s_dist_03, \
         s_dist_04, s_dist_05, s_dist_06, s_dist_07, s_dist_08, s_dist_09, s_dist_10, s_ytd, \
         s_order_cnt, s_remote_cnt, s_data)",
        exec,
    );
    for i in from..=to {
        let mut row = format!("{i}, {w}, {}", k.uniform(10, 100));
        for _ in 0..10 {
            row.push_str(&format!(", '{}'", k.alnum(24, 24)));
        }
        row.push_str(&format!(", 0, 0, 0, '{}'", data(k)));
        b.row(&row)?;
    }
    b.flush()
}

/// The first order id of a district still undelivered (2101 of 3000: the last 900).
pub(crate) fn first_new_order(customers: u32) -> u32 {
    customers - customers * 3 / 10 + 1
}

fn district(
    w: u32,
    d: u32,
    scale: &Scale,
    k: &mut Keys,
    exec: &mut dyn FnMut(&str) -> Result<(), String>,
) -> Result<(), String> {
    let n = scale.customers;
    let mut b = Batch::new(
        "INSERT INTO customer1 (c_id, c_d_id, c_w_id, c_first, c_middle, c_last, c_street_1, \
         c_street_2, c_city, c_state, c_zip, c_phone, c_since, c_credit, c_credit_lim, \
         c_discount, c_balance, c_ytd_payment, c_payment_cnt, c_delivery_cnt, c_data)",
        exec,
    );
    for c in 1..=n {
        // the first 1,000 take every name once, the rest NURand(255) names (4.3.2.3)
        let last = if c <= 1000 {
            last_name(c - 1)
        } else {
            last_name(k.nurand(255, 0, 999))
        };
        let row = format!(
            "{c}, {d}, {w}, '{}', 'OE', '{last}', {}, '{}', NOW(), '{}', 50000, 0.{:02}, \
             -10.00, 10.00, 1, 0, '{}'",
            k.alnum(8, 16),
            address(k),
            k.digits(16),
            if k.uniform(1, 10) == 1 { "BC" } else { "GC" },
            k.uniform(0, 50),
            k.alnum(300, 500)
        );
        b.row(&row)?;
    }
    b.flush()?;
    let mut b = Batch::new(
        "INSERT INTO history1 (h_c_id, h_c_d_id, h_c_w_id, h_d_id, h_w_id, h_date, h_amount, \
         h_data)",
        exec,
    );
    for c in 1..=n {
        let row = format!(
            "{c}, {d}, {w}, {d}, {w}, NOW(), 10.00, '{}'",
            k.alnum(12, 24)
        );
        b.row(&row)?;
    }
    b.flush()?;
    // each customer places one order; o_c_id is a random permutation (4.3.3.1)
    let mut perm: Vec<u32> = (1..=n).collect();
    for i in 0..perm.len() {
        let j = k.uniform(i as u32, n - 1) as usize;
        perm.swap(i, j);
    }
    let first_new = first_new_order(n);
    let lines: Vec<u32> = (0..n).map(|_| k.uniform(5, 15)).collect();
    let mut b = Batch::new(
        "INSERT INTO orders1 (o_id, o_d_id, o_w_id, o_c_id, o_entry_d, o_carrier_id, o_ol_cnt, \
         o_all_local)",
        exec,
    );
    for o in 1..=n {
        let carrier = if o < first_new {
            k.uniform(1, 10).to_string()
        } else {
            "NULL".into()
        };
        let row = format!(
            "{o}, {d}, {w}, {}, NOW(), {carrier}, {}, 1",
            perm[o as usize - 1],
            lines[o as usize - 1]
        );
        b.row(&row)?;
    }
    b.flush()?;
    let mut b = Batch::new("INSERT INTO new_orders1 (no_o_id, no_d_id, no_w_id)", exec);
    for o in first_new..=n {
        b.row(&format!("{o}, {d}, {w}"))?;
    }
    b.flush()?;
    let mut b = Batch::new(
        "INSERT INTO order_line1 (ol_o_id, ol_d_id, ol_w_id, ol_number, ol_i_id, \
         ol_supply_w_id, ol_delivery_d, ol_quantity, ol_amount, ol_dist_info)",
        exec,
    );
    for o in 1..=n {
        let delivered = o < first_new;
        for l in 1..=lines[o as usize - 1] {
            let row = format!(
                "{o}, {d}, {w}, {l}, {}, {w}, {}, 5, {}, '{}'",
                k.uniform(1, scale.items),
                if delivered { "NOW()" } else { "NULL" },
                if delivered {
                    "0.00".to_string()
                } else {
                    money(u64::from(k.uniform(1, 999_999)))
                },
                k.alnum(24, 24)
            );
            b.row(&row)?;
        }
    }
    b.flush()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_load_has_the_specified_cardinalities() {
        let scale = Scale {
            warehouses: 2,
            items: 25_000,
            customers: 3000,
        };
        let us = units(&scale);
        assert_eq!(
            us.iter().filter(|u| matches!(u, Unit::Items(..))).count(),
            3
        );
        assert!(us.contains(&Unit::Items(20_001, 25_000)));
        assert_eq!(
            us.iter()
                .filter(|u| matches!(u, Unit::Stock(2, ..)))
                .count(),
            3
        );
        assert_eq!(
            us.iter()
                .filter(|u| matches!(u, Unit::District(..)))
                .count(),
            20
        );
        let mut rows: std::collections::BTreeMap<String, usize> = Default::default();
        let mut k = Keys::new(scale, 1, 1);
        for u in [
            Unit::District(1, 3),
            Unit::Warehouse(1),
            Unit::Stock(1, 1, 25_000),
        ] {
            load(u, &scale, &mut k, &mut |sql: &str| {
                let table = sql
                    .split_whitespace()
                    .nth(2)
                    .unwrap_or_default()
                    .to_string();
                *rows.entry(table).or_default() += sql.matches("),(").count() + 1;
                assert!(sql.len() <= BYTES_PER_INSERT + 4096);
                Ok(())
            })
            .unwrap();
        }
        assert_eq!(rows["customer1"], 3000);
        assert_eq!(rows["history1"], 3000);
        assert_eq!(rows["orders1"], 3000);
        assert_eq!(rows["new_orders1"], 900);
        assert!((3000 * 5..=3000 * 15).contains(&rows["order_line1"]));
        assert_eq!(rows["district1"], 10);
        assert_eq!(rows["warehouse1"], 1);
        assert_eq!(rows["stock1"], 25_000);
        assert_eq!(first_new_order(3000), 2101);
    }
}
