//! Which CPUs a process may run on, and pinning a child to some of them: a duet A/B
//! (`plumb ab --duet`) gives each side its own CPUs, so the two sides share the
//! machine's moment (its neighbours, its thermal and frequency state) but not a core.

use std::io;
use std::process::Command;

/// The CPUs this process may run on (its affinity mask, which a cgroup's cpuset or a
/// `taskset` around plumb narrows), in ascending order.
pub fn allowed_cpus() -> io::Result<Vec<usize>> {
    // SAFETY: cpu_set_t is plain data; sched_getaffinity writes at most its size.
    let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
    if unsafe { libc::sched_getaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &mut set) } != 0
    {
        return Err(io::Error::last_os_error());
    }
    Ok((0..libc::CPU_SETSIZE as usize)
        .filter(|&c| unsafe { libc::CPU_ISSET(c, &set) })
        .collect())
}

/// Makes `cmd`'s process (and every thread and child it starts) run only on `cpus`.
/// The mask is built here, before the fork; the child only installs it.
pub fn pin(cmd: &mut Command, cpus: &[usize]) {
    use std::os::unix::process::CommandExt;
    // SAFETY: as above; CPU_SET writes inside the set for c < CPU_SETSIZE.
    let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
    for &c in cpus.iter().filter(|&&c| c < libc::CPU_SETSIZE as usize) {
        unsafe { libc::CPU_SET(c, &mut set) };
    }
    // SAFETY: the closure calls only sched_setaffinity, which is async-signal-safe,
    // on a mask copied into it before the fork.
    unsafe {
        cmd.pre_exec(move || {
            if libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set) != 0 {
                return Err(io::Error::last_os_error());
            }
            Ok(())
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_pinned_child_runs_on_the_cpus_it_was_given() {
        let cpus = allowed_cpus().unwrap();
        assert!(!cpus.is_empty());
        let last = *cpus.last().unwrap();
        let mut c = Command::new("sh");
        c.args(["-c", "grep Cpus_allowed_list /proc/self/status"]);
        pin(&mut c, &[last]);
        let out = String::from_utf8(c.output().unwrap().stdout).unwrap();
        assert_eq!(
            out.split_whitespace().last(),
            Some(last.to_string().as_str()),
            "{out}"
        );
    }
}
