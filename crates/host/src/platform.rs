//! Firmware, boot parameters and core types: the BIOS (whose power and C-state settings
//! shape results and whose updates change them), the kernel command line (mitigations,
//! idle polling, isolated CPUs), and Intel hybrid P/E cores.

use crate::sysfs::{parse_cpu_list, Fs};
use serde::{Deserialize, Serialize};

/// BIOS and system identity from DMI, so results can be tied to a firmware version.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Default)]
#[serde(default)]
pub struct Bios {
    /// `bios_vendor`.
    pub vendor: Option<String>,
    /// `bios_version`.
    pub version: Option<String>,
    /// `bios_date`.
    pub date: Option<String>,
    /// `sys_vendor`: the machine's maker.
    pub sys_vendor: Option<String>,
    /// `product_name`: the machine's model.
    pub product_name: Option<String>,
    /// Why nothing was read, e.g. no `/sys/class/dmi`.
    pub unavailable: Option<String>,
}

/// The logical CPUs of each core type on a hybrid (Intel P/E) processor.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Default)]
#[serde(default)]
pub struct CoreTypes {
    /// Performance cores' CPUs (`/sys/devices/cpu_core/cpus`).
    pub performance_cpus: Vec<u32>,
    /// Efficiency cores' CPUs (`/sys/devices/cpu_atom/cpus`); empty when not hybrid.
    pub efficiency_cpus: Vec<u32>,
}

/// Reads the BIOS identity from `/sys/class/dmi/id`.
pub(crate) fn read_bios(fs: &Fs) -> Bios {
    let d = "/sys/class/dmi/id";
    if !fs.exists(d) {
        return Bios {
            unavailable: Some(
                "no /sys/class/dmi (no SMBIOS/DMI tables: e.g. a Firecracker VM or an Arm board)"
                    .into(),
            ),
            ..Default::default()
        };
    }
    let f = |n: &str| fs.string(format!("{d}/{n}"));
    let b = Bios {
        vendor: f("bios_vendor"),
        version: f("bios_version"),
        date: f("bios_date"),
        sys_vendor: f("sys_vendor"),
        product_name: f("product_name"),
        unavailable: None,
    };
    if b.vendor.is_none() && b.version.is_none() && b.date.is_none() {
        return Bios {
            unavailable: Some(format!(
                "{d}/bios_{{vendor,version,date}} absent or unreadable"
            )),
            ..b
        };
    }
    b
}

/// Reads the core types: `None` when `/sys/devices` is not readable at all.
pub(crate) fn read_core_types(fs: &Fs) -> Option<CoreTypes> {
    if !fs.exists("/sys/devices") {
        return None;
    }
    let cpus = |p: &str| fs.string(p).map(|s| parse_cpu_list(&s)).unwrap_or_default();
    Some(CoreTypes {
        performance_cpus: cpus("/sys/devices/cpu_core/cpus"),
        efficiency_cpus: cpus("/sys/devices/cpu_atom/cpus"),
    })
}

/// The kernel's own parameters of a command line: everything before a lone `--` (what
/// follows goes to init).
pub fn kernel_params(cmdline: &str) -> Vec<&str> {
    cmdline
        .split_whitespace()
        .take_while(|p| *p != "--")
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn init_arguments_are_not_kernel_parameters() {
        assert_eq!(
            kernel_params("quiet mitigations=off -- --addr 0.0.0.0"),
            vec!["quiet", "mitigations=off"]
        );
    }
}
