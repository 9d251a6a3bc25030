//! One planned run of the hardware probes (memory, CPU, the disk under a directory):
//! everything checked before a byte is written, each probe's steps stored as it ends,
//! the headline figures kept as this host's ceilings. `plumb probe` and a suite's
//! `probe` workload both run through here.

use crate::judged::Judged;
use crate::rated::{self, Rated, StepView};
use crate::{cpu, disk, mem, plan, PlanError, ProbeReport};
use plumb_core::StepStatus;
use plumb_plan::{ProbeParams, RunPlan};
use plumb_runner::begin::DataPlace;
use plumb_runner::{Header, Place, StepOutcome, Steps, Subject};
use plumb_store::{StepRecord, StoreError};
use std::collections::BTreeMap;
use std::path::Path;
use std::sync::atomic::Ordering;

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
pub fn plans(which: &str, p: &ProbeParams, dir: Option<&Path>) -> Result<Plans, PlanError> {
    if !plumb_plan::family::PROBE_NAMES.contains(&which) {
        return Err(PlanError::UnknownProbe {
            which: which.to_string(),
        });
    }
    let hw = crate::hw_threads();
    let want = |w: &str| which == w || which == "all";
    let mut cpu = want("cpu").then(|| cpu::CpuOptions::new(hw, p.quick));
    if let (Some(c), Some(s)) = (cpu.as_mut(), p.secs) {
        if !(s > 0.0 && s.is_finite()) {
            return Err(PlanError::Secs { secs: s });
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
            (Some(dev), _) if which != "disk" => {
                return Err(PlanError::DeviceNotDisk {
                    device: dev.clone(),
                })
            }
            (Some(_), Some(d)) => {
                return Err(PlanError::DirAndDevice {
                    dir: d.to_path_buf(),
                })
            }
            (Some(dev), None) => {
                if p.size.is_some() {
                    return Err(PlanError::SizeOfDevice);
                }
                if p.precondition.is_some() {
                    return Err(PlanError::PreconditionDevice);
                }
                disk::DiskOptions::for_device(dev.clone(), p.quick)
            }
            (None, Some(dir)) => disk::DiskOptions::new(dir.to_path_buf(), p.quick),
            (None, None) => {
                return Err(PlanError::NoDir {
                    which: which.to_string(),
                })
            }
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
                return Err(PlanError::Precondition { secs: s })
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
        if p.bs.is_some() || p.seq_bs.is_some() {
            (o.rand_bs, o.seq_bs) =
                disk::request_sizes(p.bs.as_deref(), p.seq_bs.as_deref(), &o.rand_bs)?;
        }
        Some(disk::prepare(o)?)
    } else {
        for (opt, set) in [
            ("--size", p.size.is_some()),
            ("--jobs", p.jobs.is_some()),
            ("--depths", p.depths.is_some()),
            ("--tests", p.tests.is_some()),
            ("--bs", p.bs.is_some()),
            ("--seq-bs", p.seq_bs.is_some()),
            ("--device", p.device.is_some()),
            ("--zcav", p.zcav),
            ("--precondition", p.precondition.is_some()),
            ("--rated", p.rated.is_some()),
            ("--rated-set", !p.rated_set.is_empty()),
        ] {
            if set {
                return Err(PlanError::DiskOnly { option: opt });
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
        // `disk.bs` as --bs says it (random sizes, then sequential ones of 128k or more),
        // as runs before --seq-bs stored it; `disk.seq_bs` every sequential size.
        let labels = |v: &mut dyn Iterator<Item = &usize>| {
            v.map(|&b| disk::bs_label(b)).collect::<Vec<_>>().join(",")
        };
        let big = d.opts.seq_bs.iter().filter(|&&b| b >= disk::SEQ_MIN_BS);
        o.insert(
            "disk.bs".into(),
            labels(&mut d.opts.rand_bs.iter().chain(big)),
        );
        o.insert("disk.seq_bs".into(), labels(&mut d.opts.seq_bs.iter()));
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

/// The plan of `plumb probe WHICH`: one run on the host (its disk probe under `dir`),
/// stored with the run so `plumb rerun` repeats it.
pub fn run_plan(which: &str, params: &ProbeParams, dir: Option<&Path>) -> RunPlan {
    use plumb_plan::{Family, HostSpec, ProbeWork, Subject, TargetPlan, WorkloadPlan};
    RunPlan::single(
        "probe",
        TargetPlan {
            name: "host".into(),
            subject: Subject::Host(HostSpec {
                dir: dir.map(Path::to_path_buf),
            }),
            memory_mb: None,
            drop_caches: false,
            release: None,
        },
        WorkloadPlan {
            name: format!("probe {which}"),
            family: Family::Probe(ProbeWork {
                which: which.into(),
                params: params.clone(),
            }),
        },
        0,
    )
}

/// The probes of one run, checked, with what they measured so far: the subject the
/// lifecycle runs for a suite's `probe` workload and for `plumb probe`, which reads
/// the report, the verdicts and a disk probe's setup error back from it.
pub struct Probes {
    which: String,
    quick: bool,
    plans: Plans,
    /// Say the run's first line (no observer announced it).
    say_start: bool,
    /// Each probe's steps, ceilings and notes, in the order they ran.
    pub report: ProbeReport,
    /// The host's name the ceilings are kept under.
    pub hostname: String,
    /// A disk probe that could not start (its file), after the other probes ran.
    pub setup_error: Option<crate::ProbeError>,
    /// Rated against measured, and the commit-rate check (empty without a disk probe).
    pub judged: Judged,
    device: Option<String>,
}

impl Probes {
    /// The probes `which` with their checked `plans`; `say_start` when nothing else
    /// announces the run.
    pub fn new(which: &str, quick: bool, plans: Plans, say_start: bool) -> Probes {
        Probes {
            which: which.to_string(),
            quick,
            plans,
            say_start,
            report: ProbeReport::default(),
            hostname: "unknown".into(),
            setup_error: None,
            judged: Judged::default(),
            device: None,
        }
    }

    /// The run as `plumb probe --json` prints it: the stored run's document with the
    /// ceilings, the host, the notes and, after a disk probe, the rated verdicts.
    pub fn json(
        &self,
        stored: &plumb_store::StoredRun,
    ) -> Result<serde_json::Value, serde_json::Error> {
        let all = &self.report;
        let mut doc = plumb_report::json::run(stored);
        doc["ceilings"] = serde_json::to_value(&all.ceilings)?;
        doc["host"] = serde_json::Value::String(self.hostname.clone());
        doc["notes"] = serde_json::to_value(&all.notes)?;
        if !self.judged.is_empty() {
            doc["rated"] = serde_json::to_value(&self.judged.ratios)?;
            doc["commit_durability"] = serde_json::to_value(&self.judged.cache)?;
            doc["seek_model"] = serde_json::to_value(&self.judged.seek)?;
            doc["read_ahead"] = serde_json::to_value(&self.judged.read_ahead)?;
        }
        Ok(doc)
    }

    fn raw_device(&self) -> Option<&Path> {
        self.plans
            .disk
            .as_ref()
            .and_then(|d| d.opts.device.as_deref())
    }

    /// Stores one probe's steps as it ran, and keeps its report.
    fn keep(&mut self, r: ProbeReport, steps: &mut Steps<'_, '_>) -> Result<(), StoreError> {
        for s in &r.steps {
            steps.record(
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
        self.report.extend(r);
        Ok(())
    }
}

impl Subject for Probes {
    fn header(&mut self) -> plumb_runner::FamilyResult<Header> {
        let p = &self.plans;
        Ok(Header {
            engine: "probe".into(),
            version: env!("CARGO_PKG_VERSION").into(),
            options: options(&self.which, self.quick, p),
            place: DataPlace {
                dir: p.disk_dir().map(Path::to_path_buf),
                bytes: p.disk.as_ref().map(|d| d.size),
                io_size_kb: p.disk.as_ref().map(|_| 1024),
                device: self.raw_device().and_then(disk::device::kernel_name),
            },
            ..Header::default()
        })
    }

    fn begun(&mut self, steps: &mut Steps<'_, '_>) -> plumb_runner::FamilyResult<()> {
        self.device = self
            .raw_device()
            .and_then(disk::device::kernel_name)
            .or_else(|| steps.disk.map(|d| d.name().to_string()));
        if self.say_start {
            steps.notes.note(&format!(
                "run {}: probe {}{}",
                steps.run_id,
                self.which,
                if self.quick {
                    " --quick (indicative figures)"
                } else {
                    ""
                },
            ));
        }
        Ok(())
    }

    fn steps(&self) -> Vec<String> {
        let p = &self.plans;
        [
            ("mem", p.mem.is_some()),
            ("cpu", p.cpu.is_some()),
            ("disk", p.disk.is_some()),
        ]
        .into_iter()
        .filter(|(_, on)| *on)
        .map(|(n, _)| n.to_string())
        .collect()
    }

    fn drops_caches_before(&self, _i: usize) -> bool {
        false
    }

    /// One probe (memory, CPU or the disk), its steps stored as they are in its
    /// report; the outcome only says whether the run goes on (each step's status is
    /// its own), failed when the disk probe could not set up.
    fn run_at(
        &mut self,
        _i: usize,
        name: &str,
        _pace: Option<plumb_runner::subject::Pace>,
        steps: &mut Steps<'_, '_>,
    ) -> plumb_runner::FamilyResult<StepOutcome> {
        let started = std::time::SystemTime::now();
        let stop = steps.interrupt;
        let mut error = None;
        match name {
            "mem" => {
                let m = self.plans.mem.as_ref().expect("listed in steps()");
                steps
                    .notes
                    .note(&format!("probe mem ({} thread counts)", m.threads.len()));
                let r = mem::run(m, stop);
                self.keep(r, steps)?;
            }
            "cpu" => {
                let c = self.plans.cpu.as_ref().expect("listed in steps()");
                steps.notes.note(&format!(
                    "probe cpu ({} thread counts × {} s)",
                    c.threads.len(),
                    c.secs
                ));
                let r = cpu::run(c, stop);
                self.keep(r, steps)?;
            }
            _ => {
                let d = self.plans.disk.as_ref().expect("listed in steps()");
                steps.notes.note(&format!("probe disk: {}", d.size_why));
                match disk::run(d, stop) {
                    Ok(r) => self.keep(r, steps)?,
                    Err(e) => {
                        error = Some(e.to_string());
                        self.setup_error = Some(e);
                        steps.fail();
                    }
                }
            }
        }
        let status = match (&error, stop.load(Ordering::Relaxed)) {
            (Some(_), _) => StepStatus::Failed,
            (None, true) => StepStatus::Interrupted,
            (None, false) => StepStatus::Ok,
        };
        Ok(StepOutcome {
            status,
            error,
            verification_failed: false,
            started,
            ended: std::time::SystemTime::now(),
            summary: Default::default(),
            intervals: Vec::new(),
            profile: None,
            histograms: None,
        })
    }

    /// The verdicts over the disk probe's steps (rated against measured, the commit
    /// rate against the device's cache) and the host's ceilings.
    fn finish(
        &mut self,
        steps: &mut Steps<'_, '_>,
        host: &plumb_host::HostSnapshot,
    ) -> plumb_runner::FamilyResult<()> {
        self.hostname = host
            .inventory
            .hostname
            .clone()
            .unwrap_or_else(|| "unknown".into());
        // A raw device's own sysfs facts; a directory's come from the host snapshot's chain.
        let facts = match (self.raw_device(), &self.device) {
            (Some(_), Some(name)) => {
                let f = disk::device::sysfs_facts(name);
                let in_vm = host.inventory.virtualization.is_vm == Some(true);
                let (class, from) =
                    crate::rated::class_from_sysfs(f.driver.as_deref(), f.rotational, in_vm);
                crate::rated::DeviceFacts {
                    class,
                    class_from: format!("{name} ({from})"),
                    write_cache: f.write_cache,
                    read_ahead: format!(
                        "{name} read_ahead_kb {}",
                        f.read_ahead_kb.map_or("?".into(), |k| k.to_string())
                    ),
                    ..Default::default()
                }
            }
            _ => crate::judged::facts_from_host(host),
        };
        if self.plans.disk.is_some() {
            let views: Vec<StepView> = self
                .report
                .steps
                .iter()
                .map(|s| StepView {
                    name: &s.name,
                    config: &s.config,
                    summary: &s.summary,
                })
                .collect();
            self.judged = crate::judged::judge(self.plans.rated.as_ref(), &views, facts);
        }
        let run_id = steps.run_id;
        let extra = self.judged.options();
        if !extra.is_empty() {
            steps.store_mut().add_options(run_id, &extra)?;
        }
        if !self.report.ceilings.is_empty() {
            let (host, ceilings) = (&self.hostname, &self.report.ceilings);
            steps.store_mut().add_ceilings(
                run_id,
                host,
                &plumb_runner::lifecycle::now(),
                ceilings,
            )?;
        }
        Ok(())
    }
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

    fn prepare<'p>(
        &self,
        plan: &'p RunPlan,
        _extras: &'p plumb_runner::family::Extras,
        place: &Place<'_>,
    ) -> plumb_runner::FamilyResult<Box<dyn Subject + 'p>> {
        let (plumb_plan::Subject::Host(h), plumb_plan::Family::Probe(work)) =
            (&plan.target.subject, &plan.workload.family)
        else {
            return Err(plumb_runner::failure::NotMine::of(plan, "probe").into());
        };
        // A block device is probed as named; no directory is involved.
        let dir = if work.params.device.is_some() {
            None
        } else {
            h.dir.clone().or_else(|| place.root.clone())
        };
        let p = plans(&work.which, &work.params, dir.as_deref())?;
        Ok(Box::new(Probes::new(
            &work.which,
            work.params.quick,
            p,
            false,
        )))
    }
}
