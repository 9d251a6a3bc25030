//! After a disk probe: the device's rated figures beside the measured ones, and whether
//! the single-thread commit rate is possible on durable media. Both are kept in the
//! probe run's options (`rated.*`, `durability.*`), which `plumb show` and `plumb
//! compare` read with the run, on any host; the table is rebuilt from the stored steps.

use plumb_host::HostSnapshot;
use plumb_hwprobe::rated::{self, CacheCheck, DeviceFacts, Level, Rated, Ratio, StepView};
use plumb_report::{sig, table_left};
use plumb_store::StoredRun;
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
}

impl Judged {
    /// Whether there is anything to say.
    pub fn is_empty(&self) -> bool {
        self.ratios.is_empty() && self.cache.is_none() && self.rated.is_none()
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
        o
    }
}

fn cache_line(c: &CacheCheck) -> String {
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
        ..DeviceFacts::default()
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
    }
}

/// The text: the ratio table, then the write-cache verdict.
pub fn render(j: &Judged) -> String {
    let mut out = String::new();
    if let Some(r) = &j.rated {
        let model = r.model.as_deref().unwrap_or("the device");
        out.push_str(&format!("rated against measured ({model}, O_DIRECT)\n"));
        let mut t = table_left(&[
            "figure",
            "rated",
            "measured",
            "unit",
            "measured/rated",
            "verdict",
            "from",
        ]);
        for x in &j.ratios {
            t.add_row(vec![
                x.what.clone(),
                sig(Some(x.rated), 4),
                sig(x.measured, 4),
                x.unit.to_string(),
                x.ratio.map_or("-".into(), |v| format!("{v:.2}")),
                x.verdict.to_string(),
                x.source.clone(),
            ]);
        }
        out.push_str(&format!("{t}\n"));
        if let Some(tbw) = r.endurance_tbw {
            out.push_str(&format!(
                "note: endurance {} TBW rated; the probe cannot read how much the device has \
                 written (see its SMART data)\n",
                sig(Some(tbw), 4)
            ));
        }
    }
    if let Some(c) = &j.cache {
        out.push_str(&format!("commit durability: {}\n", cache_line(c)));
    }
    out
}

/// The table for a stored probe run, rebuilt from its steps and its `rated.*` options,
/// with the cache verdict stored at the time; `None` when the run holds neither.
pub fn from_stored(run: &StoredRun) -> Option<String> {
    let rated = Rated::from_options(&run.run.options);
    let views: Vec<StepView> = run
        .steps
        .iter()
        .map(|(s, _)| StepView {
            name: &s.name,
            config: &s.config,
            summary: &s.summary,
        })
        .collect();
    let mut out = String::new();
    if let Some(r) = &rated {
        let j = Judged {
            ratios: rated::ratios(r, &views),
            rated: rated.clone(),
            cache: None,
        };
        out.push_str(&render(&j));
    }
    if let Some(c) = run.run.options.get(CACHE_KEY) {
        out.push_str(&format!("commit durability: {c}\n"));
    }
    (!out.is_empty()).then_some(out)
}

/// The position scan's slices as a table: where each starts and how fast it read.
pub fn zcav_table<'a>(
    steps: impl Iterator<Item = (&'a str, &'a serde_json::Value, Option<f64>)>,
) -> Option<String> {
    let mut t = table_left(&["slice", "offset GiB", "MB/s"]);
    let mut n = 0;
    for (name, cfg, mbs) in steps.filter(|(n, _, _)| n.starts_with("zcav.")) {
        let off = cfg["offset"].as_u64().unwrap_or(0) as f64 / (1u64 << 30) as f64;
        t.add_row(vec![name.to_string(), format!("{off:.2}"), sig(mbs, 4)]);
        n += 1;
    }
    (n > 0).then(|| format!("read speed by position (zcav)\n{t}\n"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use plumb_core::StepSummary;
    use serde_json::json;

    #[test]
    fn a_judgement_is_stored_as_options_and_rendered() {
        let r = rated::parse(
            "[device]\nclass = \"hdd\"\nrpm = 7200\n[rated]\nseqread_mbps = 200\n",
            "x",
        )
        .unwrap();
        let cfg = [
            json!({"pattern": "seqread", "mode": "direct", "bs": 1048576}),
            json!({"pattern": "commit", "mode": "direct", "jobs": 1}),
        ];
        let sums = [
            StepSummary {
                ops: 10,
                ops_sec: 80.0,
                mb_sec: Some(84.0),
                ..StepSummary::default()
            },
            StepSummary {
                ops: 10,
                ops_sec: 1048.0,
                ..StepSummary::default()
            },
        ];
        let views = [
            StepView {
                name: "seqread.direct",
                config: &cfg[0],
                summary: &sums[0],
            },
            StepView {
                name: "commit.direct.t1",
                config: &cfg[1],
                summary: &sums[1],
            },
        ];
        let j = judge(Some(&r), &views, DeviceFacts::default());
        let o = j.options();
        assert_eq!(
            o["rated.seqread_mbps.ratio"],
            "0.42 far below rated (84.0 MB/s)"
        );
        assert!(
            o[CACHE_KEY].starts_with("warn: write cache likely volatile"),
            "{o:?}"
        );
        assert_eq!(o["durability.commit_bound"], "240");
        let text = render(&j);
        assert!(
            text.contains("far below rated") && text.contains("hdparm -W0"),
            "{text}"
        );
    }
}
