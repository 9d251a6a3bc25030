//! The five transactions of clauses 2.4-2.8 as client-side SQL, each between BEGIN and
//! COMMIT on one connection with its statements prepared once. Rows the spec's
//! isolation needs stable are read with `SELECT … FOR UPDATE` (the district in
//! New-Order, so order ids are unique; stock and customer rows that are read and then
//! written; the oldest NEW_ORDER row in Delivery), which also makes InnoDB's
//! REPEATABLE READ read the latest committed values there. A deadlock, serialization
//! failure or lock wait timeout rolls back and runs the same transaction (the same
//! inputs, as a terminal would resubmit it) again, counted.

use super::gen::{last_name, nurand, NuRandC};
use super::{
    thread_rng, TpccThreadPlan, CUSTOMERS, DELIVERY, DISTRICTS, ITEMS, NEW_ORDER, ORDER_STATUS,
    PAYMENT, STOCK_LEVEL,
};
use crate::bench::Outcome;
use plumb_servers::client::{Endpoint, Param, SqlClient, Stmt, Values};
use plumb_servers::SqlError;
use rand::rngs::SmallRng;
use rand::Rng;
use std::fmt::Write;
use std::time::Duration;

/// How often one transaction is run again after conflicts before the step fails: a
/// transaction that loses 100 deadlocks in a row is a livelock, not contention.
const MAX_ATTEMPTS: u32 = 100;
/// The mix (clause 5.2.3): cards per 100 for each class, dealt from a shuffled deck
/// so every 100 transactions hold exactly this mix.
const MIX: [u8; 5] = [45, 43, 4, 4, 4];
/// Keying time per class, seconds (clause 5.2.5.7).
const KEYING_S: [f64; 5] = [18.0, 3.0, 2.0, 2.0, 2.0];
/// Mean think time per class, seconds (clause 5.2.5.7); a draw is cut at 10× the mean.
const THINK_S: [f64; 5] = [12.0, 12.0, 10.0, 5.0, 5.0];
/// Length C_DATA is kept to after a bad-credit payment prepends to it.
const C_DATA_MAX: usize = 500;

/// Whether `e` is a conflict that rolling back and running again resolves: deadlock,
/// serialization failure, lock wait timeout. Not a duplicate key, which in TPC-C
/// means two New-Orders took one order id: a broken lock, to be reported.
fn conflict(e: &SqlError) -> bool {
    matches!(
        e,
        SqlError::Query { code: Some(c), .. }
            if matches!(c.as_str(), "40P01" | "40001" | "55P03" | "1213" | "1205" | "1020")
    )
}

/// A think time for `class`, seconds: -ln(r) × its mean for r uniform in (0, 1], cut at
/// 10× the mean (clause 5.2.5.4).
fn think_time(rng: &mut SmallRng, class: u8) -> f64 {
    let mean = THINK_S[class as usize];
    let r: f64 = 1.0 - rng.random::<f64>();
    (-r.ln() * mean).min(10.0 * mean)
}

/// What a thread's transactions did, by class ([`super::TPCC_CLASSES`] order): what a
/// run reports besides latency, and what the tests check the mix with.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct TpccStats {
    /// Transactions that committed.
    pub committed: [u64; 5],
    /// New-Orders rolled back on purpose (the 1% with an unused item, clause 2.4.2.3).
    pub rolled_back: u64,
    /// Runs rolled back on a conflict and run again.
    pub retries: [u64; 5],
    /// Districts a Delivery found nothing to deliver in (clause 2.7.4.2 allows it).
    pub skipped_deliveries: u64,
}

/// One connection and the reused buffer its reads land in, counting statements and
/// rows for [`Outcome`].
struct Conn {
    client: Box<dyn SqlClient>,
    v: Values,
    queries: u64,
    rows: u64,
}

impl Conn {
    fn fetch(&mut self, s: Stmt, p: &[Param<'_>]) -> Result<usize, SqlError> {
        self.queries += 1;
        let n = self.client.fetch(s, p, &mut self.v)?;
        self.rows += n;
        Ok(n as usize)
    }

    /// A fetch that must find exactly one row (a key the load wrote).
    fn one(&mut self, s: Stmt, p: &[Param<'_>], what: &str) -> Result<(), SqlError> {
        match self.fetch(s, p)? {
            1 => Ok(()),
            n => Err(SqlError::Verify(format!("{what}: {n} rows, not 1"))),
        }
    }

    fn exec(&mut self, s: Stmt, p: &[Param<'_>]) -> Result<u64, SqlError> {
        self.queries += 1;
        let n = self.client.execute(s, p)?;
        self.rows += n;
        Ok(n)
    }

    fn batch(&mut self, sql: &str) -> Result<(), SqlError> {
        self.queries += 1;
        self.client.batch(sql)
    }
}

/// Every statement, prepared once per connection.
struct Stmts {
    no_w: Stmt,
    no_d: Stmt,
    no_du: Stmt,
    no_c: Stmt,
    no_o: Stmt,
    no_no: Stmt,
    no_i: Stmt,
    /// Stock with the district's S_DIST_xx, per district.
    no_s: Vec<Stmt>,
    no_su: Stmt,
    no_ol: Stmt,
    p_wu: Stmt,
    p_w: Stmt,
    p_du: Stmt,
    p_d: Stmt,
    p_cn: Stmt,
    p_c: Stmt,
    p_cd: Stmt,
    p_cu: Stmt,
    p_cub: Stmt,
    p_h: Stmt,
    os_cn: Stmt,
    os_c: Stmt,
    os_o: Stmt,
    os_ol: Stmt,
    d_no: Stmt,
    d_dno: Stmt,
    d_o: Stmt,
    d_ou: Stmt,
    d_olu: Stmt,
    d_ols: Stmt,
    d_cu: Stmt,
    sl_d: Stmt,
    sl_s: Stmt,
}

impl Stmts {
    fn prepare(c: &mut dyn SqlClient) -> Result<Stmts, SqlError> {
        let mut no_s = Vec::with_capacity(DISTRICTS as usize);
        for d in 1..=DISTRICTS {
            no_s.push(c.prepare(&format!(
                "SELECT s_quantity, s_data, s_dist_{d:02} FROM stock \
                 WHERE s_i_id = ? AND s_w_id = ? FOR UPDATE"
            ))?);
        }
        let customer_set = "c_balance = c_balance - ?, c_ytd_payment = c_ytd_payment + ?, \
                            c_payment_cnt = c_payment_cnt + 1";
        let by_id = "WHERE c_w_id = ? AND c_d_id = ? AND c_id = ?";
        let order_lines = "WHERE ol_w_id = ? AND ol_d_id = ? AND ol_o_id = ?";
        Ok(Stmts {
            no_w: c.prepare("SELECT w_tax FROM warehouse WHERE w_id = ?")?,
            no_d: c.prepare(
                "SELECT d_tax, d_next_o_id FROM district WHERE d_w_id = ? AND d_id = ? \
                 FOR UPDATE",
            )?,
            no_du: c.prepare(
                "UPDATE district SET d_next_o_id = d_next_o_id + 1 \
                 WHERE d_w_id = ? AND d_id = ?",
            )?,
            no_c: c.prepare(&format!(
                "SELECT c_discount, c_last, c_credit FROM customer {by_id}"
            ))?,
            no_o: c.prepare(
                "INSERT INTO orders (o_id, o_d_id, o_w_id, o_c_id, o_entry_d, o_carrier_id, \
                 o_ol_cnt, o_all_local) VALUES (?, ?, ?, ?, CURRENT_TIMESTAMP, NULL, ?, ?)",
            )?,
            no_no: c
                .prepare("INSERT INTO new_order (no_o_id, no_d_id, no_w_id) VALUES (?, ?, ?)")?,
            no_i: c.prepare("SELECT i_price, i_name, i_data FROM item WHERE i_id = ?")?,
            no_s,
            no_su: c.prepare(
                "UPDATE stock SET s_quantity = ?, s_ytd = s_ytd + ?, \
                 s_order_cnt = s_order_cnt + 1, s_remote_cnt = s_remote_cnt + ? \
                 WHERE s_i_id = ? AND s_w_id = ?",
            )?,
            no_ol: c.prepare(
                "INSERT INTO order_line (ol_o_id, ol_d_id, ol_w_id, ol_number, ol_i_id, \
                 ol_supply_w_id, ol_delivery_d, ol_quantity, ol_amount, ol_dist_info) \
                 VALUES (?, ?, ?, ?, ?, ?, NULL, ?, ?, ?)",
            )?,
            p_wu: c.prepare("UPDATE warehouse SET w_ytd = w_ytd + ? WHERE w_id = ?")?,
            p_w: c.prepare(
                "SELECT w_name, w_street_1, w_street_2, w_city, w_state, w_zip \
                 FROM warehouse WHERE w_id = ?",
            )?,
            p_du: c
                .prepare("UPDATE district SET d_ytd = d_ytd + ? WHERE d_w_id = ? AND d_id = ?")?,
            p_d: c.prepare(
                "SELECT d_name, d_street_1, d_street_2, d_city, d_state, d_zip \
                 FROM district WHERE d_w_id = ? AND d_id = ?",
            )?,
            p_cn: c.prepare(
                "SELECT c_id FROM customer WHERE c_w_id = ? AND c_d_id = ? AND c_last = ? \
                 ORDER BY c_first",
            )?,
            p_c: c.prepare(&format!(
                "SELECT c_first, c_middle, c_last, c_street_1, c_street_2, c_city, c_state, \
                 c_zip, c_phone, c_since, c_credit, c_credit_lim, c_discount, c_balance \
                 FROM customer {by_id} FOR UPDATE"
            ))?,
            p_cd: c.prepare(&format!("SELECT c_data FROM customer {by_id}"))?,
            p_cu: c.prepare(&format!("UPDATE customer SET {customer_set} {by_id}"))?,
            p_cub: c.prepare(&format!(
                "UPDATE customer SET {customer_set}, c_data = ? {by_id}"
            ))?,
            p_h: c.prepare(
                "INSERT INTO history (h_c_d_id, h_c_w_id, h_c_id, h_d_id, h_w_id, h_date, \
                 h_amount, h_data) VALUES (?, ?, ?, ?, ?, CURRENT_TIMESTAMP, ?, ?)",
            )?,
            os_cn: c.prepare(
                "SELECT c_id, c_balance, c_first, c_middle, c_last FROM customer \
                 WHERE c_w_id = ? AND c_d_id = ? AND c_last = ? ORDER BY c_first",
            )?,
            os_c: c.prepare(&format!(
                "SELECT c_id, c_balance, c_first, c_middle, c_last FROM customer {by_id}"
            ))?,
            os_o: c.prepare(
                "SELECT o_id, o_carrier_id, o_entry_d FROM orders \
                 WHERE o_w_id = ? AND o_d_id = ? AND o_c_id = ? ORDER BY o_id DESC LIMIT 1",
            )?,
            os_ol: c.prepare(&format!(
                "SELECT ol_i_id, ol_supply_w_id, ol_quantity, ol_amount, ol_delivery_d \
                 FROM order_line {order_lines}"
            ))?,
            d_no: c.prepare(
                "SELECT no_o_id FROM new_order WHERE no_w_id = ? AND no_d_id = ? \
                 ORDER BY no_o_id LIMIT 1 FOR UPDATE",
            )?,
            d_dno: c.prepare(
                "DELETE FROM new_order WHERE no_w_id = ? AND no_d_id = ? AND no_o_id = ?",
            )?,
            d_o: c.prepare(
                "SELECT o_c_id FROM orders WHERE o_w_id = ? AND o_d_id = ? AND o_id = ?",
            )?,
            d_ou: c.prepare(
                "UPDATE orders SET o_carrier_id = ? WHERE o_w_id = ? AND o_d_id = ? AND o_id = ?",
            )?,
            d_olu: c.prepare(&format!(
                "UPDATE order_line SET ol_delivery_d = CURRENT_TIMESTAMP {order_lines}"
            ))?,
            d_ols: c.prepare(&format!(
                "SELECT SUM(ol_amount) FROM order_line {order_lines}"
            ))?,
            d_cu: c.prepare(&format!(
                "UPDATE customer SET c_balance = c_balance + ?, \
                 c_delivery_cnt = c_delivery_cnt + 1 {by_id}"
            ))?,
            sl_d: c.prepare("SELECT d_next_o_id FROM district WHERE d_w_id = ? AND d_id = ?")?,
            sl_s: c.prepare(
                "SELECT COUNT(DISTINCT s_i_id) FROM order_line, stock \
                 WHERE ol_w_id = ? AND ol_d_id = ? AND ol_o_id < ? AND ol_o_id >= ? \
                 AND s_w_id = ? AND s_i_id = ol_i_id AND s_quantity < ?",
            )?,
        })
    }
}

/// How a Payment or Order-Status finds its customer.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Who {
    Id(i32),
    /// By the last name in [`Input::last`] (60%, clause 2.5.1.2).
    Last,
}

/// One transaction's inputs, drawn before it runs and kept for its retries.
#[derive(Debug, Default)]
struct Input {
    d: i32,
    /// New-Order: customer, lines, and per line item, supplying warehouse, quantity.
    c: i32,
    lines: usize,
    items: [i32; 15],
    supply: [i32; 15],
    qty: [i32; 15],
    /// New-Order: this one ends on the unused item and rolls back.
    rollback: bool,
    /// Payment: the customer's warehouse and district (remote 15% of the time).
    c_w: i32,
    c_d: i32,
    who: Option<Who>,
    last: String,
    /// Payment's H_AMOUNT in cents.
    amount: i64,
    /// Delivery's carrier.
    carrier: i32,
    /// Stock-Level's threshold.
    threshold: i32,
}

/// One TPC-C client thread: a terminal bound to its home warehouse (thread t →
/// warehouse (t mod W) + 1, as HammerDB binds virtual users), running one transaction
/// per [`TpccThread::event`].
pub struct TpccThread {
    conn: Conn,
    st: Stmts,
    rng: SmallRng,
    c: NuRandC,
    w: i32,
    warehouses: i32,
    deck: [u8; 100],
    dealt: usize,
    /// The class the next event runs (drawn ahead, so its keying time can come first).
    next: u8,
    /// Think time still owed for the last transaction, and whether the next one's
    /// keying time has been paused for.
    think_for: Option<u8>,
    keyed: bool,
    spec_timing: bool,
    inp: Input,
    /// Reused text: a stock row's S_DIST_xx, H_DATA, a bad-credit customer's C_DATA.
    dist: String,
    h_data: String,
    c_data: String,
    stats: TpccStats,
}

impl TpccThread {
    /// Connects and prepares every statement.
    pub fn new(ep: &Endpoint, plan: &TpccThreadPlan) -> Result<TpccThread, SqlError> {
        let mut client = ep.connect()?;
        let st = Stmts::prepare(client.as_mut())?;
        let warehouses = plan.cfg.warehouses.max(1) as i32;
        let mut deck = [0u8; 100];
        let mut at = 0;
        for (class, n) in MIX.iter().enumerate() {
            for _ in 0..*n {
                deck[at] = class as u8;
                at += 1;
            }
        }
        let mut t = TpccThread {
            conn: Conn {
                client,
                v: Values::new(),
                queries: 0,
                rows: 0,
            },
            st,
            rng: thread_rng(plan.seed, plan.thread, 0x7478_6e73),
            c: NuRandC::for_seed(plan.seed).1,
            w: (plan.thread % warehouses as usize) as i32 + 1,
            warehouses,
            deck,
            dealt: deck.len(),
            next: 0,
            think_for: None,
            keyed: false,
            spec_timing: plan.cfg.spec_timing,
            inp: Input::default(),
            dist: String::with_capacity(24),
            h_data: String::with_capacity(24),
            c_data: String::with_capacity(C_DATA_MAX + 64),
            stats: TpccStats::default(),
        };
        t.next = t.deal();
        Ok(t)
    }

    /// This thread's home warehouse.
    pub fn warehouse(&self) -> i32 {
        self.w
    }

    /// What this thread's transactions did so far.
    pub fn stats(&self) -> &TpccStats {
        &self.stats
    }

    /// The next card of the shuffled 100-card deck.
    fn deal(&mut self) -> u8 {
        if self.dealt == self.deck.len() {
            use rand::seq::SliceRandom;
            self.deck.shuffle(&mut self.rng);
            self.dealt = 0;
        }
        self.dealt += 1;
        self.deck[self.dealt - 1]
    }

    /// What to sleep before the next event when [`super::TpccConfig::spec_timing`] is
    /// on (zero when off): the think time of the transaction just run (a negative
    /// exponential draw around the spec's mean, cut at 10× it) and the keying time of
    /// the one to come. Each is returned once, so the runner calls this after every
    /// event (and, for the first transaction's keying time, before the first), outside
    /// the timed region.
    pub fn pause(&mut self) -> Duration {
        if !self.spec_timing {
            return Duration::ZERO;
        }
        let mut s = 0.0;
        if let Some(class) = self.think_for.take() {
            s += think_time(&mut self.rng, class);
        }
        if !self.keyed {
            s += KEYING_S[self.next as usize];
            self.keyed = true;
        }
        Duration::from_secs_f64(s)
    }

    /// A warehouse other than home, uniformly (W > 1).
    fn remote(&mut self) -> i32 {
        let o = self.rng.random_range(1..self.warehouses);
        if o >= self.w {
            o + 1
        } else {
            o
        }
    }

    /// Draws a customer: 60% by a NURand last name, else a NURand id.
    fn customer(&mut self) -> Who {
        if self.rng.random_range(1..=100) <= 60 {
            self.inp.last.clear();
            let n = nurand(&mut self.rng, 255, 0, 999, self.c.c_last);
            last_name(n, &mut self.inp.last);
            Who::Last
        } else {
            Who::Id(nurand(&mut self.rng, 1023, 1, CUSTOMERS, self.c.c_id))
        }
    }

    /// Draws the inputs of a transaction of `class` (clauses 2.4.1, 2.5.1, 2.6.1,
    /// 2.7.1, 2.8.1).
    fn draw(&mut self, class: u8) {
        self.inp.d = self.rng.random_range(1..=DISTRICTS);
        match class {
            NEW_ORDER => {
                self.inp.c = nurand(&mut self.rng, 1023, 1, CUSTOMERS, self.c.c_id);
                self.inp.lines = self.rng.random_range(5..=15);
                self.inp.rollback = self.rng.random_range(1..=100) == 1;
                for i in 0..self.inp.lines {
                    self.inp.items[i] = nurand(&mut self.rng, 8191, 1, ITEMS, self.c.ol_i_id);
                    self.inp.supply[i] =
                        if self.warehouses > 1 && self.rng.random_range(1..=100) == 1 {
                            self.remote()
                        } else {
                            self.w
                        };
                    self.inp.qty[i] = self.rng.random_range(1..=10);
                }
                if self.inp.rollback {
                    self.inp.items[self.inp.lines - 1] = ITEMS + 1;
                }
            }
            PAYMENT => {
                if self.warehouses > 1 && self.rng.random_range(1..=100) > 85 {
                    self.inp.c_w = self.remote();
                    self.inp.c_d = self.rng.random_range(1..=DISTRICTS);
                } else {
                    self.inp.c_w = self.w;
                    self.inp.c_d = self.inp.d;
                }
                self.inp.who = Some(self.customer());
                self.inp.amount = self.rng.random_range(100..=500_000);
            }
            ORDER_STATUS => self.inp.who = Some(self.customer()),
            DELIVERY => self.inp.carrier = self.rng.random_range(1..=10),
            STOCK_LEVEL => self.inp.threshold = self.rng.random_range(10..=20),
            _ => {}
        }
    }

    /// Runs one transaction of the mix. `class` is its [`super::TPCC_CLASSES`] index;
    /// `ops` is 1 (one transaction); `retried` says it lost a conflict at least once and
    /// was run again (its latency includes every run). A New-Order rolled back on its
    /// unused item (1%) counts as a New-Order like any other, class 0, as clause 2.4.2.3
    /// says and as NOPM then counts it; [`TpccStats::rolled_back`] tells them apart
    /// (HammerDB's NOPM, from D_NEXT_O_ID, leaves them out).
    pub fn event(&mut self) -> Result<Outcome, SqlError> {
        let class = self.next;
        self.draw(class);
        let (q0, r0) = (self.conn.queries, self.conn.rows);
        let mut attempts = 0;
        let committed = loop {
            attempts += 1;
            match self.run(class) {
                Ok(committed) => break committed,
                Err(e) if conflict(&e) && attempts < MAX_ATTEMPTS => {
                    self.conn.batch("ROLLBACK")?;
                    self.stats.retries[class as usize] += 1;
                }
                Err(e) => {
                    let _ = self.conn.client.batch("ROLLBACK");
                    return Err(e);
                }
            }
        };
        if committed {
            self.stats.committed[class as usize] += 1;
        } else {
            self.stats.rolled_back += 1;
        }
        self.think_for = Some(class);
        self.next = self.deal();
        self.keyed = false;
        Ok(Outcome {
            queries: self.conn.queries - q0,
            rows: self.conn.rows - r0,
            ops: 1,
            retried: attempts > 1,
            done: false,
            class,
        })
    }

    /// One run of the drawn transaction: whether it committed (false: rolled back on
    /// purpose).
    fn run(&mut self, class: u8) -> Result<bool, SqlError> {
        match class {
            NEW_ORDER => self.new_order(),
            PAYMENT => self.payment().map(|_| true),
            ORDER_STATUS => self.order_status().map(|_| true),
            DELIVERY => self.delivery().map(|_| true),
            STOCK_LEVEL => self.stock_level().map(|_| true),
            other => Err(SqlError::Input(format!(
                "no TPC-C transaction class {other}"
            ))),
        }
    }

    /// Clause 2.4.2: the district's next order id (locked), the order and its
    /// NEW_ORDER row, then per line the item, the stock row (locked) and its update,
    /// and the order line. An item that does not exist rolls the order back.
    fn new_order(&mut self) -> Result<bool, SqlError> {
        let (cn, st, inp) = (&mut self.conn, &self.st, &self.inp);
        let (w, d) = (self.w, inp.d);
        cn.batch("BEGIN")?;
        cn.one(st.no_w, &[Param::Int(w)], "new-order: warehouse")?;
        let w_tax = cn.v.fixed(0, 0, 4)?;
        cn.one(
            st.no_d,
            &[Param::Int(w), Param::Int(d)],
            "new-order: district",
        )?;
        let d_tax = cn.v.fixed(0, 0, 4)?;
        let o_id = cn.v.int(0, 1)? as i32;
        cn.exec(st.no_du, &[Param::Int(w), Param::Int(d)])?;
        let c = [Param::Int(w), Param::Int(d), Param::Int(inp.c)];
        cn.one(st.no_c, &c, "new-order: customer")?;
        let discount = cn.v.fixed(0, 0, 4)?;
        let lines = inp.lines;
        let all_local = inp.supply[..lines].iter().all(|s| *s == w);
        cn.exec(
            st.no_o,
            &[
                Param::Int(o_id),
                Param::Int(d),
                Param::Int(w),
                Param::Int(inp.c),
                Param::Int(lines as i32),
                Param::Int(i32::from(all_local)),
            ],
        )?;
        cn.exec(st.no_no, &[Param::Int(o_id), Param::Int(d), Param::Int(w)])?;
        let mut total = 0i64;
        for i in 0..lines {
            let (item, supply, qty) = (inp.items[i], inp.supply[i], inp.qty[i]);
            if cn.fetch(st.no_i, &[Param::Int(item)])? == 0 {
                if inp.rollback && i == lines - 1 {
                    cn.batch("ROLLBACK")?;
                    return Ok(false);
                }
                return Err(SqlError::Verify(format!("new-order: no item {item}")));
            }
            let price = cn.v.fixed(0, 0, 2)?;
            let original = cn.v.get(0, 2).is_some_and(|s| s.contains("ORIGINAL"));
            let s = &[Param::Int(item), Param::Int(supply)];
            cn.one(st.no_s[d as usize - 1], s, "new-order: stock")?;
            let s_qty = cn.v.int(0, 0)? as i32;
            // Brand-generic ('B' or 'G') is what a terminal would show; it is read, as
            // the spec asks, though nothing here displays it.
            let _brand = original && cn.v.get(0, 1).is_some_and(|s| s.contains("ORIGINAL"));
            self.dist.clear();
            self.dist.push_str(cn.v.get(0, 2).unwrap_or(""));
            let new_qty = if s_qty >= qty + 10 {
                s_qty - qty
            } else {
                s_qty - qty + 91
            };
            cn.exec(
                st.no_su,
                &[
                    Param::Int(new_qty),
                    Param::Int(qty),
                    Param::Int(i32::from(supply != w)),
                    Param::Int(item),
                    Param::Int(supply),
                ],
            )?;
            let amount = i64::from(qty) * price;
            total += amount;
            cn.exec(
                st.no_ol,
                &[
                    Param::Int(o_id),
                    Param::Int(d),
                    Param::Int(w),
                    Param::Int(i as i32 + 1),
                    Param::Int(item),
                    Param::Int(supply),
                    Param::Int(qty),
                    Param::Cents(amount),
                    Param::Str(&self.dist),
                ],
            )?;
        }
        // The order's total (clause 2.4.2.2): sum × (1 − C_DISCOUNT) × (1 + W_TAX +
        // D_TAX), in cents × 10^8 to stay exact; a negative one means a bad read.
        let total =
            i128::from(total) * i128::from(10_000 - discount) * i128::from(10_000 + w_tax + d_tax);
        if total < 0 {
            return Err(SqlError::Verify(format!(
                "new-order: total {total} from discount {discount}, taxes {w_tax} {d_tax}"
            )));
        }
        cn.batch("COMMIT")?;
        Ok(true)
    }

    /// Finds the customer of a by-name lookup (`stmt` returns C_ID first, ordered by
    /// C_FIRST): the row at position ceil(n/2) of the n that match (clause 2.5.2.2).
    fn by_name(cn: &mut Conn, stmt: Stmt, w: i32, d: i32, last: &str) -> Result<i32, SqlError> {
        let n = cn.fetch(stmt, &[Param::Int(w), Param::Int(d), Param::Str(last)])?;
        if n == 0 {
            return Err(SqlError::Verify(format!(
                "no customer named {last} in warehouse {w} district {d}"
            )));
        }
        Ok(cn.v.int((n - 1) / 2, 0)? as i32)
    }

    /// Clause 2.5.2: the warehouse's and district's YTD, the customer (locked) and its
    /// balance, C_DATA for bad credit, and a HISTORY row.
    fn payment(&mut self) -> Result<(), SqlError> {
        let (cn, st, inp) = (&mut self.conn, &self.st, &self.inp);
        let (w, d, amount) = (self.w, inp.d, inp.amount);
        cn.batch("BEGIN")?;
        cn.exec(st.p_wu, &[Param::Cents(amount), Param::Int(w)])?;
        cn.one(st.p_w, &[Param::Int(w)], "payment: warehouse")?;
        self.h_data.clear();
        self.h_data.push_str(cn.v.get(0, 0).unwrap_or(""));
        self.h_data.push_str("    ");
        cn.exec(
            st.p_du,
            &[Param::Cents(amount), Param::Int(w), Param::Int(d)],
        )?;
        cn.one(st.p_d, &[Param::Int(w), Param::Int(d)], "payment: district")?;
        self.h_data.push_str(cn.v.get(0, 0).unwrap_or(""));
        let (c_w, c_d) = (inp.c_w, inp.c_d);
        let c = match inp.who {
            Some(Who::Id(c)) => c,
            _ => Self::by_name(cn, st.p_cn, c_w, c_d, &inp.last)?,
        };
        let key = [Param::Int(c_w), Param::Int(c_d), Param::Int(c)];
        cn.one(st.p_c, &key, "payment: customer")?;
        if cn.v.get(0, 10) == Some("BC") {
            cn.one(st.p_cd, &key, "payment: customer data")?;
            let cd = &mut self.c_data;
            cd.clear();
            let _ = write!(
                cd,
                "{c} {c_d} {c_w} {d} {w} {}.{:02} ",
                amount / 100,
                amount % 100
            );
            cd.push_str(cn.v.get(0, 0).unwrap_or(""));
            let mut keep = C_DATA_MAX.min(cd.len());
            while !cd.is_char_boundary(keep) {
                keep -= 1;
            }
            cd.truncate(keep);
            cn.exec(
                st.p_cub,
                &[
                    Param::Cents(amount),
                    Param::Cents(amount),
                    Param::Str(cd),
                    Param::Int(c_w),
                    Param::Int(c_d),
                    Param::Int(c),
                ],
            )?;
        } else {
            cn.exec(
                st.p_cu,
                &[
                    Param::Cents(amount),
                    Param::Cents(amount),
                    Param::Int(c_w),
                    Param::Int(c_d),
                    Param::Int(c),
                ],
            )?;
        }
        cn.exec(
            st.p_h,
            &[
                Param::Int(c_d),
                Param::Int(c_w),
                Param::Int(c),
                Param::Int(d),
                Param::Int(w),
                Param::Cents(amount),
                Param::Str(&self.h_data),
            ],
        )?;
        cn.batch("COMMIT")
    }

    /// Clause 2.6.2: the customer, its last order and that order's lines (read-only).
    fn order_status(&mut self) -> Result<(), SqlError> {
        let (cn, st, inp) = (&mut self.conn, &self.st, &self.inp);
        let (w, d) = (self.w, inp.d);
        cn.batch("BEGIN")?;
        let c = match inp.who {
            Some(Who::Id(c)) => {
                let key = [Param::Int(w), Param::Int(d), Param::Int(c)];
                cn.one(st.os_c, &key, "order-status: customer")?;
                c
            }
            _ => Self::by_name(cn, st.os_cn, w, d, &inp.last)?,
        };
        let key = [Param::Int(w), Param::Int(d), Param::Int(c)];
        cn.one(st.os_o, &key, "order-status: the customer's last order")?;
        let o = cn.v.int(0, 0)? as i32;
        let n = cn.fetch(st.os_ol, &[Param::Int(w), Param::Int(d), Param::Int(o)])?;
        if !(5..=15).contains(&n) {
            return Err(SqlError::Verify(format!(
                "order-status: order {o} of warehouse {w} district {d} has {n} lines"
            )));
        }
        cn.batch("COMMIT")
    }

    /// Clause 2.7.4: in each of the ten districts, the oldest undelivered order
    /// (locked) leaves NEW_ORDER, gets its carrier and delivery date, and its amount
    /// goes to the customer's balance; all ten in one transaction, as HammerDB runs it.
    fn delivery(&mut self) -> Result<(), SqlError> {
        let (cn, st, w) = (&mut self.conn, &self.st, self.w);
        let carrier = self.inp.carrier;
        cn.batch("BEGIN")?;
        for d in 1..=DISTRICTS {
            if cn.fetch(st.d_no, &[Param::Int(w), Param::Int(d)])? == 0 {
                self.stats.skipped_deliveries += 1;
                continue;
            }
            let o = cn.v.int(0, 0)? as i32;
            let key = [Param::Int(w), Param::Int(d), Param::Int(o)];
            if cn.exec(st.d_dno, &key)? != 1 {
                return Err(SqlError::Verify(format!(
                    "delivery: new order {o} of warehouse {w} district {d} was locked but \
                     not deleted"
                )));
            }
            cn.one(st.d_o, &key, "delivery: order")?;
            let c = cn.v.int(0, 0)? as i32;
            cn.exec(
                st.d_ou,
                &[
                    Param::Int(carrier),
                    Param::Int(w),
                    Param::Int(d),
                    Param::Int(o),
                ],
            )?;
            cn.exec(st.d_olu, &key)?;
            cn.one(st.d_ols, &key, "delivery: order lines")?;
            let sum = cn.v.fixed(0, 0, 2)?;
            cn.exec(
                st.d_cu,
                &[
                    Param::Cents(sum),
                    Param::Int(w),
                    Param::Int(d),
                    Param::Int(c),
                ],
            )?;
        }
        cn.batch("COMMIT")
    }

    /// Clause 2.8.2: the district's last 20 orders' items whose stock is below the
    /// threshold (read-only).
    fn stock_level(&mut self) -> Result<(), SqlError> {
        let (cn, st, inp) = (&mut self.conn, &self.st, &self.inp);
        let (w, d) = (self.w, inp.d);
        cn.batch("BEGIN")?;
        cn.one(
            st.sl_d,
            &[Param::Int(w), Param::Int(d)],
            "stock-level: district",
        )?;
        let next = cn.v.int(0, 0)? as i32;
        cn.one(
            st.sl_s,
            &[
                Param::Int(w),
                Param::Int(d),
                Param::Int(next),
                Param::Int(next - 20),
                Param::Int(w),
                Param::Int(inp.threshold),
            ],
            "stock-level: count",
        )?;
        let low = cn.v.int(0, 0)?;
        if !(0..=300).contains(&low) {
            return Err(SqlError::Verify(format!(
                "stock-level: {low} low items in 20 orders of at most 15 lines"
            )));
        }
        cn.batch("COMMIT")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_deck_holds_the_standard_mix() {
        let mut counts = [0u32; 5];
        for c in MIX
            .iter()
            .enumerate()
            .flat_map(|(c, n)| std::iter::repeat_n(c, *n as usize))
        {
            counts[c] += 1;
        }
        assert_eq!(counts.iter().sum::<u32>(), 100);
        assert_eq!(counts, [45, 43, 4, 4, 4]);
    }

    #[test]
    fn think_times_are_negative_exponential_around_the_specs_means() {
        use rand::SeedableRng;
        let mut rng = SmallRng::seed_from_u64(11);
        for class in 0..5u8 {
            let mean = THINK_S[class as usize];
            let n = 20_000;
            let draws: Vec<f64> = (0..n).map(|_| think_time(&mut rng, class)).collect();
            let avg = draws.iter().sum::<f64>() / n as f64;
            assert!((avg - mean).abs() < 0.05 * mean, "{class}: {avg} vs {mean}");
            assert!(draws.iter().all(|t| (0.0..=10.0 * mean).contains(t)));
            // Exponential: about e^-1 of the draws exceed the mean.
            let above = draws.iter().filter(|t| **t > mean).count() as f64 / n as f64;
            assert!((above - (-1f64).exp()).abs() < 0.02, "{class}: {above}");
        }
    }

    #[test]
    fn only_conflicts_are_retried() {
        let q = |code: &str| SqlError::Query {
            context: "x".into(),
            message: "m".into(),
            code: Some(code.into()),
        };
        for c in ["40P01", "40001", "1213", "1205"] {
            assert!(conflict(&q(c)), "{c}");
        }
        for c in ["23505", "1062", "42P01"] {
            assert!(!conflict(&q(c)), "{c}");
        }
        assert!(!conflict(&SqlError::Verify("x".into())));
    }
}
