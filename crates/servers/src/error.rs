//! What can go wrong with a server or a query, each naming what to fix.

use thiserror::Error;

/// A SQL target that could not be set up, reached or measured.
#[derive(Debug, Error)]
pub enum SqlError {
    /// The user asked for something that cannot work (a bad URL, a missing install, a
    /// port in use); exit 2.
    #[error("{0}")]
    Input(String),
    /// The server did not start, or died: what happened, then the last lines of its log.
    #[error("{what}{}", log_tail(.log))]
    Server {
        /// What failed.
        what: String,
        /// The last lines of the server's log, oldest first.
        log: Vec<String>,
    },
    /// A statement failed.
    #[error("{context}: {message}")]
    Query {
        /// Which statement or step.
        context: String,
        /// The server's or the driver's message.
        message: String,
        /// The server's error code (SQLSTATE or MySQL errno), for retry decisions.
        code: Option<String>,
    },
    /// Rows came back that the step's data rules out (a point query by a loaded key
    /// found nothing): the server or the harness is wrong, and the step fails.
    #[error("verification failed: {0}")]
    Verify(String),
}

fn log_tail(log: &[String]) -> String {
    if log.is_empty() {
        String::new()
    } else {
        format!("\n--- last lines of the server log ---\n{}", log.join("\n"))
    }
}

impl SqlError {
    /// A conflict a concurrent microbenchmark expects (deadlock, lock wait timeout,
    /// serialization failure, a key re-inserted by another thread first): sysbench
    /// retries these, and so does plumb, counting them.
    pub fn retryable(&self) -> bool {
        match self {
            SqlError::Query { code: Some(c), .. } => matches!(
                c.as_str(),
                // PostgreSQL: deadlock, serialization failure, unique violation.
                "40P01" | "40001" | "23505"
                // MySQL/MariaDB: deadlock, lock wait timeout, duplicate key, record changed.
                | "1213" | "1205" | "1062" | "1020"
            ),
            _ => false,
        }
    }
}
