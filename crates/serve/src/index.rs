//! What the pages look runs up by that the store cannot index: each run's plan identity
//! (its plan hashed without seed and repeat, `plumb_report::base::plan_identity`) and
//! the host its snapshot names. Both are fixed when a run starts, so the index reads
//! every run once, then only the runs added since, at each request.

use plumb_store::pages::RunHead;
use plumb_store::{Store, StoreError};
use std::cell::RefCell;
use std::collections::BTreeMap;

/// One run's fixed facts.
#[derive(Debug, Clone, PartialEq)]
pub struct Entry {
    /// Plan identity, when the run kept its plan.
    pub plan: Option<String>,
    /// Host name in its snapshot.
    pub host: Option<String>,
}

/// Run id → fixed facts, caught up at each request.
#[derive(Debug, Default)]
pub struct Index {
    runs: RefCell<BTreeMap<i64, Entry>>,
}

impl Index {
    /// Reads the runs added since the last call.
    pub fn refresh(&self, store: &Store) -> Result<(), StoreError> {
        let after = self.runs.borrow().keys().next_back().copied().unwrap_or(0);
        let keys = store.run_keys_after(after)?;
        let mut runs = self.runs.borrow_mut();
        for k in keys {
            let plan = k
                .plan
                .and_then(|p| serde_json::from_str::<serde_json::Value>(&p).ok())
                .and_then(|v| plumb_report::base::plan_identity(Some(&v)));
            runs.insert(k.id, Entry { plan, host: k.host });
        }
        Ok(())
    }

    /// A run's facts.
    pub fn get(&self, id: i64) -> Option<Entry> {
        self.runs.borrow().get(&id).cloned()
    }

    /// The runs of each plan, in id order.
    pub fn plans(&self) -> BTreeMap<String, Vec<i64>> {
        let mut out: BTreeMap<String, Vec<i64>> = BTreeMap::new();
        for (id, e) in self.runs.borrow().iter() {
            if let Some(p) = &e.plan {
                out.entry(p.clone()).or_default().push(*id);
            }
        }
        out
    }

    /// The runs of one plan, in id order.
    pub fn plan_runs(&self, plan: &str) -> Vec<i64> {
        self.runs
            .borrow()
            .iter()
            .filter(|(_, e)| e.plan.as_deref() == Some(plan))
            .map(|(id, _)| *id)
            .collect()
    }

    /// The runs of each host, in id order.
    pub fn hosts(&self) -> BTreeMap<String, Vec<i64>> {
        let mut out: BTreeMap<String, Vec<i64>> = BTreeMap::new();
        for (id, e) in self.runs.borrow().iter() {
            if let Some(h) = &e.host {
                out.entry(h.clone()).or_default().push(*id);
            }
        }
        out
    }
}

/// A plan's finished runs as groups of repeats (a run without a group is its own),
/// oldest first, each group's runs in id order; at most the newest `max` groups, and
/// only runs up to `upto` when given.
pub fn groups_of(
    ids: &[i64],
    heads: &BTreeMap<i64, RunHead>,
    upto: Option<i64>,
    max: usize,
) -> Vec<(i64, Vec<i64>)> {
    let mut groups: BTreeMap<i64, Vec<i64>> = BTreeMap::new();
    for id in ids {
        let Some(h) = heads.get(id) else { continue };
        if h.status != plumb_core::RunStatus::Ok || upto.is_some_and(|u| *id > u) {
            continue;
        }
        groups
            .entry(h.group_id.unwrap_or(*id))
            .or_default()
            .push(*id);
    }
    let skip = groups.len().saturating_sub(max);
    groups.into_iter().skip(skip).collect()
}
