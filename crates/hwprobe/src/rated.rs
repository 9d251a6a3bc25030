//! A device's rated figures (the datasheet's IOPS, MB/s, endurance, and whether it has
//! power-loss protection) set beside what the disk probe measured, and the check that a
//! single-thread commit rate is physically possible on durable media.
//!
//! "Vendors lie" (Greg Smith's deck): a drive that acknowledges more commits per second
//! than its platters can turn, or than its NAND can program, is keeping them in a
//! volatile cache and loses them at power loss. The probe measured the commit rate; this
//! module says whether that rate is believable for the device.

use plumb_core::StepSummary;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::ops::Range;
use std::path::Path;
use toml::Spanned;

/// What kind of device it is: decides how fast a durable commit can possibly be.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum DeviceClass {
    /// Spinning disk: one durable commit per rotation at best.
    Hdd,
    /// SATA/SAS flash.
    SataSsd,
    /// NVMe flash.
    Nvme,
    /// A network block device or filesystem (iSCSI, NBD, RBD, NFS, EBS).
    Network,
    /// A hypervisor's disk (virtio, Xen, an emulated SCSI disk in a VM).
    Virtual,
}

impl DeviceClass {
    /// As the rated file and reports spell it.
    pub fn name(self) -> &'static str {
        match self {
            DeviceClass::Hdd => "hdd",
            DeviceClass::SataSsd => "sata-ssd",
            DeviceClass::Nvme => "nvme",
            DeviceClass::Network => "network",
            DeviceClass::Virtual => "virtual",
        }
    }

    /// Parses [`Self::name`].
    pub fn parse(s: &str) -> Option<DeviceClass> {
        [
            DeviceClass::Hdd,
            DeviceClass::SataSsd,
            DeviceClass::Nvme,
            DeviceClass::Network,
            DeviceClass::Virtual,
        ]
        .into_iter()
        .find(|c| c.name() == s)
    }
}

/// A device's rated figures, checked; every field optional (give what the datasheet says).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Rated {
    /// Model name, for the reader.
    pub model: Option<String>,
    /// Device class.
    pub class: Option<DeviceClass>,
    /// Spindle speed (hdd only).
    pub rpm: Option<u32>,
    /// Average seek time in ms (hdd only, with `rpm`): the deck's seek model; unset with
    /// an rpm, [`SEEK_MS_ASSUMED`] is used.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seek_ms: Option<f64>,
    /// Whether the drive has capacitors that flush its cache at power loss.
    pub power_loss_protection: Option<bool>,
    /// 4 KiB random read IOPS.
    pub randread_iops: Option<f64>,
    /// The queue depth `randread_iops` is rated at; unset = the best measured depth.
    pub randread_qd: Option<u32>,
    /// 4 KiB random write IOPS.
    pub randwrite_iops: Option<f64>,
    /// The queue depth `randwrite_iops` is rated at; unset = the best measured depth.
    pub randwrite_qd: Option<u32>,
    /// Sequential read MB/s (10^6 bytes, as datasheets count).
    pub seqread_mbps: Option<f64>,
    /// Sequential write MB/s.
    pub seqwrite_mbps: Option<f64>,
    /// Rated endurance, terabytes written.
    pub endurance_tbw: Option<f64>,
}

/// A rated file that cannot be used: names the file, the line and the key.
#[derive(Debug, thiserror::Error)]
#[error("{file}:{line}: {key}: {message}")]
pub struct RatedError {
    /// The file.
    pub file: String,
    /// 1-based line (1 when the whole file is at fault).
    pub line: usize,
    /// The key at fault, e.g. `rated.randread_qd`.
    pub key: String,
    /// What is wrong and what is accepted.
    pub message: String,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawFile {
    #[serde(default)]
    device: Option<RawDevice>,
    #[serde(default)]
    rated: Option<RawRated>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawDevice {
    model: Option<String>,
    class: Option<Spanned<String>>,
    rpm: Option<Spanned<i64>>,
    seek_ms: Option<Spanned<f64>>,
    power_loss_protection: Option<bool>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawRated {
    randread_iops: Option<Spanned<f64>>,
    randread_qd: Option<Spanned<i64>>,
    randwrite_iops: Option<Spanned<f64>>,
    randwrite_qd: Option<Spanned<i64>>,
    seqread_mbps: Option<Spanned<f64>>,
    seqwrite_mbps: Option<Spanned<f64>>,
    endurance_tbw: Option<Spanned<f64>>,
}

/// Reads and checks a rated-figures file (`--rated FILE`).
pub fn load(path: &Path) -> Result<Rated, RatedError> {
    let file = path.display().to_string();
    let raw = std::fs::read_to_string(path).map_err(|e| RatedError {
        file: file.clone(),
        line: 1,
        key: "-".into(),
        message: format!("cannot be read: {e}"),
    })?;
    parse(&raw, &file)
}

/// Rated figures from `--rated-set TABLE.KEY=VALUE` flags (e.g. `device.class=hdd`,
/// `rated.seqread_mbps=200`), checked by the same rules as a file; an error names the
/// flag's position as its line. A value that is not a TOML number or boolean is taken
/// as a string.
pub fn from_pairs(pairs: &[String]) -> Result<Rated, RatedError> {
    let mut text = String::new();
    for (i, p) in pairs.iter().enumerate() {
        let bad = |message: String| RatedError {
            file: "--rated-set".into(),
            line: i + 1,
            key: p.split('=').next().unwrap_or("-").trim().to_string(),
            message,
        };
        let Some((key, value)) = p.split_once('=') else {
            return Err(bad("give TABLE.KEY=VALUE, e.g. device.class=hdd".into()));
        };
        let Some((table, field)) = key.trim().split_once('.') else {
            return Err(bad(
                "name the table: device.KEY or rated.KEY, e.g. rated.seqread_mbps=200".into(),
            ));
        };
        let value = value.trim();
        let literal = value.parse::<f64>().is_ok() || value == "true" || value == "false";
        let value = if literal {
            value.to_string()
        } else {
            format!("{value:?}")
        };
        // One line per flag, so the parser's line is the flag's position.
        text.push_str(&format!("{}.{} = {value}\n", table.trim(), field.trim()));
    }
    parse(&text, "--rated-set")
}

/// `over`'s figures over `base`'s (flags over a file), checked again as a whole.
pub fn overlay(base: Rated, over: Rated) -> Result<Rated, RatedError> {
    let r = Rated {
        model: over.model.or(base.model),
        class: over.class.or(base.class),
        rpm: over.rpm.or(base.rpm),
        seek_ms: over.seek_ms.or(base.seek_ms),
        power_loss_protection: over.power_loss_protection.or(base.power_loss_protection),
        randread_iops: over.randread_iops.or(base.randread_iops),
        randread_qd: over.randread_qd.or(base.randread_qd),
        randwrite_iops: over.randwrite_iops.or(base.randwrite_iops),
        randwrite_qd: over.randwrite_qd.or(base.randwrite_qd),
        seqread_mbps: over.seqread_mbps.or(base.seqread_mbps),
        seqwrite_mbps: over.seqwrite_mbps.or(base.seqwrite_mbps),
        endurance_tbw: over.endurance_tbw.or(base.endurance_tbw),
    };
    if let (Some(_), Some(c)) = (r.rpm, r.class.filter(|c| *c != DeviceClass::Hdd)) {
        return Err(RatedError {
            file: "--rated and --rated-set".into(),
            line: 1,
            key: "device.rpm".into(),
            message: format!("only applies to class = \"hdd\", not {:?}", c.name()),
        });
    }
    Ok(r)
}

/// Parses rated-figures TOML; `file` names it in errors.
pub fn parse(raw: &str, file: &str) -> Result<Rated, RatedError> {
    let at = |span: Option<Range<usize>>, key: Option<&str>, message: String| {
        let off = span.map_or(0, |s| s.start).min(raw.len());
        let line = raw[..off].matches('\n').count() + 1;
        // toml names the key only in its message; the key is the text before `=` on the
        // line it points at (or the table header there).
        let key = key.map(str::to_string).unwrap_or_else(|| {
            fn header(t: &str) -> Option<&str> {
                t.starts_with('[')
                    .then(|| t.trim_matches(['[', ']']).trim())
            }
            let text = raw.lines().nth(line - 1).unwrap_or("").trim();
            match text.split_once('=') {
                Some((k, _)) => {
                    // Qualified by the table it sits in, as the message's readers know it.
                    let table = raw
                        .lines()
                        .take(line - 1)
                        .filter_map(|l| header(l.trim()))
                        .last();
                    match table {
                        Some(t) => format!("{t}.{}", k.trim()),
                        None => k.trim().to_string(),
                    }
                }
                None => header(text).unwrap_or("").to_string(),
            }
        });
        RatedError {
            file: file.to_string(),
            line,
            key: if key.is_empty() { "-".into() } else { key },
            message,
        }
    };
    let f: RawFile = toml::from_str(raw)
        .map_err(|e| at(e.span(), None, e.message().trim().replace('\n', "; ")))?;
    let mut r = Rated::default();
    let positive = |v: &Option<Spanned<f64>>, key: &str| -> Result<Option<f64>, RatedError> {
        match v {
            Some(s) if !(s.get_ref().is_finite() && *s.get_ref() > 0.0) => Err(at(
                Some(s.span()),
                Some(key),
                format!("{} is not a positive number", s.get_ref()),
            )),
            Some(s) => Ok(Some(*s.get_ref())),
            None => Ok(None),
        }
    };
    let whole = |v: &Option<Spanned<i64>>,
                 key: &str,
                 range: std::ops::RangeInclusive<i64>|
     -> Result<Option<u32>, RatedError> {
        match v {
            Some(s) if !range.contains(s.get_ref()) => Err(at(
                Some(s.span()),
                Some(key),
                format!(
                    "{} is out of range; give {}..={}",
                    s.get_ref(),
                    range.start(),
                    range.end()
                ),
            )),
            Some(s) => Ok(Some(*s.get_ref() as u32)),
            None => Ok(None),
        }
    };
    if let Some(d) = &f.device {
        r.model = d.model.clone();
        if let Some(c) = &d.class {
            r.class = Some(DeviceClass::parse(c.get_ref()).ok_or_else(|| {
                at(
                    Some(c.span()),
                    Some("device.class"),
                    format!(
                        "{:?} is not a device class; give hdd, sata-ssd, nvme, network or virtual",
                        c.get_ref()
                    ),
                )
            })?);
        }
        r.rpm = whole(&d.rpm, "device.rpm", 1000..=30_000)?;
        if let (Some(_), Some(c)) = (&d.rpm, r.class.filter(|c| *c != DeviceClass::Hdd)) {
            return Err(at(
                d.rpm.as_ref().map(|s| s.span()),
                Some("device.rpm"),
                format!("only applies to class = \"hdd\", not {:?}", c.name()),
            ));
        }
        r.seek_ms = positive(&d.seek_ms, "device.seek_ms")?;
        if let (Some(s), None) = (&d.seek_ms, r.rpm) {
            return Err(at(
                Some(s.span()),
                Some("device.seek_ms"),
                "the seek model is half a rotation + seek: give device.rpm too".into(),
            ));
        }
        r.power_loss_protection = d.power_loss_protection;
    }
    if let Some(x) = &f.rated {
        r.randread_iops = positive(&x.randread_iops, "rated.randread_iops")?;
        r.randwrite_iops = positive(&x.randwrite_iops, "rated.randwrite_iops")?;
        r.seqread_mbps = positive(&x.seqread_mbps, "rated.seqread_mbps")?;
        r.seqwrite_mbps = positive(&x.seqwrite_mbps, "rated.seqwrite_mbps")?;
        r.endurance_tbw = positive(&x.endurance_tbw, "rated.endurance_tbw")?;
        let max = crate::plan::MAX_JOBS_OR_DEPTH as i64;
        r.randread_qd = whole(&x.randread_qd, "rated.randread_qd", 1..=max)?;
        r.randwrite_qd = whole(&x.randwrite_qd, "rated.randwrite_qd", 1..=max)?;
    }
    Ok(r)
}

/// The run-option key prefix rated figures are stored under.
pub const PREFIX: &str = "rated.";

impl Rated {
    /// Stored with the probe run's options (`rated.<key>`), so `plumb show` and `plumb
    /// compare` read them with the run, on any host.
    pub fn to_options(&self) -> BTreeMap<String, String> {
        let mut o = BTreeMap::new();
        let v = serde_json::to_value(self).unwrap_or_default();
        if let Some(m) = v.as_object() {
            for (k, x) in m {
                let s = match x {
                    serde_json::Value::Null => continue,
                    serde_json::Value::String(s) => s.clone(),
                    other => other.to_string(),
                };
                o.insert(format!("{PREFIX}{k}"), s);
            }
        }
        o
    }

    /// Reads [`Self::to_options`] back; `None` when the run has no rated figures.
    pub fn from_options(o: &BTreeMap<String, String>) -> Option<Rated> {
        let mut m = serde_json::Map::new();
        for (k, v) in o {
            let Some(key) = k.strip_prefix(PREFIX) else {
                continue;
            };
            if key.contains('.') {
                continue;
            }
            let val = match key {
                "model" | "class" => serde_json::Value::String(v.clone()),
                _ => serde_json::from_str(v).ok()?,
            };
            m.insert(key.to_string(), val);
        }
        if m.is_empty() {
            return None;
        }
        serde_json::from_value(serde_json::Value::Object(m)).ok()
    }
}

/// One stored or live step, as the ratio table needs it.
#[derive(Debug, Clone, Copy)]
pub struct StepView<'a> {
    /// Its name.
    pub name: &'a str,
    /// Its config (`pattern`, `mode`, `bs`, `jobs`, `depth`).
    pub config: &'a serde_json::Value,
    /// Its figures.
    pub summary: &'a StepSummary,
}

/// One rated figure beside the measured one.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Ratio {
    /// The rated key, e.g. `randread_iops`.
    pub key: &'static str,
    /// What it is, in words, e.g. `4k random read IOPS at qd32`.
    pub what: String,
    /// The datasheet's figure.
    pub rated: f64,
    /// The measured figure, when a step measured it.
    pub measured: Option<f64>,
    /// The unit of both.
    pub unit: &'static str,
    /// The step it was read from, e.g. `randread.direct.j4.qd32`, or why none.
    pub source: String,
    /// measured / rated.
    pub ratio: Option<f64>,
    /// A few words a reader acts on.
    pub verdict: &'static str,
}

/// The verdict for measured / rated: far below (< 0.5), below (< 0.8), as rated (up to
/// 1.25), above (> 1.25, which for a write figure usually means a cache was measured).
pub fn verdict(ratio: f64) -> &'static str {
    if ratio < 0.5 {
        "far below rated"
    } else if ratio < 0.8 {
        "below rated"
    } else if ratio <= 1.25 {
        "as rated"
    } else {
        "above rated"
    }
}

fn cfg_str<'a>(s: &StepView<'a>, k: &str) -> &'a str {
    s.config.get(k).and_then(|v| v.as_str()).unwrap_or("")
}

fn cfg_u64(s: &StepView, k: &str) -> u64 {
    s.config.get(k).and_then(|v| v.as_u64()).unwrap_or(0)
}

/// The best O_DIRECT step of `pattern` passing `keep`, by `figure`.
fn best<'a>(
    steps: &[StepView<'a>],
    pattern: &str,
    keep: impl Fn(&StepView) -> bool,
    figure: impl Fn(&StepView) -> Option<f64>,
) -> Option<(f64, &'a str)> {
    steps
        .iter()
        .filter(|s| cfg_str(s, "pattern") == pattern && cfg_str(s, "mode") == "direct")
        .filter(|s| keep(s))
        .filter_map(|s| figure(s).map(|v| (v, s.name)))
        .max_by(|a, b| a.0.total_cmp(&b.0))
}

/// Each rated figure beside the matching measured one: random IOPS at 4 KiB and the
/// rated depth (best over job counts; any depth when none is rated), sequential MB/s
/// (best over request sizes), all O_DIRECT. Endurance is left out: the probe does not
/// know how much the device has written.
pub fn ratios(r: &Rated, steps: &[StepView]) -> Vec<Ratio> {
    let mut v = Vec::new();
    let row = |key, what: String, rated: f64, unit, found: Option<(f64, &str)>, why: String| {
        let ratio = found.map(|(m, _)| m / rated);
        Ratio {
            key,
            what,
            rated,
            measured: found.map(|f| f.0),
            unit,
            source: found.map_or(why, |f| f.1.to_string()),
            ratio,
            verdict: ratio.map_or("not measured", verdict),
        }
    };
    let iops = |s: &StepView| Some(s.summary.ops_sec).filter(|x| *x > 0.0);
    let mbs = |s: &StepView| s.summary.mb_sec.filter(|x| *x > 0.0);
    for (key, qd_key, pattern, rated, qd) in [
        (
            "randread_iops",
            "randread_qd",
            "randread",
            r.randread_iops,
            r.randread_qd,
        ),
        (
            "randwrite_iops",
            "randwrite_qd",
            "randwrite",
            r.randwrite_iops,
            r.randwrite_qd,
        ),
    ] {
        let Some(rated) = rated else { continue };
        let found = best(
            steps,
            pattern,
            |s| cfg_u64(s, "bs") == 4096 && qd.is_none_or(|q| cfg_u64(s, "depth") == u64::from(q)),
            iops,
        );
        let at = qd.map_or("the best depth".to_string(), |q| format!("qd{q}"));
        let why = match qd {
            Some(q) => {
                format!("no O_DIRECT 4k {pattern} step at depth {q} (add --depths {q}; {qd_key})")
            }
            None => format!("no O_DIRECT 4k {pattern} step"),
        };
        let what = format!(
            "4k random {} IOPS at {at}",
            if pattern == "randread" {
                "read"
            } else {
                "write"
            }
        );
        v.push(row(key, what, rated, "IOPS", found, why));
    }
    for (key, pattern, rated, what) in [
        ("seqread_mbps", "seqread", r.seqread_mbps, "sequential read"),
        (
            "seqwrite_mbps",
            "seqwrite",
            r.seqwrite_mbps,
            "sequential write",
        ),
    ] {
        let Some(rated) = rated else { continue };
        let found = best(steps, pattern, |_| true, mbs);
        v.push(row(
            key,
            what.to_string(),
            rated,
            "MB/s",
            found,
            format!("no O_DIRECT {pattern} step"),
        ));
    }
    v
}

/// What is known about the device whose commits were measured: from the rated file
/// first, else from sysfs.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct DeviceFacts {
    /// Its class.
    pub class: Option<DeviceClass>,
    /// Spindle speed, for a hdd.
    pub rpm: Option<u32>,
    /// Power-loss protection, when declared.
    pub power_loss_protection: Option<bool>,
    /// `queue/write_cache`: `write back` or `write through`.
    pub write_cache: Option<String>,
    /// Where the class came from, e.g. `rated file` or `sysfs: queue/rotational = 1`.
    pub class_from: String,
    /// `read_ahead_kb` of each device under the file, as `vda read_ahead_kb 128`.
    pub read_ahead: String,
}

impl DeviceFacts {
    /// The rated file's class, rpm and power-loss protection over what sysfs says.
    pub fn with_rated(mut self, r: &Rated) -> DeviceFacts {
        // A speed alone says it spins.
        if let Some(c) = r.class.or(r.rpm.map(|_| DeviceClass::Hdd)) {
            self.class = Some(c);
            self.class_from = "rated figures".into();
        }
        if r.rpm.is_some() {
            self.rpm = r.rpm;
        }
        if r.power_loss_protection.is_some() {
            self.power_loss_protection = r.power_loss_protection;
        }
        self
    }
}

/// The seek time the deck's model uses when only an rpm is given: 8.5 ms, a 7200 rpm
/// desktop drive's datasheet average read seek (the deck's laptop drive rates 11 ms).
pub const SEEK_MS_ASSUMED: f64 = 8.5;

/// The deck's model of a spinning disk's random reads: IOPS = 1 / (half a rotation +
/// average seek), beside the measured read-only seeks (one reader, O_DIRECT, depth 1).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SeekModel {
    /// Spindle speed.
    pub rpm: u32,
    /// Average seek, ms.
    pub seek_ms: f64,
    /// Whether `seek_ms` is [`SEEK_MS_ASSUMED`] (no `device.seek_ms` given).
    pub seek_assumed: bool,
    /// Half a rotation, ms.
    pub rotation_ms: f64,
    /// 1 / (rotation_ms + seek_ms).
    pub model_iops: f64,
    /// The measured read-only seeks per second, when a step measured them.
    pub measured: Option<f64>,
    /// The step it was read from.
    pub source: Option<String>,
    /// measured / model.
    pub ratio: Option<f64>,
    /// One line: the model and the measured figure.
    pub message: String,
}

/// The seek model for `r`'s rpm (none without one) against the O_DIRECT random read at
/// one job and depth 1: at 8 KiB when it ran (the deck's seeks), else the smallest size.
pub fn seek_model(r: &Rated, steps: &[StepView]) -> Option<SeekModel> {
    let rpm = r.rpm?;
    let seek_ms = r.seek_ms.unwrap_or(SEEK_MS_ASSUMED);
    let rotation_ms = 60_000.0 / f64::from(rpm) / 2.0;
    let model_iops = 1000.0 / (rotation_ms + seek_ms);
    let found = steps
        .iter()
        .filter(|s| {
            cfg_str(s, "pattern") == "randread"
                && cfg_str(s, "mode") == "direct"
                && cfg_u64(s, "jobs") == 1
                && cfg_u64(s, "depth") == 1
                && s.summary.ops > 0
        })
        .min_by_key(|s| (cfg_u64(s, "bs") != 8192, cfg_u64(s, "bs")));
    let measured = found.map(|s| s.summary.ops_sec);
    let ratio = measured.map(|m| m / model_iops);
    let assumed = if r.seek_ms.is_none() {
        " (assumed: no device.seek_ms given)"
    } else {
        ""
    };
    let head = format!(
        "the deck's model of a {rpm} rpm disk with {seek_ms} ms seeks{assumed}: IOPS = 1 / \
         (half a rotation + seek) = 1 / ({rotation_ms:.2} ms + {seek_ms} ms) = {model_iops:.0}"
    );
    let message = match (found, measured, ratio) {
        (Some(s), Some(m), Some(x)) => format!(
            "{head}; measured read-only seeks are {m:.0}/s ({}), {x:.2}× that",
            s.name
        ),
        _ => format!("{head}; no O_DIRECT randread step at 1 job, depth 1 to set beside it"),
    };
    Some(SeekModel {
        rpm,
        seek_ms,
        seek_assumed: r.seek_ms.is_none(),
        rotation_ms,
        model_iops,
        measured,
        source: found.map(|s| s.name.to_string()),
        ratio,
        message,
    })
}

/// The deck's "Writes faster than reads? Probably low read-ahead settings somewhere.",
/// read from one sequential size's buffered write and read.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ReadAheadCheck {
    /// The request size, bytes.
    pub bs: u64,
    /// Buffered sequential read MB/s.
    pub read_mbs: f64,
    /// Buffered sequential write MB/s (closed by fdatasync).
    pub write_mbs: f64,
    /// Whether writes were faster.
    pub writes_faster: bool,
    /// `read_ahead_kb` of each device under the file, as `name read_ahead_kb N`.
    pub read_ahead: String,
    /// One line.
    pub message: String,
}

/// One [`ReadAheadCheck`] per sequential size both buffered steps ran at; `read_ahead`
/// names the devices' settings.
pub fn read_ahead_checks(steps: &[StepView], read_ahead: &str) -> Vec<ReadAheadCheck> {
    let mbs = |pattern: &str, bs: u64| {
        steps
            .iter()
            .find(|s| {
                cfg_str(s, "pattern") == pattern
                    && cfg_str(s, "mode") == "buffered"
                    && cfg_u64(s, "bs") == bs
            })
            .and_then(|s| s.summary.mb_sec)
            .filter(|v| *v > 0.0)
    };
    let mut sizes: Vec<u64> = steps
        .iter()
        .filter(|s| cfg_str(s, "pattern") == "seqread" && cfg_str(s, "mode") == "buffered")
        .map(|s| cfg_u64(s, "bs"))
        .collect();
    sizes.sort_unstable();
    sizes.dedup();
    sizes
        .into_iter()
        .filter_map(|bs| {
            let (rd, wr) = (mbs("seqread", bs)?, mbs("seqwrite", bs)?);
            let label = crate::disk::bs_label(bs as usize);
            let message = if wr > rd {
                format!(
                    "{label} buffered: writes faster than reads ({wr:.0} MB/s written, {rd:.0} \
                     MB/s read): the deck's \"probably low read-ahead settings somewhere\" \
                     ({read_ahead})"
                )
            } else {
                format!(
                    "{label} buffered: reads at least as fast as writes ({rd:.0} against {wr:.0} \
                     MB/s): read-ahead is not holding reads back ({read_ahead})"
                )
            };
            Some(ReadAheadCheck {
                bs,
                read_mbs: rd,
                write_mbs: wr,
                writes_faster: wr > rd,
                read_ahead: read_ahead.to_string(),
                message,
            })
        })
        .collect()
}

/// A hdd without a declared speed is judged as the fastest common one (15,000 rpm), so
/// only rates no spinning disk can reach are flagged.
pub const HDD_RPM_ASSUMED: u32 = 15_000;

/// A commit may land at most this many times faster than one per rotation before it is
/// flagged: the deck measured 105/s on a 7200 rpm drive (one per rotation, 120/s, less
/// seek and settle) and 1048/s once its volatile cache was on; ×2 leaves room for a
/// commit that catches the platter early without letting a cache through.
pub const HDD_MARGIN: f64 = 2.0;

/// The fastest durable single-thread commit on flash without power-loss protection.
///
/// Without capacitors, a flush must program the written page (and the FTL's mapping
/// update) into NAND before the drive may acknowledge it: a TLC page program takes
/// roughly 0.5–1 ms plus the flush's own overhead on consumer SSDs. 0.5 ms per commit
/// is the optimistic end, so 2,000 commits/s from one thread is the most a drive that
/// honours its flushes can reach; a faster figure means the flush returned from DRAM.
pub const SSD_NO_PLP_MAX_COMMITS: f64 = 2_000.0;

/// How much a verdict on the write cache matters.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Level {
    /// Plausible for durable media.
    Ok,
    /// Cannot be judged; says why.
    Info,
    /// Acknowledged commits may be lost at power loss.
    Warn,
}

/// Whether the measured single-thread commit rate is possible on stable media.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CacheCheck {
    /// How much it matters.
    pub level: Level,
    /// The highest plausible durable rate, when the class gives one.
    pub bound: Option<f64>,
    /// The measured 1-thread commits/s.
    pub measured: f64,
    /// One line: what was found and why.
    pub message: String,
    /// What to do, when there is something to do.
    pub fix: Option<String>,
}

/// The highest plausible durable single-thread commit rate for a device, and why; `None`
/// when its class sets no bound (flash with power-loss protection, or unknown).
pub fn commit_bound(f: &DeviceFacts) -> Option<(f64, String)> {
    match f.class? {
        DeviceClass::Hdd => {
            let (rpm, assumed) = match f.rpm {
                Some(r) => (r, ""),
                None => (
                    HDD_RPM_ASSUMED,
                    ", speed not given so the fastest common is assumed",
                ),
            };
            let per_rot = f64::from(rpm) / 60.0;
            Some((
                per_rot * HDD_MARGIN,
                format!(
                    "a {rpm} rpm disk makes at most one durable commit per rotation \
                     ({per_rot:.0}/s; ×{HDD_MARGIN} margin{assumed})"
                ),
            ))
        }
        DeviceClass::SataSsd | DeviceClass::Nvme if f.power_loss_protection == Some(false) => {
            Some((
                SSD_NO_PLP_MAX_COMMITS,
                format!(
                    "flash without power-loss protection must program NAND on every flush \
                     (≥ 0.5 ms, so at most {SSD_NO_PLP_MAX_COMMITS:.0}/s)"
                ),
            ))
        }
        _ => None,
    }
}

/// Judges a measured single-thread commit rate against the device's class: a 7200 rpm
/// hdd at 1048/s is flagged, at 105/s it is not; flash with power-loss protection is
/// never flagged; virtual and network devices cannot be judged.
pub fn check_commits(f: &DeviceFacts, measured: f64) -> CacheCheck {
    let mk = |level, bound, message: String, fix: Option<&str>| CacheCheck {
        level,
        bound,
        measured,
        message,
        fix: fix.map(str::to_string),
    };
    match f.class {
        Some(DeviceClass::Virtual | DeviceClass::Network) => {
            let what = if f.class == Some(DeviceClass::Virtual) {
                "hypervisor"
            } else {
                "network storage"
            };
            return mk(
                Level::Info,
                None,
                format!(
                    "cannot judge {measured:.0} commits/s on a {} device: the {what} may cache \
                     acknowledged writes ({})",
                    f.class.map_or("-", DeviceClass::name),
                    f.class_from
                ),
                None,
            );
        }
        None => {
            return mk(
                Level::Info,
                None,
                "cannot judge the commit rate: device class unknown; give it in --rated \
                 ([device] class = ...)"
                    .into(),
                None,
            )
        }
        _ => {}
    }
    let Some((bound, why)) = commit_bound(f) else {
        let plp = match f.power_loss_protection {
            Some(true) => "it declares power-loss protection, so its cache is durable",
            _ => {
                "power-loss protection not declared, so no bound is set (give \
                 power_loss_protection in --rated)"
            }
        };
        return mk(
            Level::Ok,
            None,
            format!(
                "{measured:.0} commits/s on {}: {plp}",
                f.class.map_or("-", DeviceClass::name)
            ),
            None,
        );
    };
    if measured > bound {
        let cache = f
            .write_cache
            .as_deref()
            .map(|c| format!("; the kernel sees its cache as {c:?}"))
            .unwrap_or_default();
        mk(
            Level::Warn,
            Some(bound),
            format!(
                "write cache likely volatile: acknowledged commits may be lost at power loss \
                 ({measured:.0} commits/s from one thread > {bound:.0}/s: {why}{cache})"
            ),
            Some(
                "turn the drive's write cache off (hdparm -W0 /dev/X, or sdparm --clear=WCE) or \
                 use a drive with power-loss protection, then probe again",
            ),
        )
    } else {
        mk(
            Level::Ok,
            Some(bound),
            format!("{measured:.0} commits/s from one thread ≤ {bound:.0}/s: {why}"),
            None,
        )
    }
}

/// The single-thread commit rate the probe measured: O_DIRECT if it ran, else buffered.
pub fn commit_rate_t1(steps: &[StepView]) -> Option<f64> {
    let at = |mode: &str| {
        steps
            .iter()
            .find(|s| {
                cfg_str(s, "pattern") == "commit"
                    && cfg_str(s, "mode") == mode
                    && cfg_u64(s, "jobs") == 1
                    && s.summary.ops > 0
            })
            .map(|s| s.summary.ops_sec)
    };
    at("direct").or_else(|| at("buffered"))
}

/// A device's class from sysfs: the driver first (a virtio or Xen disk says nothing of
/// the media behind it), then `queue/rotational`. `in_vm` marks any other disk virtual
/// too: an emulated SCSI or SATA disk's rotational flag is the hypervisor's choice.
pub fn class_from_sysfs(
    driver: Option<&str>,
    rotational: Option<bool>,
    in_vm: bool,
) -> (Option<DeviceClass>, String) {
    let d = driver.unwrap_or("");
    let by_driver = match d {
        "virtio_blk" | "virtio" | "xen" | "xen_blkfront" | "vbd" | "loop" | "zram" => {
            Some(DeviceClass::Virtual)
        }
        "nbd" | "rbd" | "iscsi" => Some(DeviceClass::Network),
        _ => None,
    };
    if let Some(c) = by_driver {
        return (Some(c), format!("sysfs: driver {d}"));
    }
    if in_vm {
        return (
            Some(DeviceClass::Virtual),
            "this host is a virtual machine".into(),
        );
    }
    if d == "nvme" {
        return (Some(DeviceClass::Nvme), "sysfs: driver nvme".into());
    }
    match rotational {
        Some(true) => (Some(DeviceClass::Hdd), "sysfs: queue/rotational = 1".into()),
        Some(false) => (
            Some(DeviceClass::SataSsd),
            "sysfs: queue/rotational = 0".into(),
        ),
        None => (None, "sysfs: nothing known".into()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const DECK: &str = r#"
[device]
model = "Samsung PM983"
class = "nvme"
power_loss_protection = true
[rated]
randread_iops = 540000    # at depth below
randread_qd = 32
randwrite_iops = 50000
seqread_mbps = 3000
seqwrite_mbps = 1400
endurance_tbw = 1366
"#;

    fn facts(class: DeviceClass, rpm: Option<u32>, plp: Option<bool>) -> DeviceFacts {
        DeviceFacts {
            class: Some(class),
            rpm,
            power_loss_protection: plp,
            write_cache: Some("write back".into()),
            class_from: "test".into(),
            read_ahead: String::new(),
        }
    }

    #[test]
    fn a_7200_rpm_disk_at_1048_commits_is_flagged_and_at_105_it_is_not() {
        let hdd = facts(DeviceClass::Hdd, Some(7200), None);
        let c = check_commits(&hdd, 1048.0);
        assert_eq!(c.level, Level::Warn, "{c:?}");
        assert_eq!(c.bound, Some(240.0));
        assert!(
            c.message.starts_with("write cache likely volatile"),
            "{c:?}"
        );
        assert!(c.fix.as_deref().unwrap().contains("hdparm -W0"));
        let c = check_commits(&hdd, 105.0);
        assert_eq!(c.level, Level::Ok, "{c:?}");
        // No speed given: judged as a 15k rpm disk (500/s), 1048 still flagged.
        let c = check_commits(&facts(DeviceClass::Hdd, None, None), 1048.0);
        assert_eq!((c.level, c.bound), (Level::Warn, Some(500.0)));
    }

    #[test]
    fn flash_with_plp_is_never_flagged_and_without_it_is_bounded() {
        let c = check_commits(&facts(DeviceClass::Nvme, None, Some(true)), 20_000.0);
        assert_eq!((c.level, c.bound), (Level::Ok, None), "{c:?}");
        let c = check_commits(&facts(DeviceClass::SataSsd, None, Some(false)), 20_000.0);
        assert_eq!(c.level, Level::Warn, "{c:?}");
        let c = check_commits(&facts(DeviceClass::SataSsd, None, Some(false)), 800.0);
        assert_eq!(c.level, Level::Ok, "{c:?}");
        // Not declared: no bound, no warning.
        let c = check_commits(&facts(DeviceClass::Nvme, None, None), 20_000.0);
        assert_eq!((c.level, c.bound), (Level::Ok, None));
    }

    #[test]
    fn virtual_and_network_devices_cannot_be_judged() {
        for class in [DeviceClass::Virtual, DeviceClass::Network] {
            let c = check_commits(&facts(class, None, None), 50_000.0);
            assert_eq!(c.level, Level::Info, "{c:?}");
            assert!(c.message.starts_with("cannot judge"), "{c:?}");
        }
        let c = check_commits(&DeviceFacts::default(), 50.0);
        assert_eq!(c.level, Level::Info);
    }

    #[test]
    fn sysfs_classes() {
        assert_eq!(
            class_from_sysfs(Some("virtio_blk"), Some(true), true).0,
            Some(DeviceClass::Virtual)
        );
        assert_eq!(
            class_from_sysfs(Some("sd"), Some(true), false).0,
            Some(DeviceClass::Hdd)
        );
        assert_eq!(
            class_from_sysfs(Some("sd"), Some(true), true).0,
            Some(DeviceClass::Virtual)
        );
        assert_eq!(
            class_from_sysfs(Some("nvme"), Some(false), false).0,
            Some(DeviceClass::Nvme)
        );
        assert_eq!(
            class_from_sysfs(Some("sd"), Some(false), false).0,
            Some(DeviceClass::SataSsd)
        );
        assert_eq!(class_from_sysfs(None, None, false).0, None);
    }

    #[test]
    fn the_decks_file_parses_and_round_trips_through_run_options() {
        let r = parse(DECK, "pm983.toml").unwrap();
        assert_eq!(r.model.as_deref(), Some("Samsung PM983"));
        assert_eq!(r.class, Some(DeviceClass::Nvme));
        assert_eq!(r.randread_iops, Some(540_000.0));
        assert_eq!(r.randread_qd, Some(32));
        assert_eq!(r.endurance_tbw, Some(1366.0));
        let o = r.to_options();
        assert_eq!(o["rated.class"], "nvme");
        assert_eq!(o["rated.randread_qd"], "32");
        assert_eq!(Rated::from_options(&o), Some(r));
        assert_eq!(Rated::from_options(&BTreeMap::new()), None);
        // An rpm alone implies a hdd.
        let r = parse("[device]\nrpm = 5400\n", "x").unwrap();
        assert_eq!(r.class, None);
        let f = DeviceFacts::default().with_rated(&r);
        assert_eq!((f.class, f.rpm), (Some(DeviceClass::Hdd), Some(5400)));
    }

    #[test]
    fn bad_files_name_the_file_line_and_key() {
        let cases = [
            (
                "[rated]\nrandread_iop = 5\n",
                2,
                "rated.randread_iop",
                "unknown field",
            ),
            (
                "[rated]\nseqread_mbps = \"fast\"\n",
                2,
                "rated.seqread_mbps",
                "",
            ),
            (
                "[rated]\n\nseqread_mbps = -3\n",
                3,
                "rated.seqread_mbps",
                "positive",
            ),
            (
                "[rated]\nrandread_qd = 0\n",
                2,
                "rated.randread_qd",
                "out of range",
            ),
            ("[device]\nclass = \"ssd\"\n", 2, "device.class", "sata-ssd"),
            (
                "[device]\nclass = \"nvme\"\nrpm = 7200\n",
                3,
                "device.rpm",
                "only applies",
            ),
            ("[disk]\nx = 1\n", 1, "disk", "unknown field"),
            ("[rated\n", 1, "rated", "expected"),
        ];
        for (text, line, key, words) in cases {
            let e = parse(text, "r.toml").unwrap_err();
            assert_eq!((e.line, e.key.as_str()), (line, key), "{text:?}: {e}");
            assert!(
                e.to_string()
                    .starts_with(&format!("r.toml:{line}: {key}: ")),
                "{e}"
            );
            assert!(e.message.contains(words), "{text:?}: {e}");
        }
        let e = load(Path::new("/nonexistent/r.toml"))
            .unwrap_err()
            .to_string();
        assert!(e.starts_with("/nonexistent/r.toml:1:"), "{e}");
    }

    #[test]
    fn flags_give_the_same_figures_and_override_a_file() {
        let flags: Vec<String> = [
            "device.class=hdd",
            "device.rpm = 7200",
            "device.model=WD Black",
            "rated.seqread_mbps=150",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        let r = from_pairs(&flags).unwrap();
        assert_eq!(r.class, Some(DeviceClass::Hdd));
        assert_eq!(r.rpm, Some(7200));
        assert_eq!(r.model.as_deref(), Some("WD Black"));
        assert_eq!(r.seqread_mbps, Some(150.0));
        let e = from_pairs(&["rated.seqread_mbps=200".into(), "rated.x=1".into()]).unwrap_err();
        assert_eq!(
            (e.file.as_str(), e.line, e.key.as_str()),
            ("--rated-set", 2, "rated.x")
        );
        let e = from_pairs(&["class=hdd".into()]).unwrap_err();
        assert!(e.message.contains("name the table"), "{e}");
        let e = from_pairs(&["device.class".into()]).unwrap_err();
        assert!(e.message.contains("TABLE.KEY=VALUE"), "{e}");
        // Flags over the file: the file's PM983 read as a 7200 rpm disk is refused.
        let file = parse(DECK, "x").unwrap();
        let o = overlay(
            file.clone(),
            from_pairs(&["rated.seqread_mbps=10".into()]).unwrap(),
        )
        .unwrap();
        assert_eq!(
            (o.seqread_mbps, o.randread_iops),
            (Some(10.0), Some(540_000.0))
        );
        let e = overlay(file, from_pairs(&["device.rpm=7200".into()]).unwrap()).unwrap_err();
        assert_eq!(e.key, "device.rpm");
    }

    fn step(
        name: &str,
        cfg: serde_json::Value,
        ops_sec: f64,
        mb: f64,
    ) -> (String, serde_json::Value, StepSummary) {
        (
            name.into(),
            cfg,
            StepSummary {
                ops: 100,
                ops_sec,
                mb_sec: Some(mb),
                ..StepSummary::default()
            },
        )
    }

    #[test]
    fn ratios_pick_the_rated_depth_best_over_jobs_and_o_direct_only() {
        use serde_json::json;
        let rr = |j: u64, qd: u64, bs: u64, mode: &str| json!({"pattern": "randread", "mode": mode, "bs": bs, "jobs": j, "depth": qd});
        let steps = [
            step(
                "randread.direct.j1.qd32",
                rr(1, 32, 4096, "direct"),
                100_000.0,
                400.0,
            ),
            step(
                "randread.direct.j4.qd32",
                rr(4, 32, 4096, "direct"),
                300_000.0,
                1200.0,
            ),
            step(
                "randread.direct.j4.qd1",
                rr(4, 1, 4096, "direct"),
                400_000.0,
                1.0,
            ),
            step(
                "randread8k.direct.j4.qd32",
                rr(4, 32, 8192, "direct"),
                900_000.0,
                1.0,
            ),
            step(
                "randread.buffered.j4.qd32",
                rr(4, 32, 4096, "buffered"),
                990_000.0,
                1.0,
            ),
            step(
                "seqread.direct",
                json!({"pattern": "seqread", "mode": "direct", "bs": 1048576}),
                3000.0,
                3300.0,
            ),
        ];
        let views: Vec<StepView> = steps
            .iter()
            .map(|(n, c, s)| StepView {
                name: n,
                config: c,
                summary: s,
            })
            .collect();
        let r = parse(DECK, "x").unwrap();
        let t = ratios(&r, &views);
        let by = |k: &str| t.iter().find(|x| x.key == k).unwrap();
        let rr = by("randread_iops");
        assert_eq!(rr.measured, Some(300_000.0));
        assert_eq!(rr.source, "randread.direct.j4.qd32");
        assert!((rr.ratio.unwrap() - 300_000.0 / 540_000.0).abs() < 1e-12);
        assert_eq!(rr.verdict, "below rated");
        let sr = by("seqread_mbps");
        assert_eq!((sr.measured, sr.verdict), (Some(3300.0), "as rated"));
        let w = by("randwrite_iops");
        assert_eq!((w.measured, w.verdict), (None, "not measured"));
        assert!(w.source.contains("randwrite"), "{w:?}");
        // Endurance is not set beside anything the probe measures.
        assert!(t.iter().all(|x| x.key != "endurance_tbw"));
        // No rated depth: the best depth.
        let mut any = r.clone();
        any.randread_qd = None;
        assert_eq!(ratios(&any, &views)[0].measured, Some(400_000.0));
        // A rated depth nothing measured: said, not guessed.
        any.randread_qd = Some(16);
        let x = &ratios(&any, &views)[0];
        assert_eq!(x.verdict, "not measured");
        assert!(x.source.contains("--depths 16"), "{x:?}");
        assert_eq!(verdict(0.49), "far below rated");
        assert_eq!(verdict(1.3), "above rated");
    }

    #[test]
    fn commit_rate_prefers_the_direct_single_thread_step() {
        use serde_json::json;
        let c = |mode: &str, jobs: u64| json!({"pattern": "commit", "mode": mode, "jobs": jobs});
        let steps = [
            step("commit.buffered.t1", c("buffered", 1), 50.0, 0.0),
            step("commit.direct.t2", c("direct", 2), 300.0, 0.0),
            step("commit.direct.t1", c("direct", 1), 150.0, 0.0),
        ];
        let views: Vec<StepView> = steps
            .iter()
            .map(|(n, c, s)| StepView {
                name: n,
                config: c,
                summary: s,
            })
            .collect();
        assert_eq!(commit_rate_t1(&views), Some(150.0));
        assert_eq!(commit_rate_t1(&views[..2]), Some(50.0));
        assert_eq!(commit_rate_t1(&[]), None);
    }

    #[test]
    fn the_seek_model_is_half_a_rotation_plus_the_seek_and_read_ahead_is_read() {
        use serde_json::json;
        let cfg = [
            json!({"pattern": "randread", "mode": "direct", "bs": 4096, "jobs": 1, "depth": 1}),
            json!({"pattern": "randread", "mode": "direct", "bs": 8192, "jobs": 1, "depth": 1}),
            json!({"pattern": "seqread", "mode": "buffered", "bs": 8192}),
            json!({"pattern": "seqwrite", "mode": "buffered", "bs": 8192}),
        ];
        let sum = |ops_sec: f64, mb: Option<f64>| StepSummary {
            ops: 10,
            ops_sec,
            mb_sec: mb,
            ..StepSummary::default()
        };
        let sums = [
            sum(300.0, None),
            sum(158.0, None),
            sum(1.0, Some(59.0)),
            sum(1.0, Some(71.0)),
        ];
        let names = ["a", "randread8k.direct.j1.qd1", "c", "d"];
        let views: Vec<StepView> = (0..4)
            .map(|i| StepView {
                name: names[i],
                config: &cfg[i],
                summary: &sums[i],
            })
            .collect();
        let r = from_pairs(&["device.rpm=7200".into()]).unwrap();
        let m = seek_model(&r, &views).unwrap();
        // 1 / (4.17 ms + 8.5 ms) = 79 IOPS; the 8 KiB reader is the deck's.
        assert_eq!(m.model_iops.round(), 79.0);
        assert!(m.seek_assumed);
        assert_eq!(m.source.as_deref(), Some("randread8k.direct.j1.qd1"));
        assert!(
            m.message.contains("= 79;") && m.message.contains("2.00×"),
            "{}",
            m.message
        );
        let r = from_pairs(&["device.rpm=7200".into(), "device.seek_ms=11".into()]).unwrap();
        assert_eq!(seek_model(&r, &views).unwrap().model_iops.round(), 66.0);
        assert!(seek_model(&Rated::default(), &views).is_none());
        let e = from_pairs(&["device.seek_ms=11".into()]).unwrap_err();
        assert_eq!(e.key, "device.seek_ms");
        let c = read_ahead_checks(&views, "sdb read_ahead_kb 128");
        assert_eq!(c.len(), 1);
        assert!(c[0].writes_faster);
        assert!(
            c[0].message.contains("writes faster than reads") && c[0].message.contains("sdb"),
            "{}",
            c[0].message
        );
    }
}
