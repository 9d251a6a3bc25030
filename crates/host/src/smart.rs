//! Disk health from SMART: wear, spare, media errors, critical warnings, temperature,
//! power-on hours and bytes written of the physical devices under the data directory,
//! because a worn or erroring SSD is slower (read retries, throttling) and was behind
//! weeks of misleading results in the seeds.
//!
//! Sources, in order: `smartctl --json -a /dev/X` (smartmontools), then for NVMe
//! `nvme smart-log -o json` (nvme-cli); otherwise each device says why nothing was read.
//! The parsers are pure functions of the tool's text.

use crate::command::{Runner, ToolError};
use crate::storage::BlockDevice;
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// NVMe "data units" are thousands of 512-byte blocks (NVMe base spec, SMART log).
const NVME_DATA_UNIT: u64 = 512_000;

/// SMART health of one physical device, or why it could not be read. Fields are `None`
/// when the device does not report them.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Default)]
#[serde(default)]
pub struct DiskHealth {
    /// Kernel name of the device, e.g. `nvme0n1`, `sda`.
    pub device: String,
    /// The tool the figures came from: `smartctl` or `nvme-cli`.
    pub source: Option<String>,
    /// Why nothing was read, e.g. `smartctl not installed`; `None` when figures were read.
    pub unavailable: Option<String>,
    /// Model as the tool reports it.
    pub model: Option<String>,
    /// The drive's firmware revision (smartctl's `firmware_version`): an SSD's firmware
    /// changes its garbage collection and so its write latency (seed 004 records it).
    pub firmware: Option<String>,
    /// Share of rated endurance used, percent (NVMe `percentage_used`; ATA 100 minus the
    /// normalised wear attribute). Can exceed 100.
    pub percentage_used: Option<u64>,
    /// Remaining spare capacity, percent (NVMe).
    pub available_spare: Option<u64>,
    /// The spare level below which the device itself reports a critical warning (NVMe).
    pub available_spare_threshold: Option<u64>,
    /// Unrecovered media and data-integrity errors (NVMe `media_errors`; ATA 187 + 198).
    pub media_errors: Option<u64>,
    /// NVMe critical warning bits (spare, temperature, reliability, read-only, backup).
    pub critical_warning: Option<u64>,
    /// Current temperature, °C.
    pub temperature_c: Option<i64>,
    /// Power-on hours.
    pub power_on_hours: Option<u64>,
    /// Bytes written by the host over the device's life.
    pub bytes_written: Option<u64>,
    /// ATA 5: sectors already remapped to spares.
    pub reallocated_sectors: Option<u64>,
    /// ATA 197: sectors waiting to be remapped (unreadable now).
    pub pending_sectors: Option<u64>,
    /// The device's own overall self-assessment.
    pub smart_passed: Option<bool>,
}

impl DiskHealth {
    fn unavailable(device: &str, why: impl Into<String>) -> DiskHealth {
        DiskHealth {
            device: device.to_string(),
            unavailable: Some(why.into()),
            ..Default::default()
        }
    }

    /// Whether any health figure was read.
    fn has_figures(&self) -> bool {
        self.percentage_used.is_some()
            || self.available_spare.is_some()
            || self.media_errors.is_some()
            || self.critical_warning.is_some()
            || self.temperature_c.is_some()
            || self.power_on_hours.is_some()
            || self.bytes_written.is_some()
            || self.reallocated_sectors.is_some()
            || self.smart_passed.is_some()
    }

    /// The figures in one line, e.g. `3% used, spare 100% (threshold 10%), 0 media errors,
    /// 36 °C, 2401 h, 4.0 TB written`; only what was read.
    pub fn figures(&self) -> String {
        let mut v = Vec::new();
        if let Some(u) = self.percentage_used {
            v.push(format!("{u}% of rated life used"));
        }
        if let Some(s) = self.available_spare {
            v.push(match self.available_spare_threshold {
                Some(t) => format!("spare {s}% (threshold {t}%)"),
                None => format!("spare {s}%"),
            });
        }
        if let Some(e) = self.media_errors {
            v.push(format!("{e} media errors"));
        }
        if let Some(c) = self.critical_warning {
            v.push(format!("critical warning 0x{c:02x}"));
        }
        if let Some(r) = self.reallocated_sectors {
            v.push(format!("{r} reallocated sectors"));
        }
        if let Some(p) = self.pending_sectors {
            v.push(format!("{p} pending sectors"));
        }
        if let Some(t) = self.temperature_c {
            v.push(format!("{t} °C"));
        }
        if let Some(h) = self.power_on_hours {
            v.push(format!("{h} h powered on"));
        }
        if let Some(f) = &self.firmware {
            v.push(format!("firmware {f}"));
        }
        if let Some(b) = self.bytes_written {
            v.push(format!("{:.1} TB written", b as f64 / 1e12));
        }
        if let Some(p) = self.smart_passed {
            v.push(format!(
                "self-assessment {}",
                if p { "passed" } else { "FAILED" }
            ));
        }
        v.join(", ")
    }
}

/// Reads SMART health of every physical device in `devices`, running smartctl (and
/// nvme-cli for NVMe when smartctl gives nothing) once per device.
pub(crate) fn read(devices: &[BlockDevice], runner: &Runner) -> Vec<DiskHealth> {
    devices
        .iter()
        .filter(|d| d.physical)
        .map(|d| read_one(d, runner))
        .collect()
}

fn read_one(d: &BlockDevice, runner: &Runner) -> DiskHealth {
    let name = d.name.as_str();
    match d.kind.as_str() {
        "virtio" => {
            return DiskHealth::unavailable(
                name,
                format!("virtio disk {name}: no SMART (virtio exposes none)"),
            )
        }
        "xen" => {
            return DiskHealth::unavailable(
                name,
                format!("Xen disk {name}: no SMART (the hypervisor exposes none)"),
            )
        }
        "mmc" => return DiskHealth::unavailable(name, format!("MMC/SD device {name}: no SMART")),
        _ => {}
    }
    let dev = format!("/dev/{name}");
    let smart_why = match runner.run("smartctl", &["--json", "-a", &dev]) {
        Ok(out) => match parse_smartctl_json(&out.stdout) {
            Ok(mut h) => {
                h.device = name.to_string();
                return h;
            }
            Err(why) => why,
        },
        Err(e) => e.to_string(),
    };
    if d.kind != "nvme" {
        return DiskHealth::unavailable(name, smart_why);
    }
    let nvme_why = match runner.run("nvme", &["smart-log", "-o", "json", &dev]) {
        Ok(out) => match parse_nvme_smart_log(&out.stdout) {
            Ok(mut h) => {
                h.device = name.to_string();
                return h;
            }
            Err(why) => match out.stderr.lines().next() {
                Some(l) if !l.trim().is_empty() => format!("{why} ({})", l.trim()),
                _ => why,
            },
        },
        Err(ToolError::NotInstalled { .. }) => "nvme-cli not installed".to_string(),
        Err(e) => e.to_string(),
    };
    DiskHealth::unavailable(name, format!("{smart_why}; {nvme_why}"))
}

/// A JSON number (or a numeric string, possibly with thousands separators) as u64.
fn num(v: Option<&Value>) -> Option<u64> {
    match v? {
        Value::Number(n) => n
            .as_u64()
            .or_else(|| n.as_f64().filter(|f| *f >= 0.0).map(|f| f as u64)),
        Value::String(s) => s.replace(',', "").trim().parse().ok(),
        Value::Object(o) => num(o.get("value")),
        _ => None,
    }
}

/// Parses `smartctl --json -a` output (NVMe and ATA alike); `Err` says why it holds no
/// health figures, e.g. smartctl's own message `/dev/vda: Unable to detect device type`.
pub fn parse_smartctl_json(text: &str) -> Result<DiskHealth, String> {
    let j: Value = serde_json::from_str(text).map_err(|e| {
        format!(
            "smartctl output is not JSON ({e}): {}",
            text.lines().next().unwrap_or("").trim()
        )
    })?;
    let mut h = DiskHealth {
        source: Some("smartctl".into()),
        model: j
            .get("model_name")
            .and_then(Value::as_str)
            .map(str::to_string),
        firmware: j
            .get("firmware_version")
            .and_then(Value::as_str)
            .map(str::to_string),
        smart_passed: j.pointer("/smart_status/passed").and_then(Value::as_bool),
        temperature_c: j.pointer("/temperature/current").and_then(Value::as_i64),
        power_on_hours: num(j.pointer("/power_on_time/hours")),
        ..Default::default()
    };
    if let Some(n) = j.get("nvme_smart_health_information_log") {
        h.critical_warning = num(n.get("critical_warning"));
        h.available_spare = num(n.get("available_spare"));
        h.available_spare_threshold = num(n.get("available_spare_threshold"));
        h.percentage_used = num(n.get("percentage_used"));
        h.media_errors = num(n.get("media_errors"));
        h.bytes_written = num(n.get("data_units_written")).map(|u| u * NVME_DATA_UNIT);
        h.power_on_hours = h.power_on_hours.or(num(n.get("power_on_hours")));
        h.temperature_c = h
            .temperature_c
            .or(n.get("temperature").and_then(Value::as_i64));
    }
    if let Some(table) = j
        .pointer("/ata_smart_attributes/table")
        .and_then(Value::as_array)
    {
        let sector = num(j.get("logical_block_size")).unwrap_or(512);
        read_ata_attributes(table, sector, &mut h);
    }
    if h.has_figures() {
        return Ok(h);
    }
    let msgs: Vec<&str> = j
        .pointer("/smartctl/messages")
        .and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .filter_map(|m| m.get("string").and_then(Value::as_str))
                .collect()
        })
        .unwrap_or_default();
    Err(if msgs.is_empty() {
        format!(
            "smartctl reported no health data (exit status {})",
            num(j.pointer("/smartctl/exit_status"))
                .map(|s| s.to_string())
                .unwrap_or("?".into())
        )
    } else {
        format!("smartctl: {}", msgs.join("; "))
    })
}

/// ATA attributes by id: 5 reallocated, 9 power-on hours, 177/231/233 wear, 187/198
/// uncorrectable errors, 194 temperature, 197 pending, 241 written.
fn read_ata_attributes(table: &[Value], sector: u64, h: &mut DiskHealth) {
    let mut wear: Option<(u8, u64)> = None; // (preference, percent used)
    let mut uncorrectable: Option<u64> = None;
    for a in table {
        let (Some(id), name) = (
            num(a.get("id")),
            a.get("name").and_then(Value::as_str).unwrap_or(""),
        ) else {
            continue;
        };
        let raw = num(a.pointer("/raw/value"));
        let normalised = num(a.get("value"));
        let life_left = |pref: u8, wear: &mut Option<(u8, u64)>| {
            if let Some(v) = normalised {
                if wear.is_none_or(|(p, _)| pref < p) {
                    *wear = Some((pref, 100u64.saturating_sub(v.min(100))));
                }
            }
        };
        match id {
            5 => h.reallocated_sectors = raw,
            9 => h.power_on_hours = h.power_on_hours.or(raw),
            // The normalised value counts down from 100 as the flash wears.
            231 if name.contains("Life") => life_left(0, &mut wear),
            233 if name.contains("Wearout") => life_left(1, &mut wear),
            177 if name.contains("Wear") => life_left(2, &mut wear),
            187 | 198 => {
                if let Some(r) = raw {
                    uncorrectable = Some(uncorrectable.unwrap_or(0) + r);
                }
            }
            // raw.string is e.g. "32 (Min/Max 24/38)"; raw.value packs min/max too.
            194 if h.temperature_c.is_none() => {
                h.temperature_c = a
                    .pointer("/raw/string")
                    .and_then(Value::as_str)
                    .and_then(|s| s.split_whitespace().next())
                    .and_then(|s| s.parse().ok());
            }
            197 => h.pending_sectors = raw,
            241 => {
                let unit = if name.contains("32MiB") {
                    32 << 20
                } else if name.contains("GiB") {
                    1 << 30
                } else {
                    sector
                };
                h.bytes_written = raw.map(|r| r.saturating_mul(unit));
            }
            _ => {}
        }
    }
    if let Some((_, used)) = wear {
        h.percentage_used = Some(used);
    }
    if uncorrectable.is_some() {
        h.media_errors = uncorrectable;
    }
}

/// Parses `nvme smart-log -o json` (nvme-cli). Its `temperature` is in kelvin (values
/// above 200 are taken as kelvin); `critical_warning` is a number, or an object with a
/// `value` in human-readable mode.
pub fn parse_nvme_smart_log(text: &str) -> Result<DiskHealth, String> {
    let j: Value = serde_json::from_str(text).map_err(|e| {
        format!(
            "nvme smart-log output is not JSON ({e}): {}",
            text.lines().next().unwrap_or("").trim()
        )
    })?;
    let get = |k: &str| num(j.get(k));
    let h = DiskHealth {
        source: Some("nvme-cli".into()),
        critical_warning: get("critical_warning"),
        temperature_c: get("temperature").map(|t| {
            let t = t as i64;
            if t > 200 {
                t - 273
            } else {
                t
            }
        }),
        available_spare: get("avail_spare"),
        available_spare_threshold: get("spare_thresh"),
        percentage_used: get("percent_used").or_else(|| get("percentage_used")),
        media_errors: get("media_errors"),
        power_on_hours: get("power_on_hours"),
        bytes_written: get("data_units_written").map(|u| u * NVME_DATA_UNIT),
        ..Default::default()
    };
    if h.has_figures() {
        Ok(h)
    } else {
        Err("nvme smart-log reported no health data".into())
    }
}
