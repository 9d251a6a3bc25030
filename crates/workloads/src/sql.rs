//! The SQL microbenchmarks, with the names the seeds' InnoDB, MyRocks and Postgres
//! comparisons use, the group each is reported in, and their default order. What each
//! one sends (its statements, after sysbench's oltp_* scripts) lives with the SQL
//! workloads in `plumb-sql`; this is the part the store and the reports need.

use serde::{Deserialize, Serialize};
use std::fmt;
use std::str::FromStr;

/// How the seeds' tables group microbenchmarks for a relative-QPS summary.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum SqlGroup {
    /// Creating and loading the tables.
    Load,
    /// Point queries.
    Point,
    /// Range queries without aggregation.
    Range,
    /// Range queries with aggregation (the read-only family).
    RangeAgg,
    /// Writes (and read-write mixes).
    Write,
    /// The workloads the rest of the field publishes: pgbench's scripts, TPROC-C and
    /// YCSB's core workloads, each on its own tables.
    Standard,
}

impl SqlGroup {
    /// The heading printed in grouped tables.
    pub fn label(self) -> &'static str {
        match self {
            SqlGroup::Load => "load",
            SqlGroup::Point => "point queries",
            SqlGroup::Range => "range queries without aggregation",
            SqlGroup::RangeAgg => "range queries with aggregation",
            SqlGroup::Write => "writes",
            SqlGroup::Standard => "standard workloads",
        }
    }
}

macro_rules! sql_kinds {
    ($($v:ident = $name:literal, $group:ident, $doc:literal;)*) => {
        /// One SQL microbenchmark.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        pub enum SqlKind {
            $(#[doc = $doc] $v,)*
        }

        const SQL_ALL: &[(SqlKind, &str, SqlGroup)] = &[$((SqlKind::$v, $name, SqlGroup::$group),)*];
    };
}

sql_kinds! {
    Load = "load", Load, "Create the sbtest tables, bulk-load them, then build the secondary index on k.";
    PointQuery = "point-query", Point, "One row by primary key (sysbench oltp_point_select).";
    RandomPoints10 = "random-points-10", Point, "Rows by an IN-list of 10 values of the secondary key k (select_random_points).";
    RandomPoints100 = "random-points-100", Point, "As random-points-10 with 100 values.";
    RandomPoints1000 = "random-points-1000", Point, "As random-points-10 with 1000 values.";
    HotPoints = "hot-points", Point, "An IN-list of 100 primary keys from the same 100 rows: always cached, measures CPU per row.";
    PointsCoveredPk = "points-covered-pk", Point, "IN-list of 100 primary keys, selecting only the key: index only.";
    PointsNotcoveredPk = "points-notcovered-pk", Point, "IN-list of 100 primary keys, selecting a non-key column.";
    PointsCoveredSi = "points-covered-si", Point, "IN-list of 100 values of k, selecting only k: secondary index only.";
    PointsNotcoveredSi = "points-notcovered-si", Point, "IN-list of 100 values of k, selecting a column not in the index.";
    RangeCoveredPk = "range-covered-pk", Range, "A primary-key range of --range-size rows, selecting only the key.";
    RangeNotcoveredPk = "range-notcovered-pk", Range, "A primary-key range, selecting c.";
    RangeCoveredSi = "range-covered-si", Range, "A range of k, selecting only k.";
    RangeNotcoveredSi = "range-notcovered-si", Range, "A range of k, selecting c.";
    Scan = "scan", Range, "A full table scan (a predicate on the unindexed pad column that no row matches).";
    ReadOnly10 = "read-only-10", RangeAgg, "sysbench oltp_read_only with ranges of 10 rows.";
    ReadOnly100 = "read-only-100", RangeAgg, "sysbench oltp_read_only with ranges of 100 rows.";
    ReadOnly10000 = "read-only-10000", RangeAgg, "sysbench oltp_read_only with ranges of 10000 rows.";
    ReadOnlySimple = "read-only-simple", RangeAgg, "Only oltp_read_only's simple range: SELECT c ... BETWEEN.";
    ReadOnlySum = "read-only-sum", RangeAgg, "Only oltp_read_only's SUM(k) range.";
    ReadOnlyOrder = "read-only-order", RangeAgg, "Only oltp_read_only's ORDER BY c range.";
    ReadOnlyDistinct = "read-only-distinct", RangeAgg, "Only oltp_read_only's DISTINCT c range.";
    ReadOnlyCount = "read-only-count", RangeAgg, "COUNT(*) over a primary-key range.";
    ReadWrite10 = "read-write-10", Write, "sysbench oltp_read_write with ranges of 10 rows.";
    ReadWrite100 = "read-write-100", Write, "sysbench oltp_read_write with ranges of 100 rows.";
    WriteOnly = "write-only", Write, "sysbench oltp_write_only: update k, update c, delete and re-insert one row.";
    UpdateIndex = "update-index", Write, "UPDATE k = k + 1 by primary key (oltp_update_index): the secondary index changes.";
    UpdateNonindex = "update-nonindex", Write, "UPDATE c by primary key (oltp_update_non_index).";
    UpdateOne = "update-one", Write, "UPDATE c of one row, always the same: a hot row.";
    UpdateZipf = "update-zipf", Write, "update-nonindex with zipfian keys.";
    UpdateInlist = "update-inlist", Write, "UPDATE k = k + 1 over an IN-list of 100 primary keys.";
    Delete = "delete", Write, "DELETE one row by primary key (oltp_delete).";
    Insert = "insert", Write, "INSERT one new row (oltp_insert), keys past the loaded ones.";
    PgbenchLoad = "pgbench-load", Load, "Create and fill pgbench's tables as `pgbench -i` does, --scale × 100000 accounts.";
    TpcbLike = "tpcb-like", Standard, "pgbench's default script: update an account, read it, update its teller and branch, insert history.";
    SimpleUpdate = "simple-update", Standard, "pgbench -N: tpcb-like without the teller and branch updates.";
    SelectOnly = "select-only", Standard, "pgbench -S: one account's balance by key.";
    TpccLoad = "tpcc-load", Load, "Create and fill the TPC-C tables, --warehouses of them, by the spec's population rules.";
    TprocC = "tproc-c", Standard, "TPC-C's five transactions in the standard mix without keying or think time (HammerDB's TPROC-C), checked for consistency after.";
    YcsbLoad = "ycsb-load", Load, "YCSB's load phase: --recordcount records into usertable, keys in YCSB's hashed order.";
    YcsbA = "ycsb-a", Standard, "YCSB workload A: 50% reads, 50% updates, zipfian.";
    YcsbB = "ycsb-b", Standard, "YCSB workload B: 95% reads, 5% updates, zipfian.";
    YcsbC = "ycsb-c", Standard, "YCSB workload C: reads only, zipfian.";
    YcsbD = "ycsb-d", Standard, "YCSB workload D: 95% reads of the latest records, 5% inserts.";
    YcsbE = "ycsb-e", Standard, "YCSB workload E: 95% short scans, 5% inserts.";
    YcsbF = "ycsb-f", Standard, "YCSB workload F: 50% reads, 50% read-modify-writes, zipfian.";
    Script = "script", Standard, "pgbench script files and built-ins (--script FILE@W, --builtin NAME@W), run as pgbench runs them, on whatever tables they name.";
    LuaPrepare = "lua-prepare", Load, "The --lua script's prepare command, as `sysbench SCRIPT prepare` runs it (in parallel across --threads when the script says it may).";
    Lua = "lua", Standard, "A sysbench Lua script (--lua FILE, its options --lua-opt NAME=VALUE), run as `sysbench SCRIPT run` runs it: one event() per transaction.";
    CachedSelect = "cached-select", Point, "The CPU ceiling a database sees: trivial point SELECTs on a 1000-row table of its own (always cached), at 1, 2, 4 … clients up to twice the hardware threads (or --threads, if more); each client count is stored as a step and as this host's ceiling.";
}

impl SqlKind {
    /// The name users type and the store keeps.
    pub fn name(self) -> &'static str {
        SQL_ALL
            .iter()
            .find(|(k, ..)| *k == self)
            .map(|(_, n, _)| *n)
            .unwrap_or("?")
    }

    /// The group it is summarised in.
    pub fn group(self) -> SqlGroup {
        SQL_ALL
            .iter()
            .find(|(k, ..)| *k == self)
            .map(|(.., g)| *g)
            .unwrap_or(SqlGroup::Write)
    }

    /// Every microbenchmark, in declaration order.
    pub fn all() -> impl Iterator<Item = SqlKind> {
        SQL_ALL.iter().map(|(k, ..)| *k)
    }

    /// Its statements change rows (the read steps after them see another database).
    pub fn writes(self) -> bool {
        use SqlKind::*;
        match self.group() {
            SqlGroup::Write | SqlGroup::Load => true,
            SqlGroup::Standard => !matches!(self, SelectOnly | YcsbC),
            _ => false,
        }
    }

    /// The tables it runs on, by the load step that makes them: steps of one family
    /// need their own load (or tables made by the tool they come from).
    pub fn tables(self) -> SqlTables {
        use SqlKind::*;
        match self {
            PgbenchLoad | TpcbLike | SimpleUpdate | SelectOnly => SqlTables::Pgbench,
            TpccLoad | TprocC => SqlTables::Tpcc,
            YcsbLoad | YcsbA | YcsbB | YcsbC | YcsbD | YcsbE | YcsbF => SqlTables::Ycsb,
            CachedSelect => SqlTables::Ceiling,
            Script => SqlTables::Own,
            Lua | LuaPrepare => SqlTables::Lua,
            _ => SqlTables::Sysbench,
        }
    }

    /// The load step that makes this step's tables.
    pub fn load_of(self) -> SqlKind {
        match self.tables() {
            SqlTables::Sysbench => SqlKind::Load,
            SqlTables::Pgbench => SqlKind::PgbenchLoad,
            SqlTables::Tpcc => SqlKind::TpccLoad,
            SqlTables::Ycsb => SqlKind::YcsbLoad,
            // It makes its own table before it starts.
            SqlTables::Ceiling => SqlKind::CachedSelect,
            // The user's scripts run on tables made before (pgbench -i, pgbench-load, …).
            SqlTables::Own => SqlKind::Script,
            SqlTables::Lua => SqlKind::LuaPrepare,
        }
    }

    /// It creates and fills tables.
    pub fn is_load(self) -> bool {
        self.group() == SqlGroup::Load
    }

    /// The kind as the store keeps it: its name, except where another family has a step
    /// of the same name (YCSB's phases run on embedded engines too), `sql-` + name.
    pub fn stored_kind(self) -> &'static str {
        use SqlKind::*;
        match self {
            YcsbLoad => "sql-ycsb-load",
            YcsbA => "sql-ycsb-a",
            YcsbB => "sql-ycsb-b",
            YcsbC => "sql-ycsb-c",
            YcsbD => "sql-ycsb-d",
            YcsbE => "sql-ycsb-e",
            YcsbF => "sql-ycsb-f",
            _ => self.name(),
        }
    }

    /// The YCSB core workload letter of a `ycsb-X` step.
    pub fn ycsb_letter(self) -> Option<char> {
        use SqlKind::*;
        Some(match self {
            YcsbA => 'a',
            YcsbB => 'b',
            YcsbC => 'c',
            YcsbD => 'd',
            YcsbE => 'e',
            YcsbF => 'f',
            _ => return None,
        })
    }
}

impl fmt::Display for SqlKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Whose tables a SQL step runs on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum SqlTables {
    /// sysbench's sbtest1..N.
    Sysbench,
    /// pgbench's pgbench_accounts, _branches, _tellers, _history.
    Pgbench,
    /// TPC-C's nine tables.
    Tpcc,
    /// YCSB's usertable.
    Ycsb,
    /// plumb's own tiny table for the cached-SELECT ceiling, made by the step itself.
    Ceiling,
    /// Whatever tables the user's scripts name, made before the step.
    Own,
    /// Whatever tables a sysbench Lua script's prepare command makes.
    Lua,
}

/// A name that is not a SQL microbenchmark; lists the known ones.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("--steps: unknown microbenchmark {0:?}; known: {known}", known = known_sql_steps())]
pub struct UnknownSqlStep(pub String);

impl FromStr for SqlKind {
    type Err = UnknownSqlStep;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        SQL_ALL
            .iter()
            .find(|(_, n, _)| *n == s)
            .map(|(k, ..)| *k)
            .ok_or_else(|| UnknownSqlStep(s.to_string()))
    }
}

/// Every microbenchmark name, comma-separated.
pub fn known_sql_steps() -> String {
    SQL_ALL
        .iter()
        .map(|(_, n, _)| *n)
        .collect::<Vec<_>>()
        .join(",")
}

/// The `--steps` names, one line per set of tables they run on, for `plumb sql --help`:
/// made from the table of kinds, so a new step appears in the help without an edit.
pub fn steps_by_tables() -> String {
    [
        (SqlTables::Sysbench, "sysbench's microbenchmarks"),
        (SqlTables::Pgbench, "pgbench's scripts"),
        (SqlTables::Tpcc, "TPC-C"),
        (SqlTables::Ycsb, "YCSB"),
        (SqlTables::Ceiling, "the CPU ceiling"),
        (SqlTables::Own, "your own scripts"),
        (SqlTables::Lua, "a sysbench Lua script's"),
    ]
    .iter()
    .map(|(t, label)| {
        let names: Vec<&str> = SqlKind::all()
            .filter(|k| k.tables() == *t)
            .map(SqlKind::name)
            .collect();
        format!("  {label}: {}", names.join(", "))
    })
    .collect::<Vec<_>>()
    .join("\n")
}

/// One step of a SQL run: what it does and the name it is stored under (the read steps
/// run twice in the default order, `.pre` before the writes and `.post` after them, as
/// in the seeds' tables).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SqlStepPlan {
    /// The microbenchmark.
    #[serde(with = "kind_name")]
    pub kind: SqlKind,
    /// Stored name.
    pub name: String,
}

mod kind_name {
    use super::SqlKind;
    use serde::{Deserialize, Deserializer, Serializer};
    pub fn serialize<S: Serializer>(k: &SqlKind, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(k.name())
    }
    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<SqlKind, D::Error> {
        String::deserialize(d)?
            .parse()
            .map_err(serde::de::Error::custom)
    }
}

const READS: &[SqlKind] = &[
    SqlKind::PointQuery,
    SqlKind::PointsCoveredPk,
    SqlKind::PointsCoveredSi,
    SqlKind::PointsNotcoveredPk,
    SqlKind::PointsNotcoveredSi,
    SqlKind::RandomPoints10,
    SqlKind::RandomPoints100,
    SqlKind::RandomPoints1000,
    SqlKind::HotPoints,
    SqlKind::RangeCoveredPk,
    SqlKind::RangeCoveredSi,
    SqlKind::RangeNotcoveredPk,
    SqlKind::RangeNotcoveredSi,
    SqlKind::Scan,
    SqlKind::ReadOnlyCount,
    SqlKind::ReadOnlyDistinct,
    SqlKind::ReadOnlyOrder,
    SqlKind::ReadOnlySimple,
    SqlKind::ReadOnlySum,
    SqlKind::ReadOnly10,
    SqlKind::ReadOnly100,
    SqlKind::ReadOnly10000,
];

const WRITES: &[SqlKind] = &[
    SqlKind::ReadWrite10,
    SqlKind::ReadWrite100,
    SqlKind::UpdateInlist,
    SqlKind::UpdateIndex,
    SqlKind::UpdateNonindex,
    SqlKind::UpdateOne,
    SqlKind::UpdateZipf,
    SqlKind::WriteOnly,
];

/// The default order, after the seeds' own: load, the read steps (`.pre`), the writes,
/// the read steps again (`.post`: the same queries on a database that has taken
/// writes), then delete and insert, which change the row count.
pub fn default_order() -> Vec<SqlStepPlan> {
    let plan = |kind: SqlKind, suffix: &str| SqlStepPlan {
        kind,
        name: format!("{}{suffix}", kind.name()),
    };
    let mut v = vec![plan(SqlKind::Load, "")];
    v.extend(READS.iter().map(|k| plan(*k, ".pre")));
    v.extend(WRITES.iter().map(|k| plan(*k, "")));
    v.extend(READS.iter().map(|k| plan(*k, ".post")));
    v.push(plan(SqlKind::Delete, ""));
    v.push(plan(SqlKind::Insert, ""));
    v
}

/// Steps named on the command line (`--steps point-query,read-only-100`), each stored
/// under its own name; a name given twice gets `.2`, `.3` … after the first.
pub fn parse_steps(list: &str) -> Result<Vec<SqlStepPlan>, UnknownSqlStep> {
    let mut out: Vec<SqlStepPlan> = Vec::new();
    for raw in list.split(',').map(str::trim).filter(|s| !s.is_empty()) {
        let (base, suffix) = match raw.rsplit_once('.') {
            Some((b, s @ ("pre" | "post"))) => (b, format!(".{s}")),
            _ => (raw, String::new()),
        };
        let kind: SqlKind = base.parse()?;
        let mut name = format!("{}{suffix}", kind.name());
        let seen = out
            .iter()
            .filter(|p| p.name == name || p.name.starts_with(&format!("{name}.#")))
            .count();
        if seen > 0 {
            name = format!("{name}.#{}", seen + 1);
        }
        out.push(SqlStepPlan { kind, name });
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_and_are_unique() {
        let mut seen = std::collections::HashSet::new();
        for k in SqlKind::all() {
            assert!(seen.insert(k.name()), "{k} twice");
            assert_eq!(k.name().parse::<SqlKind>(), Ok(k));
        }
        assert_eq!(seen.len(), 50);
        // Every step of another family has its load, of its own tables; the
        // cached-SELECT ceiling makes its own table and is its own "load".
        for k in SqlKind::all() {
            assert_eq!(k.load_of().tables(), k.tables(), "{k}");
            if matches!(k.tables(), SqlTables::Ceiling | SqlTables::Own) {
                assert_eq!(k.load_of(), k);
            } else {
                assert!(k.load_of().is_load(), "{k}");
            }
        }
        let e = "point-queries".parse::<SqlKind>().unwrap_err().to_string();
        assert!(e.contains("--steps") && e.contains("point-query"), "{e}");
    }

    #[test]
    fn default_order_loads_first_and_repeats_reads_after_writes() {
        let o = default_order();
        assert_eq!(o[0].kind, SqlKind::Load);
        let names: Vec<&str> = o.iter().map(|p| p.name.as_str()).collect();
        let pre = names.iter().position(|n| *n == "point-query.pre").unwrap();
        let upd = names.iter().position(|n| *n == "update-index").unwrap();
        let post = names.iter().position(|n| *n == "point-query.post").unwrap();
        assert!(pre < upd && upd < post);
        assert_eq!(names.last(), Some(&"insert"));
        let unique: std::collections::HashSet<_> = names.iter().collect();
        assert_eq!(unique.len(), names.len(), "stored names must be unique");
        // Every sysbench microbenchmark is in the default order.
        for k in SqlKind::all().filter(|k| k.tables() == SqlTables::Sysbench) {
            assert!(o.iter().any(|p| p.kind == k), "{k} missing");
        }
    }

    #[test]
    fn steps_parse_with_suffixes_and_repeats() {
        let s = parse_steps("load, point-query,point-query,scan.post").unwrap();
        let names: Vec<&str> = s.iter().map(|p| p.name.as_str()).collect();
        assert_eq!(
            names,
            ["load", "point-query", "point-query.#2", "scan.post"]
        );
        assert!(parse_steps("load,nope").is_err());
    }
}
