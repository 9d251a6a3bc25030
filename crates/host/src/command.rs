//! Running the few external tools the snapshot asks (smartctl, nvme, dmesg, xfs_info,
//! dumpe2fs) through a replaceable runner, so tests feed recorded output instead of
//! running them, and a hung tool cannot hold up the start of a run.

use std::collections::BTreeMap;
use std::io::Read;
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// How long one tool may take before it is killed: SMART queries on a busy or failing
/// disk can stall, and the snapshot is taken at the start of every run.
pub const TOOL_TIMEOUT: Duration = Duration::from_secs(4);

/// What a tool printed and how it ended. Tools such as smartctl exit non-zero with useful
/// output (their exit status is a bit mask), so a non-zero status is not an error here.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct ToolOutput {
    /// Exit code; `None` when killed by a signal.
    pub status: Option<i32>,
    /// Standard output, lossily decoded.
    pub stdout: String,
    /// Standard error, lossily decoded.
    pub stderr: String,
}

/// Why a tool gave no output, worded to be shown as the reason a value is unavailable.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ToolError {
    /// The program is not on `PATH`.
    #[error("{program} not installed")]
    NotInstalled {
        /// The program looked for.
        program: String,
    },
    /// The program ran longer than allowed and was killed.
    #[error("{program} timed out after {secs} s")]
    TimedOut {
        /// The program run.
        program: String,
        /// The limit, in seconds.
        secs: u64,
    },
    /// The program could not be started for another reason.
    #[error("{program}: {reason}")]
    Failed {
        /// The program run.
        program: String,
        /// The OS error.
        reason: String,
    },
}

/// Runs one external program; implemented by the live runner and by test doubles.
pub trait RunTool: Send + Sync {
    /// Runs `program args…`, killing it after `timeout`.
    fn run(&self, program: &str, args: &[&str], timeout: Duration)
        -> Result<ToolOutput, ToolError>;
}

/// The runner the snapshot uses: the live one by default, a canned one in tests. Two
/// runners are equal only when they are the same instance.
#[derive(Clone)]
pub struct Runner(Arc<dyn RunTool>);

impl Runner {
    /// Runs the real programs.
    pub fn system() -> Runner {
        Runner(Arc::new(SystemTools))
    }

    /// Answers from `canned` instead of running anything (for fixtures).
    pub fn canned(canned: CannedTools) -> Runner {
        Runner(Arc::new(canned))
    }

    /// Any runner.
    pub fn new(r: impl RunTool + 'static) -> Runner {
        Runner(Arc::new(r))
    }

    /// Runs `program args…` with [`TOOL_TIMEOUT`].
    pub fn run(&self, program: &str, args: &[&str]) -> Result<ToolOutput, ToolError> {
        self.0.run(program, args, TOOL_TIMEOUT)
    }
}

impl std::fmt::Debug for Runner {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Runner")
    }
}

impl PartialEq for Runner {
    fn eq(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
    }
}

/// Runs programs for real, with a timeout.
struct SystemTools;

impl RunTool for SystemTools {
    fn run(
        &self,
        program: &str,
        args: &[&str],
        timeout: Duration,
    ) -> Result<ToolOutput, ToolError> {
        let failed = |e: std::io::Error| ToolError::Failed {
            program: program.to_string(),
            reason: e.to_string(),
        };
        let mut child = match Command::new(program)
            .args(args)
            .env("LC_ALL", "C")
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
        {
            Ok(c) => c,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                return Err(ToolError::NotInstalled {
                    program: program.to_string(),
                })
            }
            Err(e) => return Err(failed(e)),
        };
        // Drain both pipes on threads so a chatty tool cannot block on a full pipe.
        let drain = |r: Option<Box<dyn Read + Send>>| {
            std::thread::spawn(move || {
                let mut v = Vec::new();
                if let Some(mut r) = r {
                    let _ = r.read_to_end(&mut v);
                }
                String::from_utf8_lossy(&v).into_owned()
            })
        };
        let out = drain(
            child
                .stdout
                .take()
                .map(|s| Box::new(s) as Box<dyn Read + Send>),
        );
        let err = drain(
            child
                .stderr
                .take()
                .map(|s| Box::new(s) as Box<dyn Read + Send>),
        );
        let deadline = Instant::now() + timeout;
        let status = loop {
            match child.try_wait().map_err(failed)? {
                Some(s) => break s,
                None if Instant::now() >= deadline => {
                    let _ = child.kill();
                    let _ = child.wait();
                    return Err(ToolError::TimedOut {
                        program: program.to_string(),
                        secs: timeout.as_secs(),
                    });
                }
                None => std::thread::sleep(Duration::from_millis(5)),
            }
        };
        Ok(ToolOutput {
            status: status.code(),
            stdout: out.join().unwrap_or_default(),
            stderr: err.join().unwrap_or_default(),
        })
    }
}

/// Recorded answers keyed by the command line (`program arg arg…`); anything else is
/// "not installed", as on a host without the tools.
#[derive(Clone, Debug, Default)]
pub struct CannedTools {
    answers: BTreeMap<String, Result<ToolOutput, ToolError>>,
}

impl CannedTools {
    /// No tools at all.
    pub fn none() -> CannedTools {
        CannedTools::default()
    }

    /// `command` (e.g. `smartctl --json -a /dev/sda`) prints `stdout` and exits `status`.
    pub fn with(mut self, command: &str, status: i32, stdout: &str) -> CannedTools {
        self.answers.insert(
            command.to_string(),
            Ok(ToolOutput {
                status: Some(status),
                stdout: stdout.to_string(),
                stderr: String::new(),
            }),
        );
        self
    }

    /// `command` fails with `err` (e.g. a timeout).
    pub fn failing(mut self, command: &str, err: ToolError) -> CannedTools {
        self.answers.insert(command.to_string(), Err(err));
        self
    }
}

impl RunTool for CannedTools {
    fn run(&self, program: &str, args: &[&str], _: Duration) -> Result<ToolOutput, ToolError> {
        let mut key = program.to_string();
        for a in args {
            key.push(' ');
            key.push_str(a);
        }
        self.answers.get(&key).cloned().unwrap_or_else(|| {
            Err(ToolError::NotInstalled {
                program: program.to_string(),
            })
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn missing_program_is_not_installed() {
        let e = Runner::system()
            .run("plumb-no-such-tool-xyz", &[])
            .unwrap_err();
        assert_eq!(e.to_string(), "plumb-no-such-tool-xyz not installed");
    }

    #[test]
    fn output_and_status_of_a_real_program() {
        let o = Runner::system()
            .run("sh", &["-c", "echo out; echo err >&2; exit 3"])
            .unwrap();
        assert_eq!(
            (o.status, o.stdout.as_str(), o.stderr.as_str()),
            (Some(3), "out\n", "err\n")
        );
    }

    #[test]
    fn slow_program_is_killed() {
        let e = SystemTools
            .run("sleep", &["30"], Duration::from_millis(50))
            .unwrap_err();
        assert!(matches!(e, ToolError::TimedOut { .. }), "{e:?}");
    }

    #[test]
    fn canned_answers_by_command_line() {
        let r = Runner::canned(CannedTools::none().with("dmesg", 0, "hello\n"));
        assert_eq!(r.run("dmesg", &[]).unwrap().stdout, "hello\n");
        assert!(matches!(
            r.run("dmesg", &["-T"]),
            Err(ToolError::NotInstalled { .. })
        ));
    }
}
