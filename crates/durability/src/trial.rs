//! What every durability trial shares, on engines and servers alike: the keys and
//! values written (each value depends on the seed and the key, so a stale or torn one
//! is told from the right one), the recorder's durable log of acknowledged writes, the
//! kill moments, and the power-cut mount.

use crate::TrialError;
use plumb_plan::{Cut, DurabilityMode};
use std::io::Write;
use std::path::{Path, PathBuf};

/// Key `i` of an embedded engine's trials: 16 bytes.
pub fn key(i: u64) -> [u8; 16] {
    let mut k = *b"dur-000000000000";
    let digits = format!("{i:012}");
    k[4..].copy_from_slice(digits.as_bytes());
    k
}

/// The value written under key `i`: 100 bytes that depend on the seed and `i`.
pub fn value(seed: u64, i: u64) -> [u8; 100] {
    let mut v = [0u8; 100];
    for (n, chunk) in v.chunks_mut(8).enumerate() {
        let h = xxhash_rust::xxh3::xxh3_64_with_seed(&(i * 16 + n as u64).to_le_bytes(), seed);
        chunk.copy_from_slice(&h.to_le_bytes()[..chunk.len()]);
    }
    v
}

/// The value of a server's row `i`, as text: the first 32 bytes of [`value`] in hex.
pub fn hex(seed: u64, i: u64) -> String {
    value(seed, i)[..32]
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// The recorder's durable log of acknowledged keys: 8 bytes each, fdatasync'd before
/// the writer may go on, outside the engine's (or server's) directory.
pub struct AckLog {
    file: std::fs::File,
    path: PathBuf,
}

impl AckLog {
    /// A new, empty log at `path`.
    pub fn create(path: PathBuf) -> Result<AckLog, TrialError> {
        let file = std::fs::OpenOptions::new()
            .create_new(true)
            .append(true)
            .open(&path);
        match file {
            Ok(file) => Ok(AckLog { file, path }),
            Err(source) => Err(TrialError::AckLogCreate { path, source }),
        }
    }

    /// Makes the acknowledgement of key `i` durable.
    pub fn record(&mut self, i: u64) -> Result<(), TrialError> {
        self.file
            .write_all(&i.to_le_bytes())
            .map_err(TrialError::AckLog)?;
        self.file.sync_data().map_err(TrialError::AckLog)
    }

    /// Every key acknowledged so far, read back from the file.
    pub fn read(&self) -> Result<Vec<u64>, TrialError> {
        let bytes = std::fs::read(&self.path).map_err(TrialError::AckLog)?;
        Ok(bytes
            .chunks_exact(8)
            .map(|c| u64::from_le_bytes(c.try_into().unwrap_or_default()))
            .collect())
    }
}

/// The kill moments (and the seeds of torn cuts): a xorshift from the run's seed, so a
/// run's trials repeat with its plan.
pub struct Moments(u64);

impl Moments {
    /// Moments from `seed`.
    pub fn new(seed: u64) -> Moments {
        Moments(seed | 1)
    }

    /// A number from 1 to `max`.
    pub fn next(&mut self, max: u64) -> u64 {
        let r = &mut self.0;
        *r ^= *r << 13;
        *r ^= *r >> 7;
        *r ^= *r << 17;
        1 + *r % max.max(1)
    }

    /// A seed for a torn cut.
    pub fn seed(&mut self) -> u64 {
        self.next(u64::MAX - 1)
    }
}

/// The backing directory and mount point of a power-cut trial, made in `work`; both
/// 0755, so a server's own user can reach its files below them.
pub fn power_dirs(work: &Path) -> Result<(PathBuf, PathBuf), TrialError> {
    use std::os::unix::fs::PermissionsExt;
    let (backing, mnt) = (work.join("backing"), work.join("mnt"));
    for d in [&backing, &mnt] {
        std::fs::create_dir(d).map_err(|source| TrialError::Dir {
            path: d.clone(),
            source,
        })?;
        std::fs::set_permissions(d, std::fs::Permissions::from_mode(0o755))
            .map_err(TrialError::DirSetup)?;
    }
    Ok((backing, mnt))
}

/// Mounts the power-cut filesystem over `backing` at `mnt`; `ext4`: a file's fsync
/// makes its names durable too (`--dir-entries ext4`), not only its directory's.
pub fn mount(
    backing: &Path,
    mnt: &Path,
    ext4: bool,
) -> Result<plumb_powercut::PowerCut, TrialError> {
    let o = plumb_powercut::Options {
        file_fsync_keeps_names: ext4,
    };
    plumb_powercut::PowerCut::mount_with(backing, mnt, o)
        .map_err(|source| TrialError::Mount { source })
}

/// Cuts the power as `cut` says (`seed` picks what a torn cut writes).
pub fn apply(
    cut: Cut,
    pc: plumb_powercut::PowerCut,
    seed: u64,
) -> Result<plumb_powercut::CutReport, TrialError> {
    let r = match cut {
        Cut::Torn => pc.cut_torn(seed),
        _ => pc.cut(),
    };
    r.map_err(|source| TrialError::Cut {
        cut: cut.flag(),
        source,
    })
}

/// What `n` lost or wrong writes mean in `mode`; `unlogged`: the engine keeps unsynced
/// writes in its own memory (redb's non-durable commits, SplinterDB), so even a kill
/// loses them: the price of its design, not a failure.
pub fn verdict(n: u64, mode: DurabilityMode, unlogged: bool) -> String {
    match (n, mode) {
        (0, _) => "ok: every acknowledged write survived".to_string(),
        (n, DurabilityMode::Sync) => format!("FAIL: {n} acknowledged synced writes lost or wrong"),
        (n, DurabilityMode::NoSync) if unlogged => {
            format!("{n} lost: unsynced writes live in the engine's memory, without a log")
        }
        (n, DurabilityMode::NoSync) => format!("{n} lost: the price of writing without sync"),
        (n, DurabilityMode::Unlogged) => format!("{n} lost: the price of writing without a log"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_follow_seed_and_key_and_moments_repeat_with_the_seed() {
        assert_eq!(&key(42), b"dur-000000000042");
        assert_eq!(value(1, 2), value(1, 2));
        assert_ne!(value(1, 2), value(1, 3));
        assert_ne!(value(1, 2), value(2, 2));
        assert_eq!(hex(1, 2).len(), 64);
        let (mut a, mut b) = (Moments::new(9), Moments::new(9));
        for _ in 0..100 {
            let x = a.next(150);
            assert!((1..=150).contains(&x));
            assert_eq!(x, b.next(150));
        }
    }

    #[test]
    fn only_a_broken_promise_fails() {
        assert!(verdict(0, DurabilityMode::Sync, false).starts_with("ok"));
        assert!(verdict(3, DurabilityMode::Sync, true).starts_with("FAIL"));
        assert!(verdict(3, DurabilityMode::NoSync, false).contains("without sync"));
        assert!(verdict(3, DurabilityMode::NoSync, true).contains("engine's memory"));
        assert!(verdict(3, DurabilityMode::Unlogged, false).contains("without a log"));
    }
}
