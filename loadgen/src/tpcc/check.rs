//! The consistency checks of sysbench-tpcc's `check` command, per warehouse: TPC-C's
//! consistency conditions 1-5 and 7-10 and 12 (3.3.2), each one query whose rows must show
//! no difference. Run them with no load on the database. Conditions 10 and 12 (each
//! customer's balance against its delivered order lines and its payments) read three grouped
//! sums and compare them here, in cents, where sysbench-tpcc uses a correlated subquery per
//! customer (which tpbed does not run, and which a join of derived tables turns into a
//! customers x orders loop); a customer without delivered lines is not compared, as there.

use std::collections::BTreeMap;

use crate::blocking::Blocking;

/// What a check's rows must show.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Expect {
    /// At least one row, and column `.0` of every row is zero.
    Zero(usize),
    /// At least one row, and these columns are equal in every row.
    Equal(&'static [usize]),
}

/// One check: TPC-C's condition number, what it states, its query (`{w}` is the warehouse).
struct Check {
    number: u8,
    states: &'static str,
    sql: &'static str,
    expect: Expect,
}

const CHECKS: &[Check] = &[
    Check {
        number: 1,
        states: "W_YTD = sum(D_YTD)",
        sql: "SELECT d_w_id, sum(d_ytd) - max(w_ytd) diff FROM district1, warehouse1 \
              WHERE d_w_id = w_id AND w_id = {w} GROUP BY d_w_id",
        expect: Expect::Zero(1),
    },
    Check {
        number: 2,
        states: "D_NEXT_O_ID - 1 = max(O_ID) = max(NO_O_ID)",
        sql: "SELECT dis.d_id, d_next_o_id - 1, mo, mno FROM district1 dis, \
              (SELECT o_d_id, max(o_id) mo FROM orders1 WHERE o_w_id = {w} GROUP BY o_d_id) q, \
              (SELECT no_d_id, max(no_o_id) mno FROM new_orders1 WHERE no_w_id = {w} \
              GROUP BY no_d_id) no \
              WHERE d_w_id = {w} AND q.o_d_id = dis.d_id AND no.no_d_id = dis.d_id",
        expect: Expect::Equal(&[1, 2, 3]),
    },
    Check {
        number: 3,
        states: "max(NO_O_ID) - min(NO_O_ID) + 1 = rows in NEW-ORDER",
        sql: "SELECT no_d_id, max(no_o_id) - min(no_o_id) + 1, count(*) FROM new_orders1 \
              WHERE no_w_id = {w} GROUP BY no_d_id",
        expect: Expect::Equal(&[1, 2]),
    },
    Check {
        number: 4,
        states: "sum(O_OL_CNT) = rows in ORDER-LINE",
        sql: "SELECT count(*) FROM (SELECT o_d_id, SUM(o_ol_cnt) sm1, MAX(cn) AS cn \
              FROM orders1, (SELECT ol_d_id, COUNT(*) cn FROM order_line1 WHERE ol_w_id = {w} \
              GROUP BY ol_d_id) ol WHERE o_w_id = {w} AND ol_d_id = o_d_id GROUP BY o_d_id) t1 \
              WHERE sm1 <> cn",
        expect: Expect::Zero(0),
    },
    Check {
        number: 5,
        states: "O_CARRIER_ID is NULL exactly for the orders in NEW-ORDER",
        sql: "SELECT count(*) FROM orders1 LEFT JOIN new_orders1 \
              ON (no_w_id = o_w_id AND o_d_id = no_d_id AND o_id = no_o_id) \
              WHERE o_w_id = {w} AND ((o_carrier_id IS NULL AND no_o_id IS NULL) \
              OR (o_carrier_id IS NOT NULL AND no_o_id IS NOT NULL))",
        expect: Expect::Zero(0),
    },
    Check {
        number: 7,
        states: "OL_DELIVERY_D is NULL exactly when O_CARRIER_ID is",
        sql: "SELECT count(*) FROM orders1, order_line1 WHERE o_id = ol_o_id \
              AND o_d_id = ol_d_id AND ol_w_id = o_w_id AND o_w_id = {w} \
              AND ((ol_delivery_d IS NULL AND o_carrier_id IS NOT NULL) \
              OR (o_carrier_id IS NULL AND ol_delivery_d IS NOT NULL))",
        expect: Expect::Zero(0),
    },
    Check {
        number: 8,
        states: "W_YTD = sum(H_AMOUNT)",
        sql: "SELECT count(*) cn FROM (SELECT w_id, w_ytd, SUM(h_amount) sm \
              FROM history1, warehouse1 WHERE h_w_id = w_id AND w_id = {w} GROUP BY w_id) t1 \
              WHERE w_ytd <> sm",
        expect: Expect::Zero(0),
    },
    Check {
        number: 9,
        states: "D_YTD = sum(H_AMOUNT) per district",
        sql: "SELECT COUNT(*) FROM (SELECT d_id, d_w_id, sum(d_ytd) s1 FROM district1 \
              GROUP BY d_id, d_w_id) d, (SELECT h_d_id, h_w_id, sum(h_amount) s2 FROM history1 \
              WHERE h_w_id = {w} GROUP BY h_d_id, h_w_id) h \
              WHERE h_d_id = d_id AND d_w_id = h_w_id AND d_w_id = {w} AND s1 <> s2",
        expect: Expect::Zero(0),
    },
];

/// The outcome of one check on one warehouse.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Outcome {
    /// TPC-C's condition number.
    pub(crate) number: u8,
    /// The warehouse.
    pub(crate) warehouse: u32,
    /// What the condition states.
    pub(crate) states: &'static str,
    /// None when it holds, else what differs.
    pub(crate) failure: Option<String>,
}

impl Outcome {
    /// sysbench-tpcc's line: `Check N, warehouse: W PASSED` (or `FAILED!!!` with why).
    pub(crate) fn line(&self) -> String {
        match &self.failure {
            None => format!(
                "Check {}, warehouse: {} PASSED ({})",
                self.number, self.warehouse, self.states
            ),
            Some(why) => format!(
                "Check {}, warehouse: {} FAILED!!! ({}: {why})",
                self.number, self.warehouse, self.states
            ),
        }
    }
}

/// Whether `rows` show what `expect` asks; `Err` says what differs.
fn judge(rows: &[Vec<Option<String>>], expect: Expect) -> Result<(), String> {
    if rows.is_empty() {
        return Err("the query returned no row".into());
    }
    let num = |r: &Vec<Option<String>>, i: usize| -> Result<f64, String> {
        let v = r.get(i).cloned().flatten().unwrap_or_default();
        v.trim()
            .parse::<f64>()
            .map_err(|_| format!("{v:?} is not a number"))
    };
    for r in rows {
        match expect {
            Expect::Zero(i) => {
                if num(r, i)? != 0.0 {
                    return Err(format!("row {r:?}: column {} is not 0", i + 1));
                }
            }
            Expect::Equal(cols) => {
                let first = num(r, cols[0])?;
                for c in &cols[1..] {
                    if num(r, *c)? != first {
                        return Err(format!("row {r:?}: the values differ"));
                    }
                }
            }
        }
    }
    Ok(())
}

/// A decimal as cents (`-10.5` is -1050); at most two decimals.
fn cents(v: &str) -> Result<i64, String> {
    let bad = || format!("{v:?} is not an amount");
    let t = v.trim();
    let (neg, t) = match t.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, t),
    };
    let (int, frac) = t.split_once('.').unwrap_or((t, ""));
    let frac = frac.trim_end_matches('0');
    if frac.len() > 2 || int.is_empty() && frac.is_empty() {
        return Err(bad());
    }
    let int: i64 = if int.is_empty() {
        0
    } else {
        int.parse().map_err(|_| bad())?
    };
    let frac: i64 = format!("{frac:0<2}").parse().map_err(|_| bad())?;
    let c = int * 100 + frac;
    Ok(if neg { -c } else { c })
}

/// `(district, customer) -> cents` from rows of (district, customer, amount); NULL sums skip.
fn sums(rows: &[Vec<Option<String>>]) -> Result<BTreeMap<(String, String), i64>, String> {
    let mut out = BTreeMap::new();
    for r in rows {
        if let [Some(d), Some(c), Some(v)] = r.as_slice() {
            out.insert((d.clone(), c.clone()), cents(v)?);
        }
    }
    Ok(out)
}

/// Conditions 10 and 12 for warehouse `w`: the first customer that breaks each, if any.
fn balances(c: &mut Blocking, w: u32) -> Result<[Option<String>; 2], String> {
    let customers = c.rows(&format!(
        "SELECT c_d_id, c_id, c_balance, c_ytd_payment FROM customer1 WHERE c_w_id = {w}"
    ))?;
    let delivered = sums(&c.rows(&format!(
        "SELECT o_d_id, o_c_id, sum(ol_amount) FROM orders1, order_line1 \
         WHERE ol_w_id = o_w_id AND ol_d_id = o_d_id AND ol_o_id = o_id \
         AND ol_delivery_d IS NOT NULL AND o_w_id = {w} GROUP BY o_d_id, o_c_id"
    ))?)?;
    let paid = sums(&c.rows(&format!(
        "SELECT h_c_d_id, h_c_id, sum(h_amount) FROM history1 WHERE h_c_w_id = {w} \
         GROUP BY h_c_d_id, h_c_id"
    ))?)?;
    let mut out = [None, None];
    for r in &customers {
        let [Some(d), Some(id), Some(balance), Some(ytd)] = r.as_slice() else {
            continue;
        };
        let key = (d.clone(), id.clone());
        let Some(lines) = delivered.get(&key) else {
            continue;
        };
        let (balance, ytd) = (cents(balance)?, cents(ytd)?);
        let payments = paid.get(&key).copied();
        if out[0].is_none() && payments.is_some_and(|p| balance != lines - p) {
            out[0] = Some(format!(
                "customer {id} of district {d}: balance {balance} cents, delivered {lines}, paid {}",
                payments.unwrap_or(0)
            ));
        }
        if out[1].is_none() && balance + ytd != *lines {
            out[1] = Some(format!(
                "customer {id} of district {d}: balance {balance} + year-to-date {ytd} cents, delivered {lines}"
            ));
        }
    }
    Ok(out)
}

/// Runs every check on warehouse `w` over `c`.
pub(crate) fn check_warehouse(c: &mut Blocking, w: u32) -> Result<Vec<Outcome>, String> {
    let mut out = CHECKS
        .iter()
        .map(|ch| {
            let rows = c.rows(&ch.sql.replace("{w}", &w.to_string()))?;
            Ok(Outcome {
                number: ch.number,
                warehouse: w,
                states: ch.states,
                failure: judge(&rows, ch.expect).err(),
            })
        })
        .collect::<Result<Vec<_>, String>>()?;
    let [ten, twelve] = balances(c, w)?;
    out.push(Outcome {
        number: 10,
        warehouse: w,
        states: "C_BALANCE = sum(delivered OL_AMOUNT) - sum(H_AMOUNT)",
        failure: ten,
    });
    out.push(Outcome {
        number: 12,
        warehouse: w,
        states: "C_BALANCE + C_YTD_PAYMENT = sum(delivered OL_AMOUNT)",
        failure: twelve,
    });
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rows(r: &[&[&str]]) -> Vec<Vec<Option<String>>> {
        r.iter()
            .map(|row| row.iter().map(|v| Some(v.to_string())).collect())
            .collect()
    }

    #[test]
    fn amounts_are_exact_cents() {
        assert_eq!(cents("-10.00"), Ok(-1000));
        assert_eq!(cents("1234.5"), Ok(123_450));
        assert_eq!(cents("0.07"), Ok(7));
        assert_eq!(cents("42"), Ok(4200));
        assert_eq!(cents("3.1400"), Ok(314));
        assert!(cents("1.234").is_err() && cents("x").is_err() && cents("").is_err());
        let s = sums(&rows(&[&["1", "7", "12.30"], &["2", "7", "-1.00"]])).unwrap();
        assert_eq!(s[&("2".to_string(), "7".to_string())], -100);
    }

    #[test]
    fn checks_judge_their_rows() {
        assert!(judge(&rows(&[&["1", "0.00"]]), Expect::Zero(1)).is_ok());
        assert!(judge(&rows(&[&["1", "0.01"]]), Expect::Zero(1)).is_err());
        assert!(judge(&rows(&[]), Expect::Zero(0)).is_err(), "no row fails");
        let eq = Expect::Equal(&[1, 2, 3]);
        assert!(judge(&rows(&[&["1", "3000", "3000", "3000"]]), eq).is_ok());
        assert!(judge(&rows(&[&["1", "3000", "3000", "2999"]]), eq).is_err());
        assert!(judge(&rows(&[&["1", "x"]]), Expect::Zero(1)).is_err());
        let numbers: Vec<u8> = CHECKS.iter().map(|c| c.number).collect();
        assert_eq!(numbers, [1, 2, 3, 4, 5, 7, 8, 9]);
        assert!(CHECKS.iter().all(|c| c.sql.contains("{w}")));
    }
}
