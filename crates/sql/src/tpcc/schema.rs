//! The nine TPC-C tables (clause 1.3) with the spec's columns and primary keys, and the
//! two secondary indexes every TPC-C kit adds: customers by name (Payment and
//! Order-Status by last name) and orders by customer (Order-Status's last order). The
//! same DDL serves PostgreSQL and MySQL-protocol servers; only the timestamp type and
//! the engine clause differ. No foreign keys, as HammerDB builds it: the spec does not
//! ask for them, and their checks would add work no TPC-C result includes.

use super::TpccConfig;
use plumb_servers::client::SqlClient;
use plumb_servers::SqlError;

/// The tables, in the order they are created (and dropped).
pub const TABLES: [&str; 9] = [
    "warehouse",
    "district",
    "customer",
    "history",
    "new_order",
    "orders",
    "order_line",
    "item",
    "stock",
];

/// CREATE TABLE for `table`, `ts` being the server's timestamp type.
fn ddl(table: &str, ts: &str) -> String {
    let addr = |p: &str| {
        format!(
            "{p}_street_1 VARCHAR(20) NOT NULL, {p}_street_2 VARCHAR(20) NOT NULL, \
             {p}_city VARCHAR(20) NOT NULL, {p}_state CHAR(2) NOT NULL, {p}_zip CHAR(9) NOT NULL"
        )
    };
    match table {
        "warehouse" => format!(
            "CREATE TABLE warehouse (w_id INT NOT NULL, w_name VARCHAR(10) NOT NULL, {}, \
             w_tax DECIMAL(4,4) NOT NULL, w_ytd DECIMAL(12,2) NOT NULL, PRIMARY KEY (w_id))",
            addr("w")
        ),
        "district" => format!(
            "CREATE TABLE district (d_id INT NOT NULL, d_w_id INT NOT NULL, \
             d_name VARCHAR(10) NOT NULL, {}, d_tax DECIMAL(4,4) NOT NULL, \
             d_ytd DECIMAL(12,2) NOT NULL, d_next_o_id INT NOT NULL, \
             PRIMARY KEY (d_w_id, d_id))",
            addr("d")
        ),
        "customer" => format!(
            "CREATE TABLE customer (c_id INT NOT NULL, c_d_id INT NOT NULL, \
             c_w_id INT NOT NULL, c_first VARCHAR(16) NOT NULL, c_middle CHAR(2) NOT NULL, \
             c_last VARCHAR(16) NOT NULL, {}, c_phone CHAR(16) NOT NULL, \
             c_since {ts} NOT NULL, c_credit CHAR(2) NOT NULL, \
             c_credit_lim DECIMAL(12,2) NOT NULL, c_discount DECIMAL(4,4) NOT NULL, \
             c_balance DECIMAL(12,2) NOT NULL, c_ytd_payment DECIMAL(12,2) NOT NULL, \
             c_payment_cnt INT NOT NULL, c_delivery_cnt INT NOT NULL, \
             c_data VARCHAR(500) NOT NULL, PRIMARY KEY (c_w_id, c_d_id, c_id))",
            addr("c")
        ),
        "history" => format!(
            "CREATE TABLE history (h_c_id INT NOT NULL, h_c_d_id INT NOT NULL, \
             h_c_w_id INT NOT NULL, h_d_id INT NOT NULL, h_w_id INT NOT NULL, \
             h_date {ts} NOT NULL, h_amount DECIMAL(6,2) NOT NULL, \
             h_data VARCHAR(24) NOT NULL)"
        ),
        "new_order" => "CREATE TABLE new_order (no_o_id INT NOT NULL, no_d_id INT NOT NULL, \
             no_w_id INT NOT NULL, PRIMARY KEY (no_w_id, no_d_id, no_o_id))"
            .to_string(),
        "orders" => format!(
            "CREATE TABLE orders (o_id INT NOT NULL, o_d_id INT NOT NULL, \
             o_w_id INT NOT NULL, o_c_id INT NOT NULL, o_entry_d {ts} NOT NULL, \
             o_carrier_id INT NULL, o_ol_cnt INT NOT NULL, o_all_local INT NOT NULL, \
             PRIMARY KEY (o_w_id, o_d_id, o_id))"
        ),
        "order_line" => format!(
            "CREATE TABLE order_line (ol_o_id INT NOT NULL, ol_d_id INT NOT NULL, \
             ol_w_id INT NOT NULL, ol_number INT NOT NULL, ol_i_id INT NOT NULL, \
             ol_supply_w_id INT NOT NULL, ol_delivery_d {ts} NULL, \
             ol_quantity INT NOT NULL, ol_amount DECIMAL(6,2) NOT NULL, \
             ol_dist_info CHAR(24) NOT NULL, \
             PRIMARY KEY (ol_w_id, ol_d_id, ol_o_id, ol_number))"
        ),
        "item" => "CREATE TABLE item (i_id INT NOT NULL, i_im_id INT NOT NULL, \
             i_name VARCHAR(24) NOT NULL, i_price DECIMAL(5,2) NOT NULL, \
             i_data VARCHAR(50) NOT NULL, PRIMARY KEY (i_id))"
            .to_string(),
        "stock" => {
            let dists: String = (1..=10)
                .map(|d| format!("s_dist_{d:02} CHAR(24) NOT NULL, "))
                .collect();
            format!(
                "CREATE TABLE stock (s_i_id INT NOT NULL, s_w_id INT NOT NULL, \
                 s_quantity INT NOT NULL, {dists}s_ytd INT NOT NULL, \
                 s_order_cnt INT NOT NULL, s_remote_cnt INT NOT NULL, \
                 s_data VARCHAR(50) NOT NULL, PRIMARY KEY (s_w_id, s_i_id))"
            )
        }
        other => unreachable!("no TPC-C table {other}"),
    }
}

/// Drops the nine tables if they exist and creates them empty: run once, before the
/// loading threads start (they only insert).
pub fn create_schema(client: &mut dyn SqlClient, cfg: &TpccConfig) -> Result<(), SqlError> {
    let ts = if cfg.postgres {
        "TIMESTAMP"
    } else {
        "DATETIME"
    };
    for t in TABLES {
        client.batch(&format!("DROP TABLE IF EXISTS {t}"))?;
    }
    let engine = cfg.engine_clause.trim();
    for t in TABLES {
        let mut sql = ddl(t, ts);
        if !engine.is_empty() {
            sql.push(' ');
            sql.push_str(engine);
        }
        client.batch(&sql)?;
    }
    Ok(())
}

/// What follows the rows, once, when every loading thread is done: the two secondary
/// indexes (built once over the loaded rows, faster than kept up through the load), then
/// fresh statistics (VACUUM ANALYZE on PostgreSQL, which also sets the visibility map;
/// ANALYZE TABLE elsewhere), so the first transactions get the plans later ones will.
pub fn after_load(client: &mut dyn SqlClient, cfg: &TpccConfig) -> Result<(), SqlError> {
    client.batch("CREATE INDEX customer_name ON customer (c_w_id, c_d_id, c_last, c_first)")?;
    client.batch("CREATE INDEX orders_customer ON orders (o_w_id, o_d_id, o_c_id, o_id)")?;
    if cfg.postgres {
        for t in TABLES {
            client.batch(&format!("VACUUM ANALYZE {t}"))?;
        }
    } else {
        client.rows(&format!("ANALYZE TABLE {}", TABLES.join(", ")))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_table_has_its_primary_key_and_timestamp_type() {
        for t in TABLES {
            let s = ddl(t, "DATETIME");
            assert!(s.starts_with(&format!("CREATE TABLE {t} (")), "{s}");
            assert_eq!(s.contains("PRIMARY KEY"), t != "history", "{t}");
            assert!(!s.contains("TIMESTAMP"), "{s}");
            assert_eq!(s.matches('(').count(), s.matches(')').count(), "{s}");
        }
        let stock = ddl("stock", "TIMESTAMP");
        assert!(stock.contains("s_dist_01 ") && stock.contains("s_dist_10 "));
        assert!(ddl("orders", "TIMESTAMP").contains("o_entry_d TIMESTAMP NOT NULL"));
    }
}
