//! Everything decided before a probe writes a byte: the jobs × depth grid, the file size
//! and the rules that refuse a directory, so bad input fails early with one clear message.

use crate::ProbeError;
use std::os::unix::fs::{FileTypeExt, MetadataExt};
use std::path::Path;

/// 1 MiB.
pub const MIB: u64 = 1 << 20;
/// 1 GiB.
pub const GIB: u64 = 1 << 30;
/// The smallest probe file: enough for N jobs of 1 MiB requests to stay apart.
pub const MIN_SIZE: u64 = 16 * MIB;
/// The `--quick` file size: small enough to lay out in a second; figures are indicative
/// (caches are dropped with `posix_fadvise`, but the device's own cache may hold it).
pub const QUICK_SIZE: u64 = 256 * MIB;
/// Largest jobs or depth accepted, to catch typos before thousands of threads start.
pub const MAX_JOBS_OR_DEPTH: usize = 1024;

/// One cell of the random-IO grid.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub struct Cell {
    /// Concurrent jobs (threads, each with its own ring or its own file offset stream).
    pub jobs: usize,
    /// Requests in flight per job.
    pub depth: usize,
}

/// The jobs × depth grid of the random read and write steps.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Grid {
    /// Job counts, ascending, no repeats.
    pub jobs: Vec<usize>,
    /// Queue depths, ascending, no repeats.
    pub depths: Vec<usize>,
}

impl Grid {
    /// The default grid (jobs 1,2,4 × depth 1,4,16,32), as the issue asks.
    pub fn full() -> Grid {
        Grid {
            jobs: vec![1, 2, 4],
            depths: vec![1, 4, 16, 32],
        }
    }

    /// The `--quick` grid: one job at depth 1 and 32, the two ends users quote.
    pub fn quick() -> Grid {
        Grid {
            jobs: vec![1],
            depths: vec![1, 32],
        }
    }

    /// From `--jobs` and `--depths` lists, each falling back to `default`'s.
    pub fn from_options(
        jobs: Option<&str>,
        depths: Option<&str>,
        default: &Grid,
    ) -> Result<Grid, ProbeError> {
        Ok(Grid {
            jobs: match jobs {
                Some(s) => parse_list("--jobs", s)?,
                None => default.jobs.clone(),
            },
            depths: match depths {
                Some(s) => parse_list("--depths", s)?,
                None => default.depths.clone(),
            },
        })
    }

    /// Every cell, jobs-major, so results read as one curve per job count.
    pub fn cells(&self) -> Vec<Cell> {
        self.jobs
            .iter()
            .flat_map(|&jobs| self.depths.iter().map(move |&depth| Cell { jobs, depth }))
            .collect()
    }

    /// The largest job count: the N of the N-thread commit-rate step.
    pub fn max_jobs(&self) -> usize {
        self.jobs.iter().copied().max().unwrap_or(1)
    }
}

/// Parses `1,2,4` into a sorted list without repeats; each value 1..=1024.
pub fn parse_list(option: &'static str, s: &str) -> Result<Vec<usize>, ProbeError> {
    let bad = |reason: String| ProbeError::BadOption {
        option,
        value: s.to_string(),
        reason,
    };
    let mut v = Vec::new();
    for part in s.split(',') {
        let part = part.trim();
        let n: usize = part
            .parse()
            .map_err(|_| bad(format!("{part:?} is not a whole number; give e.g. 1,4,16")))?;
        if n == 0 || n > MAX_JOBS_OR_DEPTH {
            return Err(bad(format!(
                "{n} is out of range; each value must be 1..={MAX_JOBS_OR_DEPTH}"
            )));
        }
        v.push(n);
    }
    v.sort_unstable();
    v.dedup();
    Ok(v)
}

/// Parses a size: bytes, or a number with K, M, G or T (powers of 1024, optional `iB`/`B`).
pub fn parse_size(option: &'static str, s: &str) -> Result<u64, ProbeError> {
    let bad = |reason: &str| ProbeError::BadOption {
        option,
        value: s.to_string(),
        reason: reason.to_string(),
    };
    let t = s.trim();
    let upper = t.to_ascii_uppercase();
    let stripped = upper
        .strip_suffix("IB")
        .or_else(|| upper.strip_suffix('B'))
        .unwrap_or(&upper);
    let (num, mult) = match stripped.chars().last() {
        Some('K') => (&stripped[..stripped.len() - 1], 1u64 << 10),
        Some('M') => (&stripped[..stripped.len() - 1], 1 << 20),
        Some('G') => (&stripped[..stripped.len() - 1], 1 << 30),
        Some('T') => (&stripped[..stripped.len() - 1], 1 << 40),
        _ => (stripped, 1),
    };
    let n: f64 = num
        .trim()
        .parse()
        .map_err(|_| bad("not a size; give bytes or e.g. 512M, 4G"))?;
    if !(n.is_finite() && n > 0.0) {
        return Err(bad("must be greater than 0"));
    }
    let bytes = n * mult as f64;
    if bytes > u64::MAX as f64 / 2.0 {
        return Err(bad("too large"));
    }
    Ok(bytes as u64)
}

/// The default probe file size and why: twice RAM (bonnie++'s and Greg Smith's rule), so
/// buffered random reads over it cannot be mostly page-cache hits even if the cache were
/// not dropped first; at least 1 GiB.
pub fn default_size(mem_total: Option<u64>) -> (u64, String) {
    match mem_total {
        Some(m) => {
            let s = round_down_mib((2 * m).max(GIB));
            (
                s,
                format!(
                    "{} = 2 × RAM ({}), so buffered reads cannot be served from the page cache",
                    human(s),
                    human(m)
                ),
            )
        }
        None => (
            16 * GIB,
            "16 GiB: RAM size unknown (no /proc/meminfo); give --size at least 2 × RAM".into(),
        ),
    }
}

/// The default file when no `--size` is given: [`default_size`] (2 × RAM, at least
/// 1 GiB), capped by the room the directory's filesystem has: what is available less
/// [`reserve`] (10% of the filesystem, 1 to 4 GiB, so the probe never fills a
/// filesystem others need). A capped file says so, with the figures: buffered reads of
/// a file smaller than 2 × RAM can partly come from the page cache (each buffered step
/// drops the file's pages first, which covers most of that). Refused, naming `dir` and
/// the sizes, when the room is below 1 GiB, the default's own floor: a smaller file is
/// a choice to make with `--size`.
pub fn default_size_capped(
    dir: &Path,
    mem_total: Option<u64>,
    fs_total: u64,
    fs_avail: u64,
) -> Result<(u64, String), ProbeError> {
    let (want, why) = default_size(mem_total);
    let keep = reserve(fs_total);
    let room = round_down_mib(fs_avail.saturating_sub(keep));
    if want <= room {
        return Ok((want, why));
    }
    if room < GIB {
        return Err(ProbeError::Refused {
            path: dir.to_path_buf(),
            reason: format!(
                "the default file is {want_h} ({why}), but only {avail} is available and {keep_h} \
                 is kept free (10% of the filesystem, 1 to 4 GiB), leaving {room_h}, less than \
                 the 1.0 GiB the default goes down to. Give --size or another --dir",
                want_h = human(want),
                avail = human(fs_avail),
                keep_h = human(keep),
                room_h = human(room),
            ),
        });
    }
    Ok((
        room,
        format!(
            "{} = capped: 2 × RAM would be {} ({why}), but {} holds {} available of which {} \
             is kept free; buffered reads may partly be served from the page cache",
            human(room),
            human(want),
            dir.display(),
            human(fs_avail),
            human(keep),
        ),
    ))
}

/// Rounds down to whole MiB, the sequential request size, so every request is full.
pub fn round_down_mib(b: u64) -> u64 {
    b / MIB * MIB
}

/// Free space to leave untouched, so a probe never fills a filesystem other processes (or
/// the database) need: 10% of the filesystem, at least 1 GiB and at most 4 GiB. The cap
/// matters on large or thin-provisioned filesystems (a 252 GiB VM disk with 26 GiB
/// available), where 10% of the size would refuse even a small probe.
pub fn reserve(fs_total: u64) -> u64 {
    (fs_total / 10).clamp(GIB, 4 * GIB)
}

/// Refuses a size below the minimum or one that would leave less than [`reserve`] free.
pub fn check_size(dir: &Path, size: u64, fs_total: u64, fs_avail: u64) -> Result<(), ProbeError> {
    if size < MIN_SIZE {
        return Err(ProbeError::BadOption {
            option: "--size",
            value: human(size),
            reason: format!("must be at least {}", human(MIN_SIZE)),
        });
    }
    let keep = reserve(fs_total);
    if size > fs_avail.saturating_sub(keep) {
        return Err(ProbeError::Refused {
            path: dir.to_path_buf(),
            reason: format!(
                "a {} file would leave less than {} free (10% of the filesystem, 1 to 4 GiB); \
                 {} is available. Give a smaller --size or another --dir",
                human(size),
                human(keep),
                human(fs_avail)
            ),
        });
    }
    Ok(())
}

/// Size and free space of the filesystem holding a directory.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FsSpace {
    /// Total bytes.
    pub total: u64,
    /// Bytes available to this (unprivileged) user.
    pub avail: u64,
}

/// Checks that `dir` is a directory this user owns (not a device, not someone else's),
/// and returns its filesystem's space. Nothing is written.
pub fn check_dir(dir: &Path) -> Result<FsSpace, ProbeError> {
    let refuse = |reason: String| ProbeError::Refused {
        path: dir.to_path_buf(),
        reason,
    };
    let md = std::fs::metadata(dir).map_err(|e| refuse(format!("cannot be read: {e}")))?;
    let ft = md.file_type();
    if ft.is_block_device() || ft.is_char_device() {
        return Err(refuse(
            "is a device; plumb probes a file it creates in a directory and never writes to a \
             device. Give a directory on the filesystem to measure"
                .into(),
        ));
    }
    if !md.is_dir() {
        return Err(refuse(
            "is not a directory; give the directory to create the probe file in".into(),
        ));
    }
    // SAFETY: geteuid cannot fail and touches no memory.
    let me = unsafe { libc::geteuid() };
    if md.uid() != me {
        return Err(refuse(format!(
            "is owned by uid {}, not by this user (uid {me}); plumb only writes where it owns \
             the directory. Create a directory of your own under it",
            md.uid()
        )));
    }
    statvfs(dir)
}

/// `statvfs` of a path.
pub fn statvfs(dir: &Path) -> Result<FsSpace, ProbeError> {
    use std::os::unix::ffi::OsStrExt;
    let c =
        std::ffi::CString::new(dir.as_os_str().as_bytes()).map_err(|_| ProbeError::Refused {
            path: dir.to_path_buf(),
            reason: "contains a NUL byte".into(),
        })?;
    // SAFETY: zeroed statvfs is valid; c is a NUL-terminated path; the call only writes sv.
    let mut sv: libc::statvfs = unsafe { std::mem::zeroed() };
    let rc = unsafe { libc::statvfs(c.as_ptr(), &mut sv) };
    if rc != 0 {
        return Err(ProbeError::io(
            "statvfs of",
            dir,
            std::io::Error::last_os_error(),
        ));
    }
    let frsize = sv.f_frsize as u64;
    Ok(FsSpace {
        total: sv.f_blocks as u64 * frsize,
        avail: sv.f_bavail as u64 * frsize,
    })
}

/// `MemTotal` from /proc/meminfo in bytes.
pub fn mem_total() -> Option<u64> {
    let t = std::fs::read_to_string("/proc/meminfo").ok()?;
    let line = t.lines().find(|l| l.starts_with("MemTotal:"))?;
    let kb: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb * 1024)
}

/// Bytes in binary units, e.g. `1.5 GiB`.
pub fn human(b: u64) -> String {
    let f = b as f64;
    if b >= GIB {
        format!("{:.1} GiB", f / GIB as f64)
    } else if b >= MIB {
        format!("{:.0} MiB", f / MIB as f64)
    } else {
        format!("{b} B")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn grid_cells_are_jobs_major_sorted_and_deduplicated() {
        let g = Grid::from_options(Some("4,1,2,2"), Some("32, 1"), &Grid::full()).unwrap();
        assert_eq!(g.jobs, vec![1, 2, 4]);
        assert_eq!(g.depths, vec![1, 32]);
        let cells = g.cells();
        assert_eq!(cells.len(), 6);
        assert_eq!(cells[0], Cell { jobs: 1, depth: 1 });
        assert_eq!(cells[1], Cell { jobs: 1, depth: 32 });
        assert_eq!(cells[5], Cell { jobs: 4, depth: 32 });
        assert_eq!(g.max_jobs(), 4);
        assert_eq!(Grid::full().cells().len(), 12);
        assert_eq!(Grid::quick().cells().len(), 2);
    }

    #[test]
    fn grid_defaults_fill_missing_lists() {
        let g = Grid::from_options(None, Some("8"), &Grid::full()).unwrap();
        assert_eq!(g.jobs, vec![1, 2, 4]);
        assert_eq!(g.depths, vec![8]);
    }

    #[test]
    fn bad_lists_name_the_option() {
        for s in ["", "0", "1,x", "2000", "-1"] {
            let e = parse_list("--depths", s).unwrap_err().to_string();
            assert!(e.starts_with("--depths"), "{s}: {e}");
        }
    }

    #[test]
    fn sizes_parse_with_binary_units() {
        assert_eq!(parse_size("--size", "4096").unwrap(), 4096);
        assert_eq!(parse_size("--size", "512M").unwrap(), 512 * MIB);
        assert_eq!(parse_size("--size", "2GiB").unwrap(), 2 * GIB);
        assert_eq!(parse_size("--size", "1.5g").unwrap(), 3 * GIB / 2);
        for s in ["", "x", "-1G", "0", "G", "nanG"] {
            assert!(parse_size("--size", s).is_err(), "{s}");
        }
    }

    #[test]
    fn default_size_is_twice_ram_and_at_least_a_gib() {
        assert_eq!(default_size(Some(24 * GIB)).0, 48 * GIB);
        assert_eq!(default_size(Some(100 * MIB)).0, GIB);
        assert!(default_size(Some(3 * GIB + 12345)).0.is_multiple_of(MIB));
        assert!(default_size(None).1.contains("--size"));
    }

    #[test]
    fn the_default_is_twice_ram_capped_by_the_free_space_less_the_reserve() {
        let d = Path::new("/data");
        // 24 GiB RAM, 200 GiB free on a 252 GiB filesystem: 2 × RAM fits.
        let (s, why) = default_size_capped(d, Some(24 * GIB), 252 * GIB, 200 * GIB).unwrap();
        assert_eq!(s, 48 * GIB);
        assert!(why.contains("2 × RAM"), "{why}");
        // 18 GiB free: 4 GiB kept, the file is the 14 GiB left, and says so.
        let (s, why) = default_size_capped(d, Some(24 * GIB), 252 * GIB, 18 * GIB).unwrap();
        assert_eq!(s, 14 * GIB);
        assert!(
            why.contains("capped") && why.contains("48.0 GiB") && why.contains("/data"),
            "{why}"
        );
        // Less than 1 GiB of room: refused, naming the directory and the sizes.
        let e = default_size_capped(d, Some(24 * GIB), 252 * GIB, 4 * GIB + 100 * MIB)
            .unwrap_err()
            .to_string();
        assert!(
            e.starts_with("--dir /data") && e.contains("48.0 GiB") && e.contains("--size"),
            "{e}"
        );
    }

    #[test]
    fn size_rules_keep_a_reserve() {
        let d = Path::new("/x");
        // 20 GiB filesystem: keep 2 GiB; small ones 1 GiB; large ones at most 4 GiB.
        assert_eq!(reserve(20 * GIB), 2 * GIB);
        assert_eq!(reserve(2 * GIB), GIB);
        assert_eq!(reserve(252 * GIB), 4 * GIB);
        assert!(check_size(d, 40 * GIB, 100 * GIB, 44 * GIB).is_ok());
        assert!(check_size(d, 40 * GIB, 100 * GIB, 44 * GIB - 1).is_err());
        let e = check_size(d, 41 * GIB, 100 * GIB, 44 * GIB)
            .unwrap_err()
            .to_string();
        assert!(e.contains("--dir /x") && e.contains("--size"), "{e}");
        let e = check_size(d, MIB, 100 * GIB, 50 * GIB)
            .unwrap_err()
            .to_string();
        assert!(e.starts_with("--size"), "{e}");
        // Overflow-safe.
        assert!(check_size(d, u64::MAX, u64::MAX, u64::MAX).is_err());
    }

    #[test]
    fn refuses_missing_paths_files_and_devices() {
        let t = tempfile::tempdir().unwrap();
        let missing = t.path().join("nope");
        assert!(check_dir(&missing)
            .unwrap_err()
            .to_string()
            .contains("cannot be read"));
        let f = t.path().join("f");
        std::fs::write(&f, b"x").unwrap();
        assert!(check_dir(&f)
            .unwrap_err()
            .to_string()
            .contains("not a directory"));
        let e = check_dir(Path::new("/dev/null")).unwrap_err().to_string();
        assert!(e.contains("is a device"), "{e}");
        if let Some(dev) = ["/dev/vda", "/dev/sda", "/dev/nvme0n1", "/dev/loop0"]
            .iter()
            .find(|p| Path::new(p).exists())
        {
            let e = check_dir(Path::new(dev)).unwrap_err().to_string();
            assert!(e.contains("is a device"), "{e}");
        }
        let ok = check_dir(t.path()).unwrap();
        assert!(ok.total > 0 && ok.avail <= ok.total);
    }

    #[test]
    fn refuses_a_directory_owned_by_someone_else() {
        // SAFETY: geteuid has no preconditions.
        let me = unsafe { libc::geteuid() };
        // /proc/1 is owned by root; as root, pick a directory not owned by root if any.
        let candidate = if me == 0 {
            let t = tempfile::tempdir().unwrap();
            let p = t.keep();
            // SAFETY: chown on a path we created; failure just skips the test.
            let c = std::ffi::CString::new(p.as_os_str().to_str().unwrap()).unwrap();
            if unsafe { libc::chown(c.as_ptr(), 65534, 65534) } != 0 {
                return;
            }
            p
        } else {
            std::path::PathBuf::from("/")
        };
        let e = check_dir(&candidate).unwrap_err().to_string();
        assert!(e.contains("is owned by uid"), "{e}");
        if me == 0 {
            let _ = std::fs::remove_dir(&candidate);
        }
    }
}
