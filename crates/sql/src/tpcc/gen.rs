//! The spec's random values (clause 2.1.6 and 4.3.2): NURand with its run-time
//! constants, last names from syllables, alphanumeric and numeric strings, zip codes and
//! the 10% of ITEM and STOCK data holding "ORIGINAL". Everything appends to a caller's
//! reused string, so neither the load nor a transaction allocates per value.

use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};

/// The ten syllables C_LAST is built from (clause 4.3.2.3).
pub const SYLLABLES: [&str; 10] = [
    "BAR", "OUGHT", "ABLE", "PRI", "PRES", "ESE", "ANTI", "CALLY", "ATION", "EING",
];

/// Characters of the spec's a-strings: letters and digits, as HammerDB generates them.
const ALNUM: &[u8; 62] = b"0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";

/// The C constants of NURand (clause 2.1.6): one set for the load and one for the run,
/// all threads of a run sharing them. Why both: the spec requires the run's C for
/// C_LAST to differ from the load's by 65..119 (not 96 or 112), so the names a run
/// looks up are not skewed the same way as the names the load wrote.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NuRandC {
    /// C for C_LAST, A = 255.
    pub c_last: i32,
    /// C for C_ID, A = 1023.
    pub c_id: i32,
    /// C for OL_I_ID, A = 8191.
    pub ol_i_id: i32,
}

impl NuRandC {
    /// The load's and the run's constants from the run's seed: the same seed gives the
    /// same pair, so a load and a run of one plumb invocation keep the spec's distance
    /// between their C_LAST constants.
    pub fn for_seed(seed: u64) -> (NuRandC, NuRandC) {
        let mut rng = SmallRng::seed_from_u64(seed ^ 0x7470_6363_2d63_0000);
        let load = NuRandC {
            c_last: rng.random_range(0..=255),
            c_id: rng.random_range(0..=1023),
            ol_i_id: rng.random_range(0..=8191),
        };
        let delta = loop {
            let d = rng.random_range(65..=119);
            if d != 96 && d != 112 {
                break d;
            }
        };
        // Either side keeps it in 0..=255: above 136 the load's C minus 119 is >= 17.
        let c_last = if load.c_last + delta <= 255 {
            load.c_last + delta
        } else {
            load.c_last - delta
        };
        let run = NuRandC {
            c_last,
            c_id: rng.random_range(0..=1023),
            ol_i_id: rng.random_range(0..=8191),
        };
        (load, run)
    }
}

/// NURand(A, x, y) = (((random(0, A) | random(x, y)) + C) % (y - x + 1)) + x.
pub fn nurand(rng: &mut SmallRng, a: i32, x: i32, y: i32, c: i32) -> i32 {
    (((rng.random_range(0..=a) | rng.random_range(x..=y)) + c) % (y - x + 1)) + x
}

/// Appends the last name of `num` (0..=999): its three digits' syllables.
pub fn last_name(num: i32, out: &mut String) {
    let n = num.clamp(0, 999) as usize;
    out.push_str(SYLLABLES[n / 100]);
    out.push_str(SYLLABLES[n / 10 % 10]);
    out.push_str(SYLLABLES[n % 10]);
}

/// Appends `n` random letters and digits, ten from each 64-bit draw.
pub fn alnum(rng: &mut SmallRng, n: usize, out: &mut String) {
    let mut left = 0;
    let mut bits = 0u64;
    for _ in 0..n {
        if left == 0 {
            bits = rng.random();
            left = 10;
        }
        out.push(char::from(ALNUM[(bits % 62) as usize]));
        bits /= 62;
        left -= 1;
    }
}

/// Appends an a-string of random length in `lo..=hi`.
pub fn astring(rng: &mut SmallRng, lo: usize, hi: usize, out: &mut String) {
    let n = rng.random_range(lo..=hi);
    alnum(rng, n, out);
}

/// Appends `n` random digits (an n-string).
pub fn digits(rng: &mut SmallRng, n: usize, out: &mut String) {
    for _ in 0..n {
        out.push(char::from(b'0' + rng.random_range(0..10u8)));
    }
}

/// Appends a zip code: four random digits and "11111" (clause 4.3.2.7).
pub fn zip(rng: &mut SmallRng, out: &mut String) {
    digits(rng, 4, out);
    out.push_str("11111");
}

/// Appends two random upper-case letters (a state).
pub fn state(rng: &mut SmallRng, out: &mut String) {
    for _ in 0..2 {
        out.push(char::from(b'A' + rng.random_range(0..26u8)));
    }
}

/// Appends I_DATA or S_DATA: an a-string of 26..=50, where one row in ten holds
/// "ORIGINAL" at a random position (clause 4.3.3.1), which New-Order's brand-generic
/// flag looks for.
pub fn data_original(rng: &mut SmallRng, out: &mut String) {
    let n = rng.random_range(26..=50usize);
    if rng.random_range(0..10) == 0 {
        let at = rng.random_range(0..=n - 8);
        alnum(rng, at, out);
        out.push_str("ORIGINAL");
        alnum(rng, n - 8 - at, out);
    } else {
        alnum(rng, n, out);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn run_constants_keep_the_specs_distance_from_the_loads() {
        for seed in 0..2000 {
            let (load, run) = NuRandC::for_seed(seed);
            let d = (run.c_last - load.c_last).abs();
            assert!(
                (65..=119).contains(&d) && d != 96 && d != 112,
                "{seed}: {d}"
            );
            assert!((0..=255).contains(&run.c_last) && (0..=255).contains(&load.c_last));
            assert!((0..=1023).contains(&run.c_id) && (0..=8191).contains(&run.ol_i_id));
        }
        assert_eq!(NuRandC::for_seed(9), NuRandC::for_seed(9));
        assert_ne!(NuRandC::for_seed(9), NuRandC::for_seed(10));
    }

    #[test]
    fn nurand_stays_in_range_and_is_skewed() {
        let mut rng = SmallRng::seed_from_u64(3);
        let mut hits = vec![0u32; 3001];
        for _ in 0..300_000 {
            let v = nurand(&mut rng, 1023, 1, 3000, 259);
            assert!((1..=3000).contains(&v));
            hits[v as usize] += 1;
        }
        // Uniform would give 100 each; NURand's OR piles some ids far above that.
        let max = *hits.iter().max().unwrap();
        assert!(max > 250, "{max}");
        for _ in 0..10_000 {
            assert!((0..=999).contains(&nurand(&mut rng, 255, 0, 999, 200)));
        }
    }

    #[test]
    fn last_names_are_three_syllables() {
        let mut s = String::new();
        last_name(371, &mut s);
        assert_eq!(s, "PRICALLYOUGHT");
        s.clear();
        last_name(0, &mut s);
        assert_eq!(s, "BARBARBAR");
        s.clear();
        last_name(999, &mut s);
        assert_eq!(s, "EINGEINGEING");
    }

    #[test]
    fn strings_have_their_lengths_and_one_in_ten_data_is_original() {
        let mut rng = SmallRng::seed_from_u64(5);
        let mut s = String::new();
        let mut original = 0;
        for _ in 0..10_000 {
            s.clear();
            data_original(&mut rng, &mut s);
            assert!((26..=50).contains(&s.len()), "{s}");
            original += usize::from(s.contains("ORIGINAL"));
            s.clear();
            astring(&mut rng, 8, 16, &mut s);
            assert!((8..=16).contains(&s.len()));
            assert!(s.bytes().all(|b| b.is_ascii_alphanumeric()));
        }
        assert!((800..=1200).contains(&original), "{original}");
        s.clear();
        zip(&mut rng, &mut s);
        assert!(s.len() == 9 && s.ends_with("11111") && s.bytes().all(|b| b.is_ascii_digit()));
        // Every character of the alphabet turns up.
        s.clear();
        alnum(&mut rng, 20_000, &mut s);
        for c in ALNUM.iter() {
            assert!(s.as_bytes().contains(c), "{}", char::from(*c));
        }
    }
}
