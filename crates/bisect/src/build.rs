//! Builds kept by commit. Each midpoint is checked out in one worktree of the
//! repository (so a build system's own incremental state and a compiler cache carry
//! from one midpoint to the next), built by the user's command, and its result kept
//! under `CACHE/KEY/COMMIT/` (KEY names the build command, so another command's build
//! of the same commit is never taken for this one's): the binary (`plumb`), optional
//! extra arguments (`args`, one per line, appended to the measured command: for builds
//! that differ in flags, such as a PostgreSQL prefix or a repository of option files),
//! the log and the seconds it took. A repeated bisect over the same commits reuses
//! them; a commit whose build failed is kept as failed (`failed`) and skipped again
//! without rebuilding.
//!
//! The command runs with `sh -c` in the worktree, with PLUMB_BISECT_OUT (where it must
//! leave `plumb`), PLUMB_BISECT_COMMIT and PLUMB_BISECT_JOBS set. It writes into a
//! temporary directory that becomes the commit's only when the build ended (built or
//! failed), so nothing half-built is ever reused; a build stopped by a signal (Ctrl-C,
//! the OOM killer) is not kept at all, since the commit did not fail.

use crate::error::BisectError;
use sha2::{Digest, Sha256};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Instant;

/// How midpoints are built.
#[derive(Debug, Clone)]
pub struct Builder {
    /// The repository.
    pub repo: PathBuf,
    /// The worktree each commit is checked out in.
    pub work: PathBuf,
    /// Where builds are kept, by commit.
    pub cache: PathBuf,
    /// The build command.
    pub command: String,
    /// Parallel jobs the build may use.
    pub jobs: usize,
}

/// A commit's build.
#[derive(Debug, Clone, PartialEq)]
pub enum Build {
    /// It built: its binary and the arguments it adds.
    Built {
        /// The binary measured.
        bin: PathBuf,
        /// Arguments appended to the measured command.
        args: Vec<String>,
        /// Seconds the build took (when it was made, for a kept one).
        secs: f64,
        /// Taken from the cache rather than built now.
        reused: bool,
    },
    /// It did not build.
    Failed {
        /// Seconds the attempt took.
        secs: f64,
        /// The log's path and its last lines.
        log: String,
    },
}

fn io(what: String) -> impl FnOnce(std::io::Error) -> BisectError {
    move |source| BisectError::Io { what, source }
}

/// Runs git in `dir`; its stdout, trimmed.
pub fn git(dir: &Path, args: &[&str]) -> Result<String, BisectError> {
    let fail = |why: String| BisectError::Git {
        repo: dir.display().to_string(),
        args: args.join(" "),
        why,
    };
    let out = Command::new("git")
        .arg("-C")
        .arg(dir)
        .args(args)
        .stdin(Stdio::null())
        .output()
        .map_err(|e| fail(e.to_string()))?;
    if !out.status.success() {
        return Err(fail(
            String::from_utf8_lossy(&out.stderr).trim().to_string(),
        ));
    }
    Ok(String::from_utf8_lossy(&out.stdout).trim().to_string())
}

/// A log's path and its last `n` lines (the path alone when it is empty).
fn tail(path: &Path, n: usize) -> String {
    let text = std::fs::read_to_string(path).unwrap_or_default();
    let lines: Vec<&str> = text.lines().collect();
    let last = lines[lines.len().saturating_sub(n)..].join("\n");
    if last.trim().is_empty() {
        format!("{} (empty)", path.display())
    } else {
        format!("{}, ending:\n{last}", path.display())
    }
}

impl Builder {
    /// Where this build command's builds are kept: a directory per command (the first
    /// 12 hex digits of its SHA-256), so two commands that build one commit differently
    /// (other flags, another compiler) never reuse each other's.
    fn kept_root(&self) -> PathBuf {
        self.cache.join(short_digest(self.command.as_bytes()))
    }

    /// Where the build of `commit` is kept.
    pub fn kept_dir(&self, commit: &str) -> PathBuf {
        self.kept_root().join(commit)
    }

    /// The kept build of `commit`, if any.
    fn kept(&self, commit: &str) -> Option<Build> {
        let dir = self.kept_dir(commit);
        let secs = std::fs::read_to_string(dir.join("build.secs"))
            .ok()
            .and_then(|s| s.trim().parse().ok())
            .unwrap_or(0.0);
        if dir.join("failed").is_file() {
            let log = dir.join("build.log");
            return Some(Build::Failed {
                secs,
                log: format!(
                    "{} (kept from an earlier attempt):\n{}",
                    log.display(),
                    tail(&log, 8)
                ),
            });
        }
        let bin = dir.join("plumb");
        bin.is_file().then(|| Build::Built {
            args: read_args(&dir),
            bin,
            secs,
            reused: true,
        })
    }

    /// Whether `commit` has a kept build (made, or failed), so asking for it builds nothing.
    pub fn is_kept(&self, commit: &str) -> bool {
        self.kept(commit).is_some()
    }

    /// Where the build of `commit` writes its log while it runs.
    pub fn log_while_building(&self, commit: &str) -> PathBuf {
        self.kept_root()
            .join(format!("{commit}.building"))
            .join("build.log")
    }

    /// Builds `commit`, or takes its kept build.
    pub fn build(&self, commit: &str) -> Result<Build, BisectError> {
        if let Some(b) = self.kept(commit) {
            return Ok(b);
        }
        let root = self.kept_root();
        std::fs::create_dir_all(&root)
            .map_err(io(format!("creating the build cache {}", root.display())))?;
        // The command its builds were made by, for whoever looks in the cache.
        std::fs::write(root.join("command"), format!("{}\n", self.command))
            .map_err(io(format!("writing {}", root.join("command").display())))?;
        self.checkout(commit)?;
        let log_path = self.log_while_building(commit);
        let tmp = log_path
            .parent()
            .expect("the log is in the build's directory")
            .to_path_buf();
        let _ = std::fs::remove_dir_all(&tmp);
        std::fs::create_dir_all(&tmp).map_err(io(format!("creating {}", tmp.display())))?;
        let log = std::fs::File::create(&log_path)
            .map_err(io(format!("creating {}", log_path.display())))?;
        let err = log
            .try_clone()
            .map_err(io(format!("opening {}", log_path.display())))?;
        let t0 = Instant::now();
        let status = Command::new("sh")
            .arg("-c")
            .arg(&self.command)
            .current_dir(&self.work)
            .env("PLUMB_BISECT_OUT", &tmp)
            .env("PLUMB_BISECT_COMMIT", commit)
            .env("PLUMB_BISECT_JOBS", self.jobs.to_string())
            .stdin(Stdio::null())
            .stdout(log)
            .stderr(err)
            .status()
            .map_err(io(format!("starting the build `{}`", self.command)))?;
        let secs = t0.elapsed().as_secs_f64();
        if let Some(signal) = std::os::unix::process::ExitStatusExt::signal(&status) {
            let _ = std::fs::remove_dir_all(&tmp);
            return Err(BisectError::BuildStopped {
                commit: commit.to_string(),
                signal,
            });
        }
        let built = status.success() && tmp.join("plumb").is_file();
        if !built {
            let why = if status.success() {
                format!("it left no {}", tmp.join("plumb").display())
            } else {
                format!("it ended {status}")
            };
            std::fs::write(tmp.join("failed"), format!("{why}\n"))
                .map_err(io(format!("writing {}", tmp.join("failed").display())))?;
        }
        std::fs::write(tmp.join("build.secs"), format!("{secs:.3}\n"))
            .map_err(io(format!("writing {}", tmp.join("build.secs").display())))?;
        let dir = self.kept_dir(commit);
        std::fs::rename(&tmp, &dir)
            .map_err(io(format!("keeping the build as {}", dir.display())))?;
        if built {
            Ok(Build::Built {
                bin: dir.join("plumb"),
                args: read_args(&dir),
                secs,
                reused: false,
            })
        } else {
            let log = dir.join("build.log");
            Ok(Build::Failed {
                secs,
                log: tail(&log, 8),
            })
        }
    }

    /// Checks `commit` out in the worktree, making the worktree the first time.
    fn checkout(&self, commit: &str) -> Result<(), BisectError> {
        if self.work.join(".git").exists() {
            git(
                &self.work,
                &["checkout", "--quiet", "--detach", "--force", commit],
            )?;
        } else {
            let work = self.work.display().to_string();
            git(
                &self.repo,
                &[
                    "worktree", "add", "--quiet", "--detach", "--force", &work, commit,
                ],
            )?;
        }
        Ok(())
    }
}

/// The build command of `--engine rocksdb`: plumb built against the worktree's RocksDB
/// by `script` (scripts/build-rocksdb-release.sh tree:WORKTREE), through ccache when it
/// is installed, so a midpoint recompiles only the files that differ; the binary is
/// copied out, since the script's target dir is shared by every midpoint. It names the
/// plumb tree it builds ([`plumb_tree`]), so kept builds are keyed by it too.
pub fn rocksdb_command(script: &Path) -> Result<String, BisectError> {
    if !script.is_file() {
        return Err(BisectError::Refused(format!(
            "--engine rocksdb builds with {}, which is not there (this plumb was built \
             elsewhere); give --build CMD",
            script.display()
        )));
    }
    Ok(format!(
        ": plumb tree {}; \
         if command -v ccache >/dev/null; then export CC='ccache cc' CXX='ccache c++'; fi; \
         bin=$(bash '{}' tree:\"$PWD\" | tail -1) && cp \"$bin\" \"$PLUMB_BISECT_OUT/plumb\"",
        plumb_tree(script),
        script.display()
    ))
}

/// Which plumb the script builds: the HEAD of the tree it copies and a digest of its
/// uncommitted changes. It is part of the build command (as a `:` no-op), so it keys
/// the kept builds: a build is plumb's own code too (the loop every count includes,
/// the store schema it writes), and one made by another plumb is not reused.
fn plumb_tree(script: &Path) -> String {
    let Some(tree) = script.parent().and_then(Path::parent) else {
        return "unknown".into();
    };
    let head = git(tree, &["rev-parse", "HEAD"]).unwrap_or_else(|_| "not-a-git-checkout".into());
    let diff = git(tree, &["diff", "HEAD"]).unwrap_or_default();
    format!("{head}+{}", short_digest(diff.as_bytes()))
}

/// The first 12 hex digits of `bytes`' SHA-256: a name for a directory or a tree.
fn short_digest(bytes: &[u8]) -> String {
    Sha256::digest(bytes)
        .iter()
        .take(6)
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// The build command of `--server postgres`: the worktree's PostgreSQL configured once
/// (later commits reuse the worktree's configure and make state, so a midpoint
/// recompiles only what changed; ccache when it is installed), made with
/// PLUMB_BISECT_JOBS and installed into the build's own directory (`pgsql/`:
/// PostgreSQL finds its share and lib directories relative to its binaries, so the
/// install works from wherever the kept build ends up). `plumb` is the measuring binary
/// itself, the same for every commit; the build's `args` give the measured command
/// `--basedir` of that install. Without readline, zlib and ICU, which a benchmark's
/// server does not use, so the tree builds with only bison and flex beside a compiler
/// (scripts/setup.sh installs them).
pub fn postgres_command(plumb: &Path) -> String {
    format!(
        "if command -v ccache >/dev/null; then export CC='ccache cc'; fi; \
         {{ [ -f config.status ] || ./configure --prefix=/pgsql --without-readline --without-zlib \
         --without-icu; }} && make -s -j\"$PLUMB_BISECT_JOBS\" && \
         make -s install DESTDIR=\"$PLUMB_BISECT_OUT\" && \
         ln -s '{}' \"$PLUMB_BISECT_OUT/plumb\" && \
         printf -- '--basedir\\n{{out}}/pgsql\\n' > \"$PLUMB_BISECT_OUT/args\"",
        plumb.display()
    )
}

/// A build's extra arguments from its `args` file in `dir`: one a line, blank lines
/// left out, `{out}` standing for `dir` (the build wrote into a temporary directory
/// that was renamed); none without the file.
fn read_args(dir: &Path) -> Vec<String> {
    let out = dir.display().to_string();
    std::fs::read_to_string(dir.join("args"))
        .map(|s| {
            s.lines()
                .map(str::trim)
                .filter(|l| !l.is_empty())
                .map(|l| l.replace("{out}", &out))
                .collect()
        })
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn repo(d: &Path) -> (PathBuf, Vec<String>) {
        let r = d.join("repo");
        std::fs::create_dir_all(&r).unwrap();
        git(&r, &["init", "--quiet"]).unwrap();
        let mut commits = Vec::new();
        for (i, body) in ["ok", "broken", "ok"].iter().enumerate() {
            std::fs::write(r.join("state"), body).unwrap();
            commits.push(commit(&r, i));
        }
        (r, commits)
    }

    /// Commits everything in `r` as "commit i"; its hash.
    fn commit(r: &Path, i: usize) -> String {
        git(r, &["add", "-A"]).unwrap();
        let msg = format!("commit {i}");
        let who = ["-c", "user.name=t", "-c", "user.email=t@t"];
        let args = [
            &who[..],
            &["commit", "--quiet", "--allow-empty", "-m", &msg],
        ]
        .concat();
        git(r, &args).unwrap();
        git(r, &["rev-parse", "HEAD"]).unwrap()
    }

    /// A tree shaped as PostgreSQL's is to its build: `configure` writes config.status
    /// (and counts its runs), `make` builds, `make install DESTDIR=…` installs
    /// bin/postgres under the prefix configure was given.
    fn postgres_like(d: &Path) -> (PathBuf, Vec<String>) {
        let (r, c) = repo(d);
        std::fs::write(
            r.join("configure"),
            "#!/bin/sh\necho \"$@\" >> ../configured\n\
             for a; do case $a in --prefix=*) echo \"prefix=${a#--prefix=}\" > config.status;; esac; done\n",
        )
        .unwrap();
        std::fs::write(
            r.join("Makefile"),
            "include config.status\nall:\n\tgrep -qx ok state\n\
             install:\n\tmkdir -p $(DESTDIR)$(prefix)/bin\n\
             \tcp state $(DESTDIR)$(prefix)/bin/postgres\n",
        )
        .unwrap();
        std::fs::write(r.join(".gitignore"), "config.status\n").unwrap();
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(r.join("configure"), std::fs::Permissions::from_mode(0o755))
            .unwrap();
        let mut commits = c;
        for i in 3..5 {
            std::fs::write(r.join("state"), "ok").unwrap();
            commits.push(commit(&r, i));
        }
        (r, commits)
    }

    #[test]
    fn a_postgres_tree_is_configured_once_and_installed_into_each_kept_build() {
        let d = tempfile::tempdir().unwrap();
        let (r, c) = postgres_like(d.path());
        let plumb = d.path().join("the-plumb");
        std::fs::write(&plumb, "measuring binary").unwrap();
        let b = Builder {
            repo: r,
            work: d.path().join("work"),
            cache: d.path().join("cache"),
            command: postgres_command(&plumb),
            jobs: 2,
        };
        for commit in &c[3..5] {
            let built = b.build(commit).unwrap();
            let Build::Built { args, bin, .. } = &built else {
                panic!("{commit}: {built:?}")
            };
            let kept = b.kept_dir(commit);
            let base = format!("{}/pgsql", kept.display());
            assert_eq!(args, &["--basedir", base.as_str()]);
            assert!(kept.join("pgsql/bin/postgres").is_file());
            assert_eq!(std::fs::read_link(bin).unwrap(), plumb);
        }
        // Configured once, with the prefix the install lands under and no readline.
        let configured = std::fs::read_to_string(d.path().join("configured")).unwrap();
        assert_eq!(configured.lines().count(), 1, "{configured}");
        assert!(
            configured.contains("--prefix=/pgsql") && configured.contains("--without-readline"),
            "{configured}"
        );
    }

    #[test]
    fn the_rocksdb_build_names_the_plumb_tree_so_another_plumb_builds_again() {
        let d = tempfile::tempdir().unwrap();
        let (r, _) = repo(d.path());
        let script = r.join("scripts/build-rocksdb-release.sh");
        std::fs::create_dir_all(script.parent().unwrap()).unwrap();
        std::fs::write(&script, "echo built").unwrap();
        let head = git(&r, &["rev-parse", "HEAD"]).unwrap();
        let first = rocksdb_command(&script).unwrap();
        assert!(
            first.starts_with(&format!(": plumb tree {head}+")),
            "{first}"
        );
        assert_eq!(rocksdb_command(&script).unwrap(), first);
        // An uncommitted change to plumb's own code is another plumb.
        std::fs::write(r.join("state"), "edited").unwrap();
        assert_ne!(rocksdb_command(&script).unwrap(), first);
        assert!(rocksdb_command(&d.path().join("nothing.sh")).is_err());
    }

    #[test]
    fn builds_are_kept_by_commit_and_a_failed_one_is_kept_failed() {
        let d = tempfile::tempdir().unwrap();
        let (r, c) = repo(d.path());
        let b = Builder {
            repo: r,
            work: d.path().join("work"),
            cache: d.path().join("cache"),
            command: "grep -qx ok state && printf 'x\\n' >> \"$PLUMB_BISECT_OUT/../count\" && \
                      echo bin > \"$PLUMB_BISECT_OUT/plumb\" && \
                      printf -- '--value-size\\n100\\n\\n--dir\\n{out}/x\\n' > \"$PLUMB_BISECT_OUT/args\""
                .into(),
            jobs: 1,
        };
        let first = b.build(&c[0]).unwrap();
        let Build::Built {
            args, reused, bin, ..
        } = &first
        else {
            panic!("{first:?}")
        };
        let kept = b.kept_dir(&c[0]);
        assert!(kept.starts_with(d.path().join("cache")));
        let x = format!("{}/x", kept.display());
        assert_eq!(args, &["--value-size", "100", "--dir", x.as_str()]);
        assert!(!reused);
        assert_eq!(bin, &kept.join("plumb"));
        let Build::Failed { log, .. } = b.build(&c[1]).unwrap() else {
            panic!("commit 1 should not build")
        };
        assert!(log.contains("build.log"), "{log}");
        // Again: nothing is rebuilt (the count file got one line per real build).
        assert!(matches!(
            b.build(&c[0]).unwrap(),
            Build::Built { reused: true, .. }
        ));
        assert!(matches!(b.build(&c[1]).unwrap(), Build::Failed { .. }));
        assert!(matches!(
            b.build(&c[2]).unwrap(),
            Build::Built { reused: false, .. }
        ));
        let root = kept.parent().unwrap();
        let count = std::fs::read_to_string(root.join("count")).unwrap();
        assert_eq!(count.lines().count(), 2);
        assert!(!root.join(format!("{}.building", c[1])).exists());
        // Another build command builds the same commit again, beside the first.
        let other = Builder {
            command: format!("true; {}", b.command),
            ..b.clone()
        };
        assert!(matches!(
            other.build(&c[0]).unwrap(),
            Build::Built { reused: false, .. }
        ));
        assert_ne!(other.kept_dir(&c[0]), kept);
        assert!(b.kept_dir(&c[0]).join("plumb").is_file());
    }
}
