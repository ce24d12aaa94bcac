//! TPC-C's keying: NURand, customer last names, the transaction mix and each transaction's
//! input (TPC-C 2.1.6, 4.3.2.3, 5.2.3 and the input clauses of 2.4-2.8). Pure functions of a
//! seeded generator, so tests can check the proportions.

use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};

use crate::tpcc::Scale;

/// Districts per warehouse.
pub(crate) const DISTRICTS: u32 = 10;

/// The syllables of a customer last name (TPC-C 4.3.2.3).
const SYLLABLES: [&str; 10] = [
    "BAR", "OUGHT", "ABLE", "PRI", "PRES", "ESE", "ANTI", "CALLY", "ATION", "EING",
];

/// The last name of number `n` (0..=999): one syllable per decimal digit.
pub(crate) fn last_name(n: u32) -> String {
    let n = n % 1000;
    [n / 100, n / 10 % 10, n % 10]
        .iter()
        .map(|d| SYLLABLES[*d as usize])
        .collect()
}

/// The five transactions, in the order of [`TYPES`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    /// New-Order (2.4).
    NewOrder = 0,
    /// Payment (2.5).
    Payment,
    /// Order-Status (2.6).
    OrderStatus,
    /// Delivery (2.7).
    Delivery,
    /// Stock-Level (2.8).
    StockLevel,
}

/// The transaction types' metric names, indexed by [`Kind`].
pub(crate) const TYPES: &[&str] = &[
    "new_order",
    "payment",
    "order_status",
    "delivery",
    "stock_level",
];

/// How a customer is selected.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Customer {
    /// By id.
    Id(u32),
    /// By last name: the middle one (rounded up) of those with it, ordered by first name.
    Last(String),
}

/// One order line of a New-Order.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Line {
    /// Item id (`items + 1`, an unused one, for the rolled-back 1%).
    pub(crate) item: u32,
    /// Supplying warehouse.
    pub(crate) supply_w: u32,
    /// Quantity, 1..=10.
    pub(crate) qty: u32,
}

/// A transaction's input.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Input {
    /// New-Order: home warehouse and district, customer id, the lines.
    NewOrder {
        /// Warehouse.
        w: u32,
        /// District.
        d: u32,
        /// Customer id.
        c: u32,
        /// The 5..=15 order lines.
        lines: Vec<Line>,
    },
    /// Payment: the paying warehouse and district, the customer's, and the amount in cents.
    Payment {
        /// Warehouse.
        w: u32,
        /// District.
        d: u32,
        /// Customer's warehouse (another one in 15% when there are several).
        c_w: u32,
        /// Customer's district.
        c_d: u32,
        /// The customer.
        c: Customer,
        /// Amount in cents, 100..=500000.
        cents: u32,
    },
    /// Order-Status of a customer.
    OrderStatus {
        /// Warehouse.
        w: u32,
        /// District.
        d: u32,
        /// The customer.
        c: Customer,
    },
    /// Delivery of the oldest new order of each district of a warehouse.
    Delivery {
        /// Warehouse.
        w: u32,
        /// Carrier id, 1..=10.
        carrier: u32,
    },
    /// Stock-Level of a district's last 20 orders.
    StockLevel {
        /// Warehouse.
        w: u32,
        /// District.
        d: u32,
        /// Threshold, 10..=20.
        threshold: u32,
    },
}

impl Input {
    /// Its type.
    pub(crate) fn kind(&self) -> Kind {
        match self {
            Input::NewOrder { .. } => Kind::NewOrder,
            Input::Payment { .. } => Kind::Payment,
            Input::OrderStatus { .. } => Kind::OrderStatus,
            Input::Delivery { .. } => Kind::Delivery,
            Input::StockLevel { .. } => Kind::StockLevel,
        }
    }
}

/// A generator of keys and inputs for one connection (or one loader).
#[derive(Debug)]
pub(crate) struct Keys {
    rng: SmallRng,
    scale: Scale,
    /// NURand's run-time constants C for A = 255, 1023 and 8191.
    c: [u32; 3],
}

impl Keys {
    /// A generator for `scale`; `c_seed` picks NURand's constants (the same for every
    /// connection of a run), `seed` the connection's stream.
    pub(crate) fn new(scale: Scale, c_seed: u64, seed: u64) -> Keys {
        let mut c_rng = SmallRng::seed_from_u64(c_seed);
        let c = [
            c_rng.random_range(0..=255),
            c_rng.random_range(0..=1023),
            c_rng.random_range(0..=8191),
        ];
        Keys {
            rng: SmallRng::seed_from_u64(seed),
            scale,
            c,
        }
    }

    /// Uniform in `lo..=hi`.
    pub(crate) fn uniform(&mut self, lo: u32, hi: u32) -> u32 {
        self.rng.random_range(lo..=hi.max(lo))
    }

    /// NURand(A, x, y) of TPC-C 2.1.6, for A in {255, 1023, 8191}.
    pub(crate) fn nurand(&mut self, a: u32, x: u32, y: u32) -> u32 {
        let c = match a {
            255 => self.c[0],
            1023 => self.c[1],
            _ => self.c[2],
        };
        ((self.uniform(0, a) | self.uniform(x, y)) + c) % (y - x + 1) + x
    }

    /// A string of `lo..=hi` random letters and digits.
    pub(crate) fn alnum(&mut self, lo: usize, hi: usize) -> String {
        const CHARS: &[u8] = b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
        let n = self.rng.random_range(lo..=hi.max(lo));
        (0..n)
            .map(|_| CHARS[self.rng.random_range(0..CHARS.len())] as char)
            .collect()
    }

    /// A string of `n` random digits.
    pub(crate) fn digits(&mut self, n: usize) -> String {
        (0..n)
            .map(|_| char::from(b'0' + self.rng.random_range(0..10u8)))
            .collect()
    }

    /// A customer id by NURand(1023).
    fn customer_id(&mut self) -> u32 {
        self.nurand(1023, 1, self.scale.customers)
    }

    /// A last name by NURand(255) over the names the load gave.
    fn customer_last(&mut self) -> String {
        let names = self.scale.customers.min(1000);
        last_name(self.nurand(255, 0, names - 1))
    }

    /// 60% by last name, 40% by id (2.5.1.2, 2.6.1.2).
    fn customer(&mut self) -> Customer {
        if self.uniform(1, 100) <= 60 {
            Customer::Last(self.customer_last())
        } else {
            Customer::Id(self.customer_id())
        }
    }

    /// A warehouse other than `home` (uniform), or `home` when it is the only one.
    fn other_warehouse(&mut self, home: u32) -> u32 {
        let n = self.scale.warehouses;
        if n <= 1 {
            return home;
        }
        let x = self.uniform(1, n - 1);
        if x >= home {
            x + 1
        } else {
            x
        }
    }

    /// The next transaction's input, by the mix of 5.2.3: 45% New-Order, 43% Payment, 4% each
    /// Order-Status, Delivery and Stock-Level.
    pub(crate) fn next_input(&mut self) -> Input {
        let w = self.uniform(1, self.scale.warehouses);
        let d = self.uniform(1, DISTRICTS);
        match self.uniform(1, 100) {
            1..=45 => self.new_order(w, d),
            46..=88 => {
                let (c_w, c_d) = if self.uniform(1, 100) <= 85 || self.scale.warehouses == 1 {
                    (w, d)
                } else {
                    (self.other_warehouse(w), self.uniform(1, DISTRICTS))
                };
                Input::Payment {
                    w,
                    d,
                    c_w,
                    c_d,
                    c: self.customer(),
                    cents: self.uniform(100, 500_000),
                }
            }
            89..=92 => Input::OrderStatus {
                w,
                d,
                c: self.customer(),
            },
            93..=96 => Input::Delivery {
                w,
                carrier: self.uniform(1, 10),
            },
            _ => Input::StockLevel {
                w,
                d,
                threshold: self.uniform(10, 20),
            },
        }
    }

    /// New-Order's input (2.4.1): 5..=15 lines of NURand(8191) items, 1% supplied by another
    /// warehouse, and in 1% of orders an unused item as the last line (the order rolls back).
    fn new_order(&mut self, w: u32, d: u32) -> Input {
        let c = self.customer_id();
        let n = self.uniform(5, 15);
        let rollback = self.uniform(1, 100) == 1;
        let lines = (0..n)
            .map(|i| {
                let item = if rollback && i == n - 1 {
                    self.scale.items + 1
                } else {
                    self.nurand(8191, 1, self.scale.items)
                };
                let supply_w = if self.uniform(1, 100) == 1 {
                    self.other_warehouse(w)
                } else {
                    w
                };
                Line {
                    item,
                    supply_w,
                    qty: self.uniform(1, 10),
                }
            })
            .collect();
        Input::NewOrder { w, d, c, lines }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn keys(warehouses: u32) -> Keys {
        Keys::new(
            Scale {
                warehouses,
                items: 100_000,
                customers: 3_000,
            },
            1,
            2,
        )
    }

    #[test]
    fn last_names_are_three_syllables() {
        assert_eq!(last_name(0), "BARBARBAR");
        assert_eq!(last_name(371), "PRICALLYOUGHT");
        assert_eq!(last_name(999), "EINGEINGEING");
    }

    #[test]
    fn nurand_stays_in_range_and_is_skewed() {
        let mut k = keys(1);
        let mut hits = vec![0u32; 3001];
        for _ in 0..300_000 {
            let c = k.nurand(1023, 1, 3000);
            assert!((1..=3000).contains(&c));
            hits[c as usize] += 1;
        }
        let max = *hits.iter().max().unwrap();
        // uniform would give about 100 each; NURand's hot ids get several times that
        assert!(max > 300, "max {max}");
    }

    #[test]
    fn the_mix_and_the_keying_follow_the_specification() {
        let mut k = keys(4);
        let n = 200_000;
        let mut kinds = [0u32; 5];
        let (mut by_name, mut customers, mut remote_pay, mut pays) = (0, 0, 0, 0);
        let (mut lines, mut remote_lines, mut orders, mut rollbacks) = (0, 0, 0, 0);
        for _ in 0..n {
            let input = k.next_input();
            kinds[input.kind() as usize] += 1;
            match input {
                Input::NewOrder { w, lines: ls, .. } => {
                    orders += 1;
                    assert!((5..=15).contains(&ls.len()));
                    rollbacks += u32::from(ls.last().unwrap().item == 100_001);
                    for l in &ls {
                        lines += 1;
                        remote_lines += u32::from(l.supply_w != w);
                        assert!((1..=10).contains(&l.qty));
                    }
                }
                Input::Payment { w, c_w, c, .. } => {
                    pays += 1;
                    remote_pay += u32::from(c_w != w);
                    customers += 1;
                    by_name += u32::from(matches!(c, Customer::Last(_)));
                }
                Input::OrderStatus { c, .. } => {
                    customers += 1;
                    by_name += u32::from(matches!(c, Customer::Last(_)));
                }
                _ => {}
            }
        }
        let pct = |a: u32, b: u32| f64::from(a) * 100.0 / f64::from(b);
        for (kind, want) in kinds.iter().zip([45.0, 43.0, 4.0, 4.0, 4.0]) {
            assert!((pct(*kind, n) - want).abs() < 0.5, "{kinds:?}");
        }
        assert!((pct(by_name, customers) - 60.0).abs() < 1.0);
        assert!((pct(remote_pay, pays) - 15.0).abs() < 1.0);
        assert!((pct(remote_lines, lines) - 1.0).abs() < 0.2);
        assert!((pct(rollbacks, orders) - 1.0).abs() < 0.3);
    }

    #[test]
    fn one_warehouse_has_no_remote_keys() {
        let mut k = keys(1);
        for _ in 0..20_000 {
            match k.next_input() {
                Input::NewOrder { lines, .. } => assert!(lines.iter().all(|l| l.supply_w == 1)),
                Input::Payment { c_w, c_d, d, .. } => assert_eq!((c_w, c_d), (1, d)),
                _ => {}
            }
        }
    }
}
