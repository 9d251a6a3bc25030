//! `--cut flakey`: a real block device that stops writing, as device-mapper's
//! dm-flakey makes one (`drop_writes` or `error_writes` after a point) on a loop
//! device, under ext4 or XFS, so the filesystem's own journal and write-back are under
//! test too, not plumb's model of them. What it needs is checked here and, where the
//! kernel lacks it, refused with one line saying what was looked for and what was
//! found; the trials themselves are not written yet (see docs/durability.md).

use std::path::Path;

/// The device-mapper control node dmsetup talks to.
const DM_CONTROL: &str = "/dev/mapper/control";
/// The loop driver's control node (`losetup -f`).
const LOOP_CONTROL: &str = "/dev/loop-control";

/// What the host has of what dm-flakey needs: each check as it was made.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Probe {
    /// /dev/mapper/control opened read-write, or why not.
    pub dm_control: Result<(), String>,
    /// A `device-mapper` line in /proc/misc (the driver registered).
    pub dm_in_misc: bool,
    /// /dev/loop-control exists.
    pub loop_control: bool,
    /// /proc/modules exists (the kernel loads modules: `modprobe dm-flakey` could work).
    pub modules: bool,
}

impl Probe {
    /// Looks at this host.
    pub fn here() -> Probe {
        let dm_control = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .open(DM_CONTROL)
            .map(drop)
            .map_err(|e| match e.kind() {
                std::io::ErrorKind::NotFound => "absent".to_string(),
                _ => format!("present but not openable: {e}"),
            });
        let misc = std::fs::read_to_string("/proc/misc").unwrap_or_default();
        Probe {
            dm_control,
            dm_in_misc: misc
                .lines()
                .any(|l| l.split_whitespace().nth(1) == Some("device-mapper")),
            loop_control: Path::new(LOOP_CONTROL).exists(),
            modules: Path::new("/proc/modules").exists(),
        }
    }

    /// Why `--cut flakey` cannot run with what was found: one line.
    pub fn refusal(&self) -> String {
        let dm = self.dm_control.is_ok() || self.dm_in_misc;
        let found = format!(
            "looked for {DM_CONTROL} ({}), a device-mapper line in /proc/misc ({}), \
             {LOOP_CONTROL} ({}) and module support (/proc/modules {})",
            match &self.dm_control {
                Ok(()) => "opened".to_string(),
                Err(e) => e.clone(),
            },
            if self.dm_in_misc { "found" } else { "none" },
            if self.loop_control {
                "present"
            } else {
                "absent"
            },
            if self.modules { "present" } else { "absent" },
        );
        let why = match (dm, self.loop_control) {
            (false, _) if !self.modules => {
                "this kernel has no device-mapper and cannot load it".to_string()
            }
            (false, _) => "device-mapper is not loaded (modprobe dm-flakey)".to_string(),
            (true, false) => "there are no loop devices (modprobe loop)".to_string(),
            (true, true) => {
                "device-mapper and loop devices are here, but plumb does not drive dm-flakey yet"
                    .to_string()
            }
        };
        format!("--cut flakey needs device-mapper (dm-flakey) and loop devices: {found}: {why}; use --cut power or --cut at=fsync:all")
    }
}

/// Whether `--cut flakey` can run here; the error is [`Probe::refusal`]. It never can
/// yet: with device-mapper and loop devices present it says that plumb does not drive
/// dm-flakey yet, rather than run code no test has run.
pub fn available() -> Result<(), String> {
    Err(Probe::here().refusal())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_refusal_says_what_was_looked_for_and_found_in_one_line() {
        let firecracker = Probe {
            dm_control: Err("present but not openable: No such device (os error 19)".into()),
            dm_in_misc: false,
            loop_control: true,
            modules: false,
        };
        let r = firecracker.refusal();
        assert!(!r.contains('\n'));
        for want in [
            "--cut flakey",
            "/dev/mapper/control (present but not openable",
            "/proc/misc (none)",
            "/dev/loop-control (present)",
            "/proc/modules absent",
            "no device-mapper and cannot load it",
            "--cut power",
        ] {
            assert!(r.contains(want), "{want}: {r}");
        }
        let loaded = Probe {
            dm_control: Ok(()),
            dm_in_misc: true,
            loop_control: true,
            modules: true,
        };
        assert!(loaded.refusal().contains("does not drive dm-flakey yet"));
        let no_loop = Probe {
            loop_control: false,
            ..loaded
        };
        assert!(no_loop.refusal().contains("no loop devices"));
    }
}
