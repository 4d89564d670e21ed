//! A compiled program ready to run on a device: the optimized program's text, its plan, the machine code,
//! and the avals of its inputs and outputs.
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use crate::backend::cpu::CpuExecutable;
use crate::error::{Error, Result};
use crate::ir::Aval;
use crate::plan::Plan;
use crate::runtime::device::Device;
use crate::runtime::profiler;
use crate::runtime::pending::Value;
use crate::runtime::stream::INLINE_MAX_WORK;

pub struct Executable {
    pub name: String,
    /// The second-level cache key (canonical text of the optimized program).
    pub key: String,
    /// The optimized program in jaxpr text form.
    pub program_text: String,
    pub plan: Plan,
    pub cpu: Arc<CpuExecutable>,
    pub device: Arc<Device>,
    pub in_avals: Vec<Aval>,
    pub out_avals: Vec<Aval>,
    /// The plan's work estimate (`Plan::work`); decides inline vs queued dispatch until a run is measured.
    pub work: usize,
    /// How long the latest run took, in nanoseconds (`UNMEASURED` before the first). A while loop's work
    /// is a guess (`ControlStep::work` assumes 1000 trips), so a diffrax solve of seven steps was queued
    /// to the stream thread on every call, paying two thread hand-offs (tens of µs) for a ~20 µs run;
    /// once measured short, calls run inline.
    last_run_ns: Arc<AtomicU64>,
}

const UNMEASURED: u64 = u64::MAX;

/// A program measured to run for at most this long runs inline (as one within `INLINE_MAX_WORK`, about
/// 1–2 ms of work, does).
const INLINE_MAX_NS: u64 = 1_000_000;

impl Executable {
    pub fn new(key: String, program_text: String, plan: Plan, cpu: Arc<CpuExecutable>, device: Arc<Device>) -> Result<Executable> {
        let slot = |s: usize| {
            plan.slots.get(s).cloned().ok_or_else(|| Error::Codegen(format!("plan refers to missing slot {s}")))
        };
        let in_avals = (0..plan.num_inputs).map(slot).collect::<Result<Vec<_>>>()?;
        let out_avals = plan.outputs.iter().map(|&s| slot(s)).collect::<Result<Vec<_>>>()?;
        let work = plan.work();
        Ok(Executable {
            name: plan.name.clone(),
            key,
            program_text,
            plan,
            cpu,
            device,
            in_avals,
            out_avals,
            work,
            last_run_ns: Arc::new(AtomicU64::new(UNMEASURED)),
        })
    }

    pub fn num_outputs(&self) -> usize {
        self.out_avals.len()
    }

    /// True when a call may run inline on the calling thread: its work estimate is small, or its latest
    /// run was short.
    #[inline]
    pub fn is_small(&self) -> bool {
        self.work <= INLINE_MAX_WORK || self.last_run_ns.load(Ordering::Relaxed) <= INLINE_MAX_NS
    }

    /// The latest run's duration in nanoseconds, `None` before the first run.
    pub fn last_run_ns(&self) -> Option<u64> {
        Some(self.last_run_ns.load(Ordering::Relaxed)).filter(|&n| n != UNMEASURED)
    }

    /// Checks argument count and avals (a call-time `Arguments` error, raised at once).
    pub fn check_args<'a>(&self, avals: impl ExactSizeIterator<Item = &'a Aval>) -> Result<()> {
        if avals.len() != self.in_avals.len() {
            return Err(Error::Arguments(format!(
                "{} takes {} arguments, got {}",
                self.name,
                self.in_avals.len(),
                avals.len()
            )));
        }
        for (i, (got, want)) in avals.zip(&self.in_avals).enumerate() {
            if got != want {
                return Err(Error::Arguments(format!(
                    "{} argument {i}: expected {}{:?}, got {}{:?}",
                    self.name,
                    want.dtype.short_name(),
                    want.shape,
                    got.dtype.short_name(),
                    got.shape
                )));
            }
        }
        Ok(())
    }

    /// Dispatches a call on the device's stream (inline when cheap and idle). Argument errors are returned
    /// now; execution errors fill the outputs and surface at the wait.
    pub fn execute(&self, args: Vec<Value>) -> Result<Vec<Value>> {
        self.execute_on(&self.device, args)
    }

    /// `execute` on `device`'s stream: a CPU program runs on any CPU device (they share the host's memory).
    pub fn execute_on(&self, device: &Device, args: Vec<Value>) -> Result<Vec<Value>> {
        self.execute_aliased(device, args, Vec::new())
    }

    /// `execute_on` writing output `k` into input `j`'s buffer for each `(j, k)` of `alias` the plan allows
    /// (`CpuExecutable::run_aliased`): a `jax.Ref`'s write lands in the ref's buffer with no copy. The run is
    /// queued after the work that may still read the old value; with several CPU devices another stream's
    /// queued program might read it too, so there every output gets a fresh buffer (the ref's write copies).
    pub fn execute_aliased(&self, device: &Device, args: Vec<Value>, mut alias: Vec<(usize, usize)>) -> Result<Vec<Value>> {
        self.check_args(args.iter().map(|v| v.aval()))?;
        if crate::runtime::device::devices().len() > 1 {
            alias.clear();
        }
        let _launch = profiler::host_span("launch", || format!("launch {}", self.name));
        let cpu = self.cpu.clone();
        // The run is a span on the device's track (made by whichever thread runs it).
        let prof = profiler::enabled().then(|| (self.name.clone(), device.repr()));
        let last = self.last_run_ns.clone();
        Ok(device.stream.submit(args, &self.out_avals, self.is_small(), move |bufs| {
            let _run = prof.map(|(n, d)| profiler::span("kernel", || n, || d));
            let t = std::time::Instant::now();
            let r = if alias.is_empty() { cpu.run(bufs) } else { cpu.run_aliased(bufs, &alias) };
            // Saturates below `UNMEASURED`: a run is measured once it has run.
            last.store((t.elapsed().as_nanos() as u64).min(UNMEASURED - 1), Ordering::Relaxed);
            r
        }))
    }

    /// The optimized program followed by the compiled plan's kernels.
    pub fn as_text(&self) -> String {
        format!("{}\n\n{}", self.program_text.trim_end(), self.cpu.as_text())
    }
}
