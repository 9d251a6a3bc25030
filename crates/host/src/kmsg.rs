//! The kernel log since boot, read once per snapshot: the source of the TSC-unstable
//! finding and of I/O, filesystem and PCIe (AER) errors — correctable PCIe errors and
//! a failing disk slow a benchmark long before anything stops working.
//!
//! Read from `/dev/kmsg` without blocking (records `prio,seq,usec,flags;message` until
//! EAGAIN), else from `dmesg`; when neither works the reason is kept.

use crate::command::{Runner, ToolError};
use crate::sysfs::Fs;
use serde::{Deserialize, Serialize};
use std::io::Read;

/// At most this many error lines are kept with a snapshot.
pub const KEPT_ERROR_LINES: usize = 5;
/// Kept error lines are cut to this many characters.
pub const ERROR_LINE_CHARS: usize = 200;

/// What the kernel log says about I/O, filesystem and PCIe errors since boot.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Default)]
#[serde(default)]
pub struct KernelLog {
    /// Where the log was read: `/dev/kmsg` or `dmesg`.
    pub source: Option<String>,
    /// Why it could not be read, e.g. `dmesg_restrict=1 and not root`.
    pub unavailable: Option<String>,
    /// Messages read (the ring buffer may have dropped the oldest).
    pub records: Option<u64>,
    /// Messages that report an I/O, filesystem or PCIe error; `None` when unread.
    pub io_errors: Option<u64>,
    /// The first few of them, each cut to [`ERROR_LINE_CHARS`].
    pub io_error_lines: Vec<String>,
}

/// The log's messages, one per record, or why it could not be read.
pub(crate) struct Messages {
    pub(crate) source: &'static str,
    pub(crate) lines: Vec<String>,
}

/// Reads the kernel log once: `/dev/kmsg` (root, or `dmesg_restrict=0`), else `dmesg`.
pub(crate) fn read(fs: &Fs, runner: &Runner, as_root: Option<bool>) -> Result<Messages, String> {
    let kmsg_err = match read_kmsg(fs) {
        Ok(text) => {
            return Ok(Messages {
                source: "/dev/kmsg",
                lines: parse_records(&text),
            })
        }
        Err(e) => e,
    };
    let restricted = fs.i64("/proc/sys/kernel/dmesg_restrict") == Some(1) && as_root != Some(true);
    let dmesg_err = match runner.run("dmesg", &[]) {
        Ok(o) if o.status == Some(0) => {
            return Ok(Messages {
                source: "dmesg",
                lines: parse_records(&o.stdout),
            })
        }
        Ok(o) => o
            .stderr
            .lines()
            .next()
            .unwrap_or("dmesg failed")
            .trim()
            .to_string(),
        Err(ToolError::NotInstalled { .. }) => "dmesg not installed".into(),
        Err(e) => e.to_string(),
    };
    Err(if restricted {
        "kernel log unreadable: dmesg_restrict=1 and not root".to_string()
    } else {
        format!("kernel log unreadable: {kmsg_err}; {dmesg_err}")
    })
}

/// Reads `/dev/kmsg` without blocking (or a regular file of that name in a fixture
/// tree): one record per read until EAGAIN. At most 8 MiB.
fn read_kmsg(fs: &Fs) -> Result<String, String> {
    use std::os::unix::fs::OpenOptionsExt;
    let path = fs.path("/dev/kmsg");
    let mut f = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK)
        .open(&path)
        .map_err(|e| format!("{}: {e}", path.display()))?;
    let mut out = Vec::new();
    let mut buf = vec![0u8; 16 * 1024];
    while out.len() < 8 << 20 {
        match f.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => {
                out.extend_from_slice(&buf[..n]);
                // Keep records on separate lines whatever the read returned.
                if out.last() != Some(&b'\n') {
                    out.push(b'\n');
                }
            }
            // Records overwritten while reading: the next read continues.
            Err(e) if e.raw_os_error() == Some(libc::EPIPE) => continue,
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => break,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) if out.is_empty() => return Err(format!("{}: {e}", path.display())),
            Err(_) => break,
        }
    }
    Ok(String::from_utf8_lossy(&out).into_owned())
}

/// The messages of a kernel log: `/dev/kmsg` records (`prio,seq,usec,flags;message`,
/// with indented `KEY=value` continuation lines dropped) or `dmesg` lines (`[ 1.23] msg`,
/// the time stamp dropped).
pub fn parse_records(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    for line in text.lines() {
        if line.starts_with(' ') || line.trim().is_empty() {
            continue; // kmsg dictionary continuation (" SUBSYSTEM=pci")
        }
        let msg = match line.split_once(';') {
            Some((head, msg)) if is_kmsg_header(head) => msg,
            _ => match line.strip_prefix('[').and_then(|r| r.split_once("] ")) {
                Some((ts, msg)) if ts.trim().parse::<f64>().is_ok() => msg,
                _ => line,
            },
        };
        out.push(msg.to_string());
    }
    out
}

/// `prio,seq,usec,flags` (flags may be followed by more comma fields in new kernels).
fn is_kmsg_header(head: &str) -> bool {
    let mut parts = head.split(',');
    let nums = parts
        .by_ref()
        .take(3)
        .filter(|p| p.parse::<u64>().is_ok())
        .count();
    nums == 3 && parts.next().is_some()
}

/// Whether a kernel message reports an I/O, filesystem or PCIe error: AER, I/O errors,
/// ata/nvme/scsi timeouts and resets, XFS and ext4 errors, critical medium errors, an
/// NVMe controller gone down.
pub fn is_io_error(msg: &str) -> bool {
    let l = msg.to_ascii_lowercase();
    let device = l.starts_with("ata")
        || l.starts_with("nvme")
        || l.starts_with("sd ")
        || l.starts_with("scsi");
    msg.contains("PCIe Bus Error")
        // "AER: enabled with IRQ 24" at boot is not an error.
        || (msg.contains("AER:") && l.contains("error"))
        || msg.contains("I/O error")
        || msg.contains("blk_update_request")
        || msg.contains("EXT4-fs error")
        || l.contains("critical medium error")
        || (l.contains("nvme") && l.contains("controller is down"))
        || (msg.contains("XFS (")
            && (l.contains("error") || l.contains("corrupt") || msg.contains("CRC")))
        || (device
            && (l.contains("timeout")
                || l.contains("timed out")
                || l.contains("timing out")
                || l.contains("reset")
                || l.contains("exception emask")
                || l.contains("failed command")))
}

/// Whether a kernel log says the TSC was declared unstable (watchdog or boot).
pub fn tsc_marked_unstable(lines: &[String]) -> bool {
    lines.iter().any(|l| {
        let l = l.to_ascii_lowercase();
        l.contains("tsc") && l.contains("unstable")
    })
}

/// Summarises a read of the log: its I/O, filesystem and PCIe errors, or why unread.
pub(crate) fn summarise(read: &Result<Messages, String>) -> KernelLog {
    match read {
        Err(why) => KernelLog {
            unavailable: Some(why.clone()),
            ..Default::default()
        },
        Ok(m) => summarise_messages(m.source, &m.lines),
    }
}

/// Counts the messages that report I/O, filesystem or PCIe errors and keeps the first
/// [`KEPT_ERROR_LINES`], each cut to [`ERROR_LINE_CHARS`].
pub fn summarise_messages(source: &str, lines: &[String]) -> KernelLog {
    let errors: Vec<&String> = lines.iter().filter(|l| is_io_error(l)).collect();
    KernelLog {
        source: Some(source.to_string()),
        unavailable: None,
        records: Some(lines.len() as u64),
        io_errors: Some(errors.len() as u64),
        io_error_lines: errors
            .iter()
            .take(KEPT_ERROR_LINES)
            .map(|l| cut(l, ERROR_LINE_CHARS))
            .collect(),
    }
}

/// `s` cut to `n` characters, with `…` when cut.
pub(crate) fn cut(s: &str, n: usize) -> String {
    if s.chars().count() <= n {
        s.to_string()
    } else {
        let mut t: String = s.chars().take(n).collect();
        t.push('…');
        t
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kmsg_records_and_dmesg_lines() {
        let text = "6,339,5140900,-;NET: Registered protocol family 10\n SUBSYSTEM=net\n DEVICE=n1\n4,340,5140901,-,caller=T1;nvme nvme0: I/O 9 QID 0 timeout, reset controller\n[    3.123456] EXT4-fs (vda): mounted filesystem\n";
        assert_eq!(
            parse_records(text),
            vec![
                "NET: Registered protocol family 10",
                "nvme nvme0: I/O 9 QID 0 timeout, reset controller",
                "EXT4-fs (vda): mounted filesystem",
            ]
        );
    }

    #[test]
    fn boot_noise_is_not_an_error() {
        for m in [
            "pcieport 0000:00:01.0: AER: enabled with IRQ 122",
            "XFS (sda1): Mounting V5 Filesystem 9f0f7c1e-2a44-4a4e-9d1c-3c1b8a1e0b61",
            "XFS (sda1): Ending clean mount",
            "EXT4-fs (vda): re-mounted. Opts: errors=remount-ro. Quota mode: none.",
            "ata1: SATA link up 6.0 Gbps (SStatus 133 SControl 300)",
            "nvme nvme0: 8/0/0 default/read/poll queues",
            "sd 0:0:0:0: [sda] Write cache: enabled, read cache: enabled",
        ] {
            assert!(!is_io_error(m), "{m}");
        }
    }

    #[test]
    fn long_lines_are_cut() {
        assert_eq!(cut("abcdef", 3), "abc…");
        assert_eq!(cut("abc", 3), "abc");
    }
}
