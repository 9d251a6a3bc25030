//! YCSB's core workload on an embedded engine: the load phase (`ycsb-load`, --num
//! records) and workloads A-F (`ycsb-a` … `ycsb-f`), with YCSB's generators from
//! [`plumb_workloads::ycsb`] and its operations as YCSB's RocksDB binding performs
//! them on a key-value store: a record is one value holding every field (each as a
//! 4-byte big-endian length and the name, then a 4-byte length and the bytes), an
//! update reads the record, replaces its fields and writes it back, a scan is a seek
//! and `len − 1` nexts, a read-modify-write is a read then an update. Latency is kept
//! per kind of operation beside the step's, as YCSB reports it.

use super::{Worker, Workload};
use crate::config::StepConfig;
use plumb_core::{Session, TargetError, Verification};
use plumb_workloads::distribution::worker_seed;
use plumb_workloads::ycsb::{
    load_keynums, CoreParams, FieldSet, YcsbError, YcsbOp, YcsbShared, YcsbThread,
};
use plumb_workloads::StepKind;
use std::sync::Arc;

/// The names of YCSB's operations as plumb stores them (the order of [`YcsbOp::ALL`]).
pub const YCSB_OPS: [&str; 5] = ["read", "update", "insert", "scan", "read-modify-write"];

/// YCSB's parameters for a step: its workload file's preset (the load's is A's: every
/// workload loads the same records), --num records, no operation count (a run phase
/// lasts the step, as YCSB's maxexecutiontime), then the user's properties.
pub fn params_of(
    kind: StepKind,
    num: u64,
    props: &[(String, String)],
) -> Result<CoreParams, YcsbError> {
    let mut p = CoreParams::preset(kind.ycsb_letter().unwrap_or('a'))?;
    p.set("recordcount", &num.to_string())?;
    p.set("operationcount", "0")?;
    p.set_all(props.iter().map(|(k, v)| (k.as_str(), v.as_str())))?;
    Ok(p)
}

fn option_error(e: YcsbError) -> TargetError {
    TargetError::Option {
        option: "--ycsb".into(),
        message: e.to_string(),
    }
}

/// One YCSB phase, driven on a key-value target.
pub struct YcsbStep {
    kind: StepKind,
    shared: Arc<YcsbShared>,
    /// Every record read was loaded: a miss is an error.
    must_exist: bool,
}

impl YcsbStep {
    /// The phase of `cfg` on the records `keys` says exist: inserts start at the first
    /// key no earlier phase inserted, and reads must find what `ycsb-load` wrote.
    pub fn new(cfg: &StepConfig, keys: &crate::KeySpace) -> Result<Self, TargetError> {
        let next_insert = keys.ycsb_next;
        let p = params_of(cfg.plan.kind, cfg.num, &cfg.ycsb).map_err(option_error)?;
        let first = next_insert
            .unwrap_or(p.recordcount as i64)
            .max(p.recordcount as i64);
        let shared = YcsbShared::with_first_insert(&p, first).map_err(option_error)?;
        Ok(YcsbStep {
            kind: cfg.plan.kind,
            shared: Arc::new(shared),
            must_exist: keys.ycsb_loaded,
        })
    }

    /// The first key no insert of this phase took: where the next phase's inserts go.
    pub fn next_insert(&self) -> i64 {
        self.shared.inserts().peek_next()
    }
}

/// One thread's buffers, reused by every op, and the field names, made once.
struct Buffers {
    key: String,
    field: String,
    record: Vec<u8>,
    old: Vec<u8>,
    /// `field0` … as YCSB names them.
    names: Vec<String>,
}

/// Appends a field named `name` with `value`, in the RocksDB binding's layout.
fn push_field(out: &mut Vec<u8>, name: &str, value: &[u8]) {
    out.extend_from_slice(&(name.len() as u32).to_be_bytes());
    out.extend_from_slice(name.as_bytes());
    out.extend_from_slice(&(value.len() as u32).to_be_bytes());
    out.extend_from_slice(value);
}

/// The value of field `want` in a record laid out by [`push_field`], if present.
fn field_of(record: &[u8], want: usize) -> Option<&[u8]> {
    let mut rest = record;
    let mut i = 0;
    while rest.len() >= 4 {
        let n = u32::from_be_bytes(rest[..4].try_into().ok()?) as usize;
        rest = rest.get(4 + n..)?;
        let m = u32::from_be_bytes(rest.get(..4)?.try_into().ok()?) as usize;
        let v = rest.get(4..4 + m)?;
        if i == want {
            return Some(v);
        }
        rest = &rest[4 + m..];
        i += 1;
    }
    None
}

impl Buffers {
    /// A whole new record of `fields` fields into `record`.
    fn new_record(&mut self, th: &mut YcsbThread, fields: usize) {
        self.record.clear();
        for i in 0..fields {
            th.fill_value(&mut self.field);
            push_field(&mut self.record, &self.names[i], self.field.as_bytes());
        }
    }

    /// `old` with the fields of `set` replaced by new values, into `record`.
    fn updated_record(&mut self, th: &mut YcsbThread, fields: usize, set: FieldSet) {
        self.record.clear();
        for i in 0..fields {
            let replace = match set {
                FieldSet::All => true,
                FieldSet::One(f) => f == i,
            };
            if replace {
                th.fill_value(&mut self.field);
                push_field(&mut self.record, &self.names[i], self.field.as_bytes());
            } else {
                let v = field_of(&self.old, i).unwrap_or(&[]);
                push_field(&mut self.record, &self.names[i], v);
            }
        }
    }
}

impl Workload for YcsbStep {
    fn run(&self, w: &mut Worker<'_>, verify: &mut Verification) -> Result<(), TargetError> {
        let cfg = w.cfg();
        let t = w.index();
        let p = self.shared.params().clone();
        let fields = p.fieldcount as usize;
        let seed = worker_seed(cfg.seed, cfg.index, t) ^ 0x7c5b;
        let mut th = YcsbThread::new(self.shared.clone(), seed).map_err(option_error)?;
        let mut b = Buffers {
            key: String::with_capacity(32),
            field: String::with_capacity(p.fieldlength as usize),
            record: Vec::with_capacity(fields * (p.fieldlength as usize + 16)),
            old: Vec::with_capacity(fields * (p.fieldlength as usize + 16)),
            names: (0..fields).map(|i| format!("field{i}")).collect(),
        };
        let stores = w.target().stores_data();
        let must_exist = stores && self.must_exist;
        let mut session = w.target().session()?;
        let s: &mut dyn Session = session.as_mut();
        if self.kind == StepKind::YcsbLoad {
            let keys = load_keynums(&p, t, cfg.threads);
            let mut next = keys.start;
            let quota = (keys.end - keys.start) as u64;
            return w.drive(quota, |c| {
                th.key_name(&mut b.key, next);
                next += 1;
                b.new_record(&mut th, fields);
                c.engine(|| s.put(b.key.as_bytes(), &b.record))?;
                Ok((1, (b.key.len() + b.record.len()) as u64))
            });
        }
        let quota = cfg.thread_quota(t);
        let mut v = Verification::default();
        let r = w.drive(quota, |c| {
            let op = th.next_op();
            c.set_class(op.index() as u8);
            let bytes = match op {
                YcsbOp::Read | YcsbOp::Update | YcsbOp::ReadModifyWrite => {
                    let k = th.next_keynum();
                    th.key_name(&mut b.key, k);
                    let want_old = op != YcsbOp::Read;
                    b.old.clear();
                    let old = &mut b.old;
                    let hit = c.engine(|| {
                        s.get(b.key.as_bytes(), &mut |val| {
                            if want_old {
                                old.extend_from_slice(val);
                            }
                        })
                    })?;
                    if stores {
                        v.verified += 1;
                        if !hit && must_exist {
                            v.missing += 1;
                        }
                    }
                    if op == YcsbOp::Read {
                        b.key.len() as u64
                    } else {
                        // YCSB's binding: read the record, replace its fields, put it.
                        let set = th.update_fields();
                        b.updated_record(&mut th, fields, set);
                        c.engine(|| s.put(b.key.as_bytes(), &b.record))?;
                        (b.key.len() + b.record.len()) as u64
                    }
                }
                YcsbOp::Insert => {
                    let k = th.next_insert_keynum();
                    th.key_name(&mut b.key, k);
                    b.new_record(&mut th, fields);
                    let r = c.engine(|| s.put(b.key.as_bytes(), &b.record));
                    // Acknowledged whatever happened, as YCSB does, so reads go on.
                    th.acknowledge(k).map_err(option_error)?;
                    r?;
                    (b.key.len() + b.record.len()) as u64
                }
                YcsbOp::Scan => {
                    let k = th.next_keynum();
                    th.key_name(&mut b.key, k);
                    let len = th.scan_len().max(1) as usize;
                    let n =
                        c.engine(|| s.scan(b.key.as_bytes(), len - 1, false, &mut |_, _| {}))?;
                    if stores {
                        v.verified += 1;
                        if n == 0 && must_exist {
                            v.missing += 1;
                        }
                    }
                    b.key.len() as u64
                }
            };
            Ok((1, bytes))
        });
        *verify = v;
        r
    }

    fn classes(&self) -> Vec<String> {
        if self.kind == StepKind::YcsbLoad {
            Vec::new()
        } else {
            YCSB_OPS.iter().map(|s| s.to_string()).collect()
        }
    }

    fn warms_up(&self) -> bool {
        self.kind != StepKind::YcsbLoad
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn records_keep_their_fields_and_op_names_follow_ycsbs_order() {
        let mut r = Vec::new();
        push_field(&mut r, "field0", b"abc");
        push_field(&mut r, "field1", b"");
        push_field(&mut r, "field12", b"xyz");
        assert_eq!(&r[..4], &6u32.to_be_bytes());
        assert_eq!(field_of(&r, 0), Some(&b"abc"[..]));
        assert_eq!(field_of(&r, 1), Some(&b""[..]));
        assert_eq!(field_of(&r, 2), Some(&b"xyz"[..]));
        assert_eq!(field_of(&r, 3), None);
        assert_eq!(field_of(&r[..5], 0), None);
        for (op, name) in YcsbOp::ALL.iter().zip(YCSB_OPS) {
            assert_eq!(op.name().to_lowercase().replace('_', "-"), name);
        }
    }
}
