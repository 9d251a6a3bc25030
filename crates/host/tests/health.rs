//! The health parsers on recorded tool output (tests/data): smartctl's JSON for an NVMe
//! SSD, a SATA SSD and this VM's virtio disk; nvme-cli's smart-log JSON; xfs_info and
//! dumpe2fs of RAID-aligned filesystems (made with mkfs -d su=64k,sw=4 / -E stride=16,
//! stripe_width=64); kernel logs in /dev/kmsg format with and without errors.

use plumb_host::checks as k;
use plumb_host::geometry::{parse_dumpe2fs, parse_xfs_info};
use plumb_host::kmsg::{is_io_error, parse_records, summarise_messages};
use plumb_host::smart::{parse_nvme_smart_log, parse_smartctl_json};
use plumb_host::{KernelLog, Verdict};

const SMARTCTL_NVME: &str = include_str!("data/smartctl-nvme.json");
const SMARTCTL_ATA: &str = include_str!("data/smartctl-ata-ssd.json");
const SMARTCTL_VIRTIO: &str = include_str!("data/smartctl-virtio.json");
const NVME_CLI: &str = include_str!("data/nvme-cli-smart-log.json");
const XFS_INFO: &str = include_str!("data/xfs_info-raid.txt");
const DUMPE2FS: &str = include_str!("data/dumpe2fs-raid.txt");
const KMSG_ERRORS: &str = include_str!("data/kmsg-errors.txt");
const KMSG_CLEAN: &str = include_str!("data/kmsg-clean.txt");

#[test]
fn smartctl_nvme() {
    let h = parse_smartctl_json(SMARTCTL_NVME).unwrap();
    assert_eq!(h.source.as_deref(), Some("smartctl"));
    assert_eq!(h.model.as_deref(), Some("SAMSUNG MZQL23T8HCLS-00A07"));
    assert_eq!(h.firmware.as_deref(), Some("GDC5602Q"));
    assert_eq!(h.percentage_used, Some(3));
    assert_eq!(
        (h.available_spare, h.available_spare_threshold),
        (Some(100), Some(10))
    );
    assert_eq!((h.media_errors, h.critical_warning), (Some(0), Some(0)));
    assert_eq!(h.temperature_c, Some(41));
    assert_eq!(h.power_on_hours, Some(17532));
    // 95367431 data units of 512,000 bytes.
    assert_eq!(h.bytes_written, Some(95_367_431 * 512_000));
    assert_eq!(h.smart_passed, Some(true));
    let mut h = h;
    h.device = "nvme0n1".into();
    let c = k::disk_health(&[h]);
    assert_eq!(c.verdict, Verdict::Ok, "{c:?}");
    assert!(
        c.reason.contains("nvme0n1: 3% of rated life used") && c.reason.contains("48.8 TB written"),
        "{c:?}"
    );
}

#[test]
fn smartctl_sata_ssd() {
    let mut h = parse_smartctl_json(SMARTCTL_ATA).unwrap();
    assert_eq!(h.model.as_deref(), Some("Samsung SSD 870 EVO 1TB"));
    assert_eq!(h.firmware.as_deref(), Some("SVT02B6Q"));
    // 177 Wear_Leveling_Count normalised 14: 86% of rated life used.
    assert_eq!(h.percentage_used, Some(86));
    // 187 Uncorrectable_Error_Cnt 3 + 198 Offline_Uncorrectable 0.
    assert_eq!(h.media_errors, Some(3));
    assert_eq!(
        (h.reallocated_sectors, h.pending_sectors),
        (Some(12), Some(0))
    );
    assert_eq!(h.temperature_c, Some(37));
    assert_eq!(h.power_on_hours, Some(31402));
    assert_eq!(h.bytes_written, Some(290_587_213_824 * 512));
    assert_eq!((h.available_spare, h.critical_warning), (None, None));
    h.device = "sda".into();
    let c = k::disk_health(&[h]);
    assert_eq!(c.verdict, Verdict::Warn, "{c:?}");
    for part in [
        "sda:",
        "86% of rated life used",
        "3 media/uncorrectable errors",
        "12 reallocated sectors",
    ] {
        assert!(c.reason.contains(part), "{part:?} in {c:?}");
    }
    assert!(!c.reason.contains("pending"), "{c:?}");
}

#[test]
fn smartctl_on_virtio_says_why() {
    let e = parse_smartctl_json(SMARTCTL_VIRTIO).unwrap_err();
    assert_eq!(e, "smartctl: /dev/vda: Unable to detect device type");
}

#[test]
fn smartctl_garbage_is_named() {
    let e = parse_smartctl_json("smartctl: unrecognized option '--json'\n").unwrap_err();
    assert!(
        e.starts_with("smartctl output is not JSON") && e.contains("unrecognized option"),
        "{e}"
    );
}

#[test]
fn nvme_cli_smart_log() {
    let mut h = parse_nvme_smart_log(NVME_CLI).unwrap();
    assert_eq!(h.source.as_deref(), Some("nvme-cli"));
    assert_eq!(h.temperature_c, Some(74), "347 K");
    assert_eq!(
        (h.available_spare, h.available_spare_threshold),
        (Some(7), Some(10))
    );
    assert_eq!(h.percentage_used, Some(91));
    assert_eq!((h.critical_warning, h.media_errors), (Some(4), Some(17)));
    assert_eq!(h.power_on_hours, Some(43721));
    h.device = "nvme1n1".into();
    let c = k::disk_health(&[h]);
    assert_eq!(c.verdict, Verdict::Warn);
    for part in [
        "91% of rated life used",
        "spare 7% below threshold 10%",
        "17 media/uncorrectable errors",
        "critical warning 0x04",
        "74 °C",
    ] {
        assert!(c.reason.contains(part), "{part:?} in {c:?}");
    }
}

#[test]
fn xfs_info_of_a_striped_filesystem() {
    let g = parse_xfs_info(XFS_INFO).unwrap();
    assert_eq!(g.block_size, Some(4096));
    assert_eq!(g.sector_size, Some(512));
    // The data section's sunit (16), not the log section's (8).
    assert_eq!(
        (g.stripe_unit_blocks, g.stripe_width_blocks),
        (Some(16), Some(64))
    );
    assert!(parse_xfs_info("xfs_info: /data is not a mounted XFS filesystem\n").is_none());
}

#[test]
fn dumpe2fs_of_a_striped_filesystem() {
    let g = parse_dumpe2fs(DUMPE2FS).unwrap();
    assert_eq!(g.block_size, Some(4096));
    assert_eq!(
        (g.stripe_unit_blocks, g.stripe_width_blocks),
        (Some(16), Some(64))
    );
    // Without the RAID lines the filesystem has no stripe.
    let plain: String = DUMPE2FS
        .lines()
        .filter(|l| !l.starts_with("RAID"))
        .map(|l| format!("{l}\n"))
        .collect();
    let g = parse_dumpe2fs(&plain).unwrap();
    assert_eq!(
        (g.stripe_unit_blocks, g.stripe_width_blocks),
        (Some(0), Some(0))
    );
    let c = k::fs_geometry("ext4", Some(&g));
    assert_eq!(c.verdict, Verdict::Info);
    assert!(c.reason.contains("block 4096 B"), "{c:?}");
}

fn summary(text: &str) -> KernelLog {
    summarise_messages("/dev/kmsg", &parse_records(text))
}

#[test]
fn kernel_log_with_io_fs_and_pcie_errors() {
    let lines = parse_records(KMSG_ERRORS);
    let errors: Vec<&String> = lines.iter().filter(|l| is_io_error(l)).collect();
    let starts: Vec<&str> = errors.iter().map(|l| &l[..l.len().min(24)]).collect();
    assert_eq!(
        starts,
        vec![
            "pcieport 0000:00:1c.5: A",
            "nvme 0000:03:00.0: PCIe ",
            "nvme nvme0: I/O 613 QID ",
            "nvme nvme0: I/O 613 QID ",
            "nvme nvme0: controller i",
            "I/O error, dev nvme0n1, ",
            "XFS (nvme0n1p1): metadat",
            "ata1.00: exception Emask",
            "ata1.00: failed command:",
            "critical medium error, d",
            "EXT4-fs error (device sd",
            "Buffer I/O error on dev ",
        ]
    );
    let c = k::kernel_io_errors(&summary(KMSG_ERRORS));
    assert_eq!(c.verdict, Verdict::Warn, "{c:?}");
    assert!(
        c.reason
            .starts_with("12 I/O, filesystem or PCIe error messages"),
        "{c:?}"
    );
    assert!(c.reason.contains("AER: Corrected error received"), "{c:?}");
    assert!(c.reason.ends_with('…'), "more than quoted: {c:?}");
    let kept = summary(KMSG_ERRORS).io_error_lines;
    assert_eq!(kept.len(), plumb_host::kmsg::KEPT_ERROR_LINES);
    let long = format!("EXT4-fs error (device sda1): {}", "x".repeat(500));
    let cut = summarise_messages("dmesg", &[long]).io_error_lines;
    assert_eq!(
        cut[0].chars().count(),
        plumb_host::kmsg::ERROR_LINE_CHARS + 1
    );
}

#[test]
fn clean_kernel_log() {
    let c = k::kernel_io_errors(&summary(KMSG_CLEAN));
    assert_eq!(c.verdict, Verdict::Ok, "{c:?}");
    assert!(c.reason.contains("among 17 kernel log messages"), "{c:?}");
}
