//! After a disk probe, judged: the device's rated figures beside the measured ones, and whether
//! the single-thread commit rate is possible on durable media. Both are kept in the
//! probe run's options (`rated.*`, `durability.*`), which `plumb show` and `plumb
//! compare` read with the run, on any host; the table is rebuilt from the stored steps.

use crate::rated::{
    self, CacheCheck, DeviceFacts, Level, Rated, Ratio, ReadAheadCheck, SeekModel, StepView,
};
use plumb_host::HostSnapshot;
use plumb_report::sig;
use std::collections::BTreeMap;

/// The run option holding the write-cache verdict.
pub const CACHE_KEY: &str = "durability.write_cache";

/// What the probe's figures say against the datasheet and the device's physics.
#[derive(Debug, Clone, Default)]
pub struct Judged {
    /// Rated beside measured, one row per rated figure.
    pub ratios: Vec<Ratio>,
    /// The rated figures, when given.
    pub rated: Option<Rated>,
    /// The commit-rate check, when a single-thread commit step ran.
    pub cache: Option<CacheCheck>,
    /// The deck's seek model beside the measured seeks, when an rpm is rated.
    pub seek: Option<SeekModel>,
    /// Buffered writes against reads at each sequential size, with the read-ahead.
    pub read_ahead: Vec<ReadAheadCheck>,
}

/// The run option holding the seek model's line.
pub const SEEK_KEY: &str = "disk.seek_model";
/// The run option prefix of the read-ahead lines (`disk.read_ahead.<size>`).
pub const READ_AHEAD_KEY: &str = "disk.read_ahead.";

impl Judged {
    /// Whether there is anything to say.
    pub fn is_empty(&self) -> bool {
        self.ratios.is_empty()
            && self.cache.is_none()
            && self.rated.is_none()
            && self.seek.is_none()
            && self.read_ahead.is_empty()
    }

    /// The options stored with the run: each ratio as `rated.<key>.ratio` (with the
    /// measured figure) and the cache verdict, so comparing two hosts' probe runs shows
    /// both hosts' figures side by side.
    pub fn options(&self) -> BTreeMap<String, String> {
        let mut o = BTreeMap::new();
        for r in &self.ratios {
            let v = match (r.ratio, r.measured) {
                (Some(x), Some(m)) => {
                    format!("{x:.2} {} ({} {})", r.verdict, sig(Some(m), 3), r.unit)
                }
                _ => r.verdict.to_string(),
            };
            o.insert(format!("{}{}.ratio", rated::PREFIX, r.key), v);
        }
        if let Some(c) = &self.cache {
            o.insert(CACHE_KEY.into(), cache_line(c));
            if let Some(b) = c.bound {
                o.insert("durability.commit_bound".into(), format!("{b:.0}"));
            }
        }
        if let Some(m) = &self.seek {
            o.insert(SEEK_KEY.into(), m.message.clone());
        }
        for r in &self.read_ahead {
            let key = format!("{READ_AHEAD_KEY}{}", crate::disk::bs_label(r.bs as usize));
            o.insert(key, r.message.clone());
        }
        o
    }
}

/// The write-cache verdict in one line, as stored in the run's options and printed.
pub fn cache_line(c: &CacheCheck) -> String {
    let level = match c.level {
        Level::Ok => "ok",
        Level::Info => "info",
        Level::Warn => "warn",
    };
    match &c.fix {
        Some(f) => format!("{level}: {}; fix: {f}", c.message),
        None => format!("{level}: {}", c.message),
    }
}

/// The device under a probed directory as the host snapshot saw it: the physical device
/// at the bottom of the chain (its driver kind, rotational flag and write cache).
pub fn facts_from_host(host: &HostSnapshot) -> DeviceFacts {
    let dev = host
        .storage
        .as_ref()
        .and_then(|s| s.devices.iter().find(|d| d.physical));
    let in_vm = host.inventory.virtualization.is_vm == Some(true);
    let Some(d) = dev else {
        // No block device under it: NFS, tmpfs, overlay… a network or memory store.
        let fs = host
            .storage
            .as_ref()
            .map(|s| s.fs_type.as_str())
            .unwrap_or("");
        let class = matches!(fs, "nfs" | "nfs4" | "cifs" | "smb3" | "ceph" | "fuse.sshfs")
            .then_some(rated::DeviceClass::Network);
        return DeviceFacts {
            class,
            class_from: format!("filesystem {fs}"),
            ..DeviceFacts::default()
        };
    };
    let (class, class_from) = rated::class_from_sysfs(Some(&d.kind), d.queue.rotational, in_vm);
    DeviceFacts {
        class,
        class_from: format!("{} ({class_from})", d.name),
        write_cache: d.queue.write_cache.clone(),
        read_ahead: read_ahead_of(host),
        ..DeviceFacts::default()
    }
}

/// `read_ahead_kb` of each device in the chain under the probed directory (a filesystem
/// on LVM has the volume's and the disk's), as the deck's read-ahead reading names them.
fn read_ahead_of(host: &HostSnapshot) -> String {
    let devs = host.storage.as_ref().map(|s| s.devices.as_slice());
    let v: Vec<String> = devs
        .unwrap_or_default()
        .iter()
        .map(|d| {
            let kb = d.queue.read_ahead_kb.map_or("?".into(), |k| k.to_string());
            format!("{} read_ahead_kb {kb}", d.name)
        })
        .collect();
    if v.is_empty() {
        "read_ahead_kb unknown".into()
    } else {
        v.join(", ")
    }
}

/// Judges `steps` (live or stored) against `rated` and the device's facts.
pub fn judge(rated: Option<&Rated>, steps: &[StepView], facts: DeviceFacts) -> Judged {
    let facts = match rated {
        Some(r) => facts.with_rated(r),
        None => facts,
    };
    Judged {
        ratios: rated.map(|r| rated::ratios(r, steps)).unwrap_or_default(),
        rated: rated.cloned(),
        cache: rated::commit_rate_t1(steps).map(|m| rated::check_commits(&facts, m)),
        seek: rated.and_then(|r| rated::seek_model(r, steps)),
        read_ahead: rated::read_ahead_checks(steps, &facts.read_ahead),
    }
}
