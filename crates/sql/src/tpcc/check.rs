//! The consistency conditions of clause 3.3.2 (all but 11, which holds only until the
//! first Delivery), each one SQL query that returns the first offending warehouse,
//! district or row with both sides' values, and the fixed cardinalities of clause 1.2.1.
//! Why all of them: a benchmark whose server lost an update or broke a lock would
//! otherwise report a good number for wrong work; these catch it after any run. Each
//! reads whole tables (ORDER_LINE a few times), so they belong before or after a
//! measured step, never inside one.

use super::{TpccConfig, CUSTOMERS, DISTRICTS, ITEMS};
use plumb_servers::client::SqlClient;
use plumb_servers::SqlError;

/// One condition's verdict.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CheckResult {
    /// Where the spec states it: `3.3.2.1` … `3.3.2.12`, or `1.2.1` for the tables'
    /// cardinalities.
    pub clause: &'static str,
    /// What it asserts, in the spec's column names.
    pub name: &'static str,
    /// It held everywhere.
    pub passed: bool,
    /// Where it failed first (lowest warehouse, district, row).
    pub failure: Option<CheckFailure>,
}

/// The first place a condition does not hold, with both sides' values there.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CheckFailure {
    /// The warehouse (0 for a table-wide count such as ITEM's).
    pub warehouse: i64,
    /// The district, for per-district and per-row conditions.
    pub district: Option<i64>,
    /// The row within the district (what it is, its id): an order or a customer.
    pub row: Option<(&'static str, i64)>,
    /// The left side and its value, e.g. `W_YTD = 300012.50`.
    pub left: String,
    /// The right side(s) and their values, e.g. `sum(D_YTD) = 300000.00`.
    pub right: String,
}

impl std::fmt::Display for CheckResult {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} {}: ", self.clause, self.name)?;
        match &self.failure {
            None => f.write_str("ok"),
            Some(x) => {
                write!(f, "FAILED at warehouse {}", x.warehouse)?;
                if let Some(d) = x.district {
                    write!(f, " district {d}")?;
                }
                if let Some((what, id)) = x.row {
                    write!(f, " {what} {id}")?;
                }
                write!(f, ": {} but {}", x.left, x.right)
            }
        }
    }
}

/// A condition: its query returns the first offender as warehouse, district (or
/// NULL), row id (or NULL), the left side, then one column per right side.
struct Cond {
    clause: &'static str,
    name: &'static str,
    row: Option<&'static str>,
    left: &'static str,
    right: &'static [&'static str],
    sql: &'static str,
}

/// Delivered order lines' amounts by customer, as rows of (w, d, c, 0, amount) for the
/// UNION ALL of conditions 10 and 12. Why a UNION ALL summed per customer rather than
/// joins of per-customer sums: PostgreSQL misjudged such a join's size and ran it as a
/// nested loop (36 s for one warehouse); sums of one stream cannot go that way.
macro_rules! delivered {
    () => {
        "SELECT o_w_id, o_d_id, o_c_id, 0, ol_amount FROM orders JOIN order_line \
         ON ol_w_id = o_w_id AND ol_d_id = o_d_id AND ol_o_id = o_id \
         WHERE ol_delivery_d IS NOT NULL"
    };
}

const CONDITIONS: &[Cond] = &[
    Cond {
        clause: "3.3.2.1",
        name: "W_YTD = sum(D_YTD)",
        row: None,
        left: "W_YTD",
        right: &["sum(D_YTD)"],
        sql: "SELECT w_id, NULL, NULL, w_ytd, s FROM warehouse LEFT JOIN \
              (SELECT d_w_id, SUM(d_ytd) AS s FROM district GROUP BY d_w_id) x \
              ON d_w_id = w_id WHERE s IS NULL OR w_ytd <> s ORDER BY w_id LIMIT 1",
    },
    Cond {
        clause: "3.3.2.2",
        name: "D_NEXT_O_ID - 1 = max(O_ID) = max(NO_O_ID)",
        row: None,
        left: "D_NEXT_O_ID - 1",
        right: &["max(O_ID)", "max(NO_O_ID)"],
        // A district whose every order is delivered has no max(NO_O_ID) to compare.
        sql: "SELECT d_w_id, d_id, NULL, d_next_o_id - 1, mo, mno FROM district \
              LEFT JOIN (SELECT o_w_id, o_d_id, MAX(o_id) AS mo FROM orders \
              GROUP BY o_w_id, o_d_id) o ON o_w_id = d_w_id AND o_d_id = d_id \
              LEFT JOIN (SELECT no_w_id, no_d_id, MAX(no_o_id) AS mno FROM new_order \
              GROUP BY no_w_id, no_d_id) n ON no_w_id = d_w_id AND no_d_id = d_id \
              WHERE mo IS NULL OR d_next_o_id - 1 <> mo OR (mno IS NOT NULL AND mno <> mo) \
              ORDER BY d_w_id, d_id LIMIT 1",
    },
    Cond {
        clause: "3.3.2.3",
        name: "max(NO_O_ID) - min(NO_O_ID) + 1 = count(NEW_ORDER)",
        row: None,
        left: "max(NO_O_ID) - min(NO_O_ID) + 1",
        right: &["count(NEW_ORDER)"],
        sql: "SELECT no_w_id, no_d_id, NULL, MAX(no_o_id) - MIN(no_o_id) + 1, COUNT(*) \
              FROM new_order GROUP BY no_w_id, no_d_id \
              HAVING MAX(no_o_id) - MIN(no_o_id) + 1 <> COUNT(*) \
              ORDER BY no_w_id, no_d_id LIMIT 1",
    },
    Cond {
        clause: "3.3.2.4",
        name: "sum(O_OL_CNT) = count(ORDER_LINE)",
        row: None,
        left: "sum(O_OL_CNT)",
        right: &["count(ORDER_LINE)"],
        sql: "SELECT o.w, o.d, NULL, o.s, l.c FROM (SELECT o_w_id AS w, o_d_id AS d, \
              SUM(o_ol_cnt) AS s FROM orders GROUP BY o_w_id, o_d_id) o LEFT JOIN \
              (SELECT ol_w_id AS w, ol_d_id AS d, COUNT(*) AS c FROM order_line \
              GROUP BY ol_w_id, ol_d_id) l ON l.w = o.w AND l.d = o.d \
              WHERE l.c IS NULL OR o.s <> l.c ORDER BY o.w, o.d LIMIT 1",
    },
    Cond {
        clause: "3.3.2.5",
        name: "O_CARRIER_ID is NULL exactly for orders in NEW_ORDER",
        row: Some("order"),
        left: "O_CARRIER_ID",
        right: &["NO_O_ID"],
        sql: "SELECT o_w_id, o_d_id, o_id, o_carrier_id, no_o_id FROM orders \
              LEFT JOIN new_order ON no_w_id = o_w_id AND no_d_id = o_d_id AND no_o_id = o_id \
              WHERE (o_carrier_id IS NULL AND no_o_id IS NULL) \
              OR (o_carrier_id IS NOT NULL AND no_o_id IS NOT NULL) \
              ORDER BY o_w_id, o_d_id, o_id LIMIT 1",
    },
    Cond {
        clause: "3.3.2.6",
        name: "O_OL_CNT = the order's count(ORDER_LINE)",
        row: Some("order"),
        left: "O_OL_CNT",
        right: &["count(ORDER_LINE)"],
        sql: "SELECT o_w_id, o_d_id, o_id, o_ol_cnt, c FROM orders LEFT JOIN \
              (SELECT ol_w_id, ol_d_id, ol_o_id, COUNT(*) AS c FROM order_line \
              GROUP BY ol_w_id, ol_d_id, ol_o_id) l \
              ON ol_w_id = o_w_id AND ol_d_id = o_d_id AND ol_o_id = o_id \
              WHERE c IS NULL OR o_ol_cnt <> c ORDER BY o_w_id, o_d_id, o_id LIMIT 1",
    },
    Cond {
        clause: "3.3.2.7",
        name: "OL_DELIVERY_D is NULL exactly when O_CARRIER_ID is",
        row: Some("order"),
        left: "O_CARRIER_ID",
        right: &["OL_DELIVERY_D"],
        sql: "SELECT o_w_id, o_d_id, o_id, o_carrier_id, ol_delivery_d FROM orders \
              JOIN order_line ON ol_w_id = o_w_id AND ol_d_id = o_d_id AND ol_o_id = o_id \
              WHERE (o_carrier_id IS NULL AND ol_delivery_d IS NOT NULL) \
              OR (o_carrier_id IS NOT NULL AND ol_delivery_d IS NULL) \
              ORDER BY o_w_id, o_d_id, o_id LIMIT 1",
    },
    Cond {
        clause: "3.3.2.8",
        name: "W_YTD = sum(H_AMOUNT)",
        row: None,
        left: "W_YTD",
        right: &["sum(H_AMOUNT)"],
        sql: "SELECT w_id, NULL, NULL, w_ytd, s FROM warehouse LEFT JOIN \
              (SELECT h_w_id, SUM(h_amount) AS s FROM history GROUP BY h_w_id) h \
              ON h_w_id = w_id WHERE s IS NULL OR w_ytd <> s ORDER BY w_id LIMIT 1",
    },
    Cond {
        clause: "3.3.2.9",
        name: "D_YTD = sum(H_AMOUNT)",
        row: None,
        left: "D_YTD",
        right: &["sum(H_AMOUNT)"],
        sql: "SELECT d_w_id, d_id, NULL, d_ytd, s FROM district LEFT JOIN \
              (SELECT h_w_id, h_d_id, SUM(h_amount) AS s FROM history \
              GROUP BY h_w_id, h_d_id) h ON h_w_id = d_w_id AND h_d_id = d_id \
              WHERE s IS NULL OR d_ytd <> s ORDER BY d_w_id, d_id LIMIT 1",
    },
    Cond {
        clause: "3.3.2.10",
        name: "C_BALANCE = sum(delivered OL_AMOUNT) - sum(H_AMOUNT)",
        row: Some("customer"),
        left: "C_BALANCE",
        right: &["sum(delivered OL_AMOUNT) - sum(H_AMOUNT)"],
        sql: concat!(
            "SELECT w, d, c, SUM(l), SUM(r) FROM (\
             SELECT c_w_id AS w, c_d_id AS d, c_id AS c, c_balance AS l, 0 AS r FROM customer \
             UNION ALL ",
            delivered!(),
            " UNION ALL SELECT h_c_w_id, h_c_d_id, h_c_id, 0, -h_amount FROM history) x \
             GROUP BY w, d, c HAVING SUM(l) <> SUM(r) ORDER BY w, d, c LIMIT 1"
        ),
    },
    Cond {
        clause: "3.3.2.12",
        name: "C_BALANCE + C_YTD_PAYMENT = sum(delivered OL_AMOUNT)",
        row: Some("customer"),
        left: "C_BALANCE + C_YTD_PAYMENT",
        right: &["sum(delivered OL_AMOUNT)"],
        sql: concat!(
            "SELECT w, d, c, SUM(l), SUM(r) FROM (\
             SELECT c_w_id AS w, c_d_id AS d, c_id AS c, c_balance + c_ytd_payment AS l, \
             0 AS r FROM customer UNION ALL ",
            delivered!(),
            ") x GROUP BY w, d, c HAVING SUM(l) <> SUM(r) ORDER BY w, d, c LIMIT 1"
        ),
    },
];

/// A value as the report shows it.
fn shown(v: &Option<String>) -> &str {
    v.as_deref().unwrap_or("NULL")
}

/// Checks every condition and returns one verdict each, in clause order: first the
/// cardinalities of the tables the transactions never grow or shrink (ITEM, WAREHOUSE,
/// DISTRICT, CUSTOMER, STOCK for `cfg.warehouses`), then 3.3.2.1-10 and 12. A query
/// that fails is an error; a condition that does not hold is a failed verdict.
pub fn check(client: &mut dyn SqlClient, cfg: &TpccConfig) -> Result<Vec<CheckResult>, SqlError> {
    let mut out = vec![cardinalities(client, cfg)?];
    for c in CONDITIONS {
        let rows = client.rows(c.sql)?;
        let failure = rows.first().map(|r| {
            let v = |i: usize| r.get(i).and_then(|(_, v)| v.clone());
            let id = |i: usize| v(i).and_then(|s| s.parse::<i64>().ok());
            let right: Vec<String> = c
                .right
                .iter()
                .enumerate()
                .map(|(k, name)| format!("{name} = {}", shown(&v(4 + k))))
                .collect();
            CheckFailure {
                warehouse: id(0).unwrap_or(0),
                district: id(1),
                row: c.row.zip(id(2)),
                left: format!("{} = {}", c.left, shown(&v(3))),
                right: right.join(", "),
            }
        });
        out.push(CheckResult {
            clause: c.clause,
            name: c.name,
            passed: failure.is_none(),
            failure,
        });
    }
    Ok(out)
}

/// Clause 1.2.1's fixed cardinalities, the first table that is off reported.
fn cardinalities(client: &mut dyn SqlClient, cfg: &TpccConfig) -> Result<CheckResult, SqlError> {
    let w = i64::from(cfg.warehouses);
    let want = [
        ("item", i64::from(ITEMS)),
        ("warehouse", w),
        ("district", w * i64::from(DISTRICTS)),
        ("customer", w * i64::from(DISTRICTS * CUSTOMERS)),
        ("stock", w * i64::from(ITEMS)),
    ];
    let mut failure = None;
    for (table, n) in want {
        let rows = client.rows(&format!("SELECT COUNT(*) FROM {table}"))?;
        let got = rows
            .first()
            .and_then(|r| r.first())
            .and_then(|(_, v)| v.as_deref())
            .and_then(|s| s.parse::<i64>().ok())
            .unwrap_or(-1);
        if got != n && failure.is_none() {
            failure = Some(CheckFailure {
                warehouse: 0,
                district: None,
                row: None,
                left: format!("count({}) = {got}", table.to_uppercase()),
                right: format!("{n} for {w} warehouses"),
            });
        }
    }
    Ok(CheckResult {
        clause: "1.2.1",
        name: "ITEM, WAREHOUSE, DISTRICT, CUSTOMER and STOCK hold their fixed row counts",
        passed: failure.is_none(),
        failure,
    })
}
