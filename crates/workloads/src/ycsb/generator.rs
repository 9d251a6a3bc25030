//! YCSB's number generators (`site.ycsb.generator`), one object per thread. The
//! zipfian is Gray et al.'s ("Quickly Generating Billion-Record Synthetic Databases",
//! SIGMOD 1994) with YCSB's constants, and keeps YCSB's quirks where they change which
//! keys are drawn: the eta recomputed after the item count grows still uses the item
//! count the generator was built with, and the scrambled zipfian runs over
//! `ITEM_COUNT + 1` items with the zeta YCSB precomputed for `ITEM_COUNT`. Matching
//! YCSB matters more here than tidiness: these decide how hot the hot keys are.

use super::hash::fnvhash64;
use super::params::CoreParams;
use super::thread::YcsbOp;
use super::YcsbError;
use rand::Rng;

/// YCSB's zipfian exponent (`ZipfianGenerator.ZIPFIAN_CONSTANT`).
pub const ZIPFIAN_CONSTANT: f64 = 0.99;

/// The item count YCSB's scrambled zipfian draws ranks from before hashing them onto
/// the key range (`ScrambledZipfianGenerator.ITEM_COUNT`): large and fixed, so which keys
/// are hot does not move when the key range grows.
pub const SCRAMBLED_ITEM_COUNT: i64 = 10_000_000_000;

/// YCSB's precomputed zeta over [`SCRAMBLED_ITEM_COUNT`] items at θ = 0.99
/// (`ScrambledZipfianGenerator.ZETAN`): summing 10^10 terms at start-up would take
/// minutes.
pub const SCRAMBLED_ZETAN: f64 = 26.469_028_201_783_02;

/// ζ(n, θ) = Σ_{i=1..n} 1/i^θ, summed in YCSB's order (`zetastatic(n, theta)`), so the
/// generator's constants match YCSB's to the last bits that floating point allows.
pub fn zeta(n: i64, theta: f64) -> f64 {
    zeta_from(0, n, theta, 0.0)
}

/// ζ grown from `st` items (whose sum is `initial`) to `n` items: YCSB's incremental
/// zeta, what lets `latest` follow a growing key range at the cost of the new terms only.
pub fn zeta_from(st: i64, n: i64, theta: f64, initial: f64) -> f64 {
    let mut sum = initial;
    let mut i = st;
    while i < n {
        sum += 1.0 / ((i + 1) as f64).powf(theta);
        i += 1;
    }
    sum
}

/// ζ(n, θ) for any n in constant time: the first terms summed, the rest by the
/// Euler–Maclaurin formula (three Bernoulli corrections). Used where YCSB would sum
/// 10^10 terms (a scrambled zipfian at a θ other than 0.99); accurate to about 1e-15
/// relative, which is finer than the rounding such a long sum accumulates.
pub fn zeta_large(n: i64, theta: f64) -> f64 {
    const HEAD: i64 = 1000;
    if n <= HEAD {
        return zeta(n, theta);
    }
    let s = theta;
    let head = zeta(HEAD - 1, s); // 1..HEAD-1 exactly
    let (m, nn) = (HEAD as f64, n as f64);
    let f = |x: f64| x.powf(-s);
    let integral = if (s - 1.0).abs() < 1e-15 {
        (nn / m).ln()
    } else {
        (nn.powf(1.0 - s) - m.powf(1.0 - s)) / (1.0 - s)
    };
    // Derivatives of x^-s of orders 1, 3 and 5.
    let d1 = |x: f64| -s * x.powf(-s - 1.0);
    let d3 = |x: f64| -s * (s + 1.0) * (s + 2.0) * x.powf(-s - 3.0);
    let d5 = |x: f64| -s * (s + 1.0) * (s + 2.0) * (s + 3.0) * (s + 4.0) * x.powf(-s - 5.0);
    let tail = integral + (f(m) + f(nn)) / 2.0 + (d1(nn) - d1(m)) / 12.0 - (d3(nn) - d3(m)) / 720.0
        + (d5(nn) - d5(m)) / 30240.0;
    head + tail
}

/// YCSB's `ZipfianGenerator`: item `base` most popular, then `base + 1`, and so on.
/// Per thread, where YCSB shares one (its state is only the zeta, grown as items grow).
#[derive(Debug, Clone)]
pub struct Zipfian {
    items: i64,
    base: i64,
    theta: f64,
    zeta2theta: f64,
    alpha: f64,
    zetan: f64,
    eta: f64,
    count_for_zeta: i64,
}

impl Zipfian {
    /// Items `min..=max` at exponent `theta`, computing ζ over them (O(items) once).
    pub fn new(min: i64, max: i64, theta: f64) -> Zipfian {
        Zipfian::with_zetan(min, max, theta, zeta(max - min + 1, theta))
    }

    /// Items `min..=max` with ζ already known: YCSB's constructor taking `zetan`, used by
    /// the scrambled zipfian and wherever many threads need the same generator.
    pub fn with_zetan(min: i64, max: i64, theta: f64, zetan: f64) -> Zipfian {
        let items = max - min + 1;
        let zeta2theta = zeta(2, theta);
        Zipfian {
            items,
            base: min,
            theta,
            zeta2theta,
            alpha: 1.0 / (1.0 - theta),
            zetan,
            eta: eta(items, theta, zeta2theta, zetan),
            count_for_zeta: items,
        }
    }

    /// The next item of `items` (the count it was built with).
    #[inline]
    pub fn next<R: Rng + ?Sized>(&mut self, rng: &mut R) -> i64 {
        self.next_of(rng, self.items)
    }

    /// The next item of `itemcount` items: YCSB's `nextLong(itemcount)`. A larger count
    /// than before grows ζ incrementally (as `latest` needs while inserts land); a
    /// smaller one keeps ζ, as YCSB does unless told otherwise.
    #[inline]
    pub fn next_of<R: Rng + ?Sized>(&mut self, rng: &mut R, itemcount: i64) -> i64 {
        if itemcount > self.count_for_zeta {
            self.grow(itemcount);
        }
        self.pick(rng.random::<f64>(), itemcount)
    }

    #[cold]
    fn grow(&mut self, itemcount: i64) {
        self.zetan = zeta_from(self.count_for_zeta, itemcount, self.theta, self.zetan);
        self.count_for_zeta = itemcount;
        // YCSB recomputes eta from the construction-time item count, not `itemcount`.
        self.eta = eta(self.items, self.theta, self.zeta2theta, self.zetan);
    }

    /// The item a uniform draw `u` in [0, 1) maps to (seedless: for tests and vectors).
    #[inline]
    pub fn pick(&self, u: f64, itemcount: i64) -> i64 {
        let uz = u * self.zetan;
        if uz < 1.0 {
            return self.base;
        }
        if uz < 1.0 + 0.5f64.powf(self.theta) {
            return self.base + 1;
        }
        self.base + (itemcount as f64 * (self.eta * u - self.eta + 1.0).powf(self.alpha)) as i64
    }

    /// ζ as it stands (YCSB's `zetan`).
    pub fn zetan(&self) -> f64 {
        self.zetan
    }
    /// YCSB's `eta`.
    pub fn eta(&self) -> f64 {
        self.eta
    }
    /// YCSB's `alpha` = 1/(1−θ).
    pub fn alpha(&self) -> f64 {
        self.alpha
    }
    /// YCSB's `theta`.
    pub fn theta(&self) -> f64 {
        self.theta
    }
    /// ζ(2, θ), YCSB's `zeta2theta`.
    pub fn zeta2theta(&self) -> f64 {
        self.zeta2theta
    }
    /// The item count it was built with (YCSB's `items`).
    pub fn items(&self) -> i64 {
        self.items
    }
    /// The most popular item (YCSB's `base`).
    pub fn base(&self) -> i64 {
        self.base
    }
    /// The item count ζ covers now (YCSB's `countforzeta`).
    pub fn count_for_zeta(&self) -> i64 {
        self.count_for_zeta
    }
}

fn eta(items: i64, theta: f64, zeta2theta: f64, zetan: f64) -> f64 {
    (1.0 - (2.0 / items as f64).powf(1.0 - theta)) / (1.0 - zeta2theta / zetan)
}

/// YCSB's `ScrambledZipfianGenerator`: zipfian popularity, but the popular items are
/// scattered over `min..=max` by FNV-hashing the rank, so hot keys are not neighbours
/// (which would flatter range-partitioned and cached stores).
#[derive(Debug, Clone)]
pub struct ScrambledZipfian {
    gen: Zipfian,
    min: i64,
    itemcount: i64,
}

impl ScrambledZipfian {
    /// Keys `min..=max`, ranks drawn at exponent `theta`; at YCSB's 0.99 with YCSB's
    /// precomputed ζ, at any other θ with [`zeta_large`] (YCSB would sum 10^10 terms).
    pub fn new(min: i64, max: i64, theta: f64) -> ScrambledZipfian {
        let zetan = if theta == ZIPFIAN_CONSTANT {
            SCRAMBLED_ZETAN
        } else {
            zeta_large(SCRAMBLED_ITEM_COUNT + 1, theta)
        };
        ScrambledZipfian {
            gen: Zipfian::with_zetan(0, SCRAMBLED_ITEM_COUNT, theta, zetan),
            min,
            itemcount: max - min + 1,
        }
    }

    /// The next key.
    #[inline]
    pub fn next<R: Rng + ?Sized>(&mut self, rng: &mut R) -> i64 {
        let rank = self.gen.next(rng);
        self.scatter(rank)
    }

    /// Where rank `z` of the underlying zipfian lands: `min + fnvhash64(z) % itemcount`
    /// with Java's remainder (the seedless half of the generator, for vectors).
    #[inline]
    pub fn scatter(&self, z: i64) -> i64 {
        self.min + fnvhash64(z) % self.itemcount
    }

    /// The underlying zipfian over ranks.
    pub fn ranks(&self) -> &Zipfian {
        &self.gen
    }
}

/// YCSB's `SkewedLatestGenerator`: zipfian over how far back from the newest
/// acknowledged insert, so recently inserted records are the hot ones (workload D).
#[derive(Debug, Clone)]
pub struct SkewedLatest {
    zipf: Zipfian,
}

impl SkewedLatest {
    /// Built when the newest acknowledged key is `last` (the zipfian then covers `last`
    /// items, as YCSB builds it from `basis.lastValue()`), with ζ over them known.
    pub fn with_zetan(last: i64, theta: f64, zetan: f64) -> SkewedLatest {
        SkewedLatest {
            zipf: Zipfian::with_zetan(0, last - 1, theta, zetan),
        }
    }

    /// The next key when the newest acknowledged key is `last`: `last` minus a zipfian
    /// draw over `last` items (so 1..=last; YCSB never picks key 0 here).
    #[inline]
    pub fn next<R: Rng + ?Sized>(&mut self, rng: &mut R, last: i64) -> i64 {
        last - self.zipf.next_of(rng, last)
    }

    /// The zipfian underneath.
    pub fn zipfian(&self) -> &Zipfian {
        &self.zipf
    }
}

/// YCSB's `UniformLongGenerator`: `lb..=ub`, each equally likely. YCSB takes
/// `abs(nextLong()) % interval`; this draws without the (tiny) modulo bias.
#[derive(Debug, Clone, Copy)]
pub struct UniformLong {
    lb: i64,
    ub: i64,
}

impl UniformLong {
    /// Over `lb..=ub` (lb <= ub).
    pub fn new(lb: i64, ub: i64) -> UniformLong {
        UniformLong { lb, ub }
    }

    /// The next value.
    #[inline]
    pub fn next<R: Rng + ?Sized>(&self, rng: &mut R) -> i64 {
        rng.random_range(self.lb..=self.ub)
    }
}

/// YCSB's `HotspotIntegerGenerator`: `hotOpnFraction` of draws go uniformly to the
/// lowest `hotsetFraction` of `lower..=upper`, the rest uniformly to the others.
#[derive(Debug, Clone, Copy)]
pub struct Hotspot {
    lower: i64,
    hot: i64,
    cold: i64,
    hot_opn_fraction: f64,
}

impl Hotspot {
    /// Over `lower..=upper`. The hot set is `(int)(interval * hotset_fraction)` keys,
    /// Java's truncation included. An empty set that draws would get is an error here
    /// (YCSB would divide by zero at the first draw).
    pub fn new(
        lower: i64,
        upper: i64,
        hotset_fraction: f64,
        hot_opn_fraction: f64,
    ) -> Result<Hotspot, YcsbError> {
        let interval = upper - lower + 1;
        let hot = (interval as f64 * hotset_fraction) as i32 as i64;
        let cold = interval - hot;
        if (hot <= 0 && hot_opn_fraction > 0.0) || (cold <= 0 && hot_opn_fraction < 1.0) {
            return Err(YcsbError::Invalid(format!(
                "hotspot over {lower}..={upper}: a hot set of {hot} and a cold set of {cold} \
                 keys cannot take {hot_opn_fraction} and {} of the operations",
                1.0 - hot_opn_fraction
            )));
        }
        Ok(Hotspot {
            lower,
            hot,
            cold,
            hot_opn_fraction,
        })
    }

    /// Keys in the hot set (YCSB's `hotInterval`).
    pub fn hot_len(&self) -> i64 {
        self.hot
    }

    /// Keys in the cold set (YCSB's `coldInterval`).
    pub fn cold_len(&self) -> i64 {
        self.cold
    }

    /// The next value.
    #[inline]
    pub fn next<R: Rng + ?Sized>(&self, rng: &mut R) -> i64 {
        if rng.random::<f64>() < self.hot_opn_fraction {
            self.lower + rng.random_range(0..self.hot)
        } else {
            self.lower + self.hot + rng.random_range(0..self.cold)
        }
    }
}

/// YCSB's operation chooser (a `DiscreteGenerator` filled by `createOperationGenerator`):
/// operations with a proportion above 0, in YCSB's order, each taking its share of
/// the sum. Shares are normalised once here, where YCSB re-sums on every draw.
#[derive(Debug, Clone)]
pub struct OpChooser {
    ops: Vec<(f64, YcsbOp)>,
}

impl OpChooser {
    /// From the five proportions in `p`; an error when all are 0.
    pub fn new(p: &CoreParams) -> Result<OpChooser, YcsbError> {
        let all = [
            (p.readproportion, YcsbOp::Read),
            (p.updateproportion, YcsbOp::Update),
            (p.insertproportion, YcsbOp::Insert),
            (p.scanproportion, YcsbOp::Scan),
            (p.readmodifywriteproportion, YcsbOp::ReadModifyWrite),
        ];
        let sum: f64 = all.iter().filter(|(w, _)| *w > 0.0).map(|(w, _)| w).sum();
        if sum <= 0.0 || !sum.is_finite() {
            return Err(YcsbError::Invalid(
                "every operation proportion is 0: nothing to run".into(),
            ));
        }
        Ok(OpChooser {
            ops: all
                .iter()
                .filter(|(w, _)| *w > 0.0)
                .map(|(w, op)| (w / sum, *op))
                .collect(),
        })
    }

    /// The next operation.
    #[inline]
    pub fn next<R: Rng + ?Sized>(&self, rng: &mut R) -> YcsbOp {
        self.pick(rng.random::<f64>())
    }

    /// The operation a uniform draw `u` in [0, 1) maps to. Rounding that leaves `u`
    /// past the last share picks the last operation (YCSB throws there).
    #[inline]
    pub fn pick(&self, mut u: f64) -> YcsbOp {
        for (share, op) in &self.ops {
            if u < *share {
                return *op;
            }
            u -= share;
        }
        self.ops[self.ops.len() - 1].1
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::rngs::SmallRng;
    use rand::SeedableRng;

    fn rel(a: f64, b: f64) -> f64 {
        ((a - b) / b).abs()
    }

    #[test]
    fn zeta_grows_incrementally_to_the_same_sum() {
        let whole = zeta(5000, 0.99);
        let part = zeta(1234, 0.99);
        assert!(rel(zeta_from(1234, 5000, 0.99, part), whole) < 1e-14);
        assert_eq!(zeta(2, 0.5), 1.0 + 1.0 / 2f64.sqrt());
    }

    #[test]
    fn euler_maclaurin_zeta_matches_the_long_sum() {
        for theta in [0.2, 0.5, 0.8, 0.99] {
            for n in [1001, 54_321, 2_000_000] {
                let exact = zeta(n, theta);
                let fast = zeta_large(n, theta);
                assert!(
                    rel(fast, exact) < 1e-12,
                    "θ {theta} n {n}: {fast} vs {exact}"
                );
            }
        }
        // YCSB's own constant for 10^10 items at 0.99.
        let z = zeta_large(SCRAMBLED_ITEM_COUNT, 0.99);
        assert!(rel(z, SCRAMBLED_ZETAN) < 1e-9, "{z}");
    }

    /// The share of draws that land on rank 1 (the most popular item) against
    /// theory: 1/ζ(n).
    #[test]
    fn zipfian_rank_one_share_is_one_over_zeta() {
        let mut rng = SmallRng::seed_from_u64(7);
        for (n, theta) in [(1000i64, 0.99), (100_000, 0.99), (1000, 0.5)] {
            let mut z = Zipfian::new(0, n - 1, theta);
            let draws = 400_000;
            let (mut first, mut second) = (0u32, 0u32);
            for _ in 0..draws {
                let v = z.next(&mut rng);
                assert!((0..n).contains(&v), "{v}");
                first += u32::from(v == 0);
                second += u32::from(v == 1);
            }
            let zn = zeta(n, theta);
            let p1 = 1.0 / zn;
            let p2 = 0.5f64.powf(theta) / zn;
            let share = |c: u32| f64::from(c) / draws as f64;
            // 5 standard deviations of a binomial share.
            let tol = |p: f64| 5.0 * (p * (1.0 - p) / draws as f64).sqrt();
            assert!(
                (share(first) - p1).abs() < tol(p1),
                "n {n}: {} vs {p1}",
                share(first)
            );
            assert!(
                (share(second) - p2).abs() < tol(p2),
                "n {n}: {} vs {p2}",
                share(second)
            );
        }
    }

    #[test]
    fn zipfian_with_a_base_draws_from_its_range_and_skews_low() {
        let mut rng = SmallRng::seed_from_u64(3);
        let mut z = Zipfian::new(1, 100, ZIPFIAN_CONSTANT);
        let mut c = [0u32; 101];
        for _ in 0..100_000 {
            c[z.next(&mut rng) as usize] += 1;
        }
        assert_eq!(c[0], 0);
        assert!(c[1] > c[2] && c[2] > c[10] && c[10] > c[100], "{c:?}");
    }

    #[test]
    fn growing_the_item_count_keeps_the_construction_eta_rule() {
        let mut rng = SmallRng::seed_from_u64(1);
        let mut z = Zipfian::new(0, 999, 0.99);
        let v = z.next_of(&mut rng, 2000);
        assert!((0..2000).contains(&v));
        assert_eq!(z.count_for_zeta(), 2000);
        assert!(rel(z.zetan(), zeta(2000, 0.99)) < 1e-14);
        // YCSB's eta after growth still uses items = 1000.
        assert_eq!(z.eta(), eta(1000, 0.99, z.zeta2theta(), z.zetan()));
        assert_ne!(z.eta(), eta(2000, 0.99, z.zeta2theta(), z.zetan()));
        // A smaller count never shrinks ζ.
        z.next_of(&mut rng, 10);
        assert_eq!(z.count_for_zeta(), 2000);
    }

    #[test]
    fn scrambled_zipfian_stays_in_range_with_scattered_hot_keys() {
        let mut rng = SmallRng::seed_from_u64(11);
        let mut s = ScrambledZipfian::new(100, 1099, ZIPFIAN_CONSTANT);
        let mut c = vec![0u32; 1000];
        for _ in 0..200_000 {
            let k = s.next(&mut rng);
            assert!((100..1100).contains(&k), "{k}");
            c[(k - 100) as usize] += 1;
        }
        // The hottest key is where rank 0 scatters to, not the range's first key.
        let hottest = (0..1000).max_by_key(|i| c[*i]).unwrap() as i64 + 100;
        assert_eq!(hottest, s.scatter(0));
        assert_eq!(s.scatter(0), 100 + fnvhash64(0) % 1000);
        let mut sorted = c.clone();
        sorted.sort_unstable_by(|a, b| b.cmp(a));
        assert!(
            sorted[0] > 20 * sorted[500],
            "{} vs {}",
            sorted[0],
            sorted[500]
        );
    }

    #[test]
    fn uniform_is_flat_and_inclusive() {
        let mut rng = SmallRng::seed_from_u64(5);
        let u = UniformLong::new(10, 59);
        let mut c = [0u32; 50];
        for _ in 0..100_000 {
            c[(u.next(&mut rng) - 10) as usize] += 1;
        }
        // 2000 expected per value; 5 sigma is about 220.
        assert!(c.iter().all(|&x| (1780..2220).contains(&x)), "{c:?}");
    }

    #[test]
    fn hotspot_sends_its_share_to_the_hot_set() {
        let mut rng = SmallRng::seed_from_u64(9);
        let h = Hotspot::new(0, 999, 0.2, 0.8).unwrap();
        let n = 100_000;
        let hot = (0..n).filter(|_| h.next(&mut rng) < 200).count();
        let share = hot as f64 / n as f64;
        assert!((share - 0.8).abs() < 0.01, "{share}");
        assert!(Hotspot::new(0, 9, 0.05, 0.5).is_err());
        assert!(Hotspot::new(0, 9, 1.0, 0.5).is_err());
        assert!(Hotspot::new(0, 9, 1.0, 1.0).is_ok());
    }

    #[test]
    fn op_chooser_follows_the_proportions_in_ycsb_order() {
        let p = CoreParams {
            readproportion: 0.5,
            updateproportion: 0.0,
            insertproportion: 0.1,
            scanproportion: 0.3,
            readmodifywriteproportion: 0.1,
            ..CoreParams::default()
        };
        let c = OpChooser::new(&p).unwrap();
        assert_eq!(c.pick(0.0), YcsbOp::Read);
        assert_eq!(c.pick(0.55), YcsbOp::Insert);
        assert_eq!(c.pick(0.7), YcsbOp::Scan);
        assert_eq!(c.pick(0.95), YcsbOp::ReadModifyWrite);
        assert_eq!(c.pick(0.999_999_999_999_999_9), YcsbOp::ReadModifyWrite);
        let mut rng = SmallRng::seed_from_u64(2);
        let mut n = [0u32; 5];
        let draws = 200_000;
        for _ in 0..draws {
            n[c.next(&mut rng).index()] += 1;
        }
        for (i, want) in [0.5, 0.0, 0.1, 0.3, 0.1].iter().enumerate() {
            let got = f64::from(n[i]) / f64::from(draws);
            assert!(
                (got - want).abs() < 0.006,
                "{:?}: {got} vs {want}",
                YcsbOp::ALL[i]
            );
        }
    }
}
