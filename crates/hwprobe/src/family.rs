//! One planned run of the hardware probes (memory, CPU, the disk under a directory):
//! everything checked before a byte is written, each probe's steps stored as it ends,
//! the headline figures kept as this host's ceilings. `plumb probe` and a suite's
//! `probe` workload both run through here.

use crate::judged::Judged;
use crate::rated::{self, Rated, StepView};
use crate::{cpu, disk, mem, plan, ProbeReport, INTERRUPTED};
use anyhow::Context;
use plumb_core::RunStatus;
use plumb_plan::{ProbeParams, ProbeWork, RunPlan};
use plumb_runner::begin::{begin_run, Announce, DataPlace};
use plumb_runner::{Recording, Slot};
use plumb_store::{NewRun, StepRecord, Store};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};

/// What each probe will do, checked before the store is touched or a byte written.
pub struct Plans {
    mem: Option<mem::MemOptions>,
    cpu: Option<cpu::CpuOptions>,
    disk: Option<disk::DiskPlan>,
    /// The device's rated figures (`--rated`), read and checked before anything runs.
    rated: Option<Rated>,
}

impl Plans {
    /// The disk probe's directory, if it runs on a file.
    pub fn disk_dir(&self) -> Option<&Path> {
        self.disk
            .as_ref()
            .filter(|d| d.opts.device.is_none())
            .map(|d| d.opts.dir.as_path())
    }
}

/// Checks `which` with its knobs; `dir` is where the disk probe's file goes.
pub fn plans(which: &str, p: &ProbeParams, dir: Option<&Path>) -> anyhow::Result<Plans> {
    if !plumb_plan::family::PROBE_NAMES.contains(&which) {
        anyhow::bail!(
            "probe {which:?}: use one of {}",
            plumb_plan::family::PROBE_NAMES.join(", ")
        );
    }
    let hw = crate::hw_threads();
    let want = |w: &str| which == w || which == "all";
    let mut cpu = want("cpu").then(|| cpu::CpuOptions::new(hw, p.quick));
    if let (Some(c), Some(s)) = (cpu.as_mut(), p.secs) {
        if !(s > 0.0 && s.is_finite()) {
            anyhow::bail!("--secs {s}: must be a number of seconds > 0");
        }
        c.secs = s;
    }
    // The rated file first: a typo in it is the cheapest thing to report.
    let rated = match (&p.rated, p.rated_set.is_empty()) {
        (None, true) => None,
        (Some(f), true) => Some(rated::load(f)?),
        (None, false) => Some(rated::from_pairs(&p.rated_set)?),
        (Some(f), false) => Some(rated::overlay(
            rated::load(f)?,
            rated::from_pairs(&p.rated_set)?,
        )?),
    };
    let disk = if want("disk") {
        let mut o = match (&p.device, dir) {
            (Some(dev), _) if which != "disk" => anyhow::bail!(
                "--device {}: only applies to `plumb probe disk`",
                dev.display()
            ),
            (Some(_), Some(d)) => anyhow::bail!(
                "--dir {} and --device: give one; --dir measures a file on a filesystem, \
                 --device reads a block device",
                d.display()
            ),
            (Some(dev), None) => {
                if p.size.is_some() {
                    anyhow::bail!("--size: --device reads the whole device; leave --size out");
                }
                if p.precondition.is_some() {
                    anyhow::bail!(
                        "--precondition: --device is read-only and plumb never writes it; \
                         precondition the device yourself (e.g. fio --rw=randwrite over all of \
                         it), or probe a file with --dir"
                    );
                }
                disk::DiskOptions::for_device(dev.clone(), p.quick)
            }
            (None, Some(dir)) => disk::DiskOptions::new(dir.to_path_buf(), p.quick),
            (None, None) => anyhow::bail!(
                "--dir: required for `plumb probe {which}`; give a directory you own on the \
                 filesystem to measure (or --device /dev/X to read a block device)"
            ),
        };
        o.size = p
            .size
            .as_deref()
            .map(|s| plan::parse_size("--size", s))
            .transpose()?;
        o.grid = plan::Grid::from_options(p.jobs.as_deref(), p.depths.as_deref(), &o.grid.clone())?;
        o.secs = p.secs;
        o.precondition = match p.precondition {
            Some(s) if !(s.is_finite() && s > 0.0) => {
                anyhow::bail!("--precondition {s}: give the seconds of random writes, above 0")
            }
            s => s.map(std::time::Duration::from_secs_f64),
        };
        if o.device.is_none() || p.io != "both" {
            o.modes = disk::parse_modes(&p.io)?;
        }
        if let Some(t) = &p.tests {
            o.patterns = disk::parse_patterns(t)?;
        }
        if p.zcav && !o.patterns.contains(&disk::io::Pattern::Zcav) {
            o.patterns.push(disk::io::Pattern::Zcav);
        }
        if let Some(b) = &p.bs {
            (o.rand_bs, o.seq_bs) = disk::parse_bs(b)?;
        }
        Some(disk::prepare(o)?)
    } else {
        for (opt, set) in [
            ("--size", p.size.is_some()),
            ("--jobs", p.jobs.is_some()),
            ("--depths", p.depths.is_some()),
            ("--tests", p.tests.is_some()),
            ("--bs", p.bs.is_some()),
            ("--device", p.device.is_some()),
            ("--zcav", p.zcav),
            ("--precondition", p.precondition.is_some()),
            ("--rated", p.rated.is_some()),
            ("--rated-set", !p.rated_set.is_empty()),
        ] {
            if set {
                anyhow::bail!("{opt}: only applies to `plumb probe disk` and `all`");
            }
        }
        None
    };
    Ok(Plans {
        mem: want("mem").then(|| mem::MemOptions::new(hw, mem::llc_bytes(), p.quick)),
        cpu,
        disk,
        rated,
    })
}

fn options(which: &str, quick: bool, p: &Plans) -> BTreeMap<String, String> {
    let mut o = BTreeMap::new();
    o.insert("probe".into(), which.into());
    o.insert("quick".into(), quick.to_string());
    if let Some(m) = &p.mem {
        o.insert("mem.elements".into(), m.elements.to_string());
        o.insert("mem.passes".into(), m.passes.to_string());
        o.insert("mem.threads".into(), join(&m.threads));
    }
    if let Some(c) = &p.cpu {
        o.insert("cpu.secs".into(), c.secs.to_string());
        o.insert("cpu.threads".into(), join(&c.threads));
    }
    if let Some(d) = &p.disk {
        match &d.opts.device {
            Some(dev) => o.insert("disk.device".into(), dev.display().to_string()),
            None => o.insert("disk.dir".into(), d.opts.dir.display().to_string()),
        };
        o.insert(
            "disk.bs".into(),
            d.opts
                .rand_bs
                .iter()
                .chain(&d.opts.seq_bs)
                .map(|&b| disk::bs_label(b))
                .collect::<Vec<_>>()
                .join(","),
        );
        o.insert("disk.size".into(), d.size.to_string());
        o.insert("disk.size_why".into(), d.size_why.clone());
        o.insert("disk.secs".into(), d.secs.to_string());
        o.insert("disk.jobs".into(), join(&d.opts.grid.jobs));
        o.insert("disk.depths".into(), join(&d.opts.grid.depths));
        o.insert("disk.commit_threads".into(), join(&d.commit_threads));
        let names = |v: Vec<&str>| v.join(",");
        o.insert(
            "disk.io".into(),
            names(d.opts.modes.iter().map(|m| m.name()).collect()),
        );
        o.insert(
            "disk.tests".into(),
            names(d.opts.patterns.iter().map(|p| p.name()).collect()),
        );
    }
    if let Some(r) = &p.rated {
        o.extend(r.to_options());
    }
    o
}

fn join(v: &[usize]) -> String {
    v.iter()
        .map(|x| x.to_string())
        .collect::<Vec<_>>()
        .join(",")
}

/// What a probe run measured.
pub struct Outcome {
    /// The stored run.
    pub run_id: i64,
    /// How it ended.
    pub status: RunStatus,
    /// Its steps, ceilings and notes.
    pub report: ProbeReport,
    /// The host's name the ceilings are kept under.
    pub hostname: String,
    /// A disk probe that could not start (its file), after the other probes ran.
    pub setup_error: Option<crate::ProbeError>,
    /// Rated against measured, and the commit-rate check (empty without a disk probe).
    pub judged: Judged,
}

/// Runs the probes of `plans`, storing a run from `run` (provenance, suite and plan
/// filled in by the caller), each probe's steps as it ends, and the ceilings.
/// `started` is told the run's id once its row exists, before the first probe.
pub fn measure(
    store: &mut Store,
    run: NewRun,
    plan: &RunPlan,
    (which, quick): (&str, bool),
    p: &Plans,
    notes: &dyn plumb_runner::Progress,
    announce: Option<Announce<'_>>,
) -> anyhow::Result<Outcome> {
    // An announced run was told to the observer; a bare one says its own first line.
    let say_start = announce.is_none();
    let raw_device = p.disk.as_ref().and_then(|d| d.opts.device.as_deref());
    let begun = begin_run(
        store,
        NewRun {
            workload: format!("probe {which}"),
            engine: "probe".into(),
            engine_version: env!("CARGO_PKG_VERSION").into(),
            options: {
                let mut o = options(which, quick, p);
                o.extend(run.options.clone());
                o
            },
            seed: 0,
            ..run
        },
        plan,
        DataPlace {
            dir: p.disk_dir().map(Path::to_path_buf),
            bytes: p.disk.as_ref().map(|d| d.size),
            io_size_kb: p.disk.as_ref().map(|_| 1024),
            device: raw_device.and_then(disk::device::kernel_name),
        },
        announce,
    )?;
    let (mut rec, host) = (begun.rec, begun.host);
    let device = raw_device
        .and_then(disk::device::kernel_name)
        .or_else(|| begun.disk.map(|d| d.name().to_string()));
    let hostname = host
        .inventory
        .hostname
        .clone()
        .unwrap_or_else(|| "unknown".into());
    // A raw device's own sysfs facts; a directory's come from the host snapshot's chain.
    let facts = match (raw_device, &device) {
        (Some(_), Some(name)) => {
            let f = disk::device::sysfs_facts(name);
            let in_vm = host.inventory.virtualization.is_vm == Some(true);
            let (class, from) =
                crate::rated::class_from_sysfs(f.driver.as_deref(), f.rotational, in_vm);
            crate::rated::DeviceFacts {
                class,
                class_from: format!("{name} ({from})"),
                write_cache: f.write_cache,
                ..Default::default()
            }
        }
        _ => crate::judged::facts_from_host(&host),
    };
    let run_id = rec.id();
    if say_start {
        notes.note(&format!(
            "run {run_id}: probe {which}{} on {hostname}",
            if quick {
                " --quick (indicative figures)"
            } else {
                ""
            },
        ));
    }
    let mut all = ProbeReport::default();
    let keep = |rec: &mut Recording, r: ProbeReport, all: &mut ProbeReport| -> anyhow::Result<()> {
        for s in &r.steps {
            rec.step(
                StepRecord {
                    seq: 0, // given by the recording
                    name: s.name.clone(),
                    kind: s.kind.into(),
                    status: s.status,
                    error: s.error.clone(),
                    started_at: plumb_runner::lifecycle::rfc3339(s.started),
                    ended_at: plumb_runner::lifecycle::rfc3339(s.ended),
                    config: s.config.clone(),
                    summary: s.summary.clone(),
                },
                &s.intervals,
            )?;
        }
        all.extend(r);
        Ok(())
    };
    let mut setup_error = None;
    if let Some(m) = &p.mem {
        notes.note(&format!("probe mem ({} thread counts)", m.threads.len()));
        keep(&mut rec, mem::run(m), &mut all)?;
    }
    if let Some(c) = p
        .cpu
        .as_ref()
        .filter(|_| !INTERRUPTED.load(Ordering::Relaxed))
    {
        notes.note(&format!(
            "probe cpu ({} thread counts × {} s)",
            c.threads.len(),
            c.secs
        ));
        keep(&mut rec, cpu::run(c), &mut all)?;
    }
    if let Some(d) = p
        .disk
        .as_ref()
        .filter(|_| !INTERRUPTED.load(Ordering::Relaxed))
    {
        notes.note(&format!("probe disk: {}", d.size_why));
        match disk::run(d) {
            Ok(r) => keep(&mut rec, r, &mut all)?,
            Err(e) => setup_error = Some(e),
        }
    }
    let views: Vec<StepView> = all
        .steps
        .iter()
        .map(|s| StepView {
            name: &s.name,
            config: &s.config,
            summary: &s.summary,
        })
        .collect();
    let judged = if p.disk.is_some() {
        crate::judged::judge(p.rated.as_ref(), &views, facts)
    } else {
        Judged::default()
    };
    drop(views);
    let extra = judged.options();
    if !extra.is_empty() {
        rec.store().add_options(run_id, &extra)?;
    }
    if !all.ceilings.is_empty() {
        rec.store().add_ceilings(
            run_id,
            &hostname,
            &plumb_runner::lifecycle::now(),
            &all.ceilings,
        )?;
    }
    if setup_error.is_some() {
        rec.fail();
    }
    let status = rec.finish(INTERRUPTED.load(Ordering::Relaxed))?;
    Ok(Outcome {
        run_id,
        status,
        report: all,
        hostname,
        setup_error,
        judged,
    })
}

/// Runs a planned probe run inside the lifecycle (a suite, a rerun, a worker).
pub fn run(
    plan: &RunPlan,
    work: &ProbeWork,
    dir: Option<PathBuf>,
    slot: Slot<'_>,
) -> anyhow::Result<(i64, RunStatus)> {
    // A block device is probed as named; no directory is involved.
    let dir = if work.params.device.is_some() {
        None
    } else {
        dir.or_else(|| slot.root.clone())
    };
    let p = plans(&work.which, &work.params, dir.as_deref())?;
    let Slot {
        store,
        run,
        group,
        interrupt,
        observer,
        progress,
        at,
        ..
    } = slot;
    // The probes stop on their own flag: the lifecycle's Ctrl-C reaches it.
    let done = AtomicBool::new(false);
    let out = std::thread::scope(|s| {
        s.spawn(|| {
            while !done.load(Ordering::Relaxed) {
                if interrupt.load(Ordering::Relaxed) {
                    INTERRUPTED.store(true, Ordering::Relaxed);
                }
                std::thread::sleep(std::time::Duration::from_millis(50));
            }
        });
        let out = measure(
            store,
            run,
            plan,
            (&work.which, work.params.quick),
            &p,
            progress,
            Some(Announce {
                observer: &mut *observer,
                at,
                group,
            }),
        );
        done.store(true, Ordering::Relaxed);
        out
    })?;
    let stored = store.run(out.run_id).context("reading the run back")?;
    observer.run_finished(&stored, store);
    if let Some(e) = out.setup_error {
        return Err(anyhow::Error::new(e).context(format!("run {}: disk probe", out.run_id)));
    }
    Ok((out.run_id, out.status))
}

/// The hardware probes on the host, as the binary's table of families registers it.
pub struct ProbeFamily;

impl plumb_runner::family::Family for ProbeFamily {
    fn takes(&self, plan: &RunPlan) -> bool {
        matches!(
            (&plan.target.subject, &plan.workload.family),
            (plumb_plan::Subject::Host(_), plumb_plan::Family::Probe(_))
        )
    }

    fn run(
        &self,
        plan: &RunPlan,
        _extras: &plumb_runner::family::Extras,
        slot: Slot<'_>,
    ) -> anyhow::Result<(i64, RunStatus)> {
        let (plumb_plan::Subject::Host(h), plumb_plan::Family::Probe(work)) =
            (&plan.target.subject, &plan.workload.family)
        else {
            anyhow::bail!("the probes run on the host");
        };
        run(plan, work, h.dir.clone(), slot)
    }
}
