//! Errors that stop a probe before it measures, each naming the path or option at fault.

use std::path::PathBuf;

/// Why `plumb probe` (or a suite's `probe` workload) refused its options before the
/// store is touched or a byte written: each names the option at fault and what to give.
#[derive(Debug, thiserror::Error)]
pub enum PlanError {
    /// No probe has the name asked for.
    #[error("probe {which:?}: use one of {}", plumb_plan::family::PROBE_NAMES.join(", "))]
    UnknownProbe {
        /// The name asked for.
        which: String,
    },
    /// `--secs` is not a positive number of seconds.
    #[error("--secs {secs}: must be a number of seconds > 0")]
    Secs {
        /// The value given.
        secs: f64,
    },
    /// `--device` was given to a run of more than the disk probe.
    #[error("--device {}: only applies to `plumb probe disk`", device.display())]
    DeviceNotDisk {
        /// The device given.
        device: PathBuf,
    },
    /// Both a directory and a device were given: the disk probe measures one of them.
    #[error(
        "--dir {} and --device: give one; --dir measures a file on a filesystem, \
         --device reads a block device",
        dir.display()
    )]
    DirAndDevice {
        /// The directory given.
        dir: PathBuf,
    },
    /// `--size` was given with `--device`, which is read whole.
    #[error("--size: --device reads the whole device; leave --size out")]
    SizeOfDevice,
    /// `--precondition` was given with `--device`, which plumb never writes.
    #[error(
        "--precondition: --device is read-only and plumb never writes it; \
         precondition the device yourself (e.g. fio --rw=randwrite over all of \
         it), or probe a file with --dir"
    )]
    PreconditionDevice,
    /// The disk probe has nowhere to put its file.
    #[error(
        "--dir: required for `plumb probe {which}`; give a directory you own on the \
         filesystem to measure (or --device /dev/X to read a block device)"
    )]
    NoDir {
        /// The probe asked for (`disk` or `all`).
        which: String,
    },
    /// `--precondition` is not a positive number of seconds.
    #[error("--precondition {secs}: give the seconds of random writes, above 0")]
    Precondition {
        /// The value given.
        secs: f64,
    },
    /// A disk probe's option was given to a run without the disk probe.
    #[error("{option}: only applies to `plumb probe disk` and `all`")]
    DiskOnly {
        /// The option, e.g. `--size`.
        option: &'static str,
    },
    /// The device's rated figures (`--rated`, `--rated-set`) cannot be used.
    #[error(transparent)]
    Rated(#[from] crate::rated::RatedError),
    /// A disk probe's option does not parse, or its file cannot be set up.
    #[error(transparent)]
    Probe(#[from] ProbeError),
}

/// Why a probe refused to start or could not set up.
#[derive(Debug, thiserror::Error)]
pub enum ProbeError {
    /// The directory given with `--dir` is not one plumb will write into.
    #[error("--dir {path}: {reason}")]
    Refused {
        /// The path given.
        path: PathBuf,
        /// Why it is refused, and what to do instead.
        reason: String,
    },
    /// The path given with `--device` is not a block device plumb can read.
    #[error("--device {path}: {reason}")]
    Device {
        /// The path given.
        path: PathBuf,
        /// Why it is refused, and what to do instead.
        reason: String,
    },
    /// An option's value is out of range or does not parse.
    #[error("{option} {value:?}: {reason}")]
    BadOption {
        /// The option, e.g. `--depths`.
        option: &'static str,
        /// The value given.
        value: String,
        /// What is wrong and what is accepted.
        reason: String,
    },
    /// A system call on a file failed.
    #[error("{what} {path}: {err}")]
    Io {
        /// What plumb was doing, e.g. `creating`.
        what: &'static str,
        /// The file or directory.
        path: PathBuf,
        /// The OS error, in the message (so not a `source`, which would print it twice).
        err: std::io::Error,
    },
}

impl ProbeError {
    /// An [`ProbeError::Io`] for `path`.
    pub(crate) fn io(what: &'static str, path: &std::path::Path, err: std::io::Error) -> Self {
        ProbeError::Io {
            what,
            path: path.to_path_buf(),
            err,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn refusals_name_the_option_and_what_to_give() {
        let e = PlanError::DirAndDevice { dir: "/x".into() };
        assert_eq!(
            e.to_string(),
            "--dir /x and --device: give one; --dir measures a file on a filesystem, \
             --device reads a block device"
        );
        assert_eq!(
            PlanError::Secs { secs: -1.5 }.to_string(),
            "--secs -1.5: must be a number of seconds > 0"
        );
        assert!(PlanError::UnknownProbe {
            which: "gpu".into()
        }
        .to_string()
        .starts_with("probe \"gpu\": use one of mem"));
    }

    #[test]
    fn an_os_error_is_told_once() {
        let e = ProbeError::io("creating", "/x/f".as_ref(), std::io::Error::other("denied"));
        assert_eq!(e.to_string(), "creating /x/f: denied");
        assert!(std::error::Error::source(&e).is_none());
    }
}
