//! The initial population of clause 4.3.3.1, one chunk per event: multi-row INSERTs
//! as text (a few hundred rows each), so a warehouse loads in seconds rather than in
//! half a million round trips. Dates are the server's CURRENT_TIMESTAMP, as "the date
//! and time given by the operating system when populated".

use super::gen::{alnum, astring, data_original, digits, last_name, nurand, state, zip, NuRandC};
use super::{thread_rng, TpccThreadPlan, CUSTOMERS, DISTRICTS, FIRST_NEW_ORDER, ITEMS, ORDERS};
use crate::bench::Outcome;
use plumb_servers::client::{Endpoint, SqlClient};
use plumb_servers::SqlError;
use rand::rngs::SmallRng;
use rand::seq::SliceRandom;
use rand::Rng;
use std::fmt::Write;

/// ITEM rows per INSERT.
const ITEM_CHUNK: i32 = 1000;
/// STOCK rows per INSERT (~350 bytes each).
const STOCK_CHUNK: i32 = 500;
/// CUSTOMER rows per INSERT (~650 bytes each), with their HISTORY rows in a second.
const CUSTOMER_CHUNK: i32 = 500;
/// ORDERS per chunk: one INSERT of them, one of their ~1000 ORDER_LINE rows and one of
/// their NEW_ORDER rows.
const ORDER_CHUNK: i32 = 100;

/// Where a loading thread is; `usize` indexes its warehouses.
#[derive(Debug, Clone, Copy, PartialEq)]
enum At {
    Items(i32),
    Warehouse(usize),
    Stock(usize, i32),
    Customers(usize, i32, i32),
    Orders(usize, i32, i32),
    Finished,
}

/// One loading thread: its own connection, its warehouses (thread t of T loads
/// warehouses t+1, t+1+T, …) and, on one thread, ITEM. Why ITEM goes to thread W mod T:
/// that thread has one warehouse fewer than the others (or none, when T > W), so with
/// 1 warehouse and 2 threads ITEM and the warehouse load side by side.
pub struct TpccLoader {
    client: Box<dyn SqlClient>,
    rng: SmallRng,
    c: NuRandC,
    warehouses: Vec<i32>,
    at: At,
    sql: String,
    sql2: String,
    sql3: String,
    perm: Vec<i32>,
}

/// Appends `v` hundredths as `12.34` (non-negative amounts only).
fn money(s: &mut String, cents: i64) {
    let _ = write!(s, "{}.{:02}", cents / 100, cents % 100);
}

/// Appends a random rate in 0.0000..=`max_ten_thousandths`/10000 (taxes, discounts).
fn rate(rng: &mut SmallRng, s: &mut String, max: u32) {
    let _ = write!(s, "0.{:04}", rng.random_range(0..=max));
}

/// Appends `'street1','street2','city','ST','zip'`.
fn address(rng: &mut SmallRng, s: &mut String) {
    for _ in 0..3 {
        s.push('\'');
        astring(rng, 10, 20, s);
        s.push_str("',");
    }
    s.push('\'');
    state(rng, s);
    s.push_str("','");
    zip(rng, s);
    s.push('\'');
}

impl TpccLoader {
    /// Connects; nothing is sent until the first event ([`super::create_schema`] must
    /// have run).
    pub fn new(ep: &Endpoint, plan: &TpccThreadPlan) -> Result<TpccLoader, SqlError> {
        let threads = plan.threads.max(1);
        let w = plan.cfg.warehouses as usize;
        let warehouses: Vec<i32> = (plan.thread + 1..=w)
            .step_by(threads)
            .map(|w| w as i32)
            .collect();
        let items = plan.thread == w % threads;
        let at = if items {
            At::Items(1)
        } else if warehouses.is_empty() {
            At::Finished
        } else {
            At::Warehouse(0)
        };
        Ok(TpccLoader {
            client: ep.connect()?,
            rng: thread_rng(plan.seed, plan.thread, 0x6c6f_6164),
            c: NuRandC::for_seed(plan.seed).0,
            warehouses,
            at,
            sql: String::with_capacity(512 * 1024),
            sql2: String::with_capacity(64 * 1024),
            sql3: String::with_capacity(16 * 1024),
            perm: (1..=ORDERS).collect(),
        })
    }

    /// About how many rows `warehouses` make (order lines vary): the load's total for a
    /// progress display.
    pub fn expected_rows(warehouses: u32) -> u64 {
        let per_district = 3 * CUSTOMERS as u64 + 10 * ORDERS as u64 + 900;
        ITEMS as u64
            + u64::from(warehouses) * (1 + DISTRICTS as u64 * (1 + per_district) + ITEMS as u64)
    }

    /// The warehouses this thread loads.
    pub fn warehouses(&self) -> &[i32] {
        &self.warehouses
    }

    /// Whether this thread loads ITEM.
    pub fn loads_items(&self) -> bool {
        matches!(self.at, At::Items(_))
    }

    /// Loads one chunk: `ops` and `rows` are the rows inserted, `queries` the
    /// statements; `done` once this thread has nothing left (that event inserts nothing).
    pub fn event(&mut self) -> Result<Outcome, SqlError> {
        let (queries, rows, next) = match self.at {
            At::Finished => {
                return Ok(Outcome {
                    done: true,
                    ..Outcome::default()
                })
            }
            At::Items(from) => {
                let to = (from + ITEM_CHUNK - 1).min(ITEMS);
                self.items(from, to)?;
                let next = if to < ITEMS {
                    At::Items(to + 1)
                } else {
                    self.after_warehouse(None)
                };
                (1, to - from + 1, next)
            }
            At::Warehouse(k) => {
                self.warehouse(self.warehouses[k])?;
                (2, 1 + DISTRICTS, At::Stock(k, 1))
            }
            At::Stock(k, from) => {
                let to = (from + STOCK_CHUNK - 1).min(ITEMS);
                self.stock(self.warehouses[k], from, to)?;
                let next = if to < ITEMS {
                    At::Stock(k, to + 1)
                } else {
                    At::Customers(k, 1, 1)
                };
                (1, to - from + 1, next)
            }
            At::Customers(k, d, from) => {
                let to = (from + CUSTOMER_CHUNK - 1).min(CUSTOMERS);
                self.customers(self.warehouses[k], d, from, to)?;
                let next = if to < CUSTOMERS {
                    At::Customers(k, d, to + 1)
                } else {
                    // Each district's orders go to a fresh permutation of its customers.
                    self.perm.shuffle(&mut self.rng);
                    At::Orders(k, d, 1)
                };
                (2, 2 * (to - from + 1), next)
            }
            At::Orders(k, d, from) => {
                let to = (from + ORDER_CHUNK - 1).min(ORDERS);
                let (queries, rows) = self.orders(self.warehouses[k], d, from, to)?;
                let next = if to < ORDERS {
                    At::Orders(k, d, to + 1)
                } else if d < DISTRICTS {
                    At::Customers(k, d + 1, 1)
                } else {
                    self.after_warehouse(Some(k))
                };
                (queries, rows, next)
            }
        };
        self.at = next;
        let rows = rows as u64;
        Ok(Outcome {
            queries,
            rows,
            ops: rows,
            ..Outcome::default()
        })
    }

    /// What follows ITEM (`None`) or warehouse `k`.
    fn after_warehouse(&self, k: Option<usize>) -> At {
        let next = k.map_or(0, |k| k + 1);
        if next < self.warehouses.len() {
            At::Warehouse(next)
        } else {
            At::Finished
        }
    }

    fn items(&mut self, from: i32, to: i32) -> Result<(), SqlError> {
        let (s, rng) = (&mut self.sql, &mut self.rng);
        s.clear();
        s.push_str("INSERT INTO item (i_id, i_im_id, i_name, i_price, i_data) VALUES ");
        for i in from..=to {
            if i > from {
                s.push(',');
            }
            let _ = write!(s, "({i},{},'", rng.random_range(1..=10_000));
            astring(rng, 14, 24, s);
            s.push_str("',");
            money(s, rng.random_range(100..=10_000));
            s.push_str(",'");
            data_original(rng, s);
            s.push_str("')");
        }
        self.client.batch(s)
    }

    fn warehouse(&mut self, w: i32) -> Result<(), SqlError> {
        let (s, rng) = (&mut self.sql, &mut self.rng);
        s.clear();
        s.push_str(
            "INSERT INTO warehouse (w_id, w_name, w_street_1, w_street_2, w_city, w_state, \
             w_zip, w_tax, w_ytd) VALUES (",
        );
        let _ = write!(s, "{w},'");
        astring(rng, 6, 10, s);
        s.push_str("',");
        address(rng, s);
        s.push(',');
        rate(rng, s, 2000);
        s.push_str(",300000.00)");
        self.client.batch(s)?;
        s.clear();
        s.push_str(
            "INSERT INTO district (d_id, d_w_id, d_name, d_street_1, d_street_2, d_city, \
             d_state, d_zip, d_tax, d_ytd, d_next_o_id) VALUES ",
        );
        for d in 1..=DISTRICTS {
            if d > 1 {
                s.push(',');
            }
            let _ = write!(s, "({d},{w},'");
            astring(rng, 6, 10, s);
            s.push_str("',");
            address(rng, s);
            s.push(',');
            rate(rng, s, 2000);
            let _ = write!(s, ",30000.00,{})", ORDERS + 1);
        }
        self.client.batch(s)
    }

    fn stock(&mut self, w: i32, from: i32, to: i32) -> Result<(), SqlError> {
        let (s, rng) = (&mut self.sql, &mut self.rng);
        s.clear();
        s.push_str("INSERT INTO stock (s_i_id, s_w_id, s_quantity");
        for d in 1..=DISTRICTS {
            let _ = write!(s, ", s_dist_{d:02}");
        }
        s.push_str(", s_ytd, s_order_cnt, s_remote_cnt, s_data) VALUES ");
        for i in from..=to {
            if i > from {
                s.push(',');
            }
            let _ = write!(s, "({i},{w},{}", rng.random_range(10..=100));
            for _ in 0..DISTRICTS {
                s.push_str(",'");
                alnum(rng, 24, s);
                s.push('\'');
            }
            s.push_str(",0,0,0,'");
            data_original(rng, s);
            s.push_str("')");
        }
        self.client.batch(s)
    }

    fn customers(&mut self, w: i32, d: i32, from: i32, to: i32) -> Result<(), SqlError> {
        let (s, h, rng) = (&mut self.sql, &mut self.sql2, &mut self.rng);
        s.clear();
        h.clear();
        s.push_str(
            "INSERT INTO customer (c_id, c_d_id, c_w_id, c_first, c_middle, c_last, \
             c_street_1, c_street_2, c_city, c_state, c_zip, c_phone, c_since, c_credit, \
             c_credit_lim, c_discount, c_balance, c_ytd_payment, c_payment_cnt, \
             c_delivery_cnt, c_data) VALUES ",
        );
        h.push_str(
            "INSERT INTO history (h_c_id, h_c_d_id, h_c_w_id, h_d_id, h_w_id, h_date, \
             h_amount, h_data) VALUES ",
        );
        for c in from..=to {
            if c > from {
                s.push(',');
                h.push(',');
            }
            let _ = write!(s, "({c},{d},{w},'");
            astring(rng, 8, 16, s);
            s.push_str("','OE','");
            // The first 1000 customers cover every name once; the rest are skewed.
            let name = if c <= 1000 {
                c - 1
            } else {
                nurand(rng, 255, 0, 999, self.c.c_last)
            };
            last_name(name, s);
            s.push_str("',");
            address(rng, s);
            s.push_str(",'");
            digits(rng, 16, s);
            let credit = if rng.random_range(0..10) == 0 {
                "BC"
            } else {
                "GC"
            };
            let _ = write!(s, "',CURRENT_TIMESTAMP,'{credit}',50000.00,");
            rate(rng, s, 5000);
            s.push_str(",-10.00,10.00,1,0,'");
            astring(rng, 300, 500, s);
            s.push_str("')");
            let _ = write!(h, "({c},{d},{w},{d},{w},CURRENT_TIMESTAMP,10.00,'");
            astring(rng, 12, 24, h);
            h.push_str("')");
        }
        self.client.batch(s)?;
        self.client.batch(h)
    }

    /// Orders `from..=to` of district `d`, their lines and (from 2101 on) their
    /// NEW_ORDER rows: (statements, rows).
    fn orders(&mut self, w: i32, d: i32, from: i32, to: i32) -> Result<(u64, i32), SqlError> {
        let (o, l, n, rng) = (&mut self.sql, &mut self.sql2, &mut self.sql3, &mut self.rng);
        o.clear();
        l.clear();
        n.clear();
        o.push_str(
            "INSERT INTO orders (o_id, o_d_id, o_w_id, o_c_id, o_entry_d, o_carrier_id, \
             o_ol_cnt, o_all_local) VALUES ",
        );
        l.push_str(
            "INSERT INTO order_line (ol_o_id, ol_d_id, ol_w_id, ol_number, ol_i_id, \
             ol_supply_w_id, ol_delivery_d, ol_quantity, ol_amount, ol_dist_info) VALUES ",
        );
        n.push_str("INSERT INTO new_order (no_o_id, no_d_id, no_w_id) VALUES ");
        let (mut lines, mut new_orders) = (0, 0);
        for id in from..=to {
            let delivered = id < FIRST_NEW_ORDER;
            if id > from {
                o.push(',');
            }
            let cnt = rng.random_range(5..=15);
            let _ = write!(
                o,
                "({id},{d},{w},{},CURRENT_TIMESTAMP,",
                self.perm[id as usize - 1]
            );
            if delivered {
                let _ = write!(o, "{}", rng.random_range(1..=10));
            } else {
                o.push_str("NULL");
            }
            let _ = write!(o, ",{cnt},1)");
            for number in 1..=cnt {
                if lines > 0 {
                    l.push(',');
                }
                lines += 1;
                let _ = write!(
                    l,
                    "({id},{d},{w},{number},{},{w},",
                    rng.random_range(1..=ITEMS)
                );
                if delivered {
                    l.push_str("CURRENT_TIMESTAMP,5,0.00,'");
                } else {
                    l.push_str("NULL,5,");
                    money(l, rng.random_range(1..=999_999));
                    l.push_str(",'");
                }
                alnum(rng, 24, l);
                l.push_str("')");
            }
            if !delivered {
                if new_orders > 0 {
                    n.push(',');
                }
                new_orders += 1;
                let _ = write!(n, "({id},{d},{w})");
            }
        }
        self.client.batch(o)?;
        self.client.batch(l)?;
        let mut queries = 2;
        if new_orders > 0 {
            self.client.batch(n)?;
            queries += 1;
        }
        Ok((queries, to - from + 1 + lines + new_orders))
    }
}
