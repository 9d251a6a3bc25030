//! Filesystem geometry: block size and RAID stripe alignment of the filesystem under the
//! data directory, because a database page or write that straddles a stripe costs a
//! read-modify-write on RAID and a block size different from the page size changes I/O.
//!
//! xfs from `xfs_info MOUNTPOINT` (xfsprogs), ext2/3/4 from `dumpe2fs -h DEV` (e2fsprogs)
//! or the `stride=`/`stripe=` mount options; `statvfs`'s `f_bsize` for any filesystem.

use crate::command::Runner;
use crate::storage::Storage;
use serde::{Deserialize, Serialize};

/// Block size and stripe geometry of one filesystem; `None` where not read.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Default)]
#[serde(default)]
pub struct FsGeometry {
    /// Where the figures came from: `xfs_info`, `dumpe2fs`, `mount options`.
    pub source: Option<String>,
    /// Why the filesystem tool's figures are missing, e.g. `xfs_info not installed`.
    pub unavailable: Option<String>,
    /// Filesystem block size, bytes (xfs `bsize` of the data section, ext4 `Block size`).
    pub block_size: Option<u64>,
    /// Sector size the filesystem assumes, bytes (xfs `sectsz`).
    pub sector_size: Option<u64>,
    /// Stripe unit in filesystem blocks (xfs `sunit`, ext4 `RAID stride`); 0 = none.
    pub stripe_unit_blocks: Option<u64>,
    /// Stripe width in filesystem blocks (xfs `swidth`, ext4 `RAID stripe width`).
    pub stripe_width_blocks: Option<u64>,
    /// `statvfs` `f_bsize`: the preferred I/O size the kernel reports (live machine only).
    pub statvfs_bsize: Option<u64>,
}

/// Reads the geometry of the filesystem described by `st`, running at most one tool.
pub(crate) fn read(st: &Storage, runner: &Runner, statvfs_bsize: Option<u64>) -> FsGeometry {
    let mut g = FsGeometry {
        statvfs_bsize,
        ..Default::default()
    };
    let from_tool = match st.fs_type.as_str() {
        "xfs" => {
            let mp = st.mount_point.to_string_lossy();
            Some(
                runner
                    .run("xfs_info", &[&mp])
                    .map_err(|e| e.to_string())
                    .and_then(|o| {
                        parse_xfs_info(&o.stdout).ok_or_else(|| tool_failed("xfs_info", &o))
                    })
                    .map(|x| ("xfs_info", x)),
            )
        }
        "ext2" | "ext3" | "ext4" => {
            let from_opts = ext4_mount_stripe(&st.super_options);
            // The resolved device, not the mount source, which can be `/dev/root`.
            let dev = st
                .devices
                .first()
                .map(|d| format!("/dev/{}", d.name))
                .or_else(|| st.source.clone().filter(|s| s.starts_with("/dev/")));
            match dev.as_deref() {
                Some(dev) => Some(
                    runner
                        .run("dumpe2fs", &["-h", dev])
                        .map_err(|e| e.to_string())
                        .and_then(|o| {
                            parse_dumpe2fs(&o.stdout).ok_or_else(|| tool_failed("dumpe2fs", &o))
                        })
                        .map(|x| ("dumpe2fs", x))
                        .or_else(|e| from_opts.clone().map(|x| ("mount options", x)).ok_or(e)),
                ),
                None => Some(
                    from_opts
                        .map(|x| ("mount options", x))
                        .ok_or_else(|| "no device to read the superblock from".to_string()),
                ),
            }
        }
        _ => None,
    };
    match from_tool {
        Some(Ok((src, x))) => {
            g.source = Some(src.to_string());
            g.block_size = x.block_size;
            g.sector_size = x.sector_size;
            g.stripe_unit_blocks = x.stripe_unit_blocks;
            g.stripe_width_blocks = x.stripe_width_blocks;
        }
        Some(Err(why)) => g.unavailable = Some(why),
        None => {
            g.unavailable = Some(format!(
                "{}: no geometry tool for this filesystem (statvfs only)",
                st.fs_type
            ))
        }
    }
    g
}

fn tool_failed(tool: &str, o: &crate::command::ToolOutput) -> String {
    let why = o
        .stderr
        .lines()
        .map(str::trim)
        .find(|l| !l.is_empty() && !l.starts_with("dumpe2fs 1."))
        .unwrap_or("no recognisable output");
    format!(
        "{tool} failed (exit {}): {why}",
        o.status
            .map(|s| s.to_string())
            .unwrap_or("by signal".into())
    )
}

/// Parses `xfs_info` output: `bsize`, `sunit` and `swidth` of the `data` section (the
/// `log` section has its own `sunit`), `sectsz` of `meta-data`.
pub fn parse_xfs_info(text: &str) -> Option<FsGeometry> {
    let mut g = FsGeometry::default();
    let mut section = String::new();
    for line in text.lines() {
        let Some((head, rest)) = line.split_once('=') else {
            continue;
        };
        if !head.trim().is_empty() {
            section = head.trim().to_string();
        }
        // Tokens such as "bsize=4096", "sunit=0", "agcount=4,".
        for tok in rest.split_whitespace() {
            let Some((k, v)) = tok.trim_end_matches(',').split_once('=') else {
                continue;
            };
            let Ok(v) = v.parse::<u64>() else { continue };
            match (section.as_str(), k) {
                ("data", "bsize") => g.block_size = Some(v),
                ("data", "sunit") => g.stripe_unit_blocks = Some(v),
                ("data", "swidth") => g.stripe_width_blocks = Some(v),
                ("meta-data", "sectsz") => g.sector_size = Some(v),
                _ => {}
            }
        }
    }
    g.block_size.is_some().then_some(g)
}

/// Parses `dumpe2fs -h` output: `Block size`, `RAID stride`, `RAID stripe width` (the two
/// RAID lines are absent when unset, which means 0).
pub fn parse_dumpe2fs(text: &str) -> Option<FsGeometry> {
    let field = |name: &str| {
        text.lines().find_map(|l| {
            let (k, v) = l.split_once(':')?;
            (k.trim() == name).then(|| v.trim().parse::<u64>().ok())?
        })
    };
    let block_size = field("Block size")?;
    Some(FsGeometry {
        block_size: Some(block_size),
        stripe_unit_blocks: Some(field("RAID stride").unwrap_or(0)),
        stripe_width_blocks: Some(field("RAID stripe width").unwrap_or(0)),
        ..Default::default()
    })
}

/// ext4's `stride=` and `stripe=` mount options, when given.
fn ext4_mount_stripe(opts: &[String]) -> Option<FsGeometry> {
    let get = |k: &str| {
        opts.iter()
            .find_map(|o| o.strip_prefix(k)?.strip_prefix('=')?.parse::<u64>().ok())
    };
    let (stride, stripe) = (get("stride"), get("stripe"));
    (stride.is_some() || stripe.is_some()).then(|| FsGeometry {
        stripe_unit_blocks: stride,
        stripe_width_blocks: stripe,
        ..Default::default()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ext4_stripe_from_mount_options() {
        let g = ext4_mount_stripe(&["rw".into(), "stripe=256".into()]).unwrap();
        assert_eq!(
            (g.stripe_unit_blocks, g.stripe_width_blocks),
            (None, Some(256))
        );
        assert!(ext4_mount_stripe(&["rw".into()]).is_none());
    }
}
