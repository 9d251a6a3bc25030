//! A plan's identity: what makes two runs "the same plan" for a history (every night's
//! runs of one suite entry, every repeat): the stored plan without its seed (drawn from
//! the clock) and repeat index, hashed as plumb_plan::hash_of hashes a plan (xxh3 of its
//! JSON). Kept in `runs.plan_key` as each run begins, so a check or a page finds a
//! plan's runs by an index instead of reading every run.

/// The identity of a stored plan, or None for a plan that is not a JSON object.
pub fn plan_identity(plan: &serde_json::Value) -> Option<String> {
    let mut p = plan.clone();
    let o = p.as_object_mut()?;
    o.remove("seed");
    o.remove("repeat");
    let bytes = serde_json::to_vec(&p).ok()?;
    Some(format!("{:016x}", xxhash_rust::xxh3::xxh3_64(&bytes)))
}
