//! One client thread's view of the core workload: what `CoreWorkload.doTransaction`
//! decides before it calls the database (which operation, which key, how many records
//! to scan, which fields), without the database. Targets (SQL servers, key-value
//! stores) turn these decisions into their own statements.

use super::counter::AcknowledgedCounter;
use super::generator::{
    zeta, Hotspot, OpChooser, ScrambledZipfian, SkewedLatest, UniformLong, Zipfian,
};
use super::hash::push_key_name;
use super::params::{
    CoreParams, FieldLengthDistribution, InsertOrder, RequestDistribution, ScanLengthDistribution,
};
use super::YcsbError;
use rand::rngs::SmallRng;
use rand::{RngCore, SeedableRng};

/// One YCSB operation, numbered in YCSB's order so a target can keep a latency
/// histogram per operation in an array.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum YcsbOp {
    /// Read one record.
    Read,
    /// Update one record.
    Update,
    /// Insert a new record.
    Insert,
    /// Read a range of records from a key.
    Scan,
    /// Read a record, then update it, timed as one operation.
    ReadModifyWrite,
}

impl YcsbOp {
    /// Every operation, in index order.
    pub const ALL: [YcsbOp; 5] = [
        YcsbOp::Read,
        YcsbOp::Update,
        YcsbOp::Insert,
        YcsbOp::Scan,
        YcsbOp::ReadModifyWrite,
    ];

    /// The position in [`YcsbOp::ALL`].
    #[inline]
    pub fn index(self) -> usize {
        self as usize
    }

    /// The name YCSB's measurements print (`READ`, …, `READ-MODIFY-WRITE`), so
    /// reports line up with YCSB's.
    pub fn name(self) -> &'static str {
        match self {
            YcsbOp::Read => "READ",
            YcsbOp::Update => "UPDATE",
            YcsbOp::Insert => "INSERT",
            YcsbOp::Scan => "SCAN",
            YcsbOp::ReadModifyWrite => "READ-MODIFY-WRITE",
        }
    }
}

/// Which fields an operation touches: all of them, or one chosen uniformly (YCSB's
/// `readallfields=false` / `writeallfields=false`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FieldSet {
    /// Every field.
    All,
    /// Field `n` (0-based: `field0` …).
    One(usize),
}

/// What every thread of one run shares: the validated parameters and the insert
/// counter, plus the ζ sums that would cost O(records) per thread to compute. Build it
/// once per run phase and hand each thread an `Arc`.
#[derive(Debug)]
pub struct YcsbShared {
    params: CoreParams,
    inserts: AcknowledgedCounter,
    /// ζ over the `latest` zipfian's initial item count (the newest key at the start).
    latest_zetan: f64,
    latest_items: i64,
}

impl YcsbShared {
    /// For a run on a freshly loaded table: inserts start at `recordcount`, as YCSB's
    /// `transactioninsertkeysequence` does. Under `latest` this sums ζ over the loaded
    /// records once (YCSB does the same; about a second per 10^8 records), which every
    /// thread then shares.
    pub fn new(params: &CoreParams) -> Result<YcsbShared, YcsbError> {
        YcsbShared::with_first_insert(params, params.recordcount as i64)
    }

    /// For a run after others that inserted records: inserts start at `first_insert`
    /// (every key below it present), so keys are neither reused nor skipped.
    pub fn with_first_insert(
        params: &CoreParams,
        first_insert: i64,
    ) -> Result<YcsbShared, YcsbError> {
        params.validate()?;
        if first_insert < params.recordcount as i64 {
            return Err(YcsbError::Invalid(format!(
                "inserts would start at key {first_insert}, inside the {} loaded records",
                params.recordcount
            )));
        }
        let inserts = AcknowledgedCounter::new(first_insert);
        let latest_items = inserts.last_value();
        let latest_zetan = if params.requestdistribution == RequestDistribution::Latest {
            zeta(latest_items, params.zipfianconstant)
        } else {
            0.0
        };
        Ok(YcsbShared {
            params: params.clone(),
            inserts,
            latest_zetan,
            latest_items,
        })
    }

    /// The parameters, validated.
    pub fn params(&self) -> &CoreParams {
        &self.params
    }

    /// The run's insert counter.
    pub fn inserts(&self) -> &AcknowledgedCounter {
        &self.inserts
    }
}

enum Keys {
    Uniform(UniformLong),
    Zipfian(ScrambledZipfian),
    Latest(SkewedLatest),
    Hotspot(Hotspot),
}

enum Lengths {
    Constant(u64),
    Uniform(UniformLong),
    Zipfian(Zipfian),
}

impl Lengths {
    #[inline]
    fn next(&mut self, rng: &mut SmallRng) -> u64 {
        match self {
            Lengths::Constant(n) => *n,
            Lengths::Uniform(u) => u.next(rng) as u64,
            Lengths::Zipfian(z) => z.next(rng) as u64,
        }
    }
}

/// One client thread's generators, as `CoreWorkload.init` builds them and
/// `doTransaction*` uses them, with the thread's own seeded RNG.
pub struct YcsbThread {
    shared: std::sync::Arc<YcsbShared>,
    rng: SmallRng,
    ops: OpChooser,
    keys: Keys,
    scan: Lengths,
    field_len: Lengths,
    fields: UniformLong,
    readall: bool,
    writeall: bool,
    zeropadding: u32,
    ordered: bool,
}

impl YcsbThread {
    /// This thread's generators for `shared`'s parameters, drawing from `seed` (which
    /// should differ per thread and per run phase).
    pub fn new(shared: std::sync::Arc<YcsbShared>, seed: u64) -> Result<YcsbThread, YcsbError> {
        let p = shared.params.clone();
        let start = p.insertstart as i64;
        let count = p.insert_count() as i64;
        let theta = p.zipfianconstant;
        let keys = match p.requestdistribution {
            RequestDistribution::Uniform => {
                Keys::Uniform(UniformLong::new(start, start + count - 1))
            }
            RequestDistribution::Zipfian => {
                let (min, max) = p.zipfian_key_space();
                Keys::Zipfian(ScrambledZipfian::new(min, max, theta))
            }
            RequestDistribution::Latest => Keys::Latest(SkewedLatest::with_zetan(
                shared.latest_items,
                theta,
                shared.latest_zetan,
            )),
            RequestDistribution::Hotspot => Keys::Hotspot(Hotspot::new(
                start,
                start + count - 1,
                p.hotspotdatafraction,
                p.hotspotopnfraction,
            )?),
        };
        let (lo, hi) = (i64::from(p.minscanlength), i64::from(p.maxscanlength));
        let scan = match p.scanlengthdistribution {
            ScanLengthDistribution::Uniform => Lengths::Uniform(UniformLong::new(lo, hi)),
            ScanLengthDistribution::Zipfian => Lengths::Zipfian(Zipfian::new(lo, hi, theta)),
        };
        let (lo, hi) = (i64::from(p.minfieldlength), i64::from(p.fieldlength));
        let field_len = match p.fieldlengthdistribution {
            FieldLengthDistribution::Constant => Lengths::Constant(u64::from(p.fieldlength)),
            FieldLengthDistribution::Uniform => Lengths::Uniform(UniformLong::new(lo, hi)),
            FieldLengthDistribution::Zipfian => Lengths::Zipfian(Zipfian::new(lo, hi, theta)),
        };
        Ok(YcsbThread {
            ops: OpChooser::new(&p)?,
            keys,
            scan,
            field_len,
            fields: UniformLong::new(0, i64::from(p.fieldcount) - 1),
            readall: p.readallfields,
            writeall: p.writeallfields,
            zeropadding: p.zeropadding,
            ordered: p.insertorder == InsertOrder::Ordered,
            rng: SmallRng::seed_from_u64(seed),
            shared,
        })
    }

    /// The next operation, by the proportions.
    #[inline]
    pub fn next_op(&mut self) -> YcsbOp {
        self.ops.next(&mut self.rng)
    }

    /// The key number of an existing record for a read, update, scan or
    /// read-modify-write: `CoreWorkload.nextKeynum`. Keys beyond the acknowledged
    /// limit (a zipfian key space sized for future inserts) are drawn again; `latest`
    /// counts back from the limit.
    #[inline]
    pub fn next_keynum(&mut self) -> i64 {
        let inserts = &self.shared.inserts;
        match &mut self.keys {
            Keys::Latest(g) => g.next(&mut self.rng, inserts.last_value()),
            keys => loop {
                let k = match keys {
                    Keys::Uniform(g) => g.next(&mut self.rng),
                    Keys::Zipfian(g) => g.next(&mut self.rng),
                    Keys::Hotspot(g) => g.next(&mut self.rng),
                    Keys::Latest(_) => unreachable!("handled above"),
                };
                if k <= inserts.last_value() {
                    break k;
                }
            },
        }
    }

    /// The key number for a new record; [`Self::acknowledge`] it once the insert is
    /// over, failed or not, or reads will never reach the keys after it.
    #[inline]
    pub fn next_insert_keynum(&self) -> i64 {
        self.shared.inserts.next_value()
    }

    /// Marks the insert of `keynum` finished.
    #[inline]
    pub fn acknowledge(&self, keynum: i64) -> Result<(), YcsbError> {
        self.shared.inserts.acknowledge(keynum)
    }

    /// Records in the next scan.
    #[inline]
    pub fn scan_len(&mut self) -> u64 {
        self.scan.next(&mut self.rng)
    }

    /// The fields a read (or scan, or the read of a read-modify-write) asks for.
    #[inline]
    pub fn read_fields(&mut self) -> FieldSet {
        if self.readall {
            FieldSet::All
        } else {
            FieldSet::One(self.fields.next(&mut self.rng) as usize)
        }
    }

    /// The fields an update (or the write of a read-modify-write) writes.
    #[inline]
    pub fn update_fields(&mut self) -> FieldSet {
        if self.writeall {
            FieldSet::All
        } else {
            FieldSet::One(self.fields.next(&mut self.rng) as usize)
        }
    }

    /// The length of the next field value (`fieldlengthdistribution`).
    #[inline]
    pub fn field_len(&mut self) -> usize {
        self.field_len.next(&mut self.rng) as usize
    }

    /// Replaces `out` with a new field value of [`Self::field_len`] bytes.
    #[inline]
    pub fn fill_value(&mut self, out: &mut String) {
        let n = self.field_len();
        fill_value(&mut self.rng, out, n);
    }

    /// Replaces `out` with the key name of `keynum` under this run's insert order and
    /// padding.
    #[inline]
    pub fn key_name(&self, out: &mut String, keynum: i64) {
        out.clear();
        push_key_name(out, keynum, self.zeropadding, self.ordered);
    }

    /// The shared state.
    pub fn shared(&self) -> &YcsbShared {
        &self.shared
    }

    /// The thread's RNG, for choices a target adds of its own.
    pub fn rng(&mut self) -> &mut SmallRng {
        &mut self.rng
    }
}

/// Replaces `out` with `len` random bytes as YCSB's `RandomByteIterator` makes them: six
/// characters from each 32-bit draw, 5, 6 or 7 bits each added to ' ' (so 0x20–0x7f,
/// ASCII, valid text for any column). One draw per six bytes keeps value generation
/// far below the cost of sending the value.
pub fn fill_value<R: RngCore + ?Sized>(rng: &mut R, out: &mut String, len: usize) {
    out.clear();
    out.reserve(len);
    let mut left = len;
    while left > 0 {
        let r = rng.next_u32();
        let six = [
            r & 31,
            (r >> 5) & 63,
            (r >> 10) & 95,
            (r >> 15) & 31,
            (r >> 20) & 63,
            (r >> 25) & 95,
        ];
        for c in six.iter().take(left) {
            out.push(char::from(b' ' + *c as u8));
        }
        left = left.saturating_sub(6);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    fn thread(p: &CoreParams, seed: u64) -> YcsbThread {
        YcsbThread::new(Arc::new(YcsbShared::new(p).unwrap()), seed).unwrap()
    }

    #[test]
    fn op_mix_follows_each_preset() {
        for l in ['a', 'b', 'd', 'e', 'f'] {
            let p = CoreParams::preset(l).unwrap();
            let mut t = thread(&p, 1);
            let mut n = [0u32; 5];
            let draws = 100_000;
            for _ in 0..draws {
                n[t.next_op().index()] += 1;
            }
            let want = [
                p.readproportion,
                p.updateproportion,
                p.insertproportion,
                p.scanproportion,
                p.readmodifywriteproportion,
            ];
            for i in 0..5 {
                let got = f64::from(n[i]) / f64::from(draws);
                assert!(
                    (got - want[i]).abs() < 0.008,
                    "{l} {:?}: {got}",
                    YcsbOp::ALL[i]
                );
            }
        }
    }

    #[test]
    fn uniform_keys_are_flat_over_the_loaded_range() {
        let p = CoreParams {
            recordcount: 200,
            insertstart: 100,
            ..CoreParams::default()
        };
        let mut t = thread(&p, 3);
        let mut c = [0u32; 200];
        for _ in 0..100_000 {
            c[t.next_keynum() as usize] += 1;
        }
        assert!(c[..100].iter().all(|&x| x == 0));
        // 1000 per key expected; 5 sigma is about 158.
        assert!(c[100..].iter().all(|&x| (840..1160).contains(&x)), "{c:?}");
    }

    #[test]
    fn zipfian_keys_retry_past_the_limit_and_skew() {
        let mut p = CoreParams::preset('e').unwrap();
        p.recordcount = 1000;
        p.operationcount = 100_000; // 10000 expected new keys: most draws land beyond
        let mut t = thread(&p, 5);
        let mut c = vec![0u32; 1000];
        for _ in 0..50_000 {
            let k = t.next_keynum();
            assert!((0..1000).contains(&k), "{k}");
            c[k as usize] += 1;
        }
        c.sort_unstable_by(|a, b| b.cmp(a));
        assert!(c[0] > 20 * c[500].max(1), "{} vs {}", c[0], c[500]);
    }

    /// Workload D: most reads go to the newest keys, and follow them as inserts land.
    #[test]
    fn latest_reads_the_newest_keys() {
        let mut p = CoreParams::preset('d').unwrap();
        p.recordcount = 10_000;
        let shared = Arc::new(YcsbShared::new(&p).unwrap());
        let mut t = YcsbThread::new(shared.clone(), 8).unwrap();
        let newest_tenth = |t: &mut YcsbThread, last: i64| {
            let n = 20_000;
            let mut hits = 0;
            for _ in 0..n {
                let k = t.next_keynum();
                assert!(k >= 1 && k <= last, "{k} outside 1..={last}");
                hits += u32::from(k > last - last / 10);
            }
            f64::from(hits) / f64::from(n)
        };
        let share = newest_tenth(&mut t, 9999);
        // Zipfian 0.99 over 10^4 items: P(rank < 1000) = ζ(1000)/ζ(10^4) ≈ 0.74.
        let want = zeta(1000, 0.99) / zeta(9999, 0.99);
        assert!((share - want).abs() < 0.02, "{share} vs {want}");
        assert!(share > 0.7, "{share}");
        for _ in 0..5000 {
            let k = t.next_insert_keynum();
            t.acknowledge(k).unwrap();
        }
        assert_eq!(shared.inserts().last_value(), 14_999);
        let share = newest_tenth(&mut t, 14_999);
        assert!(share > 0.7, "after inserts: {share}");
    }

    #[test]
    fn scan_lengths_cover_one_to_max_uniformly() {
        let p = CoreParams::preset('e').unwrap();
        let mut t = thread(&p, 2);
        let n = 200_000u64;
        let (mut sum, mut lo, mut hi) = (0u64, u64::MAX, 0u64);
        for _ in 0..n {
            let s = t.scan_len();
            sum += s;
            lo = lo.min(s);
            hi = hi.max(s);
        }
        let mean = sum as f64 / n as f64;
        // Uniform over 1..=100: mean 50.5, sd 28.9, so the mean's sd is 0.065.
        assert!((mean - 50.5).abs() < 0.35, "{mean}");
        assert_eq!((lo, hi), (1, 100));
        let mut p = p;
        p.scanlengthdistribution = ScanLengthDistribution::Zipfian;
        let mut t = thread(&p, 2);
        let mut ones = 0;
        for _ in 0..10_000 {
            let s = t.scan_len();
            assert!((1..=100).contains(&s));
            ones += u32::from(s == 1);
        }
        // P(1) = 1/ζ(100, 0.99) ≈ 0.19.
        let want = 1.0 / zeta(100, 0.99);
        assert!((f64::from(ones) / 10_000.0 - want).abs() < 0.02, "{ones}");
    }

    #[test]
    fn field_choice_is_one_uniform_field_unless_all() {
        let mut p = CoreParams {
            readallfields: false,
            ..CoreParams::default()
        };
        let mut t = thread(&p, 6);
        let mut c = [0u32; 10];
        for _ in 0..50_000 {
            match t.update_fields() {
                FieldSet::One(i) => c[i] += 1,
                FieldSet::All => panic!("writeallfields is false"),
            }
            assert!(matches!(t.read_fields(), FieldSet::One(i) if i < 10));
        }
        assert!(c.iter().all(|&x| (4700..5300).contains(&x)), "{c:?}");
        p.writeallfields = true;
        p.readallfields = true;
        let mut t = thread(&p, 6);
        assert_eq!(t.update_fields(), FieldSet::All);
        assert_eq!(t.read_fields(), FieldSet::All);
    }

    #[test]
    fn values_are_ycsb_bytes_of_the_asked_length() {
        let mut rng = SmallRng::seed_from_u64(1);
        let mut s = String::new();
        let mut seen = [false; 128];
        for len in [0usize, 1, 5, 6, 7, 100, 1000] {
            fill_value(&mut rng, &mut s, len);
            assert_eq!(s.len(), len);
            for b in s.bytes() {
                assert!((0x20..=0x7f).contains(&b), "{b:#x}");
                seen[b as usize] = true;
            }
        }
        // The 7-bit positions reach the top of the range, as YCSB's do.
        assert!(seen[0x7f] || seen[0x7e]);
        let p = CoreParams {
            fieldlengthdistribution: FieldLengthDistribution::Uniform,
            minfieldlength: 10,
            fieldlength: 20,
            ..CoreParams::default()
        };
        let mut t = thread(&p, 4);
        for _ in 0..1000 {
            t.fill_value(&mut s);
            assert!((10..=20).contains(&s.len()));
        }
    }

    #[test]
    fn a_thread_writes_the_run_s_key_names() {
        let p = CoreParams {
            insertorder: InsertOrder::Ordered,
            zeropadding: 6,
            ..CoreParams::default()
        };
        let t = thread(&p, 1);
        let mut s = String::from("stale");
        t.key_name(&mut s, 42);
        assert_eq!(s, "user000042");
    }

    #[test]
    fn seeds_reproduce_and_differ() {
        let p = CoreParams::preset('a').unwrap();
        let run = |seed| {
            let mut t = thread(&p, seed);
            (0..100)
                .map(|_| (t.next_op(), t.next_keynum()))
                .collect::<Vec<_>>()
        };
        assert_eq!(run(1), run(1));
        assert_ne!(run(1), run(2));
    }
}
