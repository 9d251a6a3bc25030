//! The CPU ceiling a database sees: trivial point SELECTs on a table too small to leave
//! memory, from one client up to more clients than there are hardware threads.
//!
//! The deck's point: synthetic CPU loops no longer predict a database's speed; a
//! database answering heavy trivial cached SELECTs does, because it exercises what
//! every query pays (the protocol round trip, parsing a bound statement, a buffer pool
//! lookup, locking, the scheduler's switches between client and server). Each client
//! count is stored as a step and as this host's ceiling
//! (`cpu.cached_select_qps.SERVER.cN`), so a later step on the same host reads "its
//! queries/s were 91% of the cached-SELECT ceiling at 2 clients" and its CPU per query
//! against a trivial query's.
//!
//! The table is plumb's own (`plumb_select`, 1000 rows of 120 bytes, about 150 KB), so
//! the step needs no load and never touches a run's sysbench tables.

use crate::bench::Outcome;
use plumb_servers::client::{Endpoint, Param, SqlClient, Stmt};
use plumb_servers::SqlError;
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};

/// The table the step makes and reads.
pub const TABLE: &str = "plumb_select";
/// Its rows: few enough to stay in any buffer pool, many enough not to be one hot page.
pub const ROWS: i32 = 1000;

/// The stored name of the ceiling at `clients` on `server` (`postgres`, `innodb`, …).
pub fn ceiling_name(server: &str, clients: usize) -> String {
    format!("cpu.cached_select_qps.{server}.c{clients}")
}

/// The stored name of a trivial query's CPU (plumb's side + the server's) at `clients`.
pub fn cpu_ceiling_name(server: &str, clients: usize) -> String {
    format!("cpu.cached_select_cpu_us.{server}.c{clients}")
}

/// The client counts measured: 1, 2, 4 … up to twice the hardware threads (a server
/// thread per client, so beyond the threads they only queue), or `asked` when more,
/// which always ends the list.
pub fn clients(asked: usize, hw_threads: usize) -> Vec<usize> {
    let top = asked.max(2 * hw_threads.max(1));
    let mut v: Vec<usize> = std::iter::successors(Some(1usize), |n| n.checked_mul(2))
        .take_while(|&n| n < top)
        .collect();
    v.push(top);
    v
}

/// Makes the table afresh (dropping one a previous run left) and fills it with one
/// multi-row INSERT.
pub fn create_table(
    client: &mut dyn SqlClient,
    engine_clause: &str,
    postgres: bool,
) -> Result<(), SqlError> {
    client.batch(&format!("DROP TABLE IF EXISTS {TABLE}"))?;
    let int = if postgres { "INTEGER" } else { "INT" };
    client.batch(&format!(
        "CREATE TABLE {TABLE} (id {int} NOT NULL PRIMARY KEY, c CHAR(120) NOT NULL){engine_clause}"
    ))?;
    let mut sql = format!("INSERT INTO {TABLE} (id, c) VALUES ");
    for id in 1..=ROWS {
        if id > 1 {
            sql.push(',');
        }
        sql.push_str(&format!("({id}, '{:0>120}')", id));
    }
    client.batch(&sql)
}

/// One client: its connection, the prepared SELECT, its random ids.
pub struct CachedSelectThread {
    client: Box<dyn SqlClient>,
    select: Stmt,
    rng: SmallRng,
}

impl CachedSelectThread {
    /// Connects and prepares the statement once.
    pub fn new(ep: &Endpoint, seed: u64, thread: usize) -> Result<CachedSelectThread, SqlError> {
        let mut client = ep.connect()?;
        let select = client.prepare(&format!("SELECT c FROM {TABLE} WHERE id = ?"))?;
        Ok(CachedSelectThread {
            client,
            select,
            rng: SmallRng::seed_from_u64(seed ^ (thread as u64).wrapping_mul(0x9E37)),
        })
    }

    /// One SELECT of a random row; a row that is not there is an error (the table is
    /// the step's own, so it must be).
    pub fn event(&mut self) -> Result<Outcome, SqlError> {
        let id = self.rng.random_range(1..=ROWS);
        let rows = self.client.query(self.select, &[Param::Int(id)])?;
        if rows != 1 {
            return Err(SqlError::Verify(format!(
                "{TABLE}: id {id} returned {rows} rows, expected 1"
            )));
        }
        Ok(Outcome {
            queries: 1,
            rows,
            ops: 1,
            ..Outcome::default()
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clients_double_up_to_twice_the_threads_or_the_asked_count() {
        assert_eq!(clients(1, 2), [1, 2, 4]);
        assert_eq!(clients(1, 1), [1, 2]);
        assert_eq!(clients(1, 3), [1, 2, 4, 6]);
        assert_eq!(clients(16, 2), [1, 2, 4, 8, 16]);
        assert_eq!(clients(0, 0), [1, 2]);
        assert_eq!(
            ceiling_name("postgres", 4),
            "cpu.cached_select_qps.postgres.c4"
        );
    }
}
